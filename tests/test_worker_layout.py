"""The code that runs inside users' processes lives in auditor/worker/ and imports only the stdlib.

Read statically, every import statement of every file (those inside functions too), so a lazy
import of PyYAML or rich in a rarely taken branch fails here rather than in a user's worker.
"""

import ast
import subprocess
import sys
from pathlib import Path

import auditor.worker

WORKER_DIR = Path(auditor.worker.__file__).parent
# the hook's modules import each other by their top-level names (the hook dir is on sys.path)
HOOK_SIBLINGS = {"_qg_audit_patches", "_qg_audit_phases", "_qg_audit_stacks", "sitecustomize"}
# ray_kv.put runs only inside a Ray actor, where ray is already loaded; it imports nothing new
ALREADY_LOADED_THERE = {("ray_kv.py", "ray")}


def _imported_top_levels(path: Path) -> set[tuple[str, int]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module, node.lineno))
    return found


def test_worker_files_import_only_the_standard_library_and_each_other():
    files = sorted(WORKER_DIR.rglob("*.py"))
    assert {f.name for f in files} >= {"report.py", "timing.py", "ray_kv.py", "sitecustomize.py",
                                      "_qg_audit_patches.py"}
    bad = []
    for path in files:
        for name, line in _imported_top_levels(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in HOOK_SIBLINGS or top == "__future__":
                continue
            if (path.name, top) in ALREADY_LOADED_THERE:
                continue
            if name == "auditor.worker" or name.startswith("auditor.worker."):
                continue
            bad.append(f"{path.relative_to(WORKER_DIR)}:{line}: import {name}")
    assert bad == []


def test_public_names_are_the_worker_modules_themselves():
    proc = subprocess.run([sys.executable, "-c", (
        "import sys\nbefore = set(sys.modules)\nimport auditor.report, auditor.timing, auditor.worker.report, auditor.worker.timing\n"
        "assert auditor.report is auditor.worker.report and auditor.timing is auditor.worker.timing\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names)\n"
        "print(sorted(new - {'auditor'}))")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_profiling_package_init_holds_no_logic_of_the_worker():
    # the timer moved out of the probe's packages: nothing outside auditor/worker defines it
    roots = [p for p in Path(auditor.worker.__file__).parents[1].rglob("*.py") if WORKER_DIR not in p.parents]
    definers = [p for p in roots if "class SamplingTimer" in p.read_text()]
    assert definers == []


def test_profiling_package_init_only_reexports():
    init = Path(auditor.worker.__file__).parents[1] / "profiling" / "__init__.py"
    tree = ast.parse(init.read_text())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Import", "Assign"}, kinds  # docstring, imports, __all__
    import auditor.profiling as prof

    assert prof.summarize.__module__ == "auditor.profiling.summary"

"""Layering: the runtime library (shared by verify, profile, sweep) never imports a command module."""

from __future__ import annotations

import ast
from pathlib import Path

import auditor.runtime

RUNTIME = Path(auditor.runtime.__file__).parent


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_runtime_does_not_import_commands():
    files = sorted(RUNTIME.glob("*.py"))
    assert len(files) > 5
    bad = [f"{f.name}: {name}" for f in files for name in _imports(f)
           if name == "auditor.commands" or name.startswith("auditor.commands.")]
    assert not bad, bad


def test_method_and_libraries_do_not_import_commands():
    """diagnose's method calls profiling, sweep and verify through the APIs below the commands
    (auditor.profiling.launch, auditor.sweep.runner, auditor.runtime.check), as the commands do."""
    root = RUNTIME.parent
    files = [f for pkg in ("method", "profiling", "sweep") for f in sorted((root / pkg).glob("*.py"))]
    assert len(files) > 10
    bad = [f"{f.parent.name}/{f.name}: {name}" for f in files for name in _imports(f)
           if name == "auditor.commands" or name.startswith("auditor.commands.")]
    assert not bad, bad
    # the nested imports count too (the method imported build/launch inside a function before)
    assert "auditor.profiling.launch" in _imports(root / "method" / "run.py")

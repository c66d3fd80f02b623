"""The shared precision predicates (auditor/lint/idioms.py), one line per case, and the
messages they shape, through real scans."""

from __future__ import annotations

import pytest

from auditor.lint import idioms
from auditor.lint.harness import findings_for
from auditor.model import Site


@pytest.mark.parametrize("cond, want", [
    ("a and not (b or c) and d(e, f and g)", ["a", "not (b or c)", "d(e, f and g)"]),
    ("if x > 1:", ["x > 1"]),
    ("", []),
])
def test_split_clauses(cond, want):
    assert idioms.split_clauses(cond) == want


@pytest.mark.parametrize("cond, want", [
    ('__name__ == "__main__" and algo in off_policy_algos', "algo in off_policy_algos"),
    ("a == 1 and not (b) and c.d > 3 and isinstance(x, IterableDataset) and args.dataloader_num_workers != 0",
     "... and isinstance(x, IterableDataset) and args.dataloader_num_workers != 0"),
    ("short and sweet", "short and sweet"),
])
def test_short_condition(cond, want):
    assert idioms.short_condition(cond) == want


@pytest.mark.parametrize("cond, name, want", [
    ("num_workers is None", "num_workers", True),
    ("not ('OMP_NUM_THREADS' in os.environ) and not (n is not None)", "num_threads", True),
    ("not (os.getenv('OMP_NUM_THREADS'))", "num_threads", True),
    ("'num_cpus' not in opts", "num_cpus", True),
    ("not (args.jobs)", "jobs", True),  # the else of `args.jobs if args.jobs else max(1, min(4, cpu_count()))`
    ("not (args.jobs) and fast", "jobs", False),
    ("dataset_type == 'iterable'", "num_workers", False),
    ("not ('OMP_NUM_THREADS' in os.environ)", "num_workers", False),
])
def test_fills_a_missing_value(cond, name, want):
    assert idioms.fills_a_missing_value(cond, name) is want


@pytest.mark.parametrize("cond, want", [
    ("args.debug", True), ("cfg.sanity_check and rank == 0", True), ("fast_dev_run", True),
    ("not (not single_env)", True), ("not (args.debug)", False), ("dataset_type == 'iterable'", False),
])
def test_is_debug_condition(cond, want):
    assert idioms.is_debug_condition(cond) is want


def site(value, cond, **detail):
    return Site(role="override", file="x.py", line=1, column=1, key="world_size", value=value, kind="python",
                detail={"condition": cond, "how": "literal", **detail})


@pytest.mark.parametrize("s, want", [
    (site(1, "not (dist.is_initialized())"), True),
    (site(1, "not (accelerator)"), True),
    (site(1, "self.backend is None"), True),
    (site(1, "'WORLD_SIZE' not in os.environ"), True),
    (site(1, "not (hasattr(env, 'num_envs'))"), True),
    (site(8, "not (dist.is_initialized())"), False),  # 8 is not "no backend"
    (site(0, "dataset_type == 'iterable'"), False),
])
def test_is_no_backend_branch(s, want):
    assert idioms.is_no_backend_branch(s) is want


@pytest.mark.parametrize("value, want", [("", True), ("none", True), ("auto", True), ("4", False), (4, False)])
def test_is_sentinel_default(value, want):
    assert idioms.is_sentinel_default(value) is want


def test_long_condition_message_is_short(tmp_path):
    files = {"conf.yaml": "data:\n  num_workers: 8\n",
             "train.py": "def build(cfg, ds, rank, world, flag):\n"
                         "    num_workers = cfg['data']['num_workers']\n"
                         "    if __name__ == '__main__' and rank == 0 and world > 1 and flag is not None "
                         "and ds.kind in ('a', 'b', 'c') and isinstance(ds, IterableDataset):\n"
                         "        num_workers = 0\n"
                         "    return num_workers\n"}
    [f] = findings_for(files, tmp_path, "QG104")
    assert "when `... and " in f.message and "isinstance(ds, IterableDataset)`" in f.message
    assert "__main__" not in f.message and "rank == 0" not in f.message
    assert "the value configured at conf.yaml:2 (8) is ignored then" in f.message


def test_cap_message_shows_the_expression_not_a_string(tmp_path):
    files = {"policy.py": "def target(self, total_num_workers):\n"
                          "    total_num_workers = total_num_workers\n"
                          "    total_num_workers = min(total_num_workers, self.cfg.max_workers)\n"
                          "    return total_num_workers\n"}
    [f] = findings_for(files, tmp_path, "QG104")
    assert "capped at `self.cfg.max_workers`" in f.message and "'self.cfg" not in f.message


def test_text_report_shows_a_script_default_without_the_main_guard(tmp_path):
    from auditor.lint.harness import write_project
    from conftest import run_cli

    root = write_project(tmp_path, {"train.py": "import argparse\n"
                                                "if __name__ == '__main__':\n"
                                                "    p = argparse.ArgumentParser()\n"
                                                "    p.add_argument('--num-workers', type=int, default=4)\n"})
    proc = run_cli("scan", str(root), "--no-progress", "--knobs")
    assert proc.returncode == 0, proc.stderr
    assert "num_workers" in proc.stdout and "__main__" not in proc.stdout


def test_precision_fixture_warns_only_where_marked(tmp_path):
    """fixtures/rules/precision_idioms: the idioms around two true fallbacks. Every finding
    is annotated (tests/test_rules_fixtures.py); here the warnings are exactly the lines
    marked `(warning)`: the logged override and the test file's finding are notes."""
    import re
    from pathlib import Path

    from auditor.lint.harness import scan_and_check

    root = Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "precision_idioms"
    marked = {(p.relative_to(root).as_posix(), n) for p in root.rglob("*.py")
              for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"expect: QG\d+ \(warning\)", line)}
    result = scan_and_check(root)
    warnings = {(f.file, f.line) for f in result.findings if f.severity == "warning"}
    assert warnings == marked == {("rl/data.py", 13), ("rl/envs.py", 7)}
    assert {(f.file, f.severity) for f in result.findings if f.severity == "note"} == {
        ("rl/data.py", "note"), ("tests/test_envs.py", "note")}


def test_a_module_named_testing_holds_test_helpers(tmp_path):
    # the same helper, whose count is dropped when a caller passes the pool: reported in a
    # library module, not in the package's test helpers (realhf/base/testing.py)
    helper = ("from multiprocessing import Pool\n\n\n"
              "def init_workers(num_workers, pool=None):\n"
              "    if pool is None:\n"
              "        pool = Pool(num_workers)\n"
              "    return pool\n")
    found = findings_for({"pkg/helpers.py": helper, "pkg/testing.py": helper}, tmp_path, "QG104")
    assert {(f.file, f.line) for f in found} == {("pkg/helpers.py", 4)}

"""Which files a scan reads: .gitignore (git's matching), exclude globs, test code as notes,
and --statistics. Real trees on disk, the real walk and the real CLI."""

from __future__ import annotations

import json
import subprocess

import pytest

from auditor import scan
from auditor.exitcodes import UsageError
from auditor.lint.harness import default_args, scan_and_check, write_project
from auditor.pathfilter import PathFilter, parse_gitignore
from conftest import run_cli

POOL = "import multiprocessing as mp\nwith mp.Pool(8) as pool:\n    pool.map(f, xs)\n"
# a serial vector env with a configured count: QG106, a warning outside test code
SERIAL = ("from stable_baselines3.common.env_util import make_vec_env\n"
          "env = make_vec_env('HalfCheetah-v4', n_envs=cfg['n_envs'])\n")


def ignored(patterns: str, rel: str, is_dir: bool = False) -> bool:
    for rule in reversed(parse_gitignore(patterns)):
        if (not rule.dir_only or is_dir) and rule.regex.match(rel):
            return not rule.negate
    return False


@pytest.mark.parametrize("patterns, rel, is_dir, want", [
    ("*.log", "a/b/x.log", False, True),  # no slash: any depth
    ("*.log", "a/b/x.logs", False, False),
    ("/build", "build", True, True),  # leading slash: anchored
    ("/build", "src/build", True, False),
    ("docs/gen", "docs/gen", True, True),  # a middle slash anchors too
    ("docs/gen", "x/docs/gen", True, False),
    ("out/", "out", True, True),  # directory only
    ("out/", "out", False, False),
    ("*.py\n!keep.py", "keep.py", False, False),  # negation, last match wins
    ("!keep.py\n*.py", "keep.py", False, True),
    ("**/cache", "a/b/cache", True, True),
    ("a/**/b", "a/b", True, True),
    ("a/**/b", "a/x/y/b", True, True),
    ("logs/**", "logs/x/y.txt", False, True),
    ("fo?.py", "foo.py", False, True),
    ("fo?.py", "fo/.py", False, False),  # ? never matches a slash
    ("[ab].py", "b.py", False, True),
    ("[!ab].py", "b.py", False, False),
    ("# comment\n\\#hash.py", "#hash.py", False, True),
    ("\\!bang.py", "!bang.py", False, True),
    ("trailing.py   ", "trailing.py", False, True),
])
def test_gitignore_patterns(patterns, rel, is_dir, want):
    assert ignored(patterns, rel, is_dir) is want


def tree(tmp_path, files):
    write_project(tmp_path, files)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    return tmp_path


def scanned(root, settings=None, **kw):
    """The files scan.scan reads, as rel paths (its walk with its filter)."""
    result = scan.scan(root, jobs=1, settings=settings or {}, **kw)
    return sorted({s.file for s in result.sites})


def test_walk_honours_nested_gitignores_and_negation(tmp_path):
    root = tree(tmp_path, {
        ".gitignore": "/generated\n*.tmp.py\n",
        "generated/a.py": POOL, "src/generated/b.py": POOL, "src/x.tmp.py": POOL,
        "src/.gitignore": "vendored/\n!keep.tmp.py\n", "src/vendored/v.py": POOL, "src/keep.tmp.py": POOL,
        "src/main.py": POOL,
    })
    assert scanned(root) == ["src/generated/b.py", "src/keep.tmp.py", "src/main.py"]
    everything = scanned(root, respect_gitignore=False)
    assert "generated/a.py" in everything and "src/vendored/v.py" in everything


def test_gitignore_above_the_scanned_root_applies(tmp_path):
    root = tree(tmp_path, {".gitignore": "pkg/skip/\n", "pkg/skip/a.py": POOL, "pkg/main.py": POOL})
    assert scanned(root / "pkg") == ["main.py"]
    pf = PathFilter(root / "pkg")
    assert pf.excluded("skip", is_dir=True) and not pf.excluded("main.py", is_dir=False)


def test_exclude_and_extend_exclude_from_settings_and_cli(tmp_path):
    root = tree(tmp_path, {"a/x.py": POOL, "b/y.py": POOL, "build/z.py": POOL, "c/gen_w.py": POOL})
    assert scanned(root) == ["a/x.py", "b/y.py", "c/gen_w.py"]  # build/ is a default skip
    assert scanned(root, settings={"extend-exclude": ["b", "gen_*.py"]}) == ["a/x.py"]
    # exclude replaces the defaults (build/ is scanned again), as in ruff
    assert scanned(root, settings={"exclude": ["a/*"]}) == ["b/y.py", "build/z.py", "c/gen_w.py"]
    assert scanned(root, settings={"exclude": ["a/*"]}, exclude=["b"]) == ["a/x.py", "build/z.py", "c/gen_w.py"]
    assert scanned(root, extend_exclude=["c/*"]) == ["a/x.py", "b/y.py"]


def test_bad_exclude_setting_is_a_usage_error(tmp_path):
    root = tree(tmp_path, {"a.py": POOL, "pyproject.toml": "[tool.qg-audit]\nexclude = 3\n"})
    with pytest.raises(UsageError, match="exclude must be a list of glob strings"):
        scan.scan(root)
    (root / "pyproject.toml").write_text("[tool.qg-audit]\nrespect-gitignore = 'no'\n")
    with pytest.raises(UsageError, match="respect-gitignore must be true or false"):
        scan.scan(root)


def test_findings_in_test_code_are_notes_by_default(tmp_path):
    root = write_project(tmp_path, {"conf.yaml": "n_envs: 16\n", "train.py": SERIAL,
                                    "tests/test_env.py": SERIAL, "pkg/env_test.py": SERIAL,
                                    "conftest.py": SERIAL, "benchmarks/bench_envs.py": SERIAL,
                                    "pkg/contest.py": SERIAL})
    got = {(f.file, f.severity) for f in scan_and_check(root).findings if f.code == "QG106"}
    assert got == {("train.py", "warning"), ("tests/test_env.py", "note"), ("pkg/env_test.py", "note"),
                   ("conftest.py", "note"), ("benchmarks/bench_envs.py", "note"), ("pkg/contest.py", "warning")}
    back = scan_and_check(root, default_args(per_file_severity=["tests/*:warning"]))
    got = {(f.file, f.severity) for f in back.findings if f.code == "QG106"}
    assert ("tests/test_env.py", "warning") in got and ("conftest.py", "note") in got


def test_per_file_severity_in_pyproject(tmp_path):
    root = write_project(tmp_path, {"conf.yaml": "n_envs: 16\n", "train.py": SERIAL, "tests/test_env.py": SERIAL,
                                    "examples/demo.py": SERIAL,
                                    "pyproject.toml": "[tool.qg-audit]\nper-file-severity = { \"examples/*\" = \"note\" }\n"})
    got = {(f.file, f.severity) for f in scan_and_check(root).findings if f.code == "QG106"}
    # replacing the table drops the test-code default
    assert got == {("train.py", "warning"), ("tests/test_env.py", "warning"), ("examples/demo.py", "note")}
    (root / "pyproject.toml").write_text("[tool.qg-audit]\nextend-per-file-severity = { \"examples/*\" = \"note\" }\n")
    got = {(f.file, f.severity) for f in scan_and_check(root).findings if f.code == "QG106"}
    assert got == {("train.py", "warning"), ("tests/test_env.py", "note"), ("examples/demo.py", "note")}
    (root / "pyproject.toml").write_text("[tool.qg-audit]\nper-file-severity = { \"examples/*\" = \"loud\" }\n")
    with pytest.raises(UsageError, match="unknown severity 'loud'"):
        scan_and_check(root)


def test_cli_gitignore_exclude_and_exit_codes(tmp_path):
    root = tree(tmp_path, {"conf.yaml": "n_envs: 16\n", ".gitignore": "legacy/\n", "legacy/train.py": SERIAL,
                           "tests/test_env.py": SERIAL})
    proc = run_cli("scan", str(root), "--format", "json")
    assert proc.returncode == 0, proc.stderr  # the test file's finding is a note; legacy/ is ignored
    doc = json.loads(proc.stdout)
    assert [(f["file"], f["severity"]) for f in doc["findings"]] == [("tests/test_env.py", "note")]
    proc = run_cli("scan", str(root), "--format", "json", "--no-respect-gitignore")
    assert proc.returncode == 1
    assert ("legacy/train.py", "warning") in {(f["file"], f["severity"]) for f in json.loads(proc.stdout)["findings"]}
    proc = run_cli("scan", str(root), "--format", "json", "--no-respect-gitignore", "--extend-exclude", "legacy")
    assert proc.returncode == 0 and all(f["file"] != "legacy/train.py" for f in json.loads(proc.stdout)["findings"])


def test_cli_statistics(tmp_path):
    root = write_project(tmp_path, {"conf.yaml": "n_envs: 16\n", "train.py": SERIAL, "eval.py": SERIAL,
                                    "tests/test_env.py": SERIAL, "rollout.py": POOL})
    proc = run_cli("scan", str(root), "--statistics")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["3", "QG106", "serial-backend", "[*]", "warning", "2,", "note", "1"]
    assert any(line.split()[:2] == ["1", "QG105"] for line in lines)
    proc = run_cli("scan", str(root), "--statistics", "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "qg-audit.statistics/1" and doc["total"] == 4
    assert doc["rules"][0] == {"code": "QG106", "name": "serial-backend", "count": 3,
                               "severities": {"warning": 2, "note": 1}, "fixable": True}
    proc = run_cli("scan", str(root), "--statistics", "--format", "sarif")
    assert proc.returncode == 2 and "--statistics" in proc.stderr


def test_a_scanned_root_that_git_ignores_is_still_scanned(tmp_path):
    # bench/corpus/ is ignored by its repository, yet `qg-audit scan bench/corpus/pkg` must read it;
    # patterns of the parent .gitignore still apply to the files below the root
    root = tree(tmp_path, {".gitignore": "corpus/\n*.gen.py\n", "corpus/pkg/a.py": POOL,
                           "corpus/pkg/b.gen.py": POOL})
    assert scanned(root / "corpus" / "pkg") == ["a.py"]
    assert scanned(root) == []

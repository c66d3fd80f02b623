"""Git never ignores a tracked file, and neither does the scan (issue 22): a ``.gitignore``
pattern hides only untracked files; the directories the built-in list skips are counted.

Real repositories made with the real git program; the index is read by auditor.gitindex.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program to make real indexes")

sys.path.insert(0, str(REPO))
from auditor.gitindex import GitIndex, read_index  # noqa: E402


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(root), *args], check=True,
                   capture_output=True)


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        ".gitignore": "conf/\n*.local.yaml\n",
        "train.py": "import os\nn = int(os.environ.get('N_ENVS', 2))\n",
        "conf/tracked.yaml": "data:\n  num_workers: 4\n",
        "conf/untracked.yaml": "data:\n  num_workers: 9\n",
        "conf/deep/tracked.yaml": "rollout:\n  num_envs: 3\n",
        "conf/deep/untracked.yaml": "rollout:\n  num_envs: 5\n",
        "site.local.yaml": "sampler:\n  n_workers: 6\n",
        "other.local.yaml": "sampler:\n  n_workers: 7\n",
        "build/generated.yaml": "trainer:\n  num_workers: 8\n",
        "build/notes.yaml": "trainer:\n  num_workers: 1\n",
        "dist/x.yaml": "num_workers: 2\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")
    git(root, "add", ".gitignore", "train.py", "build/generated.yaml")
    git(root, "add", "-f", "conf/tracked.yaml", "conf/deep/tracked.yaml", "site.local.yaml")
    git(root, "commit", "-qm", "init")
    return root


def scanned(proc) -> set[str]:
    doc = json.loads(proc.stdout)
    return {s["file"] for k in doc["knobs"] for s in k["sites"]} | {e["file"] for e in doc["errors"]}


@pytest.mark.parametrize("version", [2, 4])
def test_ignored_but_tracked_files_are_scanned_and_untracked_ones_are_not(tmp_path, version):
    root = repo(tmp_path)
    git(root, "update-index", "--index-version", str(version))
    proc = run_cli("scan", str(root), "--format", "json", "--no-cache")
    files = scanned(proc)
    assert {"conf/tracked.yaml", "conf/deep/tracked.yaml", "site.local.yaml"} <= files
    assert not files & {"conf/untracked.yaml", "conf/deep/untracked.yaml", "other.local.yaml"}
    assert not files & {"build/generated.yaml", "dist/x.yaml"}  # the built-in list still applies...
    summary = json.loads(proc.stdout)["summary"]
    assert summary["skipped_dirs"] == 2 and summary["skipped_tracked_files"] == 1  # ...and says so
    text = run_cli("scan", str(root), "--no-cache").stdout
    assert "not scanned: 2 directories on the built-in skip list (build, dist); git tracks 1 file there" in text
    # without a repository the same tree follows its .gitignore alone
    shutil.rmtree(root / ".git")
    files = scanned(run_cli("scan", str(root), "--format", "json", "--no-cache"))
    assert not files & {"conf/tracked.yaml", "site.local.yaml"}


def test_git_add_of_an_ignored_file_is_seen_through_the_cache(tmp_path):
    root = repo(tmp_path)
    old = time.time() - 3600
    for p in root.rglob("*"):
        os.utime(p, (old, old))
    cache = tmp_path / "cache"
    first = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache))
    again = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache))
    assert scanned(first) == scanned(again) and "other.local.yaml" not in scanned(again)
    git(root, "add", "-f", "other.local.yaml", "build/notes.yaml")  # only the index changes
    after = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache))
    cold = run_cli("scan", str(root), "--format", "json", "--no-cache")
    assert "other.local.yaml" in scanned(after) and scanned(after) == scanned(cold)
    assert json.loads(after.stdout)["summary"]["skipped_tracked_files"] == 2


def test_the_index_reader_agrees_with_git_ls_files(tmp_path):
    root = repo(tmp_path)
    (root / "we\u0301ird name [x].yaml").write_text("a: 1\n")
    git(root, "add", "-f", ".")
    listed = subprocess.run(["git", "-C", str(root), "-c", "core.quotepath=off", "ls-files", "-z"],
                            capture_output=True, check=True).stdout.split(b"\0")
    want = {os.fsdecode(p) for p in listed if p}
    for version in (2, 3, 4):
        git(root, "update-index", "--index-version", str(version))
        index = GitIndex.of(root / "conf")
        assert index is not None and index.top == root and set(index.files) == want
    assert read_index(tmp_path / "missing") == frozenset()
    bad = tmp_path / "bad-index"
    bad.write_bytes(b"DIRC\0\0\0\x02\0\0\0\x05" + b"\xff" * 40)
    assert read_index(bad) is None

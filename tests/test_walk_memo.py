"""The walk's memo (auditor/walk.py): a rescan's walk gives exactly what a full walk gives.

Each check walks a real tree through the memo and compares the result with a walk without
it, after real changes to the tree. Directory mtimes are set an hour back (``settle``) so
the memo records them: a directory modified within RACY_NS of a walk is never trusted.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from auditor import cache
from auditor.pathfilter import PathFilter
from auditor.walk import SKIP_DIRS, WalkMemo, memo_key, walk, walk_filtered

MAX = 5_000_000
_CLOCK = [time.time() - 3600]


def settle(root: Path) -> None:
    """Every entry an old mtime, later than the last settle() gave (as real edits do)."""
    _CLOCK[0] += 10
    for p in [root, *root.rglob("*")]:
        if not p.is_symlink():
            os.utime(p, (_CLOCK[0], _CLOCK[0]))


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "train.py": "import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=4)\n",
        "conf/config.yaml": "data:\n  num_workers: 8\n",
        "conf/rollout/cpu.yaml": "num_envs: 2\n",
        "conf/README.md": "not read\n",
        "scripts/launch": "#!/bin/bash\nOMP_NUM_THREADS=4 python train.py\n",
        "scripts/notes": "plain text, no shebang\n",
        "pkg/mod/deep/x.py": "x = 1\n",
        "pkg/.gitignore": "generated/\n",
        "pkg/generated/out.py": "num_workers = 1\n",
        "build/skipped.py": "num_workers = 2\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".git").mkdir()
    settle(root)
    return root


def memo_walk(root: Path, cache_dir: Path):
    return walk_filtered(root, {}, MAX / 1e6, memo_dir=cache_dir, started_ns=time.time_ns())


def full_walk(root: Path):
    return walk_filtered(root, {}, MAX / 1e6)


def as_data(walked):
    candidates, errors, entries = walked
    return [(c.path, c.rel, c.kind, c.size, c.mtime_ns) for c in candidates], errors, entries


def agrees(root: Path, cache_dir: Path):
    """Two walks through the memo (the first may record, the second reuses) equal a full walk."""
    expected = as_data(full_walk(root))
    assert as_data(memo_walk(root, cache_dir)) == expected
    assert as_data(memo_walk(root, cache_dir)) == expected
    return expected


def rels(data) -> set[str]:
    """The relative paths of as_data()'s candidates."""
    return {c[1] for c in data[0]}


def test_the_memo_is_used_and_trusts_an_unchanged_directory_mtime(tmp_path):
    """Shown the only way it can be: a file added to a directory whose mtime is then set
    back by hand is not seen through the memo (a full walk sees it). Real edits move the
    directory's mtime on; this is the trust git's untracked cache places in it too."""
    root = tree(tmp_path)
    cache_dir = tmp_path / "cache"
    first = agrees(root, cache_dir)
    st = (root / "conf").stat()
    (root / "conf" / "extra.yaml").write_text("num_workers: 3\n")
    os.utime(root / "conf" / "extra.yaml", (_CLOCK[0], _CLOCK[0]))
    os.utime(root / "conf", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rels(as_data(memo_walk(root, cache_dir))) == rels(first)
    assert rels(as_data(full_walk(root))) == rels(first) | {"conf/extra.yaml"}


def test_what_it_finds_without_the_memo(tmp_path):
    root = tree(tmp_path)
    found = rels(agrees(root, tmp_path / "cache"))
    assert found == {"train.py", "conf/config.yaml", "conf/rollout/cpu.yaml", "scripts/launch", "pkg/mod/deep/x.py"}


def _edit(root):
    (root / "train.py").write_text("import torch\nloader = DataLoader(ds, num_workers=16)  # longer\n")


def _add(root):
    (root / "conf" / "rollout" / "gpu.yaml").write_text("num_envs: 8\n")


def _delete(root):
    (root / "conf" / "config.yaml").unlink()


def _rename(root):
    (root / "pkg" / "mod" / "deep" / "x.py").rename(root / "pkg" / "mod" / "deep" / "y.py")


def _new_dir(root):
    (root / "pkg" / "new").mkdir()
    (root / "pkg" / "new" / "z.yaml").write_text("threads: 2\n")


def _remove_dir(root):
    for p in sorted((root / "conf" / "rollout").iterdir()):
        p.unlink()
    (root / "conf" / "rollout").rmdir()


def _dir_becomes_file(root):
    _remove_dir(root)
    (root / "conf" / "rollout").write_text("not a dir now\n")


def _shebang_added(root):
    (root / "scripts" / "notes").write_text("#!/bin/sh\nexport OMP_NUM_THREADS=2\n")


def _gitignore_edited(root):
    (root / "pkg" / ".gitignore").write_text("# nothing ignored\n")


def _gitignore_created_below(root):
    (root / "conf" / ".gitignore").write_text("rollout/\n")


def _gitignore_deleted(root):
    (root / "pkg" / ".gitignore").unlink()


def _git_info_exclude(root):
    (root / ".git" / "info").mkdir()
    (root / ".git" / "info" / "exclude").write_text("scripts/\n")


def _oversized(root):
    (root / "conf" / "config.yaml").write_text("x: 1\n" * (MAX // 4))


def _symlink_added(root):
    (root / "linked").symlink_to(root / "conf", target_is_directory=True)


CHANGES = [_edit, _add, _delete, _rename, _new_dir, _remove_dir, _dir_becomes_file, _shebang_added,
           _gitignore_edited, _gitignore_created_below, _gitignore_deleted, _git_info_exclude, _oversized,
           _symlink_added]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__.strip("_") for c in CHANGES])
@pytest.mark.parametrize("settled", [True, False], ids=["settled", "racy"])
def test_a_change_gives_what_a_full_walk_gives(tmp_path, change, settled):
    root = tree(tmp_path)
    cache_dir = tmp_path / "cache"
    before = agrees(root, cache_dir)
    change(root)
    if settled:
        settle(root)
    after = agrees(root, cache_dir)
    assert after != before


def test_the_gitignore_changes_are_seen(tmp_path):
    root = tree(tmp_path)
    cache_dir = tmp_path / "cache"
    assert "pkg/generated/out.py" not in rels(agrees(root, cache_dir))
    _gitignore_edited(root)
    settle(root)
    assert "pkg/generated/out.py" in rels(agrees(root, cache_dir))
    _gitignore_created_below(root)
    settle(root)
    assert "conf/rollout/cpu.yaml" not in rels(agrees(root, cache_dir))


def test_a_tree_with_a_symlink_is_walked_in_full_every_time(tmp_path):
    root = tree(tmp_path)
    (root / "alias").symlink_to(root / "pkg", target_is_directory=True)
    cache_dir = tmp_path / "cache"
    agrees(root, cache_dir)
    skip, filt = SKIP_DIRS, PathFilter(root, [], respect_gitignore=True)
    memo = WalkMemo(cache_dir, memo_key(root, skip, filt, MAX, False), time.time_ns())
    assert not memo.trusted()  # saved empty: nothing to vouch for


def test_a_corrupt_or_foreign_memo_is_ignored(tmp_path):
    root = tree(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = agrees(root, cache_dir)
    [entry] = cache_dir.glob("walk-*.bin")
    blob = entry.read_bytes()
    entry.write_bytes(blob[:-20] + bytes(20))
    assert as_data(memo_walk(root, cache_dir)) == expected
    # a well-formed entry of the wrong shape (another root's key would not even be read)
    skip, filt = SKIP_DIRS, PathFilter(root, [], respect_gitignore=True)
    key = memo_key(root, skip, filt, MAX, False)
    st = root.stat()
    here = (st.st_dev, st.st_ino, st.st_mtime_ns)  # records the walk takes as the root's
    # (a record of the right shape claiming other entries would be believed: the key and the
    # checksum keep out other roots' and damaged ones, the inode and mtime_ns a stale one)
    for nonsense in ({"": "nonsense"}, {"": (*here, 4, 5, 6, 7, 8)}, {"": (*here, 0, ("x",), (), (), ())},
                     {"": (*here, 0, ("nope.py",), ("python",), (), ())}, {"": (*here, 0, [1], [None], [], [])}):
        doc = {"dirs": nonsense, "sniffed": {}, "ignores": {}}
        cache.write_entry(cache_dir, entry.name, "walk", key, json.dumps(doc).encode())
        assert as_data(memo_walk(root, cache_dir)) == expected
    assert as_data(memo_walk(root, cache_dir)) == expected


def test_a_file_root_never_uses_the_memo(tmp_path):
    root = tree(tmp_path)
    walked = walk_filtered(root / "train.py", {}, MAX / 1e6, memo_dir=tmp_path / "cache")
    assert [c.rel for c in walked[0]] == ["train.py"]
    assert not (tmp_path / "cache").exists()


def test_the_plain_walk_is_unchanged_by_the_memo_code(tmp_path):
    root = tree(tmp_path)
    found, errors, _ = walk(root, MAX, SKIP_DIRS, PathFilter(root, [], respect_gitignore=True))
    assert errors == [] and "build/skipped.py" not in {c.rel for c in found}

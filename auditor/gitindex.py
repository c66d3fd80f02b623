"""What git tracks, read from the repository's index file (standard library only; git itself
is never run: it may be absent, and a scan must not depend on the tree's git config).

    index = GitIndex.of(Path("project"))     # None outside a git checkout
    index.tracked("conf/local.yaml")          # a file git tracks (path relative to the top)
    index.holds("build")                      # a directory with tracked files under it

Git never ignores a tracked file: a ``.gitignore`` pattern only hides untracked ones. The
scan's walk (auditor.pathfilter) asks the index about every entry an ignore file would hide,
and the cache (auditor.cache) refuses a cache directory that git tracks.

The index format (git's Documentation/gitformat-index.txt): a 12-byte header ``DIRC``,
version (2, 3 or 4), entry count; then the entries, sorted by path. Versions 2 and 3 store
each path whole, padded to 8 bytes; version 4 strips a prefix shared with the previous path.
A split index (``link`` extension: part of the entries live in a shared file) and indexes of
SHA-256 repositories are read as "unknown": ``GitIndex.of`` returns None and the caller
behaves as without a repository.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_INDEX_BYTES = 512 << 20  # a bigger index is not read (a hostile tree could ship any file)
_SHA1 = 20
_FIXED = 40 + _SHA1 + 2  # ten 32-bit stat fields, the object id, the flags


def repo_top(path: Path) -> Path | None:
    """The nearest directory at or above PATH that holds ``.git`` (a directory, or the file
    a worktree or submodule has), or None."""
    for d in (path, *path.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def git_dir(top: Path) -> Path | None:
    """TOP/.git, or the directory a ``.git`` file points at (``gitdir: ...``)."""
    dot = top / ".git"
    if dot.is_dir():
        return dot
    try:
        with open(dot, "rb") as fh:
            line = fh.read(4096).split(b"\n", 1)[0].strip()
    except OSError:
        return None
    if not line.startswith(b"gitdir:"):
        return None
    target = Path(os.fsdecode(line[7:].strip()))
    return target if target.is_absolute() else top / target


class GitIndex:
    """The paths of one repository's index, relative to its top, '/'-separated."""

    def __init__(self, top: Path, path: Path, files: frozenset[str]):
        self.top = top
        self.path = path  # the index file (the walk's memo re-checks its stat)
        self.files = files
        dirs: set[str] = set()
        for f in files:
            cut = f.rfind("/")
            while cut > 0:
                d = f[:cut]
                if d in dirs:
                    break
                dirs.add(d)
                cut = f.rfind("/", 0, cut)
        self.dirs = frozenset(dirs)

    @classmethod
    def of(cls, path: Path) -> GitIndex | None:
        top = repo_top(Path(os.path.abspath(path)))
        if top is None:
            return None
        gdir = git_dir(top)
        if gdir is None:
            return None
        index = gdir / "index"
        files = read_index(index)
        return None if files is None else cls(top, index, files)

    def tracked(self, rel: str) -> bool:
        return rel in self.files

    def holds(self, rel_dir: str) -> bool:
        """Does git track anything under REL_DIR (relative to the top)?"""
        return rel_dir in self.dirs or rel_dir in self.files  # a sparse index lists whole directories

    def count_under(self, rel_dirs) -> int:
        """How many tracked files lie under any of REL_DIRS (relative to the top)."""
        wanted = {d.rstrip("/") for d in rel_dirs}
        if not wanted or not any(d in self.dirs for d in wanted):
            return 0
        count = 0
        for f in self.files:
            cut = f.find("/")
            while cut > 0:
                if f[:cut] in wanted:
                    count += 1
                    break
                cut = f.find("/", cut + 1)
        return count


def tracks_under(path: Path) -> bool:
    """Does git track anything at or under PATH? Cheap for the common answer: in an index of
    version 2 or 3 (whole paths) whose bytes do not hold PATH's, nothing is parsed."""
    absolute = Path(os.path.abspath(path))
    top = repo_top(absolute.parent)
    gdir = git_dir(top) if top is not None else None
    if gdir is None:
        return False
    rel = absolute.relative_to(top).as_posix()
    data = _read(gdir / "index")
    if not data:
        return False
    if data[4:8] in (b"\0\0\0\2", b"\0\0\0\3") and os.fsencode(rel) not in data:
        return False
    try:
        files = _parse(data)
    except (ValueError, IndexError):
        return False
    return files is not None and GitIndex(top, gdir / "index", files).holds(rel)


def read_index(path: Path) -> frozenset[str] | None:
    """Every path an index file lists, or None when it cannot be read or is not understood.
    A missing index (a fresh ``git init``) lists nothing."""
    data = _read(path)
    if data is None:
        return None
    try:
        return _parse(data) if data else frozenset()
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _read(path: Path) -> bytes | None:
    """An index file's bytes: b"" when absent, None when it is not a regular file one may read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_INDEX_BYTES:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _parse(data: bytes) -> frozenset[str] | None:
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    paths: list[bytes] = []
    pos, end = 12, len(data) - _SHA1  # the file ends with a checksum of itself
    prev = b""
    for _ in range(count):
        if pos + _FIXED > end:
            return None
        flags = int.from_bytes(data[pos + 60:pos + 62], "big")
        at = pos + _FIXED
        if flags & 0x4000:  # extended flags (version 3 and up)
            if version < 3:
                return None
            at += 2
        if version == 4:
            strip, at = _varint(data, at)
            stop = data.index(b"\0", at)
            if strip > len(prev):
                return None
            name = prev[:len(prev) - strip] + data[at:stop]
            pos = stop + 1
        else:
            length = flags & 0xFFF
            stop = at + length if length < 0xFFF else data.index(b"\0", at)
            if data[stop:stop + 1] != b"\0":
                return None
            name = data[at:stop]
            pos += (stop - pos + 8) & ~7  # padded with 1 to 8 NULs to a multiple of 8 bytes
        if (flags >> 12) & 3 == 0 or not paths or paths[-1] != name:  # conflict stages repeat a path
            paths.append(name)
        prev = name
    if pos > end:
        return None
    # Extensions follow: a split index keeps entries elsewhere ("link"); not understood here.
    while pos + 8 <= end:
        sig, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "big")
        if sig == b"link":
            return None
        pos += 8 + size
    return frozenset(os.fsdecode(p) for p in paths)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """git's offset encoding (varint.c): 7 bits a byte, each continuation adding one."""
    byte = data[at]
    value = byte & 0x7F
    at += 1
    while byte & 0x80:
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
        at += 1
    return value, at

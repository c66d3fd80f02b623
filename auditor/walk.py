"""The scan walk: which files under a root an extractor reads, and the memo that makes a
rescan's walk cost a stat per file.

    found, errors, info = walk(root, max_bytes, path_filter=PathFilter(root))
    walked = walk_filtered(root, settings, 5.0, memo_dir=Path(".qg-audit_cache"))

A walk lists every directory, asks the filters about each entry and stats the files of the
kinds qg-audit reads. On a project of 20,000 files that is ~0.25 s of Python, more than
`rg` takes to read them all. The memo (``WalkMemo``, one cache entry per root and filter
settings) keeps each directory's outcome: the files it yielded and the subdirectories it
entered. A directory whose (device, inode, mtime) is as recorded has the same entries (an
entry added, removed or renamed changes its directory's mtime), so its listing and the
filters' verdicts are taken from the memo and only its files are statted again (a file's
content changes leave its directory's mtime alone). Anything the memo cannot vouch for is
walked for real:

- a directory modified within RACY_NS of the walk that recorded it (a second change in the
  same clock tick would not show), or one that could not be read in full;
- every directory, when an ignore file the filters read has changed (stat differs), or when
  a directory walked for real holds a new ``.gitignore`` (its rules reach directories the
  memo would otherwise vouch for);
- every directory, when the tree has a symlink or a directory reached twice: which path
  reaches such a directory first depends on the order of the walk, so the memo is not used.

Either way the result equals a full walk's (tests/test_walk_memo.py and
bench/check_rescan.py prove it against one).
"""

from __future__ import annotations

import errno
import json
import operator
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from auditor.exitcodes import UsageError
from auditor.extract import SUFFIX_KINDS, kind_of
from auditor.model import FileError

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox", ".venv", "venv",
    "site-packages", "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
    ".qg-audit_cache",
})
VCS_DIRS = frozenset({".git", ".hg", ".svn"})  # skipped even when `exclude` replaces SKIP_DIRS
# Skipped directories the summary does not count: version control, bytecode, our own cache.
UNCOUNTED_DIRS = VCS_DIRS | {"__pycache__", ".qg-audit_cache"}
MAX_FILE_SIZE_MB = 5.0  # default for --max-file-size: bigger files are generated data, not configs


@dataclass
class WalkInfo:
    """What a walk saw besides its candidates and errors."""

    entries: int = 0  # directory entries listed (or vouched for by the memo)
    skipped: list[str] = field(default_factory=list)  # directories SKIP_DIRS kept it out of, root-relative


@dataclass(slots=True)  # not frozen: a frozen init costs 4x, and the walk makes one per file
class Candidate:
    """A file the walk found whose kind has an extractor."""

    path: str  # absolute (or as given) path to open
    rel: str  # path relative to the scanned root, '/' separated: what sites and errors carry
    kind: str
    size: int
    mtime_ns: int = 0  # with size, what the cache (auditor.cache) trusts without reading the file


def walk(root: Path, max_bytes: int, skip_dirs=SKIP_DIRS, path_filter=None, follow_links: bool = False,
         memo: WalkMemo | None = None) -> tuple[list[Candidate], list[FileError], WalkInfo]:
    """Files under ROOT that an extractor can read, plus one error per unusable entry.

    ``path_filter`` (auditor.pathfilter.PathFilter) drops excluded and git-ignored entries
    before they are looked at: an ignored directory is never entered.

    Symlinked directories are followed once: a directory already on the way down (a loop)
    or already walked is not entered again, and a loop is reported. A symlink that resolves
    outside ROOT is not followed (one error each) unless ``follow_links``: a scan must not
    copy lines of ~/.ssh or /etc into a report that CI uploads. Returns
    (candidates, errors, WalkInfo).

    With ``memo`` (a WalkMemo opened for the same root and filters), directories found as
    the last walk left them are not listed again (see the module's docstring), and the memo
    is saved with this walk's outcome.
    """
    if root.is_file() or (root.exists() and not root.is_dir()):
        candidates: list[Candidate] = []
        errors: list[FileError] = []
        _consider(str(root), root.name, root.stat(), candidates, errors, max_bytes, explicit=True)
        return candidates, errors, WalkInfo(1)
    if memo is not None and memo.trusted():
        try:
            tree = _Tree(root, max_bytes, skip_dirs, path_filter, follow_links, memo, reuse=True)
            tree.run()
            memo.save(tree, path_filter)
            return tree.candidates, tree.errors, WalkInfo(tree.entries, tree.skipped)
        except Exception:  # noqa: BLE001 - _Changed, or a record of the right shape but wrong content
            memo.forget()  # either way only speed is lost: walk for real
    tree = _Tree(root, max_bytes, skip_dirs, path_filter, follow_links, memo, reuse=False)
    tree.run()
    if memo is not None:
        memo.save(tree, path_filter)
    return tree.candidates, tree.errors, WalkInfo(tree.entries, tree.skipped)


class _Changed(Exception):
    """The memo cannot vouch for this walk after all: walk everything for real."""


_NAME = operator.attrgetter("name")


class _Tree:
    """One walk of a directory tree (depth first, names sorted), recording into the memo."""

    def __init__(self, root: Path, max_bytes: int, skip_dirs, path_filter, follow_links: bool,
                 memo: WalkMemo | None, reuse: bool):
        self.root = root
        self.max_bytes = max_bytes
        self.skip_dirs = skip_dirs
        self.path_filter = path_filter
        self.inside = None if follow_links else _inside(os.path.realpath(root))
        self.memo = memo
        self.reuse = reuse
        self.old = memo.old_dirs if memo is not None and reuse else {}
        self.old_ignores = memo.old_ignores if memo is not None else {}
        self.dirs: dict[str, tuple] = {}  # this walk's directory records (WalkMemo's format)
        self.sniffed: dict[str, tuple] = {}  # extension-less files' kinds from their first line
        self.linked = False  # a symlink or a directory reached twice: the memo must not be used
        self.candidates: list[Candidate] = []
        self.errors: list[FileError] = []
        self.entries = 0
        self.skipped: list[str] = []
        self.seen_dirs: set[tuple[int, int]] = set()

    def run(self) -> None:
        st = self.root.stat()
        ident = (st.st_dev, st.st_ino)
        self.seen_dirs.add(ident)
        stack: list[tuple] = [(str(self.root), "", (ident,), st)]
        while stack:
            dirpath, rel_dir, ancestors, dst = stack.pop()
            if dst is None:  # a subdirectory of a directory the memo vouched for
                try:
                    dst = os.stat(dirpath)
                except OSError:
                    raise _Changed from None
                ident = (dst.st_dev, dst.st_ino)
                if ident in self.seen_dirs:
                    raise _Changed
                self.seen_dirs.add(ident)
                ancestors = ancestors + (ident,)
            rec = self.old.get(rel_dir)
            if rec is not None and rec[0] == dst.st_dev and rec[1] == dst.st_ino and rec[2] == dst.st_mtime_ns:
                self._as_recorded(dirpath, rel_dir, ancestors, rec, stack)
            else:
                self._list(dirpath, rel_dir, ancestors, dst, stack)

    def _as_recorded(self, dirpath: str, rel_dir: str, ancestors: tuple, rec: tuple, stack: list) -> None:
        _dev, _ino, _mtime, entries, files, kinds, subdirs, skipped = rec
        if len(kinds) != len(files):
            raise _Changed
        self.entries += entries
        prefix = dirpath if dirpath.endswith("/") else dirpath + "/"  # os.path.join's result
        head = f"{rel_dir}/" if rel_dir else ""
        candidates, max_bytes, is_reg = self.candidates, self.max_bytes, stat.S_ISREG
        for name, kind in zip(files, kinds):
            path = prefix + name
            try:
                st = os.stat(path)
            except OSError:
                raise _Changed from None  # gone since its directory was checked: a race
            # _file()'s common case inline: this loop runs once per file of the tree
            if kind is not None and is_reg(st.st_mode) and st.st_size <= max_bytes:
                candidates.append(Candidate(path, head + name, kind, st.st_size, st.st_mtime_ns))
            elif stat.S_ISDIR(st.st_mode):
                raise _Changed
            else:
                self._file(path, head + name, kind, st)
        stack.extend((prefix + name, head + name, ancestors, None) for name in reversed(subdirs))
        self.skipped.extend(head + name for name in skipped)
        self.dirs[rel_dir] = rec

    def _file(self, path: str, rel: str, kind: str | None, st: os.stat_result) -> None:
        """A file entry (not a directory) with KIND by its suffix: a candidate, or _consider's verdict."""
        if kind is not None and stat.S_ISREG(st.st_mode) and st.st_size <= self.max_bytes:
            self.candidates.append(Candidate(path, rel, kind, st.st_size, st.st_mtime_ns))  # _consider's usual end
        else:
            _consider(path, rel, st, self.candidates, self.errors, self.max_bytes, sniff=self._sniff)

    def _sniff(self, path: str, rel: str, st: os.stat_result) -> str | None:
        """An extension-less file's kind from its first line, remembered by size and mtime."""
        sig = (st.st_size, st.st_mtime_ns)
        known = self.memo.old_sniffed.get(rel) if self.memo is not None else None
        if known is not None and known[:2] == sig:
            kind = known[2]
        else:
            kind = kind_of(rel.rsplit("/", 1)[-1], _first_line(path))
        if self.memo is not None and st.st_mtime_ns < self.memo.trust_before:
            self.sniffed[rel] = (*sig, kind)
        return kind

    def _list(self, dirpath: str, rel_dir: str, ancestors: tuple, dst: os.stat_result, stack: list) -> None:
        errors, path_filter = self.errors, self.path_filter
        try:
            with os.scandir(dirpath) as it:
                listing = sorted(it, key=_NAME)
        except OSError as exc:
            errors.append(FileError(rel_dir or ".", None, f"unreadable directory: {exc.strerror}"))
            return
        subdirs = []
        skipped: list[str] = []
        files: list[str] = []
        kinds: list[str | None] = []
        complete = True  # every entry's verdict is a function of its name and stat: recordable
        excluded = path_filter.in_dir(rel_dir) if path_filter else None
        self.entries += len(listing)
        for entry in listing:
            name = entry.name
            kind = SUFFIX_KINDS.get(name[name.rfind("."):]) if "." in name else None
            # A regular file (no symlink: told by the directory entry, no stat) of a kind no
            # extractor reads yields nothing, excluded or not: the common case, cheapest first.
            if kind is None and "." in name and _is_plain_file(entry):
                if name == ".gitignore" and self.reuse and os.path.abspath(entry.path) not in self.old_ignores:
                    raise _Changed  # new rules for the directories below, which the memo vouches for
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if excluded is not None and excluded(name, _is_dir(entry)):
                continue
            if entry.is_symlink():
                if self.reuse:
                    raise _Changed
                self.linked = True
            try:
                st = entry.stat()  # follows symlinks
            except OSError as exc:
                complete = False
                if entry.is_symlink():
                    why = "symlink loop" if exc.errno == errno.ELOOP else f"broken symlink ({exc.strerror})"
                    if kind_of(entry.name) or exc.errno == errno.ELOOP:
                        errors.append(FileError(rel, None, f"{why}: -> {_readlink(entry.path)}; skipped"))
                elif kind_of(entry.name):
                    errors.append(FileError(rel, None, f"unreadable: {exc.strerror}"))
                continue
            if self.inside is not None and entry.is_symlink() and not self.inside(os.path.realpath(entry.path)):
                if stat.S_ISDIR(st.st_mode) or kind_of(entry.name):
                    errors.append(FileError(rel, None, f"symlink to outside the scanned root: -> "
                                            f"{_readlink(entry.path)}; not followed (--follow-links follows it)"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in self.skip_dirs:
                    if entry.name not in UNCOUNTED_DIRS:
                        skipped.append(name)
                        self.skipped.append(rel)
                    continue
                ident = (st.st_dev, st.st_ino)
                if ident in ancestors:
                    errors.append(FileError(rel, None, f"symlink loop: -> {_readlink(entry.path)} "
                                            "is a directory above it; not followed"))
                    continue
                if ident in self.seen_dirs:
                    if self.reuse:
                        raise _Changed
                    self.linked = True
                    continue  # a second symlink to a directory already scanned: same files
                self.seen_dirs.add(ident)
                subdirs.append((entry.path, rel, ancestors + (ident,), st))
            else:
                files.append(name)
                kinds.append(kind)
                self._file(entry.path, rel, kind, st)
        stack.extend(reversed(subdirs))
        if complete and self.memo is not None and dst.st_mtime_ns < self.memo.trust_before:
            self.dirs[rel_dir] = (dst.st_dev, dst.st_ino, dst.st_mtime_ns, len(listing), tuple(files), tuple(kinds),
                                  tuple(s[1].rsplit("/", 1)[-1] for s in subdirs), tuple(skipped))


def _inside(root_real: str) -> Callable[[str], bool]:
    prefix = root_real.rstrip(os.sep) + os.sep
    return lambda real: real == root_real or real.startswith(prefix)


def _is_plain_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _consider(path: str, rel: str, st: os.stat_result, candidates, errors, max_bytes: int,
              explicit: bool = False, sniff=None) -> None:
    name = rel.rsplit("/", 1)[-1]
    kind = kind_of(name)
    if kind is None and "." not in name and stat.S_ISREG(st.st_mode) and 0 < st.st_size <= max_bytes:
        # extension-less launch scripts (#!/bin/bash)
        kind = sniff(path, rel, st) if sniff is not None else kind_of(name, _first_line(path))
    if kind is None:
        if explicit:
            errors.append(FileError(rel, None, "not a file kind qg-audit reads "
                                    "(.py .yaml .yml .toml .json .ini .sh .bash or a #!/bin/sh script)"))
        return
    if not stat.S_ISREG(st.st_mode):
        what = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) \
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        errors.append(FileError(rel, None, f"unreadable: {what}, not a regular file; skipped"))
        return
    if st.st_size > max_bytes:
        errors.append(FileError(rel, None, f"skipped: {st.st_size / 1e6:.1f} MB over the --max-file-size "
                                f"limit ({max_bytes / 1e6:g} MB); raise it with --max-file-size MB"))
        return
    candidates.append(Candidate(path, rel, kind, st.st_size, st.st_mtime_ns))


def _first_line(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.readline(200)
    except OSError:
        return b""


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


# -- the memo -----------------------------------------------------------------------------

class WalkMemo:
    """The last walk of one root with one set of filters, as a cache entry (auditor.cache).

    Holds, per directory walked for real and not modified within RACY_NS of that walk,
    ``(st_dev, st_ino, st_mtime_ns, entries, file names, their kinds by suffix, subdirectory
    names, names of subdirectories the built-in list skipped)``; per extension-less file, the kind its first line gave; and the stat of every
    ignore file the filters read (None: absent). ``trusted()`` is False when one of those
    changed."""

    def __init__(self, directory: Path, key: str, started_ns: int):
        from auditor import cache

        self.directory = directory
        self.key = key
        self.name = f"walk-{key}.bin"
        self.trust_before = started_ns - cache.RACY_NS
        self.old_dirs, self.old_sniffed, self.old_ignores = _load_memo(
            cache.read_entry(directory / self.name, "walk", key))

    def trusted(self) -> bool:
        return bool(self.old_dirs) and all(self._stat(path) == sig for path, sig in self.old_ignores.items())

    def forget(self) -> None:
        self.old_dirs = {}  # the sniffed kinds stay: each is valid while its file's stat is

    def _stat(self, path: str):
        try:
            st = os.stat(path)
        except OSError:
            return None
        # too recent to vouch for by stat: a value no later check can equal
        return (st.st_size, st.st_mtime_ns) if st.st_mtime_ns < self.trust_before else False

    def save(self, tree: _Tree, path_filter) -> None:
        from auditor import cache

        dirs, sniffed = ({}, {}) if tree.linked else (tree.dirs, tree.sniffed)
        ignores = dict(self.old_ignores) if tree.reuse else {}
        # An absent .gitignore in a walked directory needs no entry: creating one changes the
        # directory's mtime, and a directory walked for real with a new one stops the memo.
        inside = str(path_filter.root) + os.sep if path_filter else ""
        for path in (path_filter.sources() if path_filter else ()):
            sig = self._stat(path)
            if sig is not None or not (path.startswith(inside) and path.endswith(os.sep + ".gitignore")):
                ignores[path] = sig
        if dirs == self.old_dirs and sniffed == self.old_sniffed and ignores == self.old_ignores:
            return
        doc = {"dirs": dirs, "sniffed": sniffed, "ignores": ignores}  # tuples are written as lists
        cache.write_entry(self.directory, self.name, "walk", self.key,
                          json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii"))


def _load_memo(payload: bytes | None) -> tuple[dict, dict, dict]:
    """(dirs, sniffed, ignores) as WalkMemo.save wrote them; all empty when they do not decode.
    (A record of the right shape but the wrong content only costs a full walk: see walk().)"""
    if payload is None:
        return {}, {}, {}
    try:
        doc = json.loads(payload)
        dirs = {rel: (dev, ino, mtime, int(entries), tuple(files), tuple(kinds), tuple(subdirs), tuple(skipped))
                for rel, (dev, ino, mtime, entries, files, kinds, subdirs, skipped) in doc["dirs"].items()}
        sniffed = {rel: (size, mtime, kind) for rel, (size, mtime, kind) in doc["sniffed"].items()}
        ignores = {path: tuple(sig) if type(sig) is list else sig for path, sig in doc["ignores"].items()}
        if not all(type(rel) is str for rel in dirs):
            raise ValueError("a directory name is not text")
    except Exception:  # noqa: BLE001 - a bad memo is an empty one, whatever it raises
        return {}, {}, {}
    return dirs, sniffed, ignores


def memo_key(root: Path, skip_dirs, path_filter, max_bytes: int, follow_links: bool) -> str:
    from auditor import cache

    filters = None
    if path_filter:
        filters = (path_filter.exclude, path_filter.respect_gitignore, str(path_filter.top))
    return cache.key_of("walk", cache.code_fingerprint(), os.path.realpath(root), sorted(skip_dirs), filters,
                        max_bytes, follow_links)


# -- the walk with the project's filters -----------------------------------------------------

def check_target(path: str | os.PathLike, jobs: int | None = None,
                 max_file_size_mb: float = MAX_FILE_SIZE_MB) -> Path:
    """PATH as a Path, or UsageError for a missing path or a bad numeric option."""
    root = Path(path)
    if not root.exists():
        if root.is_symlink():
            raise UsageError(f"{path}: broken symlink (its target does not exist)")
        raise UsageError(f"{path}: no such file or directory")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, not {jobs}")
    if max_file_size_mb <= 0:
        raise UsageError(f"--max-file-size must be a positive number of MB, not {max_file_size_mb:g}")
    return root


def walk_filtered(root: Path, settings: dict, max_file_size_mb: float, *, exclude=None, extend_exclude=None,
                  respect_gitignore=None, follow_links: bool = False, memo_dir: Path | None = None,
                  started_ns: int | None = None):
    """walk()'s result with the settings' and the CLI's filters, as scan() does it; the
    replay fast path of `qg-audit scan` walks the same way. With MEMO_DIR (the cache
    directory), through the WalkMemo kept there; STARTED_NS is when the scan began."""
    import time

    skip_dirs, path_filter = _walk_filter(root, settings, exclude, extend_exclude, respect_gitignore)
    max_bytes = int(max_file_size_mb * 1e6)
    memo = None
    if memo_dir is not None and root.is_dir():
        memo = WalkMemo(memo_dir, memo_key(root, skip_dirs, path_filter, max_bytes, follow_links),
                        started_ns if started_ns is not None else time.time_ns())
    return walk(root, max_bytes, skip_dirs, path_filter, follow_links=follow_links, memo=memo)


def _globs(value, origin: str) -> list[str]:
    if isinstance(value, str):
        value = [v for v in (p.strip() for p in value.split(",")) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{origin} must be a list of glob strings, got {value!r}")
    return value


def _walk_filter(root: Path, settings: dict, exclude, extend_exclude, respect_gitignore):
    """(skip_dirs, PathFilter) from the settings and the CLI (which wins / adds), as ruff does."""
    from auditor.pathfilter import PathFilter

    origin = "pyproject.toml [tool.qg-audit]"
    skip_dirs = SKIP_DIRS
    globs: list[str] = []
    if exclude is not None:
        skip_dirs, globs = VCS_DIRS, _globs(exclude, "--exclude")
    elif "exclude" in settings:
        skip_dirs, globs = VCS_DIRS, _globs(settings["exclude"], f"{origin} exclude")
    globs += _globs(settings.get("extend-exclude", []), f"{origin} extend-exclude")
    globs += _globs(extend_exclude or [], "--extend-exclude")
    if respect_gitignore is None:
        respect_gitignore = settings.get("respect-gitignore", True)
        if not isinstance(respect_gitignore, bool):
            raise UsageError(f"{origin} respect-gitignore must be true or false, got {respect_gitignore!r}")
    if not root.is_dir():
        return skip_dirs, None
    return skip_dirs, PathFilter(root, globs, respect_gitignore=respect_gitignore) if globs or respect_gitignore else None

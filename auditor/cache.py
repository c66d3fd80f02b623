"""The scan cache: per-file extraction results, and the last report of each command line.

Three kinds of entry live in the cache directory (default ``PATH/.qg-audit_cache/``):

- ``files-<key>.bin``: every walked file's per-file outcome (whatever ``auditor.scan``'s
  parser returns for it: sites, meta, error, and any fact a later layer adds), with the
  file's size, mtime_ns and content digest. ``<key>`` covers qg-audit's version, the
  package's code and catalogue files, the scanned root and the settings that change
  extraction, so a change to any of them starts an empty store. A file whose size and
  mtime match is reused without reading it; one whose mtime changed (a checkout, a touch)
  is read and reused when its digest still matches; anything else is parsed again. The
  flow layer's second pass keeps its per-file facts there too (which of the words it looked
  for a file names, and its parse of the file), valid while the file is as stored, and its
  rounds' result (the words looked for, the files chosen): a round that looks for the same
  words again keeps the choice for the unchanged files. The join and the rules always run
  again over them.
- ``walk-<key>.bin``: the last walk of the root with one set of filters, per directory
  (auditor.walk.WalkMemo): a directory found with the same mtime is not listed again.
- ``replay-<key>.bin``: the last report for one command line (``<key>`` covers the
  arguments, cwd, terminal and environment that shape the output), with the walk's stat
  table it was made from. When the walk finds the same table, ``qg-audit scan`` writes the
  report again without importing the parser, the join or the rules.

Trust (docs/scan.md, "Threat model"): the cache directory usually sits inside the scanned
tree, which may be hostile, and a digest of a file's bytes only proves the file unchanged,
not that qg-audit computed the outcome stored with it. So every entry carries a MAC (keyed
BLAKE2b) over its kind, key, format, version and payload, with a per-user secret kept
outside every project (``$XDG_CACHE_HOME/qg-audit/secret``, or ``~/.cache/qg-audit/secret``,
0600; ``QG_AUDIT_CACHE_SECRET`` supplies one instead, for CI). An entry that a scanned tree
ships, or that another user wrote, fails the MAC and is a miss. Payloads are plain JSON
(auditor's sites rebuilt by this module from checked fields; no pickle, nothing imported,
no constructor named by the data), read only from a regular file that is not a symlink,
opened without blocking, at most MAX_ENTRY_BYTES, nested at most MAX_DEPTH deep: anything
else is a miss, never a crash. A cache directory that is a symlink or that git tracks is
not used at all (one line on stderr says why).

Each entry is written to a temporary file and renamed over the old one, so a reader sees an
old or a new entry, never half of one, and racing scans cannot corrupt each other; the
oldest entries of a kind are pruned past KEEP. Files modified within RACY_NS of a scan are
re-checked by content next time (their mtime alone cannot show a second edit in the same
clock tick).

This module is imported on the fast path: it must stay cheap (standard library only).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from auditor import __version__

try:  # the BLAKE2 module itself: hashlib would load OpenSSL first (~10 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - builds without it
    from hashlib import blake2b
try:
    from _operator import _compare_digest as compare_digest  # what hmac uses, without importing hashlib
except ImportError:  # pragma: no cover
    from hmac import compare_digest

FORMAT = 4  # 4: entries authenticated by a per-user key; JSON payloads (no pickle); the walk memo counts skipped dirs
MAGIC = b"qg-audit cache\n"
DIR_NAME = ".qg-audit_cache"
RACY_NS = 2_000_000_000  # coarse filesystem clocks (FAT: 2 s); finer ones only re-read more
MAX_ENTRY_BYTES = 1 << 30  # an entry file bigger than this is not read (the corpus's store: 10 MB per 110 MB scanned)
MAX_DEPTH = 200  # nesting of a stored value: a deeper outcome is not stored (its file is parsed again)
KEEP = {"replay": 16, "files": 8, "walk": 8}  # newest entries kept per kind: every --files set has its own replay
SECRET_ENV = "QG_AUDIT_CACHE_SECRET"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=16).digest()


def file_digest(path: str) -> bytes | None:
    """The digest of a regular file's bytes; None for anything else (a FIFO is never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return digest(fh.read())
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def key_of(*parts: Any) -> str:
    """A short stable hex key for JSON-able parts (dicts are sorted; other objects by repr)."""
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=True)
    return blake2b(text.encode(), digest_size=12).hexdigest()


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """qg-audit's version plus the content of every source and catalogue file of the package.

    By content, not mtime: a CI job that installs the same qg-audit afresh must find its
    restored cache valid, and an edited extractor or catalogue must not (~0.6 MB, ~2 ms)."""
    return tree_fingerprint(Path(__file__).resolve().parent)


def tree_fingerprint(package: Path) -> str:
    h = blake2b(digest_size=16)
    h.update(f"{__version__}\0{sys.version_info[:2]}\0".encode())
    # followlinks: in a source checkout auditor/rules is a link to the top-level rules/, and an
    # edited rule must not be answered from a cache its old text wrote
    for dirpath, dirnames, filenames in os.walk(package, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".yaml", ".yml", ".toml", ".json")):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, package).encode("utf-8", "surrogateescape") + b"\0")
                h.update(file_digest(path) or b"?")
    return h.hexdigest()


def cache_dir(root: str | os.PathLike, cache_dir_arg: str | None = None, no_cache: bool = False) -> Path | None:
    """Where the cache lives, or None when it is off (--no-cache or QG_AUDIT_NO_CACHE=1), when
    no secret can be had, or when the directory cannot be trusted (a symlink, or tracked by
    git: then one line on stderr says so)."""
    if no_cache or os.environ.get("QG_AUDIT_NO_CACHE", "") not in ("", "0"):
        return None
    chosen = cache_dir_arg or os.environ.get("QG_AUDIT_CACHE_DIR")
    if chosen:
        path = Path(chosen)
    else:
        root = Path(root)
        path = (root if root.is_dir() else root.parent) / DIR_NAME
    why = refused(path)
    if why:
        print(f"qg-audit: cache {_shown(path)}: {why}; scanning without the cache "
              "(remove it, or pass --cache-dir DIR or --no-cache)", file=sys.stderr)
        return None
    if secret() is None:
        return None  # no place for a secret (a read-only home): only speed is lost
    return path


def refused(path: Path) -> str | None:
    """Why the cache directory PATH must not be used, or None."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        return "is a symlink, and the cache is never read or written through a link"
    if st is not None and not stat.S_ISDIR(st.st_mode):
        return None  # not a directory: writing fails later, which only costs speed
    if _tracked(path):
        return "git tracks files in it: a cache that comes with the repository is never used"
    return None


def _tracked(path: Path) -> bool:
    from auditor.gitindex import tracks_under

    return tracks_under(path)


def _shown(path) -> str:
    from auditor.render.safe import one_line

    return one_line(str(path))


# -- the per-user secret ------------------------------------------------------------------

def secret_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "qg-audit"


@lru_cache(maxsize=None)
def secret() -> bytes | None:
    """The key every entry's MAC is made with: QG_AUDIT_CACHE_SECRET when set, else 32 random
    bytes in secret_dir()/secret, created 0600 on first use. None when there is none to have
    (the cache is then off); a secret file that others could have written is not used."""
    given = os.environ.get(SECRET_ENV, "")
    if given:
        return blake2b(given.encode("utf-8", "surrogateescape"), digest_size=32, person=b"qg-audit env").digest()
    directory = secret_dir()
    path = directory / "secret"
    for _ in range(2):
        try:
            return _read_secret(path)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            print(f"qg-audit: cache off: the secret {_shown(path)} {exc}; delete it (a new one is made)",
                  file=sys.stderr)
            return None
        try:
            _make_secret(directory, path)
        except OSError:
            return None
    return None


def _read_secret(path: Path) -> bytes:
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise ValueError("belongs to another user")
        if st.st_mode & 0o077:
            raise ValueError(f"is readable or writable by others (mode {stat.S_IMODE(st.st_mode):o})")
        data = os.read(fd, 64)
    finally:
        os.close(fd)
    if len(data) != 32:
        raise ValueError("is not 32 bytes long")
    return data


def _make_secret(directory: Path, path: Path) -> None:
    import tempfile

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".secret.")  # 0600
    try:
        os.write(fd, os.urandom(32))
        os.fsync(fd)
        os.close(fd)
        try:
            os.link(tmp, path)  # never replaces one another scan made meanwhile
        except FileExistsError:
            pass
    finally:
        _unlink(tmp)


def _mac(kind: str, key: str):
    h = blake2b(key=secret() or b"", digest_size=32, person=b"qg-audit cache")
    h.update(f"{FORMAT}\0{__version__}\0{kind}\0{key}\0".encode("utf-8", "surrogateescape"))
    return h


# -- entries on disk ----------------------------------------------------------------------

def _header(kind: str, key: str, payload: bytes) -> bytes:
    h = _mac(kind, key)
    h.update(payload)
    fields = {"format": FORMAT, "version": __version__, "kind": kind, "key": key,
              "mac": h.hexdigest(), "size": len(payload)}
    return MAGIC + json.dumps(fields, sort_keys=True).encode() + b"\n"


HEADER_MAX = 1024  # bytes of the JSON header line an entry may have


def read_entry(path: Path, kind: str, key: str) -> bytes | None:
    """The payload stored at PATH for (kind, key), or None if absent, foreign, forged or corrupt.

    Only a regular file that is not a symlink is opened (without blocking: a FIFO or a device
    planted there is never waited on), and only one of at most MAX_ENTRY_BYTES is read."""
    if secret() is None:
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            # line by line: the payload is read once, never copied out of the whole file
            if fh.readline(len(MAGIC)) != MAGIC:
                return None
            line = fh.readline(HEADER_MAX)
            payload = fh.read(MAX_ENTRY_BYTES) if line.endswith(b"\n") else b""
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    if not line.endswith(b"\n"):
        return None
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    if not isinstance(fields, dict) or fields.get("format") != FORMAT or fields.get("version") != __version__ \
            or fields.get("kind") != kind or fields.get("key") != key or fields.get("size") != len(payload) \
            or not isinstance(fields.get("mac"), str):
        return None
    h = _mac(kind, key)
    h.update(payload)
    if not compare_digest(fields["mac"], h.hexdigest()):
        return None
    return payload


def write_entry(directory: Path, name: str, kind: str, key: str, payload: bytes) -> bool:
    """Store PAYLOAD as DIRECTORY/NAME atomically; False (and nothing changed) when it cannot."""
    def write(fh) -> None:
        fh.write(_header(kind, key, payload))
        fh.write(payload)

    return _atomic(directory, name, write)


def _atomic(directory: Path, name: str, write) -> bool:
    """WRITE(fh) into a temporary file beside DIRECTORY/NAME, then rename it into place:
    concurrent scans never see half an entry (and the rename replaces a link planted at NAME
    instead of writing through it). False when the directory is not writable."""
    import tempfile

    if secret() is None:
        return False
    try:
        _ensure_dir(directory)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
            os.replace(tmp, directory / name)
        except BaseException:
            _unlink(tmp)
            raise
        _prune(directory, name.split("-", 1)[0])
        return True
    except OSError:
        return False  # a read-only tree: scan on without a cache


def _prune(directory: Path, kind: str) -> None:
    """Keep the KEEP[kind] newest entries of KIND (by mtime: each is rewritten when it changes)."""
    keep = KEEP.get(kind)
    if keep is None:
        return
    entries = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.startswith(kind + "-") and e.name.endswith(".bin"):
                    try:
                        entries.append((e.stat(follow_symlinks=False).st_mtime_ns, e.name))
                    except OSError:
                        pass
    except OSError:
        return
    for _, stale in sorted(entries, reverse=True)[keep:]:
        _unlink(os.path.join(directory, stale))


STREAM_HEADER = 256  # the JSON header of a streamed entry, padded with blanks to this size


class _Hashing:
    """A file writer that also MACs and counts what goes through it."""

    def __init__(self, fh, h):
        self.fh = fh
        self.hash = h
        self.size = 0

    def write(self, data) -> int:
        self.hash.update(data)
        self.size += len(data)
        return self.fh.write(data)


def stream_entry(directory: Path, name: str, kind: str, key: str, parts) -> bool:
    """write_entry(..., b"".join(PARTS)) without the payload ever whole in memory (the store
    is the largest entry a scan writes): written straight into the temporary file, its MAC
    and size put into the header's blank space afterwards."""
    def write(fh) -> None:
        fh.write(MAGIC + b" " * STREAM_HEADER + b"\n")
        out = _Hashing(fh, _mac(kind, key))
        for part in parts:
            out.write(part)
        fields = {"format": FORMAT, "version": __version__, "kind": kind, "key": key,
                  "mac": out.hash.hexdigest(), "size": out.size}
        head = json.dumps(fields, sort_keys=True).encode()
        if len(head) > STREAM_HEADER:
            raise OSError("cache entry header too long")
        fh.seek(len(MAGIC))
        fh.write(head)

    return _atomic(directory, name, write)


def _ensure_dir(directory: Path) -> None:
    import tempfile

    directory.mkdir(parents=True, exist_ok=True)
    if stat.S_ISLNK(os.lstat(directory).st_mode):
        raise OSError("the cache directory is a symlink")  # made one since cache_dir() looked
    ignore = directory / ".gitignore"
    if not os.path.lexists(ignore):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gitignore.", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write("# Created by qg-audit: the scan cache, never committed.\n*\n")
        os.replace(tmp, ignore)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# -- plain data ---------------------------------------------------------------------------
#
# What a stored value may hold beyond JSON (literal values from ast.literal_eval, YAML,
# TOML): tuples, sets, frozensets, bytes, complex numbers, Ellipsis, NotImplemented, and
# dicts with keys other than strings. Each is written as {TAG: code, "v": ...}; a dict that
# itself has the key TAG (a NUL character, which no real key holds) is written as code "d".

TAG = "\0"
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Unstorable(Exception):
    """A value this format does not hold (an unknown type, or nested deeper than MAX_DEPTH)."""


def to_plain(obj: Any, depth: int = 0) -> Any:
    t = type(obj)
    if t in _SCALARS:
        return obj
    if depth >= MAX_DEPTH:
        raise _Unstorable("nested too deeply")
    depth += 1
    if t is dict:
        out = {}
        for k, v in obj.items():
            if type(k) is not str or k == TAG:
                return {TAG: "d", "v": [[to_plain(k, depth), to_plain(v, depth)] for k, v in obj.items()]}
            out[k] = v if type(v) in _SCALARS else to_plain(v, depth)
        return out
    if t is list:
        return [v if type(v) in _SCALARS else to_plain(v, depth) for v in obj]
    if t is tuple:
        return {TAG: "t", "v": [to_plain(v, depth) for v in obj]}
    if t is set or t is frozenset:
        return {TAG: "s" if t is set else "f", "v": [to_plain(v, depth) for v in obj]}
    if t is bytes:
        return {TAG: "b", "v": obj.hex()}
    if t is complex:
        return {TAG: "c", "v": [obj.real, obj.imag]}
    if obj is Ellipsis:
        return {TAG: "e"}
    if obj is NotImplemented:
        return {TAG: "n"}
    raise _Unstorable(f"{t.__name__} is not stored")


def _untag(d: dict) -> Any:
    code = d.get(TAG)
    if code is None:
        return d
    v = d.get("v")
    if code == "t":
        return tuple(_list(v))
    if code == "d":
        return {k: val for k, val in _list(v)}
    if code == "s":
        return set(_list(v))
    if code == "f":
        return frozenset(_list(v))
    if code == "b":
        return bytes.fromhex(v)
    if code == "c":
        re_, im = _list(v)
        return complex(float(re_), float(im))
    if code == "e":
        return ...
    if code == "n":
        return NotImplemented
    raise ValueError(f"unknown tag {code!r}")


def _list(v) -> list:
    if type(v) is not list:
        raise ValueError("a tagged value without its list")
    return v


def dumps(obj: Any) -> bytes:
    """OBJ as ASCII JSON bytes (to_plain's tags for what JSON lacks); _Unstorable if it cannot."""
    return json.dumps(to_plain(obj), ensure_ascii=True, separators=(",", ":")).encode("ascii")


def loads(blob: bytes) -> Any:
    """What dumps() wrote. Raises ValueError (or RecursionError, TypeError) on anything else:
    callers treat every exception as a miss."""
    if b"\\u0000" in blob:  # a tag (or a NUL in a string): only then the slower hook
        return json.loads(blob, object_hook=_untag)
    return json.loads(blob)


# -- the per-file store -------------------------------------------------------------------

class FileStore:
    """Per-file outcomes of one (code, root, settings) key, loaded once, saved once per scan.

    ``get(cand)`` returns a stored outcome valid for the file as it is now, or None;
    ``put(cand, digest, outcome)`` records a fresh one; ``save()`` writes the store with
    the entries of this scan's files only (deleted and renamed files drop out).

    The flow layer's second pass (auditor.scan._flow_pass) keeps two more facts per file,
    valid while the file's content is as stored: which of the words it looked for the file
    contains (``words_in`` / ``put_words``), and the outcome of its full parse of the file
    (``flow_outcome`` / ``put_flow``). Both are functions of the file's bytes alone. It also
    keeps each of its rounds' result (``last_round`` / ``put_round``): the words looked for
    and the files chosen, which holds for every file found as stored when the words are the
    same again (a rescan then looks only at the changed files)."""

    def __init__(self, directory: Path, key: str, started_ns: int):
        self.directory = directory
        self.key = key
        self.name = f"files-{key}.bin"
        self.started_ns = started_ns
        payload = read_entry(directory / self.name, "files", key)
        self.old, self.old_words, self.old_flow, self.old_rounds = _load_store(payload)
        self.new: dict = {}
        self.words: dict = {}
        self.flow: dict = {}
        self.rounds: list[tuple[tuple, tuple, tuple]] = []
        self.same: set[str] = set()  # files found as stored in this scan: their flow facts hold
        self._interned: dict[frozenset, frozenset] = {}
        self.changed = not self.old

    def get(self, cand) -> Any | None:
        entry = self.old.get(cand.rel)
        if entry is None:
            return None
        try:
            size, mtime_ns, dig, racy, blob = entry
        except (TypeError, ValueError):
            return None
        if size != cand.size:
            return None
        if mtime_ns != cand.mtime_ns or racy:
            if (file_digest(cand.path) or b"").hex() != dig:
                return None
            self.changed = True  # same content under a new stat: store the new stat
        outcome = _decode(cand.rel, blob)
        if outcome is None:
            return None
        self._keep(cand, dig, blob)
        self.same.add(cand.rel)
        return outcome

    def lookup(self, cands) -> tuple[list, list]:
        """(get()'s outcome of each of CANDS that has one, the candidates that have none).

        get() over a whole walk, with the common case inline: an old file whose size and
        mtime match keeps its entry as it is (most of them: skipped files, stored as None)."""
        hits: list = []
        todo: list = []
        old, new, same = self.old, self.new, self.same
        recent = self.started_ns - RACY_NS
        for c in cands:
            rel = c.rel
            entry = old.get(rel)
            if type(entry) is tuple and len(entry) == 5 and entry[0] == c.size and entry[1] == c.mtime_ns \
                    and entry[3] is False and c.mtime_ns < recent:
                outcome = _decode(rel, entry[4])
                if outcome is not None:
                    new[rel] = entry
                    same.add(rel)
                    hits.append(outcome)
                    continue
                todo.append(c)
                continue
            outcome = self.get(c) if entry is not None else None
            if outcome is None:
                todo.append(c)
            else:
                hits.append(outcome)
        return hits, todo

    def put(self, cand, dig: bytes | None, outcome: Any) -> None:
        self.changed = True
        blob = _encode(outcome)
        if dig is not None and blob is not False:  # no digest: unreadable, parsed again next time
            self._keep(cand, dig.hex(), blob)

    def _keep(self, cand, dig: str, blob) -> None:
        racy = cand.mtime_ns >= self.started_ns - RACY_NS
        self.new[cand.rel] = (cand.size, cand.mtime_ns, dig, racy, blob)

    def words_in(self, rel: str) -> tuple[frozenset, frozenset] | None:
        """(words looked for, words found) in REL's present content, or None if not known."""
        rec = self.words.get(rel)
        if rec is None and rel in self.same:
            rec = self.old_words.get(rel)
            if not (isinstance(rec, tuple) and len(rec) == 2 and all(isinstance(w, frozenset) for w in rec)):
                return None
            self.words[rel] = rec
        return rec

    def put_words(self, rel: str, tested: frozenset, found: frozenset) -> None:
        # Most files were looked at for the same words and contain none of them: one shared
        # set each, which the store writes once.
        intern = self._interned.setdefault
        self.words[rel] = (intern(tested, tested), intern(found, found))
        self.changed = True

    def flow_outcome(self, rel: str) -> Any | None:
        blob = self.flow.get(rel)
        if blob is None and rel in self.same:
            blob = self.old_flow.get(rel)
            if blob is None:
                return None
            self.flow[rel] = blob
        return _decode(rel, blob) if blob is not None else None

    def put_flow(self, rel: str, outcome: Any) -> None:
        blob = _encode(outcome)
        if blob is not False:
            self.flow[rel] = blob
            self.changed = True

    def unchanged(self, count: int) -> bool:
        """Is every one of this scan's COUNT files found as stored, and no other file was stored?
        (Then every cross-file input of the flow pass is as the last scan left it.)"""
        return bool(self.old) and len(self.same) == count == len(self.old)

    def last_round(self, index: int) -> tuple[frozenset, frozenset, frozenset] | None:
        """(helper words, key words, chosen files) of the last scan's round INDEX, if it ran."""
        if index >= len(self.old_rounds):
            return None
        helpers, keys, chosen = self.old_rounds[index]
        return frozenset(helpers), frozenset(keys), frozenset(chosen)

    def put_round(self, helpers, keys, chosen) -> None:
        self.rounds.append((tuple(sorted(helpers)), tuple(sorted(keys)), tuple(sorted(chosen))))

    def save(self) -> None:
        """Write the store (when anything changed), then let go of the stored bytes: after
        this only the entries' size, mtime_ns and digest are kept (the replay record's check
        of recent files reads them), which frees ~10 MB per 100 MB scanned for the join."""
        # A file found as stored keeps its word record even when this scan did not look at it
        # (the flow pass reused its rounds): the record still describes the file's bytes.
        old_words, same = self.old_words, self.same
        words = {rel: w for rel in self.new
                 if (w := self.words.get(rel)) is not None or (rel in same and (w := old_words.get(rel)) is not None)}
        flow = {rel: o for rel, o in self.flow.items() if rel in self.new}
        try:
            if self.changed or self.new.keys() != self.old.keys() or words.keys() != self.old_words.keys() \
                    or flow.keys() != self.old_flow.keys() or self.rounds != self.old_rounds:
                try:
                    stream_entry(self.directory, self.name, "files", self.key,
                                 _store_parts(self.new, words, flow, self.rounds))
                except Exception:  # noqa: BLE001 - a bug (an unstorable entry): no store this time
                    return
        finally:
            self.new = {rel: entry[:4] for rel, entry in self.new.items()}
            self.old, self.old_words, self.old_flow, self.words, self.flow = {}, {}, {}, {}, {}


def _valid_rounds(rounds) -> bool:
    return isinstance(rounds, list) and all(
        isinstance(r, tuple) and len(r) == 3 and all(isinstance(part, tuple) and all(isinstance(w, str) for w in part)
                                                     for part in r) for r in rounds)


# The store's payload: one JSON line, the index, then the outcomes' JSON texts back to back.
#   {"files": [[rel, size, mtime_ns, digest hex, racy, offset, length, tested, found], ...],
#    "sets": [[word, ...], ...], "flow": [[rel, offset, length], ...],
#    "rounds": [[helpers, keys, chosen], ...]}
# offset -1: a skipped file's outcome; tested / found: the file's word record (the words
# looked for, those found) as indexes into "sets", -1 when it has none.
# Each outcome is stored on its own, so that saving the store after a one-edit rescan writes
# the other files' bytes as they were loaded instead of encoding every outcome again (and
# loading slices bytes: an outcome is decoded when its file is found unchanged). Most
# files' outcome is "skipped by the prefilter": stored as offset -1.

def _store_parts(entries: dict, words: dict, flow: dict, rounds: list):
    blobs: list[bytes] = []
    at = 0

    def place(blob) -> tuple[int, int]:
        nonlocal at
        if blob is None:
            return -1, 0
        blobs.append(blob)
        at += len(blob)
        return at - len(blob), len(blob)

    sets: dict[frozenset, int] = {}
    nothing = (None, None)

    def word_ids(rel) -> tuple[int, int]:
        tested, found = words.get(rel, nothing)
        if tested is None:
            return -1, -1
        return sets.setdefault(tested, len(sets)), sets.setdefault(found, len(sets))

    files = [[rel, size, mtime, dig, racy, *place(blob), *word_ids(rel)]
             for rel, (size, mtime, dig, racy, blob) in entries.items()]
    flow_rows = [[rel, *place(blob)] for rel, blob in flow.items()]
    # the words are bytes (the second pass looks for them in files' bytes): stored as text
    index = {"files": files, "sets": [sorted(w.decode("utf-8", "surrogateescape") for w in s) for s in sets],
             "flow": flow_rows,
             "rounds": [list(map(list, r)) for r in rounds]}
    yield json.dumps(index, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"
    yield from blobs


def _load_store(payload: bytes | None) -> tuple[dict, dict, dict, list]:
    """(entries, words, flow, rounds) from a store payload; all empty when it does not decode."""
    if payload is None:
        return {}, {}, {}, []
    try:
        cut = payload.index(b"\n")
        index = json.loads(payload[:cut])
        area = payload[cut + 1:]
        size = len(area)

        def blob(off, length):
            if off == -1:
                return None
            if type(off) is not int or type(length) is not int or off < 0 or length < 0 or off + length > size:
                raise ValueError("an outcome outside the store")
            return area[off:off + length]

        rows = index["files"]
        entries = {rel: (size_, mtime, dig, racy, blob(off, length)) for rel, size_, mtime, dig, racy, off, length, _, _
                   in rows}
        sets = [frozenset(w.encode("utf-8", "surrogateescape") for w in s) for s in index["sets"]]
        words = {row[0]: (sets[row[7]], sets[row[8]]) for row in rows if row[7] >= 0 and row[8] >= 0}
        flow = {rel: blob(off, length) for rel, off, length in index["flow"]}
        rounds = [tuple(tuple(part) for part in r) for r in index["rounds"]]
        if not (all(type(rel) is str for rel in entries) and all(type(rel) is str for rel in flow)
                and _valid_rounds(rounds)):
            raise ValueError("a stored name is not text")
    except Exception:  # noqa: BLE001 - a bad store is an empty one, whatever it raises
        return {}, {}, {}, []
    return entries, words, flow, rounds


def _site_fields() -> tuple[str, ...]:
    import dataclasses

    from auditor.model import Site

    return tuple(f.name for f in dataclasses.fields(Site))


_SITE_FIELDS: tuple[str, ...] = ()
_SITE_TYPES = {"role": str, "file": str, "line": int, "column": int, "key": str, "source": str, "kind": str,
               "detail": dict, "match": str}


def _encode(outcome) -> bytes | None | bool:
    """OUTCOME's stored form: None for a skipped file's, else its JSON; False if it cannot be stored."""
    global _SITE_FIELDS
    if type(outcome) is tuple and len(outcome) == 5 and outcome[1] == [] and outcome[2] is None \
            and outcome[3] is None and outcome[4] is False:
        return None
    try:
        rel, sites, meta, error, parsed = outcome
        fields = _SITE_FIELDS or _site_fields()
        _SITE_FIELDS = fields
        doc = [rel, [[getattr(s, f) for f in fields] for s in sites], meta,
               None if error is None else [error.file, error.line, error.message], parsed]
        return dumps(doc)
    except Exception:  # noqa: BLE001 - an unstorable outcome (a bug, or nested too deep): parsed again
        return False


def _decode(rel: str, blob) -> Any | None:
    """The outcome stored as BLOB for the file REL, rebuilt from checked plain data; None
    (a miss) for anything else."""
    if blob is None:
        return (rel, [], None, None, False)
    if type(blob) is not bytes:
        return None
    try:
        return _outcome(rel, loads(blob))
    except Exception:  # noqa: BLE001 - a bad outcome is a miss, whatever it raises (RecursionError too)
        return None


def _outcome(rel: str, doc) -> tuple | None:
    global _SITE_FIELDS
    from auditor.model import FileError, Site

    if type(doc) is not list or len(doc) != 5:
        return None
    rel_, rows, meta, error, parsed = doc
    if rel_ != rel or type(rows) is not list or type(parsed) is not bool or not (meta is None or type(meta) is dict):
        return None
    fields = _SITE_FIELDS or _site_fields()
    _SITE_FIELDS = fields
    width = len(fields)
    types = [_SITE_TYPES.get(f) for f in fields]
    sites = []
    for row in rows:
        if type(row) is not list or len(row) != width:
            return None
        for value, want in zip(row, types):
            if want is not None and type(value) is not want:
                return None
        sites.append(Site(*row))
    if error is not None:
        if not (type(error) is list and len(error) == 3 and type(error[0]) is str and type(error[2]) is str
                and (error[1] is None or type(error[1]) is int)):
            return None
        error = FileError(*error)
    return rel, sites, meta, error, parsed


# -- the replay record --------------------------------------------------------------------

def stat_table(candidates, walk_errors, started_ns: int, skipped=(), index_state=None) -> tuple[str, list[tuple[str, str]]]:
    """(digest of the walk's result, [(path, rel) of files too recent to trust by stat])."""
    from array import array

    recent = started_ns - RACY_NS
    racy = [(c.path, c.rel) for c in candidates if c.mtime_ns >= recent]
    # Column by column (a C-level join each, ~4x cheaper than a string per file). NUL never
    # occurs in a path or a kind, the count comes first and the numbers are fixed-width: no
    # two different walks give the same bytes.
    h = blake2b(digest_size=20)
    h.update(b"%d\0" % len(candidates))
    h.update("\0".join([c.rel for c in candidates]).encode("utf-8", "surrogateescape") + b"\0\0")
    h.update("\0".join([c.kind for c in candidates]).encode() + b"\0\0")
    h.update(array("q", [n for c in candidates for n in (c.size, c.mtime_ns)]).tobytes())
    h.update("".join([f"E\0{e.file}\0{e.line}\0{e.message}\0\0" for e in walk_errors]).encode("utf-8", "surrogateescape"))
    h.update(("S\0" + "\0".join(skipped) + f"\0{index_state}").encode("utf-8", "surrogateescape"))
    return h.hexdigest(), racy


def input_state(paths) -> list:
    """(path, digest or None) for each extra file a report depends on (pyproject, baseline)."""
    return [(str(p), (file_digest(str(p)) or b"").hex() if os.path.isfile(p) else None) for p in paths]

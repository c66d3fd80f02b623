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

Safety: each entry is written to a temporary file and renamed over the old one, so a
reader sees an old or a new entry, never half of one, and racing scans cannot corrupt
each other. An entry is trusted only when its header names this format, this qg-audit
version and the expected key, and its checksum matches; it is then unpickled with an
unpickler that builds only plain containers and auditor's own dataclasses, so a crafted
cache directory (shipped in a scanned repository, say) cannot run code. Anything else is
ignored as if absent. Files modified within RACY_NS of a scan are re-checked by content
next time (their mtime alone cannot show a second edit in the same clock tick).

This module is imported on the fast path: it must stay cheap (standard library only).
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from auditor import __version__

try:  # the BLAKE2 module itself: hashlib would load OpenSSL first (~10 ms of start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - builds without it
    from hashlib import blake2b

FORMAT = 3  # 3: the store holds the flow pass's rounds (words looked for, files chosen) too
MAGIC = b"qg-audit cache\n"
DIR_NAME = ".qg-audit_cache"
RACY_NS = 2_000_000_000  # coarse filesystem clocks (FAT: 2 s); finer ones only re-read more
PICKLE_PROTOCOL = 5
# What literal values (ast.literal_eval, YAML) hold besides containers and scalars.
_SAFE_BUILTINS = {"set": set, "frozenset": frozenset, "complex": complex, "bytearray": bytearray,
                  "slice": slice, "range": range, "Ellipsis": Ellipsis, "NotImplemented": NotImplemented}


def digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=16).digest()


def file_digest(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return digest(fh.read())
    except OSError:
        return None


def key_of(*parts: Any) -> str:
    """A short stable hex key for JSON-able parts (dicts are sorted; other objects by repr)."""
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=True)
    return blake2b(text.encode(), digest_size=12).hexdigest()


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """qg-audit's version plus the content of every source and catalogue file of the package.

    By content, not mtime: a CI job that installs the same qg-audit afresh must find its
    restored cache valid, and an edited extractor or catalogue must not (~0.6 MB, ~2 ms)."""
    package = Path(__file__).resolve().parent
    h = blake2b(digest_size=16)
    h.update(f"{__version__}\0{sys.version_info[:2]}\0".encode())
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".yaml", ".yml", ".toml", ".json")):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, package).encode("utf-8", "surrogateescape") + b"\0")
                h.update(file_digest(path) or b"?")
    return h.hexdigest()


def cache_dir(root: str | os.PathLike, cache_dir_arg: str | None = None, no_cache: bool = False) -> Path | None:
    """Where the cache lives, or None when it is off (--no-cache or QG_AUDIT_NO_CACHE=1)."""
    if no_cache or os.environ.get("QG_AUDIT_NO_CACHE", "") not in ("", "0"):
        return None
    chosen = cache_dir_arg or os.environ.get("QG_AUDIT_CACHE_DIR")
    if chosen:
        return Path(chosen)
    root = Path(root)
    return (root if root.is_dir() else root.parent) / DIR_NAME


# -- entries on disk ----------------------------------------------------------------------

def dump_objects(obj: Any) -> bytes:
    import pickle

    return pickle.dumps(obj, protocol=PICKLE_PROTOCOL)


def load_objects(payload: bytes) -> Any | None:
    """What dump_objects stored, built by an unpickler that refuses every global but
    auditor's own dataclasses and enums and a few builtin types; None when it cannot."""
    import io

    try:
        return _safe_unpickler()(io.BytesIO(payload)).load()
    except Exception:  # noqa: BLE001 - a bad entry is a cache miss, whatever it raises
        return None


@lru_cache(maxsize=None)
def _safe_unpickler() -> type:
    # one class for the process: the store decodes each parsed file's outcome on its own
    import dataclasses
    import enum
    import pickle

    class SafeUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str):
            if module == "builtins" and name in _SAFE_BUILTINS:
                return _SAFE_BUILTINS[name]
            if module == "auditor" or module.startswith("auditor."):
                mod = sys.modules.get(module)
                if mod is None:
                    import importlib

                    mod = importlib.import_module(module)
                obj = getattr(mod, name, None)
                # Plain data only: building one must run no code of ours beyond the fields.
                # (Unpickling sets a dataclass's __dict__ directly: __init__ and __post_init__
                # never run; a __setstate__ would, so such classes are refused.)
                if isinstance(obj, type) and issubclass(obj, enum.Enum):
                    return obj
                if isinstance(obj, type) and dataclasses.is_dataclass(obj) and not hasattr(obj, "__setstate__"):
                    return obj
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a cache entry")

    return SafeUnpickler


def _header(kind: str, key: str, payload: bytes) -> bytes:
    fields = {"format": FORMAT, "version": __version__, "kind": kind, "key": key,
              "sha": blake2b(payload, digest_size=32).hexdigest(), "size": len(payload)}
    return MAGIC + json.dumps(fields, sort_keys=True).encode() + b"\n"


HEADER_MAX = 1024  # bytes of the JSON header line an entry may have


def read_entry(path: Path, kind: str, key: str) -> bytes | None:
    """The payload stored at PATH for (kind, key), or None if absent, foreign or corrupt."""
    try:
        with open(path, "rb") as fh:
            # line by line: the payload is read once, never copied out of the whole file
            if fh.readline(len(MAGIC)) != MAGIC:
                return None
            line = fh.readline(HEADER_MAX)
            payload = fh.read() if line.endswith(b"\n") else b""
    except OSError:
        return None
    if not line.endswith(b"\n"):
        return None
    try:
        fields = json.loads(line)
    except ValueError:
        return None
    if not isinstance(fields, dict) or fields.get("format") != FORMAT or fields.get("version") != __version__ \
            or fields.get("kind") != kind or fields.get("key") != key or fields.get("size") != len(payload) \
            or fields.get("sha") != blake2b(payload, digest_size=32).hexdigest():
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
    concurrent scans never see half an entry. False when the directory is not writable."""
    import tempfile

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
        return True
    except OSError:
        return False  # a read-only tree: scan on without a cache


STREAM_HEADER = 256  # the JSON header of a streamed entry, padded with blanks to this size


class _Hashing:
    """A file writer that also hashes and counts what goes through it."""

    def __init__(self, fh):
        self.fh = fh
        self.hash = blake2b(digest_size=32)
        self.size = 0

    def write(self, data) -> int:
        self.hash.update(data)
        self.size += len(data)
        return self.fh.write(data)


def dump_entry(directory: Path, name: str, kind: str, key: str, obj: Any) -> bool:
    """write_entry(..., dump_objects(OBJ)) without the pickle ever whole in memory (the
    store is the largest object a scan writes): pickled straight into the temporary file,
    its checksum and size written into the header's blank space afterwards."""
    import pickle

    def write(fh) -> None:
        fh.write(MAGIC + b" " * STREAM_HEADER + b"\n")
        out = _Hashing(fh)
        pickle.dump(obj, out, protocol=PICKLE_PROTOCOL)
        fields = {"format": FORMAT, "version": __version__, "kind": kind, "key": key,
                  "sha": out.hash.hexdigest(), "size": out.size}
        head = json.dumps(fields, sort_keys=True).encode()
        if len(head) > STREAM_HEADER:
            raise OSError("cache entry header too long")
        fh.seek(len(MAGIC))
        fh.write(head)

    return _atomic(directory, name, write)


def _ensure_dir(directory: Path) -> None:
    import tempfile

    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gitignore.", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write("# Created by qg-audit: the scan cache, never committed.\n*\n")
        os.replace(tmp, ignore)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
        loaded = load_objects(payload) if payload is not None else None
        if not (isinstance(loaded, tuple) and len(loaded) == 4 and all(isinstance(d, dict) for d in loaded[:3])
                and _valid_rounds(loaded[3])):
            loaded = ({}, {}, {}, [])
        self.old, self.old_words, self.old_flow, self.old_rounds = loaded
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
            if file_digest(cand.path) != dig:
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
            self._keep(cand, dig, blob)

    def _keep(self, cand, dig: bytes, blob) -> None:
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
        # set each, which pickle then stores once.
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
                    dump_entry(self.directory, self.name, "files", self.key, (self.new, words, flow, self.rounds))
                except Exception:  # noqa: BLE001 - a bug (an unpicklable entry): no store this time
                    return
        finally:
            self.new = {rel: entry[:4] for rel, entry in self.new.items()}
            self.old, self.old_words, self.old_flow, self.words, self.flow = {}, {}, {}, {}, {}


def _valid_rounds(rounds) -> bool:
    return isinstance(rounds, list) and all(
        isinstance(r, tuple) and len(r) == 3 and all(isinstance(part, tuple) and all(isinstance(w, str) for w in part)
                                                     for part in r) for r in rounds)


# Each outcome is stored pickled on its own, so that saving the store after a one-file edit
# writes the other files' bytes as they were loaded instead of pickling every outcome again
# (and loading builds only the entries' bytes, each outcome decoded when its file is found
# unchanged). Most files' outcome is "skipped by the prefilter": stored as None.

def _encode(outcome) -> bytes | None | bool:
    """OUTCOME's stored form: None for a skipped file's, else its pickle; False if unpicklable."""
    if type(outcome) is tuple and len(outcome) == 5 and outcome[1] == [] and outcome[2] is None \
            and outcome[3] is None and outcome[4] is False:
        return None
    try:
        return dump_objects(outcome)
    except Exception:  # noqa: BLE001 - an unpicklable outcome (a bug): that file is parsed again
        return False


def _decode(rel: str, blob) -> Any | None:
    if blob is None:
        return (rel, [], None, None, False)
    if type(blob) is not bytes:
        return None
    outcome = load_objects(blob)
    return outcome if type(outcome) is tuple and len(outcome) == 5 and outcome[0] == rel else None


# -- the replay record --------------------------------------------------------------------

def stat_table(candidates, walk_errors, started_ns: int) -> tuple[str, list[tuple[str, str]]]:
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
    return h.hexdigest(), racy


def input_state(paths) -> list:
    """(path, digest or None) for each extra file a report depends on (pyproject, baseline)."""
    return [(str(p), (file_digest(str(p)) or b"").hex() if os.path.isfile(p) else None) for p in paths]

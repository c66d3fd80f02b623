"""The scan pipeline: walk -> prefilter -> parse in parallel -> sites, per-file meta, errors.

    result = auditor.scan.scan("path/to/project")   # a ScanResult with sites, meta, errors
    auditor.join.join(result)                        # fills result.knobs

Nothing here imports or executes scanned code: files are read as bytes, decoded as UTF-8
and handed to the extractor of their kind (auditor.extract). One bad file never hides the
others: every unreadable, undecodable, unparsable or oversized file becomes exactly one
FileError and the scan goes on; an extractor crash (a bug) on one file is one error too.

Why it is shaped like this (measured, see issue 2 and bench/README.md): most files of a
real project mention no parallelism knob, and plain ``bytes in`` checks skip them at
~100 MB/s, far cheaper than parsing; the files left are parsed in a process pool.
"""

from __future__ import annotations

import gc
import operator
import os
import re
import sys
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Callable

# catalogue, vocab (PyYAML) and the process pool are imported where used: the replay fast
# path of `qg-audit scan` (auditor.commands.scan) walks the tree with auditor.walk alone.
from auditor.exitcodes import UsageError
from auditor.extract import ParseError, extractor
from auditor.extract.shell_shards import CONFIG_HANDED_HINT, SHARD_HINT
from auditor.extract import tool_threads
from auditor.keys import fed_field, one_typo
from auditor.model import FileError, ScanResult
from auditor.walk import (  # noqa: F401 - scan's API
    MAX_FILE_SIZE_MB, SKIP_DIRS, VCS_DIRS, Candidate, check_target, walk, walk_filtered)

# [tool.qg-audit] keys the scanner owns (auditor.lint.config accepts them as known keys)
SETTINGS_KEYS = ("exclude", "extend-exclude", "respect-gitignore")
GATED = {"gated": True}  # the meta of a .py file the code gates kept from the visitor (syntax checked)
FIRST_BLOCK = 8192  # bytes read first: a NUL in them marks a binary file, and the rest is never read
SERIAL_BELOW = 48  # files to parse: below this a process pool costs more than it saves
CHUNK_FILES = 24  # files per pool task: small enough to balance, big enough to amortise IPC
# Sites kept per file. Past this a file is generated data, not a configuration someone edits
# (the corpus's largest has 340): its first MAX_SITES_PER_FILE sites are kept and one error
# line says how many there were, so a 4 MB YAML of 100k knob keys cannot make the join, the
# rules and the report grow with it (the text table of 100k knobs alone took ~2 minutes).
MAX_SITES_PER_FILE = 2000
# Consumer leaves too generic to prefilter on alone ("init", "remote") are matched with their
# parent module instead ("ray.init"). A file calling them with a knob also names the knob.
# `optimize` (litdata's) is a substring of `optimizer`, in most training files of a tree.
GENERIC_LEAVES = frozenset({"init", "remote", "options", "make", "wrap", "spawn", "run", "start", "optimize"})


# -- prefilter keywords -------------------------------------------------------------------

@lru_cache(maxsize=None)
def consumer_keywords() -> tuple[str, ...]:
    """Names of the parallel backends in rules/consumers.yaml (case-sensitive: DataLoader), and
    of the launchers in rules/workers.yaml."""
    from auditor import catalogue

    data = catalogue.data("consumers.yaml")
    words: set[str] = set()
    for entry in data.get("consumers", []):
        if entry.get("methods"):  # `ds.map(f, num_proc=8)`: matched by its keyword, not by `map`
            words.add(str(entry["when_keyword"]))
            continue
        for name in [entry.get("backend", ""), *entry.get("names", [])]:
            parts = [p for p in name.split(".") if p]
            if not parts or not parts[-1].isidentifier():
                continue
            leaf = parts[-1]
            if leaf not in GENERIC_LEAVES:
                words.add(leaf)
            elif len(parts) >= 2 and parts[-2].isidentifier():
                words.add(f"{parts[-2]}.{leaf}")  # ray.init
            else:
                words.add(f".{leaf}(")  # ray.remote(...).options -> any ".options(" call
    # a file that adds a library's flags, reads one, or calls a reader (whole: `initialize`
    # alone is in every other file)
    for entry in data.get("flag_adders", []):
        words |= {str(entry["call"]).rsplit(".", 1)[-1], *map(str, entry.get("flags", ())),
                  *(str(r["call"]) for r in entry.get("read_by", ()))}
    # launchers a program may start from code (torchrun): rules/workers.yaml names them
    for rule in catalogue.data("workers.yaml").get("rules", []):
        words.update(rule.get("keywords", ()))
    return tuple(sorted(words))


def minimal(words) -> list[str]:
    """Drop every word that contains a shorter kept word: 'workers' makes 'num_workers' redundant."""
    kept: list[str] = []
    for w in sorted(set(words), key=len):
        if not any(k in w for k in kept):
            kept.append(w)
    return kept


# Look-alike stems the vocabulary's "near" patterns catch (thread_count, worker_num): a file
# holding only a misspelt knob must still be parsed, or the misspelling is never reported.
# a key of a config file, as the first token of a line (`  context_parallel_size: 2`, `- num_envs=8`)
_CONFIG_KEY = re.compile(rb"^[ \t-]*([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)[ \t]*[:=]", re.M)
TYPO_WORD_MIN = 7  # a word this long one edit from a knob word is a typo of it (parapllel, wokrers)

NEAR_STEMS = ("worker_num", "worker_count", "thread_num", "thread_count", "proc_num", "process_num",
              "process_count", "num_thread", "num_proc", "n_thread", "n_worker")


# Lower-case and turn '-' into '_' in one pass: ``--num-workers``, ``NUM_WORKERS`` and
# ``num_workers`` then all read ``__num_workers`` / ``num_workers``, so one keyword covers them.
_FOLD = bytes.maketrans(bytes(range(65, 91)) + b"-", bytes(range(97, 123)) + b"_")


class Prefilter:
    """Is a file worth parsing? Plain ``bytes in`` checks, no regex on the common path.

    The file is case- and hyphen-folded once (``_FOLD``). Keywords with an underscore
    (``num_workers``, ``_parallel_size``, look-alike singulars like ``num_worker``) are
    distinctive: one hit keeps the file. Single English words that are also knob or backend
    names (``parallel``, ``processes``, ``Pool``, ``Process``) occur everywhere
    (``DataParallel``, ``MaxPool2d``, "processes" in prose), so a hit on one of them is
    confirmed with a whole-word regex, run only on the few files that contain the word.
    Backend names are matched case-sensitively, and a one-word one only when called: ``Pool(``.

    A Python file that passes is checked again by ``in_code`` (see the code gates below),
    unless ``gates`` is False (bench/check_gates.py compares both ways).
    """

    def __init__(self, vocab, gates: bool = True):
        words: set[str] = set()
        for name in vocab.names | {e.lower() for e in vocab.env_vars}:
            words.add(name)
            if name.endswith("s") and "_" in name:  # num_worker, n_env: look-alike singulars
                words.add(name[:-1])
        words |= {pattern.replace("*", "") for pattern in vocab.patterns}  # "*_workers" -> "_workers"
        words |= set(NEAR_STEMS)
        # switches with an underscore (multi_gpu, local_mode); a one-word switch (distributed,
        # vectorize) would keep most files of a tree: such a file is parsed for its other words
        words |= {name for name in vocab.switches if "_" in name}
        words = {w.replace("-", "_") for w in words if w}
        specific = [w for w in words if "_" in w]
        generic = sorted(w for w in words if "_" not in w)
        self.specific = [w.encode() for w in minimal(specific)]
        self.generic = [(w.encode(), re.compile(rb"(?<![a-z0-9])" + re.escape(w.encode()) + rb"(?![a-z0-9])"))
                        for w in generic]
        consumers = consumer_keywords()
        plain = sorted(c for c in consumers if c.isalpha() and (c.istitle() or c.isupper()))
        self.backends = [c.encode() for c in minimal(c for c in consumers if c not in plain
                                                     and c.encode() not in self.specific)]  # num_proc: both
        self.called = [((c + "(").encode(), re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(c.encode()) + rb"\("))
                       for c in plain]
        self.groups = _group_by_stem(self.backends, self.called, self.specific, self.generic)
        self.gates = gates
        # In code, a prose-like word is an identifier or a string key: it touches code
        # punctuation, maybe across blanks (`threads=`, `.parallel`, `"processes"`, `--nproc`
        # folded to `__nproc`, `threads = 4`). In a help string or a log message it does not.
        self.code_generic = [(w, re.compile(rb"[" + CODE_PUNCT + rb"][ \t]*" + re.escape(w) + rb"(?![a-z0-9])|"
                                            rb"(?<![a-z0-9])" + re.escape(w) + rb"[ \t]*[" + CODE_PUNCT + rb"]"))
                             for w, _ in self.generic]
        self.code_groups = _group_by_stem(self.backends, self.called, self.specific, self.code_generic)

        self.structural = vocab.structure.finder() if vocab.structure is not None else None
        self.switch_names = vocab.switch_structure.finder() if vocab.switch_structure is not None else None
        # the long words of knob names (parallel, workers, replicas), by the lengths of the
        # words one typo away from them
        self.typo_words = {part.encode() for w in words for part in w.split("_") if len(part) >= TYPO_WORD_MIN}
        self.typo_words_by_len: dict[int, list[bytes]] = {}
        for w in self.typo_words:
            for n in (len(w) - 1, len(w), len(w) + 1):
                self.typo_words_by_len.setdefault(n, []).append(w)

    def __call__(self, data: bytes) -> bool:
        return self._keeps(data, self.groups)

    def _keeps(self, data: bytes, groups) -> bool:
        folded = data.translate(_FOLD)
        return self._match(data, folded, groups) or self._structural(folded) or (
            b"add_argument" in data and _setting_flag().search(data) is not None) or \
            tool_threads.mentions(data)  # `"--cpu", "8"` (QG105)

    def _structural(self, folded: bytes) -> bool:
        """Knob names built from a count word and a unit (collector_env_num, numEnvs): read
        only where no vocabulary word or backend already kept the file."""
        return (self.structural is not None and self.structural(folded)) or \
            (self.switch_names is not None and self.switch_names(folded))

    def misspelt(self, data: bytes) -> bool:
        """Does a config file set a key with a word one typo from a vocabulary word
        (`context_parapllel_size`)? Such a key is no knob and keeps the file from the
        prefilter, yet it is the finding: the setting it misspells keeps its default."""
        for key in _CONFIG_KEY.findall(data):
            for word in key.translate(_FOLD).split(b"_"):
                if len(word) >= TYPO_WORD_MIN and word not in self.typo_words and any(
                        one_typo(word, w) and word.rstrip(b"s") != w.rstrip(b"s")  # rollouts: a plural
                        for w in self.typo_words_by_len.get(len(word), ())):
                    return True
        return False

    def in_code(self, data: bytes) -> bool:
        """Does a Python file that passed still pass without its comments and triple-quoted
        strings, with prose-like keywords counted only next to code punctuation?"""
        if not self.gates:
            return True
        return self._keeps(strip_python(data), self.code_groups)

    @staticmethod
    def _match(data: bytes, folded: bytes, groups) -> bool:
        # The same OR of every check as one flat list would give, but each keyword is only
        # looked for when its stem occurs in the folded text: ~25 passes over a file that
        # matches nothing instead of ~70 (each `in` pass costs the same, hit or miss).
        for stem, backends, called, specific, generic in groups:
            if stem in folded and (
                    any(w in data for w in backends)
                    or any(w in data and rx.search(data) for w, rx in called)
                    or any(w in folded for w in specific)
                    or any(w in folded and rx.search(folded) for w, rx in generic)):
                return True
        return False

    def keywords(self) -> list[str]:
        """Every keyword, for tools that want the same list (bench/bench_scan.py gives it to rg)."""
        return [w.decode() for w in self.specific + self.backends] + \
               [w.decode() for w, _ in self.generic] + [w.decode().rstrip("(") for w, _ in self.called]


@lru_cache(maxsize=1)
def _setting_flag() -> re.Pattern:
    """`add_argument("--gpu", ...)`, `add_argument("-m", "--start-method", ...)`: a flag that
    chooses where or how the work runs (rules/knobs.yaml `setting_flags`), which QG101 reports
    when the script never reads it; a file with nothing else the prefilter looks for."""
    from auditor.extract.py_defines import setting_flag_words

    names, words, _not_words, _help = setting_flag_words()
    spelt = sorted((w.encode().replace(b"_", b"[_-]") for w in {*names, *words}), key=len, reverse=True)
    return re.compile(rb"""add_argument\(\s*(?:["']-[\w-]*["']\s*,\s*)?["']--?(?:[\w-]*[_-])?(?:"""
                      + b"|".join(spelt) + rb""")(?:[_-][\w-]*)?["']""", re.IGNORECASE)


# -- the code gates: Python files whose keywords are all in comments, docstrings or prose ----
#
# Most Python files that pass the prefilter yield no site: they pass on `parallel`,
# `processes`, `threads` in comments, docstrings and messages. Such a file is still parsed
# (a syntax error in it is reported as before) but not visited. bench/check_gates.py proves
# on the bench corpus and the fixtures that every file the gates drop gets exactly the
# outcome a full extraction gives (no site, no per-file fact, the same error).
CODE_PUNCT = rb"_=.,:;()\[\]{}'\"`+*/%<>!&|^~@$\\"
# Python's string and comment tokens, scanned left to right as the tokenizer does: each
# match is a run of code and single-quoted strings (kept: keys such as cfg["num_workers"])
# followed by one comment or triple-quoted string (dropped), so findall() returns the text
# to keep without a Python call per token (7x faster than sub() with a group template).
# Every token also ends at an unterminated end (the end of its line or of the file), so a
# match never fails and the scan stays linear; a file misread that way has a syntax error,
# which the parse of every gated file reports.
_PY_CODE_THEN_DROPPED = re.compile(
    rb'((?:[^#"\'\\]+|\\.?'
    rb'|"(?!"")[^"\\\r\n]*(?:\\.?[^"\\\r\n]*)*(?:"|(?=[\r\n])|\Z)'
    rb"|'(?!'')[^'\\\r\n]*(?:\\.?[^'\\\r\n]*)*(?:'|(?=[\r\n])|\Z))*)"
    rb'(?:#[^\r\n]*'
    rb'|"""[^"\\]*(?:(?:\\.?|"(?!""))[^"\\]*)*(?:"""|\Z)'
    rb"|'''[^'\\]*(?:(?:\\.?|'(?!''))[^'\\]*)*(?:'''|\Z)"
    rb"|\Z)",
    re.S)


def strip_python(data: bytes) -> bytes:
    """DATA without its comments and triple-quoted strings (single-quoted strings kept)."""
    return b"".join(_PY_CODE_THEN_DROPPED.findall(data))


# Substrings shared by many keywords (after folding), most specific first. A keyword is
# checked only in files whose folded text contains its stem, the first of these it contains,
# or itself when it contains none (a project's extra knob). Measured on bench/corpus: 2.2 s
# instead of 3.6 s for the prefilter over 112 MB, with identical decisions on all 21,586 files.
STEMS = (b"worker", b"thread", b"nproc", b"_proc", b"subproc", b"process", b"env", b"parallel", b"gpu", b"cpu",
         b"ray.", b"vec", b"pool", b"spawn", b"make")


def _group_by_stem(backends, called, specific, generic) -> list[tuple]:
    """[(stem, backends, called, specific, generic)]: the keywords grouped under their stem.

    Sound because folding maps byte to byte: a keyword found in the raw or folded text
    puts its folded form, hence its stem, in the folded text."""
    groups: dict[bytes, tuple[list, list, list, list]] = {}
    for slot, entries in enumerate((backends, called, specific, generic)):
        for entry in entries:
            word = (entry[0] if isinstance(entry, tuple) else entry).translate(_FOLD)
            stem = next((s for s in STEMS if s in word), word)
            groups.setdefault(stem, ([], [], [], []))[slot].append(entry)
    return [(stem, *lists) for stem, lists in groups.items()]


# -- one file -----------------------------------------------------------------------------

_WORKER_STATE: dict = {}


def _init_worker(vocab, prefilter) -> None:
    _WORKER_STATE.update(vocab=vocab, prefilter=prefilter)
    _tune_gc()


# ast.parse allocates hundreds of thousands of nodes per big file, none in a reference cycle
# (they die by refcount), yet each allocation burst triggers the cyclic collector, whose older
# generations also rescan everything already held. Fewer collections and a frozen inherited
# heap cut the parse-and-extract CPU by ~10-15% (bench/corpus); results are unaffected.
GC_THRESHOLDS = (20000, 20, 100)


# NO_GC_DURING_EXTRACTION: even with those thresholds, a big file's tree (10^5 nodes alive at
# once) sets off young collections that scan it and free nothing. The extractor leaves no
# cycle behind (the tree dies by refcount when extract() returns), so the collector is off
# for one file's extraction: GC CPU went from 1.25 s to 0.02 s over the corpus's .py files.


def _tune_gc() -> None:
    gc.freeze()  # objects inherited from the parent: never rescanned
    gc.set_threshold(*GC_THRESHOLDS)


@contextmanager
def _gc_tuned():
    """The same tuning for a serial scan in the caller's process, restored afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def parse_file(cand: Candidate, vocab, prefilter: Prefilter, digests: dict | None = None,
               fed: frozenset = frozenset()):
    """-> (rel, sites, meta, error, parsed). Never raises for a bad file or extractor bug.

    With DIGESTS, the content digest of the bytes read goes in ``digests[rel]`` (the cache
    stores it with the outcome, which is a function of those bytes alone). FED: flags of a
    Python file's parser that other files hand to a backend (see _fed_flags)."""
    try:
        with open(cand.path, "rb") as fh:
            data = fh.read(FIRST_BLOCK)
            # a binary (or sparse) file is told by its first block, before the rest is read
            if b"\0" not in data and len(data) == FIRST_BLOCK:
                data += fh.read()
    except OSError as exc:
        return cand.rel, [], None, FileError(cand.rel, None, f"unreadable: {exc.strerror or exc}"), False
    if digests is not None:
        digests[cand.rel] = _digest(data)
    nul = data.find(b"\0")
    if nul >= 0:
        return cand.rel, [], None, FileError(cand.rel, _line_at(data, nul),
                                             f"binary file (NUL byte at byte {nul}); skipped"), False
    entry = cand.kind == "python" and _hydra_entry(data)
    if not prefilter(data) and not entry and not (cand.kind == "yaml" and _hydra_primary(data)) and \
            not (cand.kind in ("yaml", "ini") and prefilter.misspelt(data)) and \
            not (cand.kind == "shell" and (SHARD_HINT.search(data) or CONFIG_HANDED_HINT.search(data))):
        return cand.rel, [], None, None, False
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return cand.rel, [], None, FileError(cand.rel, _line_at(data, exc.start),
                                             f"not UTF-8 at byte {exc.start}; skipped"), False
    collecting = gc.isenabled()
    gc.disable()  # see NO_GC_DURING_EXTRACTION
    try:
        if cand.kind == "python" and not entry and not prefilter.in_code(data):
            extractor(cand.kind).check_syntax(text, cand.rel)  # what extract() would report
            return cand.rel, [], GATED, None, True
        result = extractor(cand.kind).extract(text, cand.rel, vocab, **({"fed": fed} if fed else {}))
    except ParseError as exc:
        return cand.rel, [], None, FileError(cand.rel, exc.line, exc.message), True
    except RecursionError:
        return cand.rel, [], None, FileError(cand.rel, None, "nested too deeply to parse; skipped"), True
    except Exception as exc:  # an extractor bug must not abort the scan of everything else
        return cand.rel, [], None, FileError(
            cand.rel, None, f"internal error in the {cand.kind} extractor: {type(exc).__name__}: {exc} "
            "(a qg-audit bug; please report it with this file)"), True
    finally:
        if collecting:
            gc.enable()
    meta = result.meta if result.flow is None else {**result.meta, "flow": result.flow}  # auditor.flow
    if result.sites and SUPPRESSION_HINT.search(data):  # lint reads suppressions only where this is set
        meta = {**meta, "qg_comment": True}
    sites = result.sites
    if len(sites) > MAX_SITES_PER_FILE:
        meta = {**meta, "sites_cut": len(sites)}
        sites = sites[:MAX_SITES_PER_FILE]
    return cand.rel, sites, meta, None, True


# what could start a suppression comment (auditor.lint.suppress.CANDIDATE, on bytes)
SUPPRESSION_HINT = re.compile(rb"(?i)\bqg\s*:")


def _hydra_primary(data: bytes) -> bool:
    """A top-level Hydra ``defaults:`` list: the join needs it to place the group files it
    composes (``env/atari.yaml`` holds ``env.num_envs``), even when it sets no knob itself."""
    return data.startswith(b"defaults:") or b"\ndefaults:" in data


def _hydra_entry(data: bytes) -> bool:
    """A ``@hydra.main`` script: which config file it loads and what it runs decide whether
    that file's keys are read (QG101), even when the script names no knob itself."""
    return b"hydra.main" in data


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _digest(data: bytes) -> bytes:
    from auditor.cache import digest

    return digest(data)


def _parse_chunk(chunk: list[Candidate], digests: dict | None) -> tuple[list[tuple], dict | None]:
    s = _WORKER_STATE
    return [parse_file(c, s["vocab"], s["prefilter"], digests) for c in chunk], digests


def _pool_context():
    # fork is the cheapest start on Linux and needs no re-import; elsewhere the default.
    import multiprocessing

    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# -- the pipeline -------------------------------------------------------------------------

Progress = Callable[[int, int], None]  # (files done, files total)


def scan(path: str | os.PathLike, *, jobs: int | None = None, max_file_size_mb: float = MAX_FILE_SIZE_MB,
         settings: dict | None = None, progress: Progress | None = None, exclude: list[str] | None = None,
         extend_exclude: list[str] | None = None, respect_gitignore: bool | None = None,
         follow_links: bool = False, store=None, walked: tuple | None = None) -> ScanResult:
    """Scan PATH (a directory or one file) into a ScanResult: sites, per-file meta, errors.

    ``settings`` is the project's ``[tool.qg-audit]`` table; by default it is read from
    PATH/pyproject.toml (for a file: the pyproject.toml beside it). Raises UsageError
    for a missing path or a bad setting. ``progress(done, total)`` is called as files finish.

    ``exclude`` (globs) replaces the default skipped directories (SKIP_DIRS but VCS_DIRS) and the
    settings' ``exclude``; ``extend_exclude`` adds to them; ``respect_gitignore`` (default
    True, or the settings' ``respect-gitignore``) skips what ``.gitignore`` files ignore.
    A file given as PATH itself is always scanned.
    ``follow_links``: also follow symlinks that resolve outside PATH (see ``walk``).
    With ``store`` (an auditor.cache.FileStore opened under ``store_key()``), per-file
    outcomes are reused from it and saved to it. ``walked`` is ``walk()``'s result when the
    caller already walked (no earlier than the store's start time).
    """
    from auditor import vocab as vocab_mod
    from auditor.settings import project_settings

    root = check_target(path, jobs, max_file_size_mb)
    if settings is None:
        settings = project_settings(root if root.is_dir() else root.parent)
    vocab = vocab_mod.load(settings)
    result = ScanResult(root=str(path), settings=settings)
    if walked is None:
        walked = walk_filtered(root, settings, max_file_size_mb, exclude=exclude, extend_exclude=extend_exclude,
                               respect_gitignore=respect_gitignore, follow_links=follow_links)
    candidates, walk_errors, info = walked
    result.files_seen = len(candidates) + sum(1 for e in walk_errors if _is_file_error(e))
    result.skipped_dirs, result.skipped_tracked = skipped_summary(root, info.skipped)
    result.errors.extend(walk_errors)
    outcomes = []
    todo = candidates
    if store is not None:
        outcomes, todo = store.lookup(candidates)
    fresh, digests = _parse_all(todo, vocab, Prefilter(vocab), jobs or default_jobs(), progress,
                                want_digests=store is not None)
    outcomes += fresh
    if store is not None:
        by_rel = {c.rel: c for c in todo}
        for outcome in fresh:
            store.put(by_rel[outcome[0]], digests.get(outcome[0]), outcome)
    # The flow pass runs over the per-file facts, cached or fresh, every time (which files it
    # picks depends on the whole project); what it learns of each file is stored per file.
    # A file it re-parses replaces that file's first outcome.
    outcomes = list({o[0]: o for o in [*outcomes, *_flow_pass(candidates, outcomes, vocab,
                                                               jobs or default_jobs(), store)]}.values())
    if store is not None:
        store.save()
    outcomes = _fed_flags(candidates, outcomes, vocab)
    # (rel -> whether files_scanned already counts it: a gated file was parsed, never visited)
    unvisited = {o[0]: bool(o[4]) for o in outcomes if o[3] is None and (not o[4] or o[2] == GATED)}
    result.unparsed = [(c, unvisited[c.rel]) for c in candidates if c.kind == "python" and c.rel in unvisited]
    _add_outcomes(result, outcomes)
    return result


def _add_outcomes(result: ScanResult, outcomes: list[tuple]) -> None:
    """What each file's outcome holds, added to RESULT (its errors kept in file order)."""
    for rel, sites, meta, error, parsed in sorted(outcomes, key=lambda o: o[0]):
        result.files_scanned += parsed
        if error is not None:
            result.errors.append(error)
            continue
        result.sites.extend(sites)
        if meta and meta != GATED:
            result.meta[rel] = meta
            if meta.get("sites_cut"):
                result.errors.append(FileError(rel, None, f"summarised: {meta['sites_cut']} parallelism sites, the "
                                               f"first {MAX_SITES_PER_FILE} kept (a generated file? exclude it with "
                                               "--extend-exclude)"))
    result.errors.sort(key=lambda e: (e.file, e.line or 0))


def parse_naming(result: ScanResult, names: set[str], jobs: int | None = None) -> int:
    """Parse the Python files no pass parsed that call one of NAMES (`BaseEnvManager(`: a class
    an installed framework registers beside a parallel sibling, known only once the scan has
    read that framework, after the passes over the tree), and add what they hold to RESULT.
    Returns how many files were parsed."""
    if not names or not result.unparsed:
        return 0
    from auditor import vocab as vocab_mod

    jobs = jobs or default_jobs()
    wanted = _Wanted({f"{n}(" for n in names})
    asked = [(c, wanted) for c, _counted in result.unparsed]
    chosen = [c for (c, _), hit in zip(asked, _names_any(asked, None, jobs)) if hit]
    if not chosen:
        return 0
    outcomes = _parse_all(chosen, vocab_mod.load(result.settings or None), _Always(), jobs, None)[0]
    done = {o[0] for o in outcomes}
    result.files_scanned -= sum(counted for c, counted in result.unparsed if c.rel in done)
    result.unparsed = [(c, counted) for c, counted in result.unparsed if c.rel not in done]
    _add_outcomes(result, outcomes)
    return len(outcomes)


def _fed_flags(cands: list[Candidate], outcomes: list[tuple], vocab) -> list[tuple]:
    """Parse again the files whose parser or settings dataclass declares a flag or field that no
    name or help makes a knob but that a file importing it (or imported by it) hands to a
    backend's count (`--n-explorer` in arguments.py, `for _ in range(args.n_explorer):
    Process(...)` in apex.py, which imports it), with those names as knobs: their defaults and
    the code that overwrites them become the knob's sites. An unrelated script's flag of that
    name is another setting. Done on every scan, cached or not (it depends on the whole
    project); the files are few (those declaring settings), so they are parsed here, serially."""
    refs: dict[str, set[str]] = {}  # a field's name -> the files handing it to a backend
    for o in outcomes:
        for s in o[1]:
            if s.role == "consume" and s.kind == "python" and \
                    (leaf := fed_field(str(s.detail.get("expr") or ""))) and not vocab.match(leaf):
                refs.setdefault(leaf, set()).add(o[0])
    if not refs:
        return outcomes
    from auditor.flow.imports import ImportNeighbours

    neighbours = ImportNeighbours({o[0]: o[2] for o in outcomes if isinstance(o[2], dict)})
    fed: dict[str, set[str]] = {}  # file -> the names it is parsed again with
    for o in outcomes:
        rel, sites, meta = o[0], o[1], o[2]
        declared = _settings_declared(meta) & set(refs) if isinstance(meta, dict) else set()
        for name in declared - {s.key for s in sites if s.role == "define"}:
            users = {f for f in refs[name] if f != rel and neighbours.either(rel, f)}
            if users:  # the declaring file, and the files handing it on, which read it too
                for f in (rel, *users):
                    fed.setdefault(f, set()).add(name)
    if not fed:
        return outcomes
    by_rel = {c.rel: c for c in cands}
    return [parse_file(by_rel[o[0]], vocab, _Always(), fed=frozenset(fed[o[0]])) if o[0] in fed and o[0] in by_rel
            else o for o in outcomes]


def _settings_declared(meta: dict) -> set[str]:
    """The flags a file's parsers add and the annotated fields of its settings classes
    (dataclasses a parser fills: `n_explorer: int = 4`)."""
    out = {d for dests in (meta.get("parser_flags") or {}).values() for d in dests}
    flow = meta.get("flow")
    for fields in ((flow.get("fields") or {}).values() if isinstance(flow, dict) else ()):
        out.update(fields)
    return out


_REL = operator.itemgetter(0)
FLOW_ROUNDS = 2  # second-pass rounds: files found by helpers, then keys only those files name


class _Wanted:
    """The words the flow layer asks the second pass to look for in one kind of file."""

    def __init__(self, words: set[str]):
        # a word may come from a file name of undecodable bytes (a module `\x01A\x80`, read
        # through os.fsdecode): surrogateescape gives back the bytes a file would hold
        self.words = [w.encode("utf-8", "surrogateescape") for w in sorted(words)]
        self.set = frozenset(self.words)


def _flow_pass(cands: list[Candidate], outcomes: list[tuple], vocab, jobs: int, store=None) -> list[tuple]:
    """Parse the files the prefilter skipped that call a helper whose parameter reaches a
    backend (Python), or set a key a trace reads (config files, and Python files named like
    configs) -- auditor.flow.resolve.wanted_words. A file parsed here may call the helper
    with a key only it names (start_pool(cfg.rollout_procs)): a second round looks for that.

    With STORE (auditor.cache.FileStore), a file found as stored is not read again for
    words it was already looked at for, nor parsed again: a rescan reads only the changed
    files, and all skipped files only for words no earlier scan looked for. A round that
    looks for the same words as the last scan's chooses the same unchanged files: only the
    changed ones are looked at; and when no file changed, every round is the last scan's."""
    if store is not None and store.unchanged(len(cands)):
        return _replay_rounds(cands, vocab, jobs, store)
    from auditor.flow.resolve import wanted_words

    # skipped by the prefilter, or parsed but never visited (the code gates: keywords in prose only)
    skipped = {o[0] for o in outcomes if o[3] is None and (not o[4] or o[2] == GATED)}
    named_config: dict[str, bool] = {}  # of the skipped Python files looked at
    memo: dict = {}  # wanted_words' per-file work, done once for both rounds
    found: list[tuple] = []
    seen_helpers: set[str] = set()
    seen_keys: set[str] = set()
    reusing = True
    for _round in range(FLOW_ROUNDS):
        if not skipped:
            break
        # in path order: wanted_words follows helper levels up to a cap, where what it found
        # first decides; the outcomes come in the pool's order, which varies run to run
        helpers, keys = wanted_words((o[2] for o in sorted([*outcomes, *found], key=_REL) if o[2]), memo)
        helpers, keys = helpers - seen_helpers, keys - seen_keys
        if _round:
            helpers = set()  # the second round only looks for keys, in config files: cheap to reread
        seen_helpers |= helpers
        seen_keys |= keys
        if not helpers and not keys:
            break
        last = store.last_round(_round) if store is not None and reusing else None
        reusing = last is not None and last[:2] == (helpers, keys)
        # Reusing: the same words as last time, and every earlier round too, so an unchanged
        # file is asked this round exactly when it was then, and answers as it did then.
        same, was_chosen = (store.same, last[2]) if reusing else ((), ())
        code, config, both = _Wanted(helpers), _Wanted(keys), _Wanted(helpers | keys)
        picks: list[Candidate] = []  # in walk order, answered or not
        asked: list[tuple[Candidate, _Wanted]] = []
        for c in cands:
            rel = c.rel
            if rel in same:
                if rel in was_chosen:
                    picks.append(c)
                continue
            if rel not in skipped or c.kind == "shell":
                continue
            if c.kind == "python":
                is_config = named_config.get(rel)
                if is_config is None:
                    is_config = named_config[rel] = _config_named(rel)
                if _round and not is_config:
                    continue
                wanted = both if is_config else code
            else:
                wanted = config
            if wanted.words:
                asked.append((c, wanted))
                picks.append(c)
        yes = {c.rel for (c, _), answer in zip(asked, _names_any(asked, store, jobs)) if answer}
        chosen = [c for c in picks if c.rel in yes or c.rel in same]
        if store is not None:
            store.put_round(helpers, keys, (c.rel for c in chosen))
        skipped -= {c.rel for c in chosen}
        found += _parse_flow(chosen, vocab, jobs, store)
    return found


def _replay_rounds(cands: list[Candidate], vocab, jobs: int, store) -> list[tuple]:
    """_flow_pass when every file is as the last scan stored it: each round's words and
    choice are the last scan's (they are functions of the files alone)."""
    found: list[tuple] = []
    for index in range(len(store.old_rounds)):
        helpers, keys, was_chosen = store.last_round(index)
        chosen = [c for c in cands if c.rel in was_chosen]
        store.put_round(helpers, keys, was_chosen)
        found += _parse_flow(chosen, vocab, jobs, store)
    return found


def _config_named(rel: str) -> bool:
    """auditor.flow.resolve.CONFIG_FILE.search(REL), its words looked for first (an ASCII
    path without one of them cannot match: the regex is slow on a long path)."""
    from auditor.flow.resolve import CONFIG_FILE

    if rel.isascii():
        low = rel.lower()
        if "conf" not in low and "cfg" not in low and "setting" not in low:
            return False
    return bool(CONFIG_FILE.search(rel))


def _names_any(asked: list[tuple[Candidate, _Wanted]], store, jobs: int) -> list[bool]:
    """Does each file name one of its wanted words? The store answers for a file found
    unchanged that was looked at for all of them; the others are read (in a process pool
    when there are many: on a cold scan that is every skipped file)."""
    answers: list[bool | None] = []
    unknown: list[tuple[int, Candidate, _Wanted, tuple | None]] = []
    for i, (c, wanted) in enumerate(asked):
        known = store.words_in(c.rel) if store is not None else None
        if known is not None and wanted.set <= known[0]:
            answers.append(not known[1].isdisjoint(wanted.set))
        else:
            answers.append(None)
            unknown.append((i, c, wanted, known))
    # with a store every new word is looked for (its record must be complete), else any one
    looked_for = [wanted.set - known[0] if known else wanted.set for _, _, wanted, known in unknown]
    hits = _find_words([c.path for _, c, _, _ in unknown], looked_for, complete=store is not None, jobs=jobs)
    for (i, c, wanted, known), new, found in zip(unknown, looked_for, hits):
        if found is None:  # unreadable now: not chosen, and nothing recorded
            answers[i] = False
            continue
        if store is not None:
            tested, before = known or (frozenset(), frozenset())
            found = before | found
            store.put_words(c.rel, tested | new, found)
        answers[i] = not found.isdisjoint(wanted.set)
    return answers


FIND_CHUNK = 400  # files per pool task when looking for words: reading and `in` are cheap per file


def _find_words(paths: list[str], words: list[frozenset], complete: bool, jobs: int) -> list[frozenset | None]:
    """For each path, which of its WORDS the file contains (all of them when COMPLETE, else
    at most the first found); None for a file that cannot be read."""
    if jobs == 1 or len(paths) < SERIAL_BELOW * 4:
        return _find_words_chunk(paths, words, complete)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = [(paths[i:i + FIND_CHUNK], words[i:i + FIND_CHUNK]) for i in range(0, len(paths), FIND_CHUNK)]
    try:
        with ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=_pool_context()) as pool:
            results = pool.map(_find_words_chunk, *zip(*chunks), [complete] * len(chunks))
            return [found for chunk in results for found in chunk]
    except BrokenProcessPool:  # a worker died (killed, out of memory): look here instead
        return _find_words_chunk(paths, words, complete)


def _find_words_chunk(paths: list[str], words: list[frozenset], complete: bool) -> list[frozenset | None]:
    out: list[frozenset | None] = []
    for path, wanted in zip(paths, words):
        data = _read(path)
        if data is None:
            out.append(None)
        elif complete:
            out.append(frozenset(w for w in wanted if w in data))
        else:
            out.append(frozenset(next(([w] for w in wanted if w in data), ())))
    return out


def _parse_flow(chosen: list[Candidate], vocab, jobs: int, store) -> list[tuple]:
    """The second pass's parses: no prefilter, no gate; stored outcomes reused."""
    out: list[tuple] = []
    todo = chosen
    if store is not None:
        todo = []
        for c in chosen:
            hit = store.flow_outcome(c.rel)
            if hit is None:
                todo.append(c)
            else:
                out.append(hit)
    fresh = _parse_all(todo, vocab, _Always(), jobs, None)[0]
    if store is not None:
        for outcome in fresh:
            store.put_flow(outcome[0], outcome)
    return out + fresh


class _Always:
    """The second pass has already chosen its files: no prefilter, and no code gate."""

    def __call__(self, data: bytes) -> bool:
        return True

    def in_code(self, data: bytes) -> bool:
        return True


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def skipped_summary(root: Path, skipped: list[str]) -> tuple[list[str], int]:
    """(the directories the built-in list skipped, the files git tracks inside them)."""
    if not skipped or not root.is_dir():
        return list(skipped), 0
    from auditor.gitindex import GitIndex

    index = GitIndex.of(root)
    if index is None:
        return list(skipped), 0
    base = Path(os.path.abspath(root)).relative_to(index.top).as_posix()
    head = "" if base == "." else base + "/"
    return list(skipped), index.count_under(head + d for d in skipped)


def store_key(root: Path, settings: dict, max_file_size_mb: float) -> str:
    """The per-file store's key: the code, the root, and every setting (extraction may read any)."""
    from auditor import cache

    return cache.key_of("files", cache.code_fingerprint(), os.path.realpath(root), settings, max_file_size_mb)


def _is_file_error(error: FileError) -> bool:
    return not error.message.startswith("unreadable directory")


def _parse_all(cands: list[Candidate], vocab, prefilter: Prefilter, jobs: int,
               progress: Progress | None, want_digests: bool = False) -> tuple[list[tuple], dict]:
    """-> (outcomes, {rel: content digest} when WANT_DIGESTS, else {})."""
    total = len(cands)
    digests: dict = {}
    if jobs == 1 or total < SERIAL_BELOW:
        out = []
        with _gc_tuned():
            for i, c in enumerate(cands, 1):
                out.append(parse_file(c, vocab, prefilter, digests if want_digests else None))
                if progress and (i % 50 == 0 or i == total):
                    progress(i, total)
        return out, digests
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # Largest files first so one big file does not finish last; then fixed-size chunks.
    ordered = sorted(cands, key=lambda c: -c.size)
    chunks = [ordered[i:i + CHUNK_FILES] for i in range(0, total, CHUNK_FILES)]
    out: list[tuple] = []
    pending = {}
    done = 0
    workers = min(jobs, len(chunks))
    with ProcessPoolExecutor(workers, mp_context=_pool_context(), initializer=_init_worker,
                             initargs=(vocab, prefilter)) as pool:
        for chunk in chunks:
            pending[pool.submit(_parse_chunk, chunk, {} if want_digests else None)] = chunk
        lost: list[Candidate] = []
        for fut in as_completed(pending):
            try:
                chunk_out, chunk_digests = fut.result()
                out.extend(chunk_out)
                digests.update(chunk_digests or {})
            except BrokenProcessPool:  # a worker died (killed, out of memory): redo its files here
                lost.extend(pending[fut])
            done += len(pending[fut])
            if progress:
                progress(done, total)
    for c in lost:
        out.append(parse_file(c, vocab, prefilter, digests if want_digests else None))
    return out, digests

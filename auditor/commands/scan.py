"""``qg-audit scan PATH``: the parallelism-knob inventory, and the rules' findings on it.

    qg-audit scan PATH [--format text|json|sarif|github] [-o FILE] [--jobs N]
                       [--max-file-size MB] [--no-progress] [--no-cache] [--cache-dir DIR]
                       [--follow-links] [--exclude GLOBS] [--extend-exclude GLOBS]
                       [--no-respect-gitignore] [--statistics] [--python PATH | --no-libraries]
                       [rule flags: see auditor.lint]
    qg-audit scan --files FILE... [--root DIR] [...]      (pre-commit: findings touching FILEs)

Exit codes: 0 clean, 1 findings at or above --fail-on (auditor.lint), 2 usage or
configuration error. Files that cannot be read or parsed are listed in ``errors`` and do
not by themselves fail the scan.

A rescan goes through the cache (auditor.cache): when the walk finds every file as the
last run of the same command line left it, the saved report is written again before the
parser, the join, the rules and the renderers are even imported.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from auditor.exitcodes import UsageError

FORMATS = ("text", "json", "sarif", "github")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from auditor.walk import MAX_FILE_SIZE_MB

    parser.add_argument("path", metavar="PATH", nargs="*",
                        help="project directory (or one file) to scan; with --files, the changed files")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text: findings with their paths and a summary (default; --knobs adds the knob table); json: the qg-audit.scan/1 "
                             "document; sarif / github: findings for code scanning / annotations")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--jobs", "-j", type=int, metavar="N",
                        help="parser processes (default: the CPUs this process may use; 1 = serial)")
    parser.add_argument("--max-file-size", type=float, default=MAX_FILE_SIZE_MB, metavar="MB",
                        help=f"skip (and list as an error) files bigger than this (default {MAX_FILE_SIZE_MB:g})")
    parser.add_argument("--no-progress", action="store_true", help="never draw the progress bar on stderr")
    parser.add_argument("--follow-links", action="store_true",
                        help="also follow symlinks that resolve outside PATH (default: list each as an error)")
    parser.add_argument("--exclude", metavar="GLOBS", action="append",
                        help="skip paths matching these globs (comma-separated, repeatable); replaces the "
                             "default skipped directories and [tool.qg-audit] exclude")
    parser.add_argument("--extend-exclude", metavar="GLOBS", action="append",
                        help="skip paths matching these globs in addition to the excluded ones")
    parser.add_argument("--respect-gitignore", dest="respect_gitignore", action="store_true", default=None,
                        help="skip what .gitignore files ignore (the default)")
    parser.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                        help="scan git-ignored files too")
    parser.add_argument("--knobs", metavar="NAME", nargs="?", const="", default=None,
                        help="text format: also print the knob inventory (every knob's journey), only knobs "
                             "whose name contains NAME when given; by default the text report shows findings")
    parser.add_argument("--statistics", action="store_true",
                        help="print a count of findings per rule instead of the report (text, or json: qg-audit.statistics/1)")
    parser.add_argument("--files", action="store_true",
                        help="the PATH arguments are changed files (as pre-commit passes them): scan the "
                             "project in --root and report only the knobs, findings and errors touching them")
    parser.add_argument("--root", metavar="DIR", default=".", help="the project scanned with --files (default: .)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache (also: QG_AUDIT_NO_CACHE=1)")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="where the cache lives (default: PATH/.qg-audit_cache; also: QG_AUDIT_CACHE_DIR)")
    parser.add_argument("--python", metavar="PATH",
                        help="the interpreter of the project's environment: installed frameworks the project "
                             "calls are read (never imported) from its sys.path (default: qg-audit's own)")
    parser.add_argument("--no-libraries", action="store_true",
                        help="read no installed framework: only the scanned tree and the consumer catalogue")
    from auditor import lint

    lint.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from auditor import cache, walk
    from auditor.settings import project_settings

    start = time.perf_counter()
    started_ns = time.time_ns()
    target, files = _target(args)
    _check_output(args.output)
    if args.statistics and args.format not in ("text", "json"):
        raise UsageError(f"--statistics prints a table or JSON; it does not combine with --format {args.format}")
    root = walk.check_target(target, args.jobs, args.max_file_size)
    # the settings decide the walk (exclude, respect-gitignore): read them before the replay's walk
    settings = project_settings(root if root.is_dir() else root.parent)
    cache_dir = cache.cache_dir(root, args.cache_dir, args.no_cache)
    walked = walk.walk_filtered(
        root, settings, args.max_file_size, exclude=_glob_list(args.exclude),
        extend_exclude=_glob_list(args.extend_exclude), respect_gitignore=args.respect_gitignore,
        follow_links=args.follow_links, memo_dir=cache_dir, started_ns=started_ns)
    replay = None
    if cache_dir is not None and _replayable(args):
        replay = Replay(cache_dir, _replay_key(args, target, files), walked, started_ns, root)
        if replay.hit(_inputs(root)):
            return replay.write(args.output, time.perf_counter() - start)

    # The store's outcomes, the join and the rules build ~10^6 long-lived objects that die by
    # refcount: the cyclic collector's frequent passes over them are pure overhead.
    from auditor import scan as scan_mod

    with scan_mod._gc_tuned():
        return _scan_and_report(args, target, files, root, settings, walked, cache_dir, replay, start, started_ns)


def _scan_and_report(args, target, files, root, settings, walked, cache_dir, replay, start, started_ns) -> int:
    from auditor import cache
    from auditor import join as join_mod
    from auditor import lint
    from auditor import scan as scan_mod

    store = None
    if cache_dir is not None:
        store = cache.FileStore(cache_dir, scan_mod.store_key(root, settings, args.max_file_size), started_ns)
    progress = None
    if not args.no_progress and sys.stderr.isatty():
        from auditor.render.scan_text import progress_bar  # rich: only for a terminal

        progress = progress_bar(enabled=True)
    try:
        result = scan_mod.scan(target, jobs=args.jobs, max_file_size_mb=args.max_file_size, settings=settings,
                               progress=progress, store=store, walked=walked)
    finally:
        if progress is not None:
            progress.close()
    if not args.no_libraries:
        result.libraries = _read_libraries(result, settings, args)
        # files the passes over the tree skipped that build a framework's registered class by hand
        from auditor import vocab as vocab_mod

        scan_mod.parse_naming(result, result.libraries.registry_members(vocab_mod.load(settings)), args.jobs)
    join_mod.join(result)
    lint.check(result, args)
    if files is not None:
        _only_touching(result, files)
    code = lint.exit_code(result, args)
    elapsed = time.perf_counter() - start
    to_file = bool(args.output) and args.output != "-"
    out = _open_output(args.output)
    captured = _Capture(out) if replay is not None else out
    try:
        _write(result, args, elapsed, captured, to_file)
    finally:
        if out is not sys.stdout:
            out.close()
    if replay is not None:
        replay.save(captured.text(), _elapsed_slot(args.format, elapsed, captured.text(), result), code,
                    _inputs(root, lint.baseline_path(result, args)), store)
    return code


def _target(args) -> tuple[str, list[str] | None]:
    """(what to scan, the changed files relative to it with --files, else None)."""
    if not args.files:
        if len(args.path) != 1:
            raise UsageError("give exactly one PATH to scan (or --files FILE... for changed files)"
                             if args.path else "the following arguments are required: PATH")
        return args.path[0], None
    if not args.path:
        return args.root, []
    base = os.path.abspath(args.root)
    rels = []
    for f in args.path:
        rel = os.path.relpath(os.path.abspath(f), base)
        if rel == ".." or rel.startswith(".." + os.sep):
            raise UsageError(f"--files {f}: not inside the project {args.root} (set --root)")
        rels.append(rel.replace(os.sep, "/"))
    return args.root, sorted(set(rels))


def _only_touching(result, files: list[str]) -> None:
    """Keep the knobs, findings and errors that involve one of FILES (relative to the root)."""
    wanted = set(files)
    result.findings = [f for f in result.findings
                       if f.file in wanted or any(s.file in wanted for s in f.related)]
    result.knobs = [k for k in result.knobs if any(s.file in wanted for s in k.sites)]
    result.errors = [e for e in result.errors if e.file in wanted]


# -- replay -------------------------------------------------------------------------------

# Environment that shapes a report (rich's terminal and colour detection, encodings, ours).
OUTPUT_ENV = ("COLUMNS", "LINES", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE",
              "TTY_INTERACTIVE", "CLICOLOR", "CLICOLOR_FORCE", "JUPYTER_COLUMNS", "JUPYTER_LINES", "LANG")
OUTPUT_ENV_PREFIXES = ("QG_AUDIT", "PYTHON", "LC_")


def _replayable(args) -> bool:
    # These write files or print diffs as they go: always run them for real.
    return not (args.fix or args.diff or args.write_baseline)


def _read_libraries(result, settings, args):
    from auditor import cache, libraries
    from auditor import vocab as vocab_mod
    from auditor.lint.base import CONFIG_KINDS, foreign_package, parsed_settings_classes, project_packages

    facts = {rel: m["flow"] for rel, m in result.meta.items() if isinstance(m, dict) and m.get("flow")}
    store = None if args.no_cache or os.environ.get("QG_AUDIT_NO_CACHE") else cache.secret_dir() / "libraries"
    ours = project_packages(result)
    # the fields the project's classes declare over another package's classes: whether that
    # package can read them is whether its source names them (QG101)
    subclassed: dict[str, set[str]] = {}
    for site in (s for s in result.sites if s.role == "define"):
        for top in filter(None, (foreign_package(str(b), ours) for b in site.detail.get("bases") or ())):
            subclassed.setdefault(top, set()).add(site.leaf)
    # another package's settings class a parser of the project is built from (HfArgumentParser((
    # Args, TrainingArguments))): a config key may be one of its fields, named in its source
    parsed = {top for top, _cls in parsed_settings_classes(result)}
    if parsed:
        config_leaves = {s.leaf for s in result.sites if s.role == "define" and s.kind in CONFIG_KINDS}
        for top in parsed:
            subclassed.setdefault(top, set()).update(config_leaves)
    try:
        return libraries.read(facts, ours, vocab_mod.load(settings), python=args.python,
                              cache_dir=store, subclassed=subclassed)
    except libraries.UsageError as exc:
        raise UsageError(str(exc)) from None


def _replay_key(args, target: str, files) -> str:
    from auditor import cache, libraries

    argv = {k: v for k, v in sorted(vars(args).items()) if k not in ("no_progress",)}
    env = {k: v for k, v in os.environ.items()
           if (k in OUTPUT_ENV or k.startswith(OUTPUT_ENV_PREFIXES)) and k != cache.SECRET_ENV}
    tty = sys.stdout.isatty()
    try:
        size = tuple(os.get_terminal_size(sys.stdout.fileno())) if tty else None
    except (OSError, ValueError):
        size = None
    return cache.key_of("replay", cache.code_fingerprint(), os.getcwd(), os.path.realpath(target), argv, files,
                        env, tty, size, sys.stdout.encoding,
                        libraries.environment_key(args.python, not args.no_libraries))


def _inputs(root, baseline: str | None = None) -> list[str]:
    """Files besides the walked ones that a report depends on. (Ignore files need no entry:
    the replay walks with the current filters, so what they decide shows in the walk.)"""
    base = root if root.is_dir() else root.parent
    return [str(base / "pyproject.toml")] + ([baseline] if baseline else [])


def _index_state(root: Path, skipped: list[str]) -> list | None:
    """The git index's stat when the walk skipped directories (the report counts the files git
    tracks in them): a replay must not repeat an old count after `git add`."""
    if not skipped:
        return None
    from auditor.gitindex import git_dir, repo_top

    top = repo_top(Path(os.path.abspath(root)))
    gdir = git_dir(top) if top is not None else None
    try:
        st = os.stat(gdir / "index") if gdir is not None else None
    except OSError:
        st = None
    return None if st is None else [st.st_size, st.st_mtime_ns, st.st_ino]


class Replay:
    """The saved report of one command line, valid while the walk finds the same files."""

    def __init__(self, directory, key: str, walked: tuple, started_ns: int, root: Path):
        from auditor import cache

        self.directory = directory
        self.key = key
        self.name = f"replay-{key}.bin"
        candidates, errors, info = walked
        self.candidates = candidates
        self.table, self.racy = cache.stat_table(candidates, errors, started_ns, info.skipped,
                                                     _index_state(root, info.skipped))
        self.record = None

    def hit(self, inputs: list[str]) -> bool:
        from auditor import cache

        rec = _decode_record(cache.read_entry(self.directory / self.name, "replay", self.key))
        if rec is None or rec.get("table") != self.table:
            return False
        if any((cache.file_digest(path) or b"").hex() != dig for path, dig in rec["racy"]):
            return False
        recorded = rec["inputs"]
        if [p for p, _ in recorded][:len(inputs)] != inputs or cache.input_state(p for p, _ in recorded) != recorded:
            return False
        self.record = rec
        return True

    def write(self, output: str | None, elapsed: float) -> int:
        rec = self.record
        text = rec["text"]
        if rec["slot"] is not None:
            at, old = rec["slot"]
            new = _elapsed_text(rec["format"], elapsed)
            if len(new) > len(old):  # a longer figure might wrap the summary line: use the old one
                new = old
            text = text[:at] + new + text[at + len(old):]
        out = _open_output(output)
        try:
            out.write(text)
        finally:
            if out is not sys.stdout:
                out.close()
        return rec["exit"]

    def save(self, text: str, slot, code: int, inputs: list[str], store) -> None:
        from auditor import cache

        if store is None or slot is False:
            return
        racy = []
        for path, rel in self.racy:
            entry = store.new.get(rel)
            if entry is None:
                return  # a recent file the store could not vouch for: no replay next time
            racy.append([path, entry[2]])
        fmt = slot[2] if slot else None
        record = {"table": self.table, "racy": racy, "inputs": cache.input_state(inputs),
                  "slot": list(slot[:2]) if slot else None, "format": fmt, "exit": code}
        payload = json.dumps(record).encode() + b"\n" + text.encode("utf-8", "surrogateescape")
        cache.write_entry(self.directory, self.name, "replay", self.key, payload)


def _decode_record(payload: bytes | None) -> dict | None:
    """A replay record: one JSON line of facts, then the report's text."""
    if payload is None:
        return None
    head, sep, text = payload.partition(b"\n")
    try:
        rec = json.loads(head)
        rec["text"] = text.decode("utf-8", "surrogateescape")
        rec["inputs"] = [tuple(i) for i in rec["inputs"]]
        if not (type(rec["exit"]) is int and type(rec["racy"]) is list
                and all(type(r) is list and len(r) == 2 and all(type(x) is str for x in r) for r in rec["racy"])
                and all(len(i) == 2 and type(i[0]) is str and type(i[1]) in (str, type(None)) for i in rec["inputs"])
                and (rec["slot"] is None or (type(rec["slot"][0]) is int and type(rec["slot"][1]) is str))):
            return None
    except Exception:  # noqa: BLE001 - a bad record is a miss, whatever it raises (RecursionError too)
        return None
    return rec if sep else None


def _elapsed_text(fmt: str, elapsed: float) -> str:
    if fmt == "json":
        return f'"elapsed_s": {json.dumps(round(elapsed, 3))}'
    return f"; {round(elapsed, 3):.2f} s"


_TRAILER = re.compile(r"(?:\x1b\[[0-9;]*m)*\n?\Z")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _elapsed_slot(fmt: str, elapsed: float, text: str, result):
    """(offset, text, format) of the run time in the report, or None when it holds none.

    The run time is the one figure a replay must not copy. Only a summary line that rich
    did not wrap is patched; otherwise the slot is None and the old figure would be
    replayed, so such a report is not saved (see Replay.save callers)."""
    if fmt in ("sarif", "github"):
        return None  # no run time in them
    old = _elapsed_text(fmt, elapsed)
    at = text.rfind(old)
    if at < 0:
        return False
    if fmt == "text":
        line_start = text.rfind("\n", 0, at) + 1
        if not _TRAILER.match(text, at + len(old)) or \
                not _ANSI.sub("", text[line_start:at]).startswith(f"{len(result.knobs)} knobs, "):
            return False
    return at, old, fmt


class _Capture:
    """Writes through to OUT and keeps a copy (rich asks it isatty() and the like: OUT answers)."""

    def __init__(self, out):
        self._out = out
        self._parts: list[str] = []

    def write(self, s: str) -> int:
        self._parts.append(s)
        return self._out.write(s)

    def text(self) -> str:
        return "".join(self._parts)

    def __getattr__(self, name):
        return getattr(self._out, name)


def _glob_list(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [g for v in values for g in (p.strip() for p in v.split(",")) if g]


def _check_output(path: str | None) -> None:
    """Fail before a long scan, not after it, when -o cannot be written."""
    if not path or path == "-":
        return
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        raise UsageError(f"-o {path}: cannot write there (is the directory missing or read-only?)")


def _open_output(path: str | None):
    if not path or path == "-":
        return sys.stdout
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write: {exc.strerror}") from None


def _write(result, args, elapsed: float, out, to_file: bool) -> None:
    # Every renderer escapes what came from the tree itself (auditor.render.safe): JSON and
    # SARIF are ASCII, GitHub annotations and the text table escape each field.
    if args.statistics:
        from auditor.render import statistics

        out.write(statistics.render(result, as_json=args.format == "json"))
    elif args.format == "json":
        from auditor.render import scan_json

        out.write(scan_json.render(result, elapsed))
    elif args.format == "sarif":
        from auditor.render import sarif  # the rules engineer's renderer

        out.write(_ensure_newline(sarif.render(result)))
    elif args.format == "github":
        from auditor.render import github

        out.write(_ensure_newline(github.render(result)))
    else:
        from auditor.render import scan_text

        width = 160 if to_file else (None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", 160)))
        scan_text.render(result, elapsed, file=out, width=width, knobs=args.knobs)


def _ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"

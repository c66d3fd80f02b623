"""``qg-audit scan PATH``: the parallelism-knob inventory, and the rules' findings on it.

    qg-audit scan PATH [--format text|json|sarif|github] [-o FILE] [--jobs N]
                       [--max-file-size MB] [--no-progress] [--exclude GLOBS]
                       [--extend-exclude GLOBS] [--no-respect-gitignore] [--statistics]
                       [rule flags: see auditor.lint]

Exit codes: 0 clean, 1 findings at or above --fail-on (auditor.lint), 2 usage or
configuration error. Files that cannot be read or parsed are listed in ``errors`` and do
not by themselves fail the scan.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from auditor import lint
from auditor.exitcodes import UsageError

FORMATS = ("text", "json", "sarif", "github")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from auditor.scan import MAX_FILE_SIZE_MB

    parser.add_argument("path", metavar="PATH", help="project directory (or one file) to scan")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text: a table grouped by knob (default); json: the qg-audit.scan/1 "
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
    parser.add_argument("--statistics", action="store_true",
                        help="print a count of findings per rule instead of the report (text, or json: qg-audit.statistics/1)")
    lint.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from auditor import join as join_mod
    from auditor import scan as scan_mod
    from auditor.render.scan_text import progress_bar

    _check_output(args.output)
    if args.statistics and args.format not in ("text", "json"):
        raise UsageError(f"--statistics prints a table or JSON; it does not combine with --format {args.format}")
    progress = progress_bar(enabled=not args.no_progress and sys.stderr.isatty())
    start = time.perf_counter()
    try:
        result = scan_mod.scan(args.path, jobs=args.jobs, max_file_size_mb=args.max_file_size, progress=progress,
                               follow_links=args.follow_links, exclude=_glob_list(args.exclude),
                               extend_exclude=_glob_list(args.extend_exclude), respect_gitignore=args.respect_gitignore)
    finally:
        progress.close()
    join_mod.join(result)
    lint.check(result, args)
    elapsed = time.perf_counter() - start
    out = _open_output(args.output)
    try:
        _write(result, args, elapsed, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return lint.exit_code(result, args)


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


def _write(result, args, elapsed: float, out) -> None:
    from auditor.render.safe import printable

    if args.statistics:
        from auditor.render import statistics

        out.write(printable(statistics.render(result, as_json=args.format == "json")))
    elif args.format == "json":
        from auditor.render import scan_json

        out.write(printable(scan_json.render(result, elapsed)))
    elif args.format == "sarif":
        from auditor.render import sarif  # the rules engineer's renderer

        out.write(printable(_ensure_newline(sarif.render(result))))
    elif args.format == "github":
        from auditor.render import github

        out.write(printable(_ensure_newline(github.render(result))))
    else:
        from auditor.render import scan_text

        to_file = out is not sys.stdout
        width = 160 if to_file else (None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", 160)))
        scan_text.render(result, elapsed, file=out, width=width)


def _ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"

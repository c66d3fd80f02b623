"""``qg-audit sweep``: one variable (batch size), every value in fresh processes, measured.

    qg-audit sweep (-L NAME v1,v2,... | -P NAME MIN MAX [-D STEP]) [--steps N | --duration S]
                   [--runs R] [--warmup-steps K] [--timeout S] [--ready-timeout S] [--export-json F]
                   [--export-markdown F] [--export-csv F] [--plot F.png] -- COMMAND ... {NAME} ...

Exit codes: 0 the sweep ran and at least one value was measured (failed values are recorded
in the table and the JSON, not fatal); 2 usage error; 3 no value could be measured (every
run failed, or the command could not start); 130 interrupted (Ctrl-C), after printing and
exporting what was measured. See docs/sweep.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from auditor.exitcodes import EXIT_OK, EXIT_TARGET, UsageError
from auditor.render import write_file

EXIT_INTERRUPTED = 130  # as auditor.cli answers Ctrl-C; partial results are printed and exported first


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("exit codes: 0 swept (failed values are recorded, not fatal), 2 usage error, 3 no value "
                     "could be measured. {NAME} in COMMAND is replaced by each value. See docs/sweep.md.")
    var = parser.add_argument_group("the one variable (exactly one of -L / -P)")
    var.add_argument("-L", "--parameter-list", dest="lists", action="append", nargs=2, metavar=("NAME", "VALUES"),
                     help="sweep NAME over comma-separated VALUES, e.g. -L batch 16,32,64")
    var.add_argument("-P", "--parameter-scan", dest="scans", action="append", nargs=3,
                     metavar=("NAME", "MIN", "MAX"), help="sweep NAME from MIN to MAX")
    var.add_argument("-D", "--parameter-step-size", dest="step", metavar="STEP",
                     help="-P step: a number (adds, default 1) or xF (multiplies, e.g. x2 for doublings)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--steps", type=int, metavar="N",
                     help="measure N steady steps per timer in every run, then end the run (default: run until "
                          "the target exits)")
    how.add_argument("--duration", type=float, metavar="S",
                     help="end every run S seconds after its first timed step")
    parser.add_argument("--runs", type=int, default=1, metavar="R", help="fresh processes per value (default 1)")
    parser.add_argument("--warmup-steps", type=int, metavar="K",
                        help="steps excluded as warm-up per timer (default: what each SamplingTimer declared)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="end a run after S seconds and record it as failed (a safety net; default none)")
    parser.add_argument("--ready-timeout", type=float, default=120.0, metavar="S",
                        help="with --duration: a run with no timed step S seconds after its launch is recorded as "
                             "failed (default 120)")
    parser.add_argument("--interval", type=float, metavar="S",
                        help="census poll interval in seconds for process and memory peaks (default 0.1)")
    parser.add_argument("--no-hook", action="store_true", help="do not load the worker-reporting hook in the target")
    parser.add_argument("--auto", action="store_true",
                        help="measure with the hook's automatic phases (as profile --auto): no SamplingTimer needed")
    lim = parser.add_argument_group("stop-at thresholds (docs/sweep.md)")
    lim.add_argument("--plateau-gain", type=float, default=0.05, metavar="X",
                     help="a gain below X per doubling is a plateau (default 0.05)")
    lim.add_argument("--memory-near", type=float, default=0.8, metavar="X",
                     help="a peak at X of its limit is near the limit (default 0.8)")
    lim.add_argument("--memory-limit", metavar="SIZE",
                     help="memory budget for the tree RSS peak, e.g. 16GiB (default: available memory before the sweep)")
    out = parser.add_argument_group("output")
    out.add_argument("--export-json", metavar="FILE", help="write the qg-audit.sweep/1 JSON document")
    out.add_argument("--export-markdown", metavar="FILE", help="write the table and conclusions as Markdown")
    out.add_argument("--export-csv", metavar="FILE", help="write one CSV row per value")
    out.add_argument("--plot", metavar="FILE.png", help="draw samples/s and memory peaks against the variable "
                                                        "(needs matplotlib: the 'plot' extra)")
    out.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command, with {NAME}")


def _options(args):
    from auditor.sweep.context import parse_size
    from auditor.sweep.runner import Options

    checks = [("runs", args.runs, 1), ("steps", args.steps, 1), ("warmup-steps", args.warmup_steps, 0)]
    for flag, v, lo in checks:
        if v is not None and v < lo:
            raise UsageError(f"--{flag} must be an integer >= {lo}, got {v}")
    for flag in ("duration", "timeout", "interval", "ready_timeout"):
        v = getattr(args, flag)
        if v is not None and not v > 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be > 0 seconds, got {v:g}")
    if not 0 <= args.plateau_gain < 1:
        raise UsageError(f"--plateau-gain must be in [0, 1), got {args.plateau_gain:g}")
    if not 0 < args.memory_near <= 1:
        raise UsageError(f"--memory-near must be in (0, 1], got {args.memory_near:g}")
    return Options(runs=args.runs, steps=args.steps, duration=args.duration, timeout=args.timeout,
                   warmup_steps=args.warmup_steps, interval=args.interval if args.interval else 0.1,
                   hook=not args.no_hook, auto=args.auto, plateau_gain=args.plateau_gain,
                   memory_near=args.memory_near, ready_timeout=args.ready_timeout,
                   memory_limit=parse_size(args.memory_limit) if args.memory_limit else None)


def _check_writable(paths: list[str]) -> None:
    """Fail before hours of sweeping, not after, when an export cannot be written."""
    for p in paths:
        parent = Path(p).expanduser().resolve().parent
        if not parent.is_dir():
            raise UsageError(f"{p}: directory {parent} does not exist")


def run(args) -> int:
    from auditor.sweep import params

    cmd = list(args.cmd or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    var = params.from_args(args.lists, args.scans, args.step)
    params.check_template(cmd, var)
    opts = _options(args)
    exports = [p for p in (args.export_json, args.export_markdown, args.export_csv, args.plot) if p]
    _check_writable(exports)
    if args.auto and args.no_hook:
        raise UsageError("--auto times phases through the hook: it cannot be combined with --no-hook")
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked early: a missing extra is a usage error, not a late crash)
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'qg-audit[plot]' (or pip install matplotlib)")

    from auditor.render import sweep_text
    from auditor.render.safe import one_line
    from auditor.sweep.runner import Progress, run_sweep

    progress = Progress(len(var.values) * opts.runs, enabled=not args.no_progress)
    sweep = run_sweep(var, cmd, opts, progress)
    sys.stdout.write(sweep_text.render(sweep))  # one line per element, escaped (render.safe.text_lines)
    sys.stdout.flush()
    _exports(sweep, args)
    if sweep.context.get("interrupted"):
        print(one_line(f"qg-audit sweep: {sweep.context['interrupted']}; partial results above"), file=sys.stderr)
        return EXIT_INTERRUPTED
    measured = [r for r in sweep.results if not r.failed]
    if not measured:
        first = next((x for r in sweep.results for x in r.runs), None)
        why = first.error if first is not None else "no run"
        print(one_line(f"qg-audit sweep: error: no value could be measured ({why})"), file=sys.stderr)
        tail = first.stderr_tail.strip() if first is not None else ""
        if tail:
            from auditor.render.safe import printable

            print("--- target stderr (tail, first run) ---\n" + printable(tail[-1500:]), file=sys.stderr)
        return EXIT_TARGET
    return EXIT_OK


def _exports(sweep, args) -> None:
    from auditor.render import sweep_csv, sweep_json, sweep_markdown

    for path, render in ((args.export_json, sweep_json.render), (args.export_markdown, sweep_markdown.render),
                         (args.export_csv, sweep_csv.render)):
        if path:
            write_file(path, render(sweep))
    if args.plot:
        from auditor.render import sweep_plot

        try:
            sweep_plot.render(sweep, args.plot)
        except sweep_plot.PlotUnavailable as exc:
            raise UsageError(str(exc)) from exc
        except OSError as exc:
            raise UsageError(f"{args.plot}: cannot write: {exc.strerror or exc}") from exc


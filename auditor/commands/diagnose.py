"""``qg-audit diagnose``: the whole method in one command, stopping where it says to stop.

    qg-audit diagnose [--current B] [--values a,b,c] [--name batch] [--phases either|auto|timer]
                      [--project DIR] [--duration S] [--timeout S] [--sweep-steps N]
                      [--verify-duration S] [--format text|json] [-o FILE]
                      [--report FILE.html|FILE.md] [--trace FILE.json] -- COMMAND ... [{batch}] ...

profile -> trainer wait distribution -> (sampling-bound with forward + transfer dominant) a
one-variable batch sweep over {batch} -> scan of the project (judged for the files the
command runs) -> verify of the worker count the command asks for. The method itself lives
in auditor.method.run; this module is flags and rendering. Exit codes: 0 nothing wrong
found, 1 a problem found (a scan warning or error in what the command runs, or a failing
verify verdict), 2 usage error, 3 the target failed (could not start, crashed, or sent no
timing). See docs/diagnose.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from auditor.exitcodes import UsageError
from auditor.render import deliver, write_file

DEFAULT_DURATION = 20.0  # seconds of each profile / sweep run after its first step: plenty of steps


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("exit codes: 0 nothing wrong found, 1 a problem found (scan finding or failing verify), 2 usage "
                     "error, 3 the target failed. See docs/diagnose.md.")
    var = parser.add_argument_group("the batch variable ({NAME} in COMMAND)")
    var.add_argument("--name", default="batch", metavar="NAME", help="placeholder name in COMMAND (default batch)")
    var.add_argument("--current", metavar="B", help="the value to profile and verify with (default: the first of --values)")
    var.add_argument("--values", metavar="LIST", help="sweep these comma-separated values (default: doublings of --current)")
    var.add_argument("--max-doublings", type=int, default=5, metavar="N",
                     help="doubling sweep: at most N values beyond --current (default 5)")
    parser.add_argument("--phases", choices=("either", "auto", "timer"), default="either",
                        help="either (default): the target's SamplingTimer phases when it has them, else automatic; "
                             "auto: always the hook's automatic phases; timer: only SamplingTimer")
    parser.add_argument("--project", metavar="DIR",
                        help="project to scan (default: the directory of the first .py file in COMMAND, else the cwd)")
    parser.add_argument("--duration", type=float, default=DEFAULT_DURATION, metavar="S",
                        help="end each profile / sweep run S seconds after its first timed step (default "
                             f"{DEFAULT_DURATION:g}: a training job may never end by itself; 0 = when it exits)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="safety net per run: end it after S seconds and call it timed out (default 600)")
    parser.add_argument("--ready-timeout", type=float, default=120.0, metavar="S",
                        help="per run: wait at most S seconds after the launch for its first step (profile, sweep) "
                             "or its workers (verify) (default 120)")
    parser.add_argument("--sweep-steps", type=int, metavar="N", help="sweep: measure N steady steps per timer per value")
    parser.add_argument("--sweep-runs", type=int, default=3, metavar="R",
                        help="sweep: fresh runs per value (default 3; with 1 the sweep states no plateau)")
    parser.add_argument("--warmup-steps", type=int, metavar="K", help="steps excluded as warm-up per timer")
    parser.add_argument("--verify-duration", type=float, default=8.0, metavar="S",
                        help="verify: watch the target this long (default 8; 0 = until it exits)")
    parser.add_argument("--verify-warmup", type=float, default=1.0, metavar="S",
                        help="verify: seconds after the workers are ready not counted (default 1)")
    th = parser.add_argument_group("decision thresholds (as qg-audit profile, docs/profile.md)")
    th.add_argument("--env-share", type=float, metavar="X", help="env >= X of step time: env-bound (default 0.5)")
    th.add_argument("--wait-low", type=float, metavar="X", help="wait ratio p50 < X: trainer-bound (default 0.2)")
    th.add_argument("--fx-share", type=float, metavar="X", help="forward+transfer >= X: forward-bound (default 0.5)")
    th.add_argument("--plateau-gain", type=float, default=0.05, metavar="X",
                    help="sweep: a gain below X per doubling is a plateau (default 0.05)")
    out = parser.add_argument_group("output")
    out.add_argument("--format", choices=("text", "json"), default="text")
    out.add_argument("-o", "--output", metavar="FILE", help="write the text or JSON to FILE instead of stdout")
    out.add_argument("--report", action="append", metavar="FILE",
                     help="also write a shareable report: FILE.html (self-contained) or FILE.md (repeatable)")
    out.add_argument("--trace", metavar="FILE.json", help="also write the profile run's phases as a Chrome trace")
    out.add_argument("--keep-output", metavar="DIR",
                     help="keep every run's whole stdout, stderr and reports under DIR (profile/, sweep/..., verify/)")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the sampler / training command")


def _default_project(cmd: list[str]) -> str:
    for arg in cmd[1:]:
        if arg.endswith(".py") and os.path.isfile(arg):
            return os.path.dirname(arg) or "."
    return "."


def settings(args):
    from auditor.method.run import Settings, has_placeholder
    from auditor.profiling import Thresholds

    cmd = list(args.cmd or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("nothing to diagnose: give -- COMMAND ..., e.g. qg-audit diagnose --current 32 -- "
                         "python sampler.py --batch {batch}")
    values = None
    if args.values is not None:
        values = [v.strip() for v in args.values.split(",")]
        if not all(values) or len(set(values)) != len(values):
            raise UsageError(f"--values {args.values!r}: give distinct comma-separated values, e.g. --values 16,32,64")
    current = args.current if args.current is not None else (values[0] if values else None)
    if has_placeholder(cmd, args.name) and current is None:
        raise UsageError(f"the command uses {{{args.name}}}: give --current B (the value to profile and verify with) "
                         "or --values a,b,c")
    if values and not has_placeholder(cmd, args.name):
        raise UsageError(f"--values given but the command never uses {{{args.name}}}; put it where the value goes")
    if args.duration is not None and args.duration < 0:
        raise UsageError(f"--duration must be >= 0 seconds (0: until the target exits), got {args.duration:g}")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {args.timeout:g}")
    if args.verify_duration < 0 or args.verify_warmup < 0:
        raise UsageError("--verify-duration and --verify-warmup must be >= 0")
    if args.ready_timeout <= 0:
        raise UsageError(f"--ready-timeout must be > 0 seconds, got {args.ready_timeout:g}")
    from auditor.profiling.launch import check_window

    check_window(args.verify_warmup, args.verify_duration, warmup_flag="--verify-warmup",
                 duration_flag="--verify-duration")
    for flag, v, lo in (("sweep-steps", args.sweep_steps, 1), ("warmup-steps", args.warmup_steps, 0),
                        ("max-doublings", args.max_doublings, 1), ("sweep-runs", args.sweep_runs, 1)):
        if v is not None and v < lo:
            raise UsageError(f"--{flag} must be an integer >= {lo}, got {v}")
    th = Thresholds()
    for key in ("env_share", "wait_low", "fx_share"):
        if getattr(args, key) is not None:
            setattr(th, key, getattr(args, key))
    try:
        th.validate()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if not 0 <= args.plateau_gain < 1:
        raise UsageError(f"--plateau-gain must be in [0, 1), got {args.plateau_gain:g}")
    project = args.project or _default_project(cmd)
    if not os.path.exists(project):
        raise UsageError(f"--project {project}: no such file or directory")
    return Settings(command=cmd, name=args.name, current=current, values=values, max_doublings=args.max_doublings,
                    phases=args.phases, project=project, duration=args.duration or None, timeout=args.timeout,
                    sweep_steps=args.sweep_steps, warmup_steps=args.warmup_steps,
                    verify_duration=args.verify_duration, verify_warmup=args.verify_warmup, thresholds=th,
                    plateau_gain=args.plateau_gain, ready_timeout=args.ready_timeout, sweep_runs=args.sweep_runs,
                    keep_output=args.keep_output)


def _check_reports(paths: list[str]) -> None:
    for p in paths:
        if Path(p).suffix.lower() not in (".html", ".htm", ".md"):
            raise UsageError(f"--report {p}: the name must end in .html or .md")
        parent = Path(p).expanduser().resolve().parent
        if not parent.is_dir():
            raise UsageError(f"--report {p}: directory {parent} does not exist")


def run(args) -> int:
    s = settings(args)
    reports = list(args.report or [])
    _check_reports(reports)
    if args.trace and not Path(args.trace).expanduser().resolve().parent.is_dir():
        raise UsageError(f"--trace {args.trace}: directory does not exist")
    if args.keep_output:
        from auditor.commands.verify import check_output_dir

        check_output_dir(args.keep_output)

    from auditor.method.run import run_method
    from auditor.runtime.signals import terminating_signals

    def say(line: str) -> None:
        # progress lines quote file names, phase names and the target's errors: escaped, and a
        # newline inside one still starts with this prefix (never a forged "::error" line)
        from auditor.render.safe import printable

        print("qg-audit diagnose: " + printable(line).replace("\n", "\nqg-audit diagnose: "), file=sys.stderr,
              flush=True)

    # Each launch ends its own tree (run_target); this also turns a SIGTERM or SIGHUP that lands
    # between two launches into the same clean exit 130 as Ctrl-C.
    with terminating_signals():
        d = run_method(s, say)
    if args.format == "json":
        text = json.dumps(d.to_json(), indent=2) + "\n"
    else:
        from auditor.render.diagnose_text import render

        text = render(d)
    deliver(text, args.output)
    for path in reports:
        if Path(path).suffix.lower() == ".md":
            from auditor.render.diagnose_md import render as render_md

            write_file(path, render_md(d))
        else:
            from auditor.render.diagnose_html import render as render_html

            write_file(path, render_html(d))
    if args.trace:
        from auditor.profiling import auto
        from auditor.render.trace import render as render_trace

        records = auto.split(d.profile_records)[0 if d.phases_source == "auto" else 1]
        write_file(args.trace, json.dumps(render_trace(records)) + "\n")
    return d.exit_code

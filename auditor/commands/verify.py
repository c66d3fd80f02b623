"""qg-audit verify: launch the sampler, count its workers and threads, check what they report.

    qg-audit verify (--expect-workers N | --expect-from FILE:dotted.key | --expect-threads N)
        [--expect-threads N] [--expect-per-rank N] [--match REGEX] [--warmup S] [--duration S] [--timeout S]
        [--ready-timeout S] [--interval S] [--no-hook] [--keep-output DIR] [--format text|json] [-o FILE]
        -- COMMAND...

Exit codes: 0 pass, 1 verification failed, 2 usage error, 3 target could not start or
failed before a verdict. The work is done by auditor.runtime (a library shared with
profile and sweep); this module only parses flags, runs, judges and renders.
"""

from __future__ import annotations

import argparse

from auditor.exitcodes import UsageError
from auditor.render import deliver, json_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    exp = parser.add_mutually_exclusive_group()
    exp.add_argument("--expect-workers", type=int, metavar="N", help="worker processes that should run")
    exp.add_argument("--expect-from", metavar="FILE:KEY",
                     help="read the expected count from a YAML/TOML/JSON config, e.g. conf.yaml:rollout.num_workers")
    parser.add_argument("--expect-threads", type=int, metavar="N",
                        help="compute threads each worker (each rank, or the target when there are no workers) "
                             "should run; may be given alone")
    parser.add_argument("--expect-per-rank", type=int, metavar="N",
                        help="worker processes (DataLoader, env workers) expected inside each rank")
    parser.add_argument("--match", metavar="REGEX", help="count as workers only processes whose name/cmdline match")
    parser.add_argument("--warmup", type=float, default=1.0, metavar="S",
                        help="seconds after the job is ready not counted in the steady window (default 1)")
    parser.add_argument("--duration", type=float, default=8.0, metavar="S",
                        help="watch this long once the job is ready, then end it normally; 0 = until it exits "
                             "(default 8)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="end the target this long after the launch when --duration is 0 (default 600)")
    parser.add_argument("--ready-timeout", type=float, default=None, metavar="S",
                        help="wait at most this long after the launch for the job to be ready: the expected "
                             "workers present and reporting, or a serial backend created (default 120)")
    parser.add_argument("--keep-output", metavar="DIR",
                        help="keep the target's whole stdout, stderr and reports in DIR (stdout.log, stderr.log, "
                             "reports.jsonl)")
    parser.add_argument("--interval", type=float, metavar="S", help="census poll interval (default 0.5)")
    parser.add_argument("--no-hook", action="store_true", help="do not load the automatic sitecustomize hook")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                        help="count Ray actors through Ray's state API (ADDRESS default: auto)")
    parser.add_argument("--per-node", type=int, metavar="N", help="with --ray: actors expected on each node")
    # dest is not "command": the CLI sets args.command to the subcommand name after parsing
    parser.add_argument("target_command", nargs=argparse.REMAINDER, metavar="COMMAND",
                        help="-- COMMAND ... (the sampler to launch)")


def run(args: argparse.Namespace) -> int:
    command = list(args.target_command)
    if command and command[0] == "--":
        command = command[1:]
    args.command_argv = command
    if args.keep_output:
        check_output_dir(args.keep_output)
    if args.ray is not None:
        try:
            from auditor.runtime.ray_verify import run as ray_run
        except ModuleNotFoundError as exc:
            if exc.name != "auditor.runtime.ray_verify":
                raise
            raise UsageError("--ray is not available in this build of qg-audit") from None
        return ray_run(args)
    if args.expect_workers is None and not args.expect_from and args.expect_threads is None \
            and args.expect_per_rank is None:
        raise UsageError("one of --expect-workers N, --expect-from FILE:KEY, --expect-threads N or "
                         "--expect-per-rank N is required")
    if args.expect_threads is not None and args.expect_threads < 1:
        raise UsageError(f"--expect-threads must be >= 1, got {args.expect_threads}")
    if args.expect_per_rank is not None and args.expect_per_rank < 0:
        raise UsageError(f"--expect-per-rank must be >= 0, got {args.expect_per_rank}")
    if not command:
        raise UsageError("no command to launch: put it after '--', e.g. qg-audit verify --expect-workers 4 "
                         "-- python sampler.py")
    for flag in ("warmup", "duration", "timeout"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag} must be >= 0")
    if args.ready_timeout is not None and args.ready_timeout <= 0:
        raise UsageError("--ready-timeout must be > 0")
    from auditor.runtime.check import check_window

    check_window(args.warmup, args.duration)
    if args.interval is not None and args.interval <= 0:
        raise UsageError("--interval must be > 0")
    if args.match:
        import re

        try:
            re.compile(args.match)
        except re.error as exc:
            raise UsageError(f"--match: bad regular expression: {exc}") from None

    from auditor.render.status import StatusLine
    from auditor.runtime.check import verify_command
    from auditor.runtime.expect import expectation
    from auditor.runtime.ready import DEFAULT_READY_TIMEOUT

    exp = expectation(args)
    if exp.workers is not None and exp.workers < 1:
        raise UsageError(f"{exp.source}: expected worker count must be >= 1, got {exp.workers}")
    result, verdict = verify_command(
        command, exp, duration=args.duration or None, warmup=args.warmup, timeout=args.timeout or None,
        ready_timeout=args.ready_timeout if args.ready_timeout is not None else DEFAULT_READY_TIMEOUT,
        interval=args.interval, hook=not args.no_hook, match=args.match,
        on_wait=StatusLine(prefix="qg-audit verify"), keep_output=args.keep_output,
    )
    if args.format == "json":
        from auditor.render.verify_json import render

        text = json_text(render(result, exp, verdict, hook=not args.no_hook))
    else:
        from auditor.render.verify_text import render

        text = render(result, exp, verdict, hook=not args.no_hook)
    deliver(text, args.output)
    return verdict.exit_code


def check_output_dir(path: str) -> None:
    """--keep-output DIR: a directory that exists or can be made, checked before the launch."""
    import os

    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--keep-output {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--keep-output {path}: cannot create it: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"--keep-output {path}: not writable")

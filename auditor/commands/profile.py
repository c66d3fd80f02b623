"""``qg-audit profile``: where a sampling step spends its time, and whether training waits.

    qg-audit profile [--auto] [--warmup-steps K | --warmup-s S] [--window N] [--duration S]
                     [--format text|json] [-o FILE] -- COMMAND ...
    qg-audit profile [--auto] --from run.jsonl

Live mode launches COMMAND through the shared profiling API (auditor.profiling.launch), which
waits for the job's first timed step before ``--duration`` counts, collects the ``"timing"``
records the target's SamplingTimer sends, and summarises them. Offline mode reads the same
records from a JSON-lines file (``--save-reports`` writes one). ``--auto`` needs no
SamplingTimer: the start-up hook times env steps, forward passes, transfers and trainer waits
itself (auditor/worker/hook/_qg_audit_phases.py), keeps training apart and samples the
sampling threads' stacks.
Exit codes: 0 profile produced; 2 usage/config error (also: --from file without timing
records); 3 the target could not start, or ended without sending any timing record.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from auditor.exitcodes import EXIT_OK, EXIT_TARGET, UsageError
from auditor.profiling.auto import DEFAULT_STACKS_MS
from auditor.render import deliver, write_file
from auditor.render.safe import one_line

CONFIG_KEYS = ("warmup_steps", "warmup_s", "window", "env_share", "wait_low", "fx_share", "spike_factor",
               "env_phases", "forward_phases", "transfer_phases")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("exit codes: 0 profile produced, 2 usage or configuration error, 3 the target could not "
                     "start or sent no timing record. Thresholds also come from [tool.qg-audit.profile] in "
                     "./pyproject.toml (or --config); flags win. See docs/profile.md.")
    parser.add_argument("--auto", action="store_true",
                        help="time env / forward / transfer / trainer wait automatically, without SamplingTimer "
                             "in the target (gymnasium, SB3, tianshou, torchrl, torch, queues, ray)")
    src = parser.add_argument_group("source (one of)")
    src.add_argument("--from", dest="source", metavar="FILE",
                     help="profile the timing records in this JSON-lines file instead of running a command")
    warm = parser.add_mutually_exclusive_group()
    warm.add_argument("--warmup-steps", type=int, metavar="K",
                      help="exclude each timer's first K steps (default: the warmup_steps its SamplingTimer declared)")
    warm.add_argument("--warmup-s", type=float, metavar="S",
                      help="exclude steps that ended within S seconds of their timer's start")
    parser.add_argument("--window", type=int, metavar="N",
                        help="window size in steps for the wait-ratio distribution and spikes (default 50)")
    parser.add_argument("--duration", type=float, metavar="S",
                        help="end the target S seconds after its first timed step (a normal end; default: when it "
                             "exits)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="end the target S seconds after the launch and say it timed out (a safety net)")
    parser.add_argument("--ready-timeout", type=float, metavar="S",
                        help="with --duration: give up when no step came S seconds after the launch (default 120; a "
                             "torch + gymnasium job takes 10-40 s to import and build its environments)")
    parser.add_argument("--stack-interval", type=float, metavar="MS",
                        help="--auto: sample the sampling threads' stacks every MS milliseconds to explain the "
                             f"untimed share (default {DEFAULT_STACKS_MS}; 0 = off)")
    parser.add_argument("--keep-output", metavar="DIR",
                        help="keep the target's whole stdout, stderr and reports in DIR")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE instead of stdout")
    parser.add_argument("--save-reports", metavar="FILE",
                        help="live mode: also write the raw report records (JSON lines) for a later --from")
    th = parser.add_argument_group("diagnosis thresholds (docs/profile.md)")
    th.add_argument("--env-share", type=float, metavar="X",
                    help="env phases >= X of step time: environment-bound (default 0.5)")
    th.add_argument("--wait-low", type=float, metavar="X",
                    help="trainer wait ratio p50 < X: trainer-bound (default 0.2)")
    th.add_argument("--fx-share", type=float, metavar="X",
                    help="forward+transfer >= X of step time: forward/transfer-bound (default 0.5)")
    th.add_argument("--spike-factor", type=float, metavar="F",
                    help="a step slower than F x its timer's median is a spike (default 3)")
    parser.add_argument("--config", metavar="PYPROJECT",
                        help="read [tool.qg-audit.profile] from this file (default ./pyproject.toml when present)")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help="the sampler / training command to launch")


def _settings(args) -> dict:
    """[tool.qg-audit.profile] from --config or ./pyproject.toml, keys validated."""
    path = Path(args.config) if args.config else Path.cwd() / "pyproject.toml"
    if args.config and not path.is_file():
        raise UsageError(f"{path}: no such file (--config)")
    if not path.is_file():
        return {}
    from auditor.settings import settings_in

    table = settings_in(path)
    prof = table.get("profile", {})
    if not isinstance(prof, dict):
        raise UsageError(f"{path}: [tool.qg-audit] profile must be a table ([tool.qg-audit.profile])")
    for key in prof:
        if key not in CONFIG_KEYS:
            raise UsageError(f"{path}: [tool.qg-audit.profile] unknown key {key!r}; "
                             f"known keys: {', '.join(CONFIG_KEYS)}")
    return {"origin": str(path), **prof}


def _options(args):
    """Warm-up, window and thresholds from flags over config over defaults."""
    from auditor.profiling import DEFAULT_WINDOW, Thresholds

    conf = _settings(args)
    origin = conf.pop("origin", "")
    warmup_steps, warmup_s = args.warmup_steps, args.warmup_s
    if warmup_steps is None and warmup_s is None:
        warmup_steps, warmup_s = conf.get("warmup_steps"), conf.get("warmup_s")
        if warmup_steps is not None and warmup_s is not None:
            raise UsageError(f"{origin}: [tool.qg-audit.profile] set warmup_steps or warmup_s, not both")
    if warmup_steps is not None and (not isinstance(warmup_steps, int) or warmup_steps < 0):
        raise UsageError(f"warm-up steps must be an integer >= 0, got {warmup_steps!r}")
    if warmup_s is not None and (not isinstance(warmup_s, (int, float)) or warmup_s < 0):
        raise UsageError(f"warm-up seconds must be >= 0, got {warmup_s!r}")
    window = args.window if args.window is not None else conf.get("window", DEFAULT_WINDOW)
    if not isinstance(window, int) or window < 1:
        raise UsageError(f"--window must be an integer >= 1, got {window!r}")
    th = Thresholds()
    for key in Thresholds.keys():
        if key in conf:
            setattr(th, key, conf[key])
        flag = getattr(args, key, None)
        if flag is not None:
            setattr(th, key, flag)
    try:
        th.validate()
    except ValueError as exc:
        where = f"{origin}: [tool.qg-audit.profile] or flags" if origin else "flags"
        raise UsageError(f"{where}: {exc}") from exc
    return warmup_steps, warmup_s, window, th


def _read_jsonl(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc} (--from)") from exc
    records, bad = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad.append(n)
            continue
        if isinstance(rec, dict):
            records.append(rec)
        else:
            bad.append(n)
    if bad:
        where = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        print(f"qg-audit profile: warning: {path}: {len(bad)} line(s) are not JSON objects and were skipped "
              f"(line {where}); a writer killed mid-line leaves one", file=sys.stderr)
    return records


def run(args) -> int:
    cmd = list(args.cmd or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if args.source and cmd:
        raise UsageError("give either --from FILE or -- COMMAND, not both")
    if not args.source and not cmd:
        raise UsageError("nothing to profile: give -- COMMAND ... or --from FILE")
    for flag in ("duration", "timeout", "ready_timeout"):
        v = getattr(args, flag)
        if v is not None and v <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be > 0, got {v:g}")
    if args.stack_interval is not None and args.stack_interval < 0:
        raise UsageError(f"--stack-interval must be >= 0 ms, got {args.stack_interval:g}")
    live_only = (args.duration or args.timeout or args.save_reports or args.ready_timeout or args.keep_output)
    if args.source and live_only:
        raise UsageError("--duration, --timeout, --ready-timeout, --keep-output and --save-reports apply to a "
                         "launched COMMAND, not --from")
    warmup_steps, warmup_s, window, th = _options(args)

    from auditor.profiling import NoTimingRecords
    from auditor.profiling.launch import build

    extra: dict = {}
    if args.source:
        path = Path(args.source)
        records = _read_jsonl(path)
        extra["source"] = {"from": str(path), "records": len(records)}
        header = f"qg-audit profile: {path} ({len(records)} records)"
        try:
            prof = build(records, args.auto, warmup_steps, warmup_s, window, th)
        except NoTimingRecords:
            from auditor.profiling.launch import no_records_hint

            raise UsageError(f"{path}: {no_records_hint(args.auto)}")
    else:
        from auditor.profiling.launch import DEFAULT_READY_TIMEOUT, attach_run, check_window, launch, target_failure
        from auditor.render.status import StatusLine

        check_window(warmup_s, args.duration, warmup_flag="--warmup-s")
        if args.keep_output:
            from auditor.commands.verify import check_output_dir

            check_output_dir(args.keep_output)
        stacks = DEFAULT_STACKS_MS if args.stack_interval is None else args.stack_interval
        result = launch(cmd, auto=args.auto, duration=args.duration, timeout=args.timeout,
                        warmup_steps=warmup_steps, stacks_ms=stacks, on_wait=StatusLine(prefix="qg-audit profile"),
                        ready_timeout=args.ready_timeout or DEFAULT_READY_TIMEOUT, keep_output=args.keep_output)
        if args.save_reports:
            write_file(args.save_reports, "".join(json.dumps(r) + "\n" for r in result.reports))
        target = {"command": cmd, "returncode": result.returncode, "duration_s": result.duration_s,
                  "timed_out": result.timed_out, "ended_by": _ended_by(result, args),
                  "teardown_s": result.teardown_s, "ready": result.ready.to_json(),
                  "stdout_tail": result.stdout_tail[-2000:], "stderr_tail": result.stderr_tail[-2000:]}
        extra["target"] = target
        if not result.started:
            print(one_line(f"qg-audit profile: error: {result.error or 'the target could not start'}"), file=sys.stderr)
            return EXIT_TARGET
        try:
            prof = build(result.reports, args.auto, warmup_steps, warmup_s, window, th)
        except NoTimingRecords:
            print(one_line(f"qg-audit profile: error: {target_failure(result, args.auto)}"), file=sys.stderr)
            _print_tails(result)
            return EXIT_TARGET
        attach_run(prof, result)
        if result.returncode not in (None, 0):
            prof.notes.append(f"the target exited with code {result.returncode} after {result.duration_s:.1f} s and "
                              f"{prof.steps} steady steps; figures cover what it sent before (its output tail is "
                              "on stderr)")
            _print_tails(result)
        if result.timed_out:
            prof.notes.append(f"the target was ended by --timeout {args.timeout:g} s")
        header = f"qg-audit profile: {' '.join(cmd)} ({_ran(result, target['ended_by'])})"
    if args.auto:
        extra["mode"] = "auto"

    if args.format == "json":
        from auditor.render.profile_json import render as render_json

        text = render_json(prof, extra)
    else:
        from auditor.render.profile_text import render as render_text

        text = render_text(prof, header)
    deliver(text, args.output)  # -o FILE or stdout, with what came from the target escaped
    return EXIT_OK


def _ran(result, ended_by: str) -> str:
    """How long it ran, as measured: launch to its end, readiness, the teardown apart."""
    ready = result.ready
    when = (f"ready at {ready.at:.1f} s: {ready.why}" if ready.at is not None else "never ready")
    tear = f"; ending its tree took {result.teardown_s:.1f} s more" if result.teardown_s >= 0.05 else ""
    return f"ran {result.duration_s:.1f} s, {ended_by}; {when}{tear}"


def _print_tails(result) -> None:
    """The target's own output under a failure: what it wrote before qg-audit began to end it."""
    from auditor.render.safe import printable

    for name, tail in (("stderr", result.stderr_tail), ("stdout", result.stdout_tail)):
        lines = tail.strip().splitlines()[-15:]
        if lines:
            print(f"--- target {name} (last {len(lines)} lines) ---\n" + printable("\n".join(lines)), file=sys.stderr)


def _ended_by(result, args) -> str:
    if result.timed_out:
        return "timeout"
    if result.ready.timed_out:
        return "ready-timeout"
    if result.returncode is None:
        return "duration" if args.duration else "qg-audit"
    return f"exit {result.returncode}"

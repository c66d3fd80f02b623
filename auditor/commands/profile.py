"""``qg-audit profile``: where a sampling step spends its time, and whether training waits.

    qg-audit profile [--auto] [--warmup-steps K | --warmup-s S] [--window N] [--duration S]
                     [--format text|json] [-o FILE] -- COMMAND ...
    qg-audit profile [--auto] --from run.jsonl

Live mode launches COMMAND through the shared runtime (auditor.runtime.session.run_target),
collects the ``"timing"`` records the target's SamplingTimer sends, and summarises them.
Offline mode reads the same records from a JSON-lines file (``--save-reports`` writes one).
``--auto`` needs no SamplingTimer: the start-up hook times env steps, forward passes,
transfers and trainer waits itself (auditor/worker/hook/_qg_audit_phases.py).
Exit codes: 0 profile produced; 2 usage/config error (also: --from file without timing
records); 3 the target could not start, or ended without sending any timing record.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from auditor.exitcodes import EXIT_OK, EXIT_TARGET, UsageError
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
    parser.add_argument("--duration", type=float, metavar="S", help="end the target after S seconds (a normal end)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="end the target after S seconds and say it timed out (a safety net)")
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
    for flag in ("duration", "timeout"):
        v = getattr(args, flag)
        if v is not None and v <= 0:
            raise UsageError(f"--{flag} must be > 0, got {v:g}")
    if args.source and (args.duration or args.timeout or args.save_reports):
        raise UsageError("--duration, --timeout and --save-reports apply to a launched COMMAND, not --from")
    warmup_steps, warmup_s, window, th = _options(args)

    from auditor.profiling import NoTimingRecords

    extra: dict = {}
    if args.source:
        path = Path(args.source)
        records = _read_jsonl(path)
        extra["source"] = {"from": str(path), "records": len(records)}
        header = f"qg-audit profile: {path} ({len(records)} records)"
        try:
            prof = build(records, args.auto, warmup_steps, warmup_s, window, th)
        except NoTimingRecords:
            raise UsageError(f"{path}: {_no_records_hint(args.auto)}")
    else:
        result = launch(cmd, auto=args.auto, duration=args.duration, timeout=args.timeout,
                        warmup_steps=warmup_steps)
        if args.save_reports:
            write_file(args.save_reports, "".join(json.dumps(r) + "\n" for r in result.reports))
        target = {"command": cmd, "returncode": result.returncode, "duration_s": result.duration_s,
                  "timed_out": result.timed_out, "ended_by": _ended_by(result, args)}
        extra["target"] = target
        if not result.started:
            print(one_line(f"qg-audit profile: error: {result.error or 'the target could not start'}"), file=sys.stderr)
            return EXIT_TARGET
        try:
            prof = build(result.reports, args.auto, warmup_steps, warmup_s, window, th)
        except NoTimingRecords:
            print(one_line(f"qg-audit profile: error: {target_failure(result, args.auto)}"), file=sys.stderr)
            tail = result.stderr_tail.strip()
            if tail:
                from auditor.render.safe import printable

                print("--- target stderr (tail) ---\n" + printable(tail[-2000:]), file=sys.stderr)
            return EXIT_TARGET
        if result.returncode not in (None, 0):
            prof.notes.append(f"the target exited with code {result.returncode} after {prof.steps} steady steps; "
                              "figures cover what it sent before")
        if result.timed_out:
            prof.notes.append(f"the target was ended by --timeout {args.timeout:g} s")
        header = f"qg-audit profile: {' '.join(cmd)} (ran {result.duration_s:.1f} s, {target['ended_by']})"
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


def launch(cmd: list[str], *, auto: bool, duration: float | None = None, timeout: float | None = None,
           warmup_steps: int | None = None, cwd: str | None = None):
    """Run the target through the shared runtime; with ``auto`` the hook times its phases."""
    from auditor.profiling import auto as auto_mod
    from auditor.runtime.session import run_target

    if not auto:
        return run_target(cmd, duration=duration, timeout=timeout, hook=False, cwd=cwd)
    k = auto_mod.DEFAULT_WARMUP_STEPS if warmup_steps is None else warmup_steps
    return run_target(cmd, duration=duration, timeout=timeout, hook=True, cwd=cwd, env={auto_mod.ENV_VAR: str(k)})


def build(records: list[dict], auto: bool, warmup_steps, warmup_s, window, th):
    """The profile of the automatic records (``auto``) or of the SamplingTimer ones."""
    from auditor.profiling import auto as auto_mod
    from auditor.profiling import summarize

    auto_recs, manual_recs = auto_mod.split(records)
    chosen = auto_recs if auto else manual_recs
    prof = summarize(chosen, warmup_steps=warmup_steps, warmup_s=warmup_s, window=window, thresholds=th)
    if auto:
        manual = any(r.get("type") == "timing" for r in manual_recs)
        prof.notes[:0] = auto_mod.notes(records, manual)
    return prof


def _no_records_hint(auto: bool) -> str:
    if auto:
        return ("no automatic timing records with steps: --auto counts a sampling step per environment step "
                "(gymnasium Env/VectorEnv, SB3 VecEnv, tianshou, torchrl); record with qg-audit profile --auto "
                "--save-reports")
    return ("no timing records (type \"timing\") with steps; instrument the sampler with "
            "auditor.timing.SamplingTimer and record with qg-audit profile --save-reports")


def target_failure(result, auto: bool) -> str:
    """One line: why a live run gave no profile."""
    why = (f"exited with code {result.returncode}" if result.returncode not in (None, 0)
           else "timed out" if result.timed_out else "ran")
    if not auto:
        return (f"the target {why} without sending any timing record; is auditor.timing.SamplingTimer used "
                "and is auditor importable in the target? (or try --auto)")
    if result.hook_active is False:
        return f"the target {why}, but the hook could not load in it: " + "; ".join(result.notes)
    return (f"the target {why} without an environment step the hook could time (--auto times gymnasium, SB3, "
            "tianshou and torchrl env steps); time it with auditor.timing.SamplingTimer instead")


def _ended_by(result, args) -> str:
    if result.timed_out:
        return "timeout"
    if result.returncode is None:
        return "duration" if args.duration else "qg-audit"
    return f"exit {result.returncode}"


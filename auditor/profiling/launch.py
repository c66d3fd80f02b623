"""Launch a target for profiling and build its profile: the API ``profile``, ``diagnose`` and
anything else that profiles a command share (commands stay thin; the method calls this too).

    from auditor.profiling.launch import launch, build, attach_run, target_failure
    result = launch(cmd, auto=True, duration=20, on_wait=StatusLine(prefix="qg-audit profile"))
    prof = build(result.reports, True, None, None, DEFAULT_WINDOW, Thresholds())  # NoTimingRecords
    attach_run(prof, result)  # readiness, threads and CPUs, the untimed share explained

The window counts from readiness (auditor.runtime.ready): the job is ready at its first
timed step (the first env step with automatic phases, the first SamplingTimer record
otherwise), so ``duration`` is measured sampling, not imports. While it waits a status line
says for what ("waiting for the first env step: 12 s, 4 workers importing").
"""

from __future__ import annotations

from typing import Callable

from auditor.profiling import auto as auto_mod
from auditor.runtime.check import check_window
from auditor.runtime.ready import DEFAULT_READY_TIMEOUT, Readiness

__all__ = ["launch", "build", "attach_run", "target_failure", "no_records_hint", "check_window",
           "DEFAULT_READY_TIMEOUT"]


def _first_step(source: str) -> Callable[[dict], bool]:
    """The readiness predicate: a timing record that carries a step (or a trainer row)."""
    def accept(rec: dict) -> bool:
        if rec.get("type") != "timing" or not (rec.get("steps") or rec.get("trainer")):
            return False
        if source == "either":
            return True
        return auto_mod.is_auto(rec) == (source == "auto")

    return accept


def readiness(source: str, timeout: float | None = DEFAULT_READY_TIMEOUT) -> Readiness:
    """``source``: "auto" (the hook's env steps), "timer" (SamplingTimer records) or "either"."""
    what = {"auto": "the first env step", "timer": "the first SamplingTimer step"}.get(
        source, "the first timed step")
    return Readiness(reports=_first_step(source), what=what, timeout=timeout)


def launch(cmd: list[str], *, auto: bool, duration: float | None = None, timeout: float | None = None,
           warmup_steps: int | None = None, cwd: str | None = None, source: str | None = None,
           ready_timeout: float | None = DEFAULT_READY_TIMEOUT, on_wait=None, keep_output: str | None = None,
           stacks_ms: float | None = auto_mod.DEFAULT_STACKS_MS, env: dict | None = None):
    """Run the target through the shared runtime, its window from its first timed step.

    ``auto``: the hook times the phases (and samples the sampling threads' stacks every
    ``stacks_ms``; None or 0: not). ``source``: which records make it ready (default: "auto"
    with ``auto``, else "timer")."""
    from auditor.runtime.session import run_target

    ready = readiness(source or ("auto" if auto else "timer"), ready_timeout)
    full = dict(env or {})
    if auto:
        full[auto_mod.ENV_VAR] = str(auto_mod.DEFAULT_WARMUP_STEPS if warmup_steps is None else warmup_steps)
        if stacks_ms:
            full[auto_mod.STACKS_VAR] = f"{stacks_ms:g}"
    return run_target(cmd, duration=duration, timeout=timeout, hook=auto, cwd=cwd, env=full or None, ready=ready,
                      on_wait=on_wait, keep_output=keep_output)


def build(records: list[dict], auto: bool, warmup_steps, warmup_s, window, th):
    """The profile of the automatic records (``auto``) or of the SamplingTimer ones."""
    from auditor.profiling import summarize

    auto_recs, manual_recs = auto_mod.split(records)
    chosen = auto_recs if auto else manual_recs
    prof = summarize(chosen, warmup_steps=warmup_steps, warmup_s=warmup_s, window=window, thresholds=th)
    if auto:
        manual = any(r.get("type") == "timing" for r in manual_recs)
        prof.notes[:0] = auto_mod.notes(records, manual)
    if not prof.steps and not (prof.wait and prof.wait.steps):
        prof.notes.append(_all_warmup(prof, warmup_steps, warmup_s))
    return prof


def _all_warmup(prof, warmup_steps, warmup_s) -> str:
    seen = len(prof.first_steps)
    how = (f"--warmup-s {warmup_s:g}" if warmup_s is not None else
           f"--warmup-steps {warmup_steps}" if warmup_steps is not None else "the warm-up each timer declared")
    return (f"no steady step: every step the run sent ({seen} shown under first steps) fell in the warm-up "
            f"({how}); run longer (--duration counts from the first step) or exclude fewer steps")


def attach_run(prof, result) -> None:
    """Add what the live run measured besides the records: readiness, threads and CPUs, the
    untimed share explained (auditor.profiling.explain)."""
    from auditor.profiling.explain import explain

    tc = result.thread_cpu or {}
    prof.run = {"ready": result.ready.to_json(), "window_start_s": result.window_start,
                "run_time_s": result.duration_s, "teardown_s": result.teardown_s,
                "cpu_limit": result.cpu_limit, "thread_cpu": tc, "load": _load()}
    prof.explanation = ex = explain(prof, result.reports, tc, result.cpu_limit)
    if ex is None:
        return
    if ex["contention"] is not None:
        prof.conclusion["message"] += "; " + ex["contention"]["message"]
    elif prof.conclusion.get("branch") == "inconclusive" and (ex["untimed"] or {}).get("functions"):
        top = ex["untimed"]["functions"][:3]
        prof.conclusion["message"] += (f"; the untimed {prof.other_share:.0%} is mostly "
                                       + ", ".join(f"{f['function'].split('  ')[0]} ({f['share']:.0%})" for f in top)
                                       + " (stack samples, see 'untimed, by function')")


def _load() -> list[float] | None:
    import os

    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def no_records_hint(auto: bool) -> str:
    if auto:
        return ("no automatic timing records with steps: --auto counts a sampling step per environment step "
                "(gymnasium Env/VectorEnv, SB3 VecEnv, tianshou, torchrl); record with qg-audit profile --auto "
                "--save-reports")
    return ("no timing records (type \"timing\") with steps; instrument the sampler with "
            "auditor.timing.SamplingTimer and record with qg-audit profile --save-reports")


def target_failure(result, auto: bool) -> str:
    """One line: why a live run gave no profile, as measured (readiness first)."""
    ready = result.ready
    waited = f" ({ready.status})" if ready.status else ""
    what = "env step the hook could time" if auto else "SamplingTimer step"
    if result.returncode not in (None, 0):
        why = f"exited with code {result.returncode} after {result.duration_s:.1f} s"
    elif result.timed_out:
        why = f"was ended by --timeout after {result.duration_s:.1f} s"
    elif ready.timed_out:
        return (f"the target sent no {what} within --ready-timeout {ready.timeout:g} s of the launch{waited}: it may "
                "still be importing or building its environments (raise --ready-timeout), or it steps them through "
                "a call the hook does not know" + _timer_hint(auto))
    elif result.returncode == 0:
        why = f"exited with code 0 after {result.duration_s:.1f} s"
    else:
        why = f"ran {result.duration_s:.1f} s"
    if result.hook_active is False and auto:
        return f"the target {why}, but the hook could not load in it: " + "; ".join(result.notes)
    if ready.at is None:
        return f"the target {why}, before it was ready: no {what} yet{waited}" + _timer_hint(auto)
    return f"the target {why} without sending a {what}" + _timer_hint(auto)


def _timer_hint(auto: bool) -> str:
    if auto:
        return ("; --auto times gymnasium, SB3, tianshou and torchrl env steps: a custom simulator needs "
                "auditor.timing.SamplingTimer")
    return "; is auditor.timing.SamplingTimer used and is auditor importable in the target? (or try --auto)"

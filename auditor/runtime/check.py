"""Verify a launched job: the readiness wait, the run and the verdict in one call.

``qg-audit verify`` is this plus flags and rendering; ``diagnose`` (and anything else that
needs a verdict on a command) calls it the same way:

    from auditor.runtime.check import verify_command
    from auditor.runtime.verdict import Expectation
    result, verdict = verify_command(["python", "train.py"], Expectation(workers=4))

Defaults are verify's: the window counts from readiness (auditor.runtime.ready).
"""

from __future__ import annotations

from typing import Callable

from auditor.runtime.ready import DEFAULT_READY_TIMEOUT, Readiness
from auditor.runtime.session import RunResult, run_target
from auditor.runtime.verdict import Expectation, Verdict, judge

DEFAULT_WARMUP = 1.0
DEFAULT_DURATION = 8.0


def check_window(warmup_s: float | None, duration: float | None, *, warmup_flag: str = "--warmup",
                 duration_flag: str = "--duration") -> None:
    """A steady window that cannot hold anything is a usage error, said before any launch:
    the warm-up and the duration both count from readiness, so a warm-up as long as the
    duration leaves nothing to judge."""
    from auditor.exitcodes import UsageError

    if warmup_s is not None and duration is not None and duration > 0 and warmup_s >= duration:
        raise UsageError(f"{warmup_flag} {warmup_s:g} leaves nothing of {duration_flag} {duration:g}: both count "
                         "from the moment the job is ready, so the steady window would be empty; give a "
                         f"{duration_flag} longer than {warmup_flag}")


def verify_command(command: list[str], exp: Expectation, *, duration: float | None = DEFAULT_DURATION,
                   warmup: float = DEFAULT_WARMUP, timeout: float | None = None,
                   ready_timeout: float | None = DEFAULT_READY_TIMEOUT, interval: float | None = None,
                   hook: bool = True, match: str | None = None, env: dict | None = None, cwd: str | None = None,
                   on_wait: Callable[[str | None], None] | None = None,
                   keep_output: str | None = None) -> tuple[RunResult, Verdict]:
    """Launch COMMAND, wait until it is ready for ``exp``, watch ``duration`` seconds after
    ``warmup`` (None: until it exits or ``timeout``), end its tree and judge it."""
    ready = Readiness(workers=exp.workers, timeout=ready_timeout)
    result = run_target(command, duration=duration, timeout=timeout, interval=interval, hook=hook, match=match,
                        env=env, cwd=cwd, warmup=warmup, ready=ready, on_wait=on_wait, keep_output=keep_output)
    return result, judge(result, exp, warmup=warmup)

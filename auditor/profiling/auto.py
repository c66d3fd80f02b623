"""Automatic phases (``profile --auto``): which records are the hook's, and what they say.

The hook (auditor/worker/hook/_qg_audit_phases.py) sends ``"timing"`` records in
SamplingTimer's format with ``source: "auto"``, one timer per thread (``auto/<thread>``),
plus cumulative ``calls`` (outermost timed calls per phase) and ``forward_modes``
(outermost forward calls with autograd on, under no_grad, under inference_mode).
"""

from __future__ import annotations

ENV_VAR = "QG_AUDIT_PHASES"  # set to the warm-up steps K to switch the hook's phase timing on
SOURCE = "auto"
DEFAULT_WARMUP_STEPS = 10  # auto timers declare this unless --warmup-steps/--warmup-s says otherwise


def is_auto(rec: dict) -> bool:
    return rec.get("type") == "timing" and rec.get("source") == SOURCE


def split(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """(records for an automatic profile, records for a SamplingTimer one).

    Both keep the non-timing records; each drops the other's timing records, so one run
    with both never counts a step twice.
    """
    auto = [r for r in records if r.get("type") != "timing" or is_auto(r)]
    manual = [r for r in records if not is_auto(r)]
    return auto, manual


def _latest(records: list[dict]) -> dict[tuple, dict]:
    """The last auto record of each (pid, timer): its counters are cumulative."""
    out: dict[tuple, dict] = {}
    for r in records:
        if is_auto(r):
            out[(r.get("pid"), r.get("timer"), r.get("t0"))] = r
    return out


def calls(records: list[dict]) -> dict[str, int]:
    """Outermost timed calls per phase (env, fwd, xfer, wait), summed over processes and threads."""
    total: dict[str, int] = {}
    for r in _latest(records).values():
        for k, v in (r.get("calls") or {}).items():
            if isinstance(v, int):
                total[k] = total.get(k, 0) + v
    return total


def notes(records: list[dict], manual_present: bool) -> list[str]:
    """What a person should know about an automatic profile, one line each."""
    out = []
    latest = _latest(records)
    n = calls(records)
    out.append("automatic phases: timed without code change: " + ", ".join(
        f"{n.get(k, 0)} {what}" for k, what in (("env", "env steps"), ("fwd", "outermost forward calls"),
                                                 ("xfer", "transfers"), ("wait", "trainer waits")))
        + "; anything else in a step is untimed")
    grad = no_grad = 0
    for r in latest.values():
        modes = r.get("forward_modes") or {}
        if (r.get("calls") or {}).get("env"):  # sampler threads only: a trainer's forward needs autograd
            grad += int(modes.get("grad") or 0)
            no_grad += int(modes.get("no_grad") or 0) + int(modes.get("inference_mode") or 0)
    if grad:
        out.append(f"forward: {grad} of {grad + no_grad} outermost forward calls in sampler threads ran with "
                   "autograd on; sampling needs no gradients: wrap the policy call in torch.no_grad() or "
                   "torch.inference_mode()")
    elif no_grad:
        out.append(f"forward: all {no_grad} outermost forward calls in sampler threads ran under no_grad or "
                   "inference_mode")
    if manual_present:
        out.append("the target's own SamplingTimer records were also received and are left out here "
                   "(profile without --auto shows them)")
    return out

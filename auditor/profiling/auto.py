"""Automatic phases (``profile --auto``): which records are the hook's, and what they say.

The hook (auditor/worker/hook/_qg_audit_phases.py) sends ``"timing"`` records in
SamplingTimer's format with ``source: "auto"``, one timer per thread (``auto/<thread>``),
plus cumulative ``calls`` (outermost timed calls per phase), ``forward_modes`` (sampling
forward calls with autograd on, under no_grad, under inference_mode: training forwards are
counted apart, in ``training``), the training inside each step (``training_rows``) and the
stack samples of the thread (``stacks``).
"""

from __future__ import annotations

ENV_VAR = "QG_AUDIT_PHASES"  # set to the warm-up steps K to switch the hook's phase timing on
STACKS_VAR = "QG_AUDIT_STACKS"  # set to an interval in ms to sample the sampling threads' stacks
DEFAULT_STACKS_MS = 20  # 50 samples a second: bench/bench_stacks.py measures what it costs
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
    trained = {"forwards": 0, "backward": 0, "optimizer_steps": 0, "spans": 0}
    for r in latest.values():
        modes = r.get("forward_modes") or {}
        if (r.get("calls") or {}).get("env"):  # sampler threads only: a trainer's forward needs autograd
            grad += _int(modes.get("grad"))
            no_grad += _int(modes.get("no_grad")) + _int(modes.get("inference_mode"))
            for k in trained:
                trained[k] += _int((r.get("training") or {}).get(k))
    apart = (f" ({trained['forwards']} training forward calls left out)" if trained["forwards"] else "")
    if grad:
        out.append(f"forward: {grad} of {grad + no_grad} sampling forward calls ran with autograd on{apart}; "
                   "sampling needs no gradients: wrap the policy call in torch.no_grad() or torch.inference_mode()")
    elif no_grad:
        out.append(f"forward: all {no_grad} sampling forward calls ran under no_grad or inference_mode{apart}")
    if trained["spans"]:
        out.append(f"training in the sampling thread: {trained['spans']} training span(s) ({trained['forwards']} "
                   f"forward, {trained['backward']} backward calls, {trained['optimizer_steps']} optimizer steps) "
                   "timed apart: samples/s and the phases are sampling time only; each span is a trainer step "
                   "whose wait is the sampling before it")
    if manual_present:
        out.append("the target's own SamplingTimer records were also received and are left out here "
                   "(profile without --auto shows them)")
    return out


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def stacks(series) -> dict | None:
    """The stack samples of all sampling timers, merged: {interval_ms, samples: {phase: n},
    top: [{phase, function, line, samples}], timers}; None when none was sent."""
    phases: dict[str, int] = {}
    keys: dict[tuple, int] = {}
    interval, timers = None, 0
    for s in series:
        st = s.stacks
        if not isinstance(st, dict) or not s.steps:
            continue
        timers += 1
        if isinstance(st.get("interval_ms"), (int, float)):
            interval = st["interval_ms"]
        for k, v in (st.get("phases") or {}).items():
            phases[str(k)] = phases.get(str(k), 0) + _int(v)
        for row in st.get("top") or []:
            if isinstance(row, list) and len(row) == 4:
                key = (str(row[0]), str(row[1]), str(row[2]))
                keys[key] = keys.get(key, 0) + _int(row[3])
    if not timers or not sum(phases.values()):
        return None
    top = [{"phase": k[0], "function": k[1], "line": k[2], "samples": n}
           for k, n in sorted(keys.items(), key=lambda kv: -kv[1])]
    return {"interval_ms": interval, "samples": phases, "total": sum(phases.values()), "top": top, "timers": timers}

"""Overhead of auditor.timing.SamplingTimer per phase measurement.

Compares, per timed phase, a bare ``time.perf_counter()`` pair (what a hand-written
timestamp costs) with the timer's ways of timing a phase, all around an empty body, and
prints the extra nanoseconds per phase measurement amortised over steps (step() and the
batched flushes included). Elapsed time is this process's CPU time (user + system,
``time.process_time_ns``), so other jobs on a loaded machine do not count against us; the
report file writes are system time and do count.
Run: ``python bench/bench_timing.py [--steps N] [--report] [--auto] [--compare OLD_TIMING_PY]``.
``--report`` measures under qg-audit's report channel (records written to a temp file).
``--auto`` measures the automatic phases' wrappers (auditor/worker/hook/_qg_audit_phases.py)
instead: the extra CPU time per wrapped call beyond the call itself, for each kind of
wrapper, on its outermost (timed) path and on its nested (pass-through) path, around a C
builtin (``abs``) and around a Python method (an env's ``step``). It prints the median and
the spread (min-max) over ``--repeat`` interleaved runs: on a loaded box read the medians.
``--compare FILE`` loads another version of auditor/worker/timing.py (e.g. ``git show
REV:auditor/worker/timing.py > old.py``) and times it against this one, interleaved run by
run in one process, so that load on a shared machine hits both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

PHASES = ("env", "fwd", "xfer")
CLOCK = time.process_time_ns  # CPU time of this process: robust to other load on the box
_DEVNULL = open(os.devnull, "w")  # standalone: the summary every 100 steps is computed, not shown


def bare(steps: int) -> float:
    pc = time.perf_counter
    acc = [0.0, 0.0, 0.0]
    t0 = CLOCK()
    for _ in range(steps):
        for i in range(3):
            a = pc()
            acc[i] += pc() - a
    return CLOCK() - t0


def with_phase(steps: int) -> float:
    from auditor.timing import SamplingTimer

    t = SamplingTimer(warmup_steps=0, stream=_DEVNULL)
    t0 = CLOCK()
    for _ in range(steps):
        for name in PHASES:
            with t.phase(name):
                pass
        t.step(1)
    elapsed = CLOCK() - t0
    t.close()
    return elapsed


def with_hoisted(steps: int) -> float:
    from auditor.timing import SamplingTimer

    t = SamplingTimer(warmup_steps=0, stream=_DEVNULL)
    ctx = [t.phase(n) for n in PHASES]
    t0 = CLOCK()
    for _ in range(steps):
        for c in ctx:
            with c:
                pass
        t.step(1)
    elapsed = CLOCK() - t0
    t.close()
    return elapsed


def with_begin_end(steps: int) -> float:
    from auditor.timing import SamplingTimer

    t = SamplingTimer(warmup_steps=0, stream=_DEVNULL)
    t0 = CLOCK()
    for _ in range(steps):
        for name in PHASES:
            t.begin(name)
            t.end()
        t.step(1)
    elapsed = CLOCK() - t0
    t.close()
    return elapsed


def _auto_kinds():
    """(label, raw callable, wrapped callable, argument) for each wrapper kind and path."""
    hook = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "auditor", "worker", "hook")
    sys.path.insert(0, hook)
    import _qg_audit_phases as ph

    class Env:
        num_envs = 8

        def step(self, action):
            return action

    env = Env()
    raw_step = Env.step
    wrapped_step = ph._env_step(raw_step, "num_envs")
    grad = nograd = bool  # C stand-ins for torch.is_grad_enabled / is_inference_mode_enabled (C calls too)
    xfer, fwd, wait = ph._timed(abs, ph._XFER), ph._forward(abs, grad, nograd), ph._wait(abs)

    return [
        ("xfer (Tensor.to etc.)", abs, xfer, -1),
        ("fwd (Module.__call__)", abs, fwd, -1),
        ("wait (Queue.get etc.)", abs, wait, -1),
        ("env step (closes a step)", lambda a: raw_step(env, a), lambda a: wrapped_step(env, a), 1),
        ("nested pass-through", abs, xfer, -1),
    ], ph


def _call_loop(fn, arg, n: int) -> float:
    t0 = CLOCK()
    for _ in range(n):
        fn(arg)
    return CLOCK() - t0


def bench_auto(steps: int, repeat: int) -> None:
    kinds, ph = _auto_kinds()
    xfer = kinds[0][2]
    xfer(-1)  # makes this thread's state
    st = ph._tls.st
    results = {label: [] for label, *_ in kinds}
    for _ in range(repeat):
        for label, raw, wrapped, arg in kinds:
            if label == "nested pass-through":
                st.busy = True
                w = _call_loop(wrapped, arg, steps)
                r = _call_loop(raw, arg, steps)
                st.busy = False
            else:
                r = _call_loop(raw, arg, steps)
                w = _call_loop(wrapped, arg, steps)
            results[label].append((w - r) / steps)
    print(f"automatic phases: extra ns per wrapped call beyond the call itself, {steps} calls x {repeat} runs")
    print(f"{'wrapper':<28}{'median':>8}{'min':>8}{'max':>8}")
    for label, vals in results.items():
        print(f"{label:<28}{statistics.median(vals):>8.0f}{min(vals):>8.0f}{max(vals):>8.0f}")


def _timer_module(path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location("timing_under_test_" + str(abs(hash(path))), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _phases_loop(module, steps: int, with_step: bool) -> float:
    t = module.SamplingTimer(stream=_DEVNULL)
    ctx = [t.phase(n) for n in PHASES]
    with ctx[0]:
        pass
    t.step(1)  # past the first step: what is timed is the steady path
    t0 = CLOCK()
    for _ in range(steps):
        for c in ctx:
            with c:
                pass
        if with_step:
            t.step(1)
    elapsed = CLOCK() - t0
    t.close()
    return elapsed / (steps * len(PHASES))


def bench_compare(old_path: str, steps: int, repeat: int) -> None:
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "auditor", "worker", "timing.py")
    versions = {"old": _timer_module(old_path), "new": _timer_module(here)}
    rows = {k: [] for k in ("bare", "old phase", "new phase", "old phase+step", "new phase+step")}
    for _ in range(repeat):
        rows["bare"].append(bare(steps) / (steps * len(PHASES)))
        for with_step in (False, True):
            for name, module in versions.items():
                rows[f"{name} phase{'+step' if with_step else ''}"].append(_phases_loop(module, steps, with_step))
    base = statistics.median(rows["bare"])
    print(f"{old_path} (old) vs {here} (new): ns per phase, {steps} steps x {repeat} interleaved runs")
    print(f"{'what':<18}{'median':>8}{'min':>8}{'max':>8}{'extra vs bare (median)':>24}")
    for name, vals in rows.items():
        med = statistics.median(vals)
        print(f"{name:<18}{med:>8.0f}{min(vals):>8.0f}{max(vals):>8.0f}{med - base:>24.0f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--report", action="store_true", help="measure with QG_AUDIT_REPORT set")
    ap.add_argument("--auto", action="store_true", help="measure the automatic phases' wrappers instead")
    ap.add_argument("--compare", metavar="OLD_TIMING_PY", help="time another timing.py against this one")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tmp = None
    if args.report:
        tmp = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False)
        os.environ["QG_AUDIT_REPORT"] = tmp.name
    if args.compare:
        bench_compare(args.compare, args.steps, args.repeat)
        return 0
    if args.auto:
        bench_auto(args.steps, args.repeat)
        if tmp is not None:
            os.unlink(tmp.name)
        return 0
    per_phase = {}
    for fn in (bare, with_phase, with_hoisted, with_begin_end):
        runs = [fn(args.steps) / (args.steps * len(PHASES)) for _ in range(args.repeat)]
        per_phase[fn.__name__] = min(runs), statistics.median(runs)
    base_min, base_med = per_phase["bare"]
    mode = "under qg-audit (records flushed to a file)" if args.report else "standalone"
    print(f"{args.steps} steps x {len(PHASES)} phases, best and median of {args.repeat} runs, {mode}")
    print(f"{'method':<16}{'ns/phase (min)':>16}{'(median)':>10}{'extra vs bare (min)':>22}{'(median)':>10}")
    for name, (mn, med) in per_phase.items():
        print(f"{name:<16}{mn:>16.0f}{med:>10.0f}{mn - base_min:>22.0f}{med - base_med:>10.0f}")
    if tmp is not None:
        size = os.path.getsize(tmp.name)
        print(f"report file: {size / 1e6:.1f} MB written")
        os.unlink(tmp.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

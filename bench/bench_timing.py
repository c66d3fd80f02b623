"""Overhead of auditor.timing.SamplingTimer per phase measurement.

Compares, per timed phase, a bare ``time.perf_counter()`` pair (what a hand-written
timestamp costs) with the timer's ways of timing a phase, all around an empty body, and
prints the extra nanoseconds per phase measurement amortised over steps (step() and the
batched flushes included). Elapsed time is this process's CPU time (user + system,
``time.process_time_ns``), so other jobs on a loaded machine do not count against us; the
report file writes are system time and do count.
Run: ``python bench/bench_timing.py [--steps N] [--report]``.
``--report`` measures under qg-audit's report channel (records written to a temp file).
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--report", action="store_true", help="measure with QG_AUDIT_REPORT set")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tmp = None
    if args.report:
        tmp = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False)
        os.environ["QG_AUDIT_REPORT"] = tmp.name
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

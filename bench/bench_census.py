"""Measure the runtime probe: census cost per poll, probe CPU overhead, hook start-up cost.

    python bench/bench_census.py [--procs 64] [--polls 200] [--runs 20] [--compare]

1. Census cost per poll on a real tree of PROCS processes: the incremental census
   (auditor.runtime.census) against psutil's children(recursive=True) plus the same per-process
   reads (threads, RSS, status). CPU time of this process, median of POLLS polls.
2. Probe overhead: run_target() on the same kind of tree for 10 s at the default interval;
   the probe's own CPU time (getrusage) divided by wall time, as % of one core (budget 1%).
3. Hook start-up cost: `python -c pass` with and without the sitecustomize hook active
   (median of RUNS runs each, wall time), and the hook's own import time from -X importtime.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psutil  # noqa: E402

from auditor.runtime import census as census_module  # noqa: E402
from auditor.runtime.census import YOUNG_S, Census  # noqa: E402
from auditor.runtime.session import DEFAULT_INTERVAL, HOOK_DIR, run_target  # noqa: E402
from auditor.runtime.verdict import Expectation, judge  # noqa: E402

EVERY_POLL = 10**9  # READ_BUDGET that reads every member at every poll (the census before issue 13)

TREE = """
import os, sys, time
n = int(sys.argv[1])
for _ in range(n - 1):
    if os.fork() == 0:
        time.sleep(120); os._exit(0)
print('ready', flush=True)
time.sleep(120)
"""


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def bench_polls(procs: int, polls: int) -> dict:
    census = Census()
    census.prime()
    proc = subprocess.Popen([sys.executable, "-c", TREE, str(procs)], stdout=subprocess.PIPE,
                            start_new_session=True)
    census.adopt_root(proc.pid)
    try:
        proc.stdout.readline()
        census.poll()  # first poll adopts the whole tree
        assert len(census.live) == procs, len(census.live)
        young = []
        for _ in range(5):  # while processes are young their command lines are re-read (exec after fork)
            t = time.process_time()
            census.poll()
            young.append(time.process_time() - t)
        time.sleep(YOUNG_S + 0.1)
        inc = []
        for _ in range(polls):
            t = time.process_time()
            census.poll()
            inc.append(time.process_time() - t)
        root = psutil.Process(proc.pid)
        full = []
        for _ in range(polls):
            t = time.process_time()
            for p in [root] + root.children(recursive=True):
                try:
                    with p.oneshot():
                        p.num_threads(), p.memory_info(), p.status()
                except psutil.Error:
                    pass
            full.append(time.process_time() - t)
        return {"procs": procs, "machine_procs": len(psutil.pids()), "young_ms": statistics.median(young) * 1e3,
                "incremental_ms": statistics.median(inc) * 1e3, "psutil_ms": statistics.median(full) * 1e3}
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


def bench_probe(procs: int, seconds: float = 10.0) -> dict:
    """The probe end to end; the verdict on the tree (procs - 1 fork workers) must not depend on
    READ_BUDGET."""
    marks = []  # (sample time, probe CPU) at every poll

    def on_sample(sample):
        marks.append((sample["t"], cpu(), sample["processes"]))

    before, t = cpu(), time.monotonic()
    r = run_target([sys.executable, "-c", TREE, str(procs)], duration=seconds, hook=False, on_sample=on_sample)
    wall = time.monotonic() - t
    spent = cpu() - before
    # steady: the tree is complete and no member is young any more (young ones are read every poll,
    # command line included); on a loaded machine forking 1,000 processes takes seconds
    complete = next((m[0] for m in marks if m[2] >= procs), 2.0)
    steady = [m for m in marks if m[0] >= max(2.0, complete + YOUNG_S + 0.1)]
    if len(steady) < 2:
        steady = marks[-2:]
    (t1, c1, _), (t2, c2, _) = steady[0], steady[-1]
    verdict = judge(r, Expectation(workers=procs - 1), warmup=2.0)
    return {"processes": r.peak_processes, "wall_s": wall, "cpu_s": spent, "core_pct": 100 * spent / wall,
            "steady_pct": 100 * (c2 - c1) / (t2 - t1), "interval_s": DEFAULT_INTERVAL, "polls": len(r.samples),
            "verdict": verdict.code, "observed": verdict.observed_workers, "steady_polls": len(steady) - 1}


def bench_hook(runs: int) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as d:
        hooked = dict(env, PYTHONPATH=HOOK_DIR, QG_AUDIT_REPORT=os.path.join(d, "r.jsonl"))

        def once(e):
            c = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=e, check=True)
            wall = time.perf_counter() - t
            d = resource.getrusage(resource.RUSAGE_CHILDREN)
            return wall, (d.ru_utime + d.ru_stime) - (c.ru_utime + c.ru_stime)

        plain, with_hook = [], []
        for _ in range(runs):  # interleaved, so load changes hit both
            plain.append(once(env))
            with_hook.append(once(hooked))
        cpu_plain = statistics.median(c for _, c in plain)
        cpu_hook = statistics.median(c for _, c in with_hook)
        plain = [w for w, _ in plain]
        with_hook = [w for w, _ in with_hook]
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=hooked,
                             capture_output=True, text=True).stderr
    own = [ln for ln in out.splitlines() if ln.rstrip().endswith("sitecustomize")]
    cumulative_us = int(own[-1].split("|")[1]) if own else None
    return {"plain_ms": statistics.median(plain) * 1e3, "hook_ms": statistics.median(with_hook) * 1e3,
            "delta_ms": (statistics.median(with_hook) - statistics.median(plain)) * 1e3,
            "cpu_delta_ms": (cpu_hook - cpu_plain) * 1e3,
            "sitecustomize_import_ms": cumulative_us / 1e3 if cumulative_us is not None else None}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=64)
    p.add_argument("--polls", type=int, default=200)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--probe-seconds", type=float, default=10.0)
    p.add_argument("--compare", action="store_true",
                   help="also measure with every member read at every poll (READ_BUDGET off), interleaved")
    p.add_argument("--read-budget", type=int, help=f"census.READ_BUDGET to measure (default {census_module.READ_BUDGET})")
    a = p.parse_args()
    budgets = [a.read_budget or census_module.READ_BUDGET] + ([EVERY_POLL] if a.compare else [])
    for budget in budgets:
        census_module.READ_BUDGET = budget
        label = "every member every poll" if budget == EVERY_POLL else f"READ_BUDGET {budget}"
        c = bench_polls(a.procs, a.polls)
        print(f"census ({label}), {c['procs']}-process tree, {c['machine_procs']} processes on the machine:")
        print(f"  incremental census : {c['incremental_ms']:.2f} ms CPU per poll "
              f"({c['young_ms']:.2f} ms in the first {YOUNG_S:.0f}s of a process, while command lines are re-read)")
        print(f"  psutil children(recursive=True) + reads: {c['psutil_ms']:.2f} ms CPU per poll")
        print(f"  at the default interval {DEFAULT_INTERVAL}s: "
              f"{100 * c['incremental_ms'] / 1e3 / DEFAULT_INTERVAL:.2f}% of one core (budget 1%)")
    for budget in budgets:
        census_module.READ_BUDGET = budget
        label = "every member every poll" if budget == EVERY_POLL else f"READ_BUDGET {budget}"
        pr = bench_probe(a.procs, a.probe_seconds)
        print(f"probe end to end ({label}): {pr['processes']} processes, {pr['polls']} polls in {pr['wall_s']:.1f}s, "
              f"{pr['cpu_s'] * 1e3:.0f} ms CPU = {pr['core_pct']:.2f}% of one core including launch and ending; "
              f"steady state {pr['steady_pct']:.2f}% of one core ({pr['steady_polls']} polls); verdict {pr['verdict']} "
              f"({pr['observed']} workers of {a.procs - 1})")
    if a.runs <= 0:
        return
    h = bench_hook(a.runs)
    print(f"hook start-up: python -c pass {h['plain_ms']:.1f} ms plain, {h['hook_ms']:.1f} ms with the hook "
          f"(+{h['delta_ms']:.1f} ms median wall, +{h['cpu_delta_ms']:.1f} ms median CPU); sitecustomize import {h['sitecustomize_import_ms']} ms "
          f"(-X importtime, compiled from source, budget 5 ms)")


if __name__ == "__main__":
    main()

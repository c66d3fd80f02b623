"""What the stack sampler of ``profile --auto`` costs the target (auditor/worker/hook/_qg_audit_stacks.py).

A sampler loop (a gymnasium env step and some Python work per step, under the hook with its
automatic phases) runs in a fresh process with the stack sampler off and at each interval;
the runs are interleaved, and the process's CPU time per step (all threads: the sampler
thread's own work included) and its wall time per step are compared with the run that has
the sampler off. Medians over --repeat runs.

    python bench/bench_stacks.py [--steps 300000] [--repeat 5] [--intervals 20,5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOK = os.path.join(REPO, "auditor", "worker", "hook")

LOOP = r"""
import json, sys, time, gymnasium, numpy as np
class E(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(0, 1, (4,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)
    def reset(self, *, seed=None, options=None):
        return np.zeros(4, np.float32), {}
    def step(self, a):
        return np.zeros(4, np.float32), 0.0, False, False, {}
def work(n):  # Python glue of a step: a few hundred bytecodes, some calls deep
    return sum(i * i for i in range(n))
env = E(); env.reset()
steps = int(sys.argv[1])
for _ in range(200):  # past the hook's warm-up: the sampler thread is running
    env.step(0); work(200)
c0, w0 = time.process_time(), time.perf_counter()
for _ in range(steps):
    env.step(0); work(200)
print(json.dumps({"cpu_us": (time.process_time() - c0) / steps * 1e6,
                  "wall_us": (time.perf_counter() - w0) / steps * 1e6}))
"""


def one(steps: int, interval: float) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as report:
        env = dict(os.environ, PYTHONPATH=HOOK + os.pathsep + REPO, QG_AUDIT_REPORT=report.name, QG_AUDIT_PHASES="10")
        if interval:
            env["QG_AUDIT_STACKS"] = f"{interval:g}"
        else:
            env.pop("QG_AUDIT_STACKS", None)
        out = subprocess.run([sys.executable, "-c", LOOP, str(steps)], env=env, capture_output=True, text=True,
                             check=True).stdout
        samples = 0
        for line in open(report.name):
            rec = json.loads(line)
            if isinstance(rec.get("stacks"), dict):
                samples = rec["stacks"]["total"]
    got = json.loads(out.strip().splitlines()[-1])
    got["samples"] = samples
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--intervals", default="20,5", help="milliseconds, comma-separated (0 = off is always run)")
    a = ap.parse_args()
    intervals = [0.0] + [float(x) for x in a.intervals.split(",")]
    runs: dict[float, list[dict]] = {i: [] for i in intervals}
    for _ in range(a.repeat):
        for i in intervals:  # interleaved: load changes hit every setting alike
            runs[i].append(one(a.steps, i))
    base_cpu = statistics.median(r["cpu_us"] for r in runs[0.0])
    base_wall = statistics.median(r["wall_us"] for r in runs[0.0])
    print(f"load average {os.getloadavg()[0]:.2f}; {a.steps} steps x {a.repeat} runs each; medians")
    print(f"{'stacks every':>14}{'CPU us/step':>13}{'extra CPU':>11}{'wall us/step':>14}{'extra wall':>12}{'samples':>9}")
    for i in intervals:
        cpu = statistics.median(r["cpu_us"] for r in runs[i])
        wall = statistics.median(r["wall_us"] for r in runs[i])
        n = statistics.median(r["samples"] for r in runs[i])
        label = "off" if not i else f"{i:g} ms"
        print(f"{label:>14}{cpu:>13.2f}{(cpu / base_cpu - 1):>+11.1%}{wall:>14.2f}{(wall / base_wall - 1):>+12.1%}"
              f"{n:>9.0f}")


if __name__ == "__main__":
    main()

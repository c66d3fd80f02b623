"""Cold `qg-audit scan` of the corpus by two source trees, alternated in one run.

    python bench/bench_ab.py OLD_TREE NEW_TREE [--runs 3] [--corpus bench/corpus]
                             [--old-args "--no-libraries"] [--new-args "..."] [--warm]

Each run is a fresh `python -m auditor scan CORPUS --format json -o /dev/null` with
PYTHONPATH set to the tree (e.g. `git archive HEAD~3 | tar -x -C /tmp/old`). Runs alternate
old/new so that a change in machine load hits both alike; one untimed warm-up of each goes
first. --old-args / --new-args add scan flags to one side (the same tree twice, with and
without a flag, measures what the flag costs). --warm times the cached rescan instead: each
side keeps its own cache directory, filled by the warm-up, and every timed run replays it.
Prints wall and CPU seconds (the scan process and its pool workers) per run and the
medians. On a shared machine read CPU seconds: wall time moves with other people's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(tree: str, corpus: Path, extra: list[str] = (), cache: str | None = None) -> tuple[float, float, int]:
    env = dict(os.environ, PYTHONPATH=tree)
    caching = ["--cache-dir", cache] if cache else ["--no-cache"]
    before, t = os.times(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(corpus), *caching, "--format", "json", "-o",
                           os.devnull, *extra],
                          env=env, cwd=tree, capture_output=True, text=True)
    wall, after = time.perf_counter() - t, os.times()
    cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    return wall, cpu, proc.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--old-args", default="", help="scan flags for the old side, space-separated")
    ap.add_argument("--new-args", default="", help="scan flags for the new side, space-separated")
    ap.add_argument("--warm", action="store_true", help="time the cached rescan (replay), not the cold scan")
    args = ap.parse_args(argv)
    trees = {"old": args.old, "new": args.new}
    extra = {"old": args.old_args.split(), "new": args.new_args.split()}
    scratch = tempfile.mkdtemp(prefix="bench-ab-")
    caches = {name: os.path.join(scratch, name) if args.warm else None for name in trees}
    for name, tree in trees.items():
        run(tree, args.corpus, extra[name], caches[name])  # warm-up (fills the cache with --warm)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for i in range(args.runs):
        for name, tree in trees.items():
            wall, cpu, rc = run(tree, args.corpus, extra[name], caches[name])
            times[name].append((wall, cpu))
            print(f"run {i + 1} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU (exit {rc})", flush=True)
    med = {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for name, t in times.items()}
    for name, (wall, cpu) in med.items():
        print(f"{name}: median {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"new/old: wall {med['new'][0] / med['old'][0] - 1:+.0%}, CPU {med['new'][1] / med['old'][1] - 1:+.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The rules on real RL / LLM-training packages from PyPI, as a new user would run them.

    python bench/bench_rules_pypi.py [--corpus bench/corpus] [--examples 3] [pkg-dir ...]

Uses the corpus bench/build_corpus.py builds (``pip download --no-deps`` wheels, unpacked;
it is built first when missing). For each package: findings per rule and severity, the
thread pools the scan saw by what they do (pool_use) and how many of them were flagged (the
precision check: I/O and process-starting pools must never be), and a few real examples.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from auditor import join, lint, scan  # noqa: E402
from auditor.lint.harness import default_args  # noqa: E402

DEFAULT = ["stable-baselines3-2.9.2", "rl_zoo3-2.9.2", "tianshou-2.0.1", "verl-0.9.1", "torchrl-0.14.1",
           "ray-2.60.0"]
THREAD_POOLS = ("concurrent.futures.ThreadPoolExecutor", "multiprocessing.dummy.Pool")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("packages", nargs="*", default=DEFAULT)
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--examples", type=int, default=3, help="examples shown per rule and package")
    args = ap.parse_args(argv)
    if not all((args.corpus / p).is_dir() for p in args.packages):
        subprocess.run([sys.executable, str(HERE / "build_corpus.py"), "--dest", str(args.corpus)], check=False)
    totals = collections.Counter()
    for name in args.packages:
        root = args.corpus / name
        if not root.is_dir():
            print(f"{name}: not in {args.corpus} (download failed?)")
            continue
        t0 = time.perf_counter()
        result = scan.scan(root, jobs=min(2, os.cpu_count() or 1))
        join.join(result)
        lint.check(result, default_args())
        elapsed = time.perf_counter() - t0
        by_code = collections.Counter(f"{f.code}/{f.severity}" for f in result.findings)
        totals.update(f.code for f in result.findings)
        flagged = {(f.file, f.line) for f in result.findings}
        pools = collections.Counter()
        pools_flagged = 0
        for site in result.sites:
            if site.role == "consume" and site.detail.get("backend") in THREAD_POOLS:
                pools[site.detail.get("pool_use", "?")] += 1
                pools_flagged += (site.file, site.line) in flagged
        print(f"\n== {name}: {len(result.findings)} findings in {elapsed:.1f} s "
              f"({result.files_scanned} files parsed, {len(result.errors)} unparsable)")
        print("   by rule:", dict(sorted(by_code.items())))
        print(f"   thread pools by use: {dict(pools)}; flagged: {pools_flagged}")
        shown = collections.Counter()
        for f in result.findings:
            if shown[f.code] < args.examples:
                shown[f.code] += 1
                print(f"   {f.code} {f.file}:{f.line}: {f.message[:220]}")
    print("\ntotal by rule:", dict(sorted(totals.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

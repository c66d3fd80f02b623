"""Cold `qg-audit scan` of the real-package corpus against `rg` with the same keywords.

    python bench/build_corpus.py             # once: downloads and unpacks the corpus
    python bench/bench_scan.py [--runs 3] [--jobs N] [--corpus bench/corpus]

"Cold" means a fresh `python -m auditor scan` process each run (interpreter start, imports,
walk, prefilter, parse, join, rules, JSON written to /dev/null) with no cache of ours. The
OS page cache is warm for every tool alike: one untimed warm-up run of each goes first.
`rg` gets the same keywords as the prefilter (case-insensitive fixed strings) over the same
file kinds, so it does the reading and matching the scan's prefilter does, and nothing else.
Semgrep is timed with four patterns when it is installed, and reported as missing otherwise.
Prints medians, minima and the ratios; the target is scan <= 10x rg, >= 30x faster than Semgrep.
On a loaded machine the numbers are noisy: the spread (min..max) is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GLOBS = ["*.py", "*.yaml", "*.yml", "*.toml", "*.json", "*.sh", "*.bash"]
SEMGREP_PATTERNS = ["DataLoader(..., num_workers=$N, ...)", "$C.get('num_workers', $D)",
                    "SyncVectorEnv(...)", "os.environ['OMP_NUM_THREADS'] = $V"]


def timed(cmd: list[str], runs: int, env=None) -> tuple[list[float], subprocess.CompletedProcess]:
    subprocess.run(cmd, capture_output=True, env=env)  # warm-up, untimed
    times, proc = [], None
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t)
    return times, proc


def corpus_size(corpus: Path) -> tuple[int, float]:
    n, size = 0, 0
    suffixes = tuple(g[1:] for g in GLOBS)
    for dirpath, _dirs, files in os.walk(corpus):
        for f in files:
            if f.endswith(suffixes):
                n += 1
                size += os.path.getsize(os.path.join(dirpath, f))
    return n, size / 1e6


def keywords() -> list[str]:
    sys.path.insert(0, str(REPO))
    from auditor import scan, vocab

    return scan.Prefilter(vocab.load()).keywords()


def fmt(times: list[float]) -> str:
    return f"median {statistics.median(times):6.2f} s  (min {min(times):.2f}, max {max(times):.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, help="passed to qg-audit scan --jobs (default: all CPUs)")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir() or not any(args.corpus.iterdir()):
        print(f"{args.corpus}: no corpus; run python bench/build_corpus.py first", file=sys.stderr)
        return 2
    files, mb = corpus_size(args.corpus)
    print(f"corpus: {args.corpus} ({', '.join(sorted(p.name for p in args.corpus.iterdir()))})")
    print(f"        {files} files of the scanned kinds, {mb:.1f} MB; {os.cpu_count()} CPUs "
          f"(load average {os.getloadavg()[0]:.1f})")

    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    base = [sys.executable, "-m", "auditor", "scan", str(args.corpus), "--exit-zero", "--no-progress"]
    if args.jobs:
        base += ["--jobs", str(args.jobs)]
    qg_times, proc = timed(base + ["--format", "json", "-o", os.devnull], args.runs, env)
    if proc.returncode not in (0, 1):
        print(f"qg-audit scan failed ({proc.returncode}): {proc.stderr[-500:]}", file=sys.stderr)
        return 2
    # One more, untimed run for the summary figures.
    doc = json.loads(subprocess.run(base + ["--format", "json"], capture_output=True, text=True, env=env).stdout)
    s = doc["summary"]
    print(f"qg-audit scan: {fmt(qg_times)}; {s['files_seen']} files seen, {s['files_scanned']} parsed "
          f"({100 * s['files_scanned'] / max(1, s['files_seen']):.0f}% past the prefilter), "
          f"{s['knobs']} knobs, {sum(s['sites'].values())} sites, {s['errors']} errors")

    rg = shutil.which("rg")
    rg_med = None
    if rg:
        rg_cmd = [rg, "--files-with-matches", "--no-ignore", "--hidden", "-i", "-F"]
        for g in GLOBS:
            rg_cmd += ["-g", g]
        for w in keywords():
            rg_cmd += ["-e", w]
        rg_times, rg_proc = timed(rg_cmd + [str(args.corpus)], args.runs)
        rg_med = statistics.median(rg_times)
        print(f"rg (same keywords): {fmt(rg_times)}; {len(rg_proc.stdout.splitlines())} files match")
        print(f"ratio scan / rg: {statistics.median(qg_times) / rg_med:.1f}x  (target <= 10x)")
    else:
        print("rg: not installed (skipped)")

    semgrep = shutil.which("semgrep")
    if semgrep:
        sg_cmd = [semgrep, "scan", "--metrics=off", "--quiet", "--json"]
        for p in SEMGREP_PATTERNS:
            sg_cmd += ["-e", p]
        sg_cmd += ["--lang", "python", str(args.corpus)]
        sg_times, _ = timed(sg_cmd, 1)
        print(f"semgrep (4 patterns): {fmt(sg_times)}; "
              f"scan is {statistics.median(sg_times) / statistics.median(qg_times):.0f}x faster (target >= 30x)")
    else:
        print("semgrep: not installed (skipped; issue 2 measured 105 s for 4 patterns on 7,498 files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

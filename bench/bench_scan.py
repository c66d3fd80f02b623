"""`qg-audit scan` of the real-package corpus against `rg` with the same keywords, in one run:
cold, warm (unchanged tree), one edited file, and Semgrep.

    python bench/build_corpus.py             # once: downloads and unpacks the corpus
    python bench/bench_scan.py [--runs 5] [--jobs N] [--corpus bench/corpus] [--no-semgrep]

Every figure is a fresh `python -m auditor scan CORPUS --format json -o /dev/null` process
(interpreter start, imports, and everything up to the JSON written):

- cold, no cache: `--no-cache`, what every scan cost before the cache;
- cold, empty cache: a new `--cache-dir` per run (parses everything and writes the cache);
- warm, replay: the tree and the command line as the previous run left them (the saved
  report is replayed);
- warm, store: the same, with the replay records deleted before each run (per-file results
  from the store, then join and rules: what a different output flag or --files costs);
- one edit: one Python file with sites gets a new line before each run (re-parsed; join
  and rules rerun; the file is restored at the end).

The OS page cache is warm for every tool alike (one untimed warm-up run of each first).
`rg` gets the prefilter's keywords (case-insensitive fixed strings) over the same file
kinds; it is timed alone first, and again right before every timed scan run, so each scan
figure also has a ratio to rg "paired" under the same load (the load of a shared machine
drifts between the phases). Semgrep (4 patterns, one run: it is slow) is found on PATH or through $SEMGREP.
Peak memory is the largest resident set of any one process of a run (wait4), per MB of the
corpus, printed raw and less the baseline: the peak of the same command on an empty project
(interpreter, imports, catalogue; what any scan costs before it reads a file).
The package's bytecode is compiled first (an installed qg-audit has it; without it, and with
PYTHONDONTWRITEBYTECODE set, every run would compile ~100 modules again: ~0.1 s).
Prints medians with min..max: on a shared machine the spread is large.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GLOBS = ["*.py", "*.yaml", "*.yml", "*.toml", "*.json", "*.sh", "*.bash"]
SEMGREP_PATTERNS = ["DataLoader(..., num_workers=$N, ...)", "$C.get('num_workers', $D)",
                    "SyncVectorEnv(...)", "os.environ['OMP_NUM_THREADS'] = $V"]
EDITED = "stable-baselines3-2.9.2/stable_baselines3/common/env_util.py"  # has knob sites


def run_once(cmd: list[str], env=None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB of the largest process of the run, exit code)."""
    t = time.perf_counter()
    # cwd=REPO: `python -m auditor` imports the package of the working directory first
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:6]}... failed ({proc.returncode}): {err[-500:]}")
    return wall, usage.ru_maxrss / 1024, proc.returncode


def timed(cmd, runs: int, env=None, before=None, warmup: bool = True,
          pair: list[str] | None = None) -> tuple[list[float], list[float], list[float]]:
    """(times, peaks, times of PAIR run right before each timed run: rg under the same load)."""
    if warmup:
        if before:
            before(-1)
        run_once(cmd, env)
    times, peaks, paired = [], [], []
    for i in range(runs):
        if before:
            before(i)
        if pair:
            paired.append(run_once(pair)[0])
        wall, peak, _ = run_once(cmd, env)
        times.append(wall)
        peaks.append(peak)
    return times, peaks, paired


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


def semgrep_rules() -> str:
    """One rule matching any of the four patterns (the CLI takes one -e pattern only)."""
    lines = ["rules:", "  - id: qg-audit-bench", "    languages: [python]", "    severity: INFO",
             "    message: parallelism setting", "    pattern-either:"]
    lines += [f"      - pattern: {json.dumps(p)}" for p in SEMGREP_PATTERNS]
    return "\n".join(lines) + "\n"


def fmt(times: list[float]) -> str:
    return f"median {statistics.median(times):6.2f} s  (min {min(times):.2f}, max {max(times):.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, help="passed to qg-audit scan --jobs (default: all CPUs)")
    ap.add_argument("--no-semgrep", action="store_true", help="skip Semgrep even when installed")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # lines as they come, also into a log file
    if not args.corpus.is_dir() or not any(args.corpus.iterdir()):
        print(f"{args.corpus}: no corpus; run python bench/build_corpus.py first", file=sys.stderr)
        return 2
    files, mb = corpus_size(args.corpus)
    print(f"corpus: {args.corpus} ({', '.join(sorted(p.name for p in args.corpus.iterdir()))})")
    print(f"        {files} files of the scanned kinds, {mb:.1f} MB; {os.cpu_count()} CPUs "
          f"(load average {os.getloadavg()[0]:.1f} at the start)")

    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("QG_AUDIT_NO_CACHE", None)
    env.pop("QG_AUDIT_CACHE_DIR", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "auditor")], check=True,
                   stdout=subprocess.DEVNULL)
    base = [sys.executable, "-m", "auditor", "scan", str(args.corpus), "--exit-zero", "--no-progress",
            "--format", "json", "-o", os.devnull]
    if args.jobs:
        base += ["--jobs", str(args.jobs)]
    empty = Path(tempfile.mkdtemp(prefix="qg-bench-empty-"))
    try:
        baseline_mb = max(run_once([*base[:4], str(empty), *base[5:], "--no-cache"], env)[1] for _ in range(3))
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    medians: dict[str, float] = {}
    rows: list[tuple[str, list[float], list[float], list[float]]] = []

    rg = shutil.which("rg")
    rg_cmd = None
    if rg:
        rg_cmd = [rg, "--files-with-matches", "--no-ignore", "--hidden", "-i", "-F"]
        for g in GLOBS:
            rg_cmd += ["-g", g]
        for w in keywords():
            rg_cmd += ["-e", w]
        rg_cmd.append(str(args.corpus))
        rows.append(("rg (same keywords)", *timed(rg_cmd, args.runs)))
    else:
        print("rg: not installed (apt-get install ripgrep); ratios skipped")
    pair = {"pair": rg_cmd}

    work = Path(tempfile.mkdtemp(prefix="qg-bench-"))
    edited = args.corpus / EDITED
    original = edited.read_bytes() if edited.is_file() else None
    st = edited.stat() if original is not None else None
    try:
        rows.append(("scan, cold, --no-cache", *timed(base + ["--no-cache"], args.runs, env, **pair)))

        def fresh_cache(i):
            shutil.rmtree(work / "cold", ignore_errors=True)

        rows.append(("scan, cold, empty cache", *timed(base + ["--cache-dir", str(work / "cold")], args.runs, env,
                                                       before=fresh_cache, **pair)))
        warm = base + ["--cache-dir", str(work / "warm")]
        run_once(warm, env)  # fills the cache and the replay record
        rows.append(("scan, warm (replay)", *timed(warm, args.runs, env, **pair)))

        def drop_replay(i):
            for p in (work / "warm").glob("replay-*.bin"):
                p.unlink()

        rows.append(("scan, warm (store, no replay)", *timed(warm, args.runs, env, before=drop_replay, **pair)))
        if original is not None:
            def edit(i):
                edited.write_bytes(original + f"\n# bench edit {i}\n".encode())

            rows.append((f"scan, one file edited ({EDITED.split('/')[-1]})", *timed(warm, args.runs, env,
                                                                                    before=edit, **pair)))
        else:
            print(f"one edit: {edited} missing (skipped)")
    finally:
        if original is not None:
            edited.write_bytes(original)
            os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
        shutil.rmtree(work, ignore_errors=True)

    doc = json.loads(subprocess.run([*base[:-2], "--no-cache"], capture_output=True, text=True, env=env, cwd=REPO).stdout)
    s = doc["summary"]
    print(f"scan summary: {s['files_seen']} files seen, {s['files_scanned']} parsed "
          f"({100 * s['files_scanned'] / max(1, s['files_seen']):.0f}% past the prefilter), "
          f"{s['knobs']} knobs, {sum(s['sites'].values())} sites, {s['errors']} errors")
    print(f"\n{'':38} {'time (median of %d)' % args.runs:38} {'x rg':>6} {'x rg paired':>11}  "
          f"peak MB / MB (less the {baseline_mb:.0f} MB baseline)")
    rg_med = statistics.median(rows[0][1]) if rg else None
    for label, times, peaks, paired in rows:
        med = statistics.median(times)
        medians[label] = med
        ratio = f"{med / rg_med:5.1f}x" if rg_med else "   n/a"
        # Each run over the median of the rg runs taken just before it: load drifts less.
        paired_ratio = f"{med / statistics.median(paired):10.1f}x" if paired else f"{'-':>11}"
        mem = f"{max(peaks) / mb:.2f} ({(max(peaks) - baseline_mb) / mb:.2f})" if not label.startswith("rg") else "-"
        print(f"{label:38} {fmt(times):38} {ratio} {paired_ratio}  {mem}")
    print("targets: warm <= 1x rg; one edit <= 3x rg; cold <= 25x rg; peak <= 0.19 MB per MB")

    semgrep = os.environ.get("SEMGREP") or shutil.which("semgrep")
    if semgrep and not args.no_semgrep:
        rules = Path(tempfile.mkdtemp(prefix="qg-bench-")) / "rules.yaml"
        rules.write_text(semgrep_rules())
        # --no-git-ignore: the corpus is gitignored here; no version check (it waits on the network)
        sg_cmd = [semgrep, "scan", "--metrics=off", "--quiet", "--json", "--no-git-ignore", "--config", str(rules),
                  str(args.corpus)]
        sg_env = dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0")
        try:
            sg_times, _, _ = timed(sg_cmd, 1, env=sg_env, warmup=False)
        finally:
            shutil.rmtree(rules.parent, ignore_errors=True)
        cold = medians["scan, cold, --no-cache"]
        print(f"semgrep (4 patterns, 1 run): {sg_times[0]:.1f} s; the cold scan is {sg_times[0] / cold:.0f}x faster "
              f"(target >= 30x)")
    else:
        print("semgrep: not found (set SEMGREP=/path/to/semgrep or put it on PATH; skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Cost of the Python extractor per file, against a bare ``ast.parse`` of the same files.

    python bench/bench_extract_python.py [--corpus bench/corpus] [--packages verl-0.9.1 ...]
                                         [--runs 3] [--biggest 5]

Reads every .py file of the chosen unpacked packages (build them with
``python bench/build_corpus.py``; default: stable-baselines3 and verl), then, per run, times
``ast.parse`` alone and ``python_code.extract`` (one parse plus the one visitor pass) on one
core. Times are CPU time of this process (``time.process_time``), so other jobs on a loaded
machine do not count; the median of --runs is reported. Also prints the biggest files'
cost, since those dominate a scan's tail.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from auditor import vocab as vocab_mod  # noqa: E402
from auditor.extract import ParseError, python_code  # noqa: E402

DEFAULT_PACKAGES = ["stable-baselines3-2.9.2", "verl-0.9.1"]


def load(corpus: Path, packages: list[str]) -> list[tuple[str, str]]:
    files = []
    for pkg in packages:
        root = corpus / pkg
        if not root.is_dir():
            sys.exit(f"{root}: not found; build it with: python bench/build_corpus.py --dest {corpus}")
        for path in sorted(root.rglob("*.py")):
            try:
                files.append((str(path.relative_to(corpus)), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return files


def timed(fn, files) -> tuple[float, list[float]]:
    per_file = []
    start = time.process_time()
    for rel, text in files:
        t0 = time.process_time()
        try:
            fn(text, rel)
        except (SyntaxError, ParseError, ValueError):
            pass
        per_file.append(time.process_time() - t0)
    return time.process_time() - start, per_file


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--packages", nargs="+", default=DEFAULT_PACKAGES)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--biggest", type=int, default=5)
    args = ap.parse_args(argv)

    vocab = vocab_mod.load()
    files = load(args.corpus, args.packages)
    size = sum(len(t.encode()) for _, t in files)
    sites = sum(len(python_code.extract(t, r, vocab).sites) for r, t in files if _parses(t))
    parse_runs, extract_runs, per_file = [], [], None
    for _ in range(args.runs):
        parse_runs.append(timed(lambda text, rel: ast.parse(text, filename=rel), files)[0])
        total, per_file = timed(lambda text, rel: python_code.extract(text, rel, vocab), files)
        extract_runs.append(total)
    parse_s, extract_s = statistics.median(parse_runs), statistics.median(extract_runs)
    n = len(files)
    print(f"packages: {', '.join(args.packages)}")
    print(f"files: {n}  ({size / 1e6:.1f} MB)  sites: {sites}  runs: {args.runs} (median, CPU time)")
    print(f"ast.parse only : {parse_s:7.2f} s  {parse_s / n * 1000:6.2f} ms/file")
    print(f"extract        : {extract_s:7.2f} s  {extract_s / n * 1000:6.2f} ms/file"
          f"  ({extract_s / parse_s:.2f}x parse; visitor {(extract_s - parse_s) / n * 1000:.2f} ms/file)")
    spread = max(extract_runs) / min(extract_runs) if min(extract_runs) else 1
    if spread > 1.25:
        print(f"note: extract runs spread {spread:.2f}x; the machine was noisy - try more --runs")
    print(f"biggest {args.biggest} files (last run):")
    ranked = sorted(zip(files, per_file), key=lambda fp: len(fp[0][1]), reverse=True)[: args.biggest]
    for (rel, text), secs in ranked:
        print(f"  {secs * 1000:7.1f} ms  {len(text.encode()) / 1000:6.0f} kB  {rel}")
    return 0


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError):
        return False


if __name__ == "__main__":
    raise SystemExit(main())

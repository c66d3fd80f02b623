"""Build the scan benchmark corpus: real RL / LLM-training packages, unpacked.

    python bench/build_corpus.py [--dest bench/corpus] [--cache bench/.cache]

Downloads the pinned wheels with ``pip download --no-deps`` (into --cache, reused on a
second run) and unpacks each into DEST/<name>-<version>/. DEST and the cache are
gitignored. Needs the package registry; prints what it could not fetch and goes on.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = [
    "ray==2.60.0",
    "transformers==5.24.0",
    "torchrl==0.14.1",
    "verl==0.9.1",
    "stable-baselines3==2.9.2",
    "tianshou==2.0.1",
    "rl_zoo3==2.9.2",
    "lm_eval==0.4.13",
]


def fetch(spec: str, cache: Path) -> Path | None:
    name = spec.split("==")[0].lower().replace("-", "_")
    version = spec.split("==")[1]
    def hit():
        for p in cache.glob("*.whl"):
            if p.name.lower().startswith(f"{name}-{version}-"):
                return p
        return None
    if hit() is None:
        # This interpreter's wheel first; else any platform's (we read files, never import them).
        base = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(cache)]
        for extra in ([], ["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
                           "--platform", "manylinux2014_x86_64", "--platform", "any"]):
            proc = subprocess.run(base + extra + [spec], capture_output=True, text=True)
            if proc.returncode == 0:
                break
        else:
            print(f"  could not download {spec}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
    return hit()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=HERE / "corpus")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache")
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    args.dest.mkdir(parents=True, exist_ok=True)
    missing = 0
    for spec in PACKAGES:
        wheel = fetch(spec, args.cache)
        if wheel is None:
            missing += 1
            continue
        out = args.dest / spec.replace("==", "-")
        if not out.exists():
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(out)
        files = sum(1 for p in out.rglob("*") if p.is_file())
        mb = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
        print(f"{spec:28} {files:6} files {mb:8.1f} MB  {out}")
    if missing:
        print(f"{missing} package(s) missing; the benchmark runs on what is there", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

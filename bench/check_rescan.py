"""Prove that the rescan paths and the speed-ups change no report: this tree against another
commit, cold and through the cache, in every output format.

    python bench/check_rescan.py [--against REV] [DIR ...]   # default: main; bench/corpus and fixtures

For each DIR and format (json, text, sarif, github) it runs, each as a fresh process, the
REV tree (exported with `git archive` into a temporary directory; the repository is not
touched) with --no-cache, and this tree with --no-cache, with an empty cache (parse and
store), from the store alone (replay records deleted) and as a replay; then, for the first
DIR, the same after one Python file with sites gains a line (restored afterwards), and
after a skipped file starts calling a helper. Every report must equal the REV tree's cold
one byte for byte, the run time masked. The per-file outcomes that `auditor.scan.scan`
returns (sites, per-file facts, errors) are compared between the two trees as well.
Prints each difference; exit 1 when there is one.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FORMATS = ("json", "text", "sarif", "github")
EDITED = "stable-baselines3-2.9.2/stable_baselines3/common/env_util.py"
SKIPPED = "stable-baselines3-2.9.2/stable_baselines3/common/__init__.py"  # empty: the prefilter skips it
OUTCOMES = """
import pickle, sys
from auditor import scan
r = scan.scan(sys.argv[1])
sys.stdout.buffer.write(pickle.dumps(([s.to_json() for s in r.sites], r.meta,
                                      [e.to_json() for e in r.errors], r.files_scanned, r.files_seen)))
"""


def mask(text: str) -> str:
    text = re.sub(r'"elapsed_s": [0-9.e-]+', '"elapsed_s": X', text)
    return re.sub(r"; [0-9]+\.[0-9]{2} s(\x1b\[0m)?\n\Z", r"; X s\1\n", text)


def run(tree: Path, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree), COLUMNS="160")
    env.pop("QG_AUDIT_CACHE_DIR", None)
    env.pop("QG_AUDIT_NO_CACHE", None)
    # cwd=TREE: `python -m` puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.run([sys.executable, "-m", "auditor", *args], capture_output=True, text=True, env=env,
                          cwd=tree)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tree}: {' '.join(args[:3])}... failed ({proc.returncode}): {proc.stderr[-400:]}")
    return mask(proc.stdout)


def outcomes(tree: Path, root: Path) -> bytes:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([sys.executable, "-c", OUTCOMES, str(root)], capture_output=True, env=env,
                          check=True, cwd=tree).stdout


def compare(old: Path, new: Path, root: Path, work: Path, step: str) -> int:
    bad = 0
    for fmt in FORMATS:
        base = ["scan", str(root), "--exit-zero", "--no-progress", "--format", fmt]
        want = run(old, [*base, "--no-cache"])
        cache = work / f"cache-{fmt}"
        got = {"--no-cache": run(new, [*base, "--no-cache"]),
               "cache": run(new, [*base, "--cache-dir", str(cache)])}
        for rec in cache.glob("replay-*.bin"):
            rec.unlink()
        got["store"] = run(new, [*base, "--cache-dir", str(cache)])
        got["replay"] = run(new, [*base, "--cache-dir", str(cache)])
        for how, text in got.items():
            if text != want:
                bad += 1
                print(f"  DIFFERS: {root.name} {step} --format {fmt} ({how})")
        print(f"{root.name:24} {step:26} --format {fmt:7} {len(want):9} chars: "
              f"{'same' if all(t == want for t in got.values()) else 'DIFFERENT'} (cold, cache, store, replay)")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="main", help="the commit to compare with (default: main)")
    ap.add_argument("dirs", nargs="*", type=Path)
    args = ap.parse_args(argv)
    roots = args.dirs or [REPO / "bench" / "corpus", REPO / "fixtures"]
    work = Path(tempfile.mkdtemp(prefix="qg-rescan-"))
    old = work / "old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    bad = 0
    try:
        for root in roots:
            if pickle.loads(outcomes(old, root)) != pickle.loads(outcomes(REPO, root)):
                bad += 1
                print(f"  DIFFERS: per-file outcomes of {root}")
            else:
                print(f"{root.name:24} per-file outcomes (sites, facts, errors): same")
            bad += compare(old, REPO, root, work, "as it is")
        edited, skipped = roots[0] / EDITED, roots[0] / SKIPPED
        if edited.is_file() and skipped.is_file():
            saved = {p: (p.read_bytes(), p.stat()) for p in (edited, skipped)}
            try:
                edited.write_bytes(saved[edited][0] + b"\n# check_rescan edit\n")
                bad += compare(old, REPO, roots[0], work, "one file edited")
                # a skipped file that starts calling a helper the flow layer wants
                skipped.write_bytes(saved[skipped][0] + b"\n\ndef _bench():\n    return ExperimentManager(args, 'ppo', 'CartPole-v1')\n")
                bad += compare(old, REPO, roots[0], work, "skipped file calls helper")
            finally:
                for p, (data, st) in saved.items():
                    p.write_bytes(data)
                    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("no difference" if not bad else f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

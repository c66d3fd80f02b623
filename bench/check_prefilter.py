"""Check that the stem-grouped prefilter decides exactly as the flat list of its checks.

    python bench/check_prefilter.py [DIR ...]     # default: bench/corpus fixtures

auditor.scan.Prefilter looks for a keyword only when the keyword's stem occurs in the
folded file (a speed-up, see STEMS). This script re-runs every check flat, on every file
under DIR, with the built-in vocabulary and with a project-extended one, and prints the
files where the two disagree (none is the only correct answer) and both timings.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor import scan, vocab  # noqa: E402

EXTENDED = {"extra-knobs": ["rollout_batch_parallelism", "my-knob"], "extra-knob-patterns": ["*_shards"],
            "extra-env-vars": ["MY_NUM_THREADS"]}


def flat(pf: scan.Prefilter, data: bytes) -> bool:
    folded = data.translate(scan._FOLD)
    return (any(w in data for w in pf.backends) or any(w in data and rx.search(data) for w, rx in pf.called)
            or any(w in folded for w in pf.specific) or any(w in folded and rx.search(folded) for w, rx in pf.generic))


def main(argv: list[str]) -> int:
    roots = argv or [str(REPO / "bench" / "corpus"), str(REPO / "fixtures")]
    datas = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    datas.append((os.path.join(dirpath, name), fh.read()))
    bad = 0
    for label, settings in (("built-in", {}), ("extended", EXTENDED)):
        pf = scan.Prefilter(vocab.load(settings))
        t = time.perf_counter()
        grouped = [pf(d) for _, d in datas]
        t_grouped = time.perf_counter() - t
        t = time.perf_counter()
        plain = [flat(pf, d) for _, d in datas]
        t_flat = time.perf_counter() - t
        diff = [p for (p, _), a, b in zip(datas, grouped, plain) if a != b]
        bad += len(diff)
        print(f"{label} vocabulary: {len(datas)} files, {sum(grouped)} kept, {len(diff)} disagreements; "
              f"grouped {t_grouped:.2f} s, flat {t_flat:.2f} s")
        for p in diff[:20]:
            print(f"  differs: {p}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

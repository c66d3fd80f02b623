"""Prove that the code gates (auditor.scan: strip_python, Prefilter.in_code) change no output.

    python bench/check_gates.py [DIR ...]     # default: bench/corpus and fixtures

For every file the scan's walk finds under DIR, with the built-in vocabulary and with a
project-extended one, the per-file outcome (sites, per-file facts, error, parsed) is
computed twice: with the gates (what `qg-audit scan` does) and without (every file that
passes the keyword prefilter is extracted). The join and the rules read nothing else of a
file, so equal outcomes mean equal reports. Prints the files where they differ (none is the
only correct answer), how many Python files the gates took out of the visitor, what the
gates cost and what skipping the visitor saves (serial CPU, best of 3: the whole-scan
difference drowns in the noise of a shared machine). Exit 1 when any outcome differs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor import scan, vocab  # noqa: E402
from check_prefilter import EXTENDED  # noqa: E402


def outcome(cand, vocab_, prefilter):
    rel, sites, meta, error, parsed = scan.parse_file(cand, vocab_, prefilter)
    return sites, meta or None, error, parsed


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv] or [REPO / "bench" / "corpus", REPO / "fixtures"]
    cands = []
    for root in roots:
        found, _errors, _ = scan.walk(root, int(scan.MAX_FILE_SIZE_MB * 1e6))
        cands += found
    bad = 0
    for label, settings in (("built-in", {}), ("extended", EXTENDED)):
        v = vocab.load(settings)
        gated, plain = scan.Prefilter(v), scan.Prefilter(v, gates=False)
        with scan._gc_tuned():
            with_gates = [outcome(c, v, gated) for c in cands]
            without = [outcome(c, v, plain) for c in cands]
        diff = [c.rel for c, a, b in zip(cands, with_gates, without) if a != b]
        bad += len(diff)
        py_kept = [(c, data) for c in cands if c.kind == "python" and plain(data := _read(c))]
        dropped = [(c, data) for c, data in py_kept if not gated.in_code(data)]
        errors = sum(1 for c, o in zip(cands, with_gates) if o[2] is not None and c.rel in {d.rel for d, _ in dropped})
        with_sites = sum(1 for c, o in zip(cands, without) if c.kind == "python" and o[0])
        print(f"{label} vocabulary: {len(cands)} files; {len(py_kept)} Python files pass the prefilter, "
              f"{with_sites} of them yield sites; the gates take {len(dropped)} out of the visitor "
              f"({errors} of those have a parse error, reported as before); {len(diff)} outcomes differ")
        for rel in diff[:20]:
            print(f"  differs: {rel}")
        cost, saved = _timings(gated, v, py_kept, dropped)
        print(f"  serial CPU, best of 3: the gates cost {cost:.2f} s over the {len(py_kept)} files; "
              f"skipping the visitor saves {saved:.2f} s on the {len(dropped)} they take out")
    return 1 if bad else 0


def _timings(gated, v, py_kept, dropped) -> tuple[float, float]:
    from auditor.extract import python_code

    texts = [(c, data.decode("utf-8-sig", "replace")) for c, data in dropped]

    def best(fn) -> float:
        times = []
        for _ in range(3):
            t = time.process_time()
            fn()
            times.append(time.process_time() - t)
        return min(times)

    def parse_only():
        for c, text in texts:
            _try(python_code.check_syntax, text, c.rel)

    def extract():
        for c, text in texts:
            _try(python_code.extract, text, c.rel, v)

    with scan._gc_tuned():
        cost = best(lambda: [gated.in_code(data) for _, data in py_kept])
        saved = best(extract) - best(parse_only)
    return cost, saved


def _try(fn, *args):
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - timing only; the outcomes above are compared exactly
        pass


def _read(cand) -> bytes:
    with open(cand.path, "rb") as fh:
        return fh.read()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

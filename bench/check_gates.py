"""Prove that the code gates (auditor.scan: strip_python, Prefilter.in_code) change no report.

    python bench/check_gates.py [DIR ...]     # default: bench/corpus and fixtures

For every file the scan's walk finds under DIR, with the built-in vocabulary and with a
project-extended one, the per-file outcome (sites, per-file facts, error, parsed) is
computed twice: with the gates (what `qg-audit scan` does) and without (every file that
passes the keyword prefilter is extracted). Sites, errors and the facts the join reads must
be equal. The flow layer's facts are not: a file the gates take out of the visitor has none
(the flow layer's second pass parses it when it names a word the flow layer looks for), so
the whole report is compared too, with and without the gates (the count of files parsed
may differ: the second pass picks its files from the facts it has). Prints the files where
they differ, how many Python files the gates took out of the visitor, what the gates cost
and what skipping the visitor saves (serial CPU, best of 3: the whole-scan difference
drowns in the noise of a shared machine). Exit 1 when a site, an error or a report differs.
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
    """What the join and the rules read of a file (the flow facts apart: see the docstring)."""
    rel, sites, meta, error, parsed = scan.parse_file(cand, vocab_, prefilter)
    facts = {k: v for k, v in (meta or {}).items() if k not in ("flow", "gated")}
    return sites, facts or None, error, parsed


def report(root: Path, settings: dict, gates: bool) -> tuple[str, int]:
    """(the JSON report of ROOT with or without the gates, its count of parsed files masked; that count)."""
    import argparse
    import re

    from auditor import join, lint
    from auditor.commands import scan as scan_cmd
    from auditor.render import scan_json

    orig = scan.Prefilter.__init__
    scan.Prefilter.__init__ = lambda self, vocab_, gates_=True: orig(self, vocab_, gates=gates)
    try:
        result = scan.scan(root, settings=settings)
    finally:
        scan.Prefilter.__init__ = orig
    join.join(result)
    parser = argparse.ArgumentParser()
    scan_cmd.add_arguments(parser)
    lint.check(result, parser.parse_args([str(root)]))
    parsed = result.files_scanned
    return re.sub(r'"files_scanned": [0-9]+', '"files_scanned": N', scan_json.render(result, 0.0)), parsed


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
        for root in roots:
            (on, parsed_on), (off, parsed_off) = report(root, settings, True), report(root, settings, False)
            bad += on != off
            print(f"  report of {root.name}: {'same' if on == off else 'DIFFERS'} with and without the gates "
                  f"({parsed_on} and {parsed_off} files parsed)")
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

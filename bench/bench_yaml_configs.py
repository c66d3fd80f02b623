"""Speed and robustness of the YAML extractor on real configs (lm_eval's task YAMLs).

    pip download --no-deps lm_eval==0.4.13 -d /tmp/lmeval && (cd /tmp/lmeval && unzip -q -o lm_eval*.whl -d x)
    python bench/bench_yaml_configs.py /tmp/lmeval/x [--limit N]

Prints files/s for the full extractor (compose + walk + sites), for bare
yaml.compose_all with the same loader, and for yaml.safe_load as the baseline that
fails on lm_eval's ``!function`` tags; and the failure count of each (must be 0 for
the extractor). Timings are wall-clock on one core, after one warm-up pass over 50 files.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

from auditor import vocab
from auditor.extract import ParseError, yaml_config


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N files (0: all)")
    args = ap.parse_args()
    files = sorted(p for p in args.root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if args.limit:
        files = files[: args.limit]
    if not files:
        print(f"{args.root}: no YAML files", file=sys.stderr)
        return 2
    texts = [(p.relative_to(args.root).as_posix(), p.read_text(encoding="utf-8", errors="replace")) for p in files]
    size = sum(len(t) for _, t in texts)
    v = vocab.load()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for rel, text in texts[:50]:  # warm-up
        yaml_config.extract(text, rel, v)

    def timed(fn):
        failures, t0 = [], time.perf_counter()
        for rel, text in texts:
            try:
                fn(rel, text)
            except (ParseError, yaml.YAMLError) as exc:
                failures.append((rel, str(exc).splitlines()[0]))
        return time.perf_counter() - t0, failures

    rows = [
        ("extractor (compose + sites)", timed(lambda rel, text: yaml_config.extract(text, rel, v))),
        (f"yaml.compose_all ({loader.__name__})", timed(lambda rel, text: list(yaml.compose_all(text, Loader=loader)))),
        (f"yaml.load_all ({loader.__name__})", timed(lambda rel, text: list(yaml.load_all(text, Loader=loader)))),
    ]
    sites = sum(len(yaml_config.extract(t, r, v).sites) for r, t in texts)
    print(f"{len(texts)} YAML files, {size / 1e6:.1f} MB, {sites} knob sites")
    for name, (secs, failures) in rows:
        print(f"{name:40s} {secs:7.2f} s  {len(texts) / secs:8.0f} files/s  failures: {len(failures)}"
              f" ({100 * len(failures) / len(texts):.0f}%)")
    extractor_failures = rows[0][1][1]
    for rel, msg in extractor_failures[:10]:
        print(f"  extractor failed: {rel}: {msg}")
    return 0 if not extractor_failures else 1


if __name__ == "__main__":
    sys.exit(main())

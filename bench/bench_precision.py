"""Precision of the warnings on real packages: each warning read by hand against the code.

    python bench/bench_precision.py [--tree CHECKOUT] [--labels bench/precision_labels.json]

Scans pinned PyPI packages (``pip download --no-deps``, unpacked under bench/precision_corpus/;
sdists where the tests and examples matter) and the bench corpus packages
(bench/build_corpus.py), and matches every warning-level finding with
bench/precision_labels.json: ``T`` true (a silent fallback a reviewer would fix), ``F``
false, ``I`` real but intended or announced. The labels were made by reading each warning
of the version before and after issue 12 against the code; a warning without a label is
listed, to be read and labelled. ``--tree`` scans with another checkout's ``auditor``
(e.g. ``git worktree add /tmp/base <commit>``) to compare before and after.

Prints per rule the warnings by label, the share that is true, the labelled-true findings
that are no longer warnings (notes or gone), and the unlabelled warnings.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (spec, "sdist" | "wheel" | "any"): neither the tests nor bench_rules_pypi.py scan these
PACKAGES = [
    ("accelerate==1.15.0", "wheel"), ("agilerl==2.58.0", "wheel"), ("axolotl==0.19.0", "wheel"),
    ("brax==0.14.2", "wheel"), ("cleanrl==0.4.8", "sdist"), ("d3rlpy==2.8.1", "sdist"),
    ("deepspeed==0.19.8", "sdist"), ("dm-acme==0.4.0", "sdist"), ("lerobot==0.4.4", "sdist"),
    ("mlagents==0.28.0", "wheel"), ("mmengine==0.10.7", "wheel"), ("mosaicml==0.32.1", "wheel"),
    ("mushroom-rl==1.10.2", "any"), ("nanotron==0.4", "wheel"), ("openrlhf==0.11.2", "wheel"),
    ("pettingzoo==1.27.0", "wheel"), ("pytorch-lightning==2.6.6", "wheel"), ("rl-games==1.6.5", "wheel"),
    ("rsl-rl-lib==5.5.1", "wheel"), ("sample-factory==2.1.1", "wheel"), ("skrl==2.1.1", "sdist"),
    ("tensordict==0.15.3", "wheel"), ("torchtune==0.6.1", "wheel"), ("trl==1.16.0", "sdist"),
]
# A second hold-out set, read after the first one's fixes were in (was anything tuned to the first?)
PACKAGES += [
    ("colossalai==0.5.0", "sdist"), ("dopamine-rl==4.1.2", "wheel"), ("fairscale==0.4.13", "sdist"),
    ("litgpt==0.5.13", "wheel"), ("llamafactory==0.9.5", "wheel"), ("mani-skill==3.0.1", "wheel"),
    ("megatron-core==0.16.1", "wheel"), ("ms-swift==4.6.0", "wheel"), ("robomimic==0.3.0", "sdist"),
    ("sheeprl==0.8.4", "wheel"), ("torchtitan==0.3.0", "wheel"),
]
# A third set, scanned once the second set's fixes were in and read before any change
PACKAGES += [
    ("areal==1.0.4", "wheel"), ("fairseq2==0.8.1", "wheel"), ("gymnasium==1.4.0", "wheel"),
    ("habitat-lab==0.3.320260507", "wheel"), ("lmdeploy==0.18.0", "wheel"), ("rl4co==0.7.0", "wheel"),
    ("sb3-contrib==2.9.2", "wheel"), ("sglang==0.5.23", "wheel"), ("xtuner==0.2.0", "wheel"),
]
# A fourth set, read after the third set's fixes and left as measured: how the rules do on code
# no fix was made for
PACKAGES += [
    ("levanter==1.1", "wheel"), ("minari==0.5.4", "wheel"), ("monai==1.6.1", "wheel"),
    ("playground==0.2.0", "wheel"), ("popgym==1.0.7", "wheel"), ("rlberry==0.7.3", "wheel"),
    ("tf-agents==0.19.0", "wheel"), ("ultralytics==8.4.190", "wheel"), ("unsloth==2026.10.9", "wheel"),
    ("verifiers==0.4.0", "wheel"),
]
BENCH_CORPUS = ["stable-baselines3-2.9.2", "rl_zoo3-2.9.2", "tianshou-2.0.1", "verl-0.9.1", "torchrl-0.14.1",
                "ray-2.60.0"]


def fetch(spec: str, kind: str, cache: Path, dest: Path) -> Path | None:
    """DEST/<name>-<version>, downloaded and unpacked once."""
    out = dest / spec.replace("==", "-")
    if out.is_dir():
        return out
    name, version = spec.split("==")
    stem = f"{name}_{version}".lower().replace("-", "_")  # file names spell the name with - or _

    def cached():
        return [p for p in cache.iterdir() if p.name.lower().replace("-", "_").startswith(stem)]

    found = cached()
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache), spec,
               *{"sdist": ["--no-binary", ":all:"], "wheel": ["--only-binary", ":all:"]}.get(kind, [])]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        found = cached()
        if proc.returncode != 0 or not found:
            print(f"  could not download {spec}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
    archive = found[0]
    out.mkdir(parents=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(out)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(out, filter="data")
        inner = [p for p in out.iterdir() if p.is_dir()]
        if len(inner) == 1:  # name-version/ inside the sdist: lift it up
            for p in inner[0].iterdir():
                p.rename(out / p.name)
            inner[0].rmdir()
    return out


def warnings_of(root: Path) -> list[tuple[str, str, int]]:
    from auditor import join, lint, scan
    from auditor.lint.harness import default_args

    result = scan.scan(root, jobs=1)
    join.join(result)
    lint.check(result, default_args())
    return [(f.code, f.file, f.line, f.severity, f.message) for f in result.findings]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a checkout whose auditor package to scan with")
    ap.add_argument("--labels", type=Path, default=HERE / "precision_labels.json")
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus")
    ap.add_argument("--dest", type=Path, default=HERE / "precision_corpus", help="where the packages are unpacked")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache" / "precision")
    args = ap.parse_args(argv)
    sys.path.insert(0, str((args.tree or HERE.parent).resolve()))
    labels = {(pkg, code, file, line): lab for pkg, rows in json.loads(args.labels.read_text()).items()
              for code, file, line, lab in rows}
    args.cache.mkdir(parents=True, exist_ok=True)
    roots = [fetch(spec, kind, args.cache, args.dest) for spec, kind in PACKAGES]
    roots += [args.corpus / name for name in BENCH_CORPUS if (args.corpus / name).is_dir()]
    by_rule: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    unlabelled, demoted, seen = [], [], set()
    for root in filter(None, roots):
        for code, file, line, severity, message in warnings_of(root):
            key = (root.name, code, file, line)
            seen.add(key)
            if severity == "note":
                if labels.get(key) == "T":
                    demoted.append(key)
                continue
            lab = labels.get(key, "?")
            by_rule[code][lab] += 1
            if lab == "?":
                unlabelled.append((*key, message))
    print(f"{'rule':6} {'true':>5} {'false':>6} {'intended':>9} {'unlabelled':>11}")
    total = collections.Counter()
    for code in sorted(by_rule):
        c = by_rule[code]
        total.update(c)
        print(f"{code:6} {c['T']:5} {c['F']:6} {c['I']:9} {c['?']:11}")
    n = sum(total.values())
    print(f"{'all':6} {total['T']:5} {total['F']:6} {total['I']:9} {total['?']:11}   "
          f"{100 * total['T'] / max(n, 1):.0f}% of {n} warnings true")
    gone = [k for k, lab in labels.items() if lab == "T" and k not in seen and (args.dest / k[0]).is_dir()
            or lab == "T" and k[0] in BENCH_CORPUS and k not in seen]
    print("true findings now notes:", demoted or "none")
    print("true findings gone:", gone or "none")
    for key in unlabelled:
        print("  unlabelled:", *key[:4], "\n     ", key[4])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

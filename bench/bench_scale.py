"""How the rules and the scan grow with hostile sizes (issue 22), in seconds and megabytes.

    python bench/bench_scale.py [--pairs 1000,2000,4000,20000] [--keys 100000] [--tasks 250,500,1000]

- QG103 over N define/read pairs of one knob (N config files set 4, N reads fall back to 1,
  every read a finding), in process, after the join: was 1.2 / 3.1 / 8.9 s for 1k / 2k / 4k
  (quadratic, ~5 min for 20k);
- the join over the same sites;
- `qg-audit scan --no-cache` of one YAML of K knob keys (a fresh process: wall time, peak
  RSS): was 282 s and 1.84 GB for 100k keys;
- `qg-audit scan --no-cache --format json` of T tasks, each a config (batch size, loader
  workers in one of five, env counts) and a script that reads them into a DataLoader and an
  AsyncVectorEnv and then forces the env count to 1: was 1.4 s / 261 MB, 4.8 s / 924 MB and
  18.0 s / 3.5 GB (a 430 MB report) for 250 / 500 / 1000 tasks;
- the same with loader tasks: a config setting data.num_workers and a script with two literal
  `DataLoader(num_workers=0)` that reads the `data` section (QG105 cites the config per loader):
  was 62 s and 499 s for 500 and 1000 (QG105 scanned every configured key per loader).

tests/test_rules_scale.py asserts the operation counts; this prints the times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor import join  # noqa: E402
from auditor.model import ScanResult, Site  # noqa: E402
from auditor.rules.qg103_default_divergence import DefaultDivergence  # noqa: E402


def pairs(n: int) -> tuple[float, float, int]:
    sites = [Site("define", f"conf/c{i}.yaml", 1, 1, "data.num_workers", value=4, kind="yaml") for i in range(n)]
    sites += [Site("read", f"src/m{i}.py", 1, 1, "data.num_workers", default=1, kind="python", detail={"via": "get"})
              for i in range(n)]
    result = ScanResult(root=".", sites=sites)
    t = time.perf_counter()
    join.join(result)
    joined = time.perf_counter() - t
    t = time.perf_counter()
    found = list(DefaultDivergence().check(result))
    return joined, time.perf_counter() - t, len(found)


def _scan(*args: str) -> tuple[float, float, str]:
    """`qg-audit scan ARGS` in a fresh process: wall seconds, peak RSS in MB, how it exited."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "auditor", "scan", *args, "--no-cache"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024, f"exit {os.waitstatus_to_exitcode(status)}{': ' + err[-200:] if err else ''}"


def big_yaml(keys: int) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "conf.yaml"
        conf.write_text("".join(f"group_{i}:\n  num_workers: {i % 7 + 1}\n" for i in range(keys)))
        return _scan(tmp, "-o", os.devnull)


def _task_files(root: Path, n: int, loaders: bool) -> None:
    for i in range(n):
        if loaders:  # two literal loaders per script, in files that read the `data` section
            (root / "conf" / "task" / f"t{i}.yaml").write_text(f"data:\n  num_workers: {i % 8}\n")
            (root / "src" / f"m{i}.py").write_text(
                "from torch.utils.data import DataLoader\n"
                f"def build{i}(cfg, ds):\n    b = cfg.data.batch_size\n"
                "    return DataLoader(ds, b, num_workers=0), DataLoader(ds, b, num_workers=0)\n")
            continue
        workers = "  num_workers: 4\n" if i % 5 == 0 else ""
        (root / "conf" / "task" / f"t{i}.yaml").write_text(
            f"data:\n  batch_size: {i}\n{workers}env:\n  num_envs: {i % 7 + 1}\n  n_envs: 2\n")
        (root / "src" / f"m{i}.py").write_text(
            "from torch.utils.data import DataLoader\nimport gymnasium as gym\n"
            f"def build{i}(cfg, ds):\n    n = cfg.data.get('num_workers', 1)\n"
            "    envs = gym.vector.AsyncVectorEnv([lambda: None] * cfg.env.num_envs)\n"
            "    cfg.env.num_envs = 1\n    return DataLoader(ds, num_workers=n), envs\n")


def tasks(n: int, loaders: bool = False) -> tuple[float, float, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "conf" / "task").mkdir(parents=True)
        (root / "src").mkdir()
        _task_files(root, n, loaders)
        out = root / "report.json"
        wall, peak, how = _scan(tmp, "--format", "json", "-o", str(out))
        size = out.stat().st_size if out.exists() else 0
        return wall, peak, size, how


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="1000,2000,4000,20000")
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--tasks", default="250,500,1000")
    args = ap.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for n in (int(x) for x in args.pairs.split(",")):
        joined, rule, found = pairs(n)
        print(f"QG103, {n:>6} define/read pairs: join {joined:6.2f} s, rule {rule:6.2f} s ({found} findings)")
    wall, peak, how = big_yaml(args.keys)
    print(f"scan --no-cache of one YAML with {args.keys} knob keys: {wall:.2f} s, peak RSS {peak:.0f} MB ({how})")
    for loaders in (False, True):
        for n in (int(x) for x in args.tasks.split(",")):
            wall, peak, size, how = tasks(n, loaders)
            print(f"scan --no-cache --format json of {n:>5} {'loader ' if loaders else ''}tasks: {wall:.2f} s, "
                  f"peak RSS {peak:.0f} MB, report {size / 1e6:.1f} MB ({how})")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

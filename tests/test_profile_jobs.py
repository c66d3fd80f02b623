"""profile and diagnose on real training jobs, with the machine loaded (issue 21).

The jobs are unmodified uses of their libraries (fixtures/jobs): stable-baselines3 PPO and A2C,
a cleanrl-style PPO on gymnasium vector envs. Two busy processes load the machine for the whole
module, as in the verify matrix.

* SB3: profile --auto's sampling samples/s against a measurement the job takes of itself, in
  the same process over the same stretch of the run: the job wraps its own collect_rollouts
  (sb3_job.py --measure) and the test sums the samples and wall time of the calls that began in
  profile's steady window. The issue's criterion: within 15%. This is the one timing asserted;
  both numbers come from one process under one load, so the load cannot move one without the
  other.
* cleanrl: the untimed share is explained by function from stack samples, and the contended
  intra-op threads are named; the test reads the sampler's threads from /proc itself while it
  runs and checks the named threads against what it saw.
* diagnose on the cleanrl-style AsyncVectorEnv job with --current 2 expects and verifies 2
  workers and passes; its HTML report is rendered in headless Chromium (screenshot kept under
  $QG_AUDIT_ARTIFACTS when set).

`python -m pytest -s -m slow tests/test_profile_jobs.py --durations=0` prints each case's time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO

pytest.importorskip("torch")
pytest.importorskip("gymnasium")

JOBS = FIXTURES / "jobs"
PY = sys.executable
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DURATION = "12"  # seconds of profile after the first env step


@pytest.fixture(scope="module", autouse=True)
def _loaded(loaded_machine):  # the whole module runs beside two busy processes
    yield


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("COLUMNS", "200")
    return env


class ThreadWatch(threading.Thread):
    """Every 0.5 s: each descendant of ROOT and its threads, with their CPU ticks (/proc)."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root = root
        self.threads: dict[int, dict[int, list[int]]] = {}  # pid -> tid -> [first ticks, last ticks]
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            parents = {}
            for name in os.listdir("/proc"):
                if name.isdigit():
                    try:
                        with open(f"/proc/{name}/stat", "rb") as f:
                            data = f.read()
                        parents[int(name)] = int(data[data.rfind(b")") + 2:].split()[1])
                    except (OSError, IndexError, ValueError):
                        pass
            members, changed = {self.root}, True
            while changed:
                changed = False
                for pid, ppid in parents.items():
                    if ppid in members and pid not in members:
                        members.add(pid)
                        changed = True
            for pid in members - {self.root}:
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                            fields = f.read().rsplit(b")", 1)[1].split()
                        ticks = int(fields[11]) + int(fields[12])
                    except (OSError, IndexError, ValueError):
                        continue
                    row = self.threads.setdefault(pid, {}).setdefault(int(tid), [ticks, ticks])
                    row[1] = ticks
            self.stop.wait(0.5)


def qg(*args, timeout=300, watch=False):
    """Run the CLI; with ``watch``, also read its tree's threads from /proc while it runs."""
    proc = subprocess.Popen([PY, "-m", "auditor", *args], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watcher = ThreadWatch(proc.pid) if watch else None
    if watcher:
        watcher.start()
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if watcher:
            watcher.stop.set()
            watcher.join()
    print(f"\n[{time.monotonic() - t0:.1f} s] qg-audit {' '.join(args[:6])} ...")
    return proc.returncode, out, err, watcher


def steady_window(reports: Path) -> tuple[float, float]:
    """Profile's steady window (wall time): from the end of the sampling timer's warm-up to the
    end of its last timed step."""
    from auditor.profiling import auto
    from auditor.profiling.series import parse_records

    records = [json.loads(line) for line in reports.read_text().splitlines() if line.strip()]
    series, _ = parse_records([r for r in records if auto.is_auto(r)])
    s = next(x for x in series if x.steps)
    k = s.warmup_declared
    return s.t0 + (s.steps[k - 1].end_ns / 1e9 if k else 0.0), s.t0 + s.steps[-1].end_ns / 1e9


@pytest.mark.slow
@pytest.mark.parametrize("job", [["--algo", "ppo", "--vec", "dummy"],
                                 ["--algo", "a2c", "--vec", "subproc", "--start-method", "fork"]],
                         ids=["ppo-dummy", "a2c-subproc-fork"])
def test_sb3_sampling_rate_matches_collect_rollouts(job, tmp_path):
    pytest.importorskip("stable_baselines3")
    measured, reports = tmp_path / "collect.jsonl", tmp_path / "reports.jsonl"
    rc, out, err, _ = qg("profile", "--auto", "--duration", DURATION, "--format", "json",
                         "--save-reports", str(reports), "--", PY, str(JOBS / "sb3_job.py"), *job,
                         "--measure", str(measured))
    assert rc == 0, err
    doc = json.loads(out)
    start, end = steady_window(reports)
    calls = [json.loads(line) for line in measured.read_text().splitlines()]
    # the truth over the same window as profile's: each call's share of it, its samples pro rata
    # (a fast call the window cuts in half counts in both, or in neither)
    inside = [(c, max(start, c["w0"]), min(end, c["w0"] + c["t1"] - c["t0"])) for c in calls]
    inside = [(c, a, b) for c, a, b in inside if b > a]
    assert len(inside) >= 2, (len(calls), calls[:2], start, end)
    truth = sum(c["samples"] * (b - a) / (c["t1"] - c["t0"]) for c, a, b in inside) / sum(b - a for _, a, b in inside)
    rate = doc["samples_per_s"]
    # over one window the two agree to a few per mille on a loaded box, however unevenly the
    # calls ran (127 to 6,600 samples/s); 10% is far below the 2x a misread collect-then-train
    # loop gives
    rates = [c["samples"] / (c["t1"] - c["t0"]) for c, _, _ in inside]
    tolerance = 0.10
    print(f"  {job[1]}: profile {rate:,.0f} samples/s, collect_rollouts {truth:,.0f} ({len(inside)} calls, "
          f"{min(rates):,.0f}-{max(rates):,.0f}), ratio {rate / truth:.3f}, tolerance {tolerance:.2f}; "
          f"training {doc['training']['share']:.0%} of the loop")
    assert abs(rate / truth - 1) <= tolerance
    # training is its own row, kept out of the step, and the forward note counts sampling only
    t = doc["training"]
    assert t is not None and t["spans"] >= 2 and t["backward"] >= 2 and t["optimizer_steps"] >= 2
    assert not any("ran with autograd on" in n for n in doc["notes"]), doc["notes"]
    assert any("sampling forward calls ran under no_grad" in n and "training forward calls left out" in n
               for n in doc["notes"]), doc["notes"]
    # the window counted from the first env step, not from the launch
    assert doc["target"]["ready"]["at"] > 0 and "first timed step" in doc["target"]["ready"]["why"]


@pytest.mark.slow
def test_cleanrl_untimed_share_and_contended_intra_op_threads():
    rc, out, err, watch = qg("profile", "--auto", "--duration", DURATION, "--", PY, str(JOBS / "cleanrl_ppo.py"),
                             "--vec", "sync", watch=True)
    assert rc == 0, err
    print(out[:4000])
    # the untimed share is explained by function: torch's distribution code, reached from the agent
    section = out.split("untimed ", 1)[1] if "by function" in out else ""
    assert "of the step, by function" in out, out
    lines = [ln for ln in section.splitlines()[1:9] if "%" in ln]
    assert any("torch/" in ln and "cleanrl_ppo.py" in ln for ln in lines[:3]), lines
    # the conclusion names intra-op contention, the busy threads beside the sampling thread, the setting
    conclusion = next(ln for ln in out.splitlines() if ln.startswith("conclusion:"))
    assert "intra-op contention: sampling process" in conclusion and "OMP_NUM_THREADS=1" in conclusion
    pid = int(re.search(r"sampling process (\d+)", conclusion).group(1))
    named = [int(t) for t in re.findall(r"tid (\d+) runnable", conclusion)]
    assert named, conclusion
    # checked against /proc as the test read it: those are threads of that process, and they ran
    seen = watch.threads.get(pid, {})
    assert pid in seen, sorted(watch.threads)
    for tid in named:
        assert tid in seen and tid != pid
        first, last = seen[tid]
        assert last - first >= 50, (tid, first, last)  # at least half a second of CPU (100 ticks/s)


@pytest.mark.slow
def test_diagnose_cleanrl_async_current_2_verifies_2_workers(tmp_path):
    html, md = tmp_path / "report.html", tmp_path / "report.md"
    rc, out, err, _ = qg("diagnose", "--current", "2", "--duration", "10", "--sweep-runs", "1",
                         "--max-doublings", "1", "--format", "json", "--report", str(html), "--report", str(md),
                         "--", PY, str(JOBS / "cleanrl_ppo.py"), "--vec", "async", "--num-envs", "{batch}",
                         timeout=420)
    doc = json.loads(out)
    print(json.dumps({s["name"]: [s["status"], s["verdict"]] for s in doc["steps"]}), doc["branch"])
    scan, verify = doc["scan"], doc["verify"]
    # the count the command asks for: {batch} = 2 on --num-envs, not the default 4 the scan reads
    assert scan["expected"]["workers"] == 2, scan["expected"]
    assert scan["expected"]["knobs"][0]["from_command"] is True
    assert verify["expected"]["workers"] == 2 and verify["observed"]["workers"] == 2
    assert verify["verdict"] == "pass", verify["reasons"]
    # sibling scripts' findings (serial_backends.py's DummyVecEnv ...) are apart, not in the exit code
    assert scan["entry"]["script"] == "cleanrl_ppo.py"
    assert scan["findings"] == [] and scan["findings_elsewhere"], scan
    assert rc == 0 and doc["exit_code"] == 0, err[-3000:]
    ctx = doc["context"]
    assert ctx["host"] and ctx["cpus"] and ctx["load_start"] and ctx["versions"]["libraries"].get("torch")
    text = md.read_text()
    for needle in ("- host: ", "- CPUs: ", "- load: ", "- versions: Python", "| `num_envs` | **2** | 2 from the command "
                   "line (--num-envs 2;", "`n_envs` (not run by the command)"):
        assert needle in text, needle
    _screenshot(html, tmp_path)


def _screenshot(html: Path, tmp_path: Path) -> None:
    page = html.read_text()
    assert "<script" not in page
    assert "<dt>host</dt>" in page and "<dt>load</dt>" in page and "<dt>versions</dt>" in page
    assert '<td class="knob"><code>num<wbr>_envs</code>' in page or '<td class="knob"><code>num_<wbr>envs' in page
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium) to render the HTML report")
    artifacts = os.environ.get("QG_AUDIT_ARTIFACTS")
    shot = (Path(artifacts) if artifacts else tmp_path) / "diagnose-cleanrl-report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=1100,3400",
                           f"--screenshot={shot}", html.as_uri()], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 30_000  # a blank page of this size is a few KB; text, tables and charts are not
    print(f"  screenshot: {shot}")

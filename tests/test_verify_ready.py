"""verify's readiness, kept output, serial backends by name and per-thread CPU (issue 21).

Real processes throughout: fixture samplers that import slowly, exit early, never start
workers, resist being ended; the hook patching real modules (tianshou and torchrl are not
installed in the suite: fixtures/jobs/standins gives the classes the hook patches, at the
module paths it watches).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests._verify_helpers import SAMPLERS, assert_none_left, wait_none_left
from tests.conftest import FIXTURES

PY = sys.executable
JOBS = FIXTURES / "jobs"


@pytest.fixture(autouse=True)
def no_process_left():
    yield
    left = wait_none_left()
    assert not left, f"target processes left after the test: {left}"


def verify(cli, tmp_path, *args, cwd=SAMPLERS, env=None, fmt="json"):
    out = tmp_path / "verify.out"
    proc = cli("verify", "--format", fmt, "-o", str(out), *args, cwd=cwd, timeout=180, env=env)
    assert out.exists(), f"no report; rc={proc.returncode} stderr={proc.stderr}"
    if fmt == "text":
        return out.read_text(), proc
    data = json.loads(out.read_text())
    assert_none_left(data["observed"]["processes"])
    assert data["exit_code"] == proc.returncode
    return data, proc


@pytest.mark.slow
def test_window_starts_when_slow_importing_workers_have_reported(cli, tmp_path):
    # spawn children that take 2.5 s to import the main module: measured from the launch, a 2 s
    # window saw them silent (pending); measured from readiness they pass
    data, proc = verify(cli, tmp_path, "--expect-workers", "2", "--duration", "2", "--warmup", "0.5", "--",
                        PY, "mp_sampler.py", "--workers", "2", "--start-method", "spawn", "--import-delay", "2.5")
    assert data["verdict"] == "pass", data["reasons"]
    ready = data["ready"]
    assert ready["at"] >= 2.5 and "worker" in ready["why"] and not ready["timed_out"]
    assert data["observed"]["window_start"] == pytest.approx(ready["at"] + 0.5, abs=0.01)
    # the run lasted the duration after readiness, not after the launch
    assert data["target"]["run_time_s"] >= ready["at"] + 2 - 0.002  # both rounded to the millisecond
    # while waiting: a status line on stderr (not a terminal: printed once it passed 2 s)
    assert "qg-audit verify: waiting for 2 workers:" in proc.stderr and "importing" in proc.stderr, proc.stderr


def test_a_target_that_exits_before_it_is_ready_says_so(cli, tmp_path):
    data, _ = verify(cli, tmp_path, "--expect-workers", "2", "--", PY, "-c", "import time; time.sleep(1)")
    assert data["verdict"] == "no-workers"
    message = data["reasons"][0]["message"]
    assert "the target exited with code 0 after" in message and "before it was ready" in message, message
    assert "waiting for 2 workers" in message and data["ready"]["at"] is None


def test_ready_timeout_ends_a_job_that_never_starts_its_workers(cli, tmp_path):
    data, _ = verify(cli, tmp_path, "--expect-workers", "2", "--ready-timeout", "3", "--",
                     PY, "-c", "import time; time.sleep(60)")
    assert data["verdict"] == "no-workers" and data["ready"]["timed_out"] is True
    assert "the job was not ready 3 s after the launch (--ready-timeout)" in data["reasons"][0]["message"]
    assert 3 <= data["target"]["run_time_s"] < 30 and data["target"]["ended_by"] == "qg-audit"


@pytest.mark.slow
def test_workers_still_importing_at_the_ready_timeout_are_pending(cli, tmp_path):
    data, _ = verify(cli, tmp_path, "--expect-workers", "2", "--ready-timeout", "3", "--",
                     PY, "mp_sampler.py", "--workers", "2", "--start-method", "spawn", "--import-delay", "30")
    assert data["verdict"] == "pending", data["reasons"]
    message = data["reasons"][0]["message"]
    assert "never reported" in message and "--ready-timeout" in message and "importing" in message, message


@pytest.mark.slow
def test_timeout_is_reported_as_measured_with_the_teardown_apart(cli, tmp_path):
    # unruly.py's children ignore SIGINT / SIGTERM: ending the tree takes the 3 s + 2 s graces
    data, _ = verify(cli, tmp_path, "--expect-workers", "1", "--duration", "0", "--timeout", "2",
                     "--match", "unruly", "--", PY, "unruly.py")
    assert data["target"]["ended_by"] == "timeout"
    timeout = next(r["message"] for r in data["reasons"] if r["code"] == "timeout")
    assert data["target"]["run_time_s"] < 4 and data["target"]["teardown_s"] >= 2, data["target"]
    assert f"after {data['target']['run_time_s']:.1f} s" in timeout and "ending its tree took" in timeout, timeout


@pytest.mark.slow
def test_failing_verdict_shows_the_output_tail_and_keep_output_keeps_it_all(cli, tmp_path):
    kept = tmp_path / "kept"
    text, proc = verify(cli, tmp_path, "--expect-workers", "3", "--duration", "2", "--warmup", "0.5",
                        "--keep-output", str(kept), "--", PY, "mp_sampler.py", "--workers", "2",
                        "--say", "hello from the sampler", fmt="text")
    assert proc.returncode == 1 and text.startswith("verify: FALLBACK"), text
    assert "target stderr (tail):" in text and "target stdout (tail):" in text
    assert "  | hello from the sampler" in text
    assert "KeyboardInterrupt" not in text  # what our SIGINT made it print is not its output
    assert f"output kept in {kept}" in text
    assert "hello from the sampler" in (kept / "stdout.log").read_text()
    assert "hello from the sampler" in (kept / "stderr.log").read_text()
    reports = [json.loads(ln) for ln in (kept / "reports.jsonl").read_text().splitlines()]
    assert sum(1 for r in reports if r.get("type") == "worker") >= 2


def test_keep_output_that_is_a_file_is_a_usage_error(cli, tmp_path):
    (tmp_path / "f").write_text("x")
    proc = cli("verify", "--expect-workers", "2", "--keep-output", str(tmp_path / "f"), "--", PY, "-c", "pass")
    assert proc.returncode == 2 and "exists and is not a directory" in proc.stderr


STANDINS = str(JOBS / "standins")


@pytest.mark.parametrize("kind,backend,count", [
    ("tianshou", "tianshou DummyVectorEnv stepped 3 envs", "use SubprocVectorEnv"),
    pytest.param("torchrl-env", "torchrl SerialEnv stepped 3 envs", "use ParallelEnv", marks=pytest.mark.slow),
    pytest.param("torchrl-collector", "torchrl SyncDataCollector collected in the process", "MultiSyncDataCollector",
                 marks=pytest.mark.slow),
])
def test_serial_backends_are_named_with_their_site(cli, tmp_path, kind, backend, count):
    data, _ = verify(cli, tmp_path, "--expect-workers", "3", "--duration", "1", "--warmup", "0",
                     "--", PY, "serial_backends.py", kind, cwd=JOBS,
                     env={"PYTHONPATH": STANDINS + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert data["verdict"] == "fallback", data["reasons"]
    message = data["reasons"][0]["message"]
    line = next(i for i, ln in enumerate((JOBS / "serial_backends.py").read_text().splitlines(), 1)
                if {"tianshou": "DummyVectorEnv([", "torchrl-env": "SerialEnv(3",
                    "torchrl-collector": "SyncDataCollector(object)"}[kind] in ln)
    assert backend in message and f"serial_backends.py:{line} in build()" in message and count in message, message
    assert "a serial backend was created" in data["ready"]["why"]


@pytest.mark.slow
def test_multiprocessing_dummy_pool_is_threads_not_processes_by_name(cli, tmp_path):
    data, _ = verify(cli, tmp_path, "--expect-workers", "3", "--duration", "1", "--warmup", "0",
                     "--", PY, "serial_backends.py", "mp-dummy", cwd=JOBS)
    assert data["verdict"] == "threads-not-processes", data["reasons"]
    assert "multiprocessing.dummy.Pool(3) at" in data["reasons"][0]["message"]
    assert "serial_backends.py:" in data["reasons"][0]["message"]


def test_thread_meter_tells_a_busy_thread_from_an_idle_one():
    """Real threads of this process: one spinning, one asleep, read from /proc over ~1.5 s."""
    from auditor.runtime.census import ProcessRow
    from auditor.runtime.procfs import read_stat
    from auditor.runtime.threadcpu import ThreadMeter

    stop = threading.Event()

    def spin():
        while not stop.is_set():
            pass

    threads = [threading.Thread(target=spin), threading.Thread(target=stop.wait)]
    for t in threads:
        t.start()
    st = read_stat(os.getpid())
    row = ProcessRow(pid=st.pid, create_time=st.create_time, ppid=st.ppid, name=st.name, cmdline=[], role="target",
                     threads=st.threads, threads_peak=st.threads, rss_bytes=0, rss_peak=0, first_seen=0,
                     last_seen=0, status="running")
    meter = ThreadMeter()
    try:
        meter.read(0.0, [row])
        t0 = time.monotonic()
        time.sleep(1.5)
        meter.read(time.monotonic() - t0, [row])
    finally:
        stop.set()
        for t in threads:
            t.join()
    summary = meter.summary([row], cpus=2)
    me = summary["processes"][0]
    # the spinning thread wanted a CPU all the time (runnable counts the run-queue wait);
    # the main thread slept and the waiting thread blocked
    assert me["busy"] == 1 and me["threads"] >= 3, summary
    assert summary["busy_threads"] == 1


def test_readiness_status_names_what_it_waits_for():
    from auditor.runtime.ready import Readiness

    r = Readiness(workers=4)
    assert r.status(12.2, present=4, importing=4) == "waiting for 4 workers: 12 s, 4 workers importing"
    assert r.status(3, present=0) == "waiting for 4 workers: 3 s, no worker yet"
    assert r.status(5, present=4, importing=1) == "waiting for 4 workers: 5 s, 3 of 4 workers ready, 1 worker importing"


def test_status_line_prints_nothing_for_a_short_wait_and_logs_a_long_one():
    import io

    from auditor.render import status as status_mod

    stream = io.StringIO()
    line = status_mod.StatusLine(stream=stream, prefix="qg-audit verify")
    line("waiting for 4 workers: 0 s, no worker yet")
    assert stream.getvalue() == ""
    line.start -= status_mod.QUIET_S + 1
    line("waiting for 4 workers: 3 s, 4 workers importing")
    line("waiting for 4 workers: 3 s, 4 workers importing")  # not again before LOG_EVERY
    line(None)
    assert stream.getvalue() == "qg-audit verify: waiting for 4 workers: 3 s, 4 workers importing\n"


def test_hook_watches_every_module_it_patches():
    """sitecustomize's watched names and the patches module's table stay in step."""
    import importlib.util

    hook = Path(__file__).resolve().parent.parent / "auditor" / "worker" / "hook"
    spec = importlib.util.spec_from_file_location("_qg_patches_copy", hook / "_qg_audit_patches.py")
    patches = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patches)
    text = (hook / "sitecustomize.py").read_text()
    missing = [name for name in patches._PATCHES if f'"{name}"' not in text]
    assert not missing, missing


def test_run_target_with_a_reports_predicate_counts_the_duration_from_the_first_match():
    """The API profile and diagnose use: ready at the first record the predicate accepts."""
    from auditor.runtime.ready import Readiness
    from auditor.runtime.session import run_target

    ready = Readiness(reports=lambda r: r.get("type") == "worker" and r.get("source") != "hook",
                      what="the first report of the program's own", timeout=60)
    result = run_target([PY, "mp_sampler.py", "--workers", "1", "--report-delay", "1.5"], cwd=str(SAMPLERS),
                        duration=1, warmup=0.5, ready=ready)
    assert result.ready.at is not None and result.ready.at >= 1.5, result.ready
    assert result.ready.why.startswith("a worker reported") and result.window_start == pytest.approx(result.ready.at + 0.5, abs=0.002)
    assert result.duration_s >= result.ready.at + 1
    assert_none_left(result.processes)

"""qg-audit verify end to end: real sampler programs from fixtures/samplers, real processes."""

from __future__ import annotations

import json
import pytest

from tests._verify_helpers import SAMPLERS, assert_none_left, wait_none_left

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:  # pragma: no cover
    HAVE_TORCH = False
try:
    import gymnasium  # noqa: F401

    HAVE_GYM = True
except ImportError:  # pragma: no cover
    HAVE_GYM = False


@pytest.fixture(autouse=True)
def no_process_left():
    yield
    left = wait_none_left()
    assert not left, f"target processes left after the test: {left}"


def verify(cli, tmp_path, *args, expect_rc=None):
    out = tmp_path / "verify.json"
    proc = cli("verify", "--format", "json", "-o", str(out), *args, cwd=SAMPLERS, timeout=180)
    assert out.exists(), f"no report; rc={proc.returncode} stderr={proc.stderr}"
    data = json.loads(out.read_text())
    assert data["schema"] == "qg-audit.verify/1"
    assert_none_left(data["observed"]["processes"])
    if expect_rc is not None:
        assert proc.returncode == expect_rc, (data["verdict"], data["reasons"], proc.stderr)
    assert data["exit_code"] == proc.returncode
    return data


def sampler(*args):
    return ["--", "python", *args]


QUICK = ["--duration", "2.5", "--warmup", "0.5"]


def test_fork_sampler_passes_and_workers_report(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "3", *QUICK,
                  *sampler("mp_sampler.py", "--workers", "3"), expect_rc=0)
    assert data["verdict"] == "pass"
    assert data["observed"]["workers"] == 3
    workers = [p for p in data["observed"]["processes"] if p["role"] == "worker"]
    assert len(workers) == 3 and all(p["backend"] == "multiprocessing (fork)" for p in workers)
    target = [p for p in data["observed"]["processes"] if p["role"] == "target"]
    assert len(target) == 1 and target[0]["rss_peak"] > 0 and target[0]["threads_peak"] >= 1
    assert data["hook"]["active"] is True
    # both the user's auditor.report.worker() call and the hook's bootstrap record, per worker
    sources = {(r["pid"], r.get("source", "user")) for r in data["reports"] if r["type"] == "worker"}
    assert {p["pid"] for p in workers} == {pid for pid, _ in sources}
    assert {s for _, s in sources} == {"user", "hook"}
    assert data["target"]["ended_by"] == "qg-audit" and data["target"]["exit_code"] is None


@pytest.mark.slow
@pytest.mark.parametrize("method,backend", [("spawn", "multiprocessing (spawn)"),
                                            ("forkserver", "multiprocessing (forkserver)")])
def test_spawn_and_forkserver_samplers_pass(cli, tmp_path, method, backend):
    data = verify(cli, tmp_path, "--expect-from", "configs/rollout.yaml:rollout.num_workers",
                  "--duration", "8", "--warmup", "1", *sampler("mp_sampler.py", "--config", "configs/rollout.yaml",
                                                               "--start-method", method), expect_rc=0)
    assert data["verdict"] == "pass" and data["expected"]["workers"] == 4
    roles = [(p["role"], p["backend"]) for p in data["observed"]["processes"]]
    assert roles.count(("worker", backend)) == 4
    assert ("helper", "multiprocessing resource tracker") in roles
    if method == "forkserver":
        assert ("helper", "multiprocessing forkserver") in roles
    hook_workers = [r for r in data["reports"] if r["type"] == "worker" and r.get("source") == "hook"]
    assert {r["start_method"] for r in hook_workers} == {method}


@pytest.mark.slow
def test_misspelt_key_runs_the_default_of_one_and_fails_as_fallback(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "4", *QUICK,
                  *sampler("mp_sampler.py", "--config", "configs/misspelt.yaml"), expect_rc=1)
    assert data["verdict"] == "fallback"
    assert data["observed"]["workers"] == 1
    assert "default of 1" in data["reasons"][0]["message"]


def test_worker_reporting_a_wrong_value_is_value_mismatch(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-from", "configs/rollout.json:rollout.num_workers", *QUICK,
                  *sampler("mp_sampler.py", "--workers", "2", "--report-value", "8"), expect_rc=1)
    assert data["verdict"] == "value-mismatch"
    assert "num_workers=8" in data["reasons"][0]["message"]


@pytest.mark.slow
def test_process_pool_executor_passes(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "3", "--duration", "3", "--warmup", "0.5",
                  *sampler("pool_executor.py", "--workers", "3"), expect_rc=0)
    assert data["verdict"] == "pass"
    assert any(r["type"] == "pool" and r["backend"] == "ProcessPoolExecutor" and r["size"] == 3
               for r in data["reports"])


@pytest.mark.slow
def test_lazy_spawn_executor_with_little_work_is_under_used_not_fallback(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "4", "--duration", "4", "--warmup", "0.5",
                  *sampler("pool_executor.py", "--workers", "4", "--tasks", "1", "--start-method", "spawn"),
                  expect_rc=0)
    assert data["verdict"] == "under-used", data["reasons"]


@pytest.mark.slow
def test_thread_pool_where_processes_were_expected(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "4", *QUICK,
                  *sampler("pool_executor.py", "--workers", "4", "--threads"), expect_rc=1)
    assert data["verdict"] == "threads-not-processes"
    assert data["observed"]["threads"] >= 5


def test_crashing_target_exits_3_with_its_stderr(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "2", *sampler("crash.py"), expect_rc=3)
    assert data["verdict"] == "target-failed"
    assert data["target"]["exit_code"] == 1
    assert "does-not-exist.yaml" in data["reasons"][0]["message"]


def test_command_that_cannot_start_exits_3(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "2", "--", "./no-such-sampler", expect_rc=3)
    assert data["target"]["started"] is False and data["verdict"] == "target-failed"


@pytest.mark.slow
def test_text_output_names_the_verdict_and_the_next_check(cli):
    proc = cli("verify", "--expect-workers", "4", *QUICK, "--", "python", "mp_sampler.py", "--config",
               "configs/misspelt.yaml", cwd=SAMPLERS, timeout=120)
    assert proc.returncode == 1
    first = proc.stdout.splitlines()[0]
    assert first.startswith("verify: FALLBACK") and "saw 1" in first
    assert "Next:" in proc.stdout


@pytest.mark.parametrize("args,needle", [
    (["--", "python", "x.py"], "--expect-workers"),
    (["--expect-workers", "2"], "no command"),
    (["--expect-from", "configs/rollout.yaml:rollout.nope", "--", "true"], "rollout.yaml: key 'rollout.nope'"),
    (["--expect-from", "configs/missing.yaml:a", "--", "true"], "configs/missing.yaml: no such file"),
    (["--expect-workers", "2", "--match", "(", "--", "true"], "--match"),
])
def test_usage_errors_exit_2_with_one_line(cli, args, needle):
    proc = cli("verify", *args, cwd=SAMPLERS)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_expect_from_toml_and_bad_yaml_line(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rollout:\n  num_workers: [1,\n")
    proc = cli("verify", "--expect-from", f"{bad}:rollout.num_workers", "--", "true", cwd=SAMPLERS)
    assert proc.returncode == 2 and f"{bad}:" in proc.stderr
    data = verify(cli, tmp_path, "--expect-from", "configs/rollout.toml:rollout.num_workers", *QUICK,
                  *sampler("mp_sampler.py", "--workers", "3"), expect_rc=0)
    assert data["expected"]["workers"] == 3 and data["expected"]["key"] == "rollout.num_workers"


@pytest.mark.slow  # a non-interactive sh keeps SIGINT ignored in background jobs: ending takes 3 s more
def test_match_narrows_the_workers(cli, tmp_path):
    # workers started with subprocess are not multiprocessing children: --match counts them
    data = verify(cli, tmp_path, "--expect-workers", "2", *QUICK, "--match", r"sleep 3\d",
                  "--", "sh", "-c", "sleep 31 & sleep 32 & sleep 60; wait", expect_rc=0)
    names = sorted(" ".join(p["cmdline"]) for p in data["observed"]["processes"] if p["role"] == "worker")
    assert names == ["sleep 31", "sleep 32"]


@pytest.mark.slow
def test_no_hook_and_python_dash_I_are_stated(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "2", *QUICK, "--no-hook",
                  *sampler("mp_sampler.py", "--workers", "2"), expect_rc=0)
    assert data["hook"] == {"enabled": False, "active": None, "notes": data["hook"]["notes"]}
    assert not any(r.get("source") == "hook" for r in data["reports"])
    data = verify(cli, tmp_path, "--expect-workers", "2", *QUICK,
                  "--", "python", "-I", "-c", "import time; time.sleep(3)", expect_rc=1)
    assert data["hook"]["active"] is False
    assert any("python -I" in n for n in data["hook"]["notes"])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_GYM, reason="gymnasium is not installed")
@pytest.mark.parametrize("vector,verdict,rc", [("async", "pass", 0), ("sync", "fallback", 1)])
def test_gymnasium_async_passes_and_sync_is_fallback(cli, tmp_path, vector, verdict, rc):
    data = verify(cli, tmp_path, "--expect-workers", "3", "--duration", "8", "--warmup", "1",
                  *sampler("vec_env_sampler.py", "--vector", vector, "--num-envs", "3"), expect_rc=rc)
    assert data["verdict"] == verdict
    if vector == "async":
        hook = [r for r in data["reports"] if r["type"] == "worker" and r.get("source") == "hook"]
        assert sorted(r["worker_id"] for r in hook) == [0, 1, 2]
        assert {r["backend"] for r in hook} == {"gymnasium AsyncVectorEnv"}
    else:
        assert "SyncVectorEnv" in data["reasons"][0]["message"]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not importable here")
def test_torch_dataloader_two_workers_pass_and_report_without_user_code(cli, tmp_path):
    # importing torch takes seconds, many more on a loaded machine: watch long enough
    data = verify(cli, tmp_path, "--expect-workers", "2", "--duration", "25", "--warmup", "1",
                  *sampler("dataloader_sampler.py", "--num-workers", "2"), expect_rc=0)
    assert data["verdict"] == "pass"
    workers = [p for p in data["observed"]["processes"] if p["role"] == "worker"]
    assert {p["name"] for p in workers} == {"pt_data_worker"}
    hook = [r for r in data["reports"] if r["type"] == "worker"]
    assert sorted(r["values"]["worker_id"] for r in hook) == [0, 1]
    assert {r["values"]["num_workers"] for r in hook} == {2}



@pytest.mark.slow
@pytest.mark.parametrize("extra,expect,verdict", [
    (["--workers", "3"], "2", "excess"),
    (["--workers", "4", "--cap", "2"], "4", "partial"),
    (["--workers", "3", "--die-after", "1.0"], "3", "workers-died"),
])
def test_excess_partial_and_died(cli, tmp_path, extra, expect, verdict):
    data = verify(cli, tmp_path, "--expect-workers", expect, "--duration", "4", "--warmup", "0.5",
                  "--interval", "0.25", *sampler("mp_sampler.py", *extra), expect_rc=1)
    assert data["verdict"] == verdict, data["reasons"]
    assert "Next:" in data["reasons"][0]["message"]


@pytest.mark.slow
def test_workers_that_do_not_report_are_pending(cli, tmp_path):
    # without the hook, only the workers' own auditor.report.worker() calls count; they come late
    data = verify(cli, tmp_path, "--expect-workers", "2", "--duration", "3.5", "--warmup", "0.5", "--no-hook",
                  *sampler("mp_sampler.py", "--workers", "3", "--report-delay", "0.2"), expect_rc=1)
    assert data["verdict"] == "excess"  # sanity: the report flow works without the hook
    # spawn workers stuck before they report (as if importing a heavy module); the driver reports
    data = verify(cli, tmp_path, "--expect-workers", "2", "--duration", "5", "--warmup", "0.5", "--no-hook",
                  *sampler("mp_sampler.py", "--workers", "2", "--start-method", "spawn", "--report-delay", "60",
                           "--driver-report"), expect_rc=1)
    assert data["verdict"] == "pending", data["reasons"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupting_verify_ends_the_target_tree(tmp_path, sig):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "auditor", "verify", "--expect-workers", "3", "--duration",
                             "60", "--", "python", "mp_sampler.py", "--workers", "3"], cwd=SAMPLERS, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    import psutil

    while time.monotonic() < deadline and len(psutil.Process(proc.pid).children(recursive=True)) < 4:
        time.sleep(0.2)
    assert len(psutil.Process(proc.pid).children(recursive=True)) >= 4
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err


@pytest.mark.slow
@pytest.mark.ray
def test_ray_actors_started_by_the_target_are_counted_and_ray_is_shut_down(cli, tmp_path):
    pytest.importorskip("ray")
    data = verify(cli, tmp_path, "--expect-workers", "2", "--duration", "30", "--warmup", "5",
                  *sampler("ray_sampler.py", "--workers", "2"), expect_rc=0)
    assert data["verdict"] == "pass", data["reasons"]
    rows = data["observed"]["processes"]
    actors = [p for p in rows if p["role"] == "worker"]
    assert all(p["backend"] == "ray actor" and p["cmdline"][0].startswith("ray::RolloutWorker") for p in actors)
    assert any(p["role"] == "helper" and p["name"].startswith("raylet") for p in rows)
    # assert_none_left (in verify) checked that no raylet, gcs_server or actor of this run is left


@pytest.mark.slow
def test_expect_threads_below_expectation_is_a_fallback(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "2", "--expect-threads", "4", *QUICK,
                  *sampler("mp_sampler.py", "--workers", "2"), expect_rc=1)
    assert data["verdict"] == "fallback" and data["expected"]["threads"] == 4
    assert "threads per process" in data["reasons"][0]["message"]

"""qg-audit verify --ray on a real two-node Ray cluster (ray.cluster_utils.Cluster on one machine).

One cluster (head + one worker node, 2 CPUs each, with the dashboard) is shared by the whole
module: starting one costs 10-25 s here. Every Ray process of it carries RAY_TMPDIR=<our
dir> in its environment, which is how the leftover checks find exactly our processes and
never another engineer's.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

from tests.conftest import FIXTURES, REPO, run_cli

ray = pytest.importorskip("ray")

pytestmark = [pytest.mark.ray, pytest.mark.slow]

JOB = str(FIXTURES / "ray" / "actors_job.py")


def ray_processes(tmpdir: str) -> list[str]:
    """Processes (other than this one) started under our RAY_TMPDIR: raylet, gcs_server, ray::*."""
    found = []
    for p in psutil.process_iter(["pid", "name", "cmdline"]):
        if p.pid == os.getpid():
            continue
        try:
            if p.environ().get("RAY_TMPDIR") == tmpdir:
                found.append(f"{p.pid} {p.info['name']} {' '.join(p.info['cmdline'] or [])[:80]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def wait_gone(tmpdir: str, limit: float = 30.0) -> list[str]:
    end = time.monotonic() + limit
    left = ray_processes(tmpdir)
    while left and time.monotonic() < end:
        time.sleep(0.5)
        left = ray_processes(tmpdir)
    return left


def job_processes() -> list[int]:
    """Drivers of our fixture job still running (verify must have ended them)."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if JOB in (p.info["cmdline"] or []):
                out.append(p.pid)
        except psutil.NoSuchProcess:
            continue
    return out


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    tmpdir = tempfile.mkdtemp(prefix="qgr-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmpdir
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = None
    try:
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": True,
                                                          "dashboard_port": port})
        c.add_node(num_cpus=2)
        c.wait_for_nodes()
        yield {"gcs": c.gcs_address, "dashboard": f"http://127.0.0.1:{port}", "tmpdir": tmpdir}
    finally:
        if c is not None:
            c.shutdown()
        left = wait_gone(tmpdir)
        if left:  # last resort, so one failure does not leak into the next engineer's run
            subprocess.run(["ray", "stop", "--force"], env=dict(os.environ, RAY_TMPDIR=tmpdir),
                           capture_output=True, timeout=60)
        if saved is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = saved
        shutil.rmtree(tmpdir, ignore_errors=True)
        assert not left, f"Ray processes left behind by the cluster fixture: {left}"


def verify(cluster, *args, env=None, timeout=300):
    full_env = {"RAY_TMPDIR": cluster["tmpdir"]}
    full_env.update(env or {})
    proc = run_cli("verify", "--format", "json", *args, env=full_env, timeout=timeout)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}") from None
    return proc, doc


def assert_job_ended(cluster, doc) -> None:
    """Nothing of the verified job survives: its driver is gone and Ray marked its actors dead."""
    assert job_processes() == []
    from auditor.runtime.ray_state import HttpState

    ids = {a["actor_id"] for a in doc["observed"]["actors"]}
    pids = [a["pid"] for a in doc["observed"]["actors"] if a["pid"]]

    def actor_processes():
        out = []
        for pid in pids:
            try:
                if psutil.Process(pid).cmdline()[:1] == ["ray::Rollout"]:
                    out.append(pid)
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                pass
        return out

    end = time.monotonic() + 60  # a loaded 2-core box: Ray's teardown can take a while
    while True:
        states = {a.actor_id: a.state for a in HttpState(cluster["dashboard"]).snapshot().actors if a.actor_id in ids}
        alive = actor_processes()
        if (all(s == "DEAD" for s in states.values()) and not alive) or time.monotonic() > end:
            break
        time.sleep(0.5)
    assert all(s == "DEAD" for s in states.values()), states
    assert not alive, f"actor processes of the ended job still run: {alive}"


@pytest.fixture(scope="module")
def pass_run(cluster):
    # 4 actors x 1 CPU on two 2-CPU nodes: Ray must place two on each node.
    proc, doc = verify(cluster, "--ray", cluster["gcs"], "--expect-workers", "4", "--per-node", "2",
                       "--match", "^Rollout$", "--duration", "0", "--timeout", "200", "--",
                       sys.executable, JOB, "--address", cluster["gcs"], "--actors", "4", "--hold", "4")
    return proc, doc


def test_actors_across_two_nodes_pass(cluster, pass_run):
    proc, doc = pass_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["schema"] == "qg-audit.verify/1"
    assert doc["verdict"] == "pass", doc["reasons"]
    assert doc["observed"]["workers"] == 4
    assert doc["ray"]["via"] == "http"
    alive_nodes = {a["node_id"] for a in doc["observed"]["actors"] if a["alive_at"] is not None}
    assert len(alive_nodes) == 2
    assert sorted(n["actors"] for n in doc["observed"]["nodes"]) == [2, 2]
    assert all(a["resources"].get("CPU") == 1.0 for a in doc["observed"]["actors"])
    assert_job_ended(cluster, doc)


def test_reports_from_actors_on_the_second_node_are_seen(cluster, pass_run):
    proc, doc = pass_run
    workers = [r for r in doc["reports"] if r.get("type") == "worker"]
    nodes = {r["ray"]["node_id"] for r in workers}
    head = [n["node_id"] for n in doc["observed"]["nodes"] if n["head"]]
    assert len(workers) == 4, doc["reports"]
    assert len(nodes) == 2 and set(head) < nodes  # one of them is the non-head node
    assert all(r["values"] == {"num_workers": 4} for r in workers)
    # each report is matched to an actor the census saw, by (node, pid)
    seen = {(a["node_id"], a["pid"]) for a in doc["observed"]["actors"]}
    assert {(r["ray"]["node_id"], r["pid"]) for r in workers} <= seen


def test_over_asking_actors_give_pending_creation(cluster):
    # 4 actors x 1.5 CPUs: one fits on each 2-CPU node, the other two can never be placed.
    # QG_AUDIT_RAY_STATE=gcs reads the GCS directly (the path used without a dashboard).
    proc, doc = verify(cluster, "--ray", cluster["gcs"], "--expect-workers", "4", "--match", "Rollout",
                       "--duration", "0", "--timeout", "200", "--",
                       sys.executable, JOB, "--address", cluster["gcs"], "--actors", "4", "--cpus", "1.5",
                       "--ready", "2", "--hold", "4", env={"QG_AUDIT_RAY_STATE": "gcs"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert doc["ray"]["via"] == "gcs"
    assert doc["verdict"] == "pending-creation"
    assert doc["observed"]["workers"] == 2
    msg = next(r["message"] for r in doc["reasons"] if r["code"] == "pending-creation")
    assert "2 Rollout actor(s) stayed PENDING_CREATION" in msg
    assert "CPU" in msg and "6 in total" in msg  # the unmet resource, named with the numbers
    assert_job_ended(cluster, doc)


def test_inspect_running_job_per_node_imbalance(cluster):
    # No COMMAND: inspect a job that is already running, through the dashboard URL only.
    # 3 actors x 1 CPU on two 2-CPU nodes: 2 + 1, never 2 per node.
    env = dict(os.environ, RAY_TMPDIR=cluster["tmpdir"])
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    driver = subprocess.Popen([sys.executable, JOB, "--address", cluster["gcs"], "--actors", "3"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = driver.stdout.readline()  # "3 of 3 actors ready: ..."
        assert line.startswith("3 of 3"), line
        proc, doc = verify(cluster, "--ray", cluster["dashboard"], "--expect-workers", "3", "--per-node", "2",
                           "--match", "Rollout", "--duration", "2", "--interval", "0.5")
    finally:
        driver.kill()
        driver.wait(30)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert doc["target"] is None and doc["command"] == []
    assert doc["verdict"] == "imbalance"
    assert doc["observed"]["workers"] == 3
    msg = next(r["message"] for r in doc["reasons"] if r["code"] == "imbalance")
    assert "--per-node 2" in msg and ": 1" in msg


def test_state_backends_agree(cluster):
    from auditor.runtime.ray_state import GcsState, HttpState

    via_http = HttpState(cluster["dashboard"]).snapshot()
    via_gcs = GcsState(cluster["gcs"]).snapshot()
    assert {n.node_id for n in via_http.nodes} == {n.node_id for n in via_gcs.nodes}
    assert len([n for n in via_gcs.nodes if n.alive]) == 2
    assert {(a.actor_id, a.class_name) for a in via_http.actors} == {(a.actor_id, a.class_name) for a in via_gcs.actors}
    assert via_http.nodes and all(n.resources.get("CPU") == 2.0 for n in via_gcs.nodes)


def test_unreachable_address_is_a_usage_error():
    proc = run_cli("verify", "--ray", "127.0.0.1:1", "--expect-workers", "2", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "nothing answers at 127.0.0.1:1" in proc.stderr

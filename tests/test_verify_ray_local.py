"""A target that starts Ray itself (ray.init() in the script): its actors are inside the tree.

Ending the tree must take Ray down with it: no raylet, gcs_server or ray:: worker of the
target may survive. Each test gets its own RAY_TMPDIR, which every Ray process the target
starts inherits; that is how the check finds exactly the target's Ray processes.
"""

from __future__ import annotations

import json
import shutil
import tempfile

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.test_verify_ray import wait_gone

pytest.importorskip("ray")

pytestmark = [pytest.mark.ray, pytest.mark.slow]

LOCAL_JOB = str(FIXTURES / "ray" / "local_job.py")
DURATION = "45"  # ray.init() took 10-15 s here on an idle machine; the box is shared


@pytest.fixture
def ray_tmpdir():
    d = tempfile.mkdtemp(prefix="qgl-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _check_no_ray_left(tmpdir: str) -> None:
    left = wait_gone(tmpdir, limit=5)
    if left:  # last resort so a failure does not leak into other runs; the test still fails
        import subprocess

        subprocess.run(["ray", "stop", "--force"], env={"RAY_TMPDIR": tmpdir, "PATH": "/usr/bin:/bin"},
                       capture_output=True, timeout=60)
    assert not left, f"Ray processes of the target survived qg-audit verify: {left}"


def test_plain_verify_counts_local_ray_actors_and_shuts_ray_down(ray_tmpdir):
    proc = run_cli("verify", "--expect-workers", "2", "--match", "^ray::Rollout", "--duration", DURATION,
                   "--format", "json", "--", "python", LOCAL_JOB, env={"RAY_TMPDIR": ray_tmpdir}, timeout=300)
    doc = json.loads(proc.stdout)
    _check_no_ray_left(ray_tmpdir)
    actors = [p for p in doc["observed"]["processes"] if p["role"] == "worker"]
    assert {" ".join(p["cmdline"]).split()[0] for p in actors} == {"ray::Rollout"}, actors
    assert doc["observed"]["workers"] == 2, doc["reasons"]
    assert proc.returncode == 0 and doc["verdict"] == "pass", doc["reasons"]
    helpers = {p["backend"] for p in doc["observed"]["processes"] if p["role"] == "helper"}
    assert "ray system" in helpers  # raylet / gcs_server were in the tree, and are gone now


def test_verify_ray_auto_finds_the_cluster_the_target_starts(ray_tmpdir):
    # --ray with no address: the cluster does not exist at launch; the probe finds it once
    # the target's ray.init() has written RAY_TMPDIR/ray/ray_current_cluster.
    proc = run_cli("verify", "--ray", "--expect-workers", "2", "--match", "^Rollout$", "--duration", DURATION,
                   "--format", "json", "--", "python", LOCAL_JOB, env={"RAY_TMPDIR": ray_tmpdir}, timeout=300)
    doc = json.loads(proc.stdout)
    _check_no_ray_left(ray_tmpdir)
    assert doc["ray"]["via"] == "gcs"  # local_job.py runs without the dashboard
    assert doc["observed"]["workers"] == 2, doc["reasons"]
    assert proc.returncode == 0 and doc["verdict"] == "pass", doc["reasons"]


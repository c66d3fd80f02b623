"""The incremental census against psutil's own view of a real process tree."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from auditor.runtime import procfs
from auditor.runtime.census import Census
from auditor.runtime.classify import catalogue, match_rule

TREE = """
import multiprocessing as mp, time, sys
def leaf(): time.sleep(60)
def mid():
    ps = [mp.Process(target=leaf) for _ in range(2)]
    [p.start() for p in ps]
    time.sleep(60)
if __name__ == '__main__':
    ps = [mp.Process(target=mid) for _ in range(3)]
    [p.start() for p in ps]
    print('ready', flush=True)
    time.sleep(60)
"""


@pytest.fixture
def tree():
    census = Census()
    census.prime()
    proc = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, start_new_session=True)
    census.adopt_root(proc.pid)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        yield census, proc
    finally:
        for p in psutil.Process(proc.pid).children(recursive=True) + [psutil.Process(proc.pid)]:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        proc.wait()
        psutil.wait_procs(psutil.Process().children(), timeout=2)


def test_census_matches_psutil_children(tree):
    census, proc = tree
    deadline = time.monotonic() + 10
    want = {(c.pid, round(c.create_time(), 2)) for c in psutil.Process(proc.pid).children(recursive=True)}
    while len(want) < 9 and time.monotonic() < deadline:  # 3 mids + 6 leaves
        time.sleep(0.1)
        want = {(c.pid, round(c.create_time(), 2)) for c in psutil.Process(proc.pid).children(recursive=True)}
    census.poll()
    sample = census.poll()  # fork children count from their second poll (see Census._counts_as_worker)
    got = {k for k, row in census.rows.items() if row.role != "target"}
    assert got == want
    assert sample["processes"] == 10 and sample["workers"] == 9
    assert all(row.rss_bytes > 0 and row.threads >= 1 for row in census.rows.values())


def test_vanished_members_are_gone_and_identity_is_pid_and_start_time(tree):
    census, proc = tree
    time.sleep(0.5)
    census.poll()
    victim = next(r for r in census.rows.values() if r.role == "worker")
    os.kill(victim.pid, 9)
    time.sleep(0.3)
    census.poll()
    assert victim.status in ("zombie", "gone")
    assert (victim.pid, victim.create_time) in census.rows
    st = procfs.read_stat(proc.pid)
    assert st.create_time == round(psutil.Process(proc.pid).create_time(), 2)


def test_stat_reader_errors_are_states_not_crashes():
    with pytest.raises(procfs.Gone):
        procfs.read_stat(2**22 + 12345)


@pytest.mark.parametrize("name,cmdline,parent_rule,parent_cmd,expected", [
    ("python", ["python", "-B", "-c", "from multiprocessing.resource_tracker import main;main(5)"], None, None,
     "mp-resource-tracker"),
    ("python", ["python", "-c", "from multiprocessing.forkserver import main; main(1)"], None, None, "mp-forkserver"),
    ("python", ["python", "-c", "from multiprocessing.forkserver import main; main(1)"], "mp-forkserver",
     ["python", "-c", "from multiprocessing.forkserver import main; main(1)"], "mp-forkserver-child"),
    ("python", ["python", "-c", "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5)",
                "--multiprocessing-fork"], None, None, "mp-spawn"),
    ("pt_data_worker", ["python", "train.py"], None, ["python", "train.py"], "torch-dataloader"),
    ("ray::Rollout", ["ray::RolloutWorker.sample"], None, None, "ray-actor"),
    ("ray::IDLE", ["ray::IDLE"], None, None, "ray-idle"),
    ("ray::Dashboard", ["ray::DashboardAgent"], None, None, "ray-agent"),
    ("ray::RuntimeEn", ["ray::RuntimeEnvAgent"], None, None, "ray-agent"),
    ("raylet", ["/x/ray/core/src/ray/raylet/raylet", "--node_id=1"], None, None, "ray-system"),
    ("python", ["python", "/x/ray/dashboard/dashboard.py"], None, None, "ray-system-python"),
    ("python3", ["/usr/bin/python3", "s.py"], None, ["/usr/bin/python3", "s.py"], "mp-fork"),
    ("bash", ["bash", "run.sh"], None, ["bash", "run.sh"], None),
])
def test_classification_rules_from_workers_yaml(name, cmdline, parent_rule, parent_cmd, expected):
    rule = match_rule(name, cmdline, parent_rule, parent_cmd)
    assert (rule.id if rule else None) == expected


def test_count_keys():
    cat = catalogue()
    assert cat.is_count_key("rollout.num_workers") and cat.is_count_key("num_rollout_workers")
    assert not cat.is_count_key("worker_id") and not cat.is_count_key("horizon")

"""verify --ray pieces that need no cluster: job environment, unmet-resource wording, teardown
trimming, usage errors. Marked like the other Ray tests (the brief for tests/test_verify_ray*)."""

from __future__ import annotations

import json

import pytest

from auditor.runtime import ray_collector
from auditor.runtime.ray_state import Actor, Node
from auditor.runtime.ray_verify import Track, _before_teardown, unmet_resource
from tests.conftest import run_cli

pytestmark = [pytest.mark.ray, pytest.mark.slow]

NODES = [Node("n1", "10.0.0.1", True, True, {"CPU": 2.0}), Node("n2", "10.0.0.2", True, False, {"CPU": 2.0}),
         Node("n3", "10.0.0.3", False, False, {"CPU": 64.0})]  # dead: must not count


def actor(i, state, cpus, cls="Rollout", pg=None):
    return Actor(f"a{i}", cls, state, 100 + i if state == "ALIVE" else None, "n1" if state == "ALIVE" else None,
                 {"CPU": cpus}, placement_group_id=pg)


def test_job_env_keeps_an_existing_job_config_and_its_env_vars():
    existing = {"runtime_env": {"env_vars": {"A": "1"}, "pip": ["x"]}, "metadata": {"k": "v"}}
    env = ray_collector.job_env("ray-kv://qg-audit/r1", {ray_collector.JOB_CONFIG_ENV: json.dumps(existing)})
    cfg = json.loads(env[ray_collector.JOB_CONFIG_ENV])
    assert cfg["runtime_env"]["env_vars"] == {"A": "1", "QG_AUDIT_REPORT": "ray-kv://qg-audit/r1"}
    assert cfg["runtime_env"]["pip"] == ["x"] and cfg["metadata"] == {"k": "v"}


def test_report_target_round_trip_and_bad_target():
    target = ray_collector.new_target()
    ns, run = ray_collector.parse_target(target)
    assert ns == "qg-audit" and len(run) == 12
    with pytest.raises(ValueError, match="expected ray-kv://NAMESPACE/RUN"):
        ray_collector.parse_target("ray-kv://only")


def test_unmet_resource_names_a_request_no_node_can_hold():
    a = actor(1, "PENDING_CREATION", 3.0)
    msg = unmet_resource(a, [a], NODES)
    assert msg == "CPU=3 per actor, but no alive node has that much (the largest has 2)"


def test_unmet_resource_names_the_total_the_cluster_lacks():
    group = [actor(1, "ALIVE", 1.5), actor(2, "ALIVE", 1.5), actor(3, "PENDING_CREATION", 1.5),
             actor(4, "PENDING_CREATION", 1.5)]
    msg = unmet_resource(group[2], group, NODES)
    assert msg == "CPU: the 4 actors ask for CPU=1.5 each, 6 in total, and the 2 alive node(s) have 4"


def test_unmet_resource_names_other_actors_holding_it():
    mine = [actor(1, "PENDING_CREATION", 1.0)]
    others = [actor(7, "ALIVE", 2.0, cls="Learner"), actor(8, "ALIVE", 2.0, cls="Learner")]
    msg = unmet_resource(mine[0], mine, NODES, mine + others)
    assert msg == "CPU: 2 other alive actor(s) (Learner) hold 4 of the cluster's 4"


def test_unmet_resource_when_nothing_is_short_says_so():
    mine = [actor(1, "PENDING_CREATION", 1.0)]
    assert "fits the cluster's totals" in unmet_resource(mine[0], mine, NODES, mine)
    pg = actor(2, "PENDING_CREATION", 1.0, pg="abcdef123456")
    assert unmet_resource(pg, [pg], NODES, [pg]) == "its placement group abcdef12 is not placed yet"


def _samples(*rows):
    return [{"t": float(i), "alive": a, "dead": d} for i, (a, d) in enumerate(rows)]


def test_teardown_is_cut_at_the_first_death_by_the_drivers_exit():
    samples = _samples((0, 0), (4, 0), (4, 0), (0, 4), (0, 4))
    tracks = [Track(actor(i, "DEAD", 1.0), 0.0, alive_at=1.0, dead_at=3.0) for i in range(4)]
    for tr in tracks:
        tr.actor.death = "The actor is dead because all references to the actor were removed."
    assert [s["t"] for s in _before_teardown(samples, tracks)] == [0.0, 1.0, 2.0]


def test_a_crash_before_the_teardown_stays_visible():
    samples = _samples((4, 0), (3, 1), (3, 1), (0, 4))
    crashed = Track(actor(1, "DEAD", 1.0), 0.0, alive_at=0.0, dead_at=1.0)
    crashed.actor.death = "The actor died unexpectedly before finishing this task: worker exit code 1"
    torn = [Track(actor(i, "DEAD", 1.0), 0.0, alive_at=0.0, dead_at=3.0) for i in (2, 3, 4)]
    for tr in torn:
        tr.actor.death = "owner has died"
    kept = _before_teardown(samples, [crashed] + torn)
    assert [s["alive"] for s in kept] == [4, 3, 3]  # the drop to 3 is still there to be judged


@pytest.mark.parametrize("args, expect", [
    (["--expect-threads", "2", "--expect-workers", "2"], "--expect-threads is not supported with --ray"),
    (["--per-node", "0", "--expect-workers", "2"], "--per-node must be >= 1"),
    ([], "one of --expect-workers N or --expect-from FILE:KEY is required"),
    (["--expect-workers", "2", "--match", "("], "--match: bad regular expression"),
    (["ray://10.0.0.1:10001", "--expect-workers", "2"], "Ray Client addresses are not supported"),
])
def test_usage_errors_exit_2_with_one_line(args, expect):
    ray_arg = [] if args and args[0].startswith("ray://") else ["http://127.0.0.1:1"]
    proc = run_cli("verify", "--ray", *ray_arg, *args, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expect in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr

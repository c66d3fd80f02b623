"""Deterministic tests of the profile statistics on synthetic timing records."""

from __future__ import annotations

import statistics

import pytest

from auditor.profiling import SCHEMA, NoTimingRecords, Thresholds, summarize
from auditor.profiling.stats import percentile, spike_indices, windows

MS = 1_000_000  # ns


def timing_records(step_phases, *, pid=100, ppid=1, timer="sampler", role=None, names=("env", "fwd", "xfer"),
                   samples=10, warmup=0, batch=50, trainer=None, t0=1000.0, other_ns=0):
    """Records exactly as SamplingTimer sends them. step_phases: list of per-step phase ns tuples."""
    rows = [[sum(p) + other_ns, samples, *p] for p in step_phases]
    trows = []
    end = 0
    for w, c in trainer or []:
        end += w + c
        trows.append([end, w, c])
    recs = []
    end = 0
    n = max(len(rows), len(trows))
    for start in range(0, n, batch):
        chunk = rows[start:start + batch]
        first_end = sum(r[0] for r in rows[:start + 1])
        recs.append({"v": 1, "type": "timing", "pid": pid, "ppid": ppid, "t": t0 + 1, "thread": "MainThread",
                     "timer": timer, "role": role, "t0": t0, "warmup_steps": warmup, "phases": list(names),
                     "first_step": start, "end_ns": first_end, "steps": chunk,
                     "first_iter": start, "trainer": trows[start:start + batch]})
    return recs


def steady_steps(n, env=4, fwd=2, xfer=1):
    return [(env * MS, fwd * MS, xfer * MS)] * n


# -- percentiles, windows, spikes ------------------------------------------------------

@pytest.mark.parametrize("values", [[1.0], [3.0, 1.0, 2.0], list(range(1, 101)), [5, 1, 9, 2, 8, 3, 7]])
@pytest.mark.parametrize("p", [0, 10, 50, 95, 99, 100])
def test_percentile_matches_linear_interpolation(values, p):
    xs = sorted(values)
    if len(xs) > 1:
        # statistics.quantiles(method="inclusive") is the same definition at the cut points
        cuts = statistics.quantiles(xs, n=100, method="inclusive")
        expected = xs[0] if p == 0 else xs[-1] if p == 100 else cuts[p - 1]
    else:
        expected = xs[0]
    assert percentile(values, p) == pytest.approx(expected)


def test_percentile_edges():
    assert percentile([], 50) == 0.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20], 95) == pytest.approx(19.5)
    with pytest.raises(ValueError):
        percentile([1], 101)


def test_windows_merge_a_short_tail_and_keep_every_row():
    assert windows(0, 10) == []
    assert windows(7, 10) == [(0, 7)]  # the only window, even though short
    assert windows(20, 10) == [(0, 10), (10, 20)]
    assert windows(24, 10) == [(0, 10), (10, 24)]  # a 4-row tail is merged
    assert windows(25, 10) == [(0, 10), (10, 20), (20, 25)]  # a half window stands alone
    with pytest.raises(ValueError):
        windows(5, 0)


def test_spike_indices_use_the_median():
    vals = [10, 10, 11, 9, 10, 45, 10, 31]
    thr, idx = spike_indices(vals, 3.0)
    assert thr == 30.0 and idx == [5, 7]
    assert spike_indices([], 3.0) == (0.0, [])
    with pytest.raises(ValueError):
        spike_indices(vals, 1.0)


# -- summarize -----------------------------------------------------------------------

def test_summarize_phases_basis_and_throughput_exact():
    phases = [(47 * MS, 2 * MS, 1 * MS)] + steady_steps(99)
    prof = summarize(timing_records(phases, warmup=5))
    assert prof.basis_code == "warmup-steps" and prof.warmup_steps == 5
    assert "first 5" in prof.basis and "declared by the timer" in prof.basis
    assert prof.steps == 95
    env, fwd, xfer = prof.phases
    assert (env.name, fwd.name, xfer.name) == ("env", "fwd", "xfer")
    assert env.mean_ms == 4 and fwd.p95_ms == 2 and xfer.max_ms == 1
    assert env.share == pytest.approx(4 / 7, abs=1e-4)
    assert prof.other_share == 0
    assert prof.step.mean_ms == 7
    # samples / sampling time: 95 steps x 10 samples in 95 x 7 ms
    assert prof.samples == 950 and prof.samples_per_s == pytest.approx(950 / (95 * 0.007), rel=1e-6)
    first = [f for f in prof.first_steps]
    assert len(first) == 5 and first[0].step == 1 and first[0].step_ms == 50 and first[0].warmup
    assert first[0].phases_ms["env"] == 47


def test_summarize_warmup_override_and_all_steps_basis():
    phases = [(47 * MS, 2 * MS, 1 * MS)] + steady_steps(9)
    prof = summarize(timing_records(phases, warmup=0))
    assert prof.basis_code == "all-steps" and "no warm-up excluded" in prof.basis
    assert prof.steps == 10 and prof.step.max_ms == 50
    prof = summarize(timing_records(phases, warmup=0), warmup_steps=1)
    assert prof.steps == 9 and prof.step.max_ms == 7 and "--warmup-steps" in prof.basis
    # by seconds: the first step ends at 50 ms, the second at 57 ms
    prof = summarize(timing_records(phases), warmup_s=0.055)
    assert prof.basis_code == "warmup-seconds" and prof.warmup_s == 0.055 and prof.warmup_steps is None
    assert prof.steps == 9 and prof.step.max_ms == 7
    with pytest.raises(ValueError):
        summarize(timing_records(phases), warmup_steps=1, warmup_s=1.0)


def test_untimed_work_is_reported_as_other_share():
    prof = summarize(timing_records(steady_steps(20), other_ns=3 * MS))
    assert prof.step.mean_ms == 10
    assert prof.phase("env").share == pytest.approx(0.4)
    assert prof.other_share == pytest.approx(0.3)


def test_wait_ratio_is_a_distribution_over_windows():
    # 4 windows of 10 trainer steps: wait ratios 0.1, 0.2, 0.3, 0.4 (wait + compute = 10 ms)
    trainer = []
    for r in (1, 2, 3, 4):
        trainer += [(r * MS, (10 - r) * MS)] * 10
    recs = timing_records([], trainer=trainer, timer="trainer")
    prof = summarize(recs, window=10)
    w = prof.wait
    assert w.windows == 4 and w.window_ratios == [0.1, 0.2, 0.3, 0.4]
    assert w.ratio_mean == pytest.approx(0.25) and w.ratio_p50 == pytest.approx(0.25)
    assert w.ratio_p95 == pytest.approx(0.385)
    assert w.wait_ms_mean == pytest.approx(2.5) and w.compute_ms_mean == pytest.approx(7.5)
    assert w.wait_ms_max == 4 and w.steps == 40
    assert prof.steps == 0 and prof.samples_per_s is None


def test_spikes_are_flagged_with_their_window_and_phase():
    phases = steady_steps(120)
    phases[57] = (4 * MS, 30 * MS, 1 * MS)  # step 58: a slow forward pass
    phases[101] = (40 * MS, 2 * MS, 1 * MS)  # step 102: a slow environment step
    prof = summarize(timing_records(phases), window=50)
    assert prof.spikes_total == 2
    by_step = {s.step: s for s in prof.spikes}
    assert by_step[58].window == 2 and by_step[58].window_steps == (51, 100) and by_step[58].phase == "fwd"
    assert by_step[102].window == 3 and by_step[102].phase == "env" and by_step[102].step_ms == 43
    assert prof.spikes[0].step == 102  # slowest first
    assert by_step[58].median_ms == 7


def test_per_process_rows_and_aggregate_throughput():
    a = timing_records(steady_steps(30), pid=11, role="rollout-0")
    b = timing_records(steady_steps(30, env=9), pid=12, role="rollout-1")
    prof = summarize(a + b)
    rows = {r.pid: r for r in prof.processes}
    assert set(rows) == {11, 12}
    assert rows[11].role == "rollout-0" and rows[11].step_ms_mean == 7 and rows[12].step_ms_mean == 12
    assert rows[12].phases_ms["env"] == 9
    assert rows[11].samples_per_s == pytest.approx(10 / 0.007)
    # workers sample concurrently: aggregate = sum of per-timer rates
    assert prof.samples_per_s == pytest.approx(10 / 0.007 + 10 / 0.012, rel=1e-6)


def test_lost_batches_and_bad_rows_become_notes_not_errors():
    recs = timing_records(steady_steps(150), batch=50)
    del recs[1]  # steps 51-100 never arrived
    recs[0]["steps"][3] = ["x"]
    prof = summarize(recs)
    assert prof.steps == 99
    assert any("51 step(s) missing" in n for n in prof.notes)  # 50 lost + 1 malformed
    assert any("malformed" in n for n in prof.notes)


def test_no_timing_records_raises():
    with pytest.raises(NoTimingRecords):
        summarize([{"type": "worker", "pid": 1}])
    with pytest.raises(NoTimingRecords):
        summarize([])


def _diag(env, fwd, xfer, wait=None, compute=None, **th):
    trainer = [(wait * MS, compute * MS)] * 100 if wait is not None else None
    recs = timing_records(steady_steps(100, env, fwd, xfer))
    if trainer:
        recs += timing_records([], trainer=trainer, timer="trainer")
    return summarize(recs, thresholds=Thresholds(**th) if th else None)


def test_diagnosis_env_bound():
    prof = _diag(6, 1, 1, wait=5, compute=3)
    assert [d["step"] for d in prof.diagnosis] == [1, 2, 3]
    assert [d["verdict"] for d in prof.diagnosis] == ["env-bound", "sampling-bound", "not-forward-transfer-bound"]
    assert prof.conclusion["branch"] == "env-bound"
    assert "6.00 ms of 8.00 ms" in prof.diagnosis[0]["message"] and "qg-audit verify" in prof.diagnosis[0]["message"]


def test_diagnosis_trainer_bound_overrides_sampling_advice():
    prof = _diag(6, 1, 1, wait=0.5, compute=9.5)
    assert prof.diagnosis[1]["verdict"] == "trainer-bound"
    assert "5%" in prof.diagnosis[1]["message"] and "stop tuning sampling" in prof.diagnosis[1]["message"]
    assert prof.conclusion["branch"] == "trainer-bound"


def test_diagnosis_forward_transfer_bound():
    prof = _diag(1, 4, 3, wait=6, compute=2)
    assert [d["verdict"] for d in prof.diagnosis] == ["not-env-bound", "sampling-bound", "forward-transfer-bound"]
    assert prof.conclusion["branch"] == "forward-transfer-bound"
    assert "qg-audit sweep" in prof.diagnosis[2]["message"] and "88%" in prof.diagnosis[2]["message"]


def test_diagnosis_thresholds_are_configurable_and_unknowns_say_so():
    assert _diag(3, 2, 2, wait=5, compute=3).conclusion["branch"] == "forward-transfer-bound"
    assert _diag(3, 2, 2, wait=5, compute=3, env_share=0.4, fx_share=0.9).conclusion["branch"] == "env-bound"
    assert _diag(3, 2, 2, wait=3, compute=7, wait_low=0.5).conclusion["branch"] == "trainer-bound"
    prof = _diag(6, 1, 1)  # no trainer records
    assert prof.diagnosis[1]["verdict"] == "unknown"
    assert prof.conclusion["branch"] == "env-bound" and "unconfirmed" in prof.conclusion["message"]
    with pytest.raises(ValueError):
        Thresholds(env_share=1.5).validate()


def test_to_json_has_the_contract_fields():
    prof = _diag(1, 4, 3, wait=6, compute=2)
    doc = prof.to_json()
    assert doc["schema"] == SCHEMA == "qg-audit.profile/1"
    for key in ("basis", "phases", "warmup_steps", "samples_per_s", "wait", "diagnosis"):
        assert key in doc
    assert set(doc["phases"][0]) >= {"name", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "share"}
    assert set(doc["wait"]) >= {"ratio_mean", "ratio_p50", "ratio_p95", "wait_ms_mean", "compute_ms_mean"}
    assert all(set(d) == {"step", "verdict", "message"} for d in doc["diagnosis"])
    import json

    json.dumps(doc)  # serialisable as is


def test_to_json_validates_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from auditor.profiling.schema import PROFILE_SCHEMA

    for prof in (_diag(1, 4, 3, wait=6, compute=2), _diag(6, 1, 1)):
        jsonschema.validate(prof.to_json(), PROFILE_SCHEMA)
    bad = _diag(6, 1, 1).to_json()
    bad["diagnosis"][0]["verdict"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, PROFILE_SCHEMA)


def test_trainer_bound_marks_the_sampling_advice_moot():
    prof = _diag(1, 1, 6, wait=0.2, compute=9.8)  # the sampler blocks in transfer on a full queue
    assert [d["verdict"] for d in prof.diagnosis] == ["not-env-bound", "trainer-bound", "forward-transfer-bound"]
    assert "moot while the trainer does not wait" in prof.diagnosis[2]["message"]
    assert prof.conclusion["branch"] == "trainer-bound"

"""qg-audit sweep, the pure parts: parameters, statistics, conclusions, step limits, renderers.

Per-run data here is synthetic (RunRecord built directly); the end-to-end sweep of a real
fixture is in test_sweep_cli.py.
"""

from __future__ import annotations

import base64
import csv
import io
import math
from array import array

import pytest

from auditor.exitcodes import UsageError
from auditor.sweep import params, stats
from auditor.sweep.conclude import Limits, conclude, fmt_rate
from auditor.sweep.context import parse_size
from auditor.sweep.measure import StepCounter, limit_steps
from auditor.sweep.model import RunRecord, Sweep, ValueResult

MIB = 1024 * 1024


# -- parameters -------------------------------------------------------------------------
def test_list_keeps_order_and_text():
    v = params.parse_list("batch", "16, 32,64")
    assert v.values == ["16", "32", "64"] and v.name == "batch" and v.numeric() == [16, 32, 64]


def test_list_of_words_is_not_numeric():
    assert params.parse_list("dtype", "fp16,bf16").numeric() is None


@pytest.mark.parametrize("text", ["", "8,,16", "8,", " "])
def test_list_rejects_empty_items(text):
    with pytest.raises(UsageError, match="comma-separated"):
        params.parse_list("batch", text)


def test_list_rejects_duplicates_and_names_the_way_out():
    with pytest.raises(UsageError, match=r"8 appear more than once.*--runs"):
        params.parse_list("batch", "8,16,8")


def test_scan_additive_default_step_and_explicit_step():
    assert params.parse_scan("n", "1", "4", None).values == ["1", "2", "3", "4"]
    assert params.parse_scan("batch", "8", "32", "8").values == ["8", "16", "24", "32"]


def test_scan_multiplicative_doublings():
    assert params.parse_scan("batch", "8", "100", "x2").values == ["8", "16", "32", "64"]
    assert params.parse_scan("batch", "8", "64", "*2").values == ["8", "16", "32", "64"]


def test_scan_decimal_steps_are_exact():
    assert params.parse_scan("lr", "0.1", "0.3", "0.1").values == ["0.1", "0.2", "0.3"]


@pytest.mark.parametrize("lo,hi,step,msg", [
    ("64", "8", None, "MIN is greater than MAX"),
    ("8", "64", "0", "greater than 0"),
    ("8", "64", "-4", "greater than 0"),
    ("8", "64", "x1", "greater than 1"),
    ("0", "64", "x2", "MIN > 0"),
    ("1", "1000", None, "more than 100 values"),
    ("a", "8", None, "not a number"),
    ("0.5", "2.5", None, "explicit step"),
])
def test_scan_errors(lo, hi, step, msg):
    with pytest.raises(UsageError, match=msg):
        params.parse_scan("batch", lo, hi, step)


def test_exactly_one_variable():
    with pytest.raises(UsageError, match="exactly one variable"):
        params.from_args([["batch", "8,16"]], [["workers", "1", "4"]], None)
    with pytest.raises(UsageError, match="exactly one variable"):
        params.from_args([["batch", "8,16"], ["lr", "1,2"]], None, None)
    with pytest.raises(UsageError, match="no variable"):
        params.from_args(None, None, None)
    with pytest.raises(UsageError, match="-D STEP applies to -P"):
        params.from_args([["batch", "8,16"]], None, "2")


def test_bad_name():
    with pytest.raises(UsageError, match="identifier"):
        params.parse_list("9batch", "1,2")


def test_template_must_use_the_placeholder_and_substitutes_inside_args():
    v = params.parse_list("batch", "8,16")
    with pytest.raises(UsageError, match=r"never uses \{batch\}"):
        params.check_template(["python", "s.py", "--batch", "{bs}"], v)
    cmd = ["python", "s.py", "--batch={batch}", "--tag", "b{batch}x{batch}"]
    params.check_template(cmd, v)
    assert params.substitute(cmd, v, "16") == ["python", "s.py", "--batch=16", "--tag", "b16x16"]


# -- statistics -------------------------------------------------------------------------
def test_summary_mean_sample_stddev_min_max():
    s = stats.summary([1.0, 2.0, 3.0])
    assert s == {"mean": 2.0, "stddev": 1.0, "min": 1.0, "max": 3.0}
    one = stats.summary([5.0])
    assert one["stddev"] is None and one["mean"] == 5.0
    assert stats.summary([]) == {"mean": None, "stddev": None, "min": None, "max": None}


def test_hyperfine_outlier_rule():
    # median 100, MAD 1: 300 is 200 MADs away (> 14.826), 103 is 3 MADs away (not an outlier)
    assert stats.outliers([100, 101, 99, 100, 103, 300]) == [5]
    assert stats.outliers([1.0, 2.0, 3.0]) == []
    # MAD 0: any value off the median is an outlier (hyperfine's +-inf score)
    assert stats.outliers([5, 5, 5, 6]) == [3]
    assert stats.modified_zscores([5, 5, 5, 6])[3] == math.inf


def test_gain_per_doubling():
    assert stats.gain(1200, 1900) == pytest.approx(0.5833, abs=1e-4)
    assert stats.gain_per_doubling(1000, 1440, 16, 64) == pytest.approx(0.2)  # 1.2 ** 2 = 1.44
    assert stats.gain_per_doubling(1000, 1100, 16, 32) == pytest.approx(0.1)
    assert stats.gain_per_doubling(1000, 1100, 32, 16) is None


def test_parse_size():
    assert parse_size("512MiB") == 512 * MIB
    assert parse_size("2G") == 2_000_000_000
    assert parse_size("1.5GiB") == int(1.5 * 1024**3)
    assert parse_size("1000") == 1000
    for bad in ("lots", "12XB", "-1G", "0"):
        with pytest.raises(UsageError, match="--memory-limit"):
            parse_size(bad)


def test_rates_are_grouped_like_the_issue_examples():
    assert fmt_rate(1200) == "1 200" and fmt_rate(1234567.8) == "1 234 568" and fmt_rate(12.34) == "12.3"


# -- conclusions on synthetic runs ------------------------------------------------------
def run(value, rate, *, n=1, rss=100 * MIB, workers=8, status="ok", exit_code=0, gpu=None, outl=0, early=0):
    return RunRecord(value=value, run=n, command=["x", value], status=status, exit_code=exit_code,
                     ended_by="exit", duration_s=1.0, samples_per_s=rate, steps=50, step_ms=5.0,
                     phases_ms={"env": 1.0, "fwd": 3.0, "xfer": 1.0}, processes=workers + 1, workers=workers,
                     threads=workers + 2, rss_peak_bytes=rss, gpu_peak_bytes=gpu, step_outliers=outl,
                     early_outliers=early, error=None if status == "ok" else f"exited with code {exit_code}")


def values(*specs):
    """specs: (value, [rates], rss) -> ValueResults, one run per rate."""
    out = []
    for value, rates, rss in specs:
        out.append(ValueResult(value, [run(value, r, n=i + 1, rss=rss) for i, r in enumerate(rates)]))
    return out


def sweep_of(results, limit=100 * 1024 * MIB, **kw):
    var = params.parse_list("batch", ",".join(r.value for r in results))
    return conclude(results, var, Limits(memory_limit_bytes=limit, **kw), {})


def test_change_line_has_the_issue_form():
    con, _ = sweep_of(values(("16", [1200], MIB), ("64", [1900], MIB)))
    line = con["changes"][0]["line"]
    assert line.startswith("with 8 worker processes, batch 16 \u2192 64: samples/s 1 200 \u2192 1 900 (+58%")
    assert "+26% per doubling" in line  # 1.5833 ** 0.5 - 1


def runs3(*specs):
    """(value, mean rate, rss) -> ValueResults of three runs each (mean +- 1%)."""
    return values(*[(v, [rate * 0.99, rate, rate * 1.01], rss) for v, rate, rss in specs])


def test_plateau_gives_stop_at_the_last_value_that_gained():
    res = runs3(("8", 1000, MIB), ("16", 1900, MIB), ("32", 3600, MIB), ("64", 3700, MIB))
    con, _ = sweep_of(res)
    assert con["stop_at"] == "32" and con["reasons"] == ["plateau"]
    assert [c["plateau"] for c in con["changes"]] == [False, False, True]
    assert "for this parallel configuration (with 8 worker processes)" in con["message"]
    assert "not a universal optimum" in con["message"]


def test_no_plateau_when_still_rising_per_doubling():
    # 16 -> 64 is +21% overall but two doublings: +10% per doubling, above 5%
    con, _ = sweep_of(values(("16", [1000], MIB), ("64", [1210], MIB)))
    assert con["stop_at"] is None and "still rises" in con["message"]
    assert con["changes"][0]["gain_per_doubling"] == pytest.approx(0.1)


def test_memory_near_limit_stops_before_that_value():
    res = values(("8", [1000], 100 * MIB), ("16", [2000], 300 * MIB), ("32", [4000], 850 * MIB))
    con, _ = sweep_of(res, limit=1000 * MIB)
    assert con["stop_at"] == "16" and con["reasons"] == ["memory"]
    assert "at batch 32 the tree RSS peak 850.0 MiB is 85% of the 1000.0 MiB limit" in con["message"]


def test_one_run_per_value_states_no_plateau_stop():
    # the same means as above, one run each: a plateau cannot be told from run-to-run noise
    res = values(("8", [1000], MIB), ("16", [1900], MIB), ("32", [3600], MIB), ("64", [3700], MIB))
    con, warnings = sweep_of(res)
    assert con["stop_at"] is None and con["reasons"] == []
    assert "one run per value cannot tell a plateau" in con["message"] and "--runs 3" in con["message"]
    assert "32 \u2192 64 gained +3%" in con["message"]


def test_memory_stop_needs_no_spread():
    # a memory peak is a peak, not a mean: one run per value still stops before the near-limit value
    res = values(("8", [1000], 100 * MIB), ("16", [2000], 300 * MIB), ("32", [4000], 850 * MIB))
    con, _ = sweep_of(res, limit=1000 * MIB)
    assert con["stop_at"] == "16" and con["reasons"] == ["memory"]


def test_a_dip_that_a_later_value_beats_is_not_a_plateau():
    # the issue's sweep: batch 4 -> 8 gained nothing, batch 32 gave 5x batch 4's samples/s
    res = runs3(("4", 1000, MIB), ("8", 1010, MIB), ("16", 2500, MIB), ("32", 5000, MIB))
    con, _ = sweep_of(res)
    assert con["stop_at"] is None
    assert "a dip, not a plateau" in con["message"] and "4 \u2192 8" in con["message"]
    assert con["stop_at"] != "4"


def test_the_stop_point_is_never_beaten_by_a_later_value():
    # a dip first, then a real plateau: the stop is the plateau, and no later value beats it
    res = runs3(("4", 1000, MIB), ("8", 1010, MIB), ("16", 3000, MIB), ("32", 3050, MIB), ("64", 3060, MIB))
    con, _ = sweep_of(res)
    assert con["stop_at"] == "16" and con["reasons"] == ["plateau"]
    stop = next(r for r in res if r.value == con["stop_at"])
    later = res[res.index(stop) + 1:]
    assert all(r.samples_per_s["mean"] < stop.samples_per_s["mean"] * 1.05 for r in later)


def test_beating_within_the_runs_spread_does_not_contradict():
    # 64 is 6% over 16 per two doublings but within the spread of the runs: the plateau stands
    res = values(("16", [2800, 3000, 3200], MIB), ("32", [2900, 3050, 3200], MIB), ("64", [3000, 3250, 3500], MIB))
    con, _ = sweep_of(res)
    assert con["stop_at"] == "16"


def test_plateau_and_memory_at_the_same_value_give_both_reasons():
    res = runs3(("16", 1000, 100 * MIB), ("32", 2000, 300 * MIB), ("64", 2020, 900 * MIB))
    con, _ = sweep_of(res, limit=1000 * MIB)
    assert con["stop_at"] == "32" and con["reasons"] == ["plateau", "memory"]


def test_gpu_peak_near_total_stops_too():
    res = [ValueResult("16", [run("16", 1000, gpu=10 * 1024 * MIB)]), ValueResult("32", [run("32", 2000, gpu=75 * 1024 * MIB)])]
    con, _ = sweep_of(res, gpu_total_bytes=80 * 1024 * MIB)
    assert con["stop_at"] == "16" and con["reasons"] == ["gpu-memory"]


def test_memory_already_near_at_the_first_value():
    con, _ = sweep_of(values(("64", [1000], 950 * MIB), ("128", [1500], 990 * MIB)), limit=1000 * MIB)
    assert con["stop_at"] is None and con["reasons"] == ["memory"] and "no safe batch" in con["message"]


def test_failed_value_is_skipped_and_reported():
    res = runs3(("16", 1000, MIB), ("32", 2000, MIB))
    res.insert(1, ValueResult("24", [run("24", None, status="exit", exit_code=1)]))
    res.append(ValueResult("64", [run("64", 2030 + d, n=i + 1) for i, d in enumerate((-20, 0, 20))]))
    con, warnings = sweep_of(res)
    assert [(c["from"], c["to"]) for c in con["changes"]] == [("16", "32"), ("32", "64")]
    assert con["stop_at"] == "32"
    assert "batch=24: every run failed (exited with code 1); not measured" in warnings
    assert res[1].status_text() == "exit 1" and res[1].exit_codes == [1]


def test_outlier_run_is_flagged_with_the_flag_that_helps():
    res = values(("16", [1000, 1001, 999, 1000, 400], MIB), ("32", [2000, 2001, 1999], MIB))
    _, warnings = sweep_of(res)
    flagged = [w for w in warnings if w.startswith("batch=16:")]
    assert len(flagged) == 1 and "run(s) 5 are statistical outliers" in flagged[0] and "--runs" in flagged[0]
    assert res[0].outlier_runs == [5]
    assert not [w for w in warnings if w.startswith("batch=32:")]


def test_early_step_outliers_hint_warmup_and_single_runs_hint_runs():
    res = [ValueResult("16", [run("16", 1000, outl=2, early=2)]), ValueResult("32", [run("32", 2000)])]
    _, warnings = sweep_of(res)
    assert any(w.startswith("batch=16:") and "--warmup-steps" in w for w in warnings)
    assert any("--runs 3" in w for w in warnings)


def test_worker_count_that_changes_is_a_warning_and_widens_the_scope():
    res = [ValueResult("16", [run("16", 1000, workers=8)]), ValueResult("32", [run("32", 1500, workers=4)])]
    con, warnings = sweep_of(res)
    assert con["scope"].startswith("with 4-8 worker processes")
    assert any("worker count was not fixed" in w for w in warnings)


def test_thread_env_is_part_of_the_scope():
    res = values(("16", [1000], MIB), ("32", [2000], MIB))
    var = params.parse_list("batch", "16,32")
    con, _ = conclude(res, var, Limits(memory_limit_bytes=1 << 40), {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "0"})
    assert con["scope"] == "with 8 worker processes, OMP_NUM_THREADS=1"


def test_phase_shift_names_where_the_time_moved():
    a = ValueResult("32", [run("32", 5000)])
    b = ValueResult("64", [run("64", 5000)])
    b.runs[0].phases_ms = {"env": 2.0, "fwd": 7.0, "xfer": 1.0}
    b.runs[0].step_ms = 10.0
    con, _ = sweep_of([a, b])
    shift = con["phase_shift"]
    assert shift["phases_ms_delta"] == {"env": 1.0, "fwd": 4.0, "xfer": 0.0}
    assert shift["line"] == ("where the step time moved, batch 32 → 64: step 5.00 → 10.00 ms; "
                             "fwd +4.00 ms (80% of the change), env +1.00 ms, xfer +0.00 ms")


def test_phase_shift_counts_the_untimed_time():
    # the issue: without an untimed column "where the step time moved" explained 3-28% of a change
    a = ValueResult("32", [run("32", 5000)])
    b = ValueResult("64", [run("64", 5000)])
    a.runs[0].untimed_ms = 0.0
    b.runs[0].phases_ms = {"env": 1.0, "fwd": 3.5, "xfer": 1.0}
    b.runs[0].step_ms, b.runs[0].untimed_ms = 10.0, 4.5
    con, _ = sweep_of([a, b])
    assert con["phase_shift"]["phases_ms_delta"]["untimed"] == 4.5
    assert "untimed +4.50 ms (90% of the change)" in con["phase_shift"]["line"]
    assert b.untimed_ms == 4.5 and b.to_json()["untimed_ms"] == 4.5


def test_percent_format():
    from auditor.sweep.conclude import fmt_pct

    assert fmt_pct(-0.001) == "+0%" and fmt_pct(0.583) == "+58%" and fmt_pct(-0.2) == "-20%" and fmt_pct(14) == "15x"


def test_value_result_aggregates_runs():
    vr = ValueResult("16", [run("16", 1000, rss=10 * MIB), run("16", 1200, n=2, rss=12 * MIB),
                            run("16", None, n=3, status="exit", exit_code=-9)])
    assert vr.samples_per_s["mean"] == 1100 and vr.samples_per_s["min"] == 1000
    assert vr.rss_peak_bytes == 12 * MIB and vr.exit_codes == [0, 0, -9]
    assert vr.status_text() == "2/3 ok; exit -9"
    assert vr.gpu_peak_bytes is None


# -- limiting every value to the same steps ---------------------------------------------
def timing_record(first, rows, *, pid=10, phases=("env", "fwd"), warmup=2, packed=False, trainer=None):
    steps = [list(r) for r in rows]
    if packed:
        flat = array("q", [x for r in rows for x in r])
        steps = base64.b64encode(flat.tobytes()).decode()
    rec = {"type": "timing", "pid": pid, "ppid": 1, "timer": "sampler", "role": None, "t0": 1.0,
           "warmup_steps": warmup, "phases": list(phases), "first_step": first, "end_ns": 1_000_000 * (first + 1),
           "steps": steps}
    if packed:
        rec["encoding"] = "i64le-b64"
    if trainer is not None:
        rec["first_iter"], rec["trainer"] = trainer
    return rec


def test_limit_steps_keeps_warmup_plus_n_steps_per_timer():
    from auditor.profiling import summarize

    slow = [(10_000_000, 4, 4_000_000, 6_000_000)] * 5  # 400 samples/s
    fast = [(1_000_000, 4, 400_000, 600_000)] * 5  # 4000 samples/s, after the cut
    records = [timing_record(0, slow, packed=True), timing_record(5, fast, packed=True),
               {"type": "worker", "pid": 10, "values": {}}]
    cut = limit_steps(records, steps=3, warmup_override=None)  # declared warm-up 2: steps 0..4 stay
    prof = summarize(cut)
    assert prof.steps == 3 and prof.samples_per_s == pytest.approx(400)
    assert any(r.get("type") == "worker" for r in cut)
    assert summarize(limit_steps(records, steps=5, warmup_override=0), warmup_steps=0).steps == 5


def test_step_counter_waits_for_every_timer():
    c = StepCounter(warmup_override=None)
    a = timing_record(0, [(1, 1, 0, 0)] * 10, pid=1, packed=True)
    b = timing_record(0, [(1, 1, 0, 0)] * 4, pid=2)
    c.update([a, b])
    assert c.sent == {(1, "sampler", 1.0): 10, (2, "sampler", 1.0): 4}
    assert c.reached(4) is False  # pid 2 has 4 of the 2 + 4 it needs
    c.update([a, b, timing_record(4, [(1, 1, 0, 0)] * 3, pid=2)])
    assert c.reached(4) is True and c.reached(9) is False


# -- renderers --------------------------------------------------------------------------
def small_sweep():
    res = values(("16", [1000, 1100], 50 * MIB), ("32", [2000, 2100], 80 * MIB))
    res.append(ValueResult("48", [run("48", None, status="exit", exit_code=1)]))
    var = params.parse_list("batch", "16,32,48")
    con, warnings = conclude(res, var, Limits(memory_limit_bytes=1 << 40), {})
    context = {"command_template": ["python", "s.py", "--batch", "{batch}"], "runs_per_value": 2, "steps": 50,
               "duration_s": None, "warmup_steps": 5, "workers_observed": {"16": 8}, "thread_env": {},
               "cpu_count": 2, "memory_limit_bytes": 1 << 40, "memory_limit_basis": "test",
               "versions": {"python": "3.11", "python_implementation": "CPython", "qg_audit": "0", "libraries": {}},
               "gpu": {"present": False, "devices": [], "total_bytes": None, "peak_basis": None}}
    return Sweep(var, context, res, con, warnings)


def test_text_table_and_conclusion():
    from auditor.render import sweep_text

    text = sweep_text.render(small_sweep())
    row16 = next(line for line in text.splitlines() if line.startswith("16 "))
    assert "1 050 \u00b1 70.7" in row16 and "50.0 MiB" in row16 and "n/a" in row16 and row16.endswith("ok")
    row48 = next(line for line in text.splitlines() if line.startswith("48 "))
    assert row48.endswith("exit 1")
    assert "batch 16 \u2192 32: samples/s 1 050 \u2192 2 050 (+95%)" in text
    assert "command:  python s.py --batch {batch}" in text


def test_csv_and_markdown_exports():
    from auditor.render import sweep_csv, sweep_markdown

    sw = small_sweep()
    rows = list(csv.DictReader(io.StringIO(sweep_csv.render(sw))))
    assert [r["batch"] for r in rows] == ["16", "32", "48"]
    assert float(rows[0]["samples_per_s_mean"]) == 1050 and rows[0]["gpu_peak_bytes"] == ""
    assert rows[2]["exit_codes"] == "1" and rows[2]["samples_per_s_mean"] == ""
    md = sweep_markdown.render(sw)
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 4 and table[0].startswith("| batch | samples/s |")
    assert "**Conclusion:**" in md


def test_gpu_absent_means_no_probe():
    from auditor.sweep.gpu import GpuProbe

    probe = GpuProbe.open()
    if probe is not None:
        probe.close()
        pytest.skip("a GPU is present here; this checks the no-GPU path")
    assert probe is None


class _StandInNvml:
    """Stands in for pynvml, only for the arithmetic of GpuTracker: this machine has no GPU, so
    the real NVML path cannot run here (GpuProbe.open() returning None is tested above)."""

    class _Mem:
        def __init__(self, total, used):
            self.total, self.used = total, used

    class _Proc:
        def __init__(self, pid, used):
            self.pid, self.usedGpuMemory = pid, used

    def __init__(self):
        self.used, self.procs, self.fail = 1000, [], False

    def nvmlDeviceGetMemoryInfo(self, h):
        if self.fail:
            raise RuntimeError("GPU is lost")
        return self._Mem(80_000, self.used)

    def nvmlDeviceGetName(self, h):
        return b"Stand-in GPU"

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [self._Proc(pid, used) for pid, used in self.procs]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):
        return []


def test_gpu_tracker_per_process_then_device_delta_then_error():
    from auditor.sweep.gpu import GpuProbe

    nv = _StandInNvml()
    probe = GpuProbe(nv, [0])
    assert probe.total_bytes == 80_000 and probe.names == ["Stand-in GPU"]
    t = probe.run_tracker()  # baseline: 1000 used before the run
    nv.used, nv.procs = 6000, [(41, 3000), (42, 2000), (99, 7000)]  # pid 99 is not ours
    t.sample({41, 42})
    nv.used, nv.procs = 3000, [(41, 1000)]
    t.sample({41, 42})
    assert (t.peak_bytes, t.basis) == (5000, "process")

    t2 = probe.run_tracker()  # NVML lists none of the tree's pids (a container): device delta
    nv.used, nv.procs = 9000, [(7, 6000)]
    t2.sample({41})
    assert (t2.peak_bytes, t2.basis) == (6000, "device-delta")

    nv.fail = True
    t2.sample({41})
    assert t2.error and t2.peak_bytes == 6000  # the figure so far is kept

"""profile / diagnose measure from readiness, explain the untimed share, judge what the command runs.

Fast tests on fixtures (the real-job ones are tests/test_profile_jobs.py, marked slow): the
window counts from the first timed step, windows that cannot hold data are refused before
any launch, a failed profile still gets its scan and verify with the target's own output,
diagnose's import closure and command-line values, and the contention rule on numbers.
"""

from __future__ import annotations

import json
import sys
import textwrap
from types import SimpleNamespace

import pytest

from tests.conftest import FIXTURES, run_cli

KNOWN = str(FIXTURES / "profile" / "known_cost.py")


# -- windows that cannot hold data ------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["verify", "--expect-workers", "2", "--warmup", "3", "--duration", "2"], "--warmup 3 leaves nothing of --duration 2"),
    (["profile", "--warmup-s", "3", "--duration", "2"], "--warmup-s 3 leaves nothing of --duration 2"),
    (["diagnose", "--verify-warmup", "3", "--verify-duration", "2"],
     "--verify-warmup 3 leaves nothing of --verify-duration 2"),
])
def test_a_window_that_cannot_hold_data_is_refused_before_the_launch(args, needle, tmp_path):
    marker = tmp_path / "ran"
    proc = run_cli(*args, "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "both count from" in proc.stderr
    assert not marker.exists()  # nothing was launched


def test_verify_zero_duration_with_warmup_is_fine():
    # --duration 0 means "until it exits": no window to empty
    from auditor.runtime.check import check_window

    check_window(3.0, 0.0)
    check_window(1.0, None)


# -- the window counts from the first timed step ----------------------------------------------

@pytest.mark.slow
def test_duration_counts_from_the_first_step_with_a_status_line_while_waiting():
    # the first env step takes 3 s (an import or env build): with --duration 1 counted from the
    # launch nothing would be measured; counted from readiness there are steady steps
    proc = run_cli("profile", "--duration", "1", "--format", "json", "--", sys.executable, KNOWN, "--steps", "0",
                   "--first-ms", "3000", timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    ready = doc["target"]["ready"]
    assert ready["at"] >= 3.0 and "first timed step" in ready["why"], ready
    assert doc["steps"] > 0
    assert doc["target"]["ended_by"] == "duration"
    assert "qg-audit profile: waiting for the first SamplingTimer step: " in proc.stderr


def test_a_run_that_ends_before_it_is_ready_says_so():
    proc = run_cli("profile", "--auto", "--", sys.executable, "-c", "print('building envs'); raise SystemExit(0)",
                   timeout=60)
    assert proc.returncode == 3
    assert "exited with code 0 after" in proc.stderr and "before it was ready: no env step the hook could time" \
        in proc.stderr
    assert "--- target stdout (last 1 lines) ---\nbuilding envs" in proc.stderr


def test_ready_timeout_bounds_the_wait(tmp_path):
    proc = run_cli("profile", "--duration", "5", "--ready-timeout", "1.5", "--format", "json", "--",
                   sys.executable, "-c", "import time; time.sleep(60)", timeout=60)
    assert proc.returncode == 3
    assert "within --ready-timeout 1.5 s of the launch" in proc.stderr


def test_keep_output_keeps_the_whole_output(tmp_path):
    kept = tmp_path / "kept"
    proc = run_cli("profile", "--keep-output", str(kept), "--", sys.executable, KNOWN, "--steps", "20",
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (kept / "reports.jsonl").read_text().count('"type": "timing"') + \
        (kept / "reports.jsonl").read_text().count('"type":"timing"') >= 1
    assert (kept / "stderr.log").exists() and (kept / "stdout.log").exists()


# -- diagnose: a failed profile still gets its scan and verify --------------------------------

def test_failed_profile_still_scans_and_verifies_with_the_targets_output(tmp_path):
    (tmp_path / "job.py").write_text(textwrap.dedent("""
        import multiprocessing as mp
        import sys

        if __name__ == "__main__":
            with mp.Pool(processes=3) as pool:
                pool.map(abs, range(30))
            print("learner: CUDA error: out of memory", file=sys.stderr)
            raise SystemExit(4)
    """))
    proc = run_cli("diagnose", "--format", "json", "--verify-duration", "0", "--", sys.executable,
                   str(tmp_path / "job.py"), timeout=180)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    steps = {s["name"]: (s["status"], s["verdict"]) for s in doc["steps"]}
    assert steps["profile"] == ("failed", "target-failed") and doc["branch"] == "target-failed"
    assert steps["scan"][0] == "ran" and steps["verify"][0] in ("ran", "failed")
    assert doc["scan"]["expected"]["workers"] == 3
    assert "learner: CUDA error: out of memory" in doc["steps"][0]["message"]
    assert "learner: CUDA error: out of memory" in doc["verify"]["target"]["stderr_tail"]


# -- diagnose: what the command runs ------------------------------------------------------------

def test_entry_point_closure_and_command_line_values(tmp_path):
    from auditor.method.entry import entry_point, flag_values

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "envs.py").write_text("from . import util\nimport numpy\n")
    (tmp_path / "pkg" / "util.py").write_text("import os\n")
    (tmp_path / "train.py").write_text("import json\nfrom pkg.envs import make\nimport helpers\n")
    (tmp_path / "helpers.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("from pkg import util\n")
    cmd = [sys.executable, str(tmp_path / "train.py"), "--num-envs", "2", "--vec=async", "-v"]
    e = entry_point(cmd, str(tmp_path))
    assert e.script == "train.py"
    assert e.files == {"train.py", "helpers.py", "pkg/__init__.py", "pkg/envs.py", "pkg/util.py"}
    assert not e.runs("other.py") and e.runs("pkg/util.py")
    assert flag_values(cmd) == {"--num-envs": "2", "--vec": "async"}
    # no script found: every file counts
    assert entry_point(["sleep", "1"], str(tmp_path)).runs("other.py")


def test_expected_workers_follow_the_command_line_and_the_files_it_runs(tmp_path):
    from auditor import join, scan
    from auditor.method.entry import entry_point, flag_values
    from auditor.method.parallel import expected_workers

    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import argparse
        import gymnasium as gym

        p = argparse.ArgumentParser()
        p.add_argument("--num-envs", type=int, default=4)
        a = p.parse_args()
        envs = gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(a.num_envs)])
    """))
    (tmp_path / "sibling.py").write_text(textwrap.dedent("""
        import multiprocessing as mp
        pool = mp.Pool(processes=6)
    """))
    result = scan.scan(str(tmp_path), jobs=1)
    join.join(result)
    cmd = [sys.executable, str(tmp_path / "train.py"), "--num-envs", "2"]
    whole = expected_workers(result)
    judged = expected_workers(result, entry_point(cmd, str(tmp_path)), flag_values(cmd))
    assert whole.workers == 10  # 4 + 6: the whole directory, the defaults
    assert judged.workers == 2 and judged.knobs[0]["from_command"]
    assert "2 from the command line (--num-envs 2" in judged.knobs[0]["why"]


# -- the contention rule, on numbers ------------------------------------------------------------

def _prof(fwd=0.05, untimed=0.8):
    from auditor.profiling import Thresholds

    return SimpleNamespace(steps=100, phases=[SimpleNamespace(name="env", share=1 - fwd - untimed),
                                              SimpleNamespace(name="fwd", share=fwd)],
                           other_share=untimed, thresholds=Thresholds(), stacks={
                               "interval_ms": 20, "samples": {"untimed": 100, "fwd": 10}, "total": 110,
                               "top": [{"phase": "untimed", "function": "softmax  torch/nn/functional.py",
                                        "line": "job.py:38 Agent.act", "samples": 70},
                                       {"phase": "untimed", "function": "main  job.py", "line": "job.py:60 main",
                                        "samples": 30}]})


def _records(tid=100, torch_threads=2):
    import base64

    return [{"type": "threads", "pid": 100, "value": torch_threads, "default": True, "setter": "torch default"},
            {"type": "timing", "source": "auto", "pid": 100, "timer": "auto/MainThread", "t0": 1.0, "tid": tid,
             "phases": ["env", "fwd", "xfer"], "first_step": 0, "end_ns": 1,
             "encoding": "i64le-b64", "steps": base64.b64encode(bytes(8 * 5)).decode()}]


def _threads(ran=0.4, other=0.9):
    rows = [{"tid": 100, "name": "python", "runnable": 0.95, "cores": round(0.95 * ran, 3)},
            {"tid": 101, "name": "python", "runnable": other, "cores": 0.3}]
    return {"busy_threads": sum(r["runnable"] >= 0.5 for r in rows), "cpus": 2, "busy_share": 0.5,
            "processes": [{"pid": 100, "role": "target", "threads": 3, "busy": 2, "cores": 0.7, "thread_rows": rows}]}


def test_contention_is_named_with_its_numbers_when_they_say_so():
    from auditor.profiling.explain import explain

    ex = explain(_prof(), _records(), _threads(), {"cpus": 2})
    assert [f["function"] for f in ex["untimed"]["functions"]] == ["softmax  torch/nn/functional.py", "main  job.py"]
    assert ex["untimed"]["functions"][0]["share"] == 0.7 and ex["untimed"]["torch_share"] == 0.7
    c = ex["contention"]
    assert c is not None and c["busy_others"][0]["tid"] == 101 and c["ran"] == pytest.approx(0.4, abs=0.01)
    assert "tid 101 runnable 90%" in c["message"] and "torch's 2 intra-op threads (torch default)" in c["message"]
    assert "OMP_NUM_THREADS=1" in c["message"] and "softmax 70%" in c["message"]


@pytest.mark.parametrize("why,kwargs", [
    ("the sampling thread got its CPU", {"threads": {"ran": 0.95}}),
    ("nothing else was busy in its process", {"threads": {"other": 0.1}}),
    ("torch ran one intra-op thread", {"records": {"torch_threads": 1}}),
    ("torch calls are a small part of the step", {"prof": {"fwd": 0.05, "untimed": 0.2}}),
])
def test_contention_is_not_named_when_the_numbers_do_not_say_so(why, kwargs):
    from auditor.profiling.explain import explain

    prof = _prof(**kwargs.get("prof", {}))
    if "prof" in kwargs:  # little untimed time, and none of it in torch
        prof.stacks["top"][0]["function"] = "step  gymnasium/core.py"
    ex = explain(prof, _records(**kwargs.get("records", {})), _threads(**kwargs.get("threads", {})), {"cpus": 2})
    assert ex["contention"] is None, why


def test_profile_text_shows_the_untimed_functions_and_the_threads():
    from auditor.profiling import summarize
    from auditor.profiling.explain import explain
    from auditor.render.profile_text import render

    recs = [{"type": "timing", "pid": 1, "timer": "s", "t0": 1.0, "phases": ["env"], "first_step": 0, "end_ns": 0,
             "warmup_steps": 0, "steps": [[1_000_000, 1, 200_000]] * 20}]
    prof = summarize(recs)
    prof.stacks = _prof().stacks
    prof.run = {"thread_cpu": _threads(), "load": [3.5, 3.0, 2.0]}
    prof.explanation = explain(prof, _records(tid=1), _threads(), {"cpus": 2})
    text = render(prof)
    assert "untimed 80% of the step, by function (100 stack samples" in text
    assert "70%  softmax  (torch/nn/functional.py; from job.py:38 Agent.act)" in text
    assert "threads and CPU in the steady window (2 busy thread(s) in the job on 2 CPU(s); load average 3.5" in text

"""auditor.timing.SamplingTimer: records, batching, standalone summaries, fork and exit flushes.

Report-channel tests run the timer in a real subprocess with QG_AUDIT_REPORT set (the
channel caches its file descriptor per process, as it does in users' workers).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

from auditor.profiling.series import decode_rows
from auditor.timing import SamplingTimer


def run_py(code: str, report: str | None = None, timeout: float = 60, script=None) -> subprocess.CompletedProcess:
    """Run CODE in a fresh interpreter (from the file SCRIPT when given: spawn needs a file)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("QG_AUDIT_REPORT", None)
    if report:
        env["QG_AUDIT_REPORT"] = report
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    if script is not None:
        script.write_text(textwrap.dedent(code))
        argv = [sys.executable, str(script)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


def read_records(path) -> list[dict]:
    """Records with their packed rows decoded into lists (as the profile reader does)."""
    with open(path, encoding="utf-8") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    for r in recs:
        r["steps"], bad = decode_rows(r["steps"], 2 + len(r["phases"]), r["encoding"])
        r["trainer"], bad2 = decode_rows(r["trainer"], 3, r["trainer_encoding"])
        assert bad == bad2 == 0
    return recs


def test_phase_objects_are_cached_and_validated():
    t = SamplingTimer(print_every=0, stream=io.StringIO())
    assert t.phase("env") is t.phase("env")
    assert t.phase("env") is not t.phase("fwd")
    with pytest.raises(ValueError):
        t.phase("")
    with pytest.raises(ValueError):
        SamplingTimer(warmup_steps=-1)
    with pytest.raises(ValueError):
        SamplingTimer(flush_every=0)


def test_standalone_prints_steady_summary_every_n_steps():
    out = io.StringIO()
    t = SamplingTimer(warmup_steps=3, print_every=10, stream=out)
    for _ in range(25):
        with t.phase("env"):
            pass
        t.begin("fwd")
        t.end()
        t.step(samples=4)
    assert t.steps == 25
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # after steps 10 and 20; the last 5 wait for the next flush
    assert "steady, first 3 excluded" in lines[0]
    assert "steps 4-10" in lines[0] and "steps 11-20" in lines[1]
    assert "env=" in lines[0] and "fwd=" in lines[0] and "samples/s" in lines[0]
    t.close()
    assert "steps 21-25" in out.getvalue().splitlines()[-1]


def test_standalone_trainer_summary_has_wait_ratio():
    import time

    def ratio(wait_s, compute_s):
        out = io.StringIO()
        t = SamplingTimer(print_every=8, stream=out)
        for _ in range(8):
            with t.wait():
                time.sleep(wait_s)
            with t.compute():
                time.sleep(compute_s)
        line = out.getvalue().strip()
        assert "wait=" in line and "compute=" in line
        return int(line.rsplit("wait-ratio=", 1)[1].rstrip("%"))

    # the sleeping side dominates however late the sleeps wake on a loaded box
    assert ratio(0, 0.005) < 50 < ratio(0.005, 0)


def test_records_are_batched_contiguous_and_chained(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = run_py("""
        from auditor.timing import SamplingTimer
        t = SamplingTimer(warmup_steps=2, name="s", role="rollout", flush_every=10, flush_s=1000)
        for i in range(35):
            with t.phase("env"):
                pass
            if i >= 12:  # a custom phase that first appears mid-run
                with t.phase("decode"):
                    pass
            t.step(samples=i)
        for i in range(3):
            with t.wait():
                pass
            with t.compute():
                pass
    """, report=str(report))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # under qg-audit the timer prints nothing
    recs = read_records(report)
    assert all(r["type"] == "timing" and r["timer"] == "s" and r["role"] == "rollout" for r in recs)
    assert [r["first_step"] for r in recs] == [0, 10, 20, 30]  # 3 full batches + the rest at exit
    assert [len(r["steps"]) for r in recs] == [10, 10, 10, 5]
    assert recs[0]["phases"] == ["env"] and recs[-1]["phases"] == ["env", "decode"]
    assert len(recs[0]["steps"][0]) == 3 and len(recs[-1]["steps"][0]) == 4
    samples = [row[1] for r in recs for row in r["steps"]]
    assert samples == list(range(35))
    assert all(r["warmup_steps"] == 2 for r in recs)
    # the trainer rows arrive in the exit flush
    assert [len(r["trainer"]) for r in recs] == [0, 0, 0, 3]
    assert all(len(row) == 3 for row in recs[-1]["trainer"])
    # end_ns of each batch = end of the previous batch's first step + its later step times
    for prev, cur in zip(recs, recs[1:]):
        chained = prev["end_ns"] + sum(row[0] for row in prev["steps"][1:]) + cur["steps"][0][0]
        assert chained == cur["end_ns"]


def test_forked_child_does_not_resend_parent_rows(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = run_py("""
        import os
        from auditor.timing import SamplingTimer
        t = SamplingTimer(flush_every=1000, flush_s=1000)
        for _ in range(5):
            with t.phase("env"):
                pass
            t.step()
        pid = os.fork()
        if pid == 0:
            for _ in range(3):
                with t.phase("env"):
                    pass
                t.step()
            t.flush()
            os._exit(0)
        os.waitpid(pid, 0)
    """, report=str(report))
    assert proc.returncode == 0, proc.stderr
    recs = read_records(report)
    by_pid = {}
    for r in recs:
        by_pid.setdefault(r["pid"], []).append(r)
    assert len(by_pid) == 2
    child = next(v for v in by_pid.values() if v[0]["ppid"] in by_pid)
    parent = next(v for v in by_pid.values() if v is not child)
    # the child's numbering continues after the parent's 5 steps; the parent's rows are not repeated
    assert [(r["first_step"], len(r["steps"])) for r in child] == [(5, 3)]
    assert [(r["first_step"], len(r["steps"])) for r in parent] == [(0, 5)]


def test_multiprocessing_children_flush_at_exit_without_close(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = run_py("""
        import multiprocessing as mp
        from auditor.timing import SamplingTimer

        def work(i):
            t = SamplingTimer(name="w", role=f"w{i}", flush_every=1000, flush_s=1000)
            for _ in range(7):
                with t.phase("env"):
                    pass
                t.step()

        inherited = SamplingTimer(name="inherited", flush_every=1000, flush_s=1000)

        def use_inherited():
            for _ in range(4):
                with inherited.phase("env"):
                    pass
                inherited.step()

        if __name__ == "__main__":
            for method in ("fork", "spawn"):
                p = mp.get_context(method).Process(target=work, args=(method,))
                p.start(); p.join()
                assert p.exitcode == 0
            # a timer created in the parent, used in a forked child: flushed at the child's exit
            p = mp.get_context("fork").Process(target=use_inherited)
            p.start(); p.join()
            assert p.exitcode == 0
    """, report=str(report), timeout=120, script=tmp_path / "mp_timer.py")
    assert proc.returncode == 0, proc.stderr
    recs = read_records(report)
    roles = sorted(r["role"] for r in recs if r["timer"] == "w")
    assert roles == ["wfork", "wspawn"]
    assert all(len(r["steps"]) == 7 for r in recs if r["timer"] == "w")
    inherited = [r for r in recs if r["timer"] == "inherited"]
    parent = recs[0]["ppid"]  # the script that started every child
    assert [(len(r["steps"]), r["first_step"], r["ppid"]) for r in inherited] == [(4, 0, parent)]
    assert inherited[0]["pid"] != parent  # sent by the child, at its exit


def test_records_sent_every_flush_s_even_when_steps_are_few(tmp_path):
    report = tmp_path / "r.jsonl"
    proc = run_py("""
        import time
        from auditor.timing import SamplingTimer
        t = SamplingTimer(flush_every=1000, flush_s=0.05)
        for _ in range(4):
            with t.phase("env"):
                time.sleep(0.03)
            t.step()
        import os
        os._exit(0)  # no exit flush: only the time-based flushes count
    """, report=str(report))
    assert proc.returncode == 0, proc.stderr
    recs = read_records(report)
    assert len(recs) >= 1
    assert sum(len(r["steps"]) for r in recs) >= 2


def test_packing_round_trips_narrow_and_wide_values():
    from array import array

    from auditor.timing import _pack

    import base64

    narrow = array("q", [7_000_000, 8, 4_000_000, 2_000_000, 1_000_000] * 3)
    wide = array("q", [3_000_000_000, 8, 2_999_000_000, 500_000, 500_000])  # a 3 s step
    for buf in (narrow, wide):
        enc, text = _pack(buf)
        assert enc == "i64le-b64"
        rows, bad = decode_rows(text, 5, enc)
        assert bad == 0 and [v for r in rows for v in r] == list(buf)
    # readers also take int32 rows (a narrower producer)
    text = base64.b64encode(array("i", narrow).tobytes()).decode() if array("i").itemsize == 4 else None
    if text:
        rows, bad = decode_rows(text, 5, "i32le-b64")
        assert bad == 0 and [v for r in rows for v in r] == list(narrow)
    assert decode_rows("not base64!", 5, "i32le-b64") == ([], 1)
    assert decode_rows("AAAA", 5, "i32le-b64") == ([], 1)  # 4 bytes is not a whole 5-wide row
    assert decode_rows("AAAA", 1, "zip") == ([], 1)


def test_ctrl_c_flushes_what_was_buffered(tmp_path):
    """qg-audit ends a target with SIGINT first: the exit flush must deliver the buffered rows."""
    import signal

    report = tmp_path / "r.jsonl"
    env = dict(os.environ, QG_AUDIT_REPORT=str(report))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    code = textwrap.dedent("""
        import signal, sys, time
        # as under qg-audit, whose own SIGINT handler resets to the default at exec: a suite
        # started as a background job of a shell would hand this child an ignored SIGINT
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from auditor.timing import SamplingTimer
        t = SamplingTimer(flush_every=10**6, flush_s=10**6)  # only the exit flush can send
        n = 0
        while True:
            with t.phase("env"):
                time.sleep(0.001)
            t.step()
            n += 1
            if n == 20:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # say where it hung (SigIgn shows an inherited ignored SIGINT)
            status = Path(f"/proc/{proc.pid}/status").read_text()
            wchan = Path(f"/proc/{proc.pid}/wchan").read_text()
            proc.kill()
            pytest.fail(f"still running 30 s after SIGINT; wchan={wchan!r}; "
                        + " ".join(line for line in status.splitlines() if line.startswith(("State", "Sig")))
                        + f"; stderr={proc.stderr.read()[-2000:]!r}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    recs = read_records(report)
    assert len(recs) == 1 and len(recs[0]["steps"]) >= 20


def test_timing_imports_only_the_standard_library():
    """It runs inside users' workers: nothing but auditor.report and the stdlib may load."""
    proc = run_py("""
        import sys
        before = set(sys.modules)
        from auditor.timing import SamplingTimer
        with SamplingTimer(print_every=0) as t:
            with t.phase("env"):
                pass
            t.step()
        new = {m.split(".")[0] for m in set(sys.modules) - before}
        print(sorted(m for m in new if m not in sys.stdlib_module_names and m != "auditor"))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"

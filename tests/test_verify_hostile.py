"""verify trusts nothing the target hands back (issue 22; docs/verify.md "Threat model").

Real targets, real process trees: workers that run one after another, forged reports,
workers shorter than the poll interval, and a target that replaces its report file with a
FIFO or a link to /dev/zero, or floods it with a million lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, peak_rss_run
from tests._verify_helpers import SAMPLERS, wait_none_left

PY = sys.executable


def verify(cli, tmp_path, *args, expect_rc=None):
    out = tmp_path / "verify.json"
    proc = cli("verify", "--format", "json", "-o", str(out), *args, cwd=SAMPLERS, timeout=180)
    assert out.exists(), proc.stderr
    data = json.loads(out.read_text())
    if expect_rc is not None:
        assert proc.returncode == expect_rc, (proc.returncode, data["verdict"], data["reasons"])
    return data


def codes(data) -> list[str]:
    return [r["code"] for r in data["reasons"]]


def test_workers_that_ran_one_after_another_are_not_n_workers(cli, tmp_path):
    # four single workers in turn: four worker reports, never two workers alive at once
    data = verify(cli, tmp_path, "--expect-workers", "4", "--duration", "0", "--timeout", "120", "--warmup", "0",
                  "--", PY, "pool1_loop.py", "--workers", "4", expect_rc=1)
    assert data["verdict"] in ("fallback", "no-workers"), data["reasons"]
    assert data["observed"]["workers"] <= 1 and data["observed"]["peak"] <= 1
    assert data["observed"]["basis"] == "census"
    assert sum(r.get("type") == "worker" for r in data["reports"]) == 4  # they did report, and counted 0
    assert not wait_none_left()


def test_forged_worker_reports_count_nothing(cli, tmp_path):
    data = verify(cli, tmp_path, "--expect-workers", "4", "--duration", "0", "--timeout", "60", "--warmup", "0",
                  "--", PY, "forged_reports.py", "--count", "4", "--seconds", "1.5", expect_rc=1)
    assert data["verdict"] == "no-workers", data["reasons"]
    assert data["observed"]["workers"] == 0
    assert data["report_lines"]["ignored_non_members"] == 4
    [note] = [r for r in data["reasons"] if r["code"] == "ignored-reports"]
    assert "4 worker report(s) came from pids the census never saw" in note["message"] and "4000000" in note["message"]
    text = subprocess.run([PY, "-m", "auditor", "verify", "--expect-workers", "4", "--duration", "0", "--warmup", "0",
                           "--", PY, "forged_reports.py", "--seconds", "0.5"], cwd=SAMPLERS, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120).stdout
    assert "note: ignored-reports:" in text and "4 from pids never in the tree, ignored" in text


def test_workers_shorter_than_the_poll_interval_are_not_counted_from_reports(cli, tmp_path):
    # --interval 5: the census polls at the launch and at the exit only, so it never sees the workers
    data = verify(cli, tmp_path, "--expect-workers", "2", "--interval", "5", "--", PY, "short_pool.py",
                  expect_rc=1)
    assert data["verdict"] == "no-workers" and "ignored-reports" in codes(data), data["reasons"]
    assert "lower --interval" in next(r["message"] for r in data["reasons"] if r["code"] == "ignored-reports")
    # polled often enough, the census sees both workers alive together
    data = verify(cli, tmp_path, "--expect-workers", "2", "--interval", "0.05", "--", PY, "short_pool.py",
                  "--seconds", "1.5", expect_rc=0)
    assert data["verdict"] == "pass" and data["observed"]["workers"] == 2, data["reasons"]


@pytest.mark.parametrize("how", ["fifo", "zero"])
def test_a_report_file_replaced_by_a_fifo_or_dev_zero_cannot_hold_verify(cli, tmp_path, how):
    start = time.monotonic()
    data = verify(cli, tmp_path, "--expect-workers", "1", "--duration", "0", "--timeout", "3", "--warmup", "0",
                  "--", PY, "hostile_channel.py", how, expect_rc=1)
    took = time.monotonic() - start
    assert data["verdict"] == "no-workers" or "timeout" in codes(data), data["reasons"]
    assert data["target"]["ended_by"] == "timeout"
    assert took < 90, f"verify took {took:.0f}s for a 3 s --timeout"  # it hung until killed before (unbounded)
    assert not wait_none_left()


@pytest.mark.slow
def test_a_million_report_lines_stay_bounded_in_memory(tmp_path):
    sys.path.insert(0, str(REPO))
    from auditor.runtime.session import MAX_REPORTS

    out = tmp_path / "verify.json"
    cmd = [PY, "-m", "auditor", "verify", "--format", "json", "-o", str(out), "--expect-workers", "1",
           "--duration", "4", "--interval", "0.25", "--", PY, "hostile_channel.py", "flood", "--lines", "1000000"]
    peak_mb, code, _stdout = peak_rss_run(cmd, env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=SAMPLERS)
    assert code in (0, 1), code
    data = json.loads(out.read_text())
    lines = data["report_lines"]
    assert len(data["reports"]) <= MAX_REPORTS
    assert lines["dropped_over_cap"] + len(data["reports"]) >= 900_000 or lines["unread_bytes"] > 0, lines
    assert any("report channel was flooded" in n for n in data["hook"]["notes"])
    assert len(data["observed"]["samples"]) >= 4  # the census kept polling through the flood
    assert peak_mb < 600, f"verify peaked at {peak_mb:.0f} MB for a million report lines (was 1.3 GB)"
    assert not wait_none_left()

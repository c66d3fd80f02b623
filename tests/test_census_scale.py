"""The census on a tree bigger than READ_BUDGET reads members in turns: same counts, same verdicts."""

from __future__ import annotations

import sys

import pytest

from auditor.runtime import census
from auditor.runtime.session import run_target
from auditor.runtime.verdict import Expectation, judge
from tests._verify_helpers import SAMPLERS, assert_none_left, wait_none_left


@pytest.fixture(autouse=True)
def no_process_left():
    yield
    left = wait_none_left()
    assert not left, f"target processes left after the test: {left}"


@pytest.mark.slow
@pytest.mark.parametrize("budget", [3, 10**9])
def test_reading_in_turns_gives_the_same_verdict(monkeypatch, budget):
    monkeypatch.setattr(census, "READ_BUDGET", budget)
    r = run_target([sys.executable, str(SAMPLERS / "mp_sampler.py"), "--workers", "6", "--seconds", "8",
                    "--die-after", "2.5"], duration=7, interval=0.25, warmup=1.0)
    assert_none_left(r.processes)
    workers = r.workers
    assert r.peak_workers == 6 and len(workers) == 6
    assert all(p.t_cpu is not None and p.rss_peak > 0 for p in workers)  # each was read, in its turn
    v = judge(r, Expectation(workers=6), warmup=1.0)
    assert v.code == "workers-died", v.reasons
    assert v.observed_workers == 6

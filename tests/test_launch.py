"""run_target, the library behind verify / profile / sweep: launch, end the whole tree, hook."""

from __future__ import annotations

import sys
import time

import pytest

from auditor.runtime.session import RunResult, run_target
from tests._verify_helpers import SAMPLERS, assert_none_left, wait_none_left


@pytest.fixture(autouse=True)
def no_process_left():
    yield
    left = wait_none_left()
    assert not left, f"target processes left after the test: {left}"


def test_unruly_children_are_all_ended(tmp_path):
    # one ignores SIGINT+SIGTERM, one changes process group, one is a setsid daemon whose
    # parent exits, one ignores SIGTERM and has a stubborn child; the target ignores SIGINT
    r = run_target([sys.executable, str(SAMPLERS / "unruly.py")], duration=1.5, int_grace=0.5,
                   term_grace=0.5)
    assert r.started and r.returncode is None and not r.timed_out
    assert len(r.processes) >= 7, [(p.pid, p.cmdline) for p in r.processes]
    assert r.survivors == []
    assert_none_left(r.processes)
    # the setsid daemon was re-parented to the probe (a child subreaper) and still ended
    import os

    assert any(p.ppid == os.getpid() and p.role != "target" for p in r.processes)


def test_exception_in_caller_callback_still_ends_the_tree():
    seen = []

    def on_sample(sample):
        seen.append(sample)
        if sample["workers"] >= 2:
            raise KeyboardInterrupt  # as if the user pressed Ctrl-C in the middle of a run

    with pytest.raises(KeyboardInterrupt):
        run_target([sys.executable, str(SAMPLERS / "mp_sampler.py"), "--workers", "2"], duration=30,
                   interval=0.1, on_sample=on_sample)
    assert seen and seen[-1]["workers"] == 2


def test_stop_when_and_samples_and_reports():
    def enough(partial: RunResult) -> bool:
        return sum(1 for r in partial.reports if r.get("type") == "worker" and r.get("source") != "hook") >= 3

    t = time.monotonic()
    r = run_target([sys.executable, str(SAMPLERS / "mp_sampler.py"), "--workers", "3"], duration=30,
                   interval=0.1, stop_when=enough)
    assert time.monotonic() - t < 25
    assert r.returncode is None and r.peak_workers == 3
    assert r.samples and all(set(s) == {"t", "processes", "workers", "ranks", "threads", "rss"} for s in r.samples)
    assert r.peak_processes >= 4 and r.peak_rss_bytes > 0 and r.peak_threads >= 4
    user = [x for x in r.reports if x["type"] == "worker" and x.get("source") != "hook"]
    assert sorted(x["values"]["worker_id"] for x in user) == [0, 1, 2]
    assert r.hook_active is True
    assert_none_left(r.processes)


def test_timeout_and_exit_code_and_output_tails():
    r = run_target([sys.executable, "-c", "import sys,time; print('out-line'); print('err-line', file=sys.stderr); "
                    "time.sleep(60)"], timeout=1.0)
    assert r.timed_out and r.returncode is None
    assert "out-line" in r.stdout_tail and "err-line" in r.stderr_tail
    r = run_target([sys.executable, "-c", "raise SystemExit(7)"])
    assert r.returncode == 7 and not r.timed_out


def test_command_not_found_is_not_started():
    r = run_target(["/nonexistent/sampler"])
    assert r.started is False and r.error and "nonexistent" in r.error
    assert r.processes == [] and r.hook_active is None


def test_hook_chains_an_existing_sitecustomize(tmp_path):
    marker = tmp_path / "marker"
    user = tmp_path / "user"
    user.mkdir()
    (user / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('user sitecustomize ran')\n")
    r = run_target([sys.executable, "-c", "import sitecustomize, sys; print(sitecustomize.__file__)"],
                   env={"PYTHONPATH": str(user)})
    assert r.returncode == 0, r.stderr_tail
    assert r.hook_active is True
    assert marker.read_text() == "user sitecustomize ran"
    assert r.stdout_tail.strip() == str(user / "sitecustomize.py")


def test_scrubbed_environment_says_the_hook_could_not_apply():
    r = run_target(["env", "-i", sys.executable, "-c", "import time; time.sleep(0.5)"])
    assert r.returncode == 0 and r.hook_active is False
    assert r.notes and "hook could not apply" in r.notes[-1]


def test_env_overlay_and_removal():
    r = run_target([sys.executable, "-c", "import os; print(os.environ.get('QG_X'), os.environ.get('HOME'))"],
                   env={"QG_X": "41", "HOME": None}, hook=False)
    assert r.stdout_tail.split() == ["41", "None"] and r.hook_active is None

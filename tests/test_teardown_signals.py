"""Every way out of verify, profile and sweep ends the target's whole tree and its temp dir.

A real qg-audit process runs fixtures/samplers/unruly.py (children that ignore SIGTERM,
change process group, or detach as a setsid daemon), and this test sends qg-audit itself
SIGINT, SIGTERM, SIGHUP or SIGKILL, as a terminal, CI or the OOM killer would. Then it
counts, with psutil, the processes whose command line carries this test's unique marker,
and the qg-audit-* directories in this test's private TMPDIR. SIGKILL runs no finally:
there the guardian (auditor/runtime/guardian.py) does the work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from tests.conftest import FIXTURES, REPO

UNRULY = str(FIXTURES / "samplers" / "unruly.py")
UNRULY_PROCESSES = 6  # the root, four forked children, and the grandchild of one of them


def _marked(marker: str, exclude: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        if p.pid == exclude or p.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if marker in " ".join(p.info["cmdline"] or []):
            found.append(p)
    return found


def _command(which: str, seconds: str) -> list[str]:
    target = ["--", sys.executable, UNRULY, seconds]
    if which == "verify":
        return ["verify", "--expect-workers", "2", "--duration", "120", *target]
    if which == "profile":
        return ["profile", "--duration", "120", *target]
    if which == "diagnose":
        return ["diagnose", "--duration", "120", *target]
    return ["sweep", "-L", "x", "1,2", "--duration", "120", *target, "{x}"]


def _run_and_signal(tmp_path, which: str, sig: signal.Signals):
    # the marker rides in unruly's argument (its sleep time): children inherit the command line
    seconds = f"300.{uuid.uuid4().int % 10**9:09d}"
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(private_tmp))
    proc = subprocess.Popen([sys.executable, "-m", "auditor", *_command(which, seconds)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(_marked(seconds, proc.pid)) < UNRULY_PROCESSES and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_marked(seconds, proc.pid)) >= UNRULY_PROCESSES, "the target did not start its tree"
        assert list(private_tmp.iterdir()), "the run's temporary directory should exist while it runs"
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=90)
        deadline = time.monotonic() + 20  # after a SIGKILL the guardian needs a moment to wake
        while _marked(seconds, proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [f"{p.pid} {' '.join(p.info['cmdline'] or [])[:80]}" for p in _marked(seconds, proc.pid)]
        while list(private_tmp.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return proc.returncode, err, left, sorted(p.name for p in private_tmp.iterdir())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in _marked(seconds, proc.pid):  # never let a failing test leak the tree
            try:
                p.kill()
            except psutil.Error:
                pass


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_verify_leaves_nothing_behind(tmp_path, sig):
    rc, err, left, tmp = _run_and_signal(tmp_path, "verify", sig)
    assert left == [] and tmp == []
    assert rc == (130 if sig != signal.SIGKILL else -signal.SIGKILL), err
    if sig != signal.SIGKILL:
        assert f"interrupted ({sig.name})" in err


@pytest.mark.slow
@pytest.mark.parametrize("which,sig", [
    ("verify", signal.SIGHUP), ("verify", signal.SIGINT),
    ("profile", signal.SIGTERM), ("profile", signal.SIGHUP), ("profile", signal.SIGKILL),
    ("sweep", signal.SIGTERM), ("sweep", signal.SIGHUP), ("sweep", signal.SIGKILL),
    ("diagnose", signal.SIGTERM), ("diagnose", signal.SIGKILL),
], ids=lambda v: v.name if isinstance(v, signal.Signals) else v)
def test_every_runtime_command_leaves_nothing_behind(tmp_path, which, sig):
    rc, err, left, tmp = _run_and_signal(tmp_path, which, sig)
    assert left == [] and tmp == []
    assert rc == (130 if sig != signal.SIGKILL else -signal.SIGKILL), err


def test_guardian_exits_quietly_after_a_normal_end(tmp_path):
    """A clean end says "done": the guardian must not linger, nor kill anything."""
    code = ("import os, sys, time\n"
            "from auditor.runtime.guardian import Guardian\n"
            "g = Guardian(sys.argv[1])\n"
            "pid = g._proc.pid\n"
            "g.close()\n"
            "print(pid, g._proc.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "qg-audit-x")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert proc.returncode == 0, proc.stderr
    pid, rc = proc.stdout.split()
    assert rc == "0" and not psutil.pid_exists(int(pid))

"""The top-level CLI: dispatch, usage errors, a closed output pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, run_cli


def test_no_command_and_unknown_command_are_usage_errors():
    assert run_cli().returncode == 2
    proc = run_cli("scna", ".")
    assert proc.returncode == 2 and "invalid choice: 'scna'" in proc.stderr


def test_version_and_help_exit_0():
    assert run_cli("--version").stdout.startswith("qg-audit ")
    proc = run_cli("--help")
    assert proc.returncode == 0 and all(c in proc.stdout for c in ("scan", "verify", "profile", "sweep"))


@pytest.mark.parametrize("args", [("rules",), ("scan", "fixtures/example_project", "--format", "json")])
def test_a_closed_pipe_is_not_a_traceback(args):
    # `qg-audit rules | head -1`, made deterministic: the reading end is closed before the
    # command writes anything, so its first write fails with EPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        proc = subprocess.run([sys.executable, "-m", "auditor", *args], cwd=REPO, env=env, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr

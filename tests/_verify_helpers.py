"""Helpers for the verify / launch / census tests: no process of a target may outlive a test."""

from __future__ import annotations

import time

import psutil

from tests.conftest import FIXTURES

SAMPLERS = FIXTURES / "samplers"


def leftovers(marker: str = str(SAMPLERS)) -> list[str]:
    """Processes still running a fixture sampler, and zombie children of this process."""
    found = []
    me = psutil.Process()
    for p in psutil.process_iter(["pid", "cmdline", "status", "cwd"]):
        if p.pid == me.pid:
            continue
        cmd = " ".join(p.info["cmdline"] or [])
        # fixtures run with cwd=fixtures/samplers (children inherit it) or by absolute path
        if p.info["cwd"] == marker or marker in cmd:
            found.append(f"{p.pid} {p.info['status']} {cmd[:80]}")
    for child in me.children():
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                found.append(f"{child.pid} zombie child of the test process")
        except psutil.NoSuchProcess:
            pass
    return found


def assert_none_left(rows) -> None:
    """No (pid, create_time) of the observed tree is still alive."""
    alive = []
    for row in rows:
        pid, ctime = (row["pid"], row["create_time"]) if isinstance(row, dict) else (row.pid, row.create_time)
        try:
            p = psutil.Process(pid)
            if abs(p.create_time() - ctime) < 0.05 and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid} {p.name()}")
        except psutil.NoSuchProcess:
            pass
    assert not alive, f"processes of the target left behind: {alive}"


def wait_none_left(timeout: float = 3.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        left = leftovers()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)

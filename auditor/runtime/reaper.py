"""Keep the whole target tree in view and end all of it.

The probe makes itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a process of
the tree whose parent dies — a ``setsid`` daemon after its double fork, an orphaned worker —
is re-parented to the probe instead of init, so the census still sees it and it can be
ended. Signalling the process group alone is not enough (measured: it missed 2 of 5
children that changed group, called setsid or ignored SIGTERM); ending walks the census.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time

from auditor.runtime import procfs
from auditor.runtime.census import Census

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def become_subreaper() -> tuple[int | None, str | None]:
    """Make this process a child subreaper. Returns (previous setting, note when it could not)."""
    if not sys.platform.startswith("linux"):
        return None, ("no child subreaper on this platform: a daemon that detaches between two "
                      "census polls may escape; processes already seen are still ended")
    libc = _libc()
    if libc is None:
        return None, "libc not found: could not become a child subreaper"
    previous = ctypes.c_int(0)
    libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        return None, f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(err)}"
    return previous.value, None


PR_SET_PDEATHSIG = 1


def die_with_parent():
    """A ``preexec_fn`` giving the launched root ``PR_SET_PDEATHSIG`` = SIGKILL, or None.

    Only the root gets it (the kernel clears it on fork); the guardian covers the rest of
    the tree. libc is loaded here, in the parent: the child between fork and exec should do
    as little as possible.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = _libc()
    if libc is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the probe died before prctl took effect
            os._exit(1)

    return preexec


def restore_subreaper(previous: int | None) -> None:
    if previous is None or previous == 1:
        return
    libc = _libc()
    if libc is not None:
        libc.prctl(PR_SET_CHILD_SUBREAPER, previous, 0, 0, 0)


def _signal(row, sig: int) -> None:
    # Check identity first: never signal a pid that now belongs to another process.
    try:
        if procfs.read_stat(row.pid).create_time != row.create_time:
            return
        os.kill(row.pid, sig)
    except (procfs.Gone, procfs.Denied, ProcessLookupError, PermissionError):
        pass


def reap_orphans(census: Census, root: subprocess.Popen | None) -> None:
    """Collect the exit status of tree processes re-parented to us, so no zombie stays."""
    for row in list(census.live.values()):
        if row.status != "zombie" or row.ppid != census.probe_pid:
            continue
        if root is not None and row.pid == root.pid:
            root.poll()  # Popen owns the root's status
            continue
        try:
            os.waitpid(row.pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _wait(census: Census, root, until, limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        if root is not None:
            root.poll()
        census.refresh()
        reap_orphans(census, root)
        if until() or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def end_tree(census: Census, root: subprocess.Popen | None, *, int_grace: float = 3.0,
             term_grace: float = 2.0, kill_grace: float = 5.0) -> list[str]:
    """SIGINT to the group, then SIGTERM, then SIGKILL to every process still in the tree.

    Returns notes on anything that survived (normally empty).
    """
    def running():
        return [r for r in census.live.values() if r.alive]

    census.refresh()
    root_pid = census.root_pid
    if root_pid is not None and running():
        try:
            os.killpg(root_pid, signal.SIGINT)  # the target runs in its own session: group = its pid
        except (ProcessLookupError, PermissionError):
            pass
        # Only the group got SIGINT: wait for it, not for members that left the group.
        _wait(census, root, lambda: not any(_in_group(r, root_pid) for r in running()), int_grace)
    if running():
        for row in running():
            _signal(row, signal.SIGTERM)
        _wait(census, root, lambda: not running(), term_grace)
    _kill_all(census, root, running, kill_grace)
    if root is not None:
        try:
            root.wait(timeout=kill_grace)
        except subprocess.TimeoutExpired:
            pass
    # Last: collect the exit status of zombies re-parented to us, so none is left behind. A
    # daemon forked by a process in its last moments is re-parented to us only now (seen on a
    # loaded box: a setsid daemon outlived the run): whatever appears is killed too.
    _wait(census, root, lambda: not census.live, 1.0)
    if running():
        _kill_all(census, root, running, kill_grace)
        _wait(census, root, lambda: not census.live, 1.0)
    return [f"process {r.pid} ({r.name}) survived SIGKILL (status {r.status})" for r in running()]


def _kill_all(census: Census, root, running, limit: float) -> None:
    """SIGKILL every running process of the tree, again for anything forked or re-parented to
    us meanwhile, until none runs or LIMIT seconds pass."""
    deadline = time.monotonic() + limit
    while running() and time.monotonic() < deadline:
        for row in running():
            _signal(row, signal.SIGKILL)
        _wait(census, root, lambda: not running(), min(0.5, max(deadline - time.monotonic(), 0.0)))


def _in_group(row, pgrp: int) -> bool:
    try:
        return procfs.read_stat(row.pid).pgrp == pgrp
    except (procfs.Gone, procfs.Denied):
        return False

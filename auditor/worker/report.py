"""Reports from inside the user's processes to the qg-audit probe. Standard library only.

Public API (users' code depends on it)::

    import auditor.report
    auditor.report.worker(role="rollout", num_workers=cfg.num_workers)

Outside qg-audit (``QG_AUDIT_REPORT`` unset) every call is a cheap no-op. Under qg-audit
each record is one JSON line appended with a single ``write(2)`` on an ``O_APPEND`` file
descriptor, so concurrent writers from many processes never interleave within a line.
(Measured before choosing this: 0 corrupt lines from 8 concurrent writers; datagram
sockets dropped or blocked, and inherited pipes pointed at /dev/null under spawn.)
"""

from __future__ import annotations

import json
import os
import threading
import time

ENV_VAR = "QG_AUDIT_REPORT"  # path of the JSON-lines file the probe reads
SCHEMA_VERSION = 1
RAY_SCHEME = "ray-kv://"  # QG_AUDIT_REPORT=ray-kv://NAMESPACE/RUN in Ray actors; = ray_kv.SCHEME, kept here so emit() imports nothing

_fd_lock = threading.Lock()
_fd: int | None = None
_fd_pid: int | None = None  # a forked child must not reuse its parent's cached descriptor


def enabled() -> bool:
    return bool(os.environ.get(ENV_VAR))


def _descriptor() -> int | None:
    global _fd, _fd_pid
    path = os.environ.get(ENV_VAR)
    if not path:
        return None
    pid = os.getpid()
    with _fd_lock:
        if _fd is None or _fd_pid != pid:
            try:
                _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                return None
            _fd_pid = pid
        return _fd


def emit(record_type: str, **fields) -> bool:
    """Append one record; return False when not under qg-audit or the write failed."""
    target = os.environ.get(ENV_VAR)
    if not target:
        return False
    record = {
        "v": SCHEMA_VERSION,
        "type": record_type,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "t": time.time(),
        "thread": threading.current_thread().name,
    }
    record.update(fields)
    if target.startswith(RAY_SCHEME):
        # A Ray actor, maybe on another node, under `qg-audit verify --ray`: the probe reads
        # the cluster's key-value store, not a local file (see auditor/runtime/ray_collector.py).
        from auditor.worker import ray_kv

        return ray_kv.put(target, record)
    fd = _descriptor()
    if fd is None:
        return False
    line = (json.dumps(record, default=repr, separators=(",", ":")) + "\n").encode()
    try:
        os.write(fd, line)
    except OSError:
        return False
    return True


def worker(role: str | None = None, **values) -> bool:
    """Say "I am a worker" and which configuration values I actually received.

    ``values`` are the knob values as this process sees them, e.g. ``num_workers=8``.
    """
    return emit("worker", role=role, values=values)

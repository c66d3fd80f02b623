"""Cheap reads of one process's state: /proc/PID/stat on Linux, psutil elsewhere.

One ``/proc/PID/stat`` read gives parent, state, thread count, start time and RSS, which
is all the census needs per poll; psutil would read two or three files for the same.
Start times are converted to epoch seconds exactly as psutil does (boot time + ticks /
CLK_TCK), so ``(pid, create_time)`` identities match psutil's ``create_time()``.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

LINUX = sys.platform.startswith("linux") and os.path.isdir("/proc/self")

try:
    _CLK_TCK = os.sysconf("SC_CLK_TCK")
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # not POSIX
    _CLK_TCK, _PAGE = 100, 4096

_boot_time: float | None = None


def boot_time() -> float:
    global _boot_time
    if _boot_time is None:
        import psutil

        _boot_time = psutil.boot_time()
    return _boot_time


class Stat(NamedTuple):  # a tuple: built ~1,000 times a poll on a big tree, twice as fast as a dataclass
    pid: int
    ppid: int
    name: str  # comm: at most 15 characters; a thread-name change of the main thread shows here
    state: str  # one letter: R S D Z T ...
    pgrp: int
    threads: int
    create_time: float  # epoch seconds
    rss_bytes: int
    cpu_s: float = 0.0  # user + system CPU time so far, all threads


class Gone(Exception):
    """The process no longer exists (or its pid now belongs to another process)."""


class Denied(Exception):
    """The process exists but may not be read."""


def list_pids() -> set[int]:
    if LINUX:
        return set(map(int, filter(str.isdigit, os.listdir("/proc"))))  # map/filter: no Python-level loop
    import psutil

    return set(psutil.pids())


def read_stat(pid: int) -> Stat:
    if not LINUX:
        return _psutil_stat(pid)
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)  # os.open: a third of open()'s cost
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
    except (FileNotFoundError, ProcessLookupError):
        raise Gone(pid) from None
    except PermissionError:
        raise Denied(pid) from None
    # comm is in parentheses and may itself contain ')' or spaces: split at the last ')'.
    rpar = data.rfind(b")")
    if rpar < 0:
        raise Gone(pid)
    f = data[rpar + 2 :].split(None, 22)
    # fields after comm, 0-based: 0 state, 1 ppid, 2 pgrp, 11 utime, 12 stime, 17 num_threads,
    # 19 starttime, 21 rss (pages)
    return Stat(pid, int(f[1]), data[data.find(b"(") + 1 : rpar].decode("utf-8", "replace"), f[0].decode(),
                int(f[2]), int(f[17]), round((_boot_time or boot_time()) + int(f[19]) / _CLK_TCK, 2),
                int(f[21]) * _PAGE, (int(f[11]) + int(f[12])) / _CLK_TCK)


def read_cmdline(pid: int) -> list[str]:
    if not LINUX:
        import psutil

        try:
            return psutil.Process(pid).cmdline()
        except psutil.NoSuchProcess:
            raise Gone(pid) from None
        except psutil.AccessDenied:
            raise Denied(pid) from None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        raise Gone(pid) from None
    except PermissionError:
        raise Denied(pid) from None
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    if len(parts) == 1 and b" " in parts[0]:
        # setproctitle (Ray, gunicorn) rewrites argv as one space-joined string
        parts = parts[0].split(b" ")
        while parts and parts[-1] == b"":
            parts.pop()
    return [p.decode("utf-8", "replace") for p in parts]


def read_environ(pid: int, names) -> dict[str, str]:
    """The variables NAMES from the environment PID started with (empty when unreadable)."""
    wanted = {n.encode() for n in names}
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return {}
    found = {}
    for item in data.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key in wanted:
            found[key.decode()] = value.decode("utf-8", "replace")
    return found


def cpu_limit(pid: int | None = None) -> dict:
    """The CPUs a process may use: its affinity and its cgroup's CPU quota, and where each was read.

    Returns {"cpus": float | None, "affinity": int | None, "quota": float | None, "from": [str]}.
    """
    out: dict = {"cpus": None, "affinity": None, "quota": None, "from": []}
    try:
        n = len(os.sched_getaffinity(pid or 0))
        out["affinity"] = n
        out["from"].append(f"sched_getaffinity({pid or 'self'}): {n} CPU{'s' if n != 1 else ''}")
    except (AttributeError, OSError):
        pass
    quota, where = _cgroup_quota(pid)
    if quota is not None:
        out["quota"] = quota
        out["from"].append(f"{where}: {quota:g} CPUs")
    elif where:
        out["from"].append(f"{where}: no CPU quota")
    limits = [x for x in (out["affinity"], quota) if x is not None]
    out["cpus"] = min(limits) if limits else None
    return out


def _cgroup_quota(pid: int | None) -> tuple[float | None, str]:
    """The tightest CPU quota (cgroup v2 cpu.max, v1 cfs_quota_us) on the process's cgroup path."""
    try:
        with open(f"/proc/{pid or 'self'}/cgroup", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None, ""
    best: tuple[float | None, str] = (None, "")
    seen = ""
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        v2 = parts[0] == "0" and parts[1] == ""
        if not v2 and "cpu" not in parts[1].split(","):
            continue
        base = "/sys/fs/cgroup" if v2 else f"/sys/fs/cgroup/{parts[1]}"
        rel = parts[2].strip("/")
        while True:
            directory = os.path.join(base, rel) if rel else base
            quota = _read_quota(directory, v2)
            if not seen and os.path.exists(os.path.join(directory, "cpu.max" if v2 else "cpu.cfs_quota_us")):
                seen = os.path.join(directory, "cpu.max" if v2 else "cpu.cfs_quota_us")
            if quota is not None and (best[0] is None or quota < best[0]):
                best = (quota, os.path.join(directory, "cpu.max" if v2 else "cpu.cfs_quota_us"))
            if not rel:
                break
            rel = os.path.dirname(rel)
    return best if best[0] is not None else (None, seen)


def _read_quota(directory: str, v2: bool) -> float | None:
    try:
        if v2:
            with open(os.path.join(directory, "cpu.max"), encoding="utf-8") as f:
                quota, period = (f.read().split() + ["100000"])[:2]
        else:
            with open(os.path.join(directory, "cpu.cfs_quota_us"), encoding="utf-8") as f:
                quota = f.read().strip()
            with open(os.path.join(directory, "cpu.cfs_period_us"), encoding="utf-8") as f:
                period = f.read().strip()
        if quota in ("max", "-1") or int(period) <= 0:
            return None
        return int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _psutil_stat(pid: int) -> Stat:
    import psutil

    try:
        p = psutil.Process(pid)
        with p.oneshot():
            status = p.status()
            return Stat(
                pid=pid,
                ppid=p.ppid(),
                name=p.name(),
                state="Z" if status == psutil.STATUS_ZOMBIE else "R",
                pgrp=os.getpgid(pid),
                threads=p.num_threads(),
                create_time=round(p.create_time(), 2),
                rss_bytes=p.memory_info().rss,
                cpu_s=sum(p.cpu_times()[:2]),
            )
    except psutil.NoSuchProcess:
        raise Gone(pid) from None
    except psutil.AccessDenied:
        raise Denied(pid) from None

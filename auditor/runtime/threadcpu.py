"""Per-thread CPU over the steady window, from /proc/PID/task/TID/{stat,schedstat}.

Oversubscription is judged from what the threads did, not from the thread settings they
inherited: a worker that imported torch has two intra-op threads that never run when it
only steps an environment. For every thread of the tree this keeps its first reading in
the steady window and its last one; the difference gives

* ``cores``: CPU time / wall time (user + system, ``stat`` fields 14-15);
* ``runnable``: (time on a CPU + time waiting on a run queue) / wall time, from
  ``schedstat`` (nanoseconds). It is the share of the window the thread *wanted* a CPU, which
  does not shrink when other work on the machine takes the CPU from it, as ``cores`` does.
  Without ``schedstat`` (a kernel without CONFIG_SCHED_INFO) ``cores`` stands in for it.

A thread is busy when ``runnable`` >= BUSY. Readings are taken every THREAD_EVERY seconds
and at the end of the window, at most READ_BUDGET threads a reading (the target and ranks
first, then workers, then the rest, so a 1,000-process tree costs no more than a small one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from auditor.runtime import procfs

BUSY = 0.5  # runnable at least half of the window: a thread that competes for a CPU
THREAD_EVERY = 1.0  # seconds between readings (~1-2 ms of CPU for 100 threads)
READ_BUDGET = 400  # threads read per reading
MIN_SPAN = 1.0  # a thread seen in the window for less than this is not judged
THREAD_ROWS = 12  # per process, the busiest threads listed one by one


@dataclass
class _Reading:
    t: float
    cpu_s: float
    sched_ns: float | None  # run + wait on the run queue, nanoseconds; None without schedstat


def read_threads(pid: int) -> list[tuple[int, str, float, float | None]]:
    """(tid, name, cpu_s, run+wait ns) of each thread of PID; [] when gone or unreadable."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out = []
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}/"
        try:
            with open(base + "stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rpar = data.rfind(b")")
        fields = data[rpar + 2:].split()
        if rpar < 0 or len(fields) < 13:
            continue
        name = data[data.find(b"(") + 1:rpar].decode("utf-8", "replace")
        cpu = (int(fields[11]) + int(fields[12])) / procfs._CLK_TCK
        sched = None
        try:
            with open(base + "schedstat", "rb") as f:
                run, wait = f.read().split()[:2]
            sched = float(int(run) + int(wait))
        except (OSError, ValueError):
            pass
        out.append((int(tid), name, cpu, sched))
    return out


class ThreadMeter:
    """First and last reading of every thread of the tree in the steady window."""

    def __init__(self) -> None:
        self.first: dict[tuple, _Reading] = {}  # (pid, create_time, tid) -> reading
        self.last: dict[tuple, _Reading] = {}
        self.names: dict[tuple, str] = {}
        self.next_t = 0.0
        self.capped = False  # some threads were left out of a reading (the budget)

    def due(self, t: float) -> bool:
        return t >= self.next_t

    def read(self, t: float, rows) -> None:
        """One reading of the alive members ``rows`` (ProcessRow), within the budget."""
        self.next_t = t + THREAD_EVERY
        order = {"target": 0, "worker": 1}
        budget = READ_BUDGET
        for row in sorted((r for r in rows if r.alive),
                          key=lambda r: (0 if r.rank_of == r.pid else 1 + order.get(r.role, 2))):
            if budget <= 0:
                self.capped = True
                break
            threads = read_threads(row.pid)
            budget -= len(threads)
            for tid, name, cpu, sched in threads:
                key = (row.pid, row.create_time, tid)
                reading = _Reading(t, cpu, sched)
                self.first.setdefault(key, reading)
                self.last[key] = reading
                self.names[key] = name

    def summary(self, rows, cpus: float | None) -> dict:
        """Per process: its threads' cores and runnable shares; the busy threads of the job.

        Returns {"busy_threads", "cores", "cpus", "schedstat", "capped", "processes": [{pid,
        role, backend, threads, busy, cores, runnable, span_s, thread_rows: [{tid, name,
        runnable, cores}]}]}, processes with a thread judged over at least MIN_SPAN only, the
        busiest first; thread_rows holds the THREAD_ROWS busiest threads."""
        by_proc: dict[tuple, list] = {}
        schedstat = True
        for key, a in self.first.items():
            b = self.last[key]
            span = b.t - a.t
            if span < MIN_SPAN:
                continue
            cores = max(0.0, (b.cpu_s - a.cpu_s) / span)
            if a.sched_ns is not None and b.sched_ns is not None:
                runnable = min(1.0, max(0.0, (b.sched_ns - a.sched_ns) / 1e9 / span))
            else:
                schedstat, runnable = False, min(1.0, cores)
            by_proc.setdefault(key[:2], []).append((runnable, cores, span, key[2], self.names.get(key, "")))
        rows_by_key = {r.key: r for r in rows}
        procs = []
        for key, threads in by_proc.items():
            row = rows_by_key.get(key)
            busy = [t for t in threads if t[0] >= BUSY]
            procs.append({
                "pid": key[0], "role": row.role if row else "other", "backend": row.backend if row else "",
                "rank": bool(row is not None and row.rank_of == row.pid),
                "threads": len(threads), "busy": len(busy),
                "cores": round(sum(t[1] for t in threads), 3),
                "runnable": round(max((t[0] for t in threads), default=0.0), 3),
                "busy_runnable": round(sum(t[0] for t in busy) / len(busy), 3) if busy else None,
                "span_s": round(max(t[2] for t in threads), 2),
                # the busiest threads one by one (profile names the sampling thread and its contenders)
                "thread_rows": [{"tid": t[3], "name": t[4], "runnable": round(t[0], 3), "cores": round(t[1], 3)}
                                for t in sorted(threads, key=lambda t: -t[0])[:THREAD_ROWS]],
            })
        procs.sort(key=lambda p: (-p["busy"], -p["cores"]))
        return {"busy_threads": sum(p["busy"] for p in procs), "cores": round(sum(p["cores"] for p in procs), 3),
                "cpus": cpus, "schedstat": schedstat, "capped": self.capped, "busy_share": BUSY,
                "processes": procs}

"""Incremental census of one target's process tree.

psutil's ``children(recursive=True)`` reads every process on the machine at every poll.
This census lists /proc (names only), reads ``/proc/PID/stat`` once for each pid it has
not seen before to learn its parent, and then reads only the tree's own members. A pid
that vanished and came back between two listings, or whose start time changed, is a new
process: identity is (pid, create_time), never pid alone.

A process belongs to the tree when its parent is a member, or when it was re-parented to
the probe (a child subreaper) after the launch: that is how ``setsid`` daemons and
orphans of dead workers stay in view.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from auditor.runtime import procfs
from auditor.runtime.classify import catalogue, match_rule, rule_by_id

YOUNG_S = 1.0  # re-read the command line of processes this young: spawn children exec soon after fork
# Members whose /proc/PID/stat is read per poll (beyond the young ones, read at every poll). A
# read costs ~9 us of CPU, and 1,000 of them every poll would take 2% of a core at 0.5 s (budget
# 1%): a bigger tree is read in turns, each member about every ceil(members / READ_BUDGET)
# polls. Presence still comes from the /proc listing at every poll.
READ_BUDGET = 100


@dataclass
class ProcessRow:
    """One observed process; identity is (pid, create_time), never pid alone."""

    pid: int
    create_time: float
    ppid: int
    name: str
    cmdline: list[str]
    role: str  # "target" | "worker" | "helper" | "other"
    threads: int
    threads_peak: int
    rss_bytes: int
    rss_peak: int
    first_seen: float  # seconds since the launch
    last_seen: float
    status: str  # running / zombie / gone / access-denied
    backend: str = ""  # what classified it: "multiprocessing (spawn)", "torch DataLoader", "report" ...
    rule: str | None = None  # the rules/workers.yaml rule id, when one matched
    rank_of: int | None = None  # pid of the rank this process belongs to (its own pid for a rank)
    dist: dict = field(default_factory=dict)  # a rank's view: rank, local_rank, world_size, local_world_size
    cpu_s: float = 0.0  # CPU time used so far (user + system, all threads)
    cpu_mark: float | None = None  # CPU time and census time at its first reading in the steady window
    t_mark: float | None = None
    t_cpu: float | None = None  # census time of the last reading of cpu_s

    @property
    def cpu_share(self) -> float | None:
        """Average cores used in the steady window; None when seen there for under a second."""
        if self.t_mark is None or self.t_cpu is None or self.t_cpu - self.t_mark < 1.0:
            return None
        return (self.cpu_s - self.cpu_mark) / (self.t_cpu - self.t_mark)

    @property
    def key(self) -> tuple[int, float]:
        return (self.pid, self.create_time)

    @property
    def alive(self) -> bool:
        return self.status in ("running", "access-denied")

    def to_json(self) -> dict:
        extra = {}
        if self.rank_of is not None:
            extra["rank_of"] = self.rank_of
        if self.dist:
            extra["dist"] = self.dist
        share = self.cpu_share
        return {**{
            "pid": self.pid, "create_time": self.create_time, "ppid": self.ppid, "name": self.name,
            "cmdline": self.cmdline, "role": self.role, "backend": self.backend,
            "threads": self.threads, "threads_peak": self.threads_peak,
            "rss_bytes": self.rss_bytes, "rss_peak": self.rss_peak,
            "first_seen": round(self.first_seen, 3), "last_seen": round(self.last_seen, 3),
            "status": self.status, "cpu_s": round(self.cpu_s, 2),
            "cpu_share": round(share, 3) if share is not None else None,
        }, **extra}


@dataclass
class Census:
    probe_pid: int = field(default_factory=os.getpid)
    match: re.Pattern | None = None
    mark: float = 0.0  # start of the steady window (seconds after launch): CPU shares are measured from here
    rows: dict[tuple[int, float], ProcessRow] = field(default_factory=dict)
    live: dict[int, ProcessRow] = field(default_factory=dict)  # members now present (incl. zombies)
    reported: dict[int, str] = field(default_factory=dict)  # pid -> backend, from worker reports
    root_pid: int | None = None
    t0: float = field(default_factory=time.monotonic)
    launch_time: float = field(default_factory=time.time)
    peak_processes: int = 0
    peak_workers: int = 0
    peak_threads: int = 0
    peak_rss_bytes: int = 0
    affinity: int | None = None  # CPUs the target may run on, read at each poll while it lives

    def __post_init__(self) -> None:
        self._known: set[int] = set()
        self._foreign: set[int] = set()  # the probe's own children from before the launch
        # big trees (over READ_BUDGET members): read in turns, the young and the odd at every poll
        self._polls = 0
        self._order: list[int] = []  # members in adoption order; the turn is a slice of it
        self._young: list[int] = []
        self._odd: set[int] = set()

    # -- lifecycle -------------------------------------------------------------------

    def prime(self) -> None:
        """List the processes that exist before the launch, so the first poll sees only new ones."""
        self._known = procfs.list_pids()
        self._foreign = {pid for pid in self._known if _ppid_or_none(pid) == self.probe_pid}
        self.t0 = time.monotonic()
        self.launch_time = time.time()

    def adopt_root(self, pid: int) -> None:
        self.root_pid = pid
        try:
            st = procfs.read_stat(pid)
        except (procfs.Gone, procfs.Denied):
            return
        self._adopt(st)

    def poll(self) -> dict:
        """Update the tree and return one sample: {t, processes, workers, threads, rss}."""
        self.refresh()
        processes = workers = ranks = threads = rss = 0
        for r in self.live.values():  # one pass: this runs at every poll over every member
            if not r.alive:
                continue
            processes += 1
            threads += r.threads
            rss += r.rss_bytes
            if r.role == "worker" and self._counts_as_worker(r):
                workers += 1
                ranks += r.rank_of == r.pid
        sample = {"t": round(self.now(), 3), "processes": processes, "workers": workers, "ranks": ranks,
                  "threads": threads, "rss": rss}
        self.peak_processes = max(self.peak_processes, sample["processes"])
        self.peak_workers = max(self.peak_workers, sample["workers"])
        self.peak_threads = max(self.peak_threads, sample["threads"])
        self.peak_rss_bytes = max(self.peak_rss_bytes, sample["rss"])
        root = self.live.get(self.root_pid)
        if root is not None and root.alive:
            try:
                self.affinity = len(os.sched_getaffinity(root.pid))  # taskset applies it after our launch
            except (AttributeError, OSError):
                pass
        return sample

    def refresh(self) -> None:
        """Find new members and update the known ones, without taking a sample."""
        listing = procfs.list_pids()
        new = listing - self._known
        self._known = listing
        now = self.now()
        for pid in self.live.keys() - listing:  # a set difference: no Python loop over a big tree
            self._gone(self.live[pid])
        if len(self.live) <= READ_BUDGET:
            due = list(self.live)
        else:
            due = self._due(now)
            for row in self.live.values():
                row.last_seen = now  # still listed; its stat may wait for its turn
        # Update members first: a member whose pid now names another process is gone.
        for pid in due:
            row = self.live.get(pid)
            if row is None:
                continue
            try:
                st = procfs.read_stat(pid)
            except procfs.Gone:
                self._gone(row)
                continue
            except procfs.Denied:
                row.status, row.last_seen = "access-denied", now
                self._odd.add(pid)
                continue
            if st.create_time != row.create_time:
                self._gone(row)
                new.add(pid)
                continue
            self._update(row, st, now)
        self._adopt_new(new)

    def _due(self, now: float) -> set[int]:
        """A big tree's members read this poll: the young, the odd (zombie, denied), and one turn."""
        turns = -(-len(self.live) // READ_BUDGET)
        self._polls += 1
        if len(self._order) > 2 * len(self.live):
            self._order = [pid for pid in self._order if pid in self.live]
        due = set(self._order[self._polls % turns::turns])
        cutoff = now - YOUNG_S
        self._young = [pid for pid in self._young if pid in self.live and self.live[pid].first_seen >= cutoff]
        due.update(self._young)
        self._odd &= self.live.keys()
        due.update(self._odd)
        return due

    def note_report(self, pid: int, backend: str) -> None:
        """A worker report came from PID: it is a worker even if no rule says so."""
        if pid in self.reported:
            return
        self.reported[pid] = backend
        row = self.live.get(pid)
        if row is not None:
            self._classify(row)

    def _counts_as_worker(self, row: ProcessRow) -> bool:
        # A fork child is told only by its copied command line, which any fork+exec child
        # (subprocess, spawn) also shows for an instant before exec: count it from its second
        # poll, or at once when it has reported.
        return row.role == "worker" and (row.rule != "mp-fork" or row.last_seen > row.first_seen
                                         or row.pid in self.reported)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def members(self) -> list[ProcessRow]:
        return list(self.rows.values())

    # -- internals ---------------------------------------------------------------------

    def _adopt_new(self, new: set[int]) -> None:
        stats = {}
        for pid in new:
            try:
                stats[pid] = procfs.read_stat(pid)
            except (procfs.Gone, procfs.Denied):
                continue
        # A new process may be the child of another new one: repeat until nothing changes.
        changed = True
        while changed and stats:
            changed = False
            for pid, st in list(stats.items()):
                if self._belongs(st):
                    self._adopt(st)
                    del stats[pid]
                    changed = True

    def _belongs(self, st: procfs.Stat) -> bool:
        parent = self.live.get(st.ppid)
        if parent is not None and parent.alive:
            return True
        # re-parented to us (child subreaper): orphans and setsid daemons of the target
        return (st.ppid == self.probe_pid and st.pid not in self._foreign
                and st.create_time >= self.launch_time - 1.0)

    def _adopt(self, st: procfs.Stat) -> None:
        now = self.now()
        try:
            cmdline = procfs.read_cmdline(st.pid)
        except (procfs.Gone, procfs.Denied):
            cmdline = []
        row = ProcessRow(
            pid=st.pid, create_time=st.create_time, ppid=st.ppid, name=st.name, cmdline=cmdline,
            role="other", threads=st.threads, threads_peak=st.threads, rss_bytes=st.rss_bytes,
            rss_peak=st.rss_bytes, first_seen=now, last_seen=now,
            status="zombie" if st.state == "Z" else "running", cpu_s=st.cpu_s, t_cpu=now,
        )
        if now >= self.mark:
            row.cpu_mark, row.t_mark = st.cpu_s, now
        self.rows[row.key] = row
        self.live[row.pid] = row
        self._order.append(row.pid)
        self._young.append(row.pid)
        if row.status != "running":
            self._odd.add(row.pid)
        self._classify(row)

    def _update(self, row: ProcessRow, st: procfs.Stat, now: float) -> None:
        row.last_seen = now
        row.ppid = st.ppid
        row.status = "zombie" if st.state == "Z" else "running"
        if row.status == "zombie":
            self._odd.add(row.pid)
            return
        self._odd.discard(row.pid)
        row.threads, row.rss_bytes, row.cpu_s, row.t_cpu = st.threads, st.rss_bytes, st.cpu_s, now
        if row.t_mark is None and now >= self.mark:
            row.cpu_mark, row.t_mark = st.cpu_s, now
        row.threads_peak = max(row.threads_peak, st.threads)
        row.rss_peak = max(row.rss_peak, st.rss_bytes)
        changed = st.name != row.name
        if changed or now - row.first_seen < YOUNG_S:
            try:
                cmdline = procfs.read_cmdline(row.pid)
            except (procfs.Gone, procfs.Denied):
                cmdline = row.cmdline
            changed = changed or (cmdline != row.cmdline and bool(cmdline))
            row.name, row.cmdline = st.name, cmdline or row.cmdline
        if changed:
            self._classify(row)

    def _gone(self, row: ProcessRow) -> None:
        row.status = "gone"
        self.live.pop(row.pid, None)

    def _classify(self, row: ProcessRow) -> None:
        parent = self.live.get(row.ppid)
        rule = match_rule(row.name, row.cmdline, parent.rule if parent else None,
                          parent.cmdline if parent else None)
        if row.pid == self.root_pid:
            # the target itself; when it is a launcher (torchrun ...) its children are ranks
            launcher = rule is not None and rule.launcher is not None
            row.role, row.backend = "target", rule.backend if launcher else ""
            row.rule = rule.id if launcher else None
            return
        row.rule = rule.id if rule else None
        row.rank_of = parent.rank_of if parent else None
        if rule is not None and rule.rank:
            launcher = rule_by_id(parent.rule) if parent else None
            row.role, row.backend, row.rank_of = "worker", f"{launcher.launcher if launcher else ''} rank".strip(), row.pid
            if not row.dist:
                row.dist = rank_view(procfs.read_environ(row.pid, _rank_env_names()))
            return
        if rule is not None and rule.role == "helper":
            row.role, row.backend = "helper", rule.backend
        elif row.pid in self.reported:
            row.role = "worker"
            row.backend = rule.backend if rule else self.reported[row.pid]
        elif rule is not None:
            row.role, row.backend = rule.role, rule.backend
        else:
            row.role, row.backend = "other", ""
        if self.match is not None and row.role in ("worker", "other"):
            text = row.name + " " + " ".join(row.cmdline)
            if self.match.search(text):
                row.role, row.backend = "worker", row.backend or "--match"
            else:
                row.role = "other"


def _rank_env_names() -> list[str]:
    return [name for names in catalogue().rank_env.values() for name in names]


def rank_view(env: dict) -> dict:
    """{rank, local_rank, world_size, local_world_size} from a rank's environment variables."""
    view = {}
    for field_name, names in catalogue().rank_env.items():
        for name in names:
            value = env.get(name)
            if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
                view[field_name] = int(value)
                break
    return view


def _ppid_or_none(pid: int) -> int | None:
    try:
        return procfs.read_stat(pid).ppid
    except (procfs.Gone, procfs.Denied):
        return None

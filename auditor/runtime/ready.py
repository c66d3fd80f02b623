"""When is a launched job ready to be measured? Shared by verify, profile and diagnose.

A real training job spends 10-40 s importing torch and building its environments before
its first sample; a window that counts from the launch judges that start-up. ``run_target``
takes a ``Readiness``: the steady window and ``duration`` start when it says the job is
ready, ``timeout`` bounds the wait, and ``status()`` says what it is still waiting for
("waiting for 4 workers: 12 s, 4 workers importing"), for a live line on stderr.

The job is ready at the first poll where all of these hold:

1. something it measures happened: ``workers`` workers (ranks under a launcher) in the
   census, or any worker report, pool report (a serial backend counts: the choice is made),
   rank report or torch thread report; or a report that ``reports`` accepts (profile: the
   first env step or phase record);
2. no worker is importing: every worker of a kind that always reports (spawn / forkserver
   children, DataLoader workers: rules/workers.yaml ``reports: true``) has reported, when the
   hook runs in the target;
3. settled: with fewer than ``workers`` counted (or no count expected), the worker count and
   the reports of condition 1 have not changed for ``settle`` seconds; with ``workers``
   reached, at once.

A ``reports`` predicate makes condition 1 that predicate only, and skips condition 3 (the
records it accepts, timing batches say, keep coming).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from auditor.runtime.classify import library_pool, rule_by_id

DEFAULT_READY_TIMEOUT = 120.0  # seconds; a torch + gymnasium job on a loaded 2-core machine needs 20-60
SETTLE_S = 2.0


@dataclass
class ReadyState:
    """What became of the wait, recorded in RunResult.ready."""

    at: float | None = None  # seconds after the launch; None: never ready
    why: str = ""  # what made it ready ("4 workers reported"), or "" when never
    status: str = ""  # the last "waiting for ..." line, kept for a run that ended before it was ready
    timeout: float | None = None  # the bound on the wait, seconds
    timed_out: bool = False  # the wait reached ``timeout``: run_target ended the target
    waited: float = 0.0  # seconds spent waiting (== at when ready)

    def to_json(self) -> dict:
        return {"at": self.at, "why": self.why or None, "status": self.status or None,
                "timeout_s": self.timeout, "timed_out": self.timed_out, "waited_s": round(self.waited, 3)}


@dataclass
class Readiness:
    """Decides poll by poll when the job is ready; see the module docstring.

    ``workers``: the count the command expects (ranks under a launcher), or None.
    ``reports``: a predicate on report records that makes the job ready (with the conditions
    2 and 3), e.g. ``lambda r: r.get("type") == "timing"`` for profile's first step.
    ``what``: how the status line names the wait ("4 workers", "the first env step").
    """

    workers: int | None = None
    reports: Callable[[dict], bool] | None = None
    what: str = ""
    settle: float = SETTLE_S
    timeout: float | None = DEFAULT_READY_TIMEOUT
    state: ReadyState = field(default_factory=ReadyState)

    def __post_init__(self) -> None:
        self.state.timeout = self.timeout
        if not self.what:
            self.what = (f"{self.workers} worker{'s' if self.workers != 1 else ''}" if self.workers is not None
                         else "the job to start")
        self._seen = 0  # report records looked at so far
        self._activity = 0  # of them, those that count for condition 1
        self._event: str = ""
        self._event_t: float | None = None  # when condition 1 first held  # the first thing that happened (condition 1)
        self._shape: tuple | None = None  # (counted, present, reports) at the last change
        self._since = 0.0  # when that shape was first seen

    @property
    def ready(self) -> bool:
        return self.state.at is not None

    def observe(self, t: float, sample: dict, census, records: list[dict]) -> bool:
        """One poll: ``sample`` from Census.poll(), every report so far. True once ready."""
        if self.ready:
            return True
        for rec in records[self._seen:]:
            if self._counts(rec):
                self._activity += 1
                self._event = self._event or _describe(rec)
        if self._event and self._event_t is None:
            self._event_t = t
        self._seen = len(records)
        counted = sample.get("ranks") or sample.get("workers", 0)
        present = sum(1 for r in census.live.values() if r.alive and r.role == "worker")
        importing = self._importing(census, records)
        shape = (counted, present, self._activity)
        if shape != self._shape:
            self._shape, self._since = shape, t
        reached = self.workers is not None and counted >= self.workers
        if reached and self.reports is None and not self._event:
            self._event = f"{counted} {'ranks' if sample.get('ranks') else 'workers'} running"
            self._event_t = t
        self.state.status = self.status(t, present, importing)
        self.state.waited = t
        # a reports predicate (profile's first step) needs no settling: its records keep coming
        settled = reached or self.reports is not None or t - self._since >= self.settle
        if not self._event or importing or not settled:
            return False
        self.state.at, self.state.why = t, self._event
        return True

    def finish(self, t: float, records: list[dict]) -> None:
        """The target exited before it was ready. When what is measured happened (a pool that
        started and ended between two polls, ranks that finished before settling), the job
        counts as ready from when it happened; otherwise it stays not ready."""
        for rec in records[self._seen:]:
            if self._counts(rec):
                self._event = self._event or _describe(rec)
        self._seen = len(records)
        if self._event:
            at = self._event_t if self._event_t is not None else t
            self.state.at, self.state.why = at, f"{self._event}; the target exited {t - at:.1f} s later"

    def give_up(self, t: float) -> bool:
        """True when the wait reached the timeout (the caller ends the run)."""
        if self.ready or self.timeout is None or t < self.timeout:
            return False
        self.state.timed_out = True
        return True

    # -- internals --------------------------------------------------------------------

    def _counts(self, rec: dict) -> bool:
        """Condition 1: a record that shows the job set up what is measured."""
        if self.reports is not None:
            return bool(self.reports(rec))
        kind = rec.get("type")
        if kind == "threads":  # torch imported: the job's start when no worker is expected
            return self.workers is None
        if kind == "pool":  # a library's own pool (torch's, Ray's) is not the job's choice
            return bool(rec.get("serial")) or not library_pool(rec)
        return kind in ("worker", "rank")

    def _importing(self, census, records) -> int:
        """Workers of a kind that always reports (spawn, forkserver, DataLoader) not reported yet."""
        if not any(r.get("type") == "hook" for r in records):
            return 0  # the hook does not run in the target: nothing would report
        n = 0
        for row in census.live.values():
            if row.role != "worker" or not row.alive or row.pid in census.reported:
                continue
            rule = rule_by_id(row.rule)
            n += bool(rule is not None and rule.reports)
        return n

    def status(self, t: float, present: int = 0, importing: int = 0) -> str:
        parts = []
        if importing:
            ready = present - importing
            parts.append((f"{ready} of {self.workers} workers ready, " if ready and self.workers else "")
                         + f"{importing} worker{'s' if importing != 1 else ''} importing")
        elif present:
            parts.append(f"{present} worker{'s' if present != 1 else ''} running")
        else:
            parts.append("no worker yet")
        if self._event and not importing and self.reports is None:
            parts.append(f"settling after: {self._event}")
        return f"waiting for {self.what}: {t:.0f} s, {', '.join(parts)}"


def _describe(rec: dict) -> str:
    kind = rec.get("type")
    if kind == "worker":
        return f"a worker reported ({rec.get('backend') or 'report'})"
    if kind == "pool":
        what = "a serial backend was created" if rec.get("serial") else "a pool was created"
        return f"{what} ({rec.get('backend')}({rec.get('size')}))"
    if kind == "rank":
        return f"rank {rec.get('rank')} joined its process group"
    if kind == "threads":
        return "torch was imported" if rec.get("default") else "a thread count was set"
    if kind == "timing":
        return f"the first timed step (pid {rec.get('pid')}, {rec.get('timer')})"
    return f"a {kind} report"

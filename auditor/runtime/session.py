"""Launch a target, watch its process tree, read its reports, end it: the runtime library.

``run_target`` is shared by ``qg-audit verify``, ``profile``, ``sweep`` and ``diagnose``. It
never leaves an orphan: the tree is ended in a ``finally`` on every exit path, including an
exception or KeyboardInterrupt raised in the caller's ``on_sample`` / ``stop_when`` or while
waiting; SIGTERM and SIGHUP raise like Ctrl-C inside it (auditor.runtime.signals); the
guardian (auditor.runtime.guardian) ends the tree if the probe is SIGKILLed. The run's
temporary directory (the target's stdout, stderr and reports) goes in the same ``finally``.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable

from auditor.worker import report
from auditor.runtime import reaper
from auditor.runtime.census import Census, ProcessRow
from auditor.runtime.guardian import Guardian
from auditor.runtime.signals import terminating_signals

__all__ = ["ProcessRow", "RunResult", "run_target", "DEFAULT_INTERVAL", "HOOK_DIR"]

# Chosen from bench/bench_census.py on a loaded 2-core box: a 64-process tree costs 1.3-1.6 ms
# of CPU per census poll, and the whole probe loop ~0.9% of one core at 0.25 s. 0.5 s keeps it
# near 0.5% (budget: 1%) while still catching workers that live a second or more.
DEFAULT_INTERVAL = 0.5
HOOK_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker", "hook")
TAIL_BYTES = 4000
# A report line is a few hundred bytes; a SamplingTimer batch (256 steps) tens of KB. A line
# over this is dropped and counted, never copied into the probe's memory or its JSON.
MAX_REPORT_LINE = 1 << 20
# The report channel is the target's to write: what the probe keeps of it is bounded. Past
# MAX_REPORTS records or MAX_REPORT_BYTES of kept lines, lines are dropped and counted (a
# 1.3 KB record in memory per ~100-byte line: 1 M lines once cost 1.3 GB). At most
# READ_PER_POLL bytes are read per census poll, so a flood never starves the census or delays
# --timeout, and at most FINAL_READ bytes after the target ended; what is left is counted.
MAX_REPORTS = 100_000
MAX_REPORT_BYTES = 128 << 20
READ_PER_POLL = 8 << 20
FINAL_READ = 64 << 20


@dataclass
class RunResult:
    command: list[str]
    started: bool  # False when the command could not be started (exit 3)
    returncode: int | None  # None when we ended it ourselves (duration, timeout, stop_when)
    timed_out: bool
    duration_s: float
    stdout_tail: str
    stderr_tail: str
    reports: list[dict]  # every JSON record from QG_AUDIT_REPORT, in order
    processes: list[ProcessRow]  # every process ever seen in the tree
    peak_processes: int
    peak_workers: int
    peak_threads: int
    peak_rss_bytes: int  # tree totals
    samples: list[dict]  # census time series: {t, processes, workers, threads, rss}
    hook_active: bool | None  # did the sitecustomize hook load in the target? None: hook=False
    error: str | None
    notes: list[str] = field(default_factory=list)  # e.g. why the hook could not apply
    corrupt_reports: int = 0  # report lines that were not valid JSON
    dropped_reports: int = 0  # report lines over MAX_REPORT_LINE bytes, dropped unread
    over_cap_reports: int = 0  # report lines dropped past MAX_REPORTS / MAX_REPORT_BYTES
    unread_report_bytes: int = 0  # report bytes left unread when the run ended (past FINAL_READ)
    survivors: list[str] = field(default_factory=list)  # processes that outlived SIGKILL (should be none)
    cpu_limit: dict = field(default_factory=dict)  # procfs.cpu_limit() of the target: the CPUs it may use

    @property
    def workers(self) -> list[ProcessRow]:
        return [p for p in self.processes if p.role == "worker"]


class _ReportReader:
    """Reads the JSON-lines report file incrementally (only complete lines).

    The channel accepts only the regular file the probe created itself (O_EXCL, 0600) and
    reads it through its own descriptor with pread: a target that replaces the path with a
    FIFO, a device or a link to /dev/zero changes nothing the probe reads, and nothing it
    reads can block. Reads at most ``budget`` bytes a call; an oversized line (over
    MAX_REPORT_LINE) is skipped up to its newline and counted in ``dropped``; past the caps
    lines are counted in ``over_cap`` without being parsed."""

    def __init__(self, path: str):
        self.path, self.offset, self.records, self.corrupt, self.dropped = path, 0, [], 0, 0
        self.over_cap = 0
        self.kept_bytes = 0
        self._partial = b""
        self._skipping = False  # inside an oversized line: discard up to its newline
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def unread(self) -> int:
        try:
            return max(0, os.fstat(self.fd).st_size - self.offset) if self.fd >= 0 else 0
        except OSError:
            return 0

    def read(self, budget: int = READ_PER_POLL) -> list[dict]:
        new: list[dict] = []
        if self.fd < 0:
            return new
        try:
            size = os.fstat(self.fd).st_size
            if size < self.offset:  # truncated by the target: go on from its new end
                self.offset, self._partial, self._skipping = size, b"", False
            while budget > 0 and self.offset < size:
                data = os.pread(self.fd, min(budget, MAX_REPORT_LINE + 1, size - self.offset), self.offset)
                if not data:
                    break
                self.offset += len(data)
                budget -= len(data)
                self._take(data, new)
        except OSError:
            pass
        self.records.extend(new)
        return new

    def _full(self) -> bool:
        return len(self.records) >= MAX_REPORTS or self.kept_bytes >= MAX_REPORT_BYTES

    def _take(self, data: bytes, new: list[dict]) -> None:
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            data, self._skipping = data[end + 1:], False
        if self._full():  # past the caps: count the lines, parse none
            self.over_cap += data.count(b"\n")
            return
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # an incomplete last line waits for the next read
        if len(self._partial) > MAX_REPORT_LINE:
            self._partial, self._skipping = b"", True
            self.dropped += 1
        for at, line in enumerate(lines):
            if len(line) > MAX_REPORT_LINE:
                self.dropped += 1
                continue
            if not line.strip():
                continue
            if len(self.records) + len(new) >= MAX_REPORTS or self.kept_bytes >= MAX_REPORT_BYTES:
                self.over_cap += len(lines) - at
                return
            try:
                rec = json.loads(line)
            except ValueError:
                self.corrupt += 1
                continue
            if isinstance(rec, dict):
                new.append(rec)
                self.kept_bytes += len(line)
            else:
                self.corrupt += 1


def _tail(fd: int) -> str:
    """The last TAIL_BYTES of a file the probe opened itself (never reopened by path)."""
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES)).decode("utf-8", "replace")
    except OSError:
        return ""


def _target_env(env: dict | None, hook: bool, report_path: str) -> dict:
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = str(v)
    full[report.ENV_VAR] = report_path
    if hook:
        existing = full.get("PYTHONPATH", "")
        # no trailing separator: an empty entry would put the cwd on sys.path
        full["PYTHONPATH"] = HOOK_DIR + (os.pathsep + existing if existing else "")
    return full


def _hook_notes(command: list[str], reports: list[dict]) -> tuple[bool, list[str]]:
    if any(r.get("type") == "hook" and r.get("event") == "loaded" for r in reports):
        return True, []
    flags = [a for a in command[1:3] if re.fullmatch(r"-[A-Za-z]*[IES][A-Za-z]*", a)]
    if command and "python" in os.path.basename(command[0]) and flags:
        why = f"the target runs python {' '.join(flags)}, which ignores PYTHONPATH or skips site"
    else:
        why = ("no Python process of the target loaded it: the target may not be Python, may run "
               "python -I/-E/-S, or may scrub its environment (PYTHONPATH, QG_AUDIT_REPORT)")
    return False, [f"hook could not apply: {why}; only auditor.report.worker() reports and the "
                   f"process census are available"]


def _snapshot(command, started, rc, timed_out, t0, census: Census, reader: _ReportReader,
              samples, hook_active, error, notes, out_fd=-1, err_fd=-1) -> RunResult:
    return RunResult(
        command=list(command), started=started, returncode=rc, timed_out=timed_out,
        duration_s=round(time.monotonic() - t0, 3),
        stdout_tail=_tail(out_fd) if out_fd >= 0 else "", stderr_tail=_tail(err_fd) if err_fd >= 0 else "",
        reports=list(reader.records), processes=census.members(),
        peak_processes=census.peak_processes, peak_workers=census.peak_workers,
        peak_threads=census.peak_threads, peak_rss_bytes=census.peak_rss_bytes,
        samples=list(samples), hook_active=hook_active, error=error, notes=list(notes),
        corrupt_reports=reader.corrupt, dropped_reports=reader.dropped, over_cap_reports=reader.over_cap,
    )


def run_target(command: list[str], *, duration: float | None = None, timeout: float | None = None,
               interval: float | None = None, hook: bool = True, env: dict | None = None,
               match: str | None = None, cwd: str | None = None,
               on_sample: Callable[[dict], None] | None = None,
               stop_when: Callable[[RunResult], bool] | None = None,
               int_grace: float = 3.0, term_grace: float = 2.0, warmup: float = 0.0) -> RunResult:
    """Run COMMAND under the census and return everything observed. See docs/verify.md.

    ``env`` adds to (a value of None removes from) this process's environment.
    ``duration``: end the target after this many seconds (a normal end, returncode None).
    ``timeout``: end it after this many seconds and set ``timed_out``.
    ``warmup``: processes' CPU shares (``ProcessRow.cpu_share``) are measured from this time on.
    """
    if not command:
        raise ValueError("run_target: empty command")
    interval = DEFAULT_INTERVAL if interval is None else max(0.01, float(interval))
    pattern = re.compile(match) if match else None
    tmpdir = tempfile.mkdtemp(prefix="qg-audit-")
    try:
        with terminating_signals() as signals:
            return _run(command, tmpdir, signals, duration=duration, timeout=timeout, interval=interval,
                        hook=hook, env=env, pattern=pattern, cwd=cwd, on_sample=on_sample, stop_when=stop_when,
                        int_grace=int_grace, term_grace=term_grace, warmup=warmup)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _run(command, tmpdir, signals, *, duration, timeout, interval, hook, env, pattern, cwd, on_sample,
         stop_when, int_grace, term_grace, warmup) -> RunResult:
    report_path = os.path.join(tmpdir, "reports.jsonl")
    out_path, err_path = os.path.join(tmpdir, "stdout"), os.path.join(tmpdir, "stderr")
    census = Census(match=pattern, mark=warmup)
    reader = _ReportReader(report_path)
    private = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    out_fd, err_fd = os.open(out_path, private, 0o600), os.open(err_path, private, 0o600)
    try:
        return _watch(command, tmpdir, signals, census, reader, out_fd, err_fd, report_path, duration=duration,
                      timeout=timeout, interval=interval, hook=hook, env=env, cwd=cwd, on_sample=on_sample,
                      stop_when=stop_when, int_grace=int_grace, term_grace=term_grace)
    finally:
        reader.close()
        os.close(out_fd)
        os.close(err_fd)


def _watch(command, tmpdir, signals, census: Census, reader: _ReportReader, out_fd: int, err_fd: int, report_path: str, *,
           duration, timeout, interval, hook, env, cwd, on_sample, stop_when, int_grace, term_grace) -> RunResult:
    samples: list[dict] = []
    notes: list[str] = []
    previous, note = reaper.become_subreaper()
    if note:
        notes.append(note)
    # started before census.prime(): the guardian is the probe's child, never a member
    guard = Guardian(tmpdir)
    if guard.note:
        notes.append(guard.note)
    popen = None
    pidfd = None
    started, rc, timed_out, error = False, None, False, None
    t0 = time.monotonic()
    survivors: list[str] = []
    try:
        census.prime()
        t0 = census.t0
        try:
            popen = subprocess.Popen(
                command, cwd=cwd, env=_target_env(env, hook, report_path), stdin=subprocess.DEVNULL,
                stdout=out_fd, stderr=err_fd, start_new_session=True, preexec_fn=reaper.die_with_parent(),
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            error = f"could not start {command[0]!r}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
        if popen is not None:
            started = True
            guard.watch_session(popen.pid)  # start_new_session: the session id is the root's pid
            census.adopt_root(popen.pid)
            guard.watch(census.live.values())
            pidfd = _pidfd(popen.pid)
            next_tick = time.monotonic()
            while True:
                exited = popen.poll()
                for rec in reader.read():
                    _note_report(census, rec)
                sample = census.poll()
                guard.watch(census.live.values())
                reaper.reap_orphans(census, popen)
                samples.append(sample)
                if on_sample is not None:
                    on_sample(sample)
                if exited is not None:
                    rc = exited
                    break
                elapsed = time.monotonic() - t0
                if duration is not None and elapsed >= duration:
                    break
                if timeout is not None and elapsed >= timeout:
                    timed_out = True
                    break
                if stop_when is not None and stop_when(_snapshot(command, True, None, False, t0, census, reader,
                                                                 samples, None, None, notes)):
                    break
                next_tick += interval
                limit = [next_tick - time.monotonic()]
                if duration is not None:
                    limit.append(t0 + duration - time.monotonic())
                if timeout is not None:
                    limit.append(t0 + timeout - time.monotonic())
                _sleep_until_exit(popen, pidfd, max(0.0, min(limit)))
    finally:
        signals.hold()  # a second Ctrl-C / SIGTERM must not cut the teardown short
        if pidfd is not None:
            os.close(pidfd)
        if popen is not None:
            survivors = reaper.end_tree(census, popen, int_grace=int_grace, term_grace=term_grace)
        guard.close(clean=not survivors)
        reaper.restore_subreaper(previous)
    for rec in reader.read(FINAL_READ):
        _note_report(census, rec)
    hook_active, hook_notes = (None, []) if not hook or not started else _hook_notes(command, reader.records)
    result = _snapshot(command, started, rc, timed_out, t0, census, reader, samples, hook_active, error,
                       notes + hook_notes + _channel_notes(reader), out_fd, err_fd)
    result.unread_report_bytes = reader.unread()
    result.survivors = survivors
    result.cpu_limit = _cpu_limit(census)
    return result


def _channel_notes(reader: _ReportReader) -> list[str]:
    if not (reader.over_cap or reader.unread()):
        return []
    left = reader.unread()
    return [f"the report channel was flooded: {reader.over_cap} report lines past the first {MAX_REPORTS} "
            f"records / {MAX_REPORT_BYTES >> 20} MiB were dropped unread"
            + (f", and {left} bytes were left unread" if left else "")
            + "; what was kept is judged"]


def _cpu_limit(census: Census) -> dict:
    from auditor.runtime import procfs

    limit = procfs.cpu_limit()  # the target's cgroup is the probe's; its affinity was read while it ran
    if census.affinity is not None and census.affinity != limit["affinity"]:
        limit["from"][0:1] = [f"sched_getaffinity(target pid {census.root_pid}): {census.affinity} "
                              f"CPU{'s' if census.affinity != 1 else ''}"]
        limit["affinity"] = census.affinity
        limit["cpus"] = min(x for x in (census.affinity, limit["quota"]) if x is not None)
    return limit


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)  # Linux >= 5.3: readable when the process exits
    except (AttributeError, OSError):
        return None


def _sleep_until_exit(popen: subprocess.Popen, pidfd: int | None, seconds: float) -> None:
    """Sleep, waking at once when the target exits. Popen.wait(timeout) would poll every few ms."""
    if pidfd is not None:
        select.select([pidfd], [], [], seconds)
        return
    try:
        popen.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def _note_report(census: Census, rec: dict) -> None:
    pid = rec.get("pid")
    if rec.get("type") == "worker" and isinstance(pid, int):
        census.note_report(pid, str(rec.get("backend") or "report"))

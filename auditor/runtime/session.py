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
from auditor.runtime.ready import Readiness, ReadyState
from auditor.runtime.signals import terminating_signals
from auditor.runtime.threadcpu import ThreadMeter

__all__ = ["ProcessRow", "RunResult", "run_target", "DEFAULT_INTERVAL", "HOOK_DIR", "Readiness", "ReadyState"]

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
    duration_s: float  # launch to the target's exit or qg-audit's decision to end it (teardown apart)
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
    # when the job was ready (auditor.runtime.ready); at=0.0 when the caller asked for no readiness
    ready: ReadyState = field(default_factory=lambda: ReadyState(at=0.0, why="the launch"))
    window_start: float = 0.0  # seconds after launch: ready.at + warmup (the steady window's start)
    teardown_s: float = 0.0  # ending the tree after the run, seconds
    thread_cpu: dict = field(default_factory=dict)  # ThreadMeter.summary(): busy threads in the window
    output_dir: str | None = None  # where the target's whole output was kept (keep_output)

    @property
    def ready_at(self) -> float | None:
        return self.ready.at

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


def _tail(fd: int, end: int | None = None) -> str:
    """The last TAIL_BYTES of a file the probe opened itself (never reopened by path), up to
    END: what the target wrote before qg-audit began to end it (a KeyboardInterrupt traceback
    from our SIGINT would hide the output that matters)."""
    try:
        size = os.fstat(fd).st_size if end is None else min(end, os.fstat(fd).st_size)
        start = max(0, size - TAIL_BYTES)
        return os.pread(fd, size - start, start).decode("utf-8", "replace")
    except OSError:
        return ""


def _size(fd: int) -> int | None:
    try:
        return os.fstat(fd).st_size
    except OSError:
        return None


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
              samples, hook_active, error, notes, out_fd=-1, err_fd=-1, ends=(None, None)) -> RunResult:
    return RunResult(
        command=list(command), started=started, returncode=rc, timed_out=timed_out,
        duration_s=round(time.monotonic() - t0, 3),
        stdout_tail=_tail(out_fd, ends[0]) if out_fd >= 0 else "",
        stderr_tail=_tail(err_fd, ends[1]) if err_fd >= 0 else "",
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
               int_grace: float = 3.0, term_grace: float = 2.0, warmup: float = 0.0,
               ready: Readiness | None = None, on_wait: Callable[[str | None], None] | None = None,
               keep_output: str | None = None) -> RunResult:
    """Run COMMAND under the census and return everything observed. See docs/verify.md.

    ``env`` adds to (a value of None removes from) this process's environment.
    ``ready``: when given, ``duration`` and the steady window start when it says the job is
    ready (auditor.runtime.ready); a run not ready after ``ready.timeout`` seconds is ended
    (with ``duration`` set; with ``duration`` None the target runs on until it exits or
    ``timeout``). ``on_wait(status)`` is called at every poll while waiting (a status line),
    and once with None when the wait is over.
    ``duration``: end the target this many seconds after it was ready (after the launch
    without ``ready``): a normal end, returncode None.
    ``timeout``: end it this many seconds after the launch and set ``timed_out``.
    ``warmup``: the steady window (processes' ``cpu_share``, the per-thread CPU in
    ``thread_cpu``) starts this many seconds after the job was ready.
    ``keep_output``: a directory that receives the target's whole stdout, stderr and reports.
    """
    if not command:
        raise ValueError("run_target: empty command")
    interval = DEFAULT_INTERVAL if interval is None else max(0.01, float(interval))
    pattern = re.compile(match) if match else None
    tmpdir = tempfile.mkdtemp(prefix="qg-audit-")
    try:
        with terminating_signals() as signals:
            result = _run(command, tmpdir, signals, duration=duration, timeout=timeout, interval=interval,
                          hook=hook, env=env, pattern=pattern, cwd=cwd, on_sample=on_sample, stop_when=stop_when,
                          int_grace=int_grace, term_grace=term_grace, warmup=warmup, ready=ready, on_wait=on_wait)
    finally:
        if keep_output:
            _keep(tmpdir, keep_output)
        shutil.rmtree(tmpdir, ignore_errors=True)
    if keep_output:
        result.output_dir = keep_output
    return result


KEPT = {"stdout": "stdout.log", "stderr": "stderr.log", "reports.jsonl": "reports.jsonl"}


def _keep(tmpdir: str, dest: str) -> None:
    """Copy the run's files to DEST (also on an interruption: the finally of run_target)."""
    try:
        os.makedirs(dest, exist_ok=True)
        for name, kept in KEPT.items():
            src = os.path.join(tmpdir, name)
            if os.path.exists(src):
                shutil.copyfile(src, os.path.join(dest, kept))
    except OSError:
        pass  # the verdict matters more than the copy; the command checked DEST before the launch


def _run(command, tmpdir, signals, *, duration, timeout, interval, hook, env, pattern, cwd, on_sample,
         stop_when, int_grace, term_grace, warmup, ready, on_wait) -> RunResult:
    report_path = os.path.join(tmpdir, "reports.jsonl")
    out_path, err_path = os.path.join(tmpdir, "stdout"), os.path.join(tmpdir, "stderr")
    reader = _ReportReader(report_path)
    # the probe creates the target's output files itself and reads them only through these
    # descriptors: a target that swaps the paths for a FIFO or a device changes nothing here
    private = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    out_fd, err_fd = os.open(out_path, private, 0o600), os.open(err_path, private, 0o600)
    try:
        return _watch(command, tmpdir, signals, reader, out_fd, err_fd, report_path, duration=duration,
                      timeout=timeout, interval=interval, hook=hook, env=env, pattern=pattern, cwd=cwd,
                      on_sample=on_sample, stop_when=stop_when, int_grace=int_grace, term_grace=term_grace,
                      warmup=warmup, ready=ready, on_wait=on_wait)
    finally:
        reader.close()
        os.close(out_fd)
        os.close(err_fd)


def _watch(command, tmpdir, signals, reader: _ReportReader, out_fd: int, err_fd: int, report_path: str, *,
           duration, timeout, interval, hook, env, pattern, cwd, on_sample, stop_when, int_grace, term_grace,
           warmup, ready, on_wait) -> RunResult:
    # without a readiness the job counts as ready at the launch (the behaviour before 0.3)
    census = Census(match=pattern, mark=warmup if ready is None else float("inf"))
    meter = ThreadMeter()
    state = ReadyState(at=0.0, why="the launch") if ready is None else ready.state
    ended_at = None  # seconds after launch when the run ended (target exit or our decision)
    ends = (None, None)  # stdout / stderr sizes when qg-audit began to end the target
    waiting = False  # on_wait has been told a status
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
                elapsed = time.monotonic() - t0
                if ready is not None and not ready.ready:
                    if ready.observe(sample["t"], sample, census, reader.records):
                        census.mark = state.at + warmup
                    elif on_wait is not None:
                        on_wait(state.status)
                        waiting = True
                    if ready.ready and waiting and on_wait is not None:
                        on_wait(None)
                        waiting = False
                if state.at is not None and sample["t"] >= census.mark and meter.due(sample["t"]):
                    meter.read(sample["t"], census.live.values())
                if exited is not None:
                    rc, ended_at = exited, elapsed
                    break
                start = state.at  # the duration counts from readiness
                if duration is not None and start is not None and elapsed >= start + duration:
                    break
                if timeout is not None and elapsed >= timeout:
                    timed_out = True
                    break
                if duration is not None and ready is not None and ready.give_up(elapsed):
                    break
                if stop_when is not None and stop_when(_snapshot(command, True, None, False, t0, census, reader,
                                                                 samples, None, None, notes)):
                    break
                next_tick += interval
                limit = [next_tick - time.monotonic()]
                if duration is not None and start is not None:
                    limit.append(t0 + start + duration - time.monotonic())
                if timeout is not None:
                    limit.append(t0 + timeout - time.monotonic())
                _sleep_until_exit(popen, pidfd, max(0.0, min(limit)))
            if exited is None and state.at is not None and census.now() >= census.mark:
                meter.read(census.now(), census.live.values())  # the window's end, before the teardown
    finally:
        signals.hold()  # a second Ctrl-C / SIGTERM must not cut the teardown short
        if waiting and on_wait is not None:
            on_wait(None)
        if ended_at is None:
            ended_at = time.monotonic() - t0
            ends = (_size(out_fd), _size(err_fd))  # the output before our signals
        if pidfd is not None:
            os.close(pidfd)
        if popen is not None:
            survivors = reaper.end_tree(census, popen, int_grace=int_grace, term_grace=term_grace)
        guard.close(clean=not survivors)
        reaper.restore_subreaper(previous)
    teardown = time.monotonic() - t0 - ended_at
    for rec in reader.read(FINAL_READ):
        _note_report(census, rec)
    if ready is not None and not ready.ready and started and rc is not None:
        ready.finish(ended_at, reader.records)  # the target ended first: did anything happen at all?
    hook_active, hook_notes = (None, []) if not hook or not started else _hook_notes(command, reader.records)
    result = _snapshot(command, started, rc, timed_out, t0, census, reader, samples, hook_active, error,
                       notes + hook_notes + _channel_notes(reader), out_fd, err_fd, ends)
    result.unread_report_bytes = reader.unread()
    result.duration_s = round(ended_at, 3)
    result.teardown_s = round(teardown, 3)
    result.survivors = survivors
    result.cpu_limit = _cpu_limit(census)
    result.ready = state
    result.window_start = round(state.at + warmup, 3) if state.at is not None else 0.0
    result.thread_cpu = meter.summary(result.processes, result.cpu_limit.get("cpus"))
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

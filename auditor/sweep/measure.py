"""Run one value once: launch through the shared runtime, then summarise its timing records.

The process tree (processes, workers, threads, tree RSS peak) comes from verify's census
(``run_target``); samples/s and phase times from the SamplingTimer records through
``auditor.profiling.summarize``, on the same steady-state basis as ``qg-audit profile``.

``--steps N``: every value is measured over the same steps. The run is ended once every
sampling timer has sent K + N steps (K = its warm-up), and the figures use exactly steps
K+1 .. K+N of each timer; steps sent after that (the timer flushes on exit) are cut off.
"""

from __future__ import annotations

import base64
import binascii

from auditor.sweep import stats
from auditor.sweep.model import RunRecord

EARLY_FRACTION = 0.1  # outliers in the first tenth of the steady steps suggest warm-up left in
# Sleep-like steps have a MAD of microseconds, so on a shared machine almost every run has a
# step hyperfine's rule calls an outlier. Only outliers that move samples/s count: their time
# above the median must be at least this share of the run's steady step time.
OUTLIER_WEIGHT = 0.02


def _rows_in(rec: dict) -> int:
    """How many step rows a timing record carries, without decoding them one by one."""
    rows = rec.get("steps")
    width = 2 + len(rec.get("phases") or [])
    if isinstance(rows, list):
        return len(rows)
    if isinstance(rows, str):
        try:
            return len(base64.b64decode(rows, validate=True)) // (8 * width)
        except (binascii.Error, ValueError):
            return 0
    return 0


class StepCounter:
    """Steps sent so far per sampling timer, read incrementally from the report records."""

    def __init__(self, warmup_override: int | None):
        self.warmup_override = warmup_override
        self._seen = 0
        self.sent: dict[tuple, int] = {}
        self.warmup: dict[tuple, int] = {}

    def update(self, records: list[dict]) -> None:
        for rec in records[self._seen:]:
            if rec.get("type") != "timing":
                continue
            n = _rows_in(rec)
            if not n:
                continue
            key = (rec.get("pid"), rec.get("timer"), rec.get("t0"))
            self.sent[key] = max(self.sent.get(key, 0), int(rec.get("first_step") or 0) + n)
            declared = rec.get("warmup_steps") if isinstance(rec.get("warmup_steps"), int) else 0
            self.warmup[key] = declared if self.warmup_override is None else self.warmup_override
        self._seen = len(records)

    def reached(self, steps: int) -> bool:
        return bool(self.sent) and all(n >= self.warmup[k] + steps for k, n in self.sent.items())


def limit_steps(records: list[dict], steps: int, warmup_override: int | None) -> list[dict]:
    """The timing records cut to each timer's first K + ``steps`` steps (as plain-list records).

    Other record types pass through. Trainer rows are cut the same way, so a trainer's wait
    ratio covers the same stretch as the sampler's figures.
    """
    from auditor.profiling.series import parse_records

    series, _notes = parse_records(records)
    out = [r for r in records if r.get("type") != "timing"]
    for s in series:
        k = s.warmup_declared if warmup_override is None else warmup_override
        cap = k + steps
        head = {"v": 1, "type": "timing", "pid": s.pid, "ppid": s.ppid, "timer": s.timer, "role": s.role,
                "t0": s.t0, "warmup_steps": s.warmup_declared, "phases": list(s.phases)}
        for chunk in _contiguous([r for r in s.steps if r.index < cap]):
            out.append(dict(head, first_step=chunk[0].index, end_ns=chunk[0].end_ns,
                            steps=[[r.step_ns, r.samples, *r.phase_ns] for r in chunk]))
        for chunk in _contiguous([r for r in s.trainer if r.index < cap]):
            out.append(dict(head, steps=[], first_iter=chunk[0].index,
                            trainer=[[r.end_ns, r.wait_ns, r.compute_ns] for r in chunk]))
    return out


def _contiguous(rows: list) -> list[list]:
    chunks: list[list] = []
    for r in rows:
        if chunks and chunks[-1][-1].index + 1 == r.index:
            chunks[-1].append(r)
        else:
            chunks.append([r])
    return chunks


def step_outliers(records: list[dict], warmup_override: int | None) -> tuple[int, int]:
    """(outlier steps, of which early) over each timer's steady step times, hyperfine's rule.

    A timer's outliers count only when they weigh (see OUTLIER_WEIGHT).
    """
    from auditor.profiling.series import parse_records

    series, _ = parse_records(records)
    total = early = 0
    for s in series:
        k = s.warmup_declared if warmup_override is None else warmup_override
        s.split_steps(k)
        times = [r.step_ns for r in s.steady_steps]
        if len(times) < 3:
            continue
        idx = stats.outliers(times)
        med = stats.median(times)
        if not idx or sum(times[i] - med for i in idx) < OUTLIER_WEIGHT * sum(times):
            continue
        total += len(idx)
        early += sum(1 for i in idx if i < max(1, int(len(times) * EARLY_FRACTION)))
    return total, early


def run_one(value: str, run: int, command: list[str], *, steps: int | None, duration: float | None,
            timeout: float | None, warmup_steps: int | None, interval: float | None, hook: bool,
            gpu=None, cwd: str | None = None, auto: bool = False, ready_timeout: float | None = 120.0,
            keep_output: str | None = None) -> RunRecord:
    """Launch COMMAND once and measure it. Never raises for a failing target: the record says why.

    ``auto``: the hook times the phases (``profile --auto``) and only its records count.
    ``duration`` counts from the run's first timed step (profile's readiness), waited for at
    most ``ready_timeout`` seconds after the launch.
    """
    from auditor.profiling import NoTimingRecords, summarize
    from auditor.profiling import auto as auto_mod
    from auditor.runtime.session import run_target

    def chosen(records: list[dict]) -> list[dict]:
        return auto_mod.split(records)[0 if auto else 1]

    counter = StepCounter(warmup_steps) if steps else None
    tracker = gpu.run_tracker() if gpu is not None else None
    reached = [False]

    def stop_when(snapshot) -> bool:
        if tracker is not None:
            tracker.sample({p.pid for p in snapshot.processes if p.alive})
        if counter is not None:
            counter.update(chosen(snapshot.reports))
            if counter.reached(steps):
                reached[0] = True
                return True
        return False

    from auditor.profiling.launch import readiness

    use_stop = counter is not None or tracker is not None
    k = warmup_steps if warmup_steps is not None else auto_mod.DEFAULT_WARMUP_STEPS
    res = run_target(command, duration=duration, timeout=timeout, interval=interval, hook=hook or auto, cwd=cwd,
                     stop_when=stop_when if use_stop else None, env={auto_mod.ENV_VAR: str(k)} if auto else None,
                     ready=readiness("auto" if auto else "timer", ready_timeout), keep_output=keep_output)
    rec = RunRecord(value=value, run=run, command=list(command), status="ok", exit_code=res.returncode,
                    ended_by="exit", duration_s=res.duration_s, processes=res.peak_processes,
                    workers=res.peak_workers, threads=res.peak_threads, rss_peak_bytes=res.peak_rss_bytes,
                    gpu_peak_bytes=tracker.peak_bytes if tracker is not None else None,
                    gpu_basis=tracker.basis if tracker is not None else None,
                    notes=list(res.notes))
    if tracker is not None and tracker.error:
        rec.notes.append(f"GPU sampling stopped: {tracker.error}")
    if not res.started:
        rec.status, rec.ended_by, rec.error = "not-started", "not-started", res.error or "could not start"
        return rec
    if res.timed_out:
        rec.ended_by = "timeout"
    elif res.ready.timed_out:
        rec.ended_by = "ready-timeout"
    elif res.returncode is None:
        rec.ended_by = "steps" if reached[0] else "duration"
    if res.timed_out:
        rec.status, rec.error = "timeout", f"ended by --timeout {timeout:g} s before it finished"
    elif res.ready.timed_out:
        rec.status, rec.error = "no-timing", (f"no timed step within --ready-timeout {res.ready.timeout:g} s of the "
                                              f"launch ({res.ready.status})")
    elif res.returncode not in (None, 0):
        rec.status, rec.error = "exit", f"exited with code {res.returncode}"
    records = chosen(res.reports)
    records = limit_steps(records, steps, warmup_steps) if steps else records
    try:
        prof = summarize(records, warmup_steps=warmup_steps)
    except NoTimingRecords:
        prof = None
    if prof is not None and prof.samples_per_s is not None:
        rec.samples_per_s = prof.samples_per_s
        rec.steps = prof.steps
        rec.step_ms = prof.step.mean_ms
        rec.phases_ms = {p.name: p.mean_ms for p in prof.phases}
        rec.untimed_ms = round(prof.step.mean_ms * prof.other_share, 4)
        rec.notes += prof.notes
        rec.step_outliers, rec.early_outliers = step_outliers(records, warmup_steps)
        if steps and rec.steps < steps * max(1, len({(p.pid, p.timer) for p in prof.processes if p.steps})):
            rec.notes.append(f"ran {rec.steps} steady step(s), fewer than --steps {steps} per timer: the target "
                             "ended first")
    elif rec.status == "ok":
        rec.status = "no-timing"
        rec.error = ("sent no steady sampling step (is auditor.timing.SamplingTimer used, with step() called "
                     "more often than its warm-up?)")
    if not rec.ok:
        rec.stderr_tail = res.stderr_tail[-2000:]
        rec.stdout_tail = res.stdout_tail[-2000:]
    return rec

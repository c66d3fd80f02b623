"""Profiles from timing records: phases, warm-up, throughput, trainer wait, spikes, diagnosis.

Pure functions over the ``"timing"`` records that :class:`auditor.timing.SamplingTimer`
sends (see its docstring for the record format). The seam other commands use::

    from auditor.profiling import summarize
    prof = summarize(records, warmup_steps=5, window=50)
    prof.samples_per_s, prof.phase("env").mean_ms, prof.to_json()  # qg-audit.profile/1

Definitions (docs/profile.md says the same):

- basis: which steps the statistics use. Warm-up is excluded per timer: its first K steps
  (``warmup_steps``; default the K each timer declared), or the steps that ended within S
  seconds of the timer's creation (``warmup_s``). Trainer steps use the same K or S.
- step time: wall time of one sampling step (from the previous ``step()``), less the
  training inside it (automatic timers of a collect-then-train loop send it apart); "other"
  is the part no phase covered. The training is its own row (``training``).
- samples_per_s: for each timer, steady samples / the sum of its steady step times
  (sampling time only, never trainer compute or training); summed over timers, since
  workers sample concurrently. For one timer it is exactly samples / sampling time.
- wait ratio: wait / (wait + compute) per window of ``window`` trainer steps; the
  distribution over windows (mean, p50, p95) is reported, never just the maximum.
- spikes: steady steps slower than ``spike_factor`` x their timer's median step, with the
  window (of ``window`` steps, counted from step 1) they fall in and the phase that grew most.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from auditor.profiling.diagnose import Thresholds, diagnose
from auditor.profiling.series import Series, parse_records
from auditor.profiling.stats import mean, percentile, spike_indices, windows

SCHEMA = "qg-audit.profile/1"
DEFAULT_WINDOW = 50
FIRST_STEPS_MIN = 5  # show at least this many first steps, even with no warm-up declared
FIRST_STEPS_MAX = 20
SPIKES_MAX = 20

__all__ = ["summarize", "Profile", "Thresholds", "SCHEMA", "DEFAULT_WINDOW", "NoTimingRecords"]


class NoTimingRecords(ValueError):
    """The records hold no sampling step and no trainer step."""


@dataclass
class PhaseStats:
    name: str
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    share: float  # of total steady step time

    @classmethod
    def of(cls, name: str, values_ms: list[float], total_ms: float, step_total_ms: float) -> "PhaseStats":
        return cls(name, round(mean(values_ms), 4), round(percentile(values_ms, 50), 4),
                   round(percentile(values_ms, 95), 4), round(percentile(values_ms, 99), 4),
                   round(max(values_ms, default=0.0), 4),
                   round(total_ms / step_total_ms, 4) if step_total_ms else 0.0)


@dataclass
class WaitStats:
    ratio_mean: float
    ratio_p50: float
    ratio_p95: float
    wait_ms_mean: float
    compute_ms_mean: float
    wait_ms_p95: float
    wait_ms_max: float
    ratio_overall: float  # total wait / (total wait + total compute)
    windows: int
    steps: int  # steady trainer steps
    window_ratios: list[float] = field(default_factory=list)


@dataclass
class ProcessRow:
    pid: int
    ppid: int | None
    timer: str
    role: str | None
    steps: int  # steady sampling steps
    samples_per_s: float | None
    step_ms_mean: float | None
    phases_ms: dict[str, float]  # mean per steady step
    wait_ratio: float | None  # overall, steady trainer steps
    trainer_steps: int


@dataclass
class FirstStep:
    pid: int
    timer: str
    step: int  # 1-based
    step_ms: float
    phases_ms: dict[str, float]
    warmup: bool


@dataclass
class Spike:
    pid: int
    timer: str
    step: int  # 1-based
    step_ms: float
    median_ms: float
    window: int  # 1-based window of `window` steps the spike falls in
    window_steps: tuple[int, int]  # first and last step of that window
    phase: str | None  # the phase that grew most over its own median
    t_s: float  # seconds after the timer started


@dataclass
class TrainingStats:
    """Training inside the sampling threads' steps (a collect-then-train loop), kept apart."""

    ms_total: float  # steady steps' training, all timers
    ms_per_step: float  # per steady sampling step
    share: float  # training / (training + sampling) over the timers that train
    spans: int  # steady steps that held training
    forwards: int  # cumulative counts over the run (the hook's): training forwards
    backward: int
    optimizer_steps: int


@dataclass
class Profile:
    basis: str
    basis_code: str  # "warmup-steps" | "warmup-seconds" | "all-steps"
    warmup_steps: int | None
    warmup_s: float | None
    window: int
    phases: list[PhaseStats]
    step: PhaseStats
    other_share: float
    steps: int  # steady sampling steps, all timers
    samples: int
    sampling_s: float
    samples_per_s: float | None
    wait: WaitStats | None
    processes: list[ProcessRow]
    first_steps: list[FirstStep]
    spikes: list[Spike]
    spikes_total: int
    spike_threshold_factor: float
    diagnosis: list[dict[str, Any]]
    conclusion: dict[str, Any]
    thresholds: Thresholds
    notes: list[str] = field(default_factory=list)
    training: TrainingStats | None = None
    stacks: dict | None = None  # stack samples of the sampling threads, all timers (auto.stacks)
    explanation: dict | None = None  # the untimed share explained (auditor.profiling.explain)
    run: dict | None = None  # live runs: readiness, threads and CPUs (auditor.profiling.launch)

    def phase(self, name: str) -> PhaseStats | None:
        return next((p for p in self.phases if p.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """The ``qg-audit.profile/1`` document."""
        wait = None
        if self.wait is not None:
            wait = asdict(self.wait)
        return {
            "schema": SCHEMA,
            "basis": self.basis,
            "basis_code": self.basis_code,
            "warmup_steps": self.warmup_steps,
            "warmup_s": self.warmup_s,
            "window": self.window,
            "phases": [asdict(p) for p in self.phases],
            "step": asdict(self.step),
            "other_share": self.other_share,
            "steps": self.steps,
            "samples": self.samples,
            "sampling_s": self.sampling_s,
            "samples_per_s": self.samples_per_s,
            "wait": wait,
            "processes": [asdict(p) for p in self.processes],
            "first_steps": [asdict(s) for s in self.first_steps],
            "spikes": [dict(asdict(s), window_steps=list(s.window_steps)) for s in self.spikes],
            "spikes_total": self.spikes_total,
            "diagnosis": self.diagnosis,
            "conclusion": self.conclusion,
            "thresholds": asdict(self.thresholds),
            "notes": self.notes,
            "training": asdict(self.training) if self.training is not None else None,
            "stacks": self.stacks,
            "explanation": self.explanation,
            "run": self.run,
        }


def summarize(records: list[dict], warmup_steps: int | None = None, warmup_s: float | None = None,
              window: int = DEFAULT_WINDOW, thresholds: Thresholds | None = None) -> Profile:
    """Build a :class:`Profile` from report records (other record types are ignored).

    Raises :class:`NoTimingRecords` when no timer sent a step, ValueError on bad arguments.
    """
    if warmup_steps is not None and warmup_s is not None:
        raise ValueError("give warmup_steps or warmup_s, not both")
    if warmup_steps is not None and warmup_steps < 0 or warmup_s is not None and warmup_s < 0:
        raise ValueError("warm-up must be >= 0")
    if window < 1:
        raise ValueError("window must be >= 1")
    th = thresholds or Thresholds()
    series, notes = parse_records(records)
    if not any(s.steps or s.trainer for s in series):
        raise NoTimingRecords("no timing records (type 'timing') with steps")

    # -- warm-up split, per timer ------------------------------------------------------
    declared = sorted({s.warmup_declared for s in series if s.steps or s.trainer})
    for s in series:
        if warmup_s is not None:
            s.split_seconds(warmup_s)
        else:
            s.split_steps(s.warmup_declared if warmup_steps is None else warmup_steps)
    if warmup_s is not None:
        code, k = "warmup-seconds", None
        basis = f"steady state: steps that ended more than {warmup_s:g} s after their timer started"
    else:
        ks = declared if warmup_steps is None else [warmup_steps]
        k = ks[0] if len(ks) == 1 else None
        if ks == [0]:
            code, basis = "all-steps", "all steps (no warm-up excluded; pass --warmup-steps K or --warmup-s S)"
        else:
            code = "warmup-steps"
            how = "--warmup-steps" if warmup_steps is not None else "declared by the timer"
            which = f"first {k}" if k is not None else "first " + "/".join(map(str, ks))
            basis = f"steady state: {which} steps of each timer excluded as warm-up ({how})"

    # -- phases over steady steps, all timers ------------------------------------------
    names: list[str] = []
    for s in series:
        names += [n for n in s.phases if n not in names]
    steady = [(s, row) for s in series for row in s.steady_steps]
    step_ms = [row.sampling_ns / 1e6 for _s, row in steady]
    step_total = sum(step_ms)
    phases = []
    phase_total = 0.0
    for name in names:
        vals = [s.phase_ns(row, name) / 1e6 for s, row in steady if name in s.phases]
        total = sum(vals)
        phase_total += total
        phases.append(PhaseStats.of(name, vals, total, step_total))
    step = PhaseStats.of("step", step_ms, step_total, step_total)
    other_share = round(max(0.0, 1 - phase_total / step_total), 4) if step_total else 0.0

    samples = sum(row.samples for _s, row in steady)
    rates = [s.samples_per_s() for s in series if s.steady_steps]
    rates = [r for r in rates if r is not None]
    samples_per_s = round(sum(rates), 3) if rates else None

    wait = _wait_stats([s for s in series if s.steady_trainer], window)
    procs = [_process_row(s) for s in series if s.steps or s.trainer]
    first = _first_steps(series)
    spikes, spikes_total = _spikes(series, window, th.spike_factor)
    for s in series:
        if s.gaps:
            notes.append(f"pid {s.pid} timer {s.timer}: {s.gaps} step(s) missing from the records "
                         "(a batch was lost, e.g. the process was killed before it flushed)")

    prof = Profile(
        basis=basis, basis_code=code, warmup_steps=k if code != "warmup-seconds" else None,
        warmup_s=warmup_s, window=window, phases=phases, step=step, other_share=other_share,
        steps=len(steady), samples=samples, sampling_s=round(step_total / 1e3, 6),
        samples_per_s=samples_per_s, wait=wait, processes=procs, first_steps=first,
        spikes=spikes, spikes_total=spikes_total, spike_threshold_factor=th.spike_factor,
        diagnosis=[], conclusion={}, thresholds=th, notes=notes, training=_training(series),
    )
    from auditor.profiling.auto import stacks as merged_stacks

    prof.stacks = merged_stacks(series)
    prof.diagnosis, prof.conclusion = diagnose(prof, th)
    return prof


def _training(series: list[Series]) -> TrainingStats | None:
    """Training inside sampling steps, or None when no timer trained in its steps."""
    trained = [s for s in series if s.steady_steps and (s.alternating or any(r.train_ns for r in s.steps))]
    if not trained:
        return None
    rows = [r for s in trained for r in s.steady_steps]
    train = sum(r.train_ns for r in rows)
    sampling = sum(r.sampling_ns for r in rows)
    counts = {k: sum(int(s.training.get(k) or 0) for s in trained) for k in ("forwards", "backward",
                                                                              "optimizer_steps")}
    if not train and not any(counts.values()):
        return None
    return TrainingStats(ms_total=round(train / 1e6, 3), ms_per_step=round(train / len(rows) / 1e6, 4),
                         share=round(train / (train + sampling), 4) if train + sampling else 0.0,
                         spans=sum(1 for r in rows if r.train_ns), **counts)


def _wait_stats(series: list[Series], window: int) -> WaitStats | None:
    if not series:
        return None
    ratios, waits, computes = [], [], []
    for s in series:
        rows = s.steady_trainer
        waits += [r.wait_ns / 1e6 for r in rows]
        computes += [r.compute_ns / 1e6 for r in rows]
        for a, b in windows(len(rows), window):
            w = sum(r.wait_ns for r in rows[a:b])
            c = sum(r.compute_ns for r in rows[a:b])
            ratios.append(w / (w + c) if w + c else 0.0)
    tw, tc = sum(waits), sum(computes)
    return WaitStats(
        ratio_mean=round(mean(ratios), 4), ratio_p50=round(percentile(ratios, 50), 4),
        ratio_p95=round(percentile(ratios, 95), 4), wait_ms_mean=round(mean(waits), 4),
        compute_ms_mean=round(mean(computes), 4), wait_ms_p95=round(percentile(waits, 95), 4),
        wait_ms_max=round(max(waits, default=0.0), 4),
        ratio_overall=round(tw / (tw + tc), 4) if tw + tc else 0.0,
        windows=len(ratios), steps=len(waits), window_ratios=[round(r, 4) for r in ratios],
    )


def _process_row(s: Series) -> ProcessRow:
    rows = s.steady_steps
    n = len(rows)
    rate = s.samples_per_s()
    tw = sum(r.wait_ns for r in s.steady_trainer)
    tc = sum(r.compute_ns for r in s.steady_trainer)
    return ProcessRow(
        pid=s.pid, ppid=s.ppid, timer=s.timer, role=s.role, steps=n,
        samples_per_s=round(rate, 3) if rate is not None else None,
        step_ms_mean=round(sum(r.sampling_ns for r in rows) / n / 1e6, 4) if n else None,
        phases_ms={name: round(sum(s.phase_ns(r, name) for r in rows) / n / 1e6, 4) for name in s.phases} if n else {},
        wait_ratio=round(tw / (tw + tc), 4) if tw + tc else None,
        trainer_steps=len(s.steady_trainer),
    )


def _first_steps(series: list[Series]) -> list[FirstStep]:
    out = []
    for s in series:
        if not s.steps:
            continue
        k = len(s.steps) - len(s.steady_steps)  # this timer's warm-up, however it was chosen
        shown = min(max(k, FIRST_STEPS_MIN), FIRST_STEPS_MAX)
        for row in s.steps[:shown]:
            out.append(FirstStep(s.pid, s.timer, row.index + 1, round(row.sampling_ns / 1e6, 4),
                                 {n: round(s.phase_ns(row, n) / 1e6, 4) for n in s.phases},
                                 row.index < s.steady_from))
    return out


def _spikes(series: list[Series], window: int, factor: float) -> tuple[list[Spike], int]:
    found = []
    for s in series:
        rows = s.steady_steps
        if len(rows) < 3:
            continue
        vals = [r.sampling_ns for r in rows]
        _thr, idx = spike_indices(vals, factor)
        if not idx:
            continue
        med = percentile(vals, 50)
        phase_med = {n: percentile([s.phase_ns(r, n) for r in rows], 50) for n in s.phases}
        for i in idx:
            r = rows[i]
            grew = max(s.phases, key=lambda n: s.phase_ns(r, n) - phase_med[n], default=None)
            w = r.index // window
            found.append(Spike(s.pid, s.timer, r.index + 1, round(r.sampling_ns / 1e6, 4), round(med / 1e6, 4),
                               w + 1, (w * window + 1, (w + 1) * window), grew, round(r.end_ns / 1e9, 4)))
    found.sort(key=lambda sp: -sp.step_ms)
    return found[:SPIKES_MAX], len(found)

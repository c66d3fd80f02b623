"""Run the whole sweep: every value, ``runs`` fresh processes each, then the conclusion."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from auditor.sweep import context as ctx
from auditor.sweep.conclude import Limits, conclude
from auditor.sweep.measure import run_one
from auditor.sweep.model import Sweep, ValueResult
from auditor.sweep.params import Variable, substitute


@dataclass
class Options:
    runs: int = 1
    steps: int | None = None
    duration: float | None = None
    timeout: float | None = None
    warmup_steps: int | None = None
    interval: float | None = None
    hook: bool = True
    plateau_gain: float = 0.05
    memory_near: float = 0.8
    memory_limit: int | None = None  # bytes; None: available memory before the sweep
    gpu: bool = True
    auto: bool = False  # time phases with the hook (profile --auto's records) instead of SamplingTimer
    ready_timeout: float | None = 120.0  # --duration counts from each run's first timed step, waited for this long
    keep_output: str | None = None  # each run's output kept in DIR/<name>=<value>-run<k>/


class Progress:
    """One line on stderr: which value and run is going, and the time left (estimated).

    On a terminal the line is rewritten in place; otherwise one line per run is printed, so
    a CI log still shows where a long sweep is.
    """

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done, self.stream, self.enabled = total, 0, stream or sys.stderr, enabled
        self.t0 = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def start(self, name: str, value: str, run: int, runs: int) -> None:
        if not self.enabled:
            return
        left = ""
        if self.done:
            per = (time.monotonic() - self.t0) / self.done
            left = f", about {per * (self.total - self.done):.0f} s left"
        line = f"qg-audit sweep: [{self.done + 1}/{self.total}] {name}={value} run {run}/{runs}{left}"
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish_one(self) -> None:
        self.done += 1

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def run_sweep(var: Variable, template: list[str], opts: Options, progress: Progress | None = None,
              cwd: str | None = None) -> Sweep:
    from auditor.sweep.gpu import GpuProbe

    limit, limit_basis = ctx.memory_limit(opts.memory_limit)
    probe = GpuProbe.open() if opts.gpu else None
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    progress = progress or Progress(len(var.values) * opts.runs)
    results: list[ValueResult] = []
    interrupted = None
    try:
        for value in var.values:
            command = substitute(template, var, value)
            runs: list = []
            try:
                for i in range(1, opts.runs + 1):
                    progress.start(var.name, value, i, opts.runs)
                    kept = (os.path.join(opts.keep_output, f"{var.name}={value}-run{i}") if opts.keep_output
                            else None)
                    runs.append(run_one(value, i, command, steps=opts.steps, duration=opts.duration,
                                        timeout=opts.timeout, warmup_steps=opts.warmup_steps,
                                        interval=opts.interval, hook=opts.hook, gpu=probe, cwd=cwd,
                                        auto=opts.auto, ready_timeout=opts.ready_timeout, keep_output=kept))
                    progress.finish_one()
            except KeyboardInterrupt:
                # Ctrl-C: run_target has already ended that run's tree. Keep what was measured.
                interrupted = f"interrupted during {var.name}={value} run {len(runs) + 1}"
                if runs:
                    results.append(ValueResult(value=value, runs=runs))
                break
            results.append(ValueResult(value=value, runs=runs))
    finally:
        progress.close()
        gpu_total = probe.total_bytes if probe is not None else None
        gpu_names = probe.names if probe is not None else []
        if probe is not None:
            probe.close()
    thread_env = ctx.thread_env()
    context = {
        "command_template": list(template),
        "started": started,
        "runs_per_value": opts.runs,
        "steps": opts.steps,
        "duration_s": opts.duration,
        "timeout_s": opts.timeout,
        "warmup_steps": opts.warmup_steps if opts.warmup_steps is not None else "declared by the timer",
        "workers_observed": {r.value: r.workers for r in results},
        "processes_observed": {r.value: r.processes for r in results},
        "thread_env": thread_env,
        "cpu_count": _cpu_count(),
        "versions": ctx.versions(),
        "memory_limit_bytes": limit,
        "memory_limit_basis": limit_basis,
        "gpu": {"present": probe is not None, "devices": gpu_names, "total_bytes": gpu_total,
                "peak_basis": _gpu_basis(results, probe is not None)},
    }
    limits = Limits(plateau_gain=opts.plateau_gain, memory_near=opts.memory_near, memory_limit_bytes=limit,
                    gpu_total_bytes=gpu_total)
    conclusion, warnings = conclude(results, var, limits, thread_env)
    for r in results:
        r.warnings = [w for w in warnings if w.startswith(f"{var.name}={r.value}:")]
    if interrupted:
        done = {r.value for r in results}
        left = [v for v in var.values if v not in done]
        warnings.insert(0, f"{interrupted}; not run: {', '.join(left) or 'none'}; these results are partial")
    context["interrupted"] = interrupted
    return Sweep(variable=var, context=context, results=results, conclusion=conclusion, warnings=warnings)


def _cpu_count() -> int | None:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _gpu_basis(results: list[ValueResult], present: bool) -> list[str] | None:
    """Which GPU figures the peaks rest on (see auditor.sweep.gpu); None without a GPU."""
    if not present:
        return None
    return sorted({x.gpu_basis for r in results for x in r.runs if x.gpu_basis})

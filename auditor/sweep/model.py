"""What a sweep measured: one RunRecord per process launched, one ValueResult per value."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from auditor.sweep import stats

SCHEMA = "qg-audit.sweep/1"


@dataclass
class RunRecord:
    """One fresh process for one value."""

    value: str
    run: int  # 1-based
    command: list[str]
    status: str  # "ok" | "exit" (non-zero) | "timeout" | "no-timing" | "not-started"
    exit_code: int | None  # None: ended by qg-audit (--steps / --duration / --timeout) or never started
    ended_by: str  # "exit" | "steps" | "duration" | "timeout" | "not-started"
    duration_s: float
    samples_per_s: float | None = None
    steps: int = 0  # steady sampling steps the figures use
    step_ms: float | None = None
    phases_ms: dict[str, float] = field(default_factory=dict)  # mean per steady step
    untimed_ms: float | None = None  # mean per steady step: the step time no phase covered
    processes: int = 0  # peak tree size
    workers: int = 0  # peak worker processes (census classification)
    threads: int = 0  # peak tree threads
    rss_peak_bytes: int = 0  # peak of the tree's total RSS
    gpu_peak_bytes: int | None = None  # None: no GPU / NVML unavailable
    gpu_basis: str | None = None  # "process" (NVML per-pid) | "device-delta" (used minus pre-run baseline)
    step_outliers: int = 0  # steady steps hyperfine's MAD rule calls outliers
    early_outliers: int = 0  # ... of which in the first tenth of the steady steps (warm-up left in?)
    error: str | None = None  # why the run failed, one line
    stderr_tail: str = ""
    stdout_tail: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ValueResult:
    value: str
    runs: list[RunRecord]
    warnings: list[str] = field(default_factory=list)
    outlier_runs: list[int] = field(default_factory=list)  # 1-based run numbers

    @property
    def ok_runs(self) -> list[RunRecord]:
        return [r for r in self.runs if r.ok and r.samples_per_s is not None]

    @property
    def failed(self) -> bool:
        return not self.ok_runs

    @property
    def samples_per_s(self) -> dict:
        return stats.summary([r.samples_per_s for r in self.ok_runs])

    @property
    def phases_ms(self) -> dict[str, float]:
        """Mean over the successful runs of each phase's mean per step (first-seen phase order)."""
        names: list[str] = []
        for r in self.ok_runs:
            names += [n for n in r.phases_ms if n not in names]
        out = {}
        for n in names:
            vals = [r.phases_ms[n] for r in self.ok_runs if n in r.phases_ms]
            out[n] = round(sum(vals) / len(vals), 4)
        return out

    @property
    def step_ms(self) -> float | None:
        vals = [r.step_ms for r in self.ok_runs if r.step_ms is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    @property
    def untimed_ms(self) -> float | None:
        """Mean over the successful runs of the step time no phase covered."""
        vals = [r.untimed_ms for r in self.ok_runs if r.untimed_ms is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    def _peak(self, attr: str) -> int | None:
        """Max over the successful runs; a value that never succeeded shows its failed runs' peaks."""
        runs = self.ok_runs or [r for r in self.runs if r.status != "not-started"]
        vals = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
        return max(vals) if vals else None

    @property
    def processes(self) -> int | None:
        return self._peak("processes")

    @property
    def workers(self) -> int | None:
        return self._peak("workers")

    @property
    def threads(self) -> int | None:
        return self._peak("threads")

    @property
    def rss_peak_bytes(self) -> int | None:
        return self._peak("rss_peak_bytes")

    @property
    def gpu_peak_bytes(self) -> int | None:
        return self._peak("gpu_peak_bytes")

    @property
    def exit_codes(self) -> list[int | None]:
        return [r.exit_code for r in self.runs]

    def status_text(self) -> str:
        """'ok', '2/3 ok', 'exit 1', 'timeout' ... for the table."""
        bad = [r for r in self.runs if not r.ok]
        if not bad:
            return "ok"
        kinds = sorted({f"exit {r.exit_code}" if r.status == "exit" else r.status for r in bad})
        if len(bad) == len(self.runs):
            return ", ".join(kinds)
        return f"{len(self.runs) - len(bad)}/{len(self.runs)} ok; " + ", ".join(kinds)

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "runs": len(self.runs),
            "samples_per_s": self.samples_per_s,
            "phases_ms": self.phases_ms,
            "untimed_ms": self.untimed_ms,
            "step_ms": self.step_ms,
            "processes": self.processes,
            "workers": self.workers,
            "threads": self.threads,
            "rss_peak_bytes": self.rss_peak_bytes,
            "gpu_peak_bytes": self.gpu_peak_bytes,
            "exit_codes": self.exit_codes,
            "status": self.status_text(),
            "outlier_runs": self.outlier_runs,
            "warnings": self.warnings,
            "run_details": [r.to_json() for r in self.runs],
        }


@dataclass
class Sweep:
    variable: Any  # params.Variable
    context: dict[str, Any]
    results: list[ValueResult]
    conclusion: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        v = self.variable
        return {
            "schema": SCHEMA,
            "variable": {"name": v.name, "values": list(v.values), "source": v.source},
            "context": self.context,
            "results": [r.to_json() for r in self.results],
            "conclusion": self.conclusion,
            "warnings": self.warnings,
        }

"""Decode ``"timing"`` records into one series of steps per timer (see auditor.timing)."""

from __future__ import annotations

import base64
import binascii
import sys
from array import array
from dataclasses import dataclass, field


@dataclass
class StepRow:
    index: int  # 0-based step number within its timer
    end_ns: int  # from the timer's origin
    step_ns: int  # wall time since the previous step (training inside it included)
    samples: int
    phase_ns: list[int]  # aligned with Series.phases (padded with 0)
    train_ns: int = 0  # training inside the step (automatic phases, a collect-then-train loop)

    @property
    def sampling_ns(self) -> int:
        """The step's sampling time: its wall time less the training inside it."""
        return max(0, self.step_ns - self.train_ns)


@dataclass
class TrainerRow:
    index: int
    end_ns: int
    wait_ns: int
    compute_ns: int


@dataclass
class Series:
    """All steps of one timer in one process, in order."""

    pid: int
    ppid: int | None
    timer: str
    role: str | None
    t0: float
    warmup_declared: int = 0
    phases: list[str] = field(default_factory=list)
    steps: list[StepRow] = field(default_factory=list)
    trainer: list[TrainerRow] = field(default_factory=list)
    gaps: int = 0
    steady_from: int = 0  # first steady step index
    steady_steps: list[StepRow] = field(default_factory=list)
    steady_trainer: list[TrainerRow] = field(default_factory=list)
    # trainer rows are the training spans of this (sampling) thread, not waits of a trainer
    alternating: bool = False
    tid: int | None = None  # the thread's native id (automatic timers)
    training: dict = field(default_factory=dict)  # cumulative training calls (automatic timers)
    forward_modes: dict = field(default_factory=dict)  # cumulative sampling forward modes
    stacks: dict | None = None  # the last cumulative stack-sample record (automatic timers)

    def phase_ns(self, row: StepRow, name: str) -> int:
        i = self.phases.index(name)
        return row.phase_ns[i] if i < len(row.phase_ns) else 0

    def split_steps(self, k: int) -> None:
        self.steady_from = k
        self.steady_steps = [r for r in self.steps if r.index >= k]
        if self.alternating:  # training spans after the first steady step began
            before = [r.end_ns for r in self.steps if r.index == k - 1]
            cut = before[0] if before else (0 if k == 0 else None)
            self.steady_trainer = [] if cut is None else [r for r in self.trainer if r.end_ns > cut]
        else:
            self.steady_trainer = [r for r in self.trainer if r.index >= k]

    def split_seconds(self, s: float) -> None:
        cut = int(s * 1e9)
        self.steady_steps = [r for r in self.steps if r.end_ns > cut]
        self.steady_from = self.steady_steps[0].index if self.steady_steps else len(self.steps)
        self.steady_trainer = [r for r in self.trainer if r.end_ns > cut]

    def samples_per_s(self) -> float | None:
        """Steady samples / steady sampling time (training inside the steps left out)."""
        t = sum(r.sampling_ns for r in self.steady_steps)
        return sum(r.samples for r in self.steady_steps) / (t / 1e9) if t else None


def _ints(row, n_min: int) -> list[int] | None:
    """The row as integers, or None when it is not a list of at least n_min numbers."""
    if not isinstance(row, list) or len(row) < n_min:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row):
        return None
    return [int(v) for v in row]


_TYPECODES = {"i32le-b64": "i", "i64le-b64": "q"}


def decode_rows(value, width: int, encoding: str | None = "i64le-b64") -> tuple[list, int]:
    """Rows from a record field: packed (base64 text, see auditor.timing) or plain lists.

    Returns (rows, bad) where bad counts a field that could not be decoded.
    """
    if isinstance(value, str):
        code = _TYPECODES.get(encoding or "")
        if code is None:
            return [], 1
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return [], 1
        flat = array(code)
        if width < 1 or len(raw) % (flat.itemsize * width):
            return [], 1
        flat.frombytes(raw)
        if sys.byteorder == "big":
            flat.byteswap()
        return [list(flat[i:i + width]) for i in range(0, len(flat), width)], 0
    if isinstance(value, list):
        return value, 0
    return [], 0 if value is None else 1


def parse_records(records: list[dict]) -> tuple[list[Series], list[str]]:
    """Group timing records by (pid, timer, t0) and decode their rows.

    Malformed rows are skipped and counted in the returned notes, never fatal: a profile of
    what did arrive beats no profile.
    """
    by_key: dict[tuple, Series] = {}
    batches: dict[tuple, list[dict]] = {}
    bad = 0
    for rec in records:
        if not isinstance(rec, dict) or rec.get("type") != "timing":
            continue
        key = (rec.get("pid"), rec.get("timer"), rec.get("t0"))
        if key not in by_key:
            by_key[key] = Series(pid=rec.get("pid") or 0, ppid=rec.get("ppid"), timer=str(rec.get("timer") or "timer"),
                                 role=rec.get("role"), t0=float(rec.get("t0") or 0.0))
            batches[key] = []
        batches[key].append(rec)
    out = []
    for key, s in by_key.items():
        recs = batches[key]
        for rec in recs:
            names = rec.get("phases") or []
            if len(names) > len(s.phases) and names[: len(s.phases)] == s.phases:
                s.phases = list(names)
            if isinstance(rec.get("warmup_steps"), int):
                s.warmup_declared = rec["warmup_steps"]
            if rec.get("trainer_kind") == "alternation":
                s.alternating = True
            if isinstance(rec.get("tid"), int):
                s.tid = rec["tid"]
            for name in ("training", "forward_modes"):
                if isinstance(rec.get(name), dict):
                    setattr(s, name, rec[name])
            if isinstance(rec.get("stacks"), dict):
                s.stacks = rec["stacks"]
        n_ph = len(s.phases)
        step_rows: dict[int, StepRow] = {}
        trainer_rows: dict[int, TrainerRow] = {}
        for rec in sorted(recs, key=lambda r: r.get("first_step") or 0):
            end = rec.get("end_ns") or 0
            first = rec.get("first_step") or 0
            names = rec.get("phases") or []
            rows, b = decode_rows(rec.get("steps"), 2 + len(names), rec.get("encoding"))
            bad += b
            train, b = decode_rows(rec.get("training_rows"), 1, rec.get("training_encoding"))
            bad += b
            for i, row in enumerate(rows):
                row = _ints(row, 2)
                if row is None:
                    bad += 1
                    continue
                if i > 0:
                    end += row[0]
                phase = (row[2:] + [0] * n_ph)[:n_ph]
                t = train[i] if i < len(train) else None
                t = _ints(t if isinstance(t, list) else [t], 1) if t is not None else None
                trained = min(max(t[0], 0), row[0]) if t else 0
                step_rows[first + i] = StepRow(first + i, end, row[0], row[1], phase, trained)
            first_it = rec.get("first_iter") or 0
            trows, b = decode_rows(rec.get("trainer"), 3, rec.get("trainer_encoding"))
            bad += b
            for i, row in enumerate(trows):
                row = _ints(row, 3)
                if row is None:
                    bad += 1
                    continue
                trainer_rows[first_it + i] = TrainerRow(first_it + i, row[0], row[1], row[2])
        s.steps = [step_rows[i] for i in sorted(step_rows)]
        s.trainer = [trainer_rows[i] for i in sorted(trainer_rows)]
        if s.steps:
            s.gaps = s.steps[-1].index + 1 - len(s.steps)
        out.append(s)
    out.sort(key=lambda s: (s.pid, s.timer, s.t0))
    notes = [f"{bad} malformed timing row(s) or packed field(s) skipped"] if bad else []
    return out, notes

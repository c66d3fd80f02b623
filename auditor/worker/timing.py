"""Sampling-phase timing from inside the user's sampler and trainer. Standard library only.

Public API (users' code and CI depend on these names)::

    from auditor.timing import SamplingTimer
    t = SamplingTimer(warmup_steps=20)
    with t.phase("env"):  obs = env.step(action)
    with t.phase("fwd"):  out = policy(obs)
    with t.phase("xfer"): queue.put(out)
    t.step(samples=len(obs))
    # trainer side
    with t.wait():    batch = sampler.get(batch_size)
    with t.compute(): train_step(batch)

Under qg-audit (``QG_AUDIT_REPORT`` set) per-step rows are buffered and sent in batches as
``"timing"`` records through :mod:`auditor.report` (every ``flush_every`` steps, at least
every ``flush_s`` seconds, and at exit). Standalone, a one-line summary goes to stderr every
``print_every`` steps. The timer records warm-up steps too (``qg-audit profile`` shows the
first steps one by one); ``warmup_steps`` only tells the summaries what to leave out.

Hot path: ``phase(name)`` returns a cached, reusable context object; entering and leaving it
is two ``perf_counter_ns()`` calls, one attribute store and one list-slot addition, no
allocation; ``step()`` appends the step's row to one flat list. Hoist it out of
the loop (``env = t.phase("env")`` ... ``with env:``) to skip the name lookup, or use
``t.begin("env")`` / ``t.end()``. Rules: one timer per thread; phases do not overlap and a
phase does not nest inside itself.

Step time is wall time: step 0 runs from its first phase entry (or, with no phase, from the
timer's creation) to ``step()``, step k from the previous ``step()`` to this one, so
untimed work inside the loop counts as "other".
A trainer step is one ``compute()``: it closes a row with the wait time accumulated since
the previous ``compute()`` (several ``wait()`` calls are summed).

Record format (``type: "timing"``, version 1)::

    {"timer": "sampler", "role": null, "t0": <unix time of the timer's origin>,
     "warmup_steps": 20, "phases": ["env", "fwd", "xfer"],
     "first_step": 0, "end_ns": 61000000, "encoding": "i64le-b64", "steps": "<base64>",
     "first_iter": 0, "trainer_encoding": "i64le-b64", "trainer": "<base64>"}

``steps`` holds rows of ``2 + len(phases)`` little-endian integers
``[step_ns, samples, env_ns, fwd_ns, xfer_ns]``, ``trainer`` rows of 3
``[end_ns, wait_ns, compute_ns]``, as little-endian int64 encoded in base64
(``i64le-b64``; readers also know ``i32le-b64``). Measured: JSON lists of integers cost
more per step than the timing itself, a packed copy a few ns per value. Readers also
accept the same rows as plain JSON lists of lists (``"encoding"`` absent), which is handy
for hand-written records. Times are integer nanoseconds. ``end_ns`` (top level) is when
the batch's first step ended, from the timer's origin (``t0``); each later step ends
``step_ns`` after the one before it (step k starts where step k-1 ended), so per-row end
times are not sent. A trainer row's ``end_ns`` is from the same origin.
"""

from __future__ import annotations

import atexit
import base64
import os
import sys
import threading
import time
import weakref
from array import array

from auditor.worker import report

__all__ = ["SamplingTimer"]

_now = time.perf_counter_ns
_HEAD = 2  # step row slots before the phase durations: step_ns, samples
_TRAINER_WIDTH = 3  # end_ns, wait_ns, compute_ns


def _pack(buf: list[int]) -> tuple[str, str]:
    """(encoding, base64 text) of the buffered rows as int64: one C conversion, then a memory copy.

    Measured here: encoding rows as JSON lists, or narrowing them to int32 first, cost more
    per step than the timing itself; ``tobytes`` + base64 costs a few ns per value.
    """
    buf = array("q", buf)
    if sys.byteorder == "big":
        buf.byteswap()
    return "i64le-b64", base64.b64encode(buf.tobytes()).decode("ascii")


class _Phase:
    """A reusable context object for one named phase of one timer.

    Entering is one clock read and one store: the check for the timer's very first phase
    entry lives in :class:`_FirstPhase`, the class every phase has until that entry.
    """

    __slots__ = ("_timer", "_acc", "_slot", "_t0", "name")

    def __init__(self, timer: "SamplingTimer", slot: int, name: str):
        self._timer = timer
        self._acc = timer._acc  # the timer's per-step accumulator, reset in place by step()
        self._slot = slot
        self._t0 = 0
        self.name = name

    def __enter__(self):
        self._t0 = _now()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._acc[self._slot] += _now() - self._t0
        return False


class _FirstPhase(_Phase):
    """A phase of a timer whose first step has not begun: entering it starts that step."""

    __slots__ = ()

    def __enter__(self):
        t = _now()
        self._t0 = t
        timer = self._timer
        if timer._step_t0 is None:  # the very first step starts at its first phase
            timer._step_t0 = t
        for p in timer._phases.values():  # from now on every phase takes the short path
            p.__class__ = _Phase
        return self


class _Wait:
    __slots__ = ("_timer", "_t0")

    def __init__(self, timer):
        self._timer = timer
        self._t0 = 0

    def __enter__(self):
        self._t0 = _now()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._timer._wait_acc += _now() - self._t0
        return False


class _Compute:
    __slots__ = ("_timer", "_t0")

    def __init__(self, timer):
        self._timer = timer
        self._t0 = 0

    def __enter__(self):
        self._t0 = _now()
        return self

    def __exit__(self, exc_type, exc, tb):
        t = _now()
        timer = self._timer
        timer._tbuf.extend((t - timer._origin, timer._wait_acc, t - self._t0))
        timer._wait_acc = 0
        timer._titers += 1
        if timer._titers >= timer._flush_every or t >= timer._flush_due:
            timer.flush()
        return False


class SamplingTimer:
    """Times sampling phases per step and the trainer's wait for samples.

    ``warmup_steps``: steps (and trainer steps) the summaries leave out; recorded in every
    report so ``qg-audit profile`` uses it unless told otherwise.
    ``name``/``role``: label this timer in per-process rows ("sampler", "rollout-3").
    ``flush_every``/``flush_s``: under qg-audit, send buffered rows every N steps or S
    seconds, whichever comes first. ``print_every``: standalone, print a summary every N
    steps (0 = only at exit). ``stream``: where standalone summaries go (default stderr).
    """

    def __init__(self, warmup_steps: int = 0, *, name: str = "sampler", role: str | None = None,
                 flush_every: int = 1024, flush_s: float = 1.0, print_every: int = 100, stream=None):
        if warmup_steps < 0 or flush_every < 1 or print_every < 0:
            raise ValueError("warmup_steps and print_every must be >= 0, flush_every >= 1")
        self.name = name
        self.role = role
        self.warmup_steps = int(warmup_steps)
        self._reporting = report.enabled()
        self._flush_every = flush_every if self._reporting else (print_every or sys.maxsize)
        self._flush_ns = int(flush_s * 1e9) if self._reporting else sys.maxsize
        self._stream = stream
        self._origin = _now()
        self._t0_wall = time.time()
        self._flush_due = self._origin + self._flush_ns
        self._names: list[str] = []
        self._phases: dict[str, _Phase] = {}
        self._acc: list[int] = [0] * _HEAD
        self._zeros: list[int] = [0] * _HEAD
        # flat step rows, width _HEAD + len(_names), no object per step; a list: list.extend was
        # measured several times cheaper per step than array.fromlist, and flush packs it once
        self._buf: list[int] = []
        self._nrows = 0
        self._step_t0: int | None = None
        self._steps_sent = 0  # index of the first buffered row
        self._wait_acc = 0
        self._tbuf: list[int] = []
        self._titers = 0
        self._iters_sent = 0
        self._wait_ctx = _Wait(self)
        self._compute_ctx = _Compute(self)
        self._stack: list[_Phase] = []
        self._lock = threading.Lock()  # flush may run from atexit while a thread steps
        _live.add(self)
        _install_exit_hooks()

    # -- sampler side -------------------------------------------------------------------
    def phase(self, name: str) -> _Phase:
        """A context object timing one phase of the current step; cached per name."""
        p = self._phases.get(name)
        if p is None:
            p = self._new_phase(name)
        return p

    def begin(self, name: str) -> None:
        """Start a phase without a ``with`` block; close it with :meth:`end`."""
        p = self._phases.get(name) or self._new_phase(name)
        self._stack.append(p)
        p.__enter__()

    def end(self) -> None:
        self._stack.pop().__exit__(None, None, None)

    def step(self, samples: int = 1) -> None:
        """Close the current sampling step; ``samples`` is how many samples it produced."""
        t = _now()
        t0 = self._step_t0
        acc = self._acc
        acc[0] = t - (self._origin if t0 is None else t0)  # no phase yet: since the timer was made
        acc[1] = samples if samples.__class__ is int else int(samples)  # a float or an array scalar
        self._buf.extend(acc)
        acc[:] = self._zeros
        self._step_t0 = t
        self._nrows += 1
        if self._nrows >= self._flush_every or t >= self._flush_due:
            self.flush()

    # -- trainer side -------------------------------------------------------------------
    def wait(self) -> _Wait:
        """Context timing the trainer's wait for samples (e.g. ``sampler.get(...)``)."""
        return self._wait_ctx

    def compute(self) -> _Compute:
        """Context timing one training step; leaving it closes one trainer row."""
        return self._compute_ctx

    # -- output -------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return self._steps_sent + self._nrows

    def flush(self) -> None:
        """Send (under qg-audit) or print (standalone) what was buffered since the last flush."""
        with self._lock:
            buf, self._buf = self._buf, []
            tbuf, self._tbuf = self._tbuf, []
            nrows, niters = self._nrows, self._titers
            self._nrows = self._titers = 0
            first_step, first_iter = self._steps_sent, self._iters_sent
            last_end = (self._step_t0 or self._origin) - self._origin
            self._steps_sent += nrows
            self._iters_sent += niters
            self._flush_due = _now() + self._flush_ns
            names = list(self._names)
        if not nrows and not niters:
            return
        if self._reporting:
            width = _HEAD + len(names)
            end0 = last_end - sum(buf[width::width])  # the first row's end: later rows chain on it
            enc, steps = _pack(buf)
            tenc, trainer = _pack(tbuf)
            report.emit("timing", timer=self.name, role=self.role, t0=self._t0_wall,
                        warmup_steps=self.warmup_steps, phases=names, encoding=enc, first_step=first_step,
                        end_ns=end0, steps=steps, first_iter=first_iter, trainer_encoding=tenc, trainer=trainer)
        else:
            line = self._summary_line(names, buf, first_step, tbuf, first_iter)
            if line:
                print(line, file=self._stream or sys.stderr, flush=True)

    def close(self) -> None:
        """Flush now and leave the exit-time flush list (the timer stays usable)."""
        self.flush()
        _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    # -- internals ----------------------------------------------------------------------
    def _new_phase(self, name: str) -> _Phase:
        if not isinstance(name, str) or not name:
            raise ValueError("a phase name is a non-empty string")
        with self._lock:
            width = _HEAD + len(self._names)
            if self._nrows:  # rare: a phase first seen mid-batch; widen the buffered rows
                old, self._buf = self._buf, []
                for i in range(0, len(old), width):
                    self._buf.extend(old[i:i + width])
                    self._buf.append(0)
            self._names.append(name)
            self._acc.append(0)
            self._zeros.append(0)
        p = (_Phase if self._step_t0 is not None else _FirstPhase)(self, width, name)
        self._phases[name] = p
        return p

    def _summary_line(self, names, buf, first_step, tbuf, first_iter) -> str:
        """One stderr line over the steady rows of this batch (warm-up steps left out).

        Column sums over strided slices of the flat buffers: no object per row.
        """
        width = _HEAD + len(names)
        skip = max(0, self.warmup_steps - first_step)
        rows = buf[skip * width:]
        tskip = max(0, self.warmup_steps - first_iter)
        trows = tbuf[tskip * _TRAINER_WIDTH:]
        parts = []
        n = len(rows) // width
        if n:
            step_ns = sum(rows[0::width])
            samples = sum(rows[1::width])
            lo = first_step + skip + 1
            parts.append(f"steps {lo}-{lo + n - 1}")
            for i, name in enumerate(names):
                total = sum(rows[_HEAD + i::width])
                share = total / step_ns if step_ns else 0.0
                parts.append(f"{name}={total / n / 1e6:.2f}ms({share:.0%})")
            parts.append(f"step={step_ns / n / 1e6:.2f}ms")
            if step_ns:
                parts.append(f"{samples / (step_ns / 1e9):.0f} samples/s")
        k = len(trows) // _TRAINER_WIDTH
        if k:
            wait = sum(trows[1::_TRAINER_WIDTH])
            comp = sum(trows[2::_TRAINER_WIDTH])
            ratio = wait / (wait + comp) if wait + comp else 0.0
            parts.append(f"wait={wait / k / 1e6:.2f}ms compute={comp / k / 1e6:.2f}ms wait-ratio={ratio:.0%}")
        if not parts:
            return ""
        basis = f"steady, first {self.warmup_steps} excluded" if self.warmup_steps else "all steps"
        return f"qg-audit timing [{self.name}, {basis}]: " + " ".join(parts)


# -- exit and fork handling ------------------------------------------------------------
# Every live timer flushes at interpreter exit (atexit) and at multiprocessing-child exit
# (children leave through os._exit after running multiprocessing's finalizers, not atexit).
# A forked child drops the rows it inherited, so they are not reported twice.
_live: "weakref.WeakSet[SamplingTimer]" = weakref.WeakSet()
_hooked_pid: int | None = None


def _flush_all() -> None:
    for timer in list(_live):
        try:
            timer.flush()
        except Exception:  # never turn the user's clean exit into a traceback
            pass


class _ForkToken:
    pass


_fork_token = _ForkToken()


def _install_exit_hooks() -> None:
    global _hooked_pid
    pid = os.getpid()
    if _hooked_pid == pid:
        return
    if _hooked_pid is None:
        atexit.register(_flush_all)  # inherited by forked children along with the registry
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_child)
    _hooked_pid = pid
    _hook_multiprocessing()


def _hook_multiprocessing() -> None:
    """Flush from multiprocessing's exit finalizers too: its children leave via os._exit.

    Only where multiprocessing is already loaded (always so in its children), so a plain
    script does not pay for importing it.
    """
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(None, _flush_all, exitpriority=100)


def _after_fork_child() -> None:
    global _hooked_pid
    _hooked_pid = os.getpid()
    for timer in list(_live):
        timer._lock = threading.Lock()
        timer._steps_sent += timer._nrows
        timer._iters_sent += timer._titers
        timer._buf = []
        timer._tbuf = []
        timer._nrows = timer._titers = 0
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        # A multiprocessing child clears the finalizers it inherited, then runs these hooks.
        mp_util.register_after_fork(_fork_token, lambda _token: _hook_multiprocessing())

"""Verdicts: what the run shows about the expected parallelism, with stable codes.

Codes (a contract, see docs/verify.md): pass, under-used (both exit 0); fallback, partial,
excess, threads-not-processes, value-mismatch, workers-died, pending, no-workers, timeout (exit 1);
target-failed (exit 3). Each failing reason says what most likely happened and what to
check next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.exitcodes import EXIT_FINDINGS, EXIT_OK, EXIT_TARGET
from auditor.runtime.classify import catalogue
from auditor.runtime.session import RunResult

# Most severe first: the verdict is the first code of this list that any reason has.
SEVERITY = ["target-failed", "no-workers", "fallback", "threads-not-processes", "partial", "excess",
            "workers-died", "value-mismatch", "pending", "timeout", "under-used", "pass"]
PASSING = {"pass", "under-used"}


@dataclass
class Expectation:
    workers: int
    threads: int | None = None
    key: str | None = None  # with --expect-from: the key whose value workers should report
    source: str = "--expect-workers"


@dataclass
class Verdict:
    code: str
    reasons: list[dict] = field(default_factory=list)  # {code, message}
    observed_workers: int = 0  # peak worker count in the steady window

    @property
    def exit_code(self) -> int:
        if self.code == "target-failed":
            return EXIT_TARGET
        return EXIT_OK if self.code in PASSING else EXIT_FINDINGS


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _count_values(rec: dict, exp: Expectation) -> dict:
    values = rec.get("values") or {}
    if not isinstance(values, dict):
        return {}
    cat = catalogue()
    if exp.key:
        leaf = exp.key.rsplit(".", 1)[-1]
        return {k: v for k, v in values.items() if k == leaf or k == exp.key}
    return {k: v for k, v in values.items() if cat.is_count_key(k) and k != "worker_id"}


def judge(result: RunResult, exp: Expectation, *, warmup: float = 0.0, pending_grace: float = 1.0,
          died_grace: float = 1.0) -> Verdict:
    n = exp.workers
    reasons: list[dict] = []

    def add(code, message):
        reasons.append({"code": code, "message": message})

    if not result.started:
        add("target-failed", f"{result.error or 'the target could not start'}. Next: check the command "
                             f"after '--' runs on its own.")
        return Verdict("target-failed", reasons)
    if result.returncode not in (None, 0):
        tail = _last_line(result.stderr_tail)
        add("target-failed", f"the target exited with code {result.returncode} after {result.duration_s:.1f}s, "
                             f"before a verdict" + (f": {tail}" if tail else "")
            + ". Next: run the command on its own and fix that error first.")
        return Verdict("target-failed", reasons)

    window = [s for s in result.samples if s["t"] >= warmup] or result.samples
    w = max((s["workers"] for s in window), default=0)
    workers = [p for p in result.processes if p.role == "worker"]
    pools = [r for r in result.reports if r.get("type") == "pool"]
    worker_reports = [r for r in result.reports if r.get("type") == "worker"]
    serial = [p for p in pools if p.get("serial")]
    thread_pools = [p for p in pools if p.get("threads") and (p.get("size") or 0) >= max(2, n)]
    lazy = [p for p in pools if p.get("lazy") and (p.get("size") or 0) >= n]
    biggest_threads = max((p.threads_peak for p in result.processes), default=0)
    hook_evidence = bool(pools or worker_reports)

    def threads_line():
        if thread_pools:
            p = thread_pools[0]
            return (f"a {p.get('backend')}({p.get('size')}) runs the work in threads of one process, "
                    f"which share one core for Python code under the GIL")
        return f"one process reached {biggest_threads} threads while {w} worker processes ran"

    reported_counts = {v for r in worker_reports for v in _count_values(r, exp).values() if isinstance(v, int)}

    if w == 0:
        if serial:
            p = serial[0]
            add("fallback", f"{p.get('backend')} ran {p.get('size')} in the target process itself: no worker "
                            f"processes where {n} were expected. Next: switch to the parallel backend "
                            f"(AsyncVectorEnv, num_workers > 0) or check which setting chose the serial one.")
        elif thread_pools or (not hook_evidence and biggest_threads >= n + 1 and n > 1):
            add("threads-not-processes", f"{threads_line()}; {n} processes were expected. Next: use processes "
                                         f"(ProcessPoolExecutor, multiprocessing) for CPU-bound sampling.")
        else:
            add("no-workers", f"no worker process appeared in {result.duration_s:.1f}s where {n} were expected: "
                              f"the program may run serially, or start its workers later. Next: raise "
                              f"--duration/--warmup, or pass --match REGEX if workers are started another way.")
    elif w < n and lazy:
        p = lazy[0]
        add("under-used", f"{p.get('backend')}(max_workers={p.get('size')}) started {w} workers: it starts "
                          f"workers on demand and the work submitted needed no more. Not a fallback.")
    elif w == 1 and n > 1:
        if thread_pools:
            add("threads-not-processes", f"{threads_line()}; {n} processes were expected. Next: use processes.")
        else:
            add("fallback", f"1 worker process ran where {n} were expected: the setting most likely did not "
                            f"reach the code (a misspelt or overridden key, so the code's default of 1 ran). "
                            f"Next: run 'qg-audit scan' on the project and check where the count is read.")
    elif w < n:
        if reported_counts == {w}:
            add("fallback", f"{w} worker processes ran and they report {w}, where {n} were expected: the code "
                            f"ran with another value (its default or an override). Next: run 'qg-audit scan' "
                            f"and check where the count is read.")
        else:
            add("partial", f"{w} of {n} worker processes ran: a cap (min(), os.cpu_count()), a failed start or a "
                           f"resource limit most likely cut the count. Next: check the target's stderr and caps "
                           f"on the setting.")
    elif w > n:
        add("excess", f"{w} worker processes ran where {n} were expected: nested pools or a second backend "
                      f"(e.g. DataLoader workers inside each env worker) most likely multiply the count. "
                      f"Next: look at each worker's backend with --format json.")

    # Values the workers received.
    wrong = [(r, k, v) for r in worker_reports for k, v in _count_values(r, exp).items() if v != n]
    if wrong and not any(x["code"] == "fallback" and reported_counts == {w} for x in reasons):
        r, k, v = wrong[0]
        more = f" (and {len(wrong) - 1} more reports)" if len(wrong) > 1 else ""
        add("value-mismatch", f"worker {r.get('pid')} reports {k}={v!r} where {n} was expected{more}: the value "
                              f"the workers received differs from the configuration. Next: look for overrides "
                              f"between config load and worker start ('qg-audit scan').")

    # Workers that died in the steady window while the target kept running.
    died = _died(window, w, died_grace, target_exited=result.returncode is not None)
    if died:
        t_drop, low = died
        add("workers-died", f"the worker count fell from {w} to {low} at t={t_drop:.1f}s while the target kept "
                            f"running: workers crashed or were killed. Next: check the target's stderr, and "
                            f"dmesg for OOM kills.")

    # Workers that never reported, where reporting is in use.
    if result.hook_active or worker_reports:
        reported = {r.get("pid") for r in result.reports}
        rules = {r.id: r for r in catalogue().rules}
        silent = [p for p in workers if p.pid not in reported and p.rule in rules and rules[p.rule].reports
                  and p.last_seen - p.first_seen >= pending_grace]
        if silent:
            pids = ", ".join(str(p.pid) for p in silent[:5])
            add("pending", f"{len(silent)} worker(s) ({pids}) ran {pending_grace:.1f}s or more without a report: "
                           f"they may be stuck starting up (imports, CUDA init) or never run the code that "
                           f"reports. Next: check them with py-spy dump --pid PID.")

    if exp.threads is not None:
        procs = workers or [p for p in result.processes if p.role == "target"]
        seen = max((p.threads_peak for p in procs), default=0)
        if seen < exp.threads:
            add("fallback", f"at most {seen} threads per process where {exp.threads} were expected: a thread "
                            f"setting (OMP_NUM_THREADS, torch.set_num_threads) most likely capped them. Next: "
                            f"check thread environment variables in the launch script.")

    if not reasons:
        add("pass", f"{w} worker processes ran as expected ({n})")
    if result.timed_out:
        # Documented (docs/verify.md): a run cut by --timeout fails, even with the right worker
        # count, because a sampler that should have finished did not; a long-running one is
        # watched with --duration instead, which is a normal end.
        add("timeout", f"the target was still running when --timeout ended it after {result.duration_s:.1f}s: "
                       f"it hung or is slower than expected; the worker counts were judged on what ran until "
                       f"then. Next: raise --timeout, or watch a long-running sampler with --duration S.")
    code = next(c for c in SEVERITY if any(r["code"] == c for r in reasons))
    return Verdict(code, reasons, w)


def _died(window: list[dict], peak: int, grace: float, target_exited: bool) -> tuple[float, int] | None:
    if peak == 0:
        return None
    samples = window[:-1] if target_exited else window  # the last sample is the target's own shutdown
    reached = False
    drop_t = None
    for s in samples:
        if s["workers"] >= peak:
            reached, drop_t = True, None
        elif reached and drop_t is None:
            drop_t = s["t"]
    if drop_t is None:
        return None
    last = samples[-1]
    if last["t"] - drop_t >= grace:
        return drop_t, min(s["workers"] for s in samples if s["t"] >= drop_t)
    return None


count_values = _count_values  # public name: ray_verify (issue 7) compares reports the same way

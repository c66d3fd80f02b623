"""Verdicts: what the run shows about the expected parallelism, with stable codes.

Codes (a contract, see docs/verify.md): pass, under-used (both exit 0); fallback, partial,
excess, threads-not-processes, value-mismatch, oversubscribed, workers-died, pending,
no-workers, timeout (exit 1); target-failed (exit 3). idle-workers is a note: it is listed among the
reasons but never becomes the verdict. Each failing reason says what most likely happened
and what to check next.

With a distributed launcher in the tree (torchrun, accelerate launch, deepspeed, mpirun ...)
the expected count is the number of ranks, and --expect-per-rank checks the workers inside
each rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.exitcodes import EXIT_FINDINGS, EXIT_OK, EXIT_TARGET
from auditor.runtime.classify import catalogue, library_pool, rule_by_id
from auditor.runtime.session import RunResult

# Most severe first: the verdict is the first code of this list that any reason has.
SEVERITY = ["target-failed", "no-workers", "fallback", "threads-not-processes", "partial", "excess",
            "workers-died", "value-mismatch", "oversubscribed", "pending", "timeout", "under-used", "pass"]
PASSING = {"pass", "under-used"}
NOTES = {"idle-workers", "ignored-reports"}  # shown with the reasons, never the verdict
IDLE_SHARE = 0.10  # a worker using at most this share of one core in the steady window is idle


@dataclass
class Expectation:
    workers: int | None  # None: only --expect-threads (and --expect-per-rank) are checked
    threads: int | None = None
    key: str | None = None  # with --expect-from: the key whose value workers should report
    source: str = "--expect-workers"
    per_rank: int | None = None  # --expect-per-rank: workers inside each rank


@dataclass
class Verdict:
    code: str
    reasons: list[dict] = field(default_factory=list)  # {code, message}
    observed_workers: int = 0  # peak worker count in the steady window (ranks, under a launcher)
    counted: str = "workers"  # "workers" or "ranks"
    basis: str = "census"  # always "census": reports never count workers (kept for the JSON schema)
    launcher: str | None = None  # the distributed launcher seen in the tree
    per_rank: list[dict] = field(default_factory=list)  # {pid, rank, workers, world_size}
    threads: list[dict] = field(default_factory=list)  # {pid, role, threads, setter} per judged process
    ignored_reports: int = 0  # report lines from pids the census never saw: not judged

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

    ev = _Evidence(result, warmup)
    out = Verdict("pass", reasons, launcher=ev.launcher.launcher if ev.launcher else None,
                  counted="ranks" if ev.launcher else "workers", ignored_reports=len(ev.strangers))
    if n is not None:
        out.observed_workers = _judge_count(ev, exp, add, out)
    if exp.per_rank is not None:
        out.per_rank = _judge_per_rank(ev, exp.per_rank, add)
    elif ev.launcher is not None:
        out.per_rank = [_rank_row(ev, r) for r in ev.ranks]
    if n is not None:
        _note_strangers(ev, add, n, out.observed_workers)
        _judge_values(ev, exp, add, reasons, out.observed_workers)
        died = _died(ev.window, out.observed_workers, died_grace, target_exited=result.returncode is not None,
                     key="ranks" if ev.launcher else "workers")
        # a launcher that exits 0 after its ranks ended saw them all succeed (it exits non-zero otherwise)
        finished = ev.launcher is not None and result.returncode == 0
        if died and not finished and not _ended_normally(ev, died[0]):
            t_drop, low = died
            what = "rank" if ev.launcher else "worker"
            add("workers-died", f"the {what} count fell from {out.observed_workers} to {low} at t={t_drop:.1f}s "
                                f"while the target kept running: {what}s crashed or were killed. Next: read the "
                                f"target's output below (its stderr names a worker's traceback), and dmesg for "
                                f"OOM kills.")
        _judge_pending(ev, add, pending_grace)
    if exp.threads is not None:
        out.threads = _judge_threads(ev, exp.threads, add)
    _judge_cpus(ev, add)
    _note_idle(ev, add)

    failing = [r for r in reasons if r["code"] not in NOTES]
    if not failing:
        if n is not None:
            what = "ranks" if ev.launcher else "worker processes"
            reasons.insert(0, {"code": "pass", "message": f"{out.observed_workers} {what} ran as expected ({n})"})
        else:
            wants = ([f"{exp.threads} compute threads per process"] if exp.threads is not None else []) + \
                    ([f"{exp.per_rank} workers in each rank"] if exp.per_rank is not None else [])
            reasons.insert(0, {"code": "pass", "message": f"{' and '.join(wants)} ran as expected"})
    if result.timed_out:
        # Documented (docs/verify.md): a run cut by --timeout fails, even with the right worker
        # count, because a sampler that should have finished did not; a long-running one is
        # watched with --duration instead, which is a normal end.
        add("timeout", f"the target was still running when --timeout ended it after {result.duration_s:.1f} s"
                       f"{_teardown(result)}: "
                       f"it hung or is slower than expected; the counts were judged on what ran until then. "
                       f"Next: raise --timeout, or watch a long-running sampler with --duration S.")
    out.code = next(c for c in SEVERITY if any(r["code"] == c for r in reasons))
    return out


def _ended_normally(ev: "_Evidence", t_drop: float) -> bool:
    """Every worker that went away from the drop on reported a clean exit (its function returned)."""
    exits = {r.get("pid"): r.get("exitcode") for r in ev.reports if r.get("type") == "worker-exit"}
    last = ev.window[-1]["t"] if ev.window else 0.0
    vanished = [p for p in ev.workers if p.last_seen < last and p.last_seen >= t_drop - 1.0 and p.rank_of != p.pid]
    return bool(vanished) and all(exits.get(p.pid) == 0 for p in vanished)


class _Evidence:
    """What one run shows, indexed once for the checks below."""

    def __init__(self, result: RunResult, warmup: float):
        self.result = result
        ready_at = result.ready.at
        self.ready = ready_at is not None
        start = (ready_at or 0.0) + warmup  # the steady window starts --warmup after the job was ready
        self.window = [s for s in result.samples if s["t"] >= start] or result.samples
        self.warmup = start if any(s["t"] >= start for s in result.samples) else 0.0
        self.rows = result.processes
        self.by_pid = {p.pid: p for p in self.rows}
        self.target = next((p for p in self.rows if p.role == "target"), None)
        self.launcher = next((rule_by_id(p.rule) for p in self.rows
                              if rule_by_id(p.rule) is not None and rule_by_id(p.rule).launcher), None)
        self.launcher_row = next((p for p in self.rows if rule_by_id(p.rule) is self.launcher), None) \
            if self.launcher else None
        self.ranks = [p for p in self.rows if p.rank_of == p.pid]
        self.workers = [p for p in self.rows if p.role == "worker"]
        # Reports add values and identities to the processes the census saw; a report from a pid
        # that was never a member of the tree (a forgery, or a process that lived between two
        # polls) is set aside and counted: reports never count workers by themselves.
        self.reports, self.strangers = member_reports(result)
        self.pools = [r for r in self.reports if r.get("type") == "pool"]
        self.worker_reports = [r for r in self.reports if r.get("type") == "worker"]
        self.rank_reports = {r.get("pid"): r for r in self.reports if r.get("type") == "rank"}
        self.loaded_env = {r.get("pid"): r.get("env") or {} for r in self.reports
                           if r.get("type") == "hook" and r.get("event") == "loaded"}
        self.thread_sets: dict[int, dict] = {}  # pid -> its last torch.set_num_threads
        self.thread_defaults: dict[int, dict] = {}  # pid -> torch's count at import, when never set
        for r in self.reports:
            if r.get("type") == "threads" and isinstance(r.get("value"), int):
                (self.thread_defaults if r.get("default") else self.thread_sets)[r.get("pid")] = r

    def user_pools(self, **flags) -> list[dict]:
        return [p for p in self.pools if all(bool(p.get(k)) == v for k, v in flags.items())
                and (p.get("serial") or not library_pool(p))]  # a serial backend is the job's, wherever made

    def not_ready(self) -> str:
        """Why the run ended before the job was ready, or "" when it was ready."""
        if self.ready:
            return ""
        r, st = self.result, self.result.ready
        status = f" ({st.status})" if st.status else ""
        if st.timed_out:
            return f"the job was not ready {st.timeout:g} s after the launch (--ready-timeout){status}"
        if r.returncode is not None:
            return f"the target exited with code {r.returncode} after {r.duration_s:.1f} s, before it was ready{status}"
        return f"the run ended after {r.duration_s:.1f} s, before the job was ready{status}"

    def in_window(self, row) -> bool:
        return row.last_seen >= self.warmup

    def launched(self) -> int | None:
        """The rank count the launcher's command line asks for (--nproc_per_node 2), when given."""
        if self.launcher is None or self.launcher_row is None:
            return None
        return _flag_value(self.launcher_row.cmdline, self.launcher.count_flags)

    def launch_flag(self) -> str:
        value = self.launched()
        if value is None:
            return ""
        flag = next((f for f in self.launcher.count_flags if _flag_value(self.launcher_row.cmdline, (f,)) == value),
                    self.launcher.count_flags[0])
        return f" ({flag} {value})"


def _flag_value(cmdline: list[str], flags) -> int | None:
    for i, arg in enumerate(cmdline):
        for flag in flags:
            if arg == flag and i + 1 < len(cmdline):
                value = cmdline[i + 1]
            elif arg.startswith(flag + "="):
                value = arg[len(flag) + 1:]
            else:
                continue
            return int(value) if value.isdigit() else None
    return None


def _pool_name(p: dict) -> str:
    creator = p.get("creator") if isinstance(p.get("creator"), dict) else {}
    site = f" at {creator['site']}" if creator.get("site") else ""
    return f"{p.get('backend')}({p.get('size')}){site}"


def member_reports(result: RunResult) -> tuple[list[dict], list[dict]]:
    """(reports whose pid was a member of the census when it wrote them, the others).

    A pid matches a member seen with that pid that had started by the report's time (a pid
    reused by a later process does not vouch for an earlier one's report)."""
    started: dict[int, list[float]] = {}
    for p in result.processes:
        started.setdefault(p.pid, []).append(p.create_time)
    members, strangers = [], []
    for r in result.reports:
        pid, t = r.get("pid"), r.get("t")
        times = started.get(pid) if type(pid) is int else None
        if times and (not isinstance(t, (int, float)) or any(c <= t + 1.0 for c in times)):
            members.append(r)
        else:
            strangers.append(r)
    return members, strangers


def _note_strangers(ev: _Evidence, add, n: int, w: int) -> None:
    workers = [r for r in ev.strangers if r.get("type") in ("worker", "worker-exit")]
    if not workers:
        return
    pids = sorted({str(r.get("pid")) for r in workers})
    more = f" and {len(pids) - 5} more" if len(pids) > 5 else ""
    hint = (" A run shorter than the poll interval can end before the census sees its workers: lower "
            "--interval, or watch for longer." if w < n else "")
    add("ignored-reports", f"{len(workers)} worker report(s) came from pids the census never saw in the target's "
                           f"tree ({', '.join(pids[:5])}{more}): they were ignored, since reports never count "
                           f"workers by themselves.{hint}")


def _judge_count(ev: _Evidence, exp: Expectation, add, out: Verdict) -> int:
    n, result = exp.workers, ev.result
    key = "ranks" if ev.launcher else "workers"
    w = max((s.get(key, 0) for s in ev.window), default=0)  # workers alive at one poll: never a sum over time
    serial = ev.user_pools(serial=True)
    thread_pools = [p for p in ev.user_pools(threads=True) if (p.get("size") or 0) >= max(2, n)]
    lazy = [p for p in ev.user_pools(lazy=True) if (p.get("size") or 0) >= n]
    sized = [p for p in ev.user_pools(threads=False, serial=False) if p.get("size") == w]
    biggest_threads = max((p.threads_peak for p in ev.rows), default=0)
    hook_evidence = bool(ev.pools or ev.worker_reports)

    def threads_line():
        if thread_pools:
            p = thread_pools[0]
            return (f"a {_pool_name(p)} runs the work in threads of one process, "
                    f"which share one core for Python code under the GIL")
        return f"one process reached {biggest_threads} threads while {w} worker processes ran"

    if ev.launcher is not None:
        _judge_ranks(ev, n, w, add)
        return w

    reported_counts = {v for r in ev.worker_reports for v in _count_values(r, exp).values() if isinstance(v, int)}
    lone = [r for r in ev.rank_reports.values() if isinstance(r.get("world_size"), int) and r["world_size"] < n]
    if w == 0:
        if lone:
            r = lone[0]
            add("value-mismatch", f"the target ran as rank {r.get('rank')} of a world of {r['world_size']} "
                                  f"(init_process_group at {r.get('site')}) where {n} ranks were expected: it was "
                                  f"started without a launcher. Next: start it with torchrun --nproc_per_node {n} "
                                  f"(or accelerate launch / mpirun -np {n}).")
        elif serial:
            add("fallback", serial_message(_main_serial(serial), f"no worker processes where {n} were expected"))
        elif thread_pools or (not hook_evidence and biggest_threads >= n + 1 and n > 1):
            add("threads-not-processes", f"{threads_line()}; {n} processes were expected. Next: use processes "
                                         f"(ProcessPoolExecutor, multiprocessing) for CPU-bound sampling.")
        elif ev.not_ready():
            add("no-workers", f"no worker process appeared where {n} were expected: {ev.not_ready()}. The program "
                              f"may run serially with a backend the hook does not know, or start its workers "
                              f"later. Next: read the target's output below; raise --ready-timeout if it starts "
                              f"them later, or pass --match REGEX if workers are started another way.")
        else:
            add("no-workers", f"no worker process appeared in the {_window_s(ev):.1f} s after the job was ready "
                              f"({result.ready.why}) where {n} were expected: the program may run serially, or start "
                              f"its workers later. Next: raise --duration, or pass --match REGEX if workers are "
                              f"started another way.")
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
        if sized:
            add("excess", f"{w} worker processes ran where {n} were expected: the hook saw {_pool_name(sized[0])} "
                          f"started with {w}, not {n}. Next: check the value passed there ('qg-audit scan').")
        else:
            add("excess", f"{w} worker processes ran where {n} were expected: nested pools or a second backend "
                          f"(e.g. DataLoader workers inside each env worker) most likely multiply the count. "
                          f"Next: look at each worker's backend with --format json.")
    return w


def _judge_ranks(ev: _Evidence, n: int, w: int, add) -> None:
    name, launched, flag = ev.launcher.launcher, ev.launched(), ev.launch_flag()
    hint = f" {ev.launcher.fewer_hint}" if ev.launcher.fewer_hint else ""
    if w == 0:
        add("no-workers", f"{name} started no rank in {ev.result.duration_s:.1f}s where {n} were expected{flag}. "
                          f"Next: raise --duration, and check the launcher's output in the target's stderr.")
    elif w < n and launched is not None and launched < n:
        add("fallback", f"{name} started {w} rank{'s' if w != 1 else ''}{flag} where {n} were expected: the launch "
                        f"command asks for fewer. Next: fix the count in the launch command or script.")
    elif w < n:
        asked = f" although it was asked for {launched}{flag}" if launched is not None and launched >= n else ""
        code = "fallback" if w == 1 else "partial"
        add(code, f"{name} started {w} of {n} ranks{asked}.{hint} Next: check the launcher's flags and the "
                  f"target's stderr for ranks that failed to start.")
    elif w > n:
        add("excess", f"{name} started {w} ranks where {n} were expected{flag}. Next: check the launch command.")


def _rank_row(ev: _Evidence, rank) -> dict:
    inside = [p for p in ev.rows if p.rank_of == rank.pid and p.pid != rank.pid and p.role == "worker"]
    times = [s["t"] for s in ev.window]
    peak = max((sum(1 for p in inside if p.first_seen <= t <= p.last_seen and
                    (p.rule != "mp-fork" or p.last_seen > p.first_seen)) for t in times), default=0)
    reported = ev.rank_reports.get(rank.pid) or {}
    world = reported.get("world_size", rank.dist.get("world_size"))
    backends = sorted({p.backend for p in inside if p.backend})
    return {"pid": rank.pid, "rank": reported.get("rank", rank.dist.get("rank")),
            "local_rank": rank.dist.get("local_rank"), "world_size": world, "workers": peak, "backends": backends}


def _judge_per_rank(ev: _Evidence, per_rank: int, add) -> list[dict]:
    ranks = ev.ranks or ([ev.target] if ev.target is not None else [])
    rows = [_rank_row(ev, r) for r in ranks]
    if ev.target is not None and not ev.ranks:  # no launcher: the target is the only rank
        rows[0]["workers"] = max((s["workers"] for s in ev.window), default=0)
    for row in rows:
        label = f"rank {row['rank']} (pid {row['pid']})" if row["rank"] is not None else f"pid {row['pid']}"
        got = row["workers"]
        if got == per_rank:
            continue
        serial = [p for p in ev.user_pools(serial=True) if p.get("pid") == row["pid"]]
        if got < per_rank and serial:
            add("fallback", f"{label}: " + serial_message(_main_serial(serial),
                                                          f"{per_rank} worker processes per rank were expected"))
        elif got < per_rank:
            add("partial", f"{label} ran {got} worker process{'es' if got != 1 else ''} where {per_rank} per rank "
                           f"were expected. Next: check that every rank reads the same setting.")
        else:
            add("excess", f"{label} ran {got} worker processes where {per_rank} per rank were expected "
                          f"({', '.join(row['backends']) or 'unknown backend'}). Next: look for a second pool.")
    return rows


def _judge_values(ev: _Evidence, exp: Expectation, add, reasons, w: int) -> None:
    n = exp.workers
    if ev.launcher is not None:
        # ranks alive together (a restarted rank is a new process of the same world)
        launched = max((s.get("ranks", 0) for s in ev.result.samples), default=0) or len(ev.ranks)
        for rank in ev.ranks:
            row = _rank_row(ev, rank)
            if isinstance(row["world_size"], int) and row["world_size"] != launched:
                add("value-mismatch", f"rank pid {rank.pid} sees a world of {row['world_size']} where {launched} "
                                      f"ranks were launched: it does not join the others (WORLD_SIZE overridden, "
                                      f"or init_process_group given its own world_size). Next: let the launcher's "
                                      f"environment decide (init_method='env://').")
                break
        return
    reported_counts = {v for r in ev.worker_reports for v in _count_values(r, exp).values() if isinstance(v, int)}
    wrong = [(r, k, v) for r in ev.worker_reports for k, v in _count_values(r, exp).items() if v != n]
    if wrong and not any(x["code"] == "fallback" and reported_counts == {w} for x in reasons):
        r, k, v = wrong[0]
        more = f" (and {len(wrong) - 1} more reports)" if len(wrong) > 1 else ""
        add("value-mismatch", f"worker {r.get('pid')} reports {k}={v!r} where {n} was expected{more}: the value "
                              f"the workers received differs from the configuration. Next: look for overrides "
                              f"between config load and worker start ('qg-audit scan').")


def _judge_pending(ev: _Evidence, add, pending_grace: float) -> None:
    result = ev.result
    if not (result.hook_active or ev.worker_reports):
        return
    reported = {r.get("pid") for r in ev.reports}
    if ev.not_ready():  # what readiness waited for: the worker's own report, not the hook's "loaded"
        reported = {r.get("pid") for r in ev.worker_reports}
    rules = {r.id: r for r in catalogue().rules}
    silent = [p for p in ev.workers if p.pid not in reported and p.rule in rules and rules[p.rule].reports
              and p.last_seen - p.first_seen >= pending_grace]
    if silent:
        pids = ", ".join(str(p.pid) for p in silent[:5])
        if ev.not_ready():
            add("pending", f"{len(silent)} worker(s) ({pids}) never reported: {ev.not_ready()}. They were still "
                           f"starting (importing the main module, torch, CUDA init). Next: raise --ready-timeout "
                           f"on a loaded machine, or check them with py-spy dump --pid PID.")
            return
        add("pending", f"{len(silent)} worker(s) ({pids}) ran {pending_grace:.1f}s or more without a report: "
                       f"they may be stuck starting up (imports, CUDA init) or never run the code that "
                       f"reports. Next: check them with py-spy dump --pid PID.")


def _compute_procs(ev: _Evidence) -> list:
    """The processes whose threads do the job's work: ranks, else workers, else the target."""
    if ev.ranks:
        return ev.ranks
    workers = [p for p in ev.workers if ev.in_window(p)] or ev.workers
    return workers or ([ev.target] if ev.target is not None else [])


def _thread_setting(ev: _Evidence, row) -> tuple[int | None, str]:
    """The compute threads a process was pinned to, and by whom; fork children inherit their parent's."""
    seen = set()
    while row is not None and row.pid not in seen:
        seen.add(row.pid)
        rec = ev.thread_sets.get(row.pid)
        if rec is not None:
            return rec["value"], f"{rec.get('setter')}({rec['value']}) at {rec.get('site')}"
        env = ev.loaded_env.get(row.pid) or {}
        for name in catalogue().thread_env:
            if isinstance(env.get(name), int):
                return env[name], f"{name}={env[name]} in its environment{_env_origin(ev, name, env[name])}"
        rec = ev.thread_defaults.get(row.pid)
        if rec is not None:
            return rec["value"], f"torch's default of {rec['value']} (no torch.set_num_threads, no OMP_NUM_THREADS)"
        if row.pid in ev.loaded_env:  # an exec'd Python process: nothing to inherit
            return None, ""
        row = ev.by_pid.get(row.ppid)
    return None, ""


def _env_origin(ev: _Evidence, name: str, value: int) -> str:
    import os

    launcher = ev.launcher
    if launcher is not None and launcher.sets_env.get(name) == value and name not in os.environ:
        return f" (set by {launcher.launcher} for every rank when the variable is not set)"
    return ""


def _judge_threads(ev: _Evidence, expected: int, add) -> list[dict]:
    rows = []
    for p in _compute_procs(ev):
        value, setter = _thread_setting(ev, p)
        threads = value if value is not None else p.threads_peak
        rows.append({"pid": p.pid, "role": p.role, "threads": threads, "os_threads_peak": p.threads_peak,
                     "setter": setter or None})
    low = [r for r in rows if r["threads"] < expected]
    if low:
        r = low[0]
        who = "the target" if r["role"] == "target" else f"{len(low)} of {len(rows)} processes (first: pid {r['pid']})"
        if r["setter"] and r["setter"].startswith("torch's default"):
            why = f"it ran with {r['setter']}, one per core it may use"
            nxt = f"set torch.set_num_threads({expected}) / OMP_NUM_THREADS={expected}, and give the job the CPUs"
        elif r["setter"]:
            why = f"pinned by {r['setter']}"
            nxt = "remove the pin or raise it"
        else:
            why = "no setter was seen; a thread setting (OMP_NUM_THREADS, torch.set_num_threads) most likely capped them"
            nxt = "check thread environment variables in the launch script"
        add("fallback", f"{who} reached {r['threads']} of the {expected} compute threads per process expected: "
                        f"{why}. Next: {nxt}.")
    return rows


def _judge_cpus(ev: _Evidence, add) -> None:
    """Oversubscribed: more busy threads than CPUs, measured per thread over the steady window
    (auditor/runtime/threadcpu.py), with some process running more than one busy thread.

    The one policy (docs/verify.md "Threads and CPUs"): a worker process runs one compute
    thread; the process that does the math (the learner) runs CPUs - busy workers threads, at
    least one. Idle threads (a worker's unused intra-op pool) never count; many single-threaded
    busy workers on fewer CPUs are a choice (more envs than cores), not a multiplication."""
    limit = ev.result.cpu_limit or {}
    cpus = limit.get("cpus")
    use = ev.result.thread_cpu or {}
    procs = [p for p in use.get("processes") or [] if p["busy"]]
    if not cpus or not procs:
        return
    busy = sum(p["busy"] for p in procs)
    multi = [p for p in procs if p["busy"] > 1]
    if busy <= cpus or not multi:
        return
    workers = [p for p in procs if p["role"] == "worker" and not p["rank"]]
    others = [p for p in procs if p not in workers]
    span = max(ev.result.duration_s - ev.result.window_start, max(p["span_s"] for p in procs))
    parts = [_busy_part(ev, p) for p in others[:3]]
    if len(others) > 3:
        parts.append(f"{len(others) - 3} more processes")
    if workers:
        one = [p for p in workers if p["busy"] == 1]
        many = [p for p in workers if p["busy"] > 1]
        parts += [_busy_part(ev, p) for p in many[:2]]
        if len(many) > 2:
            parts.append(f"{len(many) - 2} more workers of several busy threads")
        if one:
            cores = sum(p["cores"] for p in one) / len(one)
            parts.append(f"{len(one)} worker{'s' if len(one) != 1 else ''} 1 busy thread each "
                         f"({cores:.2f} cores each)")
    busy_workers = sum(1 for p in workers if p["busy"])
    nxt = []
    if any(p in workers for p in multi):
        nxt.append("one compute thread per worker process: OMP_NUM_THREADS=1 in the environment that starts "
                   "them, or torch.set_num_threads(1) in the worker's entry point")
    if any(p in others for p in multi):
        learner = max(1, int(cpus) - busy_workers)
        given = f"CPUs - busy workers = {int(cpus)} - {busy_workers}" if busy_workers else f"{int(cpus)} CPUs"
        if learner == 1:
            nxt.append(f"the process that does the math gets the CPUs the busy workers leave ({given}: one "
                       f"thread): OMP_NUM_THREADS=1 at the top of the script that starts the workers, before "
                       f"it starts them, pins it and the workers alike")
        else:
            nxt.append(f"the process that does the math gets the CPUs the busy workers leave ({given}): "
                       f"torch.set_num_threads({learner}) in it, after the workers start")
    add("oversubscribed", f"{busy} threads of the job were busy (runnable at least {use.get('busy_share', 0.5):.0%} "
                          f"of the {span:.1f} s steady window) on {cpus:g} CPU{'s' if cpus != 1 else ''} "
                          f"({'; '.join(limit.get('from') or [])}): {'; '.join(parts)}. They take turns on the "
                          f"CPUs. Next: {'; and '.join(nxt)}.")


def _busy_part(ev: _Evidence, p: dict) -> str:
    row = ev.by_pid.get(p["pid"])
    if p["rank"]:
        who = f"rank pid {p['pid']}"
    elif p["role"] == "target":
        who = f"the target (pid {p['pid']})"
    elif p["role"] == "worker":
        who = f"worker pid {p['pid']}" + (f" ({p['backend']})" if p["backend"] else "")
    else:
        who = f"pid {p['pid']}" + (f" ({row.name})" if row is not None else "")
    _, setter = _thread_setting(ev, row) if row is not None else (None, "")
    runnable = f", runnable {p['busy_runnable']:.0%} of the time" if p.get("busy_runnable") is not None else ""
    return (f"{who} {p['busy']} busy thread{'s' if p['busy'] != 1 else ''} using {p['cores']:.2f} cores"
            f"{runnable}" + (f" ({setter})" if setter and p["busy"] > 1 else ""))


def _window_s(ev: _Evidence) -> float:
    return max(0.0, (ev.window[-1]["t"] - ev.window[0]["t"]) if ev.window else 0.0)


def _teardown(result: RunResult) -> str:
    return f" (ending its tree took {result.teardown_s:.1f} s more)" if result.teardown_s >= 0.5 else ""


def _main_serial(pools: list[dict]) -> dict:
    """The serial backend that decided: the biggest, the first created on a tie."""
    return max(pools, key=lambda p: p.get("size") if isinstance(p.get("size"), int) else -1)


def serial_message(p: dict, instead: str) -> str:
    """A fallback line naming the serial backend, its count, where the program created it and,
    where the creation shows it, the setting that chose it (rules/workers.yaml serial_backends)."""
    backend = str(p.get("backend") or "a serial backend")
    info = catalogue().serial_backends.get(backend) or {}
    count = p.get("size")
    made = p.get("made") if isinstance(p.get("made"), dict) else {}
    ran = str(info.get("ran") or "ran {count} in the process that created it").format(
        count=count if count is not None else "?")
    site = made.get("site") or ((p.get("creator") or {}).get("site") if isinstance(p.get("creator"), dict) else None)
    where = ""
    if site:
        fn = made.get("function")
        where = f", created at {site}" + (f" in {fn}()" if fn and fn != "<module>" else "")
        callers = made.get("callers") or []
        if callers:
            where += f" (called from {callers[0]})"
    text = f"{backend} {ran} (pid {p.get('pid')}){where}: {instead}."
    chosen = _chosen_by(info, made, count)
    if chosen:
        text += f" Chosen by: {chosen}."
    line = str(made.get("line") or "")
    if line:
        text += f" The line: `{line}`."
    return text + f" Next: {info.get('parallel') or 'switch to the parallel backend'}."


def _chosen_by(info: dict, made: dict, count) -> str:
    line = str(made.get("line") or "")
    functions = {v.get("function") for v in made.get("via") or [] if isinstance(v, dict)}
    for via in info.get("via") or []:
        if via.get("function") in functions:
            kw = via.get("keyword")
            if kw and kw + "=" in line.replace(" ", ""):
                return f"{kw} given at {made.get('site')}"
            return str(via.get("default") or via.get("function"))
    kw = info.get("keyword")
    if kw:
        if kw + "=" in line.replace(" ", ""):
            return f"{kw}={count} passed at {made.get('site')}"
        if line:
            return str(info.get("default") or "")
    return ""


def _note_idle(ev: _Evidence, add) -> None:
    units = ev.ranks or [p for p in ev.workers if p.rank_of is None]
    shares = [(p, p.cpu_share) for p in units if p.cpu_share is not None]
    if not shares or any(share > IDLE_SHARE for _, share in shares):
        return
    mean = sum(share for _, share in shares) / len(shares)
    target = ev.target.cpu_share if ev.target is not None else None
    what = "ranks" if ev.ranks else "workers"
    if target is not None and target > 0.5:
        tail = (f"while the target used {target:.0%} of a core: the workers wait for the target. Next: profile the "
                f"target ('qg-audit profile'); more workers will not help.")
    else:
        tail = ((f"and the target {target:.0%}: " if target is not None else "") +
                "they exist but wait (for the target, I/O, a lock or a simulator). Next: 'qg-audit profile' "
                "to see where a step's time goes.")
    add("idle-workers", f"{len(shares)} {what} used on average {mean:.0%} of a core each in the steady window "
                        f"(each at most {IDLE_SHARE:.0%}) {tail}")


def _died(window: list[dict], peak: int, grace: float, target_exited: bool,
          key: str = "workers") -> tuple[float, int] | None:
    if peak == 0:
        return None
    samples = window[:-1] if target_exited else window  # the last sample is the target's own shutdown
    reached = False
    drop_t = None
    for s in samples:
        if s.get(key, 0) >= peak:
            reached, drop_t = True, None
        elif reached and drop_t is None:
            drop_t = s["t"]
    if drop_t is None:
        return None
    last = samples[-1]
    if last["t"] - drop_t >= grace:
        return drop_t, min(s.get(key, 0) for s in samples if s["t"] >= drop_t)
    return None


count_values = _count_values  # public name: ray_verify (issue 7) compares reports the same way

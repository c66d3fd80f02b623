"""The untimed share explained: where the sampling thread's untimed time went, and whether its
CPUs were contended (docs/profile.md, "The untimed share").

Inputs are what a live ``profile --auto`` run measured: the stack samples of the sampling
threads (auto.stacks: phase, leaf function, program line), the per-thread CPU of every process
of the job over the steady window (auditor.runtime.threadcpu) and torch's thread settings as
the hook reported them. Pure: no I/O.

Intra-op contention is named when all of these hold (the numbers are in the message):

1. a sampling process ran busy threads besides its sampling thread (runnable >= 50% of the
   window: torch's intra-op pool spinning or working), and torch there had more than one
   intra-op thread (its default, OMP_NUM_THREADS, or set_num_threads);
2. the sampling thread waited for a CPU: it ran less than RAN_LOW of the time it was
   runnable (the rest on a run queue), or the job's busy threads exceeded its CPUs;
3. torch work is a large part of the sampling step: the forward share plus the untimed
   samples in torch code reach TORCH_SHARE of the step.

The setting to try is one intra-op thread for the sampling process (OMP_NUM_THREADS=1 in its
environment when launched on this machine; torch.set_num_threads(1) is the in-code
equivalent), then profile again.
"""

from __future__ import annotations

from types import SimpleNamespace

RAN_LOW = 0.8  # the sampling thread ran < 80% of the time it wanted a CPU: it queued for one
TORCH_SHARE = 0.3  # forward + torch calls in the untimed time: at least this share of the step
TOP_FUNCTIONS = 8
TOP_LINES = 5


def _torch_code(function: str) -> bool:
    where = function.rsplit("  ", 1)[-1]
    return where.startswith(("torch/", "torch\\")) or "/torch/" in where


def untimed_functions(stacks: dict | None) -> dict | None:
    """The top functions and program lines of the untimed samples, with their shares."""
    if not stacks:
        return None
    untimed = [t for t in stacks.get("top") or [] if t.get("phase") == "untimed"]
    n = int((stacks.get("samples") or {}).get("untimed") or 0)
    if not n or not untimed:
        return {"samples": n, "functions": [], "lines": [], "torch_share": 0.0,
                "interval_ms": stacks.get("interval_ms")}
    by_fn: dict[str, int] = {}
    line_of: dict[str, dict[str, int]] = {}
    by_line: dict[str, int] = {}
    for t in untimed:
        by_fn[t["function"]] = by_fn.get(t["function"], 0) + t["samples"]
        line_of.setdefault(t["function"], {})
        line_of[t["function"]][t["line"]] = line_of[t["function"]].get(t["line"], 0) + t["samples"]
        by_line[t["line"]] = by_line.get(t["line"], 0) + t["samples"]
    functions = []
    for fn, k in sorted(by_fn.items(), key=lambda kv: -kv[1])[:TOP_FUNCTIONS]:
        line = max(line_of[fn].items(), key=lambda kv: kv[1])[0]
        functions.append({"function": fn, "samples": k, "share": round(k / n, 4), "line": line})
    lines = [{"line": ln, "samples": k, "share": round(k / n, 4)}
             for ln, k in sorted(by_line.items(), key=lambda kv: -kv[1])[:TOP_LINES]]
    torch = sum(k for fn, k in by_fn.items() if _torch_code(fn))
    return {"samples": n, "interval_ms": stacks.get("interval_ms"), "functions": functions, "lines": lines,
            "torch_share": round(torch / n, 4)}


def _torch_threads(records: list[dict]) -> dict[int, dict]:
    """Per pid: torch's intra-op thread count and where it came from (the hook's reports)."""
    out: dict[int, dict] = {}
    env: dict[int, int] = {}
    for r in records:
        pid = r.get("pid")
        if not isinstance(pid, int):
            continue
        if r.get("type") == "hook" and isinstance((r.get("env") or {}).get("OMP_NUM_THREADS"), int):
            env[pid] = r["env"]["OMP_NUM_THREADS"]
        if r.get("type") == "threads" and isinstance(r.get("value"), int):
            setter = "torch default" if r.get("default") else f"{r.get('setter')} at {r.get('site')}"
            if r.get("default") and pid in env:
                setter = f"OMP_NUM_THREADS={env[pid]}"
            out[pid] = {"threads": r["value"], "setter": setter}
    return out


def explain(prof, records: list[dict], thread_cpu: dict | None, cpu_limit: dict | None) -> dict | None:
    """{untimed: untimed_functions(), samplers: [...], contention: {...} or None}; None when
    there is nothing to explain with (no steps)."""
    if not prof.steps:
        return None
    untimed = untimed_functions(prof.stacks)
    cpus = (cpu_limit or {}).get("cpus") or (thread_cpu or {}).get("cpus")
    procs = {p["pid"]: p for p in (thread_cpu or {}).get("processes") or []}
    torch_threads = _torch_threads(records)
    samplers = []
    threads = {}  # (pid, timer) -> tid of each sampling thread (its records carry steps); no decoding needed
    for r in records:
        if r.get("type") == "timing" and r.get("steps") and isinstance(r.get("tid"), int) \
                and isinstance(r.get("pid"), int):
            threads[(r["pid"], str(r.get("timer")))] = r["tid"]
    for (pid, timer), tid in sorted(threads.items()):
        s = SimpleNamespace(pid=pid, tid=tid, timer=timer)
        p = procs.get(s.pid)
        rows = (p or {}).get("thread_rows") or []
        me = next((t for t in rows if t["tid"] == s.tid), None)
        others = [t for t in rows if t["tid"] != s.tid and t["runnable"] >= (thread_cpu or {}).get("busy_share", 0.5)]
        samplers.append({
            "pid": s.pid, "tid": s.tid, "timer": s.timer,
            "threads": (p or {}).get("threads"), "busy": (p or {}).get("busy"), "cores": (p or {}).get("cores"),
            "runnable": me["runnable"] if me else None, "ran": (round(me["cores"] / me["runnable"], 3)
                                                               if me and me["runnable"] else None),
            "busy_others": others,
            "torch_threads": torch_threads.get(s.pid, {}).get("threads"),
            "torch_threads_from": torch_threads.get(s.pid, {}).get("setter"),
        })
    out = {"untimed": untimed, "samplers": samplers, "cpus": cpus,
           "busy_threads": (thread_cpu or {}).get("busy_threads"), "contention": None}
    out["contention"] = _contention(prof, untimed, samplers, cpus, (thread_cpu or {}).get("busy_threads"))
    return out


def _contention(prof, untimed, samplers, cpus, busy_job) -> dict | None:
    fwd = sum(p.share for p in prof.phases if p.name in prof.thresholds.forward_phases)
    torch_untimed = (untimed or {}).get("torch_share", 0.0) * prof.other_share
    torch_share = fwd + torch_untimed
    for s in samplers:
        tt = s["torch_threads"]
        if not s["busy_others"] or (tt is not None and tt <= 1):
            continue
        queued = s["ran"] is not None and s["ran"] < RAN_LOW
        over = cpus is not None and busy_job is not None and busy_job > cpus
        if not (queued or over) or torch_share < TORCH_SHARE:
            continue
        ran = f"it ran {s['ran']:.0%} of the time it was runnable" if s["ran"] is not None else ""
        tt_text = (f"torch's {tt} intra-op threads ({s['torch_threads_from']})" if tt is not None
                   else "torch's intra-op threads")
        others = ", ".join(f"tid {t['tid']} runnable {t['runnable']:.0%}" for t in s["busy_others"][:4])
        fns = ", ".join(f"{f['function'].split('  ')[0]} {f['share']:.0%}"
                        for f in (untimed or {}).get("functions", [])[:3] if _torch_code(f["function"]))
        where = (f"torch calls hold {torch_share:.0%} of the sampling step (forward {fwd:.0%}"
                 + (f", untimed torch calls {torch_untimed:.0%}: {fns}" if fns else "") + ")")
        cpu_text = f"{cpus:g} CPU{'s' if cpus != 1 else ''}" if cpus is not None else "its CPUs"
        message = (f"intra-op contention: sampling process {s['pid']} ran {1 + len(s['busy_others'])} busy threads "
                   f"(the sampling thread, tid {s['tid']}, and {len(s['busy_others'])} more: {others}) with "
                   f"{tt_text} on {cpu_text}"
                   + (f", {busy_job} busy threads in the job" if busy_job is not None else "")
                   + (f"; {ran}" if ran else "") + f"; {where}. Try one intra-op thread for the sampling process: "
                   "OMP_NUM_THREADS=1 in its environment when it is launched on this machine (torch.set_num_threads(1) "
                   "is the in-code equivalent; docs/profile.md 2c says when to keep which), then profile again")
        return {"pid": s["pid"], "tid": s["tid"], "torch_threads": tt, "busy_others": s["busy_others"],
                "ran": s["ran"], "torch_share": round(torch_share, 4), "setting": "OMP_NUM_THREADS=1",
                "message": message}
    return None

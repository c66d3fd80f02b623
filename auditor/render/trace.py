"""Timing records as a Chrome trace (Trace Event Format): opens in Perfetto and chrome://tracing.

One track (tid) per timer and process: a ``step`` slice per sampling step with its phases
nested inside, and ``wait`` / ``compute`` slices per trainer step. Step boundaries and
phase durations are measured; where a phase sits inside its step is not recorded, so
phases are laid end to end from the step's start in the timer's order (automatic timers:
forward, transfer, then the env step that closes the step, which is their real order).
The rest of a step is left empty: that is the untimed part. A training span inside a
sampling step (automatic timers of a collect-then-train loop) is a ``train`` slice ending
where it was measured to end, and that step's phases are laid after it, up to the step's end.
"""

from __future__ import annotations

from auditor.profiling.series import parse_records

MAX_EVENTS = 200_000  # a trace this big already loads slowly; the rest is cut and said so


def _order(series) -> list[int]:
    names = list(series.phases)
    if series.timer.startswith("auto/") and "env" in names:
        return [i for i, n in enumerate(names) if n != "env"] + [names.index("env")]
    return list(range(len(names)))


def _span_ends(s) -> dict[int, int]:
    """Step index -> the end (ns from the timer's origin) of the training span it holds."""
    out, ends = {}, [r.end_ns for r in s.trainer]
    j = 0
    for row in s.steps:
        if not row.train_ns:
            continue
        start = row.end_ns - row.step_ns
        while j < len(ends) and ends[j] < start:
            j += 1
        if j < len(ends) and ends[j] <= row.end_ns:
            out[row.index] = ends[j]
            j += 1
    return out


def render(records: list[dict]) -> dict:
    series, _notes = parse_records(records)
    series = [s for s in series if s.steps or s.trainer]
    base = min((s.t0 for s in series), default=0.0)
    events: list[dict] = []
    meta: list[dict] = []
    cut = False
    pids = set()
    for tid, s in enumerate(series, 1):
        if s.pid not in pids:
            pids.add(s.pid)
            meta.append({"name": "process_name", "ph": "M", "pid": s.pid, "tid": 0, "ts": 0,
                         "args": {"name": f"pid {s.pid}" + (f" ({s.role})" if s.role else "")}})
        meta.append({"name": "thread_name", "ph": "M", "pid": s.pid, "tid": tid, "ts": 0,
                     "args": {"name": s.timer}})
        origin_us = (s.t0 - base) * 1e6
        order = _order(s)
        # the training spans' measured ends, by the step that holds them
        spans = _span_ends(s) if s.alternating else {}
        for row in s.steps:
            if len(events) >= MAX_EVENTS:
                cut = True
                break
            start = origin_us + (row.end_ns - row.step_ns) / 1e3
            events.append({"name": "step", "cat": "sampling", "ph": "X", "pid": s.pid, "tid": tid,
                           "ts": round(start, 3), "dur": round(row.step_ns / 1e3, 3),
                           "args": {"step": row.index + 1, "samples": row.samples,
                                    "warmup": row.index < s.warmup_declared}})
            t = start
            room = None
            if row.train_ns and row.index in spans:
                span_end = origin_us + spans[row.index] / 1e3
                span_end = min(max(span_end, start + row.train_ns / 1e3), start + row.step_ns / 1e3)
                events.append({"name": "train", "cat": "training", "ph": "X", "pid": s.pid, "tid": tid,
                               "ts": round(span_end - row.train_ns / 1e3, 3), "dur": round(row.train_ns / 1e3, 3),
                               "args": {"step": row.index + 1}})
                t = span_end
                room = start + row.step_ns / 1e3 - span_end
            for i in order:
                dur = row.phase_ns[i] / 1e3 if i < len(row.phase_ns) else 0.0
                if room is not None:
                    dur = min(dur, room)
                    room -= dur
                if dur <= 0:
                    continue
                events.append({"name": s.phases[i], "cat": "phase", "ph": "X", "pid": s.pid, "tid": tid,
                               "ts": round(t, 3), "dur": round(dur, 3), "args": {"step": row.index + 1}})
                t += dur
        for row in ([] if s.alternating else s.trainer):  # alternation rows are the train slices above
            if len(events) >= MAX_EVENTS:
                cut = True
                break
            end = origin_us + row.end_ns / 1e3
            comp, wait = row.compute_ns / 1e3, row.wait_ns / 1e3
            events.append({"name": "wait", "cat": "trainer", "ph": "X", "pid": s.pid, "tid": tid,
                           "ts": round(end - comp - wait, 3), "dur": round(wait, 3), "args": {"step": row.index + 1}})
            events.append({"name": "compute", "cat": "trainer", "ph": "X", "pid": s.pid, "tid": tid,
                           "ts": round(end - comp, 3), "dur": round(comp, 3), "args": {"step": row.index + 1}})
    doc = {"traceEvents": meta + events, "displayTimeUnit": "ms",
           "otherData": {"generator": "qg-audit", "origin_unix_s": base,
                         "note": "phase order inside a step is not measured; see auditor/render/trace.py"}}
    if cut:
        doc["otherData"]["truncated"] = f"only the first {MAX_EVENTS} events"
    return doc

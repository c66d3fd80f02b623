"""The sweep table as rows of strings, shared by the text and markdown renderers."""

from __future__ import annotations

from auditor.render.safe import one_line
from auditor.sweep.conclude import fmt_bytes, fmt_rate


def phase_names(sweep) -> list[str]:
    names: list[str] = []
    for r in sweep.results:
        names += [n for n in r.phases_ms if n not in names]
    return names


def rows(sweep) -> tuple[list[str], list[list[str]]]:
    names = phase_names(sweep)
    head = [sweep.variable.name, "samples/s", "min", "max", *[f"{one_line(n)} ms" for n in names], "untimed ms",
            "step ms", "procs", "workers", "RSS peak", "GPU peak", "exit status"]
    body = []
    for r in sweep.results:
        s = r.samples_per_s
        if s["mean"] is None:
            rate = "n/a"
        elif s["stddev"] is None:
            rate = fmt_rate(s["mean"])
        else:
            rate = f"{fmt_rate(s['mean'])} \u00b1 {fmt_rate(s['stddev'])}"
        ph = r.phases_ms
        body.append([r.value, rate, fmt_rate(s["min"]), fmt_rate(s["max"]),
                     *[f"{ph[n]:.2f}" if n in ph else "-" for n in names],
                     f"{r.untimed_ms:.2f}" if r.untimed_ms is not None else "-",
                     f"{r.step_ms:.2f}" if r.step_ms is not None else "-",
                     _int(r.processes), _int(r.workers), fmt_bytes(r.rss_peak_bytes), fmt_bytes(r.gpu_peak_bytes),
                     one_line(r.status_text())])
    return head, body


def _int(x) -> str:
    return "-" if x is None else str(x)

"""Render a sweep as CSV: one row per value, raw numbers (bytes, samples/s), for later comparison."""

from __future__ import annotations

import csv
import io

from auditor.render.safe import one_line
from auditor.render.sweep_table import phase_names


def render(sweep) -> str:
    names = phase_names(sweep)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([sweep.variable.name, "runs", "samples_per_s_mean", "samples_per_s_stddev", "samples_per_s_min",
                "samples_per_s_max", *[f"{one_line(n)}_ms" for n in names], "untimed_ms", "step_ms", "processes",
                "workers", "rss_peak_bytes", "gpu_peak_bytes", "exit_codes", "status"])
    for r in sweep.results:
        s = r.samples_per_s
        w.writerow([r.value, len(r.runs), *(_num(s[k]) for k in ("mean", "stddev", "min", "max")),
                    *(_num(r.phases_ms.get(n)) for n in names), _num(r.untimed_ms), _num(r.step_ms), _num(r.processes),
                    _num(r.workers), _num(r.rss_peak_bytes), _num(r.gpu_peak_bytes),
                    " ".join("-" if c is None else str(c) for c in r.exit_codes), one_line(r.status_text())])
    return buf.getvalue()


def _num(x) -> str:
    return "" if x is None else (f"{x:.6g}" if isinstance(x, float) else str(x))

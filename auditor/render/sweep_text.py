"""Render a sweep for people: fixed context, the table, conclusions, warnings."""

from __future__ import annotations

from auditor.render.safe import text_lines
from auditor.render.sweep_table import rows
from auditor.sweep.conclude import fmt_bytes


def context_lines(sweep) -> list[str]:
    c = sweep.context
    v = c["versions"]
    libs = ", ".join(f"{k} {x}" for k, x in v["libraries"].items()) or "none of the tracked libraries"
    workers = sorted({w for w in c["workers_observed"].values() if w is not None})
    env = ", ".join(f"{k}={x}" for k, x in c["thread_env"].items()) or "none set"
    basis = (f"{c['steps']} steady steps per run" if c["steps"] else
             f"{c['duration_s']:g} s per run" if c["duration_s"] else "each run until the target exits")
    gpu = c["gpu"]
    gpu_text = (f"{', '.join(gpu['devices'])} ({fmt_bytes(gpu['total_bytes'])})" if gpu["present"]
                else "none found (GPU peaks n/a)")
    return [
        f"command:  {' '.join(c['command_template'])}",
        f"fixed:    workers observed {'/'.join(map(str, workers)) or 'n/a'}; thread env {env}; "
        f"{c['cpu_count']} CPUs",
        f"measure:  {basis}, warm-up {c['warmup_steps']}; {c['runs_per_value']} run(s) per value, each a fresh "
        "process",
        f"versions: Python {v['python']} ({v['python_implementation']}); {libs}; qg-audit {v['qg_audit']}",
        f"memory:   limit {fmt_bytes(c['memory_limit_bytes'])} ({c['memory_limit_basis']}); GPU: {gpu_text}",
    ]


def render(sweep) -> str:
    out = [f"qg-audit sweep: {sweep.variable.name} over {', '.join(sweep.variable.values)}"]
    out += context_lines(sweep)
    out.append("")
    head, body = rows(sweep)
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    # first column left-aligned, numbers right-aligned, status left-aligned
    def fmt(cells):
        parts = [cells[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1])]
        parts.append(cells[-1])
        return "  ".join(parts).rstrip()
    out.append(fmt(head))
    out.append("  ".join("-" * w for w in widths))
    out += [fmt(r) for r in body]
    out.append("")
    con = sweep.conclusion
    for ch in con.get("changes", []):
        out.append(ch["line"])
    if con.get("phase_shift"):
        out.append(con["phase_shift"]["line"])
    out.append("conclusion: " + con.get("message", ""))
    for w in sweep.warnings:
        out.append("warning: " + w)
    return text_lines(out)

"""Render a sweep as Markdown (hyperfine's --export-markdown, plus context and conclusion)."""

from __future__ import annotations

from auditor.render.safe import md
from auditor.render.sweep_table import rows
from auditor.render.sweep_text import context_lines


def _cell(s) -> str:
    return md(s)


def render(sweep) -> str:
    head, body = rows(sweep)
    out = [f"## qg-audit sweep: {_cell(sweep.variable.name)}", ""]
    for line in context_lines(sweep):
        label, rest = line.split(":", 1)
        rest = _cell(rest.strip())
        out.append(f"- {label}: {rest}")
    out += ["", "| " + " | ".join(_cell(h) for h in head) + " |",
            "|" + "|".join([":---"] + ["---:"] * (len(head) - 2) + [":---"]) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in body]
    out.append("")
    out += [f"- {_cell(ch['line'])}" for ch in sweep.conclusion.get("changes", [])]
    if sweep.conclusion.get("phase_shift"):
        out.append(f"- {_cell(sweep.conclusion['phase_shift']['line'])}")
    out += ["", f"**Conclusion:** {_cell(sweep.conclusion.get('message', ''))}"]
    if sweep.warnings:
        out += [""] + [f"> warning: {_cell(w)}" for w in sweep.warnings]
    return "\n".join(out) + "\n"

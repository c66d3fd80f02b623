"""Render a diagnosis as Markdown: steps, phases, wait distribution, sweep, knobs, verdict."""

from __future__ import annotations

from auditor.render.safe import md as _c  # every value from the target or the tree: Markdown text, one line


def _bar(share: float, width: int = 30) -> str:
    n = max(0, min(width, round(share * width)))
    return "\u2588" * n + "\u2591" * (width - n)


def render(d) -> str:
    s = d.settings
    out = ["# qg-audit diagnose", "", f"- command: {_c(' '.join(s.command))}"]
    if s.current is not None:
        out.append(f"- {_c('{' + s.name + '}')} = {_c(s.current)} for the profile and verify runs")
    out += [f"- branch: **{_c(d.branch)}**", f"- exit code: {d.exit_code}", "", "## Steps", "",
            "| # | step | status | verdict | finding | next |", "|---:|:---|:---|:---|:---|:---|"]
    for st in d.steps:
        out.append(f"| {st.step} | {_c(st.name)} | {_c(st.status)} | {_c(st.verdict or '')} | {_c(st.message)} "
                   f"| {_c(st.next)} |")
    prof = d.profile
    if prof is not None:
        src = "SamplingTimer" if d.phases_source == "timer" else "automatic (no code change)"
        out += ["", f"## Phases ({src}; {_c(prof.basis)})", "", "| phase | mean ms | p95 ms | share | |",
                "|:---|---:|---:|---:|:---|"]
        for p in prof.phases:
            out.append(f"| {_c(p.name)} | {p.mean_ms:.2f} | {p.p95_ms:.2f} | {p.share:.0%} | `{_bar(p.share)}` |")
        out.append(f"| untimed | | | {prof.other_share:.0%} | `{_bar(prof.other_share)}` |")
        out.append(f"| step | {prof.step.mean_ms:.2f} | {prof.step.p95_ms:.2f} | 100% | |")
        if prof.wait is not None:
            w = prof.wait
            out += ["", "## Trainer wait ratio", "",
                    f"wait/(wait+compute) over {w.windows} window(s) of up to {prof.window} trainer steps: "
                    f"p50 {w.ratio_p50:.0%}, mean {w.ratio_mean:.0%}, p95 {w.ratio_p95:.0%}", "",
                    "| window | wait ratio | |", "|---:|---:|:---|"]
            for i, r in enumerate(w.window_ratios[:50], 1):
                out.append(f"| {i} | {r:.0%} | `{_bar(r, 20)}` |")
    if d.sweep is not None:
        out += ["", f"## Batch sweep ({_c(s.name)})", "", f"| {_c(s.name)} | samples/s | step ms | workers | status |",
                "|---:|---:|---:|---:|:---|"]
        for r in d.sweep.results:
            rate = r.samples_per_s["mean"]
            out.append(f"| {_c(r.value)} | {f'{rate:,.0f}' if rate is not None else '-'} | "
                       f"{f'{r.step_ms:.2f}' if r.step_ms is not None else '-'} | {_c(r.workers)} | {_c(r.status_text())} |")
    if d.scan is not None:
        out += ["", "## Parallelism knobs (scan)", "", "| knob | effective | why |", "|:---|---:|:---|"]
        for k in d.scan.knobs:
            out.append(f"| {_c(k.name)} | {_c(k.effective)} | {_c(k.why)} |")
        for f in d.scan.findings:
            out.append(f"\n- **{_c(f.code)}** ({_c(f.severity)}) {_c(f.file)}:{f.line}: {_c(f.message)}")
    if d.verify is not None:
        v = d.verify
        out += ["", "## Verify", "", f"**{_c(v['verdict'])}**: expected {_c(v['expected']['workers'])} worker "
                f"process(es) ({_c(v['expected']['source'])}), observed {_c(v['observed']['workers'])}", ""]
        out += [f"- {_c(r['message'])}" for r in v["reasons"]]
    out += ["", "## Conclusion", ""] + [f"- {_c(line)}" for line in d.conclusion]
    if prof is not None and prof.notes:
        out += ["", "## Notes", ""] + [f"- {_c(n)}" for n in prof.notes]
    return "\n".join(out) + "\n"

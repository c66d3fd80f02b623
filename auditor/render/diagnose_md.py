"""Render a diagnosis as Markdown: steps, phases, wait distribution, sweep, knobs, verdict."""

from __future__ import annotations

from auditor.render.safe import md as _c  # every value from the target or the tree: Markdown text, one line


def _bar(share: float, width: int = 30) -> str:
    n = max(0, min(width, round(share * width)))
    return "\u2588" * n + "\u2591" * (width - n)


def _tails(stderr, stdout) -> list[str]:
    out = []
    for name, text in (("stderr", stderr), ("stdout", stdout)):
        text = "\n".join((text or "").strip().splitlines()[-15:])
        if text:
            # as quoted Markdown text, each line escaped like every other target value: a fenced
            # block would show raw HTML to a renderer that ignores fences, and a line of it could
            # start a line of the report (`::error ...`); the trailing "  " keeps the line breaks
            out += ["", f"target {name} (last lines):", ""] + [f"> {_c(ln)}  " for ln in text.splitlines()]
    return out


def render(d) -> str:
    from auditor.method.context import lines

    s = d.settings
    out = ["# qg-audit diagnose", "", f"- command: {_c(' '.join(s.command))}"]
    out += [f"- {k}: {_c(v)}" for k, v in lines(d.context)] if d.context else []
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
        if prof.training is not None:
            t = prof.training
            out.append(f"| training (apart, not in the step) | {t.ms_per_step:.2f} | | {t.share:.0%} of the loop | |")
        ex = prof.explanation or {}
        u = ex.get("untimed") or {}
        if u.get("functions"):
            out += ["", f"### Untimed {prof.other_share:.0%} of the step, by function", "",
                    f"{u['samples']} stack samples of the sampling thread(s) every {u['interval_ms']:g} ms.", "",
                    "| share | function | reached from |", "|---:|:---|:---|"]
            for f in u["functions"]:
                name, _sep, where = f["function"].partition("  ")
                out.append(f"| {f['share']:.0%} | `{_c(name)}` {_c(where)} | `{_c(f['line'])}` |")
        tc = (prof.run or {}).get("thread_cpu") or {}
        if tc.get("processes"):
            out += ["", "### Threads and CPU (steady window)", "",
                    f"{tc.get('busy_threads')} busy thread(s) in the job on {tc.get('cpus')} CPU(s).", "",
                    "| pid | role | threads | busy | cores | busiest threads (runnable / ran) |",
                    "|---:|:---|---:|---:|---:|:---|"]
            for proc in tc["processes"][:8]:
                rows = [t for t in proc.get("thread_rows") or [] if t["runnable"] >= 0.05][:4]
                shown = ", ".join(f"{t['tid']} {t['runnable']:.0%}/{t['cores']:.0%}" for t in rows) or "-"
                out.append(f"| {proc['pid']} | {_c(proc['role'])} | {proc['threads']} | {proc['busy']} | "
                           f"{proc['cores']:.2f} | {shown} |")
        if ex.get("contention"):
            out += ["", f"**{_c(ex['contention']['message'])}**"]
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
        for k in d.knob_rows():
            apart = "" if k["runs"] else " (not run by the command)"
            value = f"**{_c(k['effective'])}**" if k["from_command"] else _c(k["effective"])
            out.append(f"| `{_c(k['name'])}`{apart} | {value} | {_c(k['why'])} |")
        if d.entry is not None and d.entry.script is not None:
            out += ["", f"Judged for `{_c(d.entry.script)}` and the {len(d.entry.files) - 1} project file(s) it imports."]
        for f in d.scan.findings:
            if f not in d.elsewhere:
                out.append(f"\n- **{_c(f.code)}** ({_c(f.severity)}) {_c(f.file)}:{f.line}: {_c(f.message)}")
        if d.elsewhere:
            out += ["", "In files the command does not run (not in the exit code):", ""]
            out += [f"- {_c(f.code)} {_c(f.file)}:{f.line}: {_c(f.message)}" for f in d.elsewhere]
    if d.verify is not None:
        v = d.verify
        out += ["", "## Verify", "", f"**{_c(v['verdict'])}**: expected {_c(v['expected']['workers'])} worker "
                f"process(es) ({_c(v['expected']['source'])}), observed {_c(v['observed']['workers'])}", ""]
        out += [f"- {_c(r['message'])}" for r in v["reasons"]]
        if v["exit_code"] != 0:
            out += _tails((v.get("target") or {}).get("stderr_tail"), (v.get("target") or {}).get("stdout_tail"))
    if d.failure_output:
        out += ["", "## Target output (the failed profile run)"]
        out += _tails(d.failure_output.get("stderr_tail"), d.failure_output.get("stdout_tail"))
    out += ["", "## Conclusion", ""] + [f"- {_c(line)}" for line in d.conclusion]
    if prof is not None and prof.notes:
        out += ["", "## Notes", ""] + [f"- {_c(n)}" for n in prof.notes]
    return "\n".join(out) + "\n"

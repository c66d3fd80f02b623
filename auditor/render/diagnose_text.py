"""Render a diagnosis for a terminal: each step, why the next ran or not, the conclusion."""

from __future__ import annotations

from auditor.render.safe import text_lines


def render(d) -> str:
    s = d.settings
    out = [f"qg-audit diagnose: {' '.join(s.command)}"]
    if s.current is not None:
        out.append(f"{{{s.name}}} = {s.current} for the profile and verify runs")
    out.append("")
    for st in d.steps:
        head = f"{st.step}. {st.name:<8}[{st.status}" + (f": {st.verdict}" if st.verdict else "") + "]"
        out.append(f"{head} {st.message}")
        out.append(f"   -> {st.next}")
    prof = d.profile
    if prof is not None:
        out.append("")
        source = "SamplingTimer" if d.phases_source == "timer" else "automatic"
        out.append(f"{'phase':<12}{'mean ms':>9}{'p95 ms':>9}{'share':>8}   ({source})")
        for p in prof.phases:
            out.append(f"{p.name:<12}{p.mean_ms:>9.2f}{p.p95_ms:>9.2f}{p.share:>8.0%}")
        out.append(f"{'untimed':<12}{'':>18}{prof.other_share:>8.0%}")
        out.append(f"{'step':<12}{prof.step.mean_ms:>9.2f}{prof.step.p95_ms:>9.2f}{'100%':>8}")
        if prof.training is not None:
            t = prof.training
            out.append(f"{'training':<12}{t.ms_per_step:>9.2f}{'':>9}{'apart':>8}   ({t.share:.0%} of the loop, not in "
                       "the step)")
        u = (prof.explanation or {}).get("untimed") or {}
        if u.get("functions"):
            out.append(f"untimed by function ({u['samples']} stack samples): " + ", ".join(
                f"{f['function'].split('  ')[0]} {f['share']:.0%}" for f in u["functions"][:5]))
        if prof.wait is not None:
            w = prof.wait
            out.append(f"trainer wait ratio over {w.windows} window(s): p50 {w.ratio_p50:.0%}, mean {w.ratio_mean:.0%}, "
                       f"p95 {w.ratio_p95:.0%}")
    if d.sweep is not None:
        out.append("")
        out.append(f"{s.name:>10}{'samples/s':>12}{'step ms':>9}{'workers':>9}  status")
        for r in d.sweep.results:
            rate = r.samples_per_s["mean"]
            out.append(f"{r.value:>10}{(f'{rate:,.0f}' if rate is not None else '-'):>12}"
                       f"{(f'{r.step_ms:.2f}' if r.step_ms is not None else '-'):>9}{(r.workers if r.workers is not None else '-'):>9}"
                       f"  {r.status_text()}")
    if d.elsewhere:
        out.append("")
        out.append("scan findings in files the command does not run (not in the exit code):")
        out += [f"  {f.code} {f.file}:{f.line} {f.message}" for f in d.elsewhere[:10]]
    tails = []
    if d.failure_output:
        tails.append(("the failed profile run", d.failure_output))
    if d.verify is not None and d.verify["exit_code"] != 0:
        tails.append((f"the verify run, {d.verify['verdict']}", d.verify.get("target") or {}))
    for what, output in tails:
        for name in ("stderr", "stdout"):
            tail = "\n".join((output.get(f"{name}_tail") or "").strip().splitlines()[-15:])
            if tail:
                out.append("")
                out.append(f"--- target {name} ({what}, last lines) ---")
                out.append(tail)
    out.append("")
    out.append(f"branch: {d.branch}")
    for line in d.conclusion:
        out.append(f"conclusion: {line}")
    for note in (prof.notes if prof is not None else []):
        out.append(f"note: {note}")
    return text_lines(out)

"""Render a diagnosis as one self-contained HTML page: inline CSS and SVG, no script, no network.

Sections: the run's context (date, host, CPUs, load, versions), the conclusion, the steps
(with why the next ran or not), phase bars with training apart, the untimed share by
function and the threads, the wait-ratio distribution, the batch sweep plot, the knob table
(names break only at their dots and underscores), the verify verdict, the target's output
under a failure, notes.
"""

from __future__ import annotations

from html import escape

from auditor.render.safe import one_line

COLORS = {"env": "#4e79a7", "fwd": "#f28e2b", "xfer": "#59a14f", "untimed": "#bab0ac"}
PALETTE = ["#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1040px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
code{background:#f3f3f3;padding:1px 4px;border-radius:3px;font-size:12.5px;overflow-wrap:break-word}
code.cmd{word-break:break-all}td.knob{width:26%}td.knob code{word-break:normal;overflow-wrap:normal}
pre{background:#f6f6f6;padding:8px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:320px;overflow:auto}
tr.muted td{color:#777}dl.ctx{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0;font-size:13px}dl.ctx dt{color:#555}dl.ctx dd{margin:0}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f6f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.ran{background:#2e7d32}.skipped{background:#9e9e9e}.failed{background:#c62828}
.bad{background:#c62828}.good{background:#2e7d32}.meh{background:#ef6c00}
.next{color:#555;font-size:12.5px}.muted{color:#666}svg text{font-family:system-ui,sans-serif}
"""


def _e(x) -> str:
    # the same escapes as every other output (render.safe), then HTML's own
    return escape(one_line(str(x)), quote=True)


def _phase_color(name: str, i: int) -> str:
    return COLORS.get(name, PALETTE[i % len(PALETTE)])


def phase_bars(prof) -> str:
    """One stacked bar of the mean step, then one bar per phase, widths by share of step time."""
    parts = [(p.name, p.mean_ms, p.share) for p in prof.phases] + [
        ("untimed", prof.step.mean_ms * prof.other_share, prof.other_share)]
    # training is not part of the sampling step: a row of its own below, sized like one
    training = prof.training
    width, x0, bar_w = 980, 110, 560
    rows = len(parts) + (1 if training is not None else 0)
    h = 40 + 26 * rows + 10
    out = [f'<svg class="phases" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" '
           f'viewBox="0 0 {width} {h}" role="img" aria-label="phase bars">']
    x = x0
    out.append(f'<text x="0" y="22" font-size="12">mean step</text>')
    for i, (name, _ms, share) in enumerate(parts):
        w = bar_w * share
        out.append(f'<rect x="{x:.1f}" y="8" width="{w:.1f}" height="20" fill="{_phase_color(name, i)}">'
                   f'<title>{_e(name)} {share:.0%}</title></rect>')
        x += w
    out.append(f'<text x="{x0 + bar_w + 8}" y="22" font-size="12">{prof.step.mean_ms:.2f} ms</text>')
    for i, (name, ms, share) in enumerate(parts):
        y = 44 + 26 * i
        out.append(f'<text x="0" y="{y + 14}" font-size="12">{_e(name)}</text>')
        out.append(f'<rect x="{x0}" y="{y}" width="{bar_w}" height="18" fill="#f0f0f0"/>')
        out.append(f'<rect x="{x0}" y="{y}" width="{bar_w * share:.1f}" height="18" fill="{_phase_color(name, i)}"/>')
        out.append(f'<text x="{x0 + bar_w + 8}" y="{y + 14}" font-size="12">{ms:.2f} ms ({share:.0%})</text>')
    if training is not None:
        y = 44 + 26 * len(parts)
        ratio = min(1.0, training.ms_per_step / prof.step.mean_ms) if prof.step.mean_ms else 0.0
        out.append(f'<text x="0" y="{y + 14}" font-size="12">training</text>')
        out.append(f'<rect x="{x0}" y="{y}" width="{bar_w}" height="18" fill="#f0f0f0"/>')
        out.append(f'<rect x="{x0}" y="{y}" width="{bar_w * ratio:.1f}" height="18" fill="#9c755f" '
                   f'fill-opacity="0.6"/>')
        out.append(f'<text x="{x0 + bar_w + 8}" y="{y + 14}" font-size="12">{training.ms_per_step:.2f} ms apart '
                   f'({training.share:.0%} of the loop)</text>')
    out.append("</svg>")
    return "".join(out)


def wait_histogram(wait, bins: int = 10) -> str:
    """Windows per wait-ratio bin (0-10%, ..., 90-100%), with p50 and p95 marked."""
    counts = [0] * bins
    for r in wait.window_ratios:
        counts[min(bins - 1, int(r * bins))] += 1
    top = (max(counts) or 1) / 0.8  # headroom: the tallest bar's count stays clear of the p50/p95 labels
    width, height, x0, y0, plot_w, plot_h = 760, 240, 50, 40, 680, 150
    bw = plot_w / bins
    out = [f'<svg class="wait" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="wait ratio distribution">']
    out.append(f'<line x1="{x0}" y1="{y0 + plot_h}" x2="{x0 + plot_w}" y2="{y0 + plot_h}" stroke="#444"/>')
    for i, c in enumerate(counts):
        bh = plot_h * c / top
        out.append(f'<rect x="{x0 + i * bw + 2:.1f}" y="{y0 + plot_h - bh:.1f}" width="{bw - 4:.1f}" height="{bh:.1f}" '
                   f'fill="#4e79a7"><title>{i * 10}-{(i + 1) * 10}%: {c} window(s)</title></rect>')
        if c:
            out.append(f'<text x="{x0 + i * bw + bw / 2:.1f}" y="{y0 + plot_h - bh - 4:.1f}" font-size="11" '
                       f'text-anchor="middle">{c}</text>')
    for i in range(bins + 1):
        out.append(f'<text x="{x0 + i * bw:.1f}" y="{y0 + plot_h + 16}" font-size="11" text-anchor="middle">{i * 10}%</text>')
    for label, v, color in (("p50", wait.ratio_p50, "#c62828"), ("p95", wait.ratio_p95, "#6a1b9a")):
        x = x0 + plot_w * v
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + plot_h}" stroke="{color}" stroke-dasharray="4 3"/>')
        out.append(f'<line x1="{x:.1f}" y1="{y0 - (8 if label == "p50" else 22)}" x2="{x:.1f}" y2="{y0}" stroke="{color}"/>')
        left = label == "p50"  # p50 to the left of its line, p95 to the right: equal values stay legible
        out.append(f'<text x="{x + (-3 if left else 3):.1f}" y="{y0 - (4 if left else 18)}" font-size="11" '
                   f'fill="{color}" text-anchor="{"end" if left else "start"}">{label} {v:.0%}</text>')
    out.append(f'<text x="{x0 + plot_w / 2}" y="{height - 6}" font-size="12" text-anchor="middle">'
               f'wait / (wait + compute) per window of trainer steps ({len(wait.window_ratios)} windows)</text>')
    out.append("</svg>")
    return "".join(out)


def sweep_plot(sweep) -> str:
    """samples/s (mean, with min-max when several runs) against the swept values; stop-at marked."""
    pts = [(r.value, r.samples_per_s) for r in sweep.results if not r.failed]
    if not pts:
        return '<p class="muted">no value was measured</p>'
    width, height, x0, y0, plot_w, plot_h = 760, 280, 70, 20, 660, 200
    top = max((s["max"] if s.get("max") is not None else s["mean"]) for _v, s in pts) * 1.1 or 1.0
    n = len(pts)

    pad = 30  # keep the first and last points and their labels clear of the axes

    def xy(i, v):
        x = x0 + pad + (i * (plot_w - 2 * pad) / (n - 1) if n > 1 else (plot_w - 2 * pad) / 2)
        return x, y0 + plot_h - plot_h * v / top

    out = [f'<svg class="sweep" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="batch sweep">']
    out.append(f'<line x1="{x0}" y1="{y0 + plot_h}" x2="{x0 + plot_w}" y2="{y0 + plot_h}" stroke="#444"/>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + plot_h}" stroke="#444"/>')
    for k in range(5):
        v = top * k / 4
        y = y0 + plot_h - plot_h * k / 4
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{v:,.0f}</text>')
    path = " ".join(f"{'M' if i == 0 else 'L'}{xy(i, s['mean'])[0]:.1f},{xy(i, s['mean'])[1]:.1f}"
                    for i, (_v, s) in enumerate(pts))
    out.append(f'<path d="{path}" fill="none" stroke="#f28e2b" stroke-width="2"/>')
    stop = sweep.conclusion.get("stop_at")
    for i, (value, s) in enumerate(pts):
        x, y = xy(i, s["mean"])
        if s.get("min") is not None and s.get("max") is not None and s["max"] > s["min"]:
            out.append(f'<line x1="{x:.1f}" y1="{xy(i, s["min"])[1]:.1f}" x2="{x:.1f}" y2="{xy(i, s["max"])[1]:.1f}" '
                       f'stroke="#f28e2b"/>')
        fill = "#c62828" if value == stop else "#f28e2b"
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{6 if value == stop else 4}" fill="{fill}">'
                   f'<title>{_e(value)}: {s["mean"]:,.0f} samples/s</title></circle>')
        out.append(f'<text x="{x:.1f}" y="{y - 10:.1f}" font-size="11" text-anchor="middle">{s["mean"]:,.0f}</text>')
        out.append(f'<text x="{x:.1f}" y="{y0 + plot_h + 16}" font-size="12" text-anchor="middle">{_e(value)}</text>')
        if value == stop:
            out.append(f'<text x="{x:.1f}" y="{y0 + plot_h + 30}" font-size="11" fill="#c62828" '
                       f'text-anchor="middle">stop here</text>')
    out.append(f'<text x="{x0 + plot_w / 2}" y="{height - 4}" font-size="12" text-anchor="middle">'
               f'{_e(sweep.variable.name)}</text>')
    out.append(f'<text x="14" y="{y0 + plot_h / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {y0 + plot_h / 2})">samples/s</text>')
    out.append("</svg>")
    return "".join(out)


def _knob_name(name: str) -> str:
    """A knob name that wraps only after its dots and underscores, never mid-word."""
    out = []
    for ch in str(name):
        out.append(_e(ch))
        if ch in "._/":
            out.append("<wbr>")
    return "".join(out)


def _context(d) -> str:
    from auditor.method.context import lines

    if not d.context:
        return ""
    return '<dl class="ctx">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in lines(d.context)) + "</dl>"


def _explained(prof) -> str:
    ex = prof.explanation or {}
    out = []
    u = ex.get("untimed") or {}
    if u.get("functions"):
        out.append(f"<h3>Untimed {prof.other_share:.0%} of the step, by function</h3>"
                   f'<p class="muted">{u["samples"]} stack samples of the sampling thread(s) every '
                   f'{u["interval_ms"]:g} ms; share of the untimed time</p>')
        out.append("<table><tr><th>share</th><th>function</th><th>reached from</th></tr>")
        for f in u["functions"]:
            name, _sep, where = f["function"].partition("  ")
            out.append(f'<tr><td class="num">{f["share"]:.0%}</td><td><code>{_e(name)}</code> '
                       f'<span class="muted">{_e(where)}</span></td><td><code>{_e(f["line"])}</code></td></tr>')
        out.append("</table>")
    tc = (prof.run or {}).get("thread_cpu") or {}
    if tc.get("processes"):
        out.append(f"<h3>Threads and CPU</h3><p class=\"muted\">{_e(tc.get('busy_threads'))} busy thread(s) in the "
                   f"job on {_e(tc.get('cpus'))} CPU(s), steady window; busy = runnable at least half of it</p>")
        out.append("<table><tr><th>pid</th><th>role</th><th>threads</th><th>busy</th><th>cores</th>"
                   "<th>busiest threads (runnable / ran)</th></tr>")
        for proc in tc["processes"][:8]:
            rows = [t for t in proc.get("thread_rows") or [] if t["runnable"] >= 0.05][:4]
            shown = ", ".join(f"{t['tid']} {t['runnable']:.0%}/{t['cores']:.0%}" for t in rows) or "-"
            out.append(f'<tr><td class="num">{proc["pid"]}</td><td>{_e(proc["role"])}</td>'
                       f'<td class="num">{proc["threads"]}</td><td class="num">{proc["busy"]}</td>'
                       f'<td class="num">{proc["cores"]:.2f}</td><td>{_e(shown)}</td></tr>')
        out.append("</table>")
    if ex.get("contention"):
        out.append(f"<p><b>{_e(ex['contention']['message'])}</b></p>")
    return "".join(out)


def _badge(text: str, cls: str) -> str:
    return f'<span class="badge {cls}">{_e(text)}</span>'


def _tails(stderr: str | None, stdout: str | None) -> str:
    out = []
    for name, text in (("stderr", stderr), ("stdout", stdout)):
        text = "\n".join((text or "").strip().splitlines()[-15:])
        if text:
            out.append(f'<p class="muted">target {name} (last lines)</p><pre>{_e(text)}</pre>')
    return "".join(out)


def render(d) -> str:
    s = d.settings
    ok = d.exit_code == 0
    result = "nothing wrong found" if ok else "problem found" if d.exit_code == 1 else "target failed"
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width, initial-scale=1">',
         "<title>qg-audit diagnose</title>", f"<style>{CSS}</style></head><body>",
         "<h1>qg-audit diagnose</h1>",
         f'<p><code class="cmd">{_e(" ".join(s.command))}</code></p>', _context(d),
         f"<p>branch {_badge(d.branch, 'meh' if d.branch != 'target-failed' else 'bad')} &nbsp; "
         f"result {_badge(result, 'good' if ok else 'bad')}"
         f" &nbsp; <span class=\"muted\">exit code {d.exit_code}"
         + (f"; {{{_e(s.name)}}} = {_e(s.current)}" if s.current is not None else "") + "</span></p>"]
    h.append("<h2>Conclusion</h2><ul>" + "".join(f"<li>{_e(c)}</li>" for c in d.conclusion) + "</ul>")
    h.append("<h2>Steps</h2><table><tr><th>#</th><th>step</th><th>status</th><th>finding</th></tr>")
    for st in d.steps:
        verdict = f" <b>{_e(st.verdict)}</b>" if st.verdict else ""
        h.append(f"<tr><td class=\"num\">{st.step}</td><td>{_e(st.name)}</td><td>{_badge(st.status, st.status)}{verdict}</td>"
                 f"<td>{_e(st.message)}<div class=\"next\">&rarr; {_e(st.next)}</div></td></tr>")
    h.append("</table>")
    prof = d.profile
    if prof is not None:
        src = "SamplingTimer phases" if d.phases_source == "timer" else "automatic phases (no code change)"
        h.append(f"<h2>Phases</h2><p class=\"muted\">{_e(src)}; {_e(prof.basis)}; {prof.steps} steady steps"
                 + (f", {prof.samples_per_s:,.1f} samples/s" if prof.samples_per_s is not None else "") + "</p>")
        h.append(phase_bars(prof))
        h.append(_explained(prof))
        h.append("<h2>Trainer wait ratio</h2>")
        if prof.wait is not None:
            w = prof.wait
            h.append(f"<p>p50 {w.ratio_p50:.0%}, mean {w.ratio_mean:.0%}, p95 {w.ratio_p95:.0%}; per trainer step wait "
                     f"{w.wait_ms_mean:.2f} ms, compute {w.compute_ms_mean:.2f} ms ({w.steps} steady trainer steps)</p>")
            h.append(wait_histogram(w))
        else:
            h.append('<p class="muted">no trainer wait was measured</p>')
    h.append("<h2>Batch sweep</h2>")
    if d.sweep is not None:
        h.append(sweep_plot(d.sweep))
        h.append(f"<p>{_e(d.sweep.conclusion.get('message', ''))}</p>")
        h.append(f"<table><tr><th>{_e(s.name)}</th><th>samples/s</th><th>step ms</th><th>workers</th><th>status</th></tr>")
        for r in d.sweep.results:
            rate = r.samples_per_s["mean"]
            shown = f"{rate:,.0f}" if rate is not None else "-"
            h.append(f"<tr><td class=\"num\">{_e(r.value)}</td><td class=\"num\">{shown}</td>"
                     f"<td class=\"num\">{f'{r.step_ms:.2f}' if r.step_ms is not None else '-'}</td>"
                     f"<td class=\"num\">{_e(r.workers)}</td><td>{_e(r.status_text())}</td></tr>")
        h.append("</table>")
    else:
        why = next((st.message for st in d.steps if st.name == "sweep"), "not run")
        h.append(f'<p class="muted">{_e(why)}</p>')
    h.append("<h2>Parallelism knobs</h2>")
    if d.scan is not None:
        if d.entry is not None and d.entry.script is not None:
            h.append(f'<p class="muted">judged for <code>{_e(d.entry.script)}</code> and the '
                     f"{len(d.entry.files) - 1} project file(s) it imports</p>")
        h.append("<table><tr><th>knob</th><th>effective</th><th>why</th></tr>")
        shown_apart = False
        for k in d.knob_rows():
            if not k["runs"] and not shown_apart:
                shown_apart = True
                h.append('<tr><td colspan="3" class="muted">knobs only in files the command does not run:</td></tr>')
            cls = "" if k["runs"] else ' class="muted"'
            h.append(f"<tr{cls}><td class=\"knob\"><code>{_knob_name(k['name'])}</code></td>"
                     f"<td class=\"num\">{'<b>' if k['from_command'] else ''}{_e(k['effective'])}"
                     f"{'</b>' if k['from_command'] else ''}</td><td>{_e(k['why'])}</td></tr>")
        h.append("</table>")
        counted = [f for f in d.scan.findings if f not in d.elsewhere]
        if counted:
            h.append("<ul>" + "".join(f"<li><b>{_e(f.code)}</b> ({_e(f.severity)}) <code>{_e(f.file)}:{f.line}</code> "
                                      f"{_e(f.message)}</li>" for f in counted) + "</ul>")
        if d.elsewhere:
            h.append('<p class="muted">in files the command does not run (not in the exit code):</p><ul class="muted">'
                     + "".join(f"<li><b>{_e(f.code)}</b> <code>{_e(f.file)}:{f.line}</code> {_e(f.message)}</li>"
                               for f in d.elsewhere) + "</ul>")
    else:
        h.append('<p class="muted">the project was not scanned</p>')
    h.append("<h2>Verify</h2>")
    if d.verify is not None:
        v = d.verify
        passed = v["exit_code"] == 0
        h.append(f"<p>{_badge(v['verdict'], 'good' if passed else 'bad')} expected {_e(v['expected']['workers'])} worker "
                 f"process(es) ({_e(v['expected']['source'])}), observed {_e(v['observed']['workers'])}</p>")
        h.append("<ul>" + "".join(f"<li>{_e(r['message'])}</li>" for r in v["reasons"]) + "</ul>")
        if not passed:
            h.append(_tails((v.get("target") or {}).get("stderr_tail"), (v.get("target") or {}).get("stdout_tail")))
    else:
        why = next((st.message for st in d.steps if st.name == "verify"), "not run")
        h.append(f'<p class="muted">{_e(why)}</p>')
    if d.failure_output:
        h.append("<h2>Target output (the failed profile run)</h2>"
                 + _tails(d.failure_output.get("stderr_tail"), d.failure_output.get("stdout_tail")))
    if prof is not None and prof.notes:
        h.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in prof.notes) + "</ul>")
    h.append('<p class="muted">generated by qg-audit diagnose (qg-audit.diagnose/1)</p></body></html>')
    return "\n".join(h) + "\n"

"""verify's text report: the verdict first, then the reasons, then the tree."""

from __future__ import annotations


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def render(result, exp, verdict, *, hook: bool = True) -> str:
    out = []
    out.append(f"verify: {verdict.code.upper()}  expected {exp.workers} workers ({exp.source}), "
               f"saw {verdict.observed_workers} in the steady window (peak {result.peak_workers})")
    for r in verdict.reasons:
        if r["code"] == "pass":
            continue
        out.append(f"  {r['code']}: {r['message']}")
    if result.started:
        ended = ("timeout" if result.timed_out else "duration reached" if result.returncode is None
                 else f"exit code {result.returncode}")
        out.append(f"target: ran {result.duration_s:.1f}s, ended by {ended}; peak {result.peak_processes} "
                   f"processes, {result.peak_threads} threads, {_mib(result.peak_rss_bytes)} RSS")
    rows = [p for p in result.processes if p.role != "other" or len(result.processes) <= 20]
    if rows:
        out.append(f"  {'pid':>7}  {'role':<7} {'backend':<30} {'threads':>7} {'rss':>9}  status")
        for p in rows[:40]:
            out.append(f"  {p.pid:>7}  {p.role:<7} {p.backend[:30]:<30} {p.threads_peak:>7} "
                       f"{_mib(p.rss_peak):>9}  {p.status}")
        if len(rows) > 40:
            out.append(f"  ... {len(rows) - 40} more (use --format json)")
    n_reports = sum(1 for r in result.reports if r.get("type") == "worker")
    out.append(f"reports: {n_reports} worker reports, "
               f"{sum(1 for r in result.reports if r.get('type') == 'pool')} pool reports"
               + (f"; {result.corrupt_reports} lines not JSON" if result.corrupt_reports else "")
               + (f"; {result.dropped_reports} lines over 1 MiB dropped" if result.dropped_reports else ""))
    if not hook:
        out.append("hook: off (--no-hook)")
    for note in result.notes:
        out.append(f"note: {note}")
    if verdict.code == "target-failed" and result.stderr_tail.strip():
        out.append("target stderr (tail):")
        out.extend("  | " + ln for ln in result.stderr_tail.strip().splitlines()[-15:])
    return "\n".join(out) + "\n"

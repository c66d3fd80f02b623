"""verify's text report: the verdict first, then the reasons, then the tree."""

from __future__ import annotations


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def _library_pools(reports) -> list[str]:
    from auditor.runtime.classify import library_pool

    seen = {}
    for r in reports:
        if r.get("type") == "pool" and library_pool(r):
            name = f"{r.get('backend')}({r.get('size')}) from {(r.get('creator') or {}).get('module')}"
            seen[name] = seen.get(name, 0) + 1
    return [f"{name}" + (f" ×{k}" if k > 1 else "") for name, k in seen.items()]


def render(result, exp, verdict, *, hook: bool = True) -> str:
    out = []
    if exp.workers is not None:
        what = verdict.counted
        peak = max((s.get("ranks", 0) for s in result.samples), default=0) if what == "ranks" else result.peak_workers
        out.append(f"verify: {verdict.code.upper()}  expected {exp.workers} {what} ({exp.source}), "
                   f"saw {verdict.observed_workers} in the steady window (peak {peak})")
    else:
        wants = [f"{exp.threads} threads per process"] if exp.threads is not None else []
        wants += [f"{exp.per_rank} workers per rank"] if exp.per_rank is not None else []
        out.append(f"verify: {verdict.code.upper()}  expected {' and '.join(wants)} ({exp.source})")
    from auditor.runtime.verdict import NOTES

    for r in verdict.reasons:
        if r["code"] == "pass":
            continue
        out.append(f"  {'note' if r['code'] in NOTES else r['code']}: "
                   f"{r['message'] if r['code'] not in NOTES else r['code'] + ': ' + r['message']}")
    if verdict.launcher:
        out.append(f"launcher: {verdict.launcher}; ranks: " + (", ".join(
            f"rank {r['rank'] if r['rank'] is not None else '?'} pid {r['pid']} world {r['world_size'] or '?'}"
            f" workers {r['workers']}" for r in verdict.per_rank) or "none"))
    elif exp.per_rank is not None and verdict.per_rank:
        out.append("per rank: " + ", ".join(f"pid {r['pid']} workers {r['workers']}" for r in verdict.per_rank))
    if verdict.threads:
        out.append("threads: " + ", ".join(f"pid {t['pid']} {t['threads']}" + (f" ({t['setter']})" if t["setter"] else "")
                                           for t in verdict.threads[:8]))
    if result.started:
        ready = result.ready
        if ready.timed_out:
            ended = f"--ready-timeout ({ready.timeout:g} s)"
        else:
            ended = ("timeout" if result.timed_out else "duration reached" if result.returncode is None
                     else f"exit code {result.returncode}")
        teardown = f" (+{result.teardown_s:.1f}s ending its tree)" if result.teardown_s >= 0.05 else ""
        out.append(f"target: ran {result.duration_s:.1f}s{teardown}, ended by {ended}; peak {result.peak_processes} "
                   f"processes, {result.peak_threads} threads, {_mib(result.peak_rss_bytes)} RSS")
        if ready.at is not None:
            out.append(f"ready: at {ready.at:.1f}s ({ready.why}); steady window from {result.window_start:.1f}s")
        else:
            out.append(f"ready: never ({ready.status or 'nothing the command measures happened'})")
        use = result.thread_cpu or {}
        if use.get("processes"):
            out.append(f"cpu: {use['busy_threads']} busy threads in the steady window, {use['cores']:.2f} cores used "
                       f"of {limit_cpus(result)}" + ("" if use.get("schedstat", True) else
                                                    " (no schedstat: busy judged from CPU time)"))
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
               + (f"; {result.dropped_reports} lines over 1 MiB dropped" if result.dropped_reports else "")
               + (f"; {getattr(verdict, 'ignored_reports', 0)} from pids never in the tree, ignored"
                  if getattr(verdict, "ignored_reports", 0) else "")
               + (f"; {result.over_cap_reports} past the cap dropped" if result.over_cap_reports else ""))
    libs = _library_pools(result.reports)
    if libs:
        out.append(f"library pools (shown, not counted): {', '.join(libs[:4])}"
                   + (f" and {len(libs) - 4} more" if len(libs) > 4 else ""))
    limit = getattr(result, "cpu_limit", None) or {}
    if limit.get("cpus"):
        out.append(f"cpus: {limit['cpus']:g} ({'; '.join(limit.get('from') or [])})")
    if not hook:
        out.append("hook: off (--no-hook)")
    for note in result.notes:
        out.append(f"note: {note}")
    if verdict.exit_code != 0:
        for name, tail in (("stderr", result.stderr_tail), ("stdout", result.stdout_tail)):
            if tail.strip():
                out.append(f"target {name} (tail):")
                out.extend("  | " + ln for ln in tail.strip().splitlines()[-15:])
    if result.output_dir:
        out.append(f"output kept in {result.output_dir} (stdout.log, stderr.log, reports.jsonl)")
    from auditor.render.safe import text_lines

    return text_lines(out)


def limit_cpus(result) -> str:
    cpus = (result.cpu_limit or {}).get("cpus")
    return f"{cpus:g} CPUs" if cpus else "? CPUs"

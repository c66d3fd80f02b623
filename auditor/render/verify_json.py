"""verify's JSON report: schema "qg-audit.verify/1" (documented in docs/verify.md)."""

from __future__ import annotations

from auditor.runtime.session import MAX_REPORT_LINE, MAX_REPORTS

SCHEMA = "qg-audit.verify/1"


def render(result, exp, verdict, *, hook: bool = True) -> dict:
    if result.timed_out:
        ended_by = "timeout"
    elif result.returncode is None and result.started:
        ended_by = "qg-audit"  # --duration reached: a normal end
    else:
        ended_by = "target"
    return {
        "schema": SCHEMA,
        "command": result.command,
        "expected": {"workers": exp.workers, "threads": exp.threads, "source": exp.source, "key": exp.key,
                     "per_rank": exp.per_rank},
        "observed": {
            "workers": verdict.observed_workers,
            "peak": result.peak_workers,
            "threads": result.peak_threads,
            "peak_processes": result.peak_processes,
            "peak_rss_bytes": result.peak_rss_bytes,
            "processes": [p.to_json() for p in result.processes],
            "samples": result.samples,
            # added in 0.x without a schema bump (additive): see docs/verify.md
            "counted": verdict.counted,
            "basis": verdict.basis,
            "launcher": verdict.launcher,
            "ranks": verdict.per_rank,
            "threads_per_process": verdict.threads,
            "cpu_limit": result.cpu_limit,
            "thread_cpu": result.thread_cpu,
            "window_start": result.window_start,
        },
        "ready": result.ready.to_json(),
        "reports": result.reports,
        "report_lines": {"corrupt": result.corrupt_reports, "dropped_oversize": result.dropped_reports,
                         "max_bytes": MAX_REPORT_LINE, "ignored_non_members": getattr(verdict, "ignored_reports", 0),
                         "dropped_over_cap": result.over_cap_reports, "unread_bytes": result.unread_report_bytes,
                         "max_records": MAX_REPORTS},
        "hook": {"enabled": hook, "active": result.hook_active, "notes": result.notes},
        "verdict": verdict.code,
        "reasons": verdict.reasons,
        "target": {
            "started": result.started,
            "exit_code": result.returncode,
            "ended_by": ended_by,
            "run_time_s": result.duration_s,
            "error": result.error,
            "stderr_tail": result.stderr_tail[-2000:],
            "stdout_tail": result.stdout_tail[-2000:],
            "teardown_s": result.teardown_s,
            "output_dir": result.output_dir,
            "survivors": result.survivors,  # processes that outlived SIGKILL: normally empty
        },
        "exit_code": verdict.exit_code,
    }

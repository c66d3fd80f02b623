"""Where and when a diagnosis ran: date, host, CPUs, load and versions (the reports' header).

A diagnosis of a sampling job means something only for the machine and the load it ran
under, so every report carries them. The load average is read when the method starts and
when it ends.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timezone


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def start() -> dict:
    from auditor.runtime.procfs import cpu_limit
    from auditor.sweep.context import versions

    limit = cpu_limit()
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": socket.gethostname(),
            "cpus": limit.get("cpus"), "cpus_from": limit.get("from"), "cpu_count": os.cpu_count(),
            "load_start": _load(), "load_end": None, "versions": versions()}


def finish(ctx: dict) -> None:
    ctx["load_end"] = _load()
    ctx["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")


def lines(ctx: dict) -> list[tuple[str, str]]:
    """(label, text) pairs for a report header."""
    v = ctx.get("versions") or {}
    libs = ", ".join(f"{k} {x}" for k, x in (v.get("libraries") or {}).items())
    load = ctx.get("load_start")
    load_end = ctx.get("load_end")
    cpus = ctx.get("cpus")
    return [
        ("date", f"{ctx.get('date')} to {ctx.get('finished') or '?'} (UTC)"),
        ("host", str(ctx.get("host"))),
        ("CPUs", f"{cpus:g} usable" if isinstance(cpus, (int, float)) else "unknown"),
        ("load", (f"{load[0]:g} / {load[1]:g} / {load[2]:g} (1/5/15 min) at the start" if load else "unknown")
         + (f", {load_end[0]:g} at the end" if load_end else "")),
        ("versions", f"Python {v.get('python', '?')}, qg-audit {v.get('qg_audit', '?')}" + (f", {libs}" if libs else "")),
    ]

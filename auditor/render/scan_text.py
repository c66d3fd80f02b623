"""``qg-audit scan`` on a terminal: findings with their paths, errors and a summary; with
``--knobs``, first one rich table grouped by knob.

Each knob shows its name, the effective value and why, then its chain of sites (role,
file:line, value or default, source line). Progress goes to stderr (see progress_bar), so
stdout stays the report even when piped.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from auditor.model import ROLES, SEVERITIES, Knob, ScanResult, Site
from auditor.render.safe import one_line
from auditor.render.scan_json import summary

ROLE_STYLE = {"define": "cyan", "read": "green", "override": "yellow", "consume": "magenta"}
SOURCE_MIN_WIDTH = 140  # narrower terminals drop the source column rather than fold every cell
PROGRESS_MIN_FILES = 200  # below this a scan is over before a bar is worth drawing


def show(value: Any) -> str:
    """A value from the scanned tree, on one line, with nothing a terminal would act on."""
    return one_line(repr(value) if isinstance(value, str) else str(value))


def T(text: Any, style: str = "", **kwargs) -> Text:
    """Text from the scanned tree: never read as rich markup, controls escaped."""
    return Text(one_line(text), style=style, **kwargs)


def _value_cell(site: Site) -> Text:
    d = site.detail
    if site.role == "read":
        return Text(f"default {show(site.default)}" if site.default is not None else "-", style="dim"
                    if site.default is None else "")
    if site.role == "consume":
        arg = show(site.value) if site.value is not None else one_line(d.get("expr") or site.key)
        backend = one_line(d.get("backend") or "?").rsplit(".", 1)[-1]
        text = Text(f"{arg} -> {backend}")
        if d.get("serial"):
            text.append(" (serial)", style="bold red")
        return text
    if site.value is not None:
        text = Text(show(site.value))
    elif d.get("reference"):
        text = T(f"${{{d['reference']}}}", style="italic")
    elif d.get("expr"):
        text = T(d["expr"], style="italic")
    elif d.get("hydra_delete"):
        text = Text("(deleted)", style="italic")
    else:
        text = Text("?", style="dim")
    if d.get("condition"):
        from auditor.lint.idioms import is_main_guard, split_clauses

        # `--n 4` under `if __name__ == "__main__":` is the script's default, not "4 if __name__ ..."
        clauses = [c for c in split_clauses(d["condition"]) if not is_main_guard(c)]
        if clauses:
            text.append(f" if {one_line(' and '.join(clauses))}", style="dim")
    return text


def _where(site: Site) -> Text:
    text = T(f"{site.file}:{site.line}")
    if site.detail.get("generated"):
        text.append(" (generated)", style="dim")
    return text


def flow_step(step: dict) -> str:
    """One step of a finding's path: `source  conf.yaml:2  num_workers: 8`."""
    label = {"source": "from", "sink": "to", "step": "via"}.get(str(step.get("role")), "via")
    what = step.get("kind", "")
    if what == "sink":
        what = str(step.get("backend") or "").rsplit(".", 1)[-1] + (f"({step['param']}=)" if step.get("param") else "")
    elif what == "config":
        what = f"reads {step.get('key')}" + (f", default {show(step['default'])}" if "default" in step else "")
    elif what == "define":
        what = f"sets {step.get('key')}"
    elif what == "arg":
        what = f"passes {step.get('param')} to {step.get('callee')}()" + (" (omitted: its default)"
                                                                         if step.get("omitted") else "")
    return f"{label:<4} {step.get('file')}:{step.get('line')}  {step.get('text', '')}  [{what}]"


def _knob_rows(knob: Knob) -> list[tuple]:
    name = T(knob.name, style="bold")
    if any(s.detail.get("match") == "near" for s in knob.sites):
        name.append(" (look-alike name)", style="yellow")
    eff = Text("= ")
    eff.append(show(knob.effective) if knob.effective is not None else "unknown",
               style="bold green" if knob.effective is not None else "bold yellow")
    head = [Text.assemble(name, "\n", eff), T(knob.why, style="dim")]
    rows = []
    for i, site in enumerate(knob.sites):
        rows.append((head[i] if i < len(head) else Text(""), Text(site.role, style=ROLE_STYLE.get(site.role, "")),
                     _where(site), _value_cell(site), T(site.source, overflow="ellipsis", no_wrap=True)))
    for extra in head[len(knob.sites):]:
        rows.append((extra, Text(""), Text(""), Text(""), Text("")))
    return rows


def table(result: ScanResult, with_source: bool = True, knobs: list[Knob] | None = None) -> Table:
    t = Table(title=T(f"Parallelism knobs in {result.root}"), title_justify="left", show_lines=False,
              expand=False, pad_edge=False)
    t.add_column("knob = effective / why", min_width=24, max_width=48, overflow="fold")
    t.add_column("role", no_wrap=True)
    t.add_column("where", overflow="fold", min_width=12)
    t.add_column("value / default", overflow="fold", min_width=10, max_width=36)
    if with_source:
        t.add_column("source", max_width=56, overflow="ellipsis", no_wrap=True)
    knobs = result.knobs if knobs is None else knobs
    for i, knob in enumerate(knobs):
        for row in _knob_rows(knob):
            t.add_row(*(row if with_source else row[:4]))
        if i != len(knobs) - 1:
            t.add_section()
    return t


def render(result: ScanResult, elapsed_s: float, file: IO[str] | None = None, width: int | None = None,
           knobs: str | None = None) -> None:
    """Findings first, each with its path from source to sink, then errors and a summary.
    KNOBS (the --knobs flag) adds the inventory table before them: every knob, or those whose
    name contains KNOBS."""
    console = Console(file=file or sys.stdout, width=width, highlight=False, soft_wrap=False)
    if knobs is not None:
        shown = [k for k in result.knobs if knobs.lower() in k.name.lower()]
        if shown:
            console.print(table(result, with_source=console.width >= SOURCE_MIN_WIDTH, knobs=shown))
        elif result.knobs:
            console.print(T(f"No knob of {result.root} has {knobs!r} in its name ({len(result.knobs)} knobs)."))
        else:
            console.print(T(f"No parallelism knobs found in {result.root}."))
    for f in result.findings:
        line = T(f"{f.file}:{f.line}:{f.column}: ")
        line.append(f"{f.code} {f.rule}", style="bold red" if f.severity == "error" else "bold yellow")
        line.append(f" [{f.severity}] {one_line(f.message)}")
        console.print(line, soft_wrap=True)  # one line a finding, as ruff prints: grep-able
        for step in f.flow:
            console.print(T(f"    {flow_step(step)}", style="dim"), soft_wrap=True)
    if result.errors:
        console.print(Text(f"errors ({len(result.errors)}): files skipped, the scan went on", style="bold"))
        for e in result.errors:
            where = f"{e.file}:{e.line}" if e.line else e.file
            console.print(T(f"  {where}: {e.message}"))
    if result.skipped_dirs:
        console.print(T(skipped_line(result), style="dim"))
    s = summary(result, elapsed_s)
    by_severity = Counter(f.severity for f in result.findings)
    counts = ", ".join(f"{by_severity[sev]} {sev}{'s' if by_severity[sev] != 1 else ''}"
                       for sev in reversed(SEVERITIES) if by_severity[sev])
    by_rule = Counter(f.code for f in result.findings)
    rules = ", ".join(f"{code} {n}" for code, n in sorted(by_rule.items()))
    files = len({f.file for f in result.findings})
    head = (f"{s['findings']} finding{'s' if s['findings'] != 1 else ''} ({counts}) in {files} file{'s' if files != 1 else ''}: {rules}"
            if result.findings else "No findings")
    console.print(T(f"{head} in {result.root}.", style="bold"))
    sites = ", ".join(f"{s['sites'].get(r, 0)} {r}" for r in ROLES)
    console.print(Text(f"{_count(s['knobs'], 'knob')}, {_count(sum(s['sites'].values()), 'site')} ({sites}); "
                       f"{s['files_scanned']} of {_count(s['files_seen'], 'file')} parsed; "
                       f"{_count(s['errors'], 'error')}; {_count(s['findings'], 'finding')}; {s['elapsed_s']:.2f} s",
                       style="dim"))
    if knobs is None and result.knobs:
        console.print(Text(f"The knob inventory (where each knob is set, read, overridden and consumed): "
                           f"add --knobs, or --knobs NAME for the knobs whose name contains NAME.", style="dim"))


def _count(n: int, noun: str) -> str:
    """`1 error`, `0 errors`, `3 errors`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def skipped_line(result) -> str:
    """The directories the built-in list kept the walk out of: nothing is skipped unsaid."""
    dirs = result.skipped_dirs
    names = ", ".join(dirs[:5]) + (f", ... ({len(dirs) - 5} more)" if len(dirs) > 5 else "")
    tracked = (f"; git tracks {result.skipped_tracked} file{'s' if result.skipped_tracked != 1 else ''} there"
               if result.skipped_tracked else "")
    return (f"not scanned: {len(dirs)} director{'ies' if len(dirs) != 1 else 'y'} on the built-in skip list "
            f"({names}){tracked}; --exclude replaces the list")


class progress_bar:
    """A ``progress(done, total)`` callback drawing a bar on stderr for long scans only.

    Refreshed by hand (auto_refresh=False): no drawing thread exists while the scan forks
    its worker processes."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < PROGRESS_MIN_FILES:
            return
        if self.bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.bar = Progress("parsing", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(stderr=True), auto_refresh=False, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("parse", total=total)
        self.bar.update(self.task, completed=done)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

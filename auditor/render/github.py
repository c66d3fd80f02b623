"""GitHub Actions workflow commands: one ``::warning file=F,line=L,col=C,title=T::message`` per finding.

``render(result) -> str``. Property values escape ``%``, ``\\r``, ``\\n``, ``:`` and ``,``;
the message escapes ``%``, ``\\r`` and ``\\n`` (GitHub's rules), so a message never breaks
out of its annotation; other control characters are shown as escapes (render.safe).
"""

from __future__ import annotations

from auditor.model import ScanResult
from auditor.render.safe import printable

COMMANDS = {"note": "notice", "warning": "warning", "error": "error"}


def _data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: ScanResult) -> str:
    lines = []
    for f in result.findings:
        cmd = COMMANDS.get(f.severity, "warning")
        props = f"file={_prop(f.file)},line={int(f.line or 1)},col={int(f.column or 1)},title={_prop(f'{f.code} {f.rule}')}"
        lines.append(f"::{cmd} {props}::{_data(f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")

"""Renderers: turn results into text, JSON, SARIF, ... They only render."""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.exitcodes import UsageError
from auditor.render.safe import printable


def write_file(path: str, text: str) -> None:
    """Write a report or export; a path that cannot be written is a usage error (exit 2)."""
    try:
        Path(path).expanduser().write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None


def deliver(text: str, path: str | None = None) -> None:
    """The report to ``-o PATH`` when given, else to stdout; escapes made visible (render.safe)."""
    text = printable(text)
    if path:
        write_file(path, text)
    else:
        sys.stdout.write(text)

"""Renderers: turn results into text, JSON, SARIF, ... They only render."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from auditor.exitcodes import UsageError
from auditor.render.safe import printable


# A list longer than this is written one compact item per line: json's indenting encoder is
# pure Python and holds a string per token (100,000 report records cost 130 MB that way).
LONG_LIST = 1000


def json_text(doc: Any) -> str:
    """DOC as ``json.dumps(doc, indent=2)`` writes it, except that a list of more than
    LONG_LIST items (a run's report records) puts each item on one line in compact form.
    The same JSON value: readers parse it alike."""
    out: list[str] = []
    _json_into(doc, "\n", out)
    out.append("\n")
    return "".join(out)


def _json_into(value: Any, nl: str, out: list[str]) -> None:
    inner = nl + "  "
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        sep = "{" + inner
        for key, item in value.items():
            out.append(sep + json.dumps(key) + ": ")
            _json_into(item, inner, out)
            sep = "," + inner
        out.append(nl + "}")
    elif isinstance(value, (list, tuple)) and len(value) > LONG_LIST:
        out.append("[" + inner + ("," + inner).join(json.dumps(item) for item in value) + nl + "]")
    elif isinstance(value, (list, tuple)) and value:
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _json_into(item, inner, out)
            sep = "," + inner
        out.append(nl + "]")
    else:  # json.dumps escapes every newline inside a string: each one here is layout
        out.append(json.dumps(value, indent=2).replace("\n", nl))


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

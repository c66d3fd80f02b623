"""TOML configs -> sites.

tomllib (tomli below 3.11) parses; it gives no positions, so a small line scanner maps
each dotted key to the line and column where it is written: ``[table]`` and
``[[array]]`` headers, dotted and quoted keys, ``key = value``, skipping over multi-line
strings and arrays. A key inside an inline table gets its own column on the line of the
table when it can be found there.

A pyproject.toml's ``[tool.qg-audit]`` table is qg-audit's settings, not knobs: skipped.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from auditor.settings import tomllib
from auditor.extract import FileResult, ParseError
from auditor.extract.cfg_common import is_generated, make_site

KIND = "toml"
SETTINGS_TABLE = ("tool", "qg-audit")
BARE = re.compile(r"[A-Za-z0-9_-]+")
ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def _parse_key(s: str, i: int) -> tuple[list[str], int] | None:
    """Parse a (dotted, possibly quoted) key starting at s[i]; return parts and end index."""
    parts = []
    while True:
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] in "\"'":
            q = s[i]
            j = i + 1
            while j < len(s) and s[j] != q:
                j += 2 if (q == '"' and s[j] == "\\") else 1
            if j >= len(s):
                return None
            raw = s[i + 1 : j]
            parts.append(raw.encode().decode("unicode_escape") if q == '"' and "\\" in raw else raw)
            i = j + 1
        else:
            m = BARE.match(s, i)
            if not m:
                return None
            parts.append(m.group())
            i = m.end()
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] == ".":
            i += 1
            continue
        return parts, i


def _value_open(s: str, state: dict) -> None:
    """Advance the multi-line state (open strings, bracket depth) over one line of a value."""
    i = 0
    while i < len(s):
        q = state.get("string")
        if q:
            if q in ('"""', "'''"):
                end = s.find(q, i)
                if end == -1:
                    return
                i = end + 3
                state["string"] = None
                continue
            if q == '"' and s[i] == "\\":
                i += 2
                continue
            if s[i] == q:
                state["string"] = None
            i += 1
            continue
        if s.startswith('"""', i) or s.startswith("'''", i):
            state["string"] = s[i : i + 3]
            i += 3
            continue
        ch = s[i]
        if ch in "\"'":
            state["string"] = ch
        elif ch in "[{":
            state["depth"] += 1
        elif ch in "]}":
            state["depth"] -= 1
        elif ch == "#":
            return
        i += 1
    if state.get("string") in ('"', "'"):
        state["string"] = None  # single-line strings cannot span lines


def locate(text: str) -> dict[tuple, tuple[int, int]]:
    """Map each key path (tuple of parts, array-of-table indices as ints) -> (line, column)."""
    positions: dict[tuple, tuple[int, int]] = {}
    table: tuple = ()
    counters: dict[tuple, int] = {}
    state = {"string": None, "depth": 0}
    for n, line in enumerate(text.splitlines(), 1):
        if state["string"] or state["depth"] > 0:
            _value_open(line, state)
            continue
        stripped = line.lstrip()
        col = len(line) - len(stripped) + 1
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[["):
            parsed = _parse_key(stripped, 2)
            if parsed:
                path = _resolve(tuple(parsed[0]), counters)
                counters[path] = counters.get(path, -1) + 1
                table = path + (counters[path],)
                positions.setdefault(path, (n, col))
                positions[table] = (n, col)
            continue
        if stripped.startswith("["):
            parsed = _parse_key(stripped, 1)
            if parsed:
                table = _resolve(tuple(parsed[0]), counters)
                positions.setdefault(table, (n, col))
            continue
        parsed = _parse_key(stripped, 0)
        if not parsed or parsed[1] >= len(stripped) or stripped[parsed[1]] != "=":
            continue
        path = table + tuple(parsed[0])
        positions.setdefault(path, (n, col))
        rest = stripped[parsed[1] + 1 :]
        if "{" in rest:  # inline table: find each nested key's column on this line
            for m in re.finditer(r"([{,]\s*)([A-Za-z0-9_\-.\"' ]+?)\s*=", rest):
                sub = _parse_key(m.group(2), 0)
                if sub:
                    c = col + parsed[1] + 1 + m.start(2)
                    positions.setdefault(path + tuple(sub[0]), (n, c))
        _value_open(rest, state)
    return positions


def _resolve(path: tuple, counters: dict) -> tuple:
    """Insert array-of-tables indices: under [[a]], [a.b] means a.<last index>.b."""
    out: tuple = ()
    for part in path:
        out += (part,)
        if out in counters and len(out) < len(path):
            out += (counters[out],)
    return out


def _scalar(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


def extract(text: str, path: str, vocab) -> FileResult:
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ParseError("invalid TOML: nesting too deep", None) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = ERROR_AT.search(msg)
        line = getattr(exc, "lineno", None) or (int(m.group(1)) if m else None)
        raise ParseError(f"invalid TOML: {ERROR_AT.sub('', msg).strip()}", line) from None
    result = FileResult()
    generated = is_generated(path, text)
    if generated:
        result.meta["generated"] = True
    lines = text.splitlines()
    skip = SETTINGS_TABLE if path.replace("\\", "/").rsplit("/", 1)[-1] == "pyproject.toml" else None
    positions: dict | None = None

    def where(keypath: tuple) -> tuple[int, int]:
        nonlocal positions
        if positions is None:
            positions = locate(text)
        for cut in range(len(keypath), 0, -1):
            if keypath[:cut] in positions:
                return positions[keypath[:cut]]
        return 1, 1

    def walk(node: Any, keypath: tuple) -> None:
        if keypath == skip:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                child = keypath + (k,)
                if child == skip:
                    continue
                match = vocab.match(k)
                if match:
                    detail: dict[str, Any] = {"match": match}
                    if generated:
                        detail["generated"] = True
                    value = None
                    if isinstance(v, dict):
                        detail["structured"] = "table"
                    elif isinstance(v, list):
                        detail["structured"] = "array"
                    else:
                        value = _scalar(v)
                    line, col = where(child)
                    key = ".".join(str(p) for p in child)
                    result.sites.append(make_site("define", path, line, col, key, KIND, lines,
                                                  value=value, **detail))
                walk(v, child)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, keypath + (i,))

    walk(data, ())
    return result

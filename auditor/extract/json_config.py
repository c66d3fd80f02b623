"""JSON configs (DeepSpeed, accelerate, Ray job specs, ...) -> sites.

The json module validates and types the document (invalid JSON -> ParseError with its
line). Only when a knob-named key is present does a small position scanner walk the
text to give each key its exact line and column, so a large irrelevant JSON file
(tokenizer.json) costs one C-speed parse.
"""

from __future__ import annotations

import bisect
import json
import re
from json.decoder import scanstring
from typing import Any

from auditor.extract import FileResult, ParseError
from auditor.extract.cfg_common import is_generated, make_site

KIND = "json"
WS = re.compile(r"[ \t\n\r]*")
SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


DATA_MAPPING = 2000  # keys in one object past which it is data: no settings file has that many


def locate(text: str) -> dict[tuple, int]:
    """Map each key path (tuple; list indices as ints) -> offset of its key in TEXT.

    Assumes TEXT is valid JSON (json.loads accepted it)."""
    positions: dict[tuple, int] = {}

    def value(i: int, path: tuple) -> int:
        i = WS.match(text, i).end()
        ch = text[i]
        if ch == "{":
            i = WS.match(text, i + 1).end()
            if text[i] == "}":
                return i + 1
            while True:
                key_at = i
                key, i = scanstring(text, i + 1)
                positions.setdefault(path + (key,), key_at)
                i = WS.match(text, i).end() + 1  # ':'
                i = value(i, path + (key,))
                i = WS.match(text, i).end()
                if text[i] == "}":
                    return i + 1
                i = WS.match(text, i + 1).end()  # ','
        if ch == "[":
            i = WS.match(text, i + 1).end()
            if text[i] == "]":
                return i + 1
            n = 0
            while True:
                i = value(i, path + (n,))
                n += 1
                i = WS.match(text, i).end()
                if text[i] == "]":
                    return i + 1
                i += 1
        if ch == '"':
            return scanstring(text, i + 1)[1]
        return SCALAR.match(text, i).end()

    value(0, ())
    return positions


MAX_TOP_KEYS = 200


def extract(text: str, path: str, vocab) -> FileResult:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise ParseError("invalid JSON: nesting too deep", None) from None
    result = FileResult()
    generated = is_generated(path, text)
    if generated:
        result.meta["generated"] = True
    found: list[tuple[tuple, str, Any]] = []

    def walk(node: Any, keypath: tuple) -> None:
        if isinstance(node, dict):
            if len(node) > DATA_MAPPING:
                return  # a tokenizer's vocabulary (`"threads": 28386`), an index: data, not settings
            for k, v in node.items():
                match = vocab.match(k)
                if match:
                    found.append((keypath + (k,), match, v))
                walk(v, keypath + (k,))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, keypath + (i,))

    try:
        walk(data, ())
        if not found:
            return result
        if isinstance(data, dict):
            # a tool's own config (accelerate's, DeepSpeed's) is told by its top-level keys (QG101)
            result.meta["top_keys"] = sorted(str(k) for k in data)[:MAX_TOP_KEYS]
        offsets = locate(text)
    except RecursionError:
        raise ParseError("JSON nested too deep to scan", None) from None
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = text.split("\n")
    for keypath, match, v in found:
        offset = offsets.get(keypath, 0)
        line = bisect.bisect_right(line_starts, offset)
        column = offset - line_starts[line - 1] + 1
        detail: dict[str, Any] = {"match": match}
        if generated:
            detail["generated"] = True
        value = None
        if isinstance(v, dict):
            detail["structured"] = "object"
        elif isinstance(v, list):
            detail["structured"] = "array"
        else:
            value = v
        key = ".".join(str(p) for p in keypath)
        result.sites.append(make_site("define", path, line, column, key, KIND, lines, value=value, **detail))
    return result

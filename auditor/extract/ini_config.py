"""INI configs (``configparser`` files: ``[section]`` then ``key = value``) -> sites.

Read line by line rather than with configparser, which keeps no positions: a ``[section]``
header opens a table, ``key = value`` or ``key: value`` sets ``section.key``, ``#`` and ``;``
start comment lines, and an indented line continues the value above it. Values are typed the
way a Hydra override is (``8`` -> 8, ``True`` -> True, ``auto`` stays text). Keys before any
header belong to no section (configparser refuses them; some loaders accept them).

Every scalar key is kept in ``meta["values"]`` (as the YAML extractor does), so the flow layer
can make a define of a key outside the vocabulary that code is seen to read.
"""

from __future__ import annotations

import re
from typing import Any

from auditor.extract import FileResult, ParseError
from auditor.extract.cfg_common import is_generated, make_site, type_word

KIND = "ini"
SECTION = re.compile(r"\[\s*([^\]]+?)\s*\]\s*(?:[#;].*)?$")
ENTRY = re.compile(r"([^=:\s][^=:]*?)\s*[=:]\s*(.*)$")
MAX_VALUES = 2000  # scalar keys kept for the flow layer per file


def extract(text: str, path: str, vocab) -> FileResult:
    result = FileResult()
    generated = is_generated(path, text)
    if generated:
        result.meta["generated"] = True
    lines = text.splitlines()
    section = ""
    values: dict[str, tuple[int, int, Any]] = {}
    last: str | None = None
    for number, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if raw[:1] in " \t" and last is not None:
            continue  # a continuation line of the value above
        header = SECTION.match(stripped)
        if header:
            section = header.group(1).strip()
            last = None
            continue
        entry = ENTRY.match(stripped)
        if not entry:
            raise ParseError(f"invalid INI: a line that is neither [section] nor key = value: {stripped[:60]!r}",
                             number)
        name = entry.group(1).strip()
        value = type_word(_unquote(_uncomment(entry.group(2).strip())))
        key = f"{section}.{name}" if section else name
        last = key
        column = raw.index(name[0]) + 1
        if len(values) < MAX_VALUES and not isinstance(value, (list, dict)):
            values[key] = (number, column, value)
        match = vocab.match(name)
        if match:
            detail: dict[str, Any] = {"match": match}
            if generated:
                detail["generated"] = True
            result.sites.append(make_site("define", path, number, column, key, KIND, lines, value=value, **detail))
    if values:
        result.meta["values"] = values
    return result


def _uncomment(value: str) -> str:
    """configparser keeps ` ; comment` in a value unless told otherwise; so do most INI files
    of this kind in practice, as inline comments: `num_envs = 8  # per worker`."""
    m = re.search(r"\s[#;]", value)
    return value[:m.start()].rstrip() if m else value


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value

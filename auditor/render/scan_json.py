"""``qg-audit scan --format json``: the ``qg-audit.scan/1`` contract (docs/scan.md).

CI scripts and later tools depend on this shape; add fields, never rename or remove them
without a new schema version.
"""

from __future__ import annotations

import dataclasses
import json
import math
from json.encoder import encode_basestring_ascii as _quote
from typing import Any

from auditor import __version__
from auditor.model import RELATED_SHOWN, ROLES, ScanResult
from auditor.render.safe import undecodable_as_hex

SCHEMA = "qg-audit.scan/1"


def summary(result: ScanResult, elapsed_s: float) -> dict[str, Any]:
    by_role = {role: 0 for role in ROLES}
    for knob in result.knobs:
        for site in knob.sites:
            by_role[site.role] = by_role.get(site.role, 0) + 1
    return {
        "root": result.root,
        "files_seen": result.files_seen,
        "files_scanned": result.files_scanned,
        "skipped_dirs": len(result.skipped_dirs),
        "skipped_tracked_files": result.skipped_tracked,
        "knobs": len(result.knobs),
        "sites": by_role,
        "errors": len(result.errors),
        "findings": len(result.findings),
        "elapsed_s": round(elapsed_s, 3),
        "version": __version__,
        **({"libraries": result.libraries.summary()} if result.libraries is not None else {}),
    }


def document(result: ScanResult, elapsed_s: float) -> dict[str, Any]:
    return plain({
        "schema": SCHEMA,
        "knobs": [k.to_json() for k in result.knobs],
        "findings": [f.to_json() for f in result.findings],
        "errors": [e.to_json() for e in result.errors],
        "summary": summary(result, elapsed_s),
    })


def render(result: ScanResult, elapsed_s: float = 0.0) -> str:
    """``json.dumps(document(result), indent=2, allow_nan=False)``, byte for byte, written
    directly from the model: json's indenting encoder is pure Python, and to_json's asdict
    copies every site first (together 0.5 s of a 1 s rescan of a large tree). ASCII only:
    no byte of the scanned tree reaches a terminal raw (auditor.render.safe).
    tests/test_scan_cli.py checks it against the plain path on every fixture."""
    out: list[str] = []
    _emit({"schema": SCHEMA, "knobs": [_Knob(k) for k in result.knobs],
           "findings": [_Finding(f) for f in result.findings], "errors": [_Fields(e) for e in result.errors],
           "summary": summary(result, elapsed_s)}, "\n", out)
    out.append("\n")
    return "".join(out)


def plain(value: Any) -> Any:
    """Only JSON types: tuples/sets become lists, inf/nan and other objects their text.

    Site values come from literal_eval (tuples, sets, bytes, complex) and YAML (.inf)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return undecodable_as_hex(value)  # a non-UTF-8 file name: readable, and valid JSON text
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return repr(value)


# -- the direct writer: what plain() of the to_json() documents gives, without the copies --
#
# to_json() runs asdict() over sites, findings and errors (a dataclass inside them becomes a
# dict) but not over a knob's own fields (plain() writes a dataclass there as its repr): each
# wrapper below says which of its values asdict() converts.

class _Knob:  # Knob.to_json(): its own fields as they are; its sites as Site.to_json()
    __slots__ = ("knob",)

    def __init__(self, knob):
        self.knob = knob

    def pairs(self):
        k = self.knob
        return [("name", k.name), ("leaf", k.leaf), ("effective", k.effective), ("why", k.why),
                ("sites", [_Site(s) for s in k.sites])], False


class _Site:  # Site.to_json(): asdict plus the leaf
    __slots__ = ("site",)

    def __init__(self, site):
        self.site = site

    def pairs(self):
        s = self.site
        return [*_fields_of(s), ("leaf", s.leaf)], True


class _Finding:  # Finding.to_json(): asdict, its related sites as Site.to_json()
    __slots__ = ("finding",)

    def __init__(self, finding):
        self.finding = finding

    def pairs(self):
        return [(name, [_Site(s) for s in value[:RELATED_SHOWN]] if name == "related" else value)
                for name, value in _fields_of(self.finding)], True


class _Fields:  # FileError.to_json(): asdict
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def pairs(self):
        return _fields_of(self.obj), True


_WRAPPERS = (_Knob, _Site, _Finding, _Fields)


def _fields_of(obj) -> list[tuple[str, Any]]:
    """asdict(OBJ)'s items before its values are copied."""
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    return [(name, getattr(obj, name)) for name in names]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _emit(value: Any, nl: str, out: list[str], converted: bool = False) -> None:
    """Append VALUE as json.dumps(plain(VALUE), indent=2) writes it at the indentation NL
    ("\\n" plus two spaces per level); CONVERTED: asdict() has turned its dataclasses into dicts."""
    if type(value) is str:
        out.append(_quote(undecodable_as_hex(value)))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, _WRAPPERS):
        pairs, converts = value.pairs()
        _emit_pairs(pairs, nl, out, converts)
    elif converted and hasattr(type(value), "__dataclass_fields__"):
        _emit_pairs(_fields_of(value), nl, out, True)
    elif isinstance(value, dict):
        if all(type(k) is str for k in value):
            _emit_pairs(value.items(), nl, out, converted)
        else:  # plain()'s str(key), equal keys merged as its dict comprehension merges them
            _emit_pairs({str(k): v for k, v in value.items()}.items(), nl, out, converted)
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = nl + "  "
        out.append("[")
        sep = inner
        for item in value:
            out.append(sep)
            _emit(item, inner, out, converted)
            sep = "," + inner
        out.append(nl + "]")
    elif isinstance(value, (set, frozenset)):
        _emit(plain(value), nl, out)
    elif isinstance(value, int):  # bool is taken above
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(float.__repr__(value) if math.isfinite(value) else _quote(str(value)))
    elif isinstance(value, str):
        out.append(_quote(undecodable_as_hex(value)))
    else:
        out.append(_quote(repr(value)))


def _emit_pairs(pairs, nl: str, out: list[str], converted: bool) -> None:
    inner = nl + "  "
    sep = "{" + inner
    for key, item in pairs:
        out.append(sep)
        out.append(_quote(key))
        out.append(": ")
        _emit(item, inner, out, converted)
        sep = "," + inner
    out.append("{}" if sep[0] == "{" else nl + "}")

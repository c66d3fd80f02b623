"""``qg-audit scan --format json``: the ``qg-audit.scan/1`` contract (docs/scan.md).

CI scripts and later tools depend on this shape; add fields, never rename or remove them
without a new schema version.
"""

from __future__ import annotations

import json
import math
from typing import Any

from auditor import __version__
from auditor.model import ROLES, ScanResult
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
        "knobs": len(result.knobs),
        "sites": by_role,
        "errors": len(result.errors),
        "findings": len(result.findings),
        "elapsed_s": round(elapsed_s, 3),
        "version": __version__,
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
    # ASCII only: no byte of the scanned tree reaches a terminal raw (auditor.render.safe)
    return json.dumps(document(result, elapsed_s), indent=2, allow_nan=False) + "\n"


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

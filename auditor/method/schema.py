"""JSON Schema of the ``qg-audit.diagnose/1`` document (docs/diagnose.md; a contract: add, never change).

The embedded ``profile`` and ``sweep`` are the ``qg-audit.profile/1`` and ``qg-audit.sweep/1``
documents; ``verify`` is ``qg-audit.verify/1`` without its raw ``reports``, process list and
census samples (they can be large; run qg-audit verify for them).
"""

from __future__ import annotations

from auditor.profiling.schema import PROFILE_SCHEMA
from auditor.sweep.schema import SWEEP_SCHEMA

STEP_NAMES = ["profile", "wait", "sweep", "scan", "verify"]
BRANCHES = ["env-bound", "trainer-bound", "forward-transfer-bound", "inconclusive", "target-failed"]


def _embedded(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k not in ("$schema", "$id")}


_STEP = {
    "type": "object",
    "required": ["step", "name", "status", "verdict", "message", "next"],
    "additionalProperties": False,
    "properties": {
        "step": {"type": "integer", "minimum": 1, "maximum": 5},
        "name": {"enum": STEP_NAMES},
        "status": {"enum": ["ran", "skipped", "failed"]},
        # profile: env-bound | forward-transfer-bound | neither | target-failed
        # wait: trainer-bound | sampling-bound | unknown
        # sweep: stop-at | no-stop-point | too-few-values
        # scan: findings | clean
        # verify: a qg-audit.verify/1 verdict code
        "verdict": {"type": ["string", "null"]},
        "message": {"type": "string"},
        "next": {"type": "string"},
    },
}

DIAGNOSE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "qg-audit.diagnose/1",
    "type": "object",
    "required": ["schema", "command", "variable", "project", "phases_source", "steps", "branch", "conclusion",
                 "exit_code", "profile", "sweep", "scan", "verify"],
    "properties": {
        "schema": {"const": "qg-audit.diagnose/1"},
        "command": {"type": "array", "items": {"type": "string"}},
        "variable": {"type": "object", "required": ["name", "current", "values"], "properties": {
            "name": {"type": "string"}, "current": {"type": ["string", "null"]},
            "values": {"type": ["array", "null"], "items": {"type": "string"}}}},
        "project": {"type": "string"},
        "phases_source": {"enum": ["timer", "auto", None]},
        "steps": {"type": "array", "minItems": 5, "maxItems": 5, "items": _STEP},
        "branch": {"enum": BRANCHES},
        "conclusion": {"type": "array", "items": {"type": "string"}},
        "exit_code": {"enum": [0, 1, 3]},
        "profile": {"oneOf": [{"type": "null"}, _embedded(PROFILE_SCHEMA)]},
        "profile_target": {"type": ["object", "null"]},
        "sweep": {"oneOf": [{"type": "null"}, _embedded(SWEEP_SCHEMA)]},
        "scan": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["root", "knobs", "findings", "expected"],
            "properties": {
                "knobs": {"type": "array", "items": {"type": "object", "required": ["name", "effective", "why"]}},
                "findings": {"type": "array", "items": {
                    "type": "object", "required": ["code", "severity", "file", "line", "message"]}},
                "findings_elsewhere": {"type": "array", "items": {
                    "type": "object", "required": ["code", "severity", "file", "line", "message"]}},
                "entry": {"type": ["object", "null"], "required": ["script", "files", "how"]},
                "expected": {"type": "object", "required": ["workers", "knobs", "unknown"], "properties": {
                    "workers": {"type": ["integer", "null"]}}},
            }}]},
        "context": {"type": "object", "required": ["date", "host", "cpus", "load_start", "versions"]},
        "verify": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["schema", "expected", "observed", "verdict", "reasons", "exit_code"],
            "properties": {"schema": {"const": "qg-audit.verify/1"}, "verdict": {"type": "string"}}}]},
    },
}

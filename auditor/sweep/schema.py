"""JSON Schema of the ``qg-audit.sweep/1`` document (docs/sweep.md), for consumers and tests.

Fields may be added within /1; none is removed or changes meaning without a new version.
"""

from __future__ import annotations

_NUM = {"type": ["number", "null"]}
_INT = {"type": ["integer", "null"]}

SWEEP_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "qg-audit.sweep/1",
    "type": "object",
    "required": ["schema", "variable", "context", "results", "conclusion"],
    "properties": {
        "schema": {"const": "qg-audit.sweep/1"},
        "variable": {
            "type": "object",
            "required": ["name", "values", "source"],
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "values": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "source": {"enum": ["-L", "-P"]},
            },
        },
        "context": {
            "type": "object",
            "required": ["command_template", "workers_observed", "thread_env", "versions", "memory_limit_bytes", "gpu"],
            "properties": {
                "command_template": {"type": "array", "items": {"type": "string"}},
                "workers_observed": {"type": "object", "additionalProperties": _INT},
                "thread_env": {"type": "object", "additionalProperties": {"type": "string"}},
                "versions": {"type": "object", "required": ["python", "libraries"]},
                "memory_limit_bytes": _INT,
                "gpu": {"type": "object", "required": ["present", "total_bytes"]},
            },
        },
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["value", "runs", "samples_per_s", "phases_ms", "processes", "rss_peak_bytes",
                             "gpu_peak_bytes", "exit_codes"],
                "properties": {
                    "value": {"type": "string"},
                    "runs": {"type": "integer", "minimum": 1},
                    "samples_per_s": {
                        "type": "object",
                        "required": ["mean", "stddev", "min", "max"],
                        "properties": {k: _NUM for k in ("mean", "stddev", "min", "max")},
                        "additionalProperties": False,
                    },
                    "phases_ms": {"type": "object", "additionalProperties": {"type": "number"}},
                    "untimed_ms": {"type": ["number", "null"]},
                    "processes": _INT,
                    "rss_peak_bytes": _INT,
                    "gpu_peak_bytes": _INT,
                    "exit_codes": {"type": "array", "items": _INT},
                },
            },
        },
        "conclusion": {
            "type": "object",
            "required": ["scope", "changes", "stop_at", "reasons", "message"],
            "properties": {
                "stop_at": {"type": ["string", "null"]},
                "reasons": {"type": "array", "items": {"enum": ["plateau", "memory", "gpu-memory"]}},
                "message": {"type": "string"},
                "changes": {"type": "array", "items": {"type": "object", "required": ["from", "to", "gain", "line"]}},
            },
        },
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
}

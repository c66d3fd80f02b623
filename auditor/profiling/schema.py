"""JSON Schema of the ``qg-audit.profile/1`` document (a contract: add fields, never change them)."""

from __future__ import annotations

_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_INT = {"type": "integer"}

_PHASE = {
    "type": "object",
    "required": ["name", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "share"],
    "properties": {"name": {"type": "string"}, "mean_ms": _NUM, "p50_ms": _NUM, "p95_ms": _NUM,
                   "p99_ms": _NUM, "max_ms": _NUM, "share": {"type": "number", "minimum": 0}},
}

PROFILE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "qg-audit.profile/1",
    "type": "object",
    "required": ["schema", "basis", "phases", "warmup_steps", "samples_per_s", "wait", "diagnosis"],
    "properties": {
        "schema": {"const": "qg-audit.profile/1"},
        "basis": {"type": "string"},
        "basis_code": {"enum": ["warmup-steps", "warmup-seconds", "all-steps"]},
        "warmup_steps": {"type": ["integer", "null"], "minimum": 0},
        "warmup_s": _NUM_OR_NULL,
        "window": {"type": "integer", "minimum": 1},
        "phases": {"type": "array", "items": _PHASE},
        "step": _PHASE,
        "other_share": _NUM,
        "steps": _INT,
        "samples": _INT,
        "sampling_s": _NUM,
        "samples_per_s": _NUM_OR_NULL,
        "wait": {
            "type": ["object", "null"],
            "required": ["ratio_mean", "ratio_p50", "ratio_p95", "wait_ms_mean", "compute_ms_mean"],
            "properties": {k: _NUM for k in ("ratio_mean", "ratio_p50", "ratio_p95", "wait_ms_mean",
                                              "compute_ms_mean", "wait_ms_p95", "wait_ms_max", "ratio_overall")}
            | {"windows": _INT, "steps": _INT, "window_ratios": {"type": "array", "items": _NUM}},
        },
        "processes": {"type": "array", "items": {
            "type": "object",
            "required": ["pid", "timer", "role", "steps", "samples_per_s", "step_ms_mean", "phases_ms", "wait_ratio"],
            "properties": {"pid": _INT, "ppid": {"type": ["integer", "null"]}, "timer": {"type": "string"},
                           "role": {"type": ["string", "null"]}, "steps": _INT, "samples_per_s": _NUM_OR_NULL,
                           "step_ms_mean": _NUM_OR_NULL, "phases_ms": {"type": "object"},
                           "wait_ratio": _NUM_OR_NULL, "trainer_steps": _INT},
        }},
        "first_steps": {"type": "array", "items": {
            "type": "object", "required": ["pid", "timer", "step", "step_ms", "phases_ms", "warmup"],
        }},
        "spikes": {"type": "array", "items": {
            "type": "object",
            "required": ["pid", "timer", "step", "step_ms", "median_ms", "window", "window_steps", "phase"],
        }},
        "spikes_total": _INT,
        "diagnosis": {"type": "array", "minItems": 3, "maxItems": 3, "items": {
            "type": "object", "required": ["step", "verdict", "message"], "additionalProperties": False,
            "properties": {"step": {"enum": [1, 2, 3]}, "message": {"type": "string"},
                           "verdict": {"enum": ["env-bound", "not-env-bound", "trainer-bound", "sampling-bound",
                                                "forward-transfer-bound", "not-forward-transfer-bound", "unknown"]}},
        }},
        "conclusion": {"type": "object", "required": ["branch", "message"], "properties": {
            "branch": {"enum": ["trainer-bound", "env-bound", "forward-transfer-bound", "inconclusive"]},
            "message": {"type": "string"}}},
        "thresholds": {"type": "object"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "training": {"type": ["object", "null"], "required": ["ms_total", "ms_per_step", "share", "spans"],
                     "properties": {"ms_total": _NUM, "ms_per_step": _NUM, "share": _NUM, "spans": _INT,
                                    "forwards": _INT, "backward": _INT, "optimizer_steps": _INT}},
        "stacks": {"type": ["object", "null"], "required": ["interval_ms", "samples", "total", "top"],
                   "properties": {"samples": {"type": "object"}, "total": _INT, "top": {"type": "array", "items": {
                       "type": "object", "required": ["phase", "function", "line", "samples"]}}}},
        "explanation": {"type": ["object", "null"], "required": ["untimed", "samplers", "contention"],
                        "properties": {"contention": {"type": ["object", "null"],
                                                      "required": ["pid", "tid", "busy_others", "setting", "message"]}}},
        "run": {"type": ["object", "null"], "required": ["ready", "thread_cpu"]},
        "target": {"type": "object", "required": ["command", "returncode", "duration_s", "timed_out", "ended_by"],
                   "properties": {"ready": {"type": "object"}, "teardown_s": _NUM, "stdout_tail": {"type": "string"},
                                  "stderr_tail": {"type": "string"}}},
        "source": {"type": "object", "required": ["from", "records"]},
    },
}

"""Worker side of ``verify --ray`` reports: store a record in the cluster's KV store.

Runs inside Ray actors (standard library only; ray is already imported there). The probe
side, which reads these records back, is :mod:`auditor.runtime.ray_collector`.
"""

from __future__ import annotations

import json
import os
import sys
import time

SCHEME = "ray-kv://"
NAMESPACE = "qg-audit"


def parse_target(target: str) -> tuple[str, str]:
    """``ray-kv://NAMESPACE/RUN`` -> (namespace, run)."""
    rest = target[len(SCHEME):]
    namespace, _, run = rest.partition("/")
    if not namespace or not run:
        raise ValueError(f"bad report target {target!r}: expected {SCHEME}NAMESPACE/RUN")
    return namespace, run


def put(target: str, record: dict) -> bool:
    """Store one report record in the cluster's KV store; False when not inside Ray."""
    ray = sys.modules.get("ray")
    if ray is None:  # not a Ray worker: nothing to send through
        return False
    try:
        from ray.experimental import internal_kv

        if not internal_kv._internal_kv_initialized():
            return False
        namespace, run = parse_target(target)
        ctx = ray.get_runtime_context()
        node = ctx.get_node_id() or "?"
        record = dict(record)
        record["ray"] = {"node_id": node, "actor_id": ctx.get_actor_id(), "job_id": ctx.get_job_id()}
        key = f"{run}/{node}/{os.getpid()}/{time.time_ns()}"
        value = json.dumps(record, default=repr, separators=(",", ":"))
        internal_kv._internal_kv_put(key, value, namespace=namespace)
        return True
    except Exception:  # a report must never break the user's actor
        return False

"""How worker reports from Ray actors on any node reach the probe.

A report file (``QG_AUDIT_REPORT=/tmp/...``) is invisible to the probe when the actor runs
on another machine, and actors do not inherit the driver's environment anyway: the raylet
of their node starts them. So under ``qg-audit verify --ray``:

1. The probe launches the job's driver with ``RAY_JOB_CONFIG_JSON_ENV_VAR`` holding
   ``{"runtime_env": {"env_vars": {"QG_AUDIT_REPORT": "ray-kv://qg-audit/RUN"}}}``. Ray
   merges that into the job's runtime environment (env vars key by key, so the job's own
   ``env_vars`` survive), and every worker and actor of the job, on every node, starts with it.
2. In an actor, ``auditor.report.worker(...)`` sees the ``ray-kv://`` target and calls
   ``auditor.worker.ray_kv.put``, which stores the record in the cluster's internal key-value store (the GCS,
   which every node talks to) under ``RUN/NODE/PID/NANOS`` in namespace ``qg-audit``.
3. The probe reads new keys with ``Collector.drain()`` at each poll and deletes the run's
   keys at the end.

Nothing here imports ray at module level; the probe side imports it lazily.
"""

from __future__ import annotations

import json
import os
import uuid

from auditor.worker.ray_kv import NAMESPACE, SCHEME, parse_target

JOB_CONFIG_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"  # read by ray.init() in the driver


def new_target() -> str:
    """A fresh report target for one run: ``ray-kv://qg-audit/RUN``."""
    return f"{SCHEME}{NAMESPACE}/{uuid.uuid4().hex[:12]}"


def job_env(target: str, environ: dict | None = None) -> dict[str, str]:
    """Environment for the driver so that every actor of its job reports to ``target``."""
    environ = os.environ if environ is None else environ
    config: dict = {}
    existing = environ.get(JOB_CONFIG_ENV)
    if existing:  # keep whatever job config is already injected (e.g. by `ray job submit`)
        try:
            config = json.loads(existing)
        except ValueError:
            config = {}
    runtime_env = dict(config.get("runtime_env") or {})
    env_vars = dict(runtime_env.get("env_vars") or {})
    env_vars["QG_AUDIT_REPORT"] = target
    runtime_env["env_vars"] = env_vars
    config["runtime_env"] = runtime_env
    return {JOB_CONFIG_ENV: json.dumps(config, separators=(",", ":"))}


# ---------------------------------------------------------------- in the probe

class Collector:
    """Reads the run's records from the GCS key-value store (needs ray on the probe's side)."""

    def __init__(self, target: str, gcs_address: str):
        from ray._raylet import GcsClient

        from auditor.runtime.ray_state import prepare_gcs_auth

        prepare_gcs_auth()
        self.target = target
        self.namespace, self.run = parse_target(target)
        self._ns = self.namespace.encode()
        self._prefix = f"{self.run}/".encode()
        self._client = GcsClient(address=gcs_address)
        self._seen: set[bytes] = set()
        self.records: list[dict] = []
        self.corrupt = 0

    def drain(self) -> list[dict]:
        keys = [k for k in self._client.internal_kv_keys(self._prefix, self._ns) if k not in self._seen]
        if not keys:
            return []
        values = self._client.internal_kv_multi_get(keys, self._ns)
        new = []
        for key in sorted(keys, key=lambda k: int(k.rsplit(b"/", 1)[-1] or 0)):  # in write order per key time
            self._seen.add(key)
            try:
                rec = json.loads(values.get(key, b""))
            except ValueError:
                self.corrupt += 1
                continue
            if isinstance(rec, dict):
                new.append(rec)
        self.records.extend(new)
        return new

    def close(self) -> None:
        """Delete this run's keys from the cluster."""
        try:
            self._client.internal_kv_del(self._prefix, True, self._ns)
        except Exception:
            pass

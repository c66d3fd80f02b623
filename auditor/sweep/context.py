"""The fixed context of a sweep: what did NOT change between values, recorded with the result.

A sweep result only means something for the configuration it ran under, so the command
template, the observed worker count, the thread environment variables, Python and library
versions, and the memory limits the "stop at" rule compared against are kept with it.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from importlib import metadata

from auditor.exitcodes import UsageError

LIBRARIES = ("torch", "numpy", "gymnasium", "gym", "stable-baselines3", "ray", "jax", "vllm", "transformers",
             "nvidia-ml-py")
# Thread-count variables beyond the knob vocabulary's env_vars (rules/knobs.yaml).
THREAD_ENV_RE = re.compile(r"(_NUM_THREADS|_MAX_THREADS|_MAXIMUM_THREADS|_THREADS)$|^TOKENIZERS_PARALLELISM$")
CGROUP_DIR = "/sys/fs/cgroup"

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


def parse_size(text: str, flag: str = "--memory-limit") -> int:
    """'512MiB', '2G', '1.5GiB', '1000000' -> bytes (K/M/G/T are powers of 1000, KiB/MiB/GiB of 1024)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text or "")
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise UsageError(f"{flag} {text!r}: give a size such as 2GiB, 512MiB or 4G")
    n = int(float(m.group(1)) * _UNITS[unit])
    if n <= 0:
        raise UsageError(f"{flag} {text!r}: the size must be greater than 0")
    return n


def thread_env(extra: dict | None = None) -> dict[str, str]:
    """Thread / parallelism environment variables as the target will see them."""
    try:
        from auditor.vocab import load

        known = set(load().env_vars)
    except Exception:  # the context is a record, never a reason to fail the sweep
        known = set()
    env = dict(os.environ)
    env.update({k: v for k, v in (extra or {}).items() if v is not None})
    return {k: env[k] for k in sorted(env) if k in known or THREAD_ENV_RE.search(k)}


def versions() -> dict:
    libs = {}
    for name in LIBRARIES:
        try:
            libs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    from auditor import __version__

    return {"python": platform.python_version(), "python_implementation": platform.python_implementation(),
            "python_executable": sys.executable, "qg_audit": __version__, "libraries": libs,
            "platform": platform.platform(terse=True)}


def _cgroup_room() -> int | None:
    """memory.max - memory.current of this cgroup (v2), or None when unlimited or unknown."""
    try:
        with open(os.path.join(CGROUP_DIR, "memory.max")) as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open(os.path.join(CGROUP_DIR, "memory.current")) as f:
            current = int(f.read().strip())
        return max(0, int(limit) - current)
    except (OSError, ValueError):
        return None


def memory_limit(override: int | None = None) -> tuple[int | None, str]:
    """(bytes, basis): the memory a run may use before it nears the limit."""
    if override is not None:
        return override, "--memory-limit"
    try:
        import psutil

        avail = int(psutil.virtual_memory().available)
    except Exception:
        avail = None
    room = _cgroup_room()
    if room is not None and (avail is None or room < avail):
        return room, "cgroup memory.max - memory.current before the sweep"
    if avail is None:
        return None, "unknown"
    return avail, "available memory (psutil) before the sweep"

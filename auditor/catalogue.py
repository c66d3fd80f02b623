"""The rule catalogue's data files (rules/*.yaml, shipped as auditor.rules). Each data file
is parsed once per process, whoever asks first."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml

__all__ = ["YAML_LOADER", "data"]

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=None)
def data(name: str) -> dict:
    """rules/NAME parsed; callers share the result and must not change it."""
    text = resources.files("auditor.rules").joinpath(name).read_text(encoding="utf-8")
    return yaml.load(text, Loader=YAML_LOADER) or {}

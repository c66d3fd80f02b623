"""Knob keys as every layer compares them, below extraction, flow and join alike."""

from __future__ import annotations


def norm_key(key: str) -> str:
    """A dotted key with flag spellings folded: ``--num-workers`` / ``data.num-workers`` ->
    ``num_workers`` / ``data.num_workers``; environment-variable parts (upper case) kept."""
    if "-" not in key and key.strip() == key:  # most keys: nothing to change (the join calls this per site)
        return key
    key = key.strip()
    if key.startswith("-"):
        key = key.lstrip("-")
    return ".".join(part if part.isupper() else part.replace("-", "_") for part in key.split("."))

"""Knob keys as every layer compares them, below extraction, flow and join alike."""

from __future__ import annotations

import re

# classes whose instances are a program's settings, by name (`TrainConfig`, `ScriptArguments`)
CONFIG_CLASS = re.compile(r"(Config|Configs|Args|Arguments|Settings|Options|HParams|Hyperparameters)$")


def norm_key(key: str) -> str:
    """A dotted key with flag spellings folded: ``--num-workers`` / ``data.num-workers`` ->
    ``num_workers`` / ``data.num_workers``; environment-variable parts (upper case) kept."""
    if "-" not in key and key.strip() == key:  # most keys: nothing to change (the join calls this per site)
        return key
    key = key.strip()
    if key.startswith("-"):
        key = key.lstrip("-")
    return ".".join(part if part.isupper() else part.replace("-", "_") for part in key.split("."))


def one_typo(a: str, b: str) -> bool:
    """A and B differ by one edit (insert, delete, replace) or one swap of neighbours."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))

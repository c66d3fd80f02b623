"""The knob vocabulary (rules/knobs.yaml), optionally extended by a project's pyproject."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache

from auditor import catalogue
from auditor.exitcodes import UsageError

EXTENSION_KEYS = {"extra-knobs": "names", "extra-knob-patterns": "patterns", "extra-env-vars": "env_vars"}


def normalise(name: str) -> str:
    return name.strip().lstrip("-").replace("-", "_").lower()


@dataclass
class Vocabulary:
    names: set[str] = field(default_factory=set)
    patterns: list[str] = field(default_factory=list)
    env_vars: set[str] = field(default_factory=set)
    near: list[re.Pattern] = field(default_factory=list)

    def match(self, leaf: str) -> str | None:
        """'exact' for a knob, 'near' for a look-alike (misspelling), None otherwise."""
        n = normalise(leaf)
        if n in self.names or leaf in self.env_vars or n.upper() in self.env_vars:
            return "exact"
        if any(fnmatch.fnmatchcase(n, p) for p in self.patterns):
            return "exact"
        if any(r.search(n) for r in self.near):
            return "near"
        return None

    def is_knob(self, leaf: str) -> bool:
        return self.match(leaf) == "exact"

    def keywords(self) -> list[str]:
        """Plain substrings a file must contain to be worth parsing (the prefilter)."""
        words = set(self.names) | {e.lower() for e in self.env_vars}
        words |= {w.replace("_", "-") for w in words if "_" in w}  # --num-workers spellings
        words |= {p.strip("*").strip("_") for p in self.patterns}
        return sorted(w for w in words if w)


@lru_cache(maxsize=None)
def _base() -> tuple:
    data = catalogue.data("knobs.yaml")
    return (
        frozenset(normalise(n) for n in data["names"]),
        tuple(data["patterns"]),
        frozenset(data["env_vars"]),
        tuple(data.get("near", [])),
    )


def load(extra: dict | None = None, origin: str = "pyproject.toml") -> Vocabulary:
    """The built-in vocabulary plus a project's ``[tool.qg-audit]`` extension keys.

    ``extra`` is the whole ``[tool.qg-audit]`` table; keys this module does not own are
    ignored here (other modules validate them).
    """
    names, patterns, env_vars, near = _base()
    vocab = Vocabulary(set(names), list(patterns), set(env_vars), [re.compile(r) for r in near])
    for key, attr in EXTENSION_KEYS.items():
        if not extra or key not in extra:
            continue
        values = extra[key]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise UsageError(f"{origin}: [tool.qg-audit] {key} must be a list of strings")
        if attr == "names":
            vocab.names |= {normalise(v) for v in values}
        elif attr == "patterns":
            vocab.patterns += [normalise(v) for v in values]
        else:
            vocab.env_vars |= set(values)
    return vocab

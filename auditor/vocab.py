"""The knob vocabulary (rules/knobs.yaml), optionally extended by a project's pyproject."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

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
    structure: "Structure | None" = None
    switches: dict[str, frozenset] = field(default_factory=dict)  # name -> values that run serially
    switch_domains: dict[str, frozenset] = field(default_factory=dict)  # name -> units its counts size

    def match(self, leaf: str) -> str | None:
        """'exact' for a knob, 'near' for a look-alike (misspelling), None otherwise."""
        n = normalise(leaf)
        if n in self.names or leaf in self.env_vars or n.upper() in self.env_vars or n in self.switches:
            return "exact"
        if any(fnmatch.fnmatchcase(n, p) for p in self.patterns):
            return "exact"
        near = any(r.search(n) for r in self.near)
        if near and (n + "s" in self.names or n.replace("_", "") in self.names or n.replace("_", "") + "s" in self.names):
            return "near"  # a misspelling of a vocabulary name: num_worker, n_env
        if self.structure is not None and self.structure.counts_units(leaf):
            return "exact"  # numEnvs, collector_env_num
        return "near" if near else None

    def serial_value(self, leaf: str, value) -> bool | None:
        """For a switch (multi_gpu, local_mode, vec_env): does VALUE run serially? None for a
        name that is no switch."""
        serial = self.switches.get(normalise(leaf))
        if serial is None:
            return None
        text = str(value).strip().strip("'\"").lower()
        return text in serial or text.rsplit(".", 1)[-1] in serial

    def counts_for(self, switch: str, leaf: str) -> bool:
        """Is LEAF a count of a unit that SWITCH decides the parallelism of (num_envs for vec_env)?"""
        domain = self.switch_domains.get(normalise(switch))
        if not domain or self.structure is None or normalise(leaf) in self.switches or self.match(leaf) != "exact":
            return False
        return bool(self.units(leaf) & domain)

    def units(self, name: str) -> set[str]:
        """The parallel units the words of NAME name (collector_env_num, BaseEnvManager -> {env})."""
        if self.structure is None:
            return set()
        return {u for u in (self.structure.unit(w.lower()) for w in _WORDS.findall(name)) if u}

    def is_knob(self, leaf: str) -> bool:
        return self.match(leaf) == "exact"

    def keywords(self) -> list[str]:
        """Plain substrings a file must contain to be worth parsing (the prefilter)."""
        words = set(self.names) | {e.lower() for e in self.env_vars}
        words |= {w.replace("_", "-") for w in words if "_" in w}  # --num-workers spellings
        words |= {p.strip("*").strip("_") for p in self.patterns}
        return sorted(w for w in words if w)


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Structure:
    """Knob names as fields spell them (rules/knobs.yaml ``structure``): a count word and a
    parallel unit in any order and case. ``counts_units`` reads a name's words the way a
    person does: the head noun is the last word that is no count word, before any "per X"."""

    counts: frozenset
    units: frozenset
    group_counts: frozenset
    group_units: frozenset
    group_parts: frozenset
    measured: frozenset = frozenset()

    def unit(self, word: str) -> str | None:
        for stem in (word, word[:-1] if word.endswith("s") else None, word[:-2] if word.endswith("es") else None):
            if stem and stem in self.units:
                return stem
        return None

    def counts_units(self, name: str) -> bool:
        words = [w.lower() for w in _WORDS.findall(name)]
        if "_".join(words) in self.measured:
            return False
        if len(words) < 2:
            return self._glued(words[0]) if words else False
        if "per" in words[1:]:
            numerator = words[:words.index("per", 1)]
            if len(numerator) == 1 and self.unit(numerator[0]):
                return True  # gpus_per_node, cpus-per-task
        else:
            numerator = words
        nouns = [w for w in numerator if w not in self.counts and w not in self.group_counts]
        if not nouns or len(nouns) == len(numerator):
            return len(nouns) == 1 and self._glued(nouns[0]) if nouns else False
        head = nouns[-1]
        if any(w in self.counts for w in numerator) and self.unit(head):
            return True
        if any(w in self.group_counts for w in numerator):
            # tp_size, world_size, dp_shard_size; not batch_size, shard_size (items per shard)
            return head in self.group_units or (head in self.group_parts and len(nouns) > 1
                                                and nouns[-2] in self.group_units)
        return False

    def finder(self) -> "Callable[[bytes], bool]":
        """A prefilter test on folded bytes (lower case, '-' as '_'): does the text hold a name
        built like this? Each regex starts with a literal (``num``, ``n_``, ``_num``, ``_per_``,
        ``_size``), which re searches for at C speed (one alternation without a literal start
        costs 70x more); the word each hit belongs to is then read in Python."""
        units = "|".join(sorted(self.units, key=len, reverse=True))
        before = re.compile(("(?:num_?|n_)(?:%s)" % units).encode())
        after = re.compile(rb"_(?:(?:num|count|cnt|number|size|degree)(?![a-z])|per_)")
        ident = re.compile(rb"[a-z0-9_]+$")

        def found(folded: bytes) -> bool:
            for m in before.finditer(folded):
                start = m.start()
                if m.group().startswith(b"n_") and start and folded[start - 1:start].isalnum():
                    continue  # in_env, fn_gpu
                end = start + len(m.group())
                tail = re.match(rb"[a-z0-9_]*", folded[end:end + 40]).group()
                word = ident.search(folded[max(0, start - 40):start])
                name = (word.group() if word else b"") + m.group() + tail
                if self.counts_units(name.decode("ascii", "replace")):
                    return True
            for m in after.finditer(folded):
                word = ident.search(folded[max(0, m.start() - 40):m.start()])
                if not word:
                    continue
                end = m.end()
                tail = re.match(rb"[a-z0-9_]*", folded[end:end + 40]).group()
                if self.counts_units((word.group() + m.group() + tail).decode("ascii", "replace")):
                    return True
            return False

        return found

    def _glued(self, word: str) -> bool:
        """nprocs, ngpus, numenvs: a count word glued to its unit."""
        for prefix in ("num", "n"):
            if word.startswith(prefix) and len(word) > len(prefix) + 2 and self.unit(word[len(prefix):]):
                return True
        return False


@lru_cache(maxsize=None)
def _base() -> tuple:
    data = catalogue.data("knobs.yaml")
    return (
        frozenset(normalise(n) for n in data["names"]),
        tuple(data["patterns"]),
        frozenset(data["env_vars"]),
        tuple(data.get("near", [])),
        _structure(data.get("structure")),
        tuple((normalise(k), frozenset(str(x).lower() for x in (v or {}).get("serial", ())))
              for k, v in (data.get("switches") or {}).items()),
        tuple((normalise(k), frozenset(str(x).lower() for x in (v or {}).get("domain", ())))
              for k, v in (data.get("switches") or {}).items()),
    )


def _structure(data: dict | None) -> Structure | None:
    if not data:
        return None
    return Structure(*(frozenset(str(w).lower() for w in data.get(k, ()))
                       for k in ("counts", "units", "group_counts", "group_units", "group_parts", "measured")))


def load(extra: dict | None = None, origin: str = "pyproject.toml") -> Vocabulary:
    """The built-in vocabulary plus a project's ``[tool.qg-audit]`` extension keys.

    ``extra`` is the whole ``[tool.qg-audit]`` table; keys this module does not own are
    ignored here (other modules validate them).
    """
    names, patterns, env_vars, near, structure, switches, domains = _base()
    vocab = Vocabulary(set(names), list(patterns), set(env_vars), [re.compile(r) for r in near], structure,
                       dict(switches), dict(domains))
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

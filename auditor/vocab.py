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
    switch_structure: "SwitchStructure | None" = None
    # match() per leaf: a scan asks the same names in every file (filled only after load())
    _matched: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    def switch(self, leaf: str) -> tuple[frozenset, frozenset] | None:
        """(values that run serially, units its counts size) for a serial / parallel switch,
        named in the catalogue or built like one (async_collection); None for other names."""
        n = normalise(leaf)
        if n in self.switches:
            return self.switches[n], self.switch_domains.get(n, frozenset())
        return self.switch_structure.classify(n) if self.switch_structure is not None else None

    def built_switch(self, leaf: str) -> bool:
        """A switch by its shape (switch_structure), not one the catalogue lists by name."""
        n = normalise(leaf)
        return n not in self.switches and n not in self.names and self.switch_structure is not None \
            and self.switch_structure.classify(n) is not None

    def match(self, leaf: str) -> str | None:
        """'exact' for a knob, 'near' for a look-alike (misspelling), None otherwise."""
        try:
            return self._matched[leaf]
        except KeyError:
            result = self._matched[leaf] = self._match(leaf)
            return result

    def _match(self, leaf: str) -> str | None:
        n = normalise(leaf)
        if n in self.names or leaf in self.env_vars or n.upper() in self.env_vars or self.switch(n) is not None:
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
        switch = self.switch(leaf)
        if switch is None:
            return None
        serial = switch[0]
        text = str(value).strip().strip("'\"").lower()
        return text in serial or text.rsplit(".", 1)[-1] in serial

    def counts_for(self, switch: str, leaf: str) -> bool:
        """Is LEAF a count of a unit that SWITCH decides the parallelism of (num_envs for vec_env)?"""
        found = self.switch(switch)
        domain = found[1] if found is not None else None
        if not domain or self.structure is None or self.switch(leaf) is not None or self.match(leaf) != "exact":
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
    qualifiers: frozenset = frozenset()

    def unit(self, word: str) -> str | None:
        for stem in (word, word[:-1] if word.endswith("s") else None, word[:-2] if word.endswith("es") else None):
            if stem and stem in self.units:
                return stem
        return None

    def counts_units(self, name: str) -> bool:
        words = [w.lower() for w in _WORDS.findall(name)]
        if "_".join(words) in self.measured:
            return False
        while len(words) > 2 and words[-1] in self.qualifiers:
            words = words[:-1]  # num_workers_valid: the workers of the validation loader
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
        counts = _memo(lambda name: self.counts_units(name.decode("ascii", "replace")))

        def found(folded: bytes) -> bool:
            for m in before.finditer(folded):
                start = m.start()
                if m.group().startswith(b"n_") and start and folded[start - 1:start].isalnum():
                    continue  # in_env, fn_gpu
                end = start + len(m.group())
                tail = re.match(rb"[a-z0-9_]*", folded[end:end + 40]).group()
                word = ident.search(folded[max(0, start - 40):start])
                if counts((word.group() if word else b"") + m.group() + tail):
                    return True
            for m in after.finditer(folded):
                word = ident.search(folded[max(0, m.start() - 40):m.start()])
                if not word:
                    continue
                end = m.end()
                tail = re.match(rb"[a-z0-9_]*", folded[end:end + 40]).group()
                if counts(word.group() + m.group() + tail):
                    return True
            return False

        return found

    def _glued(self, word: str) -> bool:
        """nprocs, ngpus, numenvs: a count word glued to its unit."""
        for prefix in ("num", "n"):
            if word.startswith(prefix) and len(word) > len(prefix) + 2 and self.unit(word[len(prefix):]):
                return True
        return False


@dataclass(frozen=True)
class SwitchStructure:
    """Serial / parallel switches as fields spell them (rules/knobs.yaml ``switch_structure``)."""

    modes: dict  # mode word -> (serial value or None, domain)
    counted: dict  # multi / single / one -> serial value
    negations: frozenset
    verbs: frozenset
    states: frozenset
    subjects: frozenset
    unit_domains: dict
    units: frozenset

    def classify(self, name: str) -> tuple[frozenset, frozenset] | None:
        words = self._joined([w.lower() for w in _WORDS.findall(name)])
        if len(words) < 2 or words[0] in self.states:
            return None
        for i, word in enumerate(words):
            tail = words[i + 1:]
            if word in self.modes and (not tail or len(tail) == 1 and tail[0] in self.subjects):
                serial, domain = self.modes[word]
            elif word in self.counted and len(tail) == 1 and self._unit(tail[0]) and \
                    all(w in self.verbs for w in words[:i]):
                serial, domain = self.counted[word], self.unit_domains.get(self._unit(tail[0]), frozenset())
            else:
                continue
            if serial is not None and any(w in self.negations for w in words[:i]):
                serial = "false" if serial == "true" else "true"
            return frozenset({serial} if serial is not None else ()), domain
        return None

    def _joined(self, words: list[str]) -> list[str]:
        """A mode word spelt in two (`use_sub_proc`, `multi_processing`) read as one."""
        out: list[str] = []
        for word in words:
            if out and out[-1] + word in self.modes and out[-1] not in self.modes:
                out[-1] += word
            else:
                out.append(word)
        return out

    def _unit(self, word: str) -> str | None:
        for stem in (word, word[:-1] if word.endswith("s") else None):
            if stem and stem in self.units:
                return stem
        return None

    def finder(self) -> "Callable[[bytes], bool]":
        """A prefilter test on folded bytes: does the text hold a name built like a switch?
        Its mode words start each search (a literal, searched at C speed); the identifier each
        hit belongs to is then classified. A code file reading such a switch must be parsed,
        or the switch would look unread."""
        # (and a mode word spelt in two after a prefix no other word starts with: sub_proc)
        split = {f"{m[:3]}_{m[3:]}" for m in self.modes if m.startswith("sub")}
        words = sorted({*self.modes, *self.counted, *split}, key=len, reverse=True)
        hit = re.compile(("(?:%s)" % "|".join(words)).encode())
        ident = re.compile(rb"[a-z0-9_]+$")
        is_switch = _memo(lambda name: b"_" in name and self.classify(name.decode("ascii", "replace")) is not None)

        def found(folded: bytes) -> bool:
            for m in hit.finditer(folded):
                head = ident.search(folded[max(0, m.start() - 40):m.start()])
                tail = re.match(rb"[a-z0-9_]*", folded[m.end():m.end() + 40]).group()
                if is_switch((head.group() if head else b"") + m.group() + tail):
                    return True
            return False

        return found


MEMO_MAX = 1 << 16  # names remembered per prefilter test; a tree with more starts afresh


def _memo(test: Callable[[bytes], bool]) -> Callable[[bytes], bool]:
    """TEST remembered per name: the prefilter meets batch_size, hidden_size and the like in
    most files of a tree, and classifying a name costs far more than a dict lookup."""
    seen: dict[bytes, bool] = {}

    def cached(name: bytes) -> bool:
        try:
            return seen[name]
        except KeyError:
            if len(seen) >= MEMO_MAX:
                seen.clear()
            answer = seen[name] = test(name)
            return answer

    return cached


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
        _switch_structure(data.get("switch_structure"), data.get("structure")),
    )


def _switch_structure(data: dict | None, structure: dict | None) -> SwitchStructure | None:
    if not data:
        return None
    words = lambda k: frozenset(str(w).lower() for w in data.get(k, ()))  # noqa: E731
    return SwitchStructure(
        modes={str(k).lower(): (str(v["serial"]).lower() if (v or {}).get("serial") is not None else None,
                                frozenset(str(x).lower() for x in (v or {}).get("domain", ())))
               for k, v in (data.get("modes") or {}).items()},
        counted={str(k).lower(): str(v).lower() for k, v in (data.get("counted") or {}).items()},
        negations=words("negations"), verbs=words("verbs"), states=words("states"), subjects=words("subjects"),
        unit_domains={str(k).lower(): frozenset(str(x).lower() for x in v)
                      for k, v in (data.get("unit_domains") or {}).items()},
        units=frozenset(str(w).lower() for w in (structure or {}).get("units", ())))


def _structure(data: dict | None) -> Structure | None:
    if not data:
        return None
    return Structure(*(frozenset(str(w).lower() for w in data.get(k, ()))
                       for k in ("counts", "units", "group_counts", "group_units", "group_parts", "measured",
                                 "qualifiers")))


def load(extra: dict | None = None, origin: str = "pyproject.toml") -> Vocabulary:
    """The built-in vocabulary plus a project's ``[tool.qg-audit]`` extension keys.

    ``extra`` is the whole ``[tool.qg-audit]`` table; keys this module does not own are
    ignored here (other modules validate them).
    """
    names, patterns, env_vars, near, structure, switches, domains, switch_structure = _base()
    vocab = Vocabulary(set(names), list(patterns), set(env_vars), [re.compile(r) for r in near], structure,
                       dict(switches), dict(domains), switch_structure)
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

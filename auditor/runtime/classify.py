"""Worker / helper / other classification of tree processes, driven by rules/workers.yaml."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from auditor import catalogue as rule_data


@dataclass(frozen=True)
class Rule:
    id: str
    role: str
    backend: str
    name: re.Pattern | None = None
    cmdline: re.Pattern | None = None
    parent: str | None = None
    same_as_parent: bool = False
    python: bool = False
    reports: bool = False
    launcher: str | None = None  # a distributed launcher (torchrun, mpirun ...): a helper that starts ranks
    count_flags: tuple[str, ...] = ()  # the launcher's flags that give the number of ranks it starts
    parent_launcher: bool = False
    rank: bool = False
    fewer_hint: str = ""  # said when the launcher started fewer ranks than expected
    sets_env: dict = field(default_factory=dict, hash=False, compare=False)  # variables it sets for ranks


@dataclass(frozen=True)
class Catalogue:
    rules: tuple[Rule, ...]
    count_keys: frozenset[str]
    count_key_patterns: tuple[re.Pattern, ...]
    rank_env: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rank / world_size ... -> env names
    thread_env: tuple[str, ...] = ()
    library_modules: frozenset[str] = frozenset()
    serial_backends: dict = field(default_factory=dict, hash=False, compare=False)  # backend -> what to say

    def is_count_key(self, key: str) -> bool:
        leaf = key.rsplit(".", 1)[-1].lower()
        return leaf in self.count_keys or any(p.search(leaf) for p in self.count_key_patterns)


@lru_cache(maxsize=None)
def catalogue() -> Catalogue:
    data = rule_data.data("workers.yaml")
    rules = []
    for r in data["rules"]:
        rules.append(
            Rule(
                id=r["id"],
                role=r["role"],
                backend=r.get("backend", r["id"]),
                name=re.compile(r["name"]) if r.get("name") else None,
                cmdline=re.compile(r["cmdline"]) if r.get("cmdline") else None,
                parent=r.get("parent"),
                same_as_parent=bool(r.get("same_as_parent")),
                python=bool(r.get("python")),
                reports=bool(r.get("reports")),
                launcher=r.get("launcher"),
                count_flags=tuple(r.get("count_flags") or ()),
                parent_launcher=bool(r.get("parent_launcher")),
                rank=bool(r.get("rank")),
                fewer_hint=r.get("fewer_hint", ""),
                sets_env=dict(r.get("sets_env") or {}),
            )
        )
    return Catalogue(
        rules=tuple(rules),
        count_keys=frozenset(k.lower() for k in data.get("count_keys", [])),
        count_key_patterns=tuple(re.compile(p) for p in data.get("count_key_patterns", [])),
        rank_env={k: tuple(v) for k, v in (data.get("rank_env") or {}).items()},
        thread_env=tuple(data.get("thread_env") or ()),
        library_modules=frozenset(data.get("library_modules") or ()),
        serial_backends=dict(data.get("serial_backends") or {}),
    )


@lru_cache(maxsize=None)
def _rules_by_id() -> dict[str, Rule]:
    return {r.id: r for r in catalogue().rules}


def rule_by_id(rule_id: str | None) -> Rule | None:
    return _rules_by_id().get(rule_id) if rule_id else None


def library_pool(pool: dict) -> bool:
    """A pool record made inside a library on the program's behalf (not the job's own)."""
    creator = pool.get("creator")
    if not isinstance(creator, dict):
        return False
    top = str(creator.get("module") or "").split(".", 1)[0]
    return bool(creator.get("library")) or top in catalogue().library_modules


def _is_python(cmdline: list[str]) -> bool:
    return bool(cmdline) and "python" in os.path.basename(cmdline[0]).lower()


def match_rule(name: str, cmdline: list[str], parent_rule: str | None,
               parent_cmdline: list[str] | None) -> Rule | None:
    """The first rule of the catalogue that this process matches, or None."""
    joined = " ".join(cmdline)
    for rule in catalogue().rules:
        if rule.name is not None and not rule.name.search(name):
            continue
        if rule.cmdline is not None and not rule.cmdline.search(joined):
            continue
        if rule.parent is not None and rule.parent != parent_rule:
            continue
        if rule.same_as_parent and (not cmdline or cmdline != parent_cmdline):
            continue
        if rule.python and not _is_python(cmdline):
            continue
        if rule.parent_launcher and not (parent_rule and getattr(rule_by_id(parent_rule), "launcher", None)):
            continue
        return rule
    return None

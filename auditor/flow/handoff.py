"""Configuration objects handed whole to another package's code, over the per-file facts.

    carried_out(result, holds_config)   # {(function, parameter): the other package's callee it reaches}
    foreign_calls(result)               # (file, call edge) of each call into another package
    foreign_callees(callees, result)    # those of CALLEES that are another package's
    sections_into_classes(result)       # {section: [(file, project class, its fields)]} of splats

`trainer = RayPPOTrainer(config)`, or `super().__init__(config, ...)` in a class that extends
another package's trainer: every key of that configuration may be read there, out of sight.
A parameter (or a config-named local) that the project passes on to such a call, through its
own functions and classes, carries the configuration out too (to a fixed point, bounded by
MAX_ROUNDS). A section splatted into a project dataclass (`Trainer(**cfg.trainer)`) fills its
fields; a field typed as another package's class takes the keys under it out of sight.
"""

from __future__ import annotations

from typing import Callable

from auditor.flow.local import module_name
from auditor.flow.resolve import _facts, _Functions
from auditor.model import ScanResult

MAX_ROUNDS = 6  # project call levels followed back from the other package's callee


def carried_out(result: ScanResult, holds_config: Callable[[str], bool]) -> dict[tuple[str, str], str]:
    """(function, parameter) -> the other package's callee that the parameter is handed to
    whole, for parameters that HOLDS_CONFIG says hold a configuration by their name (`config`,
    `cfg`: the caller's vocabulary)."""
    facts = _facts(result)
    ours = _project_names(result)
    parsed = _project_names(result, unparsed=False)
    carried: dict[tuple[str, str], str] = {}
    local: list[tuple[dict, str]] = []  # (edge, its module)
    for f in facts.values():
        for edge in f.get("calls", ()):
            callee = edge.get("callee") or ()
            # (a later base of the class, in `super().__init__(config)`, that is another package's)
            later = [m for m in edge.get("mro", ()) if _foreign([m], ours)]
            if later and callee and not _foreign(callee, ours):
                callee = later
            # (into another package, or into a module of the project that the scan did not parse,
            # which names no parallelism setting yet may hand the configuration on: out of sight)
            if callee and (_foreign(callee, ours) or _unparsed(callee, ours, parsed)):
                names = [arg["name"] for arg in _arguments(edge) if _param(arg, holds_config)]
                # a local the function loads or rebuilds (`config = load_config(path)`,
                # `job_config = OmegaConf.merge(defaults, config)`), passed as it is
                names += [n for n in edge.get("bare", ()) if holds_config(n)]
                for name in names:
                    carried.setdefault((edge["fn"], name), callee[0].removesuffix(".__init__"))
            elif callee:
                local.append((edge, f.get("module") or ""))
    if not carried or not local:
        return carried
    functions = _Functions(facts)
    resolved = [(edge, target) for edge, module in local
                if (target := functions.resolve(edge["callee"], near=module)) is not None]
    for _ in range(MAX_ROUNDS):
        grown = False
        for edge, target in resolved:
            params = functions.info[target]["params"]
            for index, arg in enumerate(edge.get("args") or ()):
                if index < len(params) and _param(arg, holds_config) and (target, params[index]) in carried:
                    grown |= _carry(carried, (edge["fn"], arg["name"]), carried[(target, params[index])])
            for name, arg in (edge.get("kwargs") or {}).items():
                if _param(arg, holds_config) and (target, name) in carried:
                    grown |= _carry(carried, (edge["fn"], arg["name"]), carried[(target, name)])
        if not grown:
            break
    return carried


def foreign_calls(result: ScanResult):
    """(file, call edge) of each call whose callee belongs to another package."""
    facts = _facts(result)
    ours = _project_names(result)
    for rel, f in facts.items():
        for edge in f.get("calls", ()):
            if _foreign(edge.get("callee", ()), ours):
                yield rel, edge


def _foreign(callee, ours: set[str]) -> bool:
    return not any(_ours(c, ours) for c in callee)


def _ours(callee: str, ours: set[str]) -> bool:
    """CALLEE names the project's code when its module part - all but the last name or two
    (`pkg.mod.f`, `pkg.mod.Class.method`) - is a dotted run of a project module's path:
    `trainers.PPO` run from the folder above `trainers/` is `training.trainers.PPO`, while
    `nemo_rl.algorithms.grpo.setup` is another package's even in a project with a folder
    `nemo_skills/training/nemo_rl/`."""
    parts = callee.removesuffix(".__init__").split(".")
    if len(parts) == 1:
        return parts[0] in ours
    return any(".".join(parts[:n]) in ours for n in (len(parts) - 1, len(parts) - 2) if n >= 1)


def _unparsed(callee: list[str], ours: set[str], parsed: set[str]) -> bool:
    """A class of a project module the scan did not parse (`trainer.Custom`, which may extend
    another package's trainer), built from the configuration. Not a function there (a helper
    that patches and returns the configuration names no setting), nor a method named through a
    class (`worker.EnvWorker.create_group` may be a parsed base's)."""
    names = [c.removesuffix(".__init__").split(".") for c in callee]
    modules = {".".join(n[:-1]) for n in names if n[-1][:1].isupper()}
    return bool(modules & ours) and not modules & parsed


def foreign_callees(callees, result: ScanResult) -> set[str]:
    """Those of CALLEES that name another package's code (not a module of the scanned tree)."""
    ours = _project_names(result) if callees else set()
    return {c for c in callees if _foreign([c], ours)}


def _project_names(result: ScanResult, unparsed: bool = True) -> set[str]:
    """Every run of dotted names in the modules of the tree (`a.b.c` -> `a`, `b`, `a.b`, `b.c`,
    ...): run from another folder, or through a package that re-exports, a module goes by part
    of its path. Every Python file counts, parsed or not (UNPARSED false: only the parsed):
    a module with no parallelism site is the project's all the same. Built once per result
    (QG101 asks five times in one scan; each build takes ~30 ms on sglang's 4,700 files)."""
    if _LAST.get("meta") is not result.meta:
        _LAST.clear()
        _LAST["meta"] = result.meta
    key = "all" if unparsed else "parsed"
    if key not in _LAST:
        paths = [rel for rel in result.meta if rel.endswith(".py")]
        if unparsed:
            paths += [cand.rel for cand, _counted in result.unparsed if cand.rel.endswith(".py")]
        out: set[str] = set()
        for rel in paths:
            parts = [p for p in module_name(rel).split(".") if p]
            out.update(".".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1))
        _LAST[key] = out
    return _LAST[key]


_LAST: dict = {}  # the last result's meta and its module names: rules run one scan at a time


def _arguments(edge: dict):
    yield from edge.get("args") or ()
    yield from (edge.get("kwargs") or {}).values()


def _param(arg, holds_config: Callable[[str], bool]) -> bool:
    return isinstance(arg, dict) and arg.get("k") == "param" and holds_config(str(arg.get("name") or ""))


def _carry(carried: dict, at: tuple[str, str], callee: str) -> bool:
    if at in carried:
        return False
    carried[at] = callee
    return True


MAX_BASES = 5  # project base classes followed for inherited fields


def sections_into_classes(result: ScanResult) -> dict[str, list[tuple[str, str, dict]]]:
    """Config sections splatted into a project class that declares its settings as annotated
    fields (`ReplayBuffer(**cfg.replay_buffer)`, `RLTrainer.options(...).as_actor(**cfg.trainer)`
    of a dataclass) -> [(the calling file, the class, {field: (its type's dotted name or "",
    that type's own fields when it is a project class, whether it is another package's)})],
    the fields its project bases declare included. Section keys and field names lowercased."""
    facts = _facts(result)
    classes = _field_classes(facts)
    if not classes:
        return {}
    ours = _project_names(result)
    out: dict[str, list[tuple[str, str, dict]]] = {}
    for rel, f in facts.items():
        for edge in f.get("calls", ()):
            if not edge.get("splats"):
                continue
            cls = next((c for name in edge.get("callee") or () if (c := _resolve_class(name, classes))), None)
            if cls is None:
                continue
            fields = {name: _field_type(kind, classes, ours) for name, kind in _inherited_fields(cls, classes).items()}
            for tree in edge["splats"]:
                if isinstance(tree, dict) and tree.get("k") in ("config", "attr") and tree.get("key"):
                    out.setdefault(str(tree["key"]).lower(), []).append((rel, cls, fields))
    return out


def _field_type(kind: str, classes: _Classes, ours: set[str]) -> tuple[str, dict | None, bool]:
    inner = _resolve_class(kind, classes) if kind else None
    if inner is not None:
        return kind, _inherited_fields(inner, classes), False
    return kind, None, bool(kind) and not _ours(kind, ours)


def _field_classes(facts: dict[str, dict]) -> "_Classes":
    """Every project class with annotated fields or project bases -> (its own fields, its bases)."""
    out: dict[str, tuple[dict[str, str], list[str]]] = {}
    for f in facts.values():
        fields = f.get("fields") or {}
        bases = f.get("bases") or {}
        for cls in set(fields) | set(bases):
            out[cls] = (fields.get(cls) or {}, bases.get(cls) or [])
    return _Classes(out)


class _Classes(dict):
    """The class table with each class under every dotted tail of its name, so that a name is
    resolved by lookup, not by a pass over every class of the tree (thousands per callee)."""

    def __init__(self, table: dict):
        super().__init__(table)
        self.by_tail: dict[str, list[str]] = {}
        for cls in self:
            parts = cls.split(".")
            for k in range(1, len(parts)):
                self.by_tail.setdefault(".".join(parts[k:]), []).append(cls)


def _resolve_class(name: str, classes: _Classes) -> str | None:
    """The project class a dotted NAME means: itself, the one class it is a dotted tail of
    (`forge.actors.trainer.RLTrainer` for `src.forge.actors.trainer.RLTrainer`), or the one
    class of that name under the package NAME spells (a re-export: `forge.controller.ForgeActor`)."""
    name = name.removesuffix(".__init__")
    if name in classes:
        return name
    tails = classes.by_tail.get(name, ())
    if len(tails) == 1:
        return tails[0]
    package, _, short = name.rpartition(".")
    found = [c for c in classes.by_tail.get(short, ()) if f".{package}." in f".{c}"]
    return found[0] if len(found) == 1 else None


def _inherited_fields(cls: str, classes: _Classes) -> dict[str, str]:
    """CLS's annotated fields with its project bases' (its own win), lowercased names."""
    out: dict[str, str] = {}
    seen = set()
    todo = [cls]
    while todo and len(seen) < MAX_BASES:
        c = todo.pop(0)
        if c in seen or c not in classes:
            continue
        seen.add(c)
        fields, bases = classes[c]
        for name, kind in fields.items():
            out.setdefault(name.lower(), kind)
        todo.extend(b for base in bases if (b := _resolve_class(base, classes)))
    return out

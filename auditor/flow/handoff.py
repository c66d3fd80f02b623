"""Configuration objects handed whole to another package's code, over the per-file facts.

    carried_out(result, holds_config)   # {(function, parameter): the other package's callee it reaches}
    foreign_calls(result)               # (file, call edge) of each call into another package

`trainer = RayPPOTrainer(config)`, or `super().__init__(config, ...)` in a class that extends
another package's trainer: every key of that configuration may be read there, out of sight.
A parameter that the project passes on to such a call, through its own functions and classes,
carries the configuration out too (to a fixed point, bounded by MAX_ROUNDS).
"""

from __future__ import annotations

from typing import Callable

from auditor.flow.resolve import _facts, _Functions
from auditor.model import ScanResult

MAX_ROUNDS = 6  # project call levels followed back from the other package's callee


def carried_out(result: ScanResult, holds_config: Callable[[str], bool]) -> dict[tuple[str, str], str]:
    """(function, parameter) -> the other package's callee that the parameter is handed to
    whole, for parameters that HOLDS_CONFIG says hold a configuration by their name (`config`,
    `cfg`: the caller's vocabulary)."""
    facts = _facts(result)
    ours = _project_names(facts)
    carried: dict[tuple[str, str], str] = {}
    local: list[tuple[dict, str]] = []  # (edge, its module)
    for f in facts.values():
        for edge in f.get("calls", ()):
            callee = edge.get("callee") or ()
            if callee and _foreign(callee, ours):
                for arg in _arguments(edge):
                    if _param(arg, holds_config):
                        carried.setdefault((edge["fn"], arg["name"]), callee[0].removesuffix(".__init__"))
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
    ours = _project_names(facts)
    for rel, f in facts.items():
        for edge in f.get("calls", ()):
            if _foreign(edge.get("callee", ()), ours):
                yield rel, edge


def _foreign(callee, ours: set[str]) -> bool:
    return not any(c.split(".")[0] in ours for c in callee)


def _project_names(facts: dict[str, dict]) -> set[str]:
    """Every dotted name of the project's modules: a call through `from trainers import X`,
    run from the folder above `trainers/`, is the project's as much as one through
    `from training.trainers import X`."""
    return {part for f in facts.values() for part in (f.get("module") or "").split(".") if part}


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

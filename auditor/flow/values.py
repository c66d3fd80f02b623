"""Value trees -> the path shown to users, and the value that runs along it.

``path(tree, sink)`` flattens a tree into the ``flow`` list (source first, sink last) that
sites and findings carry. ``evaluate(tree, lookup)`` computes the effective value: known
only while every step is statically known; otherwise "unknown", naming the first step that
is not.
"""

from __future__ import annotations

from typing import Any, Callable

MAX_STEPS = 14
SOURCE_KINDS = ("literal", "config", "env", "param", "attr", "unknown", "call", "cpu_count", "default")
FIELDS = ("key", "name", "value", "default", "has_default", "fn", "callee", "param", "backend", "omitted", "why",
          "op", "test")


def leaves(tree: dict) -> list[dict]:
    out: list[dict] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        children = node.get("of")
        if children:
            stack.extend(reversed(children))
        else:
            out.append(node)
    return out


def reads_configuration(tree: dict) -> bool:
    """Does the value read a configuration key or an environment variable anywhere in it?"""
    return any(n["k"] in ("config", "env") for n in leaves(tree))


def params(tree: dict) -> list[dict]:
    return [n for n in leaves(tree) if n["k"] == "param"]


def small_cap(tree: dict) -> dict | None:
    """The smallest literal bound of a `min(...)` on the path whose other side is not known
    statically (`min(cpus // 2, 4)`, `min(4, per_rank)`): the count never exceeds it."""
    best = None
    stack = [tree]
    while stack:
        node = stack.pop()
        children = node.get("of") or ()
        stack.extend(children)
        if node["k"] != "min" or len(children) < 2:
            continue
        bounds = [c for c in children if c["k"] == "literal" and type(c.get("value")) is int]
        if bounds and len(bounds) < len(children):
            low = min(bounds, key=lambda c: c["value"])
            if best is None or low["value"] < best["value"]:
                best = {"value": low["value"], "file": node["file"], "line": node["line"], "text": node["text"]}
    return best


def substitute(tree: dict, fn: str, args: dict[str, dict]) -> dict:
    """The tree with each parameter of FN replaced by the tree given for it in ARGS."""
    if tree["k"] == "param" and tree.get("fn") == fn and tree.get("name") in args:
        return args[tree["name"]]
    children = tree.get("of")
    if not children:
        return tree
    return {**tree, "of": [substitute(c, fn, args) for c in children]}


def _step(node: dict) -> dict:
    step = {"file": node["file"], "line": node["line"], "column": node.get("col", 1), "kind": node["k"],
            "text": node.get("text", "")}
    for f in FIELDS:
        if f in node and node[f] is not None:
            step[f] = node[f]
    return step


def path(tree: dict, sink: dict | None = None) -> list[dict]:
    """Post-order steps of TREE (sources first), then SINK. Two steps on the same line
    merge: the source keeps its kind and fields, and takes the longer statement text."""
    steps: list[dict] = []

    def walk(node: dict) -> None:
        for child in node.get("of") or ():
            walk(child)
        step = _step(node)
        step["role"] = "source" if not node.get("of") else "step"
        if steps and steps[-1]["file"] == step["file"] and steps[-1]["line"] == step["line"]:
            prev = steps[-1]
            if len(step["text"]) > len(prev["text"]):
                prev["text"] = step["text"]
            if step["kind"] == "arg":
                prev.update({k: v for k, v in step.items() if k in ("callee", "param", "omitted")})
            return
        steps.append(step)

    walk(tree)
    if sink is not None:
        if steps and steps[-1]["file"] == sink["file"] and steps[-1]["line"] == sink["line"] \
                and steps[-1]["role"] == "step":
            steps.pop()
        steps.append({**sink, "role": "sink"})
    if len(steps) > MAX_STEPS:
        steps = steps[:MAX_STEPS // 2] + [{"role": "step", "kind": "elided", "text": "...",
                                           "file": steps[MAX_STEPS // 2]["file"],
                                           "line": steps[MAX_STEPS // 2]["line"], "column": 1}] \
            + steps[-(MAX_STEPS // 2 - 1):]
    return steps


def where(node: dict) -> str:
    return f"{node['file']}:{node['line']}"


# lookup(kind, key) -> (known, value, why) for a config key or env var, or None when no
# scanned file sets it.
Lookup = Callable[[str, str], "tuple[bool, Any, str] | None"]


def evaluate(tree: dict, lookup: Lookup) -> tuple[bool, Any, str]:
    """(known, value, why) of TREE."""
    k = tree["k"]
    kids = tree.get("of") or []
    if k == "literal":
        return True, tree.get("value"), f"the literal {tree['text']} at {where(tree)}"
    if k in ("config", "env"):
        key = tree.get("key") if k == "config" else tree.get("name")
        found = lookup(k, key)
        if found is not None and found[0]:
            return True, found[1], f"{key} = {found[1]!r} ({found[2]})"
        if found is None and tree.get("has_default"):
            if "default" in tree:
                return True, tree["default"], (f"{key} is set in no scanned file, so the default "
                                               f"{tree['default']!r} at {where(tree)} runs")
            return False, None, f"unknown: {key} is set in no scanned file and its default " \
                                f"{tree.get('default_text', '')} at {where(tree)} is not statically known"
        if found is None:
            return False, None, f"unknown: {key} at {where(tree)} is set in no scanned file"
        return False, None, f"unknown: {key} at {where(tree)}: {found[2]}"
    if k == "param":
        return False, None, f"unknown: parameter {tree.get('name')} of {tree.get('fn', '?').rsplit('.', 1)[-1]}() " \
                            f"at {where(tree)} is set by its callers"
    if k in ("assign", "arg", "returns") and kids:
        return evaluate(kids[0], lookup)
    if k == "element" and kids:
        # an item of a list walked in a loop (`for n in zip(..., num_workers)`): known when every
        # item is the same
        known, v, why = evaluate(kids[0], lookup)
        if known and isinstance(v, (list, tuple)) and v and all(x == v[0] for x in v):
            return True, v[0], why
        return False, None, f"unknown: {tree['text']} at {where(tree)} walks {kids[0].get('text', '?')}, " \
                            f"one item per turn"
    if k == "cast" and kids:
        known, v, why = evaluate(kids[0], lookup)
        if known:
            try:
                v = {"int": int, "float": float, "str": str, "bool": bool, "round": round, "abs": abs}[tree["fn"]](v)
            except (TypeError, ValueError, KeyError, OverflowError):
                return False, None, f"unknown: {tree['text']} at {where(tree)} fails on {v!r}"
        return known, v, why
    if k in ("min", "max", "arith", "oneof", "ifexp", "or", "and") and kids:
        results = [evaluate(c, lookup) for c in kids]
        if k == "or":
            for known, v, why in results:
                if not known:
                    return False, None, why
                if v:
                    return True, v, why
            return results[-1]
        unknown = next((r for r in results if not r[0]), None)
        if unknown is not None:
            return unknown
        values = [r[1] for r in results]
        if k in ("oneof", "ifexp"):
            if all(v == values[0] for v in values):
                return True, values[0], results[0][2]
            what = f"depends on {tree.get('test')}" if k == "ifexp" else "is set on more than one path"
            return False, None, f"unknown: {tree['text']} at {where(tree)} {what} ({', '.join(map(repr, values))})"
        try:
            if k in ("min", "max"):
                v = (min if k == "min" else max)(values)
            elif k == "arith":
                v = _arith(tree.get("op"), values[0], values[1])
            else:
                v = values[-1] if all(values) else next(x for x in values if not x)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return False, None, f"unknown: {tree['text']} at {where(tree)}"
        return True, v, f"{tree['text']} at {where(tree)} = {v!r}"
    if k == "cpu_count":
        return False, None, f"unknown: {tree['text']} at {where(tree)} depends on the machine"
    why = tree.get("why") or "not statically known"
    return False, None, f"unknown: {tree['text']} at {where(tree)} ({why})"


def _arith(op: str | None, a: Any, b: Any) -> Any:
    if op == "Add":
        return a + b
    if op == "Sub":
        return a - b
    if op == "Mult":
        return a * b
    if op == "FloorDiv":
        return a // b
    if op == "Div":
        return a / b
    if op == "Mod":
        return a % b
    raise TypeError(op)

"""Knob keys as every layer compares them, below extraction, flow and join alike."""

from __future__ import annotations

import ast
import re

# classes whose instances are a program's settings, by name (`TrainConfig`, `ScriptArguments`)
CONFIG_CLASS = re.compile(r"(Config|Configs|Args|Arguments|Settings|Options|HParams|Hyperparameters)$")


# a settings field handed whole to a backend: `args.n_explorer`, `self.cfg.rollout_procs`
FIELD_EXPR = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)\Z")


def fed_field(expr: str) -> str | None:
    """The field's name when EXPR (a consumer's argument, as written) is a settings field
    (`args.n_explorer` -> `n_explorer`), else None."""
    m = FIELD_EXPR.match(expr)
    return m.group(1) if m else None


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


# a settings object a count is read from: `data_config` of `data_config["num_workers"]`,
# `self.cfg.data` of `self.cfg.data.num_workers`; a call or an index by variable is no holder
def holder(node) -> str | None:
    """The settings object NODE (an attribute or a string-keyed item) reads its key from."""
    if isinstance(node, ast.Attribute) or _string_item(node):
        return ast.unparse(node.value) if _chain(node.value) else None
    return None


def holder_of(expr: str) -> str | None:
    """holder() of an expression's text (a site's `expr`); None for text that is no expression."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return holder(tree.body)


def _string_item(node) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)


def _chain(node) -> bool:
    while isinstance(node, ast.Attribute) or _string_item(node):
        node = node.value
    return isinstance(node, ast.Name)

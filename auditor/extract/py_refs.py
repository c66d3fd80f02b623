"""Small, tree-local helpers for the Python extractor: literals, source text, key paths.

Nothing here walks a whole module but walk(), a faster ast.walk; each other helper looks at
one expression.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

NOT_LITERAL = object()  # sentinel: the expression has no static value

# A segment that names "the configuration object" rather than a section of it. The root of
# a chain (a plain variable) is always dropped; after `self.`/`cls.` and after the root,
# leading segments that look like a handle are dropped too (docs/extract-python.md).
HANDLE = re.compile(
    r"^_*(cfg|cfgs|config|configs|conf|args|opt|opts|options|hparams|hp|flags|settings|kwargs)$",
    re.IGNORECASE,
)
CASTS = {"int", "float", "str", "bool"}
CPU_COUNT = {
    "os.cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count", "torch.multiprocessing.cpu_count",
    "os.sched_getaffinity", "os.process_cpu_count", "joblib.cpu_count", "loky.cpu_count",
}


def literal(node: ast.AST | None) -> Any:
    """The Python value of a literal expression (numbers, strings, None, bools, -1, lists
    and tuples and dicts of literals), else NOT_LITERAL."""
    if node is None:
        return NOT_LITERAL
    if isinstance(node, ast.Constant):
        return node.value if not isinstance(node.value, bytes) and node.value is not Ellipsis else NOT_LITERAL
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = literal(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return NOT_LITERAL
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [literal(e) for e in node.elts]
        if any(i is NOT_LITERAL for i in items):
            return NOT_LITERAL
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return NOT_LITERAL
        keys = [literal(k) for k in node.keys]
        values = [literal(v) for v in node.values]
        if any(x is NOT_LITERAL for x in keys + values):
            return NOT_LITERAL
        try:
            return dict(zip(keys, values))
        except TypeError:
            return NOT_LITERAL
    return NOT_LITERAL


def is_literal(node: ast.AST | None) -> bool:
    return literal(node) is not NOT_LITERAL


def json_safe(value: Any) -> Any:
    """Tuples become lists so the value serialises to JSON unchanged."""
    if isinstance(value, tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, complex):
        return str(value)
    return value


class Source:
    """The file's lines, for the stripped source line and the exact text of a node."""

    def __init__(self, text: str):
        self._text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:  # most files yield no site: split only when one is made
            text = self._text  # the same split without the regex when no line ends in \r (5x faster)
            self._lines = text.split("\n") if "\r" not in text else re.split(r"\r\n|\r|\n", text)
        return self._lines

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""

    def column(self, node: ast.AST) -> int:
        """1-based character column (ast's col_offset counts UTF-8 bytes)."""
        line = self.lines[node.lineno - 1] if 0 < node.lineno <= len(self.lines) else ""
        if line.isascii():
            return node.col_offset + 1
        return len(line.encode("utf-8")[: node.col_offset].decode("utf-8", "replace")) + 1

    def text(self, node: ast.AST, limit: int = 200) -> str:
        start, end = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        if not 0 < start <= end <= len(self.lines):
            return ""
        first = self.lines[start - 1]
        if start == end:
            raw = first[node.col_offset:node.end_col_offset] if first.isascii() else \
                first.encode("utf-8")[node.col_offset:node.end_col_offset].decode("utf-8", "replace")
        else:  # (offsets count UTF-8 bytes: on an ASCII line they index characters too)
            parts = [first[node.col_offset:] if first.isascii() else
                     first.encode("utf-8")[node.col_offset:].decode("utf-8", "replace")]
            parts += self.lines[start:end - 1]
            last = self.lines[end - 1]
            parts.append(last[:node.end_col_offset] if last.isascii() else
                         last.encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace"))
            raw = " ".join(p.strip() for p in parts)
        raw = " ".join(raw.split())
        return raw if len(raw) <= limit else raw[: limit - 3] + "..."


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def getter_key(node: ast.Call) -> tuple[ast.AST, str, str] | None:
    """(receiver, key, via) for `x.get("k")`, `x.pop("k")`, `x.setdefault("k")`,
    `getattr(x, "k")`, `OmegaConf.select(x, "a.b")`; None otherwise."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault") and node.args:
        key = const_str(node.args[0])
        if key is not None:
            return func.value, key, func.attr
    if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
        key = const_str(node.args[1])
        if key is not None:
            return node.args[0], key, "getattr"
    if (isinstance(func, ast.Attribute) and func.attr == "select" and isinstance(func.value, ast.Name)
            and func.value.id == "OmegaConf" and len(node.args) >= 2):
        key = const_str(node.args[1])
        if key is not None:
            return node.args[0], key, "select"
    return None


def getter_default(node: ast.Call, via: str) -> ast.AST | None:
    """The default expression of a getter call, or None when none is given."""
    if via == "getattr":
        return node.args[2] if len(node.args) >= 3 else None
    if via == "select":
        for kw in node.keywords:
            if kw.arg == "default":
                return kw.value
        return node.args[2] if len(node.args) >= 3 else None
    if len(node.args) >= 2:
        return node.args[1]
    for kw in node.keywords:
        if kw.arg in ("default", "d"):
            return kw.value
    return None


def chain(node: ast.AST) -> tuple[list[str], ast.AST]:
    """Segments of a reference chain, innermost first reversed to root-first, and the root
    node: `self.config.data["x"]` -> (["config", "data", "x"], Name self). Getter calls are
    part of the chain (`cfg.get("data").x`). An unknown subscript cuts the chain: segments
    before it are dropped and the root becomes that subscript."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            key = const_str(node.slice)
            if key is not None:
                parts.extend(reversed(key.split(".")))
                node = node.value
            elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                node = node.value  # a list index: cfg.envs[0].num_envs -> envs.num_envs
            else:
                break
        elif isinstance(node, ast.Call) and (g := getter_key(node)) is not None:
            parts.extend(reversed(g[1].split(".")))
            node = g[0]
        else:
            break
    parts.reverse()
    return parts, node


def walk(tree: ast.AST, prune: Callable[[ast.AST], bool] | None = None) -> list[ast.AST]:
    """ast.walk's nodes in ast.walk's order (breadth first), as a list, in half the time; less
    each node for which PRUNE holds, with everything below it."""
    out, is_node = [tree], ast.AST
    append = out.append
    for node in out:
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, is_node) and (prune is None or not prune(item)):
                        append(item)
            elif isinstance(value, is_node) and (prune is None or not prune(value)):
                append(value)
    return out


def own_nodes(body: list) -> list[ast.AST]:
    """The nodes of BODY, not those of the functions, classes and lambdas defined in it."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    out, stack = [], [n for n in body if not isinstance(n, nested)]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(n for n in ast.iter_child_nodes(node) if not isinstance(n, nested))
    return out


def strip_handles(parts: list[str]) -> list[str]:
    """Drop leading handle segments (config, cfg, args ...), keeping at least one segment."""
    i = 0
    while i < len(parts) - 1 and HANDLE.match(parts[i]):
        i += 1
    return parts[i:]


def range_arg(node: ast.AST) -> ast.AST | None:
    """N of `range(N)` / `range(0, N)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        return node.args[-1] if len(node.args) <= 2 else node.args[1]
    return None


def split_count(node: ast.AST) -> ast.AST | None:
    """N of `np.array_split(items, N)` / `array_split(items, N)`: a list of N parts."""
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not isinstance(node.args[1], (ast.List, ast.Tuple)) \
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "array_split":
        return node.args[1]
    return None


def base_name(node: ast.AST) -> ast.Name | None:
    """The variable under a chain cut by a computed subscript or call: summary[key] -> summary."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def uncast(node: ast.AST) -> ast.AST:
    """int(x) -> x."""
    while isinstance(node, ast.Call) and getattr(node.func, "id", "") in CASTS and len(node.args) == 1:
        node = node.args[0]
    return node


def numeric_looking(node: ast.AST) -> bool:
    """Could this expression be a count? Arithmetic, a call, a conditional: yes. Containers,
    comparisons and `a or b` fallbacks (reads, not overrides): no."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp, ast.Compare, ast.BoolOp, ast.JoinedStr)):
        return False
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("list", "dict", "set", "tuple", "sorted"):
        return False
    return True


def click_name(decls: list[str]) -> str | None:
    """The parameter a `@click.option(*decls)` sets, named as click names it: a declaration
    without dashes, else the first long option (else the first), dashes to underscores, lower case."""
    name = next((d for d in decls if not d.startswith("-")), None)
    if name is None and decls:
        longs = [d for d in decls if d.startswith("--")]
        name = (longs[0] if longs else decls[0]).lstrip("-").replace("-", "_").lower()
    return name


# a flag's help that says it counts a parallel unit: "Number of workers to use", "# of parallel envs",
# "number of data loading workers", "how many training processes to use" (up to three words before
# the unit; a word such as "to" or "per" ends the count's noun phrase: "number of samples to
# process", "number of frames per process")
HELP_COUNTS = re.compile(r"(\b(number|num|count)\s+of\s+|#\s*of\s+|\bhow\s+many\s+)"
                         r"((?!(to|per|for|of|by|in|on|at|each|ahead|from|with)\b)[a-z][\w/-]*\s+){0,3}"
                         r"(workers?|process(es)?|procs|env(ironment)?s|actors|threads|gpus|cpus|cores|ranks|"
                         r"replicas|shards|nodes)\b", re.IGNORECASE)


# What a help text or a docstring says a setting defaults to: a number ("(default: 16)",
# "Defaults to 8.", "Default, 12") or this machine's CPU count ("Defaults to number of CPUs").
# A number that starts a formula or a rate ("2 * num_gpus", "4 per GPU", "0.9") is no default.
_STATED_NUMBER = re.compile(r"\bdefaults?\b(?:\s+value)?\s*(?:is|are|:|=|to|,|of)?\s*(?:set\s+to\s+)?(-?\d+)"
                            r"(?!\w|\.\d|\s*[*/x\u00d7+%]|\s*-\s*\d|\s+per\b)", re.IGNORECASE)
_STATED_MACHINE = re.compile(
    r"\bdefaults?\b\s*(?:is|:|=|to|,)?\s*(?:the\s+)?(?:number|count|#)\s+of\s+"
    r"(?:available\s+|all\s+|logical\s+|physical\s+)?(?:cpus?|cpu\s+cores|cores|processors)\b"
    r"|\bdefaults?\s+(?:is\s+|to\s+)?(?:all|every)\s+(?:available\s+)?(?:cpus?|cores|processors)\b"
    r"|\bdefaults?\b\s*(?:is|:|=|to)?\s*(?:os\.|multiprocessing\.)?cpu_count\(\)", re.IGNORECASE)
STATED_CPU_COUNT = "cpu_count"


def stated_default(text: str) -> int | str | None:
    """The default TEXT (a help or a docstring line) states: an int, STATED_CPU_COUNT, or None."""
    if not text or "efault" not in text:
        return None
    m = _STATED_NUMBER.search(text)
    if m:
        return int(m.group(1))
    return STATED_CPU_COUNT if _STATED_MACHINE.search(text) else None


_DOC_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.+)$")


def documented_params(node: ast.AST) -> dict[str, str]:
    """name -> description from a function docstring's `name (type): description` lines."""
    doc = ast.get_docstring(node, clean=True) or ""
    out = {}
    for line in doc.splitlines()[:200]:
        m = _DOC_PARAM.match(line)
        if m:
            out.setdefault(m.group(1), m.group(3)[:200])
    return out

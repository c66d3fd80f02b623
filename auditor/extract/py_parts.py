"""Work cut into N parts by a setting, then mapped on a pool that N does not size.

`part_len = len(files) // args.num_tasks`, `parts = [files[i:i + part_len] ...]`, then
`with Pool() as pool: pool.starmap(annotate, [(p, out) for p in parts])`: the user's N chooses
how many parts there are, not how many run at once; the pool runs its own count of them at a
time (the machine's CPU count, or a literal). Facts only: QG105 decides what they mean.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from auditor.extract.py_facts import POOL_METHODS, called_name
from auditor.extract.py_refs import own_nodes

# pool constructors by their last name: the keyword that sizes them (else the first argument)
POOLS = {"Pool": "processes", "ThreadPool": "processes", "ProcessPoolExecutor": "max_workers",
         "ThreadPoolExecutor": "max_workers", "ProcessPool": "max_workers"}
MAPS = POOL_METHODS - {"apply"}  # (apply runs one call and waits: it spreads no work)
# what holds a program's settings: `args.num_tasks`, `cfg.eval.num_chunks`
SETTINGS = re.compile(r"(args|opts?|options|cfg|conf|config|flags|hparams|params|hps)$", re.IGNORECASE)
# a count of parts by its name (`num_tasks`, `n_chunks`, `num_gpus`), not a size (`batch_size`)
COUNT = re.compile(r"^(n|num|number_of|total)_?[a-z]|_(num|count)$|^nproc", re.IGNORECASE)
SIZE = re.compile(r"size|len|batch|step|per_|ratio|frac", re.IGNORECASE)
SPLITTERS = re.compile(r"(array_split|split|chunks?|chunkify|partition|shard)\w*$", re.IGNORECASE)
MAX_DEPTH = 6  # assignments followed back from what a pool maps
MAX_FACTS = 20
GATE = re.compile(r"Pool\(|PoolExecutor\(")


def split_work(tree: ast.Module, text_of: Callable[[ast.AST], str]) -> list[dict]:
    """[{line, col, function, key, read, split_line, size, map_line, pool}] for each pool whose mapped work was cut
    into parts by a setting that does not size the pool. SIZE: None (the constructor's default),
    an int literal, or the text of the expression that sizes it (no setting in it)."""
    out: list[dict] = []
    for name, body in _scopes(tree):
        facts = _scope_facts(name, body, text_of)
        out.extend(facts)
        if len(out) >= MAX_FACTS:
            return out[:MAX_FACTS]
    return out


def _scopes(tree: ast.Module):
    yield "<module>", tree.body
    stack = [(n, "") for n in tree.body]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = prefix + node.name
            yield qual, node.body
            stack.extend((n, qual + ".") for n in node.body)
        elif isinstance(node, ast.ClassDef):
            stack.extend((n, prefix + node.name + ".") for n in node.body)
        elif isinstance(node, (ast.If, ast.With, ast.Try, ast.For, ast.While)) and not prefix:
            stack.extend((n, prefix) for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))


def _last_name(call: ast.Call) -> str:
    return called_name(call.func).rsplit(".", 1)[-1]


def _pool_size(call: ast.Call) -> ast.AST | None:
    """The node that sizes a pool constructor's call, None for its default."""
    keyword = next((k.value for k in call.keywords if k.arg == POOLS[_last_name(call)]), None)
    return keyword if keyword is not None else (call.args[0] if call.args else None)


def _is_pool(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _last_name(node) in POOLS


def _scope_facts(function: str, body: list, text_of) -> list[dict]:
    nodes = own_nodes(body)
    values: dict[str, list[ast.AST]] = {}  # local name -> what it is assigned (or iterates over)
    pools: dict[str, ast.Call] = {}  # local name -> the pool constructor bound to it
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            for target in _names(node.targets[0]):
                values.setdefault(target, []).append(node.value)
            if isinstance(node.targets[0], ast.Name) and _is_pool(node.value):
                pools[node.targets[0].id] = node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            for target in _names(node.target):
                values.setdefault(target, []).append(node.iter)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name) and _is_pool(item.context_expr):
                    pools[item.optional_vars.id] = item.context_expr
    if not pools:
        return []
    out: list[dict] = []
    seen: set[int] = set()
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MAPS
                and isinstance(node.func.value, ast.Name) and node.func.value.id in pools):
            continue
        pool = pools[node.func.value.id]
        if id(pool) in seen:
            continue
        work = _derived(node.args[1:] + [k.value for k in node.keywords], values)
        split = next((s for s in (_split(n, values) for n in work) if s is not None), None)
        if split is None:
            continue
        key, read, at = split
        size = _pool_size(pool)
        if size is not None:
            sized_by = _derived([size], values)
            if any(_setting(n) for n in sized_by):
                continue  # sized by a setting: this one (`Pool(args.num_tasks)`) or another
            shown = size.value if isinstance(size, ast.Constant) and isinstance(size.value, int) \
                and not isinstance(size.value, bool) else text_of(size)[:80]
        else:
            shown = None
        seen.add(id(pool))
        out.append({"line": pool.lineno, "col": pool.col_offset + 1, "function": function, "key": key,
                    "read": read, "split_line": at, "size": shown, "map_line": node.lineno,
                    "pool": _last_name(pool)})
    return out


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


def _derived(roots: list[ast.AST], values: dict[str, list[ast.AST]]) -> list[ast.AST]:
    """ROOTS and every expression the names in them were assigned, MAX_DEPTH steps back."""
    out: list[ast.AST] = []
    seen_names: set[str] = set()
    frontier = list(roots)
    for _ in range(MAX_DEPTH):
        nxt: list[ast.AST] = []
        for expr in frontier:
            out.append(expr)
            for n in ast.walk(expr):
                if isinstance(n, ast.Name) and n.id in values and n.id not in seen_names:
                    seen_names.add(n.id)
                    nxt.extend(values[n.id])
        frontier = nxt
        if not frontier:
            break
    return out


def _setting(node: ast.AST) -> str | None:
    """`args.num_tasks` -> "num_tasks", `cfg.eval.num_chunks` -> "eval.num_chunks"."""
    if not isinstance(node, ast.Attribute):
        return None
    parts: list[str] = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    if isinstance(cur, ast.Name) and SETTINGS.search(cur.id) and cur.id != "self":
        return ".".join(reversed(parts))
    if parts and isinstance(cur, ast.Name) and cur.id == "self" and len(parts) >= 2 and SETTINGS.search(parts[-1]):
        return ".".join(reversed(parts[:-1]))  # self.args.num_tasks
    return None


def _count_setting(node: ast.AST, values: dict[str, list[ast.AST]]) -> tuple[str, str] | None:
    """(the setting NODE is, as read) directly or through local names (`num_tasks = args.num_tasks`)."""
    for n in _derived([node], values):
        if isinstance(n, (ast.Attribute, ast.Name)):
            key = _setting(n)
            if key:
                return key, ast.unparse(n)[:80]
    return None


def _split(expr: ast.AST, values: dict[str, list[ast.AST]]) -> tuple[str, str, int] | None:
    """(the setting, as read, the line) where EXPR cuts work into that many parts: `len(x) // N`,
    `np.array_split(x, N)`, `chunks(x, N)`, `x[i::N]`."""
    for n in ast.walk(expr):
        by = None
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Div)) and _is_length(n.left):
            by = n.right
        elif isinstance(n, ast.Call) and len(n.args) >= 2 and SPLITTERS.search(_last_name(n)):
            by = n.args[1]
        elif isinstance(n, ast.Slice) and n.step is not None and n.upper is None:
            by = n.step
        setting = _count_setting(by, values) if by is not None else None
        if setting is not None:
            leaf = setting[0].rsplit(".", 1)[-1]
            if COUNT.search(leaf) and not SIZE.search(leaf):
                return setting[0], setting[1], n.lineno
    return None


def _is_length(node: ast.AST) -> bool:
    """`len(files)` (the amount of work), possibly `len(files) + n - 1` for rounding up."""
    if isinstance(node, ast.BinOp):
        return _is_length(node.left)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"

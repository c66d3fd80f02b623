"""Counts split with the remainder dropped: `n_envs=int(cfg.n_envs / cfg.n_processes)`.

A count of parallel units (envs, workers, GPUs) divided by another count with truncation and
handed on as a count: when the user's value is not a multiple, `n % k` units never run. A file
that tests the remainder anywhere (`assert n % k == 0`, `divmod(n, k)`) checks it; that split
is left out. Facts only: QG104 decides what they mean.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from auditor.extract.py_refs import chain, strip_handles

MAX_SPLITS = 200


def uneven_splits(candidates: list[tuple], tree: ast.AST, text_of: Callable[[ast.AST], str],
                  is_count: Callable[[str], bool]) -> list[dict]:
    """[{line, col, function, key, by, expr, target}] for each truncating split of a count read
    from settings (a dotted read whose last name IS_COUNT accepts) by another count or a literal
    above 1, whose result is a keyword argument or a name that IS_COUNT accepts too. CANDIDATES:
    (function, target name, value, (numerator, denominator)) of the splits the extractor met
    (`split_of`)."""
    checked: set[str] | None = None  # walked only for a file that has a candidate
    aliases: dict[str, str] | None = None  # walked only for a split of a plain name
    out: list[dict] = []
    for fn_name, target, value, (num, den) in candidates:
        if not is_count(target):
            continue
        if aliases is None and isinstance(num, ast.Name):
            aliases = _aliases(tree, is_count)
        key = _setting(num, is_count) or (aliases or {}).get(getattr(num, "id", None))
        if key is None:
            continue
        if checked is None:
            checked = _remainders(tree, text_of)
        if text_of(num) in checked or isinstance(num, ast.Name) and any(
                c == key or c.endswith("." + key) for c in checked):
            continue  # (a copy of the setting: the remainder of the setting itself may be tested)
        # the other count: a setting, a local count (`num_gpus_per_engine`), or a literal above 1
        by = _setting(den, is_count) or (den.id if isinstance(den, ast.Name) and is_count(den.id) else None)
        if by is None and not (isinstance(den, ast.Constant) and isinstance(den.value, int) and den.value > 1):
            continue
        out.append({"line": value.lineno, "col": value.col_offset + 1, "function": fn_name, "key": key,
                    "by": by or den.value, "expr": text_of(value)[:120], "target": target})
        if len(out) >= MAX_SPLITS:
            break
    return out


def split_of(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(numerator, denominator) of `a // b`, `int(a / b)`, `math.floor(a / b)`, and of `str(a // b)`
    (a count handed to a launcher's command line as text)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return node.left, node.right
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
            getattr(node.func, "id", None) in ("str", "int") and isinstance(node.args[0], ast.BinOp) and \
            isinstance(node.args[0].op, ast.FloorDiv):
        return node.args[0].left, node.args[0].right
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
            (getattr(node.func, "id", None) == "int" or getattr(node.func, "attr", None) == "floor"):
        inner = node.args[0]
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):
            return inner.left, inner.right
    return None


def _setting(node: ast.AST, is_count: Callable[[str], bool]) -> str | None:
    """`cfg.algorithm.n_envs` -> "algorithm.n_envs": a dotted read of a count, handles dropped."""
    parts, root = chain(node)
    if not isinstance(root, ast.Name) or not parts or root.id == "self":
        return None
    if not all(isinstance(p, str) for p in parts) or not is_count(parts[-1]):
        return None
    return ".".join(strip_handles([root.id, *parts]))


def _aliases(tree: ast.AST, is_count: Callable[[str], bool]) -> dict[str, str]:
    """Names that every binding in the file binds to one setting of the same name
    (`num_processes = args.num_processes`): the split of such a name is the split of that setting."""
    seen: dict[str, str | None] = {}  # name -> the setting every binding of it reads, else None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    key = _setting(node.value, is_count) if not isinstance(node, ast.AugAssign) else None
                    fits = key is not None and key.rsplit(".", 1)[-1] == t.id
                    seen[t.id] = key if fits and seen.get(t.id, key) == key else None
    return {name: key for name, key in seen.items() if key}


def _remainders(tree: ast.AST, text_of: Callable[[ast.AST], str]) -> set[str]:
    """Texts whose remainder the file tests: the left of every `%`, the first argument of divmod."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and not isinstance(node.left, ast.Constant):
            out.add(text_of(node.left))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "divmod" and node.args:
            out.add(text_of(node.args[0]))
    return out


# a sampler or shard call given the count of all ranks beside the rank within one node
SHARD_CALLEE = re.compile(r"sampler|shard", re.IGNORECASE)
SHARD_COUNT_KEYWORDS = ("num_replicas", "world_size", "num_shards", "num_partitions")
SHARD_RANK_KEYWORDS = ("rank", "index", "shard_id", "shard_index", "partition_id")
LOCAL_RANK = re.compile(r"local_rank|LOCAL_RANK|local_process_index")
MAX_LOCAL_SHARDS = 50


def local_rank_shards(tree: ast.AST, text_of: Callable[[ast.AST], str]) -> list[dict]:
    """[{line, col, callee, count, rank}] of sampler / shard calls given a global count of
    replicas and the node-local rank (`DistributedSampler(ds, num_replicas=args.world_size,
    rank=args.local_rank)`): on more than one node, the ranks of every node take the same shards
    and the others are never read."""
    out: list[dict] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.keywords:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if not SHARD_CALLEE.search(name or ""):
            continue
        given = {k.arg: k.value for k in node.keywords if k.arg}
        count = next((given[k] for k in SHARD_COUNT_KEYWORDS if k in given), None)
        rank = next((given[k] for k in SHARD_RANK_KEYWORDS if k in given), None)
        if count is None or rank is None:
            continue
        count_text, rank_text = text_of(count), text_of(rank)
        if LOCAL_RANK.search(rank_text) and "local" not in count_text.lower():
            out.append({"line": rank.lineno, "col": rank.col_offset + 1, "callee": name,  # at the rank given
                        "count": count_text[:80], "rank": rank_text[:80]})
            if len(out) >= MAX_LOCAL_SHARDS:
                break
    return out

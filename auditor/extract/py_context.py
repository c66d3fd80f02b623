"""Context around a site that the rules' precision needs, from one pass over the tree.

- ``logged(line, name)``: a warning-level log call (``logger.warning``, ``warnings.warn``,
  ``rank_zero_warn``) that announces what the block at LINE does: in the same ``if`` /
  ``else`` / ``except`` / loop body, or, in a function or module body, one that names NAME
  (also inside an ``if`` right before the statement: ``if n: log.warning(...n...)`` then ``n = 0``).
- ``asserted_one(line, name)``: ``assert name == 1`` (or ``<= 1``, ``< 2``, ``if name != 1:
  raise``) earlier in the same function.
- ``rejects(line, name, default)``: an ``assert`` right after a read that the fallback
  fails (``n = cfg.get("n_gpus", 0); assert n > 0``).
- ``dict_keys(name)``: the keys a module dict can hold, when every assignment to it is a
  dict display with constant keys.
- ``checked_after(line)``: a call reading what the running backend has
  (``ray.cluster_resources()``) within a dozen lines, in the same function.
- ``saved_before(line, target)``: the statement before keeps the old value in a local
  (``n = self.args.n; self.args.n = 0; ...; self.args.n = n``): a temporary override.
- ``reassigned(line, target)``: the same target is assigned again later in the function
  (``self.world_size = 1`` then ``self.world_size = dist.get_world_size()``).

Facts only: what they mean for a finding is decided in auditor/lint/idioms.py.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

# calls that read what a running backend really has: an init followed by one is checked
RESOURCE_CHECKS = {"cluster_resources", "available_resources"}
LOG_LEVELS = {"warning", "warn", "warning_once", "warn_once", "error", "critical", "exception", "info_once",
              "rank_zero_warn", "print_rank_0", "warning_rank0", "warn_rank0"}
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ONE = re.compile(r"^\s*(?P<name>[\w.\[\]'\"]+)\s*(==\s*1|<=\s*1|<\s*2|in\s*[(\[{]\s*0\s*,\s*1\s*[)\]}])\s*$")
_NOT_ONE = re.compile(r"^\s*(?P<name>[\w.\[\]'\"]+)\s*(!=\s*1|>\s*1|>=\s*2)\s*$")


def _log_text(stmt: ast.stmt, src) -> str | None:
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in LOG_LEVELS:
        return src(stmt.value)
    return None


class Context:
    def __init__(self, tree: ast.AST, text_of):
        self._text = text_of
        # innermost block per line: (start line of each statement span, block id)
        spans: list[tuple[int, int, int]] = []  # (first, last, block id); deeper blocks come later
        self._announced: dict[int, str] = {}  # statement line -> log call in the `if` just before it
        self.blocks: list[tuple[str, list[str]]] = []  # block id -> (kind, log texts)
        self.functions: list[tuple[int, int]] = []  # (first, last) line of each function
        self.asserts: list[tuple[int, str]] = []  # (line, name asserted to be 1)
        self.assert_tests: list[tuple[int, ast.AST]] = []  # every assert: (line, test)
        self.calls: list[tuple[int, str]] = []  # (line, called attribute or name) of resource checks
        self.assigns: list[tuple[int, ast.AST, ast.AST]] = []  # (line, target, value): texts made when asked
        for node in ast.walk(tree):
            if isinstance(node, _FUNCS):
                self.functions.append((node.lineno, node.end_lineno or node.lineno))
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in RESOURCE_CHECKS:
                    self.calls.append((node.lineno, name))
            if isinstance(node, ast.Assert):
                self.assert_tests.append((node.lineno, node.test))
                m = _ONE.match(text_of(node.test))
                if m:
                    self.asserts.append((node.lineno, m.group("name")))
            elif isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Raise):
                m = _NOT_ONE.match(text_of(node.test))
                if m:
                    self.asserts.append((node.lineno, m.group("name")))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in getattr(node, "targets", None) or [node.target]:
                    if node.value is not None:
                        self.assigns.append((node.lineno, t, node.value))
            kind = "function" if isinstance(node, _FUNCS + (ast.Module, ast.ClassDef)) else "block"
            for field in _BLOCK_FIELDS:
                stmts = getattr(node, field, None)
                if not isinstance(stmts, list) or not stmts or not isinstance(stmts[0], ast.AST):
                    continue
                if field == "handlers":  # except blocks: their bodies
                    for h in stmts:
                        self._add_block(h.body, "block", spans)
                    continue
                self._add_block(stmts, kind if field == "body" else "block", spans)
        # a line's innermost block: the last (deepest) span containing it, as ast.walk is breadth-first
        self._line_block: dict[int, int] = {}
        for first, last, bid in spans:
            for line in range(first, last + 1):
                self._line_block[line] = bid
        self.functions.sort()
        self._func_starts = [f for f, _ in self.functions]

    def _add_block(self, stmts: list[ast.stmt], kind: str, spans) -> None:
        bid = len(self.blocks)
        logs = [t for t in (_log_text(s, self._text) for s in stmts) if t]
        self.blocks.append((kind, logs))
        for prev, s in zip([None, *stmts], stmts):
            spans.append((s.lineno, s.end_lineno or s.lineno, bid))
            # `if n != 0: log.warning("overriding n ...")` then `n = 0`: announced just before
            if isinstance(prev, ast.If):
                warned = [t for t in (_log_text(b, self._text) for b in prev.body) if t]
                if warned:
                    self._announced[s.lineno] = warned[0]

    def logged(self, line: int, name: str) -> str | None:
        leaf = name.rsplit(".", 1)[-1]
        before = self._announced.get(line)
        if before and re.search(rf"\b{re.escape(leaf)}\b", before):
            return before
        bid = self._line_block.get(line)
        if bid is None:
            return None
        kind, logs = self.blocks[bid]
        leaf = name.rsplit(".", 1)[-1]
        for text in logs:
            if kind == "block" or re.search(rf"\b{re.escape(leaf)}\b", text):
                return text
        return None

    def _function(self, line: int) -> tuple[int, int]:
        i = bisect_right(self._func_starts, line) - 1
        while i >= 0:
            first, last = self.functions[i]
            if first <= line <= last:
                return first, last
            i -= 1
        return 0, 10**9

    def asserted_one(self, line: int, names: tuple[str, ...]) -> str | None:
        first, _ = self._function(line)
        leaves = {n.rsplit(".", 1)[-1] for n in names if n}
        for at, name in self.asserts:
            if first <= at < line and name.rsplit(".", 1)[-1].strip("'\"]") in leaves:
                return name
        return None

    def reassigned(self, line: int, target: str) -> int | None:
        first, last = self._function(line)
        for at, node, _ in self.assigns:
            if line < at <= last and at >= first and self._text(node) == target:
                return at
        return None

    def rejects(self, line: int, name: str, default) -> str | None:
        """`n = cfg.get("n_gpus", 0)` then `assert n > 0` within three lines: the fallback
        fails loudly. The assert's text, when it rejects DEFAULT."""
        if not isinstance(default, (int, float)) or isinstance(default, bool):
            return None
        for at, test in self.assert_tests:
            if not line < at <= line + 3 or not isinstance(test, ast.Compare) or len(test.ops) != 1:
                continue
            left, right = test.left, test.comparators[0]
            if not (isinstance(left, ast.Name) and left.id == name and isinstance(right, ast.Constant)
                    and isinstance(right.value, (int, float))):
                continue
            op, bound = type(test.ops[0]), right.value
            holds = {ast.Gt: default > bound, ast.GtE: default >= bound, ast.NotEq: default != bound,
                     ast.Lt: default < bound, ast.LtE: default <= bound, ast.Eq: default == bound}.get(op, True)
            if not holds:
                return self._text(test)
        return None

    def dict_keys(self, name: str) -> set[str] | None:
        """The keys NAME can hold when every assignment to it in the file is a dict display
        with constant keys (`_env = {}` / `_env = {"NCCL_X": "0"}`); None when unknown."""
        keys: set[str] = set()
        seen = False
        for _, node, value in self.assigns:
            if not (isinstance(node, ast.Name) and node.id == name):
                continue
            seen = True
            if not isinstance(value, ast.Dict) or any(
                    not (isinstance(k, ast.Constant) and isinstance(k.value, str)) for k in value.keys):
                return None
            keys |= {k.value for k in value.keys}
        return keys if seen else None

    def checked_after(self, line: int) -> str | None:
        """A resource check (`ray.cluster_resources()`) soon after, in the same function: a
        read 50 lines later is about something else."""
        first, last = self._function(line)
        return next((name for at, name in self.calls if line < at <= min(last, line + 12) and at >= first), None)

    def saved_before(self, line: int, target: str) -> str | None:
        """`saved = self.args.n; self.args.n = 0` (restored later): the name the value is kept in."""
        for at, node, value in self.assigns:
            if line - 2 <= at < line and isinstance(node, ast.Name) and self._text(value) == target:
                return node.id
        return None

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
  (``ray.cluster_resources()``) soon after, in the same function.
- ``saved_before(line, target)``: the statement before keeps the old value in a local
  (``n = self.args.n; self.args.n = 0; ...; self.args.n = n``): a temporary override.
- ``reassigned(line, target)``: the same target is assigned again later in the function
  (``self.world_size = 1`` then ``self.world_size = dist.get_world_size()``).
- ``settings_written(line, root)``: how many literals the function assigns to attributes of
  ROOT (``config.train.batch_size = 16``, ...): a configuration written in code.
- ``loaded_from(line, name)``: the config file NAME was loaded from (``cfg =
  yaml.safe_load(open("conf/train.yaml"))`` earlier in the function, or the first parameter
  of a ``@hydra.main(config_path=..., config_name=...)`` function).

Facts only: what they mean for a finding is decided in auditor/lint/idioms.py.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right

# calls that read what a running backend really has: an init followed by one is checked
RESOURCE_CHECKS = {"cluster_resources", "available_resources"}
LOG_LEVELS = {"warning", "warn", "warning_once", "warn_once", "error", "critical", "exception", "info_once",
              "rank_zero_warn", "print_rank_0", "warning_rank0", "warn_rank0"}
CHECK_WINDOW = 30  # lines after an init in which a resource check still checks that init
# info-level calls announce an override only when they name it ("setting num_workers to 1")
QUIET_LEVELS = {"info", "info_rank0"}
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FUNCS_T = frozenset(_FUNCS)
# statements without nested statement lists: nothing to walk into
_SIMPLE = frozenset({ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Assert, ast.Raise,
                     ast.Import, ast.ImportFrom, ast.Pass, ast.Break, ast.Continue, ast.Delete, ast.Global,
                     ast.Nonlocal})
_ONE = re.compile(r"^\s*(?P<name>[\w.\[\]'\"]+)\s*(==\s*1|<=\s*1|<\s*2|in\s*[(\[{]\s*0\s*,\s*1\s*[)\]}])\s*$")
_NOT_ONE = re.compile(r"^\s*(?P<name>[\w.\[\]'\"]+)\s*(!=\s*1|>\s*1|>=\s*2)\s*$")


def _log_text(stmt: ast.stmt, src, quiet: bool = False) -> str | None:
    """The text of a warning-level log call; with QUIET, of an info-level one too."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in LOG_LEVELS or quiet and name in QUIET_LEVELS:
        return src(stmt.value)
    return None


_LOADERS = {"load", "safe_load", "full_load", "load_config", "from_file", "fromfile", "load_yaml", "read_config"}
_CONFIG_PATH = re.compile(r"\.(ya?ml|json|toml)$")


def _hydra_config(fn) -> tuple[str, str] | None:
    """(first parameter, "config_path/config_name.yaml") of a `@hydra.main(...)` function."""
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call) or getattr(dec.func, "attr", getattr(dec.func, "id", "")) != "main":
            continue
        kw = {k.arg: k.value.value for k in dec.keywords
              if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}
        if "config_name" in kw and fn.args.args:
            name = kw["config_name"] if _CONFIG_PATH.search(kw["config_name"]) else kw["config_name"] + ".yaml"
            path = f"{kw['config_path'].rstrip('/')}/{name}" if kw.get("config_path") else name
            return fn.args.args[0].arg, path
    return None


def _loaded_path(value: ast.AST) -> str | None:
    """`yaml.safe_load(open("conf/train.yaml"))` / `OmegaConf.load("c.yaml")` -> the path."""
    if not isinstance(value, ast.Call) or getattr(value.func, "attr", getattr(value.func, "id", "")) not in _LOADERS:
        return None
    for node in ast.walk(value):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CONFIG_PATH.search(node.value):
            return node.value
    return None


def _setting_root(target: ast.AST, value: ast.AST) -> str | None:
    """`config.train.num_data_workers = 2` -> "config": a literal written into a nested attribute."""
    if not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Attribute):
        return None
    if not isinstance(value, ast.Constant) and not (isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) for e in value.elts)):
        return None
    node = target.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class Context:
    """Built from the statements only (expressions are not walked): cheap next to the visit."""

    def __init__(self, tree: ast.Module, text_of, lines: list[str]):
        self._text = text_of
        self._announced: dict[int, str] = {}  # statement line -> log call in the `if` just before it
        self.blocks: list[tuple[str, list[tuple[str, bool]]]] = []  # block id -> (kind, logs)
        self._line_block: dict[int, int] = {}  # statement's first line -> innermost block id
        self.functions: list[tuple[int, int]] = []  # (first, last) line of each function
        self.asserts: list[tuple[int, str]] = []  # (line, name asserted to be 1)
        self.assert_tests: list[tuple[int, ast.AST]] = []  # every assert: (line, test)
        self.assigns: list[tuple[int, ast.AST, ast.AST]] = []  # (line, target, value): texts made when asked
        self.settings: list[tuple[int, str]] = []  # (line, root name) of `root.a.b = <literal>`
        self.hydra: list[tuple[int, int, str, str]] = []  # (first, last, first parameter, config file)
        self._lines = lines
        self._assign_lines: list[int] | None = None
        # resource checks are rare: found in the text, not by walking every expression
        whole = "\n".join(lines)
        names = [name for name in RESOURCE_CHECKS if f"{name}(" in whole]  # in the set's order, as before
        self.calls = [(i, name) for i, text in enumerate(lines, 1) for name in names
                      if name in text and f"{name}(" in text] if names else []
        self._walk(tree.body, "function")
        self._starts = sorted(self._line_block)
        self.functions.sort()
        self._func_starts = [f for f, _ in self.functions]

    def _walk(self, stmts: list[ast.stmt], kind: str) -> None:
        bid = len(self.blocks)
        logs: list[tuple[str, bool]] = []  # (text, warning-level)
        self.blocks.append((kind, logs))
        line_block, prev = self._line_block, None
        for node in stmts:
            t = type(node)
            line_block[node.lineno] = bid  # children are walked after: the innermost wins
            if t is ast.Expr:
                text = _log_text(node, self._text, quiet=True)
                if text:
                    logs.append((text, _log_text(node, self._text) is not None))
            elif t is ast.Assign or t is ast.AnnAssign:
                if node.value is not None:
                    for target in getattr(node, "targets", None) or [node.target]:
                        self.assigns.append((node.lineno, target, node.value))
                        root = _setting_root(target, node.value)
                        if root:
                            self.settings.append((node.lineno, root))
            elif t is ast.Assert:
                self.assert_tests.append((node.lineno, node.test))
                m = _ONE.match(self._text(node.test))
                if m:
                    self.asserts.append((node.lineno, m.group("name")))
            elif t is ast.If and len(node.body) == 1 and type(node.body[0]) is ast.Raise:
                m = _NOT_ONE.match(self._text(node.test))
                if m:
                    self.asserts.append((node.lineno, m.group("name")))
            if prev is not None:  # `if n != 0: log.warning("overriding n ...")` then `n = 0`
                warned = next((x for x in (_log_text(b, self._text) for b in prev.body) if x), None)
                if warned:
                    self._announced[node.lineno] = warned
            prev = node if t is ast.If else None
            if t in _SIMPLE:
                continue
            if t in _FUNCS_T:
                self.functions.append((node.lineno, node.end_lineno or node.lineno))
                main = _hydra_config(node)
                if main:
                    self.hydra.append((node.lineno, node.end_lineno or node.lineno, *main))
            inner = "function" if t in _FUNCS_T or t is ast.ClassDef else "block"
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(node, field, None)
                if sub and isinstance(sub[0], ast.stmt):
                    self._walk(sub, inner if field == "body" else "block")
            for h in getattr(node, "handlers", None) or ():
                self._walk(h.body, "block")
            for case in getattr(node, "cases", None) or ():
                self._walk(case.body, "block")

    def _block_at(self, line: int) -> int | None:
        bid = self._line_block.get(line)
        if bid is None:  # a line inside a statement: the statement that starts last before it
            i = bisect_right(self._starts, line) - 1
            bid = self._line_block[self._starts[i]] if i >= 0 else None
        return bid

    def logged(self, line: int, name: str) -> str | None:
        leaf = name.rsplit(".", 1)[-1]
        before = self._announced.get(line)
        if before and re.search(rf"\b{re.escape(leaf)}\b", before):
            return before
        bid = self._block_at(line)
        if bid is None:
            return None
        kind, logs = self.blocks[bid]
        leaf = name.rsplit(".", 1)[-1]
        for text, loud in logs:
            if kind == "block" and loud or re.search(rf"\b{re.escape(leaf)}\b", text):
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
        for at, node, _ in self._assigns_in(max(line + 1, first), last):
            if self._text(node) == target:
                return at
        return None

    def _assigns_in(self, lo: int, hi: int) -> list[tuple[int, ast.AST, ast.AST]]:
        """Assignments on lines LO..HI (the walk records them in line order)."""
        if self._assign_lines is None:
            self._assign_lines = [a[0] for a in self.assigns]
        return self.assigns[bisect_left(self._assign_lines, lo):bisect_right(self._assign_lines, hi)]

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
        """A resource check (`ray.cluster_resources()`) within CHECK_WINDOW lines after the
        init, in the same function: whoever started the backend, the code then reads what it
        really has. A read 50 lines further down is about something else (GPUs for learners)."""
        first, last = self._function(line)
        return next((name for at, name in self.calls if line < at <= min(last, line + CHECK_WINDOW) and at >= first),
                    None)

    def settings_written(self, line: int, root: str) -> int:
        first, last = self._function(line)
        return sum(1 for at, r in self.settings if r == root and first <= at <= last)

    def loaded_from(self, line: int, name: str) -> str | None:
        first, _ = self._function(line)
        for at, node, value in reversed(self._assigns_in(first, line - 1)):
            if isinstance(node, ast.Name) and node.id == name:
                return _loaded_path(value)
        for lo, hi, param, path in self.hydra:
            if lo <= line <= hi and param == name:
                return path
        return None

    def saved_before(self, line: int, target: str) -> str | None:
        """`saved = self.args.n; self.args.n = 0` (restored later): the name the value is kept in."""
        for _, node, value in self._assigns_in(line - 2, line - 1):
            if isinstance(node, ast.Name) and self._text(value) == target:
                return node.id
        return None

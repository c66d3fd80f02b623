"""Parallel code commented out beside the serial or literal code that replaced it (facts for
QG105, QG106 and QG101).

Someone wrote the parallel version, then disabled it and left a literal or a serial call in
its place: the count the comment computed (the machine's, or the user's setting) never reaches
the running code, and nothing says so. Each fact in ``meta["commented_parallel"]`` is
``{"kind", "line", "column", "comment_line", "commented", "live"}`` plus, by kind:

- ``count``: the live statement gives a literal count where the commented one computed it.
  ``tensor_parallel_size=1)  # torch.cuda.device_count())`` (a trailing comment), or
  ``# with ProcessPool(max_workers=min(len(x), os.cpu_count())) as pool:`` right above
  ``with ProcessPool(max_workers=min(len(x), 1)) as pool:``. ``param``, ``value`` (the live
  expression), ``was`` (the commented one), ``callee`` (the live call, or None for a name).
- ``serial``: the commented code hands ``function`` to a pool (``# with Pool() as pool:``
  ``#     pool.starmap(annotate, task_args)``) and the next live statement calls it itself
  (``annotate(*task_args[0])``). ``backend`` (the pool's name).
- ``consumer``: the commented code passes ``self.<name>`` to a count parameter (``# ds.map(fn,
  num_proc=self.dataset_num_proc)``) and the file loads that attribute nowhere else. ``line``
  is where the class ``cls`` stores it; ``name``, ``param`` (the consumer's parameter).

Only comments that parse as Python count, and only beside a live statement of the same shape:
prose, a commented-out debug line or an alternative that is not parallel gives no fact.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from auditor.extract.py_facts import POOL_METHODS, called_name
from auditor.extract.py_refs import CPU_COUNT

MAX_FACTS = 10  # per file
NEAR = 3  # lines between a commented statement and the live one it stood for


def commented_parallel(tree: ast.Module, text: str, cat, vocab) -> list[dict]:
    """CAT: the consumer catalogue (auditor.extract.py_catalogue); VOCAB: the knob vocabulary."""
    if not _worth_reading(text, cat, vocab):
        return []
    said = _Said(cat, vocab)
    trailing: list[tuple[int, ast.expr]] = []
    blocks: list[list[tuple[int, ast.stmt]]] = []  # runs of full-line commented statements
    last = None
    for line, code, alone in _comments(text, cat, vocab):
        if not alone:
            expr = _expression(code)
            if expr is not None and said.computed(expr):
                trailing.append((line, expr))
            continue
        parsed = _statement(code)
        if not blocks or last is None or line != last + 1:
            blocks.append([])
        last = line
        if parsed is not None:
            blocks[-1].append((line, parsed))
    blocks = [b for b in blocks if b and said.anything(s for _, s in b)]
    if not trailing and not blocks:
        return []  # most files: nothing parallel is commented out, and the tree is not walked
    live = _Live(tree, text, said)
    out = [f for line, expr in trailing for f in [live.trailing(line, expr)] if f]
    for block in blocks:
        out.extend(live.block(block))
    seen, unique = set(), []
    for fact in out:
        key = (fact["kind"], fact["line"], fact.get("param") or fact.get("function") or fact.get("name"))
        if key not in seen:
            seen.add(key)
            unique.append(fact)
    return unique[:MAX_FACTS]


# a comment with a call or an assignment in it, and the words of one
_CODE_COMMENT = re.compile(r"#[^\n]*[(=][^\n]*")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _worth_reading(text: str, cat, vocab) -> bool:
    """A first look, from the text: does some comment that may hold code name a backend, a count
    parameter, a measurement of the machine or a knob?"""
    words = _catalogue_words(cat)[0]
    for m in _CODE_COMMENT.finditer(text):
        for w in _WORD.findall(m.group()):
            if w in words or _knob_word(vocab, w):
                return True
    return False


_KNOB_WORDS: dict[tuple[int, str], bool] = {}


def _knob_word(vocab, word: str) -> bool:
    """WORD counts a parallel unit (num_workers, tp_size), by the vocabulary."""
    key = (id(vocab), word)
    found = _KNOB_WORDS.get(key)
    if found is None:
        if len(_KNOB_WORDS) > 50_000:
            _KNOB_WORDS.clear()
        found = _KNOB_WORDS[key] = vocab.is_knob(word) and bool(vocab.units(word))
    return found


_WORDS_OF: dict[int, tuple] = {}


def _catalogue_words(cat) -> tuple[frozenset, frozenset, frozenset]:
    """(every word the first look seeks, the backends' class names, their count parameters)."""
    if id(cat) not in _WORDS_OF:
        backends = {name.rsplit(".", 1)[-1] for name in cat.by_name if name.rsplit(".", 1)[-1][:1].isupper()}
        backends |= {name.rsplit(".", 1)[-1] for name in cat.starters}
        params = {c.param for consumer in cat.by_name.values() for c in consumer.counts}
        params |= {c.param for entries in cat.by_method.values() for consumer, _ in entries for c in consumer.counts}
        words = backends | params | {name.rsplit(".", 1)[-1] for name in CPU_COUNT} | \
            {"device_count", "local_device_count"}
        _WORDS_OF[id(cat)] = (frozenset(words), frozenset(backends), frozenset(params))
    return _WORDS_OF[id(cat)]


def _comments(text: str, cat, vocab) -> list[tuple[int, str, bool]]:
    """(line, text after the '#', alone on its line) for each comment that may hold code (a
    call or an assignment); the others are prose. A comment beside code is found by tokenizing
    its line alone, and only on lines that name a parallel word: tokenizing whole files would
    cost more than parsing them."""
    words = _catalogue_words(cat)[0]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if "#" not in line:
            continue
        stripped = line.lstrip()
        if stripped.startswith("#"):
            code = stripped.lstrip("#").strip()
            if "(" in code or "=" in code:
                out.append((number, code, True))
            continue
        m = _CODE_COMMENT.search(line)
        if m is None or not any(w in words or _knob_word(vocab, w) for w in _WORD.findall(m.group())):
            continue
        try:
            for tok in tokenize.generate_tokens(io.StringIO(line).readline):
                if tok.type == tokenize.COMMENT:
                    out.append((number, tok.string.lstrip("#").strip(), False))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue  # an unclosed bracket ends the line: the comment, if any, was yielded before
    return out


def _statement(code: str) -> ast.stmt | None:
    """The one statement CODE is, a block header (`with Pool() as pool:`) given an empty body."""
    for attempt in (code, code + "\n    pass"):
        try:
            body = ast.parse(attempt).body
        except (SyntaxError, ValueError, RecursionError):
            continue
        if len(body) == 1 and any(isinstance(n, ast.Call) for n in ast.walk(body[0])):
            return body[0]
    return None


def _expression(code: str) -> ast.expr | None:
    """A trailing comment as an expression, with the closing brackets of the line it ends
    dropped (`# torch.cuda.device_count())`)."""
    for cut in range(4):
        if cut and code[len(code) - cut:].strip(")] "):
            break
        try:
            return ast.parse(code[: len(code) - cut] if cut else code, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
    return None


class _Said:
    """What commented code says, by the catalogue and the vocabulary."""

    def __init__(self, cat, vocab):
        self.vocab = vocab
        _, self.backends, self.count_params = _catalogue_words(cat)
        self.measured = vocab.structure.measured if vocab.structure is not None else frozenset()

    def computed(self, node: ast.AST) -> bool:
        """NODE computes a count: the machine's (`os.cpu_count()`, `torch.cuda.device_count()`)
        or a setting's (a knob-named name or attribute)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                name = called_name(n.func)
                if name in CPU_COUNT or name.rsplit(".", 1)[-1] in self.measured:
                    return True
            elif isinstance(n, ast.Name) and _knob_word(self.vocab, n.id) or \
                    isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store) and _knob_word(self.vocab, n.attr):
                return True
        return False

    def counts_of(self, stmt: ast.AST) -> list[tuple[str, str, ast.expr]]:
        """(callee, parameter, value) for each count argument of a call in STMT."""
        out = []
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            callee = called_name(n.func)
            for k in n.keywords:
                if k.arg and (k.arg in self.count_params or _knob_word(self.vocab, k.arg)):
                    out.append((callee, k.arg, k.value))
            if n.args and callee.rsplit(".", 1)[-1] in self.backends and not isinstance(n.args[0], ast.Starred):
                out.append((callee, "#0", n.args[0]))
        return out

    def pool_of(self, stmts) -> tuple[str, str] | None:
        """(the pool, the function handed to it) when STMTS build a pool and map a function on
        it (`with Pool() as pool:` `pool.starmap(annotate, args)`), or start one per item
        (`Process(target=work)`)."""
        pool = None
        for stmt in stmts:
            for n in ast.walk(stmt):
                if not isinstance(n, ast.Call):
                    continue
                name = called_name(n.func)
                leaf = name.rsplit(".", 1)[-1]
                if leaf in self.backends:
                    pool = pool or leaf
                    target = next((k.value for k in n.keywords if k.arg == "target"), None)
                    if isinstance(target, (ast.Name, ast.Attribute)):
                        return leaf, called_name(target)
                if leaf in POOL_METHODS and n.args and isinstance(n.args[0], (ast.Name, ast.Attribute)) \
                        and (pool or "pool" in name.lower() or "executor" in name.lower()):
                    return pool or name.rsplit(".", 1)[0], called_name(n.args[0])
        return None

    def anything(self, stmts) -> bool:
        """Do STMTS compute a count, pass a stored attribute as one, or map work on a pool?"""
        stmts = list(stmts)
        return self.pool_of(stmts) is not None or any(
            self.computed(v) or _self_attr(v) for s in stmts for _, _, v in self.counts_of(s))


class _Live:
    """The file's live code, for the statements a comment stood beside."""

    def __init__(self, tree: ast.Module, text: str, said: _Said):
        self.said = said
        self.lines = text.splitlines()
        self.statements: dict[int, ast.stmt] = {}  # first line -> the innermost statement starting there
        self.spans: list[ast.stmt] = []  # simple statements, for the one a trailing comment ends
        self.stored: dict[str, tuple[int, str]] = {}  # self.<attr> -> (the line it is assigned, its class)
        # attributes loaded, `self.x` or any other ("*": any at all). Not py_dead.loads(): that one
        # gives up on a file calling `model.eval()`, as trainers do, and would hide their stores
        self.loaded: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                first = self.statements.get(node.lineno)
                if first is None or _depth_key(node) < _depth_key(first):
                    self.statements[node.lineno] = node
                if not hasattr(node, "body"):
                    self.spans.append(node)
            if isinstance(node, ast.ClassDef):
                for n in ast.walk(node):
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) \
                            and isinstance(n.value, ast.Name) and n.value.id == "self":
                        self.stored.setdefault(n.attr, (n.lineno, node.name))
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
                self.loaded.add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
                name = node.args[1]
                self.loaded.add(name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*")
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
                self.loaded.add(node.target.attr)
            elif isinstance(node, ast.Name) and node.id in ("vars", "asdict", "__dict__"):
                self.loaded.add("*")

    def after(self, line: int) -> list[ast.stmt]:
        """The first live statement within NEAR lines after LINE (none or one)."""
        return next(([self.statements[n]] for n in range(line + 1, line + NEAR + 1) if n in self.statements), [])

    def near(self, line: int) -> list[ast.stmt]:
        """The first live statement within NEAR lines after LINE, and the first before it."""
        # (not a block the comment sits in: `def run():` above its own commented first line)
        before = [self.statements[n] for n in range(line - 1, max(line - NEAR, 0) - 1, -1)
                  if n in self.statements and (self.statements[n].end_lineno or n) < line]
        return self.after(line) + before[:1]

    def block(self, block: list[tuple[int, ast.stmt]]) -> list[dict]:
        said, out = self.said, []
        first, last = block[0][0], block[-1][0]
        stmts = [s for _, s in block]
        for line, stmt in block:
            counts = said.counts_of(stmt)
            computed = [(c, p, v) for c, p, v in counts if said.computed(v)]
            for live in self.near(line) if computed else ():
                for callee, param, value in computed:
                    match = next(((c, v) for c, p, v in said.counts_of(live) if p == param and
                                  c.rsplit(".", 1)[-1] == callee.rsplit(".", 1)[-1]), None)
                    if match and not said.computed(match[1]) and _text(match[1]) != _text(value):
                        out.append(self._fact("count", live, line, stmt, param=param.lstrip("#") or "count",
                                              value=_text(match[1]), was=_text(value), callee=match[0]))
            for callee, param, value in counts:
                attr = _self_attr(value)
                if attr and attr in self.stored and attr not in self.loaded and "*" not in self.loaded:
                    stored, cls = self.stored[attr]
                    out.append({"kind": "consumer", "line": stored, "column": 1, "comment_line": line,
                                "commented": _text(stmt), "live": "", "name": attr, "param": param.lstrip("#"),
                                "callee": callee, "cls": cls})
        pool = said.pool_of(stmts)
        if pool is not None:
            backend, function = pool
            leaf = function.rsplit(".", 1)[-1]
            for live in self.after(last):
                call = live.value if isinstance(live, (ast.Expr, ast.Assign)) else None
                if isinstance(call, ast.Call) and called_name(call.func).rsplit(".", 1)[-1] == leaf:
                    out.append(self._fact("serial", live, first, stmts[0], function=function, backend=backend,
                                          last_line=last))
        return out

    def trailing(self, line: int, expr: ast.expr) -> dict | None:
        """`tensor_parallel_size=1)  # torch.cuda.device_count())` or `n_gpus = 1  # device_count()`."""
        live = min((s for s in self.spans if s.lineno <= line <= (s.end_lineno or s.lineno)),
                   key=_depth_key, default=None)
        if live is None:
            return None
        literal = [(c, p, v) for c, p, v in self.said.counts_of(live) if _int(v) is not None and v.lineno <= line]
        if isinstance(live, ast.Assign) and len(live.targets) == 1 and isinstance(live.targets[0], ast.Name) \
                and _int(live.value) is not None and _knob_word(self.said.vocab, live.targets[0].id):
            literal.append((None, live.targets[0].id, live.value))
        if not literal:
            return None
        callee, param, value = max(literal, key=lambda t: t[2].lineno)
        return self._fact("count", live, line, expr, param=param.lstrip("#") or "count", value=_text(value),
                          was=_text(expr), callee=callee)

    def _fact(self, kind, live, comment_line, commented, **more) -> dict:
        return {"kind": kind, "line": live.lineno, "column": live.col_offset + 1, "comment_line": comment_line,
                "commented": _text(commented),
                "live": self.lines[live.lineno - 1].strip()[:160] if live.lineno <= len(self.lines) else "", **more}


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _depth_key(node: ast.stmt) -> int:
    # of two statements starting on one line (`if x: y = 1`), the inner one is what a comment
    # beside it stands for: it spans fewer lines
    return (node.end_lineno or node.lineno) - node.lineno


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _text(node: ast.AST) -> str:
    try:
        return re.sub(r"\s+", " ", ast.unparse(node))[:160]
    except (ValueError, RecursionError):
        return ""

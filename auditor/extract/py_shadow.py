"""Explicit parallelism values that a mapping can silently replace (facts for QG110).

A mixin of the one visitor in python_code.py. Each fact is a dict in ``meta["shadowed"]``:
``{"line", "col", "key", "expr", "mapping", "how"}`` where HOW says which mapping decides:

- ``splat``: ``{"tensor_parallel_size": cfg.tp, **engine_kwargs}`` (a later ``**`` in the display);
- ``update``: ``opts = {"num_cpus": self.cpus}`` then ``opts.update(user_opts)`` in the function;
- ``fill``: ``if "tp-size" not in kwargs: kwargs["tp-size"] = cfg.tp``, or
  ``kwargs.setdefault("tp-size", cfg.tp)``: the explicit value only fills a gap the mapping
  leaves, so the mapping's value wins. A literal filled in (``setdefault("num_workers", 4)``)
  is a default, not a second setting, and is not recorded.

Literal values in a display followed by ``**`` are define sites already (``kwargs_after``).
"""

from __future__ import annotations

import ast
import re

from auditor.extract import py_dead
from auditor.extract.py_refs import HELP_COUNTS, NOT_LITERAL, const_str, documented_params, literal

MAX_FACTS = 200  # per file
# a dict that holds a call's arguments (`remote_options`, `engine_kwargs`, `args`), not one of
# metric labels or results that merely shares a key name
KWARGS_NAME = re.compile(r"(^|_)(kwargs|args|options|opts|config|cfg|params|settings|spec)$", re.IGNORECASE)


def unused_params(fn: ast.AST, knob_params: list[ast.arg]) -> list[ast.arg]:
    """Knob parameters FN's body never reads (nested functions and lambdas count as reads;
    `locals()` / `vars()` read everything)."""
    wanted = {p.arg for p in knob_params}
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id in wanted and not isinstance(node.ctx, ast.Store):
            wanted.discard(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars"):
            return []
        if not wanted:
            return []
    return [p for p in knob_params if p.arg in wanted]


def stored_only(fn: ast.AST, knob_params: list[ast.arg]) -> list[tuple[ast.arg, str]]:
    """Knob parameters whose every read in FN's body is `self.<attr> = param` (a statement of
    FN itself): (the parameter, the attribute) - kept for later, to be judged by whether anything
    loads the attribute."""
    wanted = {p.arg: p for p in knob_params}
    stored: dict[str, str] = {}
    plain: set[int] = set()
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name) \
                and stmt.value.id in wanted and isinstance(t := stmt.targets[0], ast.Attribute) \
                and isinstance(t.value, ast.Name) and t.value.id == "self":
            stored.setdefault(stmt.value.id, t.attr)
            plain.add(id(stmt.value))
    if not stored:
        return []
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id in stored and id(node) not in plain \
                and not isinstance(node.ctx, ast.Store):
            del stored[node.id]  # read another way too
            if not stored:
                return []
    return [(wanted[name], attr) for name, attr in stored.items()]


def _is_stub(fn: ast.AST) -> bool:
    """A body that does nothing of its own: a docstring, `pass`, `...`, `raise NotImplementedError`,
    or an abstract / overload / property signature."""
    for dec in fn.decorator_list:
        name = dec.attr if isinstance(dec, ast.Attribute) else getattr(dec, "id", "")
        if name in ("abstractmethod", "overload", "property", "setter", "abstractproperty"):
            return True
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body:
        return True
    if len(body) == 1:
        s = body[0]
        if isinstance(s, ast.Pass) or (isinstance(s, ast.Raise) and "NotImplementedError" in ast.dump(s)):
            return True
        if isinstance(s, ast.Return) and (s.value is None or isinstance(s.value, ast.Constant)):
            return True
    return False


def ignored_unless_none(fn: ast.AST, knob_params: list[ast.arg]) -> list[tuple[ast.arg, str]]:
    """Parameters used only in the branch where another parameter is None: `def make(num_envs,
    cfg=None): if cfg is None: ...num_envs...`: a caller passing cfg gets num_envs ignored.
    [(param, the other parameter's name)]."""
    names = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    uses: dict[str, list[tuple]] = {p.arg: [] for p in knob_params}

    def walk(nodes, conds: tuple) -> None:
        for node in nodes:
            if isinstance(node, ast.If):
                walk([node.test], conds)
                walk(node.body, conds + (("if", node.test),))
                walk(node.orelse, conds + (("else", node.test),))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            else:
                if isinstance(node, ast.Name) and node.id in uses and isinstance(node.ctx, ast.Load):
                    uses[node.id].append(conds)
                walk(list(ast.iter_child_nodes(node)), conds)

    walk(fn.body, ())
    out = []
    for p in knob_params:
        found = uses[p.arg]
        if not found:
            continue
        others = None
        for conds in found:
            here = {_none_test(t) for kind, t in conds if kind == "if"} - {None}
            others = here if others is None else others & here
        others = {o for o in others or () if o in names and o != p.arg}
        if others:
            out.append((p, sorted(others)[0]))
    return out


def _none_test(test: ast.AST) -> str | None:
    """`cfg is None` -> "cfg"."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id
    return None


class ShadowMixin:
    def _stored_unread(self, fn: ast.AST, knob: list[ast.arg]) -> dict[str, tuple[ast.arg, str]]:
        """Knob parameters of a method that it only stores on `self` under a knob-named attribute
        the file never loads: `self.n_jobs = n_jobs` in a model whose fit() never uses it, as
        {name: (the parameter, the attribute)}. Whether another file loads it (a subclass,
        `model.n_jobs`) is QG101's to see (`attr_loads`)."""
        pairs = [(p, attr) for p, attr in stored_only(fn, knob) if self.match_vocabulary(attr) == "exact"]
        if not pairs:
            return {}
        if self._attribute_loads is None:
            self._attribute_loads = py_dead.loads(self.tree) or (set(), None)
        loaded = self._attribute_loads[1]
        if loaded is None:
            return {}  # the file reads attributes by computed names
        return {p.arg: (p, attr) for p, attr in pairs if attr not in loaded}

    def shadow(self, at: ast.AST, key: str, value: ast.AST, mapping: str, how: str, opaque: bool = False) -> None:
        facts = self.meta.setdefault("shadowed", [])
        if len(facts) >= MAX_FACTS:
            return
        fact = {"line": at.lineno, "col": self.src.column(at), "key": key, "expr": self.text(value),
                "mapping": mapping, "how": how, "function": self.function().qualname,
                "source": self.src.line(at.lineno)}
        if opaque:
            fact["opaque"] = True  # the mapping is a call's result: whether it carries KEY is not visible
        facts.append(fact)

    def built_by_call(self, node: ast.AST) -> bool:
        """NAME whose every assignment in the file is a call's result (`profiler_args =
        build_profiler_args(...)`): its keys are the callee's, not visible here."""
        if not isinstance(node, ast.Name) or self.ctx is None:
            return isinstance(node, ast.Call)
        values = [value for _, target, value in self.ctx.assigns if isinstance(target, ast.Name)
                  and target.id == node.id]
        return bool(values) and all(isinstance(v, ast.Call) and not _is_copy(v) for v in values)

    def _knob_value(self, key: str | None, value: ast.AST) -> bool:
        """A knob-named key given a setting read from somewhere (cfg.tp, self.cpus_per_task), not
        a literal, not a value computed here (`get_device_count() or 1`) and not a named default
        (`self._DEFAULT_NUM_CPUS`): a default set before a user mapping is the mapping's to replace."""
        if not key or not self.match(key) or literal(value) is not NOT_LITERAL or not self._reads_setting(value):
            return False
        last = value.attr if isinstance(value, ast.Attribute) else ""
        return not (last.isupper() or "default" in last.lower())

    def shadow_parameters(self, node: ast.AST) -> None:
        """Facts for QG104: knob parameters a function ignores whenever another argument is given;
        for QG101: knob parameters it never reads at all."""
        knob = [a for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs if self.match(a.arg)]
        if not knob or node.name.startswith("_") and node.name != "__init__":
            return  # a private helper: its callers are the module's own, who know what it uses
        overrides = bool(self.frame.cls and self.class_bases)  # a signature kept for its base class
        if not overrides and not _is_stub(node):
            ordered = node.args.posonlyargs + node.args.args
            unused = unused_params(node, knob)
            documented = documented_params(node) if unused else {}
            signature = ",".join(a.arg for a in ordered + node.args.kwonlyargs)
            signatures = self.meta.setdefault("knob_signatures", {})  # how many functions share one
            if len(signatures) < MAX_FACTS or signature in signatures:
                signatures[signature] = signatures.get(signature, 0) + 1
            stored = self._stored_unread(node, [a for a in knob if a not in unused]) \
                if self.frame.cls and ordered and ordered[0].arg == "self" else {}
            unused = [*unused, *(p for p, _attr in stored.values())]
            for param in unused:
                facts = self.meta.setdefault("unused_params", [])
                if len(facts) < MAX_FACTS:
                    index = ordered.index(param) if param in ordered else None
                    if index is not None and self.frame.cls and ordered and ordered[0].arg in ("self", "cls"):
                        index -= 1
                    facts.append({"line": param.lineno, "col": self.src.column(param), "param": param.arg,
                                  "function": node.name, "cls": self.frame.cls.rsplit(".", 1)[-1] or None,
                                  "index": index, "source": self.src.line(param.lineno), "signature": signature,
                                  "documented": HELP_COUNTS.search(documented.get(param.arg, "")) is not None,
                                  **({"stored": stored[param.arg][1]} if param.arg in stored else {})})
                    self.flow_unused.add(self.frame.qualname)  # its callers' edges are kept (auditor.flow.local)
        args = node.args
        positional = args.posonlyargs + args.args
        with_default = {a.arg for a in positional[len(positional) - len(args.defaults):]}
        with_default |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
        for param, other in ignored_unless_none(node, knob):
            facts = self.meta.setdefault("ignored_unless", [])
            if len(facts) < MAX_FACTS:
                facts.append({"line": param.lineno, "col": self.src.column(param), "param": param.arg,
                              "other": other, "function": node.name, "source": self.src.line(param.lineno),
                              "required": param.arg not in with_default})

    def shadow_display(self, node: ast.Dict) -> None:
        """{"k": cfg.x, **m}: a non-literal knob value followed by a splat."""
        for i, (k, v) in enumerate(zip(node.keys, node.values)):
            key = const_str(k) if k is not None else None
            if not self._knob_value(key, v):
                continue
            later = [node.values[j] for j in range(i + 1, len(node.keys)) if node.keys[j] is None]
            later = [m for m in later if not self.lacks_key(m, key)]
            if later:
                self.shadow(k, key, v, self.text(later[0]), "splat")

    def remember_display(self, name: str, value: ast.AST) -> None:
        """NAME = {...}: its knob entries, in case NAME.update(mapping) follows."""
        held = self.function().displays
        if isinstance(value, ast.Dict):
            entries = [(k, const_str(k), v) for k, v in zip(value.keys, value.values) if k is not None]
            entries = [(k, key, v) for k, key, v in entries if self._knob_value(key, v)]
            if entries:
                held[name] = entries
                return
        held.pop(name, None)

    def shadow_call(self, node: ast.Call) -> None:
        """NAME.update(mapping) after NAME = {...}; mapping.setdefault("k", cfg.x)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return
        name = func.value.id
        if func.attr == "update" and len(node.args) == 1 and not node.keywords and KWARGS_NAME.search(name):
            entries = self.function().displays.get(name)
            arg = node.args[0]
            if entries and not isinstance(arg, ast.Dict):
                opaque = self.built_by_call(arg)
                for k, key, v in entries:
                    if not self.lacks_key(arg, key):
                        self.shadow(k, key, v, self.text(arg), "update", opaque=opaque)
        elif func.attr == "setdefault" and len(node.args) == 2:
            key = const_str(node.args[0])
            if self._knob_value(key, node.args[1]):
                self.shadow(node.args[0], key, node.args[1], name, "fill")

    def shadow_fill(self, node: ast.If) -> None:
        """if "k" not in m: m["k"] = cfg.x (also `and`-ed with other tests)."""
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
            else [node.test]
        absent = {}
        for t in tests:
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.NotIn) \
                    and isinstance(t.comparators[0], ast.Name):
                key = const_str(t.left)
                if key:
                    absent[(t.comparators[0].id, key)] = True
        if not absent:
            return
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                key = const_str(target.slice)
                if (target.value.id, key) in absent and self._knob_value(key, stmt.value):
                    self.shadow(target, key, stmt.value, target.value.id, "fill")

    def _reads_setting(self, value: ast.AST) -> bool:
        """cfg.tp, self.config.dp, args.num_workers: a value some configuration sets."""
        node = value
        while isinstance(node, ast.Call) and len(node.args) == 1 and getattr(node.func, "id", "") in ("int", "str"):
            node = node.args[0]
        return isinstance(node, (ast.Attribute, ast.Subscript)) and self.ref_key(node) is not None


def _is_copy(call: ast.Call) -> bool:
    """`cfg.engine_kwargs.copy()`, `dict(user_kwargs)`, `deepcopy(x)`: the user's mapping itself."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("copy", "deepcopy", "dict", "get") or name.endswith("to_container")

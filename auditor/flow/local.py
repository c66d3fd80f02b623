"""Per-file flow facts, built from one file's AST inside the Python extractor.

    facts = build(tree, path, src, sinks, calls)    # plain data: dicts, lists, str, numbers

``sinks`` are ``(site_index, count_argument_node, function_qualname)`` for the consume
sites the extractor emitted; ``calls`` are ``(function_qualname, class_qualname, call_node)``
for calls that are no catalogued backend. The result (``FileResult.flow``) holds:

- ``sinks``: ``[{"site": i, "fn": qualname, "tree": value tree of the count}]``
- ``calls``: call edges to functions that may be the project's own, with a value tree per
  argument (``[{"fn", "callee": [dotted candidates], "line", "col", "text", "args": [...],
  "kwargs": {...}, "star": bool}]``); a ``**name`` of a local mapping that is only ever a dict
  display with literal keys adds those keys and leaves ``star`` false, so what it omits is
  known to be omitted; ``bare``: the names passed as they are (``setup(config, tok)``);
  ``mro``: for ``super().m(...)`` in a class of several bases, the same method of the bases
  after the first (a cooperative chain may reach them)
- ``functions``: ``{qualname: {"params": [...], "defaults": {name: tree}, "line": n}}``
  (``self``/``cls`` left out of methods' params) and ``classes``: ``{qualname: line}``
- ``config``: scalar literals of module-level config dicts (``dict(...)``, ``{...}``,
  ``EasyDict``/``ConfigDict``, config-class calls) as ``[{"key", "line", "col", "value"}]``,
  and ``base``: an mmengine-style ``_base_`` list.
- ``returns``: ``{qualname: {"params": [...], "tree": value tree}}`` of functions that return a
  capped count (``return max(min(cpus // 2, 4), 1)``); a ``call`` node keeps its few positional
  arguments' trees in ``argv`` so the flow layer can put them in for the parameters.
- ``bases``: ``{class: [base candidates]}``, ``inherits_init``: the classes among them with no
  ``__init__`` of their own and no decorator (a call runs the base's), and ``registry``: the
  string names classes are registered under.
- ``fields``: ``{class: {field: its type's dotted name or ""}}`` of classes without an
  ``__init__`` of their own that annotate their attributes (dataclasses, pydantic models): what
  a splatted section fills.
- ``imports``: the modules the file's import statements name, anywhere in it (well-known
  libraries left out): which config modules a script loads (QG106, through
  ``auditor.flow.imports.modules_to_files``).

Def-use is pyflakes-shaped but lazy: a function's bindings are indexed only when a trace
enters it, and a name's reaching definition is the last binding that ends before the use
(with the one before it too when the last one sits in a branch).
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from auditor.extract.py_refs import (
    HANDLE, NOT_LITERAL, click_name, const_str, getter_default, getter_key, literal, strip_handles, chain,
)

MAX_DEPTH = 10  # steps followed back from one sink within a file
EDGE_DEPTH = MAX_DEPTH - 5  # a call argument is followed 5 steps: most are never a helper's
MAX_CONFIG_VALUES = 400  # config literals kept per file
TEXT_LIMIT = 90
MAX_FIELDS = 200  # annotated attributes kept per class
MAX_ITEMS = 16  # a literal list of counts longer than this is data, not settings
CONFIG_ROOT = re.compile(r"cfg|conf|config|args|opt|param|setting|hparam|flags|kwargs|spec", re.IGNORECASE)
CONFIG_LOADERS = {"load", "safe_load", "full_load", "load_config", "from_file", "fromfile", "create", "merge",
                  "EasyDict", "edict", "ConfigDict", "FrozenConfigDict", "Config", "DictConfig", "parse_args",
                  "to_container", "deepcopy", "get_config", "compose", "AttrDict", "Munch", "SimpleNamespace"}
DICT_CALLS = {"dict", "EasyDict", "edict", "ConfigDict", "FrozenConfigDict", "AttrDict", "Munch", "OrderedDict"}
CASTS = {"int", "float", "str", "bool", "round", "abs"}
COPIES = {"to_container", "to_object", "deepcopy"}  # calls that return their first argument's settings copied
CPU_COUNT = {"cpu_count", "sched_getaffinity", "process_cpu_count", "device_count"}
# Callees that are never the project's own helpers: a call edge to them is not recorded.
# (RL and training frameworks that start workers of their own are not here: auditor.libraries
# reads the modules of theirs that the project calls)
EXTERNAL = frozenset(sys.stdlib_module_names) | {
    "torch", "numpy", "np", "jax", "jnp", "tensorflow", "tf", "ray", "gym", "gymnasium", "transformers",
    "datasets", "accelerate", "deepspeed", "vllm", "omegaconf", "hydra", "yaml", "tqdm", "wandb", "pandas",
    "scipy", "sklearn", "tensordict", "psutil", "pytest", "six",
    "absl", "ml_collections", "easydict", "mmengine", "mmcv", "lightning", "pytorch_lightning", "einops",
    "pydantic", "click", "packaging", "triton", "pyarrow", "google", "megatron", "tree", "aiohttp", "matplotlib",
    "openai", "fastapi", "requests", "huggingface_hub", "torchvision", "jinja2", "rich", "typer", "grpc",
    "boto3", "botocore", "PIL", "cv2", "sympy", "nltk", "sentencepiece", "tokenizers", "safetensors", "peft",
    "trl", "flash_attn", "apex", "xformers", "msgpack", "zmq", "uvicorn", "starlette", "httpx", "filelock",
}


def module_name(path: str) -> str:
    """'pkg/sub/mod.py' -> 'pkg.sub.mod'; 'pkg/__init__.py' -> 'pkg'."""
    mod = path[:-3] if path.endswith(".py") else path
    parts = [p for p in mod.replace("\\", "/").split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class _Scope:
    """One function (or the module): its parameters and name bindings in source order."""

    def __init__(self, node: ast.AST, qualname: str, cls: str, params: list[str]):
        self.node = node
        self.qualname = qualname
        self.cls = cls
        self.params = params
        self.options: set[str] = set()  # parameters a click command's options set
        self.defs: dict[str, list[tuple]] | None = None  # name -> [(end_pos, how, value, stmt, in_branch)]

    def bindings(self) -> dict[str, list[tuple]]:
        if self.defs is None:
            self.defs = {}
            body = self.node.body if hasattr(self.node, "body") else []
            self._index(body, False)
        return self.defs

    def _bind(self, target: ast.AST, how: str, value: ast.AST | None, stmt: ast.stmt, branch: bool) -> None:
        end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
        if how == "element":  # (a loop's names hold from its header on, in its body)
            end = (stmt.iter.end_lineno or stmt.lineno, stmt.iter.end_col_offset or 0)
        if isinstance(target, ast.Name):
            self.defs.setdefault(target.id, []).append((end, how, value, stmt, branch))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and how == "assign" and \
                len(value.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                if values is not None:
                    self._bind(elt, "assign", values[i], stmt, branch)
                else:
                    self._bind(elt, "unpack" if how == "assign" else how, value, stmt, branch)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, "unpack", value, stmt, branch)

    def _index(self, body: list[ast.stmt], branch: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    self._bind(t, "assign", stmt.value, stmt, branch)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._bind(stmt.target, "assign", stmt.value, stmt, branch)
            elif isinstance(stmt, ast.AugAssign):
                self._bind(stmt.target, "aug", stmt.value, stmt, branch)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                pairs = _zipped(stmt)
                if pairs:  # `for ds, n in zip(datasets, num_workers)`: each name an item of its list
                    for target, seq in pairs:
                        self._bind(target, "element", seq, stmt, True)
                else:
                    self._bind(stmt.target, "loop", stmt.iter, stmt, True)
                self._index(stmt.body, True)
                self._index(stmt.orelse, True)
            elif isinstance(stmt, (ast.If, ast.While)):
                self._index(stmt.body, True)
                self._index(stmt.orelse, True)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, "with", item.context_expr, stmt, branch)
                self._index(stmt.body, branch)
            elif isinstance(stmt, ast.Try) or stmt.__class__.__name__ == "TryStar":
                self._index(stmt.body, True)
                for h in stmt.handlers:
                    self._index(h.body, True)
                self._index(stmt.orelse, True)
                self._index(stmt.finalbody, branch)
            elif stmt.__class__.__name__ == "Match":
                for case in stmt.cases:
                    self._index(case.body, True)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                end = (stmt.lineno, stmt.col_offset)
                self.defs.setdefault(stmt.name, []).append((end, "def", None, stmt, branch))


class Builder:
    def __init__(self, tree: ast.Module, path: str, src, defs: list[tuple] | None = None):
        self.path = path
        self.src = src
        self.module = module_name(path)
        self.package = self.module if path.endswith("__init__.py") else self.module.rpartition(".")[0]
        self.imports: dict[str, str] = {}
        self.imported: set[str] = set()  # every module an import statement names, for the import graph
        self.scopes: dict[str, _Scope] = {"<module>": _Scope(tree, "<module>", "", [])}
        self.functions: dict[str, dict] = {}
        self.classes: dict[str, int] = {}
        self.class_nodes: dict[str, ast.ClassDef] = {}
        self.self_attrs: dict[str, dict[str, list[tuple[ast.AST, str]]]] = {}  # cls -> attr -> [(value, method)]
        self.methods: dict[str, list[tuple[ast.AST, str]]] = {}  # cls -> [(method node, qualname)]
        self.tree = tree
        if defs is None:
            self._index(tree.body, "", "", "module")
        else:
            self._load(defs)

    def _load(self, defs: list[tuple]) -> None:
        """The extractor's visit already met every def, class and import: no second walk."""
        for entry in defs:
            if entry[0] == "def":
                _kind, stmt, qual, cls, in_class = entry
                self._function(stmt, qual, cls, "class" if in_class else "function")
            elif entry[0] == "class":
                self.classes[entry[2]] = entry[1].lineno
                self.class_nodes[entry[2]] = entry[1]
            else:
                self._import(entry[1])

    # -- indexing: statements only ---------------------------------------------------------------
    def _index(self, body: list[ast.stmt], prefix: str, cls: str, kind: str) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{stmt.name}"
                self._function(stmt, qual, cls, kind)
                self._index(stmt.body, qual + ".", cls if kind == "class" else "", "function")
            elif isinstance(stmt, ast.ClassDef):
                qual = f"{prefix}{stmt.name}"
                self.classes[qual] = stmt.lineno
                self.class_nodes[qual] = stmt
                self._index(stmt.body, qual + ".", qual, "class")
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self._import(stmt)
            else:
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(stmt, field, None)
                    if isinstance(sub, list):
                        self._index(sub, prefix, cls, kind)
                for h in getattr(stmt, "handlers", ()) or ():
                    self._index(h.body, prefix, cls, kind)

    def _function(self, stmt: ast.AST, qual: str, cls: str, kind: str) -> None:
        args = stmt.args
        positional = args.posonlyargs + args.args
        names = [a.arg for a in positional + args.kwonlyargs]
        static = any(_decorator_name(d) == "staticmethod" for d in stmt.decorator_list)
        if kind == "class" and not static and positional:
            names = names[1:]  # self / cls
        defaults: dict[str, ast.AST] = {}
        for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            defaults[a.arg] = d
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            if d is not None:
                defaults[a.arg] = d
        self.scopes[qual] = _Scope(stmt, qual, cls, names + [a.arg for a in (args.vararg, args.kwarg) if a])
        options = self._click_options(stmt)
        if options:
            self.scopes[qual].options = options
        self.functions[qual] = {"params": names, "line": stmt.lineno, "_defaults": defaults,
                                "kwonly": len(args.kwonlyargs), "vararg": bool(args.vararg)}
        if any(_decorator_name(d) == "configurable" for d in stmt.decorator_list):
            # detectron2's `@configurable(from_config=...)`: called with a config first, it fills
            # the parameters the call leaves out from that config, not from their defaults
            self.functions[qual]["configurable"] = True
        if kind == "class":
            self.methods.setdefault(cls, []).append((stmt, qual))

    def _click_options(self, stmt: ast.AST) -> set[str]:
        """Parameters of a click command that its `@click.option(...)` decorators set: command
        line flags, as `args.x` is for argparse."""
        out = set()
        for dec in getattr(stmt, "decorator_list", ()):
            if not (isinstance(dec, ast.Call) and self.dotted(dec.func) == "click.option"):
                continue
            name = click_name([c for a in dec.args if (c := const_str(a)) is not None])
            if name:
                out.add(name)
        return out

    def _import(self, stmt: ast.AST) -> None:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                self.imported.add(a.name)
                self.imports[a.asname or a.name.split(".", 1)[0]] = a.name if a.asname else a.name.split(".", 1)[0]
            return
        base = stmt.module or ""
        if stmt.level:
            pkg = self.package.split(".") if self.package else []
            up = pkg[:len(pkg) - (stmt.level - 1)] if stmt.level > 1 else pkg
            base = ".".join([*up, *([stmt.module] if stmt.module else [])])
        for a in stmt.names:
            self.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            if base:  # `from pkg import mod` imports pkg.mod when it is a module, else a name of pkg
                self.imported.update((base, f"{base}.{a.name}"))
            else:
                self.imported.add(a.name)

    def attrs_of(self, cls: str) -> dict[str, list[tuple[ast.AST, str]]]:
        """self.x = ... in CLS's methods, indexed on first use (most classes are never asked)."""
        if cls not in self.self_attrs:
            self.self_attrs[cls] = {}
            for fn, qual in self.methods.get(cls, []):
                self._self_attrs(fn, cls, qual)
        return self.self_attrs[cls]

    def _self_attrs(self, fn: ast.AST, cls: str, qual: str) -> None:
        for node in statements(fn.body):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        self.self_attrs.setdefault(cls, {}).setdefault(t.attr, []).append((node, qual))

    # -- value trees ------------------------------------------------------------------------------
    def node(self, kind: str, at: ast.AST, **fields: Any) -> dict:
        text = self.src.text(at, TEXT_LIMIT)
        return {"k": kind, "file": self.path, "line": at.lineno, "col": self.src.column(at), "text": text,
                **{k: v for k, v in fields.items() if v is not None}}

    def full(self, qualname: str) -> str:
        return f"{self.module}.{qualname}" if self.module else qualname

    def trace(self, expr: ast.AST, scope: _Scope, depth: int = 0) -> dict:
        if depth > MAX_DEPTH:
            return self.node("unknown", expr, why="too many steps to follow")
        v = literal(expr)
        if v is not NOT_LITERAL and (v is None or isinstance(v, (int, float, str, bool))):
            return self.node("literal", expr, value=v)
        if isinstance(v, (list, tuple)) and 0 < len(v) <= MAX_ITEMS and all(type(x) is int for x in v):
            # `create_loader(..., num_workers=[4, 4, 4])`: one count per item of a loop (an element node)
            return self.node("literal", expr, value=list(v))
        if isinstance(expr, ast.Name):
            return self.trace_name(expr.id, expr, scope, depth)
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            return self.trace_chain(expr, scope, depth, None)
        if isinstance(expr, ast.BoolOp):
            kind = "or" if isinstance(expr.op, ast.Or) else "and"
            return self.node(kind, expr, of=[self.trace(v, scope, depth + 1) for v in expr.values[:4]])
        if isinstance(expr, ast.IfExp):
            return self.node("ifexp", expr, test=self.src.text(expr.test, 60),
                             of=[self.trace(expr.body, scope, depth + 1), self.trace(expr.orelse, scope, depth + 1)])
        if isinstance(expr, ast.BinOp):
            op = type(expr.op).__name__
            return self.node("arith", expr, op=op,
                             of=[self.trace(expr.left, scope, depth + 1), self.trace(expr.right, scope, depth + 1)])
        if isinstance(expr, ast.Call):
            return self.trace_call(expr, scope, depth)
        if isinstance(expr, ast.NamedExpr):
            return self.trace(expr.value, scope, depth + 1)
        return self.node("unknown", expr, why="a computed expression")

    def trace_call(self, expr: ast.Call, scope: _Scope, depth: int) -> dict:
        func = expr.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        g = getter_key(expr)
        if g is not None:
            return self.trace_chain(expr, scope, depth, g[2])
        qual = self.dotted(func)
        if qual in ("os.environ.get", "os.getenv") and expr.args and const_str(expr.args[0]):
            d = getter_default(expr, "get")
            dv = literal(d) if d is not None else None
            return self.node("env", expr, name=const_str(expr.args[0]),
                             default=None if dv is NOT_LITERAL else dv, has_default=d is not None)
        if name in CASTS and isinstance(func, ast.Name) and len(expr.args) == 1:
            return self.node("cast", expr, fn=name, of=[self.trace(expr.args[0], scope, depth + 1)])
        if name in COPIES and expr.args and not isinstance(expr.args[0], ast.Starred):
            # `OmegaConf.to_container(params, resolve=True)`, `copy.deepcopy(cfg.env)`: the same
            # settings, in another container
            return self.node("cast", expr, fn=name, of=[self.trace(expr.args[0], scope, depth + 1)])
        if name in ("min", "max") and isinstance(func, ast.Name) and expr.args:
            return self.node(name, expr, of=[self.trace(a, scope, depth + 1) for a in expr.args[:4]])
        if name in CPU_COUNT or (name == "len" and expr.args and self.dotted(expr.args[0]) == "os.sched_getaffinity"):
            return self.node("cpu_count", expr)
        callee = self.callees(func, scope) or None
        if callee and expr.args and len(expr.args) <= 3 and not expr.keywords \
                and not any(isinstance(a, ast.Starred) for a in expr.args):
            # kept aside (not under "of"): the flow layer puts them in place of the parameters
            # when the callee's return value is summarised (resolve._Returns)
            return self.node("call", expr, callee=callee,
                             argv=[self.trace(a, scope, depth + 1) for a in expr.args])
        return self.node("call", expr, callee=callee)

    def trace_name(self, name: str, at: ast.AST, scope: _Scope, depth: int) -> dict:
        pos = (at.lineno, at.col_offset)
        s: _Scope | None = scope
        while s is not None:
            found = [d for d in s.bindings().get(name, []) if d[0] <= pos or s is not scope]
            if found:
                last = found[-1]
                steps = [self.binding(name, last, s, depth)]
                if last[4] and len(found) > 1:  # set in a branch: the binding before it may still hold
                    steps.insert(0, self.binding(name, found[-2], s, depth))
                elif last[4] and name in s.params:
                    steps.insert(0, self.node("param", at, fn=self.full(s.qualname), name=name))
                return steps[0] if len(steps) == 1 else self.node("oneof", at, of=steps)
            if name in s.params:
                if name in s.options:  # a click command's option: the command line sets it
                    return self.node("config", at, key=name, root="click", via="click")
                return self.node("param", at, fn=self.full(s.qualname), name=name)
            s = self.outer(s)
        if name in self.imports:
            return self.node("unknown", at, why=f"imported {self.imports[name]}")
        return self.node("unknown", at, why=f"{name} is not bound in this file")

    def binding(self, name: str, d: tuple, scope: _Scope, depth: int) -> dict:
        _end, how, value, stmt, _branch = d
        if how == "assign":
            return self.node("assign", stmt, name=name, of=[self.trace(value, scope, depth + 1)])
        if how == "element":
            return self.node("element", stmt, name=name, of=[self.trace(value, scope, depth + 1)])
        if how == "aug":
            prev = self.trace_name(name, stmt, scope, depth + 1)
            return self.node("arith", stmt, op=type(stmt.op).__name__, of=[prev, self.trace(value, scope, depth + 1)])
        why = {"loop": "a loop variable", "unpack": "unpacked from a value", "with": "a context manager's value",
               "def": "a function or class"}.get(how, how)
        return self.node("unknown", stmt, why=why)

    def outer(self, scope: _Scope) -> _Scope | None:
        if scope.qualname == "<module>":
            return None
        qual = scope.qualname
        while "." in qual:
            qual = qual.rsplit(".", 1)[0]
            if qual in self.scopes:
                return self.scopes[qual]
        return self.scopes["<module>"]

    def trace_chain(self, expr: ast.AST, scope: _Scope, depth: int, via: str | None) -> dict:
        parts, root = chain(expr)
        default = getter_default(expr, via) if via and isinstance(expr, ast.Call) else None
        dv = literal(default) if default is not None else None
        fields = {"default": None if dv is NOT_LITERAL else dv, "has_default": default is not None or None,
                  "default_text": self.src.text(default, 60) if default is not None and dv is NOT_LITERAL else None,
                  "via": via or ("subscript" if isinstance(expr, ast.Subscript) else "attribute")}
        dict_like = via is not None or isinstance(expr, ast.Subscript)
        if not parts:
            return self.node("unknown", expr, why="a computed key")
        if isinstance(root, ast.Name):
            if root.id in self.imports and self.imports[root.id] == "os" and parts[0] == "environ" and len(parts) == 2:
                return self.node("env", expr, name=parts[1], **fields)
            if root.id in ("self", "cls"):
                if HANDLE.match(parts[0]):
                    return self.node("config", expr, key=".".join(strip_handles(parts)), root=f"self.{parts[0]}",
                                     **fields)
                passed = self.constructor_argument(parts, scope, depth)
                if passed is not None:
                    return passed
                prefix = self.self_attr(parts[0], expr, scope, depth)
                if prefix is not None:
                    return self.extend(prefix, parts[1:], expr, fields)
                return self.node("attr", expr, key=".".join(parts), **fields)
            prefix = self.root_value(root, scope, depth)
            if prefix is not None:
                return self.extend(prefix, parts, expr, fields)
            if CONFIG_ROOT.search(root.id) or dict_like:
                return self.node("config", expr, key=".".join(strip_handles(parts)), root=root.id, **fields)
            return self.node("attr", expr, key=".".join(parts), root=root.id, **fields)
        if dict_like:
            return self.node("config", expr, key=".".join(strip_handles(parts)), root=self.src.text(root, 40), **fields)
        return self.node("attr", expr, key=".".join(parts), **fields)

    def extend(self, prefix: dict, parts: list[str], expr: ast.AST, fields: dict) -> dict:
        """A chain on a root whose value is known: its key continues the root's key."""
        kind = prefix["k"]
        if kind == "config-root":
            return self.node("config", expr, key=".".join(strip_handles(parts)) if parts else "", root=prefix["text"],
                             **fields)
        if kind == "config":
            if not parts:
                return self.node("assign", expr, of=[prefix])
            key = ".".join(p for p in [prefix["key"], *parts] if p)
            return self.node("config", expr, key=key, root=prefix.get("root"), through=prefix["text"], **fields)
        if kind == "param":
            if not parts:
                return prefix
            if CONFIG_ROOT.search(prefix["name"]) or fields["via"] != "attribute":
                return self.node("config", expr, key=".".join(strip_handles(parts)), root=prefix["name"], **fields)
            return self.node("attr", expr, key=".".join(parts), root=prefix["name"], **fields)
        if not parts:
            return prefix
        return self.node("attr", expr, key=".".join(parts), **fields)

    def root_value(self, root: ast.Name, scope: _Scope, depth: int) -> dict | None:
        """What the root of a chain holds, when that decides the key: a config mapping read
        further up (data_cfg = cfg["data"]), a loaded config, or a parameter."""
        if depth > MAX_DEPTH:
            return None
        t = self.trace_name(root.id, root, scope, depth + 1)
        while t["k"] == "assign" and t.get("of"):
            inner = t["of"][0]
            if inner["k"] == "call" and (inner["text"].split("(", 1)[0].rsplit(".", 1)[-1] in CONFIG_LOADERS):
                return {"k": "config-root", "text": root.id}
            t = inner
        if t["k"] in ("config", "param"):
            return t
        return None

    def constructor_argument(self, parts: list[str], scope: _Scope, depth: int) -> dict | None:
        """self.factory.n_workers where `self.factory = WorkerFactory(n_workers=n)`: an object
        keeps what its constructor was given under the same name, so follow n."""
        if len(parts) != 2 or not scope.cls or depth > MAX_DEPTH:
            return None
        found = [(stmt, method, k.value) for stmt, method in self.attrs_of(scope.cls).get(parts[0], ())
                 if isinstance(stmt.value, ast.Call) for k in stmt.value.keywords if k.arg == parts[1]]
        if len(found) != 1:  # (an object handed in instead, in another branch, keeps its own)
            return None
        stmt, method, given = found[0]
        return self.node("assign", stmt, name=f"self.{parts[0]}.{parts[1]}",
                         of=[self.trace(given, self.scopes[method], depth + 1)])

    def self_attr(self, attr: str, at: ast.AST, scope: _Scope, depth: int) -> dict | None:
        """self.x: the value assigned to it in the class's __init__ (else one other method)."""
        cls = scope.cls
        found = self.attrs_of(cls).get(attr) if cls else None
        if not found or depth > MAX_DEPTH:
            return None
        steps = [self.node("assign", stmt, name=f"self.{attr}", of=[self.trace(stmt.value, self.scopes[method],
                                                                                   depth + 1)])
                 for stmt, method in found[:4]]
        # set in more than one place (__init__'s placeholder, then a setup method): any may hold
        return steps[0] if len(steps) == 1 else self.node("oneof", at, of=steps)

    def length(self, expr: ast.AST, scope: _Scope, depth: int = 0) -> dict | None:
        """The count behind a list of env fns: [f for _ in range(n)], [f] * n, or a name bound to one."""
        if depth > 3:
            return None
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)) and len(expr.generators) == 1:
            it = expr.generators[0].iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and it.args:
                n = it.args[-1] if len(it.args) <= 2 else it.args[1]
                return self.node("assign", expr, name="range", of=[self.trace(n, scope)])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            for seq, n in ((expr.left, expr.right), (expr.right, expr.left)):
                if isinstance(seq, (ast.List, ast.Tuple)) and len(seq.elts) == 1:
                    return self.node("assign", expr, name="len", of=[self.trace(n, scope)])
        if isinstance(expr, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
            return self.node("literal", expr, value=len(expr.elts))
        if isinstance(expr, ast.Name):
            defs = [d for d in scope.bindings().get(expr.id, []) if d[0] <= (expr.lineno, expr.col_offset)]
            if defs and defs[-1][1] == "assign":
                inner = self.length(defs[-1][2], scope, depth + 1)
                if inner is not None:
                    return self.node("assign", defs[-1][3], name=expr.id, of=[inner])
            if not defs and expr.id in scope.params:
                return None  # a list passed in: its length is the caller's
        return None

    # -- names --------------------------------------------------------------------------------------
    def dotted(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else ""
        return ""

    def callees(self, func: ast.AST, scope: _Scope) -> list[str]:
        """Dotted names a called expression may be, when it may be the project's own function."""
        if isinstance(func, ast.Name):
            name = func.id
            if name in self.imports:
                target = self.imports[name]
                return [] if target.split(".", 1)[0] in EXTERNAL else [target]
            s: _Scope | None = scope
            while s is not None:
                if s.qualname != "<module>" and f"{s.qualname}.{name}" in self.functions:
                    return [self.full(f"{s.qualname}.{name}")]
                s = self.outer(s)
            if name in self.functions or name in self.classes:
                return [self.full(name)]
            return []
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = func.value.id
            if base in ("self", "cls") and scope.cls:
                return [self.full(f"{scope.cls}.{func.attr}")]
            if base in self.classes:
                return [self.full(f"{base}.{func.attr}")]
            if base in self.imports:
                target = self.imports[base]
                return [] if target.split(".", 1)[0] in EXTERNAL else [f"{target}.{func.attr}"]
            if func.attr == "remote" and (base in self.functions or base in self.classes):
                return [self.full(base)]  # `main_task.remote(config)` of a `@ray.remote` function
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                isinstance(func.value.func, ast.Attribute) and func.value.func.attr == "options" and \
                isinstance(func.value.func.value, ast.Name):
            # `Actor.options(num_gpus=1).remote(cfg)` (Ray), `.as_actor(**cfg.trainer)` (Monarch):
            # the options call places the actor, the call on its result builds it
            return self.callees(func.value.func.value, scope)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and scope.cls and \
                isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            # `super().__init__(config, ...)`: the first base's method, this project's or another package's
            node = self.class_nodes.get(scope.cls)
            module = self.scopes["<module>"]
            bases = node.bases if node is not None else ()
            base = next((c for b in bases for c in self.callees(b, module)[:1]), None)
            return [f"{base}.{func.attr}"] if base else []
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
            dotted = self.dotted(func)  # pufferlib.vector.make(...): a module path through an import
            root = dotted.split(".", 1)[0]
            if dotted and root not in EXTERNAL and func.value.value.__class__ is not ast.Call and \
                    self._root_name(func) in self.imports:
                return [dotted]
        return []

    @staticmethod
    def _root_name(node: ast.AST) -> str:
        while isinstance(node, ast.Attribute):
            node = node.value
        return node.id if isinstance(node, ast.Name) else ""

    # -- config literals -------------------------------------------------------------------------
    def config_values(self) -> tuple[list[dict], list[str]]:
        out: list[dict] = []
        base: list[str] = []
        for stmt in self.tree.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            var = stmt.targets[0].id
            if var == "_base_":
                b = literal(stmt.value)
                base = [b] if isinstance(b, str) else [x for x in b if isinstance(x, str)] if isinstance(
                    b, (list, tuple)) else []
                continue
            self.flatten(stmt.value, var, out)
            if len(out) > MAX_CONFIG_VALUES:
                break
        return out[:MAX_CONFIG_VALUES], base

    def flatten(self, value: ast.AST, prefix: str, out: list[dict]) -> None:
        pairs: list[tuple[str, ast.AST, ast.AST]] = []
        if isinstance(value, ast.Dict):
            pairs = [(const_str(k), v, k) for k, v in zip(value.keys, value.values) if const_str(k)]
        elif isinstance(value, ast.Call) and (name := self._call_name(value.func)):
            if name in DICT_CALLS or name[:1].isupper():
                pairs = [(k.arg, k.value, k.value) for k in value.keywords if k.arg]
                if len(value.args) == 1 and not pairs:
                    self.flatten(value.args[0], prefix, out)
                    return
        for key, v, at in pairs:
            full = f"{prefix}.{key}"
            if isinstance(v, (ast.Dict, ast.Call)):
                self.flatten(v, full, out)
                continue
            lit = literal(v)
            if lit is not NOT_LITERAL and (lit is None or isinstance(lit, (int, float, str, bool))):
                out.append({"key": full, "line": at.lineno, "col": self.src.column(at), "value": lit,
                            "text": self.src.line(at.lineno)})

    @staticmethod
    def _call_name(func: ast.AST) -> str:
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def statements(body: list[ast.stmt]):
    """Every statement under BODY (into if/for/while/with/try/match), not into nested defs."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, list):
                stack.extend(reversed(sub))
        for h in getattr(stmt, "handlers", None) or ():
            stack.extend(reversed(h.body))
        for case in getattr(stmt, "cases", None) or ():
            stack.extend(reversed(case.body))


def _param_default(builder: Builder, qual: str, default: ast.AST) -> dict:
    v = literal(default)
    if v is not NOT_LITERAL and (v is None or isinstance(v, (int, float, str, bool))):
        return builder.node("literal", default, value=v)
    outer = builder.outer(builder.scopes[qual])
    return builder.trace(default, outer or builder.scopes["<module>"])


def build(tree: ast.Module, path: str, src, sinks: list[tuple], calls: list[tuple],
          defs: list[tuple] | None = None, sized: list[tuple] = (), starts: dict | None = None,
          unused: set[str] = frozenset(), returns: list[tuple] = ()) -> dict:
    b = Builder(tree, path, src, defs)
    facts: dict[str, Any] = {"module": b.module, "sinks": [], "calls": []}
    for qual, value in returns:
        scope = b.scopes.get(qual)
        if scope is not None and b.full(qual) not in facts.setdefault("returns", {}):
            facts["returns"][b.full(qual)] = {"params": scope.params, "tree": b.trace(value, scope)}
    for index, arg, fn, measure_len in sinks:
        scope = b.scopes.get(fn) or b.scopes["<module>"]
        tree = b.length(arg, scope) if measure_len else b.trace(arg, scope)
        if tree is not None:
            facts["sinks"].append({"site": index, "fn": b.full(fn) if fn != "<module>" else "<module>",
                                   "tree": tree})
    facts["sized"] = _sized(b, sized)
    facts["calls"], helpers = _edges(b, calls, facts["sinks"] + facts["sized"], {b.full(q) for q in unused})
    functions = {}
    for qual, info in b.functions.items():
        if not info["params"] or b.full(qual) not in helpers:
            continue  # no parameter of it reaches a sink or a call edge: it can never be a helper
        defaults = {p: _param_default(b, qual, d) for p, d in info.pop("_defaults").items()}
        functions[b.full(qual)] = {**info, "defaults": defaults}
    facts["functions"] = functions
    facts["classes"] = {b.full(c): line for c, line in b.classes.items()}
    facts["config"], facts["base"] = b.config_values()
    imports = sorted(m for m in b.imported if m.split(".", 1)[0] not in EXTERNAL)
    if imports:
        facts["imports"] = imports
    if not facts["sized"]:
        del facts["sized"]
    _structure(b, facts)
    if starts:
        facts["starts"] = {b.full(cls): token for cls, token in starts.items()}
    return facts


def _sized(b: Builder, sized: list[tuple]) -> list[dict]:
    """`range(self.n_workers)` in a method, when a parameter sets the count: the class makes
    that many of something (the flow layer decides whether it runs them in parallel)."""
    from auditor.flow.values import leaves

    out = []
    for fn, count in sized:
        scope = b.scopes.get(fn)
        if scope is None:
            continue
        tree = b.trace(count, scope)
        if any(n["k"] == "param" for n in leaves(tree)):
            out.append({"fn": b.full(fn), "cls": b.full(scope.cls), "tree": tree, "line": count.lineno,
                        "col": b.src.column(count), "text": b.src.text(count, TEXT_LIMIT)})
    return out


def _structure(b: Builder, facts: dict) -> None:
    """What the flow layer needs to tell the project's own backends apart (issue 23): a
    class's project bases and the string names it is registered under
    (`@REGISTRY.register("base")`, `{"base": BaseManager, ...}`)."""
    module = b.scopes["<module>"]
    bases, registered, inherits, fields = {}, [], [], {}
    for qual, node in b.class_nodes.items():
        # (a class with an __init__ of its own takes its arguments there, not as its fields)
        own = _annotated_fields(b, node) if not _defines_init(node) else None
        if own:
            fields[b.full(qual)] = own
        found = [c for base in node.bases for c in b.callees(base, module)[:1]]
        if found:
            bases[b.full(qual)] = found
            if _inherits_init(node):
                inherits.append(b.full(qual))
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and dec.args and const_str(dec.args[0]):
                registered.append({"group": b.src.text(dec.func, 60), "name": const_str(dec.args[0]),
                                   "cls": [b.full(qual)], "line": node.lineno})
    for stmt in b.tree.body:  # NAME_TO_CLASS = {"base": BaseManager, "subprocess": SubprocessManager}
        if not (isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Dict)):
            continue
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        entries = [(const_str(k), b.callees(v, module)) for k, v in zip(stmt.value.keys, stmt.value.values)
                   if k is not None and const_str(k) and isinstance(v, (ast.Name, ast.Attribute))]
        entries = [(k, c) for k, c in entries if c]
        if len(entries) >= 2 and isinstance(target, ast.Name):
            registered.extend({"group": b.full(target.id), "name": k, "cls": c[:2], "line": stmt.lineno}
                              for k, c in entries)
    if bases:
        facts["bases"] = bases
    if inherits:
        facts["inherits_init"] = inherits
    if registered:
        facts["registry"] = registered
    if fields:
        facts["fields"] = fields


def _annotated_fields(b: Builder, node: ast.ClassDef) -> dict[str, str]:
    """`parallelism: Parallelism = field(...)` -> {"parallelism": "torchtitan.config.Parallelism"}:
    a class's annotated attributes and the dotted name of each one's type ("" when it is no
    plain name: `int`, `Optional[X]`, `list[int]`)."""
    out: dict[str, str] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and len(out) < MAX_FIELDS:
            kind = stmt.annotation
            dotted = b.dotted(kind) if isinstance(kind, (ast.Name, ast.Attribute)) else ""
            out[stmt.target.id] = dotted if "." in dotted else b.full(dotted) if dotted in b.classes else ""
    return out


def _inherits_init(node: ast.ClassDef) -> bool:
    """A class whose call runs its base's __init__: none of its own, and no decorator (a
    dataclass writes one from the fields)."""
    return not node.decorator_list and not _defines_init(node)


def _defines_init(node: ast.ClassDef) -> bool:
    return any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in ("__init__", "__new__")
               for stmt in node.body)


def _edges(b: Builder, calls: list[tuple], sinks: list[dict], keep: set[str] = frozenset()) -> tuple[list[dict], set[str]]:
    """Call edges worth keeping, with a value tree per argument, and the functions whose
    parameters reach a sink or an edge here (only these can ever be helpers).

    A call to a function of this file is kept only when that function is a helper here: its
    parameter reaches a sink of this file, or it passes a parameter on to an imported
    callee (which another file may summarise), to a fixed point. Calls to imported callees
    are all kept: only the other file knows. Most calls of a file are to local functions
    that are no helper; tracing their arguments would cost more than the rest of the file."""
    from auditor.flow.values import leaves

    pending = []
    for fn, _cls, call, receiver in calls:
        scope = b.scopes.get(fn) or b.scopes["<module>"]
        callees = b.callees(call.func, scope)
        if not callees and receiver is not None:
            # `collector = Collector(cfg)` then `collector.collect()`: a method of that class
            callees = [f"{c}.{call.func.attr}" for c in b.callees(receiver, scope)[:1]]
        if not callees:
            foreign = _splat_into_package(b, call)
            if foreign:  # `Trainer(**params)`: what the mapping holds leaves the tree (QG101)
                pending.append((fn, scope, call, [foreign], None))
            continue
        target = _local_target(b, callees[0])
        if target == "":
            continue
        pending.append((fn, scope, call, callees, target))
    # KEEP: functions whose callers matter though no parameter reaches a sink (one they ignore)
    helpers = {n["fn"] for s in sinks for n in leaves(s["tree"]) if n["k"] == "param"} | set(keep)
    out: list[dict] = []
    done: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i, (fn, scope, call, callees, target) in enumerate(pending):
            if i in done or (target is not None and target not in helpers):
                continue
            done.add(i)
            edge = _edge(b, fn, scope, call, callees)
            out.append(edge)
            for arg in [*edge["args"], *edge["kwargs"].values()]:
                for n in leaves(arg):
                    if n["k"] == "param" and n["fn"] not in helpers:
                        helpers.add(n["fn"])
                        changed = True
    return out, helpers


def _zipped(stmt: ast.For) -> list[tuple[ast.AST, ast.AST]]:
    """(loop name, the sequence it walks) for `for a, b in zip(xs, ys):` with one name per
    sequence; [] for any other loop."""
    it, target = stmt.iter, stmt.target
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" and not it.keywords
            and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(it.args)
            and not any(isinstance(a, ast.Starred) for a in it.args)):
        return []
    return [(t, a) for t, a in zip(target.elts, it.args) if isinstance(t, ast.Name)]


def _decorator_name(node: ast.AST) -> str:
    """`configurable` for `@configurable`, `@configurable(from_config=f)`, `@config.configurable`."""
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _splat_into_package(b: Builder, call: ast.Call) -> str | None:
    """The dotted name of a well-known package's callable that a call splats a mapping into
    (`pytorch_lightning.Trainer(**lightning_params)`), for the edge that says its keys leave the
    tree; None otherwise (the standard library's callables read no settings by name)."""
    if not any(k.arg is None for k in call.keywords):
        return None
    dotted = b.dotted(call.func)
    root = dotted.split(".", 1)[0]
    if "." not in dotted or root not in EXTERNAL or root in sys.stdlib_module_names:
        return None
    return dotted


def _local_target(b: Builder, callee: str) -> str | None:
    """The full name of this file's function a callee names ('' for one taking no
    arguments: nothing flows in), or None when it is another file's."""
    prefix = f"{b.module}." if b.module else ""
    if not callee.startswith(prefix):
        return None
    qual = callee[len(prefix):]
    if qual in b.classes:
        qual = f"{qual}.__init__"
        if qual not in b.functions:
            return ""
    elif qual not in b.functions:
        return None
    return prefix + qual if b.functions[qual]["params"] else ""


def _edge(b: Builder, fn: str, scope: _Scope, call: ast.Call, callees: list[str]) -> dict:
    args = []
    star = False
    for a in call.args:
        if isinstance(a, ast.Starred):
            star = True
            break
        args.append(_pruned(b.trace(a, scope, EDGE_DEPTH)))
    kwargs = {}
    splats = []
    closed_splats = 0
    lines = {}  # keyword -> its line, in a call written over several lines
    for k in call.keywords:
        if k.arg is None:
            star = True
            splats.append(_pruned(b.trace(k.value, scope, EDGE_DEPTH)))
            # `kwargs = dict(map_num_proc=map_num_proc, ...)` then `process(**kwargs)`: the
            # mapping's keys are the callee's arguments
            for key, value in _mapping_entries(k.value, scope):
                if key not in kwargs:
                    kwargs[key] = _pruned(b.trace(value, scope, EDGE_DEPTH))
            closed = _closed_mapping(k.value, scope)
            if closed is not None:
                # `lora_kwargs = {}` or `{"enable_lora": ...}` and nothing else ever writes to
                # it: the splat passes those keys and no other, so what it omits is omitted
                for key, value in closed.items():
                    if key not in kwargs:
                        kwargs[key] = _pruned(b.trace(value, scope, EDGE_DEPTH))
                closed_splats += 1
        else:
            kwargs[k.arg] = _pruned(b.trace(k.value, scope, EDGE_DEPTH))
            if k.value.lineno != call.lineno:
                lines[k.arg] = k.value.lineno
    if star and splats and closed_splats == len(splats) and not any(isinstance(a, ast.Starred) for a in call.args):
        star = False
    edge = {"fn": b.full(fn) if fn != "<module>" else "<module>", "callee": callees, "line": call.lineno,
            "col": b.src.column(call), "text": b.src.text(call, TEXT_LIMIT), "args": args, "kwargs": kwargs,
            "star": star}
    if splats:
        edge["splats"] = splats  # **mapping: the keys of that mapping become the callee's arguments
    bare = [a.id for a in [*call.args, *(k.value for k in call.keywords if k.arg)]
            if isinstance(a, ast.Name) and a.id not in ("self", "cls")]
    if bare:
        edge["bare"] = bare  # the names passed as they are: `setup(config, tokenizer)` hands `config` whole
    if lines:
        edge["lines"] = lines
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and scope.cls and \
            isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        # `super().__init__(job_config)` in `class Recipe(ForgeActor, ForgeEngine)`: a cooperative
        # chain may reach every base, not only the first (the callee)
        node = b.class_nodes.get(scope.cls)
        module = b.scopes["<module>"]
        others = [c for base in (node.bases[1:] if node is not None else ()) for c in b.callees(base, module)[:1]]
        if others:
            edge["mro"] = [f"{c}.{func.attr}" for c in others]
    return edge


def _mapping_entries(expr: ast.AST, scope: _Scope) -> list[tuple[str, ast.AST]]:
    """The (key, value) entries of a local mapping bound once in SCOPE to a `dict(k=v, ...)`
    call or a `{"k": v}` display, for a `**name` that hands them on; [] otherwise."""
    if not isinstance(expr, ast.Name):
        return []
    defs = scope.bindings().get(expr.id, [])
    if len(defs) != 1 or defs[0][1] != "assign":
        return []
    value = defs[0][2]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and not value.args:
        return [(kw.arg, kw.value) for kw in value.keywords if kw.arg is not None]
    if isinstance(value, ast.Dict):
        return [(k.value, v) for k, v in zip(value.keys, value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()]
    return []


_READ_ONLY = frozenset({"get", "keys", "items", "values", "copy"})


def _closed_mapping(expr: ast.AST, scope: _Scope) -> dict[str, ast.AST] | None:
    """Every key a local mapping may hold, when each binding of the name in SCOPE is a dict
    display or `dict(k=v)` with literal keys and the scope only reads it or splats it; None
    when anything else may write to it (a subscript store, `update`, a call it is passed to)."""
    if not isinstance(expr, ast.Name) or expr.id in scope.params:
        return None
    defs = scope.bindings().get(expr.id, [])
    if not defs:
        return None
    entries: dict[str, ast.AST] = {}
    for _end, how, value, _stmt, _branch in defs:
        if how != "assign":
            return None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
                and not value.args and all(kw.arg is not None for kw in value.keywords):
            pairs = [(kw.arg, kw.value) for kw in value.keywords]
        elif isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in value.keys):
            pairs = list(zip((k.value for k in value.keys), value.values))
        else:
            return None
        entries.update(pairs)
    for node in ast.walk(scope.node):
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.Name) and child.id == expr.id and isinstance(child.ctx, ast.Load)):
                continue
            if isinstance(node, ast.keyword) and node.arg is None:
                continue
            if isinstance(node, ast.Attribute) and node.attr in _READ_ONLY:
                continue
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                continue
            if isinstance(node, ast.Compare) and child is not node.left:
                continue  # `"k" in kwargs`
            return None
    return entries


def _pruned(tree: dict) -> dict:
    """An argument no literal, config read, env var or parameter reaches says nothing but
    that it is unknown: one node instead of its whole tree (most arguments of most calls)."""
    from auditor.flow.values import leaves

    if tree.get("of") and not any(n["k"] in ("literal", "config", "env", "param") for n in leaves(tree)):
        return {"k": "unknown", "file": tree["file"], "line": tree["line"], "col": tree["col"], "text": tree["text"],
                "why": "not statically known"}
    return tree

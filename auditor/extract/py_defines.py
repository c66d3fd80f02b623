"""Definitions for the Python extractor: argparse, typed config classes, dict literals,
literal keywords and environment writes.

A mixin of the one visitor in python_code.py (it uses its emit / match / text / qual).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

from auditor import catalogue
from auditor.extract import py_splits
from auditor.extract.py_refs import (CASTS, HANDLE, HELP_COUNTS, NOT_LITERAL, click_name, const_str, getter_default, literal,
                                     stated_default)

FIELD_CALLS = {"field", "Field", "ib", "attrib"}  # dataclasses.field, pydantic.Field, attr.ib
ATTRS_DECORATORS = {"s", "attrs", "define", "frozen", "mutable"}
PYDANTIC_BASES = {"BaseModel", "BaseSettings"}
UNUSED_COMMENT = re.compile(r"deprecat|\blegacy\b|backward[- ]compat|\bkept only\b|\bno longer used\b|\bunused\b",
                            re.IGNORECASE)
# a flag's help that says the program ignores it
UNUSED_HELP = re.compile(UNUSED_COMMENT.pattern + r"|\bnot used\b|\bfor compatibility\b|\bhas no effect\b",
                         re.IGNORECASE)
MAX_PARSER_FLAGS = 300  # flags recorded per function that builds a parser
MAX_SETTING_FLAGS = 50  # setting flags (no count) recorded per file


@lru_cache(maxsize=1)
def setting_flag_words() -> tuple[frozenset, frozenset, frozenset, tuple]:
    data = catalogue.data("knobs.yaml").get("setting_flags") or {}
    return (frozenset(data.get("names") or ()), frozenset(data.get("words") or ()),
            frozenset(data.get("not_words") or ()), tuple(data.get("help") or ()))


def is_setting_flag(dest: str, help_text: str) -> bool:
    """Does a flag choose where or how the work runs (`--gpu`, `--start_method`, `--target_tp`),
    by its name or help text (rules/knobs.yaml `setting_flags`)?"""
    names, words, not_words, phrases = setting_flag_words()
    name = dest.lower().replace("-", "_")
    parts = set(name.split("_"))
    if parts & not_words:
        return False
    if name in names or parts & words:
        return True
    text = help_text.lower()
    return any(p in text for p in phrases)


def _suppressed(annotation: ast.AST) -> bool:
    """`tyro.conf.Suppress[int]` (or `Suppress[...]` imported): a field no command line sets."""
    node = annotation.value if isinstance(annotation, ast.Subscript) else None
    return (isinstance(node, ast.Attribute) and node.attr == "Suppress"
            or isinstance(node, ast.Name) and node.id == "Suppress")


def flag_names(node: ast.Call, via: str = "argparse"):
    """(flags, dest, every name the flag goes by, keywords) of an add_argument / click.option
    call, or None when it names no flag."""
    flags = [s for a in node.args if (s := const_str(a)) is not None]
    if not flags:
        return None
    kws = {k.arg: k.value for k in node.keywords if k.arg}
    longs = [f for f in flags if f.startswith("--")]
    dest = const_str(kws.get("dest"))
    if via == "click":
        dest = click_name(flags)
        flags = [f for f in flags if f.startswith("-")] or flags
    if dest is None:
        dest = (longs[0] if longs else flags[0]).lstrip("-")
        if flags[0].startswith("-"):
            dest = dest.replace("-", "_")
    return flags, dest, [dest] + [f.lstrip("-").replace("-", "_") for f in flags], kws


_NOT_A_COUNT = {"store_true", "store_false", "store_const", "append_const", "count", "version", "help"}

# absl (and TF1 / gflags) flags: `flags.DEFINE_integer("num_actors", 4, "Number of actors.")`,
# read as `FLAGS.num_actors` or through the holder it returns (`NUM_ACTORS.value`)
_ABSL_TYPES = {"DEFINE_integer": "int", "DEFINE_multi_integer": "int", "DEFINE_float": "float",
               "DEFINE_bool": "bool", "DEFINE_boolean": "bool", "DEFINE_string": "str", "DEFINE_enum": "str",
               "DEFINE_list": "list", "DEFINE_multi_string": "str", "DEFINE_enum_class": "enum"}
_ABSL_POSITIONS = ("name", "default", "help")


def absl_flag(node: ast.Call, q: str | None):
    """(name, keywords by parameter: name, default, help, ..., the flag's type) of an absl
    `DEFINE_*` call (`absl.flags.DEFINE_integer`, `tf.compat.v1.flags.DEFINE_integer`,
    `gflags.DEFINE_integer`), or None."""
    if not q or "." not in q:
        return None
    module, leaf = q.rsplit(".", 1)
    kind = _ABSL_TYPES.get(leaf)
    if kind is None or not (module.endswith("flags") or module.startswith("absl")):
        return None
    kws = {k.arg: k.value for k in node.keywords if k.arg}
    for param, arg in zip(_ABSL_POSITIONS, node.args):
        kws.setdefault(param, arg)
    name = const_str(kws.get("name"))
    return (name, kws, kind) if name and name.isidentifier() else None


def counts_by_help(kws: dict, help_text: str) -> bool:
    """Does a flag count workers by its help text ("number of sampler workers")? Not a switch
    (`--scale_lr`, store_true: "scale the learning rate by the number of GPUs") or a float."""
    action = kws.get("action")
    if const_str(action) in _NOT_A_COUNT or (isinstance(action, ast.Attribute) and action.attr == "BooleanOptionalAction"):
        return False
    kind = ast.unparse(kws["type"]) if isinstance(kws.get("type"), (ast.Name, ast.Attribute)) else ""
    if "bool" in kind.lower() or kind == "float":
        return False  # type=bool, str2bool, distutils.util.strtobool
    if isinstance(kws.get("default"), ast.Constant) and isinstance(kws["default"].value, (bool, float)):
        return False
    return bool(help_text) and HELP_COUNTS.search(help_text) is not None


def help_counted_flags(tree: ast.AST) -> set[str]:
    """The dests of the argparse flags in TREE that count workers by their help text alone
    (`--n_parallel`, help="number of sampler workers"): this file's reads of `args.n_parallel`
    are reads of a knob, wherever they stand before or after the parser."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            named = flag_names(node)
            if named is not None and counts_by_help(named[3], const_str(named[3].get("help")) or ""):
                found.add(named[1])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ABSL_TYPES:
            flag = absl_flag(node, f"flags.{node.func.attr}")
            if flag is not None and _absl_counts_by_help(flag):
                found.add(flag[0])
    return found


def _absl_counts_by_help(flag) -> bool:
    _name, kws, kind = flag
    return kind == "int" and HELP_COUNTS.search(const_str(kws.get("help")) or "") is not None


class DefineMixin:
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = self.frame
        qualname = node.name if outer.kind == "module" else f"{outer.qualname}.{node.name}"
        for dec in node.decorator_list:
            self.visit(dec)
        for base in node.bases:
            self.visit(base)
        self.flow_defs.append(("class", node, qualname))
        via = self.class_kind(node)
        if via == "ray":
            self.facts.workers.add(qualname)
            via = "class"
        self.enter_class(qualname)
        # what the class extends (a field of a TrainingArguments subclass is read by transformers)
        bases = [b for b in (self.qual(base) or self.text(base) for base in node.bases) if b != "object"]
        outer_bases, self.class_bases = self.class_bases, bases
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                self.class_field(stmt, stmt.target.id, stmt.value, via, qualname)
                if stmt.value is not None:
                    self.visit(stmt.value)
            elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                for t in stmt.targets:
                    if is_literal_or_field(stmt.value):
                        self.class_field(stmt, t.id, stmt.value, via, qualname)
                self.visit(stmt.value)
            else:
                self.visit(stmt)
        self.class_bases = outer_bases
        self.leave_frame()

    def class_kind(self, node: ast.ClassDef) -> str:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            q = self.qual(target) or ""
            leaf = q.rsplit(".", 1)[-1] if q else getattr(target, "id", getattr(target, "attr", ""))
            if q == "ray.remote":
                return "ray"
            if leaf == "dataclass" or q.startswith(("pydantic.dataclasses", "flax.struct")):
                return "dataclass"
            if q.split(".", 1)[0] in ("attr", "attrs") and leaf in ATTRS_DECORATORS:
                return "attrs"
        for base in node.bases:
            q = self.qual(base) or ""
            leaf = q.rsplit(".", 1)[-1] if q else getattr(base, "id", getattr(base, "attr", ""))
            if leaf in PYDANTIC_BASES and (q.startswith(("pydantic", "pydantic_settings")) or not q):
                return "pydantic"
            if leaf == "NamedTuple":
                return "namedtuple"
        return "class"

    def said_unused(self, lineno: int) -> bool:
        """Do the comments of a field's paragraph (its line and the lines above it up to a blank
        one) say it is deprecated or unused? `# Deprecated ... fields, kept only so old configs parse`."""
        lines = self.src.lines
        for n in range(lineno, max(0, lineno - 40), -1):
            line = lines[n - 1] if n - 1 < len(lines) else ""
            if not line.strip():
                return False
            comment = line.partition("#")[2]
            if comment and UNUSED_COMMENT.search(comment):
                return True
        return False

    def class_field(self, stmt: ast.stmt, name: str, value: ast.AST | None, via: str, owner: str) -> None:
        if not self.match(name):
            return
        detail: dict[str, Any] = {"via": via, "owner": owner}
        if self.class_bases and via != "class":
            detail["bases"] = list(self.class_bases)
        if self.said_unused(stmt.lineno):
            detail["said_unused"] = True
        if isinstance(stmt, ast.AnnAssign) and _suppressed(stmt.annotation):
            detail["not_init"] = True  # `tyro.conf.Suppress[int]`: hidden from the CLI, the program fills it
        if value is None:
            if via == "class":
                return  # a bare annotation on a plain class defines nothing
            detail["required"] = True
            self.emit("define", stmt, name, None, **detail)
            return
        default = value
        if isinstance(value, ast.Call):
            leaf = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
            if leaf in FIELD_CALLS:
                kws = {k.arg: k.value for k in value.keywords if k.arg}
                if isinstance(kws.get("init"), ast.Constant) and kws["init"].value is False:
                    detail["not_init"] = True  # `field(init=False)`: state the class computes, no setting
                meta = kws.get("metadata")
                if isinstance(meta, ast.Dict):  # `metadata={"help": "FSDP parallel size"}`
                    text = next((const_str(v) for k, v in zip(meta.keys, meta.values)
                                 if isinstance(k, ast.Constant) and k.value == "help"), None)
                    if text:
                        detail["help"] = text[:120]
                        _note_stated(detail, text)
                default = kws.get("default")
                if default is None and leaf == "Field" and value.args:
                    default = value.args[0]
                if default is None:
                    factory = kws.get("default_factory") or kws.get("factory")
                    if factory is not None:
                        detail["expr"] = self.text(factory)
                        detail["factory"] = True
                    else:
                        detail["required"] = True
                    self.emit("define", stmt, name, None, **detail)
                    return
        v = literal(default)
        if v is NOT_LITERAL:
            detail["expr"] = self.text(default)
            if isinstance(default, ast.Constant) and default.value is Ellipsis:
                detail["required"] = True
        self.emit("define", stmt, name, None if v is NOT_LITERAL else v, **detail)

    def add_argument(self, node: ast.Call, via: str = "argparse", documented: dict | None = None) -> None:
        """`parser.add_argument("--num-envs", ...)`, and (VIA "click") `@click.option("--n", ...)`:
        a flag is a knob by its name, or by a help text that says it counts workers."""
        named = flag_names(node, via)
        if named is None:
            return
        flags, dest, names, kws = named
        if via == "argparse":  # every flag of a parser built here, knob or not (QG104: args.x added, not replaced)
            own = self.meta.setdefault("parser_flags", {}).setdefault(self.function().qualname, [])
            if len(own) < MAX_PARSER_FLAGS:
                own.append(dest)
        help_text = const_str(kws.get("help")) or (documented or {}).get(dest, "")
        by_name = any(self.match_vocabulary(n) for n in names)
        by_help = not by_name and counts_by_help(kws, help_text)
        fed = not by_name and not by_help and dest in self.help_named  # handed to a backend's count here
        if not by_help and not by_name and not fed:
            if via == "argparse" and is_setting_flag(dest, help_text):
                # `--gpu`, `--start_method`: no count, but the user's choice of where the work runs
                quiet = self.meta.setdefault("setting_flags", [])
                if len(quiet) < MAX_SETTING_FLAGS:
                    quiet.append({"dest": dest, "flag": flags[0], "line": node.lineno, "column": node.col_offset + 1,
                                  **({"help": help_text[:120]} if help_text else {})})
            return
        if via == "argparse":  # the functions that add knob flags: scripts calling them are parsed (flow pass)
            builders = self.meta.setdefault("knob_parsers", [])
            if self.function().qualname not in builders:
                builders.append(self.function().qualname)
        detail: dict[str, Any] = {"via": via, "flags": flags, "dest": dest}
        if by_help:
            detail["counts_by_help"] = True
        if fed:
            detail["fed_to_backend"] = True
        v = self.flag_default(kws, detail)
        if "type" in kws:
            detail["type"] = self.text(kws["type"])
        if "choices" in kws:
            c = literal(kws["choices"])
            detail["choices"] = c if c is not NOT_LITERAL else self.text(kws["choices"])
        if "required" in kws:
            detail["required"] = literal(kws["required"])
        if const_str(kws.get("help")):
            detail["help"] = const_str(kws["help"])[:120]
        _note_stated(detail, help_text)
        site = self.emit("define", node, dest, v, **detail)
        if not self.match_vocabulary(dest):
            site.detail["match"] = next((m for n in names if (m := self.match_vocabulary(n))), "exact")
            # `--no-subproc` names the setting, `subproc` holds it: this file's later
            # `set_defaults(subproc=...)` and `args.subproc` are the same setting's
            self.help_named.add(dest)

    def absl_define(self, node: ast.Call, flag) -> None:
        """`flags.DEFINE_integer("num_actors", 4, "Number of actors.")`: a command-line flag as
        argparse's are (detail `parser: absl`), a knob by its name or by a help text that says it
        counts workers."""
        name, kws, kind = flag
        by_name = self.match_vocabulary(name)
        if not by_name and not _absl_counts_by_help(flag):
            return
        detail: dict[str, Any] = {"via": "argparse", "parser": "absl", "flags": [f"--{name}"], "dest": name,
                                  "type": kind}
        if not by_name:
            detail["counts_by_help"] = True
        default = kws.get("default")
        v = literal(default) if default is not None else None
        if v is NOT_LITERAL:
            detail["expr"] = self.text(default)
        if const_str(kws.get("help")):
            detail["help"] = const_str(kws["help"])[:120]
            _note_stated(detail, const_str(kws["help"]))
        site = self.emit("define", node, name, None if v is NOT_LITERAL else v, **detail)
        if not by_name:
            site.detail["match"] = "exact"

    def flag_default(self, kws: dict, detail: dict) -> Any:
        """A flag's default as argparse gives it (store_true: False), its action and expression
        recorded in DETAIL; None when not a literal."""
        action = const_str(kws.get("action"))
        if action:
            detail["action"] = action
        if "default" not in kws:
            detail["default_given"] = False
            return {"store_true": False, "store_false": True}.get(action or "")
        v = literal(kws["default"])
        if v is NOT_LITERAL:
            detail["expr"] = self.text(kws["default"])
            return None
        return v

    def argument_spec(self, node: ast.Dict) -> None:
        """`{"name": "--num_envs", "type": int, "help": ...}`: an argparse flag spelled as a dict,
        as Isaac Gym's gymutil.parse_arguments(custom_parameters=[...]) takes them."""
        spec = {const_str(k): v for k, v in zip(node.keys, node.values) if k is not None and const_str(k)}
        flag = const_str(spec.get("name")) if "name" in spec else None
        if not flag or not flag.startswith("--") or not ({"type", "action", "default", "help"} & set(spec)):
            return
        dest = flag.lstrip("-").replace("-", "_")
        if not self.match(dest):
            return
        detail: dict[str, Any] = {"via": "argparse", "flags": [flag], "dest": dest, "spec": "dict"}
        v = self.flag_default(spec, detail)
        if "help" in spec and const_str(spec["help"]):
            detail["help"] = const_str(spec["help"])[:120]
            _note_stated(detail, const_str(spec["help"]))
        self.emit("define", node, dest, v, **detail)

    def keyword_defines(self, node: ast.Call, q: str | None) -> None:
        """`f(num_workers=4)`: a literal given to a knob-named keyword of any other call."""
        func = node.func
        # what the callee is: an import (q), a name of this module, a method of this class, or a
        # method of some object whose class the scan cannot know
        kind = "import" if q else "local" if isinstance(func, ast.Name) else "self" if (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
        ) else "method"
        settings = None  # (root, how many) of keywords read from one settings handle (`args.batch_size`)
        for k in node.keywords:
            if k.arg and self.match(k.arg):
                v = literal(k.value)
                if v is not NOT_LITERAL:
                    if settings is None:
                        settings = _settings_keywords(node)
                    self.emit("define", k.value, k.arg, v, via="keyword",
                              callee=q or self.text(func), callee_kind=kind,
                              settings_keywords=settings[1] or None, settings_root=settings[0])

    def call_environ(self, node: ast.Call, q: str | None) -> bool:
        """os.environ.get / os.getenv reads; os.environ.setdefault / update / pop, os.putenv
        overrides. True when handled."""
        if q in ("os.environ.get", "os.getenv") and node.args:
            name = const_str(node.args[0])
            if name and self.match(name):
                d = getter_default(node, "get")
                dv = literal(d) if d is not None else None
                self.emit("read", node, name, default=None if dv is NOT_LITERAL else dv, via="environ",
                          expr=self.text(d) if dv is NOT_LITERAL else None)
            self.visit_args(node)
            return True
        if q in ("os.environ.setdefault", "os.putenv", "os.environ.pop") and node.args:
            name = const_str(node.args[0])
            if name and self.match(name):
                value = node.args[1] if len(node.args) > 1 else None
                v = literal(value) if value is not None else None
                self.emit("override", node, name, None if v is NOT_LITERAL else v, how="environ",
                          backend="os.environ", **self.thread_var(name),
                          setdefault=True if q.endswith("setdefault") else None,
                          unset=True if q.endswith("pop") else None,
                          expr=self.text(value) if v is NOT_LITERAL else None)
            self.visit_args(node)
            return True
        if q == "os.environ.update":
            pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
            if node.args and isinstance(node.args[0], ast.Dict):
                pairs += [(const_str(k), v) for k, v in zip(node.args[0].keys, node.args[0].values)]
            elif node.args:
                self.meta["environ_by_name"] = node.lineno  # os.environ.update(asdict(env_args))
            for name, value in pairs:
                if name and self.match(name):
                    v = literal(value)
                    self.emit("override", value, name, None if v is NOT_LITERAL else v, how="environ",
                              backend="os.environ", **self.thread_var(name),
                              expr=self.text(value) if v is NOT_LITERAL else None)
            self.visit_args(node)
            return True
        return False

    def lacks_key(self, mapping: ast.AST, key: str) -> bool:
        """`**_nccl_env` where every `_nccl_env = {...}` in this file lacks KEY, or a display
        written on the spot (`**({"mail-type": t} if mail else {})`) without it: it cannot
        replace KEY."""
        if isinstance(mapping, ast.IfExp):
            return self.lacks_key(mapping.body, key) and self.lacks_key(mapping.orelse, key)
        if isinstance(mapping, ast.Dict):
            keys = [const_str(k) if k is not None else None for k in mapping.keys]
            return None not in keys and key not in keys
        if not isinstance(mapping, ast.Name) or self.ctx is None:
            return False
        keys = self.ctx.dict_keys(mapping.id)
        return keys is not None and key not in keys

    def visit_Dict(self, node: ast.Dict, prefix: str = "") -> None:
        if None in node.keys:
            self.shadow_display(node)
        if not prefix:
            self.argument_spec(node)
        for i, (k, v) in enumerate(zip(node.keys, node.values)):
            key = const_str(k) if k is not None else None
            if key is not None and isinstance(v, ast.Dict):
                self.visit_Dict(v, f"{prefix}{key}.")
                continue
            if key is not None and self.match(key):
                split = py_splits.split_of(v)
                if split is not None:  # {"num_envs_per_worker": int(cfg.num_actors / cfg.num_cpus)}
                    self.split_candidates.append((self.function().qualname, key, v, split))
                lit = literal(v)
                if lit is not NOT_LITERAL:
                    later = [self.text(node.values[j]) for j in range(i + 1, len(node.keys)) if node.keys[j] is None
                             and not self.lacks_key(node.values[j], key)]
                    # an env var in a runtime_env/env dict keeps its own name: env_vars.OMP_NUM_THREADS
                    full = key if key.isupper() else prefix + key
                    # `def default(**kwargs): return Scheduling(**{"cpu": 16, **kwargs})`: the caller's
                    # own keywords, meant to replace the literal default
                    varkw = self.function().varkw
                    callers = bool(later) and bool(varkw) and all(m == varkw for m in later)
                    self.emit("define", k, full, lit, via="dict", kwargs_after=later or None,
                              callers_kwargs=callers or None)
            if k is not None:
                self.visit(k)
            self.visit(v)


def _settings_keywords(call: ast.Call) -> tuple[str | None, int]:
    """(handle, count) of the keywords of CALL whose values read one settings handle
    (`batch_size=args.batch_size`, `seed=int(args.seed)`, `port=args.port or 9999`): the call is built from the user's
    settings, so a literal count beside them is one nobody can set."""
    roots: dict[str, int] = {}
    for k in call.keywords:
        value = k.value
        # (`port=cfg.port if cfg.port else 9999`, `port=cfg.port or 9999`: the setting, or a fallback)
        if isinstance(value, ast.IfExp):
            value = value.body
        elif isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            value = value.values[0]
        if isinstance(value, ast.Call) and len(value.args) == 1 and getattr(value.func, "id", "") in CASTS:
            value = value.args[0]
        if k.arg and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and HANDLE.match(value.value.id) \
                and value.value.id.strip("_").lower() != "kwargs":
            roots[value.value.id] = roots.get(value.value.id, 0) + 1
    if not roots:
        return None, 0
    root = max(roots, key=lambda r: roots[r])
    return root, roots[root]


def is_literal_or_field(node: ast.AST) -> bool:
    if literal(node) is not NOT_LITERAL:
        return True
    if isinstance(node, ast.Call):
        leaf = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return leaf in FIELD_CALLS
    return False


def is_thread_var(name: str) -> bool:
    return name.upper().endswith("_THREADS") or name.upper() == "TOKENIZERS_PARALLELISM"


def _note_stated(detail: dict, text: str | None) -> None:
    """`help_default`: the default a flag's or field's help text states (QG103 compares it)."""
    stated = stated_default(text or "")
    if stated is not None:
        detail["help_default"] = stated
    if text and UNUSED_HELP.search(text):
        detail["said_unused"] = True  # `help="Not used. Added for compatibility with generic server"`

"""Python extraction: one `ast.parse` and one visitor pass per file -> knob sites.

Never imports or executes the scanned code. What each idiom yields, and the keys it writes
into ``Site.detail``, is documented in docs/extract-python.md. Consumers (parallel backends)
come from the data catalogue rules/consumers.yaml (auditor.extract.py_catalogue).
"""

from __future__ import annotations

import ast
import re
import symtable
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from auditor.extract import FileResult, ParseError
from auditor.extract import py_catalogue
from auditor.extract.py_consume import ConsumeMixin, pool_name
from auditor.extract.py_context import Context
from auditor.extract.py_defines import DefineMixin, absl_flag, help_counted_flags, is_thread_var
from auditor.extract.py_facts import POOL_METHODS, Facts
from auditor.extract import py_commented, py_dead, py_launch, py_namespace, py_parts, py_splits, tool_threads
from auditor.extract.py_shadow import ShadowMixin
from auditor.flow import local as flow_local
from auditor.extract.py_refs import (
    CASTS, CPU_COUNT, HANDLE, HELP_COUNTS, NOT_LITERAL, Source, base_name, chain, const_str, documented_params, getter_default,
    getter_key,
    json_safe, literal, numeric_looking, own_nodes, range_arg, split_count, stated_default, strip_handles, uncast,
    walk,
)
from auditor.keys import CONFIG_CLASS, fed_field, holder
from auditor.model import Site

THREAD_CLASSES = {"threading.Thread", "threading.Timer"}
MAIN_FUNCTIONS = {"main", "train", "_main", "_train", "cli_main"}
UNWRAP_CALLS = {"min", "max", "int", "float", "str", "bool", "dict", "deepcopy", "copy.deepcopy", "to_container",
                "create", "to_object"}
# Environment libraries that vectorize natively (on GPU / in C++): a serial sampler loop in
# front of them is the intended setting, not a fallback. Matched on any component of an import.
NATIVE_VECTOR_ENVS = frozenset({"brax", "isaacgym", "isaacgymenvs", "isaaclab", "omni", "envpool", "gymnax",
                                "mujoco_playground", "mjx", "jumanji", "madrona", "mani_skill", "warp", "pgx",
                                "craftax", "navix", "xminigrid"})
CONFIG_ROOT = re.compile(r"cfg|conf|config|args|opt|param|setting|hparam|flags|kwargs", re.IGNORECASE)
# a call that computes a count for the job: get_gpu_count_for_vllm(...), num_workers_for(...)
COUNTING_CALL = re.compile(r"(count|num_|_num|gpus|workers|procs|world_size|parallel)", re.IGNORECASE)
CONFIG_ATTR = re.compile(r"(^|_)(cfg|cfgs|config|configs|conf|args|kwargs|options|opts|params|hparams|settings)$", re.IGNORECASE)
WORKER_ID = re.compile(r"^(thread|worker|shard|actor)_?(id|idx|index)$", re.IGNORECASE)
# a function writing this many literals into one object's attributes is a configuration in code
SETTINGS_BLOCK = 6
MAX_SECTIONS = 200  # config sections recorded per file
MAX_CHAIN = 6  # names of a key kept in meta["holder_chains"]
MAX_REACHES = 300  # names a function calls or passes on, recorded for the call graph
# a class that holds a run's settings (InferenceConfig, TrainingArguments, RLHParams)
MAX_SIZED = 200  # sized loops in methods recorded per file
# a YAML file a script names, in code or in its usage text (`--config apps/sft/llama3_8b.yaml`,
# `os.path.join(here, "configs", "grpo.yaml")`)
CONFIG_FILE_NAME = re.compile(r"(?<![\w./-])([\w./-]{1,200}\.ya?ml)\b")
MAX_CONFIG_NAMES = 50
HOLDERS_MAX = 100  # settings objects recorded per function that leaves a count serial


@dataclass
class Frame:
    """One function (or the module, or a class body) being visited."""

    qualname: str  # "<module>", "Trainer.__init__", "make_env._init"
    kind: str  # module | function | class
    cls: str = ""  # enclosing class qualname, for self.method resolution
    params: dict[str, ast.AST | None] = field(default_factory=dict)
    bound: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> knob key it holds
    backends: dict[str, list] = field(default_factory=dict)  # local name -> [(Consumer, condition)]
    sized: dict[str, str] = field(default_factory=dict)  # local list name -> knob giving its length
    parts: dict[str, ast.AST] = field(default_factory=dict)  # `chunks = np.array_split(files, n)`: chunks -> n
    consts: dict[str, int] = field(default_factory=dict)  # local name -> the int literal it was bound to, once
    instances: dict[str, ast.AST] = field(default_factory=dict)  # local name -> the class it was built from
    conds: list[str] = field(default_factory=list)  # enclosing if-tests, innermost last
    ifs: list[tuple] = field(default_factory=list)  # (if node, in its body) around the statement, innermost last
    loops: list[ast.AST] = field(default_factory=list)  # range(...) arguments of enclosing loops
    varkw: str = ""  # the `**kwargs` parameter's name
    calls: set[str] = field(default_factory=set)  # called names, for the pool-use facts
    reaches: set[str] = field(default_factory=set)  # called names and functions passed on (target=fn): the call graph
    flags: dict[str, Any] = field(default_factory=dict)  # local -> the literal bool it was set to once (None: reset)
    dead: int = 0  # inside a branch a literal flag rules out (`if_single_process = True` ... else:)
    displays: dict[str, list] = field(default_factory=dict)  # local dict displays' knob entries (QG110)
    loop_depth: int = 0  # for-loops around the statement being visited
    computed: dict[str, str] = field(default_factory=dict)  # local -> the counting call it was first set by
    bound_since_entry: set[str] = field(default_factory=set)  # knob-named names assigned in this function
    # local kwargs mappings: name -> {key: (conditions when written, value node)} for `**name` calls
    mapkeys: dict[str, dict[str, tuple]] = field(default_factory=dict)
    merged: dict[str, tuple[int, str]] = field(default_factory=dict)  # local -> (line, call) filling it from the caller's settings
    merges: list[tuple[str, int, str]] = field(default_factory=list)  # every such merge: (local, line, call)


def caps_a_count(value: ast.AST) -> bool:
    """`min(n, 4)` somewhere in a returned expression: a small literal bound on a count."""
    for node in walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "min" \
                and any(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
            return True
    return False


def default_branch(node: ast.IfExp) -> int | None:
    """Which branch of `A if TEST else B` only fills in an unset value (0: A, 1: B): in `int(n)
    if n is not None else cpu_count()` B does, in `cpu_count() if n is None else n` A does. The
    other branch must use n itself, and the default must be computed, not another setting kept
    (`len(devices) * nnodes if devices else cfg.device_num` recomputes device_num). None for any
    other test (`0 if iterable else n` forces a value)."""
    test = node.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test
    if not (isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.comparators[0], ast.Constant)
            and inner.comparators[0].value is None and isinstance(inner.ops[0], (ast.Is, ast.IsNot))):
        return None
    unset = 0 if isinstance(inner.ops[0], ast.Is) != negated else 1
    kept, default = (node.orelse, node.body) if unset == 0 else (node.body, node.orelse)
    if isinstance(default, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    return unset if ast.unparse(inner.left) in ast.unparse(kept) else None


class Extractor(ConsumeMixin, DefineMixin, ShadowMixin, ast.NodeVisitor):
    def __init__(self, text: str, path: str, vocab):
        self.src = Source(text)
        self.path = path
        self.vocab = vocab
        self.cat = py_catalogue.load()
        self.sites: list[Site] = []
        self.imports: dict[str, str] = {}
        self.star_imports = False  # `from .utils import *`: names this file never imports may be bound
        # (function, target name, value, (n, k)) of `n // k` / `int(n / k)` handed on as an argument or
        # bound to a name
        self.split_candidates: list[tuple] = []
        self.frames = [Frame("<module>", "module")]
        self.fn_frames = [self.frames[0]]  # function() of each depth of frames: asked ~300 times a file
        self.facts = Facts()
        self.meta: dict[str, Any] = {}
        self.imports_ray = False
        self.torch_imported_at: int | None = None  # the first module-level `import torch`
        # this file's flags that count workers by their help text, and the dests of flags an
        # alias of which names a setting (`--no-subproc` with dest `subproc`)
        self.help_named: set[str] = set()
        self.flag_holders: dict[str, str] = {}  # NUM_ACTORS = flags.DEFINE_integer("num_actors", ...)
        self.cpu_words = "cpu_count" in text or "sched_getaffinity" in text
        self.tree = None  # set by extract(); py_context.Context is built from it when first needed
        self.in_message = 0  # > 0 while visiting an assertion's message or a raised exception
        self._ctx = None
        self.self_modules: dict[tuple, str] = {}  # (class, attribute) -> module it holds (self.ctx = get_context())
        self.flow_sinks: list[tuple] = []  # (site index, count argument, function): auditor.flow.local
        self.flow_calls: list[tuple] = []  # (function, class, call) of calls that are no backend
        self.flow_defs: list[tuple] = []  # functions, classes, imports in visiting order
        self.flow_sized: list[tuple] = []  # (method qualname, range(...) argument): what a class sizes
        self.flow_starts: dict[str, str] = {}  # class qualname -> a worker-starting call in its methods
        self.flow_unused: set[str] = set()  # functions with a knob parameter their body never reads
        self._attribute_loads: tuple | None = None  # py_dead.loads of the file, when a method stores a knob
        self.flow_returns: list[tuple] = []  # (function, returned expression) of helpers that cap a count
        self.class_bases: list[str] = []  # the bases of the class whose body is being visited
        self._assigning: str | None = None  # the name an Assign being visited binds
        # (class, attribute) -> the section of the configuration it holds (`self.jaxcfg = config.jax`)
        self.section_attributes: dict[tuple[str, str], str] = {}
        self._binding: str | None = None  # the name or attribute whose value is being visited (`eval_env = ...`)
        self.sections: set[str] = set()  # config sections this file reads keys of (rules cite them)
        self.settings_root: str | None = None  # the first settings object read here (`args`, `self.cfg`)
        self.instance_reads: set[str] = set()  # knob-named instance attributes read here (`self.num_envs`)
        self.holder_reads: dict[str, set[str]] = {}  # "Class|self.config" -> first keys read through it, no default
        self.holder_chains: dict[str, set[str]] = {}  # "Class|self.config" -> the keys read through it
        self.reaches: dict[str, list[str]] = {}  # function -> what it calls or passes on (QG101's paths)
        self.parses: list[dict] = []  # settings classes handed to a parser here (HfArgumentParser((A, B)))

    # ---- a faster walk: cached dispatch, no visits of leaves and contexts ------------------------
    def visit(self, node: ast.AST) -> None:
        cls = node.__class__
        method = _DISPATCH.get(cls)
        if method is None:
            method = self._method(cls)
        method(self, node)

    def _method(self, cls: type):
        method = _DISPATCH[cls] = getattr(type(self), "visit_" + cls.__name__, None) or type(self).generic_visit
        return method

    def generic_visit(self, node: ast.AST) -> None:
        # visit()'s dispatch inlined: one Python call per child instead of two (~900k children)
        dispatch = _DISPATCH
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    cls = item.__class__
                    if cls not in _LEAVES and isinstance(item, ast.AST):
                        (dispatch.get(cls) or self._method(cls))(self, item)
            else:
                cls = value.__class__
                if cls not in _LEAVES and isinstance(value, ast.AST):
                    (dispatch.get(cls) or self._method(cls))(self, value)

    def visit_Name(self, node: ast.Name) -> None:
        pass

    visit_Constant = visit_Name

    def visit_Assert(self, node: ast.Assert) -> None:
        self.visit(node.test)
        if node.msg is not None:
            self.visit_message(node.msg)

    def visit_Raise(self, node: ast.Raise) -> None:
        for part in (node.exc, node.cause):
            if part is not None:
                self.visit_message(part)

    def visit_message(self, node: ast.AST) -> None:
        """An assertion's message or a raised exception: a value read there is shown, never
        used, so its fallback (`os.environ.get("X", "not set")`) is no setting's default."""
        self.in_message += 1
        self.visit(node)
        self.in_message -= 1

    # ---- emission ---------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def function(self) -> Frame:
        """The innermost frame that is no class body (the module at worst)."""
        return self.fn_frames[-1]

    def match(self, key: str) -> str | None:
        if not key:
            return None
        leaf = key.rsplit(".", 1)[-1]
        if leaf in self.help_named:
            return "exact"
        return self.match_vocabulary(leaf)

    def match_vocabulary(self, key: str) -> str | None:
        """match() by the vocabulary alone, not by this file's help-named flags."""
        return self.vocab.match(key.rsplit(".", 1)[-1])

    def emit(self, role: str, node: ast.AST, key: str, value: Any = None, default: Any = None,
             **detail: Any) -> Site:
        fn = self.function()
        conds = fn.conds
        d = {"match": self.match(key), "function": fn.qualname}
        if conds:
            d["condition"] = " and ".join(conds)
        if self.in_main():
            d["in_main"] = True
        inner = detail.get("condition")
        if conds and inner and inner not in conds:  # an IfExp's test inside an if: both hold
            detail = {**detail, "condition": f"{d['condition']} and {inner}"}
        d.update({k: json_safe(v) for k, v in detail.items() if v is not None})
        if self.tree is not None and role in ("override", "consume"):
            self.add_context(role, node, key, d)
        elif role == "read" and self.in_message:
            d["in_message"] = True
        elif self.tree is not None and role == "read" and default is not None:
            m = re.match(r"\s*(\w+)\s*(:[^=]+)?=[^=]", self.src.line(node.lineno))
            rejected = self.ctx.rejects(node.lineno, m.group(1), default) if m else None
            if rejected:
                d["fallback_rejected"] = rejected
            root = d.get("root")
            loaded = self.ctx.loaded_from(node.lineno, root) if isinstance(root, str) and root.isidentifier() else None
            if loaded:
                d["loaded_from"] = loaded
        if role == "read" and self._binding:
            d["bound_to"] = self._binding  # `valid_loader = build(ds, args.num_workers)`: what the value is for
        site = Site(role=role, file=self.path, line=node.lineno, column=self.src.column(node), key=key,
                    value=json_safe(value), default=json_safe(default), source=self.src.line(node.lineno),
                    kind="python", detail=d)
        self.sites.append(site)
        return site

    @property
    def ctx(self) -> Context | None:
        if self._ctx is None and self.tree is not None:
            # src.text, not self.text: a bound method would make a cycle that keeps the whole
            # tree alive until the cyclic collector runs (and scans it)
            self._ctx = Context(self.tree, self.src.text, self.src.lines)
        return self._ctx

    def gate(self, fn: Frame) -> dict | None:
        """The innermost `if a and b:` whose body holds this consumer and which has an else
        branch: the consumer runs only when every conjunct holds, the else branch otherwise
        (`if args.num_workers > 1 and not auto_sparse: pool ... else: sequential`)."""
        if not fn.ifs:
            return None
        node, in_body = fn.ifs[-1]
        if not in_body or not node.orelse or not isinstance(node.test, ast.BoolOp) \
                or not isinstance(node.test.op, ast.And):
            return None
        return {"line": node.lineno, "column": node.col_offset + 1, "else_line": node.orelse[0].lineno,
                "conjuncts": [self.text(v) for v in node.test.values]}

    def add_context(self, role: str, node: ast.AST, key: str, d: dict) -> None:
        """What surrounds an override or consumer (auditor.extract.py_context): facts for precision."""
        line = node.lineno
        if role == "override":
            target = d.get("target") or key
            log = self.ctx.logged(line, target) or self.ctx.logged(line, key)
            if log:
                d["logged"] = log if len(log) <= 120 else log[:117] + "..."
            if d.get("how") == "literal":
                written = self.text(node)
                later = self.ctx.reassigned(line, written)
                if later:
                    d["reassigned"] = later
                saved = self.ctx.saved_before(line, written)
                if saved:
                    d["saved_in"] = saved
                root = re.match(r"\s*([A-Za-z_]\w*)\.\w+\.", written)
                if root and not d.get("condition"):
                    n = self.ctx.settings_written(line, root.group(1))
                    if n >= SETTINGS_BLOCK:
                        d["settings_written"] = n
        else:
            guard = self.ctx.asserted_one(line, (key, d.get("param") or ""))
            if guard:
                d["asserted_one"] = guard
            check = self.ctx.checked_after(line)
            if check:
                d["checked_after"] = check
            fn = self.function()
            gate = self.gate(fn)
            if gate:
                d["gate"] = gate
            if fn.kind == "function" and any(WORKER_ID.match(p) for p in fn.params):
                d["in_worker"] = True  # def run_shard(self, thread_id): a worker body (py_facts finds targets)
            # vec_cls = Async if use_async else Sync, or `if asynchronous: Async(...) else: Sync(...)`
            # (the innermost test), with the flag a parameter whose default picks one of them
            chooser = d.get("backend_condition") or (fn.conds[-1] if role == "consume" and fn.conds else "")
            if role == "consume" and d.get("condition"):
                # `if num_env == 1 or not use_subprocess:` with `use_subprocess=False`: what the
                # test gives for many items when the caller leaves the parameters at their defaults
                defaults = {p: v for p, node in fn.params.items() if node is not None
                            and re.search(rf"\b{re.escape(p)}\b", d["condition"])
                            and (v := literal(node)) is not NOT_LITERAL and (v is None or isinstance(v, (bool, int)))}
                if defaults:
                    d["cond_defaults"] = defaults
            m = re.fullmatch(r"(not \()?(\w+)\)?", chooser)
            if m and m.group(2) in fn.params and fn.params[m.group(2)] is not None:
                v = literal(fn.params[m.group(2)])
                if isinstance(v, bool):
                    d["choice_default"] = {m.group(2): v}
                    if not d.get("backend_condition"):
                        d["choice_condition"] = chooser

    def enter_class(self, qualname: str) -> None:
        self.frames.append(Frame(qualname, "class", cls=qualname))
        self.fn_frames.append(self.fn_frames[-1])

    def leave_frame(self) -> None:
        self.frames.pop()
        self.fn_frames.pop()

    def in_main(self) -> bool:
        if any(f.kind == "function" and f.qualname.rsplit(".", 1)[-1] in MAIN_FUNCTIONS for f in self.frames):
            return True
        return any("__name__" in c and "__main__" in c and not c.startswith("not (") for c in self.frames[0].conds)

    def text(self, node: ast.AST) -> str:
        return self.src.text(node)

    # ---- names and keys ---------------------------------------------------------------------
    def qual(self, node: ast.AST) -> str | None:
        """Fully qualified name of a callable/class reference through imports and aliases."""
        if isinstance(node, ast.Name):
            if node.id in self.imports:
                return self.imports[node.id]
            for f in reversed(self.frames):
                if node.id in f.aliases and f.aliases[node.id].startswith("module:"):
                    return f.aliases[node.id][len("module:"):]
            if self.star_imports and node.id in self.cat.roots and \
                    not any(node.id in f.aliases or node.id in f.bound or node.id in f.params for f in self.frames):
                # `from .utils import *` where utils imports multiprocessing: a backend's package
                # name the file never binds itself is that package
                return node.id
            return None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self" and self.self_modules:
                module = self.self_modules.get((self.function().cls, node.attr))
                if module:
                    return module
            base = self.qual(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            q = self.qual(node.func)
            return py_catalogue.CONTEXT_FACTORIES.get(q) if q else None
        return None

    def key_of(self, node: ast.AST) -> tuple[str | None, str]:
        """(dotted key, root text) of a reference chain, handles stripped; (None, "") if none."""
        if isinstance(node, ast.Call) and getter_key(node) is None:
            return None, ""
        parts, root = chain(node)
        if isinstance(root, ast.Name):
            alias = self.alias(root.id)
            if alias == "" and parts:  # cfg = self.config: the root handle itself
                return ".".join(strip_handles(parts)), root.id
            if alias and not alias.startswith("module:"):
                return ".".join([alias, *parts]) if parts else alias, root.id
            if not parts:
                return root.id, root.id
            if root.id in ("self", "cls"):
                section = self.section_attributes.get((self.function().cls, parts[0])) if len(parts) > 1 else None
                if section:
                    return ".".join([section, *parts[1:]]), f"{root.id}.{parts[0]}"
                return ".".join(strip_handles(parts)), f"{root.id}.{parts[0]}"
            return ".".join(strip_handles(parts)), root.id
        if not parts:
            return None, ""
        return ".".join(parts), self.text(root)

    def alias_key(self, value: ast.AST) -> str | None:
        """What a local bound to VALUE stands for: "" for the configuration root itself
        (cfg = self.config), a key (data_cfg = cfg.data), or None (instance state such as
        wg = self.actor_wg, or anything else)."""
        if isinstance(value, (ast.Attribute, ast.Subscript)):
            parts, root = chain(value)
            if isinstance(root, ast.Name) and root.id in ("self", "cls") and parts:
                if not HANDLE.match(parts[0]):
                    return None  # instance state: wg = self.actor_wg
                if all(HANDLE.match(p) for p in parts):
                    return 
            if isinstance(root, ast.Name) and parts and all(HANDLE.match(p) for p in parts) \
                    and self.alias(root.id) in (None, ""):
                return ""
        return self.ref_key(value)

    def alias(self, name: str) -> str | None:
        for f in reversed(self.frames):
            if name in f.aliases:
                return f.aliases[name]
            if f.kind == "function" and (name in f.params or name in f.bound):
                return None  # a local that holds no known key
        return None

    def env_var(self, node: ast.AST) -> str | None:
        """`os.environ["X"]` -> "X"."""
        if isinstance(node, ast.Subscript) and self.qual(node.value) == "os.environ":
            return const_str(node.slice)
        return None

    def ref_key(self, node: ast.AST | None, knob_only: bool = False) -> str | None:
        """The key an expression carries: a chain's key, a Name's alias or name, an env var,
        or the key inside min()/int()/OmegaConf.to_container()/IfExp/range()/a comprehension."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            key = self.alias(node.id)
            if key == "" or (key and key.startswith("module:")):
                return None
            key = key or node.id
        elif isinstance(node, ast.Call) and self.environ_get(node):
            key = const_str(node.args[0])
        elif isinstance(node, (ast.Attribute, ast.Subscript)) or (isinstance(node, ast.Call) and getter_key(node)):
            key = self.env_var(node) or self.key_of(node)[0]
        elif isinstance(node, ast.Call):
            name = self.qual(node.func) or (node.func.attr if isinstance(node.func, ast.Attribute) else
                                           getattr(node.func, "id", ""))
            if name not in UNWRAP_CALLS and name.rsplit(".", 1)[-1] not in UNWRAP_CALLS:
                return None
            for arg in node.args:
                key = self.ref_key(arg, knob_only=True)
                if key:
                    return key
            return None if knob_only or not node.args else self.ref_key(node.args[0])
        elif isinstance(node, ast.IfExp):
            return self.ref_key(node.body, True) or self.ref_key(node.orelse, True)
        elif isinstance(node, ast.Dict):
            return next((self.ref_key(v) for k, v in zip(node.keys, node.values) if k is None), None)
        else:
            return None
        if knob_only and key and not self.match(key):
            return None
        return key

    def environ_get(self, node: ast.Call) -> bool:
        q = self.qual(node.func)
        return q in ("os.environ.get", "os.getenv") and bool(node.args) and const_str(node.args[0]) is not None

    def thread_var(self, name: str) -> dict:
        """An OpenMP/BLAS thread variable, and the line of the module-level `import torch` that ran
        before it is set: torch's OpenMP runtime read its thread count then, so the setting no
        longer acts on this process (only on the processes it starts afterwards)."""
        if not is_thread_var(name):
            return {"thread_var": False}
        return {"thread_var": True, "after_import": self.torch_imported_at}

    # ---- imports ------------------------------------------------------------------------------
    def torch_import(self, node: ast.AST, module: str) -> None:
        if module.split(".", 1)[0] == "torch" and self.torch_imported_at is None and self.frame.kind == "module":
            self.torch_imported_at = node.lineno

    def visit_Import(self, node: ast.Import) -> None:
        self.flow_defs.append(("import", node))
        for a in node.names:
            self.torch_import(node, a.name)
            if a.asname:
                self.imports[a.asname] = a.name
            else:
                root = a.name.split(".", 1)[0]
                self.imports[root] = root
            self.imports_ray |= a.name.split(".", 1)[0] == "ray"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.flow_defs.append(("import", node))
        self.star_imports |= any(a.name == "*" for a in node.names)
        if node.level or not node.module:
            return  # relative imports name the project's own modules
        self.imports_ray |= node.module.split(".", 1)[0] == "ray"
        self.torch_import(node, node.module)
        for a in node.names:
            self.imports[a.asname or a.name] = f"{node.module}.{a.name}"

    # ---- scopes ---------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.frame
        qualname = node.name if outer.kind == "module" else f"{outer.qualname}.{node.name}"
        documented = None  # the docstring's parameter lines, read once for all click options
        for dec in node.decorator_list:
            self.visit(dec)
            target = dec.func if isinstance(dec, ast.Call) else dec
            q = self.qual(target)
            if q in ("ray.remote",):
                self.facts.workers.add(qualname)
            if q == "click.option" and isinstance(dec, ast.Call):
                documented = documented_params(node) if documented is None else documented
                self.add_argument(dec, via="click", documented=documented)
            if q in ("hydra.main",) and isinstance(dec, ast.Call):
                self.meta.setdefault("hydra_main", []).append(
                    {"line": dec.lineno, "function": qualname, **{k.arg: literal(k.value) for k in dec.keywords
                                            if k.arg and literal(k.value) is not NOT_LITERAL}})
        args = node.args
        positional = args.posonlyargs + args.args
        defaults: dict[str, ast.AST | None] = {a.arg: None for a in positional + args.kwonlyargs}
        for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            defaults[a.arg] = d
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            defaults[a.arg] = d
        for d in defaults.values():
            if d is not None:
                self.visit(d)
        if re.search(r"(^|_)worker(_|$)", node.name):
            self.facts.workers.add(qualname)
        cls = outer.qualname if outer.kind == "class" else outer.cls
        frame = Frame(qualname, "function", cls=cls, params=defaults)
        self.flow_defs.append(("def", node, qualname, cls, outer.kind == "class"))
        if args.vararg:
            frame.params[args.vararg.arg] = None
        if args.kwarg:
            frame.params[args.kwarg.arg] = None
            frame.varkw = args.kwarg.arg
        self.frames.append(frame)
        self.fn_frames.append(frame)
        # a caller's positional arguments skip `self` / `cls`
        skip = 1 if outer.kind == "class" and positional and positional[0].arg in ("self", "cls") else 0
        for i, a in enumerate(positional + args.kwonlyargs):
            d = defaults[a.arg]
            if d is not None and self.match(a.arg):
                value = literal(d)
                stated = None
                if isinstance(value, int) and not isinstance(value, bool):
                    # `num_workers (int): ... Default, 12.` over `num_workers=4`
                    documented = documented_params(node) if documented is None else documented
                    stated = stated_default(documented.get(a.arg, ""))
                self.emit("read", a, a.arg, default=None if value is NOT_LITERAL else value, via="param",
                          expr=self.text(d) if value is NOT_LITERAL else None,
                          position=i - skip if i < len(positional) else None, help_default=stated)
        first_site = len(self.sites)
        for stmt in node.body:
            self.visit(stmt)
        self.mark_returned(node, first_site)
        self.mark_merged_after(frame, first_site)
        self.shadow_parameters(node)
        self.leave_frame()
        self.facts.calls[qualname] = frame.calls
        self.reaches[qualname] = sorted(frame.reaches)  # also a function that calls nothing: a node
        if "dataclasses.fields" in frame.reaches and "setattr" in frame.reaches:
            # `for f in fields(cfg): setattr(args, f.name, getattr(cfg, f.name))`: every field of
            # the settings class it is given goes on to another object (Megatron's args)
            types = sorted({self.text(a.annotation).rsplit(".", 1)[-1] for a in positional + args.kwonlyargs
                            if a.annotation is not None})
            self.meta.setdefault("field_copiers", []).append({"function": qualname, "types": types})

    visit_AsyncFunctionDef = visit_FunctionDef

    def mark_returned(self, node: ast.AST, first_site: int) -> None:
        """`rl_config.num_envs = 2048 ... return rl_config`: a function that builds settings and
        hands them back; its writes are consumed by its caller, not by what it calls itself."""
        written = [s for s in self.sites[first_site:] if s.role == "override" and s.detail.get("target")]
        if not written:
            return
        returned = {n.id for stmt in own_nodes(node.body) if isinstance(stmt, ast.Return) and stmt.value is not None
                    for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        for s in written:
            if _target_root(s) in returned:
                s.detail["returned"] = True

    def mark_merged_after(self, frame: Frame, first_site: int) -> None:
        """`cfg.DATALOADER.NUM_WORKERS = 0` then `cfg.merge_from_list(args.opts)` (detectron2's
        tools): a value written before the user's settings are merged in is a default they
        can still override, not an override of theirs."""
        if not frame.merges:
            return
        for s in self.sites[first_site:]:
            if s.role != "override" or not s.detail.get("target"):
                continue
            root = _target_root(s)
            later = next((m for m in frame.merges if m[0] == root and m[1] > s.line), None)
            if later is not None:
                s.detail["merged_after"] = f"`{later[2]}` at line {later[1]}"

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)

    def visit_Return(self, node: ast.Return) -> None:
        """`return max(min(cpus // 2, 4), 1)`: a helper that caps a count; the flow layer puts
        what it returns in place of the calls to it (a thread count, a worker count)."""
        frame = self.fn_frames[-1]
        if node.value is not None and frame.kind == "function" and caps_a_count(node.value):
            self.flow_returns.append((frame.qualname, node.value))
        self.generic_visit(node)

    # ---- control flow ---------------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        self.shadow_fill(node)
        if node.orelse:
            self.record_switch(node)
        self.visit(node.test)
        test = self.text(node.test)
        fn = self.function()
        flag = fn.flags.get(node.test.id) if isinstance(node.test, ast.Name) else None
        fn.conds.append(test)
        fn.ifs.append((node, True))
        fn.dead += flag is False
        for stmt in node.body:
            self.visit(stmt)
        fn.dead -= flag is False
        fn.ifs.pop()
        fn.conds.pop()
        if node.orelse:
            fn.conds.append(f"not ({test})")
            fn.ifs.append((node, False))
            fn.dead += flag is True
            for stmt in node.orelse:
                self.visit(stmt)
            fn.dead -= flag is True
            fn.ifs.pop()
            fn.conds.pop()

    def visit_Match(self, node) -> None:
        """`match kind: case VecType.DUMMY: ...`: each case body runs under `kind == VecType.DUMMY`."""
        self.visit(node.subject)
        subject = self.text(node.subject)
        fn = self.function()
        for case in node.cases:
            pattern = self.text(case.pattern.value) if isinstance(case.pattern, ast.MatchValue) else None
            if pattern:
                fn.conds.append(f"{subject} == {pattern}")
            if case.guard is not None:
                self.visit(case.guard)
            for stmt in case.body:
                self.visit(stmt)
            if pattern:
                fn.conds.pop()

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        fn = self.function()
        loop = self.loop_count(node.iter)
        if loop is not None:
            fn.loops.append(loop)
            self.sized_loop(loop)
        fn.loop_depth += 1
        for stmt in node.body:
            self.visit(stmt)
        fn.loop_depth -= 1
        if loop is not None:
            fn.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def loop_count(self, iterable: ast.AST) -> ast.AST | None:
        """N of `range(N)`, or of `enumerate(chunks)` / `chunks` where `chunks =
        np.array_split(files, N)`: one turn per part, and one worker per turn when the loop
        starts one."""
        count = range_arg(iterable)
        if count is not None:
            return count
        if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", "") == "enumerate" and iterable.args:
            iterable = iterable.args[0]
        if isinstance(iterable, ast.Name):
            return next((f.parts[iterable.id] for f in reversed(self.fn_frames) if iterable.id in f.parts), None)
        return split_count(iterable)

    def sized_loop(self, count: ast.AST) -> None:
        """`for i in range(self.n_workers)` in a method: what the class makes N of (the flow
        layer decides whether N comes from a parameter and what the class does with it)."""
        fn = self.function()
        name = count.id if isinstance(count, ast.Name) else count.attr if isinstance(count, ast.Attribute) else ""
        # the count names what it counts (n_workers, self.num_envs), not num_examples or a batch
        if fn.cls and fn.kind == "function" and name and self.match(name) == "exact" \
                and len(self.flow_sized) < MAX_SIZED:
            self.flow_sized.append((fn.qualname, count))

    def visit_comprehension_node(self, node: ast.AST, elts: list[ast.AST]) -> None:
        fn = self.function()
        loops = [r for g in node.generators if (r := self.loop_count(g.iter)) is not None]
        for r in loops:
            self.sized_loop(r)
        for g in node.generators:
            self.visit(g.iter)
            for cond in g.ifs:
                self.visit(cond)
        fn.loops.extend(loops)
        for e in elts:
            self.visit(e)
        del fn.loops[len(fn.loops) - len(loops):]

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self.visit_comprehension_node(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self.visit_comprehension_node(node, [node.key, node.value])

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if isinstance(item.optional_vars, ast.Name):
                self.bind_pool(item.optional_vars.id, item.context_expr)
                self.function().bound.add(item.optional_vars.id)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    # ---- assignments ------------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        target = node.targets[0]
        outer, self._binding = self._binding, (target.id if isinstance(target, ast.Name) else
                                               target.attr if isinstance(target, ast.Attribute) else None)
        self.visit(node.value)
        self._binding = outer
        self._pass_on(node.value)
        for target in node.targets:
            self._assigning = target.id if isinstance(target, ast.Name) else None
            self.assign(target, node.value)
        self._assigning = None
        self.note_section_attribute(node.targets[0], node.value)
        if isinstance(node.targets[0], ast.Name):
            self.record_copy(node.targets[0].id, node)

    def note_section_attribute(self, target: ast.AST, value: ast.AST) -> None:
        """`self.jaxcfg = config.jax`: the attribute holds a section of the configuration, so
        `self.jaxcfg.assert_num_devices` reads `jax.assert_num_devices` (in this class)."""
        cls = self.function().cls
        if not (cls and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self" and isinstance(value, (ast.Attribute, ast.Subscript))):
            return
        parts, root = chain(value)
        key = self.alias_key(value) if isinstance(root, ast.Name) and root.id not in ("self", "cls") \
            and CONFIG_ROOT.search(root.id) else None
        if key and not key.startswith("module:") and len(self.section_attributes) < MAX_SECTIONS:
            self.section_attributes[(cls, target.attr)] = key
        else:
            self.section_attributes.pop((cls, target.attr), None)

    def _pass_on(self, value: ast.AST) -> None:
        """`runner_cls = SerialRunner if cfg.serial_mode else ParallelRunner`, then
        `runner_cls(cfg)`: the classes (or functions) bound to a name are passed on, as an
        argument `target=fn` is - the call graph's careful reading then knows the path makes them."""
        fn = self.function()
        for v in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
            if len(fn.reaches) >= MAX_REACHES or fn.dead or not isinstance(v, (ast.Name, ast.Attribute)):
                continue
            q = self.qual(v)
            if q or isinstance(v, ast.Name) and v.id[:1].isupper():
                fn.reaches.add(q or v.id)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.assign(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        key = self.target_key(node.target)
        if isinstance(node.target, ast.Name) and not self.match(node.target.id):
            key = None  # a local counter that merely started from a knob
        elif not isinstance(node.target, ast.Name) and (self.own_state(node.target) or self.local_mapping(node.target)):
            key = None  # self._counters["num_workers"] += 1: bookkeeping, not configuration
        if key and self.match(key):
            self.emit("override", node.target, key, None, how="expression", expr=self.text(node),
                      target=self.text(node.target))
        if isinstance(node.target, (ast.Attribute, ast.Subscript)):
            chain_key, root_text = self.key_of(node.target)  # `self.config.micro_batch //= n` reads it first
            if chain_key and CONFIG_ROOT.search(root_text or "") and chain_key != root_text:
                self.holder_read(chain_key, root_text, required=True)
        self.visit_target_children(node.target)

    def target_key(self, target: ast.AST) -> str | None:
        if isinstance(target, ast.Name):
            alias = self.alias(target.id)
            return alias if alias and not alias.startswith("module:") and self.match(alias) else target.id
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            return self.env_var(target) or self.key_of(target)[0]
        return None

    def assign(self, target: ast.AST, value: ast.AST) -> None:
        fn = self.function()
        if isinstance(target, ast.Attribute) and self.attribute_count(target, value):
            return  # an argument of the class built here, no settings object overwritten
        split = py_splits.split_of(value) if isinstance(target, (ast.Name, ast.Attribute)) else None
        if split is not None:
            self.split_candidates.append((fn.qualname, target.id if isinstance(target, ast.Name) else target.attr,
                                          value, split))
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" \
                and fn.cls and isinstance(value, ast.Call) and self.qual(value) == "multiprocessing":
            # `self.ctx = mp.get_context("fork")`, then `self.ctx.Process(target=self._loop)` in
            # another method: the attribute is the multiprocessing module
            self.self_modules[(fn.cls, target.attr)] = "multiprocessing"
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) \
                and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]):
            # `self.fsdp_size, self.num_replica = self.num_gpu, 1`: each target gets its own value
            for elt, val in zip(target.elts, value.elts):
                self.assign(elt, val)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                if isinstance(elt, ast.Name):
                    fn.bound.add(elt.id)
                    fn.aliases.pop(elt.id, None)
                else:
                    self.visit_target_children(elt)
            return
        env = self.env_var(target)
        if env is None and isinstance(target, ast.Subscript) and self.qual(target.value) == "os.environ":
            self.meta["environ_by_name"] = target.lineno  # os.environ[name] = value: a loop over settings
        if env is not None:
            if self.match(env):
                v = literal(value)
                self.emit("override", target, env, None if v is NOT_LITERAL else v, how="environ",
                          backend="os.environ", **self.thread_var(env),
                          expr=self.text(value) if v is NOT_LITERAL else None)
            return
        if isinstance(target, ast.Name):
            self.assign_name(target, value)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id in self.function().mapkeys and const_str(target.slice):
            self.function().mapkeys[target.value.id][const_str(target.slice)] = (tuple(self.function().conds), value)
            self.visit_target_children(target)
            key = self.key_of(target)[0]
            if key and self.match(key):
                self.assign_attr(target, key, value)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self.visit_target_children(target)
            key = self.key_of(target)[0]
            if key and self.match(key):
                self.assign_attr(target, key, value)

    def assign_name(self, target: ast.Name, value: ast.AST) -> None:
        fn = self.function()
        name = target.id
        # a flag set once, unconditionally, to a literal bool; set again (or otherwise): unknown
        known = isinstance(value, ast.Constant) and isinstance(value.value, bool) and name not in fn.flags \
            and not fn.conds and not fn.loops
        fn.flags[name] = value.value if known else None
        earlier = name in fn.bound or name in fn.params
        if not earlier and not fn.conds and not fn.loops and isinstance(value, ast.Constant) \
                and type(value.value) is int:
            fn.consts[name] = value.value
        else:
            fn.consts.pop(name, None)
        knob = self.match(name)
        interesting = knob or (not earlier and isinstance(value, ast.Call) and self.maybe_cap(value))
        how, v, extra = self.classify(value) if interesting else ("", None, {})
        key = self.target_key(target) if earlier and interesting else None
        # what the name holds from now on
        fn.bound.add(name)
        parts = split_count(value)
        if parts is not None:
            fn.parts[name] = parts
        else:
            fn.parts.pop(name, None)
        self.bind_pool(name, value)
        self.remember_display(name, value)
        self.remember_mapping(name, value)
        built = value.func if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) \
            else None
        if built is not None and (built.id if isinstance(built, ast.Name) else built.attr)[:1].isupper() \
                and not earlier:
            fn.instances[name] = built  # `collector = Collector(cfg)`: its methods are the class's
        else:
            fn.instances.pop(name, None)
        backends = self.backend_refs(value)
        if backends:
            fn.backends[name] = backends
        size = self.size_key(value)
        if size:
            fn.sized[name] = size
        else:
            fn.sized.pop(name, None)
        ctx = self.qual(value) if isinstance(value, ast.Call) else None
        if ctx in ("multiprocessing",):
            fn.aliases[name] = "module:multiprocessing"
        else:
            new_key = self.alias_key(value)
            if new_key is not None:
                fn.aliases[name] = new_key
            elif not (earlier and literal(value) is not NOT_LITERAL):
                fn.aliases.pop(name, None)
        if not interesting:
            return
        if not knob and (earlier or how not in ("min", "max", "cpu_count") or not any(
                isinstance(a, (ast.Attribute, ast.Subscript, ast.Call)) and self.ref_key(a, knob_only=True)
                for a in getattr(value, "args", ()))):
            # a local that is no knob (reward_handles = x.reward_workers if c else None), unless it
            # caps a configured value directly: n = min(cfg.num_workers, os.cpu_count())
            return
        if not earlier:
            key = self.target_key(target)
        if not key or not self.match(key):
            return
        conds = fn.conds or extra.get("condition")
        replaces_param = earlier and conds and name in fn.params and name not in fn.bound_since_entry
        if how == "reference" and "backend" not in extra and not replaces_param:
            fn.bound_since_entry.add(name)
            return  # aliasing (n = cfg.num_workers): the read is the site, not this line
        if how == "expression" and not numeric_looking(value):
            return  # target_workers = list(worker_ids): a knob-like name holding no count
        if earlier and name in fn.params and name not in fn.bound_since_entry:
            extra = {**extra, "overrides_param": True}  # the caller's argument itself is replaced
        fn.bound_since_entry.add(name)
        if earlier and how == "literal" and name in fn.computed:
            extra = {**extra, "computed_by": fn.computed[name]}  # num_gpus = count_gpus(...); later = 2
        if not earlier and isinstance(value, ast.Call) and COUNTING_CALL.search(self.text(value.func)):
            fn.computed[name] = f"{self.src.text(value, 60)} at line {value.lineno}"
        if earlier or conds or how in ("min", "max", "cpu_count"):
            self.emit("override", target, key, v, how=how, target=name if key != name else None, **extra)
        elif how == "literal":
            self.emit("define", target, key, v, via="constant" if fn.kind == "module" else "assign")

    def remember_mapping(self, name: str, value: ast.AST) -> None:
        """NAME = {} / {"k": v} / dict(k=v): a kwargs mapping built here, key by key, with the
        conditions each key was written under (a later `**NAME` hands them to a call)."""
        fn = self.function()
        conds = tuple(fn.conds)
        if isinstance(value, ast.Dict) and all(k is not None and const_str(k) for k in value.keys):
            entries = {const_str(k): (conds, v) for k, v in zip(value.keys, value.values)}
        elif isinstance(value, ast.Call) and getattr(value.func, "id", "") == "dict" and not value.args \
                and all(k.arg for k in value.keywords) and not self.shadowed("dict"):
            entries = {k.arg: (conds, k.value) for k in value.keywords}
        else:
            fn.mapkeys.pop(name, None)
            return
        if name in fn.mapkeys and conds:
            # `kwargs = {}` then, under a condition, `kwargs = dict(num_proc=...)`: the keys of
            # either may reach the call
            fn.mapkeys[name] = {**fn.mapkeys[name], **entries}
        else:
            fn.mapkeys[name] = entries

    def attribute_count(self, target: ast.Attribute, value: ast.AST) -> bool:
        """`config.intra_op_parallelism_threads = 1` on `config = tf.ConfigProto()` built in this
        function (or `options.threading.private_threadpool_size = 48` on `tf.data.Options()`): a
        count of a catalogued class set as an attribute of its instance is that class's argument
        (a consume site at the assignment). True when it was one."""
        path, root = [target.attr], target.value
        while isinstance(root, ast.Attribute) and len(path) < 3:  # options.threading.private_threadpool_size
            path.insert(0, root.attr)
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        built = self.function().instances.get(root.id)
        consumer = self.cat.lookup(self.qual(built)) if built is not None else None
        param = ".".join(path)
        if consumer is None or param not in {c.param for c in consumer.counts}:
            return False
        call = ast.copy_location(ast.Call(func=built, args=[], keywords=[
            ast.copy_location(ast.keyword(arg=param, value=value), target)]), target)
        call.end_lineno, call.end_col_offset = target.end_lineno, target.end_col_offset
        self.consume(call, consumer)
        return True

    def update_mapping(self, node: ast.Call) -> None:
        """NAME.update(OTHER) / NAME.update({"k": v}) / NAME.update(k=v) after NAME = {...}: the
        keys join NAME's, under the conditions of the update too (pytorch/examples' `if use_cuda:
        train_kwargs.update(cuda_kwargs)` with `cuda_kwargs = {'num_workers': 1, ...}`). A mapping
        whose keys are not known here leaves NAME's keys unknown from then on."""
        fn = self.function()
        name = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        if name is None or name not in fn.mapkeys:
            return
        conds = tuple(fn.conds)
        entries: dict[str, tuple] = {}
        for arg in node.args:
            if isinstance(arg, ast.Name):
                other = self.visible_mapping(arg.id)
                if other is None:
                    self.replaceable(fn.mapkeys.pop(name), node)
                    return
                entries.update({k: (tuple(dict.fromkeys((*c, *conds))), v) for k, (c, v) in other.items()})
            elif isinstance(arg, ast.Dict) and all(k is not None and const_str(k) for k in arg.keys):
                entries.update({const_str(k): (conds, v) for k, v in zip(arg.keys, arg.values)})
            else:
                self.replaceable(fn.mapkeys.pop(name), node)
                return
        entries.update({k.arg: (conds, k.value) for k in node.keywords if k.arg})
        if any(k.arg is None for k in node.keywords):
            self.replaceable(fn.mapkeys.pop(name), node)
            return
        fn.mapkeys[name] = {**fn.mapkeys[name], **entries}

    def replaceable(self, keys: dict[str, tuple], update: ast.Call) -> None:
        """`args = dict(..., preprocessing_num_workers=16)` then `args.update(json.loads(extra))`
        with keys unknown here: each literal keyword of the mapping is a default that the merged
        mapping may replace (detail ``replaceable_at``, the update's line; QG105)."""
        at = {(v.lineno, self.src.column(v)) for _, v in keys.values() if isinstance(v, ast.Constant)}
        function = self.function().qualname
        for site in self.sites:
            if site.role == "define" and site.detail.get("via") == "keyword" and \
                    (site.line, site.column) in at and site.detail.get("function") == function:
                site.detail["replaceable_at"] = update.lineno

    def visible_mapping(self, name: str) -> dict[str, tuple] | None:
        """The keys of the local mapping NAME, from the innermost frame that built one."""
        return next((f.mapkeys[name] for f in reversed(self.frames) if name in f.mapkeys), None)

    def mapped_arguments(self, node: ast.Call) -> dict[str, tuple]:
        """Keywords a call receives through `**name` of a local mapping built in this function."""
        out: dict[str, tuple] = {}
        for k in node.keywords:
            if k.arg is None and isinstance(k.value, ast.Name):
                for key, (conds, value) in (self.visible_mapping(k.value.id) or {}).items():
                    out.setdefault(key, (conds, value, k.value.id))
        return out

    def assign_attr(self, target: ast.AST, key: str, value: ast.AST) -> None:
        fn = self.function()
        how, v, extra = self.classify(value)
        own_state = self.own_state(target)
        in_init = fn.qualname.endswith(".__init__")
        conds = fn.conds or extra.get("condition")
        if own_state and fn.kind == "function" and not in_init and CONFIG_CLASS.search(fn.cls or "") \
                and how in ("reference", "expression") and conds:
            # a validator of a settings class (`class InferenceConfig(BaseModel)`) rewriting a field
            # under a condition: `if self.vllm.data_parallel_size == 1: self.vllm.data_parallel_size =
            # dp_per_node`. `self` is the configuration there, not instance state
            self.emit("override", target, key, v, how=how, target=self.text(target), config_self=True, **extra)
            return
        if own_state:
            # instance state: only forced scalars and caps count (self.num_workers = 0,
            # self.n = min(n, os.cpu_count())); plumbing, resets to None and computed values do not.
            # A backend switch replaced under a condition does (`if self.default_vec_env_cls is not
            # None: self.vec_env_class = self.default_vec_env_cls`, over the user's --vec-env)
            if how == "reference" and conds and self.vocab.switch(target.attr) is not None if isinstance(
                    target, ast.Attribute) else False:
                self.emit("override", target, key, None, how=how, target=self.text(target), switch=True, **extra)
                return
            if how in ("reference", "expression") or (how == "literal" and v is None):
                return
            if how == "literal" and in_init and not conds:
                self.emit("define", target, key, v, via="attribute", owner=fn.cls or None)
                return
        else:
            root = chain(target)[1]
            copied = isinstance(root, ast.Name) and root.id in fn.merged and how == "literal"
            if self.local_mapping(target) and not copied:
                return  # a local dict being filled (info["world_size"] = ...), not a configuration
            if how == "reference" and isinstance(uncast(value), ast.Name):
                name = uncast(value).id
                default = self.parameter_over_setting(target, name)
                if default is not None:
                    # `def __init__(self, env, cfg, n_rollout_threads=1): cfg.n_rollout_threads =
                    # n_rollout_threads`: the parsed setting is replaced by the caller's argument
                    self.emit("override", target, key, default, how="param", target=self.text(target),
                              param=name, function=fn.qualname, expr=name)
                    return
                if name not in fn.consts:
                    return  # kwargs["num_workers"] = num_workers: passing a local through
                # `num_envs = 9` then `cfg.num_envs = num_envs`: a literal by way of a name
                how, v, extra = "literal", fn.consts[name], {**extra, "via_name": f"{name} = {fn.consts[name]}"}
            merge = fn.merged.get(root.id) if isinstance(root, ast.Name) else None
            if merge is not None and how == "literal":
                extra = {**extra, "merged": f"`{merge[1]}` at line {merge[0]}"}
        self.emit("override", target, key, v, how=how, target=self.text(target), **extra)

    def record_merge(self, node: ast.Call) -> None:
        """`config.merge(kwargs)`, `cfg.update(vars(args))`, `cfg.merge_from_list(opts)`: a local
        settings object filled from what the caller or the command line passed. A literal
        written to one of its fields afterwards replaces the value the user gave."""
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if not isinstance(receiver, ast.Name) or not node.args:
            return
        arg = node.args[0]
        while isinstance(arg, ast.Call) and len(arg.args) == 1 and getattr(arg.func, "id", "") in ("vars", "dict"):
            arg = arg.args[0]  # vars(args), dict(kwargs)
        root = chain(arg)[1] if isinstance(arg, (ast.Attribute, ast.Subscript)) else arg
        fn = self.function()
        if isinstance(root, ast.Name) and root.id != receiver.id and (root.id in fn.params or HANDLE.match(root.id)):
            fn.merged.setdefault(receiver.id, (node.lineno, self.text(node)[:80]))
            fn.merges.append((receiver.id, node.lineno, self.text(node)[:80]))

    def record_copy(self, name: str, node: ast.Assign) -> None:
        """`collector_config = dict(cfg.ray.collector_config)`, `deepcopy(args.env)`,
        `OmegaConf.to_container(cfg.env)`, `{**cfg.data}`, `cfg.env.copy()`: a local copy of a
        section of the settings the function was given. A literal written into it afterwards replaces what the
        user set there, as after a merge."""
        value = node.value
        if isinstance(value, ast.Dict) and len(value.keys) == 1 and value.keys[0] is None:
            source = value.values[0]  # {**cfg.data}
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy" \
                and not value.args:
            source = value.func.value  # cfg.env.copy()
        elif isinstance(value, ast.Call) and len(value.args) == 1 and \
                self.text(value.func).rsplit(".", 1)[-1] in COPYING and not isinstance(value.args[0], ast.Starred):
            source = value.args[0]
        elif isinstance(value, ast.Call) and not value.args and len(value.keywords) == 1 and \
                value.keywords[0].arg is None and self.text(value.func) == "dict":
            source = value.keywords[0].value  # dict(**cfg.data)
        else:
            return
        if not isinstance(source, (ast.Attribute, ast.Subscript)):
            return  # a whole settings object copied (`deepcopy(config)`) is mostly one transformed for export
        root = chain(source)[1]
        # a section of the function's own parameter, named as settings (cfg, config, args): a copy
        # of other data (`dict(stats)`), of a module's table of presets, or of the keyword
        # arguments a factory hands each worker (`inner = dict(kwargs)`) holds no user's value
        fn = self.function()
        if isinstance(root, ast.Name) and root.id != name and root.id in fn.params and \
                not root.id.lower().endswith("kwargs") and (HANDLE.match(root.id) or CONFIG_ROOT.search(root.id)):
            fn.merged.setdefault(name, (node.lineno, self.text(value)[:80]))

    def parameter_over_setting(self, target: ast.AST, name: str) -> int | None:
        """The literal default of NAME when `settings.NAME = NAME` writes a parameter of the
        function, never reassigned, over the same-named field of a settings object the function
        was also given, unconditionally: the user's value cannot survive the call."""
        fn = self.function()
        if fn.kind != "function" or fn.conds or name not in fn.params or name in fn.bound:
            return None
        if not isinstance(target, ast.Attribute) or target.attr != name:
            return None
        base = base_name(chain(target)[1])
        if base is None or base.id not in fn.params or base.id in ("self", "cls"):
            return None
        default = fn.params[name]
        if isinstance(default, ast.Constant) and type(default.value) is int:
            return default.value
        return None

    def own_state(self, target: ast.AST) -> bool:
        """self.num_workers / self._counters[...]: instance state rather than a config object."""
        parts, root = chain(target)
        base = base_name(root)
        if base is None or base.id not in ("self", "cls"):
            return False
        return root is not base or not parts or not HANDLE.match(parts[0])

    def local_mapping(self, target: ast.AST) -> bool:
        """info["world_size"] / summary[k].total_workers: a local object that no name marks
        as configuration (a parameter, a cfg/config/args-like name or an import is one)."""
        base = base_name(chain(target)[1])
        if base is None or base.id in ("self", "cls"):
            return False
        fn = self.function()
        return base.id not in fn.params and not CONFIG_ROOT.search(base.id) and base.id not in self.imports

    def classify(self, value: ast.AST) -> tuple[str, Any, dict]:
        """(how, literal value or None, extra detail) of an assigned value."""
        v = literal(value)
        if v is not NOT_LITERAL and (v is None or isinstance(v, (int, float, str))):
            return "literal", v, {}
        extra: dict[str, Any] = {"expr": self.text(value)}
        if v is not NOT_LITERAL:
            return "expression", None, extra  # a list or dict is no count
        if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and \
                getattr(value.func, "id", "") in CASTS and not self.shadowed(value.func.id):
            how, _, more = self.classify(value.args[0])
            if how == "reference":
                return how, None, {**more, "expr": extra["expr"]}
        if isinstance(value, ast.IfExp):
            unset = default_branch(value)
            if unset is not None:  # `int(n) if n is not None else cpu_count()`: the default fills a gap
                return self.classify(value.orelse if unset == 0 else value.body)
            test = self.text(value.test)
            branches = ((value.body, test), (value.orelse, f"not ({test})"))
            for branch, cond in branches:  # a cap in one branch: min(n, cpu) if n is not None else None
                how, v, more = self.classify(branch)
                if how in ("min", "max", "cpu_count"):
                    return how, v, {**more, "expr": extra["expr"], "condition": cond}
            for branch, cond in branches:  # a forced literal: 0 if iterable else cfg.num_workers
                v = literal(branch)
                if v is not NOT_LITERAL and v is not None:
                    return "literal", v, {**extra, "condition": cond}
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2 and \
                isinstance(value.values[0], (ast.Name, ast.Attribute, ast.Subscript)):
            # `args.num_cpus or os.cpu_count()`: the machine fills in a value left unset (0, None), no cap
            how, _, more = self.classify(value.values[0])
            if how == "reference":
                return how, None, {**more, "expr": extra["expr"]}
        if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)) or (
                isinstance(value, ast.Call) and (getter_key(value) or self.environ_get(value))):
            ref = self.ref_key(value)
            if ref:
                extra["from"] = ref
            backends = self.backend_refs(value)
            if backends:
                extra["backend"] = backends[0][0].backend
            return "reference", None, extra
        if isinstance(value, ast.Call):
            name = self.qual(value.func) or getattr(value.func, "id", "")
            if name in ("min", "max") and not self.shadowed(name):
                if self.function().loop_depth and any(isinstance(a, ast.Name) and a.id == self._assigning
                                                      for a in value.args):
                    extra["accumulates"] = True  # n = max(n, rank + 1) over a loop: a running maximum
                knob = self.ref_key(value, knob_only=True)
                caps = [a for a in value.args if self.ref_key(a, knob_only=True) != knob or knob is None]
                extra["cap"] = ", ".join(self.text(a) for a in caps)
                if any(self.has_cpu_count(a) for a in value.args):
                    extra["cpu_count"] = True
                values = [literal(a) for a in value.args]
                if values and all(x is not NOT_LITERAL for x in values):
                    try:
                        return name, (min if name == "min" else max)(values), extra
                    except TypeError:
                        pass
                return name, None, extra
        if self.has_cpu_count(value):
            extra["cap"] = self.text(value)
            return "cpu_count", None, extra
        return "expression", None, extra

    def shadowed(self, name: str) -> bool:
        return name in self.imports or any(name in f.bound for f in self.frames)

    def maybe_cap(self, call: ast.Call) -> bool:
        return getattr(call.func, "id", "") in ("min", "max") or self.has_cpu_count(call)

    def has_cpu_count(self, node: ast.AST) -> bool:
        if not self.cpu_words:
            return False
        for sub in ast.walk(node):  # one expression, not the module
            if isinstance(sub, ast.Call) and self.qual(sub.func) in CPU_COUNT:
                return True
        return False

    def visit_target_children(self, target: ast.AST) -> None:
        """Visit what a store target reads (subscript indices, call receivers), not the target."""
        node = target
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Subscript):
                self.visit(node.slice)
            node = node.value
        if not isinstance(node, ast.Name):
            self.visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.record_switch(node)
        self.generic_visit(node)

    # ---- reads ------------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.visit_target_children(node)
            return
        self.read_chain(node, "attribute")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.visit_target_children(node)
            return
        env = self.env_var(node)
        if env is not None:
            if self.match(env):
                self.emit("read", node, env, via="environ")
            return
        self.read_chain(node, "subscript")

    def read_chain(self, node: ast.AST, via: str, default: ast.AST | None = None, call: ast.Call | None = None) -> None:
        parts, root = chain(node)
        if parts == ["value"] and isinstance(root, ast.Name) and root.id in self.flag_holders:
            name = self.flag_holders[root.id]  # NUM_ACTORS.value reads the flag --num_actors
            if self.match(name):
                self.emit("read", node, name, via="attribute", root=root.id, holder=True)
            return
        key, root_text = self.key_of(node)
        leaf = parts[-1] if parts else ""
        if self.settings_root is None and parts and isinstance(root, ast.Name):
            handle = root.id if root.id not in ("self", "cls") else parts[0] if len(parts) > 1 else ""
            if HANDLE.match(handle) and handle.strip("_").lower() != "kwargs":  # **kwargs holds no settings
                self.settings_root = handle if handle == root.id else f"{root.id}.{handle}"
        if key and "." in key and len(self.sections) < MAX_SECTIONS and CONFIG_ROOT.search(root_text or ""):
            self.sections.add(key.rsplit(".", 2)[-2].lower())  # config.data.pad_mode: this file reads `data`
        if key and CONFIG_ROOT.search(root_text or "") and key != root_text and not root_text.endswith("." + key):
            self.holder_read(key, root_text, required=default is None and via in ("attribute", "subscript"))
        # self.num_workers is instance state; self.fsdp_config.fsdp_size reads a configuration
        # the object holds (its name says so), as self.cfg.x does
        skip = isinstance(root, ast.Name) and root.id in ("self", "cls") and parts and not HANDLE.match(parts[0]) \
            and not (len(parts) > 1 and (CONFIG_ATTR.search(parts[0])
                                         or (self.function().cls, parts[0]) in self.section_attributes)) \
            and via in ("attribute", "subscript") \
            and not (self.function().kind == "function" and CONFIG_CLASS.search(self.function().cls or ""))
        # (in a method of a settings class, self.vllm.tensor_parallel_size reads the configuration)
        if skip and len(parts) == 1 and len(self.instance_reads) < MAX_SECTIONS and self.match(leaf):
            self.instance_reads.add(leaf.lower())
        if key and leaf and (self.match(leaf) or leaf in self.cat.added_flags) and not skip and not (
                isinstance(root, ast.Name) and self.qual(root) and via == "attribute"
                and self.cat.lookup(self.qual(node)) is not None):
            d = literal(default) if default is not None else None
            self.emit("read", call or node, key, default=None if d is NOT_LITERAL else d, via=via, root=root_text,
                      expr=self.text(default) if d is NOT_LITERAL else None)
        self.visit_chain_children(node)

    def holder_read(self, key: str, root_text: str, required: bool) -> None:
        """`self.config.model.path` in CriticWorker.__init__: the handle `self.config` there
        reads the chain `model.path`, and its section must have a key `model` (read with no
        default). Kept per function and handle (a class may hold different sections in
        different roles, each calling its own methods), for QG101 to tell which sections a
        handle can hold and which sections code reads at all."""
        group = f"{self.function().qualname}|{root_text}"
        if group not in self.holder_chains and len(self.holder_chains) >= MAX_SECTIONS:
            return
        chains = self.holder_chains.setdefault(group, set())
        if len(chains) < MAX_SECTIONS:
            chains.add(".".join(key.split(".")[:MAX_CHAIN]))
        if required:
            firsts = self.holder_reads.setdefault(group, set())
            if len(firsts) < MAX_SECTIONS:
                firsts.add(key.split(".", 1)[0])

    def library_flags(self, node: ast.Call, q: str) -> None:
        """`deepspeed.add_config_arguments(parser)` adds the library's flags: each is defined
        here. `deepspeed.initialize(args=args)` reads them from the namespace it is given; a
        call without one is recorded, for QG101 to say what builds the engine instead."""
        adder = self.cat.flag_adders.get(q)
        if adder is not None:
            for flag in adder.flags:
                self.emit("define", node, flag, None, via="argparse", flags=[f"--{flag}"], dest=flag,
                          added_by=adder.call, carries=adder.carries or None, default_given=False)
            return
        fn = self.function()
        for param, position, flags in self.cat.flag_readers.get(q, ()):
            given = next((k.value for k in node.keywords if k.arg == param), None)
            if given is None and position is not None and len(node.args) > position \
                    and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
                given = node.args[position]
            splatted = any(k.arg is None for k in node.keywords)
            if given is not None and not (isinstance(given, ast.Constant) and given.value is None) or splatted:
                for flag in flags:
                    self.emit("read", node, flag, via="namespace", reader=q,
                              root=self.text(given) if given is not None else None)
            elif len(self.meta.setdefault("namespace_unread", [])) < MAX_SECTIONS:
                self.meta["namespace_unread"].append({"call": q, "function": fn.qualname, "line": node.lineno,
                                                      "flags": list(flags)})

    def visit_chain_children(self, node: ast.AST) -> None:
        while True:
            if isinstance(node, ast.Attribute):
                node = node.value
            elif isinstance(node, ast.Subscript):
                self.visit(node.slice)
                node = node.value
            elif isinstance(node, ast.Call) and (g := getter_key(node)) is not None:
                for a in node.args[1:] if g[2] != "getattr" and g[2] != "select" else node.args[2:]:
                    self.visit(a)
                for k in node.keywords:
                    self.visit(k.value)
                node = g[0]
            else:
                break
        if not isinstance(node, ast.Name):
            self.visit(node)

    # ---- calls ------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        for k in node.keywords:
            split = py_splits.split_of(k.value) if k.arg else None
            if split is not None:
                self.split_candidates.append((self.function().qualname, k.arg, k.value, split))
        func = node.func
        q = self.qual(func)
        fn = self.function()
        token = q or (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
        if len(fn.reaches) < MAX_REACHES and not fn.dead:
            if token:
                fn.reaches.add(token)
            base = func
            while isinstance(base, (ast.Attribute, ast.Call)):  # Actor.options(...).remote(): Actor
                base = base.value if isinstance(base, ast.Attribute) else base.func
            if isinstance(base, ast.Name) and base is not func and base.id not in ("self", "cls"):
                fn.reaches.add(self.qual(base) or base.id)
            picked = func.value.values if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Dict) else ()
            for a in [*node.args, *(k.value for k in node.keywords), *picked]:
                # Process(target=worker), pool.map(fn, ...), {"process": PipeWorker}[strategy](fn)
                if isinstance(a, (ast.Name, ast.Attribute)):
                    ref = self.qual(a) or (a.attr if isinstance(a, ast.Attribute) else a.id)
                    fn.reaches.add(ref)
        if token and (token.rsplit(".", 1)[-1] in self.cat.settings_parsers or token in self.cat.settings_parsers) \
                and node.args and \
                len(self.parses) < MAX_SECTIONS:
            found = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else node.args[:1]
            classes = [self.qual(a) or self.text(a) for a in found if isinstance(a, (ast.Name, ast.Attribute))]
            if classes:
                self.parses.append({"function": fn.qualname, "line": node.lineno, "classes": classes})
        if token:
            fn.calls.add(token)
            if fn.cls and (token.rsplit(".", 1)[-1] in self.cat.starters or token in self.cat.starters):
                self.flow_starts.setdefault(fn.cls, token)
        attr = func.attr if isinstance(func, ast.Attribute) else ""
        if attr in ("parse_known_args", "parse_known_intermixed_args"):
            self.meta["parse_known_args"] = node.lineno
        elif attr in ("update", "setdefault"):
            self.shadow_call(node)
            if attr == "update":
                self.update_mapping(node)
        if attr in MERGING:
            self.record_merge(node)
        if self.call_environ(node, q):
            return
        g = getter_key(node)
        if g is not None:
            receiver, key, via = g
            if self.qual(receiver) == "os.environ":
                self.visit_args(node)
                return
            self.read_chain(node, via, default=getter_default(node, via), call=node)
            return
        if q in self.cat.flag_adders or q in self.cat.flag_readers:
            self.library_flags(node, q)
        absl = absl_flag(node, q) if attr.startswith("DEFINE_") else None
        if absl is not None:
            self.absl_define(node, absl)
        elif attr == "add_argument" and not _built_as_no_parser(func, fn):
            self.add_argument(node)
        elif attr == "set_defaults":
            for k in node.keywords:
                if k.arg and self.match(k.arg):
                    v = literal(k.value)
                    # at the keyword, not at `parser.set_defaults(` lines above it
                    self.emit("define", k, k.arg, None if v is NOT_LITERAL else v, via="argparse",
                              set_defaults=True, flags=[], expr=self.text(k.value) if v is NOT_LITERAL else None)
        consumer = self.cat.lookup(q)
        if consumer is not None and self.cat.vendored(q) and not _takes_env_list(node):
            consumer = None  # a class of a vendored name that wraps one env (agilerl's DummyVecEnv(env)): no copy
        local = self.local_backends(func.id) if consumer is None and isinstance(func, ast.Name) else []
        for c, cond in local:  # vec_cls = SubprocVecEnv if p else DummyVecEnv; vec_cls(fns)
            self.consume(node, c, via_variable=func.id, condition=cond)
        if consumer is None and attr == "options" and self.imports_ray:
            consumer = self.cat.by_name.get(py_catalogue.OPTIONS_BACKEND)
        if q in THREAD_CLASSES:
            target = next((k.value for k in node.keywords if k.arg == "target"), None)
            if target is None and len(node.args) > 1:
                target = node.args[1]
            if target is not None:
                self.facts.add_thread(fn.qualname, fn.cls, target)
        mapped = self.mapped_arguments(node) if any(k.arg is None for k in node.keywords) else {}
        if consumer is None and attr and q is None:
            consumer = self.cat.method(node, mapped)
        if consumer is not None:
            self.consume(node, consumer, mapped=mapped)
        elif local:
            pass
        elif attr in POOL_METHODS and node.args:
            self.facts.pool_calls.append((fn.qualname, pool_name(func.value), id(func.value), node.args[0],
                                          fn.cls))
        elif attr not in ("add_argument", "set_defaults"):
            self.keyword_defines(node, q)
        if consumer is None and not local and g is None and isinstance(func, (ast.Name, ast.Attribute)):
            receiver = fn.instances.get(func.value.id) if isinstance(func, ast.Attribute) \
                and isinstance(func.value, ast.Name) else None
            self.flow_calls.append((fn.qualname, fn.cls, node, receiver))
            if isinstance(func, ast.Name) and fn.ifs:
                gate = self.gate(fn)
                if gate and any(op in c for c in gate["conjuncts"] for op in (">", "!=")):
                    # `if args.in_parallel and args.n > 1: parallel_main(args) else: main(args)`
                    calls = self.meta.setdefault("gated_calls", [])
                    if len(calls) < MAX_GATED_CALLS:
                        calls.append({**gate, "callee": func.id})
        # children: the callee's receiver and the arguments. A chain that is the receiver of a
        # method call is a method or object (wg.init_workers.remote()), not a knob value.
        if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Attribute, ast.Subscript)):
            self.visit_chain_children(func.value)
        elif isinstance(func, ast.Attribute):
            self.visit(func.value)
        elif not isinstance(func, ast.Name):
            self.visit(func)
        self.visit_args(node)

    def visit_args(self, node: ast.Call) -> None:
        for a in node.args:
            self.visit(a)
        for k in node.keywords:
            self.visit(k.value)


def _target_root(site: Site) -> str:
    """The name an override writes through: `cfg` of `cfg.DATALOADER.NUM_WORKERS`, `kw["n"]`."""
    return str(site.detail["target"]).split(".", 1)[0].split("[", 1)[0]


_DISPATCH: dict[type, Any] = {}
# Nodes with nothing below them worth a visit (names, constants, expression contexts, operators).
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
                     ast.alias, *[c for c in vars(ast).values() if isinstance(c, type) and issubclass(
                         c, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop))]})
# methods that fill a settings object from another mapping (yacs' merge_from_list, dict.update)
COPYING = frozenset({"dict", "copy", "deepcopy", "to_container", "to_object", "OrderedDict"})
MERGING = frozenset({"merge", "merge_from_list", "merge_from_dict", "merge_from_file", "update"})
# `async` / `await` used as a name, as Python 3.6 allowed (keywords since 3.7)
OLD_KEYWORD_NAMES = re.compile(r"\b(?:async|await)\s*(?:=[^=]|[,)]|\.)|\.(?:async|await)\b")


def parse(text: str, path: str) -> ast.Module:
    return readable(text, path)[0]


def readable(text: str, path: str) -> tuple[ast.Module, str]:
    """(tree, the text it was parsed from): TEXT itself, TEXT read with Python 3.6's grammar
    when it names things `async` or `await`, or TEXT with the constructs of a newer Python
    grammar rewritten (auditor.extract.py_newer) when only those stopped ``ast``."""
    try:
        return ast.parse(text, filename=path), text
    except SyntaxError as exc:
        error = exc
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(f"cannot parse Python: {exc}") from exc
    if OLD_KEYWORD_NAMES.search(text):
        try:  # `ReplayWrapper(..., async=True)`: 3.6 code that names things `async` / `await`
            return ast.parse(text, filename=path, feature_version=(3, 6)), text
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    from auditor.extract.py_newer import downlevel

    rewritten = downlevel(text)
    if rewritten is not None:
        try:
            return ast.parse(rewritten, filename=path), rewritten
        except SyntaxError as exc:
            error = exc  # past the newer constructs: this one is the file's real error (lines are kept)
        except (ValueError, RecursionError, MemoryError):
            pass
    raise ParseError(f"invalid Python: {error.msg}", error.lineno) from error


# symtable parses with ast.parse's parser but builds no Python objects for the tree (~40%
# cheaper on the gated files of bench/corpus). Only its success is trusted: it also rejects
# code ast.parse accepts (`nonlocal` at module level), and its nesting limit lies one level
# above ast.parse's, so it runs with the recursion limit lowered by SYNTAX_MARGIN, and on
# any failure ast.parse itself gives the outcome (and the message) extract() would.
SYNTAX_MARGIN = 20


def check_syntax(text: str, path: str) -> None:
    """Raise the ParseError extract() would raise for TEXT, without visiting it."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(limit - SYNTAX_MARGIN)
        try:
            symtable.symtable(text, path, "exec")
            return
        finally:
            sys.setrecursionlimit(limit)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    parse(text, path)


def _takes_env_list(call: ast.Call) -> bool:
    """The call gives a vendored vector env class what the library's takes: a list of env
    makers (`[make_env(i) for i in range(n)]`, `env_fns`), not one environment."""
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "env_fns"), None)
    if isinstance(first, (ast.List, ast.ListComp, ast.Tuple, ast.BinOp)):
        return True
    name = first.id if isinstance(first, ast.Name) else first.attr if isinstance(first, ast.Attribute) else ""
    return bool(re.search(r"fns|fn_list|makers|thunks", name))


def _holders_at_serial_counts(ex) -> dict[str, list[str]]:
    """The settings objects read by each function that leaves a backend's count serial (omitted,
    or a literal 0 or 1): QG105 asks whether the holder a sibling call takes its count from was
    at hand there."""
    serial = {s.detail.get("function") for s in ex.sites
              if s.role == "consume" and (s.detail.get("omitted") or s.detail.get("literal") and s.value in (0, 1))}
    if not serial:
        return {}
    bodies = {d[2]: d[1].body for d in ex.flow_defs if d[0] == "def" and d[2] in serial}
    bodies["<module>"] = [st for st in ex.tree.body
                          if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    out = {}
    for qualname in sorted(q for q in serial if q in bodies):
        found = {h for st in bodies[qualname] for node in ast.walk(st) for h in (holder(node),) if h}
        if found:
            out[qualname] = sorted(found)[:HOLDERS_MAX]
    return out


def flag_holders(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to an absl flag's holder: {"NUM_ACTORS": "num_actors"}."""
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
            flag = absl_flag(stmt.value, f"flags.{stmt.value.func.attr}")
            if flag is not None:
                out[stmt.targets[0].id] = flag[0]
    return out


def _visited(ex: "Extractor", tree: ast.AST, text: str, fed: set[str]) -> "Extractor":
    """EX after one pass over TREE, with FED (flags this file hands to a backend's count) as knobs."""
    try:
        ex.tree = tree
        if ("add_argument" in text or "DEFINE_" in text) and HELP_COUNTS.search(text):
            ex.help_named = {d for d in help_counted_flags(tree) if not ex.match_vocabulary(d)}
        ex.help_named |= fed
        if "DEFINE_" in text:
            ex.flag_holders = flag_holders(tree)
        ex.visit(tree)
    except RecursionError as exc:
        raise ParseError("expression nested too deeply to analyse") from exc
    return ex


def _flags_fed_to_backends(ex: "Extractor") -> set[str]:
    """The flags of a parser this file builds that no name or help makes a knob, but whose
    value the file hands to a backend's count (`num_workers=args.workers`); and the settings
    fields it hands to one that the file also overwrites (`args.n_explorer = 1` before `for _
    in range(args.n_explorer): Process(...)`), whoever parses them."""
    consumed = [s for s in ex.sites if s.role == "consume" and s.detail.get("ref")]
    if not consumed:
        return set()
    flags = {d for dests in (ex.meta.get("parser_flags") or {}).values() for d in dests}
    out = flags & {str(s.detail["ref"]).rsplit(".", 1)[-1] for s in consumed}
    fields = {f for s in consumed if (f := fed_field(str(s.detail.get("expr") or "")))}
    if fields:
        out |= _fields_overwritten(ex.tree, fields)
    return {d for d in out if d not in ex.help_named and not ex.match_vocabulary(d)}


def _fields_overwritten(tree: ast.AST, leaves: set[str]) -> set[str]:
    """The LEAVES that an assignment in TREE writes as an attribute: `args.n_explorer = 1`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Attribute) and t.attr in leaves:
                    out.add(t.attr)
    return out


# (a flag's name spelt with dashes, "limit-worker-concurrency" in a list of flags a launcher
# passes on by name, is that setting's key too)
QUOTED_KEY = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_-]{2,40})["']""")
# a Gym-style environment id written in the file ("CartPole-v1", "ALE/Pong-v5"): its name
ENV_ID = re.compile(r"""["'](?:[\w.-]+/)?([A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*?)-v\d+["']""")
MAX_ENV_IDS = 50
MAX_GATED_CALLS = 20  # calls of this file's functions under `if a and b: ... else: ...`, per file


def _built_as_no_parser(func: ast.Attribute, fn) -> bool:
    """`validator = ConfigValidator(...)` then `validator.add_argument("world_size", ...)`: the
    receiver is an object of a class that names no parser (LAVIS's config validator checks a
    config file's keys), so what it adds is no command-line flag."""
    built = fn.instances.get(func.value.id) if isinstance(func.value, ast.Name) else None
    name = (built.id if isinstance(built, ast.Name) else built.attr) if built is not None else ""
    return bool(name) and "parse" not in name.lower()


# a call that starts a process: a function doing one, submitted to a thread pool, makes the pool's
# width a count of processes (auditor.flow.resolve)
STARTS_PROCESSES = re.compile(r"\b(?:Process|Popen)\(|\bsubprocess\.|\bos\.system\(")
# code that spreads its work over every GPU the process sees: a model split over them, a count of
# them, a data-parallel wrapper or a Trainer (which wraps the model in DataParallel over them)
SPREADS_DEVICES = re.compile(r"""device_map\s*=\s*["']auto["']|\bcuda\.device_count\(\)|\bDataParallel\(|\bTrainer\(""")
# a script passing its own command line on to a command it runs
FORWARDS_ARGV = re.compile(r"\bsys\.argv\[1:\]")
RUNS_COMMAND = re.compile(r"\b(?:subprocess|Popen|os\.system|os\.exec\w*|check_call|check_output)\b")


def extract(text: str, path: str, vocab, fed: frozenset = frozenset()) -> FileResult:
    """FED: flags that other files hand to a backend's count (auditor.scan's second look at the
    files that build a parser), knobs here as if this file handed them itself."""
    tree, text = readable(text, path)
    ex = _visited(Extractor(text, path, vocab), tree, text, set(fed))
    more = _flags_fed_to_backends(ex)
    if more:  # `-j/--workers` handed to `DataLoader(num_workers=args.workers)`: a knob by where it goes
        ex = _visited(Extractor(text, path, vocab), tree, text, more | fed)
    ex.facts.finish(ex.sites)
    meta = dict(ex.meta)
    if ex.sections:
        meta["sections_read"] = sorted(ex.sections)
    if ex.settings_root:
        meta["reads_settings"] = ex.settings_root
    if ex.instance_reads:
        meta["instance_reads"] = sorted(ex.instance_reads)
    if ex.holder_chains:
        meta["holder_chains"] = {group: sorted(chains) for group, chains in ex.holder_chains.items()}
    if ex.holder_reads:
        meta["holder_reads"] = {group: sorted(firsts) for group, firsts in ex.holder_reads.items()}
    if ex.split_candidates:
        splits = py_splits.uneven_splits(
            ex.split_candidates, tree, ex.text, lambda name: ex.match(name) == "exact" and bool(vocab.units(name)))
        if splits:
            meta["uneven_splits"] = splits
    dead = py_dead.dead_reads(tree, text, ex.src.line, ex.sites,
                              lambda name, key: name.lower() == key.rsplit(".", 1)[-1].lower()
                              or bool(vocab.units(name) & vocab.units(key)))
    if dead:
        meta["dead_reads"] = dead
    # knob-named attributes the file reads (`trainer.num_workers`) and names it imports: a dead
    # `self.num_workers` or module name elsewhere is read here
    attrs, imported = (sorted(a for a in names if ex.match_vocabulary(a) == "exact")
                       for names in py_dead.referenced_names(text, ex.sites))
    if attrs:
        meta["attr_loads"] = attrs
        self_only = py_dead.self_only(text, attrs)
        if self_only:
            meta["self_attr_loads"] = self_only
    if imported:
        meta["imported_names"] = imported
    commented = py_commented.commented_parallel(tree, text, ex.cat, vocab)
    if commented:
        meta["commented_parallel"] = commented
    holders = _holders_at_serial_counts(ex)
    if holders:
        meta["holders"] = holders
    # the call graph's facts, for a file that holds a parallelism site: one without any is no
    # node of it (as a file the prefilter or the code gates skip: bench/check_gates.py), but a
    # Hydra entry script, which the prefilter keeps, or any script (`__main__`; the flow pass
    # parses one that calls a function adding knob flags): what it runs decides what it reads;
    # or a file that starts processes (a pool elsewhere may run its function as a task), or a
    # script that parses its command line at module level, with no `__main__` guard
    if ex.sites or "hydra_main" in ex.meta or "__main__" in text or ex.flow_starts or STARTS_PROCESSES.search(text) \
            or "parse_args()" in text:
        if ex.frames[0].reaches:
            ex.reaches["<module>"] = sorted(ex.frames[0].reaches)
        if ex.reaches:
            meta["reaches"] = ex.reaches
        if ex.parses:
            meta["parses"] = ex.parses
    # keys asked for by name (`_cfg_get(cfg.env, "num_envs")`): QG101 does not call a Hydra
    # config's key unread by a script whose folder names it so
    quoted = sorted(_asked_by_name(tree, text, Counter(k.replace("-", "_") for k in QUOTED_KEY.findall(text)
                                                 if ex.match_vocabulary(k.replace("-", "_")))))[:MAX_SECTIONS]
    if quoted:
        meta["quoted_keys"] = quoted
    env_ids = sorted(set(ENV_ID.findall(text)))[:MAX_ENV_IDS] if ex.sites and "-v" in text else None
    if env_ids:
        meta["env_ids"] = env_ids
    native = sorted({root for root in (m.split(".") for m in ex.imports.values()) for root in root
                     if root in NATIVE_VECTOR_ENVS})
    if native:
        meta["native_vector_envs"] = native
    if py_launch.mentions_launcher(text):
        commands = py_launch.launch_commands(tree, ex.src)
        if commands:
            meta["launch_commands"] = commands
    if tool_threads.mentions(text):
        tools = tool_threads.python_facts(tree, ex.src)
        if tools:
            meta["tool_threads"] = tools
    if "CUDA_VISIBLE_DEVICES" in text:
        spread = SPREADS_DEVICES.search(text)
        if spread:  # `device_map="auto"` beside `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` (QG105)
            meta["spreads_devices"] = {"line": text.count("\n", 0, spread.start()) + 1, "text": spread.group(0)}
    if "sys.argv[1:]" in text and FORWARDS_ARGV.search(text) and RUNS_COMMAND.search(text):
        meta["forwards_argv"] = True  # `["python", "main.py"] + sys.argv[1:]`: its flags are another program's too
    if ("parse_args" in text or "parse_known_args" in text) and (
            meta.get("setting_flags") or any(s.detail.get("via") == "argparse" for s in ex.sites)):
        closed = py_namespace.closed_namespace(tree)
        if closed is not None:
            meta["closed_namespace"] = closed
        # setting flags (`--gpu`, no count) matter only as flags such a script never reads
        unread = [f for f in meta.get("setting_flags", ()) if closed is not None and f["dest"] not in closed["reads"]]
        if unread:
            meta["unread_setting_flags"] = unread
    meta.pop("setting_flags", None)
    if ("local" in text or "LOCAL_RANK" in text) and py_splits.LOCAL_RANK.search(text):
        shards = py_splits.local_rank_shards(tree, ex.text)
        if shards:
            meta["local_rank_shards"] = shards
    if py_parts.GATE.search(text):
        parts = py_parts.split_work(tree, ex.text)
        if parts:
            meta["split_work"] = parts
    if "**vars(" in text or ".__dict__)" in text:
        splat = py_namespace.splat_parameters(tree)
        if splat:
            meta["splat_parameters"] = splat
    if any(s.detail.get("thread_var") for s in ex.sites):
        math = ex.facts.main_process_math(ex.frames[0].calls)
        if math:
            meta["main_process_math"] = math
    if "next(" in text:
        _mark_one_batch(ex.sites, text)
    if ".yaml" in text or ".yml" in text:
        named = sorted({m.group(1) for m in CONFIG_FILE_NAME.finditer(text)})[:MAX_CONFIG_NAMES]
        if named:
            meta["config_names"] = named
    if "parse_known_args" in meta:
        for s in ex.sites:
            if s.detail.get("via") == "argparse":
                s.detail["parse_known_args"] = True
    return FileResult(sites=ex.sites, meta=meta, flow=flow_local.build(tree, path, ex.src, ex.flow_sinks,
                                                                       ex.flow_calls, ex.flow_defs, ex.flow_sized,
                                                                       ex.flow_starts, ex.flow_unused,
                                                                       ex.flow_returns))


def _mark_one_batch(sites, text: str) -> None:
    """`loader = DataLoader(ds, num_workers=0)` whose name is used only as `next(iter(loader))`:
    one batch is drawn for a probe (a FLOPs count, a shape check), there is no work to split."""
    for s in sites:
        name = s.detail.get("bound_to")
        if s.role != "consume" or not isinstance(name, str) or not name.isidentifier():
            continue
        word = re.escape(name)
        draws = len(re.findall(rf"\bnext\(\s*iter\(\s*{word}\s*\)\s*\)", text))
        if draws and len(re.findall(rf"\b{word}\b", text)) == draws + len(re.findall(rf"\b{word}\s*=(?!=)", text)):
            s.detail["one_batch"] = True


# a string subscript as written (`cfg["num_envs"]`, `cfg[ ("num_envs") ]`): where there is
# none, no key can be a subscript
SUBSCRIPT_KEY = re.compile(r"""\[[\s(]*[rbuRBU]?(?:\"\"\"|\'\'\'|["'])([A-Za-z_][A-Za-z0-9_-]{2,40})["']""")


def _asked_by_name(tree: ast.Module, text: str, spelt: Counter) -> set[str]:
    """Of the knob names SPELT as string literals (with their counts), those spelt other than as a
    subscript (`config["NUM_SEEDS"]`, a read the extractor makes): a key asked for by name out of
    sight (`_cfg_get(cfg.env, "num_envs")`, `.get("num_cpus")`, a dict key)."""
    if not spelt:
        return set()
    if spelt.keys().isdisjoint(SUBSCRIPT_KEY.findall(text)):
        return set(spelt)  # none written as `["key"]`: the walk would find no such subscript
    for node in walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, str) and node.slice.value in spelt:
            spelt[node.slice.value] -= 1
    return {k for k, n in spelt.items() if n > 0}


def keywords() -> list[str]:
    """Words besides the knob vocabulary that make a .py file worth parsing (backend names)."""
    return py_catalogue.load().keywords()


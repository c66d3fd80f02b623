"""Cross-file flow, over the per-file facts only (never an AST): helpers, join keys, values.

    resolve(result)    # before the join: traces on sites, helper consume sites, flow keys,
                       # Python-config and flow-found config defines
    label(result)      # after the join: site.match, effective values along each trace

Function summaries: a function whose parameter reaches a sink is itself a consumer of that
parameter. Each call edge to it substitutes the argument's tree (or the parameter's default
when the call passes nothing) for the parameter; when the argument is a parameter of the
caller, the caller is summarised in turn, up to MAX_ROUNDS levels.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from typing import Any

from auditor import vocab as vocab_mod
from auditor.extract.py_facts import PROCESS_START
from auditor.flow import values
from auditor.flow.backends import ProjectBackends
from auditor.keys import norm_key
from auditor.model import ScanResult, Site

MAX_ROUNDS = 4  # helper levels followed from a sink
MAX_BASES = 3  # base classes followed up for an inherited __init__
MAX_HELPER_WORDS = 32  # helper names the second parse pass looks for (bounds its cost)
MAX_BUILDER_WORDS = 8  # names of functions that add knob flags to a parser, looked for besides
MAX_DERIVED = 40  # consume sites one sink may create at its helpers' callers, per level
KEY_KINDS = ("config", "env")
CONFIG_FILE = re.compile(r"(^|/)[^/]*(conf|cfg|config|setting)[^/]*(/|\.py$)", re.IGNORECASE)
CONFIG_VAR = re.compile(r"(^|_)(cfg|config|conf|configs|settings)$", re.IGNORECASE)


def _facts(result: ScanResult) -> dict[str, dict]:
    return {rel: m["flow"] for rel, m in result.meta.items() if isinstance(m, dict) and m.get("flow")}


def _tails(name: str) -> list[str]:
    """The last 2 and 3 dotted segments of a full name (`helpers.start_pool`,
    `pkg.helpers.start_pool`): what a call through an import or a re-export may spell."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(max(1, len(parts) - 3), len(parts) - 1)]


class _Functions:
    """Every function of the project by full dotted name, and by its dotted suffixes (so
    ``helpers.start_pool`` finds ``src.pkg.helpers.start_pool``)."""

    def __init__(self, facts: dict[str, dict]):
        self.info: dict[str, dict] = {}
        self.suffix: dict[str, list[str]] = defaultdict(list)
        self.classes: set[str] = set()
        # class -> its bases (dotted candidates), for the classes that inherit their __init__
        self.bases: dict[str, list[str]] = {}
        # `from dinov2.data import make_data_loader`, re-exported by dinov2/data/__init__.py
        # from dinov2/data/loaders.py: the package's name for a function of one of its modules
        self.exported: dict[str, list[str]] = defaultdict(list)
        for rel, f in facts.items():
            module = f.get("module") or ""
            package = module.rpartition(".")[0]
            for name, info in f.get("functions", {}).items():
                self.info[name] = info
                for tail in _tails(name):
                    self.suffix[tail].append(name)
                if package and name.startswith(module + "."):
                    self.exported[f"{package}.{name[len(module) + 1:]}"].append(name)
            self.classes |= set(f.get("classes", {}))
            inherits = f.get("inherits_init") or ()
            self.bases.update((c, b) for c, b in (f.get("bases") or {}).items() if c in inherits)
        self.class_suffix: dict[str, list[str]] = defaultdict(list)
        for c in self.bases:
            for tail in (*_tails(c), c.rsplit(".", 1)[-1]):
                self.class_suffix[tail].append(c)

    def resolve(self, candidates: list[str], depth: int = 0, near: str = "") -> str | None:
        """The project function a call names. NEAR, the calling module, breaks a tie: a script's
        own folder comes first on sys.path (`from human_eval.evaluation import f` in
        Evaluation/HumanEval/eval.py is Evaluation/HumanEval/human_eval/evaluation.py, not the
        copy under Evaluation/MBPP/)."""
        package = near.rpartition(".")[0]
        if package:
            for c in candidates:
                for name in (f"{package}.{c}", f"{package}.{c}.__init__"):
                    if name in self.info:
                        return name
        found = self._own(candidates)
        if found is None and depth < MAX_BASES and self.bases:
            # `GRPOVllmEngine(model, tensor_parallel_size=...)` of `class GRPOVllmEngine(VllmEngine)`
            # with no __init__ of its own runs VllmEngine.__init__
            for cls in self._classes(candidates):
                for base in self.bases[cls]:
                    init = self.resolve([base], depth + 1)
                    if init is not None and init.endswith(".__init__"):
                        return init
        return found

    def _classes(self, candidates: list[str]) -> list[str]:
        """The project classes that inherit __init__ and that the candidates name: the full name,
        else a dotted suffix or, for a re-export, the class name, when it names one class."""
        out = []
        for c in candidates:
            if c in self.bases:
                names = [c]
            else:
                parts = c.split(".")
                names = next((found for tail in (".".join(parts[-2:]), parts[-1])
                              if len(found := self.class_suffix.get(tail, ())) == 1), [])
                # a re-export by its class name only within the same top package
                names = [n for n in names if n.split(".")[0] == parts[0]]
            out.extend(names)
        return out

    def _own(self, candidates: list[str]) -> str | None:
        for c in candidates:
            for name in (c, f"{c}.__init__"):
                if name in self.info:
                    return name
                found = self.suffix.get(name, [])
                if len(found) == 1:
                    return found[0]
        for c in candidates:
            # a re-export: `from pkg.dataset import PromptDataset` names pkg.dataset.PromptDataset,
            # defined in pkg/dataset/dataset.py: its last names, when they name one function
            parts = c.split(".")
            for tail in (parts[-2:], parts[-1:]):
                for name in (".".join(tail), ".".join([*tail, "__init__"])):
                    found = self.suffix.get(name, [])
                    if len(found) == 1 and name.count(".") >= 1:
                        return found[0]
        for c in candidates:
            for name in (c, f"{c}.__init__"):
                found = self.exported.get(name, [])
                if len(found) == 1:
                    return found[0]
        return None


class _Returns:
    """What summarised helpers return (facts' ``returns``): a call to one is replaced in a trace
    by its return tree, with the call's arguments put in for its parameters. Helpers that
    return a capped count only (``min(cpus // 2, 4)``): the extractor keeps no others."""

    MAX_NESTING = 3

    def __init__(self, facts: dict[str, dict]):
        self.summary: dict[str, dict] = {}
        self.suffix: dict[str, list[str]] = defaultdict(list)
        for f in facts.values():
            for name, summary in f.get("returns", {}).items():
                self.summary[name] = summary
                for tail in _tails(name):
                    self.suffix[tail].append(name)

    def find(self, candidates: list[str]) -> str | None:
        for c in candidates:
            if c in self.summary:
                return c
            found = self.suffix.get(".".join(c.split(".")[-2:]), [])
            if len(found) == 1:
                return found[0]
        return None

    def expand(self, tree: dict, nesting: int = 0) -> dict:
        if not self.summary:
            return tree
        if tree["k"] == "call" and tree.get("callee") and nesting < self.MAX_NESTING:
            name = self.find(tree["callee"])
            if name is not None:
                summary = self.summary[name]
                returned = summary["tree"]
                given = dict(zip(summary["params"], tree.get("argv") or ()))
                if given:  # the summary's parameters carry the function's full name, its key here
                    returned = values.substitute(returned, name, given)
                return {**{k: v for k, v in tree.items() if k != "argv"}, "k": "returns", "fn": name,
                        "of": [self.expand(returned, nesting + 1)]}
        children = tree.get("of")
        if not children:
            return tree
        new = [self.expand(c, nesting) for c in children]
        return tree if all(a is b for a, b in zip(new, children)) else {**tree, "of": new}


def resolve(result: ScanResult) -> None:
    facts = _facts(result)
    if not facts:
        return
    lib = result.libraries
    if lib is not None and lib.facts:
        # installed frameworks' modules (auditor.libraries): their functions summarise like the
        # project's, their sinks feed summaries only (no site of theirs is reported)
        facts = {**{rel: f for rel, f in lib.facts.items() if rel not in facts}, **facts}
    # The facts are trees of small dicts, none in a cycle: collections while they are walked
    # rescan the whole scan's heap for nothing (measured: most of this step's time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        _resolve(result, facts)
    finally:
        if enabled:
            gc.enable()


def _resolve(result: ScanResult, facts: dict[str, dict]) -> None:
    by_file: dict[str, list[Site]] = defaultdict(list)
    for s in result.sites:
        by_file[s.file].append(s)
    library = {}
    if result.libraries is not None:
        library = {rel: sites for rel, sites in result.libraries.sites.items() if rel not in by_file}
    traces: list[tuple[Site, dict]] = []
    summaries: dict[str, list[tuple[str, Site, dict]]] = defaultdict(list)  # fn -> [(param, sink site, tree)]
    for rel, f in facts.items():
        sites = [s for s in (library.get(rel) or by_file.get(rel, [])) if s.kind == "python"]
        for sink in f.get("sinks", []):
            if sink["site"] >= len(sites):
                continue
            site, tree = sites[sink["site"]], sink["tree"]
            if rel not in library:
                traces.append((site, tree, site))
            for p in _param_owners(tree):
                summaries[p[0]].append((p[1], site, tree))
    _pool_uses(result)
    functions = _Functions(facts)
    edges = _call_edges(facts, functions)
    reach: dict[str, list] = {}  # fn -> [(param, sink)]: what a `_target_` node's keys reach
    derived = _helpers(functions, edges, summaries, reach, library)
    result.sites.extend(s for s, _t, _sink in derived)
    traces.extend(derived)
    project = ProjectBackends(result, facts, functions.classes, vocab_mod.load(result.settings or None), library)
    project.resolve_switches(result)
    serial = project.serial_sinks()
    if serial:
        # the class's own loop is no site: its count is a parameter, which only its callers
        # set (joined by name, `num_envs` there would read every `num_envs` of the project)
        summaries = defaultdict(list)
        for site, tree in serial:
            for fn, name in _param_owners(tree):
                summaries[fn].append((name, site, tree))
        derived = _helpers(functions, edges, summaries, reach, library)
        result.sites.extend(s for s, _t, _sink in derived)
        traces.extend(derived)
    _targets(result, functions, reach)
    returns = _Returns(facts)
    traces = [(site, returns.expand(tree), sink) for site, tree, sink in traces]
    for site, tree, sink in traces:
        _flow_key(site, tree, sink)
    result.traces = [(site, tree) for site, tree, _sink in traces]
    _source_reads(result, traces)
    own = {rel: f for rel, f in facts.items() if rel not in library}
    _config_defines(result, own, traces)
    project.mark_selections(result, _config_strings(result, own), lambda rel, line: _line(result, rel, line))


# a task that starts a process of its own: a pool running such tasks runs that many processes.
# The extractor's list of such calls, by their last name: a call graph's token is written as the
# code calls it (`ctx.Process`, `loop.create_subprocess_exec`); `subprocess.*` by its module
_PROCESS_STARTERS = frozenset(n.rsplit(".", 1)[-1] for n in PROCESS_START if not n.startswith("subprocess."))
_SUBMITTED = re.compile(r"(?:(?:functools\.)?partial\(\s*)?([A-Za-z_][\w.]*)")
POOL_TASK_DEPTH = 2  # project functions followed from a pool's task to the process it starts


def _pool_uses(result: ScanResult) -> None:
    """A pool whose task is a function of another project file (`executor.submit(check_correctness,
    ...)`, check_correctness in execution.py) has a use the extractor could not tell from its own
    file. When that function starts a process (`multiprocessing.Process`, `subprocess.run`),
    directly or through a project function it calls, the pool runs that many processes at once:
    its use is `process-start`, and `pool_use_via` names the function and the call."""
    pools = [s for s in result.sites if s.role == "consume" and s.kind == "python" and s.detail.get("pool")
             and s.detail.get("pool_use") == "unknown" and s.detail.get("submitted")]
    if not pools:
        return
    from auditor.flow.graph import for_result

    graph = for_result(result)
    for site in pools:
        module = graph.module_of.get(site.file)
        if module is None:
            continue
        qual = str(site.detail.get("function") or "<module>")
        for text in site.detail["submitted"]:
            m = _SUBMITTED.match(str(text))
            found = _starts_process(graph, module, qual, m.group(1)) if m else None
            if found:
                site.detail["pool_use"] = "process-start"
                site.detail["pool_use_via"] = found
                break


def _starts_process(graph, module: str, qual: str, token: str) -> str | None:
    """'fn calls multiprocessing.Process' when the project function TOKEN (seen from QUAL in
    MODULE) or one it calls, POOL_TASK_DEPTH levels down, starts a process; else None."""
    todo, seen = [(module, qual, token, 0)], set()
    while todo:
        mod, q, tok, depth = todo.pop()
        for target in graph.resolve(mod, q, tok, careful=True) or ():
            if target in seen:
                continue
            seen.add(target)
            for owner_module, owner_qual, called in graph.edges.get(target, ()):
                leaf = called.rsplit(".", 1)[-1]
                if leaf in _PROCESS_STARTERS or called.startswith("subprocess."):
                    return f"{target.rsplit('.', 1)[-1]} calls {called}"
                if depth + 1 < POOL_TASK_DEPTH and leaf[:1].islower():
                    todo.append((owner_module, owner_qual, called, depth + 1))
    return None


def _source_reads(result: ScanResult, traces) -> None:
    """A config key or env var a trace starts from is read there, vocabulary or not."""
    have = {(s.file, s.line, s.key) for s in result.sites if s.role == "read"}
    for site, tree, _sink in traces:
        for n in values.leaves(tree):
            if n["k"] not in KEY_KINDS:
                continue
            key = n.get("key") if n["k"] == "config" else n.get("name")
            if not key or (n["file"], n["line"], key) in have:
                continue
            have.add((n["file"], n["line"], key))
            detail = {"via": "flow", "feeds": f"{site.file}:{site.line}"}
            if n["k"] == "env":
                detail["via"] = "environ"
            if n.get("has_default") and "default" not in n:
                detail["expr"] = n.get("default_text")
            result.sites.append(Site(role="read", file=n["file"], line=n["line"], column=n.get("col", 1), key=key,
                                     default=n.get("default"), source=n.get("text", ""), kind="python",
                                     detail=detail))


def _sink_step(site: Site) -> dict:
    return {"file": site.file, "line": site.line, "column": site.column, "kind": "sink",
            "text": site.source, "backend": site.detail.get("backend"), "param": site.detail.get("param")}


def _targets(result: ScanResult, functions: _Functions, reach: dict[str, list]) -> None:
    """A Hydra `_target_` node's keys are its target's arguments: a key the project's target
    hands to a backend is consumed by that backend (seriality and siblings included), one a
    catalogued backend takes gets the catalogue's word on it."""
    from auditor.extract import py_catalogue

    catalogue = None
    consumed = {(s.file, s.line) for s in result.sites if s.role == "consume" and s.detail.get("via") == "_target_"}
    for rel, meta in result.meta.items():
        # keys outside the vocabulary: a site when the target hands them to a backend
        vals = meta.get("values") if isinstance(meta, dict) else None
        targets = {k[:-len("._target_")]: v for k, v in (vals or {}).items()
                   if k.endswith("._target_") and isinstance(v[2], str)} if vals else {}
        if "_target_" in (vals or {}) and isinstance(vals["_target_"][2], str):
            targets[""] = vals["_target_"]
        for key, (line, col, value) in (vals or {}).items() if targets else ():
            parent, _, leaf = key.rpartition(".")
            if leaf == "_target_" or parent not in targets or (rel, line) in consumed:
                continue
            fn = functions.resolve([targets[parent][2]])
            if fn and any(p == leaf for p, _sink in reach.get(fn, ())):
                kind = _file_kind(rel)
                source = _line(result, rel, line)
                result.sites.append(Site(role="define", file=rel, line=line, column=col, key=key, value=value,
                                         source=source, kind=kind, detail={"via": "flow"}))
                result.sites.append(Site(role="consume", file=rel, line=line, column=col, key=key, value=value,
                                         source=source, kind=kind,
                                         detail={"via": "_target_", "backend": targets[parent][2]}))
    for site in result.sites:
        d = site.detail
        if site.role != "consume" or d.get("via") != "_target_" or not isinstance(d.get("backend"), str):
            continue
        target, param = d["backend"], site.leaf
        fn = functions.resolve([target])
        sink = next((sk for p, sk in reach.get(fn, ()) if p == param), None) if fn else None
        if sink is not None:
            d.update({k: v for k, v in sink.detail.items() if k not in _LOCAL_DETAIL and k != "via"})
            d.update(target=target, helper=callable_name(fn), helper_param=param,
                     helper_site=f"{sink.file}:{sink.line}")
            continue
        catalogue = catalogue or py_catalogue.load()
        entry = catalogue.lookup(target)
        if entry is not None and param in {c.param for c in entry.counts}:
            d.update(target=target, backend=entry.backend, kind=entry.kind, serial=bool(entry.serial is True),
                     param=param)
            if entry.twin:
                d["twin"] = entry.twin


def _param_owners(tree: dict) -> list[tuple[str, str]]:
    """(function, parameter) of each parameter TREE reaches, once each, in the tree's order: a
    set's order would follow the hash seed, and with it which derived site the caps keep."""
    return list(dict.fromkeys((n["fn"], n["name"]) for n in values.params(tree)))


def _call_edges(facts: dict[str, dict], functions: _Functions) -> dict[str, list[tuple[str, dict]]]:
    """callee -> [(caller file, edge)] for every call edge to a function of the project."""
    edges: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for rel, f in facts.items():
        for edge in f.get("calls", []):
            callee = functions.resolve(edge["callee"], near=f.get("module") or "")
            if callee is not None:
                edges[callee].append((rel, edge))
    return edges


def _helpers(functions: _Functions, edges, summaries, reach: dict | None = None,
             library=()) -> list[tuple[Site, dict, Site]]:
    """Consume sites at the callers of summarised helpers, to a bounded fixed point. REACH,
    when given, collects every function whose parameter reaches a sink: fn -> [(param, sink)].
    Callers in LIBRARY files (installed frameworks) pass the summary on but get no site."""
    out: list[tuple[Site, dict, Site]] = []
    made: set[tuple] = set()
    frontier = dict(summaries)
    for _round in range(MAX_ROUNDS):
        # per level: a sampler called from 50 test files still reaches the CLI two levels up
        per_sink: dict[int, int] = defaultdict(int)
        nxt: dict[str, list] = defaultdict(list)
        for fn, entries in frontier.items():
            if reach is not None:
                reach.setdefault(fn, []).extend((param, sink) for param, sink, _tree in entries)
            info = functions.info.get(fn)
            if info is None:
                continue
            for rel, edge in edges.get(fn, []):
                for param, sink, tree in entries:
                    arg = _argument(info, param, edge, fn, rel)
                    if arg is None:
                        continue
                    new = values.substitute(tree, fn, {param: arg})
                    # the caller's parameters, or __init__'s through self.x, now reach the sink
                    for owner, p in _param_owners(new):
                        nxt[owner].append((p, sink, new))
                    ident = (rel, edge["line"], edge["col"], id(sink), param)
                    if rel in library or ident in made or per_sink[id(sink)] >= MAX_DERIVED:
                        continue
                    if all(n["k"] == "param" for n in values.leaves(new)):
                        continue  # only parameters: the caller's own callers decide
                    made.add(ident)
                    per_sink[id(sink)] += 1
                    out.append((_derived_site(rel, edge, sink, fn, param, arg), new, sink))
        frontier = nxt
        if not frontier:
            break
    return out


def _argument(info: dict, param: str, edge: dict, fn: str, rel: str) -> dict | None:
    """The tree the call passes for PARAM, wrapped in an "arg" step; the default's tree
    when the call passes nothing; None when unknowable (*args) or required and missing."""
    at = {"file": rel, "line": edge["line"], "col": edge["col"], "text": edge["text"]}
    params = info["params"]
    index = params.index(param) if param in params else None
    positional_limit = len(params) - info.get("kwonly", 0)
    if param in edge["kwargs"]:
        given, omitted = edge["kwargs"][param], False
    elif index is not None and index < positional_limit and index < len(edge["args"]):
        given, omitted = edge["args"][index], False
    elif edge["star"]:
        return None
    elif info.get("configurable") and (edge["args"] or "cfg" in edge["kwargs"]):
        return None  # `build_detection_train_loader(cfg)`: the config fills what the call leaves out
    elif param in info.get("defaults", {}):
        given, omitted = info["defaults"][param], True
    else:
        return None
    return {"k": "arg", **at, "callee": callable_name(fn),
            "param": param, "omitted": omitted or None, "of": [given]}


def callable_name(fn: str) -> str:
    """What a caller writes: `start_pool`, or `PromptDataset` for PromptDataset.__init__."""
    parts = fn.split(".")
    return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]


_LOCAL_DETAIL = {"function", "expr", "flow", "flow_key", "flow_keys", "effective", "effective_why", "match", "ref",
                 "literal", "cap", "cpu_count", "kwargs_after", "loop", "in_main", "condition", "key_in_file",
                 "joined_from", "omitted", "via", "splat"}


def _derived_site(rel: str, edge: dict, sink: Site, fn: str, param: str, arg: dict) -> Site:
    # what the backend call itself says (backend, seriality, its condition), not where it sits
    detail: dict[str, Any] = {k: v for k, v in sink.detail.items() if k not in _LOCAL_DETAIL}
    given = arg["of"][0] if arg.get("of") else arg
    detail.update(via="helper", helper=callable_name(fn), helper_param=param, function=edge["fn"],
                  helper_site=f"{sink.file}:{sink.line}", expr=given.get("text") or edge["text"])
    if arg.get("omitted"):
        detail["omitted"] = True
    # at the keyword's own line when the call spans several (`n_workers=n,` four lines down)
    line = edge.get("lines", {}).get(param) if not arg.get("omitted") else None
    return Site(role="consume", file=rel, line=line or edge["line"], column=1 if line else edge["col"], key=param,
                kind="python", source=edge["text"], detail=detail)


def _flow_key(site: Site, tree: dict, sink: Site) -> None:
    """Key the site by the source its trace reaches (join by flow), and record the path."""
    site.detail["flow"] = values.path(tree, _sink_step(sink))
    cap = values.small_cap(tree)
    if cap is not None:
        site.detail["capped_at"] = cap
    if site.detail.get("via") == "helper" and site.detail.get("omitted"):
        # `def collect(self, env_num=8): env_num = env_num or cfg.env_num` called without it:
        # the default runs, and the configured value behind the `or` is never read
        known, value, _why = values.evaluate(tree, lambda kind, key: None)
        if known and value is not None:
            site.value = value
            site.detail["literal"] = True
    sources = [n for n in values.leaves(tree) if n["k"] in KEY_KINDS]
    keys = list(dict.fromkeys((n.get("key") if n["k"] == "config" else n.get("name")) for n in sources))
    keys = [k for k in keys if k]
    if keys:
        site.detail["flow_key"] = keys[0]
        if len(keys) > 1:
            site.detail["flow_keys"] = keys
        if site.key != keys[0]:
            site.detail.setdefault("key_before_flow", site.key)
            site.key = keys[0]
        return
    constant = _named_constant(tree)
    if constant is not None and site.value is None and site.role == "consume":
        # NUM_CPUS_FOR_DATASET_MAP = 4 ... map(f, num_proc=NUM_CPUS_FOR_DATASET_MAP): a literal by name
        site.value = constant["value"]
        site.detail["literal"] = True
        site.detail["constant"] = f"{constant['text']} at {constant['file']}:{constant['line']}"
        return
    if site.detail.get("via") == "helper":
        known, value, _why = values.evaluate(tree, lambda kind, key: None)
        leaves = values.leaves(tree)
        if known and all(n["k"] in ("literal",) for n in leaves):
            site.value = value
            site.detail["literal"] = True
        elif known and site.detail.get("omitted"):
            site.value = value
            site.detail["literal"] = True


def _named_constant(tree: dict) -> dict | None:
    """The literal a chain of plain assignments ends in (`N = 4; n = N`), else None."""
    node = tree
    steps = 0
    while node["k"] == "assign" and node.get("of") and len(node["of"]) == 1:
        node = node["of"][0]
        steps += 1
    if steps and node["k"] == "literal" and isinstance(node.get("value"), int) and not isinstance(node["value"], bool):
        return node
    return None


# -- define sites the flow needs -----------------------------------------------------------

def _compatible(a: str, b: str) -> bool:
    """One dotted key is a whole suffix of the other: env.collector_env_num ~ main_config.env.collector_env_num."""
    a, b = a.lower(), b.lower()
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def _config_defines(result: ScanResult, facts: dict[str, dict], traces) -> None:
    """Python config modules and flow-found config keys become define sites.

    A module-level config dict (``config = dict(env=dict(collector_env_num=8))``) defines
    ``env.collector_env_num`` when its variable names a configuration (config, cfg,
    main_config, ...), else ``<variable>.<path>`` (mmengine: ``train_dataloader.num_workers``).
    Its keys, and the scalar keys of YAML files (``meta["values"]``), become sites when a
    trace reads them or their leaf is in the vocabulary."""
    wanted = [s.detail["flow_key"] for s, _t, _k in traces if s.detail.get("flow_key") and "." in s.detail["flow_key"]]
    wanted += [n["key"] for _s, t, _k in traces for n in values.leaves(t) if n["k"] == "config" and n.get("key")]
    wanted_by_leaf: dict[str, list[str]] = defaultdict(list)
    for w in set(wanted):
        wanted_by_leaf[w.rsplit(".", 1)[-1].lower()].append(w)
    existing = {(s.file, s.line): s for s in result.sites if s.role == "define"}
    new: list[Site] = []
    for rel, f in facts.items():
        base = f.get("base") or []
        config_file = bool(base) or bool(CONFIG_FILE.search(rel))
        for entry in f.get("config", []):
            var, _, rest = entry["key"].partition(".")
            if not (config_file or CONFIG_VAR.search(var)):
                continue  # a module-level dict in code (a lookup table, kwargs): no configuration
            key = rest if CONFIG_VAR.search(var) else entry["key"]
            leaf = key.rsplit(".", 1)[-1]
            if not any(_compatible(key, w) for w in wanted_by_leaf.get(leaf.lower(), [])):
                continue
            detail = {"via": "config-module", "variable": var}
            if base:
                detail["base"] = base
            old = existing.get((rel, entry["line"]))
            if old is not None and old.detail.get("via") in ("dict", "keyword"):
                # the extractor's dict define of the same literal: keyed by its full path now
                old.detail.setdefault("key_in_file", old.key)
                old.key = key
                if not old.detail.get("kwargs_after"):
                    old.detail.update(detail)
                continue
            if old is not None:
                continue
            new.append(Site(role="define", file=rel, line=entry["line"], column=entry["col"], key=key,
                            value=entry["value"], source=entry["text"], kind="python", detail=detail))
    for rel, meta in result.meta.items():
        for key, (line, col, value) in (meta.get("values") or {}).items() if isinstance(meta, dict) else ():
            leaf = key.rsplit(".", 1)[-1].lower()
            if (rel, line) in existing:
                continue
            if any(_compatible(key, w) for w in wanted_by_leaf.get(leaf, [])):
                kind = _file_kind(rel)
                new.append(Site(role="define", file=rel, line=line, column=col, key=key, value=value,
                                source=_line(result, rel, line), kind=kind, detail={"via": "flow"}))
    result.sites.extend(new)


def _config_strings(result: ScanResult, facts: dict[str, dict]):
    """(file, key, line, column, value, source, kind) of each string a config sets: the
    literals of Python config modules and the scalars of config files."""
    for rel, f in facts.items():
        config_file = bool(f.get("base")) or bool(CONFIG_FILE.search(rel))
        for entry in f.get("config", []):
            var, _, rest = entry["key"].partition(".")
            if isinstance(entry["value"], str) and (config_file or CONFIG_VAR.search(var)):
                yield rel, rest if CONFIG_VAR.search(var) else entry["key"], entry["line"], entry["col"], \
                    entry["value"], entry["text"], "python"
    for rel, meta in result.meta.items():
        for key, (line, col, value) in (meta.get("values") or {}).items() if isinstance(meta, dict) else ():
            if isinstance(value, str):
                yield rel, key, line, col, value, None, _file_kind(rel)


def _file_kind(rel: str) -> str:
    """A config file's site kind: yaml for .yml too, else its suffix (ini, toml, json)."""
    return "yaml" if rel.endswith((".yaml", ".yml")) else rel.rsplit(".", 1)[-1]


def _line(result: ScanResult, rel: str, line: int) -> str:
    import os

    try:
        path = os.path.join(result.root, rel) if os.path.isdir(result.root) else result.root
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


# -- after the join ------------------------------------------------------------------------

def label(knobs) -> None:
    """site.match for every joined site: by flow, by its own key, or by name only."""
    for knob in knobs:
        for s in knob.sites:
            if s.detail.get("flow_key") or (s.role == "read" and s.detail.get("via") == "flow"):
                s.match = "flow"
            elif s.role == "define" or not s.detail.get("joined_from"):
                s.match = "key"
            else:
                s.match = "name"
            if s.role == "consume" and not s.detail.get("flow_key") and s.detail.get("flow") and any(
                    step.get("kind") in ("param", "attr") for step in s.detail["flow"][:1]):
                s.match = "name"  # its count comes from a parameter or an object, not this knob


def evaluate(result: ScanResult, knob_of: dict[str, Any]) -> None:
    """Each trace's effective value along its path: site.detail effective / effective_why."""
    def find(key: str):
        knob = knob_of.get(norm_key(key))
        if knob is None:
            tail = "." + norm_key(key)
            found = [k for name, k in knob_of.items() if name.endswith(tail)]
            knob = found[0] if len({id(k) for k in found}) == 1 else None
        return knob

    def lookup(kind: str, key: str):
        knob = find(key)
        if knob is None or not any(s.role == "define" for s in knob.sites):
            return None
        if knob.effective is not None:
            return True, knob.effective, knob.why.split("; consumed by")[0]
        return False, None, knob.why.split("; ")[0]

    for site, tree in result.traces:
        known, value, why = values.evaluate(tree, lookup)
        site.detail["effective"] = value if known else None
        site.detail["effective_why"] = why


# -- before parsing: what else is worth parsing ------------------------------------------

def wanted_words(metas, memo: dict | None = None) -> tuple[set[str], set[str]]:
    """Words that make a file skipped by the prefilter worth parsing after all:
    (helper words for Python files, key words for config files).

    Helper words: ``name(`` of a public helper whose parameter reaches a backend (its
    callers may name no knob), or its module's name when the helper's is too common. Key
    words: leaf keys outside the vocabulary that traces read (a config file may set only those). Both only when distinctive enough to be cheap: a
    short or private name would send most of a large tree to the parser. MEMO (a dict kept
    between calls over the same metas, as the second pass's rounds make) holds each file's
    call edges by callee leaf."""
    keys: set[str] = set()
    helpers: set[str] = set()
    metas = [m for m in metas if isinstance(m, dict)]
    facts = [m["flow"] for m in metas if m.get("flow")]
    params: set[str] = set()  # parameter names a backend's count comes from: a Hydra node may set them
    for f in facts:
        for sink in [*f.get("sinks", []), *f.get("sized", [])]:
            for n in values.leaves(sink["tree"]):
                if n["k"] == "param":
                    helpers.add(n["fn"])
                    params.add(n["name"])
                elif n["k"] == "config" and n.get("key"):
                    keys.add(n["key"].rsplit(".", 1)[-1])
    leaf = {h.rsplit(".", 1)[-1] for h in helpers}
    # each call's callee leaves once, not once a round (a large tree has ~60k calls)
    edges = [edge for f in facts for edge in _callee_leaves(f, memo)]
    for _round in range(MAX_ROUNDS):  # callers that pass their own parameter on
        grown = False
        for callee_leaves, edge in edges:
            if leaf.isdisjoint(callee_leaves):
                continue
            for arg in [*edge["args"], *edge["kwargs"].values()]:
                for n in values.leaves(arg):
                    if n["k"] == "literal" and type(n.get("value")) is int and n["value"] == 1 \
                            and edge["fn"] not in helpers \
                            and edge["fn"].rsplit(".", 1)[-1] != "<module>":
                        # `def single_threaded_session(): return make_session(1)`: a helper of one
                        # worker or thread, whose callers decide which process it pins (QG107)
                        helpers.add(edge["fn"])
                        leaf.add(edge["fn"].rsplit(".", 1)[-1])
                        grown = True
                    elif n["k"] == "param" and n["fn"] not in helpers:
                        helpers.add(n["fn"])
                        leaf.add(n["fn"].rsplit(".", 1)[-1])
                        grown = True
                    elif n["k"] == "config" and n.get("key"):
                        keys.add(n["key"].rsplit(".", 1)[-1])
        if not grown:
            break
    classes = {c for f in facts for c in f.get("classes", {})}
    names = set()
    for h in helpers:
        owner, _, name = h.rpartition(".")
        if owner in classes:
            if name != "__init__":
                continue  # other methods are called through self, in files already parsed
            name = owner.rsplit(".", 1)[-1]  # Collector(...)
        if _distinctive(name):
            names.add(name + "(")
        elif owner not in classes and _distinctive(owner.rpartition(".")[2]):
            # `compute(` is in every other file; `pal_code_exec`, its module, only in those that
            # import it (`from ...pal_code_exec import compute`)
            names.add(owner.rpartition(".")[2])
    # each word is one pass over every skipped file: the longest (most specific) names only
    params = set(sorted((p for p in params if _distinctive(p) and p not in keys), key=lambda w: (-len(w), w))
                 [:MAX_HELPER_WORDS])
    names = set(sorted(names, key=lambda w: (-len(w), w))[:MAX_HELPER_WORDS])
    return names | _parser_builders(metas), {k for k in keys | params if _distinctive(k)}


def _parser_builders(metas: list[dict]) -> set[str]:
    """``name(`` of the functions that add knob flags to a parser (``common_arg_parser``), and
    of those that call them (``atari_arg_parser``): a script that only calls one names no knob,
    yet which flags it accepts and never reads is QG101's question."""
    leaves = {q.rsplit(".", 1)[-1] for m in metas for q in m.get("knob_parsers") or () if q != "<module>"}
    if not leaves:
        return set()
    calls = [(q.rsplit(".", 1)[-1], {t.rsplit(".", 1)[-1] for t in tokens}) for m in metas
             for q, tokens in (m.get("reaches") or {}).items() if q != "<module>" and isinstance(tokens, list)]
    for _round in range(MAX_ROUNDS):
        grown = {q for q, called in calls if q not in leaves and not leaves.isdisjoint(called)}
        if not grown:
            break
        leaves |= grown
    words = sorted((w for w in leaves if _distinctive(w)), key=lambda w: (-len(w), w))
    return {w + "(" for w in words[:MAX_BUILDER_WORDS]}


def _callee_leaves(f: dict, memo: dict | None) -> list[tuple[list[str], dict]]:
    hit = memo.get(id(f)) if memo is not None else None
    if hit is not None and hit[0] is f:
        return hit[1]
    edges = [([c[c.rfind(".") + 1:] for c in edge["callee"]], edge) for edge in f.get("calls", [])]
    if memo is not None:
        memo[id(f)] = (f, edges)  # F kept alive with it: its id cannot name another dict meanwhile
    return edges


def _distinctive(word: str) -> bool:
    """make_rollout_pool, collector_env_num: yes; _step, actor, Pool, run: no."""
    return not word.startswith("_") and len(word) >= 8 and ("_" in word or any(c.isupper() for c in word[1:]))

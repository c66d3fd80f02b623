"""YAML configs (plain, Hydra, verl-style) -> sites.

The file is COMPOSED, never loaded: composing builds a node graph with line marks and
no Python objects, so unknown tags (lm_eval's ``!function``) and hostile tags
(``!!python/object``) are just text. Aliases come back as the very node they point to;
the walk visits every node once, so an alias bomb costs its size, not its expansion, and
an anchor gives one site at the anchor instead of one per alias.

Facts for the join go in ``FileResult.meta`` (documented in docs/extract-configs.md):
``hydra_defaults``, ``hydra_self_index``, ``package`` (``# @package`` header),
``generated``, ``documents``, ``warnings``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from auditor.catalogue import YAML_LOADER
from auditor.extract import FileResult, ParseError
from auditor.extract.cfg_common import interpolations, is_generated, make_site, typed_scalar

KIND = "yaml"
MAX_DEPTH = 300  # nesting levels; the walk recurses (Python's limit is ~1000 frames)
FLOW = re.compile(r"[\[\]{}]")
LEADING = re.compile(r"^[ \t?:-]*", re.MULTILINE)  # block indentation and "- - " prefixes
MAX_NODES = 2_000_000  # a real config has thousands; beyond this the walk stops with an error
ALIAS_WARNING = 10_000  # alias references that point at an already walked node
MAX_ALIAS_PATHS = 200  # anchors, and paths per anchor, kept in meta["aliases"]
PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}
BOMB_NODES = 1_000_000  # nodes the document would have with every alias expanded
PACKAGE_HEADER = re.compile(r"^#\s*@package\s+(\S+)")
DEFAULTS_ENTRY = re.compile(r"^(?:(optional|override)\s+)?(?:(optional|override)\s+)?(.+?)$")


def reroot_key(key: str, package: str) -> str:
    """Place KEY (dotted, as written in an included file) under a Hydra PACKAGE.

    ``reroot_key("tensor_model_parallel_size", "actor_rollout_ref.rollout")``
    -> ``"actor_rollout_ref.rollout.tensor_model_parallel_size"``; the empty package,
    ``_global_`` and ``_here_`` leave the key as it is, and a ``_global_.`` prefix makes the
    rest absolute.
    """
    package = (package or "").strip().strip(".")
    if package in ("", "_global_", "_here_"):
        return key
    if package.startswith("_global_."):
        package = package[len("_global_."):]
    return f"{package}.{key}" if key else package


def join_package(parent: str, child: str) -> str:
    """The absolute package of an included config: CHILD is the entry's package (relative to
    the including file), PARENT the including file's absolute package. A ``_global_``
    CHILD is absolute."""
    if child == "_global_" or child.startswith("_global_."):
        return child[len("_global_"):].lstrip(".")
    parent = "" if parent in ("_global_", None) else parent
    return reroot_key(child, parent) if child else parent


WORKFLOW_EXPRESSION = re.compile(r"\$\{\{[^}]*?\b(?:matrix|env|inputs|vars)\.([A-Za-z_][\w-]*)")
MAX_VALUES = 2000  # scalar keys kept per file in meta["values"]
MAX_CHILDREN = 20_000  # key names kept per file in meta["children"]


class _Walker:
    def __init__(self, path: str, text: str, vocab, generated: bool):
        self.path, self.vocab, self.generated = path, vocab, generated
        self.lines = text.splitlines()
        self.result = FileResult()
        self.seen: set[int] = set()
        self.knob_scalars: set[int] = set()  # scalar nodes already reported as a knob's value
        self.nodes = 0
        self.children_kept = 0
        self.alias_hits = 0
        self.first_path: dict[int, str] = {}  # mapping node -> the path it was first walked at (its anchor)
        self.aliases: dict[str, set[str]] = {}  # anchor path -> the paths its aliases (and `<<:` merges) stand at

    def match(self, leaf: str) -> str | None:
        return self.vocab.match(leaf)

    # -- sites ------------------------------------------------------------------------
    def site(self, role: str, node: yaml.Node, key: str, match: str | None, **kw: Any) -> None:
        detail = kw.pop("detail", {})
        if match:
            detail["match"] = match
        if self.generated:
            detail["generated"] = True
        mark = node.start_mark
        self.result.sites.append(make_site(role, self.path, mark.line + 1, mark.column + 1, key, KIND,
                                           self.lines, **kw, **detail))

    # -- walk -------------------------------------------------------------------------
    def walk(self, node: yaml.Node, path: str) -> None:
        if id(node) in self.seen:
            self.alias_hits += 1
            anchor = self.first_path.get(id(node))
            if anchor is not None and anchor != path and len(self.aliases) < MAX_ALIAS_PATHS:
                self.aliases.setdefault(anchor, set()).add(path)
            return
        self.seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            self.first_path[id(node)] = path
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ParseError(f"more than {MAX_NODES} YAML nodes (alias bomb?); not scanned",
                             node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            self.mapping(node, path)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.walk(item, f"{path}.{i}" if path else str(i))
        elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) and "${" in node.value:
            self.references(node, path.rpartition(".")[0], host_key=None)

    def mapping(self, node: yaml.MappingNode, path: str) -> None:
        pairs = [(k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)]
        target = next((v.value for k, v in pairs
                       if k.value == "_target_" and isinstance(v, yaml.ScalarNode)), None)
        self.env_list_item(pairs, path)
        self.children(pairs, path)
        for knode, vnode in pairs:
            name = str(knode.value)
            if name == "<<":  # merge key: merged keys land in this mapping
                self.walk(vnode, path)
                continue
            key = f"{path}.{name}" if path else name
            match = self.match(name)
            if match and isinstance(vnode, yaml.ScalarNode) and id(vnode) in self.knob_scalars:
                self.alias_hits += 1  # an alias of a value already defined at its anchor
                continue
            if match and isinstance(vnode, yaml.MappingNode) and self.vocab.built_switch(name):
                # `distributed_training:` holding keys: a section named like a switch, not one (a
                # listed switch may hold its spec: `vec_env: {name: subproc}`)
                match = None
            if match:
                self.define(knode, vnode, key, match, path)
                if target is not None:
                    self.site("consume", knode, key, match, value=self.value_of(vnode),
                              detail={"via": "_target_", "backend": target})
            if match and isinstance(vnode, yaml.ScalarNode):
                self.seen.add(id(vnode))
                self.knob_scalars.add(id(vnode))
                continue  # define() already handled its interpolation
            if isinstance(vnode, yaml.ScalarNode) and "${" not in str(vnode.value):
                # every scalar key, for the flow layer: a key outside the vocabulary is a knob
                # when code passes its value to a backend (auditor.flow.resolve)
                values = self.result.meta.setdefault("values", {})
                if len(values) < MAX_VALUES:
                    mark = knode.start_mark
                    values[key] = [mark.line + 1, mark.column + 1, typed_scalar(vnode)]
            self.walk(vnode, key)

    def children(self, pairs: list, path: str) -> None:
        """The keys of this mapping, for the rules that ask which section a handle can hold
        (`meta["children"]`: section path -> key names). A mapping with a merge key (`<<:`)
        takes keys this file does not spell there: it is recorded as None, shape unknown."""
        children = self.result.meta.setdefault("children", {})
        names = [str(k.value) for k, _v in pairs]
        self.children_kept += len(names) + 1
        if self.children_kept > MAX_CHILDREN:
            return  # past the bound: sections not recorded are of unknown shape
        children[path] = None if "<<" in names or path in children else names

    def value_of(self, vnode: yaml.Node) -> Any:
        if isinstance(vnode, yaml.ScalarNode) and "${" not in str(vnode.value):
            return typed_scalar(vnode)
        return None

    def define(self, knode, vnode, key: str, match: str, container: str) -> None:
        detail: dict[str, Any] = {}
        if isinstance(vnode, yaml.ScalarNode):
            if vnode.tag not in PLAIN_TAGS:
                detail["tag"] = vnode.tag
            if isinstance(vnode.value, str) and "${" in vnode.value:
                refs = self.references(vnode, container, host_key=key)
                if refs:
                    detail.update(reference=refs[0]["reference"], ref_default=refs[0]["ref_default"])
                    if refs[0]["env"]:
                        detail["env"] = True
                    if len(refs) > 1 or not refs[0]["whole"]:
                        detail["references"] = [r["reference"] for r in refs]
                        detail["template"] = vnode.value
                self.site("define", knode, key, match, value=None, detail=detail)
                return
            self.site("define", knode, key, match, value=typed_scalar(vnode), detail=detail)
        else:
            detail["structured"] = "mapping" if isinstance(vnode, yaml.MappingNode) else "sequence"
            self.site("define", knode, key, match, value=None, detail=detail)

    def references(self, vnode: yaml.ScalarNode, container: str, host_key: str | None) -> list[dict]:
        """Each ``${...}`` reference is a read of the key (or env var) it points at."""
        refs = interpolations(vnode.value, container)
        for ref in refs:
            target = ref["reference"]
            detail = {"via": "interpolation"}
            if ref["env"]:
                detail["env"] = True
            if ref["resolver"]:
                detail["resolver"] = ref["resolver"]
            if host_key:
                detail["feeds"] = host_key
            match = self.match(target.rsplit(".", 1)[-1])
            if match:  # a reference to a non-knob key is not a knob's read
                self.site("read", vnode, target, match, default=ref["ref_default"], detail=detail)
        return refs

    def env_list_item(self, pairs, path: str) -> None:
        """Kubernetes / Ray style ``- {name: OMP_NUM_THREADS, value: "1"}`` entries."""
        fields = {k.value: v for k, v in pairs if isinstance(v, yaml.ScalarNode)}
        if set(fields) != {"name", "value"}:
            return
        var = str(fields["name"].value)
        if var.isupper() and self.vocab.match(var):
            self.site("define", fields["name"], var, self.vocab.match(var),
                      value=typed_scalar(fields["value"]), detail={"via": "env-list", "container": path})


# -- Hydra defaults list ----------------------------------------------------------------

def _defaults_entry(item: yaml.Node, index: int) -> dict[str, Any] | None:
    if isinstance(item, yaml.ScalarNode):
        text, option = str(item.value), None
        is_config = True
    elif isinstance(item, yaml.MappingNode) and len(item.value) == 1 and isinstance(item.value[0][0], yaml.ScalarNode):
        knode, vnode = item.value[0]
        text, is_config = str(knode.value), False
        if isinstance(vnode, yaml.ScalarNode):
            option = typed_scalar(vnode)
        elif isinstance(vnode, yaml.SequenceNode):
            option = [str(v.value) for v in vnode.value if isinstance(v, yaml.ScalarNode)]
        else:
            option = None
    else:
        return None
    m = DEFAULTS_ENTRY.match(text.strip())
    flags = {m.group(1), m.group(2)} - {None}
    name = m.group(3).strip()
    name, _, package = name.partition("@")
    absolute = name.startswith("/")
    name = name.strip("/")
    entry: dict[str, Any] = {
        "index": index,
        "line": item.start_mark.line + 1,
        "column": item.start_mark.column + 1,
        "optional": "optional" in flags,
        "override": "override" in flags,
        "absolute": absolute,
        "package_explicit": bool(package),
    }
    if is_config:  # "- base_config" or "- sub/dir/config@pkg": a config, not a group choice
        group, _, option = name.rpartition("/")
        entry.update(group=group or None, option=option, config=True,
                     package=package or None, path=name)
    else:
        entry.update(group=name, option=option, config=False,
                     package=package or name.replace("/", "."),
                     path=f"{name}/{option}" if isinstance(option, str) else None)
    return entry


def _hydra_defaults(doc: yaml.Node) -> tuple[list[dict], int | None]:
    if not isinstance(doc, yaml.MappingNode):
        return [], None
    for knode, vnode in doc.value:
        if isinstance(knode, yaml.ScalarNode) and knode.value == "defaults" and isinstance(vnode, yaml.SequenceNode):
            entries, self_index = [], None
            for i, item in enumerate(vnode.value):
                if isinstance(item, yaml.ScalarNode) and item.value == "_self_":
                    self_index = i
                    continue
                entry = _defaults_entry(item, i)
                if entry is not None:
                    entries.append(entry)
            choices = {e["group"]: e["option"] for e in entries if isinstance(e["option"], str) and e["group"]}
            for entry in entries:
                option = entry["option"]
                if isinstance(option, str) and "${" in option:  # verl: actor: ${model_engine}_actor
                    entry["option_template"] = option
                    resolved = re.sub(r"\$\{([\w./]+)\}", lambda m: choices.get(m.group(1), m.group(0)), option)
                    if "${" not in resolved:
                        entry["option"] = resolved
                        entry["path"] = f"{entry['group']}/{resolved}" if entry["group"] else resolved
                # Hydra >= 1.1: without _self_ the file's own values come last and win.
                after = self_index is not None and entry["index"] > self_index
                entry["self_position"] = "after" if after else "before"
            return entries, self_index
    return [], None


def _nesting_depth(text: str) -> tuple[int, int | None]:
    """(nesting depth or a small upper bound on it, line where it first passes MAX_DEPTH).

    Composing is recursive, and libyaml's C composer overflows the C stack (a segfault,
    not an exception) on ~50,000 nested '['; libyaml is also slow on deep flow nesting, so
    flow depth is measured on the bracket characters alone (quotes ignored: an upper bound).
    """
    flow = deepest = 0
    too_deep_at = None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        for m in FLOW.finditer(text):
            flow = flow + 1 if m.group() in "[{" else max(0, flow - 1)
            if flow > deepest:
                deepest = flow
                if deepest == MAX_DEPTH + 1:
                    too_deep_at = text.count("\n", 0, m.start()) + 1
        if deepest > MAX_DEPTH:
            return deepest, too_deep_at
    bound = deepest + max((len(p) for p in LEADING.findall(text)), default=0)
    if bound <= MAX_DEPTH:
        return bound, None
    depth = deepest = 0  # deep block indentation: count exactly with the (iterative) event parser
    try:
        for event in yaml.parse(text, Loader=YAML_LOADER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > deepest:
                    deepest = depth
                    if deepest == MAX_DEPTH + 1:
                        too_deep_at = event.start_mark.line + 1
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        if _libyaml_nesting_limit(exc):
            return max(deepest, MAX_DEPTH + 1), too_deep_at or _error_line(exc)
        return 0, None  # let compose report the syntax error with its line
    return deepest, too_deep_at


def _libyaml_nesting_limit(exc: yaml.YAMLError) -> bool:
    """libyaml >= 0.2.5 (bundled with PyYAML 6.0.4) stops at its own depth limit (1000)."""
    return "maximum nesting depth" in str(exc)


def _error_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else None


def _too_deep(depth: int, line: int | None) -> ParseError:
    return ParseError(f"YAML nested {depth} or more levels deep (limit {MAX_DEPTH}); not scanned. Next: "
                      f"flatten it, or exclude the file", line)


def _expanded_size(node: yaml.Node, memo: dict) -> float:
    """How many nodes the document would have if every alias were copied out (inf if cyclic).
    Memoised per node, so it costs the graph's size, not the expansion's."""
    key = id(node)
    if key in memo:
        return memo[key]  # None while in progress: a cycle
    memo[key] = None
    if isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = node.value
    else:
        children = []
    total = 1.0
    for child in children:
        size = memo.get(id(child), 0) if id(child) in memo else _expanded_size(child, memo)
        total += float("inf") if size is None else size
    memo[key] = total
    return total


def extract(text: str, path: str, vocab) -> FileResult:
    generated = is_generated(path, text)
    walker = _Walker(path, text, vocab, generated)
    meta = walker.result.meta
    for raw in text.splitlines()[:20]:
        m = PACKAGE_HEADER.match(raw.strip())
        if m:
            meta["package"] = m.group(1)
            break
    depth, line = _nesting_depth(text)
    if depth > MAX_DEPTH:
        raise _too_deep(depth, line)
    try:
        docs = list(yaml.compose_all(text, Loader=YAML_LOADER))
    except yaml.YAMLError as exc:
        line = _error_line(exc)
        if _libyaml_nesting_limit(exc):
            raise _too_deep(MAX_DEPTH + 1, line) from None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        msg = f"invalid YAML: {context + ', ' if context else ''}{problem}"
        raise ParseError(msg, line) from None
    except RecursionError:
        raise ParseError("invalid YAML: nesting too deep to compose", None) from None
    hydra: list[dict] = []
    for n, doc in enumerate(docs):
        if doc is None:
            continue
        entries, self_index = _hydra_defaults(doc)
        if entries or self_index is not None:
            for entry in entries:
                entry["document"] = n
            hydra += entries
            meta["hydra_self_index"] = self_index
        try:
            walker.walk(doc, "")
        except RecursionError:
            raise ParseError("YAML nesting too deep to walk", doc.start_mark.line + 1) from None
    if hydra or "hydra_self_index" in meta:
        meta["hydra_defaults"] = hydra
    meta["documents"] = len(docs)
    if "${{" in text:  # a GitHub Actions workflow reads its matrix / env keys in `${{ matrix.num_gpus }}`
        named = sorted(set(WORKFLOW_EXPRESSION.findall(text)))[:MAX_VALUES]
        if named:
            meta["expression_reads"] = named
    if walker.aliases:  # `meta: *ppo_meta`: the anchor's keys are set at these paths too (QG101)
        meta["aliases"] = {anchor: sorted(paths)[:MAX_ALIAS_PATHS] for anchor, paths in walker.aliases.items()}
    if generated:
        meta["generated"] = True
    expanded = 0.0
    if walker.alias_hits:  # without aliases the graph is a tree: nothing to expand
        expanded = max((_expanded_size(d, {}) for d in docs if d is not None), default=0)
    if expanded > BOMB_NODES:
        meta.setdefault("warnings", []).append(
            ("cyclic alias (infinite when expanded)" if expanded == float("inf")
             else f"alias bomb: {expanded:.3g} nodes when expanded")
            + "; aliases were not expanded, sites are reported once at their anchors")
    elif walker.alias_hits > ALIAS_WARNING:
        meta.setdefault("warnings", []).append(
            f"{walker.alias_hits} alias references not expanded (alias bomb?); "
            "sites are reported once, at their anchors")
    return walker.result

"""The join: sites from every file -> knobs, each with its effective value and why.

Steps, in order (each documented in docs/scan.md):

1. Hydra re-rooting. A YAML ``defaults:`` entry ``rollout@actor.rollout: vllm`` puts the keys
   of rollout/vllm.yaml under ``actor.rollout``; the site's key is rewritten and the key as
   written in the file is kept in ``detail["key_in_file"]``.
2. Spellings. A launch-script flag joins the argparse dest that declares it
   (``--nw`` -> ``num_workers``); a Python override of a local variable joins the key it
   was read from (``detail["from"]``).
3. Grouping. Sites with the same key form one knob. A key nobody defines (a read, override
   or consume only) joins the defined key it is a dotted suffix of, or that is a suffix of
   it (``num_workers`` read through an opaque handle joins ``data.num_workers``) when exactly
   one defined key fits best; otherwise it stays a knob of its own. Environment variables
   (upper-case leaves) join by exact name only. Literal arguments of a consumer
   (``DataLoader(num_workers=2)``) never join by suffix: they read no configuration.
4. Generated files (``detail["generated"]``) never double-count: their definitions of a key
   that a hand-written file also defines are dropped from the knob (they stay in
   ``result.sites``).
5. Effective value and why, where statically known; otherwise ``effective`` is None and
   ``why`` says what decides it at run time. Never a guess presented as a fact.

The join reads only sites and per-file meta; it knows nothing of rules or rendering.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from auditor.flow import resolve as flow
from auditor.keys import norm_key
from auditor.model import CONFIG_KINDS, ROLES, Knob, ScanResult, Site
from auditor.vocab import normalise

MAX_REFERENCE_DEPTH = 8  # ${a} -> ${b} -> ... chains longer than this are left unresolved
# A knob overridden in many places (one script per task) says the first few and the last one.
SHOWN_OVERRIDES = 4


def join(result: ScanResult) -> ScanResult:
    """Fill ``result.knobs`` from ``result.sites`` and ``result.meta``. Returns RESULT."""
    flow.resolve(result)
    reroot_hydra(result)
    _join_spellings(result.sites)
    buckets: dict[str, list[Site]] = defaultdict(list)
    for site in result.sites:
        buckets[norm_key(site.key)].append(site)
    target = _suffix_targets(buckets)
    grouped: dict[str, list[Site]] = defaultdict(list)
    for key, sites in buckets.items():
        grouped[target.get(key, key)].extend(sites)
    knobs = {}
    for name, sites in grouped.items():
        sites = _drop_generated_duplicates(sites)
        sites.sort(key=lambda s: (ROLES.index(s.role) if s.role in ROLES else 9, s.file, s.line, s.column))
        knobs[name] = Knob(name=name, leaf=name.rsplit(".", 1)[-1], sites=sites)
    flow.label(knobs.values())
    resolver = _Resolver(knobs)
    for knob in knobs.values():
        knob.effective, knob.why = resolver.effective(knob)
    result.knobs = sorted(knobs.values(), key=lambda k: k.name.lower())
    flow.evaluate(result, {key: knobs[target.get(key, key)] for key in buckets if target.get(key, key) in knobs})
    return result


# -- 1. Hydra ------------------------------------------------------------------------------

def _yaml_files(result: ScanResult) -> set[str]:
    return {f for f in result.meta if f.endswith((".yaml", ".yml"))} | {
        s.file for s in result.sites if s.kind == "yaml"}


def _find_config(including: str, path: str, files: set[str]) -> str | None:
    """The YAML file a defaults entry names: searched from the including file's directory
    upwards (absolute ``/group`` entries are relative to the config root, an ancestor)."""
    directory = posixpath.dirname(including)
    # `- verltool@actor_rollout_ref.agent: agent.yaml`: Hydra takes the option with its extension too
    exts = ("",) if path.endswith((".yaml", ".yml")) else (".yaml", ".yml")
    while True:
        for ext in exts:
            cand = posixpath.normpath(posixpath.join(directory, path + ext)) if directory else path + ext
            if cand in files:
                return cand
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _absolute(parent: str, package: str | None) -> str:
    """Package of an include: relative to the including file's PARENT package;
    ``_global_`` / ``_global_.x`` are absolute."""
    package = (package or "").strip(".")
    if package == "_global_" or package.startswith("_global_."):
        return package[len("_global_"):].lstrip(".")
    if package in ("", "_here_"):
        return parent
    return f"{parent}.{package}" if parent else package


def hydra_includes(result: ScanResult) -> dict[str, list[tuple[str, dict]]]:
    """YAML file -> [(file its ``defaults:`` list includes, the entry)], in list order."""
    files = _yaml_files(result)
    edges: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for rel, meta in result.meta.items():
        for entry in meta.get("hydra_defaults") or []:
            path = entry.get("path")
            if not isinstance(path, str):
                continue  # "group: null" or an option list (multirun): nothing to place
            found = _find_config(rel, path, files)
            if found and found != rel:
                edges[rel].append((found, entry))
    return edges


def composed(includes: dict[str, list[tuple[str, dict]]], primary: str) -> set[str]:
    """PRIMARY and every file its defaults list pulls in, transitively: one composed config."""
    out, queue = {primary}, [primary]
    while queue:
        for child, _entry in includes.get(queue.pop(), ()):
            if child not in out:
                out.add(child)
                queue.append(child)
    return out


def hydra_packages(result: ScanResult) -> dict[str, str]:
    """Absolute package of every YAML config reached through a ``defaults:`` list.

    Primary configs (included by nobody) sit at their ``# @package`` header or the root; one
    without a header in a folder that other configs include as a group is an option of that
    group.
    An included file gets the entry's explicit ``@package``, else its own header, else its
    group. A file included from two places keeps the first package (the join does not
    duplicate definitions).
    """
    edges = hydra_includes(result)
    included = {child for children in edges.values() for child, _ in children}
    primaries = {f: _absolute("", result.meta.get(f, {}).get("package")) for f in sorted(edges) if f not in included}
    packages = _place(result, edges, primaries)
    # a folder whose files configs include as a group option (`- env: dmc`): a file there that
    # nobody includes is another option of that group, chosen on the command line (`env=dummy`),
    # not a root config
    group_dirs = {posixpath.dirname(child): packages[child] for children in edges.values()
                  for child, entry in children if entry.get("group") and child in packages}
    moved = {f: group_dirs[posixpath.dirname(f)] for f in primaries
             if posixpath.dirname(f) in group_dirs and not result.meta.get(f, {}).get("package")}
    return _place(result, edges, {**primaries, **moved}) if moved else packages


def _place(result: ScanResult, edges: dict, primaries: dict[str, str]) -> dict[str, str]:
    """Packages of the configs reached from PRIMARIES (file -> its package), breadth first."""
    packages = dict(primaries)
    queue = list(primaries)
    while queue:
        parent = queue.pop(0)
        for child, entry in edges.get(parent, []):
            if child in packages:
                continue
            header = result.meta.get(child, {}).get("package")
            if entry.get("package_explicit"):
                pkg = _absolute(packages[parent], entry.get("package"))
            elif header and header != "_group_":
                pkg = _absolute(packages[parent], header)
            elif entry.get("config"):
                pkg = packages[parent]  # "- base_config": merged into the including package
            else:
                pkg = _absolute(packages[parent], (entry.get("group") or "").replace("/", "."))
            packages[child] = pkg
            queue.append(child)
    return packages


def reroot_hydra(result: ScanResult) -> None:
    packages = hydra_packages(result)
    for site in result.sites:
        pkg = packages.get(site.file)
        if not pkg or "key_in_file" in site.detail:
            continue
        if site.role == "read" and site.detail.get("via") == "interpolation":
            continue  # ${a.b} is absolute in OmegaConf: it names the composed root
        if site.key.isupper() and site.detail.get("via") == "env-list":
            continue
        site.detail["key_in_file"] = site.key
        site.detail["package"] = pkg
        site.key = f"{pkg}.{site.key}" if site.key else pkg


# -- 2. spellings --------------------------------------------------------------------------

def _join_spellings(sites: list[Site]) -> None:
    dest_of_flag: dict[str, str] = {}
    for s in sites:
        if s.kind == "python" and s.detail.get("via") == "argparse":
            for flag in s.detail.get("flags") or []:
                dest_of_flag.setdefault(normalise(str(flag)), s.key)
    keys = {norm_key(s.key) for s in sites}
    for s in sites:
        flag = s.detail.get("flag")
        if s.kind == "shell" and flag and s.detail.get("via") == "flag":
            dest = dest_of_flag.get(normalise(str(flag)))
            if dest and dest != s.key:
                s.detail.setdefault("key_in_file", s.key)
                s.key = dest
        origin = s.detail.get("from")
        target = str(s.detail.get("target") or "")
        if (s.kind == "python" and s.role == "override" and isinstance(origin, str) and origin != s.key
                and norm_key(origin) in keys  # a local copy of a config key, not `x = SomeClass`
                and (not target or target.isidentifier())):  # cfg.a.n = cfg.b.n copies one knob into another
            s.detail.setdefault("key_in_file", s.key)
            s.key = origin


# -- 3. grouping ---------------------------------------------------------------------------

def _is_env(key: str) -> bool:
    return "." not in key and key.isupper()


def _suffix_targets(buckets: dict[str, list[Site]]) -> dict[str, str]:
    """Map each define-less key to the one defined key it joins, where exactly one fits best.

    Indexed, not pairwise: a defined key that is a suffix of KEY is found among KEY's own
    suffixes, and the defined keys that end with KEY in an index of their proper suffixes
    (a 100k-key config once took 45 s here)."""
    defined = {k for k, sites in buckets.items() if any(s.role == "define" for s in sites) and not _is_env(k)}
    ending: dict[tuple[str, ...], list[str]] = defaultdict(list)  # proper suffix -> defined keys ending so
    for k in defined:
        parts = tuple(k.split("."))
        for n in range(1, len(parts)):
            ending[parts[n:]].append(k)
    targets = {}
    for key, sites in buckets.items():
        if key in defined or _is_env(key) or any(s.role == "define" for s in sites):
            continue  # defined itself, or an environment variable: exact names only
        if all(s.role == "consume" and s.detail.get("literal") for s in sites):
            continue
        parts = tuple(key.split("."))
        # the longest shared suffix wins: a defined key ending with all of KEY shares all of it
        best = ending.get(parts, [])
        if not best:
            best = next(([k] for n in range(1, len(parts)) if (k := ".".join(parts[n:])) in defined), [])
        if len(best) == 1:
            targets[key] = best[0]
            for s in sites:
                s.detail.setdefault("joined_from", key)
    return targets


def _drop_generated_duplicates(sites: list[Site]) -> list[Site]:
    hand_written = any(s.role == "define" and not s.detail.get("generated") for s in sites)
    if not hand_written:
        return list(sites)
    return [s for s in sites if not (s.role == "define" and s.detail.get("generated"))]


# -- 5. effective value --------------------------------------------------------------------

def loc(site: Site) -> str:
    return f"{site.file}:{site.line}"


def show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _short(backend: str) -> str:
    """DataLoader, SyncVectorEnv, set_num_threads; but ray.init, not a bare "init"."""
    if not backend:
        return "a parallel backend"
    parts = backend.split(".")
    leaf = parts[-1]
    if len(parts) > 1 and leaf.islower() and "_" not in leaf:
        return ".".join(parts[-2:])
    return leaf


def _has_default(site: Site) -> bool:
    """A read with a fallback. ``def f(vec_env_cls=None)`` is a default of None; a param read
    is only emitted when the parameter has a default, and a non-literal one carries ``expr``."""
    if site.default is not None:
        return True
    return site.detail.get("via") == "param" and not site.detail.get("expr")


def condition_holds(condition: str, names: set[str], value: Any) -> bool | None:
    """Decide ``x is None`` / ``x is not None`` / ``not x`` / ``x == 3`` for a known VALUE of
    a knob called by one of NAMES; None when the condition is about anything else."""
    import ast

    try:
        node = ast.parse(condition.strip(), mode="eval").body
    except SyntaxError:
        return None

    def is_knob(n: ast.AST) -> bool:
        text = ast.unparse(n)
        return text in names or text.rsplit(".", 1)[-1] in names and isinstance(n, ast.Attribute)

    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and is_knob(node.operand):
        return not value
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and is_knob(node.left):
        try:
            other = ast.literal_eval(node.comparators[0])
        except ValueError:
            return None
        op = node.ops[0]
        if isinstance(op, ast.Is):
            return value is other
        if isinstance(op, ast.IsNot):
            return value is not other
        if isinstance(op, ast.Eq):
            return value == other
        if isinstance(op, ast.NotEq):
            return value != other
    return None


def _is_defined(knob: Knob | None) -> bool:
    return knob is not None and any(s.role == "define" for s in knob.sites)


class _Resolver:
    """Effective values, following ``${ref}`` / ``$VAR`` references between knobs."""

    def __init__(self, knobs: dict[str, Knob]):
        self.knobs = knobs
        self.memo: dict[str, tuple[Any, str]] = {}
        self.active: set[str] = set()

    def value_of(self, name: str) -> tuple[Any, str] | None:
        knob = self.knobs.get(norm_key(name))
        if knob is None or name in self.active or len(self.active) > MAX_REFERENCE_DEPTH:
            return None
        return self.effective(knob)

    def effective(self, knob: Knob) -> tuple[Any, str]:
        if knob.name in self.memo:
            return self.memo[knob.name]
        self.active.add(knob.name)
        try:
            value, why = self._effective(knob)
        finally:
            self.active.discard(knob.name)
        self.memo[knob.name] = (value, why)
        return value, why

    # A define's value: its literal, or what its reference resolves to.
    def define_value(self, site: Site) -> tuple[bool, Any, str]:
        """(known, value, how) for one define site."""
        if site.detail.get("hydra_delete"):
            return False, None, f"removed by ~{site.key} at {loc(site)}"
        if site.detail.get("structured"):
            return False, None, f"a {site.detail['structured']} at {loc(site)}"
        if site.value is not None or not site.detail.get("reference"):
            if site.detail.get("resolved_from"):
                return True, site.value, f"{show(site.value)} at {loc(site)} (via ${site.detail['resolved_from']})"
            return True, site.value, f"{show(site.value)} at {loc(site)}"
        ref = str(site.detail["reference"])
        resolved = self.value_of(ref)
        if resolved is not None and resolved[0] is not None:
            return True, resolved[0], f"{show(resolved[0])} at {loc(site)} via ${{{ref}}}"
        if resolved is not None and _is_defined(self.knobs.get(norm_key(ref))):
            return False, None, f"${{{ref}}} at {loc(site)}, whose value is not statically known"
        if site.detail.get("ref_default") is not None:
            d = site.detail["ref_default"]
            return True, d, f"{show(d)} at {loc(site)} (the default of ${{{ref}}}, which no scanned file sets)"
        return False, None, f"${{{ref}}} at {loc(site)}, which no scanned file sets"

    def layer(self, sites: list[Site], label: str) -> tuple[bool, Any, str]:
        """One layer of definitions (launch scripts, configs, code defaults) -> one statement."""
        facts = [(s, *self.define_value(s)) for s in sites]
        unknown = [how for _s, known, _v, how in facts if not known]
        values = {show(v): v for _s, known, v, _how in facts if known}
        if unknown and not values:
            return False, None, f"unknown: {unknown[0]}" + (f" (+{len(unknown) - 1} more)" if len(unknown) > 1 else "")
        if len(values) == 1 and not unknown:
            first = next(how for _s, known, _v, how in facts if known)
            more = f" (and {len(facts) - 1} more {label})" if len(facts) > 1 else ""
            return True, next(iter(values.values())), f"{first.replace(' at ', ' from ', 1)}{more}"
        listing = ", ".join(how for _s, _k, _v, how in facts[:4]) + (", ..." if len(facts) > 4 else "")
        return False, None, (f"one of {', '.join(values)}: {label} disagree ({listing}); "
                             "which applies depends on the config or script chosen at run time")

    def _effective(self, knob: Knob) -> tuple[Any, str]:
        defines = knob.by_role("define")
        launch = [s for s in defines if s.kind == "shell"]
        config = [s for s in defines if s.kind in CONFIG_KINDS]
        code = [s for s in defines if s.kind not in CONFIG_KINDS and s.kind != "shell"]
        parts: list[str] = []
        known, value = False, None
        if launch or config or code:
            layers = [(launch, "launch-script settings"), (config, "config files"), (code, "code defaults")]
            present = [(sites, label) for sites, label in layers if sites]
            known, value, why = self.layer(*present[0])
            parts.append(why)
            if len(present) > 1:
                _k2, v2, why2 = self.layer(*present[1])
                if _k2 and (not known or show(v2) != show(value)):
                    parts[-1] += f", over {why2.replace(' from ', ' at ', 1)}"
        else:
            reads = [s for s in knob.by_role("read") if _has_default(s)]
            defaults = {show(s.default): s.default for s in reads}
            literals = [s for s in knob.by_role("consume") if s.value is not None and s.match != "name"]
            consumer_files = {c.file for c in knob.by_role("consume")}
            reads.sort(key=lambda r: (r.file not in consumer_files, r.detail.get("via") != "param"))
            if len(defaults) == 1:
                known, value = True, reads[0].default
                parts.append(f"{show(value)}: the default at {loc(reads[0])}; no scanned config or script sets it")
            elif defaults:
                parts.append("unknown: not set in any scanned file, and the code's defaults disagree ("
                             + ", ".join(f"{show(s.default)} at {loc(s)}" for s in reads[:4]) + ")")
            elif literals and len({show(s.value) for s in literals}) == 1:
                s = literals[0]
                known, value = True, s.value
                how = "default of the omitted argument" if s.detail.get("defaulted") or not s.detail.get(
                    "literal", True) else "hardcoded"
                parts.append(f"{show(value)}: {how} at {loc(s)}")
            elif knob.sites:
                first = knob.sites[0]
                parts.append(f"unknown: not set in any scanned file ({first.role} at {loc(first)}); "
                             "decided at run time")
        overrides = []
        for s in knob.by_role("override"):
            known, value, text = self._override(s, known, value, knob)
            if text:
                overrides.append(text)
        if len(overrides) > SHOWN_OVERRIDES:  # the first ones and the last, which decides the value
            overrides[SHOWN_OVERRIDES - 1:-1] = [f"... {len(overrides) - SHOWN_OVERRIDES} more overrides ..."]
        parts.extend(overrides)
        consumers = [s for s in knob.by_role("consume") if s.match != "name"]  # a name alone says nothing
        if consumers:
            names = []
            for s in consumers[:3]:
                serial = " (serial)" if s.detail.get("serial") else ""
                names.append(f"{_short(str(s.detail.get('backend', '')))}{serial} at {loc(s)}")
            more = f" (+{len(consumers) - 3} more)" if len(consumers) > 3 else ""
            parts.append("consumed by " + ", ".join(names) + more)
        return (value if known else None), "; ".join(parts)

    def _override(self, s: Site, known: bool, value: Any, knob: Knob) -> tuple[bool, Any, str]:
        how = s.detail.get("how", "")
        cond = s.detail.get("condition")
        if cond and known:
            names = {knob.name, knob.leaf, str(s.detail.get("target") or ""), str(s.detail.get("key_in_file") or "")}
            holds = condition_holds(str(cond), names - {""}, value)
            if holds is False:
                return known, value, f"(not changed at {loc(s)}: {cond} is false for {show(value)})"
            if holds is True:
                cond = None  # the branch is taken: an unconditional override
        when = f" when {cond}" if cond else ""
        origin, target = s.detail.get("from"), str(s.detail.get("target") or "")
        if how == "reference" and isinstance(origin, str) and ("." in target or "[" in target) \
                and norm_key(origin) != knob.name:  # cfg.data.n = cfg.legacy.n: another knob's value
            resolved = self.value_of(origin)
            if cond:
                return False, None, f"or the value of {origin} at {loc(s)}{when}"
            if resolved is not None and resolved[0] is not None:
                return True, resolved[0], f"overwritten with {origin} = {show(resolved[0])} at {loc(s)}"
            return False, None, f"unknown: overwritten with {origin} at {loc(s)}"
        if how == "reference":
            if cond is None and s.detail.get("condition") and s.detail.get("expr"):
                expr = str(s.detail["expr"])
                return True, expr, f"so {expr} at {loc(s)} ({s.detail['condition']})"
            return known, value, ""  # a plain copy of the read: no new value
        if how in ("min", "max", "cpu_count"):
            cap = s.detail.get("cap") or s.detail.get("expr") or "os.cpu_count()"
            verb = "capped by" if how != "max" else "raised to at least"
            if how == "cpu_count":
                return False, None, f"replaced by {s.detail.get('expr') or 'os.cpu_count()'} at {loc(s)}{when}"
            return known, value, f"{verb} {cap} at {loc(s)}{when}"
        if s.value is not None or how in ("literal", "environ"):
            if cond:
                if known and show(s.value) == show(value):
                    return known, value, ""
                return False, None, f"or {show(s.value)} at {loc(s)}{when}"
            return True, s.value, f"set to {show(s.value)} at {loc(s)}"
        expr = s.detail.get("expr") or s.source
        return False, None, f"unknown: set at run time by `{expr}` at {loc(s)}{when}"

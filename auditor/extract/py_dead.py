"""Settings read into a name that nothing uses (facts for QG101).

``workers = os.getenv("VILA_WORKERS", 1)`` before ``uvicorn.run(app, workers=1)``, or
``self.num_workers = os.getenv("NUM_WORKERS", 32)`` in a class whose pool is sized by a
literal: the user's value is read, then dropped. Each fact in ``meta["dead_reads"]`` is
``{"line", "column", "key", "target"}`` for a read site (an environment variable, a flag or a
config key; never a function's own parameter) whose value is assigned to a local name its
function never loads, a module name the file never loads (``module_name``: the rule looks for
imports of it in the other files), or ``self.<attr>`` when no attribute of that name is loaded
in the file (``attr``: the rule looks for loads of it in the other files).

A file that reads names dynamically (``locals()``, ``vars()``, ``globals()``, ``__dict__``,
``getattr`` with a computed name) or hands its objects whole to a serialiser (``asdict``) has
no dead reads. ``meta["attr_loads"]``: the knob-named attributes a file loads from objects that
hold no settings (``trainer.num_workers``; not ``args.num_workers``); ``meta["imported_names"]``:
the knob-named names it imports; both read from its text.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from auditor.flow.local import statements

MAX_FACTS = 20  # per file
DYNAMIC = frozenset({"locals", "vars", "globals", "getattr", "asdict", "__dict__", "eval", "exec"})


def loads(tree: ast.Module) -> tuple[set[str], set[str]] | None:
    """(the names, the attribute names) TREE loads; None when it reads names dynamically."""
    names: set[str] = set()
    attrs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2:
            name = node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                return None  # getattr(self, name): any attribute
            attrs.add(name.value)
        elif isinstance(node, ast.Name):
            if node.id in DYNAMIC - {"getattr"}:
                return None
            if not isinstance(node.ctx, ast.Store):
                names.add(node.id)
        elif isinstance(node, ast.Attribute):
            if node.attr in DYNAMIC:
                return None
            if not isinstance(node.ctx, ast.Store):
                attrs.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            attrs.update(a.name for a in node.names)  # `from config import INGEST_WORKERS`
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                names.add(node.target.id)  # `n += 1` reads n
            elif isinstance(node.target, ast.Attribute):
                attrs.add(node.target.attr)
    return names, attrs


def dead_reads(tree: ast.Module, text: str, line, sites, counts) -> list[dict]:
    """COUNTS(target, key): is the name assigned a copy of the setting (its name, or a count of
    the same parallel unit: `workers = os.getenv("VILA_WORKERS")`), not a value derived from it
    (`dp_size = world_size // cfg.tp_size`)? TEXT, LINE(n): the file's text and its line n,
    for a first look that spares the walks of the tree in the many files with no candidate: a
    name assigned a copy and spelt nowhere else in the file but where it is written to."""
    reads = [s for s in sites if s.role == "read" and s.detail.get("via") != "param"]
    names = {_assigned_on(line, s, counts) for s in reads} - {None}
    if not names:
        return []
    code = _NOT_CODE.sub(" ", text)
    if all(re.search(rf"\b{name}\b(?!\s*=[^=])", code) for name in names):
        return []
    loaded = loads(tree)
    if loaded is None:
        return []
    loaded_names, loaded_attrs = loaded
    by_line: dict[int, list] = {}
    for s in reads:
        by_line.setdefault(s.line, []).append(s)
    out: list[dict] = []
    for fn in _scopes(tree):
        local_loads = None
        for stmt in statements(fn.body):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            end = getattr(stmt, "end_lineno", stmt.lineno)
            found = [s for line in range(stmt.value.lineno, end + 1) for s in by_line.get(line, ())]
            if not found or not _plain_value(stmt.value):
                continue
            module_name = None
            if isinstance(target, ast.Name):
                name, attr = target.id, None
                if fn is tree:  # a module's name: another file may import it
                    dead, module_name = name not in loaded_names, name
                else:
                    if local_loads is None:
                        local_loads = _loads(fn)
                    dead = name not in local_loads and not _declared_global(fn, name)
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "self":
                name, attr = f"self.{target.attr}", target.attr
                dead = target.attr not in loaded_attrs
            else:
                continue
            for site in found:
                if not dead or not counts(name.rsplit(".", 1)[-1], site.key):
                    continue
                root = site.detail.get("root")
                out.append({"line": site.line, "column": site.column, "key": site.key, "target": name,
                            "via": site.detail.get("via"), **({"root": str(root)} if root else {}),
                            **({"attr": attr} if attr else {}),
                            **({"module_name": module_name} if module_name else {})})
            if len(out) >= MAX_FACTS:
                return out
    return out


# calls that convert or look up a value: `int(os.getenv("N", 4))` is the read; any other call
# may use it (`AsyncVectorEnv([make_env] * cfg["n"])` consumes the count it is given)
PLAIN_CALLS = frozenset({"int", "float", "str", "bool", "min", "max", "abs", "round", "getenv", "get",
                         "getattr"})


def _plain_value(value: ast.AST) -> bool:
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name not in PLAIN_CALLS:
                return False
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            return False
        elif isinstance(node, ast.BinOp) and not isinstance(node.left, ast.Constant) \
                and not isinstance(node.right, ast.Constant):
            # `actor_idx * cfg.nproc_per_node + local_rank`: an index computed from the count
            # and other values, no copy of it (`int(os.getenv("N", 4)) * 2` still is one)
            return False
    return True


# `workers = ...`, `self.num_workers: int = ...` at the start of a line (not `==`)
_ASSIGNED = re.compile(r"\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")
# comments and string literals (blanked before a name is looked for in the code)
_NOT_CODE = re.compile(r"""(?:'''|\"\"\")[\s\S]*?(?:'''|\"\"\")|"[^"\n]*"|'[^'\n]*'|#[^\n]*""")
# `.num_workers` not written to (`+=` reads it)
_ATTRIBUTE = re.compile(r"\.([A-Za-z_]\w*)\b(?![ \t]*=[^=])")
_NAMED_ATTRIBUTE = re.compile(r"""attr\(\s*([^,()\n]+),\s*['"]([A-Za-z_]\w*)['"]""")  # getattr, hasattr
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+\S+[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.MULTILINE)
_SETTINGS = re.compile(r"(?i)^\w*(args|cfgs?|conf|configs?|opts?|options|hparams|params|settings|flags)$")


def referenced_names(text: str, sites) -> tuple[set[str], set[str]]:
    """(the attribute names TEXT loads from an object that holds no settings: `trainer.num_workers`,
    `getattr(model, "num_workers")`; the names it imports from a module, `from config import
    INGEST_WORKERS`, or loads upper-case from one, `config.INGEST_WORKERS`). Read from the text,
    not the tree (a mention in a string or a comment counts: fewer dead reads); SITES, the
    file's sites, tell the loads that read a settings object (`args.num_workers`)."""
    loads = Counter(_ATTRIBUTE.findall(text))
    settings = Counter(s.leaf for s in sites if s.role == "read" and s.detail.get("via") in ("attribute", "getattr")
                       and _SETTINGS.match(str(s.detail.get("root") or "").rsplit(".", 1)[-1]))
    attrs = set(loads - settings)  # a name loaded only from settings objects is no object's attribute
    if "attr(" in text:
        attrs.update(name for root, name in _NAMED_ATTRIBUTE.findall(text)
                     if not _SETTINGS.match(root.strip().rsplit(".", 1)[-1]))
    imported = {name for name in loads if name.isupper()}
    for group in _FROM_IMPORT.findall(text) if "import" in text else ():
        for part in group.strip("()").split(","):
            name = part.split(" as ")[0].strip()
            if name.isidentifier():
                imported.add(name)
    return attrs, imported


def self_only(text: str, names) -> list[str]:
    """Those of NAMES (attribute names TEXT loads) that it spells only after `self.`, never
    through getattr: a class of another file sees them only if it inherits. Counted in the text,
    so `cfg.num_workers_eval` beside `self.num_workers` keeps num_workers out (a read, the safe
    side); a regular expression with a look-behind cost a tenth of the extraction."""
    named = {name for _root, name in _NAMED_ATTRIBUTE.findall(text)} if "attr(" in text else set()
    return [n for n in names if n not in named and text.count("self." + n) >= text.count("." + n) > 0]


def _assigned_on(line, site, counts) -> str | None:
    """The name a copy of SITE's setting may be assigned to, on its line or one of the two before
    it (a value written over several lines)."""
    for number in range(site.line, max(site.line - 3, 0), -1):
        m = _ASSIGNED.match(line(number))
        if m and counts(m.group(1), site.key):
            return m.group(1)
    return None


def _scopes(tree: ast.Module):
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _loads(fn) -> set[str]:
    """Every name FN loads, nested functions and lambdas included (a closure reads its names)."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def _declared_global(fn, name: str) -> bool:
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(fn))

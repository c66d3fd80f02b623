"""Whether a script's parsed arguments stay inside it (facts for QG101).

``args = parser.parse_args()`` in a script that only ever reads ``args.<name>`` itself, or hands
``args`` to functions it defines, which do the same: then a flag the script adds and never
reads as ``args.<dest>`` does nothing, whatever other files read under that name. The fact,
``meta["closed_namespace"]``, is ``{"reads": [...]}``, the attribute names read from the
namespace. No fact when the namespace leaves the file by any other use (passed to an imported
function or a method, ``vars(args)``, stored, returned, put in a container), when the file
returns a parser, or when it parses nothing. A script's own ``def parse_args(): ... return
parser.parse_args()`` called as ``args = parse_args()`` holds the namespace in the file too; the
fact then lists it under ``"exported"``, for the rule to check that no other file calls it.

``meta["splat_parameters"]``: the parameters of this file's functions that a call here fills
from a whole namespace by keyword splat (``main(**vars(opts))``, ``run(**args.__dict__)``): each
flag of that name reaches the function as its parameter.
"""

from __future__ import annotations

import ast

PARSE_CALLS = frozenset({"parse_args", "parse_known_args"})
# calls that only show the namespace (`print(args)`, `logger.info(args)`): no reads, no escape
SHOWS = frozenset({"print", "str", "repr", "pprint", "info", "debug", "warning", "log"})
MAX_HOLDERS = 50


def _parse_call(value) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in PARSE_CALLS


def _holder_target(stmt) -> str | None:
    """The name STMT binds to a parsed namespace (`args = p.parse_args()`, `args, _ = p.parse_known_args()`)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _parse_call(stmt.value)):
        return None
    target = stmt.targets[0]
    if isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[0]
    return target.id if isinstance(target, ast.Name) else None


def _returners(tree: ast.Module) -> dict[str, ast.AST] | None:
    """The module-level functions of a script that return the namespace they parse
    (`def parse_args(): ...; return parser.parse_args()`), by name; None when a function returns
    a parser, or a method or nested function returns a parsed namespace, or a function that
    returns one is not a script's (another file may take it from there)."""
    found: dict[str, ast.AST] = {}
    top = {id(n) for n in tree.body}
    # (a parser of the module or of the function: `return parser` hands either out)
    parsers = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "attr", getattr(node.value.func, "id", "")) == "ArgumentParser"}
    # (a function defined under `if __name__ == "__main__":` cannot be imported: the parser it
    # returns stays in the script)
    guarded = {id(n) for g in tree.body if isinstance(g, ast.If) and "__main__" in ast.unparse(g.test)
               for n in ast.walk(g) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        parsed = {t for node in ast.walk(fn) for t in [_holder_target(node)] if t}
        for node in ast.walk(fn):
            if not isinstance(node, ast.Return) or node.value is None:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in parsers:
                if id(fn) in guarded:
                    continue
                return None
            if _parse_call(node.value) or isinstance(node.value, ast.Name) and node.value.id in parsed:
                if id(fn) not in top:
                    return None
                found[fn.name] = fn
    if found and not _is_script(tree):
        return None
    return found


def _is_script(tree: ast.Module) -> bool:
    """Does TREE run as a program (`if __name__ == "__main__":` at module level)?"""
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)


def closed_namespace(tree: ast.Module) -> dict | None:
    """{"reads": sorted attribute names} when every namespace TREE parses stays in the file."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    returners = _returners(tree)
    if returners is None:
        return None
    holders: list[tuple[ast.AST, str]] = []  # (the scope a name holds the namespace in, the name)

    def scope_of(node):
        scope = parents.get(id(node))
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            scope = parents.get(id(scope))
        return scope or tree

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in returners and isinstance(node.ctx, ast.Load):
            # `args = parse_args()`: the name holds what the script's own parser returns
            call = parents.get(id(node))
            stmt = parents.get(id(call))
            if not (isinstance(call, ast.Call) and call.func is node and isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                return None
            holders.append((scope_of(stmt), stmt.targets[0].id))
            continue
        name = _holder_target(node)
        if name:
            holders.append((scope_of(node), name))
        elif _parse_call(node) and isinstance(parents.get(id(node)), (ast.Assign, ast.AnnAssign)):
            if _holder_target(parents[id(node)]):
                continue  # (the assignment's target is the holder, above)
            return None  # `self.args = p.parse_args()`: held where this file cannot follow
        elif _parse_call(node):
            if isinstance(parents.get(id(node)), ast.Return) and scope_of(node) in returners.values():
                continue  # `return parser.parse_args()` in the script's own parse_args()
            # `main(parser.parse_args())`: the parameter of a function of this file holds it
            call = parents.get(id(node))
            if isinstance(call, ast.keyword):
                call = parents.get(id(call))
            target = functions.get(call.func.id) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
            param = _parameter_for(target, call, node) if target is not None else None
            if param is None:
                return None  # `launch(parser.parse_args())`, `vars(p.parse_args())`: out of sight
            holders.append((target, param))
    if not holders:
        return None
    reads: set[str] = set()
    seen: set[tuple[int, str]] = set()
    while holders:
        scope, name = holders.pop()
        if (id(scope), name) in seen:
            continue
        seen.add((id(scope), name))
        if len(seen) > MAX_HOLDERS:
            return None
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.keyword):  # f(cfg=args): the call is one up
                parent = parents.get(id(parent))
            if isinstance(parent, ast.Attribute):
                if parent.attr.startswith("__"):
                    return None  # args.__dict__
                if isinstance(parent.ctx, ast.Load):
                    reads.add(parent.attr)
                continue
            if isinstance(parent, ast.FormattedValue):
                continue
            started = _started_with(parent, parents, node, functions)
            if started is not None:  # `mp.Process(target=main, args=(args, rank))`: main's parameter holds it
                holders.append(started)
                continue
            if isinstance(parent, ast.Return) and scope in returners.values():
                continue  # handed back to this file's callers, which are holders themselves
            if isinstance(parent, ast.Call) and node is not parent.func:
                func = parent.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called in SHOWS:
                    continue
                if called == "getattr" and isinstance(func, ast.Name) and len(parent.args) >= 2 \
                        and isinstance(parent.args[1], ast.Constant) and isinstance(parent.args[1].value, str):
                    reads.add(parent.args[1].value)
                    continue
                target = functions.get(called) if isinstance(func, ast.Name) else None
                param = _parameter_for(target, parent, node) if target is not None else None
                if param is None:
                    return None  # handed to code out of this file (or a signature that hides it)
                holders.append((target, param))
                continue
            return None  # stored, returned, compared, put in a container: it may be read elsewhere
    return {"reads": sorted(reads), **({"exported": sorted(returners)} if returners else {})}


def _started_with(parent, parents: dict, node: ast.AST, functions: dict) -> tuple | None:
    """(function, parameter) when NODE is an item of the `args=(...)` tuple of a process started
    on a function of this file: `Process(target=main, args=(args, i))` (main's parameter i),
    `mp.spawn(main, args=(args,))` (spawn passes the process index first). None otherwise."""
    if not isinstance(parent, ast.Tuple):
        return None
    keyword = parents.get(id(parent))
    call = parents.get(id(keyword))
    if not (isinstance(keyword, ast.keyword) and keyword.arg == "args" and isinstance(call, ast.Call)):
        return None
    func = call.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if called == "Process":
        target, skip = next((k.value for k in call.keywords if k.arg == "target"), None), 0
    elif called == "spawn":
        target, skip = (call.args[0] if call.args else None), 1
    else:
        return None
    fn = functions.get(target.id) if isinstance(target, ast.Name) else None
    if fn is None:
        return None
    params = fn.args.posonlyargs + fn.args.args
    i = next((i for i, item in enumerate(parent.elts) if item is node), None)
    if i is None or i + skip >= len(params):
        return None
    return fn, params[i + skip].arg


def _parameter_for(fn, call: ast.Call, arg: ast.AST) -> str | None:
    params = fn.args.posonlyargs + fn.args.args
    for i, a in enumerate(call.args):
        if a is arg:
            return params[i].arg if i < len(params) else None
    for k in call.keywords:
        if k.value is arg and k.arg is not None:
            names = {p.arg for p in params + fn.args.kwonlyargs}
            return k.arg if k.arg in names else None
    return None


def _whole_mapping(expr) -> bool:
    """`vars(opts)` or `opts.__dict__`."""
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "vars"
            and len(expr.args) == 1 and not expr.keywords) or (isinstance(expr, ast.Attribute) and expr.attr == "__dict__")


def splat_parameters(tree: ast.Module) -> list[str]:
    """The parameter names of the module-level functions this file calls with `**vars(x)`."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions \
                and any(k.arg is None and _whole_mapping(k.value) for k in node.keywords):
            fn = functions[node.func.id].args
            names.update(a.arg for a in fn.posonlyargs + fn.args + fn.kwonlyargs)
    return sorted(names)

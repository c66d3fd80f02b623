"""What a command runs: its entry point, the project files that entry point imports, and the
values its command line gives to the project's flags (diagnose, docs/diagnose.md).

The scan covers the whole project directory; diagnose judges only what the command runs. A
finding counts when it is in a file the entry point imports (transitively, resolved inside
the project the way Python would: the script's directory, then the project root), or when
its knob is read or consumed in such a file; findings elsewhere (a sibling script) are shown
apart and never change the exit code. Imports are read with ``ast`` and never executed. Code
that is imported by name at run time (``importlib.import_module(cfg.x)``) is not followed.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass, field

MAX_FILES = 2000  # a closure this large is no longer "what the command runs": stop following


@dataclass
class Entry:
    script: str | None  # the entry point, relative to the project root (None: not found)
    files: set[str] = field(default_factory=set)  # the entry point and the project files it imports
    how: str = ""  # how the entry point was found, or why not

    def runs(self, rel: str) -> bool:
        """Does the command run the project file REL (relative to the scanned root)?"""
        return self.script is None or rel in self.files


def entry_point(command: list[str], root: str) -> Entry:
    """The entry point of COMMAND (``python x.py``, ``python -m pkg.mod``, ``torchrun ... x.py``)
    and its import closure inside ROOT."""
    root = os.path.abspath(root)
    script, how = _script(command, root)
    if script is None:
        return Entry(None, set(), how)
    rel = os.path.relpath(script, root).replace(os.sep, "/")
    if rel.startswith("../"):
        return Entry(None, set(), f"{script} is outside the project {root}")
    files = _closure(script, root)
    return Entry(rel, files, how)


def _script(command: list[str], root: str) -> tuple[str | None, str]:
    for i, arg in enumerate(command):
        if arg == "-m" and i + 1 < len(command):
            path = _module_file(command[i + 1], [os.getcwd(), root])
            if path:
                return path, f"python -m {command[i + 1]}"
            return None, f"module {command[i + 1]} not found in the project"
        if arg.endswith(".py") and os.path.isfile(arg):
            return os.path.abspath(arg), f"the script {arg}"
    return None, "no .py script or -m module in the command: every project file counts"


def _module_file(name: str, bases: list[str]) -> str | None:
    parts = name.split(".")
    for base in bases:
        stem = os.path.join(base, *parts)
        for cand in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(cand):
                return os.path.abspath(cand)
    return None


def _imports(path: str) -> list[tuple[str, int]]:
    """(module, level) of every import in PATH; ``from . import x`` gives ('x', 1) too."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            out.append((mod, node.level))
            out += [((mod + "." if mod else "") + a.name, node.level) for a in node.names if a.name != "*"]
    return out


def _closure(script: str, root: str) -> set[str]:
    """The script and every file under ROOT it imports, transitively."""
    bases = [os.path.dirname(script), root]
    seen: set[str] = set()
    todo = [script]
    while todo and len(seen) < MAX_FILES:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        here = os.path.dirname(path)
        for mod, level in _imports(path):
            if level:
                base = here
                for _ in range(level - 1):
                    base = os.path.dirname(base)
                found = _module_file(mod, [base]) if mod else None
            else:
                if mod.split(".")[0] in sys.stdlib_module_names:
                    continue
                found = _module_file(mod, bases)
            if found and found.startswith(root + os.sep):
                # importing a.b.c runs a/__init__.py and a/b/__init__.py too
                todo.append(found)
                todo += _packages(found, root)
    return {os.path.relpath(p, root).replace(os.sep, "/") for p in seen}


def _packages(path: str, root: str) -> list[str]:
    out = []
    d = os.path.dirname(path)
    while d.startswith(root + os.sep) or d == root:
        init = os.path.join(d, "__init__.py")
        if os.path.isfile(init) and init != path:
            out.append(init)
        if d == root:
            break
        d = os.path.dirname(d)
    return out


def flag_values(command: list[str]) -> dict[str, str]:
    """``--flag value`` and ``--flag=value`` pairs of the command line, after its script."""
    out: dict[str, str] = {}
    args = list(command)
    for i, arg in enumerate(args):
        if not arg.startswith("-") or arg in ("-", "--") or arg.startswith("---"):
            continue
        if "=" in arg and arg.startswith("--"):
            name, value = arg.split("=", 1)
            out[name] = value
        elif i + 1 < len(args) and not args[i + 1].startswith("-"):
            out[arg] = args[i + 1]
    return out

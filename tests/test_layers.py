"""Layering: the runtime library (shared by verify, profile, sweep) never imports a command module."""

from __future__ import annotations

import ast
from pathlib import Path

import auditor.runtime

RUNTIME = Path(auditor.runtime.__file__).parent


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_runtime_does_not_import_commands():
    files = sorted(RUNTIME.glob("*.py"))
    assert len(files) > 5
    bad = [f"{f.name}: {name}" for f in files for name in _imports(f)
           if name == "auditor.commands" or name.startswith("auditor.commands.")]
    assert not bad, bad

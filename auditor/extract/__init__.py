"""Extraction: one module per source kind, file text -> sites. Knows nothing of rules.

Each extractor module exposes ``extract(text: str, path: str, vocab) -> FileResult``
(``path`` relative to the scanned root) and raises ``ParseError`` for a file it cannot
parse. The scanner (auditor.scan) picks the module by ``kind_of(path)``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from auditor.model import Site


@dataclass
class FileResult:
    sites: list[Site] = field(default_factory=list)
    # Kind-specific facts the join needs across files, e.g. for YAML
    # {"hydra_defaults": [{"group": "rollout", "option": "vllm", "package": "actor.rollout", "line": 3}]}
    meta: dict[str, Any] = field(default_factory=dict)
    # Per-file flow facts (auditor.flow.local.build): plain data, no AST, so they pickle and
    # cache with the rest of the file's result; Python files only.
    flow: dict[str, Any] | None = None

SUFFIX_KINDS = {
    ".py": "python",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".ini": "ini",
    ".sh": "shell",
    ".bash": "shell",
    ".slurm": "shell",  # SLURM batch scripts: bash with #SBATCH directives
    ".sbatch": "shell",
}
MODULES = {
    "python": "auditor.extract.python_code",
    "yaml": "auditor.extract.yaml_config",
    "toml": "auditor.extract.toml_config",
    "json": "auditor.extract.json_config",
    "ini": "auditor.extract.ini_config",
    "shell": "auditor.extract.shell_script",
}


class ParseError(Exception):
    """A file that cannot be parsed; carries the 1-based line when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


def kind_of(path: str, first_line: bytes = b"") -> str | None:
    # Every suffix is a dot and no other dot: the text from the last dot decides (one lookup
    # per walked file instead of a loop).
    kind = SUFFIX_KINDS.get(path[path.rfind("."):]) if "." in path else None
    if kind is not None:
        return kind
    if first_line.startswith(b"#!") and (b"sh" in first_line.split(b"/")[-1]):
        return "shell"  # extension-less launch scripts: #!/bin/bash, #!/usr/bin/env zsh
    return None


def extractor(kind: str):
    return importlib.import_module(MODULES[kind])

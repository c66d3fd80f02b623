"""Which files of a scan import which, over the per-file facts (`meta[rel]["flow"]`: `module`,
`imports`). Below both the scan (auditor.scan feeds flags across import neighbours) and the
rules (auditor.lint.base re-exports these names)."""

from __future__ import annotations

from typing import Mapping

SOURCE_ROOTS = ("src", "lib", "python", "source")  # folders a package's import name leaves out


def modules_to_files(meta: Mapping[str, dict]) -> dict[str, str]:
    """The project's modules by dotted name -> file, as its imports name them: `src/pkg/mod.py`
    is `pkg.mod` too (src/ layouts), the first file of a name wins."""
    out: dict[str, str] = {}
    for rel, m in sorted(meta.items()):
        flow = m.get("flow") if isinstance(m, dict) else None
        module = flow.get("module") if isinstance(flow, dict) else None
        if not module:
            continue
        out.setdefault(module, rel)
        parts = module.split(".")
        if parts[0] in SOURCE_ROOTS and len(parts) > 1:
            out.setdefault(".".join(parts[1:]), rel)
    return out


def imported_files(meta: Mapping[str, dict], rel: str, files: dict[str, str]) -> set[str]:
    """The project files REL's import statements name (FILES: modules_to_files)."""
    m = meta.get(rel)
    flow = m.get("flow") if isinstance(m, dict) else None
    names = flow.get("imports") if isinstance(flow, dict) else None
    return {files[n] for name in names or () for n in (name, name.rsplit(".", 1)[0]) if n in files}


def near_files(meta: Mapping[str, dict], rel: str, files: dict[str, str]) -> set[str]:
    """REL and the project files it imports, and the files those import (FILES: the project's
    modules by dotted name -> file, modules_to_files)."""
    first = imported_files(meta, rel, files)
    return {rel, *first, *(f for path in first for f in imported_files(meta, path, files))}


class ImportNeighbours:
    """Whether one file of a scan imports the other (two levels, near_files), the project's
    modules indexed when first asked."""

    def __init__(self, meta: Mapping[str, dict]):
        self._meta = meta
        self._modules: dict[str, str] | None = None
        self._near: dict[str, set[str]] = {}

    def either(self, a: str, b: str) -> bool:
        if self._modules is None:
            self._modules = modules_to_files(self._meta)
        for x, y in ((a, b), (b, a)):
            if x not in self._near:
                self._near[x] = near_files(self._meta, x, self._modules)
            if y in self._near[x]:
                return True
        return False

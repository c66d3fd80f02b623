"""Installed frameworks, read, never imported (issue 23).

A project hands its counts to frameworks it imports (``make_atari_env(n_envs=cfg.n_envs)``,
an env manager, a sampler, an engine). The scan reads the source of the modules those calls
name, from the environment the project runs in (``scan --python PATH``, else the one
qg-audit runs in), with the same extractor, and gives their flow facts to the flow layer:
a framework function whose parameter reaches a backend is summarised as a project helper is,
so the project's call gets a consume site that names the framework's backend.

Nothing of the framework is imported or executed: ``--python`` is asked for its ``sys.path``
(``-I``, no site customisation of the project), files are read as text. Bounded: modules named
by the project's calls and, from them, at most ``MAX_DEPTH`` levels of the same package's
modules; ``MAX_FILES`` files, ``MAX_FILE_BYTES`` each, ``MAX_SECONDS`` in all. Each module's
facts are cached per package, version and qg-audit build under the user's cache directory
(keyed and authenticated like every cache entry: ``auditor.cache``), never in the project.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 40  # library modules read per scan
# the text searched for the field names of a project's subclasses of a package's classes
MAX_SEARCH_BYTES = 128 * 1024 * 1024  # per package: a larger one is not searched (unknown)
MAX_SEARCH_SECONDS = 10.0
MAX_DEPTH = 2  # module levels followed inside a package from the project's calls
MAX_MEMBER_FILES = 12  # modules read, beyond MAX_FILES, for the members of registries met
MAX_FILE_BYTES = 512 * 1024
MAX_SECONDS = 15.0
PYTHON_TIMEOUT = 20  # seconds to ask --python for its sys.path
NAMES_KEY = "\0names"  # a store entry's name search (no module path starts with NUL)
_DIST = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+?)-(?P<version>[^-]+)\.dist-info$")


@dataclass
class Libraries:
    """What the scan read of installed frameworks: per module file (its path inside the
    package's root, e.g. ``stable_baselines3/common/env_util.py``) the sites and flow facts."""

    facts: dict[str, dict] = field(default_factory=dict)
    sites: dict[str, list] = field(default_factory=dict)
    read: dict[str, str] = field(default_factory=dict)  # package -> version
    absent: list[str] = field(default_factory=list)  # imported by the project, not installed
    cut: str | None = None  # the bound that stopped the reading, if one did
    # package -> {field name: whether its source names it}, for the fields a project's class
    # declares over one of the package's classes (TrainingArguments' subclass): a package that
    # never names a field cannot read it. A package missing here was not searched.
    names: dict[str, dict[str, bool]] = field(default_factory=dict)

    def registry_members(self, vocab) -> set[str]:
        """The class names registered by the modules read in a registry of two or more classes
        of a parallel unit (`BaseEnvManager`, `SubprocessEnvManager` in ENV_MANAGER_REGISTRY): a
        project file that builds one by hand chooses between them, whatever its config says."""
        groups: dict[str, set[str]] = {}
        for flow in self.facts.values():
            for entry in flow.get("registry") or ():
                if _decorator_registry(entry):
                    groups.setdefault(entry["group"], set()).update(_class_names(entry))
        return {name for names in groups.values() if len(names) > 1 and any(vocab.units(n) for n in names)
                for name in names if vocab.units(name)}

    def summary(self) -> dict:
        out = {"read": dict(sorted(self.read.items())), "absent": sorted(self.absent)}
        if self.cut:
            out["cut"] = self.cut
        return out


class UsageError(Exception):
    pass


def search_path(python: str | None) -> list[Path]:
    """The import path of the environment the project runs in."""
    if python is None:
        paths = sys.path
    else:
        try:
            proc = subprocess.run([python, "-I", "-c", "import sys, json; print(json.dumps(sys.path))"],
                                  capture_output=True, text=True, timeout=PYTHON_TIMEOUT, stdin=subprocess.DEVNULL)
            paths = json.loads(proc.stdout) if proc.returncode == 0 else None
        except (OSError, subprocess.SubprocessError, ValueError):
            paths = None
        if not isinstance(paths, list):
            raise UsageError(f"--python {python}: not a Python interpreter that prints its sys.path; "
                             "give the interpreter of the project's environment, or --no-libraries")
    return [Path(p) for p in paths if isinstance(p, str) and p and os.path.isdir(p)]


def environment_key(python: str | None, enabled: bool) -> list:
    """What a replayed report depends on: the search path and when each entry last changed
    (pip adds and removes packages there)."""
    if not enabled:
        return ["no-libraries"]
    try:
        paths = search_path(python)
    except UsageError:
        return ["unreadable", python]
    return [[str(p), _mtime(p)] for p in paths]


def _mtime(p: Path) -> int:
    try:
        return p.stat().st_mtime_ns
    except OSError:
        return 0


class _Installed:
    def __init__(self, paths: list[Path]):
        self.paths = paths
        self._roots: dict[str, Path | None] = {}
        self._modules: dict[str, tuple[Path, str] | None] = {}  # dotted name -> module_file's answer
        self._versions: dict[str, str] | None = None

    def root(self, top: str) -> Path | None:
        """The directory (or single module's parent) a top-level package is imported from."""
        if top not in self._roots:
            self._roots[top] = None
            for p in self.paths:
                if (p / top / "__init__.py").is_file() or (p / f"{top}.py").is_file():
                    self._roots[top] = p
                    break
        return self._roots[top]

    def module_file(self, dotted: str) -> tuple[Path, str] | None:
        """(file, path inside the package root) of the longest module prefix of DOTTED (each
        name looked up once: a project calls the same framework names many times)."""
        if dotted not in self._modules:
            self._modules[dotted] = self._module_file(dotted)
        return self._modules[dotted]

    def _module_file(self, dotted: str) -> tuple[Path, str] | None:
        parts = dotted.split(".")
        base = self.root(parts[0])
        if base is None:
            return None
        for n in range(len(parts), 0, -1):
            rel = "/".join(parts[:n])
            for cand in (f"{rel}.py", f"{rel}/__init__.py"):
                path = base / cand
                if path.is_file():
                    return path, cand
        return None

    def version(self, top: str) -> str:
        if self._versions is None:
            self._versions = {}
            for p in self.paths:
                try:
                    names = os.listdir(p)
                except OSError:
                    continue
                for name in names:
                    m = _DIST.match(name)
                    if m is None:
                        continue
                    tops = _top_level(p / name) or [m.group("name").replace("-", "_").lower()]
                    for t in tops:
                        self._versions.setdefault(t, m.group("version"))
        return self._versions.get(top) or self._versions.get(top.lower()) or "unknown"


def _top_level(dist: Path) -> list[str]:
    try:
        return [line.strip() for line in (dist / "top_level.txt").read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except OSError:
        return []


def read(project_facts: dict[str, dict], ours: set[str], vocab, python: str | None = None,
         cache_dir: Path | None = None, subclassed: dict[str, set[str]] | None = None) -> Libraries:
    """Read the installed modules the project's calls name (see the module's docstring), and
    search each package of SUBCLASSED (package -> the field names the project's subclasses of
    its classes declare) for those names."""
    from auditor.flow.local import EXTERNAL  # (here: a replayed report needs environment_key only)
    from auditor.flow.values import leaves

    out = Libraries()
    installed = _Installed(search_path(python))
    wanted: deque[tuple[str, int]] = deque()  # (dotted callee, depth)
    for f in project_facts.values():
        for edge in f.get("calls", ()):
            if not any(n["k"] in ("literal", "config", "env", "param")
                       for a in [*edge["args"], *edge["kwargs"].values()] for n in leaves(a)):
                continue  # nothing the project sets goes in
            for c in edge["callee"][:1]:
                top = c.split(".", 1)[0]
                if "." in c and top not in ours and top not in EXTERNAL:
                    wanted.append((c, 0))
    store = _Store(cache_dir)
    seen: set[str] = set()
    absent: set[str] = set()
    members: deque[str] = deque()  # modules registering in a registry met (read first, own budget)
    completed: set[tuple[str, str]] = set()  # (package, `ENV_MANAGER_REGISTRY.register`)
    member_files = 0
    deadline = time.monotonic() + MAX_SECONDS
    while (wanted or members) and not out.cut:
        member = bool(members)
        callee, depth = (members.popleft(), MAX_DEPTH) if member else wanted.popleft()
        top = callee.split(".", 1)[0]
        found = installed.module_file(callee)
        if found is None:
            if installed.root(top) is None:
                absent.add(top)
            continue
        path, rel = found
        if rel.endswith("__init__.py"):
            # `ding.envs.BaseEnvManager`: the package re-exports it; read the module defining it
            defined = _reexported(installed, callee, path, rel)
            if defined is not None:
                found = installed.module_file(defined)
                if found is not None:
                    path, rel = found
        if rel in seen:
            continue
        if member and member_files >= MAX_MEMBER_FILES:
            continue
        if not member and len(seen) - member_files >= MAX_FILES or time.monotonic() > deadline:
            out.cut = f"stopped after {len(seen)} modules ({MAX_FILES} files or {MAX_SECONDS:.0f} s)"
            break
        seen.add(rel)
        member_files += member
        version = installed.version(top)
        outcome = store.get(top, version, rel)
        if outcome is None:
            outcome = _extract(path, rel, vocab)
            store.put(top, version, rel, outcome)
        if outcome is None:
            continue
        sites, flow = outcome
        out.read[top] = version
        out.sites[rel] = sites
        out.facts[rel] = flow
        # a registry of classes of parallel units (ENV_MANAGER_REGISTRY of BaseEnvManager): its
        # other members (the subprocess manager) tell whether the class a config string picks is
        # the serial choice, so the modules registering in it are read too, not followed further
        for entry in flow.get("registry") or ():
            group = entry.get("group")
            if _decorator_registry(entry) and (top, group) not in completed and any(
                    vocab.units(n) for n in _class_names(entry)):
                completed.add((top, group))
                members.extend(_registering(installed.root(top), top, group) or ())
        if depth < MAX_DEPTH:  # the same package's modules this one calls into
            for edge in flow.get("calls", ()):
                for c in edge["callee"][:1]:
                    if c.split(".", 1)[0] == top:
                        wanted.append((c, depth + 1))
    for top, names in sorted((subclassed or {}).items()):
        root = installed.root(top)
        if root is None:
            absent.add(top)
            continue
        version = installed.version(top)
        known = store.names(top, version)
        todo = {n for n in names if n not in known}
        if todo:
            found = _named(root, top, todo)
            if found is None:
                continue  # too large to search: unknown
            known.update({n: n in found for n in todo})
            store.put_names(top, version, known)
        out.names[top] = {n: known[n] for n in names}
    store.save()
    out.absent = sorted(absent - set(out.read))
    return out


def _decorator_registry(entry: dict) -> bool:
    """A registry entry of a decorator (`@ENV_MANAGER_REGISTRY.register("base")`), which a config
    string picks from; not a module's own name -> class table."""
    return str(entry.get("group", "")).endswith(".register")


def _class_names(entry: dict) -> list[str]:
    return [str(c).rsplit(".", 1)[-1] for c in entry.get("cls") or ()]


MAX_REEXPORT_HOPS = 3  # `pkg/__init__.py` -> `pkg/sub/__init__.py` -> the defining module


def _reexported(installed: "_Installed", callee: str, path: Path, rel: str, hops: int = 0) -> str | None:
    """The dotted name of CALLEE in the module that defines it, when the package's
    ``__init__.py`` (PATH) only imports it (`from .base_env_manager import BaseEnvManager`, or
    a star import of a module or package that does); None when this file defines it or it
    cannot be told."""
    import ast

    package = rel.removesuffix("/__init__.py").replace("/", ".")
    rest = callee[len(package) + 1:] if callee.startswith(package + ".") else ""
    name = rest.split(".", 1)[0]
    if not name or hops >= MAX_REEXPORT_HOPS:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    stars = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package.split(".")
        origin = ".".join([*base[:len(base) - node.level + 1], *([node.module] if node.module else [])]) \
            if node.level else (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                stars.append(origin)
            elif (alias.asname or alias.name) == name:
                return ".".join([origin, alias.name, *rest.split(".")[1:]])
    for origin in stars:
        found = installed.module_file(origin)
        if found is None:
            continue
        star_path, star_rel = found
        target = ".".join([origin, rest])
        if star_rel.endswith("__init__.py"):
            deeper = _reexported(installed, target, star_path, star_rel, hops + 1)
            if deeper is not None:
                return deeper
        else:
            try:
                text = star_path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if re.search(r"^(?:class|def)\s+%s\b|^%s\s*=" % (re.escape(name), re.escape(name)), text, re.M):
                return target
    return None


def _registering(root: Path, top: str, group: str) -> list[str] | None:
    """The dotted module names of the package TOP's files that register classes with GROUP
    (`@ENV_MANAGER_REGISTRY.register("subprocess")`), at most MAX_FILES; None when the package
    is larger than the search allows."""
    if not (root / top).is_dir():
        return []
    word = ("@" + group + "(").encode()
    out: list[str] = []
    try:
        for path, data in _sources(root, top):
            if word in data:
                rel = path.relative_to(root).with_suffix("").as_posix()
                out.append(rel.removesuffix("/__init__").replace("/", "."))
                if len(out) >= MAX_FILES:
                    break
    except _TooLarge:
        return None
    return out


def _named(root: Path, top: str, names: set[str]) -> set[str] | None:
    """Of NAMES, those written anywhere in the Python source of the package TOP installed under
    ROOT; None when the package is larger than the search allows."""
    wanted = {n: n.encode() for n in names}
    found: set[str] = set()
    try:
        for _path, data in _sources(root, top):
            for name, word in list(wanted.items()):
                if word in data:
                    found.add(name)
                    del wanted[name]
            if not wanted:
                break
    except _TooLarge:
        return None
    return found


class _TooLarge(Exception):
    """A package's source past the search bounds (MAX_SEARCH_BYTES, MAX_SEARCH_SECONDS)."""


def _sources(root: Path, top: str):
    """(path, bytes) of the package TOP's Python files under ROOT (or its single module), in
    path order; raises _TooLarge once the bounds are passed. Unreadable files are skipped."""
    package = root / top
    files = [root / f"{top}.py"] if not package.is_dir() else \
        sorted(Path(d) / f for d, _, fs in os.walk(package) for f in fs if f.endswith(".py"))
    budget, deadline = MAX_SEARCH_BYTES, time.monotonic() + MAX_SEARCH_SECONDS
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        budget -= len(data)
        if budget < 0 or time.monotonic() > deadline:
            raise _TooLarge
        yield path, data


def _extract(path: Path, rel: str, vocab) -> tuple[list, dict] | None:
    from auditor.extract import python_code

    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
        result = python_code.extract(text, rel, vocab)
    except Exception:  # noqa: BLE001 - a library file that does not parse is simply not read
        return None
    if not result.flow:
        return None
    for s in result.sites:
        s.detail["library"] = rel.split("/", 1)[0]
    return result.sites, result.flow


class _Store:
    """Library facts per (package, version, qg-audit build), in the user's cache directory."""

    def __init__(self, cache_dir: Path | None):
        from auditor import cache

        self.dir = cache_dir
        self.entries: dict[tuple, dict] = {}
        self.dirty: set[tuple] = set()
        self.fingerprint = cache.code_fingerprint() if cache_dir is not None else ""

    def _key(self, top: str, version: str) -> tuple[str, str]:
        from auditor import cache

        key = cache.key_of("library", self.fingerprint, top, version)
        return f"library-{key}.bin", key

    def _load(self, top: str, version: str) -> dict:
        from auditor import cache

        ident = (top, version)
        if ident not in self.entries:
            self.entries[ident] = {}
            if self.dir is not None and version != "unknown":
                name, key = self._key(top, version)
                payload = cache.read_entry(self.dir / name, "library", key)
                try:
                    doc = cache.loads(payload) if payload is not None else {}
                except Exception:  # noqa: BLE001 - a bad entry is a miss
                    doc = {}
                self.entries[ident] = doc if isinstance(doc, dict) else {}
        return self.entries[ident]

    def get(self, top: str, version: str, rel: str):
        from auditor import cache

        blob = self._load(top, version).get(rel)
        if not isinstance(blob, list) or len(blob) != 2 or not isinstance(blob[1], dict):
            return None
        outcome = cache._decode(rel, blob[0])
        if outcome is None or not outcome[3] is None:
            return None
        return outcome[1], blob[1]

    def put(self, top: str, version: str, rel: str, outcome) -> None:
        from auditor import cache

        if outcome is None or self.dir is None or version == "unknown":
            return
        sites, flow = outcome
        blob = cache._encode((rel, sites, None, None, True))
        if not isinstance(blob, bytes):
            return
        try:
            cache.dumps(flow)
        except Exception:  # noqa: BLE001 - unstorable: read again next time
            return
        self._load(top, version)[rel] = [blob, flow]
        self.dirty.add((top, version))

    def names(self, top: str, version: str) -> dict[str, bool]:
        """What an earlier search of this package found for each name asked (a copy)."""
        known = self._load(top, version).get(NAMES_KEY)
        return {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, bool)} \
            if isinstance(known, dict) else {}

    def put_names(self, top: str, version: str, known: dict[str, bool]) -> None:
        if self.dir is None or version == "unknown":
            return
        self._load(top, version)[NAMES_KEY] = dict(known)
        self.dirty.add((top, version))

    def save(self) -> None:
        from auditor import cache

        for top, version in self.dirty:
            name, key = self._key(top, version)
            try:
                cache.write_entry(self.dir, name, "library", key, cache.dumps(self.entries[(top, version)]))
            except Exception:  # noqa: BLE001 - a cache that cannot be written is no error
                pass

"""The project's own backends, told apart by what they do (issue 23).

A class whose method loops ``for _ in range(self.n_workers)`` over a count that a parameter
sets makes that many of something. It is a **parallel** backend when it (or a project base
class) starts processes, threads, a pool, a parallel vector env or actors: a call named in
rules/consumers.yaml ``starters`` (``Process``, ``.remote``, ...) or a consume site of a
non-serial catalogued backend in one of its methods, or a call from one of its methods to a
project function or class that has one. Otherwise it makes its items in the calling
process and steps them there: a **serial** backend of that count, the way garage's
``LocalSampler`` is beside its ``MultiprocessingSampler`` and ``RaySampler``.

Serial backends become consume sites (``detail["project_backend"]``) at the loop, and the
flow's helper summaries carry them to every call that passes the count. Siblings are the
project classes that share a project base class or a registry with it; the parallel ones
are named, so a rule can say which class the caller could have chosen.

Registries map strings to classes: ``@REGISTRY.register("base")`` on a class, or a
module-level ``{"base": BaseManager, "subprocess": SubprocessManager}``. A configured string
that names a serial member of a registry with a parallel member is marked on its define
site (``detail["selects"]``).
"""

from __future__ import annotations

import re
from collections import defaultdict

from auditor import catalogue
from auditor.flow import values
from auditor.model import ScanResult, Site

STARTS_KINDS = ("processes", "envs", "cluster")  # catalogued backends that make a class parallel
MAX_FAMILY = 12  # siblings named per backend
MAX_REACH_ROUNDS = 6  # classes between one that starts workers and the class a project builds


class ProjectBackends:
    def __init__(self, result: ScanResult, facts: dict[str, dict], known_classes: set[str], vocab, library=()):
        self.facts = facts
        self.library = library  # files of installed frameworks (auditor.libraries)
        self.vocab = vocab
        self.classes = known_classes
        self.suffix: dict[str, list[str]] = defaultdict(list)
        for c in known_classes:
            parts = c.split(".")
            for i in range(1, len(parts)):
                self.suffix[".".join(parts[i:])].append(c)
        self.parents: dict[str, list[str]] = {}
        for f in facts.values():
            for cls, bases in (f.get("bases") or {}).items():
                # a base the scan did not read (no knob word in its file) keeps its dotted name:
                # two classes importing the same base still share it
                found = [p for p in (self.find(b) or b for b in bases) if p != cls]
                if found:
                    self.parents[cls] = found
        self.starts = self._starts(result)
        self.registries: dict[str, dict[str, str]] = defaultdict(dict)  # group -> name -> class
        for f in facts.values():
            for entry in f.get("registry") or ():
                cls = next((c for c in (self.find(x) for x in entry["cls"]) if c), None)
                if cls:
                    self.registries[entry["group"]][entry["name"]] = cls

    def find(self, name: str) -> str | None:
        if name in self.classes:
            return name
        found = self.suffix.get(name.split(".", 1)[-1] if "." in name else name, [])
        if len(found) == 1:
            return found[0]
        found = self.suffix.get(name.rsplit(".", 1)[-1], [])
        return found[0] if len(found) == 1 else None

    def _class_of(self, rel: str, function: str) -> str | None:
        module = self.facts.get(rel, {}).get("module", "")
        full = function if module and function.startswith(module + ".") else (
            f"{module}.{function}" if module else function)
        parts = full.split(".")
        for i in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:i]) in self.classes:
                return ".".join(parts[:i])
        return None

    def _starts(self, result: ScanResult) -> dict[str, str]:
        """class -> the parallel backend one of its methods starts."""
        starts: dict[str, str] = {c: token for f in self.facts.values() for c, token in (f.get("starts") or {}).items()}
        fn_starts: dict[str, str] = {}
        for s in result.sites:
            d = s.detail
            if s.role != "consume" or s.kind != "python" or d.get("serial") or d.get("kind") not in STARTS_KINDS:
                continue
            fn = d.get("function") or ""
            cls = self._class_of(s.file, fn)
            backend = d.get("backend") or "?"
            if cls:
                starts.setdefault(cls, backend)
            module = self.facts.get(s.file, {}).get("module", "")
            fn_starts.setdefault(fn if fn.startswith(module + ".") or not module else f"{module}.{fn}", backend)
        for rel, f in self.facts.items():  # one call away: a method that calls a starting function or class
            for edge in f.get("calls", ()):
                cls = self._class_of(rel, edge["fn"])
                if not cls or cls in starts:
                    continue
                for callee in edge["callee"]:
                    target = self.find(callee)
                    backend = fn_starts.get(callee) or (starts.get(target) if target else None)
                    if backend:
                        starts[cls] = backend
                        break
        self._reached_starts(result, starts, fn_starts)
        return starts

    def _reached_starts(self, result: ScanResult, starts: dict[str, str], fn_starts: dict[str, str]) -> None:
        """Further away: a class one of whose methods calls, or passes on, a class that starts
        workers (`Parallel` makes a `Worker`, which picks `bind(ProcessPipeWorker, ...)`), by
        the names the call graph records (meta ``reaches``), to a fixed point."""
        reached: list[tuple[str, list[tuple[str, str | None]]]] = []  # class -> (name, the class it finds)
        for rel, m in result.meta.items():
            module = self.facts.get(rel, {}).get("module", "")
            for fn, names in ((m.get("reaches") or {}) if isinstance(m, dict) else {}).items():
                cls = self._class_of(rel, fn) if fn != "<module>" else None
                if cls and cls not in starts:
                    local = [f"{module}.{n}" for n in names if module and "." not in n]
                    reached.append((cls, [(name, self.find(name)) for name in (*names, *local)]))
        for _round in range(MAX_REACH_ROUNDS):
            grew = False
            for cls, names in reached:
                if cls in starts:
                    continue
                for name, target in names:
                    backend = fn_starts.get(name) or (starts.get(target) if target and target != cls else None)
                    if backend:
                        starts[cls] = backend
                        grew = True
                        break
            if not grew:
                break

    def ancestors(self, cls: str) -> list[str]:
        out, todo = [], list(self.parents.get(cls, ()))
        while todo and len(out) < 20:
            c = todo.pop()
            if c not in out and c != cls:
                out.append(c)
                todo.extend(self.parents.get(c, ()))
        return out

    def parallel(self, cls: str) -> str | None:
        for c in (cls, *self.ancestors(cls)):
            if c in self.starts:
                return self.starts[c]
        return None

    def siblings(self, cls: str) -> list[str]:
        family: set[str] = set()
        roots = set(self.ancestors(cls))
        if roots:
            family |= {c for c in self.parents if c != cls and roots & set(self.ancestors(c))}
        for members in self.registries.values():
            if cls in members.values():
                family |= set(members.values()) - {cls}
        return sorted(family)

    def layout_siblings(self, cls: str) -> list[str]:
        """Classes in a module of the same name in a sibling folder whose names end in the same
        word: `env_package/tool_use/envs.py:ToolUseEnvs` beside `env_package/alfworld/envs.py:
        AlfworldEnvs`, one package per environment, each written to the same pattern."""
        parts = cls.split(".")
        if len(parts) < 4:
            return []
        folder, module, name = parts[:-3], parts[-2], parts[-1]
        word = _last_word(name)
        if not word or word == name:
            return []
        return sorted(c for c in self.classes if c != cls and (p := c.split("."))[:-3] == folder
                      and len(p) == len(parts) and p[-2] == module and p[-3] != parts[-3]
                      and _last_word(p[-1]) == word)

    def _serial_counts(self):
        """(file, sized loop, class, count parameter) for each class that starts nothing and
        loops over a knob-named count a parameter sets; once per class and parameter."""
        seen = set()
        for rel, f in self.facts.items():
            for entry in f.get("sized") or ():
                cls = entry["cls"]
                names = [n["name"] for n in values.leaves(entry["tree"]) if n["k"] == "param"
                         and self.vocab.structure is not None and self.vocab.match(n["name"]) == "exact"]
                if not names or (cls, names[0]) in seen or self.parallel(cls):
                    continue
                seen.add((cls, names[0]))
                yield rel, entry, cls, names[0]

    def serial_classes(self) -> dict[str, str]:
        """class -> the count parameter it makes its items by, for classes that start nothing."""
        out: dict[str, str] = {}
        for _rel, _entry, cls, name in self._serial_counts():
            out.setdefault(cls, name)
        return out

    def serial_sinks(self) -> list[tuple[Site, dict]]:
        """A consume site at a loop of a serial class over a count a parameter sets."""
        out = []
        for rel, entry, cls, name in self._serial_counts():
            parallel = [c for c in self.siblings(cls) if self.parallel(c)][:MAX_FAMILY]
            by_layout = not parallel
            if by_layout:
                parallel = [c for c in self.layout_siblings(cls) if self.parallel(c)][:MAX_FAMILY]
            short = cls.rsplit(".", 1)[-1]
            unit = "envs" if "env" in name.lower() else "workers"
            detail = {"backend": cls, "kind": unit, "serial": True, "param": name, "project_backend": True,
                      "function": entry["fn"],
                      "serial_why": f"{short} makes its {name} items in a loop in the calling process "
                                    f"and starts no process, thread or pool"}
            if parallel:
                detail["parallel_siblings"] = parallel
                detail["twin"] = parallel[0]
                if by_layout:
                    detail["layout_siblings"] = True
            if rel in self.library:
                detail["library"] = rel.split("/", 1)[0]
            out.append((Site(role="consume", file=rel, line=entry["line"], column=entry["col"], key=name,
                             kind="python", source=entry["text"], detail=detail), entry["tree"]))
        return out

    def resolve_switches(self, result: ScanResult) -> None:
        """An if statement whose branches build a project class on one side or both
        (extractor fact ``switch_classes``) is a serial / parallel switch when one side starts
        workers and the other is a catalogued serial backend or a project class that starts
        none: it joins the file's ``switches``, as one between two catalogued backends does."""
        words = catalogue.data("consumers.yaml").get("switch_words") or ()
        for rel, m in list(result.meta.items()):
            if not isinstance(m, dict) or not m.get("switch_classes"):
                continue
            found = []
            for fact in m["switch_classes"]:
                sides = [self._side(side) for side in fact["sides"]]
                if None in sides or sides[0][0] == sides[1][0]:
                    continue  # unknown, or both serial / both parallel: no switch
                serial, parallel = sides if sides[0][0] else sides[::-1]
                names = " ".join([serial[1], parallel[1], *fact.get("targets", ())]).lower()
                if not any(w in f"{names} {fact['leaf'].lower()}" for w in words):
                    continue  # (a dataset with a background writer thread beside one without)
                kind = parallel[2] or serial[2] or ("envs" if "env" in names else "workers")
                found.append({key: fact[key] for key in ("line", "end", "col", "test", "leaf", "param_default",
                                                         "function") if key in fact} |
                             {"serial_when": sides[0][0] != fact["negated"], "serial": serial[1],
                              "parallel": parallel[1], "kind": kind, "project": True,
                              "serial_project": not (fact["sides"][0] if sides[0][0] else fact["sides"][1]).get("backend")})
            if found:
                result.meta[rel] = {**m, "switches": [*(m.get("switches") or ()), *found]}

    def _side(self, side: dict) -> tuple[bool, str, str | None] | None:
        """(serial, backend, kind) for one branch of a switch: the catalogue's word, else a project
        class that starts workers (parallel) or none (serial); None for a name that is neither."""
        if side.get("backend"):
            return bool(side.get("serial")), side["backend"], side.get("kind")
        cls = self.find(side["name"])
        if cls is None:
            return None
        return self.parallel(cls) is None, cls, None

    def mark_selections(self, result: ScanResult, strings, line_of) -> None:
        """A configured string naming a serial registry member beside a parallel one: its
        define site (made when the key is no knob, its source from LINE_OF(file, line)) carries
        ``detail["selects"]``."""
        serial_names: dict[str, tuple[str, str, str, list[str]]] = {}
        serial = self.serial_classes() if self.registries else {}
        for group, members in sorted(self.registries.items()):
            parallel = sorted(c for c in members.values() if self.parallel(c))
            if not parallel:
                continue
            for name, cls in members.items():
                if self.parallel(cls):
                    continue
                # starts nothing, beside a member that starts workers: it steps its items itself.
                # What it counts: its count parameter, else its and its registry's names
                # (BaseEnvManager in ENV_MANAGER_REGISTRY counts envs by len(env_fns))
                count = serial.get(cls) or f"{cls.rsplit('.', 1)[-1]} {group.split('.', 1)[0]}"
                serial_names.setdefault(name, (group, cls, count, parallel[:MAX_FAMILY], cls in serial))
        if not serial_names:
            return
        # parallel members by name, with the serial members of their registry: a call that builds
        # one of those by hand ignores a config that picks the parallel one (QG106)
        parallel_names: dict[str, tuple[str, str, list[str], str]] = {}
        for name, (group, cls, count, _parallel, _sized) in serial_names.items():
            for other, member in self.registries[group].items():
                if self.parallel(member):
                    entry = parallel_names.setdefault(other, (group, member, [], count))
                    if entry[0] == group:
                        entry[2].append(cls)
        strings = list(strings)
        siblings = _sibling_picks(strings, serial_names, parallel_names)
        defines = {(s.file, s.line): s for s in result.sites if s.role == "define"}
        for rel, key, line, col, value, source, kind in strings:
            if value not in parallel_names and value not in serial_names:
                continue
            site = defines.get((rel, line))
            if site is None:
                site = Site(role="define", file=rel, line=line, column=col, key=key, value=value,
                            source=source or line_of(rel, line), kind=kind, detail={"via": "registry-name"})
                result.sites.append(site)
                defines[(rel, line)] = site
            if value not in serial_names:  # a name serial in one registry is read as that pick
                group, cls, serial_members, count = parallel_names[value]
                site.detail["selects"] = {"registry": group, "name": value, "backend": cls, "serial": False,
                                          "count": count, "serial_members": sorted(set(serial_members))}
                continue
            group, cls, count, parallel, sized = serial_names[value]
            site.detail["selects"] = {"registry": group, "name": value, "backend": cls, "serial": True,
                                      "count": count, "parallel": parallel, "sized": sized}
            picks = siblings.get(_folder_key(rel, key))
            if picks:  # what the other configs of its folder choose for the same key
                others = {"parallel": len(picks["parallel"] - {rel}), "serial": len(picks["serial"] - {rel})}
                if others["parallel"] or others["serial"]:
                    site.detail["selects"]["siblings"] = others


def _folder_key(rel: str, key: str) -> tuple[str, str]:
    """Configs of one folder that set the same key: `env_manager.type` in every
    dizoo/mujoco/config/*.py, whatever each file calls its top-level dict."""
    return rel.rpartition("/")[0], ".".join(key.lower().split(".")[-2:])


def _sibling_picks(strings, serial_names, parallel_names) -> dict[tuple, dict[str, set]]:
    """Per folder and key: the files that pick a serial registry member, and those that pick a
    parallel one. Forty CartPole configs on `base` are the folder's choice for a cheap env;
    one BipedalWalker config on `base` among ten on `subprocess` is an outlier."""
    out: dict[tuple, dict[str, set]] = {}
    for rel, key, _line, _col, value, _source, _kind in strings:
        side = "serial" if value in serial_names else "parallel" if value in parallel_names else None
        if side:
            out.setdefault(_folder_key(rel, key), {"serial": set(), "parallel": set()})[side].add(rel)
    return out


def _last_word(name: str) -> str:
    """The last CamelCase word of a class name: `Envs` of `ToolUseEnvs`."""
    m = re.search(r"[A-Z][a-z0-9]+$", name)
    return m.group(0) if m else ""

"""The project's call graph, from the names each function calls or passes on (the Python
extractor's ``meta["reaches"]``): which functions a call of one may run.

    graph = for_result(result)              # built once per scan result
    graph.reachable("pkg.demo.train_ppo")   # (full names, project names it does not know)

Resolution over-approximates where the code does not say (a method called on an object of
unknown class reaches every project method of that name; a class reaches all its methods), so
"not reachable" is the claim to trust. A project name it does not know (a file the scan did
not read: it holds no knob word) is listed, for the caller to weigh.
"""

from __future__ import annotations

MAX_NODES = 5000  # functions visited from one start
MAX_WORK = 50_000  # call targets looked at from one start (a tree of many projects scanned as one)


def for_result(result) -> "CallGraph":
    """The call graph of a scan's result, built once for the rules that ask for it."""
    cached = _LAST.get("graph")
    if cached is None or _LAST.get("meta") is not result.meta:
        cached = CallGraph(result.meta)
        _LAST.update(meta=result.meta, graph=cached)
    return cached


_LAST: dict = {}  # the last result's meta and its graph: rules run one scan at a time


class CallGraph:
    def __init__(self, meta: dict):
        self.edges: dict[str, list[str]] = {}  # full name -> tokens it calls or passes on
        self.module_of: dict[str, str] = {}  # file -> module
        self.by_leaf: dict[str, set[str]] = {}
        self.names: set[str] = set()
        roots: set[str] = set()
        self.classes: set[str] = set()
        self.bases: dict[str, list[str]] = {}  # class -> the project names of its bases
        for rel, m in meta.items():
            flow = m.get("flow") if isinstance(m, dict) else None
            if not isinstance(flow, dict) or not flow.get("module"):
                continue
            module = flow["module"]
            self.classes |= set(flow.get("classes") or ())
            self.bases.update((c, list(b)) for c, b in (flow.get("bases") or {}).items() if isinstance(b, list))
            self.module_of[rel] = module
            roots.add(module.split(".")[0])
            fulls = {self.full(module, q) for q in m.get("reaches") or ()} | set(flow.get("classes") or ())
            for full in fulls:
                self.names.add(full)
                self.by_leaf.setdefault(full.rsplit(".", 1)[-1], set()).add(full)
            for qual, tokens in (m.get("reaches") or {}).items():
                self.edges[self.full(module, qual)] = [(module, qual, t) for t in tokens]
        self.roots = roots
        self._reverse: dict[str, set[str]] | None = None  # callee -> callers, built on first use
        self._called: set[str] | None = None  # the last name of every call, built on first use
        self._resolved: dict[tuple, set[str] | None] = {}
        self._modules = set(self.module_of.values())
        self._packages = {m.rpartition(".")[0] for m in self._modules}
        self.owner = {n: n.rpartition(".")[0] for n in self.names if n.rpartition(".")[0] in self.classes}
        # a class reaches its methods: its __init__ runs, the others may be called on the object
        self.members: dict[str, set[str]] = {}
        for name in self.names:
            parent = name.rsplit(".", 1)[0]
            if parent in self.names and parent.rsplit(".", 1)[-1][:1].isupper():
                self.members.setdefault(parent, set()).add(name)

    @staticmethod
    def full(module: str, qual: str) -> str:
        return f"{module}.{qual}" if qual != "<module>" else f"{module}.<module>"

    def of(self, rel: str, qual: str) -> str | None:
        module = self.module_of.get(rel)
        return self.full(module, qual or "<module>") if module is not None else None

    def reachable(self, start: str, exact: bool = False, careful: bool = False,
                  goals: list[set[str]] | None = None) -> tuple[set[str], list[str]] | None:
        """(the functions a call of START may run, the project names met that the graph does not
        know: functions of files the scan did not read, which hold no knob word), or None past
        MAX_NODES (or MAX_WORK). EXACT: only calls the code names (a function of this module, or one imported
        by name), never every project function of a called method's name: what START surely
        runs, not what it may run. CAREFUL: a name of a module of a package the graph knows, which
        the scan did not read (`baselines.ppo1.pposgd_simple.learn`), is unknown, not every
        project function called `learn`; and a method called on an object of unknown class
        (`self.optim.step()`) is a project method of that name only of a class the path makes
        (names, as `Trainer(...)` or `ray.remote(Trainer)`) or one such a class inherits from.
        GOALS: sets of functions; the walk stops once it has met one of each (what it returns
        is then only part of what START may run)."""
        seen = {start}
        open_goals = [g for g in goals or () if start not in g]
        wanted = set().union(*open_goals) if open_goals else set()
        unknown: list[str] = []
        todo = [start]
        made: set[str] = set()  # the classes the path makes, and their ancestors
        waiting: dict[str, set[str]] = {}  # class -> its methods called by name, until the path makes it

        def visit(targets) -> None:
            for t in targets:
                if t in seen:
                    continue
                seen.add(t)
                todo.append(t)
                if t in wanted:
                    open_goals[:] = [g for g in open_goals if t not in g]
                if careful and t in self.classes:
                    for cls in self.ancestors(t) - made:
                        made.add(cls)
                        visit(waiting.pop(cls, ()))

        work = 0  # targets looked at: a name many project methods share costs as many
        while todo:
            if len(seen) > MAX_NODES or work > MAX_WORK:
                return None
            if goals and not open_goals:
                break
            for module, qual, token in self.edges.get(todo.pop(), ()):
                targets = self.resolve(module, qual, token, exact, careful)
                if targets is None:
                    unknown.append(token)
                    continue
                work += len(targets)
                if careful and "." not in token and not self.resolve(module, qual, token, exact=True):
                    deferred = set()
                    for t in targets:
                        owner = self.owner.get(t)
                        if owner is not None and owner not in made:
                            deferred.add(t)
                            waiting.setdefault(owner, set()).add(t)
                    if deferred:
                        dropped = set(deferred)
                        for t in deferred:
                            dropped |= self.members.get(t, set())
                        targets = [t for t in targets if t not in dropped]
                visit(targets)
        return seen, unknown

    def ancestors(self, cls: str) -> set[str]:
        """CLS and the project classes it inherits from."""
        out, todo = set(), [cls]
        while todo:
            c = todo.pop()
            if c in out:
                continue
            out.add(c)
            for base in self.bases.get(c, ()):
                todo.extend(self.by_suffix(base) or ({base} if base in self.classes else ()))
        return out & self.classes | {cls}

    def _exported(self, token: str) -> set[str]:
        """`fastchat.model.add_model_args`, where fastchat/model/__init__.py re-exports it from
        one of the package's modules: the one module-level name of that leaf in the package's
        own modules (its __init__ names no knob and is unread). Empty when none or several."""
        package, _, leaf = token.rpartition(".")
        if package not in self._packages:
            return set()
        found = {n for n in self.by_leaf.get(leaf, ()) if n.rpartition(".")[0] in self._modules
                 and n.rpartition(".")[0].rpartition(".")[0] == package}
        return found if len(found) == 1 else set()

    def _unread_module(self, name: str) -> bool:
        """NAME is no module the graph knows, and its package holds one it knows."""
        return name not in self._modules and name.rpartition(".")[0] in self._packages

    def callers(self, targets: set[str]) -> set[str]:
        """The functions from which a call surely runs one of TARGETS (TARGETS too), up to
        MAX_NODES: the reverse of reachable(exact=True)."""
        reverse = self._reverse_edges()
        seen = set(targets)
        todo = list(targets)
        while todo and len(seen) <= MAX_NODES:
            for caller in reverse.get(todo.pop(), ()):
                if caller not in seen:
                    seen.add(caller)
                    todo.append(caller)
        return seen

    def called_names(self) -> set[str]:
        """The last name of every token any function calls (`add_model_args` of
        `model.add_model_args(parser)`), resolved or not: a name absent here is called nowhere the
        scan read."""
        if self._called is None:
            self._called = {token.rsplit(".", 1)[-1] for edges in self.edges.values() for _m, _q, token in edges}
        return self._called

    def called_from_elsewhere(self, target: str | None) -> bool:
        """Does a function of another module call TARGET, by a name the graph resolves exactly
        (`from train import parse_args`)? A name the graph does not know: maybe."""
        if target is None:
            return True
        module = target.rsplit(".", 1)[0]
        return any(not caller.startswith(module + ".") for caller in self._reverse_edges().get(target, ()))

    def _reverse_edges(self) -> dict[str, set[str]]:
        """callee -> the functions that call it by a name resolved exactly, built on first use."""
        if self._reverse is None:
            self._reverse = {}
            for fn, edges in self.edges.items():
                for module, qual, token in edges:
                    for t in self.resolve(module, qual, token, exact=True) or ():
                        self._reverse.setdefault(t, set()).add(fn)
        return self._reverse

    def resolve(self, module: str, qual: str, token: str, exact: bool = False,
                careful: bool = False) -> set[str] | None:
        """The project functions TOKEN may run, seen from QUAL in MODULE; None for a project
        name the graph does not know (a file the scan did not read). EXACT: see reachable()."""
        key = (module, qual, token, exact, careful)
        if key not in self._resolved:  # (the walks of many scripts resolve the same calls)
            self._resolved[key] = self._resolve(module, qual, token, exact, careful)
        return self._resolved[key]

    def _resolve(self, module: str, qual: str, token: str, exact: bool, careful: bool) -> set[str] | None:
        if "." in token:
            if token in self.names:
                return {token} | self.members.get(token, set())
            # `from utils import make_env` in td3/td3.py: the script's folder comes first on
            # sys.path, so td3/utils.py, not every other folder's utils.py
            sibling = f"{module.rpartition('.')[0]}.{token}" if "." in module else None
            if sibling in self.names:
                return {sibling} | self.members.get(sibling, set())
            if exact and sibling and self._unread_module(sibling.rpartition(".")[0]):
                return None  # (`from utils import f` beside a script: its own utils.py, unread)
            suffix = self.by_suffix(token)
            if suffix and not (exact and len(suffix) > 1):
                return suffix | {m for n in suffix for m in self.members.get(n, ())}
            if token.split(".")[0] not in self.roots:
                return set()  # torch.save: not the project's
            exported = self._exported(token)
            if exported:
                return exported | {m for n in exported for m in self.members.get(n, ())}
            if exact or careful and self._unread_module(token.rpartition(".")[0]):
                return None
            # `from pkg import train_agent`, re-exported by pkg/__init__.py: by its name
            named = set(self.by_leaf.get(token.rsplit(".", 1)[-1], ()))
            return named | {m for n in named for m in self.members.get(n, ())} if named else None
        cls = qual.rsplit(".", 1)[0] if "." in qual else ""
        for c in (f"{module}.{cls}.{token}" if cls else None, f"{module}.{token}"):
            if c and c in self.names:
                return {c} | self.members.get(c, set())
        if exact:
            return set()
        # a method called on an object of unknown class: every project function of that name
        out = set(self.by_leaf.get(token, ()))
        return out | {m for n in out for m in self.members.get(n, ())}

    def by_suffix(self, token: str) -> set[str]:
        """`huggingface.process` (a relative import) -> `pkg.dataset.huggingface.process`."""
        leaf = token.rsplit(".", 1)[-1]
        return {n for n in self.by_leaf.get(leaf, ()) if n.endswith("." + token)}

"""Consumers for the Python extractor: a catalogued backend call -> consume sites.

A mixin of the one visitor in python_code.py (it uses its emit / qual / ref_key). The data
(which argument carries the count, seriality, twins) is rules/consumers.yaml.
"""

from __future__ import annotations

import ast
from typing import Any

from auditor.extract.py_refs import NOT_LITERAL, chain, literal, range_arg
from auditor.model import Site


class ConsumeMixin:
    def consume(self, node: ast.Call, consumer, via_variable: str | None = None,
                condition: str | None = None, mapped: dict | None = None) -> list[Site]:
        kws = {k.arg: k.value for k in node.keywords if k.arg}
        # keywords that arrive through `**kwargs` of a local mapping, with the conditions they
        # were written under: `kwargs["num_proc"] = n` only `if not streaming`
        through = {}
        for param, (conds, value, name) in (mapped or {}).items():
            if param not in kws:
                kws[param] = value
                call_conds = tuple(self.function().conds)
                extra_conds = [c for c in conds if c not in call_conds]
                through[param] = {"via_mapping": name,
                                  "mapping_condition": " and ".join(extra_conds) if extra_conds else None}
        positional = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                break  # positions after *args are unknown
            positional.append(a)
        splats = [k.value for k in node.keywords if k.arg is None]

        def arg(param: str, position: int | None) -> ast.AST | None:
            if param in kws:
                return kws[param]
            if position is not None and position < len(positional):
                return positional[position]
            return None

        common: dict[str, Any] = {"backend": consumer.backend, "kind": consumer.kind}
        if via_variable:
            common["via_variable"] = via_variable
        if condition:
            common["backend_condition"] = condition
        serial: Any = consumer.serial
        defaulted: dict[str, Any] = {}
        selected: dict[str, Any] = {}
        selector_sites = []
        for sel in consumer.selectors:
            a = arg(sel.param, sel.position)
            if a is None:
                if splats:
                    continue  # may come from the mapping
                s = sel.serial_for(sel.default)
                defaulted[sel.param] = sel.default
                selector_sites.append((sel, None, sel.default))
            else:
                v = literal(a)
                chosen = v if v is not NOT_LITERAL else self.qual(a)
                s = sel.serial_for(chosen) if (v is not NOT_LITERAL or chosen) else None
                selected[sel.param] = chosen if chosen is not None or v is not NOT_LITERAL else self.text(a)
                selector_sites.append((sel, a, v))
            if s is not None:
                serial = s
        if via_variable and consumer.serial and condition and " is None" in condition:
            var = condition.split(" is None", 1)[0].strip()
            if var in self.function().params:
                defaulted[var] = None
        if consumer.twin:
            common["twin"] = consumer.twin
            if consumer.twin_param:
                common["twin_param"] = consumer.twin_param
        for name in consumer.record:
            if name in kws:
                v = literal(kws[name])
                common.setdefault("options", {})[name] = v if v is not NOT_LITERAL else self.text(kws[name])
        if consumer.backend == "ray.init":
            fn = self.function()
            guard = [c for c in fn.conds if "is_initialized" in c]
            if guard:
                common["guard"] = guard[-1]
        if consumer.pool:
            common["pool"] = True
            if consumer.pool_use:
                common["pool_use"] = consumer.pool_use
        if any("is_initialized" in c for c in self.function().conds) and self.guard_announced():
            common["guard_announced"] = True  # the if nodes are read only under such a guard
        sites: list[Site] = []

        def site(key: str, where: ast.AST, value: Any, param: str, count_serial: Any, **extra: Any) -> Site:
            d = dict(common)
            if self._binding:
                d["bound_to"] = self._binding  # `eval_env = ParallelEnv(1, ...)`: what the backend is for
            if count_serial == "single":
                d["serial_for_single"] = True
                count_serial = value == 1
            d.update({"param": param, "serial": bool(count_serial)})
            if defaulted:
                d["defaulted"] = dict(defaulted)
            if selected:
                d["selected"] = dict(selected)
            d.update({k: v for k, v in extra.items() if v is not None})
            s = self.emit("consume", where, key, value, **d)
            sites.append(s)
            return s

        explicit = []
        omits = []  # counts the call leaves to the backend's default (none when a mapping is splatted)
        for count in consumer.counts:
            a = arg(count.param, count.position)
            if a is None:
                if not splats:
                    omits.append(count.param)
                fn = self.function()
                if count.loop and fn.loops:
                    loop = fn.loops[-1]
                    v = literal(loop)
                    key = self.ref_key(loop, knob_only=True) or count.knob
                    # (`for _ in range(args.n_explorer)`: a reference that is no knob, as below)
                    ref = self.ref_key(loop) if key == count.knob and v is NOT_LITERAL else None
                    site(key, node, None if v is NOT_LITERAL else v, count.param, serial, literal=v is not NOT_LITERAL,
                         expr=self.text(loop), loop=True, ref=ref)
                    # one Process per turn of `range(n)`: n is the count a caller's argument sets
                    self.flow_sinks.append((len(self.sites) - 1, loop, fn.qualname, False))
                elif count.emit_default and not splats and not any(arg(k, i) is not None for k, i in consumer.attach):
                    # (`ray.init(address="auto")`, `ray.init("auto")` join a running cluster: its resources
                    # are that cluster's)
                    site(count.knob, node, count.default, count.param, serial, literal=True, omitted=True,
                         defaulted={**defaulted, count.param: count.default})
                continue
            explicit.append(count.param)
            v = literal(a)
            if count.measure == "len":
                v = self.length(a)
            choice = None
            if isinstance(a, ast.IfExp) and isinstance(literal(a.body), int) and isinstance(literal(a.orelse), int):
                # `num_workers=0 if cfg.http_endpoint else 8`: literals both ways; the larger is the count
                # that runs unless the condition says otherwise
                big, small, cond = (a.body, a.orelse, f"not ({self.text(a.test)})") \
                    if literal(a.body) >= literal(a.orelse) else (a.orelse, a.body, self.text(a.test))
                v = literal(big)
                choice = f"{literal(small)} when `{cond}`"
            key = (self.size_key(a) if count.measure == "len" else None) or self.ref_key(a, knob_only=True) \
                or count.knob
            extra: dict[str, Any] = {}
            if key == count.knob and literal(a) is NOT_LITERAL:
                extra["ref"] = self.ref_key(a)  # a reference that is no knob: cfg.runner_cpus
            if isinstance(a, ast.Call) and (self.qual(a.func) in ("min", "max")):
                extra["cap"] = self.text(a)
            if self.has_cpu_count(a):
                extra["cpu_count"] = True
            extra.update({k: v for k, v in through.get(count.param, {}).items() if v is not None})
            if choice:
                extra["otherwise"] = choice
            if isinstance(v, int) and v >= 1 and any(
                    b is not a and isinstance(b, (ast.List, ast.Tuple)) and self.length(b) == v
                    for b in [*kws.values(), *positional]):
                # `optimize(inputs=[val_file], num_workers=1)`: one worker per item the call is given
                extra["per_item"] = True
            site(key, a, None if v is NOT_LITERAL else v, count.param, serial,
                 literal=literal(a) is not NOT_LITERAL or choice is not None, expr=self.text(a), **extra)
            self.flow_sinks.append((len(self.sites) - 1, a, self.function().qualname, count.measure == "len"))
        for sel, a, v in selector_sites:
            if not sel.site:
                continue
            if a is None:
                site(sel.param, node, sel.default, sel.param, serial, literal=True, omitted=True,
                     resolves_to=serial_default_target(consumer))
            else:
                key = self.ref_key(a, knob_only=True) or sel.param
                site(key, a, None if v is NOT_LITERAL else v, sel.param, serial, literal=v is not NOT_LITERAL,
                     expr=self.text(a), resolves_to=self.qual(a))
        if omits and explicit:
            for s in sites:
                if s.detail.get("param") in explicit:
                    s.detail["omits"] = omits
        for m in splats:
            key = self.ref_key(m) or self.text(m)
            # a local mapping built here, key by key (`init_params = {"log_to_driver": v}`): its
            # keys are known, and those that are counts are sites of their own
            known = isinstance(m, ast.Name) and self.visible_mapping(m.id) is not None
            site(key, m, None, "**", serial, splat=True, expr=self.text(m), **({"mapping_known": True} if known else {}))
        # a knob keyword followed by a **mapping that may carry the same key (QG110)
        order = node.keywords
        for i, k in enumerate(order):
            if k.arg in explicit:
                later = [self.text(x.value) for x in order[i + 1:] if x.arg is None]
                if later:
                    for s in sites:
                        if s.detail.get("param") == k.arg:
                            s.detail["kwargs_after"] = later
        for param, position in consumer.workers:
            a = arg(param, position)
            if a is not None:
                self.mark_worker(a)
        if consumer.pool:
            self.facts.pool_sites[id(node)] = sites
        return sites

    def guard_announced(self) -> bool:
        """Under `if X.is_initialized(): log(...) else: init(...)` (or `if not ...:` with the
        log in the else): the branch taken when the backend already runs says so."""
        for if_node, in_body in reversed(self.function().ifs):
            if "is_initialized" not in self.text(if_node.test):
                continue
            other = if_node.orelse if in_body else if_node.body
            # a statement of that branch itself, not one under a further test (a namespace mismatch)
            return any(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                       and _call_name(st.value.func) in ANNOUNCERS for st in other)
        return False

    def length(self, node: ast.AST) -> Any:
        """Length of an env-fns list when static: [f, g], [f] * 4, [f for _ in range(4)]."""
        if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return len(node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for seq, n in ((node.left, node.right), (node.right, node.left)):
                if isinstance(seq, (ast.List, ast.Tuple)) and isinstance(literal(n), int):
                    return len(seq.elts) * literal(n)
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            r = range_arg(node.generators[0].iter)
            if r is not None and isinstance(literal(r), int):
                return literal(r)
        return NOT_LITERAL

    def bind_pool(self, name: str, value: ast.AST) -> None:
        if isinstance(value, ast.Call):
            self.facts.pool_names[(self.function().qualname, name)] = id(value)

    def mark_worker(self, node: ast.AST) -> None:
        """Record the functions a worker process runs: target=f, initializer=f, env fns."""
        fn = self.function()
        if isinstance(node, (ast.List, ast.Tuple)):
            for e in node.elts:
                self.mark_worker(e)
        elif isinstance(node, ast.BinOp):
            self.mark_worker(node.left)
            self.mark_worker(node.right)
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            self.mark_worker(node.elt)
        elif isinstance(node, ast.Lambda):
            for sub in ast.walk(node.body):
                if isinstance(sub, ast.Call):
                    self.facts.add_worker(fn.qualname, fn.cls, sub.func)
        elif isinstance(node, ast.Call):
            q = self.qual(node.func) or ""
            if q.endswith("partial") and node.args:
                self.facts.add_worker(fn.qualname, fn.cls, node.args[0])
            else:
                self.facts.add_worker(fn.qualname, fn.cls, node.func, closures=True)
        else:
            # `for i in range(env_num): Process(target=self._inference_loop, ...)`: N copies
            self.facts.add_worker(fn.qualname, fn.cls, node, copies=fn.loop_depth > 0)

    def local_backends(self, name: str) -> list:
        for f in reversed(self.frames):
            if name in f.backends:
                return f.backends[name]
        return []

    def backend_refs(self, value: ast.AST) -> list:
        """[(Consumer, condition)] for a value that is a backend class (or an IfExp of two)."""
        if isinstance(value, ast.IfExp):
            test = self.text(value.test)
            return [(c, test) for c, _ in self.backend_refs(value.body)] + \
                   [(c, f"not ({test})") for c, _ in self.backend_refs(value.orelse)]
        if isinstance(value, (ast.Name, ast.Attribute)):
            c = self.cat.lookup(self.qual(value))
            if c is not None:
                fn = self.function()
                return [(c, " and ".join(fn.conds) or None)]
        return []

    def record_switch(self, node: ast.IfExp | ast.If) -> None:
        """`SyncVectorEnv if cfg.env.sync_env else AsyncVectorEnv`, also as a helper's `return`,
        or an if statement whose two branches build one each (`if self.use_subproc: env =
        SubprocVectorEnv(fns) else: env = DummyVectorEnv(fns)`): the test is a serial / parallel
        switch, whatever its name. Kept in meta["switches"] with the value that picks the serial
        backend, for the configured values to be judged."""
        if isinstance(node, ast.If):
            branches = [_built(node.body), _built(node.orelse)]
        else:
            branches = [node.body, node.orelse]
        if not all(isinstance(b, (ast.Name, ast.Attribute)) for b in branches):
            return
        picks = [self.cat.lookup(self.qual(b)) for b in branches]
        test, negated = node.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        leaf = switch_leaf(test)
        if not leaf:
            return
        # `def __init__(self, name, num_envs=1, single_process=True): if single_process: ...`: the
        # default every caller that leaves the parameter out gets
        fn = self.function()
        default = fn.params.get(test.id) if isinstance(test, ast.Name) else None
        own = {"param_default": default.value, "function": fn.qualname} \
            if isinstance(default, ast.Constant) and isinstance(default.value, bool) else {}
        if picks[0] is None or picks[1] is None:
            # a project class on one side or both (`Parallel(env, "process")` / `Damy(env)`):
            # which of them starts workers is known only once every file is read (flow/backends.py)
            names = [self.qual(b) or self.text(b) for b in branches]
            if any(p is None and not n.rsplit(".", 1)[-1][:1].isupper() for n, p in zip(names, picks)):
                return  # a value picked (`cfg.traindir`), not a class
            pending = self.meta.setdefault("switch_classes", [])
            if names[0] != names[1] and len(pending) < MAX_SWITCHES:
                pending.append({"line": node.lineno, "end": node.end_lineno or node.lineno,
                                "col": node.col_offset + 1, "test": self.text(node.test), "leaf": leaf,
                                "negated": negated, "targets": _targets(node),
                                "sides": [{"name": n, **({"backend": p.backend, "serial": p.serial, "kind": p.kind}
                                                         if p is not None else {})}
                                          for n, p in zip(names, picks)], **own})
            return
        if picks[0].serial == picks[1].serial:
            return
        switches = self.meta.setdefault("switches", [])
        if len(switches) >= MAX_SWITCHES:
            return
        serial, parallel = (picks[0], picks[1]) if picks[0].serial else (picks[1], picks[0])
        switches.append({"line": node.lineno, "end": node.end_lineno or node.lineno, "col": node.col_offset + 1,
                         "test": self.text(node.test),
                         "leaf": leaf, "serial_when": picks[0].serial != negated,
                         "serial": serial.backend, "parallel": parallel.backend, "kind": serial.kind, **own})

    def size_key(self, node: ast.AST) -> str | None:
        """The knob that sizes a list of env fns: [f(i) for i in range(n_envs)], [f] * n_envs."""
        if isinstance(node, ast.Name):
            for f in reversed(self.frames):
                if node.id in f.sized:
                    return f.sized[node.id]
            return None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and node.generators:
            r = range_arg(node.generators[0].iter)
            return self.ref_key(r, knob_only=True) if r is not None else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self.ref_key(node.right, knob_only=True) or self.ref_key(node.left, knob_only=True)
        return None


MAX_SWITCHES = 50  # switch facts kept per file


ANNOUNCERS = frozenset({"print", "info", "warning", "warn", "log", "error", "debug", "log_rank", "print_rank_0"})


def _call_name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _targets(node: ast.AST) -> list[str]:
    """The names a switch's branches assign (`train_envs`, `eval_envs`): what it makes."""
    if not isinstance(node, ast.If):
        return []
    return sorted({t.id for stmt in (*node.body, *node.orelse) if isinstance(stmt, ast.Assign)
                   for t in stmt.targets if isinstance(t, ast.Name)})[:MAX_BRANCH]


MAX_BRANCH = 4  # statements of a branch that builds one backend (train and eval envs, ...)


def _built(body: list[ast.stmt]) -> ast.AST | None:
    """The class a short branch builds, each statement the same one: `env =
    SubprocVectorEnv(fns)`, `return DummyVecEnv(fns)`, `envs = [Parallel(e) for e in envs]`, or
    the class picked to be built further down (`wrapper = DummyVecEnv`); else None."""
    if not body or len(body) > MAX_BRANCH:
        return None
    found = None
    for stmt in body:
        if not isinstance(stmt, (ast.Assign, ast.Return)) or stmt.value is None:
            return None
        value = stmt.value.elt if isinstance(stmt.value, (ast.ListComp, ast.GeneratorExp)) else stmt.value
        if isinstance(value, ast.Call):
            built = value.func
        elif isinstance(value, (ast.Name, ast.Attribute)) and isinstance(stmt, ast.Assign):
            built = value
        else:
            return None
        if found is not None and ast.dump(found) != ast.dump(built):
            return None
        found = built
    return found


def switch_leaf(test: ast.AST) -> str | None:
    """The setting a test reads: `sync_env`, `cfg.env.sync_env`, `cfg["env"]["sync_env"]`."""
    if isinstance(test, ast.Name):
        return test.id
    if not isinstance(test, (ast.Attribute, ast.Subscript)):
        return None
    parts, _root = chain(test)
    return parts[-1] if parts else None


def serial_default_target(consumer) -> str | None:
    """What an omitted selector falls back to (make_vec_env: DummyVecEnv)."""
    for sel in consumer.selectors:
        for value, serial in sel.serial_by:
            if serial is True and isinstance(value, str) and "." in value:
                return value
    return None


def pool_name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None

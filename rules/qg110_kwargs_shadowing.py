"""QG110 kwargs-shadowing: a later **mapping can override an explicit parallelism argument."""

from auditor.lint.base import Example, Rule, show


class KwargsShadowing(Rule):
    CODE = "QG110"
    NAME = "kwargs-shadowing"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{param}={value} is passed explicitly, but {decider}"
    RATIONALE = """\
In a dict display `{"num_workers": 8, **extra}` a later `**mapping` that carries the same key
replaces the explicit value without a word; the reader sees 8, the mapping decides. (In a
plain call, `f(num_workers=8, **extra)`, a duplicate key raises TypeError, which is loud, so
that is not reported.) A display written on the spot whose keys are all visible
(`**({"mail-type": t} if mail else {})`) cannot carry a key it does not name.

The same holds for a dict built with the explicit value and then `.update(mapping)`-ed, and for
an explicit value written only when the mapping lacks the key (`if "tp" not in kwargs:
kwargs["tp"] = cfg.tp`, `kwargs.setdefault("tp", cfg.tp)`): two settings of one thing, and the
mapping wins without a word. A literal, or a value computed on the spot (`get_device_count()`),
set before a user mapping is a default that mapping is meant to replace: only a configured value
(`cfg.tp`, `self.cpus_per_task`) counts as a second setting. So a literal in a display
splatting only the function's own `**kwargs` (`def default(**kwargs): return
Scheduling(**{"cpu": 16, **kwargs})`) is not reported: the caller's keywords are meant to win.

Put the explicit argument last, or remove the key from the mapping. A mapping that is a
call's result (`**_force_on_current_node()`) is a note: its keys are not visible here."""
    VALID = [
        Example({"train.py": "from torch.utils.data import DataLoader\n"
                             "kwargs = {**user_kwargs, 'num_workers': 4}\n"
                             "loader = DataLoader(ds, **kwargs)\n"},
                "the explicit key comes last"),
        Example({"train.py": "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg.num_workers, **extra)\n"},
                "a plain call: a duplicate key raises TypeError, which is loud"),
        Example({"constants.py": "import os\n"
                                 "_nccl_env = {}\n"
                                 "if os.environ.get('NVLS') == '1':\n"
                                 "    _nccl_env = {'NCCL_NVLS_ENABLE': '0'}\n"
                                 "RUNTIME_ENV = {'env_vars': {'TOKENIZERS_PARALLELISM': 'true', **_nccl_env}}\n"},
                "a module dict that never holds the key"),
        Example({"slurm.py": "def sbatch_args(self):\n"
                             "    return {'cpus-per-task': self.cpus_per_task,\n"
                             "            **({'mail-type': self.mail_type} if self.mail_user else {})}\n"},
                "a display written on the spot whose keys are all visible, none of them the explicit one"),
        Example({"loader.py": "def loader_kwargs(kwargs):\n"
                              "    kwargs.setdefault('num_workers', 4)\n"
                              "    if 'prefetch_workers' not in kwargs:\n"
                              "        kwargs['prefetch_workers'] = 2\n"
                              "    return kwargs\n"},
                "a literal default filled in where the caller said nothing"),
        Example({"engine.py": "def engine_args(model_args, vllm_config):\n"
                              "    args = {'model': model_args.name, 'tensor_parallel_size': get_device_count() or 1}\n"
                              "    args.update(vllm_config)\n"
                              "    return args\n"},
                "a computed default the user's mapping is meant to replace"),
        Example({"system_api.py": "import dataclasses\n"
                                  "@dataclasses.dataclass\n"
                                  "class Scheduling:\n"
                                  "    cpu: int\n"
                                  "    num_workers: int = 1\n"
                                  "    @staticmethod\n"
                                  "    def default(**kwargs):\n"
                                  "        return Scheduling(**{'cpu': 16, 'num_workers': 4, **kwargs})\n"},
                "literal defaults before the function's own **kwargs, which the caller fills to replace them"),
    ]
    INVALID = [
        Example({"train.py": "from torch.utils.data import DataLoader\n"
                             "kwargs = {'num_workers': 4, **user_kwargs}\n"
                             "loader = DataLoader(ds, **kwargs)\n"},
                "a later splat in a dict display replaces num_workers", expect=[("train.py", 2)]),
        Example({"actors.py": "opts = {'num_cpus': 0, **_force_on_current_node(), 'max_restarts': -1}\n"},
                "a helper's result whose keys are not visible here: a note", expect=[("actors.py", 1)],
                severity="note"),
        Example({"engine.py": "def engine_args(self, engine_kwargs):\n"
                              "    return {'model': self.config.model,\n"
                              "            'tensor_parallel_size': self.config.tensor_model_parallel_size,\n"
                              "            **engine_kwargs}\n"},
                "a configured value before a splat", expect=[("engine.py", 3)]),
        Example({"slurm.py": "def sbatch_args(self):\n"
                             "    return {'cpus-per-task': self.cpus_per_task,\n"
                             "            **({'mail-type': self.mail_type} if self.mail_user else {}),\n"
                             "            **self.extra_sbatch_args}\n"},
                "a visible display that lacks the key, then a mapping that may carry it: the finding names that one",
                expect=[("slurm.py", 2)]),
        Example({"executor.py": "import ray\n"
                                "def launch(self, task):\n"
                                "    options = {'num_cpus': self.cpus_per_task, 'num_gpus': self.gpus_per_task}\n"
                                "    if self.ray_remote_kwargs:\n"
                                "        options.update(self.ray_remote_kwargs)\n"
                                "    return ray.remote(task).options(**options).remote()\n"},
                "a dict of configured values updated from a user mapping", expect=[("executor.py", 3)]),
        Example({"server.py": "def command(self):\n"
                              "    model_kwargs = self.config.model_kwargs.copy()\n"
                              "    if self.config.tp > 1 and 'tensor-parallel-size' not in model_kwargs:\n"
                              "        model_kwargs['tensor-parallel-size'] = self.config.tp\n"
                              "    return model_kwargs\n"},
                "a configured value written only where the mapping lacks the key", expect=[("server.py", 4)]),
    ]

    def check(self, result):
        for site in result.sites:
            after = site.detail.get("kwargs_after")
            if not after or site.kind != "python" or site.detail.get("via") != "dict":
                continue  # in a plain call a duplicate keyword raises TypeError: loud, not silent
            if site.detail.get("callers_kwargs"):
                continue  # a literal default before the function's own **kwargs: the caller's to replace
            mapping = after[0] if isinstance(after, (list, tuple)) else after
            value = site.detail.get("expr") or (show(site.value) if site.value is not None else site.key)
            param = site.detail.get("param") or site.leaf
            yield self._finding(site.file, site.line, site.column, site.key, param, value, str(mapping).lstrip("*"),
                                "splat", related=[site])
        for rel, meta in sorted(result.meta.items()):
            for fact in (meta.get("shadowed") or ()) if isinstance(meta, dict) else ():
                yield self._finding(rel, fact["line"], fact["col"], fact["key"], fact["key"], fact["expr"],
                                    fact["mapping"], fact["how"], function=fact.get("function"),
                                    opaque=fact.get("opaque", False))

    def _finding(self, file, line, column, knob, param, value, mapping, how, related=(), function=None, opaque=False):
        # a helper's result (`**_force_on_current_node()`, `args.update(profiler_args)` with
        # `profiler_args = build_profiler_args(...)`) usually carries other keys (placement,
        # scheduling, profiling); nothing here shows it carries this one
        opaque = opaque or mapping.rstrip().endswith(")")
        decider = {
            "splat": f"the later **{mapping} in the same dict display decides it when it carries {param}",
            "update": f"a later `.update({mapping})` replaces it when {mapping} carries {param}",
            "fill": f"it is only filled in when `{mapping}` lacks {param}: a {param} in {mapping} wins, silently",
        }[how]
        step = {"file": file, "line": line, "column": column, "kind": "sink", "role": "sink", "text": value}
        return self.finding(None, file=file, line=line, column=column, knob=knob, related=list(related),
                            param=param, value=value, decider=decider, flow=[step],
                            **({"severity": "note", "confidence": "low"} if opaque else {}))

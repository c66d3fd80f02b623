"""QG110 kwargs-shadowing: a later **mapping can override an explicit parallelism argument."""

from auditor.lint.base import Example, Rule, show


class KwargsShadowing(Rule):
    CODE = "QG110"
    NAME = "kwargs-shadowing"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{param}={value} is passed explicitly, but the later **{mapping} in the same dict display decides it when it carries {param}"
    RATIONALE = """\
In a dict display `{"num_workers": 8, **extra}` a later `**mapping` that carries the same key
replaces the explicit value without a word; the reader sees 8, the mapping decides. (In a
plain call, `f(num_workers=8, **extra)`, a duplicate key raises TypeError, which is loud, so
that is not reported.) The
reader sees 8; the mapping decides.

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
    ]
    INVALID = [
        Example({"train.py": "from torch.utils.data import DataLoader\n"
                             "kwargs = {'num_workers': 4, **user_kwargs}\n"
                             "loader = DataLoader(ds, **kwargs)\n"},
                "a later splat in a dict display replaces num_workers", expect=[("train.py", 2)]),
        Example({"actors.py": "opts = {'num_cpus': 0, **_force_on_current_node(), 'max_restarts': -1}\n"},
                "a helper's result whose keys are not visible here: a note", expect=[("actors.py", 1)],
                severity="note"),
    ]

    def check(self, result):
        for site in result.sites:
            after = site.detail.get("kwargs_after")
            if not after or site.kind != "python" or site.detail.get("via") != "dict":
                continue  # in a plain call a duplicate keyword raises TypeError: loud, not silent
            mapping = after[0] if isinstance(after, (list, tuple)) else after
            value = site.detail.get("expr") or (show(site.value) if site.value is not None else site.key)
            mapping = str(mapping).lstrip("*")
            # a helper's result (`**_force_on_current_node()`) usually carries other keys
            # (placement, scheduling); nothing here shows it carries this one
            opaque = mapping.rstrip().endswith(")")
            yield self.finding(site, knob=site.key, related=[site], param=site.detail.get("param") or site.leaf,
                               value=value, mapping=mapping,
                               **({"severity": "note", "confidence": "low"} if opaque else {}))

"""QG104 override-after-load: the loaded value is replaced, forced or capped afterwards."""

import re

from auditor.lint.base import CONFIG_KINDS, Example, Rule, is_config_define, is_test_file, show, where

_AUGMENTED = re.compile(r"^\s*[\w.\[\]'\"]+\s*(\*\*|//|[-+*/%])=")
_CONVERSION = re.compile(r"^\s*(int|float|str|bool)\(\s*[\w.\[\]'\"]+\s*\)\s*$")


class OverrideAfterLoad(Rule):
    CODE = "QG104"
    NAME = "override-after-load"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{knob}{alias} is replaced after loading: {effect}{condition}{configured}"
    RATIONALE = """\
A value that code reassigns after loading the configuration - forced to a literal, forced
under a condition (`if dataset_type == 'iterable': num_workers = 0`), capped with `min(...)`
or `os.cpu_count()` - is not the value the configuration shows. Nothing tells the user, so
they tune a number that does not run.

Make the override visible (log it, or fail), or move the decision into the configuration."""
    VALID = [
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "num_workers = cfg['data']['num_workers']\n"
                             "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=num_workers)\n"},
                "the loaded value is used as is"),
        Example({"train.py": "def build(num_workers=None):\n"
                             "    if num_workers is None:\n"
                             "        num_workers = 4\n"
                             "    return num_workers\n"},
                "filling in a missing value is a default, not an override"),
        Example({"gpus.py": "def count():\n"
                            "    num_gpus = 0\n"
                            "    try:\n"
                            "        num_gpus = probe().device_count\n"
                            "    except Exception:\n"
                            "        num_gpus = 0\n"
                            "    return num_gpus\n"},
                "a local computed afresh held no loaded value"),
        Example({"tests/test_train.py": "def test_small(cfg):\n"
                                        "    cfg.data.num_workers = cfg.data.num_workers\n"
                                        "    cfg.data.num_workers = 0\n"},
                "tests override configuration on purpose"),
        Example({"conf.yaml": "trainer:\n  nnodes: 2\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"
                             "cfg['reward']['nnodes'] = cfg['trainer']['nnodes']\n"},
                "copying a knob into a key no configuration sets is plumbing"),
    ]
    INVALID = [
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "num_workers = cfg['data']['num_workers']\n"
                             "if dataset_type == 'iterable':\n"
                             "    num_workers = 0\n"
                             "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=num_workers)\n"},
                "forced to 0 under a condition", expect=[("train.py", 3)]),
        Example({"train.py": "import os\n"
                             "def build(args):\n"
                             "    num_workers = args.num_workers\n"
                             "    num_workers = min(num_workers, os.cpu_count())\n"
                             "    return num_workers\n"},
                "capped by os.cpu_count()", expect=[("train.py", 4)]),
        Example({"conf.yaml": "data:\n  num_workers: 8\nlegacy:\n  num_workers: 2\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"
                             "cfg['data']['num_workers'] = cfg['legacy']['num_workers']\n"},
                "a legacy key copied over the configured one", expect=[("train.py", 3)]),
    ]

    def check(self, result):
        reads = {}  # (file, function, leaf) -> first line code reads it there
        for s in result.sites:
            if s.role == "read" and s.kind == "python":
                k = (s.file, s.detail.get("function"), s.leaf.lower())
                reads[k] = min(reads.get(k, s.line), s.line)
        for knob in result.knobs:
            configured = [s for s in knob.sites if is_config_define(s) and s.value is not None]
            for site in knob.sites:
                if site.role != "override" or site.kind != "python" or is_test_file(site.file):
                    continue  # tests overriding configuration on purpose are not fallbacks
                if _knob_copy(site):
                    yield from self._copy(site, knob, configured)
                    continue
                if not _changes_the_value(site, knob.leaf) or not _was_loaded(site, reads):
                    continue
                # cite a config file, or a parser in this file: a parser default in another
                # script is often another program's setting of the same name
                cited = [s for s in configured if s.kind in CONFIG_KINDS or s.file == site.file][:1]
                cond = site.detail.get("condition")
                forced = site.detail.get("how") == "literal"
                yield self.finding(
                    site, knob=knob.name, related=[*cited, site],
                    effect=_effect(site), alias=_alias(site),
                    condition=f" when `{_strip_if(cond)}`" if cond else (" unconditionally" if forced else ""),
                    configured=(f"; the value configured at {where(cited[0])} "
                                f"({show(cited[0].value)}) {'is ignored then' if cond else 'never takes effect'}")
                    if cited else "",
                )


    def _copy(self, site, knob, configured):
        """cfg.data.num_workers = cfg.legacy.num_workers: one knob overwritten with another.
        Plumbing into a key nobody configures is no fallback; a configured one is."""
        cited = [s for s in configured if s.kind in CONFIG_KINDS]
        if not cited:
            return
        origin = site.detail["from"]
        cond = site.detail.get("condition")
        expr = site.detail.get("expr") or site.source
        yield self.finding(
            site, knob=knob.name, related=[*cited[:1], site], alias="",
            effect=f"overwritten with the value of {origin} (`{expr}`)",
            condition=f" when `{_strip_if(cond)}`" if cond else "",
            configured=f"; the value configured at {where(cited[0])} ({show(cited[0].value)}) "
                       f"{'is ignored then' if cond else 'never takes effect'}",
            flow=[{"file": site.file, "line": site.line, "column": site.column, "kind": "config", "role": "source",
                   "key": origin, "text": site.source},
                  {"file": cited[0].file, "line": cited[0].line, "column": cited[0].column, "kind": "define",
                   "role": "sink", "key": knob.name, "value": cited[0].value, "text": cited[0].source}])


def _knob_copy(site) -> bool:
    """An attribute or item of a configuration assigned another configuration key's value."""
    d = site.detail
    origin, target = d.get("from"), str(d.get("target") or "")
    if d.get("how") != "reference" or not isinstance(origin, str) or not ("." in target or "[" in target):
        return False
    if "." not in origin or str(d.get("expr", "")).startswith("self."):
        return False  # instance state (self.max_worker_nodes) copied into a spec: no second knob
    a, b = origin.lower(), site.key.lower()
    return a != b and not a.endswith("." + b) and not b.endswith("." + a)


def _alias(site) -> str:
    """` (held in `num_gpus`)` when a local of another name carries the knob's value."""
    target = site.detail.get("target") or ""
    if target.isidentifier() and target.lower() != site.leaf.lower():
        return f" (held in `{target}`)"
    return ""


def _was_loaded(site, reads) -> bool:
    """The name held a loaded value: attribute/item state, or a local read earlier in the function.

    `num_gpus = 0; ...; num_gpus = ctx.device_count` computes a local afresh: nothing was
    loaded, so nothing is overridden.
    """
    target = site.detail.get("target") or site.source.split("=", 1)[0]
    if "." in target or "[" in target:
        return True
    expr = site.detail.get("expr") or ""
    if not _AUGMENTED.match(expr) and re.search(rf"\b{re.escape(site.leaf)}\b", expr):
        return True  # n = 1 if ars else self.n_envs: the loaded value flows through the other branch
    first = reads.get((site.file, site.detail.get("function"), site.leaf.lower()))
    local = target.strip().lower()
    first_local = reads.get((site.file, site.detail.get("function"), local))
    return any(line is not None and line <= site.line for line in (first, first_local))


def _fills_a_missing_value(cond: str, name: str) -> bool:
    """`if num_workers is None: num_workers = 1` sets a default for a missing value."""
    n = re.escape(name.rsplit(".", 1)[-1])
    return bool(re.search(rf"\b{n}\s+is\s+None\b|not\s*\(\s*[\w.]*\b{n}\s+is\s+not\s+None\s*\)"
                          rf"|^\s*not\s+[\w.]*\b{n}\s*$"  # if not num_workers:
                          rf"|['\"]{n}['\"]\s+not\s+in\b"  # if "num_cpus" not in opts:
                          rf"|['\"]{n}['\"]\s*\)\s+is\s+None\b", cond))  # if opts.get("num_cpus") is None:


def _changes_the_value(site, leaf: str) -> bool:
    """Forced literals, and caps or arithmetic on the loaded value itself.

    Plumbing (`resource_pool.nnodes = config.trainer.nnodes`), values computed afresh
    (`world_size = dist.get_world_size()`), conversions (`int(n)`) and environment
    variables being set are not overrides of a loaded value.
    """
    d = site.detail
    how = d.get("how")
    if d.get("backend") == "os.environ" or how in ("reference", "environ"):
        return False
    if how == "literal":
        if site.value is None or not isinstance(site.value, (int, float, bool)) and \
                not re.fullmatch(r"\d+", str(site.value)):
            return False  # `processes = []`, `= None`: not a count
        return not _fills_a_missing_value(d.get("condition") or "", leaf)
    expr = d.get("expr") or d.get("cap") or site.source
    if _AUGMENTED.match(expr):
        return True  # num_workers //= 2
    mentions_self = re.search(rf"\b{re.escape(leaf)}\b", expr) is not None
    if how in ("min", "max", "cpu_count") or d.get("cpu_count"):
        return mentions_self
    if how == "expression":
        return mentions_self and not _CONVERSION.match(expr) and re.search(r"[-+*/%]|//", expr) is not None
    return False


def _strip_if(cond: str) -> str:
    return re.sub(r"^\s*(el)?if\s+|:\s*$", "", cond).strip()


def _effect(site) -> str:
    d = site.detail
    how, cap, expr = d.get("how"), d.get("cap"), d.get("expr") or site.source
    if how == "literal" or (how is None and site.value is not None):
        return f"forced to {show(site.value)}"
    if how == "cpu_count" or d.get("cpu_count"):
        return f"capped by os.cpu_count() (`{expr}`), so it never exceeds this machine's CPU count"
    if how == "min":
        return f"capped at {show(cap)} (`{expr}`)" if cap is not None else f"capped by `{expr}`"
    if how == "max":
        return f"raised to at least {show(cap)} (`{expr}`)" if cap is not None else f"raised by `{expr}`"
    if how == "environ":
        return f"taken from the environment instead (`{expr}`)"
    return f"replaced by `{expr}`"

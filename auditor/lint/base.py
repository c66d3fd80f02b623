"""The rule base class, its examples, and rule discovery.

A rule is one small class in ``rules/qgNNN_*.py`` (importable as ``auditor.rules``)::

    class OverrideAfterLoad(Rule):
        CODE = "QG104"
        NAME = "override-after-load"
        SEVERITY = "warning"
        CONFIDENCE = "high"
        MESSAGE = "{knob} is replaced after loading at {where}: {effect}"
        RATIONALE = "..."
        VALID = [Example({"cfg.yaml": "...", "train.py": "..."})]
        INVALID = [Example({...})]

        def check(self, result):          # the joined ScanResult
            yield self.finding(site, knob=..., **message_fields)

Rules read the joined model (knobs, sites, meta), never raw files. Discovery walks the
``auditor.rules`` package for modules named ``qg*`` and collects every ``Rule`` subclass
with a CODE: there is no hand-kept list. The examples are turned into tests by
tests/test_rules_examples.py and rendered by ``qg-audit rule CODE``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Iterator

from auditor.flow.imports import (  # noqa: F401 - the rules import them from here
    SOURCE_ROOTS, ImportNeighbours, imported_files, modules_to_files, near_files)
from auditor.keys import one_typo
from auditor.model import CONFIG_KINDS, SEVERITIES, Finding, Knob, ScanResult, Site  # noqa: F401 - CONFIG_KINDS: the rules import it from here
# how a settings class declares its fields (a define site's `via`)
SETTINGS_VIAS = ("dataclass", "pydantic", "attrs")

CODE_RE = re.compile(r"^QG\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CONFIDENCES = ("low", "medium", "high")


@dataclass
class Example:
    """A tiny project: {relative path: file text}. ``title`` says what it shows."""

    files: dict[str, str]
    title: str = ""
    # INVALID only: the (file, line) pairs where the rule must fire; empty = anywhere
    expect: list[tuple[str, int]] = field(default_factory=list)
    # INVALID only: the severity every finding must have (None = the rule's or any)
    severity: str | None = None


class Rule:
    CODE: str = ""
    NAME: str = ""
    SEVERITY: str = "warning"
    CONFIDENCE: str = "high"
    MESSAGE: str = ""
    RATIONALE: str = ""
    VALID: list[Example] = []
    INVALID: list[Example] = []
    # Which fixes (auditor.lint.fixes) can repair this rule's findings; empty = none.
    FIXABLE: bool = False

    def check(self, result: ScanResult) -> Iterable[Finding]:
        raise NotImplementedError

    # -- helpers for subclasses ------------------------------------------------------------
    def finding(self, site: Site | None, *, file: str | None = None, line: int | None = None,
                column: int | None = None, knob: str | None = None, related: list[Site] | None = None,
                severity: str | None = None, confidence: str | None = None, flow: list | None = None,
                **fields: Any) -> Finding:
        """A finding at SITE (or at file/line), its message filled from MESSAGE and FIELDS."""
        return Finding(
            code=self.CODE,
            rule=self.NAME,
            severity=severity or self.SEVERITY,
            file=file if file is not None else (site.file if site else ""),
            line=line if line is not None else (site.line if site else 1) or 1,
            column=column if column is not None else (site.column if site else 1) or 1,
            message=self.MESSAGE.format(**{"knob": knob, **fields}),
            knob=knob,
            confidence=confidence or self.CONFIDENCE,
            related=list(related or []),
            flow=list(flow if flow is not None else (site.detail.get("flow") or []) if site else []),
        )

    @classmethod
    def summary(cls) -> str:
        """One line: the rationale's first sentence."""
        first = cls.RATIONALE.strip().split("\n\n")[0].replace("\n", " ")
        return first.split(". ")[0].rstrip(".") + "."


EXAMPLE_DIRS = ("examples", "example", "tutorials", "tutorial", "docs", "notebooks", "benchmarks")


def commented_out(result, kind: str):
    """(file, fact) for each `commented_parallel` fact of KIND outside tests
    (auditor/extract/py_commented.py): count, serial or consumer."""
    for rel, m in sorted(result.meta.items()):
        if isinstance(m, dict) and not is_test_file(rel):
            yield from ((rel, f) for f in m.get("commented_parallel") or () if f["kind"] == kind)


# another project's code shipped in this tree (FastVideo's third_party/synchformer, with the
# upstream config it was trained with): its settings are not this project's users' to set
VENDORED_DIRS = ("third_party", "thirdparty", "vendor", "vendored", "_vendor")


def in_examples(file: str) -> bool:
    """A file under examples/, docs/, tutorials/, ... at any depth: demonstration code; or under
    third_party/, vendor/: another project's code. Findings there are notes."""
    return any(p in EXAMPLE_DIRS for p in file.split("/")[:-1]) or is_vendored(file)


def is_vendored(file: str) -> bool:
    """A file under third_party/, vendor/, ... at any depth: another project's code."""
    return any(p in VENDORED_DIRS for p in file.split("/")[:-1])


def where(site: Site) -> str:
    return f"{site.file}:{site.line}"


def show(value: Any) -> str:
    """A value as the user wrote it: 8, 'dummy', None."""
    return repr(value) if isinstance(value, str) else str(value)


def knob_sites(result: ScanResult) -> Iterator[tuple[Knob, Site]]:
    for knob in result.knobs:
        for site in knob.sites:
            yield knob, site


def is_test_file(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    # (`.github/unittest/linux/scripts/run_all.sh`: a CI job's test runner; a module named
    # testing, as a package named so, holds test helpers: numpy.testing, realhf/base/testing.py)
    return (any(p in ("test", "tests", "testing", "unittest", "unittests") or _TEST_FOLDER.fullmatch(p)
                for p in parts[:-1]) or name.startswith("test_")
            or name.endswith("_test.py") or name in ("conftest.py", "testing.py"))


# a folder of tests by its name: tests_deprecated, integration_tests, unit-tests
_TEST_FOLDER = re.compile(r"tests?[_-][a-z0-9_-]+|[a-z0-9_-]+[_-]tests", re.IGNORECASE)


def is_test_site(site: Site) -> bool:
    """A site in a test file, or in a pytest-style `test_*` function of any file (a comparison
    harness shipped inside a library module): tests set their own counts on purpose."""
    function = str(site.detail.get("function") or "")
    return is_test_file(site.file) or function.rsplit(".", 1)[-1].startswith("test_")


def environment_writes(result: ScanResult) -> Iterator[tuple[Site, str]]:
    """(site, variable) for each `os.environ[VAR] = ...` outside tests that is no `setdefault`."""
    for site in result.sites:
        d = site.detail
        if site.role == "override" and site.kind == "python" and d.get("how") == "environ" \
                and d.get("backend") == "os.environ" and not d.get("setdefault") and not is_test_file(site.file):
            yield site, site.key.rsplit(".", 1)[-1].upper()


def is_config_define(site: Site) -> bool:
    """A value set in configuration: a config file, or a parser / dataclass default in code."""
    if site.role != "define" or site.detail.get("generated"):
        return False
    if site.kind in CONFIG_KINDS:
        return True
    return site.kind == "python" and site.detail.get("via") in ("argparse", "dataclass", "attrs", "pydantic")


def project_packages(result: ScanResult) -> set[str]:
    """Top-level package names of the scanned project's own modules (src/ layouts included):
    what tells the project's functions and classes from another installed package's."""
    out: set[str] = set()
    for meta in result.meta.values():
        flow = meta.get("flow") if isinstance(meta, dict) else None
        module = flow.get("module") if isinstance(flow, dict) else None
        if not module:
            continue
        parts = module.split(".")
        out.add(parts[0])
        if parts[0] in SOURCE_ROOTS and len(parts) > 1:
            out.add(parts[1])
    for cand, _counted in result.unparsed:  # the tree's modules no pass parsed (`entry.py`) are its own too
        parts = cand.rel.removesuffix(".py").split("/")
        top = parts[1] if parts[0] in SOURCE_ROOTS and len(parts) > 1 else parts[0]
        if top.isidentifier():
            out.add(top)
    return out


def parsed_settings_classes(result: ScanResult) -> list[tuple[str, str]]:
    """(package, class) of the other packages' settings classes a parser of the project is built
    from (`HfArgumentParser((Args, TrainingArguments))`: a config key may be one of their fields),
    outside tests. A module or package of the tree is the project's, however it is imported
    (`from simpo_config import SimPOConfig` in scripts/, src/open-r1-multimodal/src/open_r1/)."""
    paths = [*result.meta, *(c.rel for c, _counted in result.unparsed)]
    ours = project_packages(result) | {part.removesuffix(".py") for rel in paths if rel.endswith(".py")
                                       for part in rel.split("/")}
    return sorted({(top, str(c)) for rel, m in result.meta.items() if isinstance(m, dict) and not is_test_file(rel)
                   for p in m.get("parses") or () for c in p.get("classes") or ()
                   if (top := foreign_package(str(c), ours))})


def foreign_package(base: str, ours: set[str]) -> str | None:
    """The top-level package of BASE, a dotted class name (`transformers.TrainingArguments`),
    when it is another package's: not one of OURS (project_packages) nor the standard library's."""
    top = base.split(".", 1)[0]
    return top if "." in base and top.isidentifier() and top not in ours and top not in sys.stdlib_module_names \
        else None


def is_launch_override(site: Site) -> bool:
    """A launch script or CLI string setting a key: Hydra override or ``--flag value``.

    Also after a launcher (``torchrun ... train.py key=value``); the launcher's own options
    (``--nproc_per_node``) are not: they set the launcher, not the program's configuration.
    """
    return site.kind == "shell" and site.detail.get("via") in ("hydra-override", "flag") \
        and not site.detail.get("launcher_option")


# -- discovery ---------------------------------------------------------------------------

class RuleError(Exception):
    """A malformed rule class (bad code, duplicate code): a bug in the catalogue."""


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    """Every Rule subclass in ``auditor.rules.qg*`` modules, sorted by code."""
    import auditor.rules as package

    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("qg"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.CODE \
                    and obj.__module__ == module.__name__:
                _validate(obj)
                if obj.CODE in found and found[obj.CODE] is not obj:
                    raise RuleError(f"duplicate rule code {obj.CODE}: {found[obj.CODE].__name__} and {obj.__name__}")
                found[obj.CODE] = obj
    return tuple(found[c] for c in sorted(found))


def _validate(rule: type[Rule]) -> None:
    problems = []
    if not CODE_RE.match(rule.CODE):
        problems.append(f"code {rule.CODE!r} is not QG + 3 digits")
    if not NAME_RE.match(rule.NAME):
        problems.append(f"name {rule.NAME!r} is not kebab-case")
    if rule.SEVERITY not in SEVERITIES:
        problems.append(f"severity {rule.SEVERITY!r} not in {SEVERITIES}")
    if rule.CONFIDENCE not in CONFIDENCES:
        problems.append(f"confidence {rule.CONFIDENCE!r} not in {CONFIDENCES}")
    if not rule.MESSAGE or not rule.RATIONALE:
        problems.append("MESSAGE and RATIONALE are required")
    if problems:
        raise RuleError(f"{rule.__module__}.{rule.__name__}: " + "; ".join(problems))


def rules_by_code() -> dict[str, type[Rule]]:
    return {r.CODE: r for r in all_rules()}


def lookup(code_or_name: str) -> type[Rule] | None:
    want = code_or_name.strip()
    for r in all_rules():
        if r.CODE == want.upper() or r.NAME == want.lower():
            return r
    return None


def as_number(value: Any) -> Any:
    """8, '8', 8.0 -> 8; other values unchanged (for comparing config and code values)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else value
    if isinstance(value, str):
        text = value.strip().strip("'\"")
        try:
            return as_number(float(text)) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            return text
    return value


def is_literal(value: Any) -> bool:
    return isinstance(value, (int, float, bool, str)) and value is not None


def similar(a: str, b: str) -> bool:
    """Near-miss spellings of one name: num_worker / num_workers / n_workers / NUM_WROKERS.

    Equal after squashing (case, separators, a num/n prefix, a plural s), or one typo apart
    (one edit or one swap of neighbours) when both are long enough for a typo to be a typo.
    """
    if a == b:
        return False
    if count_units(a) != count_units(b):
        return False  # num_gpus / num_cpus, tp_size / pp_size: one letter apart, other settings
    na, nb = _squash(a), _squash(b)
    if na == nb:
        return True
    return min(len(na), len(nb)) >= 6 and one_typo(na, nb)


_UNIT = re.compile(r"(?<![a-z])(cpu|gpu|tpu|npu|node|tp|pp|dp|cp|ep|sp)s?(?![a-z])")


def count_units(name: str) -> set[str]:
    """The hardware or parallel units a setting's name counts (`num_gpus` -> {"gpu"})."""
    return set(_UNIT.findall(re.sub(r"[^a-z0-9]+", "_", name.lower())))


def _squash(name: str) -> str:
    n = re.sub(r"[^a-z0-9]", "", name.lower())
    for prefix in ("num", "n"):
        if n.startswith(prefix) and len(n) - len(prefix) >= 3:
            n = n[len(prefix):]
            break
    return n.rstrip("s")


@lru_cache(maxsize=None)
def consumers() -> dict[str, dict]:
    """rules/consumers.yaml by backend name and by every alias name."""
    from auditor import catalogue

    data = catalogue.data("consumers.yaml")
    out: dict[str, dict] = {}
    for entry in data.get("consumers", []):
        for name in [entry["backend"], *entry.get("names", [])]:
            out[name] = entry
    return out


def backend_entry(site: Site) -> dict:
    return consumers().get(site.detail.get("backend") or "", {})


def backend_kind(site: Site) -> str:
    return site.detail.get("kind") or backend_entry(site).get("kind", "")


def steps_envs(site: Site) -> bool:
    """A thread pool whose tasks step environments (CPU-bound under the GIL), as the extractor saw it."""
    d = site.detail
    return bool(d.get("steps_envs") or d.get("steps_env") or d.get("purpose") in ("env", "envs", "env-step")
                or d.get("pool_use") in ("env", "envs", "env-step"))

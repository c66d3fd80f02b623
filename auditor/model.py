"""The shared vocabulary: knob, site, finding, verdict.

- A **site** is one place in one file where a parallelism knob appears, with a role:
  ``define`` (a value is set: config file, launch script, CLI default),
  ``read`` (code reads it, possibly with a fallback ``default``),
  ``override`` (code replaces the value after it was loaded), or
  ``consume`` (a parallel backend receives it).
- A **knob** is a parallelism setting (``data.dataloader_num_workers``,
  ``OMP_NUM_THREADS``) joined from all of its sites.
- A **finding** is a rule's statement that a knob's journey breaks somewhere (static).
- A **verdict** is the runtime probe's statement about what actually ran.

Extraction produces sites and knows nothing of rules; rules read knobs; renderers
only render. Everything here is plain data that serialises to the JSON contracts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ROLES = ("define", "read", "override", "consume")
SOURCE_MAX = 200  # characters of a site's source line kept in every format (a minified line can be 50 MB)
SEVERITIES = ("note", "warning", "error")  # ordered, lowest first
CONFIG_KINDS = ("yaml", "toml", "json", "ini")  # site kinds of configuration files (python, shell besides)


@dataclass
class Site:
    role: str  # one of ROLES
    file: str  # path relative to the scanned root, '/' separated
    line: int  # 1-based
    column: int  # 1-based
    key: str  # full dotted path where known ("rollout.num_workers"), env var name, or flag dest
    value: Any = None  # the literal value set / passed, when statically known
    default: Any = None  # for reads: the fallback the code uses when the key is absent
    source: str = ""  # the source text of the site (one line, stripped)
    kind: str = ""  # source kind: yaml, toml, json, python, shell
    # Extra facts an extractor knows and rules may use, e.g.
    #   via: how it was found ("argparse", "get", "getattr", "environ", "dataclass", "hydra-override", ...)
    #   backend: consumer's fully-qualified callable ("torch.utils.data.DataLoader")
    #   serial: True when that backend runs serially (DummyVecEnv, SyncVectorEnv, ...)
    #   condition: source text of the guarding condition ("if dataset_type == 'iterable'")
    #   reference: the key an interpolation points at ("${data.num_workers}")
    #   function: the enclosing function's qualified name
    #   generated: True for generated files that must not double-count definitions
    detail: dict[str, Any] = field(default_factory=dict)
    # How the join put this site in its knob (auditor.flow): "flow" (its trace reaches the
    # knob's key), "key" (the same key), "name" (a leaf or suffix of the name only: no
    # effective value, never "consumed by"); "" before the join.
    match: str = ""

    def __post_init__(self) -> None:
        if len(self.source) > SOURCE_MAX:
            self.source = self.source[:SOURCE_MAX - 1] + "\u2026"

    @property
    def leaf(self) -> str:
        return self.key.rsplit(".", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["leaf"] = self.leaf
        return d


@dataclass
class Knob:
    name: str  # dotted name the sites were joined on
    leaf: str
    sites: list[Site] = field(default_factory=list)
    effective: Any = None  # statically known effective value, when it can be told
    why: str = ""  # "8 from configs/rollout.yaml:3; capped by os.cpu_count() at sampler.py:41"

    def by_role(self, role: str) -> list[Site]:
        return [s for s in self.sites if s.role == role]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "leaf": self.leaf,
            "effective": self.effective,
            "why": self.why,
            "sites": [s.to_json() for s in self.sites],
        }


@dataclass
class FileError:
    """A file that could not be read or parsed. The scan goes on without it."""

    file: str
    line: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# A finding's JSON and SARIF carry at most this many related sites: a knob set in every one of
# 1,000 task configs gives 1,000 findings, and each listing all 1,000 sites made the report
# quadratic (430 MB for 1,000 configs). The model keeps them all (scan --files reads them).
RELATED_SHOWN = 20


@dataclass
class Finding:
    code: str  # "QG104"
    rule: str  # "override-after-load"
    severity: str  # one of SEVERITIES
    file: str
    line: int
    column: int
    message: str  # says what value really runs and why
    knob: str | None = None
    confidence: str = "high"  # high / medium / low
    related: list[Site] = field(default_factory=list)
    fingerprint: str = ""
    flow: list[dict[str, Any]] = field(default_factory=list)  # the path source -> sink (auditor.flow.values)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["related"] = [s.to_json() for s in self.related[:RELATED_SHOWN]]
        return d


@dataclass
class ScanResult:
    """What ``qg-audit scan`` produces; serialises to the ``qg-audit.scan/1`` JSON contract."""

    root: str  # the scanned path as given
    knobs: list[Knob] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)  # every site, before and after joining
    errors: list[FileError] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files_scanned: int = 0  # files parsed (after the prefilter)
    files_seen: int = 0  # files walked
    skipped_dirs: list[str] = field(default_factory=list)  # directories the built-in list kept the walk out of
    skipped_tracked: int = 0  # files git tracks inside them (from the git index; 0 without one)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)  # per file: extractor facts for the join
    settings: dict[str, Any] = field(default_factory=dict)  # the project's [tool.qg-audit] table
    lint_stats: dict[str, Any] = field(default_factory=dict)  # {"suppressed": n, "baselined": n}
    traces: list = field(default_factory=list)  # [(site, value tree)] from auditor.flow.resolve, for values
    libraries: Any = None  # auditor.libraries.Libraries: installed frameworks read for the flow layer
    # (candidate, counted in files_scanned) of the Python files no pass visited (scan.parse_naming)
    unparsed: list = field(default_factory=list, repr=False)

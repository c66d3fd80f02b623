"""The consumer catalogue (rules/consumers.yaml) as lookup tables for the Python extractor.

Data, not code: which qualified callables are parallel backends, which argument carries the
count, whether the backend runs serially and what its parallel twin is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from auditor import catalogue


# Calls that return an object behaving like the multiprocessing module (ctx.Pool(...)).
CONTEXT_FACTORIES = {
    "multiprocessing.get_context": "multiprocessing",
    "torch.multiprocessing.get_context": "multiprocessing",
}
OPTIONS_BACKEND = "ray.remote(...).options"


@dataclass(frozen=True)
class Count:
    param: str
    position: int | None = None
    knob: str = ""
    default: Any = None
    emit_default: bool = False
    measure: str = ""  # "len": the count is the argument's length
    loop: bool = False  # the count is the enclosing range() loop


@dataclass(frozen=True)
class Selector:
    param: str
    position: int | None = None
    default: Any = None
    site: bool = False
    serial_by: tuple = ()  # ((value-or-qualname, True|False|"single"), ...)

    def serial_for(self, value: Any) -> Any:
        """True / False / "single" for a literal value or qualified name; None when unknown."""
        for key, serial in self.serial_by:
            if key == value:
                return serial
        return None


@dataclass(frozen=True)
class Consumer:
    backend: str
    kind: str
    serial: bool
    counts: tuple[Count, ...]
    selectors: tuple[Selector, ...] = ()
    workers: tuple[tuple[str, int | None], ...] = ()
    record: tuple[str, ...] = ()
    twin: str | None = None
    twin_param: str | None = None
    pool: bool = False
    attach: tuple[tuple[str, int | None], ...] = ()  # arguments that attach the call to a running instance
    pool_use: str = ""  # what the pool's threads do when the catalogue knows it ("compute")


@dataclass(frozen=True)
class FlagAdder:
    """A call that adds a library's own flags to a parser (consumers.yaml ``flag_adders``)."""
    call: str
    flags: tuple[str, ...]
    carries: str = ""
    read_by: tuple[tuple[str, str, int | None], ...] = ()  # (call, param, position)


@dataclass
class Catalogue:
    by_name: dict[str, Consumer] = field(default_factory=dict)
    by_pkg_leaf: dict[tuple[str, str], Consumer | None] = field(default_factory=dict)
    # method name -> [(Consumer, keyword the call must pass)]: `ds.map(fn, num_proc=8)` on an
    # object whose class the scan cannot know, told apart from other `.map(` calls by its keyword
    by_method: dict[str, list[tuple[Consumer, str]]] = field(default_factory=dict)
    starters: frozenset = frozenset()  # called names that start a worker (consumers.yaml)
    settings_parsers: frozenset = frozenset()  # parsers built from settings classes (consumers.yaml)
    flag_adders: dict[str, FlagAdder] = field(default_factory=dict)  # by qualified name
    # reader call -> [(param, position, flags)]: `deepspeed.initialize(args=ns)` reads ns.deepspeed_config
    flag_readers: dict[str, list[tuple[str, int | None, tuple[str, ...]]]] = field(default_factory=dict)
    added_flags: frozenset = frozenset()  # every flag name a flag adder adds
    # class name -> the backend whose copies carry it (consumers.yaml `vendored`), and the top
    # packages the catalogue names: a copy lives in any other package
    by_vendored_leaf: dict[str, Consumer] = field(default_factory=dict)
    roots: frozenset = frozenset()

    def method(self, call, mapped=()) -> Consumer | None:
        """The consumer a method call is, by its name and a keyword only that backend takes
        (given directly, or in MAPPED: the keys of a local `**kwargs` mapping)."""
        func = call.func
        entries = self.by_method.get(getattr(func, "attr", None) or "")
        if not entries:
            return None
        given = {k.arg for k in call.keywords if k.arg} | set(mapped)
        return next((c for c, keyword in entries if keyword in given), None)

    def lookup(self, qualname: str | None) -> Consumer | None:
        """Exact qualified name first; else a unique (top package, class name) match, so
        re-exports like stable_baselines3.common.vec_env.dummy_vec_env.DummyVecEnv resolve too."""
        if not qualname:
            return None
        hit = self.by_name.get(qualname)
        if hit is not None or "." not in qualname:
            return hit
        pkg, leaf = qualname.split(".", 1)[0], qualname.rsplit(".", 1)[1]
        hit = self.by_pkg_leaf.get((pkg, leaf))
        if hit is None and self.vendored(qualname):
            # stable_baselines.common.vec_env.DummyVecEnv: the project's own copy of the library's class
            hit = self.by_vendored_leaf.get(leaf)
        return hit

    def vendored(self, qualname: str) -> bool:
        """QUALNAME lies in a package the catalogue names nowhere: a backend lookup() finds for
        it is a copy of a library's class (consumers.yaml `vendored`)."""
        return qualname.split(".", 1)[0] not in self.roots

    def keywords(self) -> list[str]:
        """Leaf names of every backend: a file mentioning one is worth parsing (a method-matched
        backend by its keyword)."""
        words = {name.rsplit(".", 1)[-1] for name in self.by_name if name[0].isalpha()}
        return sorted(words | {kw for entries in self.by_method.values() for _c, kw in entries})


def _literal_key(key: Any) -> Any:
    # YAML keys "None"/"True"/"False" stand for the Python literals.
    return {"None": None, "True": True, "False": False}.get(key, key) if isinstance(key, str) else key


def _consumer(entry: dict) -> Consumer:
    counts = tuple(
        Count(
            param=c["param"], position=c.get("position"), knob=c.get("knob", c["param"]),
            default=c.get("default"), emit_default=bool(c.get("emit_default")),
            measure=c.get("measure", ""), loop=bool(c.get("loop")),
        )
        for c in entry.get("counts", [])
    )
    selectors = tuple(
        Selector(
            param=s["param"], position=s.get("position"), default=_literal_key(s.get("default")),
            site=bool(s.get("site")),
            serial_by=tuple((_literal_key(k), v) for k, v in (s.get("serial_by") or {}).items()),
        )
        for s in entry.get("selectors", [])
    )
    return Consumer(
        backend=entry["backend"], kind=entry.get("kind", ""), serial=bool(entry.get("serial")),
        counts=counts, selectors=selectors,
        workers=tuple((w["param"], w.get("position")) for w in entry.get("workers", [])),
        record=tuple(entry.get("record", [])), twin=entry.get("twin"),
        twin_param=entry.get("twin_param"), pool=bool(entry.get("pool")),
        attach=tuple((a["param"], a.get("position")) for a in entry.get("attach", [])),
        pool_use=str(entry.get("pool_use") or ""),
    )


@lru_cache(maxsize=None)
def load() -> Catalogue:
    data = catalogue.data("consumers.yaml")
    cat = Catalogue(starters=frozenset(data.get("starters") or ()),
                    settings_parsers=frozenset(data.get("settings_parsers") or ()))
    for entry in data.get("flag_adders") or ():
        adder = FlagAdder(call=entry["call"], flags=tuple(entry["flags"]), carries=entry.get("carries", ""),
                          read_by=tuple((r["call"], r["param"], r.get("position")) for r in entry.get("read_by", ())))
        for name in [adder.call, *entry.get("names", [])]:
            cat.flag_adders[name] = adder
        for call, param, position in adder.read_by:
            cat.flag_readers.setdefault(call, []).append((param, position, adder.flags))
        cat.added_flags |= set(adder.flags)
    for entry in data["consumers"]:
        consumer = _consumer(entry)
        if entry.get("methods"):
            for method in entry["methods"]:
                cat.by_method.setdefault(method, []).append((consumer, entry["when_keyword"]))
            continue
        for name in [consumer.backend, *entry.get("names", [])]:
            cat.by_name[name] = consumer
        if entry.get("vendored"):
            cat.by_vendored_leaf[consumer.backend.rsplit(".", 1)[-1]] = consumer
    cat.roots = frozenset(name.split(".", 1)[0] for name in cat.by_name)
    for name, consumer in cat.by_name.items():
        if "." not in name or "(" in name or not name.rsplit(".", 1)[1][:1].isupper():
            continue  # only class names fall back: a function leaf (make, init) is too common
        key = (name.split(".", 1)[0], name.rsplit(".", 1)[1])
        if key in cat.by_pkg_leaf and cat.by_pkg_leaf[key] is not consumer:
            cat.by_pkg_leaf[key] = None  # ambiguous (multiprocessing.Pool vs multiprocessing.dummy.Pool)
        else:
            cat.by_pkg_leaf[key] = consumer
    return cat

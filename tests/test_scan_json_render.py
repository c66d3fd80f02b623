"""scan_json.render writes the qg-audit.scan/1 document directly (auditor/render/scan_json.py):
it must give exactly what json.dumps of the plain to_json() document gives, on real scans and
on every kind of value a site, a finding or a file name can carry."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings, strategies as st

from auditor.lint.harness import scan_and_check
from auditor.model import FileError, Finding, Knob, ScanResult, Site
from auditor.render import scan_json
from conftest import FIXTURES


def reference(result: ScanResult, elapsed: float) -> str:
    return json.dumps(scan_json.document(result, elapsed), indent=2, allow_nan=False) + "\n"


@pytest.mark.parametrize("name", ["example_project", "flow", "rules", "scan_python", "scan_configs", "bad_input"])
def test_render_is_the_plain_document_on_the_fixtures(name):
    result = scan_and_check(FIXTURES / name)
    assert result.knobs or result.errors
    assert scan_json.render(result, 0.25) == reference(result, 0.25)


class Level(enum.IntEnum):
    HIGH = 3


@dataclass
class Step:
    file: str
    line: int


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(codec=None, exclude_categories=())), st.binary(max_size=4),
    st.complex_numbers(allow_nan=False), st.just(Level.HIGH), st.just(...),
    st.builds(Step, st.text(max_size=3), st.integers()))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner),
        st.frozensets(st.integers() | st.text(max_size=2), max_size=3),
        st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans() | st.tuples(st.integers()), inner,
                        max_size=3)),
    max_leaves=12)
NAMES = st.text(st.characters(codec=None, exclude_categories=()), max_size=6) | st.just("a\udcff.py")


@settings(max_examples=200, deadline=None)
@given(value=VALUES, detail=st.dictionaries(st.text(max_size=4), VALUES, max_size=3), name=NAMES,
       flow=st.lists(st.dictionaries(st.text(max_size=3), VALUES, max_size=2), max_size=2))
def test_render_is_the_plain_document_for_any_value(value, detail, name, flow):
    site = Site("define", name, 1, 2, "data.num_workers", value=value, default=value, detail=detail)
    knob = Knob("data.num_workers", "num_workers", [site, Site("read", "b.py", 3, 0, "x")], effective=value,
                why=name)
    finding = Finding("QG104", "override-after-load", "warning", name, 4, 1, "msg", knob="k",
                      related=[site], flow=flow)
    result = ScanResult(root=name, knobs=[knob, Knob("e", "e")], sites=knob.sites, findings=[finding],
                        errors=[FileError(name, None, "bad"), FileError("c.py", 9, name)])
    assert scan_json.render(result, 1.5) == reference(result, 1.5)
    assert scan_json.render(ScanResult(root=".")) == reference(ScanResult(root="."), 0.0)

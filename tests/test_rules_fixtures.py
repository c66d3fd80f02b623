"""Annotated fixture projects: `# expect: QG104` marks every line where a finding must be.

The test compares the exact set of (code, file, line) the real pipeline reports with the
annotations, so a missing finding and a false positive both fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.lint.harness import scan_and_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
EXPECT = re.compile(r"#\s*expect:\s*((?:QG\d{3}[\s,]*)+)")


def expected(root: Path) -> set[tuple[str, str, int]]:
    out = set()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = EXPECT.search(line)
            if m:
                for code in re.findall(r"QG\d{3}", m.group(1)):
                    out.add((code, path.relative_to(root).as_posix(), n))
    return out


PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_fixture_findings_match_annotations(project):
    want = expected(project)
    assert want, f"{project.name} has no '# expect:' annotations"
    result = scan_and_check(project)
    got = {(f.code, f.file, f.line) for f in result.findings}
    missing, extra = sorted(want - got), sorted(got - want)
    detail = {(f.code, f.file, f.line): f.message for f in result.findings}
    assert not missing and not extra, (
        f"missing: {missing}\nunexpected: {[(e, detail[e]) for e in extra]}")

"""docs/rules.md's catalogue is generated from the rule classes and must be current."""

from pathlib import Path

from auditor.lint.base import all_rules
from auditor.lint.docs import render

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def test_rules_doc_is_current():
    text = DOCS.read_text(encoding="utf-8")
    assert render(text) == text, "run: python -m auditor.lint.docs docs/rules.md"


def test_every_rule_is_documented():
    text = DOCS.read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"### {rule.CODE} {rule.NAME}" in text

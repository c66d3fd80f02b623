"""Every rule's VALID / INVALID examples, through the real scan + join + gate."""

from __future__ import annotations

import pytest

from auditor.lint.base import all_rules
from auditor.lint.harness import findings_for


def _cases(kind):
    for rule in all_rules():
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.CODE}-{kind.lower()}-{i}-{example.title or 'example'}")


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_invalid_example_fires(rule, example, tmp_path):
    found = findings_for(example.files, tmp_path, rule.CODE)
    assert found, f"{rule.CODE} did not fire on: {example.title}"
    for file, line in example.expect:
        assert (file, line) in {(f.file, f.line) for f in found}, \
            f"{rule.CODE} fired at {[(f.file, f.line) for f in found]}, expected {file}:{line}"
    for f in found:
        assert f.message and "{" not in f.message, f.message  # the template was filled
        if example.severity:
            assert f.severity == example.severity, f"{f.file}:{f.line} is a {f.severity}: {f.message}"


@pytest.mark.parametrize("rule,example", list(_cases("VALID")))
def test_valid_example_is_quiet(rule, example, tmp_path):
    found = findings_for(example.files, tmp_path, rule.CODE)
    assert not found, [f"{f.file}:{f.line} {f.message}" for f in found]


def test_every_rule_has_examples_both_ways():
    for rule in all_rules():
        assert rule.VALID and rule.INVALID, rule.CODE


def test_near_misses_keep_their_units():
    from auditor.lint.base import similar

    assert similar("num_workers", "n_workers") and similar("NUM_WORKERS", "num_worker")
    assert not similar("num_gpus", "num_cpus")  # one letter apart, another setting
    assert not similar("tp_size", "pp_size")

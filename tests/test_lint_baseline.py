"""Baselines: fingerprints survive unrelated line shifts; new findings still fail."""

from __future__ import annotations

import json

import pytest

from auditor.exitcodes import UsageError
from auditor.lint import exit_code
from auditor.lint.harness import default_args, scan_and_check, write_project

TRAIN = ("import torch\n"
         "def main(cfg):\n"
         "    torch.set_num_threads(1)\n"
         "    return cfg\n")


def test_baseline_survives_lines_inserted_above(tmp_path):
    project = write_project(tmp_path / "p", {"train.py": TRAIN})
    baseline = tmp_path / "qg-baseline.json"
    first = scan_and_check(project, default_args(write_baseline=str(baseline)))
    assert first.findings == [] and exit_code(first, default_args(write_baseline=str(baseline))) == 0
    data = json.loads(baseline.read_text())
    assert data["schema"] == "qg-audit.baseline/1"
    assert [(e["code"], e["file"], e["line"]) for e in data["findings"]] == [("QG107", "train.py", 3)]

    # unrelated edits: ten lines above, different indentation of nothing else
    (project / "train.py").write_text("# header\n" * 10 + TRAIN.replace("return cfg", "return  cfg"))
    shifted = scan_and_check(project, default_args(baseline=str(baseline)))
    assert shifted.findings == [], [f.message for f in shifted.findings]
    assert shifted.lint_stats["baselined"] == 1
    without = scan_and_check(project)
    assert [(f.code, f.line) for f in without.findings] == [("QG107", 13)]  # it is still there

    # a second pin is new: the baseline covers one occurrence only, so it is reported
    (project / "train.py").write_text(TRAIN + "torch.set_num_threads(1)\n")
    grown = scan_and_check(project, default_args(baseline=str(baseline)))
    assert [(f.code, f.line) for f in grown.findings] == [("QG107", 5)]
    assert exit_code(grown, default_args(baseline=str(baseline))) == 1


def test_changed_statement_is_a_new_finding(tmp_path):
    project = write_project(tmp_path / "p", {"train.py": TRAIN})
    baseline = tmp_path / "b.json"
    scan_and_check(project, default_args(write_baseline=str(baseline)))
    (project / "train.py").write_text(TRAIN.replace("set_num_threads(1)", "set_num_threads(num_threads=1)"))
    assert [f.code for f in scan_and_check(project, default_args(baseline=str(baseline))).findings] == ["QG107"]


@pytest.mark.parametrize("content,needle", [
    (None, "no such file"),
    ("{not json", "not valid JSON"),
    ('{"schema": "other/1", "findings": []}', "not a qg-audit.baseline/1 file"),
])
def test_bad_baseline_is_a_usage_error(tmp_path, content, needle):
    project = write_project(tmp_path / "p", {"train.py": TRAIN})
    baseline = tmp_path / "b.json"
    if content is not None:
        baseline.write_text(content)
    with pytest.raises(UsageError, match=needle):
        scan_and_check(project, default_args(baseline=str(baseline)))

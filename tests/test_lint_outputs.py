"""Outputs and exit codes through the real CLI: json, SARIF 2.1.0 (schema-validated), GitHub."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from auditor.lint.harness import scan_and_check
from auditor.render import github, sarif
from conftest import FIXTURES, run_cli

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
GATE = FIXTURES / "rules" / "gate_project"


@pytest.fixture(scope="module")
def gate_result():
    return scan_and_check(GATE)


def test_sarif_validates_and_carries_what_code_scanning_needs(gate_result):
    doc = json.loads(sarif.render(gate_result))
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "qg-audit"
    ids = [r["id"] for r in driver["rules"]]
    assert "QG104" in ids and all(r["shortDescription"]["text"] for r in driver["rules"])
    assert len(run["results"]) == len(gate_result.findings) > 0
    for res, f in zip(run["results"], gate_result.findings):
        assert res["ruleId"] == f.code and ids[res["ruleIndex"]] == f.code
        assert res["level"] in ("note", "warning", "error") and res["message"]["text"] == f.message
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f.file and loc["region"]["startLine"] == f.line
        assert res["partialFingerprints"]["qgAuditFingerprint/v1"] == f.fingerprint != ""


def test_sarif_of_a_clean_scan_validates(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    doc = json.loads(sarif.render(scan_and_check(tmp_path)))
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert doc["runs"][0]["results"] == []


def test_github_annotations(gate_result):
    lines = github.render(gate_result).splitlines()
    assert len(lines) == len(gate_result.findings)
    pattern = re.compile(r"^::(warning|notice|error) file=[^,]+,line=\d+,col=\d+,title=QG\d{3} [a-z-]+::.+$")
    assert all(pattern.match(line) for line in lines), lines
    assert any(line.startswith("::warning file=learner.py,line=12,col=") and
               "title=QG110 kwargs-shadowing::" in line for line in lines)
    assert any(line.startswith("::notice ") and "QG003" in line for line in lines)


def test_github_escapes_newlines_and_separators():
    from auditor.model import Finding, ScanResult

    f = Finding("QG104", "override-after-load", "warning", "a,b:c.py", 3, 1, "line one\nline two 100%")
    out = github.render(ScanResult(root=".", findings=[f]))
    assert out == "::warning file=a%2Cb%3Ac.py,line=3,col=1,title=QG104 override-after-load::line one%0Aline two 100%25\n"


# -- exit codes, each case through the real command --------------------------------------

@pytest.fixture
def gate_copy(tmp_path):
    dst = tmp_path / "gate"
    shutil.copytree(GATE, dst, ignore=shutil.ignore_patterns(".qg-audit_cache"))
    return dst


@pytest.mark.slow
def test_exit_codes(gate_copy, tmp_path):
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "train.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=args.n)\n")
    assert run_cli("scan", str(clean), "--no-progress").returncode == 0

    found = run_cli("scan", str(gate_copy), "--format", "json", "--no-progress")
    assert found.returncode == 1
    findings = json.loads(found.stdout)["findings"]
    assert {"code", "rule", "severity", "file", "line", "column", "message", "knob", "related",
            "fingerprint"} <= set(findings[0])

    assert run_cli("scan", str(gate_copy), "--exit-zero", "--no-progress").returncode == 0
    assert run_cli("scan", str(gate_copy), "--fail-on", "error", "--no-progress").returncode == 0
    assert run_cli("scan", str(gate_copy), "--select", "QG003,QG104", "--fail-on", "note", "--no-progress").returncode == 1
    assert run_cli("scan", str(gate_copy), "--select", "QG003,QG104", "--no-progress").returncode == 0  # a note only

    bad = run_cli("scan", str(gate_copy), "--select", "QG1O4", "--exit-zero", "--no-progress")
    assert bad.returncode == 2  # --exit-zero never masks a usage error
    assert "unknown rule code 'QG1O4' (did you mean QG104?)" in bad.stderr and len(bad.stderr.splitlines()) == 1

    (gate_copy / "pyproject.toml").write_text("[tool.qg-audit]\nfail_on = 'error'\n")
    bad_key = run_cli("scan", str(gate_copy), "--exit-zero", "--no-progress")
    assert bad_key.returncode == 2 and "unknown key 'fail_on' (did you mean 'fail-on'?)" in bad_key.stderr

    assert run_cli("scan", str(gate_copy), "--fail-on", "warn", "--no-progress").returncode == 2


def test_sarif_and_github_through_the_cli(gate_copy):
    out = run_cli("scan", str(gate_copy), "--format", "sarif", "--no-progress")
    assert out.returncode == 1
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads(out.stdout))
    gh = run_cli("scan", str(gate_copy), "--format", "github", "--no-progress")
    assert gh.returncode == 1 and gh.stdout.startswith("::")


def test_rules_and_rule_commands():
    listing = run_cli("rules")
    assert listing.returncode == 0
    for code in ("QG001", "QG002", "QG003", *(f"QG1{n:02d}" for n in range(1, 11))):
        assert code in listing.stdout
    one = run_cli("rule", "QG104")
    assert one.returncode == 0 and "override-after-load" in one.stdout and "num_workers = 0" in one.stdout
    by_name = run_cli("rule", "serial-backend", "--format", "json")
    assert json.loads(by_name.stdout)["code"] == "QG106"
    unknown = run_cli("rule", "QG1O4")
    assert unknown.returncode == 2 and "did you mean QG104?" in unknown.stderr

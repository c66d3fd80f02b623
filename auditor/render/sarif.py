"""SARIF 2.1.0 for GitHub code scanning: ``render(result) -> str``.

Carries what code scanning needs: tool.driver.name / version / rules (id, name,
shortDescription, fullDescription, help, defaultConfiguration.level, properties), results
with ruleId, ruleIndex, level, message.text, locations[].physicalLocation
(artifactLocation.uri relative to the scanned root with uriBaseId, region.startLine /
startColumn), partialFingerprints, and relatedLocations for the knob's other sites.
Unparsable files (QG001) are results too, so a CI run shows them.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from auditor import __version__
from auditor.model import RELATED_SHOWN, ScanResult
from auditor.render.scan_json import plain

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"note": "note", "warning": "warning", "error": "error"}


def _rule_descriptor(rule) -> dict:
    return {
        "id": rule.CODE,
        "name": "".join(p.capitalize() for p in rule.NAME.split("-")),
        "shortDescription": {"text": f"{rule.CODE} {rule.NAME}: {rule.summary()}"},
        "fullDescription": {"text": rule.RATIONALE.strip()},
        "help": {"text": rule.RATIONALE.strip(), "markdown": rule.RATIONALE.strip()},
        "defaultConfiguration": {"level": LEVELS[rule.SEVERITY]},
        "properties": {"tags": ["parallelism", "silent-fallback"], "confidence": rule.CONFIDENCE,
                       "problem.severity": {"note": "recommendation"}.get(rule.SEVERITY, rule.SEVERITY)},
    }


def artifact_uri(rel: str) -> str:
    """A relative URI reference: every byte but unreserved ones and '/' percent-encoded (RFC 3986),
    so '#', '?', '%', spaces and undecodable bytes of a file name all read back exactly."""
    return quote(rel.encode("utf-8", "surrogateescape"), safe="/")


def _location(file: str, line: int, column: int, message: str | None = None, index: int | None = None) -> dict:
    loc: dict = {"physicalLocation": {
        "artifactLocation": {"uri": artifact_uri(file), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": max(int(line or 1), 1), "startColumn": max(int(column or 1), 1)},
    }}
    if message:
        loc["message"] = {"text": message}
    if index is not None:
        loc["id"] = index
    return loc


def render(result: ScanResult) -> str:
    from auditor.lint.base import all_rules

    rules = list(all_rules())
    index = {r.CODE: i for i, r in enumerate(rules)}
    results = []
    for f in result.findings:
        entry = {
            "ruleId": f.code,
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": f.message},
            "locations": [_location(f.file, f.line, f.column)],
            "partialFingerprints": {"qgAuditFingerprint/v1": f.fingerprint or f"{f.code}:{f.file}:{f.line}"},
            "properties": {"confidence": f.confidence, "rule": f.rule},
        }
        if f.code in index:
            entry["ruleIndex"] = index[f.code]
        if f.knob:
            entry["properties"]["knob"] = f.knob
        related = [s for s in f.related if (s.file, s.line) != (f.file, f.line)]
        if related:
            entry["relatedLocations"] = [
                _location(s.file, s.line, s.column, f"{s.role} of {s.key}" + (f" = {s.value}" if s.value is not None else ""), i)
                for i, s in enumerate(related[:RELATED_SHOWN])]
        if f.flow:  # the path source -> sink, drawn by code-scanning UIs
            entry["codeFlows"] = [{"threadFlows": [{"locations": [
                {"location": _location(step.get("file") or f.file, step.get("line") or 1, step.get("column") or 1,
                                       f"{step.get('role', 'step')}: {step.get('text', '')}"[:200])}
                for step in f.flow]}]}]
        results.append(entry)
    run = {
        "tool": {"driver": {
            "name": "qg-audit",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": [_rule_descriptor(r) for r in rules],
        }},
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the scanned project root"}}},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return json.dumps(plain({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}), indent=2) + "\n"

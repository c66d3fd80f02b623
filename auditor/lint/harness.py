"""Run a rule's examples through the real pipeline: write the project, scan, join, gate.

Used by tests/test_rules_examples.py (every VALID/INVALID example becomes a test) and by
fixture tests. Nothing is mocked: the files are real, the extractors and the join are the
ones ``qg-audit scan`` runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from auditor.model import Finding, ScanResult


def write_project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def default_args(**overrides) -> argparse.Namespace:
    from auditor import lint

    parser = argparse.ArgumentParser()
    lint.add_arguments(parser)
    args = parser.parse_args([])
    for k, v in overrides.items():
        setattr(args, k, v)
    return args


def scan_and_check(root: Path, args: argparse.Namespace | None = None) -> ScanResult:
    from auditor import join, lint, scan

    result = scan.scan(root, jobs=1)
    join.join(result)
    lint.check(result, args or default_args())
    return result


def findings_for(files: dict[str, str], root: Path, code: str | None = None) -> list[Finding]:
    result = scan_and_check(write_project(root, files))
    return [f for f in result.findings if code is None or f.code == code]

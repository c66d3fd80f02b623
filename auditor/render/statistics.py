"""``qg-audit scan --statistics``: one line per rule with its finding count, as ruff prints.

    12  QG104  override-after-load   warning 9, note 3
     2  QG106  serial-backend [*]    warning 2

``[*]``: ``--fix`` can repair that rule's findings. JSON (schema ``qg-audit.statistics/1``):
``{"schema", "rules": [{"code", "name", "count", "severities": {severity: count}, "fixable"}],
"total"}``, most frequent first.
"""

from __future__ import annotations

import collections
import json

from auditor.model import SEVERITIES, ScanResult

SCHEMA = "qg-audit.statistics/1"


def rows(result: ScanResult) -> list[dict]:
    from auditor.lint.base import rules_by_code

    rules = rules_by_code()
    by_code: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    names: dict[str, str] = {}
    for f in result.findings:
        by_code[f.code][f.severity] += 1
        names[f.code] = f.rule
    out = []
    for code, sev in by_code.items():
        rule = rules.get(code)
        out.append({"code": code, "name": names[code], "count": sum(sev.values()),
                    "severities": {s: sev[s] for s in reversed(SEVERITIES) if sev[s]},
                    "fixable": bool(rule and rule.FIXABLE)})
    out.sort(key=lambda r: (-r["count"], r["code"]))
    return out


def render(result: ScanResult, as_json: bool = False) -> str:
    table = rows(result)
    if as_json:
        doc = {"schema": SCHEMA, "rules": table, "total": sum(r["count"] for r in table)}
        return json.dumps(doc, indent=2) + "\n"
    if not table:
        return "no findings\n"
    width = max(len(str(r["count"])) for r in table)
    names = max(len(r["name"]) + (4 if r["fixable"] else 0) for r in table)
    lines = []
    for r in table:
        name = r["name"] + (" [*]" if r["fixable"] else "")
        sev = ", ".join(f"{s} {n}" for s, n in r["severities"].items())
        lines.append(f"{r['count']:>{width}}  {r['code']}  {name:<{names}}  {sev}")
    return "\n".join(lines) + "\n"

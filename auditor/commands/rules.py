"""``qg-audit rules`` lists the catalogue; ``qg-audit rule CODE`` explains one rule with its examples.

Both read the rule classes (auditor.lint.base.all_rules); the examples shown are the same
ones the test harness runs, so the documentation cannot drift from what is tested.
"""

from __future__ import annotations

import difflib
import json
import sys

from auditor.exitcodes import EXIT_OK, UsageError


def add_arguments(parser, name: str = "rules") -> None:
    if name == "rule":
        parser.add_argument("code", metavar="CODE", help="rule code or name, e.g. QG104 or override-after-load")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def _describe(rule, examples: bool) -> dict:
    d = {"code": rule.CODE, "name": rule.NAME, "severity": rule.SEVERITY, "confidence": rule.CONFIDENCE,
         "summary": rule.summary(), "fixable": rule.FIXABLE}
    if examples:
        d["message"] = rule.MESSAGE
        d["rationale"] = rule.RATIONALE.strip()
        d["valid"] = [{"title": e.title, "files": e.files} for e in rule.VALID]
        d["invalid"] = [{"title": e.title, "files": e.files} for e in rule.INVALID]
    return d


def run(args) -> int:
    from auditor.lint.base import all_rules, lookup

    out = sys.stdout
    if args.command == "rule":
        rule = lookup(args.code)
        if rule is None:
            names = [r.CODE for r in all_rules()] + [r.NAME for r in all_rules()]
            hint = difflib.get_close_matches(args.code.upper() if args.code[:2].lower() == "qg" else args.code,
                                             names, n=1)
            raise UsageError(f"unknown rule {args.code!r}" + (f" (did you mean {hint[0]}?)" if hint else
                                                               "; 'qg-audit rules' lists them"))
        if args.format == "json":
            out.write(json.dumps(_describe(rule, True), indent=2) + "\n")
        else:
            out.write(explain(rule))
        return EXIT_OK
    rules = all_rules()
    if args.format == "json":
        out.write(json.dumps({"schema": "qg-audit.rules/1", "rules": [_describe(r, False) for r in rules]},
                             indent=2) + "\n")
        return EXIT_OK
    width = max(len(r.NAME) for r in rules)
    out.write(f"{'CODE':<6} {'NAME':<{width}} {'SEVERITY':<8} {'CONF':<6} FIX  SUMMARY\n")
    for r in rules:
        out.write(f"{r.CODE:<6} {r.NAME:<{width}} {r.SEVERITY:<8} {r.CONFIDENCE:<6} "
                  f"{'yes' if r.FIXABLE else '-':<4} {r.summary()}\n")
    out.write(f"\n{len(rules)} rules. 'qg-audit rule CODE' explains one with its examples.\n")
    return EXIT_OK


def explain(rule) -> str:
    lines = [f"{rule.CODE} {rule.NAME}  (severity: {rule.SEVERITY}, confidence: {rule.CONFIDENCE}"
             f"{', fixable with --fix' if rule.FIXABLE else ''})", "", rule.RATIONALE.strip(), "",
             f"Message: {rule.MESSAGE}", ""]
    for label, examples in (("Reported (INVALID)", rule.INVALID), ("Not reported (VALID)", rule.VALID)):
        for i, e in enumerate(examples, 1):
            lines.append(f"{label} example {i}: {e.title}")
            for path, text in e.files.items():
                lines.append(f"  --- {path}")
                lines += [f"  {n:>3} | {t}" for n, t in enumerate(text.rstrip("\n").split("\n"), 1)]
            lines.append("")
    return "\n".join(lines)

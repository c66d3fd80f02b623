"""Rules on the joined knob model, and the CI gate. The seam the scan command calls:

    add_arguments(parser)            # --select/--ignore/--fail-on/--baseline/... flags
    check(result, args) -> None      # fills result.findings
    exit_code(result, args) -> int   # 0 clean, 1 findings at/above --fail-on

Order of the gate: run the enabled rules -> per-file ignores -> per-file severity (test
code's findings are notes by default) -> inline suppressions (and
QG002/QG003 about them) -> fingerprints -> fixes (--fix/--diff) -> baseline. Any failure
of configuration raises UsageError (exit 2), which ``--exit-zero`` never masks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.exitcodes import EXIT_FINDINGS, EXIT_OK, UsageError
from auditor.model import SEVERITIES, Finding, ScanResult


def add_arguments(parser) -> None:
    g = parser.add_argument_group("rules and the CI gate")
    g.add_argument("--select", metavar="CODES", help="only these rule codes or prefixes (comma-separated, e.g. QG1,QG001)")
    g.add_argument("--ignore", metavar="CODES", help="skip these rule codes or prefixes")
    g.add_argument("--extend-select", metavar="CODES", help="add these codes to the selection")
    g.add_argument("--per-file-ignores", metavar="GLOB:CODES", action="append",
                   help="skip CODES in files matching GLOB (repeatable), e.g. 'tests/*:QG105'")
    g.add_argument("--per-file-severity", metavar="GLOB:SEVERITY", action="append",
                   help="findings in files matching GLOB get SEVERITY (repeatable; default: test code's "
                        "findings are notes), e.g. 'tests/*:warning'")
    g.add_argument("--fail-on", choices=SEVERITIES, default=None,
                   help="lowest severity that makes the exit code 1 (default: warning)")
    g.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings remain (usage/config errors still exit 2)")
    g.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in FILE")
    g.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0")
    g.add_argument("--fix", action="store_true", help="apply the safe fixes (serial vector env -> parallel twin)")
    g.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")


def _settings(result: ScanResult) -> dict:
    if result.settings:
        return result.settings
    from auditor.settings import project_settings

    root = Path(result.root)
    return project_settings(root if root.is_dir() else root.parent)


def check(result: ScanResult, args) -> None:
    from auditor.lint import baseline, config, suppress
    from auditor.lint.base import all_rules, rules_by_code

    cfg = config.resolve(_settings(result), args)
    root = Path(result.root)
    findings: list[Finding] = []
    for rule_cls in all_rules():
        if not cfg.enabled(rule_cls.CODE):
            continue
        try:
            findings += list(rule_cls().check(result))
        except Exception as exc:  # a bug in a rule is an internal error: exit 2, never "findings"
            raise UsageError(f"internal error in rule {rule_cls.CODE} {rule_cls.NAME}: "
                             f"{type(exc).__name__}: {exc} (please report it)") from exc
    findings = [f for f in findings if not cfg.ignored_in(f.code, f.file)]
    for f in findings:
        f.severity = cfg.severity_in(f.severity, f.file)

    files = {s.file for s in result.sites} | {f.file for f in findings}
    known = set(rules_by_code())
    # a file with sites whose extraction saw no `qg:` need not be read again for suppressions
    files -= {s.file for s in result.sites if not result.meta.get(s.file, {}).get("qg_comment")}
    findings, good, bad = suppress.apply(findings, files, root, known, cfg.enabled)
    codes = rules_by_code()
    for m in bad:
        if cfg.enabled("QG002") and not cfg.ignored_in("QG002", m.file):
            findings.append(codes["QG002"]().finding(None, file=m.file, line=m.line, column=m.column,
                                                     text=m.text, problem=m.problem))
    for s, code in suppress.unused(good, cfg.enabled):
        if cfg.enabled("QG003") and not cfg.ignored_in("QG003", s.file):
            findings.append(codes["QG003"]().finding(None, file=s.file, line=s.line, column=s.column,
                                                     code=code, target=s.target))

    findings = _dedupe(findings)
    findings.sort(key=lambda f: (f.file, f.line, f.column, f.code))
    baseline.assign(findings, root)

    if cfg.fix or cfg.diff:
        from auditor.lint import fixes

        # a diff must not corrupt a machine-readable report on stdout
        machine = getattr(args, "format", "text") in ("json", "sarif") and getattr(args, "output", None) in (None, "-")
        fixed = fixes.run(findings, root, write=cfg.fix and not cfg.diff, out=sys.stderr if machine else sys.stdout)
        if cfg.fix and not cfg.diff:
            findings = [f for f in findings if id(f) not in fixed]

    stats = {"suppressed": sum(len(s.used) for s in good), "baselined": 0}
    if cfg.write_baseline:
        baseline.write(cfg.write_baseline, findings)
        stats["baselined"] = len(findings)
        findings = []
    elif cfg.baseline:
        before = len(findings)
        findings = baseline.filter_new(findings, baseline.load(_baseline_path(cfg.baseline, root, args)))
        stats["baselined"] = before - len(findings)
    result.findings = findings
    result.lint_stats = stats


def baseline_path(result: ScanResult, args) -> str | None:
    """The baseline file the gate reads for RESULT, or None (the scan cache watches it)."""
    from auditor.lint import config

    cfg = config.resolve(_settings(result), args)
    return _baseline_path(cfg.baseline, Path(result.root), args) if cfg.baseline else None


def _baseline_path(path: str, root: Path, args) -> str:
    """A baseline named on the CLI is relative to the cwd; one from pyproject to the project."""
    if getattr(args, "baseline", None) or Path(path).is_absolute():
        return path
    base = root if root.is_dir() else root.parent
    return str(base / path)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        key = (f.code, f.file, f.line, f.column, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def exit_code(result: ScanResult, args) -> int:
    from auditor.lint import config

    cfg = config.resolve(_settings(result), args)
    if cfg.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if any(cfg.fails(f.severity) for f in result.findings) else EXIT_OK

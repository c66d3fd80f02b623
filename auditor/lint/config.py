"""Which rules run and what fails the gate: ``[tool.qg-audit]`` merged with CLI flags.

pyproject.toml of the scanned project::

    [tool.qg-audit]
    select = ["QG1"]               # code prefixes; default: every rule
    ignore = ["QG105"]
    extend-select = ["QG003"]
    per-file-ignores = { "tests/*" = ["QG105", "QG107"] }
    # findings in matching files get this severity; the default (DEFAULT_PER_FILE_SEVERITY)
    # makes test code's findings notes. per-file-severity replaces it, extend- adds to it;
    # the last matching glob wins
    extend-per-file-severity = { "examples/*" = "note" }
    fail-on = "warning"            # note | warning | error
    baseline = "qg-baseline.json"

CLI flags win over the file (``--select`` replaces ``select``; ``--ignore`` and
``--extend-select`` add to theirs). An unknown key, code or severity is a UsageError that
names the bad spelling and, when one is close, the intended one.
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass, field
from typing import Any

from auditor.exitcodes import UsageError
from auditor.model import SEVERITIES

# Keys of [tool.qg-audit] this module owns; the others belong to the knob vocabulary and the
# scanner, which validate their own values.
LINT_KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "per-file-severity",
             "extend-per-file-severity", "fail-on", "baseline")
# Test and benchmark code sets parallelism on purpose (one worker, a forced or a serial
# backend to compare against): its findings are notes unless the project says otherwise.
# The test globs cover what base.is_test_file names.
DEFAULT_PER_FILE_SEVERITY = {
    "tests/*": "note", "*/tests/*": "note", "test/*": "note", "*/test/*": "note",
    "testing/*": "note", "*/testing/*": "note",
    "test_*.py": "note", "*_test.py": "note", "conftest.py": "note",
    "benchmarks/*": "note", "*/benchmarks/*": "note",
}
# Sub-tables other commands own and validate themselves ([tool.qg-audit.profile]).
COMMAND_TABLES = ("profile",)


def known_keys() -> set[str]:
    keys = set(LINT_KEYS) | set(COMMAND_TABLES)
    from auditor import vocab

    keys |= set(vocab.EXTENSION_KEYS)
    import auditor.scan as scan  # the scanner lists the keys it owns (exclude, ...) in SETTINGS_KEYS

    keys |= set(getattr(scan, "SETTINGS_KEYS", ()))
    return keys


@dataclass
class LintConfig:
    select: list[str] = field(default_factory=lambda: ["QG"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    per_file_severity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PER_FILE_SEVERITY))
    fail_on: str = "warning"
    exit_zero: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    fix: bool = False
    diff: bool = False

    def enabled(self, code: str) -> bool:
        """ruff semantics: the longest matching prefix among select/ignore decides."""
        best_len, best = -1, False
        for prefix in self.select + self.extend_select:
            if code.startswith(prefix) and len(prefix) > best_len:
                best_len, best = len(prefix), True
        for prefix in self.ignore:
            if code.startswith(prefix) and len(prefix) >= best_len:
                best_len, best = len(prefix), False
        return best

    def ignored_in(self, code: str, path: str) -> bool:
        for pattern, codes in self.per_file_ignores.items():
            if _path_matches(path, pattern) and any(code.startswith(c) for c in codes):
                return True
        return False

    def severity_in(self, severity: str, path: str) -> str:
        """The severity a finding of SEVERITY in PATH gets: the last matching glob's, else its own."""
        for pattern, value in reversed(self.per_file_severity.items()):
            if _path_matches(path, pattern):
                return value
        return severity

    def fails(self, severity: str) -> bool:
        return SEVERITIES.index(severity) >= SEVERITIES.index(self.fail_on)


def _path_matches(path: str, pattern: str) -> bool:
    pattern = pattern.strip("/")
    return (fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")
            or fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern))


def all_codes() -> list[str]:
    from auditor.lint.base import all_rules

    return [r.CODE for r in all_rules()]


def check_codes(values: list[str], origin: str) -> list[str]:
    """Each value must be a known code or a prefix of one ("QG1", "QG"), else UsageError."""
    codes = all_codes()
    out = []
    for raw in values:
        value = raw.strip().upper()
        if value == "ALL":
            value = "QG"
        if not value or not any(c.startswith(value) for c in codes):
            hint = difflib.get_close_matches(value, codes, n=1)
            suggestion = f" (did you mean {hint[0]}?)" if hint else f"; known codes: {', '.join(codes)}"
            raise UsageError(f"{origin}: unknown rule code {raw!r}{suggestion}")
        out.append(value)
    return out


def _split(value: Any, origin: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in (p.strip() for p in value.split(",")) if v]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"{origin} must be a list of rule codes, got {value!r}")


def _severity(value: Any, origin: str) -> str:
    if value not in SEVERITIES:
        raise UsageError(f"{origin}: unknown severity {value!r}; use one of {', '.join(SEVERITIES)}")
    return value


def from_settings(settings: dict[str, Any], origin: str = "pyproject.toml [tool.qg-audit]") -> LintConfig:
    """The lint part of a project's ``[tool.qg-audit]`` table, validated."""
    keys = known_keys()
    for key in settings:
        if key not in keys:
            hint = difflib.get_close_matches(key, sorted(keys), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else f"; known keys: {', '.join(sorted(keys))}"
            raise UsageError(f"{origin}: unknown key {key!r}{suggestion}")
    cfg = LintConfig()
    if "select" in settings:
        cfg.select = check_codes(_split(settings["select"], f"{origin} select"), f"{origin} select")
    cfg.ignore = check_codes(_split(settings.get("ignore"), f"{origin} ignore"), f"{origin} ignore")
    cfg.extend_select = check_codes(_split(settings.get("extend-select"), f"{origin} extend-select"),
                                    f"{origin} extend-select")
    pfi = settings.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise UsageError(f"{origin} per-file-ignores must be a table of glob = [codes]")
    for pattern, codes in pfi.items():
        where = f"{origin} per-file-ignores {pattern!r}"
        cfg.per_file_ignores[pattern] = check_codes(_split(codes, where), where)
    if "per-file-severity" in settings:
        cfg.per_file_severity = {}
    for key in ("per-file-severity", "extend-per-file-severity"):
        table = settings.get(key, {})
        if not isinstance(table, dict):
            raise UsageError(f"{origin} {key} must be a table of glob = severity")
        for pattern, value in table.items():
            cfg.per_file_severity.pop(pattern, None)  # re-inserted last: it wins over earlier globs
            cfg.per_file_severity[pattern] = _severity(value, f"{origin} {key} {pattern!r}")
    if "fail-on" in settings:
        cfg.fail_on = _severity(settings["fail-on"], f"{origin} fail-on")
    if "baseline" in settings:
        if not isinstance(settings["baseline"], str):
            raise UsageError(f"{origin} baseline must be a file path")
        cfg.baseline = settings["baseline"]
    return cfg


def resolve(settings: dict[str, Any], args: Any) -> LintConfig:
    """Project settings, then the CLI flags on top."""
    cfg = from_settings(settings or {})
    if getattr(args, "select", None):
        cfg.select = check_codes(_split(args.select, "--select"), "--select")
    if getattr(args, "ignore", None):
        cfg.ignore += check_codes(_split(args.ignore, "--ignore"), "--ignore")
    if getattr(args, "extend_select", None):
        cfg.extend_select += check_codes(_split(args.extend_select, "--extend-select"), "--extend-select")
    for spec in getattr(args, "per_file_ignores", None) or []:
        pattern, sep, codes = spec.partition(":")
        if not sep or not pattern:
            raise UsageError(f"--per-file-ignores {spec!r}: expected GLOB:CODE[,CODE]")
        cfg.per_file_ignores[pattern] = check_codes(_split(codes, "--per-file-ignores"), "--per-file-ignores")
    for spec in getattr(args, "per_file_severity", None) or []:
        pattern, sep, value = spec.rpartition(":")
        if not sep or not pattern:
            raise UsageError(f"--per-file-severity {spec!r}: expected GLOB:SEVERITY (e.g. 'examples/*:note')")
        cfg.per_file_severity.pop(pattern, None)
        cfg.per_file_severity[pattern] = _severity(value.strip(), "--per-file-severity")
    if getattr(args, "fail_on", None):
        cfg.fail_on = _severity(args.fail_on, "--fail-on")
    cfg.exit_zero = bool(getattr(args, "exit_zero", False))
    if getattr(args, "baseline", None):
        cfg.baseline = args.baseline
    cfg.write_baseline = getattr(args, "write_baseline", None)
    cfg.fix = bool(getattr(args, "fix", False))
    cfg.diff = bool(getattr(args, "diff", False))
    return cfg

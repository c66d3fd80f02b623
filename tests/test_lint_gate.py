"""The CI gate on real scans: selection, per-file ignores, [tool.qg-audit], suppressions."""

from __future__ import annotations

import pytest

from auditor.exitcodes import UsageError
from auditor.lint import exit_code
from auditor.lint.config import LintConfig, from_settings
from auditor.lint.harness import default_args, scan_and_check, write_project
from auditor.lint.suppress import parse

PROJECT = {
    "conf.yaml": "data:\n  num_workers: 8\n",
    "train.py": ("import torch\nfrom torch.utils.data import DataLoader\n"
                 "def main(cfg):\n"
                 "    torch.set_num_threads(1)\n"
                 "    n = cfg['data'].get('num_workers', 0)\n"
                 "    return DataLoader(ds, num_workers=n)\n"),
    "tests/test_train.py": "import torch\ntorch.set_num_threads(1)\n",
}


def codes(result):
    return sorted((f.code, f.file, f.line) for f in result.findings)


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path, PROJECT)


def test_default_selection_reports_each_rule(project):
    got = codes(scan_and_check(project))
    assert ("QG103", "train.py", 5) in got and ("QG107", "train.py", 4) in got
    assert not any(f == "tests/test_train.py" for _, f, _ in got)  # test files: no thread-pinning


def test_select_ignore_and_prefixes(project):
    assert {c for c, _, _ in codes(scan_and_check(project, default_args(select="QG107")))} == {"QG107"}
    assert "QG107" not in {c for c, _, _ in codes(scan_and_check(project, default_args(ignore="QG107")))}
    only = scan_and_check(project, default_args(select="QG1", ignore="QG10", extend_select="QG103"))
    assert {c for c, _, _ in codes(only)} == {"QG103"}  # the longest matching prefix decides


def test_per_file_ignores_from_cli_and_pyproject(project):
    got = codes(scan_and_check(project, default_args(per_file_ignores=["train.py:QG103"])))
    assert ("QG103", "train.py", 5) not in got and ("QG107", "train.py", 4) in got
    (project / "pyproject.toml").write_text('[tool.qg-audit]\nper-file-ignores = { "train.py" = ["QG107"] }\n'
                                            'fail-on = "error"\n')
    result = scan_and_check(project)
    assert ("QG107", "train.py", 4) not in codes(result) and ("QG103", "train.py", 5) in codes(result)
    assert exit_code(result, default_args()) == 0  # fail-on = "error" and only warnings remain


@pytest.mark.parametrize("settings,needle", [
    ({"selct": ["QG101"]}, "unknown key 'selct' (did you mean 'select'?)"),
    ({"ignore": ["QG1O4"]}, "unknown rule code 'QG1O4' (did you mean QG104?)"),
    ({"fail-on": "warn"}, "unknown severity 'warn'"),
    ({"per-file-ignores": {"tests/*": ["QG999"]}}, "unknown rule code 'QG999'"),
])
def test_bad_settings_name_the_bad_spelling(settings, needle):
    with pytest.raises(UsageError) as err:
        from_settings(settings)
    assert needle in str(err.value)


def test_other_commands_tables_and_vocabulary_keys_are_accepted():
    # [tool.qg-audit.profile] belongs to `qg-audit profile`; extra-knobs to the vocabulary.
    config = from_settings({"profile": {"wait_low": 0.1}, "extra-knobs": ["rollout_shards"],
                            "select": ["QG1"]})
    assert isinstance(config, LintConfig)


def test_unknown_cli_code_is_a_usage_error(project):
    with pytest.raises(UsageError, match="--select: unknown rule code 'QG77'"):
        scan_and_check(project, default_args(select="QG77"))


def test_fail_on_and_exit_zero(project):
    result = scan_and_check(project)
    assert exit_code(result, default_args()) == 1
    assert exit_code(result, default_args(exit_zero=True)) == 0
    quiet = scan_and_check(project, default_args(fail_on="error"))
    assert exit_code(quiet, default_args(fail_on="error")) == 0


def test_enabled_longest_prefix():
    cfg = LintConfig(select=["QG"], ignore=["QG1"], extend_select=["QG104"])
    assert cfg.enabled("QG104") and not cfg.enabled("QG101") and cfg.enabled("QG001")


# -- suppression grammar ----------------------------------------------------------------

KNOWN = {"QG101", "QG104", "QG107"}


@pytest.mark.parametrize("comment,problem", [
    ("# qg: ignore", "names no codes"),
    ("# qg: ignore[]", "names no codes"),
    ("# qg: ignore[QG107]", "gives no reason"),
    ("# qg: ignore[QG107]reason", "needs a space"),
    ("# qg: ignore[QG999] why", "unknown rule code QG999"),
    ("# qg: ignore[qg107] why", "not a rule code"),
    ("# QG: IGNORE[QG107] why", "expected 'qg: ignore[QG101] reason'"),
    ("# qg:ignore[QG107] why", "expected 'qg: ignore[QG101] reason'"),
    ("# qg: noqa", "expected 'qg: ignore[QG101] reason'"),
])
def test_malformed_suppressions(comment, problem):
    good, bad = parse(f"x = 1  {comment}\n", "a.py", KNOWN)
    assert not good and len(bad) == 1 and problem in bad[0].problem, bad


def test_wellformed_suppressions_and_their_targets():
    text = "# qg: ignore[QG101,QG104] both are read elsewhere\n\nx = 1\ny = 2  # qg: ignore[QG107] pinned on purpose\n"
    good, bad = parse(text, "a.yaml", KNOWN)
    assert not bad
    assert [(s.line, s.target, s.codes) for s in good] == [(1, 3, ["QG101", "QG104"]), (4, 4, ["QG107"])]
    assert good[0].reason == "both are read elsewhere"


def test_suppression_text_inside_a_python_string_is_not_a_comment():
    good, bad = parse("msg = '# qg: ignore'\n", "a.py", KNOWN)
    assert not good and not bad


def test_a_crashing_rule_is_an_internal_error_not_findings(project, monkeypatch):
    import auditor.lint.base as base

    class Broken(base.Rule):
        CODE, NAME, MESSAGE, RATIONALE = "QG199", "broken", "x", "x"

        def check(self, result):
            raise KeyError("boom")

    monkeypatch.setattr(base, "all_rules", lambda: (Broken,))
    with pytest.raises(UsageError, match="internal error in rule QG199 broken: KeyError"):
        scan_and_check(project)

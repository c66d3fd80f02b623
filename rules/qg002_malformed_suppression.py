"""QG002 malformed-suppression and QG003 unused-suppression: findings about suppressions.

Both are produced by the gate (auditor/lint/suppress.py), which reads comments; these
classes carry their documentation, examples and selection codes.
"""

from auditor.lint.base import Example, Rule

_CODE = "import torch\ntorch.set_num_threads(1)"


class MalformedSuppression(Rule):
    CODE = "QG002"
    NAME = "malformed-suppression"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "suppression {text!r} is malformed and suppresses nothing: {problem}"
    RATIONALE = """\
A suppression comment that does not follow the grammar exactly is reported and suppresses
nothing. The grammar is `# qg: ignore[QG101] reason` (several codes: `ignore[QG101,QG104]`);
the reason is required.

flake8's loose `# noqa` grammar silently widens a typo into a blanket suppression; qg-audit
never guesses what a malformed suppression meant."""
    VALID = [Example({"train.py": _CODE + "  # qg: ignore[QG107] learner shares the box with 8 env workers\n"},
                     "well-formed, with a reason")]
    INVALID = [
        Example({"train.py": _CODE + "  # qg: ignore\n"}, "a blanket suppression without codes",
                expect=[("train.py", 2)]),
        Example({"train.py": _CODE + "  # qg: ignore[QG107]\n"}, "no reason", expect=[("train.py", 2)]),
        Example({"train.py": _CODE + "  # qg: ignore[QG999] typo\n"}, "an unknown code",
                expect=[("train.py", 2)]),
    ]

    def check(self, result):
        return ()


class UnusedSuppression(Rule):
    CODE = "QG003"
    NAME = "unused-suppression"
    SEVERITY = "note"
    CONFIDENCE = "high"
    MESSAGE = "suppression of {code} matches no finding on line {target}; remove it"
    RATIONALE = """\
A well-formed suppression whose code matches no finding on the line it covers is stale: the
problem was fixed or the comment sits on the wrong line. Stale suppressions hide the next
regression on that line, so they are reported (only for codes enabled in the run)."""
    VALID = [Example({"train.py": _CODE + "  # qg: ignore[QG107] learner is pinned on purpose\n"},
                     "the suppression is used")]
    INVALID = [Example({"train.py": "import torch\ntorch.set_num_threads(8)  # qg: ignore[QG107] old pin\n"},
                       "nothing to suppress any more", expect=[("train.py", 2)])]

    def check(self, result):
        return ()

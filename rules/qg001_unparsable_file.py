"""QG001 unparsable-file: a file could not be read or parsed; its knobs are unknown."""

from auditor.lint.base import Example, Rule


class UnparsableFile(Rule):
    CODE = "QG001"
    NAME = "unparsable-file"
    SEVERITY = "note"
    CONFIDENCE = "high"
    MESSAGE = "{path} was not scanned: {reason}; any parallelism it sets or reads is unknown to qg-audit"
    RATIONALE = """\
A file that cannot be read or parsed is skipped, so the knobs it defines or reads are
missing from the inventory and from every other rule. The scan goes on; this note makes the
gap visible.

Fix the syntax error or encoding, or exclude the file from the scan."""
    VALID = [Example({"conf.yaml": "num_workers: 4\n", "train.py": "n = cfg['num_workers']\n"},
                     "files that parse")]
    INVALID = [Example({"conf.yaml": "data:\n  num_workers: [4\n", "train.py": "n = cfg['num_workers']\n"},
                       "a YAML file with an unclosed flow sequence"),
               Example({"train.py": "def f(:\n    num_workers = 4\n"}, "a Python syntax error")]

    def check(self, result):
        for err in result.errors:
            yield self.finding(None, file=err.file, line=err.line or 1, column=1,
                               path=err.file, reason=err.message)

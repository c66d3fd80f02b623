"""Fingerprints and the baseline file.

A fingerprint is a hash of (code, file, knob, normalised source text of the finding's line),
never of the line number, so inserting or deleting unrelated lines above a finding keeps it
matched (bandit's approach). Identical fingerprints (the same statement twice in one file)
are matched by count.

Baseline file (``--write-baseline FILE``; JSON, schema ``qg-audit.baseline/1``)::

    {"schema": "qg-audit.baseline/1",
     "findings": [{"fingerprint": "3f1c...", "code": "QG104", "file": "train.py",
                   "knob": "num_workers", "line": 41, "message": "..."}]}

Only ``fingerprint`` is used for matching; the other fields are there for people reviewing
the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from auditor.exitcodes import UsageError
from auditor.lint.suppress import read_regular
from auditor.model import Finding

SCHEMA = "qg-audit.baseline/1"


def normalise_source(text: str) -> str:
    """Whitespace-insensitive, trailing-comment-insensitive source text."""
    text = re.sub(r"\s+#.*$", "", text.strip())
    return re.sub(r"\s+", "", text)


def fingerprint(finding: Finding, source: str) -> str:
    parts = [finding.code, finding.file, finding.knob or "", normalise_source(source)]
    # surrogateescape: a non-UTF-8 file name hashes as its bytes instead of crashing the scan
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:20]


class SourceLines:
    """Reads each file once to give a finding's line text."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, list[str]] = {}

    def line(self, rel: str, line: int) -> str:
        if rel not in self.cache:
            data = read_regular(self.root if self.root.is_file() else self.root / rel)
            self.cache[rel] = data.decode("utf-8", errors="replace").splitlines() if data else []
        lines = self.cache[rel]
        return lines[line - 1] if 0 < line <= len(lines) else ""


def assign(findings: list[Finding], root: Path) -> None:
    lines = SourceLines(root)
    for f in findings:
        source = lines.line(f.file, f.line) or (f.related[0].source if f.related else "")
        f.fingerprint = fingerprint(f, source)


def write(path: str, findings: list[Finding]) -> None:
    data = {
        "schema": SCHEMA,
        "findings": [{"fingerprint": f.fingerprint, "code": f.code, "file": f.file, "knob": f.knob,
                      "line": f.line, "message": f.message} for f in findings],
    }
    try:
        Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--write-baseline {path}: cannot write: {exc.strerror}") from exc


def load(path: str) -> Counter:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"baseline {path}: no such file (create it with --write-baseline {path})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"baseline {path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline {path}:{exc.lineno}: not valid JSON ({exc.msg}); "
                         f"regenerate it with --write-baseline") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("findings"), list):
        raise UsageError(f"baseline {path}: not a {SCHEMA} file; regenerate it with --write-baseline")
    counts: Counter = Counter()
    for entry in data["findings"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise UsageError(f"baseline {path}: an entry has no fingerprint; regenerate it with --write-baseline")
        counts[entry["fingerprint"]] += 1
    return counts


def filter_new(findings: list[Finding], known: Counter) -> list[Finding]:
    """Findings not covered by the baseline (each baseline entry covers one finding)."""
    left = Counter(known)
    out = []
    for f in findings:
        if left[f.fingerprint] > 0:
            left[f.fingerprint] -= 1
        else:
            out.append(f)
    return out

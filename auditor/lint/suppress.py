"""Inline suppressions with a strict grammar, and the findings about them (QG002, QG003).

Grammar, in a ``#`` comment of a Python, YAML, TOML or shell file::

    # qg: ignore[QG101] the reason, required
    # qg: ignore[QG101,QG104] several codes, one reason

- Exactly ``qg: ignore[`` + one or more codes + ``]`` + a non-empty reason. A reason is
  required: a silent fallback that is accepted must say why, or the next reader re-audits it.
- On a line with code it covers findings on that line; on a comment-only line it covers
  the next line that is not blank and not a comment.
- Anything else that starts like a suppression (``qg: ignore`` without codes, ``qg:ignore[]``,
  an unknown code, a missing reason, ``qg: noqa``) is **QG002 malformed-suppression** and
  suppresses nothing: a typo never widens into a blanket suppression.
- A suppression whose code matched no finding is **QG003 unused-suppression** (only for codes
  that are enabled in this run).
"""

from __future__ import annotations

import io
import re
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from auditor.model import Finding

CANDIDATE = re.compile(r"\bqg\s*:", re.IGNORECASE)
STRICT = re.compile(r"^qg: ignore\[(?P<codes>[^\]]*)\](?P<reason>.*)$")
CODE = re.compile(r"^QG\d{3}$")
COMMENT_KINDS = (".py", ".yaml", ".yml", ".toml", ".sh", ".bash", ".cfg", ".ini")


@dataclass
class Suppression:
    file: str
    line: int  # where the comment is
    target: int  # the line it covers
    column: int
    codes: list[str]
    reason: str
    used: set[str] = field(default_factory=set)


@dataclass
class Malformed:
    file: str
    line: int
    column: int
    text: str
    problem: str


def comments(text: str, path: str) -> list[tuple[int, int, str, bool]]:
    """(line, column, comment text after '#', comment-only line) for each '#' comment."""
    lines = text.splitlines()
    out = []
    if path.endswith(".py"):
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT:
                    row, col = tok.start
                    only = lines[row - 1][:col].strip() == ""
                    out.append((row, col + 1, tok.string[1:], only))
            return out
        except (tokenize.TokenError, SyntaxError, IndentationError):
            out = []  # fall back to the line scan below
    for row, raw in enumerate(lines, 1):
        # a '#' that starts a comment: at line start or after whitespace (not inside a word,
        # not a shell "$#" or a URL fragment)
        for m in re.finditer(r"(?:^|(?<=\s))#", raw):
            out.append((row, m.start() + 1, raw[m.end():], raw[: m.start()].strip() == ""))
            break
    return out


def parse(text: str, path: str, known_codes: set[str]) -> tuple[list[Suppression], list[Malformed]]:
    good: list[Suppression] = []
    bad: list[Malformed] = []
    lines = text.splitlines()
    for row, col, body, only in comments(text, path):
        body = body.strip()
        found = CANDIDATE.search(body)
        if not found:
            continue
        directive = body[found.start():].strip()
        problem = _problem(directive, known_codes)
        if problem:
            bad.append(Malformed(path, row, col, directive, problem))
            continue
        m = STRICT.match(directive)
        codes = [c.strip() for c in m.group("codes").split(",")]
        target = _next_code_line(lines, row) if only else row
        good.append(Suppression(path, row, target, col, codes, m.group("reason").strip()))
    return good, bad


def _problem(directive: str, known_codes: set[str]) -> str | None:
    m = STRICT.match(directive)
    if not m:
        if re.match(r"^qg\s*:\s*ignore\b", directive, re.IGNORECASE) and "[" not in directive:
            return "names no codes; write 'qg: ignore[QG101] reason' (blanket suppressions are not allowed)"
        return "expected 'qg: ignore[QG101] reason' (exactly this spelling and spacing)"
    codes = [c.strip() for c in m.group("codes").split(",")]
    if not codes or any(not c for c in codes):
        return "names no codes (or an empty one) between the brackets"
    for c in codes:
        if not CODE.match(c):
            return f"{c!r} is not a rule code (QG + 3 digits)"
        if c not in known_codes:
            return f"unknown rule code {c}"
    reason = m.group("reason")
    if not reason.strip():
        return "gives no reason; write the reason after the brackets"
    if not reason.startswith((" ", "\t")):
        return "needs a space between ']' and the reason"
    return None


def _next_code_line(lines: list[str], row: int) -> int:
    for i in range(row, len(lines)):
        stripped = lines[i].strip()
        if stripped and not stripped.startswith(("#", "//")):
            return i + 1
    return row


def read_regular(path: Path, limit: int = 5_000_000) -> bytes | None:
    """A regular file's bytes; None for FIFOs, devices, sockets (reading them can block
    forever: they are in the scan's errors already), oversized or unreadable files."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return path.read_bytes()
    except OSError:
        return None


def read_file(root: Path, rel: str) -> str | None:
    data = read_regular(root if root.is_file() else root / rel)
    if data is None or b"qg" not in data.lower():
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def apply(findings: list[Finding], files: set[str], root: Path, known_codes: set[str],
          enabled) -> tuple[list[Finding], list[Suppression], list[Malformed]]:
    """Drop suppressed findings; return (kept, suppressions, malformed)."""
    all_good: list[Suppression] = []
    all_bad: list[Malformed] = []
    index: dict[tuple[str, int], list[Suppression]] = {}
    for rel in sorted(files):
        if not rel.endswith(COMMENT_KINDS) and "." in rel.rsplit("/", 1)[-1]:
            continue
        text = read_file(root, rel)
        if text is None:
            continue
        good, bad = parse(text, rel, known_codes)
        all_good += good
        all_bad += bad
        for s in good:
            index.setdefault((rel, s.target), []).append(s)
    kept = []
    for f in findings:
        hit = None
        for s in index.get((f.file, f.line), []):
            if f.code in s.codes:
                hit = s
                break
        if hit is None:
            kept.append(f)
        else:
            hit.used.add(f.code)
    return kept, all_good, all_bad


def unused(suppressions: list[Suppression], enabled) -> list[tuple[Suppression, str]]:
    return [(s, c) for s in suppressions for c in s.codes if c not in s.used and enabled(c)]

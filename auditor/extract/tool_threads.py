"""Thread counts written into the commands of external programs (facts for QG105).

ffmpeg's ``-threads``, nvcc's ``--threads``, hmmsearch's ``--cpu``, GNU parallel's ``-j``: a
program the project starts runs a pool of its own, sized by an option of its own. A literal
there (``["ffmpeg", "-nostdin", "-threads", "0", "-i", path]``, ``parallel -j 4 run ::: ...`` in
a shell script) is a count no setting of the project reaches. Which programs and options is
data (rules/commands.yaml). Each fact in ``meta["tool_threads"]``::

    {"line", "program", "flag", "value", "auto"}

``program`` is the program's name, the expression of a computed one (``self.binary_path``), or
None for arguments with no program (``nvcc_args + [...]``); ``auto`` is the value with which the
program picks the count itself.
Commands are given as (kind, text, line) words, kind "lit" (a literal word), "expr" (a computed
one) or "open" (a part of unknown length), as auditor/extract/py_launch.py reads them.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_FACTS = 20  # per file
DIGITS = re.compile(r"\d+")
PYTHON = re.compile(r"python[\d.]*")
SCRIPT = re.compile(r".+\.(py|sh)")
INTERPRETER = re.compile(r"python|executable", re.IGNORECASE)


@lru_cache(maxsize=1)
def catalogue() -> tuple[tuple[tuple[re.Pattern, tuple[str, ...], str | None], ...], tuple[str, ...]]:
    """((program pattern, its count options, its auto value), ...) and the options that name a
    thread count in any program."""
    from auditor import catalogue as rules

    data = rules.data("commands.yaml")
    programs = tuple((re.compile(str(entry["program"])), tuple(map(str, entry["flags"])),
                      None if entry.get("auto") is None else str(entry["auto"]))
                     for entry in data.get("commands", ()))
    return programs, tuple(map(str, data.get("any_program", ())))


@lru_cache(maxsize=1)
def _flags() -> tuple[str, ...]:
    """Every count option of the catalogue, longest first (`--cpus` before `--cpu`)."""
    programs, generic = catalogue()
    return tuple(sorted({flag for _, options, _ in programs for flag in options} | set(generic), key=len, reverse=True))


_VALUE = r"(?:['\"]?\s*,?\s*['\"]?|=|\s+)?\d"  # `-threads", "0"`, `-j 4`, `--cpu=8`, `-j4`


@lru_cache(maxsize=2)
def _patterns(kind: type) -> tuple[re.Pattern, re.Pattern]:
    """(a fast pattern that starts with a literal `-`, which the regex engine scans for; the
    exact one, with the option as a whole word) for str or bytes."""
    tails = "|".join(re.escape(f[1:]) for f in _flags())
    whole = "|".join(re.escape(f) for f in _flags())
    fast, exact = rf"-(?:{tails}){_VALUE}", rf"(?<![\w-])(?:{whole}){_VALUE}"
    if kind is bytes:
        return re.compile(fast.encode()), re.compile(exact.encode())
    return re.compile(fast), re.compile(exact)


def mentions(text: str | bytes) -> bool:
    """Does TEXT hold an option of the catalogue followed by a number (`-threads", "0"`, `-j 4`,
    `--cpu=8`, `-j4`)? A cheap test of a file before any walk: the exact pattern, with its
    look-behind, is 20 times slower over a tree, so it runs only where the fast one matched."""
    fast, exact = _patterns(type(text))
    return fast.search(text) is not None and exact.search(text) is not None


@lru_cache(maxsize=1)
def option_word() -> re.Pattern:
    """An option of the catalogue as a word: the lines a command's count may stand on."""
    return re.compile(rf"(?<![\w-])(?:{'|'.join(re.escape(f) for f in _flags())})(?![A-Za-z_-])")


def counts(words: list[tuple[str, str, int]], known_only: bool) -> list[dict]:
    """The literal counts given to a program's count options in the command WORDS. KNOWN_ONLY:
    only a command whose program the catalogue names (a string, a shell line: a word there that
    looks like an option may be prose or another program's)."""
    found = _program(words, known_only)
    if found is None:
        return []
    program, start, flags, auto = found
    out = []
    i = start
    while i < len(words):
        kind, text, line = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        flag, value, width = _value(kind, text, nxt, flags)
        if value is not None:
            out.append({"line": line, "program": program, "flag": flag, "value": value, "auto": auto})
        i += width
    return out


def _program(words, known_only: bool):
    """(program name or None, index of its first argument, count options, auto value), or None
    when the command is a Python script's (its flags are that script's settings) or unknown
    where only known programs count."""
    programs, generic = catalogue()
    if not words:
        return None
    kind, text, _ = words[0]
    rest = [w[1] if w[0] == "lit" else None for w in words[1:4]]
    if kind == "lit" and text.startswith("-"):
        return None if known_only else (None, 0, generic, None)  # arguments with no program
    name = text.rsplit("/", 1)[-1] if kind == "lit" else None
    if name is not None and PYTHON.fullmatch(name) or kind == "expr" and (
            INTERPRETER.search(text) or rest and rest[0] is not None and (rest[0] == "-m" or SCRIPT.fullmatch(rest[0]))):
        # an interpreter, or a computed one (sys.executable, a script or module after it)
        if "-m" not in rest[:2]:
            return None
        at = rest.index("-m") + 2
        module = rest[at - 1] if at - 1 < len(rest) else None
        for pattern, flags, auto in programs:
            if module and pattern.fullmatch(module):
                return module, at + 1, flags, auto
        return None
    if name is not None:
        for pattern, flags, auto in programs:
            if pattern.fullmatch(name):
                return name, 1, flags, auto
        return None  # a program the catalogue does not know: its options may mean anything
    if known_only:
        return None
    return (text if kind == "expr" else None), 1, generic, None  # a computed program, an open head


def _value(kind: str, text: str, nxt, flags) -> tuple[str | None, str | None, int]:
    """(the option this word names, the literal count it gives, words it spans)."""
    if kind != "lit":
        return None, None, 1
    for flag in flags:
        if text == flag:
            if nxt is not None and nxt[0] == "lit" and DIGITS.fullmatch(nxt[1]):
                return flag, nxt[1], 2
            return None, None, 1
        if text.startswith(flag + "=") and DIGITS.fullmatch(text[len(flag) + 1:]):
            return flag, text[len(flag) + 1:], 1
        if len(flag) == 2 and text.startswith(flag) and DIGITS.fullmatch(text[2:]):
            return flag, text[2:], 1  # `-j4`
    return None, None, 1


def python_facts(tree, src) -> list[dict]:
    """The counts of the commands a Python file builds: a list or tuple of words (or a sum of
    them, `args + ["--threads", "4"]`), read whole; a one-line string or f-string only when
    it starts with a program the catalogue names."""
    import ast

    from auditor.extract.py_launch import commands

    lines = [i for i, line in enumerate(src.lines, 1) if option_word().search(line)]
    facts: list[dict] = []
    inside: set[int] = set()  # nodes read as part of a larger command
    for node, words in commands(tree, src, lines, inside):
        known_only = isinstance(node, (ast.Constant, ast.JoinedStr))
        found = counts(words, known_only)
        if found or isinstance(node, (ast.BinOp, ast.JoinedStr)):  # its parts are this command's
            inside.update(id(n) for n in ast.walk(node))
        for fact in found:
            facts.append({**fact, "col": node.col_offset + 1})
            if len(facts) >= MAX_FACTS:
                return facts
    return facts

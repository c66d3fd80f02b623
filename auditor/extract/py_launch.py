"""Launch commands a program builds in Python (facts for QG105).

A distributed launcher started from code, not from a shell script:
``["torchrun"] + launcher_args + ["-m", "axolotl.cli.train", cfg]``,
``["torchrun", "--nproc_per_node", "1", "--nnodes", str(self.process_num), "infer.py"]``,
``f"torchrun --nproc_per_node {n} train.py"``. Which programs are launchers, how they are
recognised and which flags count their processes is data (rules/workers.yaml). Each fact in
``meta["launch_commands"]``::

    {"line", "col", "launcher", "flags": {flag: {"value", "literal", "line"}}, "open": [text]}

``open`` lists the parts of the command not known here (``launcher_args``, ``*extra``), in
front of the program: a flag may come from them.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from functools import lru_cache

from auditor.extract.py_refs import walk

MAX_FACTS = 50  # per file
PYTHON = re.compile(r"(^|/)python[\d.]*$|^\{\}$")  # an interpreter, or a computed one (sys.executable)
HEAD_WORDS = 4  # launcher words at most before its options (`python -m torch.distributed.run`)


@lru_cache(maxsize=1)
def launchers() -> tuple[tuple[str, re.Pattern, tuple[str, ...]], ...]:
    """(launcher, command-line pattern, count flags) of every launcher in rules/workers.yaml."""
    from auditor import catalogue

    out = []
    for rule in catalogue.data("workers.yaml").get("rules", []):
        if rule.get("launcher") and rule.get("cmdline") and rule.get("count_flags"):
            out.append((rule["launcher"], re.compile(rule["cmdline"]), tuple(rule["count_flags"])))
    return tuple(out)


def mentions_launcher(text: str) -> bool:
    """A cheap test before the walk: the file names a launcher at all."""
    return "torchrun" in text or "torch.distributed" in text or "accelerate" in text or "deepspeed" in text


def launch_commands(tree: ast.AST, src) -> list[dict]:
    from auditor.extract.shell_script import LAUNCHER_BOOLEANS

    facts: list[dict] = []
    inside: set[int] = set()  # nodes already read as part of a larger command
    lines = [i for i, line in enumerate(src.lines, 1) if mentions_launcher(line)]
    for node, items in commands(tree, src, lines, inside):
        if items[0][0] == "open":
            continue
        found = _launcher(items)
        if found is None:
            continue
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and not _command_like(items[found[1]:]):
            continue  # prose that names the launcher ("torchrun is required")
        inside.update(id(n) for n in ast.walk(node))
        launcher, start = found
        flags, open_parts = _options(items[start:], LAUNCHER_BOOLEANS, node.lineno)
        facts.append({"line": node.lineno, "col": node.col_offset + 1, "launcher": launcher,
                      "flags": flags, "open": open_parts})
        if len(facts) >= MAX_FACTS:
            break
    return facts


def commands(tree: ast.AST, src, lines: list[int], inside: set[int]):
    """(node, its words) of each node on LINES that may be a command (a list or tuple of words,
    a sum of them, a one-line string or f-string), outermost first, less the nodes in INSIDE
    (the caller adds the parts of a command it has read)."""
    for node in walk(tree, prune=lambda node: off_lines(node, lines)):
        if id(node) in inside or not isinstance(node, (ast.BinOp, ast.List, ast.Tuple, ast.Constant, ast.JoinedStr)):
            continue
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Add):
            continue
        words = command_words(node, src)
        if words:
            yield node, words


def off_lines(node: ast.AST, lines: list[int]) -> bool:
    """NODE spans none of LINES (sorted): a launcher's word is written on a line of the command
    that names it, so nothing below NODE can be one. A node with decorators is kept (they sit
    above its first line)."""
    start = getattr(node, "lineno", None)
    if start is None or getattr(node, "decorator_list", None):
        return False
    i = bisect_left(lines, start)
    return i == len(lines) or lines[i] > (node.end_lineno or start)


def command_words(node: ast.AST, src) -> list[tuple[str, str, int]] | None:
    """The command as (kind, text, line) items: "lit" a literal word, "expr" a computed word,
    "open" a part of unknown length (a list variable, *args). None when NODE is no command."""
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, ast.Add):
            return None
        left, right = command_words(node.left, src), command_words(node.right, src)
        if left is None:
            return None
        return left + (right if right is not None else [("open", src.text(node.right), node.right.lineno)])
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(("lit", elt.value, elt.lineno))
            elif isinstance(elt, ast.JoinedStr) and len(words := command_words(elt, src) or []) == 1:
                out.append(words[0])  # f"--nproc_per_node={n}"
            elif isinstance(elt, ast.Starred):
                out.append(("open", src.text(elt), elt.lineno))
            else:
                out.append(("expr", src.text(elt), elt.lineno))
        return out
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:
        return [("lit", word, node.lineno) for word in node.value.split()]
    if isinstance(node, ast.JoinedStr):
        words: list[tuple[str, str, int]] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text = part.value
                glued = words and not text[:1].isspace() and words[-1][0] == "expr"
                for i, word in enumerate(text.split()):
                    if i == 0 and glued:
                        continue  # `{n}x`: one computed word
                    words.append(("lit", word, node.lineno))
            else:
                expr = src.text(part.value) if isinstance(part, ast.FormattedValue) else "?"
                if words and words[-1][0] == "lit" and words[-1][1].endswith("="):
                    words[-1] = ("lit", words[-1][1] + "\0" + expr, node.lineno)  # --flag={n}
                else:
                    words.append(("expr", expr, node.lineno))
        return words
    return None


def _command_like(rest) -> bool:
    """The words after a launcher in a string are a command's: an option, a script, a module."""
    return bool(rest) and rest[0][0] == "lit" and (rest[0][1].startswith("-") or rest[0][1].endswith(".py"))


@lru_cache(maxsize=1)
def _any_launcher() -> re.Pattern:
    return re.compile("|".join(f"(?:{pattern.pattern})" for _, pattern, _ in launchers()))


def _launcher(items) -> tuple[str, int] | None:
    """(launcher, the index of its first option) when ITEMS start with a launcher's command."""
    # each prefix of the head below ends in a space where the whole head has one, so a
    # pattern that finds nothing in the whole head finds nothing in a prefix: one search
    # rules out most strings of a file
    if not _any_launcher().search(" ".join(text if kind == "lit" else "{}" for kind, text, _ in items[:HEAD_WORDS]) + " "):
        return None
    head = []
    for i, (kind, text, _line) in enumerate(items[:HEAD_WORDS]):
        if kind == "open":
            return None
        head.append(text if kind == "lit" else "{}")
        joined = " ".join(head) + " "
        for launcher, pattern, _flags in launchers():
            m = pattern.search(joined)
            # the launcher is the program run (`torchrun`, `/opt/bin/torchrun`), or the module an
            # interpreter runs (`python -m torch.distributed.run`), not a word in a list of names
            if m and (m.start() < len(head[0]) or PYTHON.search(head[0]) and m.start() <= len(head[0]) + 1):
                return (launcher, i + 1) if i + 1 < len(items) else None  # `["torchrun"]` alone: a name
    return None


def _options(items, booleans, line: int) -> tuple[dict, list[str]]:
    """The launcher's own options, up to the program it starts."""
    flags: dict[str, dict] = {}
    open_parts: list[str] = []
    i = 0
    while i < len(items):
        kind, text, at = items[i]
        if kind == "open":
            open_parts.append(text)
            i += 1
            continue
        if kind == "expr" or not text.startswith("-") or text in ("-m", "--module"):
            break  # the program: a script, a module, a computed path
        name, eq, value = text.partition("=")
        if eq:
            computed = "\0" in value
            flags[name] = {"value": value.split("\0", 1)[1] if computed else value, "literal": not computed,
                           "line": at}
            i += 1
            continue
        nxt = items[i + 1] if i + 1 < len(items) else None
        if name.lstrip("-").replace("-", "_") in booleans or nxt is None or nxt[0] == "open" or \
                (nxt[0] == "lit" and nxt[1].startswith("-")):
            flags[name] = {"value": True, "literal": True, "line": at}
            i += 1
            continue
        flags[name] = {"value": nxt[1], "literal": nxt[0] == "lit", "line": at}
        i += 2
    return flags, open_parts

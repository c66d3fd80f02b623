"""Sharded launches whose process count is written by hand (facts for QG108).

A script that splits work into shards starts one process per shard index and tells each the
number of shards: `for IDX in {0..7}; do python eval.py --num-chunks $CHUNKS --chunk-idx $IDX
& done`, or eight command lines that differ only in `--local_index 0` ... `--local_index 7`,
each given `--my_world_size ${my_world_size}`. The count of processes is the literal range (or
the number of lines), not the variable: set the variable to anything else and shards go
missing or run twice. Recorded in ``meta["sharded_launches"]``: ``{"line", "end", "count",
"how" ("loop" | "commands"), "index_flag", "count_flag", "var"}``.
"""

from __future__ import annotations

import re

MAX_FACTS = 20  # sharded launches kept per file
MAX_GROUP = 256  # hand-written command lines compared as one group
# the flag that says which shard a process takes, and the one that says how many there are
INDEX_FLAG = re.compile(r"(?:^|[_-])(?:idx|index|rank|shard|chunk|part|split)(?:[_-]|$)|^--?(?:local_)?(?:idx|index|rank|id)$",
                        re.IGNORECASE)
COUNT_FLAG = re.compile(r"world[_-]?size|num[_-]?(?:chunks|shards|splits|parts|procs?|processes|gpus|workers)"
                        r"|n[_-]?(?:chunks|shards|splits|parts|gpus)|total[_-]?(?:chunks|shards|splits|parts)"
                        r"|^-*(?:chunks|shards|splits|parts)$", re.IGNORECASE)
# a script the scan's prefilter would skip (no knob word) is read when it holds such an index flag
SHARD_HINT = re.compile(rb"(?i)--(?:[a-z]+[_-])?(?:idx|index|rank|shard|chunk)\b")
# a config file handed to a program by a config flag (auditor/extract/shell_script.py
# `configs_handed`): the script is parsed for it, whatever else it holds
CONFIG_HANDED_HINT = re.compile(rb"--(?:config|cfg)(?:[_-](?:file|path))?[ =\t]+\S+\.(?:ya?ml|json)\b")
VAR_WORD = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
BRACE_RANGE = re.compile(r"^\{0\.\.(\d+)\}$")
SEQ = re.compile(r"^\$\(\s*seq\s+(?:0\s+)?(\d+)\s*\)$")


def _flags(words) -> tuple[dict[str, str], list[str]]:
    """(--flag value or --flag=value pairs by flag text, the other words: program, script,
    positional arguments; NAME=value prefixes left out) of one command."""
    out: dict[str, str] = {}
    rest: list[str] = []
    values: set[int] = set()
    for i, w in enumerate(words):
        text = w.text
        if i in values:
            continue
        if not text.startswith("-"):
            if not re.match(r"^[A-Za-z_]\w*=", text):
                rest.append(text)
            continue
        if "=" in text:
            flag, _, value = text.partition("=")
            out[flag] = value
        elif i + 1 < len(words) and not words[i + 1].text.startswith("-"):
            out[text] = words[i + 1].text
            values.add(i + 1)
    return out, rest


def _range_size(values) -> int | None:
    """Iterations of `for V in {0..7}`, `in 0 1 2 3`, `in $(seq 0 7)`: shards counted from 0."""
    if len(values) == 1:
        m = BRACE_RANGE.match(values[0]) or SEQ.match(values[0])
        return int(m.group(1)) + 1 if m else None
    if values and all(v.isdigit() for v in values) and sorted(int(v) for v in values) == list(range(len(values))):
        return len(values)
    return None


def _count_flag(flags: dict[str, str], index_var: str | None) -> tuple[str, str] | None:
    for flag, value in flags.items():
        m = VAR_WORD.match(value)
        if m and m.group(1) != index_var and (COUNT_FLAG.search(flag) or COUNT_FLAG.search(m.group(1))):
            return flag, m.group(1)
    return None


def sharded_launches(commands, line_of, defined: dict) -> list[dict]:
    """Facts for the commands of one script (lists of lexer words); LINE_OF(offset) -> line,
    DEFINED: the variables the script sets."""
    out: list[dict] = []
    loops: list[tuple[str, int, int] | None] = []  # (variable, iterations, line) per open for-loop
    reported: set[int] = set()
    for words in commands:
        if not words:
            continue
        head = words[0].text
        if head == "for" and len(words) >= 4 and words[2].text == "in":
            size = _range_size([w.text for w in words[3:]])
            loops.append((words[1].text, size, line_of(words[0].offset)) if size else None)
            continue
        if head in ("while", "until", "select"):
            loops.append(None)  # its `done` closes it, not the for-loop around it
            continue
        if head == "done" and loops:
            loops.pop()
            continue
        loop = loops[-1] if loops else None
        if loop is None or id(loop) in reported:
            continue
        var, size, line = loop
        flags, _rest = _flags(words)
        index = next((f for f, v in flags.items() if (m := VAR_WORD.match(v)) and m.group(1) == var
                      and INDEX_FLAG.search(f)), None)
        count = _count_flag(flags, var) if index else None
        if count and count[1] in defined and size > 1:
            reported.add(id(loop))
            out.append({"line": line, "end": line_of(words[-1].offset), "count": size, "how": "loop",
                        "index_flag": index, "count_flag": count[0], "var": count[1]})
    out.extend(_written_out(commands, line_of, defined))
    return out[:MAX_FACTS]


def _written_out(commands, line_of, defined: dict) -> list[dict]:
    """Runs of command lines that differ only in an index flag's value, 0 .. K-1."""
    out: list[dict] = []
    run: list[tuple[tuple, dict, int]] = []

    def close() -> None:
        if len(run) >= 2:
            flags = [f for _sig, f, _line in run]
            index = next((f for f in flags[0] if INDEX_FLAG.search(f) and all(f in g for g in flags)
                          and sorted(g[f] for g in flags) == sorted(str(i) for i in range(len(run)))), None)
            count = _count_flag(flags[0], None) if index else None
            if count and count[1] in defined and all(g.get(count[0]) == flags[0][count[0]] for g in flags):
                out.append({"line": run[0][2], "end": run[-1][2], "count": len(run), "how": "commands",
                            "index_flag": index, "count_flag": count[0], "var": count[1]})
        run.clear()

    for words in commands:
        flags, rest = _flags(words)
        signature = (tuple(rest), tuple(sorted(flags)))
        if not flags or (run and run[0][0] != signature) or len(run) >= MAX_GROUP:
            close()
        if flags:
            run.append((signature, flags, line_of(words[0].offset)))
    close()
    return out

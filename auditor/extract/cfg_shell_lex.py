"""A small POSIX-shell lexer for launch scripts: words with positions, no bash dependency.

It knows what matters for reading launch lines: quotes, ``\\`` escapes and line
continuations, comments, ``$(...)`` / ``${...}`` / backticks kept inside their word,
command separators, ``NAME=(...)`` arrays, heredocs (bodies are skipped as commands, and
kept aside so variable uses in unquoted ones still count) and redirections. It does not
run or expand anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SINGLE_QUOTED_DOLLAR = "\x00"  # a '$' that came from single quotes: never expanded
ASSIGN_START = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
SEPARATORS = (";;", "&&", "||", "|&", ";", "|", "&", "(", ")")
REDIRECTS = ("<<<", "<<-", "<<", ">>", "&>>", "&>", ">&", "<&", ">|", "<>", ">", "<")


@dataclass
class Word:
    text: str  # cooked: quotes removed, escapes applied, $-expansions kept as written
    raw: str  # as written in the file
    offset: int  # offset of the first character in the file
    quoted: bool = False  # some part of it was quoted (no word splitting of expansions)
    elements: list["Word"] | None = None  # for NAME=( ... ) array assignments

    @property
    def is_array(self) -> bool:
        return self.elements is not None


@dataclass
class Heredoc:
    body: str
    offset: int
    expands: bool  # unquoted delimiter: $VAR inside the body is expanded (a use)


@dataclass
class Lexed:
    commands: list[list[Word]] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)


class _Lexer:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.out = Lexed()
        self.cmd: list[Word] = []
        self.pending_heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip_tabs, expands)
        self.case_depth = 0
        self.paren_depth = 0  # '(' opened in the current command (subshells, not case patterns)

    # -- balanced constructs kept verbatim inside a word --------------------------------
    def _balanced(self, i: int, open_: str, close: str) -> int:
        """Index just past the CLOSE matching the OPEN at s[i] (quotes respected)."""
        depth, s = 0, self.s
        while i < len(s):
            ch = s[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "'" and open_ == "(":
                j = s.find("'", i + 1)
                i = len(s) if j == -1 else j + 1
                continue
            if ch == '"':
                i = self._double_quoted(i + 1)[1]
                continue
            if ch == open_:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return len(s)

    def _dollar(self, i: int) -> int:
        """s[i] == '$': end index of the expansion that starts here."""
        s = self.s
        if s.startswith("$(", i) or s.startswith("${", i):
            return self._balanced(i + 1, s[i + 1], ")" if s[i + 1] == "(" else "}")
        return i + 1

    def _double_quoted(self, i: int) -> tuple[str, int]:
        """Cooked content of a "..." string starting after its quote, and the end index."""
        s, out = self.s, []
        while i < len(s):
            ch = s[i]
            if ch == '"':
                return "".join(out), i + 1
            if ch == "\\" and i + 1 < len(s) and s[i + 1] in '$`"\\\n':
                if s[i + 1] != "\n":
                    out.append(s[i + 1] if s[i + 1] != "$" else SINGLE_QUOTED_DOLLAR)
                i += 2
                continue
            if ch in "$`":
                j = self._expansion_end(i)
                out.append(s[i:j])
                i = j
                continue
            out.append(ch)
            i += 1
        return "".join(out), i

    def _expansion_end(self, i: int) -> int:
        """End of the `$...` or backquoted expansion starting at i; it is kept verbatim."""
        if self.s[i] == "$":
            return self._dollar(i)
        j = self.s.find("`", i + 1)
        return len(self.s) if j == -1 else j + 1

    # -- words and separators -------------------------------------------------------------
    def _word(self) -> Word:
        s, start, out, quoted = self.s, self.i, [], False
        i = self.i
        while i < len(s):
            ch = s[i]
            if ch in " \t\n" or (ch in ";&|<>()" and not (ch in "<>" and s.startswith("(", i + 1))):
                break
            if ch == "\\":
                if s.startswith("\n", i + 1):
                    i += 2  # line continuation inside a word
                    continue
                out.append(s[i + 1 : i + 2] if s[i + 1 : i + 2] != "$" else SINGLE_QUOTED_DOLLAR)
                i += 2
                continue
            if ch == "'":
                j = s.find("'", i + 1)
                j = len(s) if j == -1 else j
                out.append(s[i + 1 : j].replace("$", SINGLE_QUOTED_DOLLAR))
                quoted, i = True, j + 1
                continue
            if ch == '"':
                text, i = self._double_quoted(i + 1)
                out.append(text)
                quoted = True
                continue
            if ch in "$`":
                j = self._expansion_end(i)
                out.append(s[i:j])
                i = j
                continue
            out.append(ch)
            i += 1
        self.i = i
        return Word("".join(out), s[start:i], start, quoted)

    def _end_command(self) -> None:
        if self.cmd:
            self.out.commands.append(self.cmd)
        self.cmd = []
        self.paren_depth = 0

    def _newline(self) -> None:
        self._end_command()
        self.i += 1
        for delim, strip_tabs, expands in self.pending_heredocs:
            body_start, body_end = self.i, len(self.s)
            while self.i < len(self.s):
                line_start = self.i
                end = self.s.find("\n", self.i)
                end = len(self.s) if end == -1 else end
                line = self.s[line_start:end]
                self.i = min(end + 1, len(self.s))
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    body_end = line_start
                    break
            self.out.heredocs.append(Heredoc(self.s[body_start:body_end], body_start, expands))
        self.pending_heredocs = []

    def _array(self, head: Word) -> Word:
        """After ``NAME=(``: the element words up to the matching ')'."""
        elements: list[Word] = []
        s = self.s
        while self.i < len(s):
            ch = s[self.i]
            if ch in " \t\n":
                self.i += 1
            elif ch == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
            elif ch == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end == -1 else end
            elif ch == ")":
                self.i += 1
                break
            else:
                word = self._word()
                if not word.raw:  # a stray operator character inside the array
                    self.i += 1
                    continue
                elements.append(word)
        return Word(head.text, s[head.offset : self.i], head.offset, elements=elements)

    def run(self) -> Lexed:
        s = self.s
        while self.i < len(s):
            ch = s[self.i]
            if ch in " \t":
                self.i += 1
            elif ch == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
            elif ch == "\n":
                self._newline()
            elif ch == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end == -1 else end
            elif ch in ";&|()" or (ch in "<>" and not s.startswith("(", self.i + 1)):
                self._operator()
            else:
                word = self._word()
                if not word.raw:
                    self.i += 1
                    continue
                if s.startswith("(", self.i) and ASSIGN_START.match(word.raw) and word.raw.endswith("="):
                    self.i += 1
                    word = self._array(word)
                elif word.text.isdigit() and s[self.i : self.i + 1] in ("<", ">"):
                    continue  # a file-descriptor number of a redirection: 2>&1
                self._track_case(word)
                self.cmd.append(word)
        self._end_command()
        return self.out

    def _track_case(self, word: Word) -> None:
        if not self.cmd or self.cmd[-1].text in ("do", "then", "else", "{"):
            if word.text == "case":
                self.case_depth += 1
            elif word.text == "esac" and self.case_depth:
                self.case_depth -= 1

    def _operator(self) -> None:
        s = self.s
        for op in REDIRECTS:
            if s.startswith(op, self.i):
                self.i += len(op)
                while self.i < len(s) and s[self.i] in " \t":
                    self.i += 1
                target = self._word() if self.i < len(s) and s[self.i] not in "\n;&|()" else None
                if op in ("<<", "<<-") and target is not None:
                    delim = target.text.replace(SINGLE_QUOTED_DOLLAR, "$")
                    expands = not target.quoted and "\\" not in target.raw
                    self.pending_heredocs.append((delim, op == "<<-", expands))
                return
        for op in SEPARATORS:
            if s.startswith(op, self.i):
                self.i += len(op)
                if op == "(":
                    depth = self.paren_depth + 1
                    self._end_command()
                    self.paren_depth = depth
                elif op == ")" and self.paren_depth == 0 and self.case_depth:
                    self.cmd = []  # "pattern)" of a case branch: not a command
                else:
                    if op == ")":
                        self.paren_depth = max(0, self.paren_depth - 1)
                    depth = self.paren_depth
                    self._end_command()
                    self.paren_depth = depth
                return


def lex(text: str) -> Lexed:
    return _Lexer(text).run()

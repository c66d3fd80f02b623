"""Source written for a newer Python than the one running qg-audit, made readable by `ast`.

``ast`` parses the grammar of the interpreter it runs in: on 3.11 a PEP 701 f-string with
nested quotes (``f"{x + f"{y}"}"``) or a PEP 695 ``type`` alias is a SyntaxError, and the whole
file would be skipped (QG001) with every knob in it unseen. libcst's native parser reads those
grammars. This module parses such a file with libcst, rewrites the few constructs the running
``ast`` cannot read into equivalents it can, keeping every other byte (so line numbers hold),
and returns the text for ``ast.parse``:

- an f-string the running ``ast`` rejects becomes a plain string spanning the same lines (its
  expressions are lost: a knob read inside one is not seen);
- ``type X[T] = v`` becomes ``X = v``; type parameters of functions and classes are dropped;
- ``try: ... except* E:`` (3.11) becomes ``try: ... except E:`` on 3.10.

Used only after ``ast.parse`` failed, so a file of the running grammar never pays for libcst.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

# Only a file that shows one of the newer constructs goes to libcst at all (a file with a plain
# syntax error never pays for it), and never one nested deeper than MAX_DEPTH brackets: libcst's
# native parser recurses on the machine stack, where a hostile file could crash the process.
NEWER = re.compile(r"^[ \t]*type[ \t]+[A-Za-z_]\w*[ \t]*[\[=]|\b(?:def|class)[ \t]+\w+[ \t]*\[|\bexcept[ \t]*\*"
                   r"|\b[fFrR]{1,2}(?:\"|')", re.MULTILINE)
MAX_DEPTH = 100
CHILD_TIMEOUT_S = 10  # libcst reads ~MBs a second: only a hostile file takes longer


def downlevel(text: str) -> str | None:
    """TEXT rewritten so that this interpreter's ``ast`` parses it, or None when nothing it
    rewrites was the problem or libcst cannot parse TEXT either (a real syntax error).

    libcst's native parser runs in a child process: it recurses on the machine stack, and a
    hostile file (20,000 unary minus signs) crashes the process that parses it, which must
    never be the scan."""
    if not NEWER.search(text) or _too_deep(text):
        return None
    try:
        proc = subprocess.run([sys.executable, "-I", __file__], input=text.encode("utf-8", "surrogatepass"),
                              capture_output=True, timeout=CHILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired, UnicodeError):
        return None
    if proc.returncode != 0 or not proc.stdout:
        return None
    rewritten = proc.stdout.decode("utf-8", "surrogatepass")
    return rewritten if rewritten != text else None


def _rewrite(text: str) -> str | None:
    """The rewriting itself, in the child process (standard library and libcst only)."""
    try:
        import libcst as cst
    except ImportError:  # a broken install: the file stays a QG001, as before
        return None
    try:
        module = cst.parse_module(text)
    except Exception:  # libcst.ParserSyntaxError, or a native parser's panic on odd input
        return None

    class Rewrite(cst.CSTTransformer):
        def leave_FormattedString(self, original, updated):
            code = module.code_for_node(original)
            try:
                ast.parse(code, mode="eval")
                return updated
            except SyntaxError:
                lines = code.count("\n")
                return cst.SimpleString('"""' + "\n" * lines + '"""' if lines else '""')

        def leave_TypeAlias(self, original, updated):
            return cst.Assign(targets=[cst.AssignTarget(target=updated.name)], value=updated.value)

        def leave_FunctionDef(self, original, updated):
            return updated.with_changes(type_parameters=None) if getattr(updated, "type_parameters", None) else updated

        def leave_ClassDef(self, original, updated):
            return updated.with_changes(type_parameters=None) if getattr(updated, "type_parameters", None) else updated

        def leave_TryStar(self, original, updated):
            handlers = [cst.ExceptHandler(body=h.body, type=h.type, name=h.name, leading_lines=h.leading_lines,
                                          whitespace_after_except=h.whitespace_after_star,
                                          whitespace_before_colon=h.whitespace_before_colon)
                        for h in updated.handlers]
            return cst.Try(body=updated.body, handlers=handlers, orelse=updated.orelse, finalbody=updated.finalbody,
                           leading_lines=updated.leading_lines, whitespace_before_colon=updated.whitespace_before_colon)

    try:
        rewritten = module.visit(Rewrite()).code
    except Exception:
        return None
    return rewritten



def _too_deep(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in ")]}":
            depth -= 1
    return False


if __name__ == "__main__":  # the child: source on stdin, the rewritten source (or nothing) on stdout
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash on hostile input dumps no core
    except (ImportError, ValueError, OSError):
        pass
    source = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
    out = _rewrite(source)
    if out is not None:
        sys.stdout.buffer.write(out.encode("utf-8", "surrogatepass"))

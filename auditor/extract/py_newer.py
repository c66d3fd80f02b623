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


def downlevel(text: str) -> str | None:
    """TEXT rewritten so that this interpreter's ``ast`` parses it, or None when nothing it
    rewrites was the problem or libcst cannot parse TEXT either (a real syntax error)."""
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
    return rewritten if rewritten != text else None

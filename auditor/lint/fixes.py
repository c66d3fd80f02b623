"""Safe, mechanical fixes with libcst (``--fix`` writes, ``--diff`` prints a unified diff).

Only QG106 serial-backend findings, and only these rewrites:

- ``DummyVecEnv(...)`` -> ``SubprocVecEnv(...)`` (SB3), ``SyncVectorEnv(...)`` ->
  ``AsyncVectorEnv(...)`` (gymnasium / gym), ``DummyVectorEnv`` -> ``SubprocVectorEnv``
  (tianshou): same constructor arguments, so the call is renamed in place;
- ``make_vec_env(...)`` without ``vec_env_cls`` (or with ``vec_env_cls=DummyVecEnv``) gains
  ``vec_env_cls=SubprocVecEnv``.

Imports are managed (the twin is imported the way the file already imports the serial
class; an import left unused is removed); everything else - formatting, comments - is kept
byte for byte because libcst round-trips the tree losslessly. A call is matched by the fully
qualified name of what it calls, so aliases (``import gymnasium as gym``,
``from ... import DummyVecEnv as D``) are handled.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import PositionProvider, QualifiedNameProvider

SB3 = "stable_baselines3.common.vec_env"
# serial class (any qualified spelling) -> (module to import the twin from, twin name)
RENAMES = {
    f"{SB3}.DummyVecEnv": (SB3, "SubprocVecEnv"),
    f"{SB3}.dummy_vec_env.DummyVecEnv": (SB3, "SubprocVecEnv"),
    "gymnasium.vector.SyncVectorEnv": ("gymnasium.vector", "AsyncVectorEnv"),
    "gymnasium.vector.sync_vector_env.SyncVectorEnv": ("gymnasium.vector", "AsyncVectorEnv"),
    "gym.vector.SyncVectorEnv": ("gym.vector", "AsyncVectorEnv"),
    "tianshou.env.DummyVectorEnv": ("tianshou.env", "SubprocVectorEnv"),
    "tianshou.env.venvs.DummyVectorEnv": ("tianshou.env", "SubprocVectorEnv"),
}
FACTORIES = {
    "stable_baselines3.common.env_util.make_vec_env": "vec_env_cls",
    "stable_baselines3.make_vec_env": "vec_env_cls",
}


def fixable_backend(backend: str) -> bool:
    return backend in RENAMES or backend in FACTORIES


class SwitchToParallel(VisitorBasedCodemodCommand):
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self, context: CodemodContext, lines: set[int]):
        super().__init__(context)
        self.lines = lines
        self.fixed_lines: set[int] = set()

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def _wanted(self, node: cst.Call) -> set[int]:
        pos = self.get_metadata(PositionProvider, node)
        return {ln for ln in self.lines if pos.start.line <= ln <= pos.end.line}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        hit = self._wanted(original)
        if not hit:
            return updated
        names = self._qualified(original.func)
        rename = next((RENAMES[n] for n in names if n in RENAMES), None)
        if rename is not None:
            module, twin = rename
            func = updated.func
            if isinstance(func, cst.Name):
                AddImportsVisitor.add_needed_import(self.context, module, twin)
                qualified = next(n for n in names if n in RENAMES)
                old_module, old_name = qualified.rsplit(".", 1)
                asname = func.value if func.value != old_name else None
                for mod in {module, old_module}:  # removed only where nothing else uses it
                    RemoveImportsVisitor.remove_unused_import(self.context, mod, old_name, asname)
                func = func.with_changes(value=twin)
            elif isinstance(func, cst.Attribute):
                func = func.with_changes(attr=func.attr.with_changes(value=twin))
            else:
                return updated
            self.fixed_lines |= hit
            return updated.with_changes(func=func)
        param = next((FACTORIES[n] for n in names if n in FACTORIES), None)
        if param is None:
            return updated
        if any(a.star == "**" for a in updated.args):
            return updated  # the mapping may carry vec_env_cls: not mechanical
        for i, a in enumerate(original.args):  # metadata belongs to the original nodes
            if a.keyword is not None and a.keyword.value == param:
                value = a.value
                if isinstance(value, cst.Name) and value.value == "None" or \
                        any(q.endswith("DummyVecEnv") for q in self._qualified(value)):
                    AddImportsVisitor.add_needed_import(self.context, SB3, "SubprocVecEnv")
                    if isinstance(value, cst.Name) and value.value != "None":
                        RemoveImportsVisitor.remove_unused_import(self.context, SB3, value.value)
                    args = list(updated.args)
                    args[i] = args[i].with_changes(value=cst.Name("SubprocVecEnv"))
                    self.fixed_lines |= hit
                    return updated.with_changes(args=args)
                return updated
        AddImportsVisitor.add_needed_import(self.context, SB3, "SubprocVecEnv")
        self.fixed_lines |= hit
        return updated.with_changes(args=_append_keyword(list(updated.args), param, "SubprocVecEnv"))


def _append_keyword(args: list[cst.Arg], name: str, value: str) -> list[cst.Arg]:
    new = cst.Arg(keyword=cst.Name(name), value=cst.Name(value),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if not args:
        return [new]
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # a trailing comma (often one argument per line): the old last argument takes the
        # separator (and indentation) its neighbours use, the new one the trailing comma
        sep = args[-2].comma if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) else \
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        trail, between = last.comma.whitespace_after, sep.whitespace_after
        if isinstance(trail, cst.ParenthesizedWhitespace) and isinstance(between, cst.ParenthesizedWhitespace):
            # keep a trailing comment on its own line; indent the new argument like the others
            args[-1] = last.with_changes(comma=last.comma.with_changes(
                whitespace_after=trail.with_changes(last_line=between.last_line)))
            return [*args, new.with_changes(comma=last.comma.with_changes(
                whitespace_after=trail.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])))]
        args[-1] = last.with_changes(comma=sep)
        return [*args, new.with_changes(comma=last.comma)]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*args, new]


def fix_source(source: str, lines: set[int]) -> tuple[str, set[int]]:
    """Rewrite the calls covering LINES; return (new source, lines actually fixed)."""
    module = cst.parse_module(source)
    context = CodemodContext()
    command = SwitchToParallel(context, lines)
    new = command.transform_module(module)
    return new.code, command.fixed_lines


def run(findings, root: Path, write: bool, out) -> set[int]:
    """Fix the fixable QG106 findings; print a diff (write=False) or write files. Returns ids fixed."""
    by_file: dict[str, list] = {}
    for f in findings:
        if f.code != "QG106" or not f.file.endswith(".py"):
            continue
        backend = next((s.detail.get("backend", "") for s in f.related if s.file == f.file), "")
        if fixable_backend(backend):
            by_file.setdefault(f.file, []).append(f)
    fixed: set[int] = set()
    for rel, items in sorted(by_file.items()):
        path = root if root.is_file() else root / rel
        try:
            source = path.read_text(encoding="utf-8")
            new, done = fix_source(source, {f.line for f in items})
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
            continue  # an unreadable file keeps its finding
        if new == source:
            continue
        fixed |= {id(f) for f in items if f.line in done}
        if write:
            path.write_text(new, encoding="utf-8")
        else:
            out.write("".join(difflib.unified_diff(source.splitlines(True), new.splitlines(True),
                                                   f"a/{rel}", f"b/{rel}")))
    return fixed

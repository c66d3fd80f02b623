"""Helpers shared by the config and launch-script extractors (YAML, TOML, JSON, shell).

Small pure functions: typing a scalar the way YAML would, building a Site, parsing
Hydra/OmegaConf ``${...}`` interpolations, spotting generated files.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from auditor.model import Site

_TAG = "tag:yaml.org,2002:"
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = SafeConstructor()  # only its scalar methods are used: they build no objects

GENERATED_HEADER = re.compile(
    r"auto-?generated|automatically generated|generated (?:by|from|via|with)\b|do not edit|"
    r"do not modify|@generated",
    re.IGNORECASE,
)


def typed_scalar(node: yaml.ScalarNode) -> Any:
    """The value of a composed scalar node as YAML types it (int/float/bool/None/str).

    Only the four plain scalar types are converted; any other tag (``!function``,
    ``!!python/object``, timestamps) keeps its text, so nothing is ever constructed.
    """
    tag = node.tag or ""
    try:
        if tag == _TAG + "int":
            return _CONSTRUCTOR.construct_yaml_int(node)
        if tag == _TAG + "float":
            return _CONSTRUCTOR.construct_yaml_float(node)
        if tag == _TAG + "bool":
            return _CONSTRUCTOR.construct_yaml_bool(node)
        if tag == _TAG + "null":
            return None
    except (ValueError, yaml.YAMLError):
        pass
    return node.value


def type_text(text: str) -> Any:
    """Type a bare word (shell value, Hydra override value, resolver default) like YAML does."""
    if text == "":
        return ""
    node = yaml.ScalarNode(_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)), text)
    return typed_scalar(node)


INT_WORD = re.compile(r"[-+]?\d+")
FLOAT_WORD = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?")


def type_word(text: str) -> Any:
    """Type a shell word or Hydra override value the way Hydra's override grammar does:
    ints, floats, true/false (any case) and null; everything else stays a string (no
    YAML 1.1 surprises such as ``on`` -> True or ``1:30`` -> 90)."""
    if INT_WORD.fullmatch(text):
        return int(text)
    if FLOAT_WORD.fullmatch(text):
        return float(text)
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    return text


def make_site(role: str, path: str, line: int, column: int, key: str, kind: str, lines: list[str],
              value: Any = None, default: Any = None, **detail: Any) -> Site:
    source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Site(role=role, file=path, line=line, column=column, key=key, value=value,
                default=default, source=source, kind=kind, detail=detail)


def leaf_of(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def is_generated(path: str, text: str) -> bool:
    """``_generated_*`` files, or a leading comment block that says it was generated."""
    if path.replace("\\", "/").rsplit("/", 1)[-1].startswith("_generated_"):
        return True
    for raw in text.splitlines()[:15]:
        line = raw.strip()
        if not line:
            continue
        if not (line.startswith("#") or line.startswith("//")):
            break
        if GENERATED_HEADER.search(line):
            return True
    return False


# --- Hydra / OmegaConf interpolations -------------------------------------------------

def _matching_brace(s: str, start: int) -> int:
    """Index of the '}' closing the '${' at ``start``, or -1."""
    depth = 0
    i = start
    while i < len(s):
        if s.startswith("${", i):
            depth += 1
            i += 2
            continue
        if s[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        elif s[i] == "\\":
            i += 1
        i += 1
    return -1


def _split_args(s: str) -> list[str]:
    """Split resolver arguments on top-level commas (not inside ${}, [], {}, quotes)."""
    args, depth, quote, cur = [], 0, "", []
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    args.append("".join(cur).strip())
    return args


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def _absolute(ref: str, container: str) -> str:
    """Resolve OmegaConf relative keys: ``.x`` is a sibling, ``..x`` one level up."""
    ref = re.sub(r"\[(\w+)\]", r".\1", ref)
    if not ref.startswith("."):
        return ref
    dots = len(ref) - len(ref.lstrip("."))
    parts = container.split(".") if container else []
    parts = parts[: max(0, len(parts) - (dots - 1))]
    return ".".join(parts + [ref.lstrip(".")])


RESOLVER_NAME = re.compile(r"^([A-Za-z_][\w.]*):(.*)$", re.DOTALL)


def interpolations(text: str, container: str = "") -> list[dict[str, Any]]:
    """Every reference in a string's ``${...}`` interpolations, outermost first.

    Each is ``{"reference": "a.b", "env": bool, "ref_default": value-or-None,
    "resolver": name-or-None, "whole": bool}``; ``whole`` when the string is exactly one
    interpolation. ``container`` is the dotted path of the mapping holding the value, used
    for relative references. Custom resolvers (``${div:${a},2}``) yield the references
    nested in their arguments.
    """
    out: list[dict[str, Any]] = []
    i = text.find("${")
    while i != -1:
        end = _matching_brace(text, i)
        if end == -1:
            break
        body = text[i + 2 : end]
        whole = i == 0 and end == len(text) - 1
        m = RESOLVER_NAME.match(body)
        if m is None:
            out.append({"reference": _absolute(body.strip(), container), "env": False,
                        "ref_default": None, "resolver": None, "whole": whole})
        else:
            name, args = m.group(1), _split_args(m.group(2))
            if name in ("oc.select", "oc.env") and args and "${" not in args[0]:
                ref = _unquote(args[0])
                default = None
                if len(args) > 1:
                    d = _unquote(args[1])
                    default = None if "${" in d else type_text(d)
                out.append({"reference": ref if name == "oc.env" else _absolute(ref, container),
                            "env": name == "oc.env", "ref_default": default, "resolver": name,
                            "whole": whole})
                nested = args[1:]
            else:
                nested = args
            for arg in nested:
                for ref in interpolations(arg, container):
                    ref["whole"] = False
                    ref["resolver"] = ref["resolver"] or name
                    out.append(ref)
        i = text.find("${", end + 1)
    return out

"""--expect-workers / --expect-from FILE:dotted.key / --expect-threads / --expect-per-rank -> an Expectation.

Reads YAML (C loader), TOML (tomllib) or JSON directly; errors name the file (and line where
the parser gives one) and exit 2.
"""

from __future__ import annotations

import json
import os

from auditor.exitcodes import UsageError
from auditor.runtime.verdict import Expectation


def expectation(args) -> Expectation:
    per_rank = getattr(args, "expect_per_rank", None)
    if args.expect_workers is not None:
        return Expectation(workers=args.expect_workers, threads=args.expect_threads, per_rank=per_rank)
    if not args.expect_from:  # --expect-threads and/or --expect-per-rank alone
        source = "--expect-threads" if args.expect_threads is not None else "--expect-per-rank"
        return Expectation(workers=None, threads=args.expect_threads, source=source, per_rank=per_rank)
    spec = args.expect_from
    if ":" not in spec:
        raise UsageError(f"--expect-from {spec}: give FILE:dotted.key, e.g. conf.yaml:rollout.num_workers")
    path, key = spec.rsplit(":", 1)
    value = read_key(path, key)
    return Expectation(workers=value, threads=args.expect_threads, key=key, source=spec, per_rank=per_rank)


def load(path: str):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file (from --expect-from)")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext in (".yaml", ".yml"):
            import yaml

            from auditor.catalogue import YAML_LOADER

            with open(path, encoding="utf-8") as f:
                try:
                    return yaml.load(f, Loader=YAML_LOADER)
                except yaml.YAMLError as exc:
                    mark = getattr(exc, "problem_mark", None)
                    where = f":{mark.line + 1}" if mark is not None else ""
                    raise UsageError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
        if ext == ".toml":
            from auditor.settings import tomllib

            with open(path, "rb") as f:
                try:
                    return tomllib.load(f)
                except tomllib.TOMLDecodeError as exc:
                    raise UsageError(f"{path}: not valid TOML: {exc}") from None
        if ext == ".json":
            with open(path, encoding="utf-8") as f:
                try:
                    return json.load(f)
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    raise UsageError(f"{path}: unknown config type {ext or '(none)'}; use .yaml, .yml, .toml or .json")


def read_key(path: str, key: str) -> int:
    data = load(path)
    node = data
    walked = []
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            here = ".".join(walked) or "the top level"
            keys = ", ".join(map(str, node)) if isinstance(node, dict) else "(not a mapping)"
            raise UsageError(f"{path}: key {key!r} not found: no {part!r} under {here} (keys there: {keys})")
        walked.append(part)
    if isinstance(node, bool) or not isinstance(node, int):
        if isinstance(node, str) and node.strip().isdigit():
            return int(node)
        raise UsageError(f"{path}: {key} is {node!r}, not a whole number of workers")
    return node

"""Fuzz the whole scan (walk, extract, join, rules, every renderer) with hostile trees.

Hypothesis builds real trees on disk: file and directory names of arbitrary bytes (no '/'
or NUL, which no file system allows), contents taken from the bundled fixtures and then
mutated (bytes flipped, inserted, truncated, duplicated), plus symlinks that loop or leave
the root. No exception may escape, every format must render, JSON must parse, and no
control character from the tree may reach the text output. Bounded: a fixed number of
examples, each a small tree.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from auditor import join, lint, scan  # noqa: E402
from auditor.lint.harness import default_args  # noqa: E402
from auditor.render import github, sarif, scan_json, scan_text  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

SEEDS = sorted(p.read_bytes() for p in FIXTURES.rglob("*")
               if p.is_file() and p.suffix in {".py", ".yaml", ".yml", ".toml", ".json", ".sh"}
               and p.stat().st_size < 20_000)
EXTENSIONS = [b".py", b".yaml", b".yml", b".toml", b".json", b".sh", b""]

names = st.binary(min_size=1, max_size=16).filter(lambda b: b"/" not in b and b"\0" not in b
                                                   and b not in (b".", b".."))
mutation = st.tuples(st.sampled_from(["flip", "insert", "truncate", "duplicate"]),
                     st.floats(0, 1), st.binary(min_size=1, max_size=8))


def mutate(data: bytes, ops) -> bytes:
    for op, where, payload in ops:
        i = int(where * len(data))
        if op == "flip" and data:
            i = min(i, len(data) - 1)
            data = data[:i] + bytes([data[i] ^ payload[0]]) + data[i + 1:]
        elif op == "insert":
            data = data[:i] + payload + data[i:]
        elif op == "truncate":
            data = data[:i]
        else:
            data = data + data[i:i + 64]
    return data


files = st.lists(st.tuples(st.booleans(), names, st.sampled_from(EXTENSIONS), st.sampled_from(SEEDS),
                           st.lists(mutation, max_size=4)), min_size=1, max_size=6)


def build(root: bytes, spec, subdir: bytes, links: bool) -> None:
    os.makedirs(os.path.join(root, subdir), exist_ok=True)
    for in_sub, name, ext, seed, ops in spec:
        path = os.path.join(root, subdir if in_sub else b"", name + ext)
        try:
            with open(path, "wb") as f:
                f.write(mutate(seed, ops))
        except OSError:  # a name the file system refuses (too long): skip it, like a user could not
            continue
    if links:
        os.symlink(b"..", os.path.join(root, subdir, b"loop"))
        os.symlink(b"/etc", os.path.join(root, b"etc.yaml"))
        os.symlink(b"missing.py", os.path.join(root, b"broken.py"))


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=files, subdir=names, links=st.booleans())
def test_no_exception_escapes_the_scan(spec, subdir, links):
    tmp = tempfile.mkdtemp(prefix="qg-fuzz-")
    try:
        root = os.path.join(os.fsencode(tmp), b"proj")
        build(root, spec, subdir, links)
        result = scan.scan(Path(os.fsdecode(root)), jobs=1)
        join.join(result)
        lint.check(result, default_args())
        json.loads(scan_json.render(result))
        json.loads(sarif.render(result))
        gh = github.render(result)
        out = io.StringIO()
        scan_text.render(result, 0.0, file=out, width=200)
        for text in (out.getvalue(), gh):
            assert not any(c in text for c in "\x1b\x07\x08\r\u202e"), text
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

"""The code gates before the Python visitor (auditor.scan.strip_python, Prefilter.in_code).

A Python file whose keywords all sit in comments, triple-quoted strings or prose is parsed
but not visited: same outcome, less work. bench/check_gates.py proves the outcomes equal
on the bench corpus; these tests pin the cases on real files and through the real CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, run_cli

sys.path.insert(0, str(REPO))

from auditor import scan, vocab  # noqa: E402

PF = scan.Prefilter(vocab.load())
PLAIN = scan.Prefilter(vocab.load(), gates=False)


def src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip().encode()


PROSE_ONLY = {
    "comment": """
        import os  # runs in parallel processes
        x = os.getcwd()
        """,
    "docstring": '''
        def f():
            """Spawns worker processes and threads, in parallel."""
            return 1
        ''',
    "module docstring": """
        '''Helpers for data-parallel training with many threads.'''
        VALUE = 3
        """,
    "help text": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--verbose", help="print one line per parallel processes batch")
        """,
    "log message": """
        import logging
        logging.info("all threads started")
        """,
}

IN_CODE = {
    "kwarg": "from multiprocessing import Pool\nPool(processes=4)\n",
    "spaced assignment": "threads = 4\n",
    "attribute": "def f(cfg):\n    return cfg.parallel\n",
    "string key": "def f(cfg):\n    return cfg['threads']\n",
    "flag": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--nproc', type=int)\n",
    "specific word": "def f(cfg):\n    return cfg.get('num_workers', 2)\n",
    "hash in a string": "s = '#'\nn = cfg['num_workers']  # in parallel\n",
    "quote in a comment": "# don't\nn = cfg['num_workers']\n",
}


@pytest.mark.parametrize("name", PROSE_ONLY)
def test_prose_only_files_are_gated(name):
    data = src(PROSE_ONLY[name])
    assert PF(data), "the keyword prefilter keeps it (it names a keyword)"
    assert not PF.in_code(data)
    assert PLAIN.in_code(data)


@pytest.mark.parametrize("name", IN_CODE)
def test_keywords_in_code_pass_the_gates(name):
    data = src(IN_CODE[name])
    assert PF(data) and PF.in_code(data)


def test_strip_keeps_single_quoted_strings_and_drops_comments_and_triple_quoted_ones():
    data = (REPO / "fixtures" / "scan_gates" / "sampler" / "quoting.py").read_bytes()
    kept = scan.strip_python(data).decode()
    assert "comment" not in kept and "doc" not in kept and "more" not in kept
    for literal in ["'a # b'", r'r"\\"', r"'it\'s'", '"num_workers"']:
        assert literal in kept, literal


@pytest.mark.parametrize("tail", [b"\\", b'"open', b"'open\\", b'"""open', b"'''open", b"# end"])
def test_strip_is_linear_on_unterminated_tokens(tail):
    # A quadratic scan of this would not finish; the subprocess timeout is a hang guard.
    code = ("import sys; sys.path.insert(0, %r)\nfrom auditor import scan\n"
            "data = b'x = 1\\n' * 300000 + %r\nprint(len(scan.strip_python(data)))\n") % (str(REPO), tail)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 6 * 300000


def test_gated_files_still_report_syntax_errors_and_count_as_parsed(tmp_path):
    (tmp_path / "broken.py").write_text("# parallel processes\ndef f(:\n    pass\n")
    (tmp_path / "prose.py").write_text('"""Runs worker threads."""\nVALUE = 1\n')
    (tmp_path / "code.py").write_text("def f(cfg):\n    return cfg.get('num_workers', 2)\n")
    (tmp_path / "plain.py").write_text("VALUE = 2\n")
    proc = run_cli("scan", str(tmp_path), "--format", "json", "--no-cache")
    doc = json.loads(proc.stdout)
    assert [(e["file"], e["line"]) for e in doc["errors"]] == [("broken.py", 2)]
    assert doc["errors"][0]["message"].startswith("invalid Python")
    assert doc["summary"]["files_scanned"] == 3  # broken, prose, code: as before the gates
    assert {s["file"] for k in doc["knobs"] for s in k["sites"]} == {"code.py"}
    assert any(f["code"] == "QG001" and f["file"] == "broken.py" for f in doc["findings"])


def test_the_gates_fixture_scans_as_without_gates():
    root = REPO / "fixtures" / "scan_gates"
    proc = run_cli("scan", str(root), "--format", "json", "--no-cache")
    doc = json.loads(proc.stdout)
    assert {s["file"] for k in doc["knobs"] for s in k["sites"]} == {"conf/sampler.yaml", "sampler/pool.py",
                                                                   "sampler/quoting.py"}
    assert [e["file"] for e in doc["errors"]] == ["sampler/legacy.py"]
    assert doc["summary"]["files_scanned"] == 5


def _meta(meta):
    """A gated file's marker, and a visited file's meta that holds only empty flow facts, say
    the same: nothing this file contributes to the scan."""
    if meta == scan.GATED:
        return None
    if meta and set(meta) == {"flow"} and not any(v for k, v in meta["flow"].items() if k != "module"):
        return None
    return meta or None


def test_gated_and_ungated_outcomes_agree_on_the_fixtures():
    v = vocab.load()
    cands, _errors, _ = scan.walk(REPO / "fixtures", int(scan.MAX_FILE_SIZE_MB * 1e6))
    assert len(cands) > 50
    gated = 0
    for c in cands:
        a = scan.parse_file(c, v, PF)
        b = scan.parse_file(c, v, PLAIN)
        assert (a[1], _meta(a[2]), a[3], a[4]) == (b[1], _meta(b[2]), b[3], b[4]), c.rel
        if c.kind == "python":
            with open(c.path, "rb") as fh:
                data = fh.read()
            gated += PF(data) and not PF.in_code(data)
    assert gated >= 1  # the fixtures hold at least one file the gates take out


def _outcome(fn, text):
    from auditor.extract import ParseError

    try:
        fn(text, "f.py")
        return None
    except ParseError as exc:
        return exc.line, exc.message


def _parse_only(text, path):
    """The syntax check as it was: a parse, called one frame down as check_syntax is (how
    deep ast.parse may nest depends on the stack already in use)."""
    from auditor.extract import python_code

    python_code.parse(text, path)


# Code ast.parse accepts but a symbol table rejects, and plain syntax errors.
SYNTAX_CASES = {
    "nonlocal at module level": "nonlocal x\n",
    "duplicate argument": "def f(a, a):\n    pass\n",
    "global after assignment": "def f():\n    x = 1\n    global x\n",
    "import star in a function": "def f():\n    from os import *\n",
    "walrus rebinding a loop variable": "[i := 0 for i in range(3)]\n",
    "invalid syntax": "# parallel\ndef f(:\n    pass\n",
    "unterminated string": "x = 1\ny = 'abc\n",
    "bad indentation": "def f():\nreturn 1\n",
    "fine": "def f(cfg):\n    return cfg.threads\n",
}


@pytest.mark.parametrize("name", SYNTAX_CASES)
def test_the_syntax_check_of_gated_files_reports_what_a_parse_reports(name):
    from auditor.extract import python_code

    text = SYNTAX_CASES[name]
    assert _outcome(python_code.check_syntax, text) == _outcome(_parse_only, text)


@pytest.mark.parametrize("nest", [lambda n: "x = " + "+".join(["a"] * n), lambda n: "x = a" + ".b" * n,
                                  lambda n: "x = f" + "()" * n, lambda n: "x = " + "not " * n + "a"],
                         ids=["binop", "attribute", "call", "not"])
def test_the_syntax_check_agrees_with_a_parse_at_the_nesting_limit(nest):
    """Where ast.parse starts to give up on nesting, the cheaper check gives up too: never
    a file that passes only the check."""
    from auditor.extract import python_code

    lo, hi = 1, 20000
    assert _outcome(_parse_only, nest(hi)) is not None
    while lo < hi:  # the smallest nesting ast.parse fails on
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _outcome(_parse_only, nest(mid)) is not None else (mid + 1, hi)
    assert lo > 100
    for n in range(lo - 3, lo + 4):
        assert _outcome(python_code.check_syntax, nest(n)) == _outcome(_parse_only, nest(n)), n

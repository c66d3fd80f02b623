"""Every command, every format, on hostile names and values (issue 22): one escaping path.

A scanned tree with a file name and YAML values carrying terminal escapes (OSC 8 links, a
screen clear), a bidi override, rich markup, HTML, a Markdown ``javascript:`` link, a table
pipe, and newlines that forge a GitHub ``::error`` line and a Markdown heading; and a target
whose phase names, worker report values and stderr carry the same. Whatever comes out, on
stdout, stderr or in a written report, must show that text only escaped.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import run_cli

HOSTILE = ("\x1b]8;;javascript:alert(1)\x07link\x1b]8;;\x07\x1b[2J\u202eevil\u202c\x9b31m[bold red]markup[/bold red]"
           "<script>alert(1)</script><img src=x onerror=alert(1)>[click](javascript:alert(1))|cell"
           "\n::error file=forged.py,line=1::forged annotation\n# Forged heading\n")
NAME = "ev\x1b[31mil\n::error file=forged.py,line=1::forged <b>x [y](javascript:z).yaml"

TARGET = f'''
import os, sys, multiprocessing as mp
from auditor.timing import SamplingTimer
import auditor.report
H = {HOSTILE!r}

def work(i):
    auditor.report.worker(role=H, num_workers=H)
    return i

if __name__ == "__main__":
    sys.stderr.write(H)
    t = SamplingTimer(warmup_steps=2, name=H)
    for _ in range(40):
        with t.phase("env"):
            sum(range(20000))
        with t.phase(H):
            sum(range(5000))
        t.step(samples=int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    with mp.get_context("fork").Pool(2) as pool:
        pool.map(work, range(2))
    t.close() if hasattr(t, "close") else None
'''


def hostile_tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "conf").mkdir(parents=True)
    value = json.dumps(HOSTILE)  # a YAML double-quoted scalar: the escapes become the characters
    (root / "conf" / NAME).write_text(f"data:\n  num_workers: {value}\n  num_workers_typo: 4\nlabel: {value}\n")
    (root / "conf" / "ok.yaml").write_text(f"sampler:\n  num_envs: 8\n  name: {value}\n")
    (root / "train.py").write_text(
        "import os\nfrom torch.utils.data import DataLoader\n"
        f"def make(cfg):\n    return DataLoader(None, num_workers=cfg.data.get('num_workers', 0))  # {HOSTILE[:40]!r}\n")
    (root / "sampler.py").write_text(TARGET)
    return root


def check(text: str, where: str, markdown: bool = False, html: bool = False) -> None:
    """The hostile text may appear only escaped."""
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, where
    assert "\u202e" not in text and "\u202c" not in text, where
    assert not re.search(r"(?m)^::error file=forged", text), where
    assert not re.search(r"(?m)^\s*#+ Forged heading", text), where
    assert "[bold red]markup" not in text or "markup[/bold red]" in text, where  # never read as rich markup
    if markdown or html:  # no raw tag (an escaped one, \\<script\\> or &lt;script&gt;, is text)
        assert not re.search(r"(?<!\\)<(script|img)\b", text), where
    if markdown:  # qg-audit's own HTML report uses <b>; its Markdown never does
        assert not re.search(r"(?<!\\)<b\b", text), where
        assert not re.search(r"(?<!\\)\]\(javascript:", text), where  # no live link


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return hostile_tree(tmp_path_factory.mktemp("hostile"))


SCAN_RUNS = [("--format", "text"), ("--format", "json"), ("--format", "sarif"), ("--format", "github"),
             ("--statistics",), ("--statistics", "--format", "json"), ("--diff",)]


@pytest.mark.parametrize("args", SCAN_RUNS, ids=" ".join)
def test_scan_in_every_format(tree, args):
    for cache in (("--no-cache",), ()):  # cold, then through the store / replay
        proc = run_cli("scan", str(tree), *args, *cache, env={"QG_AUDIT_CACHE_DIR": str(tree.parent / "cache")})
        assert proc.returncode in (0, 1), proc.stderr
        check(proc.stdout, f"scan {args} stdout")
        check(proc.stderr, f"scan {args} stderr")
        if "json" in args or "sarif" in args:
            json.loads(proc.stdout)
            assert proc.stdout.isascii()
    files = run_cli("scan", "--files", f"conf/{NAME}", "--format", "github", "--no-cache", cwd=tree)
    check(files.stdout + files.stderr, "scan --files")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_verify_in_every_format(tree, fmt):
    proc = run_cli("verify", "--format", fmt, "--expect-workers", "2", "--duration", "0", "--timeout", "120",
                   "--", sys.executable, str(tree / "sampler.py"), cwd=tree)
    assert proc.returncode in (0, 1), proc.stderr
    check(proc.stdout, f"verify {fmt} stdout")
    check(proc.stderr, f"verify {fmt} stderr")
    if fmt == "json":
        doc = json.loads(proc.stdout)
        assert any(HOSTILE in json.dumps(r) or r.get("role") == HOSTILE for r in doc["reports"])  # kept, as data


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_profile_in_every_format(tree, fmt):
    proc = run_cli("profile", "--format", fmt, "--timeout", "120", "--", sys.executable, str(tree / "sampler.py"),
                   cwd=tree)
    assert proc.returncode == 0, proc.stderr
    check(proc.stdout, f"profile {fmt} stdout")
    check(proc.stderr, f"profile {fmt} stderr")
    if fmt == "text":
        assert "\\x1b" in proc.stdout  # the phase is shown, escaped
    # a saved run read back (--from) goes through the same path
    saved = tree.parent / f"run-{fmt}.jsonl"
    run_cli("profile", "--save-reports", str(saved), "--", sys.executable, str(tree / "sampler.py"), cwd=tree)
    back = run_cli("profile", "--format", fmt, "--from", str(saved))
    check(back.stdout + back.stderr, f"profile --from {fmt}")


@pytest.mark.slow
def test_sweep_in_every_format(tree, tmp_path):
    out = tmp_path / "sweep"
    proc = run_cli("sweep", "-L", "batch", "1,2", "--timeout", "120", "--export-json", str(out) + ".json",
                   "--export-markdown", str(out) + ".md", "--export-csv", str(out) + ".csv", "--",
                   sys.executable, str(tree / "sampler.py"), "{batch}", cwd=tree)
    assert proc.returncode in (0, 1), proc.stderr
    check(proc.stdout + proc.stderr, "sweep text")
    check(Path(str(out) + ".md").read_text(), "sweep markdown", markdown=True)
    check(Path(str(out) + ".csv").read_text(), "sweep csv")
    json.loads(Path(str(out) + ".json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diagnose_in_every_format_and_report(tree, tmp_path, fmt):
    md, html, trace = tmp_path / "r.md", tmp_path / "r.html", tmp_path / "trace.json"
    proc = run_cli("diagnose", "--format", fmt, "--phases", "timer", "--values", "1,2", "--verify-duration", "0",
                   "--project", str(tree), "--report", str(md), "--report", str(html), "--trace", str(trace),
                   "--", sys.executable, str(tree / "sampler.py"), "{batch}", cwd=tree, timeout=600)
    assert proc.returncode in (0, 1, 3), proc.stderr
    check(proc.stdout, f"diagnose {fmt} stdout")
    check(proc.stderr, f"diagnose {fmt} stderr")
    check(md.read_text(), "diagnose markdown", markdown=True)
    check(html.read_text(), "diagnose html", html=True)
    json.loads(trace.read_text())
    if fmt == "json":
        json.loads(proc.stdout)

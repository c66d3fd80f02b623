"""Hostile trees and targets: no crash, no escape reaching the terminal, nothing lost.

Every test builds a real tree on disk (names with undecodable bytes, escapes, markup,
newlines, symlinks out of the root, sparse and huge files) or runs a real target, then runs
the real CLI, and checks both that the hostile part is neutralised and that the other files'
results survive.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest

from tests.conftest import FIXTURES, REPO, run_cli

EXAMPLE = FIXTURES / "example_project"
FORMATS = ("text", "json", "sarif", "github")


def example_copy(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".qg-audit_cache"))
    return root


def scan(root, *args, fmt="text"):
    return run_cli("scan", str(root), "--format", fmt, "--exit-zero", *args)


def rename(root: Path, rel: str, new_name_bytes: bytes) -> bytes:
    """Rename root/rel to a name given as bytes (os.rename accepts bytes paths)."""
    src = os.fsencode(root / rel)
    dst = os.path.join(os.path.dirname(src), new_name_bytes)
    os.rename(src, dst)
    return dst


# -- file names ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_non_utf8_file_name_with_a_finding_is_escaped_and_nothing_is_lost(tmp_path, fmt):
    root = example_copy(tmp_path)
    rename(root, "sampler/data.py", b"data\xff\xfe.py")  # QG103 and QG104 live in this file
    proc = scan(root, fmt=fmt)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    if fmt in ("text", "github"):
        assert "data\\xff\\xfe.py" in out or "data%FF%FE.py" in out
    # the other files' findings are all there
    for code in ("QG101", "QG103", "QG104", "QG107"):
        assert code in out, (fmt, code)
    if fmt == "json":
        doc = json.loads(out)
        files = {f["file"] for f in doc["findings"]}
        assert "sampler/data\\xff\\xfe.py" in files
    if fmt == "sarif":
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(out)["runs"][0]["results"]]
        assert b"sampler/data\xff\xfe.py" in [unquote_to_bytes(u) for u in uris]


def test_baseline_with_a_non_utf8_name_round_trips(tmp_path):
    root = example_copy(tmp_path)
    rename(root, "sampler/data.py", b"data\xff.py")
    base = tmp_path / "baseline.json"
    assert run_cli("scan", str(root), "--write-baseline", str(base)).returncode == 0
    proc = run_cli("scan", str(root), "--baseline", str(base))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # every finding is in the baseline


def test_newline_and_escapes_in_names_and_source_never_reach_the_terminal(tmp_path):
    root = example_copy(tmp_path)
    rename(root, "sampler/data.py", b"a\nfake.py:1:1: QG999 forged [error] x\x1b]0;owned\x07.py")
    data = root / "sampler" / "envs.py"
    text = data.read_text()
    # an OSC 8 hyperlink, clear-screen and a bidi override on a line that is a site's source
    data.write_text(text.replace("num_workers", "num_workers\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"
                                 "\x1b[2J\u202e", 1))
    proc = scan(root)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout and "\x07" not in proc.stdout
    forged = [ln for ln in proc.stdout.splitlines() if ln.startswith("fake.py")]
    assert forged == []
    assert "sampler/a\\nfake.py" in proc.stdout and "QG104" in proc.stdout


@pytest.mark.parametrize("name", ["x[/y]", "l[link=https://example.com]click[/link]", "[bold]b[/bold]"])
def test_rich_markup_in_the_root_path_is_printed_literally(tmp_path, name):
    root = example_copy(tmp_path, name)
    proc = scan(root, "--knobs")
    assert proc.returncode == 0, proc.stderr
    assert f"Parallelism knobs in {root}" in proc.stdout.replace("\n", "")
    assert "\x1b]8;" not in proc.stdout
    assert "Traceback" not in proc.stderr


def test_sarif_uri_is_percent_encoded(tmp_path):
    root = example_copy(tmp_path)
    rename(root, "sampler/data.py", b"x#frag %.py")
    results = json.loads(scan(root, fmt="sarif").stdout)["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "sampler/x%23frag%20%25.py" in uris
    assert unquote_to_bytes("sampler/x%23frag%20%25.py") == b"sampler/x#frag %.py"


# -- symlinks and sizes ---------------------------------------------------------------------

def test_symlink_out_of_the_root_is_not_followed_unless_asked(tmp_path):
    root = example_copy(tmp_path)
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "secrets.sh").write_text("#!/bin/bash\nexport API_TOKEN=hunter2 OMP_NUM_THREADS=1\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "leak.yaml").write_text("num_workers: 3  # API_TOKEN=hunter3\n")
    (root / "scripts" / "env.sh").symlink_to(outside / "secrets.sh")
    (root / "linked").symlink_to(outside / "dir")
    (root / "conf" / "inside.yaml").symlink_to(root / "conf" / "config.yaml")  # inside: followed
    doc = json.loads(scan(root, fmt="json").stdout)
    text = json.dumps(doc)
    assert "hunter2" not in text and "hunter3" not in text
    errors = {e["file"]: e["message"] for e in doc["errors"]}
    assert "symlink to outside the scanned root" in errors["scripts/env.sh"]
    assert "--follow-links" in errors["linked"]
    assert any(s["file"] == "conf/inside.yaml" for k in doc["knobs"] for s in k["sites"])
    followed = json.loads(scan(root, "--follow-links", fmt="json").stdout)
    assert "hunter2" in json.dumps(followed) and not any("outside" in e["message"] for e in followed["errors"])


def test_sparse_file_is_refused_by_its_first_block_without_reading_it(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ok.py").write_text("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=4)\n")
    with open(root / "huge.py", "wb") as f:
        f.truncate(2 * 1024**3)  # 2 GiB of holes: NUL bytes, no disk
    # measure the scan's peak RSS from a wrapper, so this test process's other children do not count
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.stdout.write(p.stdout)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "auditor", "scan", str(root),
                           "--format", "json", "--exit-zero", "--max-file-size", "3000", "-j", "1"],
                          capture_output=True, text=True, env=env, timeout=300)
    peak_kib, _, rest = proc.stdout.partition("\n")
    doc = json.loads(rest)
    assert {e["file"]: e["message"] for e in doc["errors"]}["huge.py"].startswith("binary file (NUL byte at byte 0)")
    assert any(k["leaf"] == "num_workers" for k in doc["knobs"])
    assert int(peak_kib) < 400 * 1024, f"peak RSS {int(peak_kib) // 1024} MiB: the file was read whole"


def test_huge_source_lines_are_capped_in_every_format(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    pad = "x" * (5 * 10**6)
    lines = ["from torch.utils.data import DataLoader"]
    lines += [f"loader{i} = DataLoader(ds, num_workers={i + 1}); pad{i} = '{pad}'" for i in range(4)]
    (root / "big.py").write_text("\n".join(lines) + "\n")
    doc = json.loads(scan(root, "--max-file-size", "50", fmt="json").stdout)
    sources = [s["source"] for k in doc["knobs"] for s in k["sites"]]
    assert len(sources) >= 4 and all(len(s) <= 200 for s in sources) and all(s.endswith("\u2026") for s in sources)
    # SARIF carries every rule's documentation (~190 kB): the bound is on what the findings add
    small = tmp_path / "small"
    small.mkdir()
    (small / "small.py").write_text(lines[0] + "\nloader = DataLoader(ds, num_workers=1)\n")
    for fmt in ("text", "sarif", "github"):
        proc = scan(root, "--max-file-size", "50", fmt=fmt)
        base = len(scan(small, fmt=fmt).stdout)
        assert proc.returncode == 0 and len(proc.stdout) < base + 200_000, (fmt, len(proc.stdout), base)


# -- python -m auditor, run where the project is -------------------------------------------

def test_python_m_auditor_never_imports_from_the_current_directory(tmp_path):
    root = example_copy(tmp_path)
    # (a project with its own top-level ``auditor`` package would shadow this one under
    # ``python -m``, before any of qg-audit's code runs: the ``qg-audit`` script has no such issue)
    for name in ("yaml.py", "json.py", "rich.py", "ast.py", "tomllib.py", "psutil.py"):
        (root / name).write_text("import sys\nprint('SCANNED CODE RAN', file=sys.stderr)\nraise SystemExit(99)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "auditor", "scan", ".", "--exit-zero"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert "SCANNED CODE RAN" not in proc.stderr and proc.returncode == 0, proc.stderr
    assert "QG104" in proc.stdout


# -- the runtime side ----------------------------------------------------------------------

def test_oversized_report_lines_are_dropped_and_counted(tmp_path):
    target = tmp_path / "t.py"
    target.write_text(
        "import json, os\n"
        "fd = os.open(os.environ['QG_AUDIT_REPORT'], os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
        "os.write(fd, b'{\"v\":1,\"type\":\"worker\",\"pid\":1,\"junk\":\"' + b'x' * 10_000_000 + b'\"}\\n')\n"
        "os.write(fd, b'not json\\n')\n"
        "import auditor.report\n"
        "auditor.report.worker(role='learner', num_workers=0)\n")
    proc = run_cli("verify", "--expect-workers", "1", "--format", "json", "--", sys.executable, str(target),
                   env={"PYTHONPATH": str(REPO)})
    doc = json.loads(proc.stdout)
    assert doc["report_lines"]["dropped_oversize"] == 1 and doc["report_lines"]["corrupt"] == 1
    assert len(proc.stdout) < 1_000_000
    assert any(r.get("role") == "learner" for r in doc["reports"])


@pytest.mark.slow
def test_a_target_ended_by_timeout_is_reported_and_fails(tmp_path):
    target = tmp_path / "forever.py"
    target.write_text("import multiprocessing as mp, time\n"
                      "def w():\n    time.sleep(600)\n"
                      "if __name__ == '__main__':\n"
                      "    ps = [mp.Process(target=w) for _ in range(2)]\n"
                      "    [p.start() for p in ps]\n    time.sleep(600)\n")
    proc = run_cli("verify", "--expect-workers", "2", "--duration", "0", "--timeout", "3", "--",
                   sys.executable, str(target))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("verify: TIMEOUT") and "ended by timeout" in proc.stdout
    proc = run_cli("verify", "--expect-workers", "2", "--duration", "0", "--timeout", "3", "--format", "json",
                   "--", sys.executable, str(target))
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "timeout" and doc["target"]["ended_by"] == "timeout" and doc["exit_code"] == 1


def test_target_stderr_escapes_are_neutralised_in_the_report(tmp_path):
    target = tmp_path / "bad.py"
    target.write_text("import sys\nsys.stderr.write('\\x1b]0;pwned\\x07\\x1b[2Jboom\\n')\nraise SystemExit(4)\n")
    proc = run_cli("verify", "--expect-workers", "1", "--", sys.executable, str(target))
    assert proc.returncode == 3
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "\\x1b[2Jboom" in proc.stdout

"""qg-audit diagnose end to end: the three branches of the method on real fixture projects.

fixtures/diagnose/ holds one gymnasium + torch sampler project per branch (see its README).
Each test runs the real command (real subprocesses, real scan, real verify) and checks the
step list, the branch, the exit code and the qg-audit.diagnose/1 schema. The reports are
checked for content, the HTML also in headless Chromium, the trace against the Trace Event
Format's rules.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

import jsonschema
import pytest

from conftest import FIXTURES, run_cli

PROJECTS = FIXTURES / "diagnose"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def diagnose(*args, timeout=600):
    proc = run_cli("diagnose", "--format", "json", *args, timeout=timeout)
    assert proc.returncode in (0, 1, 3), proc.stderr
    doc = json.loads(proc.stdout)
    from auditor.method.schema import DIAGNOSE_SCHEMA

    jsonschema.validate(doc, DIAGNOSE_SCHEMA)
    assert doc["exit_code"] == proc.returncode
    return doc, proc


def steps(doc):
    return {s["name"]: (s["status"], s["verdict"]) for s in doc["steps"]}


def sampler(project, *args):
    return ["--", sys.executable, str(PROJECTS / project / "sampler.py"), *args]


@pytest.fixture(scope="module")
def env_bound(tmp_path_factory):
    out = tmp_path_factory.mktemp("env_bound")
    doc, proc = diagnose("--phases", "auto", "--verify-duration", "0", "--report", str(out / "report.html"),
                         "--report", str(out / "report.md"), "--trace", str(out / "trace.json"),
                         *sampler("env_bound", "--steps", "100"))
    return doc, proc, out


@pytest.mark.slow
def test_env_bound_goes_to_verify_without_a_sweep(env_bound):
    doc, proc, _ = env_bound
    assert doc["branch"] == "env-bound" and doc["phases_source"] == "auto"
    assert steps(doc) == {"profile": ("ran", "env-bound"), "wait": ("ran", "sampling-bound"),
                          "sweep": ("skipped", None), "scan": ("ran", "findings"), "verify": ("ran", "fallback")}
    assert doc["sweep"] is None
    # the scan's effective value is what verify expects, and the serial fallback is found twice
    assert doc["scan"]["expected"]["workers"] == 4
    assert [f["code"] for f in doc["scan"]["findings"]] == ["QG106"]
    # the misspelt switch (async_envs: true, code reads `async`) is found too; no code of the
    # command reads it, so it is shown apart, outside the exit code
    assert [f["code"] for f in doc["scan"]["findings_elsewhere"]] == ["QG101"]
    assert doc["verify"]["expected"]["workers"] == 4 and doc["verify"]["observed"]["workers"] == 0
    assert proc.returncode == 1
    # every step says why the next one runs or not
    by_name = {s["name"]: s for s in doc["steps"]}
    assert "skip the batch sweep" in by_name["wait"]["next"]
    assert "verify expects 4" in by_name["scan"]["next"]
    assert "env-bound" in by_name["sweep"]["message"]
    # progress on stderr names each step as it happens
    assert "qg-audit diagnose: 5. verify [ran: fallback]" in proc.stderr


@pytest.mark.slow
def test_trainer_bound_stops_after_the_wait_ratio():
    # default --phases either: the fixture carries SamplingTimer phases, so they are used
    doc, proc = diagnose(*sampler("trainer_bound", "--steps", "100"))
    assert doc["branch"] == "trainer-bound" and doc["phases_source"] == "timer"
    assert steps(doc)["wait"] == ("ran", "trainer-bound")
    assert [steps(doc)[n] for n in ("sweep", "scan", "verify")] == [("skipped", None)] * 3
    assert doc["scan"] is None and doc["verify"] is None
    assert doc["steps"][1]["next"].startswith("stop:")
    assert doc["profile"]["wait"]["ratio_p50"] < 0.2
    assert proc.returncode == 0


@pytest.mark.slow
def test_forward_bound_sweeps_then_verifies():
    # the run outlasts verify's 8 s window (workers that end before the target does would be
    # "workers-died"); --sweep-steps ends each sweep run after 60 steady steps per timer
    doc, proc = diagnose("--phases", "auto", "--values", "16,32", "--sweep-steps", "60",
                         *sampler("forward_bound", "--batch", "{batch}", "--steps", "600"))
    assert doc["branch"] == "forward-transfer-bound"
    assert steps(doc)["sweep"][0] == "ran" and steps(doc)["verify"] == ("ran", "pass")
    results = {r["value"]: r for r in doc["sweep"]["results"]}
    assert set(results) == {"16", "32"}
    # one pass of the policy serves up to 32 samples: 32 per pass nearly doubles samples/s
    assert results["32"]["samples_per_s"]["mean"] > 1.3 * results["16"]["samples_per_s"]["mean"]
    line = next(c for c in doc["conclusion"] if c.startswith("under this parallel config"))
    assert line.startswith("under this parallel config (with 2 worker processes), batch 16 \u2192 32 changed "
                           "samples/s from ")
    assert doc["scan"]["expected"] == {"workers": 2, "knobs": doc["scan"]["expected"]["knobs"], "unknown": []}
    assert doc["verify"]["observed"]["workers"] == 2
    assert proc.returncode == 0


@pytest.mark.slow
def test_markdown_report_and_trace(env_bound):
    _doc, _proc, out = env_bound
    md = (out / "report.md").read_text()
    for text in ("# qg-audit diagnose", "branch: **env-bound**", "| 3 | sweep | skipped |", "## Verify",
                 "**fallback**", "sampler.num_envs", "## Trainer wait ratio"):
        assert text in md, text
    trace = json.loads((out / "trace.json").read_text())
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    for e in events:
        assert isinstance(e["name"], str) and e["ph"] in ("X", "M")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["ts"], (int, float))
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
    names = {e["name"] for e in events}
    assert {"step", "env", "fwd", "xfer", "wait", "compute", "thread_name", "process_name"} <= names
    # phases nest inside their step on the same track (what Perfetto draws as children)
    steps_by = {(e["pid"], e["tid"], e["args"]["step"]): e for e in events if e["name"] == "step"}
    for e in events:
        if e.get("cat") == "phase":
            st = steps_by[(e["pid"], e["tid"], e["args"]["step"])]
            assert st["ts"] - 0.01 <= e["ts"] and e["ts"] + e["dur"] <= st["ts"] + st["dur"] + 0.01


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, len(data)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium) to render the HTML")
def test_html_report_renders_in_headless_chromium(env_bound, tmp_path):
    _doc, _proc, out = env_bound
    html = (out / "report.html").read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert html.count("<svg") == 2  # phase bars and the wait distribution (no sweep on this branch)
    artifacts = os.environ.get("QG_AUDIT_ARTIFACTS")
    shot = (tmp_path if not artifacts else __import__("pathlib").Path(artifacts)) / "diagnose-report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1100,2000",
                           f"--screenshot={shot}", (out / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    width, height, size = _png_size(shot)
    assert (width, height) == (1100, 2000)
    # a blank page of this size compresses to a few KB; text, tables and charts do not
    assert size > 30_000, size


def test_usage_errors_exit_2(tmp_path):
    cases = [
        ((), "nothing to diagnose"),
        (("--", sys.executable, "x.py", "--batch", "{batch}"), "give --current B"),
        (("--values", "8,8", "--", sys.executable, "x.py", "{batch}"), "distinct"),
        (("--values", "8,16", "--", sys.executable, "x.py"), "never uses {batch}"),
        (("--report", str(tmp_path / "r.txt"), "--", sys.executable, "x.py"), "must end in .html or .md"),
        (("--project", str(tmp_path / "absent"), "--", sys.executable, "x.py"), "no such file"),
    ]
    for args, message in cases:
        proc = run_cli("diagnose", *args, timeout=60)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)


def test_target_that_fails_exits_3(tmp_path):
    proc = run_cli("diagnose", "--format", "json", "--project", str(tmp_path), "--",
                   sys.executable, "-c", "raise SystemExit(4)", timeout=120)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    from auditor.method.schema import DIAGNOSE_SCHEMA

    jsonschema.validate(doc, DIAGNOSE_SCHEMA)
    assert doc["branch"] == "target-failed"
    assert steps(doc)["profile"] == ("failed", "target-failed")
    assert "exited with code 4" in doc["steps"][0]["message"]

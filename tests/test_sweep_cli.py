"""qg-audit sweep end to end: the real CLI sweeps a real fixture sampler (fixtures/sweep).

The fixture's samples/s doubles with the batch up to 32 and is flat after it; each process
holds batch x 1 MiB of touched memory; batch 48 crashes like an out-of-memory error. One
sweep (8, 16, 32, 48, 64; 30 steady steps each, two runs per value: a plateau needs a spread)
runs once per module and the tests read its table, JSON, exports and plot.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import time
import uuid

import psutil
import pytest

from tests.conftest import FIXTURES, run_cli

SAMPLER = str(FIXTURES / "sweep" / "saturating_sampler.py")
# This interpreter, not `python` from PATH: a pyenv shim there is a shell script that starts a
# few short-lived processes of its own, which a census on a loaded machine may count.
PY = sys.executable
MIB = 1024 * 1024

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


def leftovers(tag: str) -> list[str]:
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        if tag in " ".join(p.info["cmdline"] or []) and p.pid != os.getpid():
            out.append(f"{p.pid} {' '.join(p.info['cmdline'])[:80]}")
    return out


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    tag = "sweep-" + uuid.uuid4().hex[:8]
    files = {"json": tmp / "s.json", "md": tmp / "s.md", "csv": tmp / "s.csv", "png": tmp / "s.png"}
    args = ["sweep", "-L", "batch", "8,16,32,48,64", "--steps", "30", "--runs", "2", "--interval", "0.05",
            "--memory-limit", "90MiB", "--memory-near", "0.75", "--plateau-gain", "0.15",
            "--export-json", str(files["json"]), "--export-markdown", str(files["md"]),
            "--export-csv", str(files["csv"])]
    if HAVE_MPL:
        args += ["--plot", str(files["png"])]
    # --steps 0: the fixture runs until the sweep ends it after 3 warm-up + 30 steady steps.
    # A pass costs 12 ms (not the fixture's default 6): a scheduling stall on a loaded 2-core
    # machine, which the paced clock can only make up in later steps, then weighs half as much.
    args += ["--", PY, SAMPLER, "--batch", "{batch}", "--steps", "0", "--crash-at", "48",
             "--env-ms", "2", "--fwd-ms", "8", "--xfer-ms", "2", "--mib-per-sample", "1", "--tag", tag]
    proc = run_cli(*args, timeout=240)
    doc = json.loads(files["json"].read_text()) if files["json"].exists() else None
    return proc, doc, files, tag


def by_value(doc):
    return {r["value"]: r for r in doc["results"]}


def test_sweep_exits_0_and_prints_the_table(swept):
    proc, doc, _files, _tag = swept
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("batch "))
    for col in ("samples/s", "env ms", "fwd ms", "xfer ms", "untimed ms", "procs", "RSS peak", "GPU peak",
                "exit status"):
        assert col in header
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in {"8", "16", "32", "48", "64"}}
    assert set(rows) == {"8", "16", "32", "48", "64"}
    assert rows["48"].endswith("exit 1")
    for v in ("8", "16", "32", "64"):
        assert rows[v].endswith("ok")
        assert " n/a " in rows[v] or doc["context"]["gpu"]["present"]  # GPU peak: n/a without a GPU
    assert "qg-audit sweep: [10/10] batch=64 run 2/2" in proc.stderr  # the progress line


def test_throughput_saturates_at_the_known_batch(swept):
    _proc, doc, _files, _tag = swept
    rate = {v: r["samples_per_s"]["mean"] for v, r in by_value(doc).items()}
    assert rate["16"] > 1.6 * rate["8"] and rate["32"] > 1.6 * rate["16"]  # ideal: 2x
    assert abs(rate["64"] / rate["32"] - 1) < 0.15  # ideal: flat
    # where the time moved: past the capacity a step takes two passes, the forward pass most
    step = {v: r["step_ms"] for v, r in by_value(doc).items()}
    assert 1.6 < step["64"] / step["32"] < 2.4 and 0.8 < step["16"] / step["8"] < 1.25
    fwd = {v: r["phases_ms"]["fwd"] for v, r in by_value(doc).items() if r["phases_ms"]}
    assert fwd["64"] > 1.3 * fwd["32"] and fwd["64"] > by_value(doc)["64"]["phases_ms"]["env"]


def test_plateau_and_memory_give_stop_at_32(swept):
    proc, doc, _files, _tag = swept
    con = doc["conclusion"]
    assert con["stop_at"] == "32" and con["reasons"] == ["plateau", "memory"]
    assert con["scope"] == "with a single process, no worker processes"
    assert [(c["from"], c["to"], c["plateau"]) for c in con["changes"]] == [
        ("8", "16", False), ("16", "32", False), ("32", "64", True)]
    assert "batch 32 \u2192 64: samples/s" in proc.stdout
    assert "conclusion: stop at batch 32 for this parallel configuration" in proc.stdout
    assert "at batch 64 the tree RSS peak" in con["message"]
    shift = con["phase_shift"]
    assert (shift["from"], shift["to"]) == ("32", "64")
    assert max(shift["phases_ms_delta"], key=lambda n: abs(shift["phases_ms_delta"][n])) == "fwd"
    assert "where the step time moved, batch 32 \u2192 64" in proc.stdout


def test_memory_peaks_grow_with_the_batch(swept):
    _proc, doc, _files, _tag = swept
    rss = {v: r["rss_peak_bytes"] for v, r in by_value(doc).items()}
    # each value holds batch MiB more than the interpreter's own memory
    assert rss["16"] - rss["8"] > 6 * MIB and rss["32"] - rss["16"] > 12 * MIB and rss["64"] - rss["32"] > 24 * MIB
    assert rss["64"] > 64 * MIB
    if not doc["context"]["gpu"]["present"]:
        assert all(r["gpu_peak_bytes"] is None for r in doc["results"])


def test_json_schema_fields(swept):
    _proc, doc, _files, _tag = swept
    assert doc["schema"] == "qg-audit.sweep/1"
    assert doc["variable"] == {"name": "batch", "values": ["8", "16", "32", "48", "64"], "source": "-L"}
    ctx = doc["context"]
    assert ctx["command_template"][2:5] == ["--batch", "{batch}", "--steps"]
    assert ctx["workers_observed"]["32"] == 0 and ctx["versions"]["python"]
    assert "thread_env" in ctx and ctx["memory_limit_bytes"] == 90 * MIB
    for r in doc["results"]:
        assert {"value", "runs", "samples_per_s", "phases_ms", "processes", "rss_peak_bytes", "gpu_peak_bytes",
                "exit_codes"} <= set(r)
        assert set(r["samples_per_s"]) == {"mean", "stddev", "min", "max"}
        assert r["runs"] == 2 and r["processes"] >= 1
    assert {"stop_at", "message", "changes", "reasons", "scope"} <= set(doc["conclusion"])


def test_json_validates_against_the_published_schema(swept):
    jsonschema = pytest.importorskip("jsonschema")
    from auditor.sweep.schema import SWEEP_SCHEMA

    _proc, doc, _files, _tag = swept
    jsonschema.validate(doc, SWEEP_SCHEMA)
    broken = dict(doc, results=[dict(doc["results"][0], samples_per_s={"mean": 1.0})])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SWEEP_SCHEMA)


def test_every_value_measured_over_the_same_steps(swept):
    _proc, doc, _files, _tag = swept
    for v in ("8", "16", "32", "64"):
        run = by_value(doc)[v]["run_details"][0]
        assert (run["steps"], run["ended_by"], run["exit_code"]) == (30, "steps", None)


def test_crashing_value_is_recorded_and_the_sweep_goes_on(swept):
    proc, doc, _files, tag = swept
    crashed = by_value(doc)["48"]
    assert crashed["exit_codes"] == [1, 1] and crashed["samples_per_s"]["mean"] is None
    assert "simulated out of memory" in crashed["run_details"][0]["stderr_tail"]
    assert by_value(doc)["64"]["samples_per_s"]["mean"] > 0  # measured after the crash
    assert "batch=48: every run failed (exited with code 1); not measured" in proc.stdout
    assert leftovers(tag) == []


def test_markdown_and_csv_exports(swept):
    _proc, _doc, files, _tag = swept
    rows = list(csv.DictReader(files["csv"].open()))
    assert [r["batch"] for r in rows] == ["8", "16", "32", "48", "64"]
    assert rows[3]["exit_codes"] == "1 1" and float(rows[2]["samples_per_s_mean"]) > 0
    assert float(rows[2]["untimed_ms"]) >= 0  # the table's untimed column, in the CSV too
    md = files["md"].read_text()
    assert sum(1 for line in md.splitlines() if line.startswith("| ")) == 6  # header + 5 values
    assert "stop at batch 32" in md


@pytest.mark.skipif(not HAVE_MPL, reason="matplotlib (the 'plot' extra) is not installed")
def test_plot_writes_a_png(swept):
    _proc, _doc, files, _tag = swept
    data = files["png"].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


# -- usage errors: exit 2, one line naming the flag -------------------------------------
CMD = ["--", PY, SAMPLER, "--batch", "{batch}"]


@pytest.mark.parametrize("args,needle", [
    (["-L", "batch", "8,16", "-P", "batch", "8", "64", *CMD], "exactly one variable"),
    (["-L", "batch", "8,16", "-L", "lr", "1,2", *CMD], "exactly one variable"),
    ([*CMD], "no variable to sweep"),
    (["-L", "batch"], "expected 2 arguments"),
    (["-P", "batch", "64", "8", *CMD], "MIN is greater than MAX"),
    (["-P", "batch", "8", "64", "-D", "0", *CMD], "greater than 0"),
    (["-P", "batch", "8", "64", "-D", "x1", *CMD], "greater than 1"),
    (["-L", "batch", "8,16", "-D", "2", *CMD], "-D STEP applies to -P"),
    (["-L", "batch", "8,8", *CMD], "more than once"),
    (["-L", "9b", "8,16", *CMD], "identifier"),
    (["-L", "batch", "8,16", "--", PY, SAMPLER, "--batch", "8"], "never uses {batch}"),
    (["-L", "batch", "8,16"], "no command"),
    (["-L", "batch", "8,16", "--runs", "0", *CMD], "--runs must be"),
    (["-L", "batch", "8,16", "--steps", "5", "--duration", "2", *CMD], "not allowed with"),
    (["-L", "batch", "8,16", "--memory-limit", "lots", *CMD], "--memory-limit 'lots'"),
    (["-L", "batch", "8,16", "--export-json", "/nonexistent/dir/x.json", *CMD], "does not exist"),
])
def test_usage_errors_exit_2(args, needle):
    proc = run_cli("sweep", *args, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert proc.stdout == ""


def test_every_value_failing_exits_3(tmp_path):
    out = tmp_path / "s.json"
    proc = run_cli("sweep", "-L", "batch", "48", "--no-progress", "--export-json", str(out),
                   "--", PY, SAMPLER, "--batch", "{batch}", "--crash-at", "48", timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "no value could be measured (exited with code 1)" in proc.stderr
    assert "simulated out of memory" in proc.stderr
    assert json.loads(out.read_text())["results"][0]["exit_codes"] == [1]  # recorded all the same


def test_command_that_cannot_start_exits_3():
    proc = run_cli("sweep", "-L", "batch", "8", "--no-progress", "--", "/nonexistent/sampler-{batch}", timeout=60)
    assert proc.returncode == 3
    assert "could not start" in proc.stderr


@pytest.mark.slow
def test_worker_processes_and_repeated_runs(tmp_path):
    """Two worker processes per run, three runs per value: the scope names the worker count."""
    out = tmp_path / "s.json"
    tag = "sweep-" + uuid.uuid4().hex[:8]
    proc = run_cli("sweep", "-P", "batch", "16", "64", "-D", "x2", "--runs", "3", "--steps", "10", "--no-progress",
                   "--export-json", str(out), "--", PY, SAMPLER, "--batch", "{batch}", "--steps", "0",
                   "--workers", "2", "--mib-per-sample", "0.5", "--tag", tag, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["variable"]["values"] == ["16", "32", "64"]
    assert doc["conclusion"]["scope"] == "with 2 worker processes"
    for r in doc["results"]:
        assert r["runs"] == 3 and r["exit_codes"] == [None, None, None]
        assert r["samples_per_s"]["stddev"] is not None and r["processes"] == 3
    assert "with 2 worker processes, batch 16 \u2192 32" in proc.stdout
    assert leftovers(tag) == []


@pytest.mark.slow
def test_ctrl_c_keeps_what_was_measured_and_leaves_no_process(tmp_path):
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    out = tmp_path / "s.json"
    tag = "sweep-" + uuid.uuid4().hex[:8]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "auditor", "sweep", "-L", "batch", "8,16,32", "--duration", "2",
         "--export-json", str(out), "--", PY, SAMPLER, "--batch", "{batch}", "--steps", "0", "--tag", tag],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:  # one progress line per run (stderr is not a terminal)
            if "[2/3] batch=16" in line:
                break
        time.sleep(0.8)  # the second run is going
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "interrupted during batch=16 run 1" in stderr
    doc = json.loads(out.read_text())
    assert [r["value"] for r in doc["results"]] == ["8"]
    assert doc["results"][0]["samples_per_s"]["mean"] > 0
    assert "not run: 16, 32" in stdout
    assert leftovers(tag) == []


def test_plot_without_matplotlib_is_a_usage_error_before_any_run(tmp_path):
    from tests.conftest import REPO

    hidden = tmp_path / "matplotlib"
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('matplotlib hidden by the test')\n")
    tag = "sweep-" + uuid.uuid4().hex[:8]
    proc = run_cli("sweep", "-L", "batch", "8", "--plot", str(tmp_path / "p.png"), "--", PY, SAMPLER,
                   "--batch", "{batch}", "--tag", tag,
                   env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}, timeout=60)
    assert proc.returncode == 2
    assert "--plot needs matplotlib: pip install 'qg-audit[plot]'" in proc.stderr
    assert "[1/1]" not in proc.stderr  # refused before launching anything

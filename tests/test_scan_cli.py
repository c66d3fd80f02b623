"""`qg-audit scan` as a user runs it: a real subprocess on real fixture trees."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import REPO, run_cli

EXAMPLE = "fixtures/example_project"

SITE = {
    "type": "object",
    "required": ["role", "file", "line", "column", "key", "leaf", "value", "default", "source", "kind", "detail"],
    "properties": {
        "role": {"enum": ["define", "read", "override", "consume"]},
        "file": {"type": "string", "pattern": "^[^/]"},  # relative to the scanned root
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
        "key": {"type": "string", "minLength": 1},
        "leaf": {"type": "string", "minLength": 1},
        "source": {"type": "string"},
        "kind": {"enum": ["python", "yaml", "toml", "json", "shell"]},
        "detail": {"type": "object"},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["schema", "knobs", "findings", "errors", "summary"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": "qg-audit.scan/1"},
        "knobs": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "leaf", "effective", "why", "sites"],
            "properties": {"name": {"type": "string"}, "leaf": {"type": "string"}, "why": {"type": "string"},
                           "sites": {"type": "array", "minItems": 1, "items": SITE}}}},
        "findings": {"type": "array", "items": {"type": "object", "required": ["code", "file", "line", "message"]}},
        "errors": {"type": "array", "items": {
            "type": "object", "required": ["file", "line", "message"], "additionalProperties": False,
            "properties": {"file": {"type": "string"}, "line": {"type": ["integer", "null"]},
                           "message": {"type": "string", "minLength": 1}}}},
        "summary": {"type": "object",
                    "required": ["files_seen", "files_scanned", "knobs", "sites", "errors", "findings", "elapsed_s"],
                    "properties": {
                        "files_seen": {"type": "integer"}, "files_scanned": {"type": "integer"},
                        "knobs": {"type": "integer"}, "errors": {"type": "integer"},
                        "findings": {"type": "integer"}, "elapsed_s": {"type": "number", "minimum": 0},
                        "sites": {"type": "object", "required": ["define", "read", "override", "consume"],
                                  "additionalProperties": {"type": "integer"}}}},
    },
}


def scan_json(*args: str, cwd=None) -> tuple[dict, object]:
    proc = run_cli("scan", *args, "--format", "json", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), proc


def test_json_contract_on_the_example():
    doc, proc = scan_json(EXAMPLE)
    jsonschema.validate(doc, SCHEMA)
    assert proc.returncode == (1 if doc["findings"] else 0)  # exit code comes from the rules gate
    s = doc["summary"]
    assert s["knobs"] == len(doc["knobs"]) and s["errors"] == len(doc["errors"]) == 0
    assert sum(s["sites"].values()) == sum(len(k["sites"]) for k in doc["knobs"])
    assert s["files_scanned"] <= s["files_seen"]
    knob = next(k for k in doc["knobs"] if k["name"] == "data.num_workers")
    assert knob["effective"] == 8 and knob["leaf"] == "num_workers"
    define = knob["sites"][0]
    assert (define["role"], define["file"], define["line"], define["column"], define["value"]) == \
           ("define", "conf/config.yaml", 7, 3, 8)
    read = knob["sites"][1]
    assert (read["role"], read["file"], read["line"], read["default"]) == ("read", "sampler/data.py", 20, 1)
    assert read["source"] == 'num_workers = cfg.data.get("num_workers", 1)'


def first_column(table_text: str) -> str:
    """The knob column of the rich table, its wrapped lines joined back with spaces."""
    cells = [line.split("│")[1].strip() for line in table_text.splitlines() if line.startswith("│")]
    return " ".join(c for c in cells if c)


def test_default_text_is_findings_then_a_summary():
    proc = run_cli("scan", EXAMPLE, env={"COLUMNS": "200"})
    doc, _ = scan_json(EXAMPLE)
    out = proc.stdout
    assert "Parallelism knobs in" not in out and "│" not in out  # no inventory table by default
    lines = out.splitlines()
    finding_lines = [i for i, ln in enumerate(lines) if " QG1" in ln and "[warning]" in ln]
    assert len(finding_lines) == sum(f["severity"] == "warning" for f in doc["findings"]) > 0
    summary = next(i for i, ln in enumerate(lines) if ln.startswith(f"{len(doc['findings'])} finding"))
    assert summary > max(finding_lines)
    by_rule = {}
    for f in doc["findings"]:
        by_rule[f["code"]] = by_rule.get(f["code"], 0) + 1
    assert ", ".join(f"{c} {n}" for c, n in sorted(by_rule.items())) in lines[summary]
    assert "--knobs" in lines[-1]
    # each finding is followed by its path, source first
    first = finding_lines[0]
    assert lines[first + 1].strip().startswith("from ")


def test_knobs_filter_shows_only_matching_knobs():
    proc = run_cli("scan", EXAMPLE, "--knobs", "n_envs", env={"COLUMNS": "200"})
    column = first_column(proc.stdout)
    assert "sampler.n_envs = 32" in column and "data.num_workers" not in column
    proc = run_cli("scan", EXAMPLE, "--knobs", "no-such-knob", env={"COLUMNS": "200"})
    assert "No knob of fixtures/example_project has 'no-such-knob' in its name" in proc.stdout


def test_readme_command_shows_the_journeys():
    proc = run_cli("scan", EXAMPLE, "--knobs", env={"COLUMNS": "200"})
    doc, _ = scan_json(EXAMPLE)
    assert proc.returncode == (1 if doc["findings"] else 0), proc.stderr
    out = proc.stdout
    knob_column = first_column(out)
    for text in ["data.num_workers = 8",
                 "8 from conf/config.yaml:7; capped by os.cpu_count() at sampler/data.py:22; consumed by "
                 "DataLoader at sampler/data.py:23",
                 "sampler.n_envs = 32",
                 "32 from scripts/launch.sh:9 (via $N_ENVS), over 16 at conf/config.yaml:11",
                 "sampler.num_worker (look-alike name) = 4",
                 "sampler.num_workers = 1 1: the default at sampler/envs.py:21",
                 "trainer.torch_threads = 1 1 from conf/config.yaml:15 via ${OMP_NUM_THREADS}"]:
        assert text in knob_column, text
    for text in ["Parallelism knobs in fixtures/example_project", "num_workers -> DataLoader",
                 "SyncVectorEnv (serial)", "default 1", "conf/rollout/cpu.yaml:2", "0 errors"]:
        assert text in out, text
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal


def test_output_file_gets_the_report_and_stdout_stays_empty(tmp_path):
    out = tmp_path / "scan.json"
    proc = run_cli("scan", EXAMPLE, "--format", "json", "-o", str(out))
    assert proc.returncode in (0, 1) and proc.stdout == ""
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    text_out = tmp_path / "scan.txt"
    run_cli("scan", EXAMPLE, "-o", str(text_out))
    assert "data.num_workers" in text_out.read_text() and "\x1b[" not in text_out.read_text()


def test_single_file_root():
    doc, _ = scan_json(f"{EXAMPLE}/conf/config.yaml")
    names = {k["name"]: k for k in doc["knobs"]}
    assert names["data.num_workers"]["sites"][0]["file"] == "config.yaml"
    assert doc["summary"]["files_seen"] == 1


def test_skipped_directories_and_prefilter(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "a.yaml").write_text("loader:\n  num_workers: 3\n")
    (tmp_path / "conf" / "plain.yaml").write_text("lr: 0.1\nepochs: 3\n")  # no keyword: not parsed
    (tmp_path / "conf" / "typo.yaml").write_text("loader:\n  num_worker: 3\n")  # misspelt: parsed
    for skipped in ["node_modules", ".venv", "__pycache__", ".git", "build"]:
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.yaml").write_text("num_workers: 99\n")
    doc, _ = scan_json(str(tmp_path))
    files = {s["file"] for k in doc["knobs"] for s in k["sites"]}
    assert files == {"conf/a.yaml", "conf/typo.yaml"}
    assert (doc["summary"]["files_seen"], doc["summary"]["files_scanned"]) == (3, 2)


def test_project_vocabulary_extension_and_its_errors(tmp_path):
    (tmp_path / "c.yaml").write_text("rollout:\n  rollout_shards: 4\n")
    doc, _ = scan_json(str(tmp_path))
    assert doc["knobs"] == []
    (tmp_path / "pyproject.toml").write_text('[tool.qg-audit]\nextra-knobs = ["rollout_shards"]\n')
    doc, _ = scan_json(str(tmp_path))
    assert [k["name"] for k in doc["knobs"]] == ["rollout.rollout_shards"]
    (tmp_path / "pyproject.toml").write_text('[tool.qg-audit]\nextra-knobs = "rollout_shards"\n')
    proc = run_cli("scan", str(tmp_path))
    assert proc.returncode == 2 and "extra-knobs must be a list of strings" in proc.stderr


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_sarif_and_github_formats_delegate(fmt):
    proc = run_cli("scan", EXAMPLE, "--format", fmt)
    doc, _ = scan_json(EXAMPLE)
    assert proc.returncode == (1 if doc["findings"] else 0), proc.stderr
    if fmt == "sarif":
        assert json.loads(proc.stdout)["version"] == "2.1.0"
    elif doc["findings"]:
        assert proc.stdout.startswith("::")


def test_parallel_cli_matches_serial(tmp_path):
    serial, _ = scan_json("fixtures", "--jobs", "1", cwd=REPO)
    parallel, _ = scan_json("fixtures", "--jobs", "2", cwd=REPO)
    for doc in (serial, parallel):
        doc["summary"].pop("elapsed_s")
    assert serial == parallel


def test_example_findings_name_the_near_miss_with_the_same_parent():
    doc, _ = scan_json(EXAMPLE)
    unread = [f for f in doc["findings"] if f["code"] == "QG101" and f["knob"] == "sampler.num_worker"]
    assert len(unread) == 1 and (unread[0]["file"], unread[0]["line"]) == ("conf/config.yaml", 12)
    # data.num_workers (sampler/data.py:20) is also a near miss by leaf, but not the one meant
    assert "near-miss `sampler.num_workers` at sampler/envs.py:21" in unread[0]["message"]
    assert "its default 1 runs" in unread[0]["message"]


def test_summary_counts_agree_with_their_nouns(tmp_path):
    # one parsed file with one finding, one file that cannot be read as UTF-8 (an error, and its note)
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\n"
                                       "def main(args):\n"
                                       "    return DataLoader(args.ds, num_workers=8, batch_size=args.bs)\n")
    (tmp_path / "bad.py").write_bytes(b"num_workers = 4  # \xff\xfe\n")
    out = run_cli("scan", str(tmp_path), "--no-cache", "--exit-zero", env={"COLUMNS": "200"}).stdout
    line = next(ln for ln in out.splitlines() if " parsed; " in ln)
    assert "; 1 error; 2 findings; " in line, line  # the loader, and QG001 for the unreadable file
    assert line.startswith("1 knob, 1 site "), line

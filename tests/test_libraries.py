"""Installed frameworks read, never imported (auditor.libraries): a real scan of a project
whose framework lies on the scanning interpreter's path (fixtures/libraries/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from auditor.extract import py_catalogue

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "libraries"


def scan(*extra: str, site: bool = True, project: str = "project") -> tuple[int, dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site:
        env["PYTHONPATH"] = str(FIXTURE / "site")
    proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(FIXTURE / project), "--no-cache",
                           "--format", "json", *extra], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def consumes(doc: dict) -> dict[int, dict]:
    return {s["line"]: s["detail"] for k in doc["knobs"] for s in k["sites"] if s["role"] == "consume"}


def test_a_framework_on_the_path_is_read_for_its_backends():
    assert py_catalogue.load().lookup("rollkit.samplers.LocalSampler") is None  # no catalogue entry
    code, doc, _err = scan()
    assert code == 1
    assert doc["summary"]["libraries"] == {"read": {"rollkit": "0.1"}, "absent": ["fwnotinstalled"]}
    found = [(f["code"], f["line"]) for f in doc["findings"]]
    assert ("QG106", 12) in found
    [qg106] = [f for f in doc["findings"] if f["code"] == "QG106"]
    assert "installed rollkit" in qg106["message"] and "ProcessSampler" in qg106["message"]
    pool = consumes(doc)[13]
    assert pool["backend"] == "multiprocessing.Pool" and pool["library"] == "rollkit"
    assert pool["helper_site"] == "rollkit/pools.py:5"


def test_no_libraries_reads_nothing_outside_the_tree():
    code, doc, _err = scan("--no-libraries")
    assert code == 0 and doc["findings"] == []
    assert "libraries" not in doc["summary"] and 13 not in consumes(doc)


def test_python_names_the_environment_read():
    # -I: the named interpreter's own path, without this process's PYTHONPATH: rollkit is absent there
    code, doc, _err = scan("--python", sys.executable)
    assert doc["summary"]["libraries"]["read"] == {}
    assert "rollkit" in doc["summary"]["libraries"]["absent"]
    assert not [f for f in doc["findings"] if f["code"] == "QG106"]


def test_a_python_that_is_no_interpreter_is_a_usage_error(tmp_path):
    bogus = tmp_path / "python"
    bogus.write_text("#!/bin/sh\necho not json\n")
    bogus.chmod(0o755)
    code, _doc, err = scan("--python", str(bogus))
    assert code == 2
    [line] = err.strip().splitlines()
    assert "--python" in line and "--no-libraries" in line


def test_library_facts_are_cached_per_package_and_version_outside_the_project(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "QG_AUDIT_CACHE_SECRET": "k" * 32,
           "PYTHONPATH": str(FIXTURE / "site")}

    def cached_scan(cache: str) -> dict:
        proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(FIXTURE / "project"), "--format",
                               "json", "--cache-dir", str(tmp_path / cache)], capture_output=True, text=True,
                              env=env, cwd=REPO, timeout=120)
        return json.loads(proc.stdout)

    first, second = cached_scan("c1"), cached_scan("c2")  # the second reads rollkit 0.1 from the cache
    [entry] = list((tmp_path / "xdg" / "qg-audit" / "libraries").glob("library-*.bin"))
    assert not list((FIXTURE / "project").glob(".qg-audit*"))  # nothing written into the project
    assert first["knobs"] == second["knobs"] and [f["code"] for f in second["findings"]] == ["QG106"]
    entry.write_bytes(entry.read_bytes()[:-8] + b"tampered")  # a forged entry is a miss, not a crash
    assert [f["code"] for f in cached_scan("c3")["findings"]] == ["QG106"]


def scan_subclasses(*extra: str) -> dict:
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(FIXTURE / "site")}
    proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(FIXTURE / "subclasses"), "--no-cache",
                           "--format", "json", *extra], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    return json.loads(proc.stdout)


def test_a_field_over_an_installed_class_is_unread_when_the_package_never_names_it():
    found = {(f["line"], f["severity"]): f["message"] for f in scan_subclasses()["findings"]
             if f["code"] == "QG101" and f["file"] == "args.py"}
    assert set(found) == {(10, "warning"), (15, "note")}
    assert "num_rollout_workers" in found[(10, "warning")]
    assert "fwnotinstalled" in found[(15, "note")] and "could not search" in found[(15, "note")]


def test_without_libraries_a_field_over_another_package_is_at_most_a_note():
    found = {(f["line"], f["severity"]) for f in scan_subclasses("--no-libraries")["findings"]
             if f["code"] == "QG101" and f["file"] == "args.py"}
    assert found == {(9, "note"), (10, "note"), (15, "note")}


def test_a_config_string_picking_an_installed_registrys_serial_member_is_read_through_reexports():
    # `from envkit import create_env_manager`: the package's __init__ star-imports a subpackage
    # that imports it from the module registering BaseEnvManager as 'base'; the registry's other
    # member, SubprocessEnvManager, lives in a module no project call names
    code, doc, _err = scan(project="registry")
    assert code == 1 and doc["summary"]["libraries"] == {"read": {"envkit": "0.3"}, "absent": []}
    [qg106] = [f for f in doc["findings"] if f["code"] == "QG106" and f["file"].startswith("configs/")]
    assert (qg106["file"], qg106["line"], qg106["severity"]) == ("configs/pong_config.py", 6, "warning")
    assert "BaseEnvManager" in qg106["message"] and "SubprocessEnvManager" in qg106["message"]
    assert "2 of the 2 other configs" in qg106["message"]


def test_an_entry_building_the_serial_member_by_hand_is_read_once_the_framework_is():
    # entry.py names no knob (the passes over the tree skip it); once envkit's registry is read,
    # the file that calls BaseEnvManager( is parsed, and breakout's config, which picks
    # 'subprocess', runs the function that builds BaseEnvManager by hand
    code, doc, _err = scan(project="registry")
    [qg106] = [f for f in doc["findings"] if f["code"] == "QG106" and f["file"] == "entry.py"]
    assert (qg106["line"], qg106["severity"]) == (6, "warning")
    assert "a config that runs train_with_gym_env() picks 'subprocess'" in qg106["message"]
    assert "configs/breakout_config.py" in qg106["message"]


def test_without_libraries_the_installed_registry_is_unknown():
    code, doc, _err = scan("--no-libraries", project="registry")
    assert code == 0 and not [f for f in doc["findings"] if f["code"] == "QG106"]


def test_a_config_key_of_an_installed_settings_class_the_parser_is_built_from_is_read():
    # HfArgumentParser((DataArgs, rollkit.settings.RunArgs)).parse_json_file(...): rollkit names
    # num_samplers (its field), never num_rollout_threads
    code, doc, _err = scan(project="parsed")
    found = {(f["file"], f["line"]): f for f in doc["findings"] if f["code"] == "QG101"}
    assert ("conf/run.json", 3) not in found
    assert found[("conf/run.json", 4)]["severity"] == "warning" and code == 1


def test_without_the_package_such_a_key_is_a_note_that_says_why():
    code, doc, _err = scan(project="parsed", site=False)
    found = {(f["file"], f["line"]): f for f in doc["findings"] if f["code"] == "QG101"}
    assert {k: f["severity"] for k, f in found.items()} == {("conf/run.json", 3): "note", ("conf/run.json", 4): "note"}
    assert "rollkit.settings.RunArgs" in found[("conf/run.json", 4)]["message"] and code == 0

"""The scan cache (auditor/cache.py) and --files, through the real CLI on real trees.

Every check compares a cached run with a ``--no-cache`` run of the same tree: the cache may
only ever change how fast a report comes, never what it says. The run time in the summary
is the one figure that differs between any two runs; it is masked before comparing.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, run_cli

HOUR_AGO = time.time() - 3600


def mask(text: str) -> str:
    text = re.sub(r'"elapsed_s": [0-9.e-]+', '"elapsed_s": X', text)
    return re.sub(r"; [0-9]+\.[0-9]{2} s(\x1b\[0m)?\n", r"; X s\1\n", text)


def project(tmp_path: Path, old: bool = True) -> Path:
    """A copy of the example project; with OLD, every file's mtime an hour back."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "example_project", root, ignore=shutil.ignore_patterns(".qg-audit_cache"))
    for p in root.rglob("*"):  # copytree kept the fixtures' mtimes: set them, old or now
        os.utime(p, (HOUR_AGO, HOUR_AGO) if old else None)
    return root


_AGED = [HOUR_AGO]


def age(root: Path) -> None:
    """Every file and directory an old mtime (not racy), later than the one age() gave before:
    as after a real edit, a directory whose entries changed has a new mtime (the walk's memo
    trusts an unchanged one, as git's untracked cache does)."""
    _AGED[0] += 10
    for p in root.rglob("*"):
        os.utime(p, (_AGED[0], _AGED[0]))


def scan(root: Path, *args: str, cache: Path | None, env: dict | None = None, cwd: Path | None = None):
    flags = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    proc = run_cli("scan", str(root), *flags, *args, env=env, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


def same_as_cold(root: Path, cache: Path, *args: str, env: dict | None = None) -> str:
    """Scan twice through the cache (a store hit or parse, then usually a replay) and once
    without; all three must agree byte for byte but for the run time. Returns the output."""
    cold = scan(root, *args, cache=None, env=env)
    first = scan(root, *args, cache=cache, env=env)
    second = scan(root, *args, cache=cache, env=env)
    assert mask(first.stdout) == mask(cold.stdout)
    assert mask(second.stdout) == mask(cold.stdout)
    assert first.returncode == second.returncode == cold.returncode
    return cold.stdout


def imports_of(root: Path, *args: str, cache: Path) -> set[str]:
    """The auditor modules a scan imported (python -X importtime, a real subprocess)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "auditor", "scan", str(root),
                           "--cache-dir", str(cache), *args], capture_output=True, text=True, env=env, cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return {m.group(1) for m in re.finditer(r"\|\s+(auditor[\w.]*)\s*$", proc.stderr, re.M)}


FORMATS = [("--format", "text"), ("--format", "json"), ("--format", "sarif"), ("--format", "github")]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f[1])
def test_cache_hit_and_replay_give_the_cold_output(tmp_path, fmt):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = scan(root, *fmt, cache=None)
    parsed = scan(root, *fmt, cache=cache)  # empty cache: everything parsed, then stored
    replayed = scan(root, *fmt, cache=cache)
    for replay in cache.glob("replay-*.bin"):
        replay.unlink()
    from_store = scan(root, *fmt, cache=cache)  # no replay record: per-file outcomes from the store
    for proc in (parsed, replayed, from_store):
        assert mask(proc.stdout) == mask(cold.stdout)
        assert proc.returncode == cold.returncode == 1
        assert proc.stderr == ""
    assert "sampler.num_workers" in cold.stdout or fmt[1] in ("sarif", "github")


def test_replay_skips_the_parser_join_and_rules_and_the_store_skips_parsing(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    first = imports_of(root, "--format", "json", cache=cache)
    assert {"auditor.join", "auditor.extract.py_consume", "auditor.lint.base"} <= first
    replay = imports_of(root, "--format", "json", cache=cache)
    assert not replay & {"auditor.join", "auditor.lint.base", "auditor.extract.py_consume", "auditor.extract.cfg_common",
                         "auditor.render.scan_json", "auditor.catalogue"}, replay
    for rec in cache.glob("replay-*.bin"):
        rec.unlink()
    stored = imports_of(root, "--format", "json", cache=cache)
    assert "auditor.join" in stored  # the cross-file steps run again ...
    assert "auditor.extract.py_consume" not in stored  # ... over stored per-file outcomes


def test_the_store_trusts_size_and_mtime_of_an_old_file(tmp_path):
    """What makes a rescan cheap, shown directly: an edit that keeps size and mtime is not seen."""
    root = project(tmp_path)
    cache = tmp_path / "cache"
    before = scan(root, "--format", "json", cache=cache).stdout
    cfg = root / "conf" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("num_workers: 8", "num_workers: 6"))
    os.utime(cfg, (HOUR_AGO, HOUR_AGO))
    assert mask(scan(root, "--format", "json", cache=cache).stdout) == mask(before)
    assert '"effective": 6' in scan(root, "--format", "json", cache=None).stdout


def test_a_recent_file_is_checked_by_content_even_when_size_and_mtime_match(tmp_path):
    root = project(tmp_path, old=False)  # mtimes of now: within RACY_NS of the scan
    cache = tmp_path / "cache"
    same_as_cold(root, cache, "--format", "json")
    cfg = root / "conf" / "config.yaml"
    st = cfg.stat()
    cfg.write_text(cfg.read_text().replace("num_workers: 8", "num_workers: 6"))
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same clock tick, as a fast second edit gets
    out = same_as_cold(root, cache, "--format", "json")
    assert '"effective": 6' in out


def test_edits_additions_deletions_renames_and_touches(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    same_as_cold(root, cache, "--format", "json")
    steps = []

    def edit_value():  # another size: the store parses it again
        cfg = root / "conf" / "config.yaml"
        cfg.write_text(cfg.read_text().replace("num_workers: 8", "num_workers: 12"))

    def add_file():
        (root / "sampler" / "extra.py").write_text(
            "import torch\n\ndef loader(ds, cfg):\n"
            "    return torch.utils.data.DataLoader(ds, num_workers=cfg.get('extra_workers', 3))\n")

    def delete_file():
        (root / "scripts" / "launch.sh").unlink()

    def rename_file():
        (root / "sampler" / "envs.py").rename(root / "sampler" / "vec_envs.py")

    def touch_only():  # a checkout rewrites files unchanged: same digest, reused
        for p in root.rglob("*.py"):
            os.utime(p, (HOUR_AGO + 60, HOUR_AGO + 60))

    for step in (edit_value, add_file, delete_file, rename_file, touch_only):
        step()
        out = same_as_cold(root, cache, "--format", "json")
        steps.append(json.loads(out))
    sites = [{s["file"] for k in doc["knobs"] for s in k["sites"]} for doc in steps]
    assert "sampler/extra.py" in sites[1]
    assert "scripts/launch.sh" not in sites[2]
    assert "sampler/vec_envs.py" in sites[3] and "sampler/envs.py" not in sites[3]
    assert steps[4] == steps[3] | {"summary": steps[4]["summary"]}
    effective = {k["name"]: k["effective"] for k in steps[0]["knobs"]}
    assert effective["data.num_workers"] == 12


def test_a_setting_change_and_a_baseline_change_are_seen(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    same_as_cold(root, cache, "--format", "json")
    py = root / "pyproject.toml"
    py.write_text(py.read_text().replace('extra-knobs = ["shards"]', 'extra-knobs = ["shards", "batch_size"]'))
    out = same_as_cold(root, cache, "--format", "json")
    assert "data.batch_size" in {k["name"] for k in json.loads(out)["knobs"]}
    baseline = tmp_path / "baseline.json"
    run_cli("scan", str(root), "--no-cache", "--write-baseline", str(baseline))
    gated = same_as_cold(root, cache, "--format", "json", "--baseline", str(baseline))
    assert json.loads(gated)["findings"] == []
    baseline.write_text(json.dumps({"schema": "qg-audit.baseline/1", "findings": []}) + "\n")
    regated = same_as_cold(root, cache, "--format", "json", "--baseline", str(baseline))
    assert json.loads(regated)["findings"] != []


def test_a_catalogue_change_starts_a_new_store(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(REPO / "auditor", pkg / "auditor", ignore=shutil.ignore_patterns("__pycache__"))
    root = project(tmp_path)
    (root / "sampler" / "shard.py").write_text("def f(cfg):\n    return cfg.get('rollout_lanes', 2)\n")
    age(root)
    cache = tmp_path / "cache"
    env = {"PYTHONPATH": str(pkg)}

    def run(*flags):
        proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(root), "--format", "json", *flags],
                              capture_output=True, text=True, env=dict(os.environ, **env), cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout)

    def names(doc):
        return {k["name"] for k in doc["knobs"]}

    assert "rollout_lanes" not in names(run("--cache-dir", str(cache)))
    knobs = pkg / "auditor" / "rules" / "knobs.yaml"
    text = knobs.read_text()
    assert "\nnames:\n" in text
    knobs.write_text(text.replace("\nnames:\n", "\nnames:\n  - rollout_lanes\n", 1))
    cached, cold = run("--cache-dir", str(cache)), run("--no-cache")
    assert "rollout_lanes" in names(cold)
    assert cached["knobs"] == cold["knobs"] and cached["findings"] == cold["findings"]


CORRUPTIONS = {
    "garbage": lambda blob: b"not a cache entry at all",
    "empty": lambda blob: b"",
    "truncated": lambda blob: blob[: len(blob) // 2],
    "flipped byte": lambda blob: blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
    "other version": lambda blob: blob.replace(b'"version": "', b'"version": "9', 1),
}


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_corrupt_cache_entry_is_ignored(tmp_path, how):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = same_as_cold(root, cache, "--format", "json")
    entries = sorted(cache.glob("*.bin"))
    assert {p.name.split("-")[0] for p in entries} == {"files", "replay", "walk"}
    for p in entries:
        p.write_bytes(CORRUPTIONS[how](p.read_bytes()))
    proc = scan(root, "--format", "json", cache=cache)
    assert mask(proc.stdout) == mask(cold) and proc.stderr == ""
    assert mask(scan(root, "--format", "json", cache=cache).stdout) == mask(cold)  # rewritten, usable


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_entry_with_a_valid_checksum_cannot_run_code(tmp_path):
    """A cache directory can come with a scanned repository: its pickles must not execute."""
    sys.path.insert(0, str(REPO))
    from auditor import cache as cache_mod

    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = same_as_cold(root, cache, "--format", "json")
    marker = tmp_path / "pwned"
    for p in cache.glob("*.bin"):
        blob = p.read_bytes()
        fields = json.loads(blob[len(cache_mod.MAGIC):blob.index(b"\n", len(cache_mod.MAGIC))])
        payload = pickle.dumps(_Exploit(marker))
        p.write_bytes(cache_mod._header(fields["kind"], fields["key"], payload) + payload)
    proc = scan(root, "--format", "json", cache=cache)
    assert not marker.exists()
    assert mask(proc.stdout) == mask(cold)


def test_racing_scans_on_one_cache_dir_all_give_the_right_output(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = scan(root, "--format", "json", cache=None).stdout
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "auditor", "scan", str(root), "--format", "json", "--cache-dir", str(cache)]
    for round_ in range(3):
        if round_ == 2:  # race on a changed tree as well: a store write against a store read
            (root / "sampler" / "data.py").write_text((root / "sampler" / "data.py").read_text() + "\n# edited\n")
            cold = scan(root, "--format", "json", cache=None).stdout
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for _ in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 1, err
            assert mask(out) == mask(cold)
    assert not list(cache.glob("*.tmp")) and not list(cache.glob(".*.tmp"))
    assert mask(scan(root, "--format", "json", cache=cache).stdout) == mask(cold)


def test_default_cache_dir_is_in_the_project_and_ignored_by_git_and_the_walk(tmp_path):
    root = project(tmp_path)
    unset = {"QG_AUDIT_CACHE_DIR": None}
    first = run_cli("scan", str(root), "--format", "json", env=unset)
    cache = root / ".qg-audit_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list(cache.glob("files-*.bin")) and list(cache.glob("replay-*.bin"))
    for rec in cache.glob("replay-*.bin"):
        rec.unlink()
    second = run_cli("scan", str(root), "--format", "json", env=unset)
    assert mask(second.stdout) == mask(first.stdout)  # files_seen unchanged: the cache is not walked
    shutil.rmtree(cache)
    for flags, env in ((["--no-cache"], unset), ([], {"QG_AUDIT_CACHE_DIR": None, "QG_AUDIT_NO_CACHE": "1"})):
        proc = run_cli("scan", str(root), "--format", "json", *flags, env=env)
        assert proc.returncode == 1 and mask(proc.stdout) == mask(first.stdout)
        assert not cache.exists()


def test_an_unusable_cache_dir_only_costs_speed(tmp_path):
    root = project(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    cold = scan(root, "--format", "json", cache=None)
    for _ in range(2):
        proc = scan(root, "--format", "json", cache=blocker / "cache")
        assert mask(proc.stdout) == mask(cold.stdout) and proc.stderr == ""


# -- --files ------------------------------------------------------------------------------

def findings(out: str) -> list[tuple]:
    return [(f["code"], f["file"], f["line"]) for f in json.loads(out)["findings"]]


def test_files_mode_reports_findings_touching_the_files_cross_file_ones_included(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    full = json.loads(scan(root, "--format", "json", cache=None).stdout)
    proc = run_cli("scan", "--files", "conf/config.yaml", "--format", "json", "--cache-dir", str(cache), cwd=root)
    assert proc.returncode == 1, proc.stderr
    got = findings(proc.stdout)
    want = [(f["code"], f["file"], f["line"]) for f in full["findings"]
            if "conf/config.yaml" in {f["file"], *(r["file"] for r in f["related"])}]
    assert got == want
    assert ("QG103", "sampler/data.py", 20) in got  # found in the code, about the config's value
    assert all(f[1] != "scripts/launch.sh" for f in got)
    knob_files = [{s["file"] for s in k["sites"]} for k in json.loads(proc.stdout)["knobs"]]
    assert knob_files and all("conf/config.yaml" in files for files in knob_files)
    again = run_cli("scan", "--files", "conf/config.yaml", "--format", "json", "--cache-dir", str(cache), cwd=root)
    assert mask(again.stdout) == mask(proc.stdout)


def test_files_mode_with_a_clean_file_exits_0_and_with_root(tmp_path):
    root = project(tmp_path)
    proc = run_cli("scan", "--files", "sampler/__init__.py", "--no-cache", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert findings(proc.stdout) == []
    proc = run_cli("scan", "--root", str(root), "--files", str(root / "scripts" / "launch.sh"), "--no-cache",
                   "--format", "json", cwd=tmp_path)
    assert findings(proc.stdout) == [("QG107", "scripts/launch.sh", 5)]


def test_files_mode_usage_errors(tmp_path):
    root = project(tmp_path)
    outside = run_cli("scan", "--files", str(tmp_path / "elsewhere.py"), "--no-cache", cwd=root)
    assert outside.returncode == 2
    assert "not inside the project" in outside.stderr and len(outside.stderr.splitlines()) == 1
    none = run_cli("scan", "--no-cache", cwd=root)
    assert none.returncode == 2 and "PATH" in none.stderr
    two = run_cli("scan", str(root), str(root), "--no-cache", cwd=root)
    assert two.returncode == 2 and "exactly one PATH" in two.stderr


def test_every_literal_a_site_can_hold_survives_the_store():
    """One value the store could not hold would make its file be parsed at every scan."""
    sys.path.insert(0, str(REPO))
    from auditor import cache as cache_mod
    from auditor.model import FileError, Site

    values = [None, True, 3, 2.5, float("inf"), float("-inf"), -0.0, 10**40, "s", "\udcff\x00", b"b", 1 + 2j,
              (1, "a"), [1, [2]], {"k": {1: 2}}, {(1, 2): "t", None: 0, "\0": 1}, {1, 2}, frozenset({3}), ...,
              NotImplemented, [(), {}, set()]]
    sites = [Site("define", "a.py", 1, 1, "n", value=v, default=v, detail={"v": v}) for v in values]
    for outcome in (("a.py", sites, {"m": [1], "flow": {"calls": [{"args": [1, "x"]}]}}, None, True),
                    ("b.py", [], None, FileError("b.py", 3, "invalid Python: x"), True),
                    ("c.py", [], None, FileError("c.py", None, "binary file"), False)):
        blob = cache_mod._encode(outcome)
        assert type(blob) is bytes and blob.isascii()
        back = cache_mod._decode(outcome[0], blob)
        assert back == outcome
        assert [type(s.value) for s in back[1]] == [type(s.value) for s in outcome[1]]
    assert cache_mod._decode("other.py", cache_mod._encode(("a.py", sites, None, None, True))) is None
    assert cache_mod._encode(("s.py", [], None, None, False)) is None  # a skipped file: no bytes at all
    deep = []
    for _ in range(cache_mod.MAX_DEPTH + 5):
        deep = [deep]
    assert cache_mod._encode(("d.py", [Site("define", "d.py", 1, 1, "n", value=deep)], None, None, True)) is False
    assert cache_mod._encode(("o.py", [Site("define", "o.py", 1, 1, "n", value=object())], None, None, True)) is False


def test_editing_a_gitignore_invalidates_the_replay(tmp_path):
    """The walk depends on the ignore files, which are not walked files themselves: the replay
    walks with the current filters, so a changed ignore rule changes what it compares."""
    root = project(tmp_path)
    cache = tmp_path / "cache"
    (root / ".gitignore").write_text("conf/rollout/\n")
    age(root)
    ignored = same_as_cold(root, cache, "--format", "json")
    assert "conf/rollout/cpu.yaml" not in ignored
    (root / ".gitignore").write_text("# nothing ignored any more\n")
    age(root)
    again = scan(root, "--format", "json", cache=cache)
    assert mask(again.stdout) == mask(scan(root, "--format", "json", cache=None).stdout)
    assert "conf/rollout/cpu.yaml" in again.stdout
    (root / "conf" / ".gitignore").write_text("rollout/\n")  # a new ignore file in a subdirectory
    age(root)
    third = scan(root, "--format", "json", cache=cache)
    assert "conf/rollout/cpu.yaml" not in third.stdout


# -- the flow layer's second pass through the store ------------------------------------------

def flow_project(tmp_path: Path) -> Path:
    root = tmp_path / "flowproj"
    shutil.copytree(FIXTURES / "flow_cache", root, ignore=shutil.ignore_patterns(".qg-audit_cache"))
    age(root)
    return root


def agrees_with_cold(root: Path, cache: Path) -> dict:
    """A scan through the store (the replay records deleted first, so the store answers),
    then a replay, each byte-identical to a --no-cache scan. Returns the cold document."""
    cold = scan(root, "--format", "json", cache=None)
    for rec in cache.glob("replay-*.bin"):
        rec.unlink()
    stored = scan(root, "--format", "json", cache=cache)
    replayed = scan(root, "--format", "json", cache=cache)
    for proc in (stored, replayed):
        assert mask(proc.stdout) == mask(cold.stdout)
        assert proc.returncode == cold.returncode
    return json.loads(cold.stdout)


def site_keys(doc: dict) -> set[tuple[str, str, str]]:
    return {(s["file"], s["role"], k["name"]) for k in doc["knobs"] for s in k["sites"]}


def test_the_flow_pass_choice_follows_edits_through_the_store(tmp_path):
    """The files the second pass picks depend on the whole project: an edit elsewhere can make
    an unchanged skipped file worth parsing (a helper it calls is newly defined; a key it sets
    is newly read), or not any more. The store must never answer for words it was not asked."""
    root = flow_project(tmp_path)
    cache = tmp_path / "cache"
    scan(root, "--format", "json", cache=cache)  # fills the store
    doc = agrees_with_cold(root, cache)
    assert ("app/main.py", "consume", "sizes.rollout_width") in site_keys(doc)  # picked by the helper
    assert ("conf/sizes.yaml", "define", "sizes.rollout_width") in site_keys(doc)  # picked by the key
    assert not any(f == "app/other.py" for f, _, _ in site_keys(doc))
    pools, sizes, main, other = (root / p for p in ("lib/pools.py", "conf/sizes.yaml", "app/main.py", "app/other.py"))

    def define_second_helper():  # app/other.py and conf/more.yaml unchanged, now wanted
        pools.write_text(pools.read_text() + "\n\ndef open_sampler_pool(k=2):\n    return mp.Pool(processes=k)\n")

    def value_in_skipped_config():
        sizes.write_text(sizes.read_text().replace("rollout_width: 6", "rollout_width: 12"))

    def config_starts_setting_a_read_key():
        sizes.write_text(sizes.read_text() + "  sampler_width: 5\n")

    def drop_the_helper_call():
        main.write_text(main.read_text().replace("start_rollout_pool(cfg", "len(cfg"))

    def remove_second_helper():
        pools.write_text(pools.read_text().split("\n\ndef open_sampler_pool")[0] + "\n")

    def rename_and_delete():
        other.rename(root / "app" / "sampler_main.py")
        (root / "conf" / "more.yaml").unlink()

    docs = {}
    for step in (define_second_helper, value_in_skipped_config, config_starts_setting_a_read_key,
                 drop_the_helper_call, remove_second_helper, rename_and_delete):
        step()
        age(root)  # the store trusts size and mtime: each edit changes the size
        docs[step.__name__] = agrees_with_cold(root, cache)
    keys = {name: site_keys(d) for name, d in docs.items()}
    assert ("app/other.py", "consume", "sizes.sampler_width") in keys["define_second_helper"]
    assert ("conf/more.yaml", "define", "sizes.sampler_width") in keys["define_second_helper"]
    effective = {k["name"]: k["effective"] for k in docs["value_in_skipped_config"]["knobs"]}
    assert effective["sizes.rollout_width"] == 12
    assert ("conf/sizes.yaml", "define", "sizes.sampler_width") in keys["config_starts_setting_a_read_key"]
    assert not any(f == "app/main.py" and r == "consume" for f, r, _ in keys["drop_the_helper_call"])
    assert not any(f in ("app/other.py", "conf/more.yaml") for f, _, _ in keys["remove_second_helper"])
    assert keys["rename_and_delete"] == keys["remove_second_helper"]  # the renamed file calls no helper now


def test_the_store_answers_for_the_flow_pass_of_an_unchanged_file(tmp_path):
    """Shown directly, as for the first pass: a skipped file edited without changing its size
    or mtime keeps the second pass's stored verdict and parse; a --no-cache scan sees the edit."""
    root = flow_project(tmp_path)
    cache = tmp_path / "cache"
    before = scan(root, "--format", "json", cache=cache).stdout
    assert "app/main.py" in before
    main = root / "app" / "main.py"
    st = main.stat()
    main.write_text(main.read_text().replace("start_rollout_pool(cfg", "start_rollout_poop(cfg"))
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))
    for rec in cache.glob("replay-*.bin"):
        rec.unlink()
    assert mask(scan(root, "--format", "json", cache=cache).stdout) == mask(before)
    assert '"app/main.py"' not in scan(root, "--format", "json", cache=None).stdout


def test_a_bad_outcome_inside_a_valid_store_is_parsed_again(tmp_path):
    """Each file's outcome is stored on its own inside the store: one that does not decode
    (garbage, another file's, a pickle, a wrongly typed site) is a miss for that file, never
    trusted, even inside an entry whose MAC is right (made here with the suite's secret)."""
    sys.path.insert(0, str(REPO))
    from auditor import cache as cache_mod

    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = same_as_cold(root, cache, "--format", "json")
    [store] = cache.glob("files-*.bin")
    blob = store.read_bytes()
    end = blob.index(b"\n", len(cache_mod.MAGIC))
    fields = json.loads(blob[len(cache_mod.MAGIC):end])
    entries, words, flow, rounds = cache_mod._load_store(blob[end + 1:])
    assert entries, "the store did not load"
    parsed = sorted(rel for rel, e in entries.items() if e[4] is not None)
    assert {"sampler/data.py", "conf/config.yaml", "sampler/envs.py", "sampler/train.py"} <= set(parsed)
    marker = tmp_path / "pwned"
    data_py = json.loads(entries["sampler/data.py"][4])
    data_py[1][0][2] = "7"  # a site's line as text
    bad = {"sampler/data.py": json.dumps(data_py).encode(), "conf/config.yaml": entries["sampler/data.py"][4],
           "sampler/envs.py": pickle.dumps(_Exploit(marker)), "sampler/train.py": b"[" * 100_000 + b"]" * 100_000}
    for rel, value in bad.items():
        entries[rel] = entries[rel][:4] + (value,)
    payload = b"".join(cache_mod._store_parts(entries, words, flow, list(rounds)))
    store.write_bytes(cache_mod._header(fields["kind"], fields["key"], payload) + payload)
    for rec in cache.glob("replay-*.bin"):
        rec.unlink()
    assert mask(scan(root, "--format", "json", cache=cache).stdout) == mask(cold)
    assert not marker.exists()


def test_the_flow_pass_over_many_files_reads_them_in_a_pool_with_the_same_answer(tmp_path):
    """A cold scan of a large tree looks for the wanted words in a process pool
    (auditor.scan._find_words): it must choose exactly the files a serial look chooses."""
    root = flow_project(tmp_path)
    filler = root / "filler"
    filler.mkdir()
    for i in range(300):  # skipped by the prefilter; every 50th calls the helper
        calls = i % 50 == 7
        (filler / f"mod_{i:03}.py").write_text(
            "import yaml\n\n" + ("from lib.pools import start_rollout_pool\n" if calls else "")
            + f"cfg = yaml.safe_load(open('conf/sizes.yaml'))\n\n\ndef f{i}():\n"
            + ("    return start_rollout_pool(cfg['sizes']['rollout_width'])\n" if calls else "    return 0\n"))
    age(root)
    serial = scan(root, "--format", "json", "--jobs", "1", cache=None)
    doc = json.loads(serial.stdout)
    consumers = {s["file"] for k in doc["knobs"] for s in k["sites"] if s["role"] == "consume"}
    assert {f"filler/mod_{i:03}.py" for i in range(7, 300, 50)} <= consumers
    cache = tmp_path / "cache"
    for args, where in ((("--jobs", "2"), None), (("--jobs", "2"), cache), (("--jobs", "2"), cache)):
        for rec in cache.glob("replay-*.bin"):
            rec.unlink()
        assert mask(scan(root, "--format", "json", *args, cache=where).stdout) == mask(serial.stdout)


def test_a_round_is_reused_only_after_rounds_that_were(tmp_path):
    """The store keeps each round of the second pass (words looked for, files chosen) and a
    rescan reuses a round whose words are the same. A later round's words can be the same
    while an earlier round's changed: a config file the first round chose last time (it set
    a key that round looked for) is now left for the second round, which must ask it afresh."""
    root = flow_project(tmp_path)
    pools = root / "lib" / "pools.py"
    pools.write_text(pools.read_text() + "\n\ndef warmup_pool(cfg):\n"
                     "    return mp.Pool(processes=cfg['sizes']['warmup_width'])\n")
    (root / "conf" / "extra.yaml").write_text("sizes:\n  warmup_width: 2\n  rollout_width: 9\n")
    age(root)
    cache = tmp_path / "cache"
    scan(root, "--format", "json", cache=cache)  # fills the store: extra.yaml chosen by warmup_width
    assert ("conf/extra.yaml", "define", "sizes.rollout_width") in site_keys(agrees_with_cold(root, cache))
    pools.write_text(pools.read_text().split("\n\ndef warmup_pool")[0] + "\n")  # the first round's key is gone
    age(root)
    doc = agrees_with_cold(root, cache)
    assert ("conf/extra.yaml", "define", "sizes.rollout_width") in site_keys(doc)  # now chosen by rollout_width
    assert not any(k[2] == "sizes.warmup_width" for k in site_keys(doc))


def test_the_code_fingerprint_covers_rules_behind_a_link(tmp_path):
    """In a source checkout auditor/rules links to the top-level rules/: an edited rule there
    must change the fingerprint, or a rescan answers with the old rule's findings."""
    from auditor.cache import tree_fingerprint

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "qg999.py").write_text("OLD = 1\n")
    package = tmp_path / "auditor"
    package.mkdir()
    (package / "scan.py").write_text("x = 1\n")
    (package / "rules").symlink_to(rules, target_is_directory=True)
    before = tree_fingerprint(package)
    (rules / "qg999.py").write_text("OLD = 2\n")
    assert tree_fingerprint(package) != before

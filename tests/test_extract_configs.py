"""YAML / TOML / JSON extraction, site by site, on the fixture project fixtures/scan_configs."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest

from auditor import vocab
from auditor.extract import ParseError, extractor, json_config, kind_of, toml_config, yaml_config
from auditor.extract.cfg_common import interpolations

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "scan_configs"
V = vocab.load()


def extract(rel: str):
    kind = kind_of(rel)
    return extractor(kind).extract((ROOT / rel).read_text(encoding="utf-8"), rel, V)


def table(result) -> set[tuple]:
    return {(s.role, s.line, s.key, s.value, s.default) for s in result.sites}


def only(result, role: str, key: str):
    found = [s for s in result.sites if s.role == role and s.key == key]
    assert len(found) == 1, (role, key, found)
    return found[0]


# --- YAML ----------------------------------------------------------------------------

def test_yaml_hydra_primary_config_sites():
    r = extract("conf/ppo_trainer.yaml")
    assert table(r) == {
        ("define", 13, "data.dataloader_num_workers", 8, None),
        ("define", 14, "data.val_num_workers", None, None),
        ("read", 14, "data.dataloader_num_workers", None, None),
        ("define", 19, "actor_rollout_ref.rollout.agent.num_workers", None, None),
        ("read", 19, "data.dataloader_num_workers", None, 4),
        ("define", 21, "actor_rollout_ref.ref.log_prob_num_workers", None, None),
        ("read", 21, "actor_rollout_ref.ref.missing_num_workers", None, None),
        ("define", 24, "trainer.nnodes", 1, None),
        ("define", 25, "trainer.n_gpus_per_node", 8, None),
        ("define", 27, "trainer.env.OMP_NUM_THREADS", None, None),
        ("read", 27, "OMP_NUM_THREADS", None, 1),
        ("define", 31, "reward_pool.max_workers", 4, None),
        ("consume", 31, "reward_pool.max_workers", 4, None),
    }
    for s in r.sites:
        assert s.file == "conf/ppo_trainer.yaml" and s.kind == "yaml"
        assert s.detail["match"] == "exact"
    d = only(r, "define", "data.dataloader_num_workers")
    assert (d.column, d.source) == (3, "dataloader_num_workers: 8")


def test_yaml_interpolations_are_references_and_reads():
    r = extract("conf/ppo_trainer.yaml")
    plain = only(r, "define", "data.val_num_workers")
    assert plain.detail["reference"] == "data.dataloader_num_workers"
    selected = only(r, "define", "actor_rollout_ref.rollout.agent.num_workers")
    assert (selected.detail["reference"], selected.detail["ref_default"]) == ("data.dataloader_num_workers", 4)
    reads = [s for s in r.sites if s.role == "read" and s.key == "data.dataloader_num_workers"]
    assert {s.detail["via"] for s in reads} == {"interpolation"}
    assert {s.detail["feeds"] for s in reads} == {"data.val_num_workers",
                                                   "actor_rollout_ref.rollout.agent.num_workers"}
    relative = only(r, "read", "actor_rollout_ref.ref.missing_num_workers")  # ${.missing_num_workers}
    assert relative.column == 27
    env = only(r, "define", "trainer.env.OMP_NUM_THREADS")
    assert env.detail["env"] is True and env.detail["reference"] == "OMP_NUM_THREADS"
    assert only(r, "read", "OMP_NUM_THREADS").detail["resolver"] == "oc.env"


def test_yaml_target_mapping_is_consumed_by_instantiate():
    r = extract("conf/ppo_trainer.yaml")
    consume = only(r, "consume", "reward_pool.max_workers")
    assert consume.detail == {"via": "_target_", "backend": "concurrent.futures.ThreadPoolExecutor",
                              "match": "exact"}


def test_yaml_hydra_defaults_meta():
    meta = extract("conf/ppo_trainer.yaml").meta
    assert meta["hydra_self_index"] == 5
    got = [(e["group"], e["option"], e["package"], e["line"], e["self_position"], e["override"],
            e["optional"], e["absolute"]) for e in meta["hydra_defaults"]]
    assert got == [
        ("actor", "dp_actor", "actor_rollout_ref.actor", 3, "before", False, False, False),
        ("rollout", "vllm", "actor_rollout_ref.rollout", 4, "before", False, False, False),
        ("data", "loader", "data", 5, "before", False, False, True),
        ("hydra/launcher", "basic", "hydra.launcher", 6, "before", True, False, False),
        ("local", None, "local", 7, "before", False, True, False),
        ("debug", "fast", "trainer", 9, "after", False, False, False),
    ]
    assert meta["hydra_defaults"][0]["path"] == "actor/dp_actor"


def test_yaml_defaults_plain_config_entries():
    text = "defaults:\n  - base_trainer\n  - sub/dir/extra@trainer\n  - group: [a, b]\n"
    entries = yaml_config.extract(text, "c.yaml", V).meta["hydra_defaults"]
    assert [(e["config"], e["group"], e["option"], e["package"]) for e in entries] == [
        (True, None, "base_trainer", None),
        (True, "sub/dir", "extra", "trainer"),
        (False, "group", ["a", "b"], "group"),
    ]
    assert extract("conf/data/loader.yaml").meta.get("hydra_defaults") is None


def test_yaml_defaults_option_interpolating_another_choice():
    text = "defaults:\n  - model_engine: dp\n  - actor@actor_rollout_ref.actor: ${model_engine}_actor\n  - x: ${nope}\n"
    entries = yaml_config.extract(text, "ppo.yaml", V).meta["hydra_defaults"]
    assert [(e["option"], e["path"], e.get("option_template")) for e in entries] == [
        ("dp", "model_engine/dp", None),
        ("dp_actor", "actor/dp_actor", "${model_engine}_actor"),
        ("${nope}", "x/${nope}", "${nope}"),
    ]


@pytest.mark.parametrize("key,package,expected", [
    ("tensor_model_parallel_size", "actor_rollout_ref.rollout", "actor_rollout_ref.rollout.tensor_model_parallel_size"),
    ("num_workers", "", "num_workers"),
    ("num_workers", "_global_", "num_workers"),
    ("num_workers", "_global_.data", "data.num_workers"),
    ("a.b", "x.", "x.a.b"),
])
def test_reroot_key(key, package, expected):
    assert yaml_config.reroot_key(key, package) == expected


def test_join_package():
    assert yaml_config.join_package("actor_rollout_ref", "rollout") == "actor_rollout_ref.rollout"
    assert yaml_config.join_package("_global_", "actor_rollout_ref.actor") == "actor_rollout_ref.actor"
    assert yaml_config.join_package("trainer", "_global_.data") == "data"
    assert yaml_config.join_package("trainer", "") == "trainer"


def test_yaml_package_header_and_group_file():
    r = extract("conf/rollout/vllm.yaml")
    assert r.meta["package"] == "_global_.actor_rollout_ref.rollout"
    assert table(r) == {("define", 3, "tensor_model_parallel_size", 2, None),
                        ("define", 4, "data_parallel_size", 1, None)}
    assert table(extract("conf/actor/dp_actor.yaml")) == {("define", 3, "ulysses_sequence_parallel_size", 1, None)}


def test_yaml_anchor_gives_one_site_and_multi_document():
    r = extract("conf/data/loader.yaml")
    assert table(r) == {
        ("define", 3, "common.num_workers", 4, None),  # not again under train (<<) or val (*loader)
        ("define", 10, "envs.num_envs", 16, None),  # eval_num_envs: *n is the same value
        ("define", 15, "eval.n_envs", 2, None),  # second document
        ("define", 16, "eval.vec_env", None, None),
    }
    assert only(r, "define", "eval.vec_env").detail["structured"] == "mapping"
    assert r.meta["documents"] == 2


def test_yaml_alias_of_plain_value_under_knob_is_defined():
    r = yaml_config.extract("base: &n 4\nloader:\n  num_workers: *n\n", "a.yaml", V)
    assert table(r) == {("define", 3, "loader.num_workers", 4, None)}


def test_yaml_generated_files_are_marked():
    r = extract("conf/_generated_ppo_trainer.yaml")
    assert r.meta["generated"] is True
    assert table(r) == {("define", 3, "data.dataloader_num_workers", 8, None),
                        ("define", 6, "actor_rollout_ref.rollout.tensor_model_parallel_size", 2, None)}
    assert all(s.detail["generated"] for s in r.sites)
    header = "# Code generated by tools/gen.py. DO NOT EDIT.\nnum_workers: 2\n"
    assert yaml_config.extract(header, "conf/x.yaml", V).sites[0].detail["generated"] is True
    normal = "# generation length for sampling\nnum_workers: 2\n"
    assert "generated" not in yaml_config.extract(normal, "conf/x.yaml", V).meta


def test_yaml_unknown_tags_compose_not_construct(tmp_path):
    r = extract("tasks/gsm8k_cot.yaml")
    s = only(r, "define", "num_workers")
    assert (s.line, s.value, s.detail["tag"]) == (6, "utils.worker_count", "!function")
    marker = tmp_path / "constructed"
    hostile = (f"x: !!python/object/apply:os.system ['touch {marker}']\n"
               "num_workers: !!python/object/apply:builtins.int ['7']\n")
    r = yaml_config.extract(hostile, "h.yaml", V)
    assert not marker.exists()
    assert only(r, "define", "num_workers").value is None  # a non-scalar: nothing built
    assert only(r, "define", "num_workers").detail["structured"] == "sequence"


def test_yaml_near_match_and_env_list():
    text = "loader:\n  num_worker: 4\nenv:\n  - name: OMP_NUM_THREADS\n    value: \"1\"\n  - name: OTHER\n    value: x\n"
    r = yaml_config.extract(text, "k.yaml", V)
    assert table(r) == {("define", 2, "loader.num_worker", 4, None), ("define", 4, "OMP_NUM_THREADS", "1", None)}
    assert only(r, "define", "loader.num_worker").detail["match"] == "near"
    assert only(r, "define", "OMP_NUM_THREADS").detail["via"] == "env-list"


def test_interpolation_parser():
    assert interpolations("${a.b}") == [{"reference": "a.b", "env": False, "ref_default": None,
                                         "resolver": None, "whole": True}]
    refs = interpolations("${oc.select:x.y,${z.w}}")
    assert [(r["reference"], r["ref_default"]) for r in refs] == [("x.y", None), ("z.w", None)]
    refs = interpolations("run_${div:${data.num_workers},2}_${oc.env:WORLD_SIZE,'1'}")
    assert [(r["reference"], r["env"], r["ref_default"], r["whole"]) for r in refs] == [
        ("data.num_workers", False, None, False), ("WORLD_SIZE", True, 1, False)]
    assert interpolations("${..n_envs}", "a.b.c") == [{"reference": "a.b.n_envs", "env": False,
                                                      "ref_default": None, "resolver": None, "whole": True}]
    assert interpolations("${hydra:runtime.cwd}/out") == []


@pytest.mark.parametrize("text,line", [
    ("a: [1, 2\nb: {\n", 2),
    ("a: 1\n  b: 2\n", 2),
    ("a: *nope\n", 1),
    ("a: 1\na: 2\n", None),  # duplicate keys are legal for compose: no error
])
def test_yaml_invalid_is_one_parse_error_with_line(text, line):
    if line is None:
        yaml_config.extract(text, "d.yaml", V)
        return
    with pytest.raises(ParseError) as err:
        yaml_config.extract(text, "bad.yaml", V)
    assert err.value.line == line
    assert err.value.message.startswith("invalid YAML: ")
    assert "\n" not in err.value.message


def test_yaml_alias_bomb_file_is_cheap(tmp_path):
    """Billion laughs: 9 levels of 9 aliases = 9**9 leaves if expanded; must stay small."""
    lines = ['lol0: &lol0 [num_workers, "lol"]']
    for i in range(1, 10):
        lines.append(f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 9) + "]")
    lines.append("loader:\n  num_workers: *lol9")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    r = yaml_config.extract(bomb.read_text(), "bomb.yaml", V)
    spent = time.process_time() - t0
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert table(r) == {("define", 12, "loader.num_workers", None, None)}
    assert any("alias bomb" in w for w in r.meta["warnings"])
    assert grown_kb < 50_000 and spent < 30  # CPU seconds, generous: expanding needs ~10**9 nodes


@pytest.mark.parametrize("text,line", [
    ("[" * 100_000 + "]" * 100_000, 1),  # libyaml's C composer would overflow the C stack
    ("x: 1\ny: " + "{a: " * 400 + "1" + "}" * 400 + "\n", 2),
    ("".join(" " * i + "a:\n" for i in range(400)), 301),
    ("- " * 5000 + "1\n", 1),
], ids=["flow-100k", "flow-map-400", "block-400", "seq-5000"])
def test_yaml_deep_nesting_is_a_parse_error_not_a_crash(text, line):
    with pytest.raises(ParseError) as err:
        yaml_config.extract(text, "deep.yaml", V)
    assert "levels deep" in err.value.message and err.value.line == line


def test_yaml_moderate_nesting_is_fine():
    text = "".join(" " * i + "a:\n" for i in range(200)) + " " * 200 + "num_workers: 1\n"
    assert [s.value for s in yaml_config.extract(text, "ok.yaml", V).sites] == [1]


def test_toml_and_json_deep_nesting_are_parse_errors():
    with pytest.raises(ParseError):
        toml_config.extract("a = " + "[" * 5000 + "]" * 5000, "deep.toml", V)
    with pytest.raises(ParseError):
        json_config.extract('{"num_workers": ' + "[" * 100_000 + "]" * 100_000 + "}", "deep.json", V)


def test_yaml_cyclic_alias_terminates():
    r = yaml_config.extract("loop: &l [*l]\nn_envs: 3\n", "c.yaml", V)
    assert table(r) == {("define", 2, "n_envs", 3, None)}
    assert any("cyclic" in w for w in r.meta["warnings"])


# --- TOML ----------------------------------------------------------------------------

def test_toml_sites_with_locator():
    r = extract("configs/train.toml")
    assert table(r) == {
        ("define", 4, "run.n_envs", 8, None),
        ("define", 5, "run.vec_env", "subproc", None),
        ("define", 8, "run.loader.num_workers", 2, None),  # not the text inside the """ string
        ("define", 14, "sweep.0.n_envs", 4, None),
        ("define", 17, "sweep.1.n_envs", 16, None),
        ("define", 18, "sweep.1.resources.num_cpus", 2, None),
        ("define", 18, "sweep.1.resources.num_gpus", 0.5, None),
    }
    s = only(r, "define", "sweep.1.resources.num_gpus")
    assert (s.column, s.kind, s.detail["match"]) == (29, "toml", "exact")


def test_toml_pyproject_settings_table_is_not_knobs():
    assert table(extract("pyproject.toml")) == {("define", 10, "tool.example.train.num_workers", 2, None)}
    settings = '[tool.qg-audit]\nnum_workers = 1\n[tool."qg-audit".x]\nn_envs = 2\n'
    assert toml_config.extract(settings, "pyproject.toml", V).sites == []
    assert toml_config.extract(settings, "sub/pyproject.toml", V).sites == []
    r = toml_config.extract("[tool.qg-audit]\nnum_workers = 1\n", "sub/other.toml", V)
    assert table(r) == {("define", 2, "tool.qg-audit.num_workers", 1, None)}  # only pyproject is special


def test_toml_dotted_and_quoted_keys():
    text = 'a.loader."num_workers" = 3\n[x."y.z"]\nnum_threads = 2\n'
    r = toml_config.extract(text, "k.toml", V)
    assert table(r) == {("define", 1, "a.loader.num_workers", 3, None), ("define", 3, "x.y.z.num_threads", 2, None)}


@pytest.mark.parametrize("text,line", [("a = 1\nb = \n", 2), ("[x]\n[x]\n", 2), ('n = "open\n', 1)])
def test_toml_invalid_is_one_parse_error_with_line(text, line):
    with pytest.raises(ParseError) as err:
        toml_config.extract(text, "bad.toml", V)
    assert err.value.line == line and err.value.message.startswith("invalid TOML: ")


# --- JSON ----------------------------------------------------------------------------

def test_json_sites_with_positions():
    r = extract("configs/ds_config.json")
    assert table(r) == {
        ("define", 6, "zero_optimization.num_threads", 4, None),
        ("define", 8, "aio.thread_count", 1, None),
        ("define", 9, "env.0.OMP_NUM_THREADS", "2", None),
    }
    assert [(s.column, s.detail["match"]) for s in r.sites] == [(5, "exact"), (11, "exact"), (12, "exact")]  # thread_count: a count and a unit


def test_json_structured_values():
    r = json_config.extract('{"vec_env": {"cls": "subproc"}, "nested": [{"n_envs": [1, 2]}]}', "s.json", V)
    assert table(r) == {("define", 1, "vec_env", None, None), ("define", 1, "nested.0.n_envs", None, None)}
    assert [s.column for s in r.sites] == [2, 45]


@pytest.mark.parametrize("text,line", [('{"a": 1,\n "b": }', 2), ('{"a": 1} x', 1), ("", 1), ("{\n\n'x': 1}", 3)])
def test_json_invalid_is_one_parse_error_with_line(text, line):
    with pytest.raises(ParseError) as err:
        json_config.extract(text, "bad.json", V)
    assert err.value.line == line and err.value.message.startswith("invalid JSON: ")


# ---- INI ----------------------------------------------------------------------------------------

def test_ini_sections_keys_and_typed_values():
    from auditor.extract import ini_config

    text = ("; a pufferlib-style config\n[base]\nenv_name = car-racing\n\n[vec]\nnum_envs = 48\n"
            "num_workers = auto   ; resolved in code\nbackend: Multiprocessing\n\n[train]\n"
            "batch_size = 16384\nnum_workers = 24\n  continued line\n")
    r = ini_config.extract(text, "conf/box2d.ini", V)
    assert [(s.line, s.column, s.key, s.value) for s in r.sites] == [
        (6, 1, "vec.num_envs", 48), (7, 1, "vec.num_workers", "auto"), (12, 1, "train.num_workers", 24)]
    assert r.meta["values"]["train.batch_size"] == (11, 1, 16384)
    assert r.meta["values"]["vec.backend"] == (8, 1, "Multiprocessing")
    assert all(s.kind == "ini" for s in r.sites)


def test_ini_garbage_line_is_one_parse_error_with_line():
    from auditor.extract import ini_config

    with pytest.raises(ParseError) as info:
        ini_config.extract("[vec]\nnum_envs = 4\nthis is not ini\n", "x.ini", V)
    assert info.value.line == 3 and "invalid INI" in info.value.message


def test_json_data_mapping_is_not_settings():
    """A tokenizer's vocabulary maps words to ids ("threads": 28386): thousands of keys in one
    object are data, and none of them is a setting; the file's small objects still are."""
    vocab = {f"w{i}": i for i in range(json_config.DATA_MAPPING)} | {"threads": 28386, "_workers": 44657}
    text = json.dumps({"model": {"vocab": vocab}, "trainer": {"num_workers": 4}})
    r = json_config.extract(text, "tokenizer.json", V)
    assert [s.key for s in r.sites] == ["trainer.num_workers"]


def test_a_section_named_like_a_switch_is_no_switch():
    text = "trainer:\n  distributed_training:\n    backend: nccl\n  use_multiprocessing: true\n"
    r = yaml_config.extract(text, "conf.yaml", V)
    assert table(r) == {("define", 4, "trainer.use_multiprocessing", True, None)}

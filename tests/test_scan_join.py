"""The join: real files in tmp_path -> the real scan pipeline -> knobs, effective value, why."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from auditor import join, scan
from conftest import FIXTURES


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dedent(text).lstrip("\n"))
    return tmp_path


def knobs_of(root: Path) -> dict:
    result = join.join(scan.scan(root, jobs=1))
    assert result.errors == []
    return {k.name: k for k in result.knobs}


def chain(knob) -> list[tuple]:
    return [(s.role, s.file, s.line) for s in knob.sites]


def test_example_project_journeys():
    knobs = knobs_of(FIXTURES / "example_project")
    k = knobs["data.num_workers"]
    assert chain(k) == [("define", "conf/config.yaml", 7), ("read", "sampler/data.py", 20),
                        ("override", "sampler/data.py", 22), ("consume", "sampler/data.py", 23)]
    assert k.effective == 8
    assert k.why == ("8 from conf/config.yaml:7; capped by os.cpu_count() at sampler/data.py:22; "
                     "consumed by DataLoader at sampler/data.py:23")
    n = knobs["sampler.n_envs"]
    assert n.effective == 32
    assert n.why.startswith("32 from scripts/launch.sh:9 (via $N_ENVS), over 16 at conf/config.yaml:11; "
                            "consumed by SyncVectorEnv (serial) at sampler/envs.py:15")
    # the misspelt YAML key is its own knob; the key the code reads runs on its default
    assert knobs["sampler.num_worker"].sites[0].detail["match"] == "near"
    w = knobs["sampler.num_workers"]
    assert w.effective == 1 and chain(w) == [("read", "sampler/envs.py", 21), ("consume", "sampler/envs.py", 22)]
    assert "no scanned config or script sets it" in w.why
    # ${oc.env:OMP_NUM_THREADS,4} resolves through the launch script's export
    t = knobs["trainer.torch_threads"]
    assert t.effective == 1 and "via ${OMP_NUM_THREADS}" in t.why and "set_num_threads" in t.why
    assert knobs["OMP_NUM_THREADS"].effective == 1
    # [tool.qg-audit] extra-knobs = ["shards"] in the example's pyproject.toml
    assert knobs["sampler.shards"].effective == 2


def test_hydra_package_reroots_included_keys(tmp_path):
    root = project(tmp_path, {
        "conf/ppo.yaml": """
            defaults:
              - rollout@actor_rollout_ref.rollout: vllm
              - data: loader
              - _self_
            trainer:
              nnodes: 1
        """,
        "conf/rollout/vllm.yaml": "tensor_model_parallel_size: 2\n",
        "conf/data/loader.yaml": "dataloader_num_workers: 8\n",
        "train.py": """
            def fit(config):
                tp = config.actor_rollout_ref.rollout.tensor_model_parallel_size
                return tp, config.data.get("dataloader_num_workers", 1)
        """,
    })
    knobs = knobs_of(root)
    tp = knobs["actor_rollout_ref.rollout.tensor_model_parallel_size"]
    assert chain(tp) == [("define", "conf/rollout/vllm.yaml", 1), ("read", "train.py", 2)]
    assert tp.sites[0].detail["key_in_file"] == "tensor_model_parallel_size"
    assert tp.effective == 2
    dl = knobs["data.dataloader_num_workers"]  # group "data" is the default package
    assert chain(dl) == [("define", "conf/data/loader.yaml", 1), ("read", "train.py", 3)]
    assert dl.effective == 8
    assert "tensor_model_parallel_size" not in knobs


def test_hydra_option_named_with_its_extension(tmp_path):
    """`- verltool@actor_rollout_ref.agent: agent.yaml` (verl-tool): Hydra takes the option with
    its extension, so its keys sit under the entry's package like any other option's."""
    root = project(tmp_path, {
        "conf/ppo.yaml": """
            defaults:
              - verltool@actor_rollout_ref.agent: agent.yaml
              - _self_
        """,
        "conf/verltool/agent.yaml": "max_concurrent_trajectories: 1024\n",
        "train.py": """
            def fit(config):
                return config.actor_rollout_ref.agent.max_concurrent_trajectories
        """,
    })
    knob = knobs_of(root)["actor_rollout_ref.agent.max_concurrent_trajectories"]
    assert chain(knob) == [("define", "conf/verltool/agent.yaml", 1), ("read", "train.py", 2)]
    assert knob.effective == 1024


# a primary config choosing env/atari.yaml of the `env` group, and setting no knob itself
ENV_GROUP_PRIMARY = """
    defaults:
      - env: atari
      - _self_
    seed: 1
"""


def test_hydra_primary_without_knobs_still_places_its_groups(tmp_path):
    # the primary sets no parallelism key, so the keyword prefilter alone would skip it
    root = project(tmp_path, {
        "conf/config.yaml": ENV_GROUP_PRIMARY,
        "conf/env/atari.yaml": "num_envs: 16\n",
        "train.py": """
            def fit(cfg):
                return cfg.env.num_envs
        """,
    })
    knobs = knobs_of(root)
    assert chain(knobs["env.num_envs"]) == [("define", "conf/env/atari.yaml", 1), ("read", "train.py", 2)]
    assert "num_envs" not in knobs


def test_a_group_option_nobody_includes_sits_in_its_group(tmp_path):
    # env/dummy.yaml is chosen on the command line (`env=dummy`), never by a defaults list: it
    # and the default it pulls in are still the `env` group, as env/atari.yaml is
    root = project(tmp_path, {
        "conf/config.yaml": ENV_GROUP_PRIMARY,
        "conf/env/default.yaml": "num_envs: 4\nuse_multiprocessing: false\n",
        "conf/env/atari.yaml": "defaults:\n  - default\n  - _self_\nnum_envs: 16\n",
        "conf/env/dummy.yaml": "defaults:\n  - default\n  - _self_\nnum_envs: 1\n",
        "train.py": """
            def fit(cfg):
                return cfg.env.num_envs, cfg.env.use_multiprocessing
        """,
    })
    knobs = knobs_of(root)
    assert ("define", "conf/env/default.yaml", 2) in chain(knobs["env.use_multiprocessing"])
    assert ("define", "conf/env/dummy.yaml", 4) in chain(knobs["env.num_envs"])
    assert "use_multiprocessing" not in knobs and "num_envs" not in knobs


def test_generated_config_does_not_double_count(tmp_path):
    root = project(tmp_path, {
        "conf/ppo.yaml": "data:\n  dataloader_num_workers: 8\n",
        "conf/_generated_ppo.yaml": "# auto-generated, do not edit\ndata:\n  dataloader_num_workers: 8\n",
        "conf/_generated_only.yaml": "# generated\neval:\n  num_workers: 2\n",
    })
    knobs = knobs_of(root)
    assert chain(knobs["data.dataloader_num_workers"]) == [("define", "conf/ppo.yaml", 2)]
    # a key only a generated file defines keeps that definition
    assert chain(knobs["eval.num_workers"]) == [("define", "conf/_generated_only.yaml", 3)]


def test_suffix_join_by_leaf_when_unambiguous_only(tmp_path):
    root = project(tmp_path, {
        "conf/a.yaml": "rollout:\n  num_envs: 8\ndata:\n  num_workers: 4\neval:\n  num_workers: 2\n",
        "run.py": """
            def go(section, handle):
                envs = handle.num_envs
                workers = section.num_workers
                return envs, workers
        """,
    })
    knobs = knobs_of(root)
    assert ("read", "run.py", 2) in chain(knobs["rollout.num_envs"])  # one num_envs defined: joined
    assert knobs["rollout.num_envs"].sites[1].detail["joined_from"] == "num_envs"
    # two num_workers are defined: the opaque read stays its own knob, unknown
    assert chain(knobs["num_workers"]) == [("read", "run.py", 3)]
    assert knobs["num_workers"].effective is None
    assert chain(knobs["data.num_workers"]) == [("define", "conf/a.yaml", 4)]


def test_flag_dest_and_env_var_spellings(tmp_path):
    root = project(tmp_path, {
        "train.py": """
            import argparse
            import os

            p = argparse.ArgumentParser()
            p.add_argument("-w", "--rollout-workers", dest="num_workers", type=int, default=2)
            threads = os.environ.get("OMP_NUM_THREADS", "4")
        """,
        "run.sh": """
            #!/bin/bash
            export OMP_NUM_THREADS=1
            python train.py --rollout-workers 6
        """,
    })
    knobs = knobs_of(root)
    nw = knobs["num_workers"]
    assert chain(nw) == [("define", "run.sh", 3), ("define", "train.py", 5)]
    assert nw.effective == 6 and nw.why == "6 from run.sh:3, over 2 at train.py:5"
    assert nw.sites[0].detail["key_in_file"] == "rollout_workers"  # the flag joined its dest
    omp = knobs["OMP_NUM_THREADS"]
    assert chain(omp) == [("define", "run.sh", 2), ("read", "train.py", 6)]
    assert omp.effective == 1


def test_conditional_override_makes_value_unknown(tmp_path):
    root = project(tmp_path, {
        "conf.yaml": "loader:\n  num_workers: 8\n",
        "load.py": """
            from torch.utils.data import DataLoader

            def build(cfg, ds, dataset_type):
                if dataset_type == "iterable":
                    cfg.loader.num_workers = 0
                return DataLoader(ds, num_workers=cfg.loader.num_workers)
        """,
    })
    k = knobs_of(root)["loader.num_workers"]
    assert [s.role for s in k.sites] == ["define", "read", "override", "consume"]
    assert k.effective is None
    assert "8 from conf.yaml:2; or 0 at load.py:5 when dataset_type == 'iterable'" in k.why.replace('"', "'")


def test_disagreeing_configs_say_so(tmp_path):
    root = project(tmp_path, {"a.yaml": "r:\n  n_envs: 4\n", "b.toml": "[r]\nn_envs = 16\n"})
    k = knobs_of(root)["r.n_envs"]
    assert k.effective is None and k.why.startswith("one of 4, 16: config files disagree")


def test_default_none_then_fallback_class(tmp_path):
    # stable-baselines3's make_vec_env idiom: vec_env_cls=None -> DummyVecEnv
    root = project(tmp_path, {"env_util.py": """
        from stable_baselines3.common.vec_env import DummyVecEnv

        def make_vec_env(env_id, n_envs=1, vec_env_cls=None):
            if vec_env_cls is None:
                vec_env_cls = DummyVecEnv
            return vec_env_cls([lambda: env_id for _ in range(n_envs)])
    """})
    knobs = knobs_of(root)
    assert knobs["n_envs"].effective == 1
    v = knobs["vec_env_cls"]
    assert v.effective == "DummyVecEnv"
    assert v.why.startswith("None: the default at env_util.py:3") and "so DummyVecEnv at env_util.py:5" in v.why


def test_condition_holds():
    holds = join.condition_holds
    assert holds("x is None", {"x"}, None) is True
    assert holds("x is None", {"x"}, 3) is False
    assert holds("not cfg.x", {"x"}, 0) is True
    assert holds("x == 'sync'", {"x"}, "sync") is True
    assert holds("y is None", {"x"}, None) is None
    assert holds("x >", {"x"}, None) is None

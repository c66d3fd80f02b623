"""The Python extractor on real files: the fixture project fixtures/scan_python/, inline
snippets for edge cases, and (marked network + slow) real packages from PyPI.

Lines are located by the snippet they contain, so each assertion checks the exact line of
the site against the file itself rather than a hard-coded number.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from auditor import vocab as vocab_mod
from auditor.extract import ParseError, kind_of, extractor
from auditor.extract import py_catalogue, python_code
from auditor.model import ROLES

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "scan_python"
VOCAB = vocab_mod.load()


def extract_file(rel: str):
    return python_code.extract((ROOT / rel).read_text(encoding="utf-8"), rel, VOCAB)


def line_of(rel: str, snippet: str) -> int:
    hits = [i for i, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1) if snippet in line]
    assert len(hits) == 1, f"snippet {snippet!r} found {len(hits)} times in {rel}"
    return hits[0]


def sites_at(rel: str, snippet: str, role: str | None = None, key: str | None = None):
    result = extract_file(rel)
    line = line_of(rel, snippet)
    found = [s for s in result.sites if s.line == line and (role is None or s.role == role)
             and (key is None or s.key == key)]
    for s in found:
        assert s.file == rel
        assert s.kind == "python"
    return found


def one(rel: str, snippet: str, role: str, key: str | None = None):
    found = sites_at(rel, snippet, role, key)
    assert len(found) == 1, f"expected one {role} site for {key or 'any key'} at {snippet!r}, got {found}"
    return found[0]


def snippet_sites(code: str, path: str = "snippet.py"):
    return python_code.extract(code, path, VOCAB).sites


# ---- argparse ---------------------------------------------------------------------------------

TRAIN = "rlproj/train.py"


def test_argparse_hyphenated_flag_becomes_dest():
    s = one(TRAIN, '"--num-workers", type=int, default=4', "define")
    assert (s.key, s.value) == ("num_workers", 4)
    assert s.detail["via"] == "argparse"
    assert s.detail["flags"] == ["--num-workers"]
    assert s.detail["type"] == "int"
    assert s.column == 5


def test_argparse_dotted_dest_and_alternate_flags():
    s = one(TRAIN, '"--actor.num_nodes", "--actor.nnodes"', "define")
    assert (s.key, s.value) == ("actor.num_nodes", 1)
    assert s.detail["flags"] == ["--actor.num_nodes", "--actor.nnodes"]
    assert s.detail["match"] == "exact"  # matched through --actor.nnodes


def test_argparse_explicit_dest():
    s = one(TRAIN, 'dest="n_jobs"', "define")
    assert (s.key, s.value) == ("n_jobs", 2)
    assert s.detail["flags"] == ["-j", "--jobs"]


def test_argparse_choices_kept_for_serial_backend_rule():
    s = one(TRAIN, '"--vec-env", choices=', "define")
    assert (s.key, s.value) == ("vec_env", "dummy")
    assert s.detail["choices"] == ["dummy", "subproc"]


def test_argparse_store_true_defaults_false():
    s = one(TRAIN, '"--serial-mode"', "define")
    assert (s.key, s.value) == ("serial_mode", False)
    assert s.detail["default_given"] is False


def test_argparse_set_defaults():
    s = one(TRAIN, "parser.set_defaults(num_envs=16)", "define")
    assert (s.key, s.value) == ("num_envs", 16)
    assert s.detail["set_defaults"] is True


def test_argparse_non_knob_flag_makes_no_site():
    assert sites_at(TRAIN, '"--lr", type=float') == []


def test_parse_known_args_is_noted():
    result = extract_file(TRAIN)
    assert result.meta["parse_known_args"] == line_of(TRAIN, "parse_known_args()")
    assert all(s.detail["parse_known_args"] for s in result.sites if s.detail.get("via") == "argparse")


def test_parse_args_only_is_not_noted():
    sites = snippet_sites("import argparse\np = argparse.ArgumentParser()\np.add_argument('--nproc', default=2)\n"
                          "a = p.parse_args()\n")
    assert [s.key for s in sites] == ["nproc"]
    assert "parse_known_args" not in sites[0].detail


def test_library_added_flags_and_the_calls_that_read_them():
    """`deepspeed.add_config_arguments(parser)` defines --deepspeed_config (rules/consumers.yaml
    flag_adders); `deepspeed.initialize(args=args)` and `args.deepspeed_config` read it; a reader
    given no namespace is a file fact, not a read."""
    code = ("import argparse, deepspeed\n"
            "from deepspeed import initialize as ds_init\n"
            "def main():\n"
            "    p = deepspeed.add_config_arguments(argparse.ArgumentParser())\n"
            "    args = p.parse_args()\n"
            "    deepspeed.initialize(args=args, model=m)\n"
            "    ds_init(args, m)\n"
            "    deepspeed.initialize(args=None, model=m, config=c)\n"
            "    deepspeed.initialize(model=m, config=c)\n"
            "    cfg = args.deepspeed_config\n")
    result = python_code.extract(code, "train.py", VOCAB)
    defines = [s for s in result.sites if s.role == "define"]
    assert [(s.key, s.line, s.detail["added_by"], s.detail["via"]) for s in defines] == [
        ("deepspeed_config", 4, "deepspeed.add_config_arguments", "argparse")]
    reads = sorted((s.line, s.detail.get("via")) for s in result.sites if s.role == "read" and s.key.endswith("deepspeed_config"))
    assert reads == [(6, "namespace"), (7, "namespace"), (10, "attribute")]
    assert [(c["line"], c["call"]) for c in result.meta["namespace_unread"]] == [
        (8, "deepspeed.initialize"), (9, "deepspeed.initialize")]


def test_absl_flags_are_command_line_flags():
    """`flags.DEFINE_integer("num_actors", 4, ...)` defines --num_actors as a parser flag does
    (a knob by name, or by a help text that counts workers); `FLAGS.num_envs` and the holder's
    `NUM_ACTORS.value` read them; a step count or a float is no knob."""
    code = ("from absl import app, flags\n"
            "import tensorflow as tf\n"
            "FLAGS = flags.FLAGS\n"
            "NUM_ACTORS = flags.DEFINE_integer('num_actors', 4, 'Number of actors.')\n"
            "flags.DEFINE_integer(name='num_envs', default=8, help='Envs per actor.')\n"
            "flags.DEFINE_integer('pool', 2, 'Number of worker processes.')\n"
            "flags.DEFINE_integer('num_steps', 100, 'Number of steps.')\n"
            "flags.DEFINE_float('pool_frac', 0.5, 'Number of worker processes, as a fraction.')\n"
            "tf.compat.v1.flags.DEFINE_integer('num_workers', 2, 'Loader workers.')\n"
            "def main(argv):\n"
            "    start(NUM_ACTORS.value, FLAGS.num_envs, FLAGS.pool)\n")
    result = python_code.extract(code, "run.py", VOCAB)
    defines = {s.key: (s.line, s.value, s.detail["via"], s.detail["parser"], bool(s.detail.get("counts_by_help")))
               for s in result.sites if s.role == "define"}
    assert defines == {"num_actors": (4, 4, "argparse", "absl", False), "num_envs": (5, 8, "argparse", "absl", False),
                       "pool": (6, 2, "argparse", "absl", True), "num_workers": (9, 2, "argparse", "absl", False)}
    reads = sorted((s.key, s.detail.get("holder", False)) for s in result.sites if s.role == "read")
    assert reads == [("num_actors", True), ("num_envs", False), ("pool", False)]


# ---- typed configuration ----------------------------------------------------------------------

CONFIG = "rlproj/config.py"


def test_dataclass_defaults():
    s = one(CONFIG, "dataloader_num_workers: int = 8", "define")
    assert (s.key, s.value) == ("dataloader_num_workers", 8)
    assert s.detail == {**s.detail, "via": "dataclass", "owner": "DataConfig"}
    s = one(CONFIG, "prefetch_threads: int = field(default=2)", "define")
    assert s.value == 2
    s = one(CONFIG, "num_envs: int = field(default_factory", "define")
    assert s.value is None and s.detail["factory"] is True and s.detail["expr"] == "lambda: 4"
    s = one(CONFIG, "world_size: int", "define")
    assert s.value is None and s.detail["required"] is True
    assert sites_at(CONFIG, "batch_size: int = 32") == []


def test_attrs_default():
    s = one(CONFIG, "num_rollout_workers = attr.ib(default=4)", "define")
    assert (s.key, s.value, s.detail["via"], s.detail["owner"]) == ("num_rollout_workers", 4, "attrs", "RolloutConfig")


def test_pydantic_defaults():
    s = one(CONFIG, "tensor_parallel_size: int = Field(2)", "define")
    assert (s.value, s.detail["via"]) == (2, "pydantic")
    assert one(CONFIG, "max_workers: int = Field(default=16", "define").value == 16
    assert one(CONFIG, "num_gpus: int = 1", "define").value == 1


def test_plain_class_attribute():
    s = one(CONFIG, "n_jobs = 3", "define")
    assert (s.key, s.value, s.detail["via"], s.detail["owner"]) == ("n_jobs", 3, "class", "Plain")


# ---- reads ------------------------------------------------------------------------------------

DATA = "rlproj/data.py"
ENVS = "rlproj/envs.py"
POOLS = "rlproj/pools.py"


def test_parameter_default_is_a_read():
    s = one(ENVS, "def gym_envs(cfg, num_envs=1):", "read")
    assert (s.key, s.default, s.detail["via"], s.detail["function"]) == ("num_envs", 1, "param", "gym_envs")


def test_get_with_default_keeps_dotted_path_without_handle():
    s = one(DATA, 'config.data.get("dataloader_num_workers", 8)', "read")
    assert (s.key, s.default, s.detail["via"], s.detail["root"]) == ("data.dataloader_num_workers", 8, "get", "config")
    assert s.source == 'num_workers = config.data.get("dataloader_num_workers", 8)'


def test_subscript_read():
    s = one(DATA, 'StatefulDataLoader(dataset, num_workers=config.data["dataloader_num_workers"])', "read")
    assert (s.key, s.detail["via"]) == ("data.dataloader_num_workers", "subscript")


def test_attribute_chain_through_self_config():
    s = one(DATA, "tp = self.cfg.actor_rollout_ref.rollout.tensor_model_parallel_size", "read")
    assert s.key == "actor_rollout_ref.rollout.tensor_model_parallel_size"
    assert s.detail["root"] == "self.cfg"
    s = one(DATA, "self.num_workers = cfg.rollout.num_workers", "read")
    assert s.key == "rollout.num_workers"


def test_getattr_and_pop_reads():
    s = one(DATA, 'getattr(self.cfg, "num_workers", 2)', "read")
    assert (s.key, s.default, s.detail["via"]) == ("num_workers", 2, "getattr")
    s = one(DATA, 'kwargs.pop("num_procs", 1)', "read")
    assert (s.key, s.default, s.detail["via"]) == ("num_procs", 1, "pop")


def test_environment_reads():
    s = one(DATA, 'os.environ.get("OMP_NUM_THREADS", "4")', "read")
    assert (s.key, s.default, s.detail["via"]) == ("OMP_NUM_THREADS", "4", "environ")
    s = one(DATA, 'os.getenv("WORLD_SIZE")', "read")
    assert (s.key, s.default) == ("WORLD_SIZE", None)
    s = one(DATA, 'os.environ["CUDA_VISIBLE_DEVICES"]', "read")
    assert s.key == "CUDA_VISIBLE_DEVICES"


def test_near_miss_read_is_marked_near():
    s = one(DATA, "return cfg.num_worker", "read")
    assert (s.key, s.detail["match"]) == ("num_worker", "near")


def test_dict_literal_define():
    s = one(DATA, 'kwargs = {"num_workers": 2, "pin_memory": True}', "define")
    assert (s.key, s.value, s.detail["via"]) == ("num_workers", 2, "dict")


# ---- overrides --------------------------------------------------------------------------------

def test_conditional_literal_override_keeps_the_knob_key():
    s = one(DATA, "        num_workers = 0", "override")
    assert (s.key, s.value) == ("data.dataloader_num_workers", 0)
    assert s.detail["how"] == "literal"
    assert s.detail["condition"] == 'dataset_type == "iterable"'
    assert s.detail["target"] == "num_workers"


def test_cpu_count_cap_override():
    s = one(DATA, "num_workers = min(num_workers, os.cpu_count())", "override")
    assert (s.key, s.value, s.detail["how"], s.detail["cap"]) == ("data.dataloader_num_workers", None, "min",
                                                                   "os.cpu_count()")
    assert s.detail["cpu_count"] is True
    assert "condition" not in s.detail


def test_attribute_override_and_args_override():
    s = one(DATA, "self.cfg.rollout.num_workers = 0", "override")
    assert (s.key, s.value, s.detail["how"]) == ("rollout.num_workers", 0, "literal")
    s = one(TRAIN, "args.num_workers = 0", "override")
    assert (s.key, s.value) == ("num_workers", 0)


def test_init_literal_is_a_define_and_plumbing_is_nothing():
    s = one(DATA, "self.threads = 4", "define")
    assert (s.key, s.value, s.detail["via"], s.detail["owner"]) == ("threads", 4, "attribute", "Loader")
    assert sites_at(DATA, "self.num_workers = cfg.rollout.num_workers", "override") == []


def test_environment_overrides():
    s = one(TRAIN, 'os.environ["OMP_NUM_THREADS"] = "1"', "override")
    assert (s.key, s.value, s.detail["how"], s.detail["thread_var"]) == ("OMP_NUM_THREADS", "1", "environ", True)
    s = one(TRAIN, 'os.environ.setdefault("MKL_NUM_THREADS", "1")', "override")
    assert (s.key, s.value, s.detail["setdefault"]) == ("MKL_NUM_THREADS", "1", True)


def test_ifexp_literal_override():
    code = ("def f(cfg, iterable):\n"
            "    num_workers = cfg.num_workers\n"
            "    num_workers = 0 if iterable else num_workers\n")
    over = [s for s in snippet_sites(code) if s.role == "override"]
    assert len(over) == 1
    assert (over[0].line, over[0].key, over[0].value, over[0].detail["condition"]) == (3, "num_workers", 0, "iterable")


def test_augmented_assignment_override():
    sites = snippet_sites("def f(n_envs):\n    n_envs //= 2\n    return n_envs\n")
    over = [s for s in sites if s.role == "override"]
    assert [(s.line, s.key, s.detail["how"]) for s in over] == [(2, "n_envs", "expression")]


# ---- consumers --------------------------------------------------------------------------------

def test_dataloader_resolved_through_import_alias_and_local_alias():
    s = one(DATA, "train = DL(dataset, batch_size=32, num_workers=num_workers)", "consume")
    assert s.key == "data.dataloader_num_workers"
    assert s.detail["backend"] == "torch.utils.data.DataLoader"
    assert (s.detail["param"], s.detail["serial"], s.detail["literal"]) == ("num_workers", False, False)
    assert s.detail["expr"] == "num_workers"
    assert s.detail["function"] == "build_loaders"


def test_stateful_dataloader_consumer():
    s = one(DATA, "val = StatefulDataLoader(", "consume")
    assert s.key == "data.dataloader_num_workers"
    assert s.detail["backend"] == "torchdata.stateful_dataloader.StatefulDataLoader"


def test_make_vec_env_without_vec_env_cls_is_serial():
    snippet = 'default = make_vec_env("CartPole-v1", n_envs=args.n_envs)'
    s = one(ENVS, snippet, "consume", "n_envs")
    assert s.detail["serial"] is True
    assert s.detail["defaulted"] == {"vec_env_cls": None}
    assert s.detail["twin"] == "stable_baselines3.common.vec_env.SubprocVecEnv"
    assert s.detail["twin_param"] == "vec_env_cls"
    cls = one(ENVS, snippet, "consume", "vec_env_cls")
    assert (cls.value, cls.detail["omitted"]) == (None, True)
    assert cls.detail["resolves_to"] == "stable_baselines3.common.vec_env.DummyVecEnv"


def test_make_vec_env_with_subproc_is_parallel():
    s = one(ENVS, "n_envs=8, vec_env_cls=SubprocVecEnv", "consume", "n_envs")
    assert (s.value, s.detail["serial"], s.detail["literal"]) == (8, False, True)
    assert "defaulted" not in s.detail


def test_make_vec_env_defaults_emitted_when_omitted():
    s = one(ENVS, 'bare = make_vec_env("CartPole-v1")', "consume", "n_envs")
    assert (s.value, s.detail["omitted"], s.detail["serial"]) == (1, True, True)


def test_serial_vector_envs_and_their_twins():
    s = one(ENVS, "gym.vector.SyncVectorEnv(", "consume")
    assert (s.key, s.detail["serial"], s.detail["twin"]) == ("num_envs", True, "gymnasium.vector.AsyncVectorEnv")
    s = one(ENVS, "AsyncVectorEnv([make_env(cfg.env_id, i) for i in range(cfg.env.num_envs)])", "consume")
    assert (s.key, s.detail["serial"]) == ("env.num_envs", False)
    s = one(ENVS, "dummy = DummyVecEnv(env_fns)", "consume")
    assert (s.key, s.detail["serial"]) == ("n_envs", True)  # the list's length comes from args.n_envs
    s = one(ENVS, "subproc = SubprocVecEnv(", "consume")
    assert (s.value, s.detail["serial"]) == (4, False)
    s = one(ENVS, "ts_serial = DummyVectorEnv(", "consume")
    assert (s.key, s.detail["serial"], s.detail["backend"]) == ("num_envs", True, "tianshou.env.DummyVectorEnv")
    s = one(ENVS, "ts_parallel = SubprocVectorEnv(", "consume")
    assert (s.value, s.detail["serial"]) == (8, False)
    s = one(ENVS, "rl_serial = SerialEnv(4", "consume")
    assert (s.value, s.detail["serial"], s.detail["twin"]) == (4, True, "torchrl.envs.ParallelEnv")
    s = one(ENVS, "rl_parallel = ParallelEnv(", "consume")
    assert (s.key, s.detail["serial"], s.detail["serial_for_single"]) == ("num_workers", False, True)


def test_gymnasium_make_vec_defaults_to_sync():
    s = one(ENVS, 'gym.make_vec("CartPole-v1", num_envs=8)', "consume")
    assert (s.value, s.detail["serial"], s.detail["defaulted"]) == (8, True, {"vectorization_mode": None})


def test_backend_chosen_through_a_variable():
    found = sites_at(ENVS, "chosen = vec_cls(env_fns)", "consume")
    by_backend = {s.detail["backend"]: s for s in found}
    assert set(by_backend) == {"stable_baselines3.common.vec_env.SubprocVecEnv",
                               "stable_baselines3.common.vec_env.DummyVecEnv"}
    dummy = by_backend["stable_baselines3.common.vec_env.DummyVecEnv"]
    assert (dummy.detail["serial"], dummy.detail["backend_condition"], dummy.detail["via_variable"]) == (
        True, "not (args.parallel)", "vec_cls")


def test_process_in_a_loop_counts_the_loop():
    s = one(POOLS, "p = mp.Process(target=rollout_worker", "consume")
    assert (s.key, s.detail["loop"], s.detail["backend"]) == ("num_workers", True, "multiprocessing.Process")


def test_get_context_pool_and_context_variable():
    s = one(POOLS, 'mp.get_context("spawn").Pool(cfg.n_proc', "consume")
    assert (s.key, s.detail["backend"], s.detail["serial"]) == ("n_proc", "multiprocessing.Pool", False)
    s = one(POOLS, "pool2 = ctx.Pool(processes=4)", "consume")
    assert (s.key, s.value, s.detail["backend"]) == ("processes", 4, "multiprocessing.Pool")


def test_thread_pools_are_serial_and_say_what_they_run():
    s = one(POOLS, "threads = ThreadPool(8)", "consume")
    assert (s.value, s.detail["backend"], s.detail["serial"]) == (8, "multiprocessing.dummy.Pool", True)
    io = one(POOLS, "cf.ThreadPoolExecutor(max_workers=16) as io_pool", "consume")
    assert (io.detail["serial"], io.detail["pool_use"], io.detail["submitted"]) == (True, "io", ["download"])
    step = one(POOLS, "cf.ThreadPoolExecutor(max_workers=cfg.num_envs) as step_pool", "consume")
    assert (step.key, step.detail["pool_use"]) == ("num_envs", "env-step")
    launcher = one(POOLS, "cf.ThreadPoolExecutor(4) as launcher", "consume")
    assert (launcher.value, launcher.detail["pool_use"]) == (4, "process-start")


def test_process_pool_executor_and_joblib_threading():
    s = one(POOLS, "cf.ProcessPoolExecutor(max_workers=cfg.max_workers", "consume")
    assert (s.key, s.detail["serial"]) == ("max_workers", False)
    s = one(POOLS, 'Parallel(n_jobs=cfg.n_jobs, backend="threading")', "consume")
    # joblib's threads run in parallel, as a thread pool's do; only backend="sequential" is serial
    assert (s.key, s.detail["serial"], s.detail["selected"]) == ("n_jobs", False, {"backend": "threading"})


def test_ray_init_guard_and_splat():
    s = one(POOLS, "ray.init(**cfg.ray_init)", "consume")
    assert (s.key, s.detail["splat"], s.detail["guard"]) == ("ray_init", True, "not ray.is_initialized()")


def test_ray_remote_and_options():
    found = sites_at(POOLS, "@ray.remote(num_cpus=2, num_gpus=0)", "consume")
    assert sorted((s.key, s.value) for s in found) == [("num_cpus", 2), ("num_gpus", 0)]
    s = one(POOLS, "runner_cls.options(num_cpus=cfg.runner_cpus)", "consume")
    # runner_cpus is no knob name: the site keys on the backend parameter and keeps the reference
    assert (s.key, s.detail["ref"], s.detail["backend"]) == ("num_cpus", "runner_cpus", "ray.remote(...).options")


def test_engine_and_thread_settings():
    s = one(POOLS, "LLM(model=", "consume")
    assert (s.key, s.detail["param"]) == ("rollout.tensor_model_parallel_size", "tensor_parallel_size")
    s = one(POOLS, "threadpool_limits(limits=1)", "consume")
    assert (s.key, s.value) == ("num_threads", 1)
    s = one(TRAIN, "torch.set_num_interop_threads(1)", "consume")
    assert (s.key, s.value, s.detail["condition"]) == ("num_interop_threads", 1, '__name__ == "__main__"')
    assert s.detail["in_main"] is True


def test_kwargs_after_explicit_knob():
    s = one(POOLS, "DataLoader(None, num_workers=4, **loader_kwargs)", "consume", "num_workers")
    assert (s.value, s.detail["kwargs_after"]) == (4, ["loader_kwargs"])
    splat = one(POOLS, "DataLoader(None, num_workers=4, **loader_kwargs)", "consume", "loader_kwargs")
    assert splat.detail["splat"] is True
    d = one(POOLS, 'defaults = {"num_workers": 2, **loader_kwargs}', "define")
    assert d.detail["kwargs_after"] == ["loader_kwargs"]


# ---- facts for the rules ----------------------------------------------------------------------

def test_worker_entry_points():
    assert one(DATA, "torch.set_num_threads(1)", "consume").detail["in_worker"] is True  # worker_init_fn
    assert one(ENVS, "torch.set_num_threads(1)", "consume").detail["in_worker"] is True  # env fn closure
    assert one(POOLS, 'os.environ["OMP_NUM_THREADS"] = "1"', "override").detail["in_worker"] is True  # initializer
    pools = [s for s in extract_file(POOLS).sites if s.detail.get("backend") == "torch.set_num_threads"]
    assert len(pools) == 2 and all(s.detail["in_worker"] for s in pools)  # rollout_worker, @ray.remote class
    main = one(TRAIN, "    torch.set_num_threads(1)", "consume")
    assert "in_worker" not in main.detail
    assert main.detail["in_main"] is True


def test_callable_submitted_to_a_process_pool_runs_in_a_worker():
    code = ("from concurrent.futures import ProcessPoolExecutor\n"
            "import torch\n"
            "def score(x):\n"
            "    torch.set_num_threads(1)\n"
            "    return x * 2\n"
            "def run(xs):\n"
            "    with ProcessPoolExecutor(4) as ex:\n"
            "        return list(ex.map(score, xs))\n")
    sites = {s.line: s for s in snippet_sites(code)}
    assert sites[4].detail["in_worker"] is True
    assert (sites[7].value, sites[7].detail["pool_use"], sites[7].detail["submitted"]) == (4, "compute", ["score"])


def test_torch_multiprocessing_spawn():
    code = ("import torch.multiprocessing as mp\n"
            "def worker_fn(rank):\n"
            "    pass\n"
            "def main(cfg):\n"
            "    mp.spawn(worker_fn, args=(), nprocs=cfg.nproc_per_node)\n")
    consume = [s for s in snippet_sites(code) if s.role == "consume"]
    assert [(s.line, s.key, s.detail["backend"]) for s in consume] == [(5, "nproc_per_node", "torch.multiprocessing.spawn")]


def test_every_site_is_well_formed_and_json_safe():
    for rel in ("rlproj/config.py", "rlproj/data.py", "rlproj/envs.py", "rlproj/pools.py", "rlproj/train.py"):
        lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
        result = extract_file(rel)
        assert result.sites, rel
        for s in result.sites:
            assert s.role in ROLES
            assert s.source == lines[s.line - 1].strip()
            assert 1 <= s.column <= len(lines[s.line - 1]) + 1
            assert s.detail["match"] in ("exact", "near", None)
            assert s.detail["function"]
            json.dumps(s.to_json())
        json.dumps(result.meta)


# ---- precision: no false sites ----------------------------------------------------------------

def test_no_false_sites_on_look_alikes():
    code = '''
import torch, gymnasium as gym
from joblib import Parallel
def f(wg, data):
    info = {}
    n = torch.get_num_threads()
    wg.init_workers.remote()
    env = gym.make("CartPole-v1")
    model = torch.nn.parallel.DistributedDataParallel(data)
    info["world_size"] = 3
    handles = [None] * 4
    for num_workers in [0, 2]:
        print(num_workers)
    render_modes = []
    return Parallel
class A:
    def __init__(self, n):
        self.num_workers = n
        self.world_size = None
    def restore(self, restored, key, workers):
        summary = {}
        self._counters["total_num_restored_workers"] += len(restored)
        summary[key].total_num_workers = len(workers)
'''
    assert snippet_sites(code) == []


def test_hydra_main_is_noted():
    code = ('import hydra\n@hydra.main(config_path="conf", config_name="ppo", version_base=None)\n'
            'def main(cfg):\n    return cfg.trainer.nnodes\n')
    result = python_code.extract(code, "m.py", VOCAB)
    assert result.meta["hydra_main"] == [{"line": 2, "function": "main", "config_path": "conf", "config_name": "ppo",
                                          "version_base": None}]
    assert [(s.role, s.key, s.detail["in_main"]) for s in result.sites] == [("read", "trainer.nnodes", True)]


def test_relative_imports_are_not_resolved_to_backends():
    code = "from .vec import DummyVecEnv\nenv = DummyVecEnv([f] * 4)\n"
    assert snippet_sites(code) == []


def test_non_ascii_line_gives_character_column():
    sites = snippet_sites('x = "é"; y = cfg.num_workers\n')
    assert [(s.line, s.column) for s in sites] == [(1, 14)]


# ---- bad input ----------------------------------------------------------------------------------

def test_syntax_error_raises_parse_error_with_line():
    with pytest.raises(ParseError) as info:
        python_code.extract("x = 1\ndef broken(:\n    pass\n", "bad.py", VOCAB)
    assert info.value.line == 2
    assert "invalid Python" in info.value.message


NEWER_GRAMMAR = (
    "type Workers = int\n"
    "def pick[T](x: T) -> T:\n"
    "    return x\n"
    "class Box[T]:\n"
    "    pass\n"
    "label = f\"{cfg.name + f\"{'-'}\"}\"\n"
    "try:\n"
    "    pass\n"
    "except* ValueError:\n"
    "    pass\n"
    "import multiprocessing\n"
    "pool = multiprocessing.Pool(processes=cfg.num_workers)\n"
)


def test_newer_grammar_is_read_not_skipped():
    """PEP 695 aliases and type parameters, PEP 701 nested f-string quotes, except*: read with
    libcst's parser where this Python's ast cannot, line numbers kept."""
    result = python_code.extract(NEWER_GRAMMAR, "new.py", VOCAB)
    found = {(s.role, s.key, s.line) for s in result.sites}
    assert ("consume", "num_workers", 12) in found
    assert ("read", "num_workers", 12) in found


def test_newer_grammar_with_a_real_error_is_still_an_error():
    with pytest.raises(ParseError) as info:
        python_code.extract(NEWER_GRAMMAR + "x = 1\nx = )\n", "bad.py", VOCAB)
    assert "invalid Python" in info.value.message


OLDER_GRAMMAR = (
    "import multiprocessing\n"
    "def replay(cfg, async=True):\n"
    "    return Replay(cfg.memory, async=async)\n"
    "pool = multiprocessing.Pool(processes=cfg.num_workers)\n"
)


def test_async_as_a_name_is_read_with_the_old_grammar():
    """Python 3.6 code naming a keyword argument `async` (keywords since 3.7)."""
    result = python_code.extract(OLDER_GRAMMAR, "old.py", VOCAB)
    assert ("consume", "num_workers", 4) in {(s.role, s.key, s.line) for s in result.sites}
    with pytest.raises(ParseError):  # a real error beside it stays one
        python_code.extract(OLDER_GRAMMAR + "x = )\n", "bad.py", VOCAB)


def test_null_byte_raises_parse_error():
    with pytest.raises(ParseError):
        python_code.extract("x = 1\0\n", "nul.py", VOCAB)


def test_deeply_nested_expression_is_a_parse_error_not_a_crash():
    with pytest.raises(ParseError):
        python_code.extract("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n", "deep.py", VOCAB)


@pytest.mark.slow
@pytest.mark.parametrize("deep", ["-" * 20000 + "1", "not " * 20000 + "1", "(" * 5000 + "1" + ")" * 5000])
def test_deeply_nested_newer_grammar_is_a_parse_error_not_a_crash(deep):
    """libcst's native parser crashes its process on these (stack overflow): it runs in a child."""
    with pytest.raises(ParseError):
        python_code.extract(f"type Workers = int\nx = {deep}\n", "deep.py", VOCAB)


def test_extractor_contract_dispatch():
    assert kind_of("a/b.py") == "python"
    assert extractor("python").extract is python_code.extract


def test_project_vocabulary_extension_is_used():
    vocab = vocab_mod.load({"extra-knobs": ["rollout_shards"]})
    sites = python_code.extract("n = cfg.rollout_shards\n", "x.py", vocab).sites
    assert [(s.role, s.key) for s in sites] == [("read", "rollout_shards")]


# ---- the catalogue is data, and consistent -------------------------------------------------------

def test_catalogue_counts_are_knobs_and_serial_backends_have_twins():
    cat = py_catalogue.load()
    consumers = set(cat.by_name.values())
    assert len(consumers) >= 30
    for c in consumers:
        assert c.counts, c.backend
        for count in c.counts:
            assert VOCAB.match(count.knob) == "exact", (c.backend, count.knob)
        if c.serial and c.kind == "envs":
            assert c.twin, c.backend
    assert cat.lookup("stable_baselines3.common.vec_env.dummy_vec_env.DummyVecEnv").serial is True
    assert cat.lookup("multiprocessing.dummy.Pool").serial is True
    assert cat.lookup("multiprocessing.Pool").serial is False
    assert cat.lookup("gymnasium.make") is None  # a function leaf never falls back


def test_keywords_name_the_backends_for_the_prefilter():
    words = python_code.keywords()
    for w in ("DummyVecEnv", "SyncVectorEnv", "make_vec_env", "set_num_threads", "DataLoader", "SerialEnv"):
        assert w in words


# ---- real packages from PyPI --------------------------------------------------------------------

def _wheel(request, spec: str) -> Path:
    # pytest's cache folder, or a temporary one under `-p no:cacheprovider`
    store = getattr(request.config, "cache", None)
    cache = Path(store.mkdir("qg-audit-pypi")) if store is not None else \
        request.getfixturevalue("tmp_path_factory").mktemp("qg-audit-pypi")
    name = spec.split("==")[0].replace("-", "_")
    found = sorted(cache.glob(f"{name}-*.whl"))
    if not found:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                               spec, "-d", str(cache)], capture_output=True, text=True, timeout=300)
        found = sorted(cache.glob(f"{name}-*.whl"))
        if proc.returncode != 0 or not found:
            pytest.skip(f"package registry unreachable or {spec} unavailable: {proc.stderr.strip()[-200:]}")
    return found[-1]


def _extract_from_wheel(wheel: Path, member: str):
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(member).decode("utf-8")
    return python_code.extract(text, member, VOCAB), text.splitlines()


@pytest.mark.network
@pytest.mark.slow
def test_real_sb3_make_vec_env(request):
    wheel = _wheel(request, "stable-baselines3==2.9.2")
    result, lines = _extract_from_wheel(wheel, "stable_baselines3/common/env_util.py")
    fn = [s for s in result.sites if s.detail.get("function") == "make_vec_env"]
    reads = {s.key: s for s in fn if s.role == "read" and s.detail["via"] == "param"}
    assert reads["n_envs"].default == 1
    assert reads["vec_env_cls"].default is None
    consume = [s for s in fn if s.role == "consume" and s.key == "n_envs"]
    assert len(consume) == 1
    c = consume[0]
    assert c.detail["backend"] == "stable_baselines3.common.vec_env.DummyVecEnv"
    assert c.detail["serial"] is True
    assert c.detail["defaulted"] == {"vec_env_cls": None}
    assert c.detail["via_variable"] == "vec_env_cls"
    assert "vec_env_cls(" in lines[c.line - 1]


@pytest.mark.network
@pytest.mark.slow
def test_real_verl_dataloader_num_workers(request):
    wheel = _wheel(request, "verl==0.9.1")
    result, lines = _extract_from_wheel(wheel, "verl/trainer/ppo/ray_trainer.py")
    key = "data.dataloader_num_workers"
    reads = [s for s in result.sites if s.role == "read" and s.key == key]
    assert reads and 'self.config.data["dataloader_num_workers"]' in reads[0].source
    consumes = [s for s in result.sites if s.role == "consume" and s.key == key]
    assert len(consumes) == 2
    assert {s.detail["backend"] for s in consumes} == {"torchdata.stateful_dataloader.StatefulDataLoader"}
    assert all(lines[s.line - 1].strip() == "num_workers=num_workers," for s in consumes)
    main, _ = _extract_from_wheel(wheel, "verl/trainer/main_ppo.py")
    init = [s for s in main.sites if s.detail.get("backend") == "ray.init"]
    assert [(s.key, s.detail["splat"], s.detail["guard"]) for s in init] == [
        ("ray_kwargs.ray_init", True, "not ray.is_initialized()")]


def test_extraction_leaves_no_reference_cycle():
    """The scan turns the cyclic collector off while it extracts a file (auditor.scan): the
    tree must die by refcount when extract() returns, Context built and all."""
    import gc

    text = ("import torch\n"
            "def main(cfg):\n"
            "    cfg.num_workers = 4\n"
            "    return torch.utils.data.DataLoader(ds, num_workers=cfg.num_workers)\n")
    gc.collect()
    gc.disable()
    try:
        result = python_code.extract(text, "train.py", vocab_mod.load())
        left = gc.collect()
    finally:
        gc.enable()
    assert {s.role for s in result.sites} >= {"override", "consume"}  # both build the Context
    assert left == 0


def test_progress_helpers_that_map_over_a_process_pool():
    code = ("from mmengine.utils import track_progress_rich\n"
            "from mmengine import track_parallel_progress\n"
            "from tqdm.contrib.concurrent import process_map\n"
            "def tokenize_all(args, data):\n"
            "    list(track_progress_rich(tokenize, data, nproc=32, chunksize=32))\n"
            "    track_parallel_progress(tokenize, data, args.nproc)\n"
            "    process_map(tokenize, data, max_workers=args.workers)\n")
    found = {s.line: s for s in snippet_sites(code) if s.role == "consume"}
    assert (found[5].value, found[5].detail["backend"]) == (32, "mmengine.utils.track_progress_rich")
    assert (found[6].key, found[6].detail["backend"]) == ("nproc", "mmengine.utils.track_parallel_progress")
    assert (found[7].key, found[7].detail["serial"]) == ("max_workers", False)


def test_env_ids_are_the_names_of_the_gym_ids_a_file_writes():
    code = ("from stable_baselines3.common.vec_env import DummyVecEnv\n"
            "ids = ['CartPole-v1', \"ALE/Pong-v5\", 'MountainCarContinuous-v0', 'not-an-id', 'cartpole-v1']\n"
            "envs = DummyVecEnv([lambda: None for _ in range(4)])\n")
    assert python_code.extract(code, "train.py", VOCAB).meta["env_ids"] == ["CartPole", "MountainCarContinuous", "Pong"]
    plain = "print('CartPole-v1')\n"  # no parallelism site: nothing to judge, nothing recorded
    assert "env_ids" not in python_code.extract(plain, "peek.py", VOCAB).meta


def test_environ_by_name_marks_a_file_that_exports_settings_by_computed_names():
    def line(code):
        return python_code.extract(code, "dist.py", VOCAB).meta.get("environ_by_name")
    assert line("import os\nfor k, v in env.items():\n    os.environ[k] = v\n") == 3
    assert line("import os\nos.environ.update(asdict(env_args))\n") == 2
    assert line("import os\nos.environ['OMP_NUM_THREADS'] = '1'\nos.environ.update({'A': '1'}, B='2')\n") is None


def test_a_package_bound_by_a_star_import_is_that_package():
    # `from .utils import *` where utils imports multiprocessing: the file never binds the name
    # itself, so `multiprocessing.Process` there is the library's
    text = ("from .utils import *\n"
            "def split(n_cpus):\n"
            "    procs = [multiprocessing.Process(target=f) for _ in range(n_cpus)]\n"
            "    pool = multiprocessing.Pool(n_cpus)\n")
    consumes = [s for s in python_code.extract(text, "explore.py", VOCAB).sites if s.role == "consume"]
    assert {(s.line, s.detail["backend"]) for s in consumes} == {(3, "multiprocessing.Process"),
                                                                  (4, "multiprocessing.Pool")}
    bound = text.replace("from .utils import *\n", "from .utils import *\nmultiprocessing = load_plugin()\n")
    assert not [s for s in python_code.extract(bound, "explore.py", VOCAB).sites if s.role == "consume"]


def test_one_process_per_part_of_an_array_split():
    # the loop turns once per part, and starts one worker per turn: N is the count
    text = ("import numpy as np\nfrom multiprocessing import Process\n"
            "def prepare(files, num_processes=64):\n"
            "    chunks = np.array_split(files, num_processes)\n"
            "    for i, subset in enumerate(chunks):\n"
            "        Process(target=work, args=(subset, i)).start()\n"
            "    return [Process(target=work, args=(c,)) for c in np.array_split(files, 8)]\n")
    consumes = [s for s in python_code.extract(text, "prep.py", VOCAB).sites if s.role == "consume"]
    assert {(s.line, s.key, s.value) for s in consumes} == {(6, "num_processes", None), (7, "num_processes", 8)}
    assert all(s.detail.get("loop") for s in consumes)


def test_a_count_split_with_its_remainder_dropped():
    text = ("def main(cfg):\n"
            "    env = GymAgent(n_envs=int(cfg.algorithm.n_envs / cfg.algorithm.n_processes))\n"
            "    envs_per_worker = cfg.num_envs // 4\n"
            "    batch = Loader(batch_size=cfg.batch_size // cfg.num_workers)\n"
            "    return env, envs_per_worker, batch\n")
    splits = python_code.extract(text, "td3.py", VOCAB).meta["uneven_splits"]
    assert [(s["line"], s["key"], s["by"], s["target"]) for s in splits] == [
        (2, "algorithm.n_envs", "algorithm.n_processes", "n_envs"), (3, "num_envs", 4, "envs_per_worker")]
    checked = text.replace("    return", "    assert cfg.num_envs % 4 == 0\n    return")
    assert [s["line"] for s in python_code.extract(checked, "td3.py", VOCAB).meta["uneven_splits"]] == [2]


@pytest.mark.parametrize("code, backend, counts", [
    ("import envpool\nenv = envpool.make('Pong-v5', env_type='gym', num_envs=cfg.num_envs, num_threads=4)\n",
     "envpool.make", {("num_envs", None), ("num_threads", 4)}),
    ("import tensorflow as tf\nds = ds.map(parse, num_parallel_calls=1)\n", "tf.data.Dataset.map",
     {("num_parallel_calls", 1)}),
    ("from pebble import ProcessPool\npool = ProcessPool(max_workers=args.max_workers)\n", "pebble.ProcessPool",
     {("max_workers", None)}),
    ("from datatrove.executor import LocalPipelineExecutor\nex = LocalPipelineExecutor(pipeline=[], tasks=64)\n",
     "datatrove.executor.LocalPipelineExecutor", {("num_processes", 64)}),
    ("from litdata import optimize\noptimize(fn=f, inputs=[], output_dir='o', num_workers=4)\n", "litdata.optimize",
     {("num_workers", 4)}),
    ("from ray.train import ScalingConfig\nsc = ScalingConfig(num_workers=args.num_workers, use_gpu=True)\n",
     "ray.train.ScalingConfig", {("num_workers", None)}),
    ("from ray.rllib.algorithms.ppo import PPOConfig\ncfg = PPOConfig().env_runners(num_env_runners=2)\n",
     "ray.rllib.algorithms.AlgorithmConfig.env_runners", {("num_env_runners", 2)}),
    ("import multiprocess as mp\npool = mp.Pool(3)\n", "multiprocessing.Pool", {("processes", 3)}),
    ("from tqdm_multiprocess import TqdmMultiProcessPool\np = TqdmMultiProcessPool(4)\n",
     "tqdm_multiprocess.TqdmMultiProcessPool", {("num_processes", 4)}),
])
def test_backends_of_frameworks_beyond_the_standard_library(code, backend, counts):
    consumes = [s for s in snippet_sites(code) if s.role == "consume"]
    assert {s.detail["backend"] for s in consumes} == {backend}
    assert {(s.key.rsplit(".", 1)[-1], s.value) for s in consumes} == counts


def test_keys_asked_for_by_name_include_flags_spelt_with_dashes():
    code = ('worker_args = ["model-path", "limit-worker-concurrency", "num_gpus"]\n'
            'for key in worker_args:\n    print(getattr(args, key.replace("-", "_")))\n')
    meta = python_code.extract(code, "launch_all.py", VOCAB).meta
    assert meta["quoted_keys"] == ["limit_worker_concurrency", "num_gpus"]


_PARSER = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num-workers', type=int)\n"


@pytest.mark.parametrize("body,reads", [
    ("def main(a):\n    return a.x\nmain(p.parse_args())\n", ["x"]),  # handed to a function of the file
    ("args = p.parse_args()\ndef f():\n    return args.y\nf()\n", ["y"]),  # a module-level namespace
    ("args, rest = p.parse_known_args()\nprint(args.z, args)\n", ["z"]),  # printing reads nothing
    ("def main(*, cfg):\n    return cfg.k\nargs = p.parse_args()\nmain(cfg=args)\n", ["k"]),
    ("args = p.parse_args()\nn = getattr(args, 'num_workers')\n", ["num_workers"]),
    ("from m import run\nrun(p.parse_args())\n", None),  # another module may read anything
    ("args = p.parse_args()\nd = vars(args)\n", None),
    ("class A:\n    def __init__(self):\n        self.args = p.parse_args()\n", None),
    ("def get():\n    return p.parse_args()\nargs = get()\nprint(args.q)\n", None),  # no script: a library's get()
    # a script's own parse_args(): the fact names it, for QG101 to check that no other file calls it
    ("def parse_args():\n    a = p.parse_args()\n    print(a.r)\n    return a\n"
     "def main():\n    args = parse_args()\n    return args.q\nif __name__ == '__main__':\n    main()\n",
     {"reads": ["q", "r"], "exported": ["parse_args"]}),
    ("def parse_args():\n    return p.parse_args()\nif __name__ == '__main__':\n    run(parse_args())\n", None),
    ("def parser():\n    return p\nargs = p.parse_args()\nif __name__ == '__main__':\n    print(args.q)\n", None),
    ("def main(*a):\n    return a\nargs = p.parse_args()\nmain(args)\n", None),
    ("args = p.parse_args()\nconfig = {'args': args}\n", None),
    # a process started on a function of the file: its parameter holds the namespace
    ("import multiprocessing as mp\ndef main(a, rank):\n    return a.x\nargs = p.parse_args()\n"
     "mp.Process(target=main, args=(args, 0)).start()\n", ["x"]),
    ("import torch.multiprocessing as mp\ndef main(rank, a):\n    return a.y\nargs = p.parse_args()\n"
     "mp.spawn(main, args=(args,), nprocs=2)\n", ["y"]),
    ("import multiprocessing as mp\nfrom m import main\nargs = p.parse_args()\n"
     "mp.Process(target=main, args=(args,)).start()\n", None),  # another file's function
])
def test_whether_a_parsed_namespace_stays_in_its_file(body, reads):
    meta = python_code.extract(_PARSER + body, "cli.py", VOCAB).meta
    assert meta.get("closed_namespace") == ({"reads": reads} if isinstance(reads, list) else reads)


@pytest.mark.parametrize("flags,body,unread", [
    # a flag choosing where the work runs, by its name or help text, that the script never reads
    ("p.add_argument('--gpu', type=int, help='gpu id')\np.add_argument('--ckpt')\n",
     "args = p.parse_args()\nprint(args.ckpt)\n", ["gpu"]),
    ("p.add_argument('--start-method', default='spawn')\np.add_argument('--target_tp', help='Target TP degree')\n",
     "args = p.parse_args()\n", ["start_method", "target_tp"]),
    ("p.add_argument('--allreduce_degree', type=int)\n", "def main(a):\n    return a.allreduce_degree\n"
     "main(p.parse_args())\n", None),  # read
    ("p.add_argument('--gpu', type=int)\n", "from m import run\nrun(p.parse_args())\n", None),  # leaves the file
    # a batch size per device, a sampling method, a local rank a launcher passes: no such setting
    ("p.add_argument('--per_device_train_batch_size', type=int)\np.add_argument('--sampling_method')\n"
     "p.add_argument('--local_rank', type=int)\n", "args = p.parse_args()\n", None),
    # the CPU chosen over the GPUs (Yi-VL's web demo), but not where optimizer state is kept
    ("p.add_argument('--cpu-only', action='store_true')\np.add_argument('--zero_cpu_offload', action='store_true')\n"
     "p.add_argument('--use_cpu_initialization', action='store_true')\n", "args = p.parse_args()\n", ["cpu_only"]),
])
def test_setting_flags_a_script_never_reads(flags, body, unread):
    meta = python_code.extract(_PARSER + flags + body, "cli.py", VOCAB).meta
    assert [f["dest"] for f in meta.get("unread_setting_flags") or ()] == (unread or [])
    assert "setting_flags" not in meta  # (only the unread ones are kept)


def test_a_script_passing_its_command_line_on():
    text = _PARSER + "import subprocess, sys\nsubprocess.run(['python', 'main.py'] + sys.argv[1:])\n"
    assert python_code.extract(text, "launch.py", VOCAB).meta.get("forwards_argv") is True
    assert "forwards_argv" not in python_code.extract(_PARSER + "import sys\nprint(sys.argv[1:])\n", "a.py", VOCAB).meta


@pytest.mark.parametrize("text,expected", [
    # a trailing comment with the machine's count, after the call's closing bracket
    ("from vllm import LLM\nm = LLM(\n    'p', tensor_parallel_size=1\n)  # torch.cuda.device_count())\n",
     [("count", 2, "tensor_parallel_size", "1", "torch.cuda.device_count()")]),
    # a name assigned a literal, the computation beside it
    ("import os\nnum_workers = 1  # os.cpu_count() // 2\n", [("count", 2, "num_workers", "1", "os.cpu_count() // 2")]),
    # the same pool above, commented out, with the count the user sets
    ("from multiprocessing import Pool\ndef run(args, items):\n    # pool = Pool(processes=args.num_workers)\n"
     "    pool = Pool(processes=2)\n    return pool.map(len, items)\n",
     [("count", 4, "processes", "2", "args.num_workers")]),
    # a pool and the map on it commented out, the mapped function called directly
    ("from multiprocessing import Pool\ndef f(x):\n    return x\ndef run(parts):\n    # with Pool() as pool:\n"
     "    #     pool.map(f, parts)\n    f(parts[0])\n", [("serial", 7, "f", None, None)]),
    # a stored count whose only use is commented out
    ("class T:\n    def __init__(self, ds, num_proc=4):\n        self.num_proc = num_proc\n"
     "        # ds = ds.map(len, num_proc=self.num_proc)\n        self.ds = ds\n", [("consumer", 3, "num_proc", None, None)]),
])
def test_parallel_code_commented_out(text, expected):
    facts = python_code.extract(text, "a.py", VOCAB).meta.get("commented_parallel") or []
    got = [(f["kind"], f["line"], f.get("param") if f["kind"] == "count" else f.get("function") or f.get("name"),
            f.get("value"), f.get("was")) for f in facts]
    assert got == expected


@pytest.mark.parametrize("text", [
    # prose beside a literal, and a commented-out count that is a literal too
    "from vllm import LLM\nm = LLM('p', tensor_parallel_size=1)  # one GPU (the model is small)\n",
    "from multiprocessing import Pool\ndef run(items):\n    # pool = Pool(processes=8)\n    pool = Pool(processes=2)\n"
    "    return pool.map(len, items)\n",
    # the live count is the computed one: the serial variant is what was commented out
    "import os\nfrom multiprocessing import Pool\ndef run(items):\n    # pool = Pool(processes=1)\n"
    "    pool = Pool(processes=os.cpu_count())\n    return pool.map(len, items)\n",
    # the serial call commented out, the pool live
    "from multiprocessing import Pool\ndef f(x):\n    return x\ndef run(parts):\n    # f(parts[0])\n"
    "    with Pool() as pool:\n        pool.map(f, parts)\n",
    # the stored count is read elsewhere in its file
    "class T:\n    def __init__(self, ds, num_proc=4):\n        self.num_proc = num_proc\n"
    "        # ds = ds.map(len, num_proc=self.num_proc)\n    def run(self, ds):\n"
    "        return ds.map(len, num_proc=self.num_proc)\n",
])
def test_commented_code_that_dropped_nothing(text):
    assert "commented_parallel" not in python_code.extract(text, "a.py", VOCAB).meta


@pytest.mark.parametrize("body,params", [
    ("def main(src, num_workers=1):\n    return src\nmain(**vars(p.parse_args()))\n", ["num_workers", "src"]),
    ("def run(*, n_jobs):\n    return n_jobs\nargs = p.parse_args()\nrun(**args.__dict__)\n", ["n_jobs"]),
    ("def main(src):\n    return src\nmain(**{'src': 1})\n", None),  # a mapping of its own, not a namespace
    ("from m import main\nmain(**vars(p.parse_args()))\n", None),  # another file's function
    ("class A:\n    def main(self, k):\n        return k\nA().main(**vars(p.parse_args()))\n", None),
])
def test_the_parameters_a_namespace_is_splatted_into(body, params):
    meta = python_code.extract(_PARSER + body, "cli.py", VOCAB).meta
    assert meta.get("splat_parameters") == params


_SPLIT = ("import argparse\nfrom multiprocessing import Pool\n"
          "def main(args, files):\n")


@pytest.mark.parametrize("body,expect", [
    # cut into args.num_tasks parts, mapped on a pool of the default size
    ("    n = args.num_tasks\n    k = len(files) // n\n    parts = [files[i:i + k] for i in range(0, len(files), k)]\n"
     "    with Pool() as pool:\n        pool.map(len, parts)\n", ("num_tasks", "args.num_tasks", None)),
    ("    parts = np.array_split(files, args.num_chunks)\n    pool = Pool(4)\n    pool.map(len, parts)\n",
     ("num_chunks", "args.num_chunks", 4)),
    ("    parts = [files[i::args.n_shards] for i in range(args.n_shards)]\n"
     "    with Pool(os.cpu_count() - 1) as p:\n        p.map(len, parts)\n", ("n_shards", "args.n_shards", "os.cpu_count() - 1")),
    # the pool is sized by the setting, or by another one: nothing
    ("    k = len(files) // args.num_tasks\n    parts = [files[i:i + k] for i in range(0, len(files), k)]\n"
     "    with Pool(args.num_tasks) as pool:\n        pool.map(len, parts)\n", None),
    ("    parts = np.array_split(files, args.num_chunks)\n    with Pool(args.workers) as pool:\n        pool.map(len, parts)\n", None),
    # a batch size is no count of parts
    ("    n = len(files) // args.batch_size\n    parts = [files[i * 8:(i + 1) * 8] for i in range(n)]\n"
     "    with Pool(8) as pool:\n        pool.map(len, parts)\n", None),
    # the pool maps other work
    ("    k = len(files) // args.num_tasks\n    with Pool() as pool:\n        pool.map(len, files)\n", None),
])
def test_work_cut_into_parts_beside_a_pool(body, expect):
    meta = python_code.extract(_SPLIT + body, "judge.py", VOCAB).meta
    facts = meta.get("split_work")
    if expect is None:
        assert facts is None
    else:
        assert [(f["key"], f["read"], f["size"]) for f in facts] == [expect]


_PINNED = "import os, threading\nimport multiprocessing as mp\nos.environ['OMP_NUM_THREADS'] = '1'\n"


@pytest.mark.parametrize("body,expect", [
    # a learner thread of this process computes the gradients
    ("def learn(m, q):\n    m(q.get()).mean().backward()\n"
     "threading.Thread(target=learn, args=(m, q)).start()\n", {"function": "learn", "call": "backward"}),
    # at module level (a training loop under `if __name__ == "__main__":`)
    ("if __name__ == '__main__':\n    loss = model(x)\n    loss.backward()\n", {"function": "<module>", "call": "backward"}),
    ("def update(opt, grads):\n    opt.apply_gradients(grads)\n", {"function": "update", "call": "apply_gradients"}),
    # the learner is a worker process; a helper only a worker calls runs there too
    ("def learn(m, q):\n    m(q.get()).mean().backward()\nmp.Process(target=learn, args=(m, q)).start()\n", None),
    ("def step(m, b):\n    m(b).mean().backward()\ndef worker(m, q):\n    step(m, q.get())\n"
     "mp.Process(target=worker, args=(m, q)).start()\n", None),
    # no gradients at all
    ("def rollout(i):\n    env.step(0)\nmp.Process(target=rollout, args=(0,)).start()\n", None),
])
def test_the_gradients_computed_in_the_process_that_runs_the_file(body, expect):
    meta = python_code.extract(_PINNED + body, "train.py", VOCAB).meta
    assert meta.get("main_process_math") == expect


def test_no_gradient_fact_without_a_thread_variable():
    meta = python_code.extract("def learn(m):\n    m.loss().backward()\n", "train.py", VOCAB).meta
    assert "main_process_math" not in meta


@pytest.mark.parametrize("body,shown", [
    ("assert n > 0, f\"NUM_WORKERS is {os.environ.get('NUM_WORKERS', 'unset')}\"\n", True),
    ("raise ValueError(os.environ.get('NUM_WORKERS', 'not specified'))\n", True),
    ("n = int(os.environ.get('NUM_WORKERS', '4'))\n", False),
    # the assertion's test uses the value; only its message shows one
    ("assert int(os.environ.get('NUM_WORKERS', '1')) == 1\n", False),
])
def test_a_value_read_for_a_message_is_marked(body, shown):
    sites = python_code.extract("import os\n" + body, "run.py", VOCAB).sites
    reads = [s for s in sites if s.role == "read" and s.key == "NUM_WORKERS"]
    assert reads and all(bool(s.detail.get("in_message")) is shown for s in reads)


def test_grain_loader_and_read_threads_are_backends():
    sites = snippet_sites("import grain.python as grain\n"
                          "def loader(cfg, num_threads=1):\n"
                          "    return grain.DataLoader(data_source=ds, worker_count=cfg.grain_worker_count,\n"
                          "                            read_options=grain.ReadOptions(num_threads=num_threads))\n")
    got = {(s.detail["backend"], s.detail["param"], s.key) for s in sites if s.role == "consume"}
    assert got == {("grain.DataLoader", "worker_count", "grain_worker_count"),
                   ("grain.ReadOptions", "num_threads", "num_threads")}


def test_ray_init_joining_by_position_emits_no_default():
    sites = snippet_sites("import ray\nray.init('auto')\nray.init()\n")
    omitted = [(s.line, s.detail["param"]) for s in sites if s.role == "consume" and s.detail.get("omitted")]
    assert omitted == [(3, "num_cpus"), (3, "num_gpus")]


def test_stated_defaults_of_flags_and_docstrings():
    text = ("import argparse\n"
            "parser = argparse.ArgumentParser()\n"
            "parser.add_argument('-j', '--workers', default=4, type=int, help='number of loader workers (default: 16)')\n"
            "parser.add_argument('--num_threads', default=2, type=int, help='threads, default 2 * num_gpus')\n"
            "def run(num_workers=4):\n"
            "    \"\"\"Args:\n        num_workers (int): loader workers. Default, 12.\n    \"\"\"\n")
    sites = {s.key: s for s in python_code.extract(text, "main.py", VOCAB).sites if s.role in ("define", "read")}
    assert sites["workers"].detail["help_default"] == 16
    assert "help_default" not in sites["num_threads"].detail  # a formula, not a default
    assert sites["num_workers"].detail["help_default"] == 12


def test_a_section_held_in_an_attribute_is_read_through_it():
    # `self.jaxcfg = config.jax` (DreamerV3's agent): `self.jaxcfg.assert_num_devices` reads
    # `jax.assert_num_devices`, not instance state; another class's attribute of that name does not
    code = ("class Agent:\n"
            "    def __init__(self, config):\n"
            "        self.jaxcfg = config.jax\n"
            "        if self.jaxcfg.assert_num_devices > 0:\n"
            "            pass\n"
            "class Other:\n"
            "    def run(self):\n"
            "        return self.jaxcfg.assert_num_devices\n")
    reads = [(s.line, s.key) for s in snippet_sites(code) if s.role == "read"]
    assert reads == [(4, "jax.assert_num_devices")]

"""The knob vocabulary: names from the list, patterns, look-alikes, and names built like knobs."""

from __future__ import annotations

import pytest

from auditor import vocab

V = vocab.load()


@pytest.mark.parametrize("name", [
    "collector_env_num", "evaluator_env_num", "num_gpus_per_node", "gpus_per_node", "NUM_NODES", "numEnvs",
    "tp_size", "dp_shard_size", "fsdp_shard_degree", "cpus-per-task", "num_processors", "dataset_num_proc",
    "envs_per_worker", "nprocs", "ngpus", "gpu_count", "num_inference_engines", "num_learners_per_node",
    "fsdp_num_replicas", "max_num_workers", "num_cores", "worker_num", "thread_count",
    "num_workers_valid", "n_envs_eval", "tp_size_train",
])
def test_names_built_from_a_count_and_a_unit_are_knobs(name):
    assert V.match(name) == "exact", name


@pytest.mark.parametrize("name", [
    "num_env_steps", "batch_size", "shard_size", "batch_size_per_gpu", "num_steps_per_env", "hidden_size",
    "num_agents", "env_id", "local_rank", "node_rank", "total_timesteps", "max_num_seqs", "num_epochs",
    "rollout_batch_size", "n", "tp", "envs", "device_count", "cpu_count",
    "num_env_steps_train", "batch_size_eval", "workers_valid",
])
def test_counts_of_other_things_and_measurements_are_not(name):
    assert V.match(name) is None, name


def test_misspellings_of_listed_names_stay_look_alikes():
    assert V.match("num_worker") == "near" and V.match("n_env") == "near"
    assert V.match("num_workers") == "exact" and V.match("num_proc") == "exact"


@pytest.mark.parametrize("name, serial", [
    ("vllm_v1_disable_multiproc", "true"), ("disable_frontend_multiprocessing", "true"),
    ("use_multiprocessing", "false"), ("one_gpu", "true"), ("use_single_gpu", "true"), ("multi_node", "false"),
    ("disable_distributed", "true"), ("enable_distributed_inference", "false"), ("sequential_rollout", "true"),
    ("no_subprocess_envs", "true"),
    # a mode word spelt in two (coinrun's make_general_env(..., use_sub_proc=True))
    ("use_sub_proc", "false"), ("disable_sub_process", "true"),
])
def test_switches_built_like_one_are_knobs_with_their_serial_value(name, serial):
    assert V.match(name) == "exact", name
    assert V.serial_value(name, serial) is True and V.serial_value(name, "maybe") is False


@pytest.mark.parametrize("name", [
    # a mode word in another sense, a state the program measures, or one in a longer phrase
    "is_distributed", "distributed_backend", "async_collection", "sync_env", "validate_weight_first_sync",
    "pbt_mix_policies_in_one_env", "decorrelate_envs_on_one_worker", "parameter_sync_step", "serial_number",
    "distributed_sampler", "multiprocessing_context", "sub_processor_type", "multi_processing",
])
def test_names_that_only_mention_a_mode_are_not_switches(name):
    assert V.switch(name) is None, name

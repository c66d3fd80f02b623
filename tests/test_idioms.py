"""Each idiom of issue 20 on a multi-file fixture of its own (fixtures/idioms/), through the
real pipeline: what is found, at which severity, and what stays quiet beside it."""

from __future__ import annotations

from pathlib import Path

from auditor.lint.harness import scan_and_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "idioms"


def findings(name: str, code: str | None = None) -> list[tuple[str, int, str, str]]:
    r = scan_and_check(FIXTURES / name)
    return sorted((f.file, f.line, f.code, f.severity) for f in r.findings if code in (None, f.code))


def test_misplaced_section_in_a_config_variant():
    found = findings("misplaced_section", "QG101")
    assert ("config/cartpole.ini", 8, "QG101", "warning") in found  # [train] num_envs
    assert ("config/cartpole.ini", 9, "QG101", "warning") in found  # [train] num_workers
    assert not any(line == 5 for _f, line, _c, _s in found)  # [env] num_envs: handed on as env_kwargs


def test_kwargs_shadowing_by_splat_update_and_fill():
    found = findings("kwargs_shadowing", "QG110")
    assert ("serve/server.py", 11, "QG110", "warning") in found  # written only where model_kwargs lacks it
    assert ("serve/server.py", 12, "QG110", "warning") in found  # setdefault with a configured value
    assert ("serve/executor.py", 10, "QG110", "warning") in found  # then .update(ray_remote_kwargs)
    assert not any(f == "serve/engine.py" for f, *_ in found)  # a computed default, meant to be replaced


def test_a_literal_where_sibling_configs_route_the_setting():
    found = findings("sibling_literal", "QG105")
    assert ("cfg/task/Gears.yaml", 3, "QG105", "warning") in found
    assert ("cfg/task/Gears.yaml", 6, "QG105", "warning") in found
    assert ("cfg/train/GearsPPO.yaml", 4, "QG105", "warning") in found  # a switch: multi_gpu
    assert not any(f == "cfg/task/Factory.yaml" for f, *_ in found)  # routed, with its own default


def test_a_count_handed_on_in_a_kwargs_mapping_only_under_a_condition():
    found = findings("conditional_kwargs")
    assert ("data/loader.py", 4, "QG104", "warning") in found
    assert not [f for f in found if f[0] == "data/eval.py" and f[3] == "warning"]


def test_project_backends_by_what_they_do():
    found = findings("project_backends", "QG106")
    assert ("examples/train_dqn.py", 11, "QG106", "warning") in found  # LocalSampler beside ProcessSampler
    assert ("configs/pong.py", 3, "QG106", "warning") in found  # type='base' beside 8 collector envs
    assert ("conf/sampler/local.yaml", 2, "QG106", "warning") in found  # a Hydra node for LocalSampler
    quiet = {"examples/train_ppo.py", "examples/evaluate.py", "configs/cartpole.py", "configs/debug.py",
             "conf/sampler/process.yaml"}
    assert not [f for f in found if f[0] in quiet]
    assert not [f for f in found if f[0].startswith("rlkit/")]  # the classes themselves are fine


def test_project_backend_message_names_both_classes():
    r = scan_and_check(FIXTURES / "project_backends")
    by_file = {f.file: f.message for f in r.findings if f.code == "QG106"}
    assert "LocalSampler" in by_file["examples/train_dqn.py"] and "ProcessSampler" in by_file["examples/train_dqn.py"]
    assert "BaseEnvManager" in by_file["configs/pong.py"] and "SubprocessEnvManager" in by_file["configs/pong.py"]


def test_hydra_target_keys_are_the_targets_arguments():
    r = scan_and_check(FIXTURES / "project_backends")
    assert not [f for f in r.findings if f.code in ("QG101", "QG103")]
    pool = [s for s in r.sites if s.file == "conf/data/pool.yaml" and s.role == "consume"]
    assert pool and pool[0].detail["backend"] == "multiprocessing.Pool" and pool[0].detail["serial"] is False


def test_click_options_and_flags_documented_as_counts(tmp_path):
    (tmp_path / "run.py").write_text(
        "import argparse\nimport multiprocessing as mp\n\nimport click\n\n\n"
        "def collect(n_workers=1):\n    return mp.Pool(processes=n_workers)\n\n\n"
        "@click.command()\n"
        "@click.option('--n', type=int, default=4, help='Number of workers to use')\n"
        "@click.option('--seed', default=1)\n"
        "def main(n, seed):\n    collect(n_workers=n)\n\n\n"
        "@click.command()\n@click.option('--k', type=int, default=2)\n"
        "def other(k):\n    \"\"\"Run it.\n\n    Args:\n        k (int): Number of parallel envs.\n    \"\"\"\n"
        "    collect(n_workers=k)\n\n\n"
        "p = argparse.ArgumentParser()\np.add_argument('-j', type=int, default=3, help='number of processes')\n")
    r = scan_and_check(tmp_path)
    knobs = {k.name: k for k in r.knobs}
    assert knobs["n"].effective == 4 and any(s.role == "consume" and s.line == 15 for s in knobs["n"].sites)
    assert knobs["k"].effective == 2  # admitted by its docstring
    assert "j" in knobs and "seed" not in knobs


def test_flags_counting_by_a_longer_help_or_by_where_they_go(tmp_path):
    """pytorch/examples' `-j/--workers` ('number of data loading workers'), copied into timm and
    many trainers; and the same flag without a help, known by the DataLoader it feeds."""
    (tmp_path / "inference.py").write_text(
        "import argparse\nimport torch\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('-j', '--workers', default=2, type=int, help='number of data loading workers')\n"
        "parser.add_argument('--loaders', default=3, type=int)\n"
        "parser.add_argument('--limit', default=100, type=int, help='number of samples to process per worker')\n"
        "parser.add_argument('--dataset', default='')\n"
        "parser.add_argument('--procs', default=4, type=int, help='how many training processes to use')\n\n\n"
        "def main():\n    args = parser.parse_args()\n"
        "    workers = 1 if 'tfds' in args.dataset else args.workers\n"
        "    a = torch.utils.data.DataLoader(range(args.limit), num_workers=workers)\n"
        "    loaders = 0 if 'wds' in args.dataset else args.loaders\n"
        "    b = torch.utils.data.DataLoader(range(10), num_workers=loaders)\n")
    r = scan_and_check(tmp_path)
    knobs = {k.name: k for k in r.knobs}
    assert "limit" not in knobs  # samples, not workers
    defined = {s.key: s.detail for k in knobs.values() for s in k.sites if s.role == "define"}
    assert defined["workers"].get("counts_by_help") and defined["loaders"].get("fed_to_backend")
    assert defined["procs"].get("counts_by_help")  # a knob by its help alone: nothing here reads it
    lost = {(f.line, f.severity) for f in r.findings if f.code == "QG104"}
    assert lost == {(14, "warning"), (16, "warning")}  # the flags' 2 and 3 are lost under a condition


def test_a_literal_count_in_a_program_that_reads_its_settings():
    found = {(f, line): sev for f, line, _c, sev in findings("program_literals", "QG105")}
    assert found[("scripts/decontaminate.py", 11)] == "warning"
    assert found[("mylib/data/sft.py", 2)] == "warning"  # a default no caller passes; the caller is a CLI
    assert found[("mylib/oracles/math.py", 8)] == "note"  # a pool kept for timeouts
    assert found[("mylib/data/metrics.py", 7)] == "note"  # filled in only when the user gave none
    assert found[("mylib/data/tables.py", 5)] == "note"  # a helper that reads no settings


def test_a_switch_the_code_defines_is_judged_where_a_config_sets_it():
    found = findings("code_switch", "QG106")
    assert ("configs/env/dmc.yaml", 6, "QG106", "warning") in found  # picked by an experiment of 16 envs
    assert not [f for f in found if f[0] == "configs/env/mujoco.yaml"]  # its experiment runs one env
    assert not [f for f in found if f[0] == "configs/env/default.yaml"]  # the parallel value
    # an if statement as the switch: judged where a config sets it, not in its serial branch
    assert ("offline/configs/d4rl.yaml", 2, "QG106", "warning") in found
    assert not [f for f in found if f[0] in ("offline/configs/antmaze.yaml", "offline/env.py")]


def test_a_switch_between_the_projects_own_classes():
    found = findings("project_switch", "QG106")
    # Parallel starts a process through the Worker it makes; the dmc preset inherits False
    assert found == [("configs.yaml", 4, "QG106", "warning")]
    message = scan_and_check(FIXTURES / "project_switch").findings[0].message
    assert "dmc.envs" in message and "Local" in message and "Parallel" in message  # not atari's 16


def test_a_config_key_one_typo_from_a_parallelism_field():
    found = findings("misspelt_key", "QG101")
    assert found == [("examples/cp/qlora-cp.yaml", 4, "QG101", "warning")]  # tp.yaml: spelt right, quiet
    message = scan_and_check(FIXTURES / "misspelt_key").findings[0].message
    assert "context_parallel_size" in message and "InputConfig" in message


def test_launch_commands_built_in_code():
    found = findings("launch_in_code", "QG105")
    assert ("pkg/cli/train.py", 6, "QG105", "note") in found  # no --nproc_per_node
    assert ("tools/evaluator.py", 16, "QG105", "warning") in found  # literal 1 beside --nnodes <count>
    assert not [f for f in found if f[0] == "pkg/cli/launch.py"]  # the count is passed; a table of names


def test_a_pool_behind_an_unrelated_test():
    found = findings("gated_pool")
    assert found == [("annotate/subtasks.py", 16, "QG106", "note")]  # frames.py: len(episodes) > 1, quiet


def test_a_flag_copied_into_an_attribute_nothing_reads():
    found = findings("dead_copy")
    assert found == [("mappo/config.py", 7, "QG101", "warning")]  # n_rollout_threads: read, quiet


def test_a_setting_that_is_only_an_environment_fallback():
    found = findings("env_fallback")
    assert found == [("oat/interface.py", 5, "QG104", "note")]  # launch.py: a literal fallback, quiet


def test_a_literal_thread_pool_over_the_programs_own_work():
    found = findings("reward_threads")
    assert found == [("rl/reward/naive.py", 14, "QG105", "note")]  # remote.py: an I/O pool, quiet


def test_a_helper_default_only_literals_replace_through_a_kwargs_mapping():
    found = findings("splat_default")
    assert ("data/hf.py", 9, "QG105", "note") in found  # process_hf_dataset's default, through **kwargs
    assert ("tools/tokenize_data.py", 5, "QG105", "note") in found  # the literal itself
    assert not [f for f in found if f[0] == "data/sft.py" or f[3] == "warning"]


def test_settings_validators_that_rewrite_what_the_user_set():
    found = findings("config_validators")
    assert found == [("rlcfg/inference.py", 20, "QG104", "warning"),  # replaced whenever it equals its default
                     ("rlcfg/rl.py", 19, "QG104", "note")]  # replaced whenever it disagrees with another setting
    # api_server_count (model_fields_set), num_workers (None) and the toml's tensor_parallel_size: quiet


def test_a_count_nothing_on_the_scripts_path_reads():
    found = findings("unread_on_path", "QG106")
    assert found == [("examples/demo.py", 7, "QG106", "warning")]  # train_lander, train_cartpole: quiet


def test_a_shared_settings_field_one_entry_script_never_reads():
    found = findings("entry_point_fields")
    assert found == [("trainer/config.py", 7, "QG101", "warning"),  # core.py, which a script runs with it
                     ("trainer/config.py", 9, "QG101", "note")]  # fast.py, which no script runs with it
    messages = {f.line: f.message for f in scan_and_check(FIXTURES / "entry_point_fields").findings}
    assert "trainer/core.py" in messages[7] and "scripts/core.sh:2" in messages[7]


def test_keys_set_through_yaml_anchors_are_read_at_their_aliases():
    found = findings("yaml_anchors", "QG101")
    assert found == [("spec/ppo.yaml", 15, "QG101", "warning")]  # the misspelling; the anchor's keys: quiet


def test_a_helper_that_caps_the_learners_threads():
    found = findings("capped_threads", "QG107")
    assert found == [("agent/utils/torch_setup.py", 6, "QG107", "warning")]  # min(cpus // 2, 4) returned
    r = scan_and_check(FIXTURES / "capped_threads")
    message = next(f.message for f in r.findings if f.code == "QG107")
    assert "at most 4 threads" in message and "agent/utils/cpu.py:7" in message


def test_a_setting_replaced_by_a_same_named_parameter_or_a_local_literal():
    found = findings("param_over_setting", "QG104")
    assert ("rlkit/nets/ppo_net.py", 4, "QG104", "warning") in found  # default 1 over --n_rollout_threads 32
    assert ("examples/isaac/train.py", 7, "QG104", "warning") in found  # num_envs = 9; cfg.num_envs = num_envs
    assert not [f for f in found if f[1] == 12]  # replaced only when the caller passes a value


def test_a_thread_variable_set_after_torch_was_imported():
    found = findings("thread_var_after_import", "QG107")
    assert found == [("agentlab/cli.py", 10, "QG107", "warning")]  # collect.py: for the workers it starts
    r = scan_and_check(FIXTURES / "thread_var_after_import")
    message = next(f.message for f in r.findings if f.code == "QG107")
    assert "imported at line 3" in message and "does not set" in message


def test_a_call_that_omits_the_count_another_call_passes():
    found = findings("omitted_argument")
    # collector = Collector(cfg); collector.collect(): the method is the class's, its default 8 runs
    assert ("zoo/entry.py", 11, "QG103", "warning") in found
    assert not [f for f in found if f[0] == "zoo/entry.py" and f[1] == 6]  # passes the configured 32
    assert not [f for f in found if f[2] == "QG105"]  # one finding per call: QG103 names both calls


def test_a_literal_in_a_script_whose_parser_takes_the_field():
    found = findings("parsed_field", "QG105")
    assert ("gen/generation.py", 8, "QG105", "warning") in found  # HfArgumentParser((DatasetConfig, ...))
    assert ("gen/export.py", 6, "QG105", "note") in found  # no parser there: no --num_proc to lose
    message = next(f.message for f in scan_and_check(FIXTURES / "parsed_field").findings if f.file == "gen/generation.py")
    assert "parses DatasetConfig" in message and "gen/configs.py:6" in message


def test_a_serial_count_beside_a_sibling_that_routes_it():
    found = findings("serial_beside_routed", "QG105")
    assert ("pipelines/distill.py", 7, "QG105", "warning") in found  # no num_workers, data_config at hand
    assert ("pipelines/distill.py", 12, "QG105", "warning") in found  # num_proc=1, data_args at hand
    assert ("pipelines/rollout.py", 7, "QG105", "warning") in found  # a copied pipeline class
    quiet = [f for f in found if f[0] == "pipelines/sft.py" or f[0] == "pipelines/probe.py" and f[3] == "warning"]
    assert not quiet  # a probe loader, another script's `args`, an eval loader beside a parameter's count
    assert not [f for f in found if f[0].startswith("trainers/")]  # leaving it out is the norm there
    r = scan_and_check(FIXTURES / "serial_beside_routed")
    message = next(f.message for f in r.findings if (f.file, f.line) == ("pipelines/rollout.py", 7))
    assert "pipelines/sft.py:20" in message and "self.pipeline_config.data_args" in message


def test_a_section_read_only_through_handles_that_hold_another():
    found = findings("section_reader", "QG101")
    # ref.megatron: CriticWorker's self.config reads megatron but also model, which ref lacks
    assert found == [("trainer/config/ppo_trainer.yaml", 12, "QG101", "warning")]
    message = scan_and_check(FIXTURES / "section_reader").findings[0].message
    assert "CriticWorker" in message and "`model`" in message


def test_sharded_launches_with_a_hand_written_process_count():
    found = findings("sharded_launch", "QG108")
    assert ("scripts/eval_batch.sh", 4, "QG108", "warning") in found  # {0..7} beside $CHUNKS
    assert ("run_loop.sh", 4, "QG108", "warning") in found  # four lines, --local_index 0..3
    assert not [f for f in found if f[0] in ("scripts/eval_follow.sh", "run_seeds.sh")]  # seq follows; seeds are no shards


def test_an_unset_variable_beside_a_literal_names_the_flag_as_spelt(tmp_path):
    (tmp_path / "run.sh").write_text('#!/bin/bash\necho "threads: ${n_rollout_threads}"\n'
                                     "python train.py --n-rollout-threads 50\n")
    messages = [f.message for f in scan_and_check(tmp_path).findings if f.code == "QG108"]
    assert len(messages) == 1 and "--n-rollout-threads (line 3)" in messages[0]


def test_a_setting_read_into_a_name_nothing_uses():
    found = findings("dead_read", "QG101")
    assert ("serving/server.py", 10, "QG101", "warning") in found  # APP_WORKERS into `workers`
    assert ("api/client.py", 8, "QG101", "warning") in found  # NUM_WORKERS into self.num_workers
    assert not [f for f in found if f[:2] == ("api/client.py", 9)]  # self.num_threads: api/batch.py reads it
    assert not [f for f in found if f[0] == "launch/dist.py"]  # WORLD_SIZE, and a derived dp_size
    assert not [f for f in found if f[0] == "rag/config.py"]  # rag/sync.py loads config.INGEST_WORKERS
    r = scan_and_check(FIXTURES / "dead_read")
    message = next(f.message for f in r.findings if f.file == "serving/server.py")
    assert "APP_WORKERS" in message and "`workers`" in message


def test_a_literal_rank_count_where_sibling_launch_scripts_pass_the_variable():
    found = findings("launch_siblings", "QG105")
    assert found == [("scripts/eval/needle.sh", 3, "QG105", "warning")]  # not debug.sh, not scripts/train/
    r = scan_and_check(FIXTURES / "launch_siblings")
    assert "$NPROC_PER_NODE" in r.findings[0].message


def test_a_literal_through_a_helper_the_package_re_exports():
    found = findings("reexported_helper", "QG105")
    assert ("eval/linear.py", 13, "QG105", "warning") in found  # 0 workers beside the routed flag
    assert ("eval/knn.py", 14, "QG105", "warning") in found  # a literal 5 in a program with settings
    r = scan_and_check(FIXTURES / "reexported_helper")
    knn = next(f.message for f in r.findings if f.file == "eval/knn.py")
    assert "linear.py" not in knn  # another script's flag of that name is not this one's setting


def test_a_setup_script_sourced_by_multi_rank_launch_scripts():
    found = findings("sourced_setup", "QG107")
    assert found == [("tools/env.sh", 1, "QG107", "warning")]  # not scripts/setups/train.sh


def test_a_literal_reported_once_naming_the_setting_it_drops():
    r = scan_and_check(FIXTURES / "literal_once")
    qg105 = [f for f in r.findings if f.code == "QG105"]
    assert [(f.file, f.line, f.severity) for f in qg105] == [("train.py", 12, "warning")]
    assert "conf.py" in qg105[0].message  # not "that no configuration reaches"


def test_an_environment_variable_that_sizes_parallelism_written_whole():
    found = findings("env_overwritten", "QG104")
    assert found == [("comm.py", 7, "QG104", "warning"), ("comm.py", 8, "QG104", "warning"),
                     ("examples/demo.py", 3, "QG104", "note"), ("learner.py", 3, "QG104", "warning"),
                     ("setup.py", 6, "QG104", "note")]
    # setup.py: extended, guarded, a switch forced on, a determinism helper; its GPU set pinned to
    # a literal at import is a note since 0.4.38 (the user's exported GPUs are dropped)


def test_counts_frozen_in_code_a_helper_default_and_one_worker():
    found = findings("default_never_passed", "QG105")
    assert found == [("prep.py", 6, "QG105", "warning"), ("train.py", 10, "QG105", "note")]  # not line 11's 0


def test_a_literal_to_a_re_exported_helper_beside_siblings_that_route_the_count():
    found = findings("reexported_sibling", "QG105")
    assert found == [("vlm/dataset/math.py", 9, "QG105", "warning")]
    r = scan_and_check(FIXTURES / "reexported_sibling")
    assert "judge_kwargs" in r.findings[0].message


def test_a_flag_of_a_script_whose_parsed_arguments_stay_in_it():
    found = findings("closed_parser", "QG101")
    assert found == [("serve/cli.py", 15, "QG101", "warning"), ("tools/remote.py", 7, "QG101", "note")]
    r = scan_and_check(FIXTURES / "closed_parser")
    cli = [f for f in r.findings if f.file == "serve/cli.py"]
    assert "never leave cli.py" in cli[0].message
    remote = [f for f in r.findings if f.file == "tools/remote.py"]
    assert "sys.argv[1:]" in remote[0].message


def test_parallel_code_commented_out_beside_its_serial_replacement():
    found = findings("commented_out")
    assert ("evaluation/executor.py", 11, "QG105", "warning") in found  # the pool of min(n, 1)
    assert ("evaluation/judge.py", 19, "QG106", "warning") in found  # annotate() called in process
    assert ("serve/bench.py", 7, "QG105", "warning") in found  # `# torch.cuda.device_count())`
    assert ("trainers/dpo.py", 6, "QG101", "warning") in found  # its only use commented out
    assert ("scripts/eval.slurm", 4, "QG105", "warning") in found
    assert not any(f in ("evaluation/quiet.py", "trainers/sft.py", "trainers/dpo_v2.py", "trainers/my_dpo.py")
                   for f, *_ in found)
    r = scan_and_check(FIXTURES / "commented_out")
    pool = next(f for f in r.findings if f.file == "evaluation/executor.py")
    assert "os.cpu_count()" in pool.message and "line 10" in pool.message


def test_a_namespace_splatted_into_main_reads_its_flags():
    r = scan_and_check(FIXTURES / "namespace_splat")
    found = {(f.file, f.line): f for f in r.findings if f.code == "QG101"}
    assert not [k for k in found if k[0] == "scripts/sample.py"]  # main(**vars(opts)) takes num_workers
    assert found[("scripts/export.py", 13)].severity == "warning"  # parsed, never read
    unread = found[("scripts/shuffle.py", 13)]
    assert unread.severity == "warning"
    # its own parse_args() hands the namespace only to the script: stats.py's read is another flag's
    # (and a DataLoader called without a count reads nothing)
    assert "never leave shuffle.py" in unread.message and "ablate.py" not in unread.message


def test_work_cut_into_parts_by_a_setting_that_does_not_size_the_pool():
    r = scan_and_check(FIXTURES / "split_work")
    by_line = {(f.file, f.line): f for f in r.findings if f.code == "QG105"}
    default = by_line[("eval/judge_correctness.py", 25)]  # Pool(): the machine's CPU count
    assert default.severity == "warning" and "args.num_tasks" in default.message
    one = by_line[("eval/judge_context.py", 15)]  # ProcessPoolExecutor(max_workers=1) over array_split chunks
    assert one.severity == "warning" and "opts.num_chunks" in one.message
    assert not [k for k in by_line if k[0] == "eval/judge_activity.py"]  # the pool takes the setting
    # cut by a batch size, not into a count of parts: no finding of this kind
    assert not [f for k, f in by_line.items() if k[0] == "eval/score_batches.py" and "parts" in f.message]


def test_a_thread_variable_for_the_workers_pins_the_learner_of_the_same_process():
    r = scan_and_check(FIXTURES / "learner_pinned")
    pins = {f.file: f for f in r.findings if f.code == "QG107"}
    shared = pins["agent/actors_and_learner.py"]  # learner threads in the process that set it
    assert shared.line == 5 and shared.severity == "note" and "learn()" in shared.message
    assert "agent/learner_process.py" not in pins  # the learner is a process of its own
    assert "agent/collect_only.py" not in pins  # no gradients in this process


def test_a_wrapper_that_hands_on_its_parameters_but_not_the_count():
    r = scan_and_check(FIXTURES / "pass_through")
    found = [f for f in r.findings if f.code == "QG103"]
    assert [(f.file, f.line, f.severity) for f in found] == [("evals/compare.py", 5, "warning")]
    assert "compare() hands it 5 of its own parameters" in found[0].message
    # compare_parallel() passes the count; quick() passes nothing by name; a test's wrapper is a test


def test_a_yaml_file_of_unknown_top_level_shape_is_no_tool_config(tmp_path):
    # a top-level merge key or a second document leaves the file's top-level keys unknown
    # (meta["children"][""] is None): QG101 still judges its keys, and does not fail
    (tmp_path / "base.yaml").write_text("defaults: &d\n  num_workers: 4\n<<: *d\nbatch: 8\n")
    (tmp_path / "two.yaml").write_text("on: push\njobs: {}\n---\nnum_envs: 8\n")
    (tmp_path / "train.py").write_text("import yaml\nfrom torch.utils.data import DataLoader\n"
                                       "cfg = yaml.safe_load(open('base.yaml'))\n"
                                       "DataLoader([], num_workers=cfg['num_workers'])\n")
    r = scan_and_check(tmp_path)
    assert not [f for f in r.findings if f.file == "base.yaml" and f.code == "QG101"]  # num_workers is read
    assert [f for f in r.findings if f.file == "two.yaml" and f.code == "QG101"]  # num_envs is not


def test_debug_functions_by_name():
    from auditor.lint.idioms import is_debug_function

    assert is_debug_function("examples.instrument.run_example_debug")
    assert is_debug_function("smoke_test") and is_debug_function("Runner.dry_run")
    assert not is_debug_function("debugger_attach") and not is_debug_function("train") and not is_debug_function(None)


def test_test_folders_by_name():
    from auditor.lint.base import is_test_file

    for path in ("tests_deprecated/torch/gpt2.py", "integration_tests/run.py", "unit-tests/a.py", "tests/a.py",
                 "pkg/test_x.py", "pkg/x_test.py"):
        assert is_test_file(path), path
    for path in ("contest/x.py", "latest/model.py", "src/pkg/a.py", "protests.py"):
        assert not is_test_file(path), path


def test_thread_counts_written_into_external_programs_commands():
    found = findings("tool_threads", "QG105")
    assert found == [("audio/decode.py", 11, "QG105", "note"),  # ffmpeg -threads 0
                     ("scripts/jobs.sh", 5, "QG105", "note"),  # parallel -j 4 (not -j "$NJOBS", not make -j8)
                     ("scripts/jobs.sh", 8, "QG105", "note"),  # llama.cpp's ./main -t 8
                     ("search/index.py", 10, "QG105", "note"),  # a computed program's --cpu 8 (not train.py's flag)
                     ("setup.py", 5, "QG105", "note")]  # nvcc arguments with no program; tests/ quiet


def test_a_configuration_handed_whole_to_another_package():
    found = findings("config_handed_out", "QG101")
    # examples/ppo/train.py hands its Hydra configuration, through main_task.remote() and a
    # subclass's super().__init__, to verl's trainer: what nothing here reads may be read there
    assert ("examples/ppo/config/ppo.yaml", 6, "QG101", "note") in found
    assert ("examples/ppo/config/ppo.yaml", 8, "QG101", "note") in found
    assert not any(f == "examples/ppo/config/ppo.yaml" and s == "warning" for f, _l, _c, s in found)
    # training/train.py keeps its configuration in the tree (`from trainers import SFTTrainer`
    # is the project's own package): the key nothing reads stays a warning
    assert ("training/configs/base.yaml", 5, "QG101", "warning") in found
    assert not any(f == "training/configs/base.yaml" and line != 5 for f, line, _c, _s in found)


def test_a_builder_flag_that_its_one_script_never_reads():
    found = findings("builder_flag_unread", "QG101")
    # generate.py parses at import, with no `__main__` guard, through add_args(), which it alone
    # runs: the flag's own line is where it is accepted and lost (demo/sample.py reads its own)
    assert found == [("anagrams/anagrams/utils.py", 4, "QG101", "warning")]


def test_sections_splatted_into_actor_dataclasses():
    found = findings("sections_into_actors", "QG101")
    # `Trainer.options(procs=2).as_actor(**cfg.trainer)` builds the project's dataclass from the
    # section: num_workers and dp_size fill fields the classes read; `parallelism` is a field of
    # torchtitan's type, read there; loader_workers fills no field at all
    assert found == [("apps/grpo/qwen.yaml", 3, "QG101", "note"),
                     ("apps/grpo/qwen.yaml", 4, "QG101", "note"),
                     ("apps/grpo/qwen.yaml", 6, "QG101", "warning")]


def test_a_config_file_a_script_names_and_hands_to_another_package():
    found = findings("config_named_by_script", "QG101")
    # start_grpo.py builds the path of configs/grpo.yaml and hands what it loads to NeMo-RL's
    # setup() (a package the project's own nemo_rl/ folder does not shadow); recipes/sft.py keeps
    # its configuration, and the key it does not read stays a warning
    assert found == [("nemo_kit/training/nemo_rl/configs/grpo.yaml", 2, "QG101", "note"),
                     ("nemo_kit/training/nemo_rl/configs/grpo.yaml", 4, "QG101", "note"),
                     ("recipes/configs/sft.yaml", 3, "QG101", "warning")]


def test_a_flag_of_another_files_parser_that_a_backend_counts_by():
    r = scan_and_check(FIXTURES / "fed_flag")
    # `--n-explorer` (no count word a vocabulary knows) sizes a Process per explorer in apex.py;
    # the parser is in arguments.py: its default and the forced 1 are that knob's sites
    sites = sorted((s.role, s.file, s.line) for s in r.sites if s.key == "n_explorer")
    assert ("define", "ape/arguments.py", 6) in sites
    assert ("override", "ape/apex.py", 13) in sites
    assert sorted((f.file, f.line, f.code, f.severity) for f in r.findings) == [
        ("ape/apex.py", 13, "QG104", "note")]
    assert not any(s.key == "log_every" for s in r.sites)  # overwritten too, but reaches no backend


def test_a_count_a_class_stores_and_nothing_loads():
    found = findings("stored_unread", "QG101")
    # TransformerModel keeps n_jobs as self.n_jobs and never uses it; its sibling's own
    # self.n_jobs (another class, another file) is no read of it; Model's n_workers is read by
    # its subclass in another file
    assert found == [("models/transformer.py", 5, "QG101", "note")]


def test_a_gpu_set_pinned_at_import():
    found = findings("gpu_pinned", "QG104")
    # the module both scripts import pins GPU 6; a blank value, setdefault, a guarded write
    # and a worker's own write stay quiet
    assert found == [("models/value_model.py", 3, "QG104", "note")]


def test_a_configuration_handed_down_a_cooperative_super_chain():
    found = findings("super_chain", "QG101")
    # SFTRecipe(ForgeActor, TitanEngine) hands its config to super().__init__: the project's
    # ForgeActor passes it on, so another package's TitanEngine may read the parallelism keys;
    # Evaluator has only the project's base and hands it nothing
    assert found == [("apps/eval/config/eval.yaml", 6, "QG101", "warning"),
                     ("apps/sft/config/sft.yaml", 6, "QG101", "note"),
                     ("apps/sft/config/sft.yaml", 7, "QG101", "note")]


def test_a_config_file_a_launch_script_gives_another_program():
    found = findings("config_to_program", "QG101")
    # `sweagent run-batch --config agent/infer.yaml`: sweagent reads it, out of the tree;
    # `python train.py --config configs/train.yaml` keeps it in the project
    assert found == [("agent/infer.yaml", 1, "QG101", "note"), ("configs/train.yaml", 3, "QG101", "warning")]

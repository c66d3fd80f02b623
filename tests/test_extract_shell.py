"""Shell launch-script extraction, site by site: overrides, flags, variables, launchers."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor import vocab
from auditor.extract import extractor, kind_of, shell_script
from auditor.extract.cfg_shell_lex import lex

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "scan_configs"
V = vocab.load()


def sh(text: str, path: str = "run.sh"):
    return shell_script.extract(text, path, V)


def table(result, role: str | None = None) -> set[tuple]:
    return {(s.role, s.line, s.key, s.value, s.default) for s in result.sites if role in (None, s.role)}


def only(result, role: str, key: str):
    found = [s for s in result.sites if s.role == role and s.key == key]
    assert len(found) == 1, (role, key, found)
    return found[0]


def test_verl_launch_script_fixture():
    rel = "scripts/run_ppo.sh"
    r = extractor(kind_of(rel)).extract((ROOT / rel).read_text(), rel, V)
    assert table(r) == {
        ("define", 5, "NGPUS", 8, None),  # a count word glued to its unit: a knob by its structure
        ("read", 5, "NGPUS", None, 8),  # ${NGPUS:-8}: the environment's value, else 8
        ("read", 16, "NGPUS", 8, None),
        ("define", 7, "NUM_WORKERS", 8, None),
        ("define", 8, "OMP_NUM_THREADS", 1, None),
        ("read", 9, "NUM_WORKERS", 8, None),  # used inside the EXTRA array
        ("define", 9, "actor_rollout_ref.rollout.agent.num_workers", 8, None),  # array element, expanded at 19
        ("define", 10, "trainer.val_num_workers", 2, None),
        ("read", 14, "NUM_WORKER", None, None),  # misspelt: never defined
        ("define", 14, "data.dataloader_num_workers", None, None),
        ("define", 15, "actor_rollout_ref.rollout.tensor_model_parallel_size", 2, None),
        ("define", 16, "trainer.n_gpus_per_node", 8, None),
        ("define", 17, "trainer.nnodes", 1, None),
        ("define", 18, "actor_rollout_ref.ref.log_prob_num_workers", None, None),
    }  # line 12 (commented-out command) and the python heredoc body (22) count for nothing
    tp = only(r, "define", "actor_rollout_ref.rollout.tensor_model_parallel_size")
    assert tp.detail["resolved_from"] == "TP" and tp.detail["env_default"] is True
    assert tp.detail["via"] == "hydra-override" and tp.detail["script"] == "verl.trainer.main_ppo"
    assert (tp.column, tp.source) == (5, "actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \\")
    arr = only(r, "define", "actor_rollout_ref.rollout.agent.num_workers")
    assert (arr.detail["via_array"], arr.detail["expanded_at"], arr.detail["resolved_from"]) == ("EXTRA", 19, "NUM_WORKERS")
    assert only(r, "define", "trainer.val_num_workers").detail["hydra_add"] == "+"
    assert only(r, "define", "actor_rollout_ref.ref.log_prob_num_workers").detail["hydra_delete"] is True
    miss = only(r, "read", "NUM_WORKER")
    assert miss.detail == {"via": "shell-var", "feeds": "data.dataloader_num_workers", "env": True, "match": "near"}
    assert r.meta["shell_vars"] == {
        "defined": {"NGPUS": 5, "TP": 6, "NUM_WORKERS": 7, "OMP_NUM_THREADS": 8, "EXTRA": 9, "PYTHONUNBUFFERED": 13},
        "used": {"NUM_WORKERS": 9, "NUM_WORKER": 14, "TP": 15, "NGPUS": 16, "EXTRA": 19},
        "exported": {"OMP_NUM_THREADS": 8, "PYTHONUNBUFFERED": 13},
    }


def test_launcher_fixture():
    rel = "scripts/launch_torchrun.sh"
    r = extractor(kind_of(rel)).extract((ROOT / rel).read_text(), rel, V)
    assert table(r) == {
        ("define", 2, "NPROC", 4, None),
        ("read", 3, "DATALOADER_WORKERS", None, 6),
        ("define", 5, "NPROC", None, None),  # inside case: conditional, keeps the known 4
        ("define", 7, "TOKENIZERS_PARALLELISM", False, None),
        ("read", 7, "NPROC", 4, None),
        ("define", 7, "nproc_per_node", 4, None),
        ("define", 7, "nnodes", 1, None),
        ("define", 8, "num_workers", 6, None),
        ("define", 8, "rollout.num_envs", 16, None),
        ("define", 8, "serial_mode", True, None),
        ("define", 9, "num_processes", 8, None),
        ("define", 9, "multi_gpu", True, None),  # accelerate's --multi_gpu: a parallel switch
        ("define", 9, "dataloader_num_workers", 2, None),
        ("define", 10, "num_gpus", 2, None),
        ("define", 11, "nproc_per_node", 2, None),
    }  # line 12 is commented out
    launchers = {(s.line, s.key): s.detail.get("launcher") for s in r.sites if s.role == "define"}
    assert launchers[(7, "nproc_per_node")] == "torchrun"
    assert launchers[(8, "num_workers")] == "torchrun"  # the program's flag, started by torchrun
    assert launchers[(9, "num_processes")] == "accelerate launch"
    assert launchers[(10, "num_gpus")] == "deepspeed"
    assert launchers[(11, "nproc_per_node")] == "torch.distributed.run"
    assert only(r, "define", "num_workers").detail["flag"] == "--num-workers"
    assert only(r, "define", "num_workers").detail["script"] == "train.py"
    assert "script" not in [s for s in r.sites if s.key == "num_processes"][0].detail
    assert only(r, "define", "TOKENIZERS_PARALLELISM").detail["via"] == "env-prefix"
    assert [s.detail.get("conditional") for s in r.sites if s.key == "NPROC" and s.role == "define"] == [None, True]


@pytest.mark.parametrize("line,key,value,flag", [
    ("python train.py --num-workers 8", "num_workers", 8, "--num-workers"),
    ("python train.py --num_workers=8", "num_workers", 8, "--num_workers"),
    ("python train.py --actor.num_envs 2", "actor.num_envs", 2, "--actor.num_envs"),
    ("python train.py --world-size=-1", "world_size", -1, "--world-size"),
    ("./train.sh --n_envs 4 --fast", "n_envs", 4, "--n_envs"),
])
def test_argparse_flags(line, key, value, flag):
    r = sh(line + "\n")
    s = only(r, "define", key)
    assert (s.line, s.value, s.detail["via"], s.detail["flag"]) == (1, value, "flag", flag)


def test_flag_value_is_not_a_following_override_or_flag():
    r = sh("python t.py --serial_mode trainer.n_envs=3 --vec_env --num_threads 2\n")
    assert table(r) == {("define", 1, "serial_mode", True, None), ("define", 1, "trainer.n_envs", 3, None),
                        ("define", 1, "vec_env", True, None), ("define", 1, "num_threads", 2, None)}


def test_a_command_line_in_one_string_is_no_override():
    """`screen -X stuff "CUDA_VISIBLE_DEVICES=0 python3 -m worker ..."` hands a whole command to
    screen: not an override of CUDA_VISIBLE_DEVICES (FastChat's scripts/build-api.sh)."""
    r = sh('screen -DRRS w0 -X stuff "CUDA_VISIBLE_DEVICES=0 python3 -m serve.worker --port 21002 \\r"\n'
           "python m.py 'trainer.num_workers=4'\n")
    assert table(r) == {("define", 2, "trainer.num_workers", 4, None)}


def test_hydra_override_forms():
    text = ("python m.py a.b.num_workers=4 +x.n_envs=2 ++y.num_threads=1 ~z.world_size rollout/pool@p.nproc=3"
            " 'q.max_workers=${oc.env:N}'\n")
    r = sh(text)
    assert table(r) == {
        ("define", 1, "a.b.num_workers", 4, None), ("define", 1, "x.n_envs", 2, None),
        ("define", 1, "y.num_threads", 1, None), ("define", 1, "z.world_size", None, None),
        ("define", 1, "q.max_workers", None, None),
    }  # rollout/pool@p.nproc=3 selects option 3 of group rollout/pool at package p.nproc: no knob
    assert only(r, "define", "x.n_envs").detail["hydra_add"] == "+"
    assert only(r, "define", "y.num_threads").detail["hydra_add"] == "++"
    assert only(r, "define", "z.world_size").detail["hydra_delete"] is True
    interp = only(r, "define", "q.max_workers")  # single quotes: Hydra, not the shell, resolves it
    assert (interp.detail["interpolation"], interp.detail["reference"]) == ("${oc.env:N}", "N")
    starts = ["a.b.num", "+x.", "++y", "~z", "'q."]
    assert [s.column for s in r.sites] == [text.index(t) + 1 for t in starts]


def test_variable_chains_resolve_statically():
    text = "N=8\nM=$N\nW=${W:-4}\nexport OMP_NUM_THREADS=$W\npython t.py --num_workers $M --n_envs ${E:-2} --num_threads \"$U\"\n"
    r = sh(text)
    assert table(r, "define") == {
        ("define", 4, "OMP_NUM_THREADS", 4, None),
        ("define", 5, "num_workers", 8, None),
        ("define", 5, "n_envs", 2, None),
        ("define", 5, "num_threads", None, None),
    }
    assert only(r, "define", "num_workers").detail["resolved_from"] == "M"
    assert only(r, "define", "OMP_NUM_THREADS").detail["env_default"] is True
    assert only(r, "define", "n_envs").detail["env_default"] is True
    assert r.meta["shell_vars"]["used"] == {"N": 2, "W": 4, "M": 5, "E": 5, "U": 5}
    assert r.meta["shell_vars"]["defined"] == {"N": 1, "M": 2, "W": 3, "OMP_NUM_THREADS": 4}


def test_self_default_is_an_env_read_not_a_use():
    r = sh("NUM_WORKERS=${NUM_WORKERS:-4}\n")
    assert table(r) == {("define", 1, "NUM_WORKERS", 4, None), ("read", 1, "NUM_WORKERS", None, 4)}
    assert only(r, "read", "NUM_WORKERS").detail["env"] is True
    assert r.meta["shell_vars"] == {"defined": {"NUM_WORKERS": 1}, "used": {}, "exported": {}}


def test_env_prefix_and_env_command():
    r = sh("OMP_NUM_THREADS=1 MKL_NUM_THREADS=2 python t.py\nenv WORLD_SIZE=4 python t.py\necho $OMP_NUM_THREADS\n")
    assert table(r) == {("define", 1, "OMP_NUM_THREADS", 1, None), ("define", 1, "MKL_NUM_THREADS", 2, None),
                        ("define", 2, "WORLD_SIZE", 4, None), ("read", 3, "OMP_NUM_THREADS", None, None)}
    assert only(r, "read", "OMP_NUM_THREADS").detail["env"] is True  # the prefix did not persist
    assert {s.detail["via"] for s in r.sites if s.role == "define"} == {"env-prefix"}


def test_line_continuations_comments_and_quotes():
    text = (
        "# python t.py --num_workers 1\n"
        "python t.py \\\n"
        "  --name 'a # b' \\\n"
        "  --n_envs 4 # --num_threads 9\n"
        "  # --nproc 3\n"
        "echo '$NUM_WORKERS' \"#\" --max_workers=2\n"
    )
    r = sh(text)
    assert table(r) == {("define", 4, "n_envs", 4, None)}
    assert r.meta["shell_vars"]["used"] == {}


def test_heredoc_bodies_are_not_commands_but_unquoted_ones_use_variables():
    text = ("python - <<EOF\nimport os\nos.system('torchrun --nproc_per_node 8 x.py $N')\nEOF\n"
            "cat > cfg.yaml <<'YAML'\nnum_workers: $M\nYAML\n"
            "python t.py --num_envs 2\n")
    r = sh(text)
    assert table(r) == {("define", 8, "num_envs", 2, None)}
    assert r.meta["shell_vars"]["used"] == {"N": 3}


def test_arrays_and_word_splitting():
    text = ("ARGS=(--num_workers 8\n  --n-envs=4)\nARGS+=(trainer.nnodes=2)\nEXTRA=\"--num_threads 3\"\n"
            "python t.py \"${ARGS[@]}\" $EXTRA\n")
    r = sh(text)
    assert table(r) == {("define", 1, "num_workers", 8, None), ("define", 2, "n_envs", 4, None),
                        ("define", 3, "trainer.nnodes", 2, None), ("define", 5, "num_threads", 3, None)}
    assert only(r, "define", "n_envs").detail["via_array"] == "ARGS"
    assert only(r, "define", "num_threads").detail["split_from"] == "EXTRA"


def test_empty_prefix_variable_is_no_command():
    # `$VENV_PREFIX python -m torch.distributed.run ...` (Megatron's launch scripts): with
    # VENV_PREFIX="" the launcher is the command, and its options are read
    r = sh('VENV_PREFIX=""\nPROFILE=()\nGPUS_PER_NODE=8\n'
           '$VENV_PREFIX "${PROFILE[@]}" python -m torch.distributed.run --nproc_per_node $GPUS_PER_NODE t.py\n')
    s = only(r, "define", "nproc_per_node")
    assert (s.line, s.value, s.detail.get("launcher")) == (4, 8, "torch.distributed.run")


def test_launcher_held_in_a_variable():
    r = sh('LAUNCH="torchrun --nproc_per_node=$((TP * DP))"\nONE="torchrun --nproc_per_node=1"\n'
           'MSG="run torchrun --nproc_per_node=8 yourself"\n')
    assert r.meta["shell_vars"]["launchers"] == {"LAUNCH": 1}


def test_launcher_spellings():
    text = ("torchrun --nproc-per-node=4 --nnodes 2 -m pkg.train --num_workers 1\n"
            "python -m torch.distributed.launch --nproc_per_node 8 t.py\n"
            "accelerate launch --num_processes=2 t.py\n"
            "deepspeed --num_gpus=4 --num_nodes 1 t.py\n"
            "srun --ntasks-per-node=8 torchrun --nproc_per_node 8 t.py\n"
            "ray start --head --num-cpus 16\n")
    r = sh(text)
    got = {(s.line, s.key, s.value, s.detail.get("launcher")) for s in r.sites}
    assert got == {
        (1, "nproc_per_node", 4, "torchrun"), (1, "nnodes", 2, "torchrun"), (1, "num_workers", 1, "torchrun"),
        (2, "nproc_per_node", 8, "torch.distributed.launch"),
        (3, "num_processes", 2, "accelerate launch"),
        (4, "num_gpus", 4, "deepspeed"), (4, "num_nodes", 1, "deepspeed"),
        (5, "ntasks_per_node", 8, "srun"), (5, "nproc_per_node", 8, "torchrun"),
        (6, "num_cpus", 16, "ray"),
    }
    assert [s.detail.get("script") for s in r.sites if s.key == "num_workers"] == ["pkg.train"]


def test_used_but_never_defined_and_defined_never_used():
    r = sh("NPROC=8\nNUM_GPUS=4\ntorchrun --nproc_per_node $NPROCS t.py\n")
    sv = r.meta["shell_vars"]
    assert sv["defined"] == {"NPROC": 1, "NUM_GPUS": 2} and sv["used"] == {"NPROCS": 3}
    assert only(r, "define", "nproc_per_node").value is None


def test_case_patterns_and_arithmetic():
    text = ('while [[ $# -gt 0 ]]; do\n  case "$1" in\n    --num_workers) NW=$2; shift 2 ;;\n'
            "    *) shift ;;\n  esac\ndone\nTOTAL=$(( NW * 2 ))\npython t.py --num_workers $TOTAL\n")
    r = sh(text)
    assert table(r) == {("define", 8, "num_workers", None, None)}  # the case pattern is not a flag
    assert r.meta["shell_vars"]["used"] == {"NW": 7, "TOTAL": 8}


def test_generated_script_marked():
    r = sh("# Auto-generated by make_launch.py; do not edit\npython t.py --num_workers 2\n")
    assert r.meta["generated"] is True and only(r, "define", "num_workers").detail["generated"] is True


def test_lexer_positions_and_words():
    out = lex("A=1 b \"c d\"'e'\\\n  f; g && h | i\n")
    words = [[(w.text, w.offset) for w in cmd] for cmd in out.commands]
    assert words == [[("A=1", 0), ("b", 4), ("c de", 6), ("f", 18)], [("g", 21)], [("h", 26)], [("i", 30)]]


def test_extensionless_script_is_shell_kind():
    assert kind_of("bin/launch", b"#!/usr/bin/env bash\n") == "shell"


@pytest.mark.parametrize("text", [
    'echo "unterminated --num_workers 3', "a='x", "x=$(", "y=${", "cat <<EOF\nno end --num_workers 2",
    "`", "ARR=(a b", "((", "))", "case x in\n a) b;;\n", "\\", "\x00\x01 --num_workers 3",
    "f() { python t.py --n_envs 2; }\n", "if [ -n \"$X\" ]; then N=1; else N=2; fi\n",
])
def test_odd_scripts_never_crash(text):
    r = sh(text)
    assert set(r.meta["shell_vars"]) - {"measured", "reads"} == {"defined", "used", "exported"}


def test_a_variable_set_only_from_a_command_is_measured():
    r = sh("G=$(nvidia-smi -L | wc -l)\nN=8\nif [ -z \"$S\" ]; then N=$(nproc); fi\nM=$((N * 2))\n")
    assert r.meta["shell_vars"]["measured"] == ["G"]  # N is also typed; $((...)) is arithmetic


def test_the_variables_a_variable_reads_and_the_launches():
    r = sh("GPUS_PER_NODE=8\nNNODES=2\nWORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))\nDP=$((WORLD_SIZE / TP))\n"
           "ARGS=\"--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES\"\n"
           "python -m torch.distributed.launch $ARGS train.py\npython eval.py\n")
    assert r.meta["shell_vars"]["reads"] == {"WORLD_SIZE": ["GPUS_PER_NODE", "NNODES"], "DP": ["WORLD_SIZE", "TP"],
                                             "ARGS": ["GPUS_PER_NODE", "NNODES"]}
    assert r.meta["launches"] == [[6, "torch.distributed.launch"]]  # a bare python run is no launcher


def test_function_bodies_and_if_branches():
    r = sh("f() { python t.py --n_envs 2; }\nif true; then N=1; else N=2; fi\npython t.py --num_envs $N\n")
    assert table(r) == {("define", 1, "n_envs", 2, None), ("define", 3, "num_envs", 2, None)}
    # both branches assign known values; the last one read top to bottom wins, and is marked
    assert only(r, "define", "num_envs").detail["resolved_from"] == "N"
    assert only(r, "define", "num_envs").detail["conditional"] is True


def test_wrappers_and_launcher_held_in_a_variable():
    text = ("mpirun -np 4 python t.py --num_workers 2\n"
            "nohup env OMP_NUM_THREADS=2 uv run python t.py --max_workers 5 &\n"
            "LAUNCH=\"torchrun --nproc_per_node 2\"\n"
            "$LAUNCH t.py --num_envs 4\n"
            "python3 -u -W ignore t.py --num-threads=${THREADS:-3}\n")
    r = sh(text)
    got = {(s.role, s.line, s.key, s.value, s.default, s.detail.get("launcher")) for s in r.sites}
    assert got == {
        ("define", 1, "np", 4, None, "mpirun"), ("define", 1, "num_workers", 2, None, "mpirun"),
        ("define", 2, "OMP_NUM_THREADS", 2, None, None), ("define", 2, "max_workers", 5, None, None),
        ("define", 4, "nproc_per_node", 2, None, "torchrun"), ("define", 4, "num_envs", 4, None, "torchrun"),
        ("read", 5, "THREADS", None, 3, None), ("define", 5, "num_threads", 3, None, None),
    }
    assert only(r, "define", "nproc_per_node").detail["split_from"] == "LAUNCH"


def test_uv_run_options_and_module():
    r = sh("uv run --isolated --frozen --extra verl --env-file .env -m pkg.train trainer.num_workers=4\n"
           "uv run --with x python t.py --num_workers 3\n"
           "uv run --module pkg.serve server.num_gpus=2\n")
    got = {(s.line, s.key, s.detail.get("script")) for s in r.sites}
    # an option's value (`--extra verl`) is no program; `-m` runs the module, as python -m does
    assert got == {(1, "trainer.num_workers", "pkg.train"), (2, "num_workers", "t.py"), (3, "server.num_gpus", "pkg.serve")}


def test_crlf_script():
    r = sh("N=8\r\npython t.py \\\r\n  --num_workers $N\r\n")
    assert table(r) == {("define", 3, "num_workers", 8, None)}


def test_values_are_typed_like_hydra_overrides():
    r = sh("python t.py a.num_workers=08 b.n_envs=1.5 c.nproc=on d.num_cpus=1:30 e.serial_mode=False f.n_envs=null"
           " g.num_gpus=1e3\n")
    assert {s.key: s.value for s in r.sites} == {
        "a.num_workers": 8, "b.n_envs": 1.5, "c.nproc": "on", "d.num_cpus": "1:30", "e.serial_mode": False,
        "f.n_envs": None, "g.num_gpus": 1000.0}


def test_a_slurm_batch_script_is_a_shell_script_with_its_node_count():
    assert kind_of("jobs/multi_node.slurm") == kind_of("jobs/train.sbatch") == "shell"
    r = sh("#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\nsrun torchrun --nproc_per_node 4 t.py\n",
           "multi_node.slurm")
    assert r.meta["sbatch_nodes"] == [3, 2]
    assert sh("#!/bin/bash\n#SBATCH -N 4\nsrun python t.py\n").meta["sbatch_nodes"] == [2, 4]
    assert "sbatch_nodes" not in sh("#!/bin/bash\n# SBATCH --nodes=2 (a note, no directive)\n").meta


def test_names_in_an_arithmetic_for_loop_are_used():
    """`for ((i = 1; i <= WORKER_COUNT; i++))` reads WORKER_COUNT without a `$` (open-r1's
    serve_r1_vllm.slurm): not a variable set and never used."""
    r = sh("#!/bin/bash\nWORKER_COUNT=$((SLURM_JOB_NUM_NODES - 1))\n"
           "for ((i = 1; i <= WORKER_COUNT; i++)); do\n  echo $i\ndone\n(( NUM_GPUS > 1 )) && echo many\n")
    used = r.meta["shell_vars"]["used"]
    assert used["WORKER_COUNT"] == 3 and used["NUM_GPUS"] == 6 and "i" in used


@pytest.mark.parametrize("line,was", [
    ("NUM_PROCESSES=1 #$((NUM_GPUS_PER_NODE * NUM_NODES))", "$((NUM_GPUS_PER_NODE * NUM_NODES))"),
    ("export NUM_PROCESSES=2  # ${NGPUS}", "${NGPUS}"),
    ("NUM_PROCESSES=1  # one process: the model fits on a GPU", None),
    ("NUM_PROCESSES=$((NGPUS * 2))  # $NGPUS", None),  # the live value is the computed one
])
def test_a_literal_count_beside_its_commented_out_expansion(line, was):
    site = only(sh(f"NGPUS=8\n{line}\ntorchrun --nproc_per_node $NUM_PROCESSES train.py\n"), "define", "NUM_PROCESSES")
    assert site.detail.get("commented_out") == was

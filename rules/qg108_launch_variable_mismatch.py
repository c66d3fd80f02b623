"""QG108 launch-variable-mismatch: a launch script defines one parallelism variable and uses another."""

import posixpath
import re

from auditor.lint.base import Example, Rule, is_test_file, similar
from auditor.vocab import load as load_vocab, normalise


def _vars(result):
    """{shell file: (defined {VAR: line}, used {VAR: line}, exported {VAR: line}, measured {VAR},
    reads {VAR: [VAR its value reads]})} from the extractor's meta."""
    out = {}
    for path, meta in result.meta.items():
        sv = meta.get("shell_vars") if isinstance(meta, dict) else None
        if sv:
            out[path] = (dict(sv.get("defined", {})), dict(sv.get("used", {})), dict(sv.get("exported", {})),
                         set(sv.get("measured") or ()), dict(sv.get("reads") or {}))
    return out


# variables whose absence a program reads as 1 (torch.distributed's WORLD_SIZE): set to 1 and
# left unexported, they say what already runs in a one-process launch
_UNSET_IS_ONE = {"world_size"}

# a launcher's count of processes (per node or in all), and the variable names that mean one
_PROCESS_FLAGS = {"nproc_per_node", "num_gpus", "num_processes", "np"}
_PROCESS_COUNTS = {"world_size", "num_gpus", "n_gpus", "ngpus", "gpus", "gpu_num", "num_gpu", "gpus_per_node",
                   "num_gpus_per_node", "n_gpus_per_node", "nproc_per_node", "nproc", "nprocs", "num_processes",
                   "num_procs", "n_proc"}

# the launcher option that says how many nodes the job spans, for launchers that default to one
_NODE_FLAGS = {"torchrun": "nnodes"}


def _literal_flags(result) -> dict:
    """(shell file, flag name) -> the define site of a flag given a literal in that file
    (`--n_rollout_threads 50`; not `--nproc_per_node=${NPROC_PER_NODE:-8}`, the variable's
    value with a default)."""
    out = {}
    for s in result.sites:
        if s.kind == "shell" and s.role == "define" and s.detail.get("via") == "flag" and s.value is not None \
                and not s.detail.get("reference"):
            out.setdefault((s.file, normalise(s.leaf)), s)
    return out


def _flag_name(site) -> str:
    """The flag as the script spells it (`--n-rollout-threads`; a shell site keeps it in `flag`)."""
    return site.detail.get("flag") or f"--{site.leaf}"


def _shell_sites(result) -> dict:
    """shell file -> its sites, gathered once."""
    out: dict[str, list] = {}
    for s in result.sites:
        if s.kind == "shell":
            out.setdefault(s.file, []).append(s)
    return out


def _launcher_fed(sites, reads) -> set:
    """The variables a launcher's options get in this script: `--nnodes $NNODES`, or through a
    variable split into options (`DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE ..."`)."""
    fed, via = set(), []
    for s in sites:
        if s.detail.get("launcher_option"):
            fed.update(n for n in (s.detail.get("reference"), s.detail.get("resolved_from")) if n)
            via.extend(n for n in (s.detail.get("split_from"), s.detail.get("via_array")) if n)
    return fed | _reach(via, reads)


def _reach(starts, edges) -> set:
    """Every name reachable from STARTS along EDGES (name -> names), in one step or more."""
    seen, todo = set(), list(starts)
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def _one_process(result, path, sites) -> bool:
    """Whether every launch in this script starts one process: none at all (`python train.py`),
    or each launcher told a literal 1 (`deepspeed --num_gpus 1`) and no larger count."""
    meta = result.meta.get(path)
    launches = meta.get("launches") if isinstance(meta, dict) else None
    counts: dict = {}
    for s in sites:
        if s.detail.get("launcher_option"):
            counts.setdefault(s.detail.get("command_line", s.line), []).append(s.value)
    for line, _launcher in launches or ():
        values = counts.get(line, [])
        if 1 not in values or any(not isinstance(v, int) or isinstance(v, bool) or v > 1 for v in values):
            return False
    return True


# a script sourced from outside the project (a conda or venv activation, the user's profile):
# it sets the environment up and reads nothing of the caller's
_EXTERNAL_SOURCE = re.compile(r"^(?:/|~|\$\{?HOME\b|\$\{?CONDA)|(?:^|/)(?:activate|\.bashrc|\.bash_profile|\.profile"
                              r"|conda\.sh|[^/]*\.env|\.env)$")
# the directory a sourced path starts from (``pwd``/, `$(dirname "$0")/`, `${SCRIPT_DIR}/`)
_LEADING_EXPANSION = re.compile(r"^(?:`[^`]*`|\$\([^()]*\)|\$\{[^}]*\}|\$\w+)/+")


def _resolve_source(written: str, path: str, shell_files) -> str | None:
    """The scanned script a `source` names: ``. `pwd`/SBATCH.sh`` beside run.sh is SBATCH.sh in
    run.sh's folder. None for one outside the project (`source activate env`) and for one the
    scan did not parse: a script that mentions no parallelism setting reads none of them."""
    text = written.strip()
    if not text or _EXTERNAL_SOURCE.search(text):
        return None
    m = _LEADING_EXPANSION.match(text)
    tail = text[m.end():] if m else text
    if "$" in tail or "`" in tail:
        return None
    folder = posixpath.dirname(path)
    for cand in (posixpath.normpath(posixpath.join(folder, tail)), posixpath.normpath(tail)):
        if cand in shell_files:
            return cand
    return None


def _source_links(result, files) -> dict:
    """shell file -> the scanned scripts it sources and those that source it, each followed on
    in its own direction: they read its variables, or set the ones it reads. (Two scripts that
    source the same one read nothing of each other's.)"""
    down: dict[str, set[str]] = {}
    up: dict[str, set[str]] = {}
    for path in files:
        meta = result.meta.get(path)
        for written in (meta.get("sources") or ()) if isinstance(meta, dict) else ():
            target = _resolve_source(str(written), path, files)
            if target and target != path:
                down.setdefault(path, set()).add(target)
                up.setdefault(target, set()).add(path)
    return {path: (_reach([path], down) | _reach([path], up)) - {path} for path in set(down) | set(up)}


def _value(sites, var):
    return next((s.value for s in sites if s.role == "define" and s.leaf == var
                 and s.detail.get("via") == "assignment"), None)


def _line(v):
    return v[0] if isinstance(v, (list, tuple)) else v


class LaunchVariableMismatch(Rule):
    CODE = "QG108"
    NAME = "launch-variable-mismatch"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{problem}"
    RATIONALE = """\
Launch scripts often set a parallelism variable and pass another: `NUM_WORKERS=16` then
`--num-workers $NUM_WORKER`. The unset variable expands to an empty string, the program falls
back to its default, and the script reads as if 16 were used. The same happens when a
script defines a variable it never uses, or reads an environment variable spelled
differently from its sibling scripts (`N_GPUS` here, `NUM_GPUS` everywhere else).

Exported variables are not reported as unused: a child process may read them. Nor is a
variable only ever set from a command's output (`NUM_GPUS=$(nvidia-smi -L | wc -l)`): it is a
measurement, not a value a user edits, so leaving it unused loses nothing. Nor is one computed
from the counts the launcher is given (`WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))` beside
`--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES`): the launch runs that product. One computed
from a count that reaches no launcher (`WORLD_SIZE=$((TP*PP*DP))`, DP only in a checkpoint
name) is reported: nothing starts DP replicas. An unused `WORLD_SIZE=1` in a script that
starts one process is a note: a program reads an absent WORLD_SIZE as 1, so this run loses
nothing, but setting it to more changes nothing. Other counts set to 1 and never used stay
warnings (`NUM_NODES=1` that never reaches the trainer's node count).

A variable the script never uses itself may be read by a script it sources: `NNODES=8` then
``. `pwd`/SBATCH.sh``, whose `sbatch --nodes=${NNODES}` takes it (and a script sourced by
another reads what that one sets). The sourced path is resolved against the scanned scripts,
from the script's folder or the project's root, after a leading `` `pwd` ``, `$(dirname "$0")`
or `${DIR}`. A sourced script the scan did not parse mentions no parallelism setting, so it reads
none; activation scripts and `.env` files read nothing of the caller's.

A script that reads a variable it never sets (`echo "threads: ${n_rollout_threads}"`) while it
passes a literal to the flag of that name (`--n_rollout_threads 50`) reports one count and runs
another: whatever the variable holds, the literal runs.

A SLURM batch script that asks for several nodes (`#SBATCH --nodes=2`) and starts torchrun on
them without `--nnodes` runs torchrun's default of one node per job: each node's ranks train
apart, or the later nodes wait and the job trains on one.

A process count that only feeds values computed from it (`WORLD_SIZE=8` sizing the global
batch and naming the job) while the script's launcher gets a literal count
(`torchrun --nproc_per_node=8`) follows nothing: set it to 16 and the batch arithmetic changes,
the processes started do not. Only when every read of the variable is such an assignment; one
read by a command of its own (a loop, an argument) is left alone.

A sharded launch whose number of processes is written by hand while each process is told the
shard count from a variable (`CHUNKS=8; for IDX in {0..7}; do ... --num-chunks $CHUNKS
--chunk-idx $IDX &`, or eight command lines that differ only in `--local_index 0` ... `7`, each
with `--my_world_size ${my_world_size}`) starts the literal count whatever the variable says:
set it to 4 and eight processes split the work four ways, each shard twice; to 16 and half the
shards never run. A loop over `$(seq 0 $((CHUNKS-1)))` follows the variable."""
    VALID = [
        Example({"start.sh": "#!/bin/bash\nNUM_WORKERS=${NUM_WORKERS:-4}\n"
                             "awk -v upstream_file=\"$UPSTREAM_FILE\" '\n"
                             "/UPSTREAM/ {\n    while ((getline line < upstream_file) > 0) {\n        print line\n"
                             "    }\n    next\n}\n{ print }' /tmp/nginx.conf\n"
                             "for i in $(seq 1 $NUM_WORKERS); do\n    uwsgi --socket /tmp/worker${i}.sock &\ndone\n"
                             "(( NUM_WORKERS > 1 )) && echo \"$NUM_WORKERS workers started\"\n"},
                "`((` inside an awk program is no arithmetic command: the words up to a `))` lines later are "
                "not variables"),
        Example({"train.sh": "#!/bin/bash\nVENV_PREFIX=\"\"\nGPUS_PER_NODE=8\nNUM_NODES=1\n"
                             "WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))\n"
                             "$VENV_PREFIX python -m torch.distributed.run --nproc_per_node $GPUS_PER_NODE "
                             "--nnodes $NUM_NODES pretrain.py\n"},
                "a world size computed from the counts the launcher gets, behind an empty prefix variable"),
        Example({"pretrain.sh": "#!/bin/bash\nTP=2\nGPUS=8\nMBS=2\nGBS=$(($GPUS * $MBS / $TP * 8))\n"
                                "torchrun --nproc_per_node=$GPUS pretrain.py --global-batch-size $GBS\n"},
                "the count that sizes the batch is the one torchrun gets"),
        Example({"eval.sh": "#!/bin/bash\nNUM_GPUS=4\nBS=$((NUM_GPUS * 16))\n"
                            "for i in $(seq 0 $((NUM_GPUS - 1))); do\n"
                            "    CUDA_VISIBLE_DEVICES=$i python eval.py --shard $i --batch-size $BS &\ndone\n"
                            "wait\ntorchrun --nproc_per_node=8 merge.py\n"},
                "the count is also read by a command of its own (the loop starting one process per GPU)"),
        Example({"sc21/run_fig.sh": "#!/bin/bash\nPP=2\nNNODES=${PP}\nexport JOB_NAME=fig_${PP}\n. `pwd`/SBATCH.sh\n",
                 "sc21/SBATCH.sh": "#!/bin/bash\nsbatch --job-name=${JOB_NAME} --nodes=${NNODES} SRUN.sh\n"},
                "the variable is read by the script it sources, named from `pwd`"),
        Example({"gen.sh": "#!/bin/bash\nGPUS_PER_NODE=1\nNNODES=1\nMASTER_PORT=$(($RANDOM + 1024))\n"
                           "WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))\n"
                           "DISTRIBUTED_ARGS=\"--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_port $MASTER_PORT\"\n"
                           "python -m torch.distributed.run $DISTRIBUTED_ARGS gen.py\n"},
                "a world size computed from the counts the launcher gets, through options one of whose "
                "values is unknown (a random port)"),
        Example({"train.slurm": "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\n"
                                "srun torchrun --nproc_per_node=$SLURM_GPUS_PER_NODE \\\n"
                                "    --nnodes=$SLURM_NNODES \\\n    train.py\n"},
                "torchrun's --nnodes on a continuation line of the same command"),
        Example({"eval.sh": "#!/bin/bash\nCHUNKS=8\nfor IDX in $(seq 0 $((CHUNKS-1))); do\n"
                            "    python eval.py --num-chunks $CHUNKS --chunk-idx $IDX &\ndone\nwait\n"},
                "a sharded launch whose loop follows the shard count"),
        Example({"train.sh": "#!/bin/sh\nn_rollout_threads=50\n"
                             "echo \"n_rollout_threads: ${n_rollout_threads}\"\n"
                             "python train.py --n_rollout_threads ${n_rollout_threads}\n"},
                "the variable it reports is the one it passes"),
        Example({"run.sh": "#!/bin/bash\nNUM_WORKERS=16\npython train.py --num-workers $NUM_WORKERS\n"},
                "defined and passed"),
        Example({"run.sh": "#!/bin/bash\nexport OMP_NUM_THREADS=4\npython train.py\n"},
                "exported for the child process"),
        Example({"run.sh": "#!/bin/bash\nNUM_GPUS=$(nvidia-smi -L | wc -l)\npython train.py\n"},
                "a count measured by a command and left unused: nothing a user set is lost"),
        Example({"serve.sh": "#!/bin/bash\ntensor_parallel_size=4\nBODY=$(cat <<'BODY_EOF'\n"
                             "TENSOR_PARALLEL_SIZE=$(pool_value TENSOR_PARALLEL_SIZE)\n"
                             "vllm serve --tensor-parallel-size \"${TENSOR_PARALLEL_SIZE}\"\nBODY_EOF\n)\n"
                             "srun bash -c \"$BODY\" --tp \"$tensor_parallel_size\"\n"},
                "a script body in a quoted heredoc: its variables are the generated script's"),
        Example({"pool.sh": "#!/bin/bash\nrecompute() {\n  local gpus_per_node=\"${GPUS_PER_NODE:-4}\"\n"
                            "  echo $(( gpus_per_node * 2 ))\n}\n"},
                "a local set from the environment variable it spells differently"),
        Example({"launch.sh": "#!/bin/bash\nnodes=($(scontrol show hostnames))\nfirst=$((replica * 2))\n"
                              "replica_node_count=2\nreplica_nodes=(\"${nodes[@]:first:replica_node_count}\")\n"
                              "srun --nodelist \"${replica_nodes[*]}\" python serve.py\n"},
                "a count used as the length of an array slice"),
        Example({"run.sh": "#!/bin/bash\nNUM_WORKERS=16\n# python train.py --num-workers $NUM_WORKER\n"
                           "python train.py --num-workers $NUM_WORKERS\n"},
                "a commented-out command does not count"),
        Example({"multi_node.slurm": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=2\n"
                                     "srun torchrun --nnodes 2 --nproc_per_node 4 --rdzv_backend c10d train.py\n"},
                "torchrun told how many nodes the batch job has"),
        Example({"pretrain.sh": "#!/bin/bash\nGPUS_PER_NODE=8\nNNODES=2\nWORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))\n"
                                "DISTRIBUTED_ARGS=\"--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES\"\n"
                                "python -m torch.distributed.launch $DISTRIBUTED_ARGS pretrain.py\n"},
                "an unused world size computed from the counts the launcher gets: the launch runs that product"),
        Example({"eval/run.sh": "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
                                "python -m torch.distributed.launch --nproc_per_node=${NPROC_PER_NODE:-8} "
                                "--nnodes=${WORLD_SIZE:-1} eval.py\n"},
                "a variable the launcher gets with a default (`${NPROC_PER_NODE:-8}`): its value runs"),
    ]
    INVALID = [
        Example({"pretrain.sh": "#!/bin/bash\nTP=2\nWORLD_SIZE=8\nMBS=2\nGBS=$(($WORLD_SIZE * $MBS / $TP * 8))\n"
                                "torchrun --nproc_per_node=8 pretrain.py --tensor-model-parallel-size $TP "
                                "--global-batch-size $GBS\n"},
                "a world size that only sizes the batch while torchrun gets a literal count",
                expect=[("pretrain.sh", 3)]),
        Example({"sc21/run_fig.sh": "#!/bin/bash\nPP=2\nNNODES=${PP}\n. `pwd`/SBATCH.sh\n",
                 "sc21/SBATCH.sh": "#!/bin/bash\nsbatch --ntasks-per-node=${GPUS_PER_NODE} SRUN.sh\n"},
                "the script it sources reads another count, not this one", expect=[("sc21/run_fig.sh", 3)]),
        Example({"runs/run_a.sh": "#!/bin/bash\nNUM_GPUS=8\n. ./common.sh\npython train.py --workers $NUM_WORKERS\n",
                 "runs/run_b.sh": "#!/bin/bash\nNUM_GPUS=4\n. ./common.sh\ntorchrun --nproc_per_node $NUM_GPUS train.py\n",
                 "runs/common.sh": "#!/bin/bash\nNUM_WORKERS=${NUM_WORKERS:-4}\n"},
                "a sibling that sources the same script uses its own NUM_GPUS, not this one's",
                expect=[("runs/run_a.sh", 2)]),
        Example({"eval.sh": "#!/bin/bash\nCHUNKS=8\nfor IDX in {0..7}; do\n"
                            "    python eval.py --num-chunks $CHUNKS --chunk-idx $IDX &\ndone\nwait\n"},
                "a sharded launch over a literal range, each process told $CHUNKS", expect=[("eval.sh", 3)]),
        Example({"gen.sh": "#!/bin/bash\nworld=4\n"
                           "python gen.py --local_index 0 --my_world_size ${world} &\n"
                           "python gen.py --local_index 1 --my_world_size ${world} &\n"
                           "python gen.py --local_index 2 --my_world_size ${world} &\nwait\n"},
                "command lines written out one per shard, each told the count from a variable",
                expect=[("gen.sh", 3)]),
        Example({"train_3v1.sh": "#!/bin/sh\nnum_agents=3\n"
                                 "echo \"n_rollout_threads: ${n_rollout_threads}\"\n"
                                 "python train.py --num_agents ${num_agents} --n_rollout_threads 50\n"},
                "reports a variable it never sets, and passes a literal to the flag of that name",
                expect=[("train_3v1.sh", 3)]),
        Example({"run.sh": "#!/bin/bash\nNUM_WORKERS=16\npython train.py --num-workers $NUM_WORKER\n"},
                "defines one name, passes another", expect=[("run.sh", 3)]),
        Example({"run.sh": "#!/bin/bash\nNUM_GPUS=8\nif [ -z \"$SLURM_JOB_ID\" ]; then NUM_GPUS=$(nvidia-smi -L | wc -l); fi\n"
                           "python train.py\n"}, "a count the user sets, and measures otherwise, never used",
                expect=[("run.sh", 2)]),
        Example({"scripts/train_a.sh": "#!/bin/bash\npython train.py --num-gpus $NUM_GPUS\n",
                 "scripts/train_b.sh": "#!/bin/bash\npython train.py --num-gpus $NUM_GPUS --seed 2\n",
                 "scripts/train_c.sh": "#!/bin/bash\npython train.py --num-gpus $N_GPUS\n"},
                "one script reads an environment variable its siblings spell differently",
                expect=[("scripts/train_c.sh", 2)]),
        Example({"multi_node.slurm": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=2\n"
                                     "srun torchrun --nproc_per_node 4 --rdzv_backend c10d train.py\n"},
                "two nodes asked of SLURM, torchrun left at its one-node default", expect=[("multi_node.slurm", 4)]),
        Example({"run.sh": "#!/bin/bash\nTP=2\nPP=2\nDP=4\nWORLD_SIZE=$((TP*PP*DP))\n"
                           "deepspeed pretrain.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP "
                           "--save ckpt/tp${TP}_pp${PP}_dp${DP}\n"},
                "a world size computed and never passed: DP only names the checkpoint, the launcher takes every GPU",
                expect=[("run.sh", 5)]),
        Example({"pretrain.sh": "#!/bin/bash\nRANK=0\nWORLD_SIZE=1\npython pretrain.py --num-layers 24\n"},
                "WORLD_SIZE=1 never used by a script that starts one process: a note, nothing is lost yet",
                expect=[("pretrain.sh", 3)], severity="note"),
        Example({"run.sh": "#!/bin/bash\nNUM_NODES=1\nNUM_GPUS=8\n"
                           "python -m trainer.main trainer.num_gpus=$NUM_GPUS\n"},
                "a node count of 1 that never reaches the trainer: a warning, unlike WORLD_SIZE",
                expect=[("run.sh", 2)], severity="warning"),
    ]

    def check(self, result):
        vocab = load_vocab(result.settings or {})
        knobish = lambda name: vocab.match(name) is not None  # noqa: E731
        files = _vars(result)
        literal_flags = _literal_flags(result)
        by_file = _shell_sites(result)
        links = _source_links(result, files)
        for path, (defined, used, exported, measured, reads) in files.items():
            linked = links.get(path, ())
            # (SBATCH.sh reads the NNODES that each run_*.sh sourcing it sets)
            set_by_linked = {v for other in linked for v in files[other][0]}
            for var, line in used.items():
                if var in defined or var in set_by_linked:
                    continue
                flag = literal_flags.get((path, normalise(var)))
                if flag is not None and knobish(var):
                    yield self.finding(None, file=path, line=_line(line), column=1, knob=var,
                                       related=[flag],
                                       problem=f"${var} is used here but never set in this script, which passes "
                                               f"a literal {flag.value} to {_flag_name(flag)} (line {flag.line}): "
                                               f"whatever ${var} says, {flag.value} runs")
                    continue
                # a misspelling need not be in the vocabulary (N_GPUS); its twin must be
                # not one defined from this very use (`local gpus_per_node="${GPUS_PER_NODE:-4}"`)
                twin = next((d for d in defined if knobish(d) and similar(var, d) and defined[d] != line), None)
                if twin:
                    yield self.finding(None, file=path, line=_line(line), column=1, knob=var,
                                       problem=f"${var} is used but never set in this script (it sets {twin} at "
                                               f"line {_line(defined[twin])}), so it expands to nothing and the "
                                               f"program's default runs")
                    continue
                siblings = self._siblings(files, path)
                if var in siblings:
                    continue
                other = next((s for s in siblings if knobish(s) and similar(var, s)), None)
                if other:
                    yield self.finding(None, file=path, line=_line(line), column=1, knob=var,
                                       problem=f"${var} is read here but the sibling scripts use {other}; "
                                               f"whoever sets {other} does not set {var}", confidence="medium")
            fed = _launcher_fed(by_file.get(path, ()), reads)
            one_process = None
            # `NNODES=8` then ``. `pwd`/SBATCH.sh``, which passes `--nodes=${NNODES}`: the sourced
            # script reads it (and one that sources this script may)
            used_by_linked = {v for other in linked for v in files[other][1]}
            for var, line in defined.items():
                if var in used or not knobish(var) or var in exported or var in measured or var in used_by_linked:
                    continue  # (a command's output, `$(nvidia-smi -L | wc -l)`, is no value a user edits)
                if any(similar(var, u) for u in used):
                    continue  # reported at the use above
                if reads.get(var) and all(name in fed for name in reads[var]):
                    continue  # WORLD_SIZE=$((GPUS_PER_NODE*NNODES)), each factor given to the launcher
                if var.lower() in _UNSET_IS_ONE and one_process is None:
                    one_process = _one_process(result, path, by_file.get(path, ()))
                if var.lower() in _UNSET_IS_ONE and one_process and _value(by_file.get(path, ()), var) == 1:
                    yield self.finding(None, file=path, line=_line(line), column=1, knob=var, severity="note",
                                       problem=f"{var}=1 is set here but never used or exported: this script "
                                               f"starts one process anyway, but setting {var} to more changes "
                                               f"nothing")
                    continue
                yield self.finding(None, file=path, line=_line(line), column=1, knob=var,
                                   problem=f"{var} is set here but never used or exported, so it changes nothing")
            yield from self._derived_only(path, defined, reads, fed, by_file.get(path, ()), knobish,
                                          exported, measured, used_by_linked)
        yield from self._nodes_unused(result)
        yield from self._hand_counted_shards(result)

    def _derived_only(self, path, defined, reads, fed, sites, knobish, exported, measured, used_by_linked):
        """`WORLD_SIZE=8` that only sizes the batch (`GLOBAL_BATCH_SIZE=$((WORLD_SIZE * MBS))`)
        and names the job, while the script's launcher gets a literal `--nproc_per_node=8`: set
        it to 16 and the batch arithmetic follows, the processes started do not."""
        readers: dict[str, list[str]] = {}
        for name, refs in reads.items():
            for ref in refs:
                readers.setdefault(ref, []).append(name)
        launches = [s for s in sites if s.role == "define" and s.detail.get("launcher_option")
                    and normalise(s.leaf) in _PROCESS_FLAGS and isinstance(s.value, int) and s.value > 1
                    and not s.detail.get("reference") and not s.detail.get("split_from")]
        if not launches:
            return
        # every variable whose value reaches the launcher, however many assignments away
        reaching = set(fed) | _reach(fed, reads)
        for var, line in defined.items():
            name = normalise(var)
            if not (name in _PROCESS_COUNTS or name.endswith("_gpus")) or not knobish(var) or var in reaching \
                    or var in exported or var in measured or var in used_by_linked or not readers.get(var):
                continue
            value = _value(sites, var)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                continue
            derived_at = {_line(defined[r]) for r in readers[var] if r in defined}
            uses = [s for s in sites if s.role == "read" and s.leaf == var]
            if not uses or any(s.line not in derived_at for s in uses):
                continue  # read in a command of its own (a loop, an argument): not only arithmetic
            if any(s.role == "define" and s.kind == "shell" and var in (s.detail.get("reference"),
                                                                         s.detail.get("resolved_from")) for s in sites):
                continue
            flag = launches[0]
            names = ", ".join(sorted(readers[var])[:3])
            yield self.finding(None, file=path, line=_line(line), column=1, knob=var, related=[flag],
                               problem=f"{var}={value} only feeds values computed from it ({names}), while "
                                       f"{flag.detail.get('launcher') or 'the launcher'} gets a literal "
                                       f"{_flag_name(flag)} {flag.value} (line {flag.line}): set {var} to "
                                       f"another count and those values follow it, the processes started do not")

    def _hand_counted_shards(self, result):
        """`CHUNKS=8; for IDX in {0..7}; do ... --num-chunks $CHUNKS --chunk-idx $IDX &`, or
        eight command lines with `--local_index 0` ... `7` and `--my_world_size
        ${my_world_size}`: the variable is the shard count every process is told, the literal
        is how many run (extractor fact `sharded_launches`)."""
        for rel, meta in sorted(result.meta.items()):
            if not isinstance(meta, dict) or is_test_file(rel):
                continue
            for fact in meta.get("sharded_launches") or ():
                started = (f"a loop over a literal range of {fact['count']}" if fact["how"] == "loop"
                           else f"{fact['count']} command lines written out")
                yield self.finding(None, file=rel, line=fact["line"], column=1, knob=fact["var"],
                                   problem=f"{fact['count']} processes are started here ({started}, "
                                           f"{fact['index_flag']} 0..{fact['count'] - 1}), each told "
                                           f"{fact['count_flag']} ${fact['var']}: how many run does not follow "
                                           f"${fact['var']}; set it to anything but {fact['count']} and shards are "
                                           f"skipped or run twice")

    def _nodes_unused(self, result):
        """`#SBATCH --nodes=2`, then `srun torchrun --nproc_per_node 4 ...` with no --nnodes."""
        launches: dict[tuple, list] = {}
        for s in result.sites:
            if s.kind == "shell" and s.detail.get("launcher_option") and s.detail.get("launcher") in _NODE_FLAGS:
                # one command, however many lines its options are continued over
                launches.setdefault((s.file, s.detail.get("command_line", s.line), s.detail["launcher"]), []).append(s)
        for (rel, line, launcher), options in sorted(launches.items()):
            meta = result.meta.get(rel)
            nodes = meta.get("sbatch_nodes") if isinstance(meta, dict) else None
            if not nodes or not isinstance(nodes[1], int) or nodes[1] < 2:
                continue
            if any(o.leaf.lower() == _NODE_FLAGS[launcher] for o in options):
                continue
            yield self.finding(options[0], knob=_NODE_FLAGS[launcher],
                               problem=f"#SBATCH asks for {nodes[1]} nodes (line {nodes[0]}), but {launcher} here gets "
                                       f"no --{_NODE_FLAGS[launcher]}, so it runs its default of 1 node: the nodes "
                                       f"do not form one job")

    @staticmethod
    def _siblings(files, path):
        folder = posixpath.dirname(path)
        names = set()
        for other, (defined, used, _exported, _measured, _reads) in files.items():
            if other != path and posixpath.dirname(other) == folder:
                names |= set(defined) | set(used)
        return names

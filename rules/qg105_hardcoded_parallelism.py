"""QG105 hardcoded-parallelism: a consumer gets a literal count no configuration reaches."""

import re
from collections import Counter
from functools import lru_cache

from auditor.flow.values import reads_configuration
from auditor.keys import holder_of
from auditor.lint import idioms
from auditor.lint.base import (CONFIG_KINDS, SETTINGS_VIAS, Example, Rule, as_number, backend_entry, backend_kind,
                               commented_out, environment_writes, in_examples, ImportNeighbours, is_config_define,
                               is_test_file, is_test_site, modules_to_files, near_files, project_packages, show,
                               steps_envs, where)

# a loader over an empty literal (`DataLoader([])`, `DataLoader(dataset=())`): no work to split
_EMPTY_DATA = re.compile(r"\b\w+\(\s*(?:\w+\s*=\s*)?(?:\[\s*\]|\(\s*\))\s*[,)]")
# one batch drawn from a loader made for it (`next(iter(DataLoader(ds)))`): a probe
_ONE_BATCH = re.compile(r"\bnext\(\s*iter\(\s*[\w.]*DataLoader\(")

# thread pools whose width is real work: the program's own computation, or a process per task
_WORK_POOLS = ("compute", "process-start")

# Resource annotations and thread pinning have rules or meanings of their own.
_SKIP_BACKENDS = ("torch.set_num_threads", "torch.set_num_interop_threads", "threadpoolctl.threadpool_limits",
                  "ray.remote", "ray.remote(...).options",
                  # model-parallel groups of 1 for a converter or a test are on purpose; QG109 reads these calls
                  "megatron.core.parallel_state.initialize_model_parallel")


# a call that builds settings: a class (`ParallelismConfig`) or a function (`build_launch_config`,
# `configure_train_module` in a recipe script, which is itself the configuration)
CONSTRUCTS_CONFIG = re.compile(r"(Config|Configs|Args|Arguments|Spec|Settings|Options|Params)$"
                               r"|_(config|configs|args|settings|options|params|spec)$|^configure_")
STATEMENT_LINES = 10  # lines of one call statement, from its first line to a keyword's
TABLE = 3  # literal defines of one key in one file: a table of settings written in code
SETTINGS_KEYWORDS_MIN = 3  # keywords of one call read from the user's settings before a literal beside them stands out
SIBLINGS_MIN = 3  # configs routing the key before a literal among them stands out
SIBLINGS_RATIO = 3  # routed files per literal file, at least
# a settings object by its name (`data_config`, `data_args`, `rollout_cfg`), and the names that
# many scripts give their own, different settings
_SETTINGS_HOLDER = re.compile(r"(cfg|conf|config|args|opt|param|setting|hparam)", re.IGNORECASE)
_GENERIC_HOLDERS = frozenset({"args", "cfg", "config", "conf", "opt", "opts", "options", "params", "hparams",
                              "kwargs", "settings"})


# a launcher flag that counts something: nodes, processes, GPUs
_COUNT_FLAG = re.compile(r"n(um_?)?nodes|nproc|num_?proc|gpus|np$|ntasks", re.IGNORECASE)


def _shards(site, param) -> bool:
    """Does PARAM split one model over devices (rules/consumers.yaml `shards`: vLLM's
    tensor_parallel_size)?"""
    return any(c.get("param") == param and c.get("shards") for c in backend_entry(site).get("counts") or ())


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _splats_the_section(detail: dict, other, file: str) -> bool:
    """Does the call splat the mapping the cited setting is read from (`num_proc=1,
    **load_dataset_kwargs` where the file reads `dataset_kwargs.get("num_proc")`)? Then a
    user's key reaches the call too, and clashes with the literal (a TypeError), not lost."""
    root = str(other.detail.get("root") or "") if other.file == file else ""
    return bool(root) and any(name == root or name.endswith("_" + root) or root.endswith("_" + name)
                              for name in detail.get("kwargs_after") or ())


def _takes_settings(file: str, meta: dict) -> str | None:
    """The settings object a program file reads (`args`, `self.cfg`), outside examples and
    docs: a literal count there is one the program could have offered and did not. None for a
    file that reads no settings (a helper, a table of presets)."""
    if in_examples(file):
        return None
    facts = meta.get(file)
    return facts.get("reads_settings") if isinstance(facts, dict) else None


def _configured_by_leaf(result):
    """leaf -> sites that set or read a knob of that leaf (config, parser, code, launch script)."""
    out: dict[str, list] = {}
    for knob in result.knobs:
        for s in knob.sites:
            if s.role == "consume" or s.detail.get("generated"):
                continue
            if is_config_define(s) or s.role == "read" or (s.role == "define" and s.kind == "shell"):
                out.setdefault(knob.leaf.lower(), []).append(s)
    return out


def _parsed_field(site, candidates, meta):
    """The field of that name of a settings class this file hands to its parser
    (`ArgumentParserPlus((Args, DatasetConfig, GenerationArgs))` and DatasetConfig.num_proc):
    the user sets it on this script's command line, so a literal here drops it."""
    m = meta.get(site.file)
    parsed = {c.rsplit(".", 1)[-1] for p in (m.get("parses") or ()) for c in p.get("classes") or ()} \
        if isinstance(m, dict) else set()
    if not parsed:
        return None
    return next((c for c in candidates if c.role == "define" and c.detail.get("via") in SETTINGS_VIAS
                 and c.detail.get("owner") in parsed), None)


def _aloha_converter() -> dict:
    """A conversion script that passes LeRobotDataset.create its configured writer threads (examples)."""
    return {"aloha/convert.py": "import dataclasses\nimport tyro\nfrom lerobot.datasets import LeRobotDataset\n"
                                "@dataclasses.dataclass\nclass DatasetConfig:\n    image_writer_threads: int = 10\n"
                                "def main(repo, dataset_config: DatasetConfig):\n"
                                "    return LeRobotDataset.create(repo, image_writer_threads="
                                "dataset_config.image_writer_threads)\n"
                                "if __name__ == '__main__':\n    tyro.cli(main)\n"}


def _submitit(cpus: str) -> dict:
    """MAE's layout: a submitit launcher that imports the training script's parser (examples)."""
    return {"main_pretrain.py": "import argparse\nfrom torch.utils.data import DataLoader\n"
                                "def get_args_parser():\n    p = argparse.ArgumentParser()\n"
                                "    p.add_argument('--num_workers', default=10, type=int)\n"
                                "    p.add_argument('--cpus_per_task', default=10, type=int)\n    return p\n"
                                "def main(args, ds):\n    return DataLoader(ds, num_workers=args.num_workers)\n",
            "submitit_pretrain.py": "import submitit\nimport main_pretrain\n"
                                    "def main():\n"
                                    "    args = main_pretrain.get_args_parser().parse_args()\n"
                                    "    executor = submitit.AutoExecutor(folder='logs')\n"
                                    "    executor.update_parameters(\n"
                                    "        gpus_per_node=8,\n"
                                    f"        {cpus},\n"
                                    "    )\n"
                                    "    return executor.submit(main_pretrain.main, args, None)\n"}


class _Candidates:
    """The configured sites of one knob name, indexed once by file, by config section and by
    folder: each consume site asks which one to cite, and scanning the list per site was
    quadratic (2,000 literal loaders beside 1,000 task configs: 2 s of a 3.6 s scan)."""

    def __init__(self, sites):
        self.first_in_file: dict[str, object] = {}
        # (section, folder) -> (scan position, site): the first config under each folder, so the
        # one nearest the call is cited, not the first of an unrelated example in scan order
        self.under: dict[tuple, tuple] = {}
        for i, s in enumerate(sites):
            self.first_in_file.setdefault(s.file, s)
            if s.kind != "python":
                for section in {_section(s.key) or None, None}:
                    for folder in _folders(s.file):
                        self.under.setdefault((section, folder), (i, s))

    def cite(self, site, sections: set[str]):
        """(the site to cite, how it relates): a site of the same file first ("file"); else a
        config key whose section this file reads ("section"); else any config file or launch
        script ("far"). Of several, the one in the folder nearest the call. A parser default or
        a read of the same name in another module of a large tree is usually another program's
        setting, so it is not cited."""
        same = self.first_in_file.get(site.file)
        if same is not None:
            return same, "file"
        # no candidate is in this file from here on
        nearest_first = _folders(site.file)[::-1]
        for folder in nearest_first:
            firsts = [self.under[(sec, folder)] for sec in sections if (sec, folder) in self.under]
            if firsts:
                return min(firsts, key=lambda pair: pair[0])[1], "section"
        for folder in nearest_first:
            if (None, folder) in self.under:
                return self.under[(None, folder)][1], "far"
        return None, None


def _folders(rel: str) -> list[str]:
    """The folders above REL, outermost first: ["", "examples", "examples/mmpt"]."""
    parts = rel.split("/")[:-1]
    return [""] + ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


_JUDGE_SCRIPT = ("import argparse\nfrom multiprocessing import Pool\n"
                 "def annotate(part, out):\n    return len(part), out\n"
                 "def main():\n"
                 "    p = argparse.ArgumentParser()\n    p.add_argument('--num-tasks', type=int, default=1)\n"
                 "    args = p.parse_args()\n    files = sorted(args.files)\n"
                 "    part_len = len(files) // args.num_tasks\n"
                 "    parts = [files[i:i + part_len] for i in range(0, len(files), part_len)]\n"
                 "{pool}"
                 "        pool.starmap(annotate, [(part, 'out') for part in parts])\n")


def _code_eval(task: str, call: str) -> dict:
    """A code-execution harness: a thread pool whose task (in another file) runs each program in
    a process of its own, TASK doing that; a script that calls the pool's helper as CALL (examples)."""
    return {"harness/execution.py": "import multiprocessing\n"
                                    f"def check_correctness(problem, completion, timeout):\n{task}",
            "harness/evaluation.py": "from concurrent.futures import ThreadPoolExecutor\n"
                                     "from harness.execution import check_correctness\n"
                                     "def evaluate_functional_correctness(samples, n_workers=4, timeout=3.0):\n"
                                     "    with ThreadPoolExecutor(max_workers=n_workers) as executor:\n"
                                     "        futures = [executor.submit(check_correctness, p, c, timeout) for p, c in samples]\n"
                                     "        return [f.result() for f in futures]\n",
            "eval_instruct.py": "import argparse\nfrom harness.evaluation import evaluate_functional_correctness\n"
                                "def main(samples):\n    args = argparse.ArgumentParser().parse_args()\n"
                                f"    return {call}\n"}


_STARTS_PROCESS = ("    p = multiprocessing.Process(target=run, args=(completion,))\n"
                   "    p.start()\n    p.join(timeout)\n    return p.exitcode == 0\n")


class HardcodedParallelism(Rule):
    CODE = "QG105"
    NAME = "hardcoded-parallelism"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{backend} gets {what}{why}"
    RATIONALE = """\
A parallel backend that receives a literal count (`DataLoader(ds, num_workers=0)`,
`Pool(8)`) ignores whatever the configuration says; when a knob of the same name is
configured elsewhere, the user tunes a number that never reaches this call. An omitted count
is the same: `make_vec_env(env_id)` runs its default `n_envs=1`.

Pass the configured knob. Severity is per finding: a warning when the same file reads the
knob or reads the section of a configured key of that name (`config.data.train_batch_size` beside
`num_workers=8` and `data.num_workers: 8` configured: that key is the one cited); a note
(confidence medium) when a knob of that name is only configured in another
file (it may be another setting), or when a literal count above 1 has no configured knob of
that name at all (hard-coded, but nothing promised otherwise). That last literal is a warning
in a program that reads its settings (`args.seed`, `self.cfg.lr` in the same file, outside
examples/ and docs/): it offers settings and not this one, so the count never follows the
machine or the user - unless it is a pool whose use is not a parallel map (kept for timeouts
or I/O) or a default filled in when the user gave none (`if loader_kwargs is None:`). Literals of 0 or 1 with no
knob, thread pools that do not step environments, tests, resource annotations
(`@ray.remote(num_cpus=1)`) are not reported, except a thread pool that maps the program's
own work (`ThreadPoolExecutor(max_workers=48)` scoring every rollout with a function of the
project, or tf.data's private thread pool, `options.threading.private_threadpool_size = 48`,
which runs the input pipeline's maps): its width is a note, since nothing lets the user size it.
So is a thread pool whose task starts a process of its own (a code-execution harness's
`executor.submit(check_correctness, ...)`, where check_correctness, in another file, runs each
program in a `multiprocessing.Process`): its width is the number of processes at once, also when
it is the default of a helper no caller passes (`evaluate_functional_correctness(samples)` with
`n_workers=4`), found through the project's call graph two functions deep.
A literal count given to a call whose other keywords (three or more) read one settings handle
(`TrainerConfig(batch_size=args.batch_size, ..., num_workers=4)`, a `dict(...)` of `args.*`
for an `SFTConfig`; a read with a fallback, `port=config.port if config.port else 9999`, counts
as a read) is a note when the file declares no flag or field of that name: the
object is built from the user's settings, with this count left out (a fixed loader width may
also be the script's choice). A loader given 0 or 1 inside a function that
is itself a worker (a process or thread `target=`, or one taking a `thread_id` /
`worker_id`) is a note: nested workers are often avoided on purpose there. A helper called
with 1 (`make_env(num_envs=1)`) is a probe: a note; one given 0 workers beside the flag its
sibling call in the same file routes (`test_on_datasets(..., 0)` beside
`run(num_workers=args.num_workers)`) is a warning. A helper the package re-exports
(`from dinov2.data import make_data_loader`, defined in dinov2/data/loaders.py) is followed.

A count whose computation is commented out beside it is a warning (a note under examples/,
docs/): `LLM(path, tensor_parallel_size=1)  # torch.cuda.device_count())`, the same pool written
just above as `# with ProcessPool(max_workers=min(len(x), os.cpu_count())) as pool:` and live
with 1, or `NUM_PROCESSES=1 #$((NUM_GPUS_PER_NODE * NUM_NODES))` in a launch script. Someone
computed the count from the machine or the user's setting, then froze it; only commented code
that parses and computes a count (the machine's, or a knob's) counts, not prose.

A call that leaves a backend's count serial - omitted (`DataLoader`'s default 0 workers) or a
literal 0 or 1 - while another call of the same backend in the project takes the count from a
settings object that this call's function reads too (`num_workers=data_config["num_workers"]` in
the other pipelines, `shuffle=data_config["shuffle"]` here; `num_proc=data_args.
preprocessing_num_workers` in one pipeline, `num_proc=1` in its copy) is a warning: the user's
count was at hand and this call drops it. Across files only for a holder named as settings
(`data_config`, `data_args`; not a bare `args` or `cfg`, which every script has its own of) or a
section of the settings (`config.DATA`, one schema across the project: a VISSL tool reading
`config.DATA.TRAIN.BATCHSIZE_PER_REPLICA` beside the loader that takes
`config.DATA.NUM_DATALOADER_WORKERS`), and a literal only when the routing call is in another
function (an eval loader given 0 beside the training loader of its own function is usually on
purpose). A loader with nothing to split is not reported: an empty placeholder
(`DataLoader([])`) or one batch drawn for a probe (`next(iter(DataLoader(ds)))`). A DataLoader with no
`num_workers` is otherwise reported only where its file reads the knob or its section. One env
or worker bound to an evaluation name (`eval_env = ParallelEnv(1, ...)`, `test_envs`, `val_loader`)
is a note.

In configuration, a file that writes a literal where most files of its folder route the
user's setting (`numEnvs: 128` among task configs that say `numEnvs: ${...num_envs}`, at least
3 of them and 3 per literal) is a warning: the setting the user passes reaches the others, not
this one. Siblings that route it with a different default (`${resolve_default:128,...}`) are
routing it too. Launch scripts the same way: `accelerate launch --num_processes 8` in one eval
script of a folder whose others pass `--num_processes $NPROC_PER_NODE` or `torchrun
--nproc-per-node=$NPROC_PER_NODE` (3 or more; the launchers' rank counts, rules/workers.yaml
`count_flags`, are one setting) is a warning; a literal 1 there is a debug run, not reported.

A literal given to a keyword named like a setting the user sets elsewhere (a dataclass or
parser field, a config key) - `get_infer_args(dict(preprocessing_num_workers=16))`,
`PromptDataset(num_workers=8)` inside a function - is a warning (a note under examples/,
docs/, tutorials/): on that path the user's value never arrives (0 and 1 are not reported: one process is
usually on purpose). So is a literal in a script that hands a settings class with a field of
that name to its parser (`HfArgumentParser((Args, DatasetConfig))` and `DatasetConfig.num_proc`,
then `ds.map(fmt, num_proc=4)`): the user sets that field on this script's command line, and
it never reaches the call. So is one given where other
calls of the same function pass a configured value for that keyword, also a function of
another package (`LeRobotDataset.create(image_writer_threads=10)` in one conversion script,
`image_writer_threads=dataset_config.image_writer_threads` in its sibling); such a function's
literal is not compared with the project's own fields of that name. Not when the literal
equals the field's default, nor in a mapping that a mapping of unknown keys then updates
(`args.update(json.loads(extra_args))`: a default the user's mapping replaces), nor in a file
that writes the key as a literal 3 or more times
(a table of per-model settings in code), nor for another package's function or a method of an
object of unknown class (they have knobs of their own), nor for a call that builds a
configuration (`ParallelismConfig(tensor_parallel_degree=8)`: a preset is the setting itself).
A literal seen both ways (a keyword named like a setting, and a count that reaches a backend
through the helper it is given) is one finding: the one that names the setting. A literal in a
call that also splats the mapping the cited setting is read from (`load_dataset(..., num_proc=1,
**load_dataset_kwargs)` where `load_dataset_kwargs = dict(dataset_kwargs)` and the file reads
`dataset_kwargs.get("num_proc")`) is not reported: a user's key reaches the call too, and the
clash raises a TypeError.

A distributed launcher a program starts from code (`["torchrun"] + launcher_args + ["-m",
"pkg.train"]`, launchers and their count flags in rules/workers.yaml) with no count runs the
launcher's default, one process per node: a note. One given a literal `--nproc_per_node 1`
while the count the program holds goes to another of its flags (`--nnodes
str(self.process_num)`) starts one process whatever that count says: a warning.

A helper's default count above 1 that reaches a backend while none of its callers passes the
parameter (`def __init__(..., num_processors=8)` feeding `ds.map(num_proc=...)`), or while the
calls that pass it pass only literals, is one note, at the parameter: that default, or another
literal, is the only count that ever runs; a warning when a caller that omits it is a program
that reads its settings (it could have passed one). A mapping built with `dict(k=v)` or `{"k":
v}` and handed on as `**kwargs` passes its keys. A parameter named like no knob counts too
(`def parquet_to_jsonl(..., ntasks=64)` feeding `LocalPipelineExecutor(tasks=ntasks)`). A
list of counts that a helper walks with `zip()`, one backend per item (`create_loader(datasets,
..., num_workers=[4, 4, 4])` making one `DataLoader` per dataset), gives each the item: the
literal when every item is the same.

One GPU pinned in code (`os.environ["CUDA_VISIBLE_DEVICES"] = "0"`, unconditionally) in a file
whose code spreads its work over every GPU it sees (`device_map="auto"`, `torch.cuda.device_count()`,
`DataParallel(`, a `Trainer(`) gives that code one GPU, whatever the user exported: a note. So
does a flag whose default is one GPU written there (`os.environ["CUDA_VISIBLE_DEVICES"] =
args.gpus` with `--gpus` defaulting to "0"): unless the flag is given, its default replaces the
exported set.

One worker process frozen in code (`DataLoader(ds, num_workers=1)`, `Pool(1)`, a process or
env backend given the literal 1) that no configuration reaches is a note: 0 is the usual
deliberate choice (the main process loads), 1 a count nobody can raise. So is a model held on
one GPU (`LLM(path, tensor_parallel_size=1)`, a count rules/consumers.yaml marks `shards`): a
bigger model cannot be spread over the GPUs the machine has; not when a comment on its line
gives the reason. Not inside a worker,
nor for a pool kept for I/O or starting processes.

A literal given to a project helper whose other calls pass the user's value reached under
another name counts as the same function (`from ..utils import track_progress_rich`,
re-exported from utils/mp_util.py, called with `nproc=16` where 30 calls pass `nproc =
judge_kwargs.pop("nproc", 4)`): the flow names the helper by the backend it feeds. Not a call
of literals made when no configuration was given (`if not config_path: return
Store(numjobs=16, ...)`): those are the program's defaults. A class's own `__init__` parameter
(`TEDS(n_jobs=4)` and `def __init__(self, n_jobs=1)`) is no configuration read.

A worker pool sized by the machine (`Pool(cpu_count() * 2)`, one `Process` per turn of
`range(cpu_count())`) in a file whose other pool of the same kind takes the user's count
(`Pool(self.args.n_cpus)`), or, for processes, that reads a worker count the user sets (a flag,
field or config key counting CPUs, processes, workers or threads) which reaches no backend the
scan knows (`self.pool_class(self.args.n_cpus)`), is a warning (a note under examples/): the
machine decides this pool and the setting meant for the program's workers never reaches it.
Loaders and dataset pipelines are not such pools: their counts are their own.

A pool that maps work cut into parts by a count the user sets (`part_len = len(files) //
args.num_tasks`, `np.array_split(rows, args.num_chunks)`) while the pool's own size is its
default, a literal or the machine's CPU count (`with Pool() as pool: pool.starmap(annotate,
parts)`) is a warning (a note under examples/): the setting chooses how many parts there are,
not how many run at once. A pool sized by a setting, and work cut by a size
(`args.batch_size`), are not reported so.

A Python launcher that asks SLURM for a literal number of CPUs per task (submitit's
`executor.update_parameters(cpus_per_task=10, ...)`, `"--cpus-per-task": 10` in the sbatch options
it builds) for a program whose worker count users set (MAE's submitit_pretrain.py, which imports
main_pretrain.py and its `--num_workers`) gives every task that many CPUs whatever the count
asks: a larger count runs its workers on them, and the launcher has no flag to change it. A
warning (a note under examples/). Only where the launcher's file, or a project file it imports
(two levels), declares a count of CPU-bound workers in a parser or settings class; not for a
launch script's `#SBATCH --cpus-per-task=10`, which is the user's own setting.

A program the project starts with a pool of its own, sized by an option of its own, given a
literal there (rules/commands.yaml: ffmpeg's `-threads`, nvcc's `--threads`, hmmsearch's `--cpu`,
GNU parallel's `-j`, llama.cpp's `-t`, pyserini's `--threads`) is a note: `["ffmpeg", "-nostdin",
"-threads", "0", "-i", path]` in an audio loader whose CLI's `--threads` only sizes torch's pool,
`nvcc_args + ["--threads", "4"]` in a setup.py, `parallel -j 4 ...` in a job script. The count
may suit the program, but no setting of the project reaches it. A command whose program is
computed (`[self.binary_path, "--cpu", "8"]`) or absent (a list of arguments) is read for the
options that name a thread count in any program (`--threads`, `--cpu`); a Python script's own
flags (`[sys.executable, "train.py", "--threads", "2"]`) are that script's settings, and a
string is read only when it starts with a program the catalogue names."""
    VALID = [
        Example({"runner.py": "import argparse\n"
                              "def get_args():\n"
                              "    p = argparse.ArgumentParser()\n"
                              "    p.add_argument('--num_workers', default=4, type=int)\n"
                              "    return p.parse_args()\n"
                              "def submit(config):\n"
                              "    if config.slurm_args is None:\n"
                              "        slurm_args = {'cpus_per_task': 4, 'mem': '32G'}\n"
                              "    else:\n"
                              "        slurm_args = config.slurm_args\n"
                              "    return slurm_args\n"},
                "SLURM options filled in only when the user gave none (`if config.slurm_args is None:`)"),
        Example({"utils.py": "from torch.utils.data import DataLoader\n"
                             "def loaders(ds, cfg):\n"
                             "    return DataLoader(ds, batch_size=cfg.batch_size, num_workers=cfg.num_workers)\n"
                             "def compute_flops(model, ds):\n"
                             "    tmp_loader = DataLoader(ds, batch_size=1, num_workers=0)\n"
                             "    data = next(iter(tmp_loader))\n"
                             "    return model(data)\n"},
                "a loader whose name is used only to draw one batch (`next(iter(tmp_loader))`): a probe"),
        Example({"audio.py": "import subprocess\n"
                             "def load_audio(path, threads):\n"
                             "    cmd = ['ffmpeg', '-nostdin', '-threads', str(threads), '-i', path, '-']\n"
                             "    return subprocess.run(cmd, capture_output=True).stdout\n",
                 "child.py": "import subprocess, sys\n"
                             "subprocess.run([sys.executable, 'train.py', '--threads', '2'])\n"},
                "ffmpeg's thread count comes from the caller; a Python script's own flag is its setting"),
        Example({"hparams/data_args.py": "from dataclasses import dataclass, field\n"
                                         "@dataclass\n"
                                         "class DataArguments:\n"
                                         "    preprocessing_num_workers: int = field(default=None)\n",
                 "webui/runner.py": "import json\n"
                                    "from hparams import get_train_args\n"
                                    "def train(model, extra_args):\n"
                                    "    args = dict(model=model, preprocessing_num_workers=16)\n"
                                    "    args.update(json.loads(extra_args))\n"
                                    "    return get_train_args(args)\n"},
                "a literal in a mapping that the user's own mapping then updates: a default they can replace"),
        Example({"verify.py": "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nimport torch\n"
                              "model = torch.load('m').cuda()\n",
                 "demo.py": "import os\nif 'CUDA_VISIBLE_DEVICES' not in os.environ:\n"
                            "    os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
                            "from transformers import AutoModel\nm = AutoModel.from_pretrained('m', device_map='auto')\n"},
                "one GPU pinned in a script that uses one, and one pinned only when the user exported none"),
        Example(_code_eval("    with open(completion) as fh:\n        return fh.read() == problem\n",
                           "evaluate_functional_correctness(samples, n_workers=8)"),
                "a thread pool whose task reads a file: an I/O pool's width is no parallel setting"),
        Example({"run_atari.py": "import argparse\n"
                                 "from trainer import Trainer, TrainerConfig\n"
                                 "parser = argparse.ArgumentParser()\n"
                                 "parser.add_argument('--epochs', type=int, default=5)\n"
                                 "parser.add_argument('--batch_size', type=int, default=128)\n"
                                 "parser.add_argument('--num_workers', type=int, default=4)\n"
                                 "args = parser.parse_args()\n"
                                 "tconf = TrainerConfig(max_epochs=args.epochs, batch_size=args.batch_size,\n"
                                 "                      num_workers=4, seed=0)\n"
                                 "Trainer(tconf).train()\n"},
                "a literal beside two settings read from the command line, in a script with its own flag "
                "for the count (a flag's default, written twice)"),
        Example({"mnist/main.py": "import torch\n"
                                  "def main(args, train_set, extra):\n"
                                  "    cuda_kwargs = {'num_workers': 1, 'pin_memory': True}\n"
                                  "    train_kwargs = {'batch_size': args.batch_size}\n"
                                  "    train_kwargs.update(extra)\n"
                                  "    return torch.utils.data.DataLoader(train_set, **train_kwargs)\n"},
                "a mapping merged from keys not known here: the one-worker mapping never reaches the loader"),
        Example({"trainer.py": "from torch.utils.data import DataLoader\n"
                               "class Trainer:\n"
                               "    def __init__(self, args, train_dataset, eval_dataset=None, evaluator=None):\n"
                               "        self.args, self.train_dataset = args, train_dataset\n"
                               "        self.eval_dataset, self.evaluator = eval_dataset, evaluator\n"
                               "    def get_train_dataloader(self):\n"
                               "        return DataLoader(self.train_dataset, batch_size=self.args.train_batch_size,\n"
                               "                          num_workers=self.args.dataloader_num_workers)\n"
                               "    def get_eval_dataloader(self):\n"
                               "        if self.eval_dataset is None:\n"
                               "            if self.evaluator is not None:\n"
                               "                return DataLoader([])\n"
                               "            raise ValueError('no eval dataset')\n"
                               "        return DataLoader(self.eval_dataset, batch_size=self.args.eval_batch_size,\n"
                               "                          num_workers=self.args.dataloader_num_workers)\n"},
                "an empty DataLoader returned as a placeholder (sentence-transformers): nothing to load"),
        Example(_submitit("cpus_per_task=args.cpus_per_task"), "the CPUs per task come from a flag"),
        Example({"eval/judge.py": _JUDGE_SCRIPT.format(pool="    with Pool(args.num_tasks) as pool:\n")},
                "the pool runs as many parts at once as the user cuts the work into"),
        Example({"bench.py": "from vllm import LLM\n"
                             "class VLLMModel:\n"
                             "    def __init__(self, path):\n"
                             "        self.model = LLM(path, tensor_parallel_size=1)  # one GPU: the model is small\n"},
                "a literal count beside a comment in prose"),
        Example({"executor.py": "import os\nfrom pebble import ProcessPool\n"
                                "def run(snippets, execute):\n"
                                "    # with ProcessPool(max_workers=1) as pool:  (for debugging)\n"
                                "    with ProcessPool(max_workers=min(len(snippets), os.cpu_count())) as pool:\n"
                                "        return list(pool.map(execute, snippets).result())\n",
                 "eval.slurm": "NUM_GPUS_PER_NODE=8\nNUM_NODES=1\n"
                               "NUM_PROCESSES=$((NUM_GPUS_PER_NODE * NUM_NODES)) # was 1\n"
                               "accelerate launch --num_processes $NUM_PROCESSES eval.py\n"},
                "the serial variant is the one commented out; the live count is computed"),
        Example({"task.py": "import datasets\nfrom datasets import DownloadConfig\n"
                            "def download(path, dataset_kwargs):\n"
                            "    cfg = DownloadConfig()\n"
                            "    cfg.num_proc = dataset_kwargs.get('num_proc', 1)\n"
                            "    load_dataset_kwargs = dict(dataset_kwargs)\n"
                            "    return datasets.load_dataset(path, download_config=cfg, num_proc=1, **load_dataset_kwargs)\n"},
                "a literal beside a splat of the mapping the setting is read from: a user's num_proc "
                "reaches the call too, and the clash raises"),
        Example({"store.py": "import json\nimport os\nfrom concurrent.futures import ProcessPoolExecutor\n"
                             "class Store:\n"
                             "    def __init__(self, path, numjobs=1):\n"
                             "        self.pool = ProcessPoolExecutor(max_workers=numjobs)\n"
                             "    @classmethod\n"
                             "    def from_env(cls):\n"
                             "        config_path = os.getenv('STORE_CONFIG')\n"
                             "        if not config_path:\n"
                             "            return Store('/data/store.bin', numjobs=16)\n"
                             "        config = json.load(open(config_path))\n"
                             "        return Store(config['path'], numjobs=int(config['numjobs']))\n"},
                "the defaults a program fills in when no configuration was given"),
        Example({"prep.py": "import argparse\nimport multiprocessing\nfrom torch.utils.data import DataLoader\n"
                            "def main(args, ds):\n"
                            "    loader = DataLoader(ds, num_workers=args.num_workers)\n"
                            "    with multiprocessing.Pool(multiprocessing.cpu_count()) as pool:\n"
                            "        return loader, pool.map(len, ds)\n"
                            "p = argparse.ArgumentParser()\np.add_argument('--num_workers', type=int, default=4)\n"},
                "a pool sized by the machine beside the loader's own worker count: the loader's count is its own"),
        Example({"label.py": "import argparse\nimport multiprocessing as mp\n"
                             "from concurrent.futures import ProcessPoolExecutor\n"
                             "def verify(files):\n"
                             "    with ProcessPoolExecutor(max_workers=mp.cpu_count()) as ex:\n"
                             "        return list(ex.map(len, files))\n"
                             "def main(args):\n"
                             "    procs = [mp.Process(target=caption, args=(r,)) for r in range(args.num_gpus)]\n"
                             "    return procs\n"
                             "p = argparse.ArgumentParser()\np.add_argument('--num_gpus', type=int, default=8)\n"},
                "a CPU pool sized by the machine beside one process per GPU: the GPU count sizes another pool"),
        Example({"elo.py": "import argparse\nimport os\nfrom multiprocessing import Pool\n"
                           "def bootstrap(rows, num_cpu=None):\n"
                           "    with Pool(num_cpu if num_cpu else os.cpu_count()) as pool:\n"
                           "        return pool.map(len, rows)\n"
                           "def main(args, rows):\n"
                           "    with Pool(args.num_cpu) as pool:\n        pool.map(len, rows)\n"
                           "    return bootstrap(rows, args.num_cpu)\n"
                           "p = argparse.ArgumentParser()\np.add_argument('--num_cpu', type=int, default=8)\n"},
                "the machine only as the fallback of the caller's count"),
        Example({"train.py": "from torch.utils.data import DataLoader\n"
                             "def loaders(cfg, train_ds, test_ds):\n"
                             "    return DataLoader(train_ds, num_workers=cfg.data.loader_workers)\n",
                 "probe.py": "from torch.utils.data import DataLoader\n"
                             "def peek(cfg, ds):\n"
                             "    return next(iter(DataLoader(ds, batch_size=cfg.data.probe_batch)))\n"},
                "a loader that one batch is drawn from (`next(iter(...))`): a probe, no work to split"),
        Example({"launch.py": "import subprocess, sys\n"
                              "def launch(args):\n"
                              "    cmd = [sys.executable, '-m', 'torch.distributed.run',\n"
                              "           f'--nproc_per_node={args.gpus}', 'train.py']\n"
                              "    subprocess.run(cmd)\n"
                              "LAUNCHERS = {'torchrun': ['torchrun'], 'accelerate': ['accelerate', 'launch']}\n"},
                "the count reaches the launcher; a table of launcher names is no command"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "the consumer gets the knob"),
        Example({"io.py": "from concurrent.futures import ThreadPoolExecutor\n"
                          "with ThreadPoolExecutor(max_workers=16) as pool:\n"
                          "    pages = list(pool.map(download, urls))\n"},
                "an I/O thread pool"),
        Example({"conf.yaml": "rollout:\n  procs: 16\n",
                 "pools.py": "import multiprocessing as mp\n"
                             "def start_pool(n_proc=4):\n"
                             "    return mp.Pool(processes=n_proc)\n",
                 "run.py": "import yaml\nfrom pools import start_pool\n"
                           "cfg = yaml.safe_load(open('conf.yaml'))\n"
                           "pool = start_pool(cfg['rollout']['procs'])\n"},
                "a helper whose caller passes the configured value"),
        Example({**_aloha_converter(),
                 "libero/convert.py": "from huggingface_hub import snapshot_download\n"
                                      "def main(repo):\n"
                                      "    return snapshot_download(repo, max_workers=8)\n"},
                "another package's knob given a literal that no call of the project routes"),
        Example({"train.py": "import argparse\nfrom ray.train import ScalingConfig\n"
                             "def train(num_workers=2):\n"
                             "    return ScalingConfig(num_workers=num_workers)\n"
                             "if __name__ == '__main__':\n"
                             "    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--num-workers', type=int, default=8)\n"
                             "    p.add_argument('--smoke-test', action='store_true')\n"
                             "    args = p.parse_args()\n"
                             "    if args.smoke_test:\n"
                             "        train(num_workers=2)\n"
                             "    else:\n"
                             "        train(num_workers=args.num_workers)\n"},
                "a smoke test the user asks for runs two workers on purpose"),
        Example({"launch/beaker.py": "from dataclasses import dataclass\n@dataclass\nclass BeakerLaunchConfig:\n"
                                     "    num_nodes: int = 1\n",
                 "scripts/train/OLMo3-7B.py": "from launch.beaker import BeakerLaunchConfig\n"
                                              "def build_launch_config(num_nodes):\n"
                                              "    return BeakerLaunchConfig(num_nodes=num_nodes)\n"
                                              "def main():\n    return build_launch_config(num_nodes=32)\n"},
                "a recipe script passing its node count to the function that builds the launch config: "
                "the script is the configuration"),
        Example({"data.py": "from litdata import optimize\n"
                            "class TinyStories:\n"
                            "    num_workers: int = 8\n"
                            "    def prepare(self, val_file):\n"
                            "        optimize(fn=len, inputs=[val_file], output_dir='val', num_workers=1)\n"},
                "one worker for the one item the call is given"),
        Example({"cluster.py": "import ray\n"
                               "def start(args):\n"
                               "    if args.address:\n"
                               "        ray.init(address=args.address)\n"
                               "    else:\n"
                               "        ray.init(num_cpus=args.num_cpus)\n"},
                "joining a running cluster takes that cluster's resources: no count to pass"),
        Example({"cluster.py": "import ray\n"
                               "def start(args):\n"
                               "    try:\n"
                               "        ray.init('auto')\n"
                               "    except ConnectionError:\n"
                               "        ray.init(num_gpus=args.num_gpus)\n"},
                "the address given by position joins a running cluster too"),
        Example({"scripts/eval/mmlu.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\naccelerate launch --num_processes $NPROC -m ev.run\n",
                 "scripts/eval/gsm8k.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\naccelerate launch --num_processes $NPROC -m ev.run\n",
                 "scripts/eval/humaneval.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\naccelerate launch --num_processes $NPROC -m ev.run\n",
                 "scripts/eval/debug.sh": "#!/bin/bash\naccelerate launch --num_processes 1 -m ev.run\n"},
                "a debug script beside them starts one process on purpose"),
        Example({"eval/knn.py": "from eval.features import extract\n"
                                "def main(args):\n"
                                "    return extract(args.data, num_workers=5)\n",
                 "eval/linear.py": "import argparse\n"
                                   "p = argparse.ArgumentParser()\n"
                                   "p.add_argument('--num-workers', type=int, default=8)\n"},
                "another script's flag of that name: the scripts do not import each other"),
    ]
    INVALID = [
        Example({"audio.py": "import subprocess\n"
                             "def load_audio(path):\n"
                             "    cmd = ['ffmpeg', '-nostdin', '-threads', '0', '-i', path, '-']\n"
                             "    return subprocess.run(cmd, capture_output=True).stdout\n"},
                "ffmpeg's own thread count written into the command: no setting reaches it (a note)",
                expect=[("audio.py", 3)], severity="note"),
        Example({"data/__init__.py": "from torch.utils.data import DataLoader\n"
                                     "def create_loader(datasets, batch_size, num_workers):\n"
                                     "    loaders = []\n"
                                     "    for dataset, bs, n_worker in zip(datasets, batch_size, num_workers):\n"
                                     "        loaders.append(DataLoader(dataset, batch_size=bs, num_workers=n_worker))\n"
                                     "    return loaders\n",
                 "retrieval.py": "import yaml\n"
                                 "from data import create_loader\n"
                                 "def main(args, train_ds, val_ds):\n"
                                 "    config = yaml.safe_load(open(args.config))\n"
                                 "    bs = [config['batch_size_train'], config['batch_size_test']]\n"
                                 "    return create_loader([train_ds, val_ds], bs, num_workers=[4, 4])\n"},
                "a list of literal counts that a helper zips into one loader per dataset (ALBEF, BLIP)",
                expect=[("retrieval.py", 6)], severity="warning"),
        Example({"example/finetune.py": "import os\n"
                                        "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
                                        "import transformers\n"
                                        "model = transformers.AutoModelForCausalLM.from_pretrained('m', device_map='auto')\n"
                                        "trainer = transformers.Trainer(model=model)\n"},
                "one GPU pinned at import in a script whose model is spread over every visible GPU",
                expect=[("example/finetune.py", 2)], severity="note"),
        Example({"inference.py": "import argparse, os\n"
                                 "p = argparse.ArgumentParser()\n"
                                 "p.add_argument('--gpus', default='0', type=str)\n"
                                 "args = p.parse_args()\n"
                                 "os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus\n"
                                 "import transformers\n"
                                 "model = transformers.AutoModelForCausalLM.from_pretrained('m', device_map='auto')\n"},
                "a flag whose default pins one GPU written over the exported set, in a script that spreads its model",
                expect=[("inference.py", 5)], severity="note"),
        Example(_code_eval(_STARTS_PROCESS, "evaluate_functional_correctness(samples, n_workers=8)"),
                "a literal count for a thread pool whose task, in another file, runs each program in a process",
                expect=[("eval_instruct.py", 5)], severity="note"),
        Example(_code_eval(_STARTS_PROCESS, "evaluate_functional_correctness(samples)"),
                "the helper's default sizes that pool on every call, and no caller passes a count",
                expect=[("harness/evaluation.py", 3)], severity="note"),
        Example({"run_atari.py": "import argparse\n"
                                 "from trainer import Trainer, TrainerConfig\n"
                                 "parser = argparse.ArgumentParser()\n"
                                 "parser.add_argument('--epochs', type=int, default=5)\n"
                                 "parser.add_argument('--batch_size', type=int, default=128)\n"
                                 "parser.add_argument('--seed', type=int, default=123)\n"
                                 "args = parser.parse_args()\n"
                                 "tconf = TrainerConfig(max_epochs=args.epochs, batch_size=args.batch_size,\n"
                                 "                      num_workers=4, seed=args.seed)\n"
                                 "Trainer(tconf).train()\n"},
                "a settings object built from the command line, its loader count a literal no flag reaches",
                expect=[("run_atari.py", 9)], severity="note"),
        Example({"server.py": "from jetstream.core import server_lib\n"
                              "def main(config, devices):\n"
                              "    return server_lib.run(\n"
                              "        threads=256,\n"
                              "        devices=devices,\n"
                              "        enable_jax_profiler=config.enable_jax_profiler if config.enable_jax_profiler else False,\n"
                              "        jax_profiler_port=config.jax_profiler_port if config.jax_profiler_port else 9999,\n"
                              "        enable_model_warmup=config.enable_model_warmup or False,\n"
                              "    )\n"},
                "a server built from the user's settings (each read with a fallback), its thread count a literal",
                expect=[("server.py", 4)], severity="note"),
        Example({"input_pipeline.py": "import tensorflow as tf\n"
                                      "def create_split(ds, preprocess):\n"
                                      "    options = tf.data.Options()\n"
                                      "    options.threading.private_threadpool_size = 48\n"
                                      "    ds = ds.with_options(options)\n"
                                      "    return ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)\n"},
                "tf.data's private thread pool, which runs the pipeline's maps, fixed at 48 threads",
                expect=[("input_pipeline.py", 4)], severity="note"),
        Example({"mnist/main.py": "import torch\n"
                                  "def main(args, train_set):\n"
                                  "    train_kwargs = {'batch_size': args.batch_size}\n"
                                  "    if torch.cuda.is_available():\n"
                                  "        cuda_kwargs = {'num_workers': 1, 'pin_memory': True}\n"
                                  "        train_kwargs.update(cuda_kwargs)\n"
                                  "    return torch.utils.data.DataLoader(train_set, **train_kwargs)\n"},
                "one loader worker merged into the loader's keywords by `update()` (pytorch/examples' MNIST)",
                expect=[("mnist/main.py", 5)], severity="note"),
        Example({"ddpg/utils.py": "from torchrl.envs import ParallelEnv\n"
                                  "def make_eval(cfg, make):\n"
                                  "    return ParallelEnv(cfg.logger.num_eval_envs, make, serial_for_single=True)\n",
                 "dreamer/utils.py": "from torchrl.envs import ParallelEnv\n"
                                     "def make_eval(cfg, make):\n"
                                     "    eval_env = ParallelEnv(1, make, serial_for_single=True)\n"
                                     "    if cfg.logger.video:\n        eval_env.record()\n"
                                     "    return eval_env\n"},
                "one evaluation env on purpose beside another algorithm's configured count (torchrl): a note",
                expect=[("dreamer/utils.py", 3)], severity="note"),
        Example({"configs/defaults.yaml": "config:\n  DATA:\n    NUM_DATALOADER_WORKERS: 4\n"
                                          "    TRAIN:\n      BATCHSIZE_PER_REPLICA: 32\n",
                 "tools/knn.py": "from torch.utils import data\n"
                                 "def main(config):\n"
                                 "    bs = config.DATA.TRAIN.BATCHSIZE_PER_REPLICA\n"
                                 "    return data.DataLoader(range(10), batch_size=bs, shuffle=False)\n",
                 "vissl/data/build.py": "from torch.utils.data import DataLoader\n"
                                        "def build(config):\n"
                                        "    return DataLoader(range(3), num_workers=config.DATA.NUM_DATALOADER_WORKERS)\n"},
                "a tool reads the settings' DATA section for its batch size and leaves the loader at 0 workers, "
                "while the project's loader takes DATA.NUM_DATALOADER_WORKERS (VISSL)",
                expect=[("tools/knn.py", 4)], severity="warning"),
        Example(_submitit("cpus_per_task=10"),
                "a submitit launcher asks 10 CPUs per task for a program whose --num_workers users set",
                expect=[("submitit_pretrain.py", 8)], severity="warning"),
        Example({"eval/judge.py": _JUDGE_SCRIPT.format(pool="    with Pool() as pool:\n")},
                "--num-tasks cuts the work into parts; the pool runs the machine's CPU count of them at once",
                expect=[("eval/judge.py", 12)]),
        Example({"bench.py": "from vllm import LLM\n"
                             "class VLLMModel:\n"
                             "    def __init__(self, path):\n"
                             "        self.model = LLM(\n"
                             "            path, trust_remote_code=True, tensor_parallel_size=1\n"
                             "        )  # torch.cuda.device_count())\n"},
                "a literal count whose computation is commented out beside it",
                expect=[("bench.py", 4)], severity="warning"),
        Example({"tokenize.py": "import os\nfrom multiprocessing import Pool\n"
                                "def train_split(rows):\n"
                                "    # with Pool(processes=min(len(rows), os.cpu_count())) as pool:\n"
                                "    with Pool(processes=1) as pool:\n"
                                "        return pool.map(str, rows)\n"
                                "def eval_split(rows):\n"
                                "    # with Pool(processes=min(len(rows), os.cpu_count())) as pool:\n"
                                "    with Pool(processes=1) as pool:\n"
                                "        return pool.map(str, rows)\n"},
                "two frozen pools of one file, each beside its commented-out computation: those warnings only",
                expect=[("tokenize.py", 5), ("tokenize.py", 9)], severity="warning"),
        Example({"executor.py": "import os\nfrom pebble import ProcessPool\n"
                                "def run(snippets, execute):\n"
                                "    # with ProcessPool(max_workers=min(len(snippets), os.cpu_count())) as pool:\n"
                                "    with ProcessPool(max_workers=min(len(snippets), 1)) as pool:\n"
                                "        return list(pool.map(execute, snippets).result())\n"},
                "the same pool commented out above with the machine's count, live with 1",
                expect=[("executor.py", 5)], severity="warning"),
        Example({"eval.slurm": "NUM_GPUS_PER_NODE=8\nNUM_NODES=1\n"
                               "NUM_PROCESSES=1 #$((NUM_GPUS_PER_NODE * NUM_NODES))\n"
                               "accelerate launch --num_processes $NUM_PROCESSES eval.py\n"},
                "a launch script's process count whose computation is commented out",
                expect=[("eval.slurm", 3)], severity="warning"),
        Example({"teds.py": "from concurrent.futures import ProcessPoolExecutor\n"
                            "class TEDS:\n"
                            "    def __init__(self, n_jobs=1):\n"
                            "        self.n_jobs = n_jobs\n"
                            "    def evaluate(self, pairs):\n"
                            "        with ProcessPoolExecutor(max_workers=self.n_jobs) as pool:\n"
                            "            return list(pool.map(len, pairs))\n"
                            "if __name__ == '__main__':\n"
                            "    print(TEDS(n_jobs=4).evaluate(['a']))\n"},
                "a literal to a class whose own __init__ parameter is the only read of that name (a note)",
                expect=[("teds.py", 9)], severity="note"),
        Example({"prep.py": "import argparse\nfrom datatrove.executor import LocalPipelineExecutor\n"
                            "def to_jsonl(src, ntasks=64):\n"
                            "    LocalPipelineExecutor(pipeline=[src], tasks=ntasks).run()\n"
                            "def main():\n    p = argparse.ArgumentParser()\n    p.add_argument('--src')\n"
                            "    args = p.parse_args()\n    to_jsonl(args.src)\n"},
                "a helper's default named like no knob, that no caller passes, in a program that reads settings",
                expect=[("prep.py", 3)], severity="warning"),
        Example({"train.py": "import argparse\nfrom torch.utils.data import DataLoader\n"
                             "def main(ds):\n    p = argparse.ArgumentParser()\n    p.add_argument('--lr', type=float)\n"
                             "    args = p.parse_args()\n"
                             "    return DataLoader(ds, batch_size=8, num_workers=1)\n"},
                "one loader worker frozen in code (a note)", expect=[("train.py", 7)], severity="note"),
        Example({"demo.py": "import os\nfrom vllm import LLM\n"
                            "MODEL_PATH = os.environ.get('MODEL_PATH', 'THUDM/glm-4-9b-chat')\n"
                            "def load():\n"
                            "    return LLM(model=MODEL_PATH, tensor_parallel_size=1, trust_remote_code=True)\n"},
                "a model held on one GPU in code (a note)", expect=[("demo.py", 5)], severity="note"),
        Example({"pkg/__init__.py": "",
                 "pkg/utils/__init__.py": "from .mp_util import track\n",
                 "pkg/utils/mp_util.py": "from multiprocessing import Pool\n"
                                         "def track(func, tasks, nproc=1):\n"
                                         "    with Pool(nproc) as pool:\n        return pool.map(func, tasks)\n",
                 "pkg/vqa.py": "from pkg.utils.mp_util import track\n"
                               "def evaluate(rows, **judge_kwargs):\n"
                               "    nproc = judge_kwargs.pop('nproc', 4)\n"
                               "    return track(len, rows, nproc=nproc)\n",
                 "pkg/mcq.py": "from pkg.utils.mp_util import track\n"
                               "def evaluate(rows, **judge_kwargs):\n"
                               "    nproc = judge_kwargs.pop('nproc', 4)\n"
                               "    return track(len, rows, nproc=nproc)\n",
                 "pkg/math.py": "from .utils import track\n"
                                "def evaluate(rows, **kwargs):\n"
                                "    return track(len, rows, nproc=16)\n"},
                "a literal to a re-exported helper whose other calls pass the user's count",
                expect=[("pkg/math.py", 3)], severity="warning"),
        Example({"explore.py": "import argparse\nimport multiprocessing\n"
                               "def work(q):\n    return q\n"
                               "class Explorer:\n"
                               "    def __init__(self, args, pool_class):\n"
                               "        self.pool = pool_class(args.n_cpus)\n"
                               "    def split(self, frames):\n"
                               "        n_processes = multiprocessing.cpu_count()\n"
                               "        procs = [multiprocessing.Process(target=work) for _ in range(n_processes)]\n"
                               "        return procs\n"
                               "def main():\n    p = argparse.ArgumentParser()\n"
                               "    p.add_argument('--n_cpus', type=int, default=8)\n"
                               "    return Explorer(p.parse_args(), multiprocessing.Pool)\n"},
                "processes sized by the machine in a file that reads the worker count the user sets",
                expect=[("explore.py", 10)], severity="warning"),
        Example({"explore.py": "import argparse\nimport multiprocessing\n"
                               "def main(args):\n"
                               "    pool = multiprocessing.Pool(args.n_cpus)\n"
                               "    big = multiprocessing.Pool(multiprocessing.cpu_count() * 2)\n"
                               "    return pool, big\n"
                               "p = argparse.ArgumentParser()\np.add_argument('--n_cpus', type=int, default=8)\n"},
                "a pool sized by the machine beside one the user's count sizes",
                expect=[("explore.py", 5)], severity="warning"),
        Example({"config.yaml": "collector:\n  num_workers: 8\n",
                 "train.py": "from torchrl.envs import ParallelEnv\n"
                             "def make_envs(cfg, make):\n"
                             "    train_env = ParallelEnv(cfg.collector.num_workers, make)\n"
                             "    eval_env = ParallelEnv(1, make)\n"
                             "    return train_env, eval_env\n"},
                "one env bound to an evaluation name beside the configured training envs: a note",
                expect=[("train.py", 4)], severity="note"),
        Example({"pipelines/rlvr.py": "def build(self, ds):\n"
                                      "    return ds.map(tag, num_proc=self.config.data_args.preprocessing_num_workers)\n",
                 "pipelines/rollout.py": "def build(self, ds):\n"
                                         "    ds = ds.filter(keep, desc=self.config.data_args.template)\n"
                                         "    return ds.map(tag, num_proc=1)\n"},
                "a literal 1 in one pipeline where another takes the count from the settings object this "
                "function reads too", expect=[("pipelines/rollout.py", 3)]),
        Example({"data/config.py": "from dataclasses import dataclass\n"
                                   "@dataclass\n"
                                   "class DatasetConfig:\n"
                                   "    num_proc: int = 8\n",
                 "generate.py": "from transformers import HfArgumentParser\n"
                                "from data.config import DatasetConfig\n"
                                "def main(args, dataset_config):\n"
                                "    return load(args.path).map(fmt, num_proc=4)\n"
                                "parser = HfArgumentParser((Args, DatasetConfig))\n"
                                "main(*parser.parse_args_into_dataclasses())\n"},
                "a literal in a script whose parser takes a settings class with that field",
                expect=[("generate.py", 4)]),
        Example({"data/hf.py": "def process(dataset, map_num_proc=32):\n"
                               "    return dataset.map(tokenize, num_proc=map_num_proc)\n"
                               "def process_hf_dataset(dataset, tokenizer=None, map_num_proc=32):\n"
                               "    kwargs = dict(dataset=dataset, tokenizer=tokenizer, map_num_proc=map_num_proc)\n"
                               "    return process(**kwargs)\n",
                 "data/llava.py": "from data.hf import process_hf_dataset\n"
                                  "class LLaVADataset:\n"
                                  "    def __init__(self, data, tokenizer):\n"
                                  "        self.text = process_hf_dataset(dataset=data, tokenizer=tokenizer)\n",
                 "tools/tokenize.py": "from data.hf import process\n"
                                      "def run(data):\n"
                                      "    return process(data, map_num_proc=32)\n"},
                "a helper default that the calls omit or pass a literal for, through **dict(...) (a note at it)",
                expect=[("data/hf.py", 3)], severity="note"),
        Example({"cli/train.py": "import subprocess\n"
                                 "def launch(cfg_file, launcher_args=None):\n"
                                 "    cmd = ['torchrun'] + (launcher_args or []) + ['-m', 'pkg.train', cfg_file]\n"
                                 "    subprocess.run(cmd, check=True)\n"},
                "a torchrun command built in code with no --nproc_per_node: one process per node (a note)",
                expect=[("cli/train.py", 3)], severity="note"),
        Example({"evaluator.py": "import subprocess\n"
                                 "class Evaluator:\n"
                                 "    def __init__(self, config):\n"
                                 "        self.process_num = config['megatron']['process_num']\n"
                                 "    def infer(self):\n"
                                 "        args = ['torchrun', '--master_addr', '127.0.0.1',\n"
                                 "                '--nproc_per_node', '1', '--nnodes', str(self.process_num),\n"
                                 "                '--node_rank', '0', 'tools/inference.py']\n"
                                 "        subprocess.run(args)\n"},
                "the user's count goes to --nnodes beside a literal --nproc_per_node 1",
                expect=[("evaluator.py", 7)]),
        Example({"reward.py": "from concurrent.futures import ThreadPoolExecutor\n"
                              "def score_one(item):\n"
                              "    return len(item['response']) / 100.0\n"
                              "def score(batch):\n"
                              "    with ThreadPoolExecutor(max_workers=48) as pool:\n"
                              "        return list(pool.map(score_one, batch))\n"},
                "a thread pool mapping the project's own work at a width nobody can set (a note)",
                expect=[("reward.py", 5)], severity="note"),
        Example({"sft/dataset.py": "class SFTDataset:\n"
                                    "    def __init__(self, dataset, tokenizer, num_processors=8):\n"
                                    "        self.data = dataset.map(tokenizer, num_proc=num_processors)\n",
                 "train.py": "from sft.dataset import SFTDataset\n"
                             "def main(args, ds, tok):\n"
                             "    return SFTDataset(ds, tok)\n"},
                "a helper's default count that no caller ever overrides (a note, once, at the parameter)",
                expect=[("sft/dataset.py", 2)], severity="note"),
        Example({"config/sft_trainer.yaml": "data:\n  train_batch_size: 256\n  num_workers: 8\n"
                                            "rollout:\n  agent:\n    num_workers: 2\n",
                 "sft_trainer.py": "from torchdata.stateful_dataloader import StatefulDataLoader\n"
                                   "def loaders(config, dataset):\n"
                                   "    batch = config.data.train_batch_size\n"
                                   "    return StatefulDataLoader(dataset, batch_size=batch, num_workers=8)\n"},
                "a literal beside reads of the section whose configured key it ignores (cited: data.num_workers, "
                "not another section's key of the same name)", expect=[("sft_trainer.py", 4)], severity="warning"),
        Example({"hparams/data_args.py": "from dataclasses import dataclass, field\n"
                                         "@dataclass\n"
                                         "class DataArguments:\n"
                                         "    preprocessing_num_workers: int = field(default=None)\n",
                 "webui/runner.py": "from hparams import get_infer_args\n"
                                    "def predict(model):\n"
                                    "    args = dict(model=model, preprocessing_num_workers=16)\n"
                                    "    return get_infer_args(args)\n"},
                "a literal given to a keyword the user sets elsewhere", expect=[("webui/runner.py", 3)],
                severity="warning"),
        Example({"cfg/task/Ant.yaml": "env:\n  numEnvs: ${resolve_default:4096,${...num_envs}}\n",
                 "cfg/task/Humanoid.yaml": "env:\n  numEnvs: ${resolve_default:4096,${...num_envs}}\n",
                 "cfg/task/Cartpole.yaml": "env:\n  numEnvs: ${resolve_default:512,${...num_envs}}\n",
                 "cfg/task/Gears.yaml": "env:\n  numEnvs: 128\n",
                 "cfg/config.yaml": "num_envs: ''\n"},
                "one task config hard-codes what its siblings take from the user",
                expect=[("cfg/task/Gears.yaml", 2)], severity="warning"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "n = cfg['data']['num_workers']\n"
                             "train = DataLoader(ds, num_workers=n)\n"
                             "val = DataLoader(val_ds, num_workers=0)\n"},
                "one loader ignores the configured knob", expect=[("train.py", 4)]),
        Example({"rollout.py": "import multiprocessing as mp\n"
                               "with mp.Pool(8) as pool:\n"
                               "    results = pool.map(rollout, seeds)\n"},
                "a literal pool size no configuration reaches (a note)", expect=[("rollout.py", 2)]),
        Example({"scripts/decontaminate.py": "import argparse\nfrom datasets import load_dataset\n"
                                             "p = argparse.ArgumentParser()\np.add_argument('--dataset')\n"
                                             "args = p.parse_args()\nds = load_dataset(args.dataset)\n"
                                             "ds = ds.map(find_contamination, num_proc=8)\n"},
                "a program that reads its settings and hard-codes this count", expect=[("scripts/decontaminate.py", 7)],
                severity="warning"),
        Example({"mydata/sft.py": "class SFTDataset:\n"
                                    "    def __init__(self, dataset, num_processors=8):\n"
                                    "        self.data = dataset.map(self.process, num_proc=num_processors)\n",
                 "cli/train_sft.py": "from mydata.sft import SFTDataset\n"
                                     "def train(args):\n"
                                     "    return SFTDataset(load(args.dataset))\n"},
                "a helper default no caller passes, though its caller reads settings", expect=[("mydata/sft.py", 2)],
                severity="warning"),
        Example({"oracle.py": "from multiprocessing import Pool\n"
                              "class Oracle:\n"
                              "    def __init__(self, args):\n"
                              "        self.template = args.template\n"
                              "        self.pool = Pool(2)\n"},
                "a pool kept for later use (timeouts), in a program that reads settings (a note)",
                expect=[("oracle.py", 5)], severity="note"),
        Example({"metrics.py": "from torch.utils.data import DataLoader\n"
                               "def stats(opts, ds):\n"
                               "    loader_kwargs = opts.loader_kwargs\n"
                               "    if loader_kwargs is None:\n"
                               "        loader_kwargs = dict(num_workers=2, pin_memory=True)\n"
                               "    return DataLoader(ds, **loader_kwargs)\n"},
                "a default filled in when the user gave no loader settings (a note)",
                expect=[("metrics.py", 5)], severity="note"),
        Example({"pools.py": "import multiprocessing as mp\n"
                             "def start_pool(n_proc=4):\n"
                             "    return mp.Pool(processes=n_proc)\n",
                 "run.py": "from pools import start_pool\n"
                           "pool = start_pool(32)\n"},
                "a literal count passed through a helper (a note)", expect=[("run.py", 2)]),
        Example({"analyzer.py": "from multiprocessing import Process\n"
                                "from torch.utils.data import DataLoader\n"
                                "class Analyzer:\n"
                                "    def __init__(self, ds, num_workers=4):\n"
                                "        self.ds, self.num_workers = ds, num_workers\n"
                                "    def shard(self, part):\n"
                                "        for batch in DataLoader(part, num_workers=0):\n"
                                "            yield batch\n"
                                "    def run(self, parts):\n"
                                "        procs = [Process(target=self.shard, args=(p,)) for p in parts]\n"
                                "        return procs[:self.num_workers]\n",
                 "merge.py": "from torch.utils.data import DataLoader\n"
                             "class Merger:\n"
                             "    def __init__(self, num_workers=2):\n"
                             "        self.num_workers = num_workers\n"
                             "    def reduce_part(self, ds, worker_id):\n"
                             "        return DataLoader(ds, num_workers=0)\n"},
                "a loader inside a worker process, or a function taking a worker id (a note)",
                expect=[("analyzer.py", 7), ("merge.py", 6)], severity="note"),
        Example({**_aloha_converter(),
                 "libero/convert.py": "from lerobot.datasets import LeRobotDataset\n"
                                      "def main(repo):\n"
                                      "    return LeRobotDataset.create(repo, image_writer_threads=10)\n"},
                "a literal to another package's function whose sibling call passes the user's setting",
                expect=[("libero/convert.py", 3)]),
        Example({"main.py": "import ray\n"
                            "def main(args):\n"
                            "    if args.opr == 'train':\n"
                            "        ray.init(num_cpus=args.num_cpus, num_gpus=args.num_gpus)\n"
                            "    else:\n"
                            "        ray.init()\n"},
                "one branch starts Ray without the counts the other passes: Ray takes the whole host",
                expect=[("main.py", 6)]),
        Example({"eval/linear.py": "import argparse\n"
                                   "from data import make_loader\n"
                                   "def test_on(ds, batch_size, num_workers):\n"
                                   "    return make_loader(dataset=ds, batch_size=batch_size, num_workers=num_workers)\n"
                                   "def run(ds, batch_size, num_workers):\n"
                                   "    train = make_loader(dataset=ds, batch_size=batch_size, num_workers=num_workers)\n"
                                   "    return train, test_on(ds, batch_size, 0)\n"
                                   "def main():\n"
                                   "    p = argparse.ArgumentParser()\n"
                                   "    p.add_argument('--num-workers', type=int, default=8)\n"
                                   "    args = p.parse_args()\n"
                                   "    run(range(8), 4, num_workers=args.num_workers)\n",
                 "data/__init__.py": "from .loaders import make_loader\n",
                 "data/loaders.py": "import torch\n"
                                    "def make_loader(*, dataset, batch_size, num_workers):\n"
                                    "    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=num_workers)\n"},
                "a helper given 0 workers beside the flag its sibling call routes, through a loader "
                "the package re-exports", expect=[("eval/linear.py", 7)], severity="warning"),
        Example({"scripts/eval/mmlu.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\naccelerate launch --num_processes $NPROC -m ev.run\n",
                 "scripts/eval/gsm8k.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\naccelerate launch --num_processes $NPROC -m ev.run\n",
                 "scripts/eval/humaneval.sh": "#!/bin/bash\nNPROC=${NPROC:-8}\ntorchrun --nproc-per-node=$NPROC ev/run.py\n",
                 "scripts/eval/needle.sh": "#!/bin/bash\naccelerate launch --num_processes 8 -m ev.needle\n"},
                "one launch script passes a literal rank count where its siblings (accelerate or "
                "torchrun) pass the user's variable",
                expect=[("scripts/eval/needle.sh", 2)], severity="warning"),
    ]

    def check(self, result):
        # one finding a line: a keyword literal whose consumer is already warned of is not
        # reported again, unless that warning says no configuration reaches the call while the
        # keyword names the setting that does, or the consumer's finding is a note (then the
        # keyword's finding replaces it)
        unconfigured: set = set()  # (file, line) of warnings "that no configuration reaches"
        found = list(self._findings(result, unconfigured))
        loud = {(f.file, f.line) for f in found if f.severity == "warning"}
        keyword = [f for f in self._keyword_literals(result, loud)
                   if (f.file, f.line) in unconfigured or (f.file, f.line) not in loud]
        # (a note on the line says less than the keyword's finding: that one stands alone)
        replaced = {(f.file, f.line) for f in keyword} & (unconfigured | {(f.file, f.line) for f in found
                                                                         if f.severity == "note"})
        yield from (f for f in found if (f.file, f.line) not in replaced)
        yield from keyword
        yield from self._pinned_gpu_set(result)

    def _pinned_gpu_set(self, result):
        """`os.environ["CUDA_VISIBLE_DEVICES"] = "0"` unconditionally in a file whose code spreads
        its work over every GPU the process sees (`device_map="auto"`, `torch.cuda.device_count()`,
        `DataParallel(`, a `Trainer(`; the extractor's `spreads_devices`): that code gets one GPU,
        whatever the user exported. A note: a script may mean to run on one GPU."""
        one_gpu = re.compile(r"\s*\d+\s*")
        flags = {(s.file, s.leaf): s for s in result.sites
                 if s.role == "define" and s.kind == "python" and s.detail.get("via") == "argparse"}
        for site, _var in environment_writes(result):
            spread = (result.meta.get(site.file) or {}).get("spreads_devices")
            if not spread or site.key != "CUDA_VISIBLE_DEVICES" or site.detail.get("condition"):
                continue
            # `os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus` with `--gpus` defaulting to "0":
            # the default pins one GPU unless the flag is given
            expr = str(site.detail.get("expr") or "")
            flag = flags.get((site.file, expr.rsplit(".", 1)[-1])) if site.value is None \
                and re.fullmatch(r"args\.\w+", expr) else None
            if flag is not None and one_gpu.fullmatch(str(flag.value)):
                why = (f": `CUDA_VISIBLE_DEVICES` is set here from {expr}, whose default {str(flag.value).strip()} "
                       f"({where(flag)}) replaces the GPUs the user exported unless the flag is given (set it only "
                       f"when the flag is given)")
            elif one_gpu.fullmatch(str(site.value)):
                why = (f": `CUDA_VISIBLE_DEVICES` is pinned to {str(site.value).strip()} here, replacing the GPUs the "
                       f"user exported (set it only when it is unset, or take a flag)")
            else:
                continue
            yield self.finding(site, knob="CUDA_VISIBLE_DEVICES", related=[site],
                               backend=f"`{spread['text']}` (line {spread['line']})",
                               what="one GPU", why=why, severity="note", confidence="medium")

    def _findings(self, result, unconfigured: set):
        configured = _configured_by_leaf(result)
        # file -> the config sections code reads keys of there (the Python extractor's facts)
        sections = {rel: set(m.get("sections_read") or ()) for rel, m in result.meta.items() if isinstance(m, dict)}
        at_parameter = list(self._defaults_that_always_run(result, _never_passed(result)))
        yield from (f for f, _key in at_parameter if f is not None)
        reported: set = set()  # (file, line) of the consume sites reported below
        ones: list = []  # notes on one worker that no setting reaches
        never_passed = {key for _f, key in at_parameter}
        # helpers another call passes a configured value: a call that omits it is QG103's
        passed = {(s.detail.get("helper_site"), s.detail.get("helper_param")) for s in result.sites
                  if s.role == "consume" and s.detail.get("via") == "helper" and not s.detail.get("omitted")
                  and s.detail.get("flow_key")}
        indexed: dict[str, _Candidates] = {}
        fed_by: dict[tuple, set] = {}  # (file, line) of a read -> the backends its flows reach
        # (file, line) -> the condition a site there runs under (a helper's consume site has none
        # of its own: the keyword define on its line does)
        conditions = {(s.file, s.line): s.detail["condition"] for s in result.sites if s.detail.get("condition")}
        split = list(self._split_work(result))
        yield from split
        split_lines = {(f.file, f.line) for f in split}  # (the pool's literal size is that finding)
        reported.update(split_lines)
        for s in result.sites:
            if s.role == "consume" and s.detail.get("backend"):
                for step in s.detail.get("flow") or ():
                    fed_by.setdefault((step.get("file"), step.get("line")), set()).add(str(s.detail["backend"]))
        for knob in result.knobs:
            for site in knob.sites:
                if site.role != "consume" or site.kind != "python" or is_test_site(site) \
                        or (site.file, site.line) in split_lines:
                    continue
                d = site.detail
                if d.get("project_backend"):
                    continue  # a count of the project's own serial class: QG106's, not a parallel backend
                if d.get("per_item"):
                    continue  # as many workers as the items it is given (`inputs=[val_file], num_workers=1`)
                if d.get("one_batch") and _int(site.value) in (0, 1):
                    continue  # `loader = DataLoader(ds, num_workers=0)`, then `next(iter(loader))`: a probe
                condition = d.get("condition") or conditions.get((site.file, site.line))
                if idioms.is_debug_condition(condition):
                    continue  # `if args.smoke_test: train(num_workers=2)`: a mode the user chose (as QG104)
                if idioms.nothing_configured(condition):
                    continue  # `if not config_path: return Store(numjobs=16)`: defaults, no config given
                if d.get("via") == "helper" and d.get("omitted") and \
                        (d.get("helper_site"), d.get("helper_param")) in never_passed:
                    continue  # reported once, at the helper's parameter
                if d.get("via") == "helper" and d.get("omitted") and (d.get("helper_site"), d.get("helper_param")) in passed:
                    continue  # a sibling call passes the configured value: QG103 says which
                backend = d.get("backend") or "the consumer"
                if backend in _SKIP_BACKENDS:
                    continue
                # a thread pool that maps the program's own work (scoring every rollout on
                # `ThreadPoolExecutor(max_workers=48)`) sizes that work with a count nobody can
                # set: a note; other thread pools (I/O, timeouts) are not reported
                threads = backend_kind(site) == "threads" and not steps_envs(site)
                if threads and not (d.get("pool") and d.get("pool_use") in _WORK_POOLS):
                    continue
                param = d.get("param") or knob.leaf
                value = _int(site.value) if site.value is not None else _int(site.default)
                defaulted = bool(d.get("omitted"))
                if defaulted and value == 0 and d.get("via") != "helper":
                    # a loader with no workers: a key of that name in some config (one trainer's of
                    # many) says little; _serial_beside_routed speaks when its siblings route it
                    continue
                literal = defaulted or (value is not None and d.get("literal", not d.get("expr")))
                if not literal or value is None:
                    continue
                # a loader inside a worker: often no workers of its own on purpose (a note)
                worker = idioms.runs_in_worker(site) if value <= 1 and not defaulted else None
                name = knob.leaf.lower() if knob.leaf.lower() in configured else str(param).lower()
                if name not in indexed:
                    indexed[name] = _Candidates(configured.get(name) or [])
                # the same file reading the knob is strong evidence; a config of that name
                # elsewhere in the project may be an unrelated setting (a note). A configured key
                # whose section this file reads (`config.data.train_batch_size` beside
                # `DataLoader(num_workers=8)` and `data.num_workers: 8` in the config) is the
                # setting meant for this call, whatever else shares its name
                other, how = indexed[name].cite(site, sections.get(site.file, set())) if not threads else (None, None)
                if how not in ("file", "section"):
                    field = _parsed_field(site, configured.get(name) or (), result.meta)
                    if field is not None:
                        other, how = field, "parsed"
                if other is not None and other.role == "read" and other.detail.get("via") == "param" and (
                        defaulted or str(d.get("helper") or "").rsplit(".", 1)[-1]
                        in _function_names(str(other.detail.get("function") or ""))):
                    # the helper's own parameter is no configuration read (`train(num_workers=4)` and
                    # `def train(num_workers=2)`): QG103 speaks when a sibling call passes the configured value
                    other, how = None, None
                same_file = how in ("file", "section", "parsed")
                if other is not None and _splats_the_section(d, other, site.file):
                    continue  # `load_dataset(num_proc=1, **dict(dataset_kwargs))`: the user's key would clash and raise
                if other is not None and _feeds_another_backend(fed_by, other, backend):
                    continue  # data.num_workers read for the DataLoader is not this Process's count
                what = (f"no {param} argument, so its default {show(value)} runs" if defaulted
                        else f"the literal {param}={show(value)}" + (f" ({d['otherwise']})" if d.get("otherwise") else ""))
                if d.get("via") == "helper":  # through a helper whose parameter reaches the backend
                    what = (f"no {d['helper_param']} argument to {d['helper']}(), so its default {show(value)} runs"
                            if defaulted else f"the literal {d['helper_param']}={show(value)} through {d['helper']}()")
                if other is not None:
                    why = (f", although this file reads {other.key} at line {other.line}; the configured value "
                           f"never reaches this call" if same_file and other.file == site.file else
                           f", although this script parses {other.detail.get('owner')}, whose {other.leaf} "
                           f"({where(other)}) its command line sets; that value never reaches this call"
                           if how == "parsed" else
                           f", although {other.key} is configured at {where(other)} and this file reads "
                           f"`{_section(other.key)}` settings; the configured value never reaches this call"
                           if same_file else
                           f"; {other.key} is configured at {where(other)}: if it is meant for this call, "
                           f"it never reaches it")
                    # a helper called with 1 is usually a probe or eval env (make_env(num_envs=1)), and
                    # so is one env bound to an eval name (`eval_env = ParallelEnv(1, ...)`); a helper
                    # given 0 workers beside the setting this file routes to its siblings is no probe
                    probe = value <= 1 and (d.get("via") == "helper" and not defaulted and value == 1
                                            or idioms.bound_for_evaluation(site))
                    if worker:
                        why += " (this function runs as a worker: nested workers may be avoided on purpose)"
                    reported.add((site.file, site.line))
                    yield self.finding(site, knob=knob.name, related=[other, site], backend=_short(backend),
                                       what=what, why=why,
                                       **({} if same_file and not probe and not worker
                                          else {"severity": "note", "confidence": "medium"}))
                elif not defaulted and value == 1 and (backend_kind(site) in ("processes", "envs")
                                                       or _shards(site, param) and "#" not in site.source) \
                        and not worker and d.get("pool_use") not in ("io", "process-start"):
                    # one worker process that no setting can raise (`DataLoader(ds, num_workers=1)`,
                    # `Pool(processes=1)`): 0 is the usual deliberate choice, 1 a count frozen in
                    # code; a note, as nothing promised otherwise. So is a model held on one GPU
                    # (`LLM(path, tensor_parallel_size=1)`): a bigger model cannot be spread (unless
                    # a comment beside it gives the reason: `# one GPU: the model is small`)
                    one = "one GPU for the model" if _shards(site, param) else "one worker process"
                    ones.append((self.finding(site, knob=knob.name, related=[site], backend=_short(backend),
                                              what=what, why=f": {one}, and no configuration reaches it",
                                              severity="note", confidence="medium"), param))
                elif not defaulted and value > 1:
                    # a pool kept for timeouts or I/O, or a loader default filled in when the
                    # user gave none (`if loader_kwargs is None: ...`), is no lost setting
                    takes = None if (threads or d.get("pool") and d.get("pool_use") not in ("compute", "env-step")
                                     or "is None" in str(d.get("mapping_condition") or "")) \
                        else _takes_settings(site.file, result.meta)
                    reported.add((site.file, site.line))
                    if takes:
                        unconfigured.add((site.file, site.line))
                    yield self.finding(site, knob=knob.name, related=[site], backend=_short(backend),
                                       what=what + _task_starts(d), why=" that no configuration reaches" + (
                                           f", in a file that reads its settings from `{takes}`" if takes else ""),
                                       **({} if takes else {"severity": "note", "confidence": "medium"}))
        yield from (f for f in self._commented_out(result) if (f.file, f.line) not in reported)
        yield from self._sibling_literals(result)
        yield from self._serial_beside_routed(result, reported)
        yield from self._machine_beside_setting(result, reported)
        # (after the siblings' check: a 1 beside the count its siblings route is that warning)
        # (a 1 whose computation is commented out beside it is that finding: the fact sits at
        # the statement's first line, the site at its keyword's)
        frozen: dict[tuple, list[int]] = {}  # (file, param) -> first lines of statements with such a fact
        for rel, fact in commented_out(result, "count"):
            frozen.setdefault((rel, fact["param"]), []).append(fact["line"])
        yield from (f for f, param in ones if (f.file, f.line) not in reported
                    and not any(0 <= f.line - line <= STATEMENT_LINES for line in frozen.get((f.file, param), ())))
        yield from self._launch_commands(result)
        yield from self._fixed_cpus_per_task(result)
        yield from self._tool_threads(result)

    def _tool_threads(self, result):
        """`["ffmpeg", "-threads", "0", ...]`, `nvcc_args + ["--threads", "4"]`, `parallel -j 4` in a
        shell script: a program the project starts sizes a pool of its own by an option of its
        own (rules/commands.yaml, read by auditor/extract/tool_threads.py), and the project fixes
        it with a literal: no setting reaches that count. A note: the number may be the right
        one for the program, but it does not follow the machine or the user."""
        for rel, meta in sorted(result.meta.items()):
            facts = meta.get("tool_threads") if isinstance(meta, dict) else None
            if not facts or is_test_file(rel):
                continue
            for fact in facts:
                program, flag, value = fact["program"], fact["flag"], fact["value"]
                auto = f" ({value}: {program} picks the count itself, usually every core)" \
                    if value == fact.get("auto") else ""
                yield self.finding(None, file=rel, line=fact["line"], column=fact.get("col", 1),
                                   knob=flag.lstrip("-"),
                                   backend=f"`{program}`" if program else "The program this command starts",
                                   what=f"the literal `{flag} {value}`{auto}",
                                   why=", a count of its own pool that no setting of the project reaches",
                                   severity="note", confidence="medium")

    def _fixed_cpus_per_task(self, result):
        """`executor.update_parameters(cpus_per_task=10, ...)` (submitit) or `"--cpus-per-task": 10`
        in the sbatch options a Python launcher builds, for a program whose worker count users
        set (`--num_workers` of the main_pretrain.py it imports): SLURM gives each task ten CPUs
        whatever that count asks, so a larger count runs its workers on ten CPUs, and the
        launcher has no flag to change it. Only in Python
        (a launch script's `#SBATCH --cpus-per-task=10` is the user's own setting), only a
        literal, and only where a parser or settings class of the launcher's file, or of a
        project file it imports (two levels), declares a count of CPU-bound workers (workers,
        processes, threads, CPUs): what it starts is not known otherwise."""
        from auditor import vocab as vocab_mod

        vocab = vocab_mod.load(result.settings or None)
        # (not the defaults filled in when the user gave no SLURM options: `if
        # RUNNER_CONFIG.slurm_args is None: raw_slurm_args = {"cpus_per_task": "4", ...}`)
        fixed = [s for s in result.sites
                 if s.role == "define" and s.kind == "python" and not is_test_site(s)
                 and _cpus_per_task(s.leaf) and s.detail.get("via") in ("keyword", "dict")
                 and isinstance(as_number(s.value), int) and not idioms.nothing_configured(s.detail.get("condition"))]
        if not fixed:
            return
        counts: dict[str, object] = {}  # file -> the first define there of a count of CPU-bound workers
        for knob in result.knobs:
            if _cpus_per_task(knob.leaf) or not vocab.units(knob.leaf) & _WORKER_UNITS:
                continue
            for d in knob.sites:
                if is_config_define(d) and d.kind == "python" and not is_test_site(d) \
                        and (d.file not in counts or d.line < counts[d.file].line):
                    counts[d.file] = d
        modules = modules_to_files(result.meta)
        for site in fixed:
            # the program the launcher starts: its own file, or a project file it imports
            near = near_files(result.meta, site.file, modules)
            count = counts.get(site.file) or next((counts[f] for f in sorted(near) if f in counts), None)
            if count is None:
                continue
            yield self.finding(site, knob="cpus_per_task", related=[site, count],
                               backend="each SLURM task",
                               what=f"{as_number(site.value)} CPUs, a literal in the launcher",
                               why=f", whatever the worker count users set asks ({count.leaf} at {where(count)}): "
                                   f"a larger count runs its workers on these CPUs, and no flag changes them",
                               **({"severity": "note", "confidence": "medium"} if in_examples(site.file) else {}))

    def _commented_out(self, result):
        """`LLM(path, tensor_parallel_size=1)  # torch.cuda.device_count())`, `# with ProcessPool(
        max_workers=min(len(x), os.cpu_count())) as pool:` above the same line with 1, or
        `NUM_PROCESSES=1 #$((NUM_GPUS_PER_NODE * NUM_NODES))` in a launch script: the count was
        computed, and the computation is commented out (auditor/extract/py_commented.py)."""
        for rel, fact in commented_out(result, "count"):
            value = fact["value"]
            yield self.finding(None, file=rel, line=fact["line"], column=fact["column"], knob=fact["param"],
                               backend=_short(fact.get("callee") or fact["param"]),
                               what=f"the literal {fact['param']}={value}" if value.isdigit()
                               else f"{fact['param']}={value}",
                               why=f", where the commented-out code at line {fact['comment_line']} computed "
                                   f"`{fact['was']}`: that count never reaches it",
                               **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))
        for site in result.sites:
            was = site.detail.get("commented_out")
            if not was or site.role != "define" or is_test_file(site.file):
                continue
            yield self.finding(site, knob=site.key, related=[site], backend=site.key,
                               what=f"the literal {show(site.value)}",
                               why=f", where the expansion beside it, `{was}`, is commented out: the count it "
                                   f"computed never reaches the launch",
                               **({"severity": "note", "confidence": "medium"} if in_examples(site.file) else {}))

    def _split_work(self, result):
        """`part_len = len(files) // args.num_tasks`, then `with Pool() as pool:
        pool.starmap(annotate, parts)`: the user's count chooses how many parts the work is cut
        into, and the pool's own size how many run at once (auditor/extract/py_parts.py)."""
        for rel, meta in sorted(result.meta.items()):
            for fact in (meta.get("split_work") or ()) if isinstance(meta, dict) else ():
                if is_test_file(rel):
                    continue
                size = fact["size"]
                what = ("no size, so its default (the machine's CPU count) runs" if size is None
                        else f"the literal size {size}" if isinstance(size, int) else f"the size `{size}`")
                yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob=fact["key"],
                                   backend=fact["pool"], what=what,
                                   why=f", while the work it maps was cut into `{fact['read']}` parts at line "
                                       f"{fact['split_line']}: that setting chooses how many parts there are, "
                                       f"not how many run at once",
                                   **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))

    def _launch_commands(self, result):
        """A launcher started from code (auditor/extract/py_launch.py) with no count of its
        processes (`["torchrun"] + launcher_args + ["-m", "pkg.train"]`: its default of 1 runs,
        a note), or with a literal count of 1 while the count the user sets goes to another of
        its flags (`--nproc_per_node 1 --nnodes str(self.process_num)`: a warning)."""
        from auditor import catalogue

        defaults = {rule["launcher"]: (rule["default_count"], rule["count_flags"])
                    for rule in catalogue.data("workers.yaml").get("rules", [])
                    if rule.get("launcher") and "default_count" in rule}
        for rel, meta in sorted(result.meta.items()):
            for fact in (meta.get("launch_commands") or ()) if isinstance(meta, dict) else ():
                if fact["launcher"] not in defaults or is_test_file(rel):
                    continue
                default, flags = defaults[fact["launcher"]]
                given = next((fact["flags"][f] for f in flags if f in fact["flags"]), None)
                launcher = fact["launcher"]
                if given is None:
                    carried = f", unless `{fact['open'][0]}` carries {flags[0]}" if fact["open"] else ""
                    yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob=flags[0].lstrip("-"),
                                       backend=f"The {launcher} command built here",
                                       what=f"no {flags[0]}, so {launcher}'s default of {default} process per node "
                                            f"runs{carried}",
                                       why="", severity="note", confidence="medium")
                    continue
                others = {f: v for f, v in fact["flags"].items() if f not in flags and not v["literal"]
                          and v["value"] is not True and _COUNT_FLAG.search(f)}
                if given["literal"] and as_number(given["value"]) == 1 and others:
                    flag, other = next(iter(others.items()))
                    yield self.finding(None, file=rel, line=given["line"], column=1, knob=flags[0].lstrip("-"),
                                       backend=f"The {launcher} command built here",
                                       what=f"the literal {flags[0]} 1",
                                       why=f" while the count the program computes or reads, `{other['value']}`, goes to "
                                           f"{flag}: one process runs on this node, whatever that count says")

    def _keyword_literals(self, result, loud: set = frozenset()):
        """`get_infer_args(dict(..., preprocessing_num_workers=16))`, `PromptDataset(num_workers=8)`:
        a literal given to a keyword named like a setting the user sets elsewhere (a field of a
        dataclass or parser, a config key). On this path the user's value never arrives."""
        fields: dict[str, list] = {}
        for s in result.sites:
            # a field or flag the project declares for users; a key of some config file of the tree
            # (a store daemon's YAML) may be another program's setting of the same name
            if s.role == "define" and is_config_define(s) and not is_test_file(s.file) and \
                    s.detail.get("via") in ("dataclass", "argparse", "pydantic", "attrs"):
                fields.setdefault(s.leaf.lower(), []).append(s)
        knob_of = {id(s): k for k in result.knobs for s in k.sites}
        routes = _routed_keywords(result)
        helper_at, helper_routes = _helper_routes(result)
        # (as before 0.4.17: without declared fields no import is followed; see imports_either)
        neighbours = ImportNeighbours(result.meta) if fields else None

        def imports_either(a: str, b: str) -> bool:
            """One file imports the other (two levels): a script's own flags are no setting of a
            script that does not import it (dinov2's knn.py and linear.py each have
            --num-workers). A settings class's field is the project's (a web UI's literal for
            `DataArguments.preprocessing_num_workers` reaches the CLI it launches)."""
            return a == b if neighbours is None else neighbours.either(a, b)
        ours = project_packages(result)
        # (file, leaf) of the flags and fields a file declares itself: a literal beside them is its default's
        flags = {(s.file, s.leaf) for s in result.sites if s.role == "define"
                 and s.detail.get("via") in ("argparse", "click", "absl", "dataclass", "pydantic", "attrs")}
        # a file writing the same key as a literal many times is a table of settings in code (one
        # model per entry), not a call that drops the user's value
        per_file: dict[tuple, int] = {}
        for site in result.sites:
            if site.role == "define" and site.kind == "python" and site.detail.get("via") in ("keyword", "dict"):
                per_file[(site.file, site.leaf)] = per_file.get((site.file, site.leaf), 0) + 1
        for site in result.sites:
            d = site.detail
            if site.role != "define" or site.kind != "python" or d.get("via") != "keyword" \
                    or per_file.get((site.file, site.leaf), 0) >= TABLE \
                    or is_test_file(site.file) or d.get("kwargs_after"):
                continue
            if d.get("function") in (None, "<module>") and (d.get("settings_keywords") or 0) < SETTINGS_KEYWORDS_MIN:
                continue  # (a module-level call: only one built from the user's settings)
            value = _int(site.value)
            if value is None or value < 2:
                continue  # `init_process_group(world_size=1)`: one process on purpose, as for consumers
            if idioms.nothing_configured(d.get("condition")):
                continue  # `if not config_path: return Store(numjobs=16, ...)`: defaults, no config given
            if d.get("replaceable_at"):
                continue  # `args.update(json.loads(extra_args))` later: a default the user's mapping replaces
            callee_q = str(d.get("callee") or "")
            kind = d.get("callee_kind")
            if kind == "method":
                continue
            # another package's function (snapshot_download(max_workers=8)) has knobs of its own,
            # unless the project's other calls of it pass that keyword a configured value
            foreign = kind == "import" and callee_q.split(".")[0] not in ours and callee_q != "dict"
            # the call's other keywords read the user's settings (`TrainerConfig(batch_size=args.batch_size,
            # ..., num_workers=4)`): built from them, with this count left out
            among = (d.get("settings_keywords") or 0) >= SETTINGS_KEYWORDS_MIN and \
                (site.file, site.leaf) not in flags
            if CONSTRUCTS_CONFIG.search(callee_q.rsplit(".", 1)[-1]) and not among:
                continue  # ParallelismConfig(tensor_parallel_degree=8): a preset, the configuration itself
            callee = str(d.get("callee") or "the call").rsplit(".", 1)[-1]
            knob = knob_of.get(id(site))
            example = in_examples(site.file)
            declared = [f for f in fields.get(site.leaf.lower(), ()) if f.file != site.file
                        and as_number(f.value) != value
                        and (f.detail.get("via") != "argparse" or imports_either(site.file, f.file))
                        ] if not foreign else []
            routed = [] if declared else [r for r in routes.get((_tail(d.get("callee")), site.leaf), ())
                                          if r[0] != site.file or r[1] != site.line]
            if not declared and not routed:
                # the same project helper reached under another name (`from ..utils import
                # track_progress_rich`, re-exported from utils/mp_util.py): the flow's helper
                # consume sites name the function by its sink
                # (across files only from a holder named as settings, or a file one imports: every
                # script has its own `args`)
                routed = [r for sink in helper_at.get((site.file, site.line, site.leaf), ())
                          for r in helper_routes.get(sink, ()) if r[0] == site.file and r[1] != site.line
                          or r[0] != site.file and (_names_settings(_holder_of(r[2], site.leaf))
                                                    or imports_either(site.file, r[0]))]
            if declared:
                field = declared[0]
                why = (f", while {site.leaf} is a setting users set ({where(field)}"
                       f"{', default ' + show(field.value) if field.value is not None else ''}): "
                       f"on this path their value never arrives")
                related = [field, site]
            elif routed:
                file, line, text = routed[0]
                why = (f", while {len(routed)} other call{'s' if len(routed) > 1 else ''} of {callee}() "
                       f"pass{'' if len(routed) > 1 else 'es'} a "
                       f"configured value (`{text}` at {file}:{line}): on this path the user's setting never arrives")
                related = [site]
            elif among and (site.file, site.line) not in loud:
                # a note: a fixed count beside the settings may be the script's choice (a loader's 4
                # workers for a tokenized in-memory dataset); the warning at a backend it reaches stands
                why = (f", while {d['settings_keywords']} other keywords of the call come from "
                       f"`{d.get('settings_root')}` (the user's settings) and none of them sets {site.leaf}: "
                       f"no setting reaches it")
                yield self.finding(site, knob=knob.name if knob else site.key, related=[site],
                                   backend=f"{callee}()", what=f"the literal {site.leaf}={show(value)}", why=why,
                                   severity="note", confidence="medium")
                continue
            else:
                continue
            yield self.finding(site, knob=knob.name if knob else site.key, related=related,
                               backend=f"{callee}()", what=f"the literal {site.leaf}={show(value)}", why=why,
                               **({"severity": "note", "confidence": "medium"} if example else {}))

    def _defaults_that_always_run(self, result, never_passed):
        """`def __init__(self, ..., num_processors=8)` feeding `ds.map(num_proc=num_processors)`,
        and no caller passes num_processors: the literal default is the only count that ever runs
        and no configuration reaches it. Once, at the parameter, instead of once per caller.
        Yields (finding, (helper site, parameter))."""
        done = set()  # one finding per parameter default, however many backend lines it feeds
        for (helper_site, param), callers in sorted(never_passed.items()):
            file, _, line = helper_site.rpartition(":")
            # the omitting call's trace starts at the default that runs: the parameter's own, in
            # the file of the function the callers call (`entry_point(n_workers=4)` in a script,
            # forwarding to a helper in another file with a default of its own)
            started = _default_source(callers)
            begins = (started["file"], started["line"]) if started else None
            defaults = [s for s in result.sites if s.role == "read" and (s.file == file or (s.file, s.line) == begins)
                        and s.key == param and s.detail.get("via") == "param" and _int(s.default) is not None]
            helper = str(next(c for c in callers if c.detail.get("omitted")).detail.get("helper") or "")
            # the default of the function the callers call, not of one it forwards to
            defaults.sort(key=lambda s: ((s.file, s.line) != begins,
                                         str(s.detail.get("function") or "").rsplit(".", 1)[-1] != helper.rsplit(".", 1)[-1]))
            # a parameter named like no knob (`ntasks=64` feeding a pipeline's `tasks=`) has no
            # read site of its own: the omitting call's trace starts at the default's literal
            source = None if defaults else started
            default = defaults[0].default if defaults else source and source.get("value")
            if _int(default) is None or _int(default) < 2:
                continue
            at = defaults[0] if defaults else None
            place = (at.file, at.line) if at else (source["file"], source["line"])
            if (*place, param) in done:
                yield None, (helper_site, param)
                continue
            done.add((*place, param))
            backend = str(callers[0].detail.get("backend") or "its backend")
            # a thread pool counts when it steps environments, maps the program's own work or
            # starts a process per task (a code-execution harness's `check_correctness`)
            threads = backend_kind(callers[0]) == "threads" and not steps_envs(callers[0])
            if backend in _SKIP_BACKENDS or threads and not (callers[0].detail.get("pool")
                                                             and callers[0].detail.get("pool_use") in _WORK_POOLS):
                continue
            # a caller in a program that reads its settings could have passed one; none does
            omitting = [c for c in callers if c.detail.get("omitted")]
            taking, handle = next(((c, h) for c in omitting if (h := _takes_settings(c.file, result.meta))),
                                  (None, None))
            n_omit = len({(c.file, c.line) for c in omitting})
            literal = len({(c.file, c.line) for c in callers}) - n_omit
            passes = (f"none of its {len(callers)} caller{'s' if len(callers) > 1 else ''} (e.g. "
                      f"{where(taking or omitting[0])}) passes {param}" if not literal else
                      f"{n_omit} call{'s' if n_omit > 1 else ''} (e.g. {where(taking or omitting[0])}) omit"
                      f"{'' if n_omit > 1 else 's'} {param} and the other call{'s' if literal > 1 else ''} that "
                      f"reach{'' if literal > 1 else 'es'} this backend pass{'' if literal > 1 else 'es'} a literal")
            yield self.finding(at, knob=param, related=[at, *omitting[:3]] if at else omitting[:3],
                               **({} if at else {"file": source["file"], "line": source["line"],
                                                  "column": source.get("column") or 1,
                                                  "flow": omitting[0].detail.get("flow") or []}),
                               backend=_short(backend),
                               what=f"the default {param}={show(default)} of {helper}() "
                                    f"(through line {line}){_task_starts(callers[0].detail)}",
                               why=f" on {'every call' if not literal else 'the calls that omit it'}: {passes}, and "
                                   f"no configuration reaches it" + (f" although {taking.file} reads its settings "
                                                                     f"from `{handle}`" if taking else ""),
                               **({} if taking and not threads else {"severity": "note", "confidence": "medium"})), \
                (helper_site, param)

    def _serial_beside_routed(self, result, reported: set):
        """`StatefulDataLoader(ds, shuffle=data_config["shuffle"])` with no num_workers, while the
        project's other loaders pass `num_workers=data_config["num_workers"]`; `.map(f, num_proc=1)`
        in one pipeline where another passes `data_args.preprocessing_num_workers` to the same map.
        The settings object the siblings take the count from is read right here, so the count the
        user sets was at hand and this call drops it."""
        routed: dict[tuple, list] = {}  # (backend, param) -> [(site, holder)] of calls routing the count
        for s in result.sites:
            d = s.detail
            if s.role != "consume" or s.kind != "python" or is_test_site(s) or d.get("omitted") \
                    or d.get("literal") or not d.get("expr") or not d.get("backend"):
                continue
            holder = holder_of(str(d["expr"]))
            if holder and holder not in ("self", "cls"):
                routed.setdefault((d["backend"], d.get("param")), []).append((s, _holder_key(holder)))
        routes_of = Counter((*call, holder) for call, sites in routed.items() for _s, holder in sites)
        serial_beside: Counter = Counter()  # the same key -> calls leaving it serial with that holder at hand
        candidates = []
        for site in result.sites:
            d = site.detail
            if site.role != "consume" or site.kind != "python" or is_test_site(site) or d.get("via") == "helper" \
                    or (site.file, site.line) in reported or d.get("project_backend") or d.get("per_item"):
                continue
            omitted = bool(d.get("omitted"))
            if not omitted and not (d.get("literal") and _int(site.value) in (0, 1)):
                continue
            if _EMPTY_DATA.search(site.source) or _ONE_BATCH.search(site.source) or d.get("one_batch"):
                continue  # `return DataLoader([])`, `next(iter(DataLoader(ds)))`: nothing to split
            if not omitted and _int(site.value) == 1 and backend_kind(site) == "envs" \
                    and idioms.bound_for_evaluation(site):
                continue  # `eval_env = ParallelEnv(1, ...)`: one evaluation env on purpose (torchrl's)
            facts = result.meta.get(site.file)
            at_hand = {_holder_key(h) for h in (facts.get("holders") or {}).get(d.get("function"), ())} \
                if isinstance(facts, dict) else set()
            call = (d.get("backend"), d.get("param"))
            serial_beside.update((*call, h) for h in at_hand if (*call, h) in routes_of)
            candidates.append((site, call, at_hand, omitted))
        hits: dict[tuple, list] = {}  # one finding a call, however many of its counts it leaves out
        for site, call, at_hand, omitted in candidates:
            d = site.detail
            sibling = next((
                (other, holder) for other, holder in routed.get(call, ())
                if holder in at_hand and other is not site
                # routing is the norm: as many calls take it from this holder as leave it serial beside it
                and routes_of[(*call, holder)] >= serial_beside[(*call, holder)]
                # across files, only a holder named as settings; a literal stands apart from a
                # sibling in its own function (a small eval loader beside the training one)
                and (other.file == site.file or _names_settings(holder))
                and (omitted or other.file != site.file or other.detail.get("function") != d.get("function"))), None)
            if sibling is None or idioms.runs_in_worker(site):
                continue
            other, holder = sibling
            value = site.value if site.value is not None else site.default
            hits.setdefault((site.file, site.line, d.get("backend"), omitted, value is None), []).append(
                (site, other, holder))
        for (_file, _line, backend, omitted, by_itself), group in hits.items():
            site, other, holder = group[0]
            params = ", ".join(s.detail.get("param") for s, _o, _h in group)
            value = _int(site.value) if site.value is not None else site.default
            arguments = "argument" if len(group) == 1 else "arguments"
            what = (f"the literal {params}={show(value)}" if not omitted
                    else f"no {params} {arguments}, so the backend sizes itself (default None)" if by_itself
                    else f"no {params} {arguments}, so its default {show(value)} runs")
            passes = " and ".join(f"`{o.detail['expr']}`" for _s, o, _h in group)
            reported.add((site.file, site.line))
            leaves = ", ".join(o.leaf for _s, o, _h in group)
            yield self.finding(site, knob=other.key, related=[o for _s, o, _h in group] + [site],
                               backend=_short(str(backend)), what=what,
                               why=f", while {where(other)} passes {passes} to the same backend and "
                                   f"this function reads {_shown(holder)} too: the {leaves} the user sets never "
                                   f"{'reaches' if len(group) == 1 else 'reach'} this call")

    def _machine_beside_setting(self, result, reported: set):
        """`[Process(target=f) for _ in range(cpu_count())]` or `Pool(cpu_count() * 2)` in a file
        whose other pool takes the count the user sets (`Pool(self.args.n_cpus)`, --n_cpus
        "Number of worker threads to spawn"): the machine sizes this one, and the setting meant
        for the program's workers never reaches it. Worker pools only (a pool, or one Process
        or Thread per turn of a loop), of one kind, both in one file; a loader or a dataset
        pipeline has counts of its own."""
        from auditor import vocab as vocab_mod

        vocab = vocab_mod.load(result.settings or None)
        declared = {k.name for k in result.knobs
                    if any(is_config_define(s) or s.kind == "shell" and s.role == "define" for s in k.sites)}
        routed: dict[tuple, list] = {}  # (file, kind) -> [(site, config step)] of pools the user's count sizes
        machine = []
        for s in result.sites:
            d = s.detail
            if s.role != "consume" or s.kind != "python" or is_test_site(s) or not (d.get("pool") or d.get("loop")):
                continue
            kind = backend_kind(s)
            if kind == "threads" and d.get("pool_use") != "compute":
                continue  # I/O and timeout pools
            steps = d.get("flow") or ()
            sources = [st for st in steps if st.get("role") == "source"]
            # the user's count of CPUs, processes or workers: one per GPU (`args.num_gpus`) is another pool
            config = next((st for st in sources if st.get("kind") == "config" and st.get("key") in declared
                           and vocab.units(str(st["key"]).rsplit(".", 1)[-1]) & _WORKER_UNITS), None)
            if config is not None:
                routed.setdefault((s.file, kind), []).append((s, config))
            elif sources and all(st.get("kind") == "cpu_count" for st in sources) \
                    and (s.file, s.line) not in reported and not idioms.runs_in_worker(s):
                # the machine alone: not `num_cpu if num_cpu else os.cpu_count()`, the user's first
                machine.append((s, kind, sources[0]))
        if not machine:
            return
        # (file) -> reads of a declared count of workers that reach no backend known here: the
        # user's count handed to something the scan cannot follow (`self.pool_class(args.n_cpus)`)
        consumed = {(s.file, k.name) for k in result.knobs for s in k.sites if s.role == "consume"}
        unfollowed: dict[str, list] = {}
        for knob in result.knobs:
            if knob.name not in declared or not vocab.units(knob.leaf) & _WORKER_UNITS:
                continue
            for s in knob.sites:
                if s.role == "read" and s.kind == "python" and not is_test_site(s) and \
                        s.detail.get("via") != "param" and (s.file, knob.name) not in consumed:
                    unfollowed.setdefault(s.file, []).append(s)
        for site, kind, measured in machine:
            sibling = next(((o, c) for o, c in routed.get((site.file, kind), ()) if o.line != site.line), None)
            if sibling is not None:
                other, config = sibling
                key, why = config["key"], (f", while line {other.line} passes `{config['text']}` to "
                                           f"{_short(str(other.detail['backend']))}")
            elif kind == "processes" and unfollowed.get(site.file):
                other = min(unfollowed[site.file], key=lambda r: abs(r.line - site.line))
                key, why = other.key, f", while this file reads the user's {other.key} at line {other.line}"
            else:
                continue
            reported.add((site.file, site.line))
            yield self.finding(site, knob=key, related=[other, site], backend=_short(str(site.detail["backend"])),
                               what=f"the machine's CPU count (`{measured['text']}` at line {measured['line']})",
                               why=f"{why}: the {key} the user sets for the program's workers never reaches this one",
                               **({"severity": "note", "confidence": "medium"} if in_examples(site.file) else {}))

    def _sibling_literals(self, result):
        """A config file that writes a literal where most of its siblings route the user's
        setting: `numEnvs: 128` in one task config of a folder whose others say
        `numEnvs: ${resolve_default:4096,${...num_envs}}`. `num_envs=N` reaches them, not it.
        The same for a launch script's count option (`--num_processes 8` where the folder's
        other scripts pass `$NPROC_PER_NODE`)."""
        groups: dict[tuple, list] = {}
        for knob in result.knobs:
            for site in knob.sites:
                if site.role != "define" or site.detail.get("generated") or site.detail.get("via") == "interpolation":
                    continue
                folder = site.file.rpartition("/")[0]
                if site.kind in CONFIG_KINDS:
                    key = site.detail.get("key_in_file") or site.key
                elif site.kind == "shell" and site.detail.get("launcher_option") and \
                        (site.detail.get("reference") or (_int(site.value) or 0) > 1):
                    # `accelerate launch --num_processes 8` in one eval script of a folder whose
                    # others pass `torchrun --nproc-per-node=$NPROC_PER_NODE` (one process is a
                    # debug run, not a lost setting): the launchers' rank counts are one setting
                    flag = str(site.detail.get("flag") or "")
                    key = "the rank count" if _flag_name(flag) in _rank_count_flags() \
                        else f"{site.detail.get('launcher')} {flag}"
                else:
                    continue
                groups.setdefault((folder, key), []).append(site)
        for (folder, key), sites in sorted(groups.items()):
            routed = [s for s in sites if s.detail.get("reference")]
            fixed = [s for s in sites if not s.detail.get("reference") and s.value is not None
                     and not s.detail.get("structured")]
            files = {s.file for s in routed}
            shell = sites[0].kind == "shell"
            if len(files) < SIBLINGS_MIN or len(files) < SIBLINGS_RATIO * len({s.file for s in fixed}):
                continue
            example = routed[0]
            for site in fixed:
                backend = f"{site.detail.get('launcher')} {site.detail.get('flag')}" if shell else key
                yield self.finding(
                    site, knob=site.key, related=[routed[0], site], backend=f"{backend} in {site.file}",
                    what=f"the literal {show(site.value)}",
                    why=f", while {len(files)} of the {len(files | {s.file for s in fixed})} "
                        f"{'launch scripts' if shell else 'configs'} in {folder or '.'}/ take it from the user's "
                        f"`{'$' if shell else ''}{example.detail['reference']}` ({'passed' if shell else 'interpolated'} "
                        f"at {where(example)}): a value set there never reaches this one",
                    flow=[{"file": site.file, "line": site.line, "column": site.column, "kind": "define",
                           "role": "source", "key": site.key, "value": site.value, "text": site.source}])


_WORKER_UNITS = frozenset({"cpu", "core", "proc", "process", "processor", "worker", "thread"})


def _cpus_per_task(leaf: str) -> bool:
    """SLURM's CPUs per task, as submitit (`cpus_per_task`) or sbatch (`--cpus-per-task`) spells it."""
    return leaf.lower().lstrip("-").replace("-", "_") == "cpus_per_task"


def _flag_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


@lru_cache(maxsize=1)
def _rank_count_flags() -> frozenset:
    """The flags by which launchers take the count of ranks they start (rules/workers.yaml
    `count_flags`: torchrun's --nproc_per_node, accelerate's --num_processes, ...)."""
    from auditor import catalogue

    return frozenset(_flag_name(f) for rule in catalogue.data("workers.yaml").get("rules", [])
                     for f in rule.get("count_flags") or () if len(_flag_name(f)) > 2)


def _names_settings(holder: str) -> bool:
    """`data_config`, `self.cfg.data_args`, `config.DATA`: named as a settings object or a section
    of one, and not one of the names (`args`, `cfg`) that every script gives its own, different
    settings."""
    if holder.startswith(_SECTION):
        return True  # a section of the settings (`config.DATA`, VISSL's): one schema across the project
    last = holder.rsplit(".", 1)[-1]
    return bool(_SETTINGS_HOLDER.search(last)) and last.lower() not in _GENERIC_HOLDERS


_SECTION = "<settings>."


def _shown(holder: str) -> str:
    return f"the settings' `{holder[len(_SECTION):]}` section" if holder.startswith(_SECTION) else f"`{holder}`"


def _holder_key(holder: str) -> str:
    """A holder as calls in any file spell it: a section of the settings by its path
    (`self.config.DATA`, `cfg.DATA` and `config.DATA` -> `<settings>.DATA`), else as written."""
    parts = holder.split(".")
    if parts[0] in ("self", "cls"):
        parts = parts[1:]
    if len(parts) >= 2 and "[" not in holder and idioms.is_config_name(parts[0]):
        return _SECTION + ".".join(parts[1:])
    return holder


def _function_names(qualname: str) -> tuple[str, ...]:
    """The names a call of QUALNAME uses: `TEDS.__init__` is called as TEDS()."""
    parts = qualname.split(".")
    return (parts[-1], parts[-2]) if len(parts) > 1 and parts[-1] == "__init__" else (parts[-1],)


def _holder_of(text: str, key: str) -> str:
    """`nproc = judge_kwargs.pop("nproc", 4)` -> judge_kwargs; `args.num_workers` -> args."""
    m = re.search(r"([A-Za-z_][\w.]*?)\s*(?:\.(?:pop|get)\(\s*|\[\s*)['\"]%s['\"]" % re.escape(key), text) \
        or re.search(r"([A-Za-z_][\w.]*)\.%s\b" % re.escape(key), text)
    return m.group(1) if m else ""


def _task_starts(detail: dict) -> str:
    """` (each task starts a process: check_correctness calls multiprocessing.Process)` for a
    thread pool the flow found running processes, else nothing."""
    via = detail.get("pool_use_via")
    return f" (each task starts a process: {via})" if via and detail.get("pool_use") == "process-start" else ""


def _default_source(callers) -> dict | None:
    """The literal an omitting call's trace starts from: the parameter's default."""
    for c in callers:
        if c.detail.get("omitted"):
            flow = c.detail.get("flow") or []
            if flow and flow[0].get("kind") == "literal" and flow[0].get("file"):
                return flow[0]
    return None


def _never_passed(result) -> dict[tuple, list]:
    """(helper sink "file:line", parameter) -> its callers' sites, when every caller omits it
    (and the default reaches a backend this rule speaks of)."""
    calls: dict[tuple, list] = {}
    for s in result.sites:
        d = s.detail
        if s.role == "consume" and d.get("via") == "helper" and d.get("helper_site") and not d.get("project_backend"):
            calls.setdefault((d["helper_site"], d.get("helper_param")), []).append(s)
    # a caller passing a literal sets no user's value either (it is reported by itself)
    return {k: v for k, v in calls.items() if any(s.detail.get("omitted") for s in v)
            and all(s.detail.get("omitted") or s.detail.get("literal", not s.detail.get("expr")) is True
                    and _int(s.value) is not None for s in v)
            and not any(is_test_file(s.file) for s in v)}


def _section(key: str) -> str:
    """data.num_workers -> data; actor_rollout_ref.rollout.agent.num_workers -> agent."""
    parts = key.split(".")
    return parts[-2].lower() if len(parts) > 1 else ""


def _tail(callee) -> str:
    """LeRobotDataset.create: the last two names of a callee, what two files calling it share."""
    return ".".join(str(callee or "").split(".")[-2:])


def _routed_keywords(result) -> dict[tuple, list]:
    """(callee's last two names, keyword) -> [(file, line, text)] of calls passing it a value read
    from configuration (the flow layer's call edges), not a literal."""
    out: dict[tuple, list] = {}
    for rel, meta in result.meta.items():
        flow = meta.get("flow") if isinstance(meta, dict) else None
        for edge in (flow or {}).get("calls", ()):
            if not edge.get("callee"):
                continue
            tail = _tail(edge["callee"][0])
            for name, tree in edge.get("kwargs", {}).items():
                if tree.get("k") != "literal" and reads_configuration(tree):
                    out.setdefault((tail, name), []).append((rel, edge["line"], tree.get("text", "")))
    return out


def _helper_routes(result) -> tuple[dict, dict]:
    """The flow's helper consume sites: (file, line, parameter) of each call passing a literal ->
    the helper sinks it feeds; helper sink -> [(file, line, text)] of calls passing it a value
    read from configuration."""
    literal_at: dict[tuple, set] = {}
    routed: dict[tuple, list] = {}
    for s in result.sites:
        d = s.detail
        if s.role != "consume" or d.get("via") != "helper" or not d.get("helper_site") or d.get("omitted"):
            continue
        sink = (d["helper_site"], d.get("helper_param"))
        if d.get("literal"):
            literal_at.setdefault((s.file, s.line, d.get("helper_param")), set()).add(sink)
        elif any(step.get("kind") in ("config", "env") for step in (d.get("flow") or ())[:1]):
            routed.setdefault(sink, []).append((s.file, s.line, str(d.get("expr") or "")))
    return literal_at, routed


def _short(backend: str) -> str:
    parts = backend.split(".")
    return ".".join(parts[-2:]) if parts[-1] in ("init", "remote", "options", "make", "spawn") else parts[-1]


def _feeds_another_backend(fed_by: dict, read, backend: str) -> bool:
    """The cited read flows to backends, and BACKEND is none of them."""
    fed = fed_by.get((read.file, read.line))
    return bool(fed) and backend not in fed

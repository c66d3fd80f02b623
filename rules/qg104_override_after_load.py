"""QG104 override-after-load: the loaded value is replaced, forced or capped afterwards."""

import re

from auditor import vocab as vocab_mod
from auditor.keys import CONFIG_CLASS
from auditor.lint import idioms
from auditor.lint.base import (CONFIG_KINDS, Example, ImportNeighbours, Rule, as_number, environment_writes, in_examples,
                               imported_files, is_config_define, is_test_file, modules_to_files, show, where)

_AUGMENTED = re.compile(r"^\s*[\w.\[\]'\"]+\s*(\*\*|//|[-+*/%])=")
_CONVERSION = re.compile(r"^\s*(int|float|str|bool)\(\s*[\w.\[\]'\"]+\s*\)\s*$")


def _validator(test: str) -> dict:
    """A settings class whose validator sets data_parallel_size under TEST (examples)."""
    return {"inference.py": "from pydantic import BaseModel, Field, model_validator\n"
                            "class VLLMConfig(BaseModel):\n    data_parallel_size: int = Field(1, ge=1)\n"
                            "class InferenceConfig(BaseModel):\n    vllm: VLLMConfig = VLLMConfig()\n"
                            "    gpus_per_node: int = 8\n    @model_validator(mode='after')\n"
                            f"    def auto_setup(self):\n        if {test}:\n"
                            "            self.vllm.data_parallel_size = self.gpus_per_node\n        return self\n"}


def _fsdp_config(fsdp_field: str) -> dict:
    """A settings class whose post-init sets fsdp_size from num_gpu; FSDP_FIELD declares it (examples)."""
    return {"fsdp_config.py": "from dataclasses import dataclass, field\n"
                              "@dataclass\n"
                              "class FSDPConfig:\n"
                              "    num_gpu: int = 8\n"
                              f"    fsdp_size: int = {fsdp_field}\n"
                              "    def __post_init__(self):\n"
                              "        if isinstance(self, FSDPConfig):\n"
                              "            self.fsdp_size, self.seed = self.num_gpu, 1\n",
            "train.yaml": "policy:\n  fsdp_size: 4\n  num_gpu: 8\n"}


def _runtime_field(annotation: str) -> dict:
    """A PPO config whose world_size field has ANNOTATION; the trainer sets it from accelerate."""
    return {"ppo_config.py": "from dataclasses import dataclass\nimport tyro\n@dataclass\nclass PPOConfig:\n"
                             f"    batch_size: int = 8\n    world_size: {annotation} = None\n",
            "ppo_trainer.py": "from accelerate import Accelerator\nclass PPOTrainer:\n"
                              "    def __init__(self, config):\n"
                              "        self.accelerator = Accelerator()\n"
                              "        config.world_size = self.accelerator.num_processes\n"}


class OverrideAfterLoad(Rule):
    CODE = "QG104"
    NAME = "override-after-load"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{knob}{alias} is replaced after loading: {effect}{condition}{configured}"
    RATIONALE = """\
A value that code reassigns after loading the configuration - forced to a literal, forced
under a condition (`if dataset_type == 'iterable': num_workers = 0`), capped with `min(...)`
or `os.cpu_count()` - is not the value the configuration shows. Nothing tells the user, so
they tune a number that does not run.

Make the override visible (log it, or fail), or move the decision into the configuration.
It is a warning when the configured value that is lost is known (a config file, or a parser
default in the same file, that differs from the forced value), when the object was filled
from the caller's settings earlier in the function (`config.merge(kwargs)`,
`cfg.update(vars(args))`, `cfg.merge_from_list(opts)`: a parameter or a settings handle, not
a module's own preset) and a literal is then written over a field, or when the cap is the
machine's CPU count; otherwise a note (confidence medium). An override announced by a
warning in its own block is reported as a note. Not reported:
debug / sanity / play-only modes the user switches on, branches where no parallel backend exists
(`world_size = 1` without a distributed rank), a value initialised and then set, a value
saved and restored around one call, locals computed from runtime objects, sizes derived
from a device mesh, caps by the amount of work (`min(n, len(paths))`, `min(num_clients, max_workers)`
by a count named for the items served, GPUs per node capped by the product of the
parallel sizes, `min(args.gpus_per_node, dp * pp * tp)`), zero GPUs for a component the run leaves out or switches off (`if config.inference is None:
num_infer_gpus = 0`), an attribute a script adds to its own parser's namespace for a helper
(`args.model_parallel_size = 1` where the parser has no such flag), presets written in three or more
branches picked by a name (`if cfg_name == "33B": ...tensor_model_parallel_size = 8`), one
environment in an
evaluation or rendering function, and defaults filled in when nothing was configured (`if n
is None`, the last branch of a default chain), nor a running maximum over a loop (`tp_size =
max(tp_size, tp_rank + 1)`). A bound (`max(1, int(n))`) under a count configured as a word (`auto`) cites no
configured value: the word never reaches the bound, so it is a note. A count the program computes for the job (`num_gpus =
get_gpu_count(...)`) forced to a literal afterwards is a note, and so is a function's parameter
multiplied by another count inside it (`num_workers = num_workers * nproc_per_node` in a CPU
affinity helper): only the function's own copy changes; likewise a field multiplied by another
count (`args.world_size = ngpus_per_node * args.world_size`: the value set is kept, as a factor).
A value written before the user's settings are merged into the same object
(`cfg.DATALOADER.NUM_WORKERS = 0` then `cfg.merge_from_list(args.opts)`, detectron2's tools) is
a default they can still override: a note. A required argument that a
public function uses only when another argument is None (`def make(num_envs, cfg=None): if cfg is
None: ...num_envs...`) is a warning at the parameter: a caller passing both loses its count; with
a default, a note. A backend switch (vec_env_class) replaced under a condition by another
reference is a note. A field users set with a flag or dataclass field, recomputed afterwards
from other fields (`args.num_envs = args.local_num_envs * world_size`), is a warning, unless its
help says it is computed at run time. So is a field a settings class's own post-init replaces by
another field (`self.fsdp_size, self.num_replica = self.num_gpu, 1`: each name of a tuple
assignment gets its own value), unless it is declared `field(init=False)` (state the class
computes) or hidden from the command line (`tyro.conf.Suppress[int]`: trl's `PPOConfig.world_size`,
which the trainer fills from accelerate) or its help (also `metadata={"help": ...}`) says it is computed; an `isinstance(self,
...)` test that picks the subclass is no condition on the value. A value read from a variable a
launcher sets for the programs it starts (`args.world_size = int(os.environ["WORLD_SIZE"])`
under torch.distributed.launch) is the launcher's count and the right one, but the flag users
set (`--world_size`, 'number of distributed processes'), or with no flag the config files' key
(`run: {world_size: 1}`), then changes nothing: a note, unless the
write only fills a value left unset (`if args.world_size == -1:`). A setting used only as the fallback of an environment
variable (`os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(args.gpus))))`) is
replaced whenever a scheduler or launcher sets that variable: a note. A function given both the
parsed settings and a same-named parameter with a literal default that writes the parameter
over the field unconditionally (`def __init__(self, env, cfg, n_rollout_threads=1):
cfg.n_rollout_threads = n_rollout_threads`) replaces the user's value with the caller's, or
with the default when a caller leaves it out: a warning when the lost value is configured. A
literal held in a local first (`num_envs = 9; cfg.num_envs = num_envs`) counts as the literal.
Tests override configuration on purpose and are not reported, except a test folder's runner
script replacing a flag its own parser defines with a literal (`tests/trace_tests.py -mt 8`, then `if not
args.parallel: args.max_threads = 1`): that is its user's command line.

A validator of a settings class (`InferenceConfig`, a pydantic `model_validator` or a
`__post_init__`) that replaces a field whenever it equals its declared default (`if
self.vllm.data_parallel_size == 1: self.vllm.data_parallel_size = dp_per_node`, a default of 1
or more) is a warning: a user who sets that value on purpose cannot be told from one who set
nothing (`model_fields_set` tells them apart). One that replaces a field by a value derived
from other settings whenever the two disagree is a note.

A count of parallel units read from the settings and divided by another count (or a literal
above 1) with the remainder dropped, handed on as a count (`n_envs=int(cfg.algorithm.n_envs /
cfg.algorithm.n_processes)`, `envs_per_worker = cfg.num_envs // cfg.num_workers`; also as a
settings dict's value, as text for a launcher's command line, `str(num_processes //
num_machines)`, and through a local copy of the setting, `num_processes = args.num_processes`),
in a file that never tests a remainder of it (`assert n % k == 0`, `divmod`), runs `n % k` units fewer
than the user asked whenever n is no multiple (5 envs over 2 processes run 4): a warning when a
config file sets the count (the one nearest the script is cited), a note otherwise.

A sampler or shard call given the whole job's rank count and the rank within one node
(`DistributedSampler(ds, num_replicas=args.world_size, rank=args.local_rank)`) takes the shard of
its local rank: on more than one node the ranks of every node read the same shards and the
others are never read (a warning; a note in examples).

An environment variable that sizes parallelism written whole in code (`os.environ["XLA_FLAGS"]
= "--xla_gpu_graph_min_graph_size=1"` at import, `os.environ["NCCL_SOCKET_NTHREADS"] = "8"`,
`os.environ["CPU_NUM"] = "1"`) replaces what the user exported (`--xla_force_host_platform_
device_count=8`): a warning (a note under examples/). Not when guarded (`if "XLA_FLAGS" not in
os.environ`, `setdefault`) or built from the variable itself (`os.environ.get("XLA_FLAGS", "")
+ " --flag"`); thread counts (`OMP_NUM_THREADS`) are QG107's; the variables launchers set for
the programs they start (`WORLD_SIZE`), the GPU set (`CUDA_VISIBLE_DEVICES`) and
`TOKENIZERS_PARALLELISM` are the program's own choice, and so is a switch forced to its parallel
value or a narrowing inside a function that makes runs reproducible (`set_determinism`,
`set_batch_invariance`) or debugs them. One choice of the GPU set is not: a rank mapped onto a GPU
modulo a literal count (`os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() %
GPUS_PER_NODE}"` with `GPUS_PER_NODE = 8`) throws away the set the user or launcher exported and
assumes that many GPUs on every node: a warning (a note under examples/), unless the write first
tests whether the variable is set (one GPU pinned where the file's code spreads its work over
every GPU it sees is QG105's). Nor is a literal set written unconditionally at a module's top
level or under its `__main__` guard (`os.environ["CUDA_VISIBLE_DEVICES"] = "6"` in a model module
that search and scoring scripts import, `"0,1,2,3"` in a DeepSpeed trainer): the GPUs the user
or the launcher exported are dropped for every program that runs or imports it - a note, since a
script may mean its one GPU. A blank value (hiding the GPUs from a CPU program's workers), a
write inside a function (a worker taking its own device) and a demo under examples/ or docs/
are not reported."""
    VALID = [
        Example({"cpu_only.py": "import os\n"
                                "os.environ['CUDA_VISIBLE_DEVICES'] = ''\n"
                                "import torch.multiprocessing as mp\n",
                 "train.py": "import os\n"
                             "if 'CUDA_VISIBLE_DEVICES' not in os.environ:\n"
                             "    os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\n"
                             "def worker(rank):\n"
                             "    os.environ['CUDA_VISIBLE_DEVICES'] = str(rank)\n"},
                "GPUs hidden on purpose, a GPU set written only when unset, a worker's own device"),
        Example({"conf.yaml": "num_envs: 4096\n",
                 "motions.py": "import yaml\n"
                               "class MotionManager:\n"
                               "    def __init__(self, motion_lib):\n"
                               "        self.num_envs = yaml.safe_load(open('conf.yaml'))['num_envs']\n"
                               "        self.motion_lib = motion_lib\n"
                               "    def sample(self):\n"
                               "        total_motions = self.motion_lib.num_motions()\n"
                               "        n_motions = min(self.num_envs, total_motions)\n"
                               "        return self.motion_lib.sample(n_motions)\n"},
                "a bound on something else taken into a local that names no count (`n_motions = "
                "min(self.num_envs, total_motions)`): the env count itself is left as it is"),
        Example({"conf/eval.yaml": "eval:\n  num_procs: 20\n  n_eval: 20\n",
                 "metric.py": "from tianshou.env import SubprocVectorEnv\n"
                              "def evaluate(cfg, make):\n"
                              "    env_num = min(cfg.eval.num_procs, cfg.eval.n_eval)\n"
                              "    return SubprocVectorEnv([make for _ in range(env_num)])\n"},
                "envs capped by the episodes to run (`n_eval`): never more envs than episodes"),
        Example({"trainer.py": "from torch.utils.data import DataLoader, DistributedSampler\n"
                               "def loader(ds, args):\n"
                               "    sampler = DistributedSampler(ds, num_replicas=args.local_world_size,\n"
                               "                                 rank=args.local_rank)\n"
                               "    return DataLoader(ds, sampler=sampler, batch_size=8)\n"},
                "a sampler sharding one node's data among its local ranks"),
        Example({"conf.yaml": "max_workers: 10\n",
                 "agent.py": "from concurrent.futures import ThreadPoolExecutor\n"
                             "class Agent:\n"
                             "    def __init__(self, config, clients):\n"
                             "        num_clients = len(clients)\n"
                             "        actual_workers = min(num_clients, config.max_workers)\n"
                             "        self.executor = ThreadPoolExecutor(max_workers=actual_workers)\n"},
                "a pool capped at the number of clients it serves, by that count's name"),
        Example(_runtime_field("tyro.conf.Suppress[int]"),
                "a field tyro hides from the command line (`Suppress`): the program fills it, no user sets it"),
        Example({"learner.py": "import os\n"
                               "os.environ['XLA_FLAGS'] = os.environ.get('XLA_FLAGS', '') + ' --xla_gpu_graph_min_graph_size=1'\n"
                               "if 'NCCL_SOCKET_NTHREADS' not in os.environ:\n"
                               "    os.environ['NCCL_SOCKET_NTHREADS'] = '8'\n"
                               "os.environ['VLLM_ENABLE_V1_MULTIPROCESSING'] = '1'\n"
                               "def set_determinism(seed):\n"
                               "    os.environ['NCCL_SOCKET_NTHREADS'] = '1'\n"},
                "XLA_FLAGS extended, a socket thread count set only when unset, a switch forced to its "
                "parallel value, one socket thread asked for reproducible runs"),
        Example({"conf/config.yaml": "algorithm:\n  n_envs: 8\n  n_processes: 2\n",
                 "a2c.py": "from agents import GymAgent\n"
                           "def main(cfg):\n"
                           "    assert cfg.algorithm.n_envs % cfg.algorithm.n_processes == 0\n"
                           "    return GymAgent(n_envs=cfg.algorithm.n_envs // cfg.algorithm.n_processes)\n"},
                "a split whose remainder the file tests"),
        Example({"config/default.yaml": "num_processes: 8\nnum_machines: 2\n",
                 "launch.py": "def torchrun_args(args):\n"
                              "    num_processes = args.num_processes\n"
                              "    num_machines = args.num_machines\n"
                              "    if args.num_processes % num_machines:\n"
                              "        raise ValueError('num_processes must be a multiple of num_machines')\n"
                              "    args.nproc_per_node = str(num_processes // num_machines)\n"
                              "    return args\n"},
                "a local copy of a setting whose remainder the file tests"),
        Example({"conf/config.yaml": "data:\n  batch_size: 64\n  num_workers: 4\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "def main(cfg, ds, world_size):\n"
                             "    return DataLoader(ds, batch_size=cfg.data.batch_size // world_size,\n"
                             "                      num_workers=cfg.data.num_workers)\n"},
                "a batch split over ranks: a batch size is no count of workers"),
        Example({"stats.py": "import ray\n"
                             "def report(stats):\n    info = dict(stats)\n    info['num_cpus'] = 2\n    return info\n"},
                "a copy of what a function computed, not of the settings it was given"),
        Example({"ppo.py": "from dataclasses import dataclass\n"
                           "import tyro\n"
                           "@dataclass\n"
                           "class Args:\n"
                           "    world_size: int = 0\n",
                 "legacy.py": "import argparse\n"
                              "import jax\n"
                              "def parse_args():\n"
                              "    p = argparse.ArgumentParser()\n"
                              "    p.add_argument('--local-num-envs', type=int, default=8)\n"
                              "    return p.parse_args()\n"
                              "if __name__ == '__main__':\n"
                              "    args = parse_args()\n"
                              "    args.world_size = jax.process_count()\n"},
                "an attribute a script adds to its own parser's namespace (no such flag), though another "
                "script declares a field of that name"),
        Example(_validator("'data_parallel_size' not in self.vllm.model_fields_set"),
                "a validator filling a field only when the user left it unset"),
        Example({"launch.py": "import os\n"
                              "def world():\n"
                              "    return int(os.environ.get('WORLD_SIZE', 1))\n"},
                "an environment variable with a literal fallback: no setting is lost"),
        Example({"train.py": "import argparse\n"
                             "p = argparse.ArgumentParser()\n"
                             "p.add_argument('--num-envs', type=int, default=8)\n"
                             "p.add_argument('--num-minibatches', type=int, default=4)\n"
                             "p.add_argument('--num-workers', type=int, default=0, help='computed in runtime')\n"
                             "args = p.parse_args()\n"
                             "args.num_workers = args.num_envs // args.num_minibatches\n"},
                "a field its help says is computed at run time"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "num_workers = cfg['data']['num_workers']\n"
                             "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=num_workers)\n"},
                "the loaded value is used as is"),
        Example({"merger.py": "import os\n"
                              "def sizes(path):\n"
                              "    tp_size = 0\n"
                              "    for shard in os.listdir(path):\n"
                              "        tp_rank = int(shard.split('_')[1])\n"
                              "        tp_size = max(tp_size, tp_rank + 1)\n"
                              "    return tp_size\n"},
                "a running maximum over a loop finds a size; it caps nothing"),
        Example({"train.py": "def build(num_workers=None):\n"
                             "    if num_workers is None:\n"
                             "        num_workers = 4\n"
                             "    return num_workers\n"},
                "filling in a missing value is a default, not an override"),
        Example({"start.py": "import multiprocessing\n"
                             "def start(cpu_num=None):\n"
                             "    cpu_num = int(cpu_num) if cpu_num is not None else multiprocessing.cpu_count()\n"
                             "    return cpu_num\n"},
                "the machine's CPU count only when none was given: a default, not a cap"),
        Example({"gpus.py": "def count():\n"
                            "    num_gpus = 0\n"
                            "    try:\n"
                            "        num_gpus = probe().device_count\n"
                            "    except Exception:\n"
                            "        num_gpus = 0\n"
                            "    return num_gpus\n"},
                "a local computed afresh held no loaded value"),
        Example({"tests/test_train.py": "def test_small(cfg):\n"
                                        "    cfg.data.num_workers = cfg.data.num_workers\n"
                                        "    cfg.data.num_workers = 0\n"},
                "tests override configuration on purpose"),
        Example({"trainer.py": "def setup(self, args):\n"
                               "    self.world_size = 1\n"
                               "    if args.distributed:\n"
                               "        self.world_size = dist.get_world_size()\n"},
                "initialise, then set in the distributed branch"),
        Example({"metrics.py": "class Tracker:\n"
                               "    def __init__(self, accelerator=None):\n"
                               "        world_size = accelerator.num_processes if accelerator else 1\n"
                               "        self.samples = 8 * world_size\n",
                 "dist.py": "import torch.distributed as dist\n"
                            "def world(args):\n"
                            "    args.world_size = args.world_size\n"
                            "    if not dist.is_initialized():\n"
                            "        args.world_size = 1\n"
                            "    return args.world_size\n"},
                "no backend in that branch: one process"),
        Example({"default_config.py": "import torch\n"
                                      "def write_basic_config(config):\n"
                                      "    config['num_processes'] = config['num_processes']\n"
                                      "    if torch.cuda.is_available():\n"
                                      "        config['num_processes'] = torch.cuda.device_count()\n"
                                      "    else:\n"
                                      "        config['use_cpu'] = True\n"
                                      "        config['num_processes'] = 1\n"
                                      "    return config\n"},
                "a CPU-only default configuration runs one process"),
        Example({"threads.py": "import os\n"
                               "def threads(args):\n"
                               "    n = args.num_threads\n"
                               "    if 'OMP_NUM_THREADS' in os.environ:\n"
                               "        num_threads = int(os.environ['OMP_NUM_THREADS'])\n"
                               "    elif n is not None:\n"
                               "        num_threads = n\n"
                               "    else:\n"
                               "        num_threads = 1\n"
                               "    return num_threads\n"},
                "a default chain: 1 only when nothing was configured"),
        Example({"train.py": "def loaders(cfg):\n"
                             "    num_workers = cfg.data.num_workers\n"
                             "    if cfg.debug:\n"
                             "        num_workers = 0\n"
                             "    return num_workers\n"},
                "a debug mode the user chose forces one process"),
        Example({"train.py": "from absl import flags\n"
                             "_NUM_ENVS = flags.DEFINE_integer('num_envs', 4096, 'Number of parallel envs.')\n"
                             "_PLAY_ONLY = flags.DEFINE_boolean('play_only', False, 'Only watch a policy.')\n"
                             "def main(argv):\n"
                             "    num_envs = 1 if _PLAY_ONLY.value else _NUM_ENVS.value\n"
                             "    run(num_envs)\n"},
                "a play-only mode (watching a trained policy) runs one env"),
        Example({"eval.py": "def render_frame(env, done, max_rendered):\n"
                            "    n_render = min(max_rendered - done, env.num_envs)\n"
                            "    return [env.envs[i].render() for i in range(n_render)]\n"},
                "a computed local: the env's own count, capped"),
        Example({"trainer.py": "def eval_loader(self, ds):\n"
                               "    num_workers = self.args.dataloader_num_workers\n"
                               "    self.args.dataloader_num_workers = 0\n"
                               "    try:\n"
                               "        return self.make_loader(ds)\n"
                               "    finally:\n"
                               "        self.args.dataloader_num_workers = num_workers\n"},
                "a temporary override, saved and restored"),
        Example({"data_loader.py": "def shard(num_processes, state, mesh):\n"
                                   "    num_processes = num_processes\n"
                                   "    if mesh is not None:\n"
                                   "        tp = mesh['tp'].size()\n"
                                   "        num_processes = num_processes // tp\n"
                                   "    return num_processes\n"},
                "a data-parallel size derived from a device mesh"),
        Example({"agent.py": "def test(self, env):\n"
                             "    num_envs = env.num_envs if hasattr(env, 'num_envs') else 1\n"
                             "    return num_envs\n",
                 "sampler.py": "def clone(dataloader, params):\n"
                               "    if dataloader.persistent_workers:\n"
                               "        params['persistent_workers'] = True\n"
                               "    return params\n"},
                "a single env without a vector wrapper; a value copied under the test that it holds"),
        Example({"reader.py": "def read(paths, num_threads):\n"
                              "    num_threads = num_threads\n"
                              "    num_threads = min(num_threads, len(paths))\n"
                              "    return num_threads\n",
                 "eval.py": "def make_eval_env_kwargs(cfg):\n"
                            "    kwargs = dict(cfg.env)\n"
                            "    cfg.env.num_envs = 1\n"
                            "    return kwargs\n",
                 "utils.py": "def make_env(cfg, single_env=False):\n"
                             "    num_envs = cfg.env.num_envs if not single_env else 1\n"
                             "    return num_envs\n",
                 "ray_sync.py": "def setup(self, num_workers=None, remote=None):\n"
                                "    if num_workers is None:\n"
                                "        num_workers = len(remote) if remote else 0\n"
                                "    return num_workers\n"},
                "capped by the work to do; one env for evaluation; a single-env mode; a default filled in"),
        Example({"run_utils.py": "import psutil\n"
                                 "def call_experiment(thunk, num_cpu=1):\n"
                                 "    num_cpu = psutil.cpu_count(logical=False) if num_cpu == 'auto' else num_cpu\n"
                                 "    mpi_fork(num_cpu)\n"},
                "the machine's count where the user asked for it (`num_cpu='auto'`)"),
        Example({"zero_to_fp32.py": "def parse(state):\n"
                                    "    world_size = state['world_size']\n"
                                    "    if type(world_size) is list:\n"
                                    "        world_size = max(world_size)\n"
                                    "    return world_size\n"},
                "a size reduced from a list read back from a checkpoint"),
        Example({"conf.yaml": "trainer:\n  nnodes: 2\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"
                             "cfg['reward']['nnodes'] = cfg['trainer']['nnodes']\n"},
                "copying a knob into a key no configuration sets is plumbing"),
        Example({"conf.yaml": "args:\n  dataloader_num_workers: 4\n  dataloader_persistent_workers: true\n",
                 "args.py": "class Args:\n"
                            "    def __post_init__(self):\n"
                            "        self.dataloader_persistent_workers = self.dataloader_persistent_workers\n"
                            "        if self.dataloader_num_workers == 0 and self.dataloader_persistent_workers:\n"
                            "            self.dataloader_persistent_workers = False\n"},
                "a worker option turned off when there are no workers"),
        Example({"conf/rl.toml": "[deployment]\nnum_infer_gpus = 4\n",
                 "rl.py": "def plan(config):\n"
                          "    if config.inference is None:\n"
                          "        config.deployment.num_infer_gpus = 0\n"
                          "    return config\n"},
                "no GPUs for a component the run does not have"),
        Example({"conf/grpo.yaml": "env:\n  nemo_gym:\n    num_gpu_nodes: 2\n",
                 "setup.py": "def setup(master_config, env_configs):\n"
                             "    enable_nemo_gym = bool(env_configs) and master_config['env']['enabled']\n"
                             "    if enable_nemo_gym:\n"
                             "        nemo_gym_num_nodes = env_configs['nemo_gym']['num_gpu_nodes']\n"
                             "    else:\n"
                             "        nemo_gym_num_nodes = 0\n"
                             "    return nemo_gym_num_nodes\n"},
                "no nodes for a component the run switches off"),
        Example({"conf/sft.yaml": "expert_model_parallel_size: 4\n",
                 "model_config.py": "def mcore_config(args, num_moe_experts, kwargs):\n"
                                    "    kwargs['expert_model_parallel_size'] = args.expert_model_parallel_size\n"
                                    "    if num_moe_experts is None:\n"
                                    "        kwargs['expert_model_parallel_size'] = 1\n"
                                    "    return kwargs\n"},
                "no expert-parallel group for a model without experts"),
        Example({"configs/20B.yml": "model_parallel_size: 2\n",
                 "tools/preprocess.py": "import argparse\n"
                                        "def get_args():\n"
                                        "    parser = argparse.ArgumentParser()\n"
                                        "    parser.add_argument('--workers', type=int, default=1)\n"
                                        "    args = parser.parse_args()\n"
                                        "    args.model_parallel_size = 1\n"
                                        "    return args\n"},
                "a tool's own parser namespace given an attribute it has no flag for (a dummy for a helper)"),
        Example({"conf/base.yaml": "trainer:\n  num_nodes: 1\nmodel:\n  tensor_model_parallel_size: 1\n",
                 "chat.py": "def configure(cfg, cfg_name):\n"
                            "    if cfg_name == '13B':\n"
                            "        cfg.model.tensor_model_parallel_size = 2\n"
                            "    elif cfg_name == '20B':\n"
                            "        cfg.model.tensor_model_parallel_size = 4\n"
                            "    elif cfg_name == '66B':\n"
                            "        cfg.model.tensor_model_parallel_size = 8\n"
                            "    return cfg\n"},
                "a table of per-model presets the user picks by name"),
        Example({"launcher.py": "import argparse\n"
                                "p = argparse.ArgumentParser()\n"
                                "p.add_argument('--gpus_per_node', type=int, default=8)\n"
                                "args = p.parse_args()\n"
                                "def script(args, dp, pp, tp):\n"
                                "    gpus_per_node = min(args.gpus_per_node, dp * pp * tp)\n"
                                "    return gpus_per_node\n"},
                "GPUs per node capped by the GPUs the parallel layout needs"),
        Example({"net.py": "class Net:\n"
                           "    def __init__(self, env, cfg, n_rollout_threads=None):\n"
                           "        if n_rollout_threads is not None:\n"
                           "            cfg.n_rollout_threads = n_rollout_threads\n"},
                "a parameter that replaces the setting only when the caller passes one"),
        Example(_fsdp_config("field(default=1, init=False)"),
                "a field the class computes (init=False): no setting users pass"),
        Example(_fsdp_config("field(default=1, metadata={'help': 'computed from num_gpu'})"),
                "a field its help calls computed"),
        Example({"convert.py": "import argparse, os\n"
                               "p = argparse.ArgumentParser()\n"
                               "p.add_argument('--num_cpus', type=int, default=0)\n"
                               "args = p.parse_args()\n"
                               "num_cpus = args.num_cpus or os.cpu_count()\n"},
                "the machine's CPU count fills in a count left unset (0): no cap"),
        Example({"args.py": "import argparse\n"
                            "p = argparse.ArgumentParser()\n"
                            "p.add_argument('--tp-size', type=int, default=-1)\n"
                            "args = p.parse_args()\n"
                            "if args.tp_size == -1:\n"
                            "    args.tp_size = 1\n"},
                "-1, the flag's not-set marker, resolved to a value"),
        Example({"dist_util.py": "import os\nimport torch\nGPUS_PER_NODE = 8\n"
                                 "def setup(rank):\n"
                                 "    if 'CUDA_VISIBLE_DEVICES' not in os.environ:\n"
                                 "        os.environ['CUDA_VISIBLE_DEVICES'] = str(rank % GPUS_PER_NODE)\n"
                                 "def pick(local_rank):\n"
                                 "    os.environ['CUDA_VISIBLE_DEVICES'] = str(local_rank % torch.cuda.device_count())\n"},
                "a rank's GPU picked only when none was exported, or modulo the GPUs the node has"),
    ]
    INVALID = [
        Example({"models/__init__.py": "",
                 "models/value_model.py": "import os\n"
                                          "os.environ['CUDA_VISIBLE_DEVICES'] = '6'\n"
                                          "import torch\n"
                                          "def load(path):\n"
                                          "    return torch.load(path)\n",
                 "search.py": "from models.value_model import load\n"
                              "model = load('value.pt')\n"},
                "a GPU set pinned to a literal at a module's import: a note", expect=[("models/value_model.py", 2)]),
        Example({"ape/__init__.py": "",
                 "ape/arguments.py": "import argparse\n"
                                     "def get_args():\n"
                                     "    p = argparse.ArgumentParser()\n"
                                     "    p.add_argument('--n-explorer', type=int, default=4)\n"
                                     "    p.add_argument('--n-env', type=int, default=1)\n"
                                     "    return p.parse_args()\n",
                 "ape/apex.py": "import multiprocessing\n"
                                "from ape.arguments import get_args\n"
                                "def run(args):\n"
                                "    if args.n_env > 1:\n"
                                "        args.n_explorer = 1\n"
                                "    for i in range(args.n_explorer):\n"
                                "        multiprocessing.Process(target=print, args=(i,)).start()\n"
                                "run(get_args())\n"},
                "a flag no vocabulary word names, defined by another file's parser, that sizes a Process "
                "loop here and is forced to 1 under another setting: a note", expect=[("ape/apex.py", 5)]),
        Example({"dist.py": "import argparse, os\n"
                            "p = argparse.ArgumentParser()\n"
                            "p.add_argument('--world_size', type=int, default=1, help='number of distributed processes')\n"
                            "args = p.parse_args()\n"
                            "def init_distributed_mode(args):\n"
                            "    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:\n"
                            "        args.world_size = int(os.environ['WORLD_SIZE'])\n"},
                "a flag users set replaced by the count the launcher sets: the launcher's count is right, "
                "the flag changes nothing (a note)", expect=[("dist.py", 7)], severity="note"),
        Example({"configs/run.yaml": "run:\n  world_size: 1\n  distributed: true\n",
                 "train.py": "import os\nfrom omegaconf import OmegaConf\n"
                             "cfg = OmegaConf.load('configs/run.yaml')\n"
                             "def init_distributed_mode(args):\n"
                             "    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:\n"
                             "        args.world_size = int(os.environ['WORLD_SIZE'])\n"
                             "init_distributed_mode(cfg.run)\n"},
                "a config file's count replaced by the launcher's: the file's value changes nothing under "
                "a launcher (a note)", expect=[("train.py", 6)], severity="note"),
        Example({"tests/trace_tests.py": "import argparse\nimport subprocess\n"
                                         "def main(args):\n"
                                         "    procs = [subprocess.Popen(['run']) for _ in range(args.max_threads)]\n"
                                         "    return procs\n"
                                         "if __name__ == '__main__':\n"
                                         "    p = argparse.ArgumentParser()\n"
                                         "    p.add_argument('-prl', '--parallel', action='store_true')\n"
                                         "    p.add_argument('-mt', '--max_threads', type=int, default=8)\n"
                                         "    args = p.parse_args()\n"
                                         "    if not args.parallel:\n"
                                         "        args.max_threads = 1\n"
                                         "    main(args)\n"},
                "a test folder's runner script replaces the count its own command line takes",
                expect=[("tests/trace_tests.py", 12)], severity="note"),
        Example({"trainer.py": "from torch.utils.data import DataLoader, DistributedSampler\n"
                               "def loader(ds, training_args):\n"
                               "    sampler = DistributedSampler(ds, num_replicas=training_args.world_size,\n"
                               "                                 rank=training_args.local_rank)\n"
                               "    return DataLoader(ds, sampler=sampler, batch_size=8)\n"},
                "a sampler given the whole job's rank count and the rank within one node",
                expect=[("trainer.py", 4)], severity="warning"),
        Example({"data.py": "import os\n"
                            "from torch.utils.data import DistributedSampler\n"
                            "def sampler(ds):\n"
                            "    return DistributedSampler(ds, num_replicas=int(os.environ['WORLD_SIZE']),\n"
                            "                              rank=int(os.environ['LOCAL_RANK']))\n"},
                "the node-local rank read from the launcher's LOCAL_RANK beside the whole job's WORLD_SIZE",
                expect=[("data.py", 5)], severity="warning"),
        Example({"tools/analyze.py": "from detectron2.config import get_cfg\n"
                                     "def setup(args):\n"
                                     "    cfg = get_cfg()\n"
                                     "    cfg.merge_from_file(args.config_file)\n"
                                     "    cfg.DATALOADER.NUM_WORKERS = 0\n"
                                     "    cfg.merge_from_list(args.opts)\n"
                                     "    return cfg\n",
                 "configs/base.yaml": "DATALOADER:\n  NUM_WORKERS: 4\n"},
                "a value written before the command line's settings are merged in: a default, a note",
                expect=[("tools/analyze.py", 5)], severity="note"),
        Example({"main.py": "import argparse\n"
                            "p = argparse.ArgumentParser()\n"
                            "p.add_argument('--world-size', type=int, default=1)\n"
                            "args = p.parse_args()\n"
                            "def main(ngpus_per_node):\n"
                            "    if args.multiprocessing_distributed:\n"
                            "        args.world_size = ngpus_per_node * args.world_size\n"},
                "nodes re-expressed as processes: the value set is kept as a factor, a note",
                expect=[("main.py", 7)], severity="note"),
        Example({"prepare.py": "import argparse\n"
                               "def main(splits, nshards_list, num_workers):\n"
                               "    if len(nshards_list) == 1:\n"
                               "        nshards_list = nshards_list * len(splits)\n"
                               "    for split, nshards in zip(splits, nshards_list):\n"
                               "        print(split, nshards)\n"
                               "if __name__ == '__main__':\n"
                               "    p = argparse.ArgumentParser()\n"
                               "    p.add_argument('--splits', nargs='+', default=['train', 'valid'])\n"
                               "    p.add_argument('--nshards_list', type=int, nargs='+', default=[20], "
                               "help='number of f0 shards')\n"
                               "    p.add_argument('--num_workers', type=int, default=4)\n"
                               "    main(**vars(p.parse_args()))\n"},
                "one count repeated for each split (fairseq's pgslm): the value set is kept, a note",
                expect=[("prepare.py", 4)], severity="note"),
        Example({"configs/default.yaml": "actor:\n  num_workers: 30\n",
                 "utils.py": "def set_affinity(worker_idx, num_workers, nproc_per_node=0):\n"
                             "    if nproc_per_node > 1:\n"
                             "        num_workers = num_workers * nproc_per_node\n"
                             "    return worker_idx % num_workers\n",
                 "main.py": "from multiprocessing import Process\nfrom omegaconf import OmegaConf\n"
                            "from utils import set_affinity\n"
                            "cfg = OmegaConf.load('configs/default.yaml')\n"
                            "def run(i):\n    set_affinity(i, cfg.actor.num_workers)\n"
                            "procs = [Process(target=run, args=(i,)) for i in range(cfg.actor.num_workers)]\n"},
                "a helper scales the count its caller passes (per node to the whole job): its own copy, a note",
                expect=[("utils.py", 3)], severity="note"),
        Example({"dist_util.py": "import os\nfrom mpi4py import MPI\nGPUS_PER_NODE = 8\n"
                                 "def setup_dist():\n"
                                 "    os.environ['CUDA_VISIBLE_DEVICES'] = f'{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}'\n"},
                "the GPU set replaced by the rank modulo a literal GPUs-per-node count",
                expect=[("dist_util.py", 5)], severity="warning"),
        Example(_runtime_field("int"), "a config field users set, replaced by the process count",
                expect=[("ppo_trainer.py", 5)], severity="warning"),
        Example({"learner.py": "import os\nos.environ['XLA_FLAGS'] = '--xla_gpu_graph_min_graph_size=1'\n"
                               "import jax\n"},
                "XLA_FLAGS written whole at import", expect=[("learner.py", 2)], severity="warning"),
        Example({"conf/config.yaml": "algorithm:\n  n_envs: 8\n  n_processes: 2\n",
                 "td3.py": "from agents import GymAgent, RemoteAgent\n"
                           "def main(cfg):\n"
                           "    env = GymAgent(n_envs=int(cfg.algorithm.n_envs / cfg.algorithm.n_processes))\n"
                           "    return RemoteAgent(env, num_processes=cfg.algorithm.n_processes)\n"},
                "a count split over processes with the remainder dropped, nothing testing it",
                expect=[("td3.py", 3)], severity="warning"),
        Example({"conf/config.yaml": "num_actors: 256\nnum_cpus: 8\n",
                 "train.py": "from ray import tune\n"
                             "def main(cfg):\n"
                             "    config = {'num_workers': cfg.num_cpus,\n"
                             "              'num_envs_per_worker': int(cfg.num_actors / cfg.num_cpus)}\n"
                             "    return tune.run('IMPALA', config=config)\n"},
                "the split count is a settings dict's value (RLlib's num_envs_per_worker)",
                expect=[("train.py", 4)], severity="warning"),
        Example({"config/default.yaml": "num_processes: 8\nnum_machines: 2\n",
                 "launch.py": "def torchrun_args(args):\n"
                              "    num_processes = args.num_processes\n"
                              "    num_machines = args.num_machines\n"
                              "    if num_machines > 1:\n"
                              "        args.nproc_per_node = str(num_processes // num_machines)\n"
                              "    return args\n"},
                "a local copy of the setting split, handed to the launcher's command line as text",
                expect=[("launch.py", 5)], severity="warning"),
        Example({"utils/config.py": "class Config:\n    def __init__(self):\n        self.num_workers = 1\n"
                                    "    def merge(self, d):\n        self.__dict__.update(d)\n",
                 "examples.py": "from utils.config import Config\n"
                                "def a2c(**kwargs):\n    config = Config()\n    config.merge(kwargs)\n"
                                "    config.num_workers = 5\n    return config\n"},
                "a literal written over what `config.merge(kwargs)` filled in from the caller",
                expect=[("examples.py", 5)], severity="warning"),
        Example({"utils/config.py": "class Config:\n    def __init__(self):\n        self.num_workers = 1\n"
                                    "    def merge(self, d):\n        self.__dict__.update(d)\n",
                 "examples.py": "from utils.config import Config\nPRESET = {'lr': 0.1}\n"
                                "def a2c():\n    config = Config()\n    config.merge(PRESET)\n"
                                "    config.num_workers = 5\n    return config\n"},
                "merged from a module's own preset, not the caller's settings: a note",
                expect=[("examples.py", 6)], severity="note"),
        Example({"grpo.py": "import ray\n"
                            "def main(cfg):\n    collector_config = dict(cfg.ray.collector_config)\n"
                            "    collector_config['num_cpus'] = 2\n    return ray.remote(**collector_config)\n"},
                "a literal written into a copy of the section the user configures",
                expect=[("grpo.py", 4)], severity="warning"),
        Example({"config.yaml": "partition:\n  max_concurrent_gpu_probes: auto\n",
                 "exec.py": "class Executor:\n    def __init__(self, cfg):\n"
                            "        max_concurrent_gpu_probes = cfg.partition.max_concurrent_gpu_probes\n"
                            "        if isinstance(max_concurrent_gpu_probes, str) and "
                            "max_concurrent_gpu_probes.strip().lower() == 'auto':\n"
                            "            self.max_concurrent_gpu_probes = None\n"
                            "        else:\n"
                            "            self.max_concurrent_gpu_probes = max(1, int(max_concurrent_gpu_probes))\n"},
                "a floor under a count configured as a word ('auto'), which another branch handles: a note, no "
                "configured value cited", expect=[("exec.py", 7)], severity="note"),
        Example({"ppo.py": "from dataclasses import dataclass\n"
                           "import jax\n"
                           "import tyro\n"
                           "@dataclass\n"
                           "class Args:\n"
                           "    local_num_envs: int = 64\n"
                           "    num_envs: int = 0\n"
                           "if __name__ == '__main__':\n"
                           "    args = tyro.cli(Args)\n"
                           "    args.num_envs = args.local_num_envs * jax.process_count()\n"},
                "a field users can pass, recomputed in the script's `__main__` block (no condition on the value)",
                expect=[("ppo.py", 10)], severity="warning"),
        Example({"config.py": "import argparse\n"
                              "def parser():\n"
                              "    p = argparse.ArgumentParser()\n"
                              "    p.add_argument('--n_rollout_threads', type=int, default=32)\n"
                              "    return p\n",
                 "net.py": "class PPONet:\n"
                           "    def __init__(self, env, cfg, n_rollout_threads=1):\n"
                           "        cfg.n_rollout_threads = n_rollout_threads\n"
                           "        self.cfg = cfg\n"},
                "the parsed setting replaced by a same-named parameter that defaults to 1",
                expect=[("net.py", 3)], severity="warning"),
        Example({"conf/config.yaml": "num_envs: 512\n",
                 "train.py": "import hydra\n"
                             "@hydra.main(config_name='config', config_path='conf')\n"
                             "def main(cfg):\n"
                             "    num_envs = 9\n"
                             "    cfg.num_envs = num_envs\n"
                             "    run(cfg)\n"},
                "a loaded setting forced to a literal held in a local", expect=[("train.py", 5)], severity="warning"),
        Example(_validator("self.vllm.data_parallel_size == 1"),
                "a validator replacing a field whenever it equals its default: an explicit 1 is lost",
                expect=[("inference.py", 10)]),
        Example({"interface.py": "import os\n"
                                 "def program(args):\n"
                                 "    gpus = os.environ.get('CUDA_VISIBLE_DEVICES', ','.join(map(str, range(args.gpus))))\n"
                                 "    return gpus.split(',')\n"},
                "a setting used only as the fallback of a variable schedulers set (a note)",
                expect=[("interface.py", 3)], severity="note"),
        Example({"train.py": "import argparse\n"
                             "p = argparse.ArgumentParser()\n"
                             "p.add_argument('--num-envs', type=int, default=8, help='total number of envs')\n"
                             "p.add_argument('--local-num-envs', type=int, default=2)\n"
                             "args = p.parse_args()\n"
                             "args.num_envs = args.local_num_envs * world_size\n"},
                "a field users set, recomputed from other fields", expect=[("train.py", 6)], severity="warning"),
        Example({"exp_manager.py": "from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv\n"
                                   "class ExperimentManager:\n"
                                   "    default_vec_env_cls = None\n"
                                   "    def __init__(self, vec_env_type='dummy'):\n"
                                   "        self.vec_env_class = {'dummy': DummyVecEnv, 'subproc': SubprocVecEnv}[vec_env_type]\n"
                                   "        if self.default_vec_env_cls is not None:\n"
                                   "            self.vec_env_class = self.default_vec_env_cls\n"},
                "a backend switch the user chose, replaced by a class attribute (a note)",
                expect=[("exp_manager.py", 7)], severity="note"),
        Example({"envs/__init__.py": "def make(seed, task, num_envs, cfg=None):\n"
                                     "    if cfg is None:\n"
                                     "        cfg = compose(task)\n"
                                     "        cfg['env']['numEnvs'] = num_envs\n"
                                     "    return create_env(cfg, seed)\n"},
                "a required count used only when another argument is None", expect=[("envs/__init__.py", 1)],
                severity="warning"),
        Example({"evaluate.py": "def run(model):\n"
                                "    num_gpus = get_gpu_count_for_vllm(model)\n"
                                "    if param_count(model) < 30_000_000_000:\n"
                                "        num_gpus = 2  # hack while the cluster is full\n"
                                "    return launch(gres=f'gpu:{num_gpus}')\n"},
                "a count the program computes, forced to a literal (a note)", expect=[("evaluate.py", 4)],
                severity="note"),
        Example({"args.py": "from dataclasses import dataclass\n"
                            "@dataclass\n"
                            "class Args:\n"
                            "    dataset_num_proc: int = 8\n",
                 "prep.py": "from datasets import Dataset\n"
                            "def prepare(dataset, args):\n"
                            "    map_kwargs = {}\n"
                            "    if isinstance(dataset, Dataset):\n"
                            "        map_kwargs['num_proc'] = args.dataset_num_proc\n"
                            "    return dataset.map(tokenize, batched=True, **map_kwargs)\n"},
                "a count handed on in a kwargs mapping only under a condition", expect=[("prep.py", 5)],
                severity="warning"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "num_workers = cfg['data']['num_workers']\n"
                             "if dataset_type == 'iterable':\n"
                             "    num_workers = 0\n"
                             "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=num_workers)\n"},
                "forced to 0 under a condition", expect=[("train.py", 3)]),
        Example({"train.py": "import os\n"
                             "def build(args):\n"
                             "    num_workers = args.num_workers\n"
                             "    num_workers = min(num_workers, os.cpu_count())\n"
                             "    return num_workers\n"},
                "capped by os.cpu_count()", expect=[("train.py", 4)]),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "import logging\nlogger = logging.getLogger(__name__)\n"
                             "def build(cfg, ds):\n"
                             "    num_workers = cfg['data']['num_workers']\n"
                             "    if ds.iterable and num_workers != 0:\n"
                             "        logger.warning(f'iterable dataset: overriding num_workers={num_workers} with 0')\n"
                             "        num_workers = 0\n"
                             "    return num_workers\n"},
                "an override announced in its block is a note", expect=[("train.py", 7)], severity="note"),
        Example({"defaults.yaml": "dataloader_num_workers: 4\n",
                 "plugin.py": "import logging\nLOG = logging.getLogger(__name__)\n"
                              "def setup(cfg):\n"
                              "    if getattr(cfg, 'dataloader_num_workers', None) not in (None, 0):\n"
                              "        LOG.warning(f'overriding dataloader_num_workers={cfg.dataloader_num_workers} -> 0')\n"
                              "    cfg.dataloader_num_workers = 0\n"},
                "an override announced just before, in the guarding if, is a note", expect=[("plugin.py", 6)],
                severity="note"),
        Example({"defaults.yaml": "dataloader_num_workers: 4\n",
                 "args.py": "import logging\nlogger = logging.getLogger(__name__)\n"
                            "def post_init(self):\n"
                            "    self.dataloader_num_workers = self.dataloader_num_workers\n"
                            "    if self.streaming:\n"
                            "        self.dataloader_num_workers = 1\n"
                            "        logger.info('streaming: setting dataloader_num_workers to 1')\n"},
                "an info-level log naming the override announces it too (a note)", expect=[("args.py", 6)],
                severity="note"),
        Example({"setup.py": "def setup(args):\n"
                             "    args.world_size = args.world_size\n"
                             "    if args.world_size > 8:\n"
                             "        args.world_size = 1\n"
                             "    args.world_size = args.world_size\n"},
                "a forced value under a condition, even if touched again later (no configured value "
                "known: a note)", expect=[("setup.py", 4)], severity="note"),
        Example({"conf.yaml": "data:\n  num_workers: 8\nlegacy:\n  num_workers: 2\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"
                             "cfg['data']['num_workers'] = cfg['legacy']['num_workers']\n"},
                "a legacy key copied over the configured one", expect=[("train.py", 3)]),
        Example({"conf.yaml": "data:\n  num_workers: 8\nlegacy:\n  num_workers: null\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"
                             "if cfg['legacy']['num_workers'] is not None:\n"
                             "    cfg['data']['num_workers'] = cfg['legacy']['num_workers']\n"},
                "a legacy key migrated only when it is set: a note", expect=[("train.py", 4)], severity="note"),
        Example({"conf/env/default.yaml": "num_envs: 4\n",
                 "utils.py": "def test(player, cfg, env):\n"
                             "    player.num_envs = player.num_envs\n"
                             "    player.num_envs = 1\n"
                             "    return player\n"},
                "another object's attribute of the same name: the configuration is not cited (a note)",
                expect=[("utils.py", 3)], severity="note"),
        Example({"templates/bc.json": '{"train": {"num_data_workers": 0, "batch_size": 100}}\n',
                 "exp.py": "def make_config(config):\n"
                           "    config.train.num_data_workers = config.train.num_data_workers\n"
                           "    config.train.num_data_workers = 2\n"
                           "    config.train.batch_size = 16\n"
                           "    config.train.num_epochs = 600\n"
                           "    config.train.seq_length = 10\n"
                           "    config.experiment.rollout.n = 50\n"
                           "    config.experiment.rollout.horizon = 400\n"
                           "    return config\n"},
                "one setting of a configuration written in code (a note)", expect=[("exp.py", 3)], severity="note"),
        Example({"conf.yaml": "train:\n  num_data_workers: 4\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "def train(config, ds, vs):\n"
                             "    loader = DataLoader(ds, num_workers=config.train.num_data_workers)\n"
                             "    if config.experiment.validate:\n"
                             "        num_workers = min(config.train.num_data_workers, 1)\n"
                             "        valid = DataLoader(vs, num_workers=num_workers)\n"
                             "    return loader\n"},
                "a capped copy for a second loader while the first gets the knob (a note)",
                expect=[("train.py", 5)], severity="note"),
        Example(_fsdp_config("field(default=1, metadata={'help': 'FSDP parallel size'})"),
                "a settings class's post-init replaces a field users set by another field",
                expect=[("fsdp_config.py", 8)]),
    ]

    def check(self, result):
        yield from self._uneven_splits(result)
        yield from self._local_rank_shards(result)
        yield from self._dropped(result)
        yield from self._ignored_unless(result)
        yield from self._environment_fallback(result)
        yield from self._environment_overwritten(result)
        yield from self._gpu_set_by_rank(result)
        yield from self._gpu_set_pinned(result)
        reads = {}  # (file, function, leaf) -> first line code reads it there
        for s in result.sites:
            if s.role == "read" and s.kind == "python":
                k = (s.file, s.detail.get("function"), s.leaf.lower())
                reads[k] = min(reads.get(k, s.line), s.line)
        consumed = {}  # (file, function) -> [consume sites], for copies that leave the knob as it is
        # (file, function) -> what its consumers and writes take: a capped local that reaches one counts
        taken: dict[tuple, list[str]] = {}
        for s in result.sites:
            if s.role in ("consume", "override") and s.kind == "python":
                at = (s.file, s.detail.get("function"))
                taken.setdefault(at, []).append(str(s.detail.get("expr") or ""))
                if s.role == "consume":
                    consumed.setdefault(at, []).append(s)
        counts = vocab_mod.load(result.settings or None)
        fields_by_leaf: dict[str, list] = {}  # leaf -> fields and flags declaring it, for defaults
        for s in result.sites:
            if s.role == "define" and s.kind == "python" and s.detail.get("via") in FIELD_VIAS:
                fields_by_leaf.setdefault(s.leaf.lower(), []).append(s)
        presets = _preset_tables(result.sites)
        # (file, function) -> the flags a parser built there defines (dests, knobs or not)
        parser_flags = {(rel, fn): {str(d).lower() for d in dests}
                        for rel, m in result.meta.items() if isinstance(m, dict)
                        for fn, dests in (m.get("parser_flags") or {}).items()}
        parsing = {rel for rel, _fn in parser_flags}  # files that build a parser of their own
        neighbours = ImportNeighbours(result.meta)  # (a flag of a script that does not import the file is another's)
        for knob in result.knobs:
            configured = [s for s in knob.sites if is_config_define(s) and s.value is not None]
            for site in knob.sites:
                if site.role != "override" or site.kind != "python" or is_test_file(site.file) \
                        and not _own_flag(site, knob):
                    continue  # tests overriding configuration on purpose are not fallbacks
                if (site.file, site.detail.get("function"), site.leaf.lower()) in presets:
                    continue  # `if cfg_name == "13B": tp = 2 elif cfg_name == "20B": tp = 4 ...`: a table of presets
                if _adds_to_own_namespace(site, parser_flags):
                    continue  # `args = parser.parse_args(); args.model_parallel_size = 1`: no flag of it to replace
                if _knob_copy(site):
                    yield from self._copy(site, knob, configured)
                    continue
                if site.detail.get("how") == "param":
                    yield self._parameter_over_setting(site, knob, configured)
                    continue
                default_field = _replaced_when_default(site, fields_by_leaf)
                if default_field is not None:
                    yield self._replaced_when_default(site, knob, default_field)
                    continue
                if _reconciled(site, fields_by_leaf):
                    cond = idioms.short_condition(site.detail.get("condition"))
                    yield self.finding(site, knob=knob.name, related=[site], alias="",
                                       effect=f"a settings validator replaces `{site.detail.get('target')}` by "
                                              f"`{site.detail.get('expr')}`",
                                       condition=f" when `{cond}`",
                                       configured=": a value the user set that disagrees is dropped without a word",
                                       severity="note", confidence="medium")
                    continue
                recomputed = _recomputed_field(site, knob)
                if recomputed is not None and recomputed.file != site.file and site.file in parsing:
                    recomputed = None  # `args.world_size = ...` on its own parser's namespace, which has no such flag
                if recomputed is not None:
                    yield recomputed_finding(self, site, knob, recomputed)
                    continue
                flag = _replaced_by_launcher(site, knob, lambda flag: _flag_of_this_program(flag, site, parsing,
                                                                                             neighbours))
                if flag is not None:
                    cond = site.detail.get("condition")
                    var = _ENV_READ.search(str(site.detail.get("expr") or "")).group(1)
                    yield self.finding(site, knob=knob.name, related=[flag, site], alias="",
                                       effect=f"taken from the launcher's {var}",
                                       condition=f" when `{idioms.short_condition(cond)}`" if cond else "",
                                       configured=f": the value users pass for it ({where(flag)}) changes nothing "
                                                  f"under a launcher, which sets the count itself",
                                       severity="note", confidence="medium")
                    continue
                if _replaces_argument(site):
                    yield self._argument_replaced(site, knob)
                    continue
                if site.detail.get("switch") and not idioms.is_debug_condition(site.detail.get("condition")):
                    cond = site.detail.get("condition")
                    yield self.finding(site, knob=knob.name, related=[site], alias="",
                                       effect=f"the backend choice is replaced by `{site.detail.get('expr')}`",
                                       condition=f" when `{idioms.short_condition(cond)}`", configured="",
                                       severity="note", confidence="medium")
                    continue
                if site.detail.get("computed_by") and _changes_the_value(site, knob.leaf) \
                        and not _was_loaded(site, reads) and not idioms.is_debug_condition(site.detail.get("condition")):
                    yield self._forced_over_computed(site, knob)
                    continue
                if not _changes_the_value(site, knob.leaf) or not _was_loaded(site, reads) or _intended(site):
                    continue
                if _another_quantity(site, taken, counts):
                    continue  # `n_motions = min(self.num_envs, total_motions)`: a bound on something else
                if _scales_own_argument(site):
                    yield self._argument_scaled(site, knob)
                    continue
                if site.detail.get("merged_after"):
                    yield self.finding(site, knob=knob.name, related=[site], effect=_effect(site), alias=_alias(site),
                                       condition="", configured=f"; the user's settings merged after it "
                                                                f"({site.detail['merged_after']}) can still set it",
                                       severity="note", confidence="low")
                    continue
                # cite a config file, or a parser in this file: a parser default in another
                # script is often another program's setting of the same name
                # (a word such as 'auto' is no number a min()/max() bound replaces: the code
                # handles it in another branch)
                bounded = site.detail.get("how") in ("min", "max")
                first = next((s for s in configured if (s.kind in CONFIG_KINDS or s.file == site.file)
                              and not _same_value(s, site) and idioms.may_hold(site, s)
                              and not (bounded and isinstance(as_number(s.value), str))), None)
                cited = [first] if first is not None else []
                cond = site.detail.get("condition")
                forced = site.detail.get("how") == "literal"
                logged = idioms.is_logged(site)
                lost = (f"; the value configured at {where(cited[0])} "
                        f"({show(cited[0].value)}) {'is ignored then' if cond else 'never takes effect'}"
                        ) if cited else ""
                merged = site.detail.get("merged") if not cited else None
                if merged:  # `config.merge(kwargs)` then `config.num_workers = 5`: the caller's value is lost
                    lost = f"; the value filled in by {merged} from the caller's settings never takes effect"
                elif not cited and any(not idioms.may_hold(site, s) for s in configured):
                    lost = f" (on `{site.detail.get('target')}`: another object's field, not the configured key)"
                if logged:  # announced in the same block: loud, so a note
                    lost += f" (announced by `{_short_call(logged)}`)"
                settings = idioms.is_config_in_code(site)
                if settings:
                    lost += f" (one of {settings} settings this function writes: a configuration in code)"
                untouched = _still_consumed(site, consumed)
                if untouched:
                    lost = (f"; {knob.name} itself still reaches {untouched.detail.get('backend') or 'its consumer'}"
                            f" at line {untouched.line} unchanged: only this copy differs")
                yield self.finding(
                    site, knob=knob.name, related=[*cited, site],
                    effect=_effect(site), alias=_alias(site),
                    condition=f" when `{idioms.short_condition(cond)}`" if cond else (
                        " unconditionally" if forced else ""),
                    configured=lost,
                    **_severity(site, cited or bool(merged), logged or settings or untouched),
                )

    def _local_rank_shards(self, result):
        """`DistributedSampler(ds, num_replicas=args.world_size, rank=args.local_rank)`: the data
        is cut into one shard per rank of the whole job, and each process takes the shard of its
        rank within its node. On one node the two agree; on N nodes the ranks of every node read
        the same shards and the other shards are never read (LOMO's trainer, Open-Assistant's
        sampler)."""
        for rel, meta in sorted(result.meta.items()):
            facts = meta.get("local_rank_shards") if isinstance(meta, dict) else None
            if not facts or is_test_file(rel):
                continue
            for fact in facts:
                yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob="rank", alias="",
                                   effect=f"`{fact['rank']}`, the rank within one node, goes where "
                                          f"{fact['callee']}() wants the rank in the whole job: it cuts the data "
                                          f"into `{fact['count']}` shards, so on more than one node the ranks of "
                                          f"every node read the same shards and the others are never read",
                                   condition="", configured="", related=[],
                                   flow=[{"file": rel, "line": fact["line"], "column": fact["col"], "kind": "split",
                                          "role": "sink", "key": "rank", "text": fact["rank"]}],
                                   **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))

    def _uneven_splits(self, result):
        """`n_envs=int(cfg.algorithm.n_envs / cfg.algorithm.n_processes)`, nothing in the file
        testing the remainder: when the user's count is no multiple of the other, the remainder
        never runs (5 envs over 2 processes run 4). A warning when a config file sets the count
        (it is the user's), a note otherwise."""
        configured: dict[str, list] = {}
        for knob in result.knobs:
            for s in knob.sites:
                if is_config_define(s) and s.kind in CONFIG_KINDS and s.value is not None:
                    configured.setdefault(knob.leaf.lower(), []).append(s)
        for rel, meta in sorted(result.meta.items()):
            facts = meta.get("uneven_splits") if isinstance(meta, dict) else None
            if not facts or is_test_file(rel):
                continue
            for fact in facts:
                key, leaf = fact["key"], fact["key"].rsplit(".", 1)[-1].lower()
                # the config key of that path, else of that name; the one nearest the script (its
                # own folder's config, not another example's)
                candidates = sorted(configured.get(leaf, ()), key=lambda s: (
                    not (s.key.endswith(key) or key.endswith(s.key)), -_shared_folders(s.file, rel)))
                cited = candidates[0] if candidates else None
                by = fact["by"]
                lost = (f"; the {show(cited.value)} configured at {where(cited)} runs in full only when it is a "
                        f"multiple" if cited is not None else "")
                yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob=key, alias="",
                                   effect=f"divided by {by if isinstance(by, int) else by.rsplit('.', 1)[-1]} with "
                                          f"the remainder dropped (`{fact['expr']}`, for {fact['target']}) and "
                                          f"nothing in this file tests the remainder, so the units left over never run",
                                   condition="", configured=lost,
                                   related=[cited] if cited is not None else [],
                                   flow=[{"file": rel, "line": fact["line"], "column": fact["col"], "kind": "split",
                                          "role": "sink", "key": key, "text": fact["expr"]}],
                                   **({} if cited is not None else {"severity": "note", "confidence": "medium"}))

    def _parameter_over_setting(self, site, knob, configured):
        """`cfg.n_rollout_threads = n_rollout_threads` in a function given both the parsed
        settings and a same-named parameter with a default: whatever the user set, the field
        ends as the caller's argument, or the default when the caller passes none."""
        d = site.detail
        fn = str(d.get("function") or "").rsplit(".", 1)
        owner = fn[0] if len(fn) == 2 and fn[1] == "__init__" else ".".join(fn)
        cited = next((s for s in configured if not _same_value(s, site) and s.file != site.file), None)
        lost = (f"; the value set at {where(cited)} ({show(cited.value)}) never takes effect" if cited
                else "")
        return self.finding(site, knob=knob.name, related=[*([cited] if cited else []), site], alias="",
                            effect=f"set from the parameter `{d.get('param')}` of {owner}() "
                                   f"({show(site.value)} when a caller leaves it out)",
                            condition=" unconditionally", configured=lost,
                            **({} if cited else {"severity": "note", "confidence": "medium"}))

    def _replaced_when_default(self, site, knob, field):
        """`if self.vllm.data_parallel_size == 1: self.vllm.data_parallel_size = dp_per_node`
        where the field's default is 1: a user who sets 1 on purpose cannot be told from one who
        set nothing, and gets dp_per_node."""
        target = site.detail.get("target") or site.key
        return self.finding(site, knob=knob.name, related=[field, site], alias="",
                            effect=f"`{target}` is replaced by `{site.detail.get('expr')}` whenever it equals "
                                   f"{show(field.value)}",
                            condition="",
                            configured=f"; {show(field.value)} is also its default ({where(field)}), so a user who "
                                       f"sets {show(field.value)} on purpose gets `{site.detail.get('expr')}` without "
                                       f"a word: the code tests the value, not whether the user set it")

    def _environment_overwritten(self, result):
        """`os.environ["XLA_FLAGS"] = "--xla_gpu_graph_min_graph_size=1"` at import,
        `os.environ["NCCL_SOCKET_NTHREADS"] = "8"` before NCCL starts: what the user exported
        (`--xla_force_host_platform_device_count=8`, a socket thread count) is replaced whole,
        without a word. Not when guarded (`if "XLA_FLAGS" not in os.environ`, `setdefault`), nor
        a value built from the variable itself; thread counts are QG107's, and variables that
        launchers set for the programs they start (`WORLD_SIZE`), the GPU set,
        `TOKENIZERS_PARALLELISM`, a switch forced to its parallel value and a narrowing inside a
        determinism or debug helper are a program's own choice. A note under examples/."""
        vocab = vocab_mod.load(result.settings or None)
        for site, var in environment_writes(result):
            d = site.detail
            if d.get("thread_var") or d.get("condition") or site.value is None:
                continue
            if var in _PROGRAM_CHOICES or idioms.set_for_programs(var):
                continue
            if vocab.serial_value(var, site.value) is False:
                continue  # a switch forced to its parallel value (`VLLM_ENABLE_V1_MULTIPROCESSING=1`)
            if _REPRODUCIBLE.search(str(d.get("function") or "")):
                continue  # `def set_batch_invariance(enable)`: one socket thread, asked for determinism
            yield self.finding(site, knob=var, related=[site], alias="",
                               effect=f"`{site.source.strip()[:80]}` replaces whatever the user exported",
                               condition="", configured=" (extend the variable, or set it only when it is unset)",
                               **({"severity": "note", "confidence": "medium"} if in_examples(site.file) else {}))

    def _gpu_set_by_rank(self, result):
        """`os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"`
        with `GPUS_PER_NODE = 8`: the GPU set is the program's own choice, but this one throws
        away the set the user or the launcher exported and assumes every node has that many
        GPUs (guided-diffusion's and consistency_models' setup_dist, InternVL's data pipeline).
        Not when the write tests the variable first, nor in tests; a note under examples/."""
        constants = {}  # (file, name) -> the literal a module constant holds
        for s in result.sites:
            if s.role == "define" and s.kind == "python" and s.detail.get("via") == "constant" \
                    and s.detail.get("function") == "<module>" and isinstance(as_number(s.value), int):
                constants[(s.file, s.leaf)] = (as_number(s.value), s)
        for site, var in environment_writes(result):
            d = site.detail
            if var != "CUDA_VISIBLE_DEVICES" or var in str(d.get("condition") or ""):
                continue
            m = _RANK_MODULO.search(str(d.get("expr") or ""))
            if m is None:
                continue
            divisor, related = m.group(1), [site]
            if divisor.isdigit():
                gpus = int(divisor)
            elif (site.file, divisor) in constants:
                gpus, define = constants[(site.file, divisor)]
                related = [define, site]
            else:
                continue  # a count the program measured or was given: a mapping, not an assumption
            if gpus < 2:
                continue
            modulo = divisor if divisor.isdigit() else f"{divisor} = {gpus}"
            yield self.finding(site, knob="CUDA_VISIBLE_DEVICES", related=related, alias="",
                               effect=f"set to this process's rank modulo {modulo}, which replaces "
                                      f"the GPUs the user or launcher exported and assumes {gpus} GPUs on every node",
                               condition="", configured=" (index into the exported set, or take the count from it)",
                               **({"severity": "note", "confidence": "medium"} if in_examples(site.file) else {}))

    def _gpu_set_pinned(self, result):
        """`os.environ["CUDA_VISIBLE_DEVICES"] = "6"` at a module's top level (or under its
        `__main__` guard), unconditionally: the GPUs the user or the launcher exported are
        replaced by a literal set, and in a module other files import, every program that
        imports it runs there. A note: the GPU set is often a script's own choice. Not a
        blank value (hiding the GPUs is a CPU program's choice), nor a pin QG105 reports beside
        code that spreads over every GPU, nor in a function (a worker's own device)."""
        importers: dict[str, int] | None = None
        for site, var in environment_writes(result):
            d = site.detail
            value = str(site.value).strip() if isinstance(site.value, str) else ""
            if var != "CUDA_VISIBLE_DEVICES" or d.get("condition") or not _GPU_LIST.fullmatch(value) \
                    or not (d.get("function") == "<module>" or d.get("in_main")) or in_examples(site.file):
                continue  # (a demo under examples/ showing one GPU is the demo's choice)
            if "," not in value and (result.meta.get(site.file) or {}).get("spreads_devices"):
                continue  # QG105's: the code that spreads over every GPU gets this one
            if importers is None:
                importers = _importers(result)
            count = importers.get(site.file, 0)
            effect = (f"pinned to {value} at import; {count} file{'s' if count > 1 else ''} of the project "
                      f"import{'' if count > 1 else 's'} this module, so each program that does runs there"
                      ) if count and not d.get("in_main") else (
                f"pinned to {value} {'here' if d.get('in_main') else 'at import'}")
            yield self.finding(site, knob="CUDA_VISIBLE_DEVICES", related=[site], alias="",
                               effect=f"{effect}, whatever GPUs the user or the launcher exported",
                               condition="", configured=" (set it only when it is unset, or take a flag)",
                               severity="note", confidence="medium")

    def _environment_fallback(self, result):
        """`os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(args.gpus))))`: the
        user's setting is only the fallback of a variable that schedulers and launchers set;
        under them the variable's value wins and the setting is dropped without a word."""
        for site in result.sites:
            d = site.detail
            if site.role != "read" or site.kind != "python" or d.get("via") != "environ" or is_test_file(site.file):
                continue
            setting = _setting_read(str(d.get("expr") or ""))
            if setting is None:
                continue
            var = site.key
            yield self.finding(site, knob=setting, related=[site], alias="",
                               effect=f"it is only the fallback of the environment variable {var}",
                               condition=f": whenever {var} is set (schedulers and launchers set it)",
                               configured=f", that value runs and {setting} is dropped without a word",
                               severity="note", confidence="medium")

    def _ignored_unless(self, result):
        """`def make(seed, task, num_envs, ..., cfg=None)`: `num_envs` is used only under `if cfg is
        None:`; a caller that passes cfg gets the config's count and its num_envs is dropped."""
        for rel, meta in sorted(result.meta.items()):
            for fact in (meta.get("ignored_unless") or ()) if isinstance(meta, dict) else ():
                if is_test_file(rel):
                    continue
                yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob=fact["param"],
                                   alias="", effect=f"the argument `{fact['param']}` of {fact['function']}() is used "
                                                    f"only when `{fact['other']} is None`",
                                   condition="", configured=f"; a caller that passes {fact['other']} has its "
                                                            f"{fact['param']} dropped without a word",
                                   flow=[{"file": rel, "line": fact["line"], "column": fact["col"], "kind": "param",
                                          "role": "source", "text": fact["source"]}],
                                   # a required argument the caller must pass, then ignored: a warning
                                   **({} if fact.get("required") else {"severity": "note", "confidence": "medium"}))

    def _argument_replaced(self, site, knob):
        """`def make(..., num_envs=1, **kwargs)`: `if backend is Serial and "batch_size" in kwargs:
        num_envs = kwargs["batch_size"]`: the caller's count is replaced by another value under a
        condition (a note: the function may document it)."""
        cond = site.detail.get("condition")
        return self.finding(site, knob=knob.name, related=[site], alias="",
                            effect=f"the argument `{site.detail.get('target') or site.leaf}` the caller passed is "
                                   f"replaced by `{site.detail.get('expr') or site.source}`",
                            condition=f" when `{idioms.short_condition(cond)}`", configured="",
                            severity="note", confidence="medium")

    def _argument_scaled(self, site, knob):
        """`def set_affinity(worker_idx, num_workers, nproc_per_node=0)`: `if nproc_per_node > 1:
        num_workers = num_workers * nproc_per_node`: a helper re-expresses the count its caller
        passes (per node -> the whole job) for its own arithmetic; the setting itself is
        untouched, and every other reader sees it as configured. `args.world_size =
        ngpus_per_node * args.world_size` keeps the user's value too, as a factor (a note)."""
        cond = site.detail.get("condition")
        param = site.detail.get("overrides_param")
        return self.finding(site, knob=knob.name, related=[site], alias="",
                            effect=f"{'the argument ' if param else ''}`{site.detail.get('target') or site.leaf}` is "
                                   f"scaled to `{site.detail.get('expr')}`{' inside this function' if param else ''}",
                            condition=f" when `{idioms.short_condition(cond)}`" if cond else "",
                            configured="; only this function's copy changes" if param
                            else "; the value set is kept, as a factor",
                            severity="note", confidence="medium")

    def _forced_over_computed(self, site, knob):
        """`num_gpus = get_gpu_count_for_vllm(model)` then, under a condition, `num_gpus = 2  # hack`:
        the count the program computes for the job is replaced by a literal (a note: no user
        setting is lost, the program's own judgement is)."""
        cond = site.detail.get("condition")
        return self.finding(site, knob=knob.name, related=[site], alias=_alias(site),
                            effect=f"the count computed by `{site.detail['computed_by']}` is forced to "
                                   f"{show(site.value)}",
                            condition=f" when `{idioms.short_condition(cond)}`" if cond else " unconditionally",
                            configured="", severity="note", confidence="medium")

    def _dropped(self, result):
        """`kwargs = {}; if not streaming: kwargs["num_proc"] = cfg.n` then `ds.map(f, **kwargs)`:
        the configured count reaches the backend only under a condition the call does not
        share; otherwise the mapping lacks it and the backend's own default runs."""
        for knob in result.knobs:
            # a user-settable field even when its default is None (`dataset_num_proc: int = None`)
            configured = [s for s in knob.sites if is_config_define(s)]
            for site in knob.sites:
                cond = site.detail.get("mapping_condition")
                if site.role != "consume" or not cond or is_test_file(site.file) or idioms.is_debug_condition(cond):
                    continue
                if site.detail.get("literal"):
                    continue  # a literal written under a condition: a default of this code, not the user's
                # a field of that exact name (a dataclass or parser of the project) is the setting the
                # read `args.dataset_num_proc` takes, wherever it is declared
                cited = [s for s in configured if s.kind in CONFIG_KINDS or s.file == site.file
                         or (site.match in ("flow", "key") and s.key == knob.name)][:1]
                backend = str(site.detail.get("backend") or "its backend").rsplit(".", 1)[-1]
                lost = (f"; the value configured at {where(cited[0])} ({show(cited[0].value)}) is ignored then"
                        if cited and cited[0].value is not None else
                        f"; a value the user sets for it ({where(cited[0])}) is ignored then" if cited else "")
                yield self.finding(
                    site, knob=knob.name, related=[*cited, site], alias="",
                    effect=f"dropped unless `{idioms.short_condition(cond)}`: it reaches {backend} only "
                           f"through `**{site.detail['via_mapping']}`, which otherwise lacks "
                           f"{site.detail.get('param')}, so {backend}'s own default runs",
                    condition="", configured=lost, **({} if cited else {"severity": "note", "confidence": "medium"}))

    def _copy(self, site, knob, configured):
        """cfg.data.num_workers = cfg.legacy.num_workers: one knob overwritten with another.
        Plumbing into a key nobody configures is no fallback; a configured one is. Under a
        condition (a legacy key migrated only when set, a pool shared only when the separate
        one is off) the copy is usually the design: a note, as the precision policy says."""
        cited = [s for s in configured if s.kind in CONFIG_KINDS]
        if not cited:
            return
        origin = site.detail["from"]
        cond = site.detail.get("condition")
        expr = site.detail.get("expr") or site.source
        yield self.finding(
            site, knob=knob.name, related=[*cited[:1], site], alias="",
            effect=f"overwritten with the value of {origin} (`{expr}`)",
            condition=f" when `{idioms.short_condition(cond)}`" if cond else "",
            configured=f"; the value configured at {where(cited[0])} ({show(cited[0].value)}) "
                       f"{'is ignored then' if cond else 'never takes effect'}",
            severity="note" if cond else None,
            flow=[{"file": site.file, "line": site.line, "column": site.column, "kind": "config", "role": "source",
                   "key": origin, "text": site.source},
                  {"file": cited[0].file, "line": cited[0].line, "column": cited[0].column, "kind": "define",
                   "role": "sink", "key": knob.name, "value": cited[0].value, "text": cited[0].source}])


_DERIVED_HELP = re.compile(r"comput|runtime|run time|derived|automatic|auto-|set by|ignored", re.IGNORECASE)


_CHAIN = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


_NAMED_CHOICE = re.compile(r"==\s*['\"]")


def _preset_tables(sites) -> set[tuple]:
    """(file, function, leaf) of literals written in branches chosen by a name (`cfg_name ==
    "33B"`) in a function with 3 or more such branches: per-model presets the user picks by
    that name (a preset may set a key in only some of them), not overrides."""
    branches: dict[tuple, set] = {}
    leaves: dict[tuple, set] = {}
    for s in sites:
        cond = str(s.detail.get("condition") or "")
        if s.role == "override" and s.kind == "python" and s.detail.get("how") == "literal" \
                and _NAMED_CHOICE.search(cond):
            where_ = (s.file, s.detail.get("function"))
            branches.setdefault(where_, set()).add(cond)
            leaves.setdefault(where_, set()).add(s.leaf.lower())
    return {(*k, leaf) for k, conds in branches.items() if len(conds) >= 3 for leaf in leaves[k]}


def _shared_folders(a: str, b: str) -> int:
    """How many leading folders paths A and B share."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1]):
        if x != y:
            break
        n += 1
    return n


# environment variables whose value a program picks for itself: the GPU set it runs on, the
# tokenizers' fork warning
_PROGRAM_CHOICES = frozenset({"CUDA_VISIBLE_DEVICES", "TOKENIZERS_PARALLELISM"})
_GPU_LIST = re.compile(r"\d+(?:\s*,\s*\d+)*")  # "6", "0,1,2,3"


def _importers(result) -> dict[str, int]:
    """File -> how many other files of the project import it (their flow facts' imports)."""
    files = modules_to_files(result.meta)
    out: dict[str, int] = {}
    for rel in result.meta:
        for target in imported_files(result.meta, rel, files):
            if target != rel:
                out[target] = out.get(target, 0) + 1
    return out


# a rank mapped onto a GPU index modulo a count: `Get_rank() % GPUS_PER_NODE`,
# `int(os.environ['SLURM_PROCID']) % 8`, `local_rank % 8`
_RANK_MODULO = re.compile(r"(?i)(?:rank|procid|process_index|process_id)\w*\W*%\s*([A-Za-z_]\w*|\d+)\b")
# a function that makes runs reproducible, or debugs them: narrowing parallelism is its job
_REPRODUCIBLE = re.compile(r"determinis|invarian|reproducib|debug|profil", re.IGNORECASE)


def _setting_read(expr: str) -> str | None:
    """The first read of the user's settings in EXPR: `args.gpus`, `self.cfg.num_workers`."""
    for m in _CHAIN.finditer(expr):
        parts = m.group(0).split(".")
        root = parts[1] if parts[0] == "self" and len(parts) > 2 else parts[0]
        if idioms.is_config_name(root):
            return m.group(0)
    return None


FIELD_VIAS = ("argparse", "dataclass", "pydantic", "attrs", "class")


def _replaced_when_default(site, fields_by_leaf):
    """The declared default of KNOB when SITE replaces it under a test that it equals that
    default (a count of 1 or more: 0, -1 and None are "unset" markers by design); else None."""
    d = site.detail
    target = str(d.get("target") or "")
    if d.get("how") not in ("reference", "expression") or not target or _mentions(d.get("expr") or "", site.leaf):
        return None
    m = re.search(rf"(?<![\w.]){re.escape(target)}\s*==\s*(\d+)\b", str(d.get("condition") or ""))
    if m is None or int(m.group(1)) < 1:
        return None
    return next((s for s in fields_by_leaf.get(site.leaf.lower(), ()) if as_number(s.value) == int(m.group(1))), None)


def _reconciled(site, fields_by_leaf) -> bool:
    """`if num_infer_gpus != self.inference.vllm.data_parallel_size * tp:
    self.inference.vllm.data_parallel_size = num_infer_gpus // tp` in a validator of a settings
    class: a field users set, replaced by a value derived from other settings whenever the two
    disagree."""
    d = site.detail
    target = str(d.get("target") or "")
    cond = str(d.get("condition") or "")
    if not d.get("config_self") or d.get("how") not in ("reference", "expression") or not target \
            or _mentions(d.get("expr") or "", site.leaf) or site.leaf.lower() not in fields_by_leaf:
        return False
    return any("!=" in clause and target in clause for clause in idioms.split_clauses(cond))


# an environment variable read in an expression: os.environ["X"], os.environ.get("X"), os.getenv("X")
_ENV_READ = re.compile(r"""os\.(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["'](\w+)["']""")


def _recomputed_field(site, knob):
    """`args.num_envs = args.local_num_envs * world_size`, unconditionally, on a field users set
    with a flag or dataclass field: whatever they pass is thrown away. The declaration, or None.
    Not when its help says it is computed at run time, nor when the value mentions the field."""
    d = site.detail
    target = str(d.get("target") or "")
    # (the `if __name__ == "__main__":` guard is where a script runs, and `isinstance(self, X)`
    # which class runs a shared post-init: neither is a condition on the value)
    conditions = [c for c in idioms.split_clauses(str(d.get("condition") or ""))
                  if not idioms.is_main_guard(c) and not c.strip().startswith("isinstance(self,")]
    if d.get("how") not in ("expression", "reference") or conditions or "." not in target:
        return None
    root = target.split(".", 1)[0]
    # `self.fsdp_size = self.num_gpu` in a post-init of the settings class that declares it
    own_class = str(d.get("function") or "").rsplit(".", 1)[0] if root == "self" and d.get("config_self") else None
    if not (idioms.is_config_name(root) or own_class) or _mentions(d.get("expr") or "", site.leaf):
        return None
    if any(idioms.set_for_programs(v) for v in _ENV_READ.findall(str(d.get("expr") or ""))):
        return None  # `cfg.distributed_world_size = int(os.environ["WORLD_SIZE"])`: the launcher's count
    return _declared_flag(site, knob, own_class)


def _declared_flag(site, knob, own_class=None):
    """The flag or settings field users set for SITE's knob (the script's own declaration
    first: another script may declare a field of the same name), or None."""
    return next(_declared_flags(site, knob, own_class), None)


def _declared_flags(site, knob, own_class=None):
    for s in sorted(knob.sites, key=lambda s: s.file != site.file):
        if s.role == "define" and s.kind == "python" and s.detail.get("via") in ("argparse", "dataclass") \
                and s.leaf.lower() == site.leaf.lower() and not _DERIVED_HELP.search(s.detail.get("help") or "") \
                and not s.detail.get("not_init") \
                and (own_class is None or s.detail.get("owner") == own_class) \
                and (s.detail.get("via") == "argparse" or CONFIG_CLASS.search(str(s.detail.get("owner") or ""))):
            yield s  # a dataclass of state (`_ProcessGroupState.world_size`) is no setting users pass


def _replaced_by_launcher(site, knob, of_this_program):
    """`args.world_size = int(os.environ["WORLD_SIZE"])` on a flag users set (`--world_size`,
    'number of distributed processes'): under a launcher its count runs and the flag does
    nothing. The launcher's count is the right one, so a note: the flag only misleads. The
    declaration (the first that OF_THIS_PROGRAM accepts), or None."""
    d = site.detail
    target = str(d.get("target") or "")
    if d.get("how") not in ("expression", "reference") or "." not in target \
            or not idioms.is_config_name(target.split(".", 1)[0]) or _mentions(d.get("expr") or "", site.leaf):
        return None
    if not any(idioms.set_for_programs(v) for v in _ENV_READ.findall(str(d.get("expr") or ""))):
        return None
    if idioms.fills_a_missing_value(str(d.get("condition") or ""), target):
        return None  # `if args.world_size == -1: args.world_size = int(os.environ["WORLD_SIZE"])`: left unset
    flag = next((flag for flag in _declared_flags(site, knob) if of_this_program(flag)), None)
    # (no flag: the config files users edit, which set `run.world_size: 1` for the same key)
    return flag or next((s for s in knob.sites if is_config_define(s) and s.kind in CONFIG_KINDS
                         and s.value is not None and not is_test_file(s.file)), None)


def _flag_of_this_program(flag, site, parsing, neighbours) -> bool:
    """Is FLAG one the program that runs SITE parses: in SITE's file, or in a script whose
    folder holds SITE's file (`main.py` and `util/misc.py`, whatever the imports resolve to) or
    that SITE's file imports, while SITE's file builds no parser of its own?"""
    if flag.file == site.file:
        return True
    if site.file in parsing:
        return False
    folder = flag.file.rsplit("/", 1)[0] + "/" if "/" in flag.file else ""
    return site.file.startswith(folder) or neighbours.either(flag.file, site.file)


def recomputed_finding(rule, site, knob, declared):
    return rule.finding(site, knob=knob.name, related=[declared, site], alias="",
                        effect=f"recomputed as `{site.detail.get('expr')}`", condition=" unconditionally",
                        configured=f"; the value users pass for it ({where(declared)}) is thrown away")


def _replaces_argument(site) -> bool:
    """A parameter of the function replaced, under a condition, by another value (not a literal,
    not a cap of itself, not a default filled in for None)."""
    d = site.detail
    cond = d.get("condition") or ""
    if not d.get("overrides_param") or not cond or d.get("how") not in ("reference", "expression"):
        return False
    target = d.get("target") or site.leaf
    return not (idioms.fills_a_missing_value(cond, target) or idioms.is_debug_condition(cond)
                or _mentions(d.get("expr") or "", target))


def _scales_own_argument(site) -> bool:
    """The value multiplied by another name, nothing else: a parameter of the function
    (`num_workers * nproc_per_node`), or a field re-expressed from per node to the whole job
    (`args.world_size = ngpus_per_node * args.world_size`, PyTorch's ImageNet example)."""
    d = site.detail
    if d.get("how") != "expression":
        return False
    name = re.escape(str(d.get("target") or site.leaf))
    other = r"[\w.]+(?:\([\w.]*\))?"  # ngpus_per_node, len(splits)
    return re.fullmatch(rf"\s*(?:{name}\s*\*\s*{other}|{other}\s*\*\s*{name})\s*", str(d.get("expr") or "")) is not None


def _same_value(define, site) -> bool:
    """A configured 1 'overridden' by 1 loses nothing: not cited."""
    return site.detail.get("how") == "literal" and site.value is not None and \
        str(define.value).strip() == str(site.value).strip()


def _severity(site, cited, loud) -> dict:
    """A warning when the configured value that is lost is known (cited) or the cap is the
    machine's CPU count; a note otherwise: without the value it replaces, an override is as
    often a deliberate setting as a fallback. An announced override, one setting of a
    configuration written in code, and a copy that leaves the knob itself as it is are notes."""
    if loud:
        return {"severity": "note"}
    if cited or site.detail.get("how") == "cpu_count" or site.detail.get("cpu_count"):
        return {}
    return {"severity": "note", "confidence": "medium"}


_ABSENT = re.compile(r"^\s*(?:not \((?P<a>[\w.\[\]'\"]+) is not None\)|(?P<b>[\w.\[\]'\"]+) is None)\s*$")


_DISABLED = re.compile(r"^\s*not \(?(?:[\w.]+\.)?(?:enable|use|with|run)_(?P<c>\w+?)\)?\s*$"
                       r"|^\s*not \(?(?:[\w.]+\.)?(?P<d>\w+?)_enabled\)?\s*$")


def _own_flag(site, knob) -> bool:
    """Does SITE's file define the flag it overwrites with a literal? A test folder's runner
    script (`tests/trace_tests.py -mt 8`, then `if not args.parallel: args.max_threads = 1`)
    replaces what its user passes on its own command line, not a test's own setting (a cap by
    the number of tests scheduled is the runner's own sizing)."""
    return site.detail.get("how") == "literal" and any(
        s.role == "define" and s.file == site.file and s.detail.get("via") == "argparse" for s in knob.sites)


def _adds_to_own_namespace(site, parser_flags: dict) -> bool:
    """A literal written into `args.x` in the function that builds the parser `args` comes from,
    when that parser has no flag x (a tokenizer helper's dummy `args.model_parallel_size = 1`):
    the attribute is added, nothing the user set on this command line is replaced."""
    target = str(site.detail.get("target") or "")
    flags = parser_flags.get((site.file, site.detail.get("function")))
    return (bool(flags) and site.detail.get("how") == "literal" and target.count(".") == 1
            and site.leaf.lower() not in flags)


def _component_absent(site) -> bool:
    """`if config.inference is None: num_infer_gpus = 0`: no GPUs for a component the run does
    not have. The tested section and the knob share a word stem (inference / infer). So for a
    component switched off (`if not enable_nemo_gym: nemo_gym_num_nodes = 0`): its name is in
    the knob's key or the local that holds it. A parallel group of one is the same for a group
    the model does not have (`if num_moe_experts is None: expert_model_parallel_size = 1`)."""
    group = site.leaf.lower().endswith(("_size", "_degree"))
    if site.value not in (0, "0") and not (group and site.value in (1, "1")):
        return False
    off = _DISABLED.match(str(site.detail.get("condition") or ""))
    if off:
        component = (off.group("c") or off.group("d")).lower()
        held = f"{site.key}.{site.detail.get('target') or ''}".lower().replace(".", "_")
        return len(component) >= 3 and component in held
    m = _ABSENT.match(str(site.detail.get("condition") or ""))
    if not m:
        return False
    tested = re.split(r"[.\[\]'\"]+", m.group("a") or m.group("b"))
    last = next((p for p in reversed(tested) if p), "").lower()
    words = [w for w in site.leaf.lower().split("_") if len(w) >= 4 and w not in _GROUP_WORDS]
    parts = [p for p in last.split("_") if len(p) >= 4] or [last]  # num_moe_experts: experts
    return bool(last) and any(p.startswith(w) or w.startswith(p[:5]) for w in words for p in parts)


_GROUP_WORDS = frozenset({"size", "degree", "model", "parallel", "world"})  # in every group size's name


def _intended(site) -> bool:
    """Idioms a reviewer would keep (auditor.lint.idioms): debug modes, no-backend branches,
    initialise-then-set, temporary overrides, computed locals."""
    cond = site.detail.get("condition")
    if _component_absent(site):
        return True
    if site.detail.get("accumulates"):
        return True  # tp_size = max(tp_size, tp_rank + 1) over a loop: a size found, not a value capped
    return (idioms.is_debug_condition(cond) or idioms.fills_a_missing_value(cond or "", site.leaf)
            or idioms.is_no_backend_branch(site)
            or idioms.is_option_without_workers(site) or idioms.is_initialised_then_set(site) or idioms.is_computed_local(site)
            or idioms.is_derived_size(site) or idioms.restates_condition(site)
            or idioms.is_eval_path(site) or idioms.is_capped_by_work(site) or idioms.is_reduction(site))


def _another_quantity(site, taken, counts) -> bool:
    """`n_motions = min(self.num_envs, total_motions)`, `num_samples = min(self.num_envs,
    num_buckets)`: a bound taken into a local that names no count of workers and that no
    consumer or write in the function takes (`os.environ["CUDA_VISIBLE_DEVICES"] =
    str(freest_gpu["index"])` takes one). The knob keeps its value; the local counts something
    else (motions to load, samples to draw)."""
    d = site.detail
    target = str(d.get("target") or "")
    if d.get("how") not in ("min", "max") or not target.isidentifier() or target.lower() == site.leaf.lower():
        return False
    if counts.match(target) is not None:
        return False  # `num_workers = min(cfg.num_workers, cpus)`: the count itself, under its own name
    if "key=" in str(d.get("expr") or ""):
        return False  # `min(gpustats["gpus"], key=...)` picks one of them: no bound on a count, judged as before
    used = re.compile(rf"\b{re.escape(target)}\b")
    return not any(used.search(expr) for expr in taken.get((site.file, d.get("function")), ()))


def _still_consumed(site, consumed):
    """`num_workers = min(config.train.num_data_workers, 1)` for a second loader, while the
    first gets `config.train.num_data_workers` itself: the knob is not replaced, a copy is."""
    target, d = site.detail.get("target") or "", site.detail
    if not target.isidentifier() or target.lower() == site.leaf.lower() or d.get("how") == "literal":
        return None
    m = re.search(rf"\b[A-Za-z_][\w.]*\.{re.escape(site.leaf)}\b", d.get("expr") or "")
    if not m:
        return None
    return next((c for c in consumed.get((site.file, d.get("function")), ())
                 if (c.detail.get("expr") or "").strip() == m.group(0)), None)


def _short_call(text: str) -> str:
    head = text.split("(", 1)[0]
    return f"{head}(...)" if "(" in text else head


def _knob_copy(site) -> bool:
    """An attribute or item of a configuration assigned another configuration key's value."""
    d = site.detail
    origin, target = d.get("from"), str(d.get("target") or "")
    if d.get("how") != "reference" or not isinstance(origin, str) or not ("." in target or "[" in target):
        return False
    if "." not in origin or str(d.get("expr", "")).startswith("self."):
        return False  # instance state (self.max_worker_nodes) copied into a spec: no second knob
    a, b = origin.lower(), site.key.lower()
    return a != b and not a.endswith("." + b) and not b.endswith("." + a)


def _alias(site) -> str:
    """` (held in `num_gpus`)` when a local of another name carries the knob's value."""
    target = site.detail.get("target") or ""
    if target.isidentifier() and target.lower() != site.leaf.lower():
        return f" (held in `{target}`)"
    return ""


def _was_loaded(site, reads) -> bool:
    """The name held a loaded value: attribute/item state, or a local read earlier in the function.

    `num_gpus = 0; ...; num_gpus = ctx.device_count` computes a local afresh: nothing was
    loaded, so nothing is overridden.
    """
    target = site.detail.get("target") or site.source.split("=", 1)[0]
    if "." in target or "[" in target:
        return True
    expr = site.detail.get("expr") or ""
    if not _AUGMENTED.match(expr) and _mentions(expr, site.leaf):
        return True  # n = 1 if ars else self.n_envs: the loaded value flows through the other branch
    first = reads.get((site.file, site.detail.get("function"), site.leaf.lower()))
    local = target.strip().lower()
    first_local = reads.get((site.file, site.detail.get("function"), local))
    return any(line is not None and line <= site.line for line in (first, first_local))


def _mentions(expr: str, word: str) -> bool:
    """WORD as a whole word in EXPR (looked for as a substring first: most expressions do not
    hold it, and each word's regex is compiled anew)."""
    return word in expr and re.search(rf"\b{re.escape(word)}\b", expr) is not None


def _changes_the_value(site, leaf: str) -> bool:
    """Forced literals, and caps or arithmetic on the loaded value itself.

    Plumbing (`resource_pool.nnodes = config.trainer.nnodes`), values computed afresh
    (`world_size = dist.get_world_size()`), conversions (`int(n)`) and environment
    variables being set are not overrides of a loaded value.
    """
    d = site.detail
    how = d.get("how")
    if d.get("backend") == "os.environ" or how in ("reference", "environ"):
        return False
    if how == "literal":
        if site.value is None or not isinstance(site.value, (int, float, bool)) and \
                not re.fullmatch(r"\d+", str(site.value)):
            return False  # `processes = []`, `= None`: not a count
        return not idioms.fills_a_missing_value(d.get("condition") or "", leaf) and not (
            d.get("target") and idioms.fills_a_missing_value(d.get("condition") or "", d["target"]))
    expr = d.get("expr") or d.get("cap") or site.source
    if _AUGMENTED.match(expr):
        return True  # num_workers //= 2
    mentions_self = _mentions(expr, leaf)
    if how in ("min", "max", "cpu_count") or d.get("cpu_count"):
        return mentions_self
    if how == "expression":
        return mentions_self and not _CONVERSION.match(expr) and re.search(r"[-+*/%]|//", expr) is not None
    return False


def _cap(cap) -> str:
    """The cap as written: `self.scaling_config.max_workers`, not a quoted string of it."""
    if isinstance(cap, str):
        return cap if cap.strip().lstrip("-").isdigit() else f"`{cap}`"
    return show(cap)


def _effect(site) -> str:
    d = site.detail
    how, cap, expr = d.get("how"), d.get("cap"), d.get("expr") or site.source
    if how == "literal" or (how is None and site.value is not None):
        return f"forced to {show(site.value)}"
    if how == "cpu_count" or d.get("cpu_count"):
        return f"capped by os.cpu_count() (`{expr}`), so it never exceeds this machine's CPU count"
    if how == "min":
        return f"capped at {_cap(cap)} (`{expr}`)" if cap not in (None, "") else f"capped by `{expr}`"
    if how == "max":
        return f"raised to at least {_cap(cap)} (`{expr}`)" if cap not in (None, "") else f"raised by `{expr}`"
    if how == "environ":
        return f"taken from the environment instead (`{expr}`)"
    return f"replaced by `{expr}`"

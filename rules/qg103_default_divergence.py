"""QG103 default-divergence: code falls back to a different default than the configuration."""

import collections
import posixpath
import re

from auditor.extract.py_refs import STATED_CPU_COUNT
from auditor.flow.values import leaves, reads_configuration
from auditor.join import composed, hydra_includes
from auditor.lint import idioms
from auditor.lint.base import (CONFIG_KINDS, Example, Rule, as_number, in_examples, is_config_define, is_literal,
                               ImportNeighbours, is_test_file, show, where)

_READ_VIAS = ("get", "getattr", "pop", "environ", "param", "dataclass", "subscript", "attribute")


class MachineDefault(str):
    """A fallback computed from this machine (`max(1, os.cpu_count() // 4)`): differs from any
    configured literal, and from one machine to the next."""

    def __repr__(self) -> str:
        return f"`{str(self)}` (this machine's CPU count)"


# a wrapper that hands on at least this many of its own parameters by name passes its
# callee's arguments through: the one it leaves out is one its callers cannot set
PASS_THROUGH = 3


def _is_own_param(value, keyword: str, fn: str) -> bool:
    """`n_bandits=n_bandits`, the calling function's own parameter under the callee's name (also
    as one branch of a rebinding, `bandit_kwargs = bandit_kwargs or {}`)."""
    if not isinstance(value, dict):
        return False
    if value.get("k") == "param":
        return value.get("name") == keyword and value.get("fn") == fn
    return value.get("k") == "oneof" and any(_is_own_param(v, keyword, fn) for v in value.get("of") or ())


def _negative_marker(value) -> bool:
    number = as_number(value)
    return isinstance(number, int) and not isinstance(number, bool) and number < 0


def _default_of(site):
    expr = str(site.detail.get("expr") or "")
    if site.role == "read" and site.kind == "python" and site.default is None and site.detail.get("via") != "param" \
            and ("cpu_count" in expr or "sched_getaffinity" in expr):
        return MachineDefault(expr)
    if site.role != "read" or site.kind != "python" or site.default is None or site.detail.get("in_message"):
        return None  # (in an assertion's message or a raised exception: shown, never used)
    if site.detail.get("literal") is False or not is_literal(site.default) or idioms.is_sentinel_default(site.default):
        return None  # os.getenv("WORLD_SIZE", ""): a marker for "absent", checked before use
    if idioms.fallback_fails_loudly(site):
        return None  # n = cfg.get("n_gpus", 0); assert n > 0: a missing key stops the run
    if idioms.fallback_tested_for_presence(site):
        return None  # int(os.getenv("NUM_NODES", 0)) > 0: is it set at all, not how many
    root = str(site.detail.get("root") or "").split(".", 1)[0]
    if site.detail.get("via") == "getattr" and root and root not in ("self", "cls") and not idioms.is_config_name(root):
        return None  # getattr(env, "num_envs", 1): an attribute of an object, no setting's fallback
    return as_number(site.default)


_ROLLOUTS = ("import multiprocessing as mp\n"
             "def evaluate_many(policy, env_name, n_episodes, max_steps=1000, seed=0, num_workers=1):\n"
             "    if num_workers > 1:\n"
             "        with mp.Pool(num_workers) as pool:\n"
             "            return pool.map(run_one, range(n_episodes))\n"
             "    return [run_one(i) for i in range(n_episodes)]\n")


class DefaultDivergence(Rule):
    CODE = "QG103"
    NAME = "default-divergence"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{knob} falls back to {default} here {when}, but {other}"
    RATIONALE = """\
When the code's fallback default differs from the configured default, the value that runs
depends on whether the key happens to be present: a config variant, an override file or a
refactor that drops the key silently switches from the configured value to the code's. Two
code paths reading the same knob with different fallbacks diverge the same way. An environment
variable read with different fallbacks by two files neither of which imports the other (two
levels) is a note: model wrappers or plugins that run one at a time may each pick their own
default for a variable nobody set (lmms-eval's `WORKERS`, 32 in one wrapper and 8 in another).

Make the fallback equal to the configured default, or drop it and fail loudly on a missing
key. When the configurations setting the knob disagree among themselves, the finding counts
what each sets and is a note: which one reaches the read is not decided by the name. A
fallback equal to one of those values still loses the others (`kwargs.pop("num_actors", 16)`
where configs set 8, 16 and 64): the same note. Not for a parameter's default, nor for an off
value (0, 1, `False`: a size of 1 or a switch left off is what some config always chooses). An
empty-string, "none" or "auto" fallback (`os.getenv("WORLD_SIZE", "")`) is a sentinel for
"absent" or "compute it" and is not compared, and so is a fallback that an `assert` right
after the read rejects (`assert n_gpus > 0`): a missing key then fails loudly. Nor is a
negative configured count (`tensor_model_parallel_size: -1`, "take it from the checkpoint"): a
marker, not a count the fallback drops. A function parameter's default matched to a
nested configuration key by its name alone is a note: nothing shows the two are one setting. So
is a key one config sets where three times as many sibling configs of its folder have the
section but leave the key out: the fallback is their value, by design. A call of a helper that
leaves out the count another call of it passes from the configuration runs the helper's default
(`collector = Collector(cfg); collector.collect()` while `train()` passes `env_num=cfg...`): a
warning at that call, also when the default sits in front of an `or` that would read the
configuration (`env_num = env_num or cfg.env_num`: a default of 8 is never falsy).
A function's fallback for its own keyword arguments (`kwargs.pop("num_workers", 1)` in a
library class) is compared only with config files in its own top-level folder, and a
parameter's default not with the configs of example scripts in another top-level folder
(`examples/`, `sota-implementations/`): those reach it through a call, not by name. A
parameter's default that every call the project makes passes (by name or position) never
runs: no finding. The off default of a switch (`use_multiprocessing=False`, or
`kwargs.pop("use_multiprocessing", False)`) beside a config that turns it on is a note:
opt-in switches are threaded through calls the call graph may not resolve, and a name cannot
tell which of them drops it. A helper call that leaves out a count the calling function itself
passes to another helper's parameter of that name for the same backend
(`compute_bootstrap_style_control(battles)` beside `compute_bootstrap_bt(battles,
num_cpu=num_cpu)`) is a warning: the count was at hand, and this call runs the helper's
default (for `num_cpu if num_cpu else os.cpu_count()`, the machine's CPU count).
A wrapper that hands its callee at least three of its own parameters by name
(`evaluate_many(policy=policy, n_episodes=n_episodes, max_steps=max_steps)`) but neither takes
nor passes the count that sizes the callee's pool, and has no `**kwargs`, leaves its callers no
way to set it: a warning when the callee's default runs it serially (0 or 1), a note otherwise
(ReAgent's `compare_bandit_algos()`, whose `Pool(None)` takes every CPU). A call that leaves
out a shared helper's count (2 or more by default) while another call of that helper passes
one the flow cannot resolve (`compute_code_eval(gens, refs)` in one task, `num_workers=
self.num_workers` in another) is a note: the calls disagree and nobody chose the default for
this one. Not when the other call computes its count from the machine alone (`max(16, 4 *
jax.local_device_count())`): that call's own sizing. Nor when the other call reaches another copy
of the helper: a script's own folder comes first on sys.path, so `from human_eval.evaluation
import ...` in HumanEval/ and in MBPP/ names two functions.
A flag, a settings field or a parameter whose help text or docstring states another default
than the one it has (`default=4, help="... (default: 16)"`; `default=1, help="Defaults to
number of CPUs"`; `num_workers=4` documented as "Default, 12") runs a value its users do not
expect: a warning. Not when the stated number starts a formula or a rate ("2 * num_gpus", "4 per
GPU"), when the default is 0 or -1 against "all CPUs" (the usual markers), or when the file's
`set_defaults()` sets the flag."""
    VALID = [
        Example({"env.py": "import os\n"
                           "def num_nodes():\n"
                           "    return int(os.getenv('DATA_OPTIMIZER_NUM_NODES', 1))\n",
                 "functions.py": "import os\n"
                                 "def optimize(num_nodes=None):\n"
                                 "    if num_nodes is None or int(os.getenv('DATA_OPTIMIZER_NUM_NODES', 0)) > 0:\n"
                                 "        return 'remote'\n"
                                 "    return 'local'\n"},
                "a fallback of 0 compared with 0 tests whether the variable is set; it is no count"),
        Example({"HumanEval/human_eval/evaluation.py": "from concurrent.futures import ProcessPoolExecutor\n"
                                                      "def evaluate_functional_correctness(samples, n_workers=32):\n"
                                                      "    with ProcessPoolExecutor(n_workers) as ex:\n"
                                                      "        return list(ex.map(len, samples))\n",
                 "HumanEval/eval_instruct.py": "from human_eval.evaluation import evaluate_functional_correctness\n"
                                               "def run(samples):\n"
                                               "    return evaluate_functional_correctness(samples, n_workers=8)\n",
                 "MBPP/human_eval/evaluation.py": "from concurrent.futures import ProcessPoolExecutor\n"
                                                  "def evaluate_functional_correctness(samples, n_workers=32):\n"
                                                  "    with ProcessPoolExecutor(n_workers) as ex:\n"
                                                  "        return list(ex.map(len, samples))\n",
                 "MBPP/eval_instruct.py": "from human_eval.evaluation import evaluate_functional_correctness\n"
                                          "def run(samples):\n"
                                          "    return evaluate_functional_correctness(samples)\n"},
                "each benchmark folder calls its own copy of the helper: no call of the other copy passes a count"),
        Example({"train.py": "import argparse\n"
                             "parser = argparse.ArgumentParser()\n"
                             "parser.add_argument('--workers', default=16, type=int, help='loader workers (default: 16)')\n"
                             "parser.add_argument('--threads', default=0, type=int, help='threads; defaults to all cores')\n"
                             "parser.add_argument('--actors', default=8, type=int, help='actors, default 2 * num_gpus')\n"
                             "parser.add_argument('--procs', default=4, type=int, help='processes (default: 8)')\n"
                             "parser.set_defaults(procs=8)\n"},
                "help texts that state the default the flag has (0: all cores; a formula; a set_defaults)"),
        Example({"evals/rollouts.py": _ROLLOUTS,
                 "evals/compare.py": "from evals.rollouts import evaluate_many\n"
                                     "def compare(policy, env_name, n_episodes, max_steps, num_workers):\n"
                                     "    return evaluate_many(policy=policy, env_name=env_name, n_episodes=n_episodes,\n"
                                     "                         max_steps=max_steps, num_workers=num_workers)\n"},
                "a wrapper that hands on its callers' count with the rest"),
        Example({"evals/eval.py": "import os\nfrom concurrent.futures import ThreadPoolExecutor\n"
                                  "def run(samples):\n"
                                  "    n = int(os.environ.get('EVALS_THREADS', '10'))\n"
                                  "    with ThreadPoolExecutor(max_workers=n) as ex:\n"
                                  "        return list(ex.map(score, samples))\n",
                 "evals/solvers.py": "import os\n"
                                     "class HumanSolver:\n"
                                     "    def __init__(self):\n"
                                     "        if os.environ.get('EVALS_THREADS') != '1':\n"
                                     "            raise ValueError(f\"EVALS_THREADS must be 1, not "
                                     "{os.environ.get('EVALS_THREADS', 'not specified')}\")\n"},
                "a fallback that only fills an error message is shown, never used"),
        Example({"rating.py": "import os\nimport multiprocessing as mp\nfrom torch.utils.data import DataLoader\n"
                              "def boot_bt(rows, num_cpu=None):\n"
                              "    with mp.Pool(num_cpu if num_cpu else os.cpu_count()) as pool:\n"
                              "        return pool.map(len, rows)\n"
                              "def load(ds, num_cpu=0):\n    return DataLoader(ds, num_workers=num_cpu)\n",
                 "report.py": "from rating import boot_bt, load\n"
                              "def report(rows, ds, num_cpu):\n"
                              "    return boot_bt(rows, num_cpu=num_cpu), load(ds)\n"},
                "the count its function holds goes to a helper of another backend: the loader's is its own"),
        Example({"execs.py": "from multiprocessing import Pool\n"
                             "class HashExecutor:\n    def __init__(self, max_workers=2):\n"
                             "        self.pool = Pool(max_workers)\n"
                             "class ProcessorExecutor:\n    def __init__(self, max_workers=4):\n"
                             "        self.pool = Pool(max_workers)\n",
                 "processor.py": "from execs import HashExecutor, ProcessorExecutor\n"
                                 "class Processor:\n    def __init__(self, cfg):\n"
                                 "        self.hash = HashExecutor()\n"
                                 "        self.procs = ProcessorExecutor(max_workers=cfg.processor_workers)\n"},
                "a generic parameter of two helpers given another name's count: two pools for two jobs"),
        Example({"config.yaml": "num_workers: 8\n",
                 "pipeline.py": "from torch.utils.data import DataLoader\n"
                                "def loader(ds, num_workers=2):\n    return DataLoader(ds, num_workers=num_workers)\n",
                 "train.py": "from pipeline import loader\n"
                             "def main(cfg, ds):\n    return loader(ds, cfg.num_workers)\n"
                             "def evaluate(cfg, ds):\n    return loader(ds, num_workers=cfg.num_workers)\n"},
                "every call of the function passes the parameter (by position or by name): its default never runs"),
        Example({"metrics/code_eval.py": "from concurrent.futures import ThreadPoolExecutor\n"
                                         "def compute_code_eval(predictions, references, num_workers=4):\n"
                                         "    with ThreadPoolExecutor(max_workers=num_workers) as ex:\n"
                                         "        return list(ex.map(run, predictions, references))\n",
                 "tasks/humaneval.py": "from metrics.code_eval import compute_code_eval\n"
                                       "def process_results(gens, refs):\n"
                                       "    return compute_code_eval(gens, refs, num_workers=4)\n",
                 "tasks/mbpp.py": "from metrics.code_eval import compute_code_eval\n"
                                  "def process_results(gens, refs):\n"
                                  "    return compute_code_eval(gens, refs)\n"},
                "the other call passes the helper's default itself: every call runs the same count"),
        Example({"sota-implementations/redq/config.yaml": "num_workers: 2\n",
                 "rllib/datasets/d4rl.py": "def load(name, num_workers=0):\n    return fetch(name, num_workers)\n"},
                "a library function's parameter default, against an example script's config in a folder no "
                "package can be named"),
        Example({"examples/redq/config.yaml": "num_workers: 2\n",
                 "rllib/envs/gym.py": "class GymEnv:\n"
                                      "    def __init__(self, env_name, **kwargs):\n"
                                      "        self.num_workers = kwargs.pop('num_workers', 1)\n"},
                "a library function's own keyword default, against an example script's config in another folder"),
        Example({"train.py": "import argparse\n"
                             "p = argparse.ArgumentParser()\n"
                             "p.add_argument('--num-envs', type=int, default=8)\n"
                             "class Stats:\n"
                             "    def __init__(self, env):\n"
                             "        self.num_envs = getattr(env, 'num_envs', 1)\n"},
                "`getattr(env, 'num_envs', 1)` reads an object's attribute, not a setting's fallback"),

        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "n = cfg['data'].get('num_workers', 8)\n"}, "the defaults agree"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "n = cfg['data'].get('num_workers')\n"}, "no fallback at all"),
        Example({"pkg/configs/a.yaml": "config:\n  multi_gpu: true\n",
                 "pkg/configs/b.yaml": "config:\n  multi_gpu: false\n",
                 "pkg/runner.py": "def run(params):\n    return params['config'].get('multi_gpu', False)\n"},
                "a switch's fallback is one of its two values, whatever the configs choose"),
        Example({"pkg/configs/a.yaml": "model:\n  tensor_model_parallel_size: 4\n",
                 "pkg/configs/b.yaml": "model:\n  tensor_model_parallel_size: 1\n",
                 "pkg/model.py": "def build(cfg):\n    return cfg['model'].get('tensor_model_parallel_size', 1)\n"},
                "a size falling back to 1, no parallelism, which one config sets too"),
        Example({"conf.yaml": "env:\n  WORLD_SIZE: 8\n",
                 "launch.py": "import os\n"
                              "ws = os.getenv('WORLD_SIZE', '')\n"
                              "world_size = int(ws) if ws.isdigit() else 1\n",
                 "threads.py": "import os\n"
                               "n = int(os.environ.get('OMP_NUM_THREADS', '').strip() or 1)\n",
                 "runner.py": "def threads(params):\n"
                              "    n = params.get('torch_threads', 'auto')\n"
                              "    return n\n",
                 "configs/ppo.yaml": "params:\n  torch_threads: 4\n",
                 "worker.py": "import logging, os\nlog = logging.getLogger(__name__)\n"
                              "log.info('CVD=%s', os.environ.get('CUDA_VISIBLE_DEVICES', 'unset'))\n",
                 "bench.py": "import os\nprint(os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'))\n"},
                "sentinels: an empty string checked before use, 'auto' meaning computed, 'unset' in a log"),
        Example({"comm.py": "import os\nsize = int(os.getenv('WORLD_SIZE', '-1'))\n",
                 "partition.py": "import os\nlauncher = int(os.environ.get('WORLD_SIZE', '0') or '0')\n"},
                "two code paths that mark 'unset' differently (-1 and 0)"),
        Example({"conf/serve.yaml": "tensor_model_parallel_size: -1\n",
                 "utils.py": "def reduce(model):\n"
                             "    if model.cfg.get('tensor_model_parallel_size', 1) > 1:\n"
                             "        model.allreduce()\n"},
                "a configured -1 (taken from the checkpoint) beside a fallback of 1: a marker, no count"),
        Example({"conf.yaml": "teacher:\n  n_gpus_per_node: 8\n",
                 "teacher.py": "def pool(cfg):\n"
                               "    n_gpus = cfg.teacher.get('n_gpus_per_node', 0)\n"
                               "    assert n_gpus > 0, 'teacher.n_gpus_per_node must be set'\n"
                               "    return n_gpus\n"},
                "a fallback the next line rejects: a missing key fails loudly"),
        Example({"replay.py": "import tensorflow as tf\n"
                                "def make_replay_dataset(server, num_parallel_calls=12):\n"
                                "    return tf.data.Dataset.range(8).interleave(server, num_parallel_calls=num_parallel_calls)\n",
                 "r2d2/config.py": "import dataclasses\n@dataclasses.dataclass\nclass R2D2Config:\n"
                                   "    num_parallel_calls: int = 16\n",
                 "r2d2/builder.py": "from replay import make_replay_dataset\n"
                                    "def build(config, server):\n"
                                    "    return make_replay_dataset(server, num_parallel_calls=config.num_parallel_calls)\n",
                 "td3/builder.py": "from replay import make_replay_dataset\n"
                                   "def build(config, server):\n"
                                   "    return make_replay_dataset(server)\n"},
                "a helper many components share: one passes its own config's count; another, in a file "
                "that never reads that setting, has none to pass"),
    ]
    INVALID = [
        Example({"train.py": "import argparse\n"
                             "parser = argparse.ArgumentParser()\n"
                             "parser.add_argument('-j', '--workers', default=4, type=int,\n"
                             "                    help='number of data loading workers (default: 16)')\n"},
                "a flag whose help states another default than the one it has",
                expect=[("train.py", 3)], severity="warning"),
        Example({"prepare.py": "import click\n"
                               "@click.command()\n"
                               "@click.option('-j', '--workers', 'max_workers', type=int, default=1,\n"
                               "              help='Defaults to number of CPUs')\n"
                               "def main(max_workers):\n"
                               "    run(max_workers)\n"},
                "a click option documented as the machine's CPU count whose default is 1",
                expect=[("prepare.py", 3)], severity="warning"),
        Example({"main.py": "def run(data_dir, num_workers=4):\n"
                            "    \"\"\"Train.\n\n"
                            "    Args:\n"
                            "        num_workers (int): number of workers in the data loader. Default, 12.\n"
                            "    \"\"\"\n"
                            "    return loaders(data_dir, num_workers)\n"},
                "a parameter whose docstring states another default",
                expect=[("main.py", 1)], severity="warning"),
        Example({"metrics/code_eval.py": "from concurrent.futures import ThreadPoolExecutor\n"
                                         "def compute_code_eval(predictions, references, num_workers=4):\n"
                                         "    with ThreadPoolExecutor(max_workers=num_workers) as ex:\n"
                                         "        return list(ex.map(run, predictions, references))\n",
                 "tasks/humaneval.py": "from metrics.code_eval import compute_code_eval\n"
                                       "class HumanEval:\n"
                                       "    def __init__(self, num_workers=16):\n"
                                       "        self.num_workers = num_workers\n"
                                       "    def process_results(self, gens, refs):\n"
                                       "        return compute_code_eval(gens, refs, num_workers=self.num_workers)\n",
                 "tasks/mbpp.py": "from metrics.code_eval import compute_code_eval\n"
                                  "class MBPP:\n"
                                  "    def process_results(self, gens, refs):\n"
                                  "        return compute_code_eval(gens, refs)\n"},
                "one task passes its own count to the shared helper, another omits it and runs the helper's "
                "default (a note: neither is configuration)", expect=[("tasks/mbpp.py", 4)], severity="note"),
        Example({"pkg/configs/atari.yaml": "params:\n  config:\n    num_actors: 8\n",
                 "pkg/configs/brax.yaml": "params:\n  config:\n    num_actors: 16\n",
                 "pkg/configs/mujoco.yaml": "params:\n  config:\n    num_actors: 64\n",
                 "pkg/envs/pool.py": "def create_pool(**kwargs):\n"
                                     "    return EnvPool('', kwargs.pop('num_actors', 16), **kwargs)\n"},
                "a fallback equal to one configured count loses the others (a note: which config reaches "
                "it is the flow's question)", expect=[("pkg/envs/pool.py", 2)], severity="note"),
        Example({"evals/rollouts.py": _ROLLOUTS,
                 "evals/compare.py": "from evals.rollouts import evaluate_many\n"
                                     "def compare(policy, env_name, n_episodes, max_steps, seed):\n"
                                     "    return evaluate_many(policy=policy, env_name=env_name, n_episodes=n_episodes,\n"
                                     "                         max_steps=max_steps, seed=seed)\n"},
                "a wrapper hands on its own parameters by name but not the count: the helper's pool never runs "
                "for its callers", expect=[("evals/compare.py", 3)]),
        Example({"rating.py": "import os\nimport multiprocessing as mp\n"
                              "def boot_bt(rows, num_cpu=None):\n"
                              "    with mp.Pool(num_cpu if num_cpu else os.cpu_count()) as pool:\n"
                              "        return pool.map(len, rows)\n"
                              "def boot_style(rows, num_cpu=None):\n"
                              "    with mp.Pool(num_cpu if num_cpu else os.cpu_count()) as pool:\n"
                              "        return pool.map(len, rows)\n",
                 "report.py": "from rating import boot_bt, boot_style\n"
                              "def report(rows, style, num_cpu):\n"
                              "    if style:\n        return boot_style(rows)\n"
                              "    return boot_bt(rows, num_cpu=num_cpu)\n"},
                "a call that leaves out the count its function passes to a sibling helper of the same backend",
                expect=[("report.py", 4)], severity="warning"),
        Example({"config.yaml": "num_workers: 8\n",
                 "pipeline.py": "from torch.utils.data import DataLoader\n"
                                "def loader(ds, num_workers=2):\n    return DataLoader(ds, num_workers=num_workers)\n",
                 "train.py": "from pipeline import loader\n"
                             "def main(cfg, ds):\n    return loader(ds, cfg.num_workers)\n"
                             "def evaluate(cfg, ds):\n    return loader(ds)\n"},
                "one call of the function leaves the parameter out: its default runs there",
                expect=[("pipeline.py", 2)], severity="warning"),
        Example({"config.yaml": "use_multiprocessing: true\n",
                 "pipeline.py": "def generate(prompts, use_multiprocessing=False):\n"
                                "    return run(prompts, use_multiprocessing)\n"},
                "the off default of an opt-in switch beside a config that turns it on: a note",
                expect=[("pipeline.py", 1)], severity="note"),
        Example({"conf/pong.yaml": "collector:\n  env_num: 32\n",
                 "worker/collector.py": "from concurrent.futures import ProcessPoolExecutor\n"
                                        "class Collector:\n"
                                        "    def collect(self, env_num=8):\n"
                                        "        env_num = env_num or self.cfg.collector.env_num\n"
                                        "        with ProcessPoolExecutor(max_workers=env_num) as pool:\n"
                                        "            return list(pool.map(step, range(env_num)))\n",
                 "entry.py": "from worker.collector import Collector\n"
                             "def train(cfg):\n"
                             "    trainer = Collector(cfg)\n"
                             "    return trainer.collect(env_num=cfg.collector.env_num)\n"
                             "def evaluate(cfg):\n"
                             "    collector = Collector(cfg)\n"
                             "    return collector.collect()\n"},
                "a method call on a local built from the class omits the count another call passes",
                expect=[("entry.py", 7), ("worker/collector.py", 3)]),
        Example({"conf.yaml": "data:\n  filter_workers: 16\n",
                 "data/dataset.py": "class PromptDataset:\n"
                                    "    def __init__(self, path, filter_workers=16):\n"
                                    "        self.ds = load(path).filter(keep, num_proc=filter_workers)\n",
                 "data/loader.py": "from data.dataset import PromptDataset\n"
                                   "def build(config):\n"
                                   "    train = PromptDataset(config.train_files,\n"
                                   "                          filter_workers=config.data.filter_workers)\n"
                                   "    val = PromptDataset(config.val_files)\n"
                                   "    return train, val\n"},
                "one of two calls routes the user's setting, the other runs the signature default (equal "
                "today: a note)", expect=[("data/loader.py", 5)], severity="note"),
        Example({"conf.yaml": "rollout:\n  rollout_procs: 16\n",
                 "pools.py": "import multiprocessing as mp\n"
                             "def start_pool(n_proc=16):\n"
                             "    return mp.Pool(processes=n_proc)\n",
                 "run.py": "import yaml\nfrom pools import start_pool\n"
                           "cfg = yaml.safe_load(open('conf.yaml'))\n"
                           "train = start_pool(cfg['rollout']['rollout_procs'])\n"
                           "evaluation = start_pool()\n"},
                "the helper's default equals the configured value: only a note that setting it changes one call",
                expect=[("run.py", 5)], severity="note"),
        Example({"cfg/task/Kuka.yaml": "sim:\n  physx:\n    num_client_threads: 8\n    num_threads: 4\n",
                 "cfg/task/Ant.yaml": "sim:\n  physx:\n    num_threads: 4\n",
                 "cfg/task/Humanoid.yaml": "sim:\n  physx:\n    num_threads: 4\n",
                 "cfg/task/Cartpole.yaml": "sim:\n  physx:\n    num_threads: 4\n",
                 "vec_task.py": "def sim_params(cfg):\n"
                                "    physx = cfg['sim']['physx']\n"
                                "    return physx.get('num_client_threads', 0), physx['num_threads']\n"},
                "one task config sets a key its siblings leave out: the fallback is theirs (a note)",
                expect=[("vec_task.py", 3)], severity="note"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": "n = cfg['data'].get('num_workers', 0)\n"},
                "config says 8, code falls back to 0", expect=[("train.py", 1)]),
        Example({"conf.yaml": "rollout:\n  rollout_procs: 16\n",
                 "pools.py": "import multiprocessing as mp\n"
                             "def start_pool(n_proc=4):\n"
                             "    return mp.Pool(processes=n_proc)\n",
                 "run.py": "import yaml\nfrom pools import start_pool\n"
                           "cfg = yaml.safe_load(open('conf.yaml'))\n"
                           "train = start_pool(cfg['rollout']['rollout_procs'])\n"
                           "evaluation = start_pool()\n"},
                "a helper called without the count runs its own default, not the configured one",
                expect=[("run.py", 5)]),
        Example({"a.py": "import os\nn = int(os.environ.get('OMP_NUM_THREADS', 4))\n",
                 "b.py": "import os\nm = int(os.environ.get('OMP_NUM_THREADS', 1))\n"},
                "two code paths default the same knob differently"),
        Example({"run.py": "import os\nimport pool\nn = int(os.getenv('NUM_WORKERS', 32))\n",
                 "pool.py": "import os\nm = int(os.getenv('NUM_WORKERS', 8))\n"},
                "an environment variable read with two defaults by files that import one another",
                severity="warning"),
        Example({"models/vllm.py": "import os\nWORKERS = int(os.getenv('NUM_WORKERS', 32))\n",
                 "models/fastvideo.py": "import os\nWORKERS = int(os.getenv('NUM_WORKERS', 8))\n"},
                "two model wrappers, neither importing the other, each with its own default for an unset "
                "variable: a note", severity="note"),
        Example({"a.yaml": "data:\n  num_workers: 8\n", "b.yaml": "data:\n  num_workers: 4\n",
                 "c.yaml": "data:\n  num_workers: 4\n",
                 "train.py": "n = cfg['data'].get('num_workers', 0)\n"},
                "configurations that disagree: counted, as a note", expect=[("train.py", 1)], severity="note"),
        Example({"recipes/conf.yaml": "dataloader:\n  num_workers: 4\n",
                 "data/utils.py": "def build_loader(ds, num_workers: int = 0):\n    return ds\n"},
                "a parameter default matched to a nested key by its name alone is a note",
                expect=[("data/utils.py", 1)], severity="note"),
        Example({"conf/train.yaml": "data:\n  num_workers: 8\n", "eval/a.yaml": "data:\n  num_workers: 2\n",
                 "eval/b.yaml": "data:\n  num_workers: 16\n",
                 "train.py": "import yaml\n"
                             "cfg = yaml.safe_load(open('conf/train.yaml'))\n"
                             "n = cfg['data'].get('num_workers', 4)\n"},
                "compared with the configuration this code loads, not with every one",
                expect=[("train.py", 3)], severity="warning"),
        Example({"app/conf/config.yaml": "env:\n  num_envs: 16\n", "bench/conf.yaml": "env:\n  num_envs: 1\n",
                 "app/main.py": "import hydra\n"
                                "@hydra.main(config_path='conf', config_name='config')\n"
                                "def main(cfg):\n"
                                "    n = cfg.env.get('num_envs', 4)\n"
                                "    return n\n"},
                "the configuration a @hydra.main function is given", expect=[("app/main.py", 4)],
                severity="warning"),
        Example({"app/conf/config.yaml": "defaults:\n  - env: atari\n  - _self_\nseed: 1\n",
                 "app/conf/env/atari.yaml": "num_envs: 16\n", "app/conf/env/debug.yaml": "num_envs: 1\n",
                 "app/conf/smoke.yaml": "defaults:\n  - env: debug\n  - _self_\n",
                 "app/main.py": "import hydra\n"
                                "@hydra.main(config_path='conf', config_name='config')\n"
                                "def main(cfg):\n"
                                "    n = cfg.env.get('num_envs', 4)\n"
                                "    return n\n"},
                "the group option that config's defaults list picks", expect=[("app/main.py", 4)],
                severity="warning"),
    ]

    def check(self, result):
        self._meta = result.meta
        # (file, calling function, parameter) -> the helper sinks the flow resolved its calls to
        self._helper_sites: dict[tuple, set] = collections.defaultdict(set)
        for s in result.sites:
            if s.role == "consume" and s.detail.get("via") == "helper" and s.detail.get("helper_site"):
                self._helper_sites[(s.file, s.detail.get("function"), s.detail.get("helper_param"))].add(
                    s.detail["helper_site"])
        self._calls = _calls_by_callee(result)
        self._imports = ImportNeighbours(result.meta)
        self._near: dict[tuple, tuple] = {}  # (id(summary), folder) -> (summary kept alive, cut summary)
        keys_by_file: dict[str, set[str]] = {}  # config file -> every dotted key it sets
        for s in result.sites:
            if s.role == "define" and s.kind in CONFIG_KINDS:
                keys_by_file.setdefault(s.file, set()).add(s.detail.get("key_in_file") or s.key)
        for rel, m in result.meta.items():
            if isinstance(m, dict) and m.get("values"):
                keys_by_file.setdefault(rel, set()).update(m["values"])
        self._files_by_folder: dict[str, list] = collections.defaultdict(list)  # folder -> [(file, keys)]
        for rel, keys in keys_by_file.items():
            self._files_by_folder[rel.rpartition("/")[0]].append((rel, keys))
        yield from self._helper_defaults(result)
        yield from self._stated_defaults(result)
        includes = hydra_includes(result)
        # a key of a Hydra `_target_` node is an explicit argument of its target: no parameter
        # default falls back against it
        target_args = {(s.file, s.line) for s in result.sites if s.role == "consume" and s.detail.get("via") == "_target_"}
        calls = self._calls
        for knob in result.knobs:
            # (a negative count, `tensor_model_parallel_size: -1`, is the usual marker for "take
            # it from the checkpoint / all of them": no count a fallback of 1 disagrees with)
            configured = [s for s in knob.sites if is_config_define(s) and is_literal(s.value)
                          and not s.detail.get("reference") and not _negative_marker(s.value)]
            reads = [(s, _default_of(s)) for s in knob.sites]
            reads = [(s, d) for s, d in reads if d is not None]
            # a parameter default joined by name says less than a .get() fallback: it is
            # compared with config files only, never with other code's defaults
            params = [(s, d) for s, d in reads if s.detail.get("via") == "param"]
            reads = [(s, d) for s, d in reads if s.detail.get("via") != "param"]
            # Each read is compared with a summary of the configured values made once per set of
            # comparable defines (the config files, plus the code defaults of the read's own file,
            # plus what a loaded_from path reaches), not define by define: linear in the sites.
            sets = _Comparable(configured, includes)
            in_configs = _Summary([s for s in configured if s.kind in CONFIG_KINDS
                                   and (s.file, s.line) not in target_args]) if params else None
            for site, default in params:
                if _every_call_passes(site, calls, result.meta):
                    continue  # the default never runs: each call the project makes passes a value
                for f in self._against(knob, site, default, self._near_only(site, in_configs)):
                    if "." in knob.name:  # a function parameter matched to a nested config key by its leaf
                        f.severity, f.confidence = "note", "low"
                    elif isinstance(default, bool):
                        # `def inference(..., enable_distributed_inference=False)` beside a config that
                        # turns it on: the off default of an opt-in switch, threaded through by callers
                        # the call graph may not resolve; a name cannot tell that one drops it
                        f.severity, f.confidence = "note", "low"
                    yield f
            for site, default in reads:
                summary = sets.for_read(site)
                for f in self._against(knob, site, default, self._near_only(site, summary)):
                    if isinstance(default, bool) and _api_default(site):
                        # `kwargs.pop("vllm_v1_disable_multiproc", False)`: a function's own off
                        # default for an opt-in switch its callers hand on, as for a parameter
                        f.severity, f.confidence = "note", "low"
                    yield f
            if configured:
                continue
            # no configured default: code paths that read the same setting disagree. Dotted
            # config paths and environment variables name one setting wherever they are read;
            # a bare name (`kwargs.get("num_cpus", 1)`) only within one file
            anywhere, by_file = _Earlier(), collections.defaultdict(_Earlier)
            for i, (site, default) in enumerate(reads):
                found = [e for e in (anywhere.first_differing(default), by_file[site.file].first_differing(default))
                         if e is not None]
                if found:
                    _, s, d = min(found, key=lambda e: e[0])
                    f = self.finding(site, knob=knob.name, related=[s, site], default=show(default),
                                     when=_when(site), other=f"{where(s)} falls back to {show(d)}")
                    if s.file != site.file and "." not in site.key and not self._imports.either(s.file, site.file):
                        # `os.getenv("WORKERS", 32)` in one model wrapper, 8 in another that neither
                        # imports: plugins run one at a time, each with its own default for an unset variable
                        f.severity, f.confidence = "note", "low"
                    yield f
                if "." in site.key or site.key.isupper():
                    anywhere.add(i, site, default)
                by_file[site.file].add(i, site, default)

    def _stated_defaults(self, result):
        """`add_argument("-j", "--workers", default=4, help="... (default: 16)")`, a click option
        `default=1, help="Defaults to number of CPUs"`, `def run(num_workers=4)` documented as
        "Default, 12": the default users read in the help is not the one that runs."""
        reset = {(s.file, s.leaf.lower()) for s in result.sites if s.detail.get("set_defaults")}
        for site in result.sites:
            d = site.detail
            stated = d.get("help_default")
            if stated is None or site.kind != "python" or is_test_file(site.file):
                continue
            flag = site.role == "define"
            value = site.value if flag else site.default
            if not isinstance(value, int) or isinstance(value, bool) or (site.file, site.leaf.lower()) in reset:
                continue  # `parser.set_defaults(workers=16)` may make the help true
            if stated == STATED_CPU_COUNT:
                if value < 1:
                    continue  # 0 or -1: the usual markers for "all CPUs"
                said = "it defaults to this machine's CPU count"
            elif stated != value:
                said = f"it defaults to {stated}"
            else:
                continue
            source = "help text" if flag else "docstring"
            yield self.finding(site, knob=site.key, related=[site], default=show(value),
                               when="when the flag is not given" if flag else _when(site),
                               other=f"its {source} says {said}: users who trust it get {show(value)}")

    def _helper_defaults(self, result):
        """start_pool() runs its default 4 where another call passes the configured 16."""
        knob_of = {id(s): k for k in result.knobs for s in k.sites}
        passed: dict[tuple, list] = {}
        omitted = []
        # (file, calling function, parameter) -> calls there passing a value that is no literal
        held: dict[tuple, list] = {}
        sinks = {f"{s.file}:{s.line}": s for s in result.sites if s.role == "consume" and s.detail.get("via") != "helper"}
        for s in result.sites:
            d = s.detail
            if s.role != "consume" or d.get("via") != "helper" or d.get("project_backend"):
                continue
            ident = (d.get("helper_site"), d.get("helper_param"))
            if d.get("omitted"):
                omitted.append((ident, s))
                continue
            if d.get("flow_key"):
                passed.setdefault(ident, []).append(s)
            if d.get("expr") and not d.get("literal"):
                held.setdefault((s.file, d.get("function"), d.get("helper_param")), []).append(s)
        summaries: dict[int, _Summary] = {}  # per knob, made once
        chosen: dict[tuple, tuple | None] = {}  # (helper, default) -> (knob, passing call): once per pair
        for ident, site in omitted:
            default = as_number(site.value)
            try:
                memo_key = (ident, type(default), default)
                hash(memo_key)
            except TypeError:
                memo_key = (ident, type(default), repr(default))
            if memo_key not in chosen:
                chosen[memo_key] = None
                for other in passed.get(ident, []):
                    knob = knob_of.get(id(other))
                    if knob is None:
                        continue
                    summary = summaries.get(id(knob))
                    if summary is None:
                        summary = summaries[id(knob)] = _Summary(
                            [c for c in knob.sites if is_config_define(c) and is_literal(c.value)])
                    if summary.sites and not summary.holds(default):
                        chosen[memo_key] = (knob, summary.sites[0], other)
                        break
            if chosen[memo_key] is None:
                d = site.detail
                # the count is at hand: the same function passes it to another helper's parameter of
                # that name for the same backend (`compute_bootstrap_bt(..., num_cpu=num_cpu)` beside
                # `compute_bootstrap_style_control(...)`)
                # under that very name (`num_cpu=num_cpu`): a generic parameter (`max_workers`) of two
                # helpers may size two pools for two jobs; and not an I/O thread pool
                holder = next((o for o in held.get((site.file, d.get("function"), d.get("helper_param")), ())
                               if o.detail.get("helper") != d.get("helper")
                               and o.detail.get("backend") == d.get("backend")
                               and str(o.detail.get("expr")).rsplit(".", 1)[-1] == d.get("helper_param")), None)
                if holder is not None and d.get("kind") == "threads" and d.get("pool_use") != "compute":
                    holder = None
                if holder is not None and not is_test_file(site.file):
                    inner = sinks.get(d.get("helper_site"))
                    machine = inner is not None and (inner.detail.get("cpu_count") or "cpu_count(" in str(
                        inner.detail.get("expr") or ""))
                    shown = f"{show(default)} (so the machine's CPU count)" if machine and default is None else show(default)
                    yield self.finding(site, knob=d["helper_param"], related=[holder, site], default=shown,
                                       when=f"because {d['helper']}() is called without {d['helper_param']}",
                                       other=f"{where(holder)}, in the same function, passes `{holder.detail['expr']}` "
                                             f"to {holder.detail['helper']}()'s {d['helper_param']} for the same "
                                             f"{_short(str(d.get('backend')))}: the count this function holds never "
                                             f"reaches this call",
                                       **({"severity": "note", "confidence": "medium"} if in_examples(site.file)
                                          else {}))
                    continue
                # the same value today, but a sibling call in this file routes the user's setting:
                # train_dataset(workers=cfg.x) beside val_dataset() - setting x changes one of them
                sibling = next((o for o in passed.get(ident, []) if o.file == site.file
                                and o.detail.get("flow_key") and knob_of.get(id(o)) is not None
                                and any(is_config_define(c) for c in knob_of[id(o)].sites)), None)
                if sibling is None and not is_test_file(site.file):
                    elsewhere = list(self._passed_elsewhere(site, default, result))
                    yield from elsewhere or self._pass_through(site, default, result.meta.get(site.file))
                if sibling is None or is_test_file(site.file):
                    continue
                knob = knob_of[id(sibling)]
                yield self.finding(site, knob=knob.name, related=[sibling, site], default=show(default),
                                   when=f"because {site.detail['helper']}() is called without "
                                        f"{site.detail['helper_param']}",
                                   other=f"{where(sibling)} passes the configured {sibling.detail['flow_key']} to the "
                                         f"same {site.detail['helper']}(): setting it changes that call, not this one",
                                   severity="note", confidence="medium")  # equal today: the eval may be meant
                continue
            knob, first, other = chosen[memo_key]
            if other.file != site.file and not any(
                    r.role == "read" and r.file == site.file and r.detail.get("via") != "param" for r in knob.sites):
                # a helper many components share (acme's make_reverb_dataset): one agent's builder
                # passes its config's count; another's, in a file that never reads that setting, has
                # none to pass
                continue
            yield self.finding(site, knob=knob.name, related=[first, other, site], default=show(default),
                               when=f"because {site.detail['helper']}() is called without "
                                    f"{site.detail['helper_param']}",
                               other=f"the configuration sets {show(first.value)} at {where(first)}, which "
                                     f"{where(other)} passes to it")

    def _passed_elsewhere(self, site, default, result):
        """`compute_code_eval(predictions, references)` in one task, while another task calls the
        same function with `num_workers=self.num_workers`: the tasks that omit the count run the
        default 4, the other its own count. The flow could not say which value that call passes
        (so no configured knob is cited): the calls disagree, and nobody chose the default for
        this one. A note, also when the other call reads configuration: that setting may belong to
        another program (sglang's verifier CLI passes its `--workers`; the model loader's own
        verification is no place for it)."""
        d = site.detail
        param = d.get("helper_param")
        if not param or is_test_file(site.file) or as_number(default) is None or as_number(default) < 2:
            return  # an omitted 0 or 1 beside a routed count is QG105's (serial beside routed)
        meta = result.meta.get(site.file)
        flow = meta.get("flow") if isinstance(meta, dict) else None
        own = next((e for e in (flow or {}).get("calls", ()) if e.get("line") == site.line
                    and e.get("fn") == d.get("function") and e.get("callee") and param not in e.get("kwargs", {})
                    and not e.get("star")), None)
        if own is None:
            return
        callees = set(own["callee"])
        for callee in sorted(callees):
            for named, edge, rel in self._calls.get(callee.rsplit(".", 1)[-1], ()):
                given = (edge.get("kwargs") or {}).get(param)
                if named not in callees or given is None or edge is own:
                    continue
                if given.get("k") == "literal" and as_number(given.get("value")) in (None, as_number(default)):
                    continue  # the same count, or none the flow can read
                if in_examples(rel) != in_examples(site.file):
                    continue  # an example's call beside the library's own says nothing of the library
                reached = self._helper_sites.get((rel, edge.get("fn"), param))
                if reached and d.get("helper_site") not in reached:
                    continue  # a copy of the helper in another folder (`human_eval/` under each benchmark)
                if not _settable(given):
                    continue  # `max(16, 4 * jax.local_device_count())`: that call's own sizing, no setting
                routed = given.get("k") != "literal" and reads_configuration(given)
                # (an assignment node's text is the whole statement: its target is what is passed)
                text = given.get("name") if given.get("k") == "assign" and given.get("name") else \
                    given.get("text") or show(given.get("value"))
                yield self.finding(site, knob=param, related=[site], default=show(default),
                                   when=f"because {d['helper']}() is called without {param}",
                                   other=f"{rel}:{edge.get('line')} passes `{text}` to the same {d['helper']}(): "
                                         f"the calls that omit it run {show(default)}, that one "
                                         + ("the configured count" if routed else "its own count"),
                                   severity="note", confidence="medium")
                return

    def _pass_through(self, site, default, meta):
        """`compare_bandit_algos(..., n_bandits, max_steps, ...)` calls
        `multiple_evaluations_bandit_algo(n_bandits=n_bandits, max_steps=max_steps, ...)`, handing
        on its own parameters by name, but takes no `num_processes` and passes none: no caller of
        the wrapper can set the count that sizes the helper's pool. A serial default is a warning;
        any other (the machine's CPU count) a note."""
        d = site.detail
        flow = meta.get("flow") if isinstance(meta, dict) else None
        if not isinstance(flow, dict):
            return
        fn, param = d.get("function"), d.get("helper_param")
        edge = next((e for e in flow.get("calls", ()) if e.get("fn") == fn and e.get("line") == site.line
                     and not e.get("star")), None)
        own = (flow.get("functions") or {}).get(fn)
        if edge is None or not isinstance(own, dict) or own.get("vararg") or param in (own.get("params") or ()):
            return
        handed = [k for k, v in (edge.get("kwargs") or {}).items() if _is_own_param(v, k, fn)]
        if len(handed) < PASS_THROUGH:
            return
        serial = default in (0, 1) and not isinstance(default, bool)
        name = fn.rsplit(".", 1)[-1]
        names = ", ".join(handed[:4]) + (", ..." if len(handed) > 4 else "")
        machine = default is None and str(d.get("backend")).endswith(("Pool", "ProcessPoolExecutor"))
        yield self.finding(site, knob=param, related=[site],
                           default=f"{show(default)} (so the machine's CPU count)" if machine else show(default),
                           when=f"because {d['helper']}() is called without {param}",
                           other=f"{name}() hands it {len(handed)} of its own parameters by name ({names}) and takes "
                                 f"no {param}: no caller of {name}() can set the count that sizes "
                                 f"{d['helper']}()'s {_short(str(d.get('backend')))}",
                           **({} if serial and not in_examples(site.file)
                              else {"severity": "note", "confidence": "medium"}))

    def _near_only(self, read, summary):
        """SUMMARY without the configs that cannot reach READ by name. For a function's fallback
        for its own keyword arguments: every config outside READ's top-level folder. For a
        parameter's default: the configs of example scripts in another top-level folder
        (`sota-implementations/redq/config.yaml`, `examples/x.yaml`), which reach a library
        function's `num_workers=1` only through a call, which the flow would show. Memoised per
        summary and folder: a library reads the same key in many functions."""
        api = _api_default(read)
        if summary is None or not (api or read.detail.get("via") == "param"):
            return summary
        top = _top(read.file)
        key = (id(summary), top, api)
        if key not in self._near:
            near = [s for s in summary.sites if _top(s.file) == top or not api and not _script_folder(s.file)]
            self._near[key] = (summary, summary if len(near) == len(summary.sites) else _Summary(near))
        return self._near[key][1]

    def _against(self, knob, site, default, summary):
        if summary is None or not summary.sites:
            return
        configured, by_value = summary.sites, summary.by_value()
        # a fallback equal to one of several configured counts still loses the others (kwargs.pop(
        # "num_actors", 16) where configs set 8, 16 and 64); 0, 1 and False are the off values every
        # size or switch has, which some config always chooses
        if summary.holds(default) and (len(by_value) == 1 or site.detail.get("via") == "param"
                                       or default in (0, 1)):
            return
        first = configured[0]
        if len(by_value) == 1:
            if summary.unset_siblings is None:  # once per summary: reads share them
                summary.unset_siblings = _siblings_without(self._files_by_folder, configured)
            unset = summary.unset_siblings
            if unset:
                # `num_client_threads: 8` in one task config of a folder whose 20 others leave the
                # section's key out: the code's fallback is their value, by design (a note)
                yield self.finding(site, knob=knob.name, related=[first, site], default=show(default),
                                   when=_when(site),
                                   other=f"the configuration sets {show(first.value)} at {where(first)} (while {unset} "
                                         f"sibling configs in its folder leave the key out, so the fallback is theirs)",
                                   severity="note", confidence="low")
                return
            yield self.finding(site, knob=knob.name, related=[first, site], default=show(default), when=_when(site),
                               other=f"the configuration sets {show(first.value)} at {where(first)}")
            return
        # configurations disagree among themselves: which one reaches this read is a question
        # for the flow of values, not for a name; say what they set, as a note
        counts = ", ".join(f"{n} set{'s' if n == 1 else ''} {v}" for v, n in by_value.most_common(4))
        more = "" if len(by_value) <= 4 else f", {len(by_value) - 4} other values"
        yield self.finding(site, knob=knob.name, related=[first, site], default=show(default), when=_when(site),
                           other=f"the {len(configured)} configurations that set it disagree ({counts}{more}; "
                                 f"e.g. {where(first)})",
                           severity="note", confidence="low")


def _settable(tree: dict) -> bool:
    """A value someone can set: a literal, or one that reads a parameter, an attribute (a field of
    the caller's settings) or configuration, not one computed from this machine alone."""
    return tree.get("k") == "literal" or any(n.get("k") in ("param", "attr", "config", "env") for n in leaves(tree))


def _calls_by_callee(result) -> dict[str, list[tuple[str, dict, str]]]:
    """The last name of each callee (`inference`; a class's for its constructor) -> (its dotted
    name, the call, its file) for the project's calls outside tests (the flow layer's call edges)."""
    out: dict[str, list[tuple[str, dict, str]]] = collections.defaultdict(list)
    for rel, meta in result.meta.items():
        flow = meta.get("flow") if isinstance(meta, dict) and not is_test_file(rel) else None
        for edge in (flow or {}).get("calls", ()):
            for callee in set(edge.get("callee") or ()):
                out[callee.rsplit(".", 1)[-1]].append((callee, edge, rel))
    return out


def _every_call_passes(site, calls, meta) -> bool:
    """Every call of the parameter's function the project makes passes the parameter (by name,
    by position, or maybe through a splat), so its default never runs. False when no call is
    known: a library function is called from outside."""
    facts = meta.get(site.file)
    module = ((facts.get("flow") or {}) if isinstance(facts, dict) else {}).get("module")
    fn = str(site.detail.get("function") or "")
    if not module or not fn:
        return False
    name = f"{module}.{fn}".removesuffix(".__init__")
    # one module may be named from the tree's root or from its source folder (src.pkg.mod)
    edges = [e for callee, e, _rel in calls.get(name.rsplit(".", 1)[-1], ())
             if callee == name or name.endswith("." + callee) or callee.endswith("." + name)]
    position = site.detail.get("position")
    return bool(edges) and all(site.key in e.get("kwargs", {}) or e.get("star")
                               or position is not None and len(e.get("args") or ()) > position for e in edges)


def _short(backend: str) -> str:
    return backend.rsplit(".", 1)[-1]


_KWARGS = re.compile(r"^_*(kw|kwds|kwarg|kwargs|\w+_kwargs)$")


def _top(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else ""


def _script_folder(path: str) -> bool:
    """A config of example or demo scripts: under examples/, tutorials/, ... or a top-level
    folder no package can be named (`sota-implementations/`)."""
    top = _top(path)
    return in_examples(path) or bool(top) and not top.isidentifier()


def _api_default(site) -> bool:
    """A function's own default, not a setting's fallback: what it pops from its keyword
    arguments (`num_workers = kwargs.pop("num_workers", 1)`). (A parameter's default is compared
    with config files on its own terms: `def collect(self, env_num=8)` under `collector.env_num`.)"""
    root = str(site.detail.get("root") or "").split(".", 1)[0]
    return site.detail.get("via") in ("get", "pop") and bool(_KWARGS.match(root))


def _siblings_without(files_by_folder, configured) -> int:
    """How many config files in the folder of CONFIGURED (all in one folder) have the key's
    section but not the key, when they outnumber the files that set it 3 to 1; else 0."""
    folders = {s.file.rpartition("/")[0] for s in configured}
    if len(folders) != 1 or any(s.kind not in CONFIG_KINDS for s in configured):
        return 0
    folder = folders.pop()
    setting = {s.file for s in configured}
    key = configured[0].detail.get("key_in_file") or configured[0].key
    section = key.rpartition(".")[0]
    if not section:
        return 0
    without = 0
    for rel, keys in files_by_folder.get(folder, ()):
        if rel in setting:
            continue
        if any(k.startswith(section + ".") for k in keys) and key not in keys:
            without += 1
    return without if without >= 3 * len(setting) else 0


class _Summary:
    """Configured define sites, in order, with their values looked up once."""

    def __init__(self, sites: list):
        self.sites = sites
        self.values = [as_number(s.value) for s in sites]
        self._hashed: set | None = None
        self._counts = None
        self.unset_siblings: int | None = None  # see _siblings_without

    def holds(self, default) -> bool:
        """``default in {values}``, as the set would answer it (equality), hashed once."""
        if self._hashed is None:
            try:
                self._hashed = set(self.values)
            except TypeError:  # an unhashable value: compare one by one
                self._hashed = False
        if self._hashed is False:
            return any(default == v for v in self.values)
        try:
            return default in self._hashed
        except TypeError:
            return any(default == v for v in self.values)

    def by_value(self) -> collections.Counter:
        if self._counts is None:
            self._counts = collections.Counter(show(v) for v in self.values)
        return self._counts


class _Comparable:
    """The configured defines each read is compared with (_comparable, then _reaching), one
    _Summary per distinct set: config files everywhere, parser and dataclass defaults only
    in the read's own file."""

    def __init__(self, configured: list, includes):
        self.configured = configured
        self.includes = includes
        self.code_files = {s.file for s in configured if s.kind not in CONFIG_KINDS}
        self.memo: dict[tuple, _Summary] = {}

    def for_read(self, read) -> _Summary:
        own = read.file if read.file in self.code_files else None
        path = read.detail.get("loaded_from")
        key = (own, path, posixpath.dirname(read.file) if path else None)
        summary = self.memo.get(key)
        if summary is None:
            comparable = [s for s in self.configured if _comparable(s, read)] if own is not None else \
                [s for s in self.configured if s.kind in CONFIG_KINDS]
            summary = self.memo[key] = _Summary(_reaching(read, comparable, self.includes))
        return summary


class _Earlier:
    """The reads seen so far, for "the earliest one whose default differs from this one".

    One representative per (type, value) of default, in order: two defaults of the same type
    and value answer ``d != default and not _both_unset(d, default)`` alike, so the earliest
    read that differs is a representative. Numbers <= 0 ("not set" markers) are kept apart:
    for a default that is one, none of them differs, and the others differ unless equal."""

    def __init__(self):
        self.seen: set = set()
        self.unset: list[tuple] = []
        self.other: list[tuple] = []

    def add(self, index: int, site, default) -> None:
        try:
            key = (type(default), default)
            hash(key)
        except TypeError:
            key = (type(default), repr(default))
        if key in self.seen:
            return
        self.seen.add(key)
        (self.unset if _unset(default) else self.other).append((index, site, default))

    def first_differing(self, default) -> tuple | None:
        best = None
        for group in ((self.other,) if _unset(default) else (self.unset, self.other)):
            for entry in group:  # stops at the first that differs: few are equal to DEFAULT
                if entry[2] != default and not _both_unset(entry[2], default):
                    if best is None or entry[0] < best[0]:
                        best = entry
                    break
        return best


def _unset(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x <= 0


def _both_unset(a, b) -> bool:
    """`getenv("WORLD_SIZE", "-1")` here, `get("WORLD_SIZE", "0")` there: two markers for
    "not set" (no count is 0 or below), not two values that could run."""
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) and x <= 0 for x in (a, b))


def _comparable(define, read) -> bool:
    """A config file anywhere; a parser or dataclass default only in the same file.

    In a large tree `--num-cpus` of one script and `opts.get("num_cpus", 1)` of another
    module share a name, not a setting.
    """
    return define.kind in CONFIG_KINDS or define.file == read.file


def _reaching(read, configured, includes):
    """The configured values of the configuration this read was loaded from (`cfg =
    yaml.safe_load(open("conf/train.yaml"))`, `@hydra.main(config_name=...)`, with the files
    its Hydra defaults list composes), when it sets the key; else every configuration, which
    may then disagree."""
    path = read.detail.get("loaded_from")
    if not path:
        return configured
    path = path.replace("\\", "/")
    here = posixpath.normpath(posixpath.join(posixpath.dirname(read.file), path))
    path = posixpath.normpath(path)
    files = {f for f in {s.file for s in configured} | set(includes)
             if f in (path, here) or f.endswith("/" + path)}
    reached = set().union(*(composed(includes, f) for f in files)) if files else set()
    same = [s for s in configured if s.file in reached]
    return same or configured


def _when(site) -> str:
    return "when the caller passes no value" if site.detail.get("via") == "param" else "when the key is absent"

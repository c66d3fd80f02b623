"""QG106 serial-backend: a parallel count is fed to a backend that runs serially."""

import re

from auditor import catalogue
from auditor.flow.resolve import callable_name
from auditor.model import Site
from auditor.lint import idioms
from auditor.lint.base import (CONFIG_KINDS, Example, Rule, as_number, backend_entry, backend_kind, commented_out,
                               in_examples, is_config_define, is_test_file, modules_to_files, show, steps_envs, where)

_PARALLEL = re.compile(r"\bparallel", re.I)
SERIAL_CHOICES = {"dummy", "sync", "serial", "sequential", "threading", "dummyvecenv", "syncvectorenv",
                  "serialenv", "dummyvectorenv", "local"}


# a test of the machine or of the amount of work (`len(items) > 1`, `torch.cuda.is_available()`,
# `sys.platform != "win32"`): the parallel path is skipped for a reason the user can see
_ENOUGH_WORK = re.compile(r"\blen\(|is_available|platform|os\.name|cpu_count|device_count|\bdebug\b", re.I)
MAX_RELATED = 6  # call sites named with one note about a serial class


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1] if name else name


def _count(site):
    """(int or None, text): the count the backend gets, literal or as written."""
    d = site.detail
    value = site.value if site.value is not None else (site.default if d.get("defaulted") else None)
    n = as_number(value) if value is not None else None
    n = n if isinstance(n, int) and not isinstance(n, bool) else None
    measured = any(c.get("measure") == "len" for c in backend_entry(site).get("counts", []))
    if n is not None:
        text = show(n)
    elif measured or not d.get("expr"):
        text = site.key  # [make_env for _ in range(args.num_envs)] -> num_envs
    else:
        text = d["expr"]
    return n, text


_PACKAGES = {
    "envs/alfworld/envs.py": "import ray\n"
                             "@ray.remote\nclass AlfworldWorker:\n    def step(self, a):\n        return a\n"
                             "class AlfworldEnvs:\n"
                             "    def __init__(self, env_num):\n"
                             "        self.workers = [AlfworldWorker.remote() for _ in range(env_num)]\n",
    "envs/tool_use/envs.py": "class ToolUseEnvs:\n"
                             "    def __init__(self, env_num):\n"
                             "        self.envs = [dict() for _ in range(env_num)]\n",
}


_SAMPLERS = {
    "rl/sampler.py": "import multiprocessing as mp\n"
                     "class Sampler:\n    pass\n"
                     "class LocalSampler(Sampler):\n"
                     "    def __init__(self, make_env, n_workers=1):\n"
                     "        self.workers = [make_env(i) for i in range(n_workers)]\n"
                     "class ProcessSampler(Sampler):\n"
                     "    def __init__(self, make_env, n_workers=1):\n"
                     "        self.procs = [mp.Process(target=make_env, args=(i,)) for i in range(n_workers)]\n",
}
_MANAGERS = {
    "rl/managers.py": "import multiprocessing as mp\n"
                      "from rl.registry import MANAGERS\n"
                      "@MANAGERS.register('base')\n"
                      "class BaseManager:\n"
                      "    def __init__(self, fns, env_num=1):\n"
                      "        self.envs = [fns[i]() for i in range(env_num)]\n"
                      "@MANAGERS.register('subprocess')\n"
                      "class SubprocessManager(BaseManager):\n"
                      "    def __init__(self, fns, env_num=1):\n"
                      "        for i in range(env_num):\n"
                      "            mp.Process(target=fns[i]).start()\n",
}

# the same family, where the serial member counts its envs by its list's length (no count
# parameter to be seen looping over): what a config's pick of it means is told by its folder
_LEN_MANAGERS = {
    "rl/managers.py": "import multiprocessing as mp\n"
                      "from rl.registry import MANAGERS\n"
                      "@MANAGERS.register('base')\n"
                      "class BaseEnvManager:\n"
                      "    def __init__(self, fns):\n"
                      "        self.envs = [fn() for fn in fns]\n"
                      "@MANAGERS.register('subprocess')\n"
                      "class SubprocessEnvManager(BaseEnvManager):\n"
                      "    def __init__(self, fns, env_num=1):\n"
                      "        for i in range(env_num):\n"
                      "            mp.Process(target=fns[i]).start()\n",
}


# a project's own copies of the vector env classes (as openai baselines, stable-baselines and
# openrl keep them): serial and parallel by the library's names (examples)
_VENDORED = {
    "mylib/__init__.py": "",
    "mylib/vec_env.py": "class DummyVecEnv:\n    def __init__(self, env_fns):\n        self.envs = [f() for f in env_fns]\n"
                        "class SubprocVecEnv:\n    def __init__(self, env_fns):\n        self.fns = env_fns\n",
    "mylib/vector.py": "class SyncVectorEnv:\n    def __init__(self, env_fns):\n        self.envs = [f() for f in env_fns]\n"
                       "class AsyncVectorEnv:\n    def __init__(self, env_fns):\n        self.fns = env_fns\n",
}


_SUBPROC_DEMO = ("import argparse\n"
                 "from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv\n"
                 "parser = argparse.ArgumentParser()\n"
                 "parser.add_argument('--num_env', type=int, default=4)\n"
                 "parser.add_argument('--subproc', dest='subproc', action='store_true')\n"
                 "parser.add_argument('--no-subproc', dest='subproc', action='store_false')\n"
                 "parser.set_defaults(subproc={default})\n"
                 "def make_venv(args, fns):\n"
                 "    if not args.subproc:\n"
                 "        venv = DummyVecEnv([fns[0] for _ in range(args.num_env)])\n"
                 "    else:\n"
                 "        venv = SubprocVecEnv([fns[0] for _ in range(args.num_env)])\n"
                 "    return venv\n")


def _task(default: bool) -> dict:
    """A project's in-process and process-per-env classes, picked by a parameter's default."""
    return {"mylib/envs.py": "from multiprocessing import Process\n"
                             "class LoopEnvs:\n    def __init__(self, fns):\n        self.envs = [f() for f in fns]\n"
                             "class ProcEnvs:\n    def __init__(self, fns):\n"
                             "        self.procs = [Process(target=f) for f in fns]\n"
                             f"class Task:\n    def __init__(self, name, num_envs=1, single_process={default}):\n"
                             "        fns = [name for _ in range(num_envs)]\n"
                             "        if single_process:\n            wrapper = LoopEnvs\n"
                             "        else:\n            wrapper = ProcEnvs\n        self.env = wrapper(fns)\n"}


def _pick(name: str, envs: int = 8) -> str:
    return f"main_config = dict(env=dict(collector_env_num={envs}, manager=dict(type='{name}')))\n"


# an if statement as a serial / parallel switch, picked by the config beside it
_IF_SWITCH = ("from tianshou.env import DummyVectorEnv, SubprocVectorEnv\n"
              "def build(cfg, fns):\n"
              "    if cfg.use_subproc_vector_env:\n"
              "        env = SubprocVectorEnv(fns)\n"
              "    else:\n"
              "        env = DummyVectorEnv(fns)\n"
              "    return env\n")


def _light(env_id: str, help_text: str = "") -> dict:
    """A script stepping 8 environments of ENV_ID in a DummyVecEnv, their count a flag with
    HELP_TEXT (examples)."""
    return {"train.py": "import argparse\nimport gymnasium as gym\n"
                        "from stable_baselines3.common.vec_env import DummyVecEnv\n"
                        f"p = argparse.ArgumentParser()\np.add_argument('--task', default='{env_id}')\n"
                        f"p.add_argument('--num-envs', type=int, default=8, help='{help_text}')\nargs = p.parse_args()\n"
                        "envs = DummyVecEnv([lambda: gym.make(args.task) for _ in range(args.num_envs)])\n"}


def _trainers(call: str) -> dict:
    """A serial and a multiprocessing trainer, and a script that sets num_workers then makes CALL."""
    return {"rlkit/run.py": "import multiprocessing as mp\n"
                            "def train_agent(args):\n    return [args.gamma * i for i in range(10)]\n"
                            "def train_agent_multiprocessing(args):\n"
                            "    return [mp.Process(target=train_agent, args=(args,)) for _ in range(args.num_workers)]\n",
            "demo.py": "from rlkit.run import train_agent, train_agent_multiprocessing\n"
                       f"def train(args):\n    args.num_workers = 4\n    {call}\n"}



def _own_workers(main: str) -> dict:
    """A project's own parallel wrapper (a class that makes a Worker, which starts a process)
    and its in-process twin, chosen by an if statement on `config.parallel`."""
    return {"envs/parallel.py": "import multiprocessing\n"
                                "class PipeWorker:\n"
                                "    def __init__(self, fn):\n"
                                "        self.proc = multiprocessing.Process(target=fn)\n"
                                "class Worker:\n"
                                "    def __init__(self, fn):\n"
                                "        self.impl = PipeWorker(fn)\n"
                                "class Parallel:\n"
                                "    def __init__(self, env):\n"
                                "        self.worker = Worker(env)\n"
                                "class Local:\n"
                                "    def __init__(self, env):\n"
                                "        self.env = env\n",
            "train.py": "from envs.parallel import Parallel, Local\n"
                        "def main(config):\n"
                        "    envs = [make(i) for i in range(config.envs)]\n"
                        "    if config.parallel:\n"
                        "        envs = [Parallel(env) for env in envs]\n"
                        "        evals = [Parallel(env) for env in evals]\n"
                        "    else:\n"
                        "        envs = [Local(env) for env in envs]\n"
                        "        evals = [Local(env) for env in evals]\n",
            "configs.yaml": main}

class SerialBackend(Rule):
    CODE = "QG106"
    NAME = "serial-backend"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    FIXABLE = True
    MESSAGE = "{backend} runs {count} serially in the calling process{why}"
    RATIONALE = """\
Some backends accept a parallel count but run the work one item after another in the
calling process: SB3 `DummyVecEnv` (and `make_vec_env` without `vec_env_cls`), gymnasium
`SyncVectorEnv`, tianshou `DummyVectorEnv`, torchrl `SerialEnv`, `multiprocessing.dummy`
and thread pools stepping CPU-bound environments under the GIL (not environments that run in
a process of their own, rules/consumers.yaml `service_envs`: CompilerGym, MineRL, Unity ML-Agents,
...), `serial_mode` flags, and CLI
choices whose default is the serial backend. `n_envs: 16` then buys batching, not
parallelism. A backend switch (rules/knobs.yaml `switches`: `vectorize`, `vec_env`, `local_mode`,
`multi_gpu`, `single_process`, ...) configured to its serial value in the same config section
as a count of what it would parallelise (`vectorize: serial` beside `num_envs: 64`) is reported
at the switch. So is a switch the code defines, whatever its name: `SyncVectorEnv if
cfg.env.sync_env else AsyncVectorEnv` (or a helper returning that) makes `sync_env: True` the
serial value, reported where a config sets it beside a count above 1 of what the backend
makes - a count in the same file, else one set by a config that picks this file as a Hydra
group option (`override /env: dmc` for env/dmc.yaml). An if statement whose two branches each
build one (`if cfg.use_subproc: env = SubprocVectorEnv(fns) else: env = DummyVectorEnv(fns)`)
is such a switch too; when a config sets it, the serial branch is judged by the configured
value, not reported in the code. When the switch is a parameter of the function whose default
picks the parallel branch (`def make_envs(..., asynchronous=True)`), the serial branch runs only
when a caller asks for it: not reported (with the serial one as default, it is: at the serial
backend's call, or at the switch when the serial side is a project class, `if single_process:
wrapper = LoopEnvs`). The same for a parser flag of that name whose default picks the parallel
branch (`--no-subproc` with `parser.set_defaults(subproc=True)`, beside `if not args.subproc:
DummyVecEnv(...)`; `set_defaults` wins over the flags' own defaults), and for a class picked
into a variable (`env_cls = AsyncVectorEnv if (use_async_envs and n_envs > 1) else
SyncVectorEnv`) when every flag or settings field of the switch's name defaults to the parallel
side (`use_async_envs: bool = True` in the evaluation config, whatever the helper's own default
says). Joblib's thread backend
(`prefer="threads"`, `backend="threading"`) is a thread pool, not a serial backend; only
`backend="sequential"` runs its jobs one by one.
A branch may build its backend in up to four statements (train and eval envs, each a list
comprehension: `envs = [Parallel(env) for env in envs]`) or pick the class to build further down
(`wrapper = DummyVecEnv`). Either branch may be a project class: the switch holds when one side
starts workers, also through the classes it makes (`Parallel` makes a `Worker`, which makes a
process), and the other is a serial backend or a project class that starts none (a class that
wraps `torch.nn.DataParallel` runs a thread per GPU: catalyst's DataParallelEngine is no serial
twin of its DistributedDataParallelEngine). The count
beside the configured value may be one the vocabulary does not name (`envs: 4`, by its unit),
in any section of the file that does not set the switch itself (a preset with `parallel: True`
runs its own choice).

The project's own backends count too (auditor/flow/backends.py): a class that makes its N
workers or envs in a loop and starts no process, thread or pool is serial, one that starts a
process per item is parallel. A count over 1 handed to the serial one while a class of the
same base or registry runs them in parallel is reported at the call that chose it, and so is
a configured registry name (`manager: {type: base}`) that picks the serial member beside a
count over 1: a warning when that class is seen making its N items in a loop, or when most
configs of the same folder that set the key pick a parallel member (the one on `base` among
ten on `subprocess` is the outlier); a note when the folder agrees (forty CartPole configs on
`base`: cheap environments). A script that builds the serial member by hand
(`BaseEnvManagerV2(env_fn=[...] , cfg=cfg.env.manager)`) while the config module it imports
picks the parallel one is reported at that call: the configured choice never takes effect; so
is an entry function that does so when a config that picks the parallel one runs it
(LightZero's configs end with `train_muzero_with_gym_env([main_config, create_config])`). The
registry may live in an installed framework the scan reads (DI-engine's ENV_MANAGER_REGISTRY
for LightZero): then the project's files that call its classes are parsed once it is read.
A class laid out like a parallel one in a sibling package (`env_package/tool_use/envs.py:
ToolUseEnvs` beside `env_package/alfworld/envs.py:AlfworldEnvs`, which starts a Ray actor per
env: the same module name, class names ending in the same word) counts as its sibling too, but
that is a note, once per class, at the call that hands it a configured count (the other calls
named with it), also when the count is set at run time: one package may step its items on
purpose. A serial class with no parallel sibling is left alone: there is nothing to switch to.
A project's own copy of a library's vector env class (`DummyVecEnv`, `SubprocVecEnv`,
`SyncVectorEnv`, `AsyncVectorEnv`, `DummyVectorEnv`, `SubprocVectorEnv` in a package the
catalogue does not name, as openai baselines, stable-baselines and openrl keep them;
rules/consumers.yaml `vendored`) is taken for the library's backend: serial or parallel as
the library's is. A serial branch under `if num_env == 1 or not use_subprocess:` runs for many
environments too (the other test lets it): it is no guard of one environment.

A serial vector env in a file whose environment ids (`"CartPole-v1"`) are all ones that step in
microseconds (rules/consumers.yaml `light_envs`: gymnasium's classic-control and toy-text
environments) is a note: interprocess traffic costs more than such a step, so in process is the
usual choice there, as SB3's and gymnasium's guides say. Not when the count's flag or field in
that file says its environments run in parallel (help "the number of parallel game
environments"): that promise is broken whatever the step costs. A serial backend chosen in a
function named for debugging (`run_example_debug`, `smoke_test`: `ray.init(..., local_mode=True)`)
is a note: a mode the user runs on purpose.

A pool commented out right above a call of the function it mapped (`# with Pool() as pool:`
`#     pool.starmap(annotate, task_args)`, then `annotate(*task_args[0])`) runs that work in the
calling process: a warning at the call (a note under examples/, docs/).

`--fix` switches DummyVecEnv -> SubprocVecEnv, SyncVectorEnv -> AsyncVectorEnv and adds
`vec_env_cls=SubprocVecEnv` to `make_vec_env(...)`. Thread pools doing I/O, and a serial
backend with a count of 1 (or one asserted to be 1: `assert num_envs == 1`), are fine, and
so is `serial_mode` in front of an environment library that vectorizes by itself (brax,
Isaac Gym, envpool, JAX environments): one sampler worker is the intended setting there.

A parallel backend reached only under `if args.num_workers > 1 and not auto_sparse:`, with an
else branch that does the work itself, drops the user's count whenever the other test fails:
a note at the `if` (the other test may be a mode that cannot be split). So is a call of a
function of the same file under such an `if` (`if args.in_parallel and args.num_threads > 1:
parallel_main(args) else: main(args)`) when that function hands the count to the backend.
Tests of the amount of work or of the machine (`len(items) > 1`, `torch.cuda.is_available()`, the platform) are
reasons a user can see, and are not reported.

A script that sets a count (`args.num_workers = 4`) and then runs a path on which nothing reads
it (`train_agent(args)`, the single-process trainer, while only `train_agent_multiprocessing()`
reads num_workers; the other call commented out or behind `if_single_process = True`) starts no
worker: a warning at the write, from the project's call graph (a method called on an object of
unknown class reaches every project method of that name). A note when the path passes through
files the scan did not read (they hold no knob word, but may call one that reads it)."""
    VALID = [
        Example({"parallelizer.py": "import contextvars\nfrom concurrent.futures import ThreadPoolExecutor\n"
                                    "overrides = contextvars.ContextVar('overrides', default={})\n"
                                    "class ParallelExecutor:\n"
                                    "    def __init__(self, num_threads=8):\n        self.num_threads = num_threads\n"
                                    "    def execute(self, function, items):\n"
                                    "        def worker(item):\n"
                                    "            token = overrides.set({})\n"
                                    "            try:\n                return function(item)\n"
                                    "            finally:\n                overrides.reset(token)\n"
                                    "        with ThreadPoolExecutor(max_workers=self.num_threads) as pool:\n"
                                    "            return list(pool.map(worker, items))\n"},
                "a thread pool whose task resets a context variable (`ContextVar.reset`, no env's reset): "
                "not an env-stepping pool"),
        Example({"conf/eval.yaml": "eval:\n  num_procs: 20\n  n_eval: 20\n",
                 "metric.py": "from tianshou.env import DummyVectorEnv, SubprocVectorEnv\n"
                              "def evaluate(cfg, make):\n"
                              "    env_num = min(cfg.eval.num_procs, cfg.eval.n_eval)\n"
                              "    if env_num == 1:\n"
                              "        env = DummyVectorEnv([make for _ in range(env_num)])\n"
                              "    else:\n"
                              "        env = SubprocVectorEnv([make for _ in range(env_num)])\n"
                              "    return env\n"},
                "the serial twin only when the list it is given holds one env (`range(env_num)` under "
                "`if env_num == 1:`)"),
        Example({"configs.py": "from dataclasses import dataclass\nimport gymnasium as gym\n"
                               "@dataclass\nclass EvalConfig:\n    batch_size: int = 8\n    use_async_envs: bool = True\n"
                               "def create_envs(make, n_envs, use_async_envs=False):\n"
                               "    env_cls = gym.vector.AsyncVectorEnv if (use_async_envs and n_envs > 1) "
                               "else gym.vector.SyncVectorEnv\n"
                               "    return env_cls([make for _ in range(n_envs)])\n"},
                "a vector class picked into a variable by a switch whose settings field defaults to the parallel side"),
        Example({"engines/torch.py": "import torch\nimport torch.multiprocessing as mp\n"
                                     "class DataParallelEngine:\n"
                                     "    def prepare(self, model):\n"
                                     "        return torch.nn.DataParallel(model)\n"
                                     "class DistributedDataParallelEngine:\n"
                                     "    def spawn(self, fn, num_workers):\n"
                                     "        mp.spawn(fn, nprocs=num_workers)\n",
                 "utils/torch.py": "from engines.torch import DataParallelEngine, DistributedDataParallelEngine\n"
                                   "def get_available_engine(ddp=False, world_size=None):\n"
                                   "    if ddp:\n        return DistributedDataParallelEngine()\n"
                                   "    else:\n        return DataParallelEngine()\n"},
                "torch.nn.DataParallel runs a thread per GPU: catalyst's two engines are both parallel"),
        Example({"eval_caption.py": "from multiprocessing import Pool\n"
                                    "def annotate(preds, part, out):\n    return len(part)\n"
                                    "def main(preds, task_args):\n"
                                    "    # annotate(*task_args[0])\n"
                                    "    with Pool() as pool:\n"
                                    "        pool.starmap(annotate, task_args)\n"},
                "the serial call is the one commented out; the pool runs"),
        Example({"eval/score.py": "import argparse\nfrom joblib import Parallel, delayed\n"
                                  "def main():\n"
                                  "    p = argparse.ArgumentParser()\n"
                                  "    p.add_argument('--n_jobs', type=int, default=4)\n"
                                  "    args = p.parse_args()\n"
                                  "    return Parallel(n_jobs=args.n_jobs, prefer='threads')(delayed(len)(x) for x in 'ab')\n"},
                "joblib's threads run in parallel, as a thread pool does"),
        Example({"venv_demo.py": _SUBPROC_DEMO.format(default=True)},
                "the serial branch of a flag whose default (set_defaults) picks the parallel one"),
        Example(_task(False), "a parameter whose default picks the project's process-per-env class"),
        Example({"data/sets.py": "import multiprocessing\n"
                                 "class Writer:\n"
                                 "    def __init__(self):\n"
                                 "        self.proc = multiprocessing.Process(target=self.flush)\n"
                                 "class Recorded:\n"
                                 "    def __init__(self, root):\n"
                                 "        self.writer = Writer()\n"
                                 "class Streamed:\n"
                                 "    def __init__(self, root):\n"
                                 "        self.root = root\n",
                 "train.py": "from torch.utils.data import DataLoader\nfrom data.sets import Recorded, Streamed\n"
                             "def build(cfg):\n"
                             "    if cfg.streaming:\n"
                             "        data = Streamed(cfg.root)\n"
                             "    else:\n"
                             "        data = Recorded(cfg.root)\n"
                             "    return DataLoader(data, num_workers=cfg.num_workers)\n",
                 "config.yaml": "streaming: true\nnum_workers: 4\n"},
                "two datasets, one with a background writer process: no backend switch of a count"),
        Example(_own_workers("defaults:\n  parallel: False\n  envs: 1\nbig:\n  parallel: True\n  envs: 16\n"),
                "the project's own switch: the preset with 16 envs picks the parallel class itself"),
        Example({**_VENDORED, "mylib/cmd_util.py": "from mylib.vec_env import DummyVecEnv, SubprocVecEnv\n"
                                                    "def make_env(make_one, num_env):\n"
                                                    "    if num_env == 1:\n"
                                                    "        return DummyVecEnv([make_one])\n"
                                                    "    return SubprocVecEnv([make_one for _ in range(num_env)])\n"},
                "the project's own DummyVecEnv only for one environment"),
        Example({**_VENDORED, "mylib/cmd_util.py": "from mylib.vec_env import DummyVecEnv, SubprocVecEnv\n"
                                                    "def make_vec_env(make_one, num_env, force_dummy=False):\n"
                                                    "    if not force_dummy and num_env > 1:\n"
                                                    "        return SubprocVecEnv([make_one for _ in range(num_env)])\n"
                                                    "    else:\n"
                                                    "        return DummyVecEnv([make_one for _ in range(num_env)])\n"},
                "the serial copy for one environment, or when the caller forces it (force_dummy=False by default)"),
        Example({**_VENDORED, "mylib/train.py": "from mylib.vec_env import DummyVecEnv\n"
                                                "def train(env, num_envs=8):\n"
                                                "    return DummyVecEnv(env), num_envs\n"},
                "a class of the vendored name that wraps one environment: no copy of the library's"),
        Example({"envs.py": "from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv\n"
                            "def make_envs(env_fn, num_envs=8, asynchronous=True):\n"
                            "    fns = [env_fn for _ in range(num_envs)]\n"
                            "    if asynchronous:\n"
                            "        envs = AsyncVectorEnv(fns)\n"
                            "    else:\n"
                            "        envs = SyncVectorEnv(fns)\n"
                            "    return envs\n"},
                "the serial branch of a flag whose default is the parallel one: the caller asks for it"),
        Example(_trainers("train_agent_multiprocessing(args)"),
                "the script's path reaches the function that reads the count"),
        Example({"annotate.py": "from concurrent.futures import ProcessPoolExecutor\n"
                                "def main(args, episodes):\n"
                                "    if args.num_workers > 1 and len(episodes) > 1:\n"
                                "        with ProcessPoolExecutor(max_workers=args.num_workers) as ex:\n"
                                "            return list(ex.map(annotate, episodes))\n"
                                "    else:\n"
                                "        return [annotate(e) for e in episodes]\n"},
                "the parallel path is skipped only for a single item of work"),
        Example({"conf/env.yaml": "num_envs: 1\nsync_env: True\n",
                 "envs.py": "import gymnasium as gym\n"
                            "def make(cfg, fns):\n"
                            "    cls = gym.vector.SyncVectorEnv if cfg.sync_env else gym.vector.AsyncVectorEnv\n"
                            "    return cls(fns)\n"},
                "the serial value of a code-defined switch with one env: nothing lost"),
        Example({"train.py": "from stable_baselines3.common.env_util import make_vec_env\n"
                             "from stable_baselines3.common.vec_env import SubprocVecEnv\n"
                             "env = make_vec_env('CartPole-v1', n_envs=args.n_envs, vec_env_cls=SubprocVecEnv)\n"},
                "make_vec_env with a subprocess vector env"),
        Example({"eval.py": "from stable_baselines3.common.vec_env import DummyVecEnv\n"
                            "env = DummyVecEnv([make_env])\n"}, "one environment: serial is fine"),
        Example({"io.py": "from concurrent.futures import ThreadPoolExecutor\n"
                          "pool = ThreadPoolExecutor(max_workers=args.num_workers)\n"
                          "pool.map(upload, files)\n"}, "an I/O thread pool"),
        Example({"launch.py": "import subprocess\nfrom concurrent.futures import ThreadPoolExecutor\n"
                              "def start(i):\n    return subprocess.Popen(['sampler', str(i)])\n"
                              "with ThreadPoolExecutor(max_workers=args.num_workers) as pool:\n"
                              "    procs = list(pool.map(start, range(args.num_workers)))\n"},
                "a thread pool that only starts processes"),
        Example({"analysis.py": "import compiler_gym\nfrom concurrent.futures import ThreadPoolExecutor\n"
                                "def rewards(benchmark):\n"
                                "    with compiler_gym.make('llvm-v0', benchmark=benchmark) as env:\n"
                                "        env.reset()\n        return env.step(env.action_space.sample())\n"
                                "with ThreadPoolExecutor(max_workers=args.nproc) as pool:\n"
                                "    results = list(pool.map(rewards, benchmarks))\n"},
                "a thread pool stepping environments that run in a process of their own (a compiler "
                "service): the threads wait on it (rules/consumers.yaml service_envs)"),
        Example({"play.py": "import gymnasium as gym\n"
                            "def make(num_envs):\n"
                            "    assert num_envs == 1, 'rendering needs one env'\n"
                            "    return gym.vector.SyncVectorEnv([make_env for _ in range(num_envs)])\n"},
                "a serial vector env right after `assert num_envs == 1`"),
        Example({"train_brax.py": "import brax.envs\n"
                                  "def override_defaults(parser):\n"
                                  "    parser.set_defaults(\n"
                                  "        num_workers=1,\n"
                                  "        serial_mode=True,\n"
                                  "    )\n",
                 "envpool/params.py": "def defaults(parser):\n"
                                      "    parser.set_defaults(serial_mode=True, num_envs_per_worker=1)\n"},
                "serial_mode for an environment that vectorizes itself (brax, envpool, Isaac Gym)"),
        Example({"utils.py": "import gymnasium as gym\n"
                             "def make_vect_envs(make_env, num_envs=1, should_async_vector=True):\n"
                             "    vectorize = gym.vector.AsyncVectorEnv if should_async_vector else gym.vector.SyncVectorEnv\n"
                             "    return vectorize([make_env for _ in range(num_envs)])\n"},
                "serial only when the caller asks for it: the flag defaults to the parallel backend"),
        Example({"envs.py": "from torchrl.envs import ParallelEnv, SerialEnv\n"
                            "def batched(env_fn, num_workers, batched_env_type='parallel'):\n"
                            "    if batched_env_type == 'parallel':\n"
                            "        return ParallelEnv(num_workers, env_fn)\n"
                            "    elif batched_env_type == 'serial':\n"
                            "        return SerialEnv(num_workers, env_fn)\n"},
                "the serial backend in the branch where the user named it"),
        Example({"conf/walker.yaml": "num_envs: 16\nuse_subproc_vector_env: true\n",
                 "env.py": _IF_SWITCH},
                "the serial branch of a switch the config sets to the parallel value"),
        Example({"envs.py": "from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv\n"
                            "def make_vec_envs(make_env, num_processes):\n"
                            "    envs = [make_env(i) for i in range(num_processes)]\n"
                            "    if len(envs) > 1:\n"
                            "        envs = SubprocVecEnv(envs)\n"
                            "    else:\n"
                            "        envs = DummyVecEnv(envs)\n"
                            "    return envs\n"},
                "the serial backend only for a single env (the else of `len(envs) > 1`)"),
        Example({"env.py": "from tianshou.env import DummyVectorEnv, SubprocVectorEnv\n"
                           "def create(kind, factories):\n"
                           "    match kind:\n"
                           "        case VectorEnvType.DUMMY:\n"
                           "            return DummyVectorEnv(factories)\n"
                           "        case VectorEnvType.SUBPROC:\n"
                           "            return SubprocVectorEnv(factories)\n"},
                "a match case that names the serial choice"),
        Example({**_SAMPLERS, "evaluate.py": "from rl.sampler import LocalSampler\n"
                                             "def evaluate(make_env):\n"
                                             "    return LocalSampler(make_env, n_workers=1)\n"},
                "the project's serial sampler with one worker"),
        Example({"rl/sampler.py": "class LocalSampler:\n"
                                  "    def __init__(self, make_env, n_workers=1):\n"
                                  "        self.workers = [make_env(i) for i in range(n_workers)]\n",
                 "train.py": "import argparse\nfrom rl.sampler import LocalSampler\n"
                             "p = argparse.ArgumentParser()\np.add_argument('--n-workers', type=int, default=8)\n"
                             "args = p.parse_args()\nsampler = LocalSampler(make_env, n_workers=args.n_workers)\n"},
                "a serial class with no parallel sibling: nothing to switch to"),
        Example({**_MANAGERS, "configs/pong.py": "main_config = dict(env=dict(collector_env_num=8, "
                                                 "manager=dict(type='subprocess')))\n"},
                "a config that names the registry's parallel member"),
        Example({**_MANAGERS, "configs/eval.py": "main_config = dict(num_gpus=8, env=dict(manager=dict(type='base')))\n"},
                "the serial member beside a count of something else (GPUs, not envs)"),
        Example({**_SAMPLERS, "mt10.py": "from rl.sampler import LocalSampler\n"
                                         "def train(make_env):\n"
                                         "    meta_batch_size = 10\n"
                                         "    return LocalSampler(make_env, n_workers=meta_batch_size)\n"},
                "a count the script fixes itself: no user setting is lost"),
        Example({**_LEN_MANAGERS, "configs/hopper.py": _pick("subprocess"),
                 "debug.py": "from rl.managers import BaseEnvManager\n"
                             "envs = BaseEnvManager([make_env for _ in range(8)])\n"},
                "the serial manager built by a script that loads no config picking another"),
    ]
    INVALID = [
        Example({"configs.py": "from dataclasses import dataclass\nimport gymnasium as gym\n"
                               "@dataclass\nclass EvalConfig:\n    batch_size: int = 8\n    use_async_envs: bool = False\n"
                               "def create_envs(make, n_envs, use_async_envs=False):\n"
                               "    env_cls = gym.vector.AsyncVectorEnv if (use_async_envs and n_envs > 1) "
                               "else gym.vector.SyncVectorEnv\n"
                               "    return env_cls([make for _ in range(n_envs)])\n"},
                "a vector class picked into a variable by a switch whose settings field defaults to the serial side",
                expect=[("configs.py", 9)]),
        Example({"examples/instrument.py": "import ray\n"
                                          "def run_example_debug(args):\n"
                                          "    ray.init(num_cpus=args.cpus, num_gpus=args.gpus, local_mode=True)\n"},
                "Ray's local mode in a function named for debugging: a note", expect=[("examples/instrument.py", 3)],
                severity="note"),
        Example({"venv_demo.py": _SUBPROC_DEMO.format(default=False)},
                "a flag whose default (set_defaults, over the flags' own) picks the serial branch",
                expect=[("venv_demo.py", 10)]),
        Example({"eval_caption.py": "from multiprocessing import Pool\n"
                                    "def annotate(preds, part, out):\n    return len(part)\n"
                                    "def main(args, preds, files):\n"
                                    "    part_len = len(files) // args.num_workers\n"
                                    "    task_args = [(preds, files[i:i + part_len], 'out') for i in range(0, len(files), part_len)]\n"
                                    "    # Use a pool of workers to process the files in parallel.\n"
                                    "    # with Pool() as pool:\n"
                                    "        # pool.starmap(annotate, task_args)\n"
                                    "    annotate(*task_args[0])\n"},
                "a pool commented out, and the function it mapped called in the calling process",
                expect=[("eval_caption.py", 10)], severity="warning"),
        Example(_task(True), "a parameter whose default picks the project's in-process class",
                expect=[("mylib/envs.py", 11)]),
        Example(_own_workers("defaults:\n  parallel: False\n  envs: 1\ndmc:\n  envs: 4\n"),
                "the project's own classes make the switch (Parallel starts a process through Worker); "
                "the preset with 4 envs inherits parallel: False", expect=[("configs.yaml", 2)]),
        Example(_light("HalfCheetah-v4"), "a serial vector env of 8 environments that step in milliseconds",
                expect=[("train.py", 8)], severity="warning"),
        Example(_light("CartPole-v1"), "a serial vector env of 8 CartPole environments, in process on purpose "
                                       "as a rule: a note", expect=[("train.py", 8)], severity="note"),
        Example(_light("CartPole-v1", "the number of parallel game environments"),
                "a serial vector env of CartPole environments whose count's help promises parallel ones",
                expect=[("train.py", 8)], severity="warning"),
        Example(_trainers("train_agent(args)"),
                "a script sets a count and runs a path on which nothing reads it", expect=[("demo.py", 3)]),
        Example({"annotate.py": "from concurrent.futures import ProcessPoolExecutor\n"
                                "def main(args, episodes):\n"
                                "    auto_sparse = args.sparse_subtasks is None\n"
                                "    if args.num_workers > 1 and not auto_sparse:\n"
                                "        with ProcessPoolExecutor(max_workers=args.num_workers) as ex:\n"
                                "            return list(ex.map(annotate, episodes))\n"
                                "    else:\n"
                                "        return [annotate(e) for e in episodes]\n"},
                "the user's count reaches the pool only when an unrelated test holds too (a note at the if)",
                expect=[("annotate.py", 4)], severity="note"),
        Example({"gen.py": "import argparse\nimport multiprocessing as mp\n"
                           "def main(args):\n    return args.seed\n"
                           "def parallel_main(args):\n"
                           "    procs = [mp.Process(target=main, args=(args,)) for _ in range(args.num_threads)]\n"
                           "    return procs\n"
                           "if __name__ == '__main__':\n"
                           "    p = argparse.ArgumentParser()\n"
                           "    p.add_argument('--in_parallel', action='store_true')\n"
                           "    p.add_argument('-n', '--num_threads', type=int, default=0)\n"
                           "    p.add_argument('--seed', type=int, default=0)\n"
                           "    parse_args = p.parse_args()\n"
                           "    if parse_args.in_parallel and parse_args.num_threads > 1:\n"
                           "        parallel_main(parse_args)\n"
                           "    else:\n"
                           "        main(parse_args)\n"},
                "the function that starts the processes is called only when an unrelated switch holds too",
                expect=[("gen.py", 14)], severity="note"),
        Example({"configs/car_racing.yaml": "vec:\n  vectorize: serial\n  num_envs: 64\n  num_workers: 8\n",
                 "train.py": "def make(cfg):\n    return build(cfg['vec']['vectorize'], cfg['vec']['num_envs'])\n"},
                "a switch set to its serial value beside the count it makes pointless",
                expect=[("configs/car_racing.yaml", 2)]),
        Example({"conf.yaml": "n_envs: 16\n",
                 "train.py": "from stable_baselines3.common.env_util import make_vec_env\n"
                             "env = make_vec_env('CartPole-v1', n_envs=cfg['n_envs'])\n"},
                "make_vec_env without vec_env_cls", expect=[("train.py", 2)]),
        Example({"train.py": "import gymnasium as gym\n"
                             "envs = gym.vector.SyncVectorEnv([make_env for _ in range(args.num_envs)])\n"},
                "SyncVectorEnv with a configured count", expect=[("train.py", 2)]),
        Example({"conf/env.yaml": "num_envs: 8\nsync_env: True\n",
                 "envs.py": "import gymnasium as gym\n"
                            "def make(cfg, fns):\n"
                            "    cls = gym.vector.SyncVectorEnv if cfg.sync_env else gym.vector.AsyncVectorEnv\n"
                            "    return cls(fns)\n"},
                "a config sets the value the code's own switch runs serially, beside 8 envs",
                expect=[("conf/env.yaml", 2)]),
        Example({"conf/d4rl.yaml": "num_envs: 16\nuse_subproc_vector_env: false\n",
                 "env.py": _IF_SWITCH},
                "an if statement's two branches make the switch; the config picks the serial one",
                expect=[("conf/d4rl.yaml", 2)]),
        Example({"sampler.py": "from concurrent.futures import ThreadPoolExecutor\n"
                               "def step_one(env):\n    return env.step(env.action_space.sample())\n"
                               "pool = ThreadPoolExecutor(max_workers=args.num_envs)\n"
                               "results = list(pool.map(step_one, envs))\n"},
                "a thread pool stepping CPU-bound environments under the GIL", expect=[("sampler.py", 4)]),
        Example({"train.py": "import argparse\np = argparse.ArgumentParser()\n"
                             "p.add_argument('--vec-env', choices=['dummy', 'subproc'], default='dummy')\n"
                             "p.add_argument('--n-envs', type=int, default=8)\n"},
                "a CLI choice whose default is the serial backend", expect=[("train.py", 3)]),
        Example({"train_atari.py": "def override_defaults(parser):\n"
                                   "    parser.set_defaults(\n"
                                   "        num_workers=8,\n"
                                   "        serial_mode=True,\n"
                                   "    )\n"},
                "serial_mode set among parser defaults: reported at the keyword", expect=[("train_atari.py", 4)]),
        Example({"factory.py": "import gymnasium as gym\n"
                               "def make_env(make_one, n_envs=1, use_async_envs=False):\n"
                               "    env_cls = gym.vector.AsyncVectorEnv if use_async_envs else gym.vector.SyncVectorEnv\n"
                               "    return env_cls([make_one for _ in range(n_envs)])\n"},
                "a backend switch whose default is the serial one", expect=[("factory.py", 4)]),
        Example({**_VENDORED, "mylib/cmd_util.py": "from mylib.vec_env import DummyVecEnv, SubprocVecEnv\n"
                                                    "def make_atari_env(make_one, num_env, use_subprocess=False):\n"
                                                    "    if num_env == 1 or not use_subprocess:\n"
                                                    "        return DummyVecEnv([make_one for _ in range(num_env)])\n"
                                                    "    return SubprocVecEnv([make_one for _ in range(num_env)])\n"},
                "the project's own copy of DummyVecEnv, by default also for many environments",
                expect=[("mylib/cmd_util.py", 4)]),
        Example({**_VENDORED, "mylib/make.py": "from mylib.vector import AsyncVectorEnv, SyncVectorEnv\n"
                                               "def make(env_fns, asynchronous=False):\n"
                                               "    if asynchronous:\n"
                                               "        return AsyncVectorEnv(env_fns)\n"
                                               "    else:\n"
                                               "        return SyncVectorEnv(env_fns)\n"},
                "the project's own SyncVectorEnv, chosen by a switch parameter whose default is serial",
                expect=[("mylib/make.py", 6)]),
        Example({**_SAMPLERS, "train.py": "import argparse\nfrom rl.sampler import LocalSampler\n"
                                          "p = argparse.ArgumentParser()\n"
                                          "p.add_argument('--n-workers', type=int, default=8)\n"
                                          "args = p.parse_args()\n"
                                          "sampler = LocalSampler(make_env, n_workers=args.n_workers)\n"},
                "8 workers handed to the project's in-process sampler while ProcessSampler exists",
                expect=[("train.py", 6)]),
        Example({**_MANAGERS, "configs/pong.py": "main_config = dict(env=dict(collector_env_num=8, "
                                                 "manager=dict(type='base')))\n"},
                "a registry name that picks the serial env manager beside 8 envs", expect=[("configs/pong.py", 1)]),
        Example({**_PACKAGES, "manager.py": "from envs.tool_use.envs import ToolUseEnvs\n"
                                            "def build(config):\n"
                                            "    return ToolUseEnvs(env_num=config.data.train_batch_size)\n"
                                            "def build_val(config):\n"
                                            "    return ToolUseEnvs(env_num=config.data.val_batch_size)\n"},
                "a package's env class steps its envs in a loop while its sibling package's starts an actor "
                "per env: one note, at the first call", expect=[("manager.py", 3)], severity="note"),
        Example({**_LEN_MANAGERS, "configs/hopper.py": _pick("subprocess"), "configs/ant.py": _pick("subprocess"),
                 "configs/walker.py": _pick("base")},
                "the one config of its folder that picks the serial manager where the others pick the parallel "
                "one: a warning", expect=[("configs/walker.py", 1)], severity="warning"),
        Example({**_LEN_MANAGERS, "configs/cartpole.py": _pick("base"), "configs/pendulum.py": _pick("base"),
                 "configs/acrobot.py": _pick("base")},
                "a serial manager that only starts nothing, the folder's own choice for cheap envs: a note",
                expect=[("configs/cartpole.py", 1)], severity="note"),
        Example({**_LEN_MANAGERS, "configs/hopper.py": _pick("subprocess"),
                 "train.py": "from rl.managers import BaseEnvManager\n"
                             "from configs.hopper import main_config\n"
                             "cfg = main_config\n"
                             "envs = BaseEnvManager([make_env for _ in range(cfg['env']['collector_env_num'])])\n"},
                "a script that builds the serial manager by hand for a config that picks the parallel one",
                expect=[("train.py", 4)], severity="warning"),
        Example({**_LEN_MANAGERS,
                 "rl/entry.py": "from rl.managers import BaseEnvManager\n"
                                "def train_with_gym_env(input_cfg, make_env):\n"
                                "    main_config = input_cfg[0]\n"
                                "    n = main_config['env']['collector_env_num']\n"
                                "    return BaseEnvManager([make_env for _ in range(n)])\n",
                 "configs/hopper.py": _pick("subprocess") + "if __name__ == '__main__':\n"
                                                           "    from rl.entry import train_with_gym_env\n"
                                                           "    train_with_gym_env([main_config], make_env)\n"},
                "an entry function that builds the serial manager by hand, run by a config that picks the "
                "parallel one (LightZero's train_muzero_with_gym_env)", expect=[("rl/entry.py", 5)],
                severity="warning"),
    ]

    def check(self, result):
        seen = set()
        knob_of = {id(s): k for k in result.knobs for s in k.sites}
        switch_defines = [s for s in result.sites if s.role == "define" and isinstance(s.value, bool)]
        for site in result.sites:
            if site.role != "consume" or (site.detail.get("via") == "helper" and not site.detail.get("library")) or (
                    site.kind != "python" and site.detail.get("via") != "_target_"):
                continue  # a helper's caller (auditor.flow): the backend's own call is reported where it is
                # (unless that call is inside an installed framework: then here, where the project calls it)
            if site.detail.get("project_backend"):
                continue  # reported where a caller chose the project's serial class (_project_backends)
            entry = backend_entry(site)
            serial = site.detail.get("serial", entry.get("serial"))
            if serial is not True:
                continue
            counts = {c.get("param") for c in entry.get("counts", [])}
            if counts and site.detail.get("param") not in counts:
                continue  # the selector's own site (vec_env_cls=...): the count's site reports the call
            if backend_kind(site) == "threads" and not steps_envs(site):
                continue  # thread pools for I/O, or for starting processes, are fine
            if site.detail.get("omitted") and site.detail.get("via") != "helper" and backend_kind(site) == "cluster":
                continue  # `ray.init(local_mode=True)`: no count given, none that runs serially
            n, text = _count(site)
            knob = knob_of.get(id(site))
            if n is None and knob is not None and site.match != "name" and isinstance(knob.effective, int) and not isinstance(
                    knob.effective, bool) and any(is_config_define(s) for s in knob.sites):
                n = knob.effective
                text = f"{text} (= {n} as configured)"
            if n is not None and n <= 1 or idioms.is_guarded_single(site) or idioms.serial_only_on_request(site):
                continue  # one environment, or asserted to be one: serial is fine
            if _configured_switch(site, result.meta, switch_defines):
                continue  # a branch of a switch some config sets: judged there (_switches_in_code)
            if _variable_switch_on(site, switch_defines):
                continue  # `env_cls = Async if use_async_envs else Sync` with the setting on by default
            key = (site.file, site.line, site.detail.get("backend"))
            if key in seen:
                continue
            seen.add(key)
            default = ", ".join(f"{k}={show(v)}" for k, v in (site.detail.get("choice_default") or {}).items())
            light = _light_envs(site, result.meta) if backend_kind(site) == "envs" \
                and not _promised_parallel(knob, site) else None
            debugging = idioms.is_debug_function(site.detail.get("function"))
            yield self.finding(site, knob=site.key, related=[site], backend=_short(site.detail.get("backend", "")),
                               count=f"{text} {'environments' if backend_kind(site) == 'envs' else 'workers'}",
                               why=_why(site, entry) + (f"; the default {default} picks it for every caller that "
                                                        f"leaves it out" if default else "") + (
                                   f" (this file's environments, {_names(light)}, step in microseconds: in "
                                   f"process is usually faster for them)" if light else "") + (
                                   " (in a function named for debugging, a mode the user chose)" if debugging else ""),
                               **({"severity": "note", "confidence": "medium"} if light or debugging else {}))
        yield from self._config_flags(result)
        yield from self._serial_defaults(result)
        yield from self._gated_parallel(result)
        yield from self._unread_on_the_path(result)
        yield from self._project_backends(result, knob_of)
        yield from self._registry_choices(result)
        yield from self._hand_built_members(result)
        yield from self._commented_pool(result)

    def _commented_pool(self, result):
        """`# with Pool() as pool:` `#     pool.starmap(annotate, task_args)` and then
        `annotate(*task_args[0])`: the pool is commented out and the function it mapped runs in
        the calling process (auditor/extract/py_commented.py)."""
        for rel, fact in commented_out(result, "serial"):
            lines = f"line {fact['comment_line']}" if fact["comment_line"] == fact["last_line"] \
                else f"lines {fact['comment_line']}-{fact['last_line']}"
            yield self.finding(None, file=rel, line=fact["line"], column=fact["column"],
                               knob=_short(fact["function"]), related=[],
                               backend=f"`{fact['live']}`", count=f"the work of {_short(fact['function'])}()",
                               why=f": the {_short(fact['backend'])} that mapped {_short(fact['function'])}() "
                                   f"({lines}) is commented out",
                               **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))

    def _serial_defaults(self, result):
        """`def __init__(self, name, num_envs=1, single_process=True): if single_process: Wrapper
        = DummyVecEnv else: Wrapper = SubprocVecEnv`, where DummyVecEnv is the project's own
        class: every caller that leaves the parameter out steps its envs serially. (A catalogued
        serial backend built there is reported at its own call, which says the same.)"""
        for rel, m in sorted(result.meta.items()):
            if not isinstance(m, dict) or is_test_file(rel) or in_examples(rel):
                continue
            for fact in m.get("switches") or ():
                if not fact.get("serial_project") or fact.get("param_default") is None \
                        or fact["param_default"] != fact["serial_when"]:
                    continue
                owner = str(fact.get("function") or "")
                yield self.finding(None, file=rel, line=fact["line"], column=fact["col"], knob=fact["leaf"],
                                   related=[], backend=_short(fact["serial"]),
                                   count=f"the {fact['kind'] if fact['kind'] in ('envs', 'workers') else 'workers'}"
                                         f" of every {callable_name(owner)}() call that leaves `{fact['leaf']}` out",
                                   why=f": `{fact['leaf']}` defaults to {show(fact['param_default'])} in {owner}(), "
                                       f"which picks {_short(fact['serial'])}; {_short(fact['parallel'])} runs "
                                       f"them in parallel only for a caller that passes "
                                       f"{fact['leaf']}={show(not fact['param_default'])}")

    def _gated_parallel(self, result):
        """`if args.num_workers > 1 and not auto_sparse: ProcessPoolExecutor(args.num_workers)
        ... else: # sequential`: the user's count reaches the pool only when another test holds
        too; when it does not, the else branch runs the work serially and says nothing. A note
        at the `if`: the other test may be deliberate (a mode that cannot be split)."""
        seen = set()
        # `if args.in_parallel and args.num_threads > 1: parallel_main(args) else: main(args)`,
        # where parallel_main() of the same file starts the pool: the call's gate is the pool's
        called: dict[tuple[str, str], list[dict]] = {}
        for rel, m in result.meta.items():
            for call in (m.get("gated_calls") or ()) if isinstance(m, dict) else ():
                called.setdefault((rel, call["callee"]), []).append(call)
        for site in result.sites:
            d = site.detail
            if site.role != "consume" or site.kind != "python" or d.get("serial") \
                    or d.get("literal") or is_test_file(site.file):
                continue
            flow = d.get("flow") or ()
            expr = str(d.get("expr") or "")
            if not flow or flow[0].get("kind") != "config" or not expr:
                continue  # a count the user sets (a flag, a config key), not one the code computes
            for gate in [d["gate"]] if d.get("gate") else called.get((site.file, str(d.get("function"))), ()):
                # (through a call, the count is the caller's: `parse_args.num_threads` for `args.num_threads`)
                written = expr if d.get("gate") else re.compile(rf"\b{re.escape(expr.rsplit('.', 1)[-1])}\b")
                tests = [c for c in gate["conjuncts"] if _mentions(c, written)]
                others = [c for c in gate["conjuncts"] if not _mentions(c, written) and not _ENOUGH_WORK.search(c)]
                if tests and others and any(op in t for t in tests for op in (">", "!=")) \
                        and (site.file, gate["line"]) not in seen:
                    break
            else:
                continue
            seen.add((site.file, gate["line"]))
            other = " and ".join(others)
            yield self.finding(None, file=site.file, line=gate["line"], column=gate["column"], knob=site.key,
                               related=[site], flow=flow,
                               backend=f"The else branch of this `if` (line {gate['else_line']})",
                               count=f"the work meant for {expr} workers",
                               why=f": {_short(d.get('backend', ''))} (line {site.line}"
                                   + ("" if d.get("gate") else f", in {gate['callee']}(), which this `if` calls")
                                   + f") gets {expr} only when "
                                   f"`{other}` holds too, so otherwise the user's {expr} is dropped without a word",
                               severity="note", confidence="medium")

    def _unread_on_the_path(self, result):
        """`args.num_workers = 4` in a script whose function then calls `train_agent(args)`, the
        single-process trainer, while only `train_agent_multiprocessing()` reads num_workers (the
        call to it commented out, or behind `if_single_process = True`): nothing on the path the
        script runs reads the count, so no worker starts. From the project's call graph
        (auditor/flow/graph.py); quiet when the count is read on the path or nowhere at all
        (QG101's case)."""
        from auditor.flow.graph import for_result

        writes = [s for s in result.sites if s.role == "override" and s.kind == "python"
                  and s.detail.get("how") == "literal" and isinstance(s.value, int) and not isinstance(s.value, bool)
                  and s.value > 1 and not is_test_file(s.file) and not s.detail.get("returned")
                  and idioms.is_config_name(str(s.detail.get("target") or "").split(".", 1)[0])
                  and str(s.detail.get("target") or "").count(".") == 1]
        if not writes:
            return
        graph = for_result(result)
        readers: dict[str, list] = {}  # leaf -> the read / consume sites of it
        for s in result.sites:
            if s.role in ("read", "consume") and s.kind == "python" and not is_test_file(s.file):
                readers.setdefault(s.leaf.lower(), []).append(s)
        for site in writes:
            leaf = site.leaf.lower()
            reads = [r for r in readers.get(leaf, ()) if (r.file, r.line) != (site.file, site.line)]
            start = graph.of(site.file, site.detail.get("function") or "<module>")
            if not reads or start is None:
                continue
            walk = graph.reachable(start)
            if walk is None:
                continue
            reached, unknown = walk
            if any(graph.of(r.file, r.detail.get("function") or "<module>") in reached for r in reads):
                continue
            first = reads[0]
            fn = site.detail.get("function") or "<module>"
            # code of files the scan did not read (no knob word in them) may still call a reader:
            # then a note that names them
            unread = (f" ({len(set(unknown))} project names on the path lie in files the scan did not read, "
                      f"e.g. {sorted(set(unknown))[0]})") if unknown else ""
            yield self.finding(site, knob=site.key, related=[site, first],
                               backend=f"{fn}()",
                               count=f"the {site.detail.get('target')} = {site.value} workers",
                               why=f": nothing it calls reads {site.leaf}; only {first.detail.get('function')}() "
                                   f"({where(first)}) does, and it is not called from here, so no worker starts"
                                   + unread,
                               flow=[{"file": site.file, "line": site.line, "column": site.column, "kind": "define",
                                      "role": "source", "key": site.key, "value": site.value, "text": site.source}],
                               **({"severity": "note", "confidence": "medium"} if unknown else {}))

    def _project_backends(self, result, knob_of):
        """A count over 1 passed to one of the project's own serial classes (auditor.flow.backends)
        while a sibling class of the same base or registry runs them in parallel. A sibling only by
        layout (the same module name in a sibling package) makes one note per class, at the call
        that takes a configured count (the others related)."""
        by_layout: dict[str, list] = {}
        for finding, site in self._project_backend_calls(result, knob_of):
            if site.detail.get("layout_siblings"):
                by_layout.setdefault(site.detail["backend"], []).append((finding, site))
            else:
                yield finding
        for calls in by_layout.values():
            calls.sort(key=lambda fs: ((fs[1].detail.get("flow") or [{}])[0].get("kind") != "config",
                                       fs[1].file, fs[1].line))
            finding = calls[0][0]
            finding.related = [*finding.related, *(s for _f, s in calls[1:MAX_RELATED])]
            yield finding

    def _project_backend_calls(self, result, knob_of):
        for site in result.sites:
            d = site.detail
            if site.role != "consume" or not d.get("project_backend") or d.get("via") not in ("helper", "_target_") \
                    or not d.get("serial") or not d.get("parallel_siblings") or is_test_file(site.file):
                continue
            if d.get("via") != "_target_" and not any(step.get("kind") in ("config", "env") for step in d.get("flow", ())):
                continue  # a count the script fixes itself chose its sampler too: no setting is lost
            n, text = _project_count(site, knob_of.get(id(site)))
            if n is None and _cpu_derived(site, knob_of.get(id(site))):
                n, text = 2, f"{text} (the machine's CPU count)"  # more than one on any machine it is meant for
            if (n is None and not d.get("layout_siblings")) or n is not None and n <= 1:
                continue  # (a count set at run time: said, as a note, only beside a parallel package)
            backend, siblings = _short(d["backend"]), [_short(c) for c in d["parallel_siblings"]]
            if d.get("library"):
                backend += f" (installed {d['library']})"
            family = ", written to the same pattern in a sibling package," if d.get("layout_siblings") \
                else " of the same family"
            yield self.finding(site, knob=site.key, related=[site], backend=backend,
                               count=f"{text} {'environments' if d.get('kind') == 'envs' else 'workers'}",
                               why=f": {d.get('serial_why', backend + ' starts nothing')}; "
                                   f"{_names(siblings)}{family} start{'s' if len(siblings) == 1 else ''} "
                                   f"them in parallel",
                               # (a package laid out like its siblings may still step its items on purpose)
                               **({"severity": "note", "confidence": "medium"} if d.get("layout_siblings") else {})), site

    def _registry_choices(self, result):
        """`type: base` in a config where the registry's `base` class steps its items serially
        and another member of the registry starts processes, beside a count over 1."""
        from auditor import vocab as vocab_mod

        vocab = vocab_mod.load(result.settings or None)
        counts: dict[str, list] = {}
        for s in result.sites:
            if s.role == "define" and isinstance(s.value, int) and not isinstance(s.value, bool) and s.value > 1 \
                    and vocab.match(s.leaf) == "exact" and vocab.serial_value(s.leaf, s.value) is None:
                counts.setdefault(s.file, []).append(s)
        for s in result.sites:
            sel = s.detail.get("selects")
            if s.role != "define" or not sel or not sel.get("serial") or not counts.get(s.file) or is_test_file(s.file):
                continue
            # a count of what the serial class makes (its env_num: collector_env_num, not n_gpus)
            units = vocab.units(sel.get("count") or "")
            beside = [c for c in counts[s.file] if units & vocab.units(c.leaf)]
            if not beside:
                continue
            count = max(beside, key=lambda c: c.value)
            parallel = [_short(c) for c in sel["parallel"]]
            # a class seen to make its N items in a loop: a warning; one that only starts nothing
            # (its count told by names: BaseEnvManager beside collector_env_num) may be the
            # intended choice for cheap environments: a note, unless most configs of its folder
            # that set the same key pick a parallel member (the outlier is the mistake)
            others = sel.get("siblings") or {}
            outlier = others.get("parallel", 0) > others.get("serial", 0)
            strength = {} if sel.get("sized") or outlier else {"severity": "note", "confidence": "medium"}
            folder = (f"; {others['parallel']} of the {others['parallel'] + others['serial']} other configs "
                      f"in its folder that set `{'.'.join(s.key.split('.')[-2:])}` pick a parallel member") if outlier else ""
            yield self.finding(s, knob=s.key, related=[s, count], backend=f"{s.key} = {show(s.value)}",
                               count=f"the {count.value} set by {count.key} (line {count.line})",
                               why=f": {show(s.value)} picks {_short(sel['backend'])} from {sel['registry'].removesuffix('.register')}, which "
                                   f"starts no process; {_names(parallel)} in the same registry "
                                   f"start{'s' if len(parallel) == 1 else ''} them in parallel{folder}", **strength)

    def _hand_built_members(self, result):
        """`BaseEnvManagerV2(env_fn=[... for _ in range(cfg.env.collector_env_num)], cfg=cfg.env.manager)`
        in a script that imports a config whose `env_manager.type` picks 'subprocess': the call
        builds the registry's serial member by hand, so the configured choice, and the count's
        parallelism with it, never takes effect."""
        from auditor import vocab as vocab_mod

        picks: dict[str, list] = {}  # file -> its picks of a registry's parallel member
        for s in result.sites:
            sel = s.detail.get("selects")
            if s.role == "define" and sel and sel.get("serial") is False and not is_test_file(s.file):
                picks.setdefault(s.file, []).append(s)
        if not picks:
            return
        vocab = vocab_mod.load(result.settings or None)
        counts: dict[str, list] = {}  # file -> counts over 1 it sets
        for s in result.sites:
            if s.file in picks and s.role == "define" and isinstance(s.value, int) and not isinstance(s.value, bool) \
                    and s.value > 1 and vocab.match(s.leaf) == "exact":
                counts.setdefault(s.file, []).append(s)
        files = modules_to_files(result.meta)
        # what each config with a pick calls (`train_muzero_with_gym_env([main_config, create_config])`
        # at the bottom of LightZero's configs): the entry it runs, by last name and package
        entries: dict[str, list[tuple[str, str]]] = {}  # callee's last name -> [(its package, config)]
        for config in picks:
            meta = result.meta.get(config)
            flow = meta.get("flow") if isinstance(meta, dict) else None
            for edge in (flow or {}).get("calls", ()):
                for callee in edge.get("callee", ())[:1]:
                    package, _, name = str(callee).rpartition(".")
                    entries.setdefault(name, []).append((package, config))
        for rel, meta in sorted(result.meta.items()):
            flow = meta.get("flow") if isinstance(meta, dict) else None
            if not isinstance(flow, dict) or not flow.get("calls") or is_test_file(rel):
                continue
            imported = [f for m in flow.get("imports", ()) if (f := files.get(m)) in picks]
            for edge in flow["calls"]:
                leaves = {_short(c) for c in edge.get("callee", ())}
                fn = str(edge.get("fn") or "")
                # a config that runs this function (by the package it names it through) picks for it too
                running = [config for package, config in entries.get(fn.rsplit(".", 1)[-1], ())
                           if package and fn.startswith(package + ".") and config != rel]
                loaded = list(dict.fromkeys([*imported, *sorted(running)]))
                for config in loaded:
                    # the config's pick whose registry has the class this call builds
                    built, pick = next(((b, p) for p in picks[config] for b in sorted(
                        leaves & {_short(c) for c in p.detail["selects"]["serial_members"]})), (None, None))
                    if pick is None:
                        continue
                    sel = pick.detail["selects"]
                    units = vocab.units(sel.get("count") or "")
                    beside = [c for c in counts.get(config, ()) if units & vocab.units(c.leaf)]
                    if not beside:
                        continue
                    # the count the call sizes its items by (`range(cfg.env.evaluator_env_num)`), else the largest
                    texts = " ".join(a.get("text", "") for a in [*edge.get("args", ()), *edge.get("kwargs", {}).values()])
                    named = [c for c in beside if c.leaf in texts]
                    count = max(named or beside, key=lambda c: c.value)
                    how = "the config it imports" if config in imported else \
                        f"a config that runs {fn.rsplit('.', 1)[-1]}()" + (
                            f" (one of {len(running)})" if len(running) > 1 else "")
                    yield self.finding(None, file=rel, line=edge["line"], column=edge["col"], knob=pick.key,
                                       related=[pick, count], backend=built,
                                       count=f"the {count.value} set by {count.key} ({where(count)})",
                                       why=f": this call builds {built} by hand, which starts no process, while "
                                           f"{how} picks {show(pick.value)} ({where(pick)}: "
                                           f"{_short(sel['backend'])}, which starts them in parallel); that choice "
                                           f"never takes effect")
                    break

    def _serial_switches(self, result, vocab):
        """`vectorize: serial` beside `num_envs: 64` in one section of a config, `local_mode: true`
        beside `num_cpus: 16`, a dataclass `single_process: bool = True` beside `num_workers: int =
        8`: a switch set to its serial value next to a count it makes pointless."""
        if not vocab.switches:
            return
        counts: dict[tuple, list] = {}  # (file, section) -> count defines there
        switches = []
        for s in result.sites:
            if s.role != "define" or s.detail.get("generated") or is_test_file(s.file):
                continue
            if not (s.kind in CONFIG_KINDS or is_config_define(s)):
                continue
            section = s.key.rpartition(".")[0]
            if vocab.serial_value(s.leaf, s.value):
                switches.append((s, section))
            elif isinstance(s.value, int) and not isinstance(s.value, bool) and s.value > 1:
                counts.setdefault((s.file, section), []).append(s)
        knob_of = {id(s): k for k in result.knobs for s in k.sites}
        for switch, section in switches:
            knob = knob_of.get(id(switch))
            if knob is None or not any(s.role in ("read", "consume") for s in knob.sites):
                continue  # a switch nothing reads changes nothing (QG101 says so), serial or not
            beside = [c for c in counts.get((switch.file, section), ()) if vocab.counts_for(switch.leaf, c.leaf)]
            if not beside:
                continue
            count = max(beside, key=lambda c: c.value)
            yield self.finding(switch, knob=switch.key, related=[switch, count],
                               backend=f"{switch.leaf} = {show(switch.value)}",
                               count=f"the {count.value} set by {count.key} (line {count.line})",
                               why=f": {show(switch.value)} is the serial choice of {switch.leaf}")

    def _switches_in_code(self, result, vocab):
        """`SyncVectorEnv if cfg.env.sync_env else AsyncVectorEnv` in code, `sync_env: True` in a
        config file beside a count above 1 of what the backend makes: the code says which value
        is serial, whatever the switch is called. The count is the one the same file sets, else
        one set by a config that picks this file as a Hydra group option (`override /env: dmc`
        for env/dmc.yaml): a group config's neighbours ask for their own counts."""
        switches: dict[str, tuple] = {}  # leaf -> (file, fact)
        for rel, m in sorted(result.meta.items()):
            for fact in (m.get("switches") or ()) if isinstance(m, dict) and not is_test_file(rel) else ():
                switches.setdefault(fact["leaf"].lower(), (rel, fact))
        if not switches:
            return
        counts: dict[str, list] = {}  # file -> config defines of counts
        settings: dict[str, list] = {}  # file -> (key, line, column, value) of every scalar it sets
        for s in result.sites:
            if s.role == "define" and is_config_define(s) and s.kind in CONFIG_KINDS:
                settings.setdefault(s.file, []).append((s.key, s.line, s.column, s.value))
                if isinstance(s.value, int) and not isinstance(s.value, bool):
                    counts.setdefault(s.file, []).append(s)
        for rel, m in result.meta.items():
            if isinstance(m, dict) and m.get("values"):
                for key, (line, col, value) in m["values"].items():
                    settings.setdefault(rel, []).append((key, line, col, value))
                    # a count the vocabulary does not name (`envs: 4`), by its unit
                    if isinstance(value, int) and not isinstance(value, bool) and vocab.units(key.rsplit(".", 1)[-1]):
                        counts.setdefault(rel, []).append(Site(role="define", file=rel, line=line, column=col,
                                                               key=key, value=value, kind="yaml"))
        choosers: dict[tuple, list] = {}  # (group, option) -> files whose Hydra defaults pick it
        for rel, m in result.meta.items():
            for entry in (m.get("hydra_defaults") or ()) if isinstance(m, dict) else ():
                if entry.get("group") and isinstance(entry.get("option"), str):
                    choosers.setdefault((entry["group"].rsplit("/", 1)[-1], entry["option"]), []).append(rel)
        for rel in sorted(settings):
            if is_test_file(rel):
                continue
            for key, line, col, value in settings[rel]:
                found = switches.get(key.rsplit(".", 1)[-1].lower())
                if found is None or _as_bool(value) is None or key.rsplit(".", 1)[-1] in vocab.switches:
                    continue  # (a switch the vocabulary names: _serial_switches judges it)
                code_file, fact = found
                if _as_bool(value) != fact["serial_when"]:
                    continue
                units = {"envs": {"env"}}.get(fact["kind"], {"worker", "proc", "process", "actor"})
                folder, _, name = rel.rpartition("/")
                group = (folder.rsplit("/", 1)[-1], name.rsplit(".", 1)[0])
                # a section that sets the switch itself (a preset with `parallel: True`) runs its
                # own count with its own choice
                own_choice = {k.rpartition(".")[0] for k, *_ in settings[rel]
                              if k != key and k.rsplit(".", 1)[-1].lower() == fact["leaf"].lower()}
                own = [c for c in counts.get(rel, ()) if vocab.units(c.leaf) & units
                       and c.key.rpartition(".")[0] not in own_choice]
                beside = own or [c for f in choosers.get(group, ()) for c in counts.get(f, ())
                                 if vocab.units(c.leaf) & units]
                beside = [c for c in beside if c.value > 1]
                if not beside:
                    continue  # one env, or no count this choice runs with: serial loses nothing
                count = max(beside, key=lambda c: c.value)
                yield self.finding(None, file=rel, line=line, column=col, knob=key, related=[count],
                                   backend=f"{key} = {show(value)}",
                                   count=f"the {count.value} set by {count.key} ({where(count)})",
                                   why=f": `{fact['test']}` at {code_file}:{fact['line']} picks "
                                       f"{_short(fact['serial'])} for {show(value)}, "
                                       f"{_short(fact['parallel'])} otherwise")

    def _config_flags(self, result):
        from auditor import vocab as vocab_mod

        vocab = vocab_mod.load(result.settings or None)
        yield from self._serial_switches(result, vocab)
        yield from self._switches_in_code(result, vocab)
        for knob in result.knobs:
            for site in knob.sites:
                if not is_config_define(site):
                    continue
                if knob.leaf == "serial_mode" and site.value is True and \
                        not idioms.natively_vectorized(site, result.meta.get(site.file)):
                    yield self.finding(site, knob=knob.name, related=[site], backend=knob.name,
                                       count="the sampling workers", why=" because serial_mode is true")
                choices = site.detail.get("choices")
                value = str(site.value).lower().rsplit(".", 1)[-1] if site.value is not None else ""
                if choices and value in SERIAL_CHOICES and any(str(c).lower() not in SERIAL_CHOICES for c in choices):
                    flag = (site.detail.get("flags") or [f"--{knob.leaf.replace('_', '-')}"])[-1]
                    parallel = next(str(c) for c in choices if str(c).lower() not in SERIAL_CHOICES)
                    yield self.finding(site, knob=knob.name, related=[site], backend=f"{flag}'s default",
                                       count="the environments",
                                       why=f": {show(site.value)} is the serial choice among {list(choices)}; "
                                           f"unless a run passes {flag} {parallel}, n_envs buys no parallelism")


def _mentions(condition: str, written) -> bool:
    """Does CONDITION name the count, as written (a str) or by its leaf (a pattern)?"""
    return written in condition if isinstance(written, str) else written.search(condition) is not None


def _light_envs(site, meta) -> list[str] | None:
    """The environment ids written in SITE's file, when each is one whose step takes
    microseconds (rules/consumers.yaml `light_envs`: CartPole, Pendulum, ...), else None."""
    m = meta.get(site.file)
    ids = m.get("env_ids") if isinstance(m, dict) else None
    light = set(catalogue.data("consumers.yaml").get("light_envs") or ())
    return list(ids) if ids and all(i in light for i in ids) else None


def _promised_parallel(knob, site) -> bool:
    """The count's flag or field in SITE's file says its items run in parallel (cleanrl's
    `--num-envs`, help "the number of parallel game environments"): serial is then a broken
    promise, whatever the environment costs."""
    return knob is not None and any(s.role == "define" and s.file == site.file
                                    and _PARALLEL.search(str(s.detail.get("help") or "")) for s in knob.sites)


def _variable_switch_on(site, defines) -> bool:
    """`env_cls = AsyncVectorEnv if (use_async_envs and n_envs > 1) else SyncVectorEnv`, then
    `env_cls(fns)`: the serial class runs when the switch is off, and every flag or settings
    field of that name defaults it on (`use_async_envs: bool = True` in the evaluation config,
    whatever the helper's own `use_async_envs=False` says): the serial class runs when the user
    turns it off, or for one env."""
    cond = str(site.detail.get("backend_condition") or "")
    if not site.detail.get("via_variable") or not cond or " or " in cond:
        return False
    negated = cond.startswith("not (") and cond.endswith(")")
    clauses = [c.strip() for c in (cond[5:-1] if negated else cond).split(" and ")]
    switches = [c.rsplit(".", 1)[-1].lower() for c in clauses if re.fullmatch(r"[A-Za-z_][\w.]*", c)]
    for leaf in switches:
        mine = [s for s in defines if s.leaf.lower() == leaf and is_config_define(s) and not is_test_file(s.file)]
        # serial under `not (flag and ...)`: the flag on picks the parallel class; under `flag`, off
        if mine and all(s.value is negated for s in mine):
            return True
    return False


def _configured_switch(site, meta, defines=()) -> bool:
    """SITE builds the serial backend in a branch of a switch the code defines (`if
    self.use_subproc: SubprocVectorEnv(...) else: DummyVectorEnv(...)`) and a config file sets
    that switch: the user chooses, and the configured choice is what is judged."""
    m = meta.get(site.file)
    facts = [f for f in (m.get("switches") or ()) if f.get("line", 0) <= site.line <= f.get("end", 0)] \
        if isinstance(m, dict) else []
    if not facts:
        return False
    leaves = {f["leaf"].lower() for f in facts}
    if any(key.rsplit(".", 1)[-1].lower() in leaves
           for other in meta.values() if isinstance(other, dict)
           for key in (other.get("values") or {})):
        return True
    # a parser flag or settings field of that name whose default picks the parallel branch
    # (`parser.set_defaults(subproc=True)` beside `if not args.subproc: DummyVecEnv(...)`): the
    # serial branch runs only when the user asks for it
    serial_when = {f["leaf"].lower(): f["serial_when"] for f in facts}
    for leaf, serial in serial_when.items():
        mine = [s for s in defines if s.leaf.lower() == leaf and not is_test_file(s.file)]
        # `parser.set_defaults(...)` overrides every flag's own default
        mine = [s for s in mine if s.detail.get("set_defaults")] or mine
        if mine and all(s.value != serial for s in mine):
            return True
    return False


def _as_bool(value):
    """True / False for a boolean or its text in a config file, else None."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return {"true": True, "false": False}.get(text)


def _why(site, entry) -> str:
    twin = entry.get("twin")
    if entry.get("twin_param"):
        return (f": with {entry['twin_param']} unset or DummyVecEnv it builds a DummyVecEnv; "
                f"pass {entry['twin_param']}={_short(twin)}")
    if twin:
        return f"; its parallel twin is {_short(twin)}"
    return ""


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _project_count(site, knob):
    """(int or None, text) for a count handed to a project backend: the literal the call
    passes, else the value its trace evaluates to, else its knob's configured value."""
    d = site.detail
    joined = knob is not None and site.match != "name"
    # the script's own flag or config default, when the knob's scripts disagree
    own = [s.value for s in knob.sites if s.role == "define" and s.file == site.file
           and s.value is not None] if joined else []
    here = own[0] if len({repr(v) for v in own}) == 1 else None
    for value in (site.value, d.get("effective"), knob.effective if joined else None, here):
        n = as_number(value) if value is not None else None
        if isinstance(n, int) and not isinstance(n, bool):
            expr = d.get("expr") or site.key
            return n, show(n) if str(n) == expr else f"{expr} (= {n})"
    return None, d.get("expr") or site.key


def _cpu_derived(site, knob) -> bool:
    """The count is the machine's CPU count: its trace, or the knob's configured default, says so."""
    if any(step.get("kind") == "cpu_count" for step in site.detail.get("flow", ())):
        return True
    return knob is not None and site.match != "name" and any(
        s.role == "define" and "cpu_count" in str(s.detail.get("expr") or "") for s in knob.sites)

"""QG107 thread-pinning: the main or learner process pins its math libraries to one thread."""

import posixpath
import re
from functools import lru_cache

from auditor import catalogue
from auditor.lint import idioms
from auditor.lint.base import Example, Rule, as_number, in_examples, is_test_file, show


@lru_cache(maxsize=None)
def _pin_backends() -> frozenset[str]:
    """The catalogue's backends that set the calling process's own thread count (`pins: true` in
    rules/consumers.yaml: torch.set_num_threads, threadpoolctl, a TensorFlow session's pools)."""
    return frozenset(e["backend"] for e in catalogue.data("consumers.yaml").get("consumers") or () if e.get("pins"))


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# XLA's CPU backend takes its thread settings from one string of flags: either of these makes
# the process's XLA math single-threaded (JAX's equivalent of OMP_NUM_THREADS=1)
XLA_VAR = "XLA_FLAGS"
_XLA_SINGLE = re.compile(r"(?:^|\s)(?:--)?(?:xla_cpu_multi_thread_eigen=false|intra_op_parallelism_threads=1)(?:\s|$)",
                         re.IGNORECASE)
_WORKERISH = re.compile(r"worker|init_fn|_init\b|initializer|subproc|child|actor|rollout_proc", re.IGNORECASE)


_LEARNERISH = re.compile(r"(^|[._])(main|train\w*|learn\w*|fit)$|trainer|learner",
                         re.IGNORECASE)
# a `Runner` class runs the training (rl_games' Runner, rsl_rl's OnPolicyRunner); an env,
# rollout, worker or sampler runner may be a process of its own
_RUNNER = re.compile(r"(?<![Ee]nv)(?<![Rr]ollout)(?<![Ww]orker)(?<![Ss]ampler)(?<![Mm]odel)Runner\.")


# a process that does the model's math, whatever else its name says (sample-factory's
# LearnerWorker and InferenceWorker are processes of their own)
_MATH_PROCESS = re.compile(r"learner|inference", re.IGNORECASE)


def _mpi_rank(meta) -> bool:
    """The file runs as one rank of an MPI job (it imports mpi4py): its ranks are its parallel
    workers, one per core as baselines' `mpirun -np 16` starts them, so one thread each is the
    layout verify recommends, not a learner starved of threads."""
    flow = meta.get("flow") if isinstance(meta, dict) else None
    return isinstance(flow, dict) and "mpi4py" in (flow.get("imports") or ())


def _in_main_process(site) -> bool:
    """Module level, a main() / `if __name__ == "__main__"` block, a trainer/learner function, or a
    function that runs the training itself (`trainer.train()` in garage's `@wrap_experiment`
    functions, `agent.learn()`).

    A pin inside any other helper (a sandbox, a subprocess body) cannot be placed statically,
    so it is not reported: precision first.
    """
    d = site.detail
    function = d.get("function") or "<module>"
    return function == "<module>" or bool(d.get("in_main")) or bool(_LEARNERISH.search(function)) \
        or bool(_MATH_PROCESS.search(function)) or bool(d.get("trains")) or bool(_RUNNER.search(function))


_ON_GPU = re.compile(r"cuda\.is_available\(\)|\.is_cuda\b|device\s*==\s*['\"]cuda|device\s*!=\s*['\"]cpu|use_cuda"
                     r"|\bcuda\b\s*(and|$)")


def _only_on_gpu(site) -> bool:
    """`if torch.cuda.is_available(): torch.set_num_threads(1)`: the math runs on the GPU, and
    one CPU thread keeps the data path from contending with it (habitat-baselines' own switch)."""
    condition = str(site.detail.get("condition") or "")
    if _GPU_FUNCTION.search(str(site.detail.get("function") or "").rsplit(".", 1)[-1]):
        return True  # `Actor._gpu_inference_loop`: the function says where its math runs
    return bool(_ON_GPU.search(condition)) and "not " not in condition


_GPU_FUNCTION = re.compile(r"(^|_)(gpu|cuda)(_|$)", re.IGNORECASE)


def _in_worker(site) -> bool:
    d = site.detail
    function = d.get("function") or ""
    if d.get("worker_copies"):
        return True  # one of N processes started in a loop (an inference loop per env): busy workers
    # a process target is named by its own function (`LearnerComm._send_model_loop` sends models);
    # anything else by its whole name (LearnerWorker.init, InferenceWorker.init: the math)
    if _MATH_PROCESS.search(function.rsplit(".", 1)[-1] if d.get("in_worker") else function):
        return False
    if d.get("in_worker"):
        return True
    return bool(function) and bool(_WORKERISH.search(function))


_SETTING = re.compile(r"[A-Za-z_]\w*\s*(\.\s*[A-Za-z_]|\[)")

# a literal pin of 2-4 threads starves a learner on any training node; a larger literal is a
# sizing choice more than a pin
FEW_THREADS = 4


def _fixed_count(site, value) -> bool:
    """`torch.set_num_threads(2)` written as a literal of a few threads: the learner's math gets
    that many on a laptop and on a 64-core node alike (robomimic's train())."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 < value <= FEW_THREADS \
        and str(site.detail.get("expr") or "").strip().isdigit()


def _multi_process_launches(sites, meta: dict) -> set[str]:
    """Launch scripts that start several processes through a launcher (`torchrun
    --nproc_per_node=8`, `deepspeed --num_gpus 8`, `mpirun -np 4`): a count other than a
    literal 1. Also a setup script that holds such a command in a variable for the scripts that
    source it (`LAUNCH_SCRIPT="torchrun --nproc_per_node=$((TP * DP))"`)."""
    out = {rel for rel, m in meta.items() if isinstance(m, dict) and isinstance(m.get("shell_vars"), dict)
           and m["shell_vars"].get("launchers")}
    counts, several = _launcher_counts()
    counted = set()  # (file, command line) of launches given a rank count
    for s in sites:
        if s.kind == "shell" and s.detail.get("launcher") and s.detail.get("launcher_option"):
            if f"--{s.leaf}" in counts or f"-{s.leaf}" in counts:
                counted.add((s.file, s.detail.get("command_line")))
            n = as_number(s.value)
            # `$NGPUS`, `auto`: a count decided at run time, as a rule several
            if not isinstance(n, (int, float)) or (not isinstance(n, bool) and n > 1):
                out.add(s.file)
    # `accelerate launch --config_file zero2.yaml train.py`, `deepspeed train.py`: no count on the
    # command, and the launcher starts as many ranks as its config or the GPUs say
    for rel, m in meta.items():
        for line, name in (m.get("launches") or ()) if isinstance(m, dict) else ():
            if name in several and (rel, line) not in counted:
                out.add(rel)
    return out


@lru_cache(maxsize=1)
def _launcher_counts() -> tuple[frozenset, frozenset]:
    """(every launcher's rank-count flags, the launchers that start several ranks when a command
    gives no count: rules/workers.yaml `several_by_default`)."""
    rules = [r for r in catalogue.data("workers.yaml").get("rules", []) if r.get("launcher")]
    return (frozenset(f for r in rules for f in r.get("count_flags") or ()),
            frozenset(r["launcher"] for r in rules if r.get("several_by_default")))


def _sourced_by(meta: dict) -> dict[str, set[str]]:
    """Shell file -> the scripts that `source` it (auditor/extract/shell_script.py `sources`,
    a path as written: from the project root or from the sourcing script's folder)."""
    files = {rel for rel, m in meta.items() if rel.endswith(".sh") or isinstance(m, dict) and "shell_vars" in m}
    out: dict[str, set[str]] = {}
    for rel, m in meta.items():
        for written in (m.get("sources") or ()) if isinstance(m, dict) else ():
            path = written.removeprefix("./")
            here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
            for target in (path, here):
                if target in files:
                    out.setdefault(target, set()).add(rel)
    return out


def _xla_threads(site):
    """1 when XLA_FLAGS holds a flag that makes XLA's CPU backend single-threaded."""
    return 1 if isinstance(site.value, str) and _XLA_SINGLE.search(site.value) else None


# `OMP_NUM_THREADS=1 pytest ./tests`: the environment of a test run, not of a training job
_TEST_RUN = re.compile(r"^(?:[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)*"
                       r"(?:py\.?test|tox|nox|nosetests|python[\d.]*\s+-m\s+(?:pytest|unittest))\b")
# the command an environment prefix is set for, run under a wrapper or not (`xvfb-run ... xpytest
# ...`, `timeout 600 pytest`): a test runner's
_TEST_COMMAND = re.compile(r"(?:^|[\s/])(?:x?py\.?test|tox|nox|nosetests)\b|\bpython[\d.]*\s+-m\s+(?:pytest|unittest)\b")
# a function that does the learner's math, by its name (never `main`: a launcher's main may
# start a league, a coordinator or a server in its own process)
_LEARNER_CALLER = re.compile(r"learner|trainer|(^|[._])(train\w*|learn|fit)$", re.IGNORECASE)


def _direct_callers(result) -> dict[str, list[tuple[str, str]]]:
    """Project callee (full name) -> the functions that call it (full names) and their files,
    from the flow layer's call edges: calls only, never a function passed on (`Process(target=f)`)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for rel, meta in result.meta.items():
        flow = meta.get("flow") if isinstance(meta, dict) else None
        for edge in (flow or {}).get("calls", ()) if isinstance(flow, dict) else ():
            for callee in edge.get("callee", ()):
                out.setdefault(callee, []).append((str(edge.get("fn") or ""), rel))
    return out


def _learner_caller(site, callers, result, spawning) -> str | None:
    """`SLDataloader.__init__` pins torch, and `SLLearner._setup_dataloader` builds the
    SLDataloader: the pin runs in the learner, which does the math. The one caller that
    places it (learner / trainer by its name, no worker), if every caller is such a one, in a
    file that is no MPI rank and starts no workers (baselines' `single_threaded_session()` in
    ppo1's MPI `train()`: one thread per rank is the layout)."""
    if site.role != "consume" or site.detail.get("backend") not in _pin_backends() or site.detail.get("condition"):
        return None
    function = str(site.detail.get("function") or "")
    meta = result.meta.get(site.file)
    flow = meta.get("flow") if isinstance(meta, dict) else None
    module = str(flow.get("module") or "") if isinstance(flow, dict) else ""
    if not function or not module:
        return None
    if function.endswith(".__init__"):
        function = function[:-len(".__init__")]
    # (a count reached through a helper names its function in full: pkg.tf_util.single_threaded_session)
    target = function if function.startswith(module + ".") else f"{module}.{function}"
    found = callers.get(target) or []
    if not found or any(not _LEARNER_CALLER.search(_class_and_function(c))
                        or _WORKERISH.search(c.rsplit(".", 1)[-1])
                        or _mpi_rank(result.meta.get(rel)) or rel in spawning for c, rel in found):
        return None
    return found[0][0]


def _calling_spawners(result, spawning: set[str]) -> set[str]:
    """SPAWNING (files that start worker processes) and the files that call, by name, a project
    function that starts them (`async_.run_async(processes, run_func)`, whose loop starts one
    `mp.Process` per worker, in another module): their environment is inherited too."""
    from auditor.lint.base import backend_kind

    modules = {rel: (m.get("flow") or {}).get("module") for rel, m in result.meta.items() if isinstance(m, dict)}
    starters = {f"{modules[s.file]}.{s.detail['function']}" for s in result.sites
                if s.file in spawning and s.role == "consume" and s.kind == "python" and modules.get(s.file)
                and backend_kind(s) == "processes" and s.detail.get("function") not in (None, "<module>")}
    if not starters:
        return spawning
    out = set(spawning)
    for rel, m in result.meta.items():
        flow = m.get("flow") if isinstance(m, dict) else None
        if rel not in out and any(c in starters for e in (flow or {}).get("calls", ()) for c in e.get("callee") or ()):
            out.add(rel)
    return out


def _class_and_function(full: str) -> str:
    """`pkg.sl_learner.SLLearner._setup_dataloader` -> `SLLearner._setup_dataloader`."""
    return ".".join(full.rsplit(".", 2)[-2:])


def _thread_value(site) -> str:
    return str(site.value) if site.value is not None else f"`{site.detail.get('expr') or '?'}`"


def _where(function: str | None, placed_by: str | None = None) -> str:
    if placed_by:
        function = _class_and_function(function or "")
        return (f"the learner's process (in {function}(), which {_class_and_function(placed_by)}() calls), "
                f"which does the model's math,")
    m = _MATH_PROCESS.search(function or "")
    if m:
        return f"the {m.group(0).lower()} process (in {function}()), which does the model's math,"
    if function and function != "<module>":
        return f"the main process (in {function}())"
    return "the main process (at module level)"


# baselines' tf_util: a session of NUM_CPU threads, and a helper that opens one of a single thread
_TF_UTIL = {"common/tf_util.py": "import tensorflow as tf\n"
                                 "def make_session(num_cpu):\n"
                                 "    config = tf.ConfigProto(intra_op_parallelism_threads=num_cpu,\n"
                                 "                            inter_op_parallelism_threads=num_cpu)\n"
                                 "    return tf.Session(config=config)\n"
                                 "def single_threaded_session():\n"
                                 "    return make_session(1)\n"}


class ThreadPinning(Rule):
    CODE = "QG107"
    NAME = "thread-pinning"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{what} {pins} {where_} to {threads}{why}"
    RATIONALE = """\
`torch.set_num_threads(1)`, `OMP_NUM_THREADS=1`, `threadpool_limits(1)`, for JAX an `XLA_FLAGS`
with `--xla_cpu_multi_thread_eigen=false` or `intra_op_parallelism_threads=1`, and for TensorFlow a
session's `intra_op_parallelism_threads=1` (`tf.ConfigProto(...)`, also set as an attribute of
the config object, or `tf.config.threading.set_intra_op_parallelism_threads(1)`) are right inside
worker processes (many workers must not oversubscribe the CPUs), and in an MPI program's ranks
(a file that imports mpi4py: `mpirun -np 16` starts one rank per core), but in the main or learner
process they make every matrix multiply single-threaded: the learner silently runs at a
fraction of its speed. Inside a worker's entry point (a function passed as `target=`,
`initializer=`, `worker_init_fn=`, or an env factory) they are fine and not reported.

Set the limit in the worker's entry point instead, or size it to the cores the learner has.
A pin that applies only when the math runs on the GPU (`if torch.cuda.is_available():`) is not
reported.
A thread count set in the body of a `threading.Thread` target sets the count torch hands to
each thread of the process at that thread's first parallel CPU operation: the learner's main
thread takes it when its first such operation comes later (even after its own
`set_num_threads`), and keeps its count when it came before. Which comes first is not in the
code: a note, confidence low.
A literal of a few threads there (2 to 4: `torch.set_num_threads(2)` in `train()`) fixes the
learner's math at that many whatever the machine has: a warning, confidence medium (a note in an
example script, `examples/.../evaluation_stsbenchmark.py`'s module-level `torch.set_num_threads(4)`:
users run it as shipped, but it is a demonstration).
So does a count capped at a few threads (`max(min(cpus // 2, 4), 1)`), written in place or
returned by a helper (ML-Agents' `get_num_threads_to_use()`): a warning, confidence medium,
that names the setting which lifts the cap when one exists. A bound above 4 (`min(cpu_count(),
32)`) is a sizing choice. A `Runner` class (rl_games' Runner) runs the training: the main
process. A pin in a helper whose every direct caller is the learner's (`SLDataloader.__init__`,
built by `SLLearner._setup_dataloader`: a learner or trainer by its name) runs in the learner's
process too: a warning that names the caller. So does a helper that opens a one-thread session
(`def single_threaded_session(): return make_session(1)`, called by `train()` of a
single-process program), unless a caller's file is an MPI rank or starts workers (baselines'
ppo1 `train()` under `mpirun`). A helper built elsewhere (a league, a launcher's
`main`), or passed on as a process target, stays unplaced and unreported.
A thread variable set after the module imported torch (`import torch` at the top, then
`os.environ["OMP_NUM_THREADS"] = str(cfg.num_threads)` in a function) does not act on this
process: torch's OpenMP runtime read the count at import; only processes started afterwards
inherit it. A configured value set that way is a warning (the setting never reaches this
process's math; `torch.set_num_threads()` does), a literal a note; in a script that starts
worker processes it is for them, and not reported. So is a thread variable in a mapping
(`DEFAULT_ENV = {"OMP_NUM_THREADS": "1"}`): it is the environment of processes the program
launches, not of the program.
A learner or inference process is the math, whatever else its name says (sample-factory's
`LearnerWorker`): a pin there is reported. A process target is named by its own function
(`LearnerComm._send_model_loop` sends models), and a target started once per turn of a loop
(an inference loop per env) is one of N busy workers; a function named for the GPU
(`_gpu_inference_loop`) runs its math there.
A launch script that exports it and then starts several ranks with a launcher (`torchrun
--nproc_per_node=8`, `deepspeed`, `mpirun -np 4`; also `accelerate launch --config_file ...` or
`deepspeed train.py` with no count on the command, which start as many ranks as their config or
the GPUs say: rules/workers.yaml `several_by_default`) gives each rank one thread, torchrun's own
default for several ranks: not reported; nor is a setup script that only such scripts
`source` (VILA's scripts/setups/train.sh; of the scripts the scan reads, which hold a
parallelism word), nor one that holds such a launcher command in a variable for the scripts
that source it to run (Megatron's `LAUNCH_SCRIPT="torchrun --nproc_per_node=..."`). A variable
set for one command that runs tests (`OMP_NUM_THREADS=1 pytest ./tests`, catalyst's CI script,
also through a wrapper on the next lines: `xvfb-run ... xpytest`) is the test run's environment,
not a training job's: not reported.
An environment variable set in a script that starts worker processes, or that calls a project
function that starts them (`async_.run_async(processes, run_func)` in another module), is for
them (they inherit it): one thread per busy worker is the policy `qg-audit verify` recommends
(docs/verify.md, "Threads and CPUs"), so it is not a warning; the learner it pins too is
measured by verify, which says when it needs more threads. When the script's own process
computes the gradients (`loss.backward()` in a function that no worker runs: torchbeast's
monobeast, whose learner threads share the process that set it), it is a note that names that
function; when the learner is a process of its own, nothing."""
    VALID = [
        Example({"misc/__init__.py": "",
                 "misc/async_.py": "import multiprocessing as mp\n"
                                   "def run_async(n_process, run_func):\n"
                                   "    processes = [mp.Process(target=run_func, args=(i,)) for i in range(n_process)]\n"
                                   "    for p in processes:\n"
                                   "        p.start()\n",
                 "experiments/train_async.py": "import os\n"
                                               "from misc import async_\n"
                                               "def train_agent_async(processes, run_func):\n"
                                               "    os.environ['OMP_NUM_THREADS'] = '1'\n"
                                               "    async_.run_async(processes, run_func)\n"},
                "one thread for the workers a project helper in another module starts"),
        Example({".ci/run.sh": "#!/bin/bash\n"
                               "OMP_NUM_THREADS=1 PYTHONHASHSEED=0 \\\n"
                               "    xvfb-run --server-args='-screen 0 1280x800x24' \\\n"
                               "    xpytest '/repo/tests/**/test_*.py'\n"},
                "one thread for a test run started through a wrapper, the command on the next lines"),
        Example({**_TF_UTIL, "run_atari.py": "from mpi4py import MPI\n"
                                 "from common import tf_util as U\n"
                                 "def train(env_id):\n"
                                 "    rank = MPI.COMM_WORLD.Get_rank()\n"
                                 "    with U.single_threaded_session():\n"
                                 "        learn(env_id, rank)\n"},
                "a one-thread session helper opened by the training function of an MPI program's ranks"),
        Example({"trpo_mpi.py": "import tensorflow as tf\n"
                                "from mpi4py import MPI\n"
                                "def learn(env, policy):\n"
                                "    rank = MPI.COMM_WORLD.Get_rank()\n"
                                "    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)\n"
                                "    with tf.Session(config=config) as sess:\n"
                                "        return policy.fit(sess, env, rank)\n"},
                "one thread for each rank of an MPI program (one rank per core is its layout)"),
        Example({"bin/workflows/check_pipelines.sh": "#!/bin/bash\n"
                                             "GPU_REQUIRED=1 OMP_NUM_THREADS=\"1\" pytest ./tests/pipelines\n"
                                             "OMP_NUM_THREADS=1 python -m pytest tests/\n"},
                "one thread for a test run (catalyst's CI), not for a training job"),
        Example({"conf/arguments.sh": "#!/bin/bash\nTP=${TP:-1}\nDP=${DP:-8}\n"
                                      "LAUNCH_SCRIPT=\"torchrun --nproc_per_node=$((TP * DP))\"\n"
                                      "export OMP_NUM_THREADS=1\n",
                 "quantize.sh": "#!/bin/bash\nsource conf/arguments.sh\n${LAUNCH_SCRIPT} quantize.py --tp $TP\n"},
                "a setup script holding the multi-rank launcher its sourcing scripts run: one thread per rank"),
        Example({"actor.py": "import multiprocessing as mp\n"
                             "import torch\n"
                             "class Actor:\n"
                             "    def _inference_loop(self, env_id, pipe):\n"
                             "        torch.set_num_threads(1)\n"
                             "        serve(self.model, pipe)\n"
                             "    def start(self, env_num):\n"
                             "        ctx = mp.get_context('fork')\n"
                             "        for env_id in range(env_num):\n"
                             "            ctx.Process(target=self._inference_loop, args=(env_id, None)).start()\n"},
                "an inference loop started once per env: one thread each for N busy processes"),
        Example({"learner_comm.py": "import torch\n"
                                    "import torch.multiprocessing as tm\n"
                                    "class LearnerComm:\n"
                                    "    def __init__(self):\n"
                                    "        self.mp_fork_context = tm.get_context('fork')\n"
                                    "    def start_send_model(self):\n"
                                    "        self.mp_fork_context.Process(target=self._send_model_loop).start()\n"
                                    "    def _send_model_loop(self):\n"
                                    "        torch.set_num_threads(1)\n"
                                    "        send_models()\n"},
                "a model-sender process of the learner, started through a context held by the object"),
        Example({"actor.py": "import torch\n"
                             "class Actor:\n"
                             "    def _gpu_inference_loop(self):\n"
                             "        torch.set_num_threads(1)\n"
                             "        self.model.cuda()\n"
                             "        serve(self.model)\n"},
                "an inference loop whose name says it runs on the GPU"),
        Example({"sampler.py": "import torch\nimport multiprocessing as mp\n"
                               "def worker_main(q):\n"
                               "    torch.set_num_threads(1)\n"
                               "    q.put(1)\n"
                               "p = mp.Process(target=worker_main, args=(q,))\n"},
                "inside a worker entry point"),
        Example({"train.py": "import torch\ntorch.set_num_threads(args.num_threads)\n"},
                "sized from a knob"),
        Example({"async_ppo.py": "import os\nos.environ['OMP_NUM_THREADS'] = '1'  # for the workers\n"
                                 "import torch.multiprocessing as mp\n"
                                 "def rollout(i):\n    pass\n"
                                 "for i in range(args.num_workers):\n"
                                 "    mp.Process(target=rollout, args=(i,)).start()\n"},
                "set for the workers a script starts (they inherit it): verify's recommended one thread per worker"),
        Example({"run.py": "import torch\n"
                           "def execute_exp(config, run_type):\n"
                           "    if config.force_torch_single_threaded and torch.cuda.is_available():\n"
                           "        torch.set_num_threads(1)\n"
                           "    trainer = make_trainer(config)\n"
                           "    trainer.train()\n"},
                "one CPU thread only when the math runs on the GPU"),
        Example({"collect.py": "import os\nimport torch\nimport multiprocessing as mp\n"
                               "def main(args):\n"
                               "    os.environ['OMP_NUM_THREADS'] = str(args.worker_threads)\n"
                               "    for i in range(args.num_workers):\n"
                               "        mp.Process(target=rollout, args=(i,)).start()\n"},
                "set after `import torch` for the worker processes this script starts"),
        Example({"process.py": "import subprocess\n"
                               "COMMON_ENV = {'PYTHONUNBUFFERED': '1', 'OMP_NUM_THREADS': '1'}\n"
                               "def launch(cmd, env):\n"
                               "    return subprocess.Popen(cmd, env={**COMMON_ENV, **env})\n"},
                "a thread variable in the environment mapping of launched processes"),
        Example({"learner.py": "import os\n"
                               "os.environ['XLA_FLAGS'] = '--xla_gpu_graph_min_graph_size=1'\n"
                               "import jax\n"},
                "XLA flags that set no CPU thread count"),
        Example({"actors.py": "import os\nimport multiprocessing as mp\n"
                              "os.environ['XLA_FLAGS'] = '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'\n"
                              "def act(i):\n    pass\n"
                              "for i in range(args.num_actors):\n"
                              "    mp.Process(target=act, args=(i,)).start()\n"},
                "single-threaded XLA for the actor processes a script starts (they inherit it)"),
        Example({"speedrun.sh": "#!/bin/bash\nexport OMP_NUM_THREADS=1\n"
                                "torchrun --standalone --nproc_per_node=8 -m scripts.base_train\n"
                                "torchrun --nproc_per_node=auto -m scripts.base_eval\n"},
                "one thread for each of the ranks a launcher starts (torchrun's own default for several ranks)"),
        Example({"train.sh": "#!/bin/bash\nexport OMP_NUM_THREADS=1\n"
                             "accelerate launch \\\n    --config_file configs/zero2.yaml \\\n    train.py --lr 1e-4\n",
                 "finetune.sh": "export OMP_NUM_THREADS=1\ndeepspeed finetune.py --deepspeed ds.json\n"},
                "launchers that start as many ranks as their config or the GPUs say, with no count on the command"),
        Example({"local_search.py": "import os\nfrom numba import set_num_threads\n"
                                    "def main(num_threads=None):\n"
                                    "    set_num_threads(num_threads or min(os.cpu_count(), 32))\n"},
                "a bound above a few threads is a sizing choice"),
        Example({"train.py": "import os\nimport torch\n"
                             "def main(args):\n"
                             "    torch.set_num_threads(min(args.threads, os.cpu_count()))\n"},
                "the user's count, bounded by the machine"),
        Example({"loader.py": "import torch\n"
                              "class ReplayLoader:\n"
                              "    def __init__(self, cfg, num_workers=2):\n"
                              "        torch.set_num_threads(1)\n"
                              "        self.pool = spawn_decoders(cfg, num_workers)\n",
                 "league.py": "from loader import ReplayLoader\n"
                             "class League:\n"
                             "    def __init__(self, cfg):\n"
                             "        self.replays = ReplayLoader(cfg, num_workers=cfg.league.num_workers)\n"},
                "a helper's pin built by a league, which does no model math"),
        Example({"apex.py": "import os\nos.environ['OMP_NUM_THREADS'] = '1'\n"
                            "import torch.multiprocessing as mp\n"
                            "def act(i, q):\n    q.put(rollout(i))\n"
                            "def learn(model, opt, q):\n"
                            "    loss = model(q.get()).mean()\n    loss.backward()\n    opt.step()\n"
                            "for i in range(args.num_actors):\n    mp.Process(target=act, args=(i, q)).start()\n"
                            "mp.Process(target=learn, args=(model, opt, q)).start()\n"},
                "actors and the learner each a process of their own: one thread per busy process"),
        Example({"scripts/setups/train.sh": "export NCCL_IB_SL=1\nexport OMP_NUM_THREADS=1\n",
                 "scripts/sft.sh": "#!/bin/bash\nsource scripts/setups/train.sh\n"
                                   "torchrun --nproc_per_node=8 train.py --stage sft\n",
                 "scripts/dpo.sh": "#!/bin/bash\nsource scripts/setups/train.sh\n"
                                   "torchrun --nproc_per_node=$GPUS train.py --stage dpo\n"},
                "a setup script sourced only by scripts that start several ranks: one thread per rank"),
    ]
    INVALID = [
        Example({"run.sh": "export OMP_NUM_THREADS=1\nmpirun -n 1 python train.py\n"},
                "one MPI rank, the learner, pinned by its launch script", expect=[("run.sh", 1)]),
        Example({**_TF_UTIL, "experiments/train.py": "import argparse\n"
                                             "from common import tf_util as U\n"
                                             "def train(arglist):\n"
                                             "    with U.single_threaded_session():\n"
                                             "        learn(arglist)\n"},
                "a one-thread session helper opened by the training function of a single-process program",
                expect=[("common/tf_util.py", 7)]),
        Example({"train.py": "import tensorflow as tf\n"
                             "def train(model, data):\n"
                             "    config = tf.ConfigProto()\n"
                             "    config.intra_op_parallelism_threads = 1\n"
                             "    with tf.Session(config=config) as sess:\n"
                             "        return model.fit(sess, data)\n"},
                "a TensorFlow session's intra-op pool set to one thread, as an attribute of its config",
                expect=[("train.py", 4)], severity="warning"),
        Example({"examples/evaluation/evaluation_stsbenchmark.py": "import torch\n"
                                                                 "# Limit torch to 4 threads\n"
                                                                 "torch.set_num_threads(4)\n"
                                                                 "model = torch.nn.Linear(4, 4)\n"},
                "an example script's literal few threads (sentence-transformers): a note",
                expect=[("examples/evaluation/evaluation_stsbenchmark.py", 3)], severity="note"),
        Example({"learner.py": "import threading\nimport torch\n"
                               "def _prefetch(queue):\n"
                               "    torch.set_num_threads(1)\n"
                               "    while True:\n"
                               "        queue.put(load())\n"
                               "def train(model, queue):\n"
                               "    threading.Thread(target=_prefetch, args=(queue,), daemon=True).start()\n"
                               "    fit(model, queue)\n"},
                "a producer thread of the learner may pin the learner (whichever thread computes first)",
                expect=[("learner.py", 4)], severity="note"),
        Example({"torch_utils.py": "import torch\n"
                                   "def init_torch_runtime(cfg, max_num_threads=1):\n"
                                   "    if max_num_threads is not None:\n"
                                   "        torch.set_num_threads(max_num_threads)\n",
                 "learner_worker.py": "from torch_utils import init_torch_runtime\n"
                                      "def init_learner_process(cfg):\n"
                                      "    init_torch_runtime(cfg, max_num_threads=1)\n"},
                "a learner process pinned through a helper, though its name says worker",
                expect=[("learner_worker.py", 3)]),
        Example({"train.py": "import torch\n\ndef main():\n    torch.set_num_threads(1)\n    learn()\n"},
                "the learner pinned to one thread", expect=[("train.py", 4)]),
        Example({"train.py": "import os\nos.environ['OMP_NUM_THREADS'] = '1'\nimport torch\n"},
                "OMP_NUM_THREADS=1 set in the main process", expect=[("train.py", 2)]),
        Example({"ppo.py": "import os\n"
                           "os.environ['XLA_FLAGS'] = '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'\n"
                           "import jax\n"
                           "def main(args):\n"
                           "    threading.Thread(target=rollout, args=(args,)).start()\n"
                           "    learn(args)\n"},
                "XLA's CPU backend made single-threaded in the process whose threads act and learn",
                expect=[("ppo.py", 2)]),
        Example({"monobeast.py": "import os, threading\nos.environ['OMP_NUM_THREADS'] = '1'\n"
                                 "import torch.multiprocessing as mp\n"
                                 "def act(i, q):\n    q.put(rollout(i))\n"
                                 "def learn(model, opt, q):\n"
                                 "    loss = model(q.get()).mean()\n    loss.backward()\n    opt.step()\n"
                                 "def train(args, model, opt, q):\n"
                                 "    for i in range(args.num_actors):\n"
                                 "        mp.Process(target=act, args=(i, q)).start()\n"
                                 "    threading.Thread(target=learn, args=(model, opt, q)).start()\n"},
                "set for the actor processes, and inherited by this process, whose learner thread computes the "
                "gradients", expect=[("monobeast.py", 2)], severity="note"),
        Example({"run.sh": "#!/bin/bash\nexport OMP_NUM_THREADS=1\npython train.py\n"},
                "a launch script pins the learner too", expect=[("run.sh", 2)]),

        Example({"dqn_atari.py": "import torch\n"
                                 "@wrap_experiment(snapshot_mode='last')\n"
                                 "def dqn_atari(ctxt=None, env=None, seed=24):\n"
                                 "    trainer = Trainer(ctxt)\n"
                                 "    torch.set_num_threads(1)\n"
                                 "    trainer.setup(algo, env)\n"
                                 "    trainer.train(n_epochs=100, batch_size=32)\n"},
                "an experiment function, named for its task, that runs the training itself",
                expect=[("dqn_atari.py", 5)]),
        Example({"scripts/train.py": "import torch\n"
                                     "def train(config, device):\n"
                                     "    torch.set_num_threads(2)\n"
                                     "    model = build(config)\n"
                                     "    fit(model)\n"},
                "the learner fixed at a literal 2 threads", expect=[("scripts/train.py", 3)]),
        Example({"configs/config.yaml": "num_threads: 1\n",
                 "cli.py": "import os\nimport torch\n"
                           "def run_algorithm(cfg):\n"
                           "    os.environ['OMP_NUM_THREADS'] = str(cfg.num_threads)\n"
                           "    train(cfg)\n"},
                "a configured thread count exported after torch read it: it never reaches this process",
                expect=[("cli.py", 4)]),
        Example({"train.py": "import json, os\nimport torch\n"
                             "if __name__ == '__main__':\n"
                             "    config = json.load(open('config.json'))\n"
                             "    os.environ['OMP_NUM_THREADS'] = config['environment']['OMP_NUM_THREADS']\n"
                             "    ds = load(config).map(tokenize, num_proc=config['dataset']['num_proc'])\n"
                             "    fit(ds)\n"},
                "exported after `import torch` in a script whose only pool is a dataset's map(): no worker "
                "it is meant for, and the training process never gets it", expect=[("train.py", 5)], severity="warning"),
        Example({"train.py": "import os\nimport torch\n"
                             "def main():\n"
                             "    os.environ['OMP_NUM_THREADS'] = '1'\n"
                             "    fit()\n"},
                "a literal set after `import torch`: it does not pin this process (a note)",
                expect=[("train.py", 4)], severity="note"),
        Example({"utils/cpu.py": "import os\n"
                                 "def threads_to_use():\n"
                                 "    cpus = os.cpu_count()\n"
                                 "    return max(min(cpus // 2, 4), 1)\n",
                 "utils/torch.py": "import torch\nfrom utils import cpu\n"
                                   "torch.set_num_threads(cpu.threads_to_use())\n"},
                "a helper caps the learner's threads at 4 on any machine", expect=[("utils/torch.py", 3)]),
        Example({"torch_runner.py": "import os\nimport torch\n"
                                    "class Runner:\n"
                                    "    def load_config(self, params):\n"
                                    "        n = params.get('torch_threads', 'auto')\n"
                                    "        if n == 'auto':\n"
                                    "            n = max(1, min(4, (os.cpu_count() or 1) // self.world_size))\n"
                                    "        torch.set_num_threads(n)\n"},
                "the default path caps the runner's threads at 4", expect=[("torch_runner.py", 8)]),
        Example({"loader.py": "import torch\n"
                              "class ReplayLoader:\n"
                              "    def __init__(self, cfg, num_workers=2):\n"
                              "        torch.set_num_threads(1)\n"
                              "        self.pool = spawn_decoders(cfg, num_workers)\n",
                 "learner.py": "from loader import ReplayLoader\n"
                              "class SLLearner:\n"
                              "    def _setup_dataloader(self, cfg):\n"
                              "        self.loader = ReplayLoader(cfg, num_workers=cfg.data.num_workers)\n"
                              "    def train(self, batch):\n"
                              "        return self.model(batch).backward()\n"},
                "a pin in a helper class that the learner builds: it runs in the learner's process",
                expect=[("loader.py", 4)]),
        Example({"scripts/setups/train.sh": "export OMP_NUM_THREADS=1\n",
                 "scripts/sft.sh": "#!/bin/bash\nsource scripts/setups/train.sh\n"
                                   "torchrun --nproc_per_node=8 train.py --stage sft\n",
                 "scripts/debug.sh": "#!/bin/bash\n. ./setups/train.sh\npython train.py --num_workers 4\n"},
                "a setup script one of whose users starts a single process: that process's math is pinned",
                expect=[("scripts/setups/train.sh", 1)]),
    ]

    def finding(self, site, **fields):
        fields.setdefault("pins", "pins")
        return super().finding(site, **fields)

    def check(self, result):
        seen = set()

        def first(site) -> bool:
            """One finding a line, whichever branch speaks first."""
            if (site.file, site.line) in seen:
                return False
            seen.add((site.file, site.line))
            return True

        callers = None  # callee -> the functions that call it directly, built when first needed
        spawning = _calling_spawners(result, idioms.files_starting_processes(result.sites))
        launching = None  # launch scripts that start several ranks, found when first needed
        sourced_by: dict[str, set[str]] = {}
        # a dataset's `map(num_proc=...)` pool preprocesses data: no worker the export is meant for
        worker_spawning = idioms.files_starting_processes(
            [s for s in result.sites if not str(s.detail.get("backend") or "").endswith((".map", ".filter"))])
        for site in result.sites:
            if site.role == "consume" and site.detail.get("in_thread") and not is_test_file(site.file) \
                    and site.detail.get("backend") in _pin_backends():
                yield from self._in_a_thread(site)
                continue
            if site.role == "read" or is_test_file(site.file) or _in_worker(site) or _only_on_gpu(site):
                continue
            if site.role == "consume" and site.detail.get("backend") in _pin_backends() and \
                    _mpi_rank(result.meta.get(site.file)):
                continue  # one MPI rank of several (`mpirun -np 16`, one per core): one thread each is the layout
            if site.kind == "python" and site.key in THREAD_VARS and site.detail.get("after_import"):
                # torch's OpenMP runtime read its thread count at `import torch`: too late for
                # this process; the processes it starts inherit it (for workers: verify's policy)
                if site.file not in worker_spawning and first(site):
                    yield self._after_import(site)
                continue
            placed_by = None  # the learner's function that builds the helper this pin sits in
            if site.kind == "python" and not _in_main_process(site):
                if callers is None:
                    callers = _direct_callers(result)
                placed_by = _learner_caller(site, callers, result, spawning)
                if placed_by is None:
                    continue
            backend = site.detail.get("backend") or ""
            value = _xla_threads(site) if site.key == XLA_VAR else as_number(site.value)
            if site.kind == "python" and site.role == "consume" and backend in _pin_backends() and \
                    _fixed_count(site, value):
                # (in an example or a benchmark script the user runs as shipped: a note)
                if first(site):
                    yield self.finding(site, knob=site.key, related=[site], confidence="medium",
                                       what=f"{backend.rsplit('.', 1)[-1]}({value})",
                                       where_=_where(site.detail.get("function")), threads=f"{value} threads",
                                       why=" whatever the machine has; no setting reaches it",
                                       **({"severity": "note"} if in_examples(site.file) else {}))
                continue
            cap = site.detail.get("capped_at")
            if site.kind == "python" and site.role == "consume" and backend in _pin_backends() and value is None \
                    and cap and 1 <= cap["value"] <= FEW_THREADS and not in_examples(site.file):
                if first(site):
                    yield self._capped(site, backend, cap)
                continue
            if value != 1 or isinstance(value, bool):
                continue
            if site.kind == "python" and site.role == "consume" and backend in _pin_backends():
                what, why, conf = f"{backend.rsplit('.', 1)[-1]}(1)", "", "high"
            elif site.key == XLA_VAR and site.role != "read" and site.detail.get("how") in ("environ", None):
                # the flags of the process that sets them; processes it starts inherit them
                if site.kind == "python" and (site.file in spawning or site.detail.get("how") != "environ"):
                    continue
                what, why, conf = (f"{XLA_VAR}={show(site.value)}", " for XLA's CPU computations", "high") \
                    if site.kind == "python" else (f"{XLA_VAR}={show(site.value)} in a launch script",
                                                   " and every process it starts", "medium")
            elif site.key in THREAD_VARS and site.kind == "python" and site.file in spawning:
                # one thread per worker, inherited from the script that starts them: the policy
                # verify recommends (docs/verify.md "Threads and CPUs"), never a warning; a note
                # when this process computes the gradients too (monobeast's learner threads)
                math = (result.meta.get(site.file) or {}).get("main_process_math")
                if math and site.detail.get("how") == "environ" and first(site):
                    yield self._learner_too(site, math)
                continue
            elif site.key in THREAD_VARS and site.kind == "python" and site.detail.get("how") != "environ":
                continue  # `{"OMP_NUM_THREADS": "1"}` in a mapping: an environment for processes it launches
            elif site.key in THREAD_VARS and site.kind == "python":
                what, why, conf = f"{site.key}=1", " (set before the libraries load)", "high"
            elif site.key in THREAD_VARS and site.kind == "shell" and site.role == "define":
                if site.detail.get("via") == "env-prefix" and (
                        _TEST_RUN.match(site.source.strip()) or _TEST_COMMAND.search(str(site.detail.get("command") or ""))):
                    continue
                if launching is None:
                    launching = _multi_process_launches(result.sites, result.meta)
                    sourced_by = _sourced_by(result.meta)
                if site.file in launching:
                    continue  # one thread per rank of torchrun / deepspeed / mpirun: torchrun's own default
                if sourced_by.get(site.file) and sourced_by[site.file] <= launching:
                    continue  # a setup script sourced only by scripts that start several ranks
                what, why, conf = f"{site.key}=1 in a launch script", " and every process it starts", "medium"
            else:
                continue
            if not first(site):
                continue
            function = site.detail.get("function")
            yield self.finding(site, knob=site.key, related=[site], what=what, confidence=conf,
                               **({"severity": "note"} if conf == "medium" and site.kind == "python" else {}),
                               where_=_where(function, placed_by), threads="1 thread",
                               why=why + "; its math runs single-threaded")

    def _after_import(self, site):
        """`os.environ["OMP_NUM_THREADS"] = str(cfg.num_threads)` in a module that imported torch
        first (sheeprl's run_algorithm): the setting never reaches this process's math, and
        every process started afterwards inherits it. A configured value: a warning; a literal
        (often meant for this process, which it does not pin): a note."""
        expr = str(site.detail.get("expr") or "")
        configured = site.value is None and bool(_SETTING.search(expr)) and "cpu_count" not in expr
        value = show(site.value) if site.value is not None else f"`{expr}`"
        return self.finding(site, knob=site.key, related=[site], confidence="medium",
                            what=f"{site.key}={value}", pins="does not set", where_=_where(site.detail.get("function")),
                            threads="that count",
                            why=f": torch was imported at line {site.detail['after_import']} and its OpenMP "
                                "runtime read the thread count then; only processes started afterwards inherit it"
                                + (" (torch.set_num_threads() sets this one)" if configured else ""),
                            **({} if configured else {"severity": "note"}))

    def _learner_too(self, site, math):
        """`os.environ["OMP_NUM_THREADS"] = "1"` in a script that starts worker processes and
        computes the gradients in its own process (torchbeast's monobeast, FastTD3's train.py):
        the workers inherit one thread each, as verify recommends, and the learner gets one too."""
        where = "at module level" if math["function"] == "<module>" else f"in {math['function']}()"
        return self.finding(site, knob=site.key, related=[site], confidence="medium", severity="note",
                            what=f"{site.key}={show(site.value)}", where_=_where(site.detail.get("function")),
                            threads="1 thread",
                            why=f" as well as the worker processes this file starts, and this process computes "
                                f"the gradients (`{math['call']}()` {where}): its math runs single-threaded; "
                                f"set the workers' count in their entry point, or torch.set_num_threads() in the "
                                f"learner")

    def _capped(self, site, backend, cap):
        """`torch.set_num_threads(max(min(cpus // 2, 4), 1))`, directly or through a helper that
        returns it (ML-Agents' get_num_threads_to_use()): the learner's math never gets more than
        the bound, on a 64-core node as on a laptop."""
        keys = [s.get("key") for s in site.detail.get("flow", ()) if s.get("kind") == "config" and s.get("key")]
        unless = f" unless `{keys[0]}` is set" if keys else "; no setting reaches it"
        return self.finding(site, knob=site.key, related=[site], confidence="medium",
                            what=f"{backend.rsplit('.', 1)[-1]}(`{site.detail.get('expr') or '?'}`)",
                            where_=_where(site.detail.get("function")), threads=f"at most {cap['value']} threads",
                            why=f" (`{cap['text']}` at {cap['file']}:{cap['line']}) whatever the machine has{unless}")

    def _in_a_thread(self, site):
        """`torch.set_num_threads(1)` in the body of a threading.Thread target (a producer thread
        of the learner). torch keeps one count per process and hands it to each thread the first
        time that thread runs a parallel CPU operation: the learner's main thread is pinned when
        its first such operation comes after the call (even after its own set_num_threads), and
        keeps its count when it came before (measured, tests/test_torch_threads.py). Which runs
        first is not in the code: a note, confidence low, that says so."""
        value = as_number(site.value)
        function = site.detail.get("function")
        f = self.finding(site, knob=site.key, related=[site], what="", where_="", threads="", why="",
                         severity="note", confidence="low")
        threads = "1 thread" if value == 1 and not isinstance(value, bool) else f"{_thread_value(site)} threads"
        f.message = (f"{str(site.detail.get('backend')).rsplit('.', 1)[-1]}({_thread_value(site)}) in a thread "
                     f"({function}() runs as a threading.Thread target) sets the count torch hands to each thread "
                     f"at its first parallel CPU operation: if the learner's main thread has not run one before "
                     f"this, it runs on {threads} too, even after its own set_num_threads; one that has keeps "
                     f"its count")
        yield f

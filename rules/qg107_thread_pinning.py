"""QG107 thread-pinning: the main or learner process pins its math libraries to one thread."""

import re

from auditor.lint import idioms
from auditor.lint.base import Example, Rule, as_number, is_test_file

PIN_BACKENDS = ("torch.set_num_threads", "threadpoolctl.threadpool_limits", "threadpoolctl.threadpool_limits.wrap")
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_WORKERISH = re.compile(r"worker|init_fn|_init\b|initializer|subproc|child|actor|rollout_proc", re.IGNORECASE)


_LEARNERISH = re.compile(r"(^|[._])(main|train\w*|learn\w*|fit)$|trainer|learner",
                         re.IGNORECASE)


def _in_main_process(site) -> bool:
    """Module level, a main() / `if __name__ == "__main__"` block, or a trainer/learner function.

    A pin inside any other helper (a sandbox, a subprocess body) cannot be placed statically,
    so it is not reported: precision first.
    """
    d = site.detail
    function = d.get("function") or "<module>"
    return function == "<module>" or bool(d.get("in_main")) or bool(_LEARNERISH.search(function))


def _in_worker(site) -> bool:
    d = site.detail
    if d.get("in_worker"):
        return True
    function = d.get("function") or ""
    return bool(function) and bool(_WORKERISH.search(function))


class ThreadPinning(Rule):
    CODE = "QG107"
    NAME = "thread-pinning"
    SEVERITY = "warning"
    CONFIDENCE = "high"
    MESSAGE = "{what} pins {where_} to 1 thread{why}"
    RATIONALE = """\
`torch.set_num_threads(1)`, `OMP_NUM_THREADS=1` and `threadpool_limits(1)` are right inside
worker processes (many workers must not oversubscribe the CPUs), but in the main or learner
process they make every matrix multiply single-threaded: the learner silently runs at a
fraction of its speed. Inside a worker's entry point (a function passed as `target=`,
`initializer=`, `worker_init_fn=`, or an env factory) they are fine and not reported.

Set the limit in the worker's entry point instead, or size it to the cores the learner has.
An environment variable set in a script that starts worker processes is for them (they
inherit it): one thread per busy worker is the policy `qg-audit verify` recommends
(docs/verify.md, "Threads and CPUs"), so it is not reported; the learner it pins too is
measured by verify, which says when it needs more threads."""
    VALID = [
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
    ]
    INVALID = [
        Example({"train.py": "import torch\n\ndef main():\n    torch.set_num_threads(1)\n    learn()\n"},
                "the learner pinned to one thread", expect=[("train.py", 4)]),
        Example({"train.py": "import os\nos.environ['OMP_NUM_THREADS'] = '1'\nimport torch\n"},
                "OMP_NUM_THREADS=1 set in the main process", expect=[("train.py", 2)]),
        Example({"run.sh": "#!/bin/bash\nexport OMP_NUM_THREADS=1\npython train.py\n"},
                "a launch script pins the learner too", expect=[("run.sh", 2)]),
    ]

    def check(self, result):
        seen = set()
        spawning = idioms.files_starting_processes(result.sites)
        for site in result.sites:
            if site.role == "read" or is_test_file(site.file) or _in_worker(site):
                continue
            if site.kind == "python" and not _in_main_process(site):
                continue
            backend = site.detail.get("backend") or ""
            value = as_number(site.value)
            if value != 1 or isinstance(value, bool):
                continue
            if site.kind == "python" and site.role == "consume" and backend in PIN_BACKENDS:
                what, why, conf = f"{backend.rsplit('.', 1)[-1]}(1)", "", "high"
            elif site.key in THREAD_VARS and site.kind == "python" and site.file in spawning:
                # one thread per worker, inherited from the script that starts them: the policy
                # verify recommends (docs/verify.md "Threads and CPUs"), never a finding
                continue
            elif site.key in THREAD_VARS and site.kind == "python":
                what, why, conf = f"{site.key}=1", " (set before the libraries load)", "high"
            elif site.key in THREAD_VARS and site.kind == "shell" and site.role == "define":
                what, why, conf = f"{site.key}=1 in a launch script", " and every process it starts", "medium"
            else:
                continue
            if (site.file, site.line) in seen:
                continue
            seen.add((site.file, site.line))
            function = site.detail.get("function")
            yield self.finding(site, knob=site.key, related=[site], what=what, confidence=conf,
                               **({"severity": "note"} if conf == "medium" and site.kind == "python" else {}),
                               where_=f"the main process (in {function}())" if function and function != "<module>"
                               else "the main process (at module level)",
                               why=why + "; its math runs single-threaded")

"""qg-audit's start-up hook, loaded in every Python process of a verified target.

qg-audit puts this directory first on PYTHONPATH, so Python imports this module at
start-up (site.py imports ``sitecustomize``). It must cost almost nothing (budget 5 ms) and
never break the target, so it:

* does nothing unless QG_AUDIT_REPORT is set;
* writes one "loaded" line (hand-formatted: importing json here would cost ~1 ms);
* installs a finder that, only when the target itself imports one of a few modules, loads
  _qg_audit_patches.py and patches that module: multiprocessing.process (every child, all
  start methods, reports at bootstrap), multiprocessing.pool, multiprocessing.dummy and
  concurrent.futures (pool sizes, thread pools), the vector envs and collectors of gymnasium,
  stable-baselines3, tianshou and torchrl and torch's DataLoader (configured workers or a
  serial backend, with where the program created it), torch's thread setter and torch.distributed's init_process_group (a
  rank's world size as the rank sees it). torch is never imported by the hook: DataLoader
  workers are recognised by their target function, and num_workers / worker_id read from its
  arguments;
* reports a rank's RANK / WORLD_SIZE ... and the thread pins (OMP_NUM_THREADS ...) with the
  "loaded" line;
* with QG_AUDIT_PHASES set (``qg-audit profile --auto``), does the same with
  _qg_audit_phases.py, which times env steps, forward passes, transfers and waits;
* chains the ``sitecustomize`` that would have loaded without us.

Standard library only.
"""

import os
import sys

_ENV = "QG_AUDIT_REPORT"
_HERE = os.path.dirname(os.path.abspath(__file__))
_WATCHED = frozenset((
    "multiprocessing.process", "multiprocessing.pool", "concurrent.futures.process",
    "concurrent.futures.thread", "gymnasium.vector.sync_vector_env", "gymnasium.vector.async_vector_env",
    "torch.utils.data.dataloader", "torch", "torch.distributed.distributed_c10d", "multiprocessing.dummy",
    "stable_baselines3.common.vec_env.dummy_vec_env", "stable_baselines3.common.vec_env.subproc_vec_env",
    "tianshou.env", "torchrl.envs", "torchrl.collectors",
))
# Reported with the "loaded" line when set to a number: a rank's view of the job and the thread
# pins (rules/workers.yaml rank_env / thread_env name the same variables; a test keeps them in step).
_ENV_REPORTED = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMIX_RANK", "PMI_SIZE",
    "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
)


def _env_json():
    items = []
    for name in _ENV_REPORTED:
        value = os.environ.get(name)
        if value and value.isdigit():
            items.append('"%s":%d' % (name, int(value)))
    return ',"env":{%s}' % ",".join(items) if items else ""


# With QG_AUDIT_PHASES set (profile --auto): modules whose calls _qg_audit_phases.py times.
_PHASES_ENV = "QG_AUDIT_PHASES"
_PHASE_WATCHED = frozenset((
    "gymnasium.core", "gymnasium.vector.vector_env", "stable_baselines3.common.vec_env.base_vec_env",
    "tianshou.env.venvs", "torchrl.envs.common", "torch", "queue", "multiprocessing.queues", "ray",
    "torch.optim.optimizer", "stable_baselines3.common.on_policy_algorithm",
    "stable_baselines3.common.off_policy_algorithm",
))
_phases = False


class _QgAuditFinder:
    def find_spec(self, name, path=None, target=None):
        spec = None
        if name in _WATCHED:
            try:
                import _qg_audit_patches
            except Exception:
                return None
            spec = _qg_audit_patches.find_spec(self, name, path, target)
        if _phases and name in _PHASE_WATCHED:
            try:
                import _qg_audit_phases
            except Exception:
                return spec
            if spec is None:
                return _qg_audit_phases.find_spec(self, name, path, target)
            # watched by both (torch): the phase patch runs after the census patch
            patch = _qg_audit_phases.PATCHES.get(name)
            if patch is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                import _qg_audit_patches

                spec.loader = _qg_audit_patches._PatchingLoader(spec.loader, patch)
        return spec


def _install():
    path = os.environ.get(_ENV)
    if not path:
        return
    if any(name in sys.modules for name in _WATCHED):
        import _qg_audit_patches

        _qg_audit_patches.patch_loaded()
    global _phases
    _phases = bool(os.environ.get(_PHASES_ENV))
    if _phases and any(name in sys.modules for name in _PHASE_WATCHED):
        import _qg_audit_phases

        _qg_audit_phases.patch_loaded()
    sys.meta_path.insert(0, _QgAuditFinder())
    import time

    line = '{"v":1,"type":"hook","event":"loaded","pid":%d,"ppid":%d,"t":%.6f,"source":"hook"%s}\n' % (
        os.getpid(), os.getppid(), time.time(), _env_json())
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _chain():
    """Load the sitecustomize that this one shadows, if any."""
    from importlib.machinery import PathFinder

    here = os.path.normcase(_HERE)
    rest = [p for p in sys.path if os.path.normcase(os.path.abspath(p or ".")) != here]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    from importlib.util import module_from_spec

    module = module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # what the shadowed module would see as itself
    spec.loader.exec_module(module)


try:
    _install()
except Exception:  # the hook must never break the target
    pass
try:
    _chain()
except Exception as _exc:  # the user's own sitecustomize failed: say so as Python would
    print("Error in sitecustomize; set PYTHONVERBOSE for traceback:", repr(_exc), file=sys.stderr)

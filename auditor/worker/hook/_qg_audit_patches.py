"""qg-audit hook, part 2: the patches. Loaded only when the target imports a watched module.

Kept apart from sitecustomize.py so that start-up compiles almost nothing (environments
often set PYTHONDONTWRITEBYTECODE, and then every start compiles the module from source).
Standard library only. Record shape matches auditor/worker/report.py.
"""

import os
import sys

_ENV = "QG_AUDIT_REPORT"


def _write(line):
    path = os.environ.get(_ENV)
    if not path:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return
    try:
        os.write(fd, line.encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def _emit(rtype, **fields):
    import json
    import threading
    import time

    rec = {"v": 1, "type": rtype, "pid": os.getpid(), "ppid": os.getppid(), "t": time.time(),
           "thread": threading.current_thread().name, "source": "hook"}
    rec.update(fields)
    _write(json.dumps(rec, default=repr, separators=(",", ":")) + "\n")


# -- patches, applied when the target imports the module ------------------------------------

_START_METHODS = {"ForkProcess": "fork", "SpawnProcess": "spawn", "ForkServerProcess": "forkserver",
                  "ForkPoolWorker": "fork", "SpawnPoolWorker": "spawn", "ForkServerPoolWorker": "forkserver"}


def _bound_args(func, args, kwargs):
    try:
        import inspect

        return dict(inspect.signature(func).bind(*args, **kwargs).arguments)
    except Exception:
        return {}


def _report_child(proc):
    target = getattr(proc, "_target", None)
    module = getattr(target, "__module__", "") or ""
    qualname = getattr(target, "__qualname__", getattr(target, "__name__", "")) or ""
    values, extra = {}, {}
    if module.startswith("torch.utils.data") and qualname.endswith("_worker_loop"):
        backend = "torch DataLoader"
        bound = _bound_args(target, proc._args, proc._kwargs)
        for key in ("num_workers", "worker_id"):
            if isinstance(bound.get(key), int):
                values[key] = bound[key]
        if "worker_id" in values:
            extra["worker_id"] = values["worker_id"]
    elif module == "concurrent.futures.process":
        backend = "ProcessPoolExecutor"
    elif module == "multiprocessing.pool":
        backend = "multiprocessing.Pool"
    elif module.startswith("gymnasium.vector"):
        backend = "gymnasium AsyncVectorEnv"
        bound = _bound_args(target, proc._args, proc._kwargs)
        if isinstance(bound.get("index"), int):
            extra["worker_id"] = bound["index"]
    elif module.startswith(_CHILD_BACKENDS):
        backend = next(name for prefix, name in _CHILD_BACKENDS_BY_PREFIX if module.startswith(prefix))
    else:
        backend = "multiprocessing.Process"
    method = None
    for cls in type(proc).__mro__:
        method = _START_METHODS.get(cls.__name__)
        if method:
            break
    if method is None:
        try:
            import multiprocessing

            method = multiprocessing.get_start_method(allow_none=True)
        except Exception:
            method = None
    if method is None and "--multiprocessing-fork" in sys.argv:
        method = "spawn"
    _emit("worker", role=None, backend=backend, start_method=method, name=getattr(proc, "_name", None),
          target=(module + "." + qualname).strip("."), values=values, **extra)


def _patch_mp_process(mod):
    original = mod.BaseProcess._bootstrap

    def _bootstrap(self, *args, **kwargs):
        try:
            _report_child(self)
        except Exception:
            pass
        code = None
        try:
            code = original(self, *args, **kwargs)
            return code
        finally:
            _report_child_exit(code)

    mod.BaseProcess._bootstrap = _bootstrap


def _after_init(cls, describe):
    """Wrap cls.__init__ so that describe(self) -> dict is reported as a pool record."""
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            fields = describe(self)
            if fields:
                fields.setdefault("creator", _creator())
                _emit("pool", **fields)
        except Exception:
            pass

    cls.__init__ = __init__


def _patch_pool(mod):
    def describe(pool):
        threads = type(pool).__name__ == "ThreadPool"
        backend = "multiprocessing." + type(pool).__name__
        if threads and _called_from("multiprocessing.dummy"):
            backend = "multiprocessing.dummy.Pool"
        return {"backend": backend, "size": pool._processes, "threads": threads}

    _after_init(mod.Pool, describe)


def _called_from(module):
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == module:
            return True
        frame = frame.f_back
    return False


_DUMMY_PROCESSES = {}  # creation site -> multiprocessing.dummy.Process objects created there


def _patch_mp_dummy(mod):
    """multiprocessing.dummy.Process is a thread: count them per creation site."""
    def describe(proc):
        if _called_from("multiprocessing.pool"):  # a ThreadPool's own threads: the Pool record says it
            return None
        facts = _stack_facts()
        site = facts.get("site") or "?"
        _DUMMY_PROCESSES[site] = _DUMMY_PROCESSES.get(site, 0) + 1
        return {"backend": "multiprocessing.dummy.Process", "size": _DUMMY_PROCESSES[site], "threads": True,
                "creator": _creator(), "made": facts}

    _after_init(mod.DummyProcess, describe)


def _patch_futures_process(mod):
    def describe(ex):
        ctx = getattr(ex, "_mp_context", None)
        method = ctx.get_start_method() if ctx is not None else None
        # Since 3.9 non-fork executors start workers on demand: fewer than max_workers is "under-used".
        return {"backend": "ProcessPoolExecutor", "size": ex._max_workers, "start_method": method,
                "lazy": method != "fork"}

    _after_init(mod.ProcessPoolExecutor, describe)


def _patch_futures_thread(mod):
    _after_init(mod.ThreadPoolExecutor,
                lambda ex: {"backend": "ThreadPoolExecutor", "size": ex._max_workers, "threads": True})


def _patch_sync_vec(mod):
    _after_init(mod.SyncVectorEnv, _serial("gymnasium SyncVectorEnv", "num_envs"))


def _patch_async_vec(mod):
    _after_init(mod.AsyncVectorEnv, lambda env: {"backend": "gymnasium AsyncVectorEnv", "size": env.num_envs})


def _patch_dataloader(mod):
    """Reported at the first iteration (a loader never iterated ran nothing), with where it
    was created (recorded by __init__)."""
    cls = mod.DataLoader
    original = cls._get_iterator
    original_init = cls.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        try:
            self._qg_audit_made = _stack_facts()
        except Exception:
            pass

    def _get_iterator(self):
        try:
            if not getattr(self, "_qg_audit_reported", False):
                self._qg_audit_reported = True
                n = self.num_workers
                made = getattr(self, "_qg_audit_made", None) or {}
                _emit("pool", backend="torch DataLoader", size=n, serial=n == 0, values={"num_workers": n},
                      creator=_creator_from(made), made=made)
        except Exception:
            pass
        return original(self)

    cls.__init__ = _wraps(original_init, __init__)
    cls._get_iterator = _get_iterator


def _serial(backend, count_attr):
    """describe() for a backend that runs its envs / collection in the creating process."""
    def describe(obj):
        if getattr(obj, "_qg_audit_reported", False):  # a subclass's __init__ called ours
            return None
        obj._qg_audit_reported = True
        size = getattr(obj, count_attr, None) if count_attr else 1
        made = _stack_facts()
        return {"backend": backend, "size": size if isinstance(size, int) else None, "serial": True,
                "creator": _creator_from(made), "made": made}

    return describe


def _parallel(backend, count_attr):
    def describe(obj):
        if getattr(obj, "_qg_audit_reported", False):
            return None
        obj._qg_audit_reported = True
        size = getattr(obj, count_attr, None)
        made = _stack_facts()
        procs = getattr(obj, "processes", None) or []
        method = _START_METHODS.get(type(procs[0]).__name__) if procs else None
        return {"backend": backend, "size": size if isinstance(size, int) else None, "start_method": method,
                "creator": _creator_from(made), "made": made}

    return describe


def _patch_classes(table):
    """A patch for a module (or package) that exposes classes: {class name: describe}."""
    def patch(mod):
        for name, describe in table.items():
            cls = getattr(mod, name, None)
            if isinstance(cls, type) and not getattr(cls.__init__, "_qg_audit", False):
                _after_init(cls, describe)
                cls.__init__._qg_audit = True

    return patch


# Backends seen at run time by name (docs/verify.md "Serial backends"). The module is where
# the class is defined or re-exported; patching the class object covers every import path.
_SB3_DUMMY = _patch_classes({"DummyVecEnv": _serial("stable-baselines3 DummyVecEnv", "num_envs")})
_SB3_SUBPROC = _patch_classes({"SubprocVecEnv": _parallel("stable-baselines3 SubprocVecEnv", "num_envs")})
_TIANSHOU = _patch_classes({"DummyVectorEnv": _serial("tianshou DummyVectorEnv", "env_num"),
                            "SubprocVectorEnv": _parallel("tianshou SubprocVectorEnv", "env_num"),
                            "ShmemVectorEnv": _parallel("tianshou ShmemVectorEnv", "env_num")})
_TORCHRL_ENVS = _patch_classes({"SerialEnv": _serial("torchrl SerialEnv", "num_workers"),
                                "ParallelEnv": _parallel("torchrl ParallelEnv", "num_workers")})
_TORCHRL_COLLECTORS = _patch_classes({"SyncDataCollector": _serial("torchrl SyncDataCollector", None)})
# worker processes named by the module of their target function
_CHILD_BACKENDS_BY_PREFIX = (
    ("stable_baselines3.common.vec_env", "stable-baselines3 SubprocVecEnv"),
    ("tianshou.env", "tianshou SubprocVectorEnv"),
    ("torchrl", "torchrl worker"),
)
_CHILD_BACKENDS = tuple(prefix for prefix, _ in _CHILD_BACKENDS_BY_PREFIX)
# Locals of the library frames between the user's call and the constructor that chose the
# backend (make_vec_env's vec_env_cls, gymnasium make_vec's vectorization_mode ...).
_CHOOSERS = ("vec_env_cls", "vectorization_mode", "num_workers", "n_envs", "num_envs", "start_method")


def _stack_facts(limit=12):
    """Where a backend object is being created: the first frame of the program's own code
    (``site``, its function and source line), up to two of its callers, and the library
    frames in between with the locals that choose a backend. Standard library only."""
    frame = sys._getframe(1)
    via, callers, facts = [], [], {}
    depth = 0
    while frame is not None and depth < 40:
        depth += 1
        module = frame.f_globals.get("__name__") or ""
        code = frame.f_code
        if module == __name__ or module in ("functools", "_qg_audit_phases"):
            frame = frame.f_back
            continue
        here = "%s:%d" % (code.co_filename, frame.f_lineno)
        if _is_library_file(code.co_filename):
            if not facts and len(via) < limit:
                chosen = {}
                for name in _CHOOSERS:
                    if name in frame.f_locals:
                        chosen[name] = _short(frame.f_locals[name])
                via.append({"function": code.co_name, "module": module, "site": here, "locals": chosen})
        elif not facts:
            facts = {"site": here, "function": code.co_name, "module": module,
                     "line": _source_line(code.co_filename, frame.f_lineno)}
        elif len(callers) < 2:
            callers.append("%s in %s" % (here, code.co_name))
        else:
            break
        frame = frame.f_back
    if via:
        facts["via"] = via
    if callers:
        facts["callers"] = callers
    return facts


def _creator_from(made):
    """The pool record's creator, from _stack_facts(): the program's frame, never a library's."""
    if not made or not made.get("site"):
        return None
    return {"module": made.get("module") or "", "site": made["site"], "library": False}


def _short(value):
    try:
        text = getattr(value, "__name__", None) if isinstance(value, type) else None
        text = text or repr(value)
    except Exception:
        return "?"
    return text[:80]


def _source_line(filename, lineno):
    try:
        import linecache

        return linecache.getline(filename, lineno).strip()[:160]
    except Exception:
        return ""


def _report_child_exit(code):
    """The worker's end: with its start report, a run shorter than the probe's poll is still counted."""
    try:
        _emit("worker-exit", exitcode=code if isinstance(code, int) else None)
    except Exception:
        pass


_POOL_INTERNALS = ("_qg_audit_patches", "concurrent.futures", "multiprocessing", "threading")


def _creator():
    """Who created a pool: the first caller outside the pool machinery, and whether it is library code."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if not any(module == p or module.startswith(p + ".") for p in _POOL_INTERNALS):
            break
        frame = frame.f_back
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    return {"module": frame.f_globals.get("__name__") or "", "site": "%s:%d" % (filename, frame.f_lineno),
            "library": _is_library_file(filename)}


def _is_library_file(filename):
    if "site-packages" in filename or "dist-packages" in filename or filename.startswith("<frozen"):
        return True
    try:
        import sysconfig

        stdlib = sysconfig.get_paths().get("stdlib") or ""
    except Exception:
        return False
    return bool(stdlib) and os.path.abspath(filename).startswith(os.path.abspath(stdlib) + os.sep)


def _caller_site(depth=2):
    frame = sys._getframe(depth)
    return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def _wraps(original, wrapper):
    import functools

    try:
        return functools.wraps(original)(wrapper)
    except Exception:  # a builtin without some attribute: the bare wrapper still works
        return wrapper


def _patch_torch(mod):
    """torch.set_num_threads(N): report the value and who set it (the twin of scan's QG107)."""
    original = getattr(mod, "set_num_threads", None)
    if original is None:
        return

    def set_num_threads(*args, **kwargs):
        result = original(*args, **kwargs)
        try:
            value = args[0] if args else kwargs.get("int", kwargs.get("num"))
            _emit("threads", setter="torch.set_num_threads", value=value, site=_caller_site())
        except Exception:
            pass
        return result

    mod.set_num_threads = _wraps(original, set_num_threads)
    try:  # what the process runs with unless it sets another count (OMP_NUM_THREADS, or the cores)
        _emit("threads", setter="torch default", value=mod.get_num_threads(), site=None, default=True)
    except Exception:
        pass


def _patch_c10d(mod):
    """init_process_group: the world this process believes it is part of."""
    original = getattr(mod, "init_process_group", None)
    if original is None:
        return

    def init_process_group(*args, **kwargs):
        result = original(*args, **kwargs)
        try:
            _emit("rank", rank=mod.get_rank(), world_size=mod.get_world_size(),
                  backend=str(mod.get_backend()), site=_caller_site())
        except Exception:
            pass
        return result

    mod.init_process_group = _wraps(original, init_process_group)


_PATCHES = {
    "multiprocessing.process": _patch_mp_process,
    "multiprocessing.pool": _patch_pool,
    "concurrent.futures.process": _patch_futures_process,
    "concurrent.futures.thread": _patch_futures_thread,
    "gymnasium.vector.sync_vector_env": _patch_sync_vec,
    "gymnasium.vector.async_vector_env": _patch_async_vec,
    "torch.utils.data.dataloader": _patch_dataloader,
    "torch": _patch_torch,
    "torch.distributed.distributed_c10d": _patch_c10d,
    "multiprocessing.dummy": _patch_mp_dummy,
    "stable_baselines3.common.vec_env.dummy_vec_env": _SB3_DUMMY,
    "stable_baselines3.common.vec_env.subproc_vec_env": _SB3_SUBPROC,
    "tianshou.env": _TIANSHOU,
    "torchrl.envs": _TORCHRL_ENVS,
    "torchrl.collectors": _TORCHRL_COLLECTORS,
}


class _PatchingLoader:
    """Runs the real loader, then our patch. Everything else is delegated to the real loader."""

    def __init__(self, loader, patch):
        self._loader, self._patch = loader, patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._patch(module)
        except Exception:
            pass

    def __getattr__(self, name):
        return getattr(self._loader, name)


def find_spec(finder, name, path, target, patches=None):
    """The real spec of NAME, with a loader that applies our patch (from PATCHES, by default
    this module's) after the module runs."""
    patch = (_PATCHES if patches is None else patches).get(name)
    if patch is None:
        return None
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(name, path, target)
        if spec is not None:
            break
    else:
        return None
    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
        spec.loader = _PatchingLoader(spec.loader, patch)
    return spec


def patch_loaded():
    """Patch watched modules that were imported before the hook ran (rare)."""
    for name, patch in _PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)



"""qg-audit hook, part 3: automatic sampling phases (``qg-audit profile --auto``). Stdlib only.

Loaded only when QG_AUDIT_PHASES is set and the target imports one of the modules in
sitecustomize's _PHASE_WATCHED. It wraps the calls that make up a sampling step:

* env: gymnasium ``Env.step`` and ``VectorEnv.step`` / ``step_wait`` (every subclass that
  defines them, also ones defined later), SB3 ``VecEnv.step``, tianshou ``BaseVectorEnv.step``,
  torchrl ``EnvBase.step``;
* fwd: ``torch.nn.Module.__call__``;
* xfer: ``Tensor.to`` / ``cuda`` / ``cpu`` / ``numpy`` / ``pin_memory``, ``queue.Queue.put``,
  ``multiprocessing`` queue ``put``;
* wait (trainer): DataLoader iterator ``__next__``, ``queue.Queue.get``, multiprocessing
  queue ``get``, ``ray.get``.

Only the outermost wrapped call of a thread is timed: a ``Tensor.to`` inside a forward pass
is forward time, a gymnasium wrapper's ``step`` calling the inner env's ``step`` is one env
step. A sampling step closes when an env step returns (so step k holds the forward and
transfer that led to env step k), with ``num_envs`` samples for a vector env, 1 otherwise.
Waits count only in a process's main thread, and only when that thread steps no environment
(the trainer), not in pool workers waiting for their next task; the worker processes of
vector envs and DataLoaders time nothing (their parent's ``step_wait`` / ``__next__``
already holds that time). A trainer step runs from the
start of one wait to the start of the next. Rows go out as "timing" records in
SamplingTimer's format (auditor/worker/timing.py), timer "auto/<thread>", ``source:
"auto"``, plus ``calls`` (outermost timed calls per phase) and ``forward_modes``.

Training in the sampling thread (a collect-then-train loop: SB3, cleanrl) is not sampling.
A training span runs from the first forward with autograd on (or the first backward /
optimizer step) after an env step to the end of the last backward or optimizer step before
the next one; in SB3, all time outside ``collect_rollouts`` after its first return. A
forward with autograd on that no backward or optimizer step follows before the next env step
was a sampling forward after all. Each step row's training time is sent apart
(``training``), so that step time minus it is sampling time, and each span closes an
"alternation" trainer row (wait = sampling since the previous span, compute = the span).
The forward modes count sampling forwards only. With QG_AUDIT_STACKS (milliseconds), the
sampling threads' stacks are sampled (_qg_audit_stacks.py).
"""

import os
import sys
import threading
import time
import types
from array import array

import _qg_audit_patches as _patches

try:  # low-rate stack samples of the sampling threads (profile --auto sets QG_AUDIT_STACKS)
    import _qg_audit_stacks as _stacks

    if not _stacks.enabled():
        _stacks = None
except Exception:
    _stacks = None

ENV_VAR = "QG_AUDIT_PHASES"
PHASES = ("env", "fwd", "xfer")
FLUSH_EVERY = 1024  # rows, or FLUSH_NS, whichever first (a flush costs ~50 us: amortised over 1024 steps)
FLUSH_NS = 1_000_000_000
_v = os.environ.get(ENV_VAR, "")
WARMUP_STEPS = int(_v) if _v.isdigit() else 0  # QG_AUDIT_PHASES=K: K steps declared as warm-up
_ENV, _FWD, _XFER, _WAIT = 0, 1, 2, 3
# st.busy while inside a timed call (truthy): what the stack sampler reads; True in backend workers
_IN_ENV, _IN_FWD, _IN_XFER, _IN_WAIT, _IN_TRAIN = 1, 2, 3, 4, 5
_TRAIN_FWD, _TRAIN_BACKWARD, _TRAIN_OPT, _TRAIN_SPANS = 0, 1, 2, 3
_now = time.perf_counter_ns


class _S:
    """Holds the per-thread states. A class, not a bare threading.local, because wrappers get
    pickled by value with the classes they sit on (cloudpickle does that to a __main__ env class
    sent to a spawn/forkserver worker): their globals must pickle, and a class pickles by name."""

    tls = threading.local()


_tls = _S.tls  # the same object, for tests and bench/bench_timing.py; the wrappers use _S.tls
_states = []  # every thread's state in this process, for the exit flush
_lock = threading.Lock()
_exit_hooked = [False]


class _State:
    """One thread's accumulators; its rows are an auto timer of their own."""

    __slots__ = ("busy", "acc", "step_t0", "rows", "nrows", "sent", "origin", "t0_wall", "thread",
                 "main", "wait_end", "wait_acc", "trows", "ntrows", "tsent",
                 "calls", "modes", "flush_due", "trn", "span_t0", "span_end", "pend", "pend_modes",
                 "in_collect", "collect_exit", "train", "arows", "samp_since", "tid", "ident",
                 "stacks", "pend_samples", "resolved", "stacks_sent", "opt_t0")

    def __init__(self):
        self.busy = _inside_backend_worker()  # a permanently busy state times nothing
        self.acc = [0, 0, 0]
        self.rows = []  # flat step rows, 5 ints each: list.extend measured ~5x cheaper than array.fromlist
        self.nrows = self.sent = 0
        self.origin = _now()
        self.step_t0 = self.origin  # made at the thread's first wrapped call: step 1 starts there
        self.t0_wall = time.time()
        th = threading.current_thread()
        self.thread = th.name
        self.main = th is threading.main_thread() and not _target_in(_POOL_WORKERS)  # waits count here
        self.wait_end = None
        self.wait_acc = 0
        self.trows = []
        self.ntrows = self.tsent = 0
        self.calls = [0, 0, 0, 0]  # outermost timed calls per slot; env steps are the rows themselves
        self.modes = [0, 0, 0]  # sampling forward calls: grad enabled, no_grad, inference_mode
        self.flush_due = self.origin  # the first env step is sent at once: it tells qg-audit the job is ready
        self.trn = []  # per step row: training ns inside it (not sampling)
        self.span_t0 = None  # start of the (candidate) training span since the last env step
        self.span_end = 0  # end of its last backward / optimizer step (0: not confirmed yet)
        self.pend = [0, 0, 0]  # fwd / xfer ns since the span opened or was last confirmed: training if confirmed
        self.pend_modes = [0, 0, 0]
        self.in_collect = 0  # inside SB3's collect_rollouts (depth)
        self.collect_exit = None  # when collect_rollouts last returned
        self.train = [0, 0, 0, 0]  # training forwards, backward calls, optimizer steps, spans
        self.arows = []  # alternation trainer rows: end_ns, sampling ns since the previous span, span ns
        self.samp_since = 0
        self.tid = threading.get_native_id() if hasattr(threading, "get_native_id") else None
        self.ident = th.ident
        self.stacks = {}  # (phase, leaf, program line) -> samples, written by the stack sampler only
        self.pend_samples = []  # samples taken while a span was open: training if it is confirmed
        self.resolved = []  # (phase or None, samples) handed from this thread to the sampler
        self.stacks_sent = 0
        self.opt_t0 = None


# Worker processes of these backends step environments (or load batches) for a parent
# whose own call (step_wait, DataLoader __next__) already counts that time: not timed again.
_BACKEND_WORKERS = ("gymnasium.vector", "stable_baselines3.common.vec_env", "tianshou.env", "torchrl.envs",
                    "torch.utils.data")
# Pool workers run the user's tasks (timed) but wait for the next task on a queue: not a trainer.
_POOL_WORKERS = ("multiprocessing.pool", "concurrent.futures.process")


def _target_in(modules):
    """Is this process a multiprocessing child whose target function lives in one of modules?"""
    mp_process = sys.modules.get("multiprocessing.process")
    if mp_process is None:
        return False
    target = getattr(mp_process.current_process(), "_target", None)
    module = getattr(target, "__module__", "") or ""
    return module.startswith(modules)


def _inside_backend_worker():
    return _target_in(_BACKEND_WORKERS)


def _state():
    st = _State()
    _S.tls.st = st
    with _lock:
        _states.append(st)
    _hook_exit()
    return st


# -- the wrappers: one shape per kind ---------------------------------------------------------
# Each takes (a, b=_NO, /, *args, **kwargs) and calls orig(a) or orig(a, b) directly when
# that is all it got (x.cpu(), x.to(device), q.put(item), env.step(action), module(obs)):
# forwarding *args/**kwargs was measured at ~1.5x the cost of the whole rest of a wrapper.


class _NO:
    """'No argument here': a class, so that it keeps its identity when a wrapper is pickled."""



def _through(orig, a, b, args, kwargs):
    if a is _NO:
        return orig(**kwargs)
    return orig(a, **kwargs) if b is _NO else orig(a, b, *args, **kwargs)


def _timed(orig, slot):
    """Wrap orig so that its outermost calls add to phase ``slot`` of the current step."""
    def wrapper(a, b=_NO, /, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if st.busy:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        st.busy = code
        t0 = _now()
        try:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        finally:
            if st.span_t0 is None:
                st.acc[slot] += _now() - t0
            else:  # inside an open training span: training if a backward or optimizer step follows
                st.pend[slot] += _now() - t0
            st.busy = False
            st.calls[slot] += 1

    code = slot + 1
    return _named(wrapper, orig)


def _forward(orig, grad_enabled, inference_mode):
    """Module.__call__: forward time, and whether autograd was on (sampling does not need it)."""
    def wrapper(a, b=_NO, /, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if st.busy:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        st.busy = _IN_FWD
        mode = 2 if inference_mode() else 0 if grad_enabled() else 1
        t0 = _now()
        if mode == 0 and st.span_t0 is None and not st.in_collect:
            st.span_t0 = t0  # autograd on outside collection: perhaps training (a backward will tell)
        try:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        finally:
            if st.span_t0 is None:
                st.acc[_FWD] += _now() - t0
                st.modes[mode] += 1
            else:
                st.pend[_FWD] += _now() - t0
                st.pend_modes[mode] += 1
            st.busy = False
            st.calls[_FWD] += 1

    return _named(wrapper, orig)


def _confirm(st, t0, t1):
    """A backward, an optimizer step or time outside collect_rollouts ran from t0 to t1: the
    span since its opening is training, and what was pending in it too."""
    if st.span_t0 is None or t0 < st.span_t0:
        st.span_t0 = t0
    if t1 > st.span_end:
        st.span_end = t1
    pm = st.pend_modes
    st.train[_TRAIN_FWD] += pm[0] + pm[1] + pm[2]
    pm[0] = pm[1] = pm[2] = 0
    st.pend[_FWD] = st.pend[_XFER] = 0
    if st.pend_samples:
        done, st.pend_samples = st.pend_samples, []
        st.resolved.append(("train", done))


def _close_span(st, t1):
    """At an env step: the training span's ns (0 when it was never confirmed); what was
    pending after its last confirmation was sampling."""
    train = st.span_end - st.span_t0 if st.span_end else 0
    acc, pend, pm, modes = st.acc, st.pend, st.pend_modes, st.modes
    acc[_FWD] += pend[_FWD]
    acc[_XFER] += pend[_XFER]
    pend[_FWD] = pend[_XFER] = 0
    modes[0] += pm[0]
    modes[1] += pm[1]
    modes[2] += pm[2]
    pm[0] = pm[1] = pm[2] = 0
    if st.pend_samples:
        done, st.pend_samples = st.pend_samples, []
        st.resolved.append((None, done))
    if train:
        st.train[_TRAIN_SPANS] += 1
        st.arows.extend((st.span_end - st.origin, st.samp_since, train))
        st.samp_since = 0
    st.span_t0 = None
    st.span_end = 0
    return train


def _train_op(orig, kind):
    """Tensor.backward / torch.autograd.backward: a training call (outside collect_rollouts)."""
    def wrapper(a=_NO, b=_NO, /, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if st.busy:
            return _through(orig, a, b, args, kwargs)
        st.busy = _IN_TRAIN
        t0 = _now()
        try:
            return _through(orig, a, b, args, kwargs)
        finally:
            st.busy = False
            st.train[kind] += 1
            if not st.in_collect:
                _confirm(st, t0, _now())

    return _named(wrapper, orig)


def _opt_pre(optimizer, args, kwargs):
    """torch's global optimizer-step pre-hook: an optimizer step begins."""
    try:
        st = _S.tls.st
    except AttributeError:
        st = _state()
    if not st.busy:
        st.busy = _IN_TRAIN
        st.opt_t0 = _now()


def _opt_post(optimizer, args, kwargs):
    try:
        st = _S.tls.st
    except AttributeError:
        return
    if st.busy != _IN_TRAIN or st.opt_t0 is None:
        return
    st.busy = False
    t0, st.opt_t0 = st.opt_t0, None
    st.train[_TRAIN_OPT] += 1
    if not st.in_collect:
        _confirm(st, t0, _now())


def _collect(orig):
    """SB3's collect_rollouts: sampling; the time since its previous return was training (and logging)."""
    def wrapper(self, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if not st.in_collect and st.collect_exit is not None:
            _confirm(st, st.collect_exit, _now())
        st.in_collect += 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            st.in_collect -= 1
            if not st.in_collect:
                st.collect_exit = _now()

    return _named(wrapper, orig)


def _env_step(orig, samples):
    """An env step: env time, and the end of one sampling step.

    ``samples``: None (1 sample), a str (the env's attribute holding the count, e.g.
    ``num_envs``) or a function ``(env, args, kwargs) -> count``.
    """
    attr = samples if isinstance(samples, str) else None
    count = samples if callable(samples) else None

    def wrapper(a, b=_NO, /, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if st.busy:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        st.busy = _IN_ENV
        t0 = _now()
        try:
            if args or kwargs:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        finally:
            t1 = _now()
            st.busy = False
            train = 0 if st.span_t0 is None else _close_span(st, t1)
            acc = st.acc
            acc[_ENV] += t1 - t0
            n = 1
            if attr is not None:
                n = getattr(a, attr, 1)
                if n.__class__ is not int or n < 1:
                    n = 1
            elif count is not None:
                try:
                    n = int(count(a, (() if b is _NO else (b,)) + args, kwargs))
                except Exception:
                    n = 1
            step = t1 - st.step_t0
            st.rows.extend((step, n, acc[0], acc[1], acc[2]))
            st.trn.append(train)
            st.samp_since += step - train
            acc[0] = acc[1] = acc[2] = 0
            st.step_t0 = t1
            st.nrows += 1
            if st.nrows >= FLUSH_EVERY or t1 >= st.flush_due:
                _flush(st)

    return _named(wrapper, orig)


def _wait(orig):
    """A trainer wait: closes the trainer step begun at the previous wait.

    ``a`` is optional here: ray.get is a function and may be called with keywords only.
    """
    def wrapper(a=_NO, b=_NO, /, *args, **kwargs):
        try:
            st = _S.tls.st
        except AttributeError:
            st = _state()
        if st.busy or not st.main:
            if args or kwargs or a is _NO:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        st.busy = _IN_WAIT
        t0 = _now()
        end = st.wait_end
        if end is not None:  # the previous wait and the compute after it are one trainer step
            st.trows.extend((t0 - st.origin, st.wait_acc, t0 - end))
            st.ntrows += 1
        try:
            if args or kwargs or a is _NO:
                return _through(orig, a, b, args, kwargs)
            return orig(a) if b is _NO else orig(a, b)
        finally:
            t1 = _now()
            st.busy = False
            st.wait_acc = t1 - t0
            st.wait_end = t1
            st.calls[_WAIT] += 1
            if st.ntrows >= FLUSH_EVERY or t1 >= st.flush_due:
                _flush(st)

    return _named(wrapper, orig)


def _named(wrapper, orig):
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(orig, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = orig
    wrapper._qg_audit_phase = True
    return wrapper


def _wrap(cls, name, make):
    """Replace cls.<name> (a plain function defined on cls itself) with make(original), once.

    A staticmethod, classmethod or property is left alone: a function in its place would
    bind differently.
    """
    orig = cls.__dict__.get(name)
    if not isinstance(orig, types.FunctionType) or getattr(orig, "_qg_audit_phase", False):
        return
    setattr(cls, name, make(orig))


def _class_tree(base, wrap_one):
    """Apply wrap_one to base, to its subclasses so far, and to every subclass defined later."""
    seen, todo = set(), [base]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        wrap_one(cls)
        todo.extend(cls.__subclasses__())
    previous = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if previous is not None:
            previous.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            wrap_one(cls)
        except Exception:
            pass

    base.__init_subclass__ = classmethod(__init_subclass__)


# -- samples per env step ---------------------------------------------------------------------

def _tianshou(self, args, kwargs):
    ids = kwargs.get("id", args[1] if len(args) > 1 else None)
    if ids is None:
        return getattr(self, "env_num", 1)
    return len(ids) if hasattr(ids, "__len__") else 1


def _torchrl(self, args, kwargs):
    n = 1
    for d in getattr(self, "batch_size", ()) or ():
        n *= int(d)
    return n


# -- patches, one per watched module ------------------------------------------------------------

def _env_tree(base, samples, names=("step",)):
    def wrap_one(cls):
        for name in names:
            _wrap(cls, name, lambda orig: _env_step(orig, samples))

    _class_tree(base, wrap_one)


def _patch_gym_core(mod):
    _env_tree(mod.Env, None)


def _patch_gym_vector(mod):
    _env_tree(mod.VectorEnv, "num_envs", ("step", "step_wait"))


def _patch_sb3(mod):
    _env_tree(mod.VecEnv, "num_envs", ("step", "step_wait"))


def _patch_tianshou(mod):
    _env_tree(mod.BaseVectorEnv, _tianshou)


def _patch_torchrl(mod):
    _env_tree(mod.EnvBase, _torchrl)


def _patch_torch(mod):
    tensor = mod.Tensor
    for name in ("to", "cuda", "cpu", "numpy", "pin_memory"):
        orig = getattr(tensor, name, None)
        if orig is not None and not getattr(orig, "_qg_audit_phase", False):
            setattr(tensor, name, _timed(orig, _XFER))
    module = mod.nn.Module
    if not getattr(module.__call__, "_qg_audit_phase", False):
        module.__call__ = _forward(module.__call__, mod.is_grad_enabled, mod.is_inference_mode_enabled)
    _wrap(tensor, "backward", lambda orig: _train_op(orig, _TRAIN_BACKWARD))
    autograd = getattr(mod, "autograd", None)
    backward = getattr(autograd, "backward", None)
    if isinstance(backward, types.FunctionType) and not getattr(backward, "_qg_audit_phase", False):
        autograd.backward = _train_op(backward, _TRAIN_BACKWARD)
    optimizer = sys.modules.get("torch.optim.optimizer")
    if optimizer is not None:
        _patch_optimizer(optimizer)
    loader = sys.modules.get("torch.utils.data.dataloader")
    if loader is not None:
        _wrap(loader._BaseDataLoaderIter, "__next__", _wait)


_opt_hooked = [False]


def _patch_optimizer(mod):
    """torch.optim: every optimizer's step, through torch's global step hooks (no class to wrap)."""
    if _opt_hooked[0]:
        return
    pre = getattr(mod, "register_optimizer_step_pre_hook", None)
    post = getattr(mod, "register_optimizer_step_post_hook", None)
    if pre is None or post is None:
        return
    pre(_opt_pre)
    post(_opt_post)
    _opt_hooked[0] = True


def _patch_sb3_collect(cls_name):
    def patch(mod):
        cls = getattr(mod, cls_name, None)
        if cls is not None:
            _wrap(cls, "collect_rollouts", _collect)

    return patch


def _patch_queue(mod):
    _wrap(mod.Queue, "put", lambda orig: _timed(orig, _XFER))
    _wrap(mod.Queue, "get", _wait)


def _patch_mp_queues(mod):
    for cls in (mod.Queue, mod.SimpleQueue):
        _wrap(cls, "put", lambda orig: _timed(orig, _XFER))
        _wrap(cls, "get", _wait)


def _patch_ray(mod):
    get = getattr(mod, "get", None)
    if get is not None and not getattr(get, "_qg_audit_phase", False):
        mod.get = _wait(get)


PATCHES = {
    "gymnasium.core": _patch_gym_core,
    "gymnasium.vector.vector_env": _patch_gym_vector,
    "stable_baselines3.common.vec_env.base_vec_env": _patch_sb3,
    "tianshou.env.venvs": _patch_tianshou,
    "torchrl.envs.common": _patch_torchrl,
    "torch": _patch_torch,
    "torch.optim.optimizer": _patch_optimizer,
    "stable_baselines3.common.on_policy_algorithm": _patch_sb3_collect("OnPolicyAlgorithm"),
    "stable_baselines3.common.off_policy_algorithm": _patch_sb3_collect("OffPolicyAlgorithm"),
    "queue": _patch_queue,
    "multiprocessing.queues": _patch_mp_queues,
    "ray": _patch_ray,
}


def find_spec(finder, name, path, target):
    """The real spec of NAME, with a loader that applies our phase patch after the module runs."""
    return _patches.find_spec(finder, name, path, target, PATCHES)


def patch_loaded():
    """Patch watched modules imported before the hook ran (``queue`` often is)."""
    for name, patch in PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            try:
                patch(module)
            except Exception:
                pass


# -- records ----------------------------------------------------------------------------------

def _pack(values):
    import base64

    buf = array("q", values)
    if sys.byteorder == "big":
        buf.byteswap()
    return "i64le-b64", base64.b64encode(buf.tobytes()).decode("ascii")


def _is_trainer(st):
    """Waits count in a main thread that steps no environment (backend workers time nothing)."""
    return st.main and not (st.sent or st.nrows)


def _flush(st):
    with _lock:
        rows, st.rows = st.rows, []
        trn, st.trn = st.trn, []
        trows, st.trows = st.trows, []
        arows, st.arows = st.arows, []
        nrows, ntrows = st.nrows, st.ntrows
        first, tfirst = st.sent, st.tsent
        st.sent += nrows
        alternating = bool(st.sent) and not _is_trainer(st)
        if alternating:  # a thread that steps envs: its trainer rows are its training spans
            trows, ntrows = arows, len(arows) // 3
        st.tsent += ntrows
        st.nrows = st.ntrows = 0
        st.calls[_ENV] = st.sent
        st.flush_due = _now() + FLUSH_NS
        end = st.step_t0 - st.origin  # where the last env step ended
    if not _is_trainer(st) and not alternating:
        trows = []
    stacks = _stacks_of(st) if _stacks is not None and st.sent else None
    if not nrows and not len(trows) and stacks is None:
        return
    end0 = end - sum(rows[5::5])  # the first row's end, from the timer's origin (SamplingTimer's rule)
    enc, steps = _pack(rows)
    tenc, trainer = _pack(trows)
    extra = {}
    if any(trn):
        extra["training_encoding"], extra["training_rows"] = _pack(trn)
    if alternating:
        extra["trainer_kind"] = "alternation"
    if stacks is not None:
        extra["stacks"] = stacks
    _patches._emit("timing", source="auto", timer="auto/" + st.thread, role=None, t0=st.t0_wall,
                   warmup_steps=WARMUP_STEPS, phases=list(PHASES), encoding=enc, first_step=first, end_ns=end0,
                   steps=steps, first_iter=tfirst, trainer_encoding=tenc, trainer=trainer,
                   calls=dict(zip(PHASES + ("wait",), st.calls)),
                   forward_modes=dict(zip(("grad", "no_grad", "inference_mode"), st.modes)),
                   training=dict(zip(("forwards", "backward", "optimizer_steps", "spans"), st.train)),
                   tid=st.tid, **extra)
    if nrows and _stacks is not None:
        _stacks.start(_states)


def _stacks_of(st):
    """The thread's stack samples so far (cumulative), when new ones came since the last record."""
    if len(st.stacks) == 0 and not st.resolved:
        return None
    snap = _stacks.snapshot(st)
    if snap is None or snap["total"] == st.stacks_sent:
        return None
    st.stacks_sent = snap["total"]
    return snap


def _flush_all():
    for st in list(_states):
        try:
            _flush(st)
        except Exception:  # never turn the target's exit into a traceback
            pass


class _ForkToken:
    pass


_token = _ForkToken()


def _hook_exit():
    """Flush at exit: atexit, and multiprocessing's finalizers (its children leave by os._exit)."""
    if _exit_hooked[0]:
        return
    _exit_hooked[0] = True
    import atexit

    atexit.register(_flush_all)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork)
    _hook_mp()


def _hook_mp():
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(None, _flush_all, exitpriority=100)


def _after_fork():
    """A forked child starts with no rows of its parent's and one state: the forking thread's."""
    global _lock
    _lock = threading.Lock()
    st = getattr(_S.tls, "st", None)
    _states[:] = []
    if st is not None:
        del _S.tls.st
    if _stacks is not None:
        _stacks.after_fork()
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.register_after_fork(_token, lambda _t: _hook_mp())

"""qg-audit hook, part 4: low-rate stack samples of the sampling threads. Standard library only.

Loaded by _qg_audit_phases.py when QG_AUDIT_STACKS is set (``qg-audit profile --auto`` sets
it to the interval in milliseconds). Once a process has a thread that steps environments, a
daemon thread ("qg-audit-stacks") wakes every interval, takes ``sys._current_frames()`` and,
for each such thread past its warm-up steps, counts one sample under

* the phase the thread is in: env / fwd / xfer / wait (inside a timed call), train (inside
  a training span, see _qg_audit_phases), else untimed (a trainer wait in a sampling
  thread is untimed time of its step);
* its leaf function: the innermost Python frame that is not the hook's own
  (``Categorical.sample  torch/distributions/categorical.py``);
* its program line: the innermost frame of the program's own code, not a library's
  (``cleanrl_ppo.py:39 get_action_and_value``).

A sample taken while a training span is still a candidate (after a forward with autograd on,
before a backward says it was training) waits until the thread knows: it counts as training
if a backward or optimizer step follows, else under the phase it was taken in. A sample
lands where the thread let go of the GIL: a C call that holds it shows at the line after.

The counts go out with the thread's timing records (``stacks``, cumulative): the totals per
phase and the most frequent (phase, leaf, program line) keys.
"""

import atexit
import os
import sys
import threading

ENV_VAR = "QG_AUDIT_STACKS"
TOP_PER_PHASE = 15  # keys sent per phase; the totals are exact
# st.busy -> phase; a trainer wait inside a sampling thread is part of its untimed time
PHASE_NAMES = {1: "env", 2: "fwd", 3: "xfer", 4: "untimed", 5: "train"}
_HOOK_MODULES = ("_qg_audit_phases", "_qg_audit_patches", "_qg_audit_stacks", "sitecustomize")

_interval = [0.0]
_thread = [None]
_stop = [None]  # the sampler thread's stop event
_exit_hooked = [False]
_pid = [None]
_leaf_names = {}  # code object -> "qualname  short/file.py"
_library = {}  # filename -> is it library code (site-packages, the standard library)?


def enabled():
    v = os.environ.get(ENV_VAR, "")
    try:
        ms = float(v)
    except ValueError:
        return False
    if ms <= 0:
        return False
    _interval[0] = max(ms, 1.0) / 1000.0
    return True


def start(states):
    """Start the sampler once per process (a forked child starts its own)."""
    if _thread[0] is not None and _pid[0] == os.getpid():
        return
    _pid[0] = os.getpid()
    stop = threading.Event()
    t = threading.Thread(target=_run, args=(states, stop), name="qg-audit-stacks", daemon=True)
    _thread[0], _stop[0] = t, stop
    t.start()
    if not _exit_hooked[0]:
        _exit_hooked[0] = True
        atexit.register(_stop_at_exit)


def _stop_at_exit():
    """End the sampler thread before the interpreter finalizes. A daemon thread still alive
    then is ended inside CPython by pthread_exit, and torch targets aborted at exit ("terminate
    called without an active exception": 3 of 108 profiled runs of a gymnasium + torch sampler on
    a loaded machine, 0 of 140 with this handler). The target's exit must not depend on a
    thread the hook added."""
    t, stop = _thread[0], _stop[0]
    if t is None or stop is None or _pid[0] != os.getpid():
        return
    stop.set()
    t.join(1.0)


def after_fork():
    _thread[0] = _stop[0] = None


def _run(states, stop):
    import _qg_audit_phases as phases

    warm = phases.WARMUP_STEPS
    frames_of, me = sys._current_frames, threading.get_ident()
    while not stop.wait(_interval[0]):
        try:
            frames = frames_of()
            for st in list(states):
                if st.ident == me or st.sent + st.nrows <= warm:
                    continue
                while st.resolved:
                    phase, samples = st.resolved.pop(0)
                    for key in samples:
                        _count(st, (phase or key[0],) + key[1:])
                frame = frames.get(st.ident)
                if frame is None:
                    continue
                busy = st.busy
                phase = PHASE_NAMES.get(busy, "untimed") if busy else "untimed"
                key = (phase,) + _where(frame)
                if st.in_collect:
                    pending = False
                elif st.collect_exit is not None:
                    key = ("train",) + key[1:]  # SB3: outside collect_rollouts
                    pending = False
                else:
                    pending = st.span_t0 is not None and busy != 5
                if pending:
                    st.pend_samples.append(key)
                else:
                    _count(st, key)
            del frames
        except Exception:  # never disturb the target
            pass


def _count(st, key):
    st.stacks[key] = st.stacks.get(key, 0) + 1


def _where(frame):
    """(leaf function, program line) of a thread's current frame."""
    f = frame
    while f is not None and (f.f_globals.get("__name__") or "") in _HOOK_MODULES:
        f = f.f_back
    if f is None:
        return ("?", "?")
    code = f.f_code
    leaf = _leaf_names.get(code)
    if leaf is None:
        leaf = _leaf_names[code] = "%s  %s" % (getattr(code, "co_qualname", code.co_name), _short(code.co_filename))
    prog = "?"
    depth = 0
    while f is not None and depth < 60:
        name = f.f_code.co_filename
        lib = _library.get(name)
        if lib is None:
            lib = _library[name] = _is_library(name)
        if not lib and (f.f_globals.get("__name__") or "") not in _HOOK_MODULES:
            prog = "%s:%d %s" % (_short(name), f.f_lineno, getattr(f.f_code, "co_qualname", f.f_code.co_name))
            break
        f = f.f_back
        depth += 1
    return (leaf, prog)


def _short(filename):
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        i = filename.rfind(marker)
        if i >= 0:
            return filename[i + len(marker):]
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return rel if not rel.startswith("..") else filename


def _is_library(filename):
    import _qg_audit_patches

    return _qg_audit_patches._is_library_file(filename)


def snapshot(st):
    """{"interval_ms", "total", "phases": {phase: samples}, "top": [[phase, leaf, line, n], ...]}."""
    counts = st.stacks.copy()  # one C-level copy: the sampler thread may be adding to it
    if not counts:
        return None
    phases = {}
    for key, n in counts.items():
        phases[key[0]] = phases.get(key[0], 0) + n
    top = []
    for phase in phases:
        keys = sorted((k for k in counts if k[0] == phase), key=lambda k: -counts[k])[:TOP_PER_PHASE]
        top += [[k[0], k[1], k[2], counts[k]] for k in keys]
    return {"interval_ms": round(_interval[0] * 1000, 3), "total": sum(phases.values()), "phases": phases,
            "top": top}

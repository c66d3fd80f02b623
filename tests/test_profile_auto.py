"""qg-audit profile --auto: phases timed by the start-up hook, without any change to the target.

The fixture (fixtures/auto/gym_torch.py) is a gymnasium + torch CPU sampler that also carries
SamplingTimer phases. One run yields both measurements (the hook's records carry ``source:
"auto"``), so the comparison is of the same steps on the same machine at the same moment: a
loaded box moves both together. The margin is the issue's 10% on each phase's median, plus
0.05 ms for the few statements a hand-placed phase holds beyond the wrapped call (means: see
same_phases).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, run_cli

AUTO = FIXTURES / "auto"
HOOK_DIR = REPO / "auditor" / "worker" / "hook"


def auto_run(tmp_path, *fixture_args, timeout=240):
    saved = tmp_path / "run.jsonl"
    proc = run_cli("profile", "--auto", "--format", "json", "--save-reports", str(saved), "--",
                   sys.executable, str(AUTO / "known_cost_gym.py"), *fixture_args, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    import jsonschema

    from auditor.profiling.schema import PROFILE_SCHEMA

    jsonschema.validate(doc, PROFILE_SCHEMA)
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    return doc, records


def manual_profile(records):
    """The SamplingTimer figures of the same run, through the same library path."""
    from auditor.profiling.launch import build
    from auditor.profiling import Thresholds

    return build(records, False, None, None, 50, Thresholds()).to_json()


def close(auto_ms, manual_ms):
    return abs(auto_ms - manual_ms) <= 0.10 * manual_ms + 0.05


def phases(doc, stat="p50_ms"):
    return {p["name"]: p[stat] for p in doc["phases"]}


def same_phases(doc, manual):
    """Per phase: medians within 10% (+0.05 ms); means within 25% (+0.1 ms).

    The median is the issue's 10% test. The mean gets a wider margin for one reason only: on a
    box at load average 100, a preemption of several ms that lands in the microseconds of
    Python between a hand-placed phase's start and the wrapped call adds to one measurement
    and not the other, and a few of them move a mean of 0.3 ms.
    """
    got, want = phases(doc), phases(manual)
    assert set(got) == set(want) == {"env", "fwd", "xfer"}
    for name in want:
        assert close(got[name], want[name]), ("p50", name, got, want)
        a, m = phases(doc, "mean_ms")[name], phases(manual, "mean_ms")[name]
        assert abs(a - m) <= 0.25 * m + 0.1, ("mean", name, a, m)


def test_auto_phases_match_sampling_timer_of_the_same_run(tmp_path):
    doc, records = auto_run(tmp_path, "--steps", "150")
    manual = manual_profile(records)
    assert doc["mode"] == "auto"
    same_phases(doc, manual)
    got = phases(doc, "mean_ms")
    assert close(doc["step"]["mean_ms"], manual["step"]["mean_ms"])
    assert doc["steps"] == manual["steps"] == 140  # 150 - the 10 declared warm-up steps
    assert doc["samples_per_s"] == pytest.approx(manual["samples_per_s"], rel=0.02)
    # the sleep-based env: never shorter than its 4 ms, and the bulk of each step. No upper
    # bound in ms: on a loaded box a 4 ms sleep oversleeps by as much as the scheduler likes.
    assert got["env"] >= 4.0 and got["env"] >= 0.5 * doc["step"]["mean_ms"], (got, doc["step"])
    # the gymnasium TimeLimit wrapper's step calls the inner step: still one env step per step
    latest = [r for r in records if r.get("source") == "auto"][-1]
    assert latest["calls"]["env"] == 150 and latest["calls"]["fwd"] == 150
    assert latest["forward_modes"] == {"grad": 0, "no_grad": 150, "inference_mode": 0}
    assert any("SamplingTimer records were also received" in n for n in doc["notes"])
    assert doc["processes"][0]["timer"] == "auto/MainThread"


@pytest.mark.slow
def test_auto_trainer_wait_matches_sampling_timer(tmp_path):
    doc, records = auto_run(tmp_path, "--steps", "150", "--trainer", "--compute-ms", "2")
    manual = manual_profile(records)
    same_phases(doc, manual)
    w, m = doc["wait"], manual["wait"]
    assert w is not None and w["steps"] == m["steps"]
    assert close(w["wait_ms_mean"], m["wait_ms_mean"]) and close(w["compute_ms_mean"], m["compute_ms_mean"])
    assert abs(w["ratio_p50"] - m["ratio_p50"]) <= 0.05
    roles = {(p["timer"], p["steps"] > 0, p["trainer_steps"] > 0) for p in doc["processes"]}
    assert roles == {("auto/sampler", True, False), ("auto/MainThread", False, True)}  # one thread each


@pytest.mark.slow
def test_auto_async_vector_env_counts_its_workers_once(tmp_path):
    doc, records = auto_run(tmp_path, "--steps", "100", "--num-envs", "2", "--vector", "async")
    manual = manual_profile(records)
    # the AsyncVectorEnv workers step their envs too, but time nothing: one sampler timer
    assert [p["timer"] for p in doc["processes"] if p["steps"]] == ["auto/MainThread"]
    assert doc["samples"] == manual["samples"] == 2 * 90
    same_phases(doc, manual)


def _hooked(code: str, phases_env: str | None = "0", **extra_env: str) -> dict:
    """Run CODE under the hook alone (no qg-audit probe) and return what it printed as JSON."""
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR) + os.pathsep + str(REPO), **extra_env)
    env["QG_AUDIT_REPORT"] = os.devnull
    if phases_env is None:
        env.pop("QG_AUDIT_PHASES", None)
    else:
        env["QG_AUDIT_PHASES"] = phases_env
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


NESTING = r"""
import json, queue, threading, torch, _qg_audit_phases as ph
class Inner(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.float64).cpu()
class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.a, self.b = Inner(), Inner()
    def forward(self, x):
        return self.b(self.a(x))
m = Outer(); x = torch.zeros(3)
for _ in range(4):
    m(x)
with torch.no_grad():
    m(x)
x.to(torch.float64)                      # a transfer on its own
q = queue.Queue()
t = threading.Thread(target=lambda: [q.put(1), q.get()]); t.start(); t.join()   # not the main thread's wait
q.put(2); q.get()
st = ph._tls.st
# no env step closed the forwards: those with autograd on (and the no_grad one after them) are
# still pending, training if a backward came; modes + pending modes are all outermost forwards
modes = [a + b for a, b in zip(st.modes, st.pend_modes)]
print(json.dumps({"calls": st.calls, "modes": modes, "wrapped": getattr(torch.nn.Module.__call__, "_qg_audit_phase", False)}))
"""


def test_only_outermost_calls_are_timed_and_modes_noted():
    got = _hooked(NESTING)
    env, fwd, xfer, wait = got["calls"]
    assert (env, fwd) == (0, 5)  # nested Module calls and the Tensor.to inside a forward are forward time
    assert xfer == 2  # the lone Tensor.to and the main thread's Queue.put (the other thread's put is its own)
    assert wait == 1  # only the main thread's Queue.get is a trainer wait
    assert got["modes"] == [4, 1, 0]
    assert got["wrapped"] is True


def test_hook_times_nothing_without_qg_audit_phases():
    code = ("import json, sys, torch, gymnasium\n"
            "print(json.dumps({'wrapped': getattr(torch.nn.Module.__call__, '_qg_audit_phase', False),"
            " 'loaded': '_qg_audit_phases' in sys.modules}))")
    assert _hooked(code, phases_env=None) == {"wrapped": False, "loaded": False}


# a gymnasium.Env subclass defined after the hook is imported (the scripts below import numpy as np)
TOY_ENV = r"""
class E(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)
    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}
    def step(self, a):
        return np.zeros(2, np.float32), 0.0, False, False, {}
"""

GYM_SUBCLASS = r"""
import json, time, gymnasium, numpy as np, _qg_audit_phases as ph
from gymnasium.wrappers import TimeLimit
""" + TOY_ENV + r"""env = TimeLimit(E(), 100)
env.reset()
for _ in range(3):
    env.step(0)
vec = gymnasium.vector.SyncVectorEnv([lambda: E()] * 3)
vec.reset()
for _ in range(2):
    vec.step(np.zeros(3, np.int64))
st = ph._tls.st
print(json.dumps({"env_steps": st.sent + st.nrows, "sent": st.sent, "samples": st.rows[1::5]}))
"""


def test_env_subclasses_defined_after_import_are_timed_once_per_step():
    got = _hooked(GYM_SUBCLASS)
    assert got["env_steps"] == 5
    # the first step is sent at once (it tells qg-audit the job is ready); the rest are buffered
    assert got["sent"] == 1
    assert got["samples"] == [1, 1, 3, 3]  # a vector env's step is num_envs samples


STACKS_AT_EXIT = r"""
import atexit, json, threading, gymnasium, numpy as np
seen = {}
def at_exit():  # registered before the hook starts its sampler: runs after the hook's own handlers
    seen["alive_at_exit"] = any(t.name == "qg-audit-stacks" for t in threading.enumerate())
    print(json.dumps(seen))
atexit.register(at_exit)
""" + TOY_ENV + r"""env = E(); env.reset()
for _ in range(5):
    env.step(0)
seen["started"] = any(t.name == "qg-audit-stacks" for t in threading.enumerate())
"""


def test_the_stack_sampler_thread_is_ended_before_the_interpreter_finalizes():
    """A daemon thread still alive at finalization is ended inside CPython (pthread_exit); a
    gymnasium + torch sampler profiled with --auto aborted at exit in 2 of 23 loaded runs."""
    got = _hooked(STACKS_AT_EXIT, QG_AUDIT_STACKS="5")
    assert got == {"started": True, "alive_at_exit": False}


COLLECT_THEN_TRAIN = r"""
import json, time, torch, gymnasium, numpy as np, _qg_audit_phases as ph
ph.FLUSH_NS = 10**12  # no timed flush: a cold first backward can pass 1 s on a loaded machine
""" + TOY_ENV + r"""env = E(); env.reset()
net = torch.nn.Linear(2, 2); opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.zeros(1, 2)
for it in range(3):
    for _ in range(4):
        with torch.no_grad():
            net(x)                          # the sampling forward
        env.step(0)
    loss = net(x).sum()                     # training: forward with autograd on ...
    time.sleep(0.03)                        # ... loss bookkeeping ...
    loss.backward(); opt.step(); opt.zero_grad()
time.sleep(0.01)                            # after training, before the next step: sampling
net(x)                                      # a sampling forward with autograd on: no backward follows
env.step(0)
st = ph._tls.st
print(json.dumps({"sent": st.sent, "trn": st.trn, "steps": st.rows[0::5], "fwd": st.rows[3::5],
                  "modes": st.modes, "train": st.train, "arows": st.arows}))
"""


def test_training_in_the_sampling_thread_is_kept_apart():
    """A collect-then-train loop in one thread: each step that holds training carries it apart,
    the training forwards are not sampling forwards, and a grad forward no backward follows is."""
    got = _hooked(COLLECT_THEN_TRAIN)
    assert got["sent"] == 1  # step 1 went out at once; steps 2..13 are buffered
    trn = got["trn"]
    assert len(trn) == 12
    trained = [i for i, t in enumerate(trn) if t]
    assert trained == [3, 7, 11], trn  # steps 5, 9 and 13 each hold a training span
    for i in trained:
        assert 30e6 <= trn[i] < got["steps"][i]  # the span (with its 30 ms) is inside the step's wall time
    # after the third span: 10 ms of sampling and a grad forward that no backward followed
    assert got["steps"][11] - trn[11] >= 10e6
    assert got["fwd"][11] > 0  # that forward is sampling forward time
    assert got["train"] == [3, 3, 3, 3]  # training forwards, backward calls, optimizer steps, spans
    assert got["modes"] == [1, 12, 0]  # sampling forwards only: one with autograd on, 12 under no_grad
    assert len(got["arows"]) == 9  # one alternation trainer row per span: end, sampling before it, span


FORWARDING = r"""
import json, queue, _qg_audit_phases as ph
def f(*args, **kwargs):
    return [list(args), kwargs]
out = []
for make in (lambda g: ph._timed(g, ph._XFER), ph._wait):
    w = make(f)
    out.append([w(1), w(1, 2), w(1, 2, 3), w(1, k=4), w(1, 2, 3, k=5)])
w = ph._wait(f)
out.append([w(), w(k=6)])  # a function (ray.get) may be called with keywords only
q = queue.Queue()
try:
    q.get(block=False)    # the wrapped get still raises the original exception
    out.append("no raise")
except queue.Empty:
    out.append("Empty")
st = ph._tls.st
out.append(st.busy)      # and leaves the thread's state usable
print(json.dumps(out))
"""


def test_wrappers_pass_every_argument_shape_and_exception_through():
    got = _hooked(FORWARDING)
    shapes = [[[1], {}], [[1, 2], {}], [[1, 2, 3], {}], [[1], {"k": 4}], [[1, 2, 3], {"k": 5}]]
    assert got[0] == shapes and got[1] == shapes
    assert got[2] == [[[], {}], [[], {"k": 6}]]
    assert got[3:] == ["Empty", False]


@pytest.mark.slow
def test_dataloader_consumer_waits_are_the_trainer_wait():
    """A loop that only iterates a DataLoader (2 workers, 10 ms per item) waits all the time."""
    proc = run_cli("profile", "--auto", "--format", "json", "--duration", "8", "--",
                   sys.executable, str(FIXTURES / "samplers" / "dataloader_sampler.py"), "--seconds", "30",
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["steps"] == 0  # no environment: no sampling step, nothing made up
    assert doc["wait"] is not None and doc["wait"]["steps"] >= 20
    assert doc["wait"]["ratio_p50"] > 0.9
    # DataLoader workers time nothing: the only timer is the main thread's
    assert [p["timer"] for p in doc["processes"]] == ["auto/MainThread"]


@pytest.mark.slow
def test_sweep_auto_measures_an_uninstrumented_run_with_the_hooks_phases(tmp_path):
    out = tmp_path / "sweep.json"
    proc = run_cli("sweep", "--auto", "-L", "batch", "16,32", "--steps", "40", "--no-progress", "--export-json",
                   str(out), "--", sys.executable, str(FIXTURES / "diagnose" / "forward_bound" / "sampler.py"),
                   "--batch", "{batch}", "--steps", "400", timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    rates = {r["value"]: r["samples_per_s"]["mean"] for r in doc["results"]}
    assert rates["32"] > 1.3 * rates["16"]  # one 10 ms policy pass serves up to 32 samples
    for r in doc["results"]:
        assert set(r["phases_ms"]) == {"env", "fwd", "xfer"} and r["phases_ms"]["fwd"] >= 10.0
        # each run counts only the automatic timers' steps: 2 processes x 40 steady steps
        assert r["run_details"][0]["steps"] == 80


def test_sweep_auto_needs_the_hook():
    proc = run_cli("sweep", "--auto", "--no-hook", "-L", "b", "1,2", "--", sys.executable, "x.py", "{b}", timeout=60)
    assert proc.returncode == 2 and "--no-hook" in proc.stderr


@pytest.mark.slow
def test_main_env_class_pickled_by_value_to_spawn_workers():
    """cloudpickle sends a __main__ env class (wrapped step included) to spawn workers."""
    proc = run_cli("profile", "--auto", "--format", "json", "--", sys.executable,
                   str(AUTO / "spawn_main_env.py"), "60", timeout=180)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["target"]["returncode"] == 0
    assert doc["steps"] == 50 and doc["samples"] == 100  # 60 - 10 warm-up steps of 2 envs
    assert [p["timer"] for p in doc["processes"]] == ["auto/MainThread"]  # the workers time nothing


@pytest.mark.slow
def test_pool_workers_waiting_for_tasks_are_not_a_trainer(tmp_path):
    saved = tmp_path / "run.jsonl"
    proc = run_cli("profile", "--auto", "--save-reports", str(saved), "--", sys.executable,
                   str(AUTO / "pool_tasks.py"), timeout=180)
    # no environment and no trainer: nothing to profile, and it says why
    assert proc.returncode == 3 and "before it was ready: no env step the hook could time" in proc.stderr
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    # the workers' 600 queue gets made trainer rows before pool workers were told apart
    assert not any(r.get("trainer") for r in records if r.get("source") == "auto")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dummy", "subproc"])
def test_sb3_vec_envs_are_one_env_step_of_num_envs_samples(tmp_path, kind):
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (optional integration)")
    saved = tmp_path / "run.jsonl"
    args = ["--subproc"] if kind == "subproc" else []
    proc = run_cli("profile", "--auto", "--format", "json", "--save-reports", str(saved), "--", sys.executable,
                   str(AUTO / "sb3_sampler.py"), "--steps", "80", *args, timeout=240)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    manual = manual_profile([json.loads(line) for line in saved.read_text().splitlines()])
    # VecEnv.step -> step_wait -> each env's gymnasium step: one env step; SubprocVecEnv workers time nothing
    assert [p["timer"] for p in doc["processes"] if p["steps"]] == ["auto/MainThread"]
    assert doc["samples"] == manual["samples"] == 2 * 70
    same_phases(doc, manual)


def test_phase_patches_and_census_patches_both_apply_to_torch(tmp_path):
    """torch is watched by the census hook (thread setter) and the phase hook (Module.__call__):
    importing it under both must apply both patches."""
    report = tmp_path / "r.jsonl"
    code = ("import json, torch\n"
            "torch.set_num_threads(2)\n"
            "print(json.dumps({'wrapped': getattr(torch.nn.Module.__call__, '_qg_audit_phase', False)}))\n")
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR) + os.pathsep + str(REPO), QG_AUDIT_REPORT=str(report),
               QG_AUDIT_PHASES="0")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["wrapped"] is True
    records = [json.loads(line) for line in report.read_text().splitlines()]
    setters = [r for r in records if r.get("type") == "threads" and r.get("setter") == "torch.set_num_threads"]
    assert setters and setters[0]["value"] == 2

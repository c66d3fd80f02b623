"""The scan on real packages from PyPI (verl 0.9.1, stable-baselines3 2.9.2).

Downloaded once with ``pip download --no-deps`` into tests/.cache (gitignored) and
unpacked there; skipped with the reason when the registry cannot be reached.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from auditor import join, scan

CACHE = Path(__file__).resolve().parent / ".cache"
pytestmark = [pytest.mark.network, pytest.mark.slow]


def unpacked(spec: str) -> Path:
    name, version = spec.split("==")
    dest = CACHE / f"{name}-{version}"
    if dest.is_dir():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = CACHE / "wheels"
    prefix = f"{name.replace('-', '_')}-{version}-"
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(prefix.lower())] if wheels.is_dir() else []
    if not found:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                               "-d", str(wheels), spec], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"cannot download {spec} from the package registry: "
                        f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(prefix.lower())]
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(dest)
    return dest


def test_verl_dataloader_num_workers_journey():
    result = join.join(scan.scan(unpacked("verl==0.9.1")))
    knob = next(k for k in result.knobs if k.name == "data.dataloader_num_workers")
    defines = [s for s in knob.by_role("define") if not s.detail.get("generated")]
    assert [(s.file, s.value) for s in defines] == [("verl/trainer/config/data/legacy_data.yaml", 8)]
    assert defines[0].detail["key_in_file"] == "dataloader_num_workers"  # re-rooted by the defaults list
    reads = {s.file for s in knob.by_role("read")}
    assert "verl/trainer/ppo/ray_trainer.py" in reads
    consumers = {(s.file, s.detail.get("backend")) for s in knob.by_role("consume")}
    assert ("verl/trainer/ppo/ray_trainer.py", "torchdata.stateful_dataloader.StatefulDataLoader") in consumers
    assert knob.effective == 8 and knob.why.startswith("8 from verl/trainer/config/data/legacy_data.yaml:")
    # the generated copy of the config does not add a second definition
    assert not any(s.detail.get("generated") for s in knob.sites)


def test_sb3_make_vec_env_defaults():
    root = unpacked("stable-baselines3==2.9.2")
    result = join.join(scan.scan(root))
    env_util = "stable_baselines3/common/env_util.py"
    knobs = {k.name: k for k in result.knobs}
    n_envs = [s for s in knobs["n_envs"].sites if s.file == env_util and s.detail.get("function") == "make_vec_env"]
    assert any(s.role == "read" and s.default == 1 for s in n_envs)
    consume = next(s for s in n_envs if s.role == "consume")
    assert consume.detail["backend"] == "stable_baselines3.common.vec_env.DummyVecEnv"
    assert consume.detail["serial"] is True and consume.detail["defaulted"] == {"vec_env_cls": None}
    vec = knobs["vec_env_cls"]
    read = next(s for s in vec.sites if s.file == env_util and s.role == "read"
                and s.detail.get("function") == "make_vec_env")
    assert read.default is None and read.detail["via"] == "param"
    assert vec.effective == "DummyVecEnv" and "so DummyVecEnv at stable_baselines3/common/env_util.py" in vec.why

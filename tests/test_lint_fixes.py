"""--fix / --diff with libcst on fixture files: serial vector envs -> parallel twins."""

from __future__ import annotations

import shutil

import libcst as cst
import pytest

from auditor.lint.fixes import fix_source
from auditor.lint.harness import default_args, scan_and_check
from conftest import FIXTURES, run_cli

FIX_PROJECT = FIXTURES / "rules" / "fix_project"

EXPECTED = '''"""Vector envs built three serial ways; `qg-audit scan --fix` switches them to their twins."""
import gymnasium as gym
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv, DummyVecEnv, VecNormalize  # SB3 wrappers


def build(args, make_env):
    # one env per CPU core, stepped in lock-step
    train = VecNormalize(SubprocVecEnv([make_env] * args.n_envs))  # expect: QG106
    evals = gym.vector.AsyncVectorEnv(
        [make_env for _ in range(args.num_envs)],  # expect: QG106
        autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP,  # keep
    )
    extra = make_vec_env(
        "HalfCheetah-v4",
        n_envs=args.n_envs,  # expect: QG106
        vec_env_cls=SubprocVecEnv,
    )
    single = DummyVecEnv([make_env])  # one env: serial is right
    return train, evals, extra, single
'''


@pytest.fixture
def project(tmp_path):
    dst = tmp_path / "fix_project"
    shutil.copytree(FIX_PROJECT, dst, ignore=shutil.ignore_patterns(".qg-audit_cache"))
    return dst


def test_diff_prints_and_changes_nothing(project):
    before = (project / "envs.py").read_text()
    out = run_cli("scan", str(project), "--diff", "--format", "github", "--no-progress")
    assert out.returncode == 1  # nothing was fixed, the findings stand
    assert "--- a/envs.py\n+++ b/envs.py\n" in out.stdout
    assert "+    train = VecNormalize(SubprocVecEnv([make_env] * args.n_envs))" in out.stdout
    assert "+        vec_env_cls=SubprocVecEnv," in out.stdout
    assert (project / "envs.py").read_text() == before


def test_fix_writes_exactly_the_expected_file(project):
    out = run_cli("scan", str(project), "--fix", "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr  # every finding was fixed
    assert (project / "envs.py").read_text() == EXPECTED
    again = scan_and_check(project)
    assert [f for f in again.findings if f.code == "QG106"] == []
    cst.parse_module(EXPECTED)  # still valid Python


def test_fix_manages_imports_and_aliases():
    src = ("from stable_baselines3.common.vec_env import DummyVecEnv as D\n"
           "from gymnasium.vector import SyncVectorEnv\n"
           "a = D([f] * n)\n"
           "b = SyncVectorEnv([f] * n)\n")
    new, done = fix_source(src, {3, 4})
    assert done == {3, 4}
    assert new == ("from stable_baselines3.common.vec_env import SubprocVecEnv\n"
                   "from gymnasium.vector import AsyncVectorEnv\n"
                   "a = SubprocVecEnv([f] * n)\n"
                   "b = AsyncVectorEnv([f] * n)\n")


def test_fix_leaves_other_lines_and_splats_alone():
    src = ("from stable_baselines3.common.env_util import make_vec_env\n"
           "a = make_vec_env('X', n_envs=n, **kw)\n"
           "b = make_vec_env('X', n_envs=n)\n")
    new, done = fix_source(src, {2})
    assert new == src and done == set()  # **kw may carry vec_env_cls: not mechanical


def test_fix_replaces_an_explicit_dummy_class():
    src = ("from stable_baselines3.common.env_util import make_vec_env\n"
           "from stable_baselines3.common.vec_env import DummyVecEnv\n"
           "env = make_vec_env('X', n_envs=8, vec_env_cls=DummyVecEnv)\n")
    new, _ = fix_source(src, {3})
    assert new == ("from stable_baselines3.common.env_util import make_vec_env\n"
                   "from stable_baselines3.common.vec_env import SubprocVecEnv\n"
                   "env = make_vec_env('X', n_envs=8, vec_env_cls=SubprocVecEnv)\n")


def test_fix_in_process_removes_fixed_findings(project):
    result = scan_and_check(project, default_args(fix=True))
    assert [f.code for f in result.findings] == []

"""Shared test helpers. Tests run real things: real files, real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def run_cli(*args: str, cwd: Path | str | None = None, env: dict | None = None, timeout: float = 300,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m auditor ARGS`` as a real subprocess and capture its output."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("COLUMNS", "200")
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        cwd=cwd or REPO, env=full_env, capture_output=True, text=True, timeout=timeout, input=input,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES

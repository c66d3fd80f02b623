"""Shared test helpers. Tests run real things: real files, real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

# Scans default to a cache inside the scanned tree (PATH/.qg-audit_cache); the suite scans
# fixtures/ in place, so it keeps its caches in one temporary directory instead. Tests of
# the cache itself pass their own --cache-dir or unset this.
_CACHE_DIR = tempfile.TemporaryDirectory(prefix="qg-audit-test-cache-")
os.environ["QG_AUDIT_CACHE_DIR"] = _CACHE_DIR.name
# Cache entries are authenticated with a per-user secret (auditor.cache.secret), by default
# in ~/.cache/qg-audit: the suite brings its own instead of touching the home directory.
# Tests of the secret file itself unset this and point XDG_CACHE_HOME at a temporary directory.
os.environ["QG_AUDIT_CACHE_SECRET"] = os.urandom(16).hex()
# stable-baselines3 makes a logger folder in the system temp dir on every learn() of the real
# jobs the suite runs (tempdir/SB3-<time>); its SB3_LOGDIR keeps them in the suite's own.
os.environ["SB3_LOGDIR"] = str(Path(_CACHE_DIR.name) / "sb3-logs")


@pytest.fixture(scope="module")
def loaded_machine():
    """Two busy processes for a whole module: the loaded machine a user runs qg-audit on."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for h in hogs:
        h.kill()
        h.wait()


def run_cli(*args: str, cwd: Path | str | None = None, env: dict | None = None, timeout: float = 300,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m auditor ARGS`` as a real subprocess and capture its output."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("COLUMNS", "200")
    for key, value in (env or {}).items():  # None removes a variable
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        cwd=cwd or REPO, env=full_env, capture_output=True, text=True, timeout=timeout, input=input,
    )


# Runs argv[1:] and prints the largest resident set of any child it waited for (KiB), then the
# child's exit code, then the child's stdout. A process forked straight from pytest carries the
# pytest process's pages in its high-water mark (it survives exec), so a large test process
# would make every child look large: the wrapper is a fresh, small interpreter.
_PEAK_WRAPPER = ("import resource, subprocess, sys\n"
                 "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
                 "sys.stdout.write(f'{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {p.returncode}\\n')\n"
                 "sys.stdout.flush()\n"
                 "sys.stdout.buffer.write(p.stdout)\n")


def peak_rss_run(cmd: list[str], env: dict | None = None, cwd=None, timeout: float = 600) -> tuple[float, int, str]:
    """(peak RSS in MB of CMD and the processes it waited for, its exit code, its stdout)."""
    proc = subprocess.run([sys.executable, "-c", _PEAK_WRAPPER, *cmd], capture_output=True, env=env, cwd=cwd,
                          timeout=timeout)
    head, _, out = proc.stdout.partition(b"\n")
    peak_kib, code = head.split()
    return int(peak_kib) / 1024, int(code), out.decode(errors="replace")


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES

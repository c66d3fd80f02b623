"""The cache trusts nothing the scanned tree hands back (issue 22; docs/scan.md "Threat model").

Each attack is reproduced on a real tree through the real CLI: a cache committed to the
repository, forged with another secret (as an attacker's own qg-audit would make it), a
crafted payload under the right MAC (as if the secret had leaked: the plain-data layer must
still hold), a cache directory that is a symlink or that git tracks, entries that are FIFOs
or links to /dev/stdin, and the replay entries that every --files set leaves.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, peak_rss_run, run_cli
from test_scan_cache import FORMATS, HOUR_AGO, mask, project

sys.path.insert(0, str(REPO))
from auditor import cache as cache_mod  # noqa: E402

def cli_env() -> dict:
    """The environment run_cli gives its subprocess (the replay key covers PYTHON* variables)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("COLUMNS", "200")
    return env


IN_TREE = {"QG_AUDIT_CACHE_DIR": None}  # the default cache directory: PATH/.qg-audit_cache
ATTACKER = {"QG_AUDIT_CACHE_DIR": None, "QG_AUDIT_CACHE_SECRET": "the attacker's own secret"}


def forge_clean_cache(root: Path, *args: str, cwd: Path | None = None) -> None:
    """What a hostile repository commits: the cache of a clean twin of the tree (every file
    the same size and mtime, its content a comment), made by a real qg-audit with the
    attacker's secret, then the real files put back with their mtimes (tar, rsync -a, cp -p
    and Docker COPY keep them)."""
    real = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".qg-audit_cache" not in p.parts and p.name != "pyproject.toml":
            real[p] = p.read_bytes()
            p.write_bytes(b"#" + b" " * (len(real[p]) - 2) + b"\n")
            os.utime(p, (HOUR_AGO, HOUR_AGO))
    twin = run_cli("scan", *args, env=ATTACKER, cwd=cwd)
    assert twin.returncode == 0, twin.stdout + twin.stderr  # no finding in the twin
    for p, data in real.items():
        p.write_bytes(data)
        os.utime(p, (HOUR_AGO, HOUR_AGO))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f[1])
def test_a_cache_committed_with_the_repository_hides_no_finding(tmp_path, fmt):
    root = project(tmp_path)
    args = (str(root), *fmt)
    truth = run_cli("scan", *args, "--no-cache")
    assert truth.returncode == 1
    forge_clean_cache(root, *args)
    assert list((root / ".qg-audit_cache").glob("replay-*.bin")) and list((root / ".qg-audit_cache").glob("files-*.bin"))
    # the forgery works for whoever holds its secret: the report is the clean twin's
    fooled = run_cli("scan", *args, env=ATTACKER)
    assert fooled.returncode == 0 and mask(fooled.stdout) != mask(truth.stdout)
    for _ in range(2):  # this user's scan: every entry fails its MAC, then is rewritten
        proc = run_cli("scan", *args, env=IN_TREE)
        assert proc.returncode == 1 and proc.stderr == ""
        assert mask(proc.stdout) == mask(truth.stdout)
    for rec in (root / ".qg-audit_cache").glob("replay-*.bin"):
        rec.unlink()  # the store alone, rewritten by this user: still the truth
    assert mask(run_cli("scan", *args, env=IN_TREE).stdout) == mask(truth.stdout)


def test_a_forged_cache_hides_nothing_through_files(tmp_path):
    root = project(tmp_path)
    args = ("--files", "sampler/data.py", "conf/config.yaml", "--format", "json")
    truth = run_cli("scan", *args, "--no-cache", cwd=root)
    assert truth.returncode == 1 and json.loads(truth.stdout)["findings"]
    forge_clean_cache(root, *args, cwd=root)
    assert run_cli("scan", *args, env=ATTACKER, cwd=root).returncode == 0
    proc = run_cli("scan", *args, env=IN_TREE, cwd=root)
    assert proc.returncode == 1 and mask(proc.stdout) == mask(truth.stdout)


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _payloads(marker: Path) -> dict[str, bytes]:
    """Payloads that would have run code, imported modules or exhausted memory in a pickle
    based cache: each is written below with a valid MAC (the worst case: a leaked secret)."""
    from auditor.model import Site

    memo_bomb = b"\x80\x05N" + b"r" + (0x10000000).to_bytes(4, "little") + b"."  # LONG_BINPUT 2**28: 4 GiB memo
    return {
        "code": pickle.dumps(_Exploit(marker)),
        "module import": b"cauditor.__main__\nmain\n)R.",  # GLOBAL, EMPTY_TUPLE, REDUCE: runs the CLI again
        "constructor": pickle.dumps(Site("define", "x.py", 1, 1, "n", source="x" * 500)),
        "memory bomb": memo_bomb,
        "deep value": b"[" * 100_000 + b"]" * 100_000,
        "deep object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        "wrong shape": b'{"files": 7, "dirs": [], "table": null}\n',
    }


def _sign(path: Path, payload: bytes) -> None:
    blob = path.read_bytes()
    end = blob.index(b"\n", len(cache_mod.MAGIC))
    fields = json.loads(blob[len(cache_mod.MAGIC):end])
    path.write_bytes(cache_mod._header(fields["kind"], fields["key"], payload) + payload)


@pytest.mark.parametrize("kind", list(_payloads(Path("/x"))))
def test_crafted_payloads_under_a_valid_mac_are_misses(tmp_path, kind):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold = run_cli("scan", str(root), "--format", "json", "--no-cache")
    first = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache))
    assert mask(first.stdout) == mask(cold.stdout)
    marker = tmp_path / "pwned"
    entries = sorted(cache.glob("*.bin"))
    assert {p.name.split("-")[0] for p in entries} == {"files", "replay", "walk"}
    for p in entries:
        _sign(p, _payloads(marker)[kind])
    cmd = [sys.executable, "-m", "auditor", "scan", str(root), "--format", "json", "--cache-dir", str(cache)]
    peak, code, out = peak_rss_run(cmd, env=cli_env(), cwd=REPO)  # run_cli's environment: the same replay key
    assert code == 1 and mask(out) == mask(cold.stdout)  # not a crash, not a second CLI run, not the forgery
    assert not marker.exists()
    assert peak < 400, f"{peak:.0f} MB"
    # and the entries were rewritten: the next scan replays the truth
    assert mask(run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache)).stdout) == mask(cold.stdout)


def test_a_symlinked_cache_directory_is_not_used(tmp_path):
    root = project(tmp_path)
    elsewhere = tmp_path / "outside"
    elsewhere.mkdir()
    (root / ".qg-audit_cache").symlink_to(elsewhere, target_is_directory=True)
    truth = run_cli("scan", str(root), "--format", "json", "--no-cache")
    for _ in range(2):
        proc = run_cli("scan", str(root), "--format", "json", env=IN_TREE)
        assert proc.returncode == 1 and mask(proc.stdout) == mask(truth.stdout)
        [line] = proc.stderr.splitlines()
        assert "is a symlink" in line and "without the cache" in line
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    given = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(root / ".qg-audit_cache"))
    assert "is a symlink" in given.stderr and list(elsewhere.iterdir()) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program to make a real index")
def test_a_cache_directory_that_git_tracks_is_not_used(tmp_path):
    root = project(tmp_path)
    forge_clean_cache(root, str(root), "--format", "json")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-f", ".qg-audit_cache"], check=True)
    subprocess.run([*git, "commit", "-qm", "cache"], check=True)
    truth = run_cli("scan", str(root), "--format", "json", "--no-cache")
    # even a forgery with this user's own secret would not be read: the directory is refused
    proc = run_cli("scan", str(root), "--format", "json", env=ATTACKER)
    assert proc.returncode == 1 and mask(proc.stdout) == mask(truth.stdout)
    [line] = proc.stderr.splitlines()
    assert "git tracks files in it" in line and ".qg-audit_cache" in line
    before = {p.name: p.read_bytes() for p in (root / ".qg-audit_cache").iterdir()}
    run_cli("scan", str(root), "--format", "json", env=IN_TREE)
    assert {p.name: p.read_bytes() for p in (root / ".qg-audit_cache").iterdir()} == before  # nothing written


def test_entries_that_are_fifos_or_links_never_block_a_scan(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    truth = run_cli("scan", str(root), "--format", "json", "--no-cache")
    run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache))
    names = sorted(p.name for p in cache.glob("*.bin"))
    assert len(names) == 3
    victim = tmp_path / "victim"
    victim.write_text("")
    for i, name in enumerate(names):
        (cache / name).unlink()
        if i == 0:
            os.mkfifo(cache / name)
        elif i == 1:
            (cache / name).symlink_to("/dev/stdin")
        else:
            (cache / name).symlink_to(victim)
    env = cli_env()
    # stdin is a pipe nobody writes to: reading /dev/stdin would wait for ever
    proc = subprocess.Popen([sys.executable, "-m", "auditor", "scan", str(root), "--format", "json",
                             "--cache-dir", str(cache)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1 and mask(out) == mask(truth.stdout), err
    assert victim.read_text() == ""  # the link was replaced, not written through
    for name in names:
        assert stat.S_ISREG(os.lstat(cache / name).st_mode)


def test_replay_entries_are_pruned(tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    sets = list(itertools.combinations(files, 2))[:cache_mod.KEEP["replay"] + 4]  # a replay entry each
    for pair in sets:
        proc = run_cli("scan", "--files", *pair, "--format", "json", "--cache-dir", str(cache), cwd=root)
        assert proc.returncode in (0, 1), proc.stderr
    assert len(list(cache.glob("replay-*.bin"))) == cache_mod.KEEP["replay"]
    assert len(list(cache.glob("files-*.bin"))) == 1 and len(list(cache.glob("walk-*.bin"))) == 1


def test_the_secret_file_is_private_and_an_unsafe_one_is_refused(tmp_path):
    root = project(tmp_path)
    xdg = tmp_path / "xdg"
    env = {"QG_AUDIT_CACHE_SECRET": None, "XDG_CACHE_HOME": str(xdg)}
    truth = run_cli("scan", str(root), "--format", "json", "--no-cache")
    cache = tmp_path / "cache"
    first = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache), env=env)
    assert mask(first.stdout) == mask(truth.stdout) and first.stderr == ""
    secret = xdg / "qg-audit" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(secret.read_bytes()) == 32
    assert stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
    assert list(cache.glob("replay-*.bin"))
    # another user's (another home's) secret: every entry is a miss, the output the same
    other = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache),
                    env={**env, "XDG_CACHE_HOME": str(tmp_path / "other")})
    assert mask(other.stdout) == mask(truth.stdout)
    os.chmod(secret, 0o644)
    proc = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache), env=env)
    assert mask(proc.stdout) == mask(truth.stdout)
    [line] = proc.stderr.splitlines()
    assert "cache off" in line and "readable or writable by others" in line
    secret.unlink()
    secret.symlink_to(tmp_path / "other" / "qg-audit" / "secret")
    proc = run_cli("scan", str(root), "--format", "json", "--cache-dir", str(cache), env=env)
    assert mask(proc.stdout) == mask(truth.stdout) and "cache off" in proc.stderr

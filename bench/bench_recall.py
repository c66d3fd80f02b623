"""Recall of the scan on real code: labelled silent fallbacks it finds, and warnings on traps.

    python bench/bench_recall.py                         # bench/recall/*.json, this checkout
    python bench/bench_recall.py --truth ../shared/realworld-dev/truth.json
    python bench/bench_recall.py --tree /tmp/base        # another checkout's auditor (A/B)
    python bench/bench_recall.py --only skrl --show-hits --json out.json

The twin of bench_precision.py. Each truth file lists pinned sources (a PyPI release:
``{"spec": "skrl==2.1.1", "wheel": false}``; a repository snapshot: ``{"git": "owner/name",
"commit": SHA}``; either may list the releases of frameworks its requirements install,
``"installed": [{"spec": "DI-engine==0.5.3"}]``, which the scan then reads as a user's
environment would hold them: ``project_environment``), the real fallbacks in them (``instances``: the rule codes that are a fair
catch and the line spans where a finding may stand) and look-alikes (``traps``). Every one
was labelled by reading the code, never from the scan's output (bench/recall/README.md).

An instance is found when a finding of one of its codes stands inside one of its spans:
"any" counts every severity, "warning" counts warning and error (what fails a build). A trap
is hit by a warning-level finding inside its spans (of its codes, when it names any).
Figures are split by idiom and by where the backend lives (catalogue, project, installed).
It measures and never fails: exit 0 unless a source cannot be had.

Sources: PyPI releases are downloaded once from the registry's simple index into --cache and
unpacked under --dest; snapshots are exported blob by blob from a local clone or bare mirror
found under --mirror (``owner+name*``), else cloned from GitHub.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shlex
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_truth(paths: list[Path]) -> dict:
    merged = {"packages": {}, "instances": [], "traps": []}
    for path in paths:
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        for f in files:
            data = json.loads(f.read_text())
            for name, src in data.get("packages", {}).items():
                if name in merged["packages"] and merged["packages"][name] != src:
                    raise SystemExit(f"{f}: package {name} is pinned differently in another truth file")
                merged["packages"][name] = src
            for kind in ("instances", "traps"):
                for entry in data.get(kind, []):
                    merged[kind].append({**entry, "set": f.stem})
    return merged


# -- sources ------------------------------------------------------------------------------

def fetch_release(spec: str, wheel: bool, cache: Path, dest: Path) -> Path:
    out = dest / spec.replace("==", "-")
    if out.is_dir():
        return out
    name, version = spec.split("==")
    stem = f"{name}-{version}".lower().replace("-", "_")
    kind = "wheel" if wheel else "sdist"

    def cached() -> list[Path]:
        return [p for p in cache.iterdir() if p.name.lower().replace("-", "_").startswith(stem)
                and (p.suffix == ".whl") == wheel]

    if not cached():
        _download(name, version, wheel, cache)
        if not cached():
            raise SystemExit(f"cannot download {spec} ({kind})")
    archive = cached()[0]
    staging = dest / (out.name + ".partial")
    if staging.exists():
        subprocess.run(["rm", "-rf", str(staging)], check=True)
    staging.mkdir(parents=True)
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(staging)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(staging, filter="data")
    inner = list(staging.iterdir())
    root = inner[0] if not wheel and len(inner) == 1 and inner[0].is_dir() else staging
    root.rename(out)
    if staging.exists():
        subprocess.run(["rm", "-rf", str(staging)], check=True)
    return out


def _download(name: str, version: str, wheel: bool, cache: Path) -> None:
    """The release's sdist (or a wheel) from the registry's simple index: unlike ``pip download``,
    nothing is built (some sdists import torch in setup.py) and no Python version is matched."""
    import re
    import urllib.request

    project = re.sub(r"[-_.]+", "-", name).lower()
    with urllib.request.urlopen(f"https://pypi.org/simple/{project}/", timeout=120) as resp:
        page = resp.read().decode()
    stem = re.sub(r"[-_.]+", "[-_.]", re.escape(name).replace("\\", ""))
    pattern = re.compile(rf'href="([^"#]+/({stem}-{re.escape(version)}(?:\.tar\.gz|\.zip|-[^"#/]*\.whl)))', re.I)
    files = [{"url": m.group(1), "filename": m.group(2)} for m in pattern.finditer(page)]
    want = [f for f in files if f["filename"].endswith(".whl") == wheel]
    target = cache / want[0]["filename"]
    with urllib.request.urlopen(want[0]["url"], timeout=600) as resp, open(str(target) + ".part", "wb") as out:
        out.write(resp.read())
    os.replace(str(target) + ".part", target)


def _git_dir(repo: str, mirror: Path) -> Path | None:
    owner, name = repo.split("/", 1)
    for cand in sorted(mirror.glob(f"{owner}+{name}*")):
        for d in (cand, *sorted(cand.rglob("HEAD"))):
            d = d.parent if d.name == "HEAD" else d
            if (d / "objects").is_dir() or (d / ".git").is_dir():
                return d
    return None


def fetch_snapshot(repo: str, commit: str, mirror: Path, dest: Path) -> Path:
    out = dest / f"{repo.replace('/', '+')}-{commit[:12]}"
    if out.is_dir():
        return out
    git_dir = _git_dir(repo, mirror)
    if git_dir is None:
        git_dir = dest / ".clones" / repo.replace("/", "+")
        if not git_dir.is_dir():
            subprocess.run(["git", "clone", "--bare", "-q", f"https://github.com/{repo}", str(git_dir)], check=True)
    git = ["git", f"--git-dir={git_dir / '.git' if (git_dir / '.git').is_dir() else git_dir}"]
    staging = dest / (out.name + ".partial")
    if staging.exists():
        subprocess.run(["rm", "-rf", str(staging)], check=True)
    staging.mkdir(parents=True)
    _export(git, commit, staging)
    staging.rename(out)
    return out


def _export(git: list[str], commit: str, into: Path) -> None:
    """The commit's files, blob by blob: a snapshot may lack its largest blobs (meshes, images,
    LFS), which ``git archive`` refuses; a missing blob is left out (no code file is that big)."""
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    entries = []
    for row in listing.split(b"\0"):
        if not row:
            continue
        meta, path = row.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha, path))
    proc = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for sha, path in entries:
        proc.stdin.write(sha + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue  # "<sha> missing"
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        target = into / os.fsdecode(path)
        if ".." in target.relative_to(into).parts:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    proc.stdin.close()
    proc.wait()


def source_root(name: str, src: dict, args) -> Path:
    if "git" in src:
        return fetch_snapshot(src["git"], src["commit"], args.mirror, args.dest)
    return fetch_release(src["spec"], bool(src.get("wheel")), args.cache, args.dest)


# -- scanning and scoring --------------------------------------------------------------------

def project_environment(name: str, src: dict, args) -> Path | None:
    """The interpreter of an environment where the project's installed frameworks are
    (``"installed": [{"spec": "DI-engine==0.5.3"}]`` in its source, from its requirements), as a
    user's would be: a venv without pip whose ``.pth`` puts those releases' sources, and the
    site folders of the interpreter running this bench, on its path. Nothing is installed or
    imported; the scan reads the sources (``scan --python``). None when the source lists none."""
    wanted = src.get("installed") or []
    if not wanted:
        return None
    roots = [fetch_release(r["spec"], bool(r.get("wheel")), args.cache, args.dest).resolve() for r in wanted]
    venv = args.cache / "environments" / name
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "qg_bench_installed.pth").write_text("".join(f"{p}\n" for p in [*map(str, roots), *ours]))
    return python


def scan(root: Path, report: Path, qg: list[str], env: dict, tree: Path,
         python: Path | None = None) -> tuple[list[dict], float]:
    cmd = [*qg, "scan", str(root.resolve()), "--no-cache", "--exit-zero", "--format", "json", "-o", str(report.resolve())]
    if python is not None:
        cmd += ["--python", str(python)]
    report.unlink(missing_ok=True)  # a crash exits 1 too: never score the last run's report
    start = os.times()
    # run from the tree: `python -m` puts the working directory first on sys.path
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    end = os.times()
    cpu = (end.children_user - start.children_user) + (end.children_system - start.children_system)
    if proc.returncode not in (0, 1) or not report.exists() or "Traceback" in proc.stderr:
        raise SystemExit(f"scan of {root} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return json.loads(report.read_text()).get("findings", []), cpu


def inside(finding: dict, spans) -> bool:
    path = str(finding.get("file", "")).replace("\\", "/").lstrip("./")
    line = finding.get("line") or 0
    return any(path == p and lo <= line <= hi for p, lo, hi in spans)


LOUD = ("warning", "error")


def score(truth: dict, findings: dict[str, list[dict]]) -> dict:
    rows = []
    for inst in truth["instances"]:
        fs = [f for f in findings.get(inst["pkg"], []) if f.get("code") in inst["codes"] and inside(f, inst["at"])]
        rows.append({**inst, "hit": bool(fs), "loud": any(f.get("severity") in LOUD for f in fs),
                     "by": sorted({f"{f['code']}:{f['severity']}" for f in fs})})
    trap_hits = []
    for trap in truth["traps"]:
        for f in findings.get(trap["pkg"], []):
            if f.get("severity") in LOUD and inside(f, trap["at"]) and ("codes" not in trap or f.get("code") in trap["codes"]):
                trap_hits.append({**trap, "finding": f"{f['code']} {f['file']}:{f['line']}"})
    return {"instances": rows, "trap_hits": trap_hits, "traps": len(truth["traps"])}


def _split(rows: list[dict], field: str) -> list[tuple[str, int, int, int]]:
    groups: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        groups[str(r.get(field) or "-")].append(r)
    return [(k, len(v), sum(r["hit"] for r in v), sum(r["loud"] for r in v)) for k, v in sorted(groups.items())]


def render(scored: dict, show_hits: bool) -> str:
    rows = scored["instances"]
    out = []
    for field, title in (("pkg", "package"), ("idiom", "idiom"), ("backend", "backend lives in")):
        if field != "pkg" and not any(r.get(field) for r in rows):
            continue
        out.append(f"{title:22} {'n':>4} {'any':>5} {'warn':>5}")
        for k, n, hit, loud in _split(rows, field):
            out.append(f"  {k:20} {n:4} {hit:5} {loud:5}")
        out.append("")
    for r in rows:
        if not r["hit"] or (show_hits and r["hit"]):
            p, lo, _ = r["at"][0]
            state = "hit " + ",".join(r["by"]) if r["hit"] else "missed"
            out.append(f"{state} [{r['pkg']}] {'/'.join(r['codes'])} {p}:{lo} ({r.get('idiom', '-')}) - {r['what']}")
    for t in scored["trap_hits"]:
        out.append(f"warning on trap [{t['pkg']}] {t['finding']} - {t['what']}")
    n = len(rows)
    hit = sum(r["hit"] for r in rows)
    loud = sum(r["loud"] for r in rows)
    out.append(f"recall {hit}/{n} = {hit / max(n, 1):.2f} (at warning level {loud}/{n} = {loud / max(n, 1):.2f}), "
               f"warnings on traps {len(scored['trap_hits'])} of {scored['traps']} traps")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--truth", type=Path, action="append",
                    help="a truth file or a folder of them (repeatable; default bench/recall/)")
    ap.add_argument("--tree", type=Path, help="a checkout whose auditor package scans (default: this one)")
    ap.add_argument("--qg", help="the command that runs qg-audit (default: python -m auditor from --tree)")
    ap.add_argument("--only", action="append", help="score only this package (repeatable)")
    ap.add_argument("--dest", type=Path, default=HERE / "recall_corpus", help="where sources are unpacked")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache" / "recall")
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("QG_MIRROR", "/work/.mirror")),
                    help="folder of git mirrors named owner+name (for snapshot sources)")
    ap.add_argument("--reports", type=Path, default=HERE / ".cache" / "recall-reports")
    ap.add_argument("--json", type=Path, help="write every instance's outcome here")
    ap.add_argument("--show-hits", action="store_true", help="list the instances found too")
    args = ap.parse_args(argv)
    truth = load_truth(args.truth or [HERE / "recall"])
    tree = (args.tree or HERE.parent).resolve()
    qg = shlex.split(args.qg) if args.qg else [sys.executable, "-m", "auditor"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
    for d in (args.dest, args.cache, args.reports):
        d.mkdir(parents=True, exist_ok=True)
    names = [n for n in truth["packages"] if not args.only or n in args.only]
    findings: dict[str, list[dict]] = {}
    cpu_total = 0.0
    wall = time.monotonic()
    for name in names:
        root = source_root(name, truth["packages"][name], args)
        python = project_environment(name, truth["packages"][name], args)
        findings[name], cpu = scan(root, args.reports / f"{name}.json", qg, env, tree, python)
        cpu_total += cpu
    truth["instances"] = [i for i in truth["instances"] if i["pkg"] in names]
    truth["traps"] = [t for t in truth["traps"] if t["pkg"] in names]
    scored = score(truth, findings)
    print(render(scored, args.show_hits))
    print(f"scanned {len(names)} sources in {time.monotonic() - wall:.1f} s wall, {cpu_total:.1f} s CPU")
    if args.json:
        args.json.write_text(json.dumps(scored, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

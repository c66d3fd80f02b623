"""The rules and the join grow linearly with the sites (issue 22), and say the same as before.

QG103 compared every read with every configured define, and the join looked each key up in
a list of the defined keys: 20k define/read pairs took minutes, a 100k-key config 282 s.
These tests count operations (a timing would fail on a loaded machine; bench/bench_scale.py
measures the seconds) and check the indexed versions against the pairwise ones they replace.
"""

from __future__ import annotations

import collections
import json
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import REPO, run_cli

sys.path.insert(0, str(REPO))
from auditor import join as join_mod  # noqa: E402
from auditor.lint.base import as_number, is_config_define, is_literal, show, where  # noqa: E402
from auditor.model import ScanResult, Site  # noqa: E402
from auditor.rules import qg103_default_divergence as qg103  # noqa: E402

KEYS = ["data.num_workers", "num_workers", "OMP_NUM_THREADS", "rollout.n_envs"]
DEFAULTS = [0, -1, 1, 1.0, True, False, 2, 4, "4", 8]


def define(file: str, value, key="data.num_workers", kind="yaml", line=1) -> Site:
    detail = {} if kind == "yaml" else {"via": "argparse"}
    return Site("define", file, line, 1, key, value=value, kind=kind, detail=detail)


def read(file: str, default, key="data.num_workers", line=1) -> Site:
    return Site("read", file, line, 1, key, default=default, kind="python", detail={"via": "get"},
                source=f"cfg.get({key!r}, {default!r})")


def joined(sites: list[Site]) -> ScanResult:
    result = ScanResult(root=".", sites=sites)
    join_mod.join(result)
    return result


def pairwise_qg103(rule, result) -> list[tuple]:
    """QG103's knob loop as it was: every read against every comparable define, and every read
    against every earlier read (the reference the indexed version must agree with)."""
    out = []
    includes = join_mod.hydra_includes(result)
    for knob in result.knobs:
        configured = [s for s in knob.sites if is_config_define(s) and is_literal(s.value)
                      and not s.detail.get("reference") and not qg103._negative_marker(s.value)]
        reads = [(s, qg103._default_of(s)) for s in knob.sites]
        reads = [(s, d) for s, d in reads if d is not None and s.detail.get("via") != "param"]
        for site, default in reads:
            cfg = qg103._reaching(site, [s for s in configured if qg103._comparable(s, site)], includes)
            if not cfg:
                continue
            by_value = collections.Counter(show(as_number(s.value)) for s in cfg)
            # a fallback equal to one of several configured values still loses the others
            if default in {as_number(s.value) for s in cfg} and (len(by_value) == 1 or default in (0, 1)):
                continue
            out.append((site.file, site.line, len(by_value), where(cfg[0])))
        if configured:
            continue
        for i, (site, default) in enumerate(reads):
            first = next(((s, d) for s, d in reads[:i] if d != default and not qg103._both_unset(d, default)
                          and (s.file == site.file or "." in s.key or s.key.isupper())), None)
            if first is not None:
                out.append((site.file, site.line, where(first[0]), show(first[1])))
    return out


def indexed_qg103(rule, result) -> list[tuple]:
    out = []
    for f in rule.check(result):
        if f.related and f.related[-1].detail.get("via") == "helper":
            continue
        if "falls back to" in f.message and "configuration" not in f.message and "configurations" not in f.message:
            first = f.related[0]
            out.append((f.file, f.line, where(first), f.message.rsplit("falls back to ", 1)[1].split(" ")[0]))
        else:
            first = f.related[0]
            disagree = f.message.split("the ", 1)[1].split(" configurations", 1)[0] if "disagree" in f.message else None
            counts = len({v for v in f.message.split("(")[1].split(";")[0].split(", ")}) if disagree else 1
            out.append((f.file, f.line, counts, where(first)))
    return out


def counted(monkeypatch, module, *names) -> collections.Counter:
    """Replace each of NAMES in MODULE by a wrapper that counts its calls (the real one runs)."""
    calls = collections.Counter()
    for name in names:
        def wrapper(*a, _name=name, _real=getattr(module, name), **k):
            calls[_name] += 1
            return _real(*a, **k)
        monkeypatch.setattr(module, name, wrapper)
    return calls


site_lists = st.lists(st.tuples(st.sampled_from(["define", "read"]), st.sampled_from(["a.yaml", "b.yaml", "x.py", "y.py"]),
                                st.sampled_from(DEFAULTS), st.sampled_from(KEYS), st.booleans()), max_size=14)


@settings(max_examples=300, deadline=None)
@given(site_lists)
@example([("define", "a.yaml", 4, "data.num_workers", False), ("read", "x.py", 4, "data.num_workers", False),
          ("read", "y.py", 1, "data.num_workers", False), ("define", "b.yaml", 8, "data.num_workers", False)])
@example([("read", "x.py", 0, "num_workers", False), ("read", "x.py", -1, "num_workers", False),
          ("read", "y.py", False, "OMP_NUM_THREADS", False), ("read", "x.py", 2, "num_workers", False),
          ("read", "y.py", 0, "OMP_NUM_THREADS", False), ("read", "y.py", 1.0, "num_workers", False),
          ("read", "x.py", True, "num_workers", False)])
def test_indexed_qg103_says_what_the_pairwise_one_said(spec):
    sites = []
    for line, (role, file, value, key, code) in enumerate(spec, 1):
        if role == "define":
            if file.endswith(".py"):
                sites.append(define(file, value, key, kind="python", line=line))
            elif not code:
                sites.append(define(file, value, key, line=line))
        else:
            sites.append(read(file.replace(".yaml", ".py"), value, key, line=line))
    result = joined(sites)
    rule = qg103.DefaultDivergence()
    want = sorted(pairwise_qg103(rule, result), key=repr)
    got = sorted(indexed_qg103(rule, result), key=repr)
    assert [w[:2] for w in want] == [g[:2] for g in got]
    assert [w[3] if isinstance(w[2], int) else w[2:] for w in want] == \
        [g[3] if isinstance(g[2], int) else g[2:] for g in got]


def test_qg103_is_linear_in_define_read_pairs(monkeypatch):
    # _siblings_without walks a folder's config files
    calls = counted(monkeypatch, qg103, "as_number", "_both_unset", "_siblings_without")
    n = 20_000
    # one knob: n config files set 4, n code paths fall back to 1 (every read a finding)
    sites = [define(f"conf/c{i}.yaml", 4) for i in range(n)] + [read(f"src/m{i}.py", 1) for i in range(n)]
    # another: no configuration, n reads with n different defaults (the read-against-read loop)
    sites += [read(f"src/r{i}.py", i + 2, key="rollout.n_envs") for i in range(n)]
    result = joined(sites)
    calls.clear()
    findings = list(qg103.DefaultDivergence().check(result))
    assert sum(f.knob == "data.num_workers" for f in findings) == n
    assert sum(f.knob == "rollout.n_envs" for f in findings) == n - 1
    # pairwise, these were n * n = 4e8 calls each
    assert calls["as_number"] <= 4 * n, calls
    assert calls["_both_unset"] <= 4 * n, calls
    assert calls["_siblings_without"] <= 2, calls  # once per summary, not once per read (was n)


def test_the_suffix_join_is_indexed(monkeypatch):
    seen = counted(monkeypatch, join_mod, "_is_env")
    n = 50_000
    buckets = {f"group{i}.num_workers": [define("c.yaml", 1, f"group{i}.num_workers")] for i in range(n)}
    buckets.update({f"cfg.group{i}.num_workers": [read("m.py", 1, f"cfg.group{i}.num_workers")] for i in range(n)})
    buckets["num_workers"] = [read("m.py", 1, "num_workers")]  # ends n defined keys: joins none
    buckets["x.y.group7.num_workers"] = [read("m.py", 1, "x.y.group7.num_workers")]
    targets = join_mod._suffix_targets(buckets)
    assert targets["cfg.group3.num_workers"] == "group3.num_workers"
    assert targets["x.y.group7.num_workers"] == "group7.num_workers" and "num_workers" not in targets
    assert len(targets) == n + 1
    assert seen["_is_env"] <= 3 * (2 * n + 2), seen  # pairwise: every key against every same-leaf key


def test_a_config_of_100k_knob_keys_is_summarised(tmp_path):
    conf = tmp_path / "proj" / "conf.yaml"
    conf.parent.mkdir()
    conf.write_text("".join(f"group_{i}:\n  num_workers: {i % 7 + 1}\n" for i in range(100_000)))
    proc = run_cli("scan", str(conf.parent), "--format", "json", "--no-cache")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    from auditor.scan import MAX_SITES_PER_FILE

    assert doc["summary"]["knobs"] == MAX_SITES_PER_FILE
    [error] = doc["errors"]
    assert error["file"] == "conf.yaml" and error["message"].startswith("summarised: 100000 parallelism sites")


def _task_tree(root, n: int) -> None:
    """N task configs that set a key nobody reads and one read through an AsyncVectorEnv,
    and N scripts that read it and then force it to 1 (one script per task, as examples do)."""
    (root / "conf").mkdir(parents=True)
    (root / "src").mkdir()
    for i in range(n):
        (root / "conf" / f"t{i}.yaml").write_text(f"env:\n  num_envs: {i % 7 + 1}\n  n_envs: 2\n")
        (root / "src" / f"m{i}.py").write_text(
            "import gymnasium as gym\n"
            f"def build{i}(cfg):\n"
            "    envs = gym.vector.AsyncVectorEnv([lambda: None] * cfg.env.num_envs)\n"
            "    cfg.env.num_envs = 1\n"
            "    return envs\n")


def test_a_key_set_in_every_task_config_gives_a_report_linear_in_the_tasks(tmp_path):
    """Each QG101 finding listed all N sites of its knob and the knob's `why` every override
    (both copied into each consume site): 1,000 tasks wrote 430 MB of JSON in 18 s and 3.5 GB."""
    from auditor.model import RELATED_SHOWN

    docs = {}
    for n in (60, 120):
        _task_tree(tmp_path / str(n), n)
        proc = run_cli("scan", str(tmp_path / str(n)), "--format", "json", "--no-cache")
        assert proc.returncode == 1, proc.stderr
        docs[n] = (len(proc.stdout), json.loads(proc.stdout))
    (small, _), (large, doc) = docs[60], docs[120]
    counts = collections.Counter(f["code"] for f in doc["findings"])
    assert counts["QG101"] == 120 and counts["QG104"] == 120, counts  # every site still reported
    assert all(len(f["related"]) <= RELATED_SHOWN for f in doc["findings"])
    [knob] = [k for k in doc["knobs"] if k["name"] == "env.num_envs"]
    assert "more overrides" in knob["why"] and len(knob["why"]) < 2000, knob["why"]
    assert large < 2.3 * small, (small, large)  # twice the tasks, about twice the report (was 4x)


def test_qg101_looks_up_a_knobs_near_miss_once(monkeypatch):
    from auditor.rules import qg101_unread_config_key as qg101

    calls = counted(monkeypatch, qg101, "_near")
    n = 2_000
    sites = [define(f"conf/t{i}.yaml", 2, key="env.n_envs") for i in range(n)]
    sites += [Site("read", f"src/m{i}.py", 3, 1, "env.num_envs", kind="python", detail={"via": "attribute"},
                   source="cfg.env.num_envs") for i in range(n)]
    result = joined(sites)
    findings = [f for f in qg101.UnreadConfigKey().check(result) if f.knob == "env.n_envs"]
    assert len(findings) == n and "near-miss `env.num_envs`" in findings[0].message, findings[:1]
    assert calls["_near"] <= 4 * n, calls  # once per define site over every read: n * n before


def test_qg105_indexes_the_configured_keys_it_cites_once(tmp_path, monkeypatch):
    """Each literal loader asked which configured `num_workers` to cite by scanning all of them:
    2,000 loaders beside 1,000 task configs spent 2 s of a 3.6 s scan there."""
    from auditor import scan
    from auditor.rules import qg105_hardcoded_parallelism as qg105

    calls = counted(monkeypatch, qg105, "_section")
    n = 150
    (tmp_path / "conf").mkdir()
    (tmp_path / "src").mkdir()
    for i in range(n):
        (tmp_path / "conf" / f"c{i}.yaml").write_text(f"loader:\n  num_workers: {i % 8}\n")
        (tmp_path / "src" / f"m{i}.py").write_text(
            "from torch.utils.data import DataLoader\n"
            f"def build{i}(cfg, ds):\n"
            "    return DataLoader(ds, num_workers=0), DataLoader(ds, num_workers=0)\n")
    result = scan.scan(str(tmp_path), jobs=1)
    join_mod.join(result)
    calls.clear()
    findings = list(qg105.HardcodedParallelism().check(result))
    cited = [f for f in findings if "loader.num_workers is configured at conf/c0.yaml:2" in f.message]
    assert len(cited) == 2 * n, [f.message for f in findings][:2]
    assert calls["_section"] <= 10 * n, calls  # per configured key, not per (loader, key): 2 n * n before

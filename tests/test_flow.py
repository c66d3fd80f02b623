"""The flow layer on realistic multi-file fixtures (fixtures/flow/): site by site, with traces.

Each fixture is a small project scanned by the real pipeline (scan, join, rules); the
assertions name the sites, their keys, how the join matched them, their effective values and
the path from source to sink.
"""

import pickle
from pathlib import Path

import pytest

from auditor.extract import python_code
from auditor.lint.harness import scan_and_check
from auditor import vocab as vocab_mod

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "flow"


def scanned(name):
    return scan_and_check(FIXTURES / name)


def consume(result, file, line):
    found = [s for s in result.sites if s.role == "consume" and s.file == file and s.line == line]
    assert len(found) == 1, [(s.file, s.line, s.key) for s in result.sites if s.role == "consume"]
    return found[0]


def path(site):
    return [(step["role"], step["file"], step["line"], step["kind"]) for step in site.detail["flow"]]


def knob(result, name):
    return next(k for k in result.knobs if k.name == name)


def test_misspelt_get_runs_its_default_and_the_configured_key_is_unread():
    r = scanned("misspelt_get")
    loader = consume(r, "train.py", 9)
    assert (loader.key, loader.match) == ("data.num_wokers", "flow")
    assert loader.detail["effective"] == 0
    assert "set in no scanned file, so the default 0 at train.py:8 runs" in loader.detail["effective_why"]
    assert path(loader) == [("source", "train.py", 8, "config"), ("sink", "train.py", 9, "sink")]
    # the configured key is no longer said to be consumed by the loader
    configured = knob(r, "data.num_workers")
    assert "consumed by" not in configured.why
    assert knob(r, "data.num_wokers").effective == 0
    [f] = [f for f in r.findings if f.code == "QG101"]
    assert (f.file, f.line) == ("conf.yaml", 2)
    assert "near-miss `data.num_wokers` at train.py:8" in f.message and "default 0 runs" in f.message
    assert [(s["file"], s["line"]) for s in f.flow] == [("conf.yaml", 2), ("train.py", 8), ("train.py", 9)]


def test_helpers_summarised_across_files():
    r = scanned("helpers")
    inner = consume(r, "rlkit/pools.py", 8)  # mp.Pool(processes=n_proc) inside the helper
    assert inner.match == "name" and path(inner)[0][3] == "param"
    literal = consume(r, "rlkit/run.py", 10)  # start_pool(32)
    assert (literal.value, literal.detail["via"], literal.detail["helper"]) == (32, "helper", "start_pool")
    assert path(literal) == [("source", "rlkit/run.py", 10, "literal"), ("sink", "rlkit/pools.py", 8, "sink")]
    defaulted = consume(r, "rlkit/run.py", 11)  # start_pool(): the helper's default runs
    assert (defaulted.value, defaulted.detail.get("omitted")) == (4, True)
    assert path(defaulted) == [("source", "rlkit/pools.py", 7, "literal"), ("step", "rlkit/run.py", 11, "arg"),
                               ("sink", "rlkit/pools.py", 8, "sink")]
    configured = consume(r, "rlkit/run.py", 12)  # a key outside the vocabulary is a knob by flow
    assert (configured.key, configured.match, configured.detail["effective"]) == ("rollout.rollout_procs", "flow", 16)
    collector = consume(r, "rlkit/run.py", 13)  # Collector(env_num=...) -> self.env_num -> start_pool(...)
    assert (collector.key, collector.detail["effective"]) == ("env.collector_env_num", 8)
    assert path(collector) == [("source", "rlkit/run.py", 13, "config"), ("step", "rlkit/pools.py", 14, "assign"),
                               ("step", "rlkit/pools.py", 17, "arg"), ("sink", "rlkit/pools.py", 8, "sink")]
    vec = consume(r, "rlkit/pools.py", 23)  # SubprocVecEnv([make_env for _ in range(count)])
    assert (vec.key, vec.detail["effective"]) == ("env.rollout_envs", 4)
    # configs/main.yaml names no vocabulary knob: parsed because a trace reads its keys
    assert {s.key for s in r.sites if s.file == "configs/main.yaml"} == {
        "rollout.rollout_procs", "env.collector_env_num", "env.rollout_envs"}
    [f] = [f for f in r.findings if f.code == "QG105"]
    assert (f.file, f.line) == ("rlkit/run.py", 10) and "n_proc=32 through start_pool()" in f.message
    assert f.flow[-1]["file"] == "rlkit/pools.py"


def test_python_config_modules_define_keys():
    r = scanned("python_config")
    envs = consume(r, "dizoo/entry.py", 9)
    assert (envs.key, envs.match, envs.detail["effective"]) == ("env.collector_env_num", "flow", 8)
    [define] = knob(r, "env.collector_env_num").by_role("define")
    assert (define.file, define.line, define.value, define.detail["via"]) == (
        "configs/pong_config.py", 6, 8, "config-module")
    loader = knob(r, "train_dataloader.loader_workers")
    defines = {(s.file, s.value) for s in loader.by_role("define")}
    assert defines == {("configs/base_loader.py", 2), ("configs/exp_loader.py", 8)}
    assert next(s for s in loader.by_role("define") if s.file == "configs/exp_loader.py").detail["base"] == [
        "./base_loader.py"]


def test_knob_to_knob_assignment_is_an_override():
    r = scanned("knob_copy")
    k = knob(r, "data.num_workers")
    assert k.effective == 2 and "overwritten with legacy.num_workers = 2 at train.py:6" in k.why
    [f] = [f for f in r.findings if f.code == "QG104"]
    assert (f.file, f.line) == ("train.py", 6)
    assert "legacy.num_workers" in f.message and "conf.yaml:2 (8) never takes effect" in f.message


def test_unrelated_name_is_joined_by_name_only():
    r = scanned("unrelated")
    k = knob(r, "rollout.num_envs")
    render = consume(r, "render.py", 5)
    assert render.match == "name" and path(render)[0][3] == "attr"
    assert consume(r, "train.py", 5).match == "flow"
    assert "render.py" not in k.why  # a name alone never says "consumed by"
    [f] = [f for f in r.findings if f.code == "QG106"]
    assert "as configured" not in f.message  # no effective value through a name-only join


def test_per_file_flow_facts_are_plain_picklable_data():
    text = (FIXTURES / "helpers" / "rlkit" / "pools.py").read_text()
    result = python_code.extract(text, "rlkit/pools.py", vocab_mod.load())
    facts = result.flow
    assert set(facts) >= {"sinks", "calls", "functions", "config", "module"}
    assert facts["functions"]["rlkit.pools.start_pool"]["params"] == ["n_proc"]
    clone = pickle.loads(pickle.dumps(result))
    assert clone.flow == facts

    def no_ast(value):
        import ast
        assert not isinstance(value, ast.AST)
        if isinstance(value, dict):
            for v in value.values():
                no_ast(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                no_ast(v)
    no_ast(facts)


@pytest.mark.parametrize("fmt", ["sarif", "json", "text"])
def test_paths_rendered(fmt, tmp_path):
    import json
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    # --no-cache: this environment has neither the suite's cache dir nor its secret, so a cache
    # would land in fixtures/ and a secret in the home directory
    proc = subprocess.run([sys.executable, "-m", "auditor", "scan", str(FIXTURES / "misspelt_get"), "--format", fmt,
                           "--no-cache"],
                          capture_output=True, text=True, cwd=repo, env={"PYTHONPATH": str(repo), "COLUMNS": "200"})
    assert proc.returncode == 1, proc.stderr
    if fmt == "sarif":
        [res] = json.loads(proc.stdout)["runs"][0]["results"]
        locs = res["codeFlows"][0]["threadFlows"][0]["locations"]
        assert [loc["location"]["physicalLocation"]["region"]["startLine"] for loc in locs] == [2, 8, 9]
    elif fmt == "json":
        doc = json.loads(proc.stdout)
        [f] = doc["findings"]
        assert [s["line"] for s in f["flow"]] == [2, 8, 9]
        sites = [s for k in doc["knobs"] for s in k["sites"] if s["role"] == "consume"]
        assert sites[0]["match"] == "flow" and sites[0]["detail"]["flow"][-1]["role"] == "sink"
    else:
        assert "from train.py:8" in proc.stdout and "to   train.py:9" in proc.stdout


def test_the_second_pass_does_not_depend_on_the_order_files_finished_parsing(tmp_path):
    """wanted_words follows helper levels up to a cap (MAX_ROUNDS), and within a round what it
    meets first decides; the pool hands outcomes back in any order. A chain longer than the
    cap, in files whose order matters, must give one answer."""
    from auditor import scan
    from auditor.flow.resolve import MAX_ROUNDS

    depth = MAX_ROUNDS + 3
    (tmp_path / "h0.py").write_text(
        "import torch\n\ndef make_pool_level0(ds, num_workers):\n"
        "    return torch.utils.data.DataLoader(ds, num_workers=num_workers)\n")
    for k in range(1, depth):
        (tmp_path / f"h{k}.py").write_text(
            f"from h{k - 1} import make_pool_level{k - 1}\n\ndef make_pool_level{k}(ds, num_workers):\n"
            f"    return make_pool_level{k - 1}(ds, num_workers)\n")
    for k in range(depth):
        (tmp_path / f"caller{k}.py").write_text(
            f"from h{k} import make_pool_level{k}\n\ndef go(cfg, ds):\n    return make_pool_level{k}(ds, cfg.rollout_size)\n")
    vocab = vocab_mod.load({})
    cands = scan.walk(tmp_path, 10**6)[0]
    outcomes, _ = scan._parse_all(cands, vocab, scan.Prefilter(vocab), 1, None)
    ordered = sorted(outcomes, key=lambda o: o[0])
    chosen = [sorted(o[0] for o in scan._flow_pass(cands, order, vocab, 1))
              for order in (ordered, ordered[::-1])]
    assert chosen[0] == chosen[1]
    assert "caller1.py" in chosen[0]


def test_a_mapping_splatted_into_a_well_known_package_is_an_edge_with_its_section():
    """mmf's Lightning trainer: `Trainer(**OmegaConf.to_container(params))` with `params` an
    attribute holding `self.config.trainer.params`: the edge names the callee and the section."""
    from auditor.flow.values import leaves

    text = ("from omegaconf import OmegaConf\nfrom pytorch_lightning import Trainer\n"
            "class LightningTrainer:\n"
            "    def __init__(self, config):\n"
            "        self.trainer_config = config.trainer.params\n"
            "    def load(self):\n"
            "        params = OmegaConf.to_container(self.trainer_config, resolve=True)\n"
            "        return Trainer(max_steps=1, **params), print(**params), dict(**params)\n")
    flow = python_code.extract(text, "trainer.py", vocab_mod.load()).flow
    edges = [e for e in flow["calls"] if e.get("splats")]
    assert [e["callee"] for e in edges] == [["pytorch_lightning.Trainer"]]  # builtins read no settings
    keys = {n.get("key") for tree in edges[0]["splats"] for n in leaves(tree)}
    assert "trainer.params" in keys


def test_a_script_calls_the_helper_copy_in_its_own_folder():
    # two benchmark folders each keep a copy of human_eval/; `from human_eval.evaluation import`
    # in HumanEval/eval_instruct.py is HumanEval's copy (the script's folder is first on sys.path)
    r = scanned("sibling_copies")
    passed = consume(r, "HumanEval/eval_instruct.py", 8)
    assert passed.value == 8
    assert passed.detail["helper_site"] == "HumanEval/human_eval/evaluation.py:7"
    omitted = consume(r, "MBPP/eval_instruct.py", 8)
    assert omitted.detail["helper_site"] == "MBPP/human_eval/evaluation.py:7"
    assert omitted.detail["omitted"] is True and omitted.value == 16
    # the pool's task starts a process in another file: a count of processes, not of I/O threads
    pool = consume(r, "MBPP/human_eval/evaluation.py", 7)
    assert pool.detail["pool_use"] == "process-start"
    assert pool.detail["pool_use_via"] == "check_correctness calls multiprocessing.Process"
    found = {(f.code, f.file, f.line) for f in r.findings}
    assert ("QG105", "HumanEval/eval_instruct.py", 8) in found
    assert ("QG105", "MBPP/human_eval/evaluation.py", 6) in found
    assert not [f for f in r.findings if f.code == "QG103"]  # neither copy is called both ways


def test_a_caller_of_a_generically_named_helper_is_parsed_through_its_module():
    # tasks/gsm.py names no knob and calls `compute(`, a name in every other file: the second
    # pass looks for `pal_code_exec`, the helper's module, which only its importers name
    r = scanned("generic_helper")
    omitted = consume(r, "tasks/gsm.py", 6)
    assert omitted.detail["omitted"] is True and omitted.value == 4
    assert omitted.detail["helper_site"] == "harness/pal_code_exec.py:7"
    assert [(f.code, f.file, f.line, f.severity) for f in r.findings] == [
        ("QG105", "harness/pal_code_exec.py", 6, "note")]


def test_a_list_of_counts_zipped_into_one_loader_per_dataset(tmp_path):
    """ALBEF's and BLIP's `create_loader(datasets, ..., num_workers=[4, 4, 4], ...)`: the helper
    walks the list with `zip()`, one DataLoader per item, so every loader gets the item; a list
    whose items differ has no single value."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text(
        "from torch.utils.data import DataLoader\n"
        "def create_loader(datasets, batch_size, num_workers):\n"
        "    loaders = []\n"
        "    for dataset, bs, n_worker in zip(datasets, batch_size, num_workers):\n"
        "        loaders.append(DataLoader(dataset, batch_size=bs, num_workers=n_worker))\n"
        "    return loaders\n")
    (tmp_path / "train.py").write_text(
        "from data import create_loader\n"
        "def main(config, train_ds, val_ds):\n"
        "    return create_loader([train_ds, val_ds], [config['batch_size']] * 2, [4, 4])\n")
    (tmp_path / "evaluate.py").write_text(
        "from data import create_loader\n"
        "def main(config, test_ds, val_ds):\n"
        "    return create_loader([test_ds, val_ds], [config['batch_size']] * 2, num_workers=[4, 0])\n")
    r = scan_and_check(tmp_path)
    same = consume(r, "train.py", 3)
    assert same.detail["helper_site"] == "data/__init__.py:5" and same.value == 4
    assert ("QG105", "train.py", 3) in {(f.code, f.file, f.line) for f in r.findings}
    differ = consume(r, "evaluate.py", 3)
    assert differ.value is None and "one item per turn" in differ.detail["effective_why"]

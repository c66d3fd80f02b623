"""The call graph's three readings of a call: what it may run (the default), what it surely
runs (exact), and what it may run when a module the scan did not read stays unknown (careful)."""

from auditor.flow.graph import CallGraph
from auditor.scan import scan

FILES = {
    "pkg/__init__.py": "",
    # parsed: it adds a knob flag
    "pkg/cmd_util.py": "import argparse\n"
                       "def common_arg_parser():\n"
                       "    p = argparse.ArgumentParser()\n"
                       "    p.add_argument('--num_env', type=int, default=1)\n"
                       "    return p\n",
    # parsed: it reads the flag; `learn` is also the name of a function in an unread module
    "pkg/a2c.py": "from multiprocessing import Pool\n"
                  "def learn(args):\n    return Pool(args.num_env)\n",
    # not parsed: no knob word, no script
    "pkg/ppo.py": "def learn(env):\n    return env\n",
    "pkg/run_ppo.py": "from pkg.cmd_util import common_arg_parser\n"
                      "from pkg import ppo\n"
                      "def main():\n"
                      "    args = common_arg_parser().parse_args()\n"
                      "    ppo.learn(args.env)\n"
                      "    args.model.step()\n"
                      "if __name__ == '__main__':\n    main()\n",
}


def _write(tmp_path, files: dict) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)


def _graph(tmp_path) -> CallGraph:
    _write(tmp_path, FILES)
    result = scan(tmp_path)
    assert "pkg/ppo.py" not in result.meta, "the fixture needs a module the scan does not read"
    assert "pkg/run_ppo.py" in result.meta, "a script calling a knob-flag builder is parsed"
    return CallGraph(result.meta)


def test_a_call_into_an_unread_module_may_run_any_function_of_its_name(tmp_path):
    graph = _graph(tmp_path)
    seen, _unknown = graph.reachable("pkg.run_ppo.<module>")
    assert "pkg.a2c.learn" in seen
    assert "pkg.cmd_util.common_arg_parser" in seen


def test_careful_leaves_a_call_into_an_unread_module_unknown(tmp_path):
    graph = _graph(tmp_path)
    seen, unknown = graph.reachable("pkg.run_ppo.<module>", careful=True)
    assert "pkg.a2c.learn" not in seen
    assert "pkg.ppo.learn" in unknown
    assert "pkg.cmd_util.common_arg_parser" in seen


def test_exact_follows_only_the_calls_the_code_names(tmp_path):
    graph = _graph(tmp_path)
    seen, _unknown = graph.reachable("pkg.run_ppo.<module>", exact=True)
    assert seen == {"pkg.run_ppo.<module>", "pkg.run_ppo.main", "pkg.cmd_util.common_arg_parser"}


def test_callers_are_the_functions_that_surely_run_the_target(tmp_path):
    graph = _graph(tmp_path)
    assert graph.callers({"pkg.cmd_util.common_arg_parser"}) == {
        "pkg.cmd_util.common_arg_parser", "pkg.run_ppo.main", "pkg.run_ppo.<module>"}
    assert graph.callers({"pkg.a2c.learn"}) == {"pkg.a2c.learn"}


CLASSES = {
    "pkg/__init__.py": "",
    "pkg/trainers.py": "from multiprocessing import Pool\n"
                       "class Base:\n"
                       "    def step(self, args):\n        return Pool(args.num_workers)\n"
                       "class Fast(Base):\n    pass\n"
                       "class Slow:\n"
                       "    def step(self, args):\n        return Pool(args.num_workers + 1)\n",
    "pkg/run.py": "from pkg.trainers import Fast\n"
                  "def main(args):\n"
                  "    print(args.num_workers)\n"
                  "    trainer = Fast()\n"
                  "    trainer.step(args)\n"
                  "if __name__ == '__main__':\n    main(None)\n",
}


def test_careful_calls_a_method_of_only_the_classes_the_path_makes(tmp_path):
    _write(tmp_path, CLASSES)
    graph = CallGraph(scan(tmp_path).meta)
    loose, _ = graph.reachable("pkg.run.<module>")
    careful, _ = graph.reachable("pkg.run.<module>", careful=True)
    assert {"pkg.trainers.Slow.step", "pkg.trainers.Base.step"} <= loose
    assert "pkg.trainers.Base.step" in careful, "Fast inherits step from Base"
    assert "pkg.trainers.Slow.step" not in careful, "no Slow is made on the path"


def test_goals_end_the_walk_once_each_is_met(tmp_path):
    graph = _graph(tmp_path)
    full, _ = graph.reachable("pkg.run_ppo.<module>", careful=True)
    met, _ = graph.reachable("pkg.run_ppo.<module>", careful=True, goals=[{"pkg.run_ppo.main"}])
    unmet, _ = graph.reachable("pkg.run_ppo.<module>", careful=True, goals=[{"pkg.nowhere"}])
    assert "pkg.cmd_util.common_arg_parser" in full and "pkg.cmd_util.common_arg_parser" not in met
    assert unmet == full


REEXPORTED = {
    "app/__init__.py": "",
    # unread: no knob word; it re-exports the builder from its module
    "app/model/__init__.py": "from app.model.adapter import add_model_args, load\n",
    "app/model/adapter.py": "def add_model_args(parser):\n"
                            "    parser.add_argument('--num-gpus', type=int, default=1)\n"
                            "def load(path):\n    return path\n",
    "app/model/other.py": "def load(path, num_gpus=1):\n    return path, num_gpus\n",
    "app/serve/api.py": "import argparse\n"
                        "from app.model import add_model_args, load\n"
                        "if __name__ == '__main__':\n"
                        "    parser = argparse.ArgumentParser()\n"
                        "    add_model_args(parser)\n"
                        "    load(parser.parse_args().path)\n",
}


def test_exact_follows_a_name_the_package_re_exports_from_its_one_module(tmp_path):
    _write(tmp_path, REEXPORTED)
    result = scan(tmp_path)
    assert "app/model/__init__.py" not in result.meta, "the fixture needs an unread package __init__"
    graph = CallGraph(result.meta)
    seen, unknown = graph.reachable("app.serve.api.<module>", exact=True)
    assert "app.model.adapter.add_model_args" in seen
    # two modules of the package define `load`: which one the __init__ exports is not known
    assert not {"app.model.adapter.load", "app.model.other.load"} & seen and "app.model.load" in unknown
    assert "app.serve.api.<module>" in graph.callers({"app.model.adapter.add_model_args"})


CHOSEN = {
    "pkg/__init__.py": "",
    "pkg/runners.py": "from multiprocessing import Pool\n"
                      "class ParallelRunner:\n"
                      "    def run(self, cfg):\n        return Pool(cfg.num_workers)\n"
                      "class SerialRunner:\n"
                      "    def run(self, cfg):\n        return [cfg.num_workers]\n"
                      "class Unused:\n"
                      "    def run(self, cfg):\n        return cfg.num_workers\n",
    "pkg/train.py": "from pkg.runners import ParallelRunner, SerialRunner\n"
                    "def main(cfg):\n"
                    "    print(cfg.num_workers)\n"
                    "    runner_cls = SerialRunner if cfg.serial else ParallelRunner\n"
                    "    runner = runner_cls()\n"
                    "    runner.run(cfg)\n"
                    "if __name__ == '__main__':\n    main(None)\n",
}


def test_careful_knows_the_classes_a_path_binds_to_a_name_before_calling_it(tmp_path):
    _write(tmp_path, CHOSEN)
    careful, _ = CallGraph(scan(tmp_path).meta).reachable("pkg.train.<module>", careful=True)
    assert {"pkg.runners.ParallelRunner.run", "pkg.runners.SerialRunner.run"} <= careful
    assert "pkg.runners.Unused.run" not in careful, "no Unused is named on the path"

"""QG101 unread-config-key: a parallelism key is set in configuration but no code reads it."""

import ast
import posixpath
import re
from collections import Counter
from functools import lru_cache

from auditor import catalogue
from auditor.flow import handoff, values
from auditor.flow.resolve import CONFIG_FILE
from auditor.keys import CONFIG_CLASS, one_typo
from auditor.lint import idioms
from auditor.lint.base import (CONFIG_KINDS, SETTINGS_VIAS, Example, Rule, commented_out, count_units, foreign_package,
                               in_examples, is_launch_override, is_test_file, is_test_site, is_vendored,
                               modules_to_files, near_files, parsed_settings_classes, project_packages, show, similar,
                               where)

FIELD_VIAS = ("dataclass", "pydantic", "attrs", "argparse")
MAX_PARSER_SCRIPTS = 300  # scripts whose paths QG101 walks for the flags they accept
# A script that takes this many parallelism flags from shared parser builders takes a framework's
# whole parser (Megatron's parse_args) for a job of its own (tools/prepare_cache.py): the flags
# only the training loop reads are the framework's, not settings this script drops
WHOLE_PARSER = 8
MISSPELT_MIN = 10  # a key this long one typo from a parallelism field is a misspelling, not a name of its own

_LOADER = "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\n"


# a trainer that stores its tokenizing count and comments out the one call that used it
_DPO_TRAINER = {"llava/trl/dpo_trainer.py": "class DPOTrainer(Trainer):\n"
                "    def __init__(self, model, train_dataset, dataset_num_proc=None):\n"
                "        self.dataset_num_proc = dataset_num_proc\n"
                "        # train_dataset = train_dataset.map(self.tokenize_row, num_proc=self.dataset_num_proc)\n"
                "        self.train_dataset = train_dataset\n"
                "    def tokenize_row(self, row):\n        return row\n"}


# a setting of the held-out phase is named with one of these (valid_num_workers,
# num_workers_valid, n_eval_rollout_threads); a path for that phase says one of them too
_HELD_OUT_WORDS = frozenset({"valid", "validation", "val", "eval", "evaluation"})
_PHASES = frozenset({"train", "training", "valid", "validation", "validate", "val", "eval", "evaluate",
                     "evaluation", "test", "testing"})
_NOT_HELD_OUT = frozenset({"train", "training", "test", "testing"})
# `validate_config()`, `validate_learner_args()`: a check of the settings, not a validation phase
_CHECKED = frozenset({"config", "configs", "cfg", "args", "arguments", "params", "settings", "schema", "spec",
                      "inputs", "input", "options", "flags"})


def _phases(name: str) -> set:
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)}
    return set() if words & _CHECKED else words & _PHASES


_ACTOR_TRAINER = ("from dataclasses import dataclass, field\nfrom multiprocessing import Pool\n"
                  "from torchtitan.config import Parallelism\n"
                  "@dataclass\nclass Trainer:\n"
                  "    parallelism: Parallelism = field(default_factory=Parallelism)\n"
                  "    num_workers: int = 2\n"
                  "    def setup(self):\n        return Pool(self.num_workers)\n")


def _actor_recipe(section: str) -> dict:
    """A recipe that builds a project dataclass from a config section, through an actor's
    `.options(...).as_actor(**section)` (Monarch's spelling of Ray's `.options(...).remote()`)."""
    return {"actors/__init__.py": "", "actors/trainer.py": _ACTOR_TRAINER,
            "main.py": "import yaml\nfrom actors.trainer import Trainer\n"
                       "def main(cfg):\n    return Trainer.options(procs=2).as_actor(**cfg['trainer'])\n"
                       "if __name__ == '__main__':\n    main(yaml.safe_load(open('grpo.yaml')))\n",
            "grpo.yaml": "trainer:\n" + section}


def _held_out_path(bound_to: str, function: str, path: str) -> str | None:
    """How a message names the held-out path a read is on, or None when it is on none. The
    first of the bound name, the function's last name and the file's stem that names a phase
    decides: held-out when it names valid / eval and not train or test."""
    name = function.rsplit(".", 1)[-1]
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for phrase, words in ((f"for `{bound_to}`", bound_to), (f"in {name}()", name), (f"in {path}", stem)):
        phases = _phases(words)
        if phases:
            return None if phases & _NOT_HELD_OUT else phrase
    return None


def _held_out_loaders(valid_count: str) -> dict:
    """A parser offering --valid-num-workers, read by the pretraining loaders; the finetuning
    task builds its validation loader with VALID_COUNT (examples)."""
    return {"megatron/arguments.py": "import argparse\ndef parse_args():\n    p = argparse.ArgumentParser()\n"
                                     "    p.add_argument('--num-workers', type=int, default=2)\n"
                                     "    p.add_argument('--valid-num-workers', type=int, default=2)\n"
                                     "    return p.parse_args()\n",
            "megatron/training.py": "from torch.utils.data import DataLoader\n"
                                    "def loaders(args, train_ds, valid_ds):\n"
                                    "    return (DataLoader(train_ds, num_workers=args.num_workers),\n"
                                    "            DataLoader(valid_ds, num_workers=args.valid_num_workers))\n",
            "tasks/finetune.py": "from torch.utils.data import DataLoader\n"
                                 "def build(args, train_ds, valid_ds, test_ds):\n"
                                 "    train_loader = DataLoader(train_ds, num_workers=args.num_workers)\n"
                                 "    test_loader = DataLoader(test_ds, num_workers=args.num_workers)\n"
                                 f"    valid_loader = DataLoader(valid_ds, num_workers={valid_count})\n"
                                 "    return train_loader, valid_loader, test_loader\n"}


def _is_reader(site) -> bool:
    return site.role in ("read", "consume", "override")


def _entry_scripts(core_returns: str) -> dict:
    """Two entry scripts parsing one settings class; core.py returns CORE_RETURNS (examples)."""
    main = ("from transformers import HfArgumentParser\nfrom config import ExperimentConfig\n"
            "def main(args):\n    return {}\nif __name__ == '__main__':\n"
            "    main(HfArgumentParser((ExperimentConfig,)).parse_args_into_dataclasses()[0])\n")
    return {"config.py": "from dataclasses import dataclass\n@dataclass\nclass ExperimentConfig:\n"
                         "    num_workers: int = 4\n    sequence_parallel_size: int = 1\n",
            "fast.py": main.format("args.num_workers, 8 // args.sequence_parallel_size"),
            "core.py": main.format(core_returns),
            "run.sh": "python core.py --sequence_parallel_size 4\n"}


def _flat_scripts(ff_main: str) -> dict:
    """Two Hydra scripts of one folder, each loading a flat config of its own (purejaxrl /
    JaxMARL style: top-level upper-case keys); rnn.py vmaps NUM_SEEDS seeds, ff.py runs FF_MAIN."""
    def script(name: str, body: str) -> str:
        return ("import hydra\nimport jax\n"
                f"@hydra.main(config_path='config', config_name='{name}', version_base=None)\n"
                f"def main(config):\n{body}if __name__ == '__main__':\n    main()\n")
    return {"baselines/config/ff.yaml": "NUM_ENVS: 16\nNUM_SEEDS: 2\n",
            "baselines/config/rnn.yaml": "NUM_ENVS: 16\nNUM_SEEDS: 4\n",
            "baselines/ff.py": script("ff", ff_main),
            "baselines/rnn.py": script("rnn", "    rngs = jax.random.split(jax.random.PRNGKey(0), config['NUM_SEEDS'])\n"
                                              "    return jax.vmap(train)(rngs), config['NUM_ENVS']\n")}


def _hydra_scripts(td3_collector: str) -> dict:
    """Two Hydra scripts in folders of their own, each with a config.yaml and a utils.py; td3's
    make_collector returns TD3_COLLECTOR (examples)."""
    script = ("import hydra\nfrom utils import make_collector\n"
              "@hydra.main(config_path='', config_name='config', version_base='1.3')\n"
              "def main(cfg):\n    make_collector(cfg)\nif __name__ == '__main__':\n    main()\n")
    return {"td3/config.yaml": "collector:\n  frames_per_batch: 1000\n  num_workers: 4\n",
            "td3/td3.py": script,
            "td3/utils.py": "from torch.utils.data import DataLoader\n"
                            f"def make_collector(cfg):\n    return {td3_collector}\n",
            "impala/config.yaml": "collector:\n  num_workers: 12\n",
            "impala/impala.py": script,
            "impala/utils.py": "from multiprocessing import Pool\n"
                               "def make_collector(cfg):\n    return Pool(cfg.collector.num_workers)\n"}


def _own_parse_args() -> dict:
    """train.py parses --num-gpus in its own parse_args() and reads only args.seed (examples)."""
    return {"train.py": "import argparse\n"
                        "def parse_args():\n"
                        "    p = argparse.ArgumentParser()\n"
                        "    p.add_argument('--num-gpus', type=int, default=1)\n"
                        "    return p.parse_args()\n"
                        "def main():\n    args = parse_args()\n    return args.seed\n"
                        "if __name__ == '__main__':\n    main()\n"}


def _parser_scripts(atari_main: str) -> dict:
    """run.py and run_atari.py build one parser (cmd_util.common_arg_parser, which adds
    --num_env); run.py reads the flag; run_atari.py's main runs ATARI_MAIN (examples)."""
    return {"pkg/__init__.py": "",
            "pkg/cmd_util.py": "import argparse\n"
                               "def common_arg_parser():\n"
                               "    parser = argparse.ArgumentParser()\n"
                               "    parser.add_argument('--env', default='Pong')\n"
                               "    parser.add_argument('--num_env', type=int, default=None)\n"
                               "    return parser\n"
                               "def atari_arg_parser():\n    return common_arg_parser()\n",
            "pkg/run.py": "from multiprocessing import Pool\nfrom pkg.cmd_util import common_arg_parser\n"
                          "def build_env(args):\n    return Pool(args.num_env or 4)\n"
                          "def main():\n    build_env(common_arg_parser().parse_args())\n"
                          "if __name__ == '__main__':\n    main()\n",
            "pkg/run_atari.py": "from pkg.cmd_util import atari_arg_parser\nfrom simlab import launch\n"
                                "def train(env_id):\n    return env_id\n"
                                "def main():\n    args = atari_arg_parser().parse_args()\n" + atari_main +
                                "if __name__ == '__main__':\n    main()\n"}


def _whole_parser_scripts() -> dict:
    """Megatron's layout: pretrain.py and tools/prepare_cache.py both call pkg.arguments.parse_args,
    which adds 8 parallelism flags; the cache tool's path reads two of them."""
    knobs = ["num_workers", "num_gpus", "num_nodes", "tensor_model_parallel_size", "pipeline_model_parallel_size",
             "context_parallel_size", "dist_ckpt_workers", "num_dataset_builder_threads"]
    adds = "".join(f"    parser.add_argument('--{k.replace('_', '-')}', type=int, default=1)\n" for k in knobs)
    reads = ", ".join(f"args.{k}" for k in knobs)
    return {"pkg/__init__.py": "",
            "pkg/arguments.py": "import argparse\ndef parse_args():\n    parser = argparse.ArgumentParser()\n"
                                + adds + "    return parser.parse_args()\n",
            "pretrain.py": "from multiprocessing import Pool\nfrom pkg.arguments import parse_args\n"
                           "def main():\n    args = parse_args()\n"
                           f"    return Pool(args.num_workers), ({reads})\n"
                           "if __name__ == '__main__':\n    main()\n",
            "tools/prepare_cache.py": "from multiprocessing import Pool\nfrom pkg.arguments import parse_args\n"
                                      "def build(n, tp):\n    return Pool(n), tp\n"
                                      "def main():\n    args = parse_args()\n"
                                      "    build(args.num_workers, args.tensor_model_parallel_size)\n"
                                      "if __name__ == '__main__':\n    main()\n"}


# the parser of a LLaVA-style eval script: questions split over GPUs by --num-chunks / --chunk-idx
_CHUNKED_EVAL_MAIN = ("if __name__ == '__main__':\n"
                      "    p = argparse.ArgumentParser()\n"
                      "    p.add_argument('--question-file', type=str)\n"
                      "    p.add_argument('--num-chunks', type=int, default=1)\n"
                      "    p.add_argument('--chunk-idx', type=int, default=0)\n"
                      "    main(p.parse_args())\n")


def _deepspeed_script(initialize: str) -> dict:
    """A training script that adds DeepSpeed's flags and builds its engine in a helper module."""
    return {"train.py": "import argparse\nimport deepspeed\nfrom engine import build_engine\n"
                  "def main():\n"
                  "    parser = argparse.ArgumentParser()\n"
                  "    parser.add_argument('--zero_stage', type=int, default=0)\n"
                  "    parser.add_argument('--num_workers', type=int, default=2)\n"
                  "    parser = deepspeed.add_config_arguments(parser)\n"
                  "    args = parser.parse_args()\n"
                  "    engine = build_engine(args, load())\n"
                  "if __name__ == '__main__':\n"
                  "    main()\n",
            "engine.py": "import deepspeed\nfrom torch.utils.data import DataLoader\n"
                         "def build_engine(args, data):\n"
                         "    loader = DataLoader(data, num_workers=args.num_workers)\n"
                         "    ds_config = {'zero_optimization': {'stage': args.zero_stage}}\n"
                         f"    engine, *_ = {initialize}\n"
                         "    return engine\n"}


def _engine_project(build: str, settings: str = "    vllm_pipeline_parallel_size: int = 1\n") -> dict:
    """A settings class, a project engine over vLLM and a subclass that inherits its __init__,
    and a trainer that builds the subclass with BUILD (the body of `_prepare_engine(args)`)."""
    return {"args.py": "from dataclasses import dataclass\n"
                       "@dataclass\n"
                       "class VllmArguments:\n"
                       "    vllm_tensor_parallel_size: int = 1\n" + settings,
            "engine.py": "from vllm import LLM\n"
                         "class VllmEngine:\n"
                         "    def __init__(self, model, tensor_parallel_size=1, pipeline_parallel_size=1):\n"
                         "        self.llm = LLM(model, tensor_parallel_size=tensor_parallel_size,\n"
                         "                       pipeline_parallel_size=pipeline_parallel_size)\n"
                         "class RolloutEngine(VllmEngine):\n"
                         "    def generate(self, prompts):\n"
                         "        return self.llm.generate(prompts)\n",
            "trainer.py": "from engine import RolloutEngine\n"
                          "def _prepare_engine(args):\n" + build}


def _sglang_worker(extra: str) -> dict:
    return {"config/rollout.yaml": "rollout:\n  model_path: /models/m\n  tensor_parallel_size: 2\n"
                                   "  pipeline_parallel_size: 2\n",
            "worker.py": "from sglang.srt.server_args import ServerArgs\n"
                         "class RolloutWorker:\n"
                         "    def __init__(self, cfg):\n"
                         "        self._cfg_rollout = cfg.rollout\n"
                         "    def server_args(self):\n"
                         "        return ServerArgs(model_path=self._cfg_rollout.model_path,\n"
                         "                          tp_size=self._cfg_rollout.tensor_parallel_size" + extra + ")\n"
                         "def world(cfg):\n"
                         "    return cfg.rollout.tensor_parallel_size * cfg.rollout.pipeline_parallel_size, "
                         "cfg.rollout.model_path\n"}


def _env_args(apply: str) -> dict:
    """A settings class of environment variables that setup_env() APPLYs name by name (examples)."""
    return {"dist.py": "import os\nfrom dataclasses import dataclass, asdict, field\n"
                       "@dataclass\nclass EnvironmentArgs:\n    OMP_NUM_THREADS: str = '1'\n"
                       "@dataclass\nclass TrainArgs:\n    env: EnvironmentArgs = field(default_factory=EnvironmentArgs)\n"
                       "    num_workers: int = 4\n"
                       f"def setup_env(env_args):\n    for name, value in asdict(env_args).items():\n        {apply}\n",
            "train.py": "from torch.utils.data import DataLoader\nfrom dist import TrainArgs, setup_env\n"
                        "def main(args: TrainArgs, ds):\n    setup_env(args.env)\n"
                        "    return DataLoader(ds, num_workers=args.num_workers)\n"}


def _role_workers(ref_init: str, critic_reads: str = "self.config.model.path") -> dict:
    """A config with actor, ref and critic sections, each with a `megatron` section, and the
    workers that hold them: one class for actor and ref, one for the critic."""
    return {"ppo.yaml": "actor_rollout_ref:\n  actor:\n    ppo_epochs: 1\n    megatron:\n"
                        "      tensor_model_parallel_size: 4\n  ref:\n    micro_batch: 8\n    megatron:\n"
                        "      tensor_model_parallel_size: 4\ncritic:\n  model:\n    path: m\n  micro_batch: 8\n"
                        "  megatron:\n    tensor_model_parallel_size: 2\n",
            "workers.py": "from megatron.core import parallel_state as mpu\n"
                          "class ActorRefWorker:\n    def __init__(self, config):\n        self.config = config\n"
                          "        mpu.initialize_model_parallel(self.config.actor.megatron.tensor_model_parallel_size)\n"
                          f"        {ref_init}\n"
                          "class CriticWorker:\n    def __init__(self, config):\n        self.config = config\n"
                          "        mpu.initialize_model_parallel(self.config.megatron.tensor_model_parallel_size)\n"
                          f"        self.extra = {critic_reads}\n"}


# a YAML key written as null (`key: null  # comment`, `key: ~`), not an interpolation
_NULL_SETTING = re.compile(r"^\s*[\w.-]+\s*:\s*(?:null|Null|NULL|~)\s*(?:#.*)?$")


class UnreadConfigKey(Rule):
    CODE = "QG101"
    NAME = "unread-config-key"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{subject} but no scanned code reads it, so {effect}{near}"
    RATIONALE = """\
A parallelism key set in a config file that no code reads, interpolates, splats (`**cfg`) or
hands to a `_target_` consumer does nothing: the program runs with whatever default its code
uses. The usual cause is a misspelling (`num_worker` vs `num_workers`) or a key left behind
by a refactor. A settings class's environment-variable fields (`OMP_NUM_THREADS: str = "1"`)
are read when the project writes the environment by computed names (`for k, v in
asdict(env_args).items(): os.environ[k] = v`, `os.environ.update(...)`). When code reads a near-miss spelling, the finding names it and the default
that really runs (never one that counts another unit: `num_cpus` is no near miss of `num_gpus`).
A key under a section named `*_kwargs` (`vllm_kwargs`, `vllm_serve_kwargs`), keyword arguments
handed on whole to a library or a server, is a note that says so (issue 23: what the scan
cannot see is not called unread). An upper-case key under a section of environment variables (`env_vars:`, `runtime_env:`,
`environment:`) is a variable for a launched process, not reported.

A key is read only where its own section is: `actor_rollout_ref.ref.megatron.tensor_model_parallel_size`
is not read by `self.config.megatron.tensor_model_parallel_size` in a function whose
`self.config` also reads, with no default, a key the `ref` section lacks (`model`) while the
sections that have both (`critic`, `reward_model`) are there in the same file: that handle
holds one of those. When every handle that reads `megatron` holds another section, and no chain
reads `ref.megatron` (or hands it on), the key is a warning: the reference worker runs with
the actor's sizes. Only for a config file that gives its own shape (no Hydra defaults list,
no merge key in the section), and only when some handle reads the section's name: a leaf read
through names the scan does not follow says nothing.

Confidence is medium: code outside the scanned tree (an installed library) may read the key.
For that reason a key whose section, named as a configuration (`turbo_config`,
`engine_kwargs`), is handed whole to a function of another package
(`_dict_to_dataclass(FSDPTurboConfig, self.engine_config.turbo_config)`) is only a note that
says so: that package may read it, out of sight. So is any key of the config folder of a Hydra
entry (`@hydra.main(config_path="config")`) whose whole configuration object goes to another
package's code: `RayPPOTrainer(config)`, or `super().__init__(config, ...)` in a project class
that extends it, also through the project's own functions and `task.remote(config)`; the same
for a config file a script names (`os.path.join(here, "configs", "grpo.yaml")`, `--config
apps/sft/llama3_8b.yaml` in its usage text) and whose loaded object it hands whole to another
package (`setup(config)` of NeMo-RL), and for a config file a launch script gives another
program by a config flag (`sweagent run-batch --config agent/swesmith_infer.yaml`), which
that program reads. A section splatted into a project dataclass
(`Trainer(**cfg.trainer)`, `Trainer.options(...).as_actor(**cfg.trainer)`, `.remote(...)`) fills its
fields: a key whose field code reads is read, a key under a field typed as another package's
class (`parallelism: Parallelism` of torchtitan) is a note, and a key that fills no field stays
a warning. Keys under a YAML anchor (`_ppo_meta: &ppo_meta`) are set at every alias's path too (`meta:
*ppo_meta`, `<<: *ppo_meta`), and a read there reads them. A key in a file of which code reads no parallelism key, with no
near-miss read either, is a note: the file may configure another program (a daemon's YAML
shipped beside its Python client). A config file of a tool that reads it itself (an
accelerate or DeepSpeed config, a SkyPilot task, a Ray cluster launcher config, a GitHub Actions workflow, told by its top-level
keys: rules/tool_configs.yaml) is not reported. A key of Hydra's own section (`hydra.launcher.cpus_per_task`, `hydra.launcher.n_jobs`)
is read by Hydra and the launcher plugin a run selects, out of the tree: a note that says so.

A setting declared in code for users to set - a dataclass, pydantic or attrs field, a parser
flag (also gymutil's `{"name": "--flag"}` dicts), an attribute a plain settings class sets in
its `__init__` (`class Arguments:` ... `self.worker_num = 2`) - that no scanned code reads is
reported at its declaration (also when its only read copies it into an attribute of the same
name that nothing reads: `self.n_render_rollout_threads = args.n_render_rollout_threads`): a
warning when a config file, launch script or example script
(`args.worker_num = 4`) of the project sets it, a note otherwise. A field of a class that extends
another package's class (`TrainingArguments`) may be that package's to read: not reported when
the package's installed source names the field, reported as for the project's own classes when
it never does (it cannot read it), and a note that says so when the scan could not search the
package (not installed, too large, `--no-libraries`). A generic settings base such as
`pydantic.BaseModel` reads no field by name (rules/consumers.yaml `settings_bases`). So is a key
of a config file that no project class declares, in a project whose parser is built from
another package's settings class (`HfArgumentParser((CustomArgs, TrainingArguments))`, then
`parse_json_file(...)`): not reported when that package's source names the key, a note that
says so when the package was not searched, reported as usual when it never names it. Not for
`parser.set_defaults(...)`, nor for the flag a serial / parallel switch tests (`if not args.subproc: DummyVecEnv(...)`), nor for a field whose
name a file loads from some object (`self.sequence_parallel_degree` in a validator mixin the
settings class inherits). A field of a settings class that several scripts parse (`HfArgumentParser((Config,))`,
parsers in rules/consumers.yaml) and that one of them never reads on its path (the project's
call graph from its `__main__` block, where a method called on an object of unknown class,
`opt.step()`, is a project method of that name only of a class the path makes or inherits
from), while another does, is reported at the field, naming the
script: a warning when a launch script passes the flag to that script, a note otherwise.
A field of a settings class that a function copies onto another object field by field
(`def set_megatron_cfg(cfg: BaseConfig): for f in fields(cfg): setattr(args, f.name, ...)`,
the class or a base named by the parameter's annotation) is read there: neither the field
nor a config key that fills it is reported.
A key of the config file a Hydra script loads (`@hydra.main(config_path=..., config_name=...)`)
that nothing the script runs reads, while another script reads the same key of its own config
(`collector.num_workers` of td3/config.yaml, read only by impala.py), is reported at the key: the
name is shared, the setting is not. Not for a file with a `_target_` node or a script that
calls `instantiate` (the class reads the keys), nor for a key that a file beside the script
spells as a string other than a subscript (`_cfg_get(cfg.collector, "num_workers")`: asked for
by name out of sight; `config["num_workers"]` is a read of its own config, judged as one). A
flat config's top-level key (`NUM_SEEDS: 2`, purejaxrl and JaxMARL style) is judged the same
way, read as `config["NUM_SEEDS"]`. `from utils import make_collector`
in a script resolves to the utils.py beside it first, as Python does.
A parser flag is judged the same way, per script: when a function that adds `--num_env` to a
parser (`common_arg_parser()`) is surely run by two scripts (calls the code names, not every
function of a called method's name), and nothing one of them may run reads the flag while the
other's path does (baselines' ppo1/run_atari.py beside run.py), it is a warning at that
script's call, naming the builder (a flag a script's own file reads is taken for read there,
and a read in the file of another script that accepts the flag for that script's). Not when a
read lies on no script's path (it may be this
script's, reached in a way the call graph does not see), nor for a flag the script names in a
string (`getattr(args, "num_env")`); a note when the script takes eight or more parallelism flags
from shared builders (a framework's whole parser, as Megatron's tools/prepare_cache.py takes
`parse_args()` to size its dataset caches as training would: the flags only training reads are
not its own); a note when the script hands its parsed namespace whole to
code out of sight (another package's `launch(args)`, `**vars(args)`, or a project file the scan
did not read), which may read it. Only a read at the top of a namespace can read a flag: a key
in a section (`config.DATA.NUM_WORKERS`), a function's own parameter, or an attribute of an
object that holds no settings (`get_worker_info().num_workers`) is no read that may be this
script's (InternVL's eval scripts, each with its own `--num-workers`). A script that passes its
own command line on to a command it runs (`["python", "main.py"] + sys.argv[1:]`) hands its
flags on too: a note.

A script whose parsed namespace never leaves its file (`args = parser.parse_args()`, or `args =
parse_args()` of the script's own `def parse_args(): ... return parser.parse_args()` that no other
file calls, then only `args.<name>` reads there, or `args` given to functions of that file that do
the same) and that never reads the flag it adds (`--num-gpus` in LLaVA's serve/cli.py,
`--dp_size` in ColossalAI's MoE trainers) accepts a flag that does nothing, whatever other files
read under that name: a warning. Not when the namespace goes anywhere else (another module's
function, a method, `vars(args)`, an attribute, a container, a return), nor when the script
passes its command line on, nor for the flags a library's helper adds (DeepSpeed's
`--deepspeed_config`: judged below). A flag added by a function no scanned file calls
(`def add_model_args(parser)`, vendored from another project), and set by no launch script or
config, is a note: no command line may accept it. A flag known as a count by its help text alone
is not declared unread: its reads in other files (`FLAGS.env_batch_size`) are not seen as a knob's.
Such a script's flags that count nothing but choose where or how the work runs (`--gpu`, help
"gpu id"; `--start_method`; `--target_tp`, help "Target TP degree"; `--allreduce_degree`;
rules/knobs.yaml `setting_flags`) are held to the same test: one the script never reads drops
the user's choice, a note.
A literal written into a configuration
object's key that nothing reads (`cfg.num_envs = 1` where the program reads
`cfg.num_envs_per_worker`, or `config["frame_transform_threads"] = 16` in a config module;
elsewhere such a dict is mostly keyword arguments handed out whole) changes nothing: a note.
A setting read into a name that nothing uses (`workers = os.getenv("VILA_WORKERS", 1)` before
`uvicorn.run(app, workers=1)`; `self.num_workers = os.getenv("NUM_WORKERS", 32)` in a class
whose pool is sized by a literal) is read and then dropped: a warning at the read (a note under
examples/). Only for a copy of the setting (a name of the same unit: `workers`, not `dp_size =
world_size // cfg.tp_size`), read by itself or through conversions (`int()`, `min()`, arithmetic
with a literal; not `actor_idx * cfg.nproc_per_node + local_rank`, an index), from the
environment, a flag or an object named as settings (not `getattr(env, "num_envs", 1)`), into a
local its function never loads, a module name no file loads or imports, or an attribute no file
loads from an object other than a settings one (`trainer.num_workers` elsewhere may read it;
`args.num_workers` does not). Not for a variable a launcher sets or a
library reads for itself (`WORLD_SIZE`, `SLURM_NTASKS`: rules/knobs.yaml `set_for_programs`),
nor in a file that reads names dynamically (`locals()`, `vars()`, `asdict`).
A flag a library adds to the script's parser (`deepspeed.add_config_arguments(parser)` adds
`--deepspeed_config`; rules/consumers.yaml `flag_adders`) that nothing on the script's path reads
is a warning when that path builds the library's engine without the parsed arguments
(`deepspeed.initialize(model=m, config=ds_config)`): a DeepSpeed JSON given on the command line
is dropped. Reads in other scripts (step 1 passes `args=args`) do not count; a path that calls
no reader at all is a note.
An engine built with one parallel dimension from the settings and without another that the
same settings define (`VllmEngine(model, tensor_parallel_size=args.vllm_tensor_parallel_size)`
beside the field `vllm_pipeline_parallel_size`) runs the engine's default for the missing one: a
warning at the call, unless the function reads that setting itself (a check that rejects it).
A value passed as a bare name (`LLM(..., tensor_parallel_size=tp_size)`, a parameter) is
matched to settings by name alone, so the settings that declare both dimensions must be in the
calling file or a file it imports (two levels): a standalone script's `tp_size` is not another
program's dataclass field of that name.
The dimensions and their spellings (tensor / tp, pipeline / pp, ...) are rules/knobs.yaml
`dimensions`.
A count a class stores (`self.dataset_num_proc = dataset_num_proc`) whose only use is commented
out (`# train_dataset = train_dataset.map(self.tokenize_row, num_proc=self.dataset_num_proc)`)
is a warning at the store (a note under examples/, docs/): callers set it and nothing reads it.
Not when another file loads the attribute, unless it loads it only from `self` in classes that
do not inherit this one (a sibling trainer's own field of that name).
A count a method only stores (`self.n_jobs = n_jobs` in a model whose `fit()` never uses it)
under an attribute nothing loads, by the same test, is a note at the parameter: a caller's value
never takes effect, though a class may keep a parameter for its siblings' signature.
A configuration key offered as null (`num_layers_per_virtual_pipeline_stage: null` in verl's
Megatron config) that no scanned code reads, and no settings class declares, is a note: left at
null it loses nothing yet, but setting it changes nothing. Not for an interpolation
(`${model.vpp}`), nor in a tool's config file.
A count the settings offer for the validation or evaluation phase (`--valid-num-workers`,
`num_workers_valid`, `n_eval_rollout_threads`: the training setting's name with valid / val /
eval added) that a held-out path skips, reading the training setting instead (Megatron's
finetuning tasks build `valid_dataloader = build_data_loader(valid_ds, ..., args.num_workers)`;
metaseq's validate.py), changes nothing on that path. A read is for the held-out phase when the
name it is bound to says so, else its function's name, else its file's (`validate.py`,
`eval_utils.py`); a name that says train or test is no held-out path. Reported at the read: a
warning when another path of the project reads the held-out setting (it is live there), a note
otherwise; not when the function reads the held-out setting too (`args.valid_n or args.n`).
A key of a config under third_party/ or vendor/ (another project's code shipped in the tree,
with the upstream config it was trained with: FastVideo's third_party/synchformer) that nothing
reads is a note: its settings are not this project's users' to set."""
    VALID = [
        Example({"models/base.py": "class Model:\n"
                                   "    def __init__(self, n_workers=4):\n"
                                   "        self.n_workers = n_workers\n",
                 "models/gru.py": "from torch.utils.data import DataLoader\n"
                                  "from models.base import Model\n"
                                  "class GRUModel(Model):\n"
                                  "    def fit(self, ds):\n"
                                  "        return DataLoader(ds, num_workers=self.n_workers)\n"},
                "a count a base class stores that a subclass in another file loads"),
        Example(_actor_recipe("  num_workers: 4\n"),
                "a section splatted into the project's dataclass, through an actor's options(...).as_actor(): "
                "the key fills a field the class reads"),
        Example({"common/__init__.py": "",
                 "common/config.py": "class ConfigValidator:\n"
                                     "    def __init__(self, description):\n        self.arguments = {}\n"
                                     "    def add_argument(self, key, **kwargs):\n        self.arguments[key] = kwargs\n"
                                     "def create_runner_validator():\n"
                                     "    validator = ConfigValidator(description='runner')\n"
                                     "    validator.add_argument('world_size', type=int, help='Number of processes')\n"
                                     "    return validator\n",
                 "train.py": "import argparse\nfrom multiprocessing import Pool\n"
                             "def main():\n    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--world_size', type=int, default=1)\n"
                             "    args = p.parse_args()\n    return Pool(args.world_size)\n"
                             "if __name__ == '__main__':\n    main()\n",
                 "demo.py": "import argparse\nfrom common.config import create_runner_validator\n"
                            "p = argparse.ArgumentParser()\np.add_argument('--cfg-path')\nargs = p.parse_args()\n"
                            "validator = create_runner_validator()\nprint(args.cfg_path)\n"},
                "a config validator's add_argument (LAVIS's ConfigValidator checks a config file's keys): "
                "no command-line flag of the script that builds it"),
        Example({"config/defaults.yaml": "defaults:\n  generator_workers: 8\natari:\n  generator_workers: 1\n",
                 "config/minerl.yaml": "minerl:\n  generator_workers: 2\n",
                 "launch.py": "import argparse\nimport yaml\nfrom multiprocessing import Process\n"
                              "def main(names, run):\n"
                              "    configs = {}\n"
                              "    for f in ('config/defaults.yaml', 'config/minerl.yaml'):\n"
                              "        configs.update(yaml.safe_load(open(f)))\n"
                              "    conf = {}\n"
                              "    for name in names:\n"
                              "        conf.update(configs[name])\n"
                              "    conf = argparse.Namespace(**conf)\n"
                              "    return [Process(target=run) for _ in range(conf.generator_workers)]\n"},
                "files of named presets merged flat by the names the user picks (`--configs defaults minerl`): "
                "a variant's top-level section is one more preset"),
        Example({"conf.yaml": "dist:\n  nproc_per_node: 1\n",
                 "runner.py": "class Runner:\n"
                              "    def __init__(self, cfg, actor_idx):\n"
                              "        self.actor_idx_node = actor_idx * cfg.dist.nproc_per_node + cfg.dist.local_rank\n"},
                "an index computed from the count and other values, stored and unused: no copy of the setting"),
        Example(_held_out_loaders("args.valid_num_workers or args.num_workers"),
                "a validation loader that reads the validation setting (the training and test loaders take "
                "the training count)"),
        Example({"conf/train.yaml": "trainer:\n"
                                    "  num_workers: 4\n"
                                    "  num_layers_per_virtual_pipeline_stage: null\n",
                 "train.py": "import yaml\nfrom torch.utils.data import DataLoader\n"
                             "cfg = yaml.safe_load(open('conf/train.yaml'))\n"
                             "loader = DataLoader([], num_workers=cfg['trainer']['num_workers'])\n"
                             "vpp = cfg['trainer']['num_layers_per_virtual_pipeline_stage']\n"},
                "a setting offered as null that code reads"),
        Example({"demo/args.py": "import argparse\n"
                                 "parser = argparse.ArgumentParser()\n"
                                 "parser.add_argument('--num_env', type=int, default=4)\n"
                                 "parser.add_argument('--no-subproc', dest='subproc', action='store_false')\n",
                 "demo/envs.py": "from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv\n"
                                 "def make_venv(args, fns):\n"
                                 "    if not args.subproc:\n"
                                 "        venv = DummyVecEnv(fns[:args.num_env])\n"
                                 "    else:\n"
                                 "        venv = SubprocVecEnv(fns[:args.num_env])\n"
                                 "    return venv\n"},
                "a flag another file reads as the test of a serial / parallel switch"),
        Example({**_DPO_TRAINER,
                 "llava/trl/my_dpo.py": "from llava.trl.dpo_trainer import DPOTrainer\n"
                                  "class MyDPO(DPOTrainer):\n"
                                  "    def prepare(self, ds):\n"
                                  "        return ds.map(self.tokenize_row, num_proc=self.dataset_num_proc)\n"},
                "a stored count whose use in its own class is commented out, read by a subclass"),
        Example({"judge.py": "import argparse\nfrom vllm import LLM\nclass Judge:\n"
                             "    def __init__(self, model, tp_size):\n"
                             "        self.llm = LLM(model=model, tensor_parallel_size=tp_size)\n"
                             "if __name__ == '__main__':\n    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--tensor_parallel_size', type=int, default=1)\n"
                             "    a = p.parse_args()\n    Judge('m', a.tensor_parallel_size)\n",
                 "trainer/worker.py": "from dataclasses import dataclass\n@dataclass\nclass DistInfo:\n"
                                      "    tp_size: int\n    dp_size: int\n    pp_size: int\n"
                                      "def world(info: DistInfo):\n    return info.tp_size * info.dp_size * info.pp_size\n"},
                "a script's own parameter `tp_size`, not the field of another program's settings that "
                "also declares `pp_size`"),
        Example(_role_workers("self.groups = mpu.groups_for(self.config.ref.megatron)"),
                "the reference worker hands its own section on"),
        Example(_role_workers("self.micro = self.config.ref.micro_batch", critic_reads="self.config.micro_batch"),
                "a handle reading `megatron` and only keys `ref` has too: it may hold `ref`"),
        Example(_flat_scripts("    rngs = jax.random.split(jax.random.PRNGKey(0), config['NUM_SEEDS'])\n"
                              "    return jax.vmap(train)(rngs), config['NUM_ENVS']\n"),
                "both scripts read NUM_SEEDS of their own flat configs"),
        Example(_env_args("os.environ[name] = str(value)"),
                "environment-variable fields a loop exports by name (os.environ[name] = value)"),
        Example({"launch.py": "import argparse\n"
                              "parser = argparse.ArgumentParser()\n"
                              "parser.add_argument('--num_workers', type=int, default=2)\n"
                              "parser.add_argument('--slurm_gpus_per_task', default=1, type=int, "
                              "help='Number of GPUs per node.')\n"
                              "args = parser.parse_args()\n"
                              "executor(args.num_workers, gpus=args.slurm_gpus_per_task)\n",
                 "config_submitit.yaml": "num_workers: 2\nslurm_config:\n  slurm_cpus_per_task: 8\n"},
                "a key one letter from a read field that counts another unit (cpus, gpus) is no typo of it"),
        Example({"generation.py": "from dataclasses import dataclass\n"
                                  "from vllm import LLM\n"
                                  "@dataclass\n"
                                  "class GenerationArgs:\n"
                                  "    tensor_parallel_size: int = 1\n"
                                  "def generate(model, gen_args: GenerationArgs):\n"
                                  "    return LLM(model=model, tensor_parallel_size=gen_args.tensor_parallel_size)\n",
                 "sample_logits.py": "from dataclasses import dataclass\n"
                                     "from vllm import LLM\n"
                                     "@dataclass\n"
                                     "class SampleArgs:\n"
                                     "    tensor_parallel_size: int = 1\n"
                                     "    pipeline_parallel_size: int = 1\n"
                                     "def sample(model, args: SampleArgs):\n"
                                     "    return LLM(model=model, tensor_parallel_size=args.tensor_parallel_size,\n"
                                     "               pipeline_parallel_size=args.pipeline_parallel_size)\n"},
                "another script's settings class defines the pipeline dimension, not the one this call uses"),
        Example(_sglang_worker(", pp_size=self._cfg_rollout.pipeline_parallel_size"),
                "a server given both dimensions its config section defines"),
        Example(_engine_project("    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size,\n"
                                "                         pipeline_parallel_size=args.vllm_pipeline_parallel_size)\n"),
                "an engine given both dimensions the settings define"),
        Example(_engine_project("    if args.vllm_pipeline_parallel_size > 1:\n"
                                "        raise ValueError('colocate mode runs no pipeline parallelism')\n"
                                "    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size)\n"),
                "the function rejects the dimension it does not pass: loud, not silent"),
        Example(_engine_project("    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size)\n",
                                settings=""),
                "settings that define no pipeline dimension: the engine's default is all there is"),
        Example(_engine_project("    extra = {'enable_lora': True}\n"
                                "    extra.update(args.engine_kwargs)\n"
                                "    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size,"
                                " **extra)\n"
                                "def gpus(args):\n"
                                "    return args.vllm_tensor_parallel_size * args.vllm_pipeline_parallel_size\n"),
                "keyword arguments splatted from a mapping that code may fill with any key"),
        Example(_deepspeed_script("deepspeed.initialize(args=args, model=model)"),
                "the parsed arguments handed to deepspeed.initialize, which reads --deepspeed_config"),
        Example(_deepspeed_script("deepspeed.initialize(model=model, config=json.load(open(args.deepspeed_config)))"),
                "the script reads --deepspeed_config itself"),
        Example({"template/base_config.json": '{\n  "distributed": {\n    "tp_size": 2,\n    "dp_size": 4\n  }\n}\n',
                 "train.py": "import json\n"
                             "from multiprocessing import Pool\n"
                             "def main(path):\n"
                             "    config = json.load(open(path))\n"
                             "    tp = config['distributed']['tp_size']\n"
                             "    return Pool(config['distributed']['dp_size'] * tp)\n"},
                "a section whose keys code reads is read"),
        Example({".github/workflows/gpu.yml": "jobs:\n  e2e:\n    strategy:\n      matrix:\n        include:\n"
                                              "          - num_gpus: 2\n    steps:\n"
                                              "      - run: pytest -n ${{ matrix.num_gpus }}\n",
                 "train.py": "from multiprocessing import Pool\n"
                             "def main(cfg):\n    return Pool(cfg.num_workers)\n"},
                "a workflow's matrix key, read by the workflow's own `${{ matrix.num_gpus }}`"),
        Example({"conf/train.yaml": "policy:\n  scale_loss_by_dp_size: false\n  num_workers: 4\n",
                 "train.py": "from multiprocessing import Pool\n"
                             "def main(cfg):\n    return Pool(cfg.policy.num_workers)\n"},
                "a switch named after a count (`scale_loss_by_dp_size: false`) is no count"),
        Example({"config.py": "from dataclasses import dataclass\n"
                              "@dataclass\n"
                              "class TrainerConfig:\n"
                              "    nnodes: int = 1\n"
                              "    n_gpus_per_node: int = 8\n",
                 "conf/config.yaml": "trainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n",
                 "main.py": "def pools(config):\n"
                            "    return [config.trainer.n_gpus_per_node] * config.trainer.nnodes\n"},
                "a field read through the section that holds it (`config.trainer.nnodes`)"),
        Example({"launcher.py": "from dataclasses import asdict, dataclass\n"
                                "from joblib import Parallel\n"
                                "@dataclass\n"
                                "class JoblibConfig:\n"
                                "    n_jobs: int = -1\n"
                                "def launch(joblib_cfg, jobs, num_workers):\n"
                                "    return Parallel(**asdict(joblib_cfg))(jobs), num_workers\n"},
                "a settings object splatted whole (`**asdict(cfg)`) hands every field on"),
        Example({"train.py": "import argparse\n"
                             "from multiprocessing import Pool\n"
                             "def run(n_parallel, num_workers):\n"
                             "    return list(range(n_parallel)), Pool(num_workers)\n"
                             "if __name__ == '__main__':\n"
                             "    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--n_parallel', type=int, default=2, help='number of sampler workers')\n"
                             "    p.add_argument('--scale_lr', action='store_true', help='scale the lr by the number of GPUs')\n"
                             "    p.add_argument('--num_workers', type=int, default=2)\n"
                             "    args = p.parse_args()\n"
                             "    run(args.n_parallel, args.num_workers)\n"},
                "a flag that counts workers by its help text alone, read in its file; a switch whose "
                "help mentions a count is no count"),
        Example({"conf/rlvr.yaml": "actor_train:\n  strategy_args:\n    strategy_config:\n      tiled_num_shards: 8\n",
                 "strategy.py": "class Strategy:\n"
                                "    def build(self):\n"
                                "        return self.worker_config.strategy_args.strategy_config.get('tiled_num_shards', 4)\n"},
                "read through an object that holds one of the sections (`self.worker_config` for actor_train)"),
        Example({"cluster.sky.yaml": "resources:\n  accelerators: A100:8\nnum_nodes: 2\nrun: |\n  python train.py\n",
                 "train.py": "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\nn = cfg['n_nodes']\n"},
                "a SkyPilot task file: SkyPilot reads its num_nodes"),
        Example({"ray_config/cluster-west.yaml": "cluster_name: cc\nmax_workers: 5\nprovider:\n  type: aws\n"
                                                 "available_node_types:\n  ray.worker.default:\n"
                                                 "    min_workers: 1\n    max_workers: 5\n",
                 "process.py": "import ray\nray.init(address='auto')\nn = ray.cluster_resources()['CPU']\n"
                               "import yaml\ncfg = yaml.safe_load(open('conf.yaml'))\nw = cfg['num_workers']\n"},
                "a Ray cluster launcher config: `ray up` reads its worker counts"),
        Example({"conf/cluster.yaml": "cluster:\n  env_vars:\n    OMP_NUM_THREADS: 32\n  num_nodes: 2\n",
                 "launch.py": "def start(cfg):\n    return spawn(cfg.cluster.num_nodes, env=cfg.cluster.env_vars)\n"},
                "an environment variable under `env_vars:`: the launched process reads it"),
        Example({"spec.yaml": "_ppo_meta: &ppo_meta\n  distributed: false\n  num_workers: 4\n"
                              "ppo:\n  meta: *ppo_meta\n",
                 "control.py": "def run(spec):\n"
                               "    return spec['meta'].get('distributed'), spec['meta']['num_workers']\n"},
                "keys set through a YAML anchor are read at the alias's path"),
        Example(_entry_scripts("args.num_workers, args.sequence_parallel_size"),
                "every script that parses the settings class reads the field on its path"),
        Example({"schema.py": "from dataclasses import dataclass\n"
                              "@dataclass\n"
                              "class Args:\n"
                              "    num_rollout_workers: int = 4\n",
                 "run.py": "def run(args):\n    return start(args.num_rollout_workers)\n",
                 "conf.yaml": "num_rollout_workers: 8\nnum_rollout_steps: 128\n"},
                "a key that differs from a parallelism field by more than one typo is a setting of its own"),
        Example({"hyper.py": "def sample_ppo(trial, n_actions, n_envs):\n    return {'n_steps': n_envs * 8}\n"
                             "def sample_sac(trial, n_actions, n_envs):\n    return {'tau': 0.01}\n"
                             "def sample_dqn(trial, n_actions, n_envs):\n    return {'gamma': 0.99}\n"
                             "SAMPLERS = {'ppo': sample_ppo, 'sac': sample_sac, 'dqn': sample_dqn}\n"
                             "params = SAMPLERS[algo](trial, n_actions, args.n_envs)\n"},
                "callbacks of one imposed signature: a parameter some of them ignore"),
        Example({"envs.py": "class Base:\n    def make(self, num_envs):\n        raise NotImplementedError\n"
                            "class One(Base):\n    def make(self, num_envs):\n        return [build()]\n"},
                "an abstract signature, and an override that keeps its base's parameters"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "the key is read"),
        Example({"conf.yaml": "loader:\n  _target_: torch.utils.data.DataLoader\n  num_workers: 8\n",
                 "train.py": "import hydra\nloader = hydra.utils.instantiate(cfg.loader, dataset=ds)\n"},
                "a _target_ consumer receives the key"),
        Example({"conf.yaml": "loader:\n  num_workers: 8\n  batch_size: 32\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, **cfg['loader'])\n"},
                "the mapping is splatted into the consumer"),
        Example({"conf/config.yaml": "data:\n  num_workers: 8\n",
                 "conf/_generated_config.yaml": "# Generated by export.py - do not edit.\ndata:\n  num_workers: 8\n"
                                                "  prefetch_workers: 2\n",
                 "train.py": _LOADER + "n = cfg['data']['num_workers']\n"},
                "a generated duplicate config is not a second definition"),
        Example({"conf.yaml": "env:\n  collector_env_num: 8\n",
                 "collect.py": _LOADER + "from gymnasium.vector import AsyncVectorEnv\n"
                               "envs = AsyncVectorEnv([make_env] * cfg['env']['collector_env_num'])\n"},
                "a key outside the vocabulary that reaches a backend is read"),
        Example({"config/default.ini": "[vec]\nnum_envs = 2\n[env]\n",
                 "config/craftax.ini": "[env]\nnum_envs = 1024\n",
                 "run.py": "import configparser\nfrom envs import make\n"
                           "def load(args):\n"
                           "    return make(creator, env_kwargs=args['env'], num_envs=args['vec']['num_envs'])\n",
                 "envs.py": "import multiprocessing as mp\n"
                            "def make(creator, env_kwargs=None, num_envs=1):\n"
                            "    return mp.Pool(processes=num_envs)\n"},
                "a section handed on as keyword arguments may carry any key"),
        Example({"accelerate_configs/multi_gpu.yaml": "compute_environment: LOCAL_MACHINE\n"
                                                      "distributed_type: MULTI_GPU\nnum_machines: 1\n"
                                                      "num_processes: 8\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "an accelerate config: accelerate reads its keys (rules/tool_configs.yaml)"),
        Example({".github/workflows/tests.yml": "name: tests\non:\n  push:\n    branches: [main]\n"
                                                "concurrency:\n  group: tests-${{ github.ref }}\n"
                                                "  cancel-in-progress: true\n"
                                                "jobs:\n  gpu:\n    runs-on: ubuntu-latest\n"
                                                "    concurrency:\n      group: gpu\n"
                                                "    steps:\n      - run: pytest\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "a GitHub Actions workflow: GitHub reads its `concurrency:` (rules/tool_configs.yaml)"),
        Example({"examples/fsdp2.json": '{"compute_environment": "LOCAL_MACHINE", "distributed_type": "FSDP",\n'
                                        ' "fsdp_config": {"fsdp_version": 2},\n "num_machines": 1,\n "num_processes": 2}\n',
                 "train.sh": "accelerate launch --config_file examples/fsdp2.json train.py\n",
                 "train.py": "def main(args):\n    return spawn(args.num_processes)\n"},
                "an accelerate config written in JSON"),
        Example({"schema.py": "from pydantic import BaseModel\n"
                              "class Checks:\n"
                              "    def check(self):\n"
                              "        if self.sequence_parallel_degree:\n"
                              "            self.context_parallel_size = self.sequence_parallel_degree\n"
                              "class RunConfig(Checks, BaseModel):\n"
                              "    sequence_parallel_degree: int = 1\n"
                              "    context_parallel_size: int = 1\n",
                 "train.py": "def main(cfg):\n    return spawn(cfg.context_parallel_size)\n"},
                "a pydantic field that a validator of a mixin the model inherits reads through `self`"),
        Example(_hydra_scripts("DataLoader([], num_workers=cfg.collector.num_workers)"),
                "each Hydra script reads the collector.num_workers of its own config"),
        Example(_hydra_scripts("DataLoader([], num_workers=cfg_get(cfg.collector, 'num_workers'))"),
                "the script asks a helper for the key by name"),
        Example({**_hydra_scripts("DataLoader([], num_workers=2, batch_size=cfg.collector.frames_per_batch)\n"
                                  "def start(cfg):\n    return Collectors(collector_cfg=cfg.collector)"),
                 "td3/utils.py": "from torch.utils.data import DataLoader\nfrom lib.workers import Collectors\n"
                                 "def make_collector(cfg):\n    return Collectors(collector_cfg=cfg.collector)\n",
                 "lib/workers.py": "from multiprocessing import Pool\nclass Collectors:\n"
                                   "    def __init__(self, collector_cfg):\n"
                                   "        self.pool = Pool(collector_cfg.num_workers)\n"},
                "td3.py hands its collector section whole to a class that reads the key"),
        Example(_parser_scripts("    train(args.env)\n    return args.num_env\n"),
                "run_atari.py reads --num_env too"),
        Example({"serve/cli.py": "import argparse\n"
                                 "def main(args):\n    return getattr(args, 'model_path'), args.num_gpus\n"
                                 "if __name__ == '__main__':\n"
                                 "    p = argparse.ArgumentParser()\n"
                                 "    p.add_argument('--model-path', type=str)\n"
                                 "    p.add_argument('--num-gpus', type=int, default=1)\n"
                                 "    main(p.parse_args())\n",
                 "train/launch.py": "import ray\ndef start(cfg):\n    ray.init(num_gpus=cfg.num_gpus)\n"},
                "serve/cli.py's main() reads args.num_gpus"),
        Example({"serve/cli.py": "import argparse\nfrom serve.worker import run\n"
                                 "if __name__ == '__main__':\n"
                                 "    p = argparse.ArgumentParser()\n"
                                 "    p.add_argument('--num-gpus', type=int, default=1)\n"
                                 "    run(p.parse_args())\n",
                 "serve/worker.py": "import ray\ndef run(args):\n    ray.init(num_gpus=args.num_gpus)\n"},
                "serve/cli.py hands its namespace to another file, which reads the flag"),
        Example({"components/sampler.py": "from torch.utils.data import DataLoader\n"
                                          "def loader(ds, cfg):\n"
                                          "    params = {'batch_size': cfg.batch_size, 'num_workers': cfg.num_workers}\n"
                                          "    params['persistent_workers'] = True\n"
                                          "    return DataLoader(ds, **params)\n"},
                "a key written into a dict of keyword arguments outside a config module: the call reads it"),
        Example({"eval/mmlu.py": "import argparse\nimport torch\n"
                                 "def main(args):\n    return torch.device(f'cuda:{args.gpu}'), args.ckpt\n"
                                 "if __name__ == '__main__':\n"
                                 "    p = argparse.ArgumentParser()\n"
                                 "    p.add_argument('--ckpt', type=str)\n"
                                 "    p.add_argument('--gpu', type=int, help='gpu id')\n"
                                 "    main(p.parse_args())\n"},
                "eval/mmlu.py reads args.gpu"),
        Example({"eval/mmlu.py": "import argparse\nfrom eval.model import load\n"
                                 "if __name__ == '__main__':\n"
                                 "    p = argparse.ArgumentParser()\n"
                                 "    p.add_argument('--gpu', type=int, help='gpu id')\n"
                                 "    load(p.parse_args())\n",
                 "eval/model.py": "def load(args):\n    return args\n"},
                "eval/mmlu.py hands its namespace to another file, which may read the flag"),
        Example({**_own_parse_args(),
                 "launch.py": "import ray\nfrom train import parse_args\n"
                              "def start():\n    ray.init(num_gpus=parse_args().num_gpus)\n"},
                "train.py's parse_args() is called from launch.py too, which reads the flag"),
        Example({**_parser_scripts("    train(args.env)\n"),
                 "pkg/run.py": "from multiprocessing import Pool\nfrom pkg.cmd_util import common_arg_parser\n"
                               "def build_env(args):\n    return Pool(args.num_env or 4)\n"
                               "def main():\n    build_env(common_arg_parser().parse_args())\n"},
                "the read is on no script's path (run.py is a module here): it may be run_atari.py's"),
        Example({**_parser_scripts("    train(args.env)\n"),
                 "pkg/run_atari.py": "from pkg.cmd_util import atari_arg_parser\nfrom pkg.processor import Processor\n"
                                     "class Atari(Processor):\n    pass\n"
                                     "def main(env, num_env=1):\n    return Atari(env, num_processes=num_env)()\n"
                                     "if __name__ == '__main__':\n"
                                     "    opts = atari_arg_parser().parse_args()\n    main(**vars(opts))\n",
                 "pkg/processor.py": "from multiprocessing import Pool\nclass Processor:\n"
                                     "    def __init__(self, env, num_processes=1):\n"
                                     "        self.env, self.num_processes = env, num_processes\n"
                                     "    def __call__(self):\n        return Pool(self.num_processes)\n"},
                "run_atari.py splats its namespace into main(), whose num_env parameter is the flag"),

        Example({"configs.py": "from dataclasses import dataclass\n"
                               "@dataclass\n"
                               "class BaseConfig:\n"
                               "    num_workers: int = 2\n"
                               "@dataclass\n"
                               "class MegatronConfig(BaseConfig):\n"
                               "    virtual_pipeline_model_parallel_size: int = 1\n",
                 "megatron_module.py": "from dataclasses import fields\n"
                                       "from torch.utils.data import DataLoader\n"
                                       "from configs import BaseConfig\n"
                                       "def loader(ds, cfg):\n    return DataLoader(ds, num_workers=cfg.num_workers)\n"
                                       "def set_megatron_cfg(args, cfg: BaseConfig):\n"
                                       "    for field in fields(cfg):\n"
                                       "        if hasattr(args, field.name):\n"
                                       "            setattr(args, field.name, getattr(cfg, field.name))\n",
                 "template/megatron.yaml": "models:\n  policy:\n    virtual_pipeline_model_parallel_size: 2\n"},
                "every field of the settings class is copied onto Megatron's arguments, which read them"),
        Example({"serve.py": "import os\n"
                             "world_size = int(os.environ['WORLD_SIZE'])\n"
                             "class Api:\n"
                             "    def __init__(self):\n"
                             "        self.num_workers = int(os.getenv('API_WORKERS', 8))\n",
                 "client.py": "from serve import Api\n"
                              "def pool_size(api):\n    return api.num_workers\n"},
                "a launcher's variable read into an unused name (torch reads it itself), and an "
                "attribute another file reads"),
        Example({"trainer.py": "def fit(cfg, env, wg):\n"
                               "    n_envs = getattr(env, 'num_envs', 1)\n"
                               "    dp_size = wg.world_size // cfg.rollout.tp_size\n"
                               "    return cfg.data.batch_size\n",
                 "rollout.py": "from vllm import LLM\n"
                               "def engine(cfg):\n    return LLM('m', tensor_parallel_size=cfg.rollout.tp_size)\n"},
                "another object's attribute read into an unused name, and a value derived from a "
                "setting (not a copy of it) that nothing uses"),
    ]
    INVALID = [
        Example({"agent/run_infer.sh": "#!/bin/bash\nsweagent run-batch --config agent/infer.yaml --output_dir out\n",
                 "agent/infer.yaml": "num_workers: 20\n",
                 "bug_gen.py": "import argparse\nfrom concurrent.futures import ProcessPoolExecutor\n"
                               "p = argparse.ArgumentParser()\np.add_argument('--n_workers', type=int, default=1)\n"
                               "args = p.parse_args()\npool = ProcessPoolExecutor(max_workers=args.n_workers)\n",
                 "train.py": "import yaml\nfrom torch.utils.data import DataLoader\n"
                             "cfg = yaml.safe_load(open('configs/train.yaml'))\n"
                             "loader = DataLoader(range(8), num_workers=cfg['data']['num_workers'])\n",
                 "configs/train.yaml": "data:\n  num_workers: 8\n"},
                "a config file a launch script gives another program by `--config`: that program reads it, "
                "out of sight (not the near-miss `--n_workers` of a script here): a note",
                expect=[("agent/infer.yaml", 1)], severity="note"),
        Example({"serve.py": "import argparse, subprocess\n"
                             "def main():\n    parser = argparse.ArgumentParser()\n"
                             "    parser.add_argument('--num_gpus', type=int, required=True)\n"
                             "    parser.add_argument('--num_nodes', type=int, default=1,\n"
                             "                        help='Not used. Added for compatibility with generic server')\n"
                             "    args = parser.parse_args()\n"
                             "    subprocess.run(['nim-serve', '--gpus', str(args.num_gpus)])\n"
                             "if __name__ == '__main__':\n    main()\n",
                 "worker.py": "import os\nfrom multiprocessing import Pool\n"
                              "def run(cfg):\n    return Pool(cfg.num_nodes * 8)\n"},
                "a flag its script never reads, whose help says it is not used: a note",
                expect=[("serve.py", 5)], severity="note"),
        Example(_actor_recipe("  parallelism:\n    tensor_parallel_degree: 2\n"),
                "a key under a field whose type is another package's class (torchtitan's Parallelism), of a "
                "dataclass its section is splatted into: a note, never a warning",
                expect=[("grpo.yaml", 3)], severity="note"),
        Example(_actor_recipe("  num_workers: 4\n  loader_workers: 4\n"),
                "a key of a section splatted into the project's dataclass that has no field of that name",
                expect=[("grpo.yaml", 3)], severity="warning"),
        Example({"nemo_kit/__init__.py": "", "nemo_kit/nemo_rl/__init__.py": "",
                 "nemo_kit/nemo_rl/configs/grpo.yaml": "policy:\n  tensor_model_parallel_size: 2\n"
                                                      "cluster:\n  num_nodes: 1\n",
                 "nemo_kit/nemo_rl/start_grpo.py": "import os\nfrom nemo_rl.algorithms.grpo import setup\n"
                                                   "from nemo_rl.utils.config import load_config\n"
                                                   "def main():\n"
                                                   "    path = os.path.join(os.path.dirname(__file__), 'configs', 'grpo.yaml')\n"
                                                   "    config = load_config(path)\n"
                                                   "    print(config['cluster']['num_nodes'])\n"
                                                   "    return setup(config)\n"
                                                   "if __name__ == '__main__':\n    main()\n"},
                "a script that names its config file and hands what it loads, whole, to another package "
                "(NeMo-RL's setup(), which the project's own nemo_rl/ folder does not shadow): a note",
                expect=[("nemo_kit/nemo_rl/configs/grpo.yaml", 2)], severity="note"),
        Example({"train_args/sft.json": "{\n  \"tokenize_num_workers\": 8,\n  \"dataloader_num_workers\": 4\n}\n",
                 "train.py": "import sys\nfrom dataclasses import dataclass\n"
                             "from transformers import HfArgumentParser, TrainingArguments\n"
                             "from datasets import load_dataset\n"
                             "@dataclass\nclass CustomArgs:\n    tokenize_num_workers: int = 10\n"
                             "def main():\n"
                             "    parser = HfArgumentParser((CustomArgs, TrainingArguments))\n"
                             "    args, training_args = parser.parse_json_file(json_file=sys.argv[1])\n"
                             "    return load_dataset('json').map(len, num_proc=args.tokenize_num_workers)\n"},
                "a key no project class declares, in a project whose parser is built from another package's "
                "settings class that the scan did not read: a note that says so", expect=[("train_args/sft.json", 3)],
                severity="note"),
        Example({"pkg/third_party/motion/config.yaml": "DATA_LOADER:\n  NUM_WORKERS: 4\nNUM_SHARDS: 4\n",
                 "pkg/third_party/motion/model.py": "def build(cfg):\n    return cfg.DATA_LOADER.NUM_WORKERS\n"},
                "an upstream config shipped under third_party/ sets a count nothing reads",
                expect=[("pkg/third_party/motion/config.yaml", 3)], severity="note"),
        Example(_held_out_loaders("args.num_workers"),
                "a validation loader sized by the training count while the parser offers a validation one",
                expect=[("tasks/finetune.py", 5)], severity="warning"),
        Example({"args.py": "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
                            "@dataclass\n"
                            "class MyArgs(TrainingArguments):\n"
                            "    dataloader_num_workers: int = 4\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg.num_workers)\n"},
                "a field of a class that extends another package's, which the scan could not search (not "
                "installed): a note, that package may read it", expect=[("args.py", 5)], severity="note"),
        Example({"conf/train.yaml": "trainer:\n"
                                    "  num_workers: 4\n"
                                    "  num_layers_per_virtual_pipeline_stage: null  # vpp hangs\n",
                 "train.py": "import yaml\nfrom torch.utils.data import DataLoader\n"
                             "cfg = yaml.safe_load(open('conf/train.yaml'))\n"
                             "loader = DataLoader([], num_workers=cfg['trainer']['num_workers'])\n"},
                "a setting offered as null that nothing reads: setting it changes nothing (a note)",
                expect=[("conf/train.yaml", 3)], severity="note"),
        Example({"args.py": "from pydantic import BaseModel\n"
                            "class RunArgs(BaseModel):\n"
                            "    loader_workers: int = 2\n"
                            "    num_rollout_workers: int = 8\n",
                 "train.py": "from torch.utils.data import DataLoader\n"
                             "def main(args):\n    return DataLoader([], num_workers=args.loader_workers)\n"},
                "a field of a pydantic model nothing reads: pydantic validates every field, it reads none by "
                "name (rules/consumers.yaml settings_bases)", expect=[("args.py", 4)]),
        Example({**_DPO_TRAINER,
                 "llava/trl/sft_trainer.py": "class SFTTrainer(Trainer):\n"
                                      "    def __init__(self, model, train_dataset, dataset_num_proc=None):\n"
                                      "        self.dataset_num_proc = dataset_num_proc\n"
                                      "        self.ds = train_dataset.map(len, num_proc=self.dataset_num_proc)\n"},
                "a stored count whose only use is commented out (a sibling class's own field of that name is no read)",
                expect=[("llava/trl/dpo_trainer.py", 3)], severity="warning"),
        Example(_role_workers("self.micro = self.config.ref.micro_batch"),
                "a section whose name only a handle holding another section reads: the critic's "
                "`self.config` reads `model`, which `ref` lacks", expect=[("ppo.yaml", 9)]),
        Example(_flat_scripts("    return train(jax.random.PRNGKey(0)), config['NUM_ENVS']\n"),
                "a flat config's top-level key that its script never reads, while a sibling script reads "
                "its own config's (config['NUM_SEEDS'])", expect=[("baselines/config/ff.yaml", 2)]),
        Example({"cfgs/config.yaml": "defaults:\n  - override hydra/launcher: submitit_local\nnum_workers: 4\n"
                                     "hydra:\n  launcher:\n    cpus_per_task: 10\n",
                 "train.py": "import hydra\nfrom torch.utils.data import DataLoader\n"
                             "@hydra.main(config_path='cfgs', config_name='config')\n"
                             "def main(cfg):\n    return DataLoader([], num_workers=cfg.num_workers)\n"},
                "Hydra's own section: its launcher plugin reads it, out of the tree (a note)",
                expect=[("cfgs/config.yaml", 6)], severity="note"),
        Example(_env_args("print(name, value)"), "environment-variable fields nothing exports",
                expect=[("dist.py", 5)]),
        Example(_sglang_worker(""),
                "a server sized on the tensor dimension from a config section that also sets the pipeline "
                "dimension, which it never gets", expect=[("worker.py", 7)]),
        Example(_engine_project("    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size)\n"),
                "an engine sized on the tensor dimension from the settings and not on the pipeline dimension "
                "they also define: its default 1 runs (the subclass inherits the engine's __init__)",
                expect=[("trainer.py", 3)]),
        Example(_engine_project("    lora = {}\n"
                                "    if args.lora:\n"
                                "        lora = {'enable_lora': True}\n"
                                "    return RolloutEngine(args.model, tensor_parallel_size=args.vllm_tensor_parallel_size,"
                                " **lora)\n"),
                "a splat of a mapping whose every key is written here adds none of the missing dimension",
                expect=[("trainer.py", 6)]),
        Example({"run.py": "from absl import app, flags\n"
                           "FLAGS = flags.FLAGS\n"
                           "flags.DEFINE_integer('num_envs', 8, 'Environments per actor.')\n"
                           "flags.DEFINE_integer('num_actors', 4, 'Number of actors.')\n"
                           "def main(argv):\n"
                           "    run_actor(make_envs(FLAGS.num_envs))\n"
                           "if __name__ == '__main__':\n"
                           "    app.run(main)\n"},
                "an absl flag that no code reads", expect=[("run.py", 4)]),
        Example(_deepspeed_script("deepspeed.initialize(model=model, config=ds_config)"),
                "DeepSpeed's --deepspeed_config is added, and the engine is built from another config without "
                "the parsed arguments", expect=[("train.py", 8)]),
        Example({"conf/grpo.yaml": "generation:\n  num_workers: 4\n  vllm_serve_kwargs:\n"
                                   "    model_loader_extra_config:\n      num_threads: 8\n",
                 "serve.py": "def start(cfg):\n    return launch(cfg['generation']['num_workers'])\n"},
                "a key under keyword arguments handed on to a server: a note that says so",
                expect=[("conf/grpo.yaml", 5)], severity="note"),
        Example(_entry_scripts("args.num_workers"),
                "a shared settings field that one entry script never reads, while a script runs it with the flag",
                expect=[("config.py", 5)]),
        Example({**_entry_scripts("(opt.step(), args.num_workers)"),
                 "fast.py": "from transformers import HfArgumentParser\nfrom config import ExperimentConfig\n"
                            "class FastTrainer:\n"
                            "    def __init__(self, args):\n        self.args = args\n"
                            "    def step(self):\n        return 8 // self.args.sequence_parallel_size\n"
                            "def main(args):\n    return FastTrainer(args).step(), args.num_workers\n"
                            "if __name__ == '__main__':\n"
                            "    main(HfArgumentParser((ExperimentConfig,)).parse_args_into_dataclasses()[0])\n"},
                "core.py calls a `step` method, but makes no FastTrainer, whose step reads the field",
                expect=[("config.py", 5)]),
        Example({"config.py": "import argparse\n"
                              "def get_config():\n"
                              "    p = argparse.ArgumentParser()\n"
                              "    p.add_argument('--n_render_rollout_threads', type=int, default=1)\n"
                              "    p.add_argument('--n_rollout_threads', type=int, default=8)\n"
                              "    return p\n",
                 "runner.py": "class Runner:\n"
                              "    def __init__(self, all_args):\n"
                              "        self.n_render_rollout_threads = all_args.n_render_rollout_threads\n"
                              "        self.n_rollout_threads = all_args.n_rollout_threads\n"
                              "    def envs(self):\n"
                              "        return make_envs(self.n_rollout_threads)\n",
                 "render.sh": "python render.py --n_render_rollout_threads 4\n"},
                "a flag whose only read copies it into an attribute nothing reads",
                expect=[("config.py", 4)]),
        Example({"schema.py": "from pydantic import BaseModel\n"
                              "class InputConfig(BaseModel):\n"
                              "    context_parallel_size: int | None = None\n",
                 "train.py": "def mesh(cfg):\n    return build(cp=cfg.context_parallel_size)\n",
                 "examples/cp.yaml": "base_model: qwen\ncontext_parapllel_size: 2\n"},
                "a config key one typo from a parallelism field: the schema drops it, the field keeps its default",
                expect=[("examples/cp.yaml", 2)]),
        Example({"config.py": "class Arguments:\n"
                              "    def __init__(self):\n"
                              "        self.worker_num = 2  # rollout workers\n"
                              "        self.gamma = 0.99\n",
                 "demo.py": "from config import Arguments\n"
                            "args = Arguments()\n"
                            "args.worker_num = 4\n"
                            "train_agent(args)\n",
                 "run.py": "from torch.utils.data import DataLoader\n"
                           "def train_agent(args):\n"
                           "    return DataLoader(ds, num_workers=args.num_workers), args.gamma\n"},
                "a plain settings class's attribute that example scripts set and nothing reads",
                expect=[("config.py", 3)]),
        Example({"convert.py": "import argparse\n"
                               "def convert(path, num_workers=None):\n"
                               "    \"\"\"Args:\n        num_workers (int): Number of workers for loading.\"\"\"\n"
                               "    return [line.upper() for line in open(path)]\n"
                               "p = argparse.ArgumentParser()\n"
                               "p.add_argument('--num-workers', type=int, default=8)\n"
                               "args = p.parse_args()\n"
                               "convert('x.txt', num_workers=args.num_workers)\n"},
                "a count a function documents and never reads, passed the user's flag", expect=[("convert.py", 2)]),
        Example({"models/transformer.py": "from torch.utils.data import DataLoader\n"
                                          "class TransformerModel:\n"
                                          "    def __init__(self, batch_size=64, n_jobs=10):\n"
                                          "        self.batch_size = batch_size\n"
                                          "        self.n_jobs = n_jobs\n"
                                          "    def fit(self, ds):\n"
                                          "        return DataLoader(ds, batch_size=self.batch_size)\n",
                 "models/transformer_ts.py": "from torch.utils.data import DataLoader\n"
                                             "class TransformerModelTS:\n"
                                             "    def __init__(self, n_jobs=10):\n"
                                             "        self.n_jobs = n_jobs\n"
                                             "    def fit(self, ds):\n"
                                             "        return DataLoader(ds, num_workers=self.n_jobs)\n"},
                "a count a class stores on self and nothing loads (a sibling class's own self.n_jobs is not "
                "this one's): a note", expect=[("models/transformer.py", 3)]),
        Example({"conf.yaml": "engine:\n  turbo_config:\n    distributed:\n      tensor_parallel_size: 2\n"
                              "data:\n  num_workers: 8\n",
                 "engine.py": _LOADER + "from fsdp_turbo.config import to_dataclass\n"
                              "from torch.utils.data import DataLoader\n"
                              "turbo = to_dataclass(cfg['engine']['turbo_config'])\n"
                              "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "a configuration section handed whole to another package: a note, never a warning",
                expect=[("conf.yaml", 4)], severity="note"),
        Example({"demo/sample.py": "import argparse\nfrom multiprocessing import Pool\n"
                                   "def main():\n    p = argparse.ArgumentParser()\n"
                                   "    p.add_argument('--num_gpus', type=int, default=1)\n"
                                   "    args = p.parse_args()\n    return Pool(args.num_gpus)\n"
                                   "if __name__ == '__main__':\n    main()\n",
                 "anagrams/__init__.py": "",
                 "anagrams/utils.py": "def add_args(parser):\n"
                                      "    parser.add_argument('--num_samples', type=int, default=4)\n"
                                      "    parser.add_argument('--num_gpus', type=int, default=1)\n"
                                      "    return parser\n",
                 "generate.py": "import argparse\nfrom anagrams.utils import add_args\n"
                                "args = add_args(argparse.ArgumentParser()).parse_args()\n"
                                "samples = [i for i in range(args.num_samples)]\n"},
                "a script that parses at import, with no main guard, through a flag builder it alone runs: "
                "the flag nothing on its path reads (another script reads its own flag of that name)",
                expect=[("anagrams/utils.py", 3)], severity="warning"),
        Example({"conf/main.yaml": "trainer:\n  nnodes: 1\nrollout:\n  tensor_model_parallel_size: 2\n",
                 "trainer.py": "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
                               "class Custom(RayPPOTrainer):\n"
                               "    def __init__(self, config, tokenizer):\n"
                               "        super().__init__(config, tokenizer)\n",
                 "train.py": "import hydra, ray\nfrom trainer import Custom\n"
                             "@ray.remote\ndef task(config):\n"
                             "    return Custom(config, None), config.trainer.nnodes\n"
                             "@hydra.main(config_path='conf', config_name='main')\n"
                             "def main(config):\n    ray.get(task.remote(config))\n"},
                "a Hydra entry's whole configuration handed, through a subclass's super().__init__, to another "
                "package's trainer: its unread keys are notes, never warnings",
                expect=[("conf/main.yaml", 4)], severity="note"),
        Example({"conf/main.yaml": "trainer:\n  nnodes: 1\nrollout:\n  tensor_model_parallel_size: 2\n",
                 "trainer.py": "class Base:\n"
                               "    def __init__(self, config):\n        self.nodes = config.trainer.nnodes\n"
                               "class Custom(Base):\n"
                               "    def __init__(self, config, tokenizer):\n"
                               "        super().__init__(config)\n",
                 "train.py": "import hydra\nfrom trainer import Custom\n"
                             "@hydra.main(config_path='conf', config_name='main')\n"
                             "def main(config):\n    Custom(config, None)\n"},
                "the same configuration handed through super().__init__ to the project's own base class, "
                "which never reads the key: a warning",
                expect=[("conf/main.yaml", 4)], severity="warning"),
        Example({"configs/defaults.yaml": "trainer:\n  params:\n    gpus: 1\n    num_nodes: 1\n"
                                          "training:\n  num_workers: 4\n",
                 "trainers/lightning.py": "from omegaconf import OmegaConf\nfrom pytorch_lightning import Trainer\n"
                                          "from torch.utils.data import DataLoader\n"
                                          "class LightningTrainer:\n"
                                          "    def __init__(self, config):\n"
                                          "        self.config = config\n"
                                          "        self.trainer_config = self.config.trainer.params\n"
                                          "    def load(self, ds):\n"
                                          "        params = OmegaConf.to_container(self.trainer_config, resolve=True)\n"
                                          "        self.loader = DataLoader(ds, num_workers=self.config.training.num_workers)\n"
                                          "        self.trainer = Trainer(max_steps=1, **params)\n"},
                "a section splatted, through an attribute and a copy, into a well-known package's class "
                "(mmf's Lightning trainer): a note", expect=[("configs/defaults.yaml", 3)], severity="note"),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "n = cfg['data'].get('num_worker', 0)\n"
                             "loader = DataLoader(ds, num_workers=n)\n"},
                "code reads a misspelt key; its default 0 runs", expect=[("conf.yaml", 2)]),
        Example({"conf.yaml": "data:\n  num_workers: 8\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "def build(ds):\n"
                             "    n = cfg['data'].get('num_wokers', 0)\n"
                             "    return DataLoader(ds, num_workers=n)\n"},
                "a one-letter typo outside the vocabulary, found by the flow to the loader",
                expect=[("conf.yaml", 2)]),
        Example({"conf.yaml": "data:\n  num_workers: 8\nrollout:\n  num_envs: 16\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "a key left behind in a file whose other keys are read", expect=[("conf.yaml", 4)],
                severity="warning"),
        Example({"daemon/store.yaml": "transfer:\n  prewarm_workers: 2\n",
                 "train.py": _LOADER + "from torch.utils.data import DataLoader\n"
                             "loader = DataLoader(ds, num_workers=cfg['data']['num_workers'])\n"},
                "a file of which no key is read may configure another program (a note)",
                expect=[("daemon/store.yaml", 2)], severity="note"),
        Example({"args.py": "from dataclasses import dataclass\n"
                            "@dataclass\n"
                            "class FlatArguments:\n"
                            "    preprocessing_num_workers: int = None\n"
                            "    max_seq_length: int = 2048\n",
                 "configs/sft.yaml": "preprocessing_num_workers: 128\nmax_seq_length: 4096\n",
                 "finetune.py": "import os\nfrom torch.utils.data import DataLoader\n"
                                "def main(args, ds):\n"
                                "    n = int(os.environ.get('CPU_COUNT', os.cpu_count()))\n"
                                "    return ds.map(tokenize, num_proc=n), args.max_seq_length\n"},
                "a field users set in config files, which no code reads (a warning at the field; the "
                "config lines are notes that point to it)", expect=[("args.py", 4)]),
        Example({"enjoy.py": "def enjoy(cfg):\n"
                             "    cfg.num_envs = 1\n"
                             "    return make_sampler(cfg)\n",
                 "sampler.py": "import multiprocessing as mp\n"
                               "def make_sampler(cfg):\n"
                               "    return mp.Pool(processes=cfg.num_envs_per_worker)\n"},
                "a write to a config key nothing reads (a note)", expect=[("enjoy.py", 2)], severity="note"),
        Example({"configs/finetune.py": "def get_config():\n"
                                        "    config = dict(batch_size=8)\n"
                                        "    config[\n"
                                        "        'frame_transform_threads'\n"
                                        "    ] = 16\n"
                                        "    return config\n",
                 "finetune.py": "from torch.utils.data import DataLoader\n"
                                "def main(config, ds):\n"
                                "    return DataLoader(ds, batch_size=config['batch_size'], num_workers=config['num_workers'])\n"},
                "a key written as a subscript that nothing reads (a note)", expect=[("configs/finetune.py", 3)],
                severity="note"),
        Example({"config/default.ini": "[vec]\nnum_envs = 2\n[train]\nbatch_size = 64\n",
                 "config/box2d.ini": "[train]\nnum_envs = 48\nbatch_size = 128\n",
                 "run.py": "import configparser\nfrom envs import make\n"
                           "def load(args):\n"
                           "    trainer = Trainer(config=args['train'])\n"
                           "    return make(creator, num_envs=args['vec']['num_envs'])\n",
                 "envs.py": "import multiprocessing as mp\n"
                            "def make(creator, num_envs=1):\n"
                            "    return mp.Pool(processes=num_envs)\n"
                            "def report(vecenv):\n"
                            "    return vecenv.num_envs\n"},
                "a variant sets the key in a section where the base configuration does not have it",
                expect=[("config/box2d.ini", 2)], severity="warning"),
        Example({"config.py": "import argparse\n"
                              "def get_config():\n"
                              "    p = argparse.ArgumentParser()\n"
                              "    p.add_argument('--n_rollout_threads', type=int, default=8)\n"
                              "    p.add_argument('--pytorch_threads', type=int, default=1, help='Number of torch threads')\n"
                              "    return p\n",
                 "train.py": "from multiprocessing import Pool\n"
                             "from config import get_config\n"
                             "def main():\n"
                             "    args = get_config().parse_args()\n"
                             "    return Pool(args.n_rollout_threads)\n"},
                "a command-line flag for a count that no code reads: users set it on the command line",
                expect=[("config.py", 5)], severity="warning"),
        Example({"conf/train.yaml": "env:\n  num_envs: 8\n  async_envs: true\n",
                 "train.py": "import gymnasium as gym\n"
                             "def make(cfg, fns):\n"
                             "    if cfg.env.get('async', False):\n"
                             "        return gym.vector.AsyncVectorEnv(fns[:cfg.env.num_envs])\n"
                             "    return gym.vector.SyncVectorEnv(fns[:cfg.env.num_envs])\n"},
                "a switch whose name ends in a count word (`async_envs: true`) is still a setting nothing reads",
                expect=[("conf/train.yaml", 3)]),
        Example({"config.py": "from dataclasses import dataclass\n"
                              "@dataclass\n"
                              "class LearnerConfig:\n"
                              "    num_workers: int = 4\n"
                              "    num_prefetch_threads: int = 4\n",
                 "learner.py": "from multiprocessing import Pool\n"
                               "def learn(config):\n"
                               "    return Pool(config.num_workers)\n"},
                "a field of a settings class that no code reads: users set it where they build the settings",
                expect=[("config.py", 5)], severity="warning"),
        Example({"config.py": "from dataclasses import dataclass\n"
                              "@dataclass\n"
                              "class LearnerConfig:\n"
                              "    num_workers: int = 4\n"
                              "    # deprecated, kept only so old configs parse\n"
                              "    num_actors: int = 8\n",
                 "learner.py": "from multiprocessing import Pool\n"
                               "def learn(config):\n"
                               "    return Pool(config.num_workers)\n"},
                "an unread field its comments call deprecated: a note", expect=[("config.py", 6)], severity="note"),
        Example({"train.py": "import argparse\n"
                             "from multiprocessing import Pool\n"
                             "from simlab import launch\n"
                             "p = argparse.ArgumentParser()\n"
                             "p.add_argument('--num_gpus', type=int, default=1)\n"
                             "p.add_argument('--num_workers', type=int, default=2)\n"
                             "args = p.parse_args()\n"
                             "launch(args, Pool(args.num_workers))\n"},
                "a parsed namespace handed whole to another package, which may read the flag: a note",
                expect=[("train.py", 5)], severity="note"),
        Example({"lightning_base.py": "import argparse\n"
                                      "import pytorch_lightning as pl\n"
                                      "def add_generic_args(parser):\n"
                                      "    parser.add_argument('--n_tpu_cores', dest='tpu_cores', type=int)\n"
                                      "def generic_train(model, args, logger=True, extra_callbacks=()):\n"
                                      "    train_params = {'accumulate_grad_batches': 1}\n"
                                      "    trainer = pl.Trainer.from_argparse_args(args, weights_summary=None, "
                                      "callbacks=[*extra_callbacks], logger=logger, **train_params)\n"
                                      "    return trainer.fit(model)\n",
                 "finetune.py": "import argparse\n"
                                "from lightning_base import add_generic_args, generic_train\n"
                                "def main():\n"
                                "    parser = argparse.ArgumentParser()\n"
                                "    add_generic_args(parser)\n"
                                "    parser.add_argument('--num_workers', type=int, default=4)\n"
                                "    args = parser.parse_args()\n"
                                "    return generic_train(make_model(args.num_workers), args)\n"},
                "a namespace handed to a package that reads it by name, in a call too long to quote whole: a note",
                expect=[("lightning_base.py", 4)], severity="note"),
        Example(_hydra_scripts("DataLoader([], num_workers=2, batch_size=cfg.collector.frames_per_batch)"),
                "td3.py loads td3/config.yaml, and only impala's code reads collector.num_workers",
                expect=[("td3/config.yaml", 3)]),
        Example(_parser_scripts("    train(args.env)\n"),
                "run_atari.py builds the parser that adds --num_env, and only run.py's path reads it",
                expect=[("pkg/run_atari.py", 6)]),
        Example({**_parser_scripts("    train(args.env)\n"),
                 "pkg/pools.py": "from multiprocessing import Pool\ndef make_pool(num_env):\n    return Pool(num_env)\n",
                 "pkg/run.py": "from pkg.cmd_util import common_arg_parser\nfrom pkg.pools import make_pool\n"
                               "def build_env(args):\n    return make_pool(args.num_env)\n"
                               "def main():\n    build_env(common_arg_parser().parse_args())\n"
                               "if __name__ == '__main__':\n    main()\n"},
                "run.py's read reaches a pool through a helper: the flow's site there follows run.py's read",
                expect=[("pkg/run_atari.py", 6)]),
        Example(_parser_scripts("    train(args.env)\n    launch(args)\n"),
                "run_atari.py hands its namespace to another package, which may read the flag: a note",
                expect=[("pkg/run_atari.py", 6)], severity="note"),
        Example(_whole_parser_scripts(),
                "a cache tool takes the trainer's whole parser (8 parallelism flags): those only training "
                "reads are a note", expect=[("tools/prepare_cache.py", 6)], severity="note"),
        Example({**_parser_scripts("    train(args.env)\n    start(args)\n"),
                 "pkg/run_atari.py": "from pkg.cmd_util import atari_arg_parser\nfrom pkg.helpers import start\n"
                                     "def train(env_id):\n    return env_id\n"
                                     "def main():\n    args = atari_arg_parser().parse_args()\n"
                                     "    train(args.env)\n    start(args)\n"
                                     "if __name__ == '__main__':\n    main()\n",
                 "pkg/helpers.py": "def start(options):\n    return options\n"},
                "run_atari.py hands its namespace to a project file the scan does not read: a note",
                expect=[("pkg/run_atari.py", 6)], severity="note"),
        Example({**_parser_scripts("    train(args.env)\n"),
                 "pkg/run_atari.py": "import subprocess\nimport sys\nfrom pkg.cmd_util import atari_arg_parser\n"
                                     "def main():\n    args = atari_arg_parser().parse_args()\n"
                                     "    subprocess.run(['python', '-m', 'pkg.run'] + sys.argv[1:])\n"
                                     "    return args.env\n"
                                     "if __name__ == '__main__':\n    main()\n"},
                "run_atari.py passes its command line on to run.py, which reads the flag: a note",
                expect=[("pkg/run_atari.py", 5)], severity="note"),
        Example({"serve/cli.py": "import argparse\nfrom serve.model import load\n"
                                 "def main(args):\n    model = load(args.model_path)\n    print(args)\n"
                                 "    return model, f'{args.model_path}'\n"
                                 "if __name__ == '__main__':\n"
                                 "    p = argparse.ArgumentParser()\n"
                                 "    p.add_argument('--model-path', type=str)\n"
                                 "    p.add_argument('--num-gpus', type=int, default=1)\n"
                                 "    main(p.parse_args())\n",
                 "serve/model.py": "def load(path):\n    return path\n",
                 "train/launch.py": "import ray\ndef start(cfg):\n    ray.init(num_gpus=cfg.num_gpus)\n"},
                "serve/cli.py parses --num-gpus and reads only args.model_path; its namespace never leaves "
                "the file, so train/launch.py's num_gpus is another setting",
                expect=[("serve/cli.py", 10)], severity="warning"),
        Example({"model/adapter.py": "def add_model_args(parser):\n"
                                     "    parser.add_argument('--model-path', type=str)\n"
                                     "    parser.add_argument('--num-gpus', type=int, default=1)\n",
                 "serve.py": "from multiprocessing import Pool\ndef start(cfg):\n    return Pool(cfg.num_workers)\n"},
                "a flag added by a vendored builder that nothing calls: a note, no command line accepts it",
                expect=[("model/adapter.py", 3)], severity="note"),
        Example({"bulk_runner.py": "import argparse\nimport subprocess\n"
                                   "def main(args):\n    return subprocess.run([args.script])\n"
                                   "if __name__ == '__main__':\n"
                                   "    p = argparse.ArgumentParser()\n"
                                   "    p.add_argument('script')\n"
                                   "    p.add_argument('--start_method', default='spawn',\n"
                                   "                   help='Multiprocessing start method to use when creating workers.')\n"
                                   "    p.add_argument('--target-tp', type=int, default=1, help='Target TP degree')\n"
                                   "    main(p.parse_args())\n"},
                "bulk_runner.py parses --start_method and --target-tp and reads neither",
                expect=[("bulk_runner.py", 8), ("bulk_runner.py", 10)], severity="note"),
        Example({**_own_parse_args(),
                 "launch.py": "import ray\ndef start(cfg):\n    ray.init(num_gpus=cfg.num_gpus)\n"},
                "the script's own parse_args() returns the namespace to main(), which never reads "
                "args.num_gpus: launch.py's num_gpus is another setting",
                expect=[("train.py", 4)], severity="warning"),
        Example({"eval/vqa/evaluate_vqa.py": "import argparse\nfrom torch.utils.data import DataLoader\n"
                                             "if __name__ == '__main__':\n"
                                             "    parser = argparse.ArgumentParser()\n"
                                             "    parser.add_argument('--num-workers', type=int, default=1)\n"
                                             "    args = parser.parse_args()\n"
                                             "    DataLoader([1], num_workers=args.num_workers)\n",
                 "eval/mmvet/evaluate_mmvet.py": "import argparse\n"
                                                 "if __name__ == '__main__':\n"
                                                 "    parser = argparse.ArgumentParser()\n"
                                                 "    parser.add_argument('--num-workers', type=int, default=1)\n"
                                                 "    args = parser.parse_args()\n"
                                                 "    for image in ['a.jpg', 'b.jpg']:\n"
                                                 "        print(image)\n",
                 "classification/build.py": "from torch.utils.data import DataLoader, get_worker_info\n"
                                            "def build_loader(config, ds):\n"
                                            "    shards = get_worker_info().num_workers\n"
                                            "    return DataLoader(ds, num_workers=config.DATA.NUM_WORKERS), shards\n"},
                "each eval script builds its own parser; mmvet's reads nothing it accepts. A yacs "
                "config's DATA.NUM_WORKERS or a worker-info attribute elsewhere is no read of the flag",
                expect=[("eval/mmvet/evaluate_mmvet.py", 4)]),
        Example({"server.py": "import os\n"
                              "import uvicorn\n"
                              "from app import app\n"
                              "if __name__ == '__main__':\n"
                              "    workers = os.getenv('APP_WORKERS', 1)\n"
                              "    uvicorn.run(app, port=8000, workers=1)\n",
                 "api.py": "import os\n"
                           "from concurrent.futures import ThreadPoolExecutor\n"
                           "class Api:\n"
                           "    def __init__(self):\n"
                           "        self.num_workers = int(os.getenv('NUM_WORKERS', 32))\n"
                           "    def run(self, jobs):\n"
                           "        with ThreadPoolExecutor(max_workers=32) as ex:\n"
                           "            return list(ex.map(print, jobs))\n"},
                "a count read from the environment into a name that nothing uses: the server and "
                "the pool run at their literals", expect=[("server.py", 5), ("api.py", 5)]),
        Example({"eval/model_loc.py": "import argparse\n"
                                      "def main(args):\n"
                                      "    return [q for q in open(args.question_file)]\n" + _CHUNKED_EVAL_MAIN,
                 "eval/model_vqa.py": "import argparse\n"
                                      "def get_chunk(items, n, k):\n"
                                      "    return items[k::n]\n"
                                      "def main(args):\n"
                                      "    questions = open(args.question_file).readlines()\n"
                                      "    return get_chunk(questions, args.num_chunks, args.chunk_idx)\n"
                                      + _CHUNKED_EVAL_MAIN,
                 "scripts/eval.sh": "CHUNKS=8\nfor IDX in $(seq 0 $((CHUNKS-1))); do\n"
                                    "  CUDA_VISIBLE_DEVICES=$IDX python eval/model_loc.py --num-chunks $CHUNKS "
                                    "--chunk-idx $IDX &\ndone\nwait\n"},
                "a multi-GPU eval that accepts --num-chunks and never splits its questions, beside "
                "one that does: every process runs them all", expect=[("eval/model_loc.py", 7)]),
    ]

    def check(self, result):
        self._parsed_classes = None  # (package, class) of other packages' settings classes parsers are built from
        scripts = _closed_scripts(result)  # scripts whose parsed namespace stays in them
        yield from self._unread_setting_flags(result, scripts)
        if not any(s.kind == "python" and _is_reader(s) for s in result.sites):
            return  # no code was scanned: nothing can be said about reads
        splats = [s for s in result.sites if s.kind == "python" and s.detail.get("splat")]
        # keys code reads through an opaque handle (hyperparams.get("n_envs")) join no single
        # knob when several fit; they still read every knob they are a dotted suffix of
        read_keys = {s.key.lower() for s in result.sites
                     if _is_reader(s) and not (s.role == "consume" and s.detail.get("literal"))}
        # self.worker_config.strategy_args.x: `worker_config` holds one of the sections that
        # carry `strategy_args` (actor_train, reference); the rest of the key is what it reads
        read_keys |= {k.split(".", 1)[1] for k in read_keys
                      if k.count(".") >= 2 and _HOLDER.search(k.split(".", 1)[0])}
        unread = [k for k in result.knobs if not _is_read(k, read_keys, splats, ())
                  and not _read_through_alias(k, result.meta, read_keys)]
        handed = _handed_out(result) if unread else {}  # the call edges are many: only when needed
        whole = _whole_configs_out(result) if unread else {}
        programs = _configs_to_programs(result) if unread else {}
        callees = {c for _rel, c in whole.values()}
        unparsed_callees = callees - handoff.foreign_callees(callees, result)
        # a section splatted into a project class fills its fields: a key whose field code loads is read
        into = handoff.sections_into_classes(result) if unread else {}
        loaded = {a.lower() for a in _attribute_loaders(result)} if into else set()
        reached = {id(k): way for k in result.knobs if (way := _into_fields(k.name, into, loaded))} if into else {}
        filled_ids = {id(k) for k in unread if reached.get(id(k)) == "read"}
        if filled_ids:
            unread = [k for k in unread if id(k) not in filled_ids]
        leaving = [k for k in unread if _is_read(k, read_keys, splats, handed)]
        unread = [k for k in unread if not _is_read(k, read_keys, splats, handed)]
        unread_ids = {id(k) for k in unread}
        # a config file of which code reads some knob is this program's; one of which it reads
        # none may configure another program (a daemon's YAML beside the Python client)
        # (a bare `num_threads` read somewhere does not make `server.num_threads` this program's)
        read_files = {s.file for k in result.knobs if id(k) not in unread_ids
                      and _is_read(k, read_keys, splats, handed, min_parts=2) for s in k.sites
                      if s.role == "define" and s.kind in CONFIG_KINDS}
        # (and a file whose keys fill a splatted class's fields is the project's, however else they are read)
        read_files |= {s.file for k in result.knobs if reached.get(id(k)) == "read"
                       for s in k.sites if s.role == "define" and s.kind in CONFIG_KINDS}
        tools: dict[str, str | None] = {}
        copiers = _field_copiers(result)
        declared = {}  # leaf -> the project's own declaration (dataclass field, flag), when unread too
        fields = None  # the leaves of every settings-class field and flag, gathered when first needed
        for knob in unread:
            for s in knob.sites:
                if s.role == "define" and s.kind == "python" and s.detail.get("via") in FIELD_VIAS \
                        and not s.detail.get("set_defaults"):
                    declared.setdefault(knob.leaf.lower(), s)
        for knob in unread:
            near = False  # the knob's near-miss read (or None), looked up once for all its sites
            for site in knob.sites:
                if site.role != "define" or site.kind not in CONFIG_KINDS or site.detail.get("generated") \
                        or site.detail.get("selects"):
                    continue  # (a registry name: read by the registry's lookup, which the flow found)
                if site.value is None and not site.detail.get("structured"):
                    # `${ref}`: the read decides. `num_layers_per_virtual_pipeline_stage: null`, which
                    # nothing reads: offered as a setting, and setting it changes nothing; left at
                    # null it loses nothing yet (a note)
                    if fields is None:  # a settings class's field of that name carries the key
                        fields = {d.leaf.lower() for d in result.sites if d.role == "define" and d.kind == "python"
                                  and d.detail.get("via") in FIELD_VIAS}
                    if _NULL_SETTING.search(site.source or "") and site.kind == "yaml" \
                            and knob.leaf.lower() not in fields \
                            and not is_test_file(site.file) and not _tool_config(result, site.file, tools):
                        yield self.finding(site, knob=knob.name, related=[site],
                                           subject=f"{knob.name}: null is offered here as a setting",
                                           effect="setting it changes nothing", near="",
                                           severity="note", confidence="low")
                    continue
                if site.detail.get("structured") and _inside_read(knob.leaf, read_keys):
                    continue  # `"distributed": {...}` whose `distributed.tp_size` code reads
                if site.file.rsplit("/", 1)[-1] in ("pyproject.toml", "package.json", "setup.cfg"):
                    continue
                if _tool_config(result, site.file, tools):
                    continue  # an accelerate / DeepSpeed config: that tool reads its keys
                if _environment_variable(knob.name):
                    continue  # `env_vars: {OMP_NUM_THREADS: 32}`: exported to a process, read from its environment
                if _hydra_own(knob.name):
                    yield self.finding(site, knob=knob.name, related=[site],
                                       subject=f"{knob.name} = {show(site.value)} is set here",
                                       effect="only Hydra and the launcher plugin the run selects read it, out of "
                                              "the scanned tree; whether it takes effect depends on that launcher",
                                       near="", severity="note", confidence="low")
                    continue
                if isinstance(site.value, bool) and _COUNT_NAME.search(knob.leaf):
                    continue  # `scale_loss_by_dp_cp_size: false`: a switch named after a count, no count
                given = programs.get(site.file)
                if given is not None:
                    yield self._out_of_sight(site, knob, f"{given[0]} hands this file to `{given[1]}` "
                                                         f"as its configuration",
                                             whose="another program, which the scan does not read")
                    continue
                out = next((v for folder, v in whole.items() if site.file.startswith(folder)), None)
                if out is not None:
                    yield self._out_of_sight(site, knob, f"{out[0]} hands the whole configuration it loads to {out[1]}",
                                             whose=None if out[1] not in unparsed_callees else
                                             "a class of the project in a module the scan did not parse (it names "
                                             "no parallelism setting)")
                    continue
                way_out = reached.get(id(knob))  # (a filled knob is read: not here)
                if way_out is not None:  # under a field of another package's type
                    yield self._out_of_sight(site, knob, way_out)
                    continue
                if knob.leaf in _expression_reads(result, site.file):
                    continue  # a workflow's `matrix: {num_gpus: 2}`, read by `${{ matrix.num_gpus }}` in the file
                if near is False:
                    near = _near_read(result, knob)
                foreign = near is None and site.file not in read_files
                field = declared.get(knob.leaf.lower()) if foreign else None
                if field is not None and _copied_field_by_field(field, copiers):
                    continue  # it fills a field that is copied on, field by field, to another program
                if field is not None:  # the program's own field of that name, read by nobody either
                    yield self.finding(site, knob=knob.name, related=[field, site], flow=_path(result, site, None),
                                       subject=f"{knob.name} = {show(site.value) if site.value is not None else site.source}"
                                               f" is set here", effect="it never takes effect",
                                       near=f"; it fills {field.key} ({where(field)}), which nothing reads either",
                                       severity="note", confidence="medium")
                    continue
                passed_on = _kwargs_section(knob.name) if near is None else None
                if near is None and not passed_on:
                    if fields is None:
                        fields = {d.leaf.lower() for d in result.sites if d.role == "define" and d.kind == "python"
                                  and d.detail.get("via") in FIELD_VIAS}
                    outside = None if knob.leaf.lower() in fields else self._parsed_outside(result, knob.leaf)
                    if outside == "read":
                        continue  # a field of another package's settings class the project parses, named there
                    if outside:
                        yield self.finding(site, knob=knob.name, related=[site], flow=_path(result, site, near),
                                           subject=f"{knob.name} = {show(site.value) if site.value is not None else site.source}"
                                                   f" is set here",
                                           effect="whether it takes effect is not known here", near=f": {outside}",
                                           severity="note", confidence="low")
                        continue
                yield self.finding(site, knob=knob.name, related=knob.sites, flow=_path(result, site, near),
                                   subject=f"{knob.name} = {show(site.value) if site.value is not None else site.source} is set here",
                                   effect="it never takes effect", near=_near_text(near) if not (foreign or passed_on) else
                                   f"; it sits under `{passed_on}`, keyword arguments handed on to another program "
                                   f"that the scan does not read" if passed_on else
                                   "; code reads no parallelism key of this file: it may configure another program",
                                   **({"severity": "note", "confidence": "low"} if foreign or passed_on
                                      or is_vendored(site.file) else {}))
        yield from self._leaving(result, leaving, handed)
        # read, but by no joined read, splat or handed section: only through its last names
        yield from self._read_for_other_sections(
            result, [k for k in result.knobs if id(k) not in unread_ids and id(k) not in filled_ids
                     and not _is_read(k, (), splats, handed) and not _read_through_alias(k, result.meta, read_keys)])
        yield from self._unused_params(result)
        yield from self._misplaced(result, read_keys, splats, handed, unread_ids)
        loaders = _attribute_loaders(result)
        yield from self._unread_fields(result, read_keys, splats, handed, copiers, loaders)
        yield from self._dead_writes(result)
        yield from self._dead_reads(result, loaders)
        yield from self._commented_consumers(result)
        yield from self._misspelt_keys(result)
        yield from self._unread_by_entry(result)
        yield from self._unread_by_hydra_script(result, splats)
        # (a flag of a script whose namespace stays in it: that finding says more, and once)
        closed = list(self._unread_in_closed_script(result, unread_ids, scripts))
        said = {(f.file, f.line) for f in closed}
        yield from (f for f in self._unread_by_parser_script(result) if (f.file, f.line) not in said)
        yield from closed
        yield from self._library_flags(result)
        yield from self._dimension_dropped(result)
        yield from self._phase_setting_bypassed(result)

    def _parsed_outside(self, result, leaf: str) -> str | None:
        """A config key that no project class declares, in a project whose parser is built from
        another package's settings class (`HfArgumentParser((Args, TrainingArguments))` then
        `parse_json_file(...)`): a field of that class, read there, when its package's source
        names it ("read"); unknown when that package was not searched (not installed where the
        scan looked, or --no-libraries): the reason, for a note. None when no such parser exists
        or every such package was searched and never names the key."""
        if self._parsed_classes is None:
            self._parsed_classes = parsed_settings_classes(result)
        if not self._parsed_classes:
            return None
        searched = result.libraries.names if result.libraries is not None else {}
        unknown = []
        for top, cls in self._parsed_classes:
            named = searched.get(top, {}).get(leaf)
            if named:
                return "read"
            if named is None:
                unknown.append(cls)
        if not unknown:
            return None
        return (f"it may be a field of {', '.join(sorted(set(unknown))[:3])}, another package's settings class "
                f"this project's parser is built from, and the scan did not read that package (not installed "
                f"where it looked)")

    def _phase_setting_bypassed(self, result):
        """`valid_dataloader = build_data_loader(valid_dataset, ..., args.num_workers)` while the
        parser offers `--valid-num-workers` for exactly that loader (Megatron's finetuning
        tasks; metaseq's validate.py with `num_workers_valid`): on this path the held-out
        loader runs the training count and the held-out setting changes nothing. The read is
        for the held-out phase when the name it is bound to says so, else its function's name,
        else its file's (`validate.py`, `eval_utils.py`); a name that says train or test is no
        held-out path. Not when the function reads the held-out setting itself (`args.valid_n
        or args.n`). A warning when another path of the project reads the held-out setting (it
        is live, and this path skips it), a note otherwise."""
        # where a parser flag or settings field of each name is declared
        declared: dict[str, dict] = {}  # leaf -> file -> the define there
        for knob in result.knobs:
            for s in knob.sites:
                if s.role == "define" and s.kind == "python" and s.detail.get("via") in FIELD_VIAS \
                        and not s.detail.get("generated"):
                    declared.setdefault(knob.leaf.lower(), {}).setdefault(s.file, s)
        # num_workers -> the defines of its held-out fields, declared beside it in one parser or
        # settings class: one program's namespace (another program's YAML key is not this one's)
        held_out: dict[str, list] = {}
        for leaf, files in declared.items():
            rest = "_".join(w for w in leaf.split("_") if w not in _HELD_OUT_WORDS)
            if rest != leaf and rest in declared:
                held_out.setdefault(rest, []).extend(d for f, d in files.items() if f in declared[rest])
        if not held_out:
            return
        readers: dict[str, set] = {}  # leaf -> (file, function) pairs that read it
        for s in result.sites:
            if _is_reader(s) and s.kind == "python":
                readers.setdefault(s.leaf.lower(), set()).add((s.file, s.detail.get("function")))
        done = set()
        for r in result.sites:
            d = r.detail
            leaf = r.leaf.lower()
            if r.role != "read" or r.kind != "python" or leaf not in held_out or is_test_site(r) \
                    or d.get("via") not in ("attribute", "subscript", "get") \
                    or not idioms.is_config_name(str(d.get("root") or "").split(".")[-1]):
                continue
            path = _held_out_path(str(d.get("bound_to") or ""), str(d.get("function") or ""), r.file)
            if path is None:
                continue
            own = declared[leaf].get(r.file)  # a script reading its own parser's flag
            for define in held_out[leaf]:
                alt = define.leaf.lower()
                if (r.file, d.get("function")) in readers.get(alt, ()) or (r.file, r.line, alt) in done \
                        or (own is not None and define.file != r.file):
                    continue
                elsewhere = sorted(f for f, _ in readers.get(alt, ()) if not is_test_file(f))
                done.add((r.file, r.line, alt))
                f = self.finding(r, knob=define.key, related=[r, define], subject="", effect="", near="",
                                 **({} if elsewhere else {"severity": "note", "confidence": "medium"}))
                read = f"{d.get('root')}.{r.key}" if d.get("via") == "attribute" else r.key
                f.message = (f"`{read}` is read {path}, a validation / evaluation path, but {define.leaf} "
                             f"({where(define)}) is the setting "
                             f"for that phase: on this path it changes nothing"
                             + (f" ({elsewhere[0]} reads it)" if elsewhere else ""))
                yield f

    def _dimension_dropped(self, result):
        """`GRPOVllmEngine(model, tensor_parallel_size=self.vllm_tensor_parallel_size, ...)`
        with no pipeline_parallel_size, while the settings that size the tensor dimension also
        define `vllm_pipeline_parallel_size`: on this path the engine runs its default for the
        pipeline dimension and the user's value is dropped. Only for a call whose callee takes
        the omitted dimension (the flow made a site for it), a sibling setting of the routed
        one (the same name and section with the dimension swapped) that the user can set, and
        a function that does not read that setting itself (a check that rejects it is loud)."""
        calls: dict[tuple, list] = {}
        for s in result.sites:
            d = s.detail
            if s.role == "consume" and s.kind == "python" and d.get("via") == "helper" and not is_test_site(s):
                calls.setdefault((s.file, d.get("function"), d.get("helper"), s.source), []).append(s)
        settable: dict[str, list] = {}
        joined = {id(s): knob for knob in result.knobs for s in knob.sites if s.role == "consume"}
        for knob in result.knobs:
            if any(s.role == "define" and not s.detail.get("generated") and
                   (s.kind in CONFIG_KINDS or s.detail.get("via") in FIELD_VIAS) for s in knob.sites):
                settable.setdefault(knob.leaf.lower(), []).append(knob)
        reads: dict[tuple, set] = {}  # (file, leaf) -> the functions (qualified names) that read it
        for s in result.sites:
            if _is_reader(s):
                reads.setdefault((s.file, s.leaf.lower()), set()).add(str(s.detail.get("function") or "<module>"))
        dropped = []  # (the site to report, the routed site, the omitted parameter, its default or None)
        for sites in calls.values():
            # the knob the routed value joined: its name is the setting's (`rollout.tensor_parallel_size`,
            # not the holder's `args.x`)
            routed = [s for s in sites if not s.detail.get("omitted") and s.detail.get("flow_key") and id(s) in joined]
            for omitted in (s for s in sites if s.detail.get("omitted")):
                dropped.extend((omitted, r, str(omitted.detail.get("helper_param") or omitted.key), omitted.value)
                               for r in routed)
        for r in result.sites:  # `ServerArgs(tp_size=cfg.rollout.tensor_parallel_size, ...)`, no pp_size
            if r.role == "consume" and r.detail.get("omits") and not r.detail.get("literal") and id(r) in joined \
                    and not is_test_site(r):
                dropped.extend((r, r, str(param), None) for param in r.detail["omits"])
        done = set()
        near: dict[str, set[str]] = {}  # file -> itself and the project files it imports, two levels
        modules = modules_to_files(result.meta) if dropped else {}
        for at, source, param, default in dropped:
            if (at.file, at.line, param) in done:
                continue
            routed_knob = joined[id(source)]
            routed_param = str(source.detail.get("helper_param") or source.detail.get("param") or "")
            knob = _sibling_setting(routed_param, param, routed_knob.name, settable)
            # a bare name (`tp_size`, a parameter) joins its knob by name only
            bare = str(source.detail.get("expr") or "").isidentifier()
            if bare and at.file not in near:
                near[at.file] = near_files(result.meta, at.file, modules)
            if knob is None or ("." not in routed_knob.name
                                and not _declared_together(routed_knob, knob, at.file, routed_param,
                                                           near[at.file] if bare else None)):
                continue
            # a derived site names its function in full (`pkg.mod.Cls.build`), a read by its
            # qualified name (`Cls.build`)
            function = str(at.detail.get("function") or "<module>")
            if any(function == q or function.endswith("." + q) for q in reads.get((at.file, knob.leaf.lower()), ())):
                continue
            done.add((at.file, at.line, param))
            define = next(s for s in knob.sites if s.role == "define" and not s.detail.get("generated"))
            callee = at.detail.get("helper") or str(at.detail.get("backend") or "the backend").rsplit(".", 1)[-1]
            f = self.finding(at, knob=knob.name, related=[at, source, define], subject="", effect="", near="")
            f.message = (f"{callee}() gets {routed_param} from "
                         f"`{source.detail.get('expr')}` but no {param}, so its default"
                         f"{' ' + show(default) if default is not None else ''} runs: {knob.name}, which the same "
                         f"settings define ({where(define)}), never reaches this call")
            yield f

    def _misspelt_keys(self, result):
        """`context_parapllel_size: 2` in a YAML config, one typo from the field
        `context_parallel_size` that the program declares or reads: the misspelt key is no
        knob, so nothing reads it, and the real setting keeps its default. A schema that
        ignores unknown keys (pydantic's default, `model_dump(exclude_none=True)`) drops it
        without a word."""
        targets: dict[int, dict[str, object]] = {}  # length -> leaf -> the field or read it misses
        for knob in result.knobs:
            leaf = knob.leaf.lower()
            if len(leaf) < MISSPELT_MIN:
                continue
            anchor = next((s for s in knob.sites if s.kind == "python" and not is_test_file(s.file) and (
                s.role == "define" and s.detail.get("via") in FIELD_VIAS or s.role == "read")), None)
            if anchor is not None:
                targets.setdefault(len(leaf), {}).setdefault(leaf, anchor)
        if not targets:
            return
        knob_leaves = {k.leaf.lower() for k in result.knobs}
        tools: dict[str, str | None] = {}
        for rel, meta in sorted(result.meta.items()):
            values = meta.get("values") if isinstance(meta, dict) else None
            if not values or meta.get("generated") or is_test_file(rel) or \
                    rel.rsplit(".", 1)[-1].lower() not in ("yaml", "yml", "ini", "cfg"):
                continue
            for key, (line, col, value) in values.items():
                leaf = key.rsplit(".", 1)[-1].lower()
                if len(leaf) < MISSPELT_MIN or leaf in knob_leaves or value is None:
                    continue
                # (`slurm_cpus_per_task` is no typo of `slurm_gpus_per_task`: it counts another unit)
                near = next((t for n in (len(leaf) - 1, len(leaf), len(leaf) + 1)
                             for name, t in targets.get(n, {}).items()
                             if name[0] == leaf[0] and one_typo(leaf, name)
                             and count_units(leaf) == count_units(name)), None)
                if near is None or _tool_config(result, rel, tools):
                    continue
                what = (f"a field of {near.detail.get('owner')} ({where(near)})"
                        if near.role == "define" and near.detail.get("owner") else
                        f"which code reads at {where(near)}")
                yield self.finding(None, file=rel, line=line, column=col, knob=key,
                                   flow=[{"file": rel, "line": line, "column": col, "kind": "define",
                                          "role": "source", "key": key, "value": value, "text": f"{key}: {value}"},
                                         {"file": near.file, "line": near.line, "column": near.column,
                                          "kind": "config", "role": "sink", "key": near.key, "text": near.source}],
                                   subject=f"`{key.rsplit('.', 1)[-1]}: {show(value)}` is set here",
                                   effect="the setting it misspells keeps its default",
                                   near=f"; it is one typo from `{near.key.rsplit('.', 1)[-1]}`, {what}")

    def _library_flags(self, result):
        """`parser = deepspeed.add_config_arguments(parser)` adds `--deepspeed_config`, and the
        script's engines are built by `deepspeed.initialize(model=m, config=ds_config)`, which
        reads no namespace: a DeepSpeed JSON given on the command line is dropped without a word.
        A warning when the script's path (what its module level runs) calls such a reader
        without the namespace and reads the flag nowhere; a note when it calls no reader at all.
        Reads and readers elsewhere in the tree (another script's `initialize(args=args)`) do
        not count: they run in other programs."""
        from auditor.flow.graph import for_result

        added = [s for s in result.sites if s.role == "define" and s.kind == "python" and s.detail.get("added_by")
                 and not is_test_file(s.file)]
        if not added:
            return
        graph = for_result(result)
        reads: dict[str, list] = {}
        for s in result.sites:
            if s.role == "read" and s.kind == "python":
                reads.setdefault(s.leaf.lower(), []).append(s)
        bare = [(rel, c) for rel, m in sorted(result.meta.items()) if isinstance(m, dict)
                for c in m.get("namespace_unread") or () if isinstance(c, dict) and isinstance(c.get("flags"), list)]
        for site in added:
            walk = _script_path(graph, site.file, site.detail.get("function"), careful=True)
            if walk is None:
                continue  # no script: a helper that adds the flags for whoever calls it
            reached = walk[0]

            def on_path(rel: str, function) -> bool:
                return rel == site.file or graph.of(rel, str(function or "<module>")) in reached

            elsewhere = reads.get(site.leaf.lower(), ())
            if any(on_path(r.file, r.detail.get("function")) for r in elsewhere):
                continue
            others = f" (only other scripts read it: {where(elsewhere[0])})" if elsewhere else ""
            builders = [(rel, c) for rel, c in bare if site.leaf in c["flags"] and on_path(rel, c.get("function"))]
            carries = f", which carries {site.detail['carries']}," if site.detail.get("carries") else ""
            if builders:
                rel, call = builders[0]
                more = f" and {len(builders) - 1} more" if len(builders) > 1 else ""
                why = (f"this script's path builds the engine with {call.get('call')} and no parsed arguments "
                       f"({rel}:{call.get('line')}{more}), so what a user passes is dropped")
                f = self.finding(site, knob=site.key, related=[site], flow=_path(result, site, None),
                                 subject="", effect="", near="")
            elif not walk[1]:  # (a class of a file the scan did not read may build the engine: unknown)
                why = "this script's path calls no reader of it"
                f = self.finding(site, knob=site.key, related=[site], flow=_path(result, site, None),
                                 subject="", effect="", near="", severity="note", confidence="low")
            else:
                continue
            # the usual "no scanned code reads it" would be untrue when another script reads it
            f.message = (f"`--{site.leaf}`{carries} is added here by {site.detail['added_by']}(), but nothing on "
                         f"this script's path reads it{others}: {why}")
            yield f

    def _unread_by_entry(self, result):
        """`grpo.py` parses GRPOExperimentConfig, and nothing its `__main__` block runs reads the
        field sequence_parallel_size, which grpo_fast.py reads: the flag is accepted and does
        nothing in this script. A note at the parser call (a warning when a launch script passes
        the flag to this script); only for fields some other path reads (the others are
        _unread_fields' case), of the project's own settings classes."""
        from auditor.flow.graph import for_result

        parses = [(rel, p) for rel, m in sorted(result.meta.items()) if isinstance(m, dict)
                  for p in m.get("parses") or () if not is_test_file(rel)]
        if not parses:
            return
        graph = for_result(result)
        fields: dict[str, list] = {}  # class full name -> its knob fields (dataclass / pydantic / attrs)
        for s in result.sites:
            if s.role == "define" and s.kind == "python" and s.detail.get("via") in SETTINGS_VIAS \
                    and s.detail.get("owner") and graph.of(s.file, str(s.detail["owner"])):
                fields.setdefault(graph.of(s.file, str(s.detail["owner"])), []).append(s)
        readers: dict[str, list] = {}
        for s in result.sites:
            if s.role in ("read", "consume") and s.kind == "python" and not is_test_file(s.file) \
                    and s.detail.get("via") != "param":
                readers.setdefault(s.leaf.lower(), []).append(s)
        flags: dict[tuple, object] = {}  # (script file name, leaf) -> a launch script's flag for it
        for s in result.sites:
            if s.role == "define" and s.kind == "shell" and s.detail.get("script"):
                flags.setdefault((str(s.detail["script"]).rsplit("/", 1)[-1], s.leaf.lower()), s)
        for rel, parse in parses:
            # the script's path is what its module level runs (`if __name__ == "__main__": main(...)`),
            # when that builds this parser (directly or through `make_parser()`)
            walk = _script_path(graph, rel, parse["function"], careful=True)
            if walk is None:
                continue
            reached = walk[0]
            module = graph.module_of.get(rel, "")
            for cls in parse["classes"]:
                leaf_cls = cls.rsplit(".", 1)[-1]
                # the class the parser names: by its full name, as imported, or of this module
                full = next((c for c in (cls, f"{module}.{cls}") if c in fields), None) or next(
                    (c for c in fields if "." in cls and c.endswith("." + cls)), None)
                for field in fields.get(full, ()) if full else ():
                    leaf = field.leaf.lower()
                    # reads inside the settings class itself (its validation) do not use the value
                    reads = [r for r in readers.get(leaf, ())
                             if not str(r.detail.get("function") or "").startswith(leaf_cls + ".")]
                    if not reads:
                        continue
                    if any(_node_of(graph, r) in reached for r in reads):
                        continue
                    flag = flags.get((rel.rsplit("/", 1)[-1], leaf))
                    other = reads[0]
                    f = self.finding(field, knob=field.key,
                                     related=[field, other] + ([flag] if flag else []), flow=_path(result, field, None),
                                     subject="", effect="", near="",
                                     **({} if flag else {"severity": "note", "confidence": "low"}))
                    # read elsewhere, so the rule's usual "no scanned code reads it" would be untrue
                    script = f"{rel}:{parse['line']}"
                    f.message = (f"{field.key} is a field of {leaf_cls}, which {script} parses"
                                 + (f" and {where(flag)} sets" if flag else "") + f", but nothing that script runs "
                                 f"reads it (only {other.detail.get('function')}() does, at {where(other)}), so "
                                 f"setting it for {rel.rsplit('/', 1)[-1]} changes nothing")
                    yield f

    def _unread_by_hydra_script(self, result, splats):
        """td3/config.yaml sets `collector.num_workers: 1`, td3.py loads it (`@hydra.main(
        config_name="config")`), and nothing td3.py runs reads the key, which impala.py reads
        of its own config: the key is shared by name only, and setting it for td3.py changes
        nothing. Only keys some other script reads (the unread ones are check()'s), of a
        config file no `_target_` node fills, loaded by scripts that instantiate nothing."""
        from auditor.flow.graph import for_result

        loaders: dict[str, list[tuple[str, dict]]] = {}  # config file -> (script, hydra.main entry)
        for rel, meta in sorted(result.meta.items()):
            for entry in (meta.get("hydra_main") or ()) if isinstance(meta, dict) else ():
                path = _hydra_config_file(rel, entry)
                if path is not None and not is_test_file(rel):
                    loaders.setdefault(path, []).append((rel, entry))
        if not loaders:
            return
        defines: dict[str, list] = {}
        instantiated: set[str] = set()  # files with a `_target_` node: an installed class takes their keys
        for s in result.sites:
            if s.kind in CONFIG_KINDS and s.file in loaders:
                if s.detail.get("via") == "_target_":
                    instantiated.add(s.file)
                elif s.role == "define" and s.value is not None and not isinstance(s.value, bool):
                    defines.setdefault(s.file, []).append(s)
        readers: dict[str, list] = {}
        for s in result.sites:
            if s.kind == "python" and _is_reader(s) and not is_test_file(s.file) and _read_key(s).count(".") >= 1:
                readers.setdefault(s.leaf.lower(), []).append(s)
        other_folders: dict[str, set[str]] = {}  # key (less its first name) -> folders of scripts whose config sets it
        for path, sites in defines.items():
            for s in sites:
                for rel, _ in loaders[path]:
                    other_folders.setdefault(s.key.lower().split(".", 1)[-1], set()).add(rel.rpartition("/")[0])
        if not defines:
            return
        graph = for_result(result)
        for path, sites in sorted(defines.items()):
            if path in instantiated:
                continue
            reached: set[str] = set()
            for rel, entry in loaders[path]:
                walk = graph.reachable(graph.of(rel, str(entry.get("function") or "<module>")) or "", careful=True)
                if walk is None or not graph.of(rel, "<module>"):
                    reached = set()
                    break
                reached |= walk[0]
            if not reached or any(t.rsplit(".", 1)[-1] == "instantiate" for fn in reached
                                  for _m, _q, t in graph.edges.get(fn, ())):
                continue  # past the graph's bound, or a node instantiated: its class reads the keys
            # keys the scripts' folders ask for by name (`_cfg_get(cfg.env, "num_envs")`), and
            # sections they hand on whole (`Cluster(cluster_cfg=cfg.cluster)`)
            folders = {rel.rpartition("/")[0] for rel, _ in loaders[path]}
            beside = [meta for rel, meta in result.meta.items()
                      if rel.rpartition("/")[0] in folders and isinstance(meta, dict)]
            named = {k.lower() for meta in beside for k in meta.get("quoted_keys") or ()}
            handed = _sections_handed(beside)
            for site in sites:
                key = site.key.lower()
                reads = [r for r in readers.get(site.leaf.lower(), ()) if _same_key(_read_key(r), key)]
                # (a key the extractor knows when code names it: a flow-made read is no proof)
                if not any(r.role == "read" and r.detail.get("via") != "flow" for r in reads) or \
                        any(_node_of(graph, r) in reached
                                    for r in reads) or any(_covers(sp.key, site.key) for sp in splats):
                    continue
                if site.leaf.lower() in named or ("." in key and key.rsplit(".", 2)[-2] in handed):
                    continue
                # the readers are other scripts' own: code beside another Hydra script whose
                # config sets the key too (shared code, a worker class, reads for every script)
                if not all(r.file.rpartition("/")[0] in other_folders.get(key.split(".", 1)[-1], ())
                           for r in reads):
                    continue
                script, entry = loaders[path][0]
                # the reader nearest the script: a sibling script of its folder before shared code
                home = script.rpartition("/")[0]
                other = min(reads, key=lambda r: (r.file.rpartition("/")[0] != home, r.file, r.line))
                f = self.finding(site, knob=site.key, related=[site, other], flow=_path(result, site, None),
                                 subject="", effect="", near="")
                f.message = (f"{site.key} = {show(site.value)} is set in {path}, which {script}:{entry['line']} "
                             f"loads (@hydra.main), but nothing that script runs reads it (only "
                             f"{other.detail.get('function') or 'the module'}() in {other.file} does, at "
                             f"{where(other)}, of its own config), so setting it for "
                             f"{script.rsplit('/', 1)[-1]} changes nothing")
                yield f

    def _unread_in_closed_script(self, result, unread_ids, closed):
        """`parser.add_argument("--num-gpus", type=int, default=1)` in serve/cli.py, whose parsed
        `args` only ever has attributes read in that file or goes to functions it defines: no
        `args.num_gpus` among those reads, so the flag does nothing, however many other files
        read a `num_gpus` of their own (the extractor's `closed_namespace` fact). A knob that
        nothing reads at all is check()'s."""
        if not closed:
            return
        flagged = {id(s) for k in result.knobs if id(k) not in unread_ids for s in k.sites}
        for s in result.sites:
            if s.role != "define" or s.kind != "python" or s.file not in closed or s.detail.get("via") != "argparse" \
                    or s.detail.get("parser") == "absl" or id(s) not in flagged or is_test_file(s.file):
                continue
            if s.detail.get("added_by"):
                continue  # `deepspeed.add_config_arguments(parser)`'s flags: _library_flags judges them
            dest = str(s.detail.get("dest") or s.leaf)
            if dest in (closed[s.file].get("reads") or ()):
                continue
            said = s.detail.get("said_unused")  # its help says so: the user is told
            f = self.finding(s, knob=s.key, related=[s], flow=_path(result, s, None),
                             subject="", effect="", near="", **({"severity": "note"} if said else {}))
            script = s.file.rsplit("/", 1)[-1]
            f.message = (f"`{(s.detail.get('flags') or ['--' + s.leaf])[0]}` is accepted by {s.file}, but its parsed "
                         f"arguments never leave {script} and nothing there reads `{dest}`, so setting it changes "
                         f"nothing (other files' reads of a {s.leaf} are not this flag's)"
                         + (f"; its help says so: \"{s.detail.get('help')}\"" if said else ""))
            yield f

    def _unread_setting_flags(self, result, closed):
        """`parser.add_argument("--gpu", type=int, help="gpu id")` in a script whose parsed
        namespace never leaves it and which never reads `args.gpu`: the flag counts nothing,
        yet it is the user's choice of where the work runs, and it changes nothing (the
        extractor's `unread_setting_flags`, rules/knobs.yaml `setting_flags`). A note."""
        for rel in sorted(closed):
            if is_test_file(rel):
                continue
            for fact in result.meta[rel].get("unread_setting_flags") or ():
                script = rel.rsplit("/", 1)[-1]
                said = f" (help: \"{fact['help']}\")" if fact.get("help") else ""
                f = self.finding(None, file=rel, line=fact["line"], column=fact["column"], knob=fact["dest"],
                                 related=[], flow=[], subject="", effect="", near="", severity="note")
                f.message = (f"`{fact['flag']}`{said} is accepted by {rel}, but its parsed arguments never leave "
                             f"{script} and nothing there reads `{fact['dest']}`, so the choice a user makes with it "
                             f"changes nothing")
                yield f

    def _unread_by_parser_script(self, result):
        """`common_arg_parser()` adds `--num_env`; run.py reads `args.num_env`, and
        ppo1/run_atari.py, which builds the same parser (through `atari_arg_parser()`), reads it
        nowhere on its path: the flag is accepted and does nothing in that script. Only flags
        some other script reads (the unread ones are check()'s), when every read lies on the
        path of another script that accepts the flag (a read the graph cannot place may be
        this script's), and the script does not ask for the flag by name
        (`getattr(args, "num_env")`). A note when the script hands its parsed namespace to
        another package (`launch(args)`, `**vars(args)`), which may read it out of sight."""
        from auditor.flow.graph import for_result

        readers: dict[str, list] = {}
        for s in result.sites:
            # a flag sits at the top of its namespace (`self.all_args.n_threads` holds one):
            # `config.DATA.NUM_WORKERS`, a key in a section, reads some other settings object's
            # count, not `--num-workers`; a function's own parameter (`def loader(ds,
            # num_workers)`) gets what a caller read; `get_worker_info().num_workers`, an
            # attribute of an object that holds no settings, neither
            # (a consumer called without the count, `DataLoader(ds)`, reads no flag)
            if s.kind == "python" and _is_reader(s) and not is_test_file(s.file) and not s.detail.get("omitted") \
                    and all(idioms.is_config_name(p) for p in s.key.split(".")[:-1]) \
                    and s.detail.get("via") != "param" and not (
                        s.detail.get("via") == "attribute" and not _may_hold_settings(str(s.detail.get("root") or "args"))):
                readers.setdefault(s.leaf.lower(), []).append(s)
        flags = [s for s in result.sites if s.role == "define" and s.kind == "python"
                 and s.detail.get("via") == "argparse" and not is_test_file(s.file)
                 and s.leaf.lower() in readers]
        if not flags:
            return
        graph = for_result(result)
        builders: dict[str, list] = {}  # the function adding flags -> its knob flags read somewhere
        for f in flags:
            node = graph.of(f.file, str(f.detail.get("function") or "<module>"))
            if node:
                builders.setdefault(node, []).append(f)
        files = {m: rel for rel, m in graph.module_of.items()}
        surely: dict[str, list] = {}  # script file -> the flags it surely accepts (it runs their builder)
        for builder, fs in builders.items():
            for node in graph.callers({builder}):
                rel = files.get(node[:-len(".<module>")]) if node.endswith(".<module>") else None
                if rel is not None and not is_test_file(rel):
                    surely.setdefault(rel, []).extend(fs)
        # a flag one script alone accepts has no other script to read it: nothing to walk for
        count = Counter(leaf for own in surely.values() for leaf in {f.leaf.lower() for f in own})
        scripts: dict[str, tuple] = {}  # script file -> (what its module level may run, its flags)
        read_in: dict[str, set[str]] = {}  # flag name -> the files that read it
        for leaf, sites in readers.items():
            read_in[leaf] = {r.file for r in sites}

        @lru_cache(maxsize=None)
        def placed(leaf: str) -> list:
            """(read, its call-graph node) for each read of LEAF."""
            return [(r, _node_of(graph, r)) for r in readers[leaf]]

        for rel in sorted(surely):
            # (a flag the script's own file reads is taken for read: no walk needed to say so)
            own = [f for f in surely[rel] if count[f.leaf.lower()] >= 2 and rel not in read_in[f.leaf.lower()]]
            if not own or len(scripts) >= MAX_PARSER_SCRIPTS:
                continue
            # (the walk may stop once it meets a read of every flag: then nothing is reported here)
            goals = [{n for _r, n in placed(f.leaf.lower())} for f in own]
            walk = graph.reachable(graph.of(rel, "<module>"), careful=True, goals=goals)
            if walk is not None:
                scripts[rel] = (walk, own)
        accepts: dict[str, list[set]] = {}  # flag name -> the paths of the scripts that accept it
        for walk, own in scripts.values():
            for leaf in {f.leaf.lower() for f in own}:
                accepts.setdefault(leaf, []).append(walk[0])
        accepted_by: dict[str, set[str]] = {}  # flag name -> the files of the scripts that accept it
        for rel, own in surely.items():
            for f in own:
                accepted_by.setdefault(f.leaf.lower(), set()).add(rel)
        handing = None  # (node, callee) of each call that hands a parsed namespace out of sight
        for rel, (walk, own) in sorted(scripts.items()):
            whole = len({f.leaf.lower() for f in surely[rel]})  # the parallelism flags it takes
            whole = whole if whole >= WHOLE_PARSER else 0
            reached = walk[0]
            meta = result.meta.get(rel) or {}
            # (`main(**vars(opts))` hands each flag to main's parameter of that name)
            named = {k.lower() for k in meta.get("quoted_keys") or ()} | _splat_flags(meta)
            handed = False  # (looked up once a flag qualifies: most scripts read what they accept)
            done: set[str] = set()
            for flag in own:
                leaf = flag.leaf.lower()
                reads = readers[leaf]
                if leaf in done or leaf in named or not any(r.role == "read" and r.detail.get("via") != "flow"
                                                           for r in reads):
                    continue
                if any(n in reached for _r, n in placed(leaf)):
                    continue
                others = [w for w in accepts.get(leaf, ()) if w is not reached]
                beside = accepted_by.get(leaf, set()) - {rel}  # (a read in such a script's own file is its)
                # (the reads the extractor saw: a consume the flow carried into a helper follows one)
                if not all(r.file in beside or any(n in w for w in others)
                           for r, n in placed(leaf) if r.role == "read"):
                    continue  # a read no other script's path holds: this one's, for all the graph knows
                done.add(leaf)
                if handed is False:
                    handing = handing if handing is not None else _namespace_handing(result, graph)
                    handed = next((callee for node, callee in handing if node in reached), None)
                    if handed is None and meta.get("forwards_argv"):
                        handed = "the command it runs (with its sys.argv[1:])"
                # (a builder that one script alone runs is that script's: the flag's own line is
                # where to fix it; one that several run is told apart by this script's call)
                shared = sum(1 for fs in surely.values() if any(f is flag for f in fs)) > 1
                at = _call_toward(result, graph, rel, flag) if flag.file != rel and shared else flag
                other = reads[0]
                f = self.finding(flag, knob=flag.key, related=[flag, other], flow=_path(result, flag, None),
                                 subject="", effect="", near="",
                                 **({"severity": "note", "confidence": "low"} if handed or whole else {}))
                if at is not None and at is not flag:
                    f.file, f.line, f.column = rel, at["line"], at["col"] + 1
                why = f"; it hands its parsed arguments to {handed}, out of sight, which may read it" if handed else ""
                builder = "" if flag.file == rel else f" (through {flag.detail.get('function')}(), {where(flag)})"
                f.message = (f"`{flag.detail.get('flags', ['--' + flag.leaf])[0]}` is accepted by {rel}{builder}, but "
                             f"nothing that script runs reads it (only {other.detail.get('function') or 'the module'}() "
                             f"does, at {where(other)}), so setting it for {rel.rsplit('/', 1)[-1]} changes nothing"
                             + why + (f"; the script takes a whole parser of {whole} parallelism flags from "
                                      f"shared builders, for a job that needs only some of them" if whole and not why
                                      else ""))
                yield f

    def _unused_params(self, result):
        """`def convert(path, num_workers=None)` whose body never reads num_workers: the count a
        caller passes is dropped. A warning when a caller passes a value the user sets (a flag,
        a config read, its own parameter), else a note (auditor/extract/py_shadow.py)."""
        facts = [(rel, f) for rel, m in sorted(result.meta.items()) if isinstance(m, dict)
                 for f in m.get("unused_params") or () if not is_test_file(rel)]
        if not facts:
            return
        # three or more functions of one file with one parameter list are callbacks of an imposed
        # signature (`sample_ppo_params(trial, n_actions, n_envs, ...)` in a dispatch table)
        facts = [(rel, f) for rel, f in facts
                 if (result.meta[rel].get("knob_signatures") or {}).get(f.get("signature"), 0) < 3]
        by_name: dict[str, list] = {}
        for rel, f in facts:
            name = f["cls"] if f["function"] == "__init__" and f.get("cls") else f["function"]
            by_name.setdefault(name, []).append(f)
        passed: dict[int, tuple] = {}
        for rel, m in result.meta.items():
            flow = m.get("flow") if isinstance(m, dict) else None
            for edge in (flow or {}).get("calls", ()):
                leaf = edge["callee"][0].rsplit(".", 1)[-1] if edge.get("callee") else ""
                for f in by_name.get(leaf, ()):
                    arg = edge["kwargs"].get(f["param"])
                    if arg is None and f.get("index") is not None and f["index"] < len(edge["args"]):
                        arg = edge["args"][f["index"]]
                    if arg is None or id(f) in passed and passed[id(f)][2]:
                        continue
                    user_set = any(n["k"] in ("config", "env", "param") for n in values.leaves(arg))
                    passed[id(f)] = (rel, edge, user_set)
        read_elsewhere = self._loaded_elsewhere(result)
        for rel, f in facts:
            if f.get("stored") and read_elsewhere(rel, f["stored"], f.get("cls") or ""):
                continue
            caller = passed.get(id(f))
            near = ""
            if caller is not None:
                near = f"; {caller[0]}:{caller[1]['line']} passes it (`{caller[1]['text'][:80]}`)"
            if f.get("stored"):  # kept as `self.n_jobs`, which nothing loads
                near = f"; it is stored as `self.{f['stored']}`, which no scanned code reads" + near
            owner = f["cls"] if f.get("stored") and f["function"] == "__init__" and f.get("cls") else f["function"]
            yield self.finding(None, file=rel, line=f["line"], column=f["col"], knob=f["param"],
                               flow=[{"file": rel, "line": f["line"], "column": f["col"], "kind": "param",
                                      "role": "source", "text": f["source"]}],
                               subject=f"`{f['param']}` is a parameter of {owner}()",
                               effect="the value a caller passes never takes effect", near=near,
                               # a warning when its docstring says it counts workers and a caller passes
                               # a value the user sets; else a note (an argument kept for symmetry)
                               **({} if caller is not None and caller[2] and f.get("documented")
                                  and not f.get("stored") else {"severity": "note"}))

    @staticmethod
    def _loaded_elsewhere(result):
        """-> reads(rel, attr, cls): does a file other than REL load ATTR - from any object but
        `self`, or from `self` in a class that inherits CLS (the file facts `attr_loads`,
        `self_attr_loads`)? A sibling class's own `self.n_jobs` is not this one's."""
        from auditor.flow.graph import for_result

        graph = []

        def inherits(meta: dict, cls: str) -> bool:
            """Does a class of the file META describes inherit one named CLS?"""
            if not graph:
                graph.append(for_result(result))
            return any(a.rsplit(".", 1)[-1] == cls for c in ((meta.get("flow") or {}).get("classes") or ())
                       for a in graph[0].ancestors(c) - {c})

        def reads(rel: str, attr: str, cls: str) -> bool:
            return any(other != rel and isinstance(m, dict) and attr in (m.get("attr_loads") or ())
                       and (attr not in (m.get("self_attr_loads") or ()) or inherits(m, cls))
                       for other, m in result.meta.items())
        return reads

    def _leaving(self, result, knobs, handed):
        """A key no scanned code reads whose section is handed whole to another package: it
        may be read there, out of sight. A note that says so, never a warning."""
        for knob in knobs:
            parts = knob.name.lower().split(".")
            # (of the handed sections that fit, the one the key spells most of: `trainer.params`
            # for trainer.params.gpus, not another package's `tokenizer_config.params`)
            section = max((key for key in handed if _within(key, parts)), key=lambda k: _spelt(k, parts), default=None)
            if section is None:
                continue
            for site in knob.sites:
                if site.role != "define" or site.kind not in CONFIG_KINDS or site.detail.get("generated") \
                        or site.value is None or is_test_file(site.file):
                    continue
                yield self._out_of_sight(site, knob, f"its section `{section}` is handed to {handed[section]}")

    def _out_of_sight(self, site, knob, how: str, whose: str | None = None):
        """A note on a key that goes, HOW, to another package's code (or WHOSE), which may read it."""
        return self.finding(site, knob=knob.name, related=[site],
                            subject=f"{knob.name} = {show(site.value)} is set here",
                            effect="whether it takes effect is decided outside the scanned tree" if whose is None
                            else "whether it takes effect is decided out of the scan's sight",
                            near=f": {how}, another package's code, which the scan did not read" if whose is None
                            else f": {how}, {whose}",
                            severity="note", confidence="low")

    def _read_for_other_sections(self, result, knobs):
        """`actor_rollout_ref.ref.megatron.tensor_model_parallel_size`, joined to no read, whose
        last names code reads only as `self.config.megatron.tensor_model_parallel_size` in
        functions whose `self.config` also reads `model`: the config file's `ref` section has no
        `model`, and the sections that have `megatron` and `model` (`critic`, `reward_model`)
        are the ones those handles hold. Nothing reads `ref.megatron`: the reference worker
        takes the actor's sizes, and this key does nothing."""
        chains_by_name: dict[str, list] = {}  # a name -> the chains that read it, with their handles
        for rel, m in result.meta.items():
            for group, chains in ((m.get("holder_chains") or {}).items() if isinstance(m, dict) else ()):
                for chain in chains if isinstance(chains, list) else ():
                    names = str(chain).lower().split(".")
                    for name in set(names):
                        chains_by_name.setdefault(name, []).append((rel, group, names))
        if not chains_by_name:
            return
        shapes: dict[str, dict | None] = {}  # config file -> its sections' keys (_shape), read once
        for knob in knobs:
            parts = knob.name.lower().split(".")
            if len(parts) < 3:
                continue
            defines = [s for s in knob.sites if s.role == "define" and s.kind in CONFIG_KINDS and s.value is not None
                       and not s.detail.get("generated") and not is_test_file(s.file)]
            for s in defines:
                if s.file not in shapes:
                    shapes[s.file] = _shape(result.meta.get(s.file))
            shape = next((shapes[s.file] for s in defines if shapes[s.file]), None)
            prefix, section = ".".join(parts[:-2]), parts[-2]
            if shape is None or not shape.get(prefix) or not shape.get(f"{prefix}.{section}"):
                continue
            # no handle reading `megatron` at all: the leaf's reads come through names the scan
            # does not follow, so nothing is said
            evidence = _section_readers(chains_by_name.get(parts[-2], ()), parts, shape, result.meta)
            if not evidence:
                continue
            root, scope, lacked, qs = evidence[0]
            near = (f"; nothing reads `{prefix}.{section}`: `{section}` is read only through handles that hold "
                    f"another section (`{root}` in {scope} also reads `{lacked}`, which `{prefix}` lacks and "
                    f"{', '.join(f'`{q}`' for q in qs[:3])} {'have' if len(qs) > 1 else 'has'}"
                    + (f"; {len(evidence) - 1} more such handle{'s' if len(evidence) > 2 else ''})"
                       if len(evidence) > 1 else ")"))
            for site in defines:
                yield self.finding(site, knob=knob.name, related=[site], flow=[],
                                   subject=f"{knob.name} = {show(site.value)} is set here",
                                   effect="it never takes effect", near=near)

    def _dead_writes(self, result):
        """`cfg.num_envs = 1` for evaluation, where the program reads `cfg.num_envs_per_worker`
        and nothing reads `num_envs`: the write changes nothing. A note: code outside the tree may
        read the object's attribute."""
        # reads of a configuration (`cfg.x`, `args.x`, a parameter), not of another object's
        # attribute (`getattr(env, "num_envs", n)` reads the env)
        read_leaves = {s.leaf.lower() for s in result.sites if s.role == "consume" or (
            s.role == "read" and (idioms.is_config_name(str(s.detail.get("root") or "").split(".")[-1])
                                  or s.detail.get("via") not in ("getattr", "attribute")))}
        near_reads = {}  # leaf -> its near-miss read or None
        for site in result.sites:
            d = site.detail
            target = str(d.get("target") or "")
            # (`config["frame_transform_threads"] = 16` writes a key as `config.x = 16` does, in a
            # config module; elsewhere such a dict is mostly keyword arguments or a request body
            # handed out whole: `params["persistent_workers"] = True` before `DataLoader(**params)`)
            dotted = _SUBSCRIPT_KEY.sub(r".\1", target) if CONFIG_FILE.search(site.file) else target
            if site.role != "override" or site.kind != "python" or d.get("how") != "literal" \
                    or site.leaf.lower() in read_leaves or is_test_file(site.file) or "." not in dotted:
                continue
            if not idioms.is_config_name(dotted.split(".", 1)[0].split("[", 1)[0]):
                continue
            if site.leaf not in near_reads:
                near_reads[site.leaf] = next((s for s in result.sites if s.role == "read"
                                              and _near(s.leaf, site.leaf)), None)
            near = near_reads[site.leaf]
            yield self.finding(site, knob=site.key, related=[site], flow=_path(result, site, near),
                               subject=f"`{target} = {show(site.value)}` is written here",
                               effect="the write changes nothing",
                               near=_near_text(near).replace("instead, so", "instead (") + ")" if near else "",
                               severity="note", confidence="medium")

    def _dead_reads(self, result, loaded):
        """`workers = os.getenv("VILA_WORKERS", 1)` that nothing uses, before `uvicorn.run(app,
        workers=1)` (auditor/extract/py_dead.py): the user's value is read, then dropped. For
        `self.num_workers = ...`, only when no scanned file reads an attribute of that name.
        A variable a launcher sets or a library reads for itself (`WORLD_SIZE`, rules/knobs.yaml
        `set_for_programs`) is dropped by no one, nor is another object's attribute
        (`getattr(env, "num_envs", 1)`). LOADED: _attribute_loaders(result)."""
        imported: dict[str, set[str]] = {}  # module name -> files that import it
        for rel, m in result.meta.items():
            for name in (m.get("imported_names") or ()) if isinstance(m, dict) else ():
                imported.setdefault(name, set()).add(rel)
        for rel, m in sorted(result.meta.items()):
            if not isinstance(m, dict) or is_test_file(rel):
                continue
            for f in m.get("dead_reads") or ():
                if f.get("attr") and loaded.get(f["attr"], set()) - {rel} or idioms.set_for_programs(f["key"]) \
                        or f.get("module_name") and imported.get(f["module_name"], set()) - {rel}:
                    continue
                if f.get("via") not in ("environ", "namespace", "argparse") and not idioms.is_config_name(str(f.get("root") or "").split(".")[-1]):
                    continue  # `getattr(env, "num_envs", 1)`: another object's attribute, no setting
                yield self.finding(None, file=rel, line=f["line"], column=f["column"], knob=f["key"],
                                   subject=f"{f['key']} is read here into `{f['target']}`",
                                   effect="the value the user sets is dropped", near="",
                                   **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))

    def _commented_consumers(self, result):
        """`self.dataset_num_proc = dataset_num_proc`, whose only use, `# ds.map(fn,
        num_proc=self.dataset_num_proc)`, is commented out (auditor/extract/py_commented.py).
        Another file loading the attribute reads it, unless it loads it only from `self` in
        classes that do not inherit this one (a sibling trainer's own field of that name)."""
        facts = list(commented_out(result, "consumer"))
        if not facts:
            return
        read_elsewhere = self._loaded_elsewhere(result)
        for rel, f in facts:
            if read_elsewhere(rel, f["name"], f["cls"]):
                continue
            yield self.finding(None, file=rel, line=f["line"], column=f["column"], knob=f["name"],
                               subject=f"`self.{f['name']}` is stored here",
                               effect="the value it holds never takes effect",
                               near=f"; its only use, `{f['commented'][:100]}` (line {f['comment_line']}), is "
                                    f"commented out",
                               **({"severity": "note", "confidence": "medium"} if in_examples(rel) else {}))

    def _unread_fields(self, result, read_keys, splats, handed, copiers, loaders):
        """A setting declared in code for users to set - a dataclass / pydantic field, a parser
        flag - that no scanned code reads: `preprocessing_num_workers` in a dataclass that a
        hundred configs set, while the loader computes its own count. A warning when a config
        file or launch script of the project sets it (users do), else a note. Not for a class
        extending another package's (its fields may be that package's: TrainingArguments)."""
        ours = project_packages(result)
        # `args.worker_num = 4` writes the setting, it does not read it
        read_keys = {s.key.lower() for s in result.sites if _really_reads(s)
                     and not (s.role == "consume" and s.detail.get("literal"))} if any(
            _init_setting(s) for s in result.sites if s.role == "define") else read_keys
        dead = _dead_copies(result)
        handing: list[set] = []  # _namespaces_handed(result), found when a flag first needs it

        def reads(site) -> bool:
            return _really_reads(site) and (site.file, site.line) not in dead

        if dead:  # a key read only by dead copies is not read
            copied = {s.key.lower() for s in result.sites if (s.file, s.line) in dead}
            still = {s.key.lower() for s in result.sites if _is_reader(s) and (s.file, s.line) not in dead}
            read_keys = read_keys - (copied - still)
        # a field is read by its name, through whatever holds it: `config.trainer.nnodes` reads
        # TrainerConfig.nnodes
        read_leaves = {k.rsplit(".", 1)[-1] for k in read_keys}
        # the test of a serial / parallel switch reads its flag (`if not args.subproc:
        # DummyVecEnv(...) else: SubprocVecEnv(...)`), whatever the flag is called
        read_leaves |= {str(f.get("leaf") or "").lower() for m in result.meta.values() if isinstance(m, dict)
                        for f in (*(m.get("switches") or ()), *(m.get("switch_classes") or ()))}
        # a file that writes the environment by computed names exports a settings class's
        # environment-variable fields (`for k, v in asdict(env_args).items(): os.environ[k] = v`)
        exported = any(isinstance(m, dict) and m.get("environ_by_name") for m in result.meta.values())
        # attributes some file loads from an object that is no settings namespace: a validator of
        # a mixin the settings class inherits (`self.sequence_parallel_degree` in ValidationMixin)
        loaded = {a.lower() for a in loaders}
        for knob in result.knobs:
            fields = [s for s in knob.sites if s.role == "define" and s.kind == "python"
                      and (s.detail.get("via") in FIELD_VIAS or _init_setting(s)) and not s.detail.get("set_defaults")
                      and not s.detail.get("added_by") and not is_test_file(s.file)]  # (a library's: _library_flags)
            if not fields or knob.leaf.lower() in read_leaves or knob.leaf.lower() in loaded \
                    or _is_read(knob, read_keys, splats, handed, reader=reads):
                continue
            copy = next((s for s in knob.sites if (s.file, s.line) in dead), None)
            # users set it in config files and launch scripts, or in the example scripts that
            # fill a settings object by hand (`args.worker_num = 4` beside `args = Arguments()`)
            users = [s for s in knob.sites if not s.detail.get("generated") and not is_test_file(s.file) and (
                (s.role == "define" and (s.kind in CONFIG_KINDS or is_launch_override(s)))
                or (s.role == "override" and s.kind == "python" and s.detail.get("how") == "literal"
                    and s.file not in {f.file for f in fields}
                    and idioms.is_config_name(str(s.detail.get("target") or "").split(".", 1)[0])))]
            for field in fields:
                unsearched = _unsearched_readers(field, ours, result.libraries)
                if unsearched is None:
                    continue  # TrainingArguments' subclass: the package names the field, it may read it
                if field.detail.get("via") == "argparse" and field.leaf.lower() in _splat_flags(result.meta.get(field.file)):
                    continue  # `main(**vars(args))`: main's parameter of that name is the flag
                if exported and field.leaf.isupper():
                    continue  # OMP_NUM_THREADS: str = "1", exported by `os.environ[name] = value`
                if field.detail.get("counts_by_help"):
                    continue  # a knob by its help alone: other files' reads (`FLAGS.env_batch_size`) are unseen
                if _splatted_whole(field, splats) or _copied_field_by_field(field, copiers):
                    continue
                kind = "a parser flag" if field.detail.get("via") == "argparse" else \
                    f"an attribute {field.detail.get('owner')}() sets" if _init_setting(field) else \
                    f"a field of {field.detail.get('owner')}"
                set_by = (f"; {len(users)} config file{'s' if len(users) > 1 else ''} or script"
                          f"{'s' if len(users) > 1 else ''} set it (e.g. {where(users[0])})") if users else ""
                if copy is not None:
                    set_by += (f"; its only read, at {where(copy)}, copies it into `self.{dead[(copy.file, copy.line)]}`, "
                               f"which nothing reads")
                if unsearched:
                    set_by += (f"; {field.detail.get('owner')} extends a class of {' and '.join(unsearched)}, "
                               f"which this scan could not search (not installed, or too large) and which may read it")
                # (a launch script or config that sets the flag shows a command line takes it)
                uncalled = field.detail.get("via") == "argparse" and not users and _uncalled_builder(field, result)
                if uncalled:
                    set_by += (f"; no scanned code calls {uncalled}(), which adds it, so no command line may "
                               f"accept it either")
                yield self.finding(field, knob=knob.name, related=[field, *users[:3]], flow=_path(result, field, None),
                                   subject=f"{knob.name} is declared here as a setting users set ({kind})",
                                   effect="setting it changes nothing", near=set_by,
                                   **({} if not unsearched and not uncalled and (
                                       users or _flag_counts(field, result, handing) or _settings_field(field))
                                      else {"severity": "note", "confidence": "low"}))

    def _misplaced(self, result, read_keys, splats, handed, reported):
        """A key a config variant sets in a section where the base configuration does not have
        it, while the base sets the same name in another section: `[train] num_envs = 48` in
        box2d.ini when default.ini, which every variant extends, has `num_envs` under `[vec]`.
        Code reading `num_envs` somewhere says nothing about this section; no code reads
        `train.num_envs` (two or more dotted names), so the base's `vec.num_envs` is what runs."""
        by_leaf: dict[str, list] = {}
        for knob in result.knobs:
            by_leaf.setdefault(knob.leaf.lower(), []).append(knob)
        as_keywords = None
        for knob in result.knobs:
            if id(knob) in reported or "." not in knob.name or len(by_leaf.get(knob.leaf.lower(), ())) < 2:
                continue
            defines = [s for s in knob.sites if s.role == "define" and s.kind in CONFIG_KINDS
                       and not s.detail.get("generated")]
            if not defines or len(defines) != len(knob.sites) or \
                    _is_read(knob, read_keys, splats, handed, min_parts=2):
                continue
            section = knob.name.rpartition(".")[0]
            if as_keywords is None:
                as_keywords = _sections_as_keywords(result)
            if any(s == section.lower() or s.endswith("." + section.lower()) for s in as_keywords):
                continue  # `env_kwargs=args["env"]`: every key of it may become some callee's argument
            for site in defines:
                if site.value is None:
                    continue
                base = _base_define(site, section, by_leaf[knob.leaf.lower()])
                if base is None:
                    continue
                yield self.finding(site, knob=knob.name, related=[base, site], flow=_path(result, site, None) + [
                    {"file": base.file, "line": base.line, "column": base.column, "kind": "define", "role": "sink",
                     "key": base.key, "value": base.value, "text": base.source}],
                    subject=f"{knob.name} = {show(site.value)} is set here", effect="it never takes effect",
                    near=f" from this section; the base configuration {base.file} sets `{knob.leaf}` under "
                         f"`{base.key.rpartition('.')[0]}` ({base.key} = {show(base.value)} at {where(base)}) "
                         f"and has no `{knob.name}`, so the base's value runs")


def _uncalled_builder(field, result) -> str | None:
    """The function that adds FIELD's flag (`def add_model_args(parser)`, vendored from another
    project) when no call of that name is in any scanned file: no script builds a parser with
    it. None for a flag added at module level or by a function something calls."""
    fn = str(field.detail.get("function") or "<module>")
    name = fn.rsplit(".", 1)[-1]
    if fn == "<module>" or name.startswith("<"):
        return None
    from auditor.flow.graph import for_result
    return None if name in for_result(result).called_names() else name


def _closed_scripts(result) -> dict[str, dict]:
    """The scripts whose parsed namespace never leaves them (the extractor's `closed_namespace`
    fact), by file: not one that passes its command line on, nor one whose own `parse_args()`
    another file calls."""
    # (the scripts with the fact, first: most scans have none, and then nothing is indexed)
    closed = {rel: m["closed_namespace"] for rel, m in result.meta.items() if isinstance(m, dict)
              and isinstance(m.get("closed_namespace"), dict) and not m.get("forwards_argv")}
    exporting = [rel for rel, fact in closed.items() if fact.get("exported")]
    if exporting:  # `def parse_args(): return parser.parse_args()`: unless another file calls it
        from auditor.flow.graph import for_result
        graph = for_result(result)
        for rel in exporting:
            if any(graph.called_from_elsewhere(graph.of(rel, str(name))) for name in closed[rel]["exported"]):
                del closed[rel]
    return closed


_SUBSCRIPT_KEY = re.compile(r"""\[\s*["']([\w-]+)["']\s*\]""")
_COPY = re.compile(r"^\s*self\.(\w+)\s*(?::[^=]+)?=\s*[\w.]+\s*$")


def _dimensions() -> dict[str, list[list[str]]]:
    """rules/knobs.yaml ``dimensions``: each dimension's spellings as word lists, longest first."""
    data = catalogue.data("knobs.yaml").get("dimensions") or {}
    return {dim: sorted((w.split("_") for w in spellings), key=len, reverse=True) for dim, spellings in data.items()}


def _dimension_at(words: list[str], start_only: bool) -> tuple[str, int, int] | None:
    """(dimension, first word, word count) of the first dimension spelling in WORDS."""
    for i in range(1 if start_only else len(words)):
        for dim, spellings in _dimensions().items():
            for sp in spellings:
                if words[i:i + len(sp)] == sp:
                    return dim, i, len(sp)
    return None


def _sibling_setting(routed_param: str, omitted_param: str, key: str, settable: dict):
    """The settable knob that sizes OMITTED_PARAM's dimension beside KEY, which sizes
    ROUTED_PARAM's: `vllm_tensor_parallel_size` -> `vllm_pipeline_parallel_size`, the
    section kept (`rollout.tensor_parallel_size` -> `rollout.pipeline_parallel_size`)."""
    a = _dimension_at(routed_param.lower().split("_"), True)
    b = _dimension_at(omitted_param.lower().split("_"), True)
    if a is None or b is None or a[0] == b[0]:
        return None
    section, _, leaf = key.lower().rpartition(".")
    words = leaf.split("_")
    at = _dimension_at(words, False)
    if at is None or at[0] != a[0]:
        return None
    spellings = _dimensions()[b[0]]
    # `self._cfg_rollout.tensor_parallel_size` holds the `rollout` section
    part = _SETTINGS_AFFIX.sub("", section.rsplit(".", 1)[-1]) if section else ""
    for sp in spellings:
        name = "_".join([*words[:at[1]], *sp, *words[at[1] + at[2]:]])
        for knob in settable.get(name, ()):
            if not section or knob.name.lower().endswith(f"{part}.{name}"):
                return knob
    return None


def _declared_together(routed, sibling, rel: str, param: str, near: set[str] | None) -> bool:
    """Two knobs with no section are one settings object's when a class declares both (the
    fields of `VllmArguments`) or one file sets both: not two scripts' fields of one name. When
    the calling file REL declares the routed one itself, that declaration is the one it uses; a
    routed knob named as the callee's own parameter (`tensor_parallel_size`, which many scripts'
    settings declare and the join merges) counts only when REL declares it. A value passed as a
    bare name (a parameter) is joined to its knob by name alone: then the shared declaration
    must be in REL or a file it imports (NEAR): `tp_size` of a standalone script is not the
    `tp_size` of another program's dataclass that also declares `pp_size`."""
    def places(knob, only=None):
        return {(s.detail.get("owner") or s.file) for s in knob.sites
                if s.role == "define" and not s.detail.get("generated") and (only is None or s.file == only)}
    own = places(routed, rel)
    if not own and routed.leaf.lower() == param.lower():
        return False
    if own or near is None:
        return bool((own or places(routed)) & places(sibling))
    shared = places(routed) & places(sibling)
    return any(s.file in near for knob in (routed, sibling) for s in knob.sites
               if s.role == "define" and (s.detail.get("owner") or s.file) in shared)


_SETTINGS_AFFIX = re.compile(r"^_*(?:(?:cfg|conf|config|args)_)?|_(?:cfg|conf|config|args)$")


def _script_path(graph, rel: str, function, careful: bool = False) -> tuple | None:
    """(functions, unknown names) that REL's module level runs (`if __name__ == "__main__":
    main()`), when they include FUNCTION; None otherwise, or past the graph's bound.
    CAREFUL: graph.reachable's reading."""
    start = graph.of(rel, "<module>")
    walk = graph.reachable(start, careful=careful) if start else None
    if walk is None or graph.of(rel, str(function or "<module>")) not in walk[0]:
        return None
    return walk


def _may_hold_settings(root: str) -> bool:
    """`args`, `self.all_args`, `self` (a copy `self.n_threads = args.n_threads`): a root a
    parsed flag may be read through; `get_worker_info()`, `worker_info`: none."""
    return root == "self" or idioms.is_config_name(root.rsplit(".", 1)[-1])


def _namespace_handing(result, graph) -> list[tuple[str, str]]:
    """(the calling function's node, the callee) for each call that hands a parsed namespace
    whole to code out of sight (another package's, or a project function of a file the scan
    did not read): `launch(args)` where `args = parser.parse_args()` or `args` is a parameter
    of that name, `launch(**vars(args))`."""
    edges = []
    names = {"args"}  # the namespace's names: `args`, or what a script assigns parse_args() to
    for rel, meta in result.meta.items():
        flow = meta.get("flow") if isinstance(meta, dict) else None
        module = (flow or {}).get("module", "")
        for edge in (flow or {}).get("calls", ()):
            trees = [t for t in [*edge.get("args", ()), *edge.get("kwargs", {}).values(), *edge.get("splats", ())]
                     if isinstance(t, dict)]
            for t in trees:
                text = str(t.get("text") or "")
                if t.get("k") == "unknown" and re.match(r"\w+ = .*\.parse(?:_known)?_args\(", text):
                    names.add(text.split(" ", 1)[0])
            if trees:
                edges.append((rel, module, edge, trees))
    out = []
    for rel, module, edge, trees in edges:
        if not any(_whole_namespace(t, names) for t in trees):
            continue
        qual = _local_name(graph, rel, str(edge.get("fn") or ""))
        callee = next((c for c in edge.get("callee", ()) if graph.resolve(module, qual, c, careful=True) in (None, set())),
                      None)
        if callee is not None:
            out.append((graph.of(rel, qual), callee))
    return out


def _splat_flags(meta) -> set[str]:
    """The flags a script hands whole to its own function's parameters (`main(**vars(opts))`),
    lower-cased (the extractor's fact `splat_parameters`)."""
    return {p.lower() for p in (meta or {}).get("splat_parameters", ())} if isinstance(meta, dict) else set()


def _whole_namespace(tree: dict, names: set[str]) -> bool:
    text = str(tree.get("text") or "")
    return (tree.get("k") == "unknown" and ("parse_args(" in text or "parse_known_args(" in text)
            or tree.get("k") == "param" and tree.get("name") in names
            or text.startswith("vars(") and text[5:-1] in names)


def _qualname(graph, rel: str, name: str) -> str:
    """`pkg.run.main` in pkg/run.py -> `main` (the qualified name graph.of takes); a name
    without REL's module in front is returned as it is."""
    module = graph.module_of.get(rel, "")
    return name[len(module) + 1:] if module and name.startswith(module + ".") else name


def _node_of(graph, site) -> str | None:
    """The call graph's node for the function SITE is in: a site the flow derived names its
    function in full (`baselines.run.build_env`), the extractor's by its qualified name."""
    return graph.of(site.file, _qualname(graph, site.file, str(site.detail.get("function") or "<module>")))


def _local_name(graph, rel: str, full: str) -> str:
    """The qualified name of FULL, a function a call edge of REL names in full (`<module>`
    for anything else)."""
    qual = _qualname(graph, rel, full)
    return qual if qual != full else "<module>"


def _call_toward(result, graph, rel: str, flag) -> dict | None:
    """The first call in REL (a call edge: line, col) whose callee leads to the function that
    adds FLAG."""
    leads = graph.callers({graph.of(flag.file, str(flag.detail.get("function") or "<module>"))})
    flow = (result.meta.get(rel) or {}).get("flow") or {}
    module = flow.get("module", "")
    for edge in sorted(flow.get("calls", ()), key=lambda e: (e.get("line", 0), e.get("col", 0))):
        qual = _local_name(graph, rel, str(edge.get("fn") or ""))
        if any(not leads.isdisjoint(graph.resolve(module, qual, c, exact=True) or ()) for c in edge.get("callee", ())):
            return edge
    return None


def _hydra_config_file(rel: str, entry: dict) -> str | None:
    """The primary config file a `@hydra.main(config_path=..., config_name=...)` of REL loads."""
    import posixpath

    folder, name = entry.get("config_path"), entry.get("config_name")
    if not isinstance(folder, str) or not isinstance(name, str) or not name or ":" in folder:
        return None  # no search path (None), or a package path (pkg://): not a file beside the script
    path = posixpath.normpath(posixpath.join(posixpath.dirname(rel), folder, name))
    return path if path.endswith((".yaml", ".yml")) else path + ".yaml"


def _sections_handed(metas) -> set[str]:
    """Last names of the config sections the files of METAS pass whole to a call
    (`Cluster(cluster_cfg=cfg.cluster)` -> "cluster"), lowercased."""
    out: set[str] = set()
    for meta in metas:
        flow = meta.get("flow")
        for edge in (flow or {}).get("calls", ()) if isinstance(flow, dict) else ():
            for tree in [*edge.get("args", ()), *edge.get("kwargs", {}).values()]:
                for leaf in values.leaves(tree) if isinstance(tree, dict) else ():
                    if leaf.get("k") in ("config", "attr") and isinstance(leaf.get("key"), str):
                        out.add(leaf["key"].rsplit(".", 1)[-1].lower())
    return out


def _shape(facts) -> dict | None:
    """A config file's sections and their keys, when the file alone gives them: not composed
    from a Hydra defaults list, which adds keys the file does not spell."""
    if not isinstance(facts, dict) or facts.get("hydra_defaults") or not isinstance(facts.get("children"), dict):
        return None
    return {k.lower(): {str(n).lower() for n in v} if isinstance(v, list) else None
            for k, v in facts["children"].items() if isinstance(k, str)}


def _section_readers(chains, parts: list[str], shape: dict, meta) -> list | None:
    """The handles that read section PARTS[-2] without holding PARTS[:-2] ([] when none reads
    it at all), or None when one may read it there: a chain through a suffix of the parent
    (`ref.megatron`, `actor_rollout_ref.ref.megatron`), or a handle that may hold the parent.
    CHAINS: (file, "function|handle", names) of the chains that read that name."""
    prefix, section = parts[:-2], parts[-2]
    evidence = []
    judged = set()
    for rel, group, names in chains:
        at = names.index(section)
        if at and names[:at] == prefix[len(prefix) - at:]:
            return None  # `self.config.ref.megatron`: the section itself
        if at or (rel, group) in judged:
            continue  # `self.config.actor.megatron`: another section's
        judged.add((rel, group))
        scope, root = group.rsplit("|", 1)
        if not re.fullmatch(r"[\w.]+", root):
            return None  # `cfgs[role].megatron`: which section is computed at run time
        held = _held_elsewhere(meta.get(rel), scope, root, ".".join(prefix), section, shape)
        if held is None:
            return None
        evidence.append((root, f"{scope} ({rel})", *held))
    return evidence


def _held_elsewhere(facts, scope: str, root: str, prefix: str, first: str, shape: dict) -> tuple[str, list[str]] | None:
    """(a key the handle ROOT of SCOPE reads with no default that section PREFIX lacks, the
    sections that have it and FIRST), when that tells the handle holds another section; None
    when it may hold PREFIX."""
    keys = shape.get(prefix)
    groups = facts.get("holder_reads") if isinstance(facts, dict) else None
    group = groups.get(f"{scope}|{root}") if isinstance(groups, dict) else None
    if not keys or not isinstance(group, list):
        return None
    for lacked in sorted(str(g).lower() for g in group):
        if lacked in keys:
            continue
        sections = sorted(q for q, ks in shape.items() if q != prefix and ks and lacked in ks and first in ks)
        if sections:
            return lacked, sections
    return None


def _read_key(site) -> str:
    """A read's key, lower case, with the holder it is read from when that is all it names:
    `config["NUM_SEEDS"]` in `def main(config)` is `config.num_seeds`."""
    key = site.key.lower()
    root = str(site.detail.get("root") or "")
    if "." not in key and site.detail.get("via") in ("subscript", "get") and _HOLDER.search(root):
        return f"{root.lower()}.{key}"
    return key


def _same_key(read: str, define: str) -> bool:
    """`cfg.collector.num_workers` (read as collector.num_workers) reads the file's
    collector.num_workers: the read's names end the define's, two of them at least. A top-level
    key of a flat config (purejaxrl's `NUM_SEEDS: 2`) is read by `config["NUM_SEEDS"]`: the
    holder named as a configuration and the key."""
    if define.count(".") == 0 and read.count(".") == 1:
        holder, _, name = read.partition(".")
        return name == define and bool(_HOLDER.search(holder))
    return read.count(".") >= 1 and define.count(".") >= 1 and \
        (define == read or define.endswith("." + read) or read.endswith("." + define))


def _flag_counts(site, result, handing: list) -> bool:
    """A command-line flag named as a count is a setting users set by definition: no config file
    has to set it. Not one known by its help text alone (its reads in other files are unseen),
    nor one of a file that hands a parsed namespace whole to another package (read there, maybe:
    `launch_simulation(cfg, args)`)."""
    if site.detail.get("via") not in ("argparse", "click") or site.detail.get("counts_by_help"):
        return False
    if not handing:
        handing.append(_namespaces_handed(result))
    return site.file not in handing[0]


_SECTION_DEFAULT = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*\(")  # `DistributedConfig()`


# a size, never a switch: `async_envs: true` or `use_gpus: false` chooses a backend, and stays
_COUNT_NAME = re.compile(r"(_size|_degree|_count|_num)$", re.IGNORECASE)


def _inside_read(leaf: str, read_keys) -> bool:
    """Code reads a key inside the section LEAF names (`distributed.tp_size` reads into
    `distributed`)."""
    inner = f".{leaf.lower()}."
    return any(inner in f".{k}" for k in read_keys)


def _expression_reads(result, rel: str) -> list:
    meta = result.meta.get(rel)
    return meta.get("expression_reads") or [] if isinstance(meta, dict) else []


def _settings_field(site) -> bool:
    """A field of a class named as settings (IMPALAConfig, TrainingArguments) with a literal
    default: users set it where they build the settings, in code as often as in config files.
    Not of a state record (RankInfo, RoutePlan), whose fields the program fills itself; not a
    field without a default (a layout the code computes and passes in) or one holding a nested
    section (`distributed: DistributedConfig = DistributedConfig()`); not one its comments call
    deprecated."""
    return site.detail.get("via") in SETTINGS_VIAS and not site.detail.get("said_unused") \
        and not site.detail.get("required") and not site.detail.get("factory") \
        and not _SECTION_DEFAULT.match(str(site.detail.get("expr") or "")) \
        and CONFIG_CLASS.search(str(site.detail.get("owner") or "").rsplit(".", 1)[-1]) is not None


def _namespaces_handed(result) -> set[str]:
    """Files that pass a settings variable whole (`args`, `cfg`, no attribute of it) or a parser
    to a callee of another package."""
    return {rel for rel, edge in handoff.foreign_calls(result)
            if any(idioms.is_config_name(name) or "parser" in name.lower() for name in _bare_arguments(edge.get("text")))}


_LEADING_NAMES = re.compile(r"\(\s*((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)\s*(?:,|\))(?!\s*=)")


def _bare_arguments(call_text) -> list[str]:
    """The arguments of a call's text that are bare names: `launch_simulation(cfg, args)` -> cfg, args."""
    try:
        call = ast.parse(str(call_text or "").strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        # a long call's text is cut (`Trainer.from_argparse_args( args, weights_summary=None, ...`):
        # its leading positional names still show
        first = _LEADING_NAMES.search(str(call_text or ""))
        return [n.strip() for n in first.group(1).split(",")] if first else []
    if not isinstance(call, ast.Call):
        return []
    return [a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)]


def _dead_copies(result) -> dict[tuple, str]:
    """(file, line) -> attribute, for reads that only copy the setting into an attribute of the
    same name that no scanned code reads (`self.n_render_rollout_threads =
    self.all_args.n_render_rollout_threads`, and no `self.n_render_rollout_threads` anywhere)."""
    instance_reads = {name for m in result.meta.values() if isinstance(m, dict) for name in m.get("instance_reads") or ()}
    out = {}
    for s in result.sites:
        if s.role != "read" or s.kind != "python" or s.detail.get("via") != "attribute":
            continue
        m = _COPY.match(s.source)
        if m and m.group(1).lower() == s.leaf.lower() and s.leaf.lower() not in instance_reads:
            out[(s.file, s.line)] = m.group(1)
    if out:  # read through another handle (`runner.n_envs`, a consumer's argument): not dead
        others = {s.leaf.lower() for s in result.sites if s.role in ("read", "consume") and (s.file, s.line) not in out}
        out = {at: attr for at, attr in out.items() if attr.lower() not in others}
    return out


def _read_through_alias(knob, meta, read_keys) -> bool:
    """`_ppo_meta: &ppo_meta {distributed: false}` and `ppo: {meta: *ppo_meta}`: the anchor's
    key is set at ppo.meta.distributed too (the YAML extractor's meta["aliases"]), and code
    reading `meta.distributed` reads it there."""
    for site in knob.sites:
        aliases = (meta.get(site.file) or {}).get("aliases") if isinstance(meta.get(site.file), dict) else None
        if site.role != "define" or not aliases:
            continue
        key = (site.detail.get("key_in_file") or site.key).lower()
        for anchor, paths in aliases.items():
            anchor = anchor.lower()
            if not key.startswith(anchor + ".") and anchor:
                continue
            rest = key[len(anchor) + 1:] if anchor else key
            for path in paths:
                parts = f"{path.lower()}.{rest}".strip(".").split(".")
                if any(".".join(parts[i:]) in read_keys for i in range(len(parts) - 1)):
                    return True
    return False


def _really_reads(site) -> bool:
    """A reader, leaving out a literal written over the setting (`args.worker_num = 4`)."""
    return _is_reader(site) and not (site.role == "override" and site.detail.get("how") == "literal")


def _init_setting(site) -> bool:
    """`self.worker_num = 2` in the `__init__` of a plain settings class (`class Arguments:`),
    ElegantRL's way of declaring what users set: a field as a dataclass's is."""
    d = site.detail
    owner = str(d.get("owner") or "")
    return d.get("via") == "attribute" and bool(owner) and d.get("function") == f"{owner}.__init__" \
        and site.value is not None and idioms.is_config_class(owner)


def _is_read(knob, read_keys, splats, handed, min_parts: int = 1, reader=_is_reader) -> bool:
    """Code reads the knob: joined to it (a site READER accepts), or through a read of its last
    MIN_PARTS or more dotted names, a splat of its section, or its section handed to another package."""
    if any(reader(s) for s in knob.sites):
        return True
    parts = knob.name.lower().split(".")
    if any(".".join(parts[i:]) in read_keys for i in range(1, len(parts) - min_parts + 1)):
        return True
    return any(_covers(s.key, knob.name) for s in splats) or any(_within(key, parts) for key in handed)


def _handed_out(result) -> dict[str, str]:
    """Keys of configuration sections passed whole to a callee of another package, with that
    callee: `to_dataclass(cfg.engine.turbo_config)` -> {"engine.turbo_config":
    "fsdp_turbo.config.to_dataclass"}."""
    from auditor.flow.values import leaves

    out: dict[str, str] = {}
    for _rel, edge in handoff.foreign_calls(result):
        for arg in [*edge.get("args", ()), *edge.get("kwargs", {}).values()]:
            key = arg.get("key") if arg.get("k") in ("config", "attr") else None
            if key and idioms.is_config_name(key.rsplit(".", 1)[-1]):
                out.setdefault(key.lower(), (edge.get("callee") or ["?"])[0])
        # `Trainer(**OmegaConf.to_container(self.config.trainer.params))`: the section's keys are
        # the callee's arguments, whatever the section is called
        for tree in edge.get("splats", ()):
            for n in leaves(tree):
                if n.get("k") in ("config", "attr") and n.get("key") and "." in n["key"]:
                    out.setdefault(n["key"].lower(), (edge.get("callee") or ["?"])[0])
    return out


def _configs_to_programs(result) -> dict[str, tuple[str, str]]:
    """Config files a launch script gives another program by a config flag (`sweagent run-batch
    --config agent/infer.yaml`; shell meta `configs_handed`) -> (the script, the program): that
    program reads their keys."""
    out: dict[str, tuple[str, str]] = {}
    config_files = None
    for rel, meta in result.meta.items():
        for handed in (meta.get("configs_handed") or ()) if isinstance(meta, dict) else ():
            if config_files is None:
                config_files = _yaml_files(result)
            for path in _named_files(rel, str(handed.get("path") or ""), config_files):
                out.setdefault(path, (rel, str(handed.get("program"))))
    return out


def _yaml_files(result) -> list[str]:
    return sorted(r for r in result.meta if r.endswith((".yaml", ".yml")))


def _whole_configs_out(result) -> dict[str, tuple[str, str]]:
    """Config folders of `@hydra.main` entries, and config files a script names (`--config
    apps/sft/llama3_8b.yaml` in its usage, `os.path.join(here, "configs", "grpo.yaml")`),
    whose configuration object goes whole to another package's code (`RayPPOTrainer(config)`,
    `super().__init__(config)` in a class extending it, `setup(config, ...)`, through the
    project's own functions) -> (the script, that callee). Any key of such a folder or file
    may be read there."""
    carried = None
    out: dict[str, tuple[str, str]] = {}
    config_files = None
    for rel, meta in result.meta.items():
        named = meta.get("config_names") if isinstance(meta, dict) else None
        mains = meta.get("hydra_main") if isinstance(meta, dict) else None
        module = ((meta.get("flow") or {}).get("module") or "") if named or mains else ""
        if not module:
            continue
        if carried is None:
            carried = handoff.carried_out(result, idioms.is_config_name)
        callee = next((c for (f, _param), c in carried.items() if f.startswith(module + ".")), None) \
            if named else None
        if callee is not None:
            if config_files is None:
                config_files = _yaml_files(result)
            for name in named:
                for path in _named_files(rel, name, config_files):
                    out.setdefault(path, (rel, callee))
        for entry in mains or ():
            path = entry.get("config_path")
            if not isinstance(path, str) or ":" in path:
                continue  # `pkg://...`: a package's folder, not the tree's
            fn = f"{module}.{entry.get('function')}"
            callee = next((c for (f, _param), c in carried.items() if f == fn), None)
            folder = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
            if callee is not None and not folder.startswith(".."):
                out.setdefault("" if folder == "." else f"{folder}/", (rel, callee))
    return out


def _into_fields(name: str, into: dict, loaded: set[str]) -> str | None:
    """How key NAME reaches code when its section is splatted into a project class (INTO:
    handoff.sections_into_classes): "read" when it fills a field that code loads (or a field
    of the project class that field holds); the way out, when it lies under a field whose type
    is another package's class (`parallelism: Parallelism` of torchtitan); else None."""
    parts = name.lower().split(".")
    for section, targets in into.items():
        names = section.split(".")
        for i in range(len(parts) - len(names)):
            if parts[i:i + len(names)] != names:
                continue
            rest = parts[i + len(names):]
            for rel, cls, fields in targets:
                if rest[0] not in fields:
                    continue
                kind, inner, foreign = fields[rest[0]]
                if len(rest) == 1 and rest[0] in loaded:
                    return "read"
                if len(rest) == 2 and inner is not None and rest[1] in inner and rest[1] in loaded:
                    return "read"
                if len(rest) >= 2 and foreign:
                    return (f"{rel} splats `{section}` into {cls.rsplit('.', 1)[-1]}, whose field `{rest[0]}` "
                            f"is a {kind}")
    return None


def _named_files(rel: str, name: str, config_files: list[str]) -> list[str]:
    """The config files of the tree that NAME, written in script REL, may be: a path from the
    tree's root or from REL's folder, or a bare file name under REL's folder."""
    folder = posixpath.dirname(rel)
    if "/" in name:
        paths = {posixpath.normpath(name[2:] if name.startswith("./") else name),
                 posixpath.normpath(posixpath.join(folder, name))}
        return [f for f in config_files if f in paths]
    return [f for f in config_files if posixpath.basename(f) == name
            and (not folder or f.startswith(folder + "/"))]


def _within(section: str, parts: list[str]) -> bool:
    """The knob's dotted PARTS lie under SECTION, matched by its last name: the code's path
    to a section (`self.engine_config.turbo_config`) seldom spells the file's (`engine.`)."""
    return section.rsplit(".", 1)[-1] in parts[:-1]


def _spelt(section: str, parts: list[str]) -> int:
    """How many of SECTION's last dotted names the knob's PARTS spell, in order, before its leaf."""
    names = section.split(".")
    for n in range(len(names), 0, -1):
        tail = names[-n:]
        if any(parts[i:i + n] == tail for i in range(len(parts) - n)):
            return n
    return 0


_WHOLE = re.compile(r"^(?:dataclasses\.)?(?:asdict|vars)\((?:self\.)?(?P<obj>[\w.]+)\)$|^(?:self\.)?(?P<obj2>[\w.]+)\.__dict__$")


def _field_copiers(result) -> set[str]:
    """Names of the settings classes (and their bases) that a function copies field by field onto
    another object (`for f in fields(cfg): setattr(args, f.name, ...)` with `cfg: BaseConfig`).
    One that names no type may be a settings class filling itself: it reads nothing out."""
    out: set[str] = set()
    for meta in result.meta.values():
        for copier in (meta.get("field_copiers") or ()) if isinstance(meta, dict) else ():
            out |= set(copier.get("types") or ())
    return out


def _copied_field_by_field(field, copied: set[str]) -> bool:
    """A field of a class that a field-by-field copier takes (by the class's name or a base's):
    the copy reads every field."""
    if not copied:
        return False
    names = {str(field.detail.get("owner") or "").rsplit(".", 1)[-1]} | \
        {str(b).rsplit(".", 1)[-1] for b in field.detail.get("bases") or ()}
    return bool(names & copied)


def _attribute_loaders(result) -> dict[str, set[str]]:
    """Attribute name -> the files that load it from an object that holds no settings
    (`trainer.num_workers`, `self.save_thread_count`: the file fact `attr_loads`)."""
    out: dict[str, set[str]] = {}
    for rel, m in result.meta.items():
        for attr in (m.get("attr_loads") or ()) if isinstance(m, dict) else ():
            out.setdefault(attr, set()).add(rel)
    return out


@lru_cache(maxsize=None)
def _settings_bases() -> frozenset[str]:
    return frozenset(catalogue.data("consumers.yaml").get("settings_bases") or ())


def _unsearched_readers(field, ours, libraries) -> list[str] | None:
    """The packages of the other packages' classes FIELD's class extends that may read the
    field and were not searched for its name (not installed, too large, --no-libraries);
    None when one names it (it may read it: TrainingArguments' own fields). A package whose
    source never names the field cannot read it: no reader."""
    searched = libraries.names if libraries is not None else {}
    unsearched: list[str] = []
    for top in dict.fromkeys(b.split(".")[0] for b in field.detail.get("bases") or () if _reads_own_fields(b, ours)):
        named = searched.get(top, {}).get(field.leaf)
        if named:
            return None
        if named is None:
            unsearched.append(top)
    return unsearched


def _reads_own_fields(base: str, ours) -> bool:
    """BASE is another package's class that may read the fields of its subclasses by name: not
    a generic settings base (pydantic.BaseModel: rules/consumers.yaml `settings_bases`), nor
    one of the standard library's (typing.NamedTuple)."""
    return foreign_package(base, ours) is not None and base not in _settings_bases()


def _splatted_whole(field, splats) -> bool:
    """`Parallel(**asdict(self.joblib_cfg))` hands every field of the object on: a field of a
    settings class is read so when the splat stands in the class's file, or names an object
    after the class (joblib_cfg, JoblibConfig)."""
    owner = str(field.detail.get("owner") or "").rsplit(".", 1)[-1].lower()
    for s in splats:
        m = _WHOLE.match(s.key)
        if m is None:
            continue
        if s.file == field.file:
            return True
        words = [w for w in re.split(r"[._]", (m.group("obj") or m.group("obj2")).lower()) if len(w) > 2]
        if owner and any(owner.startswith(w) for w in words):
            return True
    return False


def _covers(splat_key: str, name: str) -> bool:
    """A splatted mapping `loader` (or `cfg.loader`) covers the knob `loader.num_workers`."""
    parent = name.rpartition(".")[0]
    return bool(parent) and (parent == splat_key or parent.endswith("." + splat_key)
                             or splat_key.endswith("." + parent))


_HOLDER = re.compile(r"(^|_)(cfg|cfgs|config|configs|conf)$")
_ENV_SECTION = re.compile(r"^(env_vars?|environment(_variables)?|env|envs|runtime_env|extra_env)$", re.IGNORECASE)


def _kwargs_section(name: str) -> str | None:
    """The `*_kwargs` section a key sits under (`vllm_serve_kwargs.model_loader_extra_config.
    num_threads`): keyword arguments the program hands on whole, to a library or a server it
    starts, which reads them out of sight. None when there is none."""
    return next((p for p in reversed(name.split(".")[:-1]) if p.lower().endswith("kwargs")), None)


def _hydra_own(name: str) -> bool:
    """`hydra.launcher.cpus_per_task`: a key of Hydra's own section, read by Hydra and its
    launcher plugins (submitit, joblib, ray), which the scan does not read."""
    parts = name.lower().split(".")
    return len(parts) > 1 and parts[0] == "hydra"


def _environment_variable(name: str) -> bool:
    """An upper-case key under a section of environment variables (`env_vars:`, `runtime_env:`,
    `environment:`, at any depth): a variable the launched process reads, not a setting for
    the scanned code (`env:` sections of RL configs hold lower-case keys and stay settings)."""
    parts = name.split(".")
    leaf = parts[-1]
    return leaf.isupper() and any(_ENV_SECTION.match(p) for p in parts[:-1])


def _near(a: str, b: str) -> bool:
    """similar(), plus one typo in the full name (num_wokers / num_workers)."""
    a, b = a.lower().replace("-", "_"), b.lower().replace("-", "_")
    return similar(a, b) or (a != b and min(len(a), len(b)) >= 6 and one_typo(a, b) and count_units(a) == count_units(b))


def _near_read(result, knob):
    reads = [s for s in result.sites
             if s.role == "read" and s.kind == "python" and _near(s.leaf, knob.leaf)]
    if not reads:
        return None
    # `sampler.num_worker` is a near miss of the read `sampler.num_workers`, not of
    # `data.num_workers`: prefer the read that shares the longest dotted parent.
    parent = knob.name.lower().split(".")[:-1]

    def shared_parent(site) -> int:
        other = site.key.lower().split(".")[:-1]
        n = 0
        while n < min(len(parent), len(other)) and parent[-1 - n] == other[-1 - n]:
            n += 1
        return n

    return max(reads, key=shared_parent)  # max keeps the first of equals: file order


def _near_text(s) -> str:
    if s is None:
        return ""
    default = f"its default {show(s.default)} runs" if s.default is not None else \
        "it gets no value from this key"
    return f"; code reads the near-miss `{s.key}` at {where(s)} instead, so {default}"


def _path(result, define, near):
    """The define, then the path from the near-miss read to the backend it feeds."""
    head = [{"file": define.file, "line": define.line, "column": define.column, "kind": "define",
             "role": "source", "key": define.key, "value": define.value, "text": define.source}]
    if near is None:
        return head
    for s in result.sites:
        flow = s.detail.get("flow") if s.role == "consume" else None
        if flow and any(step["file"] == near.file and step["line"] == near.line for step in flow):
            return head + flow
    return head + [{"file": near.file, "line": near.line, "column": near.column, "kind": "config", "role": "step",
                    "key": near.key, "default": near.default, "text": near.source}]


def _tool_config(result, rel: str, memo: dict) -> str | None:
    """The tool (rules/tool_configs.yaml) whose config file REL is, by its top-level keys."""
    from auditor import catalogue

    if rel in memo:
        return memo[rel]
    if not memo:  # the first call: every file's top-level knob keys at once
        memo["\0sites"] = {}
        for s in result.sites:
            memo["\0sites"].setdefault(s.file, set()).add(s.key.split(".", 1)[0])
    meta = result.meta.get(rel)
    facts = meta if isinstance(meta, dict) else {}
    # a YAML / INI file's scalar keys, a JSON file's top-level keys
    keys = {k.split(".", 1)[0] for k in facts.get("values") or {}} | set(facts.get("top_keys") or ())
    children = facts.get("children")
    top = children.get("") if isinstance(children, dict) else None
    keys |= {k for k in top if isinstance(k, str)} if isinstance(top, list) else set()  # a YAML file's sections too
    keys |= memo["\0sites"].get(rel, set())
    memo[rel] = None
    for entry in catalogue.data("tool_configs.yaml").get("tool_configs", []):
        if set(entry.get("all_of", ())) <= keys and entry.get("all_of") or keys & set(entry.get("any_of", ())):
            memo[rel] = entry["tool"]
    return memo[rel]


def _sections_as_keywords(result) -> set[str]:
    """Config sections code hands on as keyword arguments: splatted (`**args["vec"]`) or passed
    to a `*kwargs` parameter (`env_kwargs=args["env"]`), from the flow layer's call edges."""
    out: set[str] = set()
    for meta in result.meta.values():
        flow = meta.get("flow") if isinstance(meta, dict) else None
        for edge in (flow or {}).get("calls", ()):
            trees = list(edge.get("splats", ())) + [t for name, t in edge.get("kwargs", {}).items()
                                                      if name.lower().endswith("kwargs")]
            for t in trees:
                if t.get("k") == "config" and t.get("key"):
                    out.add(t["key"].lower())
    return out


BASE_CONFIG_STEMS = ("default", "defaults", "base", "common", "_base_", "base_config", "default_config")


def _base_define(site, section: str, knobs):
    """The define of the same leaf, under another section, in a base configuration of SITE's
    family (a default / base file in its folder or one above), when that base file does not
    set the leaf under SECTION itself; else None."""
    folder = site.file.rpartition("/")[0]
    suffix = site.file.rpartition(".")[2]
    for knob in knobs:
        if knob.name.rpartition(".")[0] == section:
            continue
        for other in knob.sites:
            if other.role != "define" or other.file == site.file or other.file.rpartition(".")[2] != suffix:
                continue
            stem = other.file.rpartition("/")[2].rpartition(".")[0].lower()
            other_folder = other.file.rpartition("/")[0]
            if stem not in BASE_CONFIG_STEMS or not (folder == other_folder or folder.startswith(other_folder + "/")
                                                     or not other_folder):
                continue
            same_section = any(s.file == other.file for k in knobs if k.name.rpartition(".")[0] == section
                               for s in k.sites)
            # a file of named presets (`defaults:`, `atari:`, `dmc:` each setting generator_workers,
            # picked by name and merged flat: `conf.update(configs[name])`, as DreamerV3 and its
            # copies do): a top-level section of the variant is one more preset, not a misplaced key
            presets = {k.name.rpartition(".")[0] for k in knobs for s in k.sites if s.file == other.file}
            if not same_section and not ("." not in section and len(presets) >= 2
                                         and all("." not in p for p in presets)):
                return other
    return None

"""QG102 unknown-override: a launch script overrides a key that no config or parser defines."""

from auditor.lint.base import CONFIG_KINDS, SETTINGS_VIAS, Example, Rule, is_config_define, is_launch_override, show

# a settings class is named after its section, less one of these (PlacementConfig: `placement`)
SETTINGS_SUFFIXES = ("config", "cfg", "args", "arguments", "settings", "options", "params")

def _structured(override: str) -> dict:
    """A program whose settings are nested dataclasses filled from `key=value` words
    (OmegaConf.from_cli), a launch script that passes OVERRIDE, and one YAML config (examples)."""
    return {"config.py": "from dataclasses import dataclass, field\n"
                         "@dataclass\nclass PlacementConfig:\n    policy_num_gpus_per_node: int = 1\n"
                         "@dataclass\nclass TrainerConfig:\n"
                         "    placement: PlacementConfig = field(default_factory=PlacementConfig)\n",
            "train.py": "import sys\nfrom omegaconf import OmegaConf\nfrom config import TrainerConfig\n"
                        "cfg = OmegaConf.merge(OmegaConf.structured(TrainerConfig), OmegaConf.from_cli(sys.argv[1:]))\n"
                        "world(cfg.placement.policy_num_gpus_per_node)\n",
            "conf/eval.yaml": "eval:\n  num_workers: 2\n",
            "run.sh": f"#!/bin/bash\npython train.py {override}\n"}


_TRAIN = ("import argparse\np = argparse.ArgumentParser()\n"
          "p.add_argument('--num-workers', type=int, default=2)\n"
          "args, _ = p.parse_known_args()\n"
          "from torch.utils.data import DataLoader\n"
          "loader = DataLoader(ds, num_workers=args.num_workers)\n")


class UnknownOverride(Rule):
    CODE = "QG102"
    NAME = "unknown-override"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{spelling} sets {knob} = {value}, but no config or parser defines that key{why}"
    RATIONALE = """\
A launch script or CLI string that overrides a key nobody defines is dropped without a word:
`parse_known_args()` collects unknown flags into a list nobody looks at, and Hydra's
`+key=value` adds a brand-new key that no code reads. The program runs with its own default
while the launch script says otherwise.

Fix the spelling so it matches the parser's flag or the config key. A flag given to a program
whose parser does not call `parse_known_args()` is a note: that parser rejects it and the run
fails, which is loud (or the flag belongs to another program the script starts). A wrapper's
`-- torchrun ...` starts another command: its flags are that command's. `--env NAME=VALUE` is
an option's value, not a configuration key.

A `key=value` override is checked against the configs of the scanned tree, so not when the
program takes its config from elsewhere: a program the scan did not read
(`python -m verl.trainer.main_ppo`, `uv run --extra verl -m ...`: an installed package's), or
a `@hydra.main` whose config folder is no literal path in the tree (`config_path=config_dir`).
Structured configs (nested dataclasses filled by `OmegaConf.from_cli`) define their keys as
fields: `trainer.placement.policy_num_gpus_per_node=4` sets the field of a settings class
named after its section (`PlacementConfig`, `SFTPlacementConfig`; less a `Config` / `Args` /
`Settings` ... suffix), and is not reported; a misspelt field or section still is."""
    VALID = [
        Example({"train.py": _TRAIN, "run.sh": "#!/bin/bash\npython train.py --num-workers 8\n"},
                "the flag matches the parser"),
        Example({"train.py": _TRAIN, "run.sh": "#!/bin/bash\n# python train.py --num-worker 8\n"
                 "python train.py --num-workers 8\n"},
                "a commented-out flag does not count"),
        Example(_structured("trainer.placement.policy_num_gpus_per_node=4"),
                "the key is the field of a nested settings class named after its section (PlacementConfig)"),
        Example({"conf/eval.yaml": "eval:\n  num_workers: 2\n",
                 "run.sh": "#!/bin/bash\nuv run --extra verl -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n"},
                "the program is another package's (`-m verl.trainer.main_ppo`): its config is out of sight"),
    ]
    INVALID = [
        Example({"train.py": "import argparse\np = argparse.ArgumentParser()\n"
                             "p.add_argument('--num-workers', type=int, default=2)\nargs = p.parse_args()\n",
                 "launch.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--gpus', type=int)\n"
                              "args, cmd = p.parse_known_args()\n",
                 "run.sh": "#!/bin/bash\npython launch.py --gpus 8 -- torchrun --nnodes=2 --nproc_per_node=8 \\\n"
                           "    train.py --num-worker 8\n"},
                "an unknown flag to a parser that rejects it: the run fails (a note)", expect=[("run.sh", 3)],
                severity="note"),
        Example({"train.py": _TRAIN, "run.sh": "#!/bin/bash\npython train.py --num-worker 8\n"},
                "a misspelt flag, dropped by parse_known_args", expect=[("run.sh", 2)]),
        Example({"conf/config.yaml": "data:\n  num_workers: 4\n",
                 "train.py": "import hydra\n@hydra.main(config_path='conf', config_name='config')\n"
                             "def main(cfg):\n    n = cfg.data.num_workers\n",
                 "run.sh": "#!/bin/bash\npython train.py +data.num_worker=16\n"},
                "`+key=` adds a misspelt key that nothing reads", expect=[("run.sh", 2)]),
        Example({"conf/config.yaml": "rollout:\n  num_envs: 8\n",
                 "train.py": "import hydra\n@hydra.main(config_path='conf', config_name='config')\n"
                             "def main(cfg):\n    n = cfg.rollout.num_envs\n",
                 "run.sh": "#!/bin/bash\ntorchrun --nproc_per_node=2 train.py rollout.num_env=32\n"
                           "mpirun -np 2 python train.py rollout.num_env=32\n"},
                "after a launcher the program's overrides count the same", expect=[("run.sh", 2), ("run.sh", 3)]),
        Example(_structured("trainer.placement.policy_num_gpu_per_node=4"),
                "a misspelt field of a nested settings class", expect=[("run.sh", 2)]),
        Example(_structured("trainer.placment.policy_num_gpus_per_node=4"),
                "a misspelt section: no settings class is named after it", expect=[("run.sh", 2)]),
    ]

    def check(self, result):
        has_parser = any(s.kind == "python" and s.detail.get("via") == "argparse" for s in result.sites)
        has_config = any(s.kind in CONFIG_KINDS and s.role == "define" for s in result.sites)
        python_files = {s.file for s in result.sites if s.kind == "python"}
        known_args = sorted(f for f, m in result.meta.items() if m.get("parse_known_args"))
        fields: dict[str, set[str]] = {}  # leaf -> the settings classes that declare it
        for s in result.sites:
            if s.role == "define" and s.kind == "python" and s.detail.get("via") in SETTINGS_VIAS \
                    and s.detail.get("owner"):
                fields.setdefault(s.leaf.lower(), set()).add(str(s.detail["owner"]).rsplit(".", 1)[-1])
        for knob in result.knobs:
            if any(is_config_define(s) for s in knob.sites):
                continue
            readers = [s for s in knob.sites if s.role in ("read", "consume") and s.kind == "python"]
            for site in knob.sites:
                if not is_launch_override(site):
                    continue
                via = site.detail.get("via")
                if via == "flag":
                    if not has_parser or readers:
                        continue  # flags to a program we cannot see, or read from somewhere we can
                    script = site.detail.get("script") or ""
                    if script and not any(f == script.lstrip("./") or f.endswith("/" + script.rsplit("/", 1)[-1])
                                          for f in python_files):
                        continue  # passed to a program outside the scanned tree
                    # only the program the script runs can drop it silently; a parser that rejects
                    # unknown flags fails the run, which is loud (a note)
                    dropper = next((f for f in known_args if _runs(script, f)), None)
                    why = (f"; parse_known_args() in {dropper} drops it silently" if dropper
                           else f"; the parser of {script or 'the program'} rejects it (the run fails), or another "
                                f"program receives it")
                    severity = {} if dropper else {"severity": "note", "confidence": "medium"}
                    spelling = site.detail.get("flag") or f"--{site.key.replace('_', '-')}"
                else:
                    add = site.detail.get("hydra_add") or ""
                    if add and readers:
                        continue  # +key= adds a key that code does read: it takes effect
                    if not add and not has_config:
                        continue  # the configs live outside the scanned tree
                    if not add and _config_out_of_sight(result, str(site.detail.get("script") or "")):
                        continue  # (`python -m verl.trainer.main_ppo`: the program's config is another package's)
                    if not add and _settings_field(site.key, fields):
                        continue  # `trainer.placement.x=4` sets PlacementConfig.x of a structured config
                    why = (f"; `{add}` adds it as a new key that no code reads" if add
                           else "; Hydra rejects it, or it lands on a key nothing reads")
                    severity = {}
                    spelling = f"{add}{site.key}="
                ref = site.detail.get("reference")
                value = show(site.value) if site.value is not None else (f"${ref}" if ref else "?")
                yield self.finding(site, knob=knob.name, related=knob.sites, spelling=spelling,
                                   value=value, why=why, **severity)


def _settings_field(key: str, fields: dict[str, set[str]]) -> bool:
    """KEY's leaf is a field of a settings class named after KEY's section: structured configs
    (`trainer.placement.policy_num_gpus_per_node` -> PlacementConfig.policy_num_gpus_per_node,
    `megatron_config.x` -> MegatronConfig.x, `placement.num_nodes` -> SFTPlacementConfig.num_nodes)."""
    parts = key.lower().split(".")
    if len(parts) < 2:
        return False
    section = parts[-2].replace("_", "")
    # (SFTPlacementConfig is the `placement` section of SFT's settings)
    return any(name.endswith(section) or name[:-len(suffix)].endswith(section)
               for owner in fields.get(parts[-1], ()) for name in [owner.lower()]
               for suffix in SETTINGS_SUFFIXES if suffix and name.endswith(suffix))


def _config_out_of_sight(result, script: str) -> bool:
    """The Hydra program SCRIPT takes its config from out of the scanned tree: the program is
    not in it (`-m verl.trainer.main_ppo` of an installed package), or its `@hydra.main`
    names no config folder in it (`config_path=config_dir`, a package's path)."""
    if not script or script.endswith((".sh", ".bash")):
        return False
    program = next((f for f in sorted(result.meta) if f.endswith(".py") and _runs(script, f)), None)
    if program is None:
        return True  # (a Hydra program is always read: this one is another package's, or no Hydra program)
    entries = [e for e in (result.meta[program].get("hydra_main") or ()) if isinstance(e, dict)]
    return bool(entries) and all(not isinstance(e.get("config_path"), str) or ":" in e["config_path"]
                                 for e in entries)


def _runs(script: str, path: str) -> bool:
    """The launch script's program is PATH: `python train.py`, `python -m pkg.train`."""
    if not script:
        return False
    script = script.lstrip("./")
    module = script.replace(".", "/") + ".py" if not script.endswith(".py") else script
    return path == script or path.endswith("/" + script.rsplit("/", 1)[-1]) or path.endswith(module)

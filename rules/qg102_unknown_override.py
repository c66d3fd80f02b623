"""QG102 unknown-override: a launch script overrides a key that no config or parser defines."""

from auditor.lint.base import CONFIG_KINDS, Example, Rule, is_config_define, is_launch_override, show

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
an option's value, not a configuration key."""
    VALID = [
        Example({"train.py": _TRAIN, "run.sh": "#!/bin/bash\npython train.py --num-workers 8\n"},
                "the flag matches the parser"),
        Example({"train.py": _TRAIN, "run.sh": "#!/bin/bash\n# python train.py --num-worker 8\n"
                 "python train.py --num-workers 8\n"},
                "a commented-out flag does not count"),
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
    ]

    def check(self, result):
        has_parser = any(s.kind == "python" and s.detail.get("via") == "argparse" for s in result.sites)
        has_config = any(s.kind in CONFIG_KINDS and s.role == "define" for s in result.sites)
        python_files = {s.file for s in result.sites if s.kind == "python"}
        known_args = sorted(f for f, m in result.meta.items() if m.get("parse_known_args"))
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
                    why = (f"; `{add}` adds it as a new key that no code reads" if add
                           else "; Hydra rejects it, or it lands on a key nothing reads")
                    severity = {}
                    spelling = f"{add}{site.key}="
                ref = site.detail.get("reference")
                value = show(site.value) if site.value is not None else (f"${ref}" if ref else "?")
                yield self.finding(site, knob=knob.name, related=knob.sites, spelling=spelling,
                                   value=value, why=why, **severity)


def _runs(script: str, path: str) -> bool:
    """The launch script's program is PATH: `python train.py`, `python -m pkg.train`."""
    if not script:
        return False
    script = script.lstrip("./")
    module = script.replace(".", "/") + ".py" if not script.endswith(".py") else script
    return path == script or path.endswith("/" + script.rsplit("/", 1)[-1]) or path.endswith(module)

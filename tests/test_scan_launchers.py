"""scan: a command after a launcher is parsed like a plain python command (issue 13, item 7)."""

from __future__ import annotations

import json

CONFIG = "rollout:\n  num_envs: 8\n"
TRAIN = ("import argparse\nimport hydra\n\n\n@hydra.main(config_path='conf', config_name='config')\n"
         "def main(cfg):\n    n = cfg.rollout.num_envs\n")
LAUNCHES = [
    "python train.py rollout.num_env=32",
    "torchrun --nproc_per_node=2 --nnodes 1 train.py rollout.num_env=32",
    "python -m torch.distributed.run --nproc_per_node 2 train.py rollout.num_env=32",
    "accelerate launch --num_processes 2 --cpu train.py rollout.num_env=32",
    "deepspeed --num_gpus 2 train.py rollout.num_env=32",
    "mpirun -np 2 python train.py rollout.num_env=32",
    "mpiexec -n 2 --allow-run-as-root python train.py rollout.num_envs=32",  # spelt right: no finding
]


def test_overrides_after_each_launcher_count_and_launcher_flags_are_define_sites(cli, tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text(CONFIG)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run.sh").write_text("#!/bin/bash\nset -e\n" + "\n".join(LAUNCHES) + "\n")
    proc = cli("scan", str(tmp_path), "--format", "json")
    data = json.loads(proc.stdout)
    qg102 = sorted(f["line"] for f in data["findings"] if f["code"] == "QG102")
    assert qg102 == [3, 4, 5, 6, 7, 8], data["findings"]
    sites = [(s["key"], s["line"], s.get("value")) for k in data["knobs"] for s in k["sites"]
             if s["file"] == "run.sh" and s["role"] == "define"]
    for key, line in [("nproc_per_node", 4), ("nproc_per_node", 5), ("nnodes", 4), ("num_processes", 6),
                      ("num_gpus", 7), ("np", 8)]:
        assert any(k == key and ln == line for k, ln, _ in sites), (key, line, sites)

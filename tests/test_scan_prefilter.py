"""The prefilter keeps every file that can hold a knob site and skips the rest."""

from __future__ import annotations

import pytest

from auditor import scan, vocab

PREFILTER = scan.Prefilter(vocab.load())


@pytest.mark.parametrize("text", [
    "rollout:\n  num_workers: 4\n",
    "python train.py --num-workers 8\n",
    "NUM_WORKERS=8\n",
    "export OMP_NUM_THREADS=1\n",
    "rollout:\n  num_worker: 3   # misspelt: must still be parsed and reported\n",
    '{"aio": {"thread_count": 1}}',
    "parallel: 2\n",
    "--tensor-parallel-size 2\n",
    "actor.rollout.tensor_model_parallel_size=2\n",
    "pool = mp.Pool(4)\n",
    "with Pool(processes=n) as p:\n",
    "loader = DataLoader(ds)\n",
    "ray.init(address='auto')\n",
    "ref = task.options(**opts).remote()\n",
    "envs = gym.vector.SyncVectorEnv(fns)\n",
    "torch.set_num_threads(1)\n",
    "def f(threads=4):\n",
    # names built from a count word and a unit, outside the name list
    "env:\n  collector_env_num: 8\n",
    "numEnvs: 128\n",
    "NUM_NODES=2 torchrun train.py\n",
    "[vec]\ncpus-per-task = 4\n",
    "tp_size: 2\n",
    "ds = ds.map(f, num_proc=8)\n",
    # a library's parser flags and their readers (rules/consumers.yaml flag_adders)
    "parser = deepspeed.add_config_arguments(parser)\n",
    "engine, *_ = deepspeed.initialize(args=args, model=model)\n",
    "cfg = json.load(open(args.deepspeed_config))\n",
    "os.environ['XLA_FLAGS'] = '--xla_cpu_multi_thread_eigen=false'\n",
    # switches built like one: a file reading only such a switch must be parsed, or it looks unread
    "if cfg.generator.vllm_v1_disable_multiproc:\n",
    "use_single_gpu: true\n",
    # a flag that chooses where the work runs, which QG101 reports when the script never reads it
    "parser.add_argument('--gpu', type=int, help='gpu id')\n",
    "p.add_argument(\"-m\", \"--start-method\", default='spawn')\n",
    "parser.add_argument('--target_tp', default=1)\n",
])
def test_keeps(text):
    assert PREFILTER(text.encode())


@pytest.mark.parametrize("text", [
    "import os\nprint('hello')\n",
    "self.pool = nn.MaxPool2d(3)\n",
    "model = DataParallel(model)\n",
    "# every processed item is logged\n",
    "t = threading.Thread(target=f)\n",
    "lr: 0.001\nepochs: 3\n",
    "parallelism is great\n",
    "total_timesteps: 1000000\nbatch_size: 64\nhidden_size: 256\n",  # counts of steps and sizes, not units
    "gpu_name = fn_gpu(x)\n",
    "async def main():\n    await serve(is_distributed)\n",
    "parser.add_argument('--sampling_method', default='top_p')\n",
])
def test_skips(text):
    assert not PREFILTER(text.encode())


def test_project_extension_reaches_the_prefilter():
    assert not PREFILTER(b"rollout_shards: 4\n")
    extended = scan.Prefilter(vocab.load({"extra-knobs": ["rollout_shards"]}))
    assert extended(b"rollout_shards: 4\n")


def test_keywords_are_minimal():
    words = PREFILTER.keywords()
    assert "_workers" in words and "num_workers" not in words  # '_workers' already covers it
    assert len(words) == len(set(words))

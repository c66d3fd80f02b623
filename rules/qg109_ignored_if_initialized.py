"""QG109 ignored-if-initialized: backend init settings apply only if it is not already running."""

import re

from auditor.lint.base import Example, Rule

# a script's own entry point: a top-level main / run_* / train* function
_ENTRY = re.compile(r"^(main|run\w*|train\w*|launch\w*)$")


def _in_entry_point(site) -> bool:
    function = site.detail.get("function") or "<module>"
    return function == "<module>" or bool(_ENTRY.match(function))


_SETTINGS_WORDS = {"init", "config", "cfg", "kwargs", "args", "options", "settings", "params"}


def _names_init_settings(site) -> bool:
    """`ray_init_kwargs`, `self._ray_config`, `ray_kwargs.ray_init`: a mapping named as this backend's
    init settings is where its user puts the counts (`num_cpus`, `num_gpus`), not whatever a caller
    happens to pass."""
    words = [w for w in re.split(r"[^a-z0-9]+", str(site.key).rsplit(".", 1)[-1].lower()) if w]
    backend = str(site.detail.get("backend") or "").split(".", 1)[0].lower()
    if backend in site.file.split("/")[:-1]:
        return False  # the backend's own package (Ray's client server attaching to its cluster)
    settings = set(words) & _SETTINGS_WORDS
    return len(words) >= 2 and ("init" in settings or (backend in words and bool(settings)))


class IgnoredIfInitialized(Rule):
    CODE = "QG109"
    NAME = "ignored-if-initialized"
    SEVERITY = "warning"
    CONFIDENCE = "medium"
    MESSAGE = "{call} sets {knobs} only when the backend is not already running{why}"
    RATIONALE = """\
`if not ray.is_initialized(): ray.init(num_cpus=cfg.num_cpus)` (and
`ray.init(..., ignore_reinit_error=True)`) keep whatever cluster is already up: when a
notebook, a test fixture, a library or an earlier call started Ray first, the configured
`num_cpus` / `num_gpus` are silently ignored. The same holds for
`torch.distributed.init_process_group` behind `is_initialized()`, and for Megatron's
`initialize_model_parallel(tensor_model_parallel_size=...)` (and fairscale's, which LLaMA's
`Llama.build(model_parallel_size=...)` calls) behind it or behind
`model_parallel_is_initialized()`: a second engine of the process (a reference or critic model
with its own parallel strategy) keeps the first one's groups.

Check the running cluster's resources (`ray.cluster_resources()`) against the configuration,
or fail loudly when they differ. An init whose guard's other branch logs that the backend already
runs (`if mpu.model_parallel_is_initialized(): logger.info("already initialized")`) is not
reported: it is not silent. An init followed in the same function by such a check is
not reported, unless it passes `**kwargs`: the check covers the counts, not the rest of the
mapping (`runtime_env`, `address`), so it is a note. One that passes only `**kwargs` (which
may carry no count at all) outside a script's entry point (a top-level `main` / `run_*` /
`train*` function, module level) is a note, unless the mapping is named as the backend's init
settings (`ray_init_kwargs`, `ray_config`, `self._ray_init_kwargs`): that is where the
class's user puts `num_cpus` / `num_gpus` (distilabel's `RayPipeline`, rl_games' `RayVecEnv`,
torchrl's `RayLLMCollector`), and they are lost whenever Ray already runs. Not in the
backend's own package (Ray's client server attaching to the cluster it serves)."""
    VALID = [
        Example({"rllib.py": "import ray\n"
                             "def gen_trainer(params):\n"
                             "    if not ray.is_initialized():\n"
                             "        init_params = {'ignore_reinit_error': True, 'log_to_driver': params['verbose']}\n"
                             "        ray.init(**init_params)\n"},
                "**init_params built just above with no count among its keys"),
        Example({"init.py": "from megatron.core import parallel_state as mpu\n"
                            "def initialize(args):\n"
                            "    if mpu.model_parallel_is_initialized():\n"
                            "        logger.info('model parallel is already initialized')\n"
                            "    else:\n"
                            "        mpu.initialize_model_parallel(tensor_model_parallel_size=args.tp)\n"},
                "the branch taken when it already runs says so"),
        Example({"train.py": "import ray\nray.init(num_cpus=cfg.num_cpus)\n"}, "unconditional init"),
        Example({"pool.py": "import ray\n"
                            "def start(processes):\n"
                            "    if not ray.is_initialized():\n"
                            "        ray.init(num_cpus=processes)\n"
                            "    cpus = int(ray.cluster_resources()['CPU'])\n"
                            "    return processes or cpus\n"},
                "the running cluster's resources are read right after"),
        Example({"cluster.py": "import logging\nimport ray\nlogger = logging.getLogger(__name__)\n"
                               "def init_cluster(world_size, address=None):\n"
                               "    if not ray.is_initialized():\n"
                               "        ray.init(address=address, num_cpus=world_size)\n"
                              "    step_0 = prepare(0)\n"
                              "    step_1 = prepare(1)\n"
                              "    step_2 = prepare(2)\n"
                              "    step_3 = prepare(3)\n"
                              "    step_4 = prepare(4)\n"
                              "    step_5 = prepare(5)\n"
                              "    step_6 = prepare(6)\n"
                              "    step_7 = prepare(7)\n"
                              "    step_8 = prepare(8)\n"
                              "    step_9 = prepare(9)\n"
                              "    step_10 = prepare(10)\n"
                              "    step_11 = prepare(11)\n"
                              "    step_12 = prepare(12)\n"
                              "    step_13 = prepare(13)\n"
                              "    have = ray.cluster_resources().get('GPU', 0)\n"
                               "    if world_size > have:\n"
                               "        logger.warning('need %s GPUs, the cluster has %s', world_size, have)\n"},
                "the running cluster is checked further down the same function"),
    ]
    INVALID = [
        Example({"rllib.py": "import ray\n"
                             "def train(cfg):\n"
                             "    if not ray.is_initialized():\n"
                             "        init_params = {'num_cpus': cfg.num_cpus, 'log_to_driver': False}\n"
                             "        ray.init(**init_params)\n"},
                "**init_params built just above with a count among its keys",
                expect=[("rllib.py", 4)]),
        Example({"llama/generation.py": "import os\n"
                                        "from fairscale.nn.model_parallel.initialize import (\n"
                                        "    initialize_model_parallel, model_parallel_is_initialized)\n"
                                        "def build(ckpt_dir, model_parallel_size=None):\n"
                                        "    if not model_parallel_is_initialized():\n"
                                        "        if model_parallel_size is None:\n"
                                        "            model_parallel_size = int(os.environ.get('WORLD_SIZE', 1))\n"
                                        "        initialize_model_parallel(model_parallel_size)\n"},
                "fairscale's model-parallel groups sized only when none exist yet", expect=[("llama/generation.py", 8)]),
        Example({"engine.py": "import torch.distributed as dist\n"
                              "from megatron.core import parallel_state as mpu\n"
                              "class Engine:\n"
                              "    def create_process_group(self, strategy):\n"
                              "        if not dist.is_initialized():\n"
                              "            dist.init_process_group(backend='nccl')\n"
                              "            mpu.initialize_model_parallel(\n"
                              "                tensor_model_parallel_size=strategy.tensor_parallel_size,\n"
                              "                pipeline_model_parallel_size=strategy.pipeline_parallel_size)\n"},
                "Megatron's parallel groups sized only by the first engine of the process (one finding a call)",
                expect=[("engine.py", 8)]),
        Example({"train.py": "import ray\n"
                             "if not ray.is_initialized():\n"
                             "    ray.init(num_cpus=cfg.num_cpus, num_gpus=cfg.num_gpus)\n"},
                "guarded by is_initialized", expect=[("train.py", 3)]),
        Example({"train.py": "import ray\nray.init(num_cpus=cfg.num_cpus, ignore_reinit_error=True)\n"},
                "ignore_reinit_error keeps the first cluster", expect=[("train.py", 2)]),
        Example({"service.py": "import ray\n"
                               "class Service:\n"
                               "    def _ensure_ray(self, config):\n"
                               "        if not ray.is_initialized():\n"
                               "            ray.init(**config)\n"},
                "only **kwargs in a library helper, which may carry no count: a note", expect=[("service.py", 5)],
                severity="note"),
        Example({"pipeline.py": "import ray\n"
                                "class RayPipeline:\n"
                                "    def __init__(self, steps, ray_init_kwargs=None):\n"
                                "        self._ray_init_kwargs = ray_init_kwargs or {}\n"
                                "    def _init_ray(self):\n"
                                "        if not ray.is_initialized():\n"
                                "            ray.init(**self._ray_init_kwargs)\n"},
                "**kwargs named as Ray's init settings, in a library class: the user's counts go there",
                expect=[("pipeline.py", 7)], severity="warning"),
        Example({"ray/util/client/server.py": "import ray\n"
                                              "def serve(connection_str, ray_init_kwargs):\n"
                                              "    if not ray.is_initialized():\n"
                                              "        ray.init(connection_str, **ray_init_kwargs)\n"},
                "the backend's own package attaching to the cluster it serves: a note",
                expect=[("ray/util/client/server.py", 4)], severity="note"),
        Example({"main_ppo.py": "import ray\n"
                                "def run_ppo(config):\n"
                                "    if not ray.is_initialized():\n"
                                "        ray.init(**config.ray_init)\n"},
                "**kwargs from the configuration in a script's entry point", expect=[("main_ppo.py", 4)],
                severity="warning"),
        Example({"tuner.py": "import ray\n"
                             "def run_ray(ray_args):\n"
                             "    if not ray.is_initialized():\n"
                             "        ray.init(**ray_args.ray_init_kwargs)\n"
                             "    devices = int(ray.cluster_resources().get('GPU', 0))\n"
                             "    return devices\n"},
                "**kwargs with a resources read afterwards: runtime_env and address are still dropped (a note)",
                expect=[("tuner.py", 4)], severity="note"),
    ]

    def check(self, result):
        calls: dict[tuple, list] = {}
        for site in result.sites:
            if site.role != "consume" or site.kind != "python":
                continue
            d = site.detail
            guard = d.get("guard") or d.get("condition") or ""
            reinit = (d.get("options") or {}).get("ignore_reinit_error") in (True, "True")
            if "is_initialized" not in str(guard) and not reinit:
                continue
            if d.get("omitted") and d.get("via") != "helper":
                continue  # a count the call leaves out is not one it sets and loses
            if d.get("guard_announced"):
                continue  # the branch taken when it already runs says so (`logger.info("already initialized")`)
            if d.get("splat") and d.get("mapping_known"):
                continue  # `**init_params` built above with its keys: a count among them is a site of its own
            if d.get("checked_after") and not d.get("splat"):
                continue  # the running backend's resources are read afterwards: checked
            # one call's counts, each on a line of its own, are one finding
            calls.setdefault((site.file, d.get("function"), d.get("backend"), str(guard)), []).append(site)
        for (_file, _function, backend, _guard), sites in calls.items():
            guard = sites[0].detail.get("guard") or sites[0].detail.get("condition")
            why = (f" (`{guard}`); an already-running instance keeps its own resources"
                   if guard and "is_initialized" in str(guard)
                   else " (ignore_reinit_error=True); a second init keeps the first one's resources")
            keys = ", ".join(sorted({f"**{s.detail.get('expr', s.key)}" if s.detail.get("splat")
                                     else _set_name(s) for s in sites}))
            # **kwargs alone may carry no count; in a script's entry point, or named as the
            # backend's init settings, they are its configuration; in a library helper otherwise
            # whatever its caller passes (a note)
            only_splat = all(s.detail.get("splat") and not _names_init_settings(s) for s in sites) \
                and not _in_entry_point(sites[0])
            # a resources read afterwards covers the counts, not what else the mapping carries
            # (runtime_env, address): those are dropped all the same (a note)
            checked = sites[0].detail.get("checked_after")
            if checked:
                why += (f"; `{checked}` is read afterwards, which covers the counts but not the other "
                        f"settings the mapping carries (runtime_env, address)")
            yield self.finding(sites[0], knob=sites[0].key, related=sites,
                               call=f"{'.'.join((backend or 'init').split('.')[-2:])}()", knobs=keys, why=why,
                               **({"severity": "note", "confidence": "low"} if only_splat or checked else {}))


def _set_name(site) -> str:
    """What the call sets, as its caller names it: `model_parallel_size (falling back to
    WORLD_SIZE)` for a parameter the function reads the environment for when left unset."""
    leaf = site.key.rsplit(".", 1)[-1]
    expr = str(site.detail.get("expr") or "")
    flow = site.detail.get("flow") or ()
    if flow and flow[0].get("kind") == "param" and expr.isidentifier() and expr != leaf:
        return f"{expr} (falling back to {leaf})"
    return leaf

"""Idioms that look like a silent fallback but are not one: shared by the rules.

Each predicate reads a site's facts (its detail, as the extractor recorded it) and answers
one question a reviewer would ask before fixing the finding. Rules call them; a flow-based
rule can call them on the sites of a trace the same way. See docs/rules.md, "Precision".
"""

from __future__ import annotations

import ast
import operator
import re
from functools import lru_cache

from auditor.model import Site

_DEBUG = re.compile(r"\b\w*(debug|sanity|smoke|dry_?run|fast_dev_run|overfit_batches|profil\w*|"
                    r"deterministic|single_process|single_env|serial|test_mode|local_mode|play_only|eval_only)\w*\b", re.IGNORECASE)
# a condition saying the parallel backend is absent in this branch
_NO_BACKEND = re.compile(
    r"not\s*\(?\s*[\w.]*(is_initialized|is_available|is_distributed|distributed|accelerator|dist\b|ddp|"
    r"deepspeed|fsdp|mpi|horovod|process_group|world|rank|mesh|ray|cuda|gpu|parallel_state|cluster|multi_gpu)"
    r"|\b[\w.]*(rank|world_size|process_group|accelerator|mesh|device_mesh|dist\w*|backend|group)\s+is\s+None\b"
    r"|['\"](RANK|LOCAL_RANK|WORLD_SIZE|SLURM_\w+|OMPI_\w+|PMI_\w+)['\"]\s+not\s+in\b"
    r"|\bnot\s*\(\s*['\"](RANK|LOCAL_RANK|WORLD_SIZE|SLURM_\w+|OMPI_\w+|PMI_\w+)['\"]\s+in\b"
    r"|\bnot\s*\(\s*hasattr\("  # num_envs = env.num_envs if hasattr(env, "num_envs") else 1
    r"|\bdevice(_type)?\s*==\s*['\"]cpu['\"]|\bcpu_only\b|\buse_cpu\b|\bno_cuda\b",
    re.IGNORECASE)


def is_debug_condition(cond: str | None) -> bool:
    """`if args.debug:` / `if cfg.sanity_check:` / `if fast_dev_run:` / `if _PLAY_ONLY.value:` (a
    policy watched in one env): a mode the user chose."""
    if not cond:
        return False
    return any(_DEBUG.search(clause) and not clause.startswith("not (")
               for clause in (_double_negation(c) for c in split_clauses(cond)))


# a function named for a mode the user runs to debug (`run_example_debug`, `smoke_test`)
_DEBUG_FUNCTION = re.compile(r"(?:^|_)(?:debug|sanity|smoke|dry_?run)(?:_|$)", re.IGNORECASE)


def is_debug_function(qualname: str | None) -> bool:
    """The function a site is in is named for debugging (`run_example_debug`): what it
    chooses, it chooses for that mode."""
    return bool(qualname) and _DEBUG_FUNCTION.search(str(qualname).rsplit(".", 1)[-1]) is not None


def _double_negation(clause: str) -> str:
    m = re.fullmatch(r"not \(\s*not\s+(.+)\)", clause.strip())
    return m.group(1).strip() if m else clause.strip()


def is_no_backend_branch(site: Site) -> bool:
    """`world_size = 1` where there is no distributed rank, no accelerator, or only the CPU.

    Only counts of 0 or 1: the branch says there is nothing to run in parallel on."""
    cond = site.detail.get("condition") or ""
    if not cond or not _at_most_one(site.value):
        return False
    return any(_NO_BACKEND.search(clause) for clause in split_clauses(cond))


def fills_a_missing_value(cond: str, name: str) -> bool:
    """`if num_workers is None: num_workers = 1`, or the last branch of a default chain:
    `if "OMP_NUM_THREADS" in os.environ: ... elif ...: n = 1` sets a default for a missing value;
    so does `if num_cpu == "auto": num_cpu = cpu_count()`, where the user asked for it, and
    `if self.tp_size == -1: self.tp_size = 1`, where -1 marks a field left unset. Not the
    else branch of such a test (`not (max_workers is None)`): there the user gave a value."""
    leaf = name.rsplit(".", 1)[-1]
    # Every form names the leaf: without it (checked exactly only in ASCII, where IGNORECASE
    # is plain lower-casing) there is no regex to build, the dearest step of the rules.
    if cond.isascii() and leaf.isascii() and leaf.lower() not in cond.lower():
        return False
    return bool(_missing_value_regex(leaf).search(_given_value_regex(leaf).sub("", cond)))


@lru_cache(maxsize=256)
def _given_value_regex(leaf: str) -> re.Pattern:
    return re.compile(rf"not\s*\(\s*[\w.]*\b{re.escape(leaf)}\s+is\s+None\s*\)", re.IGNORECASE)


@lru_cache(maxsize=256)
def _missing_value_regex(leaf: str) -> re.Pattern:
    n = re.escape(leaf)
    return re.compile(rf"\b{n}\s+is\s+None\b|not\s*\(\s*[\w.]*\b{n}\s+is\s+not\s+None\s*\)"
                      rf"|^\s*not\s+[\w.]*\b{n}\s*$"  # if not num_workers:
                      rf"|^\s*not\s*\(\s*[\w.]*\b{n}\s*\)\s*$"  # else of `args.jobs if args.jobs else ...`
                      rf"|['\"](\w+_)?{n}['\"]\s+not\s+in\b"  # if "num_cpus" not in opts:
                      rf"|not\s*\(\s*['\"](\w+_)?{n}['\"]\s+in\b"  # else of if "OMP_NUM_THREADS" in os.environ
                      rf"|not\s*\(\s*[\w.]*getenv\(\s*['\"](\w+_)?{n}['\"]"  # else of if os.getenv("N"):
                      rf"|['\"]{n}['\"]\s*\)\s+is\s+None\b"
                      # if num_cpu == "auto": the user asked for the computed value
                      rf"|[\w.]*\b{n}\s*==\s*['\"](auto|max|all)['\"]"
                      # if self.tp_size == -1: the field's "not set" marker (FastVideo's -1 defaults)
                      rf"|[\w.]*\b{n}\s*==\s*-\s*1\b(?!\.)", re.IGNORECASE)


def is_logged(site: Site) -> str | None:
    """The log call that announces this override in its own block (loud, not silent)."""
    return site.detail.get("logged")


def is_initialised_then_set(site: Site) -> bool:
    """`self.world_size = 1` followed later in the function by the real assignment.

    Unconditional only: a forced value under a condition that is reassigned later still
    ran in between, unless it was saved for restoring (is_temporary)."""
    d = site.detail
    return d.get("how") == "literal" and bool(d.get("reassigned")) and (not d.get("condition") or bool(d.get("saved_in")))


def is_temporary(site: Site) -> str | None:
    """`n = self.args.n; self.args.n = 0` (restored after use): the local keeping the value."""
    return site.detail.get("saved_in")


_SERIAL_CHOICE = re.compile(r"==\s*['\"](serial|sync|dummy|sequential|local)['\"]|"
                            r"['\"](serial|sync|dummy|sequential|local)['\"]\s*==|\.(DUMMY|SERIAL|SYNC)\b")


def serial_only_on_request(site: Site) -> bool:
    """`vec = Async if use_async else Sync` (or `if asynchronous: ... else: Sync(...)`) with
    the flag True by default: the serial backend runs only when the caller asks for it."""
    d = site.detail
    chosen = f"{d.get('backend_condition') or ''} and {d.get('condition') or ''}"
    if _SERIAL_CHOICE.search(chosen):  # `elif env_type == "serial":` - the user named the serial one
        return True
    defaults = list((d.get("choice_default") or {}).values())
    negated = (d.get("backend_condition") or d.get("choice_condition") or "").startswith("not (")
    # serial under `not (flag)` while flag defaults to True, or under `flag` while it defaults to False
    return bool(defaults) and defaults[0] is negated


_UNKNOWN = object()
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _evaluate(condition: str, values: dict) -> object:
    """CONDITION's value with the names of VALUES bound (`len(x)` to x's), or _UNKNOWN."""
    try:
        tree = ast.parse(condition.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return _UNKNOWN

    def ev(n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, (ast.Name, ast.Attribute)):
            return values.get(ast.unparse(n), _UNKNOWN)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and len(n.args) == 1:
            return values.get(ast.unparse(n.args[0]), _UNKNOWN)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            v = ev(n.operand)
            return _UNKNOWN if v is _UNKNOWN else not v
        if isinstance(n, ast.BoolOp):
            got = [ev(v) for v in n.values]
            decisive = False if isinstance(n.op, ast.And) else True
            if any(v is not _UNKNOWN and bool(v) is decisive for v in got):
                return decisive
            return _UNKNOWN if any(v is _UNKNOWN for v in got) else not decisive
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _COMPARE:
            left, right = ev(n.left), ev(n.comparators[0])
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                return _COMPARE[type(n.ops[0])](left, right)
            except TypeError:
                return _UNKNOWN
        return _UNKNOWN

    return ev(tree)


def runs_for_many_by_default(site: Site) -> bool | None:
    """Whether the branch SITE stands in runs for more than one item when the enclosing
    function's parameters keep their defaults (`if num_env == 1 or not use_subprocess:` with
    `use_subprocess=False`: yes; `if not (not force_dummy and num_env > 1)` with
    `force_dummy=False`: no); None when the test is about anything else."""
    d = site.detail
    condition = str(d.get("condition") or "")
    if not condition or not d.get("cond_defaults"):
        return None
    values = dict(d["cond_defaults"])
    for k in ("expr", "ref"):
        if d.get(k):
            values.setdefault(str(d[k]), 2)
    values.setdefault(site.leaf, 2)
    got = _evaluate(condition, values)
    return None if got is _UNKNOWN else bool(got)


_RANGE_OF = re.compile(r"\brange\(\s*([A-Za-z_][\w.]*)\s*\)")


def is_guarded_single(site: Site) -> bool:
    """`assert num_envs == 1` before the serial backend: one environment, on purpose. Also the
    serial branch of a test on the count itself (`if len(envs) > 1: SubprocVecEnv(envs) else:
    DummyVecEnv(envs)`): it runs only for one."""
    if site.detail.get("asserted_one"):
        return True
    by_default = runs_for_many_by_default(site)
    if by_default is not None:
        return not by_default
    condition = str(site.detail.get("condition") or "")
    names = {str(site.detail.get(k)) for k in ("expr", "ref") if site.detail.get(k)} | {site.leaf}
    # `DummyVectorEnv([make for _ in range(env_num)])` under `if env_num == 1:`: the list's length
    names |= set(_RANGE_OF.findall(str(site.detail.get("expr") or "")))
    # `num_env == 1 or not use_subprocess`: the other test lets the serial branch run for many
    return all(any(re.search(rf"not \({counted}\s*(>\s*1|>=\s*2)\)", part) or
                   re.search(rf"{counted}\s*(==\s*1|<=\s*1|<\s*2)(?!\d)", part)
                   for counted in (rf"(len\(\s*{re.escape(name)}\s*\)|\b{re.escape(name)}\b)" for name in names))
               for part in condition.split(" or ")) if condition else False


NATIVE_HINTS = ("brax", "isaacgym", "isaaclab", "envpool", "gymnax", "mujoco_playground", "mjx", "jumanji",
                "madrona", "mani_skill", "maniskill", "warp", "craftax", "navix", "xminigrid", "jax")


def natively_vectorized(site: Site, meta: dict | None) -> bool:
    """The file drives an environment library that vectorizes by itself (GPU / C++):
    one serial sampler worker in front of it is the intended setting."""
    if meta and meta.get("native_vector_envs"):
        return True
    path = site.file.lower()
    return any(re.search(rf"(^|[/_\-.]){h}($|[/_\-.])", path) for h in NATIVE_HINTS)


def files_starting_processes(sites) -> set[str]:
    """Files that start worker processes (`multiprocessing.Process`, `Pool`, `mp.spawn`,
    subprocess vector envs): an environment variable set there is inherited by the workers."""
    from auditor.lint.base import backend_entry, backend_kind

    return {s.file for s in sites if s.role == "consume" and s.kind == "python"
            and (backend_kind(s) == "processes" or backend_kind(s) == "envs" and s.detail.get("serial") is False)
            and not backend_entry(s).get("in_process")}


_CONFIG_ROOT = re.compile(r"^(self|cls|cfg\w*|conf\w*|config\w*|args|opt\w*|params?|settings?|hparams?|flags|"
                          r"\w*kwargs|\w*_(cfg|conf|config|args|opts?))$", re.IGNORECASE)


def is_config_name(name: str) -> bool:
    """cfg, args, turbo_config, engine_kwargs: a name that says it holds configuration."""
    return bool(_CONFIG_ROOT.match(name)) and name not in ("self", "cls")


_CONFIG_CLASS = re.compile(r"(config|conf|cfg|args|arguments|hparams|hyperparameters|settings|options)$", re.IGNORECASE)


def is_config_class(name: str) -> bool:
    """Config, Arguments, TrainArgs, PPOHParams: a class that says it holds a run's settings."""
    return bool(_CONFIG_CLASS.search(name.rsplit(".", 1)[-1]))


_EVAL_FUNCTION = re.compile(r"(^|_)(eval|evaluate|evaluation|enjoy|render|play|visuali[sz]e|record|demo)(_|$)",
                            re.IGNORECASE)


def is_eval_path(site: Site) -> bool:
    """One environment forced in an evaluation / rendering function (`def
    _make_eval_env_kwargs`, `def enjoy`): a deliberate setting, not a fallback. Loader
    workers forced to 0 there are not covered: a slow evaluation is still a fallback."""
    fn = (site.detail.get("function") or "").rsplit(".", 1)[-1]
    return "env" in site.leaf.lower() and bool(_EVAL_FUNCTION.search(fn)) and site.detail.get("how") == "literal" \
        and _at_most_one(site.value)


_EVAL_BINDING = re.compile(r"(^|_)(eval|evaluation|test|val|valid|validation|render|video|viz)(_|$)", re.IGNORECASE)


def bound_for_evaluation(site: Site) -> bool:
    """The backend's value is assigned to an evaluation name (`eval_env = ParallelEnv(1, ...)`,
    `test_envs`, `val_loader`): one env or worker there is a deliberate size."""
    return bool(_EVAL_BINDING.search(str(site.detail.get("bound_to") or "")))


_PARALLEL_SIZE = re.compile(r"^(dp|tp|pp|cp|ep|sp|\w*_(parallel_size|degree))$", re.IGNORECASE)


# a count of the items a pool works on, by its name (`num_clients = len(self.clients)`, then
# `min(num_clients, self.config.max_workers)`): never more workers than items
# (or episodes to run: `min(cfg.eval.num_procs, cfg.eval.n_eval)`, never more envs than episodes)
_WORK_COUNT = re.compile(r"(?:num|n)_(?:clients|files|paths|tasks|items|prompts|samples|queries|requests|examples"
                         r"|documents|docs|urls|batches|inputs|episodes|evals?|eval_episodes|test_episodes|trials)"
                         r"|(?:clients|files|paths|tasks|items|prompts|samples|queries|requests|inputs|episodes)"
                         r"_(?:num|count|len)|(?:eval|test)_episodes", re.IGNORECASE)


def is_capped_by_work(site: Site) -> bool:
    """`min(num_threads, len(paths))`: never more workers than items to work on. Also GPUs per
    node capped by the GPUs the parallel layout needs (`min(args.gpus_per_node, dp * pp * tp)`):
    never more GPUs on a node than the whole job uses."""
    d = site.detail
    cap = d.get("cap") or ""
    if d.get("how") == "max" and not d.get("cpu_count") and \
            re.fullmatch(r"\s*max\(\s*min\([^()]*,\s*len\([^()]*\)\s*\)\s*,\s*1\s*\)\s*", d.get("expr") or ""):
        return True  # max(min(num_workers, len(files)), 1): at least one, never more than the work
    if d.get("how") != "min" or d.get("cpu_count"):
        return False
    if re.fullmatch(r"\s*len\(.+\)\s*", cap) or _WORK_COUNT.fullmatch(cap.strip().rsplit(".", 1)[-1]):
        return True
    factors = [f.strip().rsplit(".", 1)[-1] for f in cap.split("*")]
    return len(factors) >= 2 and all(_PARALLEL_SIZE.match(f) for f in factors)


def is_reduction(site: Site) -> bool:
    """`world_size = max(world_size)` / `max(per_group_counts)`: one collection reduced to a
    number (a size read back from a checkpoint), not a cap on a configured value."""
    d = site.detail
    if d.get("how") not in ("min", "max"):
        return False
    m = re.fullmatch(r"\s*(min|max)\((.*)\)\s*", d.get("expr") or "", re.DOTALL)
    return bool(m) and len(split_args(m.group(2))) == 1 and "*" not in m.group(2)


def split_args(text: str) -> list[str]:
    """Top-level comma-separated parts of an argument list."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (x.strip() for x in parts) if p]


def is_derived_size(site: Site) -> bool:
    """A data-parallel size derived from a device mesh or other parallel sizes:
    `num_processes // submesh_tp_size`, `world // (tp * pp)`: arithmetic, not a fallback."""
    d = site.detail
    if d.get("how") != "expression":
        return False
    text = f"{d.get('expr') or ''} {d.get('condition') or ''}"
    return bool(re.search(r"mesh|\btp\b|tp_size|pp_size|tensor_parallel|pipeline_parallel|context_parallel|"
                          r"\bdp_size\b|sequence_parallel|ulysses", text, re.IGNORECASE))


def restates_condition(site: Site) -> bool:
    """`if loader.persistent_workers: params["persistent_workers"] = True`: the value is
    copied, not changed."""
    d = site.detail
    clauses = split_clauses(d.get("condition") or "")
    if not clauses or d.get("how") != "literal":
        return False
    leaf = re.escape(site.leaf)
    last = clauses[-1]
    if site.value is True and re.fullmatch(rf"[\w.]*\b{leaf}", last):
        return True
    m = re.fullmatch(rf"[\w.]*\b{leaf}\s*==\s*(.+)", last)
    return bool(m) and m.group(1).strip() == str(site.value)


def is_computed_local(site: Site) -> bool:
    """A local computed from runtime objects, not a configured value being capped:
    `n_render = min(max_rendered - done, env.num_envs)` reads the env's count, not a setting."""
    d = site.detail
    target = d.get("target") or ""
    if d.get("how") not in ("min", "max") or d.get("cpu_count") or not target.isidentifier():
        return False
    if target.lower() == site.leaf.lower():
        return False
    expr = d.get("expr") or ""
    refs = re.findall(rf"\b([A-Za-z_]\w*)(?:\.\w+|\[[^\]]*\])*\.{re.escape(site.leaf)}\b", expr)
    return bool(refs) and not any(_CONFIG_ROOT.match(r) for r in refs)


_TARGET_PARTS = re.compile(r"[A-Za-z_]\w*")


def may_hold(site: Site, define: Site) -> bool:
    """Can the override's target be the configured key at all? `player.num_envs = 1` writes
    an attribute of a player object, not `env.num_envs` of the configuration; a local, self,
    a config-like name (cfg, args, ...) or a path through the key's section can."""
    target = site.detail.get("target") or ""
    if not target or target.isidentifier():
        return True
    parts = [p.lower() for p in _TARGET_PARTS.findall(target.replace("'", " ").replace('"', " "))]
    if not parts or parts[0] in ("self", "cls") or _CONFIG_ROOT.match(parts[0]):
        return True
    sections = {p.lower() for p in define.key.split(".")[:-1]}
    return bool(sections & set(parts[:-1]))


_NO_WORKERS = re.compile(r"\b[\w.]*(num_workers|n_workers|workers)\s*(==\s*0|<=\s*0|<\s*1)(?!\d)"
                         r"|^\s*not\s+[\w.]*(num_workers|n_workers)\s*$", re.IGNORECASE)
# options that only mean something while worker processes exist
_WORKER_OPTIONS = re.compile(r"persistent_workers|prefetch_factor|multiprocessing_context|worker_init", re.IGNORECASE)


def is_option_without_workers(site: Site) -> bool:
    """`if num_workers == 0: persistent_workers = False`: with no workers the option has no
    meaning (DataLoader rejects it), so turning it off is required, not a fallback."""
    if not _WORKER_OPTIONS.search(site.leaf):
        return False
    return any(_NO_WORKERS.search(clause) for clause in split_clauses(site.detail.get("condition") or ""))


def is_config_in_code(site: Site) -> int:
    """`config.train.num_data_workers = 2` among many literal settings of one object in one
    function: a configuration written in Python (an experiment script), not an override of
    one setting. The number of settings, or 0."""
    return int(site.detail.get("settings_written") or 0)


def runs_in_worker(site: Site) -> bool:
    """A loader or pool inside a function that is itself a worker (a process / thread
    target, a pool's initializer, or one taking a worker id): 0 or 1 there often avoids
    nested workers on purpose."""
    return bool(site.detail.get("in_worker"))


def is_sentinel_default(value) -> bool:
    """`os.getenv("WORLD_SIZE", "")` (then `.isdigit()`), `.get("n", "auto")`, the
    `'unset'` of a log line: a marker for "absent" or "compute it", not a count that runs."""
    return isinstance(value, str) and value.strip().strip("'\"<>()").strip().lower() in (
        "", "none", "null", "auto", "unset", "not set", "n/a", "na", "unknown", "?", "-")


def fallback_tested_for_presence(site: Site) -> bool:
    """`int(os.getenv("NUM_NODES", 0)) > 0`, on the read's line or in the condition it stands
    under: the fallback is compared with itself, a test of whether the value is set at all, not
    a count (litdata falls back to 0 there and to 1 where it counts nodes)."""
    fallback = re.escape(str(site.default))
    read = rf"""\.?(?:getenv|get)\(\s*["']{re.escape(site.leaf)}["']\s*,\s*["']?{fallback}["']?\s*\)"""
    tested = re.compile(rf"{read}\s*\)?\s*(?:>|!=|==|<=|<|>=)\s*{fallback}(?![\w.])")
    return any(tested.search(text) for text in (site.source, str(site.detail.get("condition") or "")))


def fallback_fails_loudly(site: Site) -> bool:
    """`n = cfg.get("n_gpus", 0)` then `assert n > 0`: a missing key stops the run."""
    return bool(site.detail.get("fallback_rejected"))


def split_clauses(cond: str) -> list[str]:
    """The clauses of an extractor condition (`a and not (b) and c`), if/elif stripped."""
    cond = re.sub(r"^\s*(el)?if\s+|:\s*$", "", cond or "").strip()
    parts, depth, start, i = [], 0, 0, 0
    while i < len(cond):
        c = cond[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and cond.startswith(" and ", i):
            parts.append(cond[start:i])
            start = i + 5
            i += 4
        i += 1
    parts.append(cond[start:])
    return [p.strip() for p in parts if p.strip()]


_MAIN_GUARD = re.compile(r"""^__name__\s*==\s*['"]__main__['"]$""")


def is_main_guard(clause: str) -> bool:
    """`__name__ == "__main__"`: where a script runs, not a condition on the value."""
    return bool(_MAIN_GUARD.match(clause.strip()))


def short_condition(cond: str, limit: int = 70) -> str:
    """A condition as a reviewer reads it: the innermost clause, with `...` for the rest.
    The `if __name__ == "__main__":` guard is dropped (it is where a script runs)."""
    clauses = [c for c in split_clauses(cond) if not is_main_guard(c)] or split_clauses(cond)
    text = " and ".join(clauses)
    if len(text) <= limit:
        return text
    kept = [clauses[-1] if len(clauses[-1]) <= limit else clauses[-1][:limit - 3] + "..."]
    for clause in reversed(clauses[:-1]):  # the innermost clauses, as many as fit
        if len(" and ".join([clause, *kept])) > limit:
            break
        kept.insert(0, clause)
    return ("... and " if len(kept) < len(clauses) else "") + " and ".join(kept)


def _at_most_one(value) -> bool:
    try:
        return int(value) <= 1
    except (TypeError, ValueError):
        return False


@lru_cache(maxsize=None)
def set_for_programs(key: str) -> bool:
    """An environment variable that launchers set, or libraries read, for the programs they
    start (`WORLD_SIZE`, `SLURM_NTASKS`, `OMP_NUM_THREADS`: rules/knobs.yaml `set_for_programs`)."""
    name = key.rsplit(".", 1)[-1].upper()
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in _launcher_env())


@lru_cache(maxsize=1)
def _launcher_env() -> tuple[str, ...]:
    from auditor import catalogue

    return tuple(catalogue.data("knobs.yaml").get("set_for_programs") or ())


# a settings object or its file named as such (`config_path`, `args.config`, `cfg`), not a
# mapping of keyword arguments (`loader_kwargs is None` fills in one call's defaults)
_CONFIG_NAME = r"(?:\w+\.)*(?:\w+_)?(?:config|cfg|conf|settings?|options?|args|params)(?:_\w+)?"
_NOTHING_CONFIGURED = re.compile(rf"^not\s+{_CONFIG_NAME}$|^{_CONFIG_NAME}\s+is\s+None$", re.IGNORECASE)


def nothing_configured(cond: str | None) -> bool:
    """`if not config_path:` / `if cfg is None:` before a call of literals: the defaults a
    program fills in when the user gave no configuration, not a setting dropped."""
    return bool(cond) and any(_NOTHING_CONFIGURED.search(c.strip()) for c in split_clauses(cond))

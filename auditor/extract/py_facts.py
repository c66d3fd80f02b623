"""Facts the rules need that span a file: worker entry points and what a pool runs.

Collected during the single visitor pass, resolved once at the end (functions may be
defined after the call that hands them to a worker).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from auditor import catalogue

ENV_STEP = {"step", "reset", "step_async", "step_wait", "rollout", "render"}
# names other objects share (`ContextVar.reset(token)`): an env's only when the receiver says env
ENV_RESET = {"reset", "render"}
PROCESS_START = {"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
                 "subprocess.check_output", "os.system", "os.popen", "asyncio.create_subprocess_exec",
                 "asyncio.create_subprocess_shell", "multiprocessing.Process", "Popen"}
IO_NAMES = {"open", "read", "write", "urlopen", "urlretrieve", "download", "download_file", "upload",
            "upload_file", "save", "load", "dump", "read_text", "write_text", "read_bytes", "write_bytes",
            "copy", "copyfile", "copy2", "copytree", "move", "remove", "unlink", "rmtree", "makedirs",
            "listdir", "scandir", "glob", "iterdir", "imread", "imwrite", "read_csv", "to_csv", "to_parquet",
            "read_parquet", "fetch", "request", "post", "put", "send", "recv", "sendall", "connect",
            "get_object", "put_object", "hf_hub_download", "snapshot_download", "sleep", "flush"}
IO_PREFIXES = ("requests.", "urllib.", "http.", "httpx.", "aiohttp.", "boto3.", "botocore.", "shutil.",
               "json.", "pickle.", "socket.", "PIL.", "cv2.", "imageio.", "huggingface_hub.", "smart_open.",
               "fsspec.", "google.cloud.", "os.path.", "pathlib.", "gzip.", "zipfile.", "tarfile.", "time.sleep")


# Methods that hand a pool work to run (`pool.map(f, items)`, `executor.submit(f, x)`).
POOL_METHODS = frozenset({"submit", "map", "imap", "imap_unordered", "starmap", "map_async", "starmap_async",
                          "apply", "apply_async"})

# Method calls that run training in the calling function (`trainer.train()`, `agent.learn()`,
# `model.fit()`): a thread setting there acts on the process that does the math.
TRAINING_CALLS = {"train", "learn", "fit", "train_loop", "run_training"}
# Calls that compute or apply gradients: the model's math runs in the calling process
GRADIENT_CALLS = {"backward", "apply_gradients"}


def _within(fn: str, names) -> bool:
    """FN is one of NAMES or a function nested in one."""
    return any(fn == n or fn.startswith(n + ".") for n in names)


@dataclass
class Facts:
    workers: set[str] = field(default_factory=set)  # qualnames whose body runs in a worker
    closures: set[str] = field(default_factory=set)  # qualnames whose nested functions run in a worker
    calls: dict[str, set[str]] = field(default_factory=dict)  # function qualname -> called names
    pool_sites: dict[int, list] = field(default_factory=dict)  # id(pool call) -> its consume sites
    pool_names: dict[tuple[str, str], int] = field(default_factory=dict)  # (function, var) -> id(pool call)
    # (function, pool variable or None, id(receiver), submitted callable node, class)
    pool_calls: list[tuple] = field(default_factory=list)
    threads: set[str] = field(default_factory=set)  # qualnames run as a threading.Thread target
    copies: set[str] = field(default_factory=set)  # worker qualnames started inside a loop: N processes

    def add_thread(self, scope: str, cls: str, ref: ast.AST) -> None:
        self.threads.update(candidates(scope, cls, ref))

    def add_worker(self, scope: str, cls: str, ref: ast.AST, closures: bool = False, copies: bool = False) -> None:
        for name in candidates(scope, cls, ref):
            (self.closures if closures else self.workers).add(name)
            if copies:
                self.copies.add(name)

    def finish(self, sites: list) -> None:
        self.resolve_pools()
        for site in sites:
            fn = site.detail.get("function", "")
            if self.in_worker(fn):
                site.detail["in_worker"] = True
                if _within(fn, self.copies):
                    site.detail["worker_copies"] = True  # one of N processes started in a loop
            if site.role == "consume" and "trains" not in site.detail:
                trains = sorted(n for n in self.calls.get(fn, ()) if n.rsplit(".", 1)[-1] in TRAINING_CALLS)
                if trains:
                    site.detail["trains"] = trains[0]
            if _within(fn, self.threads):
                # a thread of the calling process: what it sets process-wide (torch's intra-op
                # threads) it sets for the whole process, the learner included
                site.detail["in_thread"] = True

    def in_worker(self, fn: str) -> bool:
        """FN is a worker's entry point or nested in one (or in a closure that runs in one)."""
        return _within(fn, self.workers) or any(fn.startswith(c + ".") for c in self.closures)

    def main_process_math(self, module_calls: set[str]) -> dict | None:
        """The first function of this file that computes gradients (`loss.backward()`,
        `apply_gradients`, `jax.value_and_grad`) in the process that runs the file: neither a
        worker's entry point, nor nested in one, nor called (within the file) from one. A
        function run as a thread target is this process (monobeast's learner threads)."""
        by_leaf: dict[str, list[str]] = {}
        for q in self.calls:
            by_leaf.setdefault(q.rsplit(".", 1)[-1], []).append(q)
        in_workers = set()
        todo = [q for q in self.calls if self.in_worker(q)]
        while todo:
            q = todo.pop()
            if q in in_workers:
                continue
            in_workers.add(q)
            for token in self.calls.get(q, ()):
                todo += by_leaf.get(token.rsplit(".", 1)[-1], ())
        for q, calls in [("<module>", module_calls), *sorted(self.calls.items())]:
            math = sorted(t for t in calls if _computes_gradients(t))
            if math and q not in in_workers:
                return {"function": q, "call": math[0]}
        return None

    def resolve_pools(self) -> None:
        uses: dict[int, list[tuple[str, str]]] = {}
        for scope, var, receiver_id, fn_node, cls in self.pool_calls:
            pool_id = receiver_id if receiver_id in self.pool_sites else None
            if pool_id is None and var is not None:
                pool_id = self.pool_names.get((scope, var))
            if pool_id is None or pool_id not in self.pool_sites:
                continue
            uses.setdefault(pool_id, []).append((self.classify(scope, cls, fn_node), ast.unparse(fn_node)[:80]))
            # a callable submitted to a process pool runs in a worker
            sites = self.pool_sites[pool_id]
            if sites and not sites[0].detail.get("serial"):
                self.add_worker(scope, cls, fn_node.args[0] if is_partial(fn_node) else fn_node)
        for pool_id, sites in self.pool_sites.items():
            found = uses.get(pool_id, [])
            kinds = {k for k, _ in found}
            use = "unknown" if not found else next(
                (k for k in ("env-step", "io", "process-start") if k in kinds), "compute")
            if "env-step" not in kinds and "process-start" in kinds and "io" in kinds:
                use = "process-start"
            if kinds == {"unknown"} and sites and sites[0].detail.get("serial"):
                use = "unknown"  # a thread pool mapping a function defined elsewhere: its use is not known
            for s in sites:
                s.detail.setdefault("pool_use", use)  # (the catalogue's word, when it has one, stands)
                if found:
                    s.detail["submitted"] = [text for _, text in found]

    def classify(self, scope: str, cls: str, fn_node: ast.AST) -> str:
        if is_partial(fn_node):
            fn_node = fn_node.args[0]
        if isinstance(fn_node, ast.Lambda):
            names = {called_name(n.func) for n in ast.walk(fn_node.body) if isinstance(n, ast.Call)}
        else:
            names = set()
            for q in candidates(scope, cls, fn_node):
                names |= self.calls.get(q, set())
        leaves = {n.rsplit(".", 1)[-1] for n in names}
        if any(n.split(".", 1)[0] in _service_envs() for n in names):
            return "io"  # `with compiler_gym.make(...) as env: env.step(a)`: the env's own process works
        if any(n.rsplit(".", 1)[-1] in ENV_STEP and (n.rsplit(".", 1)[-1] not in ENV_RESET or "env" in n.lower())
               for n in names):
            return "env-step"
        if names & PROCESS_START or any(n.startswith("subprocess.") for n in names):
            return "process-start"
        if leaves & IO_NAMES or any(n.startswith(IO_PREFIXES) for n in names):
            return "io"
        return "compute" if names else "unknown"


@lru_cache(maxsize=None)
def _service_envs() -> frozenset[str]:
    """rules/consumers.yaml `service_envs`: packages whose environments run in a process of their own."""
    return frozenset(catalogue.data("consumers.yaml").get("service_envs") or ())


def _computes_gradients(token: str) -> bool:
    """`loss.backward`, `optimizer.apply_gradients`, `jax.grad`, `jax.value_and_grad`."""
    return token.rsplit(".", 1)[-1] in GRADIENT_CALLS or token in ("jax.grad", "jax.value_and_grad")


def is_partial(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and called_name(node.func).endswith("partial") and bool(node.args)


def called_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        base = called_name(func.value)
        return f"{base}.{func.attr}" if base else func.attr
    return ""


def candidates(scope: str, cls: str, ref: ast.AST) -> list[str]:
    """Qualnames a function reference may name: a nested def, a module function, a method."""
    if isinstance(ref, ast.Name):
        out = [ref.id]
        if scope != "<module>":
            out.insert(0, f"{scope}.{ref.id}")
        return out
    if isinstance(ref, ast.Attribute) and isinstance(ref.value, ast.Name) and ref.value.id in ("self", "cls") and cls:
        return [f"{cls}.{ref.attr}"]
    return []

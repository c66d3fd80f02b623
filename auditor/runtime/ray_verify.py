"""``qg-audit verify --ray [ADDRESS]``: count Ray actors per class and node against the configured count.

The process tree of the launching script shows nothing on a cluster (actors are children
of other nodes' raylets), so the census reads Ray's own state (auditor.runtime.ray_state),
and worker reports travel through the cluster's key-value store
(auditor.runtime.ray_collector). Verdict codes and the JSON shape are verify's
("qg-audit.verify/1", docs/verify.md) plus ``pending-creation`` (actors Ray cannot
schedule, with the unmet resource named) and ``imbalance`` (with ``--per-node N``).
See docs/ray.md.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from auditor.exitcodes import EXIT_FINDINGS, EXIT_OK, EXIT_TARGET, UsageError
from auditor.render import deliver, json_text
from auditor.runtime import ray_collector, ray_state
from auditor.runtime.ray_state import PENDING_STATES, Actor, Node, RayStateError

SCHEMA = "qg-audit.verify/1"
DEFAULT_INTERVAL = 1.0  # a state read costs ~10-40 ms here; once a second stays far below 1% of a core
PENDING_GRACE_S = 2.0  # an actor pending for less than this at the end is just being created
SEVERITY = ["target-failed", "no-workers", "pending-creation", "fallback", "partial", "excess",
            "workers-died", "imbalance", "value-mismatch", "pending", "pass"]


@dataclass
class Track:
    """One actor across polls."""

    actor: Actor
    first_seen: float
    alive_at: float | None = None
    dead_at: float | None = None
    history: list = field(default_factory=list)  # [t, state] at each change of state

    def state_at(self, t: float) -> str | None:
        state = None
        for when, what in self.history:
            if when > t:
                break
            state = what
        return state

    def to_json(self) -> dict:
        d = self.actor.to_json()
        d.update(first_seen=self.first_seen, alive_at=self.alive_at, dead_at=self.dead_at, history=self.history)
        return d


@dataclass
class RayWatch:
    """Polls Ray's state, keeps per-actor history and per-poll samples."""

    spec: str
    match: re.Pattern | None
    t0: float
    report_target: str | None = None  # ray-kv://... when actors report through the KV store
    backend: object = None
    gcs: str | None = None
    dashboard: str | None = None
    collector: object = None
    baseline: set = field(default_factory=set)  # actor ids that existed before the launch
    tracks: dict = field(default_factory=dict)
    nodes: list = field(default_factory=list)
    everyone: list = field(default_factory=list)  # every actor of the last poll, matching or not
    samples: list = field(default_factory=list)
    error: str | None = None
    costs_ms: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    _last_poll: float = -1e9

    def connect(self) -> bool:
        if self.backend is not None:
            return True
        try:
            self.backend, self.gcs, self.dashboard = ray_state.connect(self.spec)
        except RayStateError as exc:
            self.error = str(exc)
            return False
        self.error = None
        if self.report_target and self.gcs:
            try:
                self.collector = ray_collector.Collector(self.report_target, self.gcs)
            except Exception as exc:  # ray missing or GCS refused: say so, keep counting
                self.notes.append(f"reports from actors cannot be read ({exc}); the census still works")
        elif self.report_target:
            self.notes.append("reports from actors need the GCS address (--ray HOST:PORT) and ray installed "
                              "here; only the census is available")
        return True

    def take_baseline(self) -> None:
        if self.connect():
            try:
                self.baseline = {a.actor_id for a in self.backend.snapshot().actors}
            except RayStateError as exc:
                self.error = str(exc)

    def maybe_poll(self, interval: float, target_running: bool = True) -> None:
        now = time.monotonic()
        if now - self._last_poll >= interval:
            self._last_poll = now
            self.poll(target_running)

    def poll(self, target_running: bool = True) -> None:
        if not self.connect():
            return
        try:
            snap = self.backend.snapshot()
        except RayStateError as exc:
            self.error = str(exc)
            return
        t = round(time.monotonic() - self.t0, 3)
        self.costs_ms.append(snap.cost_ms)
        self.nodes, self.everyone = snap.nodes, snap.actors
        for a in snap.actors:
            if a.actor_id in self.baseline or (self.match and not self.match.search(a.class_name)):
                continue
            tr = self.tracks.get(a.actor_id)
            if tr is None:
                tr = self.tracks[a.actor_id] = Track(a, t)
            tr.actor = a
            if not tr.history or tr.history[-1][1] != a.state:
                tr.history.append([t, a.state])
            if a.state == "ALIVE" and tr.alive_at is None:
                tr.alive_at = t
            if a.state == "DEAD" and tr.dead_at is None:
                tr.dead_at = t
        current = [tr.actor for tr in self.tracks.values()]
        per_node: dict[str, int] = {}
        for a in current:
            if a.state == "ALIVE" and a.node_id:
                per_node[a.node_id] = per_node.get(a.node_id, 0) + 1
        self.samples.append({
            "t": t,
            "alive": sum(a.state == "ALIVE" for a in current),
            "pending": sum(a.state in PENDING_STATES for a in current),
            "restarting": sum(a.state == "RESTARTING" for a in current),
            "dead": sum(a.state == "DEAD" for a in current),
            "per_node": per_node,
            "pending_ids": [a.actor_id for a in current if a.state in PENDING_STATES],
            "target_running": target_running,
        })
        if self.collector is not None:
            try:
                self.collector.drain()
            except Exception as exc:
                self.notes.append(f"reading actor reports failed: {exc}")
                self.collector = None

    def reports(self) -> list[dict]:
        return list(self.collector.records) if self.collector is not None else []

    def close(self) -> None:
        # A GCS that died with the target (a job that started Ray itself) must not be called:
        # Ray's client retries for 60 s and then terminates the calling process.
        if self.collector is not None and self.gcs and ray_state.tcp_reachable(self.gcs, timeout=1.0):
            try:
                self.collector.drain()
            except Exception:
                pass
            self.collector.close()


# ---------------------------------------------------------------- verdict

def _res(resources: dict) -> str:
    def fmt(k, v):
        return f"{k}={v / 2**30:.1f}GiB" if "memory" in k else f"{k}={v:g}"

    shown = {k: v for k, v in resources.items() if v and not k.startswith("node:")}
    return ", ".join(fmt(k, v) for k, v in sorted(shown.items())) or "no resources"


def unmet_resource(actor: Actor, others: list[Actor], nodes: list[Node], everyone: list[Actor] = ()) -> str:
    """Name what keeps ``actor`` from being scheduled, as well as Ray's tables tell."""
    alive = [n for n in nodes if n.alive]
    for res, amount in sorted(actor.resources.items()):
        if amount <= 0 or res.startswith("node:"):
            continue
        biggest = max((n.resources.get(res, 0) for n in alive), default=0)
        if biggest < amount:
            return (f"{res}={amount:g} per actor, but no alive node has that much "
                    f"(the largest has {biggest:g})")
    wanting = [a for a in others if a.state == "ALIVE" or a.state in PENDING_STATES]
    for res, amount in sorted(actor.resources.items()):
        if amount <= 0 or res.startswith("node:"):
            continue
        demand = sum(a.resources.get(res, 0) for a in wanting)
        total = sum(n.resources.get(res, 0) for n in alive)
        if demand > total:
            return (f"{res}: the {len(wanting)} actors ask for {res}={amount:g} each, {demand:g} in total, "
                    f"and the {len(alive)} alive node(s) have {total:g}")
    ids = {a.actor_id for a in wanting}
    for res, amount in sorted(actor.resources.items()):
        held = [a for a in everyone if a.state == "ALIVE" and a.actor_id not in ids and a.resources.get(res)]
        total = sum(n.resources.get(res, 0) for n in alive)
        if held and sum(a.resources.get(res, 0) for a in wanting + held) > total:
            classes = ", ".join(sorted({a.class_name for a in held}))
            return (f"{res}: {len(held)} other alive actor(s) ({classes}) hold "
                    f"{sum(a.resources[res] for a in held):g} of the cluster's {total:g}")
    if actor.placement_group_id:
        return f"its placement group {actor.placement_group_id[:8]} is not placed yet"
    return (f"{_res(actor.resources)} fits the cluster's totals and no other actor holds it, so tasks hold "
            f"it or the actors' worker processes are still starting (raise --duration to tell)")


# How Ray words the death of actors whose driver ended (the job's own teardown, not a crash).
TEARDOWN = re.compile(r"references to the actor were removed|owner .*(died|dead|exited)|job .*(finish|exit|dead)"
                      r"|driver", re.I)


def _before_teardown(samples: list[dict], tracks) -> list[dict]:
    """The samples taken before the driver's own ray.shutdown() began killing its actors."""
    torn = [tr.dead_at for tr in tracks if tr.dead_at is not None and tr.actor.death
            and TEARDOWN.search(tr.actor.death)]
    if torn:
        return [smp for smp in samples if smp["t"] < min(torn)] or samples[:1]
    rises = [i for i in range(1, len(samples)) if samples[i]["dead"] > samples[i - 1]["dead"]]
    return samples[:rises[-1]] if rises else samples


def judge(watch: RayWatch, n: int, *, per_node: int | None, warmup: float, reports: list[dict],
          key: str | None, target: dict | None) -> tuple[str, list[dict], int]:
    reasons: list[dict] = []

    def add(code, message):
        reasons.append({"code": code, "message": message})

    def verdict():
        code = next(c for c in SEVERITY if any(r["code"] == c for r in reasons))
        return code, reasons, observed

    observed = 0
    if target is not None and not target["started"]:
        add("target-failed", f"{target['error'] or 'the target could not start'}. Next: check the command "
                             f"after '--' runs on its own.")
        return verdict()
    if target is not None and target["exit_code"] not in (None, 0):
        tail = [ln for ln in target["stderr_tail"].strip().splitlines() if ln.strip()]
        add("target-failed", f"the target exited with code {target['exit_code']} after "
                             f"{target['run_time_s']:.1f}s, before a verdict" + (f": {tail[-1].strip()}" if tail else "")
            + ". Next: run the command on its own and fix that error first.")
        return verdict()
    running = [s for s in watch.samples if s["target_running"]] or watch.samples
    if target is not None and target["ended_by"] == "target":
        running = _before_teardown(running, watch.tracks.values())
    if not running:
        add("no-workers", f"Ray's state could not be read during the run ({watch.error or 'no cluster appeared'}). "
                          f"Next: check the address given to --ray and that the job starts Ray.")
        return verdict()
    window = [s for s in running if s["t"] >= warmup] or running
    observed = max(s["alive"] for s in window)
    final = running[-1]
    tracks = list(watch.tracks.values())
    # each actor as it was at the final sample (later polls may show the job's teardown)
    actors = [replace(tr.actor, state=tr.state_at(final["t"]) or tr.actor.state) for tr in tracks]
    what = "/".join(sorted({tr.actor.class_name for tr in tracks})) or "matching"

    # Actors Ray never placed: the silent fallback of Ray (the job runs on with fewer).
    stuck = [tr for tr in tracks if tr.actor.actor_id in final["pending_ids"] and tr.alive_at is None
             and final["t"] - tr.first_seen >= PENDING_GRACE_S]
    if stuck:
        by_class: dict[str, list[Track]] = {}
        for tr in stuck:
            by_class.setdefault(tr.actor.class_name, []).append(tr)
        for cls, group in by_class.items():
            waited = final["t"] - min(tr.first_seen for tr in group)
            why = unmet_resource(group[0].actor, [a for a in actors if a.class_name == cls], watch.nodes,
                                 watch.everyone)
            add("pending-creation", f"{len(group)} {cls} actor(s) stayed PENDING_CREATION for {waited:.1f}s while "
                                    f"{final['alive']} ran: {why}. Ray keeps them waiting and the job runs on with "
                                    f"fewer workers. Next: lower the actor's resource request (num_cpus/num_gpus), "
                                    f"add nodes, or check 'ray status'.")
    explained = observed + len(stuck) >= n if stuck else False
    if observed == 0 and not stuck:
        add("no-workers", f"no {what} Ray actor was alive in {final['t']:.1f}s where {n} were expected "
                          f"(actors seen in any state: {len(tracks)}). Next: check --match against the actor "
                          f"class names, or raise --duration/--warmup if the job creates them later.")
    elif observed < n and not explained:
        if observed == 1 and n > 1:
            add("fallback", f"1 actor ran where {n} were expected: the count most likely did not reach the code "
                            f"that creates the actors (a misspelt or overridden key, so a default of 1 ran). "
                            f"Next: run 'qg-audit scan' on the project.")
        elif observed:
            add("partial", f"{observed} of {n} actors ran: a cap in the code, failed creation or a resource "
                           f"limit most likely cut the count. Next: check the driver's output and 'ray status'.")
    elif observed > n:
        add("excess", f"{observed} actors ran where {n} were expected: several jobs or nested actor groups "
                      f"most likely match. Next: narrow --match to the rollout actor's class.")

    died = [tr for tr in tracks if tr.alive_at is not None and tr.dead_at is not None and tr.dead_at <= final["t"]]
    if died:
        tr = died[0]
        cause = f": {tr.actor.death}" if tr.actor.death else ""
        add("workers-died", f"{len(died)} actor(s) died while the job ran (first: {tr.actor.class_name} pid "
                            f"{tr.actor.pid} at t={tr.dead_at:.1f}s{cause}). Next: check the actor's log "
                            f"on its node (ray logs) and for OOM kills.")

    if per_node is not None:
        alive_nodes = [nd for nd in watch.nodes if nd.alive]
        counts = {nd.node_id: final["per_node"].get(nd.node_id, 0) for nd in alive_nodes}
        bad = {nid: c for nid, c in counts.items() if c != per_node}
        if bad:
            listing = ", ".join(f"{nid[:8]}: {c}" for nid, c in sorted(counts.items(), key=lambda kv: -kv[1]))
            add("imbalance", f"actors per node are {listing} where --per-node {per_node} expects {per_node} on "
                             f"each of the {len(alive_nodes)} alive nodes. Next: use a placement group with the "
                             f"STRICT_SPREAD/PACK strategy you intend, or check per-node resources.")

    from auditor.runtime.verdict import Expectation, _count_values

    worker_reports = [r for r in reports if r.get("type") == "worker"]
    exp = Expectation(workers=n, key=key)
    wrong = [(r, k, v) for r in worker_reports for k, v in _count_values(r, exp).items() if v != n]
    if wrong:
        r, k, v = wrong[0]
        node = (r.get("ray") or {}).get("node_id") or "?"
        add("value-mismatch", f"actor pid {r.get('pid')} on node {node[:8]} reports {k}={v!r} where {n} was "
                              f"expected ({len(wrong)} report(s) differ): the value the actors received differs "
                              f"from the configuration. Next: look for overrides ('qg-audit scan').")
    if worker_reports:
        reported = {((r.get("ray") or {}).get("node_id"), r.get("pid")) for r in worker_reports}
        silent = [tr for tr in tracks if tr.state_at(final["t"]) == "ALIVE" and tr.alive_at is not None
                  and final["t"] - tr.alive_at >= 1.0 and (tr.actor.node_id, tr.actor.pid) not in reported]
        if silent:
            add("pending", f"{len(silent)} alive actor(s) never reported (first: pid {silent[0].actor.pid} on node "
                           f"{(silent[0].actor.node_id or '?')[:8]}) while others did: they may be stuck in their "
                           f"constructor. Next: py-spy dump --pid PID on that node.")
    if not reasons:
        add("pass", f"{observed} {what} actors ran as expected ({n})")
    return verdict()


# ---------------------------------------------------------------- command

def _validate(args) -> None:
    if args.expect_workers is None and not args.expect_from:
        raise UsageError("one of --expect-workers N or --expect-from FILE:KEY is required")
    if getattr(args, "expect_threads", None) is not None:
        raise UsageError("--expect-threads is not supported with --ray (count threads with a plain verify)")
    if getattr(args, "expect_per_rank", None) is not None:
        raise UsageError("--expect-per-rank is not supported with --ray (check ranks with a plain verify)")
    if args.per_node is not None and args.per_node < 1:
        raise UsageError(f"--per-node must be >= 1, got {args.per_node}")
    for flag in ("warmup", "duration", "timeout"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag} must be >= 0")
    if args.interval is not None and args.interval <= 0:
        raise UsageError("--interval must be > 0")


def run(args) -> int:
    _validate(args)
    try:
        match = re.compile(args.match) if args.match else None
    except re.error as exc:
        raise UsageError(f"--match: bad regular expression: {exc}") from None
    from auditor.runtime.expect import expectation

    exp = expectation(args)
    if exp.workers < 1:
        raise UsageError(f"{exp.source}: expected worker count must be >= 1, got {exp.workers}")
    command = list(getattr(args, "command_argv", None) or [])
    interval = args.interval or DEFAULT_INTERVAL
    t0 = time.monotonic()
    report_target = ray_collector.new_target() if command and ray_state.ray_importable() else None
    watch = RayWatch(args.ray, match, t0, report_target=report_target)
    result = None
    if command:
        from auditor.runtime.session import run_target

        watch.take_baseline()  # a cluster that is not up yet (the job starts Ray itself) is fine
        env = ray_collector.job_env(report_target) if report_target else {}
        try:
            result = run_target(command, duration=args.duration or None, timeout=args.timeout or None,
                                interval=min(interval, 0.25), hook=not args.no_hook, env=env, match=args.match,
                                on_sample=lambda _s: watch.maybe_poll(interval),
                                keep_output=getattr(args, "keep_output", None))
        finally:
            watch.close()
        watch.t0 = t0
    else:
        if not watch.connect():
            raise UsageError(f"--ray {args.ray}: {watch.error}. Next: start the cluster, or pass its address "
                             f"(HOST:PORT or http://HOST:8265)")
        end = t0 + (args.duration or args.timeout or 8.0)
        try:
            while True:
                watch.poll()
                if time.monotonic() + interval > end:
                    break
                time.sleep(interval)
        finally:
            watch.close()
    target = _target_json(result) if result is not None else None
    reports = (result.reports if result is not None else []) + watch.reports()
    code, reasons, observed = judge(watch, exp.workers, per_node=args.per_node, warmup=args.warmup,
                                    reports=reports, key=exp.key, target=target)
    exit_code = EXIT_TARGET if code == "target-failed" else EXIT_OK if code == "pass" else EXIT_FINDINGS
    doc = _json(args, exp, watch, result, target, reports, code, reasons, observed, exit_code)
    text = json_text(doc) if args.format == "json" else render_text(doc)
    deliver(text, args.output)
    return exit_code


def _target_json(result) -> dict:
    ended_by = "timeout" if result.timed_out else "qg-audit" if result.returncode is None and result.started \
        else "target"
    return {"started": result.started, "exit_code": result.returncode, "ended_by": ended_by,
            "run_time_s": result.duration_s, "error": result.error, "stderr_tail": result.stderr_tail[-2000:]}


def _json(args, exp, watch: RayWatch, result, target, reports, code, reasons, observed, exit_code) -> dict:
    peak = max(watch.samples, key=lambda smp: smp["alive"], default={"per_node": {}})
    nodes = []
    for nd in watch.nodes:
        d = nd.to_json()
        d["actors"] = peak["per_node"].get(nd.node_id, 0)  # alive matching actors at the peak sample
        nodes.append(d)
    costs = sorted(watch.costs_ms)
    return {
        "schema": SCHEMA,
        "command": list(getattr(args, "command_argv", None) or []),
        "expected": {"workers": exp.workers, "threads": None, "source": exp.source, "key": exp.key,
                     "per_node": args.per_node},
        "observed": {
            "workers": observed,
            "peak": max((s["alive"] for s in watch.samples), default=0),
            "threads": result.peak_threads if result else None,
            "peak_processes": result.peak_processes if result else None,
            "peak_rss_bytes": result.peak_rss_bytes if result else None,
            "processes": [p.to_json() for p in result.processes] if result else [],
            "samples": watch.samples,
            "actors": [tr.to_json() for tr in watch.tracks.values()],
            "nodes": nodes,
        },
        "ray": {"address": args.ray, "gcs": watch.gcs, "dashboard": watch.dashboard,
                "via": getattr(watch.backend, "via", None), "match": args.match,
                "reports_via": watch.report_target, "error": watch.error, "notes": watch.notes,
                "poll_ms_median": round(costs[len(costs) // 2], 2) if costs else None},
        "reports": reports,
        "hook": {"enabled": not args.no_hook, "active": result.hook_active if result else None,
                 "notes": result.notes if result else []},
        "verdict": code,
        "reasons": reasons,
        "target": target,
        "exit_code": exit_code,
    }


def render_text(doc: dict) -> str:
    ray, exp, obs = doc["ray"], doc["expected"], doc["observed"]
    where = ray["dashboard"] if ray["via"] == "http" else ray["gcs"] or ray["address"]
    out = [f"verify --ray: {doc['verdict'].upper()}  expected {exp['workers']} actors ({exp['source']}), "
           f"saw {obs['workers']} alive in the steady window (peak {obs['peak']}); state via {ray['via']} {where}"]
    out += [f"  {r['code']}: {r['message']}" for r in doc["reasons"] if r["code"] != "pass"]
    if obs["nodes"]:
        out.append("nodes:")
        for nd in obs["nodes"]:
            out.append(f"  {nd['node_id'][:8]}  {nd['ip']:<15} {'head' if nd['head'] else 'worker':<6} "
                       f"{'alive' if nd['alive'] else 'dead':<5}  {_res(nd['resources']):<40} actors {nd['actors']}")
    if obs["actors"]:
        out.append("actors:")
        for a in obs["actors"][:40]:
            out.append(f"  {a['class_name'][:24]:<24} {a['state']:<18} pid {str(a['pid'] or '-'):>7}  node "
                       f"{(a['node_id'] or '-')[:8]:<8}  {_res(a['resources'])}")
        if len(obs["actors"]) > 40:
            out.append(f"  ... {len(obs['actors']) - 40} more (use --format json)")
    workers = [r for r in doc["reports"] if r.get("type") == "worker"]
    nodes_reporting = {(r.get("ray") or {}).get("node_id") for r in workers} - {None}
    out.append(f"reports: {len(workers)} worker reports from {len(nodes_reporting)} node(s)"
               + ("" if ray["reports_via"] else " (actor reports not collected: no command launched, or ray "
                                                "not importable here)"))
    t = doc["target"]
    if t:
        ended = {"timeout": "timeout", "qg-audit": "duration reached"}.get(t["ended_by"], f"exit code {t['exit_code']}")
        out.append(f"target: ran {t['run_time_s']:.1f}s, ended by {ended}")
        if doc["verdict"] == "target-failed" and t["stderr_tail"].strip():
            out.append("target stderr (tail):")
            out.extend("  | " + ln for ln in t["stderr_tail"].strip().splitlines()[-15:])
    for note in ray["notes"]:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"

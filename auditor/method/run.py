"""The method in order, stopping where it says to stop (docs/diagnose.md).

1. profile: env / forward / transfer per sampling step, warm-up excluded (SamplingTimer
   records when the target has them, else the hook's automatic phases);
2. wait: the trainer's wait ratio as a distribution;
3. sweep: only when sampling is the bottleneck and forward + transfer dominate, batch size
   one value at a time over {NAME} (the values given, or doublings from the current value
   until the plateau or memory rule says stop);
4. scan: the project's parallelism knobs and their effective values;
5. verify: the worker processes that those values ask for, counted at run time.

The trainer-bound branch stops after step 2; a profile that fails still gets its scan and
verify (they tell why a job fails as often as not). Every step records why the next one
runs or not. Every launch goes through auditor.runtime.session.run_target via the library
APIs below the commands (auditor.profiling.launch, auditor.sweep.runner,
auditor.runtime.check), so each inherits its readiness wait and its teardown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.exitcodes import EXIT_FINDINGS, EXIT_OK, EXIT_TARGET

SCHEMA = "qg-audit.diagnose/1"
PHASE_MODES = ("either", "auto", "timer")
MAX_DOUBLINGS = 5  # doubling from the current value: at most this many values beyond it


@dataclass
class Settings:
    command: list[str]  # may hold {NAME}
    name: str = "batch"
    current: str | None = None  # the value the profile and verify runs use
    values: list[str] | None = None  # explicit sweep values; None: doubling from current
    max_doublings: int = MAX_DOUBLINGS
    phases: str = "either"
    project: str = "."
    duration: float | None = None
    timeout: float | None = 600.0
    sweep_steps: int | None = None
    warmup_steps: int | None = None
    verify_duration: float = 8.0
    verify_warmup: float = 1.0
    thresholds: Any = None
    plateau_gain: float = 0.05
    memory_near: float = 0.8
    ready_timeout: float | None = 120.0  # per launch: the wait for the job's first step / workers
    sweep_runs: int = 3  # fresh runs per swept value: one run gives no spread, hence no plateau
    keep_output: str | None = None  # keep each launch's output under this directory
    status: bool = True  # a live status line on stderr while a launch waits for readiness


@dataclass
class Step:
    step: int
    name: str  # profile | wait | sweep | scan | verify
    status: str  # ran | skipped | failed
    verdict: str | None
    message: str
    next: str  # why the next step runs, or why the method stops

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "name": self.name, "status": self.status, "verdict": self.verdict,
                "message": self.message, "next": self.next}


@dataclass
class Diagnosis:
    settings: Settings
    steps: list[Step] = field(default_factory=list)
    branch: str = "inconclusive"
    conclusion: list[str] = field(default_factory=list)
    exit_code: int = EXIT_OK
    profile: Any = None  # auditor.profiling.Profile
    phases_source: str | None = None  # "timer" | "auto"
    profile_records: list[dict] = field(default_factory=list)
    profile_target: dict | None = None
    sweep: Any = None  # auditor.sweep.Sweep
    scan: Any = None  # auditor.model.ScanResult
    expected: Any = None  # auditor.method.parallel.Expected
    verify: dict | None = None  # the qg-audit.verify/1 document
    entry: Any = None  # auditor.method.entry.Entry: what the command runs
    elsewhere: list = field(default_factory=list)  # scan findings in files the command does not run
    context: dict = field(default_factory=dict)  # date, host, CPUs, load, versions (auditor.method.context)
    failure_output: dict | None = None  # the failed profile run's {stdout_tail, stderr_tail}

    def knob_rows(self) -> list[dict]:
        """The scan's knobs for a report: the ones the command runs first (with the value its
        command line gives, where it gives one), then the others ("runs": False)."""
        if self.scan is None:
            return []
        given = {k["name"]: k for k in (self.expected.knobs if self.expected is not None else [])
                 if k.get("from_command")}
        rows = []
        for k in self.scan.knobs:
            runs = self.entry is None or any(self.entry.runs(site.file) for site in k.sites)
            g = given.get(k.name)
            rows.append({"name": k.name, "effective": g["effective"] if g else k.effective,
                         "why": (g["why"] + f"; without it: {k.effective} ({k.why})") if g else k.why,
                         "runs": runs, "from_command": bool(g)})
        return sorted(rows, key=lambda r: not r["runs"])

    def add(self, name: str, status: str, verdict: str | None, message: str, next_: str) -> None:
        self.steps.append(Step(len(self.steps) + 1, name, status, verdict, message, next_))

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        scan = None
        if self.scan is not None:
            def finding(f):
                return {"code": f.code, "severity": f.severity, "file": f.file, "line": f.line, "message": f.message}

            scan = {"root": self.scan.root, "files_scanned": self.scan.files_scanned,
                    "knobs": [{"name": k.name, "effective": k.effective, "why": k.why} for k in self.scan.knobs],
                    "findings": [finding(f) for f in self.scan.findings if f not in self.elsewhere],
                    "findings_elsewhere": [finding(f) for f in self.elsewhere],
                    "entry": None if self.entry is None else {
                        "script": self.entry.script, "files": sorted(self.entry.files), "how": self.entry.how},
                    "expected": None if self.expected is None else {
                        "workers": self.expected.workers, "knobs": self.expected.knobs,
                        "unknown": self.expected.unknown}}
        verify = None
        if self.verify is not None:
            verify = {k: v for k, v in self.verify.items() if k not in ("reports",)}
            verify["observed"] = {k: v for k, v in verify["observed"].items() if k not in ("processes", "samples")}
        return {
            "schema": SCHEMA,
            "command": list(s.command),
            "variable": {"name": s.name, "current": s.current, "values": s.values},
            "project": s.project,
            "phases_source": self.phases_source,
            "steps": [st.to_json() for st in self.steps],
            "branch": self.branch,
            "conclusion": self.conclusion,
            "exit_code": self.exit_code,
            "profile": self.profile.to_json() if self.profile is not None else None,
            "profile_target": self.profile_target,
            "sweep": self.sweep.to_json() if self.sweep is not None else None,
            "scan": scan,
            "verify": verify,
            "context": self.context,
        }


def _substitute(command: list[str], name: str, value: str | None) -> list[str]:
    if value is None:
        return list(command)
    return [a.replace("{" + name + "}", value) for a in command]


def has_placeholder(command: list[str], name: str) -> bool:
    return any("{" + name + "}" in a for a in command)


def run_method(s: Settings, say=None) -> Diagnosis:
    """Run the method; ``say(line)`` is told each step's outcome as it happens."""
    from auditor.method import context

    d = Diagnosis(settings=s, context=context.start())
    say = say or (lambda line: None)
    try:
        _method(d, s, say)
    finally:
        context.finish(d.context)
    return d


def _method(d: Diagnosis, s: Settings, say) -> None:
    if not _profile(d, s, say):
        # the profile failed: the scan and verify still say what the command asks for and what ran
        _scan(d, s, say)
        _verify(d, s, say)
        _conclude(d)
        return
    prof = d.profile
    wait_step = prof.diagnosis[1]
    branch = prof.conclusion["branch"]
    d.branch = branch
    if branch == "trainer-bound":
        d.add("wait", "ran", wait_step["verdict"], wait_step["message"],
              "stop: the trainer is the bottleneck, so no sampling change (batch size, parallelism) can help; "
              "sweep, scan and verify are not run")
        say(_line(d.steps[-1]))
        for name in ("sweep", "scan", "verify"):
            d.add(name, "skipped", None, "not run: the trainer does not wait for samples (step 2)", "stop")
        d.conclusion.append(prof.conclusion["message"])
        return
    after_wait = {"env-bound": "environment-bound (step 1): skip the batch sweep and check the environment's "
                               "parallelism (scan, then verify)",
                  "forward-transfer-bound": "forward and transfer dominate: a one-variable batch sweep is next",
                  "inconclusive": "neither the environment nor forward + transfer dominates: no batch sweep; "
                                  "check the parallelism (scan, then verify)"}[branch]
    if wait_step["verdict"] == "unknown":
        after_wait = "training's wait was not measured (no trainer wait seen), so sampling is assumed to matter; " \
                     + after_wait
    d.add("wait", "ran", wait_step["verdict"], wait_step["message"], after_wait)
    say(_line(d.steps[-1]))
    if branch == "forward-transfer-bound":
        _sweep(d, s, say)
    else:
        d.add("sweep", "skipped", None, f"not run: {branch} - the method sweeps batch size only when forward and "
                                        "transfer dominate", "scan the project for its parallelism settings")
        say(_line(d.steps[-1]))
    _scan(d, s, say)
    _verify(d, s, say)
    _conclude(d)


def _line(step: Step) -> str:
    return f"{step.step}. {step.name} [{step.status}{': ' + step.verdict if step.verdict else ''}] {step.message}" \
           f"\n   -> {step.next}"


def _status(s: Settings, what: str):
    if not s.status:
        return None
    from auditor.render.status import StatusLine

    return StatusLine(prefix=f"qg-audit diagnose: {what}")


def _kept(s: Settings, name: str) -> str | None:
    import os

    return os.path.join(s.keep_output, name) if s.keep_output else None


def _profile(d: Diagnosis, s: Settings, say) -> bool:
    from auditor.profiling import DEFAULT_WINDOW, NoTimingRecords, Thresholds
    from auditor.profiling import auto as auto_mod
    from auditor.profiling.launch import attach_run, build, launch, target_failure

    th = s.thresholds or Thresholds()
    cmd = _substitute(s.command, s.name, s.current)
    result = launch(cmd, auto=s.phases != "timer", duration=s.duration, timeout=s.timeout,
                    warmup_steps=s.warmup_steps, ready_timeout=s.ready_timeout,
                    source={"either": "either", "auto": "auto", "timer": "timer"}[s.phases],
                    on_wait=_status(s, "profile"), keep_output=_kept(s, "profile"))
    d.profile_records = result.reports
    d.profile_target = {"command": cmd, "returncode": result.returncode, "duration_s": result.duration_s,
                        "timed_out": result.timed_out, "teardown_s": result.teardown_s,
                        "ready": result.ready.to_json()}
    if not result.started:
        return _target_failed(d, result.error or "the target could not start", say, result)
    auto_recs, manual_recs = auto_mod.split(result.reports)
    manual_steps = any(r.get("type") == "timing" and r.get("steps") for r in manual_recs)
    source = "timer" if s.phases == "timer" or (s.phases == "either" and manual_steps) else "auto"
    try:
        prof = build(result.reports, source == "auto", s.warmup_steps, None, DEFAULT_WINDOW, th)
    except NoTimingRecords:
        return _target_failed(d, target_failure(result, source == "auto"), say, result)
    if result.returncode not in (None, 0):
        return _target_failed(d, f"the target exited with code {result.returncode} after {result.duration_s:.1f} s",
                              say, result)
    attach_run(prof, result)
    d.profile, d.phases_source = prof, source
    env, _wait, fx = prof.diagnosis
    phases = ", ".join(f"{p.name} {p.mean_ms:.2f} ms ({p.share:.0%})" for p in prof.phases)
    how = "SamplingTimer phases" if source == "timer" else "automatic phases (no code change)"
    verdict = "env-bound" if env["verdict"] == "env-bound" else (
        "forward-transfer-bound" if fx["verdict"] == "forward-transfer-bound" else "neither")
    rate = f"{prof.samples_per_s:,.1f} samples/s" if prof.samples_per_s is not None else "no samples/s"
    train = (f"; training apart: {prof.training.ms_per_step:.2f} ms per step ({prof.training.share:.0%} of the loop)"
             if prof.training is not None else "")
    ready = result.ready
    when = f"ready at {ready.at:.1f} s ({ready.why}), " if ready.at is not None else ""
    d.add("profile", "ran", verdict,
          f"{how}, {when}{prof.steps} steady steps ({prof.basis_code}): {phases}, untimed {prof.other_share:.0%}; "
          f"step {prof.step.mean_ms:.2f} ms, {rate}{train}",
          "the trainer's wait distribution decides whether sampling matters at all")
    say(_line(d.steps[-1]))
    return True


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _target_failed(d: Diagnosis, why: str, say, result=None) -> bool:
    d.branch = "target-failed"
    d.exit_code = EXIT_TARGET
    out = {"stdout_tail": _tail(result.stdout_tail) if result is not None else "",
           "stderr_tail": _tail(result.stderr_tail) if result is not None else ""}
    d.failure_output = out
    tail = out["stderr_tail"] or out["stdout_tail"]
    msg = why + (("; target output (tail): " + tail[-500:]) if tail else "")
    d.add("profile", "failed", "target-failed", msg,
          "no profile, so no wait ratio or sweep; the scan and verify still run: they tell what the command asks "
          "for and what ran")
    say(_line(d.steps[-1]))
    for name in ("wait", "sweep"):
        d.add(name, "skipped", None, "not run: the profile failed (step 1)", "scan, then verify")
        say(_line(d.steps[-1]))
    d.conclusion.append("the target could not be profiled: " + why)
    return False


def _sweep_values(s: Settings) -> list[str] | None:
    if s.values:
        return list(s.values)
    if s.current is None:
        return None
    try:
        start = int(s.current)
    except ValueError:
        return None
    return [str(start * 2 ** i) for i in range(s.max_doublings + 1)]


def _sweep(d: Diagnosis, s: Settings, say) -> None:
    from auditor.sweep.conclude import Limits, conclude
    from auditor.sweep.model import Sweep
    from auditor.sweep.params import Variable
    from auditor.sweep.runner import Options, Progress, run_sweep

    values = _sweep_values(s)
    if not has_placeholder(s.command, s.name) or not values:
        why = (f"the command has no {{{s.name}}} placeholder" if not has_placeholder(s.command, s.name)
               else f"no values: give --values or a whole-number --current for {{{s.name}}}")
        d.add("sweep", "skipped", None, f"batch sweep not run: {why}",
              f"put {{{s.name}}} where the batch size goes (and --current B) to sweep it; checking the parallelism "
              "next (scan)")
        say(_line(d.steps[-1]))
        return
    opts = Options(runs=s.sweep_runs, steps=s.sweep_steps, duration=s.duration, timeout=s.timeout,
                   warmup_steps=s.warmup_steps, interval=0.1, auto=d.phases_source == "auto",
                   plateau_gain=s.plateau_gain, memory_near=s.memory_near, ready_timeout=s.ready_timeout,
                   keep_output=_kept(s, "sweep"))
    doubling = not s.values
    results, last = [], None
    for value in values:
        one = Variable(s.name, [value], "-L")
        last = run_sweep(one, s.command, opts, Progress(1, enabled=False))
        results += last.results
        if doubling and len(results) >= 2:
            var = Variable(s.name, [r.value for r in results], "-L")
            limits = Limits(plateau_gain=s.plateau_gain, memory_near=s.memory_near,
                            memory_limit_bytes=last.context["memory_limit_bytes"],
                            gpu_total_bytes=last.context["gpu"]["total_bytes"])
            so_far, _w = conclude(results, var, limits, last.context["thread_env"])
            if so_far["stop_at"] is not None or any(r.failed for r in results[-1:]):
                break
    var = Variable(s.name, [r.value for r in results], "-L" if s.values else "-P")  # doublings: -P B MAX -D x2
    limits = Limits(plateau_gain=s.plateau_gain, memory_near=s.memory_near,
                    memory_limit_bytes=last.context["memory_limit_bytes"],
                    gpu_total_bytes=last.context["gpu"]["total_bytes"])
    conclusion, warnings = conclude(results, var, limits, last.context["thread_env"])
    for r in results:
        r.warnings = [w for w in warnings if w.startswith(f"{s.name}={r.value}:")]
    context = dict(last.context, workers_observed={r.value: r.workers for r in results},
                   processes_observed={r.value: r.processes for r in results})
    d.sweep = Sweep(variable=var, context=context, results=results, conclusion=conclusion, warnings=warnings)
    measured = [r for r in results if not r.failed]
    verdict = "stop-at" if conclusion["stop_at"] is not None else ("no-stop-point" if len(measured) >= 2
                                                                     else "too-few-values")
    d.add("sweep", "ran", verdict, f"{s.name} over {', '.join(var.values)}: {conclusion['message']}",
          "batch size settled for this parallel configuration; now check that the parallelism itself took effect "
          "(scan, then verify)")
    say(_line(d.steps[-1]))


def _lint_args():
    import argparse

    from auditor import lint

    p = argparse.ArgumentParser()
    lint.add_arguments(p)
    args = p.parse_args([])
    args.format, args.output = "json", None
    return args


def _scan(d: Diagnosis, s: Settings, say) -> None:
    from auditor import join as join_mod
    from auditor import lint
    from auditor import scan as scan_mod
    from auditor.method.entry import entry_point, flag_values
    from auditor.method.parallel import expected_workers

    result = scan_mod.scan(s.project, jobs=1)
    join_mod.join(result)
    lint.check(result, _lint_args())
    d.scan = result
    cmd = _substitute(s.command, s.name, s.current)
    d.entry = entry = entry_point(cmd, s.project)
    knob_files = {k.name: {site.file for site in k.sites if site.role in ("read", "consume")} for k in result.knobs}

    def counts(f) -> bool:
        """In a file the command runs, or about a knob read or consumed there."""
        if entry.runs(f.file):
            return True
        return any(entry.runs(x) for x in knob_files.get(f.knob or "", ())) and not f.file.endswith(".py")

    d.elsewhere = [f for f in result.findings if not counts(f)]
    d.expected = exp = expected_workers(result, entry, flag_values(cmd))
    serious = [f for f in result.findings if f.severity in ("warning", "error") and f not in d.elsewhere]
    apart = [f for f in d.elsewhere if f.severity in ("warning", "error")]
    found = (f"{len(result.knobs)} knob(s), {len(serious)} warning(s)/error(s)"
             + (": " + "; ".join(f"{f.code} {f.file}:{f.line} {f.message}" for f in serious[:3]) if serious else ""))
    if entry.script is not None:
        found += f"; judged for {entry.script} and the {len(entry.files) - 1} project file(s) it imports"
    if apart:
        found += (f"; {len(apart)} more in files it does not run, shown apart (not in the exit code): "
                  + ", ".join(f"{f.code} {f.file}:{f.line}" for f in apart[:3]))
    if exp.workers is None:
        unknown = f" ({', '.join(exp.unknown)} have no static value)" if exp.unknown else ""
        nxt = ("no knob with a known value is consumed by a process-parallel backend" + unknown
               + ": verify is not run; run qg-audit verify --expect-workers N -- COMMAND with the count you expect")
    else:
        nxt = f"verify expects {exp.workers} worker process(es) ({exp.source}) in the running target"
        given = [k for k in exp.knobs if k.get("from_command")]
        if given:
            nxt += " - " + "; ".join(f"{k['name']}: {k['why']}" for k in given)
    d.add("scan", "ran", "findings" if serious else "clean", f"{s.project}: {found}", nxt)
    say(_line(d.steps[-1]))


def _verify(d: Diagnosis, s: Settings, say) -> None:
    from auditor.render.verify_json import render
    from auditor.runtime.check import verify_command
    from auditor.runtime.verdict import Expectation

    exp = d.expected
    if exp is None or exp.workers is None:
        d.add("verify", "skipped", None, "verify not run: the scan gave no expected worker count", "done")
        say(_line(d.steps[-1]))
        return
    expectation = Expectation(workers=exp.workers, source=exp.source)
    cmd = _substitute(s.command, s.name, s.current)
    result, verdict = verify_command(cmd, expectation, duration=s.verify_duration or None, warmup=s.verify_warmup,
                                     timeout=s.timeout, ready_timeout=s.ready_timeout,
                                     on_wait=_status(s, "verify"), keep_output=_kept(s, "verify"))
    d.verify = render(result, expectation, verdict, hook=True)
    reasons = "; ".join(r["message"] for r in verdict.reasons[:3])
    d.add("verify", "ran" if verdict.code != "target-failed" else "failed", verdict.code,
          f"expected {exp.workers} worker(s), observed {verdict.observed_workers}: {reasons}", "done")
    say(_line(d.steps[-1]))


def _conclude(d: Diagnosis) -> None:
    prof = d.profile
    out = [prof.conclusion["message"]] if prof is not None else list(d.conclusion)
    if d.sweep is not None:
        c = d.sweep.conclusion
        for ch in c["changes"]:
            out.append(f"under this parallel config ({c['scope']}), {d.settings.name} {ch['from']} \u2192 {ch['to']} "
                       f"changed samples/s from {ch['samples_per_s_from']:,.0f} to {ch['samples_per_s_to']:,.0f}")
        out.append(c["message"])
    serious = ([f for f in d.scan.findings if f.severity in ("warning", "error") and f not in d.elsewhere]
               if d.scan is not None else [])
    if serious:
        out.append(f"scan: {len(serious)} silent-fallback finding(s), first: {serious[0].code} {serious[0].file}:"
                   f"{serious[0].line} {serious[0].message}")
    apart = [f for f in d.elsewhere if f.severity in ("warning", "error")]
    if apart:
        out.append(f"scan, apart: {len(apart)} finding(s) in files the command does not run (not in the exit code), "
                   f"first: {apart[0].code} {apart[0].file}:{apart[0].line}")
    code = d.verify["verdict"] if d.verify is not None else None
    if code is not None:
        out.append(f"verify: {code} (expected {d.expected.workers} worker process(es) from {d.expected.source}, "
                   f"observed {d.verify['observed']['workers']})")
    d.conclusion = out
    if d.branch == "target-failed" or (d.verify is not None and d.verify["exit_code"] == EXIT_TARGET):
        d.exit_code = EXIT_TARGET
    elif serious or (d.verify is not None and d.verify["exit_code"] != EXIT_OK):
        d.exit_code = EXIT_FINDINGS
    else:
        d.exit_code = EXIT_OK

"""Render a profile for people: phase table, training apart, the untimed share explained (stack
samples, threads and CPUs), first steps, wait ratio, processes, spikes, diagnosis."""

from __future__ import annotations

from auditor.render.safe import one_line, text_lines


def _ms(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def _explained(p) -> list[str]:
    """The untimed share by function (stack samples) and each process's threads and CPU."""
    ex = p.explanation
    if not ex:
        return []
    out = []
    u = ex.get("untimed") or {}
    if u.get("functions"):
        out.append("")
        out.append(f"untimed {p.other_share:.0%} of the step, by function ({u['samples']} stack samples of the "
                   f"sampling thread(s) every {u['interval_ms']:g} ms; share of the untimed time):")
        for f in u["functions"]:
            name, _sep, where = f["function"].partition("  ")
            out.append(f"  {f['share']:>5.0%}  {one_line(name)}  ({one_line(where)}; from {one_line(f['line'])})")
    elif p.stacks is None and p.other_share >= 0.2:
        out.append("")
        out.append("untimed: no stack samples (profile --auto samples the sampling threads' stacks; "
                   "--stack-interval 0 turns it off)")
    run = p.run or {}
    tc = run.get("thread_cpu") or {}
    if tc.get("processes"):
        cpus = tc.get("cpus")
        load = run.get("load")
        out.append("")
        out.append(f"threads and CPU in the steady window ({tc.get('busy_threads')} busy thread(s) in the job on "
                   f"{cpus if cpus is not None else '?'} CPU(s)" + (f"; load average {load[0]:g}" if load else "")
                   + "; busy = runnable >= 50% of the window):")
        out.append(f"  {'pid':>8}  {'role':<8}{'threads':>8}{'busy':>6}{'cores':>7}  busiest threads (runnable / ran)")
        sampling = {(s["pid"], s["tid"]) for s in ex.get("samplers") or []}
        for proc in tc["processes"][:8]:
            rows = [t for t in proc.get("thread_rows") or [] if t["runnable"] >= 0.05][:4]
            shown = ", ".join(f"{t['tid']}{'*' if (proc['pid'], t['tid']) in sampling else ''} "
                              f"{t['runnable']:.0%}/{t['cores']:.0%}" for t in rows) or "-"
            out.append(f"  {proc['pid']:>8}  {proc['role'][:7]:<8}{proc['threads']:>8}{proc['busy']:>6}"
                       f"{proc['cores']:>7.2f}  {shown}")
        if sampling:
            out.append("  (* = a sampling thread; runnable = on a CPU or waiting for one, ran = on a CPU)")
    return out


def render(profile, header: str = "") -> str:
    p = profile
    out: list[str] = []
    timers = {(r.pid, r.timer) for r in p.processes if r.steps}  # sampling timers
    pids = {r.pid for r in p.processes}
    if header:
        out.append(header)
    out.append(f"basis: {p.basis}")
    trainers = sum(1 for r in p.processes if r.trainer_steps)
    out.append(f"{p.steps} steady sampling step(s) from {len(timers)} sampler timer(s)"
               + (f" and {trainers} trainer timer(s)" if trainers else "") + f" in {len(pids)} process(es)")
    if p.steps:
        out.append("")
        out.append(f"{'phase':<14}{'mean ms':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}{'share':>8}")
        for ph in p.phases:
            out.append(f"{ph.name:<14}{ph.mean_ms:>9.2f}{ph.p50_ms:>9.2f}{ph.p95_ms:>9.2f}{ph.p99_ms:>9.2f}"
                       f"{ph.max_ms:>9.2f}{ph.share:>8.0%}")
        out.append(f"{'(untimed)':<14}{'':>45}{p.other_share:>8.0%}")
        s = p.step
        out.append(f"{'step':<14}{s.mean_ms:>9.2f}{s.p50_ms:>9.2f}{s.p95_ms:>9.2f}{s.p99_ms:>9.2f}{s.max_ms:>9.2f}"
                   f"{'100%':>8}")
        t = p.training
        if t is not None:
            out.append(f"{'training':<14}{t.ms_per_step:>9.2f}{'':>36}{'apart':>8}   (not in the step: "
                       f"{t.ms_total / 1e3:.2f} s in {t.spans} span(s), {t.share:.0%} of the loop)")
        if p.samples_per_s is not None:
            across = " summed over timers" if len(timers) > 1 else ""
            apart = "training and trainer compute not included" if t is not None else "trainer compute not included"
            out.append(f"samples/s: {p.samples_per_s:,.1f} (samples / sampling time: {p.samples} samples in "
                       f"{p.sampling_s:.3f} s of steady step time{across}; {apart})")
    out += _explained(p)
    if p.first_steps:
        out.append("")
        out.append("first steps (* = warm-up, excluded from the figures above):")
        shown = 0
        for key in sorted({(f.pid, f.timer) for f in p.first_steps}):
            if shown == 4:
                out.append(f"  ... {len({(f.pid, f.timer) for f in p.first_steps}) - 4} more timer(s) in the JSON")
                break
            shown += 1
            out.append(f"  pid {key[0]} {key[1]}:")
            for f in (f for f in p.first_steps if (f.pid, f.timer) == key):
                phases = "  ".join(f"{n} {v:.2f}" for n, v in f.phases_ms.items())
                out.append(f"    step {f.step:>3}{'*' if f.warmup else ' '} {f.step_ms:>9.2f} ms   {phases}")
    w = p.wait
    if w is not None:
        out.append("")
        out.append(f"trainer wait ratio wait/(wait+compute) over {w.windows} window(s) of up to {p.window} trainer "
                   f"steps ({w.steps} steady steps): mean {w.ratio_mean:.0%}, p50 {w.ratio_p50:.0%}, "
                   f"p95 {w.ratio_p95:.0%}")
        out.append(f"  per trainer step: wait {w.wait_ms_mean:.2f} ms (p95 {w.wait_ms_p95:.2f}, max "
                   f"{w.wait_ms_max:.2f}), compute {w.compute_ms_mean:.2f} ms")
    if len(p.processes) > 1:
        out.append("")
        names = [ph.name for ph in p.phases]
        head = f"{'pid':>8}  {'timer':<12}{'role':<12}{'steps':>7}{'samples/s':>11}{'step ms':>9}"
        head += "".join(f"{n[:8]:>9}" for n in names) + f"{'wait':>7}"
        out.append("per process (steady state, mean ms per step):")
        out.append(head)
        for r in p.processes:
            line = (f"{r.pid:>8}  {r.timer[:11]:<12}{(r.role or '-')[:11]:<12}{(r.steps or '-'):>7}"
                    f"{(f'{r.samples_per_s:,.1f}' if r.samples_per_s is not None else '-'):>11}{_ms(r.step_ms_mean):>9}")
            line += "".join(f"{_ms(r.phases_ms.get(n)):>9}" for n in names)
            line += f"{(f'{r.wait_ratio:.0%}' if r.wait_ratio is not None else '-'):>7}"
            out.append(line)
    if p.spikes_total:
        out.append("")
        out.append(f"spikes: {p.spikes_total} steady step(s) slower than {p.spike_threshold_factor:g}x their timer's "
                   f"median" + (f" (slowest {len(p.spikes)} shown)" if p.spikes_total > len(p.spikes) else ""))
        for sp in p.spikes:
            grew = f", mostly {sp.phase}" if sp.phase else ""
            out.append(f"  pid {sp.pid} {sp.timer} step {sp.step} at {sp.t_s:.2f} s (window {sp.window}: steps "
                       f"{sp.window_steps[0]}-{sp.window_steps[1]}): {sp.step_ms:.2f} ms vs median "
                       f"{sp.median_ms:.2f} ms{grew}")
    out.append("")
    out.append("diagnosis (fixed order):")
    for d in p.diagnosis:
        out.append(f"  {d['step']}. [{d['verdict']}] {d['message']}")
    out.append(f"conclusion: {p.conclusion['branch']}: {p.conclusion['message']}")
    for note in p.notes:
        out.append(f"note: {note}")
    return text_lines(out)

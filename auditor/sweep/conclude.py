"""Conclusions: value-to-value changes, plateau, memory near its limit, "stop at B", noise.

Rules (docs/sweep.md says the same):

- gain between two neighbouring measured values a -> b: mean samples/s of b over a, minus 1.
  With numeric, increasing values it is scaled to one doubling of the variable
  ((b/a) ** (1 / log2(vb/va)) - 1), so 16 -> 64 is judged like 16 -> 32.
- plateau: the first step whose gain per doubling is below ``plateau_gain`` (default 5%):
  stop at its lower value a - the larger value costs memory and buys (almost) nothing. Only
  where the statistics support it: both values measured by at least MIN_RUNS runs (one run
  per value cannot tell a plateau from run-to-run noise, so it gives no plateau stop), and
  never one the table contradicts: a later value that beats a by the threshold per doubling,
  beyond the runs' spread, makes a -> b a dip, not a plateau (the next candidate is tried).
- memory near its limit: a value whose tree RSS peak is at least ``memory_near`` (default
  80%) of the memory limit (available memory before the sweep, or --memory-limit), or whose
  GPU peak is at least that share of the GPU's total: stop at the measured value before it.
- "stop at B" is the earlier of the two. It is stated for this parallel configuration (the
  observed worker count and thread settings), never as a universal optimum.
- noise: a value with runs that hyperfine's median/MAD rule calls outliers, or whose steady
  steps hold such outliers, is flagged with the flag that helps.
"""

from __future__ import annotations

from dataclasses import dataclass

from auditor.sweep import stats
from auditor.sweep.model import ValueResult

PLATEAU_GAIN = 0.05
MEMORY_NEAR = 0.8
MIN_RUNS = 2  # runs per value before a plateau can be told from noise


@dataclass
class Limits:
    plateau_gain: float = PLATEAU_GAIN
    memory_near: float = MEMORY_NEAR
    memory_limit_bytes: int | None = None
    gpu_total_bytes: int | None = None


def fmt_rate(x: float | None) -> str:
    """1234.5 -> '1 234' (thin grouping, as in the issue's examples); small rates keep a decimal."""
    if x is None:
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}".replace(",", " ")
    return f"{x:.1f}"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "n/a"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def fmt_pct(x: float) -> str:
    if round(x * 100) == 0:
        return "+0%"  # not "-0%"
    return f"{x:+.0%}" if abs(x) < 10 else f"{x + 1:.0f}x"


def scope(results: list[ValueResult], thread_env: dict[str, str]) -> tuple[str, list[str]]:
    """'with 8 worker processes, OMP_NUM_THREADS=1' and warnings when the count was not fixed."""
    warnings = []
    counts = {r.value: r.workers for r in results if not r.failed and r.workers is not None}
    distinct = sorted(set(counts.values()))
    if not distinct:
        head = "with an unknown worker count (no value was measured)"
    elif len(distinct) == 1:
        n = distinct[0]
        head = (f"with {n} worker process{'es' if n != 1 else ''}" if n
                else "with a single process, no worker processes")
    else:
        head = f"with {distinct[0]}-{distinct[-1]} worker processes"
        shown = ", ".join(f"{v}: {c}" for v, c in counts.items())
        warnings.append(f"the worker count was not fixed across values ({shown}): the sweep changed more than "
                        "one thing; check the parallel configuration with qg-audit verify before comparing")
    threads = [f"{k}={v}" for k, v in thread_env.items() if "THREADS" in k]
    return (head + (", " + ", ".join(threads) if threads else "")), warnings


def noise_warnings(r: ValueResult, var_name: str) -> list[str]:
    out = []
    rates = [x.samples_per_s for x in r.ok_runs]
    if len(rates) >= 3:
        idx = stats.outliers(rates)
        ok_numbers = [x.run for x in r.ok_runs]
        r.outlier_runs = [ok_numbers[i] for i in idx]
        if idx:
            med = stats.median(rates)
            out.append(f"{var_name}={r.value}: run(s) {', '.join(map(str, r.outlier_runs))} are statistical outliers "
                       f"(samples/s {', '.join(fmt_rate(rates[i]) for i in idx)} vs median {fmt_rate(med)}); re-run on "
                       "a quiet machine; it might help to use more --runs or --warmup-steps")
    steps_out = sum(x.step_outliers for x in r.ok_runs)
    early = sum(x.early_outliers for x in r.ok_runs)
    if early:
        out.append(f"{var_name}={r.value}: {early} outlier step(s) early in the steady window: start-up cost is "
                   "probably left in; it might help to raise --warmup-steps")
    elif steps_out:
        out.append(f"{var_name}={r.value}: {steps_out} outlier step(s) (hyperfine's median/MAD rule): the machine was "
                   "noisy; it might help to use more --runs or a longer --steps")
    return out


def phase_shift(a: ValueResult, b: ValueResult, name: str) -> dict | None:
    """Where the step time moved from a to b: per-phase change in ms, largest first."""
    if a.step_ms is None or b.step_ms is None:
        return None
    pa, pb = a.phases_ms, b.phases_ms
    delta = {n: round(pb.get(n, 0.0) - pa.get(n, 0.0), 4) for n in list(pa) + [n for n in pb if n not in pa]}
    if a.untimed_ms is not None and b.untimed_ms is not None:
        delta["untimed"] = round(b.untimed_ms - a.untimed_ms, 4)
    total = b.step_ms - a.step_ms
    order = sorted(delta, key=lambda n: -abs(delta[n]))
    parts = []
    for n in order:
        share = f" ({delta[n] / total:.0%} of the change)" if n == order[0] and abs(total) > 1e-9 else ""
        parts.append(f"{n} {delta[n]:+.2f} ms{share}")
    line = (f"where the step time moved, {name} {a.value} → {b.value}: step {a.step_ms:.2f} → "
            f"{b.step_ms:.2f} ms; " + ", ".join(parts))
    return {"from": a.value, "to": b.value, "step_ms_from": a.step_ms, "step_ms_to": b.step_ms,
            "phases_ms_delta": delta, "line": line}


def conclude(results: list[ValueResult], var, limits: Limits, thread_env: dict[str, str]) -> dict:
    name = var.name
    where, warnings = scope(results, thread_env)
    numeric = var.numeric()
    num = dict(zip(var.values, numeric)) if numeric else {}
    measured = [r for r in results if not r.failed]
    for r in results:
        warnings += noise_warnings(r, name)
        if r.failed:
            why = "; ".join(sorted({x.error or x.status for x in r.runs}))
            warnings.append(f"{name}={r.value}: every run failed ({why}); not measured")
    changes = []
    plateau_at = None
    for a, b in zip(measured, measured[1:]):
        ma, mb = a.samples_per_s["mean"], b.samples_per_s["mean"]
        g = stats.gain(ma, mb)
        per2 = stats.gain_per_doubling(ma, mb, num[a.value], num[b.value]) if num else None
        judged = per2 if per2 is not None else g
        sa, sb = a.samples_per_s["stddev"], b.samples_per_s["stddev"]
        within = sa is not None and sb is not None and abs(mb - ma) <= sa + sb
        line = (f"{where}, {name} {a.value} \u2192 {b.value}: samples/s {fmt_rate(ma)} \u2192 {fmt_rate(mb)} "
                f"({fmt_pct(g)}" + (f", {fmt_pct(per2)} per doubling" if per2 is not None and
                                    num[b.value] != 2 * num[a.value] else "") + ")"
                + (" - within run-to-run noise" if within else ""))
        plateau = judged < limits.plateau_gain
        changes.append({"from": a.value, "to": b.value, "samples_per_s_from": ma, "samples_per_s_to": mb,
                        "gain": round(g, 4), "gain_per_doubling": None if per2 is None else round(per2, 4),
                        "within_noise": within, "plateau": plateau, "line": line})

    plateau_at, unsupported, dips = _plateau(measured, changes, num, limits)

    memory_at = None
    for r in measured:
        share = _share(r.rss_peak_bytes, limits.memory_limit_bytes)
        gshare = _share(r.gpu_peak_bytes, limits.gpu_total_bytes)
        if share is not None and share >= limits.memory_near:
            memory_at = (r, "memory", f"tree RSS peak {fmt_bytes(r.rss_peak_bytes)} is {share:.0%} of the "
                                      f"{fmt_bytes(limits.memory_limit_bytes)} limit")
            break
        if gshare is not None and gshare >= limits.memory_near:
            memory_at = (r, "gpu-memory", f"GPU memory peak {fmt_bytes(r.gpu_peak_bytes)} is {gshare:.0%} of the "
                                          f"{fmt_bytes(limits.gpu_total_bytes)} on the GPU(s)")
            break

    # "stop at": the earliest candidate wins; candidates at the same value give both reasons.
    candidates = []  # (index into measured, reason code, why)
    if plateau_at is not None:
        a, b, judged, unit = plateau_at
        candidates.append((measured.index(a), "plateau",
                           f"samples/s stops rising after {name} {a.value} ({name} {b.value}: {fmt_pct(judged)}"
                           f"{unit}, below the {limits.plateau_gain:.0%} threshold)"))
    no_safe = None
    if memory_at is not None:
        r, kind, text = memory_at
        i = measured.index(r)
        if i > 0:
            candidates.append((i - 1, kind, f"at {name} {r.value} the {text}"))
        else:
            no_safe = f"already at the first measured value {name} {r.value} the {text}"
    stop, reasons, why = None, [], []
    if candidates and no_safe is None:
        first = min(c[0] for c in candidates)
        stop = measured[first]
        reasons = [c[1] for c in candidates if c[0] == first]
        why = [c[2] for c in candidates if c[0] == first]
    if stop is not None:
        message = (f"stop at {name} {stop.value} for this parallel configuration ({where}): " + "; ".join(why)
                   + ". This is not a universal optimum: sweep again when workers, environments, model, precision "
                   "or transfer path change.")
    elif no_safe is not None:
        reasons = [memory_at[1]]
        message = f"no safe {name} in this sweep {where}: {no_safe}; try smaller values."
    elif unsupported is not None:
        message = (f"no stop point {where}: {unsupported}; one run per value cannot tell a plateau from run-to-run "
                   f"noise - use --runs 3 (or more) to find one.")
    elif dips:
        message = (f"no stop point within this sweep {where}: " + "; ".join(dips)
                   + "; extend the range or add --runs to see where it levels off.")
    elif len(measured) >= 2:
        last = changes[-1]
        per2 = last["gain_per_doubling"]
        memory = (f"memory is below {limits.memory_near:.0%} of its limit" if limits.memory_limit_bytes
                  else "the memory limit is unknown (give --memory-limit)")
        message = (f"no stop point within this sweep {where}: samples/s still rises at {name} {last['to']} "
                   f"({fmt_pct(per2 if per2 is not None else last['gain'])}{' per doubling' if per2 is not None else ''})"
                   f" and {memory}; extend the range to find where it levels off.")
    else:
        message = f"too few measured values to compare ({len(measured)} of {len(results)}); nothing to conclude."
    shift = phase_shift(plateau_at[0], plateau_at[1], name) if plateau_at else (
        phase_shift(measured[0], measured[-1], name) if len(measured) >= 2 else None)
    if any(len(r.ok_runs) < 2 for r in measured) and unsupported is None:
        warnings.append("one run per value gives no run-to-run spread: stddev is n/a; it might help to use --runs 3")
    return {
        "scope": where,
        "changes": changes,
        "phase_shift": shift,
        "stop_at": stop.value if stop is not None else None,
        "reasons": reasons,
        "message": message,
        "thresholds": {"plateau_gain": limits.plateau_gain, "memory_near": limits.memory_near},
        "memory_limit_bytes": limits.memory_limit_bytes,
        "gpu_total_bytes": limits.gpu_total_bytes,
    }, warnings


def _plateau(measured: list[ValueResult], changes: list[dict], num: dict, limits: Limits):
    """(plateau (a, b, gain, unit) or None, why a plateau is unsupported or None, dips rejected).

    A candidate a -> b (gain below the threshold) stands only when both have MIN_RUNS runs and
    no later value beats a by the threshold per doubling beyond the runs' spread."""
    unsupported, dips = None, []
    for i, ch in enumerate(changes):
        if not ch["plateau"]:
            continue
        a, b = measured[i], measured[i + 1]
        judged = ch["gain_per_doubling"] if ch["gain_per_doubling"] is not None else ch["gain"]
        unit = " per doubling" if ch["gain_per_doubling"] is not None else ""
        if len(a.ok_runs) < MIN_RUNS or len(b.ok_runs) < MIN_RUNS:
            unsupported = unsupported or (f"{a.value} \u2192 {b.value} gained {fmt_pct(judged)}{unit}, below the "
                                          f"{limits.plateau_gain:.0%} threshold, on {len(a.ok_runs)} and "
                                          f"{len(b.ok_runs)} run(s)")
            continue
        beaten = _beaten(a, measured[i + 2:], num, limits)
        if beaten is not None:
            c, gain = beaten
            dips.append(f"{a.value} \u2192 {b.value} gained {fmt_pct(judged)}{unit}, but {c.value} is "
                        f"{fmt_pct(gain)} over {a.value} ({fmt_rate(c.samples_per_s['mean'])} vs "
                        f"{fmt_rate(a.samples_per_s['mean'])} samples/s): a dip, not a plateau")
            continue
        return (a, b, judged, unit), None, dips
    return None, unsupported, dips


def _beaten(a: ValueResult, later: list[ValueResult], num: dict, limits: Limits):
    """The first later value that beats a by the plateau threshold (per doubling) beyond noise."""
    ma, sa = a.samples_per_s["mean"], a.samples_per_s["stddev"]
    for c in later:
        mc, sc = c.samples_per_s["mean"], c.samples_per_s["stddev"]
        per2 = stats.gain_per_doubling(ma, mc, num[a.value], num[c.value]) if num else None
        judged = per2 if per2 is not None else stats.gain(ma, mc)
        noise = (sa or 0.0) + (sc or 0.0)
        if judged >= limits.plateau_gain and mc - ma > noise:
            return c, stats.gain(ma, mc)
    return None


def _share(peak: int | None, limit: int | None) -> float | None:
    if peak is None or not limit:
        return None
    return peak / limit

"""``--plot F.png``: samples/s and memory peaks against the swept variable, in one picture.

matplotlib is the optional extra ``plot``; it is imported here only, so the rest of sweep
never needs it. Without it, ``render`` raises PlotUnavailable with the install line.
"""

from __future__ import annotations


MIB = 1024 * 1024


class PlotUnavailable(RuntimeError):
    pass


def render(sweep, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only; never needs a display
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'qg-audit[plot]' (or pip install matplotlib)") \
            from exc
    var = sweep.variable
    nums = var.numeric()
    positions = nums if nums and all(x > 0 for x in nums) else list(range(len(var.values)))
    log_x = bool(nums) and all(x > 0 for x in nums) and max(nums) / min(nums) >= 8
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    ok = [(x, r) for x, r in zip(positions, sweep.results) if not r.failed]
    if ok:
        xs = [x for x, _ in ok]
        means = [r.samples_per_s["mean"] for _, r in ok]
        errs = [r.samples_per_s["stddev"] or 0.0 for _, r in ok]
        ax.errorbar(xs, means, yerr=errs, marker="o", color="tab:blue", capsize=4, lw=2, label="samples/s (mean \u00b1 sd)")
    failed = [x for x, r in zip(positions, sweep.results) if r.failed]
    if failed:
        ax.scatter(failed, [0] * len(failed), marker="x", s=80, color="tab:red", zorder=5, label="failed value")
    ax.set_ylabel("samples/s", color="tab:blue")
    ax.set_xlabel(var.name)
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xticks(positions)
    ax.set_xticklabels(var.values)
    ax.grid(alpha=0.3)

    mem = ax.twinx()
    # memory of measured values only: a run that crashed early may have died before its peak
    rss = [(x, r.rss_peak_bytes / MIB) for x, r in ok if r.rss_peak_bytes]
    if rss:
        mem.plot([x for x, _ in rss], [y for _, y in rss], marker="s", ls="--", color="tab:orange",
                 label="tree RSS peak (MiB)")
    gpu = [(x, r.gpu_peak_bytes / MIB) for x, r in ok if r.gpu_peak_bytes is not None]
    if gpu:
        mem.plot([x for x, _ in gpu], [y for _, y in gpu], marker="^", ls=":", color="tab:green",
                 label="GPU memory peak (MiB)")
    con = sweep.conclusion
    limit = con.get("memory_limit_bytes")
    near = con.get("thresholds", {}).get("memory_near")
    top = max([y for _, y in rss + gpu] or [1.0])
    if limit and near and near * limit / MIB <= 2 * top:  # draw the line only when it is in view
        mem.axhline(near * limit / MIB, color="tab:orange", alpha=0.5, lw=1,
                    label=f"{near:.0%} of memory limit")
        top = max(top, near * limit / MIB)
    mem.set_ylabel("memory peak (MiB)", color="tab:orange")
    mem.set_ylim(0, top * 1.25)  # headroom for the legend
    ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
    stop = con.get("stop_at")
    if stop is not None and stop in var.values:
        x = positions[var.values.index(stop)]
        ax.axvline(x, color="black", ls="-.", alpha=0.6)
        ax.annotate(f"stop at {stop}", (x, 0), xytext=(5, 8), textcoords="offset points")
    lines = ax.get_legend_handles_labels()
    lines2 = mem.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left", fontsize=8)
    ax.set_title(f"sweep of {var.name}, {con.get('scope', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None



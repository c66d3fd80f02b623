"""Small, deterministic statistics for profiles: percentiles, windows, spikes."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation between closest ranks.

    Same definition as numpy's default ("linear") and Excel's PERCENTILE.INC:
    rank = (n - 1) * p / 100 over the sorted values. Empty input -> 0.0.
    """
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} is outside 0..100")
    xs = sorted(values)
    if not xs:
        return 0.0
    rank = (len(xs) - 1) * p / 100.0
    lo = int(rank)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (rank - lo)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def windows(n: int, size: int) -> list[tuple[int, int]]:
    """Split positions 0..n-1 into consecutive [start, end) windows of ``size``.

    A short last window is kept when it holds at least half a window, or when it is the
    only one; otherwise it is merged into the window before it, so no window's ratio rests
    on a handful of rows and no row is dropped.
    """
    if size < 1:
        raise ValueError("window size must be >= 1")
    if n <= 0:
        return []
    bounds = [(s, min(s + size, n)) for s in range(0, n, size)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] < (size + 1) // 2:
        last = bounds.pop()
        bounds[-1] = (bounds[-1][0], last[1])
    return bounds


def spike_indices(values: Sequence[float], factor: float) -> tuple[float, list[int]]:
    """Positions whose value exceeds ``factor`` x the median; returns (threshold, positions).

    The median, not the mean or max, is the reference so that the spikes themselves do not
    move the bar.
    """
    if factor <= 1:
        raise ValueError("spike factor must be > 1")
    if not values:
        return 0.0, []
    threshold = factor * percentile(values, 50)
    return threshold, [i for i, v in enumerate(values) if v > threshold]

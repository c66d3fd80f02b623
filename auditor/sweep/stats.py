"""Statistics over runs: mean +- stddev, min, max, and hyperfine's median/MAD outlier rule.

Outliers (hyperfine, src/outlier_detection.rs): the modified Z-score of x is
(x - median) / MAD, with MAD the median absolute deviation from the median; x is an outlier
when |z| > 14.826 (10 MADs scaled to standard deviations, 1.4826 x 10). With MAD = 0 any x
that differs from the median is an outlier (hyperfine gets +-inf there too). The threshold is
deliberately wide: timings have heavy tails, and we only want to flag runs that a quiet
machine would not have produced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

OUTLIER_THRESHOLD = 1.4826 * 10.0


def mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def stddev(xs: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1); None for fewer than two values (no spread is known)."""
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def median(xs: Sequence[float]) -> float | None:
    s = sorted(xs)
    n = len(s)
    if not n:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def modified_zscores(xs: Sequence[float]) -> list[float]:
    med = median(xs)
    if med is None:
        return []
    mad = median([abs(x - med) for x in xs])
    out = []
    for x in xs:
        d = x - med
        if mad:
            out.append(d / mad)
        else:
            out.append(0.0 if d == 0 else math.copysign(math.inf, d))
    return out


def outliers(xs: Sequence[float], threshold: float = OUTLIER_THRESHOLD) -> list[int]:
    """Positions of the values hyperfine would call statistical outliers."""
    return [i for i, z in enumerate(modified_zscores(xs)) if abs(z) > threshold]


def summary(xs: Sequence[float]) -> dict:
    """``{mean, stddev, min, max}`` as the JSON schema has it (all None when there is no value)."""
    return {"mean": mean(xs), "stddev": stddev(xs), "min": min(xs) if xs else None, "max": max(xs) if xs else None}


def gain(a: float, b: float) -> float:
    """Relative change from a to b (0.58 = +58%)."""
    return b / a - 1.0 if a else math.inf


def gain_per_doubling(a: float, b: float, va: float, vb: float) -> float | None:
    """The gain from a to b scaled to one doubling of the variable (va -> vb).

    16 -> 64 is two doublings, so +44% over it is +20% per doubling. None when the values are
    not positive and increasing (no doubling is defined).
    """
    if not (va > 0 and vb > va and a > 0 and b > 0):
        return None
    return (b / a) ** (1.0 / math.log2(vb / va)) - 1.0

"""Fairness and completion-time metrics of measured flows.

- :func:`jain_index`: Jain's fairness index ``(sum x)^2 / (n sum x^2)``, 1 when all are equal,
  ``1/n`` when one flow takes everything (the SEMPER paper's fairness metric).
- :func:`multihoming_metrics`: MMR (min / max throughput), STD (population standard deviation)
  and AVGT (mean throughput) of the multihoming flows, as in "Bandwidth Aggregation over
  Multihoming Links" §5.2.
- :func:`percentile`: the p-th percentile by linear interpolation (numpy's default).
- :func:`quantile_inf`: the same where some values are infinite (an unfinished transfer, a
  connection that never recovered), as flow-completion-time medians and tails need it.
- :func:`mean_interval`, :func:`median_interval`, :func:`paired_difference`: what repeated
  emulation draws say: a mean with its Student t interval, a median with its bootstrap interval,
  and whether two policies measured in the same draws differ (paired t interval) or tie.
"""

from __future__ import annotations

import math
from typing import Dict, Sequence, Tuple

import numpy as np

__all__ = ["jain_index", "multihoming_metrics", "percentile", "quantile_inf", "mean_interval",
           "median_interval", "paired_difference"]


def _values(x: Sequence[float], what: str) -> np.ndarray:
    a = np.asarray(list(x), dtype=np.float64)
    if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{what}: need finite values >= 0, got {list(x)!r}")
    return a


def jain_index(x: Sequence[float]) -> float:
    """Jain's fairness index of ``x`` (nan for no values; 1.0 when every value is 0)."""
    a = _values(x, "jain_index")
    if len(a) == 0:
        return math.nan
    sq = float((a * a).sum())
    return 1.0 if sq == 0 else float(a.sum()) ** 2 / (len(a) * sq)


def multihoming_metrics(throughputs: Sequence[float]) -> Dict[str, float]:
    """``{"mmr", "std", "avgt"}`` of per-flow throughputs (any unit; MMR is unitless)."""
    a = _values(throughputs, "multihoming_metrics")
    if len(a) == 0:
        return {"mmr": math.nan, "std": math.nan, "avgt": math.nan}
    top = float(a.max())
    return {"mmr": float(a.min()) / top if top > 0 else math.nan,
            "std": float(a.std()), "avgt": float(a.mean())}


def percentile(x: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``x``, linear interpolation; nan for no values."""
    a = np.asarray(list(x), dtype=np.float64)
    return math.nan if len(a) == 0 else float(np.percentile(a, p))


def quantile_inf(xs: Sequence[float], q: float) -> float:
    """Quantile ``q`` (0-1) of sorted ``xs`` by linear interpolation (numpy's default) where
    values may be infinite: between a finite and an infinite value, infinite; nan for none."""
    if not xs:
        return math.nan
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    w = pos - lo
    a, b = xs[lo], xs[hi]
    if w == 0 or a == b:
        return a
    if math.isinf(a) or math.isinf(b):
        return math.inf
    return a + (b - a) * w


def mean_interval(values: Sequence[float], level: float = 0.95) -> Tuple[float, float, float]:
    """Mean of ``values`` (one per independent draw) and its ``level`` confidence interval by
    Student's t: ``(mean, lo, hi)``; the interval is nan with fewer than 2 values. Infinite or
    nan values are left out."""
    from scipy import stats

    a = np.asarray([v for v in values if math.isfinite(v)], dtype=np.float64)
    if len(a) == 0:
        return math.nan, math.nan, math.nan
    m = float(a.mean())
    if len(a) < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))
    return m, m - half, m + half


def median_interval(values: Sequence[float], level: float = 0.95, *, resamples: int = 10_000,
                    seed: int = 0) -> Tuple[float, float, float]:
    """Median of ``values`` (one per draw; infinite allowed: an unfinished transfer) and its
    ``level`` percentile-bootstrap interval (``resamples`` resamples of the draws, seeded):
    ``(median, lo, hi)``; the interval is nan with fewer than 2 values."""
    a = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    if len(a) == 0:
        return math.nan, math.nan, math.nan
    med = float(np.median(a))
    if len(a) < 2:
        return med, math.nan, math.nan
    rng = np.random.default_rng(seed)
    boot = np.median(a[rng.integers(0, len(a), size=(resamples, len(a)))], axis=1)
    lo, hi = np.quantile(boot, [(1 - level) / 2, 0.5 + level / 2], method="inverted_cdf")
    return med, float(lo), float(hi)


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = 0.95, *,
                      cap: float = math.inf) -> Tuple[float, float, float, str]:
    """``a`` against ``b`` measured in the same draws (paired t): the mean of the differences
    a - b per draw, its ``level`` Student t interval, and ``"higher"``, ``"lower"`` or ``"tie"``
    (the interval holds 0, or fewer than 2 draws). Values above ``cap`` count as ``cap`` (an
    unfinished transfer's infinite time: worse than any finished one, not incomparable); a
    draw missing either value is left out."""
    if len(a) != len(b):
        raise ValueError("paired_difference: one value of each per draw")
    d = [min(x, cap) - min(y, cap) for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
    m, lo, hi = mean_interval([x for x in d if math.isfinite(x)], level)
    if math.isnan(lo) or lo <= 0 <= hi:
        return m, lo, hi, "tie"
    return m, lo, hi, "higher" if lo > 0 else "lower"

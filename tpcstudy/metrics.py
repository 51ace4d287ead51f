"""Fairness and completion-time metrics of measured flows.

- :func:`jain_index`: Jain's fairness index ``(sum x)^2 / (n sum x^2)``, 1 when all are equal,
  ``1/n`` when one flow takes everything (the SEMPER paper's fairness metric).
- :func:`multihoming_metrics`: MMR (min / max throughput), STD (population standard deviation)
  and AVGT (mean throughput) of the multihoming flows, as in "Bandwidth Aggregation over
  Multihoming Links" §5.2.
- :func:`percentile`: the p-th percentile by linear interpolation (numpy's default).
- :func:`quantile_inf`: the same where some values are infinite (an unfinished transfer, a
  connection that never recovered), as flow-completion-time medians and tails need it.
"""

from __future__ import annotations

import math
from typing import Dict, Sequence

import numpy as np

__all__ = ["jain_index", "multihoming_metrics", "percentile", "quantile_inf"]


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

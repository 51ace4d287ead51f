"""The baselines: ECMP (no SRH), uniformly random paths, and the LP optimum's static shares."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

import numpy as np

from ..errors import UsageError
from .base import Policy

__all__ = ["EcmpPolicy", "RandomPolicy", "LpPolicy"]


class EcmpPolicy(Policy):
    """No SRH: every connection follows the IGP, and the routers' ECMP hashing spreads them."""

    name = "ecmp"

    def _pick(self, dest: str, now: float) -> Optional[int]:
        return None


class RandomPolicy(Policy):
    """Uniformly random over the destination's paths (the TPC paper's baseline)."""

    name = "random"

    def _pick(self, dest: str, now: float) -> Optional[int]:
        return int(self.rng.integers(self._n(dest)))


class LpPolicy(Policy):
    """Static shares (e.g. the max-flow LP's flow on each path), by smooth weighted round robin.

    Smooth weighted round robin: every destination keeps a credit per path; each new connection
    adds every path's share to its credit, takes the path with the largest credit (ties: the lower
    index) and subtracts the total share from it. Over any run of connections the counts per path
    stay within one of ``share * connections``, deterministically.
    """

    name = "lp"

    def __init__(self, paths: Mapping[str, int], *, shares: Mapping[str, Sequence[float]],
                 seed: int = 0) -> None:
        super().__init__(paths, seed=seed)
        self.shares: Dict[str, np.ndarray] = {}
        for dest, n in self.paths.items():
            s = np.asarray(shares.get(dest, ()), dtype=np.float64)
            if s.shape != (n,) or not np.all(np.isfinite(s)) or np.any(s < 0):
                raise UsageError(f"policy lp: destination {dest!r} needs {n} shares >= 0, got "
                                 f"{s.tolist()}")
            self.shares[dest] = s if s.sum() > 0 else np.eye(n)[0]
        self._credit = {d: np.zeros(n) for d, n in self.paths.items()}

    def _pick(self, dest: str, now: float) -> Optional[int]:
        s, c = self.shares[dest], self._credit[dest]
        c += s
        best = int(np.argmax(c))  # argmax takes the first of equal credits
        c[best] -= s.sum()
        return best

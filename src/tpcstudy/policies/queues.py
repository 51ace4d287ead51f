"""The least congested path by per-hop queue occupancy, MAX or SUM ("Switches Know the Exact
Amount of Congestion", Arslan, McKeown)."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

import numpy as np

from ..errors import UsageError
from .base import Policy

__all__ = ["QueuePolicy"]


class QueuePolicy(Policy):
    """The least congested path, congestion from per-hop queue occupancy (Arslan, McKeown).

    Switches stamp each packet with the MAX (their proposal) or the SUM of the queueing delays it
    met; the host keeps the latest value per path (:meth:`queues`) and sends a new connection on
    the path with the smallest one (ties: fewer live connections, then the lower index). A path
    never reported counts as empty.
    """

    signals = frozenset({"queues"})
    AGGREGATES = ("max", "sum")

    def __init__(self, paths: Mapping[str, int], *, aggregate: str = "max", seed: int = 0) -> None:
        if aggregate not in self.AGGREGATES:
            raise UsageError(f"policy queue: aggregate = {aggregate!r}; choose from max, sum")
        self.name = f"queue-{aggregate}"
        super().__init__(paths, seed=seed)
        self.aggregate = aggregate
        self.signal = {d: np.zeros(n) for d, n in self.paths.items()}

    def queues(self, dest: str, path: int, now: float, delays: Sequence[float]) -> None:
        d = [float(x) for x in delays]
        self.signal[dest][path] = (max(d) if self.aggregate == "max" else sum(d)) if d else 0.0

    def _pick(self, dest: str, now: float) -> Optional[int]:
        s, c = self.signal[dest], self.counts(dest)
        return min(range(len(c)), key=lambda i: (s[i], c[i], i))

    def describe(self) -> Dict[str, object]:
        return {"name": self.name, "seed": self.seed, "aggregate": self.aggregate}

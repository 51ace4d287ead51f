"""The interface every host path-selection policy implements (see the package docstring)."""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import UsageError

__all__ = ["Policy"]


class Policy:
    """The interface every policy implements (module docstring).

    Parameters
    ----------
    paths
        Number of paths of each destination's table (destination name -> count, at least 1).
    seed
        Seed of the policy's random generator (only ``random`` and ``exp3`` draw numbers).
    """

    name = "policy"
    #: What the host must measure for this policy: a subset of {"rtt", "bytes", "queues"}.
    signals: FrozenSet[str] = frozenset()

    def __init__(self, paths: Mapping[str, int], *, seed: int = 0) -> None:
        self.paths: Dict[str, int] = {}
        for dest, n in paths.items():
            if int(n) < 1:
                raise UsageError(f"policy {self.name}: destination {dest!r} has {n} paths")
            self.paths[str(dest)] = int(n)
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        #: live connections: id -> (destination, path index or None)
        self.live: Dict[int, Tuple[str, Optional[int]]] = {}

    def _n(self, dest: str) -> int:
        try:
            return self.paths[dest]
        except KeyError:
            raise UsageError(f"policy {self.name}: no path table for destination {dest!r}") from None

    def _pick(self, dest: str, now: float) -> Optional[int]:
        raise NotImplementedError

    def choose(self, conn: int, dest: str, now: float) -> Optional[int]:
        """The path of new connection ``conn`` to ``dest`` (``None``: no SRH, plain routing)."""
        self._n(dest)
        if conn in self.live:
            raise UsageError(f"policy {self.name}: connection {conn} is already open")
        path = self._pick(dest, now)
        self.live[conn] = (dest, path)
        return path

    def progress(self, conn: int, now: float, *, srtt_us: Optional[float] = None,
                 acked_bytes: Optional[int] = None) -> Optional[int]:
        """A running connection's measurements; returns a new path for it, or ``None`` to stay."""
        return None

    def queues(self, dest: str, path: int, now: float, delays: Sequence[float]) -> None:
        """Per-hop queueing delays (seconds) along ``path`` of ``dest``, as stamped by switches."""

    def moves(self, now: float) -> List[Tuple[int, int]]:
        """Live connections to move now: ``[(connection, new path), ...]``."""
        return []

    def closed(self, conn: int, now: float, *, srtt_us: Optional[float] = None) -> None:
        """Connection ``conn`` ended (``srtt_us``: its last smoothed RTT, microseconds)."""
        self.live.pop(conn, None)

    def counts(self, dest: str) -> List[int]:
        """Live connections on each path of ``dest`` (connections without an SRH not counted)."""
        out = [0] * self._n(dest)
        for d, p in self.live.values():
            if d == dest and p is not None:
                out[p] += 1
        return out

    def describe(self) -> Dict[str, object]:
        """The policy's name and parameters, for meta.json."""
        return {"name": self.name, "seed": self.seed}

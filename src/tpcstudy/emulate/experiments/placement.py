"""Which TCP connections run where: the LP solution turned into connections (no root needed).

Per model, from the max-flow LP over the same pairs (:func:`tpcstudy.max_flow`):

- ``ecmp``: every pair the LP gives flow gets ``per_pair`` plain connections (no SRH): the
  routers' ECMP hashing spreads them over the pair's shortest paths.
- ``sr``: each pair's ``per_pair`` connections are placed on the LP's sr-paths of that pair in
  proportion to their flows (largest-remainder rounding, ties to the larger flow, then the LP's
  path order: deterministic); a connection carries its path's SRH (waypoints then the egress
  router), the direct path included, as the TPC agent always sets one.
- ``multipath`` (an ideal MPTCP that reaches every shortest path): the LP's individual shortest
  paths, placed like ``sr``; each path is pinned with an SRH of as few segments as express it
  (:func:`route_segments`: a segment may cover a stretch of the route only where that stretch is
  the unique shortest path between its ends), so it "can be placed" when that needs at most
  ``max_segments`` segments.

Pairs the LP leaves at zero flow get no connection: the question is how much of the LP's own
solution real TCP delivers. ``Placement.unserved`` counts them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Dict, List, Sequence, Tuple

from ...errors import UsageError
from ...models.maxflow import MaxFlowResult
from ...paths import shortest_paths
from ...topology import Topology

__all__ = ["Connection", "Placement", "largest_remainder", "place_connections", "route_segments",
           "FLOW_EPS"]

#: Flows below this (link units) count as zero.
FLOW_EPS = 1e-9


@dataclasses.dataclass(frozen=True)
class Connection:
    """One TCP connection to run.

    ``segments`` are router names in visit order, egress last; empty for a plain connection
    (routed by the IGP alone).
    """

    id: int
    model: str
    source: str
    destination: str
    path: Tuple[str, ...]
    segments: Tuple[str, ...]
    lp_flow: float


@dataclasses.dataclass
class Placement:
    model: str
    connections: List[Connection]
    pairs: int
    unserved: int
    unplaced_flow: float
    notes: List[str]

    @property
    def served_pairs(self) -> int:
        return self.pairs - self.unserved


def largest_remainder(weights: Sequence[float], total: int) -> List[int]:
    """Integers summing to ``total`` proportional to ``weights`` (Hamilton's method).

    Each gets ``floor(total * w / sum)``; the rest go one each to the largest remainders, ties to
    the larger weight, then the smaller index. All-zero weights give all zeros.
    """
    if total < 0:
        raise UsageError(f"total {total} must be >= 0")
    w = [max(0.0, float(x)) for x in weights]
    s = sum(w)
    if s <= 0 or total == 0:
        return [0] * len(w)
    quotas = [total * x / s for x in w]
    counts = [int(math.floor(q + 1e-12)) for q in quotas]
    left = total - sum(counts)
    order = sorted(range(len(w)), key=lambda i: (-(quotas[i] - counts[i]), -w[i], i))
    for i in order[:left]:
        counts[i] += 1
    return counts


def route_segments(topo: Topology, route: Sequence[str]) -> List[str]:
    """The fewest segments (router names, egress last) that pin packets to ``route``.

    Greedy from the source: each segment ends at the farthest router ``b`` such that the stretch
    ``a .. b`` of the route is the only IGP shortest path from ``a`` to ``b``. Raises
    :class:`UsageError` if some hop is not itself the unique shortest path (the route then cannot
    be pinned by segments).
    """
    if len(route) < 2:
        raise UsageError(f"route {list(route)} has no link")
    segs: List[str] = []
    a = 0
    while a < len(route) - 1:
        best = None
        for b in range(len(route) - 1, a, -1):
            stretch = list(route[a:b + 1])
            found = shortest_paths(topo, stretch[0], stretch[-1], limit=2)
            if len(found) == 1 and list(found[0]) == stretch:
                best = b
                break
        if best is None:
            raise UsageError(f"hop {route[a]} -> {route[a + 1]} of {list(route)} is not the only "
                             f"shortest path between its ends: no segment list pins it")
        segs.append(route[best])
        a = best
    return segs


def place_connections(topo: Topology, result: MaxFlowResult, *, per_pair: int,
                      first_id: int = 0, max_segments: int = 9) -> Placement:
    """Connections for ``result``'s model (module docstring)."""
    model = result.model
    if model not in ("ecmp", "sr", "multipath"):
        raise UsageError(f"model {model!r} cannot be placed on the emulated network (ecmp, sr, "
                         f"multipath)")
    if per_pair < 1:
        raise UsageError(f"connections per pair must be >= 1, got {per_pair}")
    by_pair: Dict[Tuple[str, str], List[Tuple[Tuple[str, ...], float]]] = {}
    for path, flow in zip(result.paths, result.flows.tolist()):
        if flow > FLOW_EPS:
            by_pair.setdefault((path[0], path[-1]), []).append((tuple(path), float(flow)))
    conns: List[Connection] = []
    notes: List[str] = []
    unserved = 0
    unplaced = 0.0
    cid = first_id
    for s, t in result.pairs:
        paths = by_pair.get((s, t), [])
        if not paths:
            unserved += 1
            continue
        placed: List[Tuple[Tuple[str, ...], float, Tuple[str, ...]]] = []
        for path, flow in paths:
            if model == "ecmp":
                placed.append((path, flow, ()))
            elif model == "sr":
                placed.append((path, flow, tuple(path[1:])))
            else:
                try:
                    pinned = route_segments(topo, path)
                except UsageError as exc:
                    notes.append(str(exc))
                    unplaced += flow
                    continue
                if len(pinned) > max_segments:
                    notes.append(f"{' -> '.join(path)} needs {len(pinned)} segments > "
                                  f"{max_segments}: not placed")
                    unplaced += flow
                    continue
                placed.append((path, flow, tuple(pinned)))
        counts = largest_remainder([f for _, f, _ in placed], per_pair)
        for (path, flow, segs), n in zip(placed, counts):
            for _ in range(n):
                conns.append(Connection(cid, model, s, t, path, segs, flow))
                cid += 1
    return Placement(model, conns, len(result.pairs), unserved, unplaced, notes)

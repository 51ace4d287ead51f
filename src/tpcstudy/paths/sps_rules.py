"""What one segment of an ``sps`` path occupies: the segment rules (docs/method.md §5).

``sps`` (Aubry et al. 2015, as used by the TPC paper) repeatedly takes the cheapest sr-path of at
most k segments that is still usable, removes the links it occupies and starts again. The paper
does not say what a segment occupies when its IGP route has equal-cost branches; each rule here is
one reading:

- ``dag`` (tpcstudy's default, the C++ core's ``sps``): a segment a -> b occupies its whole ECMP
  DAG (every shortest a -> b path of the original IGP) and is usable only when every link of that
  DAG is still there: what is disjoint is what the packets really cross.
- ``path``: a segment is ONE shortest path of the original IGP, the lexicographically smallest
  (at every router the next hop with the smallest id, as the core breaks ties); it is usable when
  that path's links are all still there, and occupies them only.
- ``any``: a segment is usable when SOME shortest a -> b path of the original IGP survives (the
  residual graph's distance equals the IGP's), and occupies the lexicographically smallest of the
  survivors. A waypoint list is taken at most once per pair (a host names waypoint lists, not
  routes), so k = 1 gives one path under every rule.

Under every rule the first path is the direct segment (the cheapest sr-path; fewest segments win
ties) occupying the route the rule gives it. For a pair one of whose routers has at most two links
(every edge-router pair) there are at most two link-disjoint paths, so the count at limit k is
``1 + (a second path of at most k segments exists)``; :func:`sps_rule_counts` computes exactly
that, one breadth-first search over segment counts per pair, for every k at once. Pairs whose two
routers both have more links are refused: the studies count edge-router pairs only, and the
general multi-path search exists for ``dag`` alone (:func:`~tpcstudy.paths.disjoint_paths_batch`).
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

import tpcstudy._core as _core

from ..errors import UsageError
from ..topology import Topology
from . import _pairs

__all__ = ["SEGMENT_RULES", "DEFAULT_SEGMENT_RULE", "check_segment_rules", "SegmentRuleTables",
           "sps_rule_second_segments", "sps_rule_counts"]

#: The segment rules and what each means (docs/method.md §5).
SEGMENT_RULES: Dict[str, str] = {
    "dag": "a segment occupies its whole ECMP DAG, usable only when all of it is left",
    "path": "a segment is its one lexicographically smallest shortest path",
    "any": "a segment is usable when some shortest path survives, and occupies that one",
}
#: The rule of the studies' ``sps`` rows and of the exported path tables.
DEFAULT_SEGMENT_RULE = "dag"


def check_segment_rules(rules: Iterable[str]) -> Tuple[str, ...]:
    """The rules, deduplicated in order, or a :class:`UsageError` naming the bad one."""
    out = tuple(dict.fromkeys(str(r).strip() for r in rules if str(r).strip()))
    if not out:
        raise UsageError(f"--segment-rule: give at least one of {', '.join(SEGMENT_RULES)}")
    for r in out:
        if r not in SEGMENT_RULES:
            raise UsageError(f"segment rule {r!r}: choose from {', '.join(SEGMENT_RULES)}")
    return out


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal cost (docs/method.md §3): exact for integers, within a relative 1e-9 otherwise;
    ``inf == inf`` is not a usable equality here (unreachable)."""
    fin = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        return fin & (np.abs(a - b) <= 1e-9 * np.maximum(1.0, np.abs(b)))


class SegmentRuleTables:
    """Per-topology tables the rules need: IGP distances, the lexicographically smallest
    route of every segment, and (``dag``) every segment's DAG, as per-link masks.

    ``uses[l]`` is an ``(n, n)`` boolean matrix: segment a -> b occupies link ``l`` (its route
    for ``path`` and ``any``'s first path, its DAG for ``dag``).
    """

    def __init__(self, topo: Topology, rule: str) -> None:
        check_segment_rules([rule])
        self.rule = rule
        self.topo = topo
        n, m = topo.num_nodes, topo.num_links
        self.n, self.m = n, m
        self.src = np.asarray(topo.arc_src, dtype=np.int64)
        self.dst = np.asarray(topo.arc_dst, dtype=np.int64)
        self.w = np.asarray(topo.arc_weight, dtype=np.float64)
        self.dist = np.asarray(_core.distance_matrix(topo.graph, 1))
        self.reach = np.isfinite(self.dist) & ~np.eye(n, dtype=bool)
        self.nexthop = self._next_hops()
        self.uses = self._dag_uses() if rule == "dag" else self._route_uses()

    def _next_hops(self) -> np.ndarray:
        """``nh[b, u]``: the arc u takes towards b on the lexicographically smallest shortest
        path (-1 at b or when b is unreachable)."""
        n, d = self.n, self.dist
        nh = np.full((n, n), -1, dtype=np.int64)
        on = _close(self.w[None, :] + d[self.dst, :].T, d[self.src, :].T)  # (b, arc)
        for b in range(n):
            arcs = np.flatnonzero(on[b])
            if not arcs.size:
                continue
            # smallest next router, then smallest arc
            order = np.lexsort((arcs, self.dst[arcs], self.src[arcs]))
            arcs = arcs[order]
            first = np.ones(arcs.size, dtype=bool)
            first[1:] = self.src[arcs[1:]] != self.src[arcs[:-1]]
            pick = arcs[first]
            nh[b, self.src[pick]] = pick
            nh[b, b] = -1
        return nh

    def _route_uses(self) -> np.ndarray:
        n, m, d = self.n, self.m, self.dist
        uses = np.zeros((m, n, n), dtype=bool)
        for b in range(n):
            links = np.zeros((n, m), dtype=bool)
            for a in np.argsort(d[:, b], kind="stable").tolist():
                arc = self.nexthop[b, a]
                if a == b or arc < 0:
                    continue
                links[a] = links[self.dst[arc]]
                links[a, arc // 2] = True
            uses[:, :, b] = links.T
        return uses

    def _dag_uses(self) -> np.ndarray:
        n, m, d = self.n, self.m, self.dist
        uses = np.zeros((m, n, n), dtype=bool)
        link = np.arange(2 * m) // 2
        for b in range(n):
            # arc u -> v is on a shortest a -> b path iff d(a, u) + w + d(v, b) == d(a, b)
            on = _close(d[:, self.src] + self.w[None, :] + d[self.dst, b][None, :],
                        d[:, b][:, None])  # (a, arc)
            for half in (0, 1):
                uses[link[half::2], :, b] |= on[:, half::2].T
        return uses

    def route_links(self, a: int, b: int) -> np.ndarray:
        """Links segment a -> b occupies under the rule with nothing removed."""
        return np.flatnonzero(self.uses[:, a, b])

    def usable(self, removed: np.ndarray) -> np.ndarray:
        """``(n, n)`` bool: segment a -> b is usable once the links ``removed`` (ids) are gone."""
        if self.rule == "any":
            dead = np.zeros(self.m, dtype=bool)
            dead[removed] = True
            alive = ~dead[np.arange(2 * self.m) // 2]
            g = _core.Graph(self.n, self.topo.arc_src[alive], self.topo.arc_dst[alive],
                            self.topo.arc_weight[alive])
            residual = np.asarray(_core.distance_matrix(g, 1))
            return self.reach & _close(residual, self.dist)
        if len(removed) == 0:
            return self.reach.copy()
        return self.reach & ~self.uses[removed].any(axis=0)


def sps_rule_second_segments(tables: SegmentRuleTables, s: int, t: int,
                             kmax: int) -> int:
    """Fewest segments of a second ``sps`` path of (s, t) under the tables' rule, once the
    first (the direct segment, occupying its route under the rule) is removed: 0 when none has
    at most ``kmax`` segments, -1 when t is unreachable from s."""
    if s == t or not tables.reach[s, t]:
        return -1
    usable = tables.usable(tables.route_links(s, t))
    usable[s, t] = False  # the direct waypoint list is taken (the first path)
    seen = np.zeros(tables.n, dtype=bool)
    seen[s] = True
    frontier = seen.copy()
    for depth in range(1, kmax + 1):
        step: np.ndarray = np.asarray(usable[frontier].any(axis=0))
        if step[t]:
            return depth
        step[t] = False
        frontier = step & ~seen
        if not frontier.any():
            return 0
        seen |= frontier
    return 0


def sps_rule_counts(topo: Topology, sources: Union[Sequence[int], np.ndarray],
                    targets: Union[Sequence[int], np.ndarray],
                    ks: Iterable[int], rule: str, *,
                    tables: Optional[SegmentRuleTables] = None) -> Dict[int, np.ndarray]:
    """Number of ``sps`` paths of each pair under ``rule`` for every limit in ``ks``.

    Parameters
    ----------
    topo
        The topology (paths are disjoint by its links: pass ``topo.merged()`` to count
        parallel links as one).
    sources, targets
        Router ids of the pairs; in each pair one router has at most two links (the study's
        edge-router pairs), else a :class:`UsageError`.
    ks
        Segment limits (>= 1).
    rule
        A key of :data:`SEGMENT_RULES`.

    Returns
    -------
    dict
        ``k -> int32 counts`` (0: unreachable, else 1 or 2).
    """
    s, t = _pairs(topo, sources, targets)
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise UsageError(f"segment limits must be >= 1, got {ks}")
    deg = topo.degree
    big = np.flatnonzero(np.minimum(deg[s], deg[t]) > 2)
    if big.size:
        i = int(big[0])
        raise UsageError(f"segment rule {rule!r}: pair ({topo.names[s[i]]}, {topo.names[t[i]]}) "
                         "has more than two links at both ends; the rules count pairs with an "
                         "edge router (at most two disjoint paths)")
    tab = tables if tables is not None else SegmentRuleTables(topo, rule)
    second = np.array([sps_rule_second_segments(tab, int(a), int(b), ks[-1])
                       for a, b in zip(s.tolist(), t.tolist())], dtype=np.int64)
    out = {}
    for k in ks:
        out[k] = np.where(second < 0, 0, 1 + ((second > 0) & (second <= k))).astype(np.int32)
    return out

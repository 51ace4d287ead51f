"""Concrete paths of multipath subflows under per-hop ECMP hashing (docs/method.md §4, `mptcp`).

A multipath transport (MPTCP, SEMPER) opens K subflows per pair and lets the network hash each
one: at every router of the pair's shortest-path DAG a subflow takes one next hop, uniformly at
random and independently of the other routers and subflows (a per-router hash seed over the
5-tuple). Each subflow therefore follows ONE concrete shortest path; the pair can use only the
distinct paths its K subflows drew.

- :func:`next_hops`: the shortest-path next hops of every router towards every target, as CSR
  arrays, under the equal-cost rule of docs/method.md §3 (the same DAGs as the C++ core).
- :func:`draw_subflows`: the paths K subflows of each pair draw, deduplicated per pair.
  Subflow ``j`` of a pair draws from its own random stream (seeded by ``(seed, j)``), so the
  draws of K subflows are the first K of any larger K: the path sets are nested and the model's
  value can only grow with K for a fixed seed.
- :func:`path_distribution`: every shortest path of one pair with the probability one subflow
  takes it (the exact law the draws sample), for oracles on small graphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from .. import paths as _paths
from ..topology import Topology

#: Multipliers of the two path hashes (odd 64-bit constants).
_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)

__all__ = ["NextHops", "SubflowPaths", "next_hops", "draw_subflows", "path_distribution"]


@dataclass(frozen=True)
class NextHops:
    """Next-hop arcs towards each target: for target ``t`` and router ``u`` the arcs
    ``arcs[offsets[t, u]:offsets[t, u + 1]]`` (ascending arc ids; empty at ``t`` itself and
    where ``t`` is unreachable)."""

    offsets: np.ndarray  # int64, (n, n + 1)
    arcs: np.ndarray     # int32, flat

    def of(self, u: int, t: int) -> np.ndarray:
        return self.arcs[self.offsets[t, u]:self.offsets[t, u + 1]]


def next_hops(topo: Topology) -> NextHops:
    """Every router's shortest-path next hops towards every target (docs/method.md §3)."""
    n, m = topo.num_nodes, 2 * topo.num_links
    dist = _paths.distance_matrix(topo)  # (n, n)
    src, dst, w = topo.arc_src, topo.arc_dst, topo.arc_weight
    via = w[:, None] + dist[dst, :]      # (arcs, targets): cost of leaving by the arc
    here = dist[src, :]
    if np.all(w == np.floor(w)) and np.all(w <= 9.0e15):
        on = via == here
    else:
        on = np.abs(via - here) <= 1e-9 * np.maximum(np.abs(via), np.abs(here))
    on &= np.isfinite(here) & (src[:, None] != np.arange(n)[None, :])
    # group by (target, router), arcs ascending: order arcs by (target, src, arc id)
    arc_id, target = np.nonzero(on)
    order = np.lexsort((arc_id, src[arc_id], target))
    arc_id, target = arc_id[order], target[order]
    key = target.astype(np.int64) * n + src[arc_id]
    counts = np.bincount(key, minlength=n * n).reshape(n, n)
    offsets = np.zeros((n, n + 1), dtype=np.int64)
    offsets[:, 1:] = np.cumsum(counts, axis=1)
    offsets += np.concatenate(([0], np.cumsum(counts.sum(axis=1))[:-1]))[:, None]
    del m
    return NextHops(offsets, arc_id.astype(np.int32))


@dataclass(frozen=True)
class SubflowPaths:
    """The distinct paths the subflows of each pair drew.

    Pair ``i`` owns paths ``pair_offsets[i]:pair_offsets[i + 1]``; path ``p`` is the arc list
    ``arcs[arc_offsets[p]:arc_offsets[p + 1]]`` in travel order, drawn by ``hits[p]`` of the
    pair's subflows. Paths of a pair are in the order of the first subflow that drew them.
    """

    subflows: int
    seed: int
    pair_offsets: np.ndarray
    arc_offsets: np.ndarray
    arcs: np.ndarray
    hits: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """Distinct paths per pair."""
        return np.diff(self.pair_offsets)

    def paths(self, i: int) -> List[np.ndarray]:
        o = self.arc_offsets
        return [self.arcs[o[p]:o[p + 1]] for p in range(self.pair_offsets[i], self.pair_offsets[i + 1])]


def draw_subflows(topo: Topology, sources: np.ndarray, targets: np.ndarray, subflows: int,
                  seed: int, *, hops: NextHops | None = None) -> SubflowPaths:
    """The paths ``subflows`` subflows of each (source, target) pair take under per-hop hashing.

    Deterministic for (topology, pairs, subflows, seed); nested in ``subflows`` (module
    docstring). A pair whose target is unreachable, or whose source is its target, gets no path.
    """
    if int(subflows) < 1:
        raise ValueError(f"subflows = {subflows!r} must be >= 1")
    k = int(subflows)
    S = np.asarray(sources, dtype=np.int64)
    T = np.asarray(targets, dtype=np.int64)
    nh = next_hops(topo) if hops is None else hops
    n = topo.num_nodes
    npairs = len(S)
    # walkers: pair-major, subflow-minor
    ws = np.repeat(S, k)
    wt = np.repeat(T, k)
    nw = len(ws)
    live = (ws != wt) & (nh.offsets[wt, ws + 1] > nh.offsets[wt, ws])
    has_path = live.copy()
    pos = ws.copy()
    path_arcs = np.full((nw, 16), -1, dtype=np.int32)  # rows left-aligned, -1 after the target
    nsteps = 0
    # two polynomial hashes of each walker's arc sequence (uint64, wrapping), to find equal paths
    h1 = np.zeros(nw, dtype=np.uint64)
    h2 = np.zeros(nw, dtype=np.uint64)
    # one random stream per subflow index: the draws of subflow j do not depend on k
    streams = [np.random.default_rng([int(seed), j]) for j in range(k)]
    with np.errstate(over="ignore"):
        for _ in range(n):
            if not live.any():
                break
            u = np.stack([st.random(npairs) for st in streams], axis=1).reshape(-1)
            idx = np.flatnonzero(live)
            lo = nh.offsets[wt[idx], pos[idx]]
            cnt = nh.offsets[wt[idx], pos[idx] + 1] - lo
            pick = lo + np.minimum((u[idx] * cnt).astype(np.int64), cnt - 1)
            arc = nh.arcs[pick]
            if nsteps == path_arcs.shape[1]:
                path_arcs = np.concatenate([path_arcs, np.full_like(path_arcs, -1)], axis=1)
            path_arcs[idx, nsteps] = arc
            nsteps += 1
            code = arc.astype(np.uint64) + np.uint64(1)
            h1[idx] = h1[idx] * _P1 + code
            h2[idx] = h2[idx] * _P2 + code
            pos[idx] = topo.arc_dst[arc]
            live[idx] = pos[idx] != wt[idx]
    path_arcs = path_arcs[:, :nsteps]
    pair_of = np.repeat(np.arange(npairs, dtype=np.int64), k)
    keep = np.flatnonzero(has_path)
    keys = np.stack([pair_of[keep], h1[keep].view(np.int64), h2[keep].view(np.int64)], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    rep = keep[first][inverse]
    if any(not np.array_equal(path_arcs[keep[i:i + 65536]], path_arcs[rep[i:i + 65536]])
           for i in range(0, len(keep), 65536)):
        # a hash collision (never seen): fall back to comparing the arc rows themselves
        rows = np.concatenate([pair_of[keep, None], path_arcs[keep]], axis=1)
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    hits = np.bincount(inverse, minlength=len(first))
    chosen = keep[first]
    order = np.argsort(chosen, kind="stable")  # pair-major, then first subflow that drew it
    chosen, hits = chosen[order], hits[order]
    rows_kept = path_arcs[chosen]
    lengths = (rows_kept >= 0).sum(axis=1)
    arc_offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
    arc_offsets[1:] = np.cumsum(lengths)
    arcs = rows_kept[rows_kept >= 0].astype(np.int32)
    pair_offsets = np.zeros(npairs + 1, dtype=np.int64)
    pair_offsets[1:] = np.cumsum(np.bincount(pair_of[chosen], minlength=npairs))
    return SubflowPaths(k, int(seed), pair_offsets, arc_offsets, arcs, hits.astype(np.int64))


def path_distribution(topo: Topology, source: int, target: int,
                      hops: NextHops | None = None) -> Dict[Tuple[int, ...], float]:
    """Every shortest ``source -> target`` path (arc tuple) with the probability that one
    subflow takes it: the product of ``1 / |next hops|`` over the routers it leaves."""
    nh = next_hops(topo) if hops is None else hops
    out: Dict[Tuple[int, ...], float] = {}
    if source == target:
        return out
    stack: List[Tuple[int, Tuple[int, ...], float]] = [(int(source), (), 1.0)]
    while stack:
        u, arcs, p = stack.pop()
        if u == target:
            out[arcs] = out.get(arcs, 0.0) + p
            continue
        nxt = nh.of(u, int(target))
        for a in nxt.tolist():
            stack.append((int(topo.arc_dst[a]), arcs + (a,), p / len(nxt)))
    return out


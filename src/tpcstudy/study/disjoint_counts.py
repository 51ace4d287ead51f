"""The disjoint-path study's per-pair computations: sps counts for every segment limit (with an
exact shortcut) and the failure view of the exported path sets (docs/method.md §5-6).

**Exact shortcut for sps.** For a pair with ``min(deg s, deg t) <= 2`` (every edge-router pair)
at most two disjoint paths exist, and the first ``sps`` path is the direct segment for every
``k`` (the cheapest sr-path, ties to fewer segments). So ``count(k) = 2`` implies
``count(k + 1) = 2``, and ``count(k + 1) <= 1`` implies ``count(k) = count(k + 1)``. More: a
second path found at any limit with ``j`` segments is a second path at every limit ``k >= j``,
so ``count(k) = 2`` there too (the search at k = 4 mostly finds two- or three-segment second
paths, which settles k = 2 and 3 for those pairs). Counts known this way are not recomputed;
for the small pairs still open at a limit k >= 2, whether a second path of at most k segments
exists is a breadth-first search over segment counts (:func:`~tpcstudy.paths.sps_second_segments`),
not a cost search: on Kdl's edge pairs it gives the same counts at every k in half the time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Tuple

import numpy as np

from ..paths import DEFAULT_PATHS, DisjointPathBatch, disjoint_paths_batch, sps_second_segments
from ..topology import Topology

__all__ = ["sps_counts", "FailureView", "failure_view"]


def sps_counts(topo: Topology, sources: np.ndarray, targets: np.ndarray, ks: Iterable[int], *,
               full: Iterable[int] = (), exact: bool = False,
               threads: int = 1) -> Tuple[Dict[int, np.ndarray], Dict[int, DisjointPathBatch]]:
    """Number of sps paths of every pair for every ``k``, with the exact shortcut of the module
    docstring.

    Parameters
    ----------
    topo, sources, targets
        The topology and the pairs (router ids).
    ks
        Segment limits.
    full
        Limits computed in full for every pair first (their batches are returned).
    exact
        Compute every limit in full (no shortcut; every batch returned).
    threads
        Core threads.

    Returns
    -------
    counts : dict
        ``k -> int32 counts`` per pair.
    batches : dict
        ``k -> DisjointPathBatch`` for the limits computed in full.
    """
    ks = sorted(set(int(k) for k in ks))
    first = sorted(set(int(k) for k in full) | (set(ks) if exact else set()))
    deg = topo.degree
    small = np.minimum(deg[sources], deg[targets]) <= 2  # at most two disjoint paths
    counts: Dict[int, np.ndarray] = {}
    batches: Dict[int, DisjointPathBatch] = {}
    # fewest segments of a second path found so far (small pairs; 99: none found)
    second = np.full(len(sources), 99, dtype=np.int64)

    def note_second(b: DisjointPathBatch, idx: np.ndarray) -> None:
        two = np.flatnonzero(b.counts >= 2)
        p = b.pair_offsets[two] + 1  # the pair's second path
        segs = b.waypoint_offsets[p + 1] - b.waypoint_offsets[p] + 1
        second[idx[two]] = np.minimum(second[idx[two]], segs)

    everyone = np.arange(len(sources))
    for k in first:
        b = disjoint_paths_batch(topo, sources, targets, method="sps", k=k, threads=threads)
        batches[k], counts[k] = b, b.counts
        note_second(b, everyone)
    for k in ks:
        if k in counts:
            continue
        value = np.full(len(sources), -1, dtype=np.int32)
        lower = [j for j in counts if j < k]
        upper = sorted(j for j in counts if j > k)
        for j in lower:  # count(j) = 2 for some j < k -> count(k) = 2
            value[small & (counts[j] >= 2)] = 2
        value[small & (second <= k)] = 2  # a second path of <= k segments is known
        for j in reversed(upper):  # nearest j > k last: count(j) <= 1 -> count(k) = count(j)
            hit = small & (counts[j] <= 1)
            value[hit] = counts[j][hit]
        todo = np.flatnonzero(value < 0)
        if k >= 2:  # small pairs: does a second path of <= k segments exist?
            few = todo[small[todo]]
            if few.size:
                segs = sps_second_segments(topo, sources[few], targets[few], k, threads=threads)
                value[few] = np.where(segs < 0, 0, 1 + (segs > 0))
                found = segs > 0
                second[few[found]] = np.minimum(second[few[found]], segs[found])
            todo = todo[~small[todo]]
        if todo.size:
            b = disjoint_paths_batch(topo, sources[todo], targets[todo], method="sps", k=k,
                                     threads=threads)
            value[todo] = b.counts
            note_second(b, todo)
        counts[k] = value
    return {k: counts[k] for k in ks}, batches


@dataclass
class FailureView:
    """The exported path set of each pair and what a single link failure does to it."""

    sizes: np.ndarray      # int32: paths in the exported set
    survive: np.ndarray    # bool: some path avoids every single failed link
    overlap: np.ndarray    # bool: slot 0 and slot 1 share a link
    backup: np.ndarray     # bool: the set has at least two paths
    sets: List[List[Tuple[Tuple[int, ...], frozenset]]] = field(default_factory=list)


def failure_view(sps: DisjointPathBatch, *, max_paths: int = DEFAULT_PATHS,
                 keep_sets: bool = False) -> FailureView:
    """Build each pair's exported path set and test it against every single link failure.

    The set is :meth:`DisjointPathBatch.exported`, as in the TPC path tables: slot 0 is the
    plain IGP shortest path (the direct segment, occupying its whole ECMP DAG), then the pair's
    other ``sps`` paths in the order found, at most ``max_paths`` in all.

    Parameters
    ----------
    sps
        The ``sps`` paths of the pairs (normally ``k = 4``).
    max_paths
        Paths per pair, slot 0 included.
    keep_sets
        Keep each pair's set as ``(waypoints, links)`` tuples in ``FailureView.sets`` (tests).
    """
    n = len(sps)
    sizes = np.zeros(n, dtype=np.int32)
    survive = np.zeros(n, dtype=bool)
    overlap = np.zeros(n, dtype=bool)
    wo, lo = sps.waypoint_offsets, sps.link_offsets
    wps, links = sps.waypoints, sps.links
    sets: List[List[Tuple[Tuple[int, ...], frozenset]]] = []
    for i in range(n):
        chosen = [(tuple(wps[wo[p]:wo[p + 1]].tolist()), frozenset(links[lo[p]:lo[p + 1]].tolist()))
                  for p in sps.exported(i, max_paths)]
        sizes[i] = len(chosen)
        if chosen:
            survive[i] = not frozenset.intersection(*(c[1] for c in chosen))
        if len(chosen) >= 2:
            overlap[i] = bool(chosen[0][1] & chosen[1][1])
        if keep_sets:
            sets.append(chosen)
    return FailureView(sizes, survive, overlap, sizes >= 2, sets)

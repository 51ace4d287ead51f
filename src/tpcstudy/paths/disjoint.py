"""Link-disjoint paths (docs/method.md §5): ``max`` (a max flow), ``greedy`` (shortest path,
remove its links, repeat) and ``sps`` (the shortest sr-path of at most k segments whose ECMP DAGs
avoid removed links; remove the DAGs' links, repeat), for one pair by name
(:func:`edge_disjoint_paths`) or many by id (:func:`disjoint_paths_batch`), in the C++ core.
Part of :mod:`tpcstudy.paths` (its helpers, names and threads rules)."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple, cast

import numpy as np

import tpcstudy._core as _core

from ..errors import UsageError
from ..topology import Topology
from . import _node, _pairs, _routing, _threads, segment_limit

__all__ = ["DISJOINT_METHODS", "DisjointPath", "DisjointPathBatch", "disjoint_paths_batch",
           "disjoint_path_counts", "edge_disjoint_paths", "edge_disjoint_path_count",
           "sps_second_segments"]

#: Link-disjoint path methods (docs/method.md §5) and their core codes.
DISJOINT_METHODS = {"max": 0, "greedy": 1, "sps": 2}

#: Pairs per core call in batch functions: the GIL is released inside a chunk and Ctrl-C lands
#: between chunks.
_CHUNK = 8192

@dataclasses.dataclass
class DisjointPathBatch:
    """Link-disjoint paths of many pairs, as nested CSR arrays.

    Pair ``i`` owns paths ``pair_offsets[i]:pair_offsets[i + 1]``; path ``p`` has the nodes
    ``nodes[node_offsets[p]:node_offsets[p + 1]]`` (source first), the waypoints
    ``waypoints[waypoint_offsets[p]:...]`` (sps only, else empty), occupies the undirected links
    ``links[link_offsets[p]:...]`` (sorted) and has IGP cost ``costs[p]`` (sps: the sum of its
    segments' distances).
    """

    method: str
    k: Optional[int]
    sources: np.ndarray
    targets: np.ndarray
    pair_offsets: np.ndarray
    node_offsets: np.ndarray
    nodes: np.ndarray
    waypoint_offsets: np.ndarray
    waypoints: np.ndarray
    link_offsets: np.ndarray
    links: np.ndarray
    costs: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """Number of paths of each pair (int32)."""
        return np.diff(self.pair_offsets).astype(np.int32)

    def exported(self, i: int, max_paths: int) -> List[int]:
        """The path set a host gets for pair ``i``: batch path indices, default path first.

        The rule of the TPC path tables (and of the disjoint study's failure view): the pair's
        paths in the order found, skipping any whose waypoint sequence was already taken, at
        most ``max_paths``. For ``sps`` the first path found is always the direct segment (no
        link is removed yet, and ties prefer fewer segments), i.e. the plain IGP shortest path
        with its whole ECMP DAG, so slot 0 is the default route.
        """
        o, wo, w = self.pair_offsets, self.waypoint_offsets, self.waypoints
        out: List[int] = []
        seen: set = set()
        for p in range(int(o[i]), int(o[i + 1])):
            if len(out) >= max_paths:
                break
            key = tuple(w[wo[p]:wo[p + 1]].tolist())
            if key not in seen:
                seen.add(key)
                out.append(p)
        return out

    def __len__(self) -> int:
        return len(self.sources)

    def _range(self, i: int) -> range:
        return range(int(self.pair_offsets[i]), int(self.pair_offsets[i + 1]))

    def paths(self, i: int) -> List[np.ndarray]:
        """Node-id arrays of pair ``i``'s paths, in the order found."""
        o = self.node_offsets
        return [self.nodes[o[p]:o[p + 1]] for p in self._range(i)]

    def path_waypoints(self, i: int) -> List[np.ndarray]:
        """Waypoint-id arrays of pair ``i``'s paths (sps; empty arrays otherwise)."""
        o = self.waypoint_offsets
        return [self.waypoints[o[p]:o[p + 1]] for p in self._range(i)]

    def path_links(self, i: int) -> List[np.ndarray]:
        """Undirected link ids each of pair ``i``'s paths occupies."""
        o = self.link_offsets
        return [self.links[o[p]:o[p + 1]] for p in self._range(i)]


def _method(method: str, k: Optional[int]) -> Tuple[int, int]:
    if method not in DISJOINT_METHODS:
        raise UsageError(f"unknown disjoint-path method {method!r}; choose from "
                         f"{', '.join(DISJOINT_METHODS)}")
    if method == "sps":
        if k is None or int(k) < 1:
            raise UsageError(f"method 'sps' needs a segment limit k >= 1, got k={k!r}")
        return DISJOINT_METHODS[method], int(k)
    return DISJOINT_METHODS[method], 1


def _concat(parts: List[np.ndarray], offsets: List[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Join CSR chunks: shift each chunk's offsets by the items before it."""
    out_off, shift = [np.zeros(1, dtype=np.int64)], 0
    for off in offsets:
        out_off.append(np.asarray(off[1:], dtype=np.int64) + shift)
        shift += int(off[-1])
    items = np.concatenate(parts) if parts else np.zeros(0)
    return np.concatenate(out_off), items


def disjoint_paths_batch(topo: Topology, sources: np.ndarray, targets: np.ndarray, *,
                         method: str = "max", k: Optional[int] = None,
                         threads: int = 0) -> DisjointPathBatch:
    """Link-disjoint paths for many pairs in one core call per chunk (docs/method.md §5).

    Parameters
    ----------
    topo
        The topology.
    sources, targets
        Router ids of the pairs.
    method
        ``"max"`` (Edmonds-Karp max flow with path decomposition: the largest number),
        ``"greedy"`` (shortest path by IGP weight, remove its links, repeat) or ``"sps"``
        (shortest path expressible with at most ``k`` segments of the original IGP whose ECMP
        DAGs avoid removed links; remove the union of those DAGs' links; repeat).
    k
        Segment limit, required for ``"sps"``.
    threads
        Core threads (``0``: :func:`default_threads`); never more than the CPUs available.
        The GIL is released meanwhile.

    Returns
    -------
    DisjointPathBatch
    """
    code, kk = _method(method, k)
    s, t = _pairs(topo, sources, targets)
    graph = topo.graph
    routing = _routing(topo) if method == "sps" else None
    th = _threads(threads)
    chunks = [_core.disjoint_paths(graph, routing, s[i:i + _CHUNK], t[i:i + _CHUNK], code, kk, th)
              for i in range(0, len(s), _CHUNK)]
    pair_off = [np.asarray(c[0]) for c in chunks]
    out: Dict[str, Any] = {}
    for name, oi, ii, dtype in (("nodes", 1, 2, np.int32), ("waypoints", 3, 4, np.int32),
                                ("links", 5, 6, np.int32)):
        off, items = _concat([np.asarray(c[ii]) for c in chunks], [np.asarray(c[oi]) for c in chunks])
        out[name] = (off, items.astype(dtype, copy=False))
    po, _ = _concat([], pair_off) if chunks else (np.zeros(1, dtype=np.int64), None)
    costs = (np.concatenate([np.asarray(c[7]) for c in chunks]) if chunks
             else np.zeros(0, dtype=np.float64))
    return DisjointPathBatch(
        method=method, k=kk if method == "sps" else None, sources=s, targets=t, pair_offsets=po,
        node_offsets=out["nodes"][0], nodes=out["nodes"][1],
        waypoint_offsets=out["waypoints"][0], waypoints=out["waypoints"][1],
        link_offsets=out["links"][0], links=out["links"][1], costs=costs)


def disjoint_path_counts(topo: Topology, sources: np.ndarray, targets: np.ndarray, *,
                         method: str = "max", k: Optional[int] = None,
                         threads: int = 0) -> np.ndarray:
    """Number of link-disjoint paths of each pair (int32); see :func:`disjoint_paths_batch`."""
    return disjoint_paths_batch(topo, sources, targets, method=method, k=k,
                                threads=threads).counts


@dataclasses.dataclass(frozen=True)
class DisjointPath:
    """One link-disjoint path with what explains it (``edge_disjoint_paths(detail=True)``).

    Attributes
    ----------
    nodes
        One concrete route, source first (for ``sps`` the lexicographically smallest shortest
        path of each segment).
    waypoints
        ``sps``: the intermediate routers the SRH names (empty: the direct segment, plain ECMP
        routing); empty for ``max`` and ``greedy``.
    links
        The undirected links the path occupies as ``(name, name)``, sorted: for ``sps`` every
        link of its segments' ECMP DAGs (what the next paths must avoid), else the route's.
    cost
        IGP cost (``sps``: the sum of its segments' distances).
    """

    nodes: List[str]
    waypoints: List[str]
    links: List[Tuple[str, str]]
    cost: float


def edge_disjoint_paths(topo: Topology, source: Any, target: Any, *, method: str = "max",
                        k: Optional[int] = None, detail: bool = False) -> List[Any]:
    """Link-disjoint paths from ``source`` to ``target`` (docs/method.md §5).

    Parameters
    ----------
    topo
        The topology.
    source, target
        Router names or ids.
    method
        ``"max"``, ``"greedy"`` or ``"sps"`` (see :func:`disjoint_paths_batch`).
    k
        Segment limit, required for ``"sps"``.
    detail
        Return :class:`DisjointPath` records (route, waypoints, occupied links, cost) instead
        of node lists: what makes an ``sps`` answer understandable (e.g. one path whose
        direct segment's ECMP DAG takes every link out of the source).

    Returns
    -------
    list of list of str, or list of DisjointPath
        One node list per path, in the order found. For ``"sps"`` each path is one concrete route
        (the lexicographically smallest shortest path of each segment); ``detail=True`` adds its
        waypoints and the links its ECMP DAGs occupy. ``[]`` when ``source == target`` or no
        path exists.
    """
    code, kk = _method(method, k)
    s, t = _node(topo, source), _node(topo, target)
    names = topo.names
    if detail:
        b = disjoint_paths_batch(topo, np.asarray([s], dtype=np.int32),
                                 np.asarray([t], dtype=np.int32), method=method, k=k, threads=1)
        lu, lv = topo.link_u, topo.link_v
        out = []
        def part(off: np.ndarray, items: np.ndarray, p: int) -> List[int]:
            return items[off[p]:off[p + 1]].tolist()

        for p in range(int(b.pair_offsets[0]), int(b.pair_offsets[1])):
            out.append(DisjointPath(
                nodes=[names[x] for x in part(b.node_offsets, b.nodes, p)],
                waypoints=[names[x] for x in part(b.waypoint_offsets, b.waypoints, p)],
                links=[(names[int(lu[e])], names[int(lv[e])])
                       for e in part(b.link_offsets, b.links, p)],
                cost=float(b.costs[p])))
        return out
    routing = _routing(topo) if method == "sps" else None
    # the core's stub says object: it builds the list of paths
    return cast(List[Any], _core.disjoint_paths_one(topo.graph, routing, s, t, code, kk, names))


def edge_disjoint_path_count(topo: Topology, source: Any, target: Any, *, method: str = "max",
                             k: Optional[int] = None) -> int:
    """How many link-disjoint paths :func:`edge_disjoint_paths` finds from ``source`` to
    ``target`` (``len`` of its answer), without building the paths' lists: ``max`` then skips
    its flow decomposition. 0 when ``source == target`` or no path exists."""
    code, kk = _method(method, k)
    s, t = _node(topo, source), _node(topo, target)
    routing = _routing(topo) if method == "sps" else None
    return int(_core.disjoint_count_one(topo.graph, routing, s, t, code, kk))


def sps_second_segments(topo: Topology, sources: np.ndarray, targets: np.ndarray, kmax: int, *,
                        threads: int = 0) -> np.ndarray:
    """The fewest segments of each pair's second ``sps`` path, at most ``kmax``.

    The first sps path is the direct segment at every limit (docs/method.md §5); with its ECMP
    DAG's links removed, a breadth-first search over segment counts finds the fewest usable
    segments that reach the target. int32 per pair: that number, 0 when no second path has at
    most ``kmax`` segments, -1 when the target is unreachable. Where the source or the target
    has degree <= 2 (at most two link-disjoint paths) the sps count at limit ``k <= kmax`` is
    therefore ``1 + (0 < j <= k)`` (0 for -1), one cheap search instead of a cost search per k.
    ``threads``: core threads (``0``: :func:`default_threads`).
    """
    s, t = _pairs(topo, sources, targets)
    kk = segment_limit(kmax, "kmax")
    return np.asarray(_core.sps_second_segments(topo.graph, _routing(topo), s, t, kk,
                                                _threads(threads)))

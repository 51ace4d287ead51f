"""Shortest paths, ECMP ratios, sr-paths and link-disjoint paths (docs/method.md §3 and §5).

Every computation runs in the C++ core; this module converts names to ids and arrays to Python
objects. Two layers:

- **Named functions** for people and notebooks (routers by name or id, lists and dicts out):
  :func:`shortest_paths`, :func:`ecmp_ratios`, :func:`sr_path`, :func:`edge_disjoint_paths`,
  :func:`edge_disjoint_path_count`. One pair or one source on a small graph costs about a
  microsecond: the core builds these lists and dicts itself (no numpy array per call).
- **Array functions** for the LP models and the studies (int32 ids, float64 values, CSR
  ``(offsets, items)`` path sets): :func:`shortest_distances`, :func:`dag_arcs`,
  :func:`segment_ratios`, :func:`segment_costs`, :func:`best_sr_paths`,
  :func:`disjoint_paths_batch`, :func:`disjoint_path_counts`, :func:`distance_matrix`.

The link-disjoint paths live in :mod:`.disjoint` (re-exported here); everything else is one
module on purpose: it is the one Python face of the C++ path core, and each named function sits
next to the array function it wraps.

The batch functions run on several threads inside the core (the GIL released meanwhile):
``threads=0`` takes the process's budget, :func:`default_threads` (every CPU the process may run
on unless :func:`set_default_threads` says less: a study's worker processes get a share of the
CPUs each, so a pool never runs more busy threads than there are CPUs); a positive ``threads``
asks for that many. No call runs more threads than the CPUs of the process's affinity, nor
more than the CPUs free at the call (:func:`free_cpus`: on a busy machine a second thread
waits for a CPU and holds the call up), nor more than its work pays for (one thread below
about 100,000 node and arc visits per thread); no result depends on the count.

The GIL: a core call keeps it when its work is below about a millisecond (every single-pair
call on the Zoo: releasing it there would cost a busy Python thread's whole switch interval per
call) and releases it otherwise (batches, table builds); one rule for every call, in the
bindings (``bindings/gil.hpp``).

Arcs are numbered as in :class:`~tpcstudy.Topology`: arc ``2 i`` is link ``i`` forwards, ``2 i + 1``
backwards. "Shortest" is by IGP weight with the equal-cost rule of docs/method.md §3 (integer
weights exactly, real weights within a relative 1e-9). Ties are broken by the smallest node id,
then arc id, so results never depend on hash order.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import numpy as np

import tpcstudy._core as _core

from ..errors import UsageError
from ..topology import Topology

__all__ = [
    "SrPath", "DisjointPath", "DisjointPathBatch", "DISJOINT_METHODS", "DEFAULT_K", "DEFAULT_PATHS", "MAX_K",
    "segment_limit",
    "shortest_paths", "ecmp_ratios", "sr_path", "edge_disjoint_paths", "edge_disjoint_path_count",
    "shortest_distances", "distance_matrix", "dag_arcs", "segment_ratios", "segment_costs",
    "dag_min_costs", "best_sr_paths", "disjoint_paths_batch", "disjoint_path_counts",
    "sps_second_segments", "path_price_bounds", "available_cpus", "free_cpus", "default_threads",
    "set_default_threads",
]

#: Defaults of the exported path sets (the TPC path tables and the disjoint study's failure
#: view, docs/method.md §6): sps paths with at most DEFAULT_K segments, at most DEFAULT_PATHS
#: paths per pair, slot 0 (the IGP shortest path) included.
DEFAULT_K = 4
DEFAULT_PATHS = 5
#: Largest segment limit the studies accept (they are about k <= 10). A path that a host is
#: given carries at most 9 segments: its SRH has 10 address slots and the kernel keeps slot 0
#: for the destination (docs/srh-map.md), so the exports and the emulator stop at 9.
MAX_K = 10


def segment_limit(k: Any, what: str = "k") -> int:
    """``k`` as a segment limit in 1..:data:`MAX_K`, else a :class:`UsageError` saying why."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= MAX_K:
        raise UsageError(f"{what} = {k!r}: a segment limit is an integer from 1 to {MAX_K} in "
                         f"the studies (a path a host is given has at most 9 segments: its "
                         f"SRH's 10 address slots less the kernel's)")
    return int(k)

# The thread budget of calls with threads=0 (0: every CPU the process may run on).
_DEFAULT_THREADS = 0


def available_cpus() -> int:
    """The CPUs this process may run on: its CPU affinity (``taskset``, cgroup cpusets, a batch
    scheduler's allocation), else all of the machine's; what the core counts, read now."""
    return int(_core.hardware_threads())


def free_cpus() -> int:
    """The CPUs free now: the machine's online CPUs less the other tasks running on it (the
    instant count of runnable tasks in ``/proc/loadavg``), at least 1. A batch call runs no
    more core threads than this, its budget (:func:`default_threads`) and the affinity allow:
    a thread waiting for a busy CPU would hold the call up."""
    return int(_core.free_cpus())


def default_threads() -> int:
    """Core threads a batch call with ``threads=0`` may use: the budget set by
    :func:`set_default_threads`, else :func:`available_cpus`."""
    return _DEFAULT_THREADS or available_cpus()


def set_default_threads(threads: int) -> int:
    """Set the thread budget of calls with ``threads=0`` for this process (``0``: every CPU it
    may run on); returns the previous setting. A worker process of a pool of ``N`` sets
    ``max(1, cpus // N)`` (:mod:`tpcstudy.study.executors`)."""
    global _DEFAULT_THREADS
    previous, _DEFAULT_THREADS = _DEFAULT_THREADS, _thread_count(threads)
    return previous


def _thread_count(threads: Any) -> int:
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
        raise UsageError(f"threads = {threads!r}: a thread count is an integer >= 0 (0: the "
                         f"default budget)")
    return int(threads)


def _threads(threads: Any) -> int:
    """The core's ``threads`` argument: ``threads``, or the process's budget when 0."""
    return _thread_count(threads) or _DEFAULT_THREADS


# What this module derives from a topology (routing tables, segment costs under unit prices,
# arc names), built on first use and kept in the Topology object's own attribute dict under
# these keys, with the compiled graph it was built from: gone with the object, rebuilt if its
# graph is another one. An attribute read is ~40 ns where a WeakKeyDictionary lookup (a weak
# reference made per lookup) was ~250 ns: a fifth of a small graph's single-pair call. A copy
# of a topology (copy.copy) starts without them only if made before they were built.
_ROUTING = "_paths_routing"        # all-pairs distances and next-hop DAGs (core Routing)
_UNIT_COSTS = "_paths_unit_costs"  # segment costs under unit arc prices (sr_path's default)
_ARC_NAMES = "_paths_arc_names"    # each arc's (tail name, head name), for the named dicts


def _per_topology(key: str, topo: Topology, build: Callable[[], Any]) -> Any:
    """``build()`` once per topology, kept while the topology lives and its graph is the same."""
    graph = topo.graph
    hit = topo.__dict__.get(key)
    if hit is not None and hit[0] is graph:
        return hit[1]
    value = build()
    topo.__dict__[key] = (graph, value)
    return value


def _routing(topo: Topology) -> "_core.Routing":
    return _per_topology(_ROUTING, topo, lambda: _core.Routing(topo.graph, _threads(0)))


def _routing_if_built(topo: Topology) -> Optional["_core.Routing"]:
    hit = topo.__dict__.get(_ROUTING)
    return hit[1] if hit is not None and hit[0] is topo.graph else None


def _arc_names(topo: Topology) -> List[Tuple[str, str]]:
    def build() -> List[Tuple[str, str]]:
        names = topo.names
        return [(names[u], names[v])
                for u, v in zip(topo.arc_src.tolist(), topo.arc_dst.tolist())]
    return _per_topology(_ARC_NAMES, topo, build)


def _unit_segment_costs(topo: Topology) -> np.ndarray:
    def build() -> np.ndarray:
        costs = segment_costs(topo, np.ones(2 * topo.num_links))
        costs.flags.writeable = False
        return costs
    return _per_topology(_UNIT_COSTS, topo, build)


def _sr_limit(k: Any) -> int:
    if int(k) < 1:
        raise UsageError(f"segment limit k = {k!r} must be at least 1")
    return int(k)


def _ids(topo: Topology, values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise UsageError(f"{what} must be a 1-d array of node ids, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise UsageError(f"{what} must hold integer node ids, got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.int32)
    bad = np.flatnonzero((out < 0) | (out >= topo.num_nodes))
    if bad.size:
        raise UsageError(f"{what}[{int(bad[0])}] = {int(out[bad[0]])} is not a router id of "
                         f"{topo.name!r} ({topo.num_nodes} routers)")
    return out


def _pairs(topo: Topology, sources: Any, targets: Any) -> Tuple[np.ndarray, np.ndarray]:
    s, t = _ids(topo, sources, "sources"), _ids(topo, targets, "targets")
    if s.shape != t.shape:
        raise UsageError(f"sources and targets differ in length ({s.size} vs {t.size})")
    return s, t


def _node(topo: Topology, node: Any) -> int:
    """A router by id or name: the one rule of :meth:`Topology.index_of` (docs/method.md §1)."""
    if type(node) is int and 0 <= node < len(topo.names):  # the common case, checked first
        return node
    return topo.index_of(node)


# --------------------------------------------------------------------------- array layer
def shortest_distances(topo: Topology, source: Any) -> np.ndarray:
    """IGP distance from ``source`` to every router.

    Parameters
    ----------
    topo
        The topology.
    source
        Router id (an integer is always an id here), or a name.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n,)``; ``inf`` where a router is unreachable.
    """
    return _core.distances_from(topo.graph, _node(topo, source))  # a numpy array already


def distance_matrix(topo: Topology, *, threads: int = 0) -> np.ndarray:
    """All-pairs IGP distances ``d[a, b]`` (float64, ``(n, n)``, ``inf`` when unreachable).

    Distances only: one search per source (breadth-first when every weight is equal, else
    Dijkstra's), sources shared among ``threads`` core threads (``0``: :func:`default_threads`),
    the GIL released meanwhile. The routing tables of :func:`segment_costs` are not built; when
    they already are for this topology, their matrix is copied instead (the same values).
    """
    th = _threads(threads) if threads else _DEFAULT_THREADS
    routing = _routing_if_built(topo)
    if routing is not None:
        return routing.distances()  # numpy arrays already
    return _core.distance_matrix(topo.graph, th)


def dag_arcs(topo: Topology, source: Any, target: Any) -> np.ndarray:
    """Arcs on at least one shortest ``source -> target`` path.

    These are the arcs ``a = (u -> v)`` with ``d(s, u) + w(a) + d(v, t) == d(s, t)``.

    Returns
    -------
    numpy.ndarray
        int32 arc ids, sorted; empty when ``source == target`` or ``target`` is unreachable.
    """
    return np.asarray(_core.dag_arcs(topo.graph, _node(topo, source), _node(topo, target)))


def segment_ratios(topo: Topology, sources: np.ndarray, targets: np.ndarray, *,
                   threads: int = 0) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ECMP ratios ``r_seg(l)`` of many segments (docs/method.md §3).

    Each node of a segment's shortest-path DAG splits what it receives evenly among its next hops
    towards the segment's target. Segments are grouped by target: each target's distances are
    computed once, by a search that stops at the farthest of its sources (breadth-first when
    every weight is equal), and the distinct targets are shared among the core threads.

    Parameters
    ----------
    topo
        The topology.
    sources, targets
        Router ids of the segments (equal length).
    threads
        Core threads (``0``: :func:`default_threads`); the result does not depend on it.

    Returns
    -------
    offsets : numpy.ndarray
        int64, ``len(sources) + 1``; segment ``i`` owns entries ``offsets[i]:offsets[i + 1]``.
    arcs : numpy.ndarray
        int32 arc ids, sorted within a segment.
    fractions : numpy.ndarray
        float64, the fraction of one unit of the segment crossing each arc (> 0). A segment
        ``u -> u`` or towards an unreachable router has no entries.
    """
    s, t = _pairs(topo, sources, targets)
    offsets, arcs, fractions = _core.segment_ratios(topo.graph, s, t, _threads(threads))
    return np.asarray(offsets), np.asarray(arcs), np.asarray(fractions)


def segment_costs(topo: Topology, prices: np.ndarray) -> np.ndarray:
    """Price of every segment: ``cost[u, v] = sum_l r_uv(l) * prices[l]`` (docs/method.md §4).

    One pass per destination over its DAG (``cost(u, v)`` is the average over the next hops ``h``
    of ``u`` of ``prices[u -> h] + cost(h, v)``); the distances and DAGs are cached per topology.

    Parameters
    ----------
    topo
        The topology.
    prices
        float64, one price per directed arc (``2 * num_links``), e.g. the LP's capacity duals.

    Returns
    -------
    numpy.ndarray
        float64 ``(n, n)``; ``cost[u, u] == 0``, ``inf`` where ``v`` is unreachable from ``u``.
    """
    y = np.ascontiguousarray(prices, dtype=np.float64)
    if y.shape != (2 * topo.num_links,):
        raise UsageError(f"prices must have shape ({2 * topo.num_links},) (one per arc), "
                         f"got {y.shape}")
    return np.asarray(_routing(topo).segment_costs(y))


def dag_min_costs(topo: Topology, prices: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The cheapest single shortest path of every pair by ``prices`` (multipath pricing).

    Parameters
    ----------
    topo
        The topology.
    prices
        float64, one price per directed arc (``2 * num_links``).

    Returns
    -------
    cost, next
        ``cost[u, v]``: the least total price of one IGP shortest ``u -> v`` path (0 on the
        diagonal, ``inf`` where unreachable); ``next[u, v]``: the first arc of such a path
        (smallest arc id on ties, -1 on the diagonal or where unreachable). Follow ``next``
        hop by hop to recover the path.
    """
    y = np.ascontiguousarray(prices, dtype=np.float64)
    if y.shape != (2 * topo.num_links,):
        raise UsageError(f"prices must have shape ({2 * topo.num_links},) (one per arc), "
                         f"got {y.shape}")
    cost, nxt = _routing(topo).dag_min_costs(y)
    return np.asarray(cost), np.asarray(nxt)


def best_sr_paths(topo: Topology, costs: np.ndarray, sources: np.ndarray, targets: np.ndarray,
                  k: int, *, threads: int = 0) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cheapest sr-path with at most ``k`` segments for each pair (docs/method.md §3-4).

    DP over the number of segments: ``D_1(s, t) = costs[s, t]``,
    ``D_j(s, t) = min(D_{j-1}(s, t), min_{w != s} D_{j-1}(s, w) + costs[w, t])`` (the source
    is never its own waypoint). Ties prefer fewer segments (a longer path must be cheaper by more
    than a relative 1e-9), then the smallest waypoint id. Each distinct source's DP row is
    computed once (``O(k n^2)``).

    Parameters
    ----------
    topo
        The topology (for the router count).
    costs
        float64 ``(n, n)`` segment costs, e.g. from :func:`segment_costs`; ``inf`` = unusable.
    sources, targets
        Router ids of the pairs.
    k
        Segment limit (``k >= 1``; at most ``k - 1`` waypoints).
    threads
        Core threads (``0``: :func:`default_threads`); never more than the CPUs available.

    Returns
    -------
    values : numpy.ndarray
        float64 cost of each pair's best sr-path (``inf`` when none, 0 when ``s == t``).
    offsets : numpy.ndarray
        int64, ``len(sources) + 1``.
    waypoints : numpy.ndarray
        int32; pair ``i``'s waypoints in order are ``waypoints[offsets[i]:offsets[i + 1]]``.
    """
    n = topo.num_nodes
    c = np.ascontiguousarray(costs, dtype=np.float64)
    if c.shape != (n, n):
        raise UsageError(f"costs must have shape ({n}, {n}), got {c.shape}")
    kk = _sr_limit(k)
    s, t = _pairs(topo, sources, targets)
    values, offsets, waypoints = _core.best_sr_paths(c, s, t, kk, _threads(threads))
    return np.asarray(values), np.asarray(offsets), np.asarray(waypoints)


# --------------------------------------------------------------------------- named layer
#: (built once: ``List[List[str]]`` written inside the call was half of a small graph's call,
#: 0.5 of 1.0 us on Abilene, typing's subscription evaluated every time)
_NameLists = List[List[str]]


def shortest_paths(topo: Topology, source: Any, target: Any, *,
                   limit: int = 1000) -> List[List[str]]:
    """Every equal-cost shortest path from ``source`` to ``target``, at most ``limit`` of them.

    Parameters
    ----------
    topo
        The topology.
    source, target
        Router names or ids.
    limit
        Stop after this many paths (there can be exponentially many).

    Returns
    -------
    list of list of str
        Node-name lists in lexicographic order of node ids; ``[]`` when ``target`` is unreachable,
        ``[[source]]`` when ``source == target``.
    """
    # the light call path: the core looks the names up and builds the name lists itself (no
    # arrays per call); None when a router is not given as one of the names (an id, a name
    # that is not there): then the topology's own rule reads it (Topology.index_of)
    limit = limit if type(limit) is int else int(limit)
    out = _core.shortest_paths_named(topo.graph, topo._index, topo.names, source, target, limit)
    if out is None:
        out = _core.shortest_paths_list(topo.graph, topo.index_of(source), topo.index_of(target),
                                        limit, topo.names)
    return cast(_NameLists, out)  # the core's stub says object: it builds lists of str


def ecmp_ratios(topo: Topology, source: Any, target: Any) -> Dict[Tuple[str, str], float]:
    """ECMP fraction ``r_st(l)`` of each directed link used by the segment ``source -> target``.

    Each router on the shortest-path DAG splits what it receives evenly among its next hops
    towards ``target`` (docs/method.md §3).

    Returns
    -------
    dict
        ``{(u, v): fraction}`` for every directed link ``u -> v`` with a positive fraction; empty
        when ``source == target`` or ``target`` is unreachable.
    """
    return _core.ecmp_ratios_dict(topo.graph, topo.index_of(source), topo.index_of(target),
                                  _arc_names(topo))


@dataclasses.dataclass(frozen=True)
class SrPath:
    """An sr-path ``(source, w1, ..., wj, target)``: ``j + 1`` segments (docs/method.md §3).

    Attributes
    ----------
    source, target
        Router names.
    waypoints
        Router names of the waypoints, in order (empty: plain ECMP routing).
    cost
        ``sum_l r(l, p) * price_l``; ``inf`` when no path exists.
    """

    source: str
    target: str
    waypoints: List[str]
    cost: float

    @property
    def nodes(self) -> List[str]:
        """``[source, *waypoints, target]``: the segment endpoints."""
        return [self.source, *self.waypoints, self.target]

    @property
    def segments(self) -> List[Tuple[str, str]]:
        """The segments ``(a, b)`` the path is made of."""
        n = self.nodes
        return list(zip(n[:-1], n[1:]))

    @property
    def num_segments(self) -> int:
        return len(self.waypoints) + 1


def sr_path(topo: Topology, source: Any, target: Any, k: int,
            prices: Optional[np.ndarray] = None) -> SrPath:
    """The cheapest sr-path from ``source`` to ``target`` with at most ``k`` segments.

    Parameters
    ----------
    topo
        The topology.
    source, target
        Router names or ids.
    k
        Segment limit (``k >= 1``; ``k = 1`` is plain ECMP routing).
    prices
        float64 price per directed arc; ``None`` prices every arc 1, i.e. the path with the least
        ECMP-expected number of arc crossings.

    Returns
    -------
    SrPath
        Ties prefer fewer segments, then the smallest waypoint ids (see :func:`best_sr_paths`).
    """
    s, t = _node(topo, source), _node(topo, target)
    kk = _sr_limit(k)
    costs = _unit_segment_costs(topo) if prices is None else segment_costs(topo, prices)
    names = topo.names
    value, waypoints = _core.best_sr_path_one(costs, s, t, kk, names)
    return SrPath(names[s], names[t], waypoints, value)


def path_price_bounds(topo: Topology, prices: np.ndarray, sources: np.ndarray,
                      targets: np.ndarray, limit: float = math.inf, *,
                      threads: int = 0) -> np.ndarray:
    """The price of each pair's cheapest path under arc ``prices``, when below ``limit``.

    A lower bound on every sr-path's price (:func:`segment_costs`: a segment's price is the
    mean over its ECMP paths, none cheaper than the cheapest path), so column generation skips
    the segment DP for pairs whose bound already reaches the entering threshold. float64 per
    pair; ``inf`` at or above ``limit`` (the search stops there) or when unreachable.
    ``threads``: core threads (``0``: :func:`default_threads`).
    """
    y = np.ascontiguousarray(prices, dtype=np.float64)
    if y.shape != (2 * topo.num_links,):
        raise UsageError(f"prices must have shape ({2 * topo.num_links},) (one per arc), "
                         f"got {y.shape}")
    s, t = _pairs(topo, sources, targets)
    return np.asarray(_core.path_price_bounds(topo.graph, y, s, t, float(limit),
                                              _threads(threads)))


# the link-disjoint paths: their own module, re-exported here (imported last: it uses the
# helpers above)
from .disjoint import (  # noqa: E402
    DISJOINT_METHODS,
    DisjointPath,
    DisjointPathBatch,
    disjoint_path_counts,
    disjoint_paths_batch,
    edge_disjoint_path_count,
    edge_disjoint_paths,
    sps_second_segments,
)

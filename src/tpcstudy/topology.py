"""The :class:`Topology`: routers, links, capacities and IGP weights (docs/method.md §1-2).

A topology is an undirected graph: link ``i`` joins ``link_u[i] < link_v[i]`` and becomes two
directed arcs, ``2 i`` (u to v) and ``2 i + 1`` (v to u). Under the ``merged`` link rule (the
default) parallel links are already collapsed into one; under ``multigraph`` each is a link of its
own, so two links may join the same routers (``topo.meta["links"]`` says which).
Capacity and IGP weight are per arc (REPETITA files may give each direction its own); multiplicity
and delay are per link. Node ids follow the order of the input file.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import tpcstudy._core as _core

from .errors import TopologyFormatError, UsageError
from .rules import arc_weights, check_links, check_rules, fill_delays, raw_capacities

__all__ = ["Topology", "RawEdge", "EdgeArrays", "build_topology", "prune", "without_links",
           "without_link_ids", "component_labels"]


@dataclasses.dataclass
class RawEdge:
    """One edge as a reader found it, before parallel links are collapsed.

    ``speed`` is the file's capacity (nan when unknown), ``weight`` the file's IGP weight (nan when
    the file has none), ``delay`` the file's delay in ms (nan when unknown). ``directed`` edges
    (REPETITA, a networkx DiGraph) describe one direction only: the other direction must be listed
    too. ``line``: where the file lists it (for error messages).
    """

    u: int
    v: int
    speed: float = math.nan
    weight: float = math.nan
    delay: float = math.nan
    directed: bool = False
    line: Optional[int] = None


@dataclasses.dataclass
class EdgeArrays:
    """Raw edges as arrays (what a reader of a large file builds instead of :class:`RawEdge`
    objects): ``u``, ``v`` router ids, ``speed``, ``weight``, ``delay`` (nan when unknown),
    ``directed`` (bool), ``line`` (0 when unknown)."""

    u: np.ndarray
    v: np.ndarray
    speed: np.ndarray
    weight: np.ndarray
    delay: np.ndarray
    directed: np.ndarray
    line: np.ndarray

    @classmethod
    def of(cls, edges: Iterable[RawEdge]) -> "EdgeArrays":
        es = list(edges)
        return cls(np.array([e.u for e in es], dtype=np.int64),
                   np.array([e.v for e in es], dtype=np.int64),
                   np.array([e.speed for e in es], dtype=np.float64),
                   np.array([e.weight for e in es], dtype=np.float64),
                   np.array([e.delay for e in es], dtype=np.float64),
                   np.array([e.directed for e in es], dtype=bool),
                   np.array([e.line or 0 for e in es], dtype=np.int64))

    def take(self, keep: np.ndarray) -> "EdgeArrays":
        return EdgeArrays(*(getattr(self, f.name)[keep] for f in dataclasses.fields(self)))

    def line_of(self, i: int) -> Optional[int]:
        return int(self.line[i]) or None


class Topology:
    """A network of routers and links, ready for the path core and the LP models.

    Use :func:`tpcstudy.read_topology` to make one; the constructor takes already-collapsed arrays.
    """

    def __init__(
        self,
        name: str,
        nodes: Sequence[str],
        link_u: np.ndarray,
        link_v: np.ndarray,
        arc_capacity: np.ndarray,
        arc_weight: np.ndarray,
        *,
        multiplicity: Optional[np.ndarray] = None,
        delay: Optional[np.ndarray] = None,
        latitude: Optional[np.ndarray] = None,
        longitude: Optional[np.ndarray] = None,
        internal: Optional[Union[np.ndarray, Sequence[int]]] = None,
        meta: Optional[Mapping[str, Any]] = None,
    ) -> None:
        n, m = len(nodes), len(link_u)
        self.name = str(name)
        self._nodes = [str(x) for x in nodes]
        self._index = {x: i for i, x in enumerate(self._nodes)}
        if len(self._index) != n:
            raise UsageError(f"topology {name!r}: node names are not unique")
        self.link_u = np.ascontiguousarray(link_u, dtype=np.int32)
        self.link_v = np.ascontiguousarray(link_v, dtype=np.int32)
        self.arc_capacity = np.ascontiguousarray(arc_capacity, dtype=np.float64)
        self.arc_weight = np.ascontiguousarray(arc_weight, dtype=np.float64)
        if self.arc_capacity.shape != (2 * m,) or self.arc_weight.shape != (2 * m,):
            raise UsageError(f"topology {name!r}: need one capacity and one weight per arc")
        self.multiplicity = (
            np.ones(m, dtype=np.int32) if multiplicity is None
            else np.ascontiguousarray(multiplicity, dtype=np.int32))
        nan_n = np.full(n, np.nan)
        self.delay = np.full(m, np.nan) if delay is None else np.asarray(delay, dtype=np.float64)
        self.latitude = nan_n.copy() if latitude is None else np.asarray(latitude, dtype=np.float64)
        self.longitude = nan_n.copy() if longitude is None else np.asarray(longitude, dtype=np.float64)
        self.internal = (np.ones(n, dtype=np.int8) if internal is None
                         else np.asarray(internal, dtype=np.int8))
        self.meta: Dict[str, Any] = dict(meta or {})
        self._graph: Optional[_core.Graph] = None

    # ----------------------------------------------------------------- basic views
    @property
    def nodes(self) -> List[str]:
        """Router names; the position in this list is the router's id."""
        return list(self._nodes)

    @property
    def names(self) -> List[str]:
        return self._nodes

    @property
    def num_nodes(self) -> int:
        return len(self._nodes)

    @property
    def num_links(self) -> int:
        return len(self.link_u)

    @property
    def links(self) -> List[Tuple[str, str]]:
        """Undirected links as (name, name), in link-id order."""
        names = self._nodes
        return [(names[u], names[v]) for u, v in zip(self.link_u.tolist(), self.link_v.tolist())]

    @property
    def arc_src(self) -> np.ndarray:
        out = np.empty(2 * self.num_links, dtype=np.int32)
        out[0::2], out[1::2] = self.link_u, self.link_v
        return out

    @property
    def arc_dst(self) -> np.ndarray:
        out = np.empty(2 * self.num_links, dtype=np.int32)
        out[0::2], out[1::2] = self.link_v, self.link_u
        return out

    @property
    def link_capacity(self) -> np.ndarray:
        """Capacity of each link: the smaller of its two directions (equal for Zoo files)."""
        return np.minimum(self.arc_capacity[0::2], self.arc_capacity[1::2])

    @property
    def links_rule(self) -> str:
        """``merged`` or ``multigraph`` (docs/method.md §1)."""
        return str(self.meta.get("links", "merged"))

    @property
    def degree(self) -> np.ndarray:
        """Number of links of each router: its neighbours under ``merged`` (parallel links are
        one), its links counting parallel ones under ``multigraph``."""
        return np.bincount(np.concatenate([self.link_u, self.link_v]), minlength=self.num_nodes)

    @property
    def edge_routers(self) -> List[str]:
        """Routers with exactly two links (docs/method.md §2: two neighbours under ``merged``,
        two links counting parallel ones under ``multigraph``), in id order."""
        return [self._nodes[i] for i in np.flatnonzero(self.degree == 2).tolist()]

    @property
    def edge_router_ids(self) -> np.ndarray:
        return np.flatnonzero(self.degree == 2).astype(np.int32)

    def index_of(self, node: Any) -> int:
        """Id of a router: the package's one node-id rule (docs/method.md §1). An integer
        (``int`` or a numpy integer, not ``bool``) is an id and is never looked up as a name;
        anything else is a name (its ``str``), matched exactly.

        Raises
        ------
        UsageError
            An id out of range, or no router of that name (the message suggests near names).
        """
        if isinstance(node, (int, np.integer)) and not isinstance(node, (bool, np.bool_)):
            if 0 <= int(node) < self.num_nodes:
                return int(node)
            raise UsageError(f"{int(node)} is not a router id of {self.name!r} "
                             f"({self.num_nodes} routers: ids 0 to {self.num_nodes - 1})")
        key = str(node)
        if key in self._index:
            return self._index[key]
        shown = key if len(key) <= 80 else key[:77] + "..."
        near = difflib.get_close_matches(key[:200], self._index, n=3)
        raise UsageError(f"topology {self.name!r} has no router {shown!r}"
                         + (f"; did you mean {', '.join(map(repr, near))}?" if near else ""))

    def arc_of(self, u: Any, v: Any) -> int:
        """Id of the directed arc from router ``u`` to router ``v`` (of the first of parallel
        links, under ``multigraph``)."""
        iu, iv = self.index_of(u), self.index_of(v)
        lo, hi = min(iu, iv), max(iu, iv)
        hit = np.flatnonzero((self.link_u == lo) & (self.link_v == hi))
        if hit.size == 0:
            raise UsageError(f"topology {self.name!r} has no link {u!r} - {v!r}")
        return int(2 * hit[0] + (0 if iu == lo else 1))

    @property
    def graph(self) -> "_core.Graph":
        """The compiled directed graph (arcs numbered as described in the module docstring)."""
        if self._graph is None:
            self._graph = _core.Graph(self.num_nodes, self.arc_src, self.arc_dst, self.arc_weight)
        return self._graph

    def capacity_coverage(self) -> float:
        """Share of links whose file gives a capacity (whatever capacity rule was applied)."""
        known = self.meta.get("capacity_known_links")
        if known is None or self.num_links == 0:
            return math.nan
        return float(known) / self.num_links

    def merged(self) -> "Topology":
        """This topology with parallel links collapsed as the ``merged`` rule collapses them
        (capacities add up; least weight and delay; multiplicity counted), router ids
        unchanged; ``self`` when no two links join the same routers."""
        if not self.has_parallel_links():
            return self
        n = max(self.num_nodes, 1)
        codes, link_of = np.unique(self.link_u.astype(np.int64) * n + self.link_v,
                                   return_inverse=True)
        link_of = link_of.reshape(-1)
        m = len(codes)
        cap = np.zeros(2 * m)
        cap[0::2] = np.bincount(link_of, weights=self.arc_capacity[0::2], minlength=m)
        cap[1::2] = np.bincount(link_of, weights=self.arc_capacity[1::2], minlength=m)
        w = np.full(2 * m, np.inf)
        np.minimum.at(w, 2 * link_of, self.arc_weight[0::2])
        np.minimum.at(w, 2 * link_of + 1, self.arc_weight[1::2])
        delay = np.full(m, np.inf)
        np.minimum.at(delay, link_of, np.where(np.isnan(self.delay), np.inf, self.delay))
        delay[np.isinf(delay)] = np.nan
        mult = np.bincount(link_of, weights=self.multiplicity, minlength=m).astype(np.int32)
        return Topology(self.name, self._nodes, (codes // n).astype(np.int32),
                        (codes % n).astype(np.int32), cap, w, multiplicity=mult, delay=delay,
                        latitude=self.latitude, longitude=self.longitude,
                        internal=self.internal, meta={**self.meta, "links": "merged"})

    def has_parallel_links(self) -> bool:
        """Do two links join the same two routers (possible under ``multigraph`` only)?"""
        if self.num_links < 2:
            return False
        code = self.link_u.astype(np.int64) * self.num_nodes + self.link_v
        return bool(len(np.unique(code)) < len(code))

    def __repr__(self) -> str:
        return f"<Topology {self.name!r}: {self.num_nodes} routers, {self.num_links} links>"

    # ----------------------------------------------------------------- conversion
    def to_networkx(self) -> Any:
        """A networkx graph with ``capacity``, ``weight``, ``multiplicity`` and ``delay`` attributes.

        An ``nx.Graph`` when both directions of every link agree, else an ``nx.DiGraph``; their
        ``Multi`` kinds when two links join the same routers (``multigraph`` rule).
        """
        import networkx as nx  # ~60 ms to import; only this conversion needs it here

        sym = (np.array_equal(self.arc_weight[0::2], self.arc_weight[1::2])
               and np.array_equal(self.arc_capacity[0::2], self.arc_capacity[1::2]))
        if self.has_parallel_links():
            g = nx.MultiGraph() if sym else nx.MultiDiGraph()
        else:
            g = nx.Graph() if sym else nx.DiGraph()
        g.graph.update(name=self.name, **{k: v for k, v in self.meta.items() if _plain(v)})
        for i, x in enumerate(self._nodes):
            attrs: Dict[str, Any] = {"id": i, "internal": int(self.internal[i])}
            if not math.isnan(self.latitude[i]):
                attrs["Latitude"] = float(self.latitude[i])
                attrs["Longitude"] = float(self.longitude[i])
            g.add_node(x, **attrs)
        for i, (u, v) in enumerate(zip(self.link_u.tolist(), self.link_v.tolist())):
            common = {"multiplicity": int(self.multiplicity[i]), "delay": float(self.delay[i])}
            g.add_edge(self._nodes[u], self._nodes[v], capacity=float(self.arc_capacity[2 * i]),
                       weight=float(self.arc_weight[2 * i]), **common)
            if not sym:
                g.add_edge(self._nodes[v], self._nodes[u],
                           capacity=float(self.arc_capacity[2 * i + 1]),
                           weight=float(self.arc_weight[2 * i + 1]), **common)
        return g

    def subgraph(self, keep: np.ndarray, *, name: Optional[str] = None) -> "Topology":
        """The topology induced by the routers where ``keep`` is true (ids renumbered in order)."""
        keep = np.asarray(keep, dtype=bool)
        new_id = np.cumsum(keep) - 1
        lk = keep[self.link_u] & keep[self.link_v]
        arcs = np.repeat(lk, 2)
        return Topology(
            name or self.name, [x for x, k in zip(self._nodes, keep.tolist()) if k],
            new_id[self.link_u[lk]], new_id[self.link_v[lk]],
            self.arc_capacity[arcs], self.arc_weight[arcs],
            multiplicity=self.multiplicity[lk], delay=self.delay[lk],
            latitude=self.latitude[keep], longitude=self.longitude[keep],
            internal=self.internal[keep], meta=self.meta)


def without_links(topo: Topology, links: Iterable[Tuple[int, int]]) -> Topology:
    """``topo`` without every link joining one of the router pairs ``links`` (parallel links
    too): a failed graph. Routers and their ids unchanged (an isolated router stays)."""
    gone = {(min(int(u), int(v)), max(int(u), int(v))) for u, v in links}
    if not gone:
        return topo
    ids = [i for i, (a, b) in enumerate(zip(topo.link_u.tolist(), topo.link_v.tolist()))
           if (min(a, b), max(a, b)) in gone]
    return without_link_ids(topo, ids)[0]


def without_link_ids(topo: Topology, link_ids: Iterable[int]) -> Tuple[Topology, np.ndarray]:
    """``topo`` without the links ``link_ids`` (every router kept, same ids), and the map of
    each of ``topo``'s arcs to the new topology's arc (-1: removed). The one construction of a
    failed graph (the failure study's scenarios, the emulator's IGP, the controller)."""
    keep = np.ones(topo.num_links, dtype=bool)
    keep[list(link_ids)] = False
    arcs = np.repeat(keep, 2)
    out = Topology(topo.name, topo.names, topo.link_u[keep], topo.link_v[keep],
                   topo.arc_capacity[arcs], topo.arc_weight[arcs],
                   multiplicity=topo.multiplicity[keep], delay=topo.delay[keep],
                   latitude=topo.latitude, longitude=topo.longitude,
                   internal=topo.internal, meta=topo.meta)
    amap = np.full(2 * topo.num_links, -1, dtype=np.int64)
    amap[arcs] = np.arange(int(arcs.sum()))
    return out, amap


def component_labels(topo: Topology) -> np.ndarray:
    """A component label per router: routers with the same label are joined by links (links
    are two-way)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = topo.num_nodes
    g = csr_matrix((np.ones(topo.num_links), (topo.link_u, topo.link_v)), shape=(n, n))
    return np.asarray(connected_components(g, directed=False)[1], dtype=np.int64)


def _plain(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


# --------------------------------------------------------------------------- building
def build_topology(
    name: str,
    nodes: Sequence[str],
    edges: Union[Iterable[RawEdge], EdgeArrays],
    *,
    capacity: str = "uniform",
    weight: str = "hop",
    latitude: Optional[Union[Sequence[float], np.ndarray]] = None,
    longitude: Optional[Union[Sequence[float], np.ndarray]] = None,
    internal: Optional[Sequence[int]] = None,
    meta: Optional[Mapping[str, Any]] = None,
    source: str = "",
    links: str = "merged",
) -> Topology:
    """Turn raw edges into a :class:`Topology`, applying the link, capacity and weight rules.

    The rules are those of :mod:`tpcstudy.rules` (docs/method.md §1), each recorded in
    ``topo.meta``. Parallel links under ``merged``: capacities add up, the IGP weight is the
    smallest (what the IGP uses), the delay the smallest, the multiplicity counts them. Under
    ``multigraph`` each stays a link of its own (multiplicity 1); directed edges (REPETITA) are
    paired into links in file order: the i-th u -> v edge with the i-th v -> u edge.
    Self-loops are dropped.
    """
    check_rules(capacity, weight)
    check_links(links)
    n = len(nodes)
    lat = np.full(n, np.nan) if latitude is None else np.asarray(latitude, dtype=np.float64)
    lon = np.full(n, np.nan) if longitude is None else np.asarray(longitude, dtype=np.float64)
    ea = edges if isinstance(edges, EdgeArrays) else EdgeArrays.of(edges)
    loops = ea.u == ea.v
    # self-loops dropped; their routers kept in meta (a directed loop is listed both ways)
    loop_at = np.repeat(ea.u[loops], np.where(ea.directed[loops], 1, 2))
    ea = ea.take(~loops)
    meta = dict(meta or {})
    if len(loop_at):
        meta["self_loop_routers"] = [str(nodes[i]) for i in np.sort(loop_at)[::2].tolist()]
    meta.setdefault("source", source)
    meta["links"] = links

    # ---- capacity per raw edge
    speeds = ea.speed
    known = ~np.isnan(speeds)
    cap, meta["capacity_rule"] = raw_capacities(speeds, capacity)
    if capacity == "uniform":
        meta["capacity_unit"] = "link"
    else:
        meta.setdefault("capacity_unit", "bit/s")
    if np.any(cap <= 0) or not np.all(np.isfinite(cap)):
        bad = int(np.flatnonzero(~(cap > 0) | ~np.isfinite(cap))[0])
        raise TopologyFormatError(source, ea.line_of(bad), f"link {nodes[ea.u[bad]]} - "
                                  f"{nodes[ea.v[bad]]} has capacity {float(cap[bad])!r}; "
                                  "capacities must be positive")

    # ---- group by unordered pair (links in (min, max) order) and direction
    lo, hi = np.minimum(ea.u, ea.v).astype(np.int64), np.maximum(ea.u, ea.v).astype(np.int64)
    fw = ~ea.directed | (ea.u == lo)  # the edge carries the link's u -> v direction
    bw = ~ea.directed | (ea.u == hi)
    pair = lo * max(n, 1) + hi
    if links == "multigraph":
        link_of, m = _multigraph_links(pair, ea.directed, fw)
        link_u, link_v = np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32)
        link_u[link_of], link_v[link_of] = lo, hi
    else:
        codes, link_of = np.unique(pair, return_inverse=True)
        link_of = link_of.reshape(-1)
        m = len(codes)
        link_u = (codes // max(n, 1)).astype(np.int32)
        link_v = (codes % max(n, 1)).astype(np.int32)
    n_fw = np.bincount(link_of, weights=fw, minlength=m)
    n_bw = np.bincount(link_of, weights=bw, minlength=m)
    one_way = np.flatnonzero((n_fw == 0) | (n_bw == 0))
    if len(one_way):  # links are undirected (docs/method.md §1): never invent a direction
        e = int(np.flatnonzero(link_of == one_way[0])[0])
        a, b = nodes[ea.u[e]], nodes[ea.v[e]]
        times = ""
        if links == "multigraph":
            same = pair == pair[e]
            k_ab = int(np.count_nonzero(same & (ea.u == ea.u[e])))
            times = f" {k_ab} times but {b} -> {a} {int(np.count_nonzero(same)) - k_ab} times"
        raise TopologyFormatError(source, ea.line_of(e), f"the arc {a} -> {b} is listed"
                                  f"{times or ' but not ' + b + ' -> ' + a}: links are "
                                  "undirected here, list both directions "
                                  + ("once per parallel link " if times else "")
                                  + "(for a networkx DiGraph whose arcs stand for links: "
                                  "g.to_undirected())")
    arc_cap = np.zeros(2 * m)
    arc_cap[0::2] = np.bincount(link_of, weights=np.where(fw, cap, 0.0), minlength=m)
    arc_cap[1::2] = np.bincount(link_of, weights=np.where(bw, cap, 0.0), minlength=m)
    file_w = np.full(2 * m, np.inf)
    fwd_w, bwd_w = np.full(m, np.inf), np.full(m, np.inf)
    w_known = ~np.isnan(ea.weight)
    np.minimum.at(fwd_w, link_of[fw & w_known], ea.weight[fw & w_known])
    np.minimum.at(bwd_w, link_of[bw & w_known], ea.weight[bw & w_known])
    file_w[0::2] = np.where(np.isinf(fwd_w), np.nan, fwd_w)
    file_w[1::2] = np.where(np.isinf(bwd_w), np.nan, bwd_w)
    any_directed = np.bincount(link_of, weights=ea.directed, minlength=m) > 0
    mult = np.where(any_directed, np.maximum(n_fw, n_bw), n_fw).astype(np.int32)
    delay = np.full(m, np.inf)
    d_known = ~np.isnan(ea.delay)
    np.minimum.at(delay, link_of[d_known], ea.delay[d_known])
    delay[np.isinf(delay)] = np.nan
    known_links = int(np.count_nonzero(np.bincount(link_of, weights=~known, minlength=m) == 0))
    meta["capacity_known_links"] = known_links  # links whose file gives a speed, whatever the rule

    # ---- IGP weight per arc, then the delay fallback
    w, meta["weight_rule"] = arc_weights(weight, arc_cap, file_w, link_u, link_v, lat, lon, nodes,
                                         source)
    fill_delays(delay, link_u, link_v, lat, lon)
    return Topology(name, nodes, link_u, link_v, arc_cap, w, multiplicity=mult, delay=delay,
                    latitude=lat, longitude=lon, internal=internal, meta=meta)


def _multigraph_links(pair: np.ndarray, directed: np.ndarray,
                      fw: np.ndarray) -> Tuple[np.ndarray, int]:
    """The link of every raw edge under ``multigraph``, links in (pair, file) order: an
    undirected edge is a link; the i-th directed edge one way between two routers and the i-th
    the other way make one (a direction listed more often leaves a link with one direction,
    which the caller refuses)."""
    # group: the pair, then undirected (0) / directed forwards (1) / backwards (2)
    group = pair * 3 + np.where(directed, np.where(fw, 1, 2), 0)
    order = np.lexsort((np.arange(len(pair)), group))
    g_sorted = group[order]
    starts = np.r_[0, np.flatnonzero(np.diff(g_sorted)) + 1] if len(order) else np.zeros(0, int)
    rank = np.empty(len(pair), dtype=np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    rank[order] = np.arange(len(order)) - first
    key = (pair * 2 + directed) * (int(rank.max(initial=0)) + 1) + rank
    _, link_of = np.unique(key, return_inverse=True)
    link_of = link_of.reshape(-1)
    return link_of, int(link_of.max(initial=-1)) + 1


# --------------------------------------------------------------------------- pruning
def _link_count_core(topo: Topology) -> np.ndarray:
    """Routers kept by repeatedly removing those with at most one link, counting parallel links
    (the ``multigraph`` rule's pruning)."""
    n = topo.num_nodes
    ends = np.concatenate([topo.link_u, topo.link_v]).astype(np.int64)
    other = np.concatenate([topo.link_v, topo.link_u]).astype(np.int64)
    order = np.argsort(ends, kind="stable")
    nbr = other[order]
    off = np.r_[0, np.cumsum(np.bincount(ends, minlength=n))]
    deg = np.bincount(ends, minlength=n)
    keep = np.ones(n, dtype=bool)
    stack = np.flatnonzero(deg <= 1).tolist()
    keep[stack] = False
    while stack:
        u = stack.pop()
        for v in nbr[off[u]:off[u + 1]].tolist():
            deg[v] -= 1
            if keep[v] and deg[v] <= 1:
                keep[v] = False
                stack.append(v)
    return keep


def prune(topo: Topology) -> Topology:
    """Remove tree parts (docs/method.md §2).

    ``merged`` topologies: keep the 2-core of the simple graph, then its largest connected
    component (ties go to the one holding the smallest router id). ``multigraph`` topologies:
    repeatedly remove routers with at most one link, counting parallel links, and keep every
    component (the TPC paper's rule).
    """
    if not isinstance(topo, Topology):
        raise TypeError(f"prune() takes a tpcstudy Topology, not {type(topo).__module__}."
                        f"{type(topo).__name__}; make one with tpcstudy.read_topology(graph) "
                        "(a file or a networkx graph)")
    if topo.links_rule == "multigraph":
        keep = _link_count_core(topo)
    else:
        keep = np.asarray(_core.two_core(topo.graph), dtype=bool)
    if keep.any() and topo.links_rule != "multigraph":
        sub = topo.subgraph(keep)
        comp = np.asarray(_core.connected_components(sub.graph))
        labels, counts = np.unique(comp, return_counts=True)
        best = labels[np.lexsort((labels, -counts))[0]]
        full = np.zeros(topo.num_nodes, dtype=bool)
        full[np.flatnonzero(keep)[comp == best]] = True
        keep = full
    out = topo.subgraph(keep)
    out.meta["pruned"] = True
    out.meta["original_nodes"] = topo.num_nodes
    out.meta["original_links"] = topo.num_links
    return out

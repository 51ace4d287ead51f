"""The :class:`Topology`: routers, links, capacities and IGP weights (docs/method.md §1-2).

A topology is an undirected graph whose parallel links are already collapsed: link ``i`` joins
``link_u[i] < link_v[i]`` and becomes two directed arcs, ``2 i`` (u to v) and ``2 i + 1`` (v to u).
Capacity and IGP weight are per arc (REPETITA files may give each direction its own); multiplicity
and delay are per link. Node ids follow the order of the input file.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import tpcstudy._core as _core

from .errors import TopologyFormatError, UsageError
from .rules import arc_weights, check_rules, fill_delays, raw_capacities

__all__ = ["Topology", "RawEdge", "build_topology", "prune"]


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
    def degree(self) -> np.ndarray:
        """Number of neighbours of each router (links are already collapsed)."""
        return np.bincount(np.concatenate([self.link_u, self.link_v]), minlength=self.num_nodes)

    @property
    def edge_routers(self) -> List[str]:
        """Routers with exactly two neighbours (docs/method.md §2), in id order."""
        return [self._nodes[i] for i in np.flatnonzero(self.degree == 2).tolist()]

    @property
    def edge_router_ids(self) -> np.ndarray:
        return np.flatnonzero(self.degree == 2).astype(np.int32)

    def index_of(self, node: Any) -> int:
        """Id of a router given by name (or already by id)."""
        key = str(node)
        if key in self._index:
            return self._index[key]
        if isinstance(node, (int, np.integer)) and 0 <= int(node) < self.num_nodes:
            return int(node)
        raise UsageError(f"topology {self.name!r} has no router {node!r}")

    def arc_of(self, u: Any, v: Any) -> int:
        """Id of the directed arc from router ``u`` to router ``v``."""
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

    def __repr__(self) -> str:
        return f"<Topology {self.name!r}: {self.num_nodes} routers, {self.num_links} links>"

    # ----------------------------------------------------------------- conversion
    def to_networkx(self) -> Any:
        """A networkx graph with ``capacity``, ``weight``, ``multiplicity`` and ``delay`` attributes.

        An ``nx.Graph`` when both directions of every link agree, else an ``nx.DiGraph``.
        """
        import networkx as nx  # ~60 ms to import; only this conversion needs it here

        sym = (np.array_equal(self.arc_weight[0::2], self.arc_weight[1::2])
               and np.array_equal(self.arc_capacity[0::2], self.arc_capacity[1::2]))
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


def _plain(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


# --------------------------------------------------------------------------- building
def build_topology(
    name: str,
    nodes: Sequence[str],
    edges: Iterable[RawEdge],
    *,
    capacity: str = "uniform",
    weight: str = "hop",
    latitude: Optional[Sequence[float]] = None,
    longitude: Optional[Sequence[float]] = None,
    internal: Optional[Sequence[int]] = None,
    meta: Optional[Mapping[str, Any]] = None,
    source: str = "",
) -> Topology:
    """Collapse raw edges into a :class:`Topology`, applying the capacity and weight rules.

    The rules are those of :mod:`tpcstudy.rules` (docs/method.md §1), each recorded in
    ``topo.meta``. Parallel links: capacities add up, the IGP weight is the smallest (what the
    IGP uses), the delay the smallest, the multiplicity counts them. Self-loops are dropped.
    """
    check_rules(capacity, weight)
    n = len(nodes)
    lat = np.full(n, np.nan) if latitude is None else np.asarray(latitude, dtype=np.float64)
    lon = np.full(n, np.nan) if longitude is None else np.asarray(longitude, dtype=np.float64)
    edges = [e for e in edges if e.u != e.v]
    meta = dict(meta or {})
    meta.setdefault("source", source)

    # ---- capacity per raw edge
    speeds = np.array([e.speed for e in edges], dtype=np.float64)
    known = ~np.isnan(speeds)
    cap, meta["capacity_rule"] = raw_capacities(speeds, capacity)
    if capacity == "uniform":
        meta["capacity_unit"] = "link"
    else:
        meta.setdefault("capacity_unit", "bit/s")
    if np.any(cap <= 0) or not np.all(np.isfinite(cap)):
        bad = int(np.flatnonzero(~(cap > 0) | ~np.isfinite(cap))[0])
        raise TopologyFormatError(source, None, f"link {nodes[edges[bad].u]} - {nodes[edges[bad].v]}"
                                  f" has capacity {cap[bad]!r}; capacities must be positive")

    # ---- group by unordered pair and direction
    groups: Dict[Tuple[int, int], List[int]] = {}
    for i, e in enumerate(edges):
        groups.setdefault((min(e.u, e.v), max(e.u, e.v)), []).append(i)
    keys = sorted(groups)
    m = len(keys)
    link_u = np.array([k[0] for k in keys], dtype=np.int32)
    link_v = np.array([k[1] for k in keys], dtype=np.int32)
    arc_cap = np.zeros(2 * m)
    file_w = np.full(2 * m, np.inf)
    mult = np.zeros(m, dtype=np.int32)
    delay = np.full(m, np.nan)
    known_links = 0
    for li, key in enumerate(keys):
        fw = [i for i in groups[key] if not edges[i].directed or edges[i].u == key[0]]
        bw = [i for i in groups[key] if not edges[i].directed or edges[i].u == key[1]]
        if not fw or not bw:  # links are undirected (docs/method.md §1): never invent a direction
            e = edges[(fw or bw)[0]]
            raise TopologyFormatError(source, e.line, f"the arc {nodes[e.u]} -> {nodes[e.v]} is "
                                      f"listed but not {nodes[e.v]} -> {nodes[e.u]}: links are "
                                      "undirected here, list both directions (for a networkx "
                                      "DiGraph whose arcs stand for links: g.to_undirected())")
        arc_cap[2 * li] = cap[fw].sum()
        arc_cap[2 * li + 1] = cap[bw].sum()
        fwd_w = [edges[i].weight for i in fw if not math.isnan(edges[i].weight)]
        bwd_w = [edges[i].weight for i in bw if not math.isnan(edges[i].weight)]
        file_w[2 * li] = min(fwd_w) if fwd_w else np.nan
        file_w[2 * li + 1] = min(bwd_w) if bwd_w else np.nan
        mult[li] = max(len(fw), len(bw)) if any(edges[i].directed for i in groups[key]) else len(fw)
        ds = [edges[i].delay for i in groups[key] if not math.isnan(edges[i].delay)]
        if ds:
            delay[li] = min(ds)
        if all(known[groups[key]]):
            known_links += 1
    meta["capacity_known_links"] = known_links  # links whose file gives a speed, whatever the rule

    # ---- IGP weight per arc, then the delay fallback
    w, meta["weight_rule"] = arc_weights(weight, arc_cap, file_w, link_u, link_v, lat, lon, nodes,
                                         source)
    fill_delays(delay, link_u, link_v, lat, lon)
    return Topology(name, nodes, link_u, link_v, arc_cap, w, multiplicity=mult, delay=delay,
                    latitude=lat, longitude=lon, internal=internal, meta=meta)


# --------------------------------------------------------------------------- pruning
def prune(topo: Topology) -> Topology:
    """Keep the 2-core, then its largest connected component (docs/method.md §2).

    Ties between equally large components go to the one holding the smallest router id.
    """
    if not isinstance(topo, Topology):
        raise TypeError(f"prune() takes a tpcstudy Topology, not {type(topo).__module__}."
                        f"{type(topo).__name__}; make one with tpcstudy.read_topology(graph) "
                        "(a file or a networkx graph)")
    keep = np.asarray(_core.two_core(topo.graph), dtype=bool)
    if keep.any():
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

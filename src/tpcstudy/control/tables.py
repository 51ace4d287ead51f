"""The controller's tables: the topology a set of link events leaves, the path table each
reaction gives it, each host's map records, and what has to be pushed.

- ``reoptimised``: the max-flow LP afresh on the failed graph (the topology without the down
  links, router ids kept) over the same pairs, and the export of its paths
  (:func:`~tpcstudy.export.path_table` with ``select="maxflow"``, what ``tpcstudy export
  --select maxflow`` writes for the intact one); pairs the failure disconnects are left out.
- ``hosts``: the paths of the table in force before the first failure, minus those whose
  route in the intact network crosses a down link; the remaining slots' weights scaled so
  that an entry keeps its total weight. An entry with no path left keeps its plain IGP path
  (one segment: the egress, which the re-converged IGP routes around the failure).

:func:`host_records` renders one host's entries in the agent's layout (key, value) exactly as
the bpf export writes them; :func:`push_plan` compares them with what each host has now: only
hosts whose records changed are pushed.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

from ..errors import UsageError
from ..export import path_table
from ..export.addressing import AddressPlan
from ..export.layout import encode_value
from ..export.table import Entry, PathRecord, PathTable
from ..paths import segment_ratios
from ..topology import Topology, component_labels, without_links

__all__ = ["REACTIONS", "failed_graph", "transition_safe", "keep_unaffected", "connected_pairs",
           "reoptimised_table", "hosts_table", "host_records", "push_plan", "TableState", "path_arcs",
           "branches", "pin"]

REACTIONS = ("reoptimised", "hosts")
Link = Tuple[int, int]
Records = List[Tuple[bytes, bytes]]


def _key(u: int, v: int) -> Link:
    return (u, v) if u < v else (v, u)


def failed_graph(topo: Topology, down: Iterable[Link]) -> Topology:
    """``topo`` without the links ``down`` (:func:`tpcstudy.topology.without_links`)."""
    return without_links(topo, down)


def connected_pairs(topo: Topology, pairs: Sequence[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The pairs whose routers ``topo`` still connects."""
    comp = component_labels(topo)
    return [(s, t) for s, t in pairs if comp[topo.index_of(s)] == comp[topo.index_of(t)]]


def path_arcs(topo: Topology, source: str, waypoints: Sequence[str]) -> Set[int]:
    """Every arc the sr-path ``source`` -> ``waypoints`` may use on ``topo`` (its segments'
    ECMP DAGs)."""
    hops = [topo.index_of(source)] + [topo.index_of(w) for w in waypoints]
    if len(hops) < 2:
        return set()
    _, arcs, _ = segment_ratios(topo, np.array(hops[:-1], dtype=np.int32),
                                np.array(hops[1:], dtype=np.int32))
    return {int(a) for a in arcs.tolist()}


def reoptimised_table(topo: Topology, plan: AddressPlan, pairs: Sequence[Tuple[str, str]],
                      down: Iterable[Link], *, k: int = 4, paths: int = 8,
                      solver: str = "highs", routed: Optional[Topology] = None,
                      hold_unsafe: bool = False) -> PathTable:
    """The ``reoptimised`` reaction's table (module docstring). With ``routed`` (the topology
    the routers still route on: the intact one until the IGP re-converges), each entry's paths
    are ordered transition-safe first (:func:`transition_safe`)."""
    d = frozenset(_key(int(u), int(v)) for u, v in down)
    g = failed_graph(topo, d)
    live = connected_pairs(g, pairs)
    if not live:
        raise UsageError(f"{topo.name}: the failure disconnects every pair")
    table = path_table(g, k=k, paths=paths, plan=plan, pairs=live, select="maxflow",
                       solver=solver)
    return (transition_safe(table, g, routed, d, hold_unsafe=hold_unsafe) if routed is not None
            else table)


def _segment_links(topo: Topology, u: int, v: int) -> Set[Link]:
    """The directed router pairs ``(a, b)`` of segment ``u -> v``'s ECMP DAG on ``topo``
    (empty when ``v`` is unreachable)."""
    _, arcs, _ = segment_ratios(topo, np.array([u], dtype=np.int32),
                                np.array([v], dtype=np.int32))
    return {(int(topo.arc_src[a]), int(topo.arc_dst[a])) for a in arcs.tolist()}


def branches(topo: Topology, source: str, waypoints: Sequence[str], *, limit: int = 8
             ) -> Optional[List[Tuple[List[int], float]]]:
    """The routes the sr-path ``source`` -> ``waypoints`` takes on ``topo``: every branch of
    its segments' ECMP DAGs (router ids, source first) with its share of the path's traffic
    (the product of the even splits along it; the shares sum to 1). None when there are more
    than ``limit`` branches or a waypoint is unreachable."""
    hops = [topo.index_of(source)] + [topo.index_of(w) for w in waypoints]
    routes: List[Tuple[List[int], float]] = [([hops[0]], 1.0)]
    for u, v in zip(hops[:-1], hops[1:]):
        if u == v:
            continue
        _, arcs, frac = segment_ratios(topo, np.array([u], dtype=np.int32),
                                       np.array([v], dtype=np.int32))
        if not len(arcs):
            return None
        out: Dict[int, List[Tuple[int, float]]] = {}
        for a, f in zip(arcs.tolist(), frac.tolist()):
            out.setdefault(int(topo.arc_src[a]), []).append((int(topo.arc_dst[a]), float(f)))
        seg: List[Tuple[List[int], float]] = []
        stack: List[Tuple[List[int], float]] = [([u], 1.0)]
        while stack:
            nodes, share = stack.pop()
            x = nodes[-1]
            if x == v:
                seg.append((nodes, share))
                if len(seg) > limit:
                    return None
                continue
            nxt = out.get(x, [])
            total = sum(f for _, f in nxt)
            for y, f in reversed(nxt):  # (popped in arc order)
                stack.append((nodes + [y], share * f / total))
        routes = [(r + s[1:], a * b) for r, a in routes for s, b in seg]
        if len(routes) > limit:
            return None
    return routes


def pin(routed: Topology, failed: Topology, nodes: Sequence[int]) -> Optional[List[int]]:
    """The waypoints (router ids, the last router of ``nodes`` last) that send a packet along
    the simple route ``nodes`` on ``routed`` and on ``failed`` alike: each segment as long as
    its ECMP DAG on both is the route's own stretch (greedy, the farthest router first). None
    when the route repeats a router or a one-link segment already strays on one of them."""
    if len(set(nodes)) != len(nodes) or len(nodes) < 2:
        return None
    wps: List[int] = []
    i = 0
    while i < len(nodes) - 1:
        best = None
        for j in range(len(nodes) - 1, i, -1):
            own = {(nodes[k], nodes[k + 1]) for k in range(i, j)}
            if all(_segment_links(g, nodes[i], nodes[j]) <= own for g in (routed, failed)):
                best = j
                break
        if best is None:
            return None
        wps.append(nodes[best])
        i = best
    return wps


def _pinned_branches(table: PathTable, failed: Topology, routed: Topology, source: str,
                     p: PathRecord) -> Optional[List[PathRecord]]:
    """Path ``p`` (of the failed graph's table) as the routes it takes on ``failed``, each
    pinned by waypoints that route it the same way on ``routed`` (so it works before the IGP
    re-converges and after) and weighted by ``p``'s weight times the route's ECMP share; None
    when a route cannot be pinned (or there are more than 8)."""
    routes = branches(failed, source, p.waypoints)
    if not routes:
        return None
    names = failed.names
    out = []
    for nodes, share in routes:
        wps = pin(routed, failed, nodes)
        if wps is None or len(wps) > 9:
            return None
        hops = [names[w] for w in wps]
        out.append(PathRecord([names[n] for n in nodes], [table.plan.loopback(w) for w in hops],
                              hops, p.bw_mbps, p.delay_ms, p.igp_cost, weight=p.weight * share))
    return out


def transition_safe(table: PathTable, failed: Topology, routed: Topology,
                    down: FrozenSet[Link], *, hold_unsafe: bool = False) -> PathTable:
    """``table`` (paths of the failed graph) with, in each entry, first the paths whose route
    avoids the down links on ``routed`` as well (they work before the IGP re-converges and
    after), in their order, then the others. A path of weight > 0 that does not avoid them is
    replaced, after the safe ones, by the routes it takes on the failed graph (its segments'
    ECMP branches), each pinned by waypoints that route it alike on ``routed``, at its share of
    the path's weight (:func:`_pinned_branches`; one equal to a path already there adds its
    weight to it), when every branch can be pinned and the entry's 8 slots hold them: after the
    IGP they route as the path did, and before it they already work, so the connections a swap
    moves spread over the entry's routes in the LP's proportions at once. (Until 2026-11-27 an
    entry with no safe path got one path in front, its first path's shortest route with every
    router a waypoint, at the whole weight: on six-paths every connection of C1 -> S1, whose one
    path was the plain IGP route, ECMP over P2..P6 on the failed graph, moved onto the route over
    P2 beside three of C2's and stayed there: 7 connections on one link, 12 % of its packets
    dropped, the backed-off retransmissions of 1-2 of them lost to the end of the run.) An entry
    with still no safe path gets that one path in front. A connection the swap moves
    goes to a slot of its entry: one that is not a black hole. With ``hold_unsafe`` the
    remaining others are left out (when the entry has a weighted safe path) until a later table,
    the same safe paths in the same slots followed by the others, is pushed once the IGP has
    re-converged: no slot of the held table routes over a down link, so the agent keeps no
    connection on one (it keeps a connection whose slot holds the same SRH, whatever that slot's
    weight: a path held at weight 0 in its old slot would keep its connections in the black
    hole), and the later table moves no connection."""
    bad = {a for a in range(2 * routed.num_links)
           if _key(int(routed.arc_src[a]), int(routed.arc_dst[a])) in down}
    entries = []
    for e in table.entries:
        safe = [p for p in e.paths if not (path_arcs(routed, e.source, p.waypoints) & bad)]
        unsafe = [p for p in e.paths if p not in safe]
        rest = []
        for p in unsafe:
            subs = _pinned_branches(table, failed, routed, e.source, p) if p.weight > 0 \
                else None
            at = {tuple(q.waypoints): i for i, q in enumerate(safe)}
            if subs is None or len(safe) + len({tuple(q.waypoints) for q in subs}
                                               - set(at)) > 8:
                rest.append(p)
                continue
            for q in subs:
                i = at.get(tuple(q.waypoints))
                if i is None:
                    at[tuple(q.waypoints)] = len(safe)
                    safe.append(q)
                else:
                    safe[i] = dataclasses.replace(safe[i], weight=safe[i].weight + q.weight)
        if not safe and e.paths:
            nodes = list(e.paths[0].nodes)
            hops = nodes[1:]
            if 1 <= len(hops) <= 9 and not (path_arcs(routed, e.source, hops) & bad):
                p0 = e.paths[0]
                safe = [PathRecord(nodes, [table.plan.loopback(w) for w in hops], hops,
                                   p0.bw_mbps, p0.delay_ms, p0.igp_cost, weight=p0.weight)]
        if hold_unsafe and any(p.weight > 0 for p in safe):
            rest = []
        entries.append(Entry(e.source, e.destination, e.prefix, (safe + rest)[:8]))
    return dataclasses.replace(table, entries=entries,
                               meta={**table.meta, "order": "transition-safe paths first"})


def hosts_table(topo: Topology, base: PathTable, down: Iterable[Link]) -> PathTable:
    """The ``hosts`` reaction's table (module docstring): ``base`` without the paths that
    cross a down link, re-weighted."""
    gone = {_key(int(u), int(v)) for u, v in down}
    if not gone:
        return base
    bad = {a for a in range(2 * topo.num_links)
           if _key(int(topo.arc_src[a]), int(topo.arc_dst[a])) in gone}
    entries = []
    for e in base.entries:
        keep = [p for p in e.paths if not (path_arcs(topo, e.source, p.waypoints) & bad)]
        total = sum(p.weight for p in e.paths)
        if not keep:
            egress = e.paths[0].waypoints[-1] if e.paths else e.destination
            keep = [PathRecord([e.source, egress], [base.plan.loopback(egress)], [egress],
                               0.0, 0.0, 0.0, weight=total or 1.0)]
        else:
            left = sum(p.weight for p in keep)
            if left > 0 and total > 0:
                keep = [dataclasses.replace(p, weight=p.weight * total / left) for p in keep]
        entries.append(Entry(e.source, e.destination, e.prefix, keep))
    return dataclasses.replace(base, entries=entries,
                               meta={**base.meta, "reaction": "hosts"})


def keep_unaffected(topo: Topology, base: PathTable, new: PathTable,
                    down: Iterable[Link]) -> PathTable:
    """``new`` where ``base``'s entry has a path crossing a down link (on ``topo``), ``base``'s
    entry elsewhere: a failure moves only the connections it affects (an entry the failure
    disconnects keeps its old paths)."""
    gone = {_key(int(u), int(v)) for u, v in down}
    bad = {a for a in range(2 * topo.num_links)
           if _key(int(topo.arc_src[a]), int(topo.arc_dst[a])) in gone}
    fresh = {(e.source, e.destination): e for e in new.entries}
    entries = []
    for e in base.entries:
        hit = any(path_arcs(topo, e.source, p.waypoints) & bad for p in e.paths)
        entries.append(fresh.get((e.source, e.destination), e) if hit else e)
    return dataclasses.replace(new, entries=entries,
                               meta={**new.meta, "scope": "only the entries the failure affects"})


def host_records(table: PathTable, host: str, variant: str) -> Records:
    """``host``'s map records of ``table`` in layout ``variant`` (key order as in the table)."""
    return [(e.key, encode_value(e.prefix, e.paths, variant))
            for e in table.entries if e.source == host]


def push_plan(current: Dict[str, Records], new: Dict[str, Records]) -> List[str]:
    """The hosts whose records differ (as sets of key -> value), in ``new``'s order."""
    return [h for h, recs in new.items() if dict(current.get(h, [])) != dict(recs)]


@dataclasses.dataclass
class TableState:
    """What the controller owns: the intact topology, its plan and pairs, the hosts, the table
    in force before any failure, the links down, and each host's records now."""

    topology: Topology
    plan: AddressPlan
    pairs: List[Tuple[str, str]]
    hosts: List[str]
    base: PathTable
    variant: str
    reaction: str = "reoptimised"
    k: int = 4
    paths: int = 8
    solver: str = "highs"
    #: Order each entry's paths transition-safe first (:func:`transition_safe`).
    transition_safe: bool = True
    #: Replace only the entries a down link affects (:func:`keep_unaffected`).
    only_affected: bool = True
    #: The paths not transition-safe left out (:func:`transition_safe`; the controller's ``both``).
    hold_unsafe: bool = False
    down: Set[Link] = dataclasses.field(default_factory=set)
    records: Dict[str, Records] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.reaction not in REACTIONS:
            raise UsageError(f"--reaction {self.reaction!r}: choose from {', '.join(REACTIONS)}")
        if not self.records:
            self.records = {h: host_records(self.base, h, self.variant) for h in self.hosts}

    def apply(self, kind: str, u: int, v: int) -> bool:
        """Record a link event; whether it changed the set of links down."""
        key = _key(u, v)
        before = frozenset(self.down)
        (self.down.add if kind == "down" else self.down.discard)(key)
        return frozenset(self.down) != before

    def table(self, down: Optional[FrozenSet[Link]] = None) -> PathTable:
        """The table for the links down now (the base table when none is)."""
        d = frozenset(self.down) if down is None else down
        if not d:
            return self.base
        if self.reaction == "hosts":
            return hosts_table(self.topology, self.base, d)
        new = reoptimised_table(self.topology, self.plan, self.pairs, d, k=self.k,
                                paths=self.paths, solver=self.solver,
                                routed=self.topology if self.transition_safe else None,
                                hold_unsafe=self.hold_unsafe and self.transition_safe)
        return keep_unaffected(self.topology, self.base, new, d) if self.only_affected else new

    def plan_push(self, table: PathTable) -> Tuple[List[str], Dict[str, Records]]:
        """The hosts to push and every host's new records (a host with no entry left gets an
        empty table)."""
        new = {h: host_records(table, h, self.variant) for h in self.hosts}
        return push_plan(self.records, new), new

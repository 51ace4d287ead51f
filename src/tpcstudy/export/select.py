"""Which paths a host is given: building the path table (docs/method.md §6, docs/srh-map.md).

For each (source edge router, destination prefix) of the pruned topology the table holds up to
8 paths, default first:

- **slot 0** is the plain IGP shortest path: one segment, the egress router;
- then the ``sps`` link-disjoint paths with at most ``k`` segments (docs/method.md §5), skipping
  a path whose waypoint list equals one already taken (the first sps path is usually the plain
  shortest path itself), up to ``paths`` in all; or, with ``select="maxflow"``, first the
  sr-paths the max-flow LP over the pairs puts flow on.

A path's **waypoints** are the routers whose loopbacks form its SRH, in the order packets visit
them, egress router last (so the plain path has one waypoint: the egress). Its **nodes** are the
concrete route: for a segment with ECMP, the route the path core returns (the smallest node ids).
Along that route:

- ``bw_mbps`` = the bottleneck arc capacity in Mbit/s: ``bit/s`` / 1e6, ``kbit/s`` / 1e3; for
  uniform capacities (unit ``link``) there is no real speed and each link counts ``link_mbps``
  (default 1000, i.e. 1 Gbit/s per physical link; 0 writes zero); the rule is written in the table;
- ``delay_ms`` = the sum of the links' delays (REPETITA file delays, else great-circle distance /
  200 km/ms, else 0 for a link with neither; the count of such links is written in the table);
- ``igp_cost`` = the sum of the IGP weights of the route's arcs.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np

from ..errors import ExportError, PlanError, SolverError, UsageError
from ..models.demands import GENERATED, demand_matrix, matrix_rule
from ..models.maxflow import max_flow
from ..models.mlu import demand_arrays, min_mlu
from ..models.unsplit import sr_unsplit
from ..paths import DEFAULT_K, DEFAULT_PATHS, disjoint_paths_batch, shortest_paths
from ..topology import Topology, prune
from .addressing import AddressPlan, default_plan, plan_from_dict, read_plan
from .layout import MAX_PATHS, MAX_SEGMENTS
from .table import Entry, PathRecord, PathTable, check_pair, read_pairs

__all__ = ["path_table", "SELECT_RULES"]

#: Multiply a capacity in ``topo.meta["capacity_unit"]`` by this to get Mbit/s.
_UNIT_TO_MBPS = {"bit/s": 1e-6, "kbit/s": 1e-3, "Mbit/s": 1.0, "Gbit/s": 1e3}


def _resolve_plan(plan: Any, topo: Topology) -> AddressPlan:
    if plan is None:
        out = default_plan(topo)
    elif isinstance(plan, AddressPlan):
        out = plan
    elif isinstance(plan, dict):
        out = plan_from_dict(plan)
    elif isinstance(plan, (str, os.PathLike)):
        out = read_plan(plan)
    else:
        raise UsageError(f"plan must be an AddressPlan, a dict or a file, not {type(plan).__name__}")
    out.check(topo)
    return out


def _mbps_factor(topo: Topology, link_mbps: float) -> Tuple[float, str]:
    unit = str(topo.meta.get("capacity_unit", "bit/s"))
    if unit == "link":
        return float(link_mbps), (
            f"bottleneck arc capacity along the route; capacities are uniform (unit 'link', no "
            f"real speed): each physical link counts {float(link_mbps):g} Mbit/s")
    if unit not in _UNIT_TO_MBPS:
        raise ExportError(f"topology {topo.name!r}: unknown capacity unit {unit!r} (expected one "
                          f"of {', '.join(['link', *_UNIT_TO_MBPS])})")
    return _UNIT_TO_MBPS[unit], f"bottleneck arc capacity along the route, {unit} -> Mbit/s"


SELECT_RULES = ("sps", "maxflow", "mlu")


def path_table(topo: Topology, *, k: int = DEFAULT_K, paths: int = DEFAULT_PATHS, plan: Any = None,
               pairs: Any = None, link_mbps: float = 1000.0, select: str = "sps",
               solver: str = "highs", demands: Any = None, seed: int = 0) -> PathTable:
    """The path table of ``topo`` for the TPC agent (module docstring, docs/srh-map.md).

    Parameters
    ----------
    topo
        The topology; pruned here (``tpcstudy.prune``) unless it already is.
    k
        Segment limit of the sps paths (1..9: the SRH holds at most 9 segments).
    paths
        Paths per destination, default path included (1..8).
    plan
        ``None`` (the default plan of :func:`tpcstudy.export.addressing.default_plan`), an
        :class:`~tpcstudy.export.addressing.AddressPlan`, a dict or a plan file.
    pairs
        ``None``: every ordered pair (edge router, router with a prefix in the plan), i.e. all
        edge-router pairs with the default plan. Else ``[(source, destination), ...]`` names, or a
        pairs file (:func:`read_pairs`).
    link_mbps
        Mbit/s per link when capacities are uniform (unit ``link``); ``0`` writes zero.
    select
        How the backups after slot 0 are chosen: ``"sps"`` (the link-disjoint sps paths, in the
        order found) or ``"maxflow"`` (the sr-paths with at most ``k`` segments that the max-flow
        LP over the table's pairs puts flow on, largest flow first, then the sps paths; these
        backups carry the most traffic together but need not be disjoint from slot 0).
        ``"mlu"``: the traffic-engineering solution of a demand matrix (``demands``; the
        topology is not pruned, every router of the matrix gets a host prefix under the default
        plan): slot 0 is the one sr-path ``sr-unsplit`` gives the demand (what a router would
        deploy), then the other sr-paths the minimum-MLU LP splits it over, largest share first,
        then sps paths; every slot's weight is its share of the demand in the LP's split (0 for
        paths the LP does not use), so the BPF host agent's weighted round robin deploys the
        splittable optimum and the first slot the unsplit one.
    solver
        LP backend for ``select="maxflow"`` and ``"mlu"``.
    demands, seed
        ``select="mlu"``: the matrix (a REPETITA ``.demands`` path, ``"gravity"`` or
        ``"uniform"`` drawn with ``seed``, or ``(source, target, volume)`` triples) and the
        seed of ``sr-unsplit``.

    Returns
    -------
    PathTable
        One :class:`Entry` per (source, destination prefix), sources in router order.
    """
    if not 1 <= int(k) <= MAX_SEGMENTS:
        raise UsageError(f"k = {k!r}: the agent's SRH holds 1 to {MAX_SEGMENTS} segments")
    if not 1 <= int(paths) <= MAX_PATHS:
        raise UsageError(f"paths = {paths!r}: the agent holds 1 to {MAX_PATHS} paths per "
                         f"destination")
    k, paths = int(k), int(paths)
    if select not in SELECT_RULES:
        raise UsageError(f"select = {select!r}: choose from {', '.join(SELECT_RULES)}")
    if not math.isfinite(link_mbps) or link_mbps < 0:
        raise UsageError(f"link_mbps = {link_mbps!r} must be >= 0")
    te = None
    if select == "mlu":
        if demands is None or pairs is not None:
            raise UsageError("select mlu takes a demand matrix (demands), not pairs")
        t = topo
        te = te_routing(t, demands, k=k, seed=seed, solver=solver)
        ends = sorted({int(x) for x in te[0]} | {int(x) for x in te[1]})
        if plan is None:
            plan = default_plan(t, edge_routers=[t.names[i] for i in ends])
        pairs = [(t.names[a], t.names[b]) for a, b in zip(te[0].tolist(), te[1].tolist())]
    elif demands is not None:
        raise UsageError(f"demands: only select mlu takes a demand matrix, not {select!r}")
    t = topo if topo.meta.get("pruned") or te is not None else prune(topo)
    the_plan = _resolve_plan(plan, t)
    names = t.names

    if pairs is None:
        if plan is not None:  # a user plan: every edge router is a destination, none dropped
            missing = [r for r in t.edge_routers if not the_plan.prefixes.get(r)]
            if missing:
                more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
                raise PlanError(the_plan.source, f"no host prefix for edge router "
                                f"{missing[0]!r}{more}: every edge router is a destination; "
                                "give it a prefix, or name the pairs with --pairs")
        dests = [r for r in names if the_plan.prefixes.get(r)]
        sources = t.edge_routers
        pair_list = [(s, d) for s in sources for d in dests if s != d]
        pairs_rule = "every ordered pair (edge router, router with a prefix in the plan)"
    else:
        if isinstance(pairs, (str, os.PathLike)):
            pair_list = read_pairs(pairs, t)
            pairs_rule = f"pairs from {os.fspath(pairs)}"
        else:
            pair_list = [check_pair(t, s, d, f"pairs[{i}]") for i, (s, d) in enumerate(pairs)]
            pairs_rule = "pairs given by the caller"
        pair_list = list(dict.fromkeys(pair_list))
        for _, d in pair_list:
            if not the_plan.prefixes.get(d):
                raise PlanError(the_plan.source, f"no host prefix for destination router {d!r}")
    for r in dict.fromkeys(r for pr in pair_list for r in pr):  # first missing router, in order
        the_plan.loopback(r)

    factor, bw_rule = _mbps_factor(t, link_mbps)
    link_delay = np.where(np.isnan(t.delay), 0.0, t.delay).tolist()
    cap = (t.arc_capacity * factor).tolist()
    weight = t.arc_weight.tolist()
    # Each hop u -> v: its IGP weight, the capacity ECMP gives it and its delay. Parallel links
    # (multigraph) share a hop: the IGP uses those of the least weight, together.
    hop: Dict[Tuple[int, int], Tuple[float, float, float]] = {}
    for a, (u, v) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist())):
        w, c, d = weight[a], cap[a], link_delay[a // 2]
        old = hop.get((u, v))
        if old is None or w < old[0]:
            hop[(u, v)] = (w, c, d)
        elif w == old[0]:
            hop[(u, v)] = (w, old[1] + c, min(old[2], d))
    loop = {r: the_plan.loopbacks.get(r) for r in names}

    def record(route: List[int], wps: List[int]) -> PathRecord:
        hops = [hop[(u, v)] for u, v in zip(route[:-1], route[1:])]
        return PathRecord(
            nodes=[names[x] for x in route],
            segments=[loop[names[w]] or the_plan.loopback(names[w]) for w in wps],
            waypoints=[names[w] for w in wps],
            bw_mbps=float(min(h[1] for h in hops)) if hops else 0.0,
            delay_ms=float(sum(h[2] for h in hops)),
            igp_cost=float(sum(h[0] for h in hops)))

    src = np.array([t.index_of(s) for s, _ in pair_list], dtype=np.int32)
    dst = np.array([t.index_of(d) for _, d in pair_list], dtype=np.int32)
    batch = disjoint_paths_batch(t, src, dst, method="sps", k=k)
    entries: List[Entry] = []
    no, nodes_all = batch.node_offsets.tolist(), batch.nodes.tolist()
    wo, wps_all = batch.waypoint_offsets.tolist(), batch.waypoints.tolist()
    lp_paths = _maxflow_backups(t, src, dst, k, solver) if select == "maxflow" else None
    for i, (s, d) in enumerate(pair_list):
        di = int(dst[i])
        # slot 0 = the direct segment (the plain IGP path), then the other sps paths
        recs = [record(nodes_all[no[q]:no[q + 1]], [*wps_all[wo[q]:wo[q + 1]], di])
                for q in batch.exported(i, paths)]
        if te is not None and recs:  # the unsplit path, the LP's split, then sps
            recs = _te_records(te[2][i], recs, record, lambda a, b: [
                t.index_of(x) for x in shortest_paths(t, names[a], names[b], limit=1)[0]], paths)
        elif lp_paths is not None and recs:  # LP-chosen backups first, then the sps ones
            taken = {tuple(recs[0].waypoints)}
            chosen = recs[:1]
            for route, wps in lp_paths[i]:
                key = tuple(names[w] for w in wps)
                if len(chosen) < paths and key not in taken:
                    taken.add(key)
                    chosen.append(record(route, wps))
            for rec in recs[1:]:
                if len(chosen) < paths and tuple(rec.waypoints) not in taken:
                    taken.add(tuple(rec.waypoints))
                    chosen.append(rec)
            recs = chosen
        if not recs:
            continue  # unreachable: no entry (cannot happen in a pruned topology)
        for prefix in the_plan.prefixes[d]:
            entries.append(Entry(s, d, prefix, recs))

    unknown_delay = int(np.isnan(t.delay).sum())
    meta = {
        "pairs_rule": pairs_rule,
        "path_rule": (_TE_RULE.format(k=k, paths=paths) if te is not None else
                      "slot 0: plain IGP shortest path (one segment, the egress router); then "
                      + ("the sr-paths the max-flow LP (sr, these pairs, uniform demand-free "
                         "throughput) puts flow on, largest first, then " if select == "maxflow"
                         else "")
                      + f"sps link-disjoint paths with at most k={k} segments, duplicates "
                        f"skipped, at most {paths} in all"),
        "select": select,
        "route_rule": "nodes: for a segment with ECMP, the route with the smallest node ids",
        "bw_rule": bw_rule,
        "bw_unit": "Mbit/s",
        "capacity_unit": str(t.meta.get("capacity_unit", "")),
        "link_mbps": float(link_mbps) if t.meta.get("capacity_unit") == "link" else None,
        "delay_rule": (f"sum of link delays along the route (ms): file delays, else great-circle "
                       f"distance / 200 km/ms, else 0 ({unknown_delay} of {t.num_links} links "
                       f"have neither)"),
        "delay_unknown_links": unknown_delay,
        # REPETITA files do not state their delay unit: their numbers are written as they are
        "delay_unit": str(t.meta.get("delay_unit", "ms")),
        "igp_rule": f"sum of IGP weights along the route ({t.meta.get('weight_rule', '')})",
        "plan": "plan.json",
    }
    if te is not None:
        meta.update(mlu_lp=te[3], mlu_unsplit=te[4], demands_rule=te[5])
    return PathTable(t.name, entries, the_plan, k, paths, meta)


_TE_RULE = ("the minimum-MLU solution of the demand matrix (sr, at most k={k} segments): slot 0 "
            "the one sr-path sr-unsplit gives the demand, then the other sr-paths the LP splits "
            "it over (largest share first), then sps link-disjoint paths, at most {paths} in "
            "all; weight = the path's share of the demand in the LP's split (0: not used by the "
            "LP; the BPF agent's wrr then deploys the LP's split)")


def te_routing(t: Topology, demands: Any, *, k: int, seed: int, solver: str
               ) -> Tuple[np.ndarray, np.ndarray, List[List[Tuple[List[int], float]]], float,
                          float, str]:
    """``(sources, targets, per demand [(waypoint ids incl. source, share)], LP MLU, unsplit
    MLU, matrix rule)``: the unsplit path first (its LP share), then the LP's other paths."""
    if isinstance(demands, str) and demands in GENERATED:
        S, T, V = demand_matrix(t, demands, seed)
        rule = matrix_rule(demands)
    elif isinstance(demands, (str, os.PathLike)):
        S, T, V = demand_matrix(t, "file", path=Path(demands))
        rule = f"{os.fspath(demands)}: {matrix_rule('file')}"
    else:
        S, T, V = demand_arrays(t, demands)
        rule = "the demands given by the caller"
    if not len(S):
        raise ExportError(f"{t.name}: the demand matrix has no demand to route")
    lp = min_mlu(t, list(zip(S.tolist(), T.tolist(), V.tolist())), model="sr", k=k,
                 solver=solver)
    if not math.isfinite(lp.mlu):
        raise ExportError(f"{t.name}: the demand matrix cannot be routed (a demand has no path)")
    un = sr_unsplit(t, lp, seed=seed)
    out: List[List[Tuple[List[int], float]]] = []
    for i in range(len(lp.sources)):
        vol = float(lp.volumes[i])
        split = {tuple(int(x) for x in p): f / vol for p, f in lp.paths[i] if f > 1e-12 * vol}
        first = tuple(int(x) for x in un.paths[i][0][0])
        rest = sorted((p for p in split if p != first), key=lambda p: (-split[p], p))
        out.append([(list(first), split.get(first, 0.0))] + [(list(p), split[p]) for p in rest])
    return lp.sources, lp.targets, out, float(lp.mlu), float(un.mlu), rule


def _te_records(chosen: List[Tuple[List[int], float]], sps: List[PathRecord], record: Any,
                segment_route: Any, paths: int) -> List[PathRecord]:
    """A demand's slots: its TE paths (route: each segment's smallest-id shortest path), then
    the sps paths not among them, weight 0."""
    out: List[PathRecord] = []
    taken = set()
    for ids, share in chosen:
        if len(out) >= paths:
            break
        route = [ids[0]]
        for a, b in zip(ids[:-1], ids[1:]):
            route.extend(segment_route(a, b)[1:])
        rec = record(route, ids[1:])
        rec.weight = float(share)
        taken.add(tuple(rec.waypoints))
        out.append(rec)
    for rec in sps:
        if len(out) < paths and tuple(rec.waypoints) not in taken:
            taken.add(tuple(rec.waypoints))
            rec.weight = 0.0
            out.append(rec)
    return out


def _maxflow_backups(t: Topology, src: np.ndarray, dst: np.ndarray, k: int,
                     solver: str) -> List[List[Tuple[List[int], List[int]]]]:
    """Per pair, the sr-paths the sr max-flow LP over all the pairs puts flow on, largest flow
    first (ties by waypoints): ``(route node ids, segment endpoint ids)``, the route being the
    smallest-id shortest path of each segment."""
    res = max_flow(t, np.stack([src, dst], axis=1), model="sr", k=k, solver=solver)
    if not res.ok:
        raise SolverError(f"select maxflow: the sr LP failed ({res.status}: {res.message})")
    by_pair: Dict[Tuple[int, int], List[Tuple[float, List[int]]]] = {}
    for path, flow in zip(res.paths, res.flows.tolist()):
        if flow > 1e-9 and len(path) > 2:  # the direct path is slot 0 already
            ids = [t.index_of(x) for x in path]
            by_pair.setdefault((ids[0], ids[-1]), []).append((-flow, ids))
    out: List[List[Tuple[List[int], List[int]]]] = []
    for s_, d_ in zip(src.tolist(), dst.tolist()):
        items = []
        for _, ids in sorted(by_pair.get((s_, d_), []), key=lambda x: (x[0], x[1])):
            route = [ids[0]]
            for a, b in zip(ids[:-1], ids[1:]):  # names: a router may be named like another's id
                seg = shortest_paths(t, t.names[a], t.names[b], limit=1)[0]
                route.extend(t.index_of(x) for x in seg[1:])
            items.append((route, ids[1:]))
        out.append(items)
    return out

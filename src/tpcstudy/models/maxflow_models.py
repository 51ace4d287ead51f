"""The forwarding models of the max-flow LP (docs/method.md §4): their columns and pricing.

- ``ecmp`` / ``sr``: sr-paths keyed by ``(s, w1, ..., t)``, ``r`` summed over the segments' ECMP
  ratios, priced by the segment costs and the segment DP (ecmp: the direct sr-path, no pricing);
- ``multipath``: every individual IGP shortest path, priced on each pair's shortest-path DAG
  (:func:`multipath`), or one LP of the flow restricted to the DAGs (:func:`multipath_dag`);
- ``mcf``: arbitrary simple paths priced by Dijkstra on the capacity duals;
- ``mptcp``: the distinct shortest paths K hashed subflows draw, one fixed LP (:func:`mptcp`);
- ``sr+mptcp``: at most K sr-paths per pair (:func:`sr_mptcp`).

All path models run :func:`~.colgen.column_generation`; their pricing and arc usage are the
column oracles both LPs share (:mod:`.oracles`).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import paths as _paths
from ..errors import UsageError
from ..topology import Topology
from .colgen import LazyNames, Snapshot, column_generation
from .decompose import source_paths
from .oracles import PRICE_TOL, ArcPaths, Key, Oracle, arc_usage, sr_usage
from .problem import Clock, Column, MaxFlowResult, Problem, csc
from .subflows import draw_subflows

__all__ = ["sr", "multipath", "multipath_dag", "mcf", "mptcp", "sr_mptcp", "path_keys", "After"]

#: A solution before some links were removed, the map of its arcs to the network's after
#: (-1: removed, :func:`tpcstudy.topology.without_link_ids`'s) and which of its columns the
#: pool keeps (``None``: all).
After = Tuple[Snapshot, np.ndarray, Optional[np.ndarray]]


def sr(p: Problem, k: int, label: str, more: Sequence[Tuple[int, Key]] = (),
       fixed: bool = False, warm: Optional[np.ndarray] = None,
       after: Optional[After] = None) -> MaxFlowResult:
    """sr-paths with at most ``k`` segments; columns keyed by (s, w1, ..., t), r summed over the
    segments' ECMP ratios; priced by the segment costs and the segment DP (k = 1: no pricing).

    No sr-path of a pair costs less than its cheapest path under y, and nothing at or above 1
    enters (the threshold is 1 - z <= 1): the oracle prices at the limit 1, so the DP runs only
    for the other pairs (late rounds leave few: the 2,000-router ISP at 0.1 %: 76 of 2,249).

    ``more``: further starting columns ``(pair, key)`` (a warm start; one with an unreachable
    segment or more than ``k`` segments is left out); ``fixed``: no pricing, the LP over the
    starting columns only; ``warm``: the pairs whose columns the first LP holds
    (:func:`~.colgen.column_generation`); ``after`` (:data:`After`): start from a solution on
    the network before some links were removed (:meth:`~.colgen.Snapshot.carry`: the columns
    that crossed them get their usage here; every pair's direct column is in it)."""
    topo, S, T = p.topo, p.S, p.T
    oracle = Oracle(topo, S, T, "sr", k, p.segments)
    if after is not None:  # (fixed: after[2] masks the old columns the LP is over)
        start = after[0].carry(after[1], lambda keys: oracle.usage(keys, routed=True),
                               after[2])
        res = column_generation(p, label, [], oracle.usage,
                                (lambda y: oracle.price(y, 1.0)) if k > 1 and not fixed
                                else None, oracle.names, start=start)
        res.k = k
        return res
    direct: List[Key] = [(int(s), int(t)) for s, t in zip(S.tolist(), T.tolist())]
    routed = np.diff(oracle.usage(direct).indptr) > 0  # an unreachable pair has no column
    first: List[Optional[Key]] = [q if ok else None for q, ok in zip(direct, routed.tolist())]
    if more:  # warm start / fixed table: sr-paths whose every segment is reachable, once
        cand = [(i, q) for i, q in dict.fromkeys(more) if 2 < len(q) <= k + 1]
        ok = np.diff(oracle.usage([q for _, q in cand], routed=True).indptr) > 0
        more = [m for m, y in zip(cand, ok.tolist()) if y]
    res = column_generation(p, label, first, oracle.usage,
                            (lambda y: oracle.price(y, 1.0)) if k > 1 and not fixed else None,
                            oracle.names, more, warm)
    res.k = k
    return res


def path_keys(topo: Topology, S: np.ndarray, T: np.ndarray, columns: Sequence[Sequence[Any]],
              concrete: bool) -> List[Tuple[int, Key]]:
    """Starting columns given as router sequences ``(s, ..., t)`` (names, or ids as ints), as
    ``(pair, key)``: the pair whose endpoints they join (a sequence joining no pair is refused),
    the key the model uses (``concrete``: the arc ids of a router path, the first of parallel
    links; a path over a missing link is left out; else the sr-path's routers)."""
    pair = {(int(s), int(t)): i for i, (s, t) in reversed(list(enumerate(zip(S.tolist(),
                                                                            T.tolist()))))}
    ap = ArcPaths(topo) if concrete else None
    out: List[Tuple[int, Key]] = []
    for q in columns:
        ids = tuple(topo.index_of(v) for v in q)  # the one node-id rule (docs/method.md §1)
        i = pair.get((ids[0], ids[-1])) if len(ids) >= 2 else None
        if i is None:
            raise UsageError(f"initial column {tuple(q)!r} joins no pair")
        if ap is None:
            out.append((i, ids))
            continue
        u, v = np.asarray(ids[:-1], dtype=np.int64), np.asarray(ids[1:], dtype=np.int64)
        arcs = ap._arc(u, v)
        if np.all((ap.src[arcs] == u) & (ap.dst[arcs] == v)):
            out.append((i, tuple(int(a) for a in arcs)))
    return out


def mcf(p: Problem, more: Sequence[Tuple[int, Key]] = (), fixed: bool = False,
        warm: Optional[np.ndarray] = None, after: Optional[After] = None) -> MaxFlowResult:
    """Multicommodity max flow by column generation over arbitrary simple paths.

    Pricing (:class:`~.oracles.Oracle`): a shortest path from each source on arc lengths
    ``y_l`` (the capacity duals; a tiny 1e-12 is added so zero-dual arcs stay in the sparse
    graph, an error below 1e-9). At the end no path of any pair prices below ``1 - z_pair -
    1e-9``, so the value is the optimum of the arc formulation.

    Each round's prices come from the core's threaded Dijkstra
    (:func:`tpcstudy.paths.path_price_bounds`, distances only: the same sums, so the same
    values to the last bit); the paths, from scipy's Dijkstra with predecessors, run only from
    the sources of the pairs whose path enters (few after the first rounds), so every column is
    the one the search from every source gave before.
    """
    return _path_cg(p, Oracle(p.topo, p.S, p.T, "mcf"), p.topo.arc_weight.astype(np.float64),
                    more, fixed, warm, after)


def sr_routing_paths(p: Problem, sr: MaxFlowResult) -> List[Tuple[int, Key]]:
    """An ``sr`` optimum of the same pairs (any ``k``) as concrete simple paths: each pair's
    flow on its sr-paths (the segments' ECMP splits, added up over the arcs) traced into
    paths, their arc ids as ``mcf`` keys them. Together they route what the sr optimum does on
    no more than its arc loads (a cycle in the sum carries nothing and is left out), so an
    ``mcf`` LP holding them starts at the sr optimum's value (:func:`mcf`'s ``more``)."""
    return [(i, arcs) for i, arcs, _ in sr_routing(p, sr)]


def sr_routing(p: Problem, sr: MaxFlowResult) -> List[Tuple[int, Key, float]]:
    """:func:`sr_routing_paths` with each path's flow (the topology's units)."""
    x = np.asarray(sr.flows, dtype=np.float64)
    if sr.keys is None or not len(x) or not (x.max() > 0):
        return []
    tol = 1e-9 * float(x.max())
    used = np.flatnonzero(x > tol)
    owner = np.asarray(sr.path_pair)[used]
    usage = sr_usage(p.topo, [sr.keys[int(j)] for j in used.tolist()]).tocoo()
    # each pair's arc flow: sum over its sr-paths of flow x ratio
    from scipy.sparse import csr_matrix

    per_pair = csr_matrix((x[used][usage.row] * usage.data, (owner[usage.row], usage.col)),
                          shape=(p.npairs, p.m2))
    per_pair.sum_duplicates()
    asrc, adst = p.topo.arc_src.tolist(), p.topo.arc_dst.tolist()
    out: List[Tuple[int, Key, float]] = []
    ptr, ind, val = per_pair.indptr, per_pair.indices, per_pair.data
    pf = np.asarray(sr.pair_flow, dtype=np.float64)
    for i in np.flatnonzero(np.diff(ptr)).tolist():
        flow = dict(zip(ind[ptr[i]:ptr[i + 1]].tolist(), val[ptr[i]:ptr[i + 1]].tolist()))
        t = int(p.T[i])
        for arcs, amount in source_paths(asrc, adst, int(p.S[i]), flow, {t: float(pf[i])},
                                         tol).get(t, []):
            out.append((i, arcs, amount))
    return out


def proven_by(p: Problem, lower: MaxFlowResult, model: str) -> Optional[MaxFlowResult]:
    """The optimum of ``model`` (``mcf``, or ``multipath``) without an LP, where the optimum
    ``lower`` of a model below it on the same pairs proves it (``mcf``: an ``sr`` or ``ecmp``
    optimum; ``multipath``: an ``ecmp`` one); else ``None`` (then ``model`` solves its LP).

    A certificate, checked here on ``p``'s network, not assumed: (1) *primal*: ``lower``'s
    routing traced into simple paths (:func:`sr_routing`; ECMP's are shortest paths, so
    multipath columns) loads no arc beyond its capacity and carries ``v``; (2) *dual*:
    ``lower``'s final duals ``y`` (:attr:`MaxFlowResult.duals`; without demand bounds, every
    ``z = 0``) price no column of ``model`` below ``1 - PRICE_TOL`` (the pricing of ``model``'s
    own stop rule: mcf's cheapest path on ``y + 1e-12``, multipath's cheapest shortest path),
    so they are feasible for its dual; (3) the dual objective ``sum_l c_l y_l`` equals ``v``
    (to 1e-9 relative). Weak duality then bounds ``model`` by ``v``, which the traced paths
    reach: they are an optimum. Not used with demand bounds, ``keep_state`` (a failure
    re-solve needs the LP) or ``write_lp``."""
    below = {"mcf": ("sr", "ecmp"), "multipath": ("ecmp",)}[model]
    if (p.demands is not None or p.keep_state or p.write_lp or lower.duals is None
            or not lower.ok or lower.model not in below):
        return None
    clock = Clock()
    t0 = time.perf_counter()
    y, z = lower.duals
    if y.shape != (p.m2,) or z.shape != (p.npairs,) or np.any(z > 0):
        return None
    cap = p.capacity
    v = float(lower.value) / p.scale
    if not v > 0.0 or abs(float(cap @ y) - v) > 1e-9 * v:  # (3), against lower's value
        return None
    oracle = Oracle(p.topo, p.S, p.T, model)  # (2) first: it fails more often, and alone
    values, _ = oracle.price(y)
    red = values - 1.0
    finite = np.isfinite(red)
    gap = float(red[finite].min()) if finite.any() else 0.0
    t0 = clock.add("pricing", t0)
    if gap < -PRICE_TOL:
        return None
    routing = sr_routing(p, lower)  # (1)
    if not routing:
        return None
    owner = np.asarray([i for i, _, _ in routing], dtype=np.int64)
    keys: List[Key] = [a for _, a, _ in routing]
    x = np.asarray([f for _, _, f in routing], dtype=np.float64) / p.scale
    load = arc_usage(p.m2, keys).T @ x
    value = float(x.sum())
    if np.any(load > cap * (1.0 + 1e-9)) or abs(value - v) > 1e-9 * v:
        return None
    clock.add("paths", t0)
    pf = np.bincount(owner, weights=x, minlength=p.npairs)
    return MaxFlowResult(value, model, None, p.names, LazyNames(keys, oracle.names),  # type: ignore[arg-type]
                         x, pf, 0, len(keys), gap, "optimal", "", clock.t, p.solver, owner,
                         keys=keys, duals=(y, z))


def multipath(p: Problem, more: Sequence[Tuple[int, Key]] = (), fixed: bool = False,
              warm: Optional[np.ndarray] = None) -> MaxFlowResult:
    """Multipath over ECMP: every individual IGP shortest path of a pair is its own column.

    Column generation priced on the pair's shortest-path DAG: the cheapest single shortest path
    by the capacity duals (:func:`tpcstudy.paths.dag_min_costs`, one pass per destination). The
    paths are never enumerated; at the end no shortest path prices below ``1 - z - 1e-9``, so the
    value is the optimum over all of them (equal to the DAG-restricted flow LP).
    """
    return _path_cg(p, Oracle(p.topo, p.S, p.T, "multipath"), np.ones(2 * p.topo.num_links),
                    more, fixed, warm)


def _arc_columns(m2: int) -> Callable[[List[Key]], Any]:
    return lambda keys: arc_usage(m2, keys)


def _path_cg(p: Problem, oracle: Oracle, initial_prices: np.ndarray,
             more: Sequence[Tuple[int, Key]] = (), fixed: bool = False,
             warm: Optional[np.ndarray] = None, after: Optional[After] = None) -> MaxFlowResult:
    """Column generation over concrete router paths (r = 1 on each arc of the path), keyed by
    their arc tuples. ``initial_prices`` pick each pair's starting path (unreachable pairs get
    none and carry nothing); ``more``: further starting columns ``(pair, arc tuple)``;
    ``fixed``: no generation; ``warm``: the pairs whose columns the first LP holds;
    ``after``: start from a solution before some links were removed (the paths that crossed
    them dropped, the pricing finds the rest)."""
    if after is not None:
        return column_generation(p, oracle.model, [], _arc_columns(p.m2),
                                 None if fixed else oracle.price, oracle.names,
                                 start=after[0].carry(after[1], None, after[2]))
    values, paths_of = oracle.price(initial_prices)
    reach = np.flatnonzero(np.isfinite(values))
    first: List[Optional[Key]] = [None] * p.npairs
    for i, q in zip(reach.tolist(), paths_of(reach)):
        first[i] = q
    more = [m for m in dict.fromkeys(more) if m[1] != first[m[0]]]
    return column_generation(p, oracle.model, first, _arc_columns(p.m2),
                             None if fixed else oracle.price, oracle.names, more, warm)


def mptcp(p: Problem, subflows: int, seed: int) -> MaxFlowResult:
    """Multipath transport as the network really hashes it (docs/method.md §4, ``mptcp``).

    Each pair opens ``subflows`` subflows; each follows ONE shortest path drawn by per-hop ECMP
    hashing (:func:`tpcstudy.models.subflows.draw_subflows`, seeded by ``seed``); the pair's paths are
    the distinct ones drawn (r in {0, 1}), and one LP maximises the total flow over them.
    """
    t0 = time.perf_counter()
    draws = draw_subflows(p.topo, p.S, p.T, subflows, seed)
    o, ao, arcs = draws.pair_offsets, draws.arc_offsets, draws.arcs
    more = [(i, tuple(arcs[ao[j]:ao[j + 1]].tolist()))
            for i in range(p.npairs) for j in range(int(o[i]), int(o[i + 1]))]
    p.clock.add("paths", t0)
    res = column_generation(p, "mptcp", [None] * p.npairs, _arc_columns(p.m2), None,
                            Oracle(p.topo, p.S, p.T, "multipath").names, more)
    res.subflows = int(subflows)
    return res


def sr_mptcp(p: Problem, k: int, subflows: int, full: Optional[MaxFlowResult] = None
             ) -> MaxFlowResult:
    """At most ``subflows`` sr-paths (<= ``k`` segments) per pair: K subflows, each free to
    take its own sr-path (docs/method.md §4, ``sr+mptcp``).

    Choosing the best K sr-paths per pair is a mixed-integer problem; this takes, per pair, the
    K sr-paths that carry the most flow in the ``sr`` optimum and solves the LP over them: a
    feasible value (a lower bound of the best choice), equal to ``sr`` whenever K is at least the
    number of paths the optimum gives each pair. ``full``: that optimum when already solved.
    """
    if full is None:
        full = sr(p, k, "sr")
    if not full.ok:
        full.model = "sr+mptcp"
        return full
    topo = p.topo
    flows = np.asarray(full.flows)
    owner = np.asarray(full.path_pair, dtype=np.int64)
    n = len(owner)
    # per pair its K columns of most flow (ties: the earlier), in column order; grouped by one
    # sort (a scan per pair was pairs x columns)
    order = np.lexsort((np.arange(n), -flows, owner))
    counts = np.bincount(owner, minlength=p.npairs)
    rank = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    best = order[rank < int(subflows)]
    best = best[np.lexsort((best, owner[best]))]
    keys = full.keys  # (the same columns as ids; names only for a result that has none)
    keep: List[Tuple[int, Key]] = [
        (int(owner[j]), tuple(keys[j]) if keys is not None
         else tuple(topo.index_of(v) for v in full.paths[j])) for j in best.tolist()]
    oracle = Oracle(topo, p.S, p.T, "sr", k, p.segments)
    res = column_generation(p, "sr+mptcp", [None] * p.npairs, oracle.usage, None, oracle.names,
                            keep)
    res.k, res.subflows = k, int(subflows)
    return res


def multipath_dag(p: Problem) -> MaxFlowResult:
    """Flow of each pair restricted to its shortest-path DAG.

    Variables x[p, a] for the arcs a of pair p's DAG. Rows: arc capacities; at every DAG node
    other than s and t, ``outflow - inflow <= 0`` (no flow is created; destroying flow never
    helps, so the optimum conserves it); with demands, ``inflow(t) <= d``. Objective: inflow at
    t. Any DAG flow decomposes into shortest paths, so this is the LP over all shortest paths.
    """
    topo, S, T, d, clock = p.topo, p.S, p.T, p.demands, p.clock
    t0 = time.perf_counter()
    m2 = p.m2
    src, dst = topo.arc_src, topo.arc_dst
    dags = [np.asarray(_paths.dag_arcs(topo, int(s), int(t)), dtype=np.int64) for s, t in zip(S, T)]
    t0 = clock.add("paths", t0)
    lp = p.new_model()
    cols: List[Column] = []
    obj: List[float] = []
    col_pair: List[int] = []
    col_arc: List[int] = []
    next_row = m2 + (len(S) if d is not None else 0)
    conservation_upper: List[float] = []
    for q, arcs in enumerate(dags):
        s, t = int(S[q]), int(T[q])
        inner = np.unique(np.concatenate([src[arcs], dst[arcs]]))
        inner = inner[(inner != s) & (inner != t)]
        row_of = {int(v): next_row + i for i, v in enumerate(inner.tolist())}
        next_row += len(inner)
        conservation_upper.extend([0.0] * len(inner))
        for a in arcs.tolist():
            r, v = [a], [1.0]
            u_, w_ = int(src[a]), int(dst[a])
            if u_ in row_of:
                r.append(row_of[u_])
                v.append(1.0)  # outflow of u
            if w_ in row_of:
                r.append(row_of[w_])
                v.append(-1.0)  # inflow of w
            if w_ == t and d is not None:
                r.append(m2 + q)
                v.append(1.0)
            cols.append((np.array(r, dtype=np.int64), np.array(v)))
            obj.append(1.0 if w_ == t else 0.0)
            col_pair.append(q)
            col_arc.append(a)
    lp.add_rows(np.array(conservation_upper))
    starts, rows, vals = csc(cols)
    lp.add_columns(np.array(obj), starts, rows, vals)
    t0 = clock.add("paths", t0)
    res = lp.solve(time_limit=p.time_limit)
    clock.add("lp", t0)
    if not res.ok:
        return p.failed("multipath", res, 1)
    p.write_model(lp)
    x = np.maximum(np.asarray(res.x), 0.0)
    into_t = np.array([dst[a] == T[q] for a, q in zip(col_arc, col_pair)], dtype=bool)
    pf = np.bincount(np.array(col_pair, dtype=np.int64)[into_t], weights=x[into_t],
                     minlength=len(S))
    out_paths, out_flows, out_pair = _decompose(topo, S, T, np.array(col_pair), np.array(col_arc), x)
    return MaxFlowResult(float(res.objective), "multipath", None, p.names, out_paths, out_flows,
                         pf, 1, len(cols), math.nan, "optimal", "", clock.t, p.solver, out_pair)


def _decompose(topo: Topology, S: np.ndarray, T: np.ndarray, col_pair: np.ndarray,
               col_arc: np.ndarray, x: np.ndarray, eps: float = 1e-9
               ) -> Tuple[List[Tuple[str, ...]], np.ndarray, np.ndarray]:
    """Split each pair's DAG flow into individual shortest paths (largest bottleneck first);
    returns the paths, their flows and the index of each path's pair."""
    src, dst = topo.arc_src, topo.arc_dst
    out_paths: List[Tuple[str, ...]] = []
    out_flows: List[float] = []
    out_pair: List[int] = []
    order = np.argsort(col_pair, kind="stable")
    bounds = np.searchsorted(col_pair[order], np.arange(len(S) + 1))
    for q in range(len(S)):
        idx = order[bounds[q]:bounds[q + 1]]
        flow = {int(col_arc[i]): float(x[i]) for i in idx if x[i] > eps}
        s, t = int(S[q]), int(T[q])
        while True:
            out_arcs: Dict[int, List[int]] = {}
            for a in sorted(flow):
                if flow[a] > eps:
                    out_arcs.setdefault(int(src[a]), []).append(a)
            if s not in out_arcs:
                break
            path_arcs, u = [], s
            while u != t and u in out_arcs:
                a = max(out_arcs[u], key=lambda b: (flow[b], -b))
                path_arcs.append(a)
                u = int(dst[a])
            if u != t:
                break
            f = min(flow[a] for a in path_arcs)
            for a in path_arcs:
                flow[a] -= f
            out_paths.append(tuple([topo.names[s]] + [topo.names[int(dst[a])] for a in path_arcs]))
            out_flows.append(f)
            out_pair.append(q)
    return out_paths, np.array(out_flows), np.array(out_pair, dtype=np.int64)

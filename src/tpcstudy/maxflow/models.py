"""The forwarding models of the max-flow LP (docs/method.md §4): their columns and pricing.

- ``ecmp`` / ``sr``: sr-paths keyed by ``(s, w1, ..., t)``, ``r`` summed over the segments' ECMP
  ratios, priced by the segment costs and the segment DP (ecmp: the direct sr-path, no pricing);
- ``multipath``: every individual IGP shortest path, priced on each pair's shortest-path DAG
  (:func:`multipath`), or one LP of the flow restricted to the DAGs (:func:`multipath_dag`);
- ``mcf``: arbitrary simple paths priced by Dijkstra on the capacity duals;
- ``mptcp``: the distinct shortest paths K hashed subflows draw, one fixed LP (:func:`mptcp`);
- ``sr+mptcp``: at most K sr-paths per pair (:func:`sr_mptcp`).

All path models run :func:`~tpcstudy.maxflow.colgen.column_generation`.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import paths as _paths
from ..errors import UsageError
from ..subflows import draw_subflows
from ..topology import Topology
from .colgen import Key, Pricer, column_generation
from .problem import Column, MaxFlowResult, Problem, csc

__all__ = ["sr", "multipath", "multipath_dag", "mcf", "mptcp", "sr_mptcp", "SegmentCache",
           "path_keys"]


class SegmentCache:
    """ECMP ratios of segments, computed in batches by the C++ core and kept by (u, v)."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.cache: Dict[Tuple[int, int], Column] = {}

    def ensure(self, segs: Sequence[Tuple[int, int]]) -> None:
        new = sorted({s for s in segs if s not in self.cache})
        if not new:
            return
        src = np.array([u for u, _ in new], dtype=np.int32)
        dst = np.array([v for _, v in new], dtype=np.int32)
        off, arcs, fr = _paths.segment_ratios(self.topo, src, dst)
        for i, key in enumerate(new):
            a, b = int(off[i]), int(off[i + 1])
            self.cache[key] = (np.asarray(arcs[a:b], dtype=np.int64), np.asarray(fr[a:b]))

    def preload(self, src: np.ndarray, dst: np.ndarray, off: np.ndarray, arcs: np.ndarray,
                fr: np.ndarray) -> None:
        """Segments already known on this topology (``segment_ratios``'s layout), e.g. those
        of a network before a failure whose DAG the failure did not touch."""
        o = off.tolist()
        a = np.asarray(arcs, dtype=np.int64)
        f = np.asarray(fr, dtype=np.float64)
        for i, key in enumerate(zip(src.tolist(), dst.tolist())):
            self.cache[key] = (a[o[i]:o[i + 1]], f[o[i]:o[i + 1]])

    def column(self, seq: Sequence[int]) -> Column:
        """Arc usage r(l, p) of the sr-path ``seq`` = (s, w1, ..., t): the sum over segments."""
        parts = [self.cache[(int(u), int(v))] for u, v in zip(seq[:-1], seq[1:])]
        if len(parts) == 1:
            return parts[0]
        arcs = np.concatenate([p[0] for p in parts])
        vals = np.concatenate([p[1] for p in parts])
        uniq, inv = np.unique(arcs, return_inverse=True)
        return uniq, np.bincount(inv, weights=vals)


def sr(p: Problem, k: int, label: str, more: Sequence[Tuple[int, Key]] = (),
       fixed: bool = False, warm: Optional[np.ndarray] = None,
       known: Optional[Tuple[np.ndarray, ...]] = None) -> MaxFlowResult:
    """sr-paths with at most ``k`` segments; columns keyed by (s, w1, ..., t), r summed over the
    segments' ECMP ratios; priced by the segment costs and the segment DP (k = 1: no pricing).
    ``more``: further starting columns ``(pair, key)`` (a warm start; one with an unreachable
    segment is left out); ``fixed``: no pricing, the LP over the starting columns only;
    ``warm``: the pairs whose columns the first LP holds (:func:`column_generation`);
    ``known``: segments already computed on ``p.topo`` (:meth:`SegmentCache.preload`)."""
    topo, S, T = p.topo, p.S, p.T
    cache = SegmentCache(topo)
    if known is not None:
        cache.preload(*known)

    def columns(seqs: List[Key]) -> List[Column]:
        cache.ensure([(u, v) for q in seqs for u, v in zip(q[:-1], q[1:])])
        return [cache.column(q) for q in seqs]

    def price(y: np.ndarray) -> Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]:
        # No sr-path of a pair costs less than its cheapest path under y, and nothing at or
        # above 1 enters (the threshold is 1 - z <= 1): the DP runs only for the other pairs.
        # Late rounds leave few (the 2,000-router ISP at 0.1 %: 76 of 2,249 pairs). Both calls
        # run on the process's core thread budget (tpcstudy.paths.default_threads: a worker of
        # a --jobs N pool has its share of the CPUs).
        vals = _paths.path_price_bounds(topo, y, S, T, 1.0)
        live = np.flatnonzero(np.isfinite(vals))
        off = wps = np.zeros(1, dtype=np.int64)
        if live.size:
            v, off, wps = _paths.best_sr_paths(topo, _paths.segment_costs(topo, y), S[live],
                                               T[live], k)
            vals[live] = v
        pos = np.full(len(S), -1, dtype=np.int64)
        pos[live] = np.arange(live.size)

        def keys(idx: np.ndarray) -> List[Key]:
            o, w, s_, t_ = off.tolist(), wps.tolist(), S.tolist(), T.tolist()
            at = pos[idx].tolist()
            return [(s_[i],) + tuple(w[o[j]:o[j + 1]]) + (t_[i],) for i, j in zip(idx.tolist(), at)]
        return vals, keys

    direct = [(int(s), int(t)) for s, t in zip(S.tolist(), T.tolist())]
    cache.ensure(direct)
    first: List[Optional[Key]] = [q if len(cache.cache[q][0]) else None for q in direct]
    if more:  # warm start / fixed table: sr-paths whose every segment is reachable, once
        cache.ensure([(u, v) for _, q in more for u, v in zip(q[:-1], q[1:])])
        more = [(i, q) for i, q in dict.fromkeys(more) if len(q) > 2 and len(q) <= k + 1
                and all(len(cache.cache[(u, v)][0]) for u, v in zip(q[:-1], q[1:]))]
    res = column_generation(p, label, first, columns, price if k > 1 and not fixed else None,
                            lambda q: tuple(topo.names[v] for v in q), more, warm)
    res.k = k
    return res


def path_keys(topo: Topology, S: np.ndarray, T: np.ndarray, columns: Sequence[Sequence[Any]],
              concrete: bool) -> List[Tuple[int, Key]]:
    """Starting columns given as router sequences ``(s, ..., t)`` (names, or ids as ints), as ``(pair,
    key)``: the pair whose endpoints they join (a sequence joining no pair is refused), the key
    the model uses (``concrete``: the arc ids of a router path, the first of parallel links;
    a path over a missing link is left out; else the sr-path's routers)."""
    pair = {(int(s), int(t)): i for i, (s, t) in reversed(list(enumerate(zip(S.tolist(),
                                                                            T.tolist()))))}
    ap = ArcPaths(topo) if concrete else None
    out: List[Tuple[int, Key]] = []
    for q in columns:
        ids = tuple(int(v) if isinstance(v, (int, np.integer)) and 0 <= int(v) < topo.num_nodes
                    else topo.index_of(v) for v in q)  # ids as ids: a router may be named "2"
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


class ArcPaths:
    """Arc lists of concrete router paths, recovered from a pricing oracle's predecessor data
    (``pred[row, v]``: the node before ``v``) or next-arc data (``nxt[u, t]``: the first arc
    from ``u`` towards ``t``); many pairs at once, one numpy step per hop."""

    #: Largest router count with a dense ``(n, n)`` arc-id table (4,096: 64 MiB of int32).
    DENSE = 4096

    def __init__(self, topo: Topology) -> None:
        self.n = topo.num_nodes
        self.src, self.dst = topo.arc_src.astype(np.int64), topo.arc_dst.astype(np.int64)
        code = self.src * self.n + self.dst
        self.order = np.argsort(code, kind="stable")
        self.code = code[self.order]
        self.parallel = bool(len(code) > 1 and np.any(self.code[1:] == self.code[:-1]))
        # The arc id of u -> v by one lookup (parallel arcs: the smallest id, written last),
        # instead of a binary search per hop.
        self.table: Optional[np.ndarray] = None
        if self.n <= self.DENSE and len(code):
            table = np.zeros(self.n * self.n, dtype=np.int64)
            rev = np.arange(len(code) - 1, -1, -1)
            table[code[rev]] = rev
            self.table = table

    def pricing_graph(self, w: np.ndarray) -> Any:
        """The scipy sparse graph of arc lengths ``w`` (all > 0) for a path search. With
        parallel arcs (``--links multigraph``) it holds the cheapest arc of each router pair
        (smallest id on ties: scipy would add parallel entries up), and the paths recovered
        after it (:meth:`from_pred`) use those arcs."""
        from scipy.sparse import csr_matrix  # ~80 ms to import; only path pricing needs it

        src, dst = self.src, self.dst
        if self.parallel:
            code = src * self.n + dst
            o = np.lexsort((np.arange(len(code)), w, code))
            c = code[o]
            best = o[np.r_[True, c[1:] != c[:-1]]]
            if self.table is not None:
                self.table[code[best]] = best
            else:
                self.code, self.order = code[best], best
            src, dst, w = src[best], dst[best], w[best]
        return csr_matrix((w, (src, dst)), shape=(self.n, self.n))

    def _arc(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Arc ids of ``u -> v`` (entries that are no arc give some arc: callers mask them)."""
        if self.table is not None:
            return self.table[u * self.n + v]
        i = np.searchsorted(self.code, u * self.n + v)
        return self.order[np.minimum(i, len(self.code) - 1)]

    @staticmethod
    def _keys(steps: List[np.ndarray], reverse: bool) -> List[Key]:
        if not steps:
            return []
        m = np.stack(steps, axis=1)  # a pair's arcs are a prefix of its row (-1 after)
        valid = m >= 0
        lengths = valid.sum(axis=1)
        flat = m[valid]  # row by row, each row's prefix in order
        ends = np.cumsum(lengths)
        starts = ends - lengths
        if reverse:  # each row's prefix backwards: position j of row i reads its L_i - 1 - j
            row = np.repeat(np.arange(len(lengths)), lengths)
            flat = flat[starts[row] + ends[row] - 1 - np.arange(len(flat))]
        items = flat.tolist()
        return [tuple(items[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]

    def from_pred(self, pred: np.ndarray, rows: np.ndarray, S: np.ndarray, T: np.ndarray
                  ) -> List[Key]:
        """The path of each pair ``(S[i], T[i])`` in ``pred[rows[i]]`` (all reachable)."""
        cur, s = np.asarray(T, dtype=np.int64).copy(), np.asarray(S, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        steps: List[np.ndarray] = []
        active = cur != s
        while active.any():
            u = np.where(active, pred[rows, cur], cur).astype(np.int64)
            steps.append(np.where(active, self._arc(u, cur), -1))
            cur = u
            active = cur != s
        return self._keys(steps, True) if steps else [() for _ in range(len(cur))]

    def from_next(self, nxt: np.ndarray, S: np.ndarray, T: np.ndarray) -> List[Key]:
        """The path of each pair ``(S[i], T[i])`` following ``nxt`` (all reachable)."""
        cur, t = np.asarray(S, dtype=np.int64).copy(), np.asarray(T, dtype=np.int64)
        steps: List[np.ndarray] = []
        active = cur != t
        while active.any():
            a = np.where(active, nxt[cur, t], -1).astype(np.int64)
            steps.append(a)
            cur = np.where(active, self.dst[np.maximum(a, 0)], cur)
            active = cur != t
        return self._keys(steps, False) if steps else [() for _ in range(len(cur))]


def mcf(p: Problem, more: Sequence[Tuple[int, Key]] = (), fixed: bool = False,
        warm: Optional[np.ndarray] = None) -> MaxFlowResult:
    """Multicommodity max flow by column generation over arbitrary simple paths.

    Pricing: a shortest path from each source on arc lengths ``y_l`` (the capacity duals; a
    tiny 1e-12 is added so zero-dual arcs stay in the sparse graph, an error below 1e-9). At the
    end no path of any pair prices below ``1 - z_pair - 1e-9``, so the value is the optimum of the
    arc formulation.

    Each round's prices come from the core's threaded Dijkstra
    (:func:`tpcstudy.paths.path_price_bounds`, distances only: the same sums, so the same
    values to the last bit); the paths, from scipy's Dijkstra with predecessors, run only from
    the sources of the pairs whose path enters (few after the first rounds), so every column is
    the one the search from every source gave before.
    """
    # scipy.sparse.csgraph costs ~80 ms to import; only this model needs it
    from scipy.sparse.csgraph import dijkstra

    topo, S, T = p.topo, p.S, p.T
    ap = ArcPaths(topo)

    def price(y: np.ndarray) -> Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]:
        w = y + 1e-12
        values = _paths.path_price_bounds(topo, w, S, T)

        def keys(idx: np.ndarray) -> List[Key]:
            s, t = S[idx], T[idx]
            sources = np.unique(s)
            if not len(sources):
                return []
            g = ap.pricing_graph(w)
            _, pred = dijkstra(g, directed=True, indices=sources, return_predecessors=True)
            return ap.from_pred(pred, np.searchsorted(sources, s), s, t)
        return values, keys

    return _path_cg(p, "mcf", None if fixed else price, topo.arc_weight.astype(np.float64),
                    more, price, warm)


def multipath(p: Problem, more: Sequence[Tuple[int, Key]] = (), fixed: bool = False,
              warm: Optional[np.ndarray] = None) -> MaxFlowResult:
    """Multipath over ECMP: every individual IGP shortest path of a pair is its own column.

    Column generation priced on the pair's shortest-path DAG: the cheapest single shortest path
    by the capacity duals (:func:`tpcstudy.paths.dag_min_costs`, one pass per destination). The
    paths are never enumerated; at the end no shortest path prices below ``1 - z - 1e-9``, so the
    value is the optimum over all of them (equal to the DAG-restricted flow LP).
    """
    topo, S, T = p.topo, p.S, p.T
    ap = ArcPaths(topo)

    def price(y: np.ndarray) -> Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]:
        cost, nxt = _paths.dag_min_costs(topo, y)
        return cost[S, T], lambda idx: ap.from_next(nxt, S[idx], T[idx])

    return _path_cg(p, "multipath", None if fixed else price, np.ones(2 * topo.num_links),
                    more, price, warm)


def _arc_columns(keys: List[Key]) -> List[Column]:
    """Columns of concrete router paths keyed by their arc tuples: r = 1 on each arc."""
    flat = np.fromiter(itertools.chain.from_iterable(keys), dtype=np.int64)
    ones = np.ones(len(flat))
    ends = np.cumsum([len(a) for a in keys]).tolist()
    return [(flat[a:b], ones[a:b]) for a, b in zip([0] + ends[:-1], ends)]


def _arc_path_names(topo: Topology) -> Callable[[Key], Tuple[str, ...]]:
    names = topo.names
    src = [names[u] for u in topo.arc_src.tolist()]
    dst = [names[v] for v in topo.arc_dst.tolist()]
    return lambda q: (src[q[0]], *map(dst.__getitem__, q))


def _path_cg(p: Problem, label: str, price: Optional[Pricer], initial_prices: np.ndarray,
             more: Sequence[Tuple[int, Key]] = (), first_price: Optional[Pricer] = None,
             warm: Optional[np.ndarray] = None) -> MaxFlowResult:
    """Column generation over concrete router paths (r = 1 on each arc of the path), keyed by
    their arc tuples. ``initial_prices`` pick each pair's starting path (unreachable pairs get
    none and carry nothing); ``more``: further starting columns ``(pair, arc tuple)``;
    ``price`` ``None``: no generation (``first_price`` picks the starting paths)."""
    pick = price if price is not None else first_price
    assert pick is not None
    values, paths_of = pick(initial_prices)
    reach = np.flatnonzero(np.isfinite(values))
    first: List[Optional[Key]] = [None] * p.npairs
    for i, q in zip(reach.tolist(), paths_of(reach)):
        first[i] = q
    more = [m for m in dict.fromkeys(more) if m[1] != first[m[0]]]
    return column_generation(p, label, first, _arc_columns, price, _arc_path_names(p.topo), more,
                             warm)


def mptcp(p: Problem, subflows: int, seed: int) -> MaxFlowResult:
    """Multipath transport as the network really hashes it (docs/method.md §4, ``mptcp``).

    Each pair opens ``subflows`` subflows; each follows ONE shortest path drawn by per-hop ECMP
    hashing (:func:`tpcstudy.subflows.draw_subflows`, seeded by ``seed``); the pair's paths are
    the distinct ones drawn (r in {0, 1}), and one LP maximises the total flow over them.
    """
    t0 = time.perf_counter()
    draws = draw_subflows(p.topo, p.S, p.T, subflows, seed)
    o, ao, arcs = draws.pair_offsets, draws.arc_offsets, draws.arcs
    more = [(i, tuple(arcs[ao[j]:ao[j + 1]].tolist()))
            for i in range(p.npairs) for j in range(int(o[i]), int(o[i + 1]))]
    p.clock.add("paths", t0)
    res = column_generation(p, "mptcp", [None] * p.npairs, _arc_columns, None,
                            _arc_path_names(p.topo), more)
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
    keep: List[Tuple[int, Key]] = []
    flows = np.asarray(full.flows)
    for i in range(p.npairs):
        idx = np.flatnonzero(full.path_pair == i)
        best = idx[np.lexsort((idx, -flows[idx]))][:int(subflows)]  # most flow first, then order
        keep.extend((i, tuple(topo.index_of(v) for v in full.paths[j])) for j in sorted(best))
    cache = SegmentCache(topo)

    def columns(seqs: List[Key]) -> List[Column]:
        cache.ensure([(u, v) for q in seqs for u, v in zip(q[:-1], q[1:])])
        return [cache.column(q) for q in seqs]

    res = column_generation(p, "sr+mptcp", [None] * p.npairs, columns, None,
                            lambda q: tuple(topo.names[v] for v in q), keep)
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

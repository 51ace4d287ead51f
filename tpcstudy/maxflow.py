"""The max-flow LP study (study-method.md §4; Figure 6 of seed 000).

maximise ``sum_p f_p`` subject to ``sum_p r(l, p) f_p <= c(l)`` for every directed arc ``l``,
``f >= 0`` (and, with demands, ``sum_{p of pair} f_p <= d_pair``), over the path set of a model:

- ``ecmp``: one sr-path per pair, the direct one (plain IGP routing with even ECMP splits);
- ``multipath``: every individual shortest path of each pair (MPTCP subflows over ECMP), by
  column generation priced on the pair's shortest-path DAG (or, ``multipath="dag"``, as one LP
  of the flow restricted to the DAGs), never enumerating the paths;
- ``sr``: every sr-path with at most ``k`` segments, by column generation priced on the C++
  segment costs and the segment DP; it stops only when no pair prices below ``1 - 1e-9``, so the
  value is the optimum over all such sr-paths;
- ``mcf``: the multicommodity max flow with no forwarding restriction (the upper bound), by
  column generation priced with shortest paths on the capacity duals.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import paths as _paths
from .errors import UsageError
from .lp import LPResult, make_model
from .topology import Topology

__all__ = ["MODELS", "PRICE_TOL", "MaxFlowResult", "max_flow"]

MODELS = ("ecmp", "multipath", "sr", "mcf")
#: Reduced-cost tolerance of the column generation: a column enters iff its price < 1 - PRICE_TOL.
PRICE_TOL = 1e-9
#: Safety cap on column-generation rounds (never reached on the Zoo; reported if it is).
MAX_ITERATIONS = 10_000

PairLike = Tuple[Any, Any]


@dataclasses.dataclass
class MaxFlowResult:
    """The outcome of :func:`max_flow`.

    Attributes
    ----------
    value
        Optimal total flow (``nan`` when the LP failed; see ``status``).
    model, k
        The model and its segment limit (``k`` is 1 for ecmp, ``None`` for multipath/mcf).
    pairs
        The (source, target) router names, in the order given.
    paths
        The columns of the final LP: for ``ecmp``/``sr`` node-name tuples ``(s, w1, ..., t)``
        (the sr-path's waypoint sequence), for ``mcf`` and ``multipath`` concrete router paths.
    flows
        Flow on each path (same order as ``paths``).
    pair_flow
        Total flow of each pair (same order as ``pairs``).
    iterations
        LP solves (column-generation rounds; 1 for ecmp and multipath).
    columns
        Columns in the final LP.
    gap
        Final pricing gap: ``min(price) - (1 - pair dual)`` over pairs, >= ``-1e-9`` at optimality
        (``nan`` where not applicable).
    status
        ``"optimal"`` or the LP's failure status (``"time_limit"``, ``"error"``, ...).
    seconds
        Wall time split: ``paths`` (DAGs, ratios), ``pricing`` (segment costs and DP), ``lp``.
    """

    value: float
    model: str
    k: Optional[int]
    pairs: List[Tuple[str, str]]
    paths: List[Tuple[str, ...]]
    flows: np.ndarray
    pair_flow: np.ndarray
    iterations: int
    columns: int
    gap: float
    status: str
    message: str = ""
    seconds: Dict[str, float] = dataclasses.field(default_factory=dict)
    solver: str = "highs"

    @property
    def ok(self) -> bool:
        return self.status == "optimal"


# --------------------------------------------------------------------------- pairs
def _pair_ids(topo: Topology, pairs: Union[np.ndarray, Sequence[PairLike]]) -> Tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, np.ndarray) and pairs.dtype.kind in "iu":
        arr = pairs.reshape(-1, 2).astype(np.int32)
        if arr.size and (arr.min() < 0 or arr.max() >= topo.num_nodes):
            raise UsageError("pair node id out of range")
    else:
        arr = np.array([(topo.index_of(s), topo.index_of(t)) for s, t in pairs],
                       dtype=np.int32).reshape(-1, 2)
    if np.any(arr[:, 0] == arr[:, 1]):
        raise UsageError("a pair has the same source and target")
    return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])


# --------------------------------------------------------------------------- helpers
class _Clock:
    def __init__(self) -> None:
        self.t: Dict[str, float] = {"paths": 0.0, "pricing": 0.0, "lp": 0.0}

    def add(self, key: str, since: float) -> float:
        now = time.perf_counter()
        self.t[key] += now - since
        return now


class _SegmentCache:
    """ECMP ratios of segments, computed in batches by the C++ core and kept by (u, v)."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.cache: Dict[Tuple[int, int], Tuple[np.ndarray, np.ndarray]] = {}

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

    def column(self, seq: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
        """Arc usage r(l, p) of the sr-path ``seq`` = (s, w1, ..., t): the sum over segments."""
        parts = [self.cache[(int(u), int(v))] for u, v in zip(seq[:-1], seq[1:])]
        if len(parts) == 1:
            return parts[0]
        arcs = np.concatenate([p[0] for p in parts])
        vals = np.concatenate([p[1] for p in parts])
        uniq, inv = np.unique(arcs, return_inverse=True)
        return uniq, np.bincount(inv, weights=vals)


def _csc(cols: List[Tuple[np.ndarray, np.ndarray]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    starts = np.zeros(len(cols) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(c[0]) for c in cols])
    rows = np.concatenate([c[0] for c in cols]) if cols else np.zeros(0, dtype=np.int64)
    vals = np.concatenate([c[1] for c in cols]) if cols else np.zeros(0)
    return starts, rows.astype(np.int64), vals.astype(np.float64)


def _demand_bounds(demands: Optional[Any], n_pairs: int) -> Optional[np.ndarray]:
    if demands is None:
        return None
    d = np.asarray(demands, dtype=np.float64).reshape(-1)
    if d.shape != (n_pairs,):
        raise UsageError(f"demands: need one bound per pair ({n_pairs}), got {d.shape[0]}")
    if np.any(d < 0) or np.any(np.isnan(d)):
        raise UsageError("demands must be >= 0")
    return d


def _failed(model: str, k: Optional[int], names: List[Tuple[str, str]], res: LPResult, it: int,
            clock: _Clock, solver: str) -> MaxFlowResult:
    return MaxFlowResult(math.nan, model, k, names, [], np.zeros(0), np.full(len(names), math.nan),
                         it, 0, math.nan, res.status, res.message, clock.t, solver)


# --------------------------------------------------------------------------- the models
def max_flow(topo: Topology, pairs: Union[np.ndarray, Sequence[PairLike]], *, model: str,
             k: int = 4, solver: str = "highs", demands: Optional[Any] = None,
             time_limit: Optional[float] = None, write_lp: Optional[str] = None,
             max_iterations: int = MAX_ITERATIONS, multipath: str = "cg") -> MaxFlowResult:
    """Maximum total flow of ``pairs`` on ``topo`` under a forwarding ``model``.

    Parameters
    ----------
    topo
        The (usually pruned) topology; capacities are ``topo.arc_capacity``.
    pairs
        (source, target) router names or ids, or an ``(n, 2)`` int array of ids.
    model
        ``"ecmp"``, ``"multipath"``, ``"sr"`` or ``"mcf"`` (see the module docstring).
    k
        Segment limit of ``"sr"`` (k = 1 is ecmp).
    solver
        LP backend: ``"highs"`` (default), ``"glop"``, ``"pdlp"`` or ``"pulp"``.
    demands
        Optional upper bound per pair (max throughput with ``f_pair <= demand``).
    time_limit
        Seconds for the whole computation; when exceeded the result has status ``time_limit``.
    write_lp
        Write the final LP model to this file (``.lp`` or ``.mps``).
    max_iterations
        Cap on column-generation rounds (status ``iteration_limit`` when reached).
    multipath
        How ``"multipath"`` is solved: ``"cg"`` (column generation priced on each pair's
        shortest-path DAG, the default) or ``"dag"`` (one LP of the flow restricted to the DAGs,
        an arc variable per pair and DAG arc). Both give the same value.
    """
    if model not in MODELS:
        raise UsageError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")
    S, T = _pair_ids(topo, pairs)
    names = [(topo.names[s], topo.names[t]) for s, t in zip(S.tolist(), T.tolist())]
    d = _demand_bounds(demands, len(S))
    if model == "ecmp":
        return _sr(topo, S, T, names, 1, solver, d, time_limit, write_lp, max_iterations, "ecmp")
    if model == "sr":
        if int(k) < 1:
            raise UsageError(f"segment limit k={k!r} must be >= 1")
        return _sr(topo, S, T, names, int(k), solver, d, time_limit, write_lp, max_iterations, "sr")
    if model == "multipath":
        if multipath == "dag":
            return _multipath(topo, S, T, names, solver, d, time_limit, write_lp)
        return _multipath_cg(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations)
    return _mcf(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations)


def _new_model(topo: Topology, solver: str, d: Optional[np.ndarray]) -> Any:
    lp = make_model(solver)
    lp.add_rows(topo.arc_capacity)
    if d is not None:
        lp.add_rows(d)
    return lp


def _write_model(lp: Any, path: str) -> None:
    """Write the LP through a temporary file beside ``path`` and a rename (never half a file)."""
    import os
    import tempfile
    from pathlib import Path

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix, dir=p.parent)
    os.close(fd)
    try:
        lp.write(tmp)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remaining(deadline: Optional[float]) -> Optional[float]:
    if deadline is None:
        return None
    return max(0.01, deadline - time.perf_counter())


def _sr(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]], k: int,
        solver: str, d: Optional[np.ndarray], time_limit: Optional[float], write_lp: Optional[str],
        max_iterations: int, label: str) -> MaxFlowResult:
    """sr-paths with at most ``k`` segments; columns keyed by (s, w1, ..., t), r summed over the
    segments' ECMP ratios; priced by the segment costs and the segment DP (k = 1: no pricing)."""
    cache = _SegmentCache(topo)

    def columns(seqs: List[Tuple[int, ...]]) -> List[Tuple[np.ndarray, np.ndarray]]:
        cache.ensure([(u, v) for q in seqs for u, v in zip(q[:-1], q[1:])])
        return [cache.column(q) for q in seqs]

    def price(y: np.ndarray) -> Tuple[np.ndarray, Any]:
        vals, off, wps = _paths.best_sr_paths(topo, _paths.segment_costs(topo, y), S, T, k)
        return np.asarray(vals), lambda i: ((int(S[i]),) + tuple(int(w) for w in wps[off[i]:off[i + 1]])
                                            + (int(T[i]),))

    first: List[Optional[Tuple[int, ...]]] = [(int(s), int(t)) for s, t in zip(S.tolist(), T.tolist())]
    cache.ensure(first)  # type: ignore[arg-type]
    first = [q if len(cache.cache[q][0]) else None for q in first]  # type: ignore[index]
    res = _column_generation(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations,
                             label, first, columns, price if k > 1 else None,
                             lambda q: tuple(topo.names[v] for v in q))
    res.k = k
    return res


def _add(lp: Any, cols: List[Tuple[np.ndarray, np.ndarray]], owner: List[int], m2: int,
         d: Optional[np.ndarray]) -> None:
    if d is not None:
        cols = [(np.append(a, m2 + o), np.append(v, 1.0)) for (a, v), o in zip(cols, owner)]
    starts, rows, vals = _csc(cols)
    lp.add_columns(np.ones(len(cols)), starts, rows, vals)


def _multipath(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]],
               solver: str, d: Optional[np.ndarray], time_limit: Optional[float],
               write_lp: Optional[str]) -> MaxFlowResult:
    """Flow of each pair restricted to its shortest-path DAG.

    Variables x[p, a] for the arcs a of pair p's DAG. Rows: arc capacities; at every DAG node
    other than s and t, ``outflow - inflow <= 0`` (no flow is created; destroying flow never
    helps, so the optimum conserves it); with demands, ``inflow(t) <= d``. Objective: inflow at
    t. Any DAG flow decomposes into shortest paths, so this is the LP over all shortest paths.
    """
    clock = _Clock()
    t0 = time.perf_counter()
    m2 = 2 * topo.num_links
    src, dst = topo.arc_src, topo.arc_dst
    dags = [np.asarray(_paths.dag_arcs(topo, int(s), int(t)), dtype=np.int64) for s, t in zip(S, T)]
    t0 = clock.add("paths", t0)
    lp = _new_model(topo, solver, d)
    cols: List[Tuple[np.ndarray, np.ndarray]] = []
    obj: List[float] = []
    col_pair: List[int] = []
    col_arc: List[int] = []
    next_row = m2 + (len(S) if d is not None else 0)
    conservation_upper: List[float] = []
    for p, arcs in enumerate(dags):
        s, t = int(S[p]), int(T[p])
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
                r.append(m2 + p)
                v.append(1.0)
            cols.append((np.array(r, dtype=np.int64), np.array(v)))
            obj.append(1.0 if w_ == t else 0.0)
            col_pair.append(p)
            col_arc.append(a)
    lp.add_rows(np.array(conservation_upper))
    starts, rows, vals = _csc(cols)
    lp.add_columns(np.array(obj), starts, rows, vals)
    t0 = clock.add("paths", t0)
    res = lp.solve(time_limit=time_limit)
    clock.add("lp", t0)
    if not res.ok:
        return _failed("multipath", None, names, res, 1, clock, solver)
    if write_lp:
        _write_model(lp, write_lp)
    x = np.maximum(np.asarray(res.x), 0.0)
    into_t = np.array([dst[a] == T[p] for a, p in zip(col_arc, col_pair)], dtype=bool)
    pf = np.bincount(np.array(col_pair, dtype=np.int64)[into_t], weights=x[into_t], minlength=len(S))
    out_paths, out_flows = _decompose(topo, S, T, np.array(col_pair), np.array(col_arc), x)
    return MaxFlowResult(float(res.objective), "multipath", None, names, out_paths, out_flows, pf, 1,
                         len(cols), math.nan, "optimal", "", clock.t, solver)


def _decompose(topo: Topology, S: np.ndarray, T: np.ndarray, col_pair: np.ndarray,
               col_arc: np.ndarray, x: np.ndarray, eps: float = 1e-9
               ) -> Tuple[List[Tuple[str, ...]], np.ndarray]:
    """Split each pair's DAG flow into individual shortest paths (largest bottleneck first)."""
    src, dst = topo.arc_src, topo.arc_dst
    out_paths: List[Tuple[str, ...]] = []
    out_flows: List[float] = []
    order = np.argsort(col_pair, kind="stable")
    bounds = np.searchsorted(col_pair[order], np.arange(len(S) + 1))
    for p in range(len(S)):
        idx = order[bounds[p]:bounds[p + 1]]
        flow = {int(col_arc[i]): float(x[i]) for i in idx if x[i] > eps}
        s, t = int(S[p]), int(T[p])
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
    return out_paths, np.array(out_flows)


class _ArcPaths:
    """Arc lists of concrete router paths, recovered from a pricing oracle's predecessor data."""

    def __init__(self, topo: Topology) -> None:
        self.src, self.dst = topo.arc_src, topo.arc_dst
        self.arc_id = {(int(u), int(v)): a for a, (u, v) in
                       enumerate(zip(self.src.tolist(), self.dst.tolist()))}

    def from_pred(self, pred_row: np.ndarray, s: int, t: int) -> Tuple[int, ...]:
        out, v = [], t
        while v != s:
            u = int(pred_row[v])
            out.append(self.arc_id[(u, v)])
            v = u
        return tuple(out[::-1])

    @staticmethod
    def from_next(nxt: np.ndarray, dst: np.ndarray, s: int, t: int) -> Tuple[int, ...]:
        out, u = [], s
        while u != t:
            a = int(nxt[u, t])
            out.append(a)
            u = int(dst[a])
        return tuple(out)


def _mcf(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]], solver: str,
         d: Optional[np.ndarray], time_limit: Optional[float], write_lp: Optional[str],
         max_iterations: int) -> MaxFlowResult:
    """Multicommodity max flow by column generation over arbitrary simple paths.

    Pricing: a shortest path from each source on arc lengths ``y_l`` (the capacity duals; a
    tiny 1e-12 is added so zero-dual arcs stay in the sparse graph, an error below 1e-9). At the
    end no path of any pair prices below ``1 - z_pair - 1e-9``, so the value is the optimum of the
    arc formulation.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    n = topo.num_nodes
    ap = _ArcPaths(topo)
    sources = np.unique(S)
    row_of = np.full(n, -1, dtype=np.int64)
    row_of[sources] = np.arange(len(sources))
    rows = row_of[S]

    def price(y: np.ndarray) -> Tuple[np.ndarray, Any]:
        g = csr_matrix((y + 1e-12, (ap.src, ap.dst)), shape=(n, n))
        dist, pred = dijkstra(g, directed=True, indices=sources, return_predecessors=True)
        return dist[rows, T], lambda i: ap.from_pred(pred[rows[i]], int(S[i]), int(T[i]))

    return _path_cg(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations, "mcf",
                    price, topo.arc_weight.astype(np.float64))


def _multipath_cg(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]],
                  solver: str, d: Optional[np.ndarray], time_limit: Optional[float],
                  write_lp: Optional[str], max_iterations: int) -> MaxFlowResult:
    """Multipath over ECMP: every individual IGP shortest path of a pair is its own column.

    Column generation priced on the pair's shortest-path DAG: the cheapest single shortest path
    by the capacity duals (:func:`tpcstudy.paths.dag_min_costs`, one pass per destination). The
    paths are never enumerated; at the end no shortest path prices below ``1 - z - 1e-9``, so the
    value is the optimum over all of them (equal to the DAG-restricted flow LP).
    """
    dst = topo.arc_dst

    def price(y: np.ndarray) -> Tuple[np.ndarray, Any]:
        cost, nxt = _paths.dag_min_costs(topo, y)
        return cost[S, T], lambda i: _ArcPaths.from_next(nxt, dst, int(S[i]), int(T[i]))

    return _path_cg(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations,
                    "multipath", price, np.ones(2 * topo.num_links))


def _path_cg(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]],
             solver: str, d: Optional[np.ndarray], time_limit: Optional[float],
             write_lp: Optional[str], max_iterations: int, label: str, price: Any,
             initial_prices: np.ndarray) -> MaxFlowResult:
    """Column generation over concrete router paths (r = 1 on each arc of the path), keyed by
    their arc tuples. ``initial_prices`` pick each pair's starting path (unreachable pairs get
    none and carry nothing)."""
    src, dst = topo.arc_src, topo.arc_dst
    values, path_of = price(initial_prices)
    first = [path_of(i) if math.isfinite(values[i]) else None for i in range(len(S))]

    def columns(keys: List[Tuple[int, ...]]) -> List[Tuple[np.ndarray, np.ndarray]]:
        return [(np.array(a, dtype=np.int64), np.ones(len(a))) for a in keys]

    def path_names(q: Tuple[int, ...]) -> Tuple[str, ...]:
        return tuple([topo.names[int(src[q[0]])]] + [topo.names[int(dst[a])] for a in q])

    return _column_generation(topo, S, T, names, solver, d, time_limit, write_lp, max_iterations,
                              label, first, columns, price, path_names)


def _column_generation(topo: Topology, S: np.ndarray, T: np.ndarray, names: List[Tuple[str, str]],
                       solver: str, d: Optional[np.ndarray], time_limit: Optional[float],
                       write_lp: Optional[str], max_iterations: int, label: str,
                       first: Sequence[Optional[Tuple[int, ...]]], columns: Any, price: Any,
                       path_names: Any) -> MaxFlowResult:
    """The column-generation loop every path model shares.

    ``first[i]``: pair i's starting column key (``None``: the pair has none); ``columns(keys)``:
    their arc usage ``(arcs, r)``; ``price(y)``: each pair's cheapest column value under arc
    prices ``y`` and a function giving that column's key (``price=None``: no generation, the
    first columns are the model); ``path_names(key)``: the column as router names. A column
    enters iff its price is below ``1 - z_pair - 1e-9`` (``z``: the pair's demand-row dual); the
    loop stops when none does, so the value is optimal over the whole column family.
    """
    clock = _Clock()
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    m2 = 2 * topo.num_links
    npairs = len(S)
    owner = [i for i, q in enumerate(first) if q is not None]
    keys: List[Tuple[int, ...]] = [first[i] for i in owner]  # type: ignore[misc]
    cols = columns(keys)
    t0 = clock.add("paths", t0)
    lp = _new_model(topo, solver, d)
    _add(lp, cols, owner, m2, d)
    known = set(zip(owner, keys))
    iterations, gap, converged = 0, math.nan, False
    while True:
        res = lp.solve(time_limit=_remaining(deadline))
        t0 = clock.add("lp", t0)
        iterations += 1
        if not res.ok:
            return _failed(label, None, names, res, iterations, clock, solver)
        if price is None:
            converged = True
            break
        y = np.maximum(np.asarray(res.duals[:m2]), 0.0)
        z = np.maximum(np.asarray(res.duals[m2:]), 0.0) if d is not None else np.zeros(npairs)
        values, key_of = price(y)
        reduced = values - (1.0 - z)
        finite = np.isfinite(reduced)
        gap = float(reduced[finite].min()) if finite.any() else 0.0
        new_keys, new_owner = [], []
        for i in np.flatnonzero(finite & (reduced < -PRICE_TOL)).tolist():
            q = key_of(i)
            if (i, q) in known:
                continue  # numerically tied with a column already in: nothing new
            known.add((i, q))
            new_keys.append(q)
            new_owner.append(i)
        t0 = clock.add("pricing", t0)
        if not new_keys:
            converged = True
            break
        if iterations >= max_iterations:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return _failed(label, None, names, LPResult("time_limit", math.nan, np.zeros(0),
                                                        np.zeros(0), 0.0,
                                                        "column generation hit the time limit"),
                           iterations, clock, solver)
        keys.extend(new_keys)
        owner.extend(new_owner)
        new_cols = columns(new_keys)
        t0 = clock.add("paths", t0)
        _add(lp, new_cols, new_owner, m2, d)
    if write_lp:
        _write_model(lp, write_lp)
    x = np.asarray(res.x)
    pf = np.bincount(np.array(owner, dtype=np.int64), weights=x, minlength=npairs)
    status = "optimal" if converged else "iteration_limit"
    return MaxFlowResult(float(res.objective), label, None, names, [path_names(q) for q in keys], x,
                         pf, iterations, len(keys), gap, status, "", clock.t, solver)

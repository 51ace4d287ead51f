"""The traffic-engineering objective (docs/method.md §4b): the minimum maximum link utilisation
(MLU) that routes a whole demand matrix, as REPETITA and CG4SR define it; equivalently the
largest factor ``lambda = 1 / MLU`` by which the matrix can grow (concurrent flow).

- ``ecmp``: evaluation only, the MLU of plain ECMP routing (each demand split over its IGP
  shortest-path DAG, every router splitting evenly among its next hops: docs/method.md §3).
- ``sr``: each demand split over sr-paths with at most ``k`` segments (ECMP on each segment),
  by column generation: the exact LP optimum, any MLU range.
- ``mcf``: any routing (the lower bound), by column generation over simple paths.

The LP, in the maximisation shape of :mod:`tpcstudy.lp`::

    maximise    lambda
    subject to  sum_p r(a, p) x_p            <= capacity_a     for every arc a
                lambda * volume_d - sum_{p of d} x_p <= 0      for every demand d

A column (path) of demand ``d`` prices ``sum_a r(a, p) y_a`` under the arc duals ``y`` and
enters iff that is below the demand row's dual ``z_d`` (relative tolerance 1e-9); none does at
the optimum. Capacities and volumes are divided by the median capacity first (lambda does not
depend on the unit). Demands of zero volume, and of a router to itself, are ignored (CG4SR
crashes on the first kind). An unreachable demand makes the matrix unroutable: MLU ``inf``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import paths as _paths
from .errors import SolverError, UsageError
from .lp import make_model
from .maxflow.models import ArcPaths
from .topology import Topology

__all__ = ["MLU_MODELS", "MLUResult", "min_mlu", "ecmp_loads", "demand_arrays"]

#: The models :func:`min_mlu` solves.
MLU_MODELS = ("ecmp", "sr", "mcf")
#: Relative reduced-cost tolerance of the column generation.
PRICE_TOL = 1e-9


@dataclasses.dataclass
class MLUResult:
    """The minimum MLU of one model on one demand matrix.

    Attributes
    ----------
    model, k
        The model and its segment limit (``sr``; else ``None``).
    mlu
        The maximum link utilisation of the best routing (``inf``: a demand cannot be routed).
    lam
        ``1 / mlu``: the largest factor the matrix can grow by.
    loads
        Per directed arc, the traffic of the best routing (in the demands' unit).
    utilisation
        ``loads / capacity`` per arc.
    demands
        Demands routed (zero volumes and self-demands left out).
    columns, iterations, seconds
        Columns in the final LP, column-generation rounds, wall-clock time.
    """

    model: str
    k: Optional[int]
    mlu: float
    lam: float
    loads: np.ndarray
    utilisation: np.ndarray
    demands: int
    columns: int = 0
    iterations: int = 0
    seconds: float = 0.0


def demand_arrays(topo: Topology, demands: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sources, targets, volumes)`` of a demand matrix: a structured array as
    :func:`tpcstudy.io.read_demands` returns (``src``, ``dst``, ``bw``) or ``(source, target,
    volume)`` triples (names or ids); zero volumes and self-demands dropped, a negative or
    non-finite volume refused."""
    if isinstance(demands, np.ndarray) and demands.dtype.names:
        s_raw, t_raw, v_raw = (demands[n] for n in demands.dtype.names[:3])
        triples = list(zip(s_raw.tolist(), t_raw.tolist(), v_raw.tolist()))
    else:
        triples = [tuple(d) for d in demands]
    s, t, v = [], [], []
    for i, d in enumerate(triples):
        if len(d) != 3:
            raise UsageError(f"demand {i}: expected (source, target, volume), got {d!r}")
        vol = float(d[2])
        if not math.isfinite(vol) or vol < 0:
            raise UsageError(f"demand {i}: volume {d[2]!r} is not a finite number >= 0")
        a, b = _paths._id(topo, d[0]), _paths._id(topo, d[1])
        if vol > 0 and a != b:
            s.append(a)
            t.append(b)
            v.append(vol)
    return (np.asarray(s, dtype=np.int32), np.asarray(t, dtype=np.int32),
            np.asarray(v, dtype=np.float64))


def _segment_columns(topo: Topology, hops: Sequence[Tuple[int, ...]]
                     ) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Arc usage ``r(a, p)`` of each sr-path (its nodes: source, waypoints, target): the sum of
    its segments' ECMP ratios."""
    segs = [(p[i], p[i + 1]) for p in hops for i in range(len(p) - 1)]
    if not segs:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in hops]
    ss = np.asarray([a for a, _ in segs], dtype=np.int32)
    tt = np.asarray([b for _, b in segs], dtype=np.int32)
    off, arcs, fr = _paths.segment_ratios(topo, ss, tt)
    out, j = [], 0
    for p in hops:
        acc: Dict[int, float] = {}
        for _ in range(len(p) - 1):
            for a, f in zip(arcs[off[j]:off[j + 1]].tolist(), fr[off[j]:off[j + 1]].tolist()):
                acc[a] = acc.get(a, 0.0) + f
            j += 1
        keys = sorted(acc)
        out.append((np.asarray(keys, dtype=np.int64), np.asarray([acc[a] for a in keys])))
    return out


def ecmp_loads(topo: Topology, sources: np.ndarray, targets: np.ndarray,
               volumes: np.ndarray) -> np.ndarray:
    """Per directed arc, the traffic of plain ECMP routing of the demands."""
    load = np.zeros(2 * topo.num_links)
    if len(sources):
        off, arcs, fr = _paths.segment_ratios(topo, sources, targets)
        np.add.at(load, arcs, np.repeat(volumes, np.diff(off)) * fr)
    return load


def _result(model: str, k: Optional[int], load: np.ndarray, cap: np.ndarray, demands: int,
            **kw: Any) -> MLUResult:
    util = np.divide(load, cap, out=np.full_like(load, np.inf), where=cap > 0)
    util[(load <= 0) & (cap <= 0)] = 0.0
    mlu = float(util.max()) if len(util) else 0.0
    return MLUResult(model=model, k=k, mlu=mlu, lam=1.0 / mlu if mlu > 0 else math.inf,
                     loads=load, utilisation=util, demands=demands, **kw)


def min_mlu(topo: Topology, demands: Any, *, model: str = "sr", k: int = 4,
            solver: str = "highs", max_iterations: int = 10_000) -> MLUResult:
    """The minimum MLU of ``model`` routing ``demands`` on ``topo`` (module docstring).

    Parameters
    ----------
    topo
        The topology (its arc capacities and IGP weights; not pruned here).
    demands
        A demand matrix (:func:`demand_arrays`).
    model
        One of :data:`MLU_MODELS`.
    k
        Segment limit of ``sr`` (1 is plain ECMP).
    solver
        LP backend (:data:`tpcstudy.lp.SOLVERS`).
    """
    if model not in MLU_MODELS:
        raise UsageError(f"model {model!r}: choose from {', '.join(MLU_MODELS)}")
    k = _paths.segment_limit(k) if model == "sr" else 1
    t0 = time.perf_counter()
    S, T, V = demand_arrays(topo, demands)
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    if model == "ecmp" or (model == "sr" and k == 1):
        return _result(model, k if model == "sr" else None, ecmp_loads(topo, S, T, V), cap,
                       len(S), seconds=time.perf_counter() - t0)
    if len(S) == 0:
        return _result(model, k if model == "sr" else None, np.zeros_like(cap), cap, 0,
                       seconds=time.perf_counter() - t0)
    dist = _paths.path_price_bounds(topo, topo.arc_weight.astype(np.float64), S, T)
    if not np.all(np.isfinite(dist)):  # a demand with no path: nothing routes the matrix
        return MLUResult(model=model, k=k if model == "sr" else None, mlu=math.inf, lam=0.0,
                         loads=np.zeros_like(cap), utilisation=np.zeros_like(cap),
                         demands=len(S), seconds=time.perf_counter() - t0)
    ok = cap[np.isfinite(cap) & (cap > 0)]
    scale = float(np.median(ok)) if len(ok) else 1.0
    lp = make_model(solver)
    arc_rows = lp.add_rows(np.where(np.isfinite(cap), cap / scale, 1e30))
    dem_rows = lp.add_rows(np.zeros(len(S)))
    lp.add_columns(np.ones(1), np.asarray([0, len(S)]), dem_rows, V / scale)  # lambda
    keys: Dict[Tuple[int, Tuple[Any, ...]], int] = {}
    owner: List[int] = []
    usage: List[Tuple[np.ndarray, np.ndarray]] = []
    ap = ArcPaths(topo)

    def add(d_idx: Sequence[int], cols: Sequence[Tuple[np.ndarray, np.ndarray]],
            ks: Sequence[Tuple[Any, ...]]) -> int:
        starts, rows, vals = [0], [], []
        added = 0
        for d, (arcs, r), key in zip(d_idx, cols, ks):
            if (d, key) in keys:
                continue
            keys[(d, key)] = len(owner)
            owner.append(d)
            usage.append((arcs, r))
            rows += [arc_rows[arcs], dem_rows[[d]]]
            vals += [r, np.asarray([-1.0])]
            starts.append(starts[-1] + len(arcs) + 1)
            added += 1
        if added:
            lp.add_columns(np.zeros(added), np.asarray(starts, dtype=np.int64),
                           np.concatenate(rows).astype(np.int64), np.concatenate(vals))
        return added

    # start: every demand's ECMP routing (the direct segment), a valid column of both models
    direct = [(int(s), int(t)) for s, t in zip(S, T)]
    add(range(len(S)), _segment_columns(topo, direct), [("ecmp",)] * len(S))
    res = None
    rounds = 0
    while rounds < max_iterations:
        rounds += 1
        res = lp.solve()
        if res.status != "optimal":
            raise SolverError(f"MLU LP ({model}) on {topo.name}: {res.status} ({res.message})")
        y = np.maximum(np.asarray(res.duals[:len(arc_rows)], dtype=np.float64), 0.0)
        z = np.asarray(res.duals[len(arc_rows):], dtype=np.float64)
        if model == "sr":
            costs = _paths.segment_costs(topo, y)
            price, off, wps = _paths.best_sr_paths(topo, costs, S, T, k)
            want = np.flatnonzero(price < z - PRICE_TOL * np.maximum(1.0, np.abs(z)))
            hops = [(int(S[i]),) + tuple(int(w) for w in wps[off[i]:off[i + 1]]) + (int(T[i]),)
                    for i in want]
            n_new = add(want.tolist(), _segment_columns(topo, hops), [("sr",) + h for h in hops])
        else:
            from scipy.sparse.csgraph import dijkstra

            w = y + 1e-12  # zero-dual arcs stay in the sparse graph
            price = _paths.path_price_bounds(topo, w, S, T)
            want = np.flatnonzero(price < z - PRICE_TOL * np.maximum(1.0, np.abs(z)))
            n_new = 0
            if len(want):
                src = np.unique(S[want])
                g = ap.pricing_graph(w)
                _, pred = dijkstra(g, directed=True, indices=src, return_predecessors=True)
                arc_keys = ap.from_pred(pred, np.searchsorted(src, S[want]), S[want], T[want])
                cols = [(np.asarray(a, dtype=np.int64), np.ones(len(a))) for a in arc_keys]
                n_new = add(want.tolist(), cols, [("mcf",) + tuple(a) for a in arc_keys])
        if n_new == 0:
            break
    assert res is not None
    lam = float(res.objective)
    x = np.asarray(res.x, dtype=np.float64)[1:]
    load = np.zeros_like(cap)
    for (arcs, r), f in zip(usage, x):
        if f > 0:
            load[arcs] += r * f * scale
    # the optimum's flows carry lambda x the matrix; the MLU of routing the matrix itself
    out = _result(model, k if model == "sr" else None, load / lam if lam > 0 else load, cap,
                  len(S), columns=len(owner), iterations=rounds, seconds=time.perf_counter() - t0)
    out.mlu, out.lam = (1.0 / lam, lam) if lam > 0 else (math.inf, 0.0)
    return out

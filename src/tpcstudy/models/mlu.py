"""The traffic-engineering objective (docs/method.md §4b): the minimum maximum link utilisation
(MLU) that routes a whole demand matrix, as REPETITA and CG4SR define it; equivalently the
largest factor ``lambda = 1 / MLU`` by which the matrix can grow (concurrent flow).

- ``ecmp``: evaluation only, the MLU of plain ECMP routing (each demand split over its IGP
  shortest-path DAG, every router splitting evenly among its next hops: docs/method.md §3).
- ``sr``: each demand split over sr-paths with at most ``k`` segments (ECMP on each segment).
- ``multipath``: each demand split in any proportions over its IGP shortest paths (MPTCP over
  ECMP): the minimum MLU over flows confined to each demand's shortest-path DAG.
- ``mcf``: any routing (the lower bound), over simple paths.

Order: ``ecmp >= sr(k) >= sr(k + 1) >= mcf`` and ``ecmp >= multipath >= mcf``; sr and multipath
are not ordered (sr may leave the DAG through a waypoint; multipath may split unevenly where
ECMP splits evenly, which no sr-path can undo: tests/test_mlu.py has a graph of each kind).

The LP: the key-path (base-column) form of the arc-path LP
--------------------------------------------------------------
The plain LP has a flow ``x_p >= 0`` per column (sr-path, shortest path or path ``p``, arc
usage ``r_p(a)``) and one row per demand; every demand's ECMP routing (the direct segment, a
column of every model) is its *key column* ``key(d)``. Written as "minimise U" (U = the MLU
itself, flows routing the matrix)::

    minimise    U
    subject to  sum_p r_p(a) x_p - U cap_a <= 0       for every arc a
                sum_{p of d} x_p             = vol_d   for every demand d

substitute ``x_key(d) = vol_d - sum_{p of d, p != key} x_p`` (which must stay >= 0)::

    maximise    -U
    subject to  sum_{p non-key} (r_p(a) - r_key(d_p)(a)) x_p - U cap_a <= -ecmp_load(a)
                sum_{p of d, non-key} x_p <= vol_d   only for demands d with a non-key column

so the LP has one row per arc plus one per demand that has a non-key column (rows are added as
columns enter; none at the start, when the LP's optimum is ECMP's MLU), and ``U`` is one
column. In this "minimise U" form the new demand rows involve only new columns (in the
"maximise lambda" form they would need a lambda coefficient on an existing column).

Pricing. With ``y_a >= 0`` the arc rows' duals and ``w_d >= 0`` the demand rows' (``w_d = 0``
where a demand has no row), a non-key column ``p`` of ``d`` has reduced cost
``-(sum_a (r_p(a) - r_key(a)) y_a + w_d)``: it improves the LP iff
``price(p) < price(key(d)) - w_d =: z_d`` with ``price(q) = sum_a r_q(a) y_a``. ``z_d`` is the
plain LP's demand dual (the key column is basic there unless ``w_d > 0``, when ``x_key = 0``),
so a demand without a row has the implied dual ``z_d = price(key(d))``. The U column's dual
constraint is ``sum_a cap_a y_a <= 1``. Each round every demand's cheapest column under ``y``
enters iff its price is below ``z_d - PRICE_TOL * max(1, |z_d|)``; none does at the optimum, so
the value is the optimum over the model's whole column family. Oracles: sr, the cheapest
sr-path (segment costs and the segment DP, run only where the cheapest path under ``y`` is
already below ``z_d``); multipath, the cheapest single shortest path (``dag_min_costs``);
mcf, Dijkstra on ``y + 1e-12``.

At most :data:`ENTER_MAX` columns enter per round, those furthest below ``z_d``.

Why this form, and what was tried and dropped, measured: docs/history.md (the min-MLU LP).

Capacities and volumes are divided by the median capacity first, and volumes again by the
power of two nearest ECMP's MLU when that is below 1e-3 or above 1e3 (:func:`_demand_unit`),
so that the LP's numbers are near 1:
the MLU per unit of demand is the same from 1e-12 to 1e12 (``tests/test_mlu.py``). A capacity
below 1e-7 of the median, and volumes whose sum overflows, are refused with what to scale; a
solver failure says the same. Demands of zero volume, and of a router to itself, are ignored
(CG4SR crashes on the first kind); a matrix with no demand left is refused. An unreachable
demand makes the matrix unroutable: MLU ``inf``.
"""

from __future__ import annotations

import gc
import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import paths as _paths
from ..errors import SolverError, UsageError
from ..lp import LPResult, make_model
from ..topology import Topology
from .decompose import ZERO_TOL, dag_paths
from .mlu_arc import Reduction, arc_mlu, fits
from .mlu_result import MLUResult, Path, Routing, make_result
from .oracles import PRICE_TOL, Key, Oracle, SegmentRatios, capacity_scale, sr_usage

__all__ = ["MLU_MODELS", "MLUResult", "min_mlu", "ecmp_loads", "demand_arrays", "Path",
           "Routing"]

#: The models :func:`min_mlu` solves.
MLU_MODELS = ("ecmp", "sr", "multipath", "mcf")
#: Smallest capacity the LP takes, as a share of the median capacity (HiGHS drops matrix
#: entries below 1e-9: a smaller capacity would be 0 to it). REPETITA's range: 0.025 to 40.
MIN_CAPACITY = 1e-7
#: ECMP MLUs in this range are solved with the volumes as they are (after the capacity unit);
#: outside it the volumes are rescaled first (:func:`_demand_unit`). At 1e-7 the LP's MLUs were
#: already wrong by 23 % (mcf) and 59 % (multipath) on Abilene.
DEMAND_RANGE = (1e-3, 1e3)
#: Most columns entering the LP per round: those furthest below their demand's dual (the
#: optimum does not depend on it, tests/test_mlu.py; how 300 was chosen: docs/history.md).
ENTER_MAX = 300
def demand_arrays(topo: Topology, demands: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sources, targets, volumes)`` of a demand matrix: a structured array as
    :func:`tpcstudy.io.read_demands` returns (``src``, ``dst``, ``bw``) or ``(source, target,
    volume)`` triples (names or ids); zero volumes and self-demands dropped, a negative or
    non-finite volume refused; several demands of one pair added up (in the order each pair
    first appears), so every result has one demand per pair."""
    if isinstance(demands, np.ndarray) and demands.dtype.names:
        s_raw, t_raw, v_raw = (demands[n] for n in demands.dtype.names[:3])
        fast = _id_arrays(topo, s_raw, t_raw, v_raw)
        if fast is not None:
            return fast
        triples = list(zip(s_raw.tolist(), t_raw.tolist(), v_raw.tolist()))
    else:
        triples = [tuple(d) for d in demands]
    total: Dict[Tuple[int, int], float] = {}
    for i, d in enumerate(triples):
        if len(d) != 3:
            raise UsageError(f"demand {i}: expected (source, target, volume), got {d!r}")
        try:
            vol = float(d[2])
        except (TypeError, ValueError):
            vol = math.nan
        if not math.isfinite(vol) or vol < 0:
            raise UsageError(f"demand {i}: volume {d[2]!r} is not a finite number >= 0")
        a, b = topo.index_of(d[0]), topo.index_of(d[1])
        if vol > 0 and a != b:
            total[(a, b)] = total.get((a, b), 0.0) + vol
    return (np.asarray([a for a, _ in total], dtype=np.int32),
            np.asarray([b for _, b in total], dtype=np.int32),
            np.asarray(list(total.values()), dtype=np.float64))


def _id_arrays(topo: Topology, s_raw: np.ndarray, t_raw: np.ndarray, v_raw: np.ndarray
               ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`demand_arrays` of integer id columns (read_demands's) in numpy, the same result;
    ``None`` where a column is not ids or a value is refused (the loop then says which)."""
    if any(x.dtype.kind not in k for x, k in ((s_raw, "iu"), (t_raw, "iu"), (v_raw, "iuf"))):
        return None
    a, b, vol = s_raw.astype(np.int64), t_raw.astype(np.int64), v_raw.astype(np.float64)
    n = topo.num_nodes
    if len(a) and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n
                   or not np.all(np.isfinite(vol)) or (vol < 0).any()):
        return None
    keep = (vol > 0) & (a != b)
    a, b, vol = a[keep], b[keep], vol[keep]
    pair = a * n + b
    uniq, first, inv = np.unique(pair, return_index=True, return_inverse=True)
    if len(uniq) == len(pair):  # one demand per pair: the input's order
        return a.astype(np.int32), b.astype(np.int32), vol
    total = np.zeros(len(uniq))
    for j, v in zip(inv.tolist(), vol.tolist()):  # in input order: the loop's float sums
        total[j] += v
    order = np.argsort(first, kind="stable")
    pick = first[order]
    return a[pick].astype(np.int32), b[pick].astype(np.int32), total[order]


# ------------------------------------------------------------------------------ columns
def ecmp_loads(topo: Topology, sources: np.ndarray, targets: np.ndarray,
               volumes: np.ndarray, segments: Optional[SegmentRatios] = None) -> np.ndarray:
    """Per directed arc, the traffic of plain ECMP routing of the demands (one per pair;
    ``segments``: ratios known before)."""
    load = np.zeros(2 * topo.num_links)
    if len(sources) and segments is not None:
        code = sources.astype(np.int64) * topo.num_nodes + targets
        order = np.argsort(code)
        off, arcs, fr = segments.ratios(topo, code[order])
        np.add.at(load, arcs, np.repeat(volumes[order], np.diff(off)) * fr)
    elif len(sources):
        off, arcs, fr = _paths.segment_ratios(topo, sources, targets)
        np.add.at(load, arcs, np.repeat(volumes, np.diff(off)) * fr)
    return load


# ------------------------------------------------------------------------------ pricing
def _most_negative(want: np.ndarray, gain: np.ndarray, most: int) -> np.ndarray:
    """The positions of the ``most`` smallest ``gain`` (ties: the first), in ``want``'s order."""
    if not most or len(want) <= most:
        return np.arange(len(want))
    return np.sort(np.argsort(gain, kind="stable")[:most])


def _price(oracle: Oracle, y: np.ndarray, limit: np.ndarray, most: int = 0
           ) -> Tuple[np.ndarray, List[Key]]:
    """The demands (ascending) whose cheapest column under arc prices ``y`` costs less than
    ``limit[d]``, and those columns; with ``most``, only the ``most`` demands whose column is
    furthest below its limit."""
    vals, keys_of = oracle.price(y, limit)
    want = np.flatnonzero(vals < limit)
    want = want[_most_negative(want, vals[want] - limit[want], most)]
    return want, keys_of(want) if len(want) else []


# ------------------------------------------------------------------------------ the LP
class _Master:
    """The key-path LP (module docstring) over the columns generated so far: the demands' ECMP
    columns (arc usage ``key_r``, demands x arcs) in the arc rows' bounds, the others as LP
    columns (LP column ``j + 1`` is :attr:`keys` ``[j]`` of demand :attr:`owner` ``[j]``)."""

    def __init__(self, solver: str, cap: np.ndarray, V: np.ndarray, key_r: Any) -> None:
        self.lp = make_model(solver)
        self.V, self.key_r = V, key_r
        finite = np.flatnonzero(np.isfinite(cap))  # an arc of infinite capacity has no row
        self.arc_row = np.full(len(cap), -1, dtype=np.int64)
        self.arc_row[finite] = self.lp.add_rows(-(key_r.T @ V)[finite])
        self.finite, self.arc_rows = finite, self.arc_row[finite]
        self.lp.add_columns(np.asarray([-1.0]), np.asarray([0, len(finite)]), self.arc_rows,
                            -cap[finite])  # U
        self.dem_row = np.full(len(V), -1, dtype=np.int64)
        self.index: Dict[Tuple[int, Key], int] = {}
        self.keys: List[Key] = []
        self.owner = np.zeros(0, dtype=np.int64)
        self.blocks: List[Any] = []  # arc usage of the LP columns (CSR), in LP order

    def add(self, owner: np.ndarray, keys: List[Key],
            columns: Callable[[List[Key]], Any]) -> int:
        """Add the columns ``(owner[i], keys[i])`` (at most one per demand) not in yet;
        ``columns(keys)`` gives their arc usage. Returns how many entered."""
        sel = np.asarray([j for j, (d, q) in enumerate(zip(owner.tolist(), keys))
                          if (d, q) not in self.index], dtype=np.int64)
        if not len(sel):
            return 0
        owner, keys = owner[sel], [keys[j] for j in sel.tolist()]
        r = columns(keys)
        diff = (r - self.key_r[owner]).tocsr()
        diff.data[np.abs(diff.data) <= ZERO_TOL] = 0.0
        diff.eliminate_zeros()
        diff.sort_indices()
        # a column that uses the arcs its key does (an sr-path whose waypoint lies on the
        # key's DAG, the single shortest path of a demand) is no column: it never prices below
        real = np.flatnonzero(np.diff(diff.indptr) > 0)
        if not len(real):
            return 0
        owner, r, diff = owner[real], r[real], diff[real]
        keys = [keys[j] for j in real.tolist()]
        new_dem = np.unique(owner[self.dem_row[owner] < 0])
        if len(new_dem):
            self.dem_row[new_dem] = self.lp.add_rows(self.V[new_dem])
        # CSC of the LP columns: their arc rows (arcs with a row), then their demand row
        rows_of = self.arc_row[diff.indices]
        on = rows_of >= 0
        nnz = np.add.reduceat(on.astype(np.int64), diff.indptr[:-1])  # no column is empty
        starts = np.r_[0, np.cumsum(nnz + 1)]
        last = starts[1:] - 1
        rows = np.empty(int(starts[-1]), dtype=np.int64)
        vals = np.empty(int(starts[-1]))
        arc_at = np.ones(len(rows), dtype=bool)
        arc_at[last] = False
        rows[arc_at], vals[arc_at] = rows_of[on], diff.data[on]
        rows[last], vals[last] = self.dem_row[owner], 1.0
        self.lp.add_columns(np.zeros(len(owner)), starts, rows, vals)
        for d, q in zip(owner.tolist(), keys):
            self.index[(d, q)] = len(self.keys)
            self.keys.append(q)
        self.owner = np.concatenate([self.owner, owner])
        self.blocks.append(r)
        return len(owner)

    def usage(self) -> Any:
        """Arc usage of every LP column (CSR, columns x arcs)."""
        from scipy.sparse import csr_matrix, vstack
        if not self.blocks:
            return csr_matrix((0, self.key_r.shape[1]))
        return vstack(self.blocks, format="csr")

    def flows(self, res: LPResult) -> Tuple[np.ndarray, np.ndarray]:
        """The LP columns' flows and the key columns' (what the others leave), each demand's
        summing to its volume exactly (rounding below ZERO_TOL of the volume dropped)."""
        V, owner = self.V, self.owner
        x = np.maximum(np.asarray(res.x, dtype=np.float64)[1:], 0.0)
        x[x <= ZERO_TOL * V[owner]] = 0.0
        other = np.bincount(owner, weights=x, minlength=len(V))
        over = other > V
        if over.any():  # within the LP's feasibility tolerance: shrink to the volume
            x *= np.where(over, V / np.maximum(other, 1e-300), 1.0)[owner]
            other = np.bincount(owner, weights=x, minlength=len(V))
        key = np.maximum(V - other, 0.0)
        key[key <= ZERO_TOL * V] = 0.0
        return x, key


def min_mlu(topo: Topology, demands: Any, *, model: str = "sr", k: int = 4,
            solver: str = "highs", max_iterations: int = 10_000,
            initial_columns: Optional[Sequence[Sequence[int]]] = None,
            fixed_columns: bool = False, routing: bool = True,
            segments: Optional[SegmentRatios] = None) -> MLUResult:
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
    max_iterations
        Most column-generation rounds.
    initial_columns
        ``sr``, ``multipath``, ``mcf``: further starting columns as router-id sequences ``(s,
        ..., t)`` (sr: source, waypoints, target; else every router of the path) of demands of
        the matrix: a warm start (the optimum is the same); columns the model cannot use (an
        unreachable segment, a missing link, more than ``k`` segments) are left out.
    fixed_columns
        No column generation: the LP over each demand's ECMP column and ``initial_columns``.
    routing
        ``False``: leave :attr:`MLUResult.paths` empty (the MLU, loads and prices only).
    segments
        ECMP ratios of segments already computed on ``topo`` (as :func:`tpcstudy.max_flow`).

    Returns
    -------
    MLUResult
        The MLU, the loads and the routing (:attr:`MLUResult.paths`).
    """
    if model not in MLU_MODELS:
        raise UsageError(f"model {model!r}: choose from {', '.join(MLU_MODELS)}")
    k = _paths.segment_limit(k) if model == "sr" else 1
    kk = k if model == "sr" else None
    t0 = time.perf_counter()
    S, T, V = demand_arrays(topo, demands)
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    dem: Dict[str, Any] = {"sources": S, "targets": T, "volumes": V}
    if len(S) == 0:
        raise UsageError(f"{topo.name}: the demand matrix has no demand to route (it is empty, "
                         "every volume is 0, or every demand is from a router to itself)")
    with np.errstate(over="ignore"):
        finite_total = math.isfinite(float(V.sum()))
    if not finite_total:
        raise UsageError(f"{topo.name}: the demand volumes add up to more than a float holds "
                         f"(largest {V.max():.3g}): scale the demands down")
    dist = _paths.path_price_bounds(topo, topo.arc_weight.astype(np.float64), S, T)
    if not np.all(np.isfinite(dist)):  # a demand with no path: nothing routes the matrix
        return MLUResult(model=model, k=kk, mlu=math.inf, lam=0.0, loads=np.zeros_like(cap),
                         utilisation=np.zeros_like(cap), demands=len(S),
                         seconds=time.perf_counter() - t0, **dem)
    if model == "ecmp" or (model == "sr" and k == 1):
        return make_result(model, kk, ecmp_loads(topo, S, T, V, segments), cap, len(S),
                           paths=_direct_paths(S, T, V) if routing else [],
                       seconds=time.perf_counter() - t0, **dem)
    if np.any(~(cap > 0)):
        bad = int(np.flatnonzero(~(cap > 0))[0])
        raise UsageError(f"arc {topo.names[topo.arc_src[bad]]} -> {topo.names[topo.arc_dst[bad]]}"
                         f" has capacity {cap[bad]!r}: the MLU needs capacities > 0")
    scale = capacity_scale(topo)
    capn = cap / scale
    fin = np.isfinite(capn)
    if fin.any() and capn[fin].min() < MIN_CAPACITY:
        bad = int(np.flatnonzero(fin & (capn < MIN_CAPACITY))[0])
        raise UsageError(f"arc {topo.names[topo.arc_src[bad]]} -> {topo.names[topo.arc_dst[bad]]}"
                         f" has capacity {cap[bad]:.3g}, {capn[bad]:.2g} of the median "
                         f"({scale:.3g}): the LP solver cannot tell it from 0; scale the "
                         f"capacities (the MLU needs them within {1 / MIN_CAPACITY:.0g} of the "
                         "median)")
    if model == "mcf" and not fixed_columns and solver == "highs":  # small: the arc LP
        red = Reduction(topo)
        got = arc_mlu(topo, red, S, T, V, cap, scale, t0) if fits(red, S, T, len(cap)) else None
        if got is not None:
            return got
    fam = Oracle(topo, S, T, model, k, segments)
    direct: List[Key] = [(s, t) for s, t in zip(S.tolist(), T.tolist())]
    key_r = sr_usage(topo, direct, fam.segments)  # each demand's ECMP split
    unit = _demand_unit(key_r.T @ V, cap)
    master = _Master(solver, capn, V / scale / unit, key_r)
    if initial_columns:
        owner, keys = _initial(topo, fam, S, T, initial_columns)
        if len(owner):
            master.add(owner, keys, fam.usage)
    rounds, lp_seconds = 0, 0.0
    while True:
        rounds += 1
        res = master.lp.solve()
        lp_seconds += res.seconds
        if res.status != "optimal":
            raise SolverError(f"MLU LP ({model}) on {topo.name}: the solver ended {res.status} "
                              f"({res.message}) on numbers it cannot resolve (capacities "
                              f"{cap[fin].min():.3g} to {cap[fin].max():.3g}, demands "
                              f"{V.min():.3g} to {V.max():.3g}): scale the demands/capacities "
                              "towards 1")
        duals = np.asarray(res.duals, dtype=np.float64)
        y = np.zeros(len(cap))
        y[master.finite] = np.maximum(duals[master.arc_rows], 0.0)
        w = np.zeros(len(S))
        has = master.dem_row >= 0
        w[has] = np.maximum(duals[master.dem_row[has]], 0.0)
        z = master.key_r @ y - w  # the plain LP's demand duals
        if fixed_columns:
            break
        limit = z - PRICE_TOL * np.maximum(1.0, np.abs(z))
        want, keys = _price(fam, y, limit, ENTER_MAX)
        if rounds >= max_iterations or not len(want):
            break
        if master.add(want, keys, fam.usage) == 0:
            break  # numerically tied with columns already in: nothing new
    x, key_flow = master.flows(res)
    x, key_flow = x * (scale * unit), key_flow * (scale * unit)
    load = master.key_r.T @ key_flow + master.usage().T @ x
    paths = _routing(topo, fam, S, T, key_flow, master.owner, master.keys, x) if routing else []
    out = make_result(model, kk, load, cap, len(S), columns=len(S) + len(master.keys),
                      iterations=rounds, rows=master.lp.num_rows, lp_seconds=lp_seconds,
                      paths=paths, seconds=time.perf_counter() - t0, **dem)
    mlu = -float(res.objective) * unit
    # y: sum_a cap_a y_a = 1 in the LP's capacity unit; z: d(MLU) / d(volume), and MLU =
    # unit * MLU_lp, volume = scale * unit * volume_lp: both divide by the capacity unit only
    out.arc_prices, out.demand_prices = y / scale, z / scale
    out.mlu, out.lam = (mlu, 1.0 / mlu) if mlu > 0 else (0.0, math.inf)
    return out


def _direct_paths(S: np.ndarray, T: np.ndarray, V: np.ndarray) -> Routing:
    """ECMP's routing ``[[((s, t), volume)], ...]``, built with the cyclic collector paused (no
    cycle here; its passes were 2/3 of the time on GtsCe's 22,000 demands)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return [[p] for p in zip(zip(S.tolist(), T.tolist()), V.tolist())]
    finally:
        if was:
            gc.enable()


def _demand_unit(ecmp_load: np.ndarray, cap: np.ndarray) -> float:
    """The unit the LP counts demand in, on top of the capacity unit: 1 while ECMP's MLU is
    within :data:`DEMAND_RANGE` (the LP's numbers are fine: every such matrix is solved as it
    always was), else the power of two nearest ECMP's MLU, so that the LP's MLU is near 1
    whatever the demands' unit (1e-12 or 1e12 of the capacities): HiGHS's tolerances are
    absolute, and an MLU of 1e-10 is 0 to them."""
    on = np.isfinite(cap) & (cap > 0)
    util = ecmp_load[on] / cap[on]
    top = float(util.max()) if util.size else 0.0
    if not (math.isfinite(top) and top > 0) or DEMAND_RANGE[0] <= top <= DEMAND_RANGE[1]:
        return 1.0
    return float(2.0 ** round(math.log2(top)))


def _initial(topo: Topology, fam: Oracle, S: np.ndarray, T: np.ndarray,
             columns: Sequence[Sequence[int]]) -> Tuple[np.ndarray, List[Key]]:
    """``min_mlu``'s ``initial_columns`` as (demand, key) the model can use (docstring)."""
    demand = {(int(s), int(t)): d for d, (s, t) in enumerate(zip(S.tolist(), T.tolist()))}
    owner: List[int] = []
    keys: List[Key] = []
    if fam.model == "sr":
        cand = [tuple(int(v) for v in q) for q in columns]
        cand = [q for q in dict.fromkeys(cand) if 2 < len(q) <= fam.k + 1
                and (q[0], q[-1]) in demand]
        segs = sorted({(u, v) for q in cand for u, v in zip(q[:-1], q[1:])})
        if segs:
            off, _, _ = _paths.segment_ratios(topo, np.asarray([u for u, _ in segs], np.int32),
                                              np.asarray([v for _, v in segs], np.int32))
            live = {sg for sg, n in zip(segs, np.diff(off).tolist()) if n > 0}
            for q in cand:
                if all((u, v) in live for u, v in zip(q[:-1], q[1:])):
                    owner.append(demand[(q[0], q[-1])])
                    keys.append(q)
    elif fam.ap is not None:
        ap = fam.ap
        for q in dict.fromkeys(tuple(int(v) for v in c) for c in columns):
            d = demand.get((q[0], q[-1])) if len(q) >= 2 else None
            if d is None:
                continue
            u, v = np.asarray(q[:-1], dtype=np.int64), np.asarray(q[1:], dtype=np.int64)
            arcs = ap._arc(u, v)
            if np.all((ap.src[arcs] == u) & (ap.dst[arcs] == v)):
                owner.append(d)
                keys.append(tuple(int(a) for a in arcs))
    return np.asarray(owner, dtype=np.int64), keys


def _routing(topo: Topology, fam: Oracle, S: np.ndarray, T: np.ndarray, key_flow: np.ndarray,
             owner: np.ndarray, keys: List[Key], x: np.ndarray) -> Routing:
    """Per demand, its paths and their flows (:attr:`MLUResult.paths`): the ECMP key column as
    the direct segment (sr) or as simple shortest paths (multipath, mcf), then the others."""
    out: List[Dict[Path, float]] = [{} for _ in range(len(S))]
    s_, t_ = S.tolist(), T.tolist()
    live = np.flatnonzero(key_flow > 0)
    if fam.model == "sr":
        for d, f in zip(live.tolist(), key_flow[live].tolist()):
            out[d][(s_[d], t_[d])] = f
    elif len(live):
        off, arcs, fr = _paths.segment_ratios(topo, S[live], T[live])
        o, a_, f_ = off.tolist(), arcs.tolist(), fr.tolist()
        for j, (d, f) in enumerate(zip(live.tolist(), key_flow[live].tolist())):
            for p, share in dag_paths(fam.arc_src, fam.arc_dst, s_[d], t_[d],
                                      a_[o[j]:o[j + 1]], f_[o[j]:o[j + 1]]):
                out[d][p] = out[d].get(p, 0.0) + share * f
    nz = np.flatnonzero(x > 0)
    for j, d, f in zip(nz.tolist(), owner[nz].tolist(), x[nz].tolist()):
        p = fam.routers(keys[j])
        out[d][p] = out[d].get(p, 0.0) + f
    return [sorted(o.items(), key=lambda e: (-e[1], e[0])) for o in out]

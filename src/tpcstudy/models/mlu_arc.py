"""The minimum-MLU ``mcf`` LP solved whole (docs/method.md §4b): the source-aggregated arc
formulation on the topology's 2-core, built with numpy and passed to HiGHS in one call.
:func:`tpcstudy.models.mlu.min_mlu` takes this route where the LP is small enough
(:func:`fits`), and its path column generation elsewhere; both give the same optimum (the LP
over all simple paths) and the same certificate.

The reduction: trees hanging off the 2-core
-------------------------------------------
Routers of one link (and, repeatedly, those left with one) are peeled off: what remains is the
2-core, and every peeled router ``v`` hangs below its *parent* by one link, in a tree rooted at
a core router ``root(v)`` (a core router is its own root; a tree with no core keeps one router
as its root). Inside a tree the route is unique, so every demand's traffic on a tree link is
forced: the link up from ``v`` carries every demand from inside ``v``'s subtree to outside it,
the link down the reverse. What is left for the LP is each demand between different roots,
``root(s) -> root(t)``, on the 2-core: demands of sources hanging off one root become one
commodity. A tree link's forced load bounds the MLU from below (``U >= L``, the largest
forced utilisation). A router whose one neighbour is joined by parallel links (``--links
multigraph``) is not peeled.

The LP (minimise ``U``; ``f[r, a] >= 0`` commodity ``r``'s flow on core arc ``a``)::

    inflow_r(v) - outflow_r(v) = D[r, v]        every commodity r, core router v
    sum_r f[r, a] - U cap_a   <= 0              every core arc of finite capacity
    U >= L

with ``D[r, v]`` the demand between the roots (``D[r, r]``: minus all ``r`` sends), no
variable for an arc into its commodity's root; one row per commodity is redundant (they add
up to zero) and left out: the hub's (the core router of most arcs) below
:data:`HUB_ROWS_MAX` variables, where the root's row saves dual simplex iterations, the
root's above.
Capacities and volumes are counted in the median capacity, volumes again in the power of two
nearest a lower bound of the MLU (the forced utilisations, each root's demand over its
capacity out and in), so that the LP's MLU is near 1 whatever the unit
(``tests/test_mlu_scale.py``).

Duals: ``y_a`` (the arc rows', ``>= 0``) and ``pi[r, v]`` (the rows', 0 at the row left out;
taken relative to the root's, so that ``pi[r, r] = 0``); where
``U`` sits at ``L``, the rest of ``sum_a cap_a y_a = 1`` goes to the tree arc of utilisation
``L``. A demand's price is ``pi[root(s), root(t)]`` plus the ``y`` of the tree arcs on its way:
at most the price of each of its paths, and ``sum_d vol_d z_d`` is the MLU (LP duality).

The routing (:meth:`ArcSolution.routing`, computed when asked for): per commodity, its flow
as paths to each root (:func:`~.decompose.source_paths`); a demand ``s -> t`` takes the tree
path ``s -> root(s)``, each of those core paths in proportion, and the tree path ``root(t) ->
t`` (one tree path where both hang off one root).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..lp import LPResult, in_process, solve_whole
from ..topology import Topology
from .decompose import source_paths
from .mlu_result import LazyMLUResult, MLUResult, make_result, utilisation_of

__all__ = ["ARC_MAX", "fits", "Reduction", "ArcSolution", "solve_arc", "arc_mlu"]

#: Largest arc LP (commodities x core arcs, its variables) :func:`fits` takes. REPETITA's
#: largest is Cogentco's 70,000, solved faster whole than by column generation, as GtsCe's and
#: TataNld's (docs/performance.md); above it the column generation, whose LP stays small.
ARC_MAX = 100_000

#: An arc LP of fewer variables leaves out each commodity's row at the hub (the core router
#: of most arcs) and keeps the root's; a larger one leaves out the root's (:func:`_dropped_rows`).
#: The root's row tells the dual simplex early what the root sends: 25-45 % fewer iterations,
#: and on REPETITA's 232 LPs less time below this size (Uninett2011 35 against 89 ms, Dfn 62
#: against 123 ms), up to 3.5x more above it (GtsCe, Ion, Interoute). docs/performance.md.
HUB_ROWS_MAX = 12_000
#: An arc LP of fewer variables is priced by Dantzig's rule (:func:`_options`).
SMALL_LP = 1_000
#: A core of at least this many arcs per router (3.5: a mean degree of 3.5 links) is solved by
#: the primal simplex (:func:`_options`). Measured on REPETITA's 228 arc LPs with a core, both
#: simplex methods, the same optimum: on the 23 such cores the primal was faster on 16 (up to
#: 2.08x: BtNorthAmerica 42 against 88 ms, Chinanet 4.4 against 8.0 ms, AttMpls 11 against 16
#: ms), even on 2, 3-14 % slower on 5; on sparser cores it loses up to 9x (GtsCe, Cogentco).
DENSE_CORE = 3.5
#: A column's entries: its tail's row, its head's, its arc's.
_SIGNS = np.asarray([-1.0, 1.0, 1.0])


class Reduction:
    """A topology's 2-core and the trees hanging off it (module docstring): per router its
    ``parent`` (-1 in the core), the arc ``up`` to it, its ``root``; the peeled routers in
    peeling order (``tree``, children before parents) and their subtrees (``sub``: a row per
    peeled router, 1.0 on the routers below it and itself)."""

    def __init__(self, topo: Topology) -> None:
        n = topo.num_nodes
        lu, lv = topo.link_u.tolist(), topo.link_v.tolist()
        inc: List[List[int]] = [[] for _ in range(n)]
        for i, (u, v) in enumerate(zip(lu, lv)):
            inc[u].append(i)
            inc[v].append(i)
        deg = [len(x) for x in inc]
        alive = [True] * n
        parent, up, tree = [-1] * n, [-1] * n, []
        stack = [v for v in range(n) if deg[v] == 1]
        while stack:
            v = stack.pop()
            if not alive[v] or deg[v] != 1:
                continue
            for i in inc[v]:
                w = lu[i] + lv[i] - v
                if alive[w]:
                    break
            alive[v] = False
            parent[v], up[v] = w, 2 * i if lu[i] == v else 2 * i + 1
            tree.append(v)
            deg[w] -= 1
            if deg[w] == 1:
                stack.append(w)
        root = list(range(n))
        for v in reversed(tree):  # parents before children
            root[v] = root[parent[v]]
        self.n, self.parent, self.up, self.tree = n, parent, up, tree
        self.root = np.asarray(root, dtype=np.int64)
        self.core = np.flatnonzero(np.asarray(alive))
        depth = [0] * n
        for v in reversed(tree):
            depth[v] = depth[parent[v]] + 1
        self.depth = np.asarray(depth, dtype=np.int64)
        self.par = np.asarray(parent, dtype=np.int64)
        self.ups = np.asarray(up, dtype=np.int64)[tree]
        self.asrc, self.adst = topo.arc_src.astype(np.int64), topo.arc_dst.astype(np.int64)
        self.cidx = cidx = np.full(n, -1, dtype=np.int64)
        cidx[self.core] = np.arange(len(self.core))
        self.carcs = np.flatnonzero((cidx[self.asrc] >= 0) & (cidx[self.adst] >= 0))
        self.cu, self.cv = cidx[self.asrc[self.carcs]], cidx[self.adst[self.carcs]]
        self.row = {v: j for j, v in enumerate(tree)}
        sub = np.zeros((len(tree), n))
        for j, v in enumerate(tree):
            sub[j, v] = 1.0
            p = self.row.get(parent[v])
            if p is not None:
                sub[p] += sub[j]
        self.sub = sub

    def subtree_sums(self, x: np.ndarray) -> np.ndarray:
        """Per peeled router (``tree`` order), the sum of ``x`` over its subtree."""
        acc = x.tolist()
        parent = self.parent
        for v in self.tree:  # children before parents
            acc[parent[v]] += acc[v]
        return np.asarray([acc[v] for v in self.tree])

    def lca(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Per pair of routers hanging off one root, the lowest router above both."""
        a, b = a.astype(np.int64), b.astype(np.int64)
        da, db = self.depth[a], self.depth[b]
        while True:
            ne = a != b
            if not ne.any():
                return a
            up_a, up_b = ne & (da >= db), ne & (db >= da)
            a, da = np.where(up_a, self.par[a], a), da - up_a
            b, db = np.where(up_b, self.par[b], b), db - up_b

    def chain(self, v: int) -> List[int]:
        """The routers from ``v`` up to its root, both included."""
        out = [v]
        while self.parent[out[-1]] >= 0:
            out.append(self.parent[out[-1]])
        return out

    def tree_path(self, s: int, t: int) -> Tuple[int, ...]:
        """The routers of the one path ``s -> t`` of a tree (both hang off one root)."""
        a, b = self.chain(s), self.chain(t)
        on_b = set(b)
        i = next(i for i, v in enumerate(a) if v in on_b)
        return tuple(a[:i + 1]) + tuple(reversed(b[:b.index(a[i])]))


def _options(small: bool, dense: bool = False) -> Dict[str, Any]:
    """HiGHS's options for an arc LP, measured on REPETITA's 232 that have one
    (docs/performance.md): no presolve (it removed nothing, at 10-40 % more time); on a dense
    core (:data:`DENSE_CORE`) the primal simplex; else the dual, on a small LP
    (:data:`SMALL_LP`) with Dantzig's pricing, else HiGHS's own choice (Dantzig took 25 % more
    above 3,000 variables)."""
    out: Dict[str, Any] = {"presolve": "off"}
    if dense:
        out["simplex_strategy"] = 4  # primal
    elif small:
        out["simplex_dual_edge_weight_strategy"] = 0
    return out


def _dropped_rows(rs: np.ndarray, cu: np.ndarray, nc: int, ncols: int) -> np.ndarray:
    """Per commodity, the core router whose conservation row is left out (a commodity's rows
    add up to zero, so one is redundant): below :data:`HUB_ROWS_MAX` variables the *hub*'s
    (the core router of most arcs; the root's for the hub's own commodity), else the
    root's (module docstring)."""
    if ncols >= HUB_ROWS_MAX:
        return rs.copy()
    hub = int(np.argmax(np.bincount(cu, minlength=nc)))
    return np.full(len(rs), hub, dtype=np.int64)


def fits(red: Reduction, S: np.ndarray, T: np.ndarray, num_arcs: int) -> bool:
    """Is the arc LP of these demands small enough (:data:`ARC_MAX` variables, an estimate:
    every root with a demand out of it a commodity) and HiGHS usable in this process?"""
    if not in_process("highs"):
        return False
    roots = red.root[S][red.root[S] != red.root[T]]
    k = len(np.unique(roots))
    core_share = len(red.core) / max(red.n, 1)
    return k * num_arcs * core_share <= ARC_MAX


@dataclasses.dataclass
class ArcSolution:
    """The arc LP's answer, in the LP's units (module docstring): ``status`` (``optimal`` or
    the solver's word), ``mlu``, per arc ``load`` and ``y``, per demand ``z``, the LP's size
    and time; :meth:`routing` gives the paths (in units of the volumes passed to it)."""

    status: str
    message: str
    mlu: float
    load: np.ndarray
    y: np.ndarray
    z: np.ndarray
    columns: int
    rows: int
    seconds: float
    red: Reduction
    parts: Dict[str, Any]

    def routing(self, V: np.ndarray) -> Tuple[List[List[Tuple[Tuple[int, ...], float]]],
                                               np.ndarray]:
        """Per demand, its paths (routers) and their flows (summing to ``V[d]``), the largest
        first (module docstring); and what they put on each core arc (the LP's flows less any
        cycle, which carries nothing to anyone)."""
        p, red = self.parts, self.red
        S, T = p["S"], p["T"]
        asrc, adst = red.asrc.tolist(), red.adst.tolist()
        comm: Dict[int, Dict[int, List[Tuple[Tuple[int, ...], float]]]] = {}
        f, ci, arcs, rs, D = p["f"], p["ci"], p["arcs"], p["rs"], p["D"]
        core = red.core
        bounds = np.searchsorted(ci, np.arange(len(rs) + 1))
        for i, r in enumerate(rs.tolist()):
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            flow = {a: x for a, x in zip(arcs[lo:hi].tolist(), f[lo:hi].tolist()) if x > 0}
            need = {int(core[v]): float(D[r, v]) for v in np.flatnonzero(D[r] > 0).tolist()}
            tol = 1e-12 * max(1.0, max(need.values(), default=1.0))
            comm[int(core[r])] = source_paths(asrc, adst, int(core[r]), flow, need, tol)
        out: List[List[Tuple[Tuple[int, ...], float]]] = []
        core_load = np.zeros(len(asrc))
        for s, t, vol in zip(S.tolist(), T.tolist(), V.tolist()):
            rs_, rt = int(red.root[s]), int(red.root[t])
            if rs_ == rt:
                out.append([(red.tree_path(s, t), vol)])
                continue
            head, tail = red.chain(s)[:-1], list(reversed(red.chain(t)))[1:]
            ways = comm[rs_][rt]
            total = sum(a for _, a in ways)
            got: Dict[Tuple[int, ...], float] = {}
            for q, a in ways:
                seq = tuple(head) + (asrc[q[0]],) + tuple(adst[b] for b in q) + tuple(tail)
                got[seq] = got.get(seq, 0.0) + vol * a / total
                core_load[list(q)] += vol * a / total
            out.append(sorted(got.items(), key=lambda e: (-e[1], e[0])))
        return out, core_load


def solve_arc(topo: Topology, red: Reduction, S: np.ndarray, T: np.ndarray, V: np.ndarray,
              cap: np.ndarray) -> ArcSolution:
    """The min-MLU mcf LP of demands ``(S, T, V)`` on capacities ``cap`` (both in the median
    capacity's unit; ``inf`` allowed, every one > 0), solved whole (module docstring)."""
    n, m2 = topo.num_nodes, len(cap)
    rt_s, rt_t = red.root[S], red.root[T]
    # forced loads of the tree arcs (up from v: from its subtree out; down: the reverse)
    load = np.zeros(m2)
    L, a_star = 0.0, -1
    ups = red.ups
    if red.tree:  # subtree sums of the volumes out of (into) each router, less those of
        # the demands both of whose routers are in the subtree (their lowest common router)
        same = rt_s == rt_t
        inner = np.bincount(red.lca(S[same], T[same]), weights=V[same], minlength=n)
        load[ups] = np.maximum(red.subtree_sums(np.bincount(S, V, n) - inner), 0.0)
        load[ups ^ 1] = np.maximum(red.subtree_sums(np.bincount(T, V, n) - inner), 0.0)
        tarcs = np.concatenate([ups, ups ^ 1])
        util = load[tarcs] / cap[tarcs]
        if len(util) and util.max() > 0:
            j = int(np.argmax(util))
            L, a_star = float(util[j]), int(tarcs[j])
    # the core LP's commodities: demands between roots, added up
    core = red.core
    nc = len(core)
    cidx = red.cidx
    cross = rt_s != rt_t
    D: np.ndarray = np.bincount(cidx[rt_s[cross]] * nc + cidx[rt_t[cross]], weights=V[cross],
                    minlength=nc * nc).reshape(nc, nc)
    out_d = D.sum(axis=1)
    rs = np.flatnonzero(out_d > 0)
    carcs, cu, cv = red.carcs, red.cu, red.cv
    ccap = cap[carcs]
    # a lower bound of the MLU for the demand unit: forced utilisations, each root's demand
    # out and in over its core capacity out and in
    fin = np.isfinite(ccap)
    fcap = np.where(fin, ccap, np.inf)  # an arc of infinite capacity: no bound at its ends
    cout = np.bincount(cu, weights=fcap, minlength=nc)
    cin = np.bincount(cv, weights=fcap, minlength=nc)
    lo_out = np.divide(out_d, cout, out=np.zeros(nc), where=cout > 0)
    lo_in = np.divide(D.sum(axis=0), cin, out=np.zeros(nc), where=cin > 0)
    lb = max(L, float(lo_out.max(initial=0.0)), float(lo_in.max(initial=0.0)))
    unit = float(2.0 ** round(math.log2(lb))) if math.isfinite(lb) and lb > 0 else 1.0
    D, load, L = D / unit, load / unit, L / unit
    k = len(rs)
    ci, cj = np.nonzero(cv[None, :] != rs[:, None])  # no arc into its commodity's root
    drop = _dropped_rows(rs, cu, nc, len(ci))  # each commodity's row left out
    per_row = nc - 1
    base, dc = ci * per_row, drop[ci]
    hr, tr = base + cv[cj] - (cv[cj] > dc), base + cu[cj] - (cu[cj] > dc)
    has_h, has_t = cv[cj] != dc, cu[cj] != dc
    arow = np.cumsum(fin) - 1
    nconv = k * per_row
    ar = nconv + arow[cj]
    has_a = fin[cj]
    E = np.stack([tr, hr, ar], axis=1)
    keep = np.stack([has_t, has_h, has_a], axis=1)
    nfin = int(fin.sum())
    index = np.concatenate([E[keep], nconv + np.arange(nfin)])
    value = np.concatenate([np.broadcast_to(_SIGNS, E.shape)[keep], -ccap[fin]])
    per = keep.sum(axis=1)
    starts = np.zeros(len(ci) + 2, dtype=np.int64)
    np.cumsum(per, out=starts[1:-1])
    starts[-1] = starts[-2] + nfin
    ncols = len(ci) + 1
    cost = np.zeros(ncols)
    cost[-1] = 1.0
    col_lower = np.zeros(ncols)
    col_lower[-1] = L
    Dr = D[rs]  # into the root: minus all it sends
    Dr[np.arange(k), rs] = -Dr.sum(axis=1)
    mask = np.ones((k, nc), dtype=bool)
    mask[np.arange(k), drop] = False
    b = Dr[mask]
    row_lo = np.concatenate([b, np.full(nfin, -np.inf)])
    row_hi = np.concatenate([b, np.zeros(nfin)])
    parts = {"S": S, "T": T, "ci": ci, "arcs": carcs[cj], "rs": rs, "D": D}
    if k == 0:  # every demand inside one tree: all forced
        res = LPResult("optimal", L, np.asarray([L]), np.zeros(0), 0.0, "no core demand")
    else:
        res = solve_whole(cost, col_lower, starts, index, value, row_lo, row_hi,
                          options=_options(len(ci) < SMALL_LP,
                                           len(carcs) >= DENSE_CORE * max(nc, 1)))
    sol = ArcSolution(res.status, res.message, math.nan, load, np.zeros(m2), np.zeros(len(S)),
                      ncols, len(row_lo), res.seconds, red, parts)
    if res.status != "optimal":
        return sol
    x = np.maximum(res.x, 0.0)
    f = x[:-1]
    parts["f"] = f
    load[carcs] = np.bincount(cj, weights=f, minlength=len(carcs))
    duals = res.duals
    y = np.zeros(m2)
    y[carcs[fin]] = np.maximum(-duals[nconv:], 0.0)
    rest = 1.0 - float(cap[carcs[fin]] @ y[carcs[fin]])
    if a_star >= 0 and rest > 0:  # U at its bound L: the rest is the forced arc's
        y[a_star] = rest / cap[a_star]
    P = np.zeros((nc, nc))
    if k:  # potentials relative to the root's (a dropped row's is 0)
        pot = np.zeros((k, nc))
        pot[mask] = duals[:nconv]
        P[rs] = pot - pot[np.arange(k), rs][:, None]
    z = P[cidx[rt_s], cidx[rt_t]]
    if a_star >= 0 and y[a_star] > 0:  # the demands crossing the forced arc pay for it
        j = int(np.flatnonzero((ups == a_star) | ((ups ^ 1) == a_star))[0])
        inside = red.sub[j] > 0  # the subtree below the forced arc
        into, outof = inside[T] & ~inside[S], inside[S] & ~inside[T]
        z = z + y[a_star] * (outof if ups[j] == a_star else into)
    sol.mlu = max(float(res.objective), 0.0) * unit
    sol.load, sol.y, sol.z = load * unit, y, z
    sol.parts["unit"] = unit
    return sol


def arc_mlu(topo: Topology, red: Reduction, S: np.ndarray, T: np.ndarray, V: np.ndarray,
            cap: np.ndarray, scale: float, t0: float) -> Optional[MLUResult]:
    """:func:`~tpcstudy.models.mlu.min_mlu`'s ``mcf`` answer by the arc LP (``scale``: the
    capacity unit; ``t0``: when the call began), its paths decomposed when first read;
    ``None`` if the solver did not reach an optimum (the column generation then runs)."""
    sol = solve_arc(topo, red, S, T, V / scale, cap / scale)
    if sol.status != "optimal":
        return None
    out = make_result("mcf", None, sol.load * scale, cap, len(S), cls=LazyMLUResult,
                      columns=sol.columns, iterations=1, rows=sol.rows,
                      lp_seconds=sol.seconds, sources=S, targets=T, volumes=V,
                      arc_prices=sol.y / scale, demand_prices=sol.z / scale)
    assert isinstance(out, LazyMLUResult)
    out.make_paths = functools.partial(_settle, sol, V, out.loads, cap)
    out.mlu, out.lam = (sol.mlu, 1.0 / sol.mlu) if sol.mlu > 0 else (0.0, math.inf)
    out.seconds = time.perf_counter() - t0
    return out


def _settle(sol: ArcSolution, V: np.ndarray, lp_load: np.ndarray, cap: np.ndarray
            ) -> Tuple[List[List[Tuple[Tuple[int, ...], float]]], np.ndarray, np.ndarray]:
    """The routing of an arc LP's answer, the loads it gives (the trees' forced loads as the
    LP had them, the core's as the paths carry them) and their utilisation
    (:class:`LazyMLUResult`)."""
    paths, core_load = sol.routing(V)
    load = lp_load.copy()
    load[sol.red.carcs] = core_load[sol.red.carcs]
    return paths, load, utilisation_of(load, cap)

"""One sr-path per demand, as a router deploys it (``sr-unsplit``; docs/method.md §4b): the
minimum-MLU LP splits a demand over several sr-paths; a router's SR policy sends each demand on
one. :func:`sr_unsplit` turns the LP's routing into an unsplit one and says how far it is from
the LP's MLU (the LP's MLU is a lower bound of every unsplit routing over the same sr-paths, and
of every unsplit routing at all when the LP is exact).

Its ``bound`` is the larger of the LP's MLU and :func:`single_path_bound` (each demand alone on
its best single sr-path): a demand larger than any one path carries makes every unsplit routing
worse than the LP, and the bound says by how much at least.

1. **Candidates**: per demand, the sr-paths the LP put traffic on, and its plain ECMP path (the
   direct segment) in any case.
2. **Rounding**: each demand on its candidate of largest LP flow (ties: the fewer segments, then
   the path's order), which keeps most of the LP's traffic where the LP put it.
3. **Local search**: while it lowers the MLU, move one demand crossing the most utilised arc to
   another of its candidates: of all such moves the one giving the lowest MLU, ties broken by
   the lowest sum of squared utilisations and then by a seeded shuffle of the demands. A move
   that does not lower the MLU but lowers the squares on the same MLU is taken too (it can free
   the next move; at most :data:`PLATEAU_MOVES` in a row), at most ``max_moves`` moves per
   demand in all; the search ends within :data:`FLOOR_TOL` of the LP's MLU. When no candidate helps, each
   demand on the hot arc gets one more: its cheapest sr-path (at most k segments) with every arc
   priced at its utilisation's 8th power over its capacity (the hot arcs dear, idle ones
   nearly free); the search stops when that brings no improving move either.

Deterministic for a seed; the seed only orders equal moves.
"""

from __future__ import annotations

import math
import time
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..errors import UsageError
from ..paths import best_sr_paths, segment_costs, segment_ratios
from ..topology import Topology
from .mlu import MLUResult
from .oracles import rows_of, sr_usage

__all__ = ["sr_unsplit", "single_path_bound", "UNSPLIT_MOVES"]

#: The most moves of the local search, per demand.
UNSPLIT_MOVES = 20
#: Within this relative distance of the LP's MLU the search stops (nothing can do better).
FLOOR_TOL = 1e-6
#: The most moves in a row that lower only the squares, not the MLU.
PLATEAU_MOVES = 50

Path = Tuple[int, ...]
Usage = Tuple[np.ndarray, np.ndarray]


def _usages(topo: Topology, paths: List[Path]) -> Dict[Path, Usage]:
    """Arc usage ``(arcs, share)`` of each sr-path (ECMP on each segment, summed: the column
    oracles' :func:`~.oracles.sr_usage`)."""
    return dict(zip(paths, rows_of(sr_usage(topo, paths)))) if paths else {}


def _trial(load: np.ndarray, util: np.ndarray, inv: np.ndarray, top: List[int], sq: float,
           a0: np.ndarray, d0: np.ndarray, a1: np.ndarray, r1: np.ndarray, v: float
           ) -> Tuple[float, float]:
    """MLU and sum of squared utilisations after moving a demand of volume ``v`` off the arcs
    ``a0`` (its traffic ``d0`` on each) onto ``a1`` (shares ``r1``), touching only those arcs:
    the untouched maximum is the first of ``top`` (the arcs by falling utilisation) not touched,
    else the scan of every arc."""
    touched = np.union1d(a0, a1)
    new = load[touched].copy()
    new[np.searchsorted(touched, a0)] -= d0
    new[np.searchsorted(touched, a1)] += v * r1
    nu = new * inv[touched]
    old = util[touched]
    s2 = sq + float(np.dot(nu, nu) - np.dot(old, old))
    t = set(touched.tolist())
    rest = next((util[a] for a in top if a not in t), None)
    if rest is None:
        mask = np.ones(len(util), dtype=bool)
        mask[touched] = False
        rest = float(util[mask].max()) if mask.any() else 0.0
    return max(float(rest), float(nu.max()) if len(nu) else 0.0), s2


def _more_candidates(topo: Topology, k: int, util: np.ndarray, mlu: float, inv: np.ndarray,
                     hot: int, S: np.ndarray, T: np.ndarray, crossing: Dict[int, List[int]],
                     cands: List[List[Path]], use: Dict[Path, Usage], choice: List[int]) -> bool:
    """Add to each demand on the ``hot`` arc its cheapest sr-path (at most ``k`` segments) under
    the prices ``(util / mlu)^8 / capacity``; ``True`` when a demand got a new candidate."""
    on = [i for i in crossing.get(hot, []) if hot in set(use[cands[i][choice[i]]][0].tolist())]
    if not on or k < 1:
        return False
    prices = inv * ((util / mlu) ** 8 + 1e-9)
    costs = segment_costs(topo, np.where(np.isfinite(prices), prices, 1e30))
    _, off, wps = best_sr_paths(topo, costs, S[on].astype(np.int32), T[on].astype(np.int32), k)
    new: List[Tuple[int, Path]] = []
    for n_, i in enumerate(on):
        p = (int(S[i]),) + tuple(int(w) for w in wps[off[n_]:off[n_ + 1]]) + (int(T[i]),)
        if p not in cands[i]:
            new.append((i, p))
    if not new:
        return False
    use.update(_usages(topo, sorted({p for _, p in new if p not in use})))
    for i, p in new:
        cands[i].append(p)
        for a in use[p][0].tolist():
            lst = crossing.setdefault(a, [])
            if i not in lst:
                lst.append(i)
    return True


def _routing_load(use: Dict[Path, Usage], cands: List[List[Path]], choice: List[int],
                  V: np.ndarray, m2: int) -> np.ndarray:
    load = np.zeros(m2)
    for i, j in enumerate(choice):
        a, r = use[cands[i][j]]
        np.add.at(load, a, V[i] * r)
    return load


def single_path_bound(topo: Topology, S: np.ndarray, T: np.ndarray, V: np.ndarray, k: int
                      ) -> float:
    """A lower bound on the MLU of every unsplit sr routing with at most ``k`` segments: each
    demand alone on its best single sr-path. A path's utilisation is at least that of its most
    loaded segment, ``b(u, v) = max_a r_uv(a) / capacity_a`` per unit, so the bound is
    ``max_d volume_d * min over sr-paths of max over their segments of b``, a min-max product of
    ``b`` with itself ``k - 1`` times (the source is never its own waypoint)."""
    n = topo.num_nodes
    if not len(S) or n < 2:
        return 0.0
    uu, vv = np.nonzero(~np.eye(n, dtype=bool))
    off, arcs, fr = segment_ratios(topo, uu.astype(np.int32), vv.astype(np.int32))
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    per = np.where(cap[arcs] > 0, fr / np.where(cap[arcs] > 0, cap[arcs], 1.0), np.inf)
    b = np.full((n, n), np.inf)
    seg = np.repeat(np.arange(len(uu)), np.diff(off))
    top = np.full(len(uu), -np.inf)
    np.maximum.at(top, seg, per)
    b[uu, vv] = np.where(np.diff(off) > 0, top, np.inf)
    np.fill_diagonal(b, 0.0)
    # only the demands' sources' rows: row s of each product needs row s and b alone; in blocks
    # of rows so the s x w x t temporary stays near 64 MB (n^3 floats: 3.4 GB on unpruned Kdl)
    src, row = np.unique(S, return_inverse=True)
    best = b[src].copy()
    block = max(1, (8 << 20) // (n * n))
    for _ in range(max(0, k - 1)):
        via = np.empty_like(best)
        for lo in range(0, len(src), block):  # s -> w -> t
            via[lo:lo + block] = np.min(np.maximum(best[lo:lo + block, :, None], b[None, :, :]),
                                        axis=1)
        best = np.minimum(best, via)
    return float(np.max(V * best[row, T]))


def sr_unsplit(topo: Topology, lp: MLUResult, *, seed: int = 0,
               max_moves: int = UNSPLIT_MOVES, start: Optional[MLUResult] = None
               ) -> MLUResult:
    """One sr-path per demand from ``lp`` (an ``sr`` :func:`~tpcstudy.mlu.min_mlu` result on
    ``topo``), module docstring. ``iterations`` counts the moves made; ``paths`` has one path per
    demand carrying its whole volume.

    ``start``: an unsplit routing of the same demands (e.g. ``sr-unsplit`` with fewer segments):
    its paths join the candidates and, when its MLU is lower, it is where the search starts, so
    a larger segment limit never ends worse than the routing it starts from."""
    if lp.model != "sr":
        raise UsageError(f"sr-unsplit rounds an sr routing, not {lp.model!r}")
    t0 = time.perf_counter()
    S, T, V = lp.sources, lp.targets, np.asarray(lp.volumes, dtype=np.float64)
    n = len(S)
    if not math.isfinite(lp.mlu):  # a demand with no path: no routing, unsplit or not
        return MLUResult(model="sr-unsplit", k=lp.k, mlu=math.inf, bound=math.inf, lam=0.0,
                         loads=np.zeros_like(lp.loads), utilisation=np.zeros_like(lp.loads),
                         demands=n, seconds=time.perf_counter() - t0, sources=S, targets=T,
                         volumes=V)
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    inv = np.where(cap > 0, 1.0 / np.where(cap > 0, cap, 1.0), np.inf)
    cands: List[List[Path]] = []
    for i in range(n):
        direct = (int(S[i]), int(T[i]))
        used = sorted(((tuple(int(x) for x in p), f) for p, f in (lp.paths[i] if lp.paths else [])
                       if f > 0), key=lambda pf: (-pf[1], len(pf[0])))
        c = [p for p, _ in used]
        if direct not in c:
            c.append(direct)
        cands.append(c)
    if start is not None:
        if not (np.array_equal(start.sources, S) and np.array_equal(start.targets, T)):
            raise UsageError("sr-unsplit: the start routing is of other demands")
        for i in range(n):
            p = tuple(int(x) for x in start.paths[i][0][0])
            if p not in cands[i]:
                cands[i].append(p)
    use = _usages(topo, sorted({p for c in cands for p in c}))
    choice = [0] * n  # the largest LP flow first
    load = _routing_load(use, cands, choice, V, len(cap))
    if start is not None:
        other = [cands[i].index(tuple(int(x) for x in start.paths[i][0][0])) for i in range(n)]
        other_load = _routing_load(use, cands, other, V, len(cap))
        if np.max(other_load * inv) < np.max(load * inv):
            choice, load = other, other_load
    order = np.random.default_rng(seed).permutation(n)
    # demands by arc, to find who crosses the most utilised arc
    crossing: Dict[int, List[int]] = {}
    for i in order.tolist():
        for p in cands[i]:
            for a in use[p][0].tolist():
                lst = crossing.setdefault(a, [])
                if not lst or lst[-1] != i:
                    lst.append(i)
    moves = 0
    fresh = False
    util = load * inv
    floor = lp.mlu * (1 + FLOOR_TOL)
    plateau = 0
    while moves < max_moves * max(1, n):
        mlu = float(util.max()) if len(util) else 0.0
        if not mlu > 0 or not math.isfinite(mlu):
            break
        if mlu <= floor:
            break  # the LP's MLU: no routing over these sr-paths does better
        sq = float(np.dot(util, util))
        hot = int(np.argmax(util))
        top = np.argsort(-util, kind="stable")[:64].tolist()  # the untouched max is among them
        best = (mlu, sq, -1, -1)
        for i in crossing.get(hot, []):
            a0, r0 = use[cands[i][choice[i]]]
            if hot not in set(a0.tolist()):
                continue  # its current path avoids the hot arc
            for j, q in enumerate(cands[i]):
                if j == choice[i]:
                    continue
                m, s2 = _trial(load, util, inv, top, sq, a0, V[i] * r0, *use[q], V[i])
                if (m, s2) < best[:2] and (m < mlu * (1 - 1e-12) or s2 < sq * (1 - 1e-12)):
                    best = (m, s2, i, j)
        if best[2] < 0 and not fresh:
            # no candidate helps: price new sr-paths for the demands on the hot arc, every arc
            # costing its utilisation's 8th power (the hot arcs dear, the idle ones free)
            fresh = _more_candidates(topo, lp.k or 1, util, mlu, inv, hot, S, T, crossing,
                                     cands, use, choice)
            if fresh:
                continue
        if best[2] < 0:
            break
        fresh = False
        plateau = plateau + 1 if best[0] >= mlu * (1 - 1e-12) else 0
        if plateau > PLATEAU_MOVES:
            break
        _, _, i, j = best
        a0, r0 = use[cands[i][choice[i]]]
        a1, r1 = use[cands[i][j]]
        np.subtract.at(load, a0, V[i] * r0)
        np.add.at(load, a1, V[i] * r1)
        choice[i] = j
        util = load * inv
        moves += 1
    load = np.maximum(load, 0.0)  # rounding residue of the moves
    util = np.where(cap > 0, load * inv, np.where(load > 0, np.inf, 0.0))
    mlu = float(util.max()) if len(util) else 0.0
    chosen = [cands[i][choice[i]] for i in range(n)]
    bound = max(float(lp.mlu), single_path_bound(topo, S, T, V, lp.k or 1))
    return MLUResult(model="sr-unsplit", k=lp.k, mlu=mlu, bound=bound,
                     lam=1.0 / mlu if mlu > 0 else math.inf, loads=load, utilisation=util,
                     demands=n, columns=len(set(chosen)), iterations=moves,
                     seconds=time.perf_counter() - t0, sources=S, targets=T, volumes=V,
                     paths=[[(p, float(V[i]))] for i, p in enumerate(chosen)])

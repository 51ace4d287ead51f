"""Figure 6's counts: which rule of keeping or dropping draws explains the paper's N and zeros
(docs/method.md §4, "Figure 6's counts").

The paper pools 4,021 / 4,101 / 4,220 values at 1 / 5 / 10 % heavy pairs where 20 draws of its
219 topologies give 4,380, with 588 / 596 / 619 zeros over ecmp and 669 / 699 / 750 over
multipath. Each hypothesis here is a rule applied to the draws of a max-flow run in the paper's
configuration (:data:`HYPOTHESES`); rules that change how draws are made (rounding, unordered
pairs, merged parallel links) are the variants of :mod:`tpcstudy.study.reproduce`, and land in
the same table. For every rule and heavy percent: N, zeros over ecmp and over multipath, and
the (Q1, median, Q3) boxes, each with a draw-noise interval (a bootstrap that resamples every
topology's draws, as :func:`~tpcstudy.study.maxflow_summary.median_interval`) and a verdict.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .paper import FIGURE6_CDF_OVER_ECMP, FIGURE6_CDF_OVER_MULTIPATH, FIGURE6_N, FIGURE6_ZEROS
from .store import cell_number

__all__ = ["Draw", "HYPOTHESES", "draws_of", "draw_facts", "figure6_cells", "hypothesis_table",
           "ZERO_TOL", "LP_TOL", "RESAMPLES"]

#: A gain whose absolute value (in %) is below this is "no gain" (the study's zeros).
ZERO_TOL = 1e-9
#: The LP-tolerance hypothesis: gains below this many % count as zero (a solver stopping at a
#: relative gap of 1e-4 cannot tell them from 0).
LP_TOL = 1e-2
#: Bootstrap resamples of the intervals.
RESAMPLES = 400
#: Confidence level of the intervals.
LEVEL = 0.95


@dataclass(frozen=True)
class Draw:
    """One (topology, heavy, seed) draw of the paper rule: its gains (%) and facts."""

    topology: str
    heavy: float
    seed: int
    pairs: int
    over_ecmp: Optional[float]
    over_multipath: Optional[float]
    ok: bool                 # every model solved
    key: Tuple[Any, ...] = ()  # the heavy pair set (same key: the same draw)
    disconnected: bool = False  # some heavy pair has no path
    all_pairs: int = 0       # ordered edge-router pairs of the topology


def draws_of(rows: Sequence[Mapping[str, Any]],
             facts: Optional[Mapping[Tuple[str, float, int], Mapping[str, Any]]] = None
             ) -> List[Draw]:
    """The draws of a max-flow run (sr k = 4 rows, with ecmp / multipath beside them).

    ``facts``: per (topology, heavy, seed), ``key`` (the drawn pair set), ``disconnected``
    and ``all_pairs`` (:func:`draw_facts`)."""
    status: Dict[Tuple[str, float, int], bool] = {}
    sr: Dict[Tuple[str, float, int], Mapping[str, Any]] = {}
    for r in rows:
        h, s = cell_number(r.get("heavy")), cell_number(r.get("seed"))
        if h is None or s is None or str(r.get("status") or "ok") == "skipped":
            continue
        key = (str(r["topology"]), h, int(s))
        status[key] = status.get(key, True) and str(r.get("status") or "ok") == "ok"
        if r.get("model") == "sr" and cell_number(r.get("k")) == 4:
            sr[key] = r
    out = []
    for key in sorted(sr):
        r = sr[key]
        f = (facts or {}).get(key, {})
        out.append(Draw(key[0], key[1], key[2], int(cell_number(r.get("pairs")) or 0),
                        cell_number(r.get("improvement")),
                        cell_number(r.get("improvement_over_multipath")), status[key],
                        tuple(f.get("key", ())), bool(f.get("disconnected", False)),
                        int(f.get("all_pairs", 0))))
    return out


def draw_facts(topo_draws: Mapping[str, Tuple[Any, Sequence[float], Sequence[int]]],
               heavy_pairs: Callable[..., np.ndarray],
               components: Callable[[Any], np.ndarray],
               edge_pairs: Callable[[Any], np.ndarray]
               ) -> Dict[Tuple[str, float, int], Dict[str, Any]]:
    """Per (topology, heavy, seed): the drawn pair set, whether some pair of it is
    disconnected, and the topology's number of ordered edge-router pairs.

    ``topo_draws``: name -> (pruned topology, heavy percents, seeds); the three callables are
    :func:`tpcstudy.pairs.heavy_pairs`, a component label per router, and
    :func:`tpcstudy.pairs.edge_router_pairs` (passed in: this module computes nothing on graphs).
    """
    out: Dict[Tuple[str, float, int], Dict[str, Any]] = {}
    for name, (topo, heavies, seeds) in topo_draws.items():
        comp = components(topo)
        n_pairs = len(edge_pairs(topo))
        for h in heavies:
            for s in seeds:
                p = np.asarray(heavy_pairs(topo, percent=float(h), seed=int(s)))
                out[(name, float(h), int(s))] = {
                    "key": tuple(map(tuple, p.tolist())),
                    "disconnected": bool(len(p) and np.any(comp[p[:, 0]] != comp[p[:, 1]])),
                    "all_pairs": n_pairs}
    return out


def _zero(v: Optional[float], tol: float = ZERO_TOL) -> bool:
    return v is not None and abs(v) < tol


# ---------------------------------------------------------------- the hypotheses
Keep = Callable[[Draw, Mapping[str, Any]], bool]


def _keep_all(d: Draw, ctx: Mapping[str, Any]) -> bool:
    return True


def _two_pairs(d: Draw, ctx: Mapping[str, Any]) -> bool:
    return d.pairs >= 2


def _connected(d: Draw, ctx: Mapping[str, Any]) -> bool:
    return d.ok and not d.disconnected and d.over_ecmp is not None


def _gain(d: Draw, ctx: Mapping[str, Any]) -> bool:
    return not _zero(d.over_ecmp)


def _enough_pairs(d: Draw, ctx: Mapping[str, Any]) -> bool:
    # x % of the ordered pairs is at least one pair
    return d.all_pairs * d.heavy / 100.0 >= 1.0 - 1e-9


def _distinct(d: Draw, ctx: Mapping[str, Any]) -> bool:
    # the first seed drawing this pair set keeps it; later identical draws are dropped
    return ctx["first_seed"].get((d.topology, d.heavy, d.key), d.seed) == d.seed


def _some_gain_topology(d: Draw, ctx: Mapping[str, Any]) -> bool:
    return (d.topology, d.heavy) in ctx["gaining"]


#: (name, what it drops or changes, keep rule, zero tolerance in %).
HYPOTHESES: Tuple[Tuple[str, str, Keep, float], ...] = (
    ("paper rule", "every draw kept (20 per topology)", _keep_all, ZERO_TOL),
    ("min 2 pairs", "draws with fewer than 2 heavy pairs dropped", _two_pairs, ZERO_TOL),
    ("connected", "draws where a heavy pair is disconnected or a model fails dropped",
     _connected, ZERO_TOL),
    ("no zeros", "draws where sr gains nothing over ecmp dropped", _gain, ZERO_TOL),
    ("1 pair at x %", "topologies where x % of the pairs is under one pair dropped",
     _enough_pairs, ZERO_TOL),
    ("distinct draws", "a pair set drawn again for the same topology dropped (draws "
     "without replacement)", _distinct, ZERO_TOL),
    ("gaining topologies", "topologies where sr never gains at that percent dropped",
     _some_gain_topology, ZERO_TOL),
    ("LP tolerance", f"gains under {LP_TOL:g} % counted as zero", _keep_all, LP_TOL),
    ("distinct + no zeros", "both rules", lambda d, c: _distinct(d, c) and _gain(d, c),
     ZERO_TOL),
)


def _context(draws: Sequence[Draw]) -> Dict[str, Any]:
    first: Dict[Tuple[str, float, Tuple[Any, ...]], int] = {}
    gaining = set()
    for d in sorted(draws, key=lambda x: x.seed):
        first.setdefault((d.topology, d.heavy, d.key), d.seed)
        if d.over_ecmp is not None and not _zero(d.over_ecmp):
            gaining.add((d.topology, d.heavy))
    return {"first_seed": first, "gaining": gaining}


def _paper(heavy: float) -> Dict[str, Any]:
    return {"n": FIGURE6_N.get(heavy), "zeros_ecmp": FIGURE6_ZEROS["ecmp"].get(heavy),
            "zeros_multipath": FIGURE6_ZEROS["multipath"].get(heavy),
            "ecmp": FIGURE6_CDF_OVER_ECMP.get(heavy),
            "multipath": FIGURE6_CDF_OVER_MULTIPATH.get(heavy)}


def _stats(e: np.ndarray, m: np.ndarray, tol: float) -> np.ndarray:
    """[N, zeros ecmp, zeros multipath, Q1/median/Q3 ecmp, Q1/median/Q3 multipath] of each
    row of ``e`` / ``m`` (gains over ecmp / multipath, nan: not kept or none): shape
    (9, rows)."""
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-nan row: nan quartiles
        qe = np.nanpercentile(e, [25, 50, 75], axis=1)
        qm = np.nanpercentile(m, [25, 50, 75], axis=1)
        return np.vstack([np.sum(~np.isnan(e), axis=1), np.sum(np.abs(e) < tol, axis=1),
                          np.sum(np.abs(m) < tol, axis=1), qe, qm])


def figure6_cells(draws: Sequence[Draw], keep: Keep, tol: float = ZERO_TOL, *,
                  seed: int = 0, resamples: int = RESAMPLES) -> Dict[float, Dict[str, Any]]:
    """Per heavy percent: the kept draws' N, zeros and boxes with their noise intervals.

    The interval of each number is a percentile bootstrap over every topology's draws
    (resampled with replacement, the rule's verdict on each draw carried with it)."""
    ctx = _context(draws)
    out: Dict[float, Dict[str, Any]] = {}
    rng = np.random.default_rng(seed)
    names = ["n", "zeros_ecmp", "zeros_multipath", "ecmp_q1", "ecmp_median", "ecmp_q3",
             "multipath_q1", "multipath_median", "multipath_q3"]
    for heavy in sorted({d.heavy for d in draws}):
        mine = sorted((d for d in draws if d.heavy == heavy), key=lambda d: (d.topology, d.seed))
        e = np.array([math.nan if d.over_ecmp is None else d.over_ecmp for d in mine])
        m = np.array([math.nan if d.over_multipath is None else d.over_multipath for d in mine])
        k = np.array([keep(d, ctx) for d in mine], dtype=bool)
        e, m = np.where(k, e, math.nan), np.where(k, m, math.nan)
        point = _stats(e[None, :], m[None, :], tol)[:, 0]
        topo = np.array([d.topology for d in mine])
        starts = np.flatnonzero(np.r_[True, topo[1:] != topo[:-1]]) if len(mine) else \
            np.zeros(0, dtype=np.int64)
        sizes = np.diff(np.r_[starts, len(mine)])
        idx = np.concatenate([s0 + rng.integers(0, n0, size=(resamples, n0))
                              for s0, n0 in zip(starts.tolist(), sizes.tolist())], axis=1) \
            if len(mine) else np.zeros((resamples, 0), dtype=np.int64)
        boot = _stats(e[idx], m[idx], tol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanpercentile(boot, 50 * (1 - LEVEL), axis=1)
            hi = np.nanpercentile(boot, 100 - 50 * (1 - LEVEL), axis=1)
        out[heavy] = {nm: [float(point[i]), float(lo[i]), float(hi[i])]
                      for i, nm in enumerate(names)}
        out[heavy]["paper"] = _paper(heavy)
    return out


def _inside(cell: Sequence[float], paper: Optional[float], slack: float) -> Optional[bool]:
    if paper is None or any(math.isnan(x) for x in cell):
        return None
    return cell[1] - slack <= paper <= cell[2] + slack or abs(cell[0] - paper) <= slack


def judge(cells: Mapping[float, Mapping[str, Any]]) -> Dict[str, Any]:
    """How many of the 27 numbers (N, 2 zero counts, 6 box values, at 3 percents) hold the
    paper's inside their interval, and the largest miss of each kind."""
    inside, total = 0, 0
    misses: Dict[str, float] = {}
    for c in cells.values():
        p = c["paper"]
        checks = [("n", p["n"], 0.5), ("zeros_ecmp", p["zeros_ecmp"], 0.5),
                  ("zeros_multipath", p["zeros_multipath"], 0.5)]
        for over in ("ecmp", "multipath"):
            box = p[over]
            if box:
                checks += [(f"{over}_q1", box[0], 0.005), (f"{over}_median", box[1], 0.005),
                           (f"{over}_q3", box[2], 0.005)]
        for name, want, slack in checks:
            ok = _inside(c[name], want, slack)
            if ok is None:
                continue
            total += 1
            inside += bool(ok)
            if not ok:
                kind = name.split("_")[0] if name == "n" else name
                miss = c[name][0] - float(want)
                if abs(miss) > abs(misses.get(kind, 0.0)):
                    misses[kind] = miss
    return {"inside": inside, "of": total, "misses": misses}


def hypothesis_table(draws: Sequence[Draw],
                     variants: Optional[Mapping[str, Tuple[str, Sequence[Draw]]]] = None, *,
                     seed: int = 0, resamples: int = RESAMPLES) -> List[Dict[str, Any]]:
    """One row per hypothesis applied to the paper rule's draws, then per (variant run,
    hypothesis): a variant changes how draws are made, a hypothesis which are kept, so each
    pair of them is one configuration. Each row: its cells (:func:`figure6_cells`) and how many
    numbers fall inside their interval (:func:`judge`); the paper rule's keep-all row first,
    the rest best first (most numbers inside, then the smallest N miss)."""
    rows: List[Dict[str, Any]] = []
    configs: List[Tuple[str, str, Sequence[Draw]]] = [("", "", draws)]
    configs += [(name, what, vdraws) for name, (what, vdraws) in (variants or {}).items()]
    for vname, vwhat, vdraws in configs:
        for name, what, keep, tol in HYPOTHESES:
            if vname and not all(d.key or name in _NO_FACTS for d in vdraws[:1]):
                continue  # a rule that needs the draw facts, which this variant lacks
            cells = figure6_cells(vdraws, keep, tol, seed=seed, resamples=resamples)
            rows.append({"hypothesis": f"{vname}: {name}" if vname else name,
                         "change": f"{vwhat}; {what}" if vname else what,
                         "cells": cells, "judge": judge(cells)})
    head, rest = rows[:1], rows[1:]
    rest.sort(key=lambda r: (-r["judge"]["inside"],
                             sum(abs(m) for k, m in r["judge"]["misses"].items() if k == "n")))
    return head + rest


#: Hypotheses that need no draw facts (pair sets, connectivity, pair counts).
_NO_FACTS = ("paper rule", "min 2 pairs", "no zeros", "gaining topologies", "LP tolerance")

#!/usr/bin/env python
"""tpcstudy's min-MLU ``mcf`` LP against the plain LP a user would write, on REPETITA.

The plain LP: one commodity per source, arc formulation (``f[s, a] >= 0`` the traffic of
source ``s`` on arc ``a``), flow conservation per source and router, ``sum_s f[s, a] <= U
cap_a`` per arc, minimise ``U`` (capacities and volumes divided by the median capacity
first: HiGHS solves GtsCe 8x, Cogentco 4.5x faster so than at 1e6); built with
numpy/scipy.sparse and solved by HiGHS (highspy, ``passModel`` then ``run``; ``--via
linprog`` uses ``scipy.optimize.linprog(method="highs")``).
Both sides start from the same parsed topology and demand arrays; each side's time includes
building its LP. Per instance the two run one after the other in alternating order, ``--reps``
times at least and until the pair has taken ``--min-seconds`` (at most ``--max-reps``: small
instances get more repetitions, so one preemption of a busy machine does not decide their
median), a fresh topology each time, in one process; the ratio is taken per repetition.
``--paths`` also reads tpcstudy's routing (``MLUResult.paths``, decomposed from the arc flows
when first read) inside its timing.

    python benchmarks/mlu_peers.py                    # all 260 instances, inverse capacity
    python benchmarks/mlu_peers.py GtsCe Cogentco --reps 5

Prints per instance both times (medians), the ratio (plain / tpcstudy per repetition, above 1 =
tpcstudy faster: median [min-max]) and the optimum's relative difference; then how many ratios
are >= 1, their median and quartiles, the slowest five (tpcstudy's time) and the five lowest
ratios. REPETITA is found as the product finds it (TPCSTUDY_REPETITA_MIRROR).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, Dict, List, Tuple

import numpy as np


def plain_arc_lp(n: int, arc_src: np.ndarray, arc_dst: np.ndarray, cap: np.ndarray,
                 S: np.ndarray, T: np.ndarray, V: np.ndarray, via: str = "highspy") -> float:
    """The minimum MLU of the source-aggregated arc LP (module docstring)."""
    from scipy.sparse import coo_matrix

    m = len(arc_src)
    unit = float(np.median(cap))  # numbers near 1: HiGHS is 5-8x faster on GtsCe/Cogentco
    cap, V = cap / unit, V / unit
    srcs, which = np.unique(S, return_inverse=True)
    k = len(srcs)
    # supply b[s, v]: + total out of s at s, - demand at each target
    b = np.zeros((k, n))
    np.add.at(b, (which, T), -V)
    np.add.at(b, (which, S), V)
    # variables: f[s, a] at s * m + a, then U at k * m
    cols = np.arange(k * m)
    s_of, a_of = cols // m, cols % m
    # conservation rows s * n + v: +1 at the arc's tail, -1 at its head
    rows = np.concatenate([s_of * n + arc_src[a_of], s_of * n + arc_dst[a_of],
                           k * n + a_of, k * n + np.arange(m)])
    cc = np.concatenate([cols, cols, cols, np.full(m, k * m)])
    vals = np.concatenate([np.ones(k * m), -np.ones(k * m), np.ones(k * m), -cap])
    A = coo_matrix((vals, (rows, cc)), shape=(k * n + m, k * m + 1)).tocsc()
    lo = np.concatenate([b.ravel(), np.full(m, -np.inf)])
    hi = np.concatenate([b.ravel(), np.zeros(m)])
    c = np.zeros(k * m + 1)
    c[-1] = 1.0
    if via == "linprog":
        from scipy.optimize import linprog

        eq = np.arange(k * n)
        Acsr = A.tocsr()
        r = linprog(c, A_ub=Acsr[k * n:], b_ub=np.zeros(m), A_eq=Acsr[eq], b_eq=b.ravel(),
                    bounds=(0, None), method="highs")
        if r.status != 0:
            raise RuntimeError(r.message)
        return float(r.fun)
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = k * m + 1, k * n + m
    lp.col_cost_ = c
    lp.col_lower_ = np.zeros(k * m + 1)
    lp.col_upper_ = np.full(k * m + 1, highspy.kHighsInf)
    lp.row_lower_ = np.where(np.isfinite(lo), lo, -highspy.kHighsInf)
    lp.row_upper_ = hi
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(h.modelStatusToString(h.getModelStatus()))
    return float(h.getInfo().objective_function_value)


def nx_ecmp_mlu(n: int, arc_src: np.ndarray, arc_dst: np.ndarray, weight: np.ndarray,
                cap: np.ndarray, S: np.ndarray, T: np.ndarray, V: np.ndarray
                ) -> Tuple[float, np.ndarray]:
    """ECMP's MLU and per-arc loads, the networkx script a user would write: per destination,
    distances to it (Dijkstra on the reversed graph), then every router, furthest first, splits
    what it holds evenly among its next hops on a shortest path (tpcstudy's equal-cost rule:
    exact for integer weights, else relative 1e-9)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a, (u, v, w) in enumerate(zip(arc_src.tolist(), arc_dst.tolist(), weight.tolist())):
        g.add_edge(u, v, weight=w, arc=a)
    rev = g.reverse(copy=False)
    exact = bool(np.all(weight == np.round(weight)))
    load = np.zeros(len(arc_src))
    by_dst: Dict[int, List[Tuple[int, float]]] = {}
    for s, t, v in zip(S.tolist(), T.tolist(), V.tolist()):
        by_dst.setdefault(t, []).append((s, v))
    for t, dem in by_dst.items():
        dist = nx.single_source_dijkstra_path_length(rev, t, weight="weight")
        held = dict.fromkeys(dist, 0.0)
        for s, v in dem:
            held[s] += v
        for u in sorted(dist, key=lambda x: (-dist[x], x)):
            if u == t or held[u] == 0.0:
                continue
            du = dist[u]
            nh = [(x, e["arc"]) for x, e in g[u].items() if x in dist and dist[x] < du
                  and (dist[x] + e["weight"] == du if exact
                       else abs(dist[x] + e["weight"] - du) <= 1e-9 * du)]
            share = held[u] / len(nh)
            for x, a in nh:
                load[a] += share
                held[x] += share
    util = load / cap
    return float(util.max()), load


def load(name: str, files: Dict[str, Any]) -> Tuple[Any, Any]:
    from tpcstudy import read_topology
    from tpcstudy.io import read_demands

    f = files[name]
    topo = read_topology(f, capacity="file", weight="file")
    return topo, read_demands(f.with_name(f"{name}.0000.demands"), topo)


def mlu_rows(names: List[str], reps: int = 3, weights: str = "inverse-capacity"
             ) -> List[Dict[str, Any]]:
    """benchmarks/peers.py's MLU rows: per REPETITA instance, ``min_mlu(model="mcf")`` against
    :func:`plain_arc_lp` and ``min_mlu(model="ecmp")`` against :func:`nx_ecmp_mlu`, each pair
    run ``reps`` times side by side in alternating order (a fresh topology per repetition, as a
    user's one call meets it); the ratio peer / tpcstudy per repetition, its median and range,
    and whether the answers agree (MLU relative 1e-7; ECMP loads relative 1e-9)."""
    from tpcstudy.io import topology_files
    from tpcstudy.models.mlu import demand_arrays, min_mlu

    files = {f.stem: f for f in topology_files(f"repetita/{weights}")}
    out: List[Dict[str, Any]] = []
    for name in names:
        for op in ("mcf", "ecmp"):
            tt: List[float] = []
            tp: List[float] = []
            same = True
            for rep in range(reps + 1):  # repetition 0 warms up (imports, first calls)
                topo, dem = load(name, files)
                S, T, V = demand_arrays(topo, dem)
                asrc, adst = np.asarray(topo.arc_src), np.asarray(topo.arc_dst)
                cap = np.asarray(topo.arc_capacity, dtype=np.float64)
                w = np.asarray(topo.arc_weight, dtype=np.float64)
                for side in (("t", "p") if rep % 2 else ("p", "t")):
                    t0 = time.perf_counter()
                    if side == "t":
                        r = min_mlu(topo, dem, model=op)
                        dt = time.perf_counter() - t0
                        got = r.mlu
                    elif op == "mcf":
                        peer = plain_arc_lp(topo.num_nodes, asrc, adst, cap, S, T, V)
                        dt = time.perf_counter() - t0
                    else:
                        peer, peer_load = nx_ecmp_mlu(topo.num_nodes, asrc, adst, w, cap, S, T, V)
                        dt = time.perf_counter() - t0
                    if rep:
                        (tt if side == "t" else tp).append(dt)
                same = same and abs(got - peer) <= 1e-7 * abs(peer)
                if op == "ecmp":
                    same = same and bool(np.allclose(r.loads, peer_load, rtol=1e-9,
                                                     atol=1e-9 * float(peer_load.max())))
            ratios = sorted(p / t for p, t in zip(tp, tt))
            out.append({"instance": name, "op": op, "demands": int(len(S)),
                        "peer": "plain arc LP (highspy)" if op == "mcf" else "networkx script",
                        "tpcstudy_s": statistics.median(tt), "peer_s": statistics.median(tp),
                        "ratio": statistics.median(ratios), "lo": ratios[0], "hi": ratios[-1],
                        "same": same})
    return out


def mlu_markdown(rows: List[Dict[str, Any]]) -> str:
    """The MLU rows as a markdown table (benchmarks/peers.py)."""
    if not rows:
        return ""
    lines = ["", "MLU of a REPETITA demand matrix (`benchmarks/mlu_peers.py`): tpcstudy "
             "`min_mlu` against the plain arc LP (mcf) and a networkx script (ecmp); ratio = "
             "peer time / tpcstudy time per repetition, median [min-max]; answers checked equal.",
             "", "| instance | model | demands | tpcstudy | peer | peer time | ratio | same |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['instance']} | {r['op']} | {r['demands']} | {r['tpcstudy_s'] * 1e3:.1f}"
                     f" ms | {r['peer']} | {r['peer_s'] * 1e3:.1f} ms | {r['ratio']:.2f} "
                     f"[{r['lo']:.2f}-{r['hi']:.2f}] | {'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: Any = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="instances (default: every one)")
    p.add_argument("--reps", type=int, default=3, help="least repetitions per instance")
    p.add_argument("--min-seconds", type=float, default=0.3,
                   help="repeat until the pair took this long (default 0.3)")
    p.add_argument("--max-reps", type=int, default=15, help="most repetitions (default 15)")
    p.add_argument("--paths", action="store_true", help="time tpcstudy's routing read too")
    p.add_argument("--via", choices=("highspy", "linprog"), default="highspy")
    p.add_argument("--weights", choices=("inverse-capacity", "unary"), default="inverse-capacity")
    p.add_argument("--rows", action="store_true",
                   help="only peers.py's MLU rows (mcf and ecmp, --reps, default 3) of the names")
    args = p.parse_args(argv)
    if args.rows:
        print(mlu_markdown(mlu_rows(args.names or ["Abilene", "GtsCe", "Cogentco"],
                                    max(args.reps, 3), args.weights)))
        return 0

    from tpcstudy.io import topology_files
    from tpcstudy.models.mlu import demand_arrays, min_mlu

    files = {f.stem: f for f in topology_files(f"repetita/{args.weights}")}
    names = args.names or sorted(files)
    rows: List[Tuple[str, float, float, float, float, float, float, int]] = []
    topo, dem = load(names[0], files)  # warm up both sides (imports, first calls)
    S, T, V = demand_arrays(topo, dem)
    plain_arc_lp(topo.num_nodes, np.asarray(topo.arc_src), np.asarray(topo.arc_dst),
                 np.asarray(topo.arc_capacity, dtype=np.float64), S, T, V, args.via)
    min_mlu(topo, dem, model="mcf")
    flip = False
    print(f"{'instance':>22} {'plain s':>9} {'tpcstudy s':>10} {'ratio [min-max]':>18} reps"
          "  rel.diff")
    for name in names:
        topo, dem = load(name, files)
        S, T, V = demand_arrays(topo, dem)
        asrc, adst = np.asarray(topo.arc_src), np.asarray(topo.arc_dst)
        cap = np.asarray(topo.arc_capacity, dtype=np.float64)
        tp: List[float] = []
        tt: List[float] = []
        rep = 0
        while rep < args.reps or (sum(tp) + sum(tt) < args.min_seconds and rep < args.max_reps):
            if rep:  # a fresh topology each time, as a user's one call meets it (no caches)
                topo, dem = load(name, files)
            for side in (("t", "p") if flip else ("p", "t")):
                t0 = time.perf_counter()
                if side == "p":
                    vp = plain_arc_lp(topo.num_nodes, asrc, adst, cap, S, T, V, args.via)
                    tp.append(time.perf_counter() - t0)
                else:
                    r = min_mlu(topo, dem, model="mcf")
                    if args.paths:
                        len(r.paths)
                    tt.append(time.perf_counter() - t0)
                    vt = r.mlu
            flip = not flip
            rep += 1
        sp, st = statistics.median(tp), statistics.median(tt)
        ratios = sorted(a / b for a, b in zip(tp, tt))
        diff = abs(vt - vp) / max(abs(vp), 1e-300)
        rows.append((name, sp, st, statistics.median(ratios), diff, ratios[0], ratios[-1], rep))
        print(f"{name:>22} {sp:9.4f} {st:10.4f} {statistics.median(ratios):6.2f} "
              f"[{ratios[0]:4.2f}-{ratios[-1]:5.2f}] {rep:4d}  {diff:.1e}"
              f"{'' if diff <= 1e-7 else '  DIFFERENT'}", flush=True)
    ratios = [r[3] for r in rows]
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(f"\n{len(rows)} instances: total plain {sum(r[1] for r in rows):.2f} s, tpcstudy "
          f"{sum(r[2] for r in rows):.2f} s; ratio >= 1: {sum(x >= 1 for x in ratios)} of "
          f"{len(rows)}; ratio min {min(ratios):.2f} quartiles {q[0]:.2f} / {q[1]:.2f} / "
          f"{q[2]:.2f} max {max(ratios):.2f}; optimum differs > 1e-7: "
          f"{sum(r[4] > 1e-7 for r in rows)} (largest {max(r[4] for r in rows):.1e})")
    print("slowest five (tpcstudy time):")
    for r in sorted(rows, key=lambda r: -r[2])[:5]:
        print(f"  {r[0]:>22} plain {r[1]:.3f} s tpcstudy {r[2]:.3f} s ratio {r[3]:.2f} "
              f"[{r[5]:.2f}-{r[6]:.2f}]")
    print("lowest five ratios:")
    for r in sorted(rows, key=lambda r: r[3])[:5]:
        print(f"  {r[0]:>22} plain {r[1]:.4f} s tpcstudy {r[2]:.4f} s ratio {r[3]:.2f} "
              f"[{r[5]:.2f}-{r[6]:.2f}] over {r[7]} repetitions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

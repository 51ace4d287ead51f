#!/usr/bin/env python
"""Kdl, the Zoo's largest network, through every max-flow model: sifted column generation
against the whole master LP, side by side in one run (issue 15).

Kdl pruned: 680 routers, 821 links (1,642 capacity rows), 477 edge routers. Cases:

- 10 % heavy pairs (22,705 pairs, seed 0), ecmp / multipath / sr k=4 / mcf;
- all 227,052 ordered edge-router pairs, ecmp and sr k=4 (to proven optimality: the pricing
  stop rule is the one of every run).

"ours" is the default: the master LP holds at most ``SIFT_BATCH`` columns at first and takes the
most negative ``SIFT_BATCH`` per round (src/tpcstudy/maxflow/colgen.py). The reference is the same
code with the whole master at once (every starting column in the first LP, every priced column
entering), which is what every run did before sifting. Each measurement is its own process, so
its peak RSS is its own; the values of both must agree to 1e-9 relative, or the script fails.

    python benchmarks/kdl.py                   # everything (~2 min; the references ~90 s)
    python benchmarks/kdl.py --cases all-sr --no-reference
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

CASES: Dict[str, Tuple[str, str, float]] = {  # name: (pairs, model, goal seconds)
    "10-ecmp": ("10", "ecmp", 1.0),
    "10-multipath": ("10", "multipath", 1.0),
    "10-sr": ("10", "sr", 2.0),
    "10-mcf": ("10", "mcf", 1.0),
    "all-ecmp": ("all", "ecmp", 10.0),
    "all-sr": ("all", "sr", 10.0),
}


def one(pairs: str, model: str, reference: bool) -> Dict[str, Any]:
    """Run one case in this process; its numbers as a dict."""
    t0 = time.perf_counter()
    import tpcstudy
    import tpcstudy.models.colgen as colgen
    from tpcstudy.models.maxflow import max_flow
    from tpcstudy.pairs import edge_router_pairs

    if reference:
        colgen.SIFT_BATCH = 1 << 62
    topo = tpcstudy.prune(tpcstudy.read_topology("zoo/Kdl"))
    pp = edge_router_pairs(topo) if pairs == "all" else tpcstudy.heavy_pairs(
        topo, percent=float(pairs), seed=0)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = max_flow(topo, pp, model=model, k=4)
    wall = time.perf_counter() - t0
    yard = yardstick(topo)
    return {"value": r.value, "yardstick": yard, "status": r.status, "pairs": len(pp), "seconds": wall,
            "setup": setup, "split": r.seconds, "iterations": r.iterations,
            "columns": r.columns, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def yardstick(topo: Any) -> float:
    """Seconds of networkx's all-pairs Dijkstra lengths on the same network (best of two, in
    the same process): a yardstick that moves with the machine, as the solve does."""
    import networkx as nx

    g = nx.DiGraph()
    for a, b, w in zip(topo.arc_src.tolist(), topo.arc_dst.tolist(), topo.arc_weight.tolist()):
        g.add_edge(a, b, weight=w)
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        dict(nx.all_pairs_dijkstra_path_length(g, weight="weight"))
        best = min(best, time.perf_counter() - t0)
    return best


def measure(case: str, reference: bool) -> Dict[str, Any]:
    pairs, model, _ = CASES[case]
    cmd = [sys.executable, __file__, "--one", pairs, model] + (["--reference"] if reference else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help="subset of " + ",".join(CASES))
    ap.add_argument("--no-reference", action="store_true", help="skip the whole-master runs")
    ap.add_argument("--one", nargs=2, metavar=("PAIRS", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.reference)))
        return 0
    cases: List[str] = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c!r}; choose from {', '.join(CASES)}")
    print("Kdl pruned (680 routers, 1,642 arcs); seconds = the max_flow call (reading and pruning "
          "apart); reference = the whole master LP at once (before sifting)")
    print("yard = networkx's all-pairs Dijkstra lengths on the same network, same process")
    print(f"{'case':<13} {'pairs':>7} {'ours s':>7} {'goal':>5} {'/yard':>6} {'ref s':>7} "
          f"{'ref/ours':>8} {'MiB':>6} {'ref MiB':>7} {'LPs':>4} {'columns':>8}  split "
          "(paths/pricing/lp s), value")
    failed = False
    for c in cases:
        ours = measure(c, False)
        ref = None if a.no_reference else measure(c, True)
        sp = ours["split"]
        split = f"{sp['paths']:.2f}/{sp['pricing']:.2f}/{sp['lp']:.2f}"
        rs = (f"{ref['seconds']:7.2f} {ref['seconds'] / ours['seconds']:7.1f}x" if ref
              else f"{'-':>7} {'-':>8}")
        rm = f"{ref['peak_mib']:7.0f}" if ref else f"{'-':>7}"
        same = ""
        if ref:
            agree = abs(ours["value"] - ref["value"]) <= 1e-9 * max(1.0, abs(ref["value"]))
            same = " (= ref)" if agree else f" (ref {ref['value']:.10g}: DIFFERENT)"
            failed |= not agree
        print(f"{c:<13} {ours['pairs']:>7} {ours['seconds']:7.2f} {CASES[c][2]:5.0f} "
              f"{ours['seconds'] / ours['yardstick']:5.2f}x {rs} "
              f"{ours['peak_mib']:6.0f} {rm} {ours['iterations']:>4} {ours['columns']:>8}  "
              f"{split}, {ours['value']:.10g}{same}", flush=True)
    print("anchor: NCFlow's path LP (4 fixed paths per commodity, Gurobi) on Kdl with 567,762 "
          "commodities, 3-48 s (NSDI 2021)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A throughput results folder (``tpcstudy emulate --topo ...``) against two models, per row:
why real TCP over ECMP can beat the ecmp LP, and how well the CPU budget predicted the machine's
load (docs/emulation.md, "The whole Zoo with real TCP").

**ECMP and hashing.**
The ecmp LP splits each pair's flow evenly over its shortest paths. The emulated network hashes
each TCP connection onto one shortest path, and TCP gives the connections on uncongested paths
more rate, so N connections per pair behave like ``mptcp`` with N subflows (each on one hashed
path, any split among them), bounded by ``multipath`` (every shortest path, any split). For
every ecmp row this prints the measured goodput over the payload ceiling (what the links
carried) beside the three models, on the pairs the LP served:

    python scripts/check_throughput.py RESULTS [--draws 8] [--over 1.02]

``--over`` lists only rows whose data share passes it (0: every row). The summary: how many
rows sit above ecmp's LP, how many stay under multipath's (the bound), and the median measured
share of the hashed model.

**The CPU budget.** A run's predicted busy share is the most expensive model's
(:func:`tpcstudy.emulate.experiments.budget.run_cost`); here each model's own prediction, from
its LP's unit-hops at the rate the row ran at and the stored calibration, is set beside the CPU
share the row measured: the median and deciles of measured / predicted per model (rows
predicted under 20 % left out: the idle load drowns them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Dict, List, Tuple

import numpy as np


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a `tpcstudy emulate` throughput results folder")
    ap.add_argument("--draws", type=int, default=8, help="hash draws of the mptcp model")
    ap.add_argument("--over", type=float, default=1.02,
                    help="list the rows whose data share passes this (0: all)")
    args = ap.parse_args(argv)

    from tpcstudy import max_flow
    from tpcstudy.emulate.experiments.budget import choose, load_calibration, run_cost
    from tpcstudy.emulate.experiments.harness import pair_tasks, topology_units
    from tpcstudy.emulate.experiments.throughput import lp_solution
    from tpcstudy.study.store import load_results

    results = load_results(args.results)
    every = [r for r in results if r.get("status") == "ok"]
    mtu = int(((getattr(results, "config", {}) or {}).get("network") or {}).get("mtu", 1500))
    rows = [r for r in every if r.get("model") == "ecmp"]
    cal = load_calibration()
    busy: Dict[str, List[float]] = {}
    by_topo: Dict[str, List[dict]] = {}
    for r in rows:
        by_topo.setdefault(str(r["scenario"]), []).append(r)
    print(f"{'topology':18s} {'heavy':>5s} {'conn/pair':>9s} {'ecmp LP':>8s} {'measured':>8s} "
          f"{'mptcp:N':>8s} {'multipath':>9s}  measured/mptcp:N")
    out: List[Tuple[float, float, float, float]] = []
    for name in sorted(by_topo):
        for _, topo, _, _ in topology_units(f"zoo/{name}", log=lambda *a: None):
            for r in by_topo[name]:
                (task,) = pair_tasks(name, topo, [float(r["heavy"])], [int(r["seed"])])
                res, _ = lp_solution(topo, task.args, "ecmp")
                for m in [x for x in ("ecmp", "sr") if cal is not None]:
                    row = next((x for x in every if x.get("model") == m
                                and x.get("scenario") == name and x.get("heavy") == r["heavy"]
                                and x.get("seed") == r["seed"]), None)
                    if row is None or str(row.get("attempt")) not in ("1", "2"):
                        continue
                    lp = res if m == "ecmp" else lp_solution(topo, task.args, "sr",
                                                             k=int(row.get("k") or 4))[0]
                    cost = run_cost(topo, [lp], float(np.min(topo.arc_capacity)))
                    pred = choose(cost, cal, mtu=mtu, queue_ms=50.0, per_pair=1,
                                  link_mbps=float(row["link_mbps"]),
                                  routers=topo.num_nodes).predicted_busy
                    if pred >= 0.2:
                        busy.setdefault(m, []).append(float(row["cpu_busy"]) / pred)
                served = [p for p, f in zip(task.args, res.pair_flow) if f > 1e-12]
                n = max(1, round(float(r["connections"]) / max(1, len(served))))
                multi = max_flow(topo, served, model="multipath").value
                hashed = float(np.mean([max_flow(topo, served, model="mptcp", subflows=n,
                                                 seed=s).value for s in range(args.draws)]))
                carried = float(r["measured"]) / float(r["ceiling"])
                lp = float(r["lp_value"])
                out.append((lp, carried, hashed, multi))
                if float(r["data_share"]) > args.over:
                    print(f"{name:18s} {float(r['heavy']):5g} {n:9d} {lp:8.3f} {carried:8.3f} "
                          f"{hashed:8.3f} {multi:9.3f}  {carried / hashed:.3f}")
    if not out:
        print("no ecmp rows")
        return 1
    above = sum(c > 1.02 * lp for lp, c, _, _ in out)
    under = sum(c <= 1.02 * m for _, c, _, m in out)
    print(f"\n{len(out)} ecmp rows: {above} carry more than 1.02 x the ecmp LP; {under} stay "
          f"under 1.02 x multipath's LP; measured / mptcp:N median "
          f"{statistics.median(c / h for _, c, h, _ in out):.3f} (min "
          f"{min(c / h for _, c, h, _ in out):.3f}, max {max(c / h for _, c, h, _ in out):.3f}); "
          f"mptcp:N / ecmp LP median {statistics.median(h / lp for lp, _, h, _ in out):.3f}")
    if cal is None:
        print("no calibration stored on this machine: the budget is not checked")
    for m, v in busy.items():
        dec = statistics.quantiles(v, n=10) if len(v) > 1 else v
        print(f"{m}: measured / predicted CPU share over {len(v)} rows: median "
              f"{statistics.median(v):.2f}, deciles {dec[0]:.2f}-{dec[-1]:.2f}, max {max(v):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

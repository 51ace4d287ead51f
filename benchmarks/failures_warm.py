#!/usr/bin/env python
"""A failure's re-solve warm-started from the intact optimum against a cold solve of the same
failed graph (docs/method.md §4c), side by side, the same value (relative 1e-9) checked.

Warm (:func:`tpcstudy.models.failures.maxflow_reactions`'s ``reoptimised``, through
:func:`tpcstudy.models.maxflow.max_flow_after`): the intact column generation's final LP with
the failed arcs' rows at capacity 0 and the columns that crossed them held at zero, from its
basis (the dual simplex starts dual feasible), the other columns' usage kept, only the
crossing ones recomputed; its time includes what the reaction does around the solve (the
failed topology's components, the kept segment ratios). Cold: ``max_flow`` on the failed
topology from nothing. Per (topology, sampled link, model) the two run one after the other
in an alternating order, in this process; the median ratio over the links is printed per
model and over all of them.

    python benchmarks/failures_warm.py                         # Cogentco, Kdl; sr k=4; 20 links
    python benchmarks/failures_warm.py --topos Kdl --links 40 --models ecmp,sr,mcf --heavy 10

The Zoo is found the way the product finds it (installed, or TPCSTUDY_ZOO_MIRROR).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Dict, List

import numpy as np


def main(argv: List[str]) -> int:
    from tpcstudy.io import read_topology, topology_files
    from tpcstudy.models import failures as F
    from tpcstudy.models.maxflow import max_flow
    from tpcstudy.pairs import heavy_pairs
    from tpcstudy.topology import prune

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topos", default="Cogentco,Kdl")
    ap.add_argument("--models", default="sr")
    ap.add_argument("--links", type=int, default=20, help="links sampled per topology")
    ap.add_argument("--heavy", type=float, default=10.0)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    files = {p.stem: p for p in topology_files("zoo")}
    ratios: Dict[str, List[float]] = {}
    print(f"{'topology':>10} {'model':>6} {'link':>34} {'warm s':>8} {'cold s':>8} {'ratio':>6}")
    for name in args.topos.split(","):
        topo = prune(read_topology(files[name]))
        pairs = heavy_pairs(topo, percent=args.heavy, seed=args.seed)
        for model in args.models.split(","):
            intact = F.MaxflowIntact(topo, pairs, max_flow(topo, pairs, model=model, k=args.k,
                                                               keep_state=True),
                                     args.k)
            for n, sc in enumerate(F.scenarios(topo, f"links:{args.links}", seed=args.seed)):
                ft, _ = F.failed_topology(topo, sc)
                times = {}
                values = {}
                for which in (("warm", "cold") if n % 2 == 0 else ("cold", "warm")):
                    t0 = time.perf_counter()
                    if which == "warm":
                        got = F.maxflow_reactions(intact, sc, reactions=("reoptimised",))
                        values[which] = got[-1].value
                    else:
                        values[which] = max_flow(ft, pairs, model=model, k=args.k).value
                    times[which] = time.perf_counter() - t0
                if not np.isclose(values["warm"], values["cold"], rtol=1e-9, atol=1e-9):
                    print(f"MISMATCH {name} {sc.id} {model}: {values}", file=sys.stderr)
                    return 1
                r = times["cold"] / times["warm"]
                ratios.setdefault(model, []).append(r)
                ratios.setdefault("all", []).append(r)
                print(f"{name:>10} {model:>6} {sc.id[:34]:>34} {times['warm']:>8.3f} "
                      f"{times['cold']:>8.3f} {r:>6.2f}")
    for key, vals in ratios.items():
        print(f"median cold / warm ({key}, {len(vals)} failures): {statistics.median(vals):.2f}x "
              f"(min {min(vals):.2f}, max {max(vals):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

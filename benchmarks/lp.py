"""HiGHS primal vs dual simplex on a column-generation LP family, side by side.

The instances (2-segment SR paths on random Watts-Strogatz graphs) are the tests' LP oracle
(tests/helpers.py: cg_instance, column_generation), so every backend is timed on LPs whose
optimum the test suite checks.

    python benchmarks/lp.py --n 120 --seeds 3 --solvers highs-primal,highs-dual
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tpcstudy.lp import make_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers import cg_instance, column_generation  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description="Time HiGHS primal vs dual simplex on column generation.")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--pairs", type=float, default=0.3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--solvers", default="highs-primal,highs-dual")
    a = ap.parse_args()
    for seed in range(a.seeds):
        inst = cg_instance(a.n, pair_fraction=a.pairs, seed=seed)
        for spec in a.solvers.split(","):
            solver, _, simplex = spec.partition("-")
            opts = {"simplex": simplex} if simplex else {}
            t0 = time.perf_counter()
            out = column_generation(inst, make_model(solver, **opts), batch=a.batch)
            print(f"seed={seed} n={a.n} arcs={inst.arc_cap.size} pairs={len(inst.pairs)} {spec:13s} "
                  f"obj={out['objective']:.9g} rounds={out['rounds']} cols={out['columns']} "
                  f"lp={out['solve_seconds']:.3f}s (first {out['first_seconds']:.3f}s, "
                  f"re-solves {out['resolve_seconds']:.3f}s) total={time.perf_counter() - t0:.2f}s",
                  flush=True)


if __name__ == "__main__":
    main()

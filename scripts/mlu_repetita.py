"""Minimum MLU (tpcstudy.mlu) of every REPETITA Topology Zoo instance: ecmp, sr with k = 2 and 4,
and mcf on each `NAME.0000.demands`, with the time for all of them and the median reduction of
MLU by SR over ECMP (docs/method.md §4b).

    python scripts/mlu_repetita.py [--weights inverse-capacity|unary] [--limit N] [--out FILE.csv]

REPETITA is found the way the product finds it (installed, or TPCSTUDY_REPETITA_MIRROR).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--weights", choices=("inverse-capacity", "unary"), default="inverse-capacity")
    p.add_argument("--limit", type=int, default=0, help="only the first N instances (0: all)")
    p.add_argument("--out", help="write one row per instance and model (CSV)")
    args = p.parse_args(argv)

    from tpcstudy import read_topology
    from tpcstudy.errors import TpcStudyError
    from tpcstudy.io import read_demands, topology_files
    from tpcstudy.mlu import min_mlu

    files = topology_files(f"repetita/{args.weights}")
    if args.limit:
        files = files[:args.limit]
    models = (("ecmp", 1), ("sr", 2), ("sr", 4), ("mcf", 1))
    rows, t0 = [], time.perf_counter()
    for f in files:
        dem_file = f.with_name(f"{f.stem}.0000.demands")
        if not dem_file.is_file():
            continue
        try:
            topo = read_topology(f, capacity="file", weight="file")
            dem = read_demands(dem_file, topo)
        except TpcStudyError as exc:
            print(f"{f.stem}: skipped ({exc})", file=sys.stderr)
            continue
        took = []
        for model, k in models:
            t1 = time.perf_counter()
            r = min_mlu(topo, dem, model=model, k=k)
            took.append(f"{model}{k if model == 'sr' else ''} {r.mlu:.4f} "
                        f"{time.perf_counter() - t1:.2f} s")
            rows.append({"topology": f.stem, "model": model if model != "sr" else f"sr{k}",
                         "mlu": r.mlu, "columns": r.columns, "iterations": r.iterations,
                         "seconds": round(time.perf_counter() - t1, 4)})
        print(f"{f.stem} ({topo.num_nodes} routers, {r.demands} demands): " + "; ".join(took),
              file=sys.stderr, flush=True)
    total = time.perf_counter() - t0
    by = {}
    for r in rows:
        by.setdefault(r["topology"], {})[r["model"]] = r["mlu"]
    names = ("ecmp", "sr2", "sr4", "mcf")
    print(f"{len(by)} instances ({args.weights}), {len(rows)} solves in {total:.1f} s")
    for m in names:
        vals = [v[m] for v in by.values() if math.isfinite(v.get(m, math.nan))]
        print(f"  {m:>5}: median MLU {statistics.median(vals):.4f} over {len(vals)} "
              f"(max {max(vals):.3f})")
    for m in ("sr2", "sr4", "mcf"):
        red = [100 * (1 - v[m] / v["ecmp"]) for v in by.values()
               if v.get("ecmp", 0) > 0 and math.isfinite(v["ecmp"]) and math.isfinite(v[m])]
        print(f"  {m} vs ecmp: median MLU reduction {statistics.median(red):.1f} % "
              f"(q1 {statistics.quantiles(red, n=4)[0]:.1f}, q3 "
              f"{statistics.quantiles(red, n=4)[2]:.1f})")
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"rows in {Path(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Minimum MLU (tpcstudy.models.mlu) of every REPETITA Topology Zoo instance: by default ecmp, sr with
k = 2 and 4, and mcf on each `NAME.0000.demands`, with the time for all of them, the median
reduction of MLU by each model over ECMP, and how many instances each model brings down to mcf's
MLU (docs/method.md §4b).

    python scripts/mlu_repetita.py [--weights inverse-capacity|unary] [--limit N]
        [--models ecmp,sr2,sr4,multipath,mcf] [--jobs N] [--out FILE.csv]

``--jobs N`` solves N instances at once in worker processes (the largest demand files first, so
the longest solves start early), each with its share of the core's threads. REPETITA is found the
way the product finds it (installed, or TPCSTUDY_REPETITA_MIRROR).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

DEFAULT_MODELS = "ecmp,sr2,sr4,mcf"


def parse_models(text: str) -> List[Tuple[str, str, int]]:
    """``"ecmp,sr2,mcf"`` -> ``[(label, model, k), ...]``."""
    out = []
    for label in (m.strip() for m in text.split(",") if m.strip()):
        if label.startswith("sr") and label[2:].isdigit():
            out.append((label, "sr", int(label[2:])))
        elif label in ("ecmp", "multipath", "mcf"):
            out.append((label, label, 1))
        else:
            raise SystemExit(f"--models: {label!r} is not ecmp, srK (K = 1..10), multipath or mcf")
    return out


def solve_instance(graph: str, models: List[Tuple[str, str, int]]
                   ) -> Tuple[List[Dict[str, Any]], str]:
    """Every model on one instance: its rows and a progress line (what a worker returns)."""
    from tpcstudy import read_topology
    from tpcstudy.errors import TpcStudyError
    from tpcstudy.io import read_demands
    from tpcstudy.models.mlu import min_mlu

    f = Path(graph)
    try:
        topo = read_topology(f, capacity="file", weight="file")
        dem = read_demands(f.with_name(f"{f.stem}.0000.demands"), topo)
    except TpcStudyError as exc:
        return [], f"{f.stem}: skipped ({exc})"
    rows, took, n = [], [], 0
    for label, model, k in models:
        t1 = time.perf_counter()
        r = min_mlu(topo, dem, model=model, k=k)
        sec = time.perf_counter() - t1
        n = r.demands
        took.append(f"{label} {r.mlu:.4f} {sec:.2f} s")
        rows.append({"topology": f.stem, "model": label, "mlu": r.mlu, "columns": r.columns,
                     "rows": r.rows, "iterations": r.iterations, "seconds": round(sec, 4),
                     "lp_seconds": round(r.lp_seconds, 4)})
    return rows, f"{f.stem} ({topo.num_nodes} routers, {n} demands): " + "; ".join(took)


def _worker_init(jobs: int) -> None:
    from tpcstudy.paths import set_default_threads
    from tpcstudy.study.executors import worker_threads

    set_default_threads(worker_threads(jobs))


def summary(rows: List[Dict[str, Any]], labels: List[str]) -> List[str]:
    """Median MLU per model, its reduction over ecmp, and how often it reaches mcf."""
    by: Dict[str, Dict[str, float]] = {}
    for r in rows:
        by.setdefault(r["topology"], {})[r["model"]] = r["mlu"]
    out = []
    for m in labels:
        vals = [v[m] for v in by.values() if math.isfinite(v.get(m, math.nan))]
        if vals:
            out.append(f"  {m:>9}: median MLU {statistics.median(vals):.4f} over {len(vals)} "
                       f"(max {max(vals):.3f})")
    for m in labels:
        if m == "ecmp" or "ecmp" not in labels:
            continue
        red = [100 * (1 - v[m] / v["ecmp"]) for v in by.values()
               if v.get("ecmp", 0) > 0 and math.isfinite(v["ecmp"])
               and math.isfinite(v.get(m, math.nan))]
        if len(red) >= 2:
            q = statistics.quantiles(red, n=4)
            out.append(f"  {m} vs ecmp: median MLU reduction {statistics.median(red):.1f} % "
                       f"(q1 {q[0]:.1f}, q3 {q[2]:.1f})")
    if "mcf" in labels:
        for m in labels:
            if m == "mcf":
                continue
            both = [v for v in by.values() if m in v and "mcf" in v]
            hit = sum(1 for v in both if v[m] <= v["mcf"] * (1 + 1e-6))
            out.append(f"  {m} reaches mcf (relative 1e-6) on {hit} of {len(both)}")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--weights", choices=("inverse-capacity", "unary"), default="inverse-capacity")
    p.add_argument("--limit", type=int, default=0, help="only the first N instances (0: all)")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"comma-separated: ecmp, srK, multipath, mcf (default {DEFAULT_MODELS})")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1: none)")
    p.add_argument("--out", help="write one row per instance and model (CSV)")
    args = p.parse_args(argv)
    models = parse_models(args.models)
    if args.jobs < 1:
        raise SystemExit("--jobs: at least 1")

    from tpcstudy.io import topology_files

    files = topology_files(f"repetita/{args.weights}")
    if args.limit:
        files = files[:args.limit]
    files = [f for f in files if f.with_name(f"{f.stem}.0000.demands").is_file()]
    rows: List[Dict[str, Any]] = []
    t0 = time.perf_counter()
    if args.jobs == 1:
        for f in files:
            got, line = solve_instance(str(f), models)
            rows += got
            print(line, file=sys.stderr, flush=True)
    else:
        big_first = sorted(files, key=lambda f: -f.with_name(f"{f.stem}.0000.demands")
                           .stat().st_size)
        with ProcessPoolExecutor(args.jobs, initializer=_worker_init,
                                 initargs=(args.jobs,)) as pool:
            futures = [pool.submit(solve_instance, str(f), models) for f in big_first]
            for fut in as_completed(futures):
                got, line = fut.result()
                rows += got
                print(line, file=sys.stderr, flush=True)
        order = {f.stem: i for i, f in enumerate(files)}
        rows.sort(key=lambda r: order[r["topology"]])
    total = time.perf_counter() - t0
    labels = [m for m, _, _ in models]
    n_inst = len({r["topology"] for r in rows})
    print(f"{n_inst} instances ({args.weights}), {len(rows)} solves in {total:.1f} s "
          f"({args.jobs} process{'es' if args.jobs > 1 else ''})")
    print("\n".join(summary(rows, labels)))
    if args.out and rows:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"rows in {Path(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

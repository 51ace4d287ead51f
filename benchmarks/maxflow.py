"""Benchmark of the max-flow study: column generation against the plain LPs, side by side.

1. REPETITA Cogentco with its full demand matrix (38,612 demand-bounded pairs), sr k=4: column
   generation end to end, against one cold solve of the final master LP (all final columns at
   once) and, as context, HiGHS primal-only / dual-only warm starts.
2. Zoo Kdl (pruned), 10 % heavy pairs: multipath by column generation on the DAGs against the
   plain DAG-flow LP (one variable per pair and DAG arc).
3. Optionally (--zoo-study DIR) the whole Zoo study, heavy 1,5,10, one seed, all models, --jobs 2,
   with the wall time and its split into paths / pricing / LP summed over rows.

Run: python benchmarks/maxflow.py [--repetita DIR] [--zoo-study OUT] [--skip-slow]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tpcstudy.io import topology_files


def _line(task: str, ours: float, ref: float, note: str) -> None:
    print(f"{task:<44} {ours:>10.2f} {ref:>10.2f} {ref / ours:>8.1f}x  {note}", flush=True)


def bench_repetita(folder: Path, skip_slow: bool) -> None:
    import tpcstudy.models.maxflow as mf
    import tpcstudy.models.problem as mfp
    from tpcstudy import read_topology
    from tpcstudy.io import read_demands
    from tpcstudy.lp import make_model
    from tpcstudy.models.maxflow_models import SegmentCache

    t = read_topology(folder / "Cogentco.graph", capacity="file", weight="file")
    dem = read_demands(folder / "Cogentco.0000.demands", t)
    pairs = np.stack([dem["src"], dem["dst"]], axis=1)
    t0 = time.perf_counter()
    res = mf.max_flow(t, pairs, model="sr", k=4, demands=dem["bw"])
    cg = time.perf_counter() - t0
    print(f"REPETITA Cogentco: {len(pairs)} pairs, sr k=4 value {res.value:.6g}, "
          f"{res.iterations} LP solves, {res.columns} columns, split "
          + ", ".join(f"{k} {v:.2f} s" for k, v in res.seconds.items()))
    # the plain LP: the final master solved cold, all columns at once
    cache = SegmentCache(t)
    seqs = [tuple(t.index_of(x) for x in p) for p in res.paths]
    cache.ensure([(u, v) for q in seqs for u, v in zip(q[:-1], q[1:])])
    owner = {}
    for i, (s, d) in enumerate(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist())):
        owner[(s, d)] = i
    own = [owner[(q[0], q[-1])] for q in seqs]
    if not skip_slow:
        lp = make_model("highs", simplex="dual")
        lp.add_rows(t.arc_capacity)
        lp.add_rows(dem["bw"])
        cols = [cache.column(q) for q in seqs]
        m2 = 2 * t.num_links
        cols = [(np.append(a, m2 + o), np.append(v, 1.0)) for (a, v), o in zip(cols, own)]
        lp.add_columns(np.ones(len(cols)), *mfp.csc(cols))
        t0 = time.perf_counter()
        cold = lp.solve()
        ref = time.perf_counter() - t0
        assert abs(cold.objective - res.value) <= 1e-6 * res.value
        _line("Cogentco demands sr k=4: CG vs cold master", cg, ref, "HiGHS dual simplex, cold")
    for simplex in ("primal", "dual"):
        if skip_slow and simplex == "dual":
            continue
        orig = mfp.make_model  # the LP factory the models call, made to force one simplex
        mfp.make_model = lambda solver, _s=simplex, _f=orig: _f(solver, simplex=_s)  # type: ignore
        try:
            t0 = time.perf_counter()
            r2 = mf.max_flow(t, pairs, model="sr", k=4, demands=dem["bw"])
            other = time.perf_counter() - t0
        finally:
            mfp.make_model = orig
        assert abs(r2.value - res.value) <= 1e-6 * res.value
        _line(f"Cogentco demands sr k=4: auto vs {simplex}-only", cg, other, "HiGHS warm re-solves")


def bench_kdl_multipath() -> None:
    import tpcstudy
    import tpcstudy.models.maxflow as mf

    t = tpcstudy.prune(tpcstudy.read_topology("zoo/Kdl"))
    pairs = tpcstudy.heavy_pairs(t, percent=10, seed=0)
    t0 = time.perf_counter()
    a = mf.max_flow(t, pairs, model="multipath")
    cg = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = mf.max_flow(t, pairs, model="multipath", multipath="dag")
    ref = time.perf_counter() - t0
    assert abs(a.value - b.value) <= 1e-6 * b.value
    _line(f"Kdl 10 % ({len(pairs)} pairs) multipath: CG vs DAG LP", cg, ref,
          f"{a.columns} vs {b.columns} columns")


def bench_zoo_study(out: Path) -> None:
    cmd = [sys.executable, "-m", "tpcstudy", "maxflow", "--topo", "zoo", "--heavy", "1,5,10",
           "--models", "ecmp,multipath,sr,mcf", "--k", "4", "--jobs", "2", "--out", str(out),
           "--overwrite", "--no-progress"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd="/", stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out / "results.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    split = {k: sum(float(r[f"seconds_{k}"] or 0) for r in rows) for k in ("paths", "pricing", "lp")}
    total = sum(float(r["seconds"] or 0) for r in rows)
    print(f"whole Zoo (heavy 1,5,10, 1 seed, 4 models, k=4, 2 jobs): wall {wall:.1f} s; "
          f"CPU in models {total:.1f} s = paths {split['paths']:.1f} + pricing "
          f"{split['pricing']:.1f} + LP {split['lp']:.1f} (+ reading, pruning, overhead)")
    by_topo: dict = {}
    for r in rows:
        by_topo[r["topology"]] = by_topo.get(r["topology"], 0.0) + float(r["seconds"] or 0)
    top = sorted(by_topo.items(), key=lambda kv: -kv[1])[:5]
    print("slowest topologies: " + ", ".join(f"{k} {v:.1f} s" for k, v in top))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetita", type=Path, default=None,
                    help="a folder with Cogentco.graph and Cogentco.0000.demands (default: the "
                         "installed REPETITA inverse-capacity set, fetched on first use)")
    ap.add_argument("--zoo-study", type=Path, default=None, metavar="OUT")
    ap.add_argument("--skip-slow", action="store_true", help="skip the cold master and dual-only runs")
    args = ap.parse_args()
    print(f"{'task':<44} {'ours s':>10} {'ref s':>10} {'ratio':>9}")
    folder = args.repetita or topology_files("repetita/inverse-capacity/Cogentco")[0].parent
    bench_repetita(folder, args.skip_slow)
    bench_kdl_multipath()
    if args.zoo_study:
        bench_zoo_study(args.zoo_study)


if __name__ == "__main__":
    main()

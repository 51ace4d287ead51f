"""``tpcstudy maxflow``: the max-flow study over topology collections (Figure 6 of seed 000).

One task per topology: for every heavy-hitter fraction and seed, the pairs are drawn
(:func:`tpcstudy.maxflow.heavy_pairs`) and every model is solved on the pruned topology. Rows:
one per (topology, heavy, seed, model, k), with the improvement over ecmp (and, for sr, over
multipath) of the same draw. With demands (``--demands``), the pairs are the demand matrix's,
each bounded by its demand, on the unpruned topology (its routers are the ones the file names).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import TpcStudyError, UsageError

COLUMNS = [
    "topology", "heavy", "seed", "model", "k", "pairs", "value", "improvement",
    "improvement_over_multipath", "iterations", "columns", "gap", "seconds", "seconds_paths",
    "seconds_pricing", "seconds_lp", "nodes", "links", "edge_routers", "status", "error",
]
KEY = ["topology", "heavy", "seed", "model", "k"]

#: Seed 000, section 3.3: median improvement of sr over single-path ECMP, by heavy fraction (%).
PAPER_MEDIANS = {1.0: 71.0, 10.0: 30.0}
#: Seed 000, section 3.3: "over multipath the improvement is about 5 % lower" (points).
PAPER_MULTIPATH_GAP = 5.0
PAPER_NOTE = ("seed 000: median sr over ecmp "
              + ", ".join(f"{v:g} % at {h:g} %" for h, v in PAPER_MEDIANS.items())
              + f"; over multipath about {PAPER_MULTIPATH_GAP:g} points lower")


def _parse_list(text: str, kind: type, what: str) -> List[Any]:
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(kind(part))
        except ValueError:
            raise UsageError(f"{what}: {part!r} is not a {kind.__name__}") from None
    if not out:
        raise UsageError(f"{what}: empty list")
    return out


def _demands_file(path: Path, spec: Optional[str]) -> Optional[Path]:
    if spec in (None, "", "none"):
        return None
    if spec == "auto":
        cands = sorted(path.parent.glob(path.stem + ".*demands"))  # NAME.demands, NAME.0000.demands
        if not cands:
            raise UsageError(f"--demands auto: no {path.stem}.*.demands next to {path}")
        return cands[0]
    return Path(spec)


def _lp_file(base: Optional[str], topo: str, heavy: float, seed: int, model: str,
             k: Any) -> Optional[str]:
    if not base:
        return None
    p = Path(base)
    suffix = p.suffix if p.suffix in (".lp", ".mps") else ".lp"
    stem = p.stem if p.suffix in (".lp", ".mps") else p.name
    return str(p.with_name(f"{stem}-{topo}-h{heavy:g}-s{seed}-{model}{k}{suffix}"))


def run_topology(task: Any) -> List[Dict[str, Any]]:
    """The rows of one topology (module-level so worker processes can import it)."""
    from .maxflow import max_flow
    from .pairs import heavy_pairs
    from .io import read_demands, read_topology
    from .topology import prune

    a = task.args
    path = Path(a["path"])
    topo = read_topology(path, capacity=a["capacity"], weight=a["weight"])
    dfile = _demands_file(path, a.get("demands"))
    draws: List[Tuple[float, int, np.ndarray, Optional[np.ndarray]]] = []
    if dfile is not None:
        dem = read_demands(dfile, topo)
        dem = dem[(dem["bw"] > 0) & (dem["src"] != dem["dst"])]
        draws.append((100.0, 0, np.stack([dem["src"], dem["dst"]], axis=1).astype(np.int32),
                      dem["bw"].astype(np.float64)))
    else:
        if not a.get("no_prune"):
            topo = prune(topo)
        for heavy in a["heavy"]:
            for seed in a["seeds"]:
                draws.append((heavy, seed, heavy_pairs(topo, percent=heavy, seed=seed), None))
    base = {"topology": topo.name, "nodes": topo.num_nodes, "links": topo.num_links,
            "edge_routers": len(topo.edge_routers)}
    rows: List[Dict[str, Any]] = []
    for heavy, seed, pairs, bounds in draws:
        values: Dict[Tuple[str, Any], float] = {}
        draw_rows = []
        for model in a["models"]:
            for k in (a["k"] if model == "sr" else [1 if model == "ecmp" else ""]):
                row = dict(base, heavy=heavy, seed=seed, model=model, k=k, pairs=len(pairs))
                if len(pairs) == 0:
                    row.update(status="skipped", error="fewer than 2 edge routers")
                    draw_rows.append(row)
                    continue
                t0 = time.perf_counter()
                try:
                    res = max_flow(topo, pairs, model=model, k=int(k) if k != "" else 4,
                                   solver=a["solver"], demands=bounds, time_limit=a.get("time_limit"),
                                   write_lp=_lp_file(a.get("write_lp"), topo.name, heavy, seed, model, k))
                except TpcStudyError as exc:
                    row.update(status="failed", error=str(exc), seconds=time.perf_counter() - t0)
                    draw_rows.append(row)
                    continue
                row.update(value=res.value, iterations=res.iterations, columns=res.columns,
                           gap=res.gap, seconds=round(time.perf_counter() - t0, 4),
                           seconds_paths=round(res.seconds["paths"], 4),
                           seconds_pricing=round(res.seconds["pricing"], 4),
                           seconds_lp=round(res.seconds["lp"], 4),
                           status="ok" if res.ok else "failed",
                           error="" if res.ok else f"{res.status}: {res.message}")
                if res.ok:
                    values[(model, k)] = res.value
                draw_rows.append(row)
        ecmp = values.get(("ecmp", 1))
        multi = values.get(("multipath", ""))
        for row in draw_rows:
            v = values.get((row["model"], row["k"]))
            if v is not None and ecmp:
                row["improvement"] = round(100.0 * (v - ecmp) / ecmp, 6)
            if v is not None and multi and row["model"] == "sr":
                row["improvement_over_multipath"] = round(100.0 * (v - multi) / multi, 6)
        rows.extend(draw_rows)
    return rows


# --------------------------------------------------------------------------- summary
def _f(x: Any) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def summarize(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Median and quartiles over topologies (seeds averaged per topology) per heavy, model, k."""
    groups: Dict[Tuple[float, str, str, str], Dict[str, List[float]]] = {}
    for r in rows:
        if r.get("status") != "ok":
            continue
        heavy, model, k = float(r["heavy"]), str(r["model"]), str(r["k"])
        for col, label in (("improvement", "ecmp"), ("improvement_over_multipath", "multipath")):
            v = _f(r.get(col))
            if v is None:
                continue
            groups.setdefault((heavy, model, k, label), {}).setdefault(str(r["topology"]), []).append(v)
    out = []
    for (heavy, model, k, label), per_topo in sorted(groups.items()):
        vals = sorted(statistics.fmean(v) for v in per_topo.values())
        q = np.percentile(vals, [25, 50, 75]) if vals else [math.nan] * 3
        out.append({"heavy": heavy, "model": model, "k": k, "over": label, "topologies": len(vals),
                    "q1": float(q[0]), "median": float(q[1]), "q3": float(q[2])})
    return out


def format_summary(summary: Sequence[Dict[str, Any]]) -> str:
    lines = ["improvement in % (over topologies; seeds averaged): median [q1, q3]"]
    lines.append(f"{'heavy':>6} {'model':>10} {'k':>3} {'over':>10} {'topos':>6} {'median':>8}"
                 f" {'q1':>8} {'q3':>8}  paper")
    for s in summary:
        if s["model"] == "ecmp":
            continue
        paper = ""
        if s["model"] == "sr" and s["heavy"] in PAPER_MEDIANS:
            base = PAPER_MEDIANS[s["heavy"]]
            paper = f"{base:.0f}" if s["over"] == "ecmp" else f"~{base - PAPER_MULTIPATH_GAP:.0f}"
        lines.append(f"{s['heavy']:>5g}% {s['model']:>10} {s['k']:>3} {s['over']:>10} "
                     f"{s['topologies']:>6} {s['median']:>8.1f} {s['q1']:>8.1f} {s['q3']:>8.1f}  {paper}")
    lines.append(PAPER_NOTE)
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI
def cmd_maxflow(args: argparse.Namespace) -> int:
    from .cli import _apply_mirror
    from .executors import executor_scope
    from .lp import SOLVERS
    from .maxflow import MODELS
    from .io import topology_files
    from .disjoint_study import parse_k_list
    from .runner import ResultStore, Task, read_results, run_tasks, write_meta

    _apply_mirror(args)
    heavy = _parse_list(args.heavy, float, "--heavy")
    if any(not 0 < h <= 100 for h in heavy):
        raise UsageError("--heavy: percentages must be in (0, 100]")
    models = list(dict.fromkeys(_parse_list(args.models, str, "--models")))
    for m in models:
        if m not in MODELS:
            raise UsageError(f"--models: unknown model {m!r}; choose from {', '.join(MODELS)}")
    if "ecmp" not in models:
        models = ["ecmp"] + models  # the baseline every improvement is measured against
    ks = list(parse_k_list(args.k))
    if args.solver not in SOLVERS:
        raise UsageError(f"--solver: choose from {', '.join(SOLVERS)}")
    if args.seeds < 1:
        raise UsageError("--seeds must be >= 1")
    seeds = list(range(args.seed, args.seed + args.seeds))
    files = topology_files(args.topo)
    if args.demands not in (None, "auto", "none") and len(files) != 1:
        raise UsageError("--demands FILE needs a single topology; use --demands auto for a folder")
    out = Path(args.out)
    config = {"topo": str(args.topo), "capacity": args.capacity, "weight": args.weight,
              "heavy": heavy, "models": models, "k": ks, "demands": args.demands,
              "prune": not args.no_prune, "time_limit": args.time_limit,
              "pairs_rule": "heavy_pairs: numpy default_rng(seed).choice of ceil(x * #pairs) "
                            "ordered edge-router pairs, sorted"}
    if args.overwrite:  # a fresh study in an old folder: drop the old results first
        import shutil

        shutil.rmtree(out / "parts", ignore_errors=True)
        (out / "results.csv").unlink(missing_ok=True)
    write_meta(out, config, seeds=seeds, solver=args.solver, overwrite=args.overwrite)
    # largest files first: the big topologies start early and the workers stay busy
    files = sorted(files, key=lambda p: (-p.stat().st_size, p.name))
    tasks = [Task({"topology": p.stem, "file": p.name},
                  {"path": str(p.absolute()), "capacity": args.capacity, "weight": args.weight,
                   "heavy": heavy, "seeds": seeds, "models": models, "k": ks,
                   "solver": args.solver, "demands": args.demands, "no_prune": args.no_prune,
                   "time_limit": args.time_limit, "write_lp": args.write_lp})
             for p in files]
    store = ResultStore(out, COLUMNS, KEY)
    t0 = time.perf_counter()
    with executor_scope(args) as executor:
        summary = run_tasks(tasks, run_topology, store, jobs=args.jobs, desc="maxflow",
                            progress=not args.no_progress, executor=executor)
    rows = read_results(store.results_path)
    print(format_summary(summarize(rows)))
    failed = [r for r in rows if r.get("status") == "failed"]
    skipped = {r["topology"] for r in rows if r.get("status") == "skipped"}
    print(f"{len(files)} topologies ({summary.skipped} already done), {len(rows)} rows, "
          f"{len(skipped)} topologies skipped (< 2 edge routers), {len(failed)} failed rows; "
          f"{time.perf_counter() - t0:.1f} s; results in {store.results_path}")
    for r in failed[:10]:
        print(f"  failed: {r['topology']} heavy {r['heavy']} seed {r['seed']} {r['model']} "
              f"k {r['k']}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


def register_cli(sub: Any, add_topology_options: Any) -> None:
    from .executors import add_executor_options

    p = sub.add_parser("maxflow", help="max-flow study: ecmp vs multipath vs SR vs the mcf bound",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_topology_options(p)
    p.add_argument("--heavy", default="1,5,10",
                   help="heavy-hitter pairs, percent of ordered edge-router pairs (default 1,5,10)")
    p.add_argument("--seeds", type=int, default=1, help="random draws per fraction (default 1)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--models", default="ecmp,multipath,sr,mcf",
                   help="models to solve (default ecmp,multipath,sr,mcf; ecmp is always added)")
    p.add_argument("--k", default="4", help="segment limits for sr, e.g. 4 or 2,3,4,6 or 1-6")
    p.add_argument("--solver", default="highs",
                   help="LP backend: highs (default), glop, pdlp (OR-Tools), pulp (CBC)")
    p.add_argument("--demands", default=None, metavar="FILE|auto",
                   help="bound each pair by a demand: a REPETITA .demands file, or 'auto' for the "
                        "NAME.*.demands next to each NAME.graph (pairs = the demand matrix)")
    p.add_argument("--no-prune", action="store_true", help="do not prune tree parts")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds per model solve; a row over it is marked failed")
    p.add_argument("--write-lp", default=None, metavar="FILE",
                   help="write each final LP (FILE-<topology>-h<heavy>-s<seed>-<model><k>.lp)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    add_executor_options(p)
    p.add_argument("--out", required=True, metavar="DIR",
                   help="results folder (meta.json, results.csv); re-running resumes")
    p.add_argument("--overwrite", action="store_true",
                   help="discard the results in DIR (e.g. a study with other settings) and start over")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_maxflow)

"""``tpcstudy disjoint``: the disjoint-path study (Figure 7 of "The TCPPathChanger")."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Dict, List, Sequence

from ..errors import UsageError
from ..study.disjoint import DisjointConfig, format_summary, run_disjoint_study, summarize
from ..study.executors import executor_scope
from ..study.store import ERROR, STATUS, cell_number
from .options import (
    add_executor_options,
    add_out_option,
    add_output_options,
    add_topology_options,
    apply_mirror,
    checked_jobs,
    next_steps,
    parse_k_list,
    print_study_json,
    resolve_out,
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "disjoint", help="link-disjoint paths per router pair: max, greedy, sps with k segments",
        description="Per topology (pruned), the mean/min/max number of link-disjoint paths per "
                    "ordered edge-router pair for max, greedy and sps with each k, plus a "
                    "failure view of the exported path sets (docs/method.md section 5). "
                    "Resumable: rerun the same command to continue.")
    add_topology_options(p)
    p.add_argument("--k", default="1-6", metavar="LIST",
                   help="sps segment limits, e.g. 1-6 (default) or 1,2,4")
    p.add_argument("--pairs", choices=("edge", "all"), default="edge",
                   help="ordered pairs of edge routers (default) or of all routers")
    p.add_argument("--max-pairs", type=int, default=None, metavar="N",
                   help="at most N pairs per topology: a uniform random sample (seeded) where a "
                        "topology has more (default: all pairs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the pair sample (default 0)")
    p.add_argument("--segment-rule", default="dag", metavar="LIST",
                   help="what an sps segment occupies, one rule or a comma list: dag (default: "
                        "its whole ECMP DAG), path (its one smallest shortest path: the TPC "
                        "paper's Figure 7), any (some surviving shortest path); each rule other "
                        "than dag adds rows 'sps:RULE' (docs/method.md section 5)")
    p.add_argument("--failures", default="none", metavar="SPEC",
                   help="also judge the exported path sets (slot 0 + sps k=4, at most 5) under "
                        "every failure scenario: none (default), links (every link of the "
                        "pruned topology), links:N (a seeded sample of N), srlg:FILE (lines "
                        "'NAME: A -- B; C -- D'), nodes (every transit router; every router "
                        "with --pairs all); one 'failure' row per scenario: default path hit, "
                        "a surviving exported path, stranded, disconnected (docs/method.md "
                        "section 5)")
    add_executor_options(p)
    p.add_argument("--threads", type=int, default=None,
                   help="core threads per topology (default: the machine's cores, so the largest "
                        "topology, often alone at the end, uses them all; results do not depend "
                        "on it)")
    add_out_option(p, "disjoint")
    p.add_argument("--paths-out", metavar="FILE",
                   help="also write every pair's paths as JSON lines (gzip if FILE ends .gz)")
    add_output_options(p)
    p.set_defaults(func=cmd_disjoint)


#: Up to this many topologies, the study also prints one line per topology.
INSTANCE_LINES = 12


def format_instances(rows: Sequence[Dict[str, Any]]) -> str:
    """One line per topology: the mean link-disjoint paths per pair of max, greedy and sps per
    k, the pairs, the seconds and the status."""
    by: Dict[str, Dict[str, Any]] = {}
    ks: List[int] = []
    for r in rows:
        t = by.setdefault(str(r["topology"]), {"seconds": 0.0, "status": "ok", "pairs": ""})
        sec = cell_number(r.get("seconds"))
        t["seconds"] += sec or 0.0
        if r.get(STATUS) not in (None, "", "ok"):
            t["status"] = f"{r.get(STATUS)}: {str(r.get(ERROR) or '').splitlines()[:1]}"
        method, k = str(r.get("method")), cell_number(r.get("k"))
        if method == "sps" and k is not None:
            ks.append(int(k))
            method = f"k={int(k)}"
        if method in ("max", "greedy") or method.startswith("k="):
            t[method] = cell_number(r.get("mean_paths"))
            t["pairs"] = r.get("pairs", t["pairs"])
    cols = ["max", "greedy"] + [f"k={k}" for k in sorted(set(ks))]
    lines = [f"{'topology':<22} {'pairs':>6} " + " ".join(f"{c:>6}" for c in cols)
             + f" {'seconds':>8}  status   (mean link-disjoint paths per pair; k: sps)"]
    for name, t in by.items():
        vals = " ".join(f"{t[c]:>6.3f}" if t.get(c) is not None else f"{'-':>6}" for c in cols)
        lines.append(f"{name[:22]:<22} {str(t['pairs']):>6} {vals} {t['seconds']:>8.2f}  "
                     f"{t['status']}")
    return "\n".join(lines)


def cmd_disjoint(args: argparse.Namespace) -> int:
    apply_mirror(args)
    if args.seed < 0:
        raise UsageError(f"--seed {args.seed}: seeds are integers >= 0")
    checked_jobs(args)
    resolve_out(args, "disjoint")
    config = DisjointConfig(ks=parse_k_list(args.k), pairs=args.pairs, capacity=args.capacity,
                            max_pairs=args.max_pairs, seed=args.seed, weight=args.weight,
                            links=args.links, segment_rules=tuple(args.segment_rule.split(",")),
                            failures=args.failures,
                            threads=args.threads if args.threads is not None else os.cpu_count() or 1)
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        run, rows = run_disjoint_study(args.topo, args.out, config, jobs=args.jobs,
                                       paths_out=args.paths_out,
                                       progress=not args.no_progress, executor=executor,
                                       overwrite=args.overwrite)
    if args.json:
        print_study_json(args.out)
    else:
        if len({r["topology"] for r in rows}) <= INSTANCE_LINES:
            print(format_instances(rows))
            print("")
        print(format_summary(summarize(rows)))
        print("")
    if run.report():
        print(run.report(), file=sys.stderr)
    info = sys.stderr if args.json else sys.stdout
    print(f"{run.total} tasks: {run.skipped} reused from an earlier run, {run.completed} run "
          f"({len(run.failed)} failed) in {time.perf_counter() - t0:.1f} s; results in "
          f"{run.results}" + (f"; paths in {args.paths_out}" if args.paths_out else ""),
          file=info)
    if run.completed + run.skipped > len(run.failed):  # something to plot and show
        print(next_steps(args.out), file=info)
    for r in rows:
        if r.get(STATUS) == "failed":
            print(f"tpcstudy: error: {r['topology']}: {r.get(ERROR, '').splitlines()[0]}",
                  file=sys.stderr)
    return 1 if run.failed else 0

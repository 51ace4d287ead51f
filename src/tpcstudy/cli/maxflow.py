"""``tpcstudy maxflow``: the max-flow study (Figure 6 of "The TCPPathChanger").

For a random share of the ordered edge-router pairs (the heavy hitters: the few pairs carrying
most traffic), the maximum total flow with single-path ECMP (ecmp), MPTCP over ECMP
(multipath: every shortest path), Segment Routing with at most k segments (sr) and any routing
(mcf, the bound); optionally mptcp (K subflows per pair, each hashed onto ONE shortest path) and
sr+mptcp (K subflows, each on its own sr-path). One row per topology, heavy percent, seed,
model, k and K; re-running the same command resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Dict, List

from ..demands import GENERATED
from ..errors import UsageError
from ..lp import SOLVERS
from ..pairs import ROUNDINGS
from ..study.executors import executor_scope
from ..study.maxflow import (
    AGGREGATES,
    MaxflowConfig,
    format_summary,
    run_maxflow_study,
    summarize,
)
from .options import (
    RawHelp,
    add_executor_options,
    add_output_options,
    add_topology_options,
    apply_mirror,
    checked_jobs,
    next_steps,
    parse_k_list,
    parse_list,
    print_study_json,
)


def register(sub: Any) -> None:
    p = sub.add_parser("maxflow", help="max-flow study: ecmp vs multipath vs SR vs the mcf bound",
                       description=__doc__, formatter_class=RawHelp)
    add_topology_options(p)
    p.add_argument("--objective", choices=("maxflow", "mlu"), default="maxflow",
                   help="maxflow (default): the TPC study's maximum total flow of heavy-hitter "
                        "pairs; mlu: the traffic-engineering objective, the minimum maximum link "
                        "utilisation that carries a whole demand matrix (--demands auto, FILE, "
                        "gravity or uniform; models ecmp, multipath, sr, sr-unsplit, mcf; with a "
                        "file matrix --capacity and --weight default to file, the matrix's units)")
    p.add_argument("--heavy", default=None,
                   help="heavy-hitter pairs, percent of ordered edge-router pairs (default 1,5,10; "
                        "not with --objective mlu)")
    p.add_argument("--seeds", type=int, default=1,
                   help="random draws per percent (default 1); with --objective mlu, draws of a "
                        "gravity or uniform matrix")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--models", default=None,
                   help="models to solve: ecmp, multipath, sr, mcf, mptcp, sr+mptcp (default "
                        "ecmp,multipath,sr,mcf; ecmp is always added; mptcp:K names one K); with "
                        "--objective mlu: ecmp, multipath, sr, sr-unsplit (one sr-path per demand, "
                        "from the LP), mcf (default ecmp,sr,mcf)")
    p.add_argument("--subflows", default=None, metavar="K,...",
                   help="subflows per pair of mptcp and sr+mptcp, e.g. 2,4,8,32 (the default "
                        "when a subflow model has no K)")
    p.add_argument("--k", default="4", help="segment limits for sr, e.g. 4 or 2,3,4,6 or 1-6")
    p.add_argument("--solver", default="highs", choices=SOLVERS,
                   help="LP backend: highs (default), glop, pdlp (OR-Tools), pulp (CBC)")
    p.add_argument("--demands", default=None, metavar="FILE|auto|gravity|uniform",
                   help="bound each pair by a demand: a REPETITA .demands file, or 'auto' for the "
                        "NAME.*.demands next to each NAME.graph (pairs = the demand matrix); with "
                        "--objective mlu the matrix to carry (default auto; gravity or uniform: "
                        "drawn for topologies that bring none, seeded, scaled to ECMP's MLU = 1)")
    p.add_argument("--no-prune", action="store_true", help="do not prune tree parts")
    p.add_argument("--pair-order", choices=("ordered", "unordered"), default="ordered",
                   help="draw heavy hitters from ordered edge-router pairs (default, the study's "
                        "rule) or unordered ones (a variant that brackets the paper)")
    p.add_argument("--rounding", choices=ROUNDINGS, default="ceil",
                   help="heavy-hitter count: ceil(x * #pairs) (default) or round(x * #pairs) "
                        "(a variant); at least one")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds per model solve; a row over it is marked failed")
    p.add_argument("--write-lp", default=None, metavar="FILE",
                   help="write each final LP (FILE-<topology>-h<heavy>-s<seed>-<model><k>.lp)")
    p.add_argument("--failures", default="none", metavar="SPEC",
                   help="also solve every model under failures, three reactions each (none, "
                        "hosts, reoptimised; docs/method.md 4c): none (default), links (every "
                        "link of the pruned topology), links:N (a seeded sample of N), "
                        "srlg:FILE (lines 'NAME: A -- B; C -- D'), nodes (every transit "
                        "router); the folder then holds the failure rows")
    add_executor_options(p)
    p.add_argument("--out", required=True, metavar="DIR",
                   help="results folder (meta.json, results.csv); re-running resumes")
    p.add_argument("--aggregate", choices=AGGREGATES, default="topology",
                   help="the summary's medians: over topologies with each topology's seeds "
                        "averaged first (topology), or over every (topology, seed) value as the "
                        "paper's Figure 6 (pooled); the results are the same")
    add_output_options(p)
    # --capacity / --weight given or not: --objective mlu on a file matrix takes the file's own
    p.set_defaults(func=cmd_maxflow, capacity=None, weight=None)


def cmd_maxflow(args: argparse.Namespace) -> int:
    apply_mirror(args)
    if args.seeds < 1:
        raise UsageError("--seeds must be >= 1")
    if args.seed < 0:
        raise UsageError(f"--seed {args.seed}: seeds are integers >= 0")
    checked_jobs(args)
    # A REPETITA matrix is in the file's own units (kbit/s) for the file's own capacities and
    # weights: against uniform capacities of 1 every MLU would be ~1e7
    file_matrix = args.objective == "mlu" and (args.demands or "auto") not in GENERATED
    args.capacity = args.capacity or ("file" if file_matrix else "uniform")
    args.weight = args.weight or ("file" if file_matrix else "hop")
    if args.objective == "mlu":
        return cmd_mlu(args)
    config = _maxflow_config(args)
    if args.failures.strip() != "none":
        return cmd_failures(args, config)
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        run, rows = run_maxflow_study(args.topo, args.out, config, jobs=args.jobs,
                                      progress=not args.no_progress, executor=executor,
                                      overwrite=args.overwrite)
    if args.json:
        print_study_json(args.out, aggregate=args.aggregate)
    else:
        print(format_summary(summarize(rows, aggregate=args.aggregate),
                             demands=bool(config.demands)))
    skipped = {r["topology"] for r in rows if r.get("status") == "skipped"}
    return _finish(args, run, rows, t0, f"{len(skipped)} topologies skipped (< 2 edge routers), ",
                   lambda r: f"heavy {r['heavy']} seed {r['seed']} {r['model']} k {r['k']}"
                   + (f" subflows {r['subflows']}" if r.get("subflows") else ""))


def _maxflow_config(args: argparse.Namespace) -> MaxflowConfig:
    return MaxflowConfig(
        heavy=tuple(parse_list(args.heavy or "1,5,10", float, "--heavy")),
        seeds=tuple(range(args.seed, args.seed + args.seeds)),
        models=tuple(parse_list(args.models or "ecmp,multipath,sr,mcf", str, "--models")),
        ks=parse_k_list(args.k),
        subflows=tuple(parse_list(args.subflows, int, "--subflows")) if args.subflows else (),
        capacity=args.capacity, weight=args.weight, solver=args.solver, demands=args.demands,
        prune=not args.no_prune, time_limit=args.time_limit, write_lp=args.write_lp,
        links=args.links, ordered=args.pair_order == "ordered", rounding=args.rounding)


def cmd_failures(args: argparse.Namespace, base: Any) -> int:
    """``--failures SPEC``: the failure study (:mod:`tpcstudy.study.failures`) of either
    objective; ``base`` is the intact study's config."""
    from ..study import failures as study_failures

    config = study_failures.FailuresConfig(base=base, failures=args.failures.strip())
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        run, rows = study_failures.run_failures_study(
            args.topo, args.out, config, jobs=args.jobs, progress=not args.no_progress,
            executor=executor, overwrite=args.overwrite)
    if args.json:
        print_study_json(args.out)
    else:
        print(study_failures.format_summary(study_failures.summarize(rows)))
    return _finish(args, run, rows, t0, "",
                   lambda r: f"failure {r['failure']} {r['model']} k {r['k']} {r['reaction']}",
                   "(topology, failure) tasks")


def _finish(args: argparse.Namespace, run: Any, rows: List[Dict[str, Any]], t0: float,
            skipped: str, where: Callable[[Dict[str, Any]], str], unit: str = "topologies") -> int:
    """The lines after a study's summary (counts, time, next steps, failed rows); its exit."""
    failed = [r for r in rows if r.get("status") == "failed"]
    if run.report():
        print(run.report(), file=sys.stderr)
    info = sys.stderr if args.json else sys.stdout
    print(f"{run.total} {unit} ({run.skipped} reused from an earlier run), {len(rows)} rows, "
          f"{skipped}{len(failed)} failed rows; {time.perf_counter() - t0:.1f} s; results in "
          f"{run.results}", file=info)
    if len(failed) < len(rows):  # something to plot and show
        print(next_steps(args.out), file=info)
    for r in failed[:10]:
        print(f"  failed: {r['topology']} {where(r)}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


def cmd_mlu(args: argparse.Namespace) -> int:
    """``--objective mlu``: the traffic-engineering study (:mod:`tpcstudy.study.mlu`)."""
    from ..study import mlu as study_mlu

    for flag, given in (("--heavy", args.heavy), ("--pair-order", args.pair_order != "ordered"),
                        ("--rounding", args.rounding != "ceil"), ("--subflows", args.subflows),
                        ("--write-lp", args.write_lp), ("--no-prune", args.no_prune),
                        ("--time-limit", args.time_limit is not None)):
        if given:
            raise UsageError(f"{flag} is not an option of --objective mlu (a whole demand matrix "
                             "on the unpruned topology)")
    config = study_mlu.MLUConfig(models=tuple(parse_list(args.models or "ecmp,sr,mcf", str, "--models")),
                       ks=parse_k_list(args.k), demands=args.demands or "auto",
                       seeds=tuple(range(args.seed, args.seed + args.seeds)),
                       capacity=args.capacity, weight=args.weight, links=args.links,
                       solver=args.solver)
    if args.failures.strip() != "none":
        return cmd_failures(args, config)
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        run, rows = study_mlu.run_mlu_study(args.topo, args.out, config, jobs=args.jobs,
                                  progress=not args.no_progress, executor=executor,
                                  overwrite=args.overwrite)
    if args.json:
        print_study_json(args.out, aggregate=args.aggregate)
    else:
        print(study_mlu.format_summary(study_mlu.summarize(rows)))
    return _finish(args, run, rows, t0, "",
                   lambda r: f"seed {r['seed']} {r['model']} k {r['k']}")

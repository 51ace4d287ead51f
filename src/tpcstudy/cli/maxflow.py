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
import math
import time
from typing import Any, Dict, Sequence

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
from ..study.store import cell_number
from .options import (
    RawHelp,
    add_executor_options,
    add_out_option,
    add_output_options,
    add_topology_options,
    apply_mirror,
    checked_jobs,
    checked_seeds,
    finish_study,
    parse_k_list,
    parse_list,
    print_study_json,
    resolve_out,
)


def register(sub: Any) -> None:
    p = sub.add_parser("maxflow", help="max-flow study: ecmp vs multipath vs SR vs the mcf bound",
                       description=__doc__, formatter_class=RawHelp)
    add_topology_options(p)
    p.add_argument("--objective", choices=("maxflow", "mlu"), default="maxflow",
                   help="maxflow (default): the TPC study's maximum total flow of heavy-hitter "
                        "pairs; mlu: the older spelling of 'tpcstudy mlu' (the minimum maximum "
                        "link utilisation of a whole demand matrix; see its --help)")
    p.add_argument("--heavy", default=None,
                   help="heavy-hitter pairs, percent of ordered edge-router pairs (default "
                        "1,5,10)")
    p.add_argument("--seeds", type=int, default=1,
                   help="random draws per percent (default 1)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--models", default=None,
                   help="models to solve: ecmp, multipath, sr, mcf, mptcp, sr+mptcp (default "
                        "ecmp,multipath,sr,mcf; ecmp is always added; mptcp:K names one K)")
    p.add_argument("--subflows", default=None, metavar="K,...",
                   help="subflows per pair of mptcp and sr+mptcp, e.g. 2,4,8,32 (the default "
                        "when a subflow model has no K)")
    p.add_argument("--k", default="4", help="segment limits for sr, e.g. 4 or 2,3,4,6 or 1-6")
    p.add_argument("--solver", default="highs", choices=SOLVERS,
                   help="LP backend: highs (default), glop, pdlp (OR-Tools), pulp (CBC)")
    p.add_argument("--demands", default=None, metavar="FILE|auto|gravity|uniform",
                   help="bound each pair by a demand: a REPETITA .demands file, or 'auto' for the "
                        "NAME.*.demands next to each NAME.graph (pairs = the demand matrix)")
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
    add_out_option(p, "maxflow")
    p.add_argument("--aggregate", choices=AGGREGATES, default="topology",
                   help="the summary's medians: over topologies with each topology's seeds "
                        "averaged first (topology), or over every (topology, seed) value as the "
                        "paper's Figure 6 (pooled); the results are the same")
    add_output_options(p)
    # --capacity / --weight given or not: --objective mlu on a file matrix takes the file's own
    p.set_defaults(func=cmd_maxflow, capacity=None, weight=None)


def cmd_maxflow(args: argparse.Namespace) -> int:
    apply_mirror(args)
    checked_seeds(args.seeds, args.seed)
    if args.objective == "mlu":
        return _mlu_alias(args)
    checked_jobs(args)
    resolve_out(args, "maxflow")
    args.capacity = args.capacity or "uniform"
    args.weight = args.weight or "hop"
    config = MaxflowConfig(
        heavy=tuple(parse_list(args.heavy or "1,5,10", float, "--heavy")),
        seeds=tuple(range(args.seed, args.seed + args.seeds)),
        models=tuple(parse_list(args.models or "ecmp,multipath,sr,mcf", str, "--models")),
        ks=parse_k_list(args.k),
        subflows=tuple(parse_list(args.subflows, int, "--subflows")) if args.subflows else (),
        capacity=args.capacity, weight=args.weight, solver=args.solver, demands=args.demands,
        prune=not args.no_prune, time_limit=args.time_limit, write_lp=args.write_lp,
        links=args.links, ordered=args.pair_order == "ordered", rounding=args.rounding)
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
    if not args.json and len({r["topology"] for r in rows}) <= INSTANCE_LINES:
        print(format_instances(rows))
    return finish_study(args, run, rows, t0, f"{len(skipped)} topologies skipped (< 2 edge routers), ",
                   lambda r: f"heavy {r['heavy']} seed {r['seed']} {r['model']} k {r['k']}"
                   + (f" subflows {r['subflows']}" if r.get("subflows") else ""))


def cmd_failures(args: argparse.Namespace, base: Any) -> int:
    """``--failures SPEC``: the failure study (:mod:`tpcstudy.study.failures`) of either
    objective (``tpcstudy maxflow`` and ``tpcstudy mlu``); ``base`` is the intact study's
    config."""
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
    return finish_study(args, run, rows, t0, "",
                        lambda r: f"failure {r['failure']} {r['model']} k {r['k']} {r['reaction']}",
                        unit="(topology, failure) tasks")


def _mlu_alias(args: argparse.Namespace) -> int:
    """``--objective mlu``: the older spelling of ``tpcstudy mlu`` (:mod:`tpcstudy.cli.mlu`)."""
    from .mlu import cmd_mlu

    for flag, given in (("--heavy", args.heavy), ("--pair-order", args.pair_order != "ordered"),
                        ("--rounding", args.rounding != "ceil"), ("--subflows", args.subflows),
                        ("--write-lp", args.write_lp), ("--no-prune", args.no_prune),
                        ("--time-limit", args.time_limit is not None)):
        if given:
            raise UsageError(f"{flag} is not an option of --objective mlu (a whole demand matrix "
                             "on the unpruned topology; see tpcstudy mlu --help)")
    args.demands = args.demands or "auto"
    args.capacity = args.capacity or "auto"
    args.weight = args.weight or "auto"
    return cmd_mlu(args)


#: Up to this many topologies, the study also prints one line per instance.
INSTANCE_LINES = 12


def format_instances(rows: Sequence[Dict[str, Any]]) -> str:
    """One line per (topology, heavy, seed, model, k, subflows): the total flow, its gain over
    ECMP's (percent), the time and the status."""
    lines = [f"{'topology':<22} {'heavy %':>7} {'seed':>4} {'model':>14} {'flow':>10} "
             f"{'vs ecmp':>8} {'seconds':>8}  status"]
    models = ("ecmp", "multipath", "sr", "mcf", "mptcp", "sr+mptcp")
    for r in sorted(rows, key=lambda r: (str(r["topology"]), cell_number(r.get("heavy")) or 0,
                                         cell_number(r.get("seed")) or 0,
                                         models.index(r["model"]) if r["model"] in models else 9,
                                         cell_number(r.get("k")) or 0,
                                         cell_number(r.get("subflows")) or 0)):
        k = cell_number(r.get("k"))
        series = str(r["model"]) + (f" k={int(k)}" if k is not None
                                    and str(r["model"]).startswith("sr") else "") \
            + (f" K={r['subflows']}" if r.get("subflows") else "")
        value, gain = cell_number(r.get("value")), cell_number(r.get("improvement"))
        sec = cell_number(r.get("seconds"))
        status = str(r.get("status") or "ok")
        if status != "ok" and r.get("error"):
            status += ": " + str(r["error"]).splitlines()[0][:80]
        gain_text = f"{gain:+.1f} %" if gain is not None and math.isfinite(gain) \
            and r["model"] != "ecmp" else ""
        lines.append(f"{str(r['topology'])[:22]:<22} {str(r.get('heavy', '')):>7} "
                     f"{str(r.get('seed', '')):>4} {series[:14]:>14} "
                     f"{'-' if value is None else format(value, '.4g'):>10} {gain_text:>8} "
                     f"{'-' if sec is None else format(sec, '.2f'):>8}  {status}")
    return "\n".join(lines)

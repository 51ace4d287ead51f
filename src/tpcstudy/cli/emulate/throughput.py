"""``tpcstudy emulate [throughput]``: real TCP on each model's LP solution, against the LP."""

from __future__ import annotations

import argparse
from typing import Any, List

from ...errors import UsageError
from ..options import RawHelp, apply_mirror, parse_list
from .common import (
    add_agent,
    add_draws,
    add_dry_run,
    add_network,
    add_output,
    add_solver,
    add_topology,
    at_least,
    dry_run,
    heavy_of,
    non_negative,
    positive,
    run,
    seeds_of,
)

HELP = "real TCP per model (ecmp, sr, multipath, mptcp:K) on the LP's paths, against the LP"
DESCRIPTION = """\
Real TCP on the paths of each model's max-flow solution, against the LP value of the same pairs:
--topo T (heavy pairs drawn as 'tpcstudy maxflow' draws them) or --scenario six-paths (the TPC
paper's Figure 4). Per model, the LP solution (balanced across pairs when that keeps the
optimum), --connections TCP connections per pair on its paths, the receivers' goodput over the
window in link units, and the payload ceiling of the frames."""


def register(sub: Any) -> None:
    p = sub.add_parser("throughput", help=HELP, description=DESCRIPTION,
                       formatter_class=RawHelp)
    add_topology(p)
    p.add_argument("--scenario", choices=["six-paths"],
                   help="a hand-made network instead of --topo: six-paths is the TPC paper's "
                        "Figure 4 (6 disjoint paths, the IGP forcing one, 4 clients x 4 "
                        "connections)")
    add_draws(p)
    m = p.add_argument_group("models")
    m.add_argument("--models", default="ecmp,sr",
                   help="ecmp, sr, multipath, mptcp:K (real MPTCP, one connection of K = 1..8 "
                        "subflows per pair, against the analytic mptcp:K value), or mptcp with "
                        "--subflows (default ecmp,sr)")
    m.add_argument("--subflows", default="2,4,8",
                   help="the K of --models mptcp (default 2,4,8)")
    m.add_argument("--k", type=at_least(1, 9), default=4, help="segment limit of sr (default 4)")
    m.add_argument("--connections", type=at_least(1), default=None,
                   help="TCP connections per pair (default 8, fewer when the fair share of a "
                        "connection would be under 4 frames per round trip or the run over "
                        "4,000 connections; six-paths: 4)")
    m.add_argument("--seconds", type=positive(), default=None,
                   help="measured window, s (default: 40 round trips of the longest path "
                        "placed, 10 to 120)")
    m.add_argument("--warmup", type=non_negative(), default=None,
                   help="seconds before the window (default: 20 round trips and 1 s per "
                        "thousand connections, 3 to 60)")
    add_solver(m)
    add_agent(m, "the LP's paths by weighted round robin")
    add_network(p, auto=True)
    add_dry_run(p)
    add_output(p)
    p.set_defaults(func=cmd)


def models_of(args: argparse.Namespace) -> List[str]:
    models: List[str] = []
    for m in (m.strip() for m in args.models.split(",")):
        if m == "mptcp":  # as in maxflow: one mptcp:K per --subflows value
            models += [f"mptcp:{k}" for k in parse_list(args.subflows, int, "--subflows")]
        elif m:
            models.append(m)
    if not models:
        raise UsageError("--models: give at least one model")
    return list(dict.fromkeys(models))


def cmd(args: argparse.Namespace) -> int:
    from ...emulate.experiments.harness import read_plan_file, topology_units
    from ...emulate.experiments.throughput import Throughput, ThroughputSettings

    apply_mirror(args)
    plan = read_plan_file(args.plan)
    if args.dry_run:
        return dry_run(args, [(n, t, p) for n, t, p, _ in topology_units(
            args.topo, capacity=args.capacity, weight=args.weight, plan=plan,
            scenario_name=args.scenario, need_edges=False)])
    st = ThroughputSettings(models=tuple(models_of(args)), k=args.k,
                            per_pair=args.connections or 0, warmup=args.warmup,
                            seconds=args.seconds, solver=args.solver, agent=args.agent)
    exp = Throughput(topo=args.topo, scenario_name=args.scenario, capacity=args.capacity,
                     weight=args.weight, plan=args.plan, plan_obj=plan, heavy=heavy_of(args),
                     seeds=seeds_of(args), settings=st)
    return run(exp, args)

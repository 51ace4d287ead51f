"""``tpcstudy emulate failures``: one link of the LP's busiest cut under live TCP through the
BPF host agents; reactions none, hosts (IGP + NRTOChanger), controller (IGP + tpcstudy control)."""

from __future__ import annotations

import argparse
from typing import Any

from ...errors import UsageError
from ...hostagent.maps import ON_UPDATE
from ..options import RawHelp, add_controller_options, apply_mirror
from .common import add_network, add_output, add_topology, at_least, log, positive, run

HELP = "a link fails under live TCP: no reaction, the hosts' NRTOChanger, the controller"
DESCRIPTION = """\
The heavy pairs' (or --scenario's) sr max-flow LP placed as TCP connections through the BPF
host agent of every source router; --at s after the connects one link goes down (--cut A,B,
default the LP's most utilised link). Each reaction in its own draws: none (only TCP), hosts
(IGP re-convergence after --igp-delay and the agents' NRTOChanger), controller (IGP
re-convergence and the controller pushing the reoptimised tables). Per connection the recovery
time and whether it survived; goodput over time beside the intact LP and the reoptimised LP
of the failed graph, and the payload share of the wire bytes the MTU and the SRHs leave (the
ceiling of goodput over an LP that counts wire bytes)."""


def register(sub: Any) -> None:
    p = sub.add_parser("failures", help=HELP, description=DESCRIPTION, formatter_class=RawHelp)
    add_topology(p)
    p.add_argument("--scenario", choices=["six-paths"],
                   help="a hand-made network instead of --topo: six-paths is the TPC paper's "
                        "Figure 4 (6 disjoint paths, the IGP forcing one; 4 clients, 4 "
                        "connections each)")
    f = p.add_argument_group("failures")
    f.add_argument("--heavy", type=positive(), default=20.0,
                   help="heavy pairs, percent of the edge-router pairs (default 20)")
    f.add_argument("--seed", type=at_least(0), default=0, help="pairs' seed (default 0)")
    f.add_argument("--cut", default=None, metavar="A,B",
                   help="the link cut (default: the LP solution's most utilised link not "
                        "leaving a source router)")
    f.add_argument("--at", type=positive(), default=3.0,
                   help="seconds after the connects when the link goes down (default 3)")
    f.add_argument("--observe", type=positive(), default=6.0,
                   help="seconds measured after the cut (default 6)")
    f.add_argument("--reactions", default="none,hosts,controller",
                   help="comma-separated, each in its own draws (default none,hosts,controller)")
    f.add_argument("--rto-count", type=at_least(1), default=1,
                   help="the hosts reaction's NRTOChanger N (default 1)")
    f.add_argument("--gap-ms", type=positive(), default=100.0,
                   help="a stall at least this long after the cut marks a hit connection "
                        "(default 100)")
    f.add_argument("--hit-within", type=positive(), default=0.5, metavar="SECONDS",
                   help="a connection is hit by the cut when its stall begins at most this long "
                        "after it; a later stall is congestion, not counted (default 0.5: the "
                        "queues downstream of the cut drain within it)")
    f.add_argument("--connections", type=at_least(1), default=None,
                   help="TCP connections per pair the LP serves (default 2; six-paths: 4)")
    f.add_argument("--on-update", default="rehash", choices=tuple(ON_UPDATE),
                   help="the controller's pushes: a connection whose path the new table removed "
                        "moves at once to a path drawn by the new weights (rehash, default), to "
                        "its entry's first valid path (repath), or at its next RTO (keep)")
    f.add_argument("--rto-min-ms", type=float, default=None, metavar="MS",
                   help="every host agent's minimum RTO (agent load --rto-min-ms, 1 to 200 ms) "
                        "on every connection, in every reaction (default: unset, the kernel's "
                        "200 ms)")
    f.add_argument("--controller-rto-count", type=at_least(0), default=1, metavar="N",
                   help="the controller reaction's agents also run NRTOChanger: a connection "
                        "moves to its entry's next path after N RTOs, as a deployed agent does "
                        "beside its controller (default 1; 0: the controller's pushes alone)")
    add_controller_options(f)
    f.add_argument("--controller-scope", default="affected", choices=("affected", "all"),
                   help="the entries the controller replaces: those whose paths cross a down "
                        "link (affected, default) or every entry, the reoptimised LP's split of "
                        "every pair (all)")
    add_network(p)
    add_output(p)
    p.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    from ...emulate.experiments.failures import Failures, FailuresSettings

    apply_mirror(args)
    if bool(args.topo) == bool(args.scenario):
        raise UsageError("failures needs --topo or --scenario (one of them)")
    per_pair = args.connections
    if per_pair is None:
        from ...emulate.network.handmade import scenario

        per_pair = scenario(args.scenario).connections_per_pair if args.scenario else 2
    cut = None
    if args.cut:
        parts = [x.strip() for x in args.cut.split(",")]
        if len(parts) != 2 or not all(parts):
            raise UsageError(f"--cut {args.cut!r}: two router names, A,B")
        cut = (parts[0], parts[1])
    st = FailuresSettings(reactions=tuple(x.strip() for x in args.reactions.split(",")),
                          cut=cut, at=args.at, observe=args.observe, igp_delay=args.igp_delay,
                          rto_count=args.rto_count, gap_ms=args.gap_ms,
                          hit_within=args.hit_within,
                          per_pair=per_pair, on_update=args.on_update,
                          controller_at=args.controller_at,
                          controller_scope=args.controller_scope,
                          controller_rto_count=args.controller_rto_count,
                          rto_min_ms=args.rto_min_ms)
    exp = Failures(topo=args.topo, capacity=args.capacity, weight=args.weight, plan=args.plan,
                   heavy=args.heavy, seed=args.seed, settings=st, scenario_name=args.scenario,
                   log=log)
    return run(exp, args, bpftool=True)

"""``tpcstudy emulate failover``: a link of live connections fails; NRTOChanger(N),
TimeoutChanger(T) and plain TCP recover."""

from __future__ import annotations

import argparse
from typing import Any

from ...errors import UsageError
from ..options import RawHelp, apply_mirror
from .common import add_agent, add_network, add_output, add_topology, at_least, log, positive, run

HELP = "a link of a live connection fails: NRTOChanger, TimeoutChanger and plain TCP recover"
DESCRIPTION = """\
Each run picks (seeded) an entry of the topology's path table with a backup and a link every
packet of its default path crosses; three paced connections (plain, NRTOChanger(N),
TimeoutChanger(T)) start on the default path, the link drops everything after --fail-after s
and comes back --restore-after s later. Recovery = first data after the stall - failure time."""


def register(sub: Any) -> None:
    p = sub.add_parser("failover", help=HELP, description=DESCRIPTION,
                       formatter_class=RawHelp)
    add_topology(p)
    f = p.add_argument_group("failover")
    f.add_argument("--runs", type=at_least(1), default=20, help="runs (default 20)")
    f.add_argument("--seed", type=at_least(0), default=0,
                   help="seed of the entries and links chosen (default 0)")
    f.add_argument("--rto-count", type=at_least(1), default=3,
                   help="NRTOChanger's N (default 3)")
    f.add_argument("--timeout-ms", type=positive(), default=100.0,
                   help="TimeoutChanger's T in ms (default 100)")
    f.add_argument("--fail-after", type=positive(), default=2.0,
                   help="seconds before the failure (default 2)")
    f.add_argument("--restore-after", type=positive(), default=5.0,
                   help="seconds the link stays down (plain TCP recovers only then; default 5)")
    f.add_argument("--observe", type=positive(), default=8.0,
                   help="seconds after the failure (default 8)")
    f.add_argument("--pacing", type=positive(), default=0.25,
                   help="each connection's pacing rate as a share of the link rate (default "
                        "0.25; the connections together offer 3 x this: with --agent bpf the "
                        "four get 3/4 of it each)")
    f.add_argument("--k", type=at_least(1, 9), default=4,
                   help="segment limit of the table's backup paths (default 4)")
    f.add_argument("--paths", type=at_least(2, 8), default=5,
                   help="paths per destination in the table, slot 0 included (default 5)")
    add_agent(f, "a fourth connection whose agent moves it in the kernel, nrto-bpf")
    add_network(p)
    add_output(p)
    p.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    from ...emulate.experiments.failover import Failover, FailoverSettings

    apply_mirror(args)
    if not args.topo:
        raise UsageError("failover needs --topo (a topology whose path table has backups)")
    st = FailoverSettings(runs=args.runs, n=args.rto_count, t_ms=args.timeout_ms,
                          fail_after=args.fail_after, restore_after=args.restore_after,
                          observe=args.observe, pacing=args.pacing, k=args.k, paths=args.paths,
                          agent=args.agent)
    exp = Failover(topo=args.topo, capacity=args.capacity, weight=args.weight, plan=args.plan,
                   settings=st, seed=args.seed, log=log)
    return run(exp, args)

"""``tpcstudy emulate verify``: does an exported path table route, do its maps load?"""

from __future__ import annotations

import argparse
from typing import Any

from ...errors import UsageError
from ..options import RawHelp, apply_mirror
from .common import add_agent, add_dry_run, add_network, add_output, add_topology, at_least, dry_run, run

HELP = "probe every path of an exported table on its links and load its bpf maps"
DESCRIPTION = """\
Build the topology with the table's own addressing plan; probe every path of every entry (UDP
datagrams with the slot's exact SRH from the source's host address; a path passes when every
datagram arrives and the per-link counters moved only on its segments' ECMP DAGs); load every
bpf batch file into a real kernel map of the agent's shape in a private bpffs and compare the
dump byte for byte."""


def register(sub: Any) -> None:
    p = sub.add_parser("verify", help=HELP, description=DESCRIPTION,
                       formatter_class=RawHelp)
    add_topology(p, plan=False)
    p.add_argument("--table", metavar="DIR", required=True,
                   help="a folder written by 'tpcstudy export'")
    p.add_argument("--probes", type=at_least(1, 64), default=8,
                   help="datagrams per path, 1 to 64 (default 8)")
    add_agent(p, "each path probed with a TCP connection, the agent set to its slot")
    add_network(p)
    add_dry_run(p)
    add_output(p, plot=False)
    p.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    from ...emulate.experiments.verify import Verify

    apply_mirror(args)
    if not args.topo:
        raise UsageError("verify needs --topo T (the topology the table was exported from)")
    exp = Verify(topo=args.topo, table=args.table, capacity=args.capacity, weight=args.weight,
                 probes=args.probes, agent=args.agent)
    if args.dry_run:
        return dry_run(args, [(exp.topology.name, exp.topology, exp.plan)])
    rc = run(exp, args, bpftool=True)
    return 1 if rc or exp.problems else 0

"""``tpcstudy emulate dumbbell`` and ``fault``: SEMPER's experiments with the kernel's MPTCP."""

from __future__ import annotations

import argparse
from typing import Any

from ..options import RawHelp, parse_list
from .common import add_network, add_output, at_least, non_negative, positive, run

DUMBBELL_HELP = ("SEMPER's dumbbell with real MPTCP: throughput and Jain against K beside the "
                 "mptcp:K model")
DUMBBELL = """\
SEMPER's dumbbell: P equal-cost paths between A and B, --hosts clients behind A each sending
one MPTCP connection of K subflows to a server behind B. For every P, K and seed (a network
built for each): total goodput in paths and Jain's index over the hosts, subflows joined, each
path's use, beside the analytic mptcp:K model's value and the LP's (P)."""
FAULT_HELP = ("SEMPER's fault test: path 1 fails mid-run; MPTCP against TCP with the TPC "
              "TimeoutChanger")
FAULT = """\
SEMPER's fault test: a dumbbell of --equal-paths paths, path 1's first hop drops everything
after --fail-after s. Per 1 s window, total goodput and Jain's index over the hosts for MPTCP
with K subflows against single-path TCP pinned by SRH (host i on path i) with the TPC agent's
TimeoutChanger (move after --timeout-ms without progress)."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=at_least(0), default=0,
                   help="first seed of the routers' ECMP hash (default 0)")
    p.add_argument("--seeds", type=at_least(1), default=1, help="seeds (default 1)")
    add_network(p)
    add_output(p)


def register(sub: Any) -> None:
    d = sub.add_parser("dumbbell", help=DUMBBELL_HELP, description=DUMBBELL,
                       formatter_class=RawHelp)
    d.add_argument("--equal-paths", default="2,4,8", metavar="P,...",
                   help="equal-cost paths P between A and B (default 2,4,8)")
    d.add_argument("--subflows", default="1,2,4,8", metavar="K,...",
                   help="subflows K per connection, 1 to 8 (default 1,2,4,8)")
    d.add_argument("--hosts", type=at_least(1, 64), default=4,
                   help="client/server pairs (default 4)")
    d.add_argument("--seconds", type=positive(), default=10.0,
                   help="measured window, s (default 10)")
    d.add_argument("--warmup", type=non_negative(), default=3.0,
                   help="seconds before the window (default 3)")
    _common(d)
    d.set_defaults(func=cmd_dumbbell)
    f = sub.add_parser("fault", help=FAULT_HELP, description=FAULT,
                       formatter_class=RawHelp)
    f.add_argument("--equal-paths", type=at_least(2, 64), default=3,
                   help="equal-cost paths between A and B, path 1 fails (default 3)")
    f.add_argument("--subflows", type=at_least(1, 8), default=4,
                   help="MPTCP subflows per connection (default 4)")
    f.add_argument("--hosts", type=at_least(1, 64), default=3,
                   help="client/server pairs (default 3)")
    f.add_argument("--timeout-ms", type=positive(), default=100.0,
                   help="TimeoutChanger's T in ms (default 100)")
    f.add_argument("--fail-after", type=positive(), default=5.0,
                   help="seconds before path 1 fails (default 5)")
    f.add_argument("--observe", type=positive(), default=10.0,
                   help="seconds after the failure (default 10)")
    _common(f)
    f.set_defaults(func=cmd_fault)


def _seeds(args: argparse.Namespace) -> Any:
    return list(range(args.seed, args.seed + args.seeds))


def cmd_dumbbell(args: argparse.Namespace) -> int:
    from ...emulate.experiments.semper import Dumbbell

    exp = Dumbbell(paths=parse_list(args.equal_paths, int, "--equal-paths"),
                   subflows=parse_list(args.subflows, int, "--subflows"), hosts=args.hosts,
                   seeds=_seeds(args), seconds=args.seconds, warmup=args.warmup)
    return run(exp, args)


def cmd_fault(args: argparse.Namespace) -> int:
    from ...emulate.experiments.semper import Fault

    exp = Fault(paths=args.equal_paths, hosts=args.hosts, subflows=args.subflows,
                timeout_ms=args.timeout_ms, fail_after=args.fail_after, observe=args.observe,
                seeds=_seeds(args))
    return run(exp, args)

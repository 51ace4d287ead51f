"""``tpcstudy agent``: the BPF host agent on a real host (:mod:`tpcstudy.hostagent`).

Loads an exported path table (``tpcstudy export --format bpf``) for one host into the kernel so
that every TCP connection of the processes in a cgroup takes its table's paths, on a stock
Linux >= 6.1: no patched kernel, no change to the programs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import UsageError
from .options import RawHelp

DESCRIPTION = """\
The exported path table of one host, used by the TCP connections of the processes in a cgroup
v2, on a stock Linux >= 6.1. A sockops program picks each connection's path when it opens (the
policy below) and, where the kernel refuses a per-socket SRH (mainline), keeps it for a tc
egress program that inserts it into every packet and routes the packet to its first segment.

  tpcstudy agent check                                   what this machine lacks
  tpcstudy agent load --table DIR --host NAME --cgroup PATH [--policy P] [--nrto N]
  tpcstudy agent status [NAME] [--json]                  counters, connections per path
  tpcstudy agent unload NAME                             removes exactly what load created
"""


def register(sub: Any) -> None:
    p = sub.add_parser("agent", help="load an exported path table into this host's kernel "
                                     "(BPF host agent, stock Linux >= 6.1)",
                       description=DESCRIPTION,
                       formatter_class=RawHelp)
    acts = p.add_subparsers(dest="agent_action", metavar="ACTION")
    acts.required = True
    c = acts.add_parser("check", help="what this machine has and lacks")
    c.set_defaults(func=cmd_check)
    ld = acts.add_parser("load", help="load a host's table and attach the programs")
    ld.add_argument("--table", required=True, metavar="DIR",
                    help="a folder written by 'tpcstudy export --format bpf'")
    ld.add_argument("--host", required=True, help="the source router this host is")
    ld.add_argument("--cgroup", required=True, metavar="PATH",
                    help="cgroup v2 of the processes whose connections use the table (a folder "
                         "under /sys/fs/cgroup, or relative to it; created if missing)")
    ld.add_argument("--policy", default="first",
                    help="first (the default path, slot 0), slot:N, weighted[:GAMMA] (a draw "
                         "by the entry's weights, EXP3's Gamma), wrr (weighted round robin) "
                         "(default first)")
    ld.add_argument("--nrto", type=int, default=0, metavar="N",
                    help="NRTOChanger: move a connection to the next valid path at its N-th "
                         "consecutive RTO (default 0: off)")
    ld.add_argument("--netns", default=None, help="the host's named network namespace, if any")
    ld.add_argument("--interfaces", default=None, metavar="IF,...",
                    help="egress interfaces (default: every interface that is up but lo)")
    ld.add_argument("--mtu", type=int, default=None,
                    help="MTU the SRH room is computed from (default: the interfaces')")
    ld.add_argument("--name", default=None, help="the install's name (default: the host)")
    ld.set_defaults(func=cmd_load)
    st = acts.add_parser("status", help="counters and connections per destination and path")
    st.add_argument("name", nargs="?", help="an install (default: every one)")
    st.add_argument("--json", action="store_true", help="one JSON object")
    st.set_defaults(func=cmd_status)
    un = acts.add_parser("unload", help="remove exactly what load created")
    un.add_argument("name")
    un.set_defaults(func=cmd_unload)


def cmd_check(args: argparse.Namespace) -> int:
    from ..hostagent.loader import check

    res = check()
    width = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:>{width}}: {v}")
    return 0 if all(v.startswith("ok") for v in res.values()) else 1


def cmd_load(args: argparse.Namespace) -> int:
    from ..hostagent import loader
    from ..hostagent.maps import parse_slot_policy

    policy = parse_slot_policy(args.policy, nrto=args.nrto)
    name = args.name or args.host.replace(" ", "_")
    if name in loader.saved_names():
        raise UsageError(f"an agent named {name!r} is loaded already: unload it first, or "
                         f"give --name")
    ifaces = [x.strip() for x in args.interfaces.split(",") if x.strip()] if args.interfaces \
        else None
    inst = loader.load(args.table, args.host, args.cgroup, policy=policy, netns=args.netns,
                       interfaces=ifaces, mtu=args.mtu, name=name)
    path = loader.save(inst)
    print(f"{inst.name}: {inst.entries} destinations ({inst.variant}, {inst.value_size}-byte "
          f"values) for {inst.host}; policy {inst.policy}; sockops on {inst.cgroup}; tc egress "
          f"on {', '.join(inst.interfaces)}{' in ' + inst.netns if inst.netns else ''}; "
          f"MTU {inst.mtu}")
    print(f"record: {path}; remove with: tpcstudy agent unload {inst.name}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from ..hostagent import loader

    names = [args.name] if args.name else loader.saved_names()
    out = {}
    for n in names:
        inst = loader.read_saved(n)
        out[n] = dict(loader.status(inst), host=inst.host, policy=inst.policy,
                      cgroup=inst.cgroup)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    if not out:
        print("no agent loaded")
    for n, s in out.items():
        c = s["counters"]
        print(f"{n} ({s['host']}, {s['entries']} destinations, policy {s['policy']}): "
              + ", ".join(f"{k} {v}" for k, v in c.items() if v))
        for prefix, slot, count in s["slots"]:
            print(f"  {prefix} slot {slot}: {count} connections")
    return 0


def cmd_unload(args: argparse.Namespace) -> int:
    from ..hostagent import loader

    inst = loader.read_saved(args.name)
    done = loader.unload(inst)
    loader.forget(inst.name)
    print(f"{inst.name}: removed " + (", ".join(done) if done else "nothing (already gone)"))
    return 0

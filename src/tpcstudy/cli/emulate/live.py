"""``tpcstudy emulate up | exec | watch | inspect | pingall | list | down``: a live emulated
network for your own programs (:mod:`tpcstudy.emulate.network.live`). ``inspect`` follows
containerlab's ``inspect`` (a table of the nodes and their addresses), ``pingall`` Mininet's
(every host pair, one echo each, a matrix and the share dropped)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

from ...errors import UsageError
from ..options import apply_mirror
from .common import add_network, add_topology, at_least, log, positive


def register(sub: Any) -> None:
    u = sub.add_parser("up", help="build a network and leave it up for your own programs",
                       description="Build --topo's network (the same builder as every run), "
                                   "give every router a cgroup, install an exported table if "
                                   "asked, print its routers, and leave it up until "
                                   "'tpcstudy emulate down NAME'.")
    add_topology(u)
    u.add_argument("--name", required=True, help="the network's name (exec, watch, down)")
    u.add_argument("--table", metavar="DIR", default=None,
                   help="a folder written by 'tpcstudy export' (its plan addresses the network)")
    u.add_argument("--install", choices=("route", "bpf"), default=None,
                   help="route: each source router's chosen slot as static SRv6 routes (every "
                        "program uses them); bpf: tpcstudy's BPF host agent on each source "
                        "router (per TCP connection, programs in the host's cgroup)")
    u.add_argument("--slot", type=at_least(0, 7), default=0,
                   help="the slot installed (default 0: the default path)")
    u.add_argument("--policy", default=None,
                   help="with --install bpf: the agents' slot policy, as 'agent load --policy' "
                        "(first, slot:N, weighted[:GAMMA], wrr; default slot:--slot)")
    u.add_argument("--nrto", type=at_least(0), default=0, metavar="N",
                   help="with --install bpf: the agents' NRTOChanger, a connection moves to the "
                        "next valid path at its N-th consecutive RTO (default 0: off)")
    u.add_argument("--seed", type=at_least(0), default=0, help="ECMP hash seed (default 0)")
    add_network(u)
    u.set_defaults(func=cmd_up)
    e = sub.add_parser("exec", help="run a command as a process of one router's host",
                       description="Run CMD in ROUTER's host (its namespace and cgroup) of the "
                                   "network NAME; stdin, stdout and the exit status pass "
                                   "through.")
    e.add_argument("name")
    e.add_argument("router", help="a router name or id")
    e.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    e.set_defaults(func=cmd_exec)
    w = sub.add_parser("watch", help="live per-link utilisation of a network that is up",
                       description="Per link direction: Mbit/s and share of its shaped rate, "
                                   "busiest first, every --interval; totals on exit (Ctrl-C).")
    w.add_argument("name")
    w.add_argument("--interval", type=positive(), default=1.0, help="seconds (default 1)")
    w.add_argument("--count", type=at_least(1), default=None,
                   help="stop after this many intervals (default: until Ctrl-C)")
    w.add_argument("--json", action="store_true", help="one JSON line per interval")
    w.add_argument("--top", type=at_least(1), default=15,
                   help="links shown per interval (default 15)")
    w.set_defaults(func=cmd_watch)
    ins = sub.add_parser("inspect", help="routers, addresses and links of a network that is up",
                         description="Per router of the network NAME: its namespace and state, "
                                     "loopback (the SID the table's segments name), host "
                                     "address and links with their shaped rates; the table "
                                     "installed (as containerlab inspect shows a lab).")
    ins.add_argument("name")
    ins.add_argument("--json", action="store_true", help="one JSON object")
    ins.set_defaults(func=cmd_inspect)
    pa = sub.add_parser("pingall", help="every host pair of a network that is up, one ping each",
                        description="From every router's host to every other one: one ICMPv6 "
                                    "echo, sent as the host sends it, so over the table "
                                    "installed with --install route (the BPF agent steers TCP "
                                    "only: its echoes take the IGP's routes). Prints Mininet's "
                                    "matrix (X: no reply) and the share dropped; exit 1 when "
                                    "any is.")
    pa.add_argument("name")
    pa.add_argument("--timeout", type=positive(), default=2.0,
                    help="seconds to wait for the replies of one host (default 2)")
    pa.add_argument("--json", action="store_true", help="one JSON object")
    pa.set_defaults(func=cmd_pingall)
    li = sub.add_parser("list", help="the networks that are up")
    li.set_defaults(func=cmd_list)
    d = sub.add_parser("down", help="remove a network that is up (exactly it)")
    d.add_argument("name")
    d.set_defaults(func=cmd_down)


def cmd_up(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ...emulate.experiments.harness import read_plan_file, topology_units
    from ...emulate.network import checks
    from ...emulate.network.live import up
    from ...export.addressing import read_plan

    apply_mirror(args)
    if not args.topo:
        raise UsageError("up needs --topo")
    policy = None
    if args.install == "bpf":
        from ...hostagent.maps import parse_slot_policy

        policy = parse_slot_policy(args.policy or f"slot:{args.slot}", nrto=args.nrto)
    elif args.policy is not None or args.nrto:
        raise UsageError("--policy and --nrto choose the BPF agents' slots: give --install bpf")
    plan = read_plan_file(args.plan)
    if args.table and plan is None:
        plan = read_plan(Path(args.table) / "plan.json")
    nets = list(topology_units(args.topo, capacity=args.capacity, weight=args.weight,
                               plan=plan, need_edges=False, log=log))
    if len(nets) != 1:
        raise UsageError(f"up builds one network; --topo names {len(nets)}")
    checks.require(bpftool=args.install == "bpf")
    name, topo, plan, _ = nets[0]
    rec = up(topo, plan, name=args.name, link_mbps=args.link_mbps, queue_ms=args.queue_ms,
             mtu=args.mtu,
             seed=args.seed, table=Path(args.table) if args.table else None,
             install=args.install, slot=args.slot, policy=policy, log=log)
    routers = rec["routers"]
    width = max(len(r["name"]) for r in routers)
    print(f"{args.name}: {name} is up, {len(routers)} routers"
          + (f", table {args.table} installed ({args.install}, "
             f"{policy.describe() if policy else f'slot {args.slot}'})" if args.install else ""))
    print(f"{'router':<{width}}  {'namespace':<16} {'loopback':<28} host")
    for r in routers:
        print(f"{r['name']:<{width}}  {r['netns']:<16} {r['loopback']:<28} "
              f"{(r['hosts'] or [''])[0]}")
    print(f"run a program: tpcstudy emulate exec {args.name} ROUTER -- CMD...; watch the "
          f"links: tpcstudy emulate watch {args.name}; remove it: tpcstudy emulate down "
          f"{args.name}")
    return 0


def cmd_exec(args: argparse.Namespace) -> int:
    from ...emulate.network.live import exec_argv

    cmd = list(args.cmd)
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("exec needs a command: tpcstudy emulate exec NAME ROUTER -- CMD...")
    argv = exec_argv(args.name, args.router, cmd)
    try:
        return subprocess.call(argv)
    except KeyboardInterrupt:
        return 130


def cmd_watch(args: argparse.Namespace) -> int:
    from ...emulate.network.live import find, rates, sample

    rec = find(args.name)
    assert rec is not None
    first = prev = sample(rec)
    t0 = tp = time.monotonic()
    n = 0
    tty = sys.stdout.isatty() and not args.json
    try:
        while args.count is None or n < args.count:
            time.sleep(args.interval)
            now = sample(rec)
            t = time.monotonic()
            rows = rates(rec, prev, now, t - tp)
            prev, tp, n = now, t, n + 1
            if args.json:
                print(json.dumps({"t": round(t - t0, 3), "links": [r for r in rows
                                                                    if r["bytes"]]}),
                      flush=True)
                continue
            lines = [f"{args.name}: t = {t - t0:.1f} s (every {args.interval:g} s"
                     + ("; Ctrl-C to stop)" if tty else ")"),
                     f"{'link':<40} {'Mbit/s':>9} {'of rate':>8}"]
            lines += [f"{r['link']:<40} {r['mbps']:>9.3f} {100 * r['util']:>7.1f}%"
                      for r in rows[:args.top] if r["bytes"]] or ["(no traffic)"]
            if tty:  # as watch(1): the table redrawn in place, not scrolled
                sys.stdout.write(("\x1b[2J" if n == 1 else "") + "\x1b[H"
                                 + "".join(f"{line}\x1b[K\n" for line in lines) + "\x1b[J")
            else:  # a file or pipe: one table after another
                sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    totals: List[Tuple[str, int]] = sorted(
        ((f"{k[0]}>{k[1]}", v - first.get(k, v)) for k, v in prev.items()
         if v - first.get(k, v)), key=lambda x: -x[1])
    if args.json:
        print(json.dumps({"totals": dict(totals), "seconds": round(tp - t0, 3)}))
    else:
        print(f"totals over {tp - t0:.1f} s: " + (", ".join(f"{k} {v} B" for k, v in totals[:20])
                                                 or "nothing sent"))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from ...emulate.network.live import inspect

    doc = inspect(args.name)
    if args.json:
        print(json.dumps(doc))
        return 0
    routers = doc["routers"]
    print(f"{doc['name']}: {doc['topology']}, {len(routers)} routers, up {doc['up']} (pid "
          f"{doc['pid']}, prefix {doc['prefix']}), links {doc['link_mbps']} Mbit/s per unit; "
          + (f"table {doc['table']} installed ({doc['install']}, slot {doc['slot']})"
             if doc.get("table") else "no table installed (IGP shortest paths, ECMP)"))
    w = max([len(str(r["name"])) for r in routers] + [6])
    print(f"{'router':<{w}} {'id':>3}  {'namespace':<16} {'state':<8} {'loopback (SID)':<26} "
          f"{'host address':<26} links (neighbour via interface, Mbit/s)")
    for r in routers:
        links = ", ".join(f"{x['to']} via {x['interface']} {x['mbps']:g}" for x in r["links"])
        print(f"{str(r['name']):<{w}} {r['id']:>3}  {r['netns']:<16} {r['state']:<8} "
              f"{str(r['loopback']):<26} {(r['hosts'] or ['-'])[0]:<26} {links}")
    missing = [r["name"] for r in routers if r["state"] != "running"]
    if missing:
        print(f"missing namespaces: {', '.join(map(str, missing))} (tpcstudy emulate down "
              f"{doc['name']} removes what is left)")
    return 1 if missing else 0


def cmd_pingall(args: argparse.Namespace) -> int:
    from ...emulate.network.live import find, pingall

    rec = find(args.name)
    assert rec is not None
    t0 = time.monotonic()
    res = pingall(args.name, timeout=args.timeout)
    took = time.monotonic() - t0
    ok = [rtt for _, _, rtt in res if rtt is not None]
    lost = len(res) - len(ok)
    how = {"route": f"over the table installed as SRv6 routes (slot {rec.get('slot', 0)})",
           "bpf": "the BPF agent steers TCP only: echoes take the IGP's routes"}.get(
        str(rec.get("install")), "no table installed: the IGP's routes")
    if args.json:
        print(json.dumps({"name": args.name, "pairs": len(res), "received": len(ok),
                          "dropped": lost, "how": how, "seconds": round(took, 3),
                          "results": [{"source": s, "destination": d,
                                       "rtt_ms": None if r is None else round(1e3 * r, 3)}
                                      for s, d, r in res]}))
        return 1 if lost else 0
    print(f"*** Ping: every host pair of {args.name}, one ICMPv6 echo each ({how})")
    by: Dict[str, List[str]] = {}
    for s, d, r in res:
        by.setdefault(s, []).append(d if r is not None else "X")
    for s, outs in by.items():
        print(f"{s} -> {' '.join(outs)}")
    if not res:
        print("*** Results: no pair of hosts (fewer than two routers have a host)")
        return 1
    rtt = sorted(ok)
    print(f"*** Results: {100.0 * lost / len(res):.0f}% dropped ({len(ok)}/{len(res)} received)"
          + (f"; round trip min {1e3 * rtt[0]:.2f} / median {1e3 * rtt[len(rtt) // 2]:.2f} / "
             f"max {1e3 * rtt[-1]:.2f} ms" if rtt else "") + f"; {took:.1f} s")
    return 1 if lost else 0


def cmd_list(args: argparse.Namespace) -> int:
    from ...emulate.network.live import age, live_networks

    nets = live_networks()
    if not nets:
        print("no network is up")
    for r in nets:
        print(f"{r['name']}: {r.get('topology')}, {len(r.get('routers') or [])} routers, up "
              f"{age(r)}, by pid {r['pid']}, prefix {r['prefix']}"
              + (f", table {r['table']} ({r.get('install')})" if r.get("table") else ""))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from ...emulate.network.live import down

    rep: Dict[str, Any] = down(args.name)
    print(f"{args.name}: removed {len(rep['namespaces_removed'])} namespaces, "
          f"{max(0, len(rep['cgroups_removed']) - 1)} host cgroups"
          + (f", killed {len(rep['processes_killed'])} processes" if rep["processes_killed"]
             else "")
          + (f"; left: {rep['left']}" if rep.get("left") else ""))
    return 1 if rep.get("left") else 0

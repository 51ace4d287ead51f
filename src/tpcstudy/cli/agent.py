"""``tpcstudy agent``: the BPF host agent on a real host (:mod:`tpcstudy.hostagent`).

Loads an exported path table (``tpcstudy export --format bpf``) for one host into the kernel so
that every TCP connection of the processes in a cgroup takes its table's paths, on a stock
Linux >= 6.1: no patched kernel, no change to the programs."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict

from ..errors import UsageError
from ..hostagent.maps import ON_UPDATE, RTO_MIN_MS
from .options import RawHelp

DESCRIPTION = """\
The exported path table of one host, used by the TCP connections of the processes in a cgroup
v2, on a stock Linux >= 6.1. A sockops program picks each connection's path when it opens (the
policy below) and, where the kernel refuses a per-socket SRH (mainline), keeps it for a tc
egress program that inserts it into every packet and routes the packet to its first segment.

  tpcstudy agent check                                   what this machine lacks
  tpcstudy agent load --table DIR --host NAME --cgroup PATH [--policy P] [--nrto N]
                      [--rto-min-ms MS]
  tpcstudy agent status [NAME] [--json]                  counters, connections per path, table
  tpcstudy agent update NAME --table DIR [--on-update repath|keep|rehash]
                                                         a new table swapped in atomically
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
    ld.add_argument("--rto-min-ms", type=float, default=None, metavar="MS",
                    help=f"the minimum retransmission timeout of every connection given a path "
                         f"(TCP_BPF_RTO_MIN, {RTO_MIN_MS[0]:g} to {RTO_MIN_MS[1]:g} ms): its "
                         f"RTO becomes SRTT + max(4 RTTVAR, MS) instead of the kernel's SRTT + "
                         f"200 ms at least, so a connection whose packets a failure or a full "
                         f"queue lost retransmits sooner (default: unset, the kernel's own)")
    ld.add_argument("--netns", default=None, help="the host's named network namespace, if any")
    ld.add_argument("--interfaces", default=None, metavar="IF,...",
                    help="egress interfaces (default: every interface that is up but lo)")
    ld.add_argument("--mtu", type=int, default=None,
                    help="MTU the SRH room is computed from (default: the interfaces')")
    ld.add_argument("--name", default=None, help="the install's name (default: the host)")
    ld.add_argument("--on-update", default="repath", choices=tuple(ON_UPDATE),
                    help="after 'agent update', a connection whose path the new table removed "
                         "moves to its entry's first valid path at once (repath) or at its "
                         "next RTO (keep), or at once to a path drawn by the new weights, "
                         "keyed on the connection (rehash: moved connections spread over the "
                         "entry's paths) (default repath)")
    ld.add_argument("--srh-room", default="entry", choices=("entry", "path", "max"),
                    help="the SRH bytes a connection's MSS leaves room for: its entry's longest "
                         "path (it can then move to any path of its entry: NRTOChanger, 'agent "
                         "update'), its own path's, or the longest SRH (168 bytes: any path a "
                         "later table gives its entry, e.g. a controller's) (default entry)")
    ld.set_defaults(func=cmd_load)
    up = acts.add_parser("update", help="swap a new table in while the programs stay attached")
    up.add_argument("name")
    up.add_argument("--table", required=True, metavar="DIR",
                    help="a folder written by 'tpcstudy export --format bpf'")
    up.add_argument("--host", default=None, help="its source router (default: the loaded one)")
    up.add_argument("--on-update", default=None, choices=tuple(ON_UPDATE),
                    help="connections whose path the new table removes (default: as loaded)")
    up.add_argument("--json", action="store_true", help="one JSON object")
    up.set_defaults(func=cmd_update)
    st = acts.add_parser("status", help="counters and connections per destination and path")
    st.add_argument("name", nargs="?", help="an install (default: every one)")
    st.add_argument("--network", default=None, metavar="NAME",
                    help="the agents of a live emulated network's hosts (emulate up --install "
                         "bpf), by host, instead of this machine's own installs")
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
    ifaces = [x.strip() for x in args.interfaces.split(",") if x.strip()] if args.interfaces \
        else None
    inst = loader.load(args.table, args.host, args.cgroup, policy=policy, netns=args.netns,
                       interfaces=ifaces, mtu=args.mtu, name=name, on_update=args.on_update,
                       srh_room=args.srh_room, rto_min_ms=args.rto_min_ms, keep_record=True)
    path = loader.state_dir() / f"{inst.name}.json"
    print(f"{inst.name}: {inst.entries} destinations ({inst.variant}, {inst.value_size}-byte "
          f"values) for {inst.host}; policy {inst.policy}; sockops on {inst.cgroup}; tc egress "
          f"on {', '.join(inst.interfaces)}{' in ' + inst.netns if inst.netns else ''}; "
          f"MTU {inst.mtu}"
          + (f"; minimum RTO {inst.rto_min_us / 1000:g} ms" if inst.rto_min_us else ""))
    print(f"record: {path}; remove with: tpcstudy agent unload {inst.name}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from ..errors import TpcStudyError
    from ..hostagent import loader

    emulated: Dict[str, Any] = {}
    if args.network:
        from ..emulate.network.live import agents_of, find

        rec = find(args.network)  # raises when no such network is up
        assert rec is not None
        emulated = agents_of(rec, [args.name] if args.name else None)
    names = list(emulated) or ([args.name] if args.name else loader.saved_names())
    out: Dict[str, Any] = {}
    broken = 0
    for n in names:
        try:
            inst = emulated[n] if emulated else loader.read_saved(n)
        except TpcStudyError as exc:
            if args.name:
                raise
            out[n] = {"error": str(exc)}  # one broken record does not hide the others
            broken += 1
            continue
        base = {"host": inst.host, "policy": inst.policy, "cgroup": inst.cgroup,
                "state": inst.state}
        if inst.state != "loaded":
            from ..io.files import pid_alive

            alive = pid_alive(inst.pid)
            out[n] = dict(base, error=f"load {'running' if alive else 'interrupted'} (pid "
                                      f"{inst.pid})" + ("" if alive else
                                                        f": tpcstudy agent unload {n}"))
            broken += 0 if alive else 1
            continue
        try:
            out[n] = dict(loader.status(inst), **base)
        except TpcStudyError as exc:
            out[n] = dict(base, error=str(exc))
            broken += 1
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return 1 if broken else 0
    if not out:
        print("no agent loaded")
    for n, s in out.items():
        if "error" in s:
            print(f"{n}: {s['error']}")
            continue
        c = s["counters"]
        swapped = (f", swapped in {s['swapped_at']} in {s['swap_ms']:.3f} ms (update "
                   f"{s['update_ms']:.2f} ms)" if s.get("swapped_at") else "")
        counted = ", ".join(f"{k} {v}" for k, v in c.items() if v)
        rto = (f", minimum RTO {s['rto_min_us'] / 1000:g} ms" if s.get("rto_min_us") else "")
        print(f"{n} ({s['host']}, {s['entries']} destinations, policy {s['policy']}{rto}, table "
              f"generation {s['generation']}{swapped}): "
              + (counted or "no connection seen yet (every counter 0)"))
        for prefix, slot, count in s["slots"]:
            print(f"  {prefix} slot {slot}: {count} connections")
    return 1 if broken else 0


def cmd_update(args: argparse.Namespace) -> int:
    from ..hostagent.update import update_saved

    inst, up, diff, read_ms = update_saved(args.name, args.table, args.host, args.on_update)
    doc = {"name": inst.name, "generation": up.generation, "swapped_at": inst.swapped_at,
           "swap_ms": up.swap_ms, "update_ms": up.update_ms, "cleanup_ms": up.cleanup_ms,
           "read_ms": read_ms, "entries": len(up.records), "old_table_id": up.old_id,
           "new_table_id": up.new_id,
           "diff": {"added": len(diff.added), "removed": len(diff.removed),
                    "changed": len(diff.changed), "unchanged": diff.unchanged,
                    "paths_kept": diff.slots_kept, "paths_moved": diff.slots_moved},
           "on_update": inst.on_update}
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
        return 0
    print(f"{inst.name}: table generation {up.generation} swapped in at {inst.swapped_at}: "
          f"swap {up.swap_ms:.3f} ms, update {up.update_ms:.2f} ms (the new table filled "
          f"and swapped in; read and checked before in {read_ms:.1f} ms; the old one emptied "
          f"after {up.cleanup_ms:.1f} ms); {len(up.records)} destinations: {diff.summary()}; "
          f"connections on a removed path: {inst.on_update}")
    return 0


def cmd_unload(args: argparse.Namespace) -> int:
    from ..hostagent import loader
    from ..io.files import pid_alive

    inst = loader.read_saved(args.name)
    if inst.state == "loading" and inst.pid != os.getpid() and pid_alive(inst.pid):
        raise UsageError(f"agent {inst.name!r} is being loaded (pid {inst.pid}): wait for it")
    done = loader.unload(inst)
    loader.forget(inst.name)
    print(f"{inst.name}: removed " + (", ".join(done) if done else "nothing (already gone)"))
    return 0

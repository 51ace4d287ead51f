"""``tpcstudy control``: the controller in the foreground (docs/control.md)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List

from ..errors import UsageError
from ..hostagent.maps import ON_UPDATE
from .emulate.common import add_topology, at_least
from .options import add_controller_options, apply_mirror

USAGE_EPILOG = """examples:
  # an emulated network: its routers' link events, the agents of its hosts
  tpcstudy emulate up --topo zoo/Abilene --name ab --table T --install bpf
  tpcstudy control --topo zoo/Abilene --table T --network ab --push local
  # real hosts: events on standard input, one command per host (argv, no shell)
  tpcstudy control --topo zoo/Abilene --table T --events - --push command -- \\
      ssh {host} tpcstudy agent update tpc --table {table} --host {host} --on-update rehash --json
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "control", help="recompute and push the hosts' tables when links fail or return",
        description="Own the path tables of a set of hosts: learn link changes (an emulated "
                    "network's link events, or 'down A B' / 'up A B' lines), recompute the "
                    "affected hosts' tables for the changed topology and push them atomically. "
                    "Runs until SIGTERM / Ctrl-C (or the end of --events).",
        epilog=USAGE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_topology(p)
    p.add_argument("--table", metavar="DIR", default=None,
                   help="the export the hosts were loaded with: its plan.json addresses them "
                        "(default plan otherwise)")
    p.add_argument("--pairs", metavar="FILE", default=None,
                   help="the pairs of the table (default: every edge-router pair)")
    p.add_argument("--hosts", default=None,
                   help="comma-separated source routers this controller owns (default: all)")
    p.add_argument("--reaction", choices=("reoptimised", "hosts"), default="reoptimised",
                   help="reoptimised (default): the max-flow LP afresh on the failed graph and "
                        "its paths; hosts: the current paths minus those crossing a down link, "
                        "re-weighted")
    p.add_argument("--k", type=at_least(1, 9), default=4, help="segments per path (default 4)")
    p.add_argument("--paths", type=at_least(1, 8), default=8,
                   help="paths per destination (default 8)")
    p.add_argument("--network", default=None,
                   help="a network started with 'tpcstudy emulate up': read its routers' link "
                        "events, and (--push local) its hosts' agents")
    add_controller_options(p)
    p.add_argument("--no-igp", action="store_true",
                   help="with --network: leave the routers' routes as they are (a cut link "
                        "stays a black hole for the segments routed over it)")
    p.add_argument("--events", default=None, metavar="FILE|-",
                   help="event lines 'down A B' / 'up A B': '-' standard input, else a file "
                        "watched for appended lines (default: the network's link events, else "
                        "standard input)")
    p.add_argument("--push", choices=("local", "command"), default="local",
                   help="local: the atomic swap in each agent loaded here (default); command: "
                        "the command after '--' per host, {host} and {table} substituted")
    p.add_argument("--on-update", default="rehash", choices=tuple(ON_UPDATE),
                   help="with --push local: a connection whose path a pushed table removed moves "
                        "at once to a path drawn by the new weights, keyed on the connection "
                        "(rehash, default: moved connections spread as the new table says), to "
                        "its entry's first valid path (repath), or at its next RTO (keep); with "
                        "--push command put 'agent update --on-update ...' in the command")
    p.add_argument("--variant", default=None,
                   help="the agents' table layout (default: the loaded agents', else "
                        "exp3_lowest_completion)")
    p.add_argument("--state", metavar="DIR", default=None,
                   help="with --push command: where each recomputed table is written "
                        "(default: a temporary folder, removed at exit)")
    p.add_argument("--json", action="store_true", help="one JSON line per event")
    p.add_argument("argv", nargs=argparse.REMAINDER,
                   help="with --push command: '--' then the command")
    p.set_defaults(func=cmd_control)


def cmd_control(args: argparse.Namespace) -> int:  # noqa: C901 - one flow of options
    from ..control.events import LineSource, NetlinkSource
    from ..control.push import CommandPush, LocalPush
    from ..control.run import Controller, Phases, format_record, json_line
    from ..control.tables import TableState, connected_pairs
    from ..emulate.experiments.harness import read_plan_file, topology_units
    from ..export import path_table
    from ..export.addressing import read_plan
    from ..export.table import read_pairs

    apply_mirror(args)
    if not args.topo:
        raise UsageError("control needs --topo")
    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if args.push == "command" and not argv:
        raise UsageError("--push command needs the command after '--'")
    if args.push != "command" and argv:
        raise UsageError(f"unexpected arguments {' '.join(argv)[:80]!r} (a command goes with "
                         f"--push command)")
    plan = read_plan_file(args.plan)
    if args.table and plan is None:
        plan = read_plan(Path(args.table) / "plan.json")
    nets = list(topology_units(args.topo, capacity=args.capacity, weight=args.weight,
                               plan=plan, need_edges=False, log=lambda m: None))
    if len(nets) != 1:
        raise UsageError(f"control owns one network's tables; --topo names {len(nets)}")
    _, topo, plan, _ = nets[0]
    if plan is None:
        from ..export.addressing import default_plan
        plan = default_plan(topo)
    if args.pairs:
        pairs = read_pairs(args.pairs, topo)
    else:
        dests = [d for d in topo.names if plan.prefixes.get(d)]
        pairs = [(s, d) for s in topo.edge_routers for d in dests if s != d]
    pairs = connected_pairs(topo, pairs)
    base = path_table(topo, k=args.k, paths=args.paths, plan=plan, pairs=pairs,
                      select="maxflow")
    hosts = base.sources if not args.hosts else [h.strip() for h in args.hosts.split(",")]
    for h in hosts:
        if h not in base.sources:
            raise UsageError(f"--hosts: {h!r} has no entry in the table (sources: "
                             f"{', '.join(base.sources)[:200]})")
    rec: Any = None
    spec: Any = None
    if args.network:
        from ..emulate.network.live import find
        from ..emulate.network.spec import network_spec

        rec = find(args.network)
        spec = network_spec(topo, plan, prefix=str(rec["prefix"]))
    if args.push == "local":
        if rec is None:
            from ..hostagent.record import read_saved
            agents = {h: read_saved(h) for h in hosts}
        else:
            from ..emulate.network.live import agents_of
            agents = agents_of(rec, hosts)
        pusher: Any = LocalPush(agents, save=rec is None, on_update=args.on_update)
        variant = args.variant or next(iter(agents.values())).variant
    else:
        pusher = CommandPush(argv)
        variant = args.variant or "exp3_lowest_completion"
    state = TableState(topo, plan, pairs, hosts, base, variant, reaction=args.reaction,
                       k=args.k, paths=args.paths)
    if not 0 <= args.igp_delay < 60:
        raise UsageError(f"--igp-delay {args.igp_delay}: 0 to 60 seconds")
    phases: Any = None
    events_here = args.events is not None or spec is None
    if events_here:  # the real network's IGP: taken to re-converge --igp-delay after an event
        phases = Phases.after_delay(args.controller_at, args.igp_delay)
    elif args.no_igp:  # the emulated network's routes stay: nothing re-converges
        phases = Phases(args.controller_at, None)
    sources: List[Any] = []
    watcher: Any = None
    igp: Any = None
    try:
        if args.events == "-" or (args.events is None and spec is None):
            sources.append(LineSource(sys.stdin.buffer, topo, "stdin"))
        elif args.events is not None:
            fh = open(args.events, "rb")  # noqa: SIM115 - closed with the sources
            sources.append(LineSource(fh, topo, args.events, follow=True))
        else:
            from ..emulate.network.igp import Igp, LinkWatcher
            if not args.no_igp:
                igp = Igp(spec, delay=args.igp_delay,
                          log=lambda m: print(m, file=sys.stderr, flush=True))
                phases = Phases(args.controller_at, igp.settled)
            watcher = LinkWatcher(spec)
            sources.append(NetlinkSource(watcher, igp.event if igp is not None else None))
        ctl = Controller(state, pusher, folder=Path(args.state) if args.state else None)
        stop = threading.Event()
        old = {s: signal.signal(s, lambda n, f: stop.set())
               for s in (signal.SIGTERM, signal.SIGINT)}

        def emit(r: Dict[str, Any]) -> None:
            print(json_line(r) if args.json else format_record(r), flush=True)

        print(f"tpcstudy control: {len(hosts)} hosts of {topo.name}, reaction {args.reaction}, "
              f"push {args.push}, controller at {args.controller_at}; waiting for link events",
              file=sys.stderr, flush=True)
        try:
            n = ctl.run(sources, stop, emit, phases=phases)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            ctl.close()
        print(f"tpcstudy control: stopped after {n} events", file=sys.stderr)
    finally:
        if igp is not None:
            igp.stop()
        if watcher is not None:
            watcher.close()
        for s in sources:
            st = getattr(s, "stream", None)
            if st is not None and st is not sys.stdin.buffer:
                st.close()
    return 0

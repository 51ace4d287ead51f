"""``tpcstudy emulate clean`` and ``check``: what a killed run left, what this machine lacks."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    c = sub.add_parser("clean", help="remove what a killed run left (its namespaces and "
                                     "processes only)",
                       description="Remove the namespaces, cgroups and processes of runs whose "
                                   "process is gone (their run records say which), and nothing "
                                   "else. Networks kept up on purpose ('emulate up') stay unless "
                                   "named or --all is given.")
    c.add_argument("names", nargs="*", metavar="NAME", help="up networks to remove too")
    c.add_argument("--all", action="store_true", help="remove the up networks too")
    c.set_defaults(func=cmd_clean)
    k = sub.add_parser("check", help="what this machine has and lacks for the emulator",
                       description="Probe every requirement of the emulator for real, in a "
                                   "scratch namespace: privileges, iproute2, namespaces, veth, "
                                   "SRv6, the ECMP hash, queues, TCP cubic, bpftool and bpffs; "
                                   "MPTCP is reported, not required. With --calibrate, also "
                                   "measure what forwarding costs this machine (packets per "
                                   "second per CPU), which --link-mbps auto plans with.")
    k.add_argument("--calibrate", action="store_true",
                   help="measure the forwarding cost (a chain of routers at rising link rates, "
                        "about a minute; keep other work off the machine) and store it")
    k.add_argument("--plot", metavar="FILE",
                   help="with --calibrate (or a stored calibration): draw it (PNG + PDF)")
    k.set_defaults(func=cmd_check)


def cmd_clean(args: argparse.Namespace) -> int:
    from ...emulate.network.lifecycle import clean, run_dir

    reports = clean(names=args.names, everything=args.all)
    if not reports:
        print(f"nothing to clean (no run record in {run_dir()})")
    for r in reports:
        if "skipped" in r:
            print(f"{r['file']}: skipped, not a run record of this tool: {r['skipped']}")
        elif r["alive"] == "up":
            print(f"{r['prefix']}: network {r['name']!r} is up on purpose: kept (remove it "
                  f"with: tpcstudy emulate down {r['name']})")
        elif r["alive"] == "unknown":
            print(f"{r['prefix']}: run {r['pid']} of another pid namespace: left alone")
        elif r["alive"]:
            print(f"{r['prefix']}: run {r['pid']} is still running: left alone")
        else:
            hosts = max(0, len(r.get("cgroups_removed", [])) - 1)  # the run's own folder too
            print(f"{r['prefix']}: run {r['pid']} is gone: removed {len(r['namespaces_removed'])} "
                  f"namespaces" + (f", killed {len(r['processes_killed'])} processes"
                                   if r["processes_killed"] else "")
                  + (f", {hosts} host cgroups (with their BPF agents)" if hosts else "")
                  + (f"; cgroups not removed: {r['cgroups_error']}" if r.get("cgroups_error")
                     else ""))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from ...emulate.network import checks

    res = checks.check_system(bpftool=True)
    width = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:>{width}}: {v}")
    print(f"{'kernel':>{width}}: {checks.kernel_line()}")
    for k, version in checks.tool_versions().items():
        print(f"{k:>{width}}: {version or 'not installed'}")
    need = [k for k, v in res.items() if v != checks.OK and "not required" not in k]
    cal: Any = None
    if args.calibrate and not need:
        from ...emulate.experiments.budget import QUIET, save_calibration
        from ...emulate.experiments.calibrate import calibrate

        cal = calibrate(log=print)
        if cal.base_busy >= QUIET:  # as --link-mbps auto: never stored beside other work
            print(f"{'calibration':>{width}}: not stored: measured beside other work (the "
                  f"machine {cal.base_busy:.0%} busy with no traffic); measure again when it "
                  "is idle, or give runs --link-mbps N")
        else:
            print(f"{'calibration':>{width}}: stored in {save_calibration(cal)}")
    else:
        from ...emulate.experiments.budget import calibration_path, load_calibration

        cal = load_calibration()
        print(f"{'calibration':>{width}}: " + (
            f"{cal.packets_per_core:,.0f} packets/s per CPU on a chain"
            + (f", {1 / cal.scale_seconds_per_packet:,.0f} on a grid of {cal.scale_routers} "
               f"routers, {cal.packets_per_data:.2f} packets per data packet"
               if cal.scale_seconds_per_packet > 0 else "")
            + f", {cal.base_busy:.0%} busy with no traffic (measured {cal.measured})"
            if cal is not None else
            f"none for this machine in {calibration_path()} (--calibrate measures it; "
            "--link-mbps auto does on first use)"))
    if args.plot and cal is not None:
        from ... import plotting

        for out in plotting.save_figure(plotting.plot_calibration(cal), args.plot):
            print(f"wrote {out}")
    return 1 if need else 0

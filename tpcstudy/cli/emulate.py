"""``tpcstudy emulate``: the study's paths on a real Linux SRv6 network
(:mod:`tpcstudy.emulate`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .. import prune, read_topology
from ..emulate import checks
from ..emulate import twopaths as TP
from ..emulate import workload as W
from ..emulate.failover import FailoverSettings
from ..emulate.lifecycle import Emulation, clean, new_prefix, run_dir
from ..emulate.mptcp import run_dumbbell, run_fault
from ..emulate.runs import networks, read_plan_file, run_failover, run_policies, run_throughput, run_two_paths
from ..emulate.spec import build_steps, network_spec, render_shell, teardown_steps
from ..emulate.throughput import ThroughputSettings, format_rows
from ..emulate.verify import check_maps, probe_table, read_table
from ..errors import UsageError
from ..io import atomic_write_text, json_text
from ..study.emulation import format_dumbbell, format_fault, format_recovery, recovery_summary
from .options import add_topology_options, apply_mirror, parse_list

ACTIONS = ("throughput", "verify", "failover", "dumbbell", "fault", "policies", "clean", "check")

DESCRIPTION = """\
The study's paths on a real Linux SRv6 data plane: one network namespace per router, one veth
pair per link, the export's addressing plan, IPv6 multipath routes from tpcstudy's own
shortest-path DAGs, per-direction HTB shaping with byte-limited queues, SRv6 everywhere.

actions:
  throughput (default)  real TCP per model (ecmp, sr, multipath) on the LP's paths, against the
                        LP value of the same pairs: --topo T --heavy 20 or --scenario six-paths
  verify                probe every path of an exported table and load its bpf maps:
                        --topo T --table DIR
  failover              a link of a live connection fails: NRTOChanger(N), TimeoutChanger(T)
                        and plain TCP, recovery times over --runs runs
  dumbbell              SEMPER's dumbbell with real MPTCP: P equal-cost paths, --hosts client/
                        server pairs, one connection of K subflows each; throughput and Jain
                        against K beside the mptcp:K model: --paths 2,4,8 --subflows 1,2,4,8
  fault                 SEMPER's fault test: a dumbbell of 3 paths, path 1 fails mid-run; per
                        1 s window throughput and Jain for MPTCP (K subflows) against TCP with
                        the TPC TimeoutChanger: --subflows 4 --timeout-ms 100
  policies              host path-selection policies on live TCP: transfers arriving as Poisson
                        processes (Pareto sizes) between heavy pairs, each placed by its host's
                        policy on the exported path table; goodput against the LP, flow
                        completion times, Jain: --topo T --policies ecmp,random,lp,exp3:0.1;
                        or --scenario multihoming (MMR/STD/AVGT of long site flows while a
                        burst loads one path) or delay (background switching paths, request
                        completion times)
  clean                 remove what a killed run left (its namespaces only)
  check                 what this machine has and lacks

Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2, and for verify bpftool.
"""


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _plot(kind: str, rows: List[Any], out: Path) -> None:
    try:  # matplotlib is an optional dependency
        from .. import plotting
    except ImportError as exc:
        raise UsageError(f"--plot needs matplotlib: pip install 'tpcstudy[plot]' ({exc})") \
            from None
    if kind == "throughput":
        fig, name = plotting.plot_throughput(rows), "emulation-throughput"
    elif kind == "dumbbell":
        fig, name = plotting.plot_dumbbell(rows), "emulation-mptcp"
    elif kind == "fault":
        fig, name = plotting.plot_fault(rows), "emulation-fault"
    elif kind == "policies":
        fig, name = plotting.plot_policies(rows), "emulation-policies"
    else:
        fig, name = plotting.plot_recovery(rows), "emulation-recovery"
    for p in plotting.save_figure(fig, out / name):
        print(f"wrote {p}")


def _finish(kind: str, rows: List[Any], out: Optional[Path], plot: bool) -> int:
    """Say where the results are, draw them if asked; exit 1 when a row failed."""
    if out is not None:
        print(f"results in {out / 'results.csv'}")
    if plot:
        _plot(kind, rows, out or Path("."))
    return 1 if any(r.get("status") == "failed" for r in rows) else 0


def cmd_emulate(args: argparse.Namespace) -> int:
    apply_mirror(args)
    action = args.action
    if action == "clean":
        return _clean()
    if action == "check":
        return _check(args)
    if action == "verify":
        return _verify(args)
    if args.dry_run:
        return _dry_run(args)
    checks.require()
    if action == "failover":
        return _failover(args)
    if action == "dumbbell":
        return _dumbbell(args)
    if action == "fault":
        return _fault(args)
    if action == "policies":
        return _policies(args)
    return _throughput(args)


def _policies(args: argparse.Namespace) -> int:
    if args.scenario in TP.SCENARIOS:
        return _two_paths(args)
    if not args.topo or args.scenario:
        raise UsageError("policies needs --topo (heavy pairs of a topology) or --scenario "
                         f"{' or '.join(TP.SCENARIOS)}")
    names = [p.strip() for p in (args.policies or ",".join(W.PolicySettings.policies)).split(",")
             if p.strip()]
    st = W.PolicySettings(policies=tuple(dict.fromkeys(names)), k=args.k, paths=args.table_paths,
                          load=args.load, mean_bytes=int(round(args.mean_kb * 1000)),
                          shape=args.shape, warmup=args.warmup, seconds=args.seconds or 20.0,
                          drain=args.drain, solver=args.solver)
    rows, out = run_policies(out=args.out, topo=args.topo, capacity=args.capacity,
                             weight=args.weight, plan=args.plan,
                             heavy=parse_list(args.heavy, float, "--heavy"),
                             seeds=list(range(args.seed, args.seed + args.seeds)), settings=st,
                             link_mbps=args.link_mbps, queue_ms=args.queue_ms,
                             overwrite=args.overwrite, log=_log)
    print(W.format_policies(rows))
    return _finish("policies", rows, out, args.plot)


def _two_paths(args: argparse.Namespace) -> int:
    defaults = TP.TwoPathSettings()
    names = [p.strip() for p in (args.policies or ",".join(defaults.policies)).split(",")
             if p.strip()]
    st = TP.TwoPathSettings(scenario=args.scenario, policies=tuple(dict.fromkeys(names)),
                            flows=args.flows, background=args.background,
                            seconds=args.seconds or 30.0, warmup=args.warmup, phase=args.phase,
                            rate=args.rate, request_kb=args.request_kb)
    rows, out = run_two_paths(out=args.out, settings=st,
                              seeds=list(range(args.seed, args.seed + args.seeds)),
                              link_mbps=args.link_mbps, queue_ms=args.queue_ms,
                              overwrite=args.overwrite, log=_log)
    print(TP.format_two_paths(rows))
    return _finish("policies", rows, out, args.plot)


def _fault(args: argparse.Namespace) -> int:
    ks = parse_list(args.subflows or "4", int, "--subflows")
    ps = parse_list(args.paths or "3", int, "--paths")
    if len(ks) != 1 or len(ps) != 1:
        raise UsageError("fault takes one --paths and one --subflows value (e.g. 3 and 4)")
    rows = run_fault(out=args.out, paths=ps[0], hosts=args.hosts or 3, subflows=ks[0],
                     timeout_ms=args.timeout_ms, fail_after=args.fail_after,
                     observe=args.observe, seeds=list(range(args.seed, args.seed + args.seeds)),
                     link_mbps=args.link_mbps,
                     queue_ms=args.queue_ms, overwrite=args.overwrite, log=_log)
    print(format_fault(rows))
    return _finish("fault", rows, Path(args.out) if args.out else None, args.plot)


def _dumbbell(args: argparse.Namespace) -> int:
    rows = run_dumbbell(out=args.out, paths=parse_list(args.paths or "2,4,8", int, "--paths"),
                        subflows=parse_list(args.subflows or "1,2,4,8", int, "--subflows"),
                        hosts=args.hosts or 4,
                        seeds=list(range(args.seed, args.seed + args.seeds)),
                        link_mbps=args.link_mbps, queue_ms=args.queue_ms,
                        seconds=args.seconds or 10.0, warmup=args.warmup,
                        overwrite=args.overwrite,
                        log=_log)
    print(format_dumbbell(rows))
    return _finish("dumbbell", rows, Path(args.out) if args.out else None, args.plot)


def _settings(args: argparse.Namespace) -> ThroughputSettings:
    models: List[str] = []
    for m in (m.strip() for m in args.models.split(",")):
        if m == "mptcp":  # as in maxflow: one mptcp:K per --subflows value
            models += [f"mptcp:{k}" for k in parse_list(args.subflows or "2,4,8", int,
                                                         "--subflows")]
        elif m:
            models.append(m)
    return ThroughputSettings(models=tuple(dict.fromkeys(models)), k=args.k,
                              per_pair=args.connections or 0, warmup=args.warmup,
                              seconds=args.seconds or 10.0, solver=args.solver)


def _throughput(args: argparse.Namespace) -> int:
    rows, out = run_throughput(
        out=args.out, topo=args.topo, scenario_name=args.scenario, capacity=args.capacity,
        weight=args.weight, plan=args.plan, heavy=parse_list(args.heavy, float, "--heavy"),
        seeds=list(range(args.seed, args.seed + args.seeds)), settings=_settings(args),
        link_mbps=args.link_mbps, queue_ms=args.queue_ms, overwrite=args.overwrite, log=_log)
    print(format_rows(rows))
    return _finish("throughput", rows, out, args.plot)


def _failover(args: argparse.Namespace) -> int:
    if not args.topo:
        raise UsageError("failover needs --topo (a topology whose path table has backups)")
    st = FailoverSettings(runs=args.runs, n=args.rto_count, t_ms=args.timeout_ms,
                          fail_after=args.fail_after, restore_after=args.restore_after,
                          observe=args.observe, pacing=args.pacing, k=args.k)
    rows, out = run_failover(out=args.out, topo=args.topo, capacity=args.capacity,
                             weight=args.weight, plan=args.plan, settings=st, seed=args.seed,
                             link_mbps=args.link_mbps, queue_ms=args.queue_ms,
                             overwrite=args.overwrite, log=_log)
    print(format_recovery(recovery_summary(rows)))
    return _finish("failover", rows, out, args.plot)


def _verify(args: argparse.Namespace) -> int:
    if not args.topo or not args.table:
        raise UsageError("verify needs --topo T and --table DIR (a folder of 'tpcstudy export')")
    topo = prune(read_topology(args.topo, capacity=args.capacity, weight=args.weight))
    plan, paths, problems = read_table(Path(args.table), topo)
    spec = network_spec(topo, plan, prefix=args.prefix or new_prefix(),
                        link_mbps=args.link_mbps, queue_ms=args.queue_ms)
    if args.dry_run:
        sys.stdout.write(render_shell(build_steps(spec), teardown=teardown_steps(spec.namespaces)))
        return 0
    checks.require(bpftool=True)
    for p in problems:
        print(f"problem: {p}")
    t0 = time.perf_counter()
    with Emulation(spec, log=_log) as emu:
        res = probe_table(emu, paths, probes=args.probes, log=_log)
    maps = check_maps(Path(args.table), log=_log)
    entries: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for r in res:
        entries.setdefault((r["source"], r["prefix"]), []).append(r)
    good = [k for k, rs in entries.items() if all(r["status"] == "ok" for r in rs)]
    bad = [r for r in res if r["status"] != "ok"]
    for r in bad[:20]:
        print(f"FAILED {r['source']} -> {r['destination']} ({r['prefix']}) slot {r['slot']} "
              f"[{r['waypoints']}]: {r['delivered']}/{r['probes']} delivered"
              + (f", off-DAG links {r['off_dag_arcs']}" if r["off_dag_arcs"] else ""))
    loaded = sum(m["loaded"] for m in maps)
    same = sum(m["identical"] for m in maps)
    print(f"{topo.name}: entries delivered on model links: {len(good)}/{len(entries)} "
          f"({len(res) - len(bad)}/{len(res)} paths, {args.probes} probes each); bpf maps "
          f"loaded {loaded}/{len(maps)}, byte-identical {same}/{len(maps)}; "
          f"{time.perf_counter() - t0:.1f} s")
    if args.out:
        outp = Path(args.out)
        atomic_write_text(outp / "verify.json", json_text(
            {"topology": topo.name, "table": str(args.table), "paths": res, "maps": maps,
             "problems": problems}))
        print(f"wrote {outp / 'verify.json'}")
    ok = not bad and same == len(maps) and not problems
    return 0 if ok else 1


def _dry_run(args: argparse.Namespace) -> int:
    for net in networks(topo=args.topo, scenario_name=args.scenario, capacity=args.capacity,
                        weight=args.weight, plan=read_plan_file(args.plan)):
        spec = network_spec(net.topology, net.plan, prefix=args.prefix or new_prefix(),
                            link_mbps=args.link_mbps, queue_ms=args.queue_ms, seed=args.seed)
        header = [f"tpcstudy emulate --dry-run: {net.name}, {len(spec.routers)} namespaces, "
                  f"{net.topology.num_links} links, prefix {spec.prefix}",
                  "sysctl lines are written in-process (setns + /proc/sys); the 'ip netns exec "
                  "... sysctl' lines do the same"]
        sys.stdout.write(render_shell(build_steps(spec), header=header,
                                      teardown=teardown_steps(spec.namespaces)))
    return 0


def _clean() -> int:
    reports = clean()
    if not reports:
        print(f"nothing to clean (no run record in {run_dir()})")
    for r in reports:
        if r["alive"]:
            print(f"{r['prefix']}: run {r['pid']} is still running: left alone")
        else:
            print(f"{r['prefix']}: run {r['pid']} is gone: removed {len(r['namespaces_removed'])} "
                  f"namespaces" + (f", killed {len(r['processes_killed'])} processes"
                                   if r["processes_killed"] else ""))
    return 0


def _check(args: argparse.Namespace) -> int:
    res = checks.check_system(bpftool=True)
    width = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:>{width}}: {v}")
    for k, version in checks.tool_versions().items():
        print(f"{k:>{width}}: {version or 'not installed'}")
    need = [k for k, v in res.items() if v != checks.OK and "not required" not in k]
    return 1 if need else 0


def register(sub: Any) -> None:
    """Add ``tpcstudy emulate``."""
    p = sub.add_parser("emulate", help="the study's paths on a real Linux SRv6 network "
                                       "(throughput vs the LP, table verification, failover)",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", choices=ACTIONS, default="throughput",
                   help="what to do (default: throughput)")
    add_topology_options(p, topo_required=False)
    p.add_argument("--scenario", choices=["six-paths", *TP.SCENARIOS],
                   help="a hand-made network instead of --topo: six-paths is the TPC paper's "
                        "Figure 4 (6 disjoint paths, the IGP forcing one, 4 clients x 4 "
                        "connections)")
    p.add_argument("--plan", metavar="FILE.json", help="addressing plan (default: the export's "
                                                        "default plan)")
    g = p.add_argument_group("network")
    g.add_argument("--link-mbps", type=float, default=10.0,
                   help="Mbit/s of a link of the smallest capacity, each direction (default 10; "
                        "keep the total under ~1.5 Gbit/s of link traffic on 2 cores: 1-2 on "
                        "Cogentco)")
    g.add_argument("--queue-ms", type=float, default=50.0,
                   help="queue of each link direction in ms at its rate (bfifo, >= 10 packets; "
                        "default 50)")
    g.add_argument("--dry-run", action="store_true",
                   help="print the commands that would build the network (a shell script), run "
                        "nothing")
    g.add_argument("--prefix", help=argparse.SUPPRESS)  # fixed namespace prefix (tests)
    t = p.add_argument_group("throughput")
    t.add_argument("--heavy", default="20",
                   help="heavy-hitter pairs, percent of ordered edge-router pairs (default 20; "
                        "a list draws each)")
    t.add_argument("--seeds", type=int, default=1, help="draws per heavy fraction (default 1)")
    t.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    t.add_argument("--models", default="ecmp,sr",
                   help="ecmp, sr, multipath, mptcp:K (real MPTCP, one connection of K = 1..8 "
                        "subflows per pair, against the analytic mptcp:K value), or mptcp with "
                        "--subflows (default 2,4,8) (default ecmp,sr)")
    t.add_argument("--k", type=int, default=4, help="segment limit of sr and of the failover "
                                                     "table (default 4)")
    t.add_argument("--connections", type=int, default=None,
                   help="TCP connections per pair (default 8; six-paths: 4)")
    t.add_argument("--seconds", type=float, default=None,
                   help="measured window (default 10; policies 20, multihoming and delay 30)")
    t.add_argument("--warmup", type=float, default=3.0, help="seconds before the window "
                                                             "(default 3)")
    t.add_argument("--solver", default="highs", help="LP backend (default highs)")
    v = p.add_argument_group("verify")
    v.add_argument("--table", metavar="DIR", help="a folder written by 'tpcstudy export'")
    v.add_argument("--probes", type=int, default=8, help="datagrams per path (default 8)")
    d = p.add_argument_group("dumbbell and fault (real MPTCP)")
    d.add_argument("--paths", default=None,
                   help="equal-cost paths P (default: dumbbell 2,4,8; fault 3)")
    d.add_argument("--subflows", default=None,
                   help="subflows K per connection, 1 to 8 (default: dumbbell 1,2,4,8; fault 4; "
                        "throughput's mptcp model 2,4,8)")
    d.add_argument("--hosts", type=int, default=None,
                   help="client/server pairs (default: dumbbell 4; fault 3)")
    w = p.add_argument_group("policies")
    w.add_argument("--policies", default=None,
                   help="policies to compare (default: all of them, ecmp,random,lp,exp3:0.1,"
                        "ba-rtt,ba-throughput,queue-max,queue-sum; without lp in the two-path "
                        "scenarios; exp3:GAMMA sets EXP3's Gamma)")
    w.add_argument("--load", type=float, default=1.0,
                   help="offered load as a share of the LP optimum over the table (default 1)")
    w.add_argument("--mean-kb", type=float, default=500.0,
                   help="mean transfer size in kB (Pareto; default 500)")
    w.add_argument("--shape", type=float, default=1.5,
                   help="Pareto shape of the sizes, > 1 (default 1.5)")
    w.add_argument("--table-paths", type=int, default=4,
                   help="paths per destination in the table, slot 0 included (default 4)")
    w.add_argument("--flows", type=int, default=16,
                   help="multihoming: long-lived site flows (default 16)")
    w.add_argument("--background", type=int, default=16,
                   help="multihoming: flows of the burst on path 1; delay: long flows loading "
                        "one path per phase (default 16)")
    w.add_argument("--phase", type=float, default=10.0,
                   help="delay: seconds before the background moves to the other path "
                        "(default 10)")
    w.add_argument("--rate", type=float, default=10.0,
                   help="delay: requests per second (Poisson; default 10)")
    w.add_argument("--request-kb", type=float, default=100.0,
                   help="delay: request size in kB (default 100)")
    w.add_argument("--drain", type=float, default=5.0,
                   help="seconds after the window for late transfers to finish (default 5)")
    f = p.add_argument_group("failover")
    f.add_argument("--runs", type=int, default=20, help="runs (default 20)")
    f.add_argument("--rto-count", type=int, default=3, help="NRTOChanger's N (default 3)")
    f.add_argument("--timeout-ms", type=float, default=100.0,
                   help="TimeoutChanger's T in ms (default 100)")
    f.add_argument("--fail-after", type=float, default=2.0, help="seconds before the failure")
    f.add_argument("--restore-after", type=float, default=5.0,
                   help="seconds the link stays down (plain TCP recovers only then)")
    f.add_argument("--observe", type=float, default=8.0, help="seconds after the failure")
    f.add_argument("--pacing", type=float, default=0.25,
                   help="each connection's pacing rate as a share of the link rate (default "
                        "0.25)")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="DIR", help="results folder (meta.json, results.csv; "
                                                "re-running resumes); verify: verify.json")
    o.add_argument("--overwrite", action="store_true", help="start the folder over")
    o.add_argument("--plot", action="store_true",
                   help="draw the figure (PNG + PDF) into --out (or the current folder)")
    p.set_defaults(func=cmd_emulate)


"""What the ``tpcstudy emulate`` actions share: option groups with their real defaults, value
checks at parse time, and running an experiment through the harness."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

from ...errors import UsageError
from ...lp import SOLVERS
from ..options import add_topology_options, parse_list

__all__ = ["positive", "at_least", "non_negative", "add_topology", "add_network", "add_output",
           "add_draws", "add_solver", "seeds_of", "network_of", "run", "log", "heavy_of",
           "add_dry_run", "dry_run", "add_agent"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def positive(kind: Callable[[str], Any] = float) -> Callable[[str], Any]:
    """An argparse type: a finite number > 0."""
    def conv(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{text!r}: must be > 0")
        return v
    return conv


def non_negative(kind: Callable[[str], Any] = float) -> Callable[[str], Any]:
    """An argparse type: a finite number >= 0."""
    def conv(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(v) and v >= 0):
            raise argparse.ArgumentTypeError(f"{text!r}: must be >= 0")
        return v
    return conv


def at_least(lo: int, hi: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``[lo, hi]``."""
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(
                f"{text!r}: must be {'>= ' + str(lo) if hi is None else f'{lo} to {hi}'}")
        return v
    return conv


def add_topology(p: argparse.ArgumentParser, *, plan: bool = True) -> None:
    add_topology_options(p, topo_required=False, many=False, refuse_multigraph=(
        "the emulator joins two routers by one veth link and prunes by the merged rule; "
        "maxflow, disjoint and export take multigraph"))
    if plan:
        p.add_argument("--plan", metavar="FILE.json",
                       help="addressing plan (default: the export's default plan)")


def link_rate(text: str) -> Any:
    """``--link-mbps``: ``auto`` or a number > 0."""
    return "auto" if text == "auto" else positive()(text)


def add_network(p: argparse.ArgumentParser, *, auto: bool = False) -> None:
    g = p.add_argument_group("network")
    if auto:
        g.add_argument("--link-mbps", type=link_rate, default="auto",
                       help="Mbit/s of a link of the smallest capacity, each direction, or auto "
                            "(default): the highest rate up to 10 at which the LP's traffic "
                            "keeps the machine under --cpu-budget (its calibration: 'emulate "
                            "check --calibrate', measured on first use)")
        g.add_argument("--cpu-budget", type=positive(), default=0.6, metavar="SHARE",
                       help="with --link-mbps auto: the share of the CPUs a run is planned to "
                            "use (default 0.6)")
        g.add_argument("--no-cpu-retry", action="store_true",
                       help="with --link-mbps auto: keep a measurement whose CPUs were over 80 "
                            "%% busy (default: measure it again at the rate its reading says "
                            "fits, or at half the rate when they were saturated)")
    else:
        g.add_argument("--link-mbps", type=positive(), default=10.0,
                       help="Mbit/s of a link of the smallest capacity, each direction (default "
                            "10; keep the total under ~1.5 Gbit/s of link traffic on 2 cores: "
                            "1-2 on Cogentco)")
    g.add_argument("--queue-ms", type=positive(), default=50.0,
                   help="queue of each link direction in ms at its rate (bfifo, >= 10 packets; "
                        "default 50)")
    g.add_argument("--mtu", type=at_least(1280, 9000), default=1500,
                   help="every link's MTU, 1280 to 9000 (jumbo frames: 9000); TCP's MSS and the "
                        "SRH's room follow it (default 1500)")


def add_dry_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true",
                   help="print the commands that would build the network (a shell script), run "
                        "nothing")
    p.add_argument("--prefix", help=argparse.SUPPRESS)  # --dry-run's namespace prefix (tests)


def dry_run(args: argparse.Namespace, nets: Any) -> int:
    """Print the build of each ``(name, topology, plan)`` as a shell script."""
    from ...emulate.network.lifecycle import new_prefix
    from ...emulate.network.spec import build_steps, network_spec, render_shell, teardown_steps

    for name, topo, plan in nets:
        spec = network_spec(topo, plan, prefix=args.prefix or new_prefix(),
                            link_mbps=10.0 if args.link_mbps == "auto" else args.link_mbps,
                            queue_ms=args.queue_ms,
                            seed=getattr(args, "seed", 0), mtu=args.mtu)
        header = [f"tpcstudy emulate --dry-run: {name}, {len(spec.routers)} namespaces, "
                  f"{topo.num_links} links, prefix {spec.prefix}",
                  "sysctl lines are written in-process (setns + /proc/sys); the 'ip netns exec "
                  "... sysctl' lines do the same"]
        sys.stdout.write(render_shell(build_steps(spec), header=header,
                                      teardown=teardown_steps(spec.namespaces)))
    return 0


def add_agent(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--agent", choices=("socket", "bpf"), default="socket",
                   help=f"who gives connections their SRH: socket (the traffic agent sets it on "
                        f"each socket; default) or bpf (tpcstudy's BPF host agent on each source "
                        f"router, for plain sockets in its cgroup: {what})")


def add_draws(p: argparse.ArgumentParser, *, heavy: Optional[str] = "20") -> None:
    g = p.add_argument_group("draws")
    if heavy is not None:
        g.add_argument("--heavy", default=heavy,
                       help=f"heavy-hitter pairs, percent of ordered edge-router pairs (default "
                            f"{heavy}; a list draws each)")
    g.add_argument("--seed", type=at_least(0), default=0, help="first seed (default 0)")
    g.add_argument("--seeds", type=at_least(1), default=1,
                   help="seeds: --seed, --seed + 1, ... (default 1)")


def add_solver(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver", default="highs", choices=SOLVERS,
                   help="LP backend: highs (default), glop, pdlp (OR-Tools), pulp (CBC)")


def add_output(p: argparse.ArgumentParser, *, plot: bool = True) -> None:
    r = p.add_argument_group("repeated draws")
    r.add_argument("--repeat", type=at_least(1, 1000), default=1, metavar="N",
                   help="run every measurement N times on the same network, each draw with new "
                        "ECMP hash seeds, new arrivals and new ports (column draw); print each "
                        "metric with its 95 %% interval over the draws (mean: Student t; "
                        "medians: bootstrap) and which arms differ; --out keeps summary.csv and "
                        "verdicts.csv, and a larger N later adds draws (default 1)")
    g = p.add_argument_group("output")
    g.add_argument("--out", metavar="DIR",
                   help="results folder (meta.json, results.csv); re-running resumes")
    g.add_argument("--overwrite", action="store_true", help="start the folder over")
    if plot:
        g.add_argument("--plot", action="store_true",
                       help="draw the figure (PNG + PDF) into --out (or the current folder)")


def seeds_of(args: argparse.Namespace) -> List[int]:
    return list(range(args.seed, args.seed + args.seeds))


def heavy_of(args: argparse.Namespace) -> List[float]:
    return parse_list(args.heavy, float, "--heavy")


def network_of(args: argparse.Namespace) -> Any:
    from ...emulate.experiments.harness import NetworkSettings

    auto = args.link_mbps == "auto"
    net = NetworkSettings(link_mbps=10.0 if auto else args.link_mbps, queue_ms=args.queue_ms,
                          mtu=args.mtu, auto=auto,
                          cpu_budget=getattr(args, "cpu_budget", 0.6),
                          cpu_retry=not getattr(args, "no_cpu_retry", False))
    net.check()
    return net


def _plot(figure: str, rows: List[Any], out: Path) -> None:
    try:  # matplotlib is an optional dependency
        from ... import plotting
    except ImportError as exc:
        raise UsageError(f"--plot needs matplotlib: pip install 'tpcstudy[plot]' ({exc})") \
            from None
    name = {"plot_throughput": "emulation-throughput", "plot_recovery": "emulation-recovery",
            "plot_dumbbell": "emulation-mptcp", "plot_fault": "emulation-fault",
            "plot_policies": "emulation-policies"}[figure]
    if (out / "results.csv").is_file():  # with meta.json: the run's settings (e.g. its order)
        from ...study.store import load_results
        rows = load_results(out)
    for p in plotting.save_figure(getattr(plotting, figure)(rows), out / name):
        print(f"wrote {p}")


def run(experiment: Any, args: argparse.Namespace, *, bpftool: bool = False) -> int:
    """Check the machine, run ``experiment`` through the harness, print its table, say where
    the results are, draw them if asked; exit 1 when a row failed."""
    from ...emulate.experiments.harness import run_experiment
    from ...emulate.network import checks

    checks.require(bpftool=bpftool)
    outcome = run_experiment(experiment, out=args.out, network=network_of(args),
                             overwrite=args.overwrite, log=log, repeat=args.repeat,
                             progress=True)
    print(experiment.report(outcome))
    if outcome.out is not None:
        print(f"results in {outcome.out / 'results.csv'}"
              + (f" (intervals: {outcome.out / 'summary.csv'})" if outcome.summary else ""))
    if getattr(args, "plot", False) and experiment.figure:
        _plot(experiment.figure, outcome.rows, outcome.out or Path("."))
    return 1 if outcome.failed else 0

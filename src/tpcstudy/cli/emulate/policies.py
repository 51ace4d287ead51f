"""``tpcstudy emulate policies``: host path-selection policies on live TCP."""

from __future__ import annotations

import argparse
from typing import Any

from ...errors import UsageError
from ..options import RawHelp, apply_mirror, parse_list
from .common import (
    add_draws,
    add_network,
    add_output,
    add_solver,
    add_topology,
    at_least,
    non_negative,
    positive,
    run,
    seeds_of,
)

HELP = "host path-selection policies on live TCP, against the LP"
DESCRIPTION = """\
Transfers arriving over time, each placed by its host's policy on the exported path table.
--topo T: Poisson transfers (Pareto sizes) between heavy pairs; goodput against the LP, flow
completion times, Jain over pairs. --scenario multihoming: long site flows while a burst loads
one path (MMR, STD, AVGT); --scenario delay: background switching paths, request completion
times. Every policy runs on the same transfers in a draw."""
TOPO_POLICIES = "ecmp,random,lp,exp3:0.1,ba-rtt,ba-throughput,queue-max,queue-sum"
TWO_PATH_POLICIES = "ecmp,random,exp3:0.1,ba-rtt,ba-throughput,queue-max,queue-sum"


#: Options of one kind of run only: given with the other, they are an error, not ignored.
TOPO_ONLY = ("heavy", "drain", "load", "mean_kb", "shape", "paths", "k")
SCENARIO_ONLY = ("flows", "background", "phase", "rate", "request_kb")


def register(sub: Any) -> None:
    from ...emulate.experiments.policies import PolicySettings
    from ...emulate.experiments.twopaths import TwoPathSettings

    w0, t0 = PolicySettings(), TwoPathSettings()
    p = sub.add_parser("policies", help=HELP, description=DESCRIPTION,
                       formatter_class=RawHelp)
    add_topology(p)
    p.add_argument("--scenario", choices=["multihoming", "delay"],
                   help="a two-path scenario instead of --topo")
    add_draws(p, heavy=None)
    g = p.add_argument_group("policies")
    g.add_argument("--policies", default=None,
                   help=f"policies to compare, exp3:GAMMA sets EXP3's Gamma (default "
                        f"{TOPO_POLICIES}; the two-path scenarios: the same without lp)")
    g.add_argument("--seconds", type=positive(), default=None,
                   help=f"measured window, s (default {w0.seconds:g}; the two-path scenarios "
                        f"{t0.seconds:g})")
    g.add_argument("--warmup", type=non_negative(), default=None,
                   help=f"seconds before the window (default {w0.warmup:g}; the two-path "
                        f"scenarios {t0.warmup:g})")
    t = p.add_argument_group("--topo only")
    t.add_argument("--heavy", default=None,
                   help="heavy-hitter pairs, percent of ordered edge-router pairs (default 20; "
                        "a list draws each)")
    t.add_argument("--drain", type=non_negative(), default=None,
                   help=f"seconds after the window for late transfers to finish (default "
                        f"{w0.drain:g})")
    t.add_argument("--load", type=positive(), default=None,
                   help=f"offered load as a share of the equal-share LP value over the table, "
                        f"what the table's sr-paths carry when every pair gets the same rate "
                        f"(default {w0.load:g})")
    t.add_argument("--mean-kb", type=positive(), default=None,
                   help=f"mean transfer size in kB (Pareto; default {w0.mean_bytes / 1000:g})")
    t.add_argument("--shape", type=positive(), default=None,
                   help=f"Pareto shape of the sizes, > 1 (default {w0.shape:g})")
    t.add_argument("--paths", type=at_least(1, 8), default=None,
                   help=f"paths per destination in the table, slot 0 included (default "
                        f"{w0.paths})")
    t.add_argument("--k", type=at_least(1, 9), default=None,
                   help=f"segment limit of the table's sr-paths (default {w0.k})")
    add_solver(t)
    w = p.add_argument_group("--scenario only")
    w.add_argument("--flows", type=at_least(1, 256), default=None,
                   help=f"multihoming: long-lived site flows (default {t0.flows})")
    w.add_argument("--background", type=at_least(0, 256), default=None,
                   help=f"multihoming: flows of the burst on path 1; delay: long flows loading "
                        f"one path per phase (default {t0.background})")
    w.add_argument("--phase", type=positive(), default=None,
                   help=f"delay: seconds before the background moves to the other path "
                        f"(default {t0.phase:g})")
    w.add_argument("--rate", type=positive(), default=None,
                   help=f"delay: requests per second (Poisson; default {t0.rate:g})")
    w.add_argument("--request-kb", type=positive(), default=None,
                   help=f"delay: request size in kB (default {t0.request_kb:g})")
    add_network(p)
    add_output(p)
    p.set_defaults(func=cmd)


def _names(text: str) -> Any:
    return tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))


def _refuse(args: argparse.Namespace, names: Any, what: str) -> None:
    given = [n for n in names if getattr(args, n) is not None]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')} applies to {what} only")


def _pick(args: argparse.Namespace, name: str, default: Any) -> Any:
    v = getattr(args, name)
    return default if v is None else v


def cmd(args: argparse.Namespace) -> int:
    from ...emulate.experiments import policies as W
    from ...emulate.experiments import twopaths as TP

    apply_mirror(args)
    if args.scenario:
        if args.topo:
            raise UsageError("give --topo or --scenario, not both")
        _refuse(args, TOPO_ONLY, "--topo runs")
        d = TP.TwoPathSettings()
        st = TP.TwoPathSettings(
            scenario=args.scenario, policies=_names(args.policies or TWO_PATH_POLICIES),
            **{n: _pick(args, n, getattr(d, n)) for n in
               ("flows", "background", "phase", "rate", "request_kb", "seconds", "warmup")})
        return run(TP.TwoPaths(st, seeds_of(args)), args)
    if not args.topo:
        raise UsageError("policies needs --topo (heavy pairs of a topology) or --scenario "
                         "multihoming or delay")
    _refuse(args, SCENARIO_ONLY, "--scenario runs")
    p = W.PolicySettings()
    mean_kb = _pick(args, "mean_kb", p.mean_bytes / 1000)
    wst = W.PolicySettings(policies=_names(args.policies or TOPO_POLICIES),
                           mean_bytes=int(round(mean_kb * 1000)), solver=args.solver,
                           **{n: _pick(args, n, getattr(p, n)) for n in
                              ("k", "paths", "load", "shape", "warmup", "seconds", "drain")})
    return run(W.Policies(topo=args.topo, capacity=args.capacity, weight=args.weight,
                          plan=args.plan, heavy=parse_list(args.heavy or "20", float, "--heavy"),
                          seeds=seeds_of(args), settings=wst), args)

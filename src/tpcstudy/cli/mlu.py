"""``tpcstudy mlu``: the traffic-engineering study (docs/method.md §4b), as REPETITA and CG4SR
measure it: the minimum maximum link utilisation (MLU) that carries a whole demand matrix,
per topology and model (ecmp, multipath, sr with at most k segments, sr-unsplit: one sr-path
per demand, mcf: any routing, the bound).

The matrix (--demands auto, the default): a REPETITA instance's own NAME.0000.demands (in the
file's units, with the file's capacities and weights), and for a topology that brings none
(a Topology Zoo .gml or .graphml) a gravity matrix drawn per seed on uniform capacities and hop
weights, scaled so that ECMP's MLU is 1; the output says which each topology got. One row per
topology, seed, model and k; re-running the same command resumes.

Same study as the older spelling `tpcstudy maxflow --objective mlu`, which still works.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Dict, List, Sequence

from ..lp import SOLVERS
from ..study.executors import executor_scope
from ..study.store import cell_number
from .options import (
    RawHelp,
    add_executor_options,
    add_out_option,
    add_output_options,
    add_topology_options,
    apply_mirror,
    checked_jobs,
    checked_seeds,
    finish_study,
    parse_k_list,
    parse_list,
    print_study_json,
    resolve_out,
    topo_specs,
)

__all__ = ["register", "cmd_mlu", "format_instances", "INSTANCE_LINES"]

#: Up to this many topologies, the study also prints one line per instance and model.
INSTANCE_LINES = 12


def register(sub: Any) -> None:
    p = sub.add_parser("mlu", help="minimum max-link-utilisation study (a whole demand matrix: "
                                   "REPETITA's, or gravity on a Zoo topology)",
                       description=__doc__, formatter_class=RawHelp)
    add_topology_options(p, auto_rules=("the file's own with a REPETITA matrix, else uniform",
                                         "the file's own with a REPETITA matrix, else hop"))
    add_mlu_options(p)
    add_executor_options(p)
    add_out_option(p, "mlu")
    add_output_options(p)
    p.set_defaults(func=cmd_mlu)


def add_mlu_options(p: argparse.ArgumentParser) -> None:
    """The study's own options: --demands, --models, --k, --seeds, --seed, --solver."""
    p.add_argument("--demands", default="auto", metavar="auto|FILE|gravity|uniform",
                   help="the matrix to carry: auto (default: a REPETITA NAME.graph's "
                        "NAME.0000.demands, a gravity matrix for a topology that brings none), "
                        "a REPETITA .demands file (one topology), gravity or uniform (drawn for "
                        "every topology, seeded, scaled to ECMP's MLU = 1)")
    p.add_argument("--models", default="ecmp,sr,mcf",
                   help="models: ecmp, multipath, sr, sr-unsplit (one sr-path per demand, from "
                        "the LP), mcf (default ecmp,sr,mcf; ecmp is always added)")
    p.add_argument("--k", default="4", help="segment limits of sr and sr-unsplit, e.g. 4 or 2,4")
    p.add_argument("--seeds", type=int, default=1,
                   help="draws of a gravity or uniform matrix (default 1; a file's matrix is "
                        "used once)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--solver", default="highs", choices=SOLVERS,
                   help="LP backend: highs (default), glop, pdlp (OR-Tools), pulp (CBC)")
    p.add_argument("--failures", default="none", metavar="SPEC",
                   help="also solve every model under failures, three reactions each (none, "
                        "hosts, reoptimised; docs/method.md 4c): none (default), links, links:N, "
                        "srlg:FILE, nodes (every router); the folder then holds the failure rows")


def cmd_mlu(args: argparse.Namespace) -> int:
    """Run the study of ``args`` (``tpcstudy mlu`` or ``maxflow --objective mlu``)."""
    from ..study import mlu as study_mlu

    apply_mirror(args)
    checked_seeds(args.seeds, args.seed)
    checked_jobs(args)
    resolve_out(args, "mlu")
    config = study_mlu.MLUConfig(
        models=tuple(parse_list(args.models or "ecmp,sr,mcf", str, "--models")),
        ks=parse_k_list(args.k), demands=args.demands or "auto",
        seeds=tuple(range(args.seed, args.seed + args.seeds)),
        capacity=args.capacity or "auto", weight=args.weight or "auto", links=args.links,
        solver=args.solver)
    if getattr(args, "failures", "none").strip() != "none":
        from .maxflow import cmd_failures

        return cmd_failures(args, config)
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        run, rows = study_mlu.run_mlu_study(args.topo, args.out, config, jobs=args.jobs,
                                            progress=not args.no_progress, executor=executor,
                                            overwrite=args.overwrite)
    if args.json:
        print_study_json(args.out, aggregate=getattr(args, "aggregate", "topology"))
    else:
        print(matrices_line(rows))
        if any(spec.split("/")[0] == "sndlib" for spec in topo_specs(args.topo)):
            print("SNDlib (through topohub, which keeps no link capacity of SNDlib's): every "
                  "link capacity 1, so MLUs are in the matrix's units per link; the reductions "
                  "over ecmp are unit-free")
        if len({r["topology"] for r in rows}) <= INSTANCE_LINES:
            print(format_instances(rows))
        print(study_mlu.format_summary(study_mlu.summarize(rows)))
    return finish_study(args, run, rows, t0, "",
                        lambda r: f"seed {r['seed']} {r['model']} k {r['k']}")


def matrices_line(rows: Sequence[Dict[str, Any]]) -> str:
    """Which matrix each topology carried, in one line."""
    by: Dict[str, List[str]] = {}
    for r in rows:
        m = str(r.get("matrix") or "")
        kind = m if m in ("gravity", "uniform") else ("" if not m else "file")
        names = by.setdefault(kind, [])
        if r["topology"] not in names:
            names.append(r["topology"])
    words = {"gravity": "a gravity matrix drawn on uniform capacities and hop weights (each "
                        "router's mass: its total link capacity x a lognormal draw of the seed), "
                        "scaled so that ECMP's MLU = 1",
             "uniform": "a uniform matrix (scaled to ECMP's MLU = 1)",
             "file": "the .demands file beside the topology (REPETITA's, or SNDlib's through "
                     "topohub), in the file's units, with the file's capacities and weights",
             "": "no matrix (the row failed before one was read)"}
    parts = []
    for kind, names in by.items():
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        parts.append(f"{words[kind]}: {shown}")
    return "matrix: " + "; ".join(parts) if parts else "matrix: no rows"


def format_instances(rows: Sequence[Dict[str, Any]]) -> str:
    """One line per (topology, seed, model, k): the MLU, its reduction over ECMP's, the time
    and the status."""
    lines = [f"{'topology':<22} {'seed':>4} {'model':>13} {'MLU':>10} {'vs ecmp':>9} "
             f"{'seconds':>8}  status"]
    for r in sorted(rows, key=_order):
        k = cell_number(r.get("k"))
        series = f"{r['model']} k={int(k)}" if k is not None else str(r["model"])
        mlu = cell_number(r.get("mlu"))
        red = cell_number(r.get("reduction"))
        sec = cell_number(r.get("seconds"))
        status = str(r.get("status") or "ok")
        if status != "ok" and r.get("error"):
            status += ": " + str(r["error"]).splitlines()[0][:80]
        lines.append(f"{str(r['topology'])[:22]:<22} {str(r.get('seed', '')):>4} {series:>13} "
                     f"{_num(mlu, '.4f'):>10} "
                     f"{(_num(-red, '+.1f') + ' %') if red is not None and r['model'] != 'ecmp' else '':>9} "
                     f"{_num(sec, '.2f'):>8}  {status}")
    return "\n".join(lines)


def _order(r: Dict[str, Any]) -> Any:
    from ..study.mlu import MLU_STUDY_MODELS

    model = str(r.get("model"))
    return (str(r["topology"]), cell_number(r.get("seed")) or 0,
            MLU_STUDY_MODELS.index(model) if model in MLU_STUDY_MODELS else 99,
            cell_number(r.get("k")) or 0)


def _num(v: Any, fmt: str) -> str:
    if v is None or not math.isfinite(float(v)):
        return "-"
    return format(float(v), fmt)

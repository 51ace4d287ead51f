"""``tpcstudy export``: path tables for the TPC eBPF agent, and ``--inspect`` to decode one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, List

from ..errors import ExportError, UsageError
from ..export import (
    FORMATS,
    SELECT_RULES,
    VARIANTS,
    format_inspection,
    inspect_file,
    path_table,
    write_paths,
)
from ..io import json_text, read_topologies
from ..models.demands import GENERATED, demands_file
from ..paths import DEFAULT_K, DEFAULT_PATHS
from ..topology import prune
from .emulate.common import non_negative
from .options import add_topology_options, apply_mirror, deprecated_alias, resolve_out


def register(sub: Any) -> None:
    p = sub.add_parser(
        "export", help="path tables for the TPC eBPF agent (SRH maps, OVSDB rows, JSON)",
        description="Write, per (source edge router, destination prefix), the default IGP path "
                    "and sps link-disjoint paths as the TPC agent reads them "
                    "(docs/srh-map.md), or decode such a file with --inspect.")
    add_topology_options(p, topo_required=False)
    p.add_argument("--out", metavar="DIR",
                   help="output folder (one subfolder per topology when --topo names several; "
                        "default paths/export-TOPOLOGY, printed)")
    p.add_argument("--format", action="append", choices=FORMATS,
                   help="json (readable table, the default), bpf (bpftool batch + binary per "
                        "source router) or ovsdb (SRN Paths rows); repeat for several")
    p.add_argument("--variant", choices=list(VARIANTS), default="n_rto",
                   help="agent program family for bpf: n_rto (dest_map, 1556-byte values), "
                        "exp3_lowest_completion (short_dest_map, 1652), exp3_lowest_delay (1684)")
    p.add_argument("--pin", metavar="PATH",
                   help="pinned map path in batch files (default /sys/fs/bpf/tpc/<map name>)")
    p.add_argument("-k", "--k", type=int, default=DEFAULT_K,
                   help="segment limit of the sps paths (default 4, at most 9: the SRH's 10 "
                        "address slots less the kernel's)")
    p.add_argument("--paths", type=int, default=DEFAULT_PATHS,
                   help="paths per destination, default path included (default 5, at most 8)")
    p.add_argument("--select", choices=SELECT_RULES, default="sps",
                   help="backups after the default path: sps link-disjoint paths (default), or "
                        "maxflow: the sr-paths the max-flow LP over the pairs uses most, then sps; "
                        "or mlu: the traffic-engineering solution of --demands (slot 0: the one "
                        "sr-path sr-unsplit gives each demand; weights: the minimum-MLU LP's "
                        "split, for the BPF agent's wrr; the topology unpruned)")
    p.add_argument("--demands", metavar="FILE|auto|gravity|uniform",
                   help="with --select mlu: the demand matrix (a REPETITA .demands file, auto: "
                        "the NAME.*.demands beside NAME.graph, or drawn: gravity, uniform)")
    p.add_argument("--seed", type=int, default=0,
                   help="with --select mlu: the seed of a drawn matrix and of sr-unsplit "
                        "(default 0)")
    p.add_argument("--plan", metavar="FILE.json",
                   help="addressing plan {loopbacks: {router: addr}, prefixes: {router: "
                        "[prefix]}} (default: hashed fc00::/7 plan; written as plan.json); with "
                        "--inspect, the plan that names routers")
    p.add_argument("--pairs-file", dest="pairs", metavar="FILE",
                   help="only these pairs: 'source,destination' router names per line")
    deprecated_alias(p, "--pairs", "--pairs-file", "pairs")
    p.add_argument("--allow-wide-prefix", action="store_true",
                   help="accept destination prefixes shorter than /64 (the map key covers only "
                        "their first /64)")
    p.add_argument("--link-mbps", type=non_negative(), default=1000.0,
                   help="Mbit/s per link when capacities are uniform (default 1000; 0 writes 0)")
    p.add_argument("--inspect", metavar="FILE",
                   help="decode a .bin or bpftool batch file and print it (no export)")
    p.add_argument("--json", action="store_true", help="with --inspect: print JSON")
    p.set_defaults(func=cmd_export)


def _check_inspected(path: str) -> None:
    """A missing ``--inspect`` file: the error lists the files of that kind that are there
    (REPETITA's routers are named ``3_Seattle``, so are their files: ``3_Seattle.bin``)."""
    from pathlib import Path

    from ..errors import InputFileError

    p = Path(path)
    if p.exists():
        return
    folder = p.parent
    while not folder.is_dir() and folder != folder.parent and len(folder.parts) > 1 \
            and folder.parent != p.parent.parent.parent:  # at most two levels up
        folder = folder.parent
    kind = p.suffix if p.suffix in (".bin", ".batch") else ".bin"
    found = sorted(folder.glob(f"*{kind}")) if folder.is_dir() else []
    if not found and folder.is_dir():  # the export's folder: its bpf-<variant>/ subfolders
        found = sorted(folder.glob(f"bpf-*/*{kind}"))
    near = [f for f in found if p.stem.lower() in f.stem.lower()]
    shown = near or found
    listing = ", ".join(str(f) for f in shown[:8]) + (f" and {len(shown) - 8} more"
                                                      if len(shown) > 8 else "")
    raise InputFileError(f"{path}: cannot read (No such file or directory)"
                         + (f"; {'matching' if near else 'in ' + str(folder)}: {listing}"
                            if shown else f"; no {kind} file in {folder}"))


def cmd_export(args: argparse.Namespace) -> int:
    if args.inspect:
        _check_inspected(args.inspect)
        res = inspect_file(args.inspect, plan=args.plan)
        sys.stdout.write(json_text(res) if args.json else format_inspection(res))
        return 0
    if not args.topo:
        raise UsageError("export needs --topo (or --inspect FILE)")
    apply_mirror(args)
    resolve_out(args, "export", base="paths")
    topos = list(read_topologies(args.topo, capacity=args.capacity, weight=args.weight,
                                 links=args.links))
    many = len(topos) > 1
    if many and (args.plan or args.pairs):
        raise UsageError("--plan and --pairs apply to one topology; --topo names "
                         f"{len(topos)}")
    formats = list(dict.fromkeys(args.format or ["json"]))
    if (args.select == "mlu") != bool(args.demands):
        raise UsageError("--select mlu and --demands go together (the demand matrix to route)")
    for topo in topos:
        if args.select == "mlu":
            table = path_table(topo, k=args.k, paths=args.paths, plan=args.plan,
                               link_mbps=args.link_mbps, select="mlu", seed=args.seed,
                               demands=_demands_of(args.demands, topo))
            _write(args, topo, table, formats, many)
            continue
        t = prune(topo)
        if len(t.edge_routers) < 2 and not args.pairs:
            msg = f"{topo.name}: fewer than 2 edge routers after pruning, nothing to export"
            if not many:
                raise ExportError(msg)
            print(f"tpcstudy: skipped {msg}", file=sys.stderr)
            continue
        table = path_table(t, k=args.k, paths=args.paths, plan=args.plan, pairs=args.pairs,
                           link_mbps=args.link_mbps, select=args.select)
        _write(args, topo, table, formats, many)
    return 0


def _demands_of(spec: str, topo: Any) -> Any:
    """``--demands``: ``gravity``/``uniform`` as they are, else the file (one rule:
    :func:`~tpcstudy.models.demands.demands_file`)."""
    return demands_file(spec, topo.meta.get("source"), drawn=GENERATED) or spec


def _write(args: argparse.Namespace, topo: Any, table: Any, formats: List[str],
           many: bool) -> None:
    out = Path(args.out) / topo.name if many else Path(args.out)
    files = write_paths(table, out, formats=formats, variant=args.variant, pin=args.pin,
                        allow_wide_prefix=args.allow_wide_prefix)
    n_paths = sum(len(e.paths) for e in table.entries)
    te = (f"; MLU {table.meta['mlu_unsplit']:.4f} unsplit, {table.meta['mlu_lp']:.4f} LP"
          if "mlu_lp" in table.meta else "")
    print(f"{topo.name}: {len(table.entries)} entries, {n_paths} paths, "
          f"{len(table.sources)} sources -> {out} ({len(files)} files: "
          f"{', '.join(formats)}{'; variant ' + args.variant if 'bpf' in formats else ''}){te}")

"""``tpcstudy topo stats``: sizes before and after pruning, edge routers, capacities."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List

from ..errors import TpcStudyError
from ..io import json_text, read_topology, topology_files, write_csv
from ..study.stats import STATS_COLUMNS, format_summary, summarize, topology_stats
from .options import add_topology_options, apply_mirror, progress


def register(sub: Any) -> None:
    topo = sub.add_parser("topo", help="topology statistics")
    tsub = topo.add_subparsers(dest="topo_command", metavar="ACTION")
    tsub.required = True
    stats = tsub.add_parser("stats", help="sizes before/after pruning, edge routers, capacities")
    add_topology_options(stats)
    stats.add_argument("--json", action="store_true", help="print JSON (records and summary)")
    stats.add_argument("--out", metavar="FILE.csv", help="also write the records as CSV")
    stats.add_argument("--no-progress", action="store_true", help="no progress bar")
    stats.set_defaults(func=cmd_stats)


def cmd_stats(args: argparse.Namespace) -> int:
    apply_mirror(args)
    files = topology_files(args.topo)
    records: List[Dict[str, Any]] = []
    errors: List[str] = []
    for path in progress(files, len(files), "topo stats", not args.no_progress):
        try:
            topo = read_topology(path, capacity=args.capacity, weight=args.weight,
                                 links=args.links)
        except TpcStudyError as exc:
            errors.append(str(exc))
            continue
        records.append(topology_stats(topo))
    summary = summarize(records)
    if args.out:
        write_csv(args.out, records, STATS_COLUMNS)
    if args.json:
        sys.stdout.write(json_text({"topologies": records, "summary": summary}))
    elif records:
        if len(records) <= 40:
            cols = ["name", "nodes", "links", "pruned_nodes", "pruned_links", "edge_routers",
                    "capacity_coverage"]
            print("  ".join(f"{c:>14}" for c in cols))
            for r in records:
                print("  ".join(f"{str(r[c]):>14}" for c in cols))
        print(format_summary(summary))
        if args.out:
            print(f"wrote {args.out}")
    for e in errors:
        print(f"tpcstudy: error: {e}", file=sys.stderr)
    return 1 if errors else 0

"""The ``tpcstudy`` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from .errors import TpcStudyError
from .rules import CAPACITY_RULES, WEIGHT_RULES


def _add_topology_options(p: argparse.ArgumentParser, *, topo_required: bool = True) -> None:
    p.add_argument("--topo", required=topo_required, metavar="SPEC",
                   help="a topology file (.gml, .graphml, .graph), a folder, a glob, 'zoo' (the "
                        "whole Topology Zoo, fetched on first use) or 'zoo/NAME'")
    p.add_argument("--capacity", choices=CAPACITY_RULES, default="uniform",
                   help="link capacities: uniform 1.0 (default), the Zoo's LinkSpeedRaw, or the "
                        "file's own (REPETITA)")
    p.add_argument("--weight", choices=WEIGHT_RULES, default="hop",
                   help="IGP weights: hop (default), inverse-capacity, great-circle distance, or "
                        "the file's own (REPETITA)")
    p.add_argument("--mirror", metavar="DIR",
                   help="a local Topology Zoo mirror (folder of NAME.gml or gml.tar.gz, or an "
                        "http(s) folder URL); same as TPCSTUDY_ZOO_MIRROR")


def _apply_mirror(args: argparse.Namespace) -> None:
    if getattr(args, "mirror", None):
        os.environ["TPCSTUDY_ZOO_MIRROR"] = args.mirror


def _progress(iterable: Any, total: Optional[int], desc: str, enabled: bool) -> Any:
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="topo", file=sys.stderr, leave=False,
                disable=None)


# --------------------------------------------------------------------------- topo
def cmd_topo_stats(args: argparse.Namespace) -> int:
    from .io import json_text, write_csv
    from .io import read_topology, topology_files
    from .stats import STATS_COLUMNS, format_summary, summarize, topology_stats

    _apply_mirror(args)
    files = topology_files(args.topo)
    records: List[Dict[str, Any]] = []
    errors: List[str] = []
    for path in _progress(files, len(files), "topo stats", not args.no_progress):
        try:
            topo = read_topology(path, capacity=args.capacity, weight=args.weight)
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


# --------------------------------------------------------------------------- zoo
def cmd_zoo_fetch(args: argparse.Namespace) -> int:
    from .io import ZOO

    target = ZOO.fetch(args.mirror, force=args.force, quiet=False)
    if not args.force and args.mirror is None:
        print(f"Topology Zoo ready in {target} ({len(ZOO.manifest())} files)")
    return 0


def cmd_zoo_path(args: argparse.Namespace) -> int:
    from .io import ZOO

    print(ZOO.folder)
    return 0 if ZOO.installed() else 1


def cmd_zoo_list(args: argparse.Namespace) -> int:
    from .io import ZOO

    for name in ZOO.manifest():
        print(name[:-4])
    return 0


# --------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="tpcstudy",
        description="How much capacity does host-chosen Segment Routing unlock on real "
                    "topologies, and which paths should hosts be given?")
    parser.add_argument("--version", action="version", version=f"tpcstudy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    topo = sub.add_parser("topo", help="topology statistics")
    tsub = topo.add_subparsers(dest="topo_command", metavar="ACTION")
    tsub.required = True
    stats = tsub.add_parser("stats", help="sizes before/after pruning, edge routers, capacities")
    _add_topology_options(stats)
    stats.add_argument("--json", action="store_true", help="print JSON (records and summary)")
    stats.add_argument("--out", metavar="FILE.csv", help="also write the records as CSV")
    stats.add_argument("--no-progress", action="store_true", help="no progress bar")
    stats.set_defaults(func=cmd_topo_stats)

    zoo = sub.add_parser("zoo", help="the Internet Topology Zoo data")
    zsub = zoo.add_subparsers(dest="zoo_command", metavar="ACTION")
    zsub.required = True
    fetch = zsub.add_parser("fetch", help="install the 261 Zoo GML files (checksums verified)")
    fetch.add_argument("--mirror", metavar="DIR|URL",
                       help="install from a mirror: a folder of NAME.gml files or gml.tar.gz, or an "
                            "http(s) URL (default: TPCSTUDY_ZOO_MIRROR, else the pinned public store)")
    fetch.add_argument("--force", action="store_true", help="re-install even if present")
    fetch.set_defaults(func=cmd_zoo_fetch)
    zpath = zsub.add_parser("path", help="print where the Zoo files are installed")
    zpath.set_defaults(func=cmd_zoo_path)
    zlist = zsub.add_parser("list", help="list the 261 canonical topology names")
    zlist.set_defaults(func=cmd_zoo_list)

    for name in _COMMAND_MODULES:
        importlib.import_module(name).register_cli(sub, _add_topology_options)
    return parser


#: Modules that add subcommands: each has ``register_cli(subparsers, add_topology_options)``.
_COMMAND_MODULES = ("tpcstudy.maxflow_study", "tpcstudy.disjoint_study", "tpcstudy.export",
                    "tpcstudy.plots")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TpcStudyError as exc:
        print(f"tpcstudy: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file or folder that cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tpcstudy: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tpcstudy: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

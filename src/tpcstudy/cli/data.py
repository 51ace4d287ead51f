"""``tpcstudy data fetch|path|list zoo|repetita``: the data sets tpcstudy installs."""

from __future__ import annotations

import argparse
from typing import Any

from ..io import DATASETS


def register(sub: Any) -> None:
    data = sub.add_parser("data", help="the Topology Zoo and REPETITA data sets: fetch, where, "
                                       "list")
    dsub = data.add_subparsers(dest="data_command", metavar="ACTION")
    dsub.required = True
    add_actions(dsub, dataset_argument=True)


def add_actions(dsub: Any, *, dataset_argument: bool) -> None:
    """``fetch``, ``path`` and ``list`` (for one data set, or with a NAME argument)."""
    names = list(DATASETS)

    def name_arg(p: argparse.ArgumentParser) -> None:
        if dataset_argument:
            p.add_argument("dataset", choices=names, metavar="NAME",
                           help=f"the data set: {' or '.join(names)}")
        else:  # the `tpcstudy zoo` alias: as it always printed, bare names
            p.set_defaults(dataset="zoo", bare_names=True)

    fetch = dsub.add_parser("fetch", help="install the data set's files (checksums verified)")
    name_arg(fetch)
    fetch.add_argument("--mirror", metavar="DIR|URL",
                       help="install from a mirror: a local folder or an http(s) folder URL "
                            "(the Zoo: NAME.gml files or gml.tar.gz; REPETITA: the layout of "
                            "its data/ folder). Default: TPCSTUDY_ZOO_MIRROR / "
                            "TPCSTUDY_REPETITA_MIRROR, else the pinned public source")
    fetch.add_argument("--force", action="store_true", help="re-install even if present")
    fetch.set_defaults(func=cmd_fetch)
    where = dsub.add_parser("path", aliases=["where"],
                            help="print where the data set is installed (exit 1 when it is "
                                 "not); 'where' is the same")
    name_arg(where)
    where.set_defaults(func=cmd_path)
    listing = dsub.add_parser("list", help="list the --topo names of the data set's topologies")
    name_arg(listing)
    listing.add_argument("--long", action="store_true",
                         help="with each topology's routers and links as read, after pruning, "
                              "and its edge routers (reads every file: a few seconds)")
    listing.set_defaults(func=cmd_list)


def cmd_fetch(args: argparse.Namespace) -> int:
    dataset = DATASETS[args.dataset]
    target = dataset.fetch(args.mirror, force=args.force, quiet=False)
    if not args.force and args.mirror is None:
        print(f"{dataset.title} ready in {target} ({len(dataset.manifest())} files)")
    print(f"cite: {dataset.citation}")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    dataset = DATASETS[args.dataset]
    print(dataset.folder)
    return 0 if dataset.installed() else 1


def cmd_list(args: argparse.Namespace) -> int:
    names = DATASETS[args.dataset].topologies()
    bare = getattr(args, "bare_names", False)
    if not getattr(args, "long", False):
        for name in names:
            print(name.rsplit("/", 1)[-1] if bare else name)
        return 0
    from ..study.stats import topo_stats  # reads and prunes every topology

    rows = topo_stats(names)
    width = max(len(n) for n in names)
    print(f"{'topology':<{width}} {'routers':>7} {'links':>6} {'pruned':>7} {'links':>6} "
          f"{'edge routers':>12}")
    for name, r in zip(names, rows):
        name = name.rsplit("/", 1)[-1] if bare else name
        print(f"{name:<{width}} {r['nodes']:>7} {r['links']:>6} {r['pruned_nodes']:>7} "
              f"{r['pruned_links']:>6} {r['edge_routers']:>12}")
    return 0

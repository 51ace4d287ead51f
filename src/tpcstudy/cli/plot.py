"""``tpcstudy plot``: Figures 5-7 of "The TCPPathChanger" from study outputs (PNG, PDF, SVG)."""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

from ..errors import UsageError
from ..study.stats import fill_degree_histograms, topo_stats
from ..study.store import Results, load_results
from ..study.summary import summary_line
from .options import add_topology_options, apply_mirror


def register(sub: Any) -> None:
    p = sub.add_parser(
        "plot", help="Figures 5-7 of the TCPPathChanger paper from topo stats and study results "
                     "(PNG, PDF)",
        description="Draw the paper's figures from study outputs: topology statistics (a 'topo "
                    "stats --out' CSV or '--json' file, or --topo SPEC to compute them) -> Figure "
                    "5; a maxflow results folder -> Figure 6; a disjoint results folder -> Figure "
                    "7. The kind is read from meta.json and the CSV columns.")
    p.add_argument("inputs", nargs="*", metavar="DIR_OR_FILE",
                   help="result folders (meta.json + results.csv) or topo stats CSV/JSON files")
    add_topology_options(p, topo_required=False)
    p.add_argument("--out", required=True, metavar="FIGDIR", help="folder for the figures")
    p.add_argument("--format", default="png,pdf", help="comma-separated: png, pdf, svg "
                                                       "(default png,pdf)")
    p.add_argument("--k", type=int, default=None,
                   help="sr segment limit for Figure 6a/6b (default 4, else the largest)")
    p.add_argument("--dpi", type=int, default=150, help="PNG resolution (default 150)")
    p.set_defaults(func=cmd_plot)


def _figure_names(inputs: List[Results], kinds: Dict[str, int]) -> Dict[int, str]:
    """Each input's figure name when several share a kind: the kind's name and the input's
    label, less label words the name already has (fig6-maxflow + maxflow-zoo:
    fig6-maxflow-zoo) as long as that keeps every name distinct; else the whole label, then a
    number, so that no figure overwrites another."""
    from .. import plotting

    out: Dict[int, str] = {}
    taken: set = set()
    for r in inputs:
        if kinds[r.kind] <= 1:
            continue
        short, full = plotting.figure_name(r), f"{plotting.FIGURE_NAMES[r.kind]}-{r.label}"
        name = next((n for n in (short, full) if n not in taken), None)
        i = 2
        while name is None:
            name = f"{full}-{i}" if f"{full}-{i}" not in taken else None
            i += 1
        taken.add(name)
        out[id(r)] = name
    return out


def cmd_plot(args: argparse.Namespace) -> int:
    try:  # matplotlib is an optional dependency: only this verb needs it
        from .. import plotting
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "matplotlib":
            raise  # a broken install of tpcstudy itself: the traceback says where
        raise UsageError(f"tpcstudy plot needs matplotlib: pip install 'tpcstudy[plot]' "
                         f"({exc})") from None

    apply_mirror(args)
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    if not formats:
        raise UsageError("--format: empty list")
    inputs: List[Results] = [load_results(p) for p in args.inputs]
    if args.topo:
        inputs.append(topo_stats(args.topo, capacity=args.capacity, weight=args.weight,
                                 links=args.links))
    if not inputs:
        raise UsageError("nothing to plot: give result folders or files, or --topo SPEC")
    kinds: Dict[str, int] = defaultdict(int)
    for r in inputs:
        kinds[r.kind] += 1
    out = Path(args.out)
    names = _figure_names(inputs, kinds)
    for r in inputs:
        if not r:
            raise UsageError(f"{r.source}: no rows to plot")
        kw: Dict[str, Any] = {"k": args.k} if r.kind == "maxflow" and args.k else {}
        if r.kind == "topo":
            fill_degree_histograms(r)  # the CSV has none: re-read the files it names
        name, fig = plotting.plot_results(r, **kw)
        if kinds[r.kind] > 1:  # fig6-maxflow + maxflow-zoo: fig6-maxflow-zoo
            name = names[id(r)]
        files = plotting.save_figure(fig, out / name, formats=formats, dpi=args.dpi)
        line = summary_line(r, k=kw.get("k"))
        print(f"{r.source} ({r.kind}, {len(r)} rows): " + line)
        for f in files:
            print(f"  wrote {f}")
    return 0

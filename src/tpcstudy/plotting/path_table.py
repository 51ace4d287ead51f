"""What a path table gives the hosts: paths per destination, segments per path, backup
stretch."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Dict, List, Mapping, Tuple

from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from ..study.store import cell_number
from .common import axes_for, cdf, mean_or_nan

__all__ = ["plot_path_table"]




def plot_path_table(table: Any, ax: Any = None) -> Any:
    """What a :func:`tpcstudy.path_table` gives the hosts: (a) paths per (source, destination),
    (b) segments per path, default path vs backups, (c) IGP-cost stretch of the backups over
    the default path (CDF).

    Parameters
    ----------
    table
        A :class:`tpcstudy.export.PathTable`, or its ``to_rows()`` records (several tables'
        rows may be concatenated; they need ``source``, ``destination``, ``slot``,
        ``num_segments`` and ``igp_cost``, plus ``topology`` to tell tables apart).
    ax
        ``None`` (a new figure) or three Axes.
    """
    rows = table.to_rows() if hasattr(table, "to_rows") else list(table)
    name = getattr(table, "topology", None)
    new = ax is None
    fig, axes = axes_for(ax, 3, width=4.6, height=3.8)
    per_entry: Dict[Tuple[Any, Any, Any], List[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        per_entry[(r.get("topology", name), r["source"], r["destination"])].append(r)
    counts = [len(v) for v in per_entry.values()]
    a = axes[0]
    if counts:
        top = max(counts)
        xs = list(range(1, top + 1))
        a.bar(xs, [100.0 * counts.count(x) / len(counts) for x in xs], color="#1f77b4")
        a.set_xticks(xs)
    a.set_xlabel("paths per (source, destination) (count)")
    a.set_ylabel("destinations (% of map entries)")
    a.set_title(f"(a) paths per destination, mean {mean_or_nan(counts):.2f}")
    a = axes[1]
    segs0 = [int(r["num_segments"]) for r in rows if int(r["slot"]) == 0]
    segs1 = [int(r["num_segments"]) for r in rows if int(r["slot"]) > 0]
    top = max(segs0 + segs1 + [1])
    xs = list(range(1, top + 1))
    for off, vals, label, color in ((-0.2, segs0, "default path (slot 0)", "#7f7f7f"),
                                    (0.2, segs1, "backups (slots 1+)", "#2ca02c")):
        if vals:
            a.bar([x + off for x in xs], [100.0 * vals.count(x) / len(vals) for x in xs],
                  width=0.4, color=color, label=f"{label}, n = {len(vals)}")
    a.set_xticks(xs)
    a.set_xlabel("segments in the SRH (count)")
    a.set_ylabel("paths (% of their slot group)")
    a.set_title("(b) segments per path")
    a.legend(fontsize=8)
    a = axes[2]
    stretch = []
    for entry in per_entry.values():
        base = [r for r in entry if int(r["slot"]) == 0]
        if base and (cell_number(base[0]["igp_cost"]) or 0) > 0:
            stretch += [float(r["igp_cost"]) / float(base[0]["igp_cost"]) for r in entry
                        if int(r["slot"]) > 0]
    cdf(a, stretch, color="#2ca02c", lw=1.8)
    if stretch:
        med = statistics.median(stretch)
        a.axvline(med, color="#7f7f7f", ls=":", lw=1)
        a.annotate(f"median {med:.2f}", xy=(med, 0.5), xytext=(6, 0), textcoords="offset points",
                   fontsize=8)
    if stretch and max(stretch) > 5:
        a.set_xscale("log")
        a.xaxis.set_major_locator(FixedLocator([t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100)
                                                if t <= max(stretch) * 1.5]))
        a.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        a.xaxis.set_minor_formatter(NullFormatter())
    a.set_xlabel("backup IGP cost / default path IGP cost (ratio"
                 + (", log scale)" if stretch and max(stretch) > 5 else ")"))
    a.set_ylabel("CDF (share of backup paths)")
    a.set_ylim(0, 1.02)
    a.set_title("(c) backup stretch")
    for a in axes:
        a.grid(True, alpha=0.3)
    if new:
        names = sorted({str(r["topology"]) for r in rows if r.get("topology")})
        what = name or (", ".join(names) if 0 < len(names) <= 3 else
                        f"{len(names)} topologies, entries pooled" if names else "path table")
        k = getattr(table, "k", None)
        paths = getattr(table, "max_paths", None)
        fig.suptitle(f"Path table for the TPC agent: {what} ({len(per_entry)} map entries"
                     + (f"; sps k = {k}, at most {paths} paths" if k else "") + ")", fontsize=11)
    return fig

"""Figure 5 of "The TCPPathChanger": the topologies after pruning (routers, links, degrees)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

from ..errors import UsageError
from ..study.stats import MAX_DEGREE_BIN, distributions, summarize
from .common import axes_for, cdf, source_name
from .common import caption as add_caption

__all__ = ["TOPOLOGY_PANELS", "plot_topologies"]

TOPOLOGY_PANELS = ("routers", "links", "degree")


def plot_topologies(records: Sequence[Mapping[str, Any]], ax: Any = None, *,
                    panels: Sequence[str] = TOPOLOGY_PANELS, caption: bool = True) -> Any:
    """Figure 5: (a) CDF of routers and (b) of links after pruning, (c) router degrees.

    Parameters
    ----------
    records
        ``tpcstudy topo stats`` records (:func:`tpcstudy.study.load_results` or
        :func:`tpcstudy.study.stats.topo_stats`). Panel ``degree`` needs ``degree_histogram``
        (in the JSON and in ``topo_stats``; a CSV has none: add them with
        :func:`tpcstudy.study.stats.fill_degree_histograms`, which re-reads the files).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        Any of ``"routers"``, ``"links"``, ``"degree"``, in drawing order.
    caption
        Write the configuration under the figure (only for a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    for p in panels:
        if p not in TOPOLOGY_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(TOPOLOGY_PANELS)}")
    new = ax is None
    fig, axes = axes_for(ax, len(panels))
    recs = [dict(r) for r in records]
    s = summarize(recs)
    d = distributions(recs)
    largest = s["largest"][0]["name"] if s["largest"] else None
    letters = "abc"
    for panel, a in zip(panels, axes):
        tag = f"({letters[TOPOLOGY_PANELS.index(panel)]})"
        if panel in ("routers", "links"):
            vals = d["nodes"] if panel == "routers" else d["links"]
            med = s["median_pruned_nodes"] if panel == "routers" else s["median_pruned_links"]
            cdf(a, vals, color="#1f77b4", lw=1.8)
            a.set_xscale("log")
            ticks = [x for x in (3, 5, 10, 20, 50, 100, 200, 500, 1000)
                     if vals and min(vals) * 0.8 <= x <= max(vals) * 1.25]
            a.xaxis.set_major_locator(FixedLocator(ticks))
            a.xaxis.set_major_formatter(ScalarFormatter())
            a.xaxis.set_minor_formatter(NullFormatter())
            a.axvline(med, color="#7f7f7f", ls=":", lw=1)
            if vals:
                a.annotate(f"median {med:g}\nmax {max(vals)} ({largest})",
                           xy=(med, 0.5), xytext=(8, -30), textcoords="offset points",
                           fontsize=8, color="#333333")
            noun = "routers" if panel == "routers" else "links"
            a.set_xlabel(f"{noun} per topology after pruning (count, log scale)")
            a.set_ylabel("CDF (share of topologies)")
            a.set_ylim(0, 1.02)
            a.set_title(f"{tag} {noun} after pruning")
            a.grid(True, which="major", alpha=0.3)
        else:
            bins = d["degree_bins"]
            data = [d["degree_shares"][b] for b in bins]
            if d["with_histogram"]:
                bp = a.boxplot(data, positions=range(len(bins)), widths=0.6, patch_artist=True,
                               flierprops={"markersize": 2, "alpha": 0.4},
                               medianprops={"color": "black"})
                for box in bp["boxes"]:
                    box.set_facecolor("#aec7e8")
                a.plot(range(len(bins)), [d["degree_pooled"][b] for b in bins], "D",
                       color="#d62728", ms=4, label="all routers pooled")
                a.legend(fontsize=8, loc="upper right")
            else:
                a.text(0.5, 0.5, "no degree histograms\n(use topo stats --json, --topo, or\n"
                       "tpcstudy.study.stats.fill_degree_histograms)",
                       ha="center", va="center", transform=a.transAxes)
            a.set_xticks(range(len(bins)))
            a.set_xticklabels([str(b) if b < MAX_DEGREE_BIN else f"≥{b}" for b in bins])
            a.set_xlabel("router degree after pruning (attached links)")
            a.set_ylabel("routers with this degree (% of the topology's)")
            a.set_ylim(0, 100)
            a.set_title(f"{tag} degree distribution ({d['with_histogram']} topologies)")
            a.grid(True, axis="y", alpha=0.3)
    if new:
        src = source_name(records) or (
            "Topology Zoo" if any("topologyzoo" in str(r.get("source", "")) for r in recs)
            else "")
        fig.suptitle(f"Figure 5: {s['nonempty_after_pruning']} of {s['topologies']} topologies "
                     "non-empty after pruning (2-core, largest component)", fontsize=11)
        if caption:
            add_caption(fig, (f"{src}; " if src else "") + "routers of degree 2 are edge "
                             "routers; median "
                             f"{s['median_pruned_nodes']:g} routers / {s['median_pruned_links']:g} "
                             "links; boxes: quartiles over topologies, whiskers 1.5 IQR")
    return fig

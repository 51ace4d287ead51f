"""The reproduction's figures (``tpcstudy reproduce``): Figure 6 as boxes, ours beside the
paper's, over ECMP and over multipath, at every heavy-hitter percent; Figure 7 as the paper
draws it, ours beside the paper's: (a) the CDF of the per-topology mean number of disjoint paths
(max, greedy), (b) the mean sps paths by segment limit under each segment rule."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.patches import Patch

from ..study.paper import (
    FIGURE5_LINKS,
    FIGURE5_ROUTERS,
    FIGURE6_CDF_OVER_ECMP,
    FIGURE6_CDF_OVER_MULTIPATH,
    FIGURE6_N,
    FIGURE7_GREEDY_MEANS,
    FIGURE7_MAX_MEANS,
    FIGURE7_SPS_MEAN,
)
from ..study.reproduce import figure6_rows, figure6_values
from .common import COLORS, caption, cdf, new_figure

__all__ = ["plot_reproduction", "plot_figure5", "plot_figure7"]

#: One colour and marker per sps segment rule (the paper's in COLORS["paper"]).
_RULE_STYLE = {"dag": ("#2ca02c", "o"), "path": ("#1f77b4", "s"), "any": ("#9467bd", "^")}

_TITLES = {"ecmp": "(a) sr over single-path ECMP", "multipath": "(b) sr over multipath"}


def plot_reproduction(rows: Sequence[Mapping[str, Any]], *, seeds: int) -> Any:
    """Two panels (over ecmp, over multipath): per heavy-hitter percent our pooled box (whiskers
    at 1.5 IQR, the median's 95 % draw-noise interval as a bar) and the paper's quartiles
    (read from its figure; the paper's own whiskers are not drawn)."""
    fig = new_figure(2, width=5.2, height=4.2)
    summary = {(r["over"], r["heavy"]): r for r in figure6_rows(rows)}
    heavies = sorted({h for _, h in summary})
    for ax, over in zip(fig.axes, ("ecmp", "multipath")):
        paper = FIGURE6_CDF_OVER_ECMP if over == "ecmp" else FIGURE6_CDF_OVER_MULTIPATH
        x = np.arange(len(heavies), dtype=float)
        ours = [figure6_values(rows, over, h) for h in heavies]
        ax.boxplot(ours, positions=x - 0.18, widths=0.3, showfliers=False, patch_artist=True,
                   boxprops={"facecolor": COLORS["sr"], "alpha": 0.55},
                   medianprops={"color": "black"})
        for xi, h in zip(x, heavies):
            s = summary[(over, h)]
            if not np.isnan(s["median_lo"]):
                ax.errorbar([xi - 0.18], [s["median"]],
                            yerr=[[s["median"] - s["median_lo"]], [s["median_hi"] - s["median"]]],
                            color="black", capsize=4, lw=1.5)
            box = paper.get(h)
            if box:
                ax.bxp([{"med": box[1], "q1": box[0], "q3": box[2], "whislo": box[0],
                         "whishi": box[2], "fliers": []}], positions=[xi + 0.18], widths=0.3,
                       showcaps=False, patch_artist=True,
                       boxprops={"facecolor": "white", "edgecolor": COLORS["paper"]},
                       medianprops={"color": COLORS["paper"], "lw": 2})
        ax.set_xticks(x, [f"{h:g} %\nN {summary[(over, h)]['values']} / "
                          f"{FIGURE6_N.get(h, '-')}" for h in heavies])
        ax.set_xlabel("heavy-hitter pairs (N: values here / in the paper)")
        ax.set_ylabel("max-flow improvement (%)")
        ax.set_title(_TITLES[over])
        ax.grid(axis="y", alpha=0.3)
        ax.set_xlim(-0.6, len(heavies) - 0.4)
    handles = [Patch(facecolor=COLORS["sr"], alpha=0.55, label="tpcstudy (pooled, whiskers "
                     "1.5 IQR, bar: median's 95 % noise interval)"),
               Patch(facecolor="white", edgecolor=COLORS["paper"], label="the paper (quartiles)")]
    fig.legend(handles=handles, loc="outside upper center", ncol=2, fontsize="small")
    caption(fig, f"REPETITA inverse-capacity, parallel links as links (--links multigraph), "
                 f"sr k = 4, {seeds} draws per topology, pooled over (topology, draw) values")
    return fig


def plot_figure7(figure7: Mapping[str, Any]) -> Any:
    """Figure 7 beside the paper's, from the report's ``figure7`` (its ``per_topology`` means
    and ``sps_rules``): (a) CDFs over topologies of the mean link-disjoint paths per pair, max
    and greedy, ours solid and the paper's dashed; (b) the mean over topologies of sps's mean
    paths per pair by segment limit, one line per segment rule, the paper's in red."""
    fig = new_figure(2, width=5.2, height=4.2)
    a, b = fig.axes
    per = figure7.get("per_topology") or {}
    for method, paper in (("max", FIGURE7_MAX_MEANS), ("greedy", FIGURE7_GREEDY_MEANS)):
        color = COLORS[method]
        # the paper's drawn wide and pale underneath: where ours covers it, they agree
        cdf(a, paper, color=color, lw=6, alpha=0.3, label=f"{method}, the paper (wide, pale)")
        cdf(a, per.get(method, []), color=color, lw=1.5, label=f"{method}, tpcstudy")
    a.set_xlabel("mean link-disjoint paths per edge-router pair")
    a.set_ylabel("share of topologies")
    a.set_title("(a) max (Edmonds-Karp) and greedy (iterative Dijkstra)")
    a.grid(alpha=0.3)
    a.legend(loc="upper left", fontsize="small")
    ks = sorted(FIGURE7_SPS_MEAN)
    b.plot(ks, [FIGURE7_SPS_MEAN[k] for k in ks], color=COLORS["paper"], lw=2.5, marker="D",
           label="the paper")
    for rule, by_k in (figure7.get("sps_rules") or {}).items():
        color, marker = _RULE_STYLE.get(rule, ("#7f7f7f", "x"))
        kk = sorted(int(k) for k in by_k)
        b.plot(kk, [by_k[str(k)][0] for k in kk], color=color, marker=marker, lw=1.5,
               label=f"tpcstudy, segment rule {rule}")
    mx = (figure7.get("mean") or {}).get("max")
    if mx and mx[0] is not None:
        b.axhline(mx[0], color=COLORS["max"], lw=1, ls=":", label="max (the bound)")
    b.set_xticks(ks)
    b.set_xlabel("segment limit k (k - 1 waypoints)")
    b.set_ylabel("mean over topologies of sps paths per pair")
    b.set_title("(b) sps by segment limit")
    b.grid(alpha=0.3)
    b.legend(loc="lower right", fontsize="small")
    fig.suptitle("Figure 7 of the TCPPathChanger paper beside tpcstudy's (REPETITA "
                 "inverse-capacity)")
    caption(fig, "REPETITA inverse-capacity, 219 topologies with edge routers, every ordered "
                 "edge-router pair; paths disjoint by router adjacency. Segment rules "
                 "(docs/method.md section 5): dag = a segment occupies its ECMP DAG, path = its "
                 "one smallest shortest path, any = some surviving shortest path")
    return fig


def plot_figure5(figure5: Mapping[str, Any]) -> Any:
    """Figure 5(a, b) beside the paper's, from the report's ``figure5`` (its ``per_topology``
    router and link counts): CDFs over the pruned topologies, the paper's wide and pale
    underneath (where ours covers it, the multisets agree)."""
    fig = new_figure(2, width=5.2, height=4.0)
    per = figure5.get("per_topology") or {}
    for ax, key, paper, what in zip(fig.axes, ("routers", "links"),
                                    (FIGURE5_ROUTERS, FIGURE5_LINKS), ("routers", "links")):
        cdf(ax, paper, color=COLORS["paper"], lw=6, alpha=0.3, label="the paper (wide, pale)")
        cdf(ax, per.get(key, []), color=COLORS["max"], lw=1.5, label="tpcstudy")
        ax.set_xscale("log")
        ticks = [t for t in (3, 5, 10, 20, 50, 100, 200) if t <= max(paper) * 1.1]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(f"{what} per pruned topology" + (" (self-loops counted, as the figure)"
                                                      if key == "links" else ""))
        ax.set_ylabel("share of topologies")
        ax.set_title(f"({'a' if key == 'routers' else 'b'}) number of {what}")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    fig.suptitle("Figure 5 of the TCPPathChanger paper beside tpcstudy's (REPETITA "
                 "inverse-capacity)")
    caption(fig, f"{figure5.get('nonempty', '?')} topologies non-empty after pruning (routers "
                 "with at most one link removed repeatedly, parallel links counted)")
    return fig

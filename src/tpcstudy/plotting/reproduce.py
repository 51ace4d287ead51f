"""The reproduction's figure (``tpcstudy reproduce``): Figure 6 as boxes, ours beside the
paper's, over ECMP and over multipath, at every heavy-hitter percent."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.patches import Patch

from ..study.paper import FIGURE6_CDF_OVER_ECMP, FIGURE6_CDF_OVER_MULTIPATH, FIGURE6_N
from ..study.reproduce import figure6_rows, figure6_values
from .common import COLORS, caption, new_figure

__all__ = ["plot_reproduction"]

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

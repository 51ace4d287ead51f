"""Figure 7 of "The TCPPathChanger": link-disjoint paths per edge-router pair, CDFs over
topologies (max vs greedy, sps by segment limit, how close greedy comes to max)."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..study import paper
from ..study.disjoint import greedy_reaches_max, mean_paths_table
from .common import COLORS, axes_for, cdf, config_caption, mean_or_nan, sequential
from .common import caption as add_caption

__all__ = ["DISJOINT_PANELS", "SMALL_STUDY", "plot_disjoint"]

DISJOINT_PANELS = ("max_greedy", "sps", "greedy_ratio")
#: Up to this many topologies, the panels show each topology (a CDF over two or three values
#: is a few vertical lines that hide which topology is which).
SMALL_STUDY = 6


def _plot_small(panel: str, a: Any, table: Mapping[str, Mapping[str, float]],
                sps_keys: Sequence[str], reference: bool) -> None:
    """One panel of a small study: per topology, bars (a, c) or mean paths by k (b)."""
    topos = sorted(table.get("max", {}))
    xs = list(range(len(topos)))
    if panel == "max_greedy":
        for j, (m, hatch) in enumerate((("max", ""), ("greedy", "//"))):
            vals = [table.get(m, {}).get(t, math.nan) for t in topos]
            bars = a.bar([x + (j - 0.5) * 0.38 for x in xs], vals, 0.36, color=COLORS[m],
                         hatch=hatch, edgecolor="white",
                         label=f"{m} ({'Edmonds-Karp' if m == 'max' else 'iterative Dijkstra'})")
            a.bar_label(bars, fmt="%.2f", fontsize=8)
        a.set_title("(a) max vs greedy, per topology")
        a.set_ylabel("mean link-disjoint paths per edge-router pair")
    elif panel == "sps":
        ks = [int(m[6:]) for m in sps_keys]
        colors = sequential(len(topos))
        for t, c in zip(topos, colors):
            a.plot(ks, [table[m].get(t, math.nan) for m in sps_keys], "o-", color=c, label=t)
            a.axhline(table["max"][t], color=c, ls=":", lw=1.2)
        a.plot([], [], color="#555555", ls=":", label="max (each topology's colour)")
        a.set_xticks(ks)
        a.set_xlabel("segment limit k")
        a.set_ylabel("mean link-disjoint paths per edge-router pair")
        a.set_title("(b) sps by segment limit k, per topology")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8, loc="lower right")
        return
    else:
        ratios = [table.get("greedy", {}).get(t, math.nan) / table["max"][t]
                  if table["max"][t] > 0 else math.nan for t in topos]
        bars = a.bar(xs, ratios, 0.5, color=COLORS["greedy"], label="greedy / max")
        a.bar_label(bars, fmt="%.3f", fontsize=8)
        a.axhline(1.0, color="#555555", lw=0.8, ls=":")
        a.set_ylim(0, 1.15)
        a.set_ylabel("greedy mean paths / max mean paths")
        a.set_title("(c) how close greedy comes to max")
        if reference:
            a.text(0.02, 0.02, f"paper: greedy = max on {paper.GREEDY_REACHES_MAX:.0f} % of "
                   "its topologies", transform=a.transAxes, fontsize=8)
    a.set_xticks(xs)
    a.set_xticklabels(topos, rotation=20 if len(topos) > 3 else 0, fontsize=9)
    a.grid(True, axis="y", alpha=0.3)
    a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False,
             ncol=2)

def plot_disjoint(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  panels: Sequence[str] = DISJOINT_PANELS, reference: bool = True,
                  caption: bool = True) -> Any:
    """Figure 7: link-disjoint paths per edge-router pair, CDFs over topologies.

    Parameters
    ----------
    rows
        ``tpcstudy disjoint`` rows (:func:`load_results`).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        ``"max_greedy"`` (7a), ``"sps"`` (7b: one CDF per segment limit, max dashed),
        ``"greedy_ratio"`` (greedy / max per topology; the step at 1 is the share of topologies
        where greedy reaches max).
    reference
        Draw the paper's "greedy reaches max on 70 % of topologies".

    Returns
    -------
    matplotlib.figure.Figure
    """
    for p in panels:
        if p not in DISJOINT_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(DISJOINT_PANELS)}")
    new = ax is None
    fig, axes = axes_for(ax, len(panels), width=5.0, height=4.2)
    table = mean_paths_table(rows)
    reach, both = greedy_reaches_max(table)
    n_topos = len(table.get("max", {}))
    sps_keys = sorted((m for m in table if m.startswith("sps k=")), key=lambda m: int(m[6:]))
    xlabel = "mean link-disjoint paths per edge-router pair (per topology)"
    small = 0 < n_topos <= SMALL_STUDY
    for panel, a in zip(panels, axes):
        if small:
            _plot_small(panel, a, table, sps_keys, reference)
            continue
        if panel == "max_greedy":
            for m, style in (("max", "-"), ("greedy", "--")):
                vals = list(table.get(m, {}).values())
                cdf(a, vals, color=COLORS[m], ls=style, lw=1.8,
                     label=f"{m} ({'Edmonds-Karp' if m == 'max' else 'iterative Dijkstra'}), "
                           f"mean {mean_or_nan(vals):.2f}")
            share = 100.0 * reach / both if both else math.nan
            a.text(0.03, 0.97, f"greedy = max on {reach} of {both} topologies ({share:.1f} %)"
                   + (f"\npaper: {paper.GREEDY_REACHES_MAX:.0f} %" if reference else ""),
                   transform=a.transAxes, va="top", fontsize=8,
                   bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})
            a.set_title("(a) max vs greedy")
        elif panel == "sps":
            colors = sequential(len(sps_keys))
            for m, c in zip(sps_keys, colors):
                vals = list(table[m].values())
                cdf(a, vals, color=c, lw=1.6, label=f"sps k = {m[6:]}, mean {mean_or_nan(vals):.2f}")
            mx = list(table.get("max", {}).values())
            cdf(a, mx, color="black", ls=":", lw=1.4, label=f"max, mean {mean_or_nan(mx):.2f}")
            a.set_title("(b) sps by segment limit k")
        else:
            ratios = sorted(table["greedy"][t] / table["max"][t]
                            for t in table.get("max", {}) if t in table.get("greedy", {})
                            and table["max"][t] > 0)
            n = len(ratios)
            if n:
                # share of topologies whose ratio is >= x: at x = 1, the share where greedy = max
                xs = [ratios[0]] + ratios
                ys = [1.0] + [1.0 - i / n for i in range(n)]
                a.step(xs, ys, where="post", color=COLORS["greedy"], lw=1.8,
                       label="greedy / max")
                a.plot([1.0], [reach / both], "o", color="none", mec=COLORS["greedy"], ms=12,
                       mew=1.6, label=f"ours: {100.0 * reach / both:.1f} % reach max")
                if reference:
                    a.plot([1.0], [paper.GREEDY_REACHES_MAX / 100.0], "*",
                           color=COLORS["paper"], ms=9, mec="white", mew=0.6, zorder=5,
                           label=f"paper: {paper.GREEDY_REACHES_MAX:.0f} % reach max")
            a.set_xlabel("greedy mean paths / max mean paths (per topology)")
            a.set_ylabel("share of topologies with ratio ≥ x")
            a.set_ylim(0, 1.02)
            a.set_xlim(right=1.01)
            a.set_title("(c) how close greedy comes to max")
            a.grid(True, alpha=0.3)
            if n:  # a study of one method has no ratio to draw
                a.legend(fontsize=8, loc="lower left")
            continue
        a.set_xlabel(xlabel)
        a.set_ylabel("CDF (share of topologies)")
        a.set_ylim(0, 1.02)
        lo = min([v for m in table for v in table[m].values()] or [1.0])
        a.set_xlim(min(lo, 1.0) - 0.05, max(2.0, a.get_xlim()[1]) + 0.05)
        a.grid(True, alpha=0.3)
        if panel == "sps":  # top left is free: k = 1 is the line at 1, the others rise later
            a.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(0.05, 0.99))
        else:
            a.legend(fontsize=8, loc="center right")
    if new:
        fig.suptitle("Figure 7: link-disjoint paths found per pair of edge routers "
                     "(edge router: 2 links, so at most 2 paths)"
                     + (f"; {n_topos} topolog{'y' if n_topos == 1 else 'ies'}: each shown "
                        "(the paper's CDFs need more)" if small else ""), fontsize=11)
        if caption:
            add_caption(fig, config_caption(
                rows, kind="disjoint", n_topos=n_topos,
                extra="paper, for sps: k = 1 gives 1 path, k = 4 nearly saturates, k > 4 adds "
                      "little"))
    return fig

"""Figure 6 of "The TCPPathChanger": the max-flow improvement of SR over ECMP and multipath,
boxplots over topologies per heavy-hitter percent, the paper's medians as red marks."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import UsageError
from ..study import paper
from ..study.maxflow import default_k, improvement_table, study_ks
from .common import COLORS, axes_for, config_caption, fmt_list, sequential
from .common import caption as add_caption

__all__ = ["MAXFLOW_PANELS", "plot_maxflow"]

MAXFLOW_PANELS = ("sr_ecmp", "sr_multipath", "sr_by_k", "sr_by_subflows")


def _subflow_ks(table: Mapping[Tuple[str, float], Mapping[str, float]]) -> List[int]:
    """The numbers of subflows K of the study's mptcp series."""
    return sorted({int(series.split(":")[1].split("/")[0]) for series, _ in table
                   if series.startswith("mptcp:")})


def _boxes(a: Any, groups: Sequence[float], series: Sequence[Tuple[str, str, str]],
           table: Mapping[Tuple[str, float], Mapping[str, float]],
           annotate: Sequence[str] = ()) -> Dict[Tuple[str, float], Tuple[float, float]]:
    """Grouped boxplots: one group per heavy fraction, one box per series (key, label, color).
    Returns ``{(series, heavy): (x position, median)}``."""
    n = len(series)
    width = 0.8 / n
    where: Dict[Tuple[str, float], Tuple[float, float]] = {}
    for j, (key, label, color) in enumerate(series):
        pos, data = [], []
        for g, heavy in enumerate(groups):
            vals = list(table.get((key, heavy), {}).values())
            if not vals:
                continue
            pos.append(g + (j - (n - 1) / 2) * width)
            data.append(vals)
        if not data:
            continue
        bp = a.boxplot(data, positions=pos, widths=width * 0.85, patch_artist=True,
                       manage_ticks=False, flierprops={"markersize": 2, "alpha": 0.35,
                                                       "markeredgecolor": color},
                       medianprops={"color": "black", "lw": 1.4},
                       whiskerprops={"color": color}, capprops={"color": color})
        for box in bp["boxes"]:
            box.set_facecolor(color)
            box.set_alpha(0.55)
        a.plot([], [], "s", color=color, alpha=0.7, label=label)
        for x, vals, heavy in zip(pos, data, [h for h in groups if table.get((key, h))]):
            med = statistics.median(vals)
            where[(key, heavy)] = (x, med)
            if key in annotate:
                a.annotate(f"{med:.0f}", xy=(x, med), xytext=(0, 3), textcoords="offset points",
                           ha="center", va="bottom", fontsize=7, fontweight="bold", zorder=6,
                           bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                                 "alpha": 0.75})
    a.set_xticks(range(len(groups)))
    return where


def _reference(a: Any, where: Mapping[Tuple[str, float], Tuple[float, float]], key: str,
               values: Mapping[float, float], half: float, label: str, *,
               filled: bool = True) -> None:
    """The paper's value for the box of ``key`` at each heavy fraction: a red dashed line across
    the box and a star just right of it (the box's own median number stays readable)."""
    xs, ys = [], []
    for h, v in values.items():
        if (key, h) not in where:
            continue
        x = where[(key, h)][0]
        a.plot([x - half, x + half], [v, v], ls=(0, (2, 1)), color=COLORS["paper"], lw=1.5,
               zorder=4)
        xs.append(x + half + 0.04)
        ys.append(v)
    if xs:
        a.plot(xs, ys, "*", ms=11, zorder=5, label=label,
               **({"color": COLORS["paper"], "mec": "white", "mew": 0.6} if filled else
                  {"color": "white", "mec": COLORS["paper"], "mew": 1.4}))


def _heavy_labels(groups: Sequence[float], table: Mapping[Tuple[str, float], Mapping[str, float]],
                  key: str) -> List[str]:
    return [f"{h:g} %\n(n = {len(table.get((key, h), {}))})" for h in groups]


def plot_maxflow(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                 panels: Optional[Sequence[str]] = None, k: Optional[int] = None,
                 reference: bool = True, caption: bool = True) -> Any:
    """Figure 6: max-flow improvement per heavy-hitter fraction, boxplots over topologies.

    Parameters
    ----------
    rows
        ``tpcstudy maxflow`` rows (:func:`load_results`; its ``meta.json`` feeds the caption).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        ``"sr_ecmp"`` (6a: multipath, sr and mcf over ecmp), ``"sr_multipath"`` (6b: sr over
        multipath), ``"sr_by_k"`` (sr over ecmp for every segment limit), ``"sr_by_subflows"``
        (sr over mptcp with K subflows, for every K, beside sr over multipath). Default: 6a and
        6b, plus ``sr_by_k`` when the study has several limits and ``sr_by_subflows`` when it
        has mptcp rows.
    k
        The sr segment limit of 6a/6b (default 4, else the largest present).
    reference
        Draw the paper's medians (71 % at 1 %, 30 % at 10 %; about 5 points less over
        multipath).
    caption
        Write the configuration under the figure (only for a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    ks = study_ks(rows)
    table = improvement_table(rows)
    subflows = _subflow_ks(table)
    if panels is None:
        panels = (("sr_ecmp", "sr_multipath") + (("sr_by_k",) if len(ks) > 1 else ())
                  + (("sr_by_subflows",) if subflows else ()))
    for p in panels:
        if p not in MAXFLOW_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(MAXFLOW_PANELS)}")
    k = default_k(rows) if k is None else int(k)
    if k is not None and ks and k not in ks:
        raise UsageError(f"k = {k}: the study has sr with k = {fmt_list(ks)}")
    new = ax is None
    fig, axes = axes_for(ax, len(panels), width=5.6, height=5.2)
    sr, sr_mp = f"sr k={k}", f"sr k={k}/multipath"
    medians = ", ".join(f"{v:g} %" for v in paper.MAXFLOW_MEDIANS.values())
    groups = sorted({h for (_, h) in table})
    n_topos = len({t for per in table.values() for t in per})
    for panel, a in zip(panels, axes):
        if panel == "sr_ecmp":
            where = _boxes(a, groups, [("multipath", "multipath (MPTCP over ECMP)", COLORS["multipath"]),
                                       (sr, f"sr, k = {k} (TPC)", COLORS["sr"]),
                                       ("mcf", "mcf (bound: any routing)", COLORS["mcf"])],
                           table, annotate=(sr,))
            if reference:
                _reference(a, where, sr, paper.MAXFLOW_MEDIANS, 0.8 / 3 * 0.85 / 2,
                           f"paper's median, sr ({medians})")
            a.set_xticklabels(_heavy_labels(groups, table, sr))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            a.set_title(f"(a) sr, multipath and mcf over ecmp (sr k = {k})")
        elif panel == "sr_multipath":
            where = _boxes(a, groups, [(sr_mp, f"sr, k = {k}, over multipath",
                                        COLORS["sr"])], table, annotate=(sr_mp,))
            if reference:
                _reference(a, where, sr_mp,
                           {h: v - paper.MULTIPATH_GAP for h, v in paper.MAXFLOW_MEDIANS.items()},
                           0.8 * 0.85 / 2,
                           f"paper: about {paper.MULTIPATH_GAP:g} points below (a)", filled=False)
            a.set_xticklabels(_heavy_labels(groups, table, sr_mp))
            a.set_ylabel("max-flow improvement of sr over multipath (%)")
            a.set_title(f"(b) sr over multipath (k = {k})")
        elif panel == "sr_by_subflows":
            cmap = sequential(len(subflows))
            _boxes(a, groups, [(f"sr k={k}/mptcp:{x}", f"over mptcp, K = {x}", cmap[i])
                               for i, x in enumerate(subflows)]
                   + [(sr_mp, "over multipath (every shortest path)", COLORS["multipath"])],
                   table, annotate=(sr_mp,) + tuple(f"sr k={k}/mptcp:{x}" for x in subflows[:1]))
            a.set_xticklabels(_heavy_labels(groups, table, sr_mp))
            a.set_ylabel(f"max-flow improvement of sr (k = {k}) (%)")
            a.set_title("(d) sr over MPTCP with K hashed subflows per pair")
        else:
            cmap = sequential(len(ks))
            _boxes(a, groups, [(f"sr k={j}", f"sr, k = {j}", cmap[i]) for i, j in enumerate(ks)],
                   table, annotate=tuple(f"sr k={j}" for j in ks) if len(ks) <= 3 else ())
            a.set_xticklabels(_heavy_labels(groups, table, f"sr k={ks[-1]}" if ks else sr))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            a.set_title("(c) sr over ecmp by segment limit k")
        a.set_xlabel("heavy-hitter pairs (% of ordered edge-router pairs)")
        a.set_xlim(-0.5, len(groups) - 0.5)
        a.grid(True, axis="y", alpha=0.3)
        # below the axes: the boxes can reach any height, a legend inside would hide some
        a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=2,
                 frameon=False)
        lo, hi = a.get_ylim()
        a.set_ylim(min(lo, -5), hi * 1.05)
    if new:
        fig.suptitle("Figure 6: max-flow improvement of adding IPv6 SR (boxes over topologies: "
                     "quartiles, whiskers 1.5 IQR; numbers: medians)", fontsize=11)
        if caption:
            add_caption(fig, config_caption(rows, kind="maxflow", n_topos=n_topos, k=k))
    return fig

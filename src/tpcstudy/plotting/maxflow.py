"""Figure 6 of "The TCPPathChanger": the max-flow improvement of SR over ECMP and multipath,
boxplots over topologies per heavy-hitter percent, the paper's medians as red marks."""

from __future__ import annotations

import statistics
import textwrap
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


#: Below this many topologies per box the figure shows the points themselves (a box of 4
#: values draws quartiles that do not exist).
MIN_BOX = 10


def _boxes(a: Any, groups: Sequence[float], series: Sequence[Tuple[str, str, str]],
           table: Mapping[Tuple[str, float], Mapping[str, float]],
           annotate: Sequence[str] = ()) -> Dict[Tuple[str, float], Tuple[float, float]]:
    """Grouped boxplots: one group per heavy fraction, one box per series (key, label, color);
    a series with fewer than :data:`MIN_BOX` topologies in a group is drawn as its points and
    a median bar. Returns ``{(series, heavy): (x position, median)}``."""
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
        boxed = [(x, v) for x, v in zip(pos, data) if len(v) >= MIN_BOX]
        if boxed:
            bp = a.boxplot([v for _, v in boxed], positions=[x for x, _ in boxed],
                           widths=width * 0.85, patch_artist=True, manage_ticks=False,
                           flierprops={"markersize": 2, "alpha": 0.35, "markeredgecolor": color},
                           medianprops={"color": "black", "lw": 1.4},
                           whiskerprops={"color": color}, capprops={"color": color})
            for box in bp["boxes"]:
                box.set_facecolor(color)
                box.set_alpha(0.55)
        for x, vals in ((x, v) for x, v in zip(pos, data) if len(v) < MIN_BOX):
            # the points themselves, spread evenly across the box's width, and the median
            spread = width * 0.6
            xs = [x - spread / 2 + spread * (i + 0.5) / len(vals) for i in range(len(vals))]
            a.plot(xs, sorted(vals), "o", ms=4, color=color, alpha=0.85, mec="black", mew=0.4,
                   zorder=3)
            med = statistics.median(vals)
            a.plot([x - width * 0.42, x + width * 0.42], [med, med], color="black", lw=1.4,
                   zorder=4)
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
                  key: str, demands: bool = False) -> List[str]:
    return [f"{'demand matrix' if demands else f'{h:g} %'}\n(n = {len(table.get((key, h), {}))})"
            for h in groups]


def _same(table: Mapping[Tuple[str, float], Mapping[str, float]], a: str, b: str) -> bool:
    """Series ``a`` and ``b`` equal (within LP tolerance) on every topology where both exist."""
    pairs = [(v, table[(b, h)][t]) for (s, h), per in table.items() if s == a
             and (b, h) in table for t, v in per.items() if t in table[(b, h)]]
    return bool(pairs) and all(abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in pairs)


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
    k = default_k(rows) if k is None else int(k)
    demands = bool(getattr(rows, "config", {}).get("demands"))
    if panels is None:  # the panels the study has data for: never an empty one
        panels = (("sr_ecmp",)
                  + (("sr_multipath",) if any(s == f"sr k={k}/multipath" for s, _ in table)
                     else ())
                  + (("sr_by_k",) if len(ks) > 1 else ())
                  + (("sr_by_subflows",) if subflows else ()))
    for p in panels:
        if p not in MAXFLOW_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(MAXFLOW_PANELS)}")
    if k is not None and ks and k not in ks:
        raise UsageError(f"k = {k}: the study has sr with k = {fmt_list(ks)}")
    new = ax is None
    fig, axes = axes_for(ax, len(panels), width=5.6, height=5.2)
    sr, sr_mp = f"sr k={k}", f"sr k={k}/multipath"
    medians = ", ".join(f"{v:g} %" for v in paper.MAXFLOW_MEDIANS.values())
    mp_medians = ", ".join(f"{v:g} %" for v in paper.MULTIPATH_MEDIANS.values())
    groups = sorted({h for (_, h) in table})
    n_topos = len({t for per in table.values() for t in per})
    for panel, a in zip(panels, axes):
        if panel == "sr_ecmp":
            where = _boxes(a, groups,
                           [("multipath", "multipath (any split over the shortest paths)",
                             COLORS["multipath"]),
                            (sr, f"sr, k = {k} (TPC)", COLORS["sr"]),
                            ("mcf", "mcf (bound: any routing)"
                             + (f"; = sr k = {k} on every topology" if _same(table, sr, "mcf")
                                else ""), COLORS["mcf"])],
                           table, annotate=(sr,))
            if reference and not demands:
                _reference(a, where, sr, paper.MAXFLOW_MEDIANS, 0.8 / 3 * 0.85 / 2,
                           f"paper's median, sr ({medians})")
            a.set_xticklabels(_heavy_labels(groups, table, sr, demands))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            shown = [m for m in ("sr", "multipath", "mcf")
                     if any(s == (sr if m == "sr" else m) for s, _ in table)]
            a.set_title(f"(a) {', '.join(shown) or 'sr'} over ecmp (sr k = {k})")
        elif panel == "sr_multipath":
            where = _boxes(a, groups, [(sr_mp, f"sr, k = {k}, over multipath",
                                        COLORS["sr"])], table, annotate=(sr_mp,))
            if reference and not demands:
                _reference(a, where, sr_mp, paper.MULTIPATH_MEDIANS, 0.8 * 0.85 / 2,
                           f"paper's median, sr over multipath ({mp_medians})", filled=False)
            a.set_xticklabels(_heavy_labels(groups, table, sr_mp, demands))
            a.set_ylabel("max-flow improvement of sr over multipath (%)")
            a.set_title(f"(b) sr over multipath (k = {k})")
        elif panel == "sr_by_subflows":
            cmap = sequential(len(subflows))
            _boxes(a, groups, [(f"sr k={k}/mptcp:{x}", f"over mptcp, K = {x}", cmap[i])
                               for i, x in enumerate(subflows)]
                   + [(sr_mp, "over multipath (every shortest path)", COLORS["multipath"])],
                   table, annotate=(sr_mp,) + tuple(f"sr k={k}/mptcp:{x}" for x in subflows[:1]))
            a.set_xticklabels(_heavy_labels(groups, table, sr_mp, demands))
            a.set_ylabel(f"max-flow improvement of sr (k = {k}) (%)")
            a.set_title("(d) sr over MPTCP with K hashed subflows per pair")
        else:
            cmap = sequential(len(ks))
            _boxes(a, groups, [(f"sr k={j}", f"sr, k = {j}", cmap[i]) for i, j in enumerate(ks)],
                   table, annotate=tuple(f"sr k={j}" for j in ks) if len(ks) <= 3 else ())
            a.set_xticklabels(_heavy_labels(groups, table, f"sr k={ks[-1]}" if ks else sr,
                                            demands))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            a.set_title("(c) sr over ecmp by segment limit k")
        a.set_xlabel("every pair of the demand matrix, bounded by its demand" if demands else
                     "heavy-hitter pairs (% of ordered edge-router pairs)")
        a.set_xlim(-0.5, len(groups) - 0.5)
        a.grid(True, axis="y", alpha=0.3)
        # below the axes: the boxes can reach any height, a legend inside would hide some
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=1,
                     frameon=False)
        lo, hi = a.get_ylim()
        a.set_ylim(min(lo, -5), hi * 1.05)
    if new:
        few = n_topos < MIN_BOX
        title = ("Figure 6: max-flow improvement of adding IPv6 SR ("
                 + ("points: topologies, bars: medians" if few else
                    "boxes over topologies: quartiles, whiskers 1.5 IQR; numbers: medians") + ")")
        # about 10 characters of 11 pt text per inch: one line on a wide figure, two on one panel
        fig.suptitle("\n".join(textwrap.wrap(title, max(40, int(fig.get_figwidth() * 10)))),
                     fontsize=11)
        if caption:
            add_caption(fig, config_caption(rows, kind="maxflow", n_topos=n_topos, k=k))
    return fig

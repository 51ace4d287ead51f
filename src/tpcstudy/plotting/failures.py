"""The failure study's figure (``tpcstudy maxflow --failures``): (a) the CDF over (topology,
failure) of the share each reaction retains, for ecmp and sr beside mcf's (as Figure 6 is
drawn); (b) one topology's failures as bars (the most failures, then the most links), sr's three
reactions and ecmp's re-converged value per failed link, worst first."""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Mapping, Sequence

from .common import COLORS, axes_for, caption, cdf

__all__ = ["plot_failures"]

_STYLE = {"none": ":", "hosts": "--", "reoptimised": "-"}
#: Most failures drawn as bars.
BARS = 40


def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _series(r: Mapping[str, Any]) -> str:
    k = _f(r.get("k"))
    return f"sr k={int(k)}" if r.get("model") == "sr" and k == k else str(r.get("model"))


def plot_failures(rows: Sequence[Mapping[str, Any]], ax: Any = None,
                  topology: str = "") -> Any:
    """The two panels (module docstring); ``topology`` picks panel (b)'s topology."""
    ok = [r for r in rows if (r.get("status") or "ok") == "ok"
          and math.isfinite(_f(r.get("retained")))]
    fig, axes = axes_for(ax, 2, width=5.6, height=4.4)
    a, b = axes
    series = sorted({_series(r) for r in ok})
    shown = [s for s in series if s == "ecmp" or s.startswith("sr") or s == "mcf"]
    for s in shown:
        base = "sr" if s.startswith("sr") else s
        for reaction in ("none", "hosts", "reoptimised"):
            vals = [_f(r["retained"]) for r in ok if _series(r) == s and r["reaction"] == reaction]
            if not vals or (s == "ecmp" and reaction == "hosts"):
                continue  # ecmp's hosts is its re-converged routing: the reoptimised line
            cdf(a, vals, color=COLORS.get(base, "#333333"), linestyle=_STYLE[reaction],
                label=f"{s} {reaction}: median {statistics.median(vals):.3f}")
    top = max((_f(r["retained"]) for r in ok), default=1.0)
    if top > 2.0:  # a failure that disconnects most of a matrix: its MLU says little
        a.set_xlim(right=2.0)
        a.text(0.99, 0.02, f"cut at 2 (largest {top:.1f})", transform=a.transAxes,
               ha="right", fontsize=7, color="#444444")
    objective = next((str(r.get("objective")) for r in ok), "maxflow")
    a.set_xlabel("share retained (max flow / intact)" if objective == "maxflow"
                 else "MLU headroom retained (intact MLU / MLU)")
    a.set_ylabel("share of (topology, failure)")
    a.set_title("What a single failure leaves, per reaction", fontsize=10)
    if a.get_legend_handles_labels()[0]:  # a study of other models draws no line here
        a.legend(fontsize=7, loc="upper left")
    counts: Dict[str, int] = {}
    size: Dict[str, float] = {}
    for r in ok:
        counts[str(r["topology"])] = counts.get(str(r["topology"]), 0) + 1
        size[str(r["topology"])] = _f(r.get("links"))
    # the most failures, then the most links (a links:N sample draws N everywhere)
    pick = topology or (max(counts, key=lambda t: (counts[t], size[t], t)) if counts else "")
    sr = next((s for s in reversed(series) if s.startswith("sr")), None)
    cells: Dict[str, Dict[str, float]] = {}
    for r in ok:
        if str(r["topology"]) != pick:
            continue
        label = f"{_series(r)} {r['reaction']}"
        cells.setdefault(str(r["failure"]), {})[label] = _f(r["retained"])
    bars: List[str] = [f"{sr} {x}" for x in ("none", "hosts", "reoptimised")] if sr else []
    bars += ["ecmp reoptimised"]
    rank = bars[1] if len(bars) > 2 else bars[0]  # sr's hosts: the worst first
    order = sorted(cells, key=lambda f: (cells[f].get(rank, math.inf), f))[:BARS]
    width = 0.8 / max(1, len(bars))
    for i, label in enumerate(bars):
        xs = [j + i * width for j in range(len(order))]
        ys = [cells[f].get(label, math.nan) for f in order]
        color = COLORS.get(label.split(" ")[0], "#333333")
        alpha = {"none": 0.35, "hosts": 0.65, "reoptimised": 1.0}[label.split(" ")[-1]]
        b.bar(xs, ys, width=width, color=color, alpha=alpha, label=label)
    shown_vals = [v for f in order for v in cells[f].values() if math.isfinite(v)]
    if shown_vals and min(shown_vals) > 0.5:  # zoom in: a large network loses little
        b.set_ylim(bottom=max(0.0, min(shown_vals) - 0.05))
    b.set_xticks([j + 0.4 - width / 2 for j in range(len(order))])
    b.set_xticklabels(order, rotation=90, fontsize=5)
    b.set_ylabel("share retained")
    b.set_title(f"{pick}: the {len(order)} worst failures"
                f"{' of ' + str(len(cells)) if len(cells) > len(order) else ''}", fontsize=10)
    if b.get_legend_handles_labels()[0]:
        b.legend(fontsize=7, loc="lower right")
    cfg: Dict[str, Any] = (getattr(rows, "config", {}) or {})
    topos = {str(r.get("topology")) for r in ok}
    traffic = (f"heavy {cfg.get('heavy', '?')} % of the edge-router pairs" if objective ==
               "maxflow" else f"demands {cfg.get('demands', '?')} (none: lost traffic not counted "
               "in the MLU, see lost_share)")
    caption(fig, f"{len(topos)} topolog{'y' if len(topos) == 1 else 'ies'}; failures "
                 f"{cfg.get('failures', '?')}; {traffic}; "
                 f"links {cfg.get('links', 'merged')}; none: nothing reacted, hosts: IGP "
                 f"re-converged and hosts re-split over their table, reoptimised: the LP afresh")
    return fig

"""The traffic-engineering study's figure (``tpcstudy mlu``): per model, the CDF over
topologies (and draws) of the reduction of the maximum link utilisation against plain ECMP's,
and the MLUs themselves; with ``sr-unsplit``, the CDF of its gap to the LP's MLU.

One colour (and line style) per series, mcf drawn last, dashed and thick, so that it shows
where sr lies on it; legends under the panels, off the curves; the title names the data set
and the matrix and states the finding: on how many topologies each sr series reaches mcf's MLU
(from the study's own summary, :func:`tpcstudy.study.mlu.summarize`)."""

from __future__ import annotations

import math
import statistics
import textwrap
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ..study.mlu import MLU_STUDY_MODELS, summarize
from ..study.store import cell_float
from .common import COLORS, axes_for, caption, cdf, source_name
from .emulation import plain_log_ticks

__all__ = ["plot_mlu", "series_style"]

#: Colour and line style per series; sr and sr-unsplit by segment limit (k = 2, 3, 4, ...).
_SR = ("#98df8a", "#2ca02c", "#0b5d1e", "#004d00")
_UNSPLIT = ("#ffbb78", "#ff7f0e", "#b35806", "#7f3b08")


def series_style(series: str) -> Tuple[str, str, float, int]:
    """``(colour, line style, width, z-order)`` of a series (``ecmp``, ``sr k=4``, ...): every
    series its own colour, mcf dashed on top."""
    model, _, k = series.partition(" k=")
    rank = max(0, int(k) - 2) if k.isdigit() else 0
    if model == "sr":
        return _SR[min(rank, len(_SR) - 1)], "-", 1.8, 3
    if model == "sr-unsplit":
        return _UNSPLIT[min(rank, len(_UNSPLIT) - 1)], "-.", 1.5, 2
    if model == "mcf":
        return COLORS["mcf"], "--", 2.4, 5
    return COLORS.get(model, "#333333"), "-", 1.6, 1


def _series(r: Mapping[str, Any]) -> str:
    k = cell_float(r.get("k"))
    return f"{r.get('model')} k={int(k)}" if k == k else str(r.get("model"))


def _order(s: str) -> Tuple[int, str]:
    model = s.split(" ")[0]
    # mcf last: drawn on top of the sr series it often equals
    return (99 if model == "mcf" else
            MLU_STUDY_MODELS.index(model) if model in MLU_STUDY_MODELS else 50, s)


def _legend(a: Any, n: int) -> None:
    a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False,
             ncol=2 if n > 3 else max(n, 1))


def _matrix_words(rows: Sequence[Mapping[str, Any]]) -> str:
    kinds = {str(r.get("matrix") or "") for r in rows}
    files = {k for k in kinds if k not in ("gravity", "uniform", "")}
    parts = []
    if files:
        parts.append("the demand matrices beside the topologies (.demands: REPETITA's or "
                     "SNDlib's; the files' capacities and weights)")
    for g in ("gravity", "uniform"):
        if g in kinds:
            parts.append(f"{g} matrices scaled to ECMP's MLU = 1")
    return " and ".join(parts) or "?"


def plot_mlu(rows: Sequence[Mapping[str, Any]], ax: Any = None) -> Any:
    """The panels (module docstring)."""
    ok = [r for r in rows if r.get("status") == "ok" and math.isfinite(cell_float(r.get("mlu")))]
    gaps = [100 * cell_float(r.get("gap")) for r in ok if r.get("model") == "sr-unsplit"
            and math.isfinite(cell_float(r.get("gap")))]
    new = ax is None
    fig, axes = axes_for(ax, 3 if gaps else 2, width=4.8, height=4.8)
    series: Dict[str, List[Mapping[str, Any]]] = {}
    for r in ok:
        series.setdefault(_series(r), []).append(r)
    names = sorted(series, key=_order)
    summary = {s["series"]: s for s in summarize([dict(r) for r in ok])}

    a, b = axes[0], axes[1]
    for s in names:
        if s == "ecmp":
            continue
        red = [v for v in (cell_float(r.get("reduction")) for r in series[s]) if math.isfinite(v)]
        if red:
            c, ls, lw, z = series_style(s)
            cdf(a, red, color=c, ls=ls, lw=lw, zorder=z,
                label=f"{s}: median {statistics.median(red):.1f} %")
    a.set_xlabel("MLU reduction over plain ECMP (%)")
    a.set_ylabel("share of topologies (and draws)")
    a.set_title("How much each model lowers the maximum utilisation", fontsize=10)
    a.grid(True, alpha=0.3)
    _legend(a, len(names) - 1)
    for s in names:
        c, ls, lw, z = series_style(s)
        reach = summary.get(s, {}).get("reaches_mcf")
        cdf(b, [cell_float(r["mlu"]) for r in series[s]], color=c, ls=ls, lw=lw, zorder=z,
            label=s + (f" (= mcf on {reach}/{len(series[s])})" if reach is not None else ""))
    mlus = [cell_float(r["mlu"]) for r in ok if cell_float(r["mlu"]) > 0]
    if mlus and max(mlus) / min(mlus) > 50:  # e.g. SNDlib's matrices in their own units
        b.set_xscale("log")
        plain_log_ticks(b.xaxis)
    b.set_xlabel("maximum link utilisation (1 = the busiest link full)")
    b.set_ylabel("share of topologies (and draws)")
    b.set_title("MLU of each model (left = better)", fontsize=10)
    b.grid(True, alpha=0.3)
    _legend(b, len(names))
    if gaps:
        c_ = axes[2]
        color, ls, lw, _ = series_style("sr-unsplit k=4")
        cdf(c_, gaps, color=color, lw=lw,
            label=f"sr-unsplit, every k: median {statistics.median(gaps):.2f} %, worst "
                  f"{max(gaps):.2f} %")
        c_.set_xlabel("sr-unsplit's MLU above the LP's (%)")
        c_.set_ylabel("share of topologies (and draws)")
        c_.set_title("One sr-path per demand: gap to the LP", fontsize=10)
        c_.grid(True, alpha=0.3)
        _legend(c_, 1)
    topos = {str(r.get("topology")) for r in ok}
    n = len(topos)
    if new:
        src = source_name(rows) or "the topologies given"
        finding = [f"{s} = mcf on {summary[s]['reaches_mcf']} of {summary[s]['draws']}"
                   for s in names if s.startswith("sr k") and "reaches_mcf" in summary.get(s, {})]
        head = textwrap.wrap(f"Minimum MLU of a whole demand matrix: {src}, {n} "
                             f"topolog{'y' if n == 1 else 'ies'}, {_matrix_words(ok)}",
                             int(fig.get_figwidth() * 11))
        fig.suptitle("\n".join(head + ([f"finding: {'; '.join(finding)} (mcf: any routing, "
                                         "the bound)"] if finding else [])), fontsize=11)
    cfg: Dict[str, Any] = (getattr(rows, "config", {}) or {})
    rules = (f"capacities {cfg.get('capacity', '?')}, weights {cfg.get('weight', '?')}"
             if cfg.get("capacity") != "auto" else
             "capacities and weights: the file's own with a REPETITA matrix, else uniform and hop")
    caption(fig, f"MLU: the maximum link utilisation of the best routing of the whole matrix "
                 f"under each model; reduction = 1 - MLU / ECMP's MLU; links "
                 f"{cfg.get('links', 'merged')}; {rules}")
    return fig

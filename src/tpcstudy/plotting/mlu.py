"""The traffic-engineering study's figure (``tpcstudy maxflow --objective mlu``): per model, the
CDF over topologies (and draws) of the reduction of the maximum link utilisation against plain
ECMP's, and the MLUs themselves; with ``sr-unsplit``, the CDF of its gap to the LP's MLU."""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Mapping, Sequence

from ..study.store import cell_float
from .common import COLORS, axes_for, caption, cdf

__all__ = ["plot_mlu"]

_SHADES = ("#9ecae1", "#4292c6", "#08519c", "#08306b")


def _series(r: Mapping[str, Any]) -> str:
    k = cell_float(r.get("k"))
    return f"{r.get('model')} k={int(k)}" if k == k else str(r.get("model"))


def plot_mlu(rows: Sequence[Mapping[str, Any]], ax: Any = None) -> Any:
    """The panels (module docstring)."""
    ok = [r for r in rows if r.get("status") == "ok" and math.isfinite(cell_float(r.get("mlu")))]
    gaps = [100 * cell_float(r.get("gap")) for r in ok if r.get("model") == "sr-unsplit"
            and math.isfinite(cell_float(r.get("gap")))]
    fig, axes = axes_for(ax, 3 if gaps else 2, width=4.6, height=4.2)
    series: Dict[str, List[Mapping[str, Any]]] = {}
    for r in ok:
        series.setdefault(_series(r), []).append(r)
    srs = sorted(s for s in series if s.startswith("sr"))

    def color(s: str) -> str:
        if s.startswith("sr"):
            return _SHADES[srs.index(s) % len(_SHADES)] if s.startswith("sr k") else "#d62728"
        return COLORS.get(s, "#333333")

    a, b = axes[0], axes[1]
    for s, sel in series.items():
        if s == "ecmp":
            continue
        red = [cell_float(r.get("reduction")) for r in sel if math.isfinite(cell_float(r.get("reduction")))]
        if red:
            cdf(a, red, color=color(s), label=f"{s}: median {statistics.median(red):.1f} %")
    a.set_xlabel("MLU reduction over plain ECMP (%)")
    a.set_ylabel("share of topologies (and draws)")
    a.set_title("How much SR lowers the maximum utilisation", fontsize=10)
    a.legend(fontsize=8, loc="lower right")
    for s, sel in series.items():
        cdf(b, [cell_float(r["mlu"]) for r in sel], color=color(s), label=s)
    b.set_xlabel("maximum link utilisation")
    b.set_ylabel("share of topologies (and draws)")
    b.set_title("MLU of each model", fontsize=10)
    b.legend(fontsize=8, loc="lower right")
    if gaps:
        c = axes[2]
        cdf(c, gaps, color="#d62728", label=f"median {statistics.median(gaps):.2f} %, "
                                             f"worst {max(gaps):.2f} %")
        c.set_xlabel("sr-unsplit's MLU above the LP's (%)")
        c.set_ylabel("share of topologies (and draws)")
        c.set_title("One sr-path per demand: gap to the LP", fontsize=10)
        c.legend(fontsize=8, loc="lower right")
    cfg: Dict[str, Any] = (getattr(rows, "config", {}) or {})
    topos = {str(r.get("topology")) for r in ok}
    caption(fig, f"{len(topos)} topolog{'y' if len(topos) == 1 else 'ies'}; demand matrices: "
                 f"{cfg.get('demands', '?')}; "
                 f"links {cfg.get('links', 'merged')}; capacities {cfg.get('capacity', '?')}, "
                 f"weights {cfg.get('weight', '?')}")
    return fig

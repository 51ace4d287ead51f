"""Real TCP on many topologies (``tpcstudy emulate --topo zoo``): the figure that bars per draw
cannot be.

Three panels over every (topology, heavy percent, seed) measured:

1. **How much of the LP TCP fills**: the CDF of each model's data share (measured / LP over the
   payload ceiling), the 0.9 mark drawn.
2. **SR's gain, measured against the LP's**, per topology: a point per draw (sr / ecmp), the
   diagonal where TCP gets all of the LP's gain.
3. **Figure 6 measured with TCP**: the CDF of sr's improvement over ecmp in percent, from the
   LP and from the measured goodput, with both medians.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ..study.store import cell_float
from .common import COLORS, axes_for, caption, cdf

__all__ = ["plot_throughput_zoo", "ZOO_MIN_GROUPS"]

#: From this many measured draws on, ``plot_throughput`` draws this figure instead of bars.
ZOO_MIN_GROUPS = 13


def plot_throughput_zoo(rows: Sequence[Mapping[str, Any]], ax: Any = None) -> Any:
    """The three panels (module docstring)."""
    ok = [r for r in rows if r.get("status") == "ok"]
    fig, axes = axes_for(ax, 3, width=4.6, height=4.4)
    a, g, c = axes
    models = [m for m in dict.fromkeys(str(r.get("model")) for r in ok)]
    top, low = 1.1, 0.8
    for m in models:
        vals = [v for v in (cell_float(r.get("data_share")) for r in ok if r.get("model") == m)
                if v == v]
        if vals:
            top = max(top, max(vals) + 0.03)  # ecmp's hashing can beat its LP (caveats)
            low = min(low, math.floor(10 * min(vals) - 0.5) / 10)
            over = sum(v >= 0.9 for v in vals) / len(vals)
            cdf(a, vals, color=COLORS.get(m, "#333333"),
                label=f"{m}: {over:.0%} of {len(vals)} at >= 0.9")
    a.axvline(0.9, color="#7f7f7f", linestyle=":", linewidth=1)
    a.set_xlabel("data share: measured / LP / payload ceiling")
    a.set_ylabel("share of draws")
    a.set_xlim(max(0.0, low), top)
    a.set_title("How much of the LP TCP fills", fontsize=10)
    a.legend(fontsize=8, loc="center right")

    gains: List[Tuple[float, float]] = [
        (cell_float(r.get("lp_gain")), cell_float(r.get("measured_gain")))
        for r in ok if r.get("model") == "sr"]
    gains = [p for p in gains if p[0] == p[0] and p[1] == p[1]]
    if gains:
        lo = min(0.8, min(min(p) for p in gains) - 0.05)
        hi = max(1.5, max(max(p) for p in gains) * 1.05)
        g.plot([lo, hi], [lo, hi], color="#bbbbbb", linewidth=1, label="y = x")
        g.scatter([p[0] for p in gains], [p[1] for p in gains], s=12, color=COLORS["sr"],
                  alpha=0.7, label=f"a topology's draw ({len(gains)})")
        g.set_xlim(lo, hi)
        g.set_ylim(lo, hi)
        g.set_aspect("equal")
        g.legend(fontsize=8, loc="upper left")
    g.set_xlabel("LP gain, sr / ecmp")
    g.set_ylabel("measured gain, sr / ecmp")
    g.set_title("SR's gain: TCP against the LP", fontsize=10)

    for (what, vals), color in zip((("LP", [100 * (p[0] - 1) for p in gains]),
                                    ("TCP", [100 * (p[1] - 1) for p in gains])),
                                   ("#7f7f7f", COLORS["sr"])):
        if vals:
            cdf(c, vals, color=color, label=f"{what}: median {statistics.median(vals):.1f} %")
    c.set_xlabel("improvement of sr over ecmp (%)")
    c.set_ylabel("share of draws")
    c.set_title("Figure 6 measured with real TCP", fontsize=10)
    if gains:
        c.legend(fontsize=8, loc="lower right")
    topos = {str(r.get("scenario")) for r in ok}
    heavy = sorted({cell_float(r.get("heavy")) for r in ok})
    rates = sorted({cell_float(r.get("link_mbps")) for r in ok})
    net: Dict[str, Any] = (getattr(rows, "config", {}) or {}).get("network") or {}
    caption(fig, f"{len(topos)} topologies, heavy {', '.join(f'{h:g}' for h in heavy)} %; link "
                 f"rates {rates[0]:g}-{rates[-1]:g} Mbit/s"
                 + (" (chosen per topology from the CPU budget)" if net.get("link_mbps") == "auto"
                    else "") + f"; MTU {net.get('mtu', 1500)}" if rates else "no measurement")
    return fig

"""The machine's calibration (``tpcstudy emulate check --calibrate --plot FILE``): the busy
share of the CPUs against the data packets the veths sent per second, one point per link rate
of the sweep, the fitted line (its slope is the cost per packet) and the budget line at which
``--link-mbps auto`` plans its runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..emulate.experiments.budget import CPU_LIMIT, DEFAULT_BUDGET, Calibration
from .common import axes_for, caption

__all__ = ["plot_calibration"]


def plot_calibration(cal: Calibration, ax: Any = None, *, budget: float = DEFAULT_BUDGET) -> Any:
    """The calibration's points and line (module docstring)."""
    fig, (ax,) = axes_for(ax, 1, width=6.4, height=4.4)
    pts = np.asarray([list(p) for p in cal.points if p[1] > 0] or [[0.0, 0.0, 0.0]])
    ax.scatter(pts[:, 1] / 1e3, pts[:, 2], color="#1f77b4", zorder=3, label="measured")
    for r, x, y in pts:
        ax.annotate(f"{r:g} Mbit/s", (x / 1e3, y), textcoords="offset points", xytext=(6, -10),
                    fontsize=7, color="#555555")
    xmax = max(float(pts[:, 1].max()), (1.0 - cal.base_busy) * cal.cpus * cal.packets_per_core)
    xs = np.linspace(0.0, xmax, 50)
    ax.plot(xs / 1e3, [cal.base_busy + cal.busy(x) for x in xs], color="#d62728",
            label=f"fit: {cal.packets_per_core / 1e3:.1f}k packets/s per CPU, "
                  f"{cal.base_busy:.0%} idle load")
    for y, what, style in ((cal.base_busy + budget,
                            f"auto's budget ({budget:.0%} above the idle load)", ":"),
                           (CPU_LIMIT, f"CPU-bound ({CPU_LIMIT:.0%}): measured again", "--")):
        ax.axhline(y, color="#7f7f7f", linestyle=style, linewidth=1)
        ax.text(0.0, y + 0.01, what, fontsize=7, color="#555555")
    ax.set_xlabel("data packets sent by the veths (thousands per second)")
    ax.set_ylabel(f"busy share of the machine's {cal.cpus} CPUs")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(0, xmax / 1e3 * 1.05)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("What forwarding costs this machine", fontsize=10)
    caption(fig, f"TCP over a chain of routers at rising link rates (HTB, bfifo, MTU {cal.mtu}); "
                 f"{cal.machine.get('cpu') or 'CPU'}, kernel {cal.machine.get('kernel')}, "
                 f"measured {cal.measured}")
    return fig

"""The machine's calibration (``tpcstudy emulate check --calibrate --plot FILE``): the busy
share of the CPUs against the packets the veths sent per second (data, ACKs, retransmissions),
one point per link rate of the sweep, the fitted line (its slope is the cost per packet), the
grid's cost beside it, and the budget line at which ``--link-mbps auto`` plans its runs."""

from __future__ import annotations

import math
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
    xmax = max(float(pts[:, 1].max()), (1.0 - cal.base_busy) * cal.cpus * cal.packets_per_core)
    last = -math.inf
    for r, x, y in sorted(pts.tolist(), key=lambda p: p[1]):
        if x - last >= 0.05 * xmax:  # the slow rates crowd the origin: one label each 5 %
            ax.annotate(f"{r:g} Mbit/s", (x / 1e3, y), textcoords="offset points",
                        xytext=(6, -10), fontsize=7, color="#555555")
            last = x
    xs = np.linspace(0.0, xmax, 50)
    # the fit is per packet a veth sends, the x axis's unit (busy() takes data packets)
    ax.plot(xs / 1e3, cal.base_busy + xs * cal.seconds_per_packet / cal.cpus, color="#d62728",
            label=f"fit on a chain of {cal.routers} routers: {cal.packets_per_core / 1e3:.1f}k "
                  f"packets/s per CPU, {cal.base_busy:.0%} idle load")
    if cal.scale_routers > cal.routers and cal.scale_seconds_per_packet > 0:
        ax.plot(xs / 1e3, cal.base_busy + xs * cal.scale_seconds_per_packet / cal.cpus,
                color="#ff7f0e", linestyle="--",
                label=f"a grid of {cal.scale_routers} routers: "
                      f"{1e-3 / cal.scale_seconds_per_packet:.1f}k packets/s per CPU, "
                      f"{cal.packets_per_data:.2f} packets per data packet")
    for y, what, style in ((cal.base_busy + budget,
                            f"auto's budget ({budget:.0%} above the idle load)", ":"),
                           (CPU_LIMIT, f"CPU-bound ({CPU_LIMIT:.0%}): measured again", "--")):
        ax.axhline(y, color="#7f7f7f", linestyle=style, linewidth=1)
        ax.text(0.0, y + 0.01, what, fontsize=7, color="#555555")
    ax.set_xlabel("packets sent by the veths: data, ACKs, retransmissions (thousands per second)")
    ax.set_ylabel(f"busy share of the machine's {cal.cpus} CPUs")
    ax.set_ylim(0, 1.3)  # the legend above the lines, clear of the points
    ax.set_xlim(0, xmax / 1e3 * 1.05)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("What forwarding costs this machine", fontsize=10)
    caption(fig, f"TCP over a chain of routers at rising link rates, then across a grid (HTB, "
                 f"bfifo, MTU {cal.mtu}); "
                 f"{cal.machine.get('cpu') or 'CPU'}, kernel {cal.machine.get('kernel')}, "
                 f"measured {cal.measured}")
    return fig

"""The link-failure experiment's figure (``emulate failures``): per scenario, goodput over time
per reaction (mean over draws, the cut at 0) beside the intact and the reoptimised LP, and the
CDF of the connections' recovery times per reaction."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..emulate.experiments.failures import REACTIONS, float_list
from ..emulate.experiments.recovery import BIN
from .common import axes_for, cdf

__all__ = ["plot_failure_experiment"]

COLORS = {"none": "#888888", "hosts": "#1f77b4", "controller": "#d62728"}


def plot_failure_experiment(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  title: Optional[str] = None) -> Any:
    ok = [r for r in rows if r.get("status") == "ok"]
    scen = sorted({str(r["scenario"]) for r in ok}) or ["(no rows)"]
    fig, axes = axes_for(ax, 2 * len(scen), width=5.5, height=3.8)
    for i, sc in enumerate(scen):
        a_t, a_c = axes[2 * i], axes[2 * i + 1]
        sel = [r for r in ok if r["scenario"] == sc]
        at = float(sel[0]["at"]) if sel else 0.0
        for re_ in REACTIONS:
            rr = [r for r in sel if r["reaction"] == re_]
            if not rr:
                continue
            series = [float_list(r["series"]) for r in rr]
            n = min(len(s) for s in series)
            mean = np.mean([s[:n] for s in series], axis=0)
            t = np.arange(n) * BIN - at
            a_t.plot(t, mean, color=COLORS[re_], lw=1.2, label=f"{re_} ({len(rr)} draws)")
            rec = [v for r in rr for v in float_list(r["recovery_s"])]
            lost = sum(1 for v in rec if not math.isfinite(v))
            right = 10.0
            if rec:
                med = sorted(rec)[len(rec) // 2]
                cdf(a_c, [min(v, right) for v in rec], color=COLORS[re_],
                    label=f"{re_}: median {med:.3g} s, lost {lost}/{len(rec)}")
        if sel:
            a_t.axhline(float(sel[0]["lp_intact"]), color="k", ls="--", lw=0.8, label="LP intact")
            a_t.axhline(float(sel[0]["lp_reoptimised"]), color="k", ls=":", lw=0.8,
                        label="LP reoptimised (failed graph)")
        a_t.axvline(0, color="#444444", lw=0.6)
        a_t.set_xlabel("time since the cut (s)")
        a_t.set_ylabel("goodput (link units)")
        a_t.set_title(title or f"{sc}: cut {sel[0]['cut'] if sel else ''}", fontsize=10)
        if a_t.get_legend_handles_labels()[0]:
            a_t.legend(fontsize=7)
        a_c.set_xscale("log")
        a_c.set_xlabel("recovery time (s; lost at the right edge)")
        a_c.set_ylabel("share of hit connections")
        a_c.set_ylim(0, 1.02)
        if a_c.get_legend_handles_labels()[0]:
            a_c.legend(fontsize=7, loc="lower right")
    return fig



"""Figures of the emulator (drawing only: rows in, a matplotlib figure out, optional ``ax``).

- :func:`plot_throughput`: per measured draw, the LP value (outlined bar) and the measured
  goodput (filled bar) of each model in link units, the ratio above each; beside it, the sr gain
  over ecmp, LP against measured.
- :func:`plot_recovery`: the CDF of the recovery time of each failover strategy, the median in
  the legend; runs that did not recover sit at the right edge.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["plot_throughput", "plot_recovery", "MODEL_COLORS", "STRATEGY_COLORS"]

MODEL_COLORS = {"ecmp": "#7f7f7f", "multipath": "#1f77b4", "sr": "#2ca02c"}
STRATEGY_COLORS = {"plain": "#7f7f7f", "nrto": "#d62728", "timeout": "#1f77b4"}


def _num(x: Any) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v


def _axes(ax: Any, n: int, width: float, height: float) -> Tuple[Any, List[Any]]:
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        axes = list(fig.subplots(1, n, width_ratios=[3, 1][:n] if n == 2 else None)) \
            if n > 1 else [fig.subplots()]
        return fig, axes
    axes = [ax] if not isinstance(ax, (list, tuple)) and not hasattr(ax, "flat") else \
        list(getattr(ax, "flat", ax))
    if len(axes) != n:
        raise ValueError(f"{n} panel(s) to draw but {len(axes)} axes given")
    return axes[0].figure, axes


def _label(r: Mapping[str, Any]) -> str:
    h, s = r.get("heavy"), r.get("seed")
    name = str(r.get("scenario"))
    if h in (None, "") and s in (None, ""):
        return name
    hv = _num(h)
    return f"{name}\n{hv:g}% s{s}" if hv is not None else f"{name}\ns{s}"


def plot_throughput(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                    title: Optional[str] = None) -> Any:
    """Measured goodput against the LP, per draw and model (module docstring)."""
    ok = [r for r in rows if r.get("status") == "ok" and _num(r.get("lp_value")) is not None]
    groups: Dict[Tuple[str, str, str], Dict[str, Mapping[str, Any]]] = {}
    for r in ok:
        groups.setdefault((str(r.get("scenario")), str(r.get("heavy")), str(r.get("seed"))),
                          {})[str(r["model"])] = r
    models = [m for m in ("ecmp", "multipath", "sr") if any(m in g for g in groups.values())]
    has_gain = any("sr" in g and "ecmp" in g for g in groups.values())
    fig, axes = _axes(ax, 2 if has_gain else 1, max(6.0, 1.2 + 0.9 * len(groups) * len(models)
                                                   + (2.5 if has_gain else 0)), 4.2)
    a = axes[0]
    width = 0.8 / max(1, len(models))
    keys = list(groups)
    for mi, m in enumerate(models):
        xs, lp, meas = [], [], []
        for gi, k in enumerate(keys):
            r = groups[k].get(m)
            if r is None:
                continue
            xs.append(gi - 0.4 + width * (mi + 0.5))
            lp.append(float(r["lp_value"]))
            meas.append(float(r["measured"]))
        c = MODEL_COLORS.get(m, "#333333")
        a.bar(xs, lp, width * 0.95, fill=False, edgecolor=c, linewidth=1.5)
        a.bar(xs, meas, width * 0.6, color=c, label=m)
        for x, l, v in zip(xs, lp, meas):
            if l > 0:
                a.text(x, max(l, v), f"{v / l:.2f}", ha="center", va="bottom", fontsize=7)
    a.set_xticks(range(len(keys)))
    a.set_xticklabels([_label(next(iter(groups[k].values()))) for k in keys], fontsize=8)
    a.set_ylabel("throughput (link units)")
    a.set_title(title or "measured TCP goodput (filled) vs the LP (outline)", fontsize=10)
    a.legend(fontsize=8, loc="upper left")
    a.set_ylim(0, max([float(r["lp_value"]) for r in ok] + [1.0]) * 1.15)
    if has_gain:
        g = axes[1]
        pts = [(float(gr["sr"]["lp_gain"]), float(gr["sr"]["measured_gain"]))
               for gr in groups.values() if "sr" in gr and _num(gr["sr"].get("measured_gain"))]
        if pts:
            lo = 0.9
            hi = max(max(p) for p in pts) * 1.1
            g.plot([lo, hi], [lo, hi], color="#bbbbbb", linewidth=1)
            g.scatter([p[0] for p in pts], [p[1] for p in pts], color=MODEL_COLORS["sr"], s=18)
            g.set_xlim(lo, hi)
            g.set_ylim(lo, hi)
        g.set_xlabel("LP gain sr / ecmp")
        g.set_ylabel("measured gain sr / ecmp")
        g.set_title("gain", fontsize=10)
    return fig


def plot_recovery(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  title: Optional[str] = None) -> Any:
    """CDF of recovery times per failover strategy (module docstring)."""
    fig, (a,) = _axes(ax, 1, 6.0, 4.0)
    by: Dict[str, List[float]] = {}
    params: Dict[str, str] = {}
    for r in rows:
        if r.get("status") not in ("ok", "not recovered"):
            continue
        v = _num(r.get("recovery_s"))
        if v is None:
            continue
        by.setdefault(str(r["strategy"]), []).append(v)
        params[str(r["strategy"])] = str(r.get("param") or "")
    finite = [v for vs in by.values() for v in vs if math.isfinite(v)]
    right = max(finite) * 1.5 if finite else 10.0
    for name in sorted(by, key=lambda n: list(STRATEGY_COLORS).index(n)
                       if n in STRATEGY_COLORS else 99):
        vs = sorted(min(v, right) for v in by[name])
        n = len(vs)
        med = sorted(by[name])[n // 2] if n % 2 else 0.5 * (sorted(by[name])[n // 2 - 1]
                                                            + sorted(by[name])[n // 2])
        lab = f"{name}{' ' + params[name] if params[name] else ''}: median {med:.2f} s (n={n})"
        ys = [(i + 1) / n for i in range(n)]
        a.step([vs[0]] + vs, [0.0] + ys, where="post", label=lab,
               color=STRATEGY_COLORS.get(name, "#333333"))
    a.set_xscale("log")
    a.set_xlabel("recovery time (s)")
    a.set_ylabel("fraction of runs")
    a.set_ylim(0, 1.02)
    a.set_title(title or "failure of a link on the connection's path", fontsize=10)
    a.legend(fontsize=8, loc="lower right")
    return fig

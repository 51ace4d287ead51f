"""The emulator's figures (``tpcstudy emulate``): real TCP against the LP, and failure recovery.

- :func:`plot_throughput`: per measured draw, the LP value (outlined bar; for ``mptcp:K`` the
  analytic model's value) and the measured goodput (filled bar) of each model in link units,
  measured / LP above each; beside it the sr gain over ecmp, measured against the LP's (the
  diagonal: TCP gets all of the LP's gain). From :data:`~.zoo_emulation.ZOO_MIN_GROUPS` draws
  on (a whole-Zoo run), :func:`~.zoo_emulation.plot_throughput_zoo` instead.
- :func:`plot_verify` (``emulate verify``): per source router, the table's paths delivered on
  their links and those that were not; per map layout, the maps loaded and byte-identical.
- :func:`plot_recovery`: the CDF over runs of the recovery time of each failover strategy
  (NRTOChanger, TimeoutChanger, plain TCP), the median in the legend; runs that did not recover
  sit at the right edge.

With repeated draws (``--repeat``) every bar or line is the mean over the draws and its error
bar the 95 % Student t interval (medians of completion times: the percentile-bootstrap interval
over the draws), as ``summary.csv`` gives them.
"""

from __future__ import annotations

import math
import textwrap
import zlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import (
    FixedLocator,
    FormatStrFormatter,
    FuncFormatter,
    LogLocator,
    NullFormatter,
)

from ..emulate.experiments.failover import recovery_summary
from ..metrics import mean_interval, median_interval
from ..study.store import cell_number
from .common import COLORS, axes_for, cdf
from .zoo_emulation import ZOO_MIN_GROUPS, plot_throughput_zoo

__all__ = ["plot_throughput", "plot_recovery", "plot_dumbbell", "plot_fault", "plot_policies",
           "plot_verify",
           "STRATEGY_COLORS", "POLICY_COLORS", "policy_color"]

#: mptcp:K bars, lightest for the fewest subflows.
MPTCP_SHADES = ("#fdd0a2", "#fdae6b", "#fd8d3c", "#e6550d", "#a63603")
STRATEGY_COLORS = {"plain": "#7f7f7f", "nrto": "#d62728", "timeout": "#1f77b4"}


def _err(values: Sequence[float], stat: str = "mean",
         bounds: Tuple[float, float] = (-math.inf, math.inf)) -> Tuple[float, List[List[float]]]:
    """The value and matplotlib's ``yerr`` of its 95 % interval over draws (none for one
    draw), the interval cut to ``bounds`` (a share's: [0, 1]) as in the tables."""
    v, lo, hi = (mean_interval if stat == "mean" else median_interval)(values)
    if math.isnan(lo) or math.isinf(v):
        return v, [[0.0], [0.0]]
    lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return v, [[max(0.0, v - lo)], [max(0.0, hi - v)]]


def plain_log_ticks(axis: Any) -> None:
    """Ticks of a log axis in plain numbers (0.05, 0.1, 0.2, 0.5, 1, 2, 5, ...; never 10^-1);
    over more than three decades (the data drawn so far) one tick per decade."""
    lo, hi = sorted(axis.get_data_interval())
    wide = lo > 0 and math.isfinite(hi / lo) and hi / lo > 1e3
    axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _label(r: Mapping[str, Any]) -> str:
    h, s = cell_number(r.get("heavy"), finite=False), r.get("seed")
    name = str(r.get("scenario"))
    return name if h is None else f"{name}\n{h:g} % heavy pairs, seed {s}"


def plot_throughput(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                    title: Optional[str] = None) -> Any:
    """Measured goodput against the LP, per draw and model (module docstring). ``ax``: one Axes,
    or two when the rows have both ecmp and sr (the gain panel)."""
    ok = [r for r in rows if r.get("status") == "ok"
          and cell_number(r.get("lp_value"), finite=False) is not None]
    groups: Dict[Tuple[str, str, str], Dict[str, List[Mapping[str, Any]]]] = {}
    for r in ok:
        key = (str(r.get("scenario")), str(r.get("heavy")), str(r.get("seed")))
        groups.setdefault(key, {}).setdefault(str(r["model"]), []).append(r)
    if len(groups) >= ZOO_MIN_GROUPS and ax is None:  # bars per draw would be unreadable
        return plot_throughput_zoo(rows)
    mptcp = sorted({m for g in groups.values() for m in g if m.startswith("mptcp:")},
                   key=lambda m: int(m.split(":")[1]))
    models = [m for m in ("ecmp", *mptcp, "multipath", "sr") if any(m in g for g in groups.values())]
    gains = [(float(r["lp_gain"]), float(r["measured_gain"]))
             for g in groups.values() for r in g.get("sr", [])
             if cell_number(r.get("measured_gain"), finite=False)
             and cell_number(r.get("lp_gain"), finite=False)]
    fig, axes = axes_for(ax, 2 if gains else 1, width=max(4.0, 1.0 + 1.2 * len(groups)),
                         height=4.2)
    a = axes[0]
    width = 0.8 / max(1, len(models))
    keys = list(groups)
    for mi, m in enumerate(models):
        xs, lp, meas = [], [], []
        err: List[List[float]] = [[], []]
        for gi, k in enumerate(keys):
            sel = groups[k].get(m)
            if sel:
                xs.append(gi - 0.4 + width * (mi + 0.5))
                lp.append(float(np.mean([float(r["lp_value"]) for r in sel])))
                v, e = _err([float(r["measured"]) for r in sel])
                meas.append(v)
                err[0] += e[0]
                err[1] += e[1]
        c = COLORS.get(m, MPTCP_SHADES[mptcp.index(m) % len(MPTCP_SHADES)] if m in mptcp
                       else "#333333")
        a.bar(xs, lp, width * 0.95, fill=False, edgecolor=c, linewidth=1.5)
        a.bar(xs, meas, width * 0.6, color=c, label=m)
        if any(err[0]) or any(err[1]):
            a.errorbar(xs, meas, yerr=err, fmt="none", ecolor="black", elinewidth=1, capsize=2)
        for x, lv, v in zip(xs, lp, meas):
            if lv > 0:  # upright labels collide beyond four bars per draw
                a.text(x, max(lv, v), f"{v / lv:.0%}", ha="center", va="bottom",
                       fontsize=7 if len(models) <= 4 else 6,
                       rotation=0 if len(models) <= 4 else 90)
    a.set_xticks(range(len(keys)))
    a.set_xticklabels([_label(next(iter(groups[k].values()))[0]) for k in keys], fontsize=8)
    a.set_ylabel("throughput (link units: 1 = the smallest link's rate)")
    a.set_ylim(0, max([float(r["lp_value"]) for r in ok] + [1.0]) * (1.15 if len(models) <= 4
                                                                     else 1.45))
    net = (getattr(rows, "config", {}) or {}).get("network") or {}
    mtu = f", MTU {net['mtu']}" if net.get("mtu") else ""
    a.set_title(title or "\n".join(["TCP goodput (filled) vs the LP (outline)",
                                     "on each bar: measured / LP"]
                                    + textwrap.wrap(f"({_settings(ok)}{mtu})", 46)), fontsize=9)
    # below the axes: inside, it would sit on the tallest bars
    handles, labels = a.get_legend_handles_labels()
    handles.append(Patch(fill=False, edgecolor="#555555", linewidth=1.5))
    labels.append("the LP (outline)")
    a.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16),
             frameon=False, ncol=min(len(models) + 1, 5))
    if gains:
        g = axes[1]
        # never a one-point axis zoomed onto its own noise: from below 1 to at least 1.5
        lo = min(0.9, min(min(p) for p in gains) - 0.05)
        hi = max(1.5, max(max(p) for p in gains) * 1.1)
        g.plot([lo, hi], [lo, hi], color="#bbbbbb", linewidth=1, label="y = x: TCP gets the "
               "LP's gain")
        g.scatter([p[0] for p in gains], [p[1] for p in gains], color=COLORS["sr"], s=18,
                  label=f"a draw ({len(gains)})")
        g.set_xlim(lo, hi)
        g.set_ylim(lo, hi)
        g.set_aspect("equal")
        g.set_xlabel("LP gain, sr / ecmp")
        g.set_ylabel("measured gain, sr / ecmp")
        g.set_title("gain of SR over ECMP: the LP's vs TCP's", fontsize=10)
        g.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    return fig


def plot_recovery(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  title: Optional[str] = None) -> Any:
    """CDF of the recovery times per failover strategy (module docstring)."""
    fig, (a,) = axes_for(ax, 1, width=6.0, height=4.0)
    by: Dict[str, List[float]] = {}
    for r in rows:
        v = cell_number(r.get("recovery_s"), finite=False)
        if r.get("status") in ("ok", "not recovered") and v is not None and not math.isnan(v):
            by.setdefault(str(r["strategy"]), []).append(v)
    finite = [v for vs in by.values() for v in vs if math.isfinite(v)]
    right = max(finite) * 1.5 if finite else 10.0
    for s in recovery_summary(rows):
        name = s["strategy"]
        if name not in by:
            continue
        lab = (f"{name}{' ' + s['param'] if s['param'] else ''}: median {s['median']:.2f} s "
               f"({s['hit']} runs)")
        cdf(a, [min(v, right) for v in by[name]], label=lab,
            color=STRATEGY_COLORS.get(name, "#333333"))
    a.set_xscale("log")
    lo = min(finite) / 1.5 if finite else 0.1
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo <= t <= right]
    a.xaxis.set_major_locator(FixedLocator(ticks))
    a.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    a.xaxis.set_minor_formatter(NullFormatter())
    a.set_xlim(lo, right)
    a.set_xlabel("recovery time (s)")
    a.set_ylabel("share of runs")
    a.set_ylim(0, 1.02)
    a.set_title(title or "a link of the connection's path fails", fontsize=10)
    a.legend(fontsize=8, loc="lower right")
    return fig


def _yes(x: Any) -> bool:
    """A boolean cell: ``True`` in memory, ``true`` read back from ``results.csv``."""
    return x is True or str(x).lower() == "true"


def plot_verify(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                title: Optional[str] = None) -> Any:
    """An exported path table checked on the emulated network (module docstring). ``ax``: two
    Axes."""
    fig, (a, b) = axes_for(ax, 2, width=9.0, height=3.6)
    paths: Dict[str, List[int]] = {}
    for r in rows:
        if r.get("check") == "path":
            paths.setdefault(str(r.get("source")), [0, 0])[r.get("status") != "ok"] += 1
    names = sorted(paths)
    xs = np.arange(len(names))
    good = [paths[n][0] for n in names]
    a.bar(xs, good, color="#2ca02c", label="delivered on its links")
    a.bar(xs, [paths[n][1] for n in names], bottom=good, color="#d62728", label="not")
    a.set_xticks(xs, names, rotation=60, ha="right", fontsize=7)
    a.set_ylabel("paths")
    a.set_title(title or "paths of the table, by source router", fontsize=10)
    a.legend(fontsize=8)
    maps: Dict[str, List[int]] = {}
    for r in rows:
        if r.get("check") == "map":
            m = maps.setdefault(str(r.get("variant")), [0, 0, 0])
            m[0] += 1
            m[1] += _yes(r.get("loaded"))
            m[2] += _yes(r.get("identical"))
    variants = sorted(maps)
    vx = np.arange(len(variants))
    for i, (label, color) in enumerate((("maps", "#bbbbbb"), ("loaded", "#1f77b4"),
                                        ("byte-identical", "#2ca02c"))):
        b.bar(vx + (i - 1) * 0.27, [maps[v][i] for v in variants], width=0.27, color=color,
              label=label)
    b.set_xticks(vx, variants, fontsize=8)
    b.set_ylabel("maps")
    b.set_title("bpf maps per layout", fontsize=10)
    b.legend(fontsize=8)
    return fig


def plot_dumbbell(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  title: Optional[str] = None) -> Any:
    """SEMPER's dumbbell with real MPTCP: total throughput (paths; dashed: the mptcp:K model's
    value) and Jain's index over the hosts, against the subflows K, one line per P (the mean over
    the hash seeds; each seed a light dot). ``ax``: two Axes."""
    by_p: Dict[int, List[Mapping[str, Any]]] = {}
    for r in rows:
        if (cell_number(r.get("measured"), finite=False) is not None
                and cell_number(r.get("paths"), finite=False) is not None):
            by_p.setdefault(int(float(r["paths"])), []).append(r)
    fig, axes = axes_for(ax, 2, width=8.0, height=3.6)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for i, (p, rs) in enumerate(sorted(by_p.items())):
        c = colors[i % len(colors)]
        ks = sorted({float(r["subflows"]) for r in rs})
        for col, a in (("measured", axes[0]), ("jain", axes[1])):
            # each hash seed a light dot, their mean the line
            a.scatter([float(r["subflows"]) for r in rs], [float(r[col]) for r in rs], color=c,
                      alpha=0.35, s=14)
            stats = [_err([float(r[col]) for r in rs if float(r["subflows"]) == k],
                          bounds=(0.0, 1.0) if col == "jain" else (-math.inf, math.inf))
                     for k in ks]
            a.errorbar(ks, [s[0] for s in stats],
                       yerr=[[s[1][0][0] for s in stats], [s[1][1][0] for s in stats]],
                       marker="o", color=c, label=f"P={p}", capsize=2)
        model = [float(next(r["model_value"] for r in rs if float(r["subflows"]) == k))
                 for k in ks]
        axes[0].plot(ks, model, linestyle="--", color=c, linewidth=1)
    allk = sorted({float(r["subflows"]) for rs in by_p.values() for r in rs})
    for a in axes:
        a.set_xscale("log", base=2)
        a.xaxis.set_major_locator(FixedLocator(allk))
        a.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        a.xaxis.set_minor_formatter(NullFormatter())
        a.set_xlabel("subflows per connection (K)")
    axes[0].set_ylabel("total goodput (paths)")
    axes[0].set_title(title or "real MPTCP (dots) vs the mptcp:K model (dashed)", fontsize=10)
    axes[0].legend(fontsize=8)
    axes[1].set_ylabel("Jain's index over hosts")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("fairness", fontsize=10)
    return fig


def plot_fault(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
               title: Optional[str] = None) -> Any:
    """SEMPER's fault test: total goodput (paths) and Jain's index per 1 s window, one line per
    strategy, the failure marked. ``ax``: two Axes."""
    fig, axes = axes_for(ax, 2, width=8.0, height=3.4)
    colors = {"mptcp": "#2ca02c", "tcp+timeout": "#d62728"}
    fail = None
    for strat in dict.fromkeys(str(r["strategy"]) for r in rows):
        for j, seed in enumerate(dict.fromkeys(str(r.get("seed")) for r in rows
                                               if str(r["strategy"]) == strat)):
            rs = sorted((r for r in rows if str(r["strategy"]) == strat
                         and str(r.get("seed")) == seed), key=lambda r: float(r["second"]))
            xs = [float(r["second"]) + 0.5 for r in rs]
            c = colors.get(strat, "#333333")
            label = strat if j == 0 else None
            axes[0].plot(xs, [float(r["total"]) for r in rs], marker="o", ms=3, color=c,
                         label=label, alpha=0.8)
            axes[1].plot(xs, [float(r["jain"]) for r in rs], marker="o", ms=3, color=c,
                         label=label, alpha=0.8)
            fail = cell_number(rs[0].get("fail_after"), finite=False) if rs else fail
    for a in axes:
        if fail is not None:
            a.axvline(fail, color="#999999", linestyle=":", linewidth=1)
        a.set_xlabel("seconds")
    axes[0].set_ylabel("total goodput (paths)")
    axes[0].set_ylim(bottom=0)
    axes[0].set_title(title or "a path fails (dotted): throughput", fontsize=10)
    axes[0].legend(fontsize=8)
    axes[1].set_ylabel("Jain's index over hosts, per 1 s")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("fairness", fontsize=10)
    return fig


#: One colour per policy in every figure (runs and folders agree); mptcp:K in oranges.
POLICY_COLORS = {"ecmp": "#7f7f7f", "random": "#bcbd22", "lp": "#2ca02c", "exp3": "#1f77b4",
                 "ba-rtt": "#9467bd", "ba-throughput": "#8c564b", "queue-max": "#d62728",
                 "queue-sum": "#e377c2"}
#: mptcp:K by K (1, 2, 3, 4, 6, 8, 16, 32+), darker with more subflows.
MPTCP_POLICY_SHADES = ("#fdd0a2", "#fdae6b", "#fd8d3c", "#f16913", "#e6550d", "#d94801",
                       "#a63603", "#7f2704")
_MPTCP_KS = (1, 2, 3, 4, 6, 8, 16, 32)
#: Policies of no known family (none of POLICY_COLORS' colours).
_OTHER = ("#17becf", "#393b79", "#637939", "#7b4173", "#843c39", "#5254a3")


def _tint(color: str, t: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    mix = (lambda c: c + (255 - c) * t) if t > 0 else (lambda c: c * (1 + t))
    return "#" + "".join(f"{int(round(mix(c))):02x}" for c in (r, g, b))


def policy_color(name: str) -> str:
    """The colour of policy ``name``, from its name alone (never from a run's order): fixed for
    the known policies, their variants (``exp3:0.2``, ``exp3:0.1:16k``) a tint of the family's
    (``exp3:0.1``, the default, is the family's own), ``mptcp:K`` a shade by K."""
    base, _, variant = name.partition(":")
    if base == "mptcp":  # K = 1, 2, 3, 4, 6, 8, 16, 32+: darker with more subflows
        k = cell_number(variant, finite=False) or 1.0
        i = min(range(len(_MPTCP_KS)), key=lambda j: abs(_MPTCP_KS[j] - k))
        return MPTCP_POLICY_SHADES[i]
    if base in POLICY_COLORS:
        if variant in ("", "0.1") and base == "exp3" or not variant:
            return POLICY_COLORS[base]
        gamma, _, hook = variant.partition(":")
        g = cell_number(gamma, finite=False)
        if base == "exp3" and g is not None and 0 < g <= 1:
            # EXP3's Gamma on a scale: 0.01 dark, 0.1 the family's own, 1 light; a hook
            # (re-deciding every HOOK bytes) darker by 0.3
            t = max(-0.7, min(0.75, 0.35 * math.log2(g / 0.1))) - (0.3 if hook else 0.0)
            return _tint(POLICY_COLORS[base], t)
        # another variant: the family's colour lightened or darkened by an amount its name
        # fixes (crc32: the same in every process), at least 0.2 away from the family's own
        f = zlib.crc32(variant.encode()) / 2 ** 32
        t = -0.6 + 1.3 * f
        return _tint(POLICY_COLORS[base], t + (0.4 if 0 <= t < 0.2 else -0.4 if -0.2 < t < 0
                                               else 0.0))
    return _OTHER[zlib.crc32(name.encode()) % len(_OTHER)]


def _policy_order(rows: Sequence[Mapping[str, Any]]) -> List[str]:
    """The policies in the order the run was given them (its ``meta.json``), then any other."""
    cfg = (getattr(rows, "config", {}) or {}).get("policies") or []
    if isinstance(cfg, dict):  # the run's settings: {"policies": [...], "seconds": ...}
        cfg = cfg.get("policies") or []
    given = [str(p) for p in cfg]
    seen = list(dict.fromkeys(str(r["policy"]) for r in rows))
    return [p for p in given if p in seen] + [p for p in seen if p not in given]


def _settings(rows: Sequence[Mapping[str, Any]]) -> str:
    """Link rate, window and draws of a policies run, for its title."""
    r = rows[0] if rows else {}
    parts = []
    if cell_number(r.get("link_mbps"), finite=False):
        parts.append(f"{float(r['link_mbps']):g} Mbit/s links")
    if cell_number(r.get("seconds"), finite=False):
        # the window as run (a row may hold the seconds measured, 9.9999 for 10)
        parts.append(f"{round(float(r['seconds']), 1):g} s window after "
                     f"{round(float(r.get('warmup') or 0), 1):g} s")
    draws = len({str(x.get("draw", 0)) for x in rows})
    parts.append(f"{draws} draw{'s' if draws != 1 else ''}")
    return ", ".join(parts)


def plot_policies(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  title: Optional[str] = None) -> Any:
    """Host path-selection policies: per policy, goodput as a share of the LP optimum (one dot
    per draw, the bar their mean, its 95 % interval) and the median and 99th-percentile flow
    completion times (an unfinished transfer makes a quantile infinite: drawn at the top edge,
    marked). Policies keep the order they were given in and one colour each."""
    ok = [r for r in rows if r.get("status") == "ok"]
    kind = str(ok[0].get("scenario")) if ok else ""
    if kind in ("delay", "multihoming"):
        return _plot_two_paths(ok, kind, ax, title, _policy_order(
            rows if hasattr(rows, "config") else ok))
    pols = _policy_order(rows if hasattr(rows, "config") else ok)
    fig, axes = axes_for(ax, 2, width=max(5.0, 0.5 * len(pols) + 2.0), height=4.6)
    a, b = axes[0], axes[1]
    xs = np.arange(len(pols))
    fin = [v for r in ok for v in (cell_number(r.get("fct_p99")), cell_number(r.get("fct_median")))
           if v is not None]
    top = max(fin) * 2.0 if fin else 10.0
    unfinished = False
    for i, p in enumerate(pols):
        sel = [r for r in ok if str(r["policy"]) == p]
        c = policy_color(p)
        share = [100.0 * float(r["goodput_lp"]) for r in sel]
        v, e = _err(share)
        a.bar(i, v, 0.65, color=c, alpha=0.75, yerr=e, capsize=3)
        a.scatter([i] * len(share), share, color="black", s=10, zorder=3)
        for j, (col, mk) in enumerate((("fct_median", "o"), ("fct_p99", "^"))):
            vals = [cell_number(r.get(col), finite=False) for r in sel]
            vals2 = [min(v, top) for v in vals if v is not None and not math.isnan(v)]
            unfinished |= any(v is not None and math.isinf(v) for v in vals)
            b.scatter([i + (j - 0.5) * 0.25] * len(vals2), vals2, marker=mk, s=20,
                      color=c, edgecolors="black" if j == 0 else c, linewidths=0.5,
                      facecolors=c if j == 0 else "none",
                      label=(("median", "99th percentile")[j] if i == 0 else None))
            if len(vals2) > 1:  # the median over draws and its bootstrap interval
                m, e = _err(vals2, "median")
                b.errorbar([i + (j - 0.5) * 0.25 + 0.09], [m], yerr=e, fmt="_", ms=8,
                           color="black", capsize=2)
    for axis in (a, b):
        axis.set_xticks(xs)
        axis.set_xticklabels(pols, rotation=35, ha="right", fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
    a.set_ylabel("goodput, % of the LP optimum\n(the LP: the most the pairs' paths carry)",
                 fontsize=9)
    a.set_ylim(0, max([100.0] + [100.0 * float(r["goodput_lp"]) for r in ok]) * 1.05)
    a.set_title(title or "goodput of each policy", fontsize=10)
    if ax is None:
        nets = sorted({str(r.get("scenario")) for r in ok})
        fig.suptitle(f"Host policies on live TCP, {', '.join(nets) or '?'}: {_settings(ok)}",
                     fontsize=11)
    b.set_yscale("log")
    plain_log_ticks(b.yaxis)
    b.set_ylim(bottom=min(fin) / 1.5 if fin else None, top=top * 1.3)
    if unfinished:
        b.axhline(top, color="#999999", lw=0.8, ls=":")
    b.set_ylabel("flow completion time (s)", fontsize=9)
    b.set_title("flow completion times per draw"
                + ("\n(dotted line: a transfer unfinished)" if unfinished else ""), fontsize=10)
    if pols:  # under the panel: inside, it covers the lowest points
        b.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False,
                 ncol=2)
    return fig


def _plot_two_paths(rows: Sequence[Mapping[str, Any]], kind: str, ax: Any,
                    title: Optional[str], pols: Sequence[str]) -> Any:
    """delay: the CDF of request completion times per policy (all seeds together) and the share
    of requests started on the idle path; multihoming: MMR per policy and the site flows on
    the path the burst loads, over time (seed of the first row)."""
    fig, (a, b) = axes_for(ax, 2, width=5.5, height=4.4)
    for i, p in enumerate(pols):
        c = policy_color(p)
        sel = [r for r in rows if str(r["policy"]) == p]
        if kind == "delay":
            vals = [float(x) for r in sel for x in str(r.get("fcts") or "").split()]
            fin = [v for v in vals if math.isfinite(v)]
            if vals:
                cut = max(fin) * 1.5 if fin else 10.0
                cdf(a, [min(v, cut) for v in vals], label=p, color=c)
            idle = [x for x in (cell_number(r.get("on_idle"), finite=False) for r in sel)
                    if x is not None and not math.isnan(x)]
            if idle:
                v, e = _err(idle, bounds=(0.0, 1.0))
                b.bar(i, v, 0.6, color=c, yerr=e, capsize=3)
            else:  # ecmp has no notion of "the idle path": its hash decides
                b.text(i, 0.02, "n/a", ha="center", va="bottom", fontsize=8, color="#555555")
        else:
            v, e = _err([float(r["mmr"]) for r in sel], bounds=(0.0, 1.0))
            b.bar(i, v, 0.6, color=c, yerr=e, capsize=3)
            pts = [x.split(":") for x in str(sel[0].get("counts") or "").split()]
            ts = [float(t) for t, _ in pts]
            on1 = [int(n.split("/")[0]) for _, n in pts]
            a.step(ts, on1, where="post", color=c, label=p)
    if kind == "delay":
        a.set_xscale("log")
        plain_log_ticks(a.xaxis)
        a.set_xlabel("request completion time (s, log scale)")
        a.set_ylabel("share of requests")
        a.set_title(title or "changing delay: requests' completion times", fontsize=10)
        b.set_ylabel("share started on the idle path")
        b.set_title("requests started on the idle path\n(higher = better; ecmp: its hash "
                    "decides)", fontsize=10)
    else:
        a.set_xlabel("time (s)")
        a.set_ylabel("site flows on path 1")
        a.set_title(title or "multihoming: a burst loads path 1", fontsize=10)
        b.set_ylabel("MMR (min / max flow throughput)")
        b.set_title("fairness among the site flows\n(MMR, higher = fairer)", fontsize=10)
    b.set_xticks(range(len(pols)))
    b.set_xticklabels(pols, rotation=35, ha="right", fontsize=9)
    b.set_ylim(0, 1.05)
    a.legend(fontsize=8)
    if ax is None:
        fig.suptitle(f"Host policies, two-path scenario '{kind}' (two sites, two paths): "
                     f"{_settings(rows)}", fontsize=11)
    return fig

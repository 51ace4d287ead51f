"""Summaries of the emulator's results (``tpcstudy emulate``): what its command line prints, what
``tpcstudy plot`` prints under the figures, and what the figures draw.

Two kinds of results folders (``meta.json`` records the kind):

- ``emulate-throughput``: one row per (network, heavy percent, seed, model) with the LP value
  and the measured goodput in link units (:mod:`tpcstudy.emulate.throughput`);
- ``emulate-failover``: one row per (network, run, strategy) with the recovery time in seconds
  (:mod:`tpcstudy.emulate.failover`).
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Mapping, Sequence

__all__ = ["THROUGHPUT", "FAILOVER", "MPTCP", "FAULT", "POLICIES", "fct_quantile", "format_fault",
           "STRATEGIES", "recovery_summary", "format_recovery", "throughput_summary", "summary_line",
           "format_dumbbell"]

THROUGHPUT = "emulate-throughput"
FAILOVER = "emulate-failover"
#: SEMPER's dumbbell with real MPTCP (``tpcstudy emulate dumbbell``): one row per (paths,
#: hosts, subflows, seed) with the measured total (path units), the model's and the LP's value
#: and Jain's index over the hosts.
MPTCP = "emulate-mptcp"
#: SEMPER's fault test (``tpcstudy emulate fault``): one row per (strategy, 1 s window) with the
#: total goodput (paths), Jain's index over the hosts and whether the path had failed.
FAULT = "emulate-fault"
#: Host path-selection policies on live TCP (``tpcstudy emulate policies``): one row per
#: (network, heavy percent, seed, policy) with goodput against the LP, flow completion times and
#: Jain's index over pairs.
POLICIES = "emulate-policies"
#: Failover strategies, in the order they are drawn and printed.
STRATEGIES = ("plain", "nrto", "timeout")


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _quantile(xs: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of sorted ``xs`` (numpy's default) where values may be
    infinite (a run that never recovered): between a finite and an infinite value, infinite."""
    if not xs:
        return math.nan
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    w = pos - lo
    a, b = xs[lo], xs[hi]
    if w == 0 or a == b:
        return a
    if math.isinf(a) or math.isinf(b):
        return math.inf
    return a + (b - a) * w


def fct_quantile(xs: Sequence[float], q: float) -> float:
    """Quantile ``q`` of sorted ``xs`` where unfinished transfers are infinite (numpy's linear
    interpolation between finite values; infinite as soon as an infinite value is involved)."""
    return _quantile(xs, q)


def recovery_summary(rows: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Per strategy: runs, runs hit (their connection stalled), recovered, and the quartiles of
    the recovery time in seconds (runs that never recovered count as infinite)."""
    out = []
    for name in STRATEGIES:
        sel = [r for r in rows if r.get("strategy") == name]
        if not sel:
            continue
        vals = [_num(r.get("recovery_s")) for r in sel
                if r.get("status") in ("ok", "not recovered")]
        vals = [v for v in vals if not math.isnan(v)]
        fin = sorted(v for v in vals if math.isfinite(v))
        q = [_quantile(sorted(vals), x) for x in (0.25, 0.5, 0.75)]
        out.append({"strategy": name, "param": str(sel[0].get("param") or ""), "runs": len(sel),
                    "hit": len(vals), "recovered": len(fin), "q1": q[0], "median": q[1],
                    "q3": q[2], "min": fin[0] if fin else math.nan,
                    "max": fin[-1] if fin else math.nan,
                    "mean": statistics.fmean(fin) if fin else math.nan})
    return out


def format_recovery(summary: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"{'strategy':>9} {'param':>9} {'runs':>5} {'hit':>4} {'recovered':>9} "
             f"{'median s':>9} {'q1':>7} {'q3':>7}"]
    for s in summary:
        lines.append(f"{s['strategy']:>9} {s['param']:>9} {s['runs']:>5} {s['hit']:>4} "
                     f"{s['recovered']:>9} {s['median']:>9.3f} {s['q1']:>7.3f} {s['q3']:>7.3f}")
    lines.append("recovery = first data after the failure's stall - failure time; hit = runs "
                 "whose connection stalled")
    return "\n".join(lines)


def throughput_summary(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Dict[str, float]]:
    """Per model over the measured draws: median measured / LP, median payload ceiling, median
    measured and LP gain over ecmp, and the number of draws."""
    out: Dict[str, Dict[str, float]] = {}
    models = list(dict.fromkeys(str(r.get("model")) for r in rows))
    for m in models:
        sel = [r for r in rows if r.get("model") == m and r.get("status") == "ok"]
        if sel:
            out[m] = {"draws": len(sel), **{c: _median(sel, c) for c in
                                            ("ratio", "ceiling", "data_share", "measured_gain",
                                             "lp_gain")}}
    return out


def _median(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    vals = [v for v in (_num(r.get(col)) for r in rows) if math.isfinite(v)]
    return float(statistics.median(vals)) if vals else math.nan


def summary_line(results: Any) -> str:
    """One line of key numbers for an emulation results folder."""
    rows = list(results)
    if getattr(results, "kind", "") == FAILOVER:
        return "; ".join(f"{s['strategy']}{' ' + s['param'] if s['param'] else ''}: median "
                         f"{s['median']:.2f} s over {s['hit']} runs"
                         for s in recovery_summary(rows))
    if getattr(results, "kind", "") == POLICIES:
        return "; ".join(f"{r['policy']}: {100 * _num(r['goodput_lp']):.0f} % of LP, FCT median "
                         f"{_num(r['fct_median']):.2f} s" for r in rows if r.get("status") == "ok")
    if getattr(results, "kind", "") == MPTCP:
        return "; ".join(f"P={int(_num(r['paths']))} K={int(_num(r['subflows']))}: "
                         f"{_num(r['measured']):.2f} (model {_num(r['model_value']):.2f}), Jain "
                         f"{_num(r['jain']):.2f}" for r in rows)
    parts = []
    for m, s in throughput_summary(rows).items():
        text = f"{m}: measured/LP {s['ratio']:.3f} (ceiling {s['ceiling']:.3f})"
        if m != "ecmp" and math.isfinite(s["measured_gain"]):
            text += f", gain {s['measured_gain']:.2f} (LP {s['lp_gain']:.2f})"
        parts.append(text)
    return "; ".join(parts) + " (medians over draws)"


def format_dumbbell(rows: Sequence[Mapping[str, Any]]) -> str:
    """The dumbbell table: per P and K, measured throughput (paths) beside the mptcp:K model
    and the LP, Jain's index, subflows joined."""
    lines = [f"{'paths':>5} {'K':>3} {'measured':>9} {'model':>7} {'LP':>4} {'meas/LP':>8} "
             f"{'Jain':>6} {'joined':>8}"]
    for r in sorted(rows, key=lambda r: (_num(r.get("paths")), _num(r.get("subflows")),
                                         _num(r.get("seed")))):
        lines.append(f"{int(_num(r['paths'])):>5} {int(_num(r['subflows'])):>3} "
                     f"{_num(r['measured']):>9.2f} {_num(r['model_value']):>7.2f} "
                     f"{_num(r['lp_value']):>4.0f} {_num(r['ratio']):>8.3f} "
                     f"{_num(r['jain']):>6.3f} {int(_num(r['joined'])):>3}/"
                     f"{int(_num(r['expected_joins'])):<4}")
    return "\n".join(lines)


def format_fault(rows: Sequence[Mapping[str, Any]]) -> str:
    """The fault test per strategy (all seeds together): mean total and Jain before the failure
    (from 1 s) and after it (from 1 s after), and the worst window after it."""
    lines = [f"{'strategy':<12} {'before':>7} {'Jain':>5} {'after':>7} {'Jain':>5} "
             f"{'worst 1 s after':>15}"]
    for strat in dict.fromkeys(str(r["strategy"]) for r in rows):
        rs = [r for r in rows if str(r["strategy"]) == strat]
        fa = _num(rs[0].get("fail_after")) if rs else math.nan
        pre = [r for r in rs if 1 <= _num(r["second"]) < fa]
        post = [r for r in rs if _num(r["second"]) >= fa + 1]
        worst = min((_num(r["total"]) for r in rs if _num(r["second"]) >= fa), default=math.nan)

        def mean(xs: Sequence[Mapping[str, Any]], col: str) -> float:
            v = [_num(x[col]) for x in xs]
            return sum(v) / len(v) if v else math.nan
        lines.append(f"{strat:<12} {mean(pre, 'total'):>7.2f} {mean(pre, 'jain'):>5.2f} "
                     f"{mean(post, 'total'):>7.2f} {mean(post, 'jain'):>5.2f} {worst:>15.2f}")
    return "\n".join(lines)

"""Repeated draws: what a metric measured in several independent draws says, and which arms of
an experiment really differ.

One emulation draw proves little: the routers' ECMP hash seeds, the arrivals of a Poisson
workload, the ports of MPTCP's subflows and the timing of the run all move a result. ``--repeat
N`` runs every task N times (column ``draw``, 0 to N - 1; draw 0 is the single run of before) on
the same built network: :meth:`~tpcstudy.emulate.network.lifecycle.Emulation.reseed` gives
every router a new hash seed (:func:`~tpcstudy.emulate.network.spec.hash_seed`) and
:func:`draw_seed` the draw's own seed for workloads and randomised policies.

- :func:`summarize`: per group (a model, a policy, a strategy ...), every :class:`Metric` over
  the draws with its 95 % interval: the mean with Student's t interval (``stat="mean"``), or
  the median with a percentile-bootstrap interval over the draws (``stat="median"``: flow
  completion times, recovery times, where one draw can be infinite).
- :func:`verdicts`: for experiments whose arms run in the same draws (every policy on the same
  arrivals, every model on the same pairs), each pair of arms per metric: the mean paired
  difference (by draw) with its 95 % Student t interval (a paired t-test), and ``higher`` /
  ``lower``, or ``tie`` when the interval holds 0. An infinite value (a draw whose completion-time
  quantile includes an unfinished transfer) counts as twice the longest finite value of that
  metric in the run: worse than any finished one, not incomparable. (A rank test would not do:
  with 5 draws no sign or signed-rank test reaches 5 %, and a percentile bootstrap of the
  median difference calls 3 draws of one sign a difference.)
- With fewer than 6 draws the percentile-bootstrap interval of a median is the range of the
  draws (exact coverage 94 % at 5 draws, 75 % at 3): ask for 5 or more.
- :func:`format_summary`, :func:`format_verdicts`: the tables ``tpcstudy emulate`` prints.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import numpy as np

from ...metrics import mean_interval, median_interval, paired_difference

__all__ = ["Metric", "draw_seed", "summarize", "summary_columns", "verdicts", "VERDICT_COLUMNS",
           "format_summary", "format_verdicts", "LEVEL", "SHARE"]

#: The confidence level of every interval.
LEVEL = 0.95
VERDICT_COLUMNS = ["metric", "a", "b", "draws", "difference", "lo", "hi", "verdict"]


#: The values of a share (CPU busy, Jain's index, a path's share of the bytes).
SHARE = (0.0, 1.0)


@dataclasses.dataclass(frozen=True)
class Metric:
    """A column summarised over draws: ``stat`` ``"mean"`` (t interval) or ``"median"``
    (bootstrap interval); ``label`` heads its column in the printed table; ``digits`` its
    decimals; ``bounds`` the values it can take (a share: :data:`SHARE`), which its interval
    is cut to (a t interval around a mean of 0.10 over 3 draws can reach below 0)."""

    column: str
    stat: str = "mean"
    label: str = ""
    digits: int = 3
    bounds: Tuple[float, float] = (-math.inf, math.inf)

    def __post_init__(self) -> None:
        if self.stat not in ("mean", "median"):
            raise ValueError(f"Metric {self.column}: stat {self.stat!r} is mean or median")

    @property
    def title(self) -> str:
        return self.label or self.column

    def interval(self, values: Sequence[float]) -> Tuple[float, float, float]:
        v, lo, hi = (median_interval if self.stat == "median" else mean_interval)(values, LEVEL)
        low, high = self.bounds
        return v, (min(max(lo, low), high) if not math.isnan(lo) else lo), \
            (max(min(hi, high), low) if not math.isnan(hi) else hi)


def draw_seed(seed: int, draw: int) -> int:
    """The seed of draw ``draw`` of a task seeded ``seed``: ``seed`` itself for draw 0 (a
    single run is the run of before), else a 31-bit seed numpy's ``SeedSequence`` derives from
    both (independent streams, the same for every arm of the draw)."""
    if draw == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(draw)]).generate_state(1)[0] >> 1)


def _value(row: Mapping[str, Any], col: str) -> float:
    try:
        return float(row.get(col))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _groups(rows: Sequence[Mapping[str, Any]], by: Sequence[str]
            ) -> Dict[Tuple[str, ...], List[Mapping[str, Any]]]:
    out: Dict[Tuple[str, ...], List[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(str(r.get(c, "")) for c in by), []).append(r)
    return out


def summary_columns(by: Sequence[str], metrics: Sequence[Metric]) -> List[str]:
    cols = list(by) + ["draws"]
    for m in metrics:
        cols += [m.column, f"{m.column}_lo", f"{m.column}_hi"]
    return cols + ["interval"]


def summarize(rows: Sequence[Mapping[str, Any]], by: Sequence[str],
              metrics: Sequence[Metric]) -> List[Dict[str, Any]]:
    """Per group of ``by`` (first-seen order), the draws measured (rows with status ok or no
    status) and every metric's ``(value, lo, hi)`` (module docstring)."""
    ok = [r for r in rows if str(r.get("status") or "ok") in ("ok", "not recovered")]
    out = []
    for key, sel in _groups(ok, by).items():
        row: Dict[str, Any] = dict(zip(by, key))
        row["draws"] = len(sel)
        for m in metrics:
            v, lo, hi = m.interval([_value(r, m.column) for r in sel])
            row.update({m.column: v, f"{m.column}_lo": lo, f"{m.column}_hi": hi})
        row["interval"] = (f"{LEVEL:.0%}: " + ", ".join(sorted({
            "mean, Student t" if m.stat == "mean" else "median, percentile bootstrap"
            for m in metrics})))
        out.append(row)
    return out


def verdicts(rows: Sequence[Mapping[str, Any]], *, by: Sequence[str], arm: str,
             metrics: Sequence[Metric], draw: Sequence[str] = ("draw",)
             ) -> List[Dict[str, Any]]:
    """Every pair of arms (values of column ``arm``) within each context (``by`` without the
    arm), per metric, paired by the ``draw`` columns (module docstring)."""
    context = [c for c in by if c != arm]
    ok = [r for r in rows if str(r.get("status") or "ok") in ("ok", "not recovered")]
    caps = {}
    for m in metrics:
        fin = [v for v in (_value(r, m.column) for r in ok) if math.isfinite(v)]
        caps[m.column] = 2.0 * max(fin) if fin and max(fin) > 0 else math.inf
    out: List[Dict[str, Any]] = []
    for ctx, sel in _groups(ok, context).items():
        arms = list(dict.fromkeys(str(r.get(arm)) for r in sel))
        per: Dict[str, Dict[Tuple[str, ...], Mapping[str, Any]]] = {
            a: {tuple(str(r.get(c)) for c in draw): r for r in sel if str(r.get(arm)) == a}
            for a in arms}
        for m in metrics:
            for a, b in itertools.combinations(arms, 2):
                both = [d for d in per[a] if d in per[b]]
                xs = [_value(per[a][d], m.column) for d in both]
                ys = [_value(per[b][d], m.column) for d in both]
                diff, lo, hi, verdict = paired_difference(xs, ys, LEVEL, cap=caps[m.column])
                out.append(dict(zip(context, ctx), metric=m.column, a=a, b=b, draws=len(both),
                                difference=diff, lo=lo, hi=hi, verdict=verdict))
    return out


def _cell(v: float, lo: float, hi: float, digits: int) -> str:
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf"
    text = f"{v:.{digits}f}"
    if not (math.isnan(lo) or math.isnan(hi)):
        text += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return text


def format_summary(summary: Sequence[Mapping[str, Any]], by: Sequence[str],
                   metrics: Sequence[Metric], *, note: str = "") -> str:
    """The summary as a table: the group columns, draws, then ``value [lo, hi]`` per metric."""
    head = list(by) + ["draws"] + [m.title for m in metrics]
    body = [[str(s.get(c, "")) for c in by] + [str(s["draws"])]
            + [_cell(float(s[m.column]), float(s[f"{m.column}_lo"]), float(s[f"{m.column}_hi"]),
                     m.digits) for m in metrics] for s in summary]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h)
              for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in body]
    stats = sorted({m.stat for m in metrics})
    lines.append(f"value [{LEVEL:.0%} interval] over the draws: "
                 + "; ".join({"mean": "mean, Student t interval",
                              "median": "median (" + ", ".join(
                                  m.title for m in metrics if m.stat == "median")
                              + "), percentile-bootstrap interval"}[s] for s in stats)
                 + (f"\n{note}" if note else ""))
    return "\n".join(lines)


def format_verdicts(rows: Sequence[Mapping[str, Any]], metrics: Sequence[Metric],
                    context: Sequence[str]) -> str:
    """Per context and metric, a matrix of the arms: ``>`` the row's arm is higher than the
    column's at 95 % (paired by draw), ``<`` lower, ``=`` a tie; arms numbered."""
    if not rows:
        return ""
    lines: List[str] = []
    for ctx, sel in _groups(rows, context).items():
        arms = list(dict.fromkeys([str(r["a"]) for r in sel] + [str(r["b"]) for r in sel]))
        idx = {a: i for i, a in enumerate(arms)}
        w = max(len(a) for a in arms)
        draws = max(int(r["draws"]) for r in sel)
        where = ", ".join(f"{c} {v}" for c, v in zip(context, ctx) if v not in ("", "None"))
        lines.append(f"which differences are real ({where}; {draws} draws, paired by draw, "
                     f"95 % paired t interval of the difference): row vs column, > higher, < lower, "
                     f"= tie")
        for m in metrics:
            grid = [["." if i == j else "?" for j in range(len(arms))] for i in range(len(arms))]
            ties = []
            for r in sel:
                if r["metric"] != m.column:
                    continue
                i, j = idx[str(r["a"])], idx[str(r["b"])]
                v = str(r["verdict"])
                grid[i][j] = {"higher": ">", "lower": "<"}.get(v, "=")
                grid[j][i] = {"higher": "<", "lower": ">"}.get(v, "=")
                if v == "tie":
                    ties.append(f"{r['a']} = {r['b']}")
            lines.append(f"  {m.title + ':':<{w + 3}}"
                         + "".join(f"{k + 1:>3}" for k in range(len(arms))))
            for i, a in enumerate(arms):
                lines.append(f"  {i + 1:>2} {a:<{w}}" + "".join(f"{c:>3}" for c in grid[i]))
            lines.append(f"  ties: {'; '.join(ties) if ties else 'none'}")
    return "\n".join(lines)


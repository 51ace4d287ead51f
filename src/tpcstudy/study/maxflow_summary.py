"""The max-flow study's summary (docs/method.md §4): the improvement of every series over its
baseline per topology and draw (:func:`improvement_draws`, :func:`improvement_table`, which
Figure 6 draws), its quartiles over topologies or pooled draws with the median's noise interval
(:func:`summarize`), beside the paper's boxes, and the printed forms (:func:`format_summary`,
:func:`summary_line`). Reads result rows only: :mod:`.maxflow` runs the study."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import UsageError
from . import paper
from .store import cell_number

__all__ = ["improvement_draws", "improvement_table", "summarize", "format_summary",
           "summary_line", "study_ks", "default_k", "subflows_to_reach", "median_noise_interval",
           "paper_box", "paper_median", "AGGREGATES", "RESAMPLES", "LEVEL"]


def _ok(r: Mapping[str, Any]) -> bool:
    return (r.get("status") or "ok") == "ok"


def study_ks(rows: Sequence[Mapping[str, Any]]) -> List[int]:
    """The sr segment limits present in ``rows``."""
    return sorted({int(float(r["k"])) for r in rows
                   if r.get("model") == "sr" and cell_number(r.get("k")) is not None})


def default_k(rows: Sequence[Mapping[str, Any]]) -> Optional[int]:
    """The segment limit a summary headlines: 4 when present, else the largest."""
    ks = study_ks(rows)
    if not ks:
        return None
    return 4 if 4 in ks else max(ks)


def _series_model(name: str) -> Tuple[str, Optional[int], Optional[int]]:
    """``"sr+mptcp:8 k=4"`` -> ``("sr+mptcp", 4, 8)``; ``"multipath"`` -> ``("multipath", None, None)``."""
    model, _, k = name.partition(" k=")
    model, _, sub = model.partition(":")
    return model, (int(k) if k else None), (int(sub) if sub else None)


def improvement_draws(rows: Sequence[Mapping[str, Any]]
                      ) -> Dict[Tuple[str, float], Dict[str, List[float]]]:
    """Per topology, the improvement in % of each series at each heavy percent, one value per
    draw (seed).

    Returns ``{(series, heavy): {topology: [improvement per draw]}}`` with series ``multipath`` and
    ``mcf`` (over ecmp), ``sr k=<j>`` (sr with segment limit j over ecmp), ``sr k=<j>/multipath``
    (over multipath), and with subflow models ``mptcp:<K>`` (over ecmp), ``mptcp:<K>/multipath``
    (over multipath: 0 when K subflows reach it), ``mptcp:<K>/gain`` (the share in % of
    multipath's gain over ecmp that K subflows get, on draws where multipath gains),
    ``sr k=<j>/mptcp:<K>`` (sr over mptcp with K
    subflows) and ``sr+mptcp:<K> k=<j>`` (over ecmp), for every limit and K present. Rows that
    are not ``ok`` are left out. Accepts rows as read (strings) or loaded (numbers).
    """
    acc: Dict[Tuple[str, float], Dict[str, List[float]]] = {}

    def add(series: str, heavy: float, topo: str, value: Optional[float]) -> None:
        if value is not None:
            acc.setdefault((series, heavy), {}).setdefault(topo, []).append(value)

    # values of every draw, to compare models that have no improvement column against each other
    draws: Dict[Tuple[str, float, str], Dict[Tuple[str, str, str], float]] = {}
    for r in rows:
        heavy, v = cell_number(r.get("heavy")), cell_number(r.get("value"))
        if _ok(r) and heavy is not None and v is not None:
            key = (str(r.get("model")), _cell_text(r.get("k")), _cell_text(r.get("subflows")))
            draws.setdefault((str(r.get("topology")), heavy, str(r.get("seed"))), {})[key] = v
    for r in rows:
        heavy = cell_number(r.get("heavy"))
        if not _ok(r) or heavy is None:
            continue
        model, topo = r.get("model"), str(r.get("topology"))
        sub = _cell_text(r.get("subflows"))
        if model in ("multipath", "mcf"):
            add(str(model), heavy, topo, cell_number(r.get("improvement")))
        elif model == "sr" and cell_number(r.get("k")) is not None:
            k = int(float(r["k"]))
            add(f"sr k={k}", heavy, topo, cell_number(r.get("improvement")))
            add(f"sr k={k}/multipath", heavy, topo, cell_number(r.get("improvement_over_multipath")))
            values = draws.get((topo, heavy, str(r.get("seed"))), {})
            v = values.get(("sr", _cell_text(r.get("k")), ""))
            for (m, _, x), base in sorted(values.items()):
                if m == "mptcp" and v is not None and base > 0:
                    add(f"sr k={k}/mptcp:{x}", heavy, topo, 100.0 * (v - base) / base)
        elif model == "mptcp" and sub:
            add(f"mptcp:{sub}", heavy, topo, cell_number(r.get("improvement")))
            add(f"mptcp:{sub}/multipath", heavy, topo,
                cell_number(r.get("improvement_over_multipath")))
            values = draws.get((topo, heavy, str(r.get("seed"))), {})
            got, e, mp = (values.get(("mptcp", "", sub)), values.get(("ecmp", "1", "")),
                          values.get(("multipath", "", "")))
            if got is not None and e is not None and mp is not None and mp - e > 1e-9 * max(e, 1):
                add(f"mptcp:{sub}/gain", heavy, topo, 100.0 * (got - e) / (mp - e))
        elif model == "sr+mptcp" and sub and cell_number(r.get("k")) is not None:
            add(f"sr+mptcp:{sub} k={int(float(r['k']))}", heavy, topo,
                cell_number(r.get("improvement")))
    return acc


def improvement_table(rows: Sequence[Mapping[str, Any]]
                      ) -> Dict[Tuple[str, float], Dict[str, float]]:
    """Per topology, the improvement in % of each series at each heavy percent, seeds averaged:
    the means of :func:`improvement_draws` (``{(series, heavy): {topology: improvement}}``)."""
    return {key: {t: float(np.mean(v)) for t, v in per.items()}
            for key, per in improvement_draws(rows).items()}


def _cell_text(value: Any) -> str:
    """A key cell as text: numbers without a trailing ``.0`` (rows read back or fresh)."""
    x = cell_number(value)
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else str(x)


_MODEL_ORDER = {"multipath": 0, "mptcp": 1, "sr": 2, "sr+mptcp": 3, "mcf": 4}


def _series_order(series: str) -> Tuple[int, int, int, int, int]:
    name, _, over = series.partition("/")
    model, k, sub = _series_model(name)
    over_model, _, over_sub = _series_model(over) if over else ("", None, None)
    return (_MODEL_ORDER.get(model, 5), k or 0, sub or 0, 1 if over else 0,
            (over_sub or 0) + (1 if over_model == "mptcp" else 0) * 10_000)


#: How the summary aggregates draws: ``topology`` (each topology's mean over its draws first,
#: then quartiles over topologies: every topology weighs the same) or ``pooled`` (quartiles
#: over every (topology, draw) value: the paper's Figure 6).
AGGREGATES = ("topology", "pooled")
#: Bootstrap resamples of a median's noise interval, and its level.
RESAMPLES = 1000
LEVEL = 0.95


def _statistic(values: Sequence[np.ndarray], aggregate: str) -> np.ndarray:
    """The median over topologies of ``values`` (one ``(B, n_t)`` array of draws per
    topology, B resamples): per resample."""
    if aggregate == "pooled":
        return np.median(np.concatenate(values, axis=1), axis=1)
    return np.median(np.stack([v.mean(axis=1) for v in values], axis=1), axis=1)


def median_noise_interval(per_topology: Mapping[str, Sequence[float]],
                          aggregate: str = "topology", *, seed: int = 0,
                          resamples: int = RESAMPLES) -> Tuple[float, float]:
    """The draw noise of the printed median (:func:`summarize`'s ``median``: over topologies of
    each one's mean draw, or pooled): a seeded bootstrap of that same statistic that resamples
    each topology's draws with replacement (the topologies stay: they are the population, the
    draws the noise). The interval is the bootstrap's spread, level :data:`LEVEL` (its 2.5 %
    and 97.5 % points less its own median), set around the printed median, so it always holds
    it: a plain percentile interval does not, because resampling a topology's few draws moves
    the median over topologies to one side (a topology whose draws are {0, 0, 5.4} falls to 0
    in 8 of 27 resamples, while one at 0 in every draw never rises), and the README's 3-seed
    study printed medians outside their own intervals (5 % multipath 1.8 [0.0, 0.7]).
    ``(nan, nan)`` when no topology has two draws: with one seed the noise cannot be told, and a
    zero-width interval would say there is none. The same input and ``seed`` give the same
    interval."""
    if aggregate not in AGGREGATES:
        raise UsageError(f"aggregate {aggregate!r}: choose {' or '.join(AGGREGATES)}")
    draws = [np.asarray(v, dtype=np.float64) for v in per_topology.values() if len(v)]
    if not draws or max(len(d) for d in draws) < 2:
        return math.nan, math.nan
    printed = float(_statistic([d[None, :] for d in draws], aggregate)[0])
    rng = np.random.default_rng(seed)
    boot = [d[rng.integers(0, len(d), size=(resamples, len(d)))] for d in draws]
    stat = _statistic(boot, aggregate)
    lo, mid, hi = np.percentile(stat, [50 * (1 - LEVEL), 50, 100 - 50 * (1 - LEVEL)])
    return printed - float(mid - lo), printed + float(hi - mid)


def summarize(rows: Sequence[Mapping[str, Any]], *, aggregate: str = "topology",
              seed: int = 0, interval: bool = True) -> List[Dict[str, Any]]:
    """Median and quartiles of every series of :func:`improvement_draws`, per heavy percent,
    over topologies (``aggregate="topology"``: seeds averaged per topology first) or over
    every (topology, seed) value (``"pooled"``), with the median's draw-noise interval
    (:func:`median_noise_interval`, seeded by ``seed``): dicts with ``heavy``, ``series``,
    ``model``, ``k`` (``None`` when not applicable), ``subflows`` (K of mptcp / sr+mptcp, else
    ``None``), ``over`` (``ecmp``, ``multipath`` or ``mptcp:K``), ``topologies``, ``values``
    (the number aggregated), ``aggregate``, ``q1``, ``median``, ``q3``, ``median_lo``,
    ``median_hi``."""
    if aggregate not in AGGREGATES:
        raise UsageError(f"aggregate {aggregate!r}: choose {' or '.join(AGGREGATES)}")
    out = []
    table = improvement_draws(rows)
    for (series, heavy) in sorted(table, key=lambda sh: (sh[1], _series_order(sh[0]))):
        per = table[(series, heavy)]
        vals = sorted(v for d in per.values() for v in d) if aggregate == "pooled" else \
            sorted(float(np.mean(d)) for d in per.values())
        q = np.percentile(vals, [25, 50, 75]) if vals else [math.nan] * 3
        lo, hi = median_noise_interval(per, aggregate, seed=seed) if interval else \
            (math.nan, math.nan)
        name, _, over = series.partition("/")
        model, k, sub = _series_model(name)
        out.append({"heavy": heavy, "series": series, "model": model, "k": k, "subflows": sub,
                    "over": over or "ecmp", "topologies": len(per), "values": len(vals),
                    "aggregate": aggregate, "q1": float(q[0]), "median": float(q[1]),
                    "q3": float(q[2]), "median_lo": lo, "median_hi": hi})
    return out


def subflows_to_reach(summary: Sequence[Mapping[str, Any]], share: float = 90.0, *,
                      of: str = "value") -> Dict[float, Optional[int]]:
    """Per heavy percent, the fewest subflows whose median mptcp reaches ``share`` % of
    multipath's value (``of="value"``) or of multipath's gain over ecmp (``of="gain"``);
    ``None`` when no K in the study does."""
    out: Dict[float, Optional[int]] = {}
    for s in summary:
        if s["model"] != "mptcp" or s["over"] != ("multipath" if of == "value" else "gain"):
            continue
        h = s["heavy"]
        out.setdefault(h, None)
        if (100.0 + s["median"] if of == "value" else s["median"]) >= share - 1e-9:
            best = out[h]
            out[h] = s["subflows"] if best is None else min(best, s["subflows"])
    return out


def paper_box(s: Mapping[str, Any]) -> Optional[Tuple[float, float, float]]:
    """The paper's Figure 6 box (Q1, median, Q3) for a :func:`summarize` entry; ``None``
    where the paper has none (it shows sr over ecmp and over multipath at 1 and 10 %)."""
    boxes = {"ecmp": paper.FIGURE6_OVER_ECMP,
             "multipath": paper.FIGURE6_OVER_MULTIPATH}.get(str(s["over"]), {})
    if s["model"] != "sr" or s["heavy"] not in boxes:
        return None
    return boxes[s["heavy"]]


def paper_median(s: Mapping[str, Any]) -> Tuple[Optional[float], bool]:
    """The paper's median for a :func:`summarize` entry and whether it is approximate (always
    exact now: read from the figure's vector paths); ``(None, False)`` where the paper has
    none."""
    box = paper_box(s)
    return (None, False) if box is None else (box[1], False)


def _paper_value(s: Mapping[str, Any]) -> str:
    box = paper_box(s)
    return "" if box is None else f"{box[1]:.1f} [{box[0]:.1f}, {box[2]:.1f}]"


def format_summary(summary: Sequence[Mapping[str, Any]], *, demands: bool = False) -> str:
    """:func:`summarize`'s output as the table the command line prints (``demands``: a
    demand-matrix study: no heavy share, no seeds, no paper)."""
    pooled = any(s.get("aggregate") == "pooled" for s in summary)
    noisy = any(not math.isnan(s.get("median_lo", math.nan)) for s in summary)
    if demands:
        lines = ["improvement in % over topologies (every pair of each demand matrix): median, "
                 "q1, q3"]
    else:
        lines = ["improvement in % " + ("(pooled over every topology and seed)" if pooled else
                                        "(over topologies; seeds averaged per topology)")
                 + ": median" + (", its draw-noise interval (95 %, bootstrap over each "
                                 "topology's seeds, around the median)" if noisy else
                                 " (one seed per topology: no noise interval)")
                 + ", q1, q3; the paper's median [q1, q3]"]
    lines.append(f"{'pairs' if demands else 'heavy':>6} {'model':>11} {'k':>3} {'over':>10} "
                 f"{'topos':>6} {'median':>8} " + (f"{'noise':>15} " if noisy else "")
                 + f"{'q1':>8} {'q3':>8}" + ("" if demands else "  paper"))
    for s in summary:
        k = "" if s["k"] is None else s["k"]
        model = s["model"] + ("" if s["subflows"] is None else f":{s['subflows']}")
        lo, hi = s.get("median_lo", math.nan), s.get("median_hi", math.nan)
        noise = f"[{lo:.1f}, {hi:.1f}]" if not (math.isnan(lo) or math.isnan(hi)) else ""
        heavy = "matrix" if demands else f"{s['heavy']:>5g}%"
        lines.append(f"{heavy:>6} {model:>11} {k:>3} {s['over']:>10} "
                     f"{s['topologies']:>6} {s['median']:>8.1f} "
                     + (f"{noise:>15} " if noisy else "")
                     + f"{s['q1']:>8.1f} {s['q3']:>8.1f}"
                     + ("" if demands else f"  {_paper_value(s)}"))
    for of, what in (("value", "multipath's value"), ("gain", "multipath's gain over ecmp")):
        for h, k in sorted(subflows_to_reach(summary, of=of).items()):
            ks = sorted({s["subflows"] for s in summary
                         if s["model"] == "mptcp" and s["heavy"] == h})
            lines.append(f"{h:g} %: fewest subflows for mptcp to reach 90 % of {what} in the "
                         f"median topology: " + (f"K = {k}" if k is not None else
                                                 f"none of K = {', '.join(map(str, ks))}"))
    if any(s["over"] == "gain" for s in summary):
        lines.append("over 'gain': the share in % of multipath's gain over ecmp that mptcp with K "
                     "subflows gets (draws where multipath gains)")
    if not demands:  # the paper's Figure 6 is a heavy-hitter study
        lines.append(paper.maxflow_note())
    return "\n".join(lines)


def summary_line(rows: Sequence[Mapping[str, Any]], *, k: Optional[int] = None,
                 aggregate: str = "topology") -> str:
    """The medians of sr (segment limit ``k``, default :func:`default_k`) over ecmp and over
    multipath per heavy percent, in one line, beside the paper's."""
    k = default_k(rows) if k is None else k
    med = {(s["series"], s["heavy"]): s["median"]
           for s in summarize(rows, aggregate=aggregate, interval=False)}
    cfg = getattr(rows, "config", {}) or {}
    demands = bool(cfg.get("demands"))  # the demand matrix's pairs: no heavy share, no paper
    parts = []
    for h in sorted({h for (_, h) in med}):
        ref = None if demands else paper.MAXFLOW_MEDIANS.get(h)
        over = [(name, med[(series, h)]) for name, series in
                (("sr/ecmp", f"sr k={k}"), ("sr/multipath", f"sr k={k}/multipath"))
                if (series, h) in med]
        text = ", ".join(f"{name} {v:.1f}" + (f" (paper: {ref:.0f})" if ref and
                                               name == "sr/ecmp" else "") for name, v in over)
        parts.append(f"{'demand matrix' if demands else f'{h:g} %'}: {text or 'no sr rows'}")
    return (f"median improvement (k = {k}{', pooled' if aggregate == 'pooled' else ''}): "
            + "; ".join(parts))

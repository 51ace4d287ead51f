"""``tpcstudy reproduce``: the TPC paper's topology study run in its own configuration, each of
its numbers set beside ours with a noise interval and a verdict (docs/method.md §4, "The paper's
figures").

The configuration (:func:`paper_config`): REPETITA's Topology Zoo instances with their
inverse-capacity weights and capacities, parallel links kept as links of their own
(``--links multigraph``: pruned and edge routers found by link count, every component kept),
heavy hitters at 1, 5 and 10 % of the ordered edge-router pairs (``ceil``), sr with at most 4
segments, ``ecmp`` and ``multipath`` as baselines, every (topology, draw) value pooled.

The folder it writes::

    DIR/maxflow/              the paper's configuration (a max-flow results folder)
    DIR/variants/NAME/        the same with a rule changed (round, unordered, both, merged)
    DIR/disjoint/             Figure 7's study under the paper's rule
    DIR/topologies.csv        Figure 5's sizes under the paper's rule
    DIR/report.json           every comparison as data
    DIR/report.md             the same for people (written by the command line, with figures)

Every sub-study is resumable as its command is; rerunning ``reproduce`` continues them.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import UsageError
from ..io import read_topology, topology_files
from ..io.files import atomic_write_text, json_text, write_csv
from ..pairs import edge_router_pairs, heavy_pairs
from ..paths.sps_rules import SEGMENT_RULES
from ..topology import Topology, component_labels, prune
from .disjoint import DisjointConfig, run_disjoint_study, sps_method
from .executors import TaskExecutor
from .figure6_rules import draw_facts, draws_of, figure6_cells, hypothesis_table
from .maxflow import MaxflowConfig, run_maxflow_study
from .maxflow_summary import improvement_draws, summarize
from .paper import (
    FIGURE5_LINKS,
    FIGURE5_ROUTERS,
    FIGURE6_CDF_OVER_ECMP,
    FIGURE6_CDF_OVER_MULTIPATH,
    FIGURE6_N,
    FIGURE6_ZEROS,
    FIGURE7_GREEDY_MEANS,
    FIGURE7_MAX_MEANS,
    FIGURE7_SPS_MEAN,
    PAPER,
)
from .provenance import environment
from .reproduce_report import MATCH_TOL, format_report, verdict
from .stats import STATS_COLUMNS, topology_stats
from .summary import plain

__all__ = ["PAPER_TOPO", "VARIANTS", "SPS_RULES_RUN", "paper_config", "run_reproduce", "verdict",
           "compare_multiset", "compare_sorted", "figure6_rows", "figure6_values",
           "format_report", "MATCH_TOL", "SPS_TOL"]

#: The data set the paper's study used.
PAPER_TOPO = "repetita/inverse-capacity"
#: Variants that change a rule of the paper's configuration: (name, what changes, config).
VARIANTS: Tuple[Tuple[str, str, Dict[str, Any]], ...] = (
    ("round", "round(x * #pairs) heavy hitters instead of ceil", {"rounding": "round"}),
    ("unordered", "heavy hitters drawn from unordered pairs", {"ordered": False}),
    ("unordered+round", "both of the above", {"ordered": False, "rounding": "round"}),
    ("merged", "tpcstudy's default rule: parallel links merged, simple 2-core, largest "
               "component", {"links": "merged"}),
    ("parallel-one", "ECMP over parallel links as one next hop (capacities added); topology "
                     "set and draws the multigraph's", {"parallel": "one"}),
)
#: The sps segment rules the reproduction runs beside each other (docs/method.md §5).
SPS_RULES_RUN: Tuple[str, ...] = tuple(SEGMENT_RULES)
#: Figure 7b's means are read to 1e-4: a mean within this matches.
SPS_TOL = 5e-4
#: Bootstrap resamples of each hypothesis's intervals (the paper rule's use the default).
HYPOTHESIS_RESAMPLES = 200
#: Figure 7's per-topology means agree when within this (a mean over a(a - 1) pairs moves by
#: at least 1 / (a(a - 1)); the figure's values are good to ~1e-8).
FIGURE7_TOL = 1e-6


def paper_config(seeds: int, **change: Any) -> MaxflowConfig:
    """The paper's max-flow configuration with ``seeds`` draws (seeds 0 .. seeds - 1), with
    ``change`` applied (a variant)."""
    base: Dict[str, Any] = dict(heavy=(1.0, 5.0, 10.0), seeds=tuple(range(seeds)),
                                models=("ecmp", "multipath", "sr"), ks=(4,), capacity="file",
                                weight="file", links="multigraph")
    base.update(change)
    return MaxflowConfig(**base)


def compare_multiset(ours: Sequence[int], paper: Sequence[int]) -> Dict[str, Any]:
    """Two multisets of integers (e.g. router counts): sizes, whether equal, and the values
    one holds more often than the other."""
    a, b = Counter(int(x) for x in ours), Counter(int(x) for x in paper)
    return {"ours": len(ours), "paper": len(paper), "equal": a == b,
            "only_ours": sorted((a - b).elements()), "only_paper": sorted((b - a).elements())}


def compare_sorted(ours: Sequence[float], paper: Sequence[float], tol: float) -> Dict[str, Any]:
    """Two lists of per-topology values compared in sorted order (a figure gives no names):
    how many agree within ``tol``, and the largest difference."""
    a, b = np.sort(np.asarray(ours, float)), np.sort(np.asarray(paper, float))
    out: Dict[str, Any] = {"ours": len(a), "paper": len(b), "tol": tol}
    if len(a) != len(b):
        out.update(equal_within=None, max_diff=None)
        return out
    d = np.abs(a - b)
    out.update(equal_within=int(np.count_nonzero(d <= tol)),
               max_diff=float(d.max()) if len(d) else 0.0)
    return out


def _paper_box(over: str, heavy: float) -> Optional[Tuple[float, float, float]]:
    boxes = FIGURE6_CDF_OVER_ECMP if over == "ecmp" else FIGURE6_CDF_OVER_MULTIPATH
    return boxes.get(heavy)


def figure6_values(rows: Sequence[Mapping[str, Any]], over: str, heavy: float) -> List[float]:
    """Every (topology, draw) improvement of sr (k = 4) over ``over`` at ``heavy`` %, pooled."""
    series = "sr k=4" + ("" if over == "ecmp" else "/" + over)
    per = improvement_draws(rows).get((series, heavy), {})
    return [v for t in sorted(per) for v in per[t]]


def figure6_rows(rows: Sequence[Mapping[str, Any]], *, seed: int = 0) -> List[Dict[str, Any]]:
    """sr (k = 4) over ecmp and over multipath per heavy percent, pooled, beside the paper's
    quartiles, N and share of zeros, with the verdict on the median."""
    out = []
    draws = improvement_draws(rows)
    for s in summarize(rows, aggregate="pooled", seed=seed):
        if s["model"] != "sr" or s["k"] != 4 or s["over"] not in ("ecmp", "multipath"):
            continue
        heavy, over = s["heavy"], s["over"]
        vals = [v for d in draws.get((s["series"], heavy), {}).values() for v in d]
        box = _paper_box(over, heavy)
        n_paper = FIGURE6_N.get(heavy)
        zeros_paper = FIGURE6_ZEROS.get(over, {}).get(heavy)
        out.append({
            "heavy": heavy, "over": over, "values": s["values"], "topologies": s["topologies"],
            "q1": s["q1"], "median": s["median"], "q3": s["q3"],
            "median_lo": s["median_lo"], "median_hi": s["median_hi"],
            "zero_share": (sum(1 for v in vals if abs(v) < 1e-9) / len(vals)) if vals else None,
            "paper_n": n_paper, "paper": list(box) if box else None,
            "paper_zero_share": zeros_paper / n_paper if zeros_paper and n_paper else None,
            "verdict": verdict(box[1], s["median"], s["median_lo"], s["median_hi"])
            if box else ""})
    return out


def _variant_row(name: str, what: str, rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    cells, paper = {}, {}
    for r in figure6_rows(rows):
        key = f"{r['over']}@{r['heavy']:g}"
        cells[key] = [r["median"], r["median_lo"], r["median_hi"]]
        paper[key] = r["paper"][1] if r["paper"] else None
    return {"variant": name, "change": what, "medians": cells, "paper": paper}


def _figure5(out: Path) -> Dict[str, Any]:
    records, loops = [], []
    for path in topology_files(PAPER_TOPO):
        topo = read_topology(path, capacity="file", weight="file", links="multigraph")
        records.append(topology_stats(topo))
        kept = set(prune(topo).names)
        loops.append(sum(1 for r in topo.meta.get("self_loop_routers", ()) if r in kept))
    write_csv(out / "topologies.csv", records, STATS_COLUMNS)
    kept_rows = [(r, n) for r, n in zip(records, loops) if r["pruned_nodes"] > 0]
    links = [r["pruned_links"] for r, _ in kept_rows]
    with_loops = [r["pruned_links"] + n for r, n in kept_rows]
    return {"topologies": len(records), "nonempty": len(kept_rows),
            "with_edge_routers": sum(1 for r, _ in kept_rows if r["edge_routers"] >= 2),
            "largest": max((r["pruned_nodes"] for r, _ in kept_rows), default=0),
            "routers": compare_multiset([r["pruned_nodes"] for r, _ in kept_rows],
                                        FIGURE5_ROUTERS),
            "links": compare_multiset(links, FIGURE5_LINKS),
            "links_with_self_loops": compare_multiset(with_loops, FIGURE5_LINKS),
            "self_loops": {r["name"]: n for r, n in kept_rows if n},
            "per_topology": {"routers": sorted(r["pruned_nodes"] for r, _ in kept_rows),
                             "links": sorted(with_loops)}}


def _figure7(rows: Sequence[Mapping[str, Any]],
             rules: Sequence[str] = ("dag",)) -> Dict[str, Any]:
    def means(method: str, k: Any = None) -> List[float]:
        return [float(r["mean_paths"]) for r in rows
                if r.get("method") == method and (k is None or str(r.get("k")) == str(k))
                and (r.get("status") or "ok") == "ok"]

    mx, gr = means("max"), means("greedy")
    by_max, by_greedy = _by_topology(rows, "max"), _by_topology(rows, "greedy")
    both = sorted(set(by_max) & set(by_greedy))  # a failed row of one method is not a miss
    reach = sum(1 for t in both if abs(by_max[t] - by_greedy[t]) <= 1e-9)
    sps_rules: Dict[str, Dict[str, List[Any]]] = {}
    for rule in rules:
        by_k: Dict[str, List[Any]] = {}
        for k, want in FIGURE7_SPS_MEAN.items():
            vals = means(sps_method(rule), k)
            if vals:
                ours = float(np.mean(vals))
                by_k[str(k)] = [ours, want, verdict(want, ours, None, None, tol=SPS_TOL,
                                                     digits=4)]
        if by_k:
            sps_rules[rule] = by_k
    closest = None
    for rule, by_k in sps_rules.items():
        hits = sum(1 for v in by_k.values() if v[2] == "matches")
        worst = max((v[0] - v[1] for v in by_k.values()), key=abs)
        cand = {"rule": rule, "matches": hits, "of": len(by_k), "max_diff": worst}
        if closest is None or (hits, -abs(worst)) > (closest["matches"], -abs(closest["max_diff"])):
            closest = cand
    return {"max": compare_sorted(mx, FIGURE7_MAX_MEANS, FIGURE7_TOL),
            "greedy": compare_sorted(gr, FIGURE7_GREEDY_MEANS, FIGURE7_TOL),
            "per_topology": {"max": sorted(mx), "greedy": sorted(gr)},
            "mean": {"max": [float(np.mean(mx)) if mx else math.nan,
                             float(np.mean(FIGURE7_MAX_MEANS))],
                     "greedy": [float(np.mean(gr)) if gr else math.nan,
                                float(np.mean(FIGURE7_GREEDY_MEANS))],
                     **{f"sps k={k}": [float(np.mean(means("sps", k))) if means("sps", k)
                                       else math.nan, v]
                        for k, v in FIGURE7_SPS_MEAN.items()}},
            "sps_rules": sps_rules, "sps_paper_rule": closest,
            "greedy_reaches_max": [reach, len(both)]}


def _draw_facts(config: MaxflowConfig) -> Dict[Tuple[str, float, int], Dict[str, Any]]:
    """The drawn pair sets of a configuration (its links rule, pair order and rounding), and
    whether one of their pairs is disconnected."""
    topo_draws = {}
    for path in topology_files(PAPER_TOPO):
        topo = prune(read_topology(path, capacity="file", weight="file", links=config.links))
        if len(topo.edge_router_ids) >= 2:
            topo_draws[path.stem] = (topo, config.heavy, config.seeds)

    def draw(topo: Topology, *, percent: float, seed: int) -> np.ndarray:
        return heavy_pairs(topo, percent=percent, seed=seed, ordered=config.ordered,
                           rounding=config.rounding)

    return draw_facts(topo_draws, draw, component_labels, edge_router_pairs)


def _keyed(cells: Mapping[float, Any]) -> Dict[str, Any]:
    return {f"{h:g}": c for h, c in cells.items()}


def _by_topology(rows: Sequence[Mapping[str, Any]], method: str) -> Dict[str, float]:
    return {str(r["topology"]): float(r["mean_paths"]) for r in rows
            if r.get("method") == method and (r.get("status") or "ok") == "ok"}


def run_reproduce(out_dir: Union[str, Path], *, seeds: int = 20, jobs: int = 1,
                  variants: bool = True, progress: Union[bool, str] = True,
                  executor: Optional[TaskExecutor] = None,
                  overwrite: bool = False) -> Dict[str, Any]:
    """Run (or resume) every study of the reproduction and return the report as data
    (also written to ``DIR/report.json``; NaN as null, keys as text, as it reads back)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report: Dict[str, Any] = {"paper": PAPER, "seeds": seeds, "topo": PAPER_TOPO,
                              "environment": environment(), "variants_run": variants}
    report["figure5"] = _figure5(out)
    studies: List[Tuple[str, str, Path, MaxflowConfig]] = [
        ("paper rule", "multigraph links, ordered pairs, ceil (the paper's configuration)",
         out / "maxflow", paper_config(seeds))]
    if variants:
        studies += [(name, what, out / "variants" / name, paper_config(seeds, **change))
                    for name, what, change in VARIANTS]
    timings = {}
    main_rows: List[Dict[str, Any]] = []
    table = []
    variant_draws = {}
    for name, what, folder, config in studies:
        run, rows = run_maxflow_study(PAPER_TOPO, folder, config, jobs=jobs, progress=progress,
                                      executor=executor, overwrite=overwrite)
        timings[name] = run.seconds
        if not main_rows:
            main_rows = rows
        else:
            table.append(_variant_row(name, what, rows))
            variant_draws[name] = (what, draws_of(rows, _draw_facts(config)))
    report["figure6"] = figure6_rows(main_rows)
    report["variants"] = table
    draws = draws_of(main_rows, _draw_facts(paper_config(seeds)))
    report["figure6_numbers"] = _keyed(figure6_cells(draws, lambda d, c: True))
    report["figure6_hypotheses"] = [
        {**h, "cells": _keyed(h["cells"])}
        for h in hypothesis_table(draws, variant_draws, resamples=HYPOTHESIS_RESAMPLES)]
    dconfig = DisjointConfig(ks=(1, 2, 3, 4, 5, 6), capacity="file", weight="file",
                             links="multigraph", threads=max(1, jobs),
                             segment_rules=SPS_RULES_RUN)
    try:
        run, rows = run_disjoint_study(PAPER_TOPO, out / "disjoint", dconfig, jobs=jobs,
                                       progress=progress, executor=executor,
                                       overwrite=overwrite)
    except UsageError as exc:
        if "holds a different study" not in str(exc):
            raise
        # DIR/disjoint is reproduce's own: a folder of an earlier version (fewer segment
        # rules) is computed again rather than refused
        report["notes"] = [f"DIR/disjoint was computed again: {exc}"]
        run, rows = run_disjoint_study(PAPER_TOPO, out / "disjoint", dconfig, jobs=jobs,
                                       progress=progress, executor=executor, overwrite=True)
    timings["disjoint"] = run.seconds
    report["figure7"] = _figure7(rows, SPS_RULES_RUN)
    report["seconds"] = timings
    text = json_text(plain(report))  # NaN -> null
    atomic_write_text(out / "report.json", text)
    return dict(json.loads(text))

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

import math
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..io import read_topology, topology_files
from ..io.files import atomic_write_text, json_text, write_csv
from ..topology import prune
from .disjoint import DisjointConfig, run_disjoint_study
from .executors import TaskExecutor
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
from .stats import STATS_COLUMNS, topology_stats
from .summary import plain

__all__ = ["PAPER_TOPO", "VARIANTS", "paper_config", "run_reproduce", "verdict",
           "compare_multiset", "compare_sorted", "figure6_rows", "figure6_values",
           "format_report"]

#: The data set the paper's study used.
PAPER_TOPO = "repetita/inverse-capacity"
#: Variants that change a rule of the paper's configuration: (name, what changes, config).
VARIANTS: Tuple[Tuple[str, str, Dict[str, Any]], ...] = (
    ("round", "round(x * #pairs) heavy hitters instead of ceil", {"rounding": "round"}),
    ("unordered", "heavy hitters drawn from unordered pairs", {"ordered": False}),
    ("unordered+round", "both of the above", {"ordered": False, "rounding": "round"}),
    ("merged", "tpcstudy's default rule: parallel links merged, simple 2-core, largest "
               "component", {"links": "merged"}),
)
#: A median "matches" the paper's when within this (the figures give two decimals).
MATCH_TOL = 0.005
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


def verdict(paper: float, ours: float, lo: float, hi: float) -> str:
    """``matches`` (within :data:`MATCH_TOL`), ``inside noise`` (the paper's value is inside
    our interval), else ``differs by +x`` (ours minus the paper's, in points)."""
    if abs(ours - paper) <= MATCH_TOL:
        return "matches"
    if not (math.isnan(lo) or math.isnan(hi)) and lo - MATCH_TOL <= paper <= hi + MATCH_TOL:
        return "inside noise"
    return f"differs by {ours - paper:+.1f}"


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
    cells = {}
    for r in figure6_rows(rows):
        cells[f"{r['over']}@{r['heavy']:g}"] = [r["median"], r["median_lo"], r["median_hi"]]
    return {"variant": name, "change": what, "medians": cells}


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
            "self_loops": {r["name"]: n for r, n in kept_rows if n}}


def _figure7(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    def means(method: str, k: Any = None) -> List[float]:
        return [float(r["mean_paths"]) for r in rows
                if r.get("method") == method and (k is None or str(r.get("k")) == str(k))
                and (r.get("status") or "ok") == "ok"]

    mx, gr = means("max"), means("greedy")
    by_max, by_greedy = _by_topology(rows, "max"), _by_topology(rows, "greedy")
    both = sorted(set(by_max) & set(by_greedy))  # a failed row of one method is not a miss
    reach = sum(1 for t in both if abs(by_max[t] - by_greedy[t]) <= 1e-9)
    return {"max": compare_sorted(mx, FIGURE7_MAX_MEANS, FIGURE7_TOL),
            "greedy": compare_sorted(gr, FIGURE7_GREEDY_MEANS, FIGURE7_TOL),
            "mean": {"max": [float(np.mean(mx)) if mx else math.nan,
                             float(np.mean(FIGURE7_MAX_MEANS))],
                     "greedy": [float(np.mean(gr)) if gr else math.nan,
                                float(np.mean(FIGURE7_GREEDY_MEANS))],
                     **{f"sps k={k}": [float(np.mean(means("sps", k))) if means("sps", k)
                                       else math.nan, v]
                        for k, v in FIGURE7_SPS_MEAN.items()}},
            "greedy_reaches_max": [reach, len(both)]}


def _by_topology(rows: Sequence[Mapping[str, Any]], method: str) -> Dict[str, float]:
    return {str(r["topology"]): float(r["mean_paths"]) for r in rows
            if r.get("method") == method and (r.get("status") or "ok") == "ok"}


def run_reproduce(out_dir: Union[str, Path], *, seeds: int = 20, jobs: int = 1,
                  variants: bool = True, progress: Union[bool, str] = True,
                  executor: Optional[TaskExecutor] = None,
                  overwrite: bool = False) -> Dict[str, Any]:
    """Run (or resume) every study of the reproduction and return the report as data
    (also written to ``DIR/report.json``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report: Dict[str, Any] = {"paper": PAPER, "seeds": seeds, "topo": PAPER_TOPO,
                              "environment": environment()}
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
    for name, what, folder, config in studies:
        run, rows = run_maxflow_study(PAPER_TOPO, folder, config, jobs=jobs, progress=progress,
                                      executor=executor, overwrite=overwrite)
        timings[name] = run.seconds
        if not main_rows:
            main_rows = rows
        table.append(_variant_row(name, what, rows))
    report["figure6"] = figure6_rows(main_rows)
    report["variants"] = table
    run, rows = run_disjoint_study(PAPER_TOPO, out / "disjoint",
                                   DisjointConfig(ks=(1, 2, 3, 4, 5, 6), capacity="file",
                                                  weight="file", links="multigraph",
                                                  threads=max(1, jobs)),
                                   jobs=jobs, progress=progress, executor=executor,
                                   overwrite=overwrite)
    timings["disjoint"] = run.seconds
    report["figure7"] = _figure7(rows)
    report["seconds"] = timings
    atomic_write_text(out / "report.json", json_text(plain(report)))  # NaN -> null
    return report


# --------------------------------------------------------------------------- the report
def _num(x: Any, nd: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _interval(lo: float, hi: float) -> str:
    return "-" if math.isnan(lo) else f"[{lo:.1f}, {hi:.1f}]"


def format_report(report: Mapping[str, Any], figures: Sequence[str] = ()) -> str:
    """``report.md``: the paper's numbers beside ours, with intervals and verdicts."""
    f5, f6, f7 = report["figure5"], report["figure6"], report["figure7"]
    env = report.get("environment") or {}
    lines = [f"# Reproducing {report['paper']}: the topology study", "",
             f"{report['topo']} (REPETITA's Topology Zoo instances: their capacities and "
             "inverse-capacity IGP weights), parallel links kept as links of their own "
             "(`--links multigraph`), sr with at most 4 segments, heavy hitters ceil(x * #pairs) "
             f"of the ordered edge-router pairs, {report['seeds']} draws per topology, pooled "
             "over every (topology, draw) value as the paper's Figure 6. Medians carry a 95 % "
             "bootstrap interval over each topology's draws (docs/method.md §4).", "",
             f"tpcstudy {env.get('tpcstudy', '?')} (commit {env.get('git_commit') or '?'}"
             f"{', with local changes' if env.get('git_dirty') else ''}), python "
             f"{env.get('python', '?')}, {env.get('platform', '?')}; packages: "
             + ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
             + ".", ""]
    lines += ["## Figure 5: the topology set", "",
              f"- {f5['nonempty']} of {f5['topologies']} topologies non-empty after pruning "
              f"(largest {f5['largest']} routers); {f5['with_edge_routers']} with at least two "
              "edge routers (the N of Figure 7).",
              _multiset_line("routers", f5["routers"]), _multiset_line("links", f5["links"])]
    if not f5["links"]["equal"] and f5["links_with_self_loops"]["equal"]:
        lines.append("- Counting self-loops as links, as the figure does, the links multiset "
                     "equals Figure 5's too: the files of "
                     + ", ".join(f"{k} ({v})" for k, v in f5["self_loops"].items())
                     + " list self-loops at kept routers; tpcstudy drops them (they carry "
                     "no traffic).")
    lines.append("")
    lines += ["## Figure 6: sr (k = 4) improvement in %, pooled", "",
              "| heavy | over | N ours / paper | ours Q1 / median / Q3 | median interval | "
              "paper Q1 / median / Q3 | no gain (= 0) ours / paper | verdict (median) |",
              "|---|---|---|---|---|---|---|---|"]
    for r in f6:
        paper = r["paper"]
        lines.append(
            f"| {r['heavy']:g} % | {r['over']} | {r['values']} / {r['paper_n'] or '-'} | "
            f"{_num(r['q1'])} / **{_num(r['median'])}** / {_num(r['q3'])} | "
            f"{_interval(r['median_lo'], r['median_hi'])} | "
            + (f"{paper[0]:.2f} / **{paper[1]:.2f}** / {paper[2]:.2f}" if paper else "-")
            + f" | {_pct(r['zero_share'])} / {_pct(r['paper_zero_share'])}"
            + f" | {r['verdict'] or '-'} |")
    lines += ["", "## Variants: a rule changed (median [interval])", "",
              "| variant | change | over ecmp 1 % | 5 % | 10 % | over multipath 1 % | 5 % | 10 % |",
              "|---|---|---|---|---|---|---|---|"]
    for v in report["variants"]:
        cells = [_cell(v["medians"].get(f"{over}@{h}"))
                 for over in ("ecmp", "multipath") for h in ("1", "5", "10")]
        lines.append(f"| {v['variant']} | {v['change']} | " + " | ".join(cells) + " |")
    paper_line = [f"{b[1]:.2f}" if b else "-" for b in
                  (FIGURE6_CDF_OVER_ECMP.get(h) for h in (1.0, 5.0, 10.0))]
    paper_line += [f"{b[1]:.2f}" if b else "-" for b in
                   (FIGURE6_CDF_OVER_MULTIPATH.get(h) for h in (1.0, 5.0, 10.0))]
    lines.append("| paper | Figure 6 | " + " | ".join(paper_line) + " |")
    lines += ["", "## Figure 7: link-disjoint paths per ordered edge-router pair, per topology",
              "", "Paths are disjoint by router adjacency (parallel links count as one, as the "
              "figure counts them); the figure names no topology, so per-topology means are "
              "compared in sorted order.", ""]
    for method in ("max", "greedy"):
        m = f7[method]
        lines.append(f"- {method}: {m['ours']} topologies here, {m['paper']} in the figure; "
                     + (f"{m['equal_within']} of {m['ours']} equal (within {m['tol']:g}), "
                        f"largest difference {m['max_diff']:.4f}." if m["equal_within"]
                        is not None else "the counts differ."))
    reach, total = f7["greedy_reaches_max"]
    lines.append(f"- greedy reaches max on {reach} of {total} topologies "
                 f"({100 * reach / max(total, 1):.1f} %; the paper: 70 %).")
    lines += ["", "| method | mean over topologies, ours | the paper's |", "|---|---|---|"]
    lines += [f"| {k} | {v[0]:.4f} | {v[1]:.4f} |" for k, v in f7["mean"].items()]
    lines.append("")
    lines += ["## What this says", "", _conclusion(f6), "", _variants_line(report["variants"]),
              "", _zeros_line(f6), ""]
    if figures:
        lines += ["## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in figures] + [""]
    secs = report.get("seconds") or {}
    if secs:
        lines += ["Run time: " + ", ".join(f"{k} {v:.0f} s" for k, v in secs.items()) + "."]
    return "\n".join(lines) + "\n"


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _cell(c: Optional[Sequence[float]]) -> str:
    if not c:
        return "-"
    return f"{c[0]:.1f} {_interval(c[1], c[2])}"


def _multiset_line(what: str, c: Mapping[str, Any]) -> str:
    if c["equal"]:
        return (f"- Pruned {what} per topology: the multiset equals Figure 5's "
                f"({c['ours']} values).")
    return (f"- Pruned {what} per topology: {c['ours']} values here, {c['paper']} in Figure 5; "
            f"only here: {c['only_ours'][:20]}; only in the paper: {c['only_paper'][:20]}.")


def _variants_line(variants: Sequence[Mapping[str, Any]]) -> str:
    """Which variant holds the paper's median inside its noise, cell by cell."""
    hits = []
    for v in variants:
        cells = []
        for key, (med, lo, hi) in v["medians"].items():
            over, _, heavy = key.partition("@")
            box = _paper_box(over, float(heavy))
            if box and verdict(box[1], med, lo, hi) != "" and not verdict(
                    box[1], med, lo, hi).startswith("differs"):
                cells.append(f"over {over} at {heavy} %")
        if cells:
            hits.append(f"{v['variant']} ({', '.join(cells)})")
    if not hits:
        return "No variant brings a median of the paper's inside its noise interval."
    return ("Variants whose median holds the paper's inside its noise interval: "
            + "; ".join(hits) + ". None does so for every cell.")


def _zeros_line(f6: Sequence[Mapping[str, Any]]) -> str:
    pairs = [(r["zero_share"], r["paper_zero_share"]) for r in f6
             if r["zero_share"] is not None and r["paper_zero_share"] is not None]
    if not pairs:
        return ""
    ours = [100 * a for a, _ in pairs]
    theirs = [100 * b for _, b in pairs]
    return (f"Draws where sr gains nothing: {min(ours):.1f}-{max(ours):.1f} % here, "
            f"{min(theirs):.1f}-{max(theirs):.1f} % in the paper's CDFs; the paper pools "
            + ", ".join(f"{r['paper_n']}" for r in f6 if r["over"] == "ecmp")
            + " values where 20 draws of its 219 topologies would give "
            f"{219 * 20}: some draws are not in its figure, and which is not said.")


def _conclusion(f6: Sequence[Mapping[str, Any]]) -> str:
    diffs = [r for r in f6 if r["verdict"].startswith("differs")]
    same = [r for r in f6 if r["paper"] and not r["verdict"].startswith("differs")]
    parts = []
    if same:
        parts.append("agree with the paper (matching or inside the draw noise) for "
                     + ", ".join(f"over {r['over']} at {r['heavy']:g} %" for r in same))
    if diffs:
        parts.append("differ beyond the draw noise for "
                     + ", ".join(f"over {r['over']} at {r['heavy']:g} % "
                                 f"({r['median']:.1f} vs {r['paper'][1]:.2f})" for r in diffs))
    return ("The medians " + "; they ".join(parts) + ". The topology set is the paper's "
            "(Figure 5), so a difference left is in the LP values themselves, which the "
            "paper's unpublished solver code would settle; the variants show how far the "
            "rules the paper leaves open move the medians." if parts else "No comparison.")

"""``DIR/report.md`` of ``tpcstudy reproduce``: every number of the paper's Figures 5, 6 and 7
beside ours, each with its noise interval and a verdict, and one concluding sentence per figure
(docs/method.md §4-5). Reads the report as data (:func:`tpcstudy.study.reproduce.run_reproduce`,
or ``DIR/report.json``: the same with NaN written as null).

Verdicts: ``matches`` (within the figure's precision), ``inside noise`` (the paper's number is
inside our 95 % draw-noise interval), else ``differs by`` ours minus the paper's.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence

from .figure6_rules import HYPOTHESES

__all__ = ["MATCH_TOL", "verdict", "format_report", "show_text", "figure6_number_rows"]

#: A median "matches" the paper's when within this (the figures give two decimals).
MATCH_TOL = 0.005
#: Configurations listed in report.md's hypothesis table (all are in report.json).
TABLE_ROWS = 12
_HEAVY = ("1", "5", "10")
_RULES = {name: what for name, what, _, _ in HYPOTHESES}


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def verdict(paper: float, ours: float, lo: Optional[float], hi: Optional[float], *,
            tol: float = MATCH_TOL, digits: int = 1) -> str:
    """``matches`` (within ``tol``), ``inside noise`` (the paper's value is inside our
    interval), else ``differs by +x`` (ours minus the paper's)."""
    if abs(ours - paper) <= tol:
        return "matches"
    if not (_nan(lo) or _nan(hi)) and lo - tol <= paper <= hi + tol:  # type: ignore[operator]
        return "inside noise"
    return f"differs by {ours - paper:+.{digits}f}"


def _num(x: Any, nd: int = 2) -> str:
    return "-" if _nan(x) else f"{x:.{nd}f}"


def _interval(lo: Any, hi: Any, nd: int = 1) -> str:
    return "-" if _nan(lo) or _nan(hi) else f"[{lo:.{nd}f}, {hi:.{nd}f}]"


def _pct(x: Optional[float]) -> str:
    return "-" if _nan(x) else f"{100 * x:.1f} %"  # type: ignore[operator]


def _heavy_key(h: Any) -> str:
    return f"{float(h):g}"


# --------------------------------------------------------------------------- Figure 5
def _multiset_line(what: str, c: Mapping[str, Any]) -> str:
    if c["equal"]:
        return (f"- Pruned {what} per topology: the multiset equals Figure 5's "
                f"({c['ours']} values): **matches**.")
    return (f"- Pruned {what} per topology: {c['ours']} values here, {c['paper']} in Figure 5; "
            f"only here: {c['only_ours'][:20]}; only in the paper: {c['only_paper'][:20]}: "
            "**differs**.")


def _figure5(f5: Mapping[str, Any]) -> List[str]:
    lines = ["## Figure 5: the topology set", "",
             f"- {f5['nonempty']} of {f5['topologies']} topologies non-empty after pruning "
             f"(the paper: 233, **{'matches' if f5['nonempty'] == 233 else 'differs'}**; "
             f"largest {f5['largest']} routers, the paper's 167); {f5['with_edge_routers']} with "
             "at least two edge routers (the N of Figure 7, 219: "
             f"**{'matches' if f5['with_edge_routers'] == 219 else 'differs'}**).",
             _multiset_line("routers", f5["routers"])]
    links_ok = f5["links"]["equal"] or f5["links_with_self_loops"]["equal"]
    if f5["links"]["equal"]:
        lines.append(_multiset_line("links", f5["links"]))
    else:
        lines.append(_multiset_line("links", f5["links"]).replace("**differs**",
                     "differs as dropped" if links_ok else "**differs**"))
    if not f5["links"]["equal"] and f5["links_with_self_loops"]["equal"]:
        lines.append("- Counting self-loops as links, as the figure does, the links multiset "
                     "equals Figure 5's too (**matches**): the files of "
                     + ", ".join(f"{k} ({v})" for k, v in f5["self_loops"].items())
                     + " list self-loops at kept routers; tpcstudy drops them (they carry "
                     "no traffic).")
    ok = f5["routers"]["equal"] and links_ok and f5["nonempty"] == 233
    lines += ["", "**Figure 5 concludes:** " + (
        "the topology set is the paper's exactly (router and link multisets, 233 topologies, "
        "219 with edge routers)." if ok else
        "the topology set differs from the paper's (see above)."), ""]
    return lines


# --------------------------------------------------------------------------- Figure 6
_NAMES = (("n", "N (values pooled)", "n"), ("zeros_ecmp", "zeros over ecmp", "zeros_ecmp"),
          ("zeros_multipath", "zeros over multipath", "zeros_multipath"),
          ("ecmp_q1", "over ecmp Q1", 0), ("ecmp_median", "over ecmp median", 1),
          ("ecmp_q3", "over ecmp Q3", 2), ("multipath_q1", "over multipath Q1", 0),
          ("multipath_median", "over multipath median", 1),
          ("multipath_q3", "over multipath Q3", 2))


def figure6_number_rows(cells: Mapping[str, Any], seeds: int = 20) -> List[dict]:
    """Every number of Figure 6 (N, zeros, the six boxes, at each percent) beside the paper's:
    ``{heavy, what, ours, lo, hi, paper, verdict}`` (counts: within 0.5; values: 0.005). The
    paper pools 20 draws per topology: with ``seeds`` draws our counts are scaled by
    20 / seeds (and say so)."""
    out = []
    scale = 20.0 / seeds if seeds else 1.0
    for h in sorted(cells, key=float):
        c = cells[h]
        p = c["paper"]
        for name, label, src in _NAMES:
            if isinstance(src, str):
                want = p.get(src)
                tol, digits = 0.5, 0
            else:
                box = p.get(name.split("_")[0])
                want = box[src] if box else None
                tol, digits = MATCH_TOL, 2
            ours, lo, hi = c[name]
            if isinstance(src, str) and scale != 1.0:
                ours, lo, hi = (None if _nan(x) else x * scale for x in (ours, lo, hi))
                label = f"{label} (x {scale:g}: 20 draws)"
            out.append({"heavy": _heavy_key(h), "what": label, "ours": ours, "lo": lo, "hi": hi,
                        "paper": want, "digits": digits,
                        "verdict": "-" if want is None or _nan(ours)
                        else verdict(float(want), ours, lo, hi, tol=tol, digits=digits)})
    return out


def _figure6(report: Mapping[str, Any]) -> List[str]:
    lines = ["## Figure 6: sr (k = 4) improvement in %, pooled over (topology, draw)", "",
             "Every number of the figure beside ours, with our 95 % draw-noise interval (a "
             "bootstrap over every topology's draws) and a verdict.", "",
             "| heavy | number | ours | interval | paper | verdict |", "|---|---|---|---|---|---|"]
    rows = figure6_number_rows(report["figure6_numbers"], report.get("seeds") or 20)
    for r in rows:
        d = r["digits"]
        lines.append(f"| {r['heavy']} % | {r['what']} | {_num(r['ours'], d)} | "
                     f"{_interval(r['lo'], r['hi'], d)} | {_num(r['paper'], d)} | "
                     f"{r['verdict']} |")
    lines += ["", _variants_line(report.get("variants") or [], report.get("variants_run", True)),
              ""]
    lines += _hypotheses(report.get("figure6_hypotheses") or [])
    inside = sum(1 for r in rows if r["verdict"] in ("matches", "inside noise"))
    best = (report.get("figure6_hypotheses") or [{}])[1:2]
    best = [b for b in best if b]
    lines += ["", "**Figure 6 concludes:** " + (
        f"under the paper's stated rule {inside} of {len(rows)} numbers agree; "
        + (f"the closest configuration, `{best[0]['hypothesis']}`, holds "
           f"{best[0]['judge']['inside']} of {best[0]['judge']['of']}, so none reproduces the "
           "figure; starting from the paper rule's draws, " if best else "")
        + _why_none(report["figure6_numbers"], report.get("seeds") or 20)
        + _variant_argument(report.get("figure6_hypotheses") or [], report.get("seeds") or 20)),
        ""]
    return lines


def _why_none(cells: Mapping[str, Any], seeds: int = 20) -> str:
    """The counting argument: dropping draws cannot remove more zeros than draws (counts
    scaled to the paper's 20 draws per topology)."""
    parts = []
    scale = 20.0 / seeds if seeds else 1.0
    for h in sorted(cells, key=float):
        c = cells[h]
        p = c["paper"]
        if p.get("n") is None:
            continue
        dropped = c["n"][0] * scale - p["n"]
        if dropped < 0:  # fewer values than the paper: dropping cannot reach its N at all
            continue
        for over in ("ecmp", "multipath"):
            extra = c[f"zeros_{over}"][0] * scale - p[f"zeros_{over}"]
            if extra > 0 and extra > dropped:
                parts.append(f"{_heavy_key(h)} % over {over}: {extra:.0f} zeros too many, "
                             f"{dropped:.0f} draws to drop")
    if not parts:
        return "a keep/drop rule could in principle reach the paper's counts."
    return ("no rule that keeps or drops draws can reach the paper's N and zero counts together, "
            "because ours hold more zeros beyond the paper's than there are draws to drop ("
            + "; ".join(parts) + "): some draws where sr gains nothing here gain in the paper, "
            "so the LP values themselves differ there.")


def _hypotheses(table: Sequence[Mapping[str, Any]]) -> List[str]:
    if not table:
        return []
    shown = list(table[:1 + TABLE_ROWS])
    lines = ["### Figure 6's counts: each hypothesis as a rule", "",
             "A configuration is a variant run (how draws are made: `round`, `unordered`, "
             "`merged`, `parallel-one`; none: the paper's rule) with a keep rule (which draws "
             "are pooled). Per heavy percent: N, zeros over ecmp / multipath, medians over ecmp "
             "/ multipath; `inside` counts the 27 numbers (N, two zero counts, six box values, "
             "at three percents) that hold the paper's inside their 95 % interval. The "
             f"{len(shown) - 1} best of {len(table)} configurations (all of them in "
             "report.json, `figure6_hypotheses`):", "",
             "| configuration | inside | 1 %: N, zeros, medians | 5 % | 10 % |",
             "|---|---|---|---|---|"]
    for r in shown:
        cells = r["cells"]
        row = []
        for h in _HEAVY:
            c = cells.get(h) or cells.get(float(h))
            if not c:
                row.append("-")
                continue
            row.append(f"{c['n'][0]:.0f}, {c['zeros_ecmp'][0]:.0f} / {c['zeros_multipath'][0]:.0f},"
                       f" {_num(c['ecmp_median'][0], 1)} / {_num(c['multipath_median'][0], 1)}")
        lines.append(f"| {r['hypothesis']} | {r['judge']['inside']} / "
                     f"{r['judge']['of']} | " + " | ".join(row) + " |")
    lines.append("| **the paper** | 27 / 27 | 4021, 588 / 669, 71.43 / 66.67 | "
                 "4101, 596 / 699, 40.00 / 33.33 | 4220, 619 / 750, 30.43 / 25.00 |")
    lines += ["", "The keep rules: " + "; ".join(
        f"`{name}`: {what}" for name, what in _RULES.items()) + "."]
    return lines


def _variant_argument(table: Sequence[Mapping[str, Any]], seeds: int) -> str:
    """The counting argument at 10 % for every variant run (its keep-all row)."""
    held = []
    for r in table:
        name = r["hypothesis"]
        if not name.endswith(": paper rule"):
            continue
        c = r["cells"].get("10") or r["cells"].get(10.0)
        if not c or c["paper"].get("n") is None:
            continue
        scale = 20.0 / seeds if seeds else 1.0
        dropped = c["n"][0] * scale - c["paper"]["n"]
        extra = c["zeros_ecmp"][0] * scale - c["paper"]["zeros_ecmp"]
        if dropped >= 0 and extra > dropped:
            held.append(f"{name.split(':')[0]} ({extra:.0f} > {dropped:.0f})")
    return (" The same holds at 10 % over ecmp in every variant run: " + ", ".join(held) + "."
            if held else "")


def _variants_line(variants: Sequence[Mapping[str, Any]], run: bool = True) -> str:
    """Which variant holds the paper's median inside its noise, cell by cell."""
    if not run or not variants:
        return "Variants not run (`--no-variants`): no rule change is judged here."
    hits = []
    for v in variants:
        cells = []
        for key, (med, lo, hi) in v["medians"].items():
            over, _, heavy = key.partition("@")
            box = (v.get("paper") or {}).get(key)
            if box is not None and not verdict(box, med, lo, hi).startswith("differs"):
                cells.append(f"over {over} at {heavy} %")
        if cells:
            hits.append(f"{v['variant']} ({', '.join(cells)})")
    if not hits:
        return "No variant brings a median of the paper's inside its noise interval."
    return ("Variants whose median holds the paper's inside its noise interval: "
            + "; ".join(hits) + ".")


# --------------------------------------------------------------------------- Figure 7
def _figure7(f7: Mapping[str, Any]) -> List[str]:
    lines = ["## Figure 7: link-disjoint paths per ordered edge-router pair", "",
             "Paths are disjoint by router adjacency (parallel links count as one, as the "
             "figure counts them); the figure names no topology, so per-topology means are "
             "compared in sorted order. These numbers are computed over every pair: no draw, no "
             "noise; a mean `matches` within the figure's precision (1e-4 for the sps means, "
             "1e-6 per topology).", ""]
    for method in ("max", "greedy"):
        m = f7[method]
        ok = m["equal_within"] is not None and m["equal_within"] == m["ours"]
        lines.append(f"- {method}, per topology (Figure 7a): {m['ours']} topologies here, "
                     f"{m['paper']} in the figure; "
                     + (f"{m['equal_within']} of {m['ours']} equal (within {m['tol']:g}), "
                        f"largest difference {m['max_diff']:.4f}: "
                        f"**{'matches' if ok else 'differs on ' + str(m['ours'] - m['equal_within'])}**."
                        if m["equal_within"] is not None else "the counts differ: **differs**."))
    reach, total = f7["greedy_reaches_max"]
    share = 100 * reach / max(total, 1)
    lines.append(f"- greedy reaches max on {reach} of {total} topologies ({share:.1f} %; the "
                 "paper's text says 70 %, a round number: "
                 f"**{'matches' if abs(share - 70) < 1 else 'differs by %+.1f' % (share - 70)}**"
                 " within 1 point).")
    lines += ["", "| mean over topologies | ours | the paper's | verdict |", "|---|---|---|---|"]
    for k in ("max", "greedy"):
        ours, want = f7["mean"][k]
        lines.append(f"| {k} | {_num(ours, 4)} | {_num(want, 4)} | "
                     f"{verdict(want, ours, None, None, tol=5e-4, digits=4)} |")
    rules = f7.get("sps_rules") or {}
    if rules:
        names = list(rules)
        lines += ["", "sps means by segment limit k under each segment rule (docs/method.md "
                  "§5; `dag` is tpcstudy's default):", "",
                  "| k | the paper's | " + " | ".join(names) + " |",
                  "|---|---|" + "---|" * len(names)]
        ks = sorted({k for r in rules.values() for k in r}, key=int)
        for k in ks:
            cells = []
            for name in names:
                ours, want, v = rules[name].get(k, (None, None, "-"))
                cells.append(f"{_num(ours, 4)} ({v})")
            want = next(iter(rules.values())).get(k, (None, None, ""))[1]
            lines.append(f"| {k} | {_num(want, 4)} | " + " | ".join(cells) + " |")
        best = f7.get("sps_paper_rule")
        if best:
            lines += ["", f"The rule closest to the paper's sps: **{best['rule']}** "
                      f"({best['matches']} of {best['of']} means match, largest difference "
                      f"{best['max_diff']:+.4f})."]
    mx = f7[ "max"]
    best = f7.get("sps_paper_rule") or {}
    lines += ["", "**Figure 7 concludes:** " + (
        f"max matches the paper on {mx['equal_within']} of {mx['ours']} topologies and greedy "
        f"reaches max on {share:.0f} % of them (the paper: 70 %); "
        + (f"the paper's sps is closest to the `{best['rule']}` segment rule (one shortest path "
           f"per segment), which matches {best['matches']} of its {best['of']} means and "
           f"stays within {abs(best['max_diff']):.3f} of the others."
           if best else "the sps rules were not run.")), ""]
    return lines


# --------------------------------------------------------------------------- the report
def format_report(report: Mapping[str, Any], figures: Sequence[str] = ()) -> str:
    """``report.md``: the paper's numbers beside ours, with intervals and verdicts."""
    env = report.get("environment") or {}
    lines = [f"# Reproducing {report['paper']}: the topology study", "",
             f"{report['topo']} (REPETITA's Topology Zoo instances: their capacities and "
             "inverse-capacity IGP weights), parallel links kept as links of their own "
             "(`--links multigraph`), sr with at most 4 segments, heavy hitters ceil(x * #pairs) "
             f"of the ordered edge-router pairs, {report['seeds']} draws per topology, pooled "
             "over every (topology, draw) value as the paper's Figure 6 (docs/method.md §4-5).",
             "",
             f"tpcstudy {env.get('tpcstudy', '?')} (commit {env.get('git_commit') or '?'}"
             f"{', with local changes' if env.get('git_dirty') else ''}), python "
             f"{env.get('python', '?')}, {env.get('platform', '?')}; packages: "
             + ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
             + ".", ""]
    lines += _figure5(report["figure5"])
    if report.get("figure6_numbers"):
        lines += _figure6(report)
    lines += _figure7(report["figure7"])
    if figures:
        lines += ["## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in figures] + [""]
    secs = report.get("seconds") or {}
    if secs:
        lines += ["Run time of this invocation (studies finished by an earlier one are "
                  "reused, not run again): "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in secs.items()) + "."]
    return "\n".join(lines) + "\n"


def show_text(report: Mapping[str, Any]) -> str:
    """The verdicts in a few lines (``tpcstudy show`` on a reproduce folder)."""
    lines = [f"reproduction of {report['paper']} ({report['seeds']} draws per topology)"]
    f5 = report["figure5"]
    lines.append(f"Figure 5: {f5['nonempty']} topologies (paper 233), routers "
                 f"{'match' if f5['routers']['equal'] else 'differ'}, "
                 f"{f5['with_edge_routers']} with edge routers (paper 219)")
    for r in figure6_number_rows(report.get("figure6_numbers") or {}, report.get("seeds") or 20):
        d = r["digits"]
        lines.append(f"Figure 6 {r['heavy']:>2} % {r['what']:<34} {_num(r['ours'], d):>8} "
                     f"{_interval(r['lo'], r['hi'], d):>18}  paper {_num(r['paper'], d):>7}  "
                     f"{r['verdict']}")
    f7 = report["figure7"]
    reach, total = f7["greedy_reaches_max"]
    lines.append(f"Figure 7 max per topology: {f7['max']['equal_within']} of {f7['max']['ours']} "
                 f"equal; greedy reaches max on {reach} of {total} (paper 70 %)")
    for name, by_k in (f7.get("sps_rules") or {}).items():
        lines.append(f"Figure 7 sps [{name}]: " + ", ".join(
            f"k={k} {_num(v[0], 3)} ({v[2]})" for k, v in sorted(by_k.items(),
                                                                key=lambda kv: int(kv[0]))))
    return "\n".join(lines)

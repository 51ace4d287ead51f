"""``tpcstudy reproduce``: the TPC paper's topology study in its own configuration, its numbers
beside ours with noise intervals and verdicts (``DIR/report.md``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..io.files import atomic_write_text
from ..study.executors import executor_scope
from ..study.reproduce import PAPER_TOPO, format_report, run_reproduce
from ..study.store import load_results
from ..study.summary import plain
from .options import RawHelp, add_executor_options, apply_mirror, checked_jobs, checked_seeds


def register(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce", help="the TPC paper's Figures 5-7 in its configuration, beside ours",
        description=__doc__ + "\n\nRuns, resumably: Figure 5's sizes, the max-flow study "
        f"({PAPER_TOPO}, file capacities and weights, --links multigraph, heavy 1, 5 and 10 % "
        "of the pairs, ecmp, multipath, sr k = 4, pooled) and its variants (round, unordered "
        "pairs, both, merged links, parallel links as one ECMP next hop), Figure 6's keep/drop "
        "hypotheses, Figure 7's disjoint-path study under every sps segment rule (dag, path, "
        "any); then writes DIR/report.md (every number with a verdict), DIR/report.json and "
        "DIR/figures/ (Figures 5, 6 and 7 beside the paper's). 'tpcstudy show DIR' prints the "
        "verdicts again.", formatter_class=RawHelp)
    p.add_argument("--seeds", type=int, default=20,
                   help="draws per topology and heavy percent (default 20, as the paper)")
    p.add_argument("--no-variants", action="store_true",
                   help="skip the variants (about four fifths of the run time)")
    p.add_argument("--mirror", metavar="DIR",
                   help="a local REPETITA mirror (same as TPCSTUDY_REPETITA_MIRROR)")
    add_executor_options(p)
    p.add_argument("--out", required=True, metavar="DIR",
                   help="results folder; re-running resumes")
    p.add_argument("--overwrite", action="store_true",
                   help="discard the results in DIR (e.g. of another --seeds) and start over")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    checked_seeds(args.seeds)
    args.topo = PAPER_TOPO
    apply_mirror(args)
    checked_jobs(args)
    t0 = time.perf_counter()
    with executor_scope(args.executor, args.jobs, args.scheduler) as executor:
        report = run_reproduce(args.out, seeds=args.seeds, jobs=args.jobs,
                               variants=not args.no_variants, progress=not args.no_progress,
                               executor=executor, overwrite=args.overwrite)
    out = Path(args.out)
    figures = _figures(out, args.seeds, report["figure5"], report["figure7"])
    atomic_write_text(out / "report.md", format_report(report, figures))
    if args.json:
        sys.stdout.write(json.dumps(plain(report), allow_nan=False) + "\n")
        return 0
    for r in report["figure6"]:
        paper = r["paper"]
        lo, hi = r["median_lo"], r["median_hi"]
        noise = "[-]" if lo is None or hi is None else f"[{lo:.1f}, {hi:.1f}]"
        print(f"sr over {r['over']:<9} {r['heavy']:>4g} %: median {r['median']:6.2f} "
              f"{noise}  paper "
              + (f"{paper[1]:6.2f}" if paper else "   -  ") + f"  {r['verdict']}")
    f5 = report["figure5"]
    print(f"Figure 5: {f5['nonempty']} topologies, router counts "
          f"{'equal to' if f5['routers']['equal'] else 'differ from'} the paper's; "
          f"{f5['with_edge_routers']} with edge routers")
    for rule, by_k in (report["figure7"].get("sps_rules") or {}).items():
        print(f"Figure 7 sps [{rule:<4}]: " + "  ".join(
            f"k={k} {v[0]:.3f}" for k, v in sorted(by_k.items(), key=lambda kv: int(kv[0])))
            + "   paper: " + " ".join(f"{v[1]:.3f}" for _, v in
                                      sorted(by_k.items(), key=lambda kv: int(kv[0]))))
    print(f"{time.perf_counter() - t0:.0f} s; report in {out / 'report.md'}")
    return 0


def _figures(out: Path, seeds: int, figure5: Any, figure7: Any) -> list:
    """Draw the figure when matplotlib is there; the report links what was drawn."""
    try:
        from ..plotting.common import save_figure
        from ..plotting.reproduce import plot_figure5, plot_figure7, plot_reproduction
    except ImportError as exc:
        print(f"tpcstudy: no figure (matplotlib missing: {exc})", file=sys.stderr)
        return []
    rows = load_results(out / "maxflow")
    paths = list(save_figure(plot_figure5(figure5), out / "figures" / "figure5-beside-paper"))
    paths += list(save_figure(plot_reproduction(rows, seeds=seeds),
                             out / "figures" / "figure6-beside-paper"))
    paths += save_figure(plot_figure7(figure7), out / "figures" / "figure7-beside-paper")
    return [str(p.relative_to(out)) for p in paths if p.suffix == ".png"]

"""Redraw the README figures (docs/figures/*.png) from whole-Zoo study outputs.

    tpcstudy topo stats --topo zoo --json > zoo-stats.json
    tpcstudy maxflow --topo repetita/inverse-capacity --capacity file \\
        --weight file --heavy 1,5,10 --seeds 10 --k 2,3,4,6 --jobs 2 --out results/mf-repetita
    tpcstudy disjoint --topo zoo --k 1-6 --jobs 2 --out results/disjoint-zoo
    python scripts/make_figures.py --stats zoo-stats.json --maxflow results/mf-repetita \\
        --disjoint results/disjoint-zoo

Every figure is also available as PNG + PDF with ``tpcstudy plot``; this script only fixes the
README's file names, a lower resolution (PNG under 200 KB) and PNG only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tpcstudy import plotting
from tpcstudy.study import load_results, summary_line
from tpcstudy.study.stats import fill_degree_histograms

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 200_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stats", help="tpcstudy topo stats --json output (or --out CSV)")
    ap.add_argument("--maxflow", help="maxflow results folder (Figure 6)")
    ap.add_argument("--disjoint", help="disjoint results folder (Figure 7)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "figures"))
    ap.add_argument("--dpi", type=int, default=100)
    args = ap.parse_args()
    jobs = [(args.stats, "fig5-topologies"), (args.maxflow, "fig6-maxflow-repetita"),
            (args.disjoint, "fig7-disjoint")]
    status = 0
    for source, name in jobs:
        if not source:
            continue
        res = load_results(source)
        if res.kind == "topo":
            fill_degree_histograms(res)  # a CSV has none: re-read the files it names
        _, fig = plotting.plot_results(res)
        (path,) = plotting.save_figure(fig, Path(args.out) / name, formats=["png"], dpi=args.dpi)
        size = path.stat().st_size
        print(f"{path} ({size // 1000} KB): {summary_line(res)}")
        if size > LIMIT:
            print(f"  over {LIMIT // 1000} KB: lower --dpi", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())

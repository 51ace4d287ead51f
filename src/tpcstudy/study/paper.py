"""The published numbers the studies print and draw beside their own: kept once, here.

They come from "The TCPPathChanger: bringing the spatial dimension to congestion control"
(sections 3.3 and 3.4, Figures 6 and 7). They are references, never targets: nothing is tuned
to meet them (docs/method.md §4-5).
"""

from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["PAPER", "FIGURE6_OVER_ECMP", "FIGURE6_OVER_MULTIPATH", "MAXFLOW_MEDIANS",
           "MULTIPATH_MEDIANS", "MULTIPATH_GAP", "GREEDY_REACHES_MAX", "SPS_NOTES", "maxflow_note"]

#: How the studies name the paper in their output.
PAPER = "The TCPPathChanger (paper)"

#: Figure 6's boxes exactly: (Q1, median, Q3) of sr's improvement in % over single-path ECMP,
#: by heavy-hitter percent, read from the vector paths of the figure PDFs in the public
#: repository of the paper's first author (jadinm/tpc, commit 62e3e09, text/nsdi/figs/
#: boxplot_maxflow_diff_accesslinks_2_{tcp,mptcp}_segs_ecmp_0_0_boxplots.pdf). The text
#: rounds the medians to 71 and 30.
FIGURE6_OVER_ECMP: Dict[float, Tuple[float, float, float]] = {
    1.0: (33.33, 71.43, 100.0), 10.0: (11.75, 30.43, 50.0)}
#: The same over multipath (the text: "about 5 % lower").
FIGURE6_OVER_MULTIPATH: Dict[float, Tuple[float, float, float]] = {
    1.0: (26.92, 66.67, 100.0), 10.0: (8.33, 25.00, 47.21)}
#: Median improvement (%) of sr over single-path ECMP, by heavy-hitter percent (Figure 6).
MAXFLOW_MEDIANS: Dict[float, float] = {h: q[1] for h, q in FIGURE6_OVER_ECMP.items()}
#: Median improvement (%) of sr over multipath (Figure 6).
MULTIPATH_MEDIANS: Dict[float, float] = {h: q[1] for h, q in FIGURE6_OVER_MULTIPATH.items()}
#: "Over multipath the improvement is about 5 % lower" (the text's rounding of the figure).
MULTIPATH_GAP = 5.0
#: Share (%) of topologies where greedy finds as many disjoint paths as max (section 3.4).
GREEDY_REACHES_MAX = 70.0
#: What the paper says of sps by segment limit k (Figure 7).
SPS_NOTES: Dict[int, str] = {1: "1 path", 4: "nearly saturates", 5: "adds little",
                             6: "adds little"}


def maxflow_note() -> str:
    """The paper's Figure 6 in one sentence: median [Q1, Q3] by heavy percent."""
    def box(q: Tuple[float, float, float]) -> str:
        return f"{q[1]:g} [{q[0]:g}, {q[2]:g}]"

    return ("paper (Figure 6, median [q1, q3]): sr over ecmp "
            + ", ".join(f"{box(q)} at {h:g} %" for h, q in FIGURE6_OVER_ECMP.items())
            + "; over multipath "
            + ", ".join(f"{box(q)} at {h:g} %" for h, q in FIGURE6_OVER_MULTIPATH.items()))

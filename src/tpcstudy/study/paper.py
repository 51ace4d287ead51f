"""The published numbers the studies print and draw beside their own: kept once, here.

They come from "The TCPPathChanger: bringing the spatial dimension to congestion control"
(sections 3.3 and 3.4, Figures 6 and 7). They are references, never targets: nothing is tuned
to meet them (docs/method.md §4-5).
"""

from __future__ import annotations

from typing import Dict

__all__ = ["PAPER", "MAXFLOW_MEDIANS", "MULTIPATH_GAP", "GREEDY_REACHES_MAX", "SPS_NOTES",
           "maxflow_note"]

#: How the studies name the paper in their output.
PAPER = "The TCPPathChanger (paper)"

#: Median improvement (%) of sr over single-path ECMP, by heavy-hitter percent (Figure 6).
MAXFLOW_MEDIANS: Dict[float, float] = {1.0: 71.0, 10.0: 30.0}
#: "Over multipath the improvement is about 5 % lower" (points below MAXFLOW_MEDIANS).
MULTIPATH_GAP = 5.0
#: Share (%) of topologies where greedy finds as many disjoint paths as max (section 3.4).
GREEDY_REACHES_MAX = 70.0
#: What the paper says of sps by segment limit k (Figure 7).
SPS_NOTES: Dict[int, str] = {1: "1 path", 4: "nearly saturates", 5: "adds little",
                             6: "adds little"}


def maxflow_note() -> str:
    """The paper's max-flow medians in one sentence."""
    return ("paper: median sr over ecmp "
            + ", ".join(f"{v:g} % at {h:g} %" for h, v in MAXFLOW_MEDIANS.items())
            + f"; over multipath about {MULTIPATH_GAP:g} points lower")

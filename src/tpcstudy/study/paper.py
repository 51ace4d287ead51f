"""The published numbers the studies print and draw beside their own: kept once, here.

They come from "The TCPPathChanger: bringing the spatial dimension to congestion control"
(sections 3.3 and 3.4, Figures 6 and 7). They are references, never targets: nothing is tuned
to meet them (docs/method.md §4-5).
"""

from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["PAPER", "FIGURE6_OVER_ECMP", "FIGURE6_OVER_MULTIPATH", "MAXFLOW_MEDIANS",
           "MULTIPATH_MEDIANS", "MULTIPATH_GAP", "GREEDY_REACHES_MAX", "SPS_NOTES", "maxflow_note",
           "FIGURE_SOURCE", "FIGURE5_ROUTERS", "FIGURE5_LINKS", "FIGURE6_N", "FIGURE6_ZEROS",
           "FIGURE6_CDF_OVER_ECMP", "FIGURE6_CDF_OVER_MULTIPATH", "FIGURE7_MAX_MEANS",
           "FIGURE7_GREEDY_MEANS", "FIGURE7_SPS_MEAN"]

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


#: Where the figure data below were read: the vector paths of the paper's figure PDFs (every
#: CDF step is a whole multiple of 1 / N, so counts are exact; values to ~1e-5).
FIGURE_SOURCE = ("jadinm/tpc (the first author's public repository), text/nsdi/figs/, commit "
                 "62e3e09 (Figures 5 and 6) and 9177d7c (Figure 7)")
#: Figure 5a: routers of each of the 233 pruned topologies, sorted (a multiset: the figure
#: names no topology).
FIGURE5_ROUTERS: Tuple[int, ...] = (
    3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 10, 10, 10,
    10, 10, 11, 11, 11, 11, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13,
    14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 16, 16, 17, 17, 17, 17, 17, 17, 17, 17, 17, 18, 18,
    18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 20, 20, 20, 20, 20, 20, 20, 20,
    20, 21, 21, 21, 21, 21, 22, 22, 22, 22, 22, 22, 22, 22, 23, 23, 23, 23, 23, 23, 23, 24, 25,
    25, 25, 25, 25, 25, 25, 25, 25, 26, 26, 26, 26, 27, 27, 27, 27, 27, 28, 28, 28, 28, 28, 28,
    29, 29, 29, 30, 30, 30, 30, 30, 30, 30, 30, 31, 31, 31, 31, 31, 31, 32, 32, 32, 33, 33, 33,
    35, 35, 36, 38, 38, 39, 40, 45, 45, 48, 48, 51, 52, 54, 57, 57, 58, 58, 58, 59, 60, 61, 64,
    66, 88, 88, 104, 104, 106, 106, 116, 135, 136, 137, 167,)
#: Figure 5b: links of each pruned topology, sorted. The figure counts both directions of a
#: link (every count is even); these are its counts halved, i.e. undirected links, parallel
#: links each counted.
FIGURE5_LINKS: Tuple[int, ...] = (
    3, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8,
    8, 8, 8, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12, 12, 12,
    13, 13, 14, 14, 14, 14, 14, 14, 15, 15, 15, 16, 16, 16, 16, 16, 16, 17, 17, 18, 18, 18, 19,
    19, 19, 20, 20, 20, 20, 20, 20, 20, 20, 20, 21, 21, 22, 22, 22, 22, 23, 23, 23, 24, 24, 24,
    24, 25, 25, 25, 26, 26, 26, 27, 27, 27, 27, 27, 27, 28, 29, 29, 29, 30, 30, 30, 30, 30, 30,
    30, 30, 30, 31, 31, 31, 31, 31, 31, 32, 32, 32, 32, 34, 35, 35, 36, 36, 36, 36, 36, 36, 37,
    37, 37, 37, 37, 38, 39, 39, 39, 39, 40, 40, 40, 40, 40, 41, 41, 42, 42, 44, 44, 44, 44, 44,
    44, 45, 45, 45, 45, 46, 48, 48, 48, 49, 51, 51, 51, 51, 52, 52, 53, 54, 54, 54, 55, 56, 56,
    56, 56, 57, 57, 58, 58, 59, 59, 59, 70, 70, 71, 72, 73, 74, 76, 76, 78, 80, 80, 80, 84, 85,
    86, 90, 92, 92, 104, 111, 119, 141, 144, 152, 166, 174, 180, 186, 212, 215,)
#: Figure 6's CDFs: how many (topology, draw) values each heavy-hitter percent pools.
FIGURE6_N: Dict[float, int] = {1.0: 4021, 5.0: 4101, 10.0: 4220}
#: ... and how many of them are exactly 0 (sr gains nothing), over ecmp and over multipath.
FIGURE6_ZEROS: Dict[str, Dict[float, int]] = {"ecmp": {1.0: 588, 5.0: 596, 10.0: 619},
                                              "multipath": {1.0: 669, 5.0: 699, 10.0: 750}}
#: (Q1, median, Q3) of the CDFs' values (numpy's default percentile), 5 % included (the box
#: plots draw only 1 and 10 %, where these equal the boxes).
FIGURE6_CDF_OVER_ECMP: Dict[float, Tuple[float, float, float]] = {
    1.0: (33.33, 71.43, 100.0), 5.0: (16.69, 40.0, 71.43), 10.0: (11.75, 30.43, 50.0)}
FIGURE6_CDF_OVER_MULTIPATH: Dict[float, Tuple[float, float, float]] = {
    1.0: (26.92, 66.67, 100.0), 5.0: (12.5, 33.33, 66.67), 10.0: (8.33, 25.0, 47.21)}
#: Figure 7a ("Edmonds-Karp", i.e. max): each of the 219 topologies' mean number of
#: link-disjoint paths per ordered edge-router pair, sorted (to 1e-6; the figure names no
#: topology).
FIGURE7_MAX_MEANS: Tuple[float, ...] = (
    1.0, 1.0, 1.0, 1.166667, 1.287879, 1.3, 1.307692, 1.330882, 1.330882, 1.333333, 1.333333,
    1.333333, 1.404412, 1.431373, 1.45614, 1.461538, 1.466667, 1.485294, 1.486166, 1.488889,
    1.5, 1.5, 1.5, 1.5, 1.532164, 1.532164, 1.532164, 1.533333, 1.535714, 1.538012, 1.548008,
    1.55, 1.563636, 1.571429, 1.571429, 1.590909, 1.6, 1.628571, 1.628571, 1.628571, 1.628571,
    1.628571, 1.628571, 1.661905, 1.666667, 1.666667, 1.696517, 1.703448, 1.75, 1.758333,
    1.772059, 1.777778, 1.809195, 1.818182, 1.846154, 1.857143, 1.857143, 1.857143, 1.857143,
    1.857143, 1.875, 1.922574, 1.926625, 1.9375, 1.948394, 1.954545, 1.955556, 1.974359, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0,)
#: Figure 7a ("Iterative dijkstra", i.e. greedy), the same way.
FIGURE7_GREEDY_MEANS: Tuple[float, ...] = (
    1.0, 1.0, 1.0, 1.166667, 1.287879, 1.3, 1.307692, 1.330882, 1.330882, 1.333333, 1.333333,
    1.333333, 1.404412, 1.431373, 1.45614, 1.461538, 1.466667, 1.470356, 1.485294, 1.488889,
    1.495787, 1.5, 1.5, 1.5, 1.5, 1.5, 1.508772, 1.524423, 1.532164, 1.532164, 1.532164,
    1.533333, 1.535714, 1.545455, 1.55, 1.571429, 1.571429, 1.6, 1.628571, 1.628571, 1.628571,
    1.628571, 1.628571, 1.628571, 1.633333, 1.642857, 1.666667, 1.673563, 1.678571, 1.74023,
    1.758333, 1.764706, 1.774265, 1.777778, 1.790476, 1.80117, 1.801471, 1.8125, 1.815149,
    1.818182, 1.825581, 1.830065, 1.846154, 1.857143, 1.857143, 1.857143, 1.857143, 1.857143,
    1.857143, 1.857143, 1.863636, 1.866162, 1.868421, 1.875, 1.891534, 1.9, 1.900433, 1.908106,
    1.914438, 1.916667, 1.916667, 1.918333, 1.918421, 1.919786, 1.923077, 1.92561, 1.928571,
    1.931818, 1.933333, 1.9375, 1.941667, 1.945055, 1.946429, 1.94697, 1.947368, 1.948052,
    1.952381, 1.952381, 1.954545, 1.96142, 1.962346, 1.963158, 1.966667, 1.967033, 1.969697,
    1.973193, 1.975369, 1.977273, 1.981107, 1.982759, 1.987692, 1.988655, 1.989011, 1.994737,
    1.994737, 1.995298, 1.997984, 1.998925, 1.998992, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    2.0, 2.0,)
#: Figure 7b: the mean over the 219 topologies of sps's mean paths per pair, by segment limit.
FIGURE7_SPS_MEAN: Dict[int, float] = {1: 1.0000, 2: 1.5140, 3: 1.7658, 4: 1.8132, 5: 1.8206, 6: 1.8225}


def maxflow_note() -> str:
    """The paper's Figure 6 in one sentence: median [Q1, Q3] by heavy percent."""
    def box(q: Tuple[float, float, float]) -> str:
        return f"{q[1]:g} [{q[0]:g}, {q[2]:g}]"

    return ("paper (Figure 6, median [q1, q3]): sr over ecmp "
            + ", ".join(f"{box(q)} at {h:g} %" for h, q in FIGURE6_OVER_ECMP.items())
            + "; over multipath "
            + ", ".join(f"{box(q)} at {h:g} %" for h, q in FIGURE6_OVER_MULTIPATH.items()))

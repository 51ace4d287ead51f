"""The figures of "The TCPPathChanger" (sections 3.2-3.4) and of a path table: draw only.

One module per figure; each takes rows (a :class:`~tpcstudy.study.store.Results`, loaded with
:func:`tpcstudy.study.load_results`, or plain dicts), draws into new axes or the caller's
(``ax=``), reads nothing from disk and returns the :class:`matplotlib.figure.Figure`. The
numbers drawn come from the studies' own summaries, so a figure and the command line agree.

- **Figure 5** (:func:`plot_topologies`): CDFs of the routers (a) and links (b) of the pruned
  topologies, and (c) the share of a topology's routers with a given degree.
- **Figure 6** (:func:`plot_maxflow`): boxplots over topologies of the max-flow improvement per
  heavy-hitter percent: (a) multipath, sr and the mcf bound over single-path ECMP, (b) sr over
  multipath, (c) sr by segment limit when the study has several k.
- **Figure 7** (:func:`plot_disjoint`): CDFs over topologies of the mean number of link-disjoint
  paths per edge-router pair: (a) max vs greedy, (b) sps by k, (c) greedy / max.
- :func:`plot_path_table`: what a path table gives the hosts.
- The emulator (``tpcstudy emulate``): :func:`plot_throughput` (TCP goodput against the LP) and
  :func:`plot_recovery` (failure recovery times).

Needs matplotlib (``pip install 'tpcstudy[plot]'``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from ..study.store import Results
from .calibration import plot_calibration
from .common import save_figure
from .disjoint import DISJOINT_PANELS, plot_disjoint
from .emulation import plot_dumbbell, plot_fault, plot_policies, plot_recovery, plot_throughput
from .failures import plot_failures
from .maxflow import MAXFLOW_PANELS, plot_maxflow
from .mlu import plot_mlu
from .path_table import plot_path_table
from .topologies import TOPOLOGY_PANELS, plot_topologies
from .zoo_emulation import plot_throughput_zoo

__all__ = ["plot_topologies", "plot_maxflow", "plot_disjoint", "plot_path_table",
           "plot_throughput", "plot_recovery", "plot_dumbbell", "plot_fault", "plot_policies",
           "plot_results", "save_figure", "plot_calibration", "plot_throughput_zoo", "plot_mlu",
           "plot_failures",
           "TOPOLOGY_PANELS", "MAXFLOW_PANELS",
           "DISJOINT_PANELS", "FIGURE_NAMES"]

#: File name of each kind's figure.
FIGURE_NAMES = {"topo": "fig5-topologies", "maxflow": "fig6-maxflow", "disjoint": "fig7-disjoint",
                "mlu": "mlu", "failures": "failures",
                "emulate-throughput": "emulation-throughput",
                "emulate-failover": "emulation-recovery", "emulate-mptcp": "emulation-mptcp",
                "emulate-fault": "emulation-fault", "emulate-policies": "emulation-policies"}


def plot_results(results: Results, **kw: Any) -> Tuple[str, Any]:
    """(figure name, figure) for any :class:`~tpcstudy.study.store.Results`: Figure 5, 6 or 7
    or an emulation figure, by its kind."""
    draw: Dict[str, Callable[..., Any]] = {
        "topo": plot_topologies, "maxflow": plot_maxflow, "disjoint": plot_disjoint,
        "mlu": plot_mlu, "failures": plot_failures,
        "emulate-throughput": plot_throughput, "emulate-failover": plot_recovery,
        "emulate-mptcp": plot_dumbbell, "emulate-fault": plot_fault,
        "emulate-policies": plot_policies}
    return FIGURE_NAMES[results.kind], draw[results.kind](results, **kw)

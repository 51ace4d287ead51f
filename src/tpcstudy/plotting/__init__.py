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
  :func:`plot_recovery` (failure recovery times), :func:`plot_verify` (an exported table's
  paths delivered and maps loaded).

Needs matplotlib (``pip install 'tpcstudy[plot]'``).
"""

from __future__ import annotations

from typing import Any, Tuple

from ..study.kinds import KINDS, kind
from ..study.store import Results
from .calibration import plot_calibration
from .common import save_figure
from .disjoint import DISJOINT_PANELS, plot_disjoint
from .emulation import (
    plot_dumbbell,
    plot_fault,
    plot_policies,
    plot_recovery,
    plot_throughput,
    plot_verify,
)
from .emulation_failures import plot_failure_experiment
from .failures import plot_failures
from .maxflow import MAXFLOW_PANELS, plot_maxflow
from .mlu import plot_mlu
from .path_table import plot_path_table
from .topologies import TOPOLOGY_PANELS, plot_topologies
from .zoo_emulation import plot_throughput_zoo

__all__ = ["plot_topologies", "plot_maxflow", "plot_disjoint", "plot_path_table",
           "plot_throughput", "plot_recovery", "plot_verify", "plot_dumbbell", "plot_fault", "plot_policies",
           "plot_results", "save_figure", "plot_calibration", "plot_throughput_zoo", "plot_mlu",
           "plot_failures", "plot_failure_experiment",
           "TOPOLOGY_PANELS", "MAXFLOW_PANELS",
           "DISJOINT_PANELS", "FIGURE_NAMES", "figure_name"]

#: File name of each kind's figure (from the registry of kinds).
FIGURE_NAMES = {name: k.figure for name, k in KINDS.items()}


def figure_name(results: Results) -> str:
    """The figure's file name with the results' label, less the label's leading words the
    name already has: ``fig6-maxflow`` and a folder ``maxflow-zoo`` give ``fig6-maxflow-zoo``
    (never ``fig6-maxflow-maxflow-zoo``)."""
    base = FIGURE_NAMES[results.kind]
    words = set(base.split("-"))
    parts = results.label.split("-")
    while len(parts) > 1 and parts[0] in words:
        parts = parts[1:]
    return f"{base}-{'-'.join(parts)}"


def plot_results(results: Results, **kw: Any) -> Tuple[str, Any]:
    """(figure name, figure) for any :class:`~tpcstudy.study.store.Results`: Figure 5, 6 or 7
    or an emulation figure, by its kind (the registry's plot function)."""
    k = kind(results.kind)
    return k.figure, k.plot_function()(results, **kw)

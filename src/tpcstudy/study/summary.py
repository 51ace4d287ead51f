"""One line of key numbers for any results (topology statistics or either study), beside the
paper's: what ``tpcstudy plot`` and the notebooks print under a figure. The emulator's kinds
are summarised by their experiments (:func:`tpcstudy.emulate.experiments.summary_line`)."""

from __future__ import annotations

from typing import Optional

from . import disjoint, maxflow, stats
from .store import Results

__all__ = ["summary_line"]


def summary_line(results: Results, *, k: Optional[int] = None) -> str:
    """The summary line of ``results`` by its kind (``k``: the sr segment limit of a max-flow
    study; default 4, else the largest present)."""
    if results.kind == "maxflow":
        return maxflow.summary_line(results, k=k)
    if results.kind == "disjoint":
        return disjoint.summary_line(results)
    return stats.summary_line(results)

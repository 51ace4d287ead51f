"""One line of key numbers for any results (topology statistics or either study), beside the
paper's: what ``tpcstudy plot`` and the notebooks print under a figure. The emulator's kinds
are summarised by their experiments (:func:`tpcstudy.emulate.experiments.summary_line`)."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

from . import disjoint, failures, maxflow, mlu, stats
from .store import STATUS, Results

__all__ = ["summary_line", "summary_text", "summary_data", "plain", "provenance", "failed_rows"]


def summary_line(results: Results, *, k: Optional[int] = None,
                 aggregate: str = "topology") -> str:
    """The summary line of ``results`` by its kind (``k``: the sr segment limit of a max-flow
    study, default 4, else the largest present; ``aggregate``: its medians')."""
    if results.kind == "maxflow":
        return maxflow.summary_line(results, k=k, aggregate=aggregate)
    if results.kind == "disjoint":
        return disjoint.summary_line(results)
    if results.kind == "mlu":
        return mlu.summary_line(results)
    if results.kind == "failures":
        return failures.summary_line(results)
    return stats.summary_line(results)


def summary_text(results: Results, *, aggregate: str = "topology",
                 k: Optional[int] = None) -> str:
    """The summary the study's command printed when it finished, then its one-line summary
    beside the paper's (``tpcstudy show``; ``aggregate`` and ``k``: a max-flow study's)."""
    line = summary_line(results, k=k, aggregate=aggregate)
    if results.kind == "maxflow":
        return maxflow.format_summary(maxflow.summarize(results, aggregate=aggregate),
                                      demands=bool(results.config.get("demands"))) + "\n" + line
    if results.kind == "disjoint":
        return disjoint.format_summary(disjoint.summarize(results)) + "\n" + line
    if results.kind == "mlu":
        return mlu.format_summary(mlu.summarize(results)) + "\n" + line
    if results.kind == "failures":
        return failures.format_summary(failures.summarize(results)) + "\n" + line
    return stats.format_summary(stats.summarize(results)) + "\n" + line


def failed_rows(results: Results) -> int:
    """How many rows of ``results`` stand for a failed task."""
    return sum(1 for r in results if r.get(STATUS) == "failed")


def provenance(results: Results) -> Dict[str, Any]:
    """What every ``--json`` summary starts with: kind, source, commit, version, start,
    settings and row counts."""
    return {"kind": results.kind, "source": results.source,
            "git_commit": results.meta.get("git_commit"), "tpcstudy": results.meta.get("tpcstudy"),
            "started": results.meta.get("started"), "config": results.config,
            "rows": len(results), "failed_rows": failed_rows(results)}


def summary_data(results: Results, *, k: Optional[int] = None,
                 aggregate: str = "topology") -> Dict[str, Any]:
    """The summary as data (``--json``): kind, folder, provenance, row counts, the one-line
    summary and the kind's full summary (for a max-flow study each series with the paper's
    median beside it)."""
    out: Dict[str, Any] = {**provenance(results),
                           "summary_line": summary_line(results, k=k, aggregate=aggregate)}
    if results.kind == "maxflow":
        series = []
        for s in maxflow.summarize(results, aggregate=aggregate):
            box = maxflow.paper_box(s)
            series.append({**s, "paper_median": None if box is None else box[1],
                           "paper_q1": None if box is None else box[0],
                           "paper_q3": None if box is None else box[2]})
        out["summary"] = series
    elif results.kind == "disjoint":
        out["summary"] = disjoint.summarize(results)
    elif results.kind == "mlu":
        out["summary"] = mlu.summarize(results)
    elif results.kind == "failures":
        out["summary"] = failures.summarize(results)
    else:
        out["summary"] = stats.summarize(results)
    return plain(out)


def plain(obj: Any) -> Any:
    """``obj`` with what JSON cannot hold made explicit: NaN -> ``None``, infinities ->
    ``"inf"`` / ``"-inf"`` (an unfinished transfer's time), tuples -> lists, numpy scalars ->
    numbers."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
    return obj

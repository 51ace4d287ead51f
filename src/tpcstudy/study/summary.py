"""One line of key numbers for any results (topology statistics, a study or an emulation),
beside the paper's: what ``tpcstudy plot``, ``tpcstudy show`` and the notebooks print under a
figure. Which function summarises a kind is the registry's (:data:`.kinds.KINDS`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, Optional

from ..errors import InputFileError
from ..io.bounded import read_bounded_json
from . import maxflow
from .kinds import kind as kind_of
from .reproduce_report import show_text
from .store import STATUS, Results

__all__ = ["summary_line", "summary_text", "summary_data", "plain", "provenance", "failed_rows",
           "reproduce_report"]


def summary_line(results: Results, *, k: Optional[int] = None,
                 aggregate: str = "topology") -> str:
    """The summary line of ``results`` by its kind (``k``: the sr segment limit of a max-flow
    study, default 4, else the largest present; ``aggregate``: its medians')."""
    line = kind_of(results.kind).summary_function()
    if results.kind == "maxflow":
        return str(line(results, k=k, aggregate=aggregate))
    return str(line(results))


def summary_text(results: Results, *, aggregate: str = "topology",
                 k: Optional[int] = None) -> str:
    """The summary the study's command printed when it finished, then its one-line summary
    beside the paper's (``tpcstudy show``; ``aggregate`` and ``k``: a max-flow study's)."""
    line = summary_line(results, k=k, aggregate=aggregate)
    if kind_of(results.kind).emulated:
        return line
    mod = kind_of(results.kind).summary_module
    if results.kind == "maxflow":
        return mod.format_summary(mod.summarize(results, aggregate=aggregate),
                                  demands=bool(results.config.get("demands"))) + "\n" + line
    text = str(mod.format_summary(mod.summarize(results))) + "\n" + line
    report = reproduce_report(results) if results.kind == "topo" else None
    return text if report is None else text + "\n\n" + show_text(report)


def reproduce_report(results: Results) -> Optional[Dict[str, Any]]:
    """The ``report.json`` of a ``tpcstudy reproduce`` folder whose ``topologies.csv`` these
    results are (``tpcstudy show DIR`` finds that file first), else ``None``."""
    src = Path(str(results.source))
    if src.name != "topologies.csv" or not (src.parent / "report.json").is_file():
        return None
    try:
        data = read_bounded_json(src.parent / "report.json", 1 << 28, what="report.json")
    except InputFileError:  # a report it cannot read: the summary without it
        return None
    return data if isinstance(data, dict) and "figure7" in data else None


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
    elif not kind_of(results.kind).emulated:
        out["summary"] = kind_of(results.kind).summary_module.summarize(results)
        report = reproduce_report(results) if results.kind == "topo" else None
        if report is not None:
            out["reproduce"] = {k: report.get(k) for k in ("figure5", "figure6_numbers",
                                                           "figure7", "seeds")}
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

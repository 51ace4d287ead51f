"""Per-topology statistics (``tpcstudy topo stats``, Figure 5): sizes before and after pruning,
roles, capacity coverage; one summary for the command line and the figure."""

from __future__ import annotations

import math
import os
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

from ..errors import TpcStudyError
from ..io import read_topology, topology_files
from ..io.specs import Spec, spec_text
from ..topology import Topology, prune
from .kinds import KINDS
from .store import Results

__all__ = ["STATS_COLUMNS", "MAX_DEGREE_BIN", "topology_stats", "topo_stats",
           "fill_degree_histograms", "summarize", "distributions", "format_summary",
           "summary_line"]

#: Figure 5c bins degrees 2..7, then ">= 8".
MAX_DEGREE_BIN = 8

STATS_COLUMNS = list(KINDS["topo"].columns)


def topology_stats(topo: Topology) -> Dict[str, Any]:
    """One record for ``topo`` (as read, unpruned) and its pruned version."""
    p = prune(topo)
    deg = p.degree
    known = topo.meta.get("capacity_known_links")
    return {
        "name": topo.name,
        "source": topo.meta.get("source", ""),
        "nodes": topo.num_nodes,
        "links": topo.num_links,
        "raw_links": int(topo.meta.get("raw_links", topo.num_links)),
        "pruned_nodes": p.num_nodes,
        "pruned_links": p.num_links,
        "edge_routers": len(p.edge_routers),
        "core_routers": p.num_nodes - len(p.edge_routers),
        "min_degree": int(deg.min()) if p.num_nodes else 0,
        "max_degree": int(deg.max()) if p.num_nodes else 0,
        "mean_degree": round(float(deg.mean()), 6) if p.num_nodes else 0.0,
        "capacity_known_links": int(known) if known is not None else None,
        "capacity_coverage": round(topo.capacity_coverage(), 6),
        "capacity_rule": topo.meta.get("capacity_rule", ""),
        "weight_rule": topo.meta.get("weight_rule", ""),
        "degree_histogram": np.bincount(deg).tolist() if p.num_nodes else [],
    }


def summarize(records: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Collection summary (the command line's and the figure's): how many topologies survive
    pruning, sizes, the largest ones, capacity coverage."""
    usable = [r for r in records if (r.get("pruned_nodes") or 0) > 0]
    by_size = sorted(usable, key=lambda r: (-r["pruned_nodes"], r["name"]))

    def med(key: str) -> float:
        return statistics.median([r[key] for r in usable]) if usable else math.nan

    cov = [float(r["capacity_coverage"]) for r in records
           if r.get("capacity_coverage") is not None
           and r["capacity_coverage"] == r["capacity_coverage"]]
    return {
        "topologies": len(records),
        "nonempty_after_pruning": len(usable),
        "with_two_edge_routers": sum((r.get("edge_routers") or 0) >= 2 for r in records),
        "median_pruned_nodes": med("pruned_nodes"),
        "median_pruned_links": med("pruned_links"),
        "largest": [{"name": r["name"], "pruned_nodes": r["pruned_nodes"],
                     "pruned_links": r["pruned_links"]} for r in by_size[:3]],
        "full_capacity_coverage": sum(c == 1.0 for c in cov),
        "some_capacity_coverage": sum(0 < c < 1 for c in cov),
        "no_capacity_coverage": sum(c == 0 for c in cov),
    }


def format_summary(s: Dict[str, Any]) -> str:
    largest = ", ".join(f"{x['name']} {x['pruned_nodes']}/{x['pruned_links']}" for x in s["largest"])
    return (f"{s['topologies']} topologies; {s['nonempty_after_pruning']} non-empty after pruning "
            f"(2-core, largest component); {s['with_two_edge_routers']} with >= 2 edge routers\n"
            f"pruned size: median {s['median_pruned_nodes']:g} routers / {s['median_pruned_links']:g} "
            f"links; largest (routers/links): {largest}\n"
            f"capacity known on all links: {s['full_capacity_coverage']}, on some: "
            f"{s['some_capacity_coverage']}, on none: {s['no_capacity_coverage']}")


def summary_line(records: Sequence[Mapping[str, Any]]) -> str:
    """The summary in one line."""
    s = summarize(records)
    top = s["largest"][0] if s["largest"] else {"name": "-", "pruned_nodes": 0}
    return (f"{s['nonempty_after_pruning']} of {s['topologies']} topologies non-empty after "
            f"pruning; median {s['median_pruned_nodes']:g} routers / "
            f"{s['median_pruned_links']:g} links; largest {top['name']} "
            f"({top['pruned_nodes']} routers)")


def topo_stats(spec: Spec, *, capacity: str = "uniform", weight: str = "hop",
               links: str = "merged") -> Results:
    """Topology statistics (``tpcstudy topo stats`` records, with ``degree_histogram``) computed
    now for a ``--topo`` spec or a list of specs (e.g. ``["zoo/Abilene", "zoo/Geant2012"]``)."""
    specs = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    records = [topology_stats(read_topology(path, capacity=capacity, weight=weight, links=links))
               for path in topology_files(specs)]
    label = os.fspath(specs[0]) if len(specs) == 1 else f"{len(specs)} specs"
    return Results(records, "topo", {"study": {"config": {"topo": spec_text(specs),
                                                          "capacity": capacity,
                                                          "weight": weight,
                                                          "links": links}}},
                   source=str(label).replace("/", "-"))


def fill_degree_histograms(records: List[Dict[str, Any]]) -> int:
    """Add ``degree_histogram`` to CSV records (the CSV has none) by re-reading their source
    files when they still exist; returns how many records still lack one."""
    missing = 0
    for r in records:
        if r.get("degree_histogram") is not None or not (r.get("pruned_nodes") or 0):
            continue
        src = r.get("source") or ""
        try:
            if not src or not Path(src).is_file():
                raise FileNotFoundError(src)
            p = prune(read_topology(src))
        except (OSError, TpcStudyError):
            missing += 1
            continue
        hist = [0] * (int(p.degree.max()) + 1 if p.num_nodes else 0)
        for d in p.degree.tolist():
            hist[int(d)] += 1
        r["degree_histogram"] = hist
    return missing


def distributions(records: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Figure 5's distributions: pruned sizes of the non-empty topologies (sorted) and, per
    degree bin, the share of each topology's routers with that degree (records with a
    ``degree_histogram``)."""
    usable = [r for r in records if (r.get("pruned_nodes") or 0) > 0]
    nodes = sorted(int(r["pruned_nodes"]) for r in usable)
    links = sorted(int(r["pruned_links"]) for r in usable)
    shares: Dict[int, List[float]] = defaultdict(list)  # degree bin -> per-topology share (%)
    pooled: Dict[int, int] = defaultdict(int)
    with_hist = 0
    for r in usable:
        hist = r.get("degree_histogram")
        if not hist:
            continue
        with_hist += 1
        total = sum(hist)
        binned: Dict[int, int] = defaultdict(int)
        for d, c in enumerate(hist):
            if c:
                binned[min(d, MAX_DEGREE_BIN)] += c
        for b in range(2, MAX_DEGREE_BIN + 1):
            shares[b].append(100.0 * binned.get(b, 0) / total)
            pooled[b] += binned.get(b, 0)
    pooled_total = sum(pooled.values())
    return {
        "nodes": nodes, "links": links,
        "degree_bins": list(range(2, MAX_DEGREE_BIN + 1)),
        "degree_shares": {b: shares[b] for b in range(2, MAX_DEGREE_BIN + 1)},
        "degree_pooled": {b: (100.0 * pooled[b] / pooled_total if pooled_total else math.nan)
                          for b in range(2, MAX_DEGREE_BIN + 1)},
        "with_histogram": with_hist,
    }

"""Per-topology statistics: sizes before and after pruning, roles, capacity coverage."""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, Sequence

import numpy as np

from .topology import Topology, prune

STATS_COLUMNS = [
    "name", "source", "nodes", "links", "raw_links", "pruned_nodes", "pruned_links", "edge_routers",
    "core_routers", "min_degree", "max_degree", "mean_degree", "capacity_known_links",
    "capacity_coverage", "capacity_rule", "weight_rule",
]


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


def summarize(records: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Collection summary: how many topologies survive pruning, sizes, the largest ones."""
    usable = [r for r in records if r["pruned_nodes"] > 0]
    by_size = sorted(usable, key=lambda r: (-r["pruned_nodes"], r["name"]))

    def med(key: str) -> float:
        return statistics.median([r[key] for r in usable]) if usable else math.nan

    cov = [r["capacity_coverage"] for r in records if r["capacity_coverage"] == r["capacity_coverage"]]
    return {
        "topologies": len(records),
        "nonempty_after_pruning": len(usable),
        "with_two_edge_routers": sum(r["edge_routers"] >= 2 for r in records),
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

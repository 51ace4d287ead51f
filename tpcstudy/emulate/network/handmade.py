"""Hand-made networks of the papers, with their pairs.

``six-paths``: the TPC paper's Figure 4 ("The TCPPathChanger: bringing the spatial dimension to
congestion control", section 3.1). Two routers ``A`` and ``B`` joined by six disjoint two-hop
paths ``A - Pj - B`` of capacity 1; the IGP weights force one of them (weight 1 on path 1, 10 on
the others), so plain routing uses one path and ECMP has nothing to split. Four clients
``C1..C4`` behind ``A`` and four servers ``S1..S4`` behind ``B`` on access links of capacity 6
(never the bottleneck); client ``Ci`` sends to server ``Si`` over 4 connections. The LP gives
ecmp = 1 and sr = 6 (a segment through ``Pj`` selects path j): the paper measured about 100 Mbit/s
without SR and more than 500 Mbit/s with it on 100 Mbit/s links.
"""

from __future__ import annotations

import dataclasses
from typing import List, Tuple

import numpy as np

from .. import AddressPlan, Topology, default_plan
from ..errors import UsageError

__all__ = ["Scenario", "six_paths", "SCENARIOS", "scenario"]


@dataclasses.dataclass
class Scenario:
    name: str
    topology: Topology
    pairs: List[Tuple[str, str]]
    plan: AddressPlan
    connections_per_pair: int
    description: str


def six_paths(paths: int = 6, clients: int = 4) -> Scenario:
    """The TPC paper's Figure 4 network (module docstring)."""
    nodes = ["A", "B"] + [f"P{j}" for j in range(1, paths + 1)] \
        + [f"C{i}" for i in range(1, clients + 1)] + [f"S{i}" for i in range(1, clients + 1)]
    idx = {n: i for i, n in enumerate(nodes)}
    links: List[Tuple[str, str, float, float]] = []  # u, v, capacity, weight
    for j in range(1, paths + 1):
        weight = 1.0 if j == 1 else 10.0
        links += [("A", f"P{j}", 1.0, weight), ("B", f"P{j}", 1.0, weight)]
    for i in range(1, clients + 1):
        links += [("A", f"C{i}", float(paths), 1.0), ("B", f"S{i}", float(paths), 1.0)]
    u = np.array([min(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    v = np.array([max(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    cap = np.repeat([c for _, _, c, _ in links], 2).astype(np.float64)
    w = np.repeat([x for _, _, _, x in links], 2).astype(np.float64)
    meta = {"capacity_unit": "link", "capacity_rule": "six-paths: 1 per path link, "
            f"{paths} per access link", "weight_rule": "six-paths: 1 on path 1, 10 on the others "
            "(the IGP forces path 1)", "pruned": True, "source": "scenario six-paths"}
    topo = Topology("six-paths", nodes, u, v, cap, w, meta=meta)
    hosts = [f"C{i}" for i in range(1, clients + 1)] + [f"S{i}" for i in range(1, clients + 1)]
    plan = default_plan(topo, edge_routers=hosts)
    pairs = [(f"C{i}", f"S{i}") for i in range(1, clients + 1)]
    return Scenario("six-paths", topo, pairs, plan, 4,
                    "The TPC paper's Figure 4: 6 disjoint paths between A and B, the IGP forcing "
                    "one; 4 clients behind A send to 4 servers behind B, 4 connections each")


SCENARIOS = {"six-paths": six_paths}


def scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise UsageError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}") from None

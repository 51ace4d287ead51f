"""Hand-made networks of the papers, with their pairs: one builder, one registry.

- ``six-paths`` (:func:`six_paths`): the TPC paper's Figure 4 ("The TCPPathChanger: bringing the
  spatial dimension to congestion control", section 3.1). Two routers ``A`` and ``B`` joined by
  six disjoint two-hop paths ``A - Pj - B`` of capacity 1; the IGP weights force one of them
  (weight 1 on path 1, 10 on the others), so plain routing uses one path and ECMP has nothing to
  split. Four clients ``C1..C4`` behind ``A`` and four servers ``S1..S4`` behind ``B`` on access
  links of capacity 6 (never the bottleneck); client ``Ci`` sends to server ``Si`` over 4
  connections. The LP gives ecmp = 1 and sr = 6 (a segment through ``Pj`` selects path j): the
  paper measured about 100 Mbit/s without SR and more than 500 Mbit/s with it on 100 Mbit/s
  links.
- ``dumbbell`` (:func:`dumbbell`): SEMPER's ("A Stateless Traffic Engineering Solution for WAN
  based on MP-TCP", Garcia-Aviles et al.): the same shape with P *equal-cost* paths and N
  client/server pairs, one MPTCP connection each.
- ``two-sites`` (:func:`two_sites`): site router ``A`` reaches site router ``B`` over two
  equal-cost paths ``A - P1 - B`` and ``A - P2 - B`` of capacity 1; a background host ``G``
  behind ``A`` on a link of capacity 4 (the host policies' two-path scenarios).

Each is a :class:`Scenario`: a :class:`~tpcstudy.Topology` (capacities in link units), its
pairs, the addressing plan (host prefixes on the end hosts only) and the connections per pair.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

from ...errors import UsageError
from ...export.addressing import AddressPlan, default_plan
from ...topology import Topology

__all__ = ["Scenario", "six_paths", "dumbbell", "two_sites", "SCENARIOS", "scenario",
           "build_topology"]

#: ``(router, router, capacity, IGP weight)``.
Link = Tuple[str, str, float, float]


@dataclasses.dataclass
class Scenario:
    name: str
    topology: Topology
    pairs: List[Tuple[str, str]]
    plan: AddressPlan
    connections_per_pair: int
    description: str


def build_topology(name: str, nodes: Sequence[str], links: Sequence[Link],
                   meta: Dict[str, object]) -> Topology:
    """A :class:`~tpcstudy.Topology` of ``nodes`` and undirected ``links`` (capacity and weight
    the same both ways), marked pruned (hand-made networks have no trees to prune)."""
    idx = {n: i for i, n in enumerate(nodes)}
    u = np.array([min(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    v = np.array([max(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    cap = np.repeat([c for _, _, c, _ in links], 2).astype(np.float64)
    w = np.repeat([x for _, _, _, x in links], 2).astype(np.float64)
    return Topology(name, list(nodes), u, v, cap, w,
                    meta={"capacity_unit": "link", "pruned": True, **meta})


def _between_two(name: str, paths: int, hosts: int, weight: Callable[[int], float],
                 meta: Dict[str, object]) -> Tuple[Topology, AddressPlan, List[Tuple[str, str]]]:
    """``A`` and ``B`` joined by ``paths`` two-hop paths ``A - Pj - B`` (capacity 1, weight
    ``weight(j)``); clients ``C1..`` behind ``A``, servers ``S1..`` behind ``B`` on access links
    of capacity ``paths``; pairs ``(Ci, Si)``."""
    nodes = (["A", "B"] + [f"P{j}" for j in range(1, paths + 1)]
             + [f"C{i}" for i in range(1, hosts + 1)] + [f"S{i}" for i in range(1, hosts + 1)])
    links: List[Link] = []
    for j in range(1, paths + 1):
        links += [("A", f"P{j}", 1.0, weight(j)), ("B", f"P{j}", 1.0, weight(j))]
    for i in range(1, hosts + 1):
        links += [("A", f"C{i}", float(paths), 1.0), ("B", f"S{i}", float(paths), 1.0)]
    topo = build_topology(name, nodes, links, meta)
    ends = [f"C{i}" for i in range(1, hosts + 1)] + [f"S{i}" for i in range(1, hosts + 1)]
    return topo, default_plan(topo, edge_routers=ends), [(f"C{i}", f"S{i}")
                                                         for i in range(1, hosts + 1)]


def six_paths(paths: int = 6, clients: int = 4) -> Scenario:
    """The TPC paper's Figure 4 network (module docstring)."""
    topo, plan, pairs = _between_two(
        "six-paths", paths, clients, lambda j: 1.0 if j == 1 else 10.0,
        {"capacity_rule": f"six-paths: 1 per path link, {paths} per access link",
         "weight_rule": "six-paths: 1 on path 1, 10 on the others (the IGP forces path 1)",
         "source": "scenario six-paths"})
    return Scenario("six-paths", topo, pairs, plan, 4,
                    "The TPC paper's Figure 4: 6 disjoint paths between A and B, the IGP forcing "
                    "one; 4 clients behind A send to 4 servers behind B, 4 connections each")


def dumbbell(paths: int = 2, hosts: int = 4) -> Scenario:
    """SEMPER's dumbbell (module docstring): P equal-cost paths, N client/server pairs."""
    if not 1 <= paths <= 64 or not 1 <= hosts <= 64:
        raise UsageError(f"dumbbell: paths {paths} and hosts {hosts} must be in 1..64")
    topo, plan, pairs = _between_two(
        f"dumbbell-{paths}x{hosts}", paths, hosts, lambda j: 1.0,
        {"capacity_rule": f"dumbbell: 1 per path link, {paths} per access link",
         "weight_rule": "dumbbell: hop (all paths equal cost)", "source": "scenario dumbbell"})
    return Scenario(topo.name, topo, pairs, plan, 1,
                    f"SEMPER's dumbbell: {paths} equal-cost paths between A and B; {hosts} "
                    "clients behind A send to as many servers behind B, one MPTCP connection "
                    "each")


def two_sites() -> Scenario:
    """The host policies' two-path network (module docstring); the pair is ``(A, B)``."""
    links: List[Link] = [("A", "P1", 1.0, 1.0), ("P1", "B", 1.0, 1.0), ("A", "P2", 1.0, 1.0),
                         ("P2", "B", 1.0, 1.0), ("A", "G", 4.0, 1.0)]
    topo = build_topology("two-sites", ["A", "B", "P1", "P2", "G"], links,
                          {"capacity_rule": "two sites: 1 per path link, 4 for G",
                           "weight_rule": "hop (both paths equal cost)",
                           "source": "scenario two-sites"})
    return Scenario("two-sites", topo, [("A", "B")],
                    default_plan(topo, edge_routers=["A", "B", "G"]), 1,
                    "two sites A and B over two equal-cost paths A-P1-B and A-P2-B; a "
                    "background host G behind A")


#: The scenarios ``--scenario`` names for throughput runs.
SCENARIOS: Dict[str, Callable[[], Scenario]] = {"six-paths": six_paths}


def scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise UsageError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}") from None

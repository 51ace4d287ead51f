"""The sps segment rules (docs/method.md §5): hand-worked graphs, a brute force of the
definition on small random graphs, and the core's ``sps`` for ``dag``."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import numpy as np
import pytest

import tpcstudy
from tpcstudy import paths as P
from tpcstudy.errors import UsageError
from tpcstudy.paths.sps_rules import SEGMENT_RULES, check_segment_rules, sps_rule_counts


def topo_of(edges, n):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for u, v, w in edges:
        g.add_edge(u, v, weight=w)
    t = tpcstudy.read_topology(g, weight="file")
    assert t.names == [str(x) for x in range(n)]
    return g, t


# Square s=0, a=1, t=2, b=3, unit weights: the direct segment 0 -> 2 has two equal-cost routes.
# dag: the first path occupies all four links, nothing is left: 1 path at every k.
# path / any: the first path is the smallest route 0-1-2; 0 -> 3 -> 2 (two segments) is left.
SQUARE = [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 0, 1)]
# s=0, u=1, t=2, v=3, c=4. First path 0-1-2 (cost 2, unique). Then v -> t has two equal routes,
# 3-1-2 (smallest, crosses the removed link 1-2) and 3-4-2; 0 -> 4 goes 0-1-2-4 (cost 3 < 0-3-4,
# 4), removed too. any: 0 -> 3 -> 2 (3-4-2 survives): 2 segments. path and dag: 3 -> 2 is
# blocked, 0 -> 3 -> 4 -> 2 takes 3 segments.
LADDER = [(0, 1, 1), (1, 2, 1), (0, 3, 2), (3, 1, 2), (3, 4, 2), (4, 2, 1)]


@pytest.mark.parametrize("edges,n,want", [
    (SQUARE, 4, {"dag": [1, 1, 1], "path": [1, 2, 2], "any": [1, 2, 2]}),
    (LADDER, 5, {"dag": [1, 1, 2], "path": [1, 1, 2], "any": [1, 2, 2]}),
])
def test_hand_worked(edges, n, want):
    _, t = topo_of(edges, n)
    for rule, counts in want.items():
        got = sps_rule_counts(t, [0], [2], (1, 2, 3), rule)
        assert [int(got[k][0]) for k in (1, 2, 3)] == counts, rule
    # the core's sps is the dag rule
    assert [len(P.edge_disjoint_paths(t, 0, 2, method="sps", k=k)) for k in (1, 2, 3)] == \
        want["dag"]


def _brute_counts(g: nx.Graph, s: int, d: int, k: int, rule: str) -> int:
    """The definition, enumerated: every waypoint list of at most k segments, each segment's
    routes from networkx, the cheapest usable list taken (fewest segments on ties), its links
    removed, until none is left."""
    n = g.number_of_nodes()
    dist = dict(nx.all_pairs_dijkstra_path_length(g, weight="weight"))
    routes = {(a, b): sorted(nx.all_shortest_paths(g, a, b, weight="weight"))
              for a in range(n) for b in range(n) if a != b and b in dist[a]}

    def links(p):
        return {frozenset(e) for e in zip(p[:-1], p[1:])}

    def occupied(a, b, removed):
        """Links segment a -> b occupies, or None when it is unusable."""
        rs = routes.get((a, b))
        if not rs:
            return None
        if rule == "dag":
            occ = set().union(*(links(p) for p in rs))
            return None if occ & removed else occ
        if rule == "path":
            occ = links(rs[0])
            return None if occ & removed else occ
        alive = [p for p in rs if not links(p) & removed]
        return links(alive[0]) if alive else None

    removed: set = set()
    taken: set = set()
    count = 0
    while True:
        best = None
        for j in range(k):
            for seq in itertools.permutations([x for x in range(n) if x not in (s, d)], j):
                if seq in taken:
                    continue
                nodes = [s, *seq, d]
                occ: set = set()
                for a, b in zip(nodes[:-1], nodes[1:]):
                    o = occupied(a, b, removed)
                    if o is None:
                        break
                    occ |= o
                else:
                    cost = sum(dist[a][b] for a, b in zip(nodes[:-1], nodes[1:]))
                    if best is None or (cost, j) < best[:2]:
                        best = (cost, j, seq, occ)
        if best is None:
            return count
        count += 1
        taken.add(best[2])
        removed |= best[3]


def random_graph(seed: int, n: int, extra: int, max_weight: int) -> nx.Graph:
    rng = random.Random(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for v in range(1, n):
        g.add_edge(v, rng.randrange(v))
    for _ in range(extra):
        u, v = rng.sample(range(n), 2)
        g.add_edge(u, v)
    for u, v in g.edges:
        g[u][v]["weight"] = rng.randint(1, max_weight)
    return g


@pytest.mark.parametrize("seed", range(6))
def test_rules_vs_brute_force(seed):
    n = 8
    g = random_graph(900 + seed, n, 5 + seed % 3, 1 + seed % 2)
    t = tpcstudy.read_topology(g, weight="file")
    deg = dict(g.degree)
    pairs = [(a, b) for a, b in itertools.permutations(range(n), 2) if min(deg[a], deg[b]) <= 2]
    assert pairs
    src = np.array([p[0] for p in pairs], np.int32)
    dst = np.array([p[1] for p in pairs], np.int32)
    for rule in SEGMENT_RULES:
        got = sps_rule_counts(t, src, dst, (1, 2, 3), rule)
        for k in (1, 2, 3):
            want = [_brute_counts(g, a, b, k, rule) for a, b in pairs]
            assert got[k].tolist() == want, (rule, k)
    # dag is the core's sps
    for k in (2, 3):
        core = P.disjoint_paths_batch(t, src, dst, method="sps", k=k).counts
        assert np.array_equal(core, sps_rule_counts(t, src, dst, (k,), "dag")[k])


def test_rule_order_and_refusals():
    _, t = topo_of(SQUARE + [(0, 2, 5), (1, 3, 5)], 4)  # every router now has 3 links
    with pytest.raises(UsageError, match="more than two links"):
        sps_rule_counts(t, [0], [2], (2,), "path")
    with pytest.raises(UsageError, match="segment rule 'x'"):
        check_segment_rules(["x"])
    assert check_segment_rules(["path", "dag", "path"]) == ("path", "dag")


def test_zoo_topology_dag_matches_core_and_rules_are_ordered():
    """On a real topology: dag equals the core's sps; per pair path >= dag (one route frees
    more links than the DAG, and a route of an unblocked DAG is unblocked), any >= path."""
    from tpcstudy.pairs import router_pairs
    t = tpcstudy.read_topology("zoo/Geant2012").merged()
    t = tpcstudy.prune(t)
    s, d = router_pairs(t, "edge")
    got = {r: sps_rule_counts(t, s, d, (1, 2, 4), r) for r in SEGMENT_RULES}
    for k in (2, 4):
        assert np.array_equal(got["dag"][k], P.disjoint_paths_batch(t, s, d, method="sps",
                                                                    k=k).counts)
    assert all(np.all(got[r][1] == 1) for r in SEGMENT_RULES)
    for k in (2, 4):
        assert np.all(got["path"][k] >= got["dag"][k])
        assert np.all(got["any"][k] >= got["path"][k])
    assert got["path"][2].mean() > got["dag"][2].mean()

"""tpcstudy.topology: collapsing parallel links, pruning (2-core, largest component) against
networkx, networkx round trips, and the Zoo facts of docs/method.md §2."""

from __future__ import annotations

import networkx as nx
import numpy as np

import tpcstudy
from tpcstudy import prune, read_topology

from helpers import gml_file as _gml


# ----------------------------------------------------------------- hand-made topologies
def test_parallel_links_collapse_and_self_loops_drop(tmp_path):
    # a = b twice (speeds 10 and 30), b - c, c - a, c - c (self-loop)
    p = _gml(tmp_path, """
      node [ id 0 label "a" ] node [ id 1 label "b" ] node [ id 2 label "c" ]
      edge [ source 0 target 1 LinkSpeedRaw 10 ] edge [ source 1 target 0 LinkSpeedRaw 30 ]
      edge [ source 1 target 2 LinkSpeedRaw 20 ] edge [ source 2 target 0 ]
      edge [ source 2 target 2 ]
    """)
    t = read_topology(p, capacity="zoo")
    assert t.num_links == 3
    assert t.links == [("a", "b"), ("a", "c"), ("b", "c")]
    ab = t.arc_of("a", "b")
    assert t.arc_capacity[ab] == 40.0 and t.arc_capacity[ab ^ 1] == 40.0
    assert t.multiplicity.tolist() == [2, 1, 1]
    # the link c-a has no speed: filled with the median known raw speed (10, 20, 30 -> 20)
    assert t.arc_capacity[t.arc_of("c", "a")] == 20.0
    assert t.meta["capacity_known_links"] == 2
    u = read_topology(p)  # uniform: 1.0 per raw link, parallels add up
    assert u.arc_capacity[u.arc_of("a", "b")] == 2.0
    assert u.arc_capacity[u.arc_of("b", "c")] == 1.0
    assert "uniform" in u.meta["capacity_rule"] and "hop" in u.meta["weight_rule"]


def test_prune_two_core_and_largest_component():
    # A square a-b-c-d with a tail d-e-f (removed), a triangle x-y-z apart (smaller component),
    # and a chord-free path p-q hanging off b (removed).
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("d", "e"), ("e", "f"),
                  ("x", "y"), ("y", "z"), ("z", "x"), ("b", "p"), ("p", "q")])
    t = read_topology(g)
    p = prune(t)
    assert sorted(p.nodes) == ["a", "b", "c", "d"]
    assert p.num_links == 4
    assert sorted(p.edge_routers) == ["a", "b", "c", "d"]  # all of degree 2 after pruning
    # a tree prunes to nothing
    assert prune(read_topology(nx.path_graph(5))).num_nodes == 0
    # equal components: the one holding the smallest router id wins
    two = read_topology(nx.Graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]))
    assert prune(two).nodes == ["0", "1", "2"]


def test_prune_matches_networkx_k_core_on_random_graphs():
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(3, 30))
        g = nx.gnm_random_graph(n, int(rng.integers(n - 1, 2 * n)), seed=int(rng.integers(1 << 30)))
        g.add_edges_from([(0, 0)])  # a self-loop must not count
        t = prune(read_topology(g))
        simple = nx.Graph(g)
        simple.remove_edges_from(nx.selfloop_edges(simple))
        core = nx.k_core(simple, 2)
        if core.number_of_nodes() == 0:
            assert t.num_nodes == 0
            continue
        comps = sorted(nx.connected_components(core), key=lambda c: (-len(c), min(c)))
        assert sorted(t.nodes, key=int) == sorted(str(x) for x in comps[0]) or \
            sorted(int(x) for x in t.nodes) == sorted(comps[0])
        expected_edge = sorted(x for x in comps[0] if core.degree(x) == 2)
        assert sorted(int(x) for x in t.edge_routers) == expected_edge


def test_networkx_round_trip():
    g = nx.MultiGraph()
    g.add_edge("a", "b", capacity=5.0, weight=2)
    g.add_edge("a", "b", capacity=7.0, weight=3)
    g.add_edge("b", "c", capacity=1.0, weight=1)
    t = read_topology(g, capacity="file", weight="file")
    h = t.to_networkx()
    assert isinstance(h, nx.Graph)
    assert h["a"]["b"]["capacity"] == 12.0 and h["a"]["b"]["weight"] == 2.0
    assert h["a"]["b"]["multiplicity"] == 2
    t2 = read_topology(h, capacity="file", weight="file")
    assert np.array_equal(t2.arc_capacity, t.arc_capacity)
    assert np.array_equal(t2.arc_weight, t.arc_weight)


# ----------------------------------------------------------------- the real data
def test_zoo_facts(zoo_installed):
    """docs/method.md §2: 233 non-empty after pruning, Kdl 680/821, Cogentco 166/212, 223 >= 2."""
    topos = list(tpcstudy.read_topologies("zoo"))
    assert len(topos) == 261
    pruned = {t.name: prune(t) for t in topos}
    sizes = {k: (p.num_nodes, p.num_links) for k, p in pruned.items()}
    assert sum(n > 0 for n, _ in sizes.values()) == 233
    assert sizes["Kdl"] == (680, 821) and sizes["Cogentco"] == (166, 212)
    assert sum(len(p.edge_routers) >= 2 for p in pruned.values()) == 223
    nonempty = sorted(n for n, _ in sizes.values() if n)
    assert np.median(nonempty) == 19
    assert np.median(sorted(m for n, m in sizes.values() if n)) == 27
    # parallel links exist in 89 files and are collapsed
    assert sum(t.meta["raw_links"] > t.num_links + t.meta["self_loops"] for t in topos) >= 80

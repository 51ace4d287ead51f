"""Readers, collapsing, capacity/weight rules, pruning and roles (study-method.md §1-2)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

import tpcstudy
from tpcstudy import TopologyFormatError, prune, read_topology
from tpcstudy.io import read_demands, topology_files


def _gml(tmp_path, body: str, name: str = "t.gml"):
    p = tmp_path / name
    p.write_text("graph [\n" + body + "]\n", encoding="utf-8")
    return p


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


def test_no_speed_anywhere_fills_one_gigabit(tmp_path):
    p = _gml(tmp_path, 'node [ id 0 ] node [ id 1 ] edge [ source 0 target 1 ]')
    t = read_topology(p, capacity="zoo")
    assert t.arc_capacity.tolist() == [1e9, 1e9]
    assert "1 Gbit/s" in t.meta["capacity_rule"]


def test_weight_rules(tmp_path):
    p = _gml(tmp_path, """
      node [ id 0 label "a" Latitude 0 Longitude 0 ] node [ id 1 label "b" Latitude 0 Longitude 1 ]
      node [ id 2 label "c" Latitude 1 Longitude 0 ]
      edge [ source 0 target 1 LinkSpeedRaw 100 ] edge [ source 1 target 2 LinkSpeedRaw 25 ]
      edge [ source 2 target 0 LinkSpeedRaw 50 ]
    """)
    inv = read_topology(p, capacity="zoo", weight="inverse-capacity")
    assert inv.arc_weight[inv.arc_of("a", "b")] == 1.0
    assert inv.arc_weight[inv.arc_of("b", "c")] == 4.0
    assert inv.arc_weight[inv.arc_of("c", "a")] == 2.0
    dist = read_topology(p, weight="distance")
    # one degree of arc on the equator is 2 pi R / 360 = 111.195 km
    assert dist.arc_weight[dist.arc_of("a", "b")] == pytest.approx(111.195, rel=1e-4)
    assert dist.arc_weight[dist.arc_of("b", "c")] == pytest.approx(157.2, rel=1e-3)
    # delay from distance over 200 km/ms
    assert dist.delay[0] == pytest.approx(111.195 / 200, rel=1e-4)
    # a router without coordinates: distance falls back to hop for the topology, and says so
    q = _gml(tmp_path, 'node [ id 0 Latitude 0 Longitude 0 ] node [ id 1 ] edge [ source 0 target 1 ]',
             "q.gml")
    t = read_topology(q, weight="distance")
    assert t.arc_weight.tolist() == [1.0, 1.0] and "hop" in t.meta["weight_rule"]
    with pytest.raises(TopologyFormatError, match="no IGP weights"):
        read_topology(q, weight="file")


def test_duplicate_labels_get_unique_names(tmp_path):
    p = _gml(tmp_path, """
      node [ id 0 label "None" ] node [ id 1 label "None" ] node [ id 2 label "x" ] node [ id 3 ]
      edge [ source 0 target 1 ] edge [ source 1 target 2 ] edge [ source 2 target 3 ]
    """)
    t = read_topology(p)
    assert t.nodes == ["None#0", "None#1", "x", "node#3"]


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
    for trial in range(40):
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


# ----------------------------------------------------------------- malformed input
@pytest.mark.parametrize("body, line, what", [
    ('node [ id 0 ]\n edge [ source 0 target 9 ]\n', 3, "target 9 is not a node id"),
    ('node [ id 0 ]\n node [ id 0 ]\n', 3, "defined twice"),
    ('node [ label "x" ]\n', 2, "without an 'id'"),
    ('node [ id 0 ] node [ id 1 ]\n edge [ source 0 target 1 LinkSpeedRaw -4 ]\n', 3, "LinkSpeedRaw -4"),
    ('node [ id 0 ] @@\n', 2, "unexpected text"),
])
def test_gml_errors_name_file_and_line(tmp_path, body, line, what):
    p = _gml(tmp_path, body)
    with pytest.raises(TopologyFormatError) as info:
        read_topology(p)
    assert info.value.line == line and what in str(info.value) and str(p) in str(info.value)


def test_truncated_and_non_utf8_and_empty(tmp_path, zoo_mirror):
    data = (zoo_mirror / "Abilene.gml").read_bytes()
    p = tmp_path / "trunc.gml"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TopologyFormatError, match="never closed|no value|truncated"):
        read_topology(p)
    q = tmp_path / "bytes.gml"
    q.write_bytes(b'graph [\n node [ id 0 label "caf\xe9" ]\n]\n')
    with pytest.raises(TopologyFormatError) as info:
        read_topology(q)
    assert info.value.line == 2 and "0xe9" in str(info.value)
    e = _gml(tmp_path, "", "empty.gml")
    with pytest.raises(TopologyFormatError, match="no nodes"):
        read_topology(e)
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(TopologyFormatError, match="unknown topology format"):
        read_topology(tmp_path / "x.txt")


def test_repetita_errors(tmp_path):
    def write(text):
        p = tmp_path / "t.graph"
        p.write_text(text)
        return p
    ok = "NODES 2\nlabel x y\na 0 0\nb 1 1\n\nEDGES 2\nlabel src dest weight bw delay\n"
    with pytest.raises(TopologyFormatError, match=r"found 0.*truncated"):
        read_topology(write(ok))
    with pytest.raises(TopologyFormatError) as info:
        read_topology(write(ok + "e0 0 5 1 10 1\ne1 1 0 1 10 1\n"))
    assert info.value.line == 8 and "dest 5" in str(info.value)
    with pytest.raises(TopologyFormatError, match="bw 'ten' is not a number"):
        read_topology(write(ok + "e0 0 1 1 ten 1\ne1 1 0 1 10 1\n"))
    with pytest.raises(TopologyFormatError, match="expected 'NODES <count>'"):
        read_topology(write("NODE 2\n"))
    t = read_topology(write(ok + "e0 0 1 3 10 1\ne1 1 0 5 10 1\n"), capacity="file", weight="file")
    assert t.arc_weight.tolist() == [3.0, 5.0]  # each direction keeps its own weight
    assert isinstance(t.to_networkx(), nx.DiGraph)


def test_graphml_errors(tmp_path):
    p = tmp_path / "t.graphml"
    p.write_text('<?xml version="1.0"?>\n<graphml><graph>\n<node id="a"/>\n<edge source="a" '
                 'target="b"/>\n</graph></graphml>\n')
    with pytest.raises(TopologyFormatError) as info:
        read_topology(p)
    assert info.value.line == 4 and "'b'" in str(info.value)
    p.write_text('<?xml version="1.0"?>\n<graphml><graph>\n<node id="a">\n')
    with pytest.raises(TopologyFormatError, match="not well-formed"):
        read_topology(p)
    # found by the fuzzer: a declaration naming an unknown encoding raised LookupError
    p.write_text('<?xml version="1.0" encoding="no-such-codec"?>\n<graphml><graph/></graphml>\n')
    with pytest.raises(TopologyFormatError, match="cannot decode"):
        read_topology(p)


def test_topo_spec_errors(tmp_path):
    with pytest.raises(tpcstudy.UsageError, match="holds no topology"):
        topology_files(tmp_path)
    with pytest.raises(tpcstudy.UsageError, match="no such file"):
        topology_files(tmp_path / "nope.gml")
    with pytest.raises(tpcstudy.UsageError, match="matches no topology"):
        topology_files(str(tmp_path / "*.gml"))


# ----------------------------------------------------------------- the real data
def test_zoo_facts(zoo_installed):
    """study-method.md §2: 233 non-empty after pruning, Kdl 680/821, Cogentco 166/212, 223 >= 2."""
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


def test_graphml_agrees_with_gml(zoo_mirror):
    for gml in sorted(zoo_mirror.glob("*.gml")):
        a = prune(read_topology(gml))
        b = prune(read_topology(zoo_mirror / "graphml" / (gml.stem + ".graphml")))
        assert (a.num_nodes, a.num_links, len(a.edge_routers)) == \
            (b.num_nodes, b.num_links, len(b.edge_routers)), gml.name


def test_repetita_reads_all(repetita):
    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    topos = list(tpcstudy.read_topologies(folder, capacity="file", weight="file"))
    assert len(topos) == 260
    ab = next(t for t in topos if t.name == "Abilene")
    assert ab.num_nodes == 11 and ab.num_links == 14
    assert ab.arc_capacity.max() == 9953280 and ab.meta["capacity_unit"] == "kbit/s"
    d = read_demands(folder / "Abilene.0000.demands", ab)
    assert len(d) == 110 and d["bw"][0] == 300632


def test_zoo_speeds_and_coverage(zoo_installed):
    t = read_topology("zoo/Amres", capacity="zoo")
    assert t.capacity_coverage() == 1.0 and "0 of" in t.meta["capacity_rule"]
    assert read_topology("zoo/Abilene", capacity="zoo").capacity_coverage() == 0.0
    cov = [read_topology(p).capacity_coverage() for p in tpcstudy.io.topology_files("zoo")]
    assert sum(c == 1.0 for c in cov) == 29 and sum(0 < c < 1 for c in cov) == 82
    assert not any(math.isnan(c) for c in cov)

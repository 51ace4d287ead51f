"""The path core on hand-made graphs whose answers are worked out by hand (docs/method.md §3, §5)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import UsageError, read_topology
from tpcstudy import paths as P


def _topo(edges, *, weighted: bool = False, multi: bool = False, nodes=None):
    g = nx.MultiGraph() if multi else nx.Graph()
    if nodes:
        g.add_nodes_from(nodes)
    for e in edges:
        if weighted:
            g.add_edge(e[0], e[1], weight=e[2])
        else:
            g.add_edge(e[0], e[1])
    return read_topology(g, weight="file" if weighted else "hop")


def _ratios(t, s, d):
    return {k: pytest.approx(v) for k, v in P.ecmp_ratios(t, s, d).items()}


# ----------------------------------------------------------------- ECMP
def test_diamond_splits_in_half():
    # s - a - t and s - b - t, all hop 1: two shortest paths of length 2; s sends 1/2 to each of
    # a and b, each forwards its 1/2 to t.
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    assert P.shortest_paths(t, "s", "t") == [["s", "a", "t"], ["s", "b", "t"]]
    assert P.ecmp_ratios(t, "s", "t") == {("s", "a"): 0.5, ("s", "b"): 0.5,
                                          ("a", "t"): 0.5, ("b", "t"): 0.5}
    assert sorted(P.dag_arcs(t, "s", "t").tolist()) == sorted(
        [t.arc_of("s", "a"), t.arc_of("s", "b"), t.arc_of("a", "t"), t.arc_of("b", "t")])
    d = P.shortest_distances(t, "s")
    assert d[t.index_of("t")] == 2.0 and d[t.index_of("a")] == 1.0
    # the reverse segment uses the reverse arcs
    assert P.ecmp_ratios(t, "t", "s")[("t", "a")] == 0.5


def test_uneven_split_quarters():
    # Three shortest s -> t paths of 3 hops: s-a-x-t, s-b-c-t, s-b-d-t. s has two next hops (a, b):
    # 1/2 each. a has one (x): x gets 1/2. b has two (c, d): 1/4 each. So ECMP is per hop, not per
    # path (per path would give 1/3 each).
    t = _topo([("s", "a"), ("a", "x"), ("x", "t"), ("s", "b"), ("b", "c"), ("c", "t"),
               ("b", "d"), ("d", "t")])
    r = P.ecmp_ratios(t, "s", "t")
    assert r == {("s", "a"): 0.5, ("a", "x"): 0.5, ("x", "t"): 0.5, ("s", "b"): 0.5,
                 ("b", "c"): 0.25, ("b", "d"): 0.25, ("c", "t"): 0.25, ("d", "t"): 0.25}
    assert len(P.shortest_paths(t, "s", "t")) == 3
    assert P.shortest_paths(t, "s", "t", limit=2) == [["s", "a", "x", "t"], ["s", "b", "c", "t"]]


def test_parallel_links_collapse_to_one_next_hop():
    # s = a twice (a MultiGraph), a - t, s - b, b - t. The parallels collapse into one link, so s
    # has two next hops (a, b) and splits 1/2 : 1/2, not 2/3 : 1/3.
    t = _topo([("s", "a"), ("s", "a"), ("a", "t"), ("s", "b"), ("b", "t")], multi=True)
    assert t.num_links == 4
    assert P.ecmp_ratios(t, "s", "t")[("s", "a")] == 0.5
    # and the collapsed link counts once for disjointness: 2 disjoint paths, not 3
    assert len(P.edge_disjoint_paths(t, "s", "t")) == 2


def test_real_weights_tie_within_tolerance():
    # s - a (0.1), a - t (0.2), s - t (0.3): 0.1 + 0.2 = 0.30000000000000004 in floating point,
    # equal to 0.3 under the relative 1e-9 rule, so both routes are shortest and s splits 1/2.
    t = _topo([("s", "a", 0.1), ("a", "t", 0.2), ("s", "t", 0.3)], weighted=True)
    assert P.ecmp_ratios(t, "s", "t") == {("s", "a"): 0.5, ("a", "t"): 0.5, ("s", "t"): 0.5}
    assert len(P.shortest_paths(t, "s", "t")) == 2


def test_integer_weights_compare_exactly():
    # s - a (1), a - t (1), s - t (3): the direct link is longer, no split.
    t = _topo([("s", "a", 1), ("a", "t", 1), ("s", "t", 3)], weighted=True)
    assert P.ecmp_ratios(t, "s", "t") == {("s", "a"): 1.0, ("a", "t"): 1.0}


def test_unreachable_and_self_are_data_not_errors():
    t = _topo([("s", "a"), ("a", "b"), ("b", "s"), ("x", "y"), ("y", "z"), ("z", "x")])
    assert P.shortest_paths(t, "s", "x") == []
    assert P.ecmp_ratios(t, "s", "x") == {}
    assert P.shortest_paths(t, "s", "s") == [["s"]]
    assert P.ecmp_ratios(t, "s", "s") == {}
    assert math.isinf(P.shortest_distances(t, "s")[t.index_of("x")])
    assert P.edge_disjoint_paths(t, "s", "x") == []
    assert P.edge_disjoint_paths(t, "s", "s") == []
    sp = P.sr_path(t, "s", "x", 3)
    assert math.isinf(sp.cost) and sp.waypoints == []
    with pytest.raises(UsageError, match="nowhere"):
        P.ecmp_ratios(t, "s", "nowhere")


def test_segment_ratios_batch_matches_single():
    # The uneven graph again, several segments towards two targets, in a shuffled order.
    t = _topo([("s", "a"), ("a", "x"), ("x", "t"), ("s", "b"), ("b", "c"), ("c", "t"),
               ("b", "d"), ("d", "t")])
    names = ["s", "b", "t", "a", "s", "t"]
    targs = ["t", "t", "s", "t", "s", "t"]
    src = np.array([t.index_of(x) for x in names], np.int32)
    dst = np.array([t.index_of(x) for x in targs], np.int32)
    off, arcs, fr = P.segment_ratios(t, src, dst)
    assert len(off) == len(src) + 1 and arcs.dtype == np.int32 and fr.dtype == np.float64
    for i, (a, b) in enumerate(zip(names, targs)):
        got = {(t.names[t.arc_src[x]], t.names[t.arc_dst[x]]): f
               for x, f in zip(arcs[off[i]:off[i + 1]].tolist(), fr[off[i]:off[i + 1]].tolist())}
        assert got == P.ecmp_ratios(t, a, b)
    assert off[5] == off[6]  # t -> t has no arcs


def test_segment_costs_diamond_by_hand():
    # Diamond s-a-t, s-b-t. Prices: s->a 4, a->t 2, s->b 0, b->t 0, every other arc 1.
    # cost(s, t) = 1/2 (4 + 2) + 1/2 (0 + 0) = 3; cost(a, t) = 2; cost(s, a) = 4.
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    y = np.ones(2 * t.num_links)
    for (u, v), p in {("s", "a"): 4, ("a", "t"): 2, ("s", "b"): 0, ("b", "t"): 0}.items():
        y[t.arc_of(u, v)] = p
    c = P.segment_costs(t, y)
    i = t.index_of
    assert c.shape == (4, 4) and np.all(np.diag(c) == 0)
    assert c[i("s"), i("t")] == 3.0 and c[i("a"), i("t")] == 2.0 and c[i("s"), i("a")] == 4.0
    # the cheapest sr-path s -> t with 2 segments goes via b: cost(s, b) + cost(b, t) = 0
    sp = P.sr_path(t, "s", "t", 2, prices=y)
    assert sp.waypoints == ["b"] and sp.cost == 0.0 and sp.segments == [("s", "b"), ("b", "t")]
    assert P.sr_path(t, "s", "t", 1, prices=y).waypoints == []


def test_sr_path_prefers_fewer_segments_on_ties():
    # Unit prices on the diamond: cost(s, t) = 2 = cost(s, a) + cost(a, t); the direct path wins.
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    sp = P.sr_path(t, "s", "t", 4)
    assert sp.waypoints == [] and sp.cost == 2.0 and sp.nodes == ["s", "t"]


# ----------------------------------------------------------------- disjoint paths
def _trap():
    # The greedy trap. Shortest s -> t is s-a-b-t (3 hops, unique). Two disjoint paths exist:
    # s-a-e-f-t and s-c-d-b-t (4 hops each). Greedy takes s-a-b-t first, which cuts s-a and b-t:
    # from s only s-c-d-b remains and b is then a dead end, so greedy finds 1, max finds 2.
    return _topo([("s", "a"), ("a", "b"), ("b", "t"), ("a", "e"), ("e", "f"), ("f", "t"),
                  ("s", "c"), ("c", "d"), ("d", "b")])


def _assert_disjoint(topo, paths, s, t):
    used = set()
    for p in paths:
        assert p[0] == s and p[-1] == t
        links = set()
        for u, v in zip(p[:-1], p[1:]):
            topo.arc_of(u, v)  # raises if not adjacent
            links.add(frozenset((u, v)))
        assert not links & used
        used |= links


def test_greedy_trap():
    t = _trap()
    mx = P.edge_disjoint_paths(t, "s", "t", method="max")
    gr = P.edge_disjoint_paths(t, "s", "t", method="greedy")
    assert len(mx) == 2 and len(gr) == 1
    assert gr == [["s", "a", "b", "t"]]
    _assert_disjoint(t, mx, "s", "t")
    assert sorted(map(tuple, mx)) == [("s", "a", "e", "f", "t"), ("s", "c", "d", "b", "t")]
    # sps takes the same first path (the ECMP DAG of s -> t is s-a-b-t); d -> t would need b-t
    assert len(P.edge_disjoint_paths(t, "s", "t", method="sps", k=4)) == 1
    one = P.edge_disjoint_paths(t, "s", "t", method="sps", k=4, detail=True)
    assert one[0].waypoints == [] and ("b", "t") in one[0].links  # why there is only one
    assert [x.waypoints for x in P.edge_disjoint_paths(t, "s", "t", detail=True)] == [[], []]


def test_sps_segment_limit_binds():
    # A 6-cycle: chain s-a1-a2-a3-a4-t (5 hops) closed by the link s-t. Path 1 is s-t. On the
    # chain, a segment of 1 or 2 hops is the unique shortest path; a 3-hop stretch ties with the
    # 3 hops the other way round (its ECMP DAG includes s-t, removed). So covering the 5 chain hops
    # takes 3 segments: k = 1, 2 give one path, k = 3 gives two, costing 1 and 5.
    t = _topo([("s", "a1"), ("a1", "a2"), ("a2", "a3"), ("a3", "a4"), ("a4", "t"), ("s", "t")])
    for k, want in ((1, 1), (2, 1), (3, 2), (6, 2)):
        assert len(P.edge_disjoint_paths(t, "s", "t", method="sps", k=k)) == want, k
    b = P.disjoint_paths_batch(t, [t.index_of("s")], [t.index_of("t")], method="sps", k=3)
    assert b.counts.tolist() == [2]
    assert b.costs.tolist() == [1.0, 5.0]
    wp = b.path_waypoints(0)
    assert len(wp[0]) == 0 and len(wp[1]) == 2
    # detail=True: the same paths with their waypoints, occupied links and costs, by name
    d = P.edge_disjoint_paths(t, "s", "t", method="sps", k=3, detail=True)
    assert [x.nodes for x in d] == P.edge_disjoint_paths(t, "s", "t", method="sps", k=3)
    assert [x.cost for x in d] == [1.0, 5.0]
    assert d[0].waypoints == [] and d[0].links == [("s", "t")]
    assert len(d[1].waypoints) == 2 and d[1].nodes == ["s", "a1", "a2", "a3", "a4", "t"]
    assert sorted(map(frozenset, d[1].links)) == sorted(
        map(frozenset, zip(d[1].nodes, d[1].nodes[1:])))
    assert [t.names[x] for x in b.paths(0)[1]] == ["s", "a1", "a2", "a3", "a4", "t"]
    assert sorted(b.path_links(0)[1].tolist()) == sorted(
        t.arc_of(u, v) // 2 for u, v in [("s", "a1"), ("a1", "a2"), ("a2", "a3"), ("a3", "a4"),
                                         ("a4", "t")])
    assert len(P.edge_disjoint_paths(t, "s", "t", method="max")) == 2
    assert len(P.edge_disjoint_paths(t, "s", "t", method="greedy")) == 2


def test_sps_ecmp_segment_blocks_second_path():
    # Diamond s-a-t, s-b-t: the ECMP DAG of s -> t spreads over both branches, so the first sps
    # path occupies all four links and there is no second one. max and greedy find two.
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    for k in (1, 2, 5):
        assert len(P.edge_disjoint_paths(t, "s", "t", method="sps", k=k)) == 1
    b = P.disjoint_paths_batch(t, [0], [t.index_of("t")], method="sps", k=2)
    assert len(b.path_links(0)[0]) == 4
    assert P.edge_disjoint_paths(t, "s", "t", method="sps", k=2) == [["s", "a", "t"]]
    assert len(P.edge_disjoint_paths(t, "s", "t", method="max")) == 2
    assert len(P.edge_disjoint_paths(t, "s", "t", method="greedy")) == 2


def test_sps_waypoint_steers_around_ecmp():
    # Square s-a-t-b-s plus a pendant detour s-c-t of 2 hops... all three branches tie (2 hops),
    # so the DAG of s -> t takes every link: 1 path. Lengthen the c branch to s-c-d-t (3 hops):
    # path 1 is the diamond's DAG (4 links); path 2 is s-c-d-t, whose segment s -> t is not
    # usable, but s -> d (unique: s-c-d) then d -> t (unique: d-t) is: k = 2 gives 2 paths.
    t = _topo([("s", "a"), ("a", "t"), ("s", "b"), ("b", "t"), ("s", "c"), ("c", "d"), ("d", "t")])
    assert len(P.edge_disjoint_paths(t, "s", "t", method="sps", k=1)) == 1
    got = P.edge_disjoint_paths(t, "s", "t", method="sps", k=2)
    assert got == [["s", "a", "t"], ["s", "c", "d", "t"]]
    b = P.disjoint_paths_batch(t, [t.index_of("s")], [t.index_of("t")], method="sps", k=2)
    assert [t.names[x] for x in b.path_waypoints(0)[1]] in (["c"], ["d"])
    assert len(P.edge_disjoint_paths(t, "s", "t", method="max")) == 3


def test_batch_and_counts_shapes():
    t = _trap()
    ids = t.index_of
    s = np.array([ids("s"), ids("t"), ids("a"), ids("s")], np.int32)
    d = np.array([ids("t"), ids("s"), ids("a"), ids("b")], np.int32)
    for method, want in (("max", [2, 2, 0, 2]), ("greedy", [1, 1, 0, 2])):
        b = P.disjoint_paths_batch(t, s, d, method=method)
        assert b.counts.tolist() == want
        assert P.disjoint_path_counts(t, s, d, method=method).tolist() == want
        for i in range(len(s)):
            _assert_disjoint(t, [[t.names[x] for x in p] for p in b.paths(i)],
                             t.names[s[i]], t.names[d[i]])
    with pytest.raises(UsageError, match="k"):
        P.disjoint_paths_batch(t, s, d, method="sps")
    with pytest.raises(UsageError, match="bogus"):
        P.disjoint_paths_batch(t, s, d, method="bogus")
    with pytest.raises(UsageError, match="99"):
        P.disjoint_paths_batch(t, [99], [0])
    empty = P.disjoint_paths_batch(t, np.zeros(0, np.int32), np.zeros(0, np.int32))
    assert empty.counts.tolist() == [] and empty.pair_offsets.tolist() == [0]


def test_array_argument_checks():
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    with pytest.raises(UsageError, match="prices"):
        P.segment_costs(t, np.ones(3))
    with pytest.raises(UsageError, match="costs"):
        P.best_sr_paths(t, np.zeros((2, 2)), [0], [1], 2)
    with pytest.raises(UsageError, match="k = 0"):
        P.best_sr_paths(t, np.zeros((4, 4)), [0], [1], 0)
    with pytest.raises(UsageError, match="differ"):
        P.segment_ratios(t, [0, 1], [2])


def test_array_layer_takes_ids_not_names():
    # Routers named "1", "0", "2" get ids 0, 1, 2: an integer is an id, a string a name (the one
    # rule of Topology.index_of, docs/method.md §1; tests/test_node_ids.py checks every function).
    g = nx.Graph()
    g.add_nodes_from([1, 0, 2])
    g.add_edges_from([(1, 0), (0, 2)])
    t = read_topology(g)
    assert t.names == ["1", "0", "2"]
    assert P.shortest_distances(t, 0).tolist() == [0.0, 1.0, 2.0]  # from id 0 = router "1"
    assert P.shortest_distances(t, "0").tolist() == [1.0, 0.0, 1.0]
    assert P.dag_arcs(t, 0, 2).tolist() == sorted([t.arc_of("1", "0"), t.arc_of("0", "2")])
    with pytest.raises(UsageError, match="7"):
        P.shortest_distances(t, 7)


# ----------------------------------------------------------------- the light call path (issue 42)
def test_disjoint_count_is_the_number_of_paths_every_method():
    t = _trap()
    for method, k in (("max", None), ("greedy", None), ("sps", 4), ("sps", 1)):
        assert P.edge_disjoint_path_count(t, "s", "t", method=method, k=k) == len(
            P.edge_disjoint_paths(t, "s", "t", method=method, k=k))
    assert P.edge_disjoint_path_count(t, "s", "t") == 2  # max, by hand (test_greedy_trap)
    assert P.edge_disjoint_path_count(t, "s", "s") == 0
    with pytest.raises(UsageError):
        P.edge_disjoint_path_count(t, "s", "nowhere")


def test_single_pair_lists_match_the_batch_arrays():
    """The list-building bindings give what the array bindings give, names or ids, and they
    leave their per-thread buffers clean: a second graph (larger, then smaller) after the
    first answers as on its own."""
    import tpcstudy._core as C

    small = _topo([("a", "b"), ("b", "c"), ("a", "d"), ("d", "c"), ("c", "e")])
    big = _topo([(i, (i + 1) % 12) for i in range(12)] + [(0, 6), (3, 9)])
    for t in (small, big, small, big):
        g, n = t.graph, t.num_nodes
        for s in range(n):
            for d in range(n):
                off, nodes = C.shortest_paths(g, s, d, 1000)
                want = [nodes[a:b].tolist() for a, b in zip(off[:-1], off[1:])]
                assert C.shortest_paths_list(g, s, d, 1000) == want
                assert C.shortest_paths_list(g, s, d, 1000, t.names) == [
                    [t.names[x] for x in p] for p in want]
                arcs, fr = C.ecmp_ratios(g, s, d)
                assert C.ecmp_ratios_dict(g, s, d, list(range(2 * t.num_links))) == dict(
                    zip(arcs.tolist(), fr.tolist()))
    with pytest.raises(IndexError):
        C.shortest_paths_list(small.graph, 0, 99, 10)
    with pytest.raises(ValueError):
        C.shortest_paths_list(small.graph, 0, 1, 10, ["too", "short"])


def test_routing_keeps_its_graph_alive():
    """The routing table references the graph instead of copying it: dropping every other
    reference to the graph must not free it under the table."""
    import gc

    import tpcstudy._core as C

    t = _topo([("a", "b"), ("b", "c"), ("a", "d"), ("d", "c")])
    routing = C.Routing(C.Graph(t.num_nodes, t.arc_src, t.arc_dst, t.arc_weight), 1)
    gc.collect()
    np.testing.assert_array_equal(routing.distances(), P.distance_matrix(t))
    assert routing.segment_costs(np.ones(2 * t.num_links))[0, 2] == 2.0


def test_free_cpus_reads_the_running_count():
    """free_cpus is the online CPUs less the other runnable tasks of /proc/loadavg's fourth
    field (at least 1). The count moves between two reads, so the core's answer must match a
    reading taken just before or just after it in one of several tries."""
    import os

    path = "/proc/loadavg"
    if not os.path.exists(path):
        pytest.skip("no /proc/loadavg")

    def mine() -> int:
        with open(path) as fh:
            running = int(fh.read().split()[3].split("/")[0])
        return max(1, os.sysconf("SC_NPROCESSORS_ONLN") - (running - 1))

    for _ in range(50):
        before, got, after = mine(), P.free_cpus(), mine()
        if got in (before, after):
            break
    assert got in (before, after), (before, got, after)
    assert 1 <= got <= os.sysconf("SC_NPROCESSORS_ONLN")


def test_named_fast_path_reads_routers_as_index_of_does():
    """shortest_paths looks exact names up in the core; everything else (ids, numpy strings,
    names that look like numbers, unknown names) is read by Topology.index_of, as before."""
    t = _topo([("1", "0"), ("0", "2"), ("1", "3"), ("3", "2")])
    names = t.names

    def by_index_of(s, d):
        i, j = t.index_of(s), t.index_of(d)
        return [[names[x] for x in p] for p in P._core.shortest_paths_list(t.graph, i, j, 1000)]

    for s, d in (("1", "2"), (0, 2), ("0", 2), (np.str_("1"), "2"), (np.int64(1), 3)):
        assert P.shortest_paths(t, s, d) == by_index_of(s, d), (s, d)
    assert P.shortest_paths(t, "1", "2") == [["1", "0", "2"], ["1", "3", "2"]]
    with pytest.raises(UsageError):
        P.shortest_paths(t, "1", "nowhere")

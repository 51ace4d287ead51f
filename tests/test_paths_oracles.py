"""The path core against networkx and brute force on random graphs (docs/method.md §3-5)."""

from __future__ import annotations

import itertools
import math
import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tpcstudy
from tpcstudy import paths as P


# ----------------------------------------------------------------- helpers
def random_graph(seed: int, n: int, extra: int, *, max_weight: int = 1,
                 connected: bool = True) -> nx.Graph:
    """n nodes labelled 0..n-1 (so router id == label), a random tree (if connected) plus extra
    random links, integer weights in 1..max_weight."""
    rng = random.Random(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    if connected:
        for v in range(1, n):
            g.add_edge(v, rng.randrange(v))
    for _ in range(extra):
        u, v = rng.sample(range(n), 2)
        g.add_edge(u, v)
    for u, v in g.edges:
        g[u][v]["weight"] = rng.randint(1, max_weight)
    return g


def topo_of(g: nx.Graph) -> tpcstudy.Topology:
    t = tpcstudy.read_topology(g, weight="file")
    assert t.names == [str(x) for x in range(g.number_of_nodes())]
    return t


def nx_ratios(g: nx.Graph, s: int, t: int) -> dict:
    """ECMP ratios computed independently with networkx: per-hop even split over next hops."""
    dist = nx.single_source_dijkstra_path_length(g, t, weight="weight")
    if s not in dist or s == t:
        return {}
    flow = {s: 1.0}
    out = {}
    for u in sorted(dist, key=lambda x: (-dist[x], x)):
        if u == t or flow.get(u, 0.0) == 0.0:
            continue
        nh = [v for v in g[u] if v in dist and dist[u] == g[u][v]["weight"] + dist[v]]
        for v in nh:
            out[(u, v)] = out.get((u, v), 0.0) + flow[u] / len(nh)
            flow[v] = flow.get(v, 0.0) + flow[u] / len(nh)
    return out


def ratios_by_id(topo, s: int, t: int) -> dict:
    return {(int(a), int(b)): f for (a, b), f in P.ecmp_ratios(topo, s, t).items()}


def seg_links(g: nx.Graph, a: int, b: int) -> frozenset:
    """Undirected links of the ECMP DAG of segment a -> b (all shortest paths)."""
    out = set()
    for p in nx.all_shortest_paths(g, a, b, weight="weight"):
        out.update(frozenset(e) for e in zip(p[:-1], p[1:]))
    return frozenset(out)


def check_disjoint(g: nx.Graph, paths, s: int, t: int) -> None:
    used = set()
    for p in paths:
        p = [int(x) for x in p]
        assert p[0] == s and p[-1] == t
        links = set()
        for u, v in zip(p[:-1], p[1:]):
            assert g.has_edge(u, v)
            links.add(frozenset((u, v)))
        assert not links & used
        used |= links


def greedy_reference(g: nx.Graph, s: int, t: int) -> list:
    """Greedy disjoint paths: lexicographically smallest shortest path, remove its links, repeat."""
    h = g.copy()
    out = []
    while nx.has_path(h, s, t):
        p = min(nx.all_shortest_paths(h, s, t, weight="weight"))
        out.append(p)
        h.remove_edges_from(zip(p[:-1], p[1:]))
    return out


# ----------------------------------------------------------------- shortest paths
@pytest.mark.parametrize("seed", range(6))
def test_distances_paths_and_dag_vs_networkx(seed):
    g = random_graph(seed, 14, 12, max_weight=1 + seed % 3)
    t = topo_of(g)
    for s in range(14):
        want = nx.single_source_dijkstra_path_length(g, s, weight="weight")
        got = P.shortest_distances(t, s)
        assert got.tolist() == [float(want[v]) for v in range(14)]
    for s, d in itertools.permutations(range(0, 14, 3), 2):
        want = sorted(nx.all_shortest_paths(g, s, d, weight="weight"))
        got = [[int(x) for x in p] for p in P.shortest_paths(t, s, d)]
        assert got == want
        arcs = {t.arc_of(u, v) for p in want for u, v in zip(p[:-1], p[1:])}
        assert P.dag_arcs(t, s, d).tolist() == sorted(arcs)


@pytest.mark.parametrize("seed", range(3))
def test_single_pair_search_stops_early_with_the_same_dag(seed):
    """shortest_paths, dag_arcs and ecmp_ratios stop their search once the source is settled;
    with float weights whose sums tie only within rounding (0.1 + 0.2 vs 0.3), each pair's DAG
    and fractions equal those of segment_ratios, whose search for a target stops only at the
    farthest of all its sources, and the paths are exactly the DAG's."""
    rng = random.Random(seed)
    g = random_graph(500 + seed, 16, 18)
    for u, v in g.edges:
        g[u][v]["weight"] = rng.choice([0.1, 0.2, 0.3, 0.4, 0.7])
    t = topo_of(g)
    n = t.num_nodes
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    off, arcs, fr = P.segment_ratios(t, src, dst)
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
        batch = dict(zip(arcs[off[i]:off[i + 1]].tolist(), fr[off[i]:off[i + 1]].tolist()))
        single = {t.arc_of(int(a), int(b)): f for (a, b), f in P.ecmp_ratios(t, s, d).items()}
        assert single == batch
        assert P.dag_arcs(t, s, d).tolist() == sorted(batch)
        if s != d:
            on_paths = {t.arc_of(a, b) for p in P.shortest_paths(t, s, d)
                        for a, b in zip(p[:-1], p[1:])}
            assert on_paths == set(batch)


def test_unreachable_distances_are_inf():
    g = random_graph(3, 10, 3, connected=False)
    t = topo_of(g)
    for s in range(10):
        reach = nx.node_connected_component(g, s)
        d = P.shortest_distances(t, s)
        assert all(math.isinf(d[v]) == (v not in reach) for v in range(10))


# ----------------------------------------------------------------- ECMP ratios and costs
@pytest.mark.parametrize("seed", range(6))
def test_ratios_match_reference_and_conserve_flow(seed):
    g = random_graph(100 + seed, 12, 14, max_weight=1 + seed % 2)
    t = topo_of(g)
    for s, d in itertools.permutations(range(12), 2):
        got = ratios_by_id(t, s, d)
        want = nx_ratios(g, s, d)
        assert got.keys() == want.keys()
        assert all(got[k] == pytest.approx(want[k], rel=1e-12) for k in got)
        net = np.zeros(12)
        for (u, v), f in got.items():
            net[u] += f
            net[v] -= f
        expect = np.zeros(12)
        expect[s], expect[d] = 1.0, -1.0
        assert np.allclose(net, expect, atol=1e-12)
        support = sorted(t.arc_of(u, v) for u, v in got)
        assert support == P.dag_arcs(t, s, d).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_segment_costs_equal_ratios_times_prices(seed):
    g = random_graph(200 + seed, 11, 10, max_weight=2)
    t = topo_of(g)
    rng = np.random.default_rng(seed)
    y = rng.random(2 * t.num_links)
    y[rng.random(y.size) < 0.3] = 0.0
    c = P.segment_costs(t, y)
    n = t.num_nodes
    src, dst = np.divmod(np.arange(n * n), n)
    off, arcs, fr = P.segment_ratios(t, src.astype(np.int32), dst.astype(np.int32))
    expect = np.add.reduceat(np.append(fr * y[arcs], 0.0), off[:-1]) * (np.diff(off) > 0)
    assert np.allclose(c.ravel(), expect, rtol=1e-12, atol=1e-15)
    assert np.all(np.diag(c) == 0)


def test_segment_costs_unreachable_is_inf():
    g = random_graph(5, 8, 2, connected=False)
    t = topo_of(g)
    c = P.segment_costs(t, np.ones(2 * t.num_links))
    comp = {v: min(nx.node_connected_component(g, v)) for v in g}
    for u in range(8):
        for v in range(8):
            assert math.isinf(c[u, v]) == (comp[u] != comp[v])


# ----------------------------------------------------------------- sr-path DP
@pytest.mark.parametrize("seed,k", [(s, k) for s in range(4) for k in (1, 2, 3, 4)])
def test_best_sr_paths_vs_brute_force(seed, k):
    g = random_graph(300 + seed, 7, 5, max_weight=2)
    t = topo_of(g)
    n = t.num_nodes
    rng = np.random.default_rng(seed * 10 + k)
    y = np.round(rng.random(2 * t.num_links) * 4) / 4  # quarter prices: exact ties happen
    c = P.segment_costs(t, y)
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    values, off, wps = P.best_sr_paths(t, c, src, dst, k)
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
        best, fewest = math.inf, None
        for j in range(k):
            for seq in itertools.product(range(n), repeat=j):
                nodes = [s, *seq, d]
                v = sum(c[a, b] for a, b in zip(nodes[:-1], nodes[1:]))
                if v < best - 1e-9 * max(1.0, abs(best)) if best < math.inf else v < best:
                    best, fewest = v, j
        w = wps[off[i]:off[i + 1]].tolist()
        if s == d:
            assert values[i] == 0.0 and w == []
            continue
        assert values[i] == pytest.approx(best, rel=1e-9)
        assert len(w) <= k - 1
        nodes = [s, *w, d]
        assert sum(c[a, b] for a, b in zip(nodes[:-1], nodes[1:])) == pytest.approx(values[i])
        if best < math.inf:
            assert len(w) == fewest  # fewest segments among the cheapest


def test_sr_path_unit_prices_is_ecmp_expected_hops():
    g = random_graph(77, 9, 8)
    t = topo_of(g)
    for k in (1, 2, 3):
        sp = P.sr_path(t, "0", "8", k)
        total = 0.0
        for a, b in sp.segments:
            total += sum(P.ecmp_ratios(t, a, b).values())
        assert sp.cost == pytest.approx(total)
        assert sp.num_segments <= k
    assert P.sr_path(t, 0, 8, 1).cost == nx.shortest_path_length(g, 0, 8)  # hop weights


# ----------------------------------------------------------------- disjoint paths
@pytest.mark.parametrize("seed", range(8))
def test_disjoint_paths_vs_networkx(seed):
    n = 10 + seed
    g = random_graph(400 + seed, n, n + seed * 2, max_weight=1 + seed % 3)
    t = topo_of(g)
    pairs = list(itertools.permutations(range(n), 2))
    src = np.array([p[0] for p in pairs], np.int32)
    dst = np.array([p[1] for p in pairs], np.int32)
    mx = P.disjoint_paths_batch(t, src, dst, method="max")
    gr = P.disjoint_paths_batch(t, src, dst, method="greedy")
    sp1 = P.disjoint_paths_batch(t, src, dst, method="sps", k=1)
    sp3 = P.disjoint_paths_batch(t, src, dst, method="sps", k=3)
    for i, (s, d) in enumerate(pairs):
        want = nx.algorithms.connectivity.local_edge_connectivity(g, s, d)
        assert mx.counts[i] == want
        for b in (mx, gr, sp3):
            check_disjoint(g, b.paths(i), s, d)
        ref = greedy_reference(g, s, d)
        assert [p.tolist() for p in gr.paths(i)] == ref
        assert gr.counts[i] <= want
        assert sp1.counts[i] == 1
        assert 1 <= sp3.counts[i] <= want
    # one call, any thread count: same answer
    again = P.disjoint_paths_batch(t, src, dst, method="max", threads=1)
    assert np.array_equal(again.nodes, mx.nodes) and np.array_equal(again.counts, mx.counts)


@pytest.mark.parametrize("seed,k", [(s, k) for s in range(5) for k in (1, 2, 3)])
def test_sps_vs_brute_force(seed, k):
    """Every sps step is the cheapest usable sr-path (fewest segments among equal cost), its
    occupied links are the union of its segments' ECMP DAGs, and when it stops none is left."""
    n = 8
    g = random_graph(500 + seed, n, 6, max_weight=1 + seed % 2)
    t = topo_of(g)
    dist = dict(nx.all_pairs_dijkstra_path_length(g, weight="weight"))
    links = {(a, b): seg_links(g, a, b) for a in range(n) for b in range(n) if a != b}
    link_id = {frozenset(map(int, (t.names[u], t.names[v]))): i for i, (u, v) in
               enumerate(zip(t.link_u.tolist(), t.link_v.tolist()))}

    def cheapest(s, d, removed):
        best = None
        for j in range(k):
            for seq in itertools.permutations([x for x in range(n) if x not in (s, d)], j):
                nodes = [s, *seq, d]
                segs = list(zip(nodes[:-1], nodes[1:]))
                if any(links[e] & removed for e in segs):
                    continue
                cost = sum(dist[a][b] for a, b in segs)
                if best is None or cost < best[0]:
                    best = (cost, j)
        return best

    pairs = list(itertools.permutations(range(n), 2))
    b = P.disjoint_paths_batch(t, [p[0] for p in pairs], [p[1] for p in pairs], method="sps", k=k)
    for i, (s, d) in enumerate(pairs):
        removed: set = set()
        for p, w, lk, cost in zip(b.paths(i), b.path_waypoints(i), b.path_links(i),
                                  b.costs[b.pair_offsets[i]:b.pair_offsets[i + 1]]):
            nodes = [s, *w.tolist(), d]
            segs = list(zip(nodes[:-1], nodes[1:]))
            assert len(segs) <= k
            occupied = frozenset().union(*(links[e] for e in segs))
            assert not occupied & removed
            assert sorted(lk.tolist()) == sorted(link_id[e] for e in occupied)
            assert cost == sum(dist[a][c] for a, c in segs)
            want = cheapest(s, d, removed)
            assert want is not None and (cost, len(w)) == want
            # the concrete route follows the segments' shortest paths
            route = p.tolist()
            assert route[0] == s and route[-1] == d
            assert sum(g[u][v]["weight"] for u, v in zip(route[:-1], route[1:])) == cost
            removed |= occupied
        assert cheapest(s, d, removed) is None


# ----------------------------------------------------------------- property tests
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 12), extra=st.integers(0, 15),
       w=st.integers(1, 4))
def test_property_max_flow_and_ratio_conservation(seed, n, extra, w):
    g = random_graph(seed, n, extra, max_weight=w, connected=seed % 5 != 0)
    t = topo_of(g)
    rng = random.Random(seed)
    s, d = rng.sample(range(n), 2)
    paths = P.edge_disjoint_paths(t, s, d, method="max")
    want = (nx.algorithms.connectivity.local_edge_connectivity(g, s, d)
            if nx.has_path(g, s, d) else 0)
    assert len(paths) == want
    check_disjoint(g, [[int(x) for x in p] for p in paths], s, d)
    assert len(P.edge_disjoint_paths(t, s, d, method="greedy")) <= want
    assert len(P.edge_disjoint_paths(t, s, d, method="sps", k=2)) <= want
    r = ratios_by_id(t, s, d)
    out = sum(f for (u, _), f in r.items() if u == s) - sum(f for (_, v), f in r.items() if v == s)
    assert out == pytest.approx(1.0 if want else 0.0)
    if want:
        assert len(P.shortest_paths(t, s, d, limit=10**6)) == len(
            list(nx.all_shortest_paths(g, s, d, weight="weight")))


# ----------------------------------------------------------------- real topologies
@pytest.mark.parametrize("name", ["Abilene", "Geant2012", "Cogentco"])
def test_zoo_max_matches_networkx(name, zoo_installed):
    t = tpcstudy.prune(tpcstudy.read_topology(zoo_installed / f"{name}.gml"))
    g = nx.Graph()
    g.add_nodes_from(range(t.num_nodes))
    g.add_edges_from(zip(t.link_u.tolist(), t.link_v.tolist()))
    edge = t.edge_router_ids
    rng = random.Random(0)
    pairs = [tuple(rng.sample(edge.tolist(), 2)) for _ in range(40)]
    src = np.array([p[0] for p in pairs], np.int32)
    dst = np.array([p[1] for p in pairs], np.int32)
    mx = P.disjoint_paths_batch(t, src, dst, method="max")
    gr = P.disjoint_path_counts(t, src, dst, method="greedy")
    sps = P.disjoint_path_counts(t, src, dst, method="sps", k=4)
    for i, (s, d) in enumerate(pairs):
        assert mx.counts[i] == nx.algorithms.connectivity.local_edge_connectivity(g, s, d)
        check_disjoint(g, mx.paths(i), s, d)
    assert np.all(gr <= mx.counts) and np.all(sps <= mx.counts) and np.all(sps >= 1)


@pytest.mark.parametrize("k", [2, 4])
def test_best_sr_paths_one_pair_equals_the_batch(k):
    """A call transposes only its distinct targets' cost columns for the last layer (one for a
    single pair, all of them for the batch): each pair alone gives the batch's value and
    waypoints exactly; sr_path's cached unit-price costs give what explicit unit prices give."""
    g = random_graph(950 + k, 40, 30, max_weight=3)
    t = topo_of(g)
    n = t.num_nodes
    rng = np.random.default_rng(k)
    y = np.round(rng.random(2 * t.num_links) * 4) / 4
    c = P.segment_costs(t, y)
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    values, off, wps = P.best_sr_paths(t, c, src, dst, k)
    ones = np.ones(2 * t.num_links)
    for i in rng.choice(src.size, 200, replace=False).tolist():
        s, d = int(src[i]), int(dst[i])
        v1, o1, w1 = P.best_sr_paths(t, c, np.array([s], np.int32), np.array([d], np.int32), k)
        assert v1[0] == values[i] and w1.tolist() == wps[off[i]:off[i + 1]].tolist()
        assert P.sr_path(t, s, d, k) == P.sr_path(t, s, d, k, prices=ones)


@pytest.mark.parametrize("seed,k", [(0, 3), (1, 4), (2, 5)])
def test_best_sr_paths_blocked_dp_vs_numpy(seed, k):
    """The DP in blocks of sources and tiles of targets (a 300-router graph: more than one tile
    of 256 targets, 40 sources: three blocks of 16) against the same recurrence in numpy, layer
    by layer; every returned waypoint sequence costs exactly the returned value."""
    g = random_graph(700 + seed, 300, 120, max_weight=3)
    t = topo_of(g)
    n = t.num_nodes
    rng = np.random.default_rng(seed)
    y = np.round(rng.random(2 * t.num_links) * 8) / 8
    y[rng.random(y.size) < 0.5] = 0.0
    c = P.segment_costs(t, y)
    src = rng.choice(n, 40, replace=False).astype(np.int32)
    dst = rng.integers(0, n, 40 * 5).astype(np.int32)
    src = np.repeat(src, 5)
    values, off, wps = P.best_sr_paths(t, c, src, dst, k)
    for s in np.unique(src).tolist():
        d = c[s].copy()
        d[s] = 0.0
        for _ in range(1, k):
            prev = d.copy()
            via = prev.copy()
            via[s] = np.inf
            best = np.min(via[:, None] + c, axis=0)
            scale = np.maximum(abs(best), abs(prev))
            gain = (best < prev) & ((prev == np.inf) | (prev - best > 1e-9 * scale))
            d = np.where(gain, best, prev)
        for i in np.flatnonzero(src == s).tolist():
            tt = int(dst[i])
            want = 0.0 if tt == s else d[tt]
            assert values[i] == want, (s, tt)
            seq = [s, *wps[off[i]:off[i + 1]].tolist(), tt]
            assert len(seq) - 1 <= k
            if tt != s and np.isfinite(want):
                assert sum(c[a, b] for a, b in zip(seq, seq[1:])) == pytest.approx(want, rel=1e-12)


def _weighted(g: nx.Graph) -> nx.Graph:
    nx.set_edge_attributes(g, 1, "weight")
    return g


def test_sps_second_segments_on_a_ring_by_hand():
    """A ring of six routers (hop weights). 0 -> 3 has two shortest paths: the direct segment's
    DAG takes both ways round, no second path (0). 0 -> 1: the direct link; going round the
    other way needs 3 segments, 0 -> 4 -> 2 -> 1 (0 -> 3 and 4 -> 1 split over both ways and
    2 segments cannot avoid the dead link: 0 -> 2 and 5 -> 1 cross it)."""
    t = topo_of(_weighted(nx.cycle_graph(6)))
    src, dst = np.array([0, 0, 2, 0], np.int32), np.array([3, 1, 2, 0], np.int32)
    assert P.sps_second_segments(t, src[:2], dst[:2], 6).tolist() == [0, 3]
    assert P.sps_second_segments(t, src[:2], dst[:2], 2).tolist() == [0, 0]
    assert P.sps_second_segments(t, src[2:], dst[2:], 6).tolist() == [-1, -1]  # s == t
    for k in range(1, 7):
        assert P.disjoint_path_counts(t, src[:2], dst[:2], method="sps", k=k).tolist() == \
            [1, 2 if k >= 3 else 1]


@pytest.mark.parametrize("seed", range(6))
def test_sps_second_segments_vs_sps_counts(seed):
    """Where the source or the target has degree <= 2, the sps count at limit k is
    1 + (0 < j <= k): against the cost search on every pair of random graphs, k = 1..6."""
    g = random_graph(900 + seed, 14, 6, max_weight=1 + seed % 3)
    t = topo_of(g)
    n = t.num_nodes
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    small = np.minimum(t.degree[src], t.degree[dst]) <= 2
    assert small.sum() > 20
    j = P.sps_second_segments(t, src, dst, 6)
    for k in range(1, 7):
        want = P.disjoint_path_counts(t, src, dst, method="sps", k=k)
        jk = P.sps_second_segments(t, src, dst, k)
        got = np.where(jk < 0, 0, 1 + (jk > 0))
        assert np.array_equal(got[small], want[small]), k
        assert np.array_equal(jk > 0, (j > 0) & (j <= k))  # the fewest segments, whatever kmax


@pytest.mark.parametrize("seed", range(4))
def test_path_price_bounds_vs_networkx_and_below_every_sr_path(seed):
    """The cheapest path price of each pair (networkx Dijkstra on the same prices), inf at or
    above the limit, and never above the cheapest sr-path's price (the bound pricing uses)."""
    g = random_graph(950 + seed, 12, 8, max_weight=3)
    t = topo_of(g)
    n = t.num_nodes
    rng = np.random.default_rng(seed)
    y = np.round(rng.random(2 * t.num_links) * 4) / 8
    y[rng.random(y.size) < 0.3] = 0.0
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    d = nx.DiGraph()
    for a, (u, v) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist())):
        d.add_edge(u, v, w=float(y[a]))
    ref = np.array([nx.shortest_path_length(d, s, u, weight="w") for s, u in zip(src, dst)])
    assert np.array_equal(P.path_price_bounds(t, y, src, dst), ref)
    limit = float(np.median(ref))
    cut = P.path_price_bounds(t, y, src, dst, limit)
    assert np.array_equal(cut, np.where(ref < limit, ref, np.inf))
    for k in (1, 2, 4):
        values, _, _ = P.best_sr_paths(t, P.segment_costs(t, y), src, dst, k)
        assert np.all(ref <= values + 1e-12)


# ----------------------------------------------------------------- segment ratios kept
@pytest.mark.parametrize("seed", range(6))
def test_segment_ratios_after_a_failure_equal_a_fresh_computation(seed):
    """The ratios a failure leaves (the DAGs that crossed no failed link) and those computed
    again are the fresh ones of the failed graph, to the bit; parallel links (a multigraph)
    and unit ties included."""
    from tpcstudy.models.oracles import SegmentRatios, sr_usage
    from tpcstudy.topology import without_link_ids

    rng = random.Random(seed)
    g = nx.MultiGraph(random_graph(seed, 24, 30, max_weight=1 + seed % 3))
    for u, v in rng.sample(sorted(g.edges()), 4):  # parallel links
        g.add_edge(u, v, weight=g[u][v][0]["weight"])
    topo = tpcstudy.read_topology(g, weight="file", links="multigraph")
    seqs = [tuple(rng.sample(range(24), rng.randint(2, 4))) for _ in range(400)]
    known = SegmentRatios(topo)
    first = sr_usage(topo, seqs[:150], known)
    assert abs(first - sr_usage(topo, seqs[:150])).max() == 0
    assert abs(sr_usage(topo, seqs, known) - sr_usage(topo, seqs)).max() == 0
    dropped = 0
    for link in rng.sample(range(topo.num_links), 5):
        failed, amap = without_link_ids(topo, [link])
        kept = known.after_failure(failed, amap)
        dropped += len(known) - len(kept)
        assert abs(sr_usage(failed, seqs, kept) - sr_usage(failed, seqs)).max() == 0
        # a second failure of the failed network (its ratios partly read, partly not yet)
        again, amap2 = without_link_ids(failed, [rng.randrange(failed.num_links)])
        assert abs(sr_usage(again, seqs[::3], kept.after_failure(again, amap2))
                   - sr_usage(again, seqs[::3])).max() == 0
    assert dropped > 0  # some DAGs did cross the failed links
    with pytest.raises(ValueError, match="another topology"):
        known.ratios(failed, np.asarray([1], dtype=np.int64))

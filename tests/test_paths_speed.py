"""The fast paths of issue 29 against their oracles: the distances-only all-pairs matrix, the
threaded batch ECMP split with its early-stopping (breadth-first for hop weights) searches, the
threaded routing tables, the named API's cached arc names, and the GIL rule of the bindings (a
busy Python thread does not slow single-pair calls down to one call per switch interval)."""

from __future__ import annotations

import copy
import random
import sys
import threading
import time

import networkx as nx
import numpy as np
import pytest

import tpcstudy
import tpcstudy._core as _core
from tpcstudy import paths as P


def _graph(seed: int, n: int, extra: int, weights, *, connected: bool = True) -> nx.Graph:
    """Routers 0..n-1 (router id == label), a random tree (if connected) plus extra links;
    each link's weight drawn from ``weights``."""
    rng = random.Random(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    if connected:
        for v in range(1, n):
            g.add_edge(v, rng.randrange(v))
    for _ in range(extra):
        g.add_edge(*rng.sample(range(n), 2))
    for u, v in g.edges:
        g[u][v]["weight"] = rng.choice(weights)
    return g


def _topo(g: nx.Graph) -> tpcstudy.Topology:
    t = tpcstudy.read_topology(g, weight="file")
    assert t.names == [str(x) for x in range(g.number_of_nodes())]
    return t


#: Hop weights (breadth-first), equal non-integer weights (breadth-first, sums that round),
#: small integers (Dijkstra, counting sorts), reals whose sums tie only within rounding.
WEIGHTS = {"hop": [1], "tenth": [0.1], "int": [1, 2, 3], "real": [0.1, 0.2, 0.3, 0.7]}


def _nx_matrix(g: nx.Graph) -> np.ndarray:
    n = g.number_of_nodes()
    d = np.full((n, n), np.inf)
    for a, row in nx.all_pairs_dijkstra_path_length(g, weight="weight"):
        for b, v in row.items():
            d[a, b] = v
    return d


def _nx_ratios(g: nx.Graph, s: int, t: int, exact: bool) -> dict:
    """ECMP split by networkx distances and a plain Python pass (docs/method.md §3)."""
    dist = nx.single_source_dijkstra_path_length(g, t, weight="weight")
    if s not in dist or s == t:
        return {}
    def same(a, b):
        return a == b if exact else abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    flow, out = {s: 1.0}, {}
    for u in sorted(dist, key=lambda x: (-dist[x], x)):
        if u == t or flow.get(u, 0.0) == 0.0:
            continue
        nh = [v for v in g[u] if v in dist and dist[v] < dist[u]
              and same(dist[u], g[u][v]["weight"] + dist[v])]
        for v in nh:
            out[(u, v)] = out.get((u, v), 0.0) + flow[u] / len(nh)
            flow[v] = flow.get(v, 0.0) + flow[u] / len(nh)
    return out


# ----------------------------------------------------------------- distance_matrix
@pytest.mark.parametrize("kind", list(WEIGHTS))
@pytest.mark.parametrize("seed", range(3))
def test_distance_matrix_vs_networkx(kind, seed):
    """networkx's Dijkstra distances, inf between components, whatever the thread count, and
    the routing tables' matrix to the last bit. Exactly networkx's where the weights are whole
    numbers or all equal (0.1: each level the same sum whichever way it is reached); with
    mixed real weights within 1e-12 (networkx adds them from the source, the core from the
    destination, as the routing tables always have)."""
    g = _graph(seed, 40, 30, WEIGHTS[kind], connected=seed != 2)
    t = _topo(g)
    want = _nx_matrix(g)
    routing = np.asarray(_core.Routing(t.graph, 1).distances())
    for threads in (1, 2, 0):
        got = P.distance_matrix(copy.copy(t), threads=threads)  # no routing table: computed
        assert got.shape == (40, 40) and got.dtype == np.float64
        assert np.array_equal(got, routing)
        if kind == "real":
            assert np.array_equal(np.isinf(got), np.isinf(want))
            assert np.allclose(got, want, rtol=1e-12, atol=0.0)
        else:
            assert np.array_equal(got, want)
    assert np.array_equal(np.asarray(_core.distance_matrix(t.graph, 2)), routing)
    P.segment_costs(t, np.ones(2 * t.num_links))  # builds the routing tables
    assert np.array_equal(P.distance_matrix(t), routing)  # copied from them


def test_distance_matrix_threads_on_a_larger_graph():
    """Enough work for several threads (n (n + m) above one thread's share): same matrix."""
    t = _topo(_graph(7, 400, 300, [1]))
    one = np.asarray(_core.distance_matrix(t.graph, 1))
    assert np.array_equal(np.asarray(_core.distance_matrix(t.graph, 2)), one)
    assert np.array_equal(np.asarray(_core.distance_matrix(t.graph, 0)), one)
    assert np.array_equal(one, np.asarray(_core.Routing(t.graph, 1).distances()))


def _structured(seed: int, w: float) -> nx.Graph:
    """Routers of every kind the structural matrix tells apart (cpp/src/distances.cpp): a
    random core, chains between its routers (one back to where it began), trees hanging off
    core, chain and tree routers, a cycle of degree-2 routers alone, a path alone (a tree
    with no core), a pair, a router alone; one weight ``w`` on every link."""
    rng = random.Random(seed)
    g = nx.Graph()
    core = list(range(12))
    for v in core[1:]:
        g.add_edge(v, rng.randrange(v))
    for _ in range(8):
        g.add_edge(*rng.sample(core, 2))
    nxt = len(core)
    for _ in range(16):  # chains of 1..6 routers between two core routers (or one, a loop)
        a, b = rng.choice(core), rng.choice(core)
        prev = a
        for _ in range(rng.randint(1, 6)):
            g.add_edge(prev, nxt)
            prev, nxt = nxt, nxt + 1
        g.add_edge(prev, b if b != prev else a)
    for _ in range(12):  # trees: on any router so far, two levels at most
        root = rng.randrange(nxt)
        g.add_edge(root, nxt)
        if rng.random() < 0.5:
            g.add_edge(nxt, nxt + 1)
            nxt += 1
        nxt += 1
    size = 5  # a cycle alone
    for i in range(size):
        g.add_edge(nxt + i, nxt + (i + 1) % size)
    nxt += size
    for i in range(4):  # a path alone
        g.add_edge(nxt + i, nxt + i + 1)
    nxt += 5
    g.add_edge(nxt, nxt + 1)  # a pair
    g.add_node(nxt + 2)  # a router alone
    h = nx.Graph()
    h.add_nodes_from(range(g.number_of_nodes()))  # (router id == label, as _topo needs)
    h.add_edges_from(g.edges, weight=w)
    return h


@pytest.mark.parametrize("w", [1.0, 0.1, 3.0])
@pytest.mark.parametrize("seed", range(4))
def test_distance_matrix_by_structure(seed, w):
    """Trees, chains, loops, cycles alone, components of every size: the matrix the searches
    give (the routing tables', bit for bit: each entry the sum of its hop count's w's added one
    at a time, 0.1 included), on 1 and 2 threads; and with a link doubled (parallel links:
    the same distances)."""
    g = _structured(seed, w)
    t = _topo(g)
    assert t.num_nodes >= 64  # (below, the matrix is searched row by row: routing.cpp)
    hops = np.full((t.num_nodes,) * 2, np.inf)
    for a, row in nx.all_pairs_shortest_path_length(g):
        for b, h in row.items():
            hops[a, b] = h
    sums = np.cumsum(np.r_[0.0, np.full(t.num_nodes, w)])  # (cumsum adds one at a time)
    want = np.where(np.isinf(hops), np.inf, sums[np.where(np.isinf(hops), 0, hops).astype(int)])
    routing = np.asarray(_core.Routing(t.graph, 1).distances())
    assert np.array_equal(routing, want)
    for threads in (1, 2):
        assert np.array_equal(np.asarray(_core.distance_matrix(t.graph, threads)), want)
    if w == 1.0:
        edges = [(str(u), str(v)) for u, v in g.edges] + [(str(u), str(v)) for u, v in
                                                           list(g.edges)[:3]]
        mg = nx.MultiGraph()
        mg.add_nodes_from(str(x) for x in range(t.num_nodes))
        mg.add_edges_from(edges)
        multi = tpcstudy.read_topology(mg, weight="hop", links="multigraph")
        assert multi.names == t.names and multi.num_links == t.num_links + 3
        assert np.array_equal(np.asarray(_core.distance_matrix(multi.graph, 1)), want)


def test_distance_matrix_of_edge_cases():
    empty = tpcstudy.Topology("empty", [], np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))
    assert P.distance_matrix(empty).shape == (0, 0)
    one = tpcstudy.Topology("one", ["a"], np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))
    assert P.distance_matrix(one).tolist() == [[0.0]]


# ----------------------------------------------------------------- segment_ratios
@pytest.mark.parametrize("kind", list(WEIGHTS))
@pytest.mark.parametrize("seed", range(3))
def test_segment_ratios_vs_networkx(kind, seed):
    """Every ordered pair (so each target's search stops at its farthest source, and pairs
    s == t and unreachable ones are in the batch) against the networkx oracle within 1e-12, the
    same arrays with 1, 2 and every thread; a batch of a few pairs (an early stop well before
    the end) equals the whole batch's entries for them."""
    g = _graph(seed + 10, 24, 20, WEIGHTS[kind], connected=seed != 1)
    t = _topo(g)
    n = t.num_nodes
    src, dst = (a.ravel().astype(np.int32) for a in np.meshgrid(range(n), range(n), indexing="ij"))
    off, arcs, fr = P.segment_ratios(t, src, dst, threads=1)
    exact = kind in ("hop", "int")
    asrc, adst = t.arc_src, t.arc_dst
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
        got = {(int(asrc[a]), int(adst[a])): f
               for a, f in zip(arcs[off[i]:off[i + 1]].tolist(), fr[off[i]:off[i + 1]].tolist())}
        want = _nx_ratios(g, s, d, exact)
        assert got.keys() == want.keys(), (s, d)
        assert all(abs(got[x] - want[x]) <= 1e-12 for x in want), (s, d)
        assert list(arcs[off[i]:off[i + 1]]) == sorted(arcs[off[i]:off[i + 1]])
    for threads in (2, 0):
        o2, a2, f2 = P.segment_ratios(t, src, dst, threads=threads)
        assert np.array_equal(o2, off) and np.array_equal(a2, arcs) and np.array_equal(f2, fr)
    pick = np.array([5, 77, 300, 301, 450], dtype=np.int64) % len(src)
    o3, a3, f3 = P.segment_ratios(t, src[pick], dst[pick])
    for j, i in enumerate(pick.tolist()):
        assert a3[o3[j]:o3[j + 1]].tolist() == arcs[off[i]:off[i + 1]].tolist()
        assert f3[o3[j]:o3[j + 1]].tolist() == fr[off[i]:off[i + 1]].tolist()


def test_segment_ratios_threads_on_many_targets():
    t = _topo(_graph(3, 150, 120, [1, 2]))
    rng = np.random.default_rng(0)
    s = rng.integers(0, 150, 3000).astype(np.int32)
    d = rng.integers(0, 150, 3000).astype(np.int32)
    one = P.segment_ratios(t, s, d, threads=1)
    for threads in (2, 0, 64):
        for x, y in zip(P.segment_ratios(t, s, d, threads=threads), one):
            assert np.array_equal(x, y)


# ----------------------------------------------------------------- routing tables
@pytest.mark.parametrize("kind", ["hop", "int", "real"])
def test_routing_tables_do_not_depend_on_threads(kind):
    """The threaded Routing build (counting sorts for whole-number distances, the tree-DAGs
    without a sort) gives the same tables at 1, 2 and every thread: the segment costs, the
    cheapest DAG paths and their first arcs, and the sps paths that read order_from/dag_from."""
    g = _graph(5, 60, 50, WEIGHTS[kind])
    t = _topo(g)
    prices = np.random.default_rng(1).uniform(0.0, 1.0, 2 * t.num_links)
    ref = _core.Routing(t.graph, 1)
    want = _nx_matrix(g)
    assert np.allclose(np.asarray(ref.distances()), want, rtol=1e-12, atol=0.0)
    for threads in (2, 0):
        r = _core.Routing(t.graph, threads)
        assert np.array_equal(np.asarray(r.distances()), np.asarray(ref.distances()))
        assert np.array_equal(np.asarray(r.segment_costs(prices)),
                              np.asarray(ref.segment_costs(prices)))
        for x, y in zip(r.dag_min_costs(prices), ref.dag_min_costs(prices)):
            assert np.array_equal(np.asarray(x), np.asarray(y))
        s = np.arange(60, dtype=np.int32)
        d = ((s * 7 + 3) % 60).astype(np.int32)
        a = _core.disjoint_paths(t.graph, r, s, d, 2, 3, 1)
        b = _core.disjoint_paths(t.graph, ref, s, d, 2, 3, 1)
        for x, y in zip(a, b):
            assert np.array_equal(np.asarray(x), np.asarray(y))


# ----------------------------------------------------------------- the named API
def test_ecmp_ratios_names_are_cached_per_graph():
    g = _graph(2, 12, 10, [1])
    t = _topo(g)
    first = P.ecmp_ratios(t, "0", "7")
    assert first == {(str(u), str(v)): f for (u, v), f in _nx_ratios(g, 0, 7, True).items()}
    assert P._arc_names(t) is P._arc_names(t)
    assert P.ecmp_ratios(t, 0, 7) == first


# ----------------------------------------------------------------- the GIL rule
def _calls(topo: tpcstudy.Topology, pairs, busy: bool) -> float:
    """Seconds for the single-pair calls, beside a spinning Python thread when ``busy``."""
    stop = threading.Event()

    def spin() -> None:
        x = 0
        while not stop.is_set():
            x += 1

    th = threading.Thread(target=spin, daemon=True)
    if busy:
        th.start()
        time.sleep(0.02)
    t0 = time.perf_counter()
    for s, d in pairs:
        P.ecmp_ratios(topo, s, d)
        P.shortest_paths(topo, s, d)
        P.shortest_distances(topo, s)
        P.dag_arcs(topo, s, d)
    out = time.perf_counter() - t0
    stop.set()
    if busy:
        th.join()
    return out


def test_single_pair_calls_keep_the_gil_beside_a_busy_thread():
    """The convoy effect: a call that released the GIL would wait for the spinning thread's
    switch interval to get it back, so 4 x 200 calls would take >= 800 intervals (4 s at the
    default 5 ms). Holding it, they share the interpreter with the spinner: a few intervals."""
    t = _topo(_graph(1, 200, 160, [1]))
    rng = random.Random(0)
    pairs = [tuple(rng.sample(range(200), 2)) for _ in range(200)]
    interval = sys.getswitchinterval()
    _calls(t, pairs[:5], busy=False)
    quiet = _calls(t, pairs, busy=False)
    busy = _calls(t, pairs, busy=True)
    assert busy < max(40 * interval, 20 * quiet), (busy, quiet, interval)


@pytest.mark.parametrize("weight", [1.0, 0.1, None])
def test_distance_matrix_of_directed_graphs(weight):
    """The core graph may be directed (one-way arcs, parallel arcs, self-loops): the rows
    derived from out-neighbours' rows and the searched ones equal the routing tables' and
    networkx's DiGraph distances."""
    rng = np.random.default_rng(4)
    n, m = 60, 150
    src = rng.integers(0, n, m).astype(np.int32)
    dst = rng.integers(0, n, m).astype(np.int32)
    w = (np.full(m, weight) if weight is not None else rng.integers(1, 4, m).astype(np.float64))
    g = _core.Graph(n, src, dst, w)
    got = np.asarray(_core.distance_matrix(g, 2))
    assert np.array_equal(got, np.asarray(_core.distance_matrix(g, 1)))
    assert np.array_equal(got, np.asarray(_core.Routing(g, 1).distances()))
    h = nx.DiGraph()
    h.add_nodes_from(range(n))
    for a, b, c in zip(src.tolist(), dst.tolist(), w.tolist()):
        if a != b and (not h.has_edge(a, b) or h[a][b]["weight"] > c):
            h.add_edge(a, b, weight=c)
    assert np.array_equal(got, _nx_matrix(h))

"""The min-MLU mcf LP solved whole (models/mlu_arc.py, issue 42): hand-worked cases of the
2-core reduction (a tree link the bottleneck; the core the bottleneck; a topology that is one
tree), and on random graphs with trees hanging off a core the same optimum as the path column
generation (ARC_MAX = -1) and as the plain arc LP written out per demand, a dual certificate
checked by networkx's Dijkstra, and a routing that carries every demand and gives the loads."""

from __future__ import annotations

import pickle

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.models import mlu_arc
from tpcstudy.models.mlu import demand_arrays, min_mlu
from tpcstudy.models.mlu_result import LazyMLUResult


def _lollipop(tail: float):
    """The triangle a - b - c (capacity 1 each) with the tail c - d - e hanging off c
    (capacities ``tail`` and 2 * ``tail``)."""
    g = nx.Graph()
    for u, v, c in (("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0), ("c", "d", tail),
                    ("d", "e", 2 * tail)):
        g.add_edge(u, v, capacity=c)
    return read_topology(g, capacity="file")


DEM = [("a", "e", 1.0), ("b", "d", 0.5), ("e", "a", 0.2)]


def _arc(t, u: str, v: str) -> int:
    a, b = t.index_of(u), t.index_of(v)
    return next(i for i in range(2 * t.num_links) if t.arc_src[i] == a and t.arc_dst[i] == b)


def test_a_tree_link_is_the_bottleneck():
    """Into the tail's {d, e} go a -> e and b -> d: 1.5 on c -> d (capacity 1), whatever the
    triangle does (at most 1.5 / 2 into c): MLU 1.5, all the price on c -> d, the two demands
    crossing it pay 1 each, e -> a nothing. The LP is the triangle's alone."""
    t = _lollipop(1.0)
    r = min_mlu(t, DEM, model="mcf")
    assert isinstance(r, LazyMLUResult) and r.iterations == 1
    assert r.mlu == pytest.approx(1.5, rel=1e-12)
    cd, dc, de, ed = (_arc(t, u, v) for u, v in ("cd", "dc", "de", "ed"))
    assert r.loads[[cd, de, dc, ed]] == pytest.approx([1.5, 1.0, 0.2, 0.2], abs=1e-12)
    y = np.zeros(2 * t.num_links)
    y[cd] = 1.0
    assert r.arc_prices == pytest.approx(y, abs=1e-12)
    assert r.demand_prices == pytest.approx([1.0, 1.0, 0.0], abs=1e-12)
    # the core LP: commodities a, b, c (roots of a, b and e), a row per core router each but
    # the hub's (a small LP: a, the first of most arcs; a's own commodity: its root's), the
    # triangle's 6 arcs
    assert r.rows == 3 * 2 + 6
    c, d = t.index_of("c"), t.index_of("d")
    assert sum(f for _, f in r.paths[1]) == pytest.approx(0.5)
    assert all(p[-2:] == (c, d) for p, _ in r.paths[1])  # the core's way to c, then c -> d


def test_the_core_is_the_bottleneck():
    """With a tail of capacity 10, into c (arcs a -> c, b -> c, capacity 2 in all) go 1.5
    units: MLU 0.75 (a sends 0.75 direct and 0.25 round b; b its 0.5 direct). The duals: 0.5
    on a -> c and b -> c (the tight arcs that a's two paths cross), so a -> e and b -> d pay
    0.5 each, e -> a nothing; 1.0 * 0.5 + 0.5 * 0.5 = 0.75."""
    t = _lollipop(10.0)
    r = min_mlu(t, DEM, model="mcf")
    assert r.mlu == pytest.approx(0.75, rel=1e-12)
    y = np.zeros(2 * t.num_links)
    y[[_arc(t, "a", "c"), _arc(t, "b", "c")]] = 0.5
    assert r.arc_prices == pytest.approx(y, abs=1e-12)
    assert r.demand_prices == pytest.approx([0.5, 0.5, 0.0], abs=1e-12)
    a, b, c, d, e = (t.index_of(v) for v in "abcde")
    assert dict(r.paths[0]) == pytest.approx({(a, c, d, e): 0.75, (a, b, c, d, e): 0.25})


def test_a_tree_has_no_lp():
    """a - b - c (capacities 1, 2): every route is forced; 1 unit a -> c and 1 unit c -> b
    give a -> b 1 / 1, the rest 1 / 2: MLU 1, priced on a -> b alone."""
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1.0)
    g.add_edge("b", "c", capacity=2.0)
    t = read_topology(g, capacity="file")
    r = min_mlu(t, [("a", "c", 1.0), ("c", "b", 1.0)], model="mcf")
    assert r.mlu == pytest.approx(1.0) and r.rows == 0
    assert r.demand_prices == pytest.approx([1.0, 0.0])
    assert r.arc_prices[_arc(t, "a", "b")] == pytest.approx(1.0)
    a, b, c = (t.index_of(v) for v in "abc")
    assert r.paths == [[((a, b, c), 1.0)], [((c, b), 1.0)]]


def _hanging(seed: int):
    """A random core (a ring with chords) with random trees hung off it; integer capacities
    1..4; 25 random demands between any routers, trees included."""
    rng = np.random.default_rng(seed)
    core = int(rng.integers(4, 7))
    g = nx.cycle_graph(core)
    for _ in range(2):
        u, v = (int(x) for x in rng.choice(core, 2, replace=False))
        g.add_edge(u, v)
    n = core + int(rng.integers(4, 9))
    for v in range(core, n):
        g.add_edge(v, int(rng.integers(v)))
    for u, v in g.edges:
        g[u][v]["capacity"] = float(rng.integers(1, 5))
    t = read_topology(g, capacity="file")
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    pick = rng.choice(len(pairs), size=25, replace=False)
    return t, [(str(pairs[i][0]), str(pairs[i][1]), float(rng.integers(1, 4))) for i in pick]


def _plain(t, dem) -> float:
    """The arc LP written out: one commodity per demand, solved by scipy's HiGHS."""
    from scipy.optimize import linprog

    S, T, V = demand_arrays(t, dem)
    m2, n, D = 2 * t.num_links, t.num_nodes, len(S)
    src, dst = np.asarray(t.arc_src), np.asarray(t.arc_dst)
    A_eq = np.zeros((D * n, D * m2 + 1))
    b_eq = np.zeros(D * n)
    for d in range(D):
        A_eq[d * n + src, d * m2 + np.arange(m2)] = 1.0
        A_eq[d * n + dst, d * m2 + np.arange(m2)] = -1.0
        b_eq[d * n + S[d]], b_eq[d * n + T[d]] = 1.0, -1.0
    A_ub = np.zeros((m2, D * m2 + 1))
    for d in range(D):
        A_ub[np.arange(m2), d * m2 + np.arange(m2)] = V[d]
    A_ub[:, -1] = -np.asarray(t.arc_capacity, dtype=float)
    c = np.zeros(D * m2 + 1)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m2), A_eq=A_eq, b_eq=b_eq, bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def _certified(t, r) -> None:
    """The certificate: sum cap y = 1, z below every path's price (networkx's Dijkstra),
    sum vol z = MLU."""
    cap = np.asarray(t.arc_capacity, dtype=float)
    y, z = r.arc_prices, r.demand_prices
    assert np.all(y >= 0) and float(cap @ y) == pytest.approx(1.0, rel=1e-9)
    assert float(r.volumes @ z) == pytest.approx(r.mlu, rel=1e-7)
    g = nx.DiGraph()
    for i, (a, b) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist())):
        g.add_edge(a, b, weight=y[i] + 1e-15)
    for s, e, zd in zip(r.sources.tolist(), r.targets.tolist(), z.tolist()):
        assert zd <= nx.dijkstra_path_length(g, s, e) + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_trees_hanging_off_a_core_against_the_column_generation(seed, monkeypatch):
    t, dem = _hanging(seed)
    red = mlu_arc.Reduction(t)
    assert 0 < len(red.tree) < t.num_nodes
    r = min_mlu(t, dem, model="mcf")
    assert isinstance(r, LazyMLUResult)
    assert r.mlu == pytest.approx(_plain(t, dem), rel=1e-7)
    _certified(t, r)
    # the routing: simple paths over links, each demand's volume, the loads
    arc_of = {(a, b): i for i, (a, b) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist()))}
    load = np.zeros(2 * t.num_links)
    for s, e, vol, paths in zip(r.sources.tolist(), r.targets.tolist(), r.volumes.tolist(),
                                r.paths):
        assert sum(f for _, f in paths) == pytest.approx(vol, rel=1e-9)
        for p, f in paths:
            assert f > 0 and p[0] == s and p[-1] == e and len(set(p)) == len(p)
            for a, b in zip(p[:-1], p[1:]):
                load[arc_of[(a, b)]] += f
    np.testing.assert_allclose(load, r.loads, rtol=1e-9, atol=1e-9)
    assert r.utilisation.max() == pytest.approx(r.mlu, rel=1e-7)
    # the column generation: the same optimum
    monkeypatch.setattr(mlu_arc, "ARC_MAX", -1)
    cg = min_mlu(t, dem, model="mcf")
    assert not isinstance(cg, LazyMLUResult)
    assert cg.mlu == pytest.approx(r.mlu, rel=1e-7)


@pytest.mark.parametrize("c", [1e-12, 1e-6, 1e6, 1e12])
def test_trees_at_any_unit(c):
    t, dem = _hanging(1)
    base = min_mlu(t, dem, model="mcf").mlu
    scaled = [(s, e, v * c) for s, e, v in dem]
    assert min_mlu(t, scaled, model="mcf").mlu / c == pytest.approx(base, rel=1e-9)


def test_the_routing_is_computed_when_read_and_pickles():
    t, dem = _hanging(2)
    r = min_mlu(t, dem, model="mcf")
    assert r.make_paths is not None  # not decomposed yet
    back = pickle.loads(pickle.dumps(r))
    assert back.paths == r.paths and r.make_paths is None
    assert back.mlu == r.mlu


def test_fixed_columns_and_other_solvers_take_the_column_generation():
    t, dem = _hanging(3)
    assert not isinstance(min_mlu(t, dem, model="mcf", fixed_columns=True), LazyMLUResult)
    assert isinstance(min_mlu(t, dem, model="mcf"), LazyMLUResult)


@pytest.mark.parametrize("seed", range(4))
def test_the_left_out_row_changes_nothing(seed, monkeypatch):
    """Each commodity's conservation rows add up to zero, and one is left out: the hub's (a
    small LP) or the root's (a large one, HUB_ROWS_MAX = 0): the same optimum and size, and
    prices that certify it (the potentials are taken relative to the root's)."""
    t, dem = _hanging(seed)
    hub = min_mlu(t, dem, model="mcf")
    monkeypatch.setattr(mlu_arc, "HUB_ROWS_MAX", 0)
    root = min_mlu(t, dem, model="mcf")
    assert root.rows == hub.rows and root.columns == hub.columns
    assert root.mlu == pytest.approx(hub.mlu, rel=1e-9)
    for r in (hub, root):
        _certified(t, r)


@pytest.mark.parametrize("seed", range(3))
def test_a_dense_core_is_solved_by_the_primal_simplex(seed, monkeypatch):
    """A core of at least DENSE_CORE arcs per router (a complete graph of 6: 5 per router) is
    solved by the primal simplex, a sparser one (a ring with two chords) by the dual: both at
    the written-out LP's optimum, with prices that certify it; the dual simplex on the dense
    core gives the same MLU."""
    import networkx as nx

    from tpcstudy.lp import highs

    rng = np.random.default_rng(seed)
    g = nx.complete_graph(6)
    for u, v in g.edges:
        g[u][v]["capacity"] = float(rng.integers(1, 5))
    t = read_topology(g, capacity="file")
    pairs = [(u, v) for u in range(6) for v in range(6) if u != v]
    dem = [(str(a), str(b), float(rng.integers(1, 4))) for a, b in pairs]
    seen = []
    real = highs.solve_whole

    def spy(*a, **kw):
        seen.append(kw["options"].get("simplex_strategy"))
        return real(*a, **kw)

    monkeypatch.setattr(mlu_arc, "solve_whole", spy)
    dense = min_mlu(t, dem, model="mcf")
    sparse_t, sparse_dem = _hanging(seed)
    sparse = min_mlu(sparse_t, sparse_dem, model="mcf")
    assert seen == [4, None]  # primal, then the dual (HiGHS's default)
    assert dense.mlu == pytest.approx(_plain(t, dem), rel=1e-7)
    _certified(t, dense)
    _certified(sparse_t, sparse)
    monkeypatch.setattr(mlu_arc, "DENSE_CORE", 1e9)
    assert min_mlu(t, dem, model="mcf").mlu == pytest.approx(dense.mlu, rel=1e-9)
    assert seen[-1] is None


def test_flow_on_cycles_leaves_the_loads(repetita):
    """REPETITA's Arnes: the LP's optimal arc flows carry a cycle on two arcs (10 % of the
    largest load; it costs nothing where an arc is not tight). The routing drops it, and the
    loads are the routing's once it is read: the paths give them, their utilisation peaks at
    the MLU."""
    from tpcstudy.io import read_demands

    g = repetita / "2016TopologyZooUCL_inverseCapacity" / "Arnes.graph"
    t = read_topology(g, capacity="file", weight="file")
    r = min_mlu(t, read_demands(g.with_name("Arnes.0000.demands"), t), model="mcf")
    arc_of = {(a, b): i for i, (a, b) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist()))}
    load = np.zeros(2 * t.num_links)
    for paths in r.paths:
        for p, f in paths:
            assert len(set(p)) == len(p)
            for a, b in zip(p[:-1], p[1:]):
                load[arc_of[(a, b)]] += f
    np.testing.assert_allclose(r.loads, load, rtol=1e-9, atol=1e-9 * load.max())
    assert r.utilisation.max() == pytest.approx(r.mlu, rel=1e-9)

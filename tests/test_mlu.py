"""tpcstudy.models.mlu: the minimum maximum link utilisation of a demand matrix. Oracles: hand-worked
graphs, REPETITA's own values (its Java code run on Abilene: ECMP 1.2770134819878471; CG4SR's LP
optimum 0.8999992 at k = 2 and 4), the arc-formulation LP solved by scipy for mcf, and the
model order ecmp >= sr(2) >= sr(4) >= mcf."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.errors import UsageError
from tpcstudy.io import read_demands
from tpcstudy.models.mlu import demand_arrays, min_mlu


def _triangle():
    """s - t directly (1 hop) and s - a - t (2 hops), every link capacity 1, hop weights."""
    g = nx.Graph()
    for u, v in (("s", "t"), ("s", "a"), ("a", "t")):
        g.add_edge(u, v, capacity=1.0)
    return read_topology(g, capacity="file")


def test_hand_worked_triangle():
    t = _triangle()
    dem = [("s", "t", 1.0), ("a", "a", 5.0), ("t", "s", 0.0)]  # a self-demand, a zero volume
    # ECMP: all of s -> t on the direct link: MLU 1. With the waypoint a (k = 2) half can go
    # round: 0.5 on each path. mcf: the same 0.5.
    e = min_mlu(t, dem, model="ecmp")
    assert e.mlu == pytest.approx(1.0) and e.demands == 1 and e.lam == pytest.approx(1.0)
    assert min_mlu(t, dem, model="sr", k=1).mlu == pytest.approx(1.0)
    for model, k in (("sr", 2), ("mcf", 1)):
        r = min_mlu(t, dem, model=model, k=k)
        assert r.mlu == pytest.approx(0.5, abs=1e-9) and r.lam == pytest.approx(2.0, abs=1e-8)
        assert r.utilisation.max() == pytest.approx(0.5, abs=1e-9)
        # the loads route the matrix itself: 1 unit leaves s
        s_arcs = [i for i in range(2 * t.num_links) if t.arc_src[i] == t.index_of("s")]
        assert r.loads[s_arcs].sum() == pytest.approx(1.0, abs=1e-9)
    # doubling every volume doubles the MLU; the unit of capacity changes nothing
    assert min_mlu(t, [("s", "t", 2.0)], model="sr", k=2).mlu == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(UsageError, match="volume"):
        min_mlu(t, [("s", "t", -1.0)])
    with pytest.raises(UsageError, match="model"):
        min_mlu(t, dem, model="ospf")


def test_an_unroutable_matrix_has_infinite_mlu():
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1.0)
    g.add_edge("c", "d", capacity=1.0)
    t = read_topology(g, capacity="file")
    for model, k in (("sr", 4), ("mcf", 4), ("ecmp", 4), ("sr", 1), ("multipath", 4)):
        r = min_mlu(t, [("a", "b", 1.0), ("a", "c", 1.0)], model=model, k=k)
        assert math.isinf(r.mlu) and r.lam == 0.0, (model, k)  # ecmp once gave 1.0
    from tpcstudy.models.unsplit import sr_unsplit

    un = sr_unsplit(t, min_mlu(t, [("a", "b", 1.0), ("a", "c", 1.0)], model="sr", k=2))
    assert math.isinf(un.mlu) and math.isinf(un.bound) and un.model == "sr-unsplit"


def _random(seed: int):
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(9, 4, 0.5, seed=seed)
    for u, v in g.edges:
        g[u][v]["capacity"] = float(rng.integers(1, 5))
    t = read_topology(g, capacity="file")
    pairs = [(u, v) for u in range(9) for v in range(9) if u != v]
    pick = rng.choice(len(pairs), size=12, replace=False)
    dem = [(str(pairs[i][0]), str(pairs[i][1]), float(rng.integers(1, 4))) for i in pick]
    return g, t, dem


def _mcf_by_scipy(t, dem) -> float:
    """min U: per demand, unit flow conservation on arcs x_d(a) >= 0; sum_d v_d x_d(a) <=
    U cap_a. The arc formulation, solved by scipy's HiGHS."""
    from scipy.optimize import linprog

    S, T, V = demand_arrays(t, dem)
    m2, n, D = 2 * t.num_links, t.num_nodes, len(S)
    src, dst = np.asarray(t.arc_src), np.asarray(t.arc_dst)
    cap = np.asarray(t.arc_capacity, dtype=float)
    nv = D * m2 + 1  # x_d(a) ..., U
    A_eq, b_eq = [], []
    for d in range(D):
        for v in range(n):
            row = np.zeros(nv)
            row[d * m2 + np.flatnonzero(src == v)] += 1.0
            row[d * m2 + np.flatnonzero(dst == v)] -= 1.0
            A_eq.append(row)
            b_eq.append(1.0 if v == S[d] else -1.0 if v == T[d] else 0.0)
    A_ub = np.zeros((m2, nv))
    for d in range(D):
        A_ub[np.arange(m2), d * m2 + np.arange(m2)] = V[d]
    A_ub[:, -1] = -cap
    c = np.zeros(nv)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m2), A_eq=np.asarray(A_eq), b_eq=b_eq,
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcf_equals_the_arc_formulation_and_the_models_are_ordered(seed):
    g, t, dem = _random(seed)
    mcf = min_mlu(t, dem, model="mcf")
    assert mcf.mlu == pytest.approx(_mcf_by_scipy(t, dem), rel=1e-7)
    e = min_mlu(t, dem, model="ecmp").mlu
    s2, s4 = (min_mlu(t, dem, model="sr", k=k).mlu for k in (2, 4))
    assert e >= s2 - 1e-9 and s2 >= s4 - 1e-9 and s4 >= mcf.mlu - 1e-9
    # hop weights and k >= the router count: every link is its own shortest path, so sr
    # reaches any routing (docs/method.md §4)
    assert min_mlu(t, dem, model="sr", k=10).mlu == pytest.approx(mcf.mlu, rel=1e-7)


def test_repetita_abilene_as_repetita_and_cg4sr_compute_it(repetita):
    d = repetita / "2016TopologyZooUCL_inverseCapacity"
    t = read_topology(d / "Abilene.graph", capacity="file", weight="file")
    dem = read_demands(d / "Abilene.0000.demands", t)
    assert min_mlu(t, dem, model="ecmp").mlu == pytest.approx(1.2770134819878471, abs=1e-12)
    for k in (2, 4):  # CG4SR's LP optimum, bracketed to 1e-7 by its bisection
        assert min_mlu(t, dem, model="sr", k=k).mlu == pytest.approx(0.8999992, abs=1e-7)
    assert min_mlu(t, dem, model="mcf").mlu <= 0.8999992 + 1e-7


# ------------------------------------------------------------ the key-path LP and its routing
def _weighted(seed: int, n: int = 8, extra: int = 6, max_weight: int = 2, demands: int = 14):
    """A connected random graph (router id == label), integer weights 1..max_weight (ECMP ties
    on purpose), integer capacities 1..4, and ``demands`` random demands of volume 1..3."""
    rng = np.random.default_rng(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for v in range(1, n):
        g.add_edge(v, int(rng.integers(v)))
    while g.number_of_edges() < n - 1 + extra:
        u, v = (int(a) for a in rng.choice(n, 2, replace=False))
        g.add_edge(u, v)
    for u, v in g.edges:
        g[u][v]["capacity"] = float(rng.integers(1, 5))
        g[u][v]["weight"] = float(rng.integers(1, max_weight + 1))
    t = read_topology(g, capacity="file", weight="file")
    assert t.names == [str(v) for v in range(n)]
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    pick = rng.choice(len(pairs), size=demands, replace=False)
    return t, [(pairs[i][0], pairs[i][1], float(rng.integers(1, 4))) for i in pick]


def _arcs(t):
    return list(zip(np.asarray(t.arc_src).tolist(), np.asarray(t.arc_dst).tolist(),
                    np.asarray(t.arc_weight, dtype=float).tolist()))


def _ecmp_ratio(t, u: int, v: int) -> np.ndarray:
    """One unit u -> v split evenly at every router among its next hops towards v (the ECMP of
    docs/method.md §3), by networkx distances: independent of the core."""
    arcs = _arcs(t)
    rev = nx.DiGraph()
    rev.add_nodes_from(range(t.num_nodes))
    for a, b, w in arcs:
        rev.add_edge(b, a, weight=w)
    dist = nx.single_source_dijkstra_path_length(rev, v)
    r = np.zeros(len(arcs))
    inflow = {u: 1.0}
    for x in sorted(dist, key=lambda x: -dist[x]):
        f = inflow.get(x, 0.0)
        if x == v or f == 0.0:
            continue
        nh = [i for i, (a, b, w) in enumerate(arcs) if a == x and b in dist
              and dist[b] + w == dist[x]]
        for i in nh:
            r[i] += f / len(nh)
            inflow[arcs[i][1]] = inflow.get(arcs[i][1], 0.0) + f / len(nh)
    return r


def _sr2_by_scipy(t, dem) -> float:
    """min U over every sr-path of at most 2 segments, enumerated (the direct segment and
    every single waypoint), each demand's flows summing to its volume: the plain arc-path LP,
    solved by scipy's HiGHS."""
    from scipy.optimize import linprog

    cap = np.asarray(t.arc_capacity, dtype=float)
    ratio = {}
    cols, owner = [], []
    for d, (s, e, _) in enumerate(dem):
        for w in [None] + [w for w in range(t.num_nodes) if w not in (s, e)]:
            segs = [(s, e)] if w is None else [(s, w), (w, e)]
            for seg in segs:
                if seg not in ratio:
                    ratio[seg] = _ecmp_ratio(t, *seg)
            cols.append(sum(ratio[seg] for seg in segs))
            owner.append(d)
    A = np.asarray(cols).T
    nv = A.shape[1] + 1
    A_ub = np.hstack([A, -cap[:, None]])
    A_eq = np.zeros((len(dem), nv))
    A_eq[owner, np.arange(len(owner))] = 1.0
    c = np.zeros(nv)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(cap)), A_eq=A_eq,
                  b_eq=[v for _, _, v in dem], bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _multipath_by_scipy(t, dem) -> float:
    """min U over flows confined to each demand's shortest-path DAG (networkx distances): the
    arc formulation of multipath, solved by scipy's HiGHS."""
    from scipy.optimize import linprog

    arcs = _arcs(t)
    g = nx.DiGraph()
    for a, b, w in arcs:
        g.add_edge(a, b, weight=w)
    dist = dict(nx.all_pairs_dijkstra_path_length(g))
    cap = np.asarray(t.arc_capacity, dtype=float)
    var = [(d, i) for d, (s, e, _) in enumerate(dem) for i, (a, b, w) in enumerate(arcs)
           if dist[s][a] + w + dist[b][e] == dist[s][e]]
    nv = len(var) + 1
    A_ub = np.zeros((len(arcs), nv))
    A_eq, b_eq = [], []
    for j, (d, i) in enumerate(var):
        A_ub[i, j] = dem[d][2]
    A_ub[:, -1] = -cap
    for d, (s, e, _) in enumerate(dem):
        for x in range(t.num_nodes):
            row = np.zeros(nv)
            for j, (dd, i) in enumerate(var):
                if dd == d:
                    row[j] += (arcs[i][0] == x) - (arcs[i][1] == x)
            A_eq.append(row)
            b_eq.append(1.0 if x == s else -1.0 if x == e else 0.0)
    c = np.zeros(nv)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(arcs)), A_eq=np.asarray(A_eq), b_eq=b_eq,
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", range(6))
def test_sr2_equals_the_plain_lp_over_every_sr_path(seed):
    t, dem = _weighted(seed)
    r = min_mlu(t, dem, model="sr", k=2)
    assert r.mlu == pytest.approx(_sr2_by_scipy(t, dem), rel=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_multipath_equals_the_dag_flow_lp_and_sits_between_ecmp_and_mcf(seed):
    t, dem = _weighted(seed, max_weight=1)  # hop weights: many equal-cost paths
    mp = min_mlu(t, dem, model="multipath")
    assert mp.mlu == pytest.approx(_multipath_by_scipy(t, dem), rel=1e-7)
    e, mcf = min_mlu(t, dem, model="ecmp").mlu, min_mlu(t, dem, model="mcf").mlu
    assert e >= mp.mlu - 1e-9 and mp.mlu >= mcf - 1e-9


def test_multipath_hand_worked_and_not_ordered_with_sr():
    """u - v (weight 2, capacity 3) and u - x - v (weights 1, capacities 1): both routes are
    shortest. 2 units u -> v: ECMP splits 1 / 1 (MLU 1 on u - x); multipath and mcf send 1.5
    direct and 0.5 round (MLU 0.5); no sr-path helps (a waypoint x sends all round): 1 at any
    k. On the triangle (one shortest path s - t) multipath is ECMP (1) and sr(2) is 0.5: the
    two models are not ordered."""
    g = nx.Graph()
    g.add_edge("u", "v", capacity=3.0, weight=2.0)
    g.add_edge("u", "x", capacity=1.0, weight=1.0)
    g.add_edge("x", "v", capacity=1.0, weight=1.0)
    t = read_topology(g, capacity="file", weight="file")
    dem = [("u", "v", 2.0)]
    assert min_mlu(t, dem, model="ecmp").mlu == pytest.approx(1.0)
    for k in (2, 4):
        assert min_mlu(t, dem, model="sr", k=k).mlu == pytest.approx(1.0, abs=1e-9)
    mp = min_mlu(t, dem, model="multipath")
    assert mp.mlu == pytest.approx(0.5, abs=1e-9)
    assert min_mlu(t, dem, model="mcf").mlu == pytest.approx(0.5, abs=1e-9)
    u, v, x = (t.index_of(a) for a in "uvx")
    assert dict(mp.paths[0]) == pytest.approx({(u, v): 1.5, (u, x, v): 0.5}, abs=1e-9)
    tri = _triangle()
    one = [("s", "t", 1.0)]
    assert min_mlu(tri, one, model="multipath").mlu == pytest.approx(1.0, abs=1e-9)
    assert min_mlu(tri, one, model="sr", k=2).mlu == pytest.approx(0.5, abs=1e-9)


def _check_routing(t, r, model: str, k: int) -> None:
    """Flows sum to each demand's volume; the paths are the model's; they give the loads."""
    arc_of = {(a, b): i for i, (a, b, _) in enumerate(_arcs(t))}
    g = nx.DiGraph()
    for a, b, w in _arcs(t):
        g.add_edge(a, b, weight=w)
    dist = dict(nx.all_pairs_dijkstra_path_length(g))
    load = np.zeros(2 * t.num_links)
    assert len(r.paths) == len(r.sources) == len(r.targets) == len(r.volumes) == r.demands
    for s, e, vol, paths in zip(r.sources.tolist(), r.targets.tolist(), r.volumes.tolist(),
                                r.paths):
        assert sum(f for _, f in paths) == pytest.approx(vol, rel=1e-9)
        for p, f in paths:
            assert f > 0 and p[0] == s and p[-1] == e
            if model in ("sr", "ecmp"):
                assert len(p) - 1 <= (k if model == "sr" else 1)
                load += f * sum(_ecmp_ratio(t, a, b) for a, b in zip(p[:-1], p[1:]))
            else:
                assert len(set(p)) == len(p)  # a simple path
                for a, b in zip(p[:-1], p[1:]):
                    load[arc_of[(a, b)]] += f
                if model == "multipath":
                    w = sum(_arcs(t)[arc_of[(a, b)]][2] for a, b in zip(p[:-1], p[1:]))
                    assert w == dist[s][e]
    np.testing.assert_allclose(load, r.loads, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r.utilisation, r.loads / np.asarray(t.arc_capacity))
    assert r.utilisation.max() == pytest.approx(r.mlu, rel=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_the_routing_carries_each_demand_and_gives_the_loads(seed):
    t, dem = _weighted(seed)
    S, T, V = demand_arrays(t, dem)
    for model, k in (("ecmp", 1), ("sr", 2), ("sr", 3), ("multipath", 1), ("mcf", 1)):
        r = min_mlu(t, dem, model=model, k=k)
        np.testing.assert_array_equal(r.sources, S)
        np.testing.assert_array_equal(r.targets, T)
        np.testing.assert_array_equal(r.volumes, V)
        _check_routing(t, r, model, k)


def test_the_routing_of_abilene(repetita):
    d = repetita / "2016TopologyZooUCL_inverseCapacity"
    t = read_topology(d / "Abilene.graph", capacity="file", weight="file")
    dem = read_demands(d / "Abilene.0000.demands", t)
    for model, k in (("sr", 2), ("multipath", 1), ("mcf", 1)):
        _check_routing(t, min_mlu(t, dem, model=model, k=k), model, k)


@pytest.mark.parametrize("seed", range(3))
def test_the_duals_certify_the_optimum(seed):
    """The final LP's prices are a dual solution of the plain LP over the whole column family:
    sum_a cap_a y_a = 1, every demand's z_d at most the price of each of its sr-paths (all of
    them enumerated) or simple paths (networkx's Dijkstra), and sum_d vol_d z_d = the MLU."""
    t, dem = _weighted(seed)
    cap = np.asarray(t.arc_capacity, dtype=float)
    for model in ("sr", "mcf"):
        r = min_mlu(t, dem, model=model, k=2)
        y, z = r.arc_prices, r.demand_prices
        assert np.all(y >= 0) and float(cap @ y) == pytest.approx(1.0, rel=1e-9)
        assert float(r.volumes @ z) == pytest.approx(r.mlu, rel=1e-7)
        g = nx.DiGraph()
        for i, (a, b, _) in enumerate(_arcs(t)):
            g.add_edge(a, b, weight=y[i] + 1e-15)
        for s, e, zd in zip(r.sources.tolist(), r.targets.tolist(), z.tolist()):
            if model == "sr":
                ways = [_ecmp_ratio(t, s, e)] + [_ecmp_ratio(t, s, w) + _ecmp_ratio(t, w, e)
                                                 for w in range(t.num_nodes) if w not in (s, e)]
                best = min(float(rr @ y) for rr in ways)
            else:
                best = nx.dijkstra_path_length(g, s, e)
            assert zd <= best + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_partial_pricing_changes_nothing(seed, monkeypatch):
    """At most ENTER_MAX columns enter per round (the most attractive): the same optimum,
    in more rounds."""
    from tpcstudy.models import mlu

    t, dem = _weighted(seed, demands=20)
    full = {m: min_mlu(t, dem, model=m, k=3) for m in ("sr", "multipath", "mcf")}
    monkeypatch.setattr(mlu, "ENTER_MAX", 1)
    one = {m: min_mlu(t, dem, model=m, k=3) for m in full}
    for m, r in full.items():
        assert one[m].mlu == pytest.approx(r.mlu, rel=1e-9)
    assert sum(r.iterations for r in one.values()) > sum(r.iterations for r in full.values())


def test_an_arc_of_infinite_capacity_has_no_row():
    """The triangle with s - a - t of infinite capacity: sr(2) and mcf send everything round
    (MLU 0); ECMP keeps it on s - t (MLU 1)."""
    t = _triangle()
    cap = np.asarray(t.arc_capacity, dtype=float).copy()
    s, a, e = (t.index_of(v) for v in "sat")
    cap[[i for i in range(2 * t.num_links) if a in (t.arc_src[i], t.arc_dst[i])]] = math.inf
    t.arc_capacity = cap
    dem = [("s", "t", 1.0)]
    assert min_mlu(t, dem, model="ecmp").mlu == pytest.approx(1.0)
    for model in ("sr", "mcf"):
        r = min_mlu(t, dem, model=model, k=2)
        assert r.mlu == pytest.approx(0.0, abs=1e-12) and math.isinf(r.lam)
        assert r.paths[0] == [((s, a, e), pytest.approx(1.0))]
    cap[0] = 0.0
    with pytest.raises(UsageError, match="capacity"):
        min_mlu(t, dem, model="mcf")

"""tpcstudy.mlu: the minimum maximum link utilisation of a demand matrix. Oracles: hand-worked
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
from tpcstudy.mlu import demand_arrays, min_mlu


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
        min_mlu(t, dem, model="multipath")


def test_an_unroutable_matrix_has_infinite_mlu():
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1.0)
    g.add_edge("c", "d", capacity=1.0)
    t = read_topology(g, capacity="file")
    for model in ("sr", "mcf"):
        r = min_mlu(t, [("a", "b", 1.0), ("a", "c", 1.0)], model=model)
        assert math.isinf(r.mlu) and r.lam == 0.0


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

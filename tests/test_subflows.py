"""Subflow paths under per-hop ECMP hashing: next hops, draws, the exact law, and the mptcp LP."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.models.maxflow import max_flow
from tpcstudy.models.subflows import draw_subflows, next_hops, path_distribution
from tpcstudy.paths import dag_arcs


def grid(w=3, h=3, seed=None):
    g = nx.grid_2d_graph(w, h)
    g = nx.relabel_nodes(g, {n: f"{n[0]}.{n[1]}" for n in g})
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g.edges[u, v]["capacity"] = 1.0 if seed is None else float(rng.integers(1, 4))
    return read_topology(g, capacity="file" if seed is not None else "uniform")


def random_topo(seed, n=12, p=0.3, real=False):
    rng = np.random.default_rng(seed)
    g = nx.gnp_random_graph(n, p, seed=int(seed))
    g.add_edges_from(zip(range(n - 1), range(1, n)))
    for u, v in g.edges:
        g.edges[u, v]["weight"] = float(rng.random() * 3 + 0.5) if real else int(rng.integers(1, 4))
        g.edges[u, v]["capacity"] = float(rng.integers(1, 5))
    return read_topology(g, capacity="file", weight="file")


@pytest.mark.parametrize("seed,real", [(0, False), (1, False), (2, True), (3, True)])
def test_next_hops_are_the_dag_of_the_core(seed, real):
    t = random_topo(seed, real=real)
    nh = next_hops(t)
    src = t.arc_src
    for s in range(t.num_nodes):
        for d in range(t.num_nodes):
            dag = set(dag_arcs(t, s, d).tolist())
            # the DAG of (s, d) is every next hop of every router on it; the source's are exact
            assert set(nh.of(s, d).tolist()) == {a for a in dag if src[a] == s}


def test_path_distribution_on_a_grid_by_hand():
    # corner to corner of a 3 x 3 grid: 6 shortest paths; from 0.0 two next hops, ...
    t = grid()
    s, d = t.index_of("0.0"), t.index_of("2.2")
    dist = path_distribution(t, s, d)
    assert len(dist) == 6
    assert sum(dist.values()) == pytest.approx(1.0)
    # the two "L" paths along the border take the 1/2 branch, then a unique next hop twice
    names = t.names
    probs = {tuple(names[t.arc_dst[a]] for a in p): q for p, q in dist.items()}
    assert probs[("1.0", "2.0", "2.1", "2.2")] == pytest.approx(0.25)
    assert probs[("0.1", "0.2", "1.2", "2.2")] == pytest.approx(0.25)
    assert probs[("1.0", "1.1", "2.1", "2.2")] == pytest.approx(0.125)


def test_draws_are_valid_nested_and_deterministic():
    t = random_topo(5, n=16, p=0.25)
    rng = np.random.default_rng(0)
    S = rng.integers(0, t.num_nodes, 40)
    T = rng.integers(0, t.num_nodes, 40)
    d8 = draw_subflows(t, S, T, 8, seed=3)
    again = draw_subflows(t, S, T, 8, seed=3)
    assert np.array_equal(d8.arcs, again.arcs) and np.array_equal(d8.hits, again.hits)
    d2 = draw_subflows(t, S, T, 2, seed=3)
    for i, (s, d) in enumerate(zip(S.tolist(), T.tolist())):
        law = path_distribution(t, s, d)
        got8 = [tuple(p.tolist()) for p in d8.paths(i)]
        got2 = [tuple(p.tolist()) for p in d2.paths(i)]
        assert set(got2) <= set(got8)  # nested in K
        assert len(set(got8)) == len(got8)  # distinct
        assert all(p in law for p in got8)  # each a real shortest path, in travel order
        if s == d:
            assert got8 == []
        else:
            assert d8.hits[d8.pair_offsets[i]:d8.pair_offsets[i + 1]].sum() == 8


def test_draw_frequencies_follow_the_law():
    t = grid()
    s, d = t.index_of("0.0"), t.index_of("2.2")
    law = path_distribution(t, s, d)
    n = 20000
    dr = draw_subflows(t, np.array([s]), np.array([d]), n, seed=11)
    freq = {tuple(p.tolist()): h / n for p, h in zip(dr.paths(0), dr.hits.tolist())}
    for p, q in law.items():
        assert abs(freq.get(p, 0.0) - q) < 4 * math.sqrt(q * (1 - q) / n)


def subflow_max_flow(t, S, T, k, seed):
    """The mptcp model's value and draws through the public API."""
    res = max_flow(t, np.stack([S, T], 1).astype(np.int32), model="mptcp", subflows=k, seed=seed)
    return res.value, draw_subflows(t, S, T, k, seed), res


def _lp_value(t, pair_paths):
    """max sum f subject to arc capacities, over explicit arc paths (an independent small LP)."""
    from scipy.optimize import linprog

    cols = [p for ps in pair_paths for p in ps]
    if not cols:
        return 0.0
    a = np.zeros((2 * t.num_links, len(cols)))
    for j, p in enumerate(cols):
        for arc in p:
            a[arc, j] += 1
    res = linprog(-np.ones(len(cols)), A_ub=a, b_ub=t.arc_capacity, bounds=(0, None),
                  method="highs")
    return -res.fun


def test_mptcp_value_between_one_subflow_and_multipath_and_monotone():
    for seed in range(4):
        t = random_topo(10 + seed, n=14, p=0.3)
        rng = np.random.default_rng(seed)
        S = rng.integers(0, t.num_nodes, 6)
        T = (S + 1 + rng.integers(0, t.num_nodes - 1, 6)) % t.num_nodes
        multi = max_flow(t, np.stack([S, T], 1), model="multipath").value
        vals = [subflow_max_flow(t, S, T, k, seed=seed)[0] for k in (1, 2, 4, 8, 64)]
        assert all(a <= b + 1e-9 for a, b in zip(vals, vals[1:]))  # nested draws
        assert vals[-1] <= multi + 1e-7
        # the LP agrees with an independent LP over the same explicit paths
        _, dr, _ = subflow_max_flow(t, S, T, 4, seed=seed)
        assert vals[2] == pytest.approx(_lp_value(t, [[p.tolist() for p in dr.paths(i)]
                                                      for i in range(len(S))]), abs=1e-7)


def test_mptcp_reaches_multipath_with_many_subflows():
    t = grid(4, 4, seed=7)
    pairs = np.array([[0, 15], [3, 12], [5, 10]])
    multi = max_flow(t, pairs, model="multipath").value
    v = subflow_max_flow(t, pairs[:, 0], pairs[:, 1], 2000, seed=0)[0]
    assert v == pytest.approx(multi, abs=1e-7)


def test_monte_carlo_mean_equals_exact_expectation():
    """Exact E[value] by enumerating every hash outcome of K subflows, against the MC mean."""
    t = grid(3, 3, seed=2)
    s, d = t.index_of("0.0"), t.index_of("2.2")
    s2, d2 = t.index_of("2.0"), t.index_of("0.2")
    laws = [path_distribution(t, s, d), path_distribution(t, s2, d2)]
    k = 2
    exact = 0.0
    for combo in itertools.product(*[list(itertools.product(law.items(), repeat=k)) for law in laws]):
        prob = 1.0
        sets = []
        for draws in combo:
            prob *= math.prod(q for _, q in draws)
            sets.append(sorted({p for p, _ in draws}))
        exact += prob * _lp_value(t, sets)
    runs = 400
    vals = np.array([subflow_max_flow(t, np.array([s, s2]), np.array([d, d2]), k, seed=r)[0]
                     for r in range(runs)])
    assert abs(vals.mean() - exact) < 4 * vals.std(ddof=1) / math.sqrt(runs) + 1e-9

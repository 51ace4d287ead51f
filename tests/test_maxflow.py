"""tpcstudy.models.maxflow: the models against hand-worked values, the facts of docs/method.md §4
(ecmp <= sr <= mcf, sr(k >= n) == mcf with hop weights), column generation against the LPs
over enumerated paths, and the solver backends against each other."""

from __future__ import annotations

import dataclasses
import itertools

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.errors import UsageError
from tpcstudy.models.maxflow import max_flow
from tpcstudy.paths import segment_ratios, shortest_paths

TOL = 1e-6


def six_paths():
    """Routers A and B joined by six link-disjoint two-hop paths A - m_i - B.

    IGP weights A-m_i = 10 and m_i-B = i make A-m1-B (cost 11) the unique shortest A->B path,
    so plain routing and multipath put everything on one path: 1 unit. Each segment A->m_i and
    m_i->B is the direct link (10 < 10 + 1 + i, and i < 10 + 10 + 1), so with one waypoint (k = 2)
    each path is its own sr-path: 6 units, which is also the max flow (A has six unit links).
    """
    g = nx.Graph()
    for i in range(1, 7):
        g.add_edge("A", f"m{i}", weight=10, capacity=1.0)
        g.add_edge(f"m{i}", "B", weight=i, capacity=1.0)
    return read_topology(g, capacity="file", weight="file")


def test_six_disjoint_paths_by_hand():
    t = six_paths()
    pairs = [("A", "B")]
    assert max_flow(t, pairs, model="ecmp").value == pytest.approx(1.0)
    assert max_flow(t, pairs, model="multipath").value == pytest.approx(1.0)
    sr1 = max_flow(t, pairs, model="sr", k=1)
    assert sr1.value == pytest.approx(1.0)
    sr2 = max_flow(t, pairs, model="sr", k=2)
    assert sr2.value == pytest.approx(6.0)
    assert sr2.columns == 6 and sr2.gap >= -1e-9
    used = sorted(p for p, f in zip(sr2.paths, sr2.flows) if f > 1e-9)
    assert used == [("A", "B")] + [("A", f"m{i}", "B") for i in range(2, 7)]
    assert max_flow(t, pairs, model="mcf").value == pytest.approx(6.0)
    # with a demand bound the flow stops there
    assert max_flow(t, pairs, model="sr", k=2, demands=[2.5]).value == pytest.approx(2.5)
    assert max_flow(t, pairs, model="mcf", demands=[4.0]).value == pytest.approx(4.0)


def test_ecmp_diamond_by_hand():
    """s - a - t and s - b - t, equal weights; capacities s-a 1, a-t 1, s-b 1, b-t 0.25.

    ECMP sends half each way: the b branch saturates at f/2 = 0.25, so ecmp = 0.5. Multipath may
    weight the two shortest paths freely: 1 + 0.25 = 1.25, equal to the max flow.
    """
    g = nx.Graph()
    g.add_edge("s", "a", capacity=1.0)
    g.add_edge("a", "t", capacity=1.0)
    g.add_edge("s", "b", capacity=1.0)
    g.add_edge("b", "t", capacity=0.25)
    t = read_topology(g, capacity="file")
    assert max_flow(t, [("s", "t")], model="ecmp").value == pytest.approx(0.5)
    mp = max_flow(t, [("s", "t")], model="multipath")
    assert mp.value == pytest.approx(1.25)
    assert sorted(zip(mp.paths, np.round(mp.flows, 9))) == [(("s", "a", "t"), 1.0), (("s", "b", "t"), 0.25)]
    for model in ("ecmp", "multipath", "sr", "mcf"):  # never a -0.0 or a -1e-13 to print
        res = max_flow(t, [("s", "t"), ("t", "s"), ("a", "b")], model=model)
        assert not np.any(np.signbit(res.flows)) and not np.any(np.signbit(res.pair_flow))
    # waypoint a: the path s-a-t alone (1.0) plus the direct ECMP path... sr reaches 1.25
    assert max_flow(t, [("s", "t")], model="sr", k=2).value == pytest.approx(1.25)
    assert max_flow(t, [("s", "t")], model="mcf").value == pytest.approx(1.25)


def _random_topology(seed: int, n: int = 9, extra: int = 6, weights: bool = True):
    rng = np.random.default_rng(seed)
    g = nx.cycle_graph(n)
    while g.number_of_edges() < n + extra:
        u, v = rng.choice(n, 2, replace=False)
        g.add_edge(int(u), int(v))
    for u, v in g.edges:
        g[u][v]["capacity"] = float(rng.choice([1, 2, 5, 10]))
        g[u][v]["weight"] = int(rng.integers(1, 4)) if weights else 1
    return read_topology(g, capacity="file", weight="file")


@pytest.mark.parametrize("seed", range(8))
def test_model_order_facts(seed):
    t = _random_topology(seed)
    rng = np.random.default_rng(seed)
    allp = [(s, u) for s in range(t.num_nodes) for u in range(t.num_nodes) if s != u]
    pairs = [allp[i] for i in rng.choice(len(allp), 5, replace=False)]
    v = {m: max_flow(t, pairs, model=m).value for m in ("ecmp", "multipath", "mcf")}
    sr = [max_flow(t, pairs, model="sr", k=k).value for k in (1, 2, 3, 4)]
    assert sr[0] == pytest.approx(v["ecmp"], rel=TOL)
    for a, b in zip(sr, sr[1:]):
        assert a <= b * (1 + TOL)
    assert v["ecmp"] <= sr[0] * (1 + TOL) and sr[-1] <= v["mcf"] * (1 + TOL)
    assert v["ecmp"] <= v["multipath"] * (1 + TOL) <= v["mcf"] * (1 + TOL) ** 2


@pytest.mark.parametrize("seed", range(5))
def test_sr_with_many_segments_equals_mcf_under_hop_weights(seed):
    t = _random_topology(seed + 100, n=8, weights=False)
    rng = np.random.default_rng(seed)
    allp = [(s, u) for s in range(t.num_nodes) for u in range(t.num_nodes) if s != u]
    pairs = [allp[i] for i in rng.choice(len(allp), 6, replace=False)]
    sr = max_flow(t, pairs, model="sr", k=t.num_nodes)
    assert sr.value == pytest.approx(max_flow(t, pairs, model="mcf").value, rel=TOL)


def _enumerated_sr_lp(t, pairs, k):
    """The LP over every sr-path with at most k segments, enumerated explicitly (scipy)."""
    from scipy.optimize import linprog

    n, m2 = t.num_nodes, 2 * t.num_links
    segs = [(u, v) for u in range(n) for v in range(n) if u != v]
    off, arcs, fr = segment_ratios(t, np.array([u for u, _ in segs], dtype=np.int32),
                                   np.array([v for _, v in segs], dtype=np.int32))
    r = {}
    for i, sv in enumerate(segs):
        vec = np.zeros(m2)
        np.add.at(vec, arcs[off[i]:off[i + 1]], fr[off[i]:off[i + 1]])
        r[sv] = vec
    cols = []
    for s, u in pairs:
        others = [w for w in range(n) if w not in (s,)]
        for j in range(k):
            for wps in itertools.product(range(n), repeat=j):
                seq = (s,) + wps + (u,)
                if any(a == b for a, b in zip(seq, seq[1:])):
                    continue
                cols.append(sum(r[(a, b)] for a, b in zip(seq, seq[1:])))
        del others
    A = np.array(cols).T
    res = linprog(-np.ones(A.shape[1]), A_ub=A, b_ub=t.arc_capacity, bounds=(0, None), method="highs")
    return -res.fun


@pytest.mark.parametrize("seed,k", [(1, 2), (2, 3), (3, 2), (4, 3)])
def test_column_generation_equals_enumerated_lp(seed, k):
    t = _random_topology(seed + 200, n=6, extra=4)
    pairs = [(0, 3), (1, 4), (5, 2)]
    cg = max_flow(t, pairs, model="sr", k=k)
    assert cg.value == pytest.approx(_enumerated_sr_lp(t, pairs, k), rel=1e-7)
    assert cg.columns < 40  # generated, not enumerated


@pytest.mark.parametrize("seed", range(6))
def test_multipath_column_generation_equals_dag_flow_lp(seed):
    """The two multipath formulations (columns = single shortest paths vs DAG arc flows) agree."""
    t = _random_topology(seed + 300, n=10, extra=8)
    rng = np.random.default_rng(seed)
    allp = [(s, u) for s in range(t.num_nodes) for u in range(t.num_nodes) if s != u]
    pairs = [allp[i] for i in rng.choice(len(allp), 8, replace=False)]
    cg = max_flow(t, pairs, model="multipath")
    lp = max_flow(t, pairs, model="multipath", multipath="dag")
    assert cg.value == pytest.approx(lp.value, rel=1e-7)
    assert cg.gap >= -1e-9
    shortest = {}
    for (s, u) in pairs:
        shortest[(t.names[s], t.names[u])] = {tuple(p) for p in shortest_paths(t, s, u)}
    for p in cg.paths:  # every column is one of the pair's shortest paths
        assert any(p in v for v in shortest.values())


@pytest.mark.parametrize("solver", ["glop", "pdlp", "pulp"])
def test_other_solvers_give_the_same_values(solver):
    """--solver backends agree with HiGHS to 1e-6 relative on every model."""
    t = _random_topology(42, n=8, extra=5)
    pairs = [(0, 4), (1, 5), (6, 2), (3, 7)]
    for model, k in (("ecmp", 1), ("multipath", 4), ("sr", 3), ("mcf", 4)):
        ref = max_flow(t, pairs, model=model, k=k)
        other = max_flow(t, pairs, model=model, k=k, solver=solver)
        assert other.ok, other.message
        assert other.value == pytest.approx(ref.value, rel=1e-6), (model, solver)


def test_write_lp(tmp_path):
    t = six_paths()
    f = tmp_path / "m.lp"
    res = max_flow(t, [("A", "B")], model="sr", k=2, write_lp=str(f))
    text = f.read_text()
    assert res.value == pytest.approx(6.0) and "max" in text.lower() and text.count("\n") > 10


def test_unreachable_pairs_carry_nothing():
    """Two triangles with no link between them: pairs across carry 0, the LP stays bounded."""
    g = nx.Graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])
    t = read_topology(g)
    pairs = [(0, 1), (0, 4)]
    # 0 -> 1: the direct link (the unique shortest path), plus 0-2-1 with a waypoint or any routing
    for model, want in (("ecmp", 1.0), ("multipath", 1.0), ("sr", 2.0), ("mcf", 2.0)):
        r = max_flow(t, pairs, model=model, k=3)
        assert r.ok and r.value == pytest.approx(want), model
        assert r.pair_flow[1] == 0.0


def test_mptcp_by_hand():
    """Six paths: the IGP's single shortest path takes every subflow: 1 unit for any K.
    Diamond (capacities a-branch 1, b-branch 0.25): one subflow gets 1 or 0.25, depending on
    its draw; many subflows get both paths, 1.25 (= multipath)."""
    t = six_paths()
    for k in (1, 4, 32):
        r = max_flow(t, [("A", "B")], model="mptcp", subflows=k, seed=0)
        assert r.value == pytest.approx(1.0) and r.subflows == k and r.columns == 1
    g = nx.Graph()
    g.add_edge("s", "a", capacity=1.0)
    g.add_edge("a", "t", capacity=1.0)
    g.add_edge("s", "b", capacity=1.0)
    g.add_edge("b", "t", capacity=0.25)
    d = read_topology(g, capacity="file")
    ones = {round(max_flow(d, [("s", "t")], model="mptcp", subflows=1, seed=s).value, 9)
            for s in range(20)}
    assert ones == {1.0, 0.25}
    assert max_flow(d, [("s", "t")], model="mptcp", subflows=64, seed=0).value == pytest.approx(1.25)


def test_sr_mptcp_by_hand_and_equal_to_sr_once_k_covers_the_paths_used():
    """Six paths, k = 2: sr uses all six paths (6 units); K subflows free to take sr-paths get
    min(K, 6) units."""
    t = six_paths()
    for k in (1, 2, 3, 6, 8):
        r = max_flow(t, [("A", "B")], model="sr+mptcp", k=2, subflows=k)
        assert r.value == pytest.approx(min(k, 6)), k
        assert r.used_paths().max() <= k
    rng = np.random.default_rng(4)
    for seed in range(4):
        g = nx.gnp_random_graph(14, 0.3, seed=seed)
        g.add_edges_from(zip(range(13), range(1, 14)))
        for u, v in g.edges:
            g.edges[u, v]["capacity"] = float(rng.integers(1, 4))
        topo = read_topology(g, capacity="file")
        pairs = rng.choice(14, size=(5, 2), replace=True)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        sr = max_flow(topo, pairs, model="sr", k=3)
        used = int(sr.used_paths().max())
        vals = [max_flow(topo, pairs, model="sr+mptcp", k=3, subflows=k).value
                for k in range(1, used + 2)]
        assert all(a <= b + 1e-7 for a, b in zip(vals, vals[1:]))  # nested: top-K of one optimum
        assert vals[-1] == pytest.approx(sr.value, abs=1e-7)         # K >= paths used: sr itself
        assert vals[used - 1] == pytest.approx(sr.value, abs=1e-7)
        assert all(v <= sr.value + 1e-7 for v in vals)


def test_subflow_models_reject_bad_subflows():
    t = six_paths()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(UsageError, match="subflows"):
            max_flow(t, [("A", "B")], model="mptcp", subflows=bad)


@pytest.mark.parametrize("seed", range(4))
def test_sifting_gives_the_whole_lp_optimum(seed, monkeypatch):
    """With a tiny sifting batch (the first LP holds 3 columns, at most 3 enter per round) every
    model reaches the same value as with every column at once, on all pairs of a random graph,
    with and without demand bounds; ecmp still lists one column per pair, and the flows add up."""
    import tpcstudy.models.colgen as colgen

    t = _random_topology(seed + 500, n=10, extra=7)
    n = t.num_nodes
    pairs = [(s, u) for s in range(n) for u in range(n) if s != u]
    dem = np.random.default_rng(seed).uniform(0.1, 2.0, len(pairs))
    cases = [("ecmp", 1, None), ("sr", 2, None), ("sr", 3, dem), ("multipath", 4, None),
             ("mcf", 4, dem), ("mptcp", 4, None)]
    whole = {c[:2] + (c[2] is not None,): max_flow(t, pairs, model=c[0], k=c[1], demands=c[2])
             for c in cases}
    monkeypatch.setattr(colgen, "SIFT_BATCH", 3)
    for model, k, d in cases:
        ref = whole[(model, k, d is not None)]
        got = max_flow(t, pairs, model=model, k=k, demands=d)
        assert got.ok and got.gap >= -1e-9 or np.isnan(got.gap)
        assert got.value == pytest.approx(ref.value, rel=1e-7), model
        assert got.iterations > ref.iterations, model  # it did sift
        assert float(np.sum(got.flows)) == pytest.approx(got.value, rel=1e-7)
        assert np.allclose(np.bincount(got.path_pair, weights=got.flows, minlength=len(pairs)),
                           got.pair_flow)
        if model in ("ecmp", "mptcp"):  # the fixed columns are all listed, entered or not
            assert sorted(got.paths) == sorted(ref.paths) and got.columns == ref.columns


def test_the_sifting_batch_follows_the_lp_rows(monkeypatch):
    """At most a third of the LP's rows enter per round (between 256 and 8,000; hand-worked:
    Kdl's 1,642 capacity rows take 547); with the per-row share shrunk so that it binds on a
    small graph (18 rows: 6 per round), every model reaches the whole LP's optimum by sifting."""
    import tpcstudy.models.colgen as colgen

    assert [colgen.sift_batch(r) for r in (0, 100, 768, 1642, 24_000, 10 ** 6)] == \
        [256, 256, 256, 547, 8000, 8000]
    t = _random_topology(77, n=9, extra=0)  # a ring of 9 links: 18 capacity rows
    pairs = [(s, u) for s in range(9) for u in range(9) if s != u]
    whole = {m: max_flow(t, pairs, model=m, k=3) for m in ("ecmp", "sr", "mcf")}
    monkeypatch.setattr(colgen, "SIFT_MIN", 1)
    assert colgen.sift_batch(18) == 6
    for m, ref in whole.items():
        got = max_flow(t, pairs, model=m, k=3)
        assert got.value == pytest.approx(ref.value, rel=1e-9), m
        assert got.iterations > ref.iterations, m  # it did sift


@pytest.mark.parametrize("seed", range(6))
def test_sr_from_the_ecmp_lp(seed):
    """sr started from the ecmp optimum of the same pairs (its final LP and basis: sr's first
    LP) reaches the cold sr optimum for k = 2..4, with and without demand bounds, and its first
    LP takes no simplex pivot; an ecmp result without its state, of other pairs or other
    demands is refused."""
    import tpcstudy.lp.highs as H

    t = _random_topology(seed + 700, n=9, extra=6)
    n = t.num_nodes
    rng = np.random.default_rng(seed)
    pairs = [(s, u) for s in range(n) for u in range(n) if s != u and rng.random() < 0.5]
    dem = rng.uniform(0.2, 3.0, len(pairs)) if seed % 2 else None
    ecmp = max_flow(t, pairs, model="ecmp", demands=dem, keep_state=True)
    for k in (2, 3, 4):
        cold = max_flow(t, pairs, model="sr", k=k, demands=dem)
        pivots = []
        real = H.HighsModel.solve

        def spy(self, time_limit=None, real=real, pivots=pivots):
            r = real(self, time_limit)
            pivots.append(r.iterations)
            return r

        H.HighsModel.solve = spy
        try:
            got = max_flow(t, pairs, model="sr", k=k, demands=dem, ecmp_solution=ecmp)
        finally:
            H.HighsModel.solve = real
        assert got.ok and got.value == pytest.approx(cold.value, rel=1e-9), k
        assert pivots[0] == 0 and got.k == k
        assert float(np.sum(got.flows)) == pytest.approx(got.value, rel=1e-9)
    with pytest.raises(UsageError, match="ecmp_solution"):
        max_flow(t, pairs, model="sr", ecmp_solution=max_flow(t, pairs, model="ecmp",
                                                               demands=dem))
    with pytest.raises(UsageError, match="ecmp_solution"):
        max_flow(t, pairs[1:], model="sr", ecmp_solution=ecmp)
    with pytest.raises(UsageError, match="ecmp_solution"):
        max_flow(t, pairs, model="sr", demands=np.full(len(pairs), 0.5), ecmp_solution=ecmp)


@pytest.mark.parametrize("seed", range(6))
def test_mcf_from_an_sr_optimum(seed):
    """mcf started from an sr optimum (its routing traced into simple paths) reaches the cold
    mcf optimum, with and without demand bounds and for sr's k = 1..3; the traced paths are
    simple, carry each pair's sr flow and load no arc beyond the sr optimum's load (so within
    the capacity); a result of other pairs is refused."""
    from tpcstudy.models import maxflow_models as mm
    from tpcstudy.models.oracles import sr_usage
    from tpcstudy.models.problem import Problem

    t = _random_topology(seed + 900, n=9, extra=6)
    n = t.num_nodes
    rng = np.random.default_rng(seed)
    pairs = [(s, u) for s in range(n) for u in range(n) if s != u and rng.random() < 0.4]
    dem = rng.uniform(0.2, 3.0, len(pairs)) if seed % 2 else None
    cold = max_flow(t, pairs, model="mcf", demands=dem)
    for k in (1, 2, 3):
        sr = max_flow(t, pairs, model="sr", k=k, demands=dem)
        got = max_flow(t, pairs, model="mcf", demands=dem, sr_solution=sr)
        assert got.ok and got.value == pytest.approx(cold.value, rel=1e-9), k
        assert got.value >= sr.value - 1e-9
        S = np.array([a for a, _ in pairs])
        T = np.array([b for _, b in pairs])
        p = Problem(t, S, T, sr.pairs, "highs", None, None, None, 100)
        traced = mm.sr_routing_paths(p, sr)
        per_pair = np.zeros(len(pairs))
        load = np.zeros(2 * t.num_links)
        for i, arcs in traced:
            routers = [int(t.arc_src[arcs[0]])] + [int(t.arc_dst[a]) for a in arcs]
            assert len(set(routers)) == len(routers) and routers[0] == S[i] and routers[-1] == T[i]
        # amounts: trace again with them (the seeds carry the sr flow)
        from tpcstudy.models.decompose import source_paths
        x = np.asarray(sr.flows)
        sr_load = np.asarray((sr_usage(t, list(sr.keys)).T @ x)).ravel()
        for i in range(len(pairs)):
            cols = np.flatnonzero((sr.path_pair == i) & (x > 1e-12))
            if not len(cols):
                continue
            u = sr_usage(t, [sr.keys[j] for j in cols]).T @ x[cols]
            flow = {a: float(f) for a, f in enumerate(np.asarray(u).ravel()) if f > 0}
            for arcs, f in source_paths(t.arc_src.tolist(), t.arc_dst.tolist(), int(S[i]), flow,
                                        {int(T[i]): float(sr.pair_flow[i])}, 1e-12)[int(T[i])]:
                per_pair[i] += f
                load[list(arcs)] += f
        np.testing.assert_allclose(per_pair, sr.pair_flow, rtol=1e-7, atol=1e-9)
        assert np.all(load <= sr_load + 1e-7) and np.all(load <= t.arc_capacity + 1e-7)
    with pytest.raises(UsageError, match="sr_solution"):
        max_flow(t, pairs[1:], model="mcf", sr_solution=sr)


def test_mcf_proven_by_the_sr_optimum():
    """Where sr's optimum is mcf's, its duals prove it and mcf solves no LP; where it is not,
    the certificate fails and the LP runs: either way the cold mcf optimum. A proven result's
    paths are simple, load no arc beyond its capacity and carry its value; its duals price no
    path below 1. A certificate is refused when its duals are wrong (halved) or were computed
    on other capacities."""
    from tpcstudy.models import maxflow_models as mm
    from tpcstudy.models.oracles import capacity_scale
    from tpcstudy.models.problem import Problem

    outcomes = []
    for seed, k in itertools.product(range(8), (1, 2, 4)):
        t = _random_topology(seed + 40, n=9, extra=6, weights=False)
        n = t.num_nodes
        rng = np.random.default_rng(seed)
        every = [(s, u) for s in range(n) for u in range(n) if s != u]
        pairs = [every[i] for i in rng.choice(len(every), 4, replace=False)]
        cold = max_flow(t, pairs, model="mcf")
        S = np.array([a for a, _ in pairs])
        T = np.array([b for _, b in pairs])
        sr = max_flow(t, pairs, model="sr", k=k)
        got = max_flow(t, pairs, model="mcf", sr_solution=sr)
        assert got.ok and got.value == pytest.approx(cold.value, rel=1e-9), k
        proven = got.iterations == 0
        outcomes.append(proven)
        if sr.value < cold.value * (1 - 1e-7):
            assert not proven  # sr below mcf: no certificate can hold
        if not proven:
            continue
        assert got.value == pytest.approx(sr.value, rel=1e-9)
        load = np.zeros(2 * t.num_links)
        for i, arcs, f in zip(got.path_pair, got.keys, got.flows):
            routers = [int(t.arc_src[arcs[0]])] + [int(t.arc_dst[a]) for a in arcs]
            assert len(set(routers)) == len(routers) and routers[0] == S[i] and routers[-1] == T[i]
            load[list(arcs)] += f
        assert np.all(load <= t.arc_capacity * (1 + 1e-9))
        assert got.flows.sum() == pytest.approx(got.value, rel=1e-12)
        y, z = got.duals
        g = nx.DiGraph([(int(t.arc_src[a]), int(t.arc_dst[a]), {"w": y[a]})
                        for a in range(2 * t.num_links)])
        for i in range(len(pairs)):  # the cheapest path of every pair prices at least 1
            d = nx.single_source_dijkstra_path_length(g, int(S[i]), weight="w")
            assert d[int(T[i])] >= 1 - 1e-9
        p = Problem(t, S, T, sr.pairs, "highs", None, None, None, 100,
                    scale=capacity_scale(t))
        assert mm.proven_by(p, sr, "mcf") is not None
        assert mm.proven_by(p, dataclasses.replace(sr, duals=(y / 2, z)), "mcf") is None
        g2 = t.to_networkx()
        for u, v in g2.edges:
            g2[u][v]["capacity"] *= 2.0
        t2 = read_topology(g2, capacity="file", weight="file")
        assert t2.names == t.names
        p2 = Problem(t2, S, T, sr.pairs, "highs", None, None, None, 100,
                     scale=capacity_scale(t2))
        assert mm.proven_by(p2, sr, "mcf") is None  # sr's duals priced other capacities
    # k = 1 never reaches mcf here; k = 4 does on all 8, proven on 7 (seed 0: other duals)
    assert sum(outcomes) >= 8 and len(outcomes) - sum(outcomes) >= 8, outcomes


def test_multipath_proven_by_the_ecmp_optimum():
    """Where ecmp's optimum is multipath's (often: heavy pairs on sparse graphs), its duals
    prove it and multipath solves no LP: the cold multipath optimum, its paths ECMP's routing
    as shortest paths within the capacities; where multipath is above ecmp the LP runs from
    those paths. An sr result (not ecmp) or another pair set is refused."""
    from tpcstudy.models import maxflow_models as mm
    from tpcstudy.models.oracles import capacity_scale
    from tpcstudy.models.problem import Problem

    outcomes = []
    for seed, npairs in itertools.product(range(10), (2, 6)):
        t = _random_topology(seed + 70, n=9, extra=4, weights=seed % 2 == 0)
        n = t.num_nodes
        rng = np.random.default_rng(seed)
        every = [(s, u) for s in range(n) for u in range(n) if s != u]
        pairs = [every[i] for i in rng.choice(len(every), npairs, replace=False)]
        cold = max_flow(t, pairs, model="multipath")
        ecmp = max_flow(t, pairs, model="ecmp")
        got = max_flow(t, pairs, model="multipath", ecmp_solution=ecmp)
        assert got.ok and got.value == pytest.approx(cold.value, rel=1e-9)
        proven = got.iterations == 0
        outcomes.append(proven)
        if cold.value > ecmp.value * (1 + 1e-7):
            assert not proven
        if not proven:
            continue
        dist = dict(nx.all_pairs_dijkstra_path_length(nx.DiGraph(
            [(int(t.arc_src[a]), int(t.arc_dst[a]), {"w": float(t.arc_weight[a])})
             for a in range(2 * t.num_links)]), weight="w"))
        load = np.zeros(2 * t.num_links)
        for i, arcs, f in zip(got.path_pair, got.keys, got.flows):
            s, u = pairs[i]
            assert int(t.arc_src[arcs[0]]) == s and int(t.arc_dst[arcs[-1]]) == u
            assert float(t.arc_weight[list(arcs)].sum()) == pytest.approx(dist[s][u])
            load[list(arcs)] += f
        assert np.all(load <= t.arc_capacity * (1 + 1e-9))
        S = np.array([a for a, _ in pairs])
        T = np.array([b for _, b in pairs])
        p = Problem(t, S, T, ecmp.pairs, "highs", None, None, None, 100,
                    scale=capacity_scale(t))
        sr = max_flow(t, pairs, model="sr", k=2)
        assert mm.proven_by(p, sr, "multipath") is None  # sr's paths are no multipath columns
    assert sum(outcomes) >= 5 and len(outcomes) - sum(outcomes) >= 5, outcomes
    with pytest.raises(UsageError, match="ecmp_solution"):
        max_flow(t, pairs[1:], model="multipath", ecmp_solution=ecmp)


def test_sifting_matches_the_enumerated_lp_and_writes_the_whole_model(tmp_path, monkeypatch):
    import tpcstudy.models.colgen as colgen

    monkeypatch.setattr(colgen, "SIFT_BATCH", 2)
    t = _random_topology(203, n=6, extra=4)
    pairs = [(s, u) for s in range(6) for u in range(6) if s != u]
    f = tmp_path / "m.lp"
    got = max_flow(t, pairs, model="sr", k=2, write_lp=str(f))
    assert got.value == pytest.approx(_enumerated_sr_lp(t, pairs, 2), rel=1e-7)
    ecmp = max_flow(t, pairs, model="ecmp", write_lp=str(f))
    assert ecmp.iterations > 1  # it sifted
    # every ecmp column is in the written LP, the ones that never entered the solves too
    objective = f.read_text().split("st")[0]
    assert ecmp.columns == len(pairs) and objective.count(" c") == len(pairs)

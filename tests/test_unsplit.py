"""sr-unsplit (tpcstudy.models.unsplit): one sr-path per demand from the minimum-MLU LP. Oracles: a ring
worked by hand, brute force over every unsplit routing of small random instances (every sr-path
with at most 2 segments), the LP's MLU as the lower bound, the loads recomputed from the paths."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.errors import UsageError
from tpcstudy.models.mlu import min_mlu
from tpcstudy.models.unsplit import sr_unsplit
from tpcstudy.paths import segment_ratios


def _loads(t, paths, volumes):
    load = np.zeros(2 * t.num_links)
    for p, v in zip(paths, volumes):
        for a, b in zip(p[:-1], p[1:]):
            off, arcs, fr = segment_ratios(t, np.array([a], np.int32), np.array([b], np.int32))
            np.add.at(load, arcs, v * fr)
    return load


def _mlu(t, paths, volumes):
    return float(np.max(_loads(t, paths, volumes) / t.arc_capacity))


def test_ring_by_hand():
    """Ring s-a-t-b-s, unit links: s -> t and a -> b, one unit each. Every unsplit routing but
    one puts both on a link (MLU 2): s-a-t with a-s-b gives 1, which is also the LP's optimum
    (a -> t and s -> b together carry 2 units whatever the split)."""
    g = nx.cycle_graph(["s", "a", "t", "b"])
    t = read_topology(g)
    dem = [("s", "t", 1.0), ("a", "b", 1.0)]
    lp = min_mlu(t, dem, model="sr", k=2)
    assert lp.mlu == pytest.approx(1.0, abs=1e-9)
    un = sr_unsplit(t, lp)
    assert un.mlu == pytest.approx(1.0, abs=1e-9) and un.model == "sr-unsplit"
    for paths, v in zip(un.paths, un.volumes):
        assert len(paths) == 1 and paths[0][1] == v  # one path carries the whole demand
    assert un.loads == pytest.approx(_loads(t, [x[0][0] for x in un.paths], un.volumes))
    with pytest.raises(UsageError, match="rounds an sr routing"):
        sr_unsplit(t, min_mlu(t, dem, model="mcf"))


def _random_instance(seed: int):
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(6, 3, 0.5, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["capacity"] = float(rng.choice([1.0, 2.0, 4.0]))
    t = read_topology(g, capacity="file")
    pairs = rng.choice(6, size=(4, 2))
    dem = [(int(a), int(b), float(rng.uniform(0.5, 2.0))) for a, b in pairs if a != b]
    return t, dem


@pytest.mark.parametrize("seed", range(12))
def test_against_brute_force(seed):
    """Every unsplit routing over every sr-path with at most 2 segments: the LP is below the best
    of them, sr-unsplit is at or above it, and its loads are its paths'."""
    t, dem = _random_instance(seed)
    if not dem:
        return
    lp = min_mlu(t, dem, model="sr", k=2)
    un = sr_unsplit(t, lp, seed=seed)
    S, V = lp.sources.tolist(), lp.volumes.tolist()
    cands = [[(s, d)] + [(s, w, d) for w in range(t.num_nodes) if w not in (s, d)]
             for s, d in zip(S, lp.targets.tolist())]
    best = min(_mlu(t, combo, V) for combo in itertools.product(*cands))
    assert lp.mlu <= best * (1 + 1e-9)
    assert un.mlu >= best * (1 - 1e-9)
    assert un.mlu == pytest.approx(_mlu(t, [p[0][0] for p in un.paths], V), rel=1e-9)
    # on instances this small it finds the optimum (40 of 40 seeds tried)
    assert un.mlu == pytest.approx(best, rel=1e-9), (seed, un.mlu, best)
    assert S == un.sources.tolist()


def test_deterministic_for_a_seed(repetita):
    from tpcstudy.io import read_demands

    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    t = read_topology(folder / "Geant2012.graph", capacity="file", weight="file")
    lp = min_mlu(t, read_demands(folder / "Geant2012.0000.demands", t), model="sr", k=2)
    a, b = sr_unsplit(t, lp, seed=3), sr_unsplit(t, lp, seed=3)
    assert a.paths == b.paths and a.mlu == b.mlu
    assert lp.mlu <= a.mlu < 1.02 * lp.mlu  # within 2 % of the bound here
    assert not math.isinf(a.mlu)


def test_the_single_path_bound_by_hand():
    """Triangle s-t, s-a-t of unit links, 2 units s -> t: the LP splits them (MLU 1), but any
    one path carries both (MLU 2): the bound says so, and sr-unsplit meets it."""
    from tpcstudy.models.unsplit import single_path_bound

    g = nx.Graph([("s", "t"), ("s", "a"), ("a", "t")])
    t = read_topology(g)
    lp = min_mlu(t, [("s", "t", 2.0)], model="sr", k=2)
    assert lp.mlu == pytest.approx(1.0, abs=1e-9)
    S, T = lp.sources, lp.targets
    assert single_path_bound(t, S, T, np.array([2.0]), 2) == pytest.approx(2.0)
    un = sr_unsplit(t, lp)
    assert un.bound == pytest.approx(2.0) and un.mlu == pytest.approx(2.0)
    # on a ring of 4 the direct segment s -> t is one sr-path whose ECMP halves the unit over
    # both branches: 0.5, with or without waypoints (a waypoint pins one branch: 1)
    r = read_topology(nx.cycle_graph(["s", "a", "t", "b"]))
    i, j = r.index_of("s"), r.index_of("t")
    assert single_path_bound(r, np.array([i]), np.array([j]), np.array([1.0]), 1) == \
        pytest.approx(0.5)
    assert single_path_bound(r, np.array([i]), np.array([j]), np.array([1.0]), 2) == \
        pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(6))
def test_a_start_routing_is_never_made_worse(seed):
    t, dem = _random_instance(seed)
    if not dem:
        return
    two = sr_unsplit(t, min_mlu(t, dem, model="sr", k=2), seed=seed)
    lp4 = min_mlu(t, dem, model="sr", k=4)
    four = sr_unsplit(t, lp4, seed=seed, start=two)
    assert four.mlu <= two.mlu * (1 + 1e-12)
    other = min_mlu(t, dem[:1], model="sr", k=2)
    if len(other.sources) != len(lp4.sources):
        with pytest.raises(UsageError, match="other demands"):
            sr_unsplit(t, lp4, start=sr_unsplit(t, other))

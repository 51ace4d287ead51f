"""tpcstudy.pairs: ordered edge-router pairs, the heavy-hitter sample (percent or fraction, never
mixed up) and the one sampling rule."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.errors import UsageError
from tpcstudy.pairs import edge_router_pairs, heavy_pairs, router_pairs, sample_indices
from tpcstudy.topology import RawEdge, Topology, build_topology

# A ring 0-1-2-3-4-5-0 with the chord 0-3: routers 0 and 3 have degree 3, the edge routers
# (degree 2) are 1, 2, 4, 5.
RING_LINKS = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)]


def ring_topology() -> Topology:
    return build_topology("ring6", [str(i) for i in range(6)],
                          [RawEdge(u, v) for u, v in RING_LINKS])


def test_router_pairs() -> None:
    topo = ring_topology()
    s, t = router_pairs(topo, "edge")
    edge = [1, 2, 4, 5]
    assert list(zip(s.tolist(), t.tolist())) == [(a, b) for a in edge for b in edge if a != b]
    s, t = router_pairs(topo, "all")
    assert len(s) == 30 and not np.any(s == t)
    with pytest.raises(UsageError):
        router_pairs(topo, "some")


def test_edge_router_pairs() -> None:
    assert len(edge_router_pairs(read_topology(nx.cycle_graph(20)))) == 380
    # circulant(12, [1, 3]) is 4-regular: no edge routers, no pairs
    assert edge_router_pairs(read_topology(nx.circulant_graph(12, [1, 3]))).shape == (0, 2)
    pairs = edge_router_pairs(ring_topology(), np.array([0, 3], dtype=np.int32))
    assert pairs.tolist() == [[0, 3], [3, 0]] and pairs.dtype == np.int32


def test_heavy_pairs_are_reproducible() -> None:
    ring = read_topology(nx.cycle_graph(20))
    a = heavy_pairs(ring, fraction=0.05, seed=3)
    assert len(a) == 19 and np.array_equal(a, heavy_pairs(ring, fraction=0.05, seed=3))
    assert not np.array_equal(a, heavy_pairs(ring, fraction=0.05, seed=4))
    assert len(heavy_pairs(ring, fraction=0.001, seed=0)) == 1  # at least one pair
    assert len(heavy_pairs(ring, percent=1, seed=0)) == math.ceil(0.01 * 380)
    assert np.array_equal(heavy_pairs(ring, percent=5, seed=3), a)  # 5 % == 0.05
    assert np.all(np.diff(a[:, 0] * 20 + a[:, 1]) > 0)  # sorted, distinct
    assert heavy_pairs(read_topology(nx.complete_graph(5)), percent=50, seed=0).shape == (0, 2)
    # names=True: the same sample as router names, as every other call takes them
    named = heavy_pairs(ring, fraction=0.05, seed=3, names=True)
    assert named == [(ring.names[s], ring.names[t]) for s, t in a.tolist()]
    assert all(isinstance(x, str) for pair in named for x in pair)
    assert heavy_pairs(read_topology(nx.complete_graph(5)), percent=50, seed=0, names=True) == []


def test_heavy_pairs_units_cannot_be_mixed_up() -> None:
    ring = read_topology(nx.cycle_graph(20))
    with pytest.raises(TypeError):
        heavy_pairs(ring, 0.1, seed=0)  # type: ignore[misc]  # the unit must be named
    with pytest.raises(UsageError, match="exactly one"):
        heavy_pairs(ring, seed=0)
    with pytest.raises(UsageError, match="exactly one"):
        heavy_pairs(ring, percent=10, fraction=0.1, seed=0)
    with pytest.raises(UsageError, match=r"pass percent=10"):
        heavy_pairs(ring, fraction=10, seed=0)
    for bad in (0, -1, 100.5):
        with pytest.raises(UsageError, match="percent"):
            heavy_pairs(ring, percent=bad, seed=0)


def test_sample_indices() -> None:
    a = sample_indices(100, 10, seed=7)
    assert len(set(a.tolist())) == 10 and list(a) == sorted(a)
    assert np.array_equal(a, np.sort(np.random.default_rng(7).choice(100, 10, replace=False)))
    assert np.array_equal(sample_indices(5, 5, seed=1), np.arange(5))

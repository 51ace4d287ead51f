"""SRH bytes for sockets against the export's encoding, and the placement of connections on the
LP's paths (no root needed)."""

from __future__ import annotations

import ipaddress
import struct

import networkx as nx
import numpy as np
import pytest

from tpcstudy import UsageError, max_flow, read_topology
from tpcstudy.emulate.experiments import placement as PL
from tpcstudy.emulate.experiments.throughput import lp_solution
from tpcstudy.emulate.network import srh as SR
from tpcstudy.emulate.network.handmade import six_paths
from tpcstudy.export import encode_value
from tpcstudy.export import layout as L

from helpers import path_record

ADDRS = [f"fc00::{i:x}" for i in range(1, 10)]


@pytest.mark.parametrize("n", range(1, 10))
def test_srh_bytes_equal_the_exported_slot_cut_to_its_length(n):
    segs = ADDRS[:n]
    want = L.srh_bytes(segs)
    assert len(want) == L.srh_length(n) == (want[1] + 1) * 8 == 8 + 16 * (n + 1)
    for variant in ("n_rto", "exp3_lowest_completion", "exp3_lowest_delay"):
        value = encode_value("fd00::/64", [path_record(ADDRS[:1]), path_record(segs)], variant)
        assert SR.slot_srh(value, 1) == want
        assert SR.slot_srh(value, 0) == L.srh_bytes(ADDRS[:1])
    assert L.srh_segments(want) == [ipaddress.IPv6Address(a) for a in segs]


def test_srh_layout_by_hand():
    b = L.srh_bytes(["fc00::a", "fc00::b"])  # visit a, then b (the egress)
    assert len(b) == 56
    assert struct.unpack_from("<BBBBBBH", b) == (0, 6, 4, 2, 2, 0, 0)
    assert b[8:24] == bytes(16)  # segments[0]: the kernel writes the destination here
    assert b[24:40] == ipaddress.IPv6Address("fc00::b").packed  # segments[1] = last
    assert b[40:56] == ipaddress.IPv6Address("fc00::a").packed  # segments[n] = first hop
    assert len(L.srh_bytes(["fc00::1"])) == 40  # the 40 bytes that cost MSS 1428 -> 1388
    with pytest.raises(UsageError):
        L.srh_bytes([])
    with pytest.raises(UsageError):
        L.srh_segments(b"\x00\x06\x00\x02\x02\x00\x00\x00" + bytes(48))  # type 0


# ----------------------------------------------------------------- placement
def test_largest_remainder_by_hand():
    assert PL.largest_remainder([1, 1, 1], 4) == [2, 1, 1]  # tie: smaller index
    assert PL.largest_remainder([0.2, 1.0], 4) == [1, 3]  # 0.67 -> 1, 3.33 -> 3
    assert PL.largest_remainder([1, 2, 3], 6) == [1, 2, 3]
    assert PL.largest_remainder([0.5, 0.3, 0.2], 4) == [2, 1, 1]  # 2.0, 1.2, 0.8: rest to 0.8
    assert PL.largest_remainder([0, 0], 4) == [0, 0]
    assert PL.largest_remainder([3, 1], 0) == [0, 0]
    rng = np.random.default_rng(1)
    for _ in range(200):
        w = rng.random(rng.integers(1, 7)) * (rng.random() < 0.9)
        total = int(rng.integers(0, 20))
        c = PL.largest_remainder(w.tolist(), total)
        assert sum(c) == (total if w.sum() > 0 else 0)
        if w.sum() > 0:  # each within one of its exact quota
            assert all(abs(ci - total * wi / w.sum()) < 1 for ci, wi in zip(c, w))


def test_route_segments_pin_routes_with_few_segments():
    # ring of 6: 0-1-2-3-4-5-0; 0 -> 3 has two shortest paths (via 1,2 and via 5,4)
    g = nx.cycle_graph(6)
    t = read_topology(g)
    n = t.names
    assert PL.route_segments(t, [n[0], n[1], n[2], n[3]]) == [n[2], n[3]]  # 0..2 unique
    assert PL.route_segments(t, [n[0], n[1]]) == [n[1]]
    assert PL.route_segments(t, [n[0], n[5], n[4], n[3]]) == [n[4], n[3]]


def test_six_paths_placement():
    sc = six_paths()
    t, pairs = sc.topology, sc.pairs
    # the plain optimum can give the one forced path to a single client, the sr optimum all six
    # paths to two clients: the balanced optimum serves all four
    raw = max_flow(t, pairs, model="sr", k=4)
    assert raw.value == pytest.approx(6.0)
    ecmp, how_e = lp_solution(t, pairs, "ecmp")
    sr, how_s = lp_solution(t, pairs, "sr", k=4)
    assert (how_e, how_s) == ("balanced", "balanced")
    assert ecmp.value == pytest.approx(1.0) and sr.value == pytest.approx(6.0)
    assert np.allclose(sr.pair_flow, 1.5) and np.allclose(ecmp.pair_flow, 0.25)
    pe = PL.place_connections(t, ecmp, per_pair=4)
    assert all(c.segments == () for c in pe.connections)
    assert len(pe.connections) == 16 and pe.unserved == 0
    ps = PL.place_connections(t, sr, per_pair=4)
    assert len(ps.connections) == 16 and ps.unserved == 0
    # the direct path (C, S) follows the IGP through P1; (C, Pj, S) goes through Pj
    used = {c.path[1] if len(c.path) == 3 else "P1" for c in ps.connections}
    assert used == {f"P{j}" for j in range(1, 7)}  # every one of the six paths carries traffic
    for c in ps.connections:
        assert c.segments == c.path[1:] and c.segments[-1] == c.destination


def test_placement_follows_flows_and_skips_zero_flow_pairs():
    t = read_topology(nx.cycle_graph(6))
    n = t.names
    res = max_flow(t, [(n[0], n[3]), (n[1], n[2])], model="multipath")
    p = PL.place_connections(t, res, per_pair=4)
    assert p.pairs == 2
    by_pair = {}
    for c in p.connections:
        by_pair.setdefault((c.source, c.destination), []).append(c)
    for cs in by_pair.values():
        assert len(cs) == 4
        flows = {c.path: c.lp_flow for c in cs}
        counts = PL.largest_remainder(list(flows.values()), 4)
        assert sorted(counts) == sorted(sum(1 for c in cs if c.path == q) for q in flows)
    with pytest.raises(UsageError):
        PL.place_connections(t, max_flow(t, [(n[0], n[3])], model="mcf"), per_pair=4)

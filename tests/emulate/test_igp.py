"""IGP re-convergence (no root): the failed graph's routes mapped onto the intact network's
interfaces and the route diff, hand-worked on a square A-B-C-D-A (hop weights)."""

from __future__ import annotations

import pytest

from tpcstudy.emulate.network.igp import (
    link_down_lines,
    link_up_lines,
    parse_link_events,
    route_diff,
    route_table,
    without_links,
)
from tpcstudy.emulate.network.netlink import messages
from tpcstudy.emulate.network.spec import network_spec
from tpcstudy.errors import UsageError
from tpcstudy.topology import RawEdge, build_topology


def square():
    t = build_topology("square", ["A", "B", "C", "D"],
                       [RawEdge(0, 1), RawEdge(1, 2), RawEdge(2, 3), RawEdge(3, 0)])
    return network_spec(t, prefix="tpctestigp-")


def dests(spec, name):
    r = spec.router(name)
    return {f"{r.loopback}/128"} | {str(p) for p in r.prefixes}


def test_without_links_keeps_ids():
    spec = square()
    t = without_links(spec.topology, [(1, 0)])
    assert t.names == spec.topology.names
    assert t.num_links == 3
    assert (0, 1) not in set(zip(t.link_u.tolist(), t.link_v.tolist()))


def test_route_diff_of_a_cut_link_hand_worked():
    spec = square()
    A, B, C, D = range(4)
    intact, failed = route_table(spec), route_table(spec, [(A, B)])
    # intact: A reaches C over B and D (ECMP), B over B
    assert intact[A][next(iter(dests(spec, "C")))] == (("to1", "fe80::2"), ("to3", "fe80::2"))
    # failed A-B: A reaches B and C only over D; B reaches A and D only over C
    for d in dests(spec, "B") | dests(spec, "C"):
        assert failed[A][d] == (("to3", "fe80::2"),)
    for d in dests(spec, "A") | dests(spec, "D"):
        assert failed[B][d] == (("to2", "fe80::2"),)  # B is the lower id: C is ::2
    diff = route_diff(intact, failed)
    changed = {r: {line.split()[2] for line in lines} for r, lines in diff.items()}
    assert changed == {A: dests(spec, "B") | dests(spec, "C"),
                       B: dests(spec, "A") | dests(spec, "D"),
                       C: dests(spec, "A"),  # was over B and D, now D
                       D: dests(spec, "B")}  # was over A and C, now C
    # back up: exactly the same routes change back, to the intact next hops
    back = route_diff(failed, intact)
    assert {r: {x.split()[2] for x in v} for r, v in back.items()} == changed
    assert route_diff(intact, route_table(spec)) == {}
    line = next(x for x in diff[A] if str(spec.router("C").loopback) in x)
    assert line == f"route replace {spec.router('C').loopback}/128 nexthop via fe80::2 dev to3"


def test_unreachable_after_two_cuts():
    spec = square()
    failed = route_table(spec, [(0, 1), (0, 3)])  # A isolated
    diff = route_diff(route_table(spec), failed)
    a = dests(spec, "A")
    assert all(f"route replace unreachable {d}" in diff[1] for d in a)
    assert all(line.startswith("route replace unreachable") for line in diff[0])


def test_link_event_lines():
    spec = square()
    ns, lines = link_down_lines(spec, 1, 0)
    assert ns == "tpctestigp-r0" and lines == ["link set dev to1 down"]
    ns, lines = link_up_lines(spec, 0, 1)
    assert lines[0] == "link set dev to1 up" and "nud permanent" in lines[2]
    with pytest.raises(UsageError):
        link_down_lines(spec, 0, 2)  # A and C share no link


def test_parse_link_events():
    import struct
    def msg(kind, flags, name):
        body = struct.pack("=BxHiII", 10, 1, 5, flags, 0)
        nm = name.encode() + b"\0"
        attr = struct.pack("=HH", 4 + len(nm), 3) + nm
        attr += b"\0" * (-len(attr) % 4)
        payload = body + attr
        return struct.pack("=IHHII", 16 + len(payload), kind, 0, 0, 0) + payload
    data = msg(16, 0x1 | 0x10000, "to3") + msg(16, 0x1, "to2") + msg(17, 0x1 | 0x10000, "to1")
    assert len(list(messages(data))) == 3
    assert parse_link_events(data) == [("to3", True), ("to2", False), ("to1", False)]

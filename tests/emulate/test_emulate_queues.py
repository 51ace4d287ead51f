"""The queue monitor's netlink parsing on messages built by hand from the kernel's layouts
(<linux/netlink.h>, <linux/rtnetlink.h>, <linux/gen_stats.h>), and a dump of this machine's own
interfaces."""

from __future__ import annotations

import socket
import struct

import pytest

from tpcstudy.emulate.network.netlink import (
    NETLINK_ROUTE,
    NLMSG_DONE,
    RTM_NEWLINK,
    RTM_NEWQDISC,
    TCA_KIND,
    TCA_STATS2,
    TCA_STATS_QUEUE,
    link_request,
    parse_links,
    parse_qdiscs,
    qdisc_request,
)


def _attr(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def _msg(kind: int, body: bytes) -> bytes:
    raw = struct.pack("=IHHII", 16 + len(body), kind, 2, 1, 0) + body
    return raw + b"\0" * (-len(raw) % 4)


def test_qdisc_dump_parsed_by_hand() -> None:
    queue = struct.pack("=IIIII", 3, 4500, 7, 0, 1)  # qlen, backlog, drops, requeues, overlimits
    stats2 = _attr(TCA_STATS2 | 0x8000, _attr(TCA_STATS_QUEUE, queue))  # NLA_F_NESTED set
    bfifo = _msg(RTM_NEWQDISC, struct.pack("=BxxxiIII", 10, 7, 0x20000, 0x10001, 1)
                 + _attr(TCA_KIND, b"bfifo\0") + stats2)
    htb = _msg(RTM_NEWQDISC, struct.pack("=BxxxiIII", 10, 7, 0x10000, 0xFFFFFFFF, 1)
               + _attr(TCA_KIND, b"htb\0") + _attr(TCA_STATS2, _attr(TCA_STATS_QUEUE, queue)))
    got, done = parse_qdiscs(bfifo + htb)
    assert got == [(7, "bfifo", 4500, 3), (7, "htb", 4500, 3)] and not done
    got, done = parse_qdiscs(_msg(NLMSG_DONE, struct.pack("=i", 0)))
    assert got == [] and done


def test_link_dump_parsed_by_hand() -> None:
    body = struct.pack("=BxHiII", 10, 1, 12, 0, 0) + _attr(3, b"to4\0")
    names, done = parse_links(_msg(RTM_NEWLINK, body) + _msg(NLMSG_DONE, b"\0" * 4))
    assert names == {"to4": 12} and done


def test_requests_and_a_real_dump() -> None:
    assert struct.unpack_from("=IHH", qdisc_request(5)) == (36, 38, 0x301)
    assert struct.unpack_from("=IHH", link_request(5)) == (32, 18, 0x301)
    # no privilege needed to read this namespace's links and qdiscs
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    try:
        s.send(link_request())
        names: dict = {}
        done = False
        while not done:
            part, done = parse_links(s.recv(1 << 16))
            names.update(part)
        assert names.get("lo") == 1
    finally:
        s.close()


@pytest.mark.slow
@pytest.mark.usefixtures("emulator", "emulation_guard")
def test_monitor_sees_the_loaded_path() -> None:
    """4 TCP flows pinned to path 1 of the two-site network fill its first link's queue; the
    monitor, reading from this process through sockets opened in the routers' namespaces, sees
    tens of ms there and nothing on path 2."""
    from tpcstudy.emulate.agent.client import Transfer, route_hops, run_traffic
    from tpcstudy.emulate.network.handmade import two_sites
    from tpcstudy.emulate.network.kernel import NetnsSwitch
    from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix
    from tpcstudy.emulate.network.netlink import NETLINK_ROUTE, QueueMonitor
    from tpcstudy.emulate.network.spec import network_spec
    from tpcstudy.export.layout import srh_bytes

    sc = two_sites()
    plan = sc.plan
    spec = network_spec(sc.topology, plan, prefix=new_prefix(), link_mbps=10)
    p1, p2 = route_hops(spec, ["A", "P1", "B"]), route_hops(spec, ["A", "P2", "B"])
    sw = NetnsSwitch()
    seen = []
    with Emulation(spec) as emu:
        mon = QueueMonitor(p1 + p2, lambda ns: sw.socket_in(ns, socket.AF_NETLINK,
                                                            socket.SOCK_RAW, NETLINK_ROUTE))
        try:
            def read() -> None:
                mon.read()
                seen.append((mon.path_delays([h[:2] for h in p1]),
                             mon.path_delays([h[:2] for h in p2])))

            srh = srh_bytes([plan.loopback("P1"), plan.loopback("B")])
            flows = [Transfer(i, "A", "B", paths=(srh,)) for i in range(4)]
            run_traffic(emu, flows, warmup=1.0, seconds=2.0,
                        actions=[(t, f"q{t}", read) for t in (1.5, 2.0, 2.5)])
        finally:
            mon.close()
            sw.close()
    assert len(seen) == 3
    for d1, d2 in seen:
        # the first hop of path 1 queues (bfifo of 50 ms at 10 Mbit/s), path 2 is idle
        assert d1[0] > 0.005 and max(d1) <= 0.06 and max(d2) < 0.001, seen

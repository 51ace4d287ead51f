"""IGP re-convergence on an emulated network (root): a square A-B-C-D-A; a TCP connection from
A's host to B's host crosses link A-B; the link goes down (a real link event, read back from
the routers' rtnetlink); 200 ms later every router holds the failed graph's routes, and the
connection's next bytes reach B around the cut (over D and C); when the link comes back the
intact routes return."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.igp import Igp, LinkWatcher, link_down_lines, link_up_lines, route_table
from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix
from tpcstudy.emulate.network.spec import network_spec
from tpcstudy.topology import RawEdge, build_topology

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]


def kernel_routes(netns):
    dump = subprocess.run(["ip", "-n", netns, "-j", "-6", "route", "show"],
                          capture_output=True, text=True, check=True).stdout
    out = {}
    for e in json.loads(dump):
        if e.get("type") == "unreachable":
            out[e["dst"]] = []
            continue
        hops = e.get("nexthops") or [{"gateway": e.get("gateway"), "dev": e.get("dev")}]
        if e.get("gateway") or e.get("nexthops"):
            out[e["dst"]] = sorted((h["dev"], h["gateway"]) for h in hops)
    return out


def want_routes(table):
    return {d.replace("/128", ""): sorted(nh) for d, nh in table.items()}


def events(w, n, timeout=5.0):
    got, end = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < end:
        got += w.poll(0.1)
    return got


def drain(w, quiet=0.3):
    """What the routers still report until ``quiet`` seconds pass without a message: the far
    end's loss of carrier can come after the near end's down (read now, it is no event; left
    queued, it would read as a down after the next up)."""
    got = []
    while True:
        more = w.poll(quiet)
        if not more:
            return got
        got += more


def test_cut_link_is_routed_around_after_reconvergence():
    t = build_topology("square", ["A", "B", "C", "D"],
                       [RawEdge(0, 1), RawEdge(1, 2), RawEdge(2, 3), RawEdge(3, 0)])
    spec = network_spec(t, prefix=new_prefix())
    with Emulation(spec) as emu:
        emu.wait_quiet()
        a, b = spec.router("A"), spec.router("B")
        sw = N.NetnsSwitch()
        ls = sw.socket_in(b.netns)
        ls.bind((str(b.hosts[0]), 0))
        ls.listen(1)
        c = sw.socket_in(a.netns)
        c.bind((str(a.hosts[0]), 0))
        c.connect((str(b.hosts[0]), ls.getsockname()[1]))
        s, _ = ls.accept()
        s.settimeout(5.0)
        c.sendall(b"x" * 100)
        assert len(s.recv(100)) == 100
        igp = Igp(spec, delay=0.2)
        w = LinkWatcher(spec)
        try:
            ns, lines = link_down_lines(spec, 0, 1)
            t0 = time.monotonic()
            N.run_batch("ip", lines, netns=ns)
            ev = events(w, 1)
            assert [(e.kind, e.u, e.v) for e in ev] == [("down", 0, 1)]
            igp.event("down", 0, 1, at=ev[0].at)
            assert drain(w) == []
            igp.wait()
            rec = igp.history[-1]
            assert rec.installed_at - t0 >= 0.2  # not before the delay
            assert rec.prepared and igp._ready is None  # computed and started while it waited
            failed = route_table(spec, [(0, 1)])
            for r in spec.routers:
                assert kernel_routes(r.netns) == want_routes(failed[r.id]), r.name
            c.sendall(b"y" * 1000)  # A -> D -> C -> B now
            got = b""
            while len(got) < 1000:
                got += s.recv(1000)
            assert got == b"y" * 1000
            ns, lines = link_up_lines(spec, 0, 1)
            N.run_batch("ip", lines, netns=ns, ipv6=True)
            ev = events(w, 1)
            assert [(e.kind, e.u, e.v) for e in ev] == [("up", 0, 1)]
            igp.event("up", 0, 1, at=ev[0].at)
            assert drain(w) == []
            igp.wait()
            assert igp.history[-1].prepared
            intact = route_table(spec)
            for r in spec.routers:
                assert kernel_routes(r.netns) == want_routes(intact[r.id]), r.name
            # a second event within the delay: what was prepared is dropped, computed again
            igp.event("down", 0, 1)
            time.sleep(0.05)
            igp.event("down", 2, 3)
            igp.wait()
            assert not igp.history[-1].prepared and igp._ready is None
            both = route_table(spec, [(0, 1), (2, 3)])
            for r in spec.routers:
                assert kernel_routes(r.netns) == want_routes(both[r.id]), r.name
            igp.event("up", 0, 1)
            igp.event("up", 2, 3)
            igp.wait()
            for r in spec.routers:
                assert kernel_routes(r.netns) == want_routes(intact[r.id]), r.name
            c.sendall(b"z" * 100)
            assert s.recv(100)[:1] == b"z"
        finally:
            igp.stop()
            w.close()
            for x in (c, s, ls):
                x.close()
            sw.close()

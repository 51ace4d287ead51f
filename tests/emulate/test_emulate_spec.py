"""The emulated network as data (no root needed): routes equal tpcstudy's own shortest-path DAG,
the exact build commands, rates, queues, names and hash seeds."""

from __future__ import annotations

import ipaddress
import re

import networkx as nx
import numpy as np
import pytest

from tpcstudy import UsageError, default_plan, prune, read_topology
from tpcstudy.emulate.network import spec as S


def _topo(edges, *, weighted: bool = False):
    g = nx.Graph()
    (g.add_weighted_edges_from if weighted else g.add_edges_from)(edges)
    return read_topology(g, weight="file" if weighted else "hop")


def _hops(t, u, v):
    return [t.names[x] for x in S.igp_next_hops(t)[(t.index_of(u), t.index_of(v))]]


# ----------------------------------------------------------------- next hops
def test_diamond_next_hops():
    # s - a - t and s - b - t: s has two next hops towards t, a and b one each
    t = _topo([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])
    assert sorted(_hops(t, "s", "t")) == ["a", "b"]
    assert _hops(t, "a", "t") == ["t"]
    assert _hops(t, "a", "b") == sorted(["s", "t"], key=t.index_of)  # two 2-hop paths
    assert _hops(t, "s", "a") == ["a"]


def test_weights_decide_and_real_ties_count_as_equal():
    # s-a-t costs 1.1 + 2.2, s-b-t costs 3.3: equal within 1e-9 relative (docs/method.md §3)
    t = _topo([("s", "a", 1.1), ("a", "t", 2.2), ("s", "b", 3.3), ("b", "t", 1e-12)],
              weighted=True)
    assert sorted(_hops(t, "s", "t")) == ["a", "b"]
    # a clearly longer branch is not a next hop
    t2 = _topo([("s", "a", 1), ("a", "t", 1), ("s", "b", 1), ("b", "t", 2)], weighted=True)
    assert _hops(t2, "s", "t") == ["a"]


@pytest.mark.parametrize("name", ["Abilene", "Geant2012", "Cogentco"])
def test_next_hops_match_networkx_on_zoo(name, zoo_installed):
    t = prune(read_topology(f"zoo/{name}"))
    g = t.to_networkx()
    hops = S.igp_next_hops(t)
    rng = np.random.default_rng(0)
    n = t.num_nodes
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    if len(pairs) > 3000:
        pairs = [pairs[i] for i in rng.choice(len(pairs), 3000, replace=False)]
    for u, v in pairs:
        want = sorted({p[1] for p in nx.all_shortest_paths(g, t.names[u], t.names[v],
                                                          weight="weight")}, key=t.index_of)
        assert [t.names[x] for x in hops[(u, v)]] == want, (t.names[u], t.names[v])


@pytest.mark.parametrize("name", ["Abilene", "Geant2012", "Cogentco"])
def test_next_hops_agree_with_the_subflow_model(name, zoo_installed):
    # the MPTCP subflow model computes the same next hops its own way (numpy over the distance
    # matrix); the emulated routes and that model must hash over the same DAGs
    from tpcstudy.models.subflows import next_hops

    t = prune(read_topology(f"zoo/{name}", weight="distance"))
    nh = next_hops(t)
    ours = S.igp_next_hops(t)
    for (u, v), hops in ours.items():
        arcs = nh.arcs[nh.offsets[v, u]:nh.offsets[v, u + 1]]
        assert sorted(int(t.arc_dst[a]) for a in arcs) == list(hops), (t.names[u], t.names[v])


# ----------------------------------------------------------------- the spec
def _spec(t, **kw):
    kw.setdefault("prefix", "tpcabc123-")
    return S.network_spec(t, **kw)


def test_routes_are_the_dag_next_hops_with_the_peer_gateways():
    t = prune(read_topology(nx.petersen_graph()))  # 3-regular: many equal-cost choices
    sp = _spec(t)
    hops = S.igp_next_hops(t)
    plan = sp.plan
    peers = {(i.router, i.neighbour): i for r in sp.routers for i in r.interfaces}
    for r in sp.routers:
        for rt in r.routes:
            want = [(f"to{v}", peers[(r.id, v)].peer_lladdr) for v in hops[(r.id, rt.target)]]
            assert list(rt.nexthops) == want
            tname = t.names[rt.target]
            assert rt.destination in ([f"{plan.loopback(tname)}/128"]
                                      + [str(p) for p in plan.prefixes.get(tname, [])])
        # every other router is reachable: one loopback route each
        assert sum(rt.destination.endswith("/128") for rt in r.routes) == t.num_nodes - 1
    for (u, v), i in peers.items():  # the gateway is the peer's own address and MAC
        back = peers[(v, u)]
        assert i.peer_lladdr == back.lladdr and i.peer_mac == back.mac
        assert i.lladdr != i.peer_lladdr


def test_names_macs_and_seeds():
    t = _topo([(f"r{i}", f"r{(i + 1) % 7}") for i in range(7)] + [("r0", "r3")])
    sp = _spec(t, seed=5)
    macs = [m for r in sp.routers for i in r.interfaces for m in (i.mac,)]
    assert len(macs) == len(set(macs)) == 2 * t.num_links
    assert all(len(i.name) <= 15 for r in sp.routers for i in r.interfaces)
    assert sp.namespaces == [f"tpcabc123-r{i}" for i in range(t.num_nodes)]
    seeds = [r.hash_seed for r in sp.routers]
    assert len(set(seeds)) == len(seeds) and 0 not in seeds
    assert seeds == [r.hash_seed for r in _spec(t, seed=5).routers]  # deterministic
    assert seeds != [r.hash_seed for r in _spec(t, seed=6).routers]
    with pytest.raises(UsageError):
        _spec(t, prefix="Bad prefix")


def test_rates_follow_capacity_and_queues_have_a_floor():
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1e9)
    g.add_edge("b", "c", capacity=2e9)
    g.add_edge("c", "a", capacity=1e9)
    t = read_topology(g, capacity="file")
    sp = _spec(t, link_mbps=2, queue_ms=50)
    rate = {(t.names[i.router], t.names[i.neighbour]): i.rate_bps
            for r in sp.routers for i in r.interfaces}
    assert rate[("a", "b")] == rate[("b", "a")] == 2_000_000
    assert rate[("b", "c")] == rate[("c", "b")] == 4_000_000
    q = {i.rate_bps: i.queue_bytes for r in sp.routers for i in r.interfaces}
    assert q[2_000_000] == 10 * S.PACKET_BYTES  # 50 ms at 2 Mbit/s is 12.5 kB < 10 packets
    assert q[4_000_000] == 25_000
    assert sp.rate_units(4e6) == 2.0


def test_hosts_are_the_first_address_of_each_prefix():
    t = _topo([("a", "b"), ("b", "c"), ("c", "a")])
    plan = default_plan(t, edge_routers=["a", "c"])
    sp = _spec(t, plan=plan)
    for r in sp.routers:
        assert r.hosts == [ipaddress.IPv6Address(int(p.network_address) + 1) for p in r.prefixes]
    assert sp.host("b") == plan.loopback("b")  # no prefix: traffic from the loopback
    assert sp.host("a") == sp.router("a").hosts[0]


def test_build_commands():
    t = _topo([("a", "b"), ("b", "c"), ("c", "a")])
    sp = _spec(t, link_mbps=10)
    phases = S.build_steps(sp)
    kinds = [[type(s).__name__ for s in ph] for ph in phases]
    # namespaces, then their sysctls (seg6 on all/default before any interface exists), then
    # the veths, then seg6 on every interface, then addresses/routes, then queues
    assert kinds == [["Batch"], ["Sysctls"] * 3, ["Batch"], ["Sysctls"] * 3, ["Batch"] * 3,
                     ["Batch"] * 3]
    assert phases[0][0].lines == tuple(f"netns add tpcabc123-r{i}" for i in range(3))
    ns_sysctls = dict(phases[1][0].values)
    assert ns_sysctls["net.ipv6.conf.all.seg6_enabled"] == "1"
    assert ns_sysctls["net.ipv6.conf.default.seg6_enabled"] == "1"
    assert ns_sysctls["net.ipv6.fib_multipath_hash_policy"] == "3"
    assert ns_sysctls["net.ipv6.fib_multipath_hash_fields"] == "0x37"
    assert ns_sysctls["net.ipv4.fib_multipath_hash_seed"] == str(sp.routers[0].hash_seed)
    # one veth pair per link, then the hosts' NIC of every router with hosts (both ends in it)
    assert len(phases[2][0].lines) == 3 + sum(1 for r in sp.routers if r.hosts) == 6
    assert phases[2][0].lines[0] == (
        "link add name to1 address 02:00:00:00:00:01 netns tpcabc123-r0 type veth peer name to0 "
        "address 02:00:00:00:00:02 netns tpcabc123-r1")
    assert phases[2][0].lines[3] == (
        "link add name hostnic address 02:ff:00:00:00:01 netns tpcabc123-r0 type veth peer "
        "name hostgw address 02:ff:00:00:00:02 netns tpcabc123-r0")
    assert dict(phases[3][0].values) == {"net.ipv6.conf.to1.seg6_enabled": "1",
                                         "net.ipv6.conf.to2.seg6_enabled": "1",
                                         "net.ipv6.conf.hostnic.seg6_enabled": "1",
                                         "net.ipv6.conf.hostgw.seg6_enabled": "1"}
    r0 = sp.routers[0]
    ip = phases[4][0]
    assert ip.netns == "tpcabc123-r0" and ip.tool == "ip" and ip.ipv6
    # every locally generated packet leaves by the hosts' NIC and is forwarded from hostgw
    assert ip.lines[-2:] == ("route add ::/0 via fe80::2 dev hostnic table 100",
                             "rule add iif lo table 100 pref 100")
    assert ip.lines[:2] == ("link set dev lo up", f"addr add {r0.loopback}/128 dev lo")
    assert "link set dev to1 mtu 1500 gso_max_segs 1 multicast off up" in ip.lines
    assert "addr add fe80::1/64 dev to1 nodad" in ip.lines
    assert "neigh replace fe80::2 lladdr 02:00:00:00:00:02 dev to1 nud permanent" in ip.lines
    lb1 = sp.plan.loopback(t.names[1])
    assert f"route add {lb1}/128 nexthop via fe80::2 dev to1" in ip.lines
    tc = phases[5][0]
    assert tc.tool == "tc" and tc.lines[:3] == (
        "qdisc add dev to1 root handle 1: htb default 1",
        "class add dev to1 parent 1: classid 1:1 htb rate 10000000bit ceil 10000000bit burst "
        "3028 cburst 3028 quantum 1514",
        "qdisc add dev to1 parent 1:1 handle 2: bfifo limit 62500")
    itf = sp.interface_of_arc(t.arc_of(t.names[0], t.names[1]))
    assert S.queue_line(itf, 0) == "qdisc replace dev to1 parent 1:1 handle 2: bfifo limit 0"


def test_dry_run_script_holds_every_line():
    t = _topo([("a", "b"), ("b", "c"), ("c", "a")])
    sp = _spec(t)
    phases = S.build_steps(sp)
    text = S.render_shell(phases, teardown=S.teardown_steps(sp.namespaces))
    for ph in phases:
        for st in ph:
            if isinstance(st, S.Batch):
                for line in st.lines:
                    assert line in text.splitlines()
            else:
                assert f"ip netns exec {st.netns} sysctl -qw" in text
    assert text.count("<<'EOF'") == text.count("\nEOF") == 1 + 1 + 3 + 3 + 1
    assert "netns del tpcabc123-r2" in text
    assert re.search(r"^ip -6 -n tpcabc123-r1 -batch - <<'EOF'", text, re.M)


def test_nothing_to_emulate():
    with pytest.raises(UsageError):
        _spec(read_topology(nx.path_graph(1)))

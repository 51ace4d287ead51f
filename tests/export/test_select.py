"""tpcstudy.export.select: which paths a host is given (slot 0, sps backups, or the max-flow
LP's), the pairs, capacity units and delays."""

from __future__ import annotations

import ipaddress
import json

import networkx as nx
import pytest

import tpcstudy
from tpcstudy import export as X
from tpcstudy.errors import InputFileError

from helpers import ring5 as _ring

IP = ipaddress.IPv6Address


NET = ipaddress.IPv6Network


def test_ring_paths_by_hand():
    t = _ring()
    table = X.path_table(t, pairs=[("s", "t")])
    (e,) = table.entries
    plan = table.plan
    assert (e.source, e.destination, e.prefix) == ("s", "t", plan.prefixes["t"][0])
    p0, p1 = e.paths
    # slot 0: the IGP shortest path, one segment (the egress)
    assert p0.nodes == ["s", "a", "t"] and p0.waypoints == ["t"]
    assert p0.segments == [plan.loopbacks["t"]]
    assert (p0.bw_mbps, p0.delay_ms, p0.igp_cost) == (1000.0, 3.0, 2.0)
    # slot 1: the other way round, via b (tie with c broken by the smaller id)
    assert p1.nodes == ["s", "b", "c", "t"] and p1.waypoints == ["b", "t"]
    assert p1.segments == [plan.loopbacks["b"], plan.loopbacks["t"]]
    assert (p1.bw_mbps, p1.delay_ms, p1.igp_cost) == (100.0, 12.0, 3.0)
    rows = table.to_rows()
    assert [r["slot"] for r in rows] == [0, 1] and rows[1]["num_segments"] == 2
    assert json.loads(json.dumps(table.to_json()))["entries"][0]["paths"][1]["bw_mbps"] == 100.0


def test_all_pairs_and_limits():
    t = _ring()
    table = X.path_table(t)
    assert len(table) == 5 * 4 and table.sources == ["s", "a", "t", "b", "c"]
    assert all(len(e.paths) == 2 for e in table)  # a ring: two disjoint ways
    assert all(e.paths[0].waypoints == [e.destination] for e in table)
    assert len(table.select(source="a")) == 4
    one = X.path_table(t, paths=1)
    assert all(len(e.paths) == 1 for e in one)
    with pytest.raises(tpcstudy.UsageError, match="1 to 8 paths"):
        X.path_table(t, paths=9)
    with pytest.raises(tpcstudy.UsageError, match="1 to 9 segments"):
        X.path_table(t, k=10)


def test_capacity_units():
    t = _ring()
    t.meta["capacity_unit"] = "kbit/s"
    assert X.path_table(t, pairs=[("s", "t")]).entries[0].paths[1].bw_mbps == 100e3
    u = tpcstudy.read_topology(nx.cycle_graph(4), name="c4")  # uniform capacities
    tab = X.path_table(u, pairs=[("0", "2")])
    assert tab.entries[0].paths[0].bw_mbps == 1000.0 and "1000 Mbit/s" in tab.meta["bw_rule"]
    assert X.path_table(u, link_mbps=0).entries[0].paths[0].bw_mbps == 0.0


def test_pairs_file(tmp_path):
    t = _ring()
    f = tmp_path / "pairs.csv"
    f.write_text("source,destination\n# comment\ns,t\n\n a , c \ns,t\n")
    table = X.path_table(t, pairs=f)
    assert [(e.source, e.destination) for e in table] == [("s", "t"), ("a", "c")]
    # a bad file is a failure at run time (exit 1), naming the file and line
    f.write_text("s,t\ns,nowhere\n")
    with pytest.raises(InputFileError, match=r"pairs.csv:2: router 'nowhere'"):
        X.path_table(t, pairs=f)
    f.write_text("s;t\n")
    with pytest.raises(InputFileError, match=r"pairs.csv:1: expected 'source,destination'"):
        X.path_table(t, pairs=f)
    f.write_text("s,s\n")
    with pytest.raises(InputFileError, match="same router"):
        X.path_table(t, pairs=f)
    f.unlink()
    f.symlink_to("/etc/hostname")
    with pytest.raises(InputFileError, match="symbolic link"):
        X.path_table(t, pairs=f)


def test_select_maxflow_orders_backups_by_lp_flow(zoo_installed):
    """--select maxflow: slot 0 stays the IGP path; the next slots are sr-paths the sr LP over
    the table's pairs puts flow on, largest first, then sps paths; every route is a walk on
    links. With a few pairs (heavy hitters) the LP spreads them over waypoints."""
    from tpcstudy import max_flow, path_table, prune, read_topology

    topo = prune(read_topology(zoo_installed / "Geant2012.gml"))
    edge = topo.edge_routers
    pairs = [(edge[0], edge[3]), (edge[1], edge[4]), (edge[2], edge[5])]
    plain = path_table(topo, k=4, paths=5, pairs=pairs)
    table = path_table(topo, k=4, paths=5, pairs=pairs, select="maxflow")
    assert table.meta["select"] == "maxflow" and "max-flow LP" in table.meta["path_rule"]
    lp = max_flow(topo, pairs, model="sr", k=4)
    flow = {p: f for p, f in zip(lp.paths, lp.flows.tolist())}
    base = {(e.source, e.destination): e for e in plain.entries}
    lp_backups = 0
    for e in table.entries:
        key = (e.source, e.destination)
        assert e.paths[0].waypoints == base[key].paths[0].waypoints == [key[1]]
        slots = [flow.get((key[0], *p.waypoints), 0.0) for p in e.paths[1:]]
        used = [f for f in slots if f > 1e-9]
        assert slots[:len(used)] == sorted(used, reverse=True)  # LP paths first, by flow
        lp_backups += len(used)
        for p in e.paths:
            assert p.nodes[0] == key[0] and p.nodes[-1] == key[1]
            for u, v in zip(p.nodes, p.nodes[1:]):
                topo.arc_of(u, v)  # raises if u-v is not a link
    assert lp_backups >= 1
    assert lp.value > max_flow(topo, pairs, model="ecmp").value  # SR helps these pairs


def test_parallel_links_share_a_hop_by_least_weight():
    """Under --links multigraph a hop over parallel links gives the path the capacity of those
    of least IGP weight together (ECMP spreads over them), their least delay and weight."""
    g = nx.MultiGraph()
    g.add_edge("s", "a", capacity=10.0, weight=1.0, delay=2.0)
    g.add_edge("s", "a", capacity=30.0, weight=1.0, delay=1.0)
    g.add_edge("s", "a", capacity=99.0, weight=5.0, delay=0.5)  # not on the IGP's route
    g.add_edge("a", "t", capacity=100.0, weight=1.0, delay=1.0)
    g.add_edge("s", "b", capacity=100.0, weight=1.0, delay=1.0)
    g.add_edge("b", "t", capacity=100.0, weight=1.0, delay=1.0)
    t = tpcstudy.read_topology(g, capacity="file", weight="file", links="multigraph")
    table = X.path_table(tpcstudy.prune(t), pairs=[("s", "t")])
    via_a = [p for e in table.entries for p in e.paths if p.nodes == ["s", "a", "t"]]
    assert via_a and via_a[0].bw_mbps == pytest.approx(40e-6)  # bit/s -> Mbit/s
    assert via_a[0].delay_ms == pytest.approx(2.0) and via_a[0].igp_cost == pytest.approx(2.0)

"""tpcstudy export: the TPC agent's SRH map values byte by byte (tpc-srh-map.md), validation,
addressing plans, the other formats, Zoo-wide round trips and the CLI."""

from __future__ import annotations

import ipaddress
import json
import os
import random
import struct
import time

import networkx as nx
import pytest

import tpcstudy
from tpcstudy import addressing as A
from tpcstudy import export as X
from tpcstudy.cli import main

IP = ipaddress.IPv6Address
NET = ipaddress.IPv6Network


def _rec(segs, bw=0.0, delay=0.0):
    segs = [IP(s) for s in segs]
    return X.PathRecord(nodes=[], segments=segs, waypoints=[str(s) for s in segs], bw_mbps=bw,
                        delay_ms=delay, igp_cost=0.0)


# ----------------------------------------------------------------- the value layout, by hand
PREFIX = NET("fd00:1:2:3::/64")
W1, W2, EG = IP("fc00::a1"), IP("fc00::b2"), IP("fc00::e9")
PATHS = [_rec([EG], bw=1000, delay=7.4), _rec([W1, W2, EG], bw=155.52, delay=21.6)]


def _expected(value_size: int, weights: bool) -> bytes:
    """The value for PATHS written field by field from the spec's offsets."""
    out = bytearray(value_size)
    struct.pack_into("16s", out, 0, PREFIX.network_address.packed)      # dest
    struct.pack_into("<I", out, 16, 1000)                              # max_reward
    # slot 0 @ 20: srh_id 0, is_valid 1, curr_bw 1000, delay 7 (rounded)
    struct.pack_into("<IIQQ", out, 20, 0, 1, 1000, 7)
    # SRH @ 20 + 24 = 44: nexthdr 0, hdrlen 2*(1+1)=4, type 4, segments_left 1, first_segment 1
    struct.pack_into("<BBBBBBH", out, 44, 0, 4, 4, 1, 1, 0, 0)
    # segments[0] @ 52 stays zero; segments[1] @ 68 = the egress
    struct.pack_into("16s", out, 68, EG.packed)
    # slot 1 @ 212: srh_id 1, valid, bw round(155.52)=156, delay round(21.6)=22
    struct.pack_into("<IIQQ", out, 212, 1, 1, 156, 22)
    # SRH @ 236: n = 3 -> hdrlen 8, segments_left = first_segment = 3
    struct.pack_into("<BBBBBBH", out, 236, 0, 8, 4, 3, 3, 0, 0)
    # segments[0] @ 244 zero; [1] @ 260 = egress (last waypoint), [2] @ 276 = W2, [3] @ 292 = W1
    struct.pack_into("16s", out, 260, EG.packed)
    struct.pack_into("16s", out, 276, W2.packed)
    struct.pack_into("16s", out, 292, W1.packed)
    if weights:
        for i in range(8):  # weight[i] @ 1556 + 12 i: 1.0 = mantissa 2^63, exponent 1024
            struct.pack_into("<QI", out, 1556 + 12 * i, 0x8000000000000000, 1024)
    # last_srtt @ 1652 (exp3_lowest_delay): zero
    return bytes(out)


@pytest.mark.parametrize("variant,size,weights", [
    ("n_rto", 1556, False), ("exp3_lowest_completion", 1652, True),
    ("exp3_lowest_delay", 1684, True)])
def test_value_bytes_by_hand(variant, size, weights):
    got = X.encode_value(PREFIX, PATHS, variant)
    assert len(got) == size == X.VARIANTS[variant].value_size
    assert got == _expected(size, weights)


def test_value_fields_one_by_one():
    v = X.encode_value(PREFIX, PATHS, "exp3_lowest_delay")
    assert v[0:16] == bytes.fromhex("fd000001000200030000000000000000")
    for slot, n in ((0, 1), (1, 3)):
        off = 20 + 192 * slot
        assert struct.unpack_from("<II", v, off) == (slot, 1)
        srh = off + 24
        nexthdr, hdrlen, typ, left, first, flags, tag = struct.unpack_from("<BBBBBBH", v, srh)
        assert (nexthdr, hdrlen, typ, left, first, flags, tag) == (0, 2 * (n + 1), 4, n, n, 0, 0)
        addrs = [v[srh + 8 + 16 * k: srh + 24 + 16 * k] for k in range(10)]
        assert addrs[0] == bytes(16)                       # the kernel fills segments[0]
        assert addrs[1] == EG.packed                       # last waypoint = egress
        assert all(a == bytes(16) for a in addrs[n + 1:])  # unused address slots
    srh1 = 20 + 192 + 24
    assert v[srh1 + 8 + 16 * 3: srh1 + 8 + 16 * 4] == W1.packed  # first hop in segments[n]
    assert v[20 + 192 * 2:1556] == bytes(192 * 6)                # unused slots all zero
    assert all(struct.unpack_from("<QI", v, 1556 + 12 * i) == (1 << 63, 1024) for i in range(8))
    assert v[1652:1684] == bytes(32)                              # last_srtt


def test_decode_is_the_inverse():
    for variant in X.VARIANTS:
        d = X.decode_value(X.encode_value(PREFIX, PATHS, variant), variant)
        assert d.dest == PREFIX.network_address and d.max_reward == 1000 and not d.problems
        assert [p.segments for p in d.paths] == [[EG], [W1, W2, EG]]
        assert [(p.bw_mbps, p.delay_ms) for p in d.paths] == [(1000, 7), (156, 22)]
        if variant != "n_rto":
            assert d.weights == [1.0] * 8
    with pytest.raises(X.ExportError, match="1684 bytes, got 1556"):
        X.decode_value(X.encode_value(PREFIX, PATHS, "n_rto"), "exp3_lowest_delay")
    bad = bytearray(X.encode_value(PREFIX, PATHS, "n_rto"))
    bad[20 + 24 + 8] = 1  # segments[0] of slot 0
    assert any("segments[0]" in p for p in X.decode_value(bytes(bad), "n_rto").problems)


# ----------------------------------------------------------------- validation
def test_segment_limit():
    nine = [f"fc00::{i + 1:x}" for i in range(9)]
    v = X.encode_value(PREFIX, [_rec(nine)], "n_rto")
    assert X.decode_value(v, "n_rto").paths[0].segments == [IP(a) for a in nine]
    assert v[20 + 24 + 1] == 20  # hdrlen 2 * (9 + 1)
    with pytest.raises(X.ExportError, match="10 waypoints .* at most 9"):
        X.encode_value(PREFIX, [_rec(nine + ["fc00::ff"])], "n_rto")


def test_path_limit_and_empty():
    eight = [_rec([f"fc00::{i + 1:x}"]) for i in range(8)]
    assert len(X.decode_value(X.encode_value(PREFIX, eight), "n_rto").paths) == 8
    with pytest.raises(X.ExportError, match="9 paths; the agent holds at most 8"):
        X.encode_value(PREFIX, eight + [_rec(["fc00::99"])])
    with pytest.raises(X.ExportError, match="no segment.*'::'"):
        X.encode_value(PREFIX, [_rec([EG]), _rec([])])
    with pytest.raises(X.ExportError, match="no path"):
        X.encode_value(PREFIX, [])
    with pytest.raises(X.ExportError, match="not a usable IPv6"):
        X.encode_value(PREFIX, [_rec(["::"])])


def test_wide_prefix():
    with pytest.raises(X.ExportError, match=r"fd00:1::/48 is wider than /64.*fd00:1::/64.*"
                                            r"--allow-wide-prefix"):
        X.encode_value(NET("fd00:1::/48"), PATHS)
    v = X.encode_value(NET("fd00:1::/48"), PATHS, allow_wide_prefix=True)
    assert v[:16] == IP("fd00:1::").packed
    X.encode_value(NET("fd00:1:2:3:4::/80"), PATHS)  # inside its first /64: fine


def test_write_refuses_and_writes_nothing(tmp_path):
    t = _ring()
    table = X.path_table(t, pairs=[("s", "t"), ("a", "t")])
    table.entries[1].paths = [_rec([EG])] * 9
    out = tmp_path / "out"
    with pytest.raises(X.ExportError, match="a -> t .*9 paths"):
        X.write_paths(table, out, format=["json", "bpf"])
    assert not out.exists()
    table.entries[1].paths = table.entries[0].paths
    table.entries[1].prefix = NET("fd00:9::/48")
    with pytest.raises(X.ExportError, match="wider than /64"):
        X.write_paths(table, out, format="bpf")
    assert not out.exists()
    X.write_paths(table, out, format="bpf", allow_wide_prefix=True)
    assert sorted(p.name for p in out.iterdir()) == ["bpf-n_rto", "plan.json"]
    # a second export replaces the bpf folder as a whole (no stale router files)
    X.write_paths(table.select(source="s"), out, format="bpf", allow_wide_prefix=True)
    assert sorted(p.name for p in out.iterdir()) == ["bpf-n_rto", "plan.json"]
    assert sorted(p.name for p in (out / "bpf-n_rto").iterdir()) == ["index.json", "s.batch",
                                                                     "s.bin"]
    mask = os.umask(0)
    os.umask(mask)
    assert (out / "plan.json").stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


# ----------------------------------------------------------------- path tables
def _ring(order=None, *, name="ring5"):
    """s - a - t - c - b - s with capacities (bit/s) and delays (ms)."""
    links = [("s", "a", 10e9, 1.0), ("a", "t", 1e9, 2.0), ("t", "c", 100e6, 3.0),
             ("c", "b", 40e9, 4.0), ("b", "s", 2.5e9, 5.0)]
    g = nx.Graph()
    g.add_nodes_from(order or ["s", "a", "t", "b", "c"])
    for u, v, cap, d in (links if order is None else links[::-1]):
        g.add_edge(u, v, capacity=cap, delay=d)
    return tpcstudy.read_topology(g, capacity="zoo", name=name)


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
    f.write_text("s,t\ns,nowhere\n")
    with pytest.raises(tpcstudy.UsageError, match=r"pairs.csv:2: router 'nowhere'"):
        X.path_table(t, pairs=f)
    f.write_text("s;t\n")
    with pytest.raises(tpcstudy.UsageError, match=r"pairs.csv:1: expected 'source,destination'"):
        X.path_table(t, pairs=f)
    f.write_text("s,s\n")
    with pytest.raises(tpcstudy.UsageError, match="same router"):
        X.path_table(t, pairs=f)


# ----------------------------------------------------------------- addressing
def test_default_plan_shape_and_stability():
    t1 = _ring()
    t2 = _ring(order=["c", "t", "b", "a", "s"])
    assert t1.names != t2.names
    p1, p2 = A.default_plan(tpcstudy.prune(t1)), A.default_plan(tpcstudy.prune(t2))
    assert p1.loopbacks == p2.loopbacks and p1.prefixes == p2.prefixes
    for r, a in p1.loopbacks.items():
        assert a in NET("fc00::/16") and int(a) & ((1 << 64) - 1) == 1
        (net,) = p1.prefixes[r]
        assert net.prefixlen == 64 and net.subnet_of(NET("fc00::/7"))
        assert net.network_address.packed[2:8] == a.packed[2:8]  # same hashed bits
    assert len(set(p1.loopbacks.values())) == 5
    # the tables agree too (same routes here; addresses from names only)
    e1 = X.path_table(t1, pairs=[("s", "t")]).entries[0]
    e2 = X.path_table(t2, pairs=[("s", "t")]).entries[0]
    assert e1.prefix == e2.prefix and e1.paths[0].segments == e2.paths[0].segments
    # another topology name, other addresses
    assert A.default_plan(_ring(name="other")).loopbacks["s"] != p1.loopbacks["s"]


def test_default_plan_collisions(monkeypatch):
    real = A._h

    def clashing(*parts):  # every router hashes to the same value on the first attempt
        return bytes(32) if len(parts) == 3 and parts[2] == "0" else real(*parts)

    monkeypatch.setattr(A, "_h", clashing)
    p1 = A.default_plan(_ring())
    p2 = A.default_plan(_ring(order=["c", "t", "b", "a", "s"]))
    assert len(set(p1.loopbacks.values())) == 5 and p1.loopbacks == p2.loopbacks
    assert p1.loopbacks["a"].packed[4:8] == bytes(4)  # 'a' sorts first: it keeps attempt 0


def test_user_plan(tmp_path):
    t = _ring()
    good = {"loopbacks": {r: f"2001:db8::{i + 1}" for i, r in enumerate(t.names)},
            "prefixes": {"t": ["2001:db8:1:1::/64", "2001:db8:1:2::/64"], "a": "2001:db8:2::/64"}}
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(good))
    table = X.path_table(t, plan=f)
    # destinations: the routers the plan gives prefixes to, one entry per prefix
    assert sorted({(e.destination, str(e.prefix)) for e in table}) == [
        ("a", "2001:db8:2::/64"), ("t", "2001:db8:1:1::/64"), ("t", "2001:db8:1:2::/64")]
    assert table.entries[0].paths[0].segments[0] == IP("2001:db8::2")
    # the written plan reads back as the same plan
    X.write_paths(table, tmp_path / "out")
    back = A.read_plan(tmp_path / "out" / "plan.json")
    assert back.loopbacks == table.plan.loopbacks and back.prefixes == table.plan.prefixes

    def bad(change, match):
        d = json.loads(json.dumps(good))
        change(d)
        f.write_text(json.dumps(d))
        with pytest.raises(A.PlanError, match=match) as ei:
            X.path_table(t, plan=f)
        assert str(f) in str(ei.value)

    bad(lambda d: d["loopbacks"].update(s="2001:db8::zz"), r"loopbacks\['s'\] = '2001:db8::zz'")
    bad(lambda d: d["loopbacks"].update(s="10.0.0.1"), "IPv4")
    bad(lambda d: d["loopbacks"].update(s="2001:db8::2"), "given to both")
    bad(lambda d: d["loopbacks"].update(nowhere="2001:db8::99"), "'nowhere' is not in topology")
    bad(lambda d: d["prefixes"].update(t=["2001:db8:1:1::1/64"]), "host bits set")
    bad(lambda d: d["prefixes"].update(a=["2001:db8:1::/48"]), "overlaps")
    bad(lambda d: d["loopbacks"].pop("b"), "no loopback for router 'b'")
    bad(lambda d: d.update(extra=1), "unknown key 'extra'")
    f.write_text("{not json")
    with pytest.raises(A.PlanError, match="plan.json:1: not valid JSON"):
        A.read_plan(f)


# ----------------------------------------------------------------- files and formats
def test_bpf_files_and_inspect(tmp_path):
    t = _ring()
    table = X.path_table(t)
    files = X.write_paths(table, tmp_path, format=["bpf", "json", "ovsdb"],
                          variant="exp3_lowest_completion", pin="/sys/fs/bpf/x/short_dest_map")
    folder = tmp_path / "bpf-exp3_lowest_completion"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{r}.{x}" for r in "satbc" for x in ("batch", "bin")] + ["index.json"])
    assert set(files) >= {tmp_path / "plan.json", tmp_path / "paths.json"}
    batch = (folder / "s.batch").read_text().splitlines()
    cmds = [ln for ln in batch if not ln.startswith("#")]
    assert len(cmds) == 4
    for e, line in zip(table.select(source="s"), cmds):
        tok = line.split()
        assert tok[:6] == ["map", "update", "pinned", "/sys/fs/bpf/x/short_dest_map", "key", "hex"]
        assert bytes(int(x, 16) for x in tok[6:14]) == e.key == e.prefix.network_address.packed[:8]
        assert tok[14:16] == ["value", "hex"] and len(tok[16:]) == 1652
        assert bytes(int(x, 16) for x in tok[16:]) == X.encode_value(e.prefix, e.paths,
                                                                     "exp3_lowest_completion")
    blob = (folder / "s.bin").read_bytes()
    magic, ver, code, size, count, mapname, loop = struct.unpack_from("<8sIIII16s16s", blob)
    assert (magic, ver, code, size, count) == (b"TPCSRHMP", 1, 1, 1652, 4)
    assert mapname.rstrip(b"\0") == b"short_dest_map" and loop == table.plan.loopbacks["s"].packed
    assert len(blob) == 56 + 4 * (8 + 1652)
    for path in (folder / "s.bin", folder / "s.batch"):
        res = X.inspect(path)
        assert res["variant"] == "exp3_lowest_completion"
        assert [(x["destination"], [p["waypoints"] for p in x["paths"]]) for x in res["entries"]] \
            == [(e.destination, [p.waypoints for p in e.paths]) for e in table.select(source="s")]
        assert not any(x["problems"] for x in res["entries"])
    assert X.inspect(folder / "s.bin")["source"] == "s"
    text = X.format_inspect(X.inspect(folder / "s.bin"))
    assert "slot 1: bw 100 Mbit/s, delay 12 ms, 2 segments" in text
    # ovsdb: one row per unordered pair, flow sorted, segs without the destination router
    rows = json.loads((tmp_path / "ovsdb-paths.json").read_text())["rows"]
    assert len(rows) == 10
    plan = table.plan
    for row in rows:
        flow = json.loads(row["flow"])
        assert flow == sorted(flow)
        ra, rb = (plan.router_of(a) for a in flow)
        pref = json.loads(row["prefixes"])
        assert pref[0] == [{"address": str(plan.prefixes[ra][0].network_address),
                            "prefixlen": 64}]
        segs = json.loads(row["segments"])
        (e,) = [e for e in table if (e.source, e.destination) == (ra, rb)]
        assert segs[0] == {"segs": [], "bw": round(e.paths[0].bw_mbps),
                           "delay": round(e.paths[0].delay_ms)}
        assert [s["segs"] for s in segs] == [[str(a) for a in p.segments[:-1]] for p in e.paths]
    ops = json.loads((tmp_path / "ovsdb-transact.json").read_text())
    assert ops[0] == "SRN" and ops[1]["op"] == "insert" and ops[1]["table"] == "Paths"
    with pytest.raises(tpcstudy.UsageError, match="pinned map path"):
        X.write_paths(table, tmp_path, format="bpf", pin="/sys/fs/bpf/my map")


# ----------------------------------------------------------------- the whole Zoo
def test_zoo_round_trip(zoo_installed):
    """Every usable Zoo topology: table, bpf binary (exp3_lowest_delay), decode, compare.

    Kdl (754 routers, ~480 edge routers) is limited to three sources to keep the test short.
    """
    t0 = time.time()
    n_topo = n_entries = 0
    v = X.VARIANTS["exp3_lowest_delay"]
    for topo in tpcstudy.read_topologies("zoo"):
        t = tpcstudy.prune(topo)
        edge = t.edge_routers
        if len(edge) < 2:
            continue
        pairs = None
        if len(edge) > 200:
            srcs = random.Random(0).sample(edge, 3)
            pairs = [(s, d) for s in srcs for d in edge if s != d]
        table = X.path_table(t, k=4, paths=5, pairs=pairs)
        X.validate_table(table)
        for name, blob in X._bpf_files(table, v, "/sys/fs/bpf/tpc/short_dest_map"):
            if not name.endswith(".bin"):
                continue
            head, recs = X._records_of_binary(blob, name)
            src = table.plan.router_of(IP(head["source_loopback"]))
            mine = table.select(source=src).entries
            assert len(recs) == len(mine)
            for (key, val), e in zip(recs, mine):
                assert len(val) == 1684 and key == e.key
                d = X.decode_value(val, v.name)
                assert not d.problems and d.dest == e.prefix.network_address
                assert [p.segments for p in d.paths] == [p.segments for p in e.paths]
                assert [p.bw_mbps for p in d.paths] == [round(p.bw_mbps) for p in e.paths]
                assert [p.delay_ms for p in d.paths] == [round(p.delay_ms) for p in e.paths]
        for e in table:  # the agent's invariants, from the table side
            assert 1 <= len(e.paths) <= 5 and e.paths[0].waypoints == [e.destination]
            assert all(p.waypoints[-1] == e.destination and 1 <= len(p.segments) <= 4
                       for p in e.paths)
            assert len({tuple(p.waypoints) for p in e.paths}) == len(e.paths)
            assert all(p.nodes[0] == e.source and p.nodes[-1] == e.destination for p in e.paths)
        n_topo += 1
        n_entries += len(table)
    assert n_topo == 223 and n_entries > 100_000
    print(f"zoo round trip: {n_topo} topologies, {n_entries} entries, {time.time() - t0:.1f} s")


# ----------------------------------------------------------------- the CLI
def test_cli_bpf_and_inspect(zoo_installed, tmp_path, capsys):
    out = tmp_path / "ab"
    rc = main(["export", "--topo", "zoo/Abilene", "--format", "bpf", "--variant",
               "exp3_lowest_delay", "--out", str(out)])
    assert rc == 0
    capsys.readouterr()
    folder = out / "bpf-exp3_lowest_delay"
    table = X.path_table(tpcstudy.read_topology("zoo/Abilene"))
    bins = sorted(folder.glob("*.bin"))
    assert len(bins) == len(table.sources) == 5
    for b in bins:
        blob = b.read_bytes()
        _, _, _, size, count, _, _ = struct.unpack_from("<8sIIII16s16s", blob)
        assert size == 1684 and len(blob) == 56 + count * (8 + 1684)
        assert main(["export", "--inspect", str(b), "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        mine = table.select(source=res["source"]).entries
        assert len(res["entries"]) == count == len(mine)
        for got, e in zip(res["entries"], mine):
            assert got["destination"] == e.destination and got["key"] == e.key.hex()
            assert [p["segments"] for p in got["paths"]] == [[str(a) for a in p.segments]
                                                            for p in e.paths]
            assert [p["waypoints"] for p in got["paths"]] == [p.waypoints for p in e.paths]
            assert [p["delay_ms"] for p in got["paths"]] == [round(p.delay_ms) for p in e.paths]
            assert got["weights"] == [1.0] * 8 and got["last_srtt"] == [0] * 8
    for batch in folder.glob("*.batch"):
        for line in batch.read_text().splitlines():
            if not line.startswith("#"):
                assert len(line.split()[line.split().index("value") + 2:]) == 1684
    assert main(["export", "--inspect", str(bins[0])]) == 0
    text = capsys.readouterr().out
    assert "variant exp3_lowest_delay, map short_dest_map" in text and "slot 0:" in text
    # errors: a clear message, exit code 2
    assert main(["export", "--topo", "zoo/Abilene", "--out", str(tmp_path / "x"),
                 "--paths", "9"]) == 2
    assert "1 to 8 paths" in capsys.readouterr().err
    assert main(["export", "--inspect", str(tmp_path / "nope.bin")]) == 2


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

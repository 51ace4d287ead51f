"""tpcstudy.export.writer and the formats (bpf, json, ovsdb): staged writes that leave nothing
behind on an error, the files byte for byte, and a Zoo-wide round trip through the binary
format and back."""

from __future__ import annotations

import ipaddress
import json
import os
import random
import struct
import time

import pytest

import tpcstudy
from tpcstudy import export as X
from tpcstudy.errors import ExportError
from tpcstudy.export import bpf

from helpers import path_record as _rec
from helpers import ring5 as _ring

IP = ipaddress.IPv6Address


NET = ipaddress.IPv6Network


W1, W2, EG = IP("fc00::a1"), IP("fc00::b2"), IP("fc00::e9")


def test_write_refuses_and_writes_nothing(tmp_path):
    t = _ring()
    table = X.path_table(t, pairs=[("s", "t"), ("a", "t")])
    table.entries[1].paths = [_rec([EG])] * 9
    out = tmp_path / "out"
    with pytest.raises(ExportError, match="a -> t .*9 paths"):
        X.write_paths(table, out, formats=["json", "bpf"])
    assert not out.exists()
    table.entries[1].paths = table.entries[0].paths
    table.entries[1].prefix = NET("fd00:9::/48")
    with pytest.raises(ExportError, match="wider than /64"):
        X.write_paths(table, out, formats="bpf")
    assert not out.exists()
    X.write_paths(table, out, formats="bpf", allow_wide_prefix=True)
    assert sorted(p.name for p in out.iterdir()) == ["bpf-n_rto", "plan.json"]
    # a second export replaces the bpf folder as a whole (no stale router files)
    X.write_paths(table.select(source="s"), out, formats="bpf", allow_wide_prefix=True)
    assert sorted(p.name for p in out.iterdir()) == ["bpf-n_rto", "plan.json"]
    assert sorted(p.name for p in (out / "bpf-n_rto").iterdir()) == ["index.json", "s.batch",
                                                                     "s.bin"]
    mask = os.umask(0)
    os.umask(mask)
    assert (out / "plan.json").stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


# ----------------------------------------------------------------- files and formats
def test_bpf_files_and_inspect(tmp_path):
    t = _ring()
    table = X.path_table(t)
    files = X.write_paths(table, tmp_path, formats=["bpf", "json", "ovsdb"],
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
        res = X.inspect_file(path)
        assert res["variant"] == "exp3_lowest_completion"
        assert [(x["destination"], [p["waypoints"] for p in x["paths"]]) for x in res["entries"]] \
            == [(e.destination, [p.waypoints for p in e.paths]) for e in table.select(source="s")]
        assert not any(x["problems"] for x in res["entries"])
    assert X.inspect_file(folder / "s.bin")["source"] == "s"
    text = X.format_inspection(X.inspect_file(folder / "s.bin"))
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
        X.write_paths(table, tmp_path, formats="bpf", pin="/sys/fs/bpf/my map")


# ----------------------------------------------------------------- the whole Zoo
@pytest.mark.slow
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
        for name, blob in bpf.render(table, v, "/sys/fs/bpf/tpc/short_dest_map"):
            if not name.endswith(".bin"):
                continue
            head, recs = bpf.records_of_binary(blob, name)
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

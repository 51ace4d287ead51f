"""The emulator on a real kernel (root): builds, routes, ECMP, verification, throughput against the
LP, failover, and teardown whatever happens. Skipped with the reason without root or kernel
features; failing instead with TPCSTUDY_EMULATE_REQUIRED=1 (CI)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest

from tpcstudy import default_plan, path_table, prune, read_topology, write_paths
from tpcstudy.emulate.experiments.failover import (
    FailoverSettings,
    failover_cases,
    recovery_summary,
    run_failover_case,
)
from tpcstudy.emulate.experiments.throughput import ThroughputSettings, measure_models
from tpcstudy.emulate.experiments.verify import check_maps, probe_table, read_table
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.handmade import six_paths
from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix, read_records
from tpcstudy.emulate.network.spec import Route, network_spec

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]

ENV = dict(os.environ, PYTHONSAFEPATH="1")


def _abilene():
    return prune(read_topology("zoo/Abilene"))


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "tpcstudy", "emulate", *args],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONSAFEPATH="1"),
                          **kw)


# ----------------------------------------------------------------- build, routes, ECMP
def test_build_routes_and_teardown(zoo_installed):
    t = _abilene()
    spec = network_spec(t, prefix=new_prefix())
    with Emulation(spec) as emu:
        assert N.list_namespaces(spec.prefix) == sorted(spec.namespaces)
        assert [r["prefix"] for r in read_records()] == [spec.prefix]
        r = spec.router("Chicago")
        assert N.read_sysctl("net.ipv6.conf.all.seg6_enabled", netns=r.netns) == "1"
        for i in r.interfaces:  # seg6 on every interface, from 'default' and set again
            assert N.read_sysctl(f"net.ipv6.conf.{i.name}.seg6_enabled", netns=r.netns) == "1"
        seeds = {N.read_sysctl("net.ipv4.fib_multipath_hash_seed", netns=x.netns)
                 for x in spec.routers}
        assert len(seeds) == len(spec.routers)  # a different ECMP hash seed per namespace
        # the kernel's routing table holds exactly the spec's next hops
        dump = subprocess.run(["ip", "-n", r.netns, "-j", "-6", "route", "show"],
                              capture_output=True, text=True, check=True).stdout
        kernel = {}
        for e in json.loads(dump):
            hops = e.get("nexthops") or [{"gateway": e.get("gateway"), "dev": e.get("dev")}]
            if e.get("gateway") or e.get("nexthops"):
                kernel[e["dst"]] = sorted((h["dev"], h["gateway"]) for h in hops)
        want = {rt.destination.replace("/128", ""): sorted(rt.nexthops) for rt in r.routes}
        assert kernel == want
        emu.wait_quiet()
        # a datagram from every router's host address reaches every other router's
        names = list(t.names)
        got = _exchange(emu, names)
        assert got == {(a, b) for a in names for b in names if a != b}
        assert emu.build_seconds < 10
    assert N.list_namespaces(spec.prefix) == []
    assert read_records() == []


def _exchange(emu, names) -> set:
    """Send one datagram from every router's host address to every other's; the
    ``(source, destination)`` pairs whose datagram arrived (read until all did or 3 s)."""
    spec = emu.spec
    switch = N.NetnsSwitch()
    rx = {}
    try:
        for b in names:
            rx[b] = switch.socket_in(spec.router(b).netns, socket.AF_INET6, socket.SOCK_DGRAM)
            rx[b].bind((str(spec.host(b)), 40001))
            rx[b].settimeout(0.0)
        for i, a in enumerate(names):
            s = switch.socket_in(spec.router(a).netns, socket.AF_INET6, socket.SOCK_DGRAM)
            s.bind((str(spec.host(a)), 0))
            for b in names:
                if b != a:
                    s.sendto(i.to_bytes(2, "big"), (str(spec.host(b)), 40001))
            s.close()
        got = set()
        want = len(names) * (len(names) - 1)
        deadline = time.monotonic() + 3.0
        while len(got) < want and time.monotonic() < deadline:
            for b, r in rx.items():
                try:
                    got.add((names[int.from_bytes(r.recv(8), "big")], b))
                except BlockingIOError:
                    pass
        return got
    finally:
        for r in rx.values():
            r.close()
        switch.close()


def _wait_counted(emu, before, arcs, n: int, timeout: float = 3.0):
    """Poll the link counters until ``n`` packets crossed the ``arcs`` (or the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        after = emu.tx_packets()
        if sum(after[a] - before[a] for a in arcs) >= n or time.monotonic() > deadline:
            return after
        time.sleep(0.02)


def _udp_flows(emu, src: str, dst: str, n: int) -> None:
    spec = emu.spec
    with N.enter(spec.router(dst).netns):
        rx = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    rx.bind((str(spec.host(dst)), 40000))
    socks = []
    with N.enter(spec.router(src).netns):
        for _ in range(n):
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            s.bind((str(spec.host(src)), 0))
            s.connect((str(spec.host(dst)), 40000))
            socks.append(s)
    for i, s in enumerate(socks):
        s.send(b"x")
        s.close()
        if i % 50 == 49:  # paced: 800 at once can overflow the first hop's 62.5 kB queue
            time.sleep(0.005)
    return rx


def _clos():
    g = nx.Graph()
    g.add_edges_from([("s", "a"), ("s", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"),
                      ("c", "t"), ("d", "t")])
    return read_topology(g)


def test_ecmp_splits_evenly_and_independently_per_hop():
    # s -> {a, b} -> {c, d} -> t: 4 equal-cost paths. With the 5-tuple hash and a seed per
    # namespace, each hop splits about evenly whatever the hop before chose, as the LPs assume.
    t = _clos()
    plan = default_plan(t, edge_routers=["s", "t"])
    spec = network_spec(t, plan, prefix=new_prefix())
    n = 800
    last = [t.arc_of("c", "t"), t.arc_of("d", "t")]
    with Emulation(spec) as emu:
        emu.wait_quiet()
        before = emu.tx_packets()
        rx = _udp_flows(emu, "s", "t", n)
        after = _wait_counted(emu, before, last, n)  # every datagram through the last hop
        rx.close()
    d = {(t.names[t.arc_src[a]], t.names[t.arc_dst[a]]): after[a] - before[a] for a in after}
    assert d[("s", "a")] + d[("s", "b")] == n
    assert d[("c", "t")] + d[("d", "t")] == n
    assert abs(d[("s", "a")] - n / 2) < 4 * (n * 0.25) ** 0.5, d  # 4 sigma of a fair coin
    for x in "ab":  # the second hop splits what it got evenly, independently of the first
        got = d[("s", x)]
        for y in "cd":
            assert abs(d[(x, y)] - got / 2) < 4 * (got * 0.25) ** 0.5, d


# ----------------------------------------------------------------- verification
@pytest.fixture(scope="module")
def abilene_table(tmp_path_factory, zoo_installed):
    t = _abilene()
    out = tmp_path_factory.mktemp("abilene-table")
    write_paths(path_table(t), out, formats=["json", "bpf"])
    write_paths(path_table(t), out, formats=["bpf"], variant="exp3_lowest_delay")
    return t, out


def test_verify_exported_table(abilene_table):
    t, table = abilene_table
    plan, paths, problems = read_table(table, t)
    assert problems == [] and len(paths) >= 20
    with Emulation(network_spec(t, plan, prefix=new_prefix())) as emu:
        res = probe_table(emu, paths, probes=6)
    assert [r for r in res if r["status"] != "ok"] == []
    assert all(r["delivered"] == 6 and r["arcs_crossed"] >= 1 for r in res)
    maps = check_maps(table)
    assert len(maps) == 10  # 5 sources x 2 variants
    assert all(m["loaded"] and m["identical"] for m in maps), maps
    assert {m["value_size"] for m in maps} == {1556, 1684}


def test_verify_catches_wrong_routes_and_maps(abilene_table, tmp_path):
    t, table = abilene_table
    plan, paths, _ = read_table(table, t)
    spec = network_spec(t, plan, prefix=new_prefix())
    # break one route: the source of a default path sends that path's packets to a neighbour
    # off its DAG
    hit = None
    for p in paths:
        if p.slot != 0:
            continue
        r = spec.router(p.source)
        k, rt = next((k, rt) for k, rt in enumerate(r.routes)
                     if rt.target == t.index_of(p.destination) and rt.destination.endswith("/128"))
        used = {dev for dev, _ in rt.nexthops}
        spare = [i for i in r.interfaces if i.name not in used]
        if spare:
            r.routes[k] = Route(rt.destination, ((spare[0].name, spare[0].peer_lladdr),),
                                rt.target)
            hit = p
            break
    assert hit is not None
    with Emulation(spec) as emu:
        res = probe_table(emu, paths, probes=4, timeout=0.5)
    bad = [r for r in res if r["status"] != "ok"]
    assert any(r["source"] == hit.source and r["slot"] == 0
               and r["destination"] == hit.destination for r in bad)
    for r in bad:  # only paths that use the broken route (a segment towards that router)
        assert hit.destination in r["waypoints"].split()
        assert r["off_dag_arcs"] or r["delivered"] < 4
    # a changed byte in a batch file is caught by the byte comparison
    bpf = table / "bpf-n_rto"
    broken = tmp_path / "table"
    subprocess.run(["cp", "-r", str(table), str(broken)], check=True)
    f = sorted((broken / "bpf-n_rto").glob("*.bin"))[0]
    data = bytearray(f.read_bytes())
    data[-1] ^= 1
    f.write_bytes(bytes(data))
    maps = check_maps(broken)
    assert sum(not m["identical"] for m in maps) == 1
    index = json.loads((broken / "bpf-n_rto" / "index.json").read_text())
    owner = [src for src, info in index["sources"].items() if info["binary"] == f.name]
    assert [m["source"] for m in maps if not m["identical"]] == owner
    assert (bpf / f.name).read_bytes() != f.read_bytes()  # the original table is untouched


def test_verify_cli(abilene_table, tmp_path):
    t, table = abilene_table
    p = _cli("verify", "--topo", "zoo/Abilene", "--table", str(table), "--probes", "4",
             "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr + p.stdout
    assert "entries delivered on model links: 20/20" in p.stdout
    assert "loaded 10/10, byte-identical 10/10" in p.stdout
    rows = _csv(tmp_path / "results.csv")
    assert sum(r["check"] == "map" and r["identical"] == "true" for r in rows) == 10
    assert all(r["status"] == "ok" for r in rows)


# ----------------------------------------------------------------- throughput vs the LP
def test_six_paths_plain_and_sr_against_the_lp():
    sc = six_paths()
    spec = network_spec(sc.topology, sc.plan, prefix=new_prefix(), link_mbps=10)
    st = ThroughputSettings(models=("ecmp", "sr"), per_pair=4, warmup=1.5, seconds=4)
    with Emulation(spec) as emu:
        rows = measure_models(emu, sc.pairs, st, base={"scenario": "six-paths", "heavy": "",
                                                        "seed": ""})
    by = {r["model"]: r for r in rows}
    assert by["ecmp"]["lp_value"] == pytest.approx(1.0)
    assert by["sr"]["lp_value"] == pytest.approx(6.0)
    assert by["ecmp"]["connections"] == by["sr"]["connections"] == 16
    for r in rows:  # the goodput fills the LP's capacity up to the headers
        assert r["status"] == "ok" and r["failed_connections"] == 0, r
        assert r["ratio"] / r["ceiling"] > 0.9, r
        assert r["ratio"] > 0.85, r
    assert by["sr"]["measured_gain"] > 5.2


def test_abilene_throughput_cli(tmp_path, zoo_installed):
    out = tmp_path / "run"
    p = _cli("--topo", "zoo/Abilene", "--heavy", "20", "--models", "ecmp,sr,multipath",
             "--seconds", "3", "--warmup", "1.5", "--connections", "8", "--out", str(out),
             "--plot", timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["model"]: r for r in _csv(out / "results.csv")}
    assert set(rows) == {"ecmp", "sr", "multipath"}
    for r in rows.values():
        assert r["status"] == "ok", r
        assert float(r["ratio"]) / float(r["ceiling"]) > 0.85, r
    meta = json.loads((out / "meta.json").read_text())
    cfg = meta["study"]["config"]
    assert cfg["system"]["kernel"] == os.uname().release
    assert cfg["system"]["namespace_sysctls"]["net.ipv6.conf.default.seg6_enabled"] == "1"
    # --link-mbps auto (the default): the tests' calibration leaves room for the top rate
    assert cfg["network"]["link_mbps"] == "auto" and meta["study"]["seeds"] == [0]
    assert cfg["network"]["cpu_budget"] == 0.6
    for r in rows.values():  # a CPU-bound first attempt (other work) is run at half the rate
        assert r["attempt"] == "1" and float(r["link_mbps"]) == 10.0 or (
            r["attempt"] == "2" and float(r["link_mbps"]) <= 8.0), r
        assert "round trip" in r["settings"] and "1.5 s warm-up, 3 s window" in r["settings"]
    assert (out / "emulation-throughput.png").is_file()
    # resumable: a second run finds every draw stored and builds nothing
    p2 = _cli("--topo", "zoo/Abilene", "--heavy", "20", "--models", "ecmp,sr,multipath",
              "--seconds", "3", "--warmup", "1.5", "--connections", "8", "--out", str(out))
    assert p2.returncode == 0 and "already measured" in p2.stderr


def _csv(path: Path):
    import csv

    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ----------------------------------------------------------------- failover
def test_failover_changers_beat_plain_tcp(zoo_installed):
    t = _abilene()
    st = FailoverSettings(runs=2, fail_after=1.0, restore_after=2.5, observe=4.0)
    cases, _ = failover_cases(t, st, seed=1)
    rows = []
    with Emulation(network_spec(t, prefix=new_prefix())) as emu:
        emu.wait_quiet()
        for c in cases:
            rows += run_failover_case(emu, c, st, scenario="Abilene", seed=1)
    assert all(r["status"] == "ok" for r in rows), rows
    med = {s["strategy"]: s["median"] for s in recovery_summary(rows)}
    # Linux's 200 ms minimum RTO: TimeoutChanger(100 ms) moves before the first RTO, whose
    # retransmission takes the backup; NRTOChanger(3) after 0.2 + 0.4 + 0.8 s; plain TCP waits
    # for the link (2.5 s) and its next retransmission
    assert 0.15 < med["timeout"] < 0.6
    assert 1.2 < med["nrto"] < 2.2
    assert med["plain"] > 2.5
    assert all(r["moves"] >= 1 for r in rows if r["strategy"] != "plain")


# ----------------------------------------------------------------- teardown on every exit
_HOLD = """
import sys, time, tpcstudy
from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix
from tpcstudy.emulate.network.handmade import six_paths
from tpcstudy.emulate.network.spec import network_spec
sc = six_paths()
with Emulation(network_spec(sc.topology, sc.plan, prefix=new_prefix())) as emu:
    emu.spawn([sys.executable, "-c", "import time; time.sleep(600)"])
    print(emu.spec.prefix, flush=True)
    time.sleep(600)
"""


def _hold() -> "tuple[subprocess.Popen, str]":
    p = subprocess.Popen([sys.executable, "-c", _HOLD], stdout=subprocess.PIPE, text=True,
                         env=ENV)
    prefix = p.stdout.readline().strip()
    assert prefix and len(N.list_namespaces(prefix)) == 16
    return p, prefix


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_tear_down(sig):
    p, prefix = _hold()
    try:
        child = next(r for r in read_records() if r["prefix"] == prefix)["processes"][0]["pid"]
        p.send_signal(sig)
        code = p.wait(timeout=30)
        if sig == signal.SIGTERM:
            assert code == 143
        assert N.list_namespaces(prefix) == []
        assert all(r["prefix"] != prefix for r in read_records())
        assert not N.process_alive(child)  # the run's own processes were killed
    finally:
        p.kill()
        p.wait()
        p.stdout.close()


def test_sigkill_then_clean_removes_only_that_run():
    p, prefix = _hold()
    record = next(r for r in read_records() if r["prefix"] == prefix)
    child = record["processes"][0]["pid"]
    # a namespace with the same tag that belongs to no run record must survive the clean
    decoy = new_prefix() + "decoy"
    N.run_batch("ip", [f"netns add {decoy}"])
    try:
        p.kill()
        p.wait(timeout=30)
        assert len(N.list_namespaces(prefix)) == 16  # SIGKILL: no teardown ran
        time.sleep(0.2)
        c = _cli("clean")
        assert c.returncode == 0, c.stderr
        assert f"{prefix}: run {p.pid} is gone: removed 16 namespaces" in c.stdout
        assert N.list_namespaces(prefix) == []
        assert N.list_namespaces(decoy) == [decoy]
        assert not N.process_alive(child)  # the traffic process died with its parent
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
        N.run_batch("ip", [f"netns del {decoy}"], force=True)

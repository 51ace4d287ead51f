"""``tpcstudy agent update`` on an emulated host (root): two live TCP connections of Chicago's
cgroup, then a new table in which one destination's first two paths trade slots. The
connection whose slot changed moves to the new slot 0 at once (its next bytes cross the other
path's links), the other keeps its path; ``status`` counts one ``repathed`` and one
``update_kept`` and shows generation 2. Swapping back with ``--on-update keep`` leaves the moved
connection where it is (``update_deferred``) until its next RTO."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
import sys

import pytest

from tpcstudy import path_table, prune, read_plan, read_topology, write_paths
from tpcstudy.emulate.network.lifecycle import Emulation, cgroup_base, new_prefix
from tpcstudy.emulate.network.spec import network_spec
from tpcstudy.export.layout import SLOT_SIZE, SLOTS_OFFSET

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]
ENV = dict(os.environ, PYTHONSAFEPATH="1")

_DRIVER = r"""
import json, os, socket, subprocess, sys, threading, time
from tpcstudy.cli import main
from tpcstudy.linux import cgroup_of, join_cgroup
from tpcstudy.emulate.network.kernel import NetnsSwitch, interface_counters
A = json.loads(sys.argv[1])
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
assert main(["agent", "load", "--table", A["t1"], "--host", "Chicago", "--cgroup", A["cgroup"],
             "--netns", A["netns"], "--name", "u1"]) == 0
sw = NetnsSwitch()
home = cgroup_of()
conns, got = {}, {}
for tag in ("moved", "kept"):
    ls = sw.socket_in(A[tag]["ns"])
    ls.bind((A[tag]["dst"], 0)); ls.listen(1)
    join_cgroup(A["cgroup"])
    c = sw.socket_in(A["netns"])
    join_cgroup(home)
    c.bind((A["src"], 0)); c.connect((A[tag]["dst"], ls.getsockname()[1]))
    s, _ = ls.accept()
    got[tag] = 0
    def drain(s=s, tag=tag):
        while True:
            b = s.recv(65536)
            if not b:
                break
            got[tag] += len(b)
    threading.Thread(target=drain, daemon=True).start()
    conns[tag] = c

def arcs():
    nss = sorted({ns for ns, _ in A["arcs"].values()})
    c = interface_counters(nss)
    return {k: c[ns][dev][2] for k, (ns, dev) in A["arcs"].items()}

def send(tag, n=300_000):
    want = got[tag] + n
    before = arcs()
    conns[tag].sendall(bytes(n))
    t = time.monotonic()
    while got[tag] < want and time.monotonic() - t < 30:
        time.sleep(0.01)
    after = arcs()
    return {k: after[k] - before[k] for k in after}

def status():
    from tpcstudy.hostagent import loader
    return loader.status(loader.read_saved("u1"))

OUT = {"phase1": [send("moved"), send("kept")]}
u = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "update", "u1", "--table",
                    A["t2"], "--json"], capture_output=True, text=True)
OUT["update"] = json.loads(u.stdout) if u.returncode == 0 else u.stderr
OUT["moved"] = send("moved")
OUT["kept"] = send("kept")
OUT["status"] = status()
u = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "update", "u1", "--table",
                    A["t1"], "--on-update", "keep"], capture_output=True, text=True)
OUT["back"] = [u.returncode, u.stdout + u.stderr]
OUT["moved_keep"] = send("moved")
OUT["status_keep"] = status()
st = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "status"], capture_output=True,
                    text=True)
OUT["status_text"] = st.stdout
for c in conns.values():
    c.close()
assert main(["agent", "unload", "u1"]) == 0
OUT["pins"] = sorted(p for p in os.listdir("/sys/fs/bpf") if p not in ("progs.debug",
                                                                        "maps.debug"))
print("RESULT " + json.dumps(OUT), flush=True)
"""


def _swap_first_two_slots(value: bytes) -> bytes:
    v = bytearray(value)
    a, b = SLOTS_OFFSET, SLOTS_OFFSET + SLOT_SIZE
    s0, s1 = bytearray(v[a:a + SLOT_SIZE]), bytearray(v[b:b + SLOT_SIZE])
    s0[0:4], s1[0:4] = (1).to_bytes(4, "little"), (0).to_bytes(4, "little")  # srh_id
    v[a:a + SLOT_SIZE], v[b:b + SLOT_SIZE] = s1, s0
    return bytes(v)


def test_agent_update_moves_only_the_connection_whose_path_left(tmp_path, zoo_installed):
    t = prune(read_topology("zoo/Abilene"))
    t1 = tmp_path / "t1"
    write_paths(path_table(t), t1, formats=["json", "bpf"])
    doc = json.loads((t1 / "paths.json").read_text())
    mine = [e for e in doc["entries"] if e["source"] == "Chicago"]
    moved = next(e for e in mine if len(e["paths"]) >= 2)
    kept = next(e for e in mine if e is not moved)
    # the new table: the moved destination's first two paths trade slots
    t2 = tmp_path / "t2"
    shutil.copytree(t1, t2)
    batch = t2 / "bpf-n_rto" / "Chicago.batch"
    key = ipaddress.IPv6Network(moved["prefix"]).network_address.packed[:8].hex(" ")
    lines = []
    for ln in batch.read_text().splitlines():
        if ln.startswith("map update") and f"key hex {key} value" in ln:
            head, _, val = ln.partition(" value hex ")
            new = _swap_first_two_slots(bytes.fromhex(val))
            ln = f"{head} value hex {new.hex(' ')}"
        lines.append(ln)
    batch.write_text("\n".join(lines) + "\n")
    plan = read_plan(t1 / "plan.json")
    spec = network_spec(t, plan, prefix=new_prefix())

    def arc(a, b):
        r = spec.router(a)
        i = next(i for i in r.interfaces if t.names[i.neighbour] == b)
        return r.netns, i.name

    p0, p1 = (moved["paths"][i]["nodes"] for i in (0, 1))
    k0 = kept["paths"][0]["nodes"]
    arcs = {f"{a}>{b}": arc(a, b) for route in (p0, p1, k0) for a, b in zip(route, route[1:])}
    with Emulation(spec) as emu:
        cg = emu.cgroup("Chicago")
        emu.wait_quiet()

        def where(e):
            return {"ns": spec.router(e["destination"]).netns,
                    "dst": str(ipaddress.IPv6Network(e["prefix"]).network_address + 1)}
        args = {"t1": str(t1), "t2": str(t2), "cgroup": str(cg), "arcs": arcs,
                "netns": spec.router("Chicago").netns, "src": str(spec.host("Chicago")),
                "moved": where(moved), "kept": where(kept)}
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                            "-c", _DRIVER, json.dumps(args)], capture_output=True, text=True,
                           env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path / "run")), timeout=300)
        assert p.returncode == 0, p.stderr[-3000:] + p.stdout[-2000:]
        out = json.loads(next(ln for ln in p.stdout.splitlines()
                              if ln.startswith("RESULT "))[7:])
    assert not cgroup_base(spec.prefix).exists()
    only0 = [f"{a}>{b}" for a, b in zip(p0, p0[1:]) if f"{a}>{b}" not in
             {f"{x}>{y}" for x, y in zip(p1, p1[1:])}]
    only1 = [f"{a}>{b}" for a, b in zip(p1, p1[1:]) if f"{a}>{b}" not in
             {f"{x}>{y}" for x, y in zip(p0, p0[1:])}]
    assert only0 and only1
    before = out["phase1"][0]
    assert all(before[k] > 250_000 for k in only0)  # slot 0 of the first table: p0
    up = out["update"]
    assert isinstance(up, dict), up
    assert up["generation"] == 2 and up["diff"]["changed"] == 1 and up["swap_ms"] < 50
    # after the update: the moved connection crosses p1's links, no longer p0's
    assert all(out["moved"][k] > 250_000 for k in only1), (out["moved"], out["status"]["counters"])
    assert all(out["moved"][k] < 50_000 for k in only0), out["moved"]
    # the other kept its path
    assert all(out["kept"][f"{a}>{b}"] > 250_000 for a, b in zip(k0, k0[1:]))
    c = out["status"]["counters"]
    assert c["repathed"] == 1 and c["update_kept"] == 1 and c["update_deferred"] == 0
    assert out["status"]["generation"] == 2
    # back to the first table with --on-update keep: the moved connection stays on p1
    assert out["back"][0] == 0, out["back"][1]
    assert all(out["moved_keep"][k] > 250_000 for k in only1), out["moved_keep"]
    ck = out["status_keep"]["counters"]
    assert ck["update_deferred"] == 1 and ck["repathed"] == 1
    assert out["status_keep"]["generation"] == 3 and out["status_keep"]["on_update"] == "keep"
    assert "table generation 3, swapped in" in out["status_text"]
    assert out["pins"] == []


_REHASH = r"""
import json, os, subprocess, sys, threading, time
from tpcstudy.cli import main
from tpcstudy.linux import cgroup_of, join_cgroup
from tpcstudy.emulate.network.kernel import NetnsSwitch
from tpcstudy.hostagent import loader
from tpcstudy.hostagent.update import read_current
A = json.loads(sys.argv[1])
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
assert main(["agent", "load", "--table", A["t1"], "--host", "Chicago", "--cgroup", A["cgroup"],
             "--netns", A["netns"], "--name", "r1"]) == 0
sw = NetnsSwitch()
home = cgroup_of()
ls = sw.socket_in(A["ns"])
ls.bind((A["dst"], 0)); ls.listen(64)
conns, got = [], []
for i in range(A["n"]):
    join_cgroup(A["cgroup"])
    c = sw.socket_in(A["netns"])
    join_cgroup(home)
    c.bind((A["src"], 0)); c.connect((A["dst"], ls.getsockname()[1]))
    s, _ = ls.accept()
    got.append(0)
    def drain(s=s, i=i):
        while True:
            b = s.recv(65536)
            if not b:
                break
            got[i] += len(b)
    threading.Thread(target=drain, daemon=True).start()
    conns.append(c)

def send_all(n=50_000):
    want = [g + n for g in got]
    for c in conns:
        c.sendall(bytes(n))
    t = time.monotonic()
    while any(g < w for g, w in zip(got, want)) and time.monotonic() - t < 30:
        time.sleep(0.01)
    return all(g >= w for g, w in zip(got, want))

OUT = {"before": send_all()}
u = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "update", "r1", "--table",
                    A["t2"], "--on-update", "rehash", "--json"], capture_output=True, text=True)
OUT["update"] = json.loads(u.stdout) if u.returncode == 0 else u.stderr
OUT["after"] = send_all()
inst = loader.read_saved("r1")
OUT["status"] = loader.status(inst)
OUT["conns"] = [[k.hex(), v.hex()] for k, v in loader._dump(inst.map_ids["tpc_conns"])]
OUT["table"] = [[k.hex(), v.hex()] for k, v in read_current(inst)]
for c in conns:
    c.close()
assert main(["agent", "unload", "r1"]) == 0
OUT["pins"] = sorted(p for p in os.listdir("/sys/fs/bpf") if p not in ("progs.debug",
                                                                        "maps.debug"))
print("RESULT " + json.dumps(OUT), flush=True)
"""


def test_agent_update_rehash_spreads_moved_connections_by_the_weights(tmp_path, zoo_installed):
    """``--on-update rehash`` on an emulated host: twelve connections of Chicago to New York on
    slot 0 (policy first); the new table drops that path and gives three others weights 1, 2,
    1. Every connection moves (``rehashed`` 12), each to the slot the Python mirror
    (:func:`tpcstudy.hostagent.slots.keyed_pick` of its key's hash) says, over more than one
    path; data flows before and after."""
    import dataclasses

    from tpcstudy.export.table import PathRecord
    from tpcstudy.hostagent.maps import CONN_VALUE
    from tpcstudy.hostagent.slots import conn_hash, keyed_pick

    variant = "exp3_lowest_completion"
    t = prune(read_topology("zoo/Abilene"))
    tab = path_table(t)
    t1 = tmp_path / "t1"
    write_paths(tab, t1, formats=["json", "bpf"], variant=variant)
    entry = next(e for e in tab.entries if e.source == "Chicago" and e.destination == "New York")
    p0 = entry.paths[0]

    def via(w, weight):
        return PathRecord(["Chicago", w, "New York"], [tab.plan.loopback(w),
                                                        tab.plan.loopback("New York")],
                          [w, "New York"], p0.bw_mbps, p0.delay_ms, p0.igp_cost, weight=weight)
    new = dataclasses.replace(entry, paths=[via("Atlanta", 1.0), via("Washington DC", 2.0),
                                            via("Kansas City", 1.0)])
    t2 = tmp_path / "t2"
    write_paths(dataclasses.replace(tab, entries=[new if e is entry else e for e in tab.entries]),
                t2, formats=["json", "bpf"], variant=variant)
    spec = network_spec(t, read_plan(t1 / "plan.json"), prefix=new_prefix())
    with Emulation(spec) as emu:
        cg = emu.cgroup("Chicago")
        emu.wait_quiet()
        args = {"t1": str(t1), "t2": str(t2), "cgroup": str(cg), "n": 12,
                "netns": spec.router("Chicago").netns, "src": str(spec.host("Chicago")),
                "ns": spec.router("New York").netns,
                "dst": str(ipaddress.IPv6Network(entry.prefix).network_address + 1)}
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                            "-c", _REHASH, json.dumps(args)], capture_output=True, text=True,
                           env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path / "run")), timeout=300)
        assert p.returncode == 0, p.stderr[-3000:] + p.stdout[-2000:]
        out = json.loads(next(ln for ln in p.stdout.splitlines()
                              if ln.startswith("RESULT "))[7:])
    assert not cgroup_base(spec.prefix).exists()
    assert out["before"] and out["after"]
    assert isinstance(out["update"], dict), out["update"]
    c = out["status"]["counters"]
    assert c["rehashed"] == 12 and c["repathed"] == 0 and c["update_kept"] == 0, c
    key = ipaddress.IPv6Network(entry.prefix).network_address.packed[:8]
    value = next(bytes.fromhex(v) for k, v in out["table"] if bytes.fromhex(k) == key)
    slots = []
    for k, v in out["conns"]:
        length, slot, _moves, _kernel, _dk, _f, _srh, _gen, room, _st, _p = CONN_VALUE.unpack(
            bytes.fromhex(v))
        assert slot == keyed_pick(value, room, conn_hash(bytes.fromhex(k))), (k, slot, room)
        assert length == 56
        slots.append(slot)
    assert len(slots) == 12 and len(set(slots)) >= 2, slots
    assert out["pins"] == []

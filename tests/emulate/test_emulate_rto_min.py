"""``agent load --rto-min-ms`` on an emulated host (root): the kernel applies the minimum RTO
to the connections the agent gives a path. A plain TCP connection from Chicago's cgroup to
another router's host, its sender's RTO read from ``TCP_INFO`` (``tcpi_rto``) after 1 MB:
with ``--rto-min-ms 20`` it is SRTT + 20 ms at least (measured: RTT 15 ms through the
emulated queues, RTO 44 ms), without the flag SRTT + 200 ms (216 ms); the agent's
counters say which connections got it; unload leaves no pin, record or cgroup process."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys

import pytest

from tpcstudy import path_table, prune, read_plan, read_topology, write_paths
from tpcstudy.emulate.network.lifecycle import Emulation, cgroup_base, new_prefix
from tpcstudy.emulate.network.spec import network_spec

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]
ENV = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")

_DRIVER = r"""
import json, os, subprocess, sys
from tpcstudy.cli import main
from tpcstudy.linux import cgroup_of, join_cgroup
from tpcstudy.emulate.agent.tcp import tcp_info
from tpcstudy.emulate.network.kernel import NetnsSwitch
from tpcstudy.hostagent import loader
args = json.loads(sys.argv[1])
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
fresh = sorted(os.listdir("/sys/fs/bpf"))
sw = NetnsSwitch()
for name, extra in (("t20", ["--rto-min-ms", "20"]), ("tdef", [])):
    assert main(["agent", "load", "--table", args["table"], "--host", args["host"],
                 "--cgroup", args["cgroup"], "--netns", args["netns"], "--name", name,
                 *extra]) == 0
    ls = sw.socket_in(args["dst_ns"])
    ls.bind((args["dst"], 0)); ls.listen(1); port = ls.getsockname()[1]
    home = cgroup_of()
    join_cgroup(args["cgroup"])       # a plain socket of the host's cgroup
    c = sw.socket_in(args["netns"])
    join_cgroup(home)
    c.bind((args["src"], 0)); c.connect((args["dst"], port))
    conn, _ = ls.accept()
    got = 0
    for i in range(40):               # 1 MB in 25 kB rounds: RTT samples for the estimator
        c.sendall(bytes(25000))
        while got < (i + 1) * 25000:
            got += len(conn.recv(65536))
    info = tcp_info(c)
    c.close(); conn.close(); ls.close()
    st = loader.status(loader.read_saved(name))
    print(json.dumps({"name": name, "got": got, "rto_us": info["rto_us"],
                      "rtt_us": info["rtt_us"], "counters": st["counters"],
                      "rto_min_us": st["rto_min_us"]}), flush=True)
    assert main(["agent", "status", name]) == 0
    assert main(["agent", "unload", name]) == 0
print(json.dumps({"pins": sorted(set(os.listdir("/sys/fs/bpf")) - set(fresh))}), flush=True)
"""


def test_rto_min_is_applied_by_the_kernel(zoo_installed, tmp_path):
    t = prune(read_topology("zoo/Abilene"))
    table = tmp_path / "table"
    write_paths(path_table(t), table, formats=["json", "bpf"])
    doc = json.loads((table / "paths.json").read_text())
    entry = next(e for e in doc["entries"] if e["source"] == "Chicago"
                 and len(e["paths"][0]["waypoints"]) >= 1)
    spec = network_spec(t, read_plan(table / "plan.json"), prefix=new_prefix())
    with Emulation(spec) as emu:
        cg = emu.cgroup("Chicago")
        args = {"table": str(table), "host": "Chicago", "cgroup": str(cg),
                "netns": spec.router("Chicago").netns,
                "dst_ns": spec.router(entry["destination"]).netns,
                "dst": str(ipaddress.IPv6Network(entry["prefix"]).network_address + 1),
                "src": str(spec.host("Chicago"))}
        emu.wait_quiet()
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                            "-c", _DRIVER, json.dumps(args)], capture_output=True, text=True,
                           env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path / "run")), timeout=180)
        assert p.returncode == 0, p.stderr[-3000:] + p.stdout[-2000:]
        out = {d.get("name", "end"): d for d in (json.loads(ln) for ln in p.stdout.splitlines()
                                                 if ln.startswith("{"))}
        fast, plain = out["t20"], out["tdef"]
        print(f"rto-min 20 ms: {fast}; default: {plain}")
        assert fast["got"] == plain["got"] == 1_000_000
        assert fast["rto_min_us"] == 20000 and plain["rto_min_us"] == 0
        assert fast["counters"]["connections"] == 1 and fast["counters"]["fallback"] == 1
        assert fast["counters"]["rto_min_set"] == 1 and fast["counters"]["rto_min_failed"] == 0
        assert plain["counters"]["rto_min_set"] == 0 == plain["counters"]["rto_min_failed"]
        # the kernel's RTO: SRTT + max(4 RTTVAR, rto_min); the RTT here is well under 80 ms
        assert plain["rtt_us"] < 80_000 and fast["rtt_us"] < 80_000, (fast, plain)
        assert 20_000 <= fast["rto_us"] < 100_000, fast
        assert plain["rto_us"] >= 200_000, plain
        assert "minimum RTO 20 ms" in p.stdout  # agent status says it
        assert out["end"]["pins"] == []
        assert not (tmp_path / "run" / "agent" / "t20.json").exists()
        assert not any((cg / "cgroup.procs").read_text().split())
    assert not cgroup_base(spec.prefix).exists()

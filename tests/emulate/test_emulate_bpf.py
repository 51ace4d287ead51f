"""tpcstudy's BPF host agent on the emulator (root): the agent CLI on one emulated host
(load, a plain TCP connection of its cgroup over the exported path, status, unload: nothing
left), an unmodified program (python's http.server and a client) in the hosts' cgroups, and the
emulator's --agent bpf runs: six-paths' sr at the LP's rate, an exported table verified with TCP,
the in-kernel NRTOChanger, and nothing left after SIGKILL and clean."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tpcstudy import path_table, prune, read_topology, write_paths
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.launch import launch_argv
from tpcstudy.emulate.network.lifecycle import Emulation, cgroup_base, new_prefix, read_records
from tpcstudy.emulate.network.spec import network_spec

from helpers import listening, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]
ENV = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "tpcstudy", *args], capture_output=True,
                          text=True, env=ENV, timeout=timeout)


def _csv(path: Path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def abilene(tmp_path_factory, zoo_installed):
    t = prune(read_topology("zoo/Abilene"))
    out = tmp_path_factory.mktemp("abilene-table")
    write_paths(path_table(t), out, formats=["json", "bpf"])
    return t, out


_DRIVER = r"""
import json, os, socket, subprocess, sys
from tpcstudy.cli import main
from tpcstudy.linux import cgroup_of, join_cgroup
from tpcstudy.emulate.network.kernel import NetnsSwitch
args = json.loads(sys.argv[1])
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
fresh = sorted(os.listdir("/sys/fs/bpf"))  # a new bpffs has the kernel's own (maps.debug ...)
assert main(["agent", "load", "--table", args["table"], "--host", args["host"],
             "--cgroup", args["cgroup"], "--netns", args["netns"], "--name", "t1"]) == 0
sw = NetnsSwitch()
ls = sw.socket_in(args["dst_ns"])
ls.bind((args["dst"], 0)); ls.listen(1); port = ls.getsockname()[1]
home = cgroup_of()
join_cgroup(args["cgroup"])           # a plain socket of the host's cgroup: no SRH set by us
c = sw.socket_in(args["netns"])
join_cgroup(home)
c.bind((args["src"], 0)); c.connect((args["dst"], port))
conn, _ = ls.accept()
c.sendall(bytes(200000)); c.close()
got = 0
while True:
    b = conn.recv(65536)
    if not b: break
    got += len(b)
print(json.dumps({"got": got}), flush=True)
from tpcstudy.hostagent import loader
print(json.dumps({"status": loader.status(loader.read_saved("t1"))}), flush=True)
assert main(["agent", "status"]) == 0
assert main(["agent", "unload", "t1"]) == 0
print(json.dumps({"pins": sorted(set(os.listdir("/sys/fs/bpf")) - set(fresh))}), flush=True)
"""


def test_agent_cli_on_an_emulated_host(abilene, tmp_path):
    """agent load/status/unload on one emulated host (its own bpffs: a private mount
    namespace): a plain TCP connection from Chicago's cgroup takes its table's slot 0, the link
    counters say so, status counts it, unload leaves nothing."""
    t, table = abilene
    plan_doc = json.loads((table / "paths.json").read_text())
    entry = next(e for e in plan_doc["entries"] if e["source"] == "Chicago"
                 and len(e["paths"][0]["waypoints"]) >= 1)
    from tpcstudy import read_plan

    plan = read_plan(table / "plan.json")
    spec = network_spec(t, plan, prefix=new_prefix())
    import ipaddress

    with Emulation(spec) as emu:
        cg = emu.cgroup("Chicago")
        dst_router = entry["destination"]
        dst = str(ipaddress.IPv6Network(entry["prefix"]).network_address + 1)
        args = {"table": str(table), "host": "Chicago", "cgroup": str(cg),
                "netns": spec.router("Chicago").netns, "dst_ns": spec.router(dst_router).netns,
                "dst": dst, "src": str(spec.host("Chicago"))}
        emu.wait_quiet()
        before = emu.tx_packets()
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                            "-c", _DRIVER, json.dumps(args)], capture_output=True, text=True,
                           env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path / "run")), timeout=120)
        assert p.returncode == 0, p.stderr[-3000:] + p.stdout[-2000:]
        after = emu.tx_packets()
        lines = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
        assert lines[0]["got"] == 200000
        status = next(ln["status"] for ln in lines if "status" in ln)
        c = status["counters"]
        assert c["connections"] == 1 and c["fallback"] == 1 and c["kernel_srh"] == 0
        assert c["inserted"] > 100  # every data packet (200 kB / 1388-byte segments)
        assert status["slots"][0][1:] == [0, 1]  # slot 0, one connection
        assert lines[-1]["pins"] == []  # unload removed every pin it made
        # the bytes went over slot 0's route: each of its arcs carried them
        route = entry["paths"][0]["nodes"]
        for a, b in zip(route, route[1:]):
            arc = t.arc_of(a, b)
            assert after[arc] - before[arc] > 100, (a, b)
        assert not (tmp_path / "run" / "agent" / "t1.json").exists()
        assert not any((cg / "cgroup.procs").read_text().split())
    assert not cgroup_base(spec.prefix).exists()


def test_an_unmodified_program_uses_the_table(abilene):
    """python's http.server on one emulated host, a client on another, both started as plain
    processes of their hosts (namespace and cgroup): the request takes the client's table path,
    the page comes back."""
    t, table = abilene
    from tpcstudy import read_plan
    from tpcstudy.emulate.network.hostagent import install_agents
    from tpcstudy.hostagent.loader import status
    from tpcstudy.hostagent.maps import SlotPolicy

    spec = network_spec(t, read_plan(table / "plan.json"), prefix=new_prefix())
    with Emulation(spec) as emu:
        agents = install_agents(emu, table, policy=SlotPolicy("first"), routers=["Seattle"])
        server = emu.spawn(launch_argv(spec.router("New York").netns,
                                       str(emu.cgroup("New York")),
                                       [sys.executable, "-m", "http.server", "8080", "--bind",
                                        str(spec.host("New York"))]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        wait_until(lambda: listening(spec.router("New York").netns, 8080), 30,
                   "the http.server to listen")
        url = f"http://[{spec.host('New York')}]:8080/"
        client = subprocess.run(launch_argv(spec.router("Seattle").netns,
                                            str(emu.cgroup("Seattle")),
                                            [sys.executable, "-c",
                                             f"import urllib.request as u; print(len(u.urlopen("
                                             f"'{url}', timeout=10).read()))"]),
                                capture_output=True, text=True, env=ENV, timeout=60)
        assert client.returncode == 0, client.stderr
        assert int(client.stdout) > 100
        c = status(agents["Seattle"])["counters"]
        assert c["connections"] == 1 and c["inserted"] >= 3  # SYN, request, ACKs, FIN
        server.kill()


def test_six_paths_sr_through_the_bpf_agent(tmp_path):
    p = _cli("emulate", "--scenario", "six-paths", "--agent", "bpf", "--seconds", "3",
             "--warmup", "1.5", "--out", str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["model"]: r for r in _csv(tmp_path / "r" / "results.csv")}
    # only the agents' SRHs can take the 6 paths: the IGP forces one
    assert float(rows["sr"]["ratio"]) > 0.85 and float(rows["sr"]["measured_gain"]) > 5.0
    assert float(rows["sr"]["ceiling"]) == pytest.approx(0.908, abs=0.002)  # the SRH's room
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["study"]["config"]["agent"] == "bpf"


def test_verify_with_tcp_through_the_agents(abilene, tmp_path):
    t, table = abilene
    p = _cli("emulate", "verify", "--topo", "zoo/Abilene", "--table", str(table), "--agent",
             "bpf", "--out", str(tmp_path / "v"))
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    assert "entries delivered on model links: 20/20 (36/36 paths" in p.stdout
    rows = _csv(tmp_path / "v" / "results.csv")
    assert all(r["status"] == "ok" for r in rows if r["check"] == "path")


def test_in_kernel_nrto_changer(tmp_path):
    p = _cli("emulate", "failover", "--topo", "zoo/Abilene", "--runs", "2", "--agent", "bpf",
             "--fail-after", "1", "--restore-after", "3", "--observe", "4",
             "--out", str(tmp_path / "f"))
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [r for r in _csv(tmp_path / "f" / "results.csv") if r["strategy"] == "nrto-bpf"]
    assert len(rows) == 2
    for r in rows:  # the third RTO's retransmission left on slot 1: 0.2 + 0.4 + 0.8 s
        assert r["status"] == "ok" and 1.2 < float(r["recovery_s"]) < 2.2, r
        assert int(r["moves"]) >= 1


def _program_ids() -> set:
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    return {p["id"] for p in json.loads(out or "[]")}


def _programs_of(prefix: str) -> dict:
    """``{program id: "sock_ops" | "tc"}`` attached to the run's cgroups and namespaces."""
    found = {}
    base = cgroup_base(prefix)
    try:
        cgroups = [base, *(d for d in base.rglob("*") if d.is_dir())]
    except OSError:
        cgroups = []
    for cg in cgroups:
        out = subprocess.run(["bpftool", "-j", "cgroup", "show", str(cg)], capture_output=True,
                             text=True).stdout
        for a in json.loads(out or "[]") if out.strip().startswith("[") else []:
            if a.get("attach_type") in ("sock_ops", "cgroup_sock_ops"):
                found[a["id"]] = "sock_ops"
    for ns in N.list_namespaces(prefix):
        out = subprocess.run(["ip", "netns", "exec", ns, "bpftool", "-j", "net", "show"],
                             capture_output=True, text=True).stdout
        for block in json.loads(out or "[]") if out.strip().startswith("[") else []:
            for a in block.get("tc", []):
                found[a.get("prog_id", a.get("id"))] = "tc"
    return found


def test_sigkill_then_clean_removes_the_agents_cgroups(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "tpcstudy", "emulate", "--scenario",
                             "six-paths", "--agent", "bpf", "--models", "sr", "--seconds", "30"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        def started():  # a busy machine may take minutes to build the network: polled
            assert proc.poll() is None, f"the run ended early: {proc.stderr.read()[-2000:]}"
            rec = next((r for r in read_records() if r.get("cgroups")), None)
            if rec and cgroup_base(rec["prefix"]).is_dir() and any(
                    cgroup_base(rec["prefix"]).iterdir()):
                return rec
            return None

        rec = wait_until(started, 300, "the run's record and cgroups", every=0.2)
        prefix = rec["prefix"]
        # the agents are loaded (sock_ops on the hosts' cgroups, tc egress in the namespaces)
        ours = wait_until(lambda: _programs_of(prefix) if {"sock_ops", "tc"} <= set(
            _programs_of(prefix).values()) else None, 300, "the agents' programs", every=0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert N.list_namespaces(prefix) and cgroup_base(prefix).is_dir()  # no teardown ran
        c = _cli("emulate", "clean")
        assert c.returncode == 0, c.stderr
        assert N.list_namespaces(prefix) == [] and not cgroup_base(prefix).exists()
        # the kernel frees a program after an RCU grace period once its last attachment goes
        # (asynchronously: polled, up to 30 s on a busy machine); only this run's programs
        # count, by id: another run's agents may be loaded meanwhile
        wait_until(lambda: not set(ours) & _program_ids(), 30,
                   f"the kernel to free this run's programs {sorted(ours)}")
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()

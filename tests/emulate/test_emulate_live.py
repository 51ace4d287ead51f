"""A live network for your own programs (root): up with a table installed, exec (exit codes,
stdin/stdout, unknown routers), watch, list, down (also of a half-gone network), clean keeping a
live network beside a SIGKILLed run, the Python API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tpcstudy import path_table, prune, read_plan, read_topology, write_paths
from tpcstudy.emulate import Network
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.lifecycle import cgroup_base, read_records

from helpers import listening, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]
ENV = dict(os.environ, PYTHONSAFEPATH="1")


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "tpcstudy", "emulate", *args],
                          capture_output=True, text=True, env=ENV, timeout=120, **kw)


@pytest.fixture(scope="module")
def table(tmp_path_factory, zoo_installed):
    t = prune(read_topology("zoo/Abilene"))
    out = tmp_path_factory.mktemp("live-table")
    write_paths(path_table(t), out, formats=["json", "bpf"])
    return t, out


def _entry(table_dir, src, dst):
    doc = json.loads((table_dir / "paths.json").read_text())
    return next(e for e in doc["entries"] if e["source"] == src and e["destination"] == dst)


@pytest.mark.parametrize("install", ["route", "bpf"])
def test_up_exec_watch_down(table, install):
    t, tdir = table
    name = f"live{install}"
    p = _cli("up", "--topo", "zoo/Abilene", "--table", str(tdir), "--install", install,
             "--slot", "1", "--name", name)
    assert p.returncode == 0, p.stderr[-2000:]
    try:
        rec = next(r for r in read_records() if r.get("name") == name)
        prefix = rec["prefix"]
        assert len(N.list_namespaces(prefix)) == 11
        # a second network of the same name is refused
        again = _cli("up", "--topo", "zoo/Abilene", "--name", name)
        assert again.returncode == 2 and "is up already" in again.stderr
        # exec: exit status, stdin and stdout through; unknown routers named
        r = _cli("exec", name, "Chicago", "--", sys.executable, "-c",
                 "import sys; print(sys.stdin.read().upper()); sys.exit(3)", input="hello")
        assert r.returncode == 3 and r.stdout.strip() == "HELLO"
        bad = _cli("exec", name, "Chicagoo", "--", "true")
        assert bad.returncode == 2 and "did you mean 'Chicago'" in bad.stderr
        # a TCP transfer Seattle -> New York takes the table's slot 1, and nothing else
        ny = next(x for x in rec["routers"] if x["name"] == "New York")["hosts"][0]
        srv = subprocess.Popen([sys.executable, "-m", "tpcstudy", "emulate", "exec", name,
                                "New York", "--", sys.executable, "-c",
                                "import socket; s = socket.socket(socket.AF_INET6); "
                                f"s.bind(('{ny}', 9000)); s.listen(1); c, _ = s.accept(); "
                                "n = 0\nwhile True:\n b = c.recv(65536)\n if not b: break\n"
                                " n += len(b)\nprint(n)"], stdout=subprocess.PIPE, text=True,
                               env=ENV)
        ny_ns = next(x for x in rec["routers"] if x["name"] == "New York")["netns"]
        wait_until(lambda: listening(ny_ns, 9000), 30, "the server to listen")
        watch = subprocess.Popen([sys.executable, "-m", "tpcstudy", "emulate", "watch", name,
                                  "--json", "--interval", "0.5", "--count", "6"],
                                 stdout=subprocess.PIPE, text=True, env=ENV)
        cl = _cli("exec", name, "Seattle", "--", sys.executable, "-c",
                  "import socket; s = socket.socket(socket.AF_INET6); "
                  f"s.connect(('{ny}', 9000)); s.sendall(bytes(1000000)); s.close()")
        assert cl.returncode == 0, cl.stderr
        assert int(srv.communicate(timeout=30)[0]) == 1000000
        out = watch.communicate(timeout=30)[0].splitlines()
        totals = json.loads(out[-1])["totals"]
        route = _entry(tdir, "Seattle", "New York")["paths"][1]["nodes"]
        on_path = {f"{a}>{b}" for a, b in zip(route, route[1:])}
        busy = {k for k, v in totals.items() if v > 500000}
        assert busy == on_path, (busy, route)  # the data on slot 1's links, on no other
        if install == "bpf":  # the emulated hosts' agents, seen by agent status
            st = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "status",
                                 "--network", name, "Seattle", "--json"],
                                capture_output=True, text=True, env=ENV, timeout=60)
            assert st.returncode == 0, st.stderr
            sea_st = json.loads(st.stdout)["Seattle"]
            assert sea_st["counters"]["connections"] >= 1 and sea_st["generation"] >= 1
            assert [slot for _, slot, n in sea_st["slots"] if n] == [1], sea_st["slots"]
        else:  # no agent there: said, not a traceback
            st = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "status",
                                 "--network", name], capture_output=True, text=True, env=ENV,
                                timeout=60)
            assert st.returncode == 2 and "has no BPF agent" in st.stderr, st.stderr
        listed = _cli("list")
        assert name in listed.stdout and "Abilene" in listed.stdout
        # inspect (containerlab's): every router, its namespace running, its addresses
        ins = _cli("inspect", name)
        assert ins.returncode == 0, ins.stderr
        lines = [x for x in ins.stdout.splitlines() if " running " in x]
        assert len(lines) == 11 and f"installed ({install}, slot 1)" in ins.stdout
        assert any(x.startswith("New York") and ny in x for x in lines)
        doc = json.loads(_cli("inspect", name, "--json").stdout)
        assert {r["netns"] for r in doc["routers"]} == set(N.list_namespaces(prefix))
        # pingall (Mininet's): every host pair answers; a link taken down shows as X
        pa = _cli("pingall", name)
        hosts = sum(1 for r in rec["routers"] if r["hosts"])
        pairs = hosts * (hosts - 1)
        assert pa.returncode == 0 and f"0% dropped ({pairs}/{pairs} received)" in pa.stdout, \
            pa.stdout + pa.stderr
        sea = next(x for x in rec["routers"] if x["name"] == "Seattle")
        for nic in sea["interfaces"]:  # Seattle cut off: its pairs, and only they, are lost
            subprocess.run(["ip", "-n", sea["netns"], "link", "set", nic["name"], "down"],
                           check=True)
        pa = _cli("pingall", name, "--timeout", "1", "--json")
        res = json.loads(pa.stdout)
        lost = {(x["source"], x["destination"]) for x in res["results"] if x["rtt_ms"] is None}
        assert pa.returncode == 1 and lost == {p for x in res["results"]
                                               for p in [(x["source"], x["destination"])]
                                               if "Seattle" in p}
    finally:
        d = _cli("down", name)
    assert d.returncode == 0, d.stderr
    assert N.list_namespaces(prefix) == [] and not cgroup_base(prefix).exists()
    assert not [r for r in read_records() if r.get("name") == name]


def test_down_of_a_half_gone_network_and_clean_keeps_live_ones(table, tmp_path):
    p = _cli("up", "--topo", "zoo/Abilene", "--name", "half")
    assert p.returncode == 0, p.stderr
    keep = _cli("up", "--topo", "zoo/Abilene", "--name", "keeper")
    assert keep.returncode == 0, keep.stderr
    try:
        half = next(r for r in read_records() if r.get("name") == "half")
        names = N.list_namespaces(half["prefix"])
        N.run_batch("ip", [f"netns del {n}" for n in names[:5]])  # someone removed some
        d = _cli("down", "half")
        assert d.returncode == 0, d.stderr
        assert N.list_namespaces(half["prefix"]) == []
        # a SIGKILLed run beside the live network: clean removes it, keeps 'keeper'
        err = tmp_path / "run.err"
        with open(err, "w") as fh:
            run = subprocess.Popen([sys.executable, "-m", "tpcstudy", "emulate", "--scenario",
                                    "six-paths", "--models", "ecmp", "--seconds", "30"],
                                   stdout=subprocess.DEVNULL, stderr=fh, env=ENV)

        def built():  # its 16 namespaces are up (a busy machine may take minutes: polled)
            assert run.poll() is None, f"the run ended early: {err.read_text()[-2000:]}"
            return next((r for r in read_records() if r.get("kind") != "up"
                         and len(N.list_namespaces(r["prefix"])) == 16), None)

        dead = wait_until(built, 300, "the run's 16 namespaces", every=0.2)
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
        c = _cli("clean")
        assert c.returncode == 0, c.stderr
        assert f"{dead['prefix']}: run {dead['pid']} is gone: removed 16 namespaces" in c.stdout
        assert "network 'keeper' is up on purpose: kept" in c.stdout
        assert N.list_namespaces(dead["prefix"]) == []
        k = next(r for r in read_records() if r.get("name") == "keeper")
        assert len(N.list_namespaces(k["prefix"])) == 11
    finally:
        _cli("down", "keeper")
    assert not [r for r in read_records() if r.get("name") in ("half", "keeper")]


def test_the_python_api(table):
    t, tdir = table
    plan = read_plan(tdir / "plan.json")
    with Network(t, plan, table=tdir, install="route", slot=0) as net:
        before = net.counters()
        r = net.exec("Seattle", [sys.executable, "-c", "print('hi')"], capture_output=True,
                     text=True)
        assert r.returncode == 0 and r.stdout == "hi\n"
        srv = net.spawn("New York", [sys.executable, "-c",
                                     "import socket; s = socket.socket(socket.AF_INET6); "
                                     f"s.bind(('{net.host('New York')}', 9001)); s.listen(1); "
                                     "c, _ = s.accept()\nwhile c.recv(65536): pass"])
        wait_until(lambda: listening(net.spec.router("New York").netns, 9001), 30,
                   "the server to listen")
        net.exec("Seattle", [sys.executable, "-c",
                             "import socket; s = socket.socket(socket.AF_INET6); "
                             f"s.connect(('{net.host('New York')}', 9001)); "
                             "s.sendall(bytes(300000)); s.close()"], check=True)
        srv.wait(timeout=30)
        route = _entry(tdir, "Seattle", "New York")["paths"][0]["nodes"]
        assert set(zip(route, route[1:])) <= set(net.busy_links(before, 200000))
        prefix = net.spec.prefix
    assert N.list_namespaces(prefix) == []

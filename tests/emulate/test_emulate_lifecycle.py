"""Run records, ``clean``, pre-checks, failover's recovery rule and the dry run: no root needed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from tpcstudy.emulate.experiments.failover import recovery_time
from tpcstudy.emulate.network import checks
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network import lifecycle as L
from tpcstudy.errors import EmulationUnavailable, UsageError


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_prefixes_and_tag(monkeypatch):
    monkeypatch.setenv("TPCSTUDY_NETNS_TAG", "abc")
    p = L.new_prefix()
    assert p.startswith("abc") and p.endswith("-") and len(p) == 3 + 6 + 1
    assert L.new_prefix() != p
    for bad in ("ABC", "1ab", "a-b", "x" * 10):
        monkeypatch.setenv("TPCSTUDY_NETNS_TAG", bad)
        with pytest.raises(UsageError):
            L.new_prefix()


def test_clean_removes_only_dead_runs_and_only_their_namespaces(tmp_path, monkeypatch):
    monkeypatch.setenv("TPCSTUDY_NETNS_TAG", "tpc")
    dead = _dead_pid()
    live = os.getpid()
    L.write_record({"prefix": "tpcdead01-", "pid": dead, "processes": [
        {"pid": dead, "start": 1}]}, tmp_path)
    L.write_record({"prefix": "tpcaaaa01-", "pid": live,
                    "pid_start": N.process_start_ticks(live)}, tmp_path)
    # a record whose pid was reused by another program (start time differs) is dead too
    L.write_record({"prefix": "tpcbbbb01-", "pid": live, "pid_start": 12345}, tmp_path)
    existing = ["tpcdead01-r0", "tpcdead01-r1", "tpcaaaa01-r0", "tpcbbbb01-r3", "tpcdead010-r0",
                "other-ns", "tpcdead01"]
    deleted = []
    killed = []

    def delete(names):
        deleted.extend(names)
        for n in names:
            existing.remove(n)

    reports = L.clean(where=tmp_path,
                      list_namespaces=lambda p: [n for n in existing if n.startswith(p)],
                      delete_namespaces=delete,
                      kill=lambda pid, sig: killed.append(pid))
    by = {r["prefix"]: r for r in reports}
    assert sorted(deleted) == ["tpcbbbb01-r3", "tpcdead01-r0", "tpcdead01-r1"]
    assert by["tpcaaaa01-"]["alive"] is True and by["tpcaaaa01-"]["namespaces_removed"] == []
    assert by["tpcdead01-"]["alive"] is False and by["tpcbbbb01-"]["alive"] is False
    assert killed == []  # the dead run's process is gone: nothing to kill
    left = sorted(p.name for p in tmp_path.glob("*.json"))
    assert left == ["tpcaaaa01.json"]  # the live run keeps its record


def test_clean_with_no_records(tmp_path):
    assert L.clean(where=tmp_path / "none") == []


def test_unreadable_records_are_skipped(tmp_path):
    (tmp_path / "junk.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"no": "prefix"}))
    assert L.read_records(tmp_path) == []
    assert {os.path.basename(r["_file"]) for r in L.scan_records(tmp_path)} == {
        "junk.json", "other.json"}


def test_require_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(checks, "_caps", lambda: 0)
    monkeypatch.setattr(checks.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(checks.shutil, "which", lambda name: None)
    with pytest.raises(EmulationUnavailable) as err:
        checks.require(bpftool=True)
    text = str(err.value)
    assert "not root" in text and "sudo" in text
    assert "apt-get install iproute2" in text and "apt-get install bpftool" in text
    assert "not checked" not in text  # only the real causes are listed
    # root without the capabilities (a container) is not "ok" either
    monkeypatch.setattr(checks.os, "geteuid", lambda: 0)
    with pytest.raises(EmulationUnavailable, match="root without CAP_NET_ADMIN"):
        checks.require()


def test_the_kernel_is_named_against_the_readme():
    assert checks.kernel_line("6.18.0-1-amd64").startswith("6.18.0-1-amd64 (ok: the emulator "
                                                           "needs Linux >= 6.11")
    old = checks.kernel_line("6.1.0-25-amd64")
    assert "older than the README's" in old and ">= 6.11" in old and "probes" in old
    assert "older" in checks.kernel_line("5.15.0") and "ok" not in checks.kernel_line("5.15.0")
    assert "not understood" in checks.kernel_line("weird")
    assert checks.kernel_line().startswith(os.uname().release)


def test_a_broken_bpftool_is_not_the_kernels_fault(monkeypatch, tmp_path):
    fake = tmp_path / "bpftool"
    fake.write_text("#!/bin/sh\necho 'error while loading shared libraries: libbfd' >&2\nexit 127\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert checks._bpftool_works().startswith("bpftool does not run (error while loading")


def test_recovery_rule():
    # data every 10 ms until the failure at t=1.0, silence, data again from 1.3 s: 0.3 s
    tl = [[0.5 + 0.01 * i, i] for i in range(51)] + [[1.3 + 0.01 * i, 100 + i] for i in range(50)]
    assert recovery_time(tl, 1.0, 2.0, 0.05) == ("ok", pytest.approx(0.3))
    # in-flight data still arrives just after the failure, then the stall
    tl2 = [[0.9, 1], [1.0, 2], [1.004, 3], [1.008, 4], [1.6, 5], [1.61, 6]]
    assert recovery_time(tl2, 1.0, 2.0, 0.05) == ("ok", pytest.approx(0.6))
    # never stalls: not hit
    tl3 = [[0.9 + 0.01 * i, i] for i in range(100)]
    status, v = recovery_time(tl3, 1.0, 1.9, 0.05)
    assert status == "unaffected" and math.isnan(v)
    # stalls and never comes back
    assert recovery_time(tl[:51], 1.0, 2.0, 0.05) == ("not recovered", math.inf)
    assert recovery_time([], 1.0, 2.0, 0.05) == ("not recovered", math.inf)


def test_dry_run_prints_the_script_without_root(tmp_path, zoo_installed):
    env = dict(os.environ, PYTHONSAFEPATH="1")
    p = subprocess.run([sys.executable, "-m", "tpcstudy", "emulate", "--topo", "zoo/Abilene",
                        "--dry-run", "--prefix", "tpcdry000-"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("#!/bin/sh")
    assert out.count("netns add tpcdry000-r") == 11
    # 14 links, and the hosts' NIC of Abilene's 5 edge routers (both ends in the router)
    assert out.count(" type veth peer name ") == 14 + 5
    assert out.count(" type veth peer name hostgw ") == 5
    assert out.count("rule add iif lo table 100 pref 100") == 5
    assert "ip netns exec tpcdry000-r0 sysctl -qw net.ipv6.conf.all.seg6_enabled=1" in out
    assert "netns del tpcdry000-r10" in out
    assert not N.list_namespaces("tpcdry000-")  # nothing was run
    # the script is valid shell
    assert subprocess.run(["sh", "-n"], input=out, text=True).returncode == 0

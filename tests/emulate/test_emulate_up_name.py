"""``emulate up`` (root): two started together with one name give one network (a lock around the
name), and ``--install bpf`` of a table without bpf maps is refused before anything is built."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tpcstudy import path_table, prune, read_topology, write_paths
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.lifecycle import read_records

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("emulator", "emulation_guard")]
ENV = dict(os.environ, PYTHONSAFEPATH="1")


def _argv(*args):
    return [sys.executable, "-m", "tpcstudy", "emulate", *args]


def test_two_ups_of_one_name_started_together_give_one_network():
    procs = [subprocess.Popen(_argv("up", "--topo", "zoo/Abilene", "--name", "twin"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(2)]
    outs = [p.communicate(timeout=180) for p in procs]
    codes = sorted(p.returncode for p in procs)
    try:
        assert codes == [0, 2], outs
        err = next(e for p, (_, e) in zip(procs, outs) if p.returncode == 2)
        assert "being brought up by another process" in err or "is up already" in err, err
        assert "Traceback" not in err
        recs = [r for r in read_records() if r.get("name") == "twin"]
        assert len(recs) == 1
        assert len(N.list_namespaces(recs[0]["prefix"])) == 11
    finally:
        subprocess.run(_argv("down", "twin"), capture_output=True, env=ENV, timeout=120)
    assert not [r for r in read_records() if r.get("name") == "twin"]
    assert not any(p.name.startswith(".up-") for p in
                   __import__("pathlib").Path(os.environ["TPCSTUDY_RUN_DIR"]).iterdir())


def test_install_bpf_of_a_table_without_bpf_maps_is_refused(tmp_path, zoo_installed):
    write_paths(path_table(prune(read_topology("zoo/Abilene"))), tmp_path, formats=["json"])
    before = len(read_records())
    p = subprocess.run(_argv("up", "--topo", "zoo/Abilene", "--table", str(tmp_path),
                             "--install", "bpf", "--name", "nobpf"), capture_output=True,
                       text=True, env=ENV, timeout=180)
    if p.returncode == 0:  # main before the fix: a network with nothing loaded
        subprocess.run(_argv("down", "nobpf"), capture_output=True, env=ENV, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no bpf maps" in p.stderr and "--format bpf" in p.stderr
    assert "installed" not in p.stdout
    assert len(read_records()) == before

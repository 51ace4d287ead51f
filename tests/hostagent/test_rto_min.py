"""``--rto-min-ms`` without root: the value's bounds (the kernel's TCP_BPF_RTO_MIN range, in
microseconds in the agent's config), refused with one clear line by ``agent load`` and
``emulate failures`` before anything is touched, recorded in an install record and in the
failures experiment's settings."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from tpcstudy import UsageError
from tpcstudy.emulate.experiments.failures import FailuresSettings
from tpcstudy.hostagent import loader
from tpcstudy.hostagent import maps as M

ENV = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")


def test_rto_min_us_bounds():
    assert M.rto_min_us(None) == 0  # unset: the kernel's own, nothing changes
    assert M.rto_min_us(1) == 1000 and M.rto_min_us(200) == 200000
    assert M.rto_min_us(50.0) == 50000 and M.rto_min_us(12.5) == 12500
    for bad in (0, 0.5, -20, 200.5, 1000, math.nan, math.inf, True, "50"):
        with pytest.raises(UsageError, match="--rto-min-ms .*1 to 200"):
            M.rto_min_us(bad)  # type: ignore[arg-type]


def test_failures_settings_check_the_value():
    FailuresSettings(rto_min_ms=50.0).check()
    FailuresSettings().check()
    with pytest.raises(UsageError, match="--rto-min-ms '250.0'"):
        FailuresSettings(rto_min_ms=250.0).check()


def test_install_record_keeps_it():
    doc = {"name": "h1", "host": "Chicago", "table": "/t", "variant": "n_rto",
           "value_size": 1556, "entries": 4, "policy": "first", "mtu": 1500,
           "cgroup": str(loader.CGROUP_ROOT / "tpc" / "h1"), "netns": None,
           "interfaces": ["eth0"], "private": False, "rto_min_us": 20000}
    assert loader.Install.from_json(doc, "r.json").rto_min_us == 20000
    del doc["rto_min_us"]
    assert loader.Install.from_json(doc, "r.json").rto_min_us == 0  # older records
    for bad, words in ((300000, "not 0 to 200000"), ("20", "is not an integer"),
                       (-1, "not 0 to 200000")):
        with pytest.raises(UsageError, match=f"rto_min_us {words}|rto_min_us .*{words}"):
            loader.Install.from_json(dict(doc, rto_min_us=bad), "r.json")


@pytest.mark.parametrize("verb", [
    ["agent", "load", "--table", "/nonexistent", "--host", "X", "--cgroup", "tpc/x"],
    ["emulate", "failures", "--topo", "zoo/Abilene"]])
@pytest.mark.parametrize("value", ["0", "250", "nan"])
def test_cli_refuses_out_of_range(verb, value, tmp_path):
    p = subprocess.run([sys.executable, "-m", "tpcstudy", *verb, "--rto-min-ms", value,
                        "--out" if verb[0] == "emulate" else "--name",
                        str(tmp_path / "o") if verb[0] == "emulate" else "x"],
                       capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode != 0
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--rto-min-ms" in lines[0] and "1 to 200" in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()


def test_cli_refuses_a_non_number():
    p = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "load", "--table", "/t",
                        "--host", "X", "--cgroup", "tpc/x", "--rto-min-ms", "fast"],
                       capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 2 and "--rto-min-ms" in p.stderr and "Traceback" not in p.stderr

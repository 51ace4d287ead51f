"""Real MPTCP in the emulator: SEMPER's dumbbell, the subflow endpoints, and a short run on a real
kernel (root) where every subflow comes up and K hashed subflows carry more than one path."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys

import pytest

from tpcstudy import max_flow
from tpcstudy.emulate.experiments.harness import run_experiment
from tpcstudy.emulate.experiments.semper import Dumbbell, Fault, format_dumbbell, window_series
from tpcstudy.emulate.experiments.throughput import (
    ThroughputSettings,
    measure_models,
    mptcp_model_value,
    parse_model,
)
from tpcstudy.emulate.network.handmade import dumbbell
from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix
from tpcstudy.emulate.network.mptcp import MAX_SUBFLOWS, mptcp_available, subflow_lines
from tpcstudy.emulate.network.spec import network_spec
from tpcstudy.errors import UsageError
from tpcstudy.study import load_results

REQUIRED = os.environ.get("TPCSTUDY_EMULATE_REQUIRED") == "1"


def test_dumbbell_lp_and_model() -> None:
    sc = dumbbell(4, 3)
    assert sc.pairs == [("C1", "S1"), ("C2", "S2"), ("C3", "S3")]
    # every path full for multipath and the bound; one path per pair for plain ECMP hashing
    assert max_flow(sc.topology, sc.pairs, model="multipath").value == pytest.approx(4.0)
    assert max_flow(sc.topology, sc.pairs, model="mcf").value == pytest.approx(4.0)
    # K subflows: between one path and all of them; the mean grows with K towards P
    values = [mptcp_model_value(sc.topology, sc.pairs, k, draws=16)[0] for k in (1, 2, 8)]
    assert 1.0 <= values[0] < values[1] < values[2] <= 4.0 + 1e-9
    assert values[2] > 3.9


def test_subflow_lines() -> None:
    sc = dumbbell(2, 2)
    spec = network_spec(sc.topology, sc.plan, prefix="ttx-", link_mbps=10.0)
    per_ns = dict(subflow_lines(spec, ["C1", "C2"], ["S1", "S2"], 4))
    assert sorted(per_ns) == sorted(spec.router(r).netns for r in ("C1", "C2", "S1", "S2"))
    for name in ("S1", "S2"):  # destinations: the limits only
        assert per_ns[spec.router(name).netns] == [
            f"mptcp limits set subflow {MAX_SUBFLOWS} add_addr_accepted {MAX_SUBFLOWS}"]
    for src in ("C1", "C2"):
        r = spec.router(src)
        mine = [ln.split() for ln in per_ns[r.netns]]
        assert mine[0][:2] == ["mptcp", "limits"]
        assert mine[1] == ["mptcp", "endpoint", "flush"]  # running it again for another K
        addrs = [ipaddress.IPv6Address(a[2].split("/")[0]) for a in mine if a[0] == "addr"]
        ends = [ipaddress.IPv6Address(a[3]) for a in mine if a[1:3] == ["endpoint", "add"]]
        assert len(addrs) == 3 and addrs == ends and len(set(addrs)) == 3
        assert all(a in r.prefixes[0] and a != spec.host(src) for a in addrs)
        assert all(a == ["mptcp", "endpoint", "add", a[3], "subflow"]  # not bound to lo
                   for a in mine if a[1:3] == ["endpoint", "add"])
    one = dict(subflow_lines(spec, ["C1"], ["S1"], 1))
    assert not [ln for lines in one.values() for ln in lines if ln.startswith("addr")]
    with pytest.raises(UsageError, match=f"1 to {MAX_SUBFLOWS}"):
        subflow_lines(spec, ["C1"], ["S1"], MAX_SUBFLOWS + 1)


def test_window_series() -> None:
    # cumulative bytes read at these times; windows of 1 s from t0 = 10
    tl = [[10.2, 100], [10.9, 250], [11.5, 300], [13.1, 700], [9.5, 50], [14.2, 900]]
    assert window_series(tl, 10.0, 4) == [200.0, 50.0, 0.0, 400.0]  # the read at 9.5 counts 50
    assert window_series([], 0.0, 2) == [0.0, 0.0]


def _need_mptcp() -> None:
    why = mptcp_available()
    if why:
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)


@pytest.mark.slow
@pytest.mark.usefixtures("emulator")
def test_fault_mptcp_against_tcp_with_failover(tmp_path) -> None:
    _need_mptcp()
    rows = run_experiment(Fault(paths=2, hosts=2, subflows=2, fail_after=2.0, observe=3.0),
                          out=str(tmp_path / "f"), log=lambda m: None).rows
    assert {r["strategy"] for r in rows} == {"mptcp", "tcp+timeout"} and len(rows) == 10
    for r in rows:
        use = [float(x) for x in r["path_use"].split()]
        assert len(use) == 2
        if float(r["second"]) >= 3:  # path 1's first hop carries nothing once it failed
            assert use[0] < 0.05
    # TCP moved by the TimeoutChanger: the surviving path stays busy after the failure
    after = [float(r["total"]) for r in rows
             if r["strategy"] == "tcp+timeout" and float(r["second"]) >= 3]
    assert min(after) > 0.7
    assert load_results(tmp_path / "f").kind == "emulate-fault"


@pytest.mark.slow
@pytest.mark.usefixtures("emulator")
def test_real_mptcp_on_the_dumbbell(tmp_path) -> None:
    _need_mptcp()
    rows = run_experiment(Dumbbell(paths=(2,), subflows=(1, 4), hosts=2, seconds=3.0,
                                   warmup=1.5, draws=8),
                          out=str(tmp_path / "db"), log=lambda m: None).rows
    by_k = {int(r["subflows"]): r for r in rows}
    assert by_k[1]["joined"] == "0" and by_k[4]["joined"] == by_k[4]["expected_joins"] == "6"
    for r in rows:
        # two hosts that each got traffic through: neither starved (Jain of (x, 0) is 0.5)
        assert 0.5 < float(r["measured"]) <= 2.0 and float(r["jain"]) > 0.55, rows
        assert all(float(x) > 0.05 for x in r["per_host"].split()), rows
    assert "joined" in format_dumbbell(rows) and " 6/6" in format_dumbbell(rows)
    # 2 hosts x 4 subflows over 2 paths: when the hash put subflows on both paths (all 8 on one
    # has probability 2 / 2**8), both carry traffic and the goodput is more than one path can
    # carry (K = 1 on one path measures ~0.93). Typically 1.7-1.9 (6 runs on this VM); a subflow
    # in loss recovery during the 3 s window can leave its path a quarter busy (CI saw 1.20).
    use = [float(x) for x in by_k[4]["path_use"].split()]
    if min(use) > 0.2:
        assert float(by_k[4]["measured"]) > 1.05, rows
    else:
        assert max(use) > 0.8, rows
    res = load_results(tmp_path / "db")
    assert res.kind == "emulate-mptcp" and len(res) == 2
    out = subprocess.run([sys.executable, "-m", "tpcstudy", "plot", str(tmp_path / "db"),
                          "--out", str(tmp_path / "fig")], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "fig" / "emulation-mptcp.png").exists()


def test_mptcp_model_tokens() -> None:
    assert parse_model("mptcp:4") == ("mptcp", 4) and parse_model("sr") == ("sr", 0)
    for bad in ("mptcp:0", "mptcp:9", "mptcp:x", "mcf", "mptcp:"):
        with pytest.raises(UsageError, match="mptcp:K|cannot run"):
            parse_model(bad)
    with pytest.raises(UsageError, match="1 to 8"):
        ThroughputSettings(models=("ecmp", "mptcp:32")).check()


@pytest.mark.slow
@pytest.mark.usefixtures("emulator")
def test_mptcp_beside_the_lp_models_in_a_throughput_run() -> None:
    """``mptcp:K`` as one more model of ``emulate throughput``: one MPTCP connection per pair,
    every subflow joins, its LP column is the analytic model's mean, and K = 8 subflows per pair
    on 2 paths carry more than one path's worth."""
    _need_mptcp()
    sc = dumbbell(2, 2)
    spec = network_spec(sc.topology, sc.plan, prefix=new_prefix(), link_mbps=10)
    st = ThroughputSettings(models=("mptcp:1", "mptcp:8", "ecmp"), per_pair=1, warmup=1.5,
                            seconds=3, draws=16)
    with Emulation(spec) as emu:
        rows = measure_models(emu, sc.pairs, st, base={"scenario": "dumbbell", "heavy": "",
                                                        "seed": 0})
    by = {r["model"]: r for r in rows}
    assert all(r["status"] == "ok" for r in rows), rows
    assert by["mptcp:1"]["connections"] == by["mptcp:8"]["connections"] == 2
    assert by["mptcp:1"]["subflows_joined"] == 0
    # run after mptcp:1 in the same network: the endpoints were replaced, 7 joins per pair
    assert by["mptcp:8"]["subflows_joined"] == by["mptcp:8"]["subflows_expected"] == 14
    assert by["mptcp:8"]["lp_value"] == pytest.approx(
        mptcp_model_value(sc.topology, sc.pairs, 8, draws=16)[0])
    assert 1.0 <= by["mptcp:1"]["lp_value"] < by["mptcp:8"]["lp_value"] <= 2.0
    # 16 hashed subflows all on one path has probability 2 / 2**16: both paths carry data
    assert by["mptcp:8"]["measured"] > 1.1 and by["mptcp:8"]["k"] == 8, rows
    assert "ecmp" in by and by["mptcp:8"]["lp_gain"] > 0

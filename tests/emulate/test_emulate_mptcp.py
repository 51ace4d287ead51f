"""Real MPTCP in the emulator: SEMPER's dumbbell, the subflow endpoints, and a short run on a real
kernel (root) where every subflow comes up and K hashed subflows carry more than one path."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys

import pytest

from tpcstudy import max_flow
from tpcstudy.emulate.mptcp import (
    MAX_SUBFLOWS,
    dumbbell,
    model_value,
    mptcp_available,
    run_dumbbell,
    run_fault,
    subflow_commands,
    window_series,
)
from tpcstudy.emulate.spec import network_spec
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
    values = [model_value(sc, k, draws=16) for k in (1, 2, 8)]
    assert 1.0 <= values[0] < values[1] < values[2] <= 4.0 + 1e-9
    assert values[2] > 3.9


def test_subflow_commands() -> None:
    sc = dumbbell(2, 2)
    spec = network_spec(sc.topology, sc.plan, prefix="ttx-", link_mbps=10.0)
    cmds = subflow_commands(spec, ["C1", "C2"], ["S1", "S2"], 4)
    limits = [ns for ns, argv in cmds if argv[:2] == ["mptcp", "limits"]]
    assert sorted(limits) == sorted(spec.router(r).netns for r in ("C1", "C2", "S1", "S2"))
    for src in ("C1", "C2"):
        r = spec.router(src)
        mine = [argv for ns, argv in cmds if ns == r.netns and argv[0] != "mptcp" or
                ns == r.netns and argv[1] == "endpoint"]
        addrs = [ipaddress.IPv6Address(a[2].split("/")[0]) for a in mine if a[0] == "addr"]
        ends = [ipaddress.IPv6Address(a[3]) for a in mine if a[1] == "endpoint"]
        assert len(addrs) == 3 and addrs == ends and len(set(addrs)) == 3
        assert all(a in r.prefixes[0] and a != spec.host(src) for a in addrs)
        assert all("dev" not in a for a in mine if a[1] == "endpoint")  # not bound to lo
    assert not [c for c in subflow_commands(spec, ["C1"], ["S1"], 1) if c[1][0] == "addr"]
    with pytest.raises(UsageError, match=f"1 to {MAX_SUBFLOWS}"):
        subflow_commands(spec, ["C1"], ["S1"], MAX_SUBFLOWS + 1)


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
    rows = run_fault(out=str(tmp_path / "f"), paths=2, hosts=2, subflows=2, fail_after=2.0,
                     observe=3.0, log=lambda m: None)
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
    rows = run_dumbbell(out=str(tmp_path / "db"), paths=(2,), subflows=(1, 4), hosts=2,
                        seconds=3.0, warmup=1.5, log=lambda m: None)
    by_k = {int(r["subflows"]): r for r in rows}
    assert by_k[1]["joined"] == "0" and by_k[4]["joined"] == by_k[4]["expected_joins"] == "6"
    for r in rows:
        assert 0.5 < float(r["measured"]) <= 2.0 and 0.0 < float(r["jain"]) <= 1.0
    # 2 hosts x 4 subflows over 2 paths: both paths carry traffic
    assert float(by_k[4]["measured"]) > 1.3
    res = load_results(tmp_path / "db")
    assert res.kind == "emulate-mptcp" and len(res) == 2
    out = subprocess.run([sys.executable, "-m", "tpcstudy", "plot", str(tmp_path / "db"),
                          "--out", str(tmp_path / "fig")], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "fig" / "emulation-mptcp.png").exists()

"""Host path-selection policies on the emulator: the workload (Poisson arrivals, Pareto sizes),
the path table with the LP's shares worked out by hand, the settings' errors, and (root) a short
run of several policies on Abilene from the command line, resumable, with its figure."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tpcstudy import Topology, default_plan
from tpcstudy.emulate.experiments.policies import PolicySettings, poisson_arrivals, policy_tables
from tpcstudy.errors import UsageError
from tpcstudy.metrics import quantile_inf
from tpcstudy.study import load_results


def _triangle() -> Topology:
    """a - c direct (the only IGP shortest path), and a detour a - b - c; all capacities 1."""
    u = np.array([0, 0, 1], dtype=np.int32)
    v = np.array([2, 1, 2], dtype=np.int32)
    meta = {"capacity_unit": "link", "pruned": True, "source": "hand-made triangle"}
    return Topology("triangle", ["a", "b", "c"], u, v, np.ones(6), np.ones(6), meta=meta)


def test_poisson_arrivals_rate_sizes_and_seed() -> None:
    pairs = [("a", "c"), ("c", "a")]
    arr = poisson_arrivals(pairs, rate=50.0, seconds=20.0, mean_bytes=10_000, shape=3.0, seed=7)
    assert arr == poisson_arrivals(pairs, rate=50.0, seconds=20.0, mean_bytes=10_000, shape=3.0,
                                   seed=7)
    assert arr != poisson_arrivals(pairs, rate=50.0, seconds=20.0, mean_bytes=10_000, shape=3.0,
                                   seed=8)
    assert [a.id for a in arr] == list(range(1, len(arr) + 1))
    assert all(x.at <= y.at for x, y in zip(arr, arr[1:])) and all(0 <= a.at < 20 for a in arr)
    # 2 pairs x 50/s x 20 s = 2,000 expected; Poisson: sd = sqrt(2000) ~ 45
    assert abs(len(arr) - 2000) < 4 * math.sqrt(2000)
    sizes = np.array([a.size for a in arr], dtype=float)
    # Pareto shape 3, mean 10,000: scale 6,667 is the smallest size; the mean within 5 %
    assert sizes.min() >= round(10_000 * 2 / 3) - 1
    assert abs(sizes.mean() / 10_000 - 1) < 0.05
    for p in pairs:
        assert abs(sum(1 for a in arr if (a.source, a.destination) == p) - 1000) < 4 * math.sqrt(1000)


def test_policy_table_and_lp_shares_by_hand() -> None:
    t = _triangle()
    plan = default_plan(t, edge_routers=["a", "b", "c"])
    tabs = policy_tables(t, [("a", "c")], plan, k=2, paths=4)
    # the LP: 1 on the direct link, 1 on the detour through b: value 2
    assert tabs.lp_value == pytest.approx(2.0) and tabs.unplaced == pytest.approx(0.0)
    assert tabs.equal == pytest.approx(2.0, rel=1e-3)  # one pair: its equal share is all of it
    slots = tabs.waypoints["a"]["c"]
    assert slots[0] == ["c"] and ["b", "c"] in slots
    shares = tabs.shares["a"]["c"]
    assert shares[0] == pytest.approx(1.0) and shares[slots.index(["b", "c"])] == pytest.approx(1.0)
    assert sum(shares) == pytest.approx(2.0)
    assert len(tabs.srhs["a"]["c"]) == len(slots)


def test_equal_share_value_by_hand() -> None:
    from tpcstudy.emulate.experiments.policies import equal_share_value

    t = _triangle()
    # a -> c and c -> a use opposite arcs: 2 each (direct + detour), 4 in all
    assert equal_share_value(t, [("a", "c"), ("c", "a")], k=2) == pytest.approx(4.0, rel=1e-3)
    # a -> c and b -> c: c has two incoming arcs of capacity 1, so 2 in all, 1 each
    assert equal_share_value(t, [("a", "c"), ("b", "c")], k=2) == pytest.approx(2.0, rel=1e-3)
    # a -> c, a -> b, b -> c: the optimum is 3 (each pair its direct arc), and so are equal shares
    three = [("a", "c"), ("a", "b"), ("b", "c")]
    assert equal_share_value(t, three, k=2) == pytest.approx(3.0, rel=1e-3)


def test_settings_errors() -> None:
    PolicySettings(policies=("ecmp", "queue-max", "queue-sum")).check()
    with pytest.raises(UsageError, match="shape"):
        PolicySettings(shape=1.0).check()
    with pytest.raises(UsageError, match="unknown policy"):
        PolicySettings(policies=("fastest",)).check()
    PolicySettings(policies=("exp3:0.2", "lp")).check()


def test_fct_quantiles_count_unfinished_as_infinite() -> None:
    assert quantile_inf([1.0, 2.0, 3.0], 0.5) == 2.0
    assert quantile_inf([1.0, 2.0, 4.0], 0.75) == 3.0  # halfway between 2 and 4
    assert quantile_inf([1.0, 2.0, math.inf], 0.5) == 2.0
    assert quantile_inf([1.0, 2.0, math.inf], 0.99) == math.inf
    assert math.isnan(quantile_inf([], 0.5))


@pytest.mark.slow
@pytest.mark.usefixtures("emulator", "emulation_guard")
def test_policies_cli_on_abilene(tmp_path, zoo_installed) -> None:
    out = tmp_path / "pol"
    args = [sys.executable, "-m", "tpcstudy", "emulate", "policies", "--topo", "zoo/Abilene",
            "--heavy", "20", "--seed", "1", "--policies",
            "ecmp,lp,exp3:0.1,ba-throughput,mptcp:2",
            "--seconds", "4", "--warmup", "1", "--drain", "2", "--load", "1.2",
            "--out", str(out), "--plot"]
    env = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    assert "% of LP" in p.stdout
    with open(out / "results.csv", newline="") as fh:
        rows = {r["policy"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"ecmp", "lp", "exp3:0.1", "ba-throughput", "mptcp:2"}
    transfers = {r["transfers"] for r in rows.values()}
    assert len(transfers) == 1  # the same workload for every policy
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["draw"] == "0"
        assert 0.2 < float(r["goodput_lp"]) < 1.1, r
        assert int(r["completed"]) > 0 and float(r["fct_median"]) > 0
        # more than one pair got traffic through (one pair taking all: Jain = 1 / pairs)
        assert float(r["jain"]) > 1 / int(r["pairs"]) + 0.05, r
    assert rows["ecmp"]["slot_share"] == "plain:1.000"
    # lp spreads the transfers over the LP's slots; the LP uses more than slot 0 on this draw
    assert "plain" not in rows["lp"]["slot_share"] and len(rows["lp"]["slot_share"].split()) >= 2
    # MPTCP as a host policy: every transfer an MPTCP connection; second subflows joined
    assert rows["mptcp:2"]["slot_share"] == "mptcp:1.000"
    assert int(rows["mptcp:2"]["subflows_joined"]) > 0, rows["mptcp:2"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["study"]["config"]["policies"]["load"] == 1.2
    assert load_results(out).kind == "emulate-policies"
    assert (out / "emulation-policies.png").is_file()
    # --repeat 2 later: only draw 1 runs (new hash seeds, new arrivals), then the intervals
    more = subprocess.run(args[:-1] + ["--repeat", "2"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert more.returncode == 0, more.stderr[-2000:] + more.stdout[-2000:]
    assert "draw 2/2" in more.stderr and "draw 1/2" not in more.stderr
    with open(out / "results.csv", newline="") as fh:
        both = list(csv.DictReader(fh))
    assert sorted(r["draw"] for r in both) == ["0"] * 5 + ["1"] * 5
    # a new draw of arrivals: another number of transfers in the window (or, rarely, the same
    # number but other sizes: the offered load differs)
    d1 = {r["policy"]: r for r in both if r["draw"] == "1"}
    assert (d1["ecmp"]["transfers"], d1["ecmp"]["offered"]) != \
        (rows["ecmp"]["transfers"], rows["ecmp"]["offered"])
    with open(out / "summary.csv", newline="") as fh:
        summ = {r["policy"]: r for r in csv.DictReader(fh)}
    assert set(summ) == set(rows) and {r["draws"] for r in summ.values()} == {"2"}
    lo, mid, hi = (float(summ["lp"][c]) for c in ("goodput_lp_lo", "goodput_lp",
                                                    "goodput_lp_hi"))
    assert lo <= mid <= hi and mid == pytest.approx(
        (float(rows["lp"]["goodput_lp"]) + float(d1["lp"]["goodput_lp"])) / 2)
    with open(out / "verdicts.csv", newline="") as fh:
        ver = list(csv.DictReader(fh))
    assert len(ver) == 4 * 10  # 4 metrics x 10 pairs of 5 policies
    assert {v["verdict"] for v in ver} <= {"higher", "lower", "tie"}
    assert "which differences are real" in more.stdout and "[" in more.stdout
    again = subprocess.run(args[:-1] + ["--repeat", "2"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert again.returncode == 0 and "already measured" in again.stderr


# ----------------------------------------------------------------- the two-path scenarios
def test_multihoming_and_delay_arrivals() -> None:
    from tpcstudy.emulate.experiments.twopaths import (
        TwoPathSettings,
        delay_arrivals,
        multihoming_arrivals,
    )

    st = TwoPathSettings(flows=4, background=3, seconds=30.0, warmup=0.0)
    arr, b0, b1 = multihoming_arrivals(st)
    site = [a for a in arr if a.source == "A"]
    bg = [a for a in arr if a.source == "G"]
    assert len(site) == 4 and all(a.slot is None and a.at < 1 for a in site)
    assert (b0, b1) == (10.0, 20.0) and len(bg) == 3
    assert all(a.slot == 0 and a.until == 20.0 and 10.0 <= a.at < 10.1 for a in bg)
    st = TwoPathSettings(scenario="delay", background=2, seconds=25.0, warmup=0.0, phase=10.0,
                         rate=20.0)
    arr, phases = delay_arrivals(st, seed=3)
    assert phases == [(0.0, 0), (10.0, 1), (20.0, 0)]
    bg = [a for a in arr if a.source == "G"]
    assert [(a.slot, a.until) for a in bg] == [(0, 10.0)] * 2 + [(1, 20.0)] * 2 + [(0, 25.0)] * 2
    req = [a for a in arr if a.source == "A"]
    assert abs(len(req) - 500) < 4 * math.sqrt(500) and {a.size for a in req} == {100_000}
    assert arr == delay_arrivals(st, seed=3)[0]


def test_counts_over_time_from_path_logs() -> None:
    from tpcstudy.emulate.agent.client import TrafficResult, TransferResult
    from tpcstudy.emulate.agent.protocol import Sent
    from tpcstudy.emulate.experiments.twopaths import counts_over_time

    sent = {1: Sent(100.0, paths=[(100.0, 0), (105.0, 1)]),
            2: Sent(101.0, paths=[(101.0, 1)], done=103.0),
            3: Sent(102.0, paths=[(102.0, None)], cut=104.0)}
    res = TrafficResult({i: TransferResult(i, s, None) for i, s in sent.items()},
                        {"connect": 100.0}, (100.0, 110.0), 0.0, {}, {}, {}, 0)
    # at 100.5: 1 on slot 0; 101.5: 1 on 0, 2 on 1; 103.5: 2 done; 106: 1 moved to slot 1
    assert counts_over_time(res, [1, 2, 3], 100.0, [0.5, 1.5, 3.5, 6.0]) == \
        [[1, 0], [1, 1], [1, 0], [0, 1]]


def test_two_path_settings_errors() -> None:
    from tpcstudy.emulate.experiments.twopaths import TwoPathSettings

    with pytest.raises(UsageError, match="no LP here"):
        TwoPathSettings(policies=("lp",)).check()
    with pytest.raises(UsageError, match="choose from"):
        TwoPathSettings(scenario="zoo").check()


@pytest.mark.slow
@pytest.mark.usefixtures("emulator", "emulation_guard")
@pytest.mark.parametrize("scenario", ["multihoming", "delay"])
def test_two_path_scenarios_cli(tmp_path, scenario) -> None:
    out = tmp_path / scenario
    args = [sys.executable, "-m", "tpcstudy", "emulate", "policies", "--scenario", scenario,
            "--policies", "ecmp,random,ba-throughput", "--flows", "4", "--background", "4",
            "--seconds", "6", "--warmup", "1", "--phase", "3", "--rate", "8",
            "--out", str(out), "--plot"]
    env = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    with open(out / "results.csv", newline="") as fh:
        rows = {r["policy"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"ecmp", "random", "ba-throughput"}
    for r in rows.values():
        assert r["status"] == "ok", r
        if scenario == "multihoming":
            # every site flow got some throughput (MMR = min / max > 0), about a link's worth
            assert float(r["mmr"]) > 0.02 and float(r["avgt_mbps"]) > 0.5, r
            # 4 site flows, each on one of the two paths, every second (ecmp: no SRH, uncounted)
            counts = [c.split(":")[1] for c in r["counts"].split()]
            if r["policy"] != "ecmp":
                assert all(sum(map(int, c.split("/"))) == 4 for c in counts[2:]), r["counts"]
        else:
            assert int(r["completed"]) > 0 and len(r["fcts"].split()) == int(r["transfers"])
            if r["policy"] == "random":  # a fair coin per request: 0.5 +- 4 sd of ~40 draws
                assert 0.18 < float(r["on_idle"]) < 0.82, r
            elif r["policy"] == "ecmp":  # no SRH: no slot to count
                assert math.isnan(float(r["on_idle"])), r
    assert (out / "emulation-policies.png").is_file()


@pytest.mark.slow
@pytest.mark.usefixtures("emulator", "emulation_guard")
def test_adaptive_policies_prefer_the_idle_path(tmp_path) -> None:
    """The issue's ordering fact: on two paths with one loaded (the background stays on path 1
    for the whole run), queue-max and ba-throughput start more requests on the idle path than
    random does; the queue policies read the real queues and mostly avoid the loaded one. (Not
    always: the requests alone offer 0.8 of a path, so the idle path's own queue fills at times;
    0.98 was measured while the hosts' packets were refused locally by a full first-hop queue,
    which kept that queue short; with the hosts' NIC, 0.84-0.89 in two runs.)"""
    out = tmp_path / "idle"
    args = [sys.executable, "-m", "tpcstudy", "emulate", "policies", "--scenario", "delay",
            "--phase", "1000", "--seconds", "8", "--warmup", "1",
            "--policies", "random,queue-max,queue-sum,exp3:0.1,ba-throughput", "--out", str(out)]
    env = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    with open(out / "results.csv", newline="") as fh:
        idle = {r["policy"]: float(r["on_idle"]) for r in csv.DictReader(fh)}
    assert idle["queue-max"] >= 0.75 and idle["queue-sum"] >= 0.75, idle
    for name in ("queue-max", "ba-throughput"):
        assert idle[name] > idle["random"], idle
    # exp3:0.1 is in the run but not asserted: in 8 s it learned the idle path in one run of two
    # (0.92, then 0.51: its reward comes only when a request ends; see the README's delay table)

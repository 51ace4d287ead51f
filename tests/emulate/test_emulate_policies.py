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
from tpcstudy.emulate.workload import PolicySettings, poisson_arrivals, policy_tables
from tpcstudy.errors import UsageError
from tpcstudy.study import load_results
from tpcstudy.study.emulation import fct_quantile


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
    slots = tabs.waypoints["a"]["c"]
    assert slots[0] == ["c"] and ["b", "c"] in slots
    shares = tabs.shares["a"]["c"]
    assert shares[0] == pytest.approx(1.0) and shares[slots.index(["b", "c"])] == pytest.approx(1.0)
    assert sum(shares) == pytest.approx(2.0)
    assert len(tabs.srhs["a"]["c"]) == len(slots)


def test_settings_errors() -> None:
    with pytest.raises(UsageError, match="queue monitor"):
        PolicySettings(policies=("ecmp", "queue-max")).check()
    with pytest.raises(UsageError, match="shape"):
        PolicySettings(shape=1.0).check()
    with pytest.raises(UsageError, match="unknown policy"):
        PolicySettings(policies=("fastest",)).check()
    PolicySettings(policies=("exp3:0.2", "lp")).check()


def test_fct_quantiles_count_unfinished_as_infinite() -> None:
    assert fct_quantile([1.0, 2.0, 3.0], 0.5) == 2.0
    assert fct_quantile([1.0, 2.0, math.inf], 0.5) == 2.0
    assert fct_quantile([1.0, 2.0, math.inf], 0.99) == math.inf


@pytest.mark.slow
@pytest.mark.usefixtures("emulator", "emulation_guard")
def test_policies_cli_on_abilene(tmp_path, zoo_installed) -> None:
    out = tmp_path / "pol"
    args = [sys.executable, "-m", "tpcstudy", "emulate", "policies", "--topo", "zoo/Abilene",
            "--heavy", "20", "--seed", "1", "--policies", "ecmp,lp,exp3:0.1,ba-throughput",
            "--seconds", "4", "--warmup", "1", "--drain", "2", "--load", "1.2",
            "--out", str(out), "--plot"]
    env = dict(os.environ, PYTHONSAFEPATH="1", MPLBACKEND="Agg")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    assert "% of LP" in p.stdout
    with open(out / "results.csv", newline="") as fh:
        rows = {r["policy"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"ecmp", "lp", "exp3:0.1", "ba-throughput"}
    transfers = {r["transfers"] for r in rows.values()}
    assert len(transfers) == 1  # the same workload for every policy
    for r in rows.values():
        assert r["status"] == "ok", r
        assert 0.2 < float(r["goodput_lp"]) < 1.1, r
        assert int(r["completed"]) > 0 and float(r["fct_median"]) > 0
        assert 0 < float(r["jain"]) <= 1
    assert rows["ecmp"]["slot_share"] == "plain:1.000"
    # lp spreads the transfers over the LP's slots; the LP uses more than slot 0 on this draw
    assert "plain" not in rows["lp"]["slot_share"] and len(rows["lp"]["slot_share"].split()) >= 2
    meta = json.loads((out / "meta.json").read_text())
    assert meta["study"]["config"]["policies"]["load"] == 1.2
    assert load_results(out).kind == "emulate-policies"
    assert (out / "emulation-policies.png").is_file()
    again = subprocess.run(args[:-1], capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0 and "already measured" in again.stderr

"""Host path-selection policies on scripted observations, with answers worked out by hand."""

from __future__ import annotations

import math
from typing import List

import numpy as np
import pytest

from tpcstudy.errors import UsageError
from tpcstudy.metrics import jain_index, multihoming_metrics, percentile
from tpcstudy.policies import (
    POLICIES,
    BaPolicy,
    Cycle,
    Exp3Policy,
    LpPolicy,
    QueuePolicy,
    flow_remapping,
    make_policy,
    parse_policy,
    window_average,
)


class ScriptedRng:
    """Stands in for the policy's generator: returns scripted choices, records the probabilities."""

    def __init__(self, picks: List[int]) -> None:
        self.picks = list(picks)
        self.seen: List[np.ndarray] = []

    def choice(self, n: int, p: np.ndarray) -> int:
        self.seen.append(np.asarray(p, dtype=float))
        return self.picks.pop(0)


# --------------------------------------------------------------------------- EXP3
def test_exp3_relative_rewards_by_hand() -> None:
    pol = Exp3Policy({"d": 2}, gamma=0.1, reward="relative")
    pol.rng = ScriptedRng([0, 1])  # type: ignore[assignment]
    assert pol.choose(1, "d", 0.0) == 0
    np.testing.assert_allclose(pol.rng.seen[0], [0.5, 0.5])  # (1 - 0.1) / 2 + 0.1 / 2
    pol.closed(1, 1.0, srtt_us=10_000)  # first sample: max_srtt = 10 ms, reward 0
    # Listing 6 normalisation: w_i = max(1, w_i * 10000 / sum(w)) = 5000 each
    np.testing.assert_allclose(pol.weights("d"), [5000, 5000])
    assert pol.choose(2, "d", 2.0) == 1
    pol.closed(2, 3.0, srtt_us=5_000)  # u = (10 - 5) / 10 = 0.5, p = 0.5: w1 *= exp(0.1 * 1 / 2)
    e = math.exp(0.05)
    np.testing.assert_allclose(pol.weights("d"), [10000 / (1 + e), 10000 * e / (1 + e)])
    np.testing.assert_allclose(pol.probabilities("d")[1], 0.9 * e / (1 + e) + 0.05)


def test_exp3_agent_reward_saturates_and_floor_is_gamma_over_n() -> None:
    pol = Exp3Policy({"d": 2}, gamma=0.2)  # reward in the agent's unit (usec << 3)
    pol.rng = ScriptedRng([0, 1, 0])  # type: ignore[assignment]
    pol.choose(1, "d", 0.0)
    pol.closed(1, 0.1, srtt_us=20_000)
    pol.choose(2, "d", 0.2)
    pol.closed(2, 0.3, srtt_us=10_000)  # u = 8 * 10000 = 80000: exponent 0.2 * 160000 / 2
    w = pol.weights("d")
    np.testing.assert_allclose(w, [1.0, 10000.0 - 1e-9], rtol=1e-9)  # floor 1, no overflow
    p = pol.probabilities("d")
    np.testing.assert_allclose(p, [0.8 / 10001 + 0.1, 0.8 * 10000 / 10001 + 0.1])
    assert p.min() >= 0.2 / 2  # every path keeps at least gamma / |paths|
    pol.choose(3, "d", 0.4)
    np.testing.assert_allclose(pol.rng.seen[-1], p)


def test_exp3_hook_rate_rewards_and_moves_a_live_connection() -> None:
    pol = Exp3Policy({"d": 3}, gamma=0.1, reward="relative", hook_bytes=1000)
    pol.rng = ScriptedRng([2, 0])  # type: ignore[assignment]
    assert pol.choose(7, "d", 0.0) == 2
    assert pol.progress(7, 0.1, srtt_us=9000, acked_bytes=999) is None  # below the hook rate
    assert pol.progress(7, 0.2, srtt_us=9000, acked_bytes=1000) == 0    # rewarded, redrawn
    assert pol.live[7] == ("d", 0)


def test_exp3_learns_the_lower_delay_path() -> None:
    pol = Exp3Policy({"d": 2}, gamma=0.1, reward="relative", seed=3)
    rtt = {0: 30_000.0, 1: 10_000.0}
    picks = []
    for c in range(400):
        p = pol.choose(c, "d", float(c))
        picks.append(p)
        pol.closed(c, c + 0.5, srtt_us=rtt[p])
    late = picks[-100:]
    assert late.count(1) > 80  # the 10 ms path; the floor keeps >= 5 % on the other
    assert pol.probabilities("d")[0] >= 0.05


# --------------------------------------------------------------------------- LP shares
def test_lp_smooth_weighted_round_robin_by_hand() -> None:
    pol = LpPolicy({"d": 3}, shares={"d": [0.5, 0.25, 0.25]})
    assert [pol.choose(c, "d", 0.0) for c in range(8)] == [0, 1, 2, 0, 0, 1, 2, 0]


def test_lp_counts_stay_within_one_of_the_shares() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(1, 6))
        s = rng.random(n)
        pol = LpPolicy({"d": n}, shares={"d": s.tolist()})
        picks = [pol.choose(c, "d", 0.0) for c in range(200)]
        for k in range(1, 201):
            counts = np.bincount(picks[:k], minlength=n)
            assert np.all(np.abs(counts - s / s.sum() * k) < 1.0 + 1e-9)


def test_lp_rejects_wrong_shares() -> None:
    with pytest.raises(UsageError, match="needs 2 shares"):
        LpPolicy({"d": 2}, shares={"d": [1.0]})


# --------------------------------------------------------------------------- BA smoothing
def test_window_average_by_hand() -> None:
    assert window_average([10.0] * 20) == pytest.approx(10.0)
    # the 8 older samples weigh 0.88 + 0.77 + ... + 0.11 = 3.96, the 8 recent ones 1 each
    assert window_average([0.0] * 8 + [1.0] * 8) == pytest.approx(8 / 11.96)
    assert window_average([5.0, 7.0]) == pytest.approx(6.0)  # fewer than 8: plain mean


def test_cycle_up_then_down_by_hand() -> None:
    c = Cycle(cthresh=0.05, min_interval=1.0)
    got = [c.update(v, t) for t, v in enumerate([10.0, 11.0, 12.0, 10.0, 9.0, 11.0])]
    assert got == [False] * 5 + [True]
    assert c.average == pytest.approx((10 + 11 + 12 + 10 + 9) / 5)
    assert c.min_average == pytest.approx(10.4)


def test_cycle_stable_run_closes_after_min_interval() -> None:
    c = Cycle(cthresh=0.05, min_interval=1.0)
    assert not c.update(10.0, 0.0)
    assert not c.update(10.2, 0.5)  # quasi-constant, run 0.5 s <= 1 s
    assert c.update(10.1, 1.2)      # run 1.2 s > 1 s and > half the previous cycle (0)
    assert c.average == pytest.approx(10.1)


def test_flow_remapping_moves_the_youngest_flows() -> None:
    flows = [["a", "b", "c", "d", "e"], ["f", "g", "h", "i", "j"]]
    assert flow_remapping([0.5, 0.5], [0.3, 0.7], flows) == [("a", 1), ("b", 1)]  # type: ignore[arg-type]
    assert flow_remapping([0.5, 0.5], [0.5, 0.5], flows) == []  # type: ignore[arg-type]


def _with_cycles(pol: BaPolicy, averages, mins, max_rtt) -> None:
    for st, a, m, mx in zip(pol.state["d"], averages, mins, max_rtt):
        st.cycle.average, st.cycle.min_average, st.max_rtt = a, m, mx


def test_ba_rtt_weights_by_hand() -> None:
    pol = BaPolicy({"d": 2}, metric="rtt")
    _with_cycles(pol, [0.060, 0.041], [0.040, 0.040], [0.100, 0.090])
    # loads 0.02 / 0.06 = 1/3 and 0.001 / 0.05 = 0.02; w = 1 - load / sum(load)
    load = np.array([1 / 3, 0.02])
    np.testing.assert_allclose(pol._target("d"), 1 - load / load.sum())
    pol._reweight("d", 1.0)
    np.testing.assert_allclose(pol.weight["d"], [0.4, 0.6])  # at most 0.1 per update


def test_ba_rtt_uncongested_filter_gives_equal_weights() -> None:
    pol = BaPolicy({"d": 2}, metric="rtt")
    _with_cycles(pol, [0.043, 0.040], [0.040, 0.040], [0.060, 0.090])  # numerators < 5 ms
    np.testing.assert_allclose(pol._target("d"), [0.5, 0.5])


def test_ba_throughput_weights_by_hand_and_remapping() -> None:
    pol = BaPolicy({"d": 2}, metric="throughput")
    for c in range(6):  # equal weights: 0, 1, 0, 1, 0, 1
        pol.choose(c, "d", float(c))
    assert pol.counts("d") == [3, 3]
    pol.live[5] = ("d", 0)  # 4 flows on path 0, 2 on path 1
    _with_cycles(pol, [1e6, 1e6], [1e6, 1e6], [0, 0])
    np.testing.assert_allclose(pol._target("d"), [1 / 3, 2 / 3])  # 250 kB/s vs 500 kB/s per flow
    pol._reweight("d", 10.0)
    np.testing.assert_allclose(pol.weight["d"], [0.4, 0.6])
    # N = 6: path 0 gives floor(3) - floor(2.4) = 1 flow (its youngest, 5), path 1 takes 1
    assert pol.moves(11.0) == [(5, 1)]
    assert pol.moves(12.0) == []


def test_ba_rtt_end_to_end_shifts_weight_off_the_loaded_path() -> None:
    pol = BaPolicy({"d": 2}, metric="rtt", min_interval=0.2)
    for c in range(8):
        pol.choose(c, "d", 0.0)
    t = 0.0
    moved = []
    while t < 20.0:
        t += 0.05
        loaded = 5.0 < t < 15.0
        for c, (_, p) in list(pol.live.items()):
            base = 0.040 + 0.002 * math.sin(7 * t + c)
            rtt = base + (0.060 if (p == 0 and loaded) else 0.0)
            pol.progress(c, t, srtt_us=rtt * 1e6)
        moved += pol.moves(t)
    assert moved, "no flow was remapped"
    assert any(w[0] < 0.5 for _, _, w in pol.history), pol.history


# --------------------------------------------------------------------------- queues
def test_queue_max_and_sum_on_a_hand_made_path() -> None:
    for agg, want in (("max", 1), ("sum", 0)):
        pol = QueuePolicy({"d": 2}, aggregate=agg)
        pol.queues("d", 0, 0.0, [0.001, 0.004, 0.002])  # max 4 ms, sum 7 ms
        pol.queues("d", 1, 0.0, [0.003, 0.003, 0.003])  # max 3 ms, sum 9 ms
        assert pol.choose(1, "d", 0.0) == want, agg


def test_queue_ties_go_to_fewer_connections() -> None:
    pol = QueuePolicy({"d": 3}, aggregate="max")
    assert [pol.choose(c, "d", 0.0) for c in range(4)] == [0, 1, 2, 0]


# --------------------------------------------------------------------------- registry
def test_make_policy_every_name() -> None:
    for name in POLICIES:
        pol = make_policy(name, {"d": 2}, shares={"d": [1.0, 1.0]})
        p = pol.choose(0, "d", 0.0)
        assert p is None if name == "ecmp" else p in (0, 1)
        pol.closed(0, 1.0, srtt_us=1000)
    assert make_policy("exp3:0.01", {"d": 2}).gamma == 0.01  # type: ignore[attr-defined]
    assert parse_policy("exp3:0.2") == ("exp3", {"gamma": 0.2})
    for bad in ("nope", "exp3:2", "random:1", "exp3:x"):
        with pytest.raises(UsageError):
            parse_policy(bad)
    with pytest.raises(UsageError, match="no path table"):
        make_policy("random", {"d": 2}).choose(0, "e", 0.0)


def test_random_is_seeded() -> None:
    a = [make_policy("random", {"d": 4}, seed=5).choose(c, "d", 0.0) for c in range(1)]
    pa = make_policy("random", {"d": 4}, seed=5)
    pb = make_policy("random", {"d": 4}, seed=5)
    assert [pa.choose(c, "d", 0) for c in range(50)] == [pb.choose(c, "d", 0) for c in range(50)]
    assert a


# --------------------------------------------------------------------------- metrics
def test_jain_index_by_hand() -> None:
    assert jain_index([1, 1, 1, 1]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([1, 2]) == pytest.approx(9 / 10)
    assert math.isnan(jain_index([]))
    with pytest.raises(ValueError):
        jain_index([1, -1])


def test_multihoming_metrics_by_hand() -> None:
    m = multihoming_metrics([2.0, 4.0, 6.0])
    assert m["mmr"] == pytest.approx(1 / 3)
    assert m["avgt"] == pytest.approx(4.0)
    assert m["std"] == pytest.approx(math.sqrt(8 / 3))
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)

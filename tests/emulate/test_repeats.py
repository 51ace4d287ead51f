"""Repeated draws without root: the intervals (hand-worked, scipy and an exact bootstrap as
oracles), the paired verdicts, the summaries and tables, draw seeds, and the options that make
draws differ (hash seeds, EXP3's hook, mptcp:K as a policy, the MTU)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tpcstudy.emulate.experiments import failover as F
from tpcstudy.emulate.experiments import policies as W
from tpcstudy.emulate.experiments import semper as SE
from tpcstudy.emulate.experiments import twopaths as TP
from tpcstudy.emulate.experiments.harness import Outcome, caveats
from tpcstudy.emulate.experiments.repeats import (
    SHARE,
    Metric,
    draw_seed,
    format_summary,
    format_verdicts,
    summarize,
    verdicts,
)
from tpcstudy.emulate.network.handmade import two_sites
from tpcstudy.emulate.network.spec import build_steps, hash_seed, network_spec
from tpcstudy.errors import UsageError
from tpcstudy.metrics import mean_interval, median_interval, paired_difference
from tpcstudy.policies import make_policy, parse_policy


# --------------------------------------------------------------------------- intervals
def test_mean_interval_hand_worked_and_scipy():
    # 1..5: mean 3, sd sqrt(2.5), se 0.70711, t(0.975, 4) = 2.776445 -> half width 1.96324
    m, lo, hi = mean_interval([1, 2, 3, 4, 5])
    assert m == 3.0
    assert lo == pytest.approx(3 - 1.963243, abs=1e-6)
    assert hi == pytest.approx(3 + 1.963243, abs=1e-6)
    stats = pytest.importorskip("scipy.stats")
    xs = [0.81, 0.93, 0.88, 0.91, 0.85, 0.90]
    ref = stats.t.interval(0.95, len(xs) - 1, loc=np.mean(xs), scale=stats.sem(xs))
    assert mean_interval(xs)[1:] == pytest.approx(ref, rel=1e-12)
    # one value: no interval; infinite values are left out of a mean
    assert math.isnan(mean_interval([2.0])[1])
    assert mean_interval([1.0, 3.0, math.inf])[0] == 2.0


def test_median_interval_against_the_exact_bootstrap():
    xs = [1.0, 2.0, 3.0, 10.0]
    # every one of the 4^4 resamples is equally likely: the exact bootstrap distribution
    meds = sorted(float(np.median(c)) for c in itertools.product(xs, repeat=4))
    exact = np.quantile(meds, [0.025, 0.975], method="inverted_cdf")
    m, lo, hi = median_interval(xs, resamples=20_000)
    assert m == 2.5
    assert (lo, hi) == (float(exact[0]), float(exact[1])) == (1.0, 10.0)
    # a constant sample has a point interval; an infinite draw keeps the median finite
    assert median_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    assert median_interval([0.2, 0.3, math.inf])[0] == 0.3
    # seeded: the same interval twice
    assert median_interval([0.1, 0.5, 0.3, 0.9, 0.2]) == median_interval([0.1, 0.5, 0.3, 0.9, 0.2])


def test_paired_difference_verdicts():
    # d = 1, 2, 3: mean 2, se 1/sqrt(3), t(0.975, 2) = 4.302653 -> [-0.484, 4.484]: a tie
    d, lo, hi, v = paired_difference([2, 3, 4], [1, 1, 1])
    assert (d, v) == (2.0, "tie")
    assert lo == pytest.approx(2 - 4.302653 / math.sqrt(3), abs=1e-6)
    # a constant difference is certain
    assert paired_difference([2, 3, 4, 5], [0, 1, 2, 3])[3] == "higher"
    assert paired_difference([0, 1, 2, 3], [2, 3, 4, 5])[3] == "lower"
    # an unfinished transfer (inf) counts as the cap: worse, not incomparable
    assert paired_difference([math.inf] * 3, [1.0, 1.0, 1.0], cap=1000.0)[:1] == (999.0,)
    assert paired_difference([1.0], [0.0])[3] == "tie"  # one draw proves nothing
    with pytest.raises(ValueError):
        paired_difference([1.0, 2.0], [1.0])


# --------------------------------------------------------------------------- summaries
def _policy_rows():
    rows = []
    rng = np.random.default_rng(3)
    for draw in range(5):
        for pol, gp, fct in (("ecmp", 0.70, 0.9), ("queue-max", 0.80, 0.5), ("random", 0.71, 0.9)):
            rows.append({"scenario": "Abilene", "heavy": 20.0, "seed": 0, "draw": draw,
                         "policy": pol, "goodput_lp": gp + 0.001 * draw + rng.normal(0, 0.002),
                         "fct_median": fct + 0.01 * draw, "fct_p99": 4.0, "jain": 0.9,
                         "status": "ok"})
    return rows


def test_summarize_and_verdicts_on_policy_rows():
    rows = _policy_rows()
    by = ["scenario", "heavy", "seed", "policy"]
    summ = summarize(rows, by, W.METRICS)
    assert [s["policy"] for s in summ] == ["ecmp", "queue-max", "random"]
    assert all(s["draws"] == 5 for s in summ)
    ecmp = summ[0]
    vals = [r["goodput_lp"] for r in rows if r["policy"] == "ecmp"]
    assert (ecmp["goodput_lp"], ecmp["goodput_lp_lo"], ecmp["goodput_lp_hi"]) == \
        mean_interval(vals)
    assert ecmp["fct_median"] == pytest.approx(0.92)  # the median of 0.90 .. 0.94
    ver = verdicts(rows, by=by, arm="policy", metrics=W.METRICS)
    got = {(v["metric"], v["a"], v["b"]): v["verdict"] for v in ver}
    assert got[("goodput_lp", "ecmp", "queue-max")] == "lower"
    assert got[("goodput_lp", "queue-max", "random")] == "higher"
    assert got[("fct_median", "ecmp", "queue-max")] == "higher"
    assert got[("fct_median", "ecmp", "random")] == "tie"  # the same FCT in every draw
    assert got[("fct_p99", "ecmp", "random")] == "tie"
    text = format_verdicts(ver, W.METRICS, ["scenario", "heavy", "seed"])
    assert "5 draws" in text and "queue-max" in text
    lines = text.splitlines()
    i = next(k for k, x in enumerate(lines) if x.strip().startswith("goodput/LP"))
    assert lines[i + 1].split()[-3:] == [".", "<", "<"]  # ecmp vs ecmp, queue-max, random
    assert lines[i + 2].split()[-3:] == [">", ".", ">"]
    table = format_summary(summ, by, W.METRICS)
    assert "[" in table and "Student t" in table and "bootstrap" in table


def test_verdicts_pair_by_draw_not_by_position():
    # queue-max is better in every draw by 0.01, but the draws differ by 0.1 between them:
    # unpaired intervals would overlap, paired ones do not
    rows = []
    for draw in range(6):
        for pol, off in (("a", 0.0), ("b", 0.01)):
            rows.append({"scenario": "s", "draw": draw, "policy": pol,
                         "goodput_lp": 0.5 + 0.1 * draw + off, "status": "ok"})
    m = [Metric("goodput_lp")]
    (v,) = verdicts(rows, by=["scenario", "policy"], arm="policy", metrics=m)
    assert v["verdict"] == "lower" and v["difference"] == pytest.approx(-0.01)
    # a failed draw of one arm is left out of the pairing
    rows[0]["status"] = "failed"
    (v,) = verdicts(rows, by=["scenario", "policy"], arm="policy", metrics=m)
    assert v["draws"] == 5


def test_fault_rows_reduce_to_one_row_per_draw():
    rows = []
    for draw in range(2):
        for sec in range(8):
            rows.append({"scenario": "fault", "strategy": "mptcp", "seed": 0, "draw": draw,
                         "second": sec, "total": 3.0 if sec < 4 else 2.0 + draw,
                         "jain": 1.0, "fail_after": 4.0})
    got = SE.fault_draws(rows)
    assert [(r["before"], r["after"], r["worst"]) for r in got] == [(3.0, 2.0, 2.0),
                                                                    (3.0, 3.0, 3.0)]
    summ = summarize(got, ["scenario", "strategy"], SE.FAULT_METRICS)
    assert summ[0]["draws"] == 2 and summ[0]["after"] == 2.5


def test_report_prints_draws_or_intervals():
    exp = TP.TwoPaths(TP.TwoPathSettings(scenario="delay", policies=("random", "queue-max")))
    rows = [{"scenario": "delay", "heavy": "", "seed": 0, "draw": d, "policy": p,
             "fct_median": 0.3 + 0.1 * (p == "random") + 0.01 * d, "fct_p90": 1, "fct_p99": 1,
             "on_idle": 0.5, "completed": 10, "transfers": 10, "status": "ok"}
            for d in range(3) for p in ("random", "queue-max")]
    summ, ver = exp.summarize(rows)
    text = exp.report(Outcome(exp.kind, rows, None, summ, ver))
    assert "which differences are real" in text and "FCT median" in text
    one = [r for r in rows if r["draw"] == 0]
    assert "which differences" not in exp.report(Outcome(exp.kind, one, None,
                                                         *exp.summarize(one)))
    # failover: strategies paired by run and draw, never-recovered runs count
    fo = [{"scenario": "Abilene", "run": run, "draw": 0, "strategy": s, "param": "",
           "recovery_s": v, "moved_s": math.nan,
           "status": "ok" if math.isfinite(v) else "not recovered"}
          for run in range(6) for s, v in (("plain", math.inf if run == 0 else 6.5 + run / 10),
                                            ("nrto", 1.5 + run / 100))]
    summ = summarize(fo, ["scenario", "strategy", "param"], F.METRICS)
    assert summ[0]["strategy"] == "plain" and summ[0]["recovery_s"] == pytest.approx(6.85)
    (v,) = verdicts(fo, by=["scenario", "strategy", "param"], arm="strategy",
                    metrics=F.METRICS[:1], draw=["run", "draw"])
    assert v["verdict"] == "higher" and v["draws"] == 6
    # the run plain never recovered counts as twice the longest finite recovery (2 x 7.0 s)
    assert v["difference"] == pytest.approx((14 - 1.5 + sum(6.5 + r / 10 - 1.5 - r / 100
                                                              for r in range(1, 6))) / 6)


# --------------------------------------------------------------------------- what differs per draw
def test_draw_seeds():
    assert draw_seed(7, 0) == 7  # a single run is the run of before
    seeds = {draw_seed(7, d) for d in range(1, 50)}
    assert len(seeds) == 49 and 7 not in seeds and all(0 <= s < 2 ** 31 for s in seeds)
    assert draw_seed(7, 3) == draw_seed(7, 3) != draw_seed(8, 3)
    assert hash_seed(0, "A") == hash_seed(0, "A", 0) != hash_seed(0, "A", 1)
    assert hash_seed(0, "A", 1) != hash_seed(0, "B", 1)
    sc = two_sites()
    spec = network_spec(sc.topology, sc.plan, prefix="tpcx-", seed=5)
    assert [r.hash_seed for r in spec.routers] == [hash_seed(5, r.name) for r in spec.routers]


def test_exp3_hook_parsed_and_redecides():
    assert parse_policy("exp3:0.1:16k") == ("exp3", {"gamma": 0.1, "hook_bytes": 16000})
    assert parse_policy("exp3:0.2:1500") == ("exp3", {"gamma": 0.2, "hook_bytes": 1500})
    for bad in ("exp3:0.1:0", "exp3:0.1:x", "exp3:0.1:-5k"):
        with pytest.raises(UsageError, match="HOOK"):
            parse_policy(bad)
    pol = make_policy("exp3:0.5:10k", {"d": 2}, seed=1)
    assert pol.hook_bytes == 10_000
    pol.choose(1, "d", 0.0)
    assert pol.progress(1, 0.1, srtt_us=800.0, acked_bytes=5_000) is None  # not yet 10 kB
    decided = [pol.progress(1, 0.2 + i, srtt_us=800.0 + i, acked_bytes=10_000 * (i + 1))
               for i in range(20)]
    # every 10 kB it draws again: with gamma 0.5 it moves at least once in 20 draws
    assert any(d is not None for d in decided)
    assert make_policy("exp3:0.5", {"d": 2}, seed=1).progress(1, 1.0, acked_bytes=10 ** 6) \
        is None


def test_mptcp_as_a_policy_is_checked():
    assert W.mptcp_subflows("mptcp:4") == 4 and W.mptcp_subflows("exp3:0.1") == 0
    W.PolicySettings(policies=("ecmp", "mptcp:2", "mptcp:4")).check()
    for bad in ("mptcp:0", "mptcp:9", "mptcp:x"):
        with pytest.raises(UsageError, match="1 to 8"):
            W.PolicySettings(policies=(bad,)).check()
    with pytest.raises(UsageError):  # the two-path scenarios have no mptcp policy
        TP.TwoPathSettings(scenario="delay", policies=("mptcp:2",)).check()


def test_mtu_shapes_links_and_queues():
    sc = two_sites()
    spec = network_spec(sc.topology, sc.plan, prefix="tpcx-", mtu=9000)
    assert spec.frame_bytes == 9014 and spec.summary()["mtu"] == 9000
    lines = [ln for phase in build_steps(spec) for step in phase
             for ln in getattr(step, "lines", ())]
    assert any("mtu 9000" in ln for ln in lines)
    assert any("quantum 9014" in ln for ln in lines)
    # at 10 Mbit/s and 50 ms a queue is 62500 bytes: above 10 jumbo frames? no: 10 x 9014
    q = min(i.queue_bytes for r in spec.routers for i in r.interfaces)
    assert q == 10 * 9014
    assert min(i.queue_bytes for r in network_spec(sc.topology, sc.plan, prefix="tpcx-")
               .routers for i in r.interfaces) == 62500
    for bad in (1279, 9001):
        with pytest.raises(UsageError, match="--mtu"):
            network_spec(sc.topology, sc.plan, prefix="tpcx-", mtu=bad)


def test_saturated_cpu_and_goodput_over_the_ceiling_are_warned():
    exp = TP.TwoPaths(TP.TwoPathSettings(scenario="delay", policies=("random", "queue-max")))
    rows = [{"scenario": "delay", "heavy": "", "seed": 0, "draw": 0, "policy": p,
             "fct_median": 0.3, "fct_p90": 1, "fct_p99": 1, "on_idle": 0.5, "completed": 10,
             "transfers": 10, "status": "ok", "cpu_busy": c, "data_share": d}
            for p, c, d in (("random", 0.41, 0.97), ("queue-max", 0.89, 1.02))]
    assert caveats(rows) == []  # 89 % busy and 1.02 (within window noise) pass
    assert "warning" not in exp.report(Outcome(exp.kind, rows, None, *exp.summarize(rows)))
    rows[1].update(cpu_busy="0.95", data_share="1.08")  # read back from a folder: strings
    rows.append(dict(rows[0], policy="ecmp", cpu_busy=0.99, status="failed"))  # not counted
    warn = caveats(rows)
    assert len(warn) == 2
    assert "90% or more busy in 1 of 2 measurements (up to 95%: scenario delay seed 0 draw 0 " \
           "policy queue-max)" in warn[0] and "--link-mbps" in warn[0]
    assert "data share up to 1.08" in warn[1] and "--seconds" in warn[1]
    assert exp.report(Outcome(exp.kind, rows, None, *exp.summarize(rows))).endswith(warn[1])
    # ecmp above its LP is per-connection hashing beating the even split, not window noise
    ecmp = [dict(rows[0], model="ecmp", policy="", data_share=1.2), dict(rows[0], model="sr")]
    (note,) = caveats(ecmp)
    assert note.startswith("note: ecmp above its LP in 1 of 2 measurements (data share up to "
                           "1.20") and "multipath LP" in note and "--seconds" not in note


def test_a_shares_interval_stays_inside_its_bounds():
    # CPU busy 0.05, 0.05, 0.20 over 3 draws: the t interval reaches below 0 (hand: mean 0.1,
    # s = 0.0866, t(0.975, 2) = 4.303, half-width 0.215) and is cut to [0, 0.315]
    cpu = Metric("cpu_busy", bounds=SHARE)
    v, lo, hi = cpu.interval([0.05, 0.05, 0.20])
    raw = Metric("cpu_busy").interval([0.05, 0.05, 0.20])
    assert v == pytest.approx(0.1) and raw[1] == pytest.approx(0.1 - 0.21517, abs=1e-4)
    assert (lo, hi) == (0.0, pytest.approx(raw[2]))
    assert Metric("j", bounds=SHARE).interval([0.99, 0.999, 0.9])[2] == 1.0
    assert math.isnan(cpu.interval([0.3])[1])  # one draw: no interval, not a bound

"""The CPU budget (emulate/experiments/budget.py) without root: a run's cost from a real LP
solution worked by hand, the settings it chooses worked by hand, the calibration's fit and its
file read as untrusted data."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.emulate.experiments import budget as B
from tpcstudy.emulate.experiments.calibrate import fit
from tpcstudy.errors import EmulationError, InputFileError, UsageError
from tpcstudy.models.maxflow import max_flow


def _triangle(cap_st: float = 1.0):
    g = nx.Graph()
    g.add_edge("s", "t", capacity=cap_st)
    g.add_edge("s", "a", capacity=1.0)
    g.add_edge("a", "t", capacity=1.0)
    return read_topology(g, capacity="file")


def _cal(spp: float, base: float = 0.05, cpus: int = 2, per_data: float = 1.0
         ) -> B.Calibration:
    return B.Calibration(seconds_per_packet=spp, base_busy=base, cpus=cpus, mtu=1500,
                         machine=B.machine(), packets_per_data=per_data)


def test_run_cost_of_a_real_lp_by_hand():
    """sr k = 2 on the triangle sends 1 on s-t and 1 round s-a-t: 3 arc-units of load plus 2
    host-NIC units; the longest path has 2 hops. ecmp (1 on s-t) costs less: sr is the run's."""
    t = _triangle()
    sr = max_flow(t, [("s", "t")], model="sr", k=2)
    ecmp = max_flow(t, [("s", "t")], model="ecmp")
    assert sr.value == pytest.approx(2.0) and ecmp.value == pytest.approx(1.0)
    c = B.run_cost(t, [ecmp, sr], unit=1.0)
    assert (c.hop_units, c.max_hops, c.path_unit_hops, c.pairs, c.value) == pytest.approx(
        (5.0, 2.0, 2.0, 1, 2.0))
    assert B.run_cost(t, [ecmp], unit=1.0).hop_units == pytest.approx(2.0)
    # a faster s-t link (capacity 4) counts in units of the smallest link: the same load, but a
    # frame on the fast link takes a quarter of the time
    t4 = _triangle(4.0)
    c4 = B.run_cost(t4, [max_flow(t4, [("s", "t")], model="ecmp")], unit=1.0)
    assert c4.hop_units == pytest.approx(4.0 + 4.0) and c4.path_unit_hops == pytest.approx(0.25)


def test_nice_floor():
    assert [B.nice_floor(x) for x in (266.0, 2.66, 0.97, 10.0, 0.149, 7.99, 1.0)] == \
        [250.0, 2.5, 0.8, 10.0, 0.12, 6.0, 1.0]
    with pytest.raises(ValueError):
        B.nice_floor(0.0)


def test_choose_by_hand():
    t = _triangle()
    cost = B.run_cost(t, [max_flow(t, [("s", "t")], model="sr", k=2)], unit=1.0)
    per_mbps = 5.0 * 1e6 / (8 * 1514)  # 412.8 data packets/s per Mbit/s
    # a fast machine: the cap (10 Mbit/s, the old default) binds
    fast = B.choose(cost, _cal(1e-5), mtu=1500, queue_ms=50.0, per_pair=8)
    assert fast.link_mbps == 10.0 and "highest auto rate" in fast.reason
    # a slow one: 0.6 x 2 CPUs / (1e-3 s x 412.8) = 2.91 Mbit/s, rounded down to 2.5 (the
    # idle load at calibration, 5 %, is not planned with)
    slow = B.choose(cost, _cal(1e-3), mtu=1500, queue_ms=50.0, per_pair=8)
    assert slow.link_mbps == 2.5
    assert slow.predicted_busy == pytest.approx(per_mbps * 2.5 * 1e-3 / 2)
    frame_s = 8 * 1514 / 2.5e6
    assert slow.rtt == pytest.approx(1.1 * 2 * frame_s + 0.050)
    assert (slow.warmup, slow.seconds) == (3.0, 10.0)  # 20 and 40 round trips are shorter
    # 2 units x 206 frames/s x 60.7 ms = 25 frames in flight: 6 connections get 4 each
    assert slow.per_pair == 6 and "6 connections per pair (not 8)" in slow.reason
    assert B.choose(cost, _cal(1e-3), mtu=1500, queue_ms=50.0, per_pair=8,
                    fixed_pairs=True).per_pair == 8
    # ACKs and retransmissions: 2 packets per data packet cost twice as much (1.45 -> 1.2)
    two = B.choose(cost, _cal(1e-3, per_data=2.0), mtu=1500, queue_ms=50.0, per_pair=8)
    assert two.link_mbps == 1.2
    assert two.predicted_busy == pytest.approx(2 * per_mbps * 1.2 * 1e-3 / 2)
    # a rate given is kept, the window grows with its round trips
    low = B.choose(cost, None, mtu=1500, queue_ms=50.0, per_pair=1, link_mbps=0.1)
    rtt = 1.1 * 2 * 8 * 1514 / 0.1e6 + 10 * 8 * 1514 / 0.1e6
    assert low.rtt == pytest.approx(rtt) and math.isnan(low.predicted_busy)
    assert (low.warmup, low.seconds) == (math.ceil(20 * rtt), math.ceil(40 * rtt))
    # nothing fits: refused with the numbers, not a rate of zero
    with pytest.raises(UsageError, match="does not fit this machine"):
        B.choose(cost, _cal(1.0), mtu=1500, queue_ms=50.0, per_pair=8)
    with pytest.raises(UsageError, match="cpu-budget"):
        B.choose(cost, _cal(1e-5), budget=1.5, mtu=1500, queue_ms=50.0, per_pair=8)


def test_fit_by_hand():
    # busy = 0.04 + pps * 2e-5 / 2: three points on the line, one saturated point left out
    pts = [(10.0, 4000.0, 0.08), (20.0, 8000.0, 0.12), (40.0, 16000.0, 0.20),
           (320.0, 128000.0, 0.97)]
    cal = fit(pts, 2)
    assert cal.seconds_per_packet == pytest.approx(2e-5)
    assert cal.base_busy == pytest.approx(0.04) and cal.packets_per_core == pytest.approx(5e4)
    assert cal.points == tuple(pts)
    with pytest.raises(EmulationError, match="usable points"):
        fit(pts[-1:], 2)
    with pytest.raises(EmulationError, match="does not grow"):
        fit([(10.0, 4000.0, 0.5), (20.0, 8000.0, 0.3)], 2)


def test_fit_refuses_what_other_work_on_the_machine_made():
    """Synthetic readings (issue 44: a real one fitted 4.9e-8 s per packet, 20 M packets/s per
    CPU, from two points that other work had moved): a fit outside the plausible costs, or a
    point far off the line, is an error saying to measure again, never a calibration stored."""
    rng = np.random.default_rng(3)
    for cost in (2e-6, 2e-5, 3e-4):  # a clean machine: the cost comes back, any plausible one
        pps = np.array([2000.0, 4000.0, 8000.0, 16000.0]) * (2e-5 / cost)
        busy = 0.03 + pps * cost / 2 + rng.normal(0, 0.005, 4)
        cal = fit([(r, p, b) for r, p, b in zip((5.0, 10.0, 20.0, 40.0), pps, busy)], 2)
        assert cal.seconds_per_packet == pytest.approx(cost, rel=0.15)
    # the reported failure: busy dominated by other work, barely moving with 4x the packets
    with pytest.raises(EmulationError, match="not plausible"):
        fit([(5.0, 8300.0, 0.6100), (20.0, 33000.0, 0.6106)], 2)
    with pytest.raises(EmulationError, match="not plausible"):  # 500 packets/s per CPU
        fit([(5.0, 100.0, 0.1), (20.0, 400.0, 0.7)], 2)
    with pytest.raises(EmulationError, match="off the fitted line"):  # a burst of other work
        fit([(5.0, 4000.0, 0.08), (10.0, 8000.0, 0.45), (20.0, 16000.0, 0.20),
             (40.0, 32000.0, 0.36)], 2)


def test_calibration_file_round_trip_and_refusals(tmp_path):
    cal = fit([(10.0, 4000.0, 0.08), (20.0, 8000.0, 0.12)], 2)
    p = B.save_calibration(cal, tmp_path / "cal.json")
    assert B.load_calibration(p) == cal
    d = json.loads(p.read_text())
    other = dict(d, machine=dict(d["machine"], cpu="another CPU"))
    p.write_text(json.dumps(other))
    assert B.load_calibration(p) is None  # another machine's: measured again
    assert B.load_calibration(p, any_machine=True).machine["cpu"] == "another CPU"
    for bad, words in ((dict(d, seconds_per_packet=-1), "seconds_per_packet = -1"),
                       (dict(d, seconds_per_packet="1e-5"), "seconds_per_packet = '1e-5'"),
                       (dict(d, format=99), "not a calibration of format 1"),
                       (dict(d, points=[[1, 2]]), "points must be"),
                       (dict(d, points=[[1, float("nan"), 0.5]]), "triples of finite numbers"),
                       (dict(d, points=[[1, float("inf"), 0.5]]), "triples of finite numbers"),
                       (dict(d, cpus=1.7), "cpus = 1.7 is not a whole number"),
                       (dict(d, machine="x"), "machine = 'x'")):
        p.write_text(json.dumps(bad))
        with pytest.raises(InputFileError, match=words):
            B.load_calibration(p)
    p.write_text("{not json")
    with pytest.raises(InputFileError, match="not JSON"):
        B.load_calibration(p)
    link = tmp_path / "link.json"
    link.symlink_to(p)
    with pytest.raises(InputFileError, match="symbolic link"):
        B.load_calibration(link)
    assert B.load_calibration(tmp_path / "absent.json") is None


def test_cost_grows_with_the_routers_by_hand():
    """The chain (5 routers) costs 1e-5 s a packet, the grid (225) 3e-5: at 225 the grid's, in
    between and beyond the line in log routers, never below the chain's."""
    import dataclasses

    cal = dataclasses.replace(_cal(1e-5), routers=5, scale_routers=225,
                              scale_seconds_per_packet=3e-5)
    assert cal.cost(5) == pytest.approx(1e-5) and cal.cost(2) == pytest.approx(1e-5)
    assert cal.cost(225) == pytest.approx(3e-5)
    assert cal.cost(15) == pytest.approx(1e-5 + 2e-5 * math.log(3) / math.log(45))
    assert cal.cost(680) == pytest.approx(1e-5 + 2e-5 * math.log(136) / math.log(45))
    assert _cal(1e-5).cost(680) == pytest.approx(1e-5)  # no grid measured: the chain's
    t = _triangle()
    cost = B.run_cost(t, [max_flow(t, [("s", "t")], model="sr", k=2)], unit=1.0)
    # the slow machine of test_choose_by_hand (2.91 Mbit/s on the chain) costs 3 times as much
    # a packet at 225 routers: 0.97 Mbit/s, rounded down to 0.8
    slow = dataclasses.replace(_cal(1e-3), scale_routers=225, scale_seconds_per_packet=3e-3)
    assert B.choose(cost, slow, mtu=1500, queue_ms=50.0, per_pair=8, routers=225
                    ).link_mbps == 0.8


def test_the_retry_rate_reads_the_rows_not_their_order(tmp_path):
    """The rate of a CPU-bound network's second attempt comes from the first attempt's busiest
    reading and the rate it ran at: a skipped row (no reading) first once made it 'saturated:
    half the rate', and a rate chosen since (a new calibration) is not the one measured.
    Hand: min(10 x 0.6 / 0.85 = 7.06, 0.8 x 10) = 7.06, rounded down to 6."""
    from tpcstudy.emulate.experiments.harness import NetworkSettings
    from tpcstudy.emulate.experiments.throughput import Throughput, ThroughputSettings

    path = tmp_path / "ring.gml"
    nx.write_gml(nx.relabel_nodes(nx.cycle_graph(5), str), path)
    exp = Throughput(topo=str(path), heavy=[100.0], seeds=[0],
                     settings=ThroughputSettings(models=("ecmp", "sr")))
    unit = next(iter(exp.units(lambda m: None)))
    now = NetworkSettings(auto=True, link_mbps=4.0)
    rows = [{"model": "ecmp", "status": "ok", "cpu_busy": 0.85, "link_mbps": 10.0},
            {"model": "sr", "status": "skipped", "cpu_busy": "", "link_mbps": ""}]
    for order in (rows, rows[::-1]):
        got = exp.lower(unit, now, lambda m: None, order)
        assert got is not None and got.link_mbps == 6.0
        assert exp._fitted[unit.name][0].reason.startswith(
            "CPU-bound at 10 Mbit/s (85% busy there: x 0.6 / 0.85)")


def test_a_busy_machine_plans_with_what_is_left_by_hand(monkeypatch):
    # idle enough: the budget as given; half busy: 0.8 - 0.5 - 0.05 = 0.25; 70 %: nothing left
    assert B.budget_left(0.6, 0.1) == (0.6, "")
    left, words = B.budget_left(0.6, 0.5)
    assert left == pytest.approx(0.25) and "50% busy with other work: planned with 25%" in words
    assert B.budget_left(0.6, 0.7)[0] is None
    # a steady load (other work) ends the wait at once, with that load as the background
    monkeypatch.setattr(B, "busy_now", lambda seconds=0.5: 0.52)
    waited, busy = B.wait_quiet(timeout=30.0)
    assert waited < 1.0 and busy == pytest.approx(0.52)
    # a falling one (a torn-down network being freed) is waited for
    falling = iter([0.9, 0.7, 0.5, 0.35, 0.2])
    monkeypatch.setattr(B, "busy_now", lambda seconds=0.5: next(falling))
    assert B.wait_quiet(timeout=30.0)[1] == pytest.approx(0.2)
    # the environment's share instead of a measurement; refused when not a share
    monkeypatch.setenv(B.BACKGROUND_ENV, "0.4")
    assert B.background_share() == pytest.approx(0.4)
    monkeypatch.setenv(B.BACKGROUND_ENV, "half")
    with pytest.raises(UsageError, match="a share of the CPUs"):
        B.background_share()


def test_calibration_beside_other_work_by_hand():
    # the machine 70 % busy before any traffic: busy = 0.7 + pps * 2e-5 / 2, usable up to
    # 0.7 + 0.3 x 0.85 = 0.955 (against an idle machine's 85 %: one point, no line)
    pts = [(5.0, 10000.0, 0.8), (8.0, 15000.0, 0.85), (10.0, 20000.0, 0.9),
           (20.0, 30000.0, 1.0)]
    with pytest.raises(EmulationError, match="1 usable points"):
        fit(pts, 2)
    cal = fit(pts, 2, background=0.7)
    assert cal.seconds_per_packet == pytest.approx(2e-5) and cal.base_busy == pytest.approx(0.7)
    with pytest.raises(EmulationError, match=r"--link-mbps N"):
        fit(pts[-1:], 2, background=0.7)


def test_auto_falls_back_to_a_stated_rate(tmp_path, monkeypatch):
    from tpcstudy.emulate.experiments import throughput as T
    from tpcstudy.emulate.experiments.harness import NetworkSettings

    path = tmp_path / "ring.gml"
    nx.write_gml(nx.relabel_nodes(nx.cycle_graph(5), str), path)
    exp = T.Throughput(topo=str(path), heavy=[100.0], seeds=[0],
                       settings=T.ThroughputSettings(models=("ecmp", "sr")))
    unit = next(iter(exp.units(lambda m: None)))
    net = NetworkSettings(auto=True, link_mbps=10.0)
    monkeypatch.delenv(B.BACKGROUND_ENV, raising=False)  # measured (here: mocked) background
    monkeypatch.setattr(T, "background_share", lambda: 1.0)
    monkeypatch.setattr(T, "machine_calibration", lambda log, mtu, must: _cal(1e-5))
    c = exp._choose(unit, net, None, lambda m: None)
    assert c.link_mbps == B.FALLBACK_MBPS and "100% busy with other work" in c.reason \
        and "--link-mbps N" in c.reason
    monkeypatch.setattr(T, "machine_calibration", lambda log, mtu, must: None)  # no calibration
    monkeypatch.setattr(T, "background_share", lambda: 0.0)
    c = exp._choose(unit, net, None, lambda m: None)
    assert c.link_mbps == B.FALLBACK_MBPS and c.reason.startswith("no calibration of this machine")
    # half busy: the plan of what is left (0.25 of the CPUs) against the idle plan (0.6)
    cal = _cal(2e-4)
    monkeypatch.setattr(T, "machine_calibration", lambda log, mtu, must: cal)
    idle = exp._choose(unit, net, None, lambda m: None)
    monkeypatch.setattr(T, "background_share", lambda: 0.5)
    busy = exp._choose(unit, net, None, lambda m: None)
    assert busy.predicted_busy <= 0.25 + 1e-9 < idle.predicted_busy <= 0.6 + 1e-9
    assert "planned with 25% of the CPUs" in busy.reason and exp._background[unit.name] == 0.5

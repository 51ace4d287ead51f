"""The failure experiment's arithmetic without root: goodput bins from cumulative timelines,
the most loaded link of an sr solution (hand-worked on a square), a connection's stall, the
timeouts it spans, and when a stall is the cut's (hit) or later congestion."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tpcstudy import UsageError
from tpcstudy.emulate.experiments.failures import (
    FailuresSettings,
    arc_loads,
    most_loaded_link,
    reaction_policy,
)
from tpcstudy.emulate.experiments.recovery import goodput_series, hit_by_cut, stall, timeouts
from tpcstudy.topology import RawEdge, build_topology


def test_goodput_series_from_cumulative_bytes():
    # two connections; bytes so far at each read; bins of 0.1 s from t0 = 10
    a = [(10.05, 1000), (10.15, 3000), (10.25, 3500)]
    b = [(10.01, 500), (10.31, 1500)]
    got = goodput_series([a, b], 10.0, 10.4)
    assert np.allclose(got, [1500 * 80, 2000 * 80, 500 * 80, 1000 * 80])


def test_most_loaded_link_hand_worked():
    t = build_topology("square", ["A", "B", "C", "D"],
                       [RawEdge(0, 1), RawEdge(1, 2), RawEdge(2, 3), RawEdge(3, 0)])
    # A->C over B carries 1, A->C over D 0.5, B->C direct 0.5: arcs B->C = 1.5, A->B = 1
    res = SimpleNamespace(pairs=[("A", "C"), ("B", "C")], path_pair=np.array([0, 0, 1]),
                          paths=[("B", "C"), ("D", "C"), ("C",)], flows=np.array([1, .5, .5]))
    load = arc_loads(t, res)
    assert np.isclose(load[t.arc_of("B", "C")], 1.5) and np.isclose(load[t.arc_of("A", "B")], 1)
    assert most_loaded_link(t, res) == (1, 2)
    assert most_loaded_link(t, res, avoid=["B"]) in {(2, 3), (0, 3)}  # C-D and A-D: 0.5 each


def test_payload_share_hand_worked():
    """Payload per wire byte of a full packet: MTU - IPv6 40 - TCP 20 - timestamps 12 - SRH room,
    over MTU + Ethernet 14 - room + own SRH."""
    from tpcstudy.emulate.network.spec import payload_share, srh_size

    assert srh_size(1) == 40 and srh_size(2) == 56 and srh_size(9) == 168 and srh_size(0) == 0
    assert payload_share(1500, 40) == pytest.approx(1388 / 1514)
    assert payload_share(9000, 40) == pytest.approx(8888 / 9014)
    assert payload_share(1500, 0) == pytest.approx(1428 / 1514)  # plain: no SRH
    # room for a longer SRH than the packet carries: a shorter payload and a shorter frame
    assert payload_share(1500, 40, room=72) == pytest.approx((1500 - 72 - 72) / (1500 - 72 + 40
                                                                                 + 14))
    assert payload_share(9000, 56) > 0.98 > payload_share(1500, 40) > 0.9


def test_stall_is_the_one_recovery_time_counts():
    from tpcstudy.emulate.experiments.failover import recovery_time
    tl = [(9.90, 1), (9.95, 2), (10.02, 3), (10.70, 4), (10.75, 5)]  # cut at 10, gap 0.1
    assert stall(tl, 10.0, 0.1) == pytest.approx((0.02, 0.70))
    assert recovery_time(tl, 10.0, 12.0, 0.1) == ("ok", pytest.approx(0.70))
    assert stall([(9.9, 1), (10.05, 2)], 10.0, 0.1) == pytest.approx((-0.1, 0.05))
    assert stall([(9.9, 1)], 10.0, 0.1) == (pytest.approx(-0.1), float("inf"))  # never back
    # silent from its last read on (recovery_time: lost, when the run ends a gap later)
    assert stall([(10.01, 1), (10.05, 2)], 10.0, 0.1) == (pytest.approx(0.05), float("inf"))
    assert stall([], 10.0, 0.1) is None


def test_timeouts_hand_worked():
    # RTO 0.25 s doubling: the retransmissions leave 0.25, 0.75, 1.75 s into the stall
    assert [timeouts(x, 0.25) for x in (0.27, 0.78, 1.0, 1.8)] == [1, 2, 2, 3]
    assert timeouts(float("inf"), 0.25) == -1 and timeouts(1.0, 0.0) == -1


def test_a_stall_long_after_the_cut_is_not_a_hit():
    # read through the cut (every 50 ms), then a 150 ms congestion stall 2 s after it
    reads = [(10.0 + 0.05 * i, i) for i in range(-5, 41)] + [(12.15 + 0.05 * i, 50 + i)
                                                           for i in range(20)]
    assert hit_by_cut(reads, 10.0, 14.0, 0.1, 0.5) == ("later", pytest.approx(2.15),
                                                       (pytest.approx(2.0), pytest.approx(2.15)))
    # the same stall 0.3 s after the cut: hit, recovered 0.45 s after it
    near = [(t, b) for t, b in reads if t <= 10.3] + [(10.45 + 0.05 * i, 100 + i)
                                                       for i in range(10)]
    state, v, st = hit_by_cut(near, 10.0, 14.0, 0.1, 0.5)
    assert state == "ok" and v == pytest.approx(0.45) and st == (pytest.approx(0.3),
                                                                pytest.approx(0.45))
    # reads stop for good: lost, whenever they stopped
    assert hit_by_cut(reads[:20], 10.0, 14.0, 0.1, 0.5)[0] == "not recovered"


def test_a_stall_under_way_at_the_cut_is_not_a_hit():
    # silent from 7.6 s (a back-off 2.4 s before the cut at 10 s), reading again at 11.0 s:
    # already stalled when the link went down, whatever its end
    reads = [(7.0 + 0.05 * i, i) for i in range(13)] + [(11.0 + 0.05 * i, 20 + i)
                                                       for i in range(60)]
    assert hit_by_cut(reads, 10.0, 14.0, 0.1, 0.5) == ("earlier", pytest.approx(1.0),
                                                       (pytest.approx(-2.4), pytest.approx(1.0)))
    # last read 60 ms before the cut (less than --gap-ms): the cut's stall, hit
    near = [(9.94 - 0.05 * i, 30 - i) for i in range(10)] + [(10.3 + 0.05 * i, 40 + i)
                                                             for i in range(10)]
    state, v, st = hit_by_cut(near, 10.0, 14.0, 0.1, 0.5)
    assert state == "ok" and v == pytest.approx(0.3) and st[0] == pytest.approx(-0.06)
    # a connection stalled before the cut that never reads again is still lost
    assert hit_by_cut(reads[:13], 10.0, 14.0, 0.1, 0.5)[0] == "not recovered"
    # ... and so is one that reads once after it (a hole's retransmission), then no more
    once = reads[:13] + [(10.2, 20)]
    assert hit_by_cut(once, 10.0, 14.0, 0.1, 0.5)[0] == "not recovered"
    # stalled before the cut, reads at 10.2 s, stalls again from 10.25 to 10.6 s: hit by the
    # cut, recovered 0.6 s after it (the second stall is the cut's)
    again = reads[:13] + [(10.2, 20), (10.25, 21)] + [(10.6 + 0.05 * i, 30 + i)
                                                      for i in range(70)]
    state, v, st = hit_by_cut(again, 10.0, 14.0, 0.1, 0.5)
    assert state == "ok" and v == pytest.approx(0.6)
    assert st == (pytest.approx(0.25), pytest.approx(0.6))


def test_each_reactions_agents_policy():
    st = FailuresSettings(rto_count=3)  # the controller's agents: NRTOChanger(1) by default
    assert [reaction_policy(st, r).nrto for r in ("none", "hosts", "controller")] == [0, 3, 1]
    st = FailuresSettings(rto_count=3, controller_rto_count=0)  # the pushes alone
    assert [reaction_policy(st, r).nrto for r in ("none", "hosts", "controller")] == [0, 3, 0]
    assert {reaction_policy(st, r).kind for r in ("none", "hosts", "controller")} == {"wrr"}
    with pytest.raises(UsageError, match="--controller-rto-count -1"):
        FailuresSettings(controller_rto_count=-1).check()

"""The failure experiment's arithmetic without root: goodput bins from cumulative timelines,
the most loaded link of an sr solution (hand-worked on a square)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tpcstudy.emulate.experiments.failures import arc_loads, goodput_series, most_loaded_link
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

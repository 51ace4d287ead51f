"""tpcstudy.rules: capacity and weight rules (docs/method.md §1), and the capacities the Zoo
files give."""

from __future__ import annotations

import math

import pytest

import tpcstudy
from tpcstudy import TopologyFormatError, read_topology

from helpers import gml_file as _gml


def test_no_speed_anywhere_fills_one_gigabit(tmp_path):
    p = _gml(tmp_path, 'node [ id 0 ] node [ id 1 ] edge [ source 0 target 1 ]')
    t = read_topology(p, capacity="zoo")
    assert t.arc_capacity.tolist() == [1e9, 1e9]
    assert "1 Gbit/s" in t.meta["capacity_rule"]


def test_weight_rules(tmp_path):
    p = _gml(tmp_path, """
      node [ id 0 label "a" Latitude 0 Longitude 0 ] node [ id 1 label "b" Latitude 0 Longitude 1 ]
      node [ id 2 label "c" Latitude 1 Longitude 0 ]
      edge [ source 0 target 1 LinkSpeedRaw 100 ] edge [ source 1 target 2 LinkSpeedRaw 25 ]
      edge [ source 2 target 0 LinkSpeedRaw 50 ]
    """)
    inv = read_topology(p, capacity="zoo", weight="inverse-capacity")
    assert inv.arc_weight[inv.arc_of("a", "b")] == 1.0
    assert inv.arc_weight[inv.arc_of("b", "c")] == 4.0
    assert inv.arc_weight[inv.arc_of("c", "a")] == 2.0
    dist = read_topology(p, weight="distance")
    # one degree of arc on the equator is 2 pi R / 360 = 111.195 km
    assert dist.arc_weight[dist.arc_of("a", "b")] == pytest.approx(111.195, rel=1e-4)
    assert dist.arc_weight[dist.arc_of("b", "c")] == pytest.approx(157.2, rel=1e-3)
    # delay from distance over 200 km/ms
    assert dist.delay[0] == pytest.approx(111.195 / 200, rel=1e-4)
    # a router without coordinates: distance falls back to hop for the topology, and says so
    q = _gml(tmp_path, 'node [ id 0 Latitude 0 Longitude 0 ] node [ id 1 ] edge [ source 0 target 1 ]',
             "q.gml")
    t = read_topology(q, weight="distance")
    assert t.arc_weight.tolist() == [1.0, 1.0] and "hop" in t.meta["weight_rule"]
    with pytest.raises(TopologyFormatError, match="no IGP weights"):
        read_topology(q, weight="file")


def test_zoo_speeds_and_coverage(zoo_installed):
    t = read_topology("zoo/Amres", capacity="zoo")
    assert t.capacity_coverage() == 1.0 and "0 of" in t.meta["capacity_rule"]
    assert read_topology("zoo/Abilene", capacity="zoo").capacity_coverage() == 0.0
    cov = [read_topology(p).capacity_coverage() for p in tpcstudy.io.topology_files("zoo")]
    assert sum(c == 1.0 for c in cov) == 29 and sum(0 < c < 1 for c in cov) == 82
    assert not any(math.isnan(c) for c in cov)

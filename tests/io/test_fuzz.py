"""Fuzzing the readers: any input gives a Topology or the project's own error, never another
exception, never a hang (hypothesis-generated mutations of valid files and token soups)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tpcstudy import Topology, TpcStudyError, read_topology
from tpcstudy.io import read_demands

from helpers import FUZZ_SETTINGS, deadline, mutated

GML = b"""graph [
  node [ id 0 label "a" Latitude 1.5 Longitude 2 Internal 1 ]
  node [ id 1 label "b" ]
  node [ id 2 label "c" hyperedge 1 ]
  edge [ source 0 target 1 LinkSpeedRaw 1000000000 ]
  edge [ source 1 target 2 LinkLabel "x &amp; y" ]
  edge [ source 2 target 0 ]
  edge [ source 2 target 0 ]
]
"""


GRAPHML = b"""<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d1" />
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d2" />
  <graph edgedefault="undirected">
    <node id="0"><data key="d1">a</data></node>
    <node id="1"><data key="d1">b</data></node>
    <node id="2"><data key="d1">c</data></node>
    <edge source="0" target="1"><data key="d2">10000000.0</data></edge>
    <edge source="1" target="2" />
    <edge source="2" target="0" />
  </graph>
</graphml>
"""


REPETITA = b"""NODES 3
label x y
a 0 0
b 1 1
c 2 2

EDGES 6
label src dest weight bw delay
e0 0 1 1 100 1
e1 1 0 1 100 1
e2 1 2 2 100 1
e3 2 1 2 100 1
e4 2 0 1 50 3
e5 0 2 1 50 3
"""


DEMANDS = b"""DEMANDS 2
label src dest bw
d0 0 1 10
d1 2 0 5
"""


def _check(tmp_path, name: str, data: bytes, **kw):
    p = tmp_path / name
    p.write_bytes(data)
    with deadline(10):
        try:
            topo = read_topology(p, **kw)
        except TpcStudyError as exc:
            assert str(p) in str(exc)  # the message names the file
            return
    assert isinstance(topo, Topology)
    assert (topo.arc_capacity > 0).all() and (topo.arc_weight > 0).all()


@FUZZ_SETTINGS
@given(data=mutated(GML), rule=st.sampled_from(["hop", "inverse-capacity", "distance"]))
def test_fuzz_gml(tmp_path, data, rule):
    _check(tmp_path, "f.gml", data, capacity="zoo", weight=rule)


@FUZZ_SETTINGS
@given(data=mutated(GRAPHML))
def test_fuzz_graphml(tmp_path, data):
    _check(tmp_path, "f.graphml", data, capacity="zoo")


@FUZZ_SETTINGS
@given(data=mutated(REPETITA), rule=st.sampled_from(["file", "hop", "inverse-capacity"]))
def test_fuzz_repetita(tmp_path, data, rule):
    _check(tmp_path, "f.graph", data, capacity="file", weight=rule)


@FUZZ_SETTINGS
@given(data=mutated(DEMANDS))
def test_fuzz_demands(tmp_path, data):
    p = tmp_path / "f.demands"
    p.write_bytes(data)
    with deadline(10):
        try:
            read_demands(p)
        except TpcStudyError as exc:
            assert str(p) in str(exc)


@FUZZ_SETTINGS
@given(tokens=st.lists(st.sampled_from(["graph", "[", "]", "node", "edge", "id", "source", "target",
                                        "label", '"x"', "0", "1", "2", "-1", "3.5", "LinkSpeedRaw",
                                        "Latitude", "#c\n", "\n"]), max_size=60))
def test_fuzz_gml_token_soup(tmp_path, tokens):
    _check(tmp_path, "soup.gml", " ".join(tokens).encode())


@pytest.mark.parametrize("data", [b"", b"\x00" * 100, b"graph [" * 5000, b"[" * 100000])
def test_pathological_gml(tmp_path, data):
    _check(tmp_path, "p.gml", data)

"""Malformed input never becomes silently wrong numbers: counts that disagree with the lines, a
link listed in one direction only, weights whose path sums overflow, capacities that are not
numbers, file names that are not UTF-8. Each is an error naming the file (and line) and value."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import tpcstudy
from tpcstudy.errors import TopologyFormatError, UsageError
from tpcstudy.io import read_demands, topology_files

NODES = "NODES 4\nlabel x y\na 0 0\nb 1 0\nc 1 1\nd 0 1\n\n"
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def _graph(tmp_path: Path, arcs, count=None, weight="1", name="t.graph") -> Path:
    lines = [f"e{i} {u} {v} {weight} 1000 1" for i, (u, v) in enumerate(arcs)]
    text = NODES + f"EDGES {len(arcs) if count is None else count}\n" \
        "label src dest weight bw delay\n" + "\n".join(lines) + "\n"
    p = tmp_path / name
    p.write_text(text)
    return p


def _both(links):
    return [a for u, v in links for a in ((u, v), (v, u))]


def test_a_well_formed_graph_reads(tmp_path: Path) -> None:
    t = tpcstudy.read_topology(_graph(tmp_path, _both(RING)), weight="file")
    assert t.num_links == 4


def test_more_edge_lines_than_edges_announced(tmp_path: Path) -> None:
    p = _graph(tmp_path, _both(RING), count=6)  # 8 lines follow
    with pytest.raises(TopologyFormatError, match=r"t\.graph:16: EDGES 6 announced 6 lines, "
                                                  r"but more follow: 'e6 3 0"):
        tpcstudy.read_topology(p)


def test_more_demand_lines_than_demands_announced(tmp_path: Path) -> None:
    p = tmp_path / "t.demands"
    p.write_text("DEMANDS 1\nlabel src dest bw\nd0 0 1 5\nd1 1 2 5\n")
    with pytest.raises(TopologyFormatError, match=r"t\.demands:4: DEMANDS 1 announced"):
        read_demands(p)


def test_an_arc_without_its_reverse_is_an_error(tmp_path: Path) -> None:
    arcs = _both(RING)[:-1]  # 0 -> 3 listed, 3 -> 0 not
    p = _graph(tmp_path, arcs)
    with pytest.raises(TopologyFormatError, match=r"t\.graph:16: the arc d -> a is listed but "
                                                  "not a -> d"):
        tpcstudy.read_topology(p)


def test_a_one_way_digraph_is_not_mirrored() -> None:
    g = nx.DiGraph()
    nx.add_cycle(g, range(6))  # a one-way 6-ring: max flow 1 in the study's terms? no: an error
    with pytest.raises(TopologyFormatError, match=r"the arc 0 -> 1 is listed but not 1 -> 0.*"
                                                  r"to_undirected"):
        tpcstudy.read_topology(g)
    t = tpcstudy.read_topology(g.to_undirected())
    assert t.num_links == 6


def test_weights_whose_path_sums_overflow_are_refused(tmp_path: Path) -> None:
    p = _graph(tmp_path, _both(RING), weight="1e308")
    with pytest.raises(TopologyFormatError, match=r"IGP weight 1e\+308: a path of 3 such links"):
        tpcstudy.read_topology(p, weight="file")
    big = _graph(tmp_path, _both(RING), weight="1e14", name="big.graph")
    assert tpcstudy.read_topology(big, weight="file").num_links == 4  # 3e14 still adds up


@pytest.mark.parametrize("value", ["ten Gbps", float("inf"), "inf", True])
def test_a_networkx_capacity_that_is_not_a_number(value) -> None:
    g = nx.cycle_graph(4)
    g.edges[1, 2]["capacity"] = value
    with pytest.raises(TopologyFormatError, match=r"edge 1 - 2: capacity .* is not a finite number"):
        tpcstudy.read_topology(g, capacity="zoo")


def test_a_networkx_nan_is_unknown_not_an_error() -> None:
    g = nx.cycle_graph(4)
    g.edges[1, 2]["delay"] = float("nan")
    assert tpcstudy.read_topology(g).num_links == 4


def test_a_file_name_that_is_not_utf8(tmp_path: Path, zoo_installed: Path) -> None:
    d = tmp_path / "topos"
    d.mkdir()
    raw = os.fsencode(str(d)) + b"/Abi\xe9lene.gml"
    with open(raw, "wb") as f:
        f.write((zoo_installed / "Abilene.gml").read_bytes())
    with pytest.raises(UsageError, match=r"the file name 'Abi\\xe9lene.gml' is not UTF-8"):
        topology_files(d)


# ----------------------------------------------------------------------------- the API
def test_api_arguments_get_clear_errors() -> None:
    t = tpcstudy.prune(tpcstudy.read_topology(nx.petersen_graph()))
    with pytest.raises(UsageError, match="k = None: a segment limit is an integer from 1 to 10"):
        tpcstudy.max_flow(t, [(0, 1)], model="sr", k=None)
    with pytest.raises(UsageError, match=r"pairs\[1\] = \(1, 2, 3\): expected a \(source, target\)"):
        tpcstudy.max_flow(t, [(0, 1), (1, 2, 3)], model="ecmp")
    with pytest.raises(UsageError, match=r"shape \(n, 2\), not \(2, 3\)"):
        tpcstudy.max_flow(t, np.array([[0, 1, 2], [1, 2, 3]]), model="ecmp")
    with pytest.raises(TypeError, match="prune\\(\\) takes a tpcstudy Topology, not networkx"):
        tpcstudy.prune(nx.petersen_graph())

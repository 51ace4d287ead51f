"""One node-id rule (docs/method.md §1) for every function that takes routers: an integer is an
id, anything else a name. On a triangle whose routers are named "1", "0", "2" (ids 0, 1, 2) the
pair (0, 2) is routers "1" and "2" for every function, and ("0", "2") routers "0" and "2".

Capacities: "1"-"0" 1, "0"-"2" 5, "1"-"2" 100. So the max flow of "1" -> "2" is 101 and of
"0" -> "2" is 6 (by hand: the direct link plus the bottleneck of the two-hop path), and the
minimum MLU of one unit of demand is 1/101 and 1/6 (mcf splits over both paths in proportion).
Before the rule, max_flow read (0, 2) as ("0", "2") and min_mlu as ("1", "2")."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from tpcstudy.errors import UsageError
from tpcstudy.export import path_table
from tpcstudy.io import read_topology
from tpcstudy.models.maxflow import max_flow
from tpcstudy.models.mlu import min_mlu
from tpcstudy.models.unsplit import sr_unsplit
from tpcstudy.pairs import heavy_pairs
from tpcstudy.paths import dag_arcs, ecmp_ratios, shortest_distances, shortest_paths, sr_path


@pytest.fixture(scope="module")
def tri():
    g = nx.Graph()
    g.add_nodes_from([1, 0, 2])
    g.add_edge(1, 0, capacity=1.0)
    g.add_edge(0, 2, capacity=5.0)
    g.add_edge(1, 2, capacity=100.0)
    t = read_topology(g, capacity="file")
    assert t.names == ["1", "0", "2"]
    return t


IDS, NAMES = (0, 2), ("0", "2")


@pytest.mark.parametrize("model, by_id, by_name", [("mcf", 101, 6), ("sr", 101, 6),
                                                   ("multipath", 100, 5)])  # hop-shortest only
def test_max_flow_reads_ints_as_ids_and_strings_as_names(tri, model, by_id, by_name):
    assert max_flow(tri, [IDS], model=model).value == pytest.approx(by_id)
    assert max_flow(tri, [(np.int64(0), np.int32(2))], model=model).value == pytest.approx(by_id)
    assert max_flow(tri, np.array([IDS]), model=model).value == pytest.approx(by_id)
    assert max_flow(tri, [NAMES], model=model).value == pytest.approx(by_name)


@pytest.mark.parametrize("model", ["mcf", "sr"])
def test_min_mlu_reads_the_pair_as_max_flow_does(tri, model):
    assert min_mlu(tri, [(*IDS, 1.0)], model=model).mlu == pytest.approx(1 / 101)
    assert min_mlu(tri, [(*NAMES, 1.0)], model=model).mlu == pytest.approx(1 / 6)
    lp = min_mlu(tri, [(*IDS, 1.0)], model="sr")
    assert sr_unsplit(tri, lp).mlu == pytest.approx(1 / 100)  # one path: the direct link


def test_heavy_pairs_ids_and_names_are_the_same_pairs(tri):
    ids = heavy_pairs(tri, percent=100, seed=0)
    names = heavy_pairs(tri, percent=100, seed=0, names=True)
    assert [(tri.names[a], tri.names[b]) for a, b in ids.tolist()] == [tuple(p) for p in names]
    by_id = max_flow(tri, [tuple(p) for p in ids.tolist()], model="mcf").value
    assert by_id == pytest.approx(max_flow(tri, [tuple(p) for p in names], model="mcf").value)
    assert by_id == pytest.approx(max_flow(tri, ids, model="mcf").value)


def test_path_functions(tri):
    assert shortest_paths(tri, *IDS) == [["1", "2"]]
    assert shortest_paths(tri, *NAMES) == [["0", "2"]]
    assert set(ecmp_ratios(tri, *IDS)) == {("1", "2")}
    assert set(ecmp_ratios(tri, *NAMES)) == {("0", "2")}
    assert sr_path(tri, *IDS, k=2).nodes == ["1", "2"]
    assert sr_path(tri, *NAMES, k=2).nodes == ["0", "2"]
    assert shortest_distances(tri, 0).tolist() == [0.0, 1.0, 1.0]  # from router "1"
    assert dag_arcs(tri, *IDS).tolist() == [tri.arc_of("1", "2")]
    assert tri.arc_of(*IDS) == tri.arc_of("1", "2") != tri.arc_of(*NAMES)


def test_export_reads_the_same_pair(tri):
    by_id = path_table(tri, pairs=[IDS])
    by_name = path_table(tri, pairs=[NAMES])
    assert [(e.source, e.destination) for e in by_id.entries] == [("1", "2")]
    assert [(e.source, e.destination) for e in by_name.entries] == [("0", "2")]


@pytest.mark.parametrize("bad, match", [(3, "3 is not a router id"), (-1, "-1 is not a router id"),
                                        ("3", "router '3'"), (True, "router 'True'")])
def test_out_of_range_ids_and_unknown_names_are_refused_alike(tri, bad, match):
    for call in (lambda: max_flow(tri, [(bad, 2)], model="mcf"),
                 lambda: min_mlu(tri, [(bad, 2, 1.0)], model="mcf"),
                 lambda: shortest_paths(tri, bad, 2),
                 lambda: path_table(tri, pairs=[(bad, 2)])):
        with pytest.raises(UsageError, match=match):
            call()

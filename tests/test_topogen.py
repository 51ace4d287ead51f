"""tpcstudy.topogen: the synthetic ISP topology is reproducible, has the promised shape (core
links 2-4 per core router after the tree, dual-homed access routers that are the edge routers,
nothing pruned away), and its GML reads back as the same network."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tpcstudy import prune, read_topology
from tpcstudy.topogen import ACCESS_SPEED, CORE_SPEEDS, isp_topology, write_gml


def test_reproducible_and_shaped() -> None:
    a, b = isp_topology(200, seed=3), isp_topology(200, seed=3)
    assert a.links == b.links and np.array_equal(a.latitude, b.latitude)
    assert isp_topology(200, seed=4).links != a.links
    assert a.num_nodes == 200 and a.core == 50 and a.name == "SynthISP200s3"
    assert a.names[:2] == ["c0", "c1"] and a.names[-1] == "a149"
    deg = a.degree()
    assert np.all(deg[a.core:] == 2)  # access routers are dual-homed: the edge routers
    core_links = [(u, v) for u, v, _ in a.links if u < a.core and v < a.core]
    g = nx.Graph(core_links)
    assert nx.is_connected(g) and g.number_of_nodes() == a.core  # the spanning tree is there
    assert all(s in CORE_SPEEDS for u, v, s in a.links if v < a.core)
    assert all(s == ACCESS_SPEED for u, v, s in a.links if v >= a.core)
    assert len(set((u, v) for u, v, _ in a.links)) == len(a.links)  # no parallel links
    with pytest.raises(ValueError, match="at least 8"):
        isp_topology(7)


def test_gml_reads_back_and_nothing_is_pruned(tmp_path: Path) -> None:
    syn = isp_topology(120, seed=1, core_fraction=0.3)
    path = write_gml(syn, tmp_path / "out" / "isp.gml")
    assert path.is_file() and not list(path.parent.glob(".*"))  # written atomically
    topo = read_topology(path, capacity="zoo", weight="distance")
    assert topo.num_nodes == 120 and topo.num_links == len(syn.links)
    assert topo.nodes == syn.names and topo.meta["network"] == syn.name
    assert sorted(topo.arc_capacity[0::2].tolist()) == sorted(s for _, _, s in syn.links)
    assert topo.meta["weight_rule"] == "distance: great-circle km"
    pruned = prune(topo)
    assert pruned.num_nodes == 120 and len(pruned.edge_routers) == 120 - syn.core

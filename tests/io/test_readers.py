"""tpcstudy.io readers (GML, GraphML, REPETITA, specs): duplicate labels, errors naming file and
line, GraphML agreeing with GML on the whole Zoo, all of REPETITA read."""

from __future__ import annotations

import networkx as nx
import pytest

import tpcstudy
from tpcstudy import TopologyFormatError, prune, read_topology
from tpcstudy.io import read_demands, topology_files

from helpers import gml_file as _gml


def test_duplicate_labels_get_unique_names(tmp_path):
    p = _gml(tmp_path, """
      node [ id 0 label "None" ] node [ id 1 label "None" ] node [ id 2 label "x" ] node [ id 3 ]
      edge [ source 0 target 1 ] edge [ source 1 target 2 ] edge [ source 2 target 3 ]
    """)
    t = read_topology(p)
    assert t.nodes == ["None#0", "None#1", "x", "node#3"]


# ----------------------------------------------------------------- malformed input
@pytest.mark.parametrize("body, line, what", [
    ('node [ id 0 ]\n edge [ source 0 target 9 ]\n', 3, "target 9 is not a node id"),
    ('node [ id 0 ]\n node [ id 0 ]\n', 3, "defined twice"),
    ('node [ label "x" ]\n', 2, "without an 'id'"),
    ('node [ id 0 ] node [ id 1 ]\n edge [ source 0 target 1 LinkSpeedRaw -4 ]\n', 3, "LinkSpeedRaw -4"),
    ('node [ id 0 ] @@\n', 2, "unexpected text"),
])
def test_gml_errors_name_file_and_line(tmp_path, body, line, what):
    p = _gml(tmp_path, body)
    with pytest.raises(TopologyFormatError) as info:
        read_topology(p)
    assert info.value.line == line and what in str(info.value) and str(p) in str(info.value)


def test_truncated_and_non_utf8_and_empty(tmp_path, zoo_installed):
    data = (zoo_installed / "Abilene.gml").read_bytes()
    p = tmp_path / "trunc.gml"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TopologyFormatError, match="never closed|no value|truncated"):
        read_topology(p)
    q = tmp_path / "bytes.gml"
    q.write_bytes(b'graph [\n node [ id 0 label "caf\xe9" ]\n]\n')
    with pytest.raises(TopologyFormatError) as info:
        read_topology(q)
    assert info.value.line == 2 and "0xe9" in str(info.value)
    e = _gml(tmp_path, "", "empty.gml")
    with pytest.raises(TopologyFormatError, match="no nodes"):
        read_topology(e)
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(TopologyFormatError, match="unknown topology format"):
        read_topology(tmp_path / "x.txt")


def test_repetita_errors(tmp_path):
    def write(text):
        p = tmp_path / "t.graph"
        p.write_text(text)
        return p
    ok = "NODES 2\nlabel x y\na 0 0\nb 1 1\n\nEDGES 2\nlabel src dest weight bw delay\n"
    with pytest.raises(TopologyFormatError, match=r"found 0.*truncated"):
        read_topology(write(ok))
    with pytest.raises(TopologyFormatError) as info:
        read_topology(write(ok + "e0 0 5 1 10 1\ne1 1 0 1 10 1\n"))
    assert info.value.line == 8 and "dest 5" in str(info.value)
    with pytest.raises(TopologyFormatError, match="bw 'ten' is not a number"):
        read_topology(write(ok + "e0 0 1 1 ten 1\ne1 1 0 1 10 1\n"))
    with pytest.raises(TopologyFormatError, match="expected 'NODES <count>'"):
        read_topology(write("NODE 2\n"))
    t = read_topology(write(ok + "e0 0 1 3 10 1\ne1 1 0 5 10 1\n"), capacity="file", weight="file")
    assert t.arc_weight.tolist() == [3.0, 5.0]  # each direction keeps its own weight
    assert isinstance(t.to_networkx(), nx.DiGraph)


def test_graphml_errors(tmp_path):
    p = tmp_path / "t.graphml"
    p.write_text('<?xml version="1.0"?>\n<graphml><graph>\n<node id="a"/>\n<edge source="a" '
                 'target="b"/>\n</graph></graphml>\n')
    with pytest.raises(TopologyFormatError) as info:
        read_topology(p)
    assert info.value.line == 4 and "'b'" in str(info.value)
    p.write_text('<?xml version="1.0"?>\n<graphml><graph>\n<node id="a">\n')
    with pytest.raises(TopologyFormatError, match="not well-formed"):
        read_topology(p)
    # found by the fuzzer: a declaration naming an unknown encoding raised LookupError
    p.write_text('<?xml version="1.0" encoding="no-such-codec"?>\n<graphml><graph/></graphml>\n')
    with pytest.raises(TopologyFormatError, match="cannot decode"):
        read_topology(p)


def test_topo_spec_errors(tmp_path):
    with pytest.raises(tpcstudy.UsageError, match="holds no topology"):
        topology_files(tmp_path)
    with pytest.raises(tpcstudy.UsageError, match="no such file"):
        topology_files(tmp_path / "nope.gml")
    with pytest.raises(tpcstudy.UsageError, match="matches no topology"):
        topology_files(str(tmp_path / "*.gml"))


@pytest.mark.slow
def test_graphml_agrees_with_gml(zoo_installed, zoo_graphml):
    gmls = sorted(zoo_installed.glob("*.gml"))
    assert len(gmls) == 261
    for gml in gmls:
        a = prune(read_topology(gml))
        b = prune(read_topology(zoo_graphml / (gml.stem + ".graphml")))
        assert (a.num_nodes, a.num_links, len(a.edge_routers)) == \
            (b.num_nodes, b.num_links, len(b.edge_routers)), gml.name


@pytest.mark.slow
def test_repetita_reads_all(repetita):
    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    topos = list(tpcstudy.read_topologies("repetita/inverse-capacity", capacity="file",
                                          weight="file"))
    assert len(topos) == 260 and topos[0].meta["source"].startswith(str(folder))
    ab = next(t for t in topos if t.name == "Abilene")
    assert ab.num_nodes == 11 and ab.num_links == 14
    assert ab.arc_capacity.max() == 9953280 and ab.meta["capacity_unit"] == "kbit/s"
    d = read_demands(folder / "Abilene.0000.demands", ab)
    assert len(d) == 110 and d["bw"][0] == 300632

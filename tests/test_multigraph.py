"""The ``multigraph`` link rule (docs/method.md §1-3): parallel links kept as links of their own,
pruning and edge routers by link count, ECMP split per arc; the TPC paper's topology set.

Oracles: hand-worked graphs, an independent per-arc ECMP written here on networkx, and the
paper's Figure 5 (router counts read from its figure) on REPETITA.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import tpcstudy
from tpcstudy.errors import TopologyFormatError
from tpcstudy.pairs import heavy_pairs
from tpcstudy.paths import segment_ratios
from tpcstudy.study import paper


def _multi(edges, links="multigraph"):
    g = nx.MultiGraph()
    for u, v in edges:
        g.add_edge(u, v)
    return tpcstudy.read_topology(g, links=links, name="m")


def test_parallel_links_stay_links_of_their_own():
    t = _multi([("a", "b"), ("a", "b"), ("b", "c"), ("c", "a")])
    assert t.num_links == 4 and t.links_rule == "multigraph" and t.has_parallel_links()
    assert t.multiplicity.tolist() == [1, 1, 1, 1]
    assert t.arc_capacity.tolist() == [1.0] * 8  # each its own capacity, not summed
    assert dict(zip(t.names, t.degree.tolist())) == {"a": 3, "b": 3, "c": 2}
    m = _multi([("a", "b"), ("a", "b"), ("b", "c"), ("c", "a")], links="merged")
    assert m.num_links == 3 and m.multiplicity.tolist() == [2, 1, 1] and not m.has_parallel_links()
    assert isinstance(t.to_networkx(), nx.MultiGraph)
    assert t.to_networkx().number_of_edges() == 4


def test_router_whose_two_links_go_to_one_neighbour():
    # x hangs off a by two parallel links: two links, so an edge router that pruning keeps;
    # merged, it has one neighbour and is pruned away.
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "x"), ("a", "x")]
    p = tpcstudy.prune(_multi(edges))
    assert sorted(p.names) == ["a", "b", "c", "x"] and "x" in p.edge_routers
    assert sorted(p.edge_routers) == ["b", "c", "x"]  # a has 4 links
    q = tpcstudy.prune(_multi(edges, links="merged"))
    assert sorted(q.names) == ["a", "b", "c"] and sorted(q.edge_routers) == ["a", "b", "c"]


def test_tree_hanging_off_a_parallel_pair_is_pruned_to_the_pair():
    # triangle a-b-c; d joins c by two parallel links; e hangs off d by one, f off e by one
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("c", "d"), ("d", "e"), ("e", "f")]
    p = tpcstudy.prune(_multi(edges))
    assert sorted(p.names) == ["a", "b", "c", "d"]
    assert p.num_links == 5 and p.meta["pruned"]
    assert sorted(p.edge_routers) == ["a", "b", "d"]
    q = tpcstudy.prune(_multi(edges, links="merged"))
    assert sorted(q.names) == ["a", "b", "c"]


def test_multigraph_keeps_every_component_merged_keeps_the_largest():
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("x", "y"), ("x", "y")]
    assert sorted(tpcstudy.prune(_multi(edges)).names) == ["a", "b", "c", "x", "y"]
    assert sorted(tpcstudy.prune(_multi(edges, links="merged")).names) == ["a", "b", "c"]


def test_ecmp_splits_per_arc_by_hand():
    # s joins a by two links and b by one; a-t, b-t. Per arc: each s->a arc and s->b carry 1/3,
    # a->t 2/3, so one unit needs 2/3 of a->t: ECMP max flow 1.5 (merged: 1/2 each way, 2.0).
    edges = [("s", "a"), ("s", "a"), ("a", "t"), ("s", "b"), ("b", "t")]
    t = _multi(edges)
    off, arcs, frac = segment_ratios(t, np.array([t.index_of("s")]), np.array([t.index_of("t")]))
    got = Counter()
    for a, f in zip(arcs.tolist(), frac.tolist()):
        got[(t.names[t.arc_src[a]], t.names[t.arc_dst[a]])] += f
    assert got == pytest.approx({("s", "a"): 2 / 3, ("s", "b"): 1 / 3, ("a", "t"): 2 / 3,
                                 ("b", "t"): 1 / 3})
    assert len(arcs) == 5  # both parallel arcs carry their own third
    assert tpcstudy.max_flow(t, [("s", "t")], model="ecmp").value == pytest.approx(1.5)
    assert tpcstudy.max_flow(t, [("s", "t")], model="mcf").value == pytest.approx(2.0)
    merged = _multi(edges, links="merged")
    assert tpcstudy.max_flow(merged, [("s", "t")], model="ecmp").value == pytest.approx(2.0)


def test_only_the_least_weight_parallel_link_carries_ecmp():
    g = nx.MultiGraph()
    g.add_edge("s", "t", weight=1.0)
    g.add_edge("s", "t", weight=3.0)
    t = tpcstudy.read_topology(g, weight="file", links="multigraph")
    off, arcs, frac = segment_ratios(t, np.array([t.index_of("s")]), np.array([t.index_of("t")]))
    assert frac.tolist() == [1.0] and t.arc_weight[arcs[0]] == 1.0
    assert tpcstudy.max_flow(t, [("s", "t")], model="ecmp").value == pytest.approx(1.0)
    assert tpcstudy.max_flow(t, [("s", "t")], model="mcf").value == pytest.approx(2.0)


def _ecmp_per_arc(g: nx.MultiDiGraph, s, t) -> dict:
    """Independent per-arc ECMP: distances by networkx, then every router splits what it
    receives evenly over its least-cost outgoing arcs (parallel arcs each count)."""
    dist = nx.single_source_dijkstra_path_length(g.reverse(copy=True), t, weight="weight")
    flow = defaultdict(float, {s: 1.0})
    out = defaultdict(float)
    for u in sorted(dist, key=lambda x: -dist[x]):
        if u == t or flow[u] == 0:
            continue
        nh = [(v, k) for _, v, k, d in g.out_edges(u, keys=True, data=True)
              if v in dist and abs(dist[u] - d["weight"] - dist[v]) <= 1e-9 * max(1, dist[u])]
        for v, k in nh:
            out[(u, v, k)] += flow[u] / len(nh)
            flow[v] += flow[u] / len(nh)
    return out


def test_ecmp_per_arc_equals_an_independent_one_on_repetita(repetita: Path):
    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    checked = 0
    for name in ("Interoute", "Geant2012", "Cogentco", "Bellcanada", "Tinet"):
        t = tpcstudy.read_topology(folder / f"{name}.graph", capacity="file", weight="file",
                                   links="multigraph")
        g = nx.MultiDiGraph()
        for a, (u, v) in enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist())):
            g.add_edge(u, v, key=a, weight=float(t.arc_weight[a]))
        rng = np.random.default_rng(7)
        for s, d in rng.choice(t.num_nodes, size=(12, 2)).tolist():
            if s == d:
                continue
            off, arcs, frac = segment_ratios(t, np.array([s]), np.array([d]))
            ours = dict(zip(arcs.tolist(), frac.tolist()))
            theirs = {k: f for (_, _, k), f in _ecmp_per_arc(g, s, d).items()}
            assert ours.keys() == theirs.keys()
            assert [ours[a] for a in sorted(ours)] == pytest.approx(
                [theirs[a] for a in sorted(ours)], rel=1e-12)
            checked += 1
        assert t.has_parallel_links() or name not in ("Interoute",)
    assert checked > 40


def test_repetita_directed_edges_pair_in_file_order_and_mismatches_are_refused(tmp_path):
    body = ("NODES 3\nlabel x y\na 0 0\nb 0 0\nc 0 0\n\nEDGES 7\nlabel src dest weight bw delay\n"
            "e0 0 1 1 10 1\ne1 1 0 1 10 1\ne2 0 1 5 20 1\ne3 1 0 5 20 1\n"
            "e4 1 2 1 10 1\ne5 2 1 1 10 1\ne6 0 1 1 10 1\n")
    f = tmp_path / "bad.graph"
    f.write_text(body)
    with pytest.raises(TopologyFormatError) as err:
        tpcstudy.read_topology(f, capacity="file", weight="file", links="multigraph")
    assert "bad.graph" in str(err.value) and "3 times" in str(err.value)
    assert "a -> b is listed 3 times but b -> a 2 times" in str(err.value)
    f.write_text(body.replace("EDGES 7", "EDGES 6").replace("e6 0 1 1 10 1\n", ""))
    t = tpcstudy.read_topology(f, capacity="file", weight="file", links="multigraph")
    assert t.num_links == 3
    ab = [i for i in range(3) if (t.link_u[i], t.link_v[i]) == (0, 1)]
    assert [t.arc_weight[2 * i] for i in ab] == [1.0, 5.0]  # first with first, second with second
    assert [t.arc_capacity[2 * i + 1] for i in ab] == [10.0, 20.0]


def test_paper_rule_on_repetita_gives_figure5(repetita: Path):
    """233 non-empty topologies whose router counts are Figure 5's exactly, 219 with edge
    routers (Figure 7's N); links equal too once self-loops count, as the figure counts them."""
    routers, links, with_loops, edge = [], [], [], 0
    for f in sorted((repetita / "2016TopologyZooUCL_inverseCapacity").glob("*.graph")):
        t = tpcstudy.read_topology(f, capacity="file", weight="file", links="multigraph")
        p = tpcstudy.prune(t)
        if not p.num_nodes:
            continue
        routers.append(p.num_nodes)
        links.append(p.num_links)
        kept = set(p.names)
        with_loops.append(p.num_links + sum(r in kept for r in t.meta.get("self_loop_routers", ())))
        edge += len(p.edge_routers) >= 2
    assert len(routers) == 233 and edge == 219 and max(routers) == 167
    assert Counter(routers) == Counter(paper.FIGURE5_ROUTERS)
    assert Counter(with_loops) == Counter(paper.FIGURE5_LINKS)
    assert sorted((Counter(links) - Counter(paper.FIGURE5_LINKS)).elements()) == [150]


def test_heavy_pair_variants():
    t = tpcstudy.prune(_multi([(f"r{i}", f"r{(i + 1) % 7}") for i in range(7)], links="merged"))
    assert len(t.edge_routers) == 7  # a ring: 42 ordered pairs, 21 unordered
    assert len(heavy_pairs(t, percent=10, seed=0)) == 5            # ceil(4.2)
    assert len(heavy_pairs(t, percent=10, seed=0, rounding="round")) == 4
    assert len(heavy_pairs(t, percent=1, seed=0, rounding="round")) == 1  # at least one
    un = heavy_pairs(t, percent=10, seed=0, ordered=False)
    assert len(un) == 3 and all(s < d for s, d in un.tolist())       # ceil(2.1)
    assert len(heavy_pairs(t, percent=12, seed=3, ordered=False, rounding="round")) == 3  # 2.52
    with pytest.raises(tpcstudy.UsageError):
        heavy_pairs(t, percent=10, seed=0, rounding="floor")


def test_mcf_does_not_see_how_parallel_links_are_read(repetita: Path):
    """The multicommodity bound depends on capacities only, and merging parallel links adds
    theirs up: both rules give the same max flow and the same minimum MLU."""
    from tpcstudy.io import read_demands
    from tpcstudy.models.mlu import min_mlu

    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    for name in ("Interoute", "Bellcanada"):
        multi = tpcstudy.read_topology(folder / f"{name}.graph", capacity="file", weight="file",
                                       links="multigraph")
        merged = tpcstudy.read_topology(folder / f"{name}.graph", capacity="file",
                                        weight="file")
        assert multi.has_parallel_links() and multi.num_links > merged.num_links
        pairs = heavy_pairs(tpcstudy.prune(multi), percent=10, seed=1, names=True)
        a = tpcstudy.max_flow(multi, pairs, model="mcf").value
        b = tpcstudy.max_flow(merged, pairs, model="mcf").value
        assert a == pytest.approx(b, rel=1e-7)
        dem = read_demands(folder / f"{name}.0000.demands", multi)
        assert min_mlu(multi, dem, model="mcf").mlu == pytest.approx(
            min_mlu(merged, dem, model="mcf").mlu, rel=1e-6)


def test_results_record_the_rule_only_when_it_is_not_the_default(repetita: Path, tmp_path):
    """Folders written before the rule existed resume: merged is recorded by its absence."""
    import json

    from tpcstudy.cli import main
    from tpcstudy.study.maxflow import PAIRS_RULE, MaxflowConfig

    assert "links" not in MaxflowConfig().meta("x")
    assert MaxflowConfig().meta("x")["pairs_rule"] == PAIRS_RULE == (
        "heavy_pairs: numpy default_rng(seed).choice of ceil(x * #pairs) ordered edge-router "
        "pairs, sorted")
    meta = MaxflowConfig(links="multigraph", ordered=False, rounding="round").meta("x")
    assert meta["links"] == "multigraph" and "round(x * #pairs) unordered" in meta["pairs_rule"]
    f = repetita / "2016TopologyZooUCL_inverseCapacity" / "Interoute.graph"
    out = tmp_path / "mf"
    assert main(["maxflow", "--topo", str(f), "--capacity", "file", "--weight", "file",
                 "--links", "multigraph", "--heavy", "10", "--models", "ecmp,mcf",
                 "--no-progress", "--out", str(out)]) == 0
    stored = json.loads((out / "meta.json").read_text())["study"]["config"]
    assert stored["links"] == "multigraph"
    import csv

    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    # multigraph-pruned: 104 routers, 150 links (Figure 5 counts 152: the file lists 2 loops)
    assert {(r["nodes"], r["links"]) for r in rows} == {("104", "150")}

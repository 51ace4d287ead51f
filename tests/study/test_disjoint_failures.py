"""tpcstudy disjoint --failures SPEC (study/disjoint_failures.py): the exported path sets under
every scenario, worked by hand on two small graphs, cross-checked against a networkx brute force
on Zoo topologies, the ``links`` aggregate against the failure view's ``survive_share``, parallel
links, shared-risk groups, resume (also of a folder written before the new columns) and the
summary."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Dict, List, Tuple

import networkx as nx
import numpy as np
import pytest

from tpcstudy.cli import main
from tpcstudy.errors import UsageError
from tpcstudy.io import read_topology
from tpcstudy.models.failures import scenarios
from tpcstudy.pairs import router_pairs
from tpcstudy.paths import disjoint_paths_batch
from tpcstudy.study import load_results
from tpcstudy.study.disjoint import (
    FAILURE_K,
    FAILURE_MAX_PATHS,
    DisjointConfig,
    format_summary,
    run_disjoint_study,
    summarize,
    topology_rows,
)
from tpcstudy.study.disjoint_counts import failure_view
from tpcstudy.study.disjoint_failures import (
    ExportedSets,
    adjacency_failures,
    scenario_outcome,
)
from tpcstudy.study.kinds import KINDS
from tpcstudy.topology import RawEdge, Topology, build_topology, component_labels, prune

from helpers import read_rows

RING_LINKS = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)]
# two triangles x0 x1 x2 and y0 y1 y2 joined by the bridge x0 - y0 (routers 0-2 and 3-5)
TRI_NAMES = ["x0", "x1", "x2", "y0", "y1", "y2"]
TRI_LINKS = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (0, 3)]


def topo_of(name: str, names: List[str], pairs: List[Tuple[int, int]], **kw) -> Topology:
    return build_topology(name, names, [RawEdge(u, v) for u, v in pairs], **kw)


def ring() -> Topology:
    return topo_of("ring6", [str(i) for i in range(6)], RING_LINKS)


def triangles() -> Topology:
    return topo_of("tri", TRI_NAMES, TRI_LINKS)


def scenario_table(topo: Topology, spec: str, pairs: str = "edge") -> Dict[str, Dict]:
    rows = topology_rows(topo, DisjointConfig(ks=(4,), pairs=pairs, failures=spec))
    out = {r["failure"]: r for r in rows if r["method"] == "failure" and r.get("failure")}
    # a surviving path joins the pair: the three outcomes split the counted pairs
    for r in out.values():
        assert math.isclose(r["survive_share"] + r["stranded_share"]
                            + r["disconnected"] / r["pairs"], 1.0)
    return out


def counts(r: Dict) -> Tuple[int, int, int, int, int]:
    """(counted pairs, default hit, survive, stranded, disconnected) as counts."""
    n = r["pairs"]
    return (n, round(r["default_hit_share"] * n), round(r["survive_share"] * n),
            round(r["stranded_share"] * n), r["disconnected"])


# --------------------------------------------------------------------------- by hand
def test_ring_with_chord_by_hand() -> None:
    """Ring 0..5 with the chord 0-3; edge routers 1, 2, 4, 5 (12 ordered pairs). Exported sets
    (tests/study/test_disjoint.py works the paths out): adjacent pairs 1-2 / 4-5: {12} then
    {01, 03, 23} (resp. {45} then {34, 03, 05}); pairs 1-5 / 2-4: {01, 05} then {12, 23, 34,
    45} (resp. {23, 34} then {12, 01, 05, 45}); the four far pairs 1-4, 2-5: one path whose DAG
    covers all seven links. So every single link strands the 4 far pairs and no other (the
    ring is 2-edge-connected: nothing disconnects); a ring link hits the default path of the 2
    (ordered) pairs using it plus the 4 far pairs, the chord only the far pairs."""
    tab = scenario_table(ring(), "links")
    assert set(tab) == {"0--1", "1--2", "2--3", "3--4", "4--5", "0--5", "0--3"}
    for fid, r in tab.items():
        assert counts(r) == (12, 4 if fid == "0--3" else 6, 8, 4, 0), fid
        assert r["failure_kind"] == "links" and r["k"] == FAILURE_K
    # router failures: the transit routers 0 and 3 (degree 3). Router 0 takes 01, 05, 03:
    # 1-5 and 5-1 lose their default but keep 1-2-3-4-5; the far pairs are stranded
    # (1-2-3-4 is still there); 1-2, 4-5, 2-4 are untouched
    tab = scenario_table(ring(), "nodes")
    assert set(tab) == {"node:0", "node:3"}
    for r in tab.values():
        assert counts(r) == (12, 6, 8, 4, 0)
        assert r["failure_kind"] == "nodes"


def test_bridge_by_hand() -> None:
    """Two triangles joined by the bridge x0-y0; edge routers x1 x2 y1 y2 (12 ordered pairs).
    x1-x2: {x1x2} then {x0x1, x0x2}; a cross pair, x1-y1: its one path x1 x0 y0 y1 (no
    backup: the bridge is on every path)."""
    tab = scenario_table(triangles(), "links")
    # the bridge disconnects the 8 cross pairs (their default is hit, nothing survives)
    assert counts(tab["x0--y0"]) == (12, 8, 4, 0, 8)
    # x1-x2 hits the default of x1-x2 and x2-x1 only: their backup via x0 survives
    assert counts(tab["x1--x2"]) == (12, 2, 12, 0, 0)
    # x0-x1 hits the 4 cross pairs at x1, stranded (x1 still reaches x0 through x2)
    assert counts(tab["x0--x1"]) == (12, 4, 8, 4, 0)
    assert counts(tab["y0--y2"]) == (12, 4, 8, 4, 0)
    # router x0 (transit): the cross pairs are disconnected, the triangles' own pairs fine
    tab = scenario_table(triangles(), "nodes")
    assert set(tab) == {"node:x0", "node:y0"}
    assert counts(tab["node:x0"]) == (12, 8, 4, 0, 8)


def test_failed_endpoints_are_not_counted() -> None:
    """--pairs all: 30 ordered pairs; router x0 fails: the 10 pairs with x0 as an end are left
    out; of the 20 others, {x1, x2} x {y0, y1, y2} both ways (12) are disconnected and the
    8 within {x1, x2} or {y0, y1, y2} keep their default path (no link of x0 on it)."""
    tab = scenario_table(triangles(), "nodes", pairs="all")
    assert len(tab) == 6  # with --pairs all every router may fail
    assert counts(tab["node:x0"]) == (20, 12, 8, 0, 12)


# --------------------------------------------------------------------------- brute force
def brute_force(topo: Topology, spec: str) -> Dict[str, Tuple[int, int, int, int, int]]:
    """Per scenario: the graph without its links (networkx), each pair's exported paths (the
    failure view's sets) checked link by link, connectivity by networkx."""
    s, t = router_pairs(topo, "edge")
    merged = topo.merged()
    sps = disjoint_paths_batch(merged, s, t, method="sps", k=FAILURE_K)
    sets = failure_view(sps, keep_sets=True).sets
    names = topo.names
    ends = [(names[int(merged.link_u[j])], names[int(merged.link_v[j])])
            for j in range(merged.num_links)]
    out = {}
    for sc in scenarios(topo, spec):
        g = nx.Graph()
        g.add_nodes_from(names)
        g.add_edges_from((names[int(topo.link_u[i])], names[int(topo.link_v[i])])
                         for i in range(topo.num_links) if i not in sc.links)
        gone = {names[v] for v in sc.nodes}
        n = hit = alive = stranded = disc = 0
        for i in range(len(s)):
            a, b = names[int(s[i])], names[int(t[i])]
            if a in gone or b in gone:
                continue
            n += 1
            ok = [all(g.has_edge(*ends[j]) for j in links) for _, links in sets[i]]
            hit += not ok[0]
            if any(ok):
                alive += 1
            elif nx.has_path(g, a, b):
                stranded += 1
            else:
                disc += 1
        out[sc.id] = (n, hit, alive, stranded, disc)
    return out


@pytest.mark.parametrize("name,spec", [("Geant2012", "links"), ("Abilene", "links"),
                                       ("Uninett2010", "links:25"), ("Geant2012", "nodes")])
def test_zoo_against_brute_force(zoo_installed: Path, name: str, spec: str) -> None:
    topo = prune(read_topology(zoo_installed / f"{name}.gml"))
    tab = scenario_table(topo, spec)
    want = brute_force(topo, spec)
    assert set(tab) == set(want) and want
    for fid, w in want.items():
        assert counts(tab[fid]) == w, (name, fid)


@pytest.mark.parametrize("name", ["Geant2012", "Abilene", "Colt"])
def test_links_aggregate_is_the_failure_view(zoo_installed: Path, name: str) -> None:
    """A pair survives every single link failure (the failure view's survive) iff it survives
    each ``links`` scenario; so the topology row's survive_share is the share surviving all."""
    topo = prune(read_topology(zoo_installed / f"{name}.gml"))
    s, t = router_pairs(topo, "edge")
    sps = disjoint_paths_batch(topo, s, t, method="sps", k=FAILURE_K)
    view = failure_view(sps)
    sets = ExportedSets(sps, topo.num_links, FAILURE_MAX_PATHS)
    assert np.array_equal(sets.sizes, view.sizes)
    intact = component_labels(topo)
    every = np.ones(len(s), dtype=bool)
    for sc in scenarios(topo, "links"):
        o = scenario_outcome(sets, topo, s, t, intact, adjacency_failures(topo, topo, sc))
        assert o.counted.all()
        every &= o.survive
    assert np.array_equal(every, view.survive)
    rows = topology_rows(topo, DisjointConfig(ks=(4,), failures="links"))
    row = next(r for r in rows if r["method"] == "failure" and not r.get("failure"))
    assert row["survive_share"] == pytest.approx(every.mean())
    assert min(r["survive_share"] for r in rows if r.get("failure")) >= row["survive_share"]


# --------------------------------------------------------------------------- parallel links
def test_parallel_links_fail_together_only() -> None:
    """Under multigraph the ring's link 1-2 doubled: failing one of the two leaves the
    adjacency (nothing hit); a shared-risk group with both is the merged ring's 1--2."""
    links = RING_LINKS + [(1, 2)]
    multi = topo_of("ring6", [str(i) for i in range(6)], links, links="multigraph")
    assert multi.num_links == 8
    tab = scenario_table(multi, "links")
    assert set(tab) == {"0--1", "1--2", "1--2#2", "2--3", "3--4", "4--5", "0--5", "0--3"}
    # edge routers under multigraph count parallel links: 1 and 2 now have 3 links, so the
    # pairs are those of 4 and 5 (2 ordered pairs): 4-5's set is {45} then {34, 03, 05}
    assert tab["1--2"]["pairs"] == 2
    assert counts(tab["1--2"]) == counts(tab["1--2#2"]) == (2, 0, 2, 0, 0)
    assert counts(tab["4--5"]) == (2, 2, 2, 0, 0)


def test_srlg_groups(tmp_path: Path) -> None:
    groups = tmp_path / "groups.txt"
    groups.write_text("# two ring links in one duct\nduct: 0 -- 1; 1 -- 2\nchord: 3 -- 0\n")
    tab = scenario_table(ring(), f"srlg:{groups}")
    assert set(tab) == {"duct", "chord"}
    assert tab["duct"]["failure_kind"] == "srlg"
    # 01 and 12 together: 1 is cut off (its pairs, 6 ordered, disconnected); 2-4/4-2 keep
    # {23, 34}; 4-5/5-4 keep {45}; 2-5/5-2 (one path over everything) are stranded
    assert counts(tab["duct"]) == (12, 8, 4, 2, 6)
    assert counts(tab["chord"]) == counts(scenario_table(ring(), "links")["0--3"])


def test_bad_srlg_line_is_one_clear_error(tmp_path: Path, capsys) -> None:
    topos = tmp_path / "t"
    topos.mkdir()
    (topos / "ring6.gml").write_text(gml(RING_LINKS))
    groups = tmp_path / "groups.txt"
    groups.write_text("duct: 0 -- 1\nbad: 0 -- 9\n")
    code = main(["disjoint", "--topo", str(topos), "--failures", f"srlg:{groups}", "--out",
                 str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{groups}:2" in err and "Traceback" not in err and "'9'" in err


def test_bad_spec_refused() -> None:
    with pytest.raises(UsageError, match="--failures"):
        DisjointConfig(failures="link")


# --------------------------------------------------------------------------- the study
def gml(links: List[Tuple[int, int]], n: int = 6) -> str:
    nodes = "".join(f"  node [\n    id {i}\n    label \"{i}\"\n  ]\n" for i in range(n))
    edges = "".join(f"  edge [\n    source {u}\n    target {v}\n  ]\n" for u, v in links)
    return f"graph [\n  directed 0\n{nodes}{edges}]\n"


def collection(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ring6.gml").write_text(gml(RING_LINKS))
    (folder / "tri.gml").write_text(gml(TRI_LINKS))
    return folder


def test_study_rows_resume_and_summary(tmp_path: Path) -> None:
    topos = collection(tmp_path / "topos")
    out = tmp_path / "out"
    config = DisjointConfig(ks=(1, 4), failures="links")
    run, rows = run_disjoint_study(topos, out, config, progress=False)
    assert run.completed == 2
    scen = [r for r in rows if r["failure"]]
    assert len(scen) == 14 and {r["method"] for r in scen} == {"failure"}
    assert sum(1 for r in rows if r["method"] == "failure" and not r["failure"]) == 2
    run2, rows2 = run_disjoint_study(topos, out, config, progress=False)
    assert run2.skipped == 2 and run2.completed == 0
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in rows2]
    s = summarize(load_results(out))["failures"]
    (links,) = s["kinds"]
    # 7 scenarios each: ring 8/12 always; triangles 4/12 (bridge), 12/12 (x1x2, y1y2),
    # 8/12 (the other four)
    assert links["scenarios"] == 14 and links["pair_failures"] == 14 * 12
    assert links["survive_median"] == pytest.approx(8 / 12)
    assert links["survive_min"] == pytest.approx(4 / 12)
    assert links["survive_pooled"] == pytest.approx((7 * 8 + 4 + 2 * 12 + 4 * 8) / 168)
    assert links["pairs_disconnected"] == 8 and links["scenarios_disconnecting"] == 1
    assert {(w["topology"], w["failure"], w["lost"]) for w in s["worst"]} == {
        ("ring6", w_ring(s), 4), ("tri", "0--3", 8)}
    text = format_summary(summarize(load_results(out)))
    assert "failures (links: 14 scenarios on 2 topologies" in text
    assert "tri: 0--3: 8 of 12 pairs (0 stranded, 8 disconnected)" in text
    # another --failures in the same folder is another study: refused, not mixed
    with pytest.raises(UsageError, match="config.failures"):
        run_disjoint_study(topos, out, DisjointConfig(ks=(1, 4), failures="nodes"),
                           progress=False)


def w_ring(s: Dict) -> str:
    """Every ring link strands 4 pairs: the worst is the first found (ties keep the first)."""
    return next(w["failure"] for w in s["worst"] if w["topology"] == "ring6")


def test_without_failures_a_folder_of_the_old_columns_resumes(tmp_path: Path) -> None:
    """The default (none) writes the rows it wrote before (the new cells empty); a folder
    written before the new columns existed resumes: every task reused, the same rows."""
    topos = collection(tmp_path / "topos")
    out = tmp_path / "out"
    config = DisjointConfig(ks=(1, 4))
    run, rows = run_disjoint_study(topos, out, config, progress=False)
    new = set(KINDS["disjoint"].columns) - set(KINDS["disjoint"].previous[0])
    assert new == {"failure", "failure_kind", "default_hit_share", "stranded_share",
                   "disconnected"}
    assert all(r[c] == "" for r in rows for c in new)
    old = list(KINDS["disjoint"].previous[0])
    for part in (out / "parts").glob("*.csv"):  # rewrite the parts as the old version did
        head, _, body = part.read_text().partition("\n")
        table = list(csv.DictReader(body.splitlines()))
        lines = [",".join(old)] + [",".join(r[c] for c in old) for r in table]
        part.write_text(head + "\n" + "\n".join(lines) + "\n")
    (out / "results.csv").unlink()
    run2, rows2 = run_disjoint_study(topos, out, config, progress=False)
    assert run2.skipped == 2 and run2.completed == 0
    assert rows2 == rows and read_rows(out / "results.csv") == rows


def test_cli_and_show(tmp_path: Path, capsys) -> None:
    topos = collection(tmp_path / "topos")
    out = tmp_path / "out"
    assert main(["disjoint", "--topo", str(topos), "--k", "4", "--failures", "nodes", "--out",
                 str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "failures (nodes: 4 scenarios on 2 topologies, 48 (pair, failure))" in text
    assert main(["show", "--json", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (nodes,) = doc["summary"]["failures"]["kinds"]
    assert nodes["pairs_disconnected"] == 16 and nodes["survive_median"] == pytest.approx(0.5)
    assert "nodes failures: median share surviving 0.500" in doc["summary_line"]
    assert doc["config"]["failures"] == "nodes"

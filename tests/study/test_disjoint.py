"""tpcstudy.study.disjoint (and disjoint_counts): hand-worked counts, the exact sps shortcut, the
failure view, results.csv, resume, jobs=2 == jobs=1, the one summary and its per-topology
table."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import pytest

from tpcstudy.errors import UsageError
from tpcstudy.io import read_topology
from tpcstudy.pairs import router_pairs as pair_ids
from tpcstudy.paths import dag_arcs, disjoint_paths_batch, edge_disjoint_paths
from tpcstudy.study import load_results
from tpcstudy.study.disjoint import (
    COLUMNS,
    DisjointConfig,
    format_summary,
    greedy_reaches_max,
    mean_paths_table,
    run_disjoint_study,
    summarize,
    summary_line,
    topology_rows,
)
from tpcstudy.study.disjoint_counts import failure_view, sps_counts
from tpcstudy.topology import RawEdge, Topology, build_topology, prune

from helpers import make_disjoint, read_rows

# A ring 0-1-2-3-4-5-0 with the chord 0-3 (hop weights): two squares 0-1-2-3 and 0-5-4-3 sharing
# the chord. Routers 0 and 3 have degree 3; the edge routers are 1, 2, 4, 5 (12 ordered pairs).


RING_LINKS = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)]


# Worked by hand (see test_ring_by_hand): sps counts per k = 1..6 of every ordered edge pair.
#  - adjacent pairs (1-2, 4-5): the direct segment is the link itself; a second path needs the
#    other way round the square, 1 -> 0 -> 3 -> 2, which needs 3 segments (0 -> 2 and 1 -> 3 are
#    ECMP over both sides of the square, so no single waypoint avoids the used link).
#  - pairs at distance 2 (1-5, 2-4): direct 1 -> 0 -> 5; the way round 1-2-3-4-5 needs waypoints
#    2 and 4 (3 segments; 3 -> 5 and 2 -> 5 are ECMP through 0-5).
#  - pairs at distance 3 (1-4, 2-5): three equal shortest paths whose ECMP DAG covers all 7
#    links, so the first sps path occupies everything: one path for every k.
SPS_BY_HAND = {}


for a, b in [(1, 2), (2, 1), (4, 5), (5, 4), (1, 5), (5, 1), (2, 4), (4, 2)]:
    SPS_BY_HAND[(a, b)] = [1, 1, 2, 2, 2, 2]


for a, b in [(1, 4), (4, 1), (2, 5), (5, 2)]:
    SPS_BY_HAND[(a, b)] = [1, 1, 1, 1, 1, 1]


GML_HEADER = "graph [\n  directed 0\n  label \"{name}\"\n"


def ring_topology() -> Topology:
    return build_topology("ring6", [str(i) for i in range(6)],
                          [RawEdge(u, v) for u, v in RING_LINKS])


def gml_text(name: str, n: int, links: Sequence[Tuple[int, int]]) -> str:
    out = [GML_HEADER.format(name=name)]
    for i in range(n):
        out.append(f"  node [\n    id {i}\n    label \"r{i}\"\n  ]\n")
    for u, v in links:
        out.append(f"  edge [\n    source {u}\n    target {v}\n  ]\n")
    out.append("]\n")
    return "".join(out)


def write_collection(folder: Path) -> Path:
    """Four hand-made GML files: the chorded ring, a ring of 8 with two chords, a plain ring of
    5, and a tree (prunes to nothing: a skipped row)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ring6.gml").write_text(gml_text("ring6", 6, RING_LINKS))
    r8 = [(i, (i + 1) % 8) for i in range(8)] + [(0, 4), (2, 6)]
    (folder / "ring8.gml").write_text(gml_text("ring8", 8, r8))
    (folder / "ring5.gml").write_text(gml_text("ring5", 5, [(i, (i + 1) % 5) for i in range(5)]))
    (folder / "tree.gml").write_text(gml_text("tree", 4, [(0, 1), (1, 2), (1, 3)]))
    return folder


def without_seconds(rows: List[Dict[str, str]]) -> List[Dict[str, str]]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


# --------------------------------------------------------------------------- hand-worked ring
def test_ring_by_hand() -> None:
    topo = ring_topology()
    assert [int(x) for x in topo.edge_router_ids] == [1, 2, 4, 5]
    s, t = pair_ids(topo, "edge")
    pairs = list(zip(s.tolist(), t.tolist()))
    # max: every edge router has two links and the graph is 2-edge-connected
    assert disjoint_paths_batch(topo, s, t, method="max").counts.tolist() == [2] * 12
    # sps, worked by hand above
    counts, _ = sps_counts(topo, s, t, range(1, 7), exact=True)
    for k in range(1, 7):
        assert counts[k].tolist() == [SPS_BY_HAND[p][k - 1] for p in pairs], k
    # the two-segment-waypoint path of 1 -> 2 is the way round the square
    b3 = disjoint_paths_batch(topo, np.array([1], np.int32), np.array([2], np.int32),
                              method="sps", k=3)
    assert [w.tolist() for w in b3.path_waypoints(0)] == [[], [0, 3]]
    # greedy: pairs with a unique shortest path always find the way round (2 paths); at
    # distance 3 there are three equal shortest paths and the count depends on which one is
    # taken: through the chord 0-3 it cuts both squares (1 path), otherwise the other square
    # is left (2 paths).
    greedy = disjoint_paths_batch(topo, s, t, method="greedy")
    expected = []
    for i, (a, b) in enumerate(pairs):
        if SPS_BY_HAND[(a, b)][0] == 1 and SPS_BY_HAND[(a, b)][-1] == 2:
            expected.append(2)
        else:
            first = greedy.paths(i)[0].tolist()
            chord = any({x, y} == {0, 3} for x, y in zip(first, first[1:]))
            expected.append(1 if chord else 2)
    assert greedy.counts.tolist() == expected
    # tie-breaking by the smallest node id: 1 -> 4 goes 1-0-3-4 (chord), 2 -> 5 goes 2-1-0-5
    assert edge_disjoint_paths(topo, "1", "4", method="greedy") == [["1", "0", "3", "4"]]
    assert len(edge_disjoint_paths(topo, "2", "5", method="greedy")) == 2

    rows = {(r["method"], r["k"]): r for r in topology_rows(topo)}
    assert set(rows) == {("max", None), ("greedy", None), ("failure", 4)} | {
        ("sps", k) for k in range(1, 7)}
    for r in rows.values():
        assert (r["topology"], r["nodes"], r["links"], r["edge_routers"], r["pairs"],
                r["status"]) == ("ring6", 6, 7, 4, 12, "ok")
    assert (rows["max", None]["mean_paths"], rows["max", None]["min_paths"],
            rows["max", None]["max_paths"]) == (2.0, 2, 2)
    assert rows["greedy", None]["mean_paths"] == pytest.approx(22 / 12)  # 1 -> 4, 4 -> 1: one
    assert (rows["greedy", None]["min_paths"], rows["greedy", None]["max_paths"]) == (1, 2)
    for k in (1, 2):
        assert (rows["sps", k]["mean_paths"], rows["sps", k]["min_paths"],
                rows["sps", k]["max_paths"]) == (1.0, 1, 1)
    for k in (3, 4, 5, 6):
        assert rows["sps", k]["mean_paths"] == pytest.approx(20 / 12)
        assert (rows["sps", k]["min_paths"], rows["sps", k]["max_paths"]) == (1, 2)
    f = rows["failure", 4]
    # the 8 pairs with a second sps path have slot 0 + one disjoint backup and survive; the 4
    # pairs at distance 3 have slot 0 only (its DAG is every link) and do not
    assert f["mean_paths"] == pytest.approx(20 / 12)
    assert f["survive_share"] == pytest.approx(8 / 12)
    assert f["backup_share"] == pytest.approx(8 / 12)
    assert f["overlap_share"] == 0.0


def test_ring_all_pairs() -> None:
    topo = ring_topology()
    rows = {(r["method"], r["k"]): r for r in topology_rows(topo, DisjointConfig(pairs="all"))}
    assert rows["max", None]["pairs"] == 30
    # 0 -> 3 has three disjoint paths (the chord and both squares)
    assert rows["max", None]["max_paths"] == 3
    assert rows["sps", 1]["mean_paths"] == 1.0


def test_failure_view_sets_on_ring() -> None:
    topo = ring_topology()
    s, t = pair_ids(topo, "edge")
    sps = disjoint_paths_batch(topo, s, t, method="sps", k=4)
    view = failure_view(sps, keep_sets=True)
    link = {tuple(sorted(uv)): i for i, uv in enumerate(zip(topo.link_u.tolist(),
                                                             topo.link_v.tolist()))}
    i = list(zip(s.tolist(), t.tolist())).index((1, 2))
    (w0, l0), (w1, l1) = view.sets[i]
    assert (w0, l0) == ((), frozenset({link[1, 2]}))  # slot 0: the link itself
    assert w1 == (0, 3) and l1 == frozenset({link[0, 1], link[0, 3], link[2, 3]})
    i = list(zip(s.tolist(), t.tolist())).index((1, 4))
    assert view.sets[i] == [((), frozenset(range(7)))]  # the duplicate direct path is dropped
    # at most max_paths paths
    view1 = failure_view(sps, max_paths=1)
    assert view1.sizes.max() == 1 and not view1.survive.any() and not view1.backup.any()


def test_sps_shortcut_matches_full_computation_on_ring8() -> None:
    topo = build_topology("r8", [str(i) for i in range(8)],
                          [RawEdge(i, (i + 1) % 8) for i in range(8)] + [RawEdge(0, 4),
                                                                        RawEdge(2, 6)])
    for mode in ("edge", "all"):
        s, t = pair_ids(topo, mode)
        fast, _ = sps_counts(topo, s, t, range(1, 7), full=(4,))
        slow, _ = sps_counts(topo, s, t, range(1, 7), exact=True)
        for k in range(1, 7):
            assert np.array_equal(fast[k], slow[k]), (mode, k)


def test_skipped_topology() -> None:
    tree = prune(build_topology("tree", list("abcd"), [RawEdge(0, 1), RawEdge(1, 2),
                                                       RawEdge(1, 3)]))
    [row] = topology_rows(tree)
    assert row["status"] == "skipped" and row["method"] == "" and "< 2" in row["error"]
    ring5 = build_topology("r5", list("abcde"), [RawEdge(i, (i + 1) % 5) for i in range(5)])
    rows = topology_rows(ring5)
    assert {r["method"] for r in rows} == {"max", "greedy", "sps", "failure"}


# --------------------------------------------------------------------------- study runs
def test_results_csv_resume_and_jobs(tmp_path: Path) -> None:
    topo_dir = write_collection(tmp_path / "topos")
    cfg = DisjointConfig(ks=(1, 2, 4))
    run1, rows = run_disjoint_study(str(topo_dir), tmp_path / "a", cfg, progress=False)
    assert (run1.total, run1.skipped, run1.completed, run1.failed) == (4, 0, 4, [])
    with open(tmp_path / "a" / "results.csv", newline="") as fh:
        assert next(csv.reader(fh)) == COLUMNS
    by = {(r["topology"], r["method"], r["k"]): r for r in rows}
    # 3 topologies x (max, greedy, sps x 3, failure) + one skipped row
    assert len(rows) == 3 * 6 + 1
    assert by["tree", "", ""]["status"] == "skipped"
    assert by["ring6", "max", ""]["mean_paths"] == "2.0"
    assert float(by["ring6", "greedy", ""]["mean_paths"]) == pytest.approx(22 / 12)
    assert float(by["ring6", "sps", "4"]["mean_paths"]) == pytest.approx(20 / 12)
    assert by["ring6", "sps", "2"]["min_paths"] == "1"
    assert by["ring6", "failure", "4"]["overlap_share"] == "0.0"
    assert by["ring5", "max", ""]["mean_paths"] == "2.0"
    # on a plain ring every sps path is the whole ring after the first: k=1 one path
    assert by["ring5", "sps", "1"]["mean_paths"] == "1.0"
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    config = meta["study"]["config"]
    assert config["k"] == [1, 2, 4] and config["pairs"] == "edge"
    assert config["capacity_rule"] == "uniform" and config["weight_rule"] == "hop"
    before = read_rows(tmp_path / "a" / "results.csv")

    # resume: everything is done; then drop one part and only that one runs again
    run2, _ = run_disjoint_study(str(topo_dir), tmp_path / "a", cfg, progress=False)
    assert (run2.skipped, run2.completed) == (4, 0)
    parts = sorted((tmp_path / "a" / "parts").glob("topology=ring8*.csv"))
    assert len(parts) == 1
    parts[0].unlink()
    run3, _ = run_disjoint_study(str(topo_dir), tmp_path / "a", cfg, progress=False)
    assert (run3.skipped, run3.completed) == (3, 1)
    assert without_seconds(read_rows(tmp_path / "a" / "results.csv")) == without_seconds(before)
    # a different study in the same folder is refused, with the hint this verb can follow
    with pytest.raises(UsageError, match=r"start over \(tpcstudy disjoint \.\.\. --overwrite\)"):
        run_disjoint_study(str(topo_dir), tmp_path / "a", DisjointConfig(ks=(1, 2)),
                           progress=False)
    # ... and overwrite starts it over: only the new study's rows remain
    run5, rows5 = run_disjoint_study(str(topo_dir), tmp_path / "a", DisjointConfig(ks=(1, 2)),
                                     progress=False, overwrite=True)
    assert (run5.skipped, run5.completed) == (0, 4)
    assert {r["k"] for r in rows5 if r["method"] == "sps"} == {"1", "2"}
    assert json.loads((tmp_path / "a" / "meta.json").read_text())["study"]["config"]["k"] == [1, 2]

    # jobs=2 gives the same results
    run4, _ = run_disjoint_study(str(topo_dir), tmp_path / "b", cfg, jobs=2, progress=False)
    assert run4.completed == 4 and not run4.failed
    assert without_seconds(read_rows(tmp_path / "b" / "results.csv")) == without_seconds(before)


def test_paths_out(tmp_path: Path) -> None:
    topo_dir = write_collection(tmp_path / "topos")
    cfg = DisjointConfig(ks=(1, 3))
    # a first run without paths; asking for them later fills them in for finished topologies
    run_disjoint_study(str(topo_dir), tmp_path / "out", cfg, progress=False)
    target = tmp_path / "paths.jsonl"
    _, rows = run_disjoint_study(str(topo_dir), tmp_path / "out", cfg, progress=False,
                                 paths_out=target)
    recs = [json.loads(line) for line in target.read_text().splitlines()]
    ok = [r for r in rows if r["status"] == "ok" and r["method"] == "max"]
    assert len(recs) == sum(int(r["pairs"]) for r in ok) * 4  # max, greedy, sps k=1, k=3
    rec = next(r for r in recs if r["topology"] == "ring6" and r["method"] == "sps"
               and r["k"] == 3 and r["source"] == "r1" and r["target"] == "r2")
    assert rec["paths"] == [["r1", "r2"], ["r1", "r0", "r3", "r2"]]
    assert rec["waypoints"] == [[], ["r0", "r3"]]
    rec = next(r for r in recs if r["topology"] == "ring6" and r["method"] == "max"
               and r["source"] == "r1" and r["target"] == "r2")
    assert "waypoints" not in rec and len(rec["paths"]) == 2
    # gzip when the name ends .gz
    import gzip

    gz = tmp_path / "paths.jsonl.gz"
    run_disjoint_study(str(topo_dir), tmp_path / "out", cfg, progress=False, paths_out=gz)
    assert gzip.decompress(gz.read_bytes()).decode() == target.read_text()


# --------------------------------------------------------------------------- summary
def test_summarize() -> None:
    def row(topo: str, method: str, k: str, mean: float, **extra: str) -> Dict[str, str]:
        return {"topology": topo, "method": method, "k": k, "pairs": extra.pop("pairs", "2"),
                "mean_paths": repr(mean), "status": "ok", **extra}

    rows = [
        row("A", "max", "", 2.0), row("A", "greedy", "", 2.0),
        row("A", "sps", "1", 1.0), row("A", "sps", "4", 1.5),
        row("A", "failure", "4", 1.5, survive_share="0.5", overlap_share="0.0",
            backup_share="0.5", pairs="2"),
        row("B", "max", "", 2.0), row("B", "greedy", "", 1.5),
        row("B", "sps", "1", 1.0), row("B", "sps", "4", 2.0),
        row("B", "failure", "4", 2.0, survive_share="1.0", overlap_share="0.0",
            backup_share="1.0", pairs="6"),
        row("C", "max", "", 2.0), row("C", "greedy", "", 2.0),
        row("C", "sps", "1", 1.0), row("C", "sps", "4", 1.0),
        row("C", "failure", "4", 1.0, survive_share="0.0", overlap_share="0.0",
            backup_share="0.0", pairs="2"),
        {"topology": "T", "method": "", "k": "", "status": "skipped"},
        {"topology": "F", "method": "", "k": "", "status": "failed", "error": "boom"},
    ]
    s = summarize(rows)
    assert (s["topologies"], s["skipped"], s["failed"]) == (3, 1, 1)
    assert s["greedy_reaches_max"] == {"count": 2, "of": 3, "share": pytest.approx(2 / 3)}
    assert list(s["mean_paths"]) == ["max", "greedy", "sps k=1", "sps k=4"]
    assert s["mean_paths"]["greedy"] == pytest.approx(5.5 / 3)
    assert s["mean_paths"]["sps k=4"] == pytest.approx(1.5)
    f = s["failure"]
    assert f["survive_share"] == pytest.approx(0.5)
    assert f["survive_share_pairs"] == pytest.approx((0.5 * 2 + 1.0 * 6) / 10)
    assert f["backup_share"] == pytest.approx(0.5) and f["overlap_share"] == 0.0
    text = format_summary(s)
    assert "2 of 3 topologies = 66.7 %" in text and "(paper: 70 %)" in text
    assert "nearly saturates" in text


def test_one_table_for_the_summary_and_the_figure(tmp_path: Path) -> None:
    dj = load_results(make_disjoint(tmp_path / "dj"))
    d = mean_paths_table(dj)
    assert d["max"] == {"Alpha": 2.0, "Beta": 2.0} and d["sps k=3"]["Alpha"] == 1.8
    assert "failure" not in d and list(d) == ["max", "greedy", "sps k=1", "sps k=2", "sps k=3"]
    assert greedy_reaches_max(d) == (1, 2)
    # the summary is made of the same table, read as strings or as numbers
    for rows in (dj, read_rows(tmp_path / "dj" / "results.csv")):
        s = summarize(rows)
        assert s["greedy_reaches_max"]["count"] == 1 and s["mean_paths"]["greedy"] == 1.75
    assert summary_line(dj).startswith("greedy = max on 1/2 topologies (50.0 %, paper: 70 %)")


# --------------------------------------------------------------------------- real topologies
ZOO_SAMPLE = ["Abilene", "Geant2012", "Uninett2010", "Colt", "Deltacom"]


@pytest.mark.parametrize("name", ZOO_SAMPLE)
def test_zoo_failure_view_invariant(zoo_installed: Path, name: str) -> None:
    """Default path and first backup never share a link; the first sps path is the default."""
    topo = prune(read_topology(zoo_installed / f"{name}.gml"))
    for mode in ("edge", "all") if name == "Abilene" else ("edge",):
        s, t = pair_ids(topo, mode)
        sps = disjoint_paths_batch(topo, s, t, method="sps", k=4)
        view = failure_view(sps, keep_sets=True)
        assert not view.overlap.any()
        for i, chosen in enumerate(view.sets):
            slot0 = frozenset((dag_arcs(topo, int(s[i]), int(t[i])) // 2).tolist())
            assert chosen[0] == ((), slot0)
            assert sps.path_waypoints(i)[0].size == 0  # the first sps path is the direct one
            assert frozenset(sps.path_links(i)[0].tolist()) == slot0
            if len(chosen) > 1:
                assert not chosen[0][1] & chosen[1][1]
            assert view.survive[i] == (not frozenset.intersection(*(c[1] for c in chosen)))
        assert np.array_equal(view.backup, view.sizes >= 2)
        # with at most two links at an edge router, surviving needs a backup
        if mode == "edge":
            assert not (view.survive & ~view.backup).any()


@pytest.mark.parametrize("name", ["Abilene", "Geant2012", "Uninett2010"])
def test_zoo_sps_shortcut_is_exact(zoo_installed: Path, name: str) -> None:
    topo = prune(read_topology(zoo_installed / f"{name}.gml"))
    for mode in ("edge", "all"):
        s, t = pair_ids(topo, mode)
        fast, _ = sps_counts(topo, s, t, range(1, 7), full=(4,))
        slow, _ = sps_counts(topo, s, t, range(1, 7), exact=True)
        for k in range(1, 7):
            assert np.array_equal(fast[k], slow[k]), (name, mode, k)


def test_max_pairs_samples_reproducibly(zoo_installed):
    """--max-pairs: a seeded uniform sample; the sampled means are those of the sampled pairs."""
    from tpcstudy.paths import disjoint_path_counts

    topo = prune(read_topology(zoo_installed / "Geant2012.gml"))
    cfg = DisjointConfig(ks=(1, 4), max_pairs=25, seed=3)
    def rows(c):
        return {(r["method"], r["k"]): {k: v for k, v in r.items() if k != "seconds"}
                for r in topology_rows(topo, c)}

    a, b = rows(cfg), rows(cfg)
    assert a == b and a[("max", None)]["pairs"] == 25
    s, t = pair_ids(topo, "edge")
    pick = np.sort(np.random.default_rng(3).choice(len(s), 25, replace=False))
    counts = disjoint_path_counts(topo, s[pick], t[pick], method="max")
    assert a[("max", None)]["mean_paths"] == pytest.approx(counts.mean())
    other = {(r["method"], r["k"]): r
             for r in topology_rows(topo, DisjointConfig(ks=(1, 4), max_pairs=25, seed=4))}
    assert other[("max", None)]["pairs"] == 25
    full = {(r["method"], r["k"]): r for r in topology_rows(topo, DisjointConfig(ks=(1, 4), max_pairs=10**6))}
    assert full[("max", None)]["pairs"] == len(s)

"""Failures (docs/method.md §4c): scenarios, the three reactions, their order, bridges, the
shared-risk file, and the study end to end."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pytest

from tpcstudy.errors import InputFileError, UsageError
from tpcstudy.io import read_topology
from tpcstudy.models import failures as F
from tpcstudy.models.maxflow import max_flow
from tpcstudy.models.mlu import min_mlu
from tpcstudy.pairs import heavy_pairs
from tpcstudy.topology import Topology, prune

ZOO_SMALL = ("Abilene", "Aarnet", "Geant2012", "Garr201201", "Janetbackbone", "Bics", "Cesnet201006",
             "Renater2010")


def _topo(name: str, nodes: Sequence[str], links: Sequence[Tuple[str, str, float, float]]
          ) -> Topology:
    """Links ``(u, v, capacity, weight)``, both directions alike."""
    idx = {v: i for i, v in enumerate(nodes)}
    u = np.array([min(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    v = np.array([max(idx[a], idx[b]) for a, b, _, _ in links], dtype=np.int32)
    cap = np.repeat([c for _, _, c, _ in links], 2).astype(float)
    w = np.repeat([x for _, _, _, x in links], 2).astype(float)
    return Topology(name, list(nodes), u, v, cap, w)


def _gml(topo: Topology, path: Path, drop: int) -> Path:
    """``topo`` less link ``drop`` as a GML file (unit capacities, hop weights: the rules the
    study reads it back with)."""
    lines = ["graph ["]
    for i, n in enumerate(topo.names):
        lines.append(f'  node [ id {i} label "{n}" ]')
    for i, (a, b, m) in enumerate(zip(topo.link_u.tolist(), topo.link_v.tolist(),
                                      topo.multiplicity.tolist())):
        if i != drop:  # a merged link of multiplicity m (capacity m under uniform): m edges
            lines.extend([f"  edge [ source {a} target {b} ]"] * m)
    lines.append("]")
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------- specs and files
def test_parse_failures() -> None:
    assert F.parse_failures(None) == ("none", None)
    assert F.parse_failures("links") == ("links", None)
    assert F.parse_failures("links:5") == ("links", "5")
    assert F.parse_failures("nodes") == ("nodes", None)
    for bad in ("link", "links:0", "links:x", "nodes:3", "srlg:", "srlg"):
        with pytest.raises(UsageError):
            F.parse_failures(bad)


def test_links_sample_is_seeded_and_stable() -> None:
    t = _topo("sq", "abcd", [("a", "b", 1, 1), ("b", "c", 1, 1), ("c", "d", 1, 1),
                             ("d", "a", 1, 1), ("a", "c", 1, 1)])
    a = [s.id for s in F.scenarios(t, "links:3", seed=4)]
    assert a == [s.id for s in F.scenarios(t, "links:3", seed=4)] and len(a) == 3
    assert [s.id for s in F.scenarios(t, "links")] == ["a--b", "a--d", "a--c", "b--c", "c--d"] \
        or len(F.scenarios(t, "links")) == 5
    assert [s.id for s in F.scenarios(t, "links:99")] == [s.id for s in F.scenarios(t, "links")]
    nodes = F.scenarios(t, "nodes")  # transit routers: degree != 2 (a and c)
    assert [s.id for s in nodes] == ["node:a", "node:c"]
    assert len(nodes[0].links) == 3 and nodes[0].nodes == (0,)


def test_srlg_file(tmp_path: Path) -> None:
    t = _topo("sq", "abcd", [("a", "b", 1, 1), ("b", "c", 1, 1), ("c", "d", 1, 1),
                             ("d", "a", 1, 1)])
    f = tmp_path / "g.srlg"
    f.write_text("# duct west\nwest: a -- b; c -- b\n\neast: d -- c  # one link\n")
    got = F.read_srlg(f, t)
    assert [(g.id, g.links) for g in got] == [("west", (0, 1)), ("east", (2,))]
    for text, where in (("west: a -- z\n", ":1"), ("x: a -- b\nx: b -- c\n", ":2"),
                        ("y: a - b\n", ":1"), ("no colon\n", ":1"), ("z: a -- c\n", ":1")):
        f.write_text(text)
        with pytest.raises(InputFileError) as e:
            F.read_srlg(f, t)
        assert f"{f}{where}" in str(e.value)
    f.write_text("")
    with pytest.raises(InputFileError):
        F.read_srlg(f, t)
    link = tmp_path / "link.srlg"
    link.symlink_to(f)
    with pytest.raises(InputFileError, match="symbolic link"):
        F.read_srlg(link, t)


# ------------------------------------------------------------------------- hand-worked cases
def _kite() -> Topology:
    """s splits to b and x (both cost 6); x splits to t (4) and y (2 + 2); x-y has capacity
    1, every other link 100. ECMP carries 4 from s to t (x-y takes a quarter)."""
    return _topo("kite", ["s", "b", "x", "y", "t"],
                 [("s", "b", 100, 3), ("b", "t", 100, 3), ("s", "x", 100, 2),
                  ("x", "t", 100, 4), ("x", "y", 1, 2), ("y", "t", 100, 2)])


def test_ecmp_none_can_beat_hosts_the_counterexample() -> None:
    """x-t fails. Before anything reacts x still splits: b's half and x-y's quarter arrive, x-t's
    quarter is lost: 3 of 4. Once the IGP re-converges, x sends its whole half over x-y
    (capacity 1): ECMP carries 2. So ``none <= hosts`` does not hold for ecmp (the even split
    that no longer crosses the bottleneck), nor in general for sr's table."""
    t = _kite()
    pairs = np.array([[0, 4]], dtype=np.int32)
    res = max_flow(t, pairs, model="ecmp")
    assert res.value == pytest.approx(4.0)
    intact = F.MaxflowIntact(t, pairs, res, 1)
    sc = F.Scenario("x--t", (t.links.index(("x", "t")),))
    got = {r.reaction: r.value for r in F.maxflow_reactions(intact, sc)}
    assert got["none"] == pytest.approx(3.0)
    assert got["hosts"] == pytest.approx(2.0) and got["reoptimised"] == pytest.approx(2.0)
    # two failed links in one DAG (a shared-risk group): only y's quarter arrives
    both = F.Scenario("g", (t.links.index(("x", "t")), t.links.index(("b", "t"))))
    got = {r.reaction: r.value for r in F.maxflow_reactions(intact, both)}
    assert got["none"] == pytest.approx(1.0) and got["reoptimised"] == pytest.approx(1.0)


def test_mlu_triangle_by_hand() -> None:
    """s-t, s-a-t, unit capacities, one unit s -> t: sr k = 2 splits half and half (MLU 0.5).
    s-t fails: half the traffic is lost (the other half still loads s-a and a-t at 0.5); the
    hosts keep (s, a, t) and the re-converged direct path (also s-a-t): MLU 1."""
    t = _topo("tri", ["s", "a", "t"], [("s", "t", 1, 1), ("s", "a", 1, 1), ("a", "t", 1, 1)])
    res = min_mlu(t, [("s", "t", 1.0)], model="sr", k=2)
    assert res.mlu == pytest.approx(0.5)
    intact = F.MLUIntact(t, res, 2)
    got = {r.reaction: r for r in F.mlu_reactions(intact, F.Scenario("s--t", (0,)))}
    assert got["none"].value == pytest.approx(0.5) and got["none"].lost == pytest.approx(0.5)
    assert got["hosts"].value == pytest.approx(1.0)
    assert got["reoptimised"].value == pytest.approx(1.0)
    assert got["reoptimised"].dual_bound == pytest.approx(1.0)


def test_bridge_counts_pairs_disconnected_and_fails_no_row(tmp_path: Path) -> None:
    from tpcstudy.study.failures import FailuresConfig, run_failures_study
    from tpcstudy.study.maxflow import MaxflowConfig

    f = tmp_path / "Bridge.gml"
    f.write_text("graph [\n" + "".join(f'  node [ id {i} label "{n}" ]\n'
                                       for i, n in enumerate("abcdef"))
                 + "".join(f"  edge [ source {a} target {b} ]\n" for a, b in
                           [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)]) + "]\n")
    cfg = FailuresConfig(MaxflowConfig(heavy=(100,), models=("ecmp", "sr", "multipath", "mcf")),
                         "links")
    run, rows = run_failures_study(str(f), tmp_path / "out", cfg, jobs=1, progress=False)
    assert not [r for r in rows if r["status"] != "ok"]
    bridge = [r for r in rows if r["failure"] == "c--d"]
    # edge routers a, b, e, f: 12 ordered pairs, 8 of them across the bridge
    assert bridge and all(int(r["disconnected"]) == 8 for r in bridge)
    assert {r["reaction"] for r in bridge if r["model"] == "sr"} == set(F.REACTIONS)
    assert {r["reaction"] for r in bridge if r["model"] == "mcf"} == {"none", "reoptimised"}
    other = [r for r in rows if r["failure"] == "a--b"]
    assert all(int(r["disconnected"]) == 0 for r in other)


# ------------------------------------------------------------------------- the oracles
@pytest.fixture(scope="module")
def zoo_topos(zoo_installed: Path) -> List[Topology]:
    return [prune(read_topology(zoo_installed / f"{n}.gml")) for n in ZOO_SMALL]


def test_reoptimised_equals_the_study_on_the_file_without_the_link(
        zoo_topos: List[Topology], tmp_path: Path) -> None:
    """20 random (topology, link): the reoptimised row (warm-started) equals max_flow on the
    topology with that link removed, written as a file and read back, to 1e-9; sr, ecmp, mcf."""
    rng = random.Random(39)
    for n in range(20):
        topo = rng.choice(zoo_topos)
        link = rng.randrange(topo.num_links)
        pairs = heavy_pairs(topo, percent=10, seed=n)
        cut = read_topology(_gml(topo, tmp_path / f"{topo.name}-{n}.gml", link))
        names = [(topo.names[s], topo.names[t]) for s, t in pairs.tolist()]
        sc = F.Scenario(F.link_id(topo, link), (link,))
        for model in ("ecmp", "sr", "mcf"):
            intact = F.MaxflowIntact(topo, pairs, max_flow(topo, pairs, model=model, k=4,
                                                           keep_state=True), 4)
            got = {r.reaction: r for r in F.maxflow_reactions(intact, sc)}
            assert got["reoptimised"].warm or model == "mcf"  # (mcf: kept when untouched)
            want = max_flow(cut, names, model=model, k=4).value
            assert got["reoptimised"].value == pytest.approx(want, rel=1e-9, abs=1e-9), \
                (topo.name, sc.id, model)


def test_order_of_the_reactions(zoo_topos: List[Topology]) -> None:
    """none <= mcf, hosts <= reoptimised <= mcf (sr, ecmp), none <= reoptimised for mcf and
    multipath (their surviving paths stay paths of the model), dual bound >= value."""
    rng = random.Random(7)
    for topo in zoo_topos[:5]:
        pairs = heavy_pairs(topo, percent=10, seed=1)
        intact = {m: F.MaxflowIntact(topo, pairs, max_flow(topo, pairs, model=m, k=4,
                                                           keep_state=m != "multipath"), 4)
                  for m in ("ecmp", "sr", "multipath", "mcf")}
        for link in rng.sample(range(topo.num_links), 4):
            sc = F.Scenario(F.link_id(topo, link), (link,))
            got = {m: {r.reaction: r for r in F.maxflow_reactions(i, sc)}
                   for m, i in intact.items()}
            bound = got["mcf"]["reoptimised"].value
            tol = 1e-7 * max(1.0, bound)
            for m in ("ecmp", "sr", "multipath", "mcf"):
                g = got[m]
                assert g["none"].value <= bound + tol
                assert g["reoptimised"].value <= bound + tol
                assert g["reoptimised"].dual_bound >= g["reoptimised"].value - tol
                if "hosts" in g:
                    assert g["hosts"].value <= g["reoptimised"].value + tol
            for m in ("multipath", "mcf"):
                assert got[m]["none"].value <= got[m]["reoptimised"].value + tol


def test_warm_equals_cold_and_nodes(zoo_topos: List[Topology]) -> None:
    """A router failure: its paths as waypoint are dropped, its pairs disconnected; the warm
    re-solve equals the cold one."""
    topo = zoo_topos[0]
    pairs = heavy_pairs(topo, percent=100, seed=0)
    res = max_flow(topo, pairs, model="sr", k=4, keep_state=True)
    intact = F.MaxflowIntact(topo, pairs, res, 4)
    for sc in F.scenarios(topo, "nodes")[:4]:
        got = {r.reaction: r for r in F.maxflow_reactions(intact, sc)}
        cold = {r.reaction: r for r in F.maxflow_reactions(intact, sc, warm=False)}
        assert got["reoptimised"].value == pytest.approx(cold["reoptimised"].value, rel=1e-9)
        ft, _ = F.failed_topology(topo, sc)
        assert ft.num_links == topo.num_links - len(sc.links)


def test_mlu_reactions_on_abilene(repetita: Path) -> None:
    g = next(repetita.rglob("Abilene.graph"))
    topo = read_topology(g, capacity="file", weight="file")
    dem = str(next(g.parent.glob("Abilene.0000.demands")))
    from tpcstudy.models.demands import demand_matrix

    S, T, V = demand_matrix(topo, "auto", 0, path=Path(dem))
    matrix = list(zip(S.tolist(), T.tolist(), V.tolist()))
    intact = {m: F.MLUIntact(topo, min_mlu(topo, matrix, model=m, k=2), 2)
              for m in ("ecmp", "sr", "mcf")}
    for sc in F.scenarios(topo, "links")[:6]:
        got = {m: {r.reaction: r for r in F.mlu_reactions(i, sc)} for m, i in intact.items()}
        bound = got["mcf"]["reoptimised"].value
        ft, _ = F.failed_topology(topo, sc)
        cold = min_mlu(ft, [d for d in matrix], model="sr", k=2).mlu \
            if got["sr"]["reoptimised"].disconnected == 0 else None
        if cold is not None:
            assert got["sr"]["reoptimised"].value == pytest.approx(cold, rel=1e-9)
        assert got["sr"]["hosts"].value >= got["sr"]["reoptimised"].value - 1e-9
        assert got["sr"]["reoptimised"].value >= bound - 1e-9
        assert 0.0 <= got["sr"]["none"].lost <= 1.0


# ------------------------------------------------------------------------- the study
def test_study_cli_show_plot_resume(tmp_path: Path, zoo_installed: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tpcstudy.cli import main

    out = tmp_path / "f"
    argv = ["maxflow", "--topo", str(zoo_installed / "Abilene.gml"), "--heavy", "20",
            "--models", "ecmp,sr,mcf", "--failures", "links:5", "--out", str(out),
            "--no-progress"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "5 failures on 1 topologies" in first and "reoptimised" in first
    assert main(argv) == 0
    assert "(5 reused" in capsys.readouterr().out
    assert main(["show", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "failures" and data["summary"]["scenarios"] == 5
    reactions = {(s["series"], s["reaction"]) for s in data["summary"]["series"]}
    assert ("sr k=4", "hosts") in reactions and ("mcf", "reoptimised") in reactions
    assert main(["plot", str(out), "--out", str(tmp_path / "fig"), "--format", "png"]) == 0
    assert (tmp_path / "fig" / "failures.png").stat().st_size > 10_000
    assert main(argv[:-3] + ["--models", "mptcp", "--out", str(tmp_path / "g")]) == 2
    assert "no failure reaction" in capsys.readouterr().err
    assert not math.isnan(data["summary"]["series"][0]["retained_median"])


def test_routers_named_by_numbers() -> None:
    """Router names that are other routers' ids (Globenet's "2", "3", ...) change nothing."""
    plain = _kite()
    named = _topo("kite", ["4", "3", "0", "1", "2"],
                  [("4", "3", 100, 3), ("3", "2", 100, 3), ("4", "0", 100, 2),
                   ("0", "2", 100, 4), ("0", "1", 1, 2), ("1", "2", 100, 2)])
    pairs = np.array([[0, 4], [1, 3]], dtype=np.int32)
    for model in ("sr", "mcf", "ecmp"):
        vals = []
        for t in (plain, named):
            intact = F.MaxflowIntact(t, pairs, max_flow(t, pairs, model=model, k=3), 3)
            vals.append([(r.reaction, round(r.value, 9))
                         for sc in F.scenarios(t, "links") for r in F.maxflow_reactions(intact, sc)])
        assert vals[0] == vals[1], model


def test_summary_by_hand() -> None:
    from tpcstudy.study.failures import format_summary, summarize

    def row(topo: str, fail: str, reaction: str, value: float, dis: int = 0) -> dict:
        return {"topology": topo, "objective": "maxflow", "heavy": 10.0, "seed": 0,
                "model": "sr", "k": 4, "failure": fail, "reaction": reaction, "value": value,
                "retained": value / 10.0, "lost_share": 0.0, "disconnected": dis, "status": "ok"}

    rows = [row("A", "a--b", "hosts", 8.0), row("A", "a--b", "reoptimised", 9.0),   # +12.5 %
            row("A", "b--c", "hosts", 9.0), row("A", "b--c", "reoptimised", 9.4),   # +4.4 %
            row("B", "x--y", "hosts", 5.0, 2), row("B", "x--y", "reoptimised", 5.0, 2),
            # exactly 5 % (21/20), the solver's last digits either way: not "more than 5 %"
            row("C", "p--q", "hosts", 20.0), row("C", "p--q", "reoptimised", 21.000000000001),
            row("C", "q--r", "hosts", 20.000000000001), row("C", "q--r", "reoptimised", 21.0)]
    s = summarize(rows)
    beats = s["reoptimised_vs_hosts"][0]
    assert (beats["reoptimised_beats_hosts"], beats["scenarios"]) == (1, 5)
    assert [(w["topology"], w["failure"], w["retained"]) for w in s["worst"]] == \
        [("A", "a--b", 0.8), ("B", "x--y", 0.5), ("C", "p--q", 2.0)]
    assert s["scenarios"] == 5 and s["scenarios_disconnecting"] == 1 and s["pairs_disconnected"] == 2
    hosts = next(x for x in s["series"] if x["reaction"] == "hosts")
    assert hosts["retained_median"] == pytest.approx(0.9) and hosts["retained_min"] == 0.5
    assert "B: x--y retains 0.500 (2 pairs disconnected)" in format_summary(s)


def test_kept_segments_change_nothing(zoo_topos: List[Topology]) -> None:
    """The segment ratios kept from the intact network (and the intact optimum's paths as
    starting columns) give the cold solve's value, on every link of a Zoo topology."""
    topo = zoo_topos[2]
    pairs = heavy_pairs(topo, percent=100, seed=0)
    res = max_flow(topo, pairs, model="sr", k=4)
    intact = F.MaxflowIntact(topo, pairs, res, 4)
    assert len(intact.segments) >= len(pairs)
    for sc in F.scenarios(topo, "links"):
        ft, amap = F.failed_topology(topo, sc)
        warm = max_flow(ft, pairs, model="sr", k=4, initial_columns=intact.used_paths,
                        segments=intact.segments.after_failure(ft, amap))
        assert warm.value == pytest.approx(max_flow(ft, pairs, model="sr", k=4).value, rel=1e-9)


@pytest.mark.parametrize("model", ["ecmp", "sr", "mcf"])
def test_max_flow_after_every_link_and_router_equals_cold(zoo_topos: List[Topology],
                                                          model: str) -> None:
    """:func:`max_flow_after` (the intact final LP, the failed arcs at capacity 0, from its
    basis) equals a cold solve of the failed graph on every single link and every transit
    router of a Zoo topology (a router's failure cuts several links at once; some disconnect
    pairs), in less than half the simplex iterations (all rounds, summed over the failures)."""
    from tpcstudy.lp import highs
    from tpcstudy.models.maxflow import max_flow_after

    topo = zoo_topos[2]
    pairs = heavy_pairs(topo, percent=30, seed=3)
    res = max_flow(topo, pairs, model=model, k=3, keep_state=True)
    assert res.state is not None and res.state.cols is not None
    table = np.asarray([len(q) == 2 or f > 1e-9 for q, f in zip(res.paths, res.flows)])
    rows = [q for q, y in zip(res.paths, table) if y]
    assert model != "sr" or 0 < table.sum() < len(table)  # (sr: a real subset)
    its = {"warm": 0, "cold": 0}
    solve = highs.HighsModel.solve

    def counting(self: highs.HighsModel, time_limit: object = None) -> object:
        got = solve(self, time_limit)  # type: ignore[arg-type]
        its[which] += got.iterations
        return got

    highs.HighsModel.solve = counting  # type: ignore[method-assign,assignment]
    try:
        for sc in F.scenarios(topo, "links") + F.scenarios(topo, "nodes"):
            ft, amap = F.failed_topology(topo, sc)
            which = "warm"
            warm = max_flow_after(res, ft, amap)
            which = "cold"
            cold = max_flow(ft, pairs, model=model, k=3)
            assert warm.ok and warm.value == pytest.approx(cold.value, rel=1e-9, abs=1e-9), sc.id
            assert warm.pairs == cold.pairs
            assert np.asarray(warm.pair_flow).sum() == pytest.approx(warm.value, rel=1e-9)
            if model == "sr":  # the hosts' table alone (fixed): as fixed_columns from nothing
                which = "warm"
                fixed = max_flow_after(res, ft, amap, fixed=table)
                which = "cold"
                want = max_flow(ft, pairs, model=model, k=3, initial_columns=rows,
                                fixed_columns=True)
                assert fixed.value == pytest.approx(want.value, rel=1e-9, abs=1e-9), sc.id
                assert fixed.value <= warm.value * (1 + 1e-9)
    finally:
        highs.HighsModel.solve = solve  # type: ignore[method-assign]
    assert its["warm"] < its["cold"] / 2, its


def test_max_flow_after_with_demands_parallel_links_and_units() -> None:
    """Demand bounds and parallel links (``multigraph``: one of two parallel links fails),
    at capacities scaled by 1e-9 and 1e9: the same value per unit as a cold solve; a result
    solved without ``keep_state`` or an amap of another network is refused."""
    from tpcstudy.models.maxflow import max_flow_after

    nodes = ["a", "b", "c", "d", "e"]
    links = [("a", "b", 2.0, 1), ("a", "b", 1.0, 1), ("b", "c", 2.0, 1), ("a", "d", 1.0, 1),
             ("d", "c", 1.0, 1), ("c", "e", 3.0, 1), ("d", "e", 1.0, 2)]
    for unit in (1e-9, 1.0, 1e9):
        t = _topo("par", nodes, [(u, v, c * unit, w) for u, v, c, w in links])
        pairs = np.array([[0, 2], [0, 4], [3, 4]], dtype=np.int32)
        d = np.array([2.0, 2.0, 0.5]) * unit
        for model in ("ecmp", "sr", "mcf"):
            res = max_flow(t, pairs, model=model, k=3, demands=d, keep_state=True)
            for link in range(t.num_links):
                ft, amap = F.failed_topology(t, F.Scenario(str(link), (link,)))
                got = max_flow_after(res, ft, amap)
                want = max_flow(ft, pairs, model=model, k=3, demands=d)
                assert got.value / unit == pytest.approx(want.value / unit, rel=1e-9, abs=1e-9)
                assert np.all(np.asarray(got.pair_flow) <= d * (1 + 1e-9))
    ft, amap = F.failed_topology(t, F.Scenario("0", (0,)))
    with pytest.raises(UsageError, match="keep_state"):
        max_flow_after(max_flow(t, pairs, model="sr", k=3), ft, amap)
    with pytest.raises(UsageError, match="amap"):
        max_flow_after(res, t, amap)


def test_max_flow_after_without_a_basis_on_other_backends() -> None:
    """A backend that keeps no basis (OR-Tools GLOP, in its own process) still re-solves from
    the kept columns, to the cold value."""
    from tpcstudy.models.maxflow import max_flow_after

    nodes = ["a", "b", "c", "d"]
    t = _topo("sq", nodes, [("a", "b", 1.0, 1), ("b", "c", 1.0, 1), ("c", "d", 1.0, 1),
                            ("d", "a", 1.0, 1), ("a", "c", 1.0, 3)])
    pairs = np.array([[0, 2], [1, 3], [3, 1]], dtype=np.int32)
    res = max_flow(t, pairs, model="sr", k=3, solver="glop", keep_state=True)
    assert res.state is not None and res.state.cols is None
    for link in range(t.num_links):
        ft, amap = F.failed_topology(t, F.Scenario(str(link), (link,)))
        got = max_flow_after(res, ft, amap, solver="glop")
        assert got.value == pytest.approx(max_flow(ft, pairs, model="sr", k=3).value, abs=1e-9)

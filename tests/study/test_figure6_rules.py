"""Figure 6's keep/drop hypotheses (study/figure6_rules.py) by hand, and the report's verdicts
on every number (study/reproduce_report.py)."""

from __future__ import annotations

import pytest

from tpcstudy.study.figure6_rules import HYPOTHESES, Draw, figure6_cells, hypothesis_table, judge
from tpcstudy.study.reproduce_report import _variants_line, _why_none, figure6_number_rows, verdict


def _draws():
    """Topology A: 4 draws at 1 %, gains 0, 0 (the same pair set twice), 50, 100 over ecmp;
    topology B: 4 draws with 2 heavy pairs, gains 20, 20, 40, 0."""
    out = []
    for seed, (g, key) in enumerate([(0.0, "x"), (0.0, "x"), (50.0, "y"), (100.0, "z")]):
        out.append(Draw("A", 1.0, seed, 1, g, g / 2, True, (key,), False, 50))
    for seed, g in enumerate([20.0, 20.0, 40.0, 0.0]):
        out.append(Draw("B", 1.0, seed, 2, g, g, True, (("p", seed),), seed == 3, 300))
    return out


def _keep(name):
    return next(h for h in HYPOTHESES if h[0] == name)


@pytest.mark.parametrize("name,n,zeros,median", [
    ("paper rule", 8, 3, 20.0),
    ("no zeros", 5, 0, 40.0),            # 50, 100, 20, 20, 40
    ("distinct draws", 7, 2, 20.0),      # A's second "x" dropped: 0, 50, 100, 20, 20, 40, 0
    ("min 2 pairs", 4, 1, 20.0),         # only B: 20, 20, 40, 0
    ("1 pair at x %", 4, 1, 20.0),       # A has 50 pairs: 1 % is half a pair
    ("connected", 7, 2, 20.0),           # B's seed 3 has a disconnected pair
])
def test_each_rule_by_hand(name, n, zeros, median):
    _, _, keep, tol = _keep(name)
    c = figure6_cells(_draws(), keep, tol, resamples=20)[1.0]
    assert c["n"][0] == n and c["zeros_ecmp"][0] == zeros
    assert c["ecmp_median"][0] == pytest.approx(median)
    assert c["n"][1] <= n <= c["n"][2]  # the point is inside its own bootstrap interval


def test_table_ranks_rules_and_judges_against_the_paper():
    table = hypothesis_table(_draws(), resamples=10)
    assert table[0]["hypothesis"] == "paper rule"
    assert {r["hypothesis"] for r in table} == {h[0] for h in HYPOTHESES}
    inside = [r["judge"]["inside"] for r in table[1:]]
    assert inside == sorted(inside, reverse=True)
    assert table[0]["judge"]["of"] == 9  # N, 2 zero counts, 6 box values at the one percent


def test_every_number_gets_a_verdict_and_the_counting_argument():
    cells = {"1": figure6_cells(_draws(), _keep("paper rule")[2], resamples=20)[1.0]}
    rows = figure6_number_rows(cells)
    assert len(rows) == 9 and rows[0]["what"].startswith("N")
    assert rows[0]["verdict"] == verdict(4021, 8, 8, 8, tol=0.5, digits=0) == "differs by -4013"
    assert judge(cells)["of"] == 9
    # 3 zeros here, 588 in the paper, and 8 - 4021 draws to drop: nothing to argue
    assert "could in principle" in _why_none(cells)
    cells["1"]["paper"] = {**cells["1"]["paper"], "n": 5, "zeros_ecmp": 0, "zeros_multipath": 0}
    assert "3 zeros too many, 3 draws to drop" not in _why_none(cells)
    cells["1"]["paper"]["n"] = 7  # 1 draw to drop, 3 zeros to lose: no keep/drop rule can
    assert "1 % over ecmp: 3 zeros too many, 1 draws to drop" in _why_none(cells)


def test_variants_line_says_when_none_ran():
    assert _variants_line([], run=False).startswith("Variants not run")
    v = [{"variant": "round", "medians": {"ecmp@1": [70.0, 65.0, 75.0]},
          "paper": {"ecmp@1": 71.43}}]
    assert _variants_line(v) == ("Variants whose median holds the paper's inside its noise "
                                 "interval: round (over ecmp at 1 %).")


def test_parallel_one_variant_solves_on_merged_links(repetita):
    """Belnet2009 has parallel links: with ``parallel="one"`` the draws are the multigraph's and
    the values those of the merged topology (one ECMP next hop per router pair, capacities
    added): 5.67 Mbit/s instead of the rule's 5.56 on this draw."""
    from tpcstudy import max_flow, prune, read_topology
    from tpcstudy.errors import UsageError
    from tpcstudy.pairs import heavy_pairs
    from tpcstudy.study.maxflow import MaxflowConfig, run_topology
    from tpcstudy.study.tasks import Task

    path = next(repetita.glob("*inverseCapacity/Belnet2009.graph"))
    cfg = MaxflowConfig(heavy=(10.0,), seeds=(0,), models=("ecmp",), capacity="file",
                        weight="file", links="multigraph", parallel="one")
    assert cfg.meta("x")["parallel"] == "one"
    assert "parallel" not in MaxflowConfig(links="multigraph").meta("x")  # old folders resume
    with pytest.raises(UsageError, match="parallel 'two'"):
        MaxflowConfig(parallel="two")
    rows = run_topology(Task({"topology": "Belnet2009"}, (str(path), cfg)))
    topo = prune(read_topology(path, capacity="file", weight="file", links="multigraph"))
    assert topo.has_parallel_links()
    pairs = heavy_pairs(topo, percent=10.0, seed=0)
    want = max_flow(topo.merged(), pairs, model="ecmp").value
    assert rows[0]["value"] == pytest.approx(want) == pytest.approx(5666666.666666667)
    assert max_flow(topo, pairs, model="ecmp").value == pytest.approx(5555555.555555555)

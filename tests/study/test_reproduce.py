"""``tpcstudy reproduce`` (docs/method.md §4): the comparisons by hand, and the whole command on
REPETITA with one draw (Figure 5's router counts and Figure 7's max means are the paper's)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tpcstudy.cli import main
from tpcstudy.study import paper
from tpcstudy.study.reproduce import (
    compare_multiset,
    compare_sorted,
    figure6_rows,
    figure6_values,
    format_report,
    paper_config,
    verdict,
)


def test_verdicts_by_hand():
    assert verdict(71.43, 71.43, math.nan, math.nan) == "matches"
    assert verdict(71.43, 71.434, 70.0, 72.0) == "matches"  # the figure's two decimals
    assert verdict(71.43, 60.0, 55.0, 75.0) == "inside noise"
    assert verdict(71.43, 54.9, 50.0, 60.0) == "differs by -16.5"
    assert verdict(30.43, 31.0, math.nan, math.nan) == "differs by +0.6"  # no interval: no noise


def test_multiset_and_sorted_comparisons_by_hand():
    c = compare_multiset([3, 3, 4, 7], [3, 4, 4, 7])
    assert (c["equal"], c["only_ours"], c["only_paper"]) == (False, [3], [4])
    assert compare_multiset([5, 3], [3, 5])["equal"]
    s = compare_sorted([1.0, 2.0, 1.5], [1.5, 1.0, 2.1], 0.01)
    assert (s["equal_within"], s["max_diff"]) == (2, pytest.approx(0.1))
    assert compare_sorted([1.0], [1.0, 2.0], 0.01)["equal_within"] is None


def _rows():
    """Two topologies, two draws each at 1 %: sr over ecmp 0, 100 (A) and 50, 50 (B); over
    multipath 0, 50 and 25, 25."""
    out = []
    for topo, draws in (("A", [(1.0, 1.0, 1.0), (1.0, 4 / 3, 2.0)]),
                        ("B", [(2.0, 2.4, 3.0), (2.0, 2.4, 3.0)])):
        for seed, (e, mp, sr) in enumerate(draws):
            common = {"topology": topo, "heavy": 1.0, "seed": seed, "subflows": "",
                      "status": "ok"}
            out += [dict(common, model="ecmp", k=1, value=e, improvement=0.0),
                    dict(common, model="multipath", k="", value=mp,
                         improvement=100 * (mp - e) / e),
                    dict(common, model="sr", k=4, value=sr, improvement=100 * (sr - e) / e,
                         improvement_over_multipath=100 * (sr - mp) / mp)]
    return out


def test_figure6_rows_pool_every_draw_and_carry_the_paper():
    rows = {r["over"]: r for r in figure6_rows(_rows())}
    e, m = rows["ecmp"], rows["multipath"]
    assert sorted(figure6_values(_rows(), "ecmp", 1.0)) == pytest.approx([0, 50, 50, 100])
    assert (e["values"], e["topologies"], e["median"]) == (4, 2, pytest.approx(50.0))
    assert e["zero_share"] == pytest.approx(0.25)
    assert e["paper"] == list(paper.FIGURE6_CDF_OVER_ECMP[1.0]) and e["paper_n"] == 4021
    assert e["paper_zero_share"] == pytest.approx(588 / 4021)
    # the bootstrap keeps B at 50 and draws A's 0 or 100: the median lands in [25, 75]
    assert (e["median_lo"], e["median_hi"], e["verdict"]) == (25.0, 75.0, "inside noise")
    assert m["median"] == pytest.approx(25.0) and m["paper"][1] == 66.67
    assert m["verdict"] == "differs by -41.7"


def _report():
    from tpcstudy.study.figure6_rules import draws_of, figure6_cells
    from tpcstudy.study.reproduce import _figure7

    cells = figure6_cells(draws_of(_rows()), lambda d, c: True, resamples=50)
    rows7 = [{"topology": t, "method": m, "k": k, "mean_paths": v, "status": "ok"}
             for t, m, k, v in (("A", "max", "", 2.0), ("A", "greedy", "", 2.0),
                                ("A", "sps", 1, 1.0), ("A", "sps", 2, 1.2),
                                ("A", "sps:path", 1, 1.0), ("A", "sps:path", 2, 1.514))]
    report = {"paper": paper.PAPER, "seeds": 2, "topo": "repetita/inverse-capacity",
              "environment": {"tpcstudy": "x", "git_commit": "abc", "python": "3",
                              "platform": "Linux"},
              "figure5": {"topologies": 260, "nonempty": 233, "with_edge_routers": 219,
                          "largest": 167, "routers": compare_multiset([3, 4], [3, 4]),
                          "links": compare_multiset([150], [152]),
                          "links_with_self_loops": compare_multiset([152], [152]),
                          "self_loops": {"Interoute": 2}},
              "figure6": figure6_rows(_rows()), "variants": [], "variants_run": False,
              "figure6_numbers": {f"{h:g}": c for h, c in cells.items()},
              "figure7": _figure7(rows7, ("dag", "path")),
              "seconds": {"paper rule": 12.0}}
    return report


def test_the_report_says_what_was_compared():
    report = _report()
    text = format_report(report, ["figures/f.png"])
    assert "the multiset equals Figure 5's (2 values): **matches**" in text
    assert "Interoute (2) list self-loops" in text
    # two draws per topology: counts scaled to the paper's 20
    assert ("| 1 % | N (values pooled) (x 10: 20 draws) | 40 | [40, 40] | 4021 | "
            "differs by -3981 |") in text
    assert "| 1 % | over ecmp median | 50.00 | [25.00, 75.00] | 71.43 | inside noise |" in text
    assert "Variants not run (`--no-variants`)" in text
    assert "No variant brings" not in text
    assert "**Figure 5 concludes:**" in text and "**Figure 6 concludes:**" in text
    assert "| 2 | 1.5140 | 1.2000 (differs by -0.3140) | 1.5140 (matches) |" in text
    assert "The rule closest to the paper's sps: **path** (2 of 2 means match" in text
    assert "**Figure 7 concludes:**" in text
    assert "greedy reaches max on 1 of 1 topologies (100.0 %" in text
    assert "![f](figures/f.png)" in text and "commit abc" in text


def test_paper_config_is_the_papers():
    c = paper_config(20)
    assert (c.links, c.capacity, c.weight, c.ks, c.heavy) == (
        "multigraph", "file", "file", (4,), (1.0, 5.0, 10.0))
    assert c.seeds == tuple(range(20)) and c.ordered and c.rounding == "ceil"
    assert paper_config(2, rounding="round").rounding == "round"


@pytest.mark.slow
def test_reproduce_end_to_end_with_one_draw(repetita: Path, tmp_path: Path, capsys):
    out = tmp_path / "repro"
    assert main(["reproduce", "--seeds", "1", "--no-variants", "--jobs", "2", "--no-progress",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Figure 5: 233 topologies, router counts equal to the paper's; 219 with edge " \
           "routers" in printed
    text = (out / "report.md").read_text()
    assert "Pruned routers per topology: the multiset equals Figure 5's (233 values)" in text
    assert ("- max, per topology (Figure 7a): 219 topologies here, 219 in the figure; 218 of 219 "
            "equal") in text
    report = json.loads((out / "report.json").read_text())
    assert [r["values"] for r in report["figure6"]] == [219] * 6  # one draw per topology
    assert (out / "figures" / "figure6-beside-paper.png").stat().st_size > 10_000
    assert (out / "figures" / "figure7-beside-paper.png").stat().st_size > 10_000
    assert (out / "figures" / "figure5-beside-paper.png").stat().st_size > 10_000
    sps = report["figure7"]["sps_rules"]
    assert set(sps) == {"dag", "path", "any"}
    assert sps["path"]["2"][0] == pytest.approx(1.514, abs=5e-4) and sps["path"]["2"][2] == \
        "matches"
    assert report["figure7"]["sps_paper_rule"]["rule"] == "path"
    assert "Variants not run" in text and len(report["figure6_hypotheses"]) >= 9
    meta = json.loads((out / "maxflow" / "meta.json").read_text())
    assert meta["study"]["config"]["links"] == "multigraph"
    # resumable: a second run reuses every topology
    assert main(["reproduce", "--seeds", "1", "--no-variants", "--no-progress",
                 "--out", str(out)]) == 0


def test_greedy_is_compared_with_max_topology_by_topology():
    """A failed greedy row leaves its topology out; it once shifted every pair after it (hand:
    B and C reach max, A has no greedy value: 2 of 2)."""
    from tpcstudy.study.reproduce import _figure7

    rows = [{"topology": t, "method": "max", "mean_paths": v, "status": "ok"}
            for t, v in (("A", 2.0), ("B", 1.5), ("C", 1.5))]
    rows += [{"topology": "A", "method": "greedy", "mean_paths": "", "status": "failed"},
             {"topology": "B", "method": "greedy", "mean_paths": 1.5, "status": "ok"},
             {"topology": "C", "method": "greedy", "mean_paths": 1.5, "status": "ok"}]
    assert _figure7(rows)["greedy_reaches_max"] == [2, 2]
    rows[4]["mean_paths"] = 1.0  # B's greedy falls short
    assert _figure7(rows)["greedy_reaches_max"] == [1, 2]


def test_help_has_no_doubled_percent_and_promises_what_is_drawn(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert "%%" not in out and "1, 5 and 10 %" in out
    assert "Figures 5, 6 and 7 beside the paper's" in out and "tpcstudy show DIR" in out


def test_show_on_a_reproduce_folder_prints_the_verdicts(tmp_path, capsys):
    from tpcstudy.study.summary import plain

    from helpers import make_stats

    make_stats(tmp_path / "topologies.csv")
    (tmp_path / "report.json").write_text(json.dumps(plain(_report())))
    assert main(["show", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Figure 6  1 % N (values pooled) (x 10: 20 draws)" in out
    assert "differs by -3981" in out
    assert "Figure 7 sps [path]: k=1 1.000 (matches), k=2 1.514 (matches)" in out
    assert main(["show", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reproduce"]["figure7"]["sps_paper_rule"]["rule"] == "path"

"""tpcstudy.plotting: Figures 5-7 and the path-table figure from small synthetic result folders
and a small real run; files valid, axes labelled, the configuration and the paper's values on
the figure, the caller's axes honoured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tpcstudy
from tpcstudy.errors import UsageError
from tpcstudy.study import (
    DisjointConfig,
    MaxflowConfig,
    load_results,
    run_disjoint_study,
    run_maxflow_study,
)
from tpcstudy.study.stats import distributions, fill_degree_histograms, topo_stats

from helpers import (
    MAXFLOW_COLUMNS,
    assert_valid_figures,
    figure_texts,
    make_disjoint,
    make_maxflow,
    make_stats,
    study_meta,
    write_rows,
)

matplotlib = pytest.importorskip("matplotlib")

from tpcstudy import plotting  # noqa: E402  (needs matplotlib)


def test_maxflow_figure_of_a_demand_matrix_study(tmp_path: Path) -> None:
    """A REPETITA --demands auto run (ecmp, sr, mcf; every pair of one demand matrix): one
    panel, no heavy-hitter axis, no paper marks, no empty sr-over-multipath panel, points for
    a single topology, and the sr = mcf finding said in the legend."""
    import warnings

    rows = []
    for model, k, v in (("ecmp", 1, 1.0), ("sr", 4, 1.049), ("mcf", "", 1.049)):
        rows.append({"topology": "Abilene", "heavy": 100.0, "seed": 0, "model": model, "k": k,
                     "pairs": 132, "value": v, "improvement": round(100 * (v - 1), 6),
                     "improvement_over_multipath": "", "status": "ok"})
    folder = tmp_path / "rep"
    write_rows(folder / "results.csv", MAXFLOW_COLUMNS, rows)
    (folder / "meta.json").write_text(json.dumps(study_meta(
        {"topo": "repetita/inverse-capacity/Abilene", "capacity": "file", "weight": "file",
         "heavy": [100.0], "models": ["ecmp", "sr", "mcf"], "k": [4], "demands": "auto"},
        seeds=[0])))
    res = load_results(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "no artists with labels" included
        fig = plotting.plot_maxflow(res)
    assert len(fig.axes) == 1
    text = figure_texts(fig)
    for words in ("demand matrix", "(n = 1)", "every pair of the demand matrix",
                  "= sr k = 4 on every topology", "points: topologies", "1 topology;",
                  "(--demands auto)", "(a) sr, mcf over ecmp"):
        assert words in text, words
    for words in ("heavy hitters", "100 %", "paper", "% of ordered edge-router pairs",
                  "seed per fraction"):
        assert words not in text, words
    assert not fig.axes[0].patches  # no boxes: the points themselves
    points = [list(ln.get_ydata()) for ln in fig.axes[0].lines if ln.get_marker() == "o"]
    assert points == [[pytest.approx(4.9)], [pytest.approx(4.9)]]  # sr and mcf, one each
    line = tpcstudy.study.summary_line(res)
    assert line == "median improvement (k = 4): demand matrix: sr/ecmp 4.9"


def test_maxflow_figure(tmp_path: Path) -> None:
    mf = load_results(make_maxflow(tmp_path / "mf"))
    fig = plotting.plot_maxflow(mf)
    assert len(fig.axes) == 3  # 6a, 6b and sr by k (the study has k = 2, 4)
    text = figure_texts(fig)
    for words in ("Figure 6", "(a)", "(b)", "over single-path ECMP (%)", "over multipath (%)",
                  "heavy-hitter pairs (% of ordered edge-router pairs)", "1 %", "10 %",
                  "n = 3", "capacities uniform", "IGP weights hop", "heavy hitters 1, 10 %",
                  "2 seeds per fraction", "sr k = 4", "paper's median, sr (71.43 %, 30.43 %)",
                  "paper's median, sr over multipath (66.67 %, 25 %)", "Topology Zoo: 3 topologies",
                  "mcf", "multipath", "0123456"):
        assert words in text, words
    # the paper's exact medians (Figure 6's vector paths): 71.43 and 30.43 in 6a, 66.67 and 25
    # in 6b
    stars = [ln for a in fig.axes[:2] for ln in a.lines if ln.get_marker() == "*"]
    assert [list(ln.get_ydata()) for ln in stars] == [[71.43, 30.43], [66.67, 25.0]]
    files = plotting.save_figure(fig, tmp_path / "figs" / "fig6")
    assert [f.name for f in files] == ["fig6.png", "fig6.pdf"]
    assert_valid_figures(files)
    # no reference, one k, caller's axes
    fig2 = plotting.plot_maxflow(mf, panels=["sr_ecmp"], k=2, reference=False)
    assert "sr k = 2" in fig2.axes[0].get_title()
    assert not [ln for ln in fig2.axes[0].lines if ln.get_marker() == "*"]
    with pytest.raises(UsageError, match="k = 3"):
        plotting.plot_maxflow(mf, k=3)
    with pytest.raises(UsageError, match="unknown panel"):
        plotting.plot_maxflow(mf, panels=["nope"])


def test_disjoint_figure(tmp_path: Path) -> None:
    small = load_results(make_disjoint(tmp_path / "dj"))
    # two topologies: each shown (bars, mean paths by k), not CDFs of two values
    fig = plotting.plot_disjoint(small)
    text = figure_texts(fig)
    for words in ("(a) max vs greedy, per topology", "(b) sps by segment limit k, per topology",
                  "2 topologies: each shown", "segment limit k", "paper: greedy = max on 70 %"):
        assert words in text, words
    # the topologies with results (Tree, skipped: none)
    assert {t.get_text() for t in fig.axes[0].get_xticklabels()} == {"Alpha", "Beta"}
    assert_valid_figures(plotting.save_figure(fig, tmp_path / "fig7-small", formats=["png"]))
    # a study past SMALL_STUDY topologies: the paper's CDFs (the rows repeated under new names)
    dj = [dict(r, topology=f"{r['topology']}{i}") for i in range(4) for r in small]
    fig = plotting.plot_disjoint(dj)
    text = figure_texts(fig)
    for words in ("Figure 7", "(a) max vs greedy", "(b) sps", "CDF (share of topologies)",
                  "mean link-disjoint paths per edge-router pair", "greedy = max on 4 of 8",
                  "50.0 %", "paper: 70 %", "sps k = 3, mean 1.80", "max, mean 2.00"):
        assert words in text, words
    star = [ln for ln in fig.axes[2].lines if ln.get_marker() == "*"]
    assert list(star[0].get_ydata()) == [0.7]
    assert_valid_figures(plotting.save_figure(fig, tmp_path / "fig7", formats=["png"]))


def test_topology_figure(tmp_path: Path) -> None:
    st = load_results(make_stats(tmp_path / "stats.csv"))
    fig = plotting.plot_topologies(st)
    text = figure_texts(fig)
    for words in ("Figure 5", "4 of 5", "routers per topology after pruning (count",
                  "links per topology after pruning", "CDF (share of topologies)",
                  "router degree", "median 12", "no degree histograms"):
        assert words in text, words
    # degree shares from histograms: 2 nodes of degree 2, 1 of degree 3, 1 of degree 9 (>= 8)
    recs = [{"name": "A", "pruned_nodes": 4, "pruned_links": 5,
             "degree_histogram": [0, 0, 2, 1, 0, 0, 0, 0, 0, 1]}]
    d = distributions(recs)
    assert d["degree_shares"][2] == [50.0] and d["degree_shares"][8] == [25.0]
    own = matplotlib.figure.Figure()
    ax = own.subplots()
    assert plotting.plot_topologies(recs, ax, panels=["degree"]) is own
    assert "degree" in ax.get_title() and "%" in ax.get_ylabel()
    with pytest.raises(UsageError, match="2 axes given"):
        plotting.plot_topologies(recs, list(own.subplots(1, 2)))


NAMES = ["zoo/Abilene", "zoo/Aarnet", "zoo/Nsfnet"]


@pytest.mark.slow
def test_real_run(tmp_path: Path, zoo_installed: Path) -> None:
    stats = topo_stats(NAMES)
    assert [r["name"] for r in stats] == ["Abilene", "Aarnet", "Nsfnet"]
    fig = plotting.plot_topologies(stats)
    assert "3 of 3" in figure_texts(fig) and "(3 topologies)" in figure_texts(fig)
    run_maxflow_study(NAMES, tmp_path / "mf", MaxflowConfig(heavy=(5, 10), ks=(2, 4)),
                      progress=False)
    run_disjoint_study(NAMES, tmp_path / "dj", DisjointConfig(ks=(1, 2, 3, 4)), progress=False)
    res = load_results(tmp_path / "mf")
    assert res.kind == "maxflow"  # from meta.json
    text = figure_texts(plotting.plot_maxflow(res))
    assert "3 topologies" in text and "sr k = 4 (study: k = 2, 4)" in text
    name, fig7 = plotting.plot_results(load_results(tmp_path / "dj"))
    assert name == "fig7-disjoint" and "Figure 7" in figure_texts(fig7)
    # a stats CSV has no degree histograms: they come back from the files in its source column
    tpcstudy.io.write_csv(tmp_path / "stats.csv", list(stats),
                          tpcstudy.study.stats.STATS_COLUMNS)
    st = load_results(tmp_path / "stats.csv")
    assert "degree_histogram" not in st[0] and distributions(st)["with_histogram"] == 0
    assert fill_degree_histograms(st) == 0
    assert "(3 topologies)" in plotting.plot_topologies(st).axes[2].get_title()
    # what the hosts are given: a path table
    table = tpcstudy.path_table(tpcstudy.read_topology("zoo/Abilene"), k=4, paths=5)
    text = figure_texts(plotting.plot_path_table(table))
    for words in ("Abilene (20 map entries; sps k = 4, at most 5 paths)", "mean 1.80",
                  "segments in the SRH (count)", "default path (slot 0), n = 20", "backup"):
        assert words in text, words
    rows = [dict(r, topology="Abilene") for r in table.to_rows()]
    assert "20 map entries" in figure_texts(plotting.plot_path_table(rows))


def test_captions_and_file_names_name_the_inputs(tmp_path: Path) -> None:
    from tpcstudy.plotting.common import source_name
    from tpcstudy.study.store import Results

    def named(topo: object) -> str:
        return source_name(Results([], "topo", {"study": {"config": {"topo": topo}}}))

    assert named("zoo") == "Topology Zoo"
    assert named("zoo/Abilene,zoo/Aarnet") == "Topology Zoo Abilene, Aarnet"
    assert named(["zoo/A", "zoo/B", "zoo/C", "zoo/D"]) == "Topology Zoo A, B and 2 more"
    assert named("repetita/inverse-capacity/Abilene") == "REPETITA Abilene"
    assert named("/data/mine/net.gml,/data/other.graphml") == "net.gml, other.graphml"
    recs = topo_stats(["zoo/Abilene", "zoo/Aarnet", "zoo/Ai3"])
    fig = plotting.plot_topologies(recs)
    text = figure_texts(fig)
    assert "Figure 5: 2 of 3 topologies non-empty after pruning" in text
    assert "Topology Zoo Abilene, Aarnet, Ai3;" in text and "specs" not in text
    # two maxflow folders: fig6-maxflow-zoo and fig6-maxflow-two, not fig6-maxflow-maxflow-zoo
    for name in ("maxflow-zoo", "maxflow-two"):
        make_maxflow(tmp_path / name)
    assert tpcstudy.cli.main(["plot", str(tmp_path / "maxflow-zoo"), str(tmp_path / "maxflow-two"),
                              "--out", str(tmp_path / "figs"), "--format", "png"]) == 0
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "fig6-maxflow-two.png", "fig6-maxflow-zoo.png"]
    # never two inputs on one file: maxflow-zoo and zoo both shorten to fig6-maxflow-zoo
    make_maxflow(tmp_path / "zoo")
    assert tpcstudy.cli.main(["plot", str(tmp_path / "maxflow-zoo"), str(tmp_path / "zoo"),
                              str(tmp_path / "zoo"), "--out", str(tmp_path / "figs2"),
                              "--format", "png"]) == 0
    assert sorted(p.name for p in (tmp_path / "figs2").iterdir()) == [
        "fig6-maxflow-zoo-2.png", "fig6-maxflow-zoo-3.png", "fig6-maxflow-zoo.png"]


def test_whole_zoo_throughput_and_calibration_figures(tmp_path: Path) -> None:
    """From 13 measured draws on, the throughput figure is the whole-Zoo one (data shares, SR's
    gain against the LP's, Figure 6 from TCP) with the numbers in its legends; the calibration
    figure draws the points and the fitted cost."""
    from tpcstudy.emulate.experiments.budget import Calibration, machine

    rows = []
    for i in range(14):
        base = {"scenario": f"T{i}", "heavy": 10.0, "seed": 0, "status": "ok",
                "link_mbps": 10.0 if i < 10 else 0.5}
        rows.append(dict(base, model="ecmp", lp_value=4.0,
                         data_share=1.2 if i == 0 else 0.95 if i < 9 else 0.8))
        rows.append(dict(base, model="sr", data_share=0.93, lp_value=5.0,
                         lp_gain=1.0 + 0.1 * i, measured_gain=1.0 + 0.09 * i))
    fig = plotting.plot_throughput(rows)
    texts = figure_texts(fig)
    assert "Figure 6 measured with real TCP" in texts and "14 topologies" in texts
    assert "ecmp: 64% of 14 at >= 0.9" in texts and "sr: 100% of 14 at >= 0.9" in texts
    assert "LP: median 65.0 %" in texts and "TCP: median 58.5 %" in texts
    assert "link rates 0.5-10 Mbit/s" in texts
    assert fig.axes[0].get_xlim()[1] >= 1.2  # ecmp's hashing beating its LP stays in view
    assert_valid_figures(plotting.save_figure(fig, tmp_path / "zoo"))
    cal = Calibration(2e-5, 0.03, 2, 1500, machine(),
                      ((5.0, 2000.0, 0.07), (10.0, 4000.0, 0.11), (20.0, 8000.0, 0.19)))
    fig = plotting.plot_calibration(cal)
    texts = figure_texts(fig)
    assert "fit on a chain of 5 routers: 50.0k packets/s per CPU, 3% idle load" in texts
    assert "20 Mbit/s" in texts
    x, y = fig.axes[0].lines[0].get_data()  # busy = idle + packets/s x cost / CPUs, x in k
    assert y == pytest.approx(0.03 + x * 1e3 * 2e-5 / 2)  # once x packets_per_data too
    assert_valid_figures(plotting.save_figure(fig, tmp_path / "cal"))

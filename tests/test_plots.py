"""tpcstudy.plots and ``tpcstudy plot``: figures from small synthetic result folders and a small
real run; files valid, axes labelled, the configuration and seed 000's values on the figure."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest

pytest.importorskip("matplotlib")

from tpcstudy import plots  # noqa: E402
from tpcstudy.cli import main  # noqa: E402
from tpcstudy.errors import UsageError  # noqa: E402
from tpcstudy.maxflow_study import COLUMNS as MF_COLUMNS  # noqa: E402
from tpcstudy.stats import STATS_COLUMNS  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- synthetic data
def _write_csv(path: Path, columns: Sequence[str], rows: List[Dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})


def _meta(config: Dict[str, Any], seeds: Any = None) -> Dict[str, Any]:
    return {"study": {"config": config, "seeds": seeds, "solver": "highs"},
            "tpcstudy": "0.1.0", "git_commit": "0123456789abcdef"}


def make_maxflow(folder: Path, *, meta: bool = True) -> Path:
    """3 topologies x heavy 1, 10 x 2 seeds; ecmp 1, multipath 1.1, sr 1.5/1.6 (k 2/4), mcf 2."""
    rows = []
    for t, scale in (("Alpha", 1.0), ("Beta", 0.5), ("Gamma", 0.2)):
        for heavy in (1.0, 10.0):
            for seed in (0, 1):
                vals = {("ecmp", 1): 1.0, ("multipath", ""): 1 + 0.1 * scale,
                        ("sr", 2): 1 + 0.5 * scale, ("sr", 4): 1 + 0.6 * scale,
                        ("mcf", ""): 1 + 1.0 * scale}
                for (model, k), v in vals.items():
                    rows.append({"topology": t, "heavy": heavy, "seed": seed, "model": model,
                                 "k": k, "pairs": 3, "value": v,
                                 "improvement": round(100 * (v - 1), 6),
                                 "improvement_over_multipath":
                                     round(100 * (v / (1 + 0.1 * scale) - 1), 6)
                                     if model == "sr" else "",
                                 "status": "ok"})
    rows.append({"topology": "Tree", "heavy": 1.0, "seed": 0, "model": "ecmp", "k": 1,
                 "pairs": 0, "status": "skipped", "error": "fewer than 2 edge routers"})
    _write_csv(folder / "results.csv", MF_COLUMNS, rows)
    if meta:
        (folder / "meta.json").write_text(json.dumps(_meta(
            {"topo": "zoo", "capacity": "uniform", "weight": "hop", "heavy": [1.0, 10.0],
             "models": ["ecmp", "multipath", "sr", "mcf"], "k": [2, 4], "demands": None},
            seeds=[0, 1])))
    return folder


DJ_COLUMNS = ["topology", "method", "k", "nodes", "links", "edge_routers", "pairs",
              "mean_paths", "min_paths", "max_paths", "survive_share", "overlap_share",
              "backup_share", "seconds", "status", "error"]


def make_disjoint(folder: Path) -> Path:
    """Alpha: greedy = max = 2; Beta: greedy 1.5 < max 2; sps grows with k."""
    rows = []
    for t, mx, gr in (("Alpha", 2.0, 2.0), ("Beta", 2.0, 1.5)):
        rows.append({"topology": t, "method": "max", "mean_paths": mx, "status": "ok"})
        rows.append({"topology": t, "method": "greedy", "mean_paths": gr, "status": "ok"})
        for k in (1, 2, 3):
            rows.append({"topology": t, "method": "sps", "k": k,
                         "mean_paths": min(1 + 0.4 * (k - 1), mx), "status": "ok"})
        rows.append({"topology": t, "method": "failure", "k": 4, "mean_paths": 1.5,
                     "status": "ok"})
    rows.append({"topology": "Tree", "method": "", "status": "skipped", "error": "tree"})
    _write_csv(folder / "results.csv", DJ_COLUMNS, rows)
    (folder / "meta.json").write_text(json.dumps(_meta(
        {"study": "disjoint", "topo": "zoo", "capacity_rule": "uniform", "weight_rule": "hop",
         "pairs": "edge", "k": [1, 2, 3]})))
    return folder


def make_stats(path: Path) -> Path:
    rows = [{"name": f"T{i}", "source": "", "nodes": 5 + i, "links": 6 + i, "pruned_nodes": n,
             "pruned_links": n + 2, "edge_routers": 2} for i, n in enumerate((0, 4, 8, 16, 30))]
    _write_csv(path, STATS_COLUMNS, rows)
    return path


def _texts(fig: Any) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    parts.append(fig._supxlabel.get_text() if fig._supxlabel else "")
    for a in fig.axes:
        parts += [a.get_title(), a.get_xlabel(), a.get_ylabel()]
        parts += [t.get_text() for t in a.get_xticklabels()]
        parts += [t.get_text() for t in a.texts]
        leg = a.get_legend()
        if leg:
            parts += [t.get_text() for t in leg.get_texts()]
    return "\n".join(parts)


def _valid(paths: Sequence[Path]) -> None:
    for p in paths:
        data = Path(p).read_bytes()
        assert len(data) > 1000
        if str(p).endswith(".png"):
            assert data.startswith(PNG)
        else:
            assert data.startswith(b"%PDF") and b"%%EOF" in data[-64:]


# --------------------------------------------------------------------------- loading
def test_load_detects_kinds(tmp_path: Path) -> None:
    mf = plots.load_results(make_maxflow(tmp_path / "mf"))
    dj = plots.load_results(make_disjoint(tmp_path / "dj"))
    st = plots.load_results(make_stats(tmp_path / "stats.csv"))
    assert (mf.kind, dj.kind, st.kind) == ("maxflow", "disjoint", "topo")
    assert mf.config["capacity"] == "uniform" and mf.seeds == [0, 1] and mf.label == "mf"
    r = next(x for x in mf if x["model"] == "multipath")
    assert r["k"] is None and isinstance(r["heavy"], float) and r["topology"] == "Alpha"
    # the same files without meta.json: told apart by their columns; results.csv directly too
    bare = make_maxflow(tmp_path / "bare", meta=False)
    assert plots.load_results(bare).kind == "maxflow"
    assert plots.load_results(bare / "results.csv").kind == "maxflow"
    assert plots.load_results(tmp_path / "dj" / "meta.json").kind == "disjoint"
    # a folder holding one stats file
    make_stats(tmp_path / "statsdir" / "zoo.csv")
    assert plots.load_results(tmp_path / "statsdir").kind == "topo"


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        plots.load_results(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a result folder"):
        plots.load_results(tmp_path / "empty")
    (tmp_path / "running").mkdir()
    (tmp_path / "running" / "meta.json").write_text("{}")
    with pytest.raises(UsageError, match="no results.csv"):
        plots.load_results(tmp_path / "running")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(UsageError, match="not a tpcstudy result"):
        plots.load_results(tmp_path / "other.csv")
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match="topo stats"):
        plots.load_results(tmp_path / "x.json")


def test_tables(tmp_path: Path) -> None:
    mf = plots.load_results(make_maxflow(tmp_path / "mf"))
    t = plots.maxflow_table(mf)  # k defaults to 4; seeds averaged per topology
    assert t[("sr", 1.0)] == pytest.approx({"Alpha": 60.0, "Beta": 30.0, "Gamma": 12.0})
    assert t[("sr k=2", 10.0)]["Alpha"] == pytest.approx(50.0)
    assert t[("mcf", 1.0)]["Beta"] == pytest.approx(50.0)
    assert t[("sr/multipath", 1.0)]["Alpha"] == pytest.approx(100 * (1.6 / 1.1 - 1), rel=1e-6)
    assert "Tree" not in t[("sr", 1.0)]
    assert plots.maxflow_table(mf, k=2)[("sr", 1.0)]["Alpha"] == pytest.approx(50.0)
    d = plots.disjoint_table(plots.load_results(make_disjoint(tmp_path / "dj")))
    assert d["max"] == {"Alpha": 2.0, "Beta": 2.0} and d["sps k=3"]["Alpha"] == 1.8
    assert "failure" not in d
    assert plots.greedy_reaches_max(d) == (1, 2)


# --------------------------------------------------------------------------- figures
def test_maxflow_figure(tmp_path: Path) -> None:
    mf = plots.load_results(make_maxflow(tmp_path / "mf"))
    fig = plots.plot_maxflow(mf)
    assert len(fig.axes) == 3  # 6a, 6b and sr by k (the study has k = 2, 4)
    text = _texts(fig)
    for words in ("Figure 6", "(a)", "(b)", "over single-path ECMP (%)", "over multipath (%)",
                  "heavy-hitter pairs (% of ordered edge-router pairs)", "1 %", "10 %",
                  "n = 3", "capacities uniform", "IGP weights hop", "heavy hitters 1, 10 %",
                  "2 seeds per fraction", "sr k = 4", "seed 000", "Topology Zoo: 3 topologies",
                  "mcf", "multipath", "0123456"):
        assert words in text, words
    # seed 000's medians: stars at 71 (1 %) and 30 (10 %) in 6a, 66 and 25 in 6b
    stars = [ln for a in fig.axes[:2] for ln in a.lines if ln.get_marker() == "*"]
    assert [list(ln.get_ydata()) for ln in stars] == [[71.0, 30.0], [66.0, 25.0]]
    files = plots.save_figure(fig, tmp_path / "figs" / "fig6")
    assert [f.name for f in files] == ["fig6.png", "fig6.pdf"]
    _valid(files)
    # no reference, one k, caller's axes
    fig2 = plots.plot_maxflow(mf, panels=["sr_ecmp"], k=2, reference=False)
    assert "sr k = 2" in fig2.axes[0].get_title()
    assert not [ln for ln in fig2.axes[0].lines if ln.get_marker() == "*"]
    with pytest.raises(UsageError, match="k = 3"):
        plots.plot_maxflow(mf, k=3)
    with pytest.raises(UsageError, match="unknown panel"):
        plots.plot_maxflow(mf, panels=["nope"])


def test_disjoint_figure(tmp_path: Path) -> None:
    dj = plots.load_results(make_disjoint(tmp_path / "dj"))
    fig = plots.plot_disjoint(dj)
    text = _texts(fig)
    for words in ("Figure 7", "(a) max vs greedy", "(b) sps", "CDF (share of topologies)",
                  "mean link-disjoint paths per edge-router pair", "greedy = max on 1 of 2",
                  "50.0 %", "seed 000: 70 %", "sps k = 3, mean 1.80", "max, mean 2.00",
                  "sps k = 1, 2, 3", "pairs: edge routers"):
        assert words in text, words
    star = [ln for ln in fig.axes[2].lines if ln.get_marker() == "*"]
    assert list(star[0].get_ydata()) == [0.7]
    _valid(plots.save_figure(fig, tmp_path / "fig7", formats=["png"]))


def test_topology_figure(tmp_path: Path) -> None:
    st = plots.load_results(make_stats(tmp_path / "stats.csv"))
    fig = plots.plot_topologies(st)
    text = _texts(fig)
    for words in ("Figure 5", "4 of 5", "routers per topology after pruning (count",
                  "links per topology after pruning", "CDF (share of topologies)",
                  "router degree", "median 12", "no degree histograms"):
        assert words in text, words
    # degree shares from histograms: 2 nodes of degree 2, 1 of degree 3, 1 of degree 9 (>= 8)
    recs = [{"name": "A", "pruned_nodes": 4, "pruned_links": 5,
             "degree_histogram": [0, 0, 2, 1, 0, 0, 0, 0, 0, 1]}]
    t = plots.topology_table(recs)
    assert t["degree_shares"][2] == [50.0] and t["degree_shares"][8] == [25.0]
    import matplotlib.figure

    own = matplotlib.figure.Figure()
    ax = own.subplots()
    assert plots.plot_topologies(recs, ax, panels=["degree"]) is own
    assert "degree" in ax.get_title() and "%" in ax.get_ylabel()


# --------------------------------------------------------------------------- CLI
def test_cli_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mf = make_maxflow(tmp_path / "mf")
    mf2 = make_maxflow(tmp_path / "mf2")
    dj = make_disjoint(tmp_path / "dj")
    st = make_stats(tmp_path / "stats.csv")
    out = tmp_path / "figs"
    assert main(["plot", str(mf), str(mf2), str(dj), str(st), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"{n}.{e}" for n in ("fig5-topologies", "fig6-maxflow-mf",
                                                 "fig6-maxflow-mf2", "fig7-disjoint")
                           for e in ("png", "pdf"))
    _valid(sorted(out.iterdir()))
    printed = capsys.readouterr().out
    assert "median improvement (k = 4)" in printed and "seed 000: 71" in printed
    assert "greedy = max on 1/2" in printed
    assert main(["plot", str(mf), "--out", str(out), "--k", "2", "--format", "svg"]) == 0
    assert (out / "fig6-maxflow.svg").exists()
    # errors name the bad folder, exit code 2
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "not a result folder" in capsys.readouterr().err
    assert main(["plot", "--out", str(out)]) == 2
    assert "nothing to plot" in capsys.readouterr().err


# --------------------------------------------------------------------------- a small real run
NAMES = ["zoo/Abilene", "zoo/Aarnet", "zoo/Nsfnet"]


def test_real_run(tmp_path: Path, zoo_installed: Path) -> None:
    stats = plots.topo_stats(NAMES)
    assert [r["name"] for r in stats] == ["Abilene", "Aarnet", "Nsfnet"]
    fig = plots.plot_topologies(stats)
    assert "3 of 3" in _texts(fig) and "(3 topologies)" in _texts(fig)
    spec = plots.collect_topologies(NAMES, tmp_path / "topos")
    mf, dj, out = tmp_path / "mf", tmp_path / "dj", tmp_path / "figs"
    assert main(["maxflow", "--topo", spec, "--heavy", "5,10", "--k", "2,4",
                 "--out", str(mf), "--no-progress"]) == 0
    assert main(["disjoint", "--topo", spec, "--k", "1-4", "--out", str(dj),
                 "--no-progress"]) == 0
    assert main(["topo", "stats", "--topo", spec, "--out", str(tmp_path / "stats.csv"),
                 "--no-progress"]) == 0
    assert main(["plot", str(mf), str(dj), str(tmp_path / "stats.csv"), "--out", str(out)]) == 0
    assert len(list(out.glob("*.png"))) == 3 and len(list(out.glob("*.pdf"))) == 3
    res = plots.load_results(mf)
    text = _texts(plots.plot_maxflow(res))
    assert "topos: 3 topologies" in text and "sr k = 4 (study: k = 2, 4)" in text
    # the CSV has no degree histograms: they come back from the files in its source column
    st = plots.load_results(tmp_path / "stats.csv")
    assert "degree_histogram" not in st[0]
    t = plots.topology_table([dict(r) for r in st])
    assert t["with_histogram"] == 0
    fig5 = plots.plot_topologies(st)
    assert "(3 topologies)" in fig5.axes[2].get_title()
    # what the hosts are given: a path table
    import tpcstudy

    table = tpcstudy.path_table(tpcstudy.read_topology("zoo/Abilene"), k=4, paths=5)
    fig = plots.plot_path_table(table)
    text = _texts(fig)
    for words in ("Abilene (20 map entries; sps k = 4, at most 5 paths)", "mean 1.80",
                  "segments in the SRH (count)", "default path (slot 0), n = 20", "backup"):
        assert words in text, words
    rows = [dict(r, topology="Abilene") for r in table.to_rows()]
    assert "20 map entries" in _texts(plots.plot_path_table(rows))
    # --topo computes the statistics on the fly
    assert main(["plot", "--topo", "zoo/Abilene", "--out", str(tmp_path / "f2")]) == 0
    assert (tmp_path / "f2" / "fig5-topologies.png").exists()

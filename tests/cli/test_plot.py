"""``tpcstudy plot``: figures from synthetic result folders and from a small real run, the
summary line under each, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpcstudy.cli import main

from helpers import assert_valid_figures, make_disjoint, make_maxflow, make_stats

pytest.importorskip("matplotlib")


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
    assert_valid_figures(sorted(out.iterdir()))
    printed = capsys.readouterr().out
    assert "median improvement (k = 4)" in printed and "(paper: 71)" in printed
    assert "greedy = max on 1/2" in printed
    assert main(["plot", str(mf), "--out", str(out), "--k", "2", "--format", "svg"]) == 0
    assert (out / "fig6-maxflow.svg").exists()
    # errors name the bad folder, exit code 2
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty"), "--out", str(out)]) == 1  # not a result
    assert "not a result folder" in capsys.readouterr().err
    assert main(["plot", "--out", str(out)]) == 2
    assert "nothing to plot" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_plot_real_runs(tmp_path: Path, zoo_installed: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    topos = tmp_path / "topos"
    topos.mkdir()
    for name in ("Abilene", "Aarnet", "Nsfnet"):
        (topos / f"{name}.gml").write_bytes((zoo_installed / f"{name}.gml").read_bytes())
    mf, dj, out = tmp_path / "mf", tmp_path / "dj", tmp_path / "figs"
    assert main(["maxflow", "--topo", str(topos), "--heavy", "5,10", "--k", "2,4",
                 "--out", str(mf), "--no-progress"]) == 0
    assert main(["disjoint", "--topo", str(topos), "--k", "1-4", "--out", str(dj),
                 "--no-progress"]) == 0
    assert main(["topo", "stats", "--topo", str(topos), "--out", str(tmp_path / "stats.csv"),
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["plot", str(mf), str(dj), str(tmp_path / "stats.csv"), "--out", str(out)]) == 0
    assert len(list(out.glob("*.png"))) == 3 and len(list(out.glob("*.pdf"))) == 3
    assert "3 of 3 topologies non-empty after pruning" in capsys.readouterr().out
    # --topo computes the statistics on the fly
    assert main(["plot", "--topo", "zoo/Abilene", "--out", str(tmp_path / "f2")]) == 0
    assert (tmp_path / "f2" / "fig5-topologies.png").exists()

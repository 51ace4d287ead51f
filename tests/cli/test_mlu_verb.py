"""``tpcstudy mlu`` (its own verb), several topologies on one command line, and the default
``--out`` folder."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tpcstudy import read_topology
from tpcstudy.cli import main
from tpcstudy.cli.options import out_slug, split_topo
from tpcstudy.io import read_demands
from tpcstudy.models.demands import demand_matrix
from tpcstudy.models.mlu import min_mlu


def _rows(folder: Path):
    return list(csv.DictReader((folder / "results.csv").read_text().splitlines()))


def test_mlu_verb_zoo_gravity_and_repetita_file(zoo_installed: Path, repetita: Path,
                                                 tmp_path: Path, capsys):
    src = repetita / "2016TopologyZooUCL_inverseCapacity"
    out = tmp_path / "mlu"
    # a Zoo .gml (no matrix: gravity on uniform / hop) and a REPETITA .graph (its own matrix in
    # the file's units) in one command: repeated --topo, each keeps its own matrix
    assert main(["mlu", "--topo", str(zoo_installed / "Abilene.gml"), "--topo",
                 str(src / "Sprint.graph"), "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "matrix: a gravity matrix drawn" in printed and "the .demands file beside" in printed
    rows = _rows(out)
    assert {r["matrix"] for r in rows} == {"gravity", "Sprint.0000.demands"}
    assert len(rows) == 2 * 3 and all(r["status"] == "ok" for r in rows)
    # one line per instance and model: two topologies, three models
    assert sum(1 for line in printed.splitlines()
               if line.startswith(("Abilene ", "Sprint ")) and line.endswith(" ok")) == 6
    by = {(r["matrix"], r["model"]): float(r["mlu"]) for r in rows}
    assert by[("gravity", "ecmp")] == pytest.approx(1.0)  # scaled so that ECMP's MLU is 1
    # the gravity row against the API on the same rules (uniform capacities, hop weights)
    t = read_topology(zoo_installed / "Abilene.gml")
    S, T, V = demand_matrix(t, "gravity", 0)
    assert by[("gravity", "mcf")] == pytest.approx(
        min_mlu(t, list(zip(S.tolist(), T.tolist(), V.tolist())), model="mcf").mlu, rel=1e-7)
    f = read_topology(src / "Sprint.graph", capacity="file", weight="file")
    for model in ("ecmp", "sr"):
        assert by[("Sprint.0000.demands", model)] == pytest.approx(
            min_mlu(f, read_demands(src / "Sprint.0000.demands", f), model=model, k=4).mlu,
            rel=1e-7)


def test_mlu_verb_refuses_maxflow_options(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["mlu", "--topo", "x.gml", "--heavy", "1"])
    assert exc.value.code == 2 and "unrecognized arguments: --heavy" in capsys.readouterr().err


def test_several_topologies_never_drop_one(repetita: Path, tmp_path: Path, monkeypatch, capsys):
    src = repetita / "2016TopologyZooUCL_inverseCapacity"
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("Abilene", "Sprint"):
        shutil.copy(src / f"{name}.graph", folder / f"{name}.graph")
    a, b = str(folder / "Abilene.graph"), str(folder / "Sprint.graph")
    monkeypatch.chdir(tmp_path)
    for argv in (["--topo", a, "--topo", b], ["--topo", f"{a},{b}"]):
        assert main(["maxflow", *argv, "--heavy", "5", "--models", "ecmp,sr",
                     "--no-progress"]) == 0
        captured = capsys.readouterr()
        # no --out: results/maxflow-<names>, said on standard error
        assert "results go to results/maxflow-Abilene.graph+Sprint.graph" in captured.err
        assert {r["topology"] for r in _rows(tmp_path / "results" /
                                             "maxflow-Abilene.graph+Sprint.graph")} \
            == {"Abilene", "Sprint"}
        lines = [x for x in captured.out.splitlines() if x.startswith(("Abilene ", "Sprint "))]
        assert len(lines) == 4 and all(x.endswith("ok") for x in lines)
    # a command of one topology refuses a second rather than dropping the first
    with pytest.raises(SystemExit):
        main(["emulate", "up", "--topo", a, "--topo", b])
    assert "takes one topology; got" in capsys.readouterr().err


def test_split_and_slug(tmp_path: Path):
    assert split_topo("zoo/Abilene, zoo/Geant2012") == ["zoo/Abilene", "zoo/Geant2012"]
    odd = tmp_path / "a,b.gml"
    odd.write_text("")
    assert split_topo(str(odd)) == [str(odd)]  # an existing file with a comma is one
    assert out_slug("zoo/Abilene") == "zoo-Abilene"
    assert out_slug(["zoo/Abilene", "repetita/unary/Sprint"]) == "Abilene+Sprint"
    assert out_slug([f"zoo/T{i:03d}" for i in range(20)]) == "20-topologies"


def test_disjoint_prints_one_line_per_topology(repetita: Path, tmp_path: Path, capsys):
    src = repetita / "2016TopologyZooUCL_inverseCapacity"
    assert main(["disjoint", "--topo", f"{src / 'Abilene.graph'},{src / 'Sprint.graph'}",
                 "--k", "1,4", "--no-progress", "--out", str(tmp_path / "dj")]) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(x for x in out if x.startswith("topology"))
    assert head.split()[:6] == ["topology", "pairs", "max", "greedy", "k=1", "k=4"]
    lines = [x for x in out if x.startswith(("Abilene ", "Sprint "))]
    assert len(lines) == 2 and all(x.endswith(" ok") for x in lines)
    rows = _rows(tmp_path / "dj")
    ab = {r["method"] + r["k"]: float(r["mean_paths"]) for r in rows if r["topology"] == "Abilene"}
    assert lines[0].split()[2:6] == [f"{ab[m]:.3f}" for m in ("max", "greedy", "sps1", "sps4")]

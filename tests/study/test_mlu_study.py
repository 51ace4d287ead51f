"""The traffic-engineering study (``tpcstudy maxflow --objective mlu``), the drawn demand
matrices and the TE export (``export --select mlu``): matrices by hand, the study's rows against
the API, its summary by hand, the export's slots and weights against the LP."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.cli import main
from tpcstudy.errors import UsageError
from tpcstudy.export.select import path_table
from tpcstudy.io import read_demands
from tpcstudy.models.demands import demand_matrix
from tpcstudy.models.mlu import min_mlu
from tpcstudy.study.mlu import MLUConfig, summarize


def _path_graph():
    """a - b - c, capacities 1 and 3."""
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1.0)
    g.add_edge("b", "c", capacity=3.0)
    return read_topology(g, capacity="file")


def test_drawn_matrices_by_hand():
    t = _path_graph()
    # uniform: 6 ordered pairs of 1; ECMP (one path each) loads a->b with a->b and a->c: 2 on a
    # link of 1, the most utilised, so every volume is scaled by 1/2
    S, T, V = demand_matrix(t, "uniform")
    assert len(S) == 6 and V == pytest.approx([0.5] * 6)
    assert min_mlu(t, list(zip(S, T, V)), model="ecmp").mlu == pytest.approx(1.0)
    # gravity: masses = total link capacity (a 1, b 4, c 3) x exp(N(0, 0.5)) drawn with the seed
    S, T, V = demand_matrix(t, "gravity", seed=5)
    noise = np.exp(np.random.default_rng(5).normal(0.0, 0.5, 3))
    m = np.array([1.0, 4.0, 3.0]) * noise
    raw = m[S] * m[T]
    assert V / V.sum() == pytest.approx(raw / raw.sum())
    assert min_mlu(t, list(zip(S, T, V)), model="ecmp").mlu == pytest.approx(1.0)
    assert not np.allclose(V, demand_matrix(t, "gravity", seed=6)[2])
    g = nx.Graph([("a", "b"), ("c", "d")])
    with pytest.raises(UsageError, match="cannot route"):
        demand_matrix(read_topology(g), "uniform")


def test_config_refusals():
    with pytest.raises(UsageError, match="model 'mptcp'"):
        MLUConfig(models=("mptcp",))
    assert MLUConfig(models=("sr-unsplit",)).models == ("ecmp", "sr", "sr-unsplit")
    # auto keeps the seeds (a topology without a file draws a gravity matrix per seed; one with
    # a file uses its matrix once, run_topology); a named file: one matrix
    assert MLUConfig(demands="auto", seeds=(0, 1, 2)).seeds == (0, 1, 2)
    assert MLUConfig(demands="gravity", seeds=(0, 1)).seeds == (0, 1)


def test_summary_by_hand():
    rows = []
    for topo, e, s, m in (("A", 2.0, 1.0, 1.0), ("B", 1.0, 0.9, 0.8), ("C", 4.0, 2.0, 2.0)):
        base = {"topology": topo, "seed": 0, "status": "ok"}
        rows += [dict(base, model="ecmp", k="", mlu=e, reduction=0.0),
                 dict(base, model="sr", k=2, mlu=s, reduction=100 * (1 - s / e)),
                 dict(base, model="mcf", k="", mlu=m, reduction=100 * (1 - m / e))]
    by = {s["series"]: s for s in summarize(rows)}
    assert [s["series"] for s in summarize(rows)] == ["ecmp", "sr k=2", "mcf"]
    assert by["sr k=2"]["reduction_median"] == pytest.approx(50.0)  # 50, 10, 50
    assert by["sr k=2"]["reaches_mcf"] == 2 and by["mcf"]["mlu_median"] == pytest.approx(1.0)


def test_study_on_repetita_end_to_end(repetita: Path, tmp_path: Path, capsys):
    src = repetita / "2016TopologyZooUCL_inverseCapacity"
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("Abilene", "Sprint"):
        for f in (f"{name}.graph", f"{name}.0000.demands"):
            shutil.copy(src / f, folder / f)
    out = tmp_path / "mlu"
    argv = ["maxflow", "--objective", "mlu", "--topo", str(folder), "--capacity", "file",
            "--weight", "file", "--links", "multigraph", "--models",
            "ecmp,multipath,sr,sr-unsplit,mcf", "--k", "2,4", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "sr-unsplit k=2" in printed and "gap to the LP's MLU" in printed
    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    assert len(rows) == 2 * 7 and all(r["status"] == "ok" for r in rows)
    got = {(r["topology"], r["model"], r["k"]): r for r in rows}
    t = read_topology(folder / "Abilene.graph", capacity="file", weight="file",
                      links="multigraph")
    dem = read_demands(folder / "Abilene.0000.demands", t)
    assert float(got[("Abilene", "ecmp", "")]["mlu"]) == pytest.approx(1.2770134819878471)
    assert float(got[("Abilene", "sr", "2")]["mlu"]) == pytest.approx(
        min_mlu(t, dem, model="sr", k=2).mlu, rel=1e-9)
    for name in ("Abilene", "Sprint"):
        e = float(got[(name, "ecmp", "")]["mlu"])
        for k in ("2", "4"):
            sr, un = got[(name, "sr", k)], got[(name, "sr-unsplit", k)]
            assert float(sr["reduction"]) == pytest.approx(100 * (1 - float(sr["mlu"]) / e))
            assert float(un["lp_mlu"]) == pytest.approx(float(sr["mlu"]))
            assert 0 <= float(un["gap"]) < 0.05
        assert float(got[(name, "mcf", "")]["mlu"]) <= float(got[(name, "sr", "4")]["mlu"]) \
            * (1 + 1e-9) <= float(got[(name, "sr", "2")]["mlu"]) * (1 + 2e-9)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["study"]["kind"] == "mlu" and meta["study"]["config"]["links"] == "multigraph"
    # resumes; show and plot read it
    assert main(argv) == 0 and "2 reused" in capsys.readouterr().out
    assert main(["show", str(out)]) == 0 and "sr k=4" in capsys.readouterr().out
    assert main(["plot", str(out), "--out", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig" / "mlu.png").stat().st_size > 10_000
    assert main(["maxflow", "--objective", "mlu", "--topo", str(folder), "--heavy", "1",
                 "--out", str(tmp_path / "x")]) != 0
    assert "--heavy is not an option of --objective mlu" in capsys.readouterr().err
    # a file matrix is in the file's units: --capacity and --weight default to the file's own
    # (uniform capacities of 1 once gave Abilene an ECMP MLU of 12,710,472)
    plain = tmp_path / "plain"
    assert main(["maxflow", "--objective", "mlu", "--topo", str(folder / "Abilene.graph"),
                 "--models", "ecmp", "--no-progress", "--out", str(plain)]) == 0
    (row,) = csv.DictReader((plain / "results.csv").read_text().splitlines())
    assert float(row["mlu"]) == pytest.approx(1.2770134819878471)
    assert main(["maxflow", "--objective", "mlu", "--topo", str(folder / "Abilene.graph"),
                 "--demands", "gravty", "--out", str(tmp_path / "y")]) != 0
    assert "--demands gravty: no such file (a REPETITA .demands file, auto, gravity or " \
        "uniform)" in capsys.readouterr().err
    # a folder of another matrix is refused, naming the command that starts it over
    assert main(["maxflow", "--objective", "mlu", "--topo", str(folder / "Abilene.graph"),
                 "--models", "ecmp", "--demands", "uniform", "--no-progress",
                 "--out", str(plain)]) != 0
    err = capsys.readouterr().err
    assert "holds a different study" in err and "tpcstudy mlu ... --overwrite" in err


def test_te_export_deploys_the_lp_split_and_the_unsplit_path(repetita: Path, tmp_path: Path):
    folder = repetita / "2016TopologyZooUCL_inverseCapacity"
    t = read_topology(folder / "Abilene.graph", capacity="file", weight="file")
    dfile = folder / "Abilene.0000.demands"
    table = path_table(t, k=2, select="mlu", demands=dfile)
    lp = min_mlu(t, read_demands(dfile, t), model="sr", k=2)
    assert table.meta["mlu_lp"] == pytest.approx(lp.mlu)
    assert lp.mlu <= table.meta["mlu_unsplit"] < 1.01 * lp.mlu
    assert len(table.entries) == len(lp.sources)  # one entry per demand (one prefix each)
    for e in table.entries:
        w = [p.weight for p in e.paths]
        assert sum(w) == pytest.approx(1.0)  # the LP's split of the demand
        assert w[1:] == sorted(w[1:], reverse=True)  # after slot 0, largest share first
        assert all(p.waypoints[-1] == e.destination for p in e.paths)
    with pytest.raises(UsageError, match="not pairs"):
        path_table(t, select="mlu", demands=dfile, pairs=[("0_New_York", "1_Chicago")])
    assert main(["export", "--topo", str(folder / "Abilene.graph"), "--capacity", "file",
                 "--weight", "file", "--select", "mlu", "--demands", "auto", "--k", "2",
                 "--format", "json", "--format", "bpf", "--variant", "exp3_lowest_completion",
                 "--out", str(tmp_path / "te")]) == 0
    doc = json.loads((tmp_path / "te" / "paths.json").read_text())
    assert any("weight" in p for e in doc["entries"] for p in e["paths"])


def test_repeated_demands_of_a_pair_add_up(tmp_path: Path):
    """A matrix naming a pair twice is one demand of their sum: the LP, the unsplit routing and
    the TE export keep one entry per pair (the export once gave a later pair the paths of the
    demand before it)."""
    t = _path_graph()
    once = min_mlu(t, [("a", "b", 3.0), ("c", "b", 1.0)], model="sr", k=2)
    twice = min_mlu(t, [("a", "b", 1.0), ("c", "b", 1.0), ("a", "b", 2.0)], model="sr", k=2)
    assert twice.mlu == pytest.approx(once.mlu) == pytest.approx(3.0)  # 3 on a link of 1
    assert twice.sources.tolist() == [0, 2] and twice.volumes.tolist() == [3.0, 1.0]
    dfile = tmp_path / "dup.demands"
    dfile.write_text("DEMANDS 3\nlabel src dest bw\nd0 0 1 1\nd1 2 1 1\nd2 0 1 2\n")
    table = path_table(t, k=2, select="mlu", demands=dfile)
    assert [(e.source, e.destination) for e in table.entries] == [("a", "b"), ("c", "b")]
    for e in table.entries:
        assert e.paths[0].nodes[0] == e.source and e.paths[0].nodes[-1] == e.destination
        assert sum(p.weight for p in e.paths) == pytest.approx(1.0)

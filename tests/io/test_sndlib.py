"""SNDlib through topohub (--topo sndlib): the conversion by hand, the files against topohub's
own graph, the manifest's refusal of other files, and the MLU study over every network."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import pytest

from tpcstudy import read_topology
from tpcstudy.cli import main
from tpcstudy.errors import DataError, UsageError
from tpcstudy.io import DATASETS, read_demands, topology_files
from tpcstudy.io.sndlib import SNDLIB, convert
from tpcstudy.models.mlu import min_mlu

topohub = pytest.importorskip("topohub", reason="the [sndlib] extra (topohub) is not installed")


@pytest.fixture()
def sndlib_data(tmp_path, monkeypatch):
    monkeypatch.setenv("TPCSTUDY_DATA", str(tmp_path / "data"))
    return tmp_path / "data" / "sndlib"


def test_conversion_by_hand(tmp_path):
    doc = {"nodes": [{"id": 7, "name": "A b", "pos": [10.0, 50.0]},
                     {"id": 3, "name": "C", "pos": [11.0, 50.0]}],
           "edges": [{"source": 7, "target": 3, "dist": 71.6}],
           "graph": {"demands": "{'7': {'3': 5.0}, '3': {'7': 0.0}}"}}
    files = convert(doc, "two")
    assert files["two.graph"].decode().splitlines() == [
        "NODES 2", "label x y", "A_b 10 50", "C 11 50", "", "EDGES 2",
        "label src dest weight bw delay", "edge_0 0 1 1 1 358", "edge_1 1 0 1 1 358"]
    assert files["two.0000.demands"].decode().splitlines() == [
        "DEMANDS 1", "label src dest bw", "demand_0 0 1 5"]  # the zero demand left out
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    t = read_topology(tmp_path / "two.graph", capacity="file", weight="file")
    assert t.names == ["A_b", "C"] and t.num_links == 1
    dem = read_demands(tmp_path / "two.0000.demands", t)
    assert min_mlu(t, dem, model="ecmp").mlu == pytest.approx(5.0)  # 5 units on a link of 1


def test_every_network_against_topohub(sndlib_data):
    files = topology_files("sndlib")
    assert len(files) == 26 and "sndlib" in DATASETS
    for f in files:
        # topohub's own file (topohub.get leaves it open: a ResourceWarning)
        doc = json.loads((Path(topohub.__file__).parent / "data" / "sndlib" /
                          f"{f.stem}.json").read_text())
        t = read_topology(f, capacity="file", weight="file", links="multigraph")
        assert t.num_nodes == len(doc["nodes"]) and t.num_links == len(doc["edges"]), f.stem
        raw = doc["graph"]["demands"]
        dem = ast.literal_eval(raw) if isinstance(raw, str) else raw
        total = sum(v for row in dem.values() for v in row.values())
        got = read_demands(f.with_name(f"{f.stem}.0000.demands"), t)
        assert sum(v for _, _, v in got) == pytest.approx(total, rel=1e-9), f.stem
    assert topology_files("sndlib/Abilene") == [sndlib_data / "abilene.graph"]
    with pytest.raises(UsageError, match="did you mean sndlib/germany50"):
        topology_files("sndlib/germany5")


def test_other_files_are_refused(tmp_path, sndlib_data):
    src = tmp_path / "src"
    src.mkdir()
    for name in SNDLIB.manifest():
        (src / name).write_text("{}")
    with pytest.raises(DataError, match="not the file of topohub 1.5.1"):
        SNDLIB.fetch(str(src))
    assert not SNDLIB.installed()


def test_mlu_study_over_every_network(sndlib_data, tmp_path, capsys):
    out = tmp_path / "mlu"
    assert main(["mlu", "--topo", "sndlib", "--demands", "auto", "--models", "ecmp,sr,mcf",
                 "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "every link capacity 1" in printed and "26 topologies" in printed
    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    assert len(rows) == 26 * 3 and all(r["status"] == "ok" for r in rows)
    by = {(r["topology"], r["model"]): float(r["mlu"]) for r in rows}
    t = read_topology(sndlib_data / "polska.graph", capacity="file", weight="file")
    dem = read_demands(sndlib_data / "polska.0000.demands", t)
    for model in ("ecmp", "sr", "mcf"):
        assert by[("polska", model)] == pytest.approx(min_mlu(t, dem, model=model, k=4).mlu,
                                                      rel=1e-7)
    for name in {r["topology"] for r in rows}:  # mcf is a lower bound of every model
        assert by[(name, "mcf")] <= by[(name, "sr")] * (1 + 1e-7) <= by[(name, "ecmp")] * (1 + 1e-6)
    assert json.loads((out / "meta.json").read_text())["study"]["kind"] == "mlu"

"""benchmarks/peers.py, small: it runs every operation on every library, its cross-checks pass
on real outputs and catch wrong ones, and it writes its JSON and Markdown."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("rustworkx")
pytest.importorskip("igraph")

import tpcstudy

ROOT = Path(__file__).resolve().parents[1]


def _peers():
    spec = importlib.util.spec_from_file_location("peers_bench", ROOT / "benchmarks" / "peers.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["peers_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_peers_benchmark_runs_and_checks(tmp_path, zoo_installed):
    peers = _peers()
    code = peers.main(["--zoo", str(zoo_installed), "--topos", "Abilene", "--pairs", "15",
                       "--reps", "1", "--block", "0.001", "--out", str(tmp_path),
                       "--mlu"])  # no MLU rows here: tests/test_mlu_peers.py
    assert code == 0
    data = json.loads((tmp_path / "peers.json").read_text())
    assert not data["failed"]
    ops = data["results"][0]["ops"]
    assert set(ops) == {op.key for op in peers.OPS}
    for key, row in ops.items():
        assert row["libs"]["tpcstudy"]["check"] == "reference"
        for lib, cell in row["libs"].items():
            assert cell["wall"]["min"] <= cell["wall"]["median"] <= cell["wall"]["max"]
            if lib != "tpcstudy":
                assert cell["check"] == "ok", (key, lib, cell["check"])
        assert row["verdict"] in ("ahead", "tied", "behind")
        spread = row["ratio_spread"]  # the ratio of each repetition's pair of times
        assert spread["min"] <= row["ratio"] == spread["median"] <= spread["max"]
    assert "rustworkx" not in ops["disjoint_paths"]["libs"]  # it has no max flow
    md = (tmp_path / "peers.md").read_text()
    assert md.count("\n| ") >= len(peers.OPS) * 2 + 2 and "tpcstudy vs the strongest" in md
    assert "x (" in md  # ratios printed with their spread


def test_peers_checks_catch_wrong_outputs(zoo_installed):
    peers = _peers()
    topo = tpcstudy.prune(tpcstudy.read_topology(zoo_installed / "Abilene.gml"))
    g = peers.Graphs(topo, peers.LIBS[1:])
    rng = random.Random(0)
    pairs = [tuple(rng.sample(range(topo.num_nodes), 2)) for _ in range(6)]
    sources = [s for s, _ in pairs]
    run = peers.runners(g, pairs, sources)
    for op in ("shortest_paths", "ecmp_ratios", "segment_ratios", "distances_from",
               "distance_matrix", "disjoint_paths"):
        ref, out = run[op]["tpcstudy"](), run[op]["igraph"]()
        assert peers.check(g, op, "igraph", ref, out, pairs, sources) == []
    ref = run["ecmp_ratios"]["tpcstudy"]()
    out = run["ecmp_ratios"]["igraph"]()
    key = next(iter(out[0]))
    out[0][key] += 1e-9
    assert peers.check(g, "ecmp_ratios", "igraph", ref, out, pairs, sources)
    paths = run["disjoint_paths"]["igraph"]()
    paths[0] = paths[0][:1] * 2  # the same path twice: a link used twice
    assert peers.check(g, "disjoint_paths", "igraph", run["disjoint_paths"]["tpcstudy"](), paths,
                       pairs, sources)
    dm = run["distance_matrix"]["rustworkx"]().copy()
    dm[0, 1] += 1
    assert peers.check(g, "distance_matrix", "rustworkx", run["distance_matrix"]["tpcstudy"](), dm,
                       pairs, sources)

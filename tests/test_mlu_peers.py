"""benchmarks/mlu_peers.py's peers give tpcstudy's answers: the plain source-aggregated arc LP
has ``min_mlu(model="mcf")``'s optimum, the networkx ECMP script its loads; and the numpy path
of ``demand_arrays`` (integer id columns, what ECMP's MLU now takes) equals the per-demand loop."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tpcstudy import read_topology
from tpcstudy.io import read_demands
from tpcstudy.models.mlu import _id_arrays, demand_arrays, ecmp_loads, min_mlu

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("mlu_peers_bench",
                                                  ROOT / "benchmarks" / "mlu_peers.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mlu_peers_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def _instance(repetita: Path, name: str):
    d = repetita / "2016TopologyZooUCL_inverseCapacity"
    t = read_topology(d / f"{name}.graph", capacity="file", weight="file")
    return t, read_demands(d / f"{name}.0000.demands", t)


def _arrays(t):
    return (t.num_nodes, np.asarray(t.arc_src), np.asarray(t.arc_dst),
            np.asarray(t.arc_capacity, dtype=np.float64))


@pytest.mark.parametrize("name", ["Abilene", "Napnet", "Cesnet2001", "Bellsouth"])
def test_the_plain_arc_lp_has_the_mcf_optimum(repetita, name):
    bench = _bench()
    t, dem = _instance(repetita, name)
    S, T, V = demand_arrays(t, dem)
    plain = bench.plain_arc_lp(*_arrays(t), S, T, V)
    assert min_mlu(t, dem, model="mcf").mlu == pytest.approx(plain, rel=1e-7)
    # REPETITA scales its matrices so that the multicommodity optimum is 0.9
    assert 0.89 < plain <= 0.9 + 1e-7


@pytest.mark.parametrize("name", ["Abilene", "Bellsouth"])
def test_ecmp_loads_of_the_numpy_demand_arrays_equal_the_loops(repetita, name):
    t, dem = _instance(repetita, name)
    # the same matrix with repeated pairs (summed per pair) and a self-demand and a zero
    extra = np.concatenate([dem, dem[::3], dem[:1], dem[:1]])
    extra["dst"][-2] = extra["src"][-2]
    extra["bw"][-1] = 0.0
    for d in (dem, extra):
        assert _id_arrays(t, d["src"], d["dst"], d["bw"]) is not None  # the numpy path runs
        fast = demand_arrays(t, d)  # integer id columns: numpy
        loop = demand_arrays(t, [(int(s), int(u), float(v)) for s, u, v in d])  # the loop
        for a, b in zip(fast, loop):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        r = min_mlu(t, d, model="ecmp")
        assert np.array_equal(r.loads, ecmp_loads(t, *loop))
        assert r.paths == [[((s, u), v)] for s, u, v in zip(*(x.tolist() for x in loop))]
    S, T, V = demand_arrays(t, dem)
    n, src, dst, cap = _arrays(t)
    mlu, load = _bench().nx_ecmp_mlu(n, src, dst, np.asarray(t.arc_weight, dtype=np.float64),
                                     cap, S, T, V)
    r = min_mlu(t, dem, model="ecmp")
    assert r.mlu == pytest.approx(mlu, rel=1e-12)
    np.testing.assert_allclose(r.loads, load, rtol=1e-9, atol=1e-12 * load.max())


def test_a_refused_volume_still_names_its_demand(repetita):
    t, dem = _instance(repetita, "Abilene")
    bad = dem.copy()
    bad["bw"][5] = -1.0
    with pytest.raises(Exception, match="demand 5: volume"):
        demand_arrays(t, bad)


def test_the_mlu_rows_check_their_answers(repetita):
    rows = _bench().mlu_rows(["Abilene"], reps=1)
    assert [r["op"] for r in rows] == ["mcf", "ecmp"]
    assert all(r["same"] and r["ratio"] > 0 and r["lo"] <= r["ratio"] <= r["hi"] for r in rows)

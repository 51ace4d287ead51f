"""tpcstudy.study.maxflow: the configuration's checks, run_maxflow_study (the library's way to run
the study: resumable, meta.json with its kind), and the one summary the command line prints and
Figure 6 draws."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tpcstudy.errors import UsageError
from tpcstudy.study import MaxflowConfig, load_results, read_meta, run_maxflow_study
from tpcstudy.study.maxflow import (
    format_summary,
    improvement_table,
    median_noise_interval,
    summarize,
    summary_line,
)

from helpers import make_maxflow, read_rows


def test_config_normalises_and_checks() -> None:
    c = MaxflowConfig(heavy=(10, 1, 1.0), seeds=(3, 3), models=("sr", "sr", "mcf"), ks=(4, 2, 4))
    assert c.models == ("ecmp", "sr", "mcf") and c.ks == (2, 4) and c.heavy == (10.0, 1.0)
    assert c.seeds == (3,)
    for bad, match in (({"heavy": (0,)}, "heavy"), ({"heavy": (101,)}, "heavy"),
                       ({"models": ("bogus",)}, "unknown model 'bogus'"), ({"ks": (0,)}, "k = 0"),
                       ({"ks": (11,)}, "k = 11"),
                       ({"seeds": (-1,)}, "seeds: -1 is negative"),
                       ({"seeds": ()}, "seeds"), ({"solver": "cplex"}, "solver"),
                       ({"weight": "nope"}, "weight rule")):
        with pytest.raises(UsageError, match=match):
            MaxflowConfig(**bad)  # type: ignore[arg-type]


def test_one_table_for_the_summary_and_the_figure(tmp_path: Path) -> None:
    mf = load_results(make_maxflow(tmp_path / "mf"))
    t = improvement_table(mf)  # seeds averaged per topology
    assert t[("sr k=4", 1.0)] == pytest.approx({"Alpha": 60.0, "Beta": 30.0, "Gamma": 12.0})
    assert t[("sr k=2", 10.0)]["Alpha"] == pytest.approx(50.0)
    assert t[("mcf", 1.0)]["Beta"] == pytest.approx(50.0)
    assert t[("sr k=4/multipath", 1.0)]["Alpha"] == pytest.approx(100 * (1.6 / 1.1 - 1))
    assert "Tree" not in t[("sr k=4", 1.0)]
    # the same summary from rows as read (strings) and as loaded (numbers)
    for rows in (mf, read_rows(tmp_path / "mf" / "results.csv")):
        s = {(x["series"], x["heavy"]): x for x in summarize(rows)}
        assert s[("sr k=4", 1.0)]["median"] == pytest.approx(30.0)
        assert s[("sr k=4", 1.0)]["q1"] == pytest.approx(21.0)
        assert s[("sr k=4", 1.0)]["topologies"] == 3
    text = format_summary(summarize(mf))
    assert "improvement in %" in text
    assert "paper (Figure 6, median [q1, q3]): sr over ecmp 71.43 [33.33, 100] at 1 %" in text
    assert "over multipath 66.67 [26.92, 100] at 1 %, 25 [8.33, 47.21] at 10 %" in text
    assert summary_line(mf) == ("median improvement (k = 4): 1 %: sr/ecmp 30.0 (paper: 71), "
                                f"sr/multipath {100 * (1.3 / 1.05 - 1):.1f}; 10 %: sr/ecmp 30.0 "
                                f"(paper: 30), sr/multipath {100 * (1.3 / 1.05 - 1):.1f}")
    assert summary_line(mf, k=2).startswith("median improvement (k = 2): 1 %: sr/ecmp 25.0")


def test_pooled_and_per_topology_medians_by_hand() -> None:
    """Two topologies: A with draws 0, 0, 90 (mean 30), B with one draw 20. Per topology: the
    median of the means 30 and 20 is 25; pooled: the median of 0, 0, 20, 90 is 10 (the
    paper's Figure 6 pools draws)."""
    rows = [{"topology": t, "heavy": 1.0, "seed": i, "model": m, "k": k, "value": v,
             "improvement": imp, "status": "ok"}
            for t, draws in (("A", (0.0, 0.0, 90.0)), ("B", (20.0,)))
            for i, d in enumerate(draws)
            for m, k, v, imp in (("ecmp", 1, 1.0, 0.0), ("sr", 4, 1 + d / 100, d))]
    topo = {s["series"]: s for s in summarize(rows)}["sr k=4"]
    pooled = {s["series"]: s for s in summarize(rows, aggregate="pooled")}["sr k=4"]
    assert (topo["median"], topo["values"], topo["topologies"]) == (25.0, 2, 2)
    assert (pooled["median"], pooled["values"], pooled["topologies"]) == (10.0, 4, 2)
    assert pooled["q1"] == pytest.approx(0.0) and pooled["q3"] == pytest.approx(37.5)
    with pytest.raises(UsageError, match="pooled"):
        summarize(rows, aggregate="mean")


def test_the_median_noise_interval() -> None:
    """Bootstrap over each topology's draws: seeded (same seed, same interval), contains the
    possible medians only, and none when no topology has two draws."""
    per = {"A": [0.0, 0.0, 90.0], "B": [20.0]}
    a = median_noise_interval(per, "topology", seed=1)
    assert a == median_noise_interval(per, "topology", seed=1)
    # A's resampled mean is 0, 30, 60 or 90 and B stays 20: the median is 10, 25, 40 or 55
    assert a[0] in (10.0, 25.0) and a[1] in (40.0, 55.0)
    assert median_noise_interval(per, "pooled", seed=1)[0] >= 0.0
    # one seed per topology: no noise can be told, and a zero-width interval would say "none"
    assert all(math.isnan(x) for x in median_noise_interval({"A": [5.0], "B": [7.0]}, seed=3))
    assert math.isnan(median_noise_interval({})[0])
    many = {f"T{i}": list(np.random.default_rng(i).normal(30, 10, size=20)) for i in range(50)}
    lo, hi = median_noise_interval(many, "pooled", seed=0)
    assert lo < 30 < hi and hi - lo < 5  # 1,000 values around 30: a narrow interval
    assert median_noise_interval(many, "pooled", seed=7) != (lo, hi)


def test_run_maxflow_study_resumes_and_records_its_kind(tmp_path: Path,
                                                        zoo_installed: Path) -> None:
    topos = ["zoo/Abilene", "zoo/Ai3"]  # Ai3 is a tree: skipped rows
    config = MaxflowConfig(heavy=(20,), models=("sr",), ks=(2,))
    run, rows = run_maxflow_study(topos, tmp_path / "out", config, progress=False)
    assert (run.total, run.completed, run.failed) == (2, 2, [])
    assert {(r["topology"], r["model"], r["status"]) for r in rows} == {
        ("Abilene", "ecmp", "ok"), ("Abilene", "sr", "ok"), ("Ai3", "ecmp", "skipped"),
        ("Ai3", "sr", "skipped")}
    meta = read_meta(tmp_path / "out")
    assert meta["study"]["kind"] == "maxflow" and meta["study"]["config"]["topo"] == \
        "zoo/Abilene,zoo/Ai3"
    run2, rows2 = run_maxflow_study(topos, tmp_path / "out", config, progress=False)
    assert run2.skipped == 2 and rows2 == rows
    with pytest.raises(UsageError, match="different study"):
        run_maxflow_study(topos, tmp_path / "out", MaxflowConfig(heavy=(10,)), progress=False)
    run3, _ = run_maxflow_study(topos, tmp_path / "out", MaxflowConfig(heavy=(10,)),
                                progress=False, overwrite=True)
    assert run3.skipped == 0

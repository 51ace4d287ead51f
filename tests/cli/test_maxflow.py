"""``tpcstudy maxflow`` end to end: rows, improvements, model order per row, resume, REPETITA
with its demands (the README's Figure 6 command on one topology), failed rows, exit codes."""

from __future__ import annotations

import re
import shutil

import pytest

from tpcstudy.cli import main

from helpers import read_rows


@pytest.fixture()
def small_zoo(tmp_path, zoo_installed):
    folder = tmp_path / "topos"
    folder.mkdir()
    for name in ("Abilene", "Aarnet", "Atmnet", "Ai3"):  # Ai3 is a tree: skipped rows
        shutil.copy(zoo_installed / f"{name}.gml", folder)
    return folder


def test_maxflow_cli_rows_and_facts(small_zoo, tmp_path, capsys):
    out = tmp_path / "res"
    rc = main(["maxflow", "--topo", str(small_zoo), "--heavy", "5,50", "--seeds", "2",
               "--models", "multipath,sr,mcf", "--k", "2,4", "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "improvement in %" in text and "71" in text
    rows = read_rows(out / "results.csv")
    ok = [r for r in rows if r["status"] == "ok"]
    # 3 usable topologies x 2 heavy x 2 seeds x (ecmp, multipath, sr2, sr4, mcf)
    assert len(ok) == 3 * 2 * 2 * 5
    assert {r["topology"] for r in rows if r["status"] == "skipped"} == {"Ai3"}
    by = {}
    for r in ok:
        by.setdefault((r["topology"], r["heavy"], r["seed"]), {})[(r["model"], r["k"])] = float(r["value"])
    for key, v in by.items():
        e, m, mcf = v[("ecmp", "1")], v[("multipath", "")], v[("mcf", "")]
        s2, s4 = v[("sr", "2")], v[("sr", "4")]
        tol = 1e-6 * mcf
        assert e <= s2 + tol and s2 <= s4 + tol and s4 <= mcf + tol, key
        assert e <= m + tol and m <= mcf + tol, key
    for r in ok:
        if r["model"] == "sr":
            e = by[(r["topology"], r["heavy"], r["seed"])][("ecmp", "1")]
            assert float(r["improvement"]) == pytest.approx(100 * (float(r["value"]) - e) / e, abs=1e-5)
            assert float(r["gap"]) >= -1e-9
    # resume: nothing to do, same file
    before = (out / "results.csv").read_bytes()
    assert main(["maxflow", "--topo", str(small_zoo), "--heavy", "5,50", "--seeds", "2",
                 "--models", "multipath,sr,mcf", "--k", "2,4", "--out", str(out), "--no-progress"]) == 0
    assert (out / "results.csv").read_bytes() == before
    assert "4 topologies (4 reused from an earlier run)" in capsys.readouterr().out
    # another study into the same folder is refused with a clear message
    assert main(["maxflow", "--topo", str(small_zoo), "--heavy", "10", "--out", str(out),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "different study" in err and "(tpcstudy maxflow ... --overwrite)" in err


def test_maxflow_cli_with_repetita_demands(repetita, tmp_path, capsys):
    """The README's Figure 6 command, on one topology of the installed REPETITA set."""
    src = repetita / "2016TopologyZooUCL_inverseCapacity"
    out = tmp_path / "res"
    assert main(["maxflow", "--topo", "repetita/inverse-capacity/Abilene", "--capacity", "file",
                 "--weight", "file", "--demands", "auto", "--models", "sr,mcf", "--k", "4",
                 "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"matrix +sr +4 +ecmp +1 +\d", printed)  # the median line
    assert "every pair of each demand matrix" in printed  # not a heavy share, not the paper's
    assert "100%" not in printed and "paper" not in printed
    rows = {r["model"]: r for r in read_rows(out / "results.csv")}
    assert rows["ecmp"]["pairs"] == "110"
    total = 0.0
    for line in (src / "Abilene.0000.demands").read_text().splitlines()[2:]:
        total += float(line.split()[3])
    for m in ("ecmp", "sr", "mcf"):
        assert float(rows[m]["value"]) <= total * (1 + 1e-9)
    value = {m: float(rows[m]["value"]) for m in ("ecmp", "sr", "mcf")}
    assert value["ecmp"] <= value["sr"] * (1 + 1e-9) <= value["mcf"] * (1 + 1e-6)


def test_maxflow_cli_errors(tmp_path, capsys):
    assert main(["maxflow", "--topo", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "holds no topology" in capsys.readouterr().err
    assert main(["maxflow", "--topo", "x.gml", "--models", "ecmp,bogus", "--out", str(tmp_path / "o")]) == 2
    assert "unknown model 'bogus'" in capsys.readouterr().err


def test_lp_trouble_marks_rows_failed_and_carries_on(tmp_path, zoo_installed, capsys):
    """A solve over --time-limit is a failed row with its reason; other topologies finish."""
    folder = tmp_path / "topos"
    folder.mkdir()
    for name in ("Kdl", "Abilene"):
        shutil.copy(zoo_installed / f"{name}.gml", folder)
    out = tmp_path / "res"
    rc = main(["maxflow", "--topo", str(folder), "--heavy", "10", "--models", "mcf",
               "--time-limit", "0.02", "--out", str(out), "--no-progress"])
    assert rc == 1
    rows = read_rows(out / "results.csv")
    kdl = [r for r in rows if r["topology"] == "Kdl"]
    assert kdl and all(r["status"] == "failed" and "time" in r["error"].lower() for r in kdl
                       if r["model"] == "mcf")
    assert all(r["status"] == "ok" for r in rows if r["topology"] == "Abilene")
    assert "failed: Kdl" in capsys.readouterr().err


def test_cli_unwritable_output_is_a_clear_error(zoo_installed, capsys):
    rc = main(["topo", "stats", "--topo", str(zoo_installed / "Abilene.gml"), "--out",
               "/proc/no-such-dir/stats.csv", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1 and "tpcstudy: error: " in err and "no-such-dir" in err and "Traceback" not in err


def test_k_lists_and_duplicate_models(tmp_path, zoo_installed, capsys):
    assert main(["maxflow", "--topo", str(zoo_installed / "Abilene.gml"), "--k", "6-1",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--k" in capsys.readouterr().err
    out = tmp_path / "o2"
    assert main(["maxflow", "--topo", str(zoo_installed / "Abilene.gml"), "--heavy", "50",
                 "--models", "sr,sr,mcf", "--k", "2-3", "--out", str(out), "--no-progress"]) == 0
    rows = read_rows(out / "results.csv")
    assert sorted((r["model"], r["k"]) for r in rows) == [("ecmp", "1"), ("mcf", ""), ("sr", "2"),
                                                          ("sr", "3")]


def test_maxflow_cli_subflow_models(small_zoo, tmp_path, capsys):
    """mptcp:K and sr+mptcp rows: ecmp-ish <= mptcp(K) <= multipath and monotone in K for a seed;
    sr+mptcp(K) <= sr and == sr once K covers the paths the sr optimum uses; summary lines."""
    out = tmp_path / "res"
    rc = main(["maxflow", "--topo", str(small_zoo), "--heavy", "20", "--seeds", "2",
               "--models", "mptcp:1,sr+mptcp,multipath,sr,mptcp:4", "--subflows", "2",
               "--k", "3", "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "mptcp:4" in text and "sr+mptcp:2" in text and "mptcp to reach 90 %" in text
    rows = [r for r in read_rows(out / "results.csv") if r["status"] == "ok"]
    by = {}
    for r in rows:
        by.setdefault((r["topology"], r["seed"]), {})[(r["model"], r["k"], r["subflows"])] = r
    assert len(by) == 3 * 2
    for key, v in by.items():
        val = {k: float(r["value"]) for k, r in v.items()}
        m = val[("multipath", "", "")]
        mp = [val[("mptcp", "", str(x))] for x in (1, 2, 4)]
        tol = 1e-6 * m
        assert mp[0] <= mp[1] + tol <= mp[2] + 2 * tol <= m + 3 * tol, key
        sr = val[("sr", "3", "")]
        used = int(v[("sr", "3", "")]["used_paths_max"])
        for x in (1, 2, 4):
            got = val[("sr+mptcp", "3", str(x))]
            assert got <= sr + tol, key
            if x >= used:
                assert got == pytest.approx(sr, rel=1e-6), key
        assert float(v[("mptcp", "", "4")]["improvement_over_multipath"]) <= 1e-6
    # Figure 6 gets the panel by K
    from tpcstudy.plotting.maxflow import plot_maxflow
    from tpcstudy.study import load_results

    fig = plot_maxflow(load_results(out))
    titles = [a.get_title() for a in fig.axes]
    assert any("hashed subflows" in t for t in titles), titles

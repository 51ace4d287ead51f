"""Emulation results folders: their summaries and figures, through `tpcstudy plot` (no root)."""

from __future__ import annotations

import math

import pytest

from tpcstudy.cli import main
from tpcstudy.emulate import failover as F
from tpcstudy.emulate import throughput as T
from tpcstudy.study import ResultStore, load_results, write_meta
from tpcstudy.study.emulation import FAILOVER, THROUGHPUT, recovery_summary, summary_line, throughput_summary

pytest.importorskip("matplotlib")


def _throughput_rows():
    rows = []
    for seed, (le, me, ls, ms) in enumerate([(4.0, 3.7, 5.0, 4.5), (3.0, 2.8, 4.0, 3.6)]):
        for model, lp, got, ceil in (("ecmp", le, me, 0.943), ("sr", ls, ms, 0.917)):
            rows.append({"scenario": "Abilene", "heavy": 20.0, "seed": seed, "model": model,
                         "lp_value": lp, "measured": got, "ratio": got / lp, "ceiling": ceil,
                         "data_share": got / lp / ceil, "lp_gain": lp / le,
                         "measured_gain": got / me, "status": "ok", "error": ""})
    return rows


def _failover_rows():
    rows = []
    for run, (p, n, t) in enumerate([(6.2, 1.5, 0.29), (6.6, 1.6, 0.30), (math.inf, 1.4, 0.31)]):
        for name, v in zip(F.STRATEGIES, (p, n, t)):
            rows.append({"scenario": "Abilene", "run": run, "strategy": name,
                         "param": {"plain": "", "nrto": "N=3", "timeout": "T=100ms"}[name],
                         "recovery_s": v, "status": "ok" if math.isfinite(v) else
                         "not recovered", "error": ""})
    rows.append({"scenario": "Abilene", "run": 3, "strategy": "plain", "param": "",
                 "recovery_s": math.nan, "status": "unaffected", "error": ""})
    return rows


def test_summaries_by_hand():
    s = throughput_summary(_throughput_rows())
    assert s["ecmp"]["draws"] == 2
    assert s["ecmp"]["ratio"] == pytest.approx((3.7 / 4 + 2.8 / 3) / 2)
    assert s["sr"]["measured_gain"] == pytest.approx((4.5 / 3.7 + 3.6 / 2.8) / 2)
    r = {x["strategy"]: x for x in recovery_summary(_failover_rows())}
    assert r["plain"]["runs"] == 4 and r["plain"]["hit"] == 3 and r["plain"]["recovered"] == 2
    assert r["plain"]["median"] == pytest.approx(6.6)  # the run that never recovered counts
    assert r["nrto"]["median"] == pytest.approx(1.5) and r["timeout"]["median"] == 0.30


@pytest.mark.parametrize("kind", [THROUGHPUT, FAILOVER])
def test_plot_draws_an_emulation_folder(tmp_path, kind, capsys):
    out = tmp_path / "run"
    if kind == THROUGHPUT:
        rows, cols, key = _throughput_rows(), T.COLUMNS, T.KEY
    else:
        rows, cols, key = _failover_rows(), F.COLUMNS, F.KEY
    write_meta(out, {"topo": "zoo/Abilene"}, kind=kind, seeds=[0])
    store = ResultStore(out, cols, key)
    store.put("all", rows)
    store.flush()
    res = load_results(out)
    assert res.kind == kind and len(res) == len(rows)
    line = summary_line(res)
    assert ("measured/LP" in line) if kind == THROUGHPUT else ("nrto N=3: median 1.50 s" in line)
    assert main(["plot", str(out), "--out", str(tmp_path / "figs")]) == 0
    name = "emulation-throughput" if kind == THROUGHPUT else "emulation-recovery"
    assert (tmp_path / "figs" / f"{name}.png").is_file()
    assert (tmp_path / "figs" / f"{name}.pdf").is_file()
    assert line in capsys.readouterr().out

"""Emulation results folders without root: every experiment's summary and printed table from
rows made by hand, and every kind's figure through `tpcstudy plot` from a stored folder."""

from __future__ import annotations

import math

import pytest

from tpcstudy.cli import main
from tpcstudy.emulate.experiments import failover as F
from tpcstudy.emulate.experiments import policies as W
from tpcstudy.emulate.experiments import semper as SE
from tpcstudy.emulate.experiments import summary_line
from tpcstudy.emulate.experiments import throughput as T
from tpcstudy.emulate.experiments import twopaths as TP
from tpcstudy.emulate.experiments.verify import format_verify
from tpcstudy.study import ResultStore, load_results, write_meta

pytest.importorskip("matplotlib")


def _throughput_rows():
    rows = []
    for seed, (le, me, ls, ms) in enumerate([(4.0, 3.7, 5.0, 4.5), (3.0, 2.8, 4.0, 3.6)]):
        for model, lp, got, ceil in (("ecmp", le, me, 0.943), ("sr", ls, ms, 0.917)):
            rows.append({"scenario": "Abilene", "heavy": 20.0, "seed": seed, "model": model,
                         "connections": 8, "lp_value": lp, "measured": got, "ratio": got / lp,
                         "ceiling": ceil, "data_share": got / lp / ceil, "lp_gain": lp / le,
                         "measured_gain": got / me, "cpu_busy": 0.2, "status": "ok",
                         "error": ""})
    rows.append({"scenario": "Abilene", "heavy": 20.0, "seed": 2, "model": "multipath",
                 "status": "skipped", "error": "the LP puts no flow on any pair"})
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


def _dumbbell_rows():
    return [{"scenario": "dumbbell", "paths": 2, "hosts": 2, "subflows": k, "seed": 0,
             "lp_value": 2.0, "model_value": m, "measured": got, "ratio": got / 2, "jain": j,
             "joined": 2 * (k - 1), "expected_joins": 2 * (k - 1), "link_mbps": 10,
             "seconds": 3.0, "cpu_busy": 0.1, "per_host": "0.5 0.5", "path_use": "0.9 0.4"}
            for k, m, got, j in ((1, 1.5, 1.3, 0.9), (4, 1.9, 1.8, 0.99))]


def _fault_rows():
    rows = []
    for strategy, totals in (("mptcp", [1.8, 1.9, 1.9, 0.9, 1.0]),
                             ("tcp+timeout", [1.9, 1.9, 1.9, 0.2, 0.95])):
        for i, tot in enumerate(totals):
            rows.append({"scenario": "fault", "strategy": strategy, "second": i, "total": tot,
                         "jain": 0.9, "failed": i >= 3, "per_host": "0.5 0.5",
                         "path_use": "0.9 0.9", "paths": 2, "hosts": 2, "subflows": 2,
                         "timeout_ms": 100, "fail_after": 3, "link_mbps": 10, "seed": 0})
    return rows


def _policy_rows():
    return [{"scenario": "Abilene", "heavy": 20.0, "seed": 1, "policy": p, "pairs": 4,
             "transfers": 100, "completed": c, "goodput": g, "goodput_lp": g / 5.0,
             "offered": 3.5, "fct_median": m, "fct_p99": p99, "jain": 0.9, "moves": 0,
             "status": "ok", "error": ""}
            for p, c, g, m, p99 in (("ecmp", 90, 2.7, 2.4, math.inf),
                                    ("queue-max", 99, 3.2, 0.7, 5.9))]


def _delay_rows():
    return [{"scenario": "delay", "heavy": "", "seed": 0, "policy": p, "transfers": 10,
             "completed": 10, "fct_median": m, "fct_p90": 2 * m, "fct_p99": 3 * m,
             "on_idle": idle, "fcts": " ".join(["0.1"] * 10), "status": "ok", "error": ""}
            for p, m, idle in (("random", 0.5, 0.5), ("queue-max", 0.2, 0.98))]


def test_summaries_by_hand():
    s = T.summary(_throughput_rows())
    assert set(s) == {"ecmp", "sr"}  # the skipped row is no draw
    assert s["ecmp"]["draws"] == 2
    assert s["ecmp"]["ratio"] == pytest.approx((3.7 / 4 + 2.8 / 3) / 2)
    assert s["sr"]["measured_gain"] == pytest.approx((4.5 / 3.7 + 3.6 / 2.8) / 2)
    r = {x["strategy"]: x for x in F.recovery_summary(_failover_rows())}
    assert r["plain"]["runs"] == 4 and r["plain"]["hit"] == 3 and r["plain"]["recovered"] == 2
    assert r["plain"]["median"] == pytest.approx(6.6)  # the run that never recovered counts
    assert r["plain"]["q3"] == math.inf  # between 6.6 and the one that never came back
    assert r["nrto"]["median"] == pytest.approx(1.5) and r["timeout"]["median"] == 0.30


def test_tables_by_hand():
    t = T.format_rows(_throughput_rows()).splitlines()
    assert t[0].split()[:4] == ["scenario", "heavy", "seed", "model"]
    sr0 = [ln for ln in t if " sr " in ln][0].split()
    assert sr0[4:7] == ["8", "5.000", "4.500"] and sr0[7] == "0.900"  # conns, LP, measured, ratio
    assert any("multipath skipped: the LP puts no flow" in ln for ln in t)
    rec = F.format_recovery(F.recovery_summary(_failover_rows())).splitlines()
    assert rec[2].split()[:7] == ["nrto", "N=3", "3", "3", "3", "1.500", "1.450"]
    db = SE.format_dumbbell(_dumbbell_rows()).splitlines()
    assert db[2].split() == ["2", "4", "1.80", "1.90", "2", "0.900", "0.990", "6/6"]
    fa = {ln.split()[0]: ln.split()[1:] for ln in SE.format_fault(_fault_rows()).splitlines()[1:]}
    # before: seconds 1 and 2 (1.9, 1.9); after: from fail_after + 1 = 4 (1.0 / 0.95); worst
    # from the failure on (0.9 / 0.2)
    assert fa["mptcp"] == ["1.90", "0.90", "1.00", "0.90", "0.90"]
    assert fa["tcp+timeout"] == ["1.90", "0.90", "0.95", "0.90", "0.20"]
    pol = W.format_policies(_policy_rows()).splitlines()
    qm = [ln for ln in pol if "queue-max" in ln][0].split()
    assert qm[4:7] == ["3.200", "64.0%", "91.4%"] and qm[9] == "99/100"
    dl = TP.format_two_paths(_delay_rows()).splitlines()
    assert dl[2].split() == ["0", "queue-max", "0.200", "0.400", "0.600", "10/10", "0.98"]
    paths = [{"check": "path", "source": "a", "destination": "b", "prefix": "p", "slot": 0,
              "waypoints": "b", "probes": 4, "delivered": d, "off_dag_arcs": "", "status": s}
             for d, s in ((4, "ok"), (2, "failed"))]
    maps = [{"check": "map", "loaded": "true", "identical": "true"}]
    v = format_verify(paths + maps, "net", "4 probes", ["one problem"]).splitlines()
    assert v[0] == "problem: one problem" and v[1].startswith("FAILED a -> b (p) slot 0")
    assert v[-1].startswith("net: entries delivered on model links: 0/1 (1/2 paths")
    assert v[-1].endswith("bpf maps loaded 1/1, byte-identical 1/1")


@pytest.mark.parametrize("kind,rows,cols,key,figure", [
    (T.KIND, _throughput_rows(), T.COLUMNS, T.KEY, "emulation-throughput"),
    (F.KIND, _failover_rows(), F.COLUMNS, F.KEY, "emulation-recovery"),
    (SE.KIND, _dumbbell_rows(), SE.COLUMNS, SE.KEY, "emulation-mptcp"),
    (SE.FAULT_KIND, _fault_rows(), SE.FAULT_COLUMNS, SE.FAULT_KEY, "emulation-fault"),
    (W.KIND, _policy_rows(), W.COLUMNS, W.KEY, "emulation-policies"),
])
def test_plot_draws_an_emulation_folder(tmp_path, kind, rows, cols, key, figure, capsys):
    out = tmp_path / "run"
    write_meta(out, {"topo": "zoo/Abilene"}, kind=kind, seeds=[0])
    store = ResultStore(out, cols, key)
    store.put("all", rows)
    store.flush()
    res = load_results(out)
    assert res.kind == kind and len(res) == len(rows)
    line = summary_line(kind, list(res))
    expect = {T.KIND: "sr: measured/LP 0.900", F.KIND: "nrto N=3: median 1.50 s",
              SE.KIND: "P=2 K=4: 1.80 (model 1.90)", SE.FAULT_KIND: "mptcp: 1.90 paths before",
              W.KIND: "queue-max: 64 % of LP"}[kind]
    assert expect in line, line
    assert main(["plot", str(out), "--out", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / f"{figure}.png").is_file()
    assert (tmp_path / "figs" / f"{figure}.pdf").is_file()
    assert line in capsys.readouterr().out


def test_policy_figures_keep_the_given_order_and_one_colour_per_policy(tmp_path):
    from matplotlib.colors import to_hex

    from tpcstudy.plotting import plot_policies
    from tpcstudy.plotting.emulation import policy_color

    rows = [dict(r, link_mbps=10.0, seconds=20.0, warmup=3.0, draw=0) for r in _policy_rows()]
    out = tmp_path / "run"
    # given as queue-max, ecmp: the results folder sorts rows by key, the figure must not
    write_meta(out, {"topo": "zoo/Abilene", "policies": {"policies": ["queue-max", "ecmp"]}},
               kind=W.KIND, seeds=[1])
    store = ResultStore(out, W.COLUMNS, W.KEY)
    store.put("all", rows)
    store.flush()
    fig = plot_policies(load_results(out))
    a = fig.axes[0]
    assert [t.get_text() for t in a.get_xticklabels()] == ["queue-max", "ecmp"]
    assert [to_hex(p.get_facecolor()) for p in a.patches] == [policy_color("queue-max"),
                                                              policy_color("ecmp")]
    # the settings in the figure's title (with the network), each panel titled
    assert "10 Mbit/s links, 20 s window after 3 s, 1 draw" in fig._suptitle.get_text()
    assert "Abilene" in fig._suptitle.get_text() and a.get_title()
    assert "unfinished" in fig.axes[1].get_title()  # ecmp's p99 is infinite
    w, h = fig.get_size_inches()
    assert w / h < 3.5  # not a 8:1 strip
    # the same colour whatever the run, from the name alone; variants of a family told apart
    from tpcstudy.plotting.emulation import POLICY_COLORS
    assert policy_color("exp3:0.1") == POLICY_COLORS["exp3"]
    assert len({policy_color(x) for x in ("exp3:0.01", "exp3:0.1", "exp3:0.2",
                                          "exp3:0.1:16k")}) == 4
    assert len({policy_color(f"mptcp:{k}") for k in (2, 3, 4, 8)}) == 4
    assert policy_color("my-policy") == policy_color("my-policy")
    assert policy_color("my-policy") not in POLICY_COLORS.values()
    # delay: ecmp has no idle path: "n/a", not a missing bar
    delay = [dict(r) for r in _delay_rows()] + [dict(_delay_rows()[0], policy="ecmp",
                                                     on_idle="")]
    fig2 = plot_policies(delay)
    b = fig2.axes[1]
    assert "n/a" in [t.get_text() for t in b.texts] and len(b.patches) == 2

"""``tpcstudy show``: a results folder's summary again, as text and as JSON, for a study and for
an emulation (hand-made rows: the intervals and verdicts are those the harness would write);
``--json`` and the "next:" line of the study verbs."""

from __future__ import annotations

import json
import shutil

import pytest

from tpcstudy.cli import main
from tpcstudy.emulate.experiments import throughput as T
from tpcstudy.emulate.experiments.repeats import VERDICT_COLUMNS, summary_columns
from tpcstudy.io import write_csv
from tpcstudy.study.provenance import write_meta


@pytest.fixture()
def two_topos(tmp_path, zoo_installed):
    folder = tmp_path / "topos"
    folder.mkdir()
    for name in ("Abilene", "Ai3"):  # Ai3 is a tree: a skipped row
        shutil.copy(zoo_installed / f"{name}.gml", folder)
    return folder


def test_maxflow_json_show_and_next(two_topos, tmp_path, capsys):
    out = tmp_path / "res"
    argv = ["maxflow", "--topo", str(two_topos), "--heavy", "20", "--seeds", "2",
            "--models", "ecmp,multipath,sr", "--k", "4", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    text = cap.out
    assert "improvement in %" in text and f"next: tpcstudy plot {out} --out figures" in text
    # --json: one JSON object on standard output, the counts on standard error
    assert main([*argv, "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert "reused from an earlier run" in cap.err and "next:" in cap.err
    assert doc["kind"] == "maxflow" and doc["rows"] > 0 and doc["failed_rows"] == 0
    sr = next(s for s in doc["summary"] if s["series"] == "sr k=4" and s["heavy"] == 20)
    assert sr["topologies"] == 1 and sr["q1"] <= sr["median"] <= sr["q3"]
    assert sr["paper_median"] is None  # the paper has 1, 5 and 10 % only
    # show prints the same summary again, without running anything
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"{out} (maxflow, ") and text.split("\n")[1] in shown
    assert main(["show", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["summary"] == doc["summary"] and again["git_commit"] == doc["git_commit"]
    # pooled over every (topology, seed): 1 topology x 2 seeds = 2 values per series
    assert main(["show", str(out), "--json", "--aggregate", "pooled"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    sr_p = next(s for s in pooled["summary"] if s["series"] == "sr k=4" and s["heavy"] == 20)
    assert sr_p["aggregate"] == "pooled" and sr_p["values"] == 2 and sr["values"] == 1
    assert sr_p["median"] == pytest.approx(sr["median"])  # the mean of 2 = their median
    assert sr_p["median_lo"] <= sr_p["median"] <= sr_p["median_hi"]


def test_disjoint_json(two_topos, tmp_path, capsys):
    out = tmp_path / "dis"
    assert main(["disjoint", "--topo", str(two_topos), "--k", "2", "--out", str(out),
                 "--no-progress", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "disjoint" and doc["summary"]["topologies"] == 1
    assert doc["summary"]["skipped"] == 1


def test_show_an_emulation_folder(tmp_path, capsys):
    out = tmp_path / "emu"
    rows = []
    for d in range(3):
        for m, ratio in (("ecmp", 0.90 + d / 100), ("sr", 0.80 + d / 100)):
            rows.append({c: "" for c in T.COLUMNS} | dict(
                scenario="Abilene", heavy=20.0, seed=0, draw=d, model=m, ratio=ratio,
                measured=4 * ratio, ceiling=0.95, data_share=ratio / 0.95,
                measured_gain=1.0 if m == "ecmp" else 0.8 / 0.9, status="ok",
                cpu_busy=0.97 if (d, m) == (2, "sr") else 0.3))
    write_meta(out, {"topo": "zoo/Abilene"}, kind=T.KIND)
    write_csv(out / "results.csv", rows, T.COLUMNS)
    exp = T.Throughput(topo="zoo/Abilene")
    summ, ver = exp.summarize(rows)
    write_csv(out / "summary.csv", summ, summary_columns(exp.by(), exp.metrics))
    write_csv(out / "verdicts.csv", ver, [c for c in exp.by() if c != exp.arm] + VERDICT_COLUMNS)
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ecmp: measured/LP 0.910" in text
    assert "Abilene | 20 | 0 | ecmp | 3 | 0.91 [" in text  # mean 0.91 and its t interval
    assert "measured: ecmp higher than sr" in text
    assert "warning: the CPUs were 90% or more busy in 1 of 6 measurements" in text
    assert main(["show", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == T.KIND and doc["rows"] == 6 and len(doc["summary"]) == 2
    assert doc["summary"][0]["ratio"] == pytest.approx(0.91)
    # sr's CPU busy 0.3, 0.3, 0.97: its t interval reaches below 0 and is cut to [0, 1]
    assert doc["summary"][1]["model"] == "sr" and doc["summary"][1]["cpu_busy_lo"] == 0.0
    assert doc["verdicts"][0]["verdict"] == "higher" and len(doc["warnings"]) == 1
    assert "paired verdicts: 1 of 1 comparisons differ" in text
    # one draw per network (a whole-Zoo run): no verdict, not "0 of N differ"
    one = [r for r in rows if r["draw"] == 0]
    write_csv(out / "results.csv", one, T.COLUMNS)
    write_csv(out / "verdicts.csv", exp.summarize(one)[1],
              [c for c in exp.by() if c != exp.arm] + VERDICT_COLUMNS)
    assert main(["show", str(out)]) == 0
    assert "paired verdicts: none (1 comparisons of one draw each; --repeat 2 or more" \
        in capsys.readouterr().out


def test_show_says_failed_rows_and_exits_1(tmp_path, capsys):
    from tpcstudy.study.maxflow import COLUMNS
    from tpcstudy.study.store import read_results

    from helpers import make_maxflow

    out = make_maxflow(tmp_path / "mf")
    rows = [dict(r) for r in read_results(out / "results.csv")]
    rows[0].update(status="failed", error="solver said no")
    write_csv(out / "results.csv", rows, COLUMNS)
    assert main(["show", str(out)]) == 1
    text = capsys.readouterr().out
    assert "1 failed rows" in text and "median improvement (k = 4)" in text  # the summary line
    assert main(["show", str(out), "--k", "2"]) == 1
    assert "median improvement (k = 2)" in capsys.readouterr().out


def test_show_names_what_it_cannot_read(tmp_path, capsys):
    assert main(["show", str(tmp_path / "nothing")]) != 0
    assert "nothing" in capsys.readouterr().err

"""``tpcstudy disjoint`` over three Zoo topologies (one a tree): summary, rows, paths file,
resume, usage errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tpcstudy.cli import main

from helpers import read_rows


@pytest.mark.slow
def test_cli_three_zoo_topologies(zoo_installed: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture) -> None:
    topos = tmp_path / "topos"
    topos.mkdir()
    for name in ("Abilene", "Geant2012", "Arn"):  # Arn is a tree: a skipped row
        shutil.copy(zoo_installed / f"{name}.gml", topos / f"{name}.gml")
    out = tmp_path / "out"
    argv = ["disjoint", "--topo", str(topos), "--k", "1,2,4", "--jobs", "2", "--out", str(out),
            "--paths-out", str(tmp_path / "p.jsonl"), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "2 topologies with results, 1 skipped" in text
    assert "(paper: 70 %)" in text and "sps k=4" in text and "failure view" in text
    rows = read_rows(out / "results.csv")
    assert {r["topology"] for r in rows} == {"Abilene", "Geant2012", "Arn"}
    assert [r["status"] for r in rows if r["topology"] == "Arn"] == ["skipped"]
    ab = {(r["method"], r["k"]): r for r in rows if r["topology"] == "Abilene"}
    assert ab["sps", "1"]["mean_paths"] == "1.0" and ab["max", ""]["mean_paths"] == "2.0"
    assert ab["failure", "4"]["overlap_share"] == "0.0"
    assert set(ab) == {("max", ""), ("greedy", ""), ("sps", "1"), ("sps", "2"), ("sps", "4"),
                       ("failure", "4")}
    nlines = len((tmp_path / "p.jsonl").read_text().splitlines())
    assert nlines == sum(int(r["pairs"]) for r in rows if r["method"] == "max") * 5
    # rerun: nothing to do, same summary
    assert main(argv) == 0
    assert "3 tasks: 3 reused from an earlier run, 0 run" in capsys.readouterr().out
    # bad --k is a usage error (exit 2)
    assert main(["disjoint", "--topo", str(topos), "--k", "0", "--out", str(tmp_path / "x"),
                 "--no-progress"]) == 2
    # options the configuration refuses are usage errors too
    for bad in (["--threads", "0"], ["--max-pairs", "0"], ["--jobs", "0"]):
        assert main(["disjoint", "--topo", str(topos), "--out", str(tmp_path / "y"),
                     "--no-progress", *bad]) == 2

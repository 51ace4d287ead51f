"""Bad values on the command line end in one clear line, never in a traceback (on the terminal
or stored in results.csv), a hang, or a silent change of the numbers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tpcstudy.cli import main

from helpers import read_rows


def _maxflow(out: Path, *extra: str) -> list:
    return ["maxflow", "--topo", "zoo/Abilene", "--models", "ecmp,sr", "--out", str(out),
            "--no-progress", *extra]


@pytest.mark.parametrize("extra, message", [
    (["--seed", "-1"], "--seed -1: seeds are integers >= 0"),
    (["--k", "1-1000000"], "segment limits go up to 10 in the studies (a path a host is given"),
    (["--k", "11"], "segment limits go up to 10"),
])
def test_bad_values_are_usage_errors(zoo_installed: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture, extra, message) -> None:
    assert main(_maxflow(tmp_path / "out", *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out" / "meta.json").exists()


def test_disjoint_seed(zoo_installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["disjoint", "--topo", "zoo/Abilene", "--seed", "-3", "--out",
                 str(tmp_path / "o")]) == 2
    assert "--seed -3: seeds are integers >= 0" in capsys.readouterr().err


def test_equal_heavy_values_are_one_draw_and_jobs_are_capped(zoo_installed: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    assert main(_maxflow(tmp_path / "out", "--heavy", "10,10.0", "--jobs", "1000")) == 0
    err = capsys.readouterr().err
    cpus = len(os.sched_getaffinity(0))
    assert f"--jobs 1000 capped at {cpus}" in err
    rows = read_rows(tmp_path / "out" / "results.csv")
    assert {r["heavy"] for r in rows} == {"10.0"} and len(rows) == 2
    assert all(r["status"] == "ok" for r in rows)


def test_task_errors_are_stored_without_a_traceback(zoo_installed: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    assert main(_maxflow(tmp_path / "a", "--demands", "auto")) == 1
    row = read_rows(tmp_path / "a" / "results.csv")[0]
    assert row["status"] == "failed" and "no Abilene.*.demands next to" in row["error"]
    assert "Traceback" not in row["error"] and "File \"" not in row["error"]
    capsys.readouterr()
    bad = tmp_path / "bad.demands"
    bad.write_text("DEMANDS 1\nlabel src dest bw\nd0 0 1 x\n")
    topo = tmp_path / "Abilene.gml"
    shutil.copy(zoo_installed / "Abilene.gml", topo)
    assert main(["maxflow", "--topo", str(topo), "--demands", str(bad), "--out",
                 str(tmp_path / "b"), "--no-progress"]) == 1
    row = read_rows(tmp_path / "b" / "results.csv")[0]
    assert "bad.demands:3" in row["error"] and "Traceback" not in row["error"]


def test_files_that_are_not_utf8(zoo_installed: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"source,destination\n\xff\xfe,x\n")
    rc = main(["export", "--topo", "zoo/Abilene", "--pairs-file", str(bad),
               "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and "bad.txt:2: not UTF-8 text" in err and "Traceback" not in err
    rc = main(["export", "--topo", "zoo/Abilene", "--plan", str(bad), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and "bad.txt:2: byte 0xff at offset 19 is not UTF-8 text" in err and "Traceback" not in err


def test_inspect_next_to_a_stale_plan(zoo_installed: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture) -> None:
    for name in ("Abilene", "Geant2012"):
        assert main(["export", "--topo", f"zoo/{name}", "--format", "bpf", "--out",
                     str(tmp_path / name)]) == 0
    capsys.readouterr()
    binary = sorted((tmp_path / "Abilene").glob("bpf-*/*.bin"))[0]
    assert main(["export", "--inspect", str(binary)]) == 0  # its own plan.json: fine
    capsys.readouterr()
    shutil.copy(tmp_path / "Geant2012" / "plan.json", tmp_path / "Abilene" / "plan.json")
    assert main(["export", "--inspect", str(binary)]) == 1
    err = capsys.readouterr().err
    assert "does not match this file" in err and "stale plan.json" in err

"""Results you can trust after anything: resume checks its inputs, one writer per folder, damaged
parts recomputed, SIGTERM like Ctrl-C, workers die with their parent, a dead worker fails only
its own task, a dead run's temporary files are removed (and only those)."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

from tpcstudy.cli import main
from tpcstudy.errors import UsageError
from tpcstudy.io import atomic_open, remove_dead_temporaries
from tpcstudy.study import Task
from tpcstudy.study.maxflow import MaxflowConfig, run_maxflow_study
from tpcstudy.study.store import folder_lock

from helpers import killer_task, numbered_tasks, read_rows, run_numbered

TIMING = {"seconds", "seconds_paths", "seconds_pricing", "seconds_lp"}
SMALL = ["Abilene", "Aarnet", "Arpanet196912", "Sprint"]
CONFIG = MaxflowConfig(heavy=(20.0,), seeds=(0,), models=("ecmp", "sr"), ks=(2,))


def _values(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]


@pytest.fixture()
def topos(tmp_path: Path, zoo_installed: Path) -> Path:
    d = tmp_path / "topos"
    d.mkdir()
    for name in SMALL:
        shutil.copy(zoo_installed / f"{name}.gml", d)
    return d


# ----------------------------------------------------------------------------- inputs
def test_an_edited_topology_is_recomputed_and_a_vanished_one_removed(topos: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "out"
    run, rows = run_maxflow_study(topos, out, CONFIG, progress=False)
    assert run.skipped == 0 and not run.changed
    before = {r["topology"]: r["value"] for r in rows if r["model"] == "ecmp"}
    text = (topos / "Abilene.gml").read_text()
    (topos / "Abilene.gml").write_text(text.replace("graph [", 'graph [\n  Note "edited"', 1))
    (topos / "Aarnet.gml").unlink()
    run, rows = run_maxflow_study(topos, out, CONFIG, progress=False)
    assert run.skipped == 2 and len(run.changed) == 1 and "Abilene" in run.changed[0]
    assert len(run.vanished) == 1 and "Aarnet" in run.vanished[0]
    assert "Aarnet" not in {r["topology"] for r in rows}
    assert "input changed" in run.report() and "input is gone" in run.report()
    assert {r["topology"]: r["value"] for r in rows if r["model"] == "ecmp"} == \
        {k: v for k, v in before.items() if k != "Aarnet"}
    run, _ = run_maxflow_study(topos, out, CONFIG, progress=False)
    assert run.skipped == 3 and not run.changed and not run.vanished and not run.report()


def test_a_changed_graph_changes_the_rows(topos: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for p in topos.glob("*.gml"):
        if p.stem != "Abilene":
            p.unlink()
    _, rows = run_maxflow_study(topos, out, CONFIG, progress=False)
    gml = topos / "Abilene.gml"
    text = gml.read_text()
    first_edge = text.index("  edge [")
    end = text.index("]", first_edge) + 1
    gml.write_text(text[:first_edge] + text[end:])  # one link fewer
    run, rows2 = run_maxflow_study(topos, out, CONFIG, progress=False)
    assert len(run.changed) == 1 and run.completed == 1
    assert [r["value"] for r in rows] != [r["value"] for r in rows2]


# ----------------------------------------------------------------------------- one writer
def test_a_second_writer_is_refused_with_the_holders_pid(topos: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    with folder_lock(out):
        with pytest.raises(UsageError, match=f"pid {os.getpid()}"):
            run_maxflow_study(topos, out, CONFIG, progress=False)
        for extra in ([], ["--overwrite"]):
            rc = main(["maxflow", "--topo", str(topos), "--heavy", "20", "--models", "ecmp",
                       "--out", str(out), "--no-progress", *extra])
            err = capsys.readouterr().err
            assert rc == 2 and f"another tpcstudy run (pid {os.getpid()})" in err, err
    assert not (out / "parts").exists() and not (out / "meta.json").exists()
    run, _ = run_maxflow_study(topos, out, CONFIG, progress=False)  # the lock went with its holder
    assert run.completed == 4


def test_an_empty_out_is_refused(capsys: pytest.CaptureFixture, topos: Path) -> None:
    for verb in (["maxflow", "--topo", str(topos)], ["disjoint", "--topo", str(topos)]):
        assert main([*verb, "--out", ""]) == 2
        assert "--out '': name a file or folder" in capsys.readouterr().err


# ----------------------------------------------------------------------------- damaged parts
@pytest.mark.parametrize("damage", ["truncate", "empty", "binary"])
def test_a_damaged_part_is_discarded_and_recomputed(tmp_path: Path, damage: str) -> None:
    run_numbered(tmp_path, tasks=numbered_tasks(3))
    good = read_rows(tmp_path / "results.csv")
    part = sorted((tmp_path / "parts").glob("*.csv"))[1]
    data = part.read_bytes()
    part.write_bytes({"truncate": data[: len(data) // 2 + 3], "empty": b"",
                      "binary": data[:40] + b"\xff\xfe" + data[40:]}[damage])
    run = run_numbered(tmp_path, tasks=numbered_tasks(3))
    assert run.completed == 1 and run.skipped == 2
    assert len(run.notes) == 1 and "damaged" in run.notes[0] and part.name in run.notes[0]
    assert read_rows(tmp_path / "results.csv") == good


def test_a_part_of_another_version_still_stops_the_run(tmp_path: Path) -> None:
    run_numbered(tmp_path, tasks=numbered_tasks(2))
    part = sorted((tmp_path / "parts").glob("*.csv"))[0]
    lines = part.read_text().splitlines(keepends=True)
    part.write_text("topology,seed,value,other,status,error\n" + "".join(lines[2:]))
    with pytest.raises(UsageError, match="another version"):
        run_numbered(tmp_path, tasks=numbered_tasks(2))


# ----------------------------------------------------------------------------- dead workers
def test_a_killed_worker_fails_only_its_own_task(tmp_path: Path) -> None:
    tasks = numbered_tasks(6)
    tasks.insert(2, Task({"topology": "boom"}, args=9))
    run = run_numbered(tmp_path, jobs=2, tasks=tasks, fn=killer_task)
    rows = read_rows(tmp_path / "results.csv")
    failed = {r["topology"] for r in rows if r["status"] == "failed"}
    assert failed == {"boom"} and len(run.failed) == 1
    assert "died again when run alone" in next(r["error"] for r in rows if r["topology"] == "boom")
    assert sum(r["status"] != "failed" for r in rows) == 12


# ----------------------------------------------------------------------------- temporaries
def test_only_a_dead_runs_temporaries_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    mine = tmp_path / f".x.csv.p{os.getpid()}.abc.tmp"
    theirs = tmp_path / f".x.csv.p{pid}.abc.tmp"
    stage = tmp_path / f".tpcstudy-export.p{pid}.xyz"
    other = tmp_path / ".someone-else.tmp"
    for f in (mine, theirs, other):
        f.write_text("x")
    stage.mkdir()
    (stage / "big.bin").write_bytes(b"0" * 1000)
    assert sorted(remove_dead_temporaries(tmp_path)) == sorted([theirs, stage])
    assert mine.exists() and other.exists()
    with atomic_open(tmp_path / "y.txt", "w"):  # names carry the writer's pid
        assert [p.name for p in tmp_path.glob(".y.txt.*")][0].startswith(f".y.txt.p{os.getpid()}.")


# ----------------------------------------------------------------------------- signals
def _cmd(topos: Path, out: Path) -> List[str]:
    return [sys.executable, "-m", "tpcstudy", "maxflow", "--topo", str(topos), "--heavy", "20,50",
            "--models", "ecmp,multipath,sr,mcf", "--k", "2,4", "--seeds", "2", "--jobs", "2",
            "--out", str(out), "--no-progress"]


def _group_gone(pgid: int, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _start(topos: Path, out: Path) -> subprocess.Popen:
    proc = subprocess.Popen(_cmd(topos, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    end = time.monotonic() + 60
    while not (out / "parts").is_dir() or not any((out / "parts").iterdir()):
        assert proc.poll() is None and time.monotonic() < end, proc.communicate()
        time.sleep(0.05)
    return proc


@pytest.mark.slow
def test_sigterm_is_ctrl_c_and_sigkill_takes_the_workers_along(topos: Path,
                                                               tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    subprocess.run(_cmd(topos, ref), check=True, capture_output=True)
    out = tmp_path / "out"
    proc = _start(topos, out)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "terminated (SIGTERM)" in err and "Traceback" not in err
    assert _group_gone(proc.pid), "a worker outlived its parent's SIGTERM"
    assert not [p for p in out.rglob(".*") if p.name != ".lock"]
    proc = _start(topos, out)
    proc.kill()  # SIGKILL: no handler runs; the workers must die with it
    proc.communicate(timeout=10)
    assert _group_gone(proc.pid), "a worker outlived its parent's SIGKILL"
    subprocess.run(_cmd(topos, out), check=True, capture_output=True)
    assert not [p for p in out.rglob(".*") if p.name != ".lock"]
    assert _values(out / "results.csv") == _values(ref / "results.csv")


def test_atomic_writes_fsync_unless_told_not_to(tmp_path, monkeypatch):
    """Files are fsync-ed before the rename unless ``durable=False`` (a study's part files,
    which a later run recomputes when a power failure left one damaged)."""
    import os

    from tpcstudy.io import atomic_write_text

    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    atomic_write_text(tmp_path / "durable.txt", "a")
    assert len(synced) == 1
    atomic_write_text(tmp_path / "part.txt", "b", durable=False)
    assert len(synced) == 1 and (tmp_path / "part.txt").read_text() == "b"

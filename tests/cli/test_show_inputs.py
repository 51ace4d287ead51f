"""``tpcstudy show`` on folders it should not trust (issue 44): a live run's folder, special
files as results.csv or as the folder, rows no study writes, a meta.json nested 100,000 deep.
Each ends in one line (or a "partial" header), within a second, never a traceback or a hang."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from tpcstudy.cli import main

from helpers import deadline, make_maxflow

MLU_HEADER = "topology,seed,model,k,mlu,reduction,status\n"


def _show(capsys: pytest.CaptureFixture, *argv: str) -> tuple:
    t0 = time.monotonic()
    with deadline(5):
        rc = main(["show", *argv])
    secs = time.monotonic() - t0
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return rc, cap.out, cap.err, secs


def test_a_live_runs_folder_is_said_partial(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = make_maxflow(tmp_path / "res")
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running study holds
        os.write(fd, f"{os.getpid()}\n".encode())
        rc, out, _, _ = _show(capsys, str(folder))
        assert rc == 0 and out.startswith(f"{folder}: still running (pid {os.getpid()}): partial")
        rc, out, _, _ = _show(capsys, str(folder), "--json")
        assert '"running_pid": %d' % os.getpid() in out and '"partial": true' in out
    finally:
        os.close(fd)
    rc, out, _, _ = _show(capsys, str(folder))  # the run ended: its pid left in .lock is no run
    assert rc == 0 and "still running" not in out


@pytest.mark.parametrize("what", ["fifo-results", "fifo-folder", "zero-results"])
@pytest.mark.parametrize("as_json", [False, True])
def test_special_files_are_refused_within_a_second(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                   what: str, as_json: bool) -> None:
    folder = make_maxflow(tmp_path / "res")
    target = folder
    if what == "fifo-results":
        (folder / "results.csv").unlink()
        os.mkfifo(folder / "results.csv")
    elif what == "zero-results":
        (folder / "results.csv").unlink()
        (folder / "results.csv").symlink_to("/dev/zero")
    else:
        target = tmp_path / "fifo"
        os.mkfifo(target)
    rc, out, err, secs = _show(capsys, str(target), *(["--json"] if as_json else []))
    kind = "a character device" if what == "zero-results" else "a FIFO (named pipe)"
    assert rc == 1 and f"{kind}, not a regular file" in err and secs < 1.0, (err, secs)


@pytest.mark.parametrize("body, message", [
    (MLU_HEADER + "A,0,ecmp,1,0.5,0,ok\nA,0,sr,4,-0.25,150,ok\n",
     ":3: column mlu: -0.25 is negative"),
    ("topology,seed,model,k,mlu,mlu,status\nA,0,ecmp,1,0.5,0.5,ok\n",
     ":1: column 'mlu' appears twice in the header"),
    (MLU_HEADER + "A,0,ecmp,1,0.5,0,ok\nA,0,sr,4,abc,0,ok\n", ":3: column mlu: 'abc' is not a number"),
    (MLU_HEADER + "A,0,ecmp,1,0.5,0,ok\nabc\n", ":3: 1 cells for 7 columns: 'abc'"),
])
def test_rows_no_study_writes_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture,
                                          body: str, message: str) -> None:
    p = tmp_path / "mlu.csv"
    p.write_text(body)
    rc, _, err, _ = _show(capsys, str(p))
    assert rc == 1 and f"{p}{message}" in err and len(err.strip().splitlines()) == 1, err


def test_a_maxflow_row_with_text_for_a_number_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    folder = make_maxflow(tmp_path / "res")
    text = (folder / "results.csv").read_text().splitlines()
    cells = text[1].split(",")
    cells[text[0].split(",").index("value")] = "abc"
    text[1] = ",".join(cells)
    (folder / "results.csv").write_text("\n".join(text) + "\n")
    rc, _, err, _ = _show(capsys, str(folder))
    assert rc == 1 and "results.csv:2: column value: 'abc' is not a number" in err, err


def test_a_deeply_nested_meta_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = make_maxflow(tmp_path / "res")
    (folder / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    rc, _, err, _ = _show(capsys, str(folder))
    assert rc == 1 and "meta.json: unreadable meta.json (JSON nested more than 64 levels deep" in err
    assert len(err.strip().splitlines()) == 1

"""Special files and absurd sizes on the command line (issue 44): a FIFO or a device as
``--demands`` or ``--topo`` is said to be one (not "no such file") within a second, and
``--seeds 100000000`` is one usage line, not a MemoryError traceback."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tpcstudy.cli import main

from helpers import deadline


@pytest.fixture
def specials(tmp_path: Path) -> dict:
    fifo = tmp_path / "m.demands"
    os.mkfifo(fifo)
    zero = tmp_path / "z.demands"
    zero.symlink_to("/dev/zero")
    return {"fifo": (fifo, "a FIFO (named pipe), not a regular file"),
            "dev-zero": (Path("/dev/zero"), "a character device, not a regular file"),
            "zero-link": (zero, "a character device, not a regular file")}


def _run(capsys: pytest.CaptureFixture, argv: list) -> tuple:
    t0 = time.monotonic()
    with deadline(5):
        rc = main(argv)
    secs = time.monotonic() - t0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err, secs


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "zero-link"])
@pytest.mark.parametrize("verb", ["maxflow", "export"])
def test_a_special_demands_file_is_refused_within_a_second(repetita: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture,
                                                           specials: dict, kind: str,
                                                           verb: str) -> None:
    path, words = specials[kind]
    graph = repetita / "2016TopologyZooUCL_inverseCapacity" / "Abilene.graph"
    if verb == "maxflow":
        argv = ["maxflow", "--objective", "mlu", "--topo", str(graph), "--demands", str(path),
                "--models", "ecmp,mcf", "--out", str(tmp_path / "o"), "--no-progress"]
    else:
        argv = ["export", "--topo", str(graph), "--select", "mlu", "--demands", str(path),
                "--out", str(tmp_path / "x")]
    rc, err, secs = _run(capsys, argv)
    assert rc != 0 and words in err and "no such file" not in err, err
    assert secs < 1.0, secs


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_topology_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture,
                                       specials: dict, kind: str) -> None:
    path, words = specials[kind]
    rc, err, secs = _run(capsys, ["maxflow", "--topo", str(path), "--out", str(tmp_path / "o"),
                                  "--no-progress"])
    assert rc != 0 and words in err and "no such file" not in err and secs < 1.0, err


@pytest.mark.parametrize("argv", [
    ["maxflow", "--topo", "zoo/Abilene", "--seeds", "100000000"],
    ["maxflow", "--objective", "mlu", "--topo", "zoo/Abilene", "--demands", "gravity",
     "--seeds", "100000000"],
    ["reproduce", "--seeds", "100000000"],
])
def test_too_many_seeds_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                    argv: list) -> None:
    rc, err, secs = _run(capsys, [*argv, "--out", str(tmp_path / "o")])
    assert rc == 2 and "--seeds 100000000: at most 10000 draws" in err and secs < 1.0, err
    assert not (tmp_path / "o").exists()


def test_a_special_plan_file_is_said_so(tmp_path: Path) -> None:
    from tpcstudy.errors import PlanError
    from tpcstudy.export import read_plan

    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    for path, words in ((fifo, "a FIFO (named pipe)"), (Path("/dev/zero"), "a character device")):
        t0 = time.monotonic()
        with deadline(5), pytest.raises(PlanError, match=re.escape(f"{words}, not a regular file")):
            read_plan(path)
        assert time.monotonic() - t0 < 1.0

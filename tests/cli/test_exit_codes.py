"""The command line's exit status: 0 on success, 2 for a usage error, 1 for a failure at run time
(a file that cannot be read or written, bad data, a data set that cannot be fetched, a solver
that fails), 130 after Ctrl-C; always a one-line message, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import tpcstudy.cli.export as cli_export
from tpcstudy.cli import VERBS, build_parser, main
from tpcstudy.errors import (
    ClusterError,
    DataError,
    ExportError,
    PlanError,
    SolverError,
    TopologyFormatError,
    TpcStudyError,
    UsageError,
    ZooDataError,
)


def _ring(tmp_path: Path) -> Path:
    path = tmp_path / "ring.gml"
    nx.write_gml(nx.cycle_graph(5), path)
    return path


def test_error_classes_carry_their_exit_code() -> None:
    assert UsageError.exit_code == 2
    for cls in (TpcStudyError, DataError, ZooDataError, SolverError, ExportError, PlanError,
                ClusterError):
        assert cls.exit_code == 1, cls
    assert TopologyFormatError("f", 3, "bad").exit_code == 1


def test_success_is_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topo", "stats", "--topo", str(_ring(tmp_path)), "--no-progress"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["maxflow", "--topo", "{tmp}/nothing-here", "--out", "{tmp}/o"], "no such file or folder"),
    (["maxflow", "--topo", "{ring}", "--heavy", "0", "--out", "{tmp}/o"], "heavy"),
    (["maxflow", "--topo", "{ring}", "--k", "0", "--out", "{tmp}/o"], "--k"),
    (["disjoint", "--topo", "{ring}", "--threads", "0", "--out", "{tmp}/o"], "--threads"),
    (["export", "--topo", "{ring}", "--out", "{tmp}/o", "--paths", "9"], "1 to 8 paths"),
    (["export", "--out", "{tmp}/o"], "needs --topo"),
    (["data", "list", "repetita", "--topo", "x"], None),  # argparse: unknown option
])
def test_usage_errors_are_two(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list,
                              message: str) -> None:
    ring = _ring(tmp_path)
    argv = [a.format(tmp=tmp_path, ring=ring) for a in argv]
    if message is None:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        return
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tpcstudy: error: ") and message in err and "Traceback" not in err


def test_runtime_failures_are_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ring = _ring(tmp_path)
    # bad data: a file that is not a topology
    bad = tmp_path / "bad.gml"
    bad.write_text("graph [ node [ id 0 ] edge [ source 0 target 7 ] ]\n")
    assert main(["export", "--topo", str(bad), "--out", str(tmp_path / "x")]) == 1
    assert "bad.gml:1: edge target 7 is not a node id" in capsys.readouterr().err
    # I/O: an output that cannot be written
    assert main(["topo", "stats", "--topo", str(ring), "--out", "/proc/none/stats.csv",
                 "--no-progress"]) == 1
    assert "/proc/none" in capsys.readouterr().err
    # a data set that cannot be fetched
    monkeypatch.setenv("TPCSTUDY_DATA", str(tmp_path / "data"))
    assert main(["data", "fetch", "zoo", "--mirror", str(tmp_path / "no-mirror")]) == 1
    assert "tpcstudy data fetch zoo --mirror DIR" in capsys.readouterr().err
    # a solver that fails

    def failing(*args: object, **kw: object) -> None:
        raise SolverError("highs: addCols failed")

    monkeypatch.setattr(cli_export, "path_table", failing)
    assert main(["export", "--topo", str(ring), "--out", str(tmp_path / "y")]) == 1
    assert "tpcstudy: error: highs: addCols failed" in capsys.readouterr().err


def test_interrupt_is_130(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_export, "path_table", interrupted)
    assert main(["export", "--topo", str(_ring(tmp_path)), "--out", str(tmp_path / "y")]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_exit_status_of_the_installed_command(tmp_path: Path) -> None:
    ring = _ring(tmp_path)
    ok = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo", str(ring)],
                        capture_output=True, text=True, cwd=tmp_path)
    usage = subprocess.run([sys.executable, "-m", "tpcstudy", "maxflow", "--topo", str(ring),
                            "--models", "bogus", "--out", str(tmp_path / "o")],
                           capture_output=True, text=True, cwd=tmp_path)
    runtime = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo",
                              str(ring), "--out", "/proc/none/x.csv"],
                             capture_output=True, text=True, cwd=tmp_path)
    assert (ok.returncode, usage.returncode, runtime.returncode) == (0, 2, 1)
    assert "Traceback" not in usage.stderr + runtime.stderr


def test_every_verb_is_registered_once() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(VERBS)

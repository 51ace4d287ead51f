"""Small things of issue 43: `data where`, helps without reST backticks, `--inspect` naming the
files that are there, `agent status` with no connection, paths/ ignored by git."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tpcstudy.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_data_where_is_path(capsys, zoo_installed):
    assert main(["data", "where", "zoo"]) == 0
    where = capsys.readouterr().out
    assert main(["data", "path", "zoo"]) == 0
    assert capsys.readouterr().out == where and where.strip()


def test_helps_have_no_rest_backticks(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        assert "``" not in p.format_help(), name


def test_inspect_of_a_missing_file_lists_the_real_ones(tmp_path, capsys):
    folder = tmp_path / "bpf-n_rto"
    folder.mkdir()
    for name in ("3_Seattle", "0_New_York"):
        (folder / f"{name}.bin").write_bytes(b"x")
    assert main(["export", "--inspect", str(folder / "Seattle.bin")]) == 1
    err = capsys.readouterr().err
    assert "cannot read (No such file or directory); matching: " in err
    assert "3_Seattle.bin" in err and "New_York" not in err
    # a wrong folder: the export's bpf-<variant>/ files are listed
    assert main(["export", "--inspect", str(tmp_path / "bpf-tpc" / "Denver.bin")]) == 1
    err = capsys.readouterr().err
    assert "3_Seattle.bin" in err and "0_New_York.bin" in err


def test_agent_status_with_no_connection(monkeypatch, capsys):
    from tpcstudy.hostagent import loader

    monkeypatch.setattr(loader, "saved_names", lambda: ["h1"])
    monkeypatch.setattr(loader, "read_saved", lambda n: SimpleNamespace(
        host="fd00::1", policy="slot", cgroup="/sys/fs/cgroup/x", state="loaded", pid=1))
    monkeypatch.setattr(loader, "status", lambda inst: {
        "counters": {"connections": 0, "srh_inserted": 0}, "entries": 4, "slots": [],
        "generation": 0})
    assert main(["agent", "status"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == ("h1 (fd00::1, 4 destinations, policy slot, table generation 0): no "
                           "connection seen yet (every counter 0)")
    assert not any(line.rstrip().endswith(":") for line in out.splitlines())


@pytest.mark.parametrize("folder", ["/paths/", "/results/", "/figures/"])
def test_outputs_of_the_readme_are_ignored(folder):
    assert folder in (ROOT / ".gitignore").read_text().splitlines()

"""``tpcstudy data fetch|path|list`` (and the ``tpcstudy zoo`` alias): installs from a mirror,
first use from the mirror variable, exit codes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tpcstudy.cli import main
from tpcstudy.io import REPETITA, ZOO
from tpcstudy.io.datasets import REPETITA_SUBSETS


def test_data_fetch_path_list(data_dir: Path, zoo_mirror: Path, repetita_mirror: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "path", "repetita"]) == 1  # not installed yet
    assert capsys.readouterr().out.strip() == str(data_dir / "repetita")
    assert main(["data", "fetch", "repetita", "--mirror", str(repetita_mirror)]) == 0
    printed = capsys.readouterr().out
    assert "installed 780 REPETITA files" in printed and "cite: S. Gay" in printed
    assert "arXiv:1710.08665" in printed
    assert main(["data", "path", "repetita"]) == 0 and REPETITA.installed()
    capsys.readouterr()
    assert main(["data", "list", "repetita"]) == 0
    names = capsys.readouterr().out.split()
    assert len(names) == 520 and "repetita/inverse-capacity/Abilene" in names
    # the zoo alias keeps working, with its bare names
    assert main(["zoo", "fetch", "--mirror", str(zoo_mirror)]) == 0 and ZOO.installed()
    capsys.readouterr()
    assert main(["zoo", "list"]) == 0
    zoo_names = capsys.readouterr().out.split()
    assert len(zoo_names) == 261 and "Abilene" in zoo_names
    assert main(["data", "list", "zoo"]) == 0 and "zoo/Kdl" in capsys.readouterr().out
    assert main(["zoo", "path"]) == 0 and main(["data", "fetch", "zoo"]) == 0  # already there


def test_data_fetch_failure_is_a_runtime_error(data_dir: Path, tmp_path: Path,
                                               repetita_mirror: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    mirror = tmp_path / "mirror"
    for sub in REPETITA_SUBSETS.values():
        shutil.copytree(repetita_mirror / sub, mirror / sub)
    (mirror / REPETITA_SUBSETS["unary"] / "Abilene.graph").write_bytes(b"corrupted")
    assert main(["data", "fetch", "repetita", "--mirror", str(mirror)]) == 1
    err = capsys.readouterr().err
    assert "Abilene.graph has SHA256" in err and "nothing installed" in err
    assert "Traceback" not in err and not REPETITA.installed()
    with pytest.raises(SystemExit) as exc:  # an unknown data set is a usage error
        main(["data", "fetch", "nope"])
    assert exc.value.code == 2


@pytest.mark.slow
def test_cli_zoo_first_use_fetches_from_env_mirror(data_dir: Path, zoo_mirror: Path,
                                                   tmp_path: Path) -> None:
    env = dict(os.environ, TPCSTUDY_ZOO_MIRROR=str(zoo_mirror))
    # run outside the source tree so the installed package (with its compiled core) is imported
    out = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo", "zoo/Kdl",
                          "--json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert '"pruned_nodes": 680' in out.stdout and '"pruned_links": 821' in out.stdout
    # the install is said on standard error (standard output stays the JSON)
    assert "Topology Zoo installed on first use into" in out.stderr and "261 files" in out.stderr
    again = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo",
                            "zoo/Abilene", "--json"], capture_output=True, text=True, env=env,
                           cwd=tmp_path)
    assert again.returncode == 0 and "first use" not in again.stderr
    bad = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo", "nope.gml"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "nope.gml" in bad.stderr


def test_data_list_long(zoo_installed: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["data", "list", "zoo", "--long"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["topology", "routers", "links", "pruned", "links", "edge",
                                "routers"]
    assert len(lines) == 262
    by = {ln.split()[0]: ln.split()[1:] for ln in lines[1:]}
    assert by["zoo/Abilene"] == ["11", "14", "11", "14", "5"]  # docs: Abilene stays whole
    assert by["zoo/Kdl"][2:4] == ["680", "821"]  # as topo stats (test_cli_zoo_first_use...)

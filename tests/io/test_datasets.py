"""tpcstudy.io.datasets: installing the Topology Zoo and REPETITA from a mirror folder, over real
HTTP on 127.0.0.1 (folders and the Zoo's archive), never half-installed (a corrupted or missing
file installs nothing, a previous good install stays), and the ``--topo`` names they give."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from tpcstudy import UsageError, ZooDataError, read_topology
from tpcstudy.errors import RepetitaDataError
from tpcstudy.io import REPETITA, ZOO, topology_files
from tpcstudy.io.datasets import REPETITA_SUBSETS, REPETITA_URL, ZOO_URL

from helpers import serve_folder

INVERSE = REPETITA_SUBSETS["inverse-capacity"]


@pytest.fixture()
def zoo_www(tmp_path: Path, zoo_mirror: Path) -> Path:
    """A web root holding the Zoo as gml/NAME.gml and gml.tar.gz."""
    root = tmp_path / "www"
    (root / "gml").mkdir(parents=True)
    for name in ZOO.manifest():
        shutil.copy(zoo_mirror / name, root / "gml" / name)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ZOO.manifest():
            tar.add(root / "gml" / name, arcname=f"gml/{name}")
    (root / "gml.tar.gz").write_bytes(buf.getvalue())
    return root


def _leftovers(data_dir: Path) -> list:
    return [p.name for p in data_dir.iterdir() if p.name.startswith(".")] if data_dir.exists() else []


# ----------------------------------------------------------------------------- the Zoo
def test_zoo_manifest_has_the_261_canonical_files() -> None:
    m = ZOO.manifest()
    assert len(m) == 261 and "Kdl.gml" in m and all(len(d) == 64 for d in m.values())


def test_zoo_fetch_from_local_folder(data_dir: Path, zoo_mirror: Path) -> None:
    target = ZOO.fetch(str(zoo_mirror))
    assert ZOO.installed() and target == data_dir / "topologyzoo"
    assert len(list(target.glob("*.gml"))) == 261
    assert ZOO.resolve("Abilene") == [target / "Abilene.gml"]
    assert ZOO.resolve("abilene.gml") == [target / "Abilene.gml"]
    assert topology_files("zoo/Abilene") == [target / "Abilene.gml"]
    with pytest.raises(UsageError, match="did you mean zoo/Abilene"):
        ZOO.resolve("Abilen")


def test_zoo_fetch_over_http_folder_and_archive(data_dir: Path, zoo_www: Path) -> None:
    with serve_folder(zoo_www) as url:
        ZOO.fetch(url + "/gml/")
        assert len(list(ZOO.folder.glob("*.gml"))) == 261
        ZOO.fetch(url + "/gml.tar.gz", force=True)
    assert len(list(ZOO.folder.glob("*.gml"))) == 261 and not _leftovers(data_dir)


def test_zoo_corrupted_file_over_http_installs_nothing(data_dir: Path, zoo_www: Path) -> None:
    bad = zoo_www / "gml" / "Abilene.gml"
    bad.write_bytes(bad.read_bytes().replace(b"Chicago", b"Chicagx"))
    with serve_folder(zoo_www) as url, \
            pytest.raises(ZooDataError, match="Abilene.gml has SHA256 .* nothing installed"):
        ZOO.fetch(url + "/gml/")
    assert not ZOO.installed() and not ZOO.folder.exists() and not _leftovers(data_dir)


def test_zoo_corrupted_fetch_keeps_a_previous_good_install(data_dir: Path, zoo_www: Path,
                                                           zoo_mirror: Path) -> None:
    ZOO.fetch(str(zoo_mirror))
    (zoo_www / "gml" / "Kdl.gml").write_bytes(b"graph [ ]")
    with serve_folder(zoo_www) as url, pytest.raises(ZooDataError, match="Kdl.gml"):
        ZOO.fetch(url + "/gml/", force=True)
    assert ZOO.installed()
    assert (ZOO.folder / "Kdl.gml").read_bytes() == (zoo_mirror / "Kdl.gml").read_bytes()


def test_zoo_missing_file_in_mirror(data_dir: Path, tmp_path: Path, zoo_mirror: Path) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in list(ZOO.manifest())[:10]:
        shutil.copy(zoo_mirror / name, partial / name)
    with pytest.raises(ZooDataError, match="251 of 261 Topology Zoo files missing"):
        ZOO.fetch(str(partial))
    assert not ZOO.installed()


def test_zoo_no_network_no_mirror_says_how(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TPCSTUDY_ZOO_URL", "http://127.0.0.1:9/gml.tar.gz")  # nothing listens there
    with pytest.raises(ZooDataError) as info:
        ZOO.ensure_installed()
    msg = str(info.value)
    assert "tpcstudy data fetch zoo --mirror DIR" in msg and ZOO_URL in msg


# ----------------------------------------------------------------------------- REPETITA
def test_repetita_manifest() -> None:
    m = REPETITA.manifest()
    assert len(m) == 780
    assert sum(n.endswith(".graph") for n in m) == 520 and sum("demands" in n for n in m) == 260
    assert f"{INVERSE}/Cogentco.0000.demands" in m and "Kdl" not in " ".join(m)
    assert REPETITA_URL.startswith("https://raw.githubusercontent.com/svissicchio/Repetita/"
                                   "60e679c2f34d9b65b7f256ff6f6963938fa040f9/data/")


def test_repetita_fetch_from_mirror_folder_and_specs(data_dir: Path,
                                                     repetita_mirror: Path) -> None:
    target = REPETITA.fetch(str(repetita_mirror))
    assert REPETITA.installed() and target == data_dir / "repetita"
    inverse = topology_files("repetita/inverse-capacity")
    unary = topology_files("repetita/unary")
    assert len(inverse) == len(unary) == 260
    assert inverse[0] == target / INVERSE / "Aarnet.graph"
    assert topology_files(f"repetita/{INVERSE}/Abilene") == [target / INVERSE / "Abilene.graph"]
    one = read_topology("repetita/inverse-capacity/cogentco", capacity="file", weight="file")
    assert one.name == "Cogentco" and one.num_nodes == 197
    assert (target / INVERSE / "Cogentco.0000.demands").is_file()  # --demands auto finds it
    for spec, match in (("repetita", "name a subset"), ("repetita/other", "name a subset"),
                        ("repetita/unary/Cogentko", "did you mean repetita/unary/Cogentco")):
        with pytest.raises(UsageError, match=match):
            topology_files(spec)


def test_repetita_first_use_installs_from_the_env_mirror(data_dir: Path, repetita_mirror: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TPCSTUDY_REPETITA_MIRROR", str(repetita_mirror))
    assert not REPETITA.installed()
    assert topology_files("repetita/unary/Abilene")[0].is_file() and REPETITA.installed()


@pytest.mark.slow
def test_repetita_over_http_and_corruption(data_dir: Path, tmp_path: Path,
                                           repetita_mirror: Path) -> None:
    www = tmp_path / "www"
    for sub in REPETITA_SUBSETS.values():
        shutil.copytree(repetita_mirror / sub, www / sub)
    with serve_folder(www) as url:
        REPETITA.fetch(url + "/")
        assert REPETITA.installed() and len(list((REPETITA.folder / INVERSE).iterdir())) == 520
        good = (REPETITA.folder / INVERSE / "Abilene.graph").read_bytes()
        bad = www / INVERSE / "Abilene.graph"
        bad.write_bytes(bad.read_bytes().replace(b"9953280", b"9953281"))
        with pytest.raises(RepetitaDataError, match=f"{INVERSE}/Abilene.graph has SHA256 .* "
                                                   "nothing installed"):
            REPETITA.fetch(url, force=True)
    # the good install stays, whole, and nothing is left over
    assert REPETITA.installed() and (REPETITA.folder / INVERSE / "Abilene.graph").read_bytes() == good
    assert not _leftovers(data_dir)


def test_repetita_corrupted_mirror_installs_nothing(data_dir: Path, tmp_path: Path,
                                                    repetita_mirror: Path) -> None:
    mirror = tmp_path / "mirror"
    for sub in REPETITA_SUBSETS.values():
        shutil.copytree(repetita_mirror / sub, mirror / sub)
    (mirror / REPETITA_SUBSETS["unary"] / "Zamren.graph").write_bytes(b"NODES 0\n")
    with pytest.raises(RepetitaDataError, match="Zamren.graph has SHA256"):
        REPETITA.fetch(str(mirror))
    (mirror / INVERSE / "Abilene.0000.demands").unlink()
    with pytest.raises(RepetitaDataError, match="1 of 780 REPETITA files missing"):
        REPETITA.fetch(str(mirror))
    assert not REPETITA.installed() and not REPETITA.folder.exists() and not _leftovers(data_dir)


def test_repetita_unreachable_says_how(data_dir: Path) -> None:
    with pytest.raises(RepetitaDataError) as info:
        REPETITA.fetch("http://127.0.0.1:9/")  # nothing listens there
    assert "tpcstudy data fetch repetita --mirror DIR" in str(info.value)

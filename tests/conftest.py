"""Shared fixtures: the data sets, found the way the product finds them (see helpers.py).

The Topology Zoo and REPETITA are the installed ones (under ``TPCSTUDY_DATA``, as the README's
first command leaves them), else installed on first use from ``TPCSTUDY_ZOO_MIRROR`` /
``TPCSTUDY_REPETITA_MIRROR``. A test that needs a data set that is neither installed nor
mirrored is skipped with a message saying how to get it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tpcstudy.io import REPETITA, ZOO

from helpers import installed_dataset, mirror_folder


@pytest.fixture(scope="session")
def zoo_installed() -> Path:
    """The installed Topology Zoo folder (261 ``NAME.gml``)."""
    return installed_dataset(ZOO)


@pytest.fixture(scope="session")
def zoo_mirror(zoo_installed: Path) -> Path:
    """A folder of the Zoo's ``NAME.gml`` files to install from: ``TPCSTUDY_ZOO_MIRROR`` when
    it is a folder, else the installed Zoo itself."""
    return mirror_folder(ZOO) or zoo_installed


@pytest.fixture(scope="session")
def zoo_graphml() -> Path:
    """The Zoo's GraphML files (``graphml/NAME.graphml`` in the ``TPCSTUDY_ZOO_MIRROR`` folder;
    the product installs the GML files only)."""
    mirror = mirror_folder(ZOO)
    if mirror is None or not (mirror / "graphml").is_dir():
        pytest.skip("the Zoo's GraphML files: TPCSTUDY_ZOO_MIRROR is not a folder with graphml/")
    return mirror / "graphml"


@pytest.fixture()
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data folder, no mirror variables: every install starts from nothing."""
    monkeypatch.setenv("TPCSTUDY_DATA", str(tmp_path / "data"))
    for var in ("TPCSTUDY_ZOO_MIRROR", "TPCSTUDY_ZOO_URL", "TPCSTUDY_REPETITA_MIRROR"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "data"


@pytest.fixture(scope="session")
def repetita() -> Path:
    """The installed REPETITA folder (``2016TopologyZooUCL_inverseCapacity/``, ``..._unary/``)."""
    return installed_dataset(REPETITA)


@pytest.fixture(scope="session")
def repetita_mirror(repetita: Path) -> Path:
    """A folder with REPETITA's layout to install from: ``TPCSTUDY_REPETITA_MIRROR`` when it is
    a folder, else the installed set itself."""
    return mirror_folder(REPETITA) or repetita

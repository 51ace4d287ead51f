"""Shared fixtures: the shared data folder beside the project, and a Zoo installed from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ZOO_MIRROR = SHARED / "topologyzoo"
REPETITA = SHARED / "repetita"
DATA = Path(__file__).resolve().parent / "data"

# Subprocesses started by the tests (``python -c``, ``python -m tpcstudy``) must import the
# installed package, not the source folder of the current directory (which has no compiled core
# in a non-editable install): Python 3.11+ then leaves the current directory off sys.path.
os.environ["PYTHONSAFEPATH"] = "1"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


@pytest.fixture(scope="session")
def zoo_mirror() -> Path:
    return _need(ZOO_MIRROR)


@pytest.fixture(scope="session")
def repetita() -> Path:
    return _need(REPETITA)


@pytest.fixture(scope="session")
def zoo_installed(tmp_path_factory: pytest.TempPathFactory, zoo_mirror: Path) -> Path:
    """The Zoo installed from the local mirror into a private data folder, for the whole session."""
    from tpcstudy.io import ZOO

    data = tmp_path_factory.mktemp("tpcdata")
    old = {k: os.environ.get(k) for k in ("TPCSTUDY_DATA", "TPCSTUDY_ZOO_MIRROR")}
    os.environ["TPCSTUDY_DATA"] = str(data)
    os.environ["TPCSTUDY_ZOO_MIRROR"] = str(zoo_mirror)
    ZOO.fetch()
    yield ZOO.folder
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v

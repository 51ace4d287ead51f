"""tpcstudy.study.provenance: meta.json records the study (kind, config, seeds, solver) and the
environment, resumes the same study and refuses another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpcstudy import __version__
from tpcstudy.errors import InputFileError, UsageError
from tpcstudy.study import read_meta, write_meta


def test_write_meta_records_environment_and_refuses_other_config(tmp_path: Path) -> None:
    meta = write_meta(tmp_path, {"k": 6, "x": [0.01, 0.05]}, kind="maxflow", seeds=[0, 1],
                      solver="highs")
    on_disk = json.loads((tmp_path / "meta.json").read_text())
    assert on_disk == read_meta(tmp_path)
    assert on_disk["study"] == {"kind": "maxflow", "config": {"k": 6, "x": [0.01, 0.05]},
                                "seeds": [0, 1], "solver": "highs"}
    for key in ("python", "tpcstudy", "packages", "git_commit", "platform", "started"):
        assert key in on_disk
    assert on_disk["packages"]["numpy"] and on_disk["tpcstudy"] == __version__
    assert meta["runs"][0]["started"] == on_disk["started"]
    # same settings (tuples compare equal to lists): resumes, one more run recorded
    again = write_meta(tmp_path, {"x": (0.01, 0.05), "k": 6}, kind="maxflow", seeds=(0, 1),
                       solver="highs")
    assert len(again["runs"]) == 2 and again["started"] == on_disk["started"]
    with pytest.raises(UsageError, match=r"config\.k"):
        write_meta(tmp_path, {"k": 5, "x": [0.01, 0.05]}, kind="maxflow", seeds=[0, 1],
                   solver="highs")
    with pytest.raises(UsageError, match="solver"):
        write_meta(tmp_path, {"k": 6, "x": [0.01, 0.05]}, kind="maxflow", seeds=[0, 1],
                   solver="glop")
    with pytest.raises(UsageError, match="kind"):
        write_meta(tmp_path, {"k": 6, "x": [0.01, 0.05]}, kind="disjoint", seeds=[0, 1],
                   solver="highs")
    fresh = write_meta(tmp_path, {"k": 5}, solver="glop", overwrite=True)
    assert fresh["study"]["config"] == {"k": 5} and len(fresh["runs"]) == 1


def test_folders_from_before_the_kind_was_recorded_resume(tmp_path: Path) -> None:
    meta = write_meta(tmp_path, {"k": 6}, kind="maxflow", seeds=[0], solver="highs")
    del meta["study"]["kind"]
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    again = write_meta(tmp_path, {"k": 6}, kind="maxflow", seeds=[0], solver="highs")
    assert len(again["runs"]) == 2 and again["study"]["kind"] == "maxflow"


def test_read_meta(tmp_path: Path) -> None:
    assert read_meta(tmp_path) == {}
    (tmp_path / "meta.json").write_text("{oops")
    with pytest.raises(InputFileError, match="unreadable meta.json"):
        read_meta(tmp_path)

"""Exported tables are data, read as root: a folder with a space in its path verifies; a pin path
or a batch file name crafted to run a command is refused or read as a name, and runs nothing;
bounded reads refuse /dev/zero and a FIFO at once (``export --inspect``)."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from tpcstudy import path_table, prune, read_topology, write_paths
from tpcstudy.emulate.experiments.verify import check_maps
from tpcstudy.errors import ExportError, InputFileError
from tpcstudy.export.decode import inspect_file


@pytest.fixture(scope="module")
def table(tmp_path_factory, zoo_installed):
    t = prune(read_topology("zoo/Abilene"))
    out = tmp_path_factory.mktemp("tables") / "a table with spaces"
    write_paths(path_table(t), out, formats=["json", "bpf"])
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("emulator")
def test_a_folder_with_a_space_verifies(table):
    maps = check_maps(table)
    assert len(maps) == 5 and all(m["loaded"] and m["identical"] for m in maps), maps


@pytest.mark.slow
@pytest.mark.usefixtures("emulator")
def test_crafted_pin_and_file_name_run_nothing(table, tmp_path):
    marker = tmp_path / "F"
    bad = tmp_path / "bad"
    shutil.copytree(table, bad)
    d = bad / "bpf-n_rto"
    index = json.loads((d / "index.json").read_text())
    src = next(iter(index["sources"]))
    batch = d / index["sources"][src]["batch"]
    text = batch.read_text().replace("/sys/fs/bpf/tpc/dest_map",
                                     f"/sys/fs/bpf/a&id>{marker}&true/m")
    batch.write_text(text)
    # a second source whose batch file has a name made to be pasted into a shell
    src2 = list(index["sources"])[1]
    evil = f"S||id>{marker.name}||x.batch"
    os.rename(d / index["sources"][src2]["batch"], d / evil)
    index["sources"][src2]["batch"] = evil
    (d / "index.json").write_text(json.dumps(index))
    cwd = os.getcwd()
    os.chdir(tmp_path)  # where a pasted 'id>F' would write
    try:
        maps = {m["source"]: m for m in check_maps(bad)}
    finally:
        os.chdir(cwd)
    assert not marker.exists() and not (tmp_path / marker.name).exists()
    assert not maps[src]["loaded"] and "is not a plain path under /sys/fs/bpf/" in maps[src]["error"]
    assert maps[src2]["loaded"] and maps[src2]["identical"]  # a file name is only a name


def test_inspect_refuses_what_is_not_a_table_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", "/dev/urandom", str(fifo)):
        t0 = time.monotonic()
        with pytest.raises(InputFileError, match="not a regular file"):
            inspect_file(path)
        assert time.monotonic() - t0 < 1.0
    big = tmp_path / "big.batch"
    with open(big, "wb") as fh:
        fh.truncate((64 << 20) + 1)
    with pytest.raises(InputFileError, match="more than the"):
        inspect_file(big)


def test_inspect_names_empty_files_and_repeated_keys(tmp_path, table):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(ExportError, match="an empty file"):
        inspect_file(empty)
    src = sorted((table / "bpf-n_rto").glob("*.batch"))[0]
    lines = src.read_text().splitlines(keepends=True)
    update = next(ln for ln in lines if ln.startswith("map update"))
    twice = tmp_path / "twice.batch"
    twice.write_text("".join(lines) + update)
    doc = inspect_file(twice)
    flagged = [e for e in doc["entries"] if any("appears more than once" in p
                                                 for p in e["problems"])]
    assert len(flagged) == 1

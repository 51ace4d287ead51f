"""Fuzzing the export decoder (``--inspect``, decode_value): any bytes give a table or the
project's own error, never another exception, never a hang."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tpcstudy import TpcStudyError, path_table, prune, read_topology, write_paths
from tpcstudy.export import decode_value, inspect_file

from helpers import FUZZ_SETTINGS, deadline, mutated


# ----------------------------------------------------------------- the export decoder
@pytest.fixture(scope="module")
def abilene_export(tmp_path_factory, zoo_installed):
    """A real binary and batch file of the exp3_lowest_delay variant, to mutate."""
    out = tmp_path_factory.mktemp("export")
    table = path_table(prune(read_topology(zoo_installed / "Abilene.gml")), k=4, paths=5)
    write_paths(table, out, formats="bpf", variant="exp3_lowest_delay")
    folder = out / "bpf-exp3_lowest_delay"
    return (folder / "Seattle.bin").read_bytes(), (folder / "Seattle.batch").read_bytes()


def _inspect(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    with deadline(10):
        try:
            inspect_file(p)
        except TpcStudyError:
            pass


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_export_binary(tmp_path, abilene_export, data):
    _inspect(tmp_path, "f.bin", data.draw(mutated(abilene_export[0])))


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_export_batch(tmp_path, abilene_export, data):
    _inspect(tmp_path, "f.batch", data.draw(mutated(abilene_export[1])))


@FUZZ_SETTINGS
@given(blob=st.binary(max_size=4000), variant=st.sampled_from(
    ["n_rto", "exp3_lowest_completion", "exp3_lowest_delay"]))
def test_fuzz_decode_value(blob, variant):
    try:
        decode_value(blob, variant)
    except TpcStudyError:
        pass


def test_corrupted_weight_exponent_is_reported_not_raised(abilene_export):
    """Found by the fuzzer: an exp3 weight whose exponent overflows a float."""
    import struct

    value = bytearray(abilene_export[0][56 + 8: 56 + 8 + 1684])  # first record after the header
    assert decode_value(bytes(value), "exp3_lowest_delay").weights[0] == 1.0
    struct.pack_into("<I", value, 1556 + 8, 0xFFFFFFFF)
    dec = decode_value(bytes(value), "exp3_lowest_delay")
    assert any("weight[0]" in p for p in dec.problems)

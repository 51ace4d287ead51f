"""The host agent's loader without root: install records read back as data (every field
checked), table sources refused by name, the weights the export now writes (round trip through
the decoder), the longest SRH of a table."""

from __future__ import annotations

import json
import math

import pytest

from tpcstudy import UsageError
from tpcstudy.errors import ExportError
from tpcstudy.export.layout import WEIGHT_ONE, decode_value, encode_value, weight_fields
from tpcstudy.export.table import PathRecord
from tpcstudy.hostagent import loader


def _record(**over):
    doc = {"name": "h1", "host": "Chicago", "table": "/t", "variant": "n_rto",
           "value_size": 1556, "entries": 4, "policy": "first", "mtu": 1500,
           "cgroup": str(loader.CGROUP_ROOT / "tpc" / "h1"), "state": "loaded",
           "cgroups_created": [[str(loader.CGROUP_ROOT / "tpc" / "h1"), 1234]],
           "netns": None, "interfaces": ["eth0"], "clsact_created": ["eth0"], "private": False,
           "pin_dir": "/sys/fs/bpf/tpcstudy/h1", "pin_dir_ino": 77,
           "filters": [{"dev": "eth0", "handle": 1}],
           "prog_ids": {"tpc_sockops": 7, "tpc_egress": 8}, "map_ids": {"dest_map": 9}}
    doc.update(over)
    return doc


def test_install_records_round_trip_and_refusals():
    inst = loader.Install.from_json(_record(), "r.json")
    assert loader.Install.from_json(json.loads(json.dumps(inst.to_json())), "x") == inst
    bad = [({"prog_ids": {"tpc_sockops": -1}}, "non-id"),
           ({"pin_dir": "/etc/h1"}, "is not /sys/fs/bpf/.../h1"),
           ({"pin_dir": "/sys/fs/bpf/../../etc/h1"}, "is not /sys/fs/bpf"),
           ({"pin_dir": "/sys/fs/bpf/othertool"}, "is not /sys/fs/bpf/.../h1"),
           ({"cgroups_created": [["/etc", 1]]}, "not under"),
           ({"filters": [{"dev": "eth0", "handle": -1}]}, "filters holds"),
           ({"interfaces": ["../x"]}, "interface"),
           ({"state": "odd"}, "state"),
           ({"name": "../x"}, "agent name"),
           ({"surprise": 1}, "unknown field"),
           ({"cgroup": "/etc"}, "not under"),
           ({"cgroup": str(loader.CGROUP_ROOT)}, "root cgroup"),
           ({"mtu": "1500"}, "mtu is not an integer"),
           ({"netns": 3}, "netns is not a name")]
    for over, words in bad:
        with pytest.raises(UsageError, match=words):
            loader.Install.from_json(_record(**over), "r.json")
    doc = _record()
    del doc["host"]
    with pytest.raises(UsageError, match="without 'host'"):
        loader.Install.from_json(doc, "r.json")


def test_table_source_names_what_is_wrong(tmp_path):
    with pytest.raises(UsageError, match="no bpf-<variant>/index.json"):
        loader.table_source(tmp_path, "Chicago")
    d = tmp_path / "bpf-n_rto"
    d.mkdir()
    (d / "index.json").write_text(json.dumps({"variant": "n_rto", "sources": {
        "Seattle": {"batch": "Seattle.batch"}}}))
    with pytest.raises(UsageError, match="no table for host 'Chicago' \\(sources: Seattle\\)"):
        loader.table_source(tmp_path, "Chicago")
    (d / "index.json").write_text(json.dumps({"variant": "n_rto", "sources": {
        "Seattle": {"batch": "../../etc/shadow"}}}))
    with pytest.raises(ExportError, match="is not a file name inside bpf-n_rto"):
        loader.table_source(tmp_path, "Seattle")


def test_weights_round_trip_through_the_decoder():
    import ipaddress

    assert weight_fields(1.0) == WEIGHT_ONE and weight_fields(0.0) == (0, 0)
    for w in (3.0, 0.125, 7.5, 1e-6, 1234.5):
        m, e = weight_fields(w)
        assert math.ldexp(m, e - 1024 - 63) == pytest.approx(w, rel=1e-15)
    paths = [PathRecord(["a", "b"], [ipaddress.IPv6Address("fc00::b")], ["b"], 1, 1, 1,
                        weight=w) for w in (5.0, 3.0)]
    val = encode_value("fd00:1::/64", paths, "exp3_lowest_completion")
    dec = decode_value(val, "exp3_lowest_completion")
    assert dec.weights[:2] == [5.0, 3.0]
    assert dec.weights[2:] == [1.0] * 6  # empty slots keep the agent's 1.0
    assert loader._max_srh([(b"k" * 8, val)]) == 8 + 16 * 2  # one segment + segments[0]
    with pytest.raises(Exception, match="weight"):
        weight_fields(-1.0)

"""The BPF C file and the Python side say the same numbers (no root, no compiler): its
constants against the export's layout, its map names against what the loader pins and owns,
its slot-policy codes against :data:`tpcstudy.hostagent.maps.SLOT_POLICIES`, its counters
against :data:`~tpcstudy.hostagent.maps.STATS`, its config struct against ``CONFIG``."""

from __future__ import annotations

import re

from tpcstudy.export import layout as L
from tpcstudy.hostagent import maps as M
from tpcstudy.hostagent.loader import _OUR_MAPS
from tpcstudy.hostagent.program import LAYOUTS, SOURCE

C = SOURCE.read_text(encoding="utf-8")


def _define(name: str) -> int:
    m = re.search(rf"^#define {name} (\w+)", C, re.M)
    assert m, f"no #define {name} in {SOURCE.name}"
    return int(m.group(1))


def _enum(first: str) -> list:
    """The names of the enum holding ``first``, in order (values checked consecutive)."""
    body = next(b for b in re.findall(r"enum\s*\{(.*?)\};", C, re.S) if first in b)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names, at = [], 0
    for item in (i.strip() for i in body.split(",")):
        if not item:
            continue
        name, _, value = (s.strip() for s in item.partition("="))
        at = int(value) if value else at
        names.append((name, at))
        at += 1
    return names


def test_constants_match_the_layout():
    assert _define("MAX_PATHS") == L.MAX_PATHS
    assert _define("SRH_ADDRESSES") == L.SRH_ADDRESSES
    assert _define("SRH_FIELD") == L.SRH_SIZE == M.SRH_FIELD
    assert _define("SRH_TYPE") == L.SRH_TYPE
    assert _define("VALUE_SIZE") == L.BASE_SIZE  # the default build: the n_rto layout
    sizes = {int(s) for s in re.findall(r"VALUE_SIZE == (\d+)", C)}
    assert sizes == {v.value_size for v in L.VARIANTS.values()} == set(LAYOUTS)
    assert "srh.type == SRH_TYPE" in C and "type == 4" not in C


def test_map_names():
    declared = re.findall(r"\}\s*(\w+)\s+SEC\(\"\.maps\"\)", C)
    declared += re.findall(r",\s*(\w+)\s+SEC\(\"\.maps\"\)", C)  # a second map of one type
    assert declared[0] == "MAP_NAME"
    assert re.search(r"^#define MAP_NAME dest_map$", C, re.M)
    assert sorted(declared[1:]) == sorted(_OUR_MAPS)
    assert set(LAYOUTS.values()) == {v.map_name for v in L.VARIANTS.values()}
    assert LAYOUTS == {v.value_size: v.map_name for v in L.VARIANTS.values()}


def test_slot_policy_codes_and_counters():
    policies = _enum("POLICY_FIRST")
    assert {n[len("POLICY_"):].lower(): v for n, v in policies} == M.SLOT_POLICIES
    stats = [n for n, _ in _enum("ST_CONNECTIONS") if n != "ST_COUNT"]
    c_names = [{"no_valid": "no_valid_slot"}.get(s, s) for s in
               (n[len("ST_"):].lower() for n in stats)]
    assert c_names == list(M.STATS)  # by index: tpc_stats is read by position
    assert dict(_enum("ST_CONNECTIONS"))["ST_COUNT"] >= len(M.STATS)


def test_config_struct_is_nine_u32():
    body = re.search(r"struct config \{(.*?)\};", C, re.S).group(1)
    fields = re.findall(r"__u32 (\w+);", body)
    assert len(fields) == len(re.findall(r"__\w+ \w+;", body)) == 9
    assert M.CONFIG.format == "<9I"
    assert fields[-3:] == ["on_update", "room", "rto_min_us"]
    assert {n[len("ON_UPDATE_"):].lower(): v for n, v in _enum("ON_UPDATE_REPATH")} == M.ON_UPDATE
    assert {n[len("ROOM_"):].lower(): v for n, v in _enum("ROOM_PATH")} == M.ROOMS


def test_rto_min_option_is_the_kernels():
    """TCP_BPF_RTO_MIN is 1004 in the uapi header (Linux >= 5.10), the header the program is
    built against when it is installed (libbpf-dev's linux-libc-dev)."""
    from pathlib import Path

    assert _define("TCP_BPF_RTO_MIN_") == 1004
    uapi = Path("/usr/include/linux/bpf.h")
    if uapi.is_file():
        m = re.search(r"TCP_BPF_RTO_MIN\s*=\s*(\d+)", uapi.read_text(errors="replace"))
        assert m is None or int(m.group(1)) == 1004
    assert "set_rto_min(skops, cfg);" in C  # where a connection is given its path (start())

"""tpcstudy.export.layout: the TPC agent's SRH map values byte by byte (docs/srh-map.md §2-3),
the limits the agent sets, and decoding."""

from __future__ import annotations

import ipaddress
import struct

import pytest

from tpcstudy import export as X
from tpcstudy.errors import ExportError

from helpers import path_record as _rec

IP = ipaddress.IPv6Address


NET = ipaddress.IPv6Network


# ----------------------------------------------------------------- the value layout, by hand
PREFIX = NET("fd00:1:2:3::/64")


W1, W2, EG = IP("fc00::a1"), IP("fc00::b2"), IP("fc00::e9")


PATHS = [_rec([EG], bw=1000, delay=7.4), _rec([W1, W2, EG], bw=155.52, delay=21.6)]


def _expected(value_size: int, weights: bool) -> bytes:
    """The value for PATHS written field by field from the spec's offsets."""
    out = bytearray(value_size)
    struct.pack_into("16s", out, 0, PREFIX.network_address.packed)      # dest
    struct.pack_into("<I", out, 16, 1000)                              # max_reward
    # slot 0 @ 20: srh_id 0, is_valid 1, curr_bw 1000, delay 7 (rounded)
    struct.pack_into("<IIQQ", out, 20, 0, 1, 1000, 7)
    # SRH @ 20 + 24 = 44: nexthdr 0, hdrlen 2*(1+1)=4, type 4, segments_left 1, first_segment 1
    struct.pack_into("<BBBBBBH", out, 44, 0, 4, 4, 1, 1, 0, 0)
    # segments[0] @ 52 stays zero; segments[1] @ 68 = the egress
    struct.pack_into("16s", out, 68, EG.packed)
    # slot 1 @ 212: srh_id 1, valid, bw round(155.52)=156, delay round(21.6)=22
    struct.pack_into("<IIQQ", out, 212, 1, 1, 156, 22)
    # SRH @ 236: n = 3 -> hdrlen 8, segments_left = first_segment = 3
    struct.pack_into("<BBBBBBH", out, 236, 0, 8, 4, 3, 3, 0, 0)
    # segments[0] @ 244 zero; [1] @ 260 = egress (last waypoint), [2] @ 276 = W2, [3] @ 292 = W1
    struct.pack_into("16s", out, 260, EG.packed)
    struct.pack_into("16s", out, 276, W2.packed)
    struct.pack_into("16s", out, 292, W1.packed)
    if weights:
        for i in range(8):  # weight[i] @ 1556 + 12 i: 1.0 = mantissa 2^63, exponent 1024
            struct.pack_into("<QI", out, 1556 + 12 * i, 0x8000000000000000, 1024)
    # last_srtt @ 1652 (exp3_lowest_delay): zero
    return bytes(out)


@pytest.mark.parametrize("variant,size,weights", [
    ("n_rto", 1556, False), ("exp3_lowest_completion", 1652, True),
    ("exp3_lowest_delay", 1684, True)])
def test_value_bytes_by_hand(variant, size, weights):
    got = X.encode_value(PREFIX, PATHS, variant)
    assert len(got) == size == X.VARIANTS[variant].value_size
    assert got == _expected(size, weights)


def test_value_fields_one_by_one():
    v = X.encode_value(PREFIX, PATHS, "exp3_lowest_delay")
    assert v[0:16] == bytes.fromhex("fd000001000200030000000000000000")
    for slot, n in ((0, 1), (1, 3)):
        off = 20 + 192 * slot
        assert struct.unpack_from("<II", v, off) == (slot, 1)
        srh = off + 24
        nexthdr, hdrlen, typ, left, first, flags, tag = struct.unpack_from("<BBBBBBH", v, srh)
        assert (nexthdr, hdrlen, typ, left, first, flags, tag) == (0, 2 * (n + 1), 4, n, n, 0, 0)
        addrs = [v[srh + 8 + 16 * k: srh + 24 + 16 * k] for k in range(10)]
        assert addrs[0] == bytes(16)                       # the kernel fills segments[0]
        assert addrs[1] == EG.packed                       # last waypoint = egress
        assert all(a == bytes(16) for a in addrs[n + 1:])  # unused address slots
    srh1 = 20 + 192 + 24
    assert v[srh1 + 8 + 16 * 3: srh1 + 8 + 16 * 4] == W1.packed  # first hop in segments[n]
    assert v[20 + 192 * 2:1556] == bytes(192 * 6)                # unused slots all zero
    assert all(struct.unpack_from("<QI", v, 1556 + 12 * i) == (1 << 63, 1024) for i in range(8))
    assert v[1652:1684] == bytes(32)                              # last_srtt


def test_decode_is_the_inverse():
    for variant in X.VARIANTS:
        d = X.decode_value(X.encode_value(PREFIX, PATHS, variant), variant)
        assert d.dest == PREFIX.network_address and d.max_reward == 1000 and not d.problems
        assert [p.segments for p in d.paths] == [[EG], [W1, W2, EG]]
        assert [(p.bw_mbps, p.delay_ms) for p in d.paths] == [(1000, 7), (156, 22)]
        if variant != "n_rto":
            assert d.weights == [1.0] * 8
    with pytest.raises(ExportError, match="1684 bytes, got 1556"):
        X.decode_value(X.encode_value(PREFIX, PATHS, "n_rto"), "exp3_lowest_delay")
    bad = bytearray(X.encode_value(PREFIX, PATHS, "n_rto"))
    bad[20 + 24 + 8] = 1  # segments[0] of slot 0
    assert any("segments[0]" in p for p in X.decode_value(bytes(bad), "n_rto").problems)


# ----------------------------------------------------------------- validation
def test_segment_limit():
    nine = [f"fc00::{i + 1:x}" for i in range(9)]
    v = X.encode_value(PREFIX, [_rec(nine)], "n_rto")
    assert X.decode_value(v, "n_rto").paths[0].segments == [IP(a) for a in nine]
    assert v[20 + 24 + 1] == 20  # hdrlen 2 * (9 + 1)
    with pytest.raises(ExportError, match="10 waypoints .* at most 9"):
        X.encode_value(PREFIX, [_rec(nine + ["fc00::ff"])], "n_rto")


def test_path_limit_and_empty():
    eight = [_rec([f"fc00::{i + 1:x}"]) for i in range(8)]
    assert len(X.decode_value(X.encode_value(PREFIX, eight), "n_rto").paths) == 8
    with pytest.raises(ExportError, match="9 paths; the agent holds at most 8"):
        X.encode_value(PREFIX, eight + [_rec(["fc00::99"])])
    with pytest.raises(ExportError, match="no segment.*'::'"):
        X.encode_value(PREFIX, [_rec([EG]), _rec([])])
    with pytest.raises(ExportError, match="no path"):
        X.encode_value(PREFIX, [])
    with pytest.raises(ExportError, match="not a usable IPv6"):
        X.encode_value(PREFIX, [_rec(["::"])])


def test_wide_prefix():
    with pytest.raises(ExportError, match=r"fd00:1::/48 is wider than /64.*fd00:1::/64.*"
                                            r"--allow-wide-prefix"):
        X.encode_value(NET("fd00:1::/48"), PATHS)
    v = X.encode_value(NET("fd00:1::/48"), PATHS, allow_wide_prefix=True)
    assert v[:16] == IP("fd00:1::").packed
    X.encode_value(NET("fd00:1:2:3:4::/80"), PATHS)  # inside its first /64: fine

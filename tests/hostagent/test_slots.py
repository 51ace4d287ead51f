"""The agent's choice for a connection a table update moves (no root): ``rehash`` draws by the
new weights with the connection's hash, stably; ``repath`` takes the first fitting slot. The C
program makes the same choice (its constants below; on live connections:
tests/emulate/test_emulate_agent_update.py)."""

from __future__ import annotations

import ipaddress
import random
import re
import types

import pytest

from tpcstudy.export.layout import SLOT_SIZE, SLOTS_OFFSET, encode_value
from tpcstudy.hostagent import maps as M
from tpcstudy.hostagent.program import SOURCE
from tpcstudy.hostagent.slots import conn_hash, draw_weights, first_fitting, fitting, keyed_pick

C = SOURCE.read_text(encoding="utf-8")


def _path(*segs, weight=1.0):
    return types.SimpleNamespace(segments=[ipaddress.IPv6Address(s) for s in segs],
                                 bw_mbps=10, delay_ms=1, weight=weight)


def _keys(n, seed=1):
    rng = random.Random(seed)
    return [M.conn_key(f"fd00:1::{rng.randrange(1, 1 << 16):x}", "fd00:2::1",
                       rng.randrange(1024, 65536), 5001) for _ in range(n)]


def _fnv1a(data: bytes) -> int:  # the textbook definition, as a cross-check
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) % (1 << 32)
    return h


def test_hash_is_fnv1a_then_murmur3s_finaliser():
    for key in _keys(50):
        h = _fnv1a(key)
        h ^= h >> 16
        h = (h * 0x85EBCA6B) % (1 << 32)
        h ^= h >> 13
        h = (h * 0xC2B2AE35) % (1 << 32)
        h ^= h >> 16
        assert conn_hash(key) == h
    # the C program uses the same constants and the same 17-bit weights
    for const in ("2166136261u", "16777619u", "0x85ebca6bu", "0xc2b2ae35u"):
        assert const in C
    assert re.search(r"return wfix\(v, i, emax\) >> 15;", C)
    assert "r = ((__u64)h * total) >> 32;" in C
    with pytest.raises(ValueError):
        conn_hash(b"x" * 35)


def test_rehash_spreads_by_the_weights_and_is_stable():
    value = encode_value("fd00:2::/64", [_path("fc00::1", "fd00:2::"), _path("fc00::2", "fd00:2::"),
                                         _path("fc00::3", "fd00:2::")],
                         "exp3_lowest_completion")
    # weights 1 : 2 : 5 (encode_value stores 1.0 each; set them in the layout)
    from tpcstudy.export.layout import WEIGHT_SIZE, WEIGHTS_OFFSET, weight_fields
    v = bytearray(value)
    for i, w in enumerate((1.0, 2.0, 5.0)):
        m, e = weight_fields(w)
        v[WEIGHTS_OFFSET + WEIGHT_SIZE * i:WEIGHTS_OFFSET + WEIGHT_SIZE * (i + 1)] = \
            m.to_bytes(8, "little") + e.to_bytes(4, "little")
    value = bytes(v)
    # 5 = 5 x 2^61 x 2^(e - 1087) sets emax: its 64-bit mantissa >> 32 >> 15 = 5 x 2^14; 1 and 2
    # have exponents 2 and 1 below it
    assert draw_weights(value, 168) == [1 << 14, 1 << 15, 5 << 14, 0, 0, 0, 0, 0]
    keys = _keys(16000)
    picks = [keyed_pick(value, 168, conn_hash(k)) for k in keys]
    share = [picks.count(i) / len(picks) for i in range(3)]
    for got, want in zip(share, (1 / 8, 2 / 8, 5 / 8)):
        assert abs(got - want) < 0.015, share  # about 4 standard deviations
    assert picks == [keyed_pick(value, 168, conn_hash(k)) for k in keys]  # stable
    # a zero weight is never drawn; every weight zero: uniform over the fitting slots
    v0 = bytearray(value)
    v0[WEIGHTS_OFFSET:WEIGHTS_OFFSET + WEIGHT_SIZE] = bytes(WEIGHT_SIZE)
    assert 0 not in {keyed_pick(bytes(v0), 168, conn_hash(k)) for k in keys[:2000]}
    vz = bytearray(value)
    vz[WEIGHTS_OFFSET:WEIGHTS_OFFSET + 3 * WEIGHT_SIZE] = bytes(3 * WEIGHT_SIZE)
    uz = [keyed_pick(bytes(vz), 168, conn_hash(k)) for k in keys[:3000]]
    assert all(abs(uz.count(i) / 3000 - 1 / 3) < 0.04 for i in range(3))
    # hand-worked ends of the draw: hash 0 takes the first slot, 2^32 - 1 the last
    assert keyed_pick(value, 168, 0) == 0 and keyed_pick(value, 168, (1 << 32) - 1) == 2
    # r = h x total / 2^32 with total = 8 x 2^14: slot 0 up to r < 2^14, i.e. h < 2^29
    total = sum(draw_weights(value, 168))
    h1 = -(-(1 << 14 << 32) // total)  # the smallest h with r >= 2^14
    assert h1 == 1 << 29
    assert keyed_pick(value, 168, h1 - 1) == 0 and keyed_pick(value, 168, h1) == 1


def test_room_and_validity_limit_the_choice():
    short = _path("fd00:2::")  # one segment: a 40-byte SRH (8 + segments[0..1])
    long_ = _path("fc00::1", "fc00::2", "fd00:2::")  # three: 72 bytes
    value = encode_value("fd00:2::/64", [long_, short], "exp3_lowest_completion")
    assert fitting(value, 72)[:3] == [True, True, False]
    assert fitting(value, 40)[:2] == [False, True]
    keys = _keys(500)
    assert {keyed_pick(value, 40, conn_hash(k)) for k in keys} == {1}
    assert {keyed_pick(value, 72, conn_hash(k)) for k in keys} == {0, 1}
    assert keyed_pick(value, 16, 12345) is None and first_fitting(value, 16) is None
    assert first_fitting(value, 72) == 0 and first_fitting(value, 40) == 1
    # an invalid slot (is_valid 0) is never taken
    bad = bytearray(value)
    bad[SLOTS_OFFSET + 4:SLOTS_OFFSET + 8] = bytes(4)
    assert {keyed_pick(bytes(bad), 72, conn_hash(k)) for k in keys} == {1}
    assert first_fitting(bytes(bad), 72) == 1 and SLOT_SIZE == 192
    # the layout without weights: uniform
    plain = encode_value("fd00:2::/64", [long_, short, short], "n_rto")
    assert draw_weights(plain, 72)[:3] == [1, 1, 1]
    u = [keyed_pick(plain, 72, conn_hash(k)) for k in _keys(3000, seed=2)]
    assert all(abs(u.count(i) / 3000 - 1 / 3) < 0.04 for i in range(3))


def test_rehash_is_an_on_update_mode_with_its_counter():
    assert M.ON_UPDATE["rehash"] == 2 and M.STATS[18] == "rehashed"
    assert M.config_bytes(M.SlotPolicy(), mtu=1500, max_srh=24, on_update="rehash")[24:28] == \
        (2).to_bytes(4, "little")

"""The agent's choice of a slot for a connection whose path a table update removed, in Python,
step for step as ``bpf/tpc_hostagent.bpf.c`` makes it (the tests compare the two on live
connections, ``tests/emulate/test_emulate_agent_update.py``):

- ``repath`` / ``keep``: the entry's first valid slot whose SRH fits the room the connection's
  MSS left (:func:`first_fitting`);
- ``rehash``: a draw by the new table's weights, with the connection's hash
  (:func:`conn_hash`) as the random number (:func:`keyed_pick`): the same connection and
  table always give the same slot, and over many connections slot i gets a share w_i / sum w of
  the fitting slots' weights (uniform when every weight is zero, or in the 1556-byte layout,
  which has no weights).

Weights are brought to fixed point as the programs do: each fitting slot's ``(mantissa,
exponent)`` shifted to 32 bits at the largest exponent among them (``wfix``), then to 17
(``>> 15``), so that hash x total stays within 64 bits.
"""

from __future__ import annotations

import struct
from typing import List, Optional

from ..export.layout import MAX_PATHS, SLOT_SIZE, SLOTS_OFFSET, WEIGHT_SIZE, WEIGHTS_OFFSET
from .update import slot_srhs

__all__ = ["conn_hash", "fitting", "draw_weights", "keyed_pick", "first_fitting"]

_M32 = 0xFFFFFFFF


def conn_hash(key: bytes) -> int:
    """The programs' 32-bit hash of a connection's 36-byte ``tpc_conns`` key
    (:func:`tpcstudy.hostagent.maps.conn_key`): FNV-1a, then murmur3's finaliser."""
    if len(key) != 36:
        raise ValueError(f"a connection key has 36 bytes, got {len(key)}")
    h = 2166136261
    for b in key:
        h = ((h ^ b) * 16777619) & _M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def fitting(value: bytes, room: int) -> List[bool]:
    """Per slot: valid for the programs (``slot_ok``) and its SRH ((hdrlen + 1) x 8 bytes) at
    most ``room`` bytes."""
    out = []
    for srh in slot_srhs(value):
        out.append(srh is not None and (srh[1] + 1) * 8 <= room)
    assert len(out) == MAX_PATHS
    return out


def draw_weights(value: bytes, room: int) -> List[int]:
    """The fitting slots' weights in the programs' fixed point (0 for the others; 1 each in the
    layout without weights)."""
    fit = fitting(value, room)
    if len(value) < WEIGHTS_OFFSET + MAX_PATHS * WEIGHT_SIZE:
        return [int(f) for f in fit]
    w = [struct.unpack_from("<QI", value, WEIGHTS_OFFSET + WEIGHT_SIZE * i)
         for i in range(MAX_PATHS)]
    emax = max([e for (m, e), f in zip(w, fit) if f and m] or [0])
    out = []
    for (m, e), f in zip(w, fit):
        if not f or not m or e > emax:
            out.append(0)
            continue
        shift = 32 + emax - e
        out.append(0 if shift > 63 else (m >> shift) >> 15)
    return out


def keyed_pick(value: bytes, room: int, h: int) -> Optional[int]:
    """``rehash``'s slot for a connection of hash ``h`` (module docstring); None when no slot
    fits (the connection then takes plain routing)."""
    fit = fitting(value, room)
    n = sum(fit)
    if not n:
        return None
    ws = draw_weights(value, room)
    total = sum(ws)
    if total == 0:
        ws, total = [int(f) for f in fit], n
    r = (h * total) >> 32
    acc = 0
    for i, w in enumerate(ws):
        acc += w
        if w and r < acc:
            return i
    return None


def first_fitting(value: bytes, room: int) -> Optional[int]:
    """``repath``'s slot: the entry's first valid slot that fits; None when none does."""
    return next((i for i, f in enumerate(fitting(value, room)) if f), None)


# the slot records' place in a value, as the programs read them (kept beside the weights')
assert SLOTS_OFFSET + MAX_PATHS * SLOT_SIZE == WEIGHTS_OFFSET

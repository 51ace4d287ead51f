"""The host agent's own maps, byte for byte as ``bpf/tpc_hostagent.bpf.c`` lays them out.

- ``tpc_config`` (one entry): the load-time slot policy (:class:`SlotPolicy`), the MTU, the longest
  SRH, the minimum RTO of the connections given a path (:func:`rto_min_us`);
- ``tpc_conns``: per TCP connection (its addresses and ports as on its packets) the SRH in use;
- ``tpc_stats``: counters (:data:`STATS`), ``tpc_slot_use``: connections per destination and
  slot.

The destination map itself is the export's (:mod:`tpcstudy.export.layout`), read unchanged.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import struct
from typing import Dict, Optional, Tuple

from ..errors import UsageError

__all__ = ["ON_UPDATE", "ROOMS", "RTO_MIN_MS", "rto_min_us", "SlotPolicy", "parse_slot_policy",
           "config_bytes", "conn_key", "conn_value", "STATS",
           "CONFIG", "CONN_KEY", "CONN_VALUE", "SRH_FIELD", "decode_stats", "decode_slot_use"]

SRH_FIELD = 168
#: struct config: policy, slot, gamma (x 2^20), nrto, mtu, max_srh, on_update, room,
#: rto_min_us (u32 each).
CONFIG = struct.Struct("<9I")
#: struct conn_key: saddr, daddr (16 bytes each), sport, dport (network order).
CONN_KEY = struct.Struct("<16s16s2s2s")
#: struct conn: len, slot, moves, kernel (u32), dkey (8), first (16), srh (168), gen, room,
#: stale, pad (u32).
CONN_VALUE = struct.Struct(f"<4I8s16s{SRH_FIELD}s4I")
#: The counters of ``tpc_stats``, by index.
STATS = ("connections", "no_entry", "no_valid_slot", "kernel_srh", "fallback", "moves",
         "errors", "inserted", "rerouted", "fib_kept", "insert_failed", "listeners",
         "slot_invalid", "update_kept", "repathed", "update_deferred", "repathed_rto",
         "repath_plain", "rehashed", "rto_min_set", "rto_min_failed")
SLOT_POLICIES = {"first": 0, "slot": 1, "weighted": 2, "wrr": 3}
#: What a table update does to a connection whose path it removed (``--on-update``): move it
#: to the entry's first valid slot at once (repath), or at its next RTO (keep), or at once to
#: the slot a draw by the new weights keyed on the connection gives (rehash: the moved
#: connections spread over the entry's paths; :mod:`tpcstudy.hostagent.slots`).
ON_UPDATE = {"repath": 0, "keep": 1, "rehash": 2}
#: The SRH room a connection's MSS leaves (``--srh-room``): its own path's SRH (the entry's
#: longest with NRTOChanger), or its entry's longest (a table update may move it to any of them),
#: or the longest SRH there is (168 bytes: any path a later table may give its entry).
ROOMS = {"path": 0, "entry": 1, "max": 2}
#: ``--rto-min-ms``'s range: the kernel takes 2 jiffies (2-8 ms by CONFIG_HZ) to TCP_RTO_MIN
#: (200 ms) for ``TCP_BPF_RTO_MIN`` and refuses the rest (counter ``rto_min_failed``).
RTO_MIN_MS = (1.0, 200.0)


@dataclasses.dataclass(frozen=True)
class SlotPolicy:
    """The agent's slot policy: how each connection's path slot is chosen (not the host
    path-selection policies of :mod:`tpcstudy.policies`, which the emulator's traffic agent
    runs): ``first`` (the first valid slot, the default
    path), ``slot`` (slot ``slot``, else the first valid one), ``weighted`` (a draw by the
    entry's weights with EXP3's ``gamma``: p = (1 - gamma) w / sum w + gamma / K; the 1556-byte
    layout has no weights: uniform), ``wrr`` (smooth weighted round robin by the weights:
    exactly proportional counts); ``nrto`` > 0 adds NRTOChanger(N): move to the next valid
    slot at the N-th consecutive RTO."""

    kind: str = "first"
    slot: int = 0
    gamma: float = 0.0
    nrto: int = 0

    def check(self) -> "SlotPolicy":
        if self.kind not in SLOT_POLICIES:
            raise UsageError(f"policy {self.kind!r}: choose from {', '.join(SLOT_POLICIES)}")
        if not 0 <= self.slot < 8:
            raise UsageError(f"slot {self.slot}: 0 to 7")
        if not 0.0 <= self.gamma <= 1.0:
            raise UsageError(f"gamma {self.gamma}: 0 to 1")
        if not 0 <= self.nrto <= 255:
            raise UsageError(f"NRTOChanger's N {self.nrto}: 0 (off) to 255")
        return self

    def describe(self) -> str:
        base = {"slot": f"slot:{self.slot}", "weighted": f"weighted:{self.gamma:g}"}.get(
            self.kind, self.kind)
        return base + (f", nrto:{self.nrto}" if self.nrto else "")


def parse_slot_policy(text: str, nrto: int = 0) -> SlotPolicy:
    """``first``, ``slot:N``, ``weighted[:GAMMA]``, ``wrr``; NRTOChanger's ``nrto``."""
    name, _, arg = str(text).strip().partition(":")
    try:
        if name == "slot":
            return SlotPolicy("slot", slot=int(arg), nrto=nrto).check()
        if name == "weighted":
            return SlotPolicy("weighted", gamma=float(arg or 0.0), nrto=nrto).check()
    except UsageError:  # check()'s own (a UsageError is a ValueError too)
        raise
    except ValueError:
        raise UsageError(f"policy {text!r}: slot:N takes an integer, weighted:GAMMA a "
                         f"number") from None
    if arg:
        raise UsageError(f"policy {text!r}: only slot:N and weighted:GAMMA take a value")
    return SlotPolicy(name, nrto=nrto).check()


def rto_min_us(ms: Optional[float]) -> int:
    """``--rto-min-ms`` as the config's microseconds: None is 0, the kernel's own minimum (200
    ms unless a route's ``rto_min`` says otherwise); else milliseconds in :data:`RTO_MIN_MS`,
    the range ``TCP_BPF_RTO_MIN`` takes (a clear error otherwise: NaN, 0, 250 ...)."""
    if ms is None:
        return 0
    lo, hi = RTO_MIN_MS
    v = float(ms) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else math.nan
    if not lo <= v <= hi:
        raise UsageError(f"--rto-min-ms {str(ms)[:20]!r}: a number of milliseconds from "
                         f"{lo:g} to {hi:g} (the kernel's TCP_BPF_RTO_MIN range; leave it out "
                         f"for the kernel's own 200 ms)")
    return int(round(v * 1000.0))


def config_bytes(policy: SlotPolicy, *, mtu: int, max_srh: int, on_update: str = "repath",
                 room: str = "path", rto_min: int = 0) -> bytes:
    """The ``tpc_config`` value (``rto_min``: microseconds, 0 for the kernel's own)."""
    policy.check()
    if not 1280 <= mtu <= 65535:
        raise UsageError(f"MTU {mtu}: IPv6 needs 1280 to 65535")
    if on_update not in ON_UPDATE:
        raise UsageError(f"--on-update {on_update!r}: choose from {', '.join(ON_UPDATE)}")
    if room not in ROOMS:
        raise UsageError(f"--srh-room {room!r}: choose from {', '.join(ROOMS)}")
    lo, hi = RTO_MIN_MS
    if rto_min and not lo * 1000 <= rto_min <= hi * 1000:
        raise UsageError(f"minimum RTO {rto_min} us: 0 (the kernel's) or {lo * 1000:g} to "
                         f"{hi * 1000:g}")
    return CONFIG.pack(SLOT_POLICIES[policy.kind], policy.slot, int(round(policy.gamma * (1 << 20))),
                       policy.nrto, mtu, max_srh, ON_UPDATE[on_update], ROOMS[room], rto_min)


def conn_key(src: str, dst: str, sport: int, dport: int) -> bytes:
    """A ``tpc_conns`` key: the connection's addresses and ports as on its packets."""
    return CONN_KEY.pack(ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed,
                         struct.pack(">H", sport), struct.pack(">H", dport))


def conn_value(srh_field: bytes, *, slot: int = 0, dkey: bytes = bytes(8),
               kernel: bool = False) -> bytes:
    """A ``tpc_conns`` value carrying the 168-byte SRH field ``srh_field`` (its first segment
    and length read from it)."""
    if len(srh_field) > SRH_FIELD:
        raise UsageError(f"an SRH field has {SRH_FIELD} bytes, got {len(srh_field)}")
    field = bytes(srh_field) + bytes(SRH_FIELD - len(srh_field))
    n = field[4]
    if not 1 <= n <= 9:
        raise UsageError(f"first_segment {n}: 1 to 9")
    first = field[8 + 16 * n:8 + 16 * (n + 1)]
    n_len = (field[1] + 1) * 8
    return CONN_VALUE.pack(n_len, slot, 0, int(kernel), dkey, first, field, 0, n_len, 0, 0)


def decode_stats(values: Dict[int, int]) -> Dict[str, int]:
    """``tpc_stats`` (index -> count) by counter name."""
    return {name: int(values.get(i, 0)) for i, name in enumerate(STATS)}


def decode_slot_use(key: bytes, count: int) -> Tuple[str, int, int]:
    """A ``tpc_slot_use`` entry: ``(destination /64 prefix, slot, connections)``."""
    dkey, slot = struct.unpack("<8sI", key[:12])
    return str(ipaddress.IPv6Network((dkey + bytes(8), 64))), slot, int(count)


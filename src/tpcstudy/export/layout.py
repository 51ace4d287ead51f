"""The TPC agent's map values, byte for byte (docs/srh-map.md §2-3): layout, variants, encoding
and decoding. Bytes only: what a path means is in :mod:`tpcstudy.export.table`.

A value holds the destination address, ``max_reward``, then :data:`MAX_PATHS` slots of
(``srh_id``, ``is_valid``, ``bw``, ``delay``, an SRH of :data:`SRH_ADDRESSES` addresses); the EXP3
variants add a weight per slot and ``exp3_lowest_delay`` a last SRTT per slot. The map key is
the first 64 bits of the destination prefix.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import ExportError, UsageError

__all__ = [
    "MAX_PATHS", "SRH_ADDRESSES", "MAX_SEGMENTS", "SRH_SIZE", "SLOT_SIZE", "SLOTS_OFFSET",
    "BASE_SIZE", "WEIGHT_SIZE", "WEIGHTS_OFFSET", "SRTT_OFFSET", "SRH_TYPE", "WEIGHT_ONE",
    "KEY_SIZE", "U64_MAX", "U32_MAX", "Variant", "VARIANTS", "variant_named", "check_prefix",
    "check_paths", "encode_value", "DecodedPath", "DecodedValue", "decode_value",
    "KERNEL_MAX_SEGMENTS", "srh_length", "srh_bytes", "srh_segments",
]

#: Path slots per destination (docs/srh-map.md §2).
MAX_PATHS = 8
#: Address slots per SRH; slot 0 is reserved for the kernel, so a path has at most 9 segments.
SRH_ADDRESSES = 10
MAX_SEGMENTS = SRH_ADDRESSES - 1
SRH_SIZE = 8 + 16 * SRH_ADDRESSES  # 168
SLOT_SIZE = 24 + SRH_SIZE  # 192
SLOTS_OFFSET = 20
BASE_SIZE = SLOTS_OFFSET + MAX_PATHS * SLOT_SIZE  # 1556
WEIGHT_SIZE = 12
WEIGHTS_OFFSET = BASE_SIZE  # 1556
SRTT_OFFSET = WEIGHTS_OFFSET + MAX_PATHS * WEIGHT_SIZE  # 1652
SRH_TYPE = 4
#: EXP3 weight 1.0 as (u64 mantissa, u32 exponent).
WEIGHT_ONE = (0x8000000000000000, 1024)
U64_MAX = 2 ** 64 - 1
U32_MAX = 2 ** 32 - 1
KEY_SIZE = 8


@dataclasses.dataclass(frozen=True)
class Variant:
    """One agent program family: its map and the layout of the map's values."""

    name: str
    code: int
    map_name: str
    value_size: int
    weights: bool
    last_srtt: bool


VARIANTS: Dict[str, Variant] = {
    "n_rto": Variant("n_rto", 0, "dest_map", BASE_SIZE, False, False),
    "exp3_lowest_completion": Variant("exp3_lowest_completion", 1, "short_dest_map",
                                      SRTT_OFFSET, True, False),
    "exp3_lowest_delay": Variant("exp3_lowest_delay", 2, "short_dest_map",
                                 SRTT_OFFSET + 4 * MAX_PATHS, True, True),
}
assert [v.value_size for v in VARIANTS.values()] == [1556, 1652, 1684]


def variant_named(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise UsageError(f"unknown agent variant {name!r}; choose from "
                         f"{', '.join(VARIANTS)}") from None


def check_prefix(prefix: Any, where: str, allow_wide_prefix: bool) -> ipaddress.IPv6Network:
    if not isinstance(prefix, ipaddress.IPv6Network):
        raise ExportError(f"{where}: destination prefix {prefix!r} is not an IPv6 network")
    if prefix.prefixlen < 64 and not allow_wide_prefix:
        first = ipaddress.IPv6Network((prefix.network_address, 64))
        raise ExportError(
            f"{where}: destination prefix {prefix} is wider than /64; the agent's map key is the "
            f"first 64 bits of the destination address, so only hosts in {first} would use these "
            f"paths. Give a /64 (or longer) prefix, or allow it with --allow-wide-prefix "
            f"(allow_wide_prefix=True) to serve only its first /64")
    return prefix


def check_paths(paths: Sequence[Any], where: str) -> None:
    if not paths:
        raise ExportError(f"{where}: no path (an entry needs at least the default path)")
    if len(paths) > MAX_PATHS:
        raise ExportError(f"{where}: {len(paths)} paths; the agent holds at most {MAX_PATHS} "
                          f"per destination")
    for i, p in enumerate(paths):
        segs = list(p.segments)
        if not segs:
            raise ExportError(f"{where}, path {i}: no segment; an SRH without segments sends "
                              f"packets to '::'")
        if len(segs) > MAX_SEGMENTS:
            raise ExportError(f"{where}, path {i}: {len(segs)} waypoints (egress included); an "
                              f"SRH holds at most {MAX_SEGMENTS}")
        for a in segs:
            if not isinstance(a, ipaddress.IPv6Address) or a.is_unspecified:
                raise ExportError(f"{where}, path {i}: segment {a!r} is not a usable IPv6 "
                                  f"address")
        for what, v in (("bw", p.bw_mbps), ("delay", p.delay_ms)):
            if not (math.isfinite(v) and 0 <= round(v) <= U64_MAX):
                raise ExportError(f"{where}, path {i}: {what} {v!r} does not fit a u64")


def weight_fields(w: float) -> Tuple[int, int]:
    """A weight as the agent stores it: ``(mantissa, exponent)`` with value mantissa x
    2^(exponent - 1024 - 63); 1.0 is ``WEIGHT_ONE``, 0 is ``(0, 0)``."""
    if not (math.isfinite(w) and w >= 0):
        raise ExportError(f"weight {w!r}: a finite number >= 0")
    if w == 0:
        return 0, 0
    f, x = math.frexp(w)  # w = f 2^x, 0.5 <= f < 1
    return int(f * (1 << 64)), x + 1023


#: Most segments one SRH can hold at all (``hdrlen`` is one byte: (255 + 1) * 8 = 8 + 16 * 127
#: + 8); the map's field holds :data:`MAX_SEGMENTS`.
KERNEL_MAX_SEGMENTS = 127


def srh_length(n_segments: int) -> int:
    """Bytes of an SRH with ``n_segments`` segments (plus the reserved slot 0)."""
    return 8 + 16 * (n_segments + 1)


def srh_bytes(segments: Sequence[Any], size: Optional[int] = None) -> bytes:
    """The one encoding of a Segment Routing Header (RFC 8754), segments in visit order (the
    egress router last): ``segments[0]`` all zeros (the kernel writes the real destination there
    when sending), ``segments[k] = w(n - k + 1)``, ``hdrlen = 2 (n + 1)``, ``segments_left =
    first_segment = n``, type :data:`SRH_TYPE`. Exactly :func:`srh_length` bytes (what a socket
    takes), or zero-padded to ``size`` (the map's :data:`SRH_SIZE`-byte field)."""
    segs = [ipaddress.IPv6Address(a) for a in segments]
    n = len(segs)
    if not 1 <= n <= KERNEL_MAX_SEGMENTS:
        raise UsageError(f"an SRH needs 1 to {KERNEL_MAX_SEGMENTS} segments, got {n}")
    length = srh_length(n)
    if size is not None and size < length:
        raise UsageError(f"an SRH of {n} segments takes {length} bytes, more than {size}")
    out = bytearray(length if size is None else size)
    struct.pack_into("<BBBBBBH", out, 0, 0, 2 * (n + 1), SRH_TYPE, n, n, 0, 0)
    for k, a in enumerate(reversed(segs), start=1):
        out[8 + 16 * k:8 + 16 * (k + 1)] = a.packed
    return bytes(out)


def srh_segments(srh: bytes) -> List[ipaddress.IPv6Address]:
    """Segments (visit order) of an SRH given as exact bytes or as the agent's 168-byte field."""
    if len(srh) < 8:
        raise UsageError(f"an SRH is at least 8 bytes, got {len(srh)}")
    hdrlen, typ, first = srh[1], srh[2], srh[4]
    if typ != SRH_TYPE:
        raise UsageError(f"routing header type {typ}, expected {SRH_TYPE} (SRH)")
    if len(srh) < (hdrlen + 1) * 8 or hdrlen != 2 * (first + 1):
        raise UsageError(f"SRH hdrlen {hdrlen} and first_segment {first} do not match "
                         f"{len(srh)} bytes")
    return [ipaddress.IPv6Address(bytes(srh[8 + 16 * k:8 + 16 * (k + 1)]))
            for k in range(first, 0, -1)]


def encode_value(prefix: Union[str, ipaddress.IPv6Network], paths: Sequence[Any],
                 variant: str = "n_rto", *, allow_wide_prefix: bool = False) -> bytes:
    """The map value of one destination (docs/srh-map.md §2-3), exactly the variant's size.

    Parameters
    ----------
    prefix
        The destination prefix (its network address goes in ``dest``).
    paths
        Objects with ``segments`` (IPv6 addresses in visit order, egress last), ``bw_mbps`` and
        ``delay_ms`` (rounded to integers), e.g. :class:`PathRecord`; slot 0 first.
    variant
        ``"n_rto"``, ``"exp3_lowest_completion"`` or ``"exp3_lowest_delay"``.
    """
    v = variant_named(variant)
    net = ipaddress.IPv6Network(prefix) if isinstance(prefix, str) else prefix
    where = f"destination {net}"
    check_prefix(net, where, allow_wide_prefix)
    check_paths(paths, where)
    out = bytearray(v.value_size)
    out[0:16] = net.network_address.packed
    bws = [int(round(p.bw_mbps)) for p in paths]
    struct.pack_into("<I", out, 16, min(max(bws), U32_MAX))
    for i, p in enumerate(paths):
        off = SLOTS_OFFSET + SLOT_SIZE * i
        struct.pack_into("<IIQQ", out, off, i, 1, bws[i], int(round(p.delay_ms)))
        out[off + 24:off + SLOT_SIZE] = srh_bytes(p.segments, SRH_SIZE)
    if v.weights:
        for i in range(MAX_PATHS):
            w = getattr(paths[i], "weight", 1.0) if i < len(paths) else 1.0
            struct.pack_into("<QI", out, WEIGHTS_OFFSET + WEIGHT_SIZE * i, *weight_fields(w))
    # last_srtt (exp3_lowest_delay): zeros, already there
    assert len(out) == v.value_size
    return bytes(out)


@dataclasses.dataclass
class DecodedPath:
    """One valid slot of a decoded value; ``segments`` in visit order (egress last)."""

    slot: int
    segments: List[ipaddress.IPv6Address]
    bw_mbps: int
    delay_ms: int


@dataclasses.dataclass
class DecodedValue:
    """A decoded map value; ``problems`` lists anything the agent would not expect."""

    variant: str
    dest: ipaddress.IPv6Address
    max_reward: int
    paths: List[DecodedPath]
    weights: List[float]
    last_srtt: List[int]
    problems: List[str]


def decode_value(data: bytes, variant: str = "n_rto") -> DecodedValue:
    """Decode one map value (the inverse of :func:`encode_value`).

    Only valid slots (``type == 4`` and ``is_valid != 0``) become paths; inconsistencies (a hole
    among the slots, a wrong ``hdrlen``, a non-zero ``segments[0]`` or unused slot) are listed in
    ``problems`` rather than raised. A value of the wrong size raises :class:`ExportError`.
    """
    v = variant_named(variant)
    if len(data) != v.value_size:
        raise ExportError(f"a {v.name} value is {v.value_size} bytes, got {len(data)}")
    dest = ipaddress.IPv6Address(bytes(data[0:16]))
    (max_reward,) = struct.unpack_from("<I", data, 16)
    paths: List[DecodedPath] = []
    problems: List[str] = []
    seen_invalid = False
    for i in range(MAX_PATHS):
        off = SLOTS_OFFSET + SLOT_SIZE * i
        srh_id, valid, bw, delay = struct.unpack_from("<IIQQ", data, off)
        nexthdr, hdrlen, typ, left, first, flags, tag = struct.unpack_from("<BBBBBBH", data, off + 24)
        if not (valid and typ == SRH_TYPE):
            if any(data[off:off + SLOT_SIZE]):
                problems.append(f"slot {i}: not valid but not all zero")
            seen_invalid = True
            continue
        if seen_invalid:
            problems.append(f"slot {i}: valid slot after an invalid one")
        n = first
        if not 1 <= n <= MAX_SEGMENTS:
            problems.append(f"slot {i}: first_segment {n} outside 1..{MAX_SEGMENTS}")
            n = max(0, min(n, MAX_SEGMENTS))
        if hdrlen != 2 * (n + 1) or left != n or srh_id != i or nexthdr or flags or tag:
            problems.append(f"slot {i}: header fields srh_id={srh_id} hdrlen={hdrlen} "
                            f"segments_left={left} first_segment={first} nexthdr={nexthdr} "
                            f"flags={flags} tag={tag}")
        addrs = off + 24 + 8
        if any(data[addrs:addrs + 16]):
            problems.append(f"slot {i}: segments[0] is not zero")
        if any(data[addrs + 16 * (n + 1):addrs + 16 * SRH_ADDRESSES]):
            problems.append(f"slot {i}: address slots after segments[{n}] are not zero")
        segs = [ipaddress.IPv6Address(bytes(data[addrs + 16 * kk:addrs + 16 * (kk + 1)]))
                for kk in range(n, 0, -1)]
        paths.append(DecodedPath(i, segs, int(bw), int(delay)))
    weights: List[float] = []
    srtt: List[int] = []
    if v.weights:
        for i in range(MAX_PATHS):
            m, e = struct.unpack_from("<QI", data, WEIGHTS_OFFSET + WEIGHT_SIZE * i)
            try:
                weights.append(math.ldexp(m, e - 1024 - 63) if m else 0.0)
            except OverflowError:  # a corrupted exponent (found by the fuzzer): not a weight
                weights.append(math.inf)
                problems.append(f"weight[{i}]: exponent {e} is out of range")
    if v.last_srtt:
        srtt = list(struct.unpack_from(f"<{MAX_PATHS}I", data, SRTT_OFFSET))
    return DecodedValue(v.name, dest, int(max_reward), paths, weights, srtt, problems)

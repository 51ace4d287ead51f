"""Segment Routing Headers for sockets, byte for byte what the TPC agent gives the kernel.

The agent keeps each path's SRH in a fixed 168-byte field (docs/srh-map.md,
:mod:`tpcstudy.export.layout`) and hands it to ``setsockopt(IPPROTO_IPV6, IPV6_RTHDR, ...)``. The
kernel (``seg6_validate_srh``) accepts only the header's exact length, ``(hdrlen + 1) * 8``
bytes, so a socket gets the field's first ``(hdrlen + 1) * 8`` bytes.

With segments ``w1 .. wn`` in visit order (egress router last): ``segments[0]`` all zeros (the
kernel writes the real destination there when sending), ``segments[k] = w(n - k + 1)``,
``hdrlen = 2 (n + 1)``, ``segments_left = first_segment = n``, type 4. A second ``setsockopt`` on
a live TCP socket moves it to the new path (the next packet leaves with the new header).
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from typing import Iterable, List, Sequence, Union

from ...errors import UsageError
from ...export.addressing import AddressPlan
from ...export.layout import MAX_PATHS, SLOT_SIZE, SLOTS_OFFSET, SRH_SIZE
from .kernel import IPV6_RTHDR

__all__ = ["IPV6_RTHDR", "srh_bytes", "srh_segments", "slot_srh", "set_srh", "srh_length"]

#: Type of the Segment Routing Header (RFC 8754).
SRH_TYPE = 4
#: Most segments one SRH can hold (``hdrlen`` is one byte: (255 + 1) * 8 = 8 + 16 * 127 + 8).
KERNEL_MAX_SEGMENTS = 127

Address = Union[str, ipaddress.IPv6Address]


def srh_length(n_segments: int) -> int:
    """Bytes of an SRH with ``n_segments`` segments (plus the reserved slot 0)."""
    return 8 + 16 * (n_segments + 1)


def srh_bytes(segments: Sequence[Address]) -> bytes:
    """The exact-length SRH for a socket, segments in visit order, egress router last."""
    segs = [ipaddress.IPv6Address(a) for a in segments]
    n = len(segs)
    if not 1 <= n <= KERNEL_MAX_SEGMENTS:
        raise UsageError(f"an SRH needs 1 to {KERNEL_MAX_SEGMENTS} segments, got {n}")
    out = bytearray(srh_length(n))
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


def slot_srh(value: bytes, slot: int) -> bytes:
    """The exact-length SRH of path slot ``slot`` of an exported map value (any variant).

    This is what the agent passes to ``setsockopt``: the slot's 168-byte field cut to
    ``(hdrlen + 1) * 8`` bytes.
    """
    if not 0 <= slot < MAX_PATHS:
        raise UsageError(f"slot {slot} outside 0..{MAX_PATHS - 1}")
    off = SLOTS_OFFSET + SLOT_SIZE * slot + 24
    field = bytes(value[off:off + SRH_SIZE])
    if len(field) != SRH_SIZE:
        raise UsageError(f"value of {len(value)} bytes has no slot {slot}")
    hdrlen = field[1]
    return field[:(hdrlen + 1) * 8]


def set_srh(sock: socket.socket, srh: bytes) -> None:
    """Give ``sock`` this SRH (exact bytes); on a live TCP socket this moves the connection."""
    sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)


def loopbacks(plan: AddressPlan, routers: Iterable[str]) -> List[ipaddress.IPv6Address]:
    """Loopbacks of ``routers`` in the plan (the segments of a waypoint list)."""
    return [plan.loopback(r) for r in routers]

"""Segment Routing Headers on sockets, byte for byte what the TPC agent gives the kernel. The
bytes themselves have one home, :func:`tpcstudy.export.layout.srh_bytes` (and
:func:`~tpcstudy.export.layout.srh_segments`); this module cuts a map slot's field to a socket's
header and sets it.

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
from typing import Iterable, List, Union

from ...errors import UsageError
from ...export.addressing import AddressPlan
from ...export.layout import MAX_PATHS, SLOT_SIZE, SLOTS_OFFSET, SRH_SIZE
from .kernel import IPV6_RTHDR

__all__ = ["IPV6_RTHDR", "slot_srh", "set_srh"]

Address = Union[str, ipaddress.IPv6Address]


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

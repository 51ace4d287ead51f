"""What the agent reads of a TCP socket (``TCP_INFO``) and the path changers it drives from it.

:func:`parse_tcp_info` decodes the fields the emulator uses from ``struct tcp_info``
(``<linux/tcp.h>`` offsets); :class:`PathChanger` is the TPC agent's NRTOChanger and
TimeoutChanger from user space, as pure code over those fields: it says when to move, the agent
moves (``setsockopt(IPV6_RTHDR)`` on the live socket).

The eBPF agent decides inside TCP callbacks, so it moves at most once per retransmission timeout,
just before that timeout's retransmission. Polling ``TCP_INFO``, the equivalent is to move as
soon as the condition holds, but again only after another timeout has fired since the last move:

- ``nrto`` (NRTOChanger(N)): ``tcpi_retransmits`` counts the RTOs fired without progress; once
  N - 1 have fired the socket moves, so the N-th retransmission leaves on the next path: the same
  packet at the same time as the eBPF agent, which switches inside the N-th RTO callback just
  before that retransmission, and again at every later RTO without progress (N = 1 therefore
  moves after the first RTO, one retransmission late: user space cannot act inside the callback).
- ``timeout`` (TimeoutChanger(T)): when data is in flight and no byte was acknowledged for T ms
  (``tcpi_bytes_acked`` unchanged), then again after each further RTO without progress.
"""

from __future__ import annotations

import socket
import struct
from typing import Dict, Optional

from ..network.kernel import TCP_INFO

__all__ = ["parse_tcp_info", "tcp_info", "PathChanger", "close_abortive", "TCP_INFO_LEN"]

#: Bytes of ``struct tcp_info`` asked for (the fields below all lie within them).
TCP_INFO_LEN = 232
_LINGER0 = struct.pack("ii", 1, 0)


def parse_tcp_info(b: bytes) -> Dict[str, int]:
    """The ``struct tcp_info`` fields the emulator uses (a shorter buffer reads as zeros)."""
    b = bytes(b[:TCP_INFO_LEN]) + bytes(max(0, TCP_INFO_LEN - len(b)))
    u32 = struct.unpack_from("<24I", b, 8)
    return {
        "state": b[0], "ca_state": b[1], "retransmits": b[2], "backoff": b[4],
        "rto_us": u32[0], "snd_mss": u32[2], "unacked": u32[4], "lost": u32[6],
        "retrans": u32[7], "last_ack_recv_ms": u32[12], "rtt_us": u32[15],
        "snd_cwnd": u32[18], "total_retrans": u32[23],
        "bytes_acked": struct.unpack_from("<Q", b, 120)[0],
        "bytes_received": struct.unpack_from("<Q", b, 128)[0],
        "data_segs_in": struct.unpack_from("<I", b, 152)[0],
    }


def tcp_info(sock: socket.socket) -> Dict[str, int]:
    """:func:`parse_tcp_info` of a live socket."""
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN))


class PathChanger:
    """NRTOChanger (``kind="nrto"``, ``n``) or TimeoutChanger (``kind="timeout"``, ``ms``) over
    ``paths`` slots (module docstring). :meth:`poll` takes a ``TCP_INFO`` reading and answers the
    slot to move to, or ``None``."""

    def __init__(self, kind: str, paths: int, now: float, *, n: int = 3,
                 ms: float = 100.0) -> None:
        if kind not in ("nrto", "timeout"):
            raise ValueError(f"changer kind {kind!r}: nrto or timeout")
        self.kind = kind
        self.n = int(n)
        self.t = float(ms) / 1000.0
        self.paths = int(paths)
        self.slot = 0
        self.moved_at = -1  # the kernel's RTO count at the last move; -1 after progress
        self.last_acked = -1
        self.last_progress = now

    def poll(self, info: Dict[str, int], now: float) -> Optional[int]:
        if self.paths < 2:
            return None
        if info["bytes_acked"] != self.last_acked:
            self.last_acked = info["bytes_acked"]
            self.last_progress = now
            self.moved_at = -1
        retrans = info["retransmits"]  # RTOs fired since the last progress
        if retrans <= self.moved_at:
            return None
        if self.kind == "nrto":
            move = retrans >= max(1, self.n - 1)
        else:
            move = info["unacked"] > 0 and now - self.last_progress >= self.t
        if not move:
            return None
        self.moved_at = retrans
        self.slot = (self.slot + 1) % self.paths
        return self.slot


def close_abortive(sock: socket.socket) -> None:
    """Close with ``SO_LINGER`` 0 (a reset): a closed socket would otherwise keep draining
    megabytes into the next measurement."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER0)
    except OSError:
        pass
    sock.close()

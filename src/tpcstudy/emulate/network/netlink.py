"""rtnetlink, read in-process: per-link queue occupancy as switches would stamp it ("Switches
Know the Exact Amount of Congestion", Arslan, McKeown), for the ``queue-max`` / ``queue-sum``
policies. The traffic agent's processes import this module (it imports no other tpcstudy code).

Every link direction of the emulated network has an HTB class over a ``bfifo`` queue on the
veth end of its tail router (:mod:`~tpcstudy.emulate.spec`); the bytes waiting in that bfifo
(its ``backlog``), divided by the link's rate, is the queueing delay a packet entering the link
now would see. :class:`QueueMonitor` reads every bfifo's backlog of the namespaces it watches
with one rtnetlink dump per namespace (``RTM_GETQDISC``, the request ``tc -s qdisc show``
sends; the netlink socket is opened inside the namespace, so one process reads them all), maps
interface names to indexes once (``RTM_GETLINK``), and :meth:`QueueMonitor.path_delays` turns
them into the per-hop delays along a path. The message layouts are those of
``<linux/netlink.h>``, ``<linux/rtnetlink.h>``, ``<linux/pkt_sched.h>`` and
``<linux/gen_stats.h>``.
"""

from __future__ import annotations

import socket
import struct
from typing import Callable, Dict, Iterator, List, Sequence, Tuple

__all__ = ["QueueMonitor", "qdisc_request", "link_request", "parse_qdiscs", "parse_links",
           "messages", "attributes", "NETLINK_ROUTE"]

NETLINK_ROUTE = 0
NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_GETLINK = 16, 18
RTM_NEWQDISC, RTM_GETQDISC = 36, 38
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
IFLA_IFNAME = 3
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_QUEUE = 3
#: Attribute type bits that are flags, not the type (NLA_F_NESTED, NLA_F_NET_BYTEORDER).
_TYPE_MASK = 0x3FFF
_HDR = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_TCMSG = struct.Struct("=BxxxiIII")  # tcmsg: family, ifindex, handle, parent, info
_IFINFO = struct.Struct("=BxHiII")  # ifinfomsg: family, type, index, flags, change


def _request(kind: int, body: bytes, seq: int) -> bytes:
    return _HDR.pack(_HDR.size + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body


def qdisc_request(seq: int = 1) -> bytes:
    """An ``RTM_GETQDISC`` dump request (every qdisc of every interface)."""
    return _request(RTM_GETQDISC, _TCMSG.pack(0, 0, 0, 0, 0), seq)


def link_request(seq: int = 1) -> bytes:
    """An ``RTM_GETLINK`` dump request (every interface)."""
    return _request(RTM_GETLINK, _IFINFO.pack(0, 0, 0, 0, 0), seq)


def messages(data: bytes) -> Iterator[Tuple[int, bytes]]:
    """``(type, payload)`` of each netlink message in ``data`` (payload after the header)."""
    off = 0
    while off + _HDR.size <= len(data):
        length, kind, _, _, _ = _HDR.unpack_from(data, off)
        if length < _HDR.size or off + length > len(data):
            raise ValueError(f"netlink message of length {length} at offset {off} overruns "
                             f"{len(data)} bytes")
        yield kind, data[off + _HDR.size:off + length]
        off += (length + 3) & ~3


def attributes(data: bytes, off: int = 0) -> Dict[int, bytes]:
    """The route attributes (``struct rtattr``) from ``off``: type -> payload."""
    out: Dict[int, bytes] = {}
    while off + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, off)
        if length < 4:
            break
        out[kind & _TYPE_MASK] = data[off + 4:off + length]
        off += (length + 3) & ~3
    return out


def parse_qdiscs(data: bytes) -> Tuple[List[Tuple[int, str, int, int]], bool]:
    """``[(ifindex, kind, backlog bytes, packets queued), ...]`` of the ``RTM_NEWQDISC``
    messages in ``data``, and whether the dump ended (``NLMSG_DONE``)."""
    out: List[Tuple[int, str, int, int]] = []
    done = False
    for kind, payload in messages(data):
        if kind == NLMSG_DONE:
            done = True
        elif kind == NLMSG_ERROR:
            err = -struct.unpack_from("=i", payload)[0]
            if err:
                raise OSError(err, f"netlink: qdisc dump refused ({err})")
        elif kind == RTM_NEWQDISC and len(payload) >= _TCMSG.size:
            ifindex = _TCMSG.unpack_from(payload)[1]
            attrs = attributes(payload, _TCMSG.size)
            name = attrs.get(TCA_KIND, b"").rstrip(b"\0").decode("ascii", "replace")
            stats = attributes(attrs.get(TCA_STATS2, b""))
            queue = stats.get(TCA_STATS_QUEUE, b"")
            if len(queue) >= 8:
                qlen, backlog = struct.unpack_from("=II", queue)
                out.append((ifindex, name, backlog, qlen))
    return out, done


def parse_links(data: bytes) -> Tuple[Dict[str, int], bool]:
    """Interface name -> index from ``RTM_NEWLINK`` messages, and whether the dump ended."""
    out: Dict[str, int] = {}
    done = False
    for kind, payload in messages(data):
        if kind == NLMSG_DONE:
            done = True
        elif kind == RTM_NEWLINK and len(payload) >= _IFINFO.size:
            index = _IFINFO.unpack_from(payload)[2]
            name = attributes(payload, _IFINFO.size).get(IFLA_IFNAME, b"")
            out[name.rstrip(b"\0").decode("ascii", "replace")] = index
    return out, done


def _dump(sock: socket.socket, request: bytes,
          parse: Callable[[bytes], Tuple[object, bool]]) -> List[object]:
    sock.send(request)
    parts: List[object] = []
    while True:
        got, done = parse(sock.recv(1 << 16))
        parts.append(got)
        if done:
            return parts


class QueueMonitor:
    """The backlog of every ``bfifo`` of the watched namespaces (module docstring).

    ``hops`` lists the link directions to read as ``(netns, interface name, rate in bit/s)``;
    ``open_socket(netns)`` returns a ``AF_NETLINK`` ``NETLINK_ROUTE`` socket created inside that
    namespace (the agent's namespace switch).
    """

    def __init__(self, hops: Sequence[Tuple[str, str, float]],
                 open_socket: Callable[[str], socket.socket]) -> None:
        self.socks: Dict[str, socket.socket] = {}
        self.index: Dict[Tuple[str, str], int] = {}
        self.rate: Dict[Tuple[str, str], float] = {}
        names: Dict[str, Dict[str, int]] = {}
        for ns, name, rate in hops:
            if ns not in self.socks:
                self.socks[ns] = open_socket(ns)
                names[ns] = {}
                for part in _dump(self.socks[ns], link_request(), parse_links):
                    names[ns].update(part)  # type: ignore[call-overload]
            idx = names[ns].get(name)
            if idx is None:
                self.close()
                raise OSError(f"interface {name!r} not found in namespace {ns!r}")
            self.index[(ns, name)] = idx
            self.rate[(ns, name)] = float(rate)
        self.backlog: Dict[Tuple[str, int], int] = {}

    def read(self) -> Dict[Tuple[str, int], int]:
        """Read every watched namespace's bfifo backlogs now: ``(netns, ifindex) -> bytes``."""
        out: Dict[Tuple[str, int], int] = {}
        for ns, s in self.socks.items():
            for part in _dump(s, qdisc_request(), parse_qdiscs):
                for ifindex, kind, backlog, _ in part:  # type: ignore[attr-defined]
                    if kind == "bfifo":
                        out[(ns, ifindex)] = backlog
        self.backlog = out
        return out

    def delay(self, ns: str, name: str) -> float:
        """Seconds a packet entering link ``name`` of ``ns`` waits (as of the last read)."""
        key = (ns, name)
        rate = self.rate.get(key, 0.0)
        got = self.backlog.get((ns, self.index.get(key, -1)), 0)
        return 8.0 * got / rate if rate > 0 else 0.0

    def path_delays(self, hops: Sequence[Tuple[str, str]]) -> List[float]:
        """Per-hop queueing delays along a path given as ``[(netns, interface), ...]``."""
        return [self.delay(ns, name) for ns, name in hops]

    def close(self) -> None:
        for s in self.socks.values():
            s.close()
        self.socks.clear()

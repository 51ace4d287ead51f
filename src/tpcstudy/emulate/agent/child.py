"""The traffic agent's process: real TCP between emulated hosts (``python -m
tpcstudy.emulate.agent``).

The emulator starts a receiver and a sender per measurement, each in its own process group (and
dying with the emulator: ``PR_SET_PDEATHSIG``). The conversation is :mod:`.protocol`'s; sockets
are created inside the routers' namespaces (one process serves every namespace). This module
imports only the protocol, :mod:`.tcp`, the kernel plumbing, and when the job needs them the
policies and the netlink reader: about a dozen modules, not the whole library.

One event loop (:func:`run_loop`) drives a role over its connections (:class:`Conn`):

- :class:`Receiver`: listening sockets; per accepted connection it reads the 8-byte id, then
  counts payload bytes; it snapshots every connection's count at the window's start and end
  (goodput = the difference over the window), answers one byte when a sized transfer is
  complete and, for the ids asked, keeps a timeline ``[t, bytes]`` of every read.
- :class:`Sender`: transfers opened at their times, each bound to the source host address with
  ``TCP_CONGESTION`` cubic (the socket's, not the namespace default), its SRH (exact bytes,
  ``IPV6_RTHDR``; the transfer's own paths, a pinned slot of the table or its source's policy's
  choice), an optional pacing rate (``SO_MAX_PACING_RATE``); it writes its id, then its bytes
  (or zeros until the stop), then waits for the receiver's answer. Every ``poll_ms`` it reads
  the live sockets' ``TCP_INFO`` for their changer (:class:`.tcp.PathChanger`) or their
  policy's ``progress``, applies the policies' ``moves`` (``setsockopt(IPV6_RTHDR)`` on the live
  socket), and hands the queue monitor's per-hop delays to the policies that read queues.

Every socket is closed abortively (``SO_LINGER`` 0), but a completed transfer's, which rests in
``TIME_WAIT`` at the sender. The sender closes its connections at ``times.stop``; the receiver
stops counting then but reads on until each sender has closed (at most :data:`DRAIN_MAX` s), so
it never resets a connection whose sender, starved of CPU, is still sending. A reset a sender
sees at or after its stop ends the run, not the transfer (it is ``cut``, never ``error``), and
no event is handled after the stop.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Set, TextIO

from ...linux import die_with_parent
from ..network.kernel import (
    IPPROTO_MPTCP,
    IPV6_RTHDR,
    SO_MAX_PACING_RATE,
    TCP_CONGESTION,
    NetnsSwitch,
)
from . import protocol as P
from .tcp import PathChanger, close_abortive, tcp_info

__all__ = ["Conn", "Receiver", "Sender", "run_loop", "main"]

_CHUNK = 1 << 16
_RECV = 1 << 18
#: Seconds the receiver waits after its stop for the senders to close their connections.
DRAIN_MAX = 15.0
_EINPROGRESS = 115


def _rusage() -> Dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": r.ru_utime, "system_s": r.ru_stime}


class Conn:
    """One TCP socket the loop drives, and what it learned (``sent`` for the sender's, the byte
    counts for the receiver's)."""

    __slots__ = ("sock", "fd", "id", "state", "head", "size", "transfer", "sent", "slot",
                 "changer", "policy", "received", "record")

    def __init__(self, sock: socket.socket, state: str, transfer: Optional[P.Transfer] = None
                 ) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.state = state
        self.transfer = transfer
        self.id = transfer.id if transfer is not None else -1
        self.head = struct.pack(">Q", self.id) if transfer is not None else b""
        self.size = transfer.size if transfer is not None else None
        self.sent: Optional[P.Sent] = None
        self.slot: Optional[int] = None
        self.changer: Optional[PathChanger] = None
        self.policy: Any = None
        self.received: Optional[P.Received] = None
        self.record: Optional[Dict[str, Any]] = None


class Role:
    """What a role does in the loop: :meth:`setup` before ``Ready``, :meth:`tick` when its
    next wake-up (:meth:`wake`) is due, :meth:`event` per epoll event, :meth:`result` at the
    stop."""

    ep: Any

    def setup(self) -> None:
        raise NotImplementedError

    def start(self, times: P.Times) -> None:
        self.times = times

    def tick(self, now: float) -> None:
        raise NotImplementedError

    def wake(self, now: float) -> float:
        raise NotImplementedError

    def event(self, fd: int, ev: int) -> None:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError


def run_loop(role: Role, times: P.Times) -> Any:
    """Drive ``role`` until ``times.stop`` (then its result)."""
    role.start(times)
    while True:
        now = time.monotonic()
        if now >= times.stop:
            break
        role.tick(now)
        nxt = min(times.stop, role.wake(now))
        for fd, ev in role.ep.poll(max(0.0, min(nxt - time.monotonic(), 0.5))):
            if time.monotonic() >= times.stop:  # a busy batch must not outlive the run
                break
            role.event(fd, ev)
    return role.result()


# --------------------------------------------------------------------------- receiver
class Receiver(Role):
    def __init__(self, job: P.ReceiverJob, switch: NetnsSwitch) -> None:
        self.job = job
        self.switch = switch
        self.ep = select.epoll()
        self.listeners: Dict[int, socket.socket] = {}
        self.conns: Dict[int, Conn] = {}
        self.by_id: Dict[int, Conn] = {}
        self.timeline = set(job.timeline)
        self.buf = bytearray(_RECV)
        self.view = memoryview(self.buf)
        self.window: List[Optional[float]] = [None, None]

    def setup(self) -> None:
        for ls in self.job.listen:  # an MPTCP listener takes plain TCP too
            s = self.switch.socket_in(ls.netns, proto=IPPROTO_MPTCP if ls.mptcp else 0)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ls.addr, ls.port))
            s.listen(4096)
            s.setblocking(False)
            self.listeners[s.fileno()] = s
            self.ep.register(s.fileno(), select.EPOLLIN)

    def tick(self, now: float) -> None:
        t = self.times
        if self.window[0] is None and now >= t.start:
            self.window[0] = now
            for c in self.by_id.values():
                c.record["at_start"] = c.record["bytes"]  # type: ignore[index]
        if self.window[0] is not None and self.window[1] is None and now >= t.end:
            self.window[1] = now
            for c in self.by_id.values():
                c.record["at_end"] = c.record["bytes"]  # type: ignore[index]

    def wake(self, now: float) -> float:
        if self.window[0] is None:
            return self.times.start
        return self.times.end if self.window[1] is None else self.times.stop

    def event(self, fd: int, ev: int) -> None:
        if fd in self.listeners:
            while True:
                try:
                    s, _ = self.listeners[fd].accept()
                except BlockingIOError:
                    return
                s.setblocking(False)
                self.conns[s.fileno()] = Conn(s, "head")
                self.ep.register(s.fileno(), select.EPOLLIN)
        c = self.conns.get(fd)
        if c is None:
            return
        try:
            n = c.sock.recv_into(self.buf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            n = 0
        if n == 0:
            self.ep.unregister(fd)
            if c.record is not None and "done" in c.record:
                c.sock.close()  # a finished transfer: FIN, the sender keeps the TIME_WAIT
            else:
                close_abortive(c.sock)
            del self.conns[fd]
            return
        t = time.monotonic()
        if c.record is None:
            take = min(n, 8 - len(c.head))
            c.head += bytes(self.view[:take])
            n -= take
            if len(c.head) < 8:
                return
            c.id = struct.unpack(">Q", c.head)[0]
            c.record = {"bytes": 0, "first": t,
                        "at_start": 0 if self.window[0] is not None else None, "at_end": None}
            if c.id in self.timeline:
                c.record["timeline"] = []
            self.by_id[c.id] = c
        rec = c.record
        rec["bytes"] += n
        if n and "timeline" in rec:
            rec["timeline"].append((round(t, 6), rec["bytes"]))
        size = self.job.sizes.get(c.id)
        if size is not None and "done" not in rec and rec["bytes"] >= size:
            rec["done"] = t  # a sized transfer complete: tell the sender (one byte)
            try:
                c.sock.send(b"!")
            except OSError:
                pass

    def drain(self, deadline: float) -> None:
        """After the stop, read on (counting past the window changes nothing) until every
        sender has closed its connections or ``deadline``: a receiver closing first would reset
        a connection whose sender, starved of CPU, is still sending, and that sender would see
        a reset, not the end of the run."""
        while self.conns and time.monotonic() < deadline:
            for fd, ev in self.ep.poll(max(0.0, min(0.1, deadline - time.monotonic()))):
                self.event(fd, ev)

    def result(self) -> P.ReceiverResult:
        self.drain(self.times.stop + DRAIN_MAX)
        for c in self.conns.values():
            close_abortive(c.sock)
        for s in self.listeners.values():
            close_abortive(s)
        out: Dict[int, P.Received] = {}
        for cid, c in self.by_id.items():
            rec = c.record
            assert rec is not None
            a = rec["at_start"] if rec["at_start"] is not None else 0
            e = rec["at_end"] if rec["at_end"] is not None else rec["bytes"]
            out[cid] = P.Received(bytes=rec["bytes"], window_bytes=max(0, e - a),
                                  first=rec["first"], done=rec.get("done"),
                                  timeline=rec.get("timeline", []))
        return P.ReceiverResult((self.window[0], self.window[1]), out, _rusage())


# --------------------------------------------------------------------------- sender
class Sender(Role):
    def __init__(self, job: P.SenderJob, switch: NetnsSwitch) -> None:
        self.job = job
        self.switch = switch
        self.ep = select.epoll()
        self.poll = job.poll_ms / 1000.0
        self.cc = job.cc.encode()
        self.pols: Dict[str, Any] = {}
        if job.policies:
            from ...policies import make_policy

            self.pols = {src: make_policy(p.spec, p.paths, seed=p.seed, shares=p.shares)
                         for src, p in job.policies.items()}
        self.pending = sorted(job.transfers, key=lambda x: (x.at, x.id))
        self.next = 0
        self.ready: Dict[int, Conn] = {}  # prepared before the start
        self.live: Dict[int, Conn] = {}  # fd -> connection
        self.by_id: Dict[int, Conn] = {}
        self.watched: Set[Conn] = set()  # changer, time limit or a policy that learns
        self.results: Dict[int, P.Sent] = {}
        self.payload = memoryview(bytes(_CHUNK))
        self.monitor: Any = None
        self.watchers = {src: p for src, p in self.pols.items() if "queues" in p.signals}
        self.queue_reads = 0
        self.next_poll = self.next_queue = 0.0

    def _uses_policy(self, t: P.Transfer) -> bool:
        return not t.paths and t.slot is None and t.src_router in self.pols

    def setup(self) -> None:
        q = self.job.queues
        if q is not None and self.watchers:
            from ..network.netlink import NETLINK_ROUTE, QueueMonitor

            self.monitor = QueueMonitor(
                q.hops, lambda n: self.switch.socket_in(n, socket.AF_NETLINK, socket.SOCK_RAW,
                                                        NETLINK_ROUTE))
        for t in self.pending:  # long flows from the start: sockets ready before the clock
            if t.at == 0 and not self._uses_policy(t):
                c = self._prepare(t, 0.0, "setup")
                if c is not None:
                    self.ready[t.id] = c

    def start(self, times: P.Times) -> None:
        super().start(times)
        self.next_poll = self.next_queue = times.connect
        for c in self.ready.values():
            assert c.sent is not None
            c.sent.arrival = times.connect

    def _set_path(self, c: Conn, slot: Optional[int], now: float) -> None:
        t = c.transfer
        assert t is not None and c.sent is not None
        paths = t.paths or self.job.tables.get(t.src_router, {}).get(t.dst_router, [])
        srh = paths[slot] if slot is not None and slot < len(paths) else b""
        if srh:
            c.sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)
        c.slot = slot
        c.sent.paths.append((round(now, 6), slot))

    def _prepare(self, t: P.Transfer, now: float, stage: str) -> Optional[Conn]:
        """The transfer's socket, bound, with its options and path (an error is its result)."""
        sent = P.Sent(arrival=now)
        self.results[t.id] = sent
        try:
            s = self.switch.socket_in(t.netns, proto=IPPROTO_MPTCP if t.mptcp else 0,
                                      cgroup=t.cgroup)
        except OSError as exc:
            sent.error, sent.state = f"{stage}: {exc}", "error"
            return None
        c = Conn(s, "new", t)
        c.sent = sent
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.cc)
            s.bind((t.src, 0))
            if self._uses_policy(t):
                c.policy = self.pols[t.src_router]
                self._set_path(c, c.policy.choose(t.id, t.dst_router, now), now)
            elif t.paths or t.slot is not None:
                self._set_path(c, t.slot if t.slot is not None else 0, now)
            if t.pacing_bps:
                s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, int(t.pacing_bps) // 8)
            s.setblocking(False)
        except OSError as exc:
            close_abortive(s)
            sent.error, sent.state = f"{stage}: {exc}", "error"
            return None
        return c

    def _open(self, t: P.Transfer, now: float) -> None:
        c = self.ready.pop(t.id, None)
        if c is None:
            if t.id in self.results:  # its setup failed
                return
            c = self._prepare(t, now, "connect")
            if c is None:
                return
        assert c.sent is not None
        c.sent.arrival = self.times.connect + t.at
        err = c.sock.connect_ex((t.dst, t.port))
        if err not in (0, _EINPROGRESS):
            close_abortive(c.sock)
            c.sent.error, c.sent.state = f"connect: {os.strerror(err)}", "error"
            return
        c.state = c.sent.state = "connecting"
        self.live[c.fd] = self.by_id[t.id] = c
        self.ep.register(c.fd, select.EPOLLOUT)
        if t.changer is not None and len(t.paths) > 1:
            ch = t.changer
            c.changer = PathChanger(ch.kind, len(t.paths), now, n=ch.n, ms=ch.ms)
        if (c.changer is not None or t.until is not None
                or (c.policy is not None and c.policy.signals & {"rtt", "bytes"})):
            self.watched.add(c)

    def _finish(self, c: Conn, now: float, error: str = "", cut: bool = False) -> None:
        sent = c.sent
        assert sent is not None
        if error and now >= self.times.stop:
            # the receiver closes every connection at the stop: a reset seen after it (a
            # sender starved of CPU, still handling events) ends the run, not the transfer
            error, cut = "", True
        try:
            info = tcp_info(c.sock)
            sent.tcp_info = info
            sent.srtt_us = float(info["rtt_us"])
        except OSError:
            pass
        if c.policy is not None and not error:
            c.policy.closed(c.id, now, srtt_us=sent.srtt_us)
        try:
            self.ep.unregister(c.fd)
        except (OSError, ValueError):
            pass
        self.live.pop(c.fd, None)
        self.by_id.pop(c.id, None)
        self.watched.discard(c)
        if error or cut or c.state != "waiting":
            close_abortive(c.sock)
        else:  # all delivered: a graceful close, so this source port rests in TIME_WAIT
            c.sock.close()
        sent.ended = now
        sent.error = error or None
        if cut:
            sent.cut = now
        elif not error:
            sent.done = now
        sent.state = "error" if error else ("cut" if cut else "done")

    def tick(self, now: float) -> None:
        t0 = self.times.connect
        while self.next < len(self.pending) and now >= t0 + self.pending[self.next].at:
            self._open(self.pending[self.next], now)
            self.next += 1
        if self.monitor is not None and now >= self.next_queue:
            self.monitor.read()  # per-hop queueing delays, as switches would stamp them
            self.queue_reads += 1
            q = self.job.queues
            assert q is not None
            for src, pol in self.watchers.items():
                for dst, slots in q.paths.get(src, {}).items():
                    for slot, hops in enumerate(slots):
                        pol.queues(dst, slot, now, self.monitor.path_delays(hops))
            self.next_queue = now + q.interval_ms / 1000.0
        if (self.watched or self.pols) and now >= self.next_poll:
            self._progress(now)
            self.next_poll = now + self.poll

    def _progress(self, now: float) -> None:
        for c in list(self.watched):
            t = c.transfer
            assert t is not None
            if t.until is not None and now >= self.times.connect + t.until:
                self._finish(c, now, cut=True)  # its time is up (background traffic)
                continue
            if c.changer is not None:
                if c.state != "open":
                    continue
            elif (c.state not in ("open", "waiting") or c.policy is None
                  or not c.policy.signals & {"rtt", "bytes"}):
                continue
            try:
                info = tcp_info(c.sock)
            except OSError:
                continue
            if c.changer is not None:
                new = c.changer.poll(info, now)
            else:
                new = c.policy.progress(c.id, now, srtt_us=float(info["rtt_us"]),
                                        acked_bytes=int(info["bytes_acked"]))
            if new is not None and new != c.slot:
                self._set_path(c, new, now)
        for pol in self.pols.values():
            for cid, slot in pol.moves(now):
                c2 = self.by_id.get(cid)
                if c2 is not None and slot != c2.slot:
                    self._set_path(c2, slot, now)

    def wake(self, now: float) -> float:
        nxt = math.inf
        if self.next < len(self.pending):
            nxt = self.times.connect + self.pending[self.next].at
        if self.watched or self.pols:
            nxt = min(nxt, self.next_poll)
        if self.monitor is not None:
            nxt = min(nxt, self.next_queue)
        return nxt

    def event(self, fd: int, ev: int) -> None:
        c = self.live.get(fd)
        if c is None:
            return
        s = c.sock
        sent = c.sent
        assert sent is not None
        if c.state == "connecting":
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self._finish(c, time.monotonic(), f"connect: {os.strerror(err)}")
                return
            c.state = sent.state = "open"
            sent.open = time.monotonic()
        if c.state == "waiting":
            try:
                got = s.recv(16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._finish(c, time.monotonic(), f"recv: {exc}")
                return
            self._finish(c, time.monotonic(), "" if got else "closed by the receiver")
            return
        if ev & (select.EPOLLERR | select.EPOLLHUP):
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            self._finish(c, time.monotonic(), f"ev {ev:#x} in {c.state}: "
                         f"{os.strerror(err) if err else 'hang-up'}")
            return
        try:
            if c.head:
                k = s.send(c.head)
                c.head = c.head[k:]
                if c.head:
                    return
            if c.size is None:
                sent.sent += s.send(self.payload)
                return
            left = c.size - sent.sent
            if left > 0:
                sent.sent += s.send(self.payload[:min(left, _CHUNK)])
            if sent.sent >= c.size:
                c.state = sent.state = "waiting"
                self.ep.modify(fd, select.EPOLLIN)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as exc:
            self._finish(c, time.monotonic(), f"send: {exc}")

    def result(self) -> P.SenderResult:
        for c in list(self.live.values()):  # still running at the stop
            assert c.sent is not None
            try:
                c.sent.tcp_info = tcp_info(c.sock)
            except OSError:
                pass
            close_abortive(c.sock)
        for c in self.ready.values():  # never opened (the stop came first)
            close_abortive(c.sock)
        if self.monitor is not None:
            self.monitor.close()
        return P.SenderResult(self.results, _rusage(),
                              {src: p.describe() for src, p in self.pols.items()},
                              self.queue_reads)


# --------------------------------------------------------------------------- the process
def _send(out: TextIO, msg: Any) -> None:
    out.write(P.encode(msg) + "\n")
    out.flush()


def main(stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    try:
        job = P.decode(stdin.readline(), (P.ReceiverJob, P.SenderJob))
        if isinstance(job, P.Failed):
            raise P.ProtocolError(f"the emulator sent an error: {job.error}")
        die_with_parent(job.parent)
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
        switch = NetnsSwitch()
        role: Role = (Receiver(job, switch) if isinstance(job, P.ReceiverJob)
                      else Sender(job, switch))
        role.setup()
        _send(out, P.Ready())
        line = stdin.readline()
        if not line:
            return 0  # the emulator went away before the start
        start = P.decode(line, (P.Start,))
        res = run_loop(role, start.times)
    except Exception as exc:  # reported to the emulator, which raises it there
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        _send(out, P.Failed(f"{type(exc).__name__}: {exc}{where}"))
        return 1
    _send(out, res)
    return 0


"""The traffic agent: real TCP between emulated hosts (``python -m tpcstudy.emulate.agent``).

The emulator starts two agents per measurement, a receiver and a sender, each in its own
process group. Each reads one JSON job on standard input, creates its sockets inside the
routers' namespaces (``setns`` per socket: one process serves every namespace), prints
``{"ready": true}`` once set up, reads one more line with the run's times (``time.monotonic()``
values: the clock is shared by all processes; connect, window start and end, stop), runs until
the stop time, then prints one JSON result line.

Sender, per connection: ``TCP_CONGESTION`` cubic on the socket (not the namespace default),
bound to the source host address, the SRH (exact bytes, ``IPV6_RTHDR``) if any, an optional
pacing rate (``SO_MAX_PACING_RATE``); it connects at the job's connect time, writes an 8-byte
connection id, then zeros as fast as TCP takes them. An optional **changer** moves the live
socket to the next path of its list (``setsockopt(IPV6_RTHDR)`` again), polling ``TCP_INFO``
every ``poll_ms``:

- ``{"kind": "nrto", "n": N}`` (the agent paper's NRTOChanger): when the N-th consecutive RTO
  is due. ``tcpi_retransmits`` counts the RTOs fired without progress; once N - 1 have fired
  the socket moves, so the N-th retransmission leaves on the next path: the same packet at the
  same time as the eBPF agent, which switches inside the N-th RTO callback just before that
  retransmission, and again at every later RTO without progress (user space cannot act inside
  the callback; N = 1 therefore moves after the first RTO, one retransmission late).
- ``{"kind": "timeout", "ms": T}`` (TimeoutChanger): when data is in flight and no byte was
  acknowledged for T ms (``tcpi_bytes_acked`` unchanged), then again after each further RTO
  without progress (the agent checks at its callbacks: at most one move per RTO).

Receiver: listening sockets; per accepted connection it reads the id, then counts payload bytes.
It snapshots every connection's count at the window's start and end (goodput = the difference
over the measured window) and, for the ids asked, keeps a timeline ``[[t, bytes], ...]`` of every
read (failure recovery). Every socket is closed abortively (``SO_LINGER`` 0): a closed socket
would otherwise keep draining megabytes into the next measurement.
"""

from __future__ import annotations

import ctypes
import json
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
from typing import Any, Dict, List, Optional

from ..policies import make_policy
from .queues import QueueMonitor

IPV6_RTHDR = getattr(socket, "IPV6_RTHDR", 57)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
PR_SET_PDEATHSIG = 1
_TCP_INFO_LEN = 232
_LINGER0 = struct.pack("ii", 1, 0)
_CHUNK = 1 << 16
_RECV = 1 << 18
#: ``IPPROTO_MPTCP`` (``<linux/in.h>``): a multipath TCP socket; its subflows come from the path
#: manager's endpoints (:mod:`tpcstudy.emulate.mptcp`).
IPPROTO_MPTCP = 262


def tcp_info(sock: socket.socket) -> Dict[str, int]:
    """The ``struct tcp_info`` fields the emulator uses (``<linux/tcp.h>`` offsets)."""
    b = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _TCP_INFO_LEN)
    b = b + bytes(_TCP_INFO_LEN - len(b))
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


class _NetnsSwitch:
    """``setns`` into a named namespace for socket creation (and back)."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self.fds: Dict[str, int] = {}

    def _set(self, fd: int) -> None:
        if self.libc.setns(fd, 0x40000000) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def socket_in(self, netns: Optional[str], mptcp: bool = False) -> socket.socket:
        """A TCP socket (``mptcp``: the kernel's MPTCP, ``IPPROTO_MPTCP``) in ``netns``."""
        return self.open_in(netns, socket.AF_INET6, socket.SOCK_STREAM,
                            IPPROTO_MPTCP if mptcp else 0)

    def open_in(self, netns: Optional[str], family: int, kind: int, proto: int = 0
                ) -> socket.socket:
        """A socket of any family created inside ``netns`` (it stays bound to it)."""
        if not netns:
            return socket.socket(family, kind, proto)
        fd = self.fds.get(netns)
        if fd is None:
            fd = self.fds[netns] = os.open(f"/run/netns/{netns}", os.O_RDONLY)
        self._set(fd)
        try:
            return socket.socket(family, kind, proto)
        finally:
            self._set(self.home)


def _die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        pass
    if parent and os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


def _close(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER0)
    except OSError:
        pass
    sock.close()


def _rusage() -> Dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": r.ru_utime, "system_s": r.ru_stime}


# --------------------------------------------------------------------------- receiver
def _times(out: Any) -> Dict[str, float]:
    """Announce readiness, then read the run's times (one JSON line from the emulator)."""
    print(json.dumps({"ready": True}), file=out, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)  # the emulator went away before the start
    return {k: float(v) for k, v in json.loads(line)["times"].items()}


def run_receiver(job: Dict[str, Any], ns: _NetnsSwitch, out: Any) -> Dict[str, Any]:
    ep = select.epoll()
    listeners: Dict[int, socket.socket] = {}
    for spec in job["listen"]:
        s = ns.socket_in(spec.get("netns"), bool(spec.get("mptcp")))  # MPTCP takes TCP too
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((spec["addr"], int(spec["port"])))
        s.listen(4096)
        s.setblocking(False)
        listeners[s.fileno()] = s
        ep.register(s.fileno(), select.EPOLLIN)
    timeline_ids = set(int(i) for i in job.get("timeline", []))
    sizes = {int(k): int(v) for k, v in (job.get("sizes") or {}).items()}
    conns: Dict[int, Dict[str, Any]] = {}
    socks: Dict[int, socket.socket] = {}
    by_id: Dict[int, Dict[str, Any]] = {}
    buf = bytearray(_RECV)
    view = memoryview(buf)
    started = ended = False
    t_window: List[Optional[float]] = [None, None]
    times = _times(out)
    while True:
        now = time.monotonic()
        if not started and now >= times["start"]:
            started = True
            t_window[0] = now
            for st in by_id.values():
                st["at_start"] = st["bytes"]
        if started and not ended and now >= times["end"]:
            ended = True
            t_window[1] = now
            for st in by_id.values():
                st["at_end"] = st["bytes"]
        if now >= times["stop"]:
            break
        nxt = times["stop"]
        if not started:
            nxt = times["start"]
        elif not ended:
            nxt = times["end"]
        for fd, _ in ep.poll(max(0.0, min(nxt - now, 0.5))):
            if fd in listeners:
                while True:
                    try:
                        c, _ = listeners[fd].accept()
                    except BlockingIOError:
                        break
                    c.setblocking(False)
                    socks[c.fileno()] = c
                    conns[c.fileno()] = {"head": b"", "id": None}
                    ep.register(c.fileno(), select.EPOLLIN)
                continue
            sock = socks.get(fd)
            if sock is None:
                continue
            st = conns[fd]
            try:
                n = sock.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if n == 0:
                ep.unregister(fd)
                if "done" in st.get("rec", {}):
                    sock.close()  # a finished transfer: FIN, the sender keeps the TIME_WAIT
                else:
                    _close(sock)
                del socks[fd]
                continue
            t = time.monotonic()
            if st["id"] is None:
                head = st["head"] + bytes(view[:min(n, 8 - len(st["head"]))])
                used = len(head) - len(st["head"])
                st["head"] = head
                n -= used
                if len(head) < 8:
                    continue
                cid = struct.unpack(">Q", head)[0]
                st["id"] = cid
                rec: Dict[str, Any] = {"bytes": 0, "first": t,
                                       "at_start": 0 if started else None, "at_end": None}
                if cid in timeline_ids:
                    rec["timeline"] = []
                by_id[cid] = rec
                conns[fd] = st = {"head": head, "id": cid, "rec": rec}
            rec = st["rec"]
            rec["bytes"] += n
            if "timeline" in rec and n:
                rec["timeline"].append([round(t, 6), rec["bytes"]])
            size = sizes.get(st["id"])
            if size is not None and "done" not in rec and rec["bytes"] >= size:
                rec["done"] = t  # a sized transfer complete: tell the sender (one byte)
                try:
                    sock.send(b"!")
                except OSError:
                    pass
    for c in socks.values():
        _close(c)
    for s in listeners.values():
        _close(s)
    res = {}
    for cid, rec in by_id.items():
        a = rec["at_start"] if rec["at_start"] is not None else 0
        e = rec["at_end"] if rec["at_end"] is not None else rec["bytes"]
        item = {"bytes": rec["bytes"], "window_bytes": max(0, e - a), "first": rec["first"]}
        if "done" in rec:
            item["done"] = rec["done"]
        if "timeline" in rec:
            item["timeline"] = rec["timeline"]
        res[str(cid)] = item
    return {"role": "receiver", "window": t_window, "connections": res, "rusage": _rusage()}


# --------------------------------------------------------------------------- sender
class _Changer:
    """NRTOChanger / TimeoutChanger from user space (module docstring).

    The eBPF agent decides inside TCP callbacks, so it moves at most once per retransmission
    timeout, just before that timeout's retransmission. Polling ``TCP_INFO``, the equivalent is
    to move as soon as the condition holds, but again only after another timeout has fired
    since the last move (``moved_at``: the kernel's RTO count at that move, -1 after progress).
    """

    def __init__(self, spec: Dict[str, Any], paths: List[bytes], now: float) -> None:
        self.kind = spec["kind"]
        self.n = int(spec.get("n", 3))
        self.t = float(spec.get("ms", 100)) / 1000.0
        self.paths = paths
        self.slot = 0
        self.moved_at = -1
        self.last_acked = -1
        self.last_progress = now
        self.log: List[List[float]] = []

    def poll(self, sock: socket.socket, now: float) -> None:
        if len(self.paths) < 2:
            return
        info = tcp_info(sock)
        if info["bytes_acked"] != self.last_acked:
            self.last_acked = info["bytes_acked"]
            self.last_progress = now
            self.moved_at = -1
        retrans = info["retransmits"]  # RTOs fired since the last progress
        if retrans <= self.moved_at:
            return
        if self.kind == "nrto":
            # the agent moves inside the N-th RTO callback, before its retransmission: move
            # once the (N-1)-th has fired (N = 1: after the first, one retransmission late)
            move = retrans >= max(1, self.n - 1)
        elif self.kind == "timeout":
            move = info["unacked"] > 0 and now - self.last_progress >= self.t
        else:
            move = False
        if move:
            self.moved_at = retrans
            self.slot = (self.slot + 1) % len(self.paths)
            sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, self.paths[self.slot])
            self.log.append([round(now, 6), self.slot, retrans])


def run_sender(job: Dict[str, Any], ns: _NetnsSwitch, out: Any) -> Dict[str, Any]:
    poll = float(job.get("poll_ms", 1)) / 1000.0
    ep = select.epoll()
    items: Dict[int, Dict[str, Any]] = {}
    results: Dict[str, Dict[str, Any]] = {}
    for spec in job["connections"]:
        cid = int(spec["id"])
        s = ns.socket_in(spec.get("netns"), bool(spec.get("mptcp")))
        try:
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, spec.get("cc", "cubic").encode())
            s.bind((spec["src"], 0))
            paths = [bytes.fromhex(h) for h in spec.get("paths") or []]
            srh = bytes.fromhex(spec["srh"]) if spec.get("srh") else (paths[0] if paths else b"")
            if srh:
                s.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)
            if spec.get("pacing_bps"):
                s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, int(spec["pacing_bps"]) // 8)
            s.setblocking(False)
        except OSError as exc:
            s.close()
            results[str(cid)] = {"error": f"setup: {exc}"}
            continue
        items[s.fileno()] = {"id": cid, "sock": s, "spec": spec, "head": struct.pack(">Q", cid),
                             "state": "new", "sent": 0, "paths": paths,
                             "changer": spec.get("changer")}
    payload = memoryview(bytes(_CHUNK))
    times = _times(out)
    connected = False
    changers: List[Dict[str, Any]] = []
    next_poll = 0.0
    while True:
        now = time.monotonic()
        if now >= times["stop"]:
            break
        if not connected and now >= times["connect"]:
            connected = True
            for fd, it in items.items():
                err = it["sock"].connect_ex((it["spec"]["dst"], int(it["spec"]["port"])))
                if err not in (0, 115):  # EINPROGRESS
                    it["state"] = "error"
                    results[str(it["id"])] = {"error": f"connect: {os.strerror(err)}"}
                    continue
                it["state"] = "connecting"
                ep.register(fd, select.EPOLLOUT)
                if it["changer"]:
                    it["ch"] = _Changer(it["changer"], it["paths"], now)
                    changers.append(it)
        if changers and now >= next_poll:
            for it in changers:
                if it["state"] == "open":
                    try:
                        it["ch"].poll(it["sock"], now)
                    except OSError:
                        pass
            next_poll = now + poll
        nxt = times["stop"] if connected else times["connect"]
        if changers:
            nxt = min(nxt, next_poll)
        for fd, ev in ep.poll(max(0.0, min(nxt - time.monotonic(), 0.5))):
            it = items[fd]
            s = it["sock"]
            if it["state"] == "connecting":
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    it["state"] = "error"
                    results[str(it["id"])] = {"error": f"connect: {os.strerror(err)}"}
                    ep.unregister(fd)
                    continue
                it["state"] = "open"
                it["t_open"] = time.monotonic()
            if ev & (select.EPOLLERR | select.EPOLLHUP):
                it["state"] = "closed"
                ep.unregister(fd)
                continue
            try:
                if it["head"]:
                    k = s.send(it["head"])
                    it["head"] = it["head"][k:]
                    if it["head"]:
                        continue
                it["sent"] += s.send(payload)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                it["state"] = "closed"
                results[str(it["id"])] = {"error": f"send: {exc}"}
                ep.unregister(fd)
    for it in items.values():
        s = it["sock"]
        r = results.setdefault(str(it["id"]), {})
        r["sent"] = it["sent"]
        r["state"] = it["state"]
        if "t_open" in it:
            r["t_open"] = it["t_open"]
        try:
            r["tcp_info"] = tcp_info(s)
        except OSError:
            pass
        if "ch" in it:
            r["switches"] = it["ch"].log
        _close(s)
    return {"role": "sender", "connections": results, "rusage": _rusage()}


# --------------------------------------------------------------------------- workload
def run_workload(job: Dict[str, Any], ns: _NetnsSwitch, out: Any) -> Dict[str, Any]:
    """Connections arriving over time, each on the path its source's policy chooses.

    ``job["arrivals"]``: ``{"id", "at" (s after connect), "src_router", "dst_router", "netns",
    "src", "dst", "port", "size" (bytes)}``; ``job["tables"]``: source router -> destination
    router -> SRHs (hex) of the path table, slot 0 first; ``job["policies"]``: source router ->
    ``{"spec", "paths", "seed", "shares"}`` for :func:`tpcstudy.policies.make_policy`. At each
    arrival the policy chooses the path (``None``: no SRH); every ``poll_ms`` each live
    connection's ``TCP_INFO`` is handed to ``progress`` and the policies' ``moves`` applied
    (``setsockopt(IPV6_RTHDR)`` on the live socket); a transfer ends when the receiver's byte
    arrives (all ``size`` bytes read), then ``closed`` gets its smoothed RTT. Returns per
    connection the arrival, open, completion (or cut) times and its paths ``[[t, slot], ...]``.
    """
    poll = float(job.get("poll_ms", 50)) / 1000.0
    cc = str(job.get("cc", "cubic")).encode()
    tables = {s: {d: [bytes.fromhex(h) for h in hs] for d, hs in ds.items()}
              for s, ds in job["tables"].items()}
    pols = {src: make_policy(p["spec"], p["paths"], seed=int(p.get("seed", 0)),
                             shares=p.get("shares"))
            for src, p in job["policies"].items()}
    arrivals = sorted(job["arrivals"], key=lambda a: (float(a["at"]), int(a["id"])))
    qjob = job.get("queues") or {}
    watchers = {src: p for src, p in pols.items() if "queues" in p.signals}
    monitor = None
    if qjob and watchers:
        monitor = QueueMonitor([(h[0], h[1], float(h[2])) for h in qjob["hops"]],
                               lambda n: ns.open_in(n, socket.AF_NETLINK, socket.SOCK_RAW, 0))
    q_every = float(qjob.get("interval_ms", 100.0)) / 1000.0
    q_reads = 0
    ep = select.epoll()
    live: Dict[int, Dict[str, Any]] = {}  # fd -> connection
    by_id: Dict[int, Dict[str, Any]] = {}
    results: Dict[str, Dict[str, Any]] = {}
    payload = memoryview(bytes(_CHUNK))
    times = _times(out)
    t0 = times["connect"]
    nxt_arrival = 0
    next_poll = t0
    next_queue = t0

    def set_path(c: Dict[str, Any], slot: Optional[int]) -> None:
        paths = tables[c["src_router"]][c["dst_router"]]
        srh = paths[slot] if slot is not None and slot < len(paths) else b""
        if srh:
            c["sock"].setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)
        c["slot"] = slot
        c["path_log"].append([round(time.monotonic(), 6), slot])

    def finish(c: Dict[str, Any], now: float, error: str = "", cut: bool = False) -> None:
        fd = c["sock"].fileno()
        try:
            rtt = float(tcp_info(c["sock"])["rtt_us"])
        except OSError:
            rtt = None
        if not error and not c.get("pinned"):
            pols[c["src_router"]].closed(c["id"], now, srtt_us=rtt)
        try:
            ep.unregister(fd)
        except (OSError, ValueError):
            pass
        live.pop(fd, None)
        by_id.pop(c["id"], None)
        if error or cut:
            _close(c["sock"])
        else:  # all delivered: a graceful close, so this source port rests in TIME_WAIT
            c["sock"].close()
        results[str(c["id"])] = {"arrival": c["t_arr"], "open": c.get("t_open"),
                                 "done": now if not (error or cut) else None,
                                 "paths": c["path_log"], "srtt_us": rtt, "error": error or None,
                                 "cut": now if cut else None, "ended": now, "sent": c["sent"]}

    while True:
        now = time.monotonic()
        if now >= times["stop"]:
            break
        while nxt_arrival < len(arrivals) and now >= t0 + float(arrivals[nxt_arrival]["at"]):
            a = arrivals[nxt_arrival]
            nxt_arrival += 1
            cid = int(a["id"])
            c: Dict[str, Any] = {"id": cid, "src_router": a["src_router"],
                                 "dst_router": a["dst_router"], "size": int(a["size"]),
                                 "t_arr": t0 + float(a["at"]), "head": struct.pack(">Q", cid),
                                 "sent": 0, "state": "connecting", "path_log": []}
            try:
                c["sock"] = sk = ns.socket_in(a.get("netns"))
                sk.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc)
                sk.bind((a["src"], 0))
                if a.get("slot") is not None:  # pinned (background traffic): no policy
                    c["pinned"] = True
                    set_path(c, int(a["slot"]))
                else:
                    set_path(c, pols[a["src_router"]].choose(cid, a["dst_router"], now))
                if a.get("until") is not None:
                    c["until"] = t0 + float(a["until"])
                sk.setblocking(False)
                err = sk.connect_ex((a["dst"], int(a["port"])))
                if err not in (0, 115):
                    raise OSError(err, os.strerror(err))
            except OSError as exc:
                if "sock" in c:
                    _close(c["sock"])
                results[str(cid)] = {"arrival": c["t_arr"], "done": None,
                                     "error": f"connect: {exc}", "paths": c["path_log"]}
                continue
            live[sk.fileno()] = by_id[cid] = c
            ep.register(sk.fileno(), select.EPOLLOUT)
        if monitor is not None and now >= next_queue:
            monitor.read()  # per-hop queueing delays, as switches would stamp them
            q_reads += 1
            for src, pol in watchers.items():
                for dst, slots in qjob["paths"].get(src, {}).items():
                    for slot, hops in enumerate(slots):
                        pol.queues(dst, slot, now, monitor.path_delays([tuple(h) for h in hops]))
            next_queue = now + q_every
        if now >= next_poll:
            for c in list(live.values()):
                if c.get("until") is not None and now >= c["until"]:
                    finish(c, now, cut=True)  # its time is up (background traffic)
                    continue
                if c.get("pinned") or not pols[c["src_router"]].signals & {"rtt", "bytes"}:
                    continue  # TCP_INFO only for the policies that learn from it
                if c["state"] in ("open", "waiting"):
                    try:
                        info = tcp_info(c["sock"])
                    except OSError:
                        continue
                    new = pols[c["src_router"]].progress(c["id"], now,
                                                         srtt_us=float(info["rtt_us"]),
                                                         acked_bytes=int(info["bytes_acked"]))
                    if new is not None and new != c["slot"]:
                        set_path(c, new)
            for pol in pols.values():
                for cid, slot in pol.moves(now):
                    c2 = by_id.get(cid)
                    if c2 is not None and slot != c2["slot"]:
                        set_path(c2, slot)
            next_poll = now + poll
        nxt = min(times["stop"], next_poll, next_queue if monitor is not None else math.inf)
        if nxt_arrival < len(arrivals):
            nxt = min(nxt, t0 + float(arrivals[nxt_arrival]["at"]))
        for fd, ev in ep.poll(max(0.0, min(nxt - time.monotonic(), 0.5))):
            found = live.get(fd)
            if found is None:
                continue
            c = found
            sk = c["sock"]
            if c["state"] == "connecting":
                err = sk.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    finish(c, time.monotonic(), f"connect: {os.strerror(err)}")
                    continue
                c["state"] = "open"
                c["t_open"] = time.monotonic()
            if c["state"] == "waiting":
                try:
                    got = sk.recv(16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:
                    finish(c, time.monotonic(), f"recv: {exc}")
                    continue
                finish(c, time.monotonic(), "" if got else "closed by the receiver")
                continue
            if ev & (select.EPOLLERR | select.EPOLLHUP):
                err = sk.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                finish(c, time.monotonic(), f"ev {ev:#x} in {c['state']}: "
                       f"{os.strerror(err) if err else 'hang-up'}")
                continue
            try:
                if c["head"]:
                    k = sk.send(c["head"])
                    c["head"] = c["head"][k:]
                    if c["head"]:
                        continue
                left = c["size"] - c["sent"]
                if left > 0:
                    c["sent"] += sk.send(payload[:min(left, _CHUNK)])
                if c["sent"] >= c["size"]:
                    c["state"] = "waiting"
                    ep.modify(fd, select.EPOLLIN)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                finish(c, time.monotonic(), f"send: {exc}")
    for c in list(live.values()):
        results[str(c["id"])] = {"arrival": c["t_arr"], "open": c.get("t_open"), "done": None,
                                 "paths": c["path_log"], "error": None, "sent": c["sent"]}
        _close(c["sock"])
    if monitor is not None:
        monitor.close()
    return {"role": "workload", "connections": results, "rusage": _rusage(),
            "policies": {src: p.describe() for src, p in pols.items()}, "queue_reads": q_reads}


def main() -> int:
    line = sys.stdin.readline()
    out = sys.stdout
    try:
        job = json.loads(line)
        _die_with_parent(int(job.get("parent", 0)))
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
        ns = _NetnsSwitch()
        if job["role"] == "receiver":
            res = run_receiver(job, ns, out)
        elif job["role"] == "sender":
            res = run_sender(job, ns, out)
        elif job["role"] == "workload":
            res = run_workload(job, ns, out)
        else:
            raise ValueError(f"unknown role {job.get('role')!r}")
    except Exception as exc:  # reported to the emulator, which raises it there
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}{where}"}), file=out, flush=True)
        return 1
    print(json.dumps(res), file=out, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

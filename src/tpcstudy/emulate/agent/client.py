"""The emulator's side of the traffic agent: run transfers on a built network, collect results.

:func:`run_traffic` starts a receiver and a sender agent (:mod:`.child`) through
:meth:`Emulation.spawn <tpcstudy.emulate.network.lifecycle.Emulation.spawn>`, hands each its job
(:mod:`.protocol`), waits until both have set up their sockets, hands both the same times
(connect at ``t0``, measure from ``t0 + warmup`` for ``seconds``), runs the scheduled actions
(failing a link, reading counters) at their times, samples the machine's CPU over the window (a
busy CPU makes goodput a lower bound: reported, never hidden), and returns per transfer what the
sender and the receiver saw.
"""

from __future__ import annotations

import dataclasses
import os
import select
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ...errors import EmulationError
from ..network.lifecycle import Emulation
from ..network.spec import NetworkSpec
from . import protocol as P

__all__ = ["Transfer", "TransferResult", "TrafficResult", "run_traffic", "queue_watch",
           "route_hops", "PORT", "Changer"]

PORT = 5201
#: Seconds between the start signal and the connects (agents are already set up by then).
LEAD = 0.3
#: Seconds the agents keep running after the window (so the end snapshot lands inside).
TAIL = 0.3
#: Seconds the receiver outlives the sender: the sender ends every transfer still running (a
#: receiver closing first would reset connections the sender then counts as failed).
RECEIVER_EXTRA = 0.5
Changer = P.Changer


@dataclasses.dataclass(frozen=True)
class Transfer:
    """One TCP connection from router ``source`` to router ``destination`` (host addresses).

    It opens ``at`` seconds after the start and sends ``size`` bytes (``None``: until the stop).
    Its path: the SRHs ``paths`` (exact bytes, slot 0 first; a ``changer`` moves it along them),
    else slot ``slot`` of the run's table, else the source's policy chooses; with neither, plain
    routing. ``until``: cut then (s after the start); ``pacing_bps``: a pacing rate;
    ``timeline``: the receiver keeps every read's time; ``mptcp``: a multipath TCP connection
    (its subflows: :mod:`tpcstudy.emulate.network.mptcp`); ``cgroup``: its socket is made in
    that cgroup v2 (an emulated host's: a BPF host agent there chooses its path).
    """

    id: int
    source: str
    destination: str
    at: float = 0.0
    size: Optional[int] = None
    paths: Tuple[bytes, ...] = ()
    slot: Optional[int] = None
    until: Optional[float] = None
    changer: Optional[P.Changer] = None
    pacing_bps: Optional[int] = None
    timeline: bool = False
    mptcp: bool = False
    cgroup: Optional[str] = None


@dataclasses.dataclass
class TransferResult:
    """What the sender (``sent``; ``None`` when the run stopped before it opened) and the
    receiver (``received``; ``None`` when no byte of it arrived) saw of one transfer."""

    id: int
    sent: Optional[P.Sent]
    received: Optional[P.Received]

    @property
    def window_bytes(self) -> int:
        return self.received.window_bytes if self.received else 0

    @property
    def bytes(self) -> int:
        return self.received.bytes if self.received else 0

    @property
    def error(self) -> Optional[str]:
        return self.sent.error if self.sent else None

    @property
    def tcp_info(self) -> Dict[str, int]:
        return self.sent.tcp_info if self.sent else {}

    @property
    def timeline(self) -> List[Tuple[float, int]]:
        return self.received.timeline if self.received else []

    @property
    def paths(self) -> List[Tuple[float, Optional[int]]]:
        return self.sent.paths if self.sent else []


@dataclasses.dataclass
class TrafficResult:
    transfers: Dict[int, TransferResult]
    times: Dict[str, float]
    window: Tuple[float, float]
    cpu_busy: float
    rusage: Dict[str, Dict[str, float]]
    actions: Dict[str, float]
    policies: Dict[str, Any]
    queue_reads: int

    @property
    def seconds(self) -> float:
        return self.window[1] - self.window[0]

    def goodput_bps(self, ids: Optional[Sequence[int]] = None) -> float:
        sel = (self.transfers.values() if ids is None
               else [self.transfers[i] for i in ids if i in self.transfers])
        return 8.0 * sum(t.window_bytes for t in sel) / self.seconds if self.seconds > 0 else 0.0


def cpu_times() -> Tuple[int, int]:
    """The machine's CPU time so far, ``(all, idle + iowait)`` in ticks (``/proc/stat``)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f), idle


def _readline(proc: subprocess.Popen, deadline: float, what: str,
              expect: Tuple[type, ...]) -> Any:
    """The agent's next message (one of ``expect``); its :class:`~.protocol.Failed` or its
    death is an :class:`EmulationError` naming the agent."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise EmulationError(f"{what}: no answer in time")
        r, _, _ = select.select([fd], [], [], min(left, 1.0))
        if r:
            line = proc.stdout.readline()
            if not line:
                err = proc.stderr.read() if proc.stderr else ""
                raise EmulationError(f"{what} exited ({proc.poll()}): {err.strip()[-400:]}")
            try:
                msg = P.decode(line, expect)
            except P.ProtocolError as exc:
                raise EmulationError(f"{what}: {exc}") from None
            if isinstance(msg, P.Failed):
                raise EmulationError(f"{what}: {msg.error}")
            return msg


def _spawn(emu: Emulation, jobs: Sequence[Tuple[str, Any]], timeout: float
           ) -> List[subprocess.Popen]:
    env = dict(os.environ, PYTHONSAFEPATH="1")  # never the current folder's tpcstudy
    procs = []
    for _, job in jobs:
        p = emu.spawn([sys.executable, "-m", "tpcstudy.emulate.agent"], stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert p.stdin is not None
        p.stdin.write(P.encode(job) + "\n")
        p.stdin.flush()
        procs.append(p)
    deadline = time.monotonic() + timeout
    for p, (what, _) in zip(procs, jobs):
        _readline(p, deadline, f"traffic {what}", (P.Ready,))
    return procs


def route_hops(spec: NetworkSpec, nodes: Sequence[str]) -> List[Tuple[str, str, float]]:
    """``(netns, interface, rate bit/s)`` of each link direction along the route ``nodes``
    (router names, source first)."""
    topo = spec.topology
    out = []
    for a, b in zip(nodes, nodes[1:]):
        itf = spec.interface_of_arc(topo.arc_of(a, b))
        out.append((spec.routers[itf.router].netns, itf.name, float(itf.rate_bps)))
    return out


def queue_watch(spec: NetworkSpec, routes: Mapping[str, Mapping[str, Sequence[Sequence[str]]]],
                interval_ms: float = 100.0) -> P.QueueWatch:
    """The queue monitor's job: every hop of the ``routes`` (source -> destination -> routes,
    slot order) and, per source, destination and slot, the hops of the slot's route."""
    hops: Dict[Tuple[str, str], float] = {}
    paths: Dict[str, Dict[str, List[List[Tuple[str, str]]]]] = {}
    for src, dests in routes.items():
        for dst, slots in dests.items():
            for nodes in slots:
                h = route_hops(spec, nodes)
                for ns, name, rate in h:
                    hops[(ns, name)] = rate
                paths.setdefault(src, {}).setdefault(dst, []).append(
                    [(ns, name) for ns, name, _ in h])
    return P.QueueWatch(interval_ms, [(ns, name, rate) for (ns, name), rate in
                                      sorted(hops.items())], paths)


def run_traffic(emu: Emulation, transfers: Sequence[Transfer], *, warmup: float, seconds: float,
                drain: float = TAIL, actions: Sequence[Tuple[float, str, Callable[[], Any]]] = (),
                tables: Optional[Mapping[str, Mapping[str, Sequence[bytes]]]] = None,
                policies: Optional[Mapping[str, P.PolicySpec]] = None,
                queues: Optional[P.QueueWatch] = None, poll_ms: Optional[float] = None,
                setup_timeout: float = 120.0, cc: str = "cubic") -> TrafficResult:
    """Run ``transfers`` on ``emu``'s network.

    Parameters
    ----------
    warmup, seconds
        The window measured: from ``warmup`` s after the start, for ``seconds`` s.
    drain
        Seconds the sender runs after the window (late transfers may finish; at least
        :data:`TAIL`).
    actions
        ``(offset, name, fn)``: call ``fn()`` at ``offset`` s after the start; the time it
        returned (its float result, else ``time.monotonic()``) is reported under ``name``.
    tables, policies, queues
        Source router -> destination router -> SRHs (slot 0 first); source router -> its
        policy; the queue monitor's job (:func:`queue_watch`) for the policies reading queues.
    poll_ms
        How often the sender reads ``TCP_INFO`` for changers and policies (default 1 ms when a
        transfer has a changer, else 50 ms).
    """
    spec = emu.spec
    if not transfers:
        raise EmulationError("no transfer to run")
    dests = sorted({t.destination for t in transfers}, key=spec.topology.index_of)
    listen = [P.Listen(spec.router(d).netns, str(spec.host(d)), PORT,
                       any(t.mptcp for t in transfers if t.destination == d)) for d in dests]
    sized = {t.id: int(t.size) for t in transfers if t.size is not None}
    parent = os.getpid()
    rjob = P.ReceiverJob(parent, listen, [t.id for t in transfers if t.timeline], sized)
    if poll_ms is None:
        poll_ms = 1.0 if any(t.changer for t in transfers) else 50.0
    sjob = P.SenderJob(
        parent,
        [P.Transfer(t.id, spec.router(t.source).netns, str(spec.host(t.source)),
                    str(spec.host(t.destination)), PORT, at=float(t.at), size=t.size,
                    src_router=t.source, dst_router=t.destination, paths=list(t.paths),
                    slot=t.slot, until=t.until, changer=t.changer, pacing_bps=t.pacing_bps,
                    mptcp=t.mptcp, cgroup=t.cgroup) for t in transfers],
        tables={s: {d: list(v) for d, v in ds.items()} for s, ds in (tables or {}).items()},
        policies=dict(policies or {}), queues=queues, poll_ms=float(poll_ms), cc=cc)
    try:
        procs = _spawn(emu, [("receiver", rjob), ("sender", sjob)], setup_timeout)
        t0 = time.monotonic() + LEAD
        times = P.Times(t0, t0 + warmup, t0 + warmup + seconds,
                        t0 + warmup + seconds + max(drain, TAIL))
        rtimes = dataclasses.replace(times, stop=times.stop + RECEIVER_EXTRA)
        for p, ts in zip(procs, (rtimes, times)):
            assert p.stdin is not None
            p.stdin.write(P.encode(P.Start(ts)) + "\n")
            p.stdin.flush()
            p.stdin.close()
        schedule = sorted([(t0 + off, name, fn) for off, name, fn in actions]
                          + [(times.start, "_cpu_start", None), (times.end, "_cpu_end", None)],
                          key=lambda x: x[0])
        done: Dict[str, float] = {}
        cpu: Dict[str, Tuple[int, int]] = {}
        for at, name, fn in schedule:
            left = at - time.monotonic()
            if left > 0:
                time.sleep(left)
            if fn is None:
                cpu[name] = cpu_times()
            else:
                ret = fn()
                done[name] = ret if isinstance(ret, float) else time.monotonic()
        results = []
        for p, what, expect, stop in ((procs[0], "receiver", P.ReceiverResult, rtimes.stop),
                                      (procs[1], "sender", P.SenderResult, times.stop)):
            results.append(_readline(p, stop + 120.0, f"traffic {what}", (expect,)))
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
    finally:
        emu.kill_processes()
    recv, send = results
    (ta, ia), (tb, ib) = cpu["_cpu_start"], cpu["_cpu_end"]
    busy = 1.0 - (ib - ia) / (tb - ta) if tb > ta else float("nan")
    out = {t.id: TransferResult(t.id, send.connections.get(t.id), recv.connections.get(t.id))
           for t in transfers}
    w = recv.window
    window = (float(w[0]), float(w[1])) if w[0] is not None and w[1] is not None else (
        times.start, times.end)
    return TrafficResult(out, dataclasses.asdict(times), window, busy,
                         {"receiver": recv.rusage, "sender": send.rusage}, done, send.policies,
                         send.queue_reads)

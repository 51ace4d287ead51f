"""Running TCP flows on a built network and collecting what the receivers measured.

:func:`run_flows` starts a receiver agent and a sender agent (:mod:`tpcstudy.emulate.agent`)
through :meth:`Emulation.spawn`, waits until both have set up their sockets, hands both the same
times (connect at ``t0``, measure from ``t0 + warmup`` for ``seconds``), runs the scheduled
actions (e.g. failing a link) at their times, samples the machine's CPU over the window (a busy
CPU makes goodput a lower bound: reported, never hidden), and returns per-flow results.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import EmulationError
from .lifecycle import Emulation

__all__ = ["Flow", "FlowResult", "TrafficResult", "run_flows", "run_arrivals", "Arrival",
           "ArrivalsResult", "PORT"]

PORT = 5201
#: Seconds between the start signal and the connects (agents are already set up by then).
LEAD = 0.3
#: Seconds the agents keep running after the window (so the end snapshot lands inside).
TAIL = 0.3


@dataclasses.dataclass
class Flow:
    """One TCP connection: ``source`` and ``destination`` router names, the SRHs of its path
    list (exact bytes, first one used from the start; empty list: plain routing), an optional
    changer (see :mod:`~tpcstudy.emulate.agent`) and pacing rate; ``mptcp``: a multipath TCP
    connection (its subflows: :mod:`~tpcstudy.emulate.mptcp`)."""

    id: int
    source: str
    destination: str
    paths: List[bytes] = dataclasses.field(default_factory=list)
    changer: Optional[Dict[str, Any]] = None
    pacing_bps: Optional[int] = None
    timeline: bool = False
    mptcp: bool = False


@dataclasses.dataclass
class FlowResult:
    id: int
    window_bytes: int
    bytes: int
    error: Optional[str]
    tcp_info: Dict[str, int]
    switches: List[List[float]]
    timeline: List[List[float]]
    t_open: Optional[float]


@dataclasses.dataclass
class TrafficResult:
    flows: Dict[int, FlowResult]
    times: Dict[str, float]
    window: Tuple[float, float]
    cpu_busy: float
    rusage: Dict[str, Dict[str, float]]
    actions: Dict[str, float]

    @property
    def seconds(self) -> float:
        return self.window[1] - self.window[0]

    def goodput_bps(self, ids: Optional[Sequence[int]] = None) -> float:
        sel = (self.flows.values() if ids is None
               else [self.flows[i] for i in ids if i in self.flows])
        return 8.0 * sum(f.window_bytes for f in sel) / self.seconds if self.seconds > 0 else 0.0


def _cpu_times() -> Tuple[int, int]:
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f), idle


def _agent_argv() -> List[str]:
    return [sys.executable, "-m", "tpcstudy.emulate.agent"]


def _readline(proc: subprocess.Popen, deadline: float, what: str) -> Dict[str, Any]:
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
            msg = json.loads(line)
            if "error" in msg and len(msg) == 1:
                raise EmulationError(f"{what}: {msg['error']}")
            return msg


def _results(procs: Sequence[subprocess.Popen], names: Sequence[str],
             stop: float) -> Dict[str, Dict[str, Any]]:
    """Each agent's result line (waiting up to 2 minutes past ``stop``), then its exit."""
    out = {}
    for p, what in zip(procs, names):
        out[what] = _readline(p, stop + 120.0, f"traffic {what}")
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    return out


def run_flows(emu: Emulation, flows: Sequence[Flow], *, warmup: float, seconds: float,
              actions: Sequence[Tuple[float, str, Callable[[], Any]]] = (),
              setup_timeout: float = 120.0, cc: str = "cubic") -> TrafficResult:
    """Run ``flows`` on ``emu``'s network.

    Parameters
    ----------
    warmup, seconds
        The window measured: from ``warmup`` s after the connects, for ``seconds`` s.
    actions
        ``(offset, name, fn)``: call ``fn()`` at ``offset`` s after the connects; the time it
        returned (``time.monotonic``) is reported under ``name``.
    """
    spec = emu.spec
    if not flows:
        raise EmulationError("no flow to run")
    dests = sorted({f.destination for f in flows}, key=lambda r: spec.topology.index_of(r))
    listen = [{"netns": spec.router(d).netns, "addr": str(spec.host(d)), "port": PORT,
               "mptcp": any(f.mptcp for f in flows if f.destination == d)} for d in dests]
    conns = []
    for f in flows:
        conns.append({"id": f.id, "netns": spec.router(f.source).netns,
                      "src": str(spec.host(f.source)), "dst": str(spec.host(f.destination)),
                      "port": PORT, "paths": [p.hex() for p in f.paths], "cc": cc,
                      "changer": f.changer, "pacing_bps": f.pacing_bps, "mptcp": f.mptcp})
    parent = os.getpid()
    rjob = {"role": "receiver", "parent": parent, "listen": listen,
            "timeline": [f.id for f in flows if f.timeline]}
    sjob = {"role": "sender", "parent": parent, "connections": conns, "poll_ms": 1}
    try:
        procs = _spawn_agents(emu, [("receiver", rjob), ("sender", sjob)], setup_timeout)
        t0 = time.monotonic() + LEAD
        times = {"connect": t0, "start": t0 + warmup, "end": t0 + warmup + seconds,
                 "stop": t0 + warmup + seconds + TAIL}
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(json.dumps({"times": times}) + "\n")
            p.stdin.flush()
            p.stdin.close()
        schedule = sorted([(t0 + off, name, fn) for off, name, fn in actions]
                          + [(times["start"], "_cpu_start", None),
                             (times["end"], "_cpu_end", None)],
                          key=lambda x: x[0])
        done: Dict[str, float] = {}
        cpu: Dict[str, Tuple[int, int]] = {}
        for at, name, fn in schedule:
            left = at - time.monotonic()
            if left > 0:
                time.sleep(left)
            if fn is None:
                cpu[name] = _cpu_times()
            else:
                ret = fn()
                done[name] = ret if isinstance(ret, float) else time.monotonic()
        results = _results(procs, ("receiver", "sender"), times["stop"])
    finally:
        emu.kill_processes()
    (ta, ia), (tb, ib) = cpu["_cpu_start"], cpu["_cpu_end"]
    busy = 1.0 - (ib - ia) / (tb - ta) if tb > ta else float("nan")
    recv = results["receiver"]["connections"]
    send = results["sender"]["connections"]
    out: Dict[int, FlowResult] = {}
    for f in flows:
        r = recv.get(str(f.id), {})
        s = send.get(str(f.id), {})
        out[f.id] = FlowResult(
            id=f.id, window_bytes=int(r.get("window_bytes", 0)), bytes=int(r.get("bytes", 0)),
            error=s.get("error"), tcp_info=s.get("tcp_info") or {},
            switches=s.get("switches") or [], timeline=r.get("timeline") or [],
            t_open=s.get("t_open"))
    w = results["receiver"]["window"]
    window = (float(w[0]), float(w[1])) if w[0] is not None and w[1] is not None else (
        times["start"], times["end"])
    return TrafficResult(out, times, window, busy,
                         {k: v.get("rusage", {}) for k, v in results.items()}, done)


@dataclasses.dataclass(frozen=True)
class Arrival:
    """One transfer of ``size`` bytes from ``source`` to ``destination`` (router names),
    starting ``at`` seconds after the run's start; ``slot``: a pinned path of the table (the
    policy is not asked), ``until``: cut then (seconds after the start) if still running."""

    id: int
    at: float
    source: str
    destination: str
    size: int
    slot: Optional[int] = None
    until: Optional[float] = None


@dataclasses.dataclass
class ArrivalsResult:
    """Per transfer: ``sender`` (arrival, open, done times, the paths it took, error) and
    ``receiver`` (bytes, bytes in the window) records; the window and the machine's CPU use."""

    sender: Dict[int, Dict[str, Any]]
    receiver: Dict[int, Dict[str, Any]]
    times: Dict[str, float]
    window: Tuple[float, float]
    cpu_busy: float
    policies: Dict[str, Any]

    @property
    def seconds(self) -> float:
        return self.window[1] - self.window[0]


def _spawn_agents(emu: Emulation, jobs: Sequence[Tuple[str, Dict[str, Any]]],
                  setup_timeout: float) -> List[subprocess.Popen]:
    env = dict(os.environ, PYTHONSAFEPATH="1")
    procs = []
    for _, job in jobs:
        p = emu.spawn(_agent_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True, env=env)
        assert p.stdin is not None
        p.stdin.write(json.dumps(job) + "\n")
        p.stdin.flush()
        procs.append(p)
    deadline = time.monotonic() + setup_timeout
    for p, (what, _) in zip(procs, jobs):
        _readline(p, deadline, f"traffic {what}")
    return procs


def run_arrivals(emu: Emulation, arrivals: Sequence[Arrival],
                 tables: Dict[str, Dict[str, List[bytes]]], policies: Dict[str, Dict[str, Any]],
                 *, warmup: float, seconds: float, drain: float = 0.0, poll_ms: float = 50.0,
                 setup_timeout: float = 120.0, cc: str = "cubic",
                 queues: Optional[Dict[str, Any]] = None) -> ArrivalsResult:
    """Run transfers arriving over time (the agent's ``workload`` role), each on the path its
    source's policy picks from ``tables`` (source -> destination -> SRHs, slot 0 first).

    The receivers' goodput window is ``[warmup, warmup + seconds)`` after the start; the agents
    stop ``drain`` seconds after it (late transfers may finish). ``queues``: the queue monitor's
    job (:func:`tpcstudy.emulate.queues.queue_job`) for policies that read queue occupancy.
    """
    spec = emu.spec
    if not arrivals:
        raise EmulationError("no transfer to run")
    dests = sorted({a.destination for a in arrivals}, key=lambda r: spec.topology.index_of(r))
    listen = [{"netns": spec.router(d).netns, "addr": str(spec.host(d)), "port": PORT}
              for d in dests]
    parent = os.getpid()
    rjob = {"role": "receiver", "parent": parent, "listen": listen,
            "sizes": {str(a.id): a.size for a in arrivals}}
    wjob = {"role": "workload", "parent": parent, "poll_ms": poll_ms, "cc": cc,
            "tables": {s: {d: [p.hex() for p in ps] for d, ps in ds.items()}
                       for s, ds in tables.items()},
            "policies": policies, "queues": queues,
            "arrivals": [{"id": a.id, "at": a.at, "src_router": a.source,
                          "dst_router": a.destination, "netns": spec.router(a.source).netns,
                          "src": str(spec.host(a.source)), "dst": str(spec.host(a.destination)),
                          "port": PORT, "size": a.size, "slot": a.slot, "until": a.until}
                         for a in arrivals]}
    try:
        procs = _spawn_agents(emu, [("receiver", rjob), ("workload", wjob)], setup_timeout)
        t0 = time.monotonic() + LEAD
        times = {"connect": t0, "start": t0 + warmup, "end": t0 + warmup + seconds,
                 "stop": t0 + warmup + seconds + max(drain, TAIL)}
        # the receiver stops last: transfers still running at the stop are the sender's to end
        for p, ts in zip(procs, (dict(times, stop=times["stop"] + 0.5), times)):
            assert p.stdin is not None
            p.stdin.write(json.dumps({"times": ts}) + "\n")
            p.stdin.flush()
            p.stdin.close()
        time.sleep(max(0.0, times["start"] - time.monotonic()))
        c0 = _cpu_times()
        time.sleep(max(0.0, times["end"] - time.monotonic()))
        c1 = _cpu_times()
        results = _results(procs, ("receiver", "workload"), times["stop"])
    finally:
        emu.kill_processes()
    busy = 1.0 - (c1[1] - c0[1]) / (c1[0] - c0[0]) if c1[0] > c0[0] else float("nan")
    w = results["receiver"]["window"]
    window = (float(w[0]), float(w[1])) if w[0] is not None and w[1] is not None else (
        times["start"], times["end"])
    return ArrivalsResult({int(k): v for k, v in results["workload"]["connections"].items()},
                          {int(k): v for k, v in results["receiver"]["connections"].items()},
                          times, window, busy, results["workload"].get("policies", {}))

"""Failure recovery of a live TCP connection ("Leveraging eBPF to Make TCP Path-Aware", §III).

Each run picks (seeded) one entry of the topology's path table (slot 0 the IGP path, then
link-disjoint sps paths: :func:`tpcstudy.path_table`) with at least two paths, and a link that
every packet of slot 0 crosses (an arc carrying all of slot 0's ECMP split, preferring one that
touches neither end: a distant failure) and that the other slots avoid. Never a link leaving the
source router: the sending host lives in that router's namespace, so drops there happen in its
own queue, which TCP treats as local congestion (it neither counts an RTO nor keeps the data in
flight), not as a path failure. Three long connections
from the source to the destination prefix start on slot 0, paced below the link rate so they
build no queue (RTT about the forwarding time, RTO at Linux's 200 ms floor):

- ``plain``: plain TCP, never moves;
- ``nrto``: NRTOChanger(N): moves to the next slot when the N-th consecutive RTO is due;
- ``timeout``: TimeoutChanger(T): moves when nothing was acknowledged for T ms.

``fail_after`` seconds after the connects, the arc's queue is replaced by a 0-byte ``bfifo``:
every packet on it is dropped from then on, its routes stay (``ip link set down`` would delete
them, and an HTB class at 8 bit/s keeps blocking after it is restored). The failure is
one-directional, on the data's direction, so acknowledgements keep their path (the agent
paper's asymmetric "sender path failure"; a symmetric failure would also need the receiver to
move its ACK path). ``restore_after`` seconds later the link comes back: plain TCP recovers at
its next retransmission after that, the changers should have moved long before.

**Recovery time**: the receiver records the time of every read; a connection has recovered at
the first read after the failure that follows a silence of at least ``gap`` (the stall the
failure caused); recovery = that time - failure time. A connection that never stalls was not
hit; one with no data after the failure up to the end did not recover.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import Topology, path_table
from ..errors import UsageError
from ..paths import segment_ratios
from ..study.emulation import STRATEGIES
from ..study.emulation import recovery_summary as summarize
from .lifecycle import Emulation
from .srh import srh_bytes
from .traffic import Flow, run_flows

__all__ = ["FailoverCase", "FailoverSettings", "failover_cases", "recovery_time",
           "run_failover_case", "COLUMNS", "KEY", "summarize", "STRATEGIES"]

COLUMNS = ["scenario", "run", "strategy", "param", "seed", "source", "destination",
           "failed_link", "slots", "recovery_s", "moved_s", "moves", "rto_ms", "link_mbps",
           "pacing_mbps", "fail_after", "restore_after", "status", "error"]
KEY = ["scenario", "run", "strategy"]


@dataclasses.dataclass
class FailoverSettings:
    runs: int = 20
    n: int = 3
    t_ms: float = 100.0
    fail_after: float = 2.0
    restore_after: float = 5.0
    observe: float = 8.0
    pacing: float = 0.25
    gap_ms: float = 50.0
    k: int = 4
    paths: int = 5

    def check(self) -> None:
        if self.runs < 1:
            raise UsageError(f"--runs must be >= 1, got {self.runs}")
        if self.n < 1:
            raise UsageError(f"--rto-count N must be >= 1, got {self.n}")
        if not self.t_ms > 0:
            raise UsageError(f"--timeout-ms must be > 0, got {self.t_ms}")
        if not (self.fail_after > 0 and self.restore_after > 0 and self.observe > 0):
            raise UsageError("--fail-after, --restore-after and --observe must be > 0")
        if not 0 < self.pacing <= 1 / len(STRATEGIES):
            raise UsageError(f"--pacing {self.pacing:g}: the three connections share the link, "
                             f"use at most {1 / len(STRATEGIES):.3f} of its rate each")


@dataclasses.dataclass
class FailoverCase:
    run: int
    source: str
    destination: str
    prefix: str
    slots: List[List[str]]  # waypoint router names per slot
    fail_arc: int


def _cut_arcs(topo: Topology, source: str, waypoints: Sequence[str]) -> List[int]:
    """Arcs every packet of the sr-path crosses (ECMP ratio 1 on some segment)."""
    hops = [topo.index_of(source)] + [topo.index_of(w) for w in waypoints]
    off, arcs, frac = segment_ratios(topo, np.array(hops[:-1], dtype=np.int32),
                                     np.array(hops[1:], dtype=np.int32))
    return sorted({int(a) for a, f in zip(arcs.tolist(), frac.tolist()) if f > 1 - 1e-9})


def _arcs(topo: Topology, source: str, waypoints: Sequence[str]) -> set:
    hops = [topo.index_of(source)] + [topo.index_of(w) for w in waypoints]
    _, arcs, _ = segment_ratios(topo, np.array(hops[:-1], dtype=np.int32),
                                np.array(hops[1:], dtype=np.int32))
    return {int(a) for a in arcs.tolist()}


def failover_cases(topo: Topology, settings: FailoverSettings, *, seed: int = 0,
                   plan: Any = None) -> Tuple[List[FailoverCase], int]:
    """The runs' (entry, failed arc), seeded; also the number of eligible entries."""
    table = path_table(topo, k=settings.k, paths=settings.paths, plan=plan)
    eligible = []
    for e in table.entries:
        if len(e.paths) < 2:
            continue
        slots = [list(p.waypoints) for p in e.paths]
        others = set().union(*(_arcs(topo, e.source, s) for s in slots[1:]))
        src = topo.index_of(e.source)
        # not the source's own links: the hosts live in the router's namespace, so a drop there
        # is a local queue drop, which TCP handles as local congestion, not as a loss
        cuts = [a for a in _cut_arcs(topo, e.source, slots[0]) if a not in others
                and (a ^ 1) not in others and int(topo.arc_src[a]) != src]
        if not cuts:
            continue
        ends = {src, topo.index_of(e.destination)}
        distant = [a for a in cuts if int(topo.arc_src[a]) not in ends
                   and int(topo.arc_dst[a]) not in ends]
        eligible.append((e, slots, distant or cuts))
    if not eligible:
        raise UsageError(f"{topo.name}: no entry has a backup path avoiding a link every packet "
                         f"of its default path crosses: nothing to fail over")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(eligible)).tolist()
    cases = []
    for r in range(settings.runs):
        e, slots, cuts = eligible[order[r % len(eligible)]]
        arc = cuts[int(rng.integers(len(cuts)))]
        cases.append(FailoverCase(r, e.source, e.destination, str(e.prefix), slots, arc))
    return cases, len(eligible)


def recovery_time(timeline: Sequence[Sequence[float]], t_fail: float, end: float,
                  gap: float) -> Tuple[str, float]:
    """``("ok", seconds)``, ``("unaffected", nan)`` or ``("not recovered", inf)``.

    The connection recovered at the first read after ``t_fail`` that follows a silence of at
    least ``gap`` seconds (module docstring); ``end`` is when the receiver stopped.
    """
    times = sorted(float(t) for t, _ in timeline)
    before = [t for t in times if t <= t_fail]
    after = [t for t in times if t > t_fail]
    prev = before[-1] if before else None
    for t in after:
        if prev is not None and t - prev >= gap:
            return "ok", t - t_fail
        prev = t
    if not after or end - after[-1] >= gap:  # silent up to the end: never came back
        return "not recovered", math.inf
    return "unaffected", math.nan


def run_failover_case(emu: Emulation, case: FailoverCase, settings: FailoverSettings, *,
                      scenario: str, seed: int, log: Optional[Callable[[str], None]] = None
                      ) -> List[Dict[str, Any]]:
    """One run: three connections (plain, nrto, timeout), one failure; one row each."""
    log = log or (lambda m: None)
    spec = emu.spec
    topo = spec.topology
    plan = spec.plan
    srhs = [srh_bytes([plan.loopback(w) for w in slot]) for slot in case.slots]
    rate = min(i.rate_bps for r in spec.routers for i in r.interfaces)
    pacing = int(rate * settings.pacing)
    changers = {"plain": None, "nrto": {"kind": "nrto", "n": settings.n},
                "timeout": {"kind": "timeout", "ms": settings.t_ms}}
    flows = [Flow(i + 1, case.source, case.destination,
                  srhs if name != "plain" else srhs[:1], changers[name], pacing, timeline=True)
             for i, name in enumerate(STRATEGIES)]
    fail_at = settings.fail_after
    restore_at = fail_at + settings.restore_after
    total = fail_at + max(settings.observe, settings.restore_after + 2.0)
    tail, head = int(topo.arc_src[case.fail_arc]), int(topo.arc_dst[case.fail_arc])
    link = f"{topo.names[tail]}>{topo.names[head]}"
    log(f"run {case.run}: {case.source} -> {case.destination} ({len(case.slots)} slots), "
        f"failing {link} at {fail_at:g} s, restoring at {restore_at:g} s")
    try:
        tr = run_flows(emu, flows, warmup=0.0, seconds=total,
                       actions=[(fail_at, "fail", lambda: emu.fail_arc(case.fail_arc)),
                                (restore_at, "restore", lambda: emu.restore_arc(case.fail_arc))])
    finally:
        emu.restore_arc(case.fail_arc)
    t_fail = tr.actions["fail"]
    end = tr.times["stop"]
    rows = []
    for f, name in zip(flows, STRATEGIES):
        r = tr.flows[f.id]
        status, rec = recovery_time(r.timeline, t_fail, end, settings.gap_ms / 1000.0)
        if r.error:
            status = "failed"
        moves = [s for s in r.switches if s[0] >= t_fail]
        rows.append({
            "scenario": scenario, "run": case.run, "strategy": name,
            "param": "" if name == "plain" else (f"N={settings.n}" if name == "nrto"
                                                 else f"T={settings.t_ms:g}ms"),
            "seed": seed, "source": case.source, "destination": case.destination,
            "failed_link": link, "slots": len(case.slots),
            "recovery_s": round(rec, 6) if math.isfinite(rec) else rec,
            "moved_s": round(moves[0][0] - t_fail, 6) if moves else "",
            "moves": len(moves), "rto_ms": round(r.tcp_info.get("rto_us", 0) / 1000.0, 1),
            "link_mbps": spec.link_mbps, "pacing_mbps": round(pacing / 1e6, 3),
            "fail_after": settings.fail_after, "restore_after": settings.restore_after,
            "status": status, "error": r.error or ""})
    log("  " + ", ".join(f"{x['strategy']}: {x['recovery_s']} s" for x in rows))
    return rows

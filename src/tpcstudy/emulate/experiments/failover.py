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
import statistics
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...errors import UsageError
from ...export import path_table
from ...export.layout import srh_bytes
from ...hostagent.loader import status
from ...metrics import quantile_inf
from ...paths import segment_ratios
from ...study.kinds import KINDS
from ...study.store import cell_float
from ...study.tasks import Task
from ...topology import Topology
from ..agent.client import Changer, Transfer, run_traffic
from ..network.lifecycle import Emulation
from .harness import Experiment, Log, Row, Unit, read_plan_file, topology_units
from .repeats import Metric

__all__ = ["FailoverCase", "FailoverSettings", "failover_cases", "first_silence", "recovery_time",
           "run_failover_case", "COLUMNS", "KEY", "KIND", "STRATEGIES", "Failover",
           "recovery_summary", "format_recovery", "summary_line"]

#: Results kind: one row per (network, run, strategy) with the recovery time in seconds.
KIND = "emulate-failover"
#: Failover strategies, in the order they are run, drawn and printed.
STRATEGIES = ("plain", "nrto", "timeout", "nrto-bpf")
#: The strategies of a run: the last only with the BPF host agent (``--agent bpf``).
SOCKET_STRATEGIES = STRATEGIES[:3]

COLUMNS = list(KINDS[KIND].columns)
KEY = list(KINDS[KIND].key)
#: Summarised over runs and draws per strategy as medians (a run that never recovered counts as
#: infinitely long), strategies compared by run and draw.
METRICS = (Metric("recovery_s", "median", label="recovery s"),
           Metric("moved_s", "median", label="moved s"))


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
    #: ``bpf``: a fourth connection per run with the BPF host agent's in-kernel NRTOChanger.
    agent: str = "socket"

    def check(self) -> None:
        if self.runs < 1:
            raise UsageError(f"--runs must be >= 1, got {self.runs}")
        if self.n < 1:
            raise UsageError(f"--rto-count N must be >= 1, got {self.n}")
        if not self.t_ms > 0:
            raise UsageError(f"--timeout-ms must be > 0, got {self.t_ms}")
        if not (self.fail_after > 0 and self.restore_after > 0 and self.observe > 0):
            raise UsageError("--fail-after, --restore-after and --observe must be > 0")
        n = len(SOCKET_STRATEGIES)
        if not 0 < self.pacing <= 1 / n:
            raise UsageError(f"--pacing {self.pacing:g}: the {n} connections share the link, "
                             f"use at most {1 / n:.3f} of its rate each")
        if self.agent not in ("socket", "bpf"):
            raise UsageError(f"--agent {self.agent!r}: socket or bpf")


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


def first_silence(timeline: Sequence[Sequence[float]], t0: float, gap: float
                  ) -> Tuple[Optional[float], Optional[float], List[float]]:
    """The first silence of at least ``gap`` seconds that ends after ``t0``: ``(the read
    before it, the read ending it, the reads after t0)``; when none ends, ``(the last read,
    None, ...)`` (``None`` for a read that does not exist)."""
    times = sorted(float(t) for t, _ in timeline)
    after = [t for t in times if t > t0]
    prev = max((t for t in times if t <= t0), default=None)
    for t in after:
        if prev is not None and t - prev >= gap:
            return prev, t, after
        prev = t
    return prev, None, after


def recovery_time(timeline: Sequence[Sequence[float]], t_fail: float, end: float,
                  gap: float) -> Tuple[str, float]:
    """``("ok", seconds)``, ``("unaffected", nan)`` or ``("not recovered", inf)``.

    The connection recovered at the first read after ``t_fail`` that follows a silence of at
    least ``gap`` seconds (module docstring); ``end`` is when the receiver stopped.
    """
    _, back, after = first_silence(timeline, t_fail, gap)
    if back is not None:
        return "ok", back - t_fail
    if not after or end - after[-1] >= gap:  # silent up to the end: never came back
        return "not recovered", math.inf
    return "unaffected", math.nan


def run_failover_case(emu: Emulation, case: FailoverCase, settings: FailoverSettings, *,
                      scenario: str, seed: int, log: Optional[Log] = None
                      ) -> List[Dict[str, Any]]:
    """One run: three connections (plain, nrto, timeout) set by the traffic agent and, with BPF
    host agents loaded (``emu.agents``), a fourth (``nrto-bpf``): a plain socket in the source's
    cgroup whose agent gives it slot 0 and moves it in the kernel (NRTOChanger(N) at its RTO
    callback); one failure; one row each."""
    log = log or (lambda m: None)
    spec = emu.spec
    topo = spec.topology
    plan = spec.plan
    srhs = [srh_bytes([plan.loopback(w) for w in slot]) for slot in case.slots]
    rate = min(i.rate_bps for r in spec.routers for i in r.interfaces)
    agent = emu.agents.get(case.source)
    # the connections together offer 3 x --pacing of the link, however many there are (a
    # fourth one must not fill the queues and raise every RTO)
    n = len(SOCKET_STRATEGIES) + (agent is not None)
    pacing = int(rate * settings.pacing * len(SOCKET_STRATEGIES) / n)
    changers = {"plain": None, "nrto": Changer("nrto", n=settings.n),
                "timeout": Changer("timeout", ms=settings.t_ms)}
    flows = [Transfer(i + 1, case.source, case.destination,
                      paths=tuple(srhs if name != "plain" else srhs[:1]), changer=changers[name],
                      pacing_bps=pacing, timeline=True)
             for i, name in enumerate(SOCKET_STRATEGIES)]
    names = list(SOCKET_STRATEGIES)
    if agent is not None:
        flows.append(Transfer(len(flows) + 1, case.source, case.destination, pacing_bps=pacing,
                              timeline=True, cgroup=str(emu.cgroup(case.source))))
        names.append("nrto-bpf")
        moves0 = status(agent)["counters"]["moves"]
    fail_at = settings.fail_after
    restore_at = fail_at + settings.restore_after
    total = fail_at + max(settings.observe, settings.restore_after + 2.0)
    tail, head = int(topo.arc_src[case.fail_arc]), int(topo.arc_dst[case.fail_arc])
    link = f"{topo.names[tail]}>{topo.names[head]}"
    log(f"run {case.run}: {case.source} -> {case.destination} ({len(case.slots)} slots), "
        f"failing {link} at {fail_at:g} s, restoring at {restore_at:g} s")
    try:
        tr = run_traffic(emu, flows, warmup=0.0, seconds=total, poll_ms=1.0,
                         actions=[(fail_at, "fail", lambda: emu.fail_arc(case.fail_arc)),
                                  (restore_at, "restore", lambda: emu.restore_arc(case.fail_arc))])
    finally:
        emu.restore_arc(case.fail_arc)
    t_fail = tr.actions["fail"]
    end = tr.times["stop"]
    rows = []
    for f, name in zip(flows, names):
        r = tr.transfers[f.id]
        state, rec = recovery_time(r.timeline, t_fail, end, settings.gap_ms / 1000.0)
        if r.error:
            state = "failed"
        moves = [p for p in r.paths[1:] if p[0] >= t_fail]
        n_moves = len(moves)
        if name == "nrto-bpf" and agent is not None:  # the kernel's count (one connection)
            n_moves = status(agent)["counters"]["moves"] - moves0
        rows.append({
            "scenario": scenario, "run": case.run, "strategy": name,
            "param": {"plain": "", "nrto": f"N={settings.n}", "timeout": f"T={settings.t_ms:g}ms",
                      "nrto-bpf": f"N={settings.n}"}[name],
            "seed": seed, "source": case.source, "destination": case.destination,
            "failed_link": link, "slots": len(case.slots),
            "recovery_s": round(rec, 6) if math.isfinite(rec) else rec,
            "moved_s": round(moves[0][0] - t_fail, 6) if moves else "",
            "moves": n_moves, "rto_ms": round(r.tcp_info.get("rto_us", 0) / 1000.0, 1),
            "link_mbps": spec.link_mbps, "pacing_mbps": round(pacing / 1e6, 3),
            "fail_after": settings.fail_after, "restore_after": settings.restore_after,
            "status": state, "error": r.error or ""})
    log("  " + ", ".join(f"{x['strategy']}: {x['recovery_s']} s" for x in rows))
    return rows


def _quiet(emu: Emulation) -> None:
    emu.wait_quiet()  # no packet but the runs' own crosses the links


def _with_agents(table: Any, settings: FailoverSettings) -> Any:
    """The unit's preparation with BPF host agents: the table exported (bpf) into a temporary
    folder and loaded on every source router (slot 0 first, NRTOChanger(N) in the kernel)."""
    from ...export import write_paths
    from ...hostagent.maps import SlotPolicy
    from ..network.hostagent import install_agents

    def prepare(emu: Emulation) -> None:
        with tempfile.TemporaryDirectory(prefix="tpcstudy-failover-") as tmp:
            write_paths(table, tmp, formats="bpf")
            emu.agents.update(install_agents(emu, Path(tmp),
                                             policy=SlotPolicy("first", nrto=settings.n)))
        emu.wait_quiet()

    return prepare


class Failover(Experiment):
    """Failure recovery runs on one topology (module docstring), one task per run."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_recovery"
    metrics = METRICS
    summary_by = ("scenario", "strategy", "param")
    arm = "strategy"
    compare = ("recovery_s",)

    def __init__(self, *, topo: str, capacity: str = "uniform", weight: str = "hop",
                 plan: Optional[str] = None, settings: Optional[FailoverSettings] = None,
                 seed: int = 0, log: Log = print) -> None:
        self.settings = settings or FailoverSettings()
        self.settings.check()
        self.topo, self.capacity, self.weight, self.plan = topo, capacity, weight, plan
        self.seed = int(seed)
        self.plan_obj = read_plan_file(plan)
        nets = list(topology_units(topo, capacity=capacity, weight=weight, plan=self.plan_obj,
                                   need_edges=False, log=log))
        if len(nets) != 1:
            raise UsageError(f"failover runs on one topology; --topo names {len(nets)}")
        self.name, self.topology = nets[0][0], nets[0][1]
        self.cases, eligible = failover_cases(self.topology, self.settings, seed=self.seed,
                                              plan=self.plan_obj)
        log(f"{self.name}: {eligible} entries have a backup avoiding a link their default path "
            f"always crosses; {len(self.cases)} runs")

    def config(self) -> Dict[str, Any]:
        st = self.settings
        return {"topo": self.topo, "capacity": self.capacity, "weight": self.weight,
                "plan": self.plan, "failover": dataclasses.asdict(st),
                "table_rule": f"tpcstudy path_table: slot 0 the IGP path, then sps link-disjoint "
                              f"paths, k={st.k}, at most {st.paths}"}

    def seeds(self) -> Optional[List[int]]:
        return [self.seed]

    def units(self, log: Log) -> Iterator[Unit]:
        yield Unit(self.name, self.topology, self.plan_obj,
                   [Task({"scenario": self.name, "run": c.run}, c) for c in self.cases],
                   seed=self.seed, prepare=_quiet if self.settings.agent != "bpf" else
                   _with_agents(path_table(self.topology, k=self.settings.k,
                                           paths=self.settings.paths, plan=self.plan_obj),
                                self.settings))

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        return run_failover_case(emu, task.args, self.settings, scenario=self.name,
                                 seed=self.seed, log=log)

    def table(self, rows: Sequence[Row]) -> str:
        return format_recovery(recovery_summary(rows))


def recovery_summary(rows: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Per strategy: runs, runs hit (their connection stalled), recovered, and the quartiles of
    the recovery time in seconds (runs that never recovered count as infinite)."""
    out = []
    for name in STRATEGIES:
        sel = [r for r in rows if r.get("strategy") == name]
        if not sel:
            continue
        vals = [cell_float(r.get("recovery_s")) for r in sel
                if r.get("status") in ("ok", "not recovered")]
        vals = sorted(v for v in vals if not math.isnan(v))
        fin = [v for v in vals if math.isfinite(v)]
        q = [quantile_inf(vals, x) for x in (0.25, 0.5, 0.75)]
        out.append({"strategy": name, "param": str(sel[0].get("param") or ""), "runs": len(sel),
                    "hit": len(vals), "recovered": len(fin), "q1": q[0], "median": q[1],
                    "q3": q[2], "min": fin[0] if fin else math.nan,
                    "max": fin[-1] if fin else math.nan,
                    "mean": statistics.fmean(fin) if fin else math.nan})
    return out


def format_recovery(summary: Sequence[Mapping[str, Any]]) -> str:
    """The table the CLI prints: per strategy, runs hit and recovered, recovery quartiles."""
    lines = [f"{'strategy':>9} {'param':>9} {'runs':>5} {'hit':>4} {'recovered':>9} "
             f"{'median s':>9} {'q1':>7} {'q3':>7}"]
    for s in summary:
        lines.append(f"{s['strategy']:>9} {s['param']:>9} {s['runs']:>5} {s['hit']:>4} "
                     f"{s['recovered']:>9} {s['median']:>9.3f} {s['q1']:>7.3f} {s['q3']:>7.3f}")
    lines.append("recovery = first data after the failure's stall - failure time; hit = runs "
                 "whose connection stalled")
    return "\n".join(lines)


def summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``)."""
    return "; ".join(f"{s['strategy']}{' ' + s['param'] if s['param'] else ''}: median "
                     f"{s['median']:.2f} s over {s['hit']} runs" for s in recovery_summary(rows))

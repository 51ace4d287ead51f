"""Measure what forwarding costs this machine (``tpcstudy emulate check --calibrate``): the
calibration :mod:`.budget` plans every run with.

A chain of :data:`ROUTERS` routers, built as every emulated network is (HTB and bfifo on each
veth, the hosts' NIC, ``gso_max_segs 1``), carries :data:`CONNECTIONS` TCP connections from one
end to the other at link rates of :data:`RATES` Mbit/s, each for a warm-up then a window, one
network per rate, while the whole machine's busy share is read from ``/proc/stat``. The
transmissions are counted on the veths themselves (``tx_packets`` of every veth end, over the
window: data, ACKs, retransmissions), so the cost found is per packet a veth sends, the traffic
agents' work included. The sweep stops at the first rate
that makes the machine :data:`STOP_BUSY` busy. A least-squares line through the points gives
``busy = base + packets/s * c / cpus``: ``c`` is :attr:`Calibration.seconds_per_packet`.

The cost per packet grows with the network (more namespaces, queues and routes to go through),
so a second measurement runs TCP across a grid of :data:`GRID` routers at :data:`GRID_MBPS`
Mbit/s (:func:`measure_grid`) and stores its cost beside the chain's
(:meth:`~.budget.Calibration.cost` interpolates in the log of the router count).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import networkx as nx
import numpy as np

from ...errors import EmulationError
from ...export.addressing import default_plan
from ...io import read_topology
from ...topology import Topology
from ..agent.client import Transfer, run_traffic
from ..network import kernel as _ns
from ..network.lifecycle import Emulation, new_prefix
from ..network.spec import network_spec
from .budget import (
    QUIET,
    Calibration,
    busy_now,
    calibration_path,
    load_calibration,
    machine,
    now_utc,
    save_calibration,
)
from .harness import Log

__all__ = ["calibrate", "machine_calibration", "fit", "measure_point", "measure_grid", "RATES",
           "ROUTERS", "CONNECTIONS", "GRID"]

#: Link rates of the sweep, Mbit/s.
RATES: Tuple[float, ...] = (5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0)
#: Routers of the chain (its links: one fewer).
ROUTERS = 5
#: TCP connections from one end to the other.
CONNECTIONS = 4
#: The sweep stops once the machine is this busy (the points past it are not linear).
STOP_BUSY = 0.85
#: Plausible costs of one veth transmission, seconds: a fit outside says the busy share moved
#: with other work, not with the traffic (10 million packets/s per CPU is beyond any kernel's
#: forwarding through namespaces and HTB; 1,000 is a machine too busy to measure).
PLAUSIBLE_SECONDS_PER_PACKET = (1e-7, 1e-3)
#: Worst distance of a point from the fitted line (busy share) with three points or more.
MAX_RESIDUAL = 0.1
#: The large network: a GRID_SIDE x GRID_SIDE grid of routers, at GRID_MBPS per link.
GRID_SIDE = 15
GRID = GRID_SIDE * GRID_SIDE
GRID_MBPS = 1.0


def _chain(routers: int) -> Topology:
    g = nx.path_graph([f"c{i}" for i in range(routers)])
    return read_topology(g, name="calibration-chain")


def all_tx(emu: Emulation) -> int:
    """Packets sent so far by every veth end of the network (data and ACKs, the hosts' NICs
    included)."""
    counters = _ns.interface_counters(emu.spec.namespaces)
    return sum(v[3] for ns in counters.values() for name, v in ns.items() if name != "lo")


def _marks(emu: Emulation, warmup: float, seconds: float, into: Dict[str, int]
           ) -> List[Tuple[float, str, Callable[[], None]]]:
    """The traffic actions reading :func:`all_tx` at the window's start and end."""
    def mark(name: str) -> Callable[[], None]:
        def read() -> None:
            into[name] = all_tx(emu)
        return read
    return [(warmup, "a", mark("a")), (warmup + seconds, "b", mark("b"))]


def measure_point(rate: float, *, routers: int = ROUTERS, connections: int = CONNECTIONS,
                  warmup: float = 1.5, seconds: float = 4.0, mtu: int = 1500,
                  queue_ms: float = 50.0, log: Log = print) -> Tuple[float, float, float]:
    """``(rate, veth transmissions per second, busy share)`` of one rate (module docstring)."""
    topo = _chain(routers)
    src, dst = topo.names[0], topo.names[-1]
    spec = network_spec(topo, default_plan(topo, edge_routers=[src, dst]), prefix=new_prefix(),
                        link_mbps=rate, queue_ms=queue_ms, mtu=mtu)
    marks: Dict[str, int] = {}
    with Emulation(spec, log=lambda m: None) as emu:
        emu.wait_quiet()
        flows = [Transfer(i + 1, src, dst) for i in range(connections)]
        tr = run_traffic(emu, flows, warmup=warmup, seconds=seconds,
                         actions=_marks(emu, warmup, seconds, marks))
    failed = [t for t in tr.transfers.values() if t.error]
    if failed:
        raise EmulationError(f"calibration at {rate:g} Mbit/s: {len(failed)} connections failed "
                             f"({failed[0].error})")
    took = tr.actions["b"] - tr.actions["a"]
    pps = (marks["b"] - marks["a"]) / took if took > 0 else 0.0
    log(f"calibration: {rate:g} Mbit/s: {pps:,.0f} packets/s sent by the veths, machine "
        f"{tr.cpu_busy:.0%} busy")
    return float(rate), float(pps), float(tr.cpu_busy)


def stop_busy(background: float = 0.0) -> float:
    """The busy share past which a point is not used: :data:`STOP_BUSY`, or with the machine
    ``background`` busy before any traffic, that share of what the background leaves."""
    return max(STOP_BUSY, background + (1.0 - background) * STOP_BUSY)


def fit(points: Sequence[Tuple[float, float, float]], cpus: int, *, mtu: int = 1500,
        background: float = 0.0) -> Calibration:
    """The line through ``points`` (rate, packets/s, busy) as a :class:`Calibration`; with the
    machine ``background`` busy before any traffic (other work), the points below
    :func:`stop_busy` of it: the line's slope is the cost of our packets on what is left.

    Raises
    ------
    EmulationError
        Fewer than two usable points, a cost that does not grow with the traffic, a cost
        outside :data:`PLAUSIBLE_SECONDS_PER_PACKET`, or points further than
        :data:`MAX_RESIDUAL` from the line (another load on the machine drowned the
        measurement: a calibration planned with it would choose rates this machine cannot
        carry); the message names ``--link-mbps N``.
    """
    stop = stop_busy(background)
    use = [p for p in points if p[2] < stop and p[1] > 0]
    if len(use) < 2:
        raise EmulationError(f"calibration: {len(use)} usable points (need 2 below {stop:.0%} "
                             f"busy; the machine was {background:.0%} busy before any traffic): "
                             "give the link rate yourself, --link-mbps N (e.g. 1)")
    x = np.asarray([p[1] for p in use])
    y = np.asarray([p[2] for p in use])
    slope, icpt = np.polyfit(x, y, 1)
    if not slope > 0:
        raise EmulationError("calibration: the machine's busy share does not grow with the "
                             "traffic (other work on the machine?); measure again when it is "
                             "idle, or give the link rate yourself, --link-mbps N (e.g. 1)")
    cost = float(slope * cpus)
    low, high = PLAUSIBLE_SECONDS_PER_PACKET
    if not low <= cost <= high:
        raise EmulationError(f"calibration: a cost of {cost:.2g} s per packet "
                             f"({1 / cost:,.0f} packets/s per CPU) is not plausible (between "
                             f"{low:g} and {high:g} s): the busy share moved with other work on "
                             "the machine; measure again when it is idle, or give the link rate "
                             "yourself, --link-mbps N (e.g. 1)")
    worst = float(np.max(np.abs(y - (icpt + slope * x))))
    if worst > MAX_RESIDUAL:
        raise EmulationError(f"calibration: a point lies {worst:.0%} busy off the fitted line "
                             "(other work on the machine?); measure again when it is idle, or "
                             "give the link rate yourself, --link-mbps N (e.g. 1)")
    return Calibration(seconds_per_packet=cost, base_busy=float(max(0.0, icpt)),
                       cpus=cpus, mtu=mtu, machine=machine(),
                       points=tuple((float(a), float(b), float(c)) for a, b, c in points),
                       measured=now_utc())


def _grid(side: int) -> Topology:
    g = nx.grid_2d_graph(side, side)
    g = nx.relabel_nodes(g, {(r, c): f"g{r}_{c}" for r, c in g.nodes})
    return read_topology(g, name="calibration-grid")


def measure_grid(*, side: int = GRID_SIDE, rate: float = GRID_MBPS, connections: int = 4,
                 warmup: float = 2.0, seconds: float = 5.0, mtu: int = 1500, log: Log = print
                 ) -> Tuple[int, float, float, float]:
    """``(routers, veth transmissions per second, data transmissions per second, busy share)``
    of TCP across a ``side`` x ``side`` grid at ``rate`` Mbit/s: router ``(i, 0)`` of the left
    column sends to ``(j, side - 1)`` of the right one, ``j = 7 i mod side``, over plain ECMP.
    Every shortest path between two routers of a grid has the same hop count, so each data
    segment received was sent ``hops + 1`` times (the host NIC too): the data transmissions; the
    veths' counters give all of them (ACKs, retransmissions)."""
    topo = _grid(side)
    pairs = [(f"g{i}_0", f"g{(7 * i) % side}_{side - 1}") for i in range(side)]
    hops = {pr: (side - 1) + abs(i - (7 * i) % side) for i, pr in enumerate(pairs)}
    ends = sorted({x for pr in pairs for x in pr})
    spec = network_spec(topo, default_plan(topo, edge_routers=ends), prefix=new_prefix(),
                        link_mbps=rate, mtu=mtu)
    flows = [Transfer(1 + k * side + i, s, d) for k in range(connections)
             for i, (s, d) in enumerate(pairs)]
    marks: Dict[str, int] = {}
    with Emulation(spec, log=lambda m: None) as emu:
        emu.wait_quiet()
        tr = run_traffic(emu, flows, warmup=warmup, seconds=seconds,
                         actions=_marks(emu, warmup, seconds, marks))
    sent = 0.0
    for f in flows:
        res = tr.transfers[f.id]
        mss = (res.tcp_info or {}).get("snd_mss") or (mtu - 60)
        sent += res.window_bytes / float(mss) * (hops[(f.source, f.destination)] + 1)
    data = sent / tr.seconds if tr.seconds > 0 else 0.0
    took = tr.actions["b"] - tr.actions["a"]
    every = (marks["b"] - marks["a"]) / took if took > 0 else 0.0
    log(f"calibration: a {side} x {side} grid at {rate:g} Mbit/s: {every:,.0f} packets/s sent "
        f"by the veths, {data:,.0f} of them data, machine {tr.cpu_busy:.0%} busy")
    return topo.num_nodes, every, data, float(tr.cpu_busy)


def calibrate(*, rates: Sequence[float] = RATES, mtu: int = 1500, log: Log = print,
              cpus: Optional[int] = None, warmup: float = 1.5, seconds: float = 4.0,
              scale: bool = True) -> Calibration:
    """Sweep ``rates`` (stopping at :data:`STOP_BUSY`) and fit (module docstring); with
    ``scale``, the cost on the grid too (:func:`measure_grid`)."""
    n = cpus or machine()["cpus"]
    background = busy_now(1.0)
    if background >= QUIET:
        log(f"calibration: the machine is {background:.0%} busy before any traffic (other "
            f"work): points up to {stop_busy(background):.0%} busy are used")
    points: List[Tuple[float, float, float]] = []
    for r in rates:
        points.append(measure_point(r, mtu=mtu, log=log, warmup=warmup, seconds=seconds))
        if points[-1][2] >= stop_busy(background):
            break
    cal = fit(points, n, mtu=mtu, background=background)
    log(f"calibration: {cal.packets_per_core:,.0f} packets/s per CPU on the chain "
        f"({cal.seconds_per_packet * 1e6:.2f} us each), {cal.base_busy:.0%} busy with no "
        f"traffic, {n} CPUs")
    if scale:
        routers, every, data, busy = measure_grid(mtu=mtu, log=log)
        if every > 0 and data > 0 and busy < stop_busy(background):
            each = max(cal.seconds_per_packet, (busy - cal.base_busy) * n / every)
            cal = dataclasses.replace(cal, routers=ROUTERS, scale_routers=routers,
                                      scale_seconds_per_packet=each,
                                      packets_per_data=max(1.0, every / data))
            log(f"calibration: {1 / each:,.0f} packets/s per CPU on the grid of {routers} "
                f"routers ({each * 1e6:.2f} us each); {every / data:.2f} packets sent per data "
                "packet (ACKs, retransmissions)")
        else:
            log(f"calibration: the grid made the machine {busy:.0%} busy: its cost is not used")
    return cal


#: A calibration measured beside other work: used by this process, never stored (or None when
#: it could not be measured; then not tried again).
_UNSTORED: Dict[int, Optional[Calibration]] = {}


def machine_calibration(log: Log = print, *, mtu: int = 1500,
                        must: bool = True) -> Optional[Calibration]:
    """This machine's stored calibration, or a new one measured now (about a minute) and
    stored (:func:`~.budget.calibration_path`). One measured beside other work (the machine
    :data:`~.budget.QUIET` busy or more before any traffic) is used by this process and not
    stored; one that cannot be measured raises (``must``) or gives ``None`` (said on ``log``;
    the caller falls back to a stated rate)."""
    cal = load_calibration()
    if cal is not None:
        return cal
    if mtu in _UNSTORED:
        return _UNSTORED[mtu]
    log(f"no calibration of this machine in {calibration_path()}: measuring it now (a chain of "
        f"{ROUTERS} routers at up to {len(RATES)} link rates; 'tpcstudy emulate check "
        "--calibrate' does it alone)")
    try:
        cal = calibrate(mtu=mtu, log=log)
    except EmulationError as exc:
        if must:
            raise
        log(f"{exc}")
        _UNSTORED[mtu] = None
        return None
    if cal.base_busy >= QUIET:
        log(f"calibration not stored: measured beside other work (the machine "
            f"{cal.base_busy:.0%} busy with no traffic); used for this run only")
        _UNSTORED[mtu] = cal
        return cal
    log(f"calibration stored in {save_calibration(cal)}")
    return cal

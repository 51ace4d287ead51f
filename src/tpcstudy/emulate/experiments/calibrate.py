"""Measure what forwarding costs this machine (``tpcstudy emulate check --calibrate``): the
calibration :mod:`.budget` plans every run with.

A chain of :data:`ROUTERS` routers, built as every emulated network is (HTB and bfifo on each
veth, the hosts' NIC, ``gso_max_segs 1``), carries :data:`CONNECTIONS` TCP connections from one
end to the other at link rates of :data:`RATES` Mbit/s, each for a warm-up then a window, one
network per rate, while the whole machine's busy share is read from ``/proc/stat``. The data
transmissions are counted on the veths themselves (``tx_packets`` of every forward arc and the
source's host NIC, over the window), so the cost found is per packet each veth sends, ACKs
(on the reverse arcs) and the traffic agents' work included. The sweep stops at the first rate
that makes the machine :data:`STOP_BUSY` busy. A least-squares line through the points gives
``busy = base + packets/s * c / cpus``: ``c`` is :attr:`Calibration.seconds_per_packet`.
"""

from __future__ import annotations

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
from ..network.spec import HOST_NIC, network_spec
from .budget import (
    Calibration,
    calibration_path,
    load_calibration,
    machine,
    now_utc,
    save_calibration,
)
from .harness import Log

__all__ = ["calibrate", "machine_calibration", "fit", "measure_point", "RATES", "ROUTERS",
           "CONNECTIONS"]

#: Link rates of the sweep, Mbit/s.
RATES: Tuple[float, ...] = (5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0)
#: Routers of the chain (its links: one fewer).
ROUTERS = 5
#: TCP connections from one end to the other.
CONNECTIONS = 4
#: The sweep stops once the machine is this busy (the points past it are not linear).
STOP_BUSY = 0.85


def _chain(routers: int) -> Topology:
    g = nx.path_graph([f"c{i}" for i in range(routers)])
    return read_topology(g, name="calibration-chain")


def _forward_tx(emu: Emulation) -> int:
    """Packets sent so far by the veths that carry data (source to destination)."""
    spec = emu.spec
    topo = spec.topology
    n = topo.num_nodes
    counters = _ns.interface_counters(spec.namespaces)
    total = counters[spec.routers[0].netns].get(HOST_NIC, (0, 0, 0, 0))[3]
    for i in range(n - 1):
        itf = spec.interface_of_arc(topo.arc_of(i, i + 1))
        total += counters[spec.routers[i].netns][itf.name][3]
    return total


def measure_point(rate: float, *, routers: int = ROUTERS, connections: int = CONNECTIONS,
                  warmup: float = 1.5, seconds: float = 4.0, mtu: int = 1500,
                  queue_ms: float = 50.0, log: Log = print) -> Tuple[float, float, float]:
    """``(rate, data transmissions per second, busy share)`` of one rate (module docstring)."""
    topo = _chain(routers)
    src, dst = topo.names[0], topo.names[-1]
    spec = network_spec(topo, default_plan(topo, edge_routers=[src, dst]), prefix=new_prefix(),
                        link_mbps=rate, queue_ms=queue_ms, mtu=mtu)
    marks: Dict[str, int] = {}
    with Emulation(spec, log=lambda m: None) as emu:
        emu.wait_quiet()
        flows = [Transfer(i + 1, src, dst) for i in range(connections)]

        def mark(name: str, emu: Emulation = emu) -> Callable[[], None]:
            def read() -> None:
                marks[name] = _forward_tx(emu)
            return read

        tr = run_traffic(emu, flows, warmup=warmup, seconds=seconds,
                         actions=[(warmup, "a", mark("a")), (warmup + seconds, "b", mark("b"))])
    failed = [t for t in tr.transfers.values() if t.error]
    if failed:
        raise EmulationError(f"calibration at {rate:g} Mbit/s: {len(failed)} connections failed "
                             f"({failed[0].error})")
    took = tr.actions["b"] - tr.actions["a"]
    pps = (marks["b"] - marks["a"]) / took if took > 0 else 0.0
    log(f"calibration: {rate:g} Mbit/s: {pps:,.0f} data packets/s sent by the veths, machine "
        f"{tr.cpu_busy:.0%} busy")
    return float(rate), float(pps), float(tr.cpu_busy)


def fit(points: Sequence[Tuple[float, float, float]], cpus: int, *, mtu: int = 1500
        ) -> Calibration:
    """The line through ``points`` (rate, packets/s, busy) as a :class:`Calibration`.

    Raises
    ------
    EmulationError
        Fewer than two points below :data:`STOP_BUSY`, or a cost that does not grow with the
        traffic (another load on the machine drowned the measurement).
    """
    use = [p for p in points if p[2] < STOP_BUSY and p[1] > 0]
    if len(use) < 2:
        raise EmulationError(f"calibration: {len(use)} usable points (need 2 below "
                             f"{STOP_BUSY:.0%} busy): is the machine busy with other work?")
    x = np.asarray([p[1] for p in use])
    y = np.asarray([p[2] for p in use])
    slope, icpt = np.polyfit(x, y, 1)
    if not slope > 0:
        raise EmulationError("calibration: the machine's busy share does not grow with the "
                             "traffic (other work on the machine?); measure again when it is idle")
    return Calibration(seconds_per_packet=float(slope * cpus), base_busy=float(max(0.0, icpt)),
                       cpus=cpus, mtu=mtu, machine=machine(),
                       points=tuple((float(a), float(b), float(c)) for a, b, c in points),
                       measured=now_utc())


def calibrate(*, rates: Sequence[float] = RATES, mtu: int = 1500, log: Log = print,
              cpus: Optional[int] = None, warmup: float = 1.5, seconds: float = 4.0
              ) -> Calibration:
    """Sweep ``rates`` (stopping at :data:`STOP_BUSY`) and fit (module docstring)."""
    n = cpus or machine()["cpus"]
    points: List[Tuple[float, float, float]] = []
    for r in rates:
        points.append(measure_point(r, mtu=mtu, log=log, warmup=warmup, seconds=seconds))
        if points[-1][2] >= STOP_BUSY:
            break
    cal = fit(points, n, mtu=mtu)
    log(f"calibration: {cal.packets_per_core:,.0f} data packets/s per CPU "
        f"({cal.seconds_per_packet * 1e6:.2f} us each), {cal.base_busy:.0%} busy with no "
        f"traffic, {n} CPUs")
    return cal


def machine_calibration(log: Log = print, *, mtu: int = 1500) -> Calibration:
    """This machine's stored calibration, or a new one measured now (about a minute) and
    stored (:func:`~.budget.calibration_path`)."""
    cal = load_calibration()
    if cal is not None:
        return cal
    log(f"no calibration of this machine in {calibration_path()}: measuring it now (a chain of "
        f"{ROUTERS} routers at up to {len(RATES)} link rates; 'tpcstudy emulate check "
        "--calibrate' does it alone)")
    cal = calibrate(mtu=mtu, log=log)
    log(f"calibration stored in {save_calibration(cal)}")
    return cal

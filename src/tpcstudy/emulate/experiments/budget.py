"""The CPU budget of an emulation: what a run will cost this machine, known before it starts,
and the link rate and window that keep it faithful (docs/emulation.md, "Fitting the machine").

**The cost model.** Every packet a veth sends costs the machine CPU time: the kernel forwarding
it, the shaping, the traffic agents' writes and reads. :class:`Calibration` holds that cost,
``c`` CPU-seconds per transmission, measured once per machine (:mod:`.calibrate`) on a chain of
routers and on a grid of :data:`~.calibrate.GRID` routers (``c(n)`` for ``n`` routers follows
the line through the two in ``log n``, :meth:`Calibration.cost`, never below the chain's), and
how many packets the veths send per data packet at the emulator's rates (``p``: ACKs, one per
one or two segments when windows are small, and retransmissions; measured on the grid). A run's
data transmissions per second follow from the LP solution it places: every arc ``a`` carries
``load_a`` link units, every pair's flow also crosses its source's host NIC, so at ``M`` Mbit/s
per unit::

    data transmissions/s = (sum_a load_a + sum_pairs flow) * M * 1e6 / (8 * frame bytes)
    the run's share of the CPUs = c(n) * p * data transmissions/s / cpus

(The cost model's first version, and why it changed: docs/history.md.)

TCP reaches at most the LP, so the prediction is an upper bound. **Other work on the machine**
(a shared server) is measured, not assumed away: before each network the machine's busy share
with no traffic of ours (:func:`wait_quiet`, which returns once the load is quiet or steady) is
the background, and the run is planned with what is left (:func:`budget_left`: the budget, at
most :data:`CPU_LIMIT` less the background less a margin). With less than
:data:`MIN_LEFT` of the CPUs left, or no calibration to be had (the sweep found no usable
point), the run falls back to a stated conservative rate, :data:`FALLBACK_MBPS` per unit, and
says so (``--link-mbps N`` chooses another). A run whose CPUs turn out busier than
:data:`CPU_LIMIT` in all is CPU-bound and is measured again at the rate its reading says fits
(the background not counted as the run's), or at half the rate when the CPUs were saturated
(the harness, :meth:`~.throughput.Throughput.lower`). :func:`choose` inverts it: the largest link
rate (at most :data:`MAX_AUTO_MBPS`, the emulator's old default, so small topologies run as
before; rounded down to 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) whose
predicted share of the CPUs stays under the budget (``--cpu-budget``, default
:data:`DEFAULT_BUDGET` of the CPUs).

**The window.** At low rates a frame takes milliseconds per hop and the queues' floor of 10
frames holds hundreds of milliseconds, so round trips grow; TCP needs tens of them to converge.
The round trip of the longest path placed, frame serialisation on each hop there and back and
one full queue, sets the warm-up (:data:`WARMUP_RTTS` round trips, at least the defaults' 3 s)
and the window (:data:`WINDOW_RTTS`, at least 10 s); opening many connections adds
:data:`OPEN_SECONDS` per thousand to the warm-up.

**Connections.** Each connection needs a few packets per round trip or it lives in timeouts: the
connections per pair shrink (to one at least) so that the mean connection's fair share is at
least :data:`MIN_PACKETS_PER_RTT` frames per round trip and the run has at most
:data:`MAX_CONNECTIONS`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import InputFileError, UsageError
from ...io.bounded import read_bounded
from ...io.datasets import data_dir
from ...io.files import atomic_write_text
from ...models.maxflow import MaxFlowResult
from ...paths import segment_ratios
from ...topology import Topology
from ..agent.client import cpu_times

__all__ = ["Calibration", "RunCost", "Choice", "run_cost", "choose", "nice_floor",
           "calibration_path", "load_calibration", "save_calibration", "machine",
           "DEFAULT_BUDGET", "MAX_AUTO_MBPS", "MIN_AUTO_MBPS", "CPU_LIMIT", "FALLBACK_MBPS",
           "budget_left", "wait_quiet", "busy_now", "background_share", "BACKGROUND_ENV"]

#: Share of the machine's CPUs a run is planned to use (``--cpu-budget``).
DEFAULT_BUDGET = 0.6
#: The highest rate ``auto`` chooses (Mbit/s per unit): the emulator's default before it.
MAX_AUTO_MBPS = 10.0
#: Below this a frame takes 120 ms per hop: ``auto`` refuses to go lower.
MIN_AUTO_MBPS = 0.1
#: A measurement with the CPUs busier than this is CPU-bound (repeated at a lower rate): Kdl's
#: sr at 88 % busy filled 0.89 of the LP's capacity, at 66 % its ecmp 0.92.
CPU_LIMIT = 0.8
#: A network is built only once the machine is less busy than this (:func:`wait_quiet`).
QUIET = 0.3
#: Round trips of warm-up and of measured window.
WARMUP_RTTS = 20
WINDOW_RTTS = 40
#: Seconds of warm-up per thousand connections (opening them, slow start of each).
OPEN_SECONDS = 1.0
#: Frames per round trip the mean connection should get at its fair share.
MIN_PACKETS_PER_RTT = 4.0
#: The most connections one measurement opens.
MAX_CONNECTIONS = 4000
#: Bounds of the window ``auto`` chooses (seconds).
WARMUP_RANGE = (3.0, 60.0)
WINDOW_RANGE = (10.0, 120.0)
#: Largest calibration file read (bytes).
MAX_CALIBRATION_BYTES = 1 << 20
#: The file's format version.
FORMAT = 1
#: The rate ``auto`` falls back to when it cannot plan (no calibration, or the machine's other
#: work leaves less than MIN_LEFT of the CPUs), Mbit/s per unit: a tenth of the highest auto rate.
FALLBACK_MBPS = 1.0
#: The least share of the CPUs a plan is made for (below: the fallback rate).
MIN_LEFT = 0.1
#: What a plan leaves between the background plus the run and CPU_LIMIT.
MARGIN = 0.05


# --------------------------------------------------------------------------- the machine
def machine() -> Dict[str, Any]:
    """What a calibration is valid for: the kernel, the CPU model and how many CPUs."""
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return {"kernel": platform.release(), "cpu": model, "cpus": os.cpu_count() or 1}


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The machine's forwarding cost (module docstring), fitted by :mod:`.calibrate`.

    Attributes
    ----------
    seconds_per_packet
        CPU-seconds per packet a veth sends (data, ACKs and retransmissions alike; the agents'
        work spread over them): the fit's slope. A data packet costs ``packets_per_data``
        times this (:meth:`busy`).
    base_busy
        The machine's busy share with no traffic when it was measured (the fit's intercept, at
        least 0): recorded, not planned with.
    cpus
        CPUs counted in the busy share (all of the machine's).
    mtu
        The MTU it was measured at.
    machine
        :func:`machine` when it was measured; a calibration of another machine is not used.
    points
        The measurements: link Mbit/s, packets the veths sent per second, busy share.
    measured
        When (UTC, ISO 8601).
    """

    seconds_per_packet: float
    base_busy: float
    cpus: int
    mtu: int
    machine: Dict[str, Any]
    points: Tuple[Tuple[float, float, float], ...] = ()
    measured: str = ""
    #: The chain's routers, and the large network's routers and cost per packet a veth sends
    #: (``0``: not measured).
    routers: int = 5
    scale_routers: int = 0
    scale_seconds_per_packet: float = 0.0
    #: Packets the veths send per data packet at the emulator's rates (ACKs, retransmissions),
    #: measured on the grid.
    packets_per_data: float = 2.0

    @property
    def packets_per_core(self) -> float:
        """Packets the veths send per second on one fully busy CPU (the chain)."""
        return 1.0 / self.seconds_per_packet

    def cost(self, routers: int) -> float:
        """CPU-seconds per packet a veth sends in a network of ``routers`` routers: the chain's,
        and beyond it the line through the chain's and the large network's in ``log routers``."""
        c0 = self.seconds_per_packet
        if self.scale_routers <= self.routers or self.scale_seconds_per_packet <= c0:
            return c0
        slope = (self.scale_seconds_per_packet - c0) / math.log(self.scale_routers / self.routers)
        return c0 + slope * math.log(max(routers, self.routers) / self.routers)

    def busy(self, data_per_second: float, routers: int = 0) -> float:
        """The share of the machine's CPUs that many data transmissions per second take in a
        network of ``routers`` (with their ACKs and retransmissions; the idle load not
        counted)."""
        return data_per_second * self.packets_per_data * self.cost(routers) / self.cpus

    def record(self) -> Dict[str, Any]:
        return {"format": FORMAT, "seconds_per_packet": self.seconds_per_packet,
                "packets_per_core": round(self.packets_per_core, 1),
                "base_busy": self.base_busy, "cpus": self.cpus, "mtu": self.mtu,
                "machine": self.machine, "points": [list(p) for p in self.points],
                "measured": self.measured, "routers": self.routers,
                "scale_routers": self.scale_routers,
                "scale_seconds_per_packet": self.scale_seconds_per_packet,
                "packets_per_data": self.packets_per_data}


def calibration_path() -> Path:
    """Where the calibration is kept: ``TPCSTUDY_CALIBRATION``, else beside the data sets."""
    env = os.environ.get("TPCSTUDY_CALIBRATION")
    return Path(env).expanduser() if env else data_dir() / "emulator-calibration.json"


def _number(d: Dict[str, Any], key: str, path: Path, lo: float, hi: float,
            default: Any = None) -> float:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= float(v) <= hi:
        raise InputFileError(f"{path}: {key} = {v!r} is not a number in [{lo:g}, {hi:g}]")
    return float(v)


def load_calibration(path: Optional[Path] = None, *, any_machine: bool = False
                     ) -> Optional[Calibration]:
    """The stored calibration, ``None`` when there is none or it was measured on another
    machine (another kernel, CPU model or CPU count; ``any_machine`` takes it anyway).

    Raises
    ------
    InputFileError
        The file is not a calibration (read bounded, every field checked).
    """
    p = Path(path) if path is not None else calibration_path()
    if not p.exists():
        return None
    raw = read_bounded(p, MAX_CALIBRATION_BYTES)
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputFileError(f"{p}: not a calibration (not JSON: {exc})") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise InputFileError(f"{p}: not a calibration of format {FORMAT} (delete it and run "
                             f"'tpcstudy emulate check --calibrate')")
    spp = _number(d, "seconds_per_packet", p, 1e-9, 1.0)
    base = _number(d, "base_busy", p, 0.0, 1.0)
    cpus = int(_number(d, "cpus", p, 1, 4096))
    if cpus != d["cpus"]:
        raise InputFileError(f"{p}: cpus = {d['cpus']!r} is not a whole number")
    mtu = int(_number(d, "mtu", p, 1280, 9000))
    mach = d.get("machine")
    if not isinstance(mach, dict) or not all(isinstance(mach.get(k), (str, int))
                                             for k in ("kernel", "cpu", "cpus")):
        raise InputFileError(f"{p}: machine = {mach!r} is not a machine description")
    pts = d.get("points", [])
    if not isinstance(pts, list) or not all(
            isinstance(q, list) and len(q) == 3
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                    for x in q) for q in pts):
        raise InputFileError(f"{p}: points must be [Mbit/s, packets/s, busy] triples of finite "
                             "numbers")
    cal = Calibration(spp, base, cpus, mtu, {k: mach[k] for k in ("kernel", "cpu", "cpus")},
                      tuple(tuple(float(x) for x in q) for q in pts),  # type: ignore[misc]
                      str(d.get("measured", ""))[:40],
                      routers=int(_number(d, "routers", p, 2, 1e6, 5)),
                      scale_routers=int(_number(d, "scale_routers", p, 0, 1e6, 0)),
                      scale_seconds_per_packet=_number(d, "scale_seconds_per_packet", p, 0.0, 1.0,
                                                       0.0),
                      packets_per_data=_number(d, "packets_per_data", p, 1.0, 100.0, 2.0))
    if not any_machine and cal.machine != machine():
        return None
    return cal


def save_calibration(cal: Calibration, path: Optional[Path] = None) -> Path:
    """Write ``cal`` (a temporary file renamed over the old one)."""
    p = Path(path) if path is not None else calibration_path()
    atomic_write_text(p, json.dumps(cal.record(), indent=1) + "\n")
    return p


# --------------------------------------------------------------------------- a run's cost
@dataclasses.dataclass(frozen=True)
class RunCost:
    """What one measurement asks of the machine, per Mbit/s of link rate.

    Attributes
    ----------
    hop_units
        ``sum_a load_a + sum_pairs flow``: link units times the transmissions each unit of
        data costs (every arc it crosses and its source's host NIC).
    path_unit_hops
        The longest path placed, its hops weighted by ``1 / capacity in units`` (slow links
        weigh more): a frame's serialisation along it takes ``8 frame * path_unit_hops /
        (M * 1e6)`` seconds at ``M`` Mbit/s.
    max_hops
        The most expected hops (the sum of a path's ECMP ratios) of a path placed.
    pairs, value
        Pairs served and the LP's total flow (link units) of the most expensive model.
    """

    hop_units: float
    path_unit_hops: float
    max_hops: float
    pairs: int
    value: float


def _arc_usage(topo: Topology, result: MaxFlowResult
               ) -> Tuple[np.ndarray, List[np.ndarray], List[np.ndarray]]:
    """Flows of ``result``'s paths that carry any, and per path the arcs it uses with the share
    of it on each (ECMP on each segment of an ``ecmp``/``sr`` waypoint sequence; a concrete
    router path's arcs otherwise)."""
    index = {n: i for i, n in enumerate(topo.names)}
    keep = [([index[n] for n in p], f) for p, f in zip(result.paths, result.flows.tolist())
            if f > 1e-12]
    arcs: List[np.ndarray] = []
    shares: List[np.ndarray] = []
    if result.model in ("ecmp", "sr"):
        segs = [(a, b) for ids, _ in keep for a, b in zip(ids, ids[1:])]
        off, sarcs, fr = segment_ratios(topo, np.asarray([a for a, _ in segs], np.int32),
                                        np.asarray([b for _, b in segs], np.int32))
        j = 0
        for ids, _ in keep:
            lo, hi = off[j], off[j + len(ids) - 1]
            arcs.append(np.asarray(sarcs[lo:hi], dtype=np.int64))
            shares.append(np.asarray(fr[lo:hi], dtype=np.float64))
            j += len(ids) - 1
    else:
        for ids, _ in keep:
            arcs.append(np.asarray([topo.arc_of(a, b) for a, b in zip(ids, ids[1:])],
                                   dtype=np.int64))
            shares.append(np.ones(len(ids) - 1))
    return np.asarray([f for _, f in keep], dtype=np.float64), arcs, shares


def run_cost(topo: Topology, results: Sequence[MaxFlowResult], unit: float) -> RunCost:
    """What the most expensive of ``results`` (the models of one network's measurements,
    solved on ``topo``) costs, capacities in units of ``unit`` (the network's smallest): its
    unit-hops and pairs, and the longest path (in hops and in serialisation time) of all."""
    cap = np.asarray(topo.arc_capacity, dtype=np.float64) / unit
    hop_units, value, pairs, slow, hops = 0.0, 0.0, 0, 0.0, 0.0
    for res in results:
        flows, arcs, shares = _arc_usage(topo, res)
        if not len(flows):
            continue
        load = sum(float(s.sum()) * f for s, f in zip(shares, flows.tolist()))
        units = (load + float(flows.sum())) / unit
        if units > hop_units:
            hop_units, value = units, float(res.value) / unit
        pairs = max(pairs, int(np.count_nonzero(res.pair_flow > 1e-12)))
        slow = max([slow] + [float((s / cap[a]).sum()) for a, s in zip(arcs, shares)])
        hops = max([hops] + [float(s.sum()) for s in shares])
    return RunCost(hop_units=hop_units, path_unit_hops=slow, max_hops=hops, pairs=pairs,
                   value=value)


# --------------------------------------------------------------------------- the choice
_NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def nice_floor(x: float) -> float:
    """The largest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is <= x."""
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"nice_floor({x!r})")
    e = math.floor(math.log10(x))
    m = x / 10 ** e
    best = max(n for n in _NICE if n <= m * (1 + 1e-12))
    return round(best * 10 ** e, 12)


@dataclasses.dataclass(frozen=True)
class Choice:
    """The settings of one run and why (stored with its rows)."""

    link_mbps: float
    warmup: float
    seconds: float
    per_pair: int
    predicted_busy: float
    rtt: float
    reason: str


def rtt_seconds(cost: RunCost, link_mbps: float, *, frame: int, queue_ms: float,
                min_queue_frames: int = 10) -> float:
    """Round trip of the longest path placed at ``link_mbps``: a frame serialised on every hop
    there (an ACK's serialisation back is small beside it, counted as a tenth) plus one full
    queue at the slowest link's rate (``queue_ms``, at least ``min_queue_frames`` frames)."""
    per_unit = 8.0 * frame / (link_mbps * 1e6)  # a frame's time on a link of one unit
    return 1.1 * cost.path_unit_hops * per_unit + max(queue_ms / 1000.0,
                                                      min_queue_frames * per_unit)


def choose(cost: RunCost, cal: Optional[Calibration], *, budget: float = DEFAULT_BUDGET,
           mtu: int, queue_ms: float, per_pair: int, link_mbps: Optional[float] = None,
           warmup: Optional[float] = None, seconds: Optional[float] = None,
           fixed_pairs: bool = False, routers: int = 0) -> Choice:
    """The settings for ``cost`` on the calibrated machine (module docstring); a value given
    (``link_mbps``, ``warmup``, ``seconds``; ``fixed_pairs``: the connections per pair) is
    kept, the others chosen around it. Without a calibration (``cal`` ``None``) a rate must be
    given and the predicted busy share is ``nan``.

    Raises
    ------
    UsageError
        Even :data:`MIN_AUTO_MBPS` would pass the budget: the run does not fit this machine.
    """
    if not 0 < budget <= 1:
        raise UsageError(f"--cpu-budget {budget:g}: a share of the CPUs in (0, 1]")
    frame = mtu + 14
    per_mbps = cost.hop_units * 1e6 / (8.0 * frame)  # data transmissions/s per Mbit/s
    why: List[str] = []
    if link_mbps is None:
        if cal is None:
            raise UsageError("choosing the link rate needs the machine's calibration")
        each = cal.cost(routers) * cal.packets_per_data  # per data transmission
        rate = budget * cal.cpus / (each * per_mbps) if per_mbps > 0 else MAX_AUTO_MBPS
        if rate < MIN_AUTO_MBPS:
            raise UsageError(
                f"{cost.hop_units:.0f} unit-hops of LP traffic need {per_mbps * MIN_AUTO_MBPS:.0f}"
                f" data packets/s even at {MIN_AUTO_MBPS:g} Mbit/s, more than {budget:.0%} of "
                f"{cal.cpus} CPUs forward ({1 / each:.0f} packets/s per CPU at {routers} "
                "routers): this run does not fit this machine (docs/emulation.md: past one "
                "machine; --link-mbps N runs it at N Mbit/s per unit anyway)")
        link_mbps = nice_floor(min(rate, MAX_AUTO_MBPS))
        why.append(f"{cost.hop_units:.1f} unit-hops x {per_mbps / 1e3:.1f}k packets/s per "
                   f"Mbit/s at {1e-3 / each:.1f}k data packets/s per CPU ({routers} routers): "
                   f"{link_mbps:g} Mbit/s keeps {cal.cpus} CPUs under {budget:.0%}"
                   + (" (the highest auto rate)" if rate >= MAX_AUTO_MBPS else ""))
    busy = cal.busy(per_mbps * link_mbps, routers) if cal is not None else math.nan
    rtt = rtt_seconds(cost, link_mbps, frame=frame, queue_ms=queue_ms)
    conns = max(1, cost.pairs) * per_pair
    pp = per_pair
    if cost.pairs:
        fair = cost.value * link_mbps * 1e6 / (8.0 * frame) * rtt  # frames in flight, all pairs
        while pp > 1 and not fixed_pairs and (fair / (cost.pairs * pp) < MIN_PACKETS_PER_RTT
                          or cost.pairs * pp > MAX_CONNECTIONS):
            pp -= 1
        if pp != per_pair:
            why.append(f"{pp} connections per pair (not {per_pair}): {cost.pairs} pairs share "
                       f"{fair:.0f} frames per round trip")
        conns = cost.pairs * pp
    if warmup is None:
        warmup = min(max(WARMUP_RTTS * rtt + OPEN_SECONDS * conns / 1000.0, WARMUP_RANGE[0]),
                     WARMUP_RANGE[1])
        warmup = math.ceil(warmup)
    if seconds is None:
        seconds = math.ceil(min(max(WINDOW_RTTS * rtt, WINDOW_RANGE[0]), WINDOW_RANGE[1]))
    why.append(f"round trip {rtt * 1000:.0f} ms on the longest path ({cost.max_hops:.0f} hops): "
               f"{warmup:g} s warm-up, {seconds:g} s window")
    return Choice(float(link_mbps), float(warmup), float(seconds), pp, busy, rtt,
                  "; ".join(why))


def busy_now(seconds: float = 0.5) -> float:
    """The machine's busy share over the next ``seconds`` (``/proc/stat``)."""
    (t0, i0) = cpu_times()
    time.sleep(seconds)
    (t1, i1) = cpu_times()
    return 1.0 - (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0


#: Readings (of 0.5 s) within this of each other: a steady load, other work that will not end.
STEADY = 0.08


def wait_quiet(limit: float = QUIET, timeout: float = 60.0) -> Tuple[float, float]:
    """Wait until the machine is less than ``limit`` busy (the kernel frees a torn-down
    network's namespaces in the background: Kdl's 680 keep it half busy for about 3 s), or
    until its load is steady (four readings within :data:`STEADY`: other work, which waiting
    will not end), at most ``timeout`` seconds. Returns ``(seconds waited, last busy share)``:
    the background a run is planned with (:func:`budget_left`)."""
    t0 = time.monotonic()
    seen = [busy_now()]
    while seen[-1] >= limit and time.monotonic() - t0 < timeout:
        seen.append(busy_now())
        last = seen[-4:]
        if len(last) == 4 and max(last) - min(last) < STEADY:
            return time.monotonic() - t0, sum(last) / len(last)
    return time.monotonic() - t0, seen[-1]


#: Environment: the machine's other work as a share of its CPUs, instead of measuring it (the
#: tests set 0: their plans must not depend on what else the machine runs).
BACKGROUND_ENV = "TPCSTUDY_EMULATE_BACKGROUND"


def background_share() -> float:
    """The machine's busy share without our traffic: :data:`BACKGROUND_ENV` when set, else
    measured (:func:`wait_quiet`)."""
    fixed = os.environ.get(BACKGROUND_ENV)
    if fixed:
        try:
            v = float(fixed)
        except ValueError:
            v = math.nan
        if not 0.0 <= v <= 1.0:
            raise UsageError(f"{BACKGROUND_ENV}={fixed!r}: a share of the CPUs in [0, 1]")
        return v
    return wait_quiet()[1]


def budget_left(budget: float, background: float) -> Tuple[Optional[float], str]:
    """The share of the CPUs a run may plan for beside ``background`` (the machine's busy share
    without it): ``budget``, at most :data:`CPU_LIMIT` less the background less
    :data:`MARGIN`; ``None`` when that is under :data:`MIN_LEFT`. With the words saying so."""
    if not background >= QUIET:
        return budget, ""
    left = min(budget, CPU_LIMIT - background - MARGIN)
    if left < MIN_LEFT:
        return None, (f"the machine is {background:.0%} busy with other work, leaving under "
                      f"{MIN_LEFT:.0%} of the CPUs")
    return left, (f"the machine is {background:.0%} busy with other work: planned with "
                  f"{left:.0%} of the CPUs (--cpu-budget {budget:.0%}, at most "
                  f"{CPU_LIMIT:.0%} in all)")


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

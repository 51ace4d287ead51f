"""SEMPER's two experiments with the kernel's MPTCP: the dumbbell and the fault test.

SEMPER ("A Stateless Traffic Engineering Solution for WAN based on MP-TCP", Garcia-Aviles et al.)
gives each host K subflows and lets the network's ECMP hashing spread them over the equal-cost
paths, with no state in the routers. The study's ``mptcp:K`` model (docs/method.md §4) is that
idea on paper: each subflow follows one path drawn by per-hop hashing. Here it runs for real on
SEMPER's dumbbell (:func:`~tpcstudy.emulate.network.handmade.dumbbell`: P equal-cost paths
between ``A`` and ``B``, N clients behind ``A`` each sending one MPTCP connection to a server
behind ``B``; subflows from :mod:`~tpcstudy.emulate.network.mptcp`):

- :class:`Dumbbell` measures, for each P, K and seed of the routers' ECMP hash (a network built
  for each), the total goodput (in path units) and Jain's fairness index over the hosts, with
  the subflows that came up and each path's use, beside the model's value and the LP's (P).
- :class:`Fault` is SEMPER's fault test: on a dumbbell of 3 paths, path 1 fails mid-run (its
  first hop drops everything; routes stay, as before any routing reaction); per 1 s window, the
  total goodput and Jain's index over the hosts, for MPTCP with K subflows against single-path
  TCP pinned by SRH to one path per host (host i starts on path i) with the TPC agent's
  TimeoutChanger (move the live socket to the next path after T ms without progress).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...errors import EmulationError, UsageError
from ...export.layout import srh_bytes
from ...metrics import jain_index
from ...study.kinds import KINDS
from ...study.store import cell_float
from ...study.tasks import Task
from ..agent.client import Changer, Transfer, run_traffic
from ..network.handmade import Scenario, dumbbell
from ..network.lifecycle import Emulation
from ..network.mptcp import MAX_SUBFLOWS, enable_subflows, mptcp_available, mptcp_counters
from ..network.spec import NetworkSpec
from .harness import Experiment, Log, Row, Unit
from .repeats import SHARE, Metric
from .throughput import mptcp_model_value

__all__ = ["Dumbbell", "Fault", "window_series", "path_use", "COLUMNS", "KEY", "FAULT_COLUMNS",
           "FAULT_KEY", "KIND", "FAULT_KIND", "format_dumbbell", "format_fault",
           "summary_line", "fault_summary_line", "SUBFLOW_RULE"]

#: Results kind of the dumbbell: one row per (paths, hosts, subflows, seed).
KIND = "emulate-mptcp"
#: Results kind of the fault test: one row per (strategy, 1 s window, seed).
FAULT_KIND = "emulate-fault"
COLUMNS = list(KINDS[KIND].columns)
KEY = list(KINDS[KIND].key)
#: The dumbbell over hash seeds and draws, per P and K.
METRICS = (Metric("measured", label="measured"), Metric("ratio", label="meas/LP"),
           Metric("jain", label="Jain", bounds=SHARE), Metric("joined", label="joined", digits=1))
FAULT_COLUMNS = list(KINDS[FAULT_KIND].columns)
FAULT_KEY = list(KINDS[FAULT_KIND].key)
#: The fault test per draw (windows from 1 s after the start / after the failure), over seeds
#: and draws per strategy.
FAULT_METRICS = (Metric("before", label="before"), Metric("jain_before", label="Jain before", bounds=SHARE),
                 Metric("after", label="after"), Metric("jain_after", label="Jain after", bounds=SHARE),
                 Metric("worst", label="worst 1 s after"))
SUBFLOW_RULE = (f"K-1 extra source addresses as 'subflow' endpoints; limits {MAX_SUBFLOWS}; "
                "ECMP on the 5-tuple, seeded per namespace")


def _need_mptcp(what: str) -> None:
    why = mptcp_available()
    if why:
        raise EmulationError(f"{what} needs MPTCP: {why}")


def _check_subflows(ks: Sequence[int]) -> None:
    for k in ks:
        if not 1 <= int(k) <= MAX_SUBFLOWS:
            raise UsageError(f"--subflows {k}: the kernel allows 1 to {MAX_SUBFLOWS} per "
                             "connection")


def _path_arcs(sc: Scenario) -> List[int]:
    """The arcs ``A > Pj`` (the first hop of each path), in path order."""
    topo = sc.topology
    return [topo.arc_of("A", n) for n in topo.names if n.startswith("P")]


def path_use(snaps: Sequence[Dict[int, int]], arcs: Sequence[int], seconds: float,
             spec: NetworkSpec) -> List[float]:
    """Each path's first hop: the share of its rate the packets sent between the two snapshots
    took (full-size frames), i.e. how busy the hash and the scheduler kept it."""
    if len(snaps) < 2 or seconds <= 0:
        return [math.nan] * len(arcs)
    rate = {i.arc: i.rate_bps for r in spec.routers for i in r.interfaces}
    return [(snaps[1][a] - snaps[0][a]) * spec.frame_bytes * 8.0 / (rate[a] * seconds) for a in arcs]


def window_series(timeline: Sequence[Sequence[float]], t0: float, windows: int,
                  width: float = 1.0) -> List[float]:
    """Bytes received in each window ``[t0 + i width, t0 + (i + 1) width)`` from a receiver
    timeline ``[[t, cumulative bytes], ...]``."""
    out = [0.0] * windows
    last = 0.0
    for t, cum in sorted(((float(t), float(b)) for t, b in timeline)):
        i = int((t - t0) // width)
        if 0 <= i < windows:
            out[i] += cum - last
        last = cum
    return out


# --------------------------------------------------------------------------- the dumbbell
class Dumbbell(Experiment):
    """The dumbbell for every P in ``paths``, K in ``subflows`` and hash seed (module
    docstring)."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_dumbbell"
    metrics = METRICS
    summary_by = ("scenario", "paths", "hosts", "subflows")

    def __init__(self, *, paths: Sequence[int] = (2, 4, 8), subflows: Sequence[int] = (1, 2, 4, 8),
                 hosts: int = 4, seeds: Sequence[int] = (0,), seconds: float = 10.0,
                 warmup: float = 3.0, draws: int = 32) -> None:
        _check_subflows(subflows)
        for p in paths:
            dumbbell(int(p), hosts)  # checks P and N
        if not (seconds > 0 and warmup >= 0):
            raise UsageError("--seconds must be > 0 and --warmup >= 0")
        _need_mptcp("the dumbbell")
        self.paths, self.subflows = [int(p) for p in paths], [int(k) for k in subflows]
        self.hosts, self.seed_list = int(hosts), [int(s) for s in seeds]
        self.seconds, self.warmup, self.draws = float(seconds), float(warmup), int(draws)

    def config(self) -> Dict[str, Any]:
        return {"scenario": "dumbbell", "paths": self.paths, "subflows": self.subflows,
                "hosts": self.hosts, "seconds": self.seconds, "warmup": self.warmup,
                "subflow_rule": SUBFLOW_RULE}

    def seeds(self) -> Optional[List[int]]:
        return self.seed_list

    def units(self, log: Log) -> Iterator[Unit]:
        for p in self.paths:
            for seed in self.seed_list:
                sc = dumbbell(p, self.hosts)
                for k in self.subflows:  # a network each: fresh endpoints and hash state
                    key = {"scenario": "dumbbell", "paths": p, "hosts": self.hosts,
                           "subflows": k, "seed": seed}

                    def prepare(emu: Emulation, sc: Scenario = sc, k: int = k) -> None:
                        enable_subflows(emu.spec, [s for s, _ in sc.pairs],
                                        [d for _, d in sc.pairs], k)

                    yield Unit(f"dumbbell P={p} K={k} seed {seed}", sc.topology, sc.plan,
                               [Task(key, (sc, k))], seed=seed, prepare=prepare)

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        sc, k = task.args
        spec = emu.spec
        dests = [d for _, d in sc.pairs]
        arcs = _path_arcs(sc)
        snaps: List[Dict[int, int]] = []
        joins0 = mptcp_counters(spec, dests, ["MPJoinAckRx"])["MPJoinAckRx"]
        flows = [Transfer(i, s, d, mptcp=True) for i, (s, d) in enumerate(sc.pairs)]
        res = run_traffic(emu, flows, warmup=self.warmup, seconds=self.seconds,
                          actions=[(self.warmup, "c0", lambda: snaps.append(emu.tx_packets())),
                                   (self.warmup + self.seconds, "c1",
                                    lambda: snaps.append(emu.tx_packets()))])
        joined = mptcp_counters(spec, dests, ["MPJoinAckRx"])["MPJoinAckRx"] - joins0
        use = path_use(snaps, arcs, res.actions["c1"] - res.actions["c0"], spec)
        unit = spec.link_mbps * 1e6
        per_host = [res.goodput_bps([f.id]) / unit for f in flows]
        total = sum(per_host)
        lp = float(len(arcs))
        model = mptcp_model_value(sc.topology, sc.pairs, k, self.draws)[0]
        row = dict(task.key, lp_value=lp, model_value=round(model, 6),
                   measured=round(total, 4), ratio=round(total / lp, 4) if lp else math.nan,
                   jain=round(jain_index(per_host), 4), joined=joined,
                   expected_joins=len(sc.pairs) * (k - 1), link_mbps=spec.link_mbps,
                   seconds=round(res.seconds, 3), cpu_busy=round(res.cpu_busy, 3),
                   per_host=" ".join(f"{x:.3f}" for x in per_host),
                   path_use=" ".join(f"{x:.3f}" for x in use))
        log(f"dumbbell P={task.key['paths']} K={k}: {total:.2f} of {lp:.0f} paths (model "
            f"{model:.2f}), Jain {row['jain']:.3f}, subflows joined {joined}/"
            f"{row['expected_joins']}")
        return [row]

    def table(self, rows: Sequence[Row]) -> str:
        return format_dumbbell(rows)


def format_dumbbell(rows: Sequence[Mapping[str, Any]]) -> str:
    """The dumbbell table: per P and K, measured throughput (paths) beside the mptcp:K model
    and the LP, Jain's index, subflows joined."""
    lines = [f"{'paths':>5} {'K':>3} {'measured':>9} {'model':>7} {'LP':>4} {'meas/LP':>8} "
             f"{'Jain':>6} {'joined':>8}"]
    for r in sorted(rows, key=lambda r: (cell_float(r.get("paths")), cell_float(r.get("subflows")),
                                         cell_float(r.get("seed")))):
        if r.get("status") == "failed":
            lines.append(f"{r.get('paths')!s:>5} {r.get('subflows')!s:>3} failed: "
                         f"{r.get('error')}")
            continue
        lines.append(f"{int(cell_float(r['paths'])):>5} {int(cell_float(r['subflows'])):>3} "
                     f"{cell_float(r['measured']):>9.2f} {cell_float(r['model_value']):>7.2f} "
                     f"{cell_float(r['lp_value']):>4.0f} {cell_float(r['ratio']):>8.3f} "
                     f"{cell_float(r['jain']):>6.3f} {int(cell_float(r['joined'])):>3}/"
                     f"{int(cell_float(r['expected_joins'])):<4}")
    return "\n".join(lines)


def summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``)."""
    return "; ".join(f"P={int(cell_float(r['paths']))} K={int(cell_float(r['subflows']))}: "
                     f"{cell_float(r['measured']):.2f} (model {cell_float(r['model_value']):.2f}), Jain "
                     f"{cell_float(r['jain']):.2f}" for r in rows if r.get("status") != "failed")


# --------------------------------------------------------------------------- the fault test
class Fault(Experiment):
    """SEMPER's fault test (module docstring): one row per strategy and 1 s window."""

    kind = FAULT_KIND
    columns = FAULT_COLUMNS
    key = FAULT_KEY
    figure = "plot_fault"
    metrics = FAULT_METRICS
    summary_by = ("scenario", "strategy")
    STRATEGIES = ("mptcp", "tcp+timeout")

    def __init__(self, *, paths: int = 3, hosts: int = 3, subflows: int = 4,
                 timeout_ms: float = 100.0, fail_after: float = 5.0, observe: float = 10.0,
                 seeds: Sequence[int] = (0,)) -> None:
        if paths < 2:
            raise UsageError("the fault test needs at least 2 paths (one fails)")
        _check_subflows([subflows])
        if not (timeout_ms > 0 and fail_after > 0 and observe > 0):
            raise UsageError("--timeout-ms, --fail-after and --observe must be > 0")
        _need_mptcp("the fault test")
        self.sc = dumbbell(int(paths), int(hosts))
        self.paths, self.hosts, self.subflows = int(paths), int(hosts), int(subflows)
        self.timeout_ms, self.fail_after, self.observe = timeout_ms, fail_after, observe
        self.seed_list = [int(s) for s in seeds]
        self.windows = int(math.ceil(fail_after + observe))

    def base(self, link_mbps: float) -> Dict[str, Any]:
        return {"scenario": "fault", "paths": self.paths, "hosts": self.hosts,
                "subflows": self.subflows, "timeout_ms": self.timeout_ms,
                "fail_after": self.fail_after, "link_mbps": link_mbps}

    def config(self) -> Dict[str, Any]:
        return dict(self.base(math.nan), link_mbps=None, observe=self.observe,
                    failure="path 1's first hop (A > P1) drops everything; routes stay")

    def seeds(self) -> Optional[List[int]]:
        return self.seed_list

    def units(self, log: Log) -> Iterator[Unit]:
        sc = self.sc
        for seed in self.seed_list:
            for strategy in self.STRATEGIES:
                def prepare(emu: Emulation, strategy: str = strategy) -> None:
                    if strategy == "mptcp":
                        enable_subflows(emu.spec, [s for s, _ in sc.pairs],
                                        [d for _, d in sc.pairs], self.subflows)

                yield Unit(f"fault {strategy} seed {seed}", sc.topology, sc.plan,
                           [Task({"scenario": "fault", "strategy": strategy, "seed": seed})],
                           seed=seed, prepare=prepare)

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        strategy, seed = str(task.key["strategy"]), int(task.key["seed"])
        got, use = self._run(emu, strategy)
        rows: List[Row] = [
            dict(self.base(emu.spec.link_mbps), strategy=strategy, seed=seed, second=i,
                 total=round(sum(v), 4), jain=round(jain_index(v), 4),
                 failed=i >= self.fail_after, per_host=" ".join(f"{x:.3f}" for x in v),
                 path_use=" ".join(f"{x:.3f}" for x in use[i]))
            for i, v in enumerate(got)]
        before = [r for r in rows if not r["failed"] and r["second"] >= 1]
        after = [r for r in rows if r["failed"] and r["second"] >= self.fail_after + 1]
        log(f"fault {strategy}, seed {seed}: before the failure {_mean(before, 'total'):.2f} "
            f"paths (Jain {_mean(before, 'jain'):.2f}), after {_mean(after, 'total'):.2f} "
            f"(Jain {_mean(after, 'jain'):.2f})")
        return rows

    def _run(self, emu: Emulation, strategy: str) -> tuple:
        """Per 1 s window, each host's goodput in paths, and each path's use (its first hop)."""
        sc, spec = self.sc, emu.spec
        topo, plan = sc.topology, sc.plan
        npaths = len(_path_arcs(sc))
        if strategy == "mptcp":
            flows = [Transfer(i, s, d, mptcp=True, timeline=True)
                     for i, (s, d) in enumerate(sc.pairs)]
        else:
            flows = []
            for i, (s, d) in enumerate(sc.pairs):
                order = [(i + j) % npaths + 1 for j in range(npaths)]  # host i starts on path i
                srhs = tuple(srh_bytes([plan.loopback(f"P{j}"), plan.loopback(d)])
                             for j in order)
                flows.append(Transfer(i, s, d, paths=srhs,
                                      changer=Changer("timeout", ms=self.timeout_ms),
                                      timeline=True))
        arc = topo.arc_of("A", "P1")
        snaps: List[Dict[int, int]] = []

        def snap() -> None:  # at every whole second: each path's use per window
            snaps.append(emu.tx_packets())

        try:
            res = run_traffic(emu, flows, warmup=0.0, seconds=self.windows,
                              actions=[(float(i), f"c{i}", snap)
                                       for i in range(self.windows + 1)]
                              + [(self.fail_after, "fail", lambda: emu.fail_arc(arc))])
        finally:
            emu.restore_arc(arc)
        arcs = _path_arcs(sc)
        use = [path_use(snaps[i:i + 2], arcs, 1.0, spec) for i in range(len(snaps) - 1)]
        t0 = res.times["connect"]
        unit = spec.link_mbps * 1e6 / 8.0
        per = [window_series(res.transfers[f.id].timeline, t0, self.windows) for f in flows]
        return ([[per[h][i] / unit for h in range(len(flows))] for i in range(self.windows)],
                use + [[math.nan] * len(arcs)] * (self.windows - len(use)))

    def table(self, rows: Sequence[Row]) -> str:
        return format_fault(rows)

    def draw_rows(self, rows: Sequence[Row]) -> List[Row]:
        return fault_draws(rows)


def fault_draws(rows: Sequence[Mapping[str, Any]]) -> List[Row]:
    """One row per (strategy, seed, draw) of the per-second rows: the mean total and Jain before
    the failure (windows from 1 s) and after it (from 1 s after), the worst window after it."""
    out: List[Row] = []
    groups: Dict[Tuple[str, str, str], List[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("status") not in (None, "", "ok"):
            continue
        groups.setdefault((str(r["strategy"]), str(r.get("seed")), str(r.get("draw", 0))),
                          []).append(r)
    for (strat, seed, draw), rs in groups.items():
        fa = cell_float(rs[0].get("fail_after"))
        pre = [r for r in rs if 1 <= cell_float(r["second"]) < fa]
        post = [r for r in rs if cell_float(r["second"]) >= fa + 1]
        out.append({"scenario": rs[0].get("scenario", "fault"), "strategy": strat, "seed": seed,
                    "draw": draw, "before": _nanmean(pre, "total"),
                    "jain_before": _nanmean(pre, "jain"), "after": _nanmean(post, "total"),
                    "jain_after": _nanmean(post, "jain"),
                    "worst": min((cell_float(r["total"]) for r in rs if cell_float(r["second"]) >= fa),
                                 default=math.nan)})
    return out


def _nanmean(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    vals = [cell_float(r.get(col)) for r in rows]
    return float(np.mean(vals)) if vals else math.nan


def _mean(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    vals = [float(r[col]) for r in rows]
    return float(np.mean(vals)) if vals else math.nan


def fault_summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``): per strategy, the mean total before and
    after the failure."""
    parts = []
    for line in format_fault(rows).splitlines()[1:]:
        f = line.split()
        parts.append(f"{f[0]}: {f[1]} paths before, {f[3]} after" if len(f) >= 5 else line)
    return "; ".join(parts)


def format_fault(rows: Sequence[Mapping[str, Any]]) -> str:
    """The fault test per strategy (all seeds together): mean total and Jain before the failure
    (from 1 s) and after it (from 1 s after), and the worst window after it."""
    lines = [f"{'strategy':<12} {'before':>7} {'Jain':>5} {'after':>7} {'Jain':>5} "
             f"{'worst 1 s after':>15}"]
    for strat in dict.fromkeys(str(r["strategy"]) for r in rows):
        rs = [r for r in rows if str(r["strategy"]) == strat and r.get("status") != "failed"]
        if not rs:
            lines.append(f"{strat:<12} failed")
            continue
        fa = cell_float(rs[0].get("fail_after"))
        pre = [r for r in rs if 1 <= cell_float(r["second"]) < fa]
        post = [r for r in rs if cell_float(r["second"]) >= fa + 1]
        worst = min((cell_float(r["total"]) for r in rs if cell_float(r["second"]) >= fa), default=math.nan)

        def mean(xs: Sequence[Mapping[str, Any]], col: str) -> float:
            v = [cell_float(x[col]) for x in xs]
            return sum(v) / len(v) if v else math.nan

        lines.append(f"{strat:<12} {mean(pre, 'total'):>7.2f} {mean(pre, 'jain'):>5.2f} "
                     f"{mean(post, 'total'):>7.2f} {mean(post, 'jain'):>5.2f} {worst:>15.2f}")
    return "\n".join(lines)

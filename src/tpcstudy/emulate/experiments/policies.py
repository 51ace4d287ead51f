"""Host path-selection policies on live TCP: transfers arriving over time, each placed by its
source's policy (:mod:`tpcstudy.policies`) on a path of the exported path table.

For one set of pairs (heavy pairs drawn as ``tpcstudy maxflow`` draws them):

1. **The path table** (:func:`policy_tables`): ``tpcstudy export``'s table for those pairs with
   ``select="maxflow"`` (slot 0 the IGP path, then the sr-paths of at most ``k`` segments the
   max-flow LP puts flow on, then the link-disjoint sps paths; ``paths`` slots). The ``lp``
   policy's shares are the sr LP's flows on those slots (flow on a path the table could not hold
   is reported in ``lp_unplaced``). ``lp_value`` is that LP's optimum in link units: what the
   table's paths can carry at most.
2. **The workload** (:func:`poisson_arrivals`): per pair, transfers arriving as a Poisson process
   of rate ``load x lp_equal / (pairs x mean size)`` with Pareto sizes (shape ``shape``, mean
   ``mean_bytes``); one seeded draw, the same for every policy. ``lp_equal``
   (:func:`equal_share_value`) is what the table's sr-paths carry when every pair gets the same
   rate, so ``load`` = 1 offers each pair exactly its feasible equal share (offering the
   max-throughput optimum evenly would overload the pairs the optimum starves).
3. **The run** (:func:`tpcstudy.emulate.agent.client.run_traffic`): the agent asks the source's
   policy for the path of every new connection, feeds it each live connection's ``TCP_INFO``
   (smoothed RTT, bytes acknowledged) every ``poll_ms`` and applies the moves it asks for.

Per policy: ``goodput`` (link units, receivers' bytes in the window), ``goodput_lp`` (its share
of the LP optimum), flow completion times of the transfers that arrived in the window (``median``
and ``p99``; a transfer not finished ``drain`` seconds after the window counts as infinitely
long, so the quantiles never flatter a policy that starves some), ``completed`` of ``transfers``,
Jain's index over the pairs' goodput, ``slot_share`` (the share of transfers started on each slot;
``plain`` for no SRH), ``moves`` (live path changes) and ``aborted`` (transfers the kernel ended,
timed out or reset, under overload: counted as unfinished).

``mptcp:K`` runs beside them as a host policy (no table): every transfer of the draw opens one
kernel MPTCP connection whose K subflows (K - 1 extra source addresses,
:mod:`~tpcstudy.emulate.network.mptcp`) the routers' ECMP hash places; ``slot_share`` is then
``mptcp:1.000`` and ``subflows_joined`` counts the MP_JOIN handshakes the destinations
completed (of ``transfers x (K - 1)`` at most: a short transfer may finish first).

With ``--repeat N`` every policy runs in each draw on the same arrivals (draw ``d``'s seed:
:func:`~.repeats.draw_seed`), so policies are compared by draw (:mod:`.repeats`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import UsageError
from ...export import path_table
from ...export.layout import srh_bytes
from ...metrics import jain_index, quantile_inf
from ...models.maxflow import max_flow
from ...policies import make_policy, parse_policy
from ...study.kinds import KINDS
from ...study.store import cell_float
from ...study.tasks import Task
from ..agent.client import Transfer, queue_watch, run_traffic
from ..agent.protocol import PolicySpec
from ..network.lifecycle import Emulation
from ..network.mptcp import MAX_SUBFLOWS, enable_subflows, mptcp_available, mptcp_counters
from .harness import (
    PAIRS_RULE,
    Experiment,
    Log,
    Row,
    Unit,
    check_heavy,
    pair_tasks,
    read_plan_file,
    topology_units,
)
from .repeats import SHARE, Metric, draw_seed

__all__ = ["PolicySettings", "poisson_arrivals", "policy_tables", "measure_policies", "COLUMNS",
           "KEY", "KIND", "LIVE_POLICIES", "Policies", "format_policies", "summary_line",
           "equal_share_value"]

#: Results kind: one row per (network, heavy percent, seed, policy); the two-path scenarios
#: (:mod:`.twopaths`) write the same kind and columns.
KIND = "emulate-policies"

#: Policies the emulator drives (all of :data:`tpcstudy.policies.POLICIES`).
LIVE_POLICIES = ("ecmp", "random", "lp", "exp3", "ba-rtt", "ba-throughput", "queue-max",
                 "queue-sum")
#: Seconds between two reads of the queues for ``queue-max`` / ``queue-sum``.
QUEUE_INTERVAL_MS = 100.0
#: One column set for every policy scenario (zoo, multihoming, delay; a scenario leaves the
#: others' columns empty): see this module's and :mod:`~tpcstudy.emulate.twopaths`' docstrings.
COLUMNS = list(KINDS[KIND].columns)
KEY = list(KINDS[KIND].key)
#: Summarised over draws (``--repeat``) and compared by draw: the metrics that rank policies.
#: An unfinished transfer makes a draw's FCT quantile infinite: FCTs are medians over draws
#: (bootstrap intervals), where an infinite draw counts as the longest, not as incomparable.
METRICS = (Metric("goodput_lp", label="goodput/LP"),
           Metric("fct_median", "median", label="FCT median"),
           Metric("fct_p99", "median", label="FCT p99"),
           Metric("jain", label="Jain", bounds=SHARE))


@dataclasses.dataclass
class PolicySettings:
    policies: Sequence[str] = ("ecmp", "random", "lp", "exp3:0.1", "ba-rtt", "ba-throughput",
                               "queue-max", "queue-sum")
    k: int = 4
    paths: int = 4
    load: float = 1.0
    mean_bytes: int = 500_000
    shape: float = 1.5
    warmup: float = 3.0
    seconds: float = 20.0
    drain: float = 5.0
    poll_ms: float = 50.0
    solver: str = "highs"

    def check(self) -> None:
        for p in self.policies:
            if mptcp_subflows(p):
                continue
            name, _ = parse_policy(p)
            if name not in LIVE_POLICIES:
                raise UsageError(f"policy {p!r} cannot run on the emulator; choose from "
                                 f"{', '.join(LIVE_POLICIES)}")
        if not 1 <= self.k <= 9 or not 1 <= self.paths <= 8:
            raise UsageError(f"--k {self.k} must be 1..9 and --table-paths {self.paths} 1..8")
        if not (self.load > 0 and self.mean_bytes >= 1 and self.shape > 1):
            raise UsageError(f"--load {self.load:g} must be > 0, --mean-kb > 0 and --shape "
                             f"{self.shape:g} > 1 (a Pareto of shape <= 1 has no mean)")
        if not (self.seconds > 0 and self.warmup >= 0 and self.drain >= 0 and self.poll_ms > 0):
            raise UsageError("--seconds must be > 0; --warmup, --drain >= 0")


def mptcp_subflows(policy: str) -> int:
    """K for ``mptcp:K`` (1 to 8 subflows; a clear error otherwise), 0 for any other policy."""
    name, _, k = str(policy).partition(":")
    if name != "mptcp":
        return 0
    try:
        n = int(k)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SUBFLOWS:
        raise UsageError(f"policy {policy!r}: mptcp:K takes K = 1 to {MAX_SUBFLOWS} subflows")
    return n


def poisson_arrivals(pairs: Sequence[Tuple[str, str]], *, rate: float, seconds: float,
                     mean_bytes: float, shape: float, seed: int,
                     first_id: int = 1) -> List[Transfer]:
    """Per pair, transfers arriving as a Poisson process of ``rate`` per second over
    ``[0, seconds)``, sizes Pareto of ``shape`` with mean ``mean_bytes`` (scale ``mean (shape -
    1) / shape``, at least 1 byte). One generator seeded by ``seed``, pairs in the given order:
    the same arguments give the same transfers."""
    if rate < 0 or seconds < 0 or shape <= 1 or mean_bytes <= 0:
        raise UsageError("poisson_arrivals: rate, seconds >= 0, mean_bytes > 0, shape > 1")
    rng = np.random.default_rng(seed)
    scale = mean_bytes * (shape - 1.0) / shape
    out: List[Tuple[float, str, str, int]] = []
    for s, d in pairs:
        t = 0.0
        while rate > 0:
            t += float(rng.exponential(1.0 / rate))
            if t >= seconds:
                break
            size = max(1, int(round(scale * (1.0 + float(rng.pareto(shape))))))
            out.append((t, s, d, size))
    out.sort(key=lambda x: x[0])
    return [Transfer(first_id + i, s, d, at=round(t, 6), size=size)
            for i, (t, s, d, size) in enumerate(out)]


@dataclasses.dataclass
class PolicyTables:
    """Per source router and destination: the table's SRHs (slot 0 first), waypoints, the LP's
    share of each slot; the LP value (capacity units) and its flow no slot holds."""

    srhs: Dict[str, Dict[str, List[bytes]]]
    waypoints: Dict[str, Dict[str, List[List[str]]]]
    shares: Dict[str, Dict[str, List[float]]]
    lp_value: float
    unplaced: float
    equal: float = math.nan
    routes: Dict[str, Dict[str, List[List[str]]]] = dataclasses.field(default_factory=dict)


def equal_share_value(topo: Any, pairs: Sequence[Tuple[str, str]], *, k: int,
                      solver: str = "highs", iterations: int = 14) -> float:
    """The most the sr-paths carry when every pair gets the same rate (max concurrent flow),
    total over the pairs, by bisection on the common demand with the LP as the oracle: a common
    demand ``d`` is feasible when the LP with every pair capped at ``d`` carries ``pairs x d``."""
    n = len(pairs)
    full = max_flow(topo, list(pairs), model="sr", k=k, solver=solver)
    lo, hi = 0.0, full.value / n if n else 0.0
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        r = max_flow(topo, list(pairs), model="sr", k=k, solver=solver, demands=np.full(n, mid))
        if r.ok and r.value >= n * mid * (1 - 1e-7):
            lo = mid
        else:
            hi = mid
    return n * lo


def policy_tables(topo: Any, pairs: Sequence[Tuple[str, str]], plan: Any, *, k: int, paths: int,
                  solver: str = "highs") -> PolicyTables:
    """The path table of ``pairs`` and the sr LP's shares on it (module docstring)."""
    table = path_table(topo, k=k, paths=paths, plan=plan, pairs=list(pairs), select="maxflow",
                       solver=solver)
    lp = max_flow(topo, list(pairs), model="sr", k=k, solver=solver)
    if not lp.ok:
        raise UsageError(f"sr LP failed: {lp.status} {lp.message}")
    srhs: Dict[str, Dict[str, List[bytes]]] = {}
    wps: Dict[str, Dict[str, List[List[str]]]] = {}
    shares: Dict[str, Dict[str, List[float]]] = {}
    for e in table.entries:
        srhs.setdefault(e.source, {})[e.destination] = [srh_bytes(p.segments) for p in e.paths]
        wps.setdefault(e.source, {})[e.destination] = [list(p.waypoints) for p in e.paths]
        shares.setdefault(e.source, {})[e.destination] = [0.0] * len(e.paths)
    unplaced = 0.0
    for path, flow in zip(lp.paths, lp.flows.tolist()):
        if flow <= 1e-9:
            continue
        s, d = path[0], path[-1]
        slots = wps.get(s, {}).get(d, [])
        way = list(path[1:])
        if way in slots:
            shares[s][d][slots.index(way)] += float(flow)
        else:
            unplaced += float(flow)
    routes: Dict[str, Dict[str, List[List[str]]]] = {e.source: {} for e in table.entries}
    for e in table.entries:
        routes[e.source][e.destination] = [list(p.nodes) for p in e.paths]
    return PolicyTables(srhs, wps, shares, float(lp.value), unplaced,
                        equal_share_value(topo, pairs, k=k, solver=solver), routes)


def _quantiles(fcts: Sequence[float]) -> Tuple[float, float]:
    xs = sorted(fcts)
    return quantile_inf(xs, 0.5), quantile_inf(xs, 0.99)


def measure_policies(emu: Emulation, pairs: Sequence[Tuple[str, str]], settings: PolicySettings,
                     *, base: Dict[str, Any], seed: int = 0,
                     log: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
    """One row per policy (module docstring), all on the same table and the same transfers."""
    settings.check()
    log = log or (lambda m: None)
    spec = emu.spec
    tabs = policy_tables(spec.topology, pairs, spec.plan, k=settings.k, paths=settings.paths,
                         solver=settings.solver)
    lp_units = tabs.lp_value / spec.unit
    equal_units = tabs.equal / spec.unit
    unit_bps = spec.link_mbps * 1e6
    rate = settings.load * equal_units * unit_bps / 8.0 / (len(pairs) * settings.mean_bytes)
    arrivals = poisson_arrivals(pairs, rate=rate, seconds=settings.warmup + settings.seconds,
                                mean_bytes=settings.mean_bytes, shape=settings.shape, seed=seed)
    offered = sum(a.size or 0 for a in arrivals) * 8.0 / (settings.warmup + settings.seconds) / unit_bps
    in_window = [a for a in arrivals if settings.warmup <= a.at < settings.warmup + settings.seconds]
    tables = {s: {d: list(v) for d, v in ds.items()} for s, ds in tabs.srhs.items()}
    queues = (queue_watch(spec, tabs.routes, QUEUE_INTERVAL_MS)
              if any(p.startswith("queue-") for p in settings.policies) else None)
    rows: List[Dict[str, Any]] = []
    sources = sorted({s for s, _ in pairs})
    dests = sorted({d for _, d in pairs})
    for spec_p in dict.fromkeys(settings.policies):
        row: Dict[str, Any] = dict(base, policy=spec_p, pairs=len(pairs), paths=settings.paths,
                                   k=settings.k, lp_value=round(lp_units, 6),
                                   lp_equal=round(equal_units, 6),
                                   offered=round(offered, 6),
                                   lp_unplaced=round(tabs.unplaced / spec.unit, 6),
                                   load=settings.load, mean_bytes=settings.mean_bytes,
                                   shape=settings.shape, link_mbps=spec.link_mbps,
                                   warmup=settings.warmup, seconds=settings.seconds,
                                   drain=settings.drain, transfers=len(in_window))
        K = mptcp_subflows(spec_p)
        if K and mptcp_available():
            row.update(status="skipped", error=str(mptcp_available()))
            rows.append(row)
            continue
        pols: Dict[str, PolicySpec] = {}
        for src, by_dest in ({} if K else tabs.srhs).items():
            npaths = {d: len(v) for d, v in by_dest.items()}
            pols[src] = PolicySpec(spec_p, npaths, seed, tabs.shares[src])
            make_policy(spec_p, npaths, seed=seed, shares=tabs.shares[src])  # errors here
        log(f"{base.get('scenario')}: {spec_p}: {len(arrivals)} transfers (offered "
            f"{offered:.2f} units; equal shares carry {equal_units:.2f}, the LP optimum "
            f"{lp_units:.2f}); running {settings.warmup:g} + "
            f"{settings.seconds:g} s (+ {settings.drain:g} s drain)")
        if K:
            enable_subflows(spec, sources, dests, K)
            joins0 = mptcp_counters(spec, dests, ["MPJoinAckRx"])["MPJoinAckRx"]
            res = run_traffic(emu, [dataclasses.replace(a, mptcp=True) for a in arrivals],
                              warmup=settings.warmup, seconds=settings.seconds,
                              drain=settings.drain, poll_ms=settings.poll_ms)
            row["subflows_joined"] = (mptcp_counters(spec, dests, ["MPJoinAckRx"])["MPJoinAckRx"]
                                      - joins0)
        else:
            res = run_traffic(emu, arrivals, warmup=settings.warmup, seconds=settings.seconds,
                              drain=settings.drain, tables=tables, policies=pols, queues=queues,
                              poll_ms=settings.poll_ms)
        t0 = res.times["connect"]
        secs = res.seconds
        per_pair: Dict[Tuple[str, str], float] = {(s, d): 0.0 for s, d in pairs}
        total = 0
        for a in arrivals:
            got = res.transfers[a.id].window_bytes
            per_pair[(a.source, a.destination)] += got
            total += got
        fcts: List[float] = []
        errors = aborted = 0
        kinds: Dict[str, int] = {}
        starts: Dict[str, int] = {}
        moves = 0
        for a in in_window:
            r = res.transfers[a.id]
            err = r.error
            if err and not err.startswith(("connect:", "setup:")):
                aborted += 1  # the kernel ended it (timed out, reset): its FCT is infinite
            elif err:
                errors += 1
                kinds[err] = kinds.get(err, 0) + 1
            done = r.sent.done if r.sent else None
            fcts.append(float(done) - (t0 + a.at) if done is not None else math.inf)
            slots = [sl for _, sl in r.paths]
            first = ("mptcp" if K else "plain" if not slots or slots[0] is None
                     else str(slots[0]))
            starts[first] = starts.get(first, 0) + 1
            moves += max(0, len(slots) - 1)
        med, p99 = _quantiles(fcts)
        goodput = total * 8.0 / secs / unit_bps if secs > 0 else math.nan
        n = max(1, len(in_window))
        row.update(goodput=round(goodput, 6),
                   goodput_lp=round(goodput / lp_units, 6) if lp_units > 0 else math.nan,
                   completed=sum(1 for f in fcts if math.isfinite(f)),
                   fct_median=round(med, 6), fct_p99=round(p99, 6),
                   jain=round(jain_index([v * 8.0 / secs / unit_bps for v in per_pair.values()]), 6),
                   slot_share=" ".join(f"{k}:{v / n:.3f}" for k, v in sorted(starts.items())),
                   moves=moves, aborted=aborted, cpu_busy=round(res.cpu_busy, 4),
                   status="ok" if not errors else "failed",
                   error=f"{errors} transfers failed: " + "; ".join(
                       f"{k} (x{v})" for k, v in sorted(kinds.items(), key=lambda x: -x[1])[:3])
                   if errors else "")
        log(f"{base.get('scenario')}: {spec_p}: goodput {goodput:.2f} units = "
            f"{row['goodput_lp']:.3f} of the LP; FCT median {med:.3f} s, p99 {p99:.3f} s; "
            f"{row['completed']}/{len(in_window)} completed; Jain {row['jain']:.3f}")
        rows.append(row)
    return rows


class Policies(Experiment):
    """The policies on ``--topo``'s heavy pairs (module docstring): one task per (network,
    heavy percent, seed) running every policy on the same transfers."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_policies"
    metrics = METRICS
    arm = "policy"

    def __init__(self, *, topo: str, capacity: str = "uniform", weight: str = "hop",
                 plan: Optional[str] = None, heavy: Sequence[float] = (20.0,),
                 seeds: Sequence[int] = (0,), settings: Optional[PolicySettings] = None) -> None:
        self.settings = settings or PolicySettings()
        self.settings.check()
        check_heavy(heavy)
        self.topo, self.capacity, self.weight, self.plan = topo, capacity, weight, plan
        self.plan_obj = read_plan_file(plan)
        self.heavy, self.seed_list = [float(h) for h in heavy], [int(s) for s in seeds]
        self.solver = self.settings.solver
        self.arms = list(dict.fromkeys(self.settings.policies))

    def config(self) -> Dict[str, Any]:
        st = self.settings
        return {"topo": self.topo, "capacity": self.capacity, "weight": self.weight,
                "plan": self.plan, "heavy": self.heavy, "policies": dataclasses.asdict(st),
                "pairs_rule": PAIRS_RULE,
                "table_rule": f"tpcstudy path_table(select='maxflow'): slot 0 the IGP path, then "
                              f"the sr LP's paths (k={st.k}), then sps paths; {st.paths} slots",
                "arrivals_rule": "per pair Poisson, rate load * LP / (pairs * mean size); "
                                 "Pareto sizes; numpy default_rng(seed), pairs in order"}

    def seeds(self) -> Optional[List[int]]:
        return self.seed_list

    def units(self, log: Log) -> Iterator[Unit]:
        for name, topo, plan, _ in topology_units(self.topo, capacity=self.capacity,
                                                  weight=self.weight, plan=self.plan_obj,
                                                  log=log):
            yield Unit(name, topo, plan, pair_tasks(name, topo, self.heavy, self.seed_list),
                       seed=self.seed_list[0] if self.seed_list else 0)

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        return measure_policies(emu, task.args, self.settings, base=dict(task.key),
                                seed=draw_seed(int(task.key["seed"]), int(task.key["draw"])),
                                log=log)

    def table(self, rows: Sequence[Row]) -> str:
        return format_policies(rows)


def summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``)."""
    return "; ".join(f"{r['policy']}: {100 * cell_float(r['goodput_lp']):.0f} % of LP, FCT median "
                     f"{cell_float(r['fct_median']):.2f} s" for r in rows if r.get("status") == "ok")


def format_policies(rows: Sequence[Dict[str, Any]]) -> str:
    """The table the CLI prints: policy x {goodput % of LP, median FCT, p99 FCT, Jain}."""
    lines = [f"{'scenario':>12} {'heavy':>5} {'seed':>4} {'policy':>14} {'goodput':>8} "
             f"{'% of LP':>8} {'% offer':>8} {'FCT med':>8} {'FCT p99':>8} {'done':>9} "
             f"{'Jain':>6} {'moves':>6}"]

    for r in rows:
        if r.get("status") != "ok":
            lines.append(f"{str(r.get('scenario')):>12} {str(r.get('heavy')):>5} "
                         f"{str(r.get('seed')):>4} {str(r.get('policy')):>14} {r.get('status')}: "
                         f"{r.get('error')}")
            continue
        lines.append(f"{str(r['scenario']):>12} {str(r['heavy']):>5} {str(r['seed']):>4} "
                     f"{str(r['policy']):>14} {cell_float(r['goodput']):>8.3f} "
                     f"{100 * cell_float(r['goodput_lp']):>7.1f}% "
                     f"{100 * cell_float(r['goodput']) / (cell_float(r['offered']) or math.nan):>7.1f}% "
                     f"{cell_float(r['fct_median']):>8.3f} "
                     f"{cell_float(r['fct_p99']):>8.3f} {str(r['completed']) + '/' + str(r['transfers']):>9} "
                     f"{cell_float(r['jain']):>6.3f} {str(r['moves']):>6}")
    lines.append("goodput in link units (1 = --link-mbps) over the window; % of LP: of the sr LP's "
                 "optimum; % offer: of the load offered;\nFCT in s of the transfers arriving in the "
                 "window (unfinished = infinite); done = completed/arrived; Jain over pairs")
    return "\n".join(lines)

"""Throughput against the LP: real TCP on the paths of each model's max-flow solution.

For a set of pairs (heavy pairs drawn as ``tpcstudy maxflow`` draws them, or a scenario's), per
model (``ecmp``, ``sr``, ``multipath``, ``mptcp:K``):

1. **The LP**, solved here on the same pairs (:func:`lp_solution`): the optimum ``V``, then, if
   it reaches the same optimum, the solution in which every pair carries at most ``V / pairs``
   (pair demands bounded by the equal share). LP optima are often degenerate (the six-paths
   network can give all six paths to two clients and none to the other two); the balanced one
   keeps every pair busy and gives the pairs equal shares, which is what TCP connections
   sharing bottlenecks converge to. Column ``lp_solution`` says which one ran.
2. **Connections** on its paths (:mod:`~.placement`): ``per_pair`` per pair,
   proportional to the pair's path flows; ``sr`` and ``multipath`` carry SRHs.
3. **Real TCP** (cubic) for ``warmup + seconds``; the receivers' goodput over the window, in
   link units (one unit = ``link_mbps``), beside the LP value: ``ratio = measured / lp``.

``mptcp:K`` is real kernel MPTCP (:mod:`~tpcstudy.emulate.network.mptcp`): one MPTCP connection for every
pair with K subflows (K - 1 extra source addresses as the
in-kernel path manager's ``subflow`` endpoints), the routers' ECMP hashing placing each subflow
on one path. Its ``lp_value`` is the analytic ``mptcp:K`` model's (docs/method.md §4): the
max-flow LP over the distinct paths K hashed subflows draw, the mean over ``draws`` hash draws
(``lp_solution`` says how many), so ``ratio`` is measured / model. Unlike the placements of the
LP models, which leave idle the pairs their optimum starves, every pair sends (SEMPER's
setting: hosts do not coordinate), so the model is an upper bound that real MPTCP would reach
only with the LP's choice of pairs and splits. ``subflows_joined`` counts
the MP_JOIN handshakes the destinations completed in the run (``subflows_expected``: pairs x
(K - 1)), ``subflows_stale`` the subflows MPTCP's scheduler gave up on for a while (no progress
for an RTO) and ``mptcp_reinjected`` the data it re-sent on another subflow (the kernel's
``MPTcpExt`` counters).

Two ceilings explain most of the gap to 1.0: the LP counts link capacity, TCP goodput counts
payload, so a full 1514-byte frame (MTU 1500) carries ``mss`` payload bytes: 1428 (0.943)
without SRH, 1388 (0.917) with a one-segment SRH and 16 bytes less per extra segment; at
``--mtu 9000`` the same headers leave 0.990 and 0.986 of a 9014-byte frame. Column ``ceiling`` is
that fraction averaged over the bytes measured, ``data_share = ratio / ceiling`` the share of the
LP's capacity the connections' data frames fill (what is left: ACKs, which the LP does not
count, on links the data of reverse pairs also needs, and TCP sharing each bottleneck per
connection where the LP gives it to the paths that maximise the total). ``cpu_busy`` is the
machine's CPU use over the window: near 1.0 the forwarding, not the network, limited it.
``starved_connections`` got no byte through in the window (many connections on one small
queue: some sit in RTO backoff; TCP's unfairness, not an error), ``failed_connections`` could
not connect or send (an error).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import UsageError
from ...export.addressing import AddressPlan
from ...export.layout import srh_bytes
from ...models.maxflow import MaxFlowResult, max_flow
from ...study.kinds import KINDS
from ...study.store import cell_float
from ...study.tasks import Task
from ...topology import Topology
from ..agent.client import Transfer, run_traffic
from ..network.lifecycle import Emulation
from ..network.mptcp import MAX_SUBFLOWS, enable_subflows, mptcp_available, mptcp_counters
from .bpf_placement import bpf_transfers
from .budget import (
    FALLBACK_MBPS,
    MAX_CONNECTIONS,
    MIN_AUTO_MBPS,
    Choice,
    background_share,
    budget_left,
    choose,
    load_calibration,
    nice_floor,
    run_cost,
)
from .calibrate import machine_calibration
from .harness import (
    PAIRS_RULE,
    Experiment,
    Log,
    NetworkSettings,
    Row,
    Unit,
    check_heavy,
    pair_tasks,
    topology_units,
)
from .placement import Placement, place_connections
from .repeats import SHARE, Metric

__all__ = ["THROUGHPUT_MODELS", "COLUMNS", "KEY", "KIND", "lp_solution", "measure_models",
           "ThroughputSettings", "Throughput", "parse_model", "mptcp_model_value", "format_rows",
           "summary", "summary_line", "DEFAULT_CONNECTIONS"]

#: Who sets the SRH of a connection (``--agent``).
AGENTS = ("socket", "bpf")
#: Results kind (``meta.json``): one row per (network, heavy percent, seed, model).
KIND = "emulate-throughput"
#: Connections per pair on a topology (a scenario brings its own).
DEFAULT_CONNECTIONS = 8

#: Models placed from their LP solution; ``mptcp:K`` (K = 1..8 subflows) runs real MPTCP.
THROUGHPUT_MODELS = ("ecmp", "sr", "multipath")
#: A CPU reading this high is saturation: it says nothing of how much more the run needed.
SATURATED = 0.98
#: Relative tolerance for "the balanced solution reaches the optimum".
BALANCE_TOL = 1e-6

COLUMNS = list(KINDS[KIND].columns)
#: MPTCP's counters read around an ``mptcp:K`` run (``MPTcpExt`` in /proc/net/netstat): joins
#: completed at the destinations; at the sources, subflows the scheduler marked stale (no
#: progress for an RTO) and data re-sent on another subflow.
MPTCP_COUNTERS = ("MPJoinAckRx", "SubflowStale", "MPTCPRetrans")
KEY = list(KINDS[KIND].key)
#: Summarised over draws (``--repeat``); models compared by draw on goodput.
METRICS = (Metric("ratio", label="measured/LP"), Metric("measured", label="measured"),
           Metric("ceiling", label="ceiling", bounds=SHARE),
           Metric("data_share", label="data", digits=2),
           Metric("measured_gain", label="gain", digits=2),
           Metric("cpu_busy", label="cpu", digits=2, bounds=SHARE))


@dataclasses.dataclass
class ThroughputSettings:
    models: Sequence[str] = ("ecmp", "sr")
    k: int = 4
    per_pair: int = 0
    #: ``None``: chosen from the round trips (:mod:`.budget`; 3 and 10 s at least).
    warmup: Optional[float] = 3.0
    seconds: Optional[float] = 10.0
    solver: str = "highs"
    max_segments: int = 9
    pause: float = 0.5
    #: Hash draws averaged for the ``mptcp:K`` model's value.
    draws: int = 32
    #: Who gives connections their SRH: ``socket`` (the traffic agent, per socket) or ``bpf``
    #: (the BPF host agent of each source router, for plain sockets in its cgroup).
    agent: str = "socket"

    def check(self) -> None:
        if not self.models:
            raise UsageError("--models: give at least one model")
        for m in self.models:
            parse_model(m)
        if self.draws < 1:
            raise UsageError(f"draws {self.draws}: at least 1")
        if self.agent not in AGENTS:
            raise UsageError(f"--agent {self.agent!r}: choose from {', '.join(AGENTS)}")
        if self.per_pair < 0:  # 0: the default of the network (DEFAULT_CONNECTIONS)
            raise UsageError(f"--connections must be >= 1, got {self.per_pair}")
        if not ((self.seconds is None or self.seconds > 0)
                and (self.warmup is None or self.warmup >= 0)):
            raise UsageError("--seconds must be > 0 and --warmup >= 0")
        if not 1 <= self.k <= 9:
            raise UsageError(f"--k {self.k}: 1 to 9 segments")


def parse_model(token: str) -> Tuple[str, int]:
    """``("mptcp", K)`` for ``mptcp:K``, else ``(model, 0)``; a clear error for anything else."""
    name, _, k = str(token).partition(":")
    if name == "mptcp" and k:
        try:
            K = int(k)
        except ValueError:
            K = 0
        if not 1 <= K <= MAX_SUBFLOWS:
            raise UsageError(f"model {token!r}: mptcp:K takes K = 1 to {MAX_SUBFLOWS} subflows "
                             "(the kernel's limit per connection)")
        return "mptcp", K
    if token not in THROUGHPUT_MODELS:
        raise UsageError(f"model {token!r} cannot run on the emulator; choose from "
                         f"{', '.join(THROUGHPUT_MODELS)} or mptcp:K (K = 1..{MAX_SUBFLOWS})")
    return str(token), 0


def lp_solution(topo: Topology, pairs: Any, model: str, *, k: int = 4,
                solver: str = "highs", max_pairs: Optional[int] = None
                ) -> Tuple[MaxFlowResult, str]:
    """The optimum of ``model`` on ``pairs``, balanced across pairs when that costs nothing
    and serves at most ``max_pairs`` pairs (more pairs than connections the machine can run:
    the solver's own optimum, which serves fewer).

    Returns the result to place and ``"balanced"`` or ``"as solved"``.
    """
    res = max_flow(topo, pairs, model=model, k=k, solver=solver)
    if not res.ok:
        raise UsageError(f"{model} LP failed: {res.status} {res.message}")
    n = len(res.pairs)
    if n < 2 or res.value <= 0:
        return res, "as solved"
    share = np.full(n, res.value / n)
    bal = max_flow(topo, pairs, model=model, k=k, solver=solver, demands=share)
    if bal.ok and bal.value >= res.value * (1 - BALANCE_TOL):
        served = int(np.count_nonzero(bal.pair_flow > 1e-12))
        if max_pairs is not None and served > max_pairs:
            return res, (f"as solved ({int(np.count_nonzero(res.pair_flow > 1e-12))} pairs; "
                         f"balanced would serve {served})")
        return bal, "balanced"
    return res, "as solved"


def mptcp_model_value(topo: Topology, pairs: Sequence[Tuple[str, str]], k: int,
                      draws: int = 32, solver: str = "highs") -> Tuple[float, float]:
    """The analytic ``mptcp:K`` value on ``pairs``: mean and standard deviation over hash draws
    (seeds 0..draws-1), in the topology's capacity units."""
    vals = [max_flow(topo, list(pairs), model="mptcp", subflows=k, seed=s, solver=solver).value
            for s in range(draws)]
    return float(np.mean(vals)), float(np.std(vals))


def _transfers(emu: Emulation, placement: Placement) -> List[Transfer]:
    plan = emu.spec.plan
    out = []
    for c in placement.connections:
        paths = (srh_bytes([plan.loopback(w) for w in c.segments]),) if c.segments else ()
        out.append(Transfer(c.id, c.source, c.destination, paths=paths))
    return out


def measure_models(emu: Emulation, pairs: Sequence[Tuple[str, str]], settings: ThroughputSettings,
                   *, base: Dict[str, Any], log: Any = None,
                   solved: Optional[Dict[str, Tuple[MaxFlowResult, str]]] = None
                   ) -> List[Dict[str, Any]]:
    """One row per model: LP value, measured goodput (link units), ratio, gains
    (``solved``: model -> :func:`lp_solution` already computed for these pairs)."""
    settings.check()
    spec = emu.spec
    topo = spec.topology
    log = log or (lambda m: None)
    models = list(dict.fromkeys(settings.models))
    rows: List[Dict[str, Any]] = []
    for mi, model in enumerate(models):
        kind, subflows = parse_model(model)
        row: Dict[str, Any] = dict(base, model=model, pairs=len(pairs),
                                   k={"sr": settings.k, "ecmp": 1, "mptcp": subflows}.get(kind, ""),
                                   link_mbps=spec.link_mbps, queue_ms=spec.queue_ms,
                                   warmup=settings.warmup, routers=topo.num_nodes,
                                   links=topo.num_links)
        if kind == "mptcp" and mptcp_available():
            row.update(status="skipped", error=f"mptcp: {mptcp_available()}")
            rows.append(row)
            continue
        if kind == "mptcp":
            mean, sd = mptcp_model_value(topo, pairs, subflows, draws=settings.draws,
                                         solver=settings.solver)
            run = list(pairs)  # every pair, as hosts running MPTCP do (module docstring)
            lp_units = mean / spec.unit
            flows = [Transfer(1 + 100_000 * mi + i, s, t, mptcp=True)
                     for i, (s, t) in enumerate(run)]
            row.update(lp_value=round(lp_units, 9), served_pairs=len(run),
                       connections=len(flows), paths="", max_segments=0,
                       lp_solution=f"mptcp:{subflows} model, mean of {settings.draws} hash draws "
                                   f"(sd {sd / spec.unit:.3g})")
            sources = sorted({s for s, _ in run})
            dests = sorted({t for _, t in run})
            enable_subflows(spec, sources, dests, subflows)
            ends = sorted(set(sources) | set(dests))
            before = mptcp_counters(spec, ends, MPTCP_COUNTERS)
            what = f"{len(flows)} MPTCP connections of {subflows} subflows"
        else:
            res, how = (solved or {}).get(model) or lp_solution(
                topo, list(pairs), model, k=settings.k, solver=settings.solver)
            lp_units = res.value / spec.unit
            placement = place_connections(topo, res, per_pair=settings.per_pair,
                                          max_segments=settings.max_segments,
                                          first_id=1 + 100_000 * mi)
            row.update(lp_value=round(lp_units, 9), lp_solution=how,
                       served_pairs=placement.served_pairs, connections=len(placement.connections),
                       paths=len({(c.source, c.path) for c in placement.connections}),
                       max_segments=max((len(c.segments) for c in placement.connections),
                                        default=0))
            if placement.unplaced_flow > 1e-9:
                row.update(status="skipped", error=f"{placement.unplaced_flow:.3g} of the LP's flow "
                           f"is on paths that cannot be pinned: {placement.notes[0]}")
                rows.append(row)
                continue
            if not placement.connections:
                row.update(status="skipped", error="the LP puts no flow on any pair")
                rows.append(row)
                continue
            if settings.agent == "bpf":
                flows = bpf_transfers(emu, placement)
            else:
                flows = _transfers(emu, placement)
            what = f"{len(placement.connections)} connections on {row['paths']} paths"
        log(f"{base.get('scenario')}: {model}: {'model' if kind == 'mptcp' else 'LP'} "
            f"{lp_units:.3f} units ({row['lp_solution']}), {what}; running "
            f"{settings.warmup:g} + {settings.seconds:g} s")
        if mi and settings.pause > 0:
            time.sleep(settings.pause)  # let the previous model's queues drain
        tr = run_traffic(emu, flows, warmup=3.0 if settings.warmup is None else settings.warmup,
                         seconds=10.0 if settings.seconds is None else settings.seconds)
        if kind == "mptcp":
            after = mptcp_counters(spec, ends, MPTCP_COUNTERS)
            d = {c: after[c] - before[c] for c in MPTCP_COUNTERS}
            row.update(subflows_joined=d["MPJoinAckRx"],
                       subflows_expected=len(flows) * (subflows - 1),
                       subflows_stale=d["SubflowStale"], mptcp_reinjected=d["MPTCPRetrans"])
        measured = spec.rate_units(tr.goodput_bps())
        got = [f for f in tr.transfers.values() if f.window_bytes > 0]
        total = sum(f.window_bytes for f in got)
        ceiling = (sum(f.window_bytes * f.tcp_info.get("snd_mss", 0) / spec.frame_bytes for f in got)
                   / total) if total else math.nan
        failed = [f for f in tr.transfers.values() if f.error]
        starved = [f for f in tr.transfers.values() if not f.error and f.window_bytes == 0]
        row.update(measured=round(measured, 6),
                   ratio=round(measured / lp_units, 6) if lp_units > 0 else math.nan,
                   ceiling=round(ceiling, 6) if ceiling > 0 else math.nan,
                   seconds=round(tr.seconds, 4),
                   data_share=round(measured / lp_units / ceiling, 6)
                   if lp_units > 0 and ceiling > 0 else math.nan,
                   failed_connections=len(failed), starved_connections=len(starved),
                   retransmits=sum(int(f.tcp_info.get("total_retrans", 0))
                                   for f in tr.transfers.values()),
                   cpu_busy=round(tr.cpu_busy, 4), status="ok" if not failed else "failed",
                   error=f"{len(failed)} connections failed ({failed[0].error})" if failed
                   else "")
        log(f"{base.get('scenario')}: {model}: measured {measured:.3f} units = "
            f"{row['ratio']:.3f} of the {'model' if kind == 'mptcp' else 'LP'} (payload ceiling "
            f"{ceiling:.3f}), CPU busy {tr.cpu_busy:.0%}"
            + (f", subflows joined {row['subflows_joined']}/{row['subflows_expected']}"
               if kind == "mptcp" else ""))
        rows.append(row)
    ref = next((r for r in rows if r["model"] == "ecmp" and r.get("status") == "ok"), None)
    for r in rows:
        if ref is not None and r.get("status") == "ok":
            if ref["lp_value"]:
                r["lp_gain"] = round(r["lp_value"] / ref["lp_value"], 6)
            if ref["measured"]:
                r["measured_gain"] = round(r["measured"] / ref["measured"], 6)
    return rows


class Throughput(Experiment):
    """Throughput against the LP (module docstring) on ``--topo`` (one task per heavy percent
    and seed) or a hand-made ``--scenario`` (its own pairs), one network each."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_throughput"
    metrics = METRICS
    arm = "model"
    compare = ("measured",)

    def __init__(self, *, topo: Optional[str] = None, scenario_name: Optional[str] = None,
                 capacity: str = "uniform", weight: str = "hop", plan: Optional[str] = None,
                 plan_obj: Optional[AddressPlan] = None, heavy: Sequence[float] = (20.0,),
                 seeds: Sequence[int] = (0,),
                 settings: Optional[ThroughputSettings] = None) -> None:
        self.settings = settings or ThroughputSettings()
        self.settings.check()
        check_heavy(heavy)
        self.topo, self.scenario_name = topo, scenario_name
        self.capacity, self.weight, self.plan, self.plan_obj = capacity, weight, plan, plan_obj
        self.heavy, self.seed_list = [float(h) for h in heavy], [int(s) for s in seeds]
        self.solver = self.settings.solver
        self.arms = list(dict.fromkeys(self.settings.models))
        #: Per network, the settings chosen for it and the attempt (2: after a CPU-bound one).
        self._fitted: Dict[str, Tuple[Choice, int]] = {}
        self._background: Dict[str, float] = {}  # per network: the machine's other work
        #: The LP solutions of the task being fitted and measured (one task kept).
        self._lps: Dict[str, Dict[str, Tuple[MaxFlowResult, str]]] = {}

    def config(self) -> Dict[str, Any]:
        st = self.settings
        sc = self.scenario_name
        return {"topo": self.topo, "scenario": sc, "capacity": self.capacity,
                "weight": self.weight, "plan": self.plan, "heavy": None if sc else self.heavy,
                "models": list(st.models), "k": st.k,
                "connections_per_pair": st.per_pair or ("scenario's" if sc
                                                        else DEFAULT_CONNECTIONS),
                "warmup": st.warmup, "seconds": st.seconds, "solver": st.solver,
                "agent": st.agent,
                "pairs_rule": "the scenario's pairs" if sc else PAIRS_RULE,
                "placement": "LP optimum balanced across pairs when that keeps the optimum; "
                             "largest-remainder connections per pair on its paths"}

    def seeds(self) -> Optional[List[int]]:
        return None if self.scenario_name else self.seed_list

    def units(self, log: Log) -> Iterator[Unit]:
        for name, topo, plan, sc in topology_units(
                self.topo, capacity=self.capacity, weight=self.weight, plan=self.plan_obj,
                scenario_name=self.scenario_name, log=log):
            if sc is not None:
                tasks = [Task({"scenario": name, "heavy": "", "seed": ""},
                              (list(sc.pairs), sc.connections_per_pair))]
            else:
                tasks = [Task(t.key, (t.args, DEFAULT_CONNECTIONS))
                         for t in pair_tasks(name, topo, self.heavy, self.seed_list)]
            yield Unit(name, topo, plan, tasks, seed=self.seed_list[0] if self.seed_list else 0)

    def _solve(self, topo: Topology, task: Task) -> Dict[str, Tuple[MaxFlowResult, str]]:
        """The LP solutions of ``task``'s pairs (once per task: fitting and measuring share
        them); ``mptcp:K`` is costed as ``multipath`` (every shortest path)."""
        key = _draw_key(task)
        if key not in self._lps:
            pairs = list(task.args[0])
            models = {parse_model(m)[0] for m in self.settings.models}
            self._lps[key] = {m: lp_solution(topo, pairs, m, k=self.settings.k,
                                             solver=self.settings.solver,
                                             max_pairs=MAX_CONNECTIONS)
                              for m in sorted(models | ({"multipath"} if "mptcp" in models
                                                        else set())) if m != "mptcp"}
        return self._lps[key]

    def _choose(self, unit: Unit, network: NetworkSettings, link_mbps: Optional[float],
                log: Log) -> Choice:
        st = self.settings
        results = [r for t in unit.tasks for r, _ in self._solve(unit.topology, t).values()]
        cost = run_cost(unit.topology, results, float(np.min(unit.topology.arc_capacity)))
        budget, note = network.cpu_budget, ""
        if link_mbps is None:  # auto: plan with what the machine's other work leaves
            cal = machine_calibration(log, mtu=network.mtu, must=False)
            background = background_share()
            self._background[unit.name] = background
            left, note = budget_left(network.cpu_budget, background)
            if cal is None or left is None:
                link_mbps = FALLBACK_MBPS
                note = (f"{note or 'no calibration of this machine'}: a conservative "
                        f"{FALLBACK_MBPS:g} Mbit/s per unit (--link-mbps N sets another)")
            else:
                budget = left
        else:
            cal = load_calibration()
        per_pair = st.per_pair or max(t.args[1] for t in unit.tasks)
        c = choose(cost, cal, budget=budget, mtu=network.mtu,
                   queue_ms=network.queue_ms, per_pair=per_pair, link_mbps=link_mbps,
                   warmup=st.warmup, seconds=st.seconds, fixed_pairs=bool(st.per_pair),
                   routers=unit.topology.num_nodes)
        return dataclasses.replace(c, reason=f"{note}; {c.reason}") if note else c

    def fit(self, unit: Unit, network: NetworkSettings, log: Log) -> NetworkSettings:
        """``--link-mbps auto``: the rate, window and connections of :mod:`.budget`; a rate
        given: the window (when not given) from the round trips at that rate."""
        st = self.settings
        self._lps = {}  # a new network: the last one's solutions are done with
        if not network.auto and st.warmup is not None and st.seconds is not None:
            return network
        c = self._choose(unit, network, None if network.auto else network.link_mbps, log)
        self._fitted[unit.name] = (c, 1)
        log(f"{unit.name}: {c.link_mbps:g} Mbit/s, {c.warmup:g} + {c.seconds:g} s, "
            f"{c.per_pair} connections per pair, "
            + (f"CPUs predicted {c.predicted_busy:.0%} busy: " if math.isfinite(c.predicted_busy)
               else "CPUs not predicted (no calibration): ")
            + f"{c.reason}")
        return dataclasses.replace(network, link_mbps=c.link_mbps)

    def lower(self, unit: Unit, network: NetworkSettings, log: Log,
              rows: Sequence[Row] = ()) -> Optional[NetworkSettings]:
        """The rate the first attempt's busiest reading says fits the budget (its rate x
        budget / busy share, rounded down, at most 0.8 of it), or half the rate when the CPUs
        were saturated (98 % or more: the reading says nothing of the need); the window
        recomputed for it."""
        ok = [r for r in rows if r.get("status", "ok") == "ok"]
        # a skipped or failed row has no reading (nan): max() over it would depend on the order
        busy = max((b for b in (cell_float(r.get("cpu_busy")) for r in ok) if math.isfinite(b)),
                   default=math.nan)
        rates = [b for b in (cell_float(r.get("link_mbps")) for r in ok) if math.isfinite(b) and b > 0]
        was = max(rates) if rates else network.link_mbps  # the rate measured (a resume may
        # have chosen another since)
        background = self._background.get(unit.name, 0.0)  # other work's share: not ours
        own = busy - background if math.isfinite(busy) else busy
        left, _ = budget_left(network.cpu_budget, background)
        if left is None:  # the machine's other work fills it: a lower rate reads the same
            log(f"{unit.name}: the CPUs were {busy:.0%} busy, {background:.0%} of it other work "
                f"before the run: not measured again at a lower rate (the rows say cpu_busy)")
            return None
        if math.isfinite(own) and 0 < own and busy < SATURATED:
            rate = nice_floor(min(was * left / own, was * 0.8))
            how = (f"{busy:.0%} busy there: x {left:g} / {own:.2f}"
                   + (f" (the {background:.0%} of other work not counted)" if background else ""))
        else:
            rate = nice_floor(was / 2)
            how = "saturated there: half the rate"
        if rate < MIN_AUTO_MBPS:
            return None
        c = self._choose(unit, network, rate, log)
        self._fitted[unit.name] = (dataclasses.replace(
            c, reason=f"CPU-bound at {was:g} Mbit/s ({how}); {c.reason}"), 2)
        return dataclasses.replace(network, link_mbps=rate)

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        pairs, per_pair = task.args
        st = dataclasses.replace(self.settings, per_pair=self.settings.per_pair or per_pair)
        fitted = self._fitted.get(str(task.key.get("scenario")))
        extra: Dict[str, Any] = {"attempt": 1}
        if fitted is not None:
            c, attempt = fitted
            st = dataclasses.replace(st, warmup=c.warmup, seconds=c.seconds,
                                     per_pair=self.settings.per_pair or c.per_pair)
            extra = {"attempt": attempt, "predicted_cpu": round(c.predicted_busy, 4),
                     "settings": c.reason}
        solved = self._lps.get(_draw_key(task))
        rows = measure_models(emu, pairs, st, base=dict(task.key), log=log, solved=solved)
        return [dict(r, **extra) for r in rows]

    def table(self, rows: Sequence[Row]) -> str:
        return format_rows(rows)


def _window(r: Row) -> str:
    w, s = cell_float(r.get("warmup")), cell_float(r.get("seconds"))
    return f"{w:g}+{s:.0f}" if math.isfinite(w) and math.isfinite(s) else ""


def _draw_key(task: Task) -> str:
    """A task's pairs, whatever its draw: ``(scenario, heavy, seed)``."""
    return "|".join(str(task.key.get(c, "")) for c in ("scenario", "heavy", "seed"))


def summary(rows: Sequence[Row]) -> Dict[str, Dict[str, float]]:
    """Per model over the measured draws: median measured / LP, median payload ceiling, median
    measured and LP gain over ecmp, and the number of draws."""
    out: Dict[str, Dict[str, float]] = {}
    for m in dict.fromkeys(str(r.get("model")) for r in rows):
        sel = [r for r in rows if r.get("model") == m and r.get("status") == "ok"]
        if sel:
            out[m] = {"draws": len(sel), **{c: _median(sel, c) for c in
                                            ("ratio", "ceiling", "data_share", "measured_gain",
                                             "lp_gain")}}
    return out


def _median(rows: Sequence[Row], col: str) -> float:
    vals = [v for v in (cell_float(r.get(col)) for r in rows) if math.isfinite(v)]
    return float(statistics.median(vals)) if vals else math.nan


def summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``)."""
    parts = []
    for m, s in summary(rows).items():
        text = f"{m}: measured/LP {s['ratio']:.3f} (ceiling {s['ceiling']:.3f})"
        if m != "ecmp" and math.isfinite(s["measured_gain"]):
            text += f", gain {s['measured_gain']:.2f} (LP {s['lp_gain']:.2f})"
        parts.append(text)
    return "; ".join(parts) + " (medians over draws)"


def format_rows(rows: Sequence[Dict[str, Any]]) -> str:
    """The table the CLI prints."""
    lines = [f"{'scenario':>14} {'heavy':>5} {'seed':>4} {'model':>9} {'conns':>5} "
             f"{'LP':>7} {'measured':>8} {'ratio':>6} {'ceiling':>7} {'data':>5} "
             f"{'LP gain':>7} {'gain':>6} {'cpu':>5} {'Mbit/s':>6} {'window':>8}"]

    def f(x: Any, w: int, p: int = 3) -> str:
        try:
            v = float(x)
        except (TypeError, ValueError):
            return f"{'':>{w}}"
        return f"{v:>{w}.{p}f}" if math.isfinite(v) else f"{'':>{w}}"

    for r in rows:
        if r.get("status") not in ("ok",):
            lines.append(f"{str(r.get('scenario')):>14} {str(r.get('heavy')):>5} "
                         f"{str(r.get('seed')):>4} {str(r.get('model')):>9} "
                         f"{r.get('status')}: {r.get('error')}")
            continue
        lines.append(f"{str(r['scenario']):>14} {str(r['heavy']):>5} {str(r['seed']):>4} "
                     f"{str(r['model']):>9} {str(r['connections']):>5} {f(r['lp_value'], 7)} "
                     f"{f(r['measured'], 8)} {f(r['ratio'], 6)} {f(r['ceiling'], 7)} "
                     f"{f(r.get('data_share'), 5, 2)} "
                     f"{f(r.get('lp_gain'), 7, 2)} {f(r.get('measured_gain'), 6, 2)} "
                     f"{f(r.get('cpu_busy'), 5, 2)} {f(r.get('link_mbps'), 6, 2)} "
                     f"{_window(r):>8}" + (" (2nd: CPU-bound 1st)"
                                           if str(r.get("attempt")) in ("2", "2.0") else ""))
    lines.append("LP and measured in link units (1 = --link-mbps); mptcp:K's LP is the analytic "
                 "mptcp:K model's value (mean over hash draws); ratio = measured / LP;\n"
                 "ceiling = payload share of a full frame (mss / (MTU + 14)); data = ratio / ceiling; "
                 "gains over ecmp; cpu = machine busy share;\nMbit/s = the link rate of one "
                 "unit; window = warm-up + measured seconds")
    return "\n".join(lines)


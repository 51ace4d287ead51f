"""Emulation runs with results folders like the studies': ``meta.json`` + ``results.csv``.

:func:`run_throughput` measures every (network, heavy fraction, seed) as one task of the
studies' :class:`ResultStore`: a task already stored is not run again, so an interrupted run
resumes where it stopped (per scenario), and a network whose tasks are all stored is not even
built. ``meta.json`` records the settings, the seeds, the kernel, the sysctls every namespace
gets, the link rates rule and the tools' versions (beside the commit and package versions
``write_meta`` always records).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

from .. import Topology, heavy_pairs, prune, read_plan, read_topologies
from ..errors import UsageError
from ..study import ResultStore, Task, read_results, run_tasks
from ..study.emulation import FAILOVER, POLICIES, THROUGHPUT
from ..study.store import folder_lock, open_store
from . import failover as F
from . import twopaths as TP
from . import workload as W
from .checks import system_info
from .lifecycle import Emulation, new_prefix
from .scenarios import Scenario, scenario
from .spec import network_spec
from .throughput import COLUMNS, KEY, ThroughputSettings, measure_models

T = TypeVar("T")

__all__ = ["Network", "networks", "system_info", "run_throughput", "run_failover", "run_policies",
           "run_two_paths",
           "read_plan_file", "PAIRS_RULE", "DEFAULT_CONNECTIONS"]

#: Connections per pair on a topology (a scenario brings its own).
DEFAULT_CONNECTIONS = 8
PAIRS_RULE = ("heavy_pairs: numpy default_rng(seed).choice of ceil(x * #pairs) ordered "
              "edge-router pairs of the pruned topology, sorted (as tpcstudy maxflow)")


@dataclasses.dataclass
class Network:
    """A network to emulate: a pruned topology (pairs drawn per heavy fraction and seed) or a
    scenario (its own pairs)."""

    name: str
    topology: Topology
    plan: Any = None
    scenario: Optional[Scenario] = None


def networks(*, topo: Optional[str] = None, scenario_name: Optional[str] = None,
             capacity: str = "uniform", weight: str = "hop",
             plan: Any = None) -> Iterator[Network]:
    """The networks ``--topo`` / ``--scenario`` name (topologies pruned; trees skipped)."""
    if bool(topo) == bool(scenario_name):
        raise UsageError("give --topo or --scenario (one of them)")
    if scenario_name:
        sc = scenario(scenario_name)
        yield Network(sc.name, sc.topology, sc.plan, sc)
        return
    for t in read_topologies(topo, capacity=capacity, weight=weight):  # type: ignore[arg-type]
        p = prune(t)
        if p.num_nodes < 2:
            continue
        yield Network(t.name, p, plan)


def read_plan_file(plan: Optional[str]) -> Any:
    if not plan:
        return None
    return read_plan(plan)


def _measure_tasks(tasks: Sequence[Task], measure: Callable[[Task], List[Dict[str, Any]]],
                   store: Optional[ResultStore], name: str, log: Callable[[str], None],
                   progress: bool = False) -> List[Dict[str, Any]]:
    """Run ``measure`` on every task: through the store (stored tasks skipped, a failure
    recorded as its row) when there is one, else directly; returns the rows of a run without a
    store (with one, they are read back from it)."""
    if store is None:
        return [row for t in tasks for row in measure(t)]
    summary = run_tasks(tasks, measure, store, jobs=1, desc=name, progress=progress,
                        on_error="record")
    if summary.failed:
        log(f"{name}: {len(summary.failed)} tasks failed (see results.csv)")
    return []


def _locked(fn: Callable[..., T]) -> Callable[..., T]:
    """Hold the results folder's one-writer lock (``out``) for the whole run."""

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> T:
        out = kw.get("out")
        if out is None:
            return fn(*args, **kw)
        with folder_lock(out):
            return fn(*args, **kw)
    return run


@_locked
def run_throughput(*, out: Optional[str], topo: Optional[str] = None,
                   scenario_name: Optional[str] = None, capacity: str = "uniform",
                   weight: str = "hop", plan: Optional[str] = None,
                   heavy: Sequence[float] = (20.0,), seeds: Sequence[int] = (0,),
                   settings: Optional[ThroughputSettings] = None,
                   link_mbps: float = 10.0, queue_ms: float = 50.0, overwrite: bool = False,
                   log: Callable[[str], None] = print,
                   progress: bool = False) -> Tuple[List[Dict[str, Any]], Optional[Path]]:
    """Measure throughput against the LP; returns the rows (of this folder, when ``out``)."""
    settings = settings or ThroughputSettings()
    settings.check()
    for h in heavy:
        if not 0 < h <= 100:
            raise UsageError(f"--heavy {h:g}: percentages in (0, 100]")
    the_plan = read_plan_file(plan)
    config = {
        "topo": topo, "scenario": scenario_name,
        "capacity": capacity, "weight": weight, "plan": plan,
        "heavy": [float(h) for h in heavy] if not scenario_name else None,
        "models": list(settings.models), "k": settings.k,
        "connections_per_pair": settings.per_pair or ("scenario's" if scenario_name
                                                      else DEFAULT_CONNECTIONS),
        "warmup": settings.warmup, "seconds": settings.seconds, "solver": settings.solver,
        "rates": {"link_mbps": link_mbps, "queue_ms": queue_ms,
                  "rule": "each direction: capacity / smallest capacity * link_mbps"},
        "pairs_rule": PAIRS_RULE if not scenario_name else "the scenario's pairs",
        "placement": "LP optimum balanced across pairs when that keeps the optimum; "
                     "largest-remainder connections per pair on its paths",
        "system": system_info(),
    }
    store = open_store(out, config, kind=THROUGHPUT, columns=COLUMNS, key=KEY,
                        seeds=list(seeds) if not scenario_name else None,
                        solver=settings.solver, overwrite=overwrite)
    all_rows: List[Dict[str, Any]] = []
    for net in networks(topo=topo, scenario_name=scenario_name, capacity=capacity, weight=weight,
                        plan=the_plan):
        draws: List[Tuple[Any, Any, List[Tuple[str, str]]]] = []
        if net.scenario is not None:
            draws.append(("", "", list(net.scenario.pairs)))
        else:
            if len(net.topology.edge_routers) < 2:
                log(f"{net.name}: fewer than 2 edge routers after pruning: skipped")
                continue
            for h in heavy:
                for s in seeds:
                    ids = heavy_pairs(net.topology, percent=h, seed=s)
                    draws.append((float(h), int(s), [(net.topology.names[a], net.topology.names[b])
                                                     for a, b in ids.tolist()]))
        tasks = [Task({"scenario": net.name, "heavy": h, "seed": s}, pairs)
                 for h, s, pairs in draws]
        if store is not None and all(store.done(t.id) and not store.failed(t.id) for t in tasks):
            log(f"{net.name}: already measured ({len(tasks)} draws in {out})")
            continue
        per_pair = settings.per_pair or (net.scenario.connections_per_pair if net.scenario
                                         else DEFAULT_CONNECTIONS)
        the_settings = dataclasses.replace(settings, per_pair=per_pair)
        spec = network_spec(net.topology, net.plan, prefix=new_prefix(), link_mbps=link_mbps,
                            queue_ms=queue_ms, seed=int(seeds[0]) if seeds else 0)
        with Emulation(spec, log=log) as emu:
            def measure(task: Task, emu: Emulation = emu,
                        st: ThroughputSettings = the_settings) -> List[Dict[str, Any]]:
                return measure_models(emu, task.args, st, base=dict(task.key), log=log)

            all_rows += _measure_tasks(tasks, measure, store, net.name, log, progress)
    if store is not None:
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    return all_rows, None


# --------------------------------------------------------------------------- policies
@_locked
def run_policies(*, out: Optional[str], topo: str, capacity: str = "uniform", weight: str = "hop",
                 plan: Optional[str] = None, heavy: Sequence[float] = (20.0,),
                 seeds: Sequence[int] = (0,), settings: Optional[W.PolicySettings] = None,
                 link_mbps: float = 10.0, queue_ms: float = 50.0, overwrite: bool = False,
                 log: Callable[[str], None] = print) -> Tuple[List[Dict[str, Any]], Optional[Path]]:
    """Host path-selection policies on live TCP (:mod:`~tpcstudy.emulate.workload`), one task
    per (network, heavy percent, seed) running every policy on the same transfers."""
    st = settings or W.PolicySettings()
    st.check()
    for h in heavy:
        if not 0 < h <= 100:
            raise UsageError(f"--heavy {h:g}: percentages in (0, 100]")
    the_plan = read_plan_file(plan)
    config = {"topo": topo, "capacity": capacity, "weight": weight, "plan": plan,
              "heavy": [float(h) for h in heavy], "policies": dict(dataclasses.asdict(st)),
              "rates": {"link_mbps": link_mbps, "queue_ms": queue_ms,
                        "rule": "each direction: capacity / smallest capacity * link_mbps"},
              "pairs_rule": PAIRS_RULE,
              "table_rule": f"tpcstudy path_table(select='maxflow'): slot 0 the IGP path, then "
                            f"the sr LP's paths (k={st.k}), then sps paths; {st.paths} slots",
              "arrivals_rule": "per pair Poisson, rate load * LP / (pairs * mean size); Pareto "
                               "sizes; numpy default_rng(seed), pairs in order",
              "system": system_info()}
    store = open_store(out, config, kind=POLICIES, columns=W.COLUMNS, key=W.KEY,
                        seeds=list(seeds), solver=st.solver, overwrite=overwrite)
    all_rows: List[Dict[str, Any]] = []
    for net in networks(topo=topo, capacity=capacity, weight=weight, plan=the_plan):
        if len(net.topology.edge_routers) < 2:
            log(f"{net.name}: fewer than 2 edge routers after pruning: skipped")
            continue
        tasks = []
        for h in heavy:
            for sd in seeds:
                ids = heavy_pairs(net.topology, percent=h, seed=sd)
                tasks.append(Task({"scenario": net.name, "heavy": float(h), "seed": int(sd)},
                                  [(net.topology.names[a], net.topology.names[b])
                                   for a, b in ids.tolist()]))
        if store is not None and all(store.done(t.id) and not store.failed(t.id) for t in tasks):
            log(f"{net.name}: already measured ({len(tasks)} draws in {out})")
            continue
        spec = network_spec(net.topology, net.plan, prefix=new_prefix(), link_mbps=link_mbps,
                            queue_ms=queue_ms, seed=int(seeds[0]) if seeds else 0)
        with Emulation(spec, log=log) as emu:
            def measure(task: Task, emu: Emulation = emu) -> List[Dict[str, Any]]:
                return W.measure_policies(emu, task.args, st, base=dict(task.key),
                                          seed=int(task.key["seed"]), log=log)

            all_rows += _measure_tasks(tasks, measure, store, net.name, log)
    if store is not None:
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    return all_rows, None


@_locked
def run_two_paths(*, out: Optional[str], settings: Any, seeds: Sequence[int] = (0,),
                  link_mbps: float = 10.0, queue_ms: float = 50.0, overwrite: bool = False,
                  log: Callable[[str], None] = print) -> Tuple[List[Dict[str, Any]], Optional[Path]]:
    """The two-path policy scenarios (:mod:`~tpcstudy.emulate.twopaths`): one task per seed
    running every policy on the same arrivals."""
    st = settings
    st.check()
    topo, plan = TP.two_sites()
    config = {"scenario": st.scenario, "policies": dict(dataclasses.asdict(st)),
              "rates": {"link_mbps": link_mbps, "queue_ms": queue_ms,
                        "rule": "each direction: capacity / smallest capacity * link_mbps"},
              "network": "two sites A, B over paths A-P1-B (slot 0) and A-P2-B (slot 1); "
                         "background host G behind A, pinned by SRH",
              "system": system_info()}
    store = open_store(out, config, kind=POLICIES, columns=W.COLUMNS, key=W.KEY,
                        seeds=list(seeds), overwrite=overwrite)
    tasks = [Task({"scenario": st.scenario, "heavy": "", "seed": int(sd)}, int(sd)) for sd in seeds]
    if store is not None and all(store.done(t.id) and not store.failed(t.id) for t in tasks):
        log(f"{st.scenario}: already measured ({len(tasks)} seeds in {out})")
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    spec = network_spec(topo, plan, prefix=new_prefix(), link_mbps=link_mbps, queue_ms=queue_ms,
                        seed=int(seeds[0]) if seeds else 0)
    rows: List[Dict[str, Any]] = []
    with Emulation(spec, log=log) as emu:
        def measure(task: Task, emu: Emulation = emu) -> List[Dict[str, Any]]:
            return TP.measure_two_paths(emu, st, seed=int(task.args), base=dict(task.key),
                                        log=log)

        rows += _measure_tasks(tasks, measure, store, st.scenario, log)
    if store is not None:
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    return rows, None


# --------------------------------------------------------------------------- failover
@_locked
def run_failover(*, out: Optional[str], topo: str, capacity: str = "uniform", weight: str = "hop",
                 plan: Optional[str] = None, settings: Any = None, seed: int = 0,
                 link_mbps: float = 10.0, queue_ms: float = 50.0, overwrite: bool = False,
                 log: Callable[[str], None] = print) -> Tuple[List[Dict[str, Any]], Optional[Path]]:
    """Failure recovery runs (:mod:`~tpcstudy.emulate.failover`), one task per run."""
    st = settings or F.FailoverSettings()
    st.check()
    the_plan = read_plan_file(plan)
    nets = list(networks(topo=topo, capacity=capacity, weight=weight, plan=the_plan))
    if len(nets) != 1:
        raise UsageError(f"failover runs on one topology; --topo names {len(nets)}")
    net = nets[0]
    cases, eligible = F.failover_cases(net.topology, st, seed=seed, plan=the_plan)
    log(f"{net.name}: {eligible} entries have a backup avoiding a link their default path "
        f"always crosses; {len(cases)} runs")
    config = {"topo": topo, "capacity": capacity, "weight": weight,
              "plan": plan, "failover": dataclasses.asdict(st),
              "rates": {"link_mbps": link_mbps, "queue_ms": queue_ms,
                        "rule": "each direction: capacity / smallest capacity * link_mbps"},
              "table_rule": f"tpcstudy path_table: slot 0 the IGP path, then sps link-disjoint "
                            f"paths, k={st.k}, at most {st.paths}",
              "system": system_info()}
    tasks = [Task({"scenario": net.name, "run": c.run}, c) for c in cases]
    store = open_store(out, config, kind=FAILOVER, columns=F.COLUMNS, key=F.KEY, seeds=[seed],
                        overwrite=overwrite)
    if store is not None and all(store.done(t.id) and not store.failed(t.id) for t in tasks):
        log(f"{net.name}: all {len(tasks)} runs already in {out}")
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    rows: List[Dict[str, Any]] = []
    spec = network_spec(net.topology, net.plan, prefix=new_prefix(), link_mbps=link_mbps,
                        queue_ms=queue_ms, seed=seed)
    with Emulation(spec, log=log) as emu:
        emu.wait_quiet()

        def one(task: Task) -> List[Dict[str, Any]]:
            return F.run_failover_case(emu, task.args, st, scenario=net.name, seed=seed, log=log)

        if store is not None:
            run_tasks(tasks, one, store, jobs=1, desc="failover", progress=False,
                      on_error="record")
        else:
            for t in tasks:
                rows.extend(one(t))
    if store is not None:
        return [dict(r) for r in read_results(store.flush(force=True))], Path(out)  # type: ignore[arg-type]
    return rows, None

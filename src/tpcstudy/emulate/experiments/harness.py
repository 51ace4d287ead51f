"""One harness runs every experiment, with results folders like the studies' (``meta.json`` +
``results.csv``, resumable).

An experiment (:class:`Experiment`) says what it measures: its results kind, columns and key,
the settings it records, the networks to build with the tasks measured on each (:class:`Unit`),
how to measure one task on a built network, and the table it prints. :func:`run_experiment`
does the rest, the same way for all: hold the folder's one-writer lock, record the settings,
the network shaping (:class:`NetworkSettings`) and the machine (kernel, tools, sysctls) beside
the commit and versions ``write_meta`` records, skip a network whose tasks are all stored
("already measured") without building it, build each other one once, run its tasks through the
studies' task loop (a failing task is stored as a failed row, a stored one is not run again, so
an interrupted run resumes where it stopped), always tear the network down, and return one
:class:`Outcome`.

``repeat`` draws (:mod:`.repeats`): every task runs once per draw (key column ``draw``) on the
same built network, the routers' hash seeds renewed before each draw; a draw already stored is
not run again, so a folder measured with ``--repeat 3`` grows to 5 draws with ``--repeat 5``.
Each experiment names the metrics it summarises over the draws (``metrics``, grouped by
``summary_by``) and, when its arms run in the same draws, the column that names them
(``arm``): the harness writes ``summary.csv`` (value and 95 % interval per group) and
``verdicts.csv`` (which pairs of arms differ) beside ``results.csv``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ...errors import UsageError
from ...export.addressing import AddressPlan, read_plan
from ...io import read_topologies, write_csv
from ...pairs import heavy_pairs
from ...study.folderlock import folder_lock
from ...study.store import cell_float, open_store, read_results
from ...study.tasks import Task, run_tasks
from ...topology import Topology, prune
from ..network.checks import system_info
from ..network.handmade import scenario
from ..network.lifecycle import Emulation, new_prefix
from ..network.spec import DEFAULT_MTU, MTU_RANGE, network_spec
from .budget import CPU_LIMIT, DEFAULT_BUDGET, wait_quiet
from .repeats import (
    VERDICT_COLUMNS,
    Metric,
    format_summary,
    format_verdicts,
    summarize,
    summary_columns,
    verdicts,
)

__all__ = ["Experiment", "Unit", "Outcome", "NetworkSettings", "run_experiment", "Row", "Log",
           "topology_units", "pair_tasks", "read_plan_file", "PAIRS_RULE", "check_heavy",
           "MAX_REPEAT", "caveats"]

Row = Dict[str, Any]
Log = Callable[[str], None]

#: The most draws ``--repeat`` takes.
MAX_REPEAT = 1000

PAIRS_RULE = ("heavy_pairs: numpy default_rng(seed).choice of ceil(x * #pairs) ordered "
              "edge-router pairs of the pruned topology, sorted (as tpcstudy maxflow)")


#: A measurement with the CPUs this busy may be limited by the machine, not by the network
#: (every experiment warns; ``--link-mbps auto`` measures again from :data:`~.budget.CPU_LIMIT`).
CPU_WARN = 0.9
#: Goodput above the payload ceiling by more than this is window-edge noise, not data.
OVER_CEILING = 1.02


def caveats(rows: Sequence[Row]) -> List[str]:
    """Warnings about the measurements themselves: a saturated machine (``cpu_busy`` >=
    :data:`CPU_WARN`) and a data share above the payload ceiling: a window too short for the
    bytes in flight at its edges to average out or, for ``ecmp``, per-connection hashing beating
    the LP's even split (measured on the whole Zoo: up to 1.20, never above the multipath LP;
    ``docs/emulation.md``)."""
    def where(r: Row) -> str:
        return " ".join(f"{c} {r[c]}" for c in ("scenario", "heavy", "seed", "draw", "model",
                                                "policy", "strategy")
                        if str(r.get(c, "")) not in ("", "nan", "None"))

    out: List[str] = []
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    busy = [r for r in ok if cell_float(r.get("cpu_busy")) >= CPU_WARN]
    if busy:
        worst = max(busy, key=lambda r: cell_float(r.get("cpu_busy")))
        out.append(f"warning: the CPUs were {CPU_WARN:.0%} or more busy in {len(busy)} of "
                   f"{len(ok)} measurements (up to {cell_float(worst.get('cpu_busy')):.0%}: "
                   f"{where(worst)}): the machine, not the network, may be what limits them; "
                   "lower --link-mbps or keep other work off the machine")
    over = [r for r in ok if cell_float(r.get("data_share")) > OVER_CEILING]
    hashed = [r for r in over if r.get("model") == "ecmp"]
    edges = [r for r in over if r.get("model") != "ecmp"]
    if hashed:
        worst = max(hashed, key=lambda r: cell_float(r.get("data_share")))
        out.append(f"note: ecmp above its LP in {len(hashed)} of {len(ok)} measurements (data "
                   f"share up to {cell_float(worst.get('data_share')):.2f}: {where(worst)}): the ecmp "
                   "LP splits each pair evenly over its shortest paths, while the network hashes "
                   "each connection onto one of them and TCP moves rate to the uncongested ones, "
                   "up to the multipath LP (every shortest path, any split)")
    if edges:
        worst = max(edges, key=lambda r: cell_float(r.get("data_share")))
        out.append(f"warning: goodput above the payload ceiling in {len(edges)} of {len(ok)} "
                   f"measurements (data share up to {cell_float(worst.get('data_share')):.2f}: "
                   f"{where(worst)}): the window is too short for the bytes in flight at its "
                   "edges to average out; measure longer (--seconds)")
    return out


@dataclasses.dataclass(frozen=True)
class NetworkSettings:
    """How every emulated link is shaped (:func:`~tpcstudy.emulate.network.spec.network_spec`):
    ``link_mbps`` for a link of the smallest capacity, each direction; a queue of ``queue_ms``
    at the link's rate. ``auto``: the experiment chooses the rate per network from the CPU
    budget (:mod:`.budget`; ``cpu_budget``: the share of the CPUs planned), and a measurement
    that finds the CPUs busier than :data:`~.budget.CPU_LIMIT` is repeated once at a lower
    rate (``cpu_retry``)."""

    link_mbps: float = 10.0
    queue_ms: float = 50.0
    mtu: int = DEFAULT_MTU
    auto: bool = False
    cpu_budget: float = DEFAULT_BUDGET
    cpu_retry: bool = True

    def check(self) -> None:
        if not (math.isfinite(self.link_mbps) and 0 < self.link_mbps <= 10_000):
            raise UsageError(f"--link-mbps {self.link_mbps:g}: from above 0 to 10000")
        if not (math.isfinite(self.queue_ms) and 0 < self.queue_ms <= 10_000):
            raise UsageError(f"--queue-ms {self.queue_ms:g}: from above 0 to 10000")
        if not MTU_RANGE[0] <= self.mtu <= MTU_RANGE[1]:
            raise UsageError(f"--mtu {self.mtu}: {MTU_RANGE[0]} to {MTU_RANGE[1]}")
        if not (math.isfinite(self.cpu_budget) and 0 < self.cpu_budget <= 1):
            raise UsageError(f"--cpu-budget {self.cpu_budget:g}: a share of the CPUs in (0, 1]")

    def record(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"link_mbps": "auto" if self.auto else self.link_mbps,
                               "queue_ms": self.queue_ms, "mtu": self.mtu,
                               "rule": "each direction: capacity / smallest capacity * link_mbps"}
        if self.auto:  # not cpu_retry: a folder may be resumed with the retry on or off
            out.update(cpu_budget=self.cpu_budget, cpu_limit=CPU_LIMIT)
        return out


@dataclasses.dataclass
class Unit:
    """One network to build (``seed``: its ECMP hash seeds derive from it) and the tasks
    measured on it; ``prepare(emu)`` runs once after the build."""

    name: str
    topology: Topology
    plan: Optional[AddressPlan]
    tasks: List[Task]
    seed: int = 0
    prepare: Optional[Callable[[Emulation], None]] = None


@dataclasses.dataclass
class Outcome:
    """What a run gives back: its rows (read back from the folder when there is one), the
    folder and the kind."""

    kind: str
    rows: List[Row]
    out: Optional[Path]
    summary: List[Row] = dataclasses.field(default_factory=list)
    verdicts: List[Row] = dataclasses.field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r.get("status") == "failed" for r in self.rows)


class Experiment:
    """What an experiment says (module docstring); subclasses set the class attributes."""

    kind: str = ""
    columns: Sequence[str] = ()
    key: Sequence[str] = ()
    #: The results folder's figure (``tpcstudy.plotting`` function name).
    figure: str = ""
    solver: Optional[str] = None
    #: Summarised over the draws (:mod:`.repeats`), grouped by ``summary_by`` (default: the key
    #: without ``draw``); ``arm``: the column whose values are compared pairwise by draw.
    metrics: Sequence[Metric] = ()
    summary_by: Sequence[str] = ()
    arm: Optional[str] = None
    #: The metrics the verdicts compare (default: all of ``metrics``).
    compare: Sequence[str] = ()
    #: The arms in the order the user gave them (tables and matrices follow it).
    arms: Sequence[str] = ()

    def config(self) -> Dict[str, Any]:
        """The settings ``meta.json`` records (resuming needs the same ones)."""
        raise NotImplementedError

    def seeds(self) -> Optional[List[int]]:
        return None

    def units(self, log: Log) -> Iterator[Unit]:
        raise NotImplementedError

    def fit(self, unit: Unit, network: NetworkSettings, log: Log) -> NetworkSettings:
        """The settings to build ``unit`` with (``network.auto``: chosen here; by default the
        settings given)."""
        return network

    def lower(self, unit: Unit, network: NetworkSettings, log: Log,
              rows: Sequence[Row] = ()) -> Optional[NetworkSettings]:
        """Settings to measure ``unit``'s CPU-bound tasks again with (``None``: none lower);
        ``rows``: those tasks' first attempts."""
        return None

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        raise NotImplementedError

    def table(self, rows: Sequence[Row]) -> str:
        raise NotImplementedError

    def by(self) -> List[str]:
        return list(self.summary_by or [c for c in self.key if c != "draw"])

    def compared(self) -> List[Metric]:
        return [m for m in self.metrics if not self.compare or m.column in self.compare]

    def draw_rows(self, rows: Sequence[Row]) -> List[Row]:
        """The rows the metrics are read from, one per draw and group (default: the rows; an
        experiment with several rows per draw, one per second say, reduces them here)."""
        return [r for r in rows]

    def summarize(self, rows: Sequence[Row]) -> Tuple[List[Row], List[Row]]:
        """The summary and the verdicts of ``rows`` (:mod:`.repeats`)."""
        if not self.metrics:
            return [], []
        per_draw = self.draw_rows(rows)
        arm = self.arm
        if arm and self.arms:  # each context's arms in the order given
            order = {a: i for i, a in enumerate(self.arms)}
            ctx = [c for c in self.by() if c != arm]
            seen: Dict[Tuple[str, ...], int] = {}
            for r in per_draw:
                seen.setdefault(tuple(str(r.get(c)) for c in ctx), len(seen))
            per_draw = sorted(per_draw, key=lambda r: (
                seen[tuple(str(r.get(c)) for c in ctx)],
                order.get(str(r.get(arm)), len(order))))
        summ = summarize(per_draw, self.by(), self.metrics)
        ver = (verdicts(per_draw, by=self.by(), arm=self.arm, metrics=self.compared(),
                        draw=[c for c in self.key if c not in self.by()])
               if self.arm else [])
        return summ, ver

    def report(self, outcome: "Outcome") -> str:
        """What the CLI prints: the per-draw table for one draw; the summary with intervals
        (and which arms differ) for several."""
        draws = {str(r.get("draw", 0)) for r in outcome.rows}
        if len(draws) <= 1 or not outcome.summary:
            text = self.table(outcome.rows)
        else:
            text = format_summary(outcome.summary, self.by(), self.metrics)
            if outcome.verdicts:
                ctx = [c for c in self.by() if c != self.arm]
                text += "\n" + format_verdicts(outcome.verdicts, self.compared(), ctx)
        return "\n".join([text, *caveats(outcome.rows)])


def _with_draw(task: Task, draw: int) -> Task:
    return Task(dict(task.key, draw=draw), task.args)


def _of(row: Row, task: Task) -> bool:
    """``row`` is one of ``task``'s (its key's columns equal)."""
    return all(str(row.get(c, "")) == str(v) for c, v in task.key.items())


def _cpu_bound(rows: Sequence[Row]) -> bool:
    """A first attempt whose CPUs were busier than :data:`~.budget.CPU_LIMIT`."""
    return any(cell_float(r.get("cpu_busy")) > CPU_LIMIT and str(r.get("attempt", "")) in ("1", "1.0")
               for r in rows if r.get("status", "ok") == "ok")


def run_experiment(exp: Experiment, *, out: Optional[str] = None,
                   network: NetworkSettings = NetworkSettings(), overwrite: bool = False,
                   log: Log = print, progress: bool = False, repeat: int = 1) -> Outcome:
    """Run ``exp`` (module docstring), each task in ``repeat`` draws.

    With ``network.auto`` each network is built at the settings ``exp.fit`` chooses, and the
    tasks whose first attempt was CPU-bound (their rows' ``cpu_busy`` over
    :data:`~.budget.CPU_LIMIT`, ``attempt`` 1) are measured again on a network rebuilt at
    ``exp.lower``'s settings, also when a resumed folder holds such an attempt. With more than
    one network and ``progress``, a bar over the networks gives the time left.
    """
    network.check()
    if not (isinstance(repeat, int) and 1 <= repeat <= MAX_REPEAT):
        raise UsageError(f"--repeat {repeat!r}: 1 to {MAX_REPEAT} draws")
    if "draw" not in exp.key or "draw" not in exp.columns:
        raise ValueError(f"{type(exp).__name__}: key and columns need 'draw'")
    with folder_lock(out) if out else contextlib.nullcontext():
        config = dict(exp.config(), network=network.record(), system=system_info())
        store = open_store(out, config, kind=exp.kind, columns=exp.columns, key=exp.key,
                           seeds=exp.seeds(), solver=exp.solver, overwrite=overwrite)

        def todo(tasks: Sequence[Task]) -> List[Task]:
            return [t for t in tasks
                    if store is None or not store.done(t.id) or store.failed(t.id)]

        def bound(tasks: Sequence[Task], fresh: Sequence[Row]) -> List[Task]:
            if not (network.auto and network.cpu_retry):
                return []
            if store is None:  # a task's key has fewer columns than its rows' (no model)
                return [t for t in tasks if _cpu_bound([r for r in fresh if _of(r, t)])]
            return [t for t in tasks if store.done(t.id) and _cpu_bound(store.rows(t.id))]

        rows: List[Row] = []
        units = list(exp.units(log))
        bar = _units_bar(len(units), progress)
        try:
            for unit in units:
                draws = [[_with_draw(t, d) for t in unit.tasks] for d in range(repeat)]
                flat = [t for ts in draws for t in ts]
                if not any(todo(ts) for ts in draws) and not bound(flat, []):
                    log(f"{unit.name}: already measured ({len(unit.tasks)} tasks x {repeat} "
                        f"draws in {out})")
                    bar.update(1)
                    continue
                net = exp.fit(unit, network, log)
                fresh: List[Row] = []
                if any(todo(ts) for ts in draws):
                    fresh = _measure_unit(exp, unit, [todo(ts) for ts in draws], net, store,
                                          False, log)
                    rows += fresh
                again = bound(flat, fresh)
                first = ([r for t in again for r in store.rows(t.id)] if store is not None
                         else [r for r in fresh if any(_of(r, t) for t in again)])
                lower = exp.lower(unit, net, log, first) if again else None
                if again and lower is not None:
                    log(f"{unit.name}: {len(again)} of its tasks CPU-bound at "
                        f"{net.link_mbps:g} Mbit/s: measured again at {lower.link_mbps:g} Mbit/s")
                    ids = {t.id for t in again}
                    if store is not None:
                        for t in again:
                            store.forget(t.id)
                    else:  # this network's retried tasks only, every row of them
                        rows = [r for r in rows if not any(_of(r, t) for t in again)]
                    rows += _measure_unit(exp, unit, [[t for t in ts if t.id in ids]
                                                      for ts in draws], lower, store,
                                          False, log)
                bar.update(1)
        finally:
            bar.close()
        if store is not None:
            rows = [dict(r) for r in read_results(store.flush(force=True))]
        summ, ver = exp.summarize(rows)
        if out is not None and summ:
            by = exp.by()
            cols = summary_columns(by, exp.metrics)
            write_csv(Path(out) / "summary.csv", summ, cols)
            if ver:
                vcols = [c for c in by if c != exp.arm] + VERDICT_COLUMNS
                write_csv(Path(out) / "verdicts.csv", ver, vcols)
    return Outcome(exp.kind, rows, Path(out) if out else None, summ, ver)


def _units_bar(n: int, progress: bool) -> Any:
    """A bar over the networks with the time left, on standard error when it is a terminal."""
    from tqdm.auto import tqdm

    return tqdm(total=n, desc="networks", unit="network", file=sys.stderr,
                disable=None if progress and n > 1 else True)


def _measure_unit(exp: Experiment, unit: Unit, draws: Sequence[Sequence[Task]],
                  net: NetworkSettings, store: Any, progress: bool, log: Log) -> List[Row]:
    """Build ``unit``'s network at ``net`` and run ``draws[d]`` (the tasks of draw ``d`` still
    to measure) in each draw; the rows measured (stored when there is a store)."""
    spec = network_spec(unit.topology, unit.plan, prefix=new_prefix(),
                        link_mbps=net.link_mbps, queue_ms=net.queue_ms,
                        seed=unit.seed, mtu=net.mtu)
    if net.auto:  # the measurements are planned for an otherwise quiet machine
        waited, busy = wait_quiet()
        if waited > 1.0:
            log(f"{unit.name}: waited {waited:.0f} s for the machine to quieten (now "
                f"{busy:.0%} busy)")
    repeat = len(draws)
    out: List[Row] = []
    with Emulation(spec, log=log) as emu:
        if unit.prepare is not None:
            unit.prepare(emu)
        for d, tasks in enumerate(draws):
            if not tasks:
                continue
            emu.reseed(d)

            def one(task: Task, emu: Emulation = emu, d: int = d) -> List[Row]:
                got = [dict(r, draw=d) for r in exp.measure(emu, task, log)]
                out.extend(got)
                return got

            name = unit.name + (f" draw {d + 1}/{repeat}" if repeat > 1 else "")
            if repeat > 1:
                log(f"{name}: ECMP hash seeds renewed")
            if store is None:
                for t in tasks:
                    one(t)
                continue
            summary = run_tasks(tasks, one, store, jobs=1, desc=name,
                                progress=progress, on_error="record")
            if summary.failed:
                log(f"{name}: {len(summary.failed)} tasks failed (see results.csv)")
    return out


# --------------------------------------------------------------------------- shared pieces
def read_plan_file(plan: Optional[str]) -> Optional[AddressPlan]:
    return read_plan(plan) if plan else None


def check_heavy(heavy: Sequence[float]) -> None:
    for h in heavy:
        if not 0 < h <= 100:
            raise UsageError(f"--heavy {h:g}: percentages in (0, 100]")


def topology_units(topo: Optional[str], *, capacity: str = "uniform", weight: str = "hop",
                   plan: Optional[AddressPlan] = None, scenario_name: Optional[str] = None,
                   need_edges: bool = True, log: Log = print
                   ) -> Iterator[Tuple[str, Topology, Optional[AddressPlan], Any]]:
    """``(name, topology, plan, scenario)`` of the networks ``--topo`` / ``--scenario`` name:
    topologies pruned, those with nothing to emulate skipped with a line on ``log``; a
    scenario brings its own plan."""
    if bool(topo) == bool(scenario_name):
        raise UsageError("give --topo or --scenario (one of them)")
    if scenario_name:
        sc = scenario(scenario_name)
        yield sc.name, sc.topology, sc.plan, sc
        return
    for t in read_topologies(topo, capacity=capacity, weight=weight):  # type: ignore[arg-type]
        p = prune(t)
        if p.num_nodes < 2 or p.num_links < 1:
            log(f"{t.name}: nothing to emulate after pruning ({p.num_nodes} routers, "
                f"{p.num_links} links): skipped")
            continue
        if need_edges and len(p.edge_routers) < 2:
            log(f"{t.name}: fewer than 2 edge routers after pruning: skipped")
            continue
        yield t.name, p, plan, None


def pair_tasks(name: str, topo: Topology, heavy: Sequence[float], seeds: Sequence[int]
               ) -> List[Task]:
    """One task per (heavy percent, seed): its heavy pairs (router names) as the argument."""
    tasks = []
    for h in heavy:
        for s in seeds:
            ids = heavy_pairs(topo, percent=h, seed=s)
            tasks.append(Task({"scenario": name, "heavy": float(h), "seed": int(s)},
                              [(topo.names[a], topo.names[b]) for a, b in ids.tolist()]))
    return tasks

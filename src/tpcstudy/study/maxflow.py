"""The max-flow study (docs/method.md §4; Figure 6 of "The TCPPathChanger").

One task per topology: for every heavy-hitter percent and seed, the pairs are drawn
(:func:`tpcstudy.pairs.heavy_pairs`) and every model is solved on the pruned topology. Rows:
one per (topology, heavy, seed, model, k, subflows), with the improvement over ecmp (and, for sr
and mptcp, over multipath) of the same draw. ``mptcp`` and ``sr+mptcp`` are solved once per
number of subflows K; the seed of a draw also seeds mptcp's hash draws. With demands
(``demands``), the pairs are the demand matrix's, each bounded by its demand, on the unpruned
topology (its routers are the ones the file names).

:func:`summarize` is the one summary of the rows: the command line prints it
(:func:`format_summary`) and Figure 6 draws its per-topology table
(:func:`improvement_table`).

The summary of the rows lives in :mod:`.maxflow_summary` (re-exported here).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import TpcStudyError, UsageError
from ..io import read_demands, read_topology
from ..io.specs import Spec
from ..lp import SOLVERS
from ..models.demands import demands_file
from ..models.maxflow import MODELS, SUBFLOW_MODELS, max_flow
from ..pairs import ROUNDINGS, heavy_pairs, heavy_rule
from ..paths import segment_limit
from ..rules import check_links, check_rules
from ..topology import prune
from .executors import TaskExecutor
from .kinds import KINDS
from .maxflow_summary import (
    AGGREGATES,
    LEVEL,
    RESAMPLES,
    default_k,
    format_summary,
    improvement_draws,
    improvement_table,
    median_noise_interval,
    paper_box,
    paper_median,
    study_ks,
    subflows_to_reach,
    summarize,
    summary_line,
)
from .runner import run_demand_study
from .tasks import RunSummary, Task

__all__ = ["COLUMNS", "KEY", "MaxflowConfig", "run_topology", "run_maxflow_study",
           "improvement_table", "summarize", "format_summary", "summary_line", "study_ks",
           "default_k", "subflows_to_reach", "DEFAULT_MODELS", "DEFAULT_SUBFLOWS", "parse_model_specs",
           "improvement_draws", "median_noise_interval", "paper_box", "paper_median", "AGGREGATES",
           "RESAMPLES", "LEVEL"]

COLUMNS = list(KINDS["maxflow"].columns)
KEY = list(KINDS["maxflow"].key)
#: ECMP over parallel links: each a next hop (the rule) or one merged next hop (a variant).
PARALLEL_RULES = ("links", "one")
#: Models the study solves unless told otherwise.
DEFAULT_MODELS: Tuple[str, ...] = ("ecmp", "multipath", "sr", "mcf")
#: Subflows per pair of mptcp / sr+mptcp when none are given (SEMPER recommends 32).
DEFAULT_SUBFLOWS: Tuple[int, ...] = (2, 4, 8, 32)
#: Largest number of subflows per pair the study accepts.
MAX_SUBFLOWS = 1024


def parse_model_specs(specs: Sequence[str]) -> Tuple[Tuple[str, ...], Tuple[int, ...]]:
    """Model names, some written ``mptcp:K`` / ``sr+mptcp:K``: the models and the Ks given."""
    models: List[str] = []
    ks: List[int] = []
    for spec in specs:
        name, sep, arg = str(spec).strip().partition(":")
        if name not in MODELS:
            raise UsageError(f"unknown model {spec!r}; choose from {', '.join(MODELS)} "
                             f"(mptcp and sr+mptcp also as mptcp:K)")
        if sep:
            if name not in SUBFLOW_MODELS:
                raise UsageError(f"model {spec!r}: only {' and '.join(SUBFLOW_MODELS)} take a "
                                 f"number of subflows")
            try:
                ks.append(int(arg))
            except ValueError:
                raise UsageError(f"model {spec!r}: K must be an integer") from None
        models.append(name)
    return tuple(dict.fromkeys(models)), tuple(ks)
PAIRS_RULE = heavy_rule()


# --------------------------------------------------------------------------- configuration
@dataclasses.dataclass(frozen=True)
class MaxflowConfig:
    """Settings of one study run (picklable: it travels to worker processes).

    Parameters
    ----------
    heavy
        Heavy-hitter shares, in percent of the ordered edge-router pairs (each in (0, 100]).
    seeds
        Seeds of the draws; every percent is drawn once per seed.
    models
        Models to solve (``ecmp`` is always added first: the baseline of every improvement);
        ``mptcp`` and ``sr+mptcp`` may be written ``mptcp:K``.
    ks
        Segment limits of ``sr`` (and of ``sr+mptcp``).
    subflows
        Subflows per pair of ``mptcp`` and ``sr+mptcp`` (with the Ks of ``mptcp:K`` models;
        :data:`DEFAULT_SUBFLOWS` when a subflow model is asked for with none).
    capacity, weight, links
        The rules of :mod:`tpcstudy.rules` (``links``: ``merged`` or ``multigraph``).
    solver
        LP backend (:data:`tpcstudy.lp.SOLVERS`).
    demands
        ``None``, a REPETITA ``.demands`` file (one topology), or ``"auto"``: the
        ``NAME.*.demands`` next to each ``NAME.graph``; the pairs are then the demand matrix's.
    prune
        Prune the topologies (docs/method.md §2) when drawing heavy hitters.
    time_limit
        Seconds per model solve; a solve over it is a failed row.
    ordered, rounding
        How heavy hitters are drawn (:func:`tpcstudy.pairs.heavy_pairs`): ordered pairs and
        ``ceil`` are the study's rule; unordered pairs and ``round`` are the variants that
        bracket the TPC paper.
    write_lp
        Write each final LP as ``FILE-<topology>-h<heavy>-s<seed>-<model><k>.lp``.
    parallel
        ECMP over parallel links (``links: multigraph``): ``links`` (the rule: each parallel
        link of least weight is a next hop of its own) or ``one`` (a variant: the models are
        solved on the topology with parallel links merged, one next hop whose capacity is their
        sum; pruning, edge routers and draws stay the multigraph's).

    Raises
    ------
    UsageError
        A value outside its range, an unknown model, rule or solver.
    """

    heavy: Tuple[float, ...] = (1.0, 5.0, 10.0)
    seeds: Tuple[int, ...] = (0,)
    models: Tuple[str, ...] = DEFAULT_MODELS
    ks: Tuple[int, ...] = (4,)
    subflows: Tuple[int, ...] = ()
    capacity: str = "uniform"
    weight: str = "hop"
    solver: str = "highs"
    demands: Optional[str] = None
    prune: bool = True
    time_limit: Optional[float] = None
    links: str = "merged"
    ordered: bool = True
    rounding: str = "ceil"
    write_lp: Optional[str] = None
    parallel: str = "links"

    def __post_init__(self) -> None:
        heavy = tuple(dict.fromkeys(float(h) for h in self.heavy))  # 1 and 1.0 are one draw
        if not heavy or any(not 0 < h <= 100 for h in heavy):
            raise UsageError(f"heavy: percentages must be in (0, 100], got {list(heavy)}")
        models, given = parse_model_specs(self.models)
        models = tuple(sorted(models, key=MODELS.index))  # sr is solved before sr+mptcp reuses it
        try:
            subflows = tuple(sorted({int(x) for x in tuple(self.subflows) + given}))
        except (TypeError, ValueError):
            raise UsageError(f"subflows: need integers, got {list(self.subflows)}") from None
        if any(not 1 <= x <= MAX_SUBFLOWS for x in subflows):
            raise UsageError(f"subflows: need integers in 1..{MAX_SUBFLOWS}, got {list(subflows)}")
        if any(m in SUBFLOW_MODELS for m in models):
            subflows = subflows or DEFAULT_SUBFLOWS
        else:
            subflows = ()
        if "ecmp" not in models:
            models = ("ecmp",) + models  # the baseline every improvement is measured against
        ks = tuple(sorted(set(segment_limit(k) for k in self.ks)))
        if not ks:
            raise UsageError("k: need at least one segment limit")
        seeds = tuple(dict.fromkeys(int(s) for s in self.seeds))
        if not seeds:
            raise UsageError("seeds: need at least one seed")
        if min(seeds) < 0:
            raise UsageError(f"seeds: {min(seeds)} is negative; seeds are integers >= 0")
        if self.solver not in SOLVERS:
            raise UsageError(f"solver {self.solver!r}: choose from {', '.join(SOLVERS)}")
        check_rules(self.capacity, self.weight)
        check_links(self.links)
        if self.rounding not in ROUNDINGS:
            raise UsageError(f"rounding {self.rounding!r}: choose from {', '.join(ROUNDINGS)}")
        if self.parallel not in PARALLEL_RULES:
            raise UsageError(f"parallel {self.parallel!r}: choose from {', '.join(PARALLEL_RULES)}")
        demands = None if self.demands in (None, "", "none") else str(self.demands)
        for name, value in (("heavy", heavy), ("models", models), ("ks", ks), ("seeds", seeds),
                            ("demands", demands), ("subflows", subflows)):
            object.__setattr__(self, name, value)

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        """The config recorded in meta.json (everything that changes the results)."""
        out = {"topo": topo_spec, "capacity": self.capacity, "weight": self.weight,
               "heavy": list(self.heavy), "models": list(self.models), "k": list(self.ks),
               "subflows": list(self.subflows), "demands": self.demands, "prune": self.prune,
               "time_limit": self.time_limit,
               "pairs_rule": heavy_rule(ordered=self.ordered, rounding=self.rounding)}
        if self.links != "merged":  # absent: merged (folders written before the rule existed)
            out["links"] = self.links
        if self.parallel != "links":  # absent: the rule (folders written before the variant)
            out["parallel"] = self.parallel
        return out


def _lp_file(base: Optional[str], topo: str, heavy: float, seed: int, model: str,
             k: Any, subflows: Any = "") -> Optional[str]:
    if not base:
        return None
    p = Path(base)
    suffix = p.suffix if p.suffix in (".lp", ".mps") else ".lp"
    stem = p.stem if p.suffix in (".lp", ".mps") else p.name
    sub = f"x{subflows}" if subflows != "" else ""
    return str(p.with_name(f"{stem}-{topo}-h{heavy:g}-s{seed}-{model}{k}{sub}{suffix}"))


def _variants(model: str, config: "MaxflowConfig") -> List[Tuple[Any, Any]]:
    """The (k, subflows) cells of one model's rows (``""``: not applicable)."""
    if model == "ecmp":
        return [(1, "")]
    if model == "sr":
        return [(k, "") for k in config.ks]
    if model == "mptcp":
        return [("", x) for x in config.subflows]
    if model == "sr+mptcp":
        return [(k, x) for k in config.ks for x in config.subflows]
    return [("", "")]


# --------------------------------------------------------------------------- one topology
def _sr_start(model: str, k: Any, solved: Dict[int, Any]) -> Optional[Any]:
    """The sr result a model starts from: sr+mptcp its own k's; mcf the largest k's (its
    optimum proves mcf's where the two are equal, else its routing starts mcf's column
    generation: the same optimum either way; models.maxflow_models.proven_by)."""
    if model == "sr+mptcp":
        return solved.get(int(k))
    if model == "mcf" and solved:
        return solved[max(solved)]
    return None


def run_topology(task: Task) -> List[Dict[str, Any]]:
    """The rows of one topology (module level: worker processes import it by name).

    ``task.args`` is ``(path, MaxflowConfig)``.
    """
    path_text, config = task.args
    path = Path(path_text)
    topo = read_topology(path, capacity=config.capacity, weight=config.weight,
                         links=config.links)
    dfile = demands_file(config.demands, path, drawn=())  # the max-flow objective draws none
    draws: List[Tuple[float, int, np.ndarray, Optional[np.ndarray]]] = []
    if dfile is not None:
        dem = read_demands(dfile, topo)
        dem = dem[(dem["bw"] > 0) & (dem["src"] != dem["dst"])]
        draws.append((100.0, 0, np.stack([dem["src"], dem["dst"]], axis=1).astype(np.int32),
                      dem["bw"].astype(np.float64)))
    else:
        if config.prune:
            topo = prune(topo)
        for heavy in config.heavy:
            for seed in config.seeds:
                draws.append((heavy, seed, heavy_pairs(topo, percent=heavy, seed=seed,
                                                      ordered=config.ordered,
                                                      rounding=config.rounding), None))
    base = {"topology": topo.name, "nodes": topo.num_nodes, "links": topo.num_links,
            "edge_routers": len(topo.edge_routers)}
    if getattr(config, "parallel", "links") == "one":
        topo = topo.merged()  # router ids unchanged: the draws stay valid
    rows: List[Dict[str, Any]] = []
    for heavy, seed, pairs, bounds in draws:
        values: Dict[Tuple[str, Any, Any], float] = {}
        sr_solved: Dict[int, Any] = {}  # sr results of this draw, reused by sr+mptcp and mcf
        ecmp_solved: Optional[Any] = None  # multipath is proven by it, sr starts from its LP
        draw_rows = []
        for model in config.models:
            for k, sub in _variants(model, config):
                row = dict(base, heavy=heavy, seed=seed, model=model, k=k, subflows=sub,
                           pairs=len(pairs))
                if len(pairs) == 0:
                    row.update(status="skipped", error="fewer than 2 edge routers")
                    draw_rows.append(row)
                    continue
                t0 = time.perf_counter()
                try:
                    if model == "sr+mptcp" and int(k) not in sr_solved:
                        sr_solved[int(k)] = max_flow(topo, pairs, model="sr", k=int(k),
                                                     solver=config.solver, demands=bounds,
                                                     time_limit=config.time_limit)
                    res = max_flow(topo, pairs, model=model, k=int(k) if k != "" else 4,
                                   solver=config.solver, demands=bounds,
                                   time_limit=config.time_limit,
                                   write_lp=_lp_file(config.write_lp, topo.name, heavy, seed,
                                                     model, k, sub),
                                   subflows=int(sub) if sub != "" else 1, seed=seed,
                                   sr_solution=_sr_start(model, k, sr_solved),
                                   ecmp_solution=ecmp_solved if model in ("sr", "multipath")
                                   else None,
                                   keep_state=model == "ecmp" and "sr" in config.models)
                    if model == "sr":
                        sr_solved[int(k)] = res
                    if model == "ecmp" and res.ok:
                        ecmp_solved = res
                except TpcStudyError as exc:
                    row.update(status="failed", error=str(exc), seconds=time.perf_counter() - t0)
                    draw_rows.append(row)
                    continue
                row.update(value=res.value, iterations=res.iterations, columns=res.columns,
                           used_paths_max=int(res.used_paths().max()) if res.ok and len(pairs)
                           else None,
                           gap=res.gap, seconds=round(time.perf_counter() - t0, 4),
                           seconds_paths=round(res.seconds["paths"], 4),
                           seconds_pricing=round(res.seconds["pricing"], 4),
                           seconds_lp=round(res.seconds["lp"], 4),
                           status="ok" if res.ok else "failed",
                           error="" if res.ok else f"{res.status}: {res.message}")
                if res.ok:
                    values[(model, k, sub)] = res.value
                draw_rows.append(row)
        ecmp = values.get(("ecmp", 1, ""))
        multi = values.get(("multipath", "", ""))
        for row in draw_rows:
            v = values.get((row["model"], row["k"], row["subflows"]))
            if v is not None and ecmp:
                row["improvement"] = round(100.0 * (v - ecmp) / ecmp, 6)
            if v is not None and multi and row["model"] in ("sr", "mptcp"):
                row["improvement_over_multipath"] = round(100.0 * (v - multi) / multi, 6)
        rows.extend(draw_rows)
    return rows


# --------------------------------------------------------------------------- the study
def run_maxflow_study(topo_spec: Spec, out_dir: Union[str, Path], config: MaxflowConfig, *,
                      jobs: int = 1, progress: Union[bool, str] = True,
                      executor: Optional[TaskExecutor] = None,
                      overwrite: bool = False) -> Tuple[RunSummary, List[Dict[str, str]]]:
    """Run (or resume) the study over every topology ``topo_spec`` names.

    Parameters
    ----------
    topo_spec
        A ``--topo`` value (file, folder, glob, ``zoo``, ``repetita/inverse-capacity``, ...) or a
        list of them.
    out_dir
        Results folder: ``meta.json``, ``parts/``, ``results.csv``; re-running resumes.
    config
        The study settings.
    jobs, progress, executor
        As :func:`tpcstudy.study.tasks.run_tasks` (``executor``: see
        :mod:`tpcstudy.study.executors`).
    overwrite
        Discard the results already in ``out_dir`` (e.g. of a study with other settings).

    Returns
    -------
    (RunSummary, list of result rows as read back from results.csv)

    Raises
    ------
    UsageError
        ``out_dir`` holds a study with other settings (and not ``overwrite``), or a single
        demands file for several topologies.
    """
    return run_demand_study(topo_spec, out_dir, "maxflow", config, run_topology, drawn=(),
                            jobs=jobs, progress=progress, executor=executor, overwrite=overwrite)



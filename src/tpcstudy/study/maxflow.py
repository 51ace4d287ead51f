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

It is a little over 500 lines because the study's config, task, summary and its printed form
belong together: splitting them would spread one table's definition over several files.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import TpcStudyError, UsageError
from ..io import read_demands, read_topology, topology_files
from ..io.specs import Spec, spec_text
from ..lp import SOLVERS
from ..maxflow import MODELS, SUBFLOW_MODELS, max_flow
from ..pairs import heavy_pairs
from ..paths import segment_limit
from ..rules import check_rules
from ..topology import prune
from . import paper
from .executors import TaskExecutor
from .provenance import write_meta
from .store import ResultStore, cell_number, discard_results, folder_lock, read_results
from .tasks import RunSummary, Task, input_fingerprint, run_tasks

__all__ = ["COLUMNS", "KEY", "MaxflowConfig", "run_topology", "run_maxflow_study",
           "improvement_table", "summarize", "format_summary", "summary_line", "study_ks",
           "default_k", "subflows_to_reach", "DEFAULT_MODELS", "DEFAULT_SUBFLOWS", "parse_model_specs"]

COLUMNS = [
    "topology", "heavy", "seed", "model", "k", "subflows", "pairs", "value", "improvement",
    "improvement_over_multipath", "used_paths_max", "iterations", "columns", "gap", "seconds",
    "seconds_paths", "seconds_pricing", "seconds_lp", "nodes", "links", "edge_routers", "status",
    "error",
]
KEY = ["topology", "heavy", "seed", "model", "k", "subflows"]
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
PAIRS_RULE = ("heavy_pairs: numpy default_rng(seed).choice of ceil(x * #pairs) ordered "
              "edge-router pairs, sorted")


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
    capacity, weight
        The rules of :mod:`tpcstudy.rules`.
    solver
        LP backend (:data:`tpcstudy.lp.SOLVERS`).
    demands
        ``None``, a REPETITA ``.demands`` file (one topology), or ``"auto"``: the
        ``NAME.*.demands`` next to each ``NAME.graph``; the pairs are then the demand matrix's.
    prune
        Prune the topologies (docs/method.md §2) when drawing heavy hitters.
    time_limit
        Seconds per model solve; a solve over it is a failed row.
    write_lp
        Write each final LP as ``FILE-<topology>-h<heavy>-s<seed>-<model><k>.lp``.

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
    write_lp: Optional[str] = None

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
        demands = None if self.demands in (None, "", "none") else str(self.demands)
        for name, value in (("heavy", heavy), ("models", models), ("ks", ks), ("seeds", seeds),
                            ("demands", demands), ("subflows", subflows)):
            object.__setattr__(self, name, value)

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        """The config recorded in meta.json (everything that changes the results)."""
        return {"topo": topo_spec, "capacity": self.capacity, "weight": self.weight,
                "heavy": list(self.heavy), "models": list(self.models), "k": list(self.ks),
                "subflows": list(self.subflows), "demands": self.demands, "prune": self.prune,
                "time_limit": self.time_limit, "pairs_rule": PAIRS_RULE}


def _demands_file(path: Path, spec: Optional[str]) -> Optional[Path]:
    if spec is None:
        return None
    if spec == "auto":
        cands = sorted(path.parent.glob(path.stem + ".*demands"))  # NAME.demands, NAME.0000.demands
        if not cands:
            raise UsageError(f"--demands auto: no {path.stem}.*.demands next to {path}")
        return cands[0]
    return Path(spec)


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
def run_topology(task: Task) -> List[Dict[str, Any]]:
    """The rows of one topology (module level: worker processes import it by name).

    ``task.args`` is ``(path, MaxflowConfig)``.
    """
    path_text, config = task.args
    path = Path(path_text)
    topo = read_topology(path, capacity=config.capacity, weight=config.weight)
    dfile = _demands_file(path, config.demands)
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
                draws.append((heavy, seed, heavy_pairs(topo, percent=heavy, seed=seed), None))
    base = {"topology": topo.name, "nodes": topo.num_nodes, "links": topo.num_links,
            "edge_routers": len(topo.edge_routers)}
    rows: List[Dict[str, Any]] = []
    for heavy, seed, pairs, bounds in draws:
        values: Dict[Tuple[str, Any, Any], float] = {}
        sr_solved: Dict[int, Any] = {}  # sr results of this draw, reused by sr+mptcp
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
                                   sr_solution=sr_solved.get(int(k)) if model == "sr+mptcp"
                                   else None)
                    if model == "sr":
                        sr_solved[int(k)] = res
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
    files = topology_files(topo_spec)
    if config.demands not in (None, "auto") and len(files) != 1:
        raise UsageError("--demands FILE needs a single topology; use --demands auto for a folder")
    out = Path(out_dir)
    with folder_lock(out):  # one writer per folder, --overwrite included
        if overwrite:  # a fresh study in an old folder: drop the old results first
            discard_results(out)
        write_meta(out, config.meta(spec_text(topo_spec)), kind="maxflow",
                   seeds=list(config.seeds), solver=config.solver, overwrite=overwrite)
        # largest files first: the big topologies start early and the workers stay busy
        order = sorted(files, key=lambda p: (-p.stat().st_size, p.name))
        options = config.meta("")
        # absolute paths: Dask workers may run in another folder (or on another machine)
        tasks = [Task({"topology": p.stem, "file": p.name}, (str(p.absolute()), config),
                      inputs=input_fingerprint([p, _demands_or_none(p, config.demands)], options))
                 for p in order]
        store = ResultStore(out, COLUMNS, KEY)
        summary = run_tasks(tasks, run_topology, store, jobs=jobs, desc="maxflow",
                            progress=progress, executor=executor, prune=True)
        return summary, read_results(store.results_path)


def _demands_or_none(path: Path, spec: Optional[str]) -> Optional[Path]:
    """The demands file a task reads, ``None`` when none (or none found: the task says so)."""
    try:
        found = _demands_file(path, spec)
    except TpcStudyError:
        return None
    return found if found is not None and found.is_file() else None


# --------------------------------------------------------------------------- summary
def _ok(r: Mapping[str, Any]) -> bool:
    return (r.get("status") or "ok") == "ok"


def study_ks(rows: Sequence[Mapping[str, Any]]) -> List[int]:
    """The sr segment limits present in ``rows``."""
    return sorted({int(float(r["k"])) for r in rows
                   if r.get("model") == "sr" and cell_number(r.get("k")) is not None})


def default_k(rows: Sequence[Mapping[str, Any]]) -> Optional[int]:
    """The segment limit a summary headlines: 4 when present, else the largest."""
    ks = study_ks(rows)
    if not ks:
        return None
    return 4 if 4 in ks else max(ks)


def _series_model(name: str) -> Tuple[str, Optional[int], Optional[int]]:
    """``"sr+mptcp:8 k=4"`` -> ``("sr+mptcp", 4, 8)``; ``"multipath"`` -> ``("multipath", None, None)``."""
    model, _, k = name.partition(" k=")
    model, _, sub = model.partition(":")
    return model, (int(k) if k else None), (int(sub) if sub else None)


def improvement_draws(rows: Sequence[Mapping[str, Any]]
                      ) -> Dict[Tuple[str, float], Dict[str, List[float]]]:
    """Per topology, the improvement in % of each series at each heavy percent, one value per
    draw (seed).

    Returns ``{(series, heavy): {topology: [improvement per draw]}}`` with series ``multipath`` and
    ``mcf`` (over ecmp), ``sr k=<j>`` (sr with segment limit j over ecmp), ``sr k=<j>/multipath``
    (over multipath), and with subflow models ``mptcp:<K>`` (over ecmp), ``mptcp:<K>/multipath``
    (over multipath: 0 when K subflows reach it), ``mptcp:<K>/gain`` (the share in % of
    multipath's gain over ecmp that K subflows get, on draws where multipath gains),
    ``sr k=<j>/mptcp:<K>`` (sr over mptcp with K
    subflows) and ``sr+mptcp:<K> k=<j>`` (over ecmp), for every limit and K present. Rows that
    are not ``ok`` are left out. Accepts rows as read (strings) or loaded (numbers).
    """
    acc: Dict[Tuple[str, float], Dict[str, List[float]]] = {}

    def add(series: str, heavy: float, topo: str, value: Optional[float]) -> None:
        if value is not None:
            acc.setdefault((series, heavy), {}).setdefault(topo, []).append(value)

    # values of every draw, to compare models that have no improvement column against each other
    draws: Dict[Tuple[str, float, str], Dict[Tuple[str, str, str], float]] = {}
    for r in rows:
        heavy, v = cell_number(r.get("heavy")), cell_number(r.get("value"))
        if _ok(r) and heavy is not None and v is not None:
            key = (str(r.get("model")), _cell_text(r.get("k")), _cell_text(r.get("subflows")))
            draws.setdefault((str(r.get("topology")), heavy, str(r.get("seed"))), {})[key] = v
    for r in rows:
        heavy = cell_number(r.get("heavy"))
        if not _ok(r) or heavy is None:
            continue
        model, topo = r.get("model"), str(r.get("topology"))
        sub = _cell_text(r.get("subflows"))
        if model in ("multipath", "mcf"):
            add(str(model), heavy, topo, cell_number(r.get("improvement")))
        elif model == "sr" and cell_number(r.get("k")) is not None:
            k = int(float(r["k"]))
            add(f"sr k={k}", heavy, topo, cell_number(r.get("improvement")))
            add(f"sr k={k}/multipath", heavy, topo, cell_number(r.get("improvement_over_multipath")))
            values = draws.get((topo, heavy, str(r.get("seed"))), {})
            v = values.get(("sr", _cell_text(r.get("k")), ""))
            for (m, _, x), base in sorted(values.items()):
                if m == "mptcp" and v is not None and base > 0:
                    add(f"sr k={k}/mptcp:{x}", heavy, topo, 100.0 * (v - base) / base)
        elif model == "mptcp" and sub:
            add(f"mptcp:{sub}", heavy, topo, cell_number(r.get("improvement")))
            add(f"mptcp:{sub}/multipath", heavy, topo,
                cell_number(r.get("improvement_over_multipath")))
            values = draws.get((topo, heavy, str(r.get("seed"))), {})
            got, e, mp = (values.get(("mptcp", "", sub)), values.get(("ecmp", "1", "")),
                          values.get(("multipath", "", "")))
            if got is not None and e is not None and mp is not None and mp - e > 1e-9 * max(e, 1):
                add(f"mptcp:{sub}/gain", heavy, topo, 100.0 * (got - e) / (mp - e))
        elif model == "sr+mptcp" and sub and cell_number(r.get("k")) is not None:
            add(f"sr+mptcp:{sub} k={int(float(r['k']))}", heavy, topo,
                cell_number(r.get("improvement")))
    return acc


def improvement_table(rows: Sequence[Mapping[str, Any]]
                      ) -> Dict[Tuple[str, float], Dict[str, float]]:
    """Per topology, the improvement in % of each series at each heavy percent, seeds averaged:
    the means of :func:`improvement_draws` (``{(series, heavy): {topology: improvement}}``)."""
    return {key: {t: float(np.mean(v)) for t, v in per.items()}
            for key, per in improvement_draws(rows).items()}


def _cell_text(value: Any) -> str:
    """A key cell as text: numbers without a trailing ``.0`` (rows read back or fresh)."""
    x = cell_number(value)
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else str(x)


_MODEL_ORDER = {"multipath": 0, "mptcp": 1, "sr": 2, "sr+mptcp": 3, "mcf": 4}


def _series_order(series: str) -> Tuple[int, int, int, int, int]:
    name, _, over = series.partition("/")
    model, k, sub = _series_model(name)
    over_model, _, over_sub = _series_model(over) if over else ("", None, None)
    return (_MODEL_ORDER.get(model, 5), k or 0, sub or 0, 1 if over else 0,
            (over_sub or 0) + (1 if over_model == "mptcp" else 0) * 10_000)


#: How the summary aggregates draws: ``topology`` (each topology's mean over its draws first,
#: then quartiles over topologies: every topology weighs the same) or ``pooled`` (quartiles
#: over every (topology, draw) value: the paper's Figure 6).
AGGREGATES = ("topology", "pooled")
#: Bootstrap resamples of a median's noise interval, and its level.
RESAMPLES = 1000
LEVEL = 0.95


def _statistic(values: Sequence[np.ndarray], aggregate: str) -> np.ndarray:
    """The median over topologies of ``values`` (one ``(B, n_t)`` array of draws per
    topology, B resamples): per resample."""
    if aggregate == "pooled":
        return np.median(np.concatenate(values, axis=1), axis=1)
    return np.median(np.stack([v.mean(axis=1) for v in values], axis=1), axis=1)


def median_interval(per_topology: Mapping[str, Sequence[float]], aggregate: str = "topology", *,
                    seed: int = 0, resamples: int = RESAMPLES) -> Tuple[float, float]:
    """The draw noise of the median: a percentile bootstrap (level :data:`LEVEL`) that
    resamples each topology's draws with replacement (the topologies stay: they are the
    population, the draws the noise). ``(nan, nan)`` when no topology has two draws: with one
    seed the noise cannot be told, and a zero-width interval would say there is none. Seeded:
    the same input and ``seed`` give the same interval."""
    if aggregate not in AGGREGATES:
        raise UsageError(f"aggregate {aggregate!r}: choose {' or '.join(AGGREGATES)}")
    draws = [np.asarray(v, dtype=np.float64) for v in per_topology.values() if len(v)]
    if not draws or max(len(d) for d in draws) < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    boot = [d[rng.integers(0, len(d), size=(resamples, len(d)))] for d in draws]
    stat = _statistic(boot, aggregate)
    lo, hi = np.percentile(stat, [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)])
    return float(lo), float(hi)


def summarize(rows: Sequence[Mapping[str, Any]], *, aggregate: str = "topology",
              seed: int = 0, interval: bool = True) -> List[Dict[str, Any]]:
    """Median and quartiles of every series of :func:`improvement_draws`, per heavy percent,
    over topologies (``aggregate="topology"``: seeds averaged per topology first) or over
    every (topology, seed) value (``"pooled"``), with the median's draw-noise interval
    (:func:`median_interval`, seeded by ``seed``): dicts with ``heavy``, ``series``,
    ``model``, ``k`` (``None`` when not applicable), ``subflows`` (K of mptcp / sr+mptcp, else
    ``None``), ``over`` (``ecmp``, ``multipath`` or ``mptcp:K``), ``topologies``, ``values``
    (the number aggregated), ``aggregate``, ``q1``, ``median``, ``q3``, ``median_lo``,
    ``median_hi``."""
    if aggregate not in AGGREGATES:
        raise UsageError(f"aggregate {aggregate!r}: choose {' or '.join(AGGREGATES)}")
    out = []
    table = improvement_draws(rows)
    for (series, heavy) in sorted(table, key=lambda sh: (sh[1], _series_order(sh[0]))):
        per = table[(series, heavy)]
        vals = sorted(v for d in per.values() for v in d) if aggregate == "pooled" else \
            sorted(float(np.mean(d)) for d in per.values())
        q = np.percentile(vals, [25, 50, 75]) if vals else [math.nan] * 3
        lo, hi = median_interval(per, aggregate, seed=seed) if interval else (math.nan, math.nan)
        name, _, over = series.partition("/")
        model, k, sub = _series_model(name)
        out.append({"heavy": heavy, "series": series, "model": model, "k": k, "subflows": sub,
                    "over": over or "ecmp", "topologies": len(per), "values": len(vals),
                    "aggregate": aggregate, "q1": float(q[0]), "median": float(q[1]),
                    "q3": float(q[2]), "median_lo": lo, "median_hi": hi})
    return out


def subflows_to_reach(summary: Sequence[Mapping[str, Any]], share: float = 90.0, *,
                      of: str = "value") -> Dict[float, Optional[int]]:
    """Per heavy percent, the fewest subflows whose median mptcp reaches ``share`` % of
    multipath's value (``of="value"``) or of multipath's gain over ecmp (``of="gain"``);
    ``None`` when no K in the study does."""
    out: Dict[float, Optional[int]] = {}
    for s in summary:
        if s["model"] != "mptcp" or s["over"] != ("multipath" if of == "value" else "gain"):
            continue
        h = s["heavy"]
        out.setdefault(h, None)
        if (100.0 + s["median"] if of == "value" else s["median"]) >= share - 1e-9:
            best = out[h]
            out[h] = s["subflows"] if best is None else min(best, s["subflows"])
    return out


def paper_box(s: Mapping[str, Any]) -> Optional[Tuple[float, float, float]]:
    """The paper's Figure 6 box (Q1, median, Q3) for a :func:`summarize` entry; ``None``
    where the paper has none (it shows sr over ecmp and over multipath at 1 and 10 %)."""
    boxes = {"ecmp": paper.FIGURE6_OVER_ECMP,
             "multipath": paper.FIGURE6_OVER_MULTIPATH}.get(str(s["over"]), {})
    if s["model"] != "sr" or s["heavy"] not in boxes:
        return None
    return boxes[s["heavy"]]


def paper_median(s: Mapping[str, Any]) -> Tuple[Optional[float], bool]:
    """The paper's median for a :func:`summarize` entry and whether it is approximate (always
    exact now: read from the figure's vector paths); ``(None, False)`` where the paper has
    none."""
    box = paper_box(s)
    return (None, False) if box is None else (box[1], False)


def _paper_value(s: Mapping[str, Any]) -> str:
    box = paper_box(s)
    return "" if box is None else f"{box[1]:.1f} [{box[0]:.1f}, {box[2]:.1f}]"


def format_summary(summary: Sequence[Mapping[str, Any]], *, demands: bool = False) -> str:
    """:func:`summarize`'s output as the table the command line prints (``demands``: a
    demand-matrix study: no heavy share, no seeds, no paper)."""
    pooled = any(s.get("aggregate") == "pooled" for s in summary)
    noisy = any(not math.isnan(s.get("median_lo", math.nan)) for s in summary)
    if demands:
        lines = ["improvement in % over topologies (every pair of each demand matrix): median, "
                 "q1, q3"]
    else:
        lines = ["improvement in % " + ("(pooled over every topology and seed)" if pooled else
                                        "(over topologies; seeds averaged per topology)")
                 + ": median" + (", its draw-noise interval (95 %, bootstrap over each "
                                 "topology's seeds)" if noisy else
                                 " (one seed per topology: no noise interval)")
                 + ", q1, q3; the paper's median [q1, q3]"]
    lines.append(f"{'pairs' if demands else 'heavy':>6} {'model':>11} {'k':>3} {'over':>10} "
                 f"{'topos':>6} {'median':>8} " + (f"{'noise':>15} " if noisy else "")
                 + f"{'q1':>8} {'q3':>8}" + ("" if demands else "  paper"))
    for s in summary:
        k = "" if s["k"] is None else s["k"]
        model = s["model"] + ("" if s["subflows"] is None else f":{s['subflows']}")
        lo, hi = s.get("median_lo", math.nan), s.get("median_hi", math.nan)
        noise = f"[{lo:.1f}, {hi:.1f}]" if not (math.isnan(lo) or math.isnan(hi)) else ""
        heavy = "matrix" if demands else f"{s['heavy']:>5g}%"
        lines.append(f"{heavy:>6} {model:>11} {k:>3} {s['over']:>10} "
                     f"{s['topologies']:>6} {s['median']:>8.1f} "
                     + (f"{noise:>15} " if noisy else "")
                     + f"{s['q1']:>8.1f} {s['q3']:>8.1f}"
                     + ("" if demands else f"  {_paper_value(s)}"))
    for of, what in (("value", "multipath's value"), ("gain", "multipath's gain over ecmp")):
        for h, k in sorted(subflows_to_reach(summary, of=of).items()):
            ks = sorted({s["subflows"] for s in summary
                         if s["model"] == "mptcp" and s["heavy"] == h})
            lines.append(f"{h:g} %: fewest subflows for mptcp to reach 90 % of {what} in the "
                         f"median topology: " + (f"K = {k}" if k is not None else
                                                 f"none of K = {', '.join(map(str, ks))}"))
    if any(s["over"] == "gain" for s in summary):
        lines.append("over 'gain': the share in % of multipath's gain over ecmp that mptcp with K "
                     "subflows gets (draws where multipath gains)")
    if not demands:  # the paper's Figure 6 is a heavy-hitter study
        lines.append(paper.maxflow_note())
    return "\n".join(lines)


def summary_line(rows: Sequence[Mapping[str, Any]], *, k: Optional[int] = None,
                 aggregate: str = "topology") -> str:
    """The medians of sr (segment limit ``k``, default :func:`default_k`) over ecmp and over
    multipath per heavy percent, in one line, beside the paper's."""
    k = default_k(rows) if k is None else k
    med = {(s["series"], s["heavy"]): s["median"]
           for s in summarize(rows, aggregate=aggregate, interval=False)}
    cfg = getattr(rows, "config", {}) or {}
    demands = bool(cfg.get("demands"))  # the demand matrix's pairs: no heavy share, no paper
    parts = []
    for h in sorted({h for (_, h) in med}):
        ref = None if demands else paper.MAXFLOW_MEDIANS.get(h)
        over = [(name, med[(series, h)]) for name, series in
                (("sr/ecmp", f"sr k={k}"), ("sr/multipath", f"sr k={k}/multipath"))
                if (series, h) in med]
        text = ", ".join(f"{name} {v:.1f}" + (f" (paper: {ref:.0f})" if ref and
                                               name == "sr/ecmp" else "") for name, v in over)
        parts.append(f"{'demand matrix' if demands else f'{h:g} %'}: {text or 'no sr rows'}")
    return (f"median improvement (k = {k}{', pooled' if aggregate == 'pooled' else ''}): "
            + "; ".join(parts))

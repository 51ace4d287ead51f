"""The max-flow study (docs/method.md §4; Figure 6 of "The TCPPathChanger").

One task per topology: for every heavy-hitter percent and seed, the pairs are drawn
(:func:`tpcstudy.pairs.heavy_pairs`) and every model is solved on the pruned topology. Rows:
one per (topology, heavy, seed, model, k), with the improvement over ecmp (and, for sr, over
multipath) of the same draw. With demands (``demands``), the pairs are the demand matrix's,
each bounded by its demand, on the unpruned topology (its routers are the ones the file names).

:func:`summarize` is the one summary of the rows: the command line prints it
(:func:`format_summary`) and Figure 6 draws its per-topology table
(:func:`improvement_table`).
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import TpcStudyError, UsageError
from ..io import read_demands, read_topology, topology_files
from ..io.specs import Spec, spec_text
from ..lp import SOLVERS
from ..maxflow import MODELS, max_flow
from ..pairs import heavy_pairs
from ..rules import check_rules
from ..topology import prune
from . import paper
from .executors import TaskExecutor
from .provenance import write_meta
from .store import ResultStore, cell_number, read_results
from .tasks import RunSummary, Task, run_tasks

__all__ = ["COLUMNS", "KEY", "MaxflowConfig", "run_topology", "run_maxflow_study",
           "improvement_table", "summarize", "format_summary", "summary_line", "study_ks",
           "default_k"]

COLUMNS = [
    "topology", "heavy", "seed", "model", "k", "pairs", "value", "improvement",
    "improvement_over_multipath", "iterations", "columns", "gap", "seconds", "seconds_paths",
    "seconds_pricing", "seconds_lp", "nodes", "links", "edge_routers", "status", "error",
]
KEY = ["topology", "heavy", "seed", "model", "k"]
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
        Models to solve (``ecmp`` is always added first: the baseline of every improvement).
    ks
        Segment limits of ``sr``.
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
    models: Tuple[str, ...] = MODELS
    ks: Tuple[int, ...] = (4,)
    capacity: str = "uniform"
    weight: str = "hop"
    solver: str = "highs"
    demands: Optional[str] = None
    prune: bool = True
    time_limit: Optional[float] = None
    write_lp: Optional[str] = None

    def __post_init__(self) -> None:
        heavy = tuple(float(h) for h in self.heavy)
        if not heavy or any(not 0 < h <= 100 for h in heavy):
            raise UsageError(f"heavy: percentages must be in (0, 100], got {list(heavy)}")
        models = tuple(dict.fromkeys(self.models))
        for m in models:
            if m not in MODELS:
                raise UsageError(f"unknown model {m!r}; choose from {', '.join(MODELS)}")
        if "ecmp" not in models:
            models = ("ecmp",) + models  # the baseline every improvement is measured against
        ks = tuple(sorted(set(int(k) for k in self.ks)))
        if not ks or ks[0] < 1:
            raise UsageError(f"k: segment limits must be integers >= 1, got {list(self.ks)}")
        seeds = tuple(int(s) for s in self.seeds)
        if not seeds:
            raise UsageError("seeds: need at least one seed")
        if self.solver not in SOLVERS:
            raise UsageError(f"solver {self.solver!r}: choose from {', '.join(SOLVERS)}")
        check_rules(self.capacity, self.weight)
        demands = None if self.demands in (None, "", "none") else str(self.demands)
        for name, value in (("heavy", heavy), ("models", models), ("ks", ks), ("seeds", seeds),
                            ("demands", demands)):
            object.__setattr__(self, name, value)

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        """The config recorded in meta.json (everything that changes the results)."""
        return {"topo": topo_spec, "capacity": self.capacity, "weight": self.weight,
                "heavy": list(self.heavy), "models": list(self.models), "k": list(self.ks),
                "demands": self.demands, "prune": self.prune, "time_limit": self.time_limit,
                "pairs_rule": PAIRS_RULE}


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
             k: Any) -> Optional[str]:
    if not base:
        return None
    p = Path(base)
    suffix = p.suffix if p.suffix in (".lp", ".mps") else ".lp"
    stem = p.stem if p.suffix in (".lp", ".mps") else p.name
    return str(p.with_name(f"{stem}-{topo}-h{heavy:g}-s{seed}-{model}{k}{suffix}"))


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
        values: Dict[Tuple[str, Any], float] = {}
        draw_rows = []
        for model in config.models:
            for k in (config.ks if model == "sr" else [1 if model == "ecmp" else ""]):
                row = dict(base, heavy=heavy, seed=seed, model=model, k=k, pairs=len(pairs))
                if len(pairs) == 0:
                    row.update(status="skipped", error="fewer than 2 edge routers")
                    draw_rows.append(row)
                    continue
                t0 = time.perf_counter()
                try:
                    res = max_flow(topo, pairs, model=model, k=int(k) if k != "" else 4,
                                   solver=config.solver, demands=bounds,
                                   time_limit=config.time_limit,
                                   write_lp=_lp_file(config.write_lp, topo.name, heavy, seed,
                                                     model, k))
                except TpcStudyError as exc:
                    row.update(status="failed", error=str(exc), seconds=time.perf_counter() - t0)
                    draw_rows.append(row)
                    continue
                row.update(value=res.value, iterations=res.iterations, columns=res.columns,
                           gap=res.gap, seconds=round(time.perf_counter() - t0, 4),
                           seconds_paths=round(res.seconds["paths"], 4),
                           seconds_pricing=round(res.seconds["pricing"], 4),
                           seconds_lp=round(res.seconds["lp"], 4),
                           status="ok" if res.ok else "failed",
                           error="" if res.ok else f"{res.status}: {res.message}")
                if res.ok:
                    values[(model, k)] = res.value
                draw_rows.append(row)
        ecmp = values.get(("ecmp", 1))
        multi = values.get(("multipath", ""))
        for row in draw_rows:
            v = values.get((row["model"], row["k"]))
            if v is not None and ecmp:
                row["improvement"] = round(100.0 * (v - ecmp) / ecmp, 6)
            if v is not None and multi and row["model"] == "sr":
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
    if overwrite:  # a fresh study in an old folder: drop the old results first
        shutil.rmtree(out / "parts", ignore_errors=True)
        (out / "results.csv").unlink(missing_ok=True)
    write_meta(out, config.meta(spec_text(topo_spec)), kind="maxflow", seeds=list(config.seeds),
               solver=config.solver, overwrite=overwrite)
    # largest files first: the big topologies start early and the workers stay busy
    order = sorted(files, key=lambda p: (-p.stat().st_size, p.name))
    # absolute paths: Dask workers may run in another folder (or on another machine)
    tasks = [Task({"topology": p.stem, "file": p.name}, (str(p.absolute()), config))
             for p in order]
    store = ResultStore(out, COLUMNS, KEY)
    summary = run_tasks(tasks, run_topology, store, jobs=jobs, desc="maxflow", progress=progress,
                        executor=executor)
    return summary, read_results(store.results_path)


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


def improvement_table(rows: Sequence[Mapping[str, Any]]
                      ) -> Dict[Tuple[str, float], Dict[str, float]]:
    """Per topology, the improvement in % of each series at each heavy percent, seeds averaged.

    Returns ``{(series, heavy): {topology: improvement}}`` with series ``multipath`` and
    ``mcf`` (over ecmp), ``sr k=<j>`` (sr with segment limit j over ecmp) and
    ``sr k=<j>/multipath`` (over multipath), for every limit present. Rows that are not ``ok``
    are left out. Accepts rows as read (strings) or loaded (numbers).
    """
    acc: Dict[Tuple[str, float], Dict[str, List[float]]] = {}

    def add(series: str, heavy: float, topo: str, value: Optional[float]) -> None:
        if value is not None:
            acc.setdefault((series, heavy), {}).setdefault(topo, []).append(value)

    for r in rows:
        heavy = cell_number(r.get("heavy"))
        if not _ok(r) or heavy is None:
            continue
        model, topo = r.get("model"), str(r.get("topology"))
        if model in ("multipath", "mcf"):
            add(str(model), heavy, topo, cell_number(r.get("improvement")))
        elif model == "sr" and cell_number(r.get("k")) is not None:
            k = int(float(r["k"]))
            add(f"sr k={k}", heavy, topo, cell_number(r.get("improvement")))
            add(f"sr k={k}/multipath", heavy, topo, cell_number(r.get("improvement_over_multipath")))
    return {key: {t: float(np.mean(v)) for t, v in per.items()} for key, per in acc.items()}


def _series_order(series: str) -> Tuple[int, int, int]:
    model, _, over = series.partition("/")
    k = int(model.split("=")[1]) if model.startswith("sr k=") else 0
    return ({"multipath": 0, "mcf": 2}.get(model, 1), 1 if over else 0, k)


def summarize(rows: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Median and quartiles over topologies (seeds averaged per topology) of every series of
    :func:`improvement_table`, per heavy percent: dicts with ``heavy``, ``series``, ``model``,
    ``k`` (``None`` for multipath/mcf), ``over`` (``ecmp`` or ``multipath``), ``topologies``,
    ``q1``, ``median``, ``q3``."""
    out = []
    table = improvement_table(rows)
    for (series, heavy) in sorted(table, key=lambda sh: (sh[1], _series_order(sh[0]))):
        vals = sorted(table[(series, heavy)].values())
        q = np.percentile(vals, [25, 50, 75]) if vals else [math.nan] * 3
        name, _, over = series.partition("/")
        model, _, k = name.partition(" k=")
        out.append({"heavy": heavy, "series": series, "model": model,
                    "k": int(k) if k else None, "over": over or "ecmp",
                    "topologies": len(vals), "q1": float(q[0]), "median": float(q[1]),
                    "q3": float(q[2])})
    return out


def _paper_value(s: Mapping[str, Any]) -> str:
    if s["model"] != "sr" or s["heavy"] not in paper.MAXFLOW_MEDIANS:
        return ""
    base = paper.MAXFLOW_MEDIANS[s["heavy"]]
    return f"{base:.0f}" if s["over"] == "ecmp" else f"~{base - paper.MULTIPATH_GAP:.0f}"


def format_summary(summary: Sequence[Mapping[str, Any]]) -> str:
    """:func:`summarize`'s output as the table the command line prints."""
    lines = ["improvement in % (over topologies; seeds averaged): median [q1, q3]",
             f"{'heavy':>6} {'model':>10} {'k':>3} {'over':>10} {'topos':>6} {'median':>8}"
             f" {'q1':>8} {'q3':>8}  paper"]
    for s in summary:
        k = "" if s["k"] is None else s["k"]
        lines.append(f"{s['heavy']:>5g}% {s['model']:>10} {k:>3} {s['over']:>10} "
                     f"{s['topologies']:>6} {s['median']:>8.1f} {s['q1']:>8.1f} {s['q3']:>8.1f}"
                     f"  {_paper_value(s)}")
    lines.append(paper.maxflow_note())
    return "\n".join(lines)


def summary_line(rows: Sequence[Mapping[str, Any]], *, k: Optional[int] = None) -> str:
    """The medians of sr (segment limit ``k``, default :func:`default_k`) over ecmp and over
    multipath per heavy percent, in one line, beside the paper's."""
    k = default_k(rows) if k is None else k
    med = {(s["series"], s["heavy"]): s["median"] for s in summarize(rows)}
    parts = []
    for h in sorted({h for (_, h) in med}):
        ref = paper.MAXFLOW_MEDIANS.get(h)
        parts.append(f"{h:g} %: sr/ecmp {med.get((f'sr k={k}', h), math.nan):.1f}"
                     + (f" (paper: {ref:.0f})" if ref else "")
                     + f", sr/multipath {med.get((f'sr k={k}/multipath', h), math.nan):.1f}")
    return f"median improvement (k = {k}): " + "; ".join(parts)

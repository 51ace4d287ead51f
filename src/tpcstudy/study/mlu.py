"""The traffic-engineering study (``tpcstudy maxflow --objective mlu``; docs/method.md §4b): the
minimum maximum link utilisation (MLU) that carries a whole demand matrix, per topology and
model, as REPETITA and CG4SR measure it.

One task per topology: its demand matrix (:func:`demand_matrix`: REPETITA's ``.demands`` file,
or a ``gravity`` or ``uniform`` matrix drawn for a Zoo topology, seeded) and, per model
(:data:`MLU_STUDY_MODELS`), :func:`tpcstudy.models.mlu.min_mlu` (``sr`` once per segment limit k,
``sr-unsplit`` from that k's ``sr`` solution). Rows: the MLU, ``lambda = 1 / MLU`` (the factor the
matrix can grow by), the reduction of the MLU over plain ECMP's in percent, and for
``sr-unsplit`` the LP's MLU it is measured against (``lp_mlu``) and its gap to it.

Generated matrices are scaled so that plain ECMP's MLU is exactly 1 (the MLU of every model then
reads as a share of ECMP's); REPETITA's files are used as they are (REPETITA scales them so
that the multicommodity optimum is 0.9). The topology is not pruned (every router of a demand
matrix is a router of the file); ``--links`` says how parallel links are read (``multigraph``:
REPETITA's own ECMP, per link).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import TpcStudyError, UsageError
from ..io import read_topology
from ..io.bounded import MAX_TEXT_BYTES, check_input_file
from ..io.specs import Spec
from ..lp import SOLVERS
from ..models.demands import GENERATED, demand_matrix, demands_file, matrix_rule
from ..models.mlu import min_mlu
from ..models.unsplit import sr_unsplit
from ..paths import segment_limit
from ..rules import check_links, check_rules
from .executors import TaskExecutor
from .kinds import KINDS
from .runner import run_demand_study
from .store import cell_number
from .tasks import RunSummary, Task

__all__ = ["MLU_STUDY_MODELS", "GENERATED", "COLUMNS", "KEY", "MLUConfig", "demand_matrix",
           "run_topology", "resolved", "run_mlu_study", "summarize", "format_summary", "summary_line"]

#: The models of the study (``ecmp`` is always solved: the baseline of every reduction).
MLU_STUDY_MODELS = ("ecmp", "multipath", "sr", "sr-unsplit", "mcf")
COLUMNS = list(KINDS["mlu"].columns)
KEY = list(KINDS["mlu"].key)


@dataclasses.dataclass(frozen=True)
class MLUConfig:
    """Settings of one run (picklable: it travels to worker processes).

    Parameters
    ----------
    models
        From :data:`MLU_STUDY_MODELS` (``ecmp`` added first; ``sr-unsplit`` brings ``sr``).
    ks
        Segment limits of ``sr`` and ``sr-unsplit``.
    demands
        ``auto`` (the ``NAME.*.demands`` next to each REPETITA ``NAME.graph``: ``NAME.0000``
        when there, else the first by name; a topology of another format, e.g. a Zoo
        ``.gml``, which brings no matrix: a ``gravity`` matrix), a ``.demands`` file (one
        topology), ``gravity`` or ``uniform`` (drawn per topology and seed).
    seeds
        Draws of a generated matrix (one row set each) and the seeds of ``sr-unsplit``'s
        search; a file's matrix is used once, with the first seed given.
    capacity, weight, links, solver
        As the max-flow study; capacity and weight ``auto``: ``file`` for a topology carrying
        a file's matrix (the matrix's units), else ``uniform`` and ``hop``.
    """

    models: Tuple[str, ...] = ("ecmp", "sr", "mcf")
    ks: Tuple[int, ...] = (2, 4)
    demands: str = "auto"
    seeds: Tuple[int, ...] = (0,)
    capacity: str = "file"
    weight: str = "file"
    links: str = "merged"
    solver: str = "highs"

    def __post_init__(self) -> None:
        models = tuple(dict.fromkeys(str(m).strip() for m in self.models))
        bad = [m for m in models if m not in MLU_STUDY_MODELS]
        if bad:
            raise UsageError(f"--objective mlu: model {bad[0]!r}; choose from "
                             f"{', '.join(MLU_STUDY_MODELS)}")
        if "sr-unsplit" in models and "sr" not in models:
            models += ("sr",)
        models = tuple(m for m in MLU_STUDY_MODELS if m in models or m == "ecmp")
        ks = tuple(sorted({segment_limit(int(k)) for k in self.ks}))
        if not ks:
            raise UsageError("k: need at least one segment limit")
        seeds = tuple(dict.fromkeys(int(s) for s in self.seeds))
        if not seeds or min(seeds) < 0:
            raise UsageError("seeds: need integers >= 0")
        if not self.demands:
            raise UsageError("--objective mlu needs a demand matrix: --demands auto (REPETITA), "
                             "FILE, gravity or uniform")
        if self.solver not in SOLVERS:
            raise UsageError(f"solver {self.solver!r}: choose from {', '.join(SOLVERS)}")
        check_rules("uniform" if self.capacity == "auto" else self.capacity,
                    "hop" if self.weight == "auto" else self.weight)
        check_links(self.links)
        if self.demands not in GENERATED + ("auto",):
            seeds = seeds[:1]
            if self.demands != "auto" and not Path(self.demands).exists():
                raise UsageError(f"--demands {self.demands}: no such file (a REPETITA .demands "
                                 "file, auto, gravity or uniform)")
            if self.demands != "auto":  # a FIFO or a device: said so, before any task
                check_input_file(self.demands, what="demand", limit=MAX_TEXT_BYTES)
        for name, value in (("models", models), ("ks", ks), ("seeds", seeds)):
            object.__setattr__(self, name, value)

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        return {"topo": topo_spec, "objective": "mlu", "models": list(self.models),
                "k": list(self.ks), "demands": self.demands, "seeds": list(self.seeds),
                "capacity": self.capacity, "weight": self.weight, "links": self.links,
                "matrix_rule": matrix_rule(self.demands) if self.demands != "auto" else
                f"auto: per REPETITA .graph, {matrix_rule('file')}; per topology of another "
                f"format (no matrix of its own), {matrix_rule('gravity')}"}


def _demands_file(path: Path, spec: str) -> Optional[Path]:
    if spec == "auto" and path.suffix.lower() != ".graph":  # a Zoo file: none of its own
        return None  # (gravity)
    return demands_file(spec, path)


def resolved(path: Path, config: "MLUConfig") -> Tuple[str, Optional[Path], str, str]:
    """``(matrix spec, matrix file, capacity, weight)`` of one topology: ``--demands auto``
    is the file's own matrix, or ``gravity`` for a topology that brings none; capacity and
    weight ``auto`` are ``file`` with a file's matrix, else ``uniform`` and ``hop``."""
    dfile = _demands_file(path, config.demands)
    spec = config.demands
    if spec == "auto" and dfile is None:
        spec = "gravity"
    filed = dfile is not None
    capacity = ("file" if filed else "uniform") if config.capacity == "auto" else config.capacity
    weight = ("file" if filed else "hop") if config.weight == "auto" else config.weight
    return spec, dfile, capacity, weight


# --------------------------------------------------------------------------- one topology
def run_topology(task: Task) -> List[Dict[str, Any]]:
    """The rows of one topology (``task.args``: ``(path, MLUConfig)``)."""
    path_text, config = task.args
    path = Path(path_text)
    spec, dfile, capacity, weight = resolved(path, config)
    topo = read_topology(path, capacity=capacity, weight=weight, links=config.links)
    base = {"topology": topo.name, "nodes": topo.num_nodes, "links": topo.num_links,
            "matrix": spec if dfile is None else dfile.name}
    rows: List[Dict[str, Any]] = []
    for seed in (config.seeds if spec in GENERATED else config.seeds[:1]):
        S, T, V = demand_matrix(topo, spec, seed, path=dfile)
        dem = list(zip(S.tolist(), T.tolist(), V.tolist()))
        common = dict(base, seed=seed, demands=len(S), volume=round(float(V.sum()), 9))
        got: Dict[Tuple[str, Any], Any] = {}
        draw: List[Dict[str, Any]] = []
        for model in config.models:
            for k in (config.ks if model in ("sr", "sr-unsplit") else [""]):
                row = dict(common, model=model, k=k)
                t0 = time.perf_counter()
                try:
                    if model == "sr-unsplit":
                        lp = got.get(("sr", k))
                        if lp is None:
                            raise UsageError(f"sr k = {k} failed: nothing to round")
                        prev = [got[("sr-unsplit", j)] for j in config.ks
                                if j < k and ("sr-unsplit", j) in got]
                        res = sr_unsplit(topo, lp, seed=seed, start=prev[-1] if prev else None)
                        row.update(lp_mlu=lp.mlu, bound=res.bound,
                                   gap=res.mlu / lp.mlu - 1.0
                                   if lp.mlu > 0 and math.isfinite(lp.mlu) else math.nan,
                                   gap_bound=res.mlu / res.bound - 1.0
                                   if res.bound > 0 and math.isfinite(res.bound) else math.nan)
                    else:
                        res = min_mlu(topo, dem, model=model, k=int(k) if k != "" else 4,
                                      solver=config.solver)
                except TpcStudyError as exc:
                    row.update(status="failed", error=str(exc),
                               seconds=round(time.perf_counter() - t0, 4))
                    draw.append(row)
                    continue
                got[(model, k)] = res
                row.update(mlu=res.mlu, **{"lambda": res.lam}, columns=res.columns,
                           iterations=res.iterations,
                           seconds=round(time.perf_counter() - t0, 4), status="ok", error="")
                draw.append(row)
        ecmp = got.get(("ecmp", ""))
        for row in draw:
            if ecmp is not None and row.get("status") == "ok" and ecmp.mlu > 0 \
                    and math.isfinite(ecmp.mlu) and math.isfinite(row["mlu"]):
                row["reduction"] = round(100.0 * (1.0 - row["mlu"] / ecmp.mlu), 9)
        rows.extend(draw)
    return rows


# --------------------------------------------------------------------------- the study
def run_mlu_study(topo_spec: Spec, out_dir: Union[str, Path], config: MLUConfig, *,
                  jobs: int = 1, progress: Union[bool, str] = True,
                  executor: Optional[TaskExecutor] = None, overwrite: bool = False
                  ) -> Tuple[RunSummary, List[Dict[str, str]]]:
    """Run (or resume) the study over every topology ``topo_spec`` names (as
    :func:`tpcstudy.study.maxflow.run_maxflow_study`)."""
    return run_demand_study(topo_spec, out_dir, "mlu", config, run_topology, drawn=GENERATED,
                            jobs=jobs, progress=progress, executor=executor, overwrite=overwrite)


# --------------------------------------------------------------------------- the summary
def _series(r: Dict[str, Any]) -> str:
    k = cell_number(r.get("k"))
    return f"{r['model']} k={int(k)}" if k is not None else str(r["model"])


def _gap(r: Dict[str, Any], col: str) -> float:
    v = cell_number(r.get(col))
    return -1.0 if v is None else float(v)


def summarize(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Per model (and k): over the (topology, seed) draws, the MLU's and the reduction's median
    and quartiles, how often it reaches mcf's MLU (within 1e-6), and for ``sr-unsplit`` its
    gap to the LP (median and worst)."""
    ok = [r for r in rows if (r.get("status") or "ok") == "ok" and cell_number(r.get("mlu"))
          is not None]
    mcf = {(r["topology"], str(r["seed"])): float(r["mlu"]) for r in ok if r["model"] == "mcf"}
    out = []
    order = sorted(dict.fromkeys(_series(r) for r in ok), key=lambda x: (
        MLU_STUDY_MODELS.index(x.split(" ")[0]) if x.split(" ")[0] in MLU_STUDY_MODELS else 99, x))
    for series in order:
        sel = [r for r in ok if _series(r) == series]
        mlu = [float(r["mlu"]) for r in sel if math.isfinite(float(r["mlu"]))]
        red = [float(r["reduction"]) for r in sel if cell_number(r.get("reduction")) is not None]
        s: Dict[str, Any] = {"series": series, "draws": len(sel), "topologies":
                             len({r["topology"] for r in sel})}
        for name, vals in (("mlu", mlu), ("reduction", red)):
            if vals:
                q = np.percentile(vals, [25, 50, 75])
                s.update({f"{name}_q1": float(q[0]), f"{name}_median": float(q[1]),
                          f"{name}_q3": float(q[2])})
        reach = [abs(float(r["mlu"]) - mcf[(r["topology"], str(r["seed"]))])
                 <= 1e-6 * max(1.0, mcf[(r["topology"], str(r["seed"]))])
                 for r in sel if (r["topology"], str(r["seed"])) in mcf]
        if reach and not series.startswith("mcf"):
            s["reaches_mcf"] = sum(reach)
        for col in ("gap", "gap_bound"):
            gaps = [float(r[col]) for r in sel if cell_number(r.get(col)) is not None]
            if gaps:
                worst = max(sel, key=lambda r: _gap(r, col))
                s.update({f"{col}_median": statistics.median(gaps), f"{col}_worst": max(gaps),
                          f"{col}_worst_topology": worst["topology"],
                          f"{col}_over_1pct": sum(g > 0.01 for g in gaps)})
        out.append(s)
    return out


def _mlu_text(v: float) -> str:
    """An MLU with four decimals, or four significant digits where those would read 0.0000
    (an MLU is per unit of capacity: demands in another unit make it tiny or huge)."""
    return f"{v:.4f}" if v == 0 or 1e-3 <= abs(v) < 1e5 or not math.isfinite(v) else f"{v:.4g}"


def format_summary(summary: Sequence[Dict[str, Any]]) -> str:
    """The table the command prints."""
    lines = [f"{'model':>14} {'draws':>5} {'MLU q1 / median / q3':>24} "
             f"{'reduction over ecmp % (median)':>30} {'= mcf':>6}"]
    for s in summary:
        mlu = (" / ".join(_mlu_text(s[c]) for c in ("mlu_q1", "mlu_median", "mlu_q3"))
               if "mlu_median" in s else "-")
        red = (f"{s['reduction_q1']:.1f} / {s['reduction_median']:.1f} / {s['reduction_q3']:.1f}"
               if "reduction_median" in s and not s["series"].startswith("ecmp") else "")
        reach = f"{s['reaches_mcf']}/{s['draws']}" if "reaches_mcf" in s else ""
        lines.append(f"{s['series']:>14} {s['draws']:>5} {mlu:>24} {red:>30} {reach:>6}")
        if "gap_median" in s:
            lines.append(f"{'':>14} gap to the LP's MLU: median {100 * s['gap_median']:.2f} %, "
                         f"worst {100 * s['gap_worst']:.2f} % ({s['gap_worst_topology']}), over "
                         f"1 % on {s['gap_over_1pct']}")
        if "gap_bound_median" in s:
            lines.append(f"{'':>14} gap to the unsplit bound (the LP's MLU or a demand alone on "
                         f"its best path): median {100 * s['gap_bound_median']:.2f} %, worst "
                         f"{100 * s['gap_bound_worst']:.2f} % ({s['gap_bound_worst_topology']}), "
                         f"over 1 % on {s['gap_bound_over_1pct']}")
    lines.append("MLU: maximum link utilisation of the best routing of the whole matrix "
                 "(lambda = 1 / MLU); reduction = 1 - MLU / ecmp's MLU, q1 / median / q3 over "
                 "the draws")
    return "\n".join(lines)


def summary_line(rows: Sequence[Dict[str, Any]]) -> str:
    """One line: each model's median MLU reduction over ECMP."""
    parts = [f"{s['series']}: median MLU {_mlu_text(s['mlu_median'])}"
             + (f" ({s['reduction_median']:.1f} % below ecmp)" if "reduction_median" in s
                and not s["series"].startswith("ecmp") else "")
             for s in summarize(list(rows)) if "mlu_median" in s]
    return "; ".join(parts)

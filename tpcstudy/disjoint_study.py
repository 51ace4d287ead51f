"""The disjoint-path study, ``tpcstudy disjoint`` (study-method.md §5, Figure 7 of seed 000).

How many link-disjoint paths can a host be given, and what does a segment budget cost? For every
topology of a collection (pruned, study-method.md §2) and every ordered pair of distinct edge
routers (or of all routers, ``pairs="all"``), count the link-disjoint paths found by ``max``,
``greedy`` and ``sps`` with each segment limit ``k``, and report their mean, min and max per
topology.

A **failure view** answers what an operator of the TPC agent asks: per pair, the exported path
set is slot 0 = the plain IGP shortest path (it occupies the links of its ECMP DAG), then the
``sps`` paths with ``k = 4`` (their occupied links = the union of their segments' DAG links),
without duplicates (same waypoint sequence), at most 5 paths. The pair *survives* every single
link failure when no link is used by all paths of its set (i.e. the intersection of their link
sets is empty); the default and first backup *overlap* when slot 0 and slot 1 share a link (zero
by construction: the first ``sps`` path is the direct segment, i.e. slot 0, and the next one is
disjoint from it).

Results, one row per (topology, method, k) in ``results.csv`` (see :data:`COLUMNS`):

- ``method`` ``max`` / ``greedy`` (``k`` empty), ``sps`` (one row per ``k``): ``pairs``,
  ``mean_paths``, ``min_paths``, ``max_paths``.
- ``method`` ``failure`` (``k = 4``): ``mean/min/max_paths`` = size of the exported set,
  ``survive_share``, ``overlap_share``, ``backup_share`` (pairs with at least two paths).
- Topologies with fewer than two routers of the chosen kind after pruning (the 28 Zoo trees
  prune to nothing; 10 more have fewer than two edge routers) are kept as **one row with
  ``status = "skipped"``**, empty ``method``, and the reason in ``error``.

``seconds`` is the compute time of that row's method; the ``sps`` rows share the time of the
whole sweep over ``k`` equally (the shortcut below makes one ``k`` depend on another); the
``failure`` row times building the failure view from the ``sps`` k = 4 paths.

**Exact shortcut for sps.** For a pair with ``min(deg s, deg t) <= 2`` (every edge-router pair)
at most two disjoint paths exist, and the first ``sps`` path is the direct segment for every
``k`` (the cheapest sr-path, ties to fewer segments). So ``count(k) = 2`` implies
``count(k + 1) = 2``, and ``count(k + 1) <= 1`` implies ``count(k) = count(k + 1)``. Counts known
this way are not recomputed (the sweep is then mostly the ``k = 4`` run that the failure view
needs anyway). The tests check the shortcut against the plain computation on Zoo topologies;
``--paths-out`` always computes every ``k`` in full (its paths, not only counts, are written).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, IO, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .errors import UsageError
from .io import atomic_open
from .pairs import router_pairs, sample_indices
from .paths import DEFAULT_K, DEFAULT_PATHS, DisjointPathBatch, disjoint_paths_batch
from .runner import STATUS, ERROR, ResultStore, Task, read_results, run_tasks, write_meta
from .topology import Topology, prune

__all__ = ["COLUMNS", "KEY", "FAILURE_K", "FAILURE_MAX_PATHS", "SEED_FIGURES", "DisjointConfig",
           "parse_k_list", "sps_counts", "failure_view", "topology_rows",
           "disjoint_task", "make_tasks", "run_disjoint_study", "read_results", "summarize", "format_summary",
           "register_cli"]

COLUMNS = ["topology", "method", "k", "nodes", "links", "edge_routers", "pairs", "mean_paths",
           "min_paths", "max_paths", "survive_share", "overlap_share", "backup_share", "seconds",
           STATUS, ERROR]
KEY = ["topology", "method", "k"]

#: The failure view judges the path sets the export writes: sps with this segment limit ...
FAILURE_K = DEFAULT_K
#: ... and at most this many paths per pair, slot 0 (the IGP shortest path) included.
FAILURE_MAX_PATHS = DEFAULT_PATHS
OK, SKIPPED = "ok", "skipped"

#: Seed 000's figures (section 5 of study-method.md), printed beside ours; never tuned to.
PAPER_GREEDY_REACHES_MAX = 70.0  # % of topologies (seed 000 §3.4)
SEED_FIGURES = {
    "greedy_reaches_max": f"{PAPER_GREEDY_REACHES_MAX:g} %",
    "sps": {1: "1 path", 4: "nearly saturates", 5: "adds little", 6: "adds little"},
}


# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class DisjointConfig:
    """Settings of one study run (picklable: it travels to worker processes)."""

    ks: Tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    pairs: str = "edge"
    capacity: str = "uniform"
    weight: str = "hop"
    threads: int = 1
    paths_dir: Optional[str] = None
    max_pairs: Optional[int] = None
    seed: int = 0

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        """The config recorded in meta.json (everything that changes the results)."""
        return {
            "study": "disjoint",
            "topo": topo_spec,
            "capacity_rule": self.capacity,
            "weight_rule": self.weight,
            "pruning": "2-core, then the largest connected component (study-method.md §2)",
            "pairs": self.pairs,
            "pairs_rule": ("ordered pairs of distinct edge routers (degree 2 after pruning)"
                           if self.pairs == "edge" else "ordered pairs of distinct routers"),
            "k": list(self.ks),
            "max_pairs": self.max_pairs,
            "seed": self.seed,
            "sampling": ("all pairs" if self.max_pairs is None else
                         f"topologies with more than {self.max_pairs} pairs: a uniform sample of "
                         f"{self.max_pairs} (numpy default_rng(seed).choice, sorted)"),
            "methods": ["max", "greedy", "sps"],
            "link_disjoint": "undirected links; sps occupies the union of its segments' ECMP DAGs",
            "failure_view": {"slot0": "IGP shortest path, links of its ECMP DAG",
                             "backups": f"sps k={FAILURE_K}", "max_paths": FAILURE_MAX_PATHS,
                             "duplicates": "same waypoint sequence (slot 0: none) dropped"},
            "skipped": "topologies with < 2 routers of the chosen kind: one row, status=skipped",
        }


def parse_k_list(text: str) -> Tuple[int, ...]:
    """``"1-6"``, ``"1,2,4"`` or ``"1-3,6"`` -> sorted distinct segment limits (each >= 1)."""
    out = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if lo > hi:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise UsageError(f"--k {text!r}: expected a list like 1-6 or 1,2,4") from None
    if not out or min(out) < 1:
        raise UsageError(f"--k {text!r}: segment limits must be integers >= 1")
    return tuple(sorted(out))


# --------------------------------------------------------------------------- computation
def sps_counts(topo: Topology, sources: np.ndarray, targets: np.ndarray, ks: Iterable[int], *,
               full: Iterable[int] = (), exact: bool = False,
               threads: int = 1) -> Tuple[Dict[int, np.ndarray], Dict[int, DisjointPathBatch]]:
    """Number of sps paths of every pair for every ``k``, with the exact shortcut of the module
    docstring.

    Parameters
    ----------
    topo, sources, targets
        The topology and the pairs (router ids).
    ks
        Segment limits.
    full
        Limits computed in full for every pair first (their batches are returned).
    exact
        Compute every limit in full (no shortcut; every batch returned).
    threads
        Core threads.

    Returns
    -------
    counts : dict
        ``k -> int32 counts`` per pair.
    batches : dict
        ``k -> DisjointPathBatch`` for the limits computed in full.
    """
    ks = sorted(set(int(k) for k in ks))
    first = sorted(set(int(k) for k in full) | (set(ks) if exact else set()))
    deg = topo.degree
    small = np.minimum(deg[sources], deg[targets]) <= 2  # at most two disjoint paths
    counts: Dict[int, np.ndarray] = {}
    batches: Dict[int, DisjointPathBatch] = {}
    for k in first:
        b = disjoint_paths_batch(topo, sources, targets, method="sps", k=k, threads=threads)
        batches[k], counts[k] = b, b.counts
    for k in ks:
        if k in counts:
            continue
        value = np.full(len(sources), -1, dtype=np.int32)
        lower = [j for j in counts if j < k]
        upper = sorted(j for j in counts if j > k)
        for j in lower:  # count(j) = 2 for some j < k -> count(k) = 2
            value[small & (counts[j] >= 2)] = 2
        for j in reversed(upper):  # nearest j > k last: count(j) <= 1 -> count(k) = count(j)
            hit = small & (counts[j] <= 1)
            value[hit] = counts[j][hit]
        todo = np.flatnonzero(value < 0)
        if todo.size:
            value[todo] = disjoint_paths_batch(topo, sources[todo], targets[todo], method="sps",
                                               k=k, threads=threads).counts
        counts[k] = value
    return {k: counts[k] for k in ks}, batches


@dataclass
class FailureView:
    """The exported path set of each pair and what a single link failure does to it."""

    sizes: np.ndarray      # int32: paths in the exported set
    survive: np.ndarray    # bool: some path avoids every single failed link
    overlap: np.ndarray    # bool: slot 0 and slot 1 share a link
    backup: np.ndarray     # bool: the set has at least two paths
    sets: List[List[Tuple[Tuple[int, ...], frozenset]]] = field(default_factory=list)


def failure_view(sps: DisjointPathBatch, *, max_paths: int = FAILURE_MAX_PATHS,
                 keep_sets: bool = False) -> FailureView:
    """Build each pair's exported path set and test it against every single link failure.

    The set is :meth:`DisjointPathBatch.exported`, as in the TPC path tables: slot 0 is the
    plain IGP shortest path (the direct segment, occupying its whole ECMP DAG), then the pair's
    other ``sps`` paths in the order found, at most ``max_paths`` in all.

    Parameters
    ----------
    sps
        The ``sps`` paths of the pairs (normally ``k = 4``).
    max_paths
        Paths per pair, slot 0 included.
    keep_sets
        Keep each pair's set as ``(waypoints, links)`` tuples in ``FailureView.sets`` (tests).
    """
    n = len(sps)
    sizes = np.zeros(n, dtype=np.int32)
    survive = np.zeros(n, dtype=bool)
    overlap = np.zeros(n, dtype=bool)
    wo, lo = sps.waypoint_offsets, sps.link_offsets
    wps, links = sps.waypoints, sps.links
    sets: List[List[Tuple[Tuple[int, ...], frozenset]]] = []
    for i in range(n):
        chosen = [(tuple(wps[wo[p]:wo[p + 1]].tolist()), frozenset(links[lo[p]:lo[p + 1]].tolist()))
                  for p in sps.exported(i, max_paths)]
        sizes[i] = len(chosen)
        if chosen:
            survive[i] = not frozenset.intersection(*(c[1] for c in chosen))
        if len(chosen) >= 2:
            overlap[i] = bool(chosen[0][1] & chosen[1][1])
        if keep_sets:
            sets.append(chosen)
    return FailureView(sizes, survive, overlap, sizes >= 2, sets)


def _stats(counts: np.ndarray) -> Dict[str, Any]:
    if counts.size == 0:
        return {"mean_paths": math.nan, "min_paths": None, "max_paths": None}
    return {"mean_paths": float(counts.mean()), "min_paths": int(counts.min()),
            "max_paths": int(counts.max())}


def _share(mask: np.ndarray) -> float:
    return float(mask.mean()) if mask.size else math.nan


def topology_rows(topo: Topology, config: DisjointConfig = DisjointConfig(), *,
                  paths_out: Optional[IO[str]] = None, name: Optional[str] = None
                  ) -> List[Dict[str, Any]]:
    """The result rows of one (already pruned) topology.

    Parameters
    ----------
    topo
        A pruned topology.
    config
        Segment limits, pairs mode, core threads.
    paths_out
        A text stream receiving every pair's paths as JSON lines (every ``k`` is then computed
        in full).
    name
        The ``topology`` value of the rows (default ``topo.name``).
    """
    name = name or topo.name
    s, t = router_pairs(topo, config.pairs)
    if config.max_pairs is not None and len(s) > config.max_pairs:
        pick = sample_indices(len(s), config.max_pairs, config.seed)
        s, t = s[pick], t[pick]
    base = {"topology": name, "nodes": topo.num_nodes, "links": topo.num_links,
            "edge_routers": len(topo.edge_router_ids), "pairs": len(s), STATUS: OK}
    kind = "edge routers" if config.pairs == "edge" else "routers"
    n_kind = base["edge_routers"] if config.pairs == "edge" else topo.num_nodes
    if n_kind < 2:
        return [{**base, "method": "", "k": None, STATUS: SKIPPED,
                 ERROR: f"{n_kind} {kind} after pruning (< 2)"}]
    rows: List[Dict[str, Any]] = []
    th = config.threads
    for method in ("max", "greedy"):
        t0 = time.perf_counter()
        b = disjoint_paths_batch(topo, s, t, method=method, threads=th)
        rows.append({**base, "method": method, "k": None, **_stats(b.counts),
                     "seconds": time.perf_counter() - t0})
        if paths_out is not None:
            _write_paths(paths_out, topo, name, b)
    t0 = time.perf_counter()
    counts, batches = sps_counts(topo, s, t, config.ks, full=(FAILURE_K,),
                                 exact=paths_out is not None, threads=th)
    sps_seconds = time.perf_counter() - t0
    for k in config.ks:
        rows.append({**base, "method": "sps", "k": k, **_stats(counts[k]),
                     "seconds": sps_seconds / len(config.ks)})
        if paths_out is not None:
            _write_paths(paths_out, topo, name, batches[k])
    t0 = time.perf_counter()
    view = failure_view(batches[FAILURE_K])
    rows.append({**base, "method": "failure", "k": FAILURE_K, **_stats(view.sizes),
                 "survive_share": _share(view.survive), "overlap_share": _share(view.overlap),
                 "backup_share": _share(view.backup), "seconds": time.perf_counter() - t0})
    return rows


def _write_paths(out: IO[str], topo: Topology, name: str, b: DisjointPathBatch) -> None:
    names = topo.names
    nodes, no = b.nodes.tolist(), b.node_offsets.tolist()
    wps, wo = b.waypoints.tolist(), b.waypoint_offsets.tolist()
    po = b.pair_offsets.tolist()
    for i, (a, c) in enumerate(zip(b.sources.tolist(), b.targets.tolist())):
        rec: Dict[str, Any] = {"topology": name, "method": b.method, "k": b.k,
                               "source": names[a], "target": names[c],
                               "paths": [[names[x] for x in nodes[no[p]:no[p + 1]]]
                                         for p in range(po[i], po[i + 1])]}
        if b.method == "sps":
            rec["waypoints"] = [[names[x] for x in wps[wo[p]:wo[p + 1]]]
                                for p in range(po[i], po[i + 1])]
        out.write(json.dumps(rec, separators=(",", ":")) + "\n")


# --------------------------------------------------------------------------- tasks
def _topology_name(path: Path) -> str:
    return path.stem


def disjoint_task(task: Task) -> List[Dict[str, Any]]:
    """Run one topology (module level: ``jobs > 1`` spawns processes that import it).

    ``task.args`` is ``(path, DisjointConfig)``. With ``config.paths_dir`` set, the topology's
    paths are written first to ``paths_dir/<task id>.jsonl`` (atomically), then the rows are
    returned, so a stored task always has its paths file.
    """
    from .io import read_topology

    path, config = task.args
    name = task.key["topology"]
    topo = prune(read_topology(path, capacity=config.capacity, weight=config.weight))
    if config.paths_dir is None:
        return topology_rows(topo, config, name=name)
    target = Path(config.paths_dir) / f"{task.id}.jsonl"
    with atomic_open(target, "w", encoding="utf-8") as fh:
        return topology_rows(topo, config, paths_out=fh, name=name)


def make_tasks(files: Sequence[Path], config: DisjointConfig) -> List[Task]:
    """One task per topology file, largest file first (load balance: the big ones start early)."""
    order = sorted(files, key=lambda p: (-Path(p).stat().st_size, str(p)))
    # absolute paths: Dask workers may run in another folder (or on another machine)
    return [Task({"topology": _topology_name(Path(p))}, (str(Path(p).absolute()), config))
            for p in order]


def _concat_paths(parts: Sequence[Path], target: Path) -> None:
    """Join the per-topology path files into ``target`` atomically (gzip when it ends .gz)."""
    with atomic_open(target, "wb") as raw:
        out: Any = gzip.GzipFile(fileobj=raw, mode="wb") if target.suffix == ".gz" else raw
        for p in parts:
            with open(p, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
        if out is not raw:
            out.close()


def run_disjoint_study(topo_spec: str, out_dir: os.PathLike, config: DisjointConfig, *,
                       jobs: int = 1, paths_out: Optional[os.PathLike] = None,
                       progress: Any = True,
                       executor: Any = None) -> Tuple[Any, List[Dict[str, str]]]:
    """Run (or resume) the study over every topology ``topo_spec`` names.

    Parameters
    ----------
    topo_spec
        A ``--topo`` value (file, folder, glob, ``zoo``, ``zoo/NAME``).
    out_dir
        Results folder: ``meta.json``, ``parts/``, ``results.csv`` (and ``paths/`` with
        ``paths_out``).
    config
        The study settings (``config.paths_dir`` is set here from ``paths_out``).
    jobs
        Worker processes.
    paths_out
        Also write every pair's paths (JSON lines) to this file, atomically.
    progress, executor
        As :func:`tpcstudy.runner.run_tasks` (``executor``: see :mod:`tpcstudy.executors`;
        with ``paths_out`` on a remote Dask cluster, ``out_dir`` must be on a file system the
        workers share, else the client computes the missing path files again at the end).

    Returns
    -------
    (RunSummary, list of result rows as read back from results.csv)
    """
    from dataclasses import replace

    from .io import topology_files

    out = Path(out_dir)
    files = topology_files(topo_spec)
    write_meta(out, config.meta(str(topo_spec)))
    paths_dir = str(out / "paths") if paths_out is not None else None
    config = replace(config, paths_dir=paths_dir)
    tasks = make_tasks(files, config)
    store = ResultStore(out, COLUMNS, KEY)
    summary = run_tasks(tasks, disjoint_task, store, jobs=jobs, desc="disjoint",
                        progress=progress, executor=executor)
    if paths_out is not None:
        parts = []
        for task in sorted(tasks, key=lambda x: x.key["topology"]):
            part = Path(paths_dir) / f"{task.id}.jsonl"  # type: ignore[arg-type]
            if store.failed(task.id):
                continue
            if not part.exists():  # finished by an earlier run without --paths-out
                disjoint_task(task)
            if part.exists():
                parts.append(part)
        _concat_paths(parts, Path(paths_out))
    return summary, read_results(summary.results)


# --------------------------------------------------------------------------- summary
def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def summarize(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """The study's headline numbers from its result rows (strings as in results.csv, or values).

    Returns
    -------
    dict
        ``topologies`` (with results), ``skipped``, ``failed``; ``greedy_reaches_max`` (count and
        share of topologies where mean greedy == mean max, within 1e-12); ``mean_paths``
        (method label -> mean over topologies of the per-topology mean: ``max``, ``greedy``,
        ``sps k=..``); ``failure`` (mean over topologies of ``survive_share``,
        ``overlap_share``, ``backup_share``, ``mean_paths``, and pair-weighted shares).
    """
    by_topo: Dict[str, Dict[Tuple[str, str], Mapping[str, Any]]] = {}
    skipped, failed = set(), set()
    for r in rows:
        st = str(r.get(STATUS) or "")
        if st == SKIPPED:
            skipped.add(r["topology"])
            continue
        if st not in (OK, ""):
            failed.add(r["topology"])
            continue
        k = r.get("k")
        by_topo.setdefault(str(r["topology"]), {})[
            (str(r["method"]), "" if k is None or k == "" else str(int(float(k))))] = r
    reach = [abs(_f(d[("greedy", "")]["mean_paths"]) - _f(d[("max", "")]["mean_paths"])) <= 1e-12
             for d in by_topo.values() if ("greedy", "") in d and ("max", "") in d]
    labels: Dict[str, List[float]] = {}
    for d in by_topo.values():
        for (m, k), r in d.items():
            if m == "failure":
                continue
            labels.setdefault(m if not k else f"{m} k={k}", []).append(_f(r["mean_paths"]))
    fail = [d[("failure", str(FAILURE_K))] for d in by_topo.values()
            if ("failure", str(FAILURE_K)) in d]
    w = np.array([_f(r["pairs"]) for r in fail])

    def mean(col: str, weighted: bool = False) -> float:
        v = np.array([_f(r[col]) for r in fail])
        if not v.size:
            return math.nan
        return float((v * w).sum() / w.sum()) if weighted else float(v.mean())

    def order(label: str) -> Tuple[int, int]:
        m, _, k = label.partition(" k=")
        return ({"max": 0, "greedy": 1}.get(m, 2), int(k) if k else 0)

    return {
        "topologies": len(by_topo),
        "skipped": len(skipped),
        "failed": len(failed),
        "greedy_reaches_max": {"count": int(sum(reach)), "of": len(reach),
                               "share": float(np.mean(reach)) if reach else math.nan},
        "mean_paths": {lab: float(np.mean(labels[lab])) for lab in sorted(labels, key=order)},
        "failure": {"topologies": len(fail), "k": FAILURE_K, "max_paths": FAILURE_MAX_PATHS,
                    "survive_share": mean("survive_share"),
                    "overlap_share": mean("overlap_share"),
                    "backup_share": mean("backup_share"),
                    "exported_paths": mean("mean_paths"),
                    "survive_share_pairs": mean("survive_share", True),
                    "overlap_share_pairs": mean("overlap_share", True)},
    }


def format_summary(s: Mapping[str, Any]) -> str:
    """The summary as text, our figures beside seed 000's."""
    g = s["greedy_reaches_max"]
    lines = [f"disjoint-path study: {s['topologies']} topologies with results, "
             f"{s['skipped']} skipped (< 2 routers of the chosen kind), {s['failed']} failed", ""]
    lines.append(f"greedy reaches max (mean greedy == mean max): {g['count']} of {g['of']} "
                 f"topologies = {100 * g['share']:.1f} %   (seed 000: "
                 f"{SEED_FIGURES['greedy_reaches_max']})")
    lines.append("")
    lines.append("mean over topologies of the mean number of link-disjoint paths per pair")
    sps_labels = [lab for lab in s["mean_paths"] if lab.startswith("sps k=")]
    top = s["mean_paths"][sps_labels[-1]] if sps_labels else math.nan
    top_name = sps_labels[-1][4:] if sps_labels else "-"
    lines.append(f"  {'method':<10} {'paths':>7} {'of max':>7} {'of ' + top_name:>7}   seed 000")
    mx = s["mean_paths"].get("max", math.nan)

    def pct(v: float, ref: float) -> str:
        return f"{100 * v / ref:6.1f}%" if ref == ref and ref else "      -"

    for lab, v in s["mean_paths"].items():
        seed, of_top = "", ""
        if lab.startswith("sps k="):
            seed = SEED_FIGURES["sps"].get(int(lab.split("=")[1]), "")
            of_top = pct(v, top)
        lines.append(f"  {lab:<10} {v:7.3f} {pct(v, mx):>7} {of_top:>7}   {seed}")
    f = s["failure"]
    lines.append("")
    lines.append(f"failure view ({f['topologies']} topologies; slot 0 = IGP shortest path, then "
                 f"sps k={f['k']} paths, at most {f['max_paths']}, no duplicates; seed 000: -)")
    lines.append(f"  exported paths per pair (mean)                     {f['exported_paths']:.3f}")
    lines.append(f"  pairs with a backup path                           {100 * f['backup_share']:.1f} %")
    lines.append(f"  pairs surviving any single link failure            {100 * f['survive_share']:.1f} %"
                 f"  (pooled over pairs: {100 * f['survive_share_pairs']:.1f} %)")
    lines.append(f"  pairs whose default and first backup share a link "
                 f"{100 * f['overlap_share']:.1f} %  (pooled: {100 * f['overlap_share_pairs']:.1f} %)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI
def cmd_disjoint(args: argparse.Namespace) -> int:
    from .executors import executor_scope

    from .cli import _apply_mirror

    _apply_mirror(args)
    if args.threads < 1:  # --jobs is checked with the executor options (make_executor)
        raise UsageError("--threads must be at least 1")
    if args.max_pairs is not None and args.max_pairs < 1:
        raise UsageError("--max-pairs must be >= 1")
    config = DisjointConfig(ks=parse_k_list(args.k), pairs=args.pairs, capacity=args.capacity,
                            max_pairs=args.max_pairs, seed=args.seed,
                            weight=args.weight, threads=args.threads)
    t0 = time.perf_counter()
    with executor_scope(args) as executor:
        run, rows = run_disjoint_study(args.topo, args.out, config, jobs=args.jobs,
                                       paths_out=args.paths_out,
                                       progress=False if args.no_progress else True,
                                       executor=executor)
    print(format_summary(summarize(rows)))
    print("")
    print(f"{run.total} tasks: {run.skipped} already done, {run.completed} run "
          f"({len(run.failed)} failed) in {time.perf_counter() - t0:.1f} s; results in "
          f"{run.results}" + (f"; paths in {args.paths_out}" if args.paths_out else ""))
    for r in rows:
        if r.get(STATUS) == "failed":
            print(f"tpcstudy: error: {r['topology']}: {r.get(ERROR, '').splitlines()[0]}",
                  file=sys.stderr)
    return 1 if run.failed else 0


def register_cli(subparsers: Any, add_topology_options: Any) -> None:
    """Add ``tpcstudy disjoint`` (called by :mod:`tpcstudy.cli`)."""
    from .executors import add_executor_options

    p = subparsers.add_parser(
        "disjoint", help="link-disjoint paths per router pair: max, greedy, sps with k segments",
        description="Per topology (pruned), the mean/min/max number of link-disjoint paths per "
                    "ordered edge-router pair for max, greedy and sps with each k, plus a "
                    "failure view of the exported path sets (study-method.md section 5). "
                    "Resumable: rerun the same command to continue.")
    add_topology_options(p)
    p.add_argument("--k", default="1-6", metavar="LIST",
                   help="sps segment limits, e.g. 1-6 (default) or 1,2,4")
    p.add_argument("--pairs", choices=("edge", "all"), default="edge",
                   help="ordered pairs of edge routers (default) or of all routers")
    p.add_argument("--max-pairs", type=int, default=None, metavar="N",
                   help="at most N pairs per topology: a uniform random sample (seeded) where a "
                        "topology has more (default: all pairs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the pair sample (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    add_executor_options(p)
    p.add_argument("--threads", type=int, default=1,
                   help="core threads per topology (default 1; results do not depend on it)")
    p.add_argument("--out", required=True, metavar="DIR", help="results folder")
    p.add_argument("--paths-out", metavar="FILE",
                   help="also write every pair's paths as JSON lines (gzip if FILE ends .gz)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_disjoint)

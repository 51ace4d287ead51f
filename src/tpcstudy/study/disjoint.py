"""The disjoint-path study, ``tpcstudy disjoint`` (docs/method.md §5; Figure 7 of "The
TCPPathChanger").

How many link-disjoint paths can a host be given, and what does a segment budget cost? For every
topology of a collection (pruned, docs/method.md §2) and every ordered pair of distinct edge
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

Results, one row per (topology, method, k, failure) in ``results.csv`` (see :data:`COLUMNS`):

- ``method`` ``max`` / ``greedy`` (``k`` empty), ``sps`` (one row per ``k``): ``pairs``,
  ``mean_paths``, ``min_paths``, ``max_paths``.
- ``method`` ``failure`` (``k = 4``, ``failure`` empty): ``mean/min/max_paths`` = size of the
  exported set, ``survive_share``, ``overlap_share``, ``backup_share`` (pairs with at least two
  paths).
- With ``failures`` (``--failures SPEC``, not ``none``): one more ``failure`` row per scenario,
  ``failure`` = its id (:mod:`tpcstudy.study.disjoint_failures`).
- Topologies with fewer than two routers of the chosen kind after pruning (the 28 Zoo trees
  prune to nothing; 10 more have fewer than two edge routers) are kept as **one row with
  ``status = "skipped"``**, empty ``method``, and the reason in ``error``.

``seconds`` is the compute time of that row's method; the ``sps`` rows share the time of the
whole sweep over ``k`` equally (the shortcut below makes one ``k`` depend on another); the
``failure`` row times building the failure view from the ``sps`` k = 4 paths.

The per-pair computations (the sps counts with their exact shortcut, the failure view) are in
:mod:`tpcstudy.study.disjoint_counts`. :func:`summarize` is the one summary of the rows: the
command line prints it and Figure 7 draws its per-topology table (:func:`mean_paths_table`).

**Exact shortcut for sps.** For a pair with ``min(deg s, deg t) <= 2`` (every edge-router pair)
at most two disjoint paths exist, and the first ``sps`` path is the direct segment for every
``k`` (the cheapest sr-path, ties to fewer segments). So ``count(k) = 2`` implies
``count(k + 1) = 2``, and ``count(k + 1) <= 1`` implies ``count(k) = count(k + 1)``. Counts known
this way are not recomputed (the sweep is then mostly the ``k = 4`` run that the failure view
needs anyway). The tests check the shortcut against the plain computation on Zoo topologies;
``--paths-out`` always computes every ``k`` in full (its paths, not only counts, are written).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import UsageError
from ..io import atomic_open, read_topology, remove_dead_temporaries, topology_files
from ..io.specs import Spec, spec_text
from ..models.failures import parse_failures, scenarios
from ..pairs import PAIR_MODES, router_pairs, sample_indices
from ..paths import DEFAULT_K, DEFAULT_PATHS, DisjointPathBatch, default_threads, disjoint_paths_batch
from ..paths.sps_rules import DEFAULT_SEGMENT_RULE, SEGMENT_RULES, check_segment_rules, sps_rule_counts
from ..rules import check_links, check_rules
from ..topology import Topology, prune
from . import paper
from .disjoint_counts import failure_view, sps_counts
from .disjoint_failures import failure_kind, format_failures, scenario_rows, summarize_failures
from .executors import TaskExecutor
from .kinds import KINDS
from .runner import run_study, topology_tasks
from .store import ERROR, STATUS, ResultStore, cell_float
from .tasks import RunSummary, Task

__all__ = ["COLUMNS", "KEY", "sps_method", "FAILURE_K", "FAILURE_MAX_PATHS", "GREEDY_TOL", "DisjointConfig",
           "topology_rows", "disjoint_task", "make_tasks", "run_disjoint_study",
           "mean_paths_table", "greedy_reaches_max", "summarize", "format_summary",
           "summary_line"]

COLUMNS = list(KINDS["disjoint"].columns)
KEY = list(KINDS["disjoint"].key)

#: The failure view judges the path sets the export writes: sps with this segment limit ...
FAILURE_K = DEFAULT_K
#: ... and at most this many paths per pair, slot 0 (the IGP shortest path) included.
FAILURE_MAX_PATHS = DEFAULT_PATHS
#: Greedy "reaches max" on a topology when its mean paths per pair is within this of max's.
GREEDY_TOL = 1e-9
OK, SKIPPED = "ok", "skipped"


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
    links: str = "merged"
    segment_rules: Tuple[str, ...] = (DEFAULT_SEGMENT_RULE,)
    failures: str = "none"

    def __post_init__(self) -> None:
        ks = tuple(sorted(set(int(k) for k in self.ks)))
        if not ks or ks[0] < 1:
            raise UsageError(f"k: segment limits must be integers >= 1, got {list(self.ks)}")
        if self.pairs not in PAIR_MODES:
            raise UsageError(f"pairs {self.pairs!r}: choose from {', '.join(PAIR_MODES)}")
        if self.threads < 1:
            raise UsageError("--threads must be at least 1")
        if self.max_pairs is not None and self.max_pairs < 1:
            raise UsageError("--max-pairs must be >= 1")
        check_rules(self.capacity, self.weight)
        check_links(self.links)
        rules = check_segment_rules(self.segment_rules)
        if DEFAULT_SEGMENT_RULE not in rules:  # the failure view and the sps rows need it
            rules = (DEFAULT_SEGMENT_RULE,) + rules
        if self.pairs != "edge" and rules != (DEFAULT_SEGMENT_RULE,):
            raise UsageError("--segment-rule other than 'dag' counts edge-router pairs only "
                             "(at most two disjoint paths); use --pairs edge")
        object.__setattr__(self, "ks", ks)
        object.__setattr__(self, "segment_rules", rules)
        kind, arg = parse_failures(self.failures)  # refuses a bad value
        object.__setattr__(self, "failures", kind if arg is None else f"{kind}:{arg}")

    @property
    def srlg_file(self) -> Optional[Path]:
        """The shared-risk group file of ``--failures srlg:FILE`` (an input of every task)."""
        return Path(self.failures[5:]) if self.failures.startswith("srlg:") else None

    def meta(self, topo_spec: str) -> Dict[str, Any]:
        """The config recorded in meta.json (everything that changes the results)."""
        return {
            "study": "disjoint",
            "topo": topo_spec,
            "capacity_rule": self.capacity,
            "weight_rule": self.weight,
            "pruning": ("2-core, then the largest connected component (docs/method.md §2)"
                        if self.links == "merged" else
                        "routers with at most one link removed repeatedly, parallel links "
                        "counted, every component kept (multigraph, docs/method.md §2)"),
            "pairs": self.pairs,
            "pairs_rule": ("ordered pairs of distinct edge routers (degree 2 after pruning)"
                           + ("" if self.links == "merged" else ", parallel links counted")
                           if self.pairs == "edge" else "ordered pairs of distinct routers"),
            "k": list(self.ks),
            "max_pairs": self.max_pairs,
            "seed": self.seed,
            "sampling": ("all pairs" if self.max_pairs is None else
                         f"topologies with more than {self.max_pairs} pairs: a uniform sample of "
                         f"{self.max_pairs} (numpy default_rng(seed).choice, sorted)"),
            "methods": ["max", "greedy", "sps"],
            "link_disjoint": "undirected links; sps occupies the union of its segments' ECMP DAGs"
                             + ("" if self.links == "merged" else
                                "; parallel links count as one (router adjacencies)"),
            "failure_view": {"slot0": "IGP shortest path, links of its ECMP DAG",
                             "backups": f"sps k={FAILURE_K}", "max_paths": FAILURE_MAX_PATHS,
                             "duplicates": "same waypoint sequence (slot 0: none) dropped"},
            "skipped": "topologies with < 2 routers of the chosen kind: one row, status=skipped",
            **({} if self.segment_rules == (DEFAULT_SEGMENT_RULE,) else
               {"segment_rules": {r: SEGMENT_RULES[r] for r in self.segment_rules}}),
            # recorded only when asked for: a study without failures keeps its old meta.json
            **({} if self.failures == "none" else
               {"failures": self.failures,
                "failure_rows": "one per scenario: over the pairs with no failed router, joined "
                                "in the intact graph: default path hit, some exported path "
                                "avoids every failed link, stranded, disconnected"
                                + (f"; links:N drawn with random.Random({self.seed})"
                                   if self.failures.startswith("links:") else "")
                                + ("" if self.failures != "nodes" else
                                   "; nodes: every router" if self.pairs == "all" else
                                   "; nodes: the transit routers")}),
        }


# --------------------------------------------------------------------------- computation
def sps_method(rule: str) -> str:
    """The ``method`` of the rows of ``sps`` under a segment rule: ``sps`` for the default
    (``dag``), ``sps:<rule>`` for the others (docs/method.md §5)."""
    return "sps" if rule == DEFAULT_SEGMENT_RULE else f"sps:{rule}"


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

    Pairs and roles are the topology's (under ``multigraph``, edge routers count parallel
    links); paths are link-disjoint by router adjacency, parallel links merged into one
    (docs/method.md §5).

    Parameters
    ----------
    topo
        A pruned topology.
    config
        Segment limits, pairs mode, core threads (at most ``config.threads``, and never more
        than this process's budget, :func:`tpcstudy.paths.default_threads`: the CPUs it may
        run on, or its share of them in a worker process of ``--jobs N``).
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
    base: Dict[str, Any] = {"topology": name, "nodes": topo.num_nodes, "links": topo.num_links,
            "edge_routers": len(topo.edge_router_ids), "pairs": len(s), STATUS: OK}
    kind = "edge routers" if config.pairs == "edge" else "routers"
    n_kind = base["edge_routers"] if config.pairs == "edge" else topo.num_nodes
    if n_kind < 2:
        return [{**base, "method": "", "k": None, STATUS: SKIPPED,
                 ERROR: f"{n_kind} {kind} after pruning (< 2)"}]
    rows: List[Dict[str, Any]] = []
    # Paths are disjoint by router adjacency: parallel links (multigraph) count as one, as the
    # paper's Figure 7 counts them (its roles and pruning are the multigraph's, above).
    raw, topo = topo, topo.merged()
    # --threads asks for threads, the budget caps them: more than the CPUs (or than a worker's
    # share of them) would only take turns on them.
    th = min(config.threads, default_threads())
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
    for rule in config.segment_rules:
        if rule == DEFAULT_SEGMENT_RULE:
            continue
        t0 = time.perf_counter()
        by_k = sps_rule_counts(topo, s, t, config.ks, rule)
        took = time.perf_counter() - t0
        for k in config.ks:
            rows.append({**base, "method": sps_method(rule), "k": k, **_stats(by_k[k]),
                         "seconds": took / len(config.ks)})
    t0 = time.perf_counter()
    view = failure_view(batches[FAILURE_K])
    rows.append({**base, "method": "failure", "k": FAILURE_K, **_stats(view.sizes),
                 "survive_share": _share(view.survive), "overlap_share": _share(view.overlap),
                 "backup_share": _share(view.backup), "seconds": time.perf_counter() - t0})
    if config.failures != "none":  # scenarios of the study's topology: its links, its roles
        scs = scenarios(raw, config.failures, seed=config.seed,
                        routers=range(raw.num_nodes) if config.pairs == "all" else None)
        rows += scenario_rows(raw, topo, s, t, batches[FAILURE_K], scs,
                              failure_kind(config.failures), base, k=FAILURE_K,
                              max_paths=FAILURE_MAX_PATHS)
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
    path, config = task.args
    name = task.key["topology"]
    topo = prune(read_topology(path, capacity=config.capacity, weight=config.weight,
                               links=config.links))
    if config.paths_dir is None:
        return topology_rows(topo, config, name=name)
    target = Path(config.paths_dir) / f"{task.id}.jsonl"
    with atomic_open(target, "w", encoding="utf-8") as fh:
        return topology_rows(topo, config, paths_out=fh, name=name)


def make_tasks(files: Sequence[Path], config: DisjointConfig) -> List[Task]:
    """One task per topology file, largest file first (load balance: the big ones start early)."""
    return topology_tasks(files, config, replace(config, paths_dir=None).meta(""),
                          key=lambda p: {"topology": _topology_name(p)},
                          inputs=lambda p: [p, config.srlg_file])


def _concat_paths(parts: Sequence[Path], target: Path) -> None:
    """Join the per-topology path files into ``target`` atomically (gzip when it ends .gz)."""
    with atomic_open(target, "wb") as raw:
        out: Any = gzip.GzipFile(fileobj=raw, mode="wb") if target.suffix == ".gz" else raw
        for p in parts:
            with open(p, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
        if out is not raw:
            out.close()


def run_disjoint_study(topo_spec: Spec, out_dir: Union[str, "os.PathLike[str]"],
                       config: DisjointConfig, *, jobs: int = 1,
                       paths_out: Optional[Union[str, "os.PathLike[str]"]] = None,
                       progress: Union[bool, str] = True,
                       executor: Optional[TaskExecutor] = None, overwrite: bool = False
                       ) -> Tuple[RunSummary, List[Dict[str, str]]]:
    """Run (or resume) the study over every topology ``topo_spec`` names.

    Parameters
    ----------
    topo_spec
        A ``--topo`` value (file, folder, glob, ``zoo``, ``zoo/NAME``, ...) or a list of them.
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
        As :func:`tpcstudy.study.tasks.run_tasks` (``executor``: see
        :mod:`tpcstudy.study.executors`;
        with ``paths_out`` on a remote Dask cluster, ``out_dir`` must be on a file system the
        workers share, else the client computes the missing path files again at the end).
    overwrite
        Discard the results already in ``out_dir`` (e.g. a study with other settings) first.

    Returns
    -------
    (RunSummary, list of result rows as read back from results.csv)
    """
    out = Path(out_dir)
    files = topology_files(topo_spec)
    paths_dir = str(out / "paths") if paths_out is not None else None
    config = replace(config, paths_dir=paths_dir)

    def tasks() -> List[Task]:
        if paths_dir is not None:
            remove_dead_temporaries(paths_dir)  # what a killed run left half-written
        return make_tasks(files, config)

    def join_paths(tasks: List[Task], store: ResultStore) -> None:
        if paths_out is None or paths_dir is None:
            return
        parts = []
        for task in sorted(tasks, key=lambda x: x.key["topology"]):
            part = Path(paths_dir) / f"{task.id}.jsonl"
            if store.failed(task.id):
                continue
            if not part.exists():  # finished by an earlier run without --paths-out
                disjoint_task(task)
            if part.exists():
                parts.append(part)
        _concat_paths(parts, Path(paths_out))

    return run_study(out, "disjoint", config.meta(spec_text(topo_spec)), tasks, disjoint_task,
                     overwrite=overwrite, jobs=jobs, progress=progress, executor=executor,
                     extra=("paths",), after=join_paths)


# --------------------------------------------------------------------------- summary
def _label(method: str, k: Any) -> str:
    return method if k is None or k == "" else f"{method} k={int(float(k))}"


def _order(label: str) -> Tuple[int, str, int]:
    m, _, k = label.partition(" k=")
    return ({"max": 0, "greedy": 1, "sps": 2}.get(m, 3), m, int(k) if k else 0)


def mean_paths_table(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Dict[str, float]]:
    """Mean link-disjoint paths per pair, per topology: ``{"max"|"greedy"|"sps k=<j>":
    {topology: mean_paths}}`` (``ok`` rows only; ``failure`` rows are left out). Accepts rows as
    read (strings) or loaded (numbers)."""
    out: Dict[str, Dict[str, float]] = {}
    for r in rows:
        if str(r.get(STATUS) or OK) != OK or r.get("method") in (None, "", "failure"):
            continue
        v = cell_float(r.get("mean_paths"), finite=True)
        if not math.isfinite(v):
            continue
        out.setdefault(_label(str(r["method"]), r.get("k")), {})[str(r["topology"])] = v
    return {lab: out[lab] for lab in sorted(out, key=_order)}


def greedy_reaches_max(table: Mapping[str, Mapping[str, float]]) -> Tuple[int, int]:
    """(topologies where greedy's mean equals max's within :data:`GREEDY_TOL`, topologies with
    both)."""
    mx, gr = table.get("max", {}), table.get("greedy", {})
    both = [t for t in mx if t in gr]
    return sum(abs(gr[t] - mx[t]) <= GREEDY_TOL for t in both), len(both)


def summarize(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """The study's headline numbers from its result rows (strings as in results.csv, or values).

    Returns
    -------
    dict
        ``topologies`` (with results), ``skipped``, ``failed``; ``greedy_reaches_max`` (count and
        share of topologies where mean greedy == mean max, :func:`greedy_reaches_max`);
        ``mean_paths`` (method label -> mean over topologies of the per-topology mean: ``max``,
        ``greedy``, ``sps k=..``; :func:`mean_paths_table`); ``failure`` (mean over topologies
        of ``survive_share``, ``overlap_share``, ``backup_share``, ``mean_paths``, and
        pair-weighted shares); ``failures`` (the scenario rows of ``--failures``, per failure
        kind: :func:`~tpcstudy.study.disjoint_failures.summarize_failures`).
    """
    topologies, skipped, failed = set(), set(), set()
    fail: List[Mapping[str, Any]] = []
    for r in rows:
        st = str(r.get(STATUS) or OK)
        if st == SKIPPED:
            skipped.add(r["topology"])
        elif st != OK:
            failed.add(r["topology"])
        else:
            topologies.add(r["topology"])
            if r.get("method") == "failure" and r.get("failure") in (None, "") \
                    and _label("failure", r.get("k")) == f"failure k={FAILURE_K}":
                fail.append(r)
    table = mean_paths_table(rows)
    reach, both = greedy_reaches_max(table)
    w = np.array([cell_float(r["pairs"], finite=True) for r in fail])

    def mean(col: str, weighted: bool = False) -> float:
        v = np.array([cell_float(r[col], finite=True) for r in fail])
        if not v.size:
            return math.nan
        return float((v * w).sum() / w.sum()) if weighted else float(v.mean())

    return {
        "topologies": len(topologies),
        "skipped": len(skipped),
        "failed": len(failed),
        "greedy_reaches_max": {"count": reach, "of": both,
                               "share": reach / both if both else math.nan},
        "mean_paths": {lab: float(np.mean(list(v.values()))) for lab, v in table.items()},
        "failure": {"topologies": len(fail), "k": FAILURE_K, "max_paths": FAILURE_MAX_PATHS,
                    "survive_share": mean("survive_share"),
                    "overlap_share": mean("overlap_share"),
                    "backup_share": mean("backup_share"),
                    "exported_paths": mean("mean_paths"),
                    "survive_share_pairs": mean("survive_share", True),
                    "overlap_share_pairs": mean("overlap_share", True)},
        "failures": summarize_failures(rows),
    }


def format_summary(s: Mapping[str, Any]) -> str:
    """:func:`summarize`'s output as text, our figures beside the paper's."""
    g = s["greedy_reaches_max"]
    lines = [f"disjoint-path study: {s['topologies']} topologies with results, "
             f"{s['skipped']} skipped (< 2 routers of the chosen kind), {s['failed']} failed", ""]
    lines.append(f"greedy reaches max (mean greedy == mean max): {g['count']} of {g['of']} "
                 f"topologies = {100 * g['share']:.1f} %   (paper: "
                 f"{paper.GREEDY_REACHES_MAX:g} %)")
    lines.append("")
    lines.append("mean over topologies of the mean number of link-disjoint paths per pair")
    sps_labels = [lab for lab in s["mean_paths"] if lab.startswith("sps k=")]
    top = s["mean_paths"][sps_labels[-1]] if sps_labels else math.nan
    top_name = sps_labels[-1][4:] if sps_labels else "-"
    lines.append(f"  {'method':<13} {'paths':>7} {'of max':>7} {'of ' + top_name:>7}   paper")
    mx = s["mean_paths"].get("max", math.nan)

    def pct(v: float, ref: float) -> str:
        return f"{100 * v / ref:6.1f}%" if ref == ref and ref else "      -"

    for lab, v in s["mean_paths"].items():
        note, of_top = "", ""
        if lab.startswith("sps k="):
            note = paper.SPS_NOTES.get(int(lab.split("=")[1]), "")
            of_top = pct(v, top)
        lines.append(f"  {lab:<13} {v:7.3f} {pct(v, mx):>7} {of_top:>7}   {note}")
    f = s["failure"]
    lines.append("")
    lines.append(f"failure view ({f['topologies']} topologies; slot 0 = IGP shortest path, then "
                 f"sps k={f['k']} paths, at most {f['max_paths']}, no duplicates; paper: -)")
    lines.append(f"  exported paths per pair (mean)                     {f['exported_paths']:.3f}")
    lines.append(f"  pairs with a backup path                           {100 * f['backup_share']:.1f} %")
    lines.append(f"  pairs surviving any single link failure            {100 * f['survive_share']:.1f} %"
                 f"  (pooled over pairs: {100 * f['survive_share_pairs']:.1f} %)")
    lines.append(f"  pairs whose default and first backup share a link "
                 f"{100 * f['overlap_share']:.1f} %  (pooled: {100 * f['overlap_share_pairs']:.1f} %)")
    return "\n".join(lines + format_failures(s.get("failures") or {"kinds": [], "worst": []}))


def summary_line(rows: Sequence[Mapping[str, Any]]) -> str:
    """The headline numbers in one line, beside the paper's."""
    s = summarize(rows)
    g, mp = s["greedy_reaches_max"], s["mean_paths"]
    sps = [lab for lab in mp if lab.startswith("sps k=")]
    return (f"greedy = max on {g['count']}/{g['of']} topologies ({100.0 * g['share']:.1f} %, "
            f"paper: {paper.GREEDY_REACHES_MAX:g} %); mean paths: max "
            f"{mp.get('max', math.nan):.3f}, "
            + ", ".join(f"k={lab[6:]} {mp[lab]:.3f}" for lab in sps)
            + "".join(f"; {x['kind']} failures: median share surviving {x['survive_median']:.3f}"
                      for x in s["failures"]["kinds"]))

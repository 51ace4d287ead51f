"""Failures: what survives a link, shared-risk or router failure (docs/method.md §4c).

A *scenario* is a set of links that fail together (one link, a shared-risk group, or every
link of a router that fails). For one model's intact solution (:func:`tpcstudy.max_flow` or
:func:`tpcstudy.mlu.min_mlu`) three *reactions* are evaluated on the failed network:

- ``none``: nothing has reacted yet: the intact routing, and the traffic its ECMP splits (or
  its concrete paths) send over a failed link is lost there (what is sent before the failure
  point still loads the links it crosses);
- ``hosts``: the IGP has re-converged (every segment follows the failed graph's shortest
  paths) and the hosts re-split over the table they hold: each pair's IGP path plus the
  sr-paths the intact LP used (a path whose waypoint failed is dropped): the LP over exactly
  those columns. ``ecmp`` and ``multipath`` react by themselves: ECMP / multipath on the
  failed graph;
- ``reoptimised``: the LP solved afresh on the failed graph, warm-started from the intact
  solution (max flow: its final LP with the failed arcs at capacity 0, from its basis, the
  dual simplex restoring feasibility, :func:`~.maxflow.max_flow_after`; min MLU: its columns);
  the value is the same optimum as a cold solve.

Pairs (or demands) whose routers the failure disconnects are counted and left out; a failure
never fails a row. This module is the model layer: :mod:`tpcstudy.study.failures` runs it over
collections.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import paths as _paths
from ..errors import InputFileError, UsageError
from ..io.bounded import read_bounded
from ..topology import Topology, component_labels, without_link_ids
from .maxflow import MaxFlowResult, max_flow, max_flow_after
from .mlu import MLUResult, min_mlu
from .oracles import SegmentRatios, sr_usage

__all__ = ["Scenario", "FAILURE_KINDS", "REACTIONS", "WARM", "parse_failures", "scenarios",
           "read_srlg", "failed_topology", "Reaction", "maxflow_reactions", "mlu_reactions", "SRLG_LIMIT",
           "link_id"]

#: What ``--failures`` accepts (``links:N`` samples N links, ``srlg:FILE`` reads groups).
FAILURE_KINDS = ("none", "links", "srlg", "nodes")
#: The reactions, in the order rows are written.
REACTIONS = ("none", "hosts", "reoptimised")
#: Largest shared-risk group file read (bytes).
SRLG_LIMIT = 16 << 20
#: Models whose re-solve starts from the intact column generation (solved with
#: ``keep_state=True``: :func:`~.maxflow.max_flow_after`; min MLU: from its columns);
#: multipath's intact paths may no longer be shortest once a link fails: it is solved afresh.
WARM = ("ecmp", "sr", "mcf")
#: Flow below this (relative to the largest) is no flow: a path the LP does not use.
FLOW_EPS = 1e-9


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Links that fail together. ``id``: stable name (``A--B`` for a link, the group's name,
    ``node:R`` for a router); ``links``: link ids of the topology; ``nodes``: failed routers
    (their links are in ``links``; a failed router also drops paths through it as waypoint)."""

    id: str
    links: Tuple[int, ...]
    nodes: Tuple[int, ...] = ()


def parse_failures(spec: Optional[str]) -> Tuple[str, Optional[str]]:
    """``(kind, argument)`` of a ``--failures`` value: ``none``, ``links``, ``links:N``,
    ``srlg:FILE``, ``nodes``."""
    text = (spec or "none").strip()
    kind, sep, arg = text.partition(":")
    if kind not in FAILURE_KINDS:
        raise UsageError(f"--failures {text!r}: choose none, links, links:N, srlg:FILE or nodes")
    if kind == "links" and sep:
        try:
            n = int(arg)
        except ValueError:
            raise UsageError(f"--failures {text!r}: N must be an integer >= 1") from None
        if n < 1:
            raise UsageError(f"--failures {text!r}: N must be an integer >= 1")
        return kind, str(n)
    if kind == "srlg":
        if not arg:
            raise UsageError("--failures srlg:FILE: name the file of shared-risk groups")
        return kind, arg
    if sep:
        raise UsageError(f"--failures {text!r}: {kind} takes no argument")
    return kind, None


def link_id(topo: Topology, i: int) -> str:
    """A link's stable id: its routers' names (in link order), ``#j`` for the j-th (from 2)
    of parallel links under ``multigraph``."""
    u, v = int(topo.link_u[i]), int(topo.link_v[i])
    same = np.flatnonzero((topo.link_u == u) & (topo.link_v == v))
    base = f"{topo.names[u]}--{topo.names[v]}"
    rank = int(np.searchsorted(same, i))
    return base if rank == 0 else f"{base}#{rank + 1}"


def scenarios(topo: Topology, spec: Optional[str], *, seed: int = 0,
              routers: Optional[Sequence[int]] = None) -> List[Scenario]:
    """The scenarios ``spec`` names on ``topo`` (``links:N``: a sample of N links drawn with
    ``random.Random(seed)``, in link order; ``nodes``: every router of ``routers``, by
    default every router that is not an edge router: the transit routers)."""
    kind, arg = parse_failures(spec)
    if kind == "none":
        return []
    if kind == "links":
        ids = list(range(topo.num_links))
        if arg is not None and int(arg) < len(ids):
            ids = sorted(random.Random(seed).sample(ids, int(arg)))
        return [Scenario(link_id(topo, i), (i,)) for i in ids]
    if kind == "srlg":
        return read_srlg(Path(str(arg)), topo)
    if routers is None:
        deg = topo.degree
        routers = [v for v in range(topo.num_nodes) if deg[v] != 2]
    out = []
    for v in sorted(int(r) for r in routers):
        links = np.flatnonzero((topo.link_u == v) | (topo.link_v == v))
        out.append(Scenario(f"node:{topo.names[v]}", tuple(int(x) for x in links), (v,)))
    return out


def read_srlg(path: Path, topo: Topology) -> List[Scenario]:
    """Shared-risk groups: one group per line, ``NAME: A -- B; C -- D`` (router names; ``#``
    starts a comment). Every error names the file, the line and the value."""
    try:
        text = read_bounded(path, SRLG_LIMIT).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    out: List[Scenario] = []
    seen: Dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, rest = line.partition(":")
        name = name.strip()
        where = f"{path}:{lineno}"
        if not sep or not name:
            raise InputFileError(f"{where}: {raw.strip()[:80]!r}: expected 'NAME: A -- B; C -- D'")
        if name in seen:
            raise InputFileError(f"{where}: group {name!r} already named on line {seen[name]}")
        seen[name] = lineno
        links: List[int] = []
        for item in rest.split(";"):
            ends = [e.strip() for e in item.split("--")]
            if len(ends) != 2 or not all(ends):
                raise InputFileError(f"{where}: {item.strip()[:80]!r}: a link is 'A -- B'")
            try:
                a, b = topo.index_of(ends[0]), topo.index_of(ends[1])
            except UsageError as exc:
                raise InputFileError(f"{where}: {exc}") from None
            lo, hi = min(a, b), max(a, b)
            hit = np.flatnonzero((topo.link_u == lo) & (topo.link_v == hi))
            if not len(hit):
                raise InputFileError(f"{where}: {item.strip()[:80]!r}: {topo.name} has no link "
                                     f"between these routers")
            links.extend(int(x) for x in hit)  # every parallel link of the adjacency
        out.append(Scenario(name, tuple(sorted(set(links)))))
    if not out:
        raise InputFileError(f"{path}: no shared-risk group (lines 'NAME: A -- B; C -- D')")
    return out


def failed_topology(topo: Topology, sc: Scenario) -> Tuple[Topology, np.ndarray]:
    """``topo`` without the scenario's links (every router kept, same ids), and the map of
    each of ``topo``'s arcs to the failed topology's arc (-1: failed)."""
    return without_link_ids(topo, sc.links)


def _dead_arcs(topo: Topology, sc: Scenario) -> np.ndarray:
    dead = np.zeros(2 * topo.num_links, dtype=bool)
    for i in sc.links:
        dead[2 * i] = dead[2 * i + 1] = True
    return dead


# ----------------------------------------------------------------------- reaction "none"
class _Routing:
    """An intact routing as segments: each column (a flow) is a list of segments, each
    segment its ECMP arcs and fractions (a concrete path's hop is a one-arc segment)."""

    def __init__(self, topo: Topology, seqs: List[Tuple[int, ...]], flows: np.ndarray,
                 concrete: bool) -> None:
        self.topo = topo
        self.src, self.dst = topo.arc_src, topo.arc_dst
        self.flows = np.asarray(flows, dtype=np.float64)
        self.seg_of: List[List[int]] = []
        segs: Dict[Tuple[int, int], int] = {}
        for q in seqs:
            ids = []
            for u, v in zip(q[:-1], q[1:]):
                ids.append(segs.setdefault((int(u), int(v)), len(segs)))
            self.seg_of.append(ids)
        keys = list(segs)
        if concrete:  # a hop of a concrete path: the arc u -> v (the first of parallel links)
            first: Dict[Tuple[int, int], int] = {}
            for i, (a, b) in enumerate(zip(topo.link_u.tolist(), topo.link_v.tolist())):
                first.setdefault((a, b), 2 * i)
            self.seg_arcs = [np.asarray([first[(min(u, v), max(u, v))] + (0 if u < v else 1)],
                                        dtype=np.int64) for u, v in keys]
            self.seg_fr = [np.ones(1) for _ in keys]
        elif keys:
            off, arcs, fr = _paths.segment_ratios(topo, np.asarray([u for u, _ in keys], np.int32),
                                                  np.asarray([v for _, v in keys], np.int32))
            self.seg_arcs = [np.asarray(arcs[off[i]:off[i + 1]], dtype=np.int64)
                             for i in range(len(keys))]
            self.seg_fr = [np.asarray(fr[off[i]:off[i + 1]]) for i in range(len(keys))]
        else:
            self.seg_arcs, self.seg_fr = [], []
        self.seg_src = [u for u, _ in keys]
        # which columns use each arc (through any segment): to find the affected ones fast
        from scipy.sparse import csr_matrix

        m2 = 2 * topo.num_links
        rows, cols = [], []
        for j, ids in enumerate(self.seg_of):
            for s in ids:
                rows.extend([j] * len(self.seg_arcs[s]))
                cols.extend(self.seg_arcs[s].tolist())
        self.uses = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(seqs), m2)).tocsc()

    def affected(self, dead: np.ndarray) -> np.ndarray:
        """Columns with flow that cross a dead arc."""
        hit = self.uses[:, np.flatnonzero(dead)].sum(axis=1).A.ravel() > 0
        return np.flatnonzero(hit & (self.flows > 0))

    def propagate(self, s: int, amount: float, dead: np.ndarray
                  ) -> Tuple[np.ndarray, np.ndarray, float]:
        """Segment ``s`` fed ``amount``: its arcs, their traffic (dropped at a dead arc, every
        router still splitting evenly over its intact next hops) and what arrives."""
        arcs, fr = self.seg_arcs[s], self.seg_fr[s]
        if not dead[arcs].any():
            return arcs, amount * fr, amount
        src, dst = self.src, self.dst
        out: Dict[int, List[int]] = {}
        indeg: Dict[int, int] = {}
        for a in arcs.tolist():
            out.setdefault(int(src[a]), []).append(a)
            indeg[int(dst[a])] = indeg.get(int(dst[a]), 0) + 1
        inflow = {self.seg_src[s]: amount}
        ready = [self.seg_src[s]]
        flow: Dict[int, float] = {}
        lost = 0.0
        while ready:
            u = ready.pop()
            nxt = out.get(u, [])
            share = inflow.get(u, 0.0) / len(nxt) if nxt else 0.0
            for a in nxt:
                flow[a] = share
                w = int(dst[a])
                if dead[a]:
                    lost += share
                else:
                    inflow[w] = inflow.get(w, 0.0) + share
                indeg[w] -= 1
                if indeg[w] == 0:
                    ready.append(w)
        return arcs, np.asarray([flow.get(a, 0.0) for a in arcs.tolist()]), max(amount - lost, 0.0)

    def column_after(self, j: int, dead: np.ndarray) -> Tuple[float, List[Tuple[np.ndarray, np.ndarray]]]:
        """Column ``j``'s delivered flow and its arc traffic after the failure."""
        amount = float(self.flows[j])
        loads = []
        for s in self.seg_of[j]:
            arcs, f, amount = self.propagate(s, amount, dead)
            loads.append((arcs, f))
            if amount <= 0:
                break
        return amount, loads

    def column_loads(self, j: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Column ``j``'s intact arc traffic."""
        return [(self.seg_arcs[s], self.flows[j] * self.seg_fr[s]) for s in self.seg_of[j]]


# ----------------------------------------------------------------------- results
@dataclasses.dataclass
class Reaction:
    """One reaction's outcome. ``value``: delivered max flow, or the MLU; ``lost``: share of
    the demand volume lost (MLU: dropped by ``none``, or disconnected); ``disconnected``:
    pairs (demands) with no path left; ``dual_bound`` and ``gap``: the LP's certificate."""

    reaction: str
    value: float
    disconnected: int
    lost: float = 0.0
    dual_bound: float = math.nan
    gap: float = math.nan
    columns: int = 0
    iterations: int = 0
    seconds: float = 0.0
    warm: bool = False
    status: str = "ok"
    error: str = ""


def _connected(ftopo: Topology, S: np.ndarray, T: np.ndarray, sc: Scenario) -> np.ndarray:
    """Pairs whose routers are still joined (links are two-way: the components of the
    undirected failed graph), neither of them a failed router."""
    label = component_labels(ftopo)
    ok = label[S] == label[T]
    for v in sc.nodes:
        ok &= (S != v) & (T != v)
    return np.asarray(ok, dtype=bool)


def _ids(topo: Topology, path: Sequence[str]) -> Tuple[int, ...]:
    return tuple(topo.index_of(v) for v in path)


class MaxflowIntact:
    """A model's intact max-flow solution, prepared for scenarios (its routing as segments)."""

    def __init__(self, topo: Topology, pairs: np.ndarray, res: MaxFlowResult, k: int,
                 solver: str = "highs") -> None:
        self.topo, self.res, self.k, self.solver = topo, res, k, solver
        self.S = np.ascontiguousarray(pairs[:, 0], dtype=np.int32)
        self.T = np.ascontiguousarray(pairs[:, 1], dtype=np.int32)
        flows = np.asarray(res.flows, dtype=np.float64)
        big = float(flows.max()) if len(flows) else 0.0
        used = np.flatnonzero(flows > FLOW_EPS * max(big, 1.0))
        self.used_paths = [_ids(topo, res.paths[j]) for j in used.tolist()]
        self.used_flows = flows[used]
        # the hosts' table among the intact columns: each pair's IGP path and the used ones
        self.table = np.zeros(len(res.paths), dtype=bool)
        self.table[used] = True
        self.table[[j for j, q in enumerate(res.paths) if len(q) == 2]] = True
        concrete = res.model in ("mcf", "multipath")
        self.routing = _Routing(topo, self.used_paths, self.used_flows, concrete)
        # ecmp and sr re-solve over segments (mcf and multipath over concrete paths: none kept)
        self.segments = None if concrete else _segments(topo, self.S, self.T, self.used_paths)


def _segments(topo: Topology, S: np.ndarray, T: np.ndarray, seqs: List[Tuple[int, ...]]
              ) -> SegmentRatios:
    """The intact ECMP ratios of every pair's direct segment and of ``seqs``' segments: a
    scenario recomputes only those whose DAG crossed a failed link."""
    known = SegmentRatios(topo)
    sr_usage(topo, [(int(s), int(t)) for s, t in zip(S.tolist(), T.tolist())] + list(seqs), known)
    return known


def maxflow_reactions(intact: MaxflowIntact, sc: Scenario, *, reactions: Sequence[str] = REACTIONS,
                      warm: bool = True, time_limit: Optional[float] = None) -> List[Reaction]:
    """The reactions of one model's intact max-flow solution to scenario ``sc`` (module
    docstring). ``mcf`` has no ``hosts`` reaction (it is the bound, not a deployment)."""
    topo, res = intact.topo, intact.res
    model = res.model
    ftopo, amap = failed_topology(topo, sc)
    dead = _dead_arcs(topo, sc)
    ok = _connected(ftopo, intact.S, intact.T, sc)
    ndis = int((~ok).sum())
    out: List[Reaction] = []
    if "none" in reactions:
        t0 = time.perf_counter()
        lost = 0.0
        for j in intact.routing.affected(dead).tolist():
            delivered, _ = intact.routing.column_after(j, dead)
            lost += float(intact.routing.flows[j]) - delivered
        out.append(Reaction("none", float(res.value) - lost, ndis,
                            lost=lost / res.value if res.value > 0 else 0.0,
                            seconds=time.perf_counter() - t0))
    pairs = np.stack([intact.S, intact.T], axis=1)
    k = intact.k
    reopt: Optional[Reaction] = None
    known = (None if intact.segments is None  # the DAGs the failure left alone
             else intact.segments.after_failure(ftopo, amap))
    dropped = set(sc.nodes)

    def solve(label: str, fixed: Optional[List[Tuple[int, ...]]] = None) -> Reaction:
        """``fixed``: the LP over these columns only (hosts); else the model afresh, from the
        intact column generation (its columns, usage and basis) when it was kept."""
        t0 = time.perf_counter()
        warm_start = warm and res.state is not None
        if warm_start:
            r = max_flow_after(res, ftopo, amap, solver=intact.solver, time_limit=time_limit,
                               segments=known, fixed=None if fixed is None else intact.table)
        else:
            r = max_flow(ftopo, pairs, model=model, k=k, solver=intact.solver,
                         time_limit=time_limit, initial_columns=fixed,
                         fixed_columns=fixed is not None, segments=known)
        if not r.ok:
            return Reaction(label, math.nan, ndis, status="failed", error=f"{r.status}: {r.message}",
                            seconds=time.perf_counter() - t0)
        gap = float(r.gap)
        bound = float(r.value) if fixed is not None or not math.isfinite(gap) else \
            float(r.value) / (1.0 + min(gap, 0.0))  # Farley: duals scaled to feasibility
        return Reaction(label, float(r.value), ndis, dual_bound=bound, gap=gap, columns=r.columns,
                        iterations=r.iterations, seconds=time.perf_counter() - t0,
                        warm=warm_start and fixed is None)

    if "hosts" in reactions and model != "mcf":
        if model == "sr":
            out.append(solve("hosts", [q for q in intact.used_paths
                                       if not dropped.intersection(q[1:-1])]))
        else:  # ecmp and multipath react by themselves: the same LP as reoptimised
            reopt = solve("reoptimised")
            out.append(dataclasses.replace(reopt, reaction="hosts"))
    if "reoptimised" in reactions:
        if reopt is None:
            if model == "mcf" and not dead[_arcs_used(intact)].any():
                # no flow crosses the failed links: the intact optimum stays feasible and
                # removing links never raises the optimum, so it is the failed graph's
                reopt = Reaction("reoptimised", float(res.value), ndis, dual_bound=float(res.value),
                                 gap=float(res.gap), warm=True)
            else:
                reopt = solve("reoptimised")
        out.append(reopt)
    return out


def _arcs_used(intact: MaxflowIntact) -> np.ndarray:
    u = intact.routing.uses
    return np.flatnonzero(np.diff(u.indptr) > 0)


class MLUIntact:
    """A model's intact min-MLU solution, prepared for scenarios."""

    def __init__(self, topo: Topology, res: MLUResult, k: int, solver: str = "highs") -> None:
        self.topo, self.res, self.k, self.solver = topo, res, k, solver
        seqs: List[Tuple[int, ...]] = []
        flows: List[float] = []
        owner: List[int] = []
        for d, routes in enumerate(res.paths):
            for p, f in routes:
                if f > 0:
                    seqs.append(tuple(int(v) for v in p))
                    flows.append(float(f))
                    owner.append(d)
        self.seqs, self.owner = seqs, np.asarray(owner, dtype=np.int64)
        concrete = res.model in ("mcf", "multipath")
        self.routing = _Routing(topo, seqs, np.asarray(flows), concrete)
        self.loads = np.asarray(res.loads, dtype=np.float64)
        self.segments = _segments(topo, res.sources, res.targets, [] if concrete else seqs)
        # the warm start's columns: an sr-path with waypoints, or a path longer than the IGP
        # distance (mcf); the ECMP split of every demand is its key column anyway, and its
        # shortest paths as columns would make the first LP as large as the matrix
        self.warm, self.warm_owner = seqs, self.owner
        if concrete and seqs:
            w = topo.arc_weight.astype(np.float64)
            length = np.asarray([sum(float(w[a]) for arcs in
                                     (self.routing.seg_arcs[x] for x in self.routing.seg_of[j])
                                     for a in arcs.tolist()) for j in range(len(seqs))])
            dist = _paths.path_price_bounds(topo, w, res.sources[self.owner],
                                            res.targets[self.owner])
            longer = np.flatnonzero(length > dist * (1 + 1e-9))
            self.warm, self.warm_owner = [seqs[j] for j in longer.tolist()], self.owner[longer]


def _mlu_of(load: np.ndarray, cap: np.ndarray, alive: np.ndarray) -> float:
    util = np.where(alive, load / np.where(cap > 0, cap, np.inf), 0.0)
    return float(util.max()) if len(util) else 0.0


def mlu_reactions(intact: MLUIntact, sc: Scenario, *, reactions: Sequence[str] = REACTIONS,
                  warm: bool = True) -> List[Reaction]:
    """The reactions of one model's intact min-MLU solution to ``sc``: ``value`` is the MLU
    over the demands still connected; ``lost`` the share of the volume dropped (``none``) or
    disconnected."""
    topo, res = intact.topo, intact.res
    model = res.model
    ftopo, amap = failed_topology(topo, sc)
    dead = _dead_arcs(topo, sc)
    S, T, V = res.sources, res.targets, np.asarray(res.volumes, dtype=np.float64)
    ok = _connected(ftopo, S, T, sc)
    ndis = int((~ok).sum())
    total = float(V.sum())
    dis_share = float(V[~ok].sum()) / total if total > 0 else 0.0
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    out: List[Reaction] = []
    if "none" in reactions:
        t0 = time.perf_counter()
        load = intact.loads.copy()
        lost = 0.0
        for j in intact.routing.affected(dead).tolist():
            for arcs, f in intact.routing.column_loads(j):
                np.subtract.at(load, arcs, f)
            delivered, after = intact.routing.column_after(j, dead)
            for arcs, f in after:
                np.add.at(load, arcs, f)
            lost += float(intact.routing.flows[j]) - delivered
        out.append(Reaction("none", _mlu_of(np.maximum(load, 0.0), cap, ~dead), ndis,
                            lost=lost / total if total > 0 else 0.0,
                            seconds=time.perf_counter() - t0))
    dem = np.empty(int(ok.sum()), dtype=[("src", np.int32), ("dst", np.int32), ("bw", np.float64)])
    dem["src"], dem["dst"], dem["bw"] = S[ok], T[ok], V[ok]  # router ids: no name lookup
    dropped = set(sc.nodes)
    cand, owner = (intact.seqs, intact.owner) if model == "sr" else (intact.warm, intact.warm_owner)
    table = [cand[j] for j in np.flatnonzero(ok[owner]).tolist()
             if not dropped or not dropped.intersection(cand[j][1:-1])]

    def solve(label: str, columns: Optional[List[Tuple[int, ...]]], fixed: bool) -> Reaction:
        t0 = time.perf_counter()
        r = min_mlu(ftopo, dem, model=model, k=intact.k, solver=intact.solver,
                    initial_columns=columns, fixed_columns=fixed, routing=False, segments=known)
        bound = math.nan
        if len(r.demand_prices):
            bound = float(np.dot(r.volumes, r.demand_prices))
        gap = r.mlu / bound - 1.0 if bound > 0 and math.isfinite(r.mlu) else math.nan
        return Reaction(label, float(r.mlu), ndis, lost=dis_share, dual_bound=bound, gap=gap,
                        columns=r.columns, iterations=r.iterations,
                        seconds=time.perf_counter() - t0, warm=columns is not None and not fixed)

    reopt: Optional[Reaction] = None
    known = intact.segments.after_failure(ftopo, amap)  # the DAGs the failure left alone
    if "hosts" in reactions and model != "mcf":
        if model == "sr":
            out.append(solve("hosts", table, True))
        else:
            reopt = solve("reoptimised", table if warm and model in WARM else None, False)
            out.append(dataclasses.replace(reopt, reaction="hosts"))
    if "reoptimised" in reactions:
        if reopt is None and model == "mcf" and ndis == 0 and math.isfinite(res.mlu) \
                and not (dead & (intact.loads > 0)).any():
            # no traffic on the failed links: the intact routing stays feasible and removing
            # links never lowers the optimum, so it is the failed graph's
            reopt = Reaction("reoptimised", float(res.mlu), 0, dual_bound=float(res.mlu),
                             gap=0.0, warm=True)
        if reopt is None:
            reopt = solve("reoptimised", table if warm and model in WARM else None, False)
        out.append(reopt)
    return out

#!/usr/bin/env python
"""tpcstudy's path operations side by side with rustworkx, python-igraph and networkx (issue 29).

Every library gets the same graph (the pruned Zoo topology: same router ids, same links, the
topology's IGP weights) and the same random ordered router pairs, and every output is checked
across libraries for every pair before any time is reported: path sets equal as sets, link-
disjoint path sets valid and of the same size, ECMP ratios within 1e-12, distances exactly
equal. Repetitions are interleaved (each repetition runs every library once, in a rotated order)
with the garbage collector off (a call below 50 ms is timed as the mean of a loop of calls that
lasts about 50 ms); each cell is the median over repetitions, with the range, and
the process CPU time beside the wall time (the CPU time counts every thread, so CPU > wall means
threads were busy in parallel).

Operations (one row each, per topology):

- ``shortest_paths``: every equal-cost shortest path of a pair (tpcstudy's named API, router
  names in and out; the peers by node id);
- ``disjoint_paths``: link-disjoint paths of a pair, the paths themselves (tpcstudy
  ``edge_disjoint_paths``; igraph: its max flow decomposed into paths in Python; networkx
  ``edge_disjoint_paths``; rustworkx has no max flow);
- ``disjoint_count``: how many link-disjoint paths (tpcstudy ``edge_disjoint_path_count``,
  igraph ``edge_disjoint_paths``, networkx ``edge_connectivity``);
- ``ecmp_ratios``: the ECMP split of one pair (tpcstudy's named API; the peers have no ECMP
  split, so theirs is the recipe a user would write: the library's distances from the target,
  then the even split over the next-hop DAG in Python, the same code for all three);
- ``segment_ratios``: the same split for all pairs at once (tpcstudy's batch call; the recipe
  once per distinct target);
- ``distance_matrix``: all-pairs distances as a matrix, the first call (tpcstudy builds nothing
  in advance: every timed call is on a topology with no routing table, checked after the
  timing, so each one computes the matrix; rustworkx ``graph_distance_matrix``, igraph
  ``distances``, networkx ``all_pairs_shortest_path_length``; weighted variants when the
  weights are not all equal);
- ``distances_from``: distances from one source to every router.

With hop weights (every weight equal, as the Zoo's default rule gives) each peer runs its
breadth-first variant where it has one: the strongest peer is the one to beat. networkx, 10-300x
slower than the others and never the strongest, runs on the first ``--nx-pairs`` pairs (and
sources) only, its time still per pair.

Every ratio is printed with its spread: the repetitions are interleaved, so repetition i of a
peer and of tpcstudy ran side by side; the ratio of each repetition's pair of times is taken,
and the cell shows their median and range (the machine's noise hits both sides of a pair
alike). ``--busy N`` starts N processes of a busy loop for the run (this script's own children,
stopped by their pids at the end): the same rows with N CPUs kept busy.

Then the MLU rows (``--mlu``, REPETITA instances; :mod:`mlu_peers`): ``min_mlu(model="mcf")``
against the plain source-aggregated arc LP in highspy, ``min_mlu(model="ecmp")`` against a
networkx script, ``--mlu-reps`` interleaved repetitions each, ratios with their range.

    python benchmarks/peers.py                                 # Abilene, Cogentco, Kdl: 2,000 pairs, 5 reps
    python benchmarks/peers.py --busy 1                        # the same with one CPU kept busy
    python benchmarks/peers.py --topos Abilene --pairs 50 --reps 2 --out /tmp/peers

Writes ``peers.json`` (every measurement, versions, the machine) and ``peers.md`` (the README's
table) into ``--out``, and with ``--readme README.md`` the table into the README's block between
its two ``benchmarks/peers.py`` markers; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import copy
import gc
import heapq
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import tpcstudy
from tpcstudy import paths as P

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mlu_peers import mlu_markdown, mlu_rows  # noqa: E402  (this folder's MLU peers)

LIBS = ("tpcstudy", "rustworkx", "igraph", "networkx")
INF = math.inf
#: ECMP ratios must agree this closely (the sums run in different orders).
RATIO_TOL = 1e-12
#: tpcstudy "tied" with a peer: at most this much slower (the issue's 10 %).
TIE = 1.10


# --------------------------------------------------------------------------- graphs
class Graphs:
    """The same topology in every library, node ids = tpcstudy router ids."""

    def __init__(self, topo: tpcstudy.Topology, libs: Sequence[str]) -> None:
        self.topo = topo
        self.n = topo.num_nodes
        u, v = topo.link_u.tolist(), topo.link_v.tolist()
        w = topo.arc_weight[0::2].tolist()
        if not np.array_equal(topo.arc_weight[0::2], topo.arc_weight[1::2]):
            raise SystemExit(f"{topo.name}: asymmetric weights; the peers' graphs are undirected")
        self.edges = list(zip(u, v, w))
        self.unit = len(set(w)) <= 1
        self.integer = all(float(x).is_integer() for x in w)
        # Adjacency for the Python recipes: nbrs[u] = [(v, w), ...] in link order.
        self.nbrs: List[List[Tuple[int, float]]] = [[] for _ in range(self.n)]
        for a, b, c in self.edges:
            self.nbrs[a].append((b, c))
            self.nbrs[b].append((a, c))
        self.rx = self.ig = self.nx = None
        self.fresh: Optional[tpcstudy.Topology] = None  # distance_matrix's topology (runners)
        if "rustworkx" in libs:
            import rustworkx as rx

            self.rx = rx.PyGraph(multigraph=False)
            self.rx.add_nodes_from(range(self.n))
            self.rx.add_edges_from(self.edges)
        if "igraph" in libs:
            import igraph as ig

            self.ig = ig.Graph(n=self.n, edges=[(a, b) for a, b, _ in self.edges])
            self.ig_w = None if self.unit else [c for _, _, c in self.edges]
        if "networkx" in libs:
            import networkx as nx

            self.nx = nx.Graph()
            self.nx.add_nodes_from(range(self.n))
            self.nx.add_weighted_edges_from(self.edges)


# --------------------------------------------------------------------------- recipes
def same_cost(g: Graphs, a: float, b: float) -> bool:
    """tpcstudy's equal-cost rule (docs/method.md §3): exact for integer weights."""
    if g.integer:
        return a == b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def ecmp_split(g: Graphs, dist: Sequence[float], s: int, t: int) -> Dict[Tuple[int, int], float]:
    """ECMP split of one unit s -> t given the distances to t: each router of the shortest-path
    DAG splits what it receives evenly among its next hops (nodes in decreasing distance to t,
    ties by id, as tpcstudy does, so the sums run in the same order)."""
    if s == t or dist[s] == INF:
        return {}
    nbrs, out = g.nbrs, {}
    flow = {s: 1.0}
    heap = [(-dist[s], s)]
    exact = g.integer
    while heap:
        _, u = heapq.heappop(heap)
        if u == t:
            continue
        du = dist[u]
        if exact:
            nh = [v for v, w in nbrs[u] if dist[v] < du and dist[v] + w == du]
        else:
            nh = [v for v, w in nbrs[u] if dist[v] < du and same_cost(g, du, w + dist[v])]
        share = flow[u] / len(nh)
        for v in nh:
            out[(u, v)] = share
            if v in flow:
                flow[v] += share
            else:
                flow[v] = share
                heapq.heappush(heap, (-dist[v], v))
    return out


def rx_dist(g: Graphs, source: int) -> List[float]:
    """rustworkx distances from one source as a list (breadth-first layers for hop weights)."""
    import rustworkx as rx

    d = [INF] * g.n
    if g.unit:
        w = g.edges[0][2] if g.edges else 1.0
        for i, layer in enumerate(rx.bfs_layers(g.rx, [source])):
            for x in layer:
                d[x] = i * w
    else:
        for x, v in rx.graph_dijkstra_shortest_path_lengths(g.rx, source, float).items():
            d[x] = v
        d[source] = 0.0
    return d


def ig_dist(g: Graphs, source: int) -> List[float]:
    return g.ig.distances(source=source, weights=g.ig_w)[0]


def nx_dist(g: Graphs, source: int) -> List[float]:
    import networkx as nx

    d = [INF] * g.n
    if g.unit:
        w = g.edges[0][2] if g.edges else 1.0
        for x, h in nx.single_source_shortest_path_length(g.nx, source).items():
            d[x] = h * w
    else:
        for x, v in nx.single_source_dijkstra_path_length(g.nx, source).items():
            d[x] = v
    return d


DIST: Dict[str, Callable[[Graphs, int], Sequence[float]]] = {
    "rustworkx": rx_dist, "igraph": ig_dist, "networkx": nx_dist}


def ig_disjoint_paths(g: Graphs, s: int, t: int) -> List[List[int]]:
    """igraph's maximum flow (unit capacities) decomposed into link-disjoint paths."""
    if s == t:
        return []
    mf = g.ig.maxflow(s, t)
    flow = mf.flow
    out_arcs: Dict[int, List[int]] = defaultdict(list)
    for (a, b, _), f in zip(g.edges, flow):
        if f > 0.5:
            out_arcs[a].append(b)
        elif f < -0.5:
            out_arcs[b].append(a)
    paths = []
    for _ in range(int(round(mf.value))):  # each walk from s reaches t (flow conservation)
        path, u = [s], s
        while u != t:
            v = out_arcs[u].pop()
            if v in path:  # a flow cycle (it may pass through s): drop it
                del path[path.index(v) + 1:]
            else:
                path.append(v)
            u = v
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- operations
# Each operation: for every library, a function running it over the pairs (or sources) and
# returning the outputs, and a check of one library's outputs against tpcstudy's.
class Op:
    def __init__(self, key: str, label: str, unit: str, per: str) -> None:
        self.key, self.label, self.unit, self.per = key, label, unit, per


OPS = [
    Op("shortest_paths", "all equal-cost shortest paths", "us/pair", "pair"),
    Op("disjoint_paths", "link-disjoint paths (the paths)", "us/pair", "pair"),
    Op("disjoint_count", "link-disjoint paths (the count)", "us/pair", "pair"),
    Op("ecmp_ratios", "ECMP split, one pair a call", "us/pair", "pair"),
    Op("segment_ratios", "ECMP split, all pairs in one batch", "us/pair", "pair"),
    Op("distance_matrix", "APSP matrix (first call)", "ms", "call"),
    Op("distances_from", "distances from one source", "us/source", "source"),
]


def runners(g: Graphs, pairs: List[Tuple[int, int]], sources: List[int], nx_pairs: Optional[int] = None
            ) -> Dict[str, Dict[str, Callable[[], Any]]]:
    """op -> lib -> a function doing the whole measured work and returning its outputs
    (networkx: on the first ``nx_pairs`` pairs and sources only, when given)."""
    topo = g.topo
    names = topo.names
    named = [(names[s], names[t]) for s, t in pairs]
    S = np.array([s for s, _ in pairs], np.int32)
    T = np.array([t for _, t in pairs], np.int32)
    by_target: Dict[int, List[int]] = defaultdict(list)
    for i, (_, t) in enumerate(pairs):
        by_target[t].append(i)
    r: Dict[str, Dict[str, Callable[[], Any]]] = {op.key: {} for op in OPS}

    # tpcstudy
    r["shortest_paths"]["tpcstudy"] = lambda: [tpcstudy.shortest_paths(topo, s, t) for s, t in named]
    r["disjoint_paths"]["tpcstudy"] = lambda: [tpcstudy.edge_disjoint_paths(topo, s, t)
                                               for s, t in named]
    r["disjoint_count"]["tpcstudy"] = lambda: [tpcstudy.edge_disjoint_path_count(topo, s, t)
                                               for s, t in named]
    r["ecmp_ratios"]["tpcstudy"] = lambda: [tpcstudy.ecmp_ratios(topo, s, t) for s, t in named]
    r["segment_ratios"]["tpcstudy"] = lambda: P.segment_ratios(topo, S, T)
    # The first call: a Topology object sharing the compiled graph, made once here, on which
    # no routing table is ever built (the per-topology caches are keyed by the object, and
    # distance_matrix builds none; run_topology checks it after the timing), so every timed
    # call computes the matrix, and none copies the topology.
    fresh = g.fresh = copy.copy(topo)
    r["distance_matrix"]["tpcstudy"] = lambda: P.distance_matrix(fresh)
    r["distances_from"]["tpcstudy"] = lambda: [P.shortest_distances(topo, s) for s in sources]

    def recipe_batch(dist: Callable[[Graphs, int], Sequence[float]],
                     pairs: List[Tuple[int, int]] = pairs,
                     by_target: Dict[int, List[int]] = by_target) -> List[Dict]:
        out: List[Dict] = [{}] * len(pairs)
        for t, idx in by_target.items():
            d = dist(g, t)
            for i in idx:
                out[i] = ecmp_split(g, d, pairs[i][0], t)
        return out

    if g.rx is not None:
        import rustworkx as rx

        wf = None if g.unit else float
        r["shortest_paths"]["rustworkx"] = lambda: [
            rx.graph_all_shortest_paths(g.rx, s, t, weight_fn=wf) for s, t in pairs]
        r["ecmp_ratios"]["rustworkx"] = lambda: [ecmp_split(g, rx_dist(g, t), s, t) for s, t in pairs]
        r["segment_ratios"]["rustworkx"] = lambda: recipe_batch(rx_dist)
        if g.unit and (not g.edges or g.edges[0][2] == 1.0):
            r["distance_matrix"]["rustworkx"] = lambda: rx.graph_distance_matrix(g.rx, null_value=INF)
        elif g.unit:  # hop counts times the one weight
            r["distance_matrix"]["rustworkx"] = lambda: rx.graph_distance_matrix(
                g.rx, null_value=INF) * g.edges[0][2]
        else:
            r["distance_matrix"]["rustworkx"] = lambda: rx.graph_floyd_warshall_numpy(g.rx, float)
        r["distances_from"]["rustworkx"] = lambda: [rx_dist(g, s) for s in sources]
    if g.ig is not None:
        ig, w = g.ig, g.ig_w
        r["shortest_paths"]["igraph"] = lambda: [ig.get_all_shortest_paths(s, to=t, weights=w)
                                                 for s, t in pairs]
        r["disjoint_paths"]["igraph"] = lambda: [ig_disjoint_paths(g, s, t) for s, t in pairs]
        r["disjoint_count"]["igraph"] = lambda: [ig.edge_disjoint_paths(s, t) for s, t in pairs]
        r["ecmp_ratios"]["igraph"] = lambda: [ecmp_split(g, ig_dist(g, t), s, t) for s, t in pairs]
        r["segment_ratios"]["igraph"] = lambda: recipe_batch(ig_dist)
        r["distance_matrix"]["igraph"] = lambda: ig.distances(weights=w)
        r["distances_from"]["igraph"] = lambda: [ig_dist(g, s) for s in sources]
    if g.nx is not None:
        import networkx as nx

        h, wn = g.nx, (None if g.unit else "weight")
        npairs, nsources = pairs[:nx_pairs], sources[:nx_pairs]
        nby_target: Dict[int, List[int]] = defaultdict(list)
        for i, (_, t) in enumerate(npairs):
            nby_target[t].append(i)
        r["shortest_paths"]["networkx"] = lambda: [list(nx.all_shortest_paths(h, s, t, weight=wn))
                                                   for s, t in npairs]
        r["disjoint_paths"]["networkx"] = lambda: [list(nx.edge_disjoint_paths(h, s, t))
                                                   for s, t in npairs]
        r["disjoint_count"]["networkx"] = lambda: [nx.edge_connectivity(h, s, t) for s, t in npairs]
        r["ecmp_ratios"]["networkx"] = lambda: [ecmp_split(g, nx_dist(g, t), s, t) for s, t in npairs]
        r["segment_ratios"]["networkx"] = lambda: recipe_batch(nx_dist, npairs, nby_target)
        if g.unit:
            r["distance_matrix"]["networkx"] = lambda: dict(nx.all_pairs_shortest_path_length(h))
        else:
            r["distance_matrix"]["networkx"] = lambda: dict(nx.all_pairs_dijkstra_path_length(h))
        r["distances_from"]["networkx"] = lambda: [nx_dist(g, s) for s in nsources]
    return r


# --------------------------------------------------------------------------- checks
def _ids(topo: tpcstudy.Topology, paths: List[List[str]]) -> List[List[int]]:
    return [[topo.index_of(x) for x in p] for p in paths]


def check_disjoint(g: Graphs, s: int, t: int, paths: List[List[int]]) -> Optional[str]:
    """Valid link-disjoint s -> t paths on the graph's links? None, else what is wrong."""
    links = {(min(a, b), max(a, b)) for a, b, _ in g.edges}
    used = set()
    for p in paths:
        if not p or p[0] != s or p[-1] != t:
            return f"path {p} does not run {s} -> {t}"
        for a, b in zip(p[:-1], p[1:]):
            key = (min(a, b), max(a, b))
            if key not in links:
                return f"path {p} uses {a}-{b}, not a link"
            if key in used:
                return f"link {a}-{b} used twice"
            used.add(key)
    return None


def as_matrix(g: Graphs, lib: str, out: Any) -> np.ndarray:
    if lib == "networkx":
        d = np.full((g.n, g.n), INF)
        w = g.edges[0][2] if g.unit and g.edges else 1.0
        for a, row in out.items():
            for b, v in row.items():
                d[a, b] = v * w if g.unit else v
        return d
    return np.asarray(out, dtype=np.float64)


def check(g: Graphs, op: str, lib: str, ref: Any, out: Any, pairs: List[Tuple[int, int]],
          sources: List[int]) -> List[str]:
    """Differences between ``lib``'s outputs and tpcstudy's (``ref``); [] when they agree."""
    topo, bad = g.topo, []
    arc = list(zip(topo.arc_src.tolist(), topo.arc_dst.tolist()))
    if op == "shortest_paths":
        for (s, t), a, b in zip(pairs, ref, out):
            a_ids = sorted(map(tuple, _ids(topo, a)))
            if len(a) >= 1000:
                bad.append(f"{s}->{t}: tpcstudy hit its limit of 1000 paths")
            if a_ids != sorted(map(tuple, b)):
                bad.append(f"{s}->{t}: {len(a_ids)} vs {len(b)} paths or different ones")
    elif op == "disjoint_paths":
        for (s, t), a, b in zip(pairs, ref, out):
            a_ids = _ids(topo, a)
            for who, ps in (("tpcstudy", a_ids), (lib, b)):
                why = check_disjoint(g, s, t, [list(p) for p in ps])
                if why:
                    bad.append(f"{s}->{t} {who}: {why}")
            if len(a_ids) != len(b):
                bad.append(f"{s}->{t}: {len(a_ids)} vs {len(b)} paths")
    elif op == "disjoint_count":
        for (s, t), a, b in zip(pairs, ref, out):
            if a != int(b):
                bad.append(f"{s}->{t}: {a} vs {b} paths")
    elif op in ("ecmp_ratios", "segment_ratios"):
        if op == "ecmp_ratios":
            idx = {x: i for i, x in enumerate(topo.names)}
            mine = [{(idx[u], idx[v]): f for (u, v), f in r.items()} for r in ref]
        else:
            off, arcs, fr = (x.tolist() for x in ref)
            mine = [{arc[a]: f for a, f in zip(arcs[off[i]:off[i + 1]], fr[off[i]:off[i + 1]])}
                    for i in range(len(pairs))]
        for (s, t), a, b in zip(pairs, mine, out):
            if a.keys() != b.keys():
                bad.append(f"{s}->{t}: different arcs ({len(a)} vs {len(b)})")
            elif a and max(abs(a[x] - b[x]) for x in a) > RATIO_TOL:
                bad.append(f"{s}->{t}: ratios differ by {max(abs(a[x] - b[x]) for x in a):.2e}")
    elif op == "distance_matrix":
        if not np.array_equal(np.asarray(ref), as_matrix(g, lib, out)):
            bad.append("matrices differ")
    elif op == "distances_from":
        for s, a, b in zip(sources, ref, out):
            if not np.array_equal(np.asarray(a), np.asarray(b, dtype=np.float64)):
                bad.append(f"from {s}: distances differ")
    return bad


# --------------------------------------------------------------------------- timing
def timed(fn: Callable[[], Any], calls: int = 1) -> Tuple[float, float]:
    """Wall and CPU seconds of one ``fn()``: the mean over ``calls`` back-to-back calls (a call
    well under a millisecond is timed in a loop, as the pair operations are)."""
    gc.collect()
    gc.disable()
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        gc.enable()
    return wall / calls, cpu / calls


def summary(xs: List[float], scale: float) -> Dict[str, float]:
    return {"median": statistics.median(xs) * scale, "min": min(xs) * scale, "max": max(xs) * scale}


def spread(r: Dict[str, float]) -> str:
    """A ratio with its spread over the repetitions: ``median x (min-max)``."""
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"


def _first_segments(ref: Any, k: int) -> Any:
    """tpcstudy's segment_ratios output (CSR arrays) cut to its first ``k`` segments."""
    off, arcs, fr = ref
    end = int(off[k])
    return off[:k + 1], arcs[:end], fr[:end]


def run_topology(name: str, args: argparse.Namespace, libs: Sequence[str]) -> Dict[str, Any]:
    src = Path(args.zoo) / f"{name}.gml" if args.zoo else f"zoo/{name}"
    topo = tpcstudy.prune(tpcstudy.read_topology(src))
    g = Graphs(topo, libs)
    rng = random.Random(args.seed)
    n = topo.num_nodes
    pairs = [tuple(rng.sample(range(n), 2)) for _ in range(args.pairs)]
    sources = [s for s, _ in pairs]
    nx_pairs = min(args.nx_pairs, len(pairs))
    run = runners(g, pairs, sources, nx_pairs)  # type: ignore[arg-type]
    tpcstudy.edge_disjoint_paths(topo, 0, 1)  # module and caches loaded before any timing
    result: Dict[str, Any] = {"topology": name, "routers": n, "links": topo.num_links,
                              "unit_weights": g.unit, "pairs": len(pairs), "ops": {}}
    failed = False
    for op in OPS:
        fns = run[op.key]
        if args.ops and op.key not in args.ops:
            continue
        items = 1 if op.per == "call" else len(pairs)

        def scale_of(lib: str, op: Op = op, items: int = items) -> float:
            if op.unit == "ms":
                return 1e3
            return 1e6 / (nx_pairs if lib == "networkx" else items)

        order = [lib for lib in libs if lib in fns]
        walls: Dict[str, List[float]] = {lib: [] for lib in order}
        cpus: Dict[str, List[float]] = {lib: [] for lib in order}
        outs: Dict[str, Any] = {}
        calls: Dict[str, int] = {}
        for lib in order:  # untimed runs: imports, first-call work, the outputs, the pace
            outs[lib] = fns[lib]()
            t0 = time.perf_counter()
            fns[lib]()
            # one timed block lasts about 50 ms or more: a lone call of 0.1-5 ms right after
            # gc.collect() would mostly time cold caches and parked worker threads, and a
            # block of a few ms (Abilene's 1 us matrix, 1,000 calls) would be half a
            # preemption on a busy machine: up to 100,000 calls
            calls[lib] = max(1, min(100000, round(args.block / max(time.perf_counter() - t0, 1e-7))))
        checks: Dict[str, List[str]] = {}
        for lib in order[1:]:
            ref, ps, ss = outs["tpcstudy"], pairs, sources
            if lib == "networkx" and op.per != "call":  # its subset of the pairs and sources
                ps, ss = pairs[:nx_pairs], sources[:nx_pairs]
                ref = (_first_segments(ref, nx_pairs) if op.key == "segment_ratios"
                       else ref[:nx_pairs])
            checks[lib] = check(g, op.key, lib, ref, outs[lib], ps, ss)  # type: ignore[arg-type]
            failed |= bool(checks[lib])
        for rep in range(args.reps):
            k = rep % len(order)
            for lib in order[k:] + order[:k]:  # interleaved, rotated
                wall, cpu = timed(fns[lib], calls[lib])
                walls[lib].append(wall)
                cpus[lib].append(cpu)
        if op.key == "distance_matrix" and P._routing_if_built(g.fresh) is not None:
            raise SystemExit("distance_matrix: a routing table was built on the first-call "
                             "topology; the timing did not measure first calls")
        row: Dict[str, Any] = {"label": op.label, "unit": op.unit, "items": items, "libs": {}}
        for lib in order:
            sc = scale_of(lib)
            row["libs"][lib] = {"wall": summary(walls[lib], sc), "cpu": summary(cpus[lib], sc),
                                "calls_per_timing": calls[lib],
                                "check": "reference" if lib == "tpcstudy" else
                                ("ok" if not checks[lib] else checks[lib][:5]),
                                "check_failures": 0 if lib == "tpcstudy" else len(checks[lib])}
        peers = {lib: row["libs"][lib]["wall"]["median"] for lib in order[1:]}
        for lib in order[1:]:  # per repetition: the two times of one interleaved round
            for key, xs in (("ratio", walls), ("cpu_ratio", cpus)):
                per_rep = [(p * scale_of(lib)) / max(o * scale_of("tpcstudy"), 1e-12)
                           for p, o in zip(xs[lib], xs["tpcstudy"])]
                row["libs"][lib][key] = summary(per_rep, 1.0)
        if peers:
            best = min(peers, key=lambda x: peers[x])
            row["strongest_peer"] = best
            row["ratio_spread"] = row["libs"][best]["ratio"]
            row["ratio"] = row["ratio_spread"]["median"]  # > 1: tpcstudy faster
            row["verdict"] = ("ahead" if row["ratio"] >= 1.0 else
                              "tied" if row["ratio"] * TIE >= 1.0 else "behind")
        result["ops"][op.key] = row
        line = "  ".join(f"{lib} {row['libs'][lib]['wall']['median']:.3g}" for lib in order)
        bad = {lib: c for lib, c in checks.items() if c}
        print(f"{name:9s} {op.key:16s} {op.unit:9s} {line}"
              + (f"  -> {row['verdict']} {spread(row['ratio_spread'])} vs {row['strongest_peer']}"
                 f" (CPU time {spread(row['libs'][row['strongest_peer']]['cpu_ratio'])})"
                 if peers else "") + (f"  CHECK FAILED {bad}" if bad else ""), flush=True)
    result["failed"] = failed
    return result


# --------------------------------------------------------------------------- report
def fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _ratio_cell(row: Dict[str, Any], lib: str) -> str:
    cell = row["libs"][lib]
    if "ratio" in cell:
        return spread(cell["ratio"])
    return f"{cell['wall']['median'] / row['libs']['tpcstudy']['wall']['median']:.2f}x"  # old JSON


def markdown(results: List[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    busy = meta.get("busy", 0)
    nx_note = (f" (networkx: the first {meta['nx_pairs']})" if meta.get("nx_pairs") else "")
    lines = [
        f"`python benchmarks/peers.py{f' --busy {busy}' if busy else ''}` ({meta['pairs']} random "
        f"ordered router pairs{nx_note}, the same for every library; {meta['reps']} interleaved "
        f"repetitions, GC off; {meta['cpus']} CPUs"
        + (f", {busy} of them kept busy by another process" if busy else "")
        + f"; load average {meta.get('loadavg', '?')} at the start; "
        f"{', '.join(f'{k} {v}' for k, v in meta['versions'].items())}). tpcstudy: median wall "
        f"time; peers: their time over tpcstudy's (higher: tpcstudy faster), the median of the "
        f"repetitions' ratios with their range; the last column the same ratio of CPU "
        f"times (the process's, every thread: on a busy machine a single-threaded call's CPU "
        f"time is steadier than its wall time, which counts the waits for a CPU). Every "
        f"output was checked against tpcstudy's for every pair.",
        "",
        "| operation | topology | tpcstudy | rustworkx | igraph | networkx | tpcstudy vs the strongest "
        "| the same, CPU time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for op in OPS:
        for r in results:
            row = r["ops"].get(op.key)
            if not row:
                continue
            cells = [fmt(row["libs"]["tpcstudy"]["wall"]["median"])]
            cells += [_ratio_cell(row, lib) if lib in row["libs"] else "none" for lib in LIBS[1:]]
            verdict = (f"{row['verdict']} {_ratio_cell(row, row['strongest_peer'])} vs "
                       f"{row['strongest_peer']}" if "ratio" in row else "-")
            best = row["libs"].get(row.get("strongest_peer", ""), {})
            cpu = spread(best["cpu_ratio"]) if "cpu_ratio" in best else "-"
            lines.append(f"| {op.label}, {op.unit} | {r['topology']} | " + " | ".join(cells)
                         + f" | {verdict} | {cpu} |")
    cpu_rows = []
    for op in OPS:
        for r in results:
            row = r["ops"].get(op.key)
            if not row:
                continue
            cpu_rows.append(f"| {op.key} | {r['topology']} | " + " | ".join(
                f"{fmt(row['libs'][lib]['wall']['min'])}-{fmt(row['libs'][lib]['wall']['max'])}"
                f" (cpu {fmt(row['libs'][lib]['cpu']['median'])})" if lib in row["libs"] else "none"
                for lib in LIBS) + " |")
    lines += ["", "Range of the wall times over the repetitions and median CPU time (same units):",
              "", "| operation | topology | " + " | ".join(LIBS) + " |",
              "|---" * (len(LIBS) + 2) + "|", *cpu_rows]
    return "\n".join(lines) + "\n"


README_BEGIN = "<!-- benchmarks/peers.py: begin -->"
README_END = "<!-- benchmarks/peers.py: end -->"


def write_readme(path: Path, md: str) -> None:
    """Replace the lines between README_BEGIN and README_END in ``path`` with ``md``."""
    text = path.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"{path}: no {README_BEGIN!r} ... {README_END!r} block to replace")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_BEGIN}\n{md}{README_END}{tail}")


def versions(libs: Sequence[str]) -> Dict[str, str]:
    out = {"tpcstudy": tpcstudy.__version__}
    for lib, mod in (("rustworkx", "rustworkx"), ("igraph", "igraph"), ("networkx", "networkx")):
        if lib in libs:
            out[lib] = __import__(mod).__version__
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default=None, help="a folder of Zoo GML files (default: the installed Zoo)")
    ap.add_argument("--topos", nargs="+", default=["Abilene", "Cogentco", "Kdl"])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--block", type=float, default=0.05,
                    help="seconds one timed block of back-to-back calls lasts at least")
    ap.add_argument("--ops", nargs="*", default=None, help="only these operations")
    ap.add_argument("--nx-pairs", type=int, default=50,
                    help="networkx runs on this many of the pairs (and sources) only")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="keep N CPUs busy during the run (N busy-loop child processes)")
    ap.add_argument("--libs", nargs="+", default=list(LIBS[1:]), help="the peers to run")
    ap.add_argument("--mlu", nargs="*", default=["Abilene", "GtsCe", "Cogentco"],
                    help="REPETITA instances of the MLU rows (mcf vs the plain arc LP, ecmp vs "
                         "networkx: benchmarks/mlu_peers.py); 'none' or no name: no MLU rows")
    ap.add_argument("--mlu-reps", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results", help="folder for peers.json and peers.md")
    ap.add_argument("--readme", default=None,
                    help="also write the table into this file, between the lines "
                         f"{README_BEGIN!r} and {README_END!r}")
    ap.add_argument("--from-json", default=None, metavar="PEERS_JSON",
                    help="run nothing: write peers.md (and --readme) from an earlier peers.json")
    args = ap.parse_args(argv)
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
        md = markdown(data["results"], data["meta"]) + mlu_markdown(data.get("mlu", []))
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "peers.md").write_text(md)
        if args.readme:
            write_readme(Path(args.readme), md)
        print(md)
        return 1 if data["failed"] else 0
    libs = ["tpcstudy"] + [x for x in LIBS[1:] if x in args.libs]
    loadavg = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        if hogs:
            time.sleep(0.5)  # let them start spinning
        results = [run_topology(name, args, libs) for name in args.topos]
        names = [m for m in args.mlu if m != "none"]
        mlu = mlu_rows(names, args.mlu_reps) if names else []
    finally:
        for h in hogs:  # ours: stopped by the pid we started
            h.kill()
            h.wait()
    meta = {"pairs": args.pairs, "nx_pairs": min(args.nx_pairs, args.pairs), "busy": args.busy,
            "loadavg": loadavg, "reps": args.reps, "seed": args.seed, "cpus": P.available_cpus(),
            "threads": P.default_threads(), "versions": versions(libs),
            "python": sys.version.split()[0], "machine": platform.machine(),
            "processor": platform.processor(), "rayon_threads": os.environ.get("RAYON_NUM_THREADS")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = any(r["failed"] for r in results) or not all(r["same"] for r in mlu)
    (out / "peers.json").write_text(json.dumps({"meta": meta, "results": results, "mlu": mlu,
                                                "failed": failed}, indent=1) + "\n")
    md = markdown(results, meta) + mlu_markdown(mlu)
    (out / "peers.md").write_text(md)
    if args.readme:
        write_readme(Path(args.readme), md)
    print(md)
    if failed:
        print("CHECK FAILED: outputs differ (see peers.json)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

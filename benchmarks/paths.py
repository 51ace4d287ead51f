#!/usr/bin/env python
"""Benchmark the path core against networkx on the pruned Cogentco and Kdl (issue 3).

Times, on the same machine in one run:

- link-disjoint paths, ``max`` (tpcstudy) vs ``nx.edge_disjoint_paths`` and ``greedy`` (tpcstudy)
  vs a networkx greedy (Dijkstra, remove the path's links, repeat), for all ordered edge-router
  pairs and all ordered router pairs;
- ECMP ratios of all ordered router pairs: tpcstudy ``segment_ratios`` vs a networkx-based
  computation (one Dijkstra per target, then the per-hop even split for every source);
- with ``--single N``: N single-pair calls of the named API (``edge_disjoint_paths``,
  ``shortest_paths``, ``ecmp_ratios`` against networkx; ``sr_path`` k = 4 against the batch
  core's time per pair).

When a pair set has more than ``--nx-max-pairs`` pairs, networkx runs on a random sample of
``--sample`` pairs (ECMP: ``--ecmp-targets`` random targets with all their sources) and its time is
extrapolated linearly; the output says so. The counts/ratios of both sides are compared on the
pairs networkx ran.

Usage: python benchmarks/paths.py [--zoo DIR] [--topos Cogentco Kdl] [--threads 0]
       [--single 2000] [--single-only]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import networkx as nx
import numpy as np

import tpcstudy
from tpcstudy import paths as P


def nx_graph(topo: tpcstudy.Topology) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(topo.num_nodes))
    for i, (u, v) in enumerate(zip(topo.link_u.tolist(), topo.link_v.tolist())):
        g.add_edge(u, v, weight=float(topo.arc_weight[2 * i]))
    return g


def nx_greedy(g: nx.Graph, s: int, t: int) -> List[List[int]]:
    h = g.copy()
    out = []
    while True:
        try:
            p = nx.dijkstra_path(h, s, t, weight="weight")
        except nx.NetworkXNoPath:
            return out
        out.append(p)
        h.remove_edges_from(zip(p[:-1], p[1:]))


def nx_ratios_to(g: nx.Graph, t: int, sources: Sequence[int]) -> Dict[int, Dict[Tuple[int, int], float]]:
    """ECMP ratios of every segment s -> t, networkx distances and a plain Python DAG pass."""
    dist = nx.single_source_dijkstra_path_length(g, t, weight="weight")
    nh = {u: [v for v in g[u] if v in dist and dist[v] < dist[u]
              and abs(dist[u] - g[u][v]["weight"] - dist[v]) <= 1e-9 * dist[u]] for u in dist}
    order = sorted(dist, key=lambda x: (-dist[x], x))
    rank = {u: i for i, u in enumerate(order)}
    out = {}
    for s in sources:
        r: Dict[Tuple[int, int], float] = {}
        if s in dist and s != t:
            flow = {s: 1.0}
            for u in order[rank[s]:]:
                f = flow.get(u, 0.0)
                if u == t or f == 0.0:
                    continue
                share = f / len(nh[u])
                for v in nh[u]:
                    r[(u, v)] = share
                    flow[v] = flow.get(v, 0.0) + share
        out[s] = r
    return out


def fmt_row(topo: str, pairs_name: str, task: str, pairs: int, ours: float, theirs: float,
            note: str) -> str:
    return (f"{topo:9s} {pairs_name:6s} {task:7s} {pairs:8d} {ours:10.3f} {theirs:12.2f} "
            f"{theirs / ours:9.0f}x  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default=None,
                    help="a folder of Zoo GML files (default: the installed Topology Zoo)")
    ap.add_argument("--topos", nargs="+", default=["Cogentco", "Kdl"])
    ap.add_argument("--nx-max-pairs", type=int, default=30000,
                    help="run networkx on every pair up to this many pairs, else on a sample")
    ap.add_argument("--sample", type=int, default=1000, help="networkx sample size (pairs)")
    ap.add_argument("--ecmp-targets", type=int, default=40,
                    help="networkx ECMP sample: this many targets, all sources each")
    ap.add_argument("--threads", type=int, default=0, help="tpcstudy core threads (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--single", type=int, default=2000,
                    help="single-pair calls of the named API per topology (0: skip)")
    ap.add_argument("--single-only", action="store_true",
                    help="time only the single-pair calls (skip the batch comparisons)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    print(f"tpcstudy {tpcstudy.__version__}, networkx {nx.__version__}, threads={args.threads}")
    print(f"{'topology':9s} {'pairs':6s} {'task':7s} {'#pairs':>8s} {'tpcstudy s':>10s} "
          f"{'networkx s':>12s} {'speed-up':>10s}  note")
    for name in args.topos:
        src = Path(args.zoo) / f"{name}.gml" if args.zoo else f"zoo/{name}"
        topo = tpcstudy.prune(tpcstudy.read_topology(src))
        g = nx_graph(topo)
        n = topo.num_nodes
        edge = topo.edge_router_ids.tolist()
        sets = {"edge": [(s, t) for s in edge for t in edge if s != t],
                "all": [(s, t) for s in range(n) for t in range(n) if s != t]}
        print(f"# {topo!r}: {len(edge)} edge routers")
        if args.single_only:
            single_calls(topo, g, args.single, rng)
            continue
        for pname, pairs in sets.items():
            src = np.array([p[0] for p in pairs], np.int32)
            dst = np.array([p[1] for p in pairs], np.int32)
            full = len(pairs) <= args.nx_max_pairs
            sample = pairs if full else rng.sample(pairs, args.sample)
            idx = {p: i for i, p in enumerate(pairs)}
            for method in ("max", "greedy"):
                t0 = time.perf_counter()
                batch = P.disjoint_paths_batch(topo, src, dst, method=method,
                                               threads=args.threads)
                ours = time.perf_counter() - t0
                counts = batch.counts
                t0 = time.perf_counter()
                mismatch = 0
                for s, t in sample:
                    if method == "max":
                        c = len(list(nx.edge_disjoint_paths(g, s, t)))
                    else:
                        c = len(nx_greedy(g, s, t))
                    mismatch += c != counts[idx[(s, t)]]
                theirs = time.perf_counter() - t0
                note = "all pairs" if full else (
                    f"networkx extrapolated from {len(sample)} random pairs "
                    f"({theirs:.2f} s measured)")
                if not full:
                    theirs *= len(pairs) / len(sample)
                note += (f"; mean {counts.mean():.3f} paths/pair; count differences: {mismatch}"
                         + ("" if method == "max" else " (tie-breaking differs)"))
                print(fmt_row(name, pname, method, len(pairs), ours, theirs, note), flush=True)

        # ECMP ratios of all ordered router pairs, grouped by target on both sides.
        pairs = sets["all"]
        src = np.array([p[0] for p in pairs], np.int32)
        dst = np.array([p[1] for p in pairs], np.int32)
        t0 = time.perf_counter()
        off, arcs, fr = P.segment_ratios(topo, src, dst)
        ours = time.perf_counter() - t0
        full = len(pairs) <= args.nx_max_pairs
        targets = list(range(n)) if full else rng.sample(range(n), args.ecmp_targets)
        t0 = time.perf_counter()
        ref = {t: nx_ratios_to(g, t, [s for s in range(n) if s != t]) for t in targets}
        theirs = time.perf_counter() - t0
        worst = 0.0
        asrc, adst = topo.arc_src, topo.arc_dst
        pos = {p: i for i, p in enumerate(pairs)}
        for t in targets:
            for s, r in ref[t].items():
                i = pos[(s, t)]
                got = {(int(asrc[a]), int(adst[a])): f for a, f in
                       zip(arcs[off[i]:off[i + 1]].tolist(), fr[off[i]:off[i + 1]].tolist())}
                if got.keys() != r.keys():
                    worst = float("inf")
                else:
                    worst = max([worst] + [abs(got[k] - r[k]) for k in r])
        note = "all pairs" if full else (
            f"networkx extrapolated from {len(targets)} random targets x all sources "
            f"({theirs:.2f} s measured)")
        if not full:
            theirs *= n / len(targets)
        note += f"; {len(arcs)} (segment, arc) entries; max |diff| {worst:.1e}"
        print(fmt_row(name, "all", "ecmp", len(pairs), ours, theirs, note), flush=True)
        if args.single:
            single_calls(topo, g, args.single, rng)


def single_calls(topo: "tpcstudy.Topology", g: "nx.Graph", calls: int, rng: random.Random) -> None:
    """The named single-pair API, one call per pair (what a notebook does), against networkx's
    one call per pair, on the same random router pairs (names in, node lists out); ``sr_path``,
    which networkx has no counterpart for, against the batch core's time per pair for the same
    pairs in one call (what a single call could at best cost)."""
    names = topo.names
    pairs = [tuple(rng.sample(range(topo.num_nodes), 2)) for _ in range(calls)]
    named = [(names[s], names[t]) for s, t in pairs]
    tpcstudy.sr_path(topo, named[0][0], named[0][1], 4)  # the routing tables, built once
    src = np.array([p[0] for p in pairs], np.int32)
    dst = np.array([p[1] for p in pairs], np.int32)
    unit = P.segment_costs(topo, np.ones(2 * topo.num_links))
    for label, ours_fn, ref_fn, ref_name in (
            ("edge_disjoint_paths", lambda s, t: tpcstudy.edge_disjoint_paths(topo, s, t),
             lambda s, t: list(nx.edge_disjoint_paths(g, s, t)), "networkx"),
            ("shortest_paths", lambda s, t: tpcstudy.shortest_paths(topo, s, t),
             lambda s, t: list(nx.all_shortest_paths(g, s, t, weight="weight")), "networkx"),
            ("ecmp_ratios", lambda s, t: tpcstudy.ecmp_ratios(topo, s, t),
             lambda s, t: nx_ratios_to(g, t, [s]), "networkx"),
            ("sr_path k=4", lambda s, t: tpcstudy.sr_path(topo, s, t, 4), None, "batch core")):
        if ref_fn is None:  # one batch call for every pair, per pair
            t0 = time.perf_counter()
            P.best_sr_paths(topo, unit, src, dst, 4)
            theirs, nref = (time.perf_counter() - t0) / calls, calls
            t0 = time.perf_counter()
            for s, t in named:
                ours_fn(s, t)
            ours = (time.perf_counter() - t0) / calls
            print(f"{topo.name:9s} single  {label:20s} {calls:>6d} calls: {ours * 1e6:8.1f} us/call, "
                  f"{ref_name} {theirs * 1e6:8.1f} us/pair ({nref} pairs): "
                  f"{ours / theirs:6.1f}x the batch", flush=True)
            continue
        t0 = time.perf_counter()
        for s, t in named:
            ours_fn(s, t)
        ours = (time.perf_counter() - t0) / calls
        sample = pairs[: max(1, calls // 10)]
        t0 = time.perf_counter()
        for s, t in sample:
            ref_fn(s, t)
        theirs = (time.perf_counter() - t0) / len(sample)
        print(f"{topo.name:9s} single  {label:20s} {calls:>6d} calls: {ours * 1e6:8.1f} us/call, "
              f"{ref_name} {theirs * 1e6:8.1f} us/call ({len(sample)} calls): "
              f"{theirs / ours:6.0f}x", flush=True)


if __name__ == "__main__":
    main()

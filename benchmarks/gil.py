#!/usr/bin/env python
"""The convoy test (issue 29): single-pair calls of the named API beside a busy Python thread.

A core call that releases the GIL hands it to the busy thread, and getting it back waits for
that thread's switch interval (``sys.getswitchinterval()``, 5 ms by default): a 10 us call then
costs milliseconds. The bindings' rule (bindings/gil.hpp) keeps the GIL for calls below about a
millisecond of work. For each call this prints the time per call with no other thread, beside
one spinning Python thread, and the ratio, side by side in one run (2,000 random pairs).

    python benchmarks/gil.py [--topos Cogentco Kdl] [--calls 2000]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from typing import Callable, Dict, List, Tuple

import tpcstudy
from tpcstudy import paths as P


def timed(fn: Callable[[str, str], object], pairs: List[Tuple[str, str]], busy: bool) -> float:
    stop = threading.Event()

    def spin() -> None:
        x = 0
        while not stop.is_set():
            x += 1

    th = threading.Thread(target=spin, daemon=True)
    if busy:
        th.start()
        time.sleep(0.05)
    t0 = time.perf_counter()
    for s, t in pairs:
        fn(s, t)
    out = (time.perf_counter() - t0) / len(pairs)
    stop.set()
    if busy:
        th.join()
    return out


def single_calls(topo: tpcstudy.Topology) -> Dict[str, Callable[[str, str], object]]:
    """The named single-pair calls on ``topo``."""
    return {
        "shortest_paths": lambda s, t: tpcstudy.shortest_paths(topo, s, t),
        "ecmp_ratios": lambda s, t: tpcstudy.ecmp_ratios(topo, s, t),
        "edge_disjoint_paths": lambda s, t: tpcstudy.edge_disjoint_paths(topo, s, t),
        "shortest_distances": lambda s, t: P.shortest_distances(topo, s),
        "dag_arcs": lambda s, t: P.dag_arcs(topo, s, t),
        "sr_path k=4": lambda s, t: tpcstudy.sr_path(topo, s, t, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topos", nargs="+", default=["Cogentco", "Kdl"])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"switch interval {sys.getswitchinterval() * 1e3:.1f} ms; us per call: alone, beside a "
          f"spinning Python thread, ratio")
    for name in args.topos:
        topo = tpcstudy.prune(tpcstudy.read_topology(f"zoo/{name}"))
        rng = random.Random(args.seed)
        names = topo.names
        pairs = [tuple(names[x] for x in rng.sample(range(topo.num_nodes), 2))
                 for _ in range(args.calls)]
        tpcstudy.sr_path(topo, pairs[0][0], pairs[0][1], 4)  # the cached tables, built once
        calls = single_calls(topo)
        for label, fn in calls.items():
            few = pairs if label != "sr_path k=4" else pairs[: max(1, len(pairs) // 4)]
            timed(fn, few[:50], False)
            alone = timed(fn, few, False)
            busy = timed(fn, few, True)
            print(f"{name:9s} {label:20s} {len(few):5d} calls: {alone * 1e6:8.1f} {busy * 1e6:9.1f} "
                  f"{busy / alone:7.1f}x", flush=True)


if __name__ == "__main__":
    main()

"""Time and peak memory of the topology readers on large generated files.

    python benchmarks/readers.py --mb 100            # a ~100 MB GML and a ~100 MB .graph

Writes a Zoo-style GML (node and edge blocks with labels, coordinates, LinkSpeedRaw) and a
REPETITA .graph of about ``--mb`` MB each (a ring plus random chords, seeded), then reads each
with ``tpcstudy.read_topology`` in a fresh process and prints the seconds, the peak RSS and its
ratio to the file size (the goal: under 10x the file size), beside another interpreter's
tpcstudy (``--vs PYTHON``: e.g. an older commit's venv) and networkx's GML reader
(``--networkx``) on the same files.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_gml(path: Path, nodes: int, chords: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write('graph [\n  directed 0\n  Network "Synthetic"\n')
        for i in range(nodes):
            f.write(f'  node [\n    id {i}\n    label "Router {i}"\n    Country "Nowhere"\n'
                    f'    Longitude {rng.uniform(-180, 180):.5f}\n    Internal 1\n'
                    f'    Latitude {rng.uniform(-60, 60):.5f}\n  ]\n')
        for u, v in _links(nodes, chords, rng):
            f.write(f'  edge [\n    source {u}\n    target {v}\n    LinkLabel "10 Gbps"\n'
                    f'    LinkSpeedRaw 10000000000.0\n  ]\n')
        f.write("]\n")


def write_graph(path: Path, nodes: int, chords: int, seed: int) -> None:
    rng = random.Random(seed)
    links = list(_links(nodes, chords, rng))
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"NODES {nodes}\nlabel x y\n")
        for i in range(nodes):
            f.write(f"r{i} {rng.uniform(-180, 180):.5f} {rng.uniform(-60, 60):.5f}\n")
        f.write(f"\nEDGES {2 * len(links)}\nlabel src dest weight bw delay\n")
        for k, (u, v) in enumerate(links):
            w, bw, d = rng.randint(1, 100), 10000000, rng.randint(1, 20)
            f.write(f"e{2 * k} {u} {v} {w} {bw} {d}\ne{2 * k + 1} {v} {u} {w} {bw} {d}\n")


def _links(nodes: int, chords: int, rng: random.Random):
    seen = set()
    for i in range(nodes):
        seen.add((i, (i + 1) % nodes))
        yield i, (i + 1) % nodes
    while chords:
        u, v = rng.randrange(nodes), rng.randrange(nodes)
        if u != v and (u, v) not in seen and (v, u) not in seen:
            seen.add((u, v))
            chords -= 1
            yield u, v


READ = """
import resource, sys, time
t0 = time.perf_counter()
if sys.argv[2] == "networkx":
    import networkx as nx
    g = nx.read_gml(sys.argv[1], label="id")
    n, m = g.number_of_nodes(), g.number_of_edges()
else:
    import tpcstudy
    t = tpcstudy.read_topology(sys.argv[1])
    n, m = t.num_nodes, t.num_links
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, n, m)
"""


def measure(path: Path, reader: str, python: str = sys.executable, label: str = "") -> None:
    out = subprocess.run([python, "-c", READ, str(path), reader], capture_output=True, text=True)
    reader = label or reader
    if out.returncode:
        print(f"  {reader}: failed: {out.stderr.strip()[-300:]}")
        return
    sec, rss_kb, n, m = out.stdout.split()
    size = path.stat().st_size
    rss = int(rss_kb) * 1024
    print(f"  {reader:>9}: {float(sec):7.1f} s  peak RSS {rss / 2**20:7.0f} MiB = "
          f"{rss / size:4.1f}x the file  ({n} routers, {m} links)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=float, default=100.0, help="about this many MB per file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--networkx", action="store_true", help="also time networkx.read_gml")
    ap.add_argument("--vs", metavar="PYTHON",
                    help="also read the files with another interpreter's tpcstudy (e.g. the "
                         "venv of an older commit): before/after in one run")
    ap.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)  # the generator's process
    a = ap.parse_args()
    nodes = max(10, int(a.mb * 1e6 / 340))  # a node block and 2 edge blocks: ~340 B
    if a.write:
        write_gml(Path(a.write) / "big.gml", nodes, nodes, a.seed)
        write_graph(Path(a.write) / "big.graph", nodes * 3 // 2, nodes * 3, a.seed)
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-readers-"))
    gml, graph = work / "big.gml", work / "big.graph"
    t0 = time.perf_counter()
    # in a process of its own: the readers' processes start small (the peak RSS a child reports
    # starts at its parent's RSS when it forks)
    subprocess.run([sys.executable, __file__, "--mb", str(a.mb), "--seed", str(a.seed),
                    "--write", str(work)], check=True)
    print(f"generated in {time.perf_counter() - t0:.0f} s (seed {a.seed}); this process's RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    for path in (gml, graph):
        print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB")
        measure(path, "tpcstudy")
        if a.vs:
            measure(path, "tpcstudy", a.vs, label="--vs")
        if a.networkx and path.suffix == ".gml":
            measure(path, "networkx")
    for p in (gml, graph):
        p.unlink()
    work.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())

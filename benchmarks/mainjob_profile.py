#!/usr/bin/env python
"""Where the README's main job spends its time: a profile by phase (issue 42, docs/performance.md).

Runs the job (``benchmarks/mainjob.py``'s command) under cProfile in one process (``--jobs 1``:
the workers' work and the parent's in one profile) and sorts its time into the phases of
docs/performance.md: imports, reading the files, pruning, drawing the pairs, the LPs (solving
in HiGHS, the path core's searches, the rest: building the LPs and column generation in
Python), writing the results folder, and the rest. The interpreter's own start is timed apart
(``python -c pass``). Profiling slows Python code about 1.5-2x and leaves C code as it is, so the
shares, not the seconds, are the result; ``benchmarks/mainjob.py`` times the real job.

    python benchmarks/mainjob_profile.py                 # this checkout
    python benchmarks/mainjob_profile.py --python /tmp/bvenv/bin/python --src /tmp/base/src
"""

from __future__ import annotations

import argparse
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

JOB = ["maxflow", "--topo", "zoo", "--heavy", "1,10", "--models", "ecmp,multipath,sr,mcf",
       "--k", "4", "--jobs", "1", "--no-progress"]


def _ct(stats: Dict, where: str, name: str) -> float:
    """Cumulative seconds of the functions named ``name`` in files ending with ``where``."""
    return sum(v[3] for (f, _, n), v in stats.items() if n == name and f.endswith(where))


def _tt(stats: Dict, pred) -> float:
    return sum(v[2] for k, v in stats.items() if pred(k))


def phases(path: Path) -> List[Tuple[str, float]]:
    st = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in st.values())
    imports = _ct(st, "_bootstrap>", "_find_and_load")
    reading = _ct(st, "io/readers.py", "read_topology")
    pruning = _ct(st, "tpcstudy/topology.py", "prune")
    pairs = _ct(st, "tpcstudy/pairs.py", "heavy_pairs")
    lp = _ct(st, "models/maxflow.py", "max_flow")
    if not lp:  # a moved module would leave the LPs in "the rest" and the Python share negative
        raise SystemExit("the profile has no tpcstudy.models.maxflow.max_flow: update phases()")
    solving = _tt(st, lambda k: "highspy" in k[2] or "highspy" in k[0])
    core = _tt(st, lambda k: "/tpcstudy/paths/" in k[0])  # the wrappers around core calls
    writing = (_ct(st, "study/store.py", "put") + _ct(st, "study/store.py", "flush")
               + _ct(st, "study/provenance.py", "write_meta"))
    rest = total - imports - reading - pruning - pairs - lp - writing
    return [("imports", imports), ("reading the files", reading), ("pruning", pruning),
            ("drawing the pairs", pairs), ("LPs: HiGHS solving", solving),
            ("LPs: path core (pricing searches)", core),
            ("LPs: building them, column generation (Python)", lp - solving - core),
            ("writing (parts, results.csv, meta.json)", writing), ("the rest", rest),
            ("total (profiled)", total)]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--src", default=None, help="PYTHONPATH of the version to profile")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = str(Path(args.src).resolve())
    starts = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([args.python, "-c", "pass"], env=env, check=True)
        starts.append(time.perf_counter() - t0)
    with tempfile.TemporaryDirectory(prefix="tpcstudy-profile.") as tmp:
        prof = Path(tmp) / "job.prof"
        subprocess.run([args.python, "-m", "cProfile", "-o", str(prof), "-m", "tpcstudy", *JOB,
                        "--out", str(Path(tmp) / "out")], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        rows = phases(prof)
    total = rows[-1][1]
    print(f"interpreter start (python -c pass): {min(starts) * 1e3:.0f} ms (min of 5)")
    print(f"{'phase':52s} {'seconds':>8s} {'share':>6s}")
    for name, sec in rows:
        print(f"{name:52s} {sec:8.2f} {100 * sec / total:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

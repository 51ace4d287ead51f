#!/usr/bin/env python
"""The README's main job, timed end to end, side by side with a baseline, rows compared (issue 42).

    tpcstudy maxflow --topo zoo --heavy 1,10 --models ecmp,multipath,sr,mcf --k 4 --jobs 2 --out DIR

Each run is a fresh process writing into a fresh temporary folder (nothing resumed), the wall
time from its start to its exit. With ``--baseline-src DIR`` (a ``src/`` folder of another
version of tpcstudy, e.g. ``git archive COMMIT src | tar -x -C /tmp/base``, with a copy of the
built ``_core`` module in ``DIR/tpcstudy/``) and ``--baseline-python`` (a Python whose
``sys.path`` reaches the dependencies but not this checkout's editable install), the two
versions run alternately, ``--runs`` times each, so the machine's load hits both alike; the
ratio of each round's two times is printed with its spread. Every run's ``results.csv`` must
hold the same rows as the first run's (every column but the ``seconds*`` timings): the script
exits 1 otherwise.

    python benchmarks/mainjob.py --runs 5
    python benchmarks/mainjob.py --runs 5 --baseline-src /tmp/base/src --baseline-python /tmp/bvenv/bin/python
    python benchmarks/mainjob.py --compare A/results.csv B/results.csv   # rows equal? (exit 0/1)
    python benchmarks/mainjob.py --values ...   # values equal (versions that pivot differently)
    python benchmarks/mainjob.py --busy 1 ...                            # with one CPU kept busy
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

JOB = ["maxflow", "--topo", "zoo", "--heavy", "1,10", "--models", "ecmp,multipath,sr,mcf",
       "--k", "4", "--jobs", "2"]
#: Columns that are measurements of the run, not results.
TIMINGS = ("seconds", "seconds_paths", "seconds_pricing", "seconds_lp")
#: Columns that follow the simplex's path, not the LP: how many rounds and columns it took, the
#: last pricing gap, and which optimal vertex it ended on (``used_paths_max``: an LP with
#: several optimal vertices gives a pair more or fewer paths at the same value). ``--values``
#: compares versions that pivot differently by everything else, the values to 1e-9 relative.
SOLVER_PATH = ("iterations", "columns", "gap", "used_paths_max")
KEY = ("topology", "heavy", "seed", "model", "k", "subflows")


def rows_of(path: Path) -> List[Tuple[Tuple[str, str], ...]]:
    """The rows of a results.csv without the timing columns, sorted."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(tuple(sorted((k, v) for k, v in r.items() if k not in TIMINGS)) for r in rows)


def compare_values(a: Path, b: Path) -> Tuple[List[str], int]:
    """Differences between two results.csv files in everything but the timings and
    :data:`SOLVER_PATH`, numbers to 1e-9 relative (rows matched by :data:`KEY`); and how many
    rows ended on another optimal vertex (``used_paths_max`` differs)."""
    def load(p: Path) -> Dict[Tuple[str, ...], Dict[str, str]]:
        with open(p, newline="", encoding="utf-8") as fh:
            return {tuple(r.get(k, "") for k in KEY): r for r in csv.DictReader(fh)}

    ra, rb = load(a), load(b)
    if ra.keys() != rb.keys():
        return [f"{a}: {len(ra)} rows, {b}: {len(rb)} rows, "
                f"{len(ra.keys() ^ rb.keys())} not in both"], 0
    out, vertex = [], 0
    for key, x in ra.items():
        y = rb[key]
        vertex += x.get("used_paths_max") != y.get("used_paths_max")
        for col in x.keys() | y.keys():
            u, v = x.get(col), y.get(col)
            if col in TIMINGS or col in SOLVER_PATH or u == v:
                continue
            try:
                fu, fv = float(u or "nan"), float(v or "nan")
                if abs(fu - fv) <= 1e-9 * max(1.0, abs(fu)):
                    continue
            except ValueError:
                pass
            out.append(f"{' '.join(key)}: {col} {u!r} vs {v!r}")
    return out, vertex


def compare(a: Path, b: Path) -> List[str]:
    """Differences between two results.csv files (timings aside); [] when equal."""
    ra, rb = rows_of(a), rows_of(b)
    if len(ra) != len(rb):
        return [f"{a}: {len(ra)} rows, {b}: {len(rb)} rows"]
    out = []
    for x, y in zip(ra, rb):
        if x != y:
            dx, dy = dict(x), dict(y)
            diff = {k: (dx.get(k), dy.get(k)) for k in set(dx) | set(dy) if dx.get(k) != dy.get(k)}
            out.append(f"{dx.get('topology')} {dx.get('heavy')} {dx.get('model')}: {diff}")
    return out


def run_once(python: str, env: Dict[str, str], out: Path) -> Tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the job's process and its workers, which
    it waits for) of one run. On a busy machine the CPU time is the steadier measure: it
    counts the work, not the waits for a CPU (contention still inflates it somewhat)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([python, "-m", "tpcstudy", *JOB, "--out", str(out)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"the job failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def spread(xs: Sequence[float], unit: str = " s", digits: int = 2) -> str:
    return (f"median {statistics.median(xs):.{digits}f}{unit} (min {min(xs):.{digits}f}, "
            f"max {max(xs):.{digits}f}; {len(xs)} runs)")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the Python of the version under test")
    ap.add_argument("--baseline-src", default=None, help="src/ folder of the baseline version")
    ap.add_argument("--baseline-python", default=None, help="the Python to run the baseline with")
    ap.add_argument("--busy", type=int, default=0, metavar="N", help="keep N CPUs busy meanwhile")
    ap.add_argument("--keep", default=None, help="copy the last run's results folder here")
    ap.add_argument("--compare", nargs=2, metavar="CSV", help="only compare two results.csv")
    ap.add_argument("--values", action="store_true",
                    help="rows the same when all but the solver's path (iterations, columns, "
                         "gap, used_paths_max) is, numbers to 1e-9: for versions that pivot "
                         "differently")
    args = ap.parse_args(argv)
    if args.compare and args.values:
        diffs, vertex = compare_values(Path(args.compare[0]), Path(args.compare[1]))
        print("\n".join(diffs[:20]) if diffs else "same values; "
              f"{vertex} rows on another optimal vertex (used_paths_max)")
        return 1 if diffs else 0
    if args.compare:
        diffs = compare(Path(args.compare[0]), Path(args.compare[1]))
        print("\n".join(diffs[:20]) if diffs else f"same rows ({len(rows_of(Path(args.compare[0])))})")
        return 1 if diffs else 0
    variants = [("this", args.python, dict(os.environ))]
    if args.baseline_src:
        env = dict(os.environ, PYTHONPATH=str(Path(args.baseline_src).resolve()))
        variants.insert(0, ("baseline", args.baseline_python or args.python, env))
    load = Path("/proc/loadavg").read_text().split()[:4] if Path("/proc/loadavg").exists() else []
    print(f"load before: {' '.join(load)}; CPUs: {os.cpu_count()}; busy processes: {args.busy}")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    times: Dict[str, List[float]] = {name: [] for name, _, _ in variants}
    cpus: Dict[str, List[float]] = {name: [] for name, _, _ in variants}
    reference: Optional[Path] = None
    failed = False
    tmp = Path(tempfile.mkdtemp(prefix="tpcstudy-mainjob."))
    try:
        for i in range(args.runs):
            order = variants if i % 2 == 0 else variants[::-1]  # alternate who goes first
            for name, python, env in order:
                out = tmp / f"{name}-{i}"
                wall, cpu = run_once(python, env, out)
                times[name].append(wall)
                cpus[name].append(cpu)
                csv_path = out / "results.csv"
                if reference is None:
                    reference = tmp / "reference.csv"
                    shutil.copy(csv_path, reference)
                if args.values:
                    diffs, vertex = compare_values(reference, csv_path)
                    same = f"values same ({vertex} on another vertex)"
                else:
                    diffs, same = compare(reference, csv_path), "same"
                failed |= bool(diffs)
                print(f"run {i + 1} {name:8s} {wall:6.2f} s wall {cpu:6.2f} s CPU  rows "
                      + (same if not diffs else f"DIFFER: {diffs[:3]}"), flush=True)
                if args.keep and i == args.runs - 1 and name == "this":
                    shutil.copytree(out, args.keep, dirs_exist_ok=True)
                shutil.rmtree(out, ignore_errors=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for name, ts in times.items():
        print(f"{name:8s} wall {spread(ts)}")
        print(f"{name:8s} CPU  {spread(cpus[name])}")
    if "baseline" in times:
        for what, xs in (("wall", times), ("CPU", cpus)):
            ratios = [b / t for b, t in zip(xs["baseline"], xs["this"])]
            print(f"baseline / this, {what}: {spread(ratios, 'x')}")
    if failed:
        print("ROWS DIFFER", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

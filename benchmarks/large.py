"""Large inputs: a synthetic ISP-like topology of 2,000 routers through ``topo stats``,
``disjoint`` and ``maxflow`` (a few heavy pairs), each a subprocess of the CLI, with its wall
time and peak memory.

    python benchmarks/large.py                      # 2,000 routers, seed 0, into bench-large/
    python benchmarks/large.py --n 500 --steps stats,maxflow --out /tmp/bl

The topology (tpcstudy.topogen.isp_topology: a geographic core of 25 % of the routers with 2-4
core links each, access routers dual-homed to the two nearest core routers) is written as
``OUT/SynthISP<n>s<seed>.gml``; the same arguments give the same file.  Peak memory is the
``ru_maxrss`` of the step's process tree as ``os.wait4`` reports it (the largest single
process: with ``--jobs`` > 1 the workers are not added up).  Each study writes into a fresh
``OUT/<step>/`` folder; the table goes to stdout and, with the commands, to ``OUT/bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from tpcstudy.study import read_results
from tpcstudy.topogen import isp_topology, write_gml

STEPS = ("stats", "disjoint", "maxflow")


def run_measured(cmd: List[str], log: Path, timeout: float) -> Dict[str, Any]:
    """Run ``cmd``; wall seconds, peak RSS (MiB) of its process tree, exit code."""
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline and not timed_out:
            proc.kill()
            timed_out = True
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss: KiB on Linux, bytes on macOS
    kib = usage.ru_maxrss / 1024 if sys.platform == "darwin" else usage.ru_maxrss
    return {"seconds": round(wall, 2), "peak_rss_mib": round(kib / 1024, 1),
            "exit": proc.returncode, "timed_out": timed_out,
            "user_s": round(usage.ru_utime, 2), "sys_s": round(usage.ru_stime, 2)}


def _rows(path: Path) -> List[Dict[str, str]]:
    return read_results(path) if path.exists() else []


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="routers (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="topology seed (default 0)")
    ap.add_argument("--out", default="bench-large", help="output folder (default bench-large)")
    ap.add_argument("--steps", default=",".join(STEPS), help="subset of stats,disjoint,maxflow")
    ap.add_argument("--k", default="1-6", help="disjoint --k (default 1-6)")
    ap.add_argument("--max-pairs", type=int, default=20000,
                    help="disjoint --max-pairs: a seeded sample of pairs (default 20000; 0: all)")
    ap.add_argument("--heavy", default="0.01,0.1", help="maxflow --heavy (default 0.01,0.1)")
    ap.add_argument("--models", default="ecmp,multipath,sr,mcf", help="maxflow --models")
    ap.add_argument("--jobs", type=int, default=1, help="--jobs of the studies (default 1)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per step (default 3600)")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    bad = [s for s in steps if s not in STEPS]
    if bad:
        ap.error(f"unknown step {bad[0]!r}; choose from {', '.join(STEPS)}")

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    topo = isp_topology(args.n, seed=args.seed)
    gml = write_gml(topo, out / f"{topo.name}.gml")
    deg = topo.degree()
    gen = {"file": str(gml), "routers": topo.num_nodes, "links": len(topo.links),
           "core": topo.core, "degree_2": int((deg == 2).sum()),
           "seconds": round(time.perf_counter() - t0, 2)}
    print(f"{gml.name}: {gen['routers']} routers ({gen['core']} core), {gen['links']} links, "
          f"{gen['degree_2']} of degree 2 ({gen['seconds']} s)", flush=True)

    tpc = [sys.executable, "-m", "tpcstudy"]
    commands = {
        "stats": tpc + ["topo", "stats", "--topo", str(gml), "--no-progress"],
        "disjoint": tpc + ["disjoint", "--topo", str(gml), "--k", args.k, "--jobs",
                           str(args.jobs), "--out", str(out / "disjoint"), "--no-progress"]
        + (["--max-pairs", str(args.max_pairs)] if args.max_pairs else []),
        "maxflow": tpc + ["maxflow", "--topo", str(gml), "--heavy", args.heavy, "--models",
                          args.models, "--k", "4", "--jobs", str(args.jobs), "--out",
                          str(out / "maxflow"), "--no-progress"],
    }
    results: Dict[str, Dict[str, Any]] = {}
    for step in steps:
        if step in ("disjoint", "maxflow"):
            shutil.rmtree(out / step, ignore_errors=True)  # measure a whole run, not a resume
        print(f"running {step}: {' '.join(commands[step][1:])}", flush=True)
        results[step] = run_measured(commands[step], out / f"{step}.log", args.timeout)
        print(f"  {results[step]}", flush=True)

    print()
    print(f"{'step':<10} {'wall s':>9} {'peak RSS MiB':>13} {'user s':>9} {'exit':>5}  command")
    for step, r in results.items():
        note = " (timed out)" if r["timed_out"] else ""
        print(f"{step:<10} {r['seconds']:>9.2f} {r['peak_rss_mib']:>13.1f} {r['user_s']:>9.2f} "
              f"{r['exit']:>5}  {' '.join(commands[step][2:])}{note}")
    mf = _rows(out / "maxflow" / "results.csv")
    if mf:
        print()
        print(f"{'heavy %':>8} {'pairs':>6} {'model':<10} {'value':>12} {'improvement %':>14} "
              f"{'iterations':>10} {'columns':>8} {'seconds':>8}")
        for r in mf:
            print(f"{r['heavy']:>8} {r['pairs']:>6} {r['model'] + r['k']:<10} "
                  f"{float(r['value'] or 'nan'):>12.4f} {r['improvement']:>14} "
                  f"{r['iterations']:>10} {r['columns']:>8} {r['seconds']:>8}")
    dj = _rows(out / "disjoint" / "results.csv")
    if dj:
        print()
        print(f"{'method':<8} {'k':>2} {'pairs':>8} {'mean_paths':>10} {'seconds':>8}")
        for r in dj:
            print(f"{r.get('method', ''):<8} {r.get('k', ''):>2} {r.get('pairs', ''):>8} "
                  f"{r.get('mean_paths', ''):>10} {r.get('seconds', ''):>8}")
    (out / "bench.json").write_text(json.dumps(
        {"topology": gen, "steps": results, "commands": {s: commands[s] for s in results},
         "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                     "python": platform.python_version()}}, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

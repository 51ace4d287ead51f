"""SIGTERM a max-flow study at random moments, N times, and check what it leaves.

    python scripts/sigterm_runs.py --topo zoo --names 40 --rounds 20 --jobs 2

One uninterrupted run first (the reference), then ``--rounds`` runs into a second folder, each
sent SIGTERM after a random delay (seeded: start-up plus about two rounds' share of the work, so
most rounds are cut and each resumes the last); then one run to the end. After every signal: the
exit status (143, or 0 when the run had finished), whether any process of the run's process
group is left, and any temporary file left in the folder. At the end: the resumed folder's rows
against the reference's (timing columns left out).
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

TIMING = {"seconds", "seconds_paths", "seconds_pricing", "seconds_lp"}


def rows(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]


def group_left(pgid: int, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--topo", default="zoo", help="a folder of topology files, or 'zoo'")
    ap.add_argument("--names", type=int, default=40,
                    help="how many of its files (from the 60th size percentile up)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    from tpcstudy.io import topology_files

    work = Path(tempfile.mkdtemp(prefix="sigterm-runs-"))
    topos = work / "topos"
    topos.mkdir()
    files = sorted(topology_files(a.topo), key=lambda p: (p.stat().st_size, p.name))
    start = len(files) * 6 // 10
    for p in files[start: start + a.names]:  # larger than most: the run lasts a while
        shutil.copy(p, topos)
    cmd = [sys.executable, "-m", "tpcstudy", "maxflow", "--topo", str(topos),
           "--heavy", "10,30,50", "--models", "ecmp,multipath,sr,mcf", "--k", "2,3,4,5",
           "--seeds", "3", "--jobs", str(a.jobs), "--no-progress", "--out"]
    t0 = time.perf_counter()
    subprocess.run(cmd + [str(work / "ref")], check=True, capture_output=True)
    ref_s = time.perf_counter() - t0
    print(f"reference run: {len(list(topos.iterdir()))} topologies, {ref_s:.1f} s, --jobs {a.jobs}")
    rng = random.Random(a.seed)
    out = work / "out"
    bad = 0
    print(f"{'round':>5} {'after s':>8} {'exit':>5} {'processes left':>15} {'temp files left':>16}")
    for i in range(a.rounds):
        proc = subprocess.Popen(cmd + [str(out)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        delay = rng.uniform(0.3, 0.8 + 2 * ref_s / a.rounds)  # start-up, then a share of the work
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        left = group_left(proc.pid)
        temps = [p.name for p in out.rglob(".*") if p.name != ".lock"] if out.exists() else []
        ok = proc.returncode in (0, 143) and not left and not temps and "Traceback" not in err
        bad += not ok
        print(f"{i + 1:>5} {delay:>8.2f} {proc.returncode:>5} {'yes' if left else 'no':>15} "
              f"{len(temps):>16}" + ("" if ok else f"  <- {err.strip()[-200:]}"))
    subprocess.run(cmd + [str(out)], check=True, capture_output=True)
    same = rows(out / "results.csv") == rows(work / "ref" / "results.csv")
    print(f"after {a.rounds} SIGTERMs and one run to the end: results.csv "
          f"{'equals' if same else 'DIFFERS FROM'} the uninterrupted run's "
          f"({len(rows(out / 'results.csv'))} rows); {bad} bad rounds")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same and not bad else 1


if __name__ == "__main__":
    sys.exit(main())

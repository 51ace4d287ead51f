"""Interruptions: a maxflow study killed (SIGKILL) at random moments and re-run ends with the
same results as an uninterrupted run: no duplicated, lost or half-written rows."""

from __future__ import annotations

import csv
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

TIMING = {"seconds", "seconds_paths", "seconds_pricing", "seconds_lp"}
NAMES = ["Abilene", "Aarnet", "Atmnet", "Bics", "BtEurope", "Cernet", "Garr201201", "Geant2012",
         "GtsCe", "Janetbackbone", "Renater2010", "Sinet", "Uninett2011", "Surfnet"]


def _table(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def _cmd(topos, out):
    return [sys.executable, "-m", "tpcstudy", "maxflow", "--topo", str(topos), "--heavy", "5,20",
            "--models", "multipath,sr,mcf", "--k", "2,4", "--out", str(out), "--no-progress"]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigkill_and_resume_equals_uninterrupted(tmp_path, zoo_installed, jobs):
    topos = tmp_path / "topos"
    topos.mkdir()
    for n in NAMES:
        shutil.copy(zoo_installed / f"{n}.gml", topos)
    env = dict(os.environ)
    ref = tmp_path / "ref"
    subprocess.run(_cmd(topos, ref) + ["--jobs", jobs], check=True, env=env, cwd=tmp_path,
                   stdout=subprocess.DEVNULL)
    expected = _table(ref / "results.csv")
    assert len({(r["topology"], r["heavy"], r["model"], r["k"]) for r in expected}) == len(expected)

    out = tmp_path / "killed"
    rng = random.Random(int(jobs))
    kills = 0

    def parts() -> int:
        return len(list((out / "parts").glob("*.csv"))) if (out / "parts").exists() else 0

    for _ in range(4):
        # kill at a random moment: after a random number of further topologies finished, plus
        # a random fraction of a task's time (mid-task, mid-write, mid-rebuild of results.csv)
        target = parts() + rng.randint(1, 3)
        proc = subprocess.Popen(_cmd(topos, out) + ["--jobs", jobs], env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while proc.poll() is None and parts() < target and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.05))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        if (out / "results.csv").exists():  # whatever is there is whole rows of the reference
            partial = _table(out / "results.csv")
            for r in partial:
                assert r in expected
    assert kills >= 1
    subprocess.run(_cmd(topos, out) + ["--jobs", jobs], check=True, env=env, cwd=tmp_path,
                   stdout=subprocess.DEVNULL)
    assert _table(out / "results.csv") == expected
    assert not list(out.glob("**/*.tmp"))

"""tpcstudy.study.executors: choosing an executor, and the studies on Dask distributed: a real
cluster (a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1) gives the rows of
the local process pool, and a worker SIGKILLed in the middle of a run loses no finished task and
changes no row."""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

distributed = pytest.importorskip("distributed")

from tpcstudy.cli.options import add_executor_options  # noqa: E402
from tpcstudy.errors import UsageError  # noqa: E402
from tpcstudy.study.executors import InlineExecutor, ProcessExecutor, make_executor  # noqa: E402

TIMING = {"seconds", "seconds_paths", "seconds_pricing", "seconds_lp"}
# six small Zoo networks; GtsCe and Uninett2011 take a second or so each (the kill lands in them)
NAMES = ["GtsCe", "Uninett2011", "Renater2010", "Sinet", "Cernet", "Garr201201"]
DASK = Path(sys.executable).parent / "dask"


def _table(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]


def _cmd(topos: Path, out: Path, *extra: str) -> List[str]:
    return [sys.executable, "-m", "tpcstudy", "maxflow", "--topo", str(topos), "--heavy", "5,20",
            "--models", "multipath,sr,mcf", "--k", "2,4", "--out", str(out), "--no-progress",
            *extra]


class Cluster:
    def __init__(self, address: str, scheduler_file: Path, workers: Dict[str, subprocess.Popen]):
        self.address = address
        self.scheduler_file = scheduler_file
        self.workers = workers


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextmanager
def dask_cluster(tmp: Path, n_workers: int = 2, **config: str) -> Iterator[Cluster]:
    """A scheduler and ``n_workers`` single-threaded workers (no nanny), separate processes;
    ``config``: ``DASK_*`` environment variables for them."""
    if not DASK.exists():
        pytest.skip(f"{DASK} not installed")
    tmp.mkdir(parents=True, exist_ok=True)
    sfile = tmp / "scheduler.json"
    env = dict(os.environ, **config)
    procs: List[subprocess.Popen] = []
    workers: Dict[str, subprocess.Popen] = {}

    def spawn(args: List[str], log: str) -> subprocess.Popen:
        with open(tmp / log, "wb") as fh:
            p = subprocess.Popen([str(DASK), *args], stdout=fh, stderr=subprocess.STDOUT,
                                 cwd=tmp, env=env, start_new_session=True)
        procs.append(p)
        return p

    try:
        spawn(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
               "--scheduler-file", str(sfile)], "scheduler.log")
        deadline = time.monotonic() + 30
        address = None
        while address is None:
            if procs[0].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("dask scheduler did not start:\n"
                                   + (tmp / "scheduler.log").read_text(errors="replace"))
            try:
                address = json.loads(sfile.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        for i in range(n_workers):
            name = f"w{i}"
            workers[name] = spawn(["worker", "--scheduler-file", str(sfile), "--nthreads", "1",
                                   "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                   "--name", name, "--local-directory", str(tmp / name),
                                   "--death-timeout", "60"], f"{name}.log")
        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(n_workers, timeout=45)
        yield Cluster(address, sfile, workers)
    finally:
        for p in reversed(procs):
            _stop(p)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, zoo_installed: Path):
    """The topologies and the reference rows of a ``--jobs 2`` process-pool run."""
    root = tmp_path_factory.mktemp("dask")
    topos = root / "topos"
    topos.mkdir()
    for n in NAMES:
        shutil.copy(zoo_installed / f"{n}.gml", topos)
    ref = root / "ref"
    subprocess.run(_cmd(topos, ref, "--jobs", "2"), check=True, cwd=root,
                   stdout=subprocess.DEVNULL)
    expected = _table(ref / "results.csv")
    assert len(expected) == len(NAMES) * 2 * 5 and all(r["status"] == "ok" for r in expected)
    return root, topos, expected


def test_make_executor():
    assert make_executor() is None and make_executor(None, 3) is None
    assert isinstance(make_executor("local"), InlineExecutor)
    ex = make_executor("process", 2)
    assert isinstance(ex, ProcessExecutor) and ex.jobs == 2
    ex.shutdown()
    with pytest.raises(UsageError, match="--scheduler needs --executor dask"):
        make_executor("process", 1, "tcp://x:1")
    with pytest.raises(UsageError, match="one task at a time"):
        make_executor("local", 2)
    with pytest.raises(UsageError, match="--jobs must be >= 1"):
        make_executor(None, 0)
    with pytest.raises(UsageError, match="choose from"):
        make_executor("ray")
    p = argparse.ArgumentParser()
    add_executor_options(p)
    args = p.parse_args(["--executor", "process", "--jobs", "2"])
    assert (args.executor, args.jobs, args.scheduler) == ("process", 2, None)
    with pytest.raises(SystemExit):
        p.parse_args(["--executor", "ray"])


@pytest.mark.slow
def test_unreachable_scheduler_is_a_runtime_error(study):
    root, topos, _ = study
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")
    r = subprocess.run(_cmd(topos / "Sinet.gml", root / "unreachable", "--scheduler",
                            "tcp://127.0.0.1:9"), capture_output=True, text=True, timeout=60,
                       cwd=root, env=env)
    assert r.returncode == 1, r.stderr[-3000:]
    assert "--scheduler tcp://127.0.0.1:9: cannot connect to a Dask scheduler" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.fixture(scope="module")
def cluster(study):
    root = study[0]
    with dask_cluster(root / "cluster-a") as c:
        yield c


@pytest.mark.slow
def test_dask_cluster_rows_equal_process_pool(study, cluster):
    root, topos, expected = study
    assert cluster.address.startswith("tcp://127.0.0.1:")
    out = root / "dask"
    r = subprocess.run(_cmd(topos, out, "--executor", "dask", "--scheduler", cluster.address),
                       cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _table(out / "results.csv") == expected
    # rerunning resumes: nothing left to do, same rows
    r = subprocess.run(_cmd(topos, out, "--scheduler", cluster.address), cwd=root,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "(6 reused from an earlier run)" in r.stdout, r.stdout + r.stderr[-2000:]
    assert _table(out / "results.csv") == expected
    # the workers ran the tasks (they imported tpcstudy), the client only wrote
    logs = "".join((root / "cluster-a" / f"w{i}.log").read_text() for i in range(2))
    assert "Traceback" not in logs


@pytest.mark.slow
def test_disjoint_on_dask_cluster_equals_process_pool(study, cluster):
    root, topos, _ = study

    def disjoint(out: Path, *extra: str) -> List[Dict[str, str]]:
        r = subprocess.run([sys.executable, "-m", "tpcstudy", "disjoint", "--topo", str(topos),
                            "--k", "1-4", "--out", str(out), "--no-progress", *extra],
                           cwd=root, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-3000:]
        with open(out / "results.csv", newline="") as f:
            return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f)]

    ref = disjoint(root / "dj-ref", "--jobs", "2")
    assert len(ref) > len(NAMES)
    assert disjoint(root / "dj-dask", "--executor", "dask", "--scheduler", cluster.address) == ref


@pytest.mark.slow
@pytest.mark.parametrize("allowed_failures", ["3", "0"])
def test_worker_killed_mid_run_loses_nothing(study, allowed_failures):
    """Dask's default (3 allowed failures) runs the dead worker's task again elsewhere; with 0 it
    gives up on it (KilledWorker): the task is stored failed and the next run redoes it."""
    root, topos, expected = study
    out = root / f"killed-{allowed_failures}"
    with dask_cluster(root / f"cluster-k{allowed_failures}",
                      DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=allowed_failures) as cluster:
        run = subprocess.Popen(_cmd(topos, out, "--executor", "dask", "--scheduler",
                                    str(cluster.scheduler_file)),
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim, before = None, {}
        try:
            with distributed.Client(cluster.address, timeout=30, set_as_default=False) as client:
                deadline = time.monotonic() + 60
                # wait for a first stored task, then kill a worker that holds another one
                while victim is None and run.poll() is None and time.monotonic() < deadline:
                    if list((out / "parts").glob("*.csv")):
                        names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
                        busy = [names[a] for a, keys in client.processing().items()
                                if keys and a in names]
                        if busy:
                            victim = sorted(busy)[0]
                            before = {p.name: p.read_bytes() for p in (out / "parts").glob("*.csv")}
                            os.kill(cluster.workers[victim].pid, signal.SIGKILL)
                            break
                    time.sleep(0.02)
            stdout, stderr = run.communicate(timeout=120)
        finally:
            _stop(run)
        assert victim is not None, "the study finished before a worker could be killed"
        assert cluster.workers[victim].wait(timeout=10) == -signal.SIGKILL
        for name, data in before.items():  # finished tasks are kept as they were
            assert (out / "parts" / name).read_bytes() == data
        rows = _table(out / "results.csv")
        assert all(r in expected for r in rows if r["status"] != "failed")
        if allowed_failures != "0":
            assert run.returncode == 0, stderr[-3000:]
        else:  # Dask gave up on the task: stored failed, the re-run redoes it
            assert run.returncode == 1, stderr[-3000:]
            failed = [r for r in rows if r["status"] == "failed"]
            assert failed and all("KilledWorker" in r["error"] for r in failed), failed
            r = subprocess.run(_cmd(topos, out, "--scheduler", cluster.address), cwd=root,
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr[-3000:]
        assert _table(out / "results.csv") == expected
        assert not list(out.glob("**/*.tmp"))


@pytest.mark.slow
def test_local_dask_cluster(study):
    """``--executor dask`` without ``--scheduler`` starts (and stops) a LocalCluster."""
    root, topos, expected = study
    sub = root / "two"
    sub.mkdir()
    for n in ("Sinet", "Cernet"):
        shutil.copy(topos / f"{n}.gml", sub)
    out = root / "local-dask"
    r = subprocess.run(_cmd(sub, out, "--executor", "dask", "--jobs", "1"), cwd=root,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _table(out / "results.csv") == [e for e in expected if e["topology"] in ("Sinet", "Cernet")]

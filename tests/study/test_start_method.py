"""How the process pool starts its workers (tpcstudy.study.executors.start_method): ``fork``
where it is safe (Linux, one Python thread, HiGHS not imported), ``spawn`` otherwise; a forked
pool computes what a spawned one does and loses a killed worker's task only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tpcstudy.study.executors import ProcessExecutor
from tpcstudy.study.tasks import Task

from helpers import killer_task, numbered_tasks, read_rows, run_numbered

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork is chosen on Linux only")


def _method(before: str) -> str:
    code = (f"{before}\nfrom tpcstudy.study.executors import start_method\n"
            "print(start_method())")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_fork_only_where_it_is_safe() -> None:
    assert _method("") == "fork"
    assert _method("import highspy") == "spawn"  # its solver's threads: a forked child hangs
    assert _method("import threading, time\n"
                   "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()") == "spawn"


def test_the_study_verbs_fork_their_workers() -> None:
    """The CLI's process imports no HiGHS before its pool starts (else every run pays a
    spawned worker's start again: the README's main job 0.2-0.3 s)."""
    code = ("import sys\nimport tpcstudy.cli, tpcstudy.cli.maxflow, tpcstudy.cli.disjoint, "
            "tpcstudy.cli.mlu, tpcstudy.study.maxflow, tpcstudy.study.mlu\n"
            "from tpcstudy.study.executors import start_method\n"
            "assert 'highspy' not in sys.modules, 'highspy imported'\n"
            "print(start_method())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "fork", out.stderr


def test_a_forked_pool_gives_the_spawned_pools_rows(tmp_path: Path) -> None:
    for method in ("fork", "spawn"):
        ex = ProcessExecutor(2, method)
        assert ex.method == method
        try:
            run_numbered(tmp_path / method, jobs=2, executor=ex)
        finally:
            ex.shutdown()
    assert read_rows(tmp_path / "fork" / "results.csv") == \
        read_rows(tmp_path / "spawn" / "results.csv")


def test_a_forked_pool_loses_only_a_killed_workers_task(tmp_path: Path) -> None:
    tasks = numbered_tasks(6)
    tasks.insert(2, Task({"topology": "boom"}, args=9))
    ex = ProcessExecutor(2, "fork")
    try:
        run = run_numbered(tmp_path, jobs=2, tasks=tasks, fn=killer_task, executor=ex)
    finally:
        ex.shutdown()
    rows = read_rows(tmp_path / "results.csv")
    assert {r["topology"] for r in rows if r["status"] == "failed"} == {"boom"}
    assert len(run.failed) == 1 and sum(r["status"] != "failed" for r in rows) == 12

"""tpcstudy.study.tasks: run_tasks resumes, records failures, gives the same rows in parallel,
keeps finished tasks after Ctrl-C, and survives SIGKILL at random moments."""

from __future__ import annotations

import csv
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tpcstudy.errors import TpcStudyError
from tpcstudy.study import Task
from tpcstudy.study.tasks import task_id

from helpers import (
    CALLS,
    TASK_COLUMNS,
    TESTS,
    bad_rows_task,
    numbered_tasks,
    read_rows,
    run_numbered,
    square_task,
)


def test_task_ids_are_safe_and_distinct():
    a = task_id({"topology": "A/B C", "x": 0.01})
    b = task_id({"topology": "A_B_C", "x": 0.01})
    assert a != b and "/" not in a and " " not in a
    assert task_id({"topology": "A/B C", "x": 0.01}) == a  # deterministic
    assert Task({"topology": "A/B C", "x": 0.01}).id == a


def test_results_sorted_one_row_per_key_and_resume_skips(tmp_path):
    CALLS.clear()
    s = run_numbered(tmp_path)
    assert (s.total, s.skipped, s.completed, s.failed) == (8, 0, 8, [])
    rows = read_rows(tmp_path / "results.csv")
    assert [(r["topology"], r["seed"]) for r in rows] == [
        (f"T{i:02d}", str(seed)) for i in range(8) for seed in (0, 1)]
    assert rows[5]["value"] == repr(4 + 1 / 3) and rows[5]["note"] == 'a,"b"\n2'
    assert rows[0]["status"] == "" and list(rows[0]) == TASK_COLUMNS + ["status", "error"]
    before = (tmp_path / "results.csv").read_bytes()
    CALLS.clear()
    s = run_numbered(tmp_path, tasks=numbered_tasks(10))  # two new tasks; the eight old ones are skipped
    assert (s.skipped, s.completed) == (8, 2)
    assert sorted(CALLS) == [task_id({"topology": "T08"}), task_id({"topology": "T09"})]
    CALLS.clear()
    s = run_numbered(tmp_path, tasks=numbered_tasks(8))
    assert CALLS == [] and s.skipped == 8
    assert len(read_rows(tmp_path / "results.csv")) == 20  # folder keeps every stored task
    assert before != (tmp_path / "results.csv").read_bytes()


def test_failing_task_is_a_row_and_run_continues(tmp_path):
    s = run_numbered(tmp_path, tasks=numbered_tasks(5, bad=True))
    assert s.completed == 6 and s.failed == [task_id({"topology": "bad"})]
    rows = read_rows(tmp_path / "results.csv")
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["topology"] == "bad"
    assert "ValueError: cannot handle bad" in failed[0]["error"]
    assert len(rows) == 11
    # a re-run retries the failed task only (it fails again: still one failed row)
    CALLS.clear()
    s = run_numbered(tmp_path, tasks=numbered_tasks(5, bad=True))
    assert CALLS == [task_id({"topology": "bad"})] and s.skipped == 5
    assert len(read_rows(tmp_path / "results.csv")) == 11
    CALLS.clear()
    run_numbered(tmp_path, tasks=numbered_tasks(5, bad=True), retry_failed=False)
    assert CALLS == []


def test_bad_rows_and_on_error_raise(tmp_path):
    s = run_numbered(tmp_path / "a", tasks=numbered_tasks(2), fn=bad_rows_task)
    rows = read_rows(tmp_path / "a" / "results.csv")
    assert len(s.failed) == 2 and all("unknown column 'nope'" in r["error"] for r in rows)
    with pytest.raises(TpcStudyError, match="cannot handle bad"):
        run_numbered(tmp_path / "b", tasks=numbered_tasks(5, bad=True), on_error="raise")
    # the tasks finished before the failure are stored
    assert len(read_rows(tmp_path / "b" / "results.csv")) == 6


def test_parallel_equals_serial(tmp_path):
    run_numbered(tmp_path / "serial", tasks=numbered_tasks(6, bad=True))
    run_numbered(tmp_path / "parallel", jobs=2, tasks=numbered_tasks(6, bad=True))
    a = (tmp_path / "serial" / "results.csv").read_text()
    b = (tmp_path / "parallel" / "results.csv").read_text()
    # the error column holds a traceback with file paths: compare all but that
    strip = lambda text: [r[:-1] for r in csv.reader(text.splitlines(True))]  # noqa: E731
    assert strip(a) == strip(b)
    assert a.count("failed") == b.count("failed") == 1


def test_keyboard_interrupt_keeps_finished_parts(tmp_path):
    def interrupting(task: Task) -> List[Dict[str, Any]]:
        if task.key["topology"] == "T03":
            raise KeyboardInterrupt
        return square_task(task)

    with pytest.raises(KeyboardInterrupt):
        run_numbered(tmp_path, fn=interrupting)
    assert len(read_rows(tmp_path / "results.csv")) == 6  # T00..T02
    s = run_numbered(tmp_path)
    assert s.skipped == 3 and len(read_rows(tmp_path / "results.csv")) == 16


_CHILD = """
import sys
sys.path.insert(0, {here!r})
import helpers as t
from tpcstudy.study import ResultStore, run_tasks
store = ResultStore({out!r}, t.TASK_COLUMNS, t.TASK_KEY)
run_tasks(t.numbered_tasks(20), t.sleepy_task, store, jobs={jobs}, progress=False, flush_interval=0)
"""


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_at_random_moments_then_resume_gives_same_csv(tmp_path, jobs):
    def start(out: Path) -> subprocess.Popen:
        code = _CHILD.format(here=str(TESTS), out=str(out), jobs=jobs)
        return subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    ref = tmp_path / "ref"  # uninterrupted reference, in this process (same rows, no sleeps)
    run_numbered(ref, tasks=numbered_tasks(20))
    reference = (ref / "results.csv").read_bytes()
    ref_rows = read_rows(ref / "results.csv")

    out = tmp_path / "killed"
    rng = random.Random(jobs)
    kills, mid_run = 0, 0
    parts = lambda: len(list((out / "parts").glob("*.csv"))) if (out / "parts").exists() else 0  # noqa: E731
    for _ in range(3):
        # kill at a random moment of the run: after a random number of further tasks
        # finished, plus a random fraction of a task's time (mid-write, mid-task, ...)
        target = parts() + rng.randint(1, 5)
        p = start(out)
        deadline = time.monotonic() + 30
        while p.poll() is None and parts() < target and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.04))
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)  # the whole process group: parent and workers
            kills += 1
        p.communicate(timeout=30)
        mid_run += 0 < parts() < 20
        if (out / "results.csv").exists():  # whatever is there is whole rows of the reference
            partial = read_rows(out / "results.csv")
            assert all(r in ref_rows for r in partial)
    assert kills >= 1 and mid_run >= 1
    p = start(out)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err.decode()
    assert (out / "results.csv").read_bytes() == reference
    assert not list(out.rglob("*.tmp"))

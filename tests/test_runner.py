"""Tests of tpcstudy.runner: resume, failures, parallel = serial, SIGKILL safety, meta.json."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tpcstudy.errors import TpcStudyError, UsageError
from tpcstudy.runner import ResultStore, Task, run_tasks, task_id, write_meta

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ["topology", "seed", "value", "note"]
KEY = ["topology", "seed"]
CALLS: List[str] = []  # tasks run in this process (jobs=1)


def square_task(task: Task) -> List[Dict[str, Any]]:
    """Two rows per task; deterministic; raises for topology 'bad'."""
    CALLS.append(task.id)
    name = task.key["topology"]
    if name == "bad":
        raise ValueError(f"cannot handle {name}")
    n = int(task.args)
    return [{"topology": name, "seed": s, "value": n * n + s / 3, "note": f"a,\"b\"\n{n}"}
            for s in (1, 0)]


def sleepy_task(task: Task) -> List[Dict[str, Any]]:
    """square_task, slowly (the kill test)."""
    time.sleep(0.03)
    return square_task(task)


def bad_rows_task(task: Task) -> List[Dict[str, Any]]:
    return [{"topology": "x", "nope": 1}]


def _tasks(n: int = 8, bad: bool = False) -> List[Task]:
    tasks = [Task({"topology": f"T{i:02d}"}, args=i) for i in range(n)]
    if bad:
        tasks.insert(3, Task({"topology": "bad"}, args=0))
    return tasks


def _run(out: Path, jobs: int = 1, tasks: List[Task] | None = None, fn=square_task, **kw):
    store = ResultStore(out, COLUMNS, KEY)
    return run_tasks(tasks if tasks is not None else _tasks(), fn, store, jobs=jobs,
                     desc="test", progress=False, **kw)


def _read(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_task_ids_are_safe_and_distinct():
    a = task_id({"topology": "A/B C", "x": 0.01})
    b = task_id({"topology": "A_B_C", "x": 0.01})
    assert a != b and "/" not in a and " " not in a
    assert task_id({"topology": "A/B C", "x": 0.01}) == a  # deterministic
    assert Task({"topology": "A/B C", "x": 0.01}).id == a


def test_results_sorted_one_row_per_key_and_resume_skips(tmp_path):
    CALLS.clear()
    s = _run(tmp_path)
    assert (s.total, s.skipped, s.completed, s.failed) == (8, 0, 8, [])
    rows = _read(tmp_path / "results.csv")
    assert [(r["topology"], r["seed"]) for r in rows] == [
        (f"T{i:02d}", str(seed)) for i in range(8) for seed in (0, 1)]
    assert rows[5]["value"] == repr(4 + 1 / 3) and rows[5]["note"] == 'a,"b"\n2'
    assert rows[0]["status"] == "" and list(rows[0]) == COLUMNS + ["status", "error"]
    before = (tmp_path / "results.csv").read_bytes()
    CALLS.clear()
    s = _run(tmp_path, tasks=_tasks(10))  # two new tasks; the eight old ones are skipped
    assert (s.skipped, s.completed) == (8, 2)
    assert sorted(CALLS) == [task_id({"topology": "T08"}), task_id({"topology": "T09"})]
    CALLS.clear()
    s = _run(tmp_path, tasks=_tasks(8))
    assert CALLS == [] and s.skipped == 8
    assert len(_read(tmp_path / "results.csv")) == 20  # folder keeps every stored task
    assert before != (tmp_path / "results.csv").read_bytes()


def test_failing_task_is_a_row_and_run_continues(tmp_path):
    s = _run(tmp_path, tasks=_tasks(5, bad=True))
    assert s.completed == 6 and s.failed == [task_id({"topology": "bad"})]
    rows = _read(tmp_path / "results.csv")
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["topology"] == "bad"
    assert "ValueError: cannot handle bad" in failed[0]["error"]
    assert len(rows) == 11
    # a re-run retries the failed task only (it fails again: still one failed row)
    CALLS.clear()
    s = _run(tmp_path, tasks=_tasks(5, bad=True))
    assert CALLS == [task_id({"topology": "bad"})] and s.skipped == 5
    assert len(_read(tmp_path / "results.csv")) == 11
    CALLS.clear()
    _run(tmp_path, tasks=_tasks(5, bad=True), retry_failed=False)
    assert CALLS == []


def test_bad_rows_and_on_error_raise(tmp_path):
    s = _run(tmp_path / "a", tasks=_tasks(2), fn=bad_rows_task)
    rows = _read(tmp_path / "a" / "results.csv")
    assert len(s.failed) == 2 and all("unknown column 'nope'" in r["error"] for r in rows)
    with pytest.raises(TpcStudyError, match="cannot handle bad"):
        _run(tmp_path / "b", tasks=_tasks(5, bad=True), on_error="raise")
    # the tasks finished before the failure are stored
    assert len(_read(tmp_path / "b" / "results.csv")) == 6


def test_parallel_equals_serial(tmp_path):
    _run(tmp_path / "serial", tasks=_tasks(6, bad=True))
    _run(tmp_path / "parallel", jobs=2, tasks=_tasks(6, bad=True))
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
        _run(tmp_path, fn=interrupting)
    assert len(_read(tmp_path / "results.csv")) == 6  # T00..T02
    s = _run(tmp_path)
    assert s.skipped == 3 and len(_read(tmp_path / "results.csv")) == 16


_CHILD = """
import sys
sys.path.insert(0, {here!r})
import test_runner as t
from tpcstudy.runner import ResultStore, run_tasks
store = ResultStore({out!r}, t.COLUMNS, t.KEY)
run_tasks(t._tasks(20), t.sleepy_task, store, jobs={jobs}, progress=False, flush_interval=0)
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_at_random_moments_then_resume_gives_same_csv(tmp_path, jobs):
    def start(out: Path) -> subprocess.Popen:
        code = _CHILD.format(here=HERE, out=str(out), jobs=jobs)
        return subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    ref = tmp_path / "ref"  # uninterrupted reference, in this process (same rows, no sleeps)
    _run(ref, tasks=_tasks(20))
    reference = (ref / "results.csv").read_bytes()
    ref_rows = _read(ref / "results.csv")

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
            partial = _read(out / "results.csv")
            assert all(r in ref_rows for r in partial)
    assert kills >= 1 and mid_run >= 1
    p = start(out)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err.decode()
    assert (out / "results.csv").read_bytes() == reference
    assert not list(out.rglob("*.tmp"))


def test_leftover_temporaries_are_removed(tmp_path):
    (tmp_path / "parts").mkdir(parents=True)
    junk = tmp_path / "parts" / ".T00.csv.abc.tmp"
    junk.write_text("topology,se")
    _run(tmp_path, tasks=_tasks(1))
    assert not junk.exists() and len(_read(tmp_path / "results.csv")) == 2


def test_changed_columns_refused(tmp_path):
    _run(tmp_path, tasks=_tasks(1))
    with pytest.raises(UsageError, match="columns"):
        ResultStore(tmp_path, COLUMNS + ["extra"], KEY)
    with pytest.raises(UsageError, match="key column"):
        ResultStore(tmp_path / "x", COLUMNS, ["missing"])


def test_write_meta_records_environment_and_refuses_other_config(tmp_path):
    meta = write_meta(tmp_path, {"k": 6, "x": [0.01, 0.05]}, seeds=[0, 1], solver="highs")
    on_disk = json.loads((tmp_path / "meta.json").read_text())
    assert on_disk["study"] == {"config": {"k": 6, "x": [0.01, 0.05]}, "seeds": [0, 1],
                                "solver": "highs"}
    for key in ("python", "tpcstudy", "packages", "git_commit", "platform", "started"):
        assert key in on_disk
    assert on_disk["packages"]["numpy"] and on_disk["tpcstudy"] == "0.1.0"
    assert meta["runs"][0]["started"] == on_disk["started"]
    # same settings (tuples compare equal to lists): resumes, one more run recorded
    again = write_meta(tmp_path, {"x": (0.01, 0.05), "k": 6}, seeds=(0, 1), solver="highs")
    assert len(again["runs"]) == 2 and again["started"] == on_disk["started"]
    with pytest.raises(UsageError, match=r"config\.k"):
        write_meta(tmp_path, {"k": 5, "x": [0.01, 0.05]}, seeds=[0, 1], solver="highs")
    with pytest.raises(UsageError, match="solver"):
        write_meta(tmp_path, {"k": 6, "x": [0.01, 0.05]}, seeds=[0, 1], solver="glop")
    fresh = write_meta(tmp_path, {"k": 5}, solver="glop", overwrite=True)
    assert fresh["study"]["config"] == {"k": 5} and len(fresh["runs"]) == 1

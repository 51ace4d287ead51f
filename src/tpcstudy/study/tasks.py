"""Study tasks and the resumable loop that runs them.

A study (``tpcstudy maxflow``, ``tpcstudy disjoint``) applies one function to many
:class:`Task` objects (one topology, sometimes times a parameter); each call returns result
rows (dicts). :func:`run_tasks` stores every finished task at once (see
:class:`~tpcstudy.study.store.ResultStore`), so a run killed at any moment (even ``SIGKILL``)
resumes where it stopped and ends with the same ``results.csv`` as an uninterrupted run. Only
the parent process writes files: workers return rows, so a killed or orphaned worker cannot
leave half a file behind.

A task may carry the fingerprint of its input (:attr:`Task.inputs`: the topology file's hash
and the resolved options); a stored task whose fingerprint differs (the file was edited) runs
again, and with ``prune=True`` a stored task that is no longer among the tasks (its file
vanished) is removed from the results and reported. When a worker process dies (killed, out of
memory), only the tasks it and its pool were running are suspects: each runs again alone, and
fails only if it kills its worker again; the other tasks go on in a fresh pool.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
import traceback
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import TpcStudyError, UsageError
from ..io import csv_cell
from ..io.bounded import MAX_TEXT_BYTES, read_bounded
from .executors import InlineExecutor, ProcessExecutor, TaskExecutor
from .store import ResultStore

__all__ = ["Task", "task_id", "run_tasks", "RunSummary", "call", "input_fingerprint"]

TaskFn = Callable[["Task"], List[Dict[str, Any]]]


def task_id(key: Mapping[str, Any]) -> str:
    """A safe, unique, deterministic file name for a task key.

    Readable part ``topology=Abilene__x=0.01`` (characters outside ``[A-Za-z0-9._=-]`` become
    ``_``, cut at 80 characters) plus the first 10 hex digits of a SHA-1 of the exact key,
    so keys that clean up to the same text still get different ids.

    Examples
    --------
    >>> task_id({"topology": "Abilene", "x": 0.01})
    'topology=Abilene__x=0.01-550fc94d75'
    """
    items = [(str(k), csv_cell(v)) for k, v in key.items()]
    text = "__".join(f"{k}={v}" for k, v in items)
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:80].strip("._") or "task"
    digest = hashlib.sha1(json.dumps(items).encode("utf-8")).hexdigest()[:10]
    return f"{safe}-{digest}"


@dataclass(frozen=True)
class Task:
    """One unit of work.

    Parameters
    ----------
    key
        The values that identify the task (``{"topology": "Abilene", "x": 0.05}``); they are
        copied into its failure row, and its id (:func:`task_id`) names its part file.
    args
        Anything else the task function needs (a path, a parameter set); must be picklable
        for ``jobs > 1``.
    inputs
        Fingerprint of the exact input (see :func:`input_fingerprint`); stored with the rows,
        a different one on resume makes the task run again.
    """

    key: Mapping[str, Any]
    args: Any = None
    inputs: Optional[str] = field(default=None, compare=False)
    id: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", dict(self.key))
        object.__setattr__(self, "id", task_id(self.key))


def input_fingerprint(files: Sequence[Union[str, Path, None]], options: Any = None) -> str:
    """``sha256:<hex>`` of the files' bytes (``None`` entries skipped; each a regular file of at
    most :data:`~tpcstudy.io.bounded.MAX_TEXT_BYTES`) and the JSON of ``options``: what a stored
    task's rows depend on."""
    h = hashlib.sha256()
    for f in files:
        if f is None:
            continue
        h.update(read_bounded(f, MAX_TEXT_BYTES, follow=True))  # a FIFO, /dev/zero: refused
        h.update(b"\0")
    h.update(json.dumps(options, sort_keys=True, default=str).encode("utf-8"))
    return "sha256:" + h.hexdigest()[:32]


def call(fn: TaskFn, task: Task) -> Tuple[bool, Any]:
    """Run one task, turning an exception into ``(False, message)`` (picklable)."""
    try:
        rows = fn(task)
        return True, list(rows) if rows is not None else []
    except TpcStudyError as exc:  # an error we raise on purpose: its message says it all
        return False, f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a bug: keep where it happened
        tb = traceback.format_exc(limit=-3)
        return False, f"{type(exc).__name__}: {exc}\n{tb}".strip()


def _alone(fn: TaskFn, task: Task) -> Tuple[bool, Any]:
    """Run one task in a worker process of its own (after a worker died running it)."""
    solo = ProcessExecutor(1)
    try:
        return solo.submit(call, fn, task).result()
    except BrokenProcessPool:
        return False, ("worker process died running this task (killed, e.g. out of memory); "
                       "it died again when run alone")
    finally:
        solo.shutdown(cancel=True)


@dataclass
class RunSummary:
    """What :func:`run_tasks` did."""

    total: int
    skipped: int
    completed: int
    failed: List[str]
    seconds: float
    results: Path
    #: Stored tasks run again because their input changed (labels).
    changed: List[str] = field(default_factory=list)
    #: Stored tasks whose input is gone, removed from the results (labels).
    vanished: List[str] = field(default_factory=list)
    #: What resuming found (damaged parts discarded), one line each.
    notes: List[str] = field(default_factory=list)

    def report(self) -> str:
        """One line per fact a user should know about resuming (empty when nothing happened)."""
        lines = list(self.notes)
        if self.changed:
            lines.append(f"{len(self.changed)} stored task(s) ran again, their input changed: "
                         f"{_some(self.changed)}")
        if self.vanished:
            lines.append(f"{len(self.vanished)} stored task(s) removed, their input is gone: "
                         f"{_some(self.vanished)}")
        return "\n".join(lines)


def _some(items: Sequence[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


class _NoBar:
    """What :func:`run_tasks` calls on a bar, doing nothing (no bar: tqdm not even imported,
    ~50 ms of a run's start)."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, desc: str, progress: Union[bool, str]) -> Any:
    """A tqdm bar on stderr (``progress``: ``True`` on a terminal, ``"always"`` even when not),
    else a :class:`_NoBar`."""
    if progress != "always" and (progress is False or not sys.stderr.isatty()):
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="task", file=sys.stderr, dynamic_ncols=True,
                disable=False)


def run_tasks(tasks: Sequence[Task], fn: TaskFn,
              store: ResultStore, *, jobs: int = 1, desc: str = "tasks",
              progress: Union[bool, str] = True, on_error: str = "record",
              retry_failed: bool = True, executor: Optional[TaskExecutor] = None,
              flush_interval: float = 1.0, prune: bool = False) -> RunSummary:
    """Run ``fn`` on every task not yet stored, storing each task's rows as it finishes.

    Parameters
    ----------
    tasks
        The tasks; ids must be unique.  Already stored tasks are skipped.
    fn
        ``fn(task) -> list of row dicts`` (columns of ``store``).  For ``jobs > 1`` it must be
        importable by name (a module-level function).
    store
        Where rows go (see :class:`ResultStore`).
    jobs
        Worker processes; ``1`` runs in this process.
    desc
        Label of the progress bar.
    progress
        ``True``: a tqdm bar on stderr when stderr is a terminal; ``"always"``: even when it is
        not; ``False``: none.
    on_error
        ``"record"``: a task that raises (or returns bad rows) is stored as one row with
        ``status="failed"`` and ``error=<message>`` and the run carries on; ``"raise"``: stop
        and raise :class:`~tpcstudy.errors.TpcStudyError`.
    retry_failed
        Run tasks stored as failed again (their part is replaced).
    executor
        A :class:`TaskExecutor` to use instead of the one ``jobs`` selects (e.g. Dask).
        It is not shut down on success.
    flush_interval
        Minimum seconds between rewrites of ``results.csv`` (it is always rewritten at the
        end, also after Ctrl-C or an error); also at least 20 times the last rewrite's
        duration, so that rewriting a large study's rows (sorting, writing, fsync) takes at
        most ~5 % of this process's time, which on a machine as small as the pool it shares
        with the workers (the README's main job: 2 cores, 2 workers) would be theirs.
    prune
        Remove stored tasks that are not among ``tasks`` (their input vanished).

    Returns
    -------
    RunSummary

    Raises
    ------
    KeyboardInterrupt
        After Ctrl-C, once the finished tasks are stored and ``results.csv`` is rewritten.
    """
    if on_error not in ("record", "raise"):
        raise UsageError(f"on_error must be 'record' or 'raise', got {on_error!r}")
    if jobs < 1:
        raise UsageError(f"jobs must be >= 1, got {jobs}")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise UsageError(f"two tasks share the id {dup!r}")
    t0 = time.perf_counter()
    summary = RunSummary(len(tasks), 0, 0, [], 0.0, store.results_path,
                         notes=list(getattr(store, "notes", [])))
    todo = []
    for t in tasks:
        if store.done(t.id) and t.inputs is not None and store.fingerprint(t.id) != t.inputs:
            summary.changed.append(store.label(t.id))
            todo.append(t)
        elif not store.done(t.id) or (retry_failed and store.failed(t.id)):
            todo.append(t)
    summary.skipped = len(tasks) - len(todo)
    if prune:
        wanted = set(ids)
        for tid in store.task_ids():
            if tid not in wanted:
                summary.vanished.append(store.label(tid))
                store.forget(tid)

    own = executor is None
    # the pool before the bar: a bar on a terminal starts a monitor thread, and a pool forks
    # its workers only while this process runs one thread (executors.start_method)
    ex: TaskExecutor = executor if executor is not None else (
        InlineExecutor() if jobs == 1 or len(todo) <= 1 else ProcessExecutor(min(jobs, len(todo))))
    bar = _progress_bar(len(todo), desc, progress)
    last_flush = time.monotonic()
    interval = flush_interval

    def finish(task: Task, ok: bool, value: Any) -> None:
        nonlocal last_flush, interval
        if ok:
            try:  # validates the rows first: refused ones write nothing
                store.put(task.id, value, task.inputs)
            except UsageError as exc:
                ok, value = False, str(exc)
        if not ok:
            if on_error == "raise":
                raise TpcStudyError(f"task {task.id} failed: {value}")
            summary.failed.append(task.id)
            store.put(task.id, [store.failure_row(task.key, str(value))], task.inputs)
        summary.completed += 1
        bar.update(1)
        if time.monotonic() - last_flush >= interval:
            started = time.monotonic()
            store.flush()
            last_flush = time.monotonic()
            interval = max(flush_interval, 20.0 * (last_flush - started))

    try:
        pending = {ex.submit(call, fn, t): t for t in todo}
        while pending:
            broken: List[Task] = []
            for fut in ex.as_completed(list(pending)):
                task = pending.pop(fut)
                try:
                    ok, value = fut.result()
                except BrokenProcessPool as exc:  # a worker died (killed, out of memory, crash)
                    if isinstance(ex, ProcessExecutor):
                        broken.append(task)
                        continue
                    ok, value = False, f"worker process died: {exc}"
                except Exception as exc:  # e.g. an executor that cannot pickle the task
                    ok, value = False, f"{type(exc).__name__}: {exc}"
                finish(task, ok, value)
            if broken and isinstance(ex, ProcessExecutor):
                suspects = set(ex.running())
                ex.recover()
                for task in broken:
                    if task.id in suspects:  # run it alone: does it kill its worker again?
                        finish(task, *_alone(fn, task))
                    else:
                        pending[ex.submit(call, fn, task)] = task
    finally:
        bar.close()
        if own:
            # every task finished, or the run stops: either way no worker has work
            # left, so they are stopped at once rather than waited for while their
            # interpreters tear down (0.1-0.6 s at the end of every run)
            ex.shutdown(cancel=True)
        store.flush(force=True)
        summary.seconds = time.perf_counter() - t0
    return summary

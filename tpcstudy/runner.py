"""Resumable, parallel study runs.

A study (``tpcstudy maxflow``, ``tpcstudy disjoint``) applies one function to many
:class:`Task` objects (one topology, sometimes times a parameter); each call returns result
rows (dicts).  :func:`run_tasks` stores every finished task at once, so a run killed at any
moment (even ``SIGKILL``) resumes where it stopped and ends with the same ``results.csv``
as an uninterrupted run.

Output folder layout::

    out_dir/meta.json          config, seeds, solver, versions, commit (write_meta)
    out_dir/parts/<task>.csv   one file per finished task, written atomically
    out_dir/results.csv        every part's rows, sorted by the key columns (rebuilt atomically)

Only the parent process writes files: workers return rows, so a killed worker or an
orphaned one cannot leave half a file behind.  Every write goes to a temporary file in the
same folder, is flushed and ``fsync``-ed, then renamed over the target (``os.replace``).
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import as_completed as _futures_as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Protocol,
                    Sequence, Tuple, Union)

from .errors import TpcStudyError, UsageError
from .io import atomic_write_text, csv_cell as _cell

__all__ = ["Task", "ResultStore", "write_meta", "run_tasks", "read_results", "RunSummary", "TaskExecutor",
           "InlineExecutor", "ProcessExecutor", "task_id", "STATUS", "ERROR"]

#: Column marking a row's outcome; ``"failed"`` for the row standing for a task that raised.
STATUS = "status"
#: Column holding the error message of a failed task.
ERROR = "error"
FAILED = "failed"


# ----------------------------------------------------------------------------- tasks
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
    items = [(str(k), _cell(v)) for k, v in key.items()]
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
    """

    key: Mapping[str, Any]
    args: Any = None
    id: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", dict(self.key))
        object.__setattr__(self, "id", task_id(self.key))


# ----------------------------------------------------------------------------- files
def _csv_text(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


def _sort_key(values: Sequence[str]) -> Tuple[Tuple[int, float, str], ...]:
    """Numbers in numeric order before text in text order, column by column."""
    out = []
    for v in values:
        try:
            out.append((0, float(v), v))
        except ValueError:
            out.append((1, 0.0, v))
    return tuple(out)


# ----------------------------------------------------------------------------- store
class ResultStore:
    """Results of a study in ``out_dir``: one part file per task, merged into results.csv.

    Parameters
    ----------
    out_dir
        The results folder (created if missing).
    columns
        The CSV columns, in order.  ``status`` and ``error`` are appended when missing.
    key
        The columns that identify a row; ``results.csv`` has one row per key, sorted by them.

    Raises
    ------
    UsageError
        ``key`` names a column not in ``columns``, or an existing part file has other
        columns (the folder was written by a different version of the study).
    """

    def __init__(self, out_dir: Union[str, Path], columns: Sequence[str], key: Sequence[str]) -> None:
        self.out_dir = Path(out_dir)
        cols = list(columns)
        for extra in (STATUS, ERROR):
            if extra not in cols:
                cols.append(extra)
        if len(set(cols)) != len(cols):
            raise UsageError(f"ResultStore: duplicate column in {cols}")
        missing = [k for k in key if k not in cols]
        if missing:
            raise UsageError(f"ResultStore: key column {missing[0]!r} is not among the columns")
        self.columns: List[str] = cols
        self.key: List[str] = list(key)
        self.parts_dir = self.out_dir / "parts"
        self.results_path = self.out_dir / "results.csv"
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        self._rows: Dict[str, List[List[str]]] = {}
        self._owner: Dict[Tuple[str, ...], str] = {}
        self._dirty = False
        self._clean_temporaries()
        self._load()

    # -- loading --
    def _clean_temporaries(self) -> None:
        for d in (self.out_dir, self.parts_dir):
            for p in d.glob(".*.tmp"):
                try:
                    p.unlink()
                except OSError:
                    pass

    def _load(self) -> None:
        for path in sorted(self.parts_dir.glob("*.csv")):
            with open(path, newline="", encoding="utf-8") as fh:
                reader = csv.reader(fh)
                header = next(reader, None)
                if header != self.columns:
                    raise UsageError(f"{path}: columns {header} differ from the study's "
                                     f"{self.columns}; use a new output folder")
                rows = [r for r in reader]
            tid = path.stem
            self._rows[tid] = rows
            for r in rows:
                self._owner.setdefault(self._key_of(r), tid)

    def _key_of(self, row: Sequence[str]) -> Tuple[str, ...]:
        return tuple(row[self.columns.index(k)] for k in self.key)

    # -- queries --
    def done(self, task_id: str) -> bool:
        """``True`` when the task's part file exists (finished, successfully or not)."""
        return task_id in self._rows

    def failed(self, task_id: str) -> bool:
        """``True`` when the task is stored as failed (a row with ``status == "failed"``)."""
        s = self.columns.index(STATUS)
        return any(r[s] == FAILED for r in self._rows.get(task_id, []))

    def task_ids(self) -> List[str]:
        """Ids of the stored tasks, sorted."""
        return sorted(self._rows)

    def __len__(self) -> int:
        return sum(len(r) for r in self._rows.values())

    # -- writing --
    def encode(self, task_id: str, rows: Sequence[Mapping[str, Any]]) -> List[List[str]]:
        """Check rows and turn them into CSV cells.

        Raises
        ------
        UsageError
            A row has a column the store does not know, two rows share a key, or a key is
            already owned by another task.
        """
        out: List[List[str]] = []
        seen: Dict[Tuple[str, ...], int] = {}
        colset = set(self.columns)
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise UsageError(f"task {task_id}: row {i} is a {type(row).__name__}, not a dict")
            unknown = [c for c in row if c not in colset]
            if unknown:
                raise UsageError(f"task {task_id}: row {i} has unknown column {unknown[0]!r}")
            cells = [_cell(row.get(c)) for c in self.columns]
            k = self._key_of(cells)
            if k in seen:
                raise UsageError(f"task {task_id}: rows {seen[k]} and {i} share the key {k}")
            owner = self._owner.get(k)
            if owner is not None and owner != task_id:
                raise UsageError(f"task {task_id}: key {k} is already stored by task {owner}")
            seen[k] = i
            out.append(cells)
        return out

    def put(self, task_id: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Store a finished task's rows atomically in ``parts/<task_id>.csv``.

        ``results.csv`` is not rewritten here; call :meth:`flush`.
        """
        if not re.fullmatch(r"[A-Za-z0-9._=-]+", task_id) or task_id.startswith("."):
            raise UsageError(f"task id {task_id!r} is not a safe file name")
        cells = self.encode(task_id, rows)
        atomic_write_text(self.parts_dir / f"{task_id}.csv", _csv_text(self.columns, cells))
        for r in self._rows.get(task_id, []):  # a retried task replaces its old rows
            if self._owner.get(self._key_of(r)) == task_id:
                del self._owner[self._key_of(r)]
        self._rows[task_id] = cells
        for r in cells:
            self._owner[self._key_of(r)] = task_id
        self._dirty = True

    def flush(self, force: bool = False) -> Path:
        """Rewrite ``results.csv`` from all parts (sorted by the key columns), atomically."""
        if self._dirty or force or not self.results_path.exists():
            allrows = [r for rows in self._rows.values() for r in rows]
            allrows.sort(key=lambda r: (_sort_key(self._key_of(r)), r))
            atomic_write_text(self.results_path, _csv_text(self.columns, allrows))
            self._dirty = False
        return self.results_path

    def failure_row(self, task: Task, message: str) -> Dict[str, Any]:
        """The row standing for a task that raised: its key, ``status="failed"``, ``error``."""
        row = {k: v for k, v in task.key.items() if k in self.columns}
        row[STATUS] = FAILED
        row[ERROR] = message
        return row


# ----------------------------------------------------------------------------- meta.json
_VERSIONED = ("numpy", "networkx", "highspy", "tqdm", "scipy", "ortools", "pulp")
_RUN_FIELDS = ("started", "python", "packages", "tpcstudy", "git_commit", "git_dirty",
               "platform", "argv", "runs")


def _git_state() -> Tuple[Optional[str], Optional[bool]]:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=10)
        return head.stdout.strip(), (bool(dirty.stdout.strip()) if dirty.returncode == 0 else None)
    except (OSError, subprocess.SubprocessError):
        return None, None


def environment() -> Dict[str, Any]:
    """Versions, commit and platform of this process (without importing the LP packages)."""
    import tpcstudy

    packages: Dict[str, Optional[str]] = {}
    for name in _VERSIONED:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    commit, dirty = _git_state()
    return {
        "python": platform.python_version(),
        "tpcstudy": getattr(tpcstudy, "__version__", None),
        "packages": packages,
        "git_commit": commit,
        "git_dirty": dirty,
        "platform": platform.platform(),
        "argv": list(sys.argv),
    }


def _normalise(obj: Any) -> Any:
    """JSON round trip (tuples become lists, keys strings) so stored and new configs compare."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def write_meta(out_dir: Union[str, Path], config: Mapping[str, Any], *,
               seeds: Optional[Sequence[int]] = None, solver: Optional[str] = None,
               overwrite: bool = False) -> Dict[str, Any]:
    """Record how a run was made in ``out_dir/meta.json`` (atomically).

    Parameters
    ----------
    out_dir
        The results folder (created if missing).
    config
        The study's settings (everything that changes its results), JSON-serialisable.
    seeds, solver
        Stored beside ``config`` and compared like it.
    overwrite
        Replace a ``meta.json`` whose study settings differ instead of refusing.

    Returns
    -------
    dict
        The metadata written: ``study`` (config, seeds, solver), ``started`` (first run),
        the environment of this run (``python``, ``tpcstudy``, ``packages``, ``git_commit``,
        ``git_dirty``, ``platform``, ``argv``) and ``runs``, one entry per invocation.

    Raises
    ------
    UsageError
        ``meta.json`` exists with different study settings (resuming would mix results of
        two studies) and ``overwrite`` is false.  The message names the differing keys.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "meta.json"
    study = _normalise({"config": dict(config), "seeds": None if seeds is None else list(seeds),
                        "solver": solver})
    env = environment()
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    runs: List[Dict[str, Any]] = []
    started = now
    if path.exists() and not overwrite:
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: unreadable ({exc}); use another output folder or remove it") from exc
        if old.get("study") != study:
            a, b = old.get("study") or {}, study
            diff = sorted({f"config.{k}" for k in set(a.get("config") or {}) | set(b["config"])
                           if (a.get("config") or {}).get(k) != b["config"].get(k)}
                          | {k for k in ("seeds", "solver") if a.get(k) != b[k]})
            raise UsageError(f"{path} holds a different study (differs in: {', '.join(diff)}); "
                             "use another output folder, or start over (maxflow --overwrite)")
        runs = list(old.get("runs") or [])
        started = old.get("started") or now
    runs.append({"started": now, **{k: env[k] for k in ("tpcstudy", "git_commit", "git_dirty")}})
    meta = {"study": study, "started": started, **env, "runs": runs}
    atomic_write_text(path, json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return meta


def read_results(path: Union[str, os.PathLike]) -> List[Dict[str, str]]:
    """The rows of a study's ``results.csv`` (or any CSV) as dicts of strings, in file order."""
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ----------------------------------------------------------------------------- executors
class FutureLike(Protocol):
    """What :func:`run_tasks` needs of a future (``concurrent.futures``, Dask, ...)."""

    def result(self, timeout: Optional[float] = None) -> Any: ...

    def cancel(self) -> bool: ...


class TaskExecutor(Protocol):
    """The pluggable executor contract of :func:`run_tasks`.

    ``submit(fn, *args)`` returns a future; ``as_completed(futures)`` yields them as they
    finish; ``shutdown(cancel=True)`` drops pending work and stops workers promptly (after
    Ctrl-C).  A Dask ``distributed.Client`` fits with a three-line adapter.
    """

    def submit(self, fn: Callable[..., Any], *args: Any) -> FutureLike: ...

    def as_completed(self, futures: Iterable[FutureLike]) -> Iterator[FutureLike]: ...

    def shutdown(self, cancel: bool = False) -> None: ...


class _Deferred:
    """A future of :class:`InlineExecutor`: the call runs when the result is first asked."""

    def __init__(self, fn: Callable[..., Any], args: Tuple[Any, ...]) -> None:
        self._fn, self._args = fn, args
        self._done = False
        self._value: Any = None

    def result(self, timeout: Optional[float] = None) -> Any:
        if not self._done:
            self._value = self._fn(*self._args)
            self._done = True
        return self._value

    def cancel(self) -> bool:
        self._done = True
        return True


class InlineExecutor:
    """Runs tasks one after the other in this process (``jobs=1``), in submission order."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> _Deferred:
        return _Deferred(fn, args)

    def as_completed(self, futures: Iterable[FutureLike]) -> Iterator[FutureLike]:
        for f in futures:
            f.result()
            yield f

    def shutdown(self, cancel: bool = False) -> None:
        pass


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's business (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ProcessExecutor:
    """A ``ProcessPoolExecutor`` with ``jobs`` workers started by ``spawn``.

    ``spawn`` (not ``fork``) because a forked child of a process in which HiGHS has started
    its thread pool can deadlock.  Workers ignore SIGINT; :meth:`shutdown` with
    ``cancel=True`` kills them.
    """

    def __init__(self, jobs: int, mp_context: str = "spawn") -> None:
        import multiprocessing

        self.jobs = int(jobs)
        self._pool = ProcessPoolExecutor(max_workers=self.jobs,
                                         mp_context=multiprocessing.get_context(mp_context),
                                         initializer=_ignore_sigint)

    def submit(self, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        return self._pool.submit(fn, *args)

    def as_completed(self, futures: Iterable[FutureLike]) -> Iterator[FutureLike]:
        return _futures_as_completed(futures)  # type: ignore[arg-type]

    def shutdown(self, cancel: bool = False) -> None:
        if cancel:
            procs = list((getattr(self._pool, "_processes", None) or {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                if p.is_alive():
                    p.kill()
            for p in procs:
                p.join(timeout=5)
        else:
            self._pool.shutdown(wait=True)


# ----------------------------------------------------------------------------- running
def _call(fn: Callable[[Task], List[Dict[str, Any]]], task: Task) -> Tuple[bool, Any]:
    """Run one task, turning an exception into ``(False, message)`` (picklable)."""
    try:
        rows = fn(task)
        return True, list(rows) if rows is not None else []
    except Exception as exc:
        tb = traceback.format_exc(limit=-3)
        return False, f"{type(exc).__name__}: {exc}\n{tb}".strip()


@dataclass
class RunSummary:
    """What :func:`run_tasks` did."""

    total: int
    skipped: int
    completed: int
    failed: List[str]
    seconds: float
    results: Path


def run_tasks(tasks: Sequence[Task], fn: Callable[[Task], List[Dict[str, Any]]],
              store: ResultStore, *, jobs: int = 1, desc: str = "tasks",
              progress: Union[bool, str] = True, on_error: str = "record",
              retry_failed: bool = True, executor: Optional[TaskExecutor] = None,
              flush_interval: float = 1.0) -> RunSummary:
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
        end, also after Ctrl-C or an error).

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
    todo = [t for t in tasks
            if not store.done(t.id) or (retry_failed and store.failed(t.id))]
    t0 = time.perf_counter()
    summary = RunSummary(len(tasks), len(tasks) - len(todo), 0, [], 0.0, store.results_path)

    from tqdm.auto import tqdm

    disable: Optional[bool] = {True: None, "always": False, False: True}.get(progress, None)
    bar = tqdm(total=len(todo), desc=desc, unit="task", file=sys.stderr, disable=disable,
               dynamic_ncols=True)
    own = executor is None
    ex: TaskExecutor = executor if executor is not None else (
        InlineExecutor() if jobs == 1 or len(todo) <= 1 else ProcessExecutor(min(jobs, len(todo))))
    last_flush = time.monotonic()
    clean = False
    try:
        pending = {}
        for t in todo:
            pending[ex.submit(_call, fn, t)] = t
        for fut in ex.as_completed(list(pending)):
            task = pending.pop(fut)
            try:
                ok, value = fut.result()
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory, crash)
                ok, value = False, f"worker process died: {exc}"
            except Exception as exc:  # e.g. an executor that cannot pickle the task
                ok, value = False, f"{type(exc).__name__}: {exc}"
            if ok:
                try:
                    store.put(task.id, value)  # validates the rows first: refused ones write nothing
                except UsageError as exc:
                    ok, value = False, str(exc)
            if not ok:
                if on_error == "raise":
                    raise TpcStudyError(f"task {task.id} failed: {value}")
                summary.failed.append(task.id)
                store.put(task.id, [store.failure_row(task, str(value))])
            summary.completed += 1
            bar.update(1)
            if time.monotonic() - last_flush >= flush_interval:
                store.flush()
                last_flush = time.monotonic()
        clean = True
    finally:
        bar.close()
        if own:
            ex.shutdown(cancel=not clean)
        store.flush(force=True)
        summary.seconds = time.perf_counter() - t0
    return summary

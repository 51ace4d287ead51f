"""Where a study's tasks run: in this process, in a local process pool, or on Dask distributed.

Every study runs its tasks the same way::

    with executor_scope(kind, jobs, scheduler) as executor:
        summary = run_tasks(tasks, fn, store, jobs=jobs, executor=executor, ...)

``local`` runs the tasks one after the other in this process, ``process`` in a pool of ``jobs``
worker processes, ``dask`` on a Dask distributed cluster: the one at ``scheduler``
(``tcp://HOST:8786``, or a ``dask scheduler --scheduler-file`` JSON file), else a
:class:`distributed.LocalCluster` of ``jobs`` single-threaded worker processes started for the
run. Without a kind the choice is made by ``jobs`` (1: local, more: process), or ``dask`` when a
scheduler is given.

The core's threads are shared out: each of the ``jobs`` worker processes (``process``, the
local Dask cluster) runs at most ``max(1, cpus // jobs)`` core threads
(:func:`worker_threads`, :func:`tpcstudy.paths.set_default_threads`), ``cpus`` being the CPUs
this process may run on (its affinity), so a pool never runs more busy threads than there are
CPUs. The workers of a Dask cluster started elsewhere keep their machines' own budgets.

Results do not depend on the executor. Workers only compute and return rows; the client
process alone writes the results folder (:func:`tpcstudy.study.tasks.run_tasks`), so a worker
that dies loses no finished task: Dask runs its task again on another worker, and a task that
kept killing workers (``distributed.scheduler.allowed-failures``, 3 by default) is stored as
failed and run again by the next invocation of the same command.

Dask workers unpickle the task function by name (``tpcstudy.study.tasks.call`` and the study's
module-level task function), so every worker needs tpcstudy installed, and the topology files
at the same absolute paths as on the client.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import as_completed as futures_as_completed
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Protocol, Tuple

import tpcstudy._core as _core

from .. import paths as _paths
from .._version import __version__
from ..errors import ClusterError, UsageError
from ..io import remove_dead_temporaries, temp_prefix
from ..linux import die_with_parent

__all__ = ["EXECUTORS", "FutureLike", "TaskExecutor", "InlineExecutor", "ProcessExecutor",
           "DaskExecutor", "make_executor", "executor_scope", "worker_threads", "start_method"]

#: The executor kinds (``--executor``).
EXECUTORS = ("local", "process", "dask")


class FutureLike(Protocol):
    """What :func:`~tpcstudy.study.tasks.run_tasks` needs of a future (``concurrent.futures``, Dask, ...)."""

    def result(self, timeout: Optional[float] = None) -> Any: ...

    def cancel(self) -> bool: ...


class TaskExecutor(Protocol):
    """The pluggable executor contract of :func:`~tpcstudy.study.tasks.run_tasks`.

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


def worker_threads(jobs: int) -> int:
    """Core threads of each of ``jobs`` worker processes on this machine: ``max(1, cpus //
    jobs)``, ``cpus`` the CPUs this process may run on, so that the workers together never run
    more busy threads than there are CPUs (with more workers than CPUs, one thread each)."""
    return max(1, _paths.available_cpus() // max(1, int(jobs)))


def _set_core_threads(threads: int) -> None:
    """Set a worker's core thread budget (module level: Dask workers import it by name)."""
    _paths.set_default_threads(threads)


#: The worker's folder of "task running" marks (set by :func:`_worker_init`).
_MARKS: Optional[str] = None


def _worker_init(parent: int, marks: str, threads: int) -> None:
    """Worker initializer: Ctrl-C and SIGTERM are the parent's business (it stops the
    workers); the worker dies with its parent, whatever kills the parent; its core calls run at
    most ``threads`` threads (its share of the CPUs)."""
    global _MARKS
    _MARKS = marks
    _set_core_threads(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(parent)


def _run_marked(fn: Callable[..., Any], args: Tuple[Any, ...]) -> Any:
    """Run ``fn(*args)`` in a worker with a mark naming the task while it runs, so that the
    parent knows which tasks a dead worker pool was running."""
    mark = os.path.join(_MARKS, str(os.getpid())) if _MARKS else None
    name = next((str(a.id) for a in args if hasattr(a, "id") and hasattr(a, "key")), "")
    if mark:
        with open(mark, "w", encoding="utf-8") as fh:
            fh.write(name)
    try:
        return fn(*args)
    finally:
        if mark:
            with contextlib.suppress(OSError):
                os.unlink(mark)


def start_method() -> str:
    """How a pool started now would start its workers: ``fork`` where that is safe, else
    ``spawn``.

    A forked worker begins with this process's imports (numpy, tpcstudy and its core, the
    study's modules) instead of importing them again: a spawned worker takes 0.25-0.4 s to
    start on this project's 2-core machine, most of it imports, a tenth of the README's main
    job. Forking is safe here when this process (1) runs on Linux, (2) runs no other Python
    thread (a lock another thread held at the fork would stay held in the child), and (3) has
    not imported HiGHS: its solver starts a pool of threads on its first run, which a forked
    child would wait on forever. Otherwise ``spawn``. (The core starts its threads per call
    and joins them before returning; numpy's OpenBLAS handles a fork itself.)
    """
    if sys.platform != "linux" or "highspy" in sys.modules or threading.active_count() > 1:
        return "spawn"
    return "fork"


class ProcessExecutor:
    """A ``ProcessPoolExecutor`` with ``jobs`` workers, started by :func:`start_method`
    (``fork`` where safe, else ``spawn``) unless ``mp_context`` names one.

    Workers ignore SIGINT and SIGTERM and die with the parent (``PR_SET_PDEATHSIG`` on Linux);
    :meth:`shutdown` with ``cancel=True`` kills them. When a worker dies (killed, out of
    memory), :meth:`running` names the tasks the pool was running and :meth:`recover` starts a
    fresh pool for the rest. Each worker's core calls run at most :func:`worker_threads`
    threads (:attr:`threads`). A forked pool's workers start here, at once, before any thread
    of the pool's own (``ProcessPoolExecutor`` starts its manager thread after them).
    """

    def __init__(self, jobs: int, mp_context: Optional[str] = None) -> None:
        self.jobs = int(jobs)
        self.threads = worker_threads(self.jobs)
        self._method = mp_context
        remove_dead_temporaries(tempfile.gettempdir(), only=".tpcstudy-workers.")
        self._marks = tempfile.mkdtemp(prefix=temp_prefix("tpcstudy-workers"))
        self._pool = self._new_pool()

    @property
    def method(self) -> str:
        """How the current pool started its workers (``fork`` or ``spawn``)."""
        return self._context.get_start_method()

    def _new_pool(self) -> ProcessPoolExecutor:
        # chosen again for each pool: a pool recovered after a worker died is started while
        # the old pool's manager thread may still run (then: spawn)
        self._context = multiprocessing.get_context(self._method or start_method())
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=self._context,
                                   initializer=_worker_init,
                                   initargs=(os.getpid(), self._marks, self.threads))
        if self.method == "fork":  # the workers now, while this is the only thread
            pool.submit(int)
        return pool

    def submit(self, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        return self._pool.submit(_run_marked, fn, args)

    def as_completed(self, futures: Iterable[FutureLike]) -> Iterator[FutureLike]:
        return futures_as_completed(futures)  # type: ignore[arg-type]

    def running(self) -> List[str]:
        """Ids of the tasks whose workers had started them and not finished (after a worker
        died: the dead worker's task and those the pool killed with it)."""
        out = []
        for name in sorted(os.listdir(self._marks)):
            with contextlib.suppress(OSError):
                with open(os.path.join(self._marks, name), encoding="utf-8") as fh:
                    out.append(fh.read().strip())
        return [t for t in out if t]

    def recover(self) -> None:
        """Replace a broken pool (a worker died) by a fresh one."""
        self._kill(self._pool)
        for name in os.listdir(self._marks):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._marks, name))
        self._pool = self._new_pool()

    @staticmethod
    def _kill(pool: ProcessPoolExecutor) -> None:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(timeout=5)

    def shutdown(self, cancel: bool = False) -> None:
        try:
            if cancel:
                self._kill(self._pool)
            else:
                self._pool.shutdown(wait=True)
        finally:
            shutil.rmtree(self._marks, ignore_errors=True)


def _worker_info() -> Dict[str, Any]:
    """Run on each worker: it unpickles this function (so imports tpcstudy and its compiled
    core); report the versions."""
    return {"tpcstudy": __version__, "python": sys.version.split()[0],
            "core": _core.__name__}


class DaskExecutor:
    """A :class:`TaskExecutor` on Dask distributed.

    Parameters
    ----------
    scheduler
        ``tcp://HOST:PORT`` of a running ``dask scheduler``, or the path of the JSON file it
        wrote with ``--scheduler-file``.  ``None``: start a :class:`distributed.LocalCluster`
        of ``jobs`` worker processes with one thread each, whose core calls run on at most
        :func:`worker_threads` threads (closed again by :meth:`shutdown`).
    jobs
        Workers of the local cluster (ignored with ``scheduler``).
    client
        An existing :class:`distributed.Client` to use instead (it is not closed by
        :meth:`shutdown`; its pending futures are cancelled).
    timeout
        Seconds to wait for the scheduler to answer (default: Dask's
        ``distributed.comm.timeouts.connect``, 30 s, or ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``).
    check_workers
        Check that the workers connected now import tpcstudy at the client's version; a
        worker that cannot raises :class:`~tpcstudy.errors.ClusterError`, another version is
        a warning on stderr.

    Raises
    ------
    UsageError
        ``distributed`` is not installed.
    ClusterError
        The scheduler cannot be reached, or a worker cannot import tpcstudy.
    """

    def __init__(self, scheduler: Optional[str] = None, *, jobs: int = 1, client: Any = None,
                 timeout: Optional[float] = None, check_workers: bool = True) -> None:
        try:
            import distributed
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise UsageError("--executor dask needs Dask distributed: "
                             "pip install 'tpcstudy[dask]' (or 'dask[distributed]')") from exc
        self._distributed = distributed
        self._cluster: Any = None
        self._own_client = client is None
        self._futures: List[Any] = []
        self._run = uuid.uuid4().hex[:8]
        if client is not None:
            self.client = client
        elif scheduler:
            kw: Dict[str, Any] = {"set_as_default": False}
            if timeout is not None:
                kw["timeout"] = timeout
            try:
                if os.path.isfile(scheduler):
                    self.client = distributed.Client(scheduler_file=scheduler, **kw)
                else:
                    self.client = distributed.Client(scheduler, **kw)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(f"--scheduler {scheduler}: cannot connect to a Dask "
                                   f"scheduler ({type(exc).__name__}: {exc})") from exc
        else:
            if jobs < 1:
                raise UsageError(f"--jobs must be >= 1, got {jobs}")
            self._cluster = distributed.LocalCluster(n_workers=int(jobs), threads_per_worker=1,
                                                     processes=True, dashboard_address=None)
            self.client = distributed.Client(self._cluster, set_as_default=False)
        try:
            if self._cluster is not None:  # our workers, on this machine: share out its CPUs
                # runs now on the workers there are, and on any started later (a restart)
                self.client.register_worker_callbacks(
                    setup=functools.partial(_set_core_threads, worker_threads(jobs)))
            if check_workers:
                self._check_workers()
        except BaseException:
            self.shutdown(cancel=True)
            raise

    @property
    def scheduler_address(self) -> str:
        """The address of the scheduler the client talks to."""
        return str(self.client.scheduler.address)

    def _check_workers(self) -> None:
        try:
            infos = self.client.run(_worker_info)
        except Exception as exc:
            raise ClusterError(f"Dask workers at {self.scheduler_address} cannot import tpcstudy "
                               f"({type(exc).__name__}: {exc}); install it on every worker") from exc
        mine = __version__
        other = sorted({str(i.get("tpcstudy")) for i in infos.values()} - {str(mine)})
        if other:
            print(f"tpcstudy: warning: Dask workers run tpcstudy {', '.join(other)}, this client "
                  f"{mine}", file=sys.stderr)
        if not infos:
            print(f"tpcstudy: no Dask worker connected to {self.scheduler_address} yet; tasks "
                  "wait for one", file=sys.stderr)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Submit ``fn(*args)``; the key names the task (``tpcstudy-<task id>-<run>``)."""
        # tasks carry an ``id`` (tpcstudy.study.tasks.Task): name the Dask key after it
        name = next((str(a.id) for a in args if hasattr(a, "id") and hasattr(a, "key")),
                    getattr(fn, "__name__", "call"))
        fut = self.client.submit(fn, *args, key=f"tpcstudy-{name}-{self._run}-{len(self._futures)}",
                                 pure=False)
        self._futures.append(fut)
        return fut

    def as_completed(self, futures: Iterable[FutureLike]) -> Iterator[FutureLike]:
        """The futures in the order they finish (successfully, with an error, or cancelled)."""
        return iter(self._distributed.as_completed(list(futures), loop=self.client.loop))

    def shutdown(self, cancel: bool = False) -> None:
        """Cancel pending futures (``cancel=True``), then close the client and cluster we own."""
        futures, self._futures = self._futures, []
        try:
            if cancel and futures:
                pending = [f for f in futures if not f.done()]
                if pending:
                    self.client.cancel(pending, force=True)
        except Exception:  # the scheduler may be gone already
            pass
        finally:
            if self._own_client:
                with contextlib.suppress(Exception):
                    self.client.close(timeout=10)
            if self._cluster is not None:
                with contextlib.suppress(Exception):
                    self._cluster.close(timeout=10)
                self._cluster = None

    def __enter__(self) -> "DaskExecutor":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.shutdown(cancel=exc_type is not None)


# ----------------------------------------------------------------------------- choosing one
def make_executor(kind: Optional[str] = None, jobs: int = 1,
                  scheduler: Optional[str] = None) -> Optional[TaskExecutor]:
    """The executor ``kind`` with ``jobs`` workers (``None``: let ``run_tasks`` pick by
    ``jobs``).

    Parameters
    ----------
    kind
        ``"local"``, ``"process"``, ``"dask"`` or ``None`` (``"dask"`` when ``scheduler`` is
        given, else chosen by ``run_tasks``).
    jobs
        Worker processes (``process``, local Dask cluster).
    scheduler
        Dask scheduler address or scheduler file (``dask`` only).

    Raises
    ------
    UsageError
        ``jobs`` below 1, a scheduler with another kind than dask, ``local`` with more than one
        job, or an unknown kind.
    ClusterError
        A Dask scheduler that cannot be reached.
    """
    if jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {jobs}")
    if scheduler and kind not in (None, "dask"):
        raise UsageError(f"--scheduler needs --executor dask, not --executor {kind}")
    if kind is None:
        kind = "dask" if scheduler else None
    if kind is None:
        return None
    if kind == "local":
        if jobs > 1:
            raise UsageError("--executor local runs one task at a time; use --executor process "
                             f"for --jobs {jobs}")
        return InlineExecutor()
    if kind == "process":
        return ProcessExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(scheduler, jobs=jobs)
    raise UsageError(f"--executor: choose from {', '.join(EXECUTORS)}, not {kind!r}")


@contextlib.contextmanager
def executor_scope(kind: Optional[str] = None, jobs: int = 1,
                   scheduler: Optional[str] = None) -> Iterator[Optional[TaskExecutor]]:
    """:func:`make_executor`, shut down on leaving (pending work cancelled after an error or
    Ctrl-C); ``None`` when ``run_tasks`` should pick by ``jobs``."""
    ex = make_executor(kind, jobs, scheduler)
    ok = False
    try:
        yield ex
        ok = True
    finally:
        if ex is not None:
            ex.shutdown(cancel=not ok)

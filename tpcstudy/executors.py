"""Where a study's tasks run: in this process, in a local process pool, or on Dask distributed.

Every study command (``tpcstudy maxflow``, ``tpcstudy disjoint``) takes the same options
(:func:`add_executor_options`) and runs its tasks the same way::

    with executor_scope(args) as executor:
        summary = run_tasks(tasks, fn, store, jobs=args.jobs, executor=executor, ...)

``--executor local`` runs the tasks one after the other in this process, ``process`` in a pool
of ``--jobs`` worker processes, ``dask`` on a Dask distributed cluster: the one at
``--scheduler tcp://HOST:8786`` (or a ``dask scheduler --scheduler-file`` JSON file), else a
:class:`distributed.LocalCluster` of ``--jobs`` single-threaded worker processes started for
the run.  Without ``--executor`` the choice is made by ``--jobs`` (1: local, more: process), or
``dask`` when ``--scheduler`` is given.

Results do not depend on the executor.  Workers only compute and return rows; the client
process alone writes the results folder (:func:`tpcstudy.runner.run_tasks`), so a worker that
dies loses no finished task: Dask runs its task again on another worker, and a task that kept
killing workers (``distributed.scheduler.allowed-failures``, 3 by default) is stored as failed
and run again by the next invocation of the same command.

Dask workers unpickle the task function by name (``tpcstudy.runner._call`` and the study's
module-level task function), so every worker needs tpcstudy installed, and the topology files
at the same absolute paths as on the client.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import uuid
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional

from .errors import UsageError
from .runner import FutureLike, InlineExecutor, ProcessExecutor, Task, TaskExecutor

__all__ = ["EXECUTORS", "DaskExecutor", "add_executor_options", "make_executor",
           "executor_scope"]

#: The values of ``--executor``.
EXECUTORS = ("local", "process", "dask")


# ----------------------------------------------------------------------------- Dask
def _worker_info() -> Dict[str, Any]:
    """Run on each worker: can it import tpcstudy (and its compiled core), which version."""
    import tpcstudy
    from tpcstudy import _core  # noqa: F401  (the compiled module must load too)

    return {"tpcstudy": getattr(tpcstudy, "__version__", None), "python": sys.version.split()[0]}


class DaskExecutor:
    """A :class:`~tpcstudy.runner.TaskExecutor` on Dask distributed.

    Parameters
    ----------
    scheduler
        ``tcp://HOST:PORT`` of a running ``dask scheduler``, or the path of the JSON file it
        wrote with ``--scheduler-file``.  ``None``: start a :class:`distributed.LocalCluster`
        of ``jobs`` worker processes with one thread each (closed again by :meth:`shutdown`).
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
        worker that cannot raises :class:`~tpcstudy.errors.UsageError`, another version is a
        warning on stderr.

    Raises
    ------
    UsageError
        ``distributed`` is not installed, the scheduler cannot be reached, or a worker
        cannot import tpcstudy.
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
                raise UsageError(f"--scheduler {scheduler}: cannot connect to a Dask "
                                 f"scheduler ({type(exc).__name__}: {exc})") from exc
        else:
            if jobs < 1:
                raise UsageError(f"--jobs must be >= 1, got {jobs}")
            self._cluster = distributed.LocalCluster(n_workers=int(jobs), threads_per_worker=1,
                                                     processes=True, dashboard_address=None)
            self.client = distributed.Client(self._cluster, set_as_default=False)
        if check_workers:
            try:
                self._check_workers()
            except BaseException:
                self.shutdown(cancel=True)
                raise

    @property
    def scheduler_address(self) -> str:
        """The address of the scheduler the client talks to."""
        return str(self.client.scheduler.address)

    def _check_workers(self) -> None:
        import tpcstudy

        try:
            infos = self.client.run(_worker_info)
        except Exception as exc:
            raise UsageError(f"Dask workers at {self.scheduler_address} cannot import tpcstudy "
                             f"({type(exc).__name__}: {exc}); install it on every worker") from exc
        mine = getattr(tpcstudy, "__version__", None)
        other = sorted({str(i.get("tpcstudy")) for i in infos.values()} - {str(mine)})
        if other:
            print(f"tpcstudy: warning: Dask workers run tpcstudy {', '.join(other)}, this client "
                  f"{mine}", file=sys.stderr)
        if not infos:
            print(f"tpcstudy: no Dask worker connected to {self.scheduler_address} yet; tasks "
                  "wait for one", file=sys.stderr)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Submit ``fn(*args)``; the key names the task (``tpcstudy-<task id>-<run>``)."""
        task = next((a for a in args if isinstance(a, Task)), None)
        name = task.id if task is not None else getattr(fn, "__name__", "call")
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


# ----------------------------------------------------------------------------- CLI
def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--executor`` and ``--scheduler`` (the study's own ``--jobs`` stays where it is)."""
    parser.add_argument("--executor", choices=EXECUTORS, default=None,
                        help="where tasks run: local (this process, one at a time), process "
                             "(--jobs worker processes), dask (a Dask cluster: --scheduler, or a "
                             "local cluster of --jobs workers); default: local for --jobs 1, "
                             "process for more, dask with --scheduler")
    parser.add_argument("--scheduler", default=None, metavar="ADDR",
                        help="Dask scheduler address (tcp://HOST:8786) or scheduler JSON file; "
                             "workers need tpcstudy and the topology files at the same paths")


def make_executor(args: argparse.Namespace) -> Optional[TaskExecutor]:
    """The executor the options of ``args`` select (``None``: let run_tasks pick by ``--jobs``).

    Raises
    ------
    UsageError
        ``--scheduler`` with another executor than dask, ``--executor local`` with ``--jobs``
        above 1, or a Dask scheduler that cannot be reached.
    """
    kind = getattr(args, "executor", None)
    scheduler = getattr(args, "scheduler", None)
    jobs = int(getattr(args, "jobs", 1))
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
def executor_scope(args: argparse.Namespace) -> Iterator[Optional[TaskExecutor]]:
    """:func:`make_executor`, shut down on leaving (pending work cancelled after an error or
    Ctrl-C); ``None`` when ``run_tasks`` should pick by ``--jobs``."""
    ex = make_executor(args)
    ok = False
    try:
        yield ex
        ok = True
    finally:
        if ex is not None:
            ex.shutdown(cancel=not ok)

"""The one harness of the LP studies (max-flow :mod:`.maxflow`, minimum MLU :mod:`.mlu`,
disjoint paths :mod:`.disjoint`), as the emulator has its own
(:mod:`tpcstudy.emulate.experiments.harness`): one task per topology file, largest first; the
results folder locked for the run, started over with ``--overwrite``, ``meta.json`` written,
the store of the kind's columns (:data:`.kinds.KINDS`) opened so that a re-run resumes, the
tasks run, ``results.csv`` read back.

A study gives its kind, its settings (what ``meta.json`` records), its tasks and the function
that runs one; nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import TpcStudyError, UsageError
from ..io import topology_files
from ..io.specs import spec_text
from ..models.demands import demands_file
from .executors import TaskExecutor
from .folderlock import folder_lock
from .kinds import kind as kind_of
from .provenance import write_meta
from .store import ResultStore, discard_results, read_results
from .tasks import RunSummary, Task, input_fingerprint, run_tasks

__all__ = ["by_size", "topology_tasks", "task_demands", "run_study", "run_demand_study"]


def by_size(files: Sequence[Path]) -> List[Path]:
    """The topology files, largest first (the big ones start early and the workers stay busy),
    ties by name."""
    return sorted((Path(p) for p in files), key=lambda p: (-p.stat().st_size, p.name))


def task_demands(path: Path, spec: Optional[str], drawn: Sequence[str]) -> Optional[Path]:
    """The demands file the task of ``path`` reads (its input fingerprint includes it);
    ``None`` when none, or none found (the task itself says why)."""
    try:
        found = demands_file(spec, path, drawn=drawn)
    except TpcStudyError:
        return None
    return found if found is not None and found.is_file() else None


def topology_tasks(files: Sequence[Path], config: Any, options: Mapping[str, Any], *,
                   key: Callable[[Path], Dict[str, Any]],
                   inputs: Callable[[Path], Sequence[Optional[Path]]] = lambda p: [p]
                   ) -> List[Task]:
    """One task per topology file, largest first: key ``key(path)``, arguments ``(absolute
    path, config)`` (absolute: Dask workers may run in another folder or on another machine),
    input fingerprint of the files ``inputs(path)`` and ``options``."""
    return [Task(key(p), (str(p.absolute()), config),
                 inputs=input_fingerprint(list(inputs(p)), dict(options)))
            for p in by_size(files)]


def run_study(out_dir: Union[str, Path], kind: str, meta: Mapping[str, Any],
              make_tasks: Callable[[], List[Task]], run: Callable[[Task], Any], *,
              seeds: Optional[Sequence[int]] = None, solver: Optional[str] = None,
              overwrite: bool = False, jobs: int = 1, progress: Union[bool, str] = True,
              executor: Optional[TaskExecutor] = None, extra: Sequence[str] = (),
              after: Optional[Callable[[List[Task], ResultStore], None]] = None
              ) -> Tuple[RunSummary, List[Dict[str, str]]]:
    """Run (or resume) a study of ``kind`` in ``out_dir`` (module docstring).

    ``make_tasks()`` is called once the folder is locked and ``meta.json`` written;
    ``extra``: subfolders ``--overwrite`` drops too; ``after(tasks, store)``: what the study
    does with the finished tasks before the results are read back (disjoint: join the paths).

    Raises
    ------
    UsageError
        Another run holds the folder, or it holds a study with other settings (and not
        ``overwrite``).
    """
    k = kind_of(kind)
    out = Path(out_dir)
    with folder_lock(out):  # one writer per folder, --overwrite included
        if overwrite:  # a fresh study in an old folder: drop the old results first
            discard_results(out, *extra)
        write_meta(out, meta, kind=k.name, seeds=None if seeds is None else list(seeds),
                   solver=solver, overwrite=overwrite)
        tasks = make_tasks()
        store = ResultStore(out, list(k.columns), list(k.key), k.previous)
        summary = run_tasks(tasks, run, store, jobs=jobs, desc=k.name, progress=progress,
                            executor=executor, prune=True)
        if after is not None:
            after(tasks, store)
        return summary, read_results(store.results_path)


def run_demand_study(topo_spec: Any, out_dir: Union[str, Path], kind: str, config: Any,
                     run: Callable[[Task], Any], *, drawn: Sequence[str], jobs: int = 1,
                     progress: Union[bool, str] = True,
                     executor: Optional[TaskExecutor] = None, overwrite: bool = False
                     ) -> Tuple[RunSummary, List[Dict[str, str]]]:
    """:func:`run_study` for a study with ``--demands`` (max-flow, minimum MLU): one task per
    topology keyed by its name and file, its input the file and the demands file it reads
    (``drawn``: the matrices drawn instead of read); ``config`` has ``demands``, ``seeds``,
    ``solver`` and ``meta(topo_text)``.

    Raises
    ------
    UsageError
        A single demands file for several topologies (and :func:`run_study`'s).
    """
    files = topology_files(topo_spec)
    if config.demands not in (None, "auto", *drawn) and len(files) != 1:
        raise UsageError("--demands FILE needs a single topology; use --demands auto for a folder")
    options = config.meta("")
    return run_study(
        out_dir, kind, config.meta(spec_text(topo_spec)),
        lambda: topology_tasks(files, config, options,
                               key=lambda p: {"topology": p.stem, "file": p.name},
                               inputs=lambda p: [p, task_demands(p, config.demands, drawn)]),
        run, seeds=config.seeds, solver=config.solver, overwrite=overwrite, jobs=jobs,
        progress=progress, executor=executor)

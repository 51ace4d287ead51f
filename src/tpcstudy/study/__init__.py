"""The studies: resumable, parallel runs over topology collections, and their summaries.

- :mod:`~tpcstudy.study.tasks`: :class:`Task` and :func:`run_tasks` (resumable, crash-safe);
- :mod:`~tpcstudy.study.executors`: where tasks run (this process, a process pool, Dask);
- :mod:`~tpcstudy.study.store`: the results folder (:class:`ResultStore`) and reading one back
  (:func:`load_results`, the kind taken from ``meta.json``);
- :mod:`~tpcstudy.study.provenance`: versions, commit and settings in ``meta.json``;
- one module per study, each with its configuration, its ``run_*_study`` and the one
  ``summarize`` the command line and the figures share: :mod:`~tpcstudy.study.maxflow`
  (Figure 6), :mod:`~tpcstudy.study.disjoint` (Figure 7), :mod:`~tpcstudy.study.stats`
  (topology statistics, Figure 5);
- :mod:`~tpcstudy.study.paper`: the published numbers printed beside ours.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers and readers
    from .disjoint import DisjointConfig, run_disjoint_study
    from .executors import EXECUTORS, executor_scope, make_executor
    from .maxflow import MaxflowConfig, run_maxflow_study
    from .provenance import environment, read_meta, write_meta
    from .store import Results, ResultStore, load_results, read_results
    from .summary import summary_line
    from .tasks import RunSummary, Task, run_tasks

#: Public name -> the module that defines it, imported on first use (PEP 562): a command or a
#: worker process that needs one study does not load the others (the max-flow study's workers
#: and its command imported all of them, the minimum-MLU study included, on every start).
_LAZY: Dict[str, str] = {
    **dict.fromkeys(["DisjointConfig", "run_disjoint_study"], "disjoint"),
    **dict.fromkeys(["EXECUTORS", "executor_scope", "make_executor"], "executors"),
    **dict.fromkeys(["MaxflowConfig", "run_maxflow_study"], "maxflow"),
    **dict.fromkeys(["environment", "read_meta", "write_meta"], "provenance"),
    **dict.fromkeys(["Results", "ResultStore", "load_results", "read_results"], "store"),
    "summary_line": "summary",
    **dict.fromkeys(["RunSummary", "Task", "run_tasks"], "tasks"),
}

__all__ = [
    "Task", "run_tasks", "RunSummary", "ResultStore", "Results", "load_results", "read_results",
    "write_meta", "read_meta", "environment", "make_executor", "executor_scope", "EXECUTORS",
    "MaxflowConfig", "run_maxflow_study", "DisjointConfig", "run_disjoint_study", "summary_line",
]


def __getattr__(name: str) -> Any:
    """A public name (:data:`_LAZY`) or a submodule, imported on first use."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))

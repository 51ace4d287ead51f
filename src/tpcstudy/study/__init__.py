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

from .disjoint import DisjointConfig, run_disjoint_study
from .executors import EXECUTORS, executor_scope, make_executor
from .maxflow import MaxflowConfig, run_maxflow_study
from .provenance import environment, read_meta, write_meta
from .store import Results, ResultStore, load_results, read_results
from .summary import summary_line
from .tasks import RunSummary, Task, run_tasks

__all__ = [
    "Task", "run_tasks", "RunSummary", "ResultStore", "Results", "load_results", "read_results",
    "write_meta", "read_meta", "environment", "make_executor", "executor_scope", "EXECUTORS",
    "MaxflowConfig", "run_maxflow_study", "DisjointConfig", "run_disjoint_study", "summary_line",
]

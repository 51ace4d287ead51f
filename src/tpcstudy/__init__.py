"""tpcstudy: how much capacity does host-chosen Segment Routing unlock, and which paths to give hosts.

The public API (names fixed; notebooks and scripts rely on them):

- topologies: :func:`read_topology`, :func:`read_topologies`, :func:`read_demands`,
  :func:`prune`, :class:`Topology`
- paths (C++ core): :func:`shortest_paths`, :func:`ecmp_ratios`, :func:`sr_path`,
  :func:`edge_disjoint_paths`, :func:`edge_disjoint_path_count`
- the max-flow LP: :func:`max_flow`, and the heavy-hitter pairs it is solved for,
  :func:`heavy_pairs`
- path tables for the TPC agent: :func:`path_table`, :func:`write_paths`, :func:`default_plan`,
  :func:`read_plan`
- the studies over whole collections: :mod:`tpcstudy.study` (:func:`run_maxflow_study`,
  :func:`run_disjoint_study`); their figures: :mod:`tpcstudy.plotting`

The package's layout, top down (each imports only what stands below it; the table with every
unit is docs/architecture.md, which ``tests/test_architecture.py`` reads and checks against
every import): :mod:`~tpcstudy.cli` (the ``tpcstudy`` command, which nothing else imports) ->
:mod:`~tpcstudy.plotting` -> :mod:`~tpcstudy.emulate` -> :mod:`~tpcstudy.study` ->
:mod:`~tpcstudy.hostagent` -> :mod:`~tpcstudy.export` -> :mod:`~tpcstudy.models` (the
forwarding models and both LPs) -> :mod:`~tpcstudy.lp`, :mod:`~tpcstudy.pairs` ->
:mod:`~tpcstudy.io`, :mod:`~tpcstudy.paths` -> :mod:`~tpcstudy.topology` ->
:mod:`~tpcstudy.rules` -> the leaves (:mod:`~tpcstudy.errors`, the C++ ``_core``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, List

from ._version import __version__
from .errors import TopologyFormatError, TpcStudyError, UsageError, ZooDataError

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers and readers
    from .export import (
        AddressPlan,
        Entry,
        PathRecord,
        PathTable,
        default_plan,
        path_table,
        read_plan,
        write_paths,
    )
    from .io import read_demands, read_topologies, read_topology
    from .models.maxflow import MaxFlowResult, max_flow
    from .pairs import heavy_pairs
    from .paths import (
        DisjointPath,
        DisjointPathBatch,
        SrPath,
        ecmp_ratios,
        edge_disjoint_path_count,
        edge_disjoint_paths,
        shortest_paths,
        sr_path,
    )
    from .study import DisjointConfig, MaxflowConfig, run_disjoint_study, run_maxflow_study
    from .topology import Topology, prune

#: Public name -> the module that defines it. Imported on first use (PEP 562), so that
#: ``import tpcstudy.emulate.agent`` in the emulator's traffic processes does not load the C++
#: core, the LP solvers and every study (the agent needs about ten modules, not sixty).
_LAZY: Dict[str, str] = {
    **dict.fromkeys(["AddressPlan", "Entry", "PathRecord", "PathTable", "default_plan",
                     "path_table", "read_plan", "write_paths"], "export"),
    **dict.fromkeys(["read_demands", "read_topologies", "read_topology"], "io"),
    **dict.fromkeys(["MaxFlowResult", "max_flow"], "models.maxflow"),
    "heavy_pairs": "pairs",
    **dict.fromkeys(["DisjointPath", "DisjointPathBatch", "SrPath", "ecmp_ratios",
                     "edge_disjoint_paths", "edge_disjoint_path_count",
                     "shortest_paths", "sr_path"], "paths"),
    **dict.fromkeys(["DisjointConfig", "MaxflowConfig", "run_disjoint_study",
                     "run_maxflow_study"], "study"),
    **dict.fromkeys(["Topology", "prune"], "topology"),
}

__all__ = [
    "Topology", "prune", "read_topology", "read_topologies", "read_demands",
    "shortest_paths", "ecmp_ratios", "sr_path", "edge_disjoint_paths", "edge_disjoint_path_count",
    "SrPath", "DisjointPath", "DisjointPathBatch", "max_flow", "heavy_pairs", "MaxFlowResult",
    "path_table", "write_paths", "PathTable", "Entry", "PathRecord", "AddressPlan", "default_plan",
    "read_plan", "MaxflowConfig", "run_maxflow_study", "DisjointConfig", "run_disjoint_study",
    "TpcStudyError", "TopologyFormatError", "UsageError", "ZooDataError", "__version__",
]


def __getattr__(name: str) -> Any:
    """A public name (:data:`_LAZY`) or a subpackage, imported on first use."""
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

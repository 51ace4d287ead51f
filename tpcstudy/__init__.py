"""tpcstudy: how much capacity does host-chosen Segment Routing unlock, and which paths to give hosts.

The public API (names fixed; notebooks and scripts rely on them):

- topologies: :func:`read_topology`, :func:`read_topologies`, :func:`read_demands`,
  :func:`prune`, :class:`Topology`
- paths (C++ core): :func:`shortest_paths`, :func:`ecmp_ratios`, :func:`sr_path`,
  :func:`edge_disjoint_paths`
- the max-flow LP study: :func:`max_flow`, :func:`heavy_pairs`
- path tables for the TPC agent: :func:`path_table`, :func:`write_paths`, :func:`default_plan`,
  :func:`read_plan`
"""

from __future__ import annotations

from .errors import TopologyFormatError, TpcStudyError, UsageError, ZooDataError
from .topology import Topology, prune
from .io import read_demands, read_topologies, read_topology
from .paths import (DisjointPathBatch, SrPath, ecmp_ratios, edge_disjoint_paths, shortest_paths,
                    sr_path)
from .maxflow import MaxFlowResult, max_flow
from .pairs import heavy_pairs
from .addressing import AddressPlan, default_plan, read_plan
from .export import Entry, PathRecord, PathTable, path_table, write_paths

__version__ = "0.1.0"

__all__ = [
    "Topology", "prune", "read_topology", "read_topologies", "read_demands",
    "shortest_paths", "ecmp_ratios", "sr_path", "edge_disjoint_paths",
    "SrPath", "DisjointPathBatch", "max_flow", "heavy_pairs", "MaxFlowResult",
    "path_table", "write_paths", "PathTable", "Entry", "PathRecord", "AddressPlan", "default_plan",
    "read_plan",
    "TpcStudyError", "TopologyFormatError", "UsageError", "ZooDataError", "__version__",
]

"""tpcstudy: how much capacity does host-chosen Segment Routing unlock, and which paths to give hosts.

The public API (names fixed; notebooks and scripts rely on them):

- topologies: :func:`read_topology`, :func:`read_topologies`, :func:`prune`, :class:`Topology`
"""

from __future__ import annotations

from .errors import TopologyFormatError, TpcStudyError, UsageError, ZooDataError
from .topology import Topology, prune
from .readers import read_topology, read_topologies, read_demands

__version__ = "0.1.0"

__all__ = [
    "Topology", "prune", "read_topology", "read_topologies", "read_demands",
    "TpcStudyError", "TopologyFormatError", "UsageError", "ZooDataError", "__version__",
]

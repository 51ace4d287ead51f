"""Input and output: topology formats, ``--topo`` specs, data sets, atomic files.

- one module per topology format: :mod:`~tpcstudy.io.gml`, :mod:`~tpcstudy.io.graphml`,
  :mod:`~tpcstudy.io.repetita` (``.graph``, ``.demands``), :mod:`~tpcstudy.io.nx` (networkx);
- :mod:`~tpcstudy.io.readers`: :func:`read_topology`, :func:`read_topologies`;
- :mod:`~tpcstudy.io.specs`: what a ``--topo`` value names (:func:`topology_files`);
- :mod:`~tpcstudy.io.datasets`: the Topology Zoo and REPETITA, fetched and verified;
- :mod:`~tpcstudy.io.bounded`: every input file read bounded (regular files only, a size limit);
- :mod:`~tpcstudy.io.files`: atomic writes (temporary file, then rename), CSV and JSON text.
"""

from __future__ import annotations

from .bounded import clip, read_bounded, read_bounded_json, read_bounded_text
from .datasets import DATASETS, REPETITA, ZOO, Dataset, data_dir
from .files import (
                    atomic_open,
                    atomic_write_bytes,
                    atomic_write_text,
                    csv_cell,
                    csv_text,
                    json_text,
                    pid_alive,
                    remove_dead_temporaries,
                    temp_prefix,
                    write_csv,
)
from .readers import read_topologies, read_topology
from .repetita import read_demands
from .specs import TOPOLOGY_SUFFIXES, topology_files

__all__ = [
    "atomic_open", "atomic_write_bytes", "atomic_write_text", "csv_cell", "csv_text", "json_text",
    "write_csv", "temp_prefix", "remove_dead_temporaries", "pid_alive", "read_bounded",
    "read_bounded_text", "read_bounded_json", "clip",
    "read_topology", "read_topologies", "read_demands", "topology_files",
    "TOPOLOGY_SUFFIXES", "Dataset", "ZOO", "REPETITA", "DATASETS", "data_dir",
]

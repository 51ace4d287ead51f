"""Reading topologies: one file, a data-set name, a networkx graph, or everything a ``--topo``
value names.

Every reader returns a :class:`~tpcstudy.topology.Topology` or raises
:class:`~tpcstudy.errors.TopologyFormatError` naming the file, the line and the problem. The
formats live one per module: :mod:`~tpcstudy.io.gml`, :mod:`~tpcstudy.io.graphml`,
:mod:`~tpcstudy.io.repetita`, :mod:`~tpcstudy.io.nx`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from ..errors import TopologyFormatError, UsageError
from ..topology import Topology
from .gml import read_gml
from .graphml import read_graphml
from .nx import from_networkx
from .repetita import read_graph
from .specs import TOPOLOGY_SUFFIXES, Spec, data_spec, topology_files

__all__ = ["read_topology", "read_topologies"]

Source = Union[str, "os.PathLike[str]", Any]


def read_topology(source: Source, *, capacity: str = "uniform", weight: str = "hop",
                  name: Optional[str] = None, links: str = "merged") -> Topology:
    """Read one topology.

    Parameters
    ----------
    source
        A file path (``.gml``, ``.graphml``, ``.graph``), a data-set name naming one topology
        (``"zoo/NAME"``, ``"repetita/inverse-capacity/NAME"``; installed on first use), or a
        networkx graph (edge attributes ``capacity``, ``weight``, ``delay`` used when asked
        for).
    capacity
        ``"uniform"`` (every link 1.0, the default), ``"zoo"`` (Zoo ``LinkSpeedRaw`` in bit/s,
        missing speeds filled with the topology's median known speed, else 1 Gbit/s) or
        ``"file"`` (the file's own capacities).
    weight
        ``"hop"`` (the default), ``"inverse-capacity"``, ``"distance"`` or ``"file"``.
    name
        The topology's name (default: the file name without its suffix).
    links
        ``"merged"`` (parallel links collapsed into one, the default) or ``"multigraph"``
        (each a link of its own, as the TPC paper counts them); docs/method.md §1-2.
    """
    if not isinstance(source, (str, os.PathLike)):
        if hasattr(source, "nodes") and hasattr(source, "edges"):
            return from_networkx(source, capacity, weight, name, links)
        raise UsageError(f"cannot read a topology from {type(source).__name__}")
    text = os.fspath(source)
    named = data_spec(text)
    if named is not None:
        paths = named[0].resolve(named[1])
        if len(paths) != 1:
            raise UsageError(f"{text!r} names {len(paths)} topologies; use read_topologies")
        path = paths[0]
    else:
        path = Path(text)
    if not path.exists():
        raise TopologyFormatError(path, None, "no such file")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; use read_topologies for several topologies")
    suffix = path.suffix.lower()
    if suffix == ".gml":
        topo = read_gml(path, capacity, weight, links)
    elif suffix == ".graphml":
        topo = read_graphml(path, capacity, weight, links)
    elif suffix == ".graph":
        topo = read_graph(path, capacity, weight, links)
    else:
        raise TopologyFormatError(path, None, f"unknown topology format {suffix!r} "
                                  f"(expected one of {', '.join(TOPOLOGY_SUFFIXES)})")
    if name:
        topo.name = name
    return topo


def read_topologies(spec: Spec, *, capacity: str = "uniform", weight: str = "hop",
                    links: str = "merged") -> Iterator[Topology]:
    """Every topology a ``--topo`` value (or a list of them) names, in the order of
    :func:`~tpcstudy.io.specs.topology_files`."""
    for path in topology_files(spec):
        yield read_topology(path, capacity=capacity, weight=weight, links=links)

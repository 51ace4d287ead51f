"""REPETITA files: ``.graph`` topologies and ``.demands`` traffic matrices.

A ``.graph`` file lists ``NODES <n>`` (label, x = longitude, y = latitude) and ``EDGES <m>``
(label, src, dest, weight, bw, delay; directed, both directions listed; bw in kbit/s, delay in a
unit the files do not state). A ``.demands`` file lists ``DEMANDS <d>`` (label, src, dest, bw).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Tuple, Union

import numpy as np

from ..errors import TopologyFormatError
from ..topology import RawEdge, Topology, build_topology
from ._parse import integer, number, read_text, unique_names

__all__ = ["read_graph", "read_demands"]


def _header(lines: List[str], i: int, word: str, path: Path) -> Tuple[int, int]:
    """Skip blank lines, expect ``WORD <count>``; return (count, next line index)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise TopologyFormatError(path, i, f"missing '{word} <count>' section (file truncated?)")
    parts = lines[i].split()
    if len(parts) != 2 or parts[0] != word:
        raise TopologyFormatError(path, i + 1, f"expected '{word} <count>', found {lines[i].strip()!r}")
    count = integer(parts[1], path, i + 1, f"{word} count")
    if count < 0:
        raise TopologyFormatError(path, i + 1, f"{word} count {count} is negative")
    return count, i + 2  # the column header line follows


def _rows(lines: List[str], start: int, count: int, ncols: int, path: Path,
          what: str) -> List[Tuple[int, List[str]]]:
    rows = []
    for k in range(count):
        i = start + k
        if i >= len(lines) or not lines[i].strip():
            raise TopologyFormatError(path, i + 1, f"expected {count} {what} lines, found {k} "
                                      "(file truncated?)")
        parts = lines[i].split()
        if len(parts) != ncols:
            raise TopologyFormatError(path, i + 1, f"{what} line has {len(parts)} fields, expected "
                                      f"{ncols}: {lines[i].strip()!r}")
        rows.append((i + 1, parts))
    return rows


def _no_more(lines: List[str], start: int, word: str, count: int, path: Path) -> None:
    """Only blank lines after the ``count`` rows ``WORD <count>`` announced."""
    for i in range(start, len(lines)):
        if lines[i].strip():
            raise TopologyFormatError(path, i + 1, f"{word} {count} announced {count} lines, but "
                                      f"more follow: {lines[i].strip()!r} (fix the count)")


def read_graph(path: Path, capacity: str, weight: str) -> Topology:
    """Read a REPETITA ``.graph`` file (capacity ``zoo`` means the file's own, ``file``)."""
    lines = read_text(path).split("\n")
    n, i = _header(lines, 0, "NODES", path)
    if n == 0:
        raise TopologyFormatError(path, 1, "NODES 0: the graph has no nodes")
    node_rows = _rows(lines, i, n, 3, path, "node")
    labels = [p[0] for _, p in node_rows]
    lon = [number(p[1], path, ln, "x (longitude)") for ln, p in node_rows]
    lat = [number(p[2], path, ln, "y (latitude)") for ln, p in node_rows]
    m, j = _header(lines, i + n, "EDGES", path)
    edges = []
    for ln, p in _rows(lines, j, m, 6, path, "edge"):
        s, t = integer(p[1], path, ln, "src"), integer(p[2], path, ln, "dest")
        for what, x in (("src", s), ("dest", t)):
            if not 0 <= x < n:
                raise TopologyFormatError(path, ln, f"{what} {x} is not a node id (0..{n - 1})")
        w = number(p[3], path, ln, "weight")
        bw = number(p[4], path, ln, "bw")
        d = number(p[5], path, ln, "delay")
        if w <= 0:
            raise TopologyFormatError(path, ln, f"weight {p[3]!r} is not positive")
        if bw <= 0:
            raise TopologyFormatError(path, ln, f"bw {p[4]!r} is not positive")
        edges.append(RawEdge(s, t, speed=bw, weight=w, delay=d, directed=True, line=ln))
    _no_more(lines, j + m, "EDGES", m, path)
    meta = {"format": "repetita", "raw_links": m, "capacity_unit": "kbit/s",
            "delay_unit": "file (REPETITA, unit unstated)"}
    cap_rule = "file" if capacity == "zoo" else capacity
    return build_topology(path.stem, unique_names(labels, list(range(n))), edges, capacity=cap_rule,
                          weight=weight, latitude=lat, longitude=lon, meta=meta, source=str(path))


def read_demands(path: Union[str, os.PathLike], topo: Optional[Topology] = None) -> np.ndarray:
    """A REPETITA ``.demands`` file as a structured array ``(src, dst, bw)`` of node ids.

    With ``topo``, ids are checked against its routers. Several demands of one pair add up.
    """
    p = Path(path)
    lines = read_text(p).split("\n")
    d, i = _header(lines, 0, "DEMANDS", p)
    n = topo.num_nodes if topo is not None else None
    out = np.zeros(d, dtype=[("src", np.int32), ("dst", np.int32), ("bw", np.float64)])
    for k, (ln, parts) in enumerate(_rows(lines, i, d, 4, p, "demand")):
        s, t = integer(parts[1], p, ln, "src"), integer(parts[2], p, ln, "dest")
        for what, x in (("src", s), ("dest", t)):
            if x < 0 or (n is not None and x >= n):
                raise TopologyFormatError(p, ln, f"{what} {x} is not a node id"
                                          + (f" (0..{n - 1})" if n is not None else ""))
        bw = number(parts[3], p, ln, "bw")
        if bw < 0:
            raise TopologyFormatError(p, ln, f"bw {parts[3]!r} is negative")
        out[k] = (s, t, bw)
    _no_more(lines, i + d, "DEMANDS", d, p)
    return out

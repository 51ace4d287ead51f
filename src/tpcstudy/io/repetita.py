"""REPETITA files: ``.graph`` topologies and ``.demands`` traffic matrices.

A ``.graph`` file lists ``NODES <n>`` (label, x = longitude, y = latitude) and ``EDGES <m>``
(label, src, dest, weight, bw, delay; directed, both directions listed; bw in kbit/s, delay in a
unit the files do not state). A ``.demands`` file lists ``DEMANDS <d>`` (label, src, dest, bw).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from ..errors import TopologyFormatError
from ..topology import EdgeArrays, Topology, build_topology
from ._parse import integer, number, progress_bar, read_text, unique_names
from .bounded import clip

__all__ = ["read_graph", "read_demands"]


def _header(lines: List[str], i: int, word: str, path: Path) -> Tuple[int, int]:
    """Skip blank lines, expect ``WORD <count>``; return (count, next line index)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise TopologyFormatError(path, i, f"missing '{word} <count>' section (file truncated?)")
    parts = lines[i].split()
    if len(parts) != 2 or parts[0] != word:
        raise TopologyFormatError(path, i + 1, f"expected '{word} <count>', found {clip(lines[i].strip())}")
    count = integer(parts[1], path, i + 1, f"{word} count")
    if count < 0:
        raise TopologyFormatError(path, i + 1, f"{word} count {count} is negative")
    return count, i + 2  # the column header line follows


#: Lines converted at a time: memory stays bounded however long the file.
CHUNK = 1 << 16


def _columns(lines: List[str], start: int, count: int, ncols: int, path: Path, what: str,
             spec: Dict[int, Tuple[Any, str]], bar: Any = None) -> Dict[int, np.ndarray]:
    """The ``count`` lines from ``start`` (each ``ncols`` fields) as one array per column of
    ``spec`` (``{column: (int or float, name)}``), converted a chunk at a time; a field that is
    not a (finite) number is a :class:`TopologyFormatError` naming its line and value."""
    if count > len(lines) - start:  # a count no file holds: said before anything is allocated
        k = 0
        while start + k < len(lines) and lines[start + k].strip():
            k += 1
        raise TopologyFormatError(path, start + k + 1, f"expected {count} {what} lines, found {k} "
                                  "(file truncated, or a wrong count?)")
    out = {c: np.empty(count, dtype=np.int64 if kind is int else np.float64)
           for c, (kind, _) in spec.items()}
    for a in range(0, count, CHUNK):
        b = min(count, a + CHUNK)
        rows = []
        for k in range(a, b):
            i = start + k
            if i >= len(lines) or not lines[i].strip():
                raise TopologyFormatError(path, i + 1, f"expected {count} {what} lines, found {k} "
                                          "(file truncated?)")
            parts = lines[i].split()
            if len(parts) != ncols:
                raise TopologyFormatError(path, i + 1, f"{what} line has {len(parts)} fields, "
                                          f"expected {ncols}: {clip(lines[i].strip())}")
            rows.append(parts)
        if bar is not None:
            bar.update(sum(len(lines[start + k]) + 1 for k in range(a, b)))
        cols = list(zip(*rows))
        for c, (kind, name) in spec.items():
            try:
                arr = np.array(cols[c], dtype=out[c].dtype)
                ok = kind is int or bool(np.isfinite(arr).all())
            except (ValueError, OverflowError):
                ok = False
            if not ok:  # the scalar checks find the line and say what is wrong
                check = integer if kind is int else number
                for k, parts in enumerate(rows):
                    check(parts[c], path, start + a + k + 1, name)
            out[c][a:b] = arr
    return out


def _no_more(lines: List[str], start: int, word: str, count: int, path: Path) -> None:
    """Only blank lines after the ``count`` rows ``WORD <count>`` announced."""
    for i in range(start, len(lines)):
        if lines[i].strip():
            raise TopologyFormatError(path, i + 1, f"{word} {count} announced {count} lines, but "
                                      f"more follow: {clip(lines[i].strip())} (fix the count)")


def read_graph(path: Path, capacity: str, weight: str, links: str = "merged") -> Topology:
    """Read a REPETITA ``.graph`` file (capacity ``zoo`` means the file's own, ``file``)."""
    text = read_text(path)
    bar = progress_bar(path, len(text))
    lines = text.split("\n")
    del text
    try:
        return _graph(path, lines, capacity, weight, bar, links)
    finally:
        if bar is not None:
            bar.close()


def _graph(path: Path, lines: List[str], capacity: str, weight: str, bar: Any,
           links: str) -> Topology:
    n, i = _header(lines, 0, "NODES", path)
    if n == 0:
        raise TopologyFormatError(path, 1, "NODES 0: the graph has no nodes")
    nodes = _columns(lines, i, n, 3, path, "node", {1: (float, "x (longitude)"),
                                                    2: (float, "y (latitude)")}, bar)
    labels = [lines[i + k].split(None, 1)[0] for k in range(n)]
    m, j = _header(lines, i + n, "EDGES", path)
    cols = _columns(lines, j, m, 6, path, "edge", {1: (int, "src"), 2: (int, "dest"),
                                                   3: (float, "weight"), 4: (float, "bw"),
                                                   5: (float, "delay")}, bar)
    src, dst, w, bw = cols[1], cols[2], cols[3], cols[4]
    for what, x in (("src", src), ("dest", dst)):
        bad = np.flatnonzero((x < 0) | (x >= n))
        if len(bad):
            raise TopologyFormatError(path, j + int(bad[0]) + 1, f"{what} {int(x[bad[0]])} is "
                                      f"not a node id (0..{n - 1})")
    for c, what, x in ((3, "weight", w), (4, "bw", bw)):
        bad = np.flatnonzero(x <= 0)
        if len(bad):
            k = int(bad[0])
            raise TopologyFormatError(path, j + k + 1, f"{what} {clip(lines[j + k].split()[c])} is "
                                      "not positive")
    _no_more(lines, j + m, "EDGES", m, path)
    del lines
    edges = EdgeArrays(src, dst, bw, w, cols[5], np.ones(m, dtype=bool),
                       np.arange(j + 1, j + m + 1, dtype=np.int64))
    meta = {"format": "repetita", "raw_links": m, "capacity_unit": "kbit/s",
            "delay_unit": "file (REPETITA, unit unstated)"}
    cap_rule = "file" if capacity == "zoo" else capacity
    return build_topology(path.stem, unique_names(labels, list(range(n))), edges, capacity=cap_rule,
                          weight=weight, latitude=nodes[2], longitude=nodes[1], meta=meta,
                          source=str(path), links=links)


def read_demands(path: Union[str, os.PathLike], topo: Optional[Topology] = None) -> np.ndarray:
    """A REPETITA ``.demands`` file as a structured array ``(src, dst, bw)`` of node ids.

    With ``topo``, ids are checked against its routers. Every line is kept: several demands
    of one pair are added up where the matrix is used (:func:`tpcstudy.models.mlu.demand_arrays`).
    """
    p = Path(path)
    lines = read_text(p).split("\n")
    d, i = _header(lines, 0, "DEMANDS", p)
    n = topo.num_nodes if topo is not None else None
    cols = _columns(lines, i, d, 4, p, "demand", {1: (int, "src"), 2: (int, "dest"),
                                                  3: (float, "bw")})
    out = np.zeros(d, dtype=[("src", np.int32), ("dst", np.int32), ("bw", np.float64)])
    for what, x in (("src", cols[1]), ("dest", cols[2])):
        bad = np.flatnonzero((x < 0) | ((x >= n) if n is not None else False))
        if len(bad):
            raise TopologyFormatError(p, i + int(bad[0]) + 1, f"{what} {int(x[bad[0]])} is not a "
                                      "node id" + (f" (0..{n - 1})" if n is not None else ""))
    bad = np.flatnonzero(cols[3] < 0)
    if len(bad):
        k = int(bad[0])
        raise TopologyFormatError(p, i + k + 1, f"bw {clip(lines[i + k].split()[3])} is negative")
    out["src"], out["dst"], out["bw"] = cols[1], cols[2], cols[3]
    _no_more(lines, i + d, "DEMANDS", d, p)
    return out

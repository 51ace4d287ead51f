"""The Topology Zoo's GML dialect (docs/method.md §1).

Our own tokenizer: it handles parallel links without a ``multigraph`` header and repeated labels
(a repeated label becomes ``label#id``), and reports line numbers.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, cast

import numpy as np

import tpcstudy._core as _core

from ..errors import TopologyFormatError
from ..topology import EdgeArrays, Topology, build_topology
from ._parse import PROGRESS_BYTES, opt_float, progress_bar, read_text, unique_names
from .bounded import clip

__all__ = ["read_gml", "parse_gml", "parse_python"]

_GML_TOKEN = re.compile(
    r'(?P<ws>[ \t\r\f\v]+)|(?P<nl>\n)|(?P<open>\[)|(?P<close>\])|(?P<str>"[^"]*")'
    r'|(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z_]))'
    r'|(?P<key>[A-Za-z_][A-Za-z0-9_]*)|(?P<comment>#[^\n]*)')

GmlList = List[Tuple[str, Any, int]]


def _tokens(text: str, path: Path) -> Iterator[Tuple[str, str, int]]:
    """The tokens of ``text`` as (kind, text, line), whitespace and comments left out; a
    progress bar on a terminal for files of more than :data:`PROGRESS_BYTES`."""
    line, pos, end = 1, 0, len(text)
    bar = progress_bar(path, end)
    next_tick = 1 << 22
    try:
        while pos < end:
            m = _GML_TOKEN.match(text, pos)
            if m is None:
                snippet = text[pos: pos + 20].split("\n")[0]
                raise TopologyFormatError(path, line, f"unexpected text {clip(snippet)}")
            kind = m.lastgroup
            tok = m.group()
            if kind == "nl":
                line += 1
            elif kind not in ("ws", "comment"):
                yield kind, tok, line  # type: ignore[misc]
                if kind == "str":
                    line += tok.count("\n")
            pos = m.end()
            if bar is not None and pos >= next_tick:
                bar.update(pos - bar.n)
                next_tick = pos + (1 << 22)
    finally:
        if bar is not None:
            bar.close()


Collapse = Callable[[str, GmlList, int], bool]


def parse_gml(text: str, path: Path, collapse: Optional[Collapse] = None) -> GmlList:
    """GML into nested lists of (key, value, line); values are str, float/int or lists.

    ``collapse(key, block, line)`` is called on each block inside a top-level ``graph [...]``
    (a ``node [...]``), in the file's order; when it returns ``True`` the block is not kept.

    A file of at most :data:`PROGRESS_BYTES` is parsed by the core (``_core.parse_gml``, 20x
    faster: the README's main job reads 261 files) and ``collapse`` is called once it is read;
    the core gives up on any file it would not read exactly as :func:`parse_python` does
    (every malformed one, and a few unusual ones: cpp/include/tpcstudy/gml.hpp), which
    :func:`parse_python` then reads, and it is the one that names an error's line. Larger files
    are read block by block by :func:`parse_python` (bounded memory, a progress bar).
    """
    if len(text) <= PROGRESS_BYTES:
        tree = cast(Optional[GmlList], _core.parse_gml(text, html.unescape))
        if tree is not None:
            if collapse is not None:
                for key, val, _ in tree:
                    if key == "graph" and isinstance(val, list):
                        val[:] = [e for e in val
                                  if not (isinstance(e[1], list) and collapse(*e))]
            return tree
    return parse_python(text, path, collapse)


def parse_python(text: str, path: Path, collapse: Optional[Collapse] = None) -> GmlList:
    """:func:`parse_gml` in Python (the reference; the errors' lines): ``collapse`` is called
    as each block closes, so that a reader consumes a large file block by block in bounded
    memory."""
    stack: List[GmlList] = [[]]
    opened: List[int] = []
    pending: Optional[Tuple[str, int]] = None
    for kind, tok, ln in _tokens(text, path):
        if pending is None:
            if kind == "close":
                if not opened:
                    raise TopologyFormatError(path, ln, "']' without a matching '['")
                done = stack.pop()
                opened.pop()
                key, _, kln = stack[-1][-1]
                if (collapse is not None and len(stack) == 2 and stack[0][-1][0] == "graph"
                        and collapse(key, done, kln)):
                    stack[-1].pop()
                else:
                    stack[-1][-1] = (key, done, kln)
            elif kind != "key":
                raise TopologyFormatError(path, ln, f"expected a key, found {clip(tok)}")
            else:
                pending = (tok, ln)
            continue
        key, kln = pending
        pending = None
        if kind == "open":
            stack[-1].append((key, None, kln))
            stack.append([])
            opened.append(kln)
        elif kind == "str":
            stack[-1].append((key, html.unescape(tok[1:-1]), kln))
        elif kind == "num":
            try:
                num: Any = float(tok) if any(c in tok for c in ".eE") else int(tok)
            except ValueError:  # an integer of more than Python's 4300 digits
                raise TopologyFormatError(path, ln, f"key {clip(key)}: a number of {len(tok)} "
                                          "digits") from None
            stack[-1].append((key, num, kln))
        else:
            raise TopologyFormatError(path, ln, f"key {clip(key)} has no value, found {clip(tok)}")
    if pending is not None:
        raise TopologyFormatError(path, pending[1], f"key {clip(pending[0])} has no value (file "
                                  "truncated?)")
    if opened:
        raise TopologyFormatError(path, opened[-1], "'[' opened here is never closed (file truncated?)")
    return stack[0]


def read_gml(path: Path, capacity: str, weight: str, links: str = "merged") -> Topology:
    """Read a Zoo GML file into a :class:`~tpcstudy.topology.Topology`.

    Node and edge blocks are turned into compact lists as they close, so memory stays a small
    multiple of the file's size however large it is.
    """
    ids: List[Any] = []
    labels: List[Optional[str]] = []
    lat: List[float] = []
    lon: List[float] = []
    internal: List[int] = []
    index: Dict[Any, int] = {}
    e_src: List[Any] = []
    e_dst: List[Any] = []
    e_speed: List[float] = []
    e_line: List[int] = []

    def block(key: str, val: GmlList, ln: int) -> bool:
        if key == "node":
            attrs = {k: v for k, v, _ in val}
            if "id" not in attrs:
                raise TopologyFormatError(path, ln, "node without an 'id'")
            nid = attrs["id"]
            if nid in index:
                raise TopologyFormatError(path, ln, f"node id {clip(nid)} is defined twice")
            index[nid] = len(ids)
            ids.append(nid)
            lab = attrs.get("label")
            labels.append(None if lab is None else str(lab))
            lat.append(opt_float(attrs.get("Latitude")))
            lon.append(opt_float(attrs.get("Longitude")))
            internal.append(int(attrs["Internal"]) if isinstance(attrs.get("Internal"), int) else 1)
            return True
        if key == "edge":
            attrs = {k: v for k, v, _ in val}
            for end_name in ("source", "target"):
                if attrs.get(end_name) is None:
                    raise TopologyFormatError(path, ln, f"edge without a '{end_name}'")
            speed = attrs.get("LinkSpeedRaw")
            sp = math.nan
            if speed is not None:
                if not isinstance(speed, (int, float)) or not speed > 0 or not math.isfinite(speed):
                    raise TopologyFormatError(path, ln, f"LinkSpeedRaw {speed!r} is not a positive "
                                              "number")
                sp = float(speed)
            e_src.append(attrs["source"])
            e_dst.append(attrs["target"])
            e_speed.append(sp)
            e_line.append(ln)
            return True
        return False

    top = parse_gml(read_text(path), path, collapse=block)
    graphs = [(v, ln) for k, v, ln in top if k == "graph"]
    if not graphs or not isinstance(graphs[0][0], list):
        raise TopologyFormatError(path, None, "no 'graph [ ... ]' block")
    if len(graphs) > 1:
        raise TopologyFormatError(path, graphs[1][1], "a second 'graph [ ... ]' block: one "
                                  "topology per file")
    body, _ = graphs[0]
    for key, _value, ln in body:
        if key in ("node", "edge"):  # a 'node'/'edge' that is a value, not a [ ... ] block
            raise TopologyFormatError(path, ln, f"'{key}' is not a [ ... ] block")
    gattrs = {k: v for k, v, _ in body if not isinstance(v, list)}
    directed = [(v, ln) for k, v, ln in body if k == "directed"]
    if directed and directed[0][0] != 0:
        raise TopologyFormatError(path, directed[0][1], f"directed {clip(directed[0][0])}: a "
                                  "directed graph, but tpcstudy reads every link as undirected "
                                  "(its capacity both ways); to read the file so, set 'directed 0'")
    if not ids:
        raise TopologyFormatError(path, None, "the graph has no nodes")
    us = np.empty(len(e_src), dtype=np.int64)
    vs = np.empty(len(e_src), dtype=np.int64)
    for i, (s, t) in enumerate(zip(e_src, e_dst)):
        for end_name, end in (("source", s), ("target", t)):
            if end not in index:
                raise TopologyFormatError(path, e_line[i], f"edge {end_name} {clip(end)} is not a node id")
        us[i], vs[i] = index[s], index[t]
    m = len(e_src)
    edges = EdgeArrays(us, vs, np.array(e_speed, dtype=np.float64), np.full(m, np.nan),
                       np.full(m, np.nan), np.zeros(m, dtype=bool), np.array(e_line, dtype=np.int64))
    name = path.stem
    meta = {"format": "gml", "network": str(gattrs.get("Network", gattrs.get("label", name))),
            "raw_links": m, "self_loops": int(np.count_nonzero(us == vs))}
    if "SourceGitVersion" in gattrs:
        meta["zoo_version"] = str(gattrs["SourceGitVersion"])
    return build_topology(name, unique_names(labels, ids), edges, capacity=capacity, weight=weight,
                          latitude=lat, longitude=lon, internal=internal, meta=meta,
                          source=str(path), links=links)

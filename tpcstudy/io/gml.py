"""The Topology Zoo's GML dialect (docs/method.md §1).

Our own tokenizer: it handles parallel links without a ``multigraph`` header and repeated labels
(a repeated label becomes ``label#id``), and reports line numbers.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import TopologyFormatError
from ..topology import RawEdge, Topology, build_topology
from ._parse import opt_float, read_text, unique_names

__all__ = ["read_gml", "parse_gml"]

_GML_TOKEN = re.compile(
    r'(?P<ws>[ \t\r\f\v]+)|(?P<nl>\n)|(?P<open>\[)|(?P<close>\])|(?P<str>"[^"]*")'
    r'|(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z_]))'
    r'|(?P<key>[A-Za-z_][A-Za-z0-9_]*)|(?P<comment>#[^\n]*)')

GmlList = List[Tuple[str, Any, int]]


def parse_gml(text: str, path: Path) -> GmlList:
    """GML into nested lists of (key, value, line); values are str, float/int or lists."""
    tokens: List[Tuple[str, str, int]] = []
    line, pos, end = 1, 0, len(text)
    while pos < end:
        m = _GML_TOKEN.match(text, pos)
        if m is None:
            snippet = text[pos: pos + 20].split("\n")[0]
            raise TopologyFormatError(path, line, f"unexpected text {snippet!r}")
        kind = m.lastgroup
        tok = m.group()
        if kind == "nl":
            line += 1
        elif kind not in ("ws", "comment"):
            tokens.append((kind, tok, line))  # type: ignore[arg-type]
            if kind == "str":
                line += tok.count("\n")
        pos = m.end()
    stack: List[GmlList] = [[]]
    opened: List[int] = []
    i = 0
    while i < len(tokens):
        kind, tok, ln = tokens[i]
        if kind == "close":
            if not opened:
                raise TopologyFormatError(path, ln, "']' without a matching '['")
            done = stack.pop()
            opened.pop()
            key, _, kln = stack[-1][-1]
            stack[-1][-1] = (key, done, kln)
            i += 1
            continue
        if kind != "key":
            raise TopologyFormatError(path, ln, f"expected a key, found {tok!r}")
        if i + 1 >= len(tokens):
            raise TopologyFormatError(path, ln, f"key {tok!r} has no value (file truncated?)")
        vkind, vtok, vln = tokens[i + 1]
        if vkind == "open":
            stack[-1].append((tok, None, ln))
            stack.append([])
            opened.append(ln)
        elif vkind == "str":
            stack[-1].append((tok, html.unescape(vtok[1:-1]), ln))
        elif vkind == "num":
            num: Any = float(vtok) if any(c in vtok for c in ".eE") else int(vtok)
            stack[-1].append((tok, num, ln))
        else:
            raise TopologyFormatError(path, vln, f"key {tok!r} has no value, found {vtok!r}")
        i += 2
    if opened:
        raise TopologyFormatError(path, opened[-1], "'[' opened here is never closed (file truncated?)")
    return stack[0]


def read_gml(path: Path, capacity: str, weight: str) -> Topology:
    """Read a Zoo GML file into a :class:`~tpcstudy.topology.Topology`."""
    top = parse_gml(read_text(path), path)
    graphs = [(v, ln) for k, v, ln in top if k == "graph"]
    if not graphs or not isinstance(graphs[0][0], list):
        raise TopologyFormatError(path, None, "no 'graph [ ... ]' block")
    body, _ = graphs[0]
    gattrs = {k: v for k, v, _ in body if not isinstance(v, list)}
    ids: List[Any] = []
    labels: List[Optional[str]] = []
    lat: List[float] = []
    lon: List[float] = []
    internal: List[int] = []
    index: Dict[Any, int] = {}
    raw_edges: List[Tuple[Any, Any, Dict[str, Any], int]] = []
    for key, val, ln in body:
        if key == "node":
            if not isinstance(val, list):
                raise TopologyFormatError(path, ln, "'node' is not a [ ... ] block")
            attrs = {k: v for k, v, _ in val}
            if "id" not in attrs:
                raise TopologyFormatError(path, ln, "node without an 'id'")
            nid = attrs["id"]
            if nid in index:
                raise TopologyFormatError(path, ln, f"node id {nid!r} is defined twice")
            index[nid] = len(ids)
            ids.append(nid)
            lab = attrs.get("label")
            labels.append(None if lab is None else str(lab))
            lat.append(opt_float(attrs.get("Latitude")))
            lon.append(opt_float(attrs.get("Longitude")))
            internal.append(int(attrs["Internal"]) if isinstance(attrs.get("Internal"), int) else 1)
        elif key == "edge":
            if not isinstance(val, list):
                raise TopologyFormatError(path, ln, "'edge' is not a [ ... ] block")
            raw_edges.append(({k: v for k, v, _ in val}.get("source"),
                              {k: v for k, v, _ in val}.get("target"),
                              {k: v for k, v, _ in val}, ln))
    if not ids:
        raise TopologyFormatError(path, None, "the graph has no nodes")
    edges: List[RawEdge] = []
    for s, t, attrs, ln in raw_edges:
        for end_name, end in (("source", s), ("target", t)):
            if end is None:
                raise TopologyFormatError(path, ln, f"edge without a '{end_name}'")
            if end not in index:
                raise TopologyFormatError(path, ln, f"edge {end_name} {end!r} is not a node id")
        speed = attrs.get("LinkSpeedRaw")
        sp = math.nan
        if speed is not None:
            if not isinstance(speed, (int, float)) or not speed > 0 or not math.isfinite(speed):
                raise TopologyFormatError(path, ln, f"LinkSpeedRaw {speed!r} is not a positive number")
            sp = float(speed)
        edges.append(RawEdge(index[s], index[t], speed=sp))
    name = path.stem
    meta = {"format": "gml", "network": str(gattrs.get("Network", gattrs.get("label", name))),
            "raw_links": len(edges), "self_loops": sum(e.u == e.v for e in edges)}
    if "SourceGitVersion" in gattrs:
        meta["zoo_version"] = str(gattrs["SourceGitVersion"])
    return build_topology(name, unique_names(labels, ids), edges, capacity=capacity, weight=weight,
                          latitude=lat, longitude=lon, internal=internal, meta=meta,
                          source=str(path))

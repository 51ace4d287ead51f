"""Topology readers: Topology Zoo GML and GraphML, REPETITA ``.graph``/``.demands``, networkx.

Every reader returns a :class:`~tpcstudy.topology.Topology` or raises
:class:`~tpcstudy.errors.TopologyFormatError` naming the file, the line and the problem.
"""

from __future__ import annotations

import glob as _glob
import html
import math
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union
from xml.parsers import expat

import numpy as np

from .errors import TopologyFormatError, UsageError
from .topology import RawEdge, Topology, build_topology

__all__ = ["read_topology", "read_topologies", "read_demands", "topology_files", "TOPOLOGY_SUFFIXES"]

TOPOLOGY_SUFFIXES = (".gml", ".graphml", ".graph")
Source = Union[str, os.PathLike, Any]


# --------------------------------------------------------------------------- text decoding
def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TopologyFormatError(path, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TopologyFormatError(path, line, f"byte 0x{data[exc.start]:02x} at offset {exc.start} "
                                  "is not UTF-8 text") from None


def _number(text: str, path: Path, line: int, what: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise TopologyFormatError(path, line, f"{what} {text!r} is not a number") from None
    if math.isnan(x) or math.isinf(x):
        raise TopologyFormatError(path, line, f"{what} {text!r} is not a finite number")
    return x


def _integer(text: str, path: Path, line: int, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TopologyFormatError(path, line, f"{what} {text!r} is not an integer") from None


def _unique_names(labels: List[Optional[str]], ids: List[Any]) -> List[str]:
    """Labels as names; a repeated or missing label becomes ``label#id`` so names stay unique."""
    count: Dict[str, int] = {}
    for x in labels:
        if x is not None:
            count[x] = count.get(x, 0) + 1
    names = [x if x is not None and count[x] == 1 else f"{x if x is not None else 'node'}#{i}"
             for x, i in zip(labels, ids)]
    seen: Dict[str, int] = {}
    out = []
    for x in names:  # a label may itself look like "a#3": make sure
        k = seen.get(x, 0)
        seen[x] = k + 1
        out.append(x if k == 0 else f"{x}~{k}")
    return out


def _opt_float(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


# --------------------------------------------------------------------------- GML
_GML_TOKEN = re.compile(
    r'(?P<ws>[ \t\r\f\v]+)|(?P<nl>\n)|(?P<open>\[)|(?P<close>\])|(?P<str>"[^"]*")'
    r'|(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z_]))'
    r'|(?P<key>[A-Za-z_][A-Za-z0-9_]*)|(?P<comment>#[^\n]*)')

GmlList = List[Tuple[str, Any, int]]


def _parse_gml(text: str, path: Path) -> GmlList:
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


def _read_gml(path: Path, capacity: str, weight: str) -> Topology:
    top = _parse_gml(_read_text(path), path)
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
            lat.append(_opt_float(attrs.get("Latitude")))
            lon.append(_opt_float(attrs.get("Longitude")))
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
    return build_topology(name, _unique_names(labels, ids), edges, capacity=capacity, weight=weight,
                          latitude=lat, longitude=lon, internal=internal, meta=meta,
                          source=str(path))


# --------------------------------------------------------------------------- GraphML
def _read_graphml(path: Path, capacity: str, weight: str) -> Topology:
    data = _read_text(path).encode("utf-8")
    parser = expat.ParserCreate(namespace_separator=" ")
    keys: Dict[str, Tuple[str, str]] = {}  # key id -> (for, attr.name)
    state: Dict[str, Any] = {"node": None, "edge": None, "data": None, "text": [], "graphs": 0}
    nodes: List[Dict[str, Any]] = []
    node_index: Dict[str, int] = {}
    edges: List[Tuple[str, str, Dict[str, Any], int]] = []
    gattrs: Dict[str, str] = {}

    def local(tag: str) -> str:
        return tag.rsplit(" ", 1)[-1]

    def start(tag: str, attrs: Dict[str, str]) -> None:
        t, ln = local(tag), parser.CurrentLineNumber
        if t == "key":
            keys[attrs.get("id", "")] = (attrs.get("for", ""), attrs.get("attr.name", attrs.get("id", "")))
        elif t == "graph":
            state["graphs"] += 1
        elif t == "node":
            if "id" not in attrs:
                raise TopologyFormatError(path, ln, "node without an 'id'")
            nid = attrs["id"]
            if nid in node_index:
                raise TopologyFormatError(path, ln, f"node id {nid!r} is defined twice")
            node_index[nid] = len(nodes)
            state["node"] = {"__id": nid}
            nodes.append(state["node"])
        elif t == "edge":
            for end in ("source", "target"):
                if end not in attrs:
                    raise TopologyFormatError(path, ln, f"edge without a '{end}'")
            state["edge"] = {}
            edges.append((attrs["source"], attrs["target"], state["edge"], ln))
        elif t == "data":
            state["data"] = (attrs.get("key", ""), ln)
            state["text"] = []

    def end(tag: str) -> None:
        t = local(tag)
        if t == "data" and state["data"] is not None:
            kid, ln = state["data"]
            name = keys.get(kid, ("", kid))[1]
            text = "".join(state["text"])
            target = state["edge"] if state["edge"] is not None else state["node"]
            if target is not None:
                target[name] = (text, ln)
            else:
                gattrs[name] = text
            state["data"] = None
        elif t == "node":
            state["node"] = None
        elif t == "edge":
            state["edge"] = None

    def chars(text: str) -> None:
        if state["data"] is not None:
            state["text"].append(text)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise TopologyFormatError(path, exc.lineno, f"not well-formed XML: {expat.errors.messages[exc.code]}"
                                  ) from None
    except (LookupError, ValueError) as exc:  # e.g. <?xml encoding="..."?> naming no codec
        raise TopologyFormatError(path, parser.CurrentLineNumber or 1,
                                  f"cannot decode the XML: {exc}") from None
    if state["graphs"] == 0:
        raise TopologyFormatError(path, None, "no <graph> element (is this GraphML?)")
    if not nodes:
        raise TopologyFormatError(path, None, "the graph has no nodes")
    raw: List[RawEdge] = []
    for s, t, attrs, ln in edges:
        for end_name, e in (("source", s), ("target", t)):
            if e not in node_index:
                raise TopologyFormatError(path, ln, f"edge {end_name} {e!r} is not a node id")
        sp = math.nan
        if "LinkSpeedRaw" in attrs:
            text, dln = attrs["LinkSpeedRaw"]
            sp = _number(text, path, dln, "LinkSpeedRaw")
            if sp <= 0:
                raise TopologyFormatError(path, dln, f"LinkSpeedRaw {text!r} is not positive")
        raw.append(RawEdge(node_index[s], node_index[t], speed=sp))

    def attr(nd: Dict[str, Any], k: str) -> Optional[str]:
        v = nd.get(k)
        return None if v is None else v[0]

    labels = [attr(nd, "label") for nd in nodes]
    ids = [nd["__id"] for nd in nodes]
    lat = [_opt_float(attr(nd, "Latitude")) for nd in nodes]
    lon = [_opt_float(attr(nd, "Longitude")) for nd in nodes]
    internal = []
    for nd in nodes:
        try:
            internal.append(int(attr(nd, "Internal") or 1))
        except ValueError:
            internal.append(1)
    meta = {"format": "graphml", "network": gattrs.get("Network", path.stem), "raw_links": len(raw),
            "self_loops": sum(e.u == e.v for e in raw)}
    if "SourceGitVersion" in gattrs:
        meta["zoo_version"] = gattrs["SourceGitVersion"]
    return build_topology(path.stem, _unique_names(labels, ids), raw, capacity=capacity,
                          weight=weight, latitude=lat, longitude=lon, internal=internal, meta=meta,
                          source=str(path))


# --------------------------------------------------------------------------- REPETITA
def _header(lines: List[str], i: int, word: str, path: Path) -> Tuple[int, int]:
    """Skip blank lines, expect ``WORD <count>``; return (count, next line index)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise TopologyFormatError(path, i, f"missing '{word} <count>' section (file truncated?)")
    parts = lines[i].split()
    if len(parts) != 2 or parts[0] != word:
        raise TopologyFormatError(path, i + 1, f"expected '{word} <count>', found {lines[i].strip()!r}")
    count = _integer(parts[1], path, i + 1, f"{word} count")
    if count < 0:
        raise TopologyFormatError(path, i + 1, f"{word} count {count} is negative")
    return count, i + 2  # the column header line follows


def _rows(lines: List[str], start: int, count: int, ncols: int, path: Path, what: str) -> List[Tuple[int, List[str]]]:
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


def _read_repetita(path: Path, capacity: str, weight: str) -> Topology:
    lines = _read_text(path).split("\n")
    n, i = _header(lines, 0, "NODES", path)
    if n == 0:
        raise TopologyFormatError(path, 1, "NODES 0: the graph has no nodes")
    node_rows = _rows(lines, i, n, 3, path, "node")
    labels = [p[0] for _, p in node_rows]
    lon = [_number(p[1], path, ln, "x (longitude)") for ln, p in node_rows]
    lat = [_number(p[2], path, ln, "y (latitude)") for ln, p in node_rows]
    m, j = _header(lines, i + n, "EDGES", path)
    edges = []
    for ln, p in _rows(lines, j, m, 6, path, "edge"):
        s, t = _integer(p[1], path, ln, "src"), _integer(p[2], path, ln, "dest")
        for what, x in (("src", s), ("dest", t)):
            if not 0 <= x < n:
                raise TopologyFormatError(path, ln, f"{what} {x} is not a node id (0..{n - 1})")
        w = _number(p[3], path, ln, "weight")
        bw = _number(p[4], path, ln, "bw")
        d = _number(p[5], path, ln, "delay")
        if w <= 0:
            raise TopologyFormatError(path, ln, f"weight {p[3]!r} is not positive")
        if bw <= 0:
            raise TopologyFormatError(path, ln, f"bw {p[4]!r} is not positive")
        edges.append(RawEdge(s, t, speed=bw, weight=w, delay=d, directed=True))
    meta = {"format": "repetita", "raw_links": m, "capacity_unit": "kbit/s",
            "delay_unit": "file (REPETITA, unit unstated)"}
    cap_rule = "file" if capacity == "zoo" else capacity
    return build_topology(path.stem, _unique_names(labels, list(range(n))), edges, capacity=cap_rule,
                          weight=weight, latitude=lat, longitude=lon, meta=meta, source=str(path))


def read_demands(path: Union[str, os.PathLike], topo: Optional[Topology] = None) -> np.ndarray:
    """A REPETITA ``.demands`` file as a structured array ``(src, dst, bw)`` of node ids.

    With ``topo``, ids are checked against its routers. Several demands of one pair add up.
    """
    p = Path(path)
    lines = _read_text(p).split("\n")
    d, i = _header(lines, 0, "DEMANDS", p)
    n = topo.num_nodes if topo is not None else None
    out = np.zeros(d, dtype=[("src", np.int32), ("dst", np.int32), ("bw", np.float64)])
    for k, (ln, parts) in enumerate(_rows(lines, i, d, 4, p, "demand")):
        s, t = _integer(parts[1], p, ln, "src"), _integer(parts[2], p, ln, "dest")
        for what, x in (("src", s), ("dest", t)):
            if x < 0 or (n is not None and x >= n):
                raise TopologyFormatError(p, ln, f"{what} {x} is not a node id"
                                          + (f" (0..{n - 1})" if n is not None else ""))
        bw = _number(parts[3], p, ln, "bw")
        if bw < 0:
            raise TopologyFormatError(p, ln, f"bw {parts[3]!r} is negative")
        out[k] = (s, t, bw)
    return out


# --------------------------------------------------------------------------- networkx
def _from_networkx(g: Any, capacity: str, weight: str, name: Optional[str]) -> Topology:
    import networkx as nx

    where = f"networkx graph {name or g.graph.get('name') or ''}".strip()
    if g.number_of_nodes() == 0:
        raise TopologyFormatError(where, None, "the graph has no nodes")
    nodes = list(g.nodes())
    index = {x: i for i, x in enumerate(nodes)}
    directed = g.is_directed()
    raw = []
    it = g.edges(keys=False, data=True) if g.is_multigraph() else g.edges(data=True)
    for u, v, d in it:
        sp = _opt_float(d.get("capacity", d.get("LinkSpeedRaw")))
        w = _opt_float(d.get("weight"))
        raw.append(RawEdge(index[u], index[v], speed=sp, weight=w, delay=_opt_float(d.get("delay")),
                           directed=directed))
    lat = [_opt_float(g.nodes[x].get("Latitude", g.nodes[x].get("latitude"))) for x in nodes]
    lon = [_opt_float(g.nodes[x].get("Longitude", g.nodes[x].get("longitude"))) for x in nodes]
    names = [str(x) for x in nodes]
    if len(set(names)) != len(names):
        raise TopologyFormatError(where, None, "node names collide once turned into strings")
    meta = {"format": "networkx", "raw_links": len(raw)}
    del nx
    return build_topology(name or str(g.graph.get("name") or "networkx"), names, raw,
                          capacity="file" if capacity == "zoo" else capacity, weight=weight,
                          latitude=lat, longitude=lon, meta=meta, source=where)


# --------------------------------------------------------------------------- dispatch
def read_topology(source: Source, *, capacity: str = "uniform", weight: str = "hop",
                  name: Optional[str] = None) -> Topology:
    """Read one topology.

    Parameters
    ----------
    source
        A file path (``.gml``, ``.graphml``, ``.graph``), ``"zoo/NAME"`` (the installed Topology
        Zoo, fetched on first use), or a networkx graph (edge attributes ``capacity``, ``weight``,
        ``delay`` used when asked for).
    capacity
        ``"uniform"`` (every link 1.0, the default), ``"zoo"`` (Zoo ``LinkSpeedRaw`` in bit/s,
        missing speeds filled with the topology's median known speed, else 1 Gbit/s) or ``"file"``
        (the file's own capacities).
    weight
        ``"hop"`` (the default), ``"inverse-capacity"``, ``"distance"`` or ``"file"``.
    """
    if not isinstance(source, (str, os.PathLike)):
        if hasattr(source, "nodes") and hasattr(source, "edges"):
            return _from_networkx(source, capacity, weight, name)
        raise UsageError(f"cannot read a topology from {type(source).__name__}")
    text = os.fspath(source)
    if _is_zoo_spec(text):
        from . import zoo

        paths = zoo.resolve(text)
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
        topo = _read_gml(path, capacity, weight)
    elif suffix == ".graphml":
        topo = _read_graphml(path, capacity, weight)
    elif suffix == ".graph":
        topo = _read_repetita(path, capacity, weight)
    else:
        raise TopologyFormatError(path, None, f"unknown topology format {suffix!r} "
                                  f"(expected one of {', '.join(TOPOLOGY_SUFFIXES)})")
    if name:
        topo.name = name
    return topo


def _is_zoo_spec(text: str) -> bool:
    return text == "zoo" or text.startswith("zoo/") and not Path(text).exists() or text == "zoo/"


def topology_files(spec: Union[str, os.PathLike]) -> List[Path]:
    """The files a ``--topo`` value names: a file, a folder, a glob, ``zoo`` or ``zoo/NAME``.

    Folders are read non-recursively; within a folder or glob, files are sorted by name.
    """
    text = os.fspath(spec)
    if _is_zoo_spec(text) and not Path(text).exists():
        from . import zoo

        return zoo.resolve(text)
    p = Path(text)
    if p.is_dir():
        files = sorted(q for q in p.iterdir() if q.suffix.lower() in TOPOLOGY_SUFFIXES and q.is_file())
        if not files:
            raise UsageError(f"folder {p} holds no topology file ({', '.join(TOPOLOGY_SUFFIXES)})")
        return files
    if p.is_file():
        return [p]
    if any(c in text for c in "*?["):
        files = sorted(Path(x) for x in _glob.glob(text)
                       if Path(x).suffix.lower() in TOPOLOGY_SUFFIXES and Path(x).is_file())
        if not files:
            raise UsageError(f"pattern {text!r} matches no topology file")
        return files
    raise UsageError(f"--topo {text!r}: no such file or folder (or use 'zoo' / 'zoo/NAME')")


def read_topologies(spec: Union[str, os.PathLike], *, capacity: str = "uniform",
                    weight: str = "hop") -> Iterator[Topology]:
    """Every topology a ``--topo`` value names, in file-name order (see :func:`topology_files`)."""
    for path in topology_files(spec):
        yield read_topology(path, capacity=capacity, weight=weight)

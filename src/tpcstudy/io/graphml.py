"""GraphML (the Topology Zoo's other format), parsed with expat so errors carry line numbers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from xml.parsers import expat

from ..errors import TopologyFormatError
from ..topology import RawEdge, Topology, build_topology
from ._parse import number, opt_float, read_text, unique_names
from .bounded import clip

__all__ = ["read_graphml"]


def read_graphml(path: Path, capacity: str, weight: str, links: str = "merged") -> Topology:
    """Read a GraphML file into a :class:`~tpcstudy.topology.Topology`."""
    data = read_text(path).encode("utf-8")
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
                raise TopologyFormatError(path, ln, f"node id {clip(nid)} is defined twice")
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
                raise TopologyFormatError(path, ln, f"edge {end_name} {clip(e)} is not a node id")
        sp = math.nan
        if "LinkSpeedRaw" in attrs:
            text, dln = attrs["LinkSpeedRaw"]
            sp = number(text, path, dln, "LinkSpeedRaw")
            if sp <= 0:
                raise TopologyFormatError(path, dln, f"LinkSpeedRaw {clip(text)} is not positive")
        raw.append(RawEdge(node_index[s], node_index[t], speed=sp))

    def attr(nd: Dict[str, Any], k: str) -> Optional[str]:
        v = nd.get(k)
        return None if v is None else v[0]

    labels = [attr(nd, "label") for nd in nodes]
    ids = [nd["__id"] for nd in nodes]
    lat = [opt_float(attr(nd, "Latitude")) for nd in nodes]
    lon = [opt_float(attr(nd, "Longitude")) for nd in nodes]
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
    return build_topology(path.stem, unique_names(labels, ids), raw, capacity=capacity,
                          weight=weight, latitude=lat, longitude=lon, internal=internal, meta=meta,
                          source=str(path), links=links)

"""networkx graphs in: edge attributes ``capacity`` (or ``LinkSpeedRaw``), ``weight``, ``delay``
and node attributes ``Latitude``/``Longitude`` are used when the rules ask for them."""

from __future__ import annotations

import math
from typing import Any, Optional

from ..errors import TopologyFormatError
from ..topology import RawEdge, Topology, build_topology
from ._parse import opt_float

__all__ = ["from_networkx"]


def _number(d: Any, keys: Any, u: Any, v: Any, where: str) -> float:
    """The edge attribute (the first of ``keys`` present) as a finite float; nan when absent
    (or NaN: unknown, as :func:`to_networkx` writes it); anything else (text, inf, a bool) is an
    error naming the edge and the value."""
    for key in keys:
        value = d.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        x = opt_float(value)
        if math.isnan(x) or isinstance(value, bool):
            raise TopologyFormatError(where, None, f"edge {u!r} - {v!r}: {key} {value!r} is "
                                      "not a finite number")
        return x
    return math.nan


def from_networkx(g: Any, capacity: str, weight: str, name: Optional[str], links: str = "merged") -> Topology:
    """A networkx graph (any of Graph, DiGraph, MultiGraph, MultiDiGraph) as a Topology."""
    where = f"networkx graph {name or g.graph.get('name') or ''}".strip()
    if g.number_of_nodes() == 0:
        raise TopologyFormatError(where, None, "the graph has no nodes")
    nodes = list(g.nodes())
    index = {x: i for i, x in enumerate(nodes)}
    directed = g.is_directed()
    raw = []
    it = g.edges(keys=False, data=True) if g.is_multigraph() else g.edges(data=True)
    for u, v, d in it:
        sp = _number(d, ("capacity", "LinkSpeedRaw"), u, v, where)
        w = _number(d, ("weight",), u, v, where)
        raw.append(RawEdge(index[u], index[v], speed=sp, weight=w,
                           delay=_number(d, ("delay",), u, v, where), directed=directed))
    lat = [opt_float(g.nodes[x].get("Latitude", g.nodes[x].get("latitude"))) for x in nodes]
    lon = [opt_float(g.nodes[x].get("Longitude", g.nodes[x].get("longitude"))) for x in nodes]
    names = [str(x) for x in nodes]
    if len(set(names)) != len(names):
        raise TopologyFormatError(where, None, "node names collide once turned into strings")
    meta = {"format": "networkx", "raw_links": len(raw)}
    return build_topology(name or str(g.graph.get("name") or "networkx"), names, raw,
                          capacity="file" if capacity == "zoo" else capacity, weight=weight,
                          latitude=lat, longitude=lon, meta=meta, source=where, links=links)

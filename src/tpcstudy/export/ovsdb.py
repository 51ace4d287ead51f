"""The ``ovsdb`` format: rows of the SRN daemon's ``Paths`` table (docs/srh-map.md §5)."""

from __future__ import annotations

import json
from typing import Dict, Iterator, List, Tuple

from ..io import json_text
from .table import Entry, PathTable

__all__ = ["rows", "render"]


def rows(table: PathTable) -> List[Dict[str, str]]:
    """One ``Paths`` row per unordered pair (docs/srh-map.md §5); flow sorted as strings."""
    plan = table.plan
    best: Dict[Tuple[str, str], Entry] = {}
    for e in table.entries:
        a, b = str(plan.loopback(e.source)), str(plan.loopback(e.destination))
        key = (min(a, b), max(a, b))
        forward = a == key[0]
        old = best.get(key)
        # prefer the entry that goes from flow[0]'s router towards flow[1]'s
        if old is None or (forward and str(plan.loopback(old.source)) != key[0]):
            best[key] = e
    rows = []
    for (a, b), e in best.items():
        ra = e.source if str(plan.loopback(e.source)) == a else e.destination
        rb = e.destination if ra == e.source else e.source
        segs = []
        for p in e.paths:
            w = [str(x) for x in p.segments[:-1]]  # destination router excluded
            if ra != e.source:  # only the reverse direction is in the table
                w = [str(plan.loopback(x)) for x in reversed(p.waypoints[:-1])]
            segs.append({"segs": w, "bw": int(round(p.bw_mbps)), "delay": int(round(p.delay_ms))})
        prefixes = [[{"address": str(n.network_address), "prefixlen": n.prefixlen}
                     for n in plan.prefixes.get(r, [])] for r in (ra, rb)]
        rows.append({"flow": json.dumps([a, b]), "prefixes": json.dumps(prefixes),
                     "segments": json.dumps(segs)})
    return rows


def render(table: PathTable) -> Iterator[Tuple[str, bytes]]:
    """``ovsdb-paths.json`` (the rows) and ``ovsdb-transact.json`` (an ovsdb-client transaction
    inserting them)."""
    out = rows(table)
    yield "ovsdb-paths.json", json_text({"database": "SRN", "table": "Paths",
                                         "rows": out}).encode("utf-8")
    ops = ["SRN", *({"op": "insert", "table": "Paths", "row": r} for r in out)]
    yield "ovsdb-transact.json", json_text(ops).encode("utf-8")

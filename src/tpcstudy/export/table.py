"""The path table: what each host is given, per (source router, destination prefix).

A :class:`PathTable` holds one :class:`Entry` per map entry, each with up to
:data:`~tpcstudy.export.layout.MAX_PATHS` :class:`PathRecord` objects, default first.
:func:`validate_table` checks it against what the agent can hold; :func:`read_pairs` reads the
pairs a table may be restricted to. How the paths are chosen is in
:mod:`tpcstudy.export.select`.
"""

from __future__ import annotations

import csv
import dataclasses
import ipaddress
import numbers
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ..errors import ExportError, InputFileError, UsageError
from ..io import read_bounded
from ..topology import Topology
from .addressing import AddressPlan
from .layout import KEY_SIZE, check_paths, check_prefix

__all__ = ["PathRecord", "Entry", "PathTable", "validate_table", "read_pairs", "check_pair"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass
class PathRecord:
    """One path of a destination.

    Attributes
    ----------
    nodes
        The concrete route, source router first, egress router last.
    segments
        Loopback addresses of the waypoints in visit order, egress last (what the SRH carries,
        before reversal).
    waypoints
        Router names of ``segments``.
    bw_mbps, delay_ms, igp_cost
        Bottleneck capacity (Mbit/s), summed link delay (ms), summed IGP weight of the route.
    weight
        The slot's weight in the EXP3 layouts (1.0 unless a caller sets shares, e.g. the
        emulator writing the LP's split for the BPF host agent's weighted round robin).
    """

    nodes: List[str]
    segments: List[ipaddress.IPv6Address]
    waypoints: List[str]
    bw_mbps: float
    delay_ms: float
    igp_cost: float
    weight: float = 1.0

    def to_json(self) -> Dict[str, Any]:
        out = {"nodes": list(self.nodes), "waypoints": list(self.waypoints),
               "segments": [str(a) for a in self.segments], "bw_mbps": self.bw_mbps,
               "delay_ms": self.delay_ms, "igp_cost": self.igp_cost}
        if self.weight != 1.0:  # a share set by the caller (e.g. the minimum-MLU split)
            out["weight"] = self.weight
        return out


@dataclasses.dataclass
class Entry:
    """The paths of one (source router, destination prefix): one map entry of the source."""

    source: str
    destination: str
    prefix: ipaddress.IPv6Network
    paths: List[PathRecord]

    @property
    def key(self) -> bytes:
        """The 8-byte map key: the first 64 bits of the prefix, network order."""
        return self.prefix.network_address.packed[:KEY_SIZE]

    def to_json(self) -> Dict[str, Any]:
        return {"source": self.source, "destination": self.destination,
                "prefix": str(self.prefix), "key": self.key.hex(),
                "paths": [dict(slot=i, **p.to_json()) for i, p in enumerate(self.paths)]}


@dataclasses.dataclass
class PathTable:
    """Every entry of an export, with the rules that produced it.

    ``entries`` is a plain list: filter it freely (or use :meth:`select`); :meth:`to_rows` gives
    one flat record per path for pandas or CSV.
    """

    topology: str
    entries: List[Entry]
    plan: AddressPlan
    k: int
    max_paths: int
    meta: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    @property
    def sources(self) -> List[str]:
        """Source routers, in table order."""
        return list(dict.fromkeys(e.source for e in self.entries))

    def select(self, source: Optional[str] = None,
               destination: Optional[str] = None) -> "PathTable":
        """A table with only the entries of ``source`` and/or ``destination``."""
        keep = [e for e in self.entries if (source is None or e.source == source)
                and (destination is None or e.destination == destination)]
        return dataclasses.replace(self, entries=keep)

    def to_rows(self) -> List[Dict[str, Any]]:
        """One record per path: source, destination, prefix, slot, nodes, waypoints, segments,
        num_segments, bw_mbps, delay_ms, igp_cost (lists as lists, addresses as strings)."""
        rows = []
        for e in self.entries:
            for i, p in enumerate(e.paths):
                rows.append({"source": e.source, "destination": e.destination,
                             "prefix": str(e.prefix), "slot": i, "nodes": list(p.nodes),
                             "waypoints": list(p.waypoints),
                             "segments": [str(a) for a in p.segments],
                             "num_segments": len(p.segments), "bw_mbps": p.bw_mbps,
                             "delay_ms": p.delay_ms, "igp_cost": p.igp_cost})
        return rows

    def to_json(self) -> Dict[str, Any]:
        return {"format": "tpcstudy path table", "version": 1, "topology": self.topology,
                "k": self.k, "paths": self.max_paths, **self.meta,
                "entries": [e.to_json() for e in self.entries]}


def validate_table(table: PathTable, *, allow_wide_prefix: bool = False) -> None:
    """Raise :class:`ExportError` on the first entry the agent could not use.

    Checks: 1..8 paths per destination, 1..9 segments per path, IPv6 segments, prefixes no wider
    than /64 (unless ``allow_wide_prefix``), one entry per map key and source.
    """
    keys: Dict[Tuple[str, bytes], Entry] = {}
    for e in table.entries:
        where = f"{e.source} -> {e.destination} ({e.prefix})"
        check_prefix(e.prefix, where, allow_wide_prefix)
        check_paths(e.paths, where)
        other = keys.get((e.source, e.key))
        if other is not None:
            raise ExportError(f"{where}: same map key {e.key.hex()} (first 64 bits) as "
                              f"{other.destination} ({other.prefix}) in {e.source}'s map")
        keys[(e.source, e.key)] = e


#: A pairs file names at most every ordered pair of the largest topology: far below this.
MAX_PAIRS_FILE = 64 << 20


def read_pairs(path: PathLike, topo: Topology) -> List[Tuple[str, str]]:
    """Read ``source,destination`` router-name pairs, one per line (CSV quoting allowed).

    Blank lines and lines starting with ``#`` are skipped, as is a first line
    ``source,destination``. A file that cannot be read (a link, a FIFO, more than
    :data:`MAX_PAIRS_FILE` bytes), unknown routers, a router paired with itself, or a malformed
    line raise :class:`~tpcstudy.errors.InputFileError` (exit 1) naming the file and line.
    """
    p = Path(path)
    data = read_bounded(p, MAX_PAIRS_FILE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputFileError(f"{p}:{line}: not UTF-8 text (byte "
                             f"{data[exc.start:exc.start + 1]!r})") from None
    out: List[Tuple[str, str]] = []
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) != 2:
            raise InputFileError(f"{p}:{lineno}: expected 'source,destination', got "
                                 f"{','.join(row)[:200]!r}")
        if lineno == 1 and [c.lower() for c in cells] == ["source", "destination"]:
            continue
        try:
            out.append(check_pair(topo, cells[0], cells[1], f"{p}:{lineno}"))
        except UsageError as exc:
            raise InputFileError(str(exc)) from None
    if not out:
        raise InputFileError(f"{p}: no pair in the file")
    return out


def check_pair(topo: Topology, s: Any, d: Any, where: str) -> Tuple[str, str]:
    """The names of a pair given by router names or ids (the one rule of
    :meth:`Topology.index_of`)."""
    ids = []
    for r in (s, d):
        try:
            ids.append(topo.index_of(r))
        except UsageError as exc:
            if isinstance(r, numbers.Integral) and not isinstance(r, bool):
                raise UsageError(f"{where}: {exc}") from None
            raise UsageError(f"{where}: router {str(r)!r} is not in topology {topo.name!r} after "
                             f"pruning (unknown, or removed with the routers outside the 2-core's "
                             f"largest component)") from None
    names = (topo.names[ids[0]], topo.names[ids[1]])
    if ids[0] == ids[1]:
        raise UsageError(f"{where}: source and destination are the same router {names[0]!r}")
    return names

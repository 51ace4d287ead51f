"""Path tables for the TPC eBPF agent: ``tpcstudy export`` (tpc-srh-map.md, study-method.md §6).

For each (source edge router, destination prefix) of the pruned topology the table holds up to 8
paths, default first:

- **slot 0** is the plain IGP shortest path: one segment, the egress router;
- then the ``sps`` link-disjoint paths with at most ``k`` segments (study-method.md §5), skipping
  a path whose waypoint list equals one already taken (the first sps path is usually the plain
  shortest path itself), up to ``paths`` in all.

A path's **waypoints** are the routers whose loopbacks form its SRH, in the order packets visit
them, egress router last (so the plain path has one waypoint: the egress). Its **nodes** are the
concrete route: for a segment with ECMP, the route the path core returns (the smallest node ids).
Along that route:

- ``bw_mbps`` = the bottleneck arc capacity in Mbit/s: ``bit/s`` / 1e6, ``kbit/s`` / 1e3; for
  uniform capacities (unit ``link``) there is no real speed and each link counts ``link_mbps``
  (default 1000, i.e. 1 Gbit/s per physical link; 0 writes zero); the rule is written in the table;
- ``delay_ms`` = the sum of the links' delays (REPETITA file delays, else great-circle distance /
  200 km/ms, else 0 for a link with neither; the count of such links is written in the table);
- ``igp_cost`` = the sum of the IGP weights of the route's arcs.

Formats (:func:`write_paths`): ``json`` (``paths.json``, the readable table), ``bpf`` (per source
router a bpftool batch file and a binary file, folder ``bpf-<variant>``), ``ovsdb`` (rows of the
SRN ``Paths`` table). The plan used is always written as ``plan.json``. Values follow
tpc-srh-map.md §2-3 byte for byte; nothing is written unless the whole table passes validation.

Binary file layout (``bpf-<variant>/<router>.bin``, little-endian integers)::

    offset size  field
    0      8     magic b"TPCSRHMP"
    8      4     u32 format version (1)
    12     4     u32 variant code (0 n_rto, 1 exp3_lowest_completion, 2 exp3_lowest_delay)
    16     4     u32 value size (1556, 1652 or 1684)
    20     4     u32 record count N
    24     16    map name, NUL-padded ASCII ("dest_map" or "short_dest_map")
    40     16    loopback of the source router (network order)
    56     ...   N records: 8-byte key (the map key's bytes: first 64 bits of the destination
                 prefix, network order) followed by the value (value size bytes)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import ipaddress
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .addressing import AddressPlan, default_plan, plan_from_dict, read_plan
from .errors import ExportError, PlanError, UsageError
from .io import atomic_write_bytes, json_text
from .paths import DEFAULT_K, DEFAULT_PATHS
from .topology import Topology, prune

__all__ = [
    "PathRecord", "Entry", "PathTable", "Variant", "VARIANTS", "ExportError",
    "path_table", "write_paths", "validate_table", "encode_value", "decode_value",
    "DecodedPath", "DecodedValue", "inspect", "format_inspect", "read_pairs",
    "MAX_PATHS", "MAX_SEGMENTS",
]

PathLike = Union[str, "os.PathLike[str]"]

# --------------------------------------------------------------------------- the agent's layout
#: Path slots per destination (tpc-srh-map.md §2).
MAX_PATHS = 8
#: Address slots per SRH; slot 0 is reserved for the kernel, so a path has at most 9 segments.
SRH_ADDRESSES = 10
MAX_SEGMENTS = SRH_ADDRESSES - 1
SRH_SIZE = 8 + 16 * SRH_ADDRESSES  # 168
SLOT_SIZE = 24 + SRH_SIZE  # 192
SLOTS_OFFSET = 20
BASE_SIZE = SLOTS_OFFSET + MAX_PATHS * SLOT_SIZE  # 1556
WEIGHT_SIZE = 12
WEIGHTS_OFFSET = BASE_SIZE  # 1556
SRTT_OFFSET = WEIGHTS_OFFSET + MAX_PATHS * WEIGHT_SIZE  # 1652
SRH_TYPE = 4
#: EXP3 weight 1.0 as (u64 mantissa, u32 exponent).
WEIGHT_ONE = (0x8000000000000000, 1024)
U64_MAX = 2 ** 64 - 1
U32_MAX = 2 ** 32 - 1

BIN_MAGIC = b"TPCSRHMP"
BIN_VERSION = 1
BIN_HEADER = struct.Struct("<8sIIII16s16s")  # 56 bytes
KEY_SIZE = 8


@dataclasses.dataclass(frozen=True)
class Variant:
    """One agent program family: its map and the layout of the map's values."""

    name: str
    code: int
    map_name: str
    value_size: int
    weights: bool
    last_srtt: bool


VARIANTS: Dict[str, Variant] = {
    "n_rto": Variant("n_rto", 0, "dest_map", BASE_SIZE, False, False),
    "exp3_lowest_completion": Variant("exp3_lowest_completion", 1, "short_dest_map",
                                      SRTT_OFFSET, True, False),
    "exp3_lowest_delay": Variant("exp3_lowest_delay", 2, "short_dest_map",
                                 SRTT_OFFSET + 4 * MAX_PATHS, True, True),
}
assert [v.value_size for v in VARIANTS.values()] == [1556, 1652, 1684]

FORMATS = ("json", "bpf", "ovsdb")

#: Multiply a capacity in ``topo.meta["capacity_unit"]`` by this to get Mbit/s.
_UNIT_TO_MBPS = {"bit/s": 1e-6, "kbit/s": 1e-3, "Mbit/s": 1.0, "Gbit/s": 1e3}


def _variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise UsageError(f"unknown agent variant {name!r}; choose from "
                         f"{', '.join(VARIANTS)}") from None


# --------------------------------------------------------------------------- the table
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
    """

    nodes: List[str]
    segments: List[ipaddress.IPv6Address]
    waypoints: List[str]
    bw_mbps: float
    delay_ms: float
    igp_cost: float

    def to_json(self) -> Dict[str, Any]:
        return {"nodes": list(self.nodes), "waypoints": list(self.waypoints),
                "segments": [str(a) for a in self.segments], "bw_mbps": self.bw_mbps,
                "delay_ms": self.delay_ms, "igp_cost": self.igp_cost}


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


# --------------------------------------------------------------------------- building
def read_pairs(path: PathLike, topo: Topology) -> List[Tuple[str, str]]:
    """Read ``source,destination`` router-name pairs, one per line (CSV quoting allowed).

    Blank lines and lines starting with ``#`` are skipped, as is a first line
    ``source,destination``. Unknown routers, a router paired with itself, or a malformed line
    raise :class:`~tpcstudy.UsageError` naming the file and line.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{p}: cannot read the pairs file ({exc.strerror or exc})") from None
    out: List[Tuple[str, str]] = []
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) != 2:
            raise UsageError(f"{p}:{lineno}: expected 'source,destination', got {','.join(row)!r}")
        if lineno == 1 and [c.lower() for c in cells] == ["source", "destination"]:
            continue
        out.append(_pair(topo, cells[0], cells[1], f"{p}:{lineno}"))
    if not out:
        raise UsageError(f"{p}: no pair in the file")
    return out


def _pair(topo: Topology, s: Any, d: Any, where: str) -> Tuple[str, str]:
    known = set(topo.names)
    for r in (s, d):
        if str(r) not in known:
            raise UsageError(f"{where}: router {str(r)!r} is not in topology {topo.name!r} after "
                             f"pruning (unknown, or removed with the routers outside the 2-core's "
                             f"largest component)")
    if str(s) == str(d):
        raise UsageError(f"{where}: source and destination are the same router {str(s)!r}")
    return str(s), str(d)


def _resolve_plan(plan: Any, topo: Topology) -> AddressPlan:
    if plan is None:
        out = default_plan(topo)
    elif isinstance(plan, AddressPlan):
        out = plan
    elif isinstance(plan, dict):
        out = plan_from_dict(plan)
    elif isinstance(plan, (str, os.PathLike)):
        out = read_plan(plan)
    else:
        raise UsageError(f"plan must be an AddressPlan, a dict or a file, not {type(plan).__name__}")
    out.check(topo)
    return out


def _mbps_factor(topo: Topology, link_mbps: float) -> Tuple[float, str]:
    unit = str(topo.meta.get("capacity_unit", "bit/s"))
    if unit == "link":
        return float(link_mbps), (
            f"bottleneck arc capacity along the route; capacities are uniform (unit 'link', no "
            f"real speed): each physical link counts {float(link_mbps):g} Mbit/s")
    if unit not in _UNIT_TO_MBPS:
        raise ExportError(f"topology {topo.name!r}: unknown capacity unit {unit!r} (expected one "
                          f"of {', '.join(['link', *_UNIT_TO_MBPS])})")
    return _UNIT_TO_MBPS[unit], f"bottleneck arc capacity along the route, {unit} -> Mbit/s"


SELECT_RULES = ("sps", "maxflow")


def path_table(topo: Topology, *, k: int = DEFAULT_K, paths: int = DEFAULT_PATHS, plan: Any = None,
               pairs: Any = None, link_mbps: float = 1000.0, select: str = "sps",
               solver: str = "highs") -> PathTable:
    """The path table of ``topo`` for the TPC agent (module docstring, tpc-srh-map.md).

    Parameters
    ----------
    topo
        The topology; pruned here (``tpcstudy.prune``) unless it already is.
    k
        Segment limit of the sps paths (1..9: the SRH holds at most 9 segments).
    paths
        Paths per destination, default path included (1..8).
    plan
        ``None`` (the default plan of :func:`tpcstudy.addressing.default_plan`), an
        :class:`~tpcstudy.addressing.AddressPlan`, a dict or a plan file.
    pairs
        ``None``: every ordered pair (edge router, router with a prefix in the plan), i.e. all
        edge-router pairs with the default plan. Else ``[(source, destination), ...]`` names, or a
        pairs file (:func:`read_pairs`).
    link_mbps
        Mbit/s per link when capacities are uniform (unit ``link``); ``0`` writes zero.
    select
        How the backups after slot 0 are chosen: ``"sps"`` (the link-disjoint sps paths, in the
        order found) or ``"maxflow"`` (the sr-paths with at most ``k`` segments that the max-flow
        LP over the table's pairs puts flow on, largest flow first, then the sps paths; these
        backups carry the most traffic together but need not be disjoint from slot 0).
    solver
        LP backend for ``select="maxflow"``.

    Returns
    -------
    PathTable
        One :class:`Entry` per (source, destination prefix), sources in router order.
    """
    from .paths import disjoint_paths_batch

    if not 1 <= int(k) <= MAX_SEGMENTS:
        raise UsageError(f"k = {k!r}: the agent's SRH holds 1 to {MAX_SEGMENTS} segments")
    if not 1 <= int(paths) <= MAX_PATHS:
        raise UsageError(f"paths = {paths!r}: the agent holds 1 to {MAX_PATHS} paths per "
                         f"destination")
    k, paths = int(k), int(paths)
    if select not in SELECT_RULES:
        raise UsageError(f"select = {select!r}: choose from {', '.join(SELECT_RULES)}")
    if not math.isfinite(link_mbps) or link_mbps < 0:
        raise UsageError(f"link_mbps = {link_mbps!r} must be >= 0")
    t = topo if topo.meta.get("pruned") else prune(topo)
    the_plan = _resolve_plan(plan, t)
    names = t.names

    if pairs is None:
        dests = [r for r in names if the_plan.prefixes.get(r)]
        sources = t.edge_routers
        pair_list = [(s, d) for s in sources for d in dests if s != d]
        pairs_rule = "every ordered pair (edge router, router with a prefix in the plan)"
    else:
        if isinstance(pairs, (str, os.PathLike)):
            pair_list = read_pairs(pairs, t)
            pairs_rule = f"pairs from {os.fspath(pairs)}"
        else:
            pair_list = [_pair(t, s, d, f"pairs[{i}]") for i, (s, d) in enumerate(pairs)]
            pairs_rule = "pairs given by the caller"
        pair_list = list(dict.fromkeys(pair_list))
        for s, d in pair_list:
            if not the_plan.prefixes.get(d):
                raise PlanError(the_plan.source, f"no host prefix for destination router {d!r}")
    for r in dict.fromkeys(r for pr in pair_list for r in pr):  # first missing router, in order
        the_plan.loopback(r)

    factor, bw_rule = _mbps_factor(t, link_mbps)
    arc_of = {(int(u), int(v)): a for a, (u, v) in
              enumerate(zip(t.arc_src.tolist(), t.arc_dst.tolist()))}
    link_delay = np.where(np.isnan(t.delay), 0.0, t.delay).tolist()
    cap = (t.arc_capacity * factor).tolist()
    weight = t.arc_weight.tolist()
    loop = {r: the_plan.loopbacks.get(r) for r in names}

    def record(route: List[int], wps: List[int]) -> PathRecord:
        arcs = [arc_of[(u, v)] for u, v in zip(route[:-1], route[1:])]
        return PathRecord(
            nodes=[names[x] for x in route],
            segments=[loop[names[w]] or the_plan.loopback(names[w]) for w in wps],
            waypoints=[names[w] for w in wps],
            bw_mbps=float(min(cap[a] for a in arcs)) if arcs else 0.0,
            delay_ms=float(sum(link_delay[a // 2] for a in arcs)),
            igp_cost=float(sum(weight[a] for a in arcs)))

    src = np.array([t.index_of(s) for s, _ in pair_list], dtype=np.int32)
    dst = np.array([t.index_of(d) for _, d in pair_list], dtype=np.int32)
    batch = disjoint_paths_batch(t, src, dst, method="sps", k=k)
    entries: List[Entry] = []
    no, nodes_all = batch.node_offsets.tolist(), batch.nodes.tolist()
    wo, wps_all = batch.waypoint_offsets.tolist(), batch.waypoints.tolist()
    lp_paths = _maxflow_backups(t, src, dst, k, solver) if select == "maxflow" else None
    for i, (s, d) in enumerate(pair_list):
        di = int(dst[i])
        # slot 0 = the direct segment (the plain IGP path), then the other sps paths
        recs = [record(nodes_all[no[q]:no[q + 1]], [*wps_all[wo[q]:wo[q + 1]], di])
                for q in batch.exported(i, paths)]
        if lp_paths is not None and recs:  # LP-chosen backups first, then the sps ones
            taken = {tuple(recs[0].waypoints)}
            chosen = recs[:1]
            for route, wps in lp_paths[i]:
                key = tuple(names[w] for w in wps)
                if len(chosen) < paths and key not in taken:
                    taken.add(key)
                    chosen.append(record(route, wps))
            for r in recs[1:]:
                if len(chosen) < paths and tuple(r.waypoints) not in taken:
                    taken.add(tuple(r.waypoints))
                    chosen.append(r)
            recs = chosen
        if not recs:
            continue  # unreachable: no entry (cannot happen in a pruned topology)
        for prefix in the_plan.prefixes[d]:
            entries.append(Entry(s, d, prefix, recs))

    unknown_delay = int(np.isnan(t.delay).sum())
    meta = {
        "pairs_rule": pairs_rule,
        "path_rule": ("slot 0: plain IGP shortest path (one segment, the egress router); then "
                      + ("the sr-paths the max-flow LP (sr, these pairs, uniform demand-free "
                         "throughput) puts flow on, largest first, then " if select == "maxflow"
                         else "")
                      + f"sps link-disjoint paths with at most k={k} segments, duplicates "
                        f"skipped, at most {paths} in all"),
        "select": select,
        "route_rule": "nodes: for a segment with ECMP, the route with the smallest node ids",
        "bw_rule": bw_rule,
        "bw_unit": "Mbit/s",
        "capacity_unit": str(t.meta.get("capacity_unit", "")),
        "link_mbps": float(link_mbps) if t.meta.get("capacity_unit") == "link" else None,
        "delay_rule": (f"sum of link delays along the route (ms): file delays, else great-circle "
                       f"distance / 200 km/ms, else 0 ({unknown_delay} of {t.num_links} links "
                       f"have neither)"),
        "delay_unknown_links": unknown_delay,
        # REPETITA files do not state their delay unit: their numbers are written as they are
        "delay_unit": str(t.meta.get("delay_unit", "ms")),
        "igp_rule": f"sum of IGP weights along the route ({t.meta.get('weight_rule', '')})",
        "plan": "plan.json",
    }
    return PathTable(t.name, entries, the_plan, k, paths, meta)


def _maxflow_backups(t: Topology, src: np.ndarray, dst: np.ndarray, k: int,
                     solver: str) -> List[List[Tuple[List[int], List[int]]]]:
    """Per pair, the sr-paths the sr max-flow LP over all the pairs puts flow on, largest flow
    first (ties by waypoints): ``(route node ids, segment endpoint ids)``, the route being the
    smallest-id shortest path of each segment."""
    from .maxflow import max_flow
    from .paths import shortest_paths

    res = max_flow(t, np.stack([src, dst], axis=1), model="sr", k=k, solver=solver)
    if not res.ok:
        raise ExportError(f"select maxflow: the sr LP failed ({res.status}: {res.message})")
    by_pair: Dict[Tuple[int, int], List[Tuple[float, List[int]]]] = {}
    for path, flow in zip(res.paths, res.flows.tolist()):
        if flow > 1e-9 and len(path) > 2:  # the direct path is slot 0 already
            ids = [t.index_of(x) for x in path]
            by_pair.setdefault((ids[0], ids[-1]), []).append((-flow, ids))
    out: List[List[Tuple[List[int], List[int]]]] = []
    for s_, d_ in zip(src.tolist(), dst.tolist()):
        items = []
        for _, ids in sorted(by_pair.get((s_, d_), []), key=lambda x: (x[0], x[1])):
            route = [ids[0]]
            for a, b in zip(ids[:-1], ids[1:]):  # names: a router may be named like another's id
                seg = shortest_paths(t, t.names[a], t.names[b], limit=1)[0]
                route.extend(t.index_of(x) for x in seg[1:])
            items.append((route, ids[1:]))
        out.append(items)
    return out


# --------------------------------------------------------------------------- validation
def _check_prefix(prefix: Any, where: str, allow_wide_prefix: bool) -> ipaddress.IPv6Network:
    if not isinstance(prefix, ipaddress.IPv6Network):
        raise ExportError(f"{where}: destination prefix {prefix!r} is not an IPv6 network")
    if prefix.prefixlen < 64 and not allow_wide_prefix:
        first = ipaddress.IPv6Network((prefix.network_address, 64))
        raise ExportError(
            f"{where}: destination prefix {prefix} is wider than /64; the agent's map key is the "
            f"first 64 bits of the destination address, so only hosts in {first} would use these "
            f"paths. Give a /64 (or longer) prefix, or allow it with --allow-wide-prefix "
            f"(allow_wide_prefix=True) to serve only its first /64")
    return prefix


def _check_paths(paths: Sequence[Any], where: str) -> None:
    if not paths:
        raise ExportError(f"{where}: no path (an entry needs at least the default path)")
    if len(paths) > MAX_PATHS:
        raise ExportError(f"{where}: {len(paths)} paths; the agent holds at most {MAX_PATHS} "
                          f"per destination")
    for i, p in enumerate(paths):
        segs = list(p.segments)
        if not segs:
            raise ExportError(f"{where}, path {i}: no segment; an SRH without segments sends "
                              f"packets to '::'")
        if len(segs) > MAX_SEGMENTS:
            raise ExportError(f"{where}, path {i}: {len(segs)} waypoints (egress included); an "
                              f"SRH holds at most {MAX_SEGMENTS}")
        for a in segs:
            if not isinstance(a, ipaddress.IPv6Address) or a.is_unspecified:
                raise ExportError(f"{where}, path {i}: segment {a!r} is not a usable IPv6 "
                                  f"address")
        for what, v in (("bw", p.bw_mbps), ("delay", p.delay_ms)):
            if not (math.isfinite(v) and 0 <= round(v) <= U64_MAX):
                raise ExportError(f"{where}, path {i}: {what} {v!r} does not fit a u64")


def validate_table(table: PathTable, *, allow_wide_prefix: bool = False) -> None:
    """Raise :class:`ExportError` on the first entry the agent could not use.

    Checks: 1..8 paths per destination, 1..9 segments per path, IPv6 segments, prefixes no wider
    than /64 (unless ``allow_wide_prefix``), one entry per map key and source.
    """
    keys: Dict[Tuple[str, bytes], Entry] = {}
    for e in table.entries:
        where = f"{e.source} -> {e.destination} ({e.prefix})"
        _check_prefix(e.prefix, where, allow_wide_prefix)
        _check_paths(e.paths, where)
        other = keys.get((e.source, e.key))
        if other is not None:
            raise ExportError(f"{where}: same map key {e.key.hex()} (first 64 bits) as "
                              f"{other.destination} ({other.prefix}) in {e.source}'s map")
        keys[(e.source, e.key)] = e


# --------------------------------------------------------------------------- encoding
def _srh(segments: Sequence[ipaddress.IPv6Address]) -> bytes:
    n = len(segments)
    out = bytearray(SRH_SIZE)
    struct.pack_into("<BBBBBBH", out, 0, 0, 2 * (n + 1), SRH_TYPE, n, n, 0, 0)
    # segments[0] stays zero; segments[k] = w(n - k + 1): reversed, first hop in segments[n]
    for kk, a in enumerate(reversed(list(segments)), start=1):
        out[8 + 16 * kk:8 + 16 * (kk + 1)] = a.packed
    return bytes(out)


def encode_value(prefix: Union[str, ipaddress.IPv6Network], paths: Sequence[Any],
                 variant: str = "n_rto", *, allow_wide_prefix: bool = False) -> bytes:
    """The map value of one destination (tpc-srh-map.md §2-3), exactly the variant's size.

    Parameters
    ----------
    prefix
        The destination prefix (its network address goes in ``dest``).
    paths
        Objects with ``segments`` (IPv6 addresses in visit order, egress last), ``bw_mbps`` and
        ``delay_ms`` (rounded to integers), e.g. :class:`PathRecord`; slot 0 first.
    variant
        ``"n_rto"``, ``"exp3_lowest_completion"`` or ``"exp3_lowest_delay"``.
    """
    v = _variant(variant)
    net = ipaddress.IPv6Network(prefix) if isinstance(prefix, str) else prefix
    where = f"destination {net}"
    _check_prefix(net, where, allow_wide_prefix)
    _check_paths(paths, where)
    out = bytearray(v.value_size)
    out[0:16] = net.network_address.packed
    bws = [int(round(p.bw_mbps)) for p in paths]
    struct.pack_into("<I", out, 16, min(max(bws), U32_MAX))
    for i, p in enumerate(paths):
        off = SLOTS_OFFSET + SLOT_SIZE * i
        struct.pack_into("<IIQQ", out, off, i, 1, bws[i], int(round(p.delay_ms)))
        out[off + 24:off + SLOT_SIZE] = _srh(p.segments)
    if v.weights:
        for i in range(MAX_PATHS):
            struct.pack_into("<QI", out, WEIGHTS_OFFSET + WEIGHT_SIZE * i, *WEIGHT_ONE)
    # last_srtt (exp3_lowest_delay): zeros, already there
    assert len(out) == v.value_size
    return bytes(out)


@dataclasses.dataclass
class DecodedPath:
    """One valid slot of a decoded value; ``segments`` in visit order (egress last)."""

    slot: int
    segments: List[ipaddress.IPv6Address]
    bw_mbps: int
    delay_ms: int


@dataclasses.dataclass
class DecodedValue:
    """A decoded map value; ``problems`` lists anything the agent would not expect."""

    variant: str
    dest: ipaddress.IPv6Address
    max_reward: int
    paths: List[DecodedPath]
    weights: List[float]
    last_srtt: List[int]
    problems: List[str]


def decode_value(data: bytes, variant: str = "n_rto") -> DecodedValue:
    """Decode one map value (the inverse of :func:`encode_value`).

    Only valid slots (``type == 4`` and ``is_valid != 0``) become paths; inconsistencies (a hole
    among the slots, a wrong ``hdrlen``, a non-zero ``segments[0]`` or unused slot) are listed in
    ``problems`` rather than raised. A value of the wrong size raises :class:`ExportError`.
    """
    v = _variant(variant)
    if len(data) != v.value_size:
        raise ExportError(f"a {v.name} value is {v.value_size} bytes, got {len(data)}")
    dest = ipaddress.IPv6Address(bytes(data[0:16]))
    (max_reward,) = struct.unpack_from("<I", data, 16)
    paths: List[DecodedPath] = []
    problems: List[str] = []
    seen_invalid = False
    for i in range(MAX_PATHS):
        off = SLOTS_OFFSET + SLOT_SIZE * i
        srh_id, valid, bw, delay = struct.unpack_from("<IIQQ", data, off)
        nexthdr, hdrlen, typ, left, first, flags, tag = struct.unpack_from("<BBBBBBH", data, off + 24)
        if not (valid and typ == SRH_TYPE):
            if any(data[off:off + SLOT_SIZE]):
                problems.append(f"slot {i}: not valid but not all zero")
            seen_invalid = True
            continue
        if seen_invalid:
            problems.append(f"slot {i}: valid slot after an invalid one")
        n = first
        if not 1 <= n <= MAX_SEGMENTS:
            problems.append(f"slot {i}: first_segment {n} outside 1..{MAX_SEGMENTS}")
            n = max(0, min(n, MAX_SEGMENTS))
        if hdrlen != 2 * (n + 1) or left != n or srh_id != i or nexthdr or flags or tag:
            problems.append(f"slot {i}: header fields srh_id={srh_id} hdrlen={hdrlen} "
                            f"segments_left={left} first_segment={first} nexthdr={nexthdr} "
                            f"flags={flags} tag={tag}")
        addrs = off + 24 + 8
        if any(data[addrs:addrs + 16]):
            problems.append(f"slot {i}: segments[0] is not zero")
        if any(data[addrs + 16 * (n + 1):addrs + 16 * SRH_ADDRESSES]):
            problems.append(f"slot {i}: address slots after segments[{n}] are not zero")
        segs = [ipaddress.IPv6Address(bytes(data[addrs + 16 * kk:addrs + 16 * (kk + 1)]))
                for kk in range(n, 0, -1)]
        paths.append(DecodedPath(i, segs, int(bw), int(delay)))
    weights: List[float] = []
    srtt: List[int] = []
    if v.weights:
        for i in range(MAX_PATHS):
            m, e = struct.unpack_from("<QI", data, WEIGHTS_OFFSET + WEIGHT_SIZE * i)
            try:
                weights.append(math.ldexp(m, e - 1024 - 63) if m else 0.0)
            except OverflowError:  # a corrupted exponent (found by the fuzzer): not a weight
                weights.append(math.inf)
                problems.append(f"weight[{i}]: exponent {e} is out of range")
    if v.last_srtt:
        srtt = list(struct.unpack_from(f"<{MAX_PATHS}I", data, SRTT_OFFSET))
    return DecodedValue(v.name, dest, int(max_reward), paths, weights, srtt, problems)


# --------------------------------------------------------------------------- files
def _safe_names(routers: Sequence[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    used: set = set()
    for r in routers:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", r).strip("._-") or "router"
        name, i = base, 2
        while name.lower() in used:
            name, i = f"{base}-{i}", i + 1
        used.add(name.lower())
        out[r] = name
    return out


def _check_pin(pin: str) -> str:
    if not pin or any(c.isspace() for c in pin) or any(c in pin for c in "#'\"\\"):
        raise UsageError(f"pinned map path {pin!r} must be non-empty without spaces, quotes, "
                         f"backslashes or '#' (bpftool batch files split on them)")
    return pin


def _comment(text: str) -> str:
    return "# " + re.sub(r"[\r\n]+", " ", text)


def _hex(data: bytes) -> str:
    return data.hex(" ")


def _bpf_files(table: PathTable, v: Variant, pin: str) -> Iterator[Tuple[str, bytes]]:
    by_source: Dict[str, List[Entry]] = {}
    for e in table.entries:
        by_source.setdefault(e.source, []).append(e)
    safe = _safe_names(list(by_source))
    index = {"variant": v.name, "map": v.map_name, "value_size": v.value_size, "pin": pin,
             "topology": table.topology, "binary_layout": _BIN_DOC, "sources": {}}
    for src, entries in by_source.items():
        loop = table.plan.loopbacks.get(src)
        values = [encode_value(e.prefix, e.paths, v.name, allow_wide_prefix=True) for e in entries]
        lines = [_comment(f"tpcstudy export: TPC agent paths of source router {src!r} "
                          f"(loopback {loop}), topology {table.topology!r}"),
                 _comment(f"variant {v.name}: map {v.map_name}, {v.value_size}-byte values, "
                          f"{len(entries)} entries; load with: bpftool batch file THIS_FILE")]
        for e, val in zip(entries, values):
            lines.append(_comment(f"{e.destination} {e.prefix}: {len(e.paths)} paths"))
            lines.append(f"map update pinned {pin} key hex {_hex(e.key)} value hex {_hex(val)}")
        header = BIN_HEADER.pack(BIN_MAGIC, BIN_VERSION, v.code, v.value_size, len(entries),
                                 v.map_name.encode("ascii"),
                                 loop.packed if loop is not None else bytes(16))
        blob = header + b"".join(e.key + val for e, val in zip(entries, values))
        base = safe[src]
        index["sources"][src] = {"batch": f"{base}.batch", "binary": f"{base}.bin",
                                 "loopback": str(loop) if loop else None,
                                 "entries": len(entries)}
        yield f"{base}.batch", ("\n".join(lines) + "\n").encode("utf-8")
        yield f"{base}.bin", blob
    yield "index.json", json_text(index).encode("utf-8")


_BIN_DOC = ("56-byte header <8sIIII16s16s: magic 'TPCSRHMP', version 1, variant code (0 n_rto, 1 "
            "exp3_lowest_completion, 2 exp3_lowest_delay), value size, record count, map name "
            "(NUL-padded), source loopback; then per record the 8-byte map key and the value")


def _ovsdb_rows(table: PathTable) -> List[Dict[str, str]]:
    """One ``Paths`` row per unordered pair (tpc-srh-map.md §5); flow sorted as strings."""
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


def _render(table: PathTable, formats: Sequence[str], v: Variant,
            pin: str) -> Iterator[Tuple[str, bytes]]:
    yield "plan.json", json_text(table.plan.to_json()).encode("utf-8")
    for f in formats:
        if f == "json":
            yield "paths.json", json_text(table.to_json()).encode("utf-8")
        elif f == "bpf":
            for name, data in _bpf_files(table, v, pin):
                yield f"bpf-{v.name}/{name}", data
        elif f == "ovsdb":
            rows = _ovsdb_rows(table)
            yield "ovsdb-paths.json", json_text({"database": "SRN", "table": "Paths",
                                                 "rows": rows}).encode("utf-8")
            ops = ["SRN", *({"op": "insert", "table": "Paths", "row": r} for r in rows)]
            yield "ovsdb-transact.json", json_text(ops).encode("utf-8")


def write_paths(table: PathTable, out: PathLike, format: Union[str, Sequence[str]] = "json",
                variant: str = "n_rto", pin: Optional[str] = None, *,
                allow_wide_prefix: bool = False) -> List[Path]:
    """Write ``table`` in one or more formats into the folder ``out``, with ``plan.json``.

    Parameters
    ----------
    table
        From :func:`path_table`.
    out
        Output folder (created).
    format
        ``"json"`` (``paths.json``), ``"bpf"`` (``bpf-<variant>/<router>.batch`` and ``.bin``,
        ``index.json``) or ``"ovsdb"`` (``ovsdb-paths.json`` rows, ``ovsdb-transact.json``), or a
        list of them.
    variant
        Agent variant for ``bpf`` (see :data:`VARIANTS`).
    pin
        Pinned map path in the batch files (default ``/sys/fs/bpf/tpc/<map name>``).
    allow_wide_prefix
        Accept prefixes shorter than /64 (only their first /64 is served).

    The whole table is validated and rendered into a staging folder inside ``out`` before
    anything is moved into place; an error leaves ``out`` untouched. A ``bpf-<variant>`` folder
    is replaced as a whole. Returns the files written.
    """
    formats = [format] if isinstance(format, str) else list(format)
    for f in formats:
        if f not in FORMATS:
            raise UsageError(f"unknown format {f!r}; choose from {', '.join(FORMATS)}")
    v = _variant(variant)
    pin = _check_pin(pin if pin is not None else f"/sys/fs/bpf/tpc/{v.map_name}")
    validate_table(table, allow_wide_prefix=allow_wide_prefix)
    if "ovsdb" in formats:  # the rows name both routers by loopback
        for r in dict.fromkeys(r for e in table.entries for r in (e.source, e.destination)):
            table.plan.loopback(r)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".tpcstudy-export-", dir=root))
    written: List[str] = []
    try:
        for rel, data in _render(table, formats, v, pin):
            atomic_write_bytes(stage / rel, data)
            written.append(rel)
        dirs = sorted({rel.split("/")[0] for rel in written if "/" in rel})
        for d in dirs:
            if (root / d).exists():
                os.replace(root / d, stage / f".old-{d}")
            os.replace(stage / d, root / d)
        for rel in written:
            if "/" not in rel:
                os.replace(stage / rel, root / rel)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [root / rel for rel in written]


# --------------------------------------------------------------------------- inspect
def _find_plan(path: Path) -> Optional[AddressPlan]:
    for cand in (path.parent / "plan.json", path.parent.parent / "plan.json"):
        if cand.is_file():
            try:
                return read_plan(cand)
            except PlanError:
                return None
    return None


def _variant_of_size(size: int, where: str) -> Variant:
    for v in VARIANTS.values():
        if v.value_size == size:
            return v
    raise ExportError(f"{where}: a {size}-byte value matches no agent variant "
                      f"({', '.join(f'{v.name} {v.value_size}' for v in VARIANTS.values())})")


def _records_of_binary(data: bytes, where: str) -> Tuple[Dict[str, Any], List[Tuple[bytes, bytes]]]:
    if len(data) < BIN_HEADER.size:
        raise ExportError(f"{where}: too short for a tpcstudy binary path file")
    magic, version, code, size, count, mapname, loop = BIN_HEADER.unpack_from(data, 0)
    if magic != BIN_MAGIC:
        raise ExportError(f"{where}: not a tpcstudy binary path file (magic {magic!r})")
    if version != BIN_VERSION:
        raise ExportError(f"{where}: binary format version {version}, expected {BIN_VERSION}")
    v = next((x for x in VARIANTS.values() if x.code == code), None)
    if v is None or v.value_size != size:
        raise ExportError(f"{where}: variant code {code} with {size}-byte values is unknown")
    rec = KEY_SIZE + size
    if len(data) != BIN_HEADER.size + count * rec:
        raise ExportError(f"{where}: {len(data)} bytes, expected {BIN_HEADER.size + count * rec} "
                          f"for {count} records of {rec} bytes")
    out = [(data[o:o + KEY_SIZE], data[o + KEY_SIZE:o + rec])
           for o in range(BIN_HEADER.size, len(data), rec)]
    head = {"variant": v.name, "map": mapname.rstrip(b"\0").decode("ascii", "replace"),
            "source_loopback": str(ipaddress.IPv6Address(loop)) if any(loop) else None}
    return head, out


def _records_of_batch(text: str, where: str) -> Tuple[Dict[str, Any], List[Tuple[bytes, bytes]]]:
    out: List[Tuple[bytes, bytes]] = []
    pins = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tok = line.split()
        if tok[0] == "bpftool":
            tok = tok[1:]
        try:
            if tok[:3] != ["map", "update", "pinned"] or tok[4:6] != ["key", "hex"]:
                raise ValueError
            vi = tok.index("value")
            if tok[vi + 1] != "hex":
                raise ValueError
            key = bytes(int(x, 16) for x in tok[6:vi])
            val = bytes(int(x, 16) for x in tok[vi + 2:])
        except (ValueError, IndexError):
            raise ExportError(f"{where}:{lineno}: not a 'map update pinned PATH key hex .. value "
                              f"hex ..' command") from None
        if len(key) != KEY_SIZE:
            raise ExportError(f"{where}:{lineno}: key of {len(key)} bytes, expected {KEY_SIZE}")
        pins.add(tok[3])
        out.append((key, val))
    sizes = {len(v) for _, v in out}
    if len(sizes) > 1:
        raise ExportError(f"{where}: values of several sizes {sorted(sizes)}")
    v = _variant_of_size(sizes.pop(), where) if sizes else VARIANTS["n_rto"]
    return {"variant": v.name, "map": ", ".join(sorted(pins)) or v.map_name,
            "source_loopback": None}, out


def inspect(path: PathLike, *, plan: Any = None) -> Dict[str, Any]:
    """Decode a binary (``.bin``) or bpftool batch file back into a readable table.

    Router names come from ``plan`` (an :class:`AddressPlan` or plan file), else from the
    ``plan.json`` next to the file (or one folder up), else are left out.

    Returns
    -------
    dict
        ``{"file", "variant", "map", "source", "source_loopback", "entries": [{"key", "dest",
        "destination", "max_reward", "paths": [{"slot", "segments", "waypoints", "bw_mbps",
        "delay_ms"}], "weights", "last_srtt", "problems"}]}``.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if data.startswith(BIN_MAGIC):
        head, recs = _records_of_binary(data, str(p))
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ExportError(f"{p}: neither a tpcstudy binary path file nor a bpftool batch "
                              f"file") from None
        head, recs = _records_of_batch(text, str(p))
    the_plan = (_find_plan(p) if plan is None else
                plan if isinstance(plan, AddressPlan) else read_plan(plan))

    def name(addr: ipaddress.IPv6Address) -> Optional[str]:
        return the_plan.router_of(addr) if the_plan else None

    entries = []
    for key, val in recs:
        d = decode_value(val, head["variant"])
        problems = list(d.problems)
        if d.dest.packed[:KEY_SIZE] != key:
            problems.append(f"key {key.hex()} is not the first 64 bits of dest {d.dest}")
        entries.append({
            "key": key.hex(), "dest": str(d.dest),
            "destination": the_plan.router_of_key(key) if the_plan else None,
            "max_reward": d.max_reward,
            "paths": [{"slot": x.slot, "segments": [str(a) for a in x.segments],
                       "waypoints": [name(a) for a in x.segments],
                       "bw_mbps": x.bw_mbps, "delay_ms": x.delay_ms} for x in d.paths],
            "weights": d.weights, "last_srtt": d.last_srtt, "problems": problems})
    src_loop = head["source_loopback"]
    source = name(ipaddress.IPv6Address(src_loop)) if src_loop else None
    return {"file": str(p), **head, "source": source, "entries": entries}


def format_inspect(result: Dict[str, Any]) -> str:
    """The readable text :func:`inspect` results print as."""
    lines = [f"{result['file']}: variant {result['variant']}, map {result['map']}, "
             f"{len(result['entries'])} entries"
             + (f", source {result['source']} ({result['source_loopback']})"
                if result.get("source_loopback") else "")]
    for e in result["entries"]:
        dest = f" {e['destination']}" if e["destination"] else ""
        lines.append(f"key {e['key']}  dest {e['dest']}{dest}  max_reward {e['max_reward']}")
        for p in e["paths"]:
            hops = " -> ".join(f"{a} ({n})" if n else a for a, n in zip(p["segments"],
                                                                         p["waypoints"]))
            n = len(p["segments"])
            lines.append(f"  slot {p['slot']}: bw {p['bw_mbps']} Mbit/s, delay {p['delay_ms']} "
                         f"ms, {n} segment{'s' if n != 1 else ''}: {hops}")
        if e["weights"]:
            lines.append("  weights " + " ".join(f"{w:g}" for w in e["weights"])
                         + ("  last_srtt " + " ".join(str(x) for x in e["last_srtt"])
                            if e["last_srtt"] else ""))
        for prob in e["problems"]:
            lines.append(f"  problem: {prob}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- CLI
def cmd_export(args: argparse.Namespace) -> int:
    from .cli import _apply_mirror
    from .io import read_topologies

    if args.inspect:
        res = inspect(args.inspect, plan=args.plan)
        sys.stdout.write(json_text(res) if args.json else format_inspect(res))
        return 0
    if not args.topo or not args.out:
        raise UsageError("export needs --topo and --out (or --inspect FILE)")
    _apply_mirror(args)
    topos = list(read_topologies(args.topo, capacity=args.capacity, weight=args.weight))
    many = len(topos) > 1
    if many and (args.plan or args.pairs):
        raise UsageError("--plan and --pairs apply to one topology; --topo names "
                         f"{len(topos)}")
    formats = list(dict.fromkeys(args.format or ["json"]))
    for topo in topos:
        t = prune(topo)
        if len(t.edge_routers) < 2 and not args.pairs:
            msg = f"{topo.name}: fewer than 2 edge routers after pruning, nothing to export"
            if not many:
                raise ExportError(msg)
            print(f"tpcstudy: skipped {msg}", file=sys.stderr)
            continue
        table = path_table(t, k=args.k, paths=args.paths, plan=args.plan, pairs=args.pairs,
                           link_mbps=args.link_mbps, select=args.select)
        out = Path(args.out) / topo.name if many else Path(args.out)
        files = write_paths(table, out, format=formats, variant=args.variant, pin=args.pin,
                            allow_wide_prefix=args.allow_wide_prefix)
        n_paths = sum(len(e.paths) for e in table.entries)
        print(f"{topo.name}: {len(table.entries)} entries, {n_paths} paths, "
              f"{len(table.sources)} sources -> {out} ({len(files)} files: "
              f"{', '.join(formats)}{'; variant ' + args.variant if 'bpf' in formats else ''})")
    return 0


def register_cli(subparsers: Any, add_topology_options: Any) -> None:
    """Add ``tpcstudy export``."""
    p = subparsers.add_parser(
        "export", help="path tables for the TPC eBPF agent (SRH maps, OVSDB rows, JSON)",
        description="Write, per (source edge router, destination prefix), the default IGP path "
                    "and sps link-disjoint paths as the TPC agent reads them "
                    "(tpc-srh-map.md), or decode such a file with --inspect.")
    add_topology_options(p, topo_required=False)
    p.add_argument("--out", metavar="DIR", help="output folder (one subfolder per topology when "
                                                "--topo names several)")
    p.add_argument("--format", action="append", choices=FORMATS,
                   help="json (readable table, the default), bpf (bpftool batch + binary per "
                        "source router) or ovsdb (SRN Paths rows); repeat for several")
    p.add_argument("--variant", choices=list(VARIANTS), default="n_rto",
                   help="agent program family for bpf: n_rto (dest_map, 1556-byte values), "
                        "exp3_lowest_completion (short_dest_map, 1652), exp3_lowest_delay (1684)")
    p.add_argument("--pin", metavar="PATH",
                   help="pinned map path in batch files (default /sys/fs/bpf/tpc/<map name>)")
    p.add_argument("-k", "--k", type=int, default=DEFAULT_K,
                   help="segment limit of the sps paths (default 4, at most 9)")
    p.add_argument("--paths", type=int, default=DEFAULT_PATHS,
                   help="paths per destination, default path included (default 5, at most 8)")
    p.add_argument("--select", choices=SELECT_RULES, default="sps",
                   help="backups after the default path: sps link-disjoint paths (default), or "
                        "maxflow: the sr-paths the max-flow LP over the pairs uses most, then sps")
    p.add_argument("--plan", metavar="FILE.json",
                   help="addressing plan {loopbacks: {router: addr}, prefixes: {router: "
                        "[prefix]}} (default: hashed fc00::/7 plan; written as plan.json); with "
                        "--inspect, the plan that names routers")
    p.add_argument("--pairs", metavar="FILE",
                   help="only these pairs: 'source,destination' router names per line")
    p.add_argument("--allow-wide-prefix", action="store_true",
                   help="accept destination prefixes shorter than /64 (the map key covers only "
                        "their first /64)")
    p.add_argument("--link-mbps", type=float, default=1000.0,
                   help="Mbit/s per link when capacities are uniform (default 1000; 0 writes 0)")
    p.add_argument("--inspect", metavar="FILE",
                   help="decode a .bin or bpftool batch file and print it (no export)")
    p.add_argument("--json", action="store_true", help="with --inspect: print JSON")
    p.set_defaults(func=cmd_export)

"""Reading an exported file back (``tpcstudy export --inspect``): a ``.bin`` or bpftool batch
file decoded into a readable table, router names taken from the plan."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ..errors import ExportError, PlanError
from ..io import read_bounded
from .addressing import AddressPlan, read_plan
from .bpf import BIN_MAGIC, MAX_TABLE_FILE, records_of_batch, records_of_binary
from .layout import KEY_SIZE, VARIANTS, decode_value

#: Entries of the agent's destination map (docs/srh-map.md §1).
MAP_ENTRIES = 1024

__all__ = ["inspect_file", "format_inspection"]

PathLike = Union[str, "os.PathLike[str]"]


def _find_plan(path: Path) -> Optional[AddressPlan]:
    for cand in (path.parent / "plan.json", path.parent.parent / "plan.json"):
        if cand.is_file():
            try:
                return read_plan(cand)
            except PlanError:
                return None
    return None


def _check_plan(plan: AddressPlan, path: Path, head: Dict[str, Any], recs: Any) -> None:
    """Every address of the file must be in the plan, else the plan is stale (another export's,
    another topology's) and would name routers wrongly."""
    for key, val in recs:
        d = decode_value(val, head["variant"])
        if plan.router_of_key(key) is None:
            bad: Optional[str] = f"destination key {key.hex()}"
        else:
            bad = next((f"segment {a}" for x in d.paths for a in x.segments
                        if plan.router_of(a) is None), None)
        if bad:
            raise ExportError(f"{path}: the plan {plan.source} does not match this file: its "
                              f"{bad} is in no router's addresses (a stale plan.json, or another "
                              "export's?); pass the right one with --plan")
    src = head.get("source_loopback")
    if src and plan.router_of(ipaddress.IPv6Address(src)) is None:
        raise ExportError(f"{path}: the plan {plan.source} does not match this file: its source "
                          f"loopback {src} is in no router's addresses; pass the right one with "
                          "--plan")


def inspect_file(path: PathLike, *, plan: Any = None) -> Dict[str, Any]:
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
    # a regular file of at most the largest valid map file (never /dev/zero, a FIFO, a link)
    data = read_bounded(p, MAX_TABLE_FILE)
    if not data:
        raise ExportError(f"{p}: an empty file (neither a binary path file nor a batch file)")
    if data.startswith(BIN_MAGIC):
        head, recs = records_of_binary(data, str(p))
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ExportError(f"{p}: neither a tpcstudy binary path file nor a bpftool batch "
                              f"file") from None
        head, recs = records_of_batch(text, str(p))
    the_plan = (_find_plan(p) if plan is None else
                plan if isinstance(plan, AddressPlan) else read_plan(plan))

    def name(addr: ipaddress.IPv6Address) -> Optional[str]:
        return the_plan.router_of(addr) if the_plan else None

    if the_plan is not None:  # a plan that does not know the file's addresses names nothing right
        _check_plan(the_plan, p, head, recs)
    entries = []
    seen: Dict[bytes, int] = {}
    for key, val in recs:
        d = decode_value(val, head["variant"])
        problems = list(d.problems)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:  # the map keeps the last value only
            problems.append(f"key {key.hex()} appears more than once: the map keeps the last")
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
    return {"file": str(p), **head, "source": source, "entries": entries,
            "problems": _file_problems(head, len(recs))}


def _file_problems(head: Dict[str, Any], n: int) -> List[str]:
    """What makes the whole file unusable by the agent: more entries than its map holds, a map
    name (pin path) that is not the variant's map."""
    out = []
    want = VARIANTS[head["variant"]]
    if n > MAP_ENTRIES:
        out.append(f"{n} entries: the agent's {want.map_name} holds {MAP_ENTRIES}")
    for pin in str(head.get("map", "")).split(", "):
        if pin and os.path.basename(pin) != want.map_name:
            out.append(f"map {pin[:80]!r} is not the {want.name} layout's {want.map_name!r} "
                       f"(the agent reads only that map)")
    return out


def format_inspection(result: Dict[str, Any]) -> str:
    """The readable text :func:`inspect_file` results print as."""
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
    for prob in result.get("problems", []):
        lines.append(f"problem: {prob}")
    return "\n".join(lines) + "\n"

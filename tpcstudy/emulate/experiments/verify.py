"""Does an exported path table route? ``tpcstudy emulate verify --topo T --table DIR``.

``DIR`` is a folder written by ``tpcstudy export`` (``plan.json``, and ``paths.json`` and/or
``bpf-<variant>/``). The network is built with the table's own plan, so the table applies
unchanged. Two checks:

**Probes** (:func:`probe_table`). For every entry (source router, destination prefix) and every
path slot, ``probes`` UDP datagrams leave the source router's host address (its loopback if it
has no prefix) with the slot's SRH, exactly the bytes the agent would hand the kernel (from the
bpftool batch file's value when the table has one, else encoded from ``paths.json``; when both
exist they must agree), each from its own source port so ECMP inside segments spreads them, to
the destination prefix's host address (``::1`` of its first /64). A path passes when every
datagram arrives and the per-link packet counters (``tx_packets`` of every veth end, read in
every namespace) moved only on arcs of its segments' ECMP DAGs (source -> w1 -> ... -> egress).
The network has no other traffic (no neighbour discovery, no router solicitations, no MLD):
paths whose DAGs share no arc are probed together and split up again when something is off.

**Maps** (:func:`check_maps`). Each ``bpf-<variant>/<router>.batch`` is loaded with
``bpftool batch file`` into a real kernel hash map of the agent's shape (8-byte keys, the
variant's value size: 1556/1652/1684 bytes, 1024 entries), created at the batch file's own pin
path on a private bpffs (a mount namespace of its own, so nothing leaks onto the host's
``/sys/fs/bpf`` and the maps vanish with it), dumped back with ``bpftool -j map dump`` and
compared byte for byte with the batch file and the binary ``.bin`` file.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import select
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set, Tuple

from .. import AddressPlan, Topology, read_plan
from ..errors import EmulationError, UsageError
from ..export import KEY_SIZE, VARIANTS, decode_value
from ..export.bpf import records_of_batch, records_of_binary
from ..paths import dag_arcs
from . import netns as _ns
from .lifecycle import Emulation
from .spec import host_address
from .srh import IPV6_RTHDR, slot_srh, srh_bytes, srh_segments

__all__ = ["TablePath", "read_table", "probe_table", "check_maps", "MAP_ENTRIES"]

#: Entries of the agent's maps.
MAP_ENTRIES = 1024
PROBE_PORT = 33434
#: Paths probed together at most (their DAGs pairwise disjoint).
BATCH = 64


@dataclasses.dataclass
class TablePath:
    """One path of one entry, ready to probe."""

    index: int
    source: str
    destination: str
    prefix: ipaddress.IPv6Network
    slot: int
    segments: List[ipaddress.IPv6Address]
    waypoints: List[str]
    srh: bytes
    arcs: Set[int] = dataclasses.field(default_factory=set)


# --------------------------------------------------------------------------- reading
def _batch_records(path: Path) -> Tuple[Set[str], List[Tuple[bytes, bytes]]]:
    head, recs = records_of_batch(path.read_text(encoding="utf-8"), str(path))
    return set(head["map"].split(", ")), recs


def _bpf_dirs(table: Path) -> List[Path]:
    return sorted(d for d in table.glob("bpf-*") if (d / "index.json").is_file())


def read_table(table: Path, topo: Topology) -> Tuple[AddressPlan, List[TablePath], List[str]]:
    """The table's plan, every path to probe, and problems found while reading.

    SRHs come from the first ``bpf-<variant>`` folder when there is one (the bytes the agent
    loads), else from ``paths.json``.
    """
    table = Path(table)
    if not (table / "plan.json").is_file():
        raise UsageError(f"{table}: no plan.json (not a folder written by 'tpcstudy export')")
    plan = read_plan(table / "plan.json")
    plan.check(topo)
    problems: List[str] = []
    from_json: Dict[Tuple[str, str], List[List[ipaddress.IPv6Address]]] = {}
    dest_of: Dict[Tuple[str, str], str] = {}
    pj = table / "paths.json"
    if pj.is_file():
        try:
            doc = json.loads(pj.read_text())
            for e in doc["entries"]:
                key = (e["source"], str(ipaddress.IPv6Network(e["prefix"])))
                from_json[key] = [[ipaddress.IPv6Address(a) for a in p["segments"]]
                                  for p in e["paths"]]
                dest_of[key] = e["destination"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{pj}: not a tpcstudy path table ({exc})") from None
    from_bpf: Dict[Tuple[str, str], List[bytes]] = {}
    bdirs = _bpf_dirs(table)
    if bdirs:
        d = bdirs[0]
        index = json.loads((d / "index.json").read_text())
        variant = index["variant"]
        for src, info in index["sources"].items():
            _, recs = _batch_records(d / info["batch"])
            for mkey, value in recs:
                dec = decode_value(value, variant)
                for prob in dec.problems:
                    problems.append(f"{d.name}/{info['batch']}: key {mkey.hex()}: {prob}")
                prefix = next((str(n) for nets in plan.prefixes.values() for n in nets
                               if n.network_address.packed[:8] == mkey), None)
                if prefix is None:
                    problems.append(f"{d.name}/{info['batch']}: key {mkey.hex()} matches no "
                                    f"prefix of the plan")
                    continue
                from_bpf[(src, prefix)] = [slot_srh(value, p.slot) for p in dec.paths]
                dest_of.setdefault((src, prefix), plan.router_of_key(mkey) or "")
    if not from_json and not from_bpf:
        raise UsageError(f"{table}: neither paths.json nor a bpf-<variant>/index.json to verify")
    keys = list(dict.fromkeys([*from_json, *from_bpf]))
    paths: List[TablePath] = []
    for src, prefix in keys:
        if src not in topo.names:
            raise UsageError(f"{table}: source router {src!r} is not in topology {topo.name!r}")
        srhs = from_bpf.get((src, prefix))
        segs_json = from_json.get((src, prefix))
        if srhs is not None and segs_json is not None:
            if [srh_segments(b) for b in srhs] != segs_json:
                problems.append(f"{src} -> {prefix}: the bpf value and paths.json differ")
        if srhs is None:
            srhs = [srh_bytes(s) for s in segs_json or []]
        for slot, srh in enumerate(srhs):
            segs = srh_segments(srh)
            wps = [plan.router_of(a) or "" for a in segs]
            tp = TablePath(len(paths), src, dest_of.get((src, prefix), ""),
                           ipaddress.IPv6Network(prefix), slot, segs, wps, srh)
            hops = [src] + wps
            if "" in wps:
                problems.append(f"{src} -> {prefix} slot {slot}: segment "
                                f"{segs[wps.index('')]} is no router's loopback")
            else:
                for a, b in zip(hops[:-1], hops[1:]):
                    if a != b:
                        tp.arcs.update(int(x) for x in dag_arcs(topo, a, b).tolist())
            paths.append(tp)
    return plan, paths, problems


# --------------------------------------------------------------------------- probing
def _batches(paths: Sequence[TablePath]) -> List[List[TablePath]]:
    out: List[Tuple[Set[int], List[TablePath]]] = []
    for p in paths:
        for used, members in out:
            if len(members) < BATCH and not (used & p.arcs):
                used |= p.arcs
                members.append(p)
                break
        else:
            out.append((set(p.arcs), [p]))
    return [m for _, m in out]


def _deltas(before: Dict[int, int], after: Dict[int, int]) -> Dict[int, int]:
    return {a: after[a] - before[a] for a in after if after[a] != before[a]}


def probe_table(emu: Emulation, paths: Sequence[TablePath], *, probes: int = 8,
                timeout: float = 2.0, log: Any = None) -> List[Dict[str, Any]]:
    """Probe every path (module docstring); one result dict per path."""
    if probes < 1:
        raise UsageError(f"--probes must be >= 1, got {probes}")
    spec = emu.spec
    log = log or (lambda m: None)
    # a receiving socket per destination host address
    receivers: Dict[str, socket.socket] = {}
    for p in paths:
        host = str(host_address(p.prefix))
        if host in receivers:
            continue
        owner = spec.plan.router_of_key(p.prefix.network_address.packed[:8])
        if owner is None:
            raise EmulationError(f"prefix {p.prefix} is in no router's plan")
        with _ns.enter(spec.router(owner).netns):
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.bind((host, PROBE_PORT))
        s.setblocking(False)
        receivers[host] = s
    waited = emu.wait_quiet()
    log(f"network quiet after {waited:.2f} s; probing {len(paths)} paths, {probes} datagrams each")
    results: Dict[int, Dict[str, Any]] = {}

    def run(batch: List[TablePath]) -> Dict[int, int]:
        socks: List[Tuple[socket.socket, bytes, Tuple[str, int]]] = []
        for p in batch:
            src = str(spec.host(p.source))
            dst = (str(host_address(p.prefix)), PROBE_PORT)
            with _ns.enter(spec.router(p.source).netns):
                for k in range(probes):
                    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                    s.bind((src, 0))
                    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, p.srh)
                    socks.append((s, struct.pack(">IH", p.index, k), dst))
        got: Dict[int, Set[int]] = {p.index: set() for p in batch}
        before = emu.tx_packets()
        try:
            for s, payload, dst in socks:
                s.sendto(payload, dst)
        finally:
            for s, _, _ in socks:
                s.close()
        want = probes * len(batch)
        deadline = time.monotonic() + timeout
        fds = {s.fileno(): s for s in receivers.values()}
        while sum(len(v) for v in got.values()) < want and time.monotonic() < deadline:
            ready, _, _ = select.select(list(fds), [], [], 0.05)
            for fd in ready:
                while True:
                    try:
                        data = fds[fd].recv(64)
                    except BlockingIOError:
                        break
                    if len(data) == 6:
                        i, k = struct.unpack(">IH", data)
                        if i in got:
                            got[i].add(k)
        time.sleep(0.02)
        delta = _deltas(before, emu.tx_packets())
        union = set().union(*(p.arcs for p in batch))
        stray = {a: n for a, n in delta.items() if a not in union}
        for p in batch:
            crossed = sorted(a for a in delta if a in p.arcs)
            results[p.index] = {"delivered": len(got[p.index]), "crossed": crossed,
                                "stray": stray if len(batch) == 1 else {}}
        return stray

    for batch in _batches(paths):
        stray = run(batch)
        if stray and len(batch) > 1:  # find out whose packets strayed
            for p in batch:
                run([p])
    for s in receivers.values():
        s.close()
    out = []
    topo = spec.topology
    for p in paths:
        r = results[p.index]
        stray = r["stray"]
        ok = r["delivered"] == probes and not stray
        out.append({
            "source": p.source, "destination": p.destination, "prefix": str(p.prefix),
            "slot": p.slot, "waypoints": " ".join(p.waypoints), "segments": len(p.segments),
            "probes": probes, "delivered": r["delivered"], "dag_arcs": len(p.arcs),
            "arcs_crossed": len(r["crossed"]),
            "off_dag_arcs": " ".join(f"{topo.names[topo.arc_src[a]]}>{topo.names[topo.arc_dst[a]]}"
                                     for a in sorted(stray)),
            "status": "ok" if ok else "failed"})
    return out


# --------------------------------------------------------------------------- maps
def _dump_bytes(items: List[Dict[str, Any]]) -> Dict[bytes, bytes]:
    def conv(v: Any) -> bytes:
        return bytes(int(x, 16) for x in v)

    return {conv(it["key"]): conv(it["value"]) for it in items}


def check_maps(table: Path, *, log: Any = None) -> List[Dict[str, Any]]:
    """Load every bpf batch file of ``table`` into a real map and compare (module docstring)."""
    log = log or (lambda m: None)
    out: List[Dict[str, Any]] = []
    dirs = _bpf_dirs(Path(table))
    for d in dirs:
        index = json.loads((d / "index.json").read_text())
        variant = VARIANTS[index["variant"]]
        for src, info in index["sources"].items():
            batch = d / info["batch"]
            row: Dict[str, Any] = {"variant": variant.name, "source": src, "map": variant.map_name,
                                   "value_size": variant.value_size, "entries": 0,
                                   "loaded": False, "identical": False, "error": ""}
            try:
                pins, recs = _batch_records(batch)
                expected = dict(recs)
                row["entries"] = len(expected)
                if len(pins) != 1:
                    raise UsageError(f"{batch}: {len(pins)} pin paths, expected one")
                pin = pins.pop()
                if not pin.startswith("/sys/fs/bpf/") or any(c in pin for c in " '\"\\$`;"):
                    raise UsageError(f"{batch}: pin path {pin!r} is not a plain path under "
                                     f"/sys/fs/bpf/")
                binf = d / info.get("binary", "")
                if info.get("binary") and binf.is_file():
                    if dict(records_of_binary(binf.read_bytes(), str(binf))[1]) != expected:
                        row["error"] = f"{binf.name} differs from {batch.name}"
                with tempfile.TemporaryDirectory(prefix="tpcstudy-maps-") as tmp:
                    dump = Path(tmp) / "dump.json"
                    script = (
                        "set -e; mount -t bpf bpf /sys/fs/bpf; "
                        f"mkdir -p {os.path.dirname(pin)}; "
                        f"bpftool map create {pin} type hash key {KEY_SIZE} value "
                        f"{variant.value_size} entries {MAP_ENTRIES} name {variant.map_name}; "
                        f"bpftool batch file {batch.resolve()} >/dev/null; "
                        f"bpftool -j map dump pinned {pin} > {dump}")
                    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh",
                                        "-c", script], capture_output=True, text=True, timeout=300)
                    if p.returncode != 0:
                        raise EmulationError(f"bpftool: {(p.stderr or p.stdout).strip()[-300:]}")
                    got = _dump_bytes(json.loads(dump.read_text()))
                row["loaded"] = True
                row["identical"] = got == expected and not row["error"]
                if got != expected and not row["error"]:
                    bad = sorted(set(got) ^ set(expected)) or [k for k in expected
                                                               if got.get(k) != expected[k]]
                    row["error"] = f"dump differs from the batch file (key {bad[0].hex()})"
            except (UsageError, EmulationError, OSError, ValueError) as exc:
                row["error"] = str(exc)
            log(f"map {variant.name}/{src}: {row['entries']} entries, "
                f"{'loaded' if row['loaded'] else 'NOT loaded'}, "
                f"{'identical' if row['identical'] else 'DIFFERENT: ' + row['error']}")
            out.append(row)
    return out


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
compared byte for byte with the batch file and the binary ``.bin`` file. The table is data from
someone else, read as root: each file is read once, bounded, without following a link; the
batch file is copied into a private folder, checked there (every line a ``map update pinned``
of the one pin path, a plain path under ``/sys/fs/bpf/``) and that copy is what bpftool loads;
no shell sees any of it.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import select
import socket
import struct
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from ...errors import EmulationError, HostAgentError, PlanError, UsageError
from ...export import KEY_SIZE, VARIANTS, decode_value
from ...export.addressing import AddressPlan, read_plan
from ...export.bpf import (
    MAX_TABLE_FILE,
    copy_batch,
    read_batch,
    read_index,
    read_json,
    records_of_binary,
)
from ...export.layout import srh_bytes, srh_segments
from ...hostagent.bpffs import run_private
from ...io import read_bounded, read_topology
from ...paths import dag_arcs
from ...study.kinds import KINDS
from ...study.tasks import Task
from ...topology import Topology, prune
from ..network import kernel
from ..network.lifecycle import Emulation
from ..network.spec import host_address
from ..network.srh import IPV6_RTHDR, slot_srh
from .harness import Experiment, Log, Row, Unit

__all__ = ["TablePath", "read_table", "probe_table", "check_maps", "MAP_ENTRIES", "Verify",
           "KIND", "COLUMNS", "KEY", "MAX_PROBES"]

#: Results kind: one row per path probed and per map loaded.
KIND = "emulate-verify"
COLUMNS = list(KINDS[KIND].columns)
KEY = list(KINDS[KIND].key)
#: Most datagrams per path (each is a socket open at once in the source's namespace).
MAX_PROBES = 64

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
    try:
        plan = read_plan(table / "plan.json")
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    plan.check(topo)
    problems: List[str] = []
    from_json: Dict[Tuple[str, str], List[List[ipaddress.IPv6Address]]] = {}
    dest_of: Dict[Tuple[str, str], str] = {}
    pj = table / "paths.json"
    if pj.is_file():
        try:
            doc = read_json(pj)
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
        variant, sources = read_index(d)
        for src, info in sources.items():
            _, recs = read_batch(d / info["batch"])
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
    if not 1 <= probes <= MAX_PROBES:
        raise UsageError(f"--probes {probes}: 1 to {MAX_PROBES} datagrams per path")
    spec = emu.spec
    log = log or (lambda m: None)
    switch = kernel.NetnsSwitch()
    receivers: Dict[str, socket.socket] = {}  # a receiving socket per destination address
    try:
        for p in paths:
            host = str(host_address(p.prefix))
            if host in receivers:
                continue
            owner = spec.plan.router_of_key(p.prefix.network_address.packed[:8])
            if owner is None:
                raise EmulationError(f"prefix {p.prefix} is in no router's plan")
            s = switch.socket_in(spec.router(owner).netns, socket.AF_INET6, socket.SOCK_DGRAM)
            receivers[host] = s
            s.bind((host, PROBE_PORT))
            s.setblocking(False)
        return _probe(emu, paths, probes, timeout, receivers, switch, log)
    finally:
        for s in receivers.values():
            s.close()
        switch.close()


def _probe(emu: Emulation, paths: Sequence[TablePath], probes: int, timeout: float,
           receivers: Dict[str, socket.socket], switch: kernel.NetnsSwitch, log: Any
           ) -> List[Dict[str, Any]]:
    spec = emu.spec
    waited = emu.wait_quiet()
    log(f"network quiet after {waited:.2f} s; probing {len(paths)} paths, {probes} datagrams each")
    results: Dict[int, Dict[str, Any]] = {}

    def run(batch: List[TablePath]) -> Dict[int, int]:
        got: Dict[int, Set[int]] = {p.index: set() for p in batch}
        before = emu.tx_packets()
        for p in batch:  # one datagram at a time: a socket each (its own port), closed at once
            src = str(spec.host(p.source))
            dst = (str(host_address(p.prefix)), PROBE_PORT)
            for k in range(probes):
                s = switch.socket_in(spec.router(p.source).netns, socket.AF_INET6,
                                     socket.SOCK_DGRAM)
                try:
                    s.bind((src, 0))
                    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, p.srh)
                    s.sendto(struct.pack(">IH", p.index, k), dst)
                finally:
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
    out = []
    topo = spec.topology
    for p in paths:
        r = results[p.index]
        stray = r["stray"]
        ok = r["delivered"] == probes and not stray
        out.append({
            "check": "path", "source": p.source, "destination": p.destination, "prefix": str(p.prefix),
            "slot": p.slot, "waypoints": " ".join(p.waypoints), "segments": len(p.segments),
            "probes": probes, "delivered": r["delivered"], "dag_arcs": len(p.arcs),
            "arcs_crossed": len(r["crossed"]),
            "off_dag_arcs": " ".join(f"{topo.names[topo.arc_src[a]]}>{topo.names[topo.arc_dst[a]]}"
                                     for a in sorted(stray)),
            "status": "ok" if ok else "failed"})
    return out


# --------------------------------------------------------------------------- through the BPF agent
#: Bytes a TCP probe writes (a few full segments).
TCP_PROBE_BYTES = 8000


def probe_table_bpf(emu: Emulation, paths: Sequence[TablePath], table: Path, *,
                    timeout: float = 3.0, log: Any = None) -> List[Dict[str, Any]]:
    """Probe every path with plain TCP through the BPF host agent loaded from the table's own
    batch files on every source router (sockops sees TCP only): per path the agent is set to
    that slot (``slot:N``), one connection from the source's host address in its cgroup sends
    :data:`TCP_PROBE_BYTES` to the destination's; it passes when every byte arrives and the
    link counters moved only on arcs of the slot's segment DAGs (the data) and of the plain
    route back (the acknowledgements, which carry no SRH), with at least one of the slot's."""
    from ...hostagent.loader import reconfigure, status
    from ...hostagent.maps import SlotPolicy
    from ..network.hostagent import install_agents

    spec = emu.spec
    topo = spec.topology
    log = log or (lambda m: None)
    sources = sorted({p.source for p in paths})
    agents = install_agents(emu, table, policy=SlotPolicy("first"), routers=sources)
    emu.agents.update(agents)
    switch = kernel.NetnsSwitch()
    out = []
    try:
        emu.wait_quiet()
        log(f"BPF agents on {len(agents)} routers; probing {len(paths)} paths with TCP")
        for p in paths:
            reconfigure(agents[p.source], policy=SlotPolicy("slot", slot=p.slot))
            owner = spec.plan.router_of_key(p.prefix.network_address.packed[:8])
            if owner is None:
                raise EmulationError(f"prefix {p.prefix} is in no router's plan")
            back = {int(a) for a in dag_arcs(topo, owner, p.source).tolist()}
            before = emu.tx_packets()
            before_stats = status(agents[p.source])["counters"]
            got = _tcp_probe(switch, spec.router(owner).netns, str(host_address(p.prefix)),
                             spec.router(p.source).netns, str(spec.host(p.source)),
                             str(emu.cgroup(p.source)), timeout)
            time.sleep(0.05)  # the last ACK on its way
            delta = _deltas(before, emu.tx_packets())
            after_stats = status(agents[p.source])["counters"]
            crossed = sorted(a for a in delta if a in p.arcs and a not in back)
            stray = {a: n for a, n in delta.items() if a not in p.arcs and a not in back}
            inserted = after_stats["inserted"] - before_stats["inserted"]
            ok = got == TCP_PROBE_BYTES and not stray and (crossed or p.arcs <= back) \
                and inserted > 0
            out.append({
                "check": "path", "source": p.source, "destination": p.destination,
                "prefix": str(p.prefix), "slot": p.slot, "waypoints": " ".join(p.waypoints),
                "segments": len(p.segments), "probes": 1, "delivered": int(got == TCP_PROBE_BYTES),
                "dag_arcs": len(p.arcs), "arcs_crossed": len(crossed),
                "off_dag_arcs": " ".join(f"{topo.names[topo.arc_src[a]]}>"
                                         f"{topo.names[topo.arc_dst[a]]}" for a in sorted(stray)),
                "status": "ok" if ok else "failed",
                "error": "" if ok else f"{got} of {TCP_PROBE_BYTES} bytes, {inserted} packets "
                                       f"given the SRH"})
    finally:
        switch.leave_cgroup()
        switch.close()
    return out


def _tcp_probe(switch: kernel.NetnsSwitch, dst_ns: str, dst: str, src_ns: str, src: str,
               cgroup: str, timeout: float) -> int:
    """Bytes one TCP connection from ``src`` (created in ``cgroup``) delivered to ``dst``."""
    ls = switch.socket_in(dst_ns, socket.AF_INET6, socket.SOCK_STREAM)
    try:
        ls.bind((dst, 0))
        ls.listen(1)
        ls.settimeout(timeout)
        port = ls.getsockname()[1]
        c = switch.socket_in(src_ns, socket.AF_INET6, socket.SOCK_STREAM, cgroup=cgroup)
        switch.leave_cgroup()
        try:
            c.settimeout(timeout)
            c.bind((src, 0))
            c.connect((dst, port))
            conn, _ = ls.accept()
            with conn:
                conn.settimeout(timeout)
                c.sendall(bytes(TCP_PROBE_BYTES))
                c.shutdown(socket.SHUT_WR)
                got = 0
                while True:
                    b = conn.recv(65536)
                    if not b:
                        break
                    got += len(b)
                return got
        except OSError:
            return 0
        finally:
            c.close()
    finally:
        ls.close()


# --------------------------------------------------------------------------- maps
def _dump_bytes(items: Any) -> Dict[bytes, bytes]:
    def conv(v: Any) -> bytes:
        return bytes(int(x, 16) for x in v)

    return {conv(it["key"]): conv(it["value"]) for it in items}


def _load_copy(batch: Path, variant: Any, tmp: Path) -> Tuple[Dict[bytes, bytes], Dict[bytes, bytes]]:
    """Copy ``batch`` into ``tmp``, check the copy, load it into a fresh map at its pin path in
    a private bpffs and dump it back: ``(expected, got)``."""
    copy, pin, recs = copy_batch(batch, tmp)
    expected = dict(recs)
    dump = run_private([
        ["mkdir", os.path.dirname(pin)],
        ["bpftool", "map", "create", pin, "type", "hash", "key", str(KEY_SIZE), "value",
         str(variant.value_size), "entries", str(MAP_ENTRIES), "name", variant.map_name],
        ["bpftool", "batch", "file", str(copy)],
        ["bpftool", "-j", "map", "dump", "pinned", pin]])[-1]
    try:
        got = _dump_bytes(json.loads(dump))
    except (ValueError, KeyError, TypeError) as exc:
        raise EmulationError(f"bpftool map dump gave no map ({exc})") from None
    return expected, got


def check_maps(table: Path, *, log: Any = None) -> List[Dict[str, Any]]:
    """Load every bpf batch file of ``table`` into a real map and compare (module docstring)."""
    log = log or (lambda m: None)
    out: List[Dict[str, Any]] = []
    for d in _bpf_dirs(Path(table)):
        name, sources = read_index(d)
        variant = VARIANTS[name]
        for src, info in sources.items():
            batch = d / info["batch"]
            row: Dict[str, Any] = {"check": "map", "variant": variant.name, "source": src,
                                   "map": variant.map_name, "value_size": variant.value_size,
                                   "entries": 0, "loaded": False, "identical": False,
                                   "error": ""}
            try:
                with tempfile.TemporaryDirectory(prefix="tpcstudy-maps-") as tmp:
                    expected, got = _load_copy(batch, variant, Path(tmp))
                row["entries"] = len(expected)
                if info.get("binary"):
                    binf = d / info["binary"]
                    binrecs = records_of_binary(read_bounded(binf, MAX_TABLE_FILE),
                                                str(binf))[1]
                    if dict(binrecs) != expected:
                        row["error"] = f"{binf.name} differs from {batch.name}"
                row["loaded"] = True
                row["identical"] = got == expected and not row["error"]
                if got != expected and not row["error"]:
                    bad = sorted(set(got) ^ set(expected)) or [k for k in expected
                                                               if got.get(k) != expected[k]]
                    row["error"] = f"dump differs from the batch file (key {bad[0].hex()})"
            except (UsageError, EmulationError, HostAgentError, OSError, ValueError) as exc:
                row["error"] = str(exc)
            row["status"] = "ok" if row["identical"] else "failed"
            log(f"map {variant.name}/{src}: {row['entries']} entries, "
                f"{'loaded' if row['loaded'] else 'NOT loaded'}, "
                f"{'identical' if row['identical'] else 'DIFFERENT: ' + row['error']}")
            out.append(row)
    return out


# --------------------------------------------------------------------------- the experiment
class Verify(Experiment):
    """Does an exported table route, do its maps load (module docstring): one network (the
    topology with the table's plan), two tasks: the probes and the maps."""

    kind = KIND
    columns = COLUMNS
    key = KEY

    def __init__(self, *, topo: str, table: str, capacity: str = "uniform",
                 weight: str = "hop", probes: int = 8, agent: str = "socket") -> None:
        if agent not in ("socket", "bpf"):
            raise UsageError(f"--agent {agent!r}: socket or bpf")
        self.agent = agent
        if not 1 <= probes <= MAX_PROBES:
            raise UsageError(f"--probes {probes}: 1 to {MAX_PROBES} datagrams per path")
        self.topo, self.table_dir, self.capacity, self.weight = topo, table, capacity, weight
        self.probes = int(probes)
        self.topology = prune(read_topology(topo, capacity=capacity, weight=weight))
        self.plan, self.paths, self.problems = read_table(Path(table), self.topology)

    def config(self) -> Dict[str, Any]:
        return {"topo": self.topo, "table": str(self.table_dir), "capacity": self.capacity,
                "weight": self.weight, "probes": self.probes, "problems": self.problems,
                "agent": self.agent}

    def units(self, log: Log) -> Iterator[Unit]:
        name = self.topology.name
        yield Unit(name, self.topology, self.plan,
                   [Task({"scenario": name, "check": "path"}),
                    Task({"scenario": name, "check": "map"})])

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        if task.key["check"] == "map":
            return check_maps(Path(self.table_dir), log=log)
        if self.agent == "bpf":
            return probe_table_bpf(emu, self.paths, Path(self.table_dir), log=log)
        return probe_table(emu, self.paths, probes=self.probes, log=log)

    def table(self, rows: Sequence[Row]) -> str:
        how = (f"one TCP connection of {TCP_PROBE_BYTES} bytes through the BPF agent"
               if self.agent == "bpf" else f"{self.probes} probes")
        return format_verify(rows, self.topology.name, how, self.problems)


def _yes(x: Any) -> bool:
    """A boolean cell: ``True`` in memory, ``true`` read back from ``results.csv``."""
    return x is True or str(x).lower() == "true"


def format_verify(rows: Sequence[Row], name: str, probes: Any,
                  problems: Optional[Sequence[str]] = None) -> str:
    """What ``emulate verify`` prints: the table's problems, the first failed paths, and one
    line of totals."""
    paths = [r for r in rows if r.get("check") == "path"]
    maps = [r for r in rows if r.get("check") == "map"]
    lines = [f"problem: {p}" for p in problems or []]
    entries: Dict[Tuple[str, str], List[Row]] = {}
    for r in paths:
        entries.setdefault((str(r["source"]), str(r["prefix"])), []).append(r)
    good = [k for k, rs in entries.items() if all(r["status"] == "ok" for r in rs)]
    bad = [r for r in paths if r["status"] != "ok"]
    for r in bad[:20]:
        lines.append(f"FAILED {r['source']} -> {r['destination']} ({r['prefix']}) slot "
                     f"{r['slot']} [{r['waypoints']}]: {r['delivered']}/{r['probes']} delivered"
                     + (f", off-DAG links {r['off_dag_arcs']}" if r.get("off_dag_arcs") else ""))
    loaded = sum(_yes(m.get("loaded")) for m in maps)
    same = sum(_yes(m.get("identical")) for m in maps)
    lines.append(f"{name}: entries delivered on model links: {len(good)}/{len(entries)} "
                 f"({len(paths) - len(bad)}/{len(paths)} paths, {probes} each); bpf maps "
                 f"loaded {loaded}/{len(maps)}, byte-identical {same}/{len(maps)}")
    return "\n".join(lines)


def summary_line(rows: Sequence[Row]) -> str:
    """One line of key numbers (``tpcstudy plot``)."""
    paths = [r for r in rows if r.get("check") == "path"]
    maps = [r for r in rows if r.get("check") == "map"]
    ok = sum(r.get("status") == "ok" for r in paths)
    same = sum(_yes(m.get("identical")) for m in maps)
    return f"{ok}/{len(paths)} paths delivered on their links; {same}/{len(maps)} maps identical"

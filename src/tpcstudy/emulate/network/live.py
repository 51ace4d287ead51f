"""A live emulated network for the user's own programs: brought up, used, watched, taken down.

:func:`up` builds a topology's network (the same builder and cleanup record as every run), gives
every router a cgroup v2, optionally installs an exported table on the hosts, and leaves it up:
its run record says ``kind: up`` with a name and the routers (namespaces, addresses, interfaces,
rates), so that :func:`exec_argv` (any program as a host's process), :func:`sample` /
:func:`rates` (per-link counters) and :func:`down` find it again from another process.
``tpcstudy emulate clean`` leaves such a network alone unless it is named.

Tables go on the hosts two ways:

- ``route``: each source router gets, per destination prefix of its table, a static SRv6 route
  of the chosen slot (``ip route replace PREFIX encap seg6 mode inline segs W1,..,Wn``): every
  program's packets to that prefix carry the slot's SRH, set by the kernel;
- ``bpf``: tpcstudy's BPF host agent on every source router (:mod:`.hostagent`): per connection
  policies for the TCP of every program in the host's cgroup.

:class:`Network` is the same from Python: ``with Network(topo, table=T) as net:
net.exec("Seattle", [...])``, torn down at the end of the block.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import difflib
import fcntl
import ipaddress
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ...errors import UsageError
from ...export.addressing import AddressPlan
from ...export.bpf import read_json
from ...linux import NETNS_DIR
from ...topology import Topology
from . import kernel as _ns
from .launch import launch_argv
from .lifecycle import (
    Emulation,
    RunRecord,
    cgroup_base,
    name_ok,
    new_prefix,
    read_records,
    remove_run,
)
from .spec import HOST_NIC, HOST_TABLE, NetworkSpec, network_spec

__all__ = ["up", "down", "find", "agents_of", "live_networks", "exec_argv", "sample", "rates",
           "route_lines", "Network", "INSTALLS", "age", "inspect", "pingall"]

INSTALLS = ("route", "bpf")


def _routers_doc(spec: NetworkSpec) -> List[Dict[str, Any]]:
    return [{"id": r.id, "name": r.name, "netns": r.netns, "loopback": str(r.loopback),
             "hosts": [str(h) for h in r.hosts],
             "interfaces": [{"name": i.name, "to": spec.routers[i.neighbour].name,
                             "rate_bps": i.rate_bps} for i in r.interfaces]}
            for r in spec.routers]


def route_lines(spec: NetworkSpec, table: Path, slot: int = 0) -> Dict[str, List[str]]:
    """Per source router namespace, the ``ip -batch`` lines of its table's static SRv6 routes:
    per destination prefix the ``slot``-th path (the last one when the entry has fewer), its
    segments in visit order, the egress router last."""
    doc = read_json(Path(table) / "paths.json")
    try:
        entries = list(doc["entries"])
    except (KeyError, TypeError):
        raise UsageError(f"{table}/paths.json: no 'entries' (export with --format json)") \
            from None
    out: Dict[str, List[str]] = {}
    for e in entries:
        try:
            src = spec.router(str(e["source"]))
            prefix = ipaddress.IPv6Network(e["prefix"])
            paths = list(e["paths"])
            segs = [str(ipaddress.IPv6Address(a)) for a in paths[min(slot, len(paths) - 1)]
                    ["segments"]]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise UsageError(f"{table}/paths.json: entry {str(e)[:80]}: {exc}") from None
        if not segs or not src.interfaces:
            continue
        # the hosts' packets: in their NIC's table (the encap is applied as they are sent,
        # so TCP's MSS leaves room for the SRH; transit packets keep the IGP's routes)
        via = (f"via fe80::2 dev {HOST_NIC} table {HOST_TABLE}" if src.hosts
               else f"dev {src.interfaces[0].name}")
        out.setdefault(src.netns, []).append(
            f"route replace {prefix} encap seg6 mode inline segs {','.join(segs)} {via}")
    return out


def up(topo: Topology, plan: Optional[AddressPlan], *, name: str, link_mbps: float = 10.0,
       queue_ms: float = 50.0, seed: int = 0, mtu: int = 1500, table: Optional[Path] = None,
       install: Optional[str] = None, slot: int = 0, policy: Any = None,
       log: Any = None) -> RunRecord:
    """Build the network and leave it up (module docstring); returns its record."""
    log = log or (lambda m: None)
    if not name_ok(name):
        raise UsageError(f"--name {name!r}: 1 to 32 letters, digits, '_', '.', '-'")
    if install is not None and install not in INSTALLS:
        raise UsageError(f"--install {install!r}: choose from {', '.join(INSTALLS)}")
    if install is not None and table is None:
        raise UsageError("--install needs --table DIR (a folder of 'tpcstudy export')")
    if install == "bpf":
        from .hostagent import check_bpf_table

        assert table is not None
        check_bpf_table(Path(table))
    with name_lock(name):
        if find(name, must=False) is not None:
            raise UsageError(f"a network named {name!r} is up already (tpcstudy emulate down "
                             f"{name})")
        return _up(topo, plan, name=name, link_mbps=link_mbps, queue_ms=queue_ms, seed=seed,
                   mtu=mtu, table=table, install=install, slot=slot, policy=policy, log=log)


@contextlib.contextmanager
def name_lock(name: str) -> Iterator[None]:
    """Held while network ``name`` is brought up: a second ``up`` of the same name started
    meanwhile is refused at once (it would not see the first's record yet). The lock file
    (``<run dir>/.up-NAME.lock``) goes with its holder; a waiter that got the lock of a removed
    file still finds the first network's record, written before the removal."""
    from .lifecycle import run_dir

    d = run_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f".up-{name}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"a network named {name!r} is being brought up by another "
                             f"process") from None
        try:
            yield
        finally:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)


def _up(topo: Topology, plan: Optional[AddressPlan], *, name: str, link_mbps: float,
        queue_ms: float, seed: int, mtu: int, table: Optional[Path], install: Optional[str],
        slot: int, policy: Any, log: Any) -> RunRecord:
    spec = network_spec(topo, plan, prefix=new_prefix(), link_mbps=link_mbps,
                        queue_ms=queue_ms, seed=seed, mtu=mtu)
    with Emulation(spec, log=log) as emu:
        for r in spec.routers:
            emu.cgroup(r.name)
        if install == "route":
            assert table is not None
            for ns, lines in route_lines(spec, table, slot).items():
                _ns.run_batch("ip", lines, netns=ns, label="SRv6 routes of the table",
                              ipv6=True)
        elif install == "bpf":
            from ...hostagent.maps import SlotPolicy
            from .hostagent import install_agents

            assert table is not None
            emu.agents.update(install_agents(emu, table,
                                             policy=policy or SlotPolicy("slot", slot=slot)))
        # the agents' install records (map and program ids) go with the run's record: what
        # 'tpcstudy control --network NAME --push local' swaps tables in
        return emu.keep(name, created=_dt.datetime.now(_dt.timezone.utc).isoformat(
            timespec="seconds"), table=str(table) if table else None, install=install,
            agents={h: inst.to_json() for h, inst in emu.agents.items()},
            slot=slot if install else None, link_mbps=link_mbps, routers=_routers_doc(spec))


def live_networks() -> List[RunRecord]:
    """The records of the networks kept up (``tpcstudy emulate list``)."""
    return [r for r in read_records() if r.get("kind") == "up"]


def find(name: str, *, must: bool = True) -> Optional[RunRecord]:
    for r in live_networks():
        if r.get("name") == name:
            return r
    if must:
        have = [str(r.get("name")) for r in live_networks()]
        near = difflib.get_close_matches(name, have, n=1)
        raise UsageError(f"no network named {name!r} is up"
                         + (f"; did you mean {near[0]!r}?" if near else
                            f" (up: {', '.join(have) or 'none'})"))
    return None


def agents_of(rec: RunRecord, hosts: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The BPF agents of a live network's hosts (``emulate up --install bpf`` keeps their
    install records in the run record), by host: every one, or ``hosts``.

    Raises
    ------
    UsageError
        A host with no agent (the network was started without ``--install bpf``).
    """
    from ...hostagent.record import Install

    docs = rec.get("agents") or {}
    want = list(docs) if hosts is None else list(hosts)
    missing = [h for h in want if h not in docs]
    if missing or not want:
        raise UsageError(f"network {rec.get('name')!r} has no BPF agent"
                         + (f" on {', '.join(missing[:5])}" if missing else "")
                         + " (emulate up --table T --install bpf)")
    return {h: Install.from_json(docs[h], f"run record of {rec.get('name')}") for h in want}


def _router(rec: RunRecord, router: str) -> Dict[str, Any]:
    routers = rec.get("routers") or []
    for r in routers:
        if r.get("name") == router or str(r.get("id")) == router:
            return dict(r)
    near = difflib.get_close_matches(router, [str(r.get("name")) for r in routers], n=3)
    raise UsageError(f"network {rec.get('name')!r} has no router {router[:80]!r}"
                     + (f"; did you mean {', '.join(map(repr, near))}?" if near else ""))


def exec_argv(name: str, router: str, argv: Sequence[str]) -> List[str]:
    """The command running ``argv`` as a process of ``router``'s host in network ``name``: in
    its namespace and its cgroup (where a BPF agent sees it, and ``down`` finds it)."""
    rec = find(name)
    assert rec is not None
    r = _router(rec, router)
    netns = str(r["netns"])
    if not netns.startswith(rec["prefix"]):
        raise UsageError(f"record of {name!r}: namespace {netns[:40]!r} is not the network's")
    return launch_argv(netns, str(cgroup_base(rec["prefix"]) / f"r{int(r['id'])}"), argv)


def sample(rec: RunRecord) -> Dict[Tuple[str, str], int]:
    """Bytes sent so far on every link direction ``(router, neighbour)`` of a live network."""
    out: Dict[Tuple[str, str], int] = {}
    routers = rec.get("routers") or []
    counters = _ns.interface_counters([str(r["netns"]) for r in routers])
    for r in routers:
        c = counters[str(r["netns"])]
        for i in r.get("interfaces") or []:
            if i["name"] in c:
                out[(str(r["name"]), str(i["to"]))] = c[i["name"]][2]
    return out


def rates(rec: RunRecord, before: Dict[Tuple[str, str], int], after: Dict[Tuple[str, str], int],
          seconds: float) -> List[Dict[str, Any]]:
    """Per link direction: Mbit/s over the interval and the share of its shaped rate; busiest
    first."""
    rate = {(str(r["name"]), str(i["to"])): float(i["rate_bps"])
            for r in rec.get("routers") or [] for i in r.get("interfaces") or []}
    rows: List[Dict[str, Any]] = []
    for key, b in after.items():
        bps = 8.0 * (b - before.get(key, b)) / seconds if seconds > 0 else 0.0
        rows.append({"link": f"{key[0]}>{key[1]}", "mbps": round(bps / 1e6, 3),
                     "util": round(bps / rate[key], 4) if rate.get(key) else 0.0,
                     "bytes": b - before.get(key, b)})
    rows.sort(key=lambda x: (-float(x["util"]), str(x["link"])))
    return rows


def down(name: str) -> Dict[str, Any]:
    """Remove exactly network ``name``: the processes in its hosts' cgroups and of its record,
    its namespaces, its cgroups, its record (each step skips what is already gone)."""
    rec = find(name)
    assert rec is not None
    rep: Dict[str, Any] = {"prefix": rec["prefix"], "name": name, "namespaces_removed": [],
                           "processes_killed": [], "cgroups_removed": []}
    return remove_run(rec, rep)


class Network:
    """A network for a block of Python (module docstring); ``install`` as in :func:`up`."""

    def __init__(self, topo: Topology, plan: Optional[AddressPlan] = None, *,
                 table: Optional[Path] = None, install: Optional[str] = None, slot: int = 0,
                 link_mbps: float = 10.0, queue_ms: float = 50.0, seed: int = 0,
                 mtu: int = 1500, policy: Any = None) -> None:
        if install is not None and install not in INSTALLS:
            raise UsageError(f"install {install!r}: choose from {', '.join(INSTALLS)}")
        if install == "bpf" and table is not None:
            from .hostagent import check_bpf_table

            check_bpf_table(Path(table))
        if table is not None and plan is None:
            from ...export.addressing import read_plan

            plan = read_plan(Path(table) / "plan.json")
        self.spec = network_spec(topo, plan, prefix=new_prefix(), link_mbps=link_mbps,
                                 queue_ms=queue_ms, seed=seed, mtu=mtu)
        self.table, self.install, self.slot, self.policy = table, install, slot, policy
        self.emu = Emulation(self.spec)
        self.agents: Dict[str, Any] = {}

    def __enter__(self) -> "Network":
        self.emu.__enter__()
        try:
            for r in self.spec.routers:
                self.emu.cgroup(r.name)
            if self.install == "route" and self.table is not None:
                for ns, lines in route_lines(self.spec, Path(self.table), self.slot).items():
                    _ns.run_batch("ip", lines, netns=ns, label="SRv6 routes of the table",
                              ipv6=True)
            elif self.install == "bpf" and self.table is not None:
                from ...hostagent.maps import SlotPolicy
                from .hostagent import install_agents

                self.agents = install_agents(self.emu, Path(self.table),
                                             policy=self.policy or SlotPolicy("slot", slot=self.slot))
        except BaseException:
            self.emu.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.emu.close()

    def host(self, router: str) -> str:
        """The traffic address of ``router``'s host."""
        return str(self.spec.host(router))

    def exec(self, router: str, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess:
        """Run ``argv`` as a process of ``router``'s host and wait (``subprocess.run``
        arguments in ``kw``, e.g. ``capture_output=True, text=True``)."""
        r = self.spec.router(router)
        return subprocess.run(launch_argv(r.netns, str(self.emu.cgroup(router)), argv), **kw)

    def spawn(self, router: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen:
        """Start ``argv`` as a process of ``router``'s host (killed at the end of the block)."""
        r = self.spec.router(router)
        return self.emu.spawn(launch_argv(r.netns, str(self.emu.cgroup(router)), argv), **kw)

    def counters(self) -> Dict[Tuple[str, str], int]:
        """Bytes sent so far on every link direction ``(router, neighbour)``."""
        names = self.spec.topology.names
        tx = _ns.interface_counters(self.spec.namespaces)
        return {(r.name, names[i.neighbour]): tx[r.netns][i.name][2]
                for r in self.spec.routers for i in r.interfaces}

    def busy_links(self, before: Dict[Tuple[str, str], int], min_bytes: int = 10_000
                   ) -> List[Tuple[str, str]]:
        """Link directions that sent at least ``min_bytes`` since ``before``."""
        after = self.counters()
        return sorted(k for k, v in after.items() if v - before.get(k, v) >= min_bytes)


def inspect(name: str) -> Dict[str, Any]:
    """Network ``name`` as ``containerlab inspect`` shows a lab: per router its namespace and
    whether it exists now, its loopback (the SID the table's segments name), its host address,
    its links (neighbour, interface, shaped rate); the network's table and how it is installed.
    """
    rec = find(name)
    assert rec is not None
    routers = []
    for r in rec.get("routers") or []:
        netns = str(r.get("netns"))
        routers.append({"name": r.get("name"), "id": r.get("id"), "netns": netns,
                        "state": "running" if netns.startswith(str(rec["prefix"]))
                        and (NETNS_DIR / netns).exists() else "missing",
                        "loopback": r.get("loopback"), "hosts": list(r.get("hosts") or []),
                        "links": [{"to": i.get("to"), "interface": i.get("name"),
                                   "mbps": float(i.get("rate_bps") or 0) / 1e6}
                                  for i in r.get("interfaces") or []]})
    return {"name": name, "topology": rec.get("topology"), "prefix": rec.get("prefix"),
            "pid": rec.get("pid"), "up": age(rec), "created": rec.get("created"),
            "table": rec.get("table"), "install": rec.get("install"), "slot": rec.get("slot"),
            "link_mbps": rec.get("link_mbps"), "routers": routers}


def _echo(netns: str, source: str, targets: Sequence[str], timeout: float,
          into: Dict[str, Optional[float]]) -> None:
    """In a thread of its own: enter ``netns`` (this thread only), send one ICMPv6 echo
    request from ``source`` to each target and record each reply's round trip (seconds;
    ``None`` for none within ``timeout``). The packets leave as the host's (a local socket:
    the host's table, with the installed SRv6 routes)."""
    import os
    import select
    import socket
    import struct
    import time

    from ...linux import enter_netns_fd, setns

    for t in targets:
        into[t] = None
    try:
        fd = enter_netns_fd(netns)
        try:
            setns(fd)
        finally:
            os.close(fd)
        sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    except OSError:
        return
    ident = (os.getpid() ^ (hash(netns) & 0xFFFF)) & 0xFFFF
    try:
        sock.bind((source, 0))
        sent: Dict[int, Tuple[str, float]] = {}
        for seq, t in enumerate(targets):
            # type 128 (echo request), code 0, checksum 0 (the kernel fills it), id, seq
            sent[seq] = (t, time.monotonic())
            try:
                sock.sendto(struct.pack("!BBHHH", 128, 0, 0, ident, seq) + b"tpcstudy", (t, 0))
            except OSError:
                continue
        deadline = time.monotonic() + timeout
        left = set(sent)
        while left and time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            data, addr = sock.recvfrom(2048)
            if len(data) < 8:
                continue
            kind, _, _, rid, seq = struct.unpack("!BBHHH", data[:8])
            if kind == 129 and rid == ident and seq in left and \
                    ipaddress.ip_address(addr[0]) == ipaddress.ip_address(sent[seq][0]):
                left.discard(seq)
                into[sent[seq][0]] = time.monotonic() - sent[seq][1]
    finally:
        sock.close()


def pingall(name: str, *, timeout: float = 2.0, parallel: int = 16
            ) -> List[Tuple[str, str, Optional[float]]]:
    """Mininet's ``pingall`` on network ``name``: from every router's host to every other
    router's host, one ICMPv6 echo each, sent as the host sends (so over the table installed
    with ``--install route``); ``(source, destination, round trip in seconds or None)``."""
    import threading

    rec = find(name)
    assert rec is not None
    hosts = [(str(r["name"]), str(r["netns"]), str(r["hosts"][0]))
             for r in rec.get("routers") or [] if r.get("hosts")]
    for _, netns, _ in hosts:
        if not netns.startswith(str(rec["prefix"])):
            raise UsageError(f"record of {name!r}: namespace {netns[:40]!r} is not the network's")
    got: Dict[str, Dict[str, Optional[float]]] = {}
    threads: List[threading.Thread] = []
    for src, netns, addr in hosts:
        got[src] = {}
        targets = [a for n, _, a in hosts if n != src]
        th = threading.Thread(target=_echo, args=(netns, addr, targets, timeout, got[src]),
                              daemon=True)
        threads.append(th)
    for i in range(0, len(threads), parallel):
        batch = threads[i:i + parallel]
        for th in batch:
            th.start()
        for th in batch:
            th.join(timeout + 5.0)
    addr_of = {n: a for n, _, a in hosts}
    return [(src, dst, got[src].get(addr_of[dst])) for src, _, _ in hosts
            for dst, _, _ in hosts if dst != src]


def age(rec: RunRecord) -> str:
    """How long ago the network was brought up (``1h02m``, ``3m20s``)."""
    try:
        t = _dt.datetime.fromisoformat(str(rec.get("created")))
        s = int((_dt.datetime.now(_dt.timezone.utc) - t).total_seconds())
    except (TypeError, ValueError):
        return "?"
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


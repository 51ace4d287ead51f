"""The emulated network as data, and the exact commands that build it (no root needed here).

:func:`network_spec` turns a topology and an addressing plan into a :class:`NetworkSpec`:

- **one network namespace per router**, named ``<prefix>r<router id>``; the router's loopback
  (its segment) and, for each host prefix of the plan, one host address (the first address of
  the prefix's first /64, ``::1``, where the TPC agent's map key points) sit on its ``lo``;
- **one veth pair per link**; the end in router ``u`` towards ``v`` is named ``to<v>``, carries
  ``fe80::1`` (lower router id) or ``fe80::2`` and a fixed MAC, and has a permanent neighbour
  entry for its peer (no neighbour discovery, so no control packet is ever lost or counted);
- **routes**: in router ``u``, for every other router ``t``, one IPv6 multipath route to ``t``'s
  loopback and to each of ``t``'s prefixes whose next hops are exactly ``u``'s next hops on
  tpcstudy's own shortest-path DAG towards ``t`` (:func:`igp_next_hops`: the same IGP weights
  and equal-cost rule as the LPs, from the C++ core);
- **the hosts' NIC**: in every router with hosts, a veth pair whose two ends stay in the router's
  namespace, ``hostnic`` -> ``hostgw``, unshaped (no queue of its own), and a routing rule
  (``iif lo``, table 100) that sends every locally generated packet out of ``hostnic``; it comes
  back in on ``hostgw`` and is forwarded like any transit packet. So a host's packets meet the
  shaped queue of their first link as forwarded packets: a full queue drops them as a router
  would, a loss the host's TCP recovers from, instead of refusing them locally (``NET_XMIT_DROP``
  to the socket: Linux TCP then retries on its 500 ms resource-probe timer and, after
  ``tcp_retries2`` = 15 failed probes, ends the connection with ``ETIMEDOUT``: an artefact of
  hosts sharing their router's namespace, seen under overload and with jumbo frames);
- **per-direction shaping**: on every veth end an HTB class at ``capacity / unit * link_mbps``
  (``unit`` = the smallest link capacity, so a capacity-1 link of a uniform topology runs at
  ``link_mbps``) over a byte-limited ``bfifo`` of ``queue_ms`` worth of bytes (at least 10
  full-size packets); ``gso_max_segs 1`` so HTB counts real packets (GSO miscounts forwarded
  packets that carry an SRH);
- **sysctls** per namespace, written before any interface exists: forwarding, ``seg6_enabled``
  on ``all`` and ``default`` (and then on every interface), no DAD, no address autoconfiguration,
  no router solicitations, no TCP metrics cache, and the ECMP hash: policy 3 (custom fields) over
  source and destination address, protocol and both ports (fields 0x37; not the flow label, which
  Linux re-draws on every RTO and would move a connection between equal-cost paths), with a
  different ``fib_multipath_hash_seed`` in every namespace so hops hash independently, as the
  study's model of even, independent per-hop splitting assumes (policy 1 would hash the sender's
  per-socket random value at every hop: all hops choose alike).

:func:`build_steps` renders the spec as :class:`Batch` (``ip``/``tc`` batch lines) and
:class:`Sysctls` steps in phases; :func:`render_shell` prints them as the shell script that
``--dry-run`` shows (running it by hand builds the same network).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import re
import zlib
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ...errors import UsageError
from ...export.addressing import AddressPlan, default_plan
from ...paths import segment_ratios
from ...topology import Topology

__all__ = [
    "NetworkSpec", "Router", "Interface", "Route", "Batch", "Sysctls", "Step",
    "network_spec", "igp_next_hops", "build_steps", "teardown_steps", "render_shell",
    "host_address", "HASH_FIELDS", "HASH_POLICY", "PACKET_BYTES", "hash_seed", "DEFAULT_MTU",
    "MTU_RANGE", "HOST_NIC", "HOST_GW", "HOST_TABLE", "payload_share", "srh_size",
]

#: ``net.ipv6.fib_multipath_hash_policy``: 3 = the fields of ``fib_multipath_hash_fields``.
HASH_POLICY = 3
#: Source IP, destination IP, IP protocol, source port, destination port (not the flow label).
HASH_FIELDS = 0x37
#: Bytes of a full-size packet on a veth as HTB counts it at the default MTU (1500-byte MTU +
#: Ethernet header); :attr:`NetworkSpec.frame_bytes` is the network's own.
PACKET_BYTES = 1514
#: The Ethernet header a frame adds to an IP packet of the MTU.
ETHERNET_HEADER = 14
#: The MTU of every link (and so the MSS and the SRH's room): 1280 (IPv6's least) to 9000.
DEFAULT_MTU = 1500
MTU_RANGE = (1280, 9000)
#: IPv6 (40) + TCP (20) + TCP's timestamp option (12, on by default in every namespace).
IP_TCP_HEADERS = 72


def srh_size(segments: int) -> int:
    """Bytes of an SRH carrying ``segments`` waypoints (the egress included) and the real
    destination in segments[0]: 8 + 16 (segments + 1); 0 for a plain connection."""
    return 8 + 16 * (segments + 1) if segments > 0 else 0


def payload_share(mtu: int, srh: int, room: int = -1) -> float:
    """TCP payload bytes per wire byte of a full-size packet, as the links count them (HTB sees
    the Ethernet frame): the MSS is the MTU less IPv6, TCP, its timestamps and the SRH room the
    agent reserved (``room``, default the packet's own SRH ``srh``); the frame adds the Ethernet
    header and the SRH itself. 1500 and one waypoint: (1500 - 72 - 40) / (1500 + 14) = 0.917;
    9000: 0.986. The LPs count link capacity in these wire bytes, the receivers count payload."""
    room = srh if room < 0 else room
    payload = mtu - IP_TCP_HEADERS - room
    return payload / (mtu - room + srh + ETHERNET_HEADER)


#: HTB burst in full-size packets (small, so shaping is tight at low rates).
BURST_PACKETS = 2
#: The smallest queue, in full-size packets.
MIN_QUEUE_PACKETS = 10
_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,15}-$")
#: The hosts' NIC (module docstring): the end the hosts send from and the end the router
#: receives on, their MACs and link-local addresses, and the routing table and rule priority
#: that send locally generated packets through it.
HOST_NIC, HOST_GW = "hostnic", "hostgw"
HOST_MACS = ("02:ff:00:00:00:01", "02:ff:00:00:00:02")
HOST_TABLE, HOST_RULE_PREF = 100, 100


@dataclasses.dataclass(frozen=True)
class Interface:
    """One veth end: in router ``router`` towards ``neighbour`` (the directed arc ``arc``)."""

    router: int
    neighbour: int
    arc: int
    name: str
    mac: str
    lladdr: str
    peer_lladdr: str
    peer_mac: str
    rate_bps: int
    queue_bytes: int


@dataclasses.dataclass(frozen=True)
class Route:
    """A multipath route: ``destination`` via ``(interface name, gateway)`` next hops."""

    destination: str
    nexthops: Tuple[Tuple[str, str], ...]
    target: int


@dataclasses.dataclass
class Router:
    id: int
    name: str
    netns: str
    loopback: ipaddress.IPv6Address
    prefixes: List[ipaddress.IPv6Network]
    hosts: List[ipaddress.IPv6Address]
    interfaces: List[Interface]
    routes: List[Route]
    hash_seed: int


@dataclasses.dataclass
class NetworkSpec:
    """Everything needed to build (and reason about) one emulated network."""

    topology: Topology
    plan: AddressPlan
    prefix: str
    link_mbps: float
    queue_ms: float
    seed: int
    unit: float
    routers: List[Router]
    mtu: int = DEFAULT_MTU

    @property
    def frame_bytes(self) -> int:
        """Bytes of a full-size frame on a link (the MTU + the Ethernet header)."""
        return self.mtu + ETHERNET_HEADER

    @property
    def namespaces(self) -> List[str]:
        return [r.netns for r in self.routers]

    def router(self, name_or_id: Union[str, int]) -> Router:
        i = self.topology.index_of(name_or_id)
        return self.routers[i]

    def interface_of_arc(self, arc: int) -> Interface:
        """The veth end that sends arc ``arc``'s packets (in the arc's tail router)."""
        u = int(self.topology.arc_src[arc])
        for itf in self.routers[u].interfaces:
            if itf.arc == arc:
                return itf
        raise KeyError(arc)

    def arc_of_interface(self) -> Dict[Tuple[str, str], int]:
        """``(namespace, interface name) -> arc`` for every veth end."""
        return {(self.routers[i.router].netns, i.name): i.arc
                for r in self.routers for i in r.interfaces}

    def host(self, router: Union[str, int]) -> ipaddress.IPv6Address:
        """The traffic address of ``router``: its first host address, else its loopback."""
        r = self.router(router)
        return r.hosts[0] if r.hosts else r.loopback

    def rate_units(self, bps: float) -> float:
        """A rate in link units (one unit = the rate of a link of capacity ``unit``)."""
        return bps / (self.link_mbps * 1e6)

    def summary(self) -> Dict[str, object]:
        rates = sorted({i.rate_bps for r in self.routers for i in r.interfaces})
        return {"topology": self.topology.name, "routers": len(self.routers),
                "links": self.topology.num_links, "prefix": self.prefix,
                "link_mbps": self.link_mbps, "queue_ms": self.queue_ms, "unit_capacity": self.unit,
                "mtu": self.mtu,
                "min_rate_bps": rates[0], "max_rate_bps": rates[-1],
                "routes": sum(len(r.routes) for r in self.routers),
                "hash": {"policy": HASH_POLICY, "fields": hex(HASH_FIELDS),
                         "seed": "per namespace: crc32(run seed, router name)"}}


def host_address(prefix: ipaddress.IPv6Network) -> ipaddress.IPv6Address:
    """The host address of a prefix: ``::1`` of its first /64 (the agent keys on that /64)."""
    first = prefix.network_address
    return ipaddress.IPv6Address(int(first) + 1)


def igp_next_hops(topo: Topology) -> Dict[Tuple[int, int], Tuple[int, ...]]:
    """``(u, t) -> sorted next-hop router ids of u towards t`` on the shortest-path DAG.

    Read off the C++ core's ECMP ratios of the segment ``u -> t`` (the arcs leaving ``u`` that
    carry a share), so ties and weights are exactly those of every LP in tpcstudy. Unreachable
    pairs are absent.
    """
    n = topo.num_nodes
    if n < 2:
        return {}
    s, t = np.meshgrid(np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32), indexing="ij")
    mask = s != t
    src, dst = s[mask], t[mask]
    offsets, arcs, _ = segment_ratios(topo, src, dst)
    arc_src, arc_dst = topo.arc_src, topo.arc_dst
    out: Dict[Tuple[int, int], Tuple[int, ...]] = {}
    off = offsets.tolist()
    a_src = arc_src[arcs]
    a_dst = arc_dst[arcs]
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        lo, hi = off[i], off[i + 1]
        if lo == hi:
            continue
        sel = a_src[lo:hi] == u
        out[(u, v)] = tuple(sorted(a_dst[lo:hi][sel].tolist()))
    return out


def _mac(link: int, side: int) -> str:
    if link >= 1 << 24:
        raise UsageError(f"link id {link} too large for the MAC scheme (at most 2^24 links)")
    b = [0x02, 0x00, (link >> 16) & 255, (link >> 8) & 255, link & 255, side]
    return ":".join(f"{x:02x}" for x in b)


def check_prefix(prefix: str) -> str:
    if not _NAME_RE.match(prefix):
        raise UsageError(f"namespace prefix {prefix!r}: expected a lower-case letter, up to 15 "
                         f"letters or digits, then '-' (e.g. 'tpc1a2b3c-')")
    return prefix


def network_spec(topo: Topology, plan: Optional[AddressPlan] = None, *, prefix: str,
                 link_mbps: float = 10.0, queue_ms: float = 50.0, seed: int = 0,
                 mtu: int = DEFAULT_MTU) -> NetworkSpec:
    """The emulated network of ``topo`` (module docstring).

    Parameters
    ----------
    topo
        The topology as emulated (prune it first for the studies' networks).
    plan
        Addressing plan (default: :func:`tpcstudy.default_plan`); routers without a loopback
        in it are an error, routers without prefixes get no host address.
    prefix
        Namespace name prefix of this run (``tpc1a2b3c-``).
    link_mbps
        Rate of a link of the smallest capacity, Mbit/s (each direction).
    queue_ms
        Queue of each veth end, in milliseconds at its rate (at least 10 full packets).
    seed
        Run seed: the ECMP hash seed of each namespace derives from it and the router's name.
    mtu
        Every link's MTU (``--mtu``; jumbo frames up to 9000): the queues, the HTB bursts and
        the full-frame size follow it, TCP derives its MSS and the SRH's room from it.
    """
    check_prefix(prefix)
    if not (isinstance(mtu, int) and MTU_RANGE[0] <= mtu <= MTU_RANGE[1]):
        raise UsageError(f"--mtu {mtu!r}: {MTU_RANGE[0]} to {MTU_RANGE[1]}")
    frame = mtu + ETHERNET_HEADER
    if not (math.isfinite(link_mbps) and link_mbps > 0):
        raise UsageError(f"link_mbps = {link_mbps!r} must be > 0")
    if not (math.isfinite(queue_ms) and queue_ms > 0):
        raise UsageError(f"queue_ms = {queue_ms!r} must be > 0")
    if topo.num_nodes < 2 or topo.num_links < 1:
        raise UsageError(f"topology {topo.name!r} has nothing to emulate ({topo.num_nodes} "
                         f"routers, {topo.num_links} links)")
    the_plan = default_plan(topo) if plan is None else plan
    the_plan.check(topo)
    names = topo.names
    cap = topo.arc_capacity
    if not np.all(np.isfinite(cap)) or np.any(cap <= 0):
        raise UsageError(f"topology {topo.name!r}: every link needs a positive capacity to be "
                         f"emulated")
    unit = float(cap.min())
    arc_src, arc_dst = topo.arc_src.tolist(), topo.arc_dst.tolist()
    ifaces: Dict[int, List[Interface]] = {i: [] for i in range(topo.num_nodes)}
    for arc, (u, v) in enumerate(zip(arc_src, arc_dst)):
        link, side = arc // 2, arc % 2  # side 0: the link's u end (lower id)
        rate = int(round(float(cap[arc]) / unit * link_mbps * 1e6))
        queue = int(max(MIN_QUEUE_PACKETS * frame, round(rate * queue_ms / 1000.0 / 8)))
        ifaces[u].append(Interface(
            router=u, neighbour=v, arc=arc, name=f"to{v}", mac=_mac(link, side + 1),
            lladdr=f"fe80::{side + 1}", peer_lladdr=f"fe80::{2 - side}",
            peer_mac=_mac(link, 2 - side), rate_bps=rate, queue_bytes=queue))
    hops = igp_next_hops(topo)
    routers: List[Router] = []
    for u, name in enumerate(names):
        loop = the_plan.loopback(name)
        prefixes = list(the_plan.prefixes.get(name, []))
        by_nbr = {i.neighbour: i for i in ifaces[u]}
        routes: List[Route] = []
        for t, tname in enumerate(names):
            if t == u or (u, t) not in hops:
                continue
            nh = tuple((by_nbr[v].name, by_nbr[v].peer_lladdr) for v in hops[(u, t)])
            dests = [f"{the_plan.loopback(tname)}/128"] + [str(p) for p in
                                                            the_plan.prefixes.get(tname, [])]
            routes.extend(Route(d, nh, t) for d in dests)
        seed_u = hash_seed(seed, name)
        routers.append(Router(u, name, f"{prefix}r{u}", loop, prefixes,
                              [host_address(p) for p in prefixes],
                              sorted(ifaces[u], key=lambda i: i.neighbour),
                              routes, seed_u))
    return NetworkSpec(topo, the_plan, prefix, float(link_mbps), float(queue_ms), int(seed), unit,
                       routers, int(mtu))


# --------------------------------------------------------------------------- commands
@dataclasses.dataclass(frozen=True)
class Batch:
    """Lines for ``tool [-6] [-n netns] -batch -`` (``ipv6``: ``ip -6``, for ``rule`` lines,
    which ``ip`` would otherwise take as IPv4)."""

    tool: str
    lines: Tuple[str, ...]
    netns: Optional[str] = None
    label: str = ""
    ipv6: bool = False


@dataclasses.dataclass(frozen=True)
class Sysctls:
    """Sysctls written inside ``netns`` (in-process: ``setns`` then ``/proc/sys``)."""

    netns: str
    values: Tuple[Tuple[str, str], ...]


Step = Union[Batch, Sysctls]


def hash_seed(seed: int, router: str, draw: int = 0) -> int:
    """A router's ECMP hash seed for run seed ``seed`` and repeated draw ``draw`` (draw 0: the
    original rule, crc32 of the seed and the name; 0 would mean "random")."""
    text = f"{seed}\0{router}" if draw == 0 else f"{seed}\0{draw}\0{router}"
    return zlib.crc32(text.encode("utf-8")) or 1


def namespace_sysctls(hash_seed: int) -> Tuple[Tuple[str, str], ...]:
    """Sysctls of a router's namespace, set before its interfaces exist (``default`` is copied
    into every new interface); ``hash_seed`` is the namespace's ECMP hash seed."""
    vals = [
        ("net.ipv6.conf.all.seg6_enabled", "1"), ("net.ipv6.conf.default.seg6_enabled", "1"),
        ("net.ipv6.conf.all.forwarding", "1"), ("net.ipv6.conf.default.forwarding", "1"),
        ("net.ipv6.conf.default.accept_dad", "0"), ("net.ipv6.conf.default.addr_gen_mode", "1"),
        ("net.ipv6.conf.default.router_solicitations", "0"),
        ("net.ipv6.conf.default.accept_ra", "0"),
        ("net.ipv6.fib_multipath_hash_policy", str(HASH_POLICY)),
        ("net.ipv6.fib_multipath_hash_fields", hex(HASH_FIELDS)),
        ("net.ipv4.fib_multipath_hash_seed", str(hash_seed)),  # per netns, used for IPv6 too
        ("net.ipv4.tcp_no_metrics_save", "1"),
    ]
    return tuple(vals)


def interface_sysctls(r: Router) -> Tuple[Tuple[str, str], ...]:
    names = [i.name for i in r.interfaces] + ([HOST_NIC, HOST_GW] if r.hosts else [])
    return tuple((f"net.ipv6.conf.{n}.seg6_enabled", "1") for n in names)


def _ip_lines(r: Router, mtu: int) -> List[str]:
    lines = ["link set dev lo up", f"addr add {r.loopback}/128 dev lo"]
    lines += [f"addr add {h}/128 dev lo" for h in r.hosts]
    for i in r.interfaces:
        lines += [f"link set dev {i.name} mtu {mtu} gso_max_segs 1 multicast off up",
                  f"addr add {i.lladdr}/64 dev {i.name} nodad",
                  f"neigh replace {i.peer_lladdr} lladdr {i.peer_mac} dev {i.name} nud permanent"]
    for rt in r.routes:
        lines.append(f"route add {rt.destination} "
                     + " ".join(f"nexthop via {gw} dev {dev}" for dev, gw in rt.nexthops))
    if r.hosts:  # the hosts' NIC (module docstring)
        lines += [f"link set dev {HOST_NIC} mtu {mtu} gso_max_segs 1 multicast off up",
                  f"link set dev {HOST_GW} mtu {mtu} gso_max_segs 1 multicast off up",
                  f"addr add fe80::1/64 dev {HOST_NIC} nodad",
                  f"addr add fe80::2/64 dev {HOST_GW} nodad",
                  f"neigh replace fe80::2 lladdr {HOST_MACS[1]} dev {HOST_NIC} nud permanent",
                  f"route add ::/0 via fe80::2 dev {HOST_NIC} table {HOST_TABLE}",
                  f"rule add iif lo table {HOST_TABLE} pref {HOST_RULE_PREF}"]
    return lines


def _tc_lines(r: Router, frame: int) -> List[str]:
    lines = []
    for i in r.interfaces:
        burst = max(BURST_PACKETS * frame, i.rate_bps // 8 // 500)  # >= 2 ms of rate
        lines += [f"qdisc add dev {i.name} root handle 1: htb default 1",
                  f"class add dev {i.name} parent 1: classid 1:1 htb rate {i.rate_bps}bit "
                  f"ceil {i.rate_bps}bit burst {burst} cburst {burst} quantum {frame}",
                  f"qdisc add dev {i.name} parent 1:1 handle 2: bfifo limit {i.queue_bytes}"]
    return lines


def queue_line(i: Interface, limit: Optional[int] = None) -> str:
    """The ``tc`` line that sets an interface's queue; ``limit=0`` drops every packet (a failed
    link whose routes stay, unlike ``link set down``)."""
    q = i.queue_bytes if limit is None else int(limit)
    return f"qdisc replace dev {i.name} parent 1:1 handle 2: bfifo limit {q}"


def build_steps(spec: NetworkSpec) -> List[List[Step]]:
    """The build as phases; the steps of one phase are independent (may run in parallel)."""
    phases: List[List[Step]] = []
    phases.append([Batch("ip", tuple(f"netns add {r.netns}" for r in spec.routers),
                         label="namespaces")])
    phases.append([Sysctls(r.netns, namespace_sysctls(r.hash_seed)) for r in spec.routers])
    veth = []
    for r in spec.routers:
        for i in r.interfaces:
            if i.router < i.neighbour:
                peer = spec.routers[i.neighbour]
                veth.append(f"link add name {i.name} address {i.mac} netns {r.netns} type veth "
                            f"peer name to{r.id} address {i.peer_mac} netns {peer.netns}")
    veth += [f"link add name {HOST_NIC} address {HOST_MACS[0]} netns {r.netns} type veth "
             f"peer name {HOST_GW} address {HOST_MACS[1]} netns {r.netns}"
             for r in spec.routers if r.hosts]
    phases.append([Batch("ip", tuple(veth), label="veth links")])
    phases.append([Sysctls(r.netns, interface_sysctls(r)) for r in spec.routers
                   if r.interfaces or r.hosts])
    phases.append([Batch("ip", tuple(_ip_lines(r, spec.mtu)), r.netns,
                         label=f"router {r.name}", ipv6=True)
                   for r in spec.routers])
    phases.append([Batch("tc", tuple(_tc_lines(r, spec.frame_bytes)), r.netns,
                         label=f"queues of {r.name}")
                   for r in spec.routers if r.interfaces])
    return phases


def teardown_steps(namespaces: Iterable[str]) -> List[Batch]:
    names = list(namespaces)
    return [Batch("ip", tuple(f"netns del {n}" for n in names), label="teardown")] if names else []


def _shell_quote(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z0-9_./:=,+-]+", s) else "'" + s.replace("'", "'\\''") + "'"


def render_shell(phases: Sequence[Sequence[Step]], *, header: Sequence[str] = (),
                 teardown: Sequence[Batch] = ()) -> str:
    """A shell script running exactly these steps (what ``--dry-run`` prints)."""
    out = ["#!/bin/sh", "set -e"] + [f"# {h}" for h in header]
    for n, phase in enumerate(phases, start=1):
        out.append(f"# phase {n}")
        for st in phase:
            if isinstance(st, Batch):
                ns = (" -6" if st.ipv6 else "") + (f" -n {st.netns}" if st.netns else "")
                label = f"  # {st.label}" if st.label else ""
                out.append(f"{st.tool}{ns} -batch - <<'EOF'{label}")
                out.extend(st.lines)
                out.append("EOF")
            else:  # done in-process (setns + /proc/sys); this is the equivalent command
                out.append(f"ip netns exec {st.netns} sysctl -qw "
                           + " ".join(_shell_quote(f"{k}={v}") for k, v in st.values))
    if teardown:
        out.append("# teardown (on exit, also after an error, Ctrl-C or SIGTERM)")
        for st in teardown:
            out.append(f"{st.tool} -batch - <<'EOF'")
            out.extend(st.lines)
            out.append("EOF")
    return "\n".join(out) + "\n"

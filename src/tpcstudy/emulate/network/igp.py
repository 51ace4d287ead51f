"""IGP re-convergence of the emulated network: link events, the failed graph's routes, the diff.

The network's routes are static (:mod:`.spec`: every router's multipath routes from
:func:`~.spec.igp_next_hops` of the intact topology). A real network's IGP floods a link
failure and every router recomputes its shortest paths; this module does the same, centrally
and with a delay:

- **a link event** is a real one: :func:`link_down_lines` sets the link's veth end in its
  lower-id router administratively down (that router loses the link at once, as a router whose
  interface fails: the kernel drops its routes through it, multipath routes keep their other
  next hops); the other router sees its end lose its carrier (its routes stay and blackhole
  into the dead link until the IGP re-converges). Both routers' rtnetlink emit an
  ``RTM_NEWLINK``; :class:`LinkWatcher` reads them (one netlink socket per router namespace,
  joined to ``RTMGRP_LINK``) and reports ``("down"|"up", u, v, time)`` per link.
  :func:`link_up_lines` brings the end up again with its link-local address and its permanent
  neighbour entry (an administrative down removes both);
- **re-convergence**: :class:`Igp` waits ``delay`` seconds (``--igp-delay``, default 200 ms:
  detection, flooding and SPF of a tuned IGP) after the event, then computes the next hops of
  the failed graph (:func:`without_links`: the topology with the down links removed, node ids
  kept) with the same :func:`~.spec.igp_next_hops` as the build, maps each next hop onto the
  intact network's interface towards that neighbour (router pair), and installs in every router
  only the routes that differ (:func:`route_diff`: ``route replace`` with the new next hops, or
  ``route replace unreachable`` for a destination the failure disconnected); on ``up`` the
  intact routes come back the same way. Each router's lines go through one ``ip -batch`` in its
  namespace, all the routers in parallel. The routes and those ``ip`` processes are prepared while
  the delay runs, so that the routes land at the delay (Abilene: 2 ms of routes and 8 process
  starts, Geant2012 17 ms and 15, which once came after it).
"""

from __future__ import annotations

import dataclasses
import select
import socket
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from ...errors import UsageError
from ...topology import without_links
from . import kernel as _ns
from .netlink import NETLINK_ROUTE, attributes, messages
from .spec import NetworkSpec, igp_next_hops

__all__ = ["without_links", "route_table", "route_diff", "link_down_lines", "link_up_lines",
           "Igp", "LinkWatcher", "LinkEvent", "link_key", "parse_link_events", "DEFAULT_DELAY"]

#: Seconds between a link event and the routers' new routes (``--igp-delay``).
DEFAULT_DELAY = 0.2
Link = Tuple[int, int]
#: Per router id: destination -> next hops ``((interface, gateway), ...)``; ``()``: unreachable.
RouteTable = Dict[int, Dict[str, Tuple[Tuple[str, str], ...]]]


def link_key(u: int, v: int) -> Link:
    """A link as the sorted pair of its routers' ids."""
    if u == v:
        raise UsageError(f"a link joins two routers, not router {u} with itself")
    return (u, v) if u < v else (v, u)


def route_table(spec: NetworkSpec, down: Iterable[Link] = ()) -> RouteTable:
    """Every router's routes when the links ``down`` have failed: the failed graph's next hops
    (:func:`~.spec.igp_next_hops`) on the intact network's interfaces (by router pair);
    destinations the failure cut off map to ``()``."""
    topo = spec.topology
    hops = igp_next_hops(without_links(topo, down))
    out: RouteTable = {}
    for r in spec.routers:
        by_nbr = {i.neighbour: i for i in r.interfaces}
        table: Dict[str, Tuple[Tuple[str, str], ...]] = {}
        for t in spec.routers:
            if t.id == r.id:
                continue
            nh = tuple((by_nbr[v].name, by_nbr[v].peer_lladdr)
                       for v in hops.get((r.id, t.id), ()))
            for d in [f"{t.loopback}/128"] + [str(p) for p in t.prefixes]:
                table[d] = nh
        out[r.id] = table
    return out


def route_line(destination: str, nexthops: Sequence[Tuple[str, str]]) -> str:
    """The ``ip -6 route`` batch line installing ``destination`` via ``nexthops`` (none: an
    ``unreachable`` route, so the router answers with an ICMPv6 error, as one without a route)."""
    if not nexthops:
        return f"route replace unreachable {destination}"
    return f"route replace {destination} " + " ".join(f"nexthop via {gw} dev {dev}"
                                                       for dev, gw in nexthops)


def route_diff(old: RouteTable, new: RouteTable) -> Dict[int, List[str]]:
    """Per router whose routes change: the batch lines taking it from ``old`` to ``new`` (only
    the destinations whose next hops differ, in ``new``'s order)."""
    out: Dict[int, List[str]] = {}
    for rid, table in new.items():
        before = old.get(rid, {})
        lines = [route_line(d, nh) for d, nh in table.items() if before.get(d) != nh]
        if lines:
            out[rid] = lines
    return out


def _end(spec: NetworkSpec, u: int, v: int) -> Tuple[str, str, str, str, str]:
    """The veth end the link events act on: in the lower-id router, towards the other."""
    a, b = link_key(u, v)
    for i in spec.routers[a].interfaces:
        if i.neighbour == b:
            return spec.routers[a].netns, i.name, i.lladdr, i.peer_lladdr, i.peer_mac
    raise UsageError(f"routers {spec.topology.names[a]} and {spec.topology.names[b]} share no "
                     f"link")


def link_down_lines(spec: NetworkSpec, u: int, v: int) -> Tuple[str, List[str]]:
    """``(namespace, ip lines)`` failing link ``u``-``v`` (module docstring)."""
    ns, name, _, _, _ = _end(spec, u, v)
    return ns, [f"link set dev {name} down"]


def link_up_lines(spec: NetworkSpec, u: int, v: int) -> Tuple[str, List[str]]:
    """``(namespace, ip lines)`` restoring link ``u``-``v``: the end up, its address and its
    neighbour entry back (an administrative down removed them)."""
    ns, name, ll, peer_ll, peer_mac = _end(spec, u, v)
    return ns, [f"link set dev {name} up", f"addr replace {ll}/64 dev {name} nodad",
                f"neigh replace {peer_ll} lladdr {peer_mac} dev {name} nud permanent"]


@dataclasses.dataclass
class Convergence:
    """One re-convergence: the links down after it, when it was triggered and done
    (``time.monotonic``), how many routers and routes it changed."""

    down: FrozenSet[Link]
    event_at: float
    installed_at: float
    routers: int
    routes: int
    #: Its routes and ``ip`` processes were ready when the delay ended.
    prepared: bool = False


class Igp:
    """The network's IGP (module docstring): :meth:`event` after each link event; the routes of
    the links down at the time are installed ``delay`` seconds later (events closer together
    than that are handled by one installation, as an IGP's SPF hold-down does)."""

    def __init__(self, spec: NetworkSpec, *, delay: float = DEFAULT_DELAY,
                 log: Callable[[str], None] = lambda m: None) -> None:
        if not (delay >= 0 and delay < 60):
            raise UsageError(f"--igp-delay {delay!r}: 0 to 60 seconds")
        self.spec, self.delay, self.log = spec, float(delay), log
        self.down: set = set()
        self.installed: RouteTable = route_table(spec)
        self.history: List[Convergence] = []
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        self._first: Optional[float] = None
        self._pending = 0
        self.errors: List[str] = []
        #: The re-convergence prepared while the delay runs (:meth:`_prepare`).
        self._ready: Optional[_Prepared] = None
        self._preparing: Optional[threading.Thread] = None

    def event(self, kind: str, u: int, v: int, at: Optional[float] = None) -> None:
        """Link ``u``-``v`` went ``down`` or ``up`` (at ``at``, default now)."""
        if kind not in ("down", "up"):
            raise UsageError(f"link event {kind!r}: down or up")
        key = link_key(u, v)
        with self._lock:
            (self.down.add if kind == "down" else self.down.discard)(key)
            if self._timer is None:
                self._first = time.monotonic() if at is None else at
                wait = max(0.0, self._first + self.delay - time.monotonic())
                self._timer = threading.Timer(wait, self._fire)
                self._timer.daemon = True
                self._pending += 1
                self._timer.start()
                if wait > 0:
                    self._preparing = threading.Thread(target=self._prepare, daemon=True)
                    self._preparing.start()

    def _prepare(self) -> None:
        """While the delay runs: the routes of the links down now and, per router they change,
        its ``ip -batch`` started and waiting for its lines, so that :meth:`converge` installs
        them at the delay, not a route computation and 15 process starts later. A link event
        in between makes :meth:`converge` compute again."""
        with self._lock:
            down, installed = frozenset(self.down), self.installed
        try:
            prep = self._prepared(down, installed)
        except Exception as e:  # noqa: BLE001 - converge computes it again
            self.log(f"igp: preparing the routes failed ({e}); computed at the delay")
            return
        with self._lock:
            old, self._ready = self._ready, prep
        if old is not None:
            old.cancel()

    def _prepared(self, down: FrozenSet[Link], installed: RouteTable) -> "_Prepared":
        """The routes of the links ``down``, their diff from ``installed`` and each changed
        router's ``ip -batch`` started (those already started are ended if one fails)."""
        new = route_table(self.spec, down)
        diff = route_diff(installed, new)
        prep = _Prepared(down, installed, new, diff, {})
        try:
            for rid in sorted(diff):
                prep.batches[rid] = _ns.Batch(
                    "ip", netns=self.spec.routers[rid].netns, ipv6=True,
                    label=f"igp routes of {self.spec.routers[rid].name}")
        except BaseException:
            prep.cancel()
            raise
        return prep

    def _claim_prepared(self) -> Optional["_Prepared"]:
        """What :meth:`_prepare` made (waiting for it to finish), now no longer held here."""
        with self._lock:
            thread, self._preparing = self._preparing, None
        if thread is not None:
            thread.join()
        with self._lock:
            prep, self._ready = self._ready, None
        return prep

    def _take_ready(self, down: FrozenSet[Link]) -> Optional["_Prepared"]:
        """The prepared re-convergence if it is for ``down`` from the routes installed now."""
        prep = self._claim_prepared()
        if prep is not None and (prep.down != down or prep.installed is not self.installed):
            prep.cancel()
            return None
        return prep

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            first = self._first or time.monotonic()
        try:
            self.converge(event_at=first)
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            self.errors.append(str(e))
            self.log(f"igp: re-convergence failed: {e}")
        finally:
            with self._lock:
                self._pending -= 1

    def converge(self, *, event_at: Optional[float] = None) -> Convergence:
        """Install the routes of the links down now (only what differs); returns its record."""
        with self._lock:
            down = frozenset(self.down)
        prep = self._take_ready(down)
        prepared = prep is not None
        if prep is None:
            prep = self._prepared(down, self.installed)
        new, diff, batches = prep.new, prep.diff, prep.batches
        try:
            with ThreadPoolExecutor(max_workers=max(1, len(diff))) as pool:
                list(pool.map(lambda rid: batches[rid].feed(diff[rid]), sorted(diff)))
        finally:
            batches.clear()  # each fed (and ended) once, failed or not
        self.installed = new
        done = time.monotonic()
        rec = Convergence(down, event_at if event_at is not None else done, done, len(diff),
                          sum(len(x) for x in diff.values()), prepared=prepared)
        self.history.append(rec)
        names = self.spec.topology.names
        self.log(f"igp: {len(down)} link(s) down "
                 f"({', '.join(f'{names[a]}-{names[b]}' for a, b in sorted(down)) or 'none'}): "
                 f"{rec.routes} routes in {rec.routers} routers, "
                 f"{(done - rec.event_at) * 1e3:.0f} ms after the event")
        return rec

    def settled(self, since: float) -> bool:
        """Routes installed after ``since`` (``time.monotonic``) and none pending: every link
        event read before ``since`` and handed to :meth:`event` is in the routers' routes."""
        with self._lock:
            return (not self._pending and bool(self.history)
                    and self.history[-1].installed_at >= since)

    def wait(self, timeout: float = 30.0) -> None:
        """Until no re-convergence is pending."""
        end = time.monotonic() + timeout
        while self._pending and time.monotonic() < end:
            time.sleep(0.01)

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
                self._pending -= 1
        prep = self._claim_prepared()
        if prep is not None:
            prep.cancel()


@dataclasses.dataclass
class _Prepared:
    """A re-convergence computed ahead: for the links ``down``, from the routes ``installed``,
    the new routes, their diff and each changed router's waiting ``ip -batch``."""

    down: FrozenSet[Link]
    installed: RouteTable
    new: RouteTable
    diff: Dict[int, List[str]]
    batches: Dict[int, "_ns.Batch"]

    def cancel(self) -> None:
        for b in self.batches.values():
            b.cancel()
        self.batches.clear()


# --------------------------------------------------------------------------- link events
RTMGRP_LINK = 1
RTM_NEWLINK, RTM_DELLINK = 16, 17
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
IFLA_IFNAME = 3
_IFINFO = struct.Struct("=BxHiII")


@dataclasses.dataclass(frozen=True)
class LinkEvent:
    """A link's state change: ``kind`` down/up, its routers (sorted ids), when it was read
    (``time.monotonic``) and the interface that reported it."""

    kind: str
    u: int
    v: int
    at: float
    netns: str = ""
    interface: str = ""


def parse_link_events(data: bytes) -> List[Tuple[str, bool]]:
    """``(interface name, usable)`` for each ``RTM_NEWLINK`` in ``data``; usable = up and with
    a carrier (``IFF_UP`` and ``IFF_LOWER_UP``); an ``RTM_DELLINK`` is unusable."""
    out = []
    for kind, payload in messages(data):
        if kind not in (RTM_NEWLINK, RTM_DELLINK) or len(payload) < _IFINFO.size:
            continue
        _, _, _, flags, _ = _IFINFO.unpack_from(payload, 0)
        name = attributes(payload, _IFINFO.size).get(IFLA_IFNAME, b"").split(b"\0")[0]
        ok = kind == RTM_NEWLINK and bool(flags & IFF_UP) and bool(flags & IFF_LOWER_UP)
        out.append((name.decode("ascii", "replace"), ok))
    return out


class LinkWatcher:
    """The routers' rtnetlink link events as :class:`LinkEvent`\\ s (module docstring): a link
    is down as soon as one of its ends is unusable, up when both are again."""

    def __init__(self, spec: NetworkSpec) -> None:
        self.spec = spec
        self.socks: Dict[int, Tuple[socket.socket, int]] = {}
        self.ends: Dict[Tuple[int, int], bool] = {}  # (router, neighbour) -> usable
        switch = _ns.NetnsSwitch()
        try:
            for r in spec.routers:
                s = switch.socket_in(r.netns, socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
                s.bind((0, RTMGRP_LINK))
                s.setblocking(False)
                self.socks[s.fileno()] = (s, r.id)
                for i in r.interfaces:
                    self.ends[(r.id, i.neighbour)] = True
        except BaseException:
            self.close()
            raise
        finally:
            switch.close()

    def _state(self, u: int, v: int) -> bool:
        return self.ends.get((u, v), True) and self.ends.get((v, u), True)

    def poll(self, timeout: float) -> List[LinkEvent]:
        """The link events read within ``timeout`` seconds (returns at the first batch)."""
        fds = list(self.socks)
        if not fds:
            return []
        ready, _, _ = select.select(fds, [], [], max(0.0, timeout))
        now = time.monotonic()
        out: List[LinkEvent] = []
        for fd in ready:
            s, rid = self.socks[fd]
            try:
                data = s.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            for name, ok in parse_link_events(data):
                if not (name.startswith("to") and name[2:].isdigit()):
                    continue
                nbr = int(name[2:])
                if (rid, nbr) not in self.ends:
                    continue
                before = self._state(rid, nbr)
                self.ends[(rid, nbr)] = ok
                after = self._state(rid, nbr)
                if before != after:
                    a, b = link_key(rid, nbr)
                    out.append(LinkEvent("up" if after else "down", a, b, now,
                                         self.spec.routers[rid].netns, name))
        return out

    def close(self) -> None:
        for s, _ in self.socks.values():
            s.close()
        self.socks.clear()

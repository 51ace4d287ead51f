"""IPv6 addressing plans for the TPC agent's path tables (docs/srh-map.md §6).

The agent has no naming rule of its own: a router's segment is its **loopback** address and a
destination is a **host prefix** behind an edge router. An :class:`AddressPlan` gives both.

Default plan (:func:`default_plan`), all inside the unique-local block fc00::/7:

- ``t`` = the first 16 bits of SHA-256(topology name);
- ``r(router)`` = the first 32 bits of SHA-256(topology name, NUL, router name, NUL, attempt),
  ``attempt = 0`` unless that value is already taken (routers are visited in sorted name order,
  so collisions resolve the same way whatever order the input file lists them in);
- loopback of a router: ``fc00:<t>:<r hi>:<r lo>::1`` (one /128);
- host prefix of an edge router: ``fd00:<t>:<r hi>:<r lo>::/64`` (exactly one /64: the map key
  the agent looks up is the first 64 bits of the destination address).

Addresses depend only on the topology's name and the routers' names, never on router ids, so a
plan is stable when the input file lists nodes in another order.

User plan (:func:`read_plan`): a JSON file ``{"loopbacks": {router: address},
"prefixes": {router: [prefix, ...]}}`` (optional keys ``topology``, ``rule``, ``comment``).
:meth:`AddressPlan.to_json` writes the same shape, so a written ``plan.json`` can be read back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Union

from ..errors import PlanError
from ..io.bounded import read_bounded_text
from ..topology import Topology

__all__ = ["AddressPlan", "default_plan", "read_plan", "plan_from_dict",
           "LOOPBACK_BLOCK", "PREFIX_BLOCK"]

#: First 16 bits of every default loopback (fc00::/16, in the unique-local block fc00::/7).
LOOPBACK_BLOCK = 0xFC00
#: First 16 bits of every default host prefix (fd00::/16, in fc00::/7).
PREFIX_BLOCK = 0xFD00

_PLAN_KEYS = {"loopbacks", "prefixes", "topology", "rule", "comment"}


@dataclasses.dataclass
class AddressPlan:
    """Router loopbacks and edge-router host prefixes.

    Attributes
    ----------
    loopbacks
        Router name -> loopback address (the router's segment in an SRH).
    prefixes
        Router name -> host prefixes behind it (the destinations of the path table).
    source
        Where the plan comes from: ``"default"`` or a file name.
    topology
        Name of the topology the plan was made for ("" when unknown).
    rule
        A sentence describing how the addresses were chosen.
    """

    loopbacks: Dict[str, ipaddress.IPv6Address]
    prefixes: Dict[str, List[ipaddress.IPv6Network]]
    source: str = "default"
    topology: str = ""
    rule: str = ""

    def loopback(self, router: str) -> ipaddress.IPv6Address:
        """Loopback of ``router``; :class:`PlanError` when the plan has none."""
        try:
            return self.loopbacks[router]
        except KeyError:
            raise PlanError(self.source, f"no loopback for router {router!r}") from None

    def router_of(self, address: Union[str, ipaddress.IPv6Address]) -> Optional[str]:
        """The router whose loopback is ``address`` (``None`` when no router has it)."""
        cache = getattr(self, "_rev", None)
        if cache is None or cache[0] != len(self.loopbacks):
            cache = (len(self.loopbacks), {a: r for r, a in self.loopbacks.items()})
            self._rev = cache
        return cache[1].get(ipaddress.IPv6Address(address))

    def router_of_key(self, key: bytes) -> Optional[str]:
        """The router one of whose prefixes has the 8-byte map key ``key``."""
        for r, nets in self.prefixes.items():
            for n in nets:
                if n.network_address.packed[:8] == key:
                    return r
        return None

    def to_json(self) -> Dict[str, Any]:
        """The plan as the JSON object :func:`read_plan` accepts."""
        return {
            "topology": self.topology,
            "rule": self.rule or f"plan read from {self.source}",
            "loopbacks": {r: str(a) for r, a in self.loopbacks.items()},
            "prefixes": {r: [str(n) for n in nets] for r, nets in self.prefixes.items()},
        }

    def check(self, topo: Topology) -> None:
        """Check the plan against ``topo``: unknown routers, duplicate addresses or keys.

        Routers of the plan absent from ``topo`` are an error (a typo would otherwise go
        unnoticed); missing loopbacks or prefixes are reported where they are needed.
        """
        known = set(topo.names)
        for what, table in (("loopbacks", self.loopbacks), ("prefixes", self.prefixes)):
            for r in table:
                if r not in known:
                    raise PlanError(self.source, f"{what}: router {r!r} is not in topology "
                                    f"{topo.name!r} (after pruning)")


def _h(*parts: str) -> bytes:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).digest()


def default_plan(topo: Topology, *, routers: Optional[Iterable[str]] = None,
                 edge_routers: Optional[Iterable[str]] = None) -> AddressPlan:
    """The documented default plan (module docstring): hashes of topology and router names.

    Parameters
    ----------
    topo
        The topology (its name seeds the hashes).
    routers
        Routers that get a loopback (default: all of ``topo``).
    edge_routers
        Routers that get a host prefix (default: ``topo.edge_routers``).
    """
    names = sorted(set(topo.names if routers is None else routers))
    edges = set(topo.edge_routers if edge_routers is None else edge_routers)
    t = int.from_bytes(_h(topo.name)[:2], "big")
    taken: Dict[int, str] = {}
    loop: Dict[str, ipaddress.IPv6Address] = {}
    pref: Dict[str, List[ipaddress.IPv6Network]] = {}
    for name in names:
        attempt = 0
        while True:
            r = int.from_bytes(_h(topo.name, name, str(attempt))[:4], "big")
            if r not in taken:
                break
            attempt += 1
        taken[r] = name
        hi = (t << 32) | r  # bits 16..63 of both addresses
        loop[name] = ipaddress.IPv6Address((((LOOPBACK_BLOCK << 48) | hi) << 64) | 1)
        if name in edges:
            pref[name] = [ipaddress.IPv6Network((((PREFIX_BLOCK << 48) | hi) << 64, 64))]
    rule = ("default plan: t = first 16 bits of sha256(topology name); r = first 32 bits of "
            "sha256(topology name NUL router name NUL attempt), attempt 0 unless taken (routers "
            "in sorted name order); loopback fc00:t:r::1/128, edge-router host prefix "
            "fd00:t:r::/64")
    # keep the topology's router order in the written plan (readable), not the sorted order
    order = {n: i for i, n in enumerate(topo.names)}
    loop = dict(sorted(loop.items(), key=lambda kv: order.get(kv[0], len(order))))
    pref = dict(sorted(pref.items(), key=lambda kv: order.get(kv[0], len(order))))
    return AddressPlan(loop, pref, source="default", topology=topo.name, rule=rule)


def _address(where: str, router: str, value: Any) -> ipaddress.IPv6Address:
    if not isinstance(value, str):
        raise PlanError(where, f"loopbacks[{router!r}] = {value!r} is not a string")
    text = value.strip()
    if text.endswith("/128"):
        text = text[:-4]
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise PlanError(where, f"loopbacks[{router!r}] = {value!r} is not an IP address") from None
    if not isinstance(addr, ipaddress.IPv6Address):
        raise PlanError(where, f"loopbacks[{router!r}] = {value!r} is IPv4; segments are IPv6")
    if addr.is_unspecified or addr.is_multicast:
        raise PlanError(where, f"loopbacks[{router!r}] = {value!r} cannot be a segment "
                        f"(unspecified or multicast)")
    return addr


def _network(where: str, router: str, value: Any) -> ipaddress.IPv6Network:
    if not isinstance(value, str):
        raise PlanError(where, f"prefixes[{router!r}]: {value!r} is not a string")
    try:
        net = ipaddress.ip_network(value.strip(), strict=True)
    except ValueError as exc:
        raise PlanError(where, f"prefixes[{router!r}]: {value!r} is not a valid prefix "
                        f"({exc})") from None
    if not isinstance(net, ipaddress.IPv6Network):
        raise PlanError(where, f"prefixes[{router!r}]: {value!r} is IPv4; the agent maps "
                        f"IPv6 destinations")
    return net


def plan_from_dict(data: Any, *, where: str = "plan") -> AddressPlan:
    """Validate a plan given as a dict (the JSON shape of :func:`read_plan`)."""
    if not isinstance(data, dict):
        raise PlanError(where, "a plan is a JSON object with 'loopbacks' and 'prefixes'")
    extra = sorted(set(data) - _PLAN_KEYS)
    if extra:
        raise PlanError(where, f"unknown key {extra[0]!r} (expected loopbacks, prefixes, and "
                        f"optionally topology, rule, comment)")
    lb = data.get("loopbacks")
    pf = data.get("prefixes", {})
    if not isinstance(lb, dict):
        raise PlanError(where, "'loopbacks' must be an object {router: address}")
    if not isinstance(pf, dict):
        raise PlanError(where, "'prefixes' must be an object {router: [prefix, ...]}")
    loop = {str(r): _address(where, str(r), a) for r, a in lb.items()}
    seen: Dict[ipaddress.IPv6Address, str] = {}
    for r, a in loop.items():
        if a in seen:
            raise PlanError(where, f"loopback {a} is given to both {seen[a]!r} and {r!r}")
        seen[a] = r
    pref: Dict[str, List[ipaddress.IPv6Network]] = {}
    for r, nets in pf.items():
        if isinstance(nets, str):
            nets = [nets]
        if not isinstance(nets, list):
            raise PlanError(where, f"prefixes[{r!r}] must be a list of prefixes, got {nets!r}")
        pref[str(r)] = [_network(where, str(r), n) for n in nets]
    owner: Dict[ipaddress.IPv6Network, str] = {}
    for r, nets in pref.items():
        for n in nets:
            for other, o in owner.items():
                if n.overlaps(other):
                    raise PlanError(where, f"prefix {n} of {r!r} overlaps {other} of {o!r}")
            owner[n] = r
    return AddressPlan(loop, pref, source=where, topology=str(data.get("topology") or ""),
                       rule=str(data.get("rule") or ""))


#: Largest plan file read: a loopback and a few prefixes per router (100,000 routers: about 10 MiB).
MAX_PLAN_BYTES = 64 << 20


def read_plan(path: Union[str, os.PathLike]) -> AddressPlan:
    """Read a user plan: ``{"loopbacks": {router: addr}, "prefixes": {router: [prefix, ...]}}``.

    Loopbacks are IPv6 addresses (``"/128"`` accepted), prefixes IPv6 networks without host bits
    set. Errors (:class:`PlanError`) name the file and the bad value.
    """
    p = Path(path)

    def refused(file: str, line: Optional[int], what: str) -> Exception:
        return PlanError(file if line is None else f"{file}:{line}", what)

    # bounded: a regular file of at most MAX_PLAN_BYTES (a FIFO or a device is said so)
    text = read_bounded_text(p, MAX_PLAN_BYTES, what="plan", error=refused)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{p}:{exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise PlanError(str(p), "JSON nested too deep (no plan is)") from None
    return plan_from_dict(data, where=str(p))

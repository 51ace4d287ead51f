"""The kernel's MPTCP (``IPPROTO_MPTCP``) on the emulated network: subflows and counters.

- **subflows**: the source router gets K - 1 more addresses of its host prefix on ``lo``, each an
  in-kernel path-manager endpoint with the ``subflow`` flag (``ip mptcp endpoint add ADDR
  subflow``; not ``dev lo``: a subflow bound to ``lo`` cannot leave the router), and both ends
  raise ``ip mptcp limits``. Each subflow has its own source address and port, so the routers'
  ECMP hash (the 5-tuple with a seed per namespace: independent per-hop choices, as the
  ``mptcp:K`` model assumes) places each on one path; two subflows may land on the same path.
- **counters**: the ``MPTcpExt`` group of ``/proc/net/netstat``, read in-process inside each
  namespace (joins completed, stale subflows, reinjections).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Dict, List, Optional, Sequence, Tuple

from ...errors import UsageError
from . import kernel
from .spec import NetworkSpec

__all__ = ["MAX_SUBFLOWS", "subflow_lines", "enable_subflows", "mptcp_counters",
           "mptcp_available"]

#: The kernel's limit on subflows per connection (``ip mptcp limits``).
MAX_SUBFLOWS = 8


def subflow_lines(spec: NetworkSpec, sources: Sequence[str], destinations: Sequence[str],
                  k: int) -> List[Tuple[str, List[str]]]:
    """Per namespace, the ``ip -batch`` lines giving every source's MPTCP connections ``k``
    subflows (module docstring): limits on both ends; on each source, its endpoints flushed,
    then ``k - 1`` extra addresses (``addr replace``: running it again for another K is fine)
    and their endpoints. Namespaces in first-seen order."""
    if not 1 <= int(k) <= MAX_SUBFLOWS:
        raise UsageError(f"subflows {k}: the kernel allows 1 to {MAX_SUBFLOWS} per connection")
    out: Dict[str, List[str]] = {}
    for name in dict.fromkeys(list(sources) + list(destinations)):
        out.setdefault(spec.router(name).netns, []).append(
            f"mptcp limits set subflow {MAX_SUBFLOWS} add_addr_accepted {MAX_SUBFLOWS}")
    for name in dict.fromkeys(sources):
        r = spec.router(name)
        if not r.prefixes:
            raise UsageError(f"router {name!r} has no host prefix for extra subflow addresses")
        lines = out.setdefault(r.netns, [])
        lines.append("mptcp endpoint flush")
        base = spec.host(name)
        taken = {r.loopback, *r.hosts}
        extra = 0
        for i in range(1, 1 << 16):
            if extra == k - 1:
                break
            a = ipaddress.IPv6Address(int(base) + i)
            if a in taken or a not in r.prefixes[0]:
                continue
            lines += [f"addr replace {a}/128 dev lo", f"mptcp endpoint add {a} subflow"]
            extra += 1
    return list(out.items())


def enable_subflows(spec: NetworkSpec, sources: Sequence[str], destinations: Sequence[str],
                    k: int) -> None:
    """Run :func:`subflow_lines` in the built network (one ``ip -batch`` per namespace)."""
    for ns, lines in subflow_lines(spec, sources, destinations, k):
        kernel.run_batch("ip", lines, netns=ns, label=f"MPTCP subflows, K = {k}")


def mptcp_counters(spec: NetworkSpec, routers: Sequence[str], names: Sequence[str]
                   ) -> Dict[str, int]:
    """The kernel's ``MPTcpExt`` counters ``names`` summed over the ``routers``' namespaces
    (a counter this kernel lacks reads 0)."""
    got = kernel.netstat_counters([spec.router(r).netns for r in dict.fromkeys(routers)],
                                  "MPTcpExt")
    return {n: sum(c.get(n, 0) for c in got.values()) for n in names}


def mptcp_available() -> Optional[str]:
    """``None`` when this kernel opens MPTCP sockets, else why not."""
    try:
        socket.socket(socket.AF_INET6, socket.SOCK_STREAM, kernel.IPPROTO_MPTCP).close()
    except OSError as exc:
        return (f"no MPTCP sockets ({exc.strerror or exc}; kernel CONFIG_MPTCP, sysctl "
                "net.mptcp.enabled=1)")
    return None

"""The study's paths on a real Linux SRv6 data plane (``tpcstudy emulate``; needs root).

Everything the LPs and the exported path tables claim, tried with real packets and real TCP on
one machine: one network namespace per router, one veth pair per link, IPv6 multipath routes
from tpcstudy's own shortest-path DAGs, per-direction shaping, SRv6 everywhere.

Three layers; each imports only the ones before it (``docs/emulator.md``; a test checks it):

1. :mod:`~tpcstudy.emulate.network`: the network as data, every call into the kernel, the
   lifecycle that always tears it down, the hand-made networks of the papers;
2. :mod:`~tpcstudy.emulate.agent`: the traffic agent, real TCP between the emulated hosts (its
   protocol, its process, the emulator's client);
3. :mod:`~tpcstudy.emulate.experiments`: throughput against the LP, table verification,
   failover, SEMPER's dumbbell and fault test, the host policies, all run by one harness.

The command is :mod:`tpcstudy.cli.emulate`; the figures are in :mod:`tpcstudy.plotting.emulation`.
The names below are imported on first use (the agent's processes import this package too).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .network.lifecycle import Emulation, clean, new_prefix
    from .network.live import Network
    from .network.spec import NetworkSpec, network_spec

__all__ = ["Emulation", "clean", "new_prefix", "NetworkSpec", "network_spec", "Network"]

_LAZY = {"Emulation": "network.lifecycle", "clean": "network.lifecycle",
         "new_prefix": "network.lifecycle", "NetworkSpec": "network.spec",
         "network_spec": "network.spec", "Network": "network.live"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)

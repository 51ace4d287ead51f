"""The study's paths on a real Linux SRv6 data plane (``tpcstudy emulate``; needs root).

Everything the LPs and the exported path tables claim, tried with real packets and real TCP on
one machine: one network namespace per router, one veth pair per link, IPv6 multipath routes
from tpcstudy's own shortest-path DAGs, per-direction shaping, SRv6 everywhere.

- :mod:`~tpcstudy.emulate.spec`: the network as data (namespaces, interfaces, addresses, routes,
  queues, sysctls) and the exact ``ip``/``tc`` batch lines that build it (no root needed);
- :mod:`~tpcstudy.emulate.netns`: the kernel plumbing (``setns``, ``ip -batch``, ``/proc``);
- :mod:`~tpcstudy.emulate.lifecycle`: :class:`Emulation` (build, always tear down), run records
  and :func:`clean` for what a killed run left;
- :mod:`~tpcstudy.emulate.checks`: what the machine must have, probed before building;
- :mod:`~tpcstudy.emulate.agent` and :mod:`~tpcstudy.emulate.traffic`: real TCP between the
  emulated hosts (per-socket SRH, cubic, abortive close) and what the receivers measured;
- :mod:`~tpcstudy.emulate.srh`: SRH bytes for sockets, as the TPC agent gives them the kernel;
- :mod:`~tpcstudy.emulate.placement` and :mod:`~tpcstudy.emulate.throughput`: connections on
  each model's LP solution, goodput against the LP;
- :mod:`~tpcstudy.emulate.verify`: does an exported path table route, do its maps load;
- :mod:`~tpcstudy.emulate.failover`: NRTOChanger, TimeoutChanger and plain TCP when a link of
  the connection's path fails;
- :mod:`~tpcstudy.emulate.scenarios`: hand-made networks (the TPC paper's Figure 4);
- :mod:`~tpcstudy.emulate.runs`: runs with results folders (meta.json, results.csv, resumable).

Their summaries are in :mod:`tpcstudy.study.emulation`, their figures in
:mod:`tpcstudy.plotting.emulation`, the command in :mod:`tpcstudy.cli.emulate`.
"""

from .lifecycle import Emulation, clean, new_prefix
from .spec import NetworkSpec, network_spec

__all__ = ["Emulation", "clean", "new_prefix", "NetworkSpec", "network_spec"]

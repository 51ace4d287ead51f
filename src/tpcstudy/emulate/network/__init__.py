"""The emulator's first layer: the network (it imports nothing of the agent or the experiments).

- :mod:`~.spec`: the network as data (namespaces, interfaces, addresses, routes, queues,
  sysctls) and the exact ``ip``/``tc`` batch lines that build it (no root needed);
- :mod:`~.kernel`: every call into the kernel (``setns``, ``ip -batch``, ``/proc``, socket
  options);
- :mod:`~.netlink`: rtnetlink read in-process (queue backlogs);
- :mod:`~.lifecycle`: :class:`~.lifecycle.Emulation` (build, always tear down), run records and
  :func:`~.lifecycle.clean` for what a killed run left;
- :mod:`~.checks`: what the machine must have, probed before building; what results record;
- :mod:`~.handmade`: the papers' hand-made networks (six-paths, dumbbell, two-sites);
- :mod:`~.srh`: Segment Routing Headers as the kernel takes them;
- :mod:`~.mptcp`: the kernel's MPTCP (subflow endpoints, counters).
"""

"""tpcstudy's BPF host agent: the path tables ``tpcstudy export --format bpf`` writes, used by the
TCP connections of stock Linux hosts (``tpcstudy agent``; the emulator's ``--agent bpf``).

- ``bpf/tpc_hostagent.bpf.c``: the programs (sockops on the host's cgroup picks each
  connection's path; tc egress inserts its SRH and routes it), one object per exported layout;
- :mod:`~.program`: building the objects (at install, or on first use into the data cache);
- :mod:`~.maps`: the programs' own maps and the load-time policy, byte for byte;
- :mod:`~.bpffs`: ``bpftool``/``tc`` steps as argument vectors, on the host's bpffs or a
  private one;
- :mod:`~.record`: the install record, written before each step of a load;
- :mod:`~.loader`: load for one host from an exported table, counters, unload (only what the
  agent made, checked by inode, id and name);
- :mod:`~.update`: a new table swapped in atomically while the programs stay attached;
- :mod:`~.slots`: the slot a connection an update moves is given (``repath``, ``rehash``),
  in Python, step for step as the programs choose it;
- :mod:`~.bpfsys`: the few ``bpf(2)`` commands the updates need, called directly.

How it works and what it guarantees: ``docs/hostagent.md``.
"""

"""The BPF host agent (:mod:`tpcstudy.hostagent`) on the emulated hosts: one program, one table
and one cgroup per source router, loaded from an exported table unchanged.

Every emulated host has the same pin paths (the export's, e.g. ``/sys/fs/bpf/tpc/dest_map``),
so each is loaded in a private bpffs of its own (``private=True``): nothing is pinned on the
machine's bpffs, the programs stay attached to the router's cgroup and interfaces (found again by
id), and they go with the run: the namespaces' deletion removes the tc filters, the cgroups'
removal detaches the sockops program, and the kernel frees the maps with the last program.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence

from ...export.bpf import read_index
from ...hostagent.loader import Install, load
from ...hostagent.maps import SlotPolicy
from .lifecycle import Emulation
from .spec import HOST_NIC

__all__ = ["install_agents", "table_hosts", "check_bpf_table"]


def table_hosts(table: Path) -> Sequence[str]:
    """The source routers the table has bpf files for."""
    dirs = sorted(d for d in Path(table).glob("bpf-*") if (d / "index.json").is_file())
    return list(read_index(dirs[0])[1]) if dirs else []


def check_bpf_table(table: Path) -> Sequence[str]:
    """The source routers of ``table``'s bpf maps, or a :class:`UsageError` when it has none:
    ``--install bpf`` of a table without them would load nothing."""
    from ...errors import UsageError
    from ...export.bpf import read_index

    dirs = sorted(d for d in Path(table).glob("bpf-*") if (d / "index.json").is_file())
    if not dirs:
        raise UsageError(f"{table}: no bpf maps (no bpf-<variant>/index.json): export it with "
                         f"--format bpf for --install bpf")
    hosts = list(read_index(dirs[0])[1])
    if not hosts:
        raise UsageError(f"{dirs[0]}/index.json: no source router has a table")
    return hosts


def install_agents(emu: Emulation, table: Path, *, policy: SlotPolicy,
                   routers: Optional[Sequence[str]] = None,
                   rto_min_ms: Optional[float] = None) -> Dict[str, Install]:
    """Load the agent on every source router of ``table`` (or ``routers``) of ``emu``'s
    network: its cgroup (:meth:`Emulation.cgroup`), its namespace, and the hosts' NIC
    (:data:`~tpcstudy.emulate.network.spec.HOST_NIC`: every locally generated packet leaves
    by it; the agent's fib lookup then redirects the packet to the link of its first segment);
    ``rto_min_ms``: every agent's minimum RTO (None: the kernel's)."""
    out: Dict[str, Install] = {}
    for name in routers if routers is not None else check_bpf_table(table):
        r = emu.spec.router(name)
        out[name] = load(table, name, str(emu.cgroup(name)), policy=policy, netns=r.netns,
                         interfaces=[HOST_NIC] if r.hosts else [i.name for i in r.interfaces],
                         private=True, rto_min_ms=rto_min_ms,
                         name=f"{emu.spec.prefix}r{r.id}")
    return out

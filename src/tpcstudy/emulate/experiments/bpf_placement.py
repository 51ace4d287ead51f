"""The LP's placement handed to tpcstudy's BPF host agents (``emulate --agent bpf``): the
connections of each pair as a path table whose weights are the connection counts, so that the
agents' weighted round robin gives each path exactly its connections, and the plain sockets that
run in each source router's cgroup."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from ...export import write_paths
from ...export.layout import encode_value
from ...export.table import Entry, PathRecord, PathTable
from ...hostagent.loader import reconfigure
from ...hostagent.maps import SlotPolicy
from ..agent.client import Transfer
from ..network.hostagent import install_agents
from ..network.lifecycle import Emulation
from .placement import Placement

__all__ = ["BPF_VARIANT", "placement_table", "bpf_transfers"]

#: The layout the BPF host agents get the placement in (it carries weights).
BPF_VARIANT = "exp3_lowest_completion"


def placement_table(emu: Emulation, placement: Placement) -> PathTable:
    """The placement as a path table for the BPF host agents: per pair, its distinct paths
    (segments as the connections carry them) weighted by their connection counts, so that the
    agents' weighted round robin gives each path exactly its connections."""
    plan = emu.spec.plan
    counts: Dict[Tuple[str, str], Dict[Tuple[str, ...], int]] = {}
    nodes: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
    for c in placement.connections:
        if c.segments:
            per = counts.setdefault((c.source, c.destination), {})
            per[c.segments] = per.get(c.segments, 0) + 1
            nodes[c.segments] = c.path
    entries = [Entry(s, t, plan.prefixes[t][0],
                     [PathRecord(list(nodes[segs]), [plan.loopback(w) for w in segs], list(segs),
                                 0.0, 0.0, 0.0, weight=float(n)) for segs, n in per.items()])
               for (s, t), per in counts.items()]
    return PathTable(emu.spec.topology.name, entries, plan, k=9, max_paths=8,
                     meta={"select": "the LP's placement; weights = connections per path"})


def bpf_transfers(emu: Emulation, placement: Placement) -> List[Transfer]:
    """Plain sockets in their source router's cgroup, whose BPF host agent gives them the
    placement's paths (:func:`placement_table`, weighted round robin): loaded on first use,
    re-filled for each model (every agent of the network emptied first)."""
    table = placement_table(emu, placement)
    wrr = SlotPolicy("wrr")
    with tempfile.TemporaryDirectory(prefix="tpcstudy-placement-") as tmp:
        if table.entries:
            write_paths(table, tmp, formats="bpf", variant=BPF_VARIANT)
        new = [s for s in table.sources if s not in emu.agents]
        if new:
            emu.agents.update(install_agents(emu, Path(tmp), policy=wrr, routers=new))
        for src, inst in emu.agents.items():
            if src in new:
                continue
            recs = [(e.key, encode_value(e.prefix, e.paths, BPF_VARIANT))
                    for e in table.entries if e.source == src]
            reconfigure(inst, policy=wrr, records=recs)
    return [Transfer(c.id, c.source, c.destination, cgroup=str(emu.cgroup(c.source)))
            for c in placement.connections]

"""Atomic table updates of a loaded agent (``tpcstudy agent update NAME --table T2``).

The programs read the table through ``tpc_tables``, an ``ARRAY_OF_MAPS`` of one entry whose
inner map is the table (``bpf/tpc_hostagent.bpf.c``: a program takes the table once per event,
then reads its entries). An update never writes the table in use:

1. ``ready``: the new records checked (the install's value size, at most the map's entries, no
   key twice), nothing created yet;
2. ``filled``: a new inner map made with the current table's type, sizes and flags, every
   record written into it (one ``BPF_MAP_UPDATE_BATCH``), the count checked;
3. ``swapped``: ``tpc_tables[0]`` set to the new map, ONE map update: a program that took the
   old table finishes with it, every later one takes the new; then the generation
   (``tpc_gen``) and, if it changed, the longest SRH (listeners' room) in ``tpc_config``;
4. ``done``: the new map's descriptor closed (the outer map holds it); the old table's last
   reference (its pin, for the table loaded first) dropped, so the kernel frees it once no
   program uses it.

A failure before 3 releases the new map and leaves the agent exactly as it was; a process
killed before 3 leaves nothing (the new map lives only through its descriptor). Connections:
tc egress sees the generation change on the next packet of each connection and keeps its path
when its slot still holds the same SRH (the same waypoints), else moves it to the entry's first
valid slot (``repath``) or marks it for its next RTO (``keep``): ``tpc_stats`` counts both.

:class:`Update` is the state machine over a :class:`Kernel` (the real one:
:class:`BpfKernel`); :func:`diff_tables` says what an update changes, slot by slot.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

from ..errors import HostAgentError, UsageError
from ..export import VARIANTS
from ..export.layout import SLOT_SIZE, SLOTS_OFFSET
from . import bpfsys
from . import maps as M
from .record import Install

__all__ = ["TableDiff", "diff_tables", "slot_srhs", "Kernel", "Update", "BpfKernel",
           "swap_table", "read_current", "STATES"]

Records = Sequence[Tuple[bytes, bytes]]
STATES = ("ready", "filled", "swapped", "done", "failed")
_SRH = 24  # offset of the SRH field in a path record


def slot_srhs(value: bytes) -> List[Optional[bytes]]:
    """Each slot's 168-byte SRH field when the programs count the slot valid (``slot_ok``:
    is_valid, type 4, 1 <= first_segment <= 9, hdrlen = 2 (first_segment + 1)), else None."""
    out: List[Optional[bytes]] = []
    for i in range(8):
        off = SLOTS_OFFSET + SLOT_SIZE * i
        rec = value[off:off + SLOT_SIZE]
        srh = rec[_SRH:_SRH + M.SRH_FIELD]
        ok = (len(rec) == SLOT_SIZE and int.from_bytes(rec[4:8], "little") != 0
              and srh[2] == 4 and 1 <= srh[4] <= 9 and srh[1] == 2 * (srh[4] + 1))
        out.append(bytes(srh) if ok else None)
    return out


@dataclasses.dataclass
class TableDiff:
    """What replacing table ``old`` by ``new`` changes for connections: per destination key
    added, removed, changed (any byte) or unchanged; per (destination, valid slot) of ``old``
    whether the slot still holds the same SRH (a connection on it keeps its path) or not (it
    moves: ``repath`` / ``keep``)."""

    added: List[bytes]
    removed: List[bytes]
    changed: List[bytes]
    unchanged: int
    slots_kept: int
    slots_moved: int

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} "
                f"changed, {self.unchanged} unchanged destinations; {self.slots_kept} paths "
                f"kept, {self.slots_moved} moved")


def diff_tables(old: Records, new: Records) -> TableDiff:
    o, n = dict(old), dict(new)
    added = sorted(k for k in n if k not in o)
    removed = sorted(k for k in o if k not in n)
    changed = sorted(k for k in o if k in n and o[k] != n[k])
    kept = moved = 0
    for k, v in o.items():
        nv = slot_srhs(n[k]) if k in n else [None] * 8
        for i, srh in enumerate(slot_srhs(v)):
            if srh is None:
                continue
            if nv[i] == srh:
                kept += 1
            else:
                moved += 1
    return TableDiff(added, removed, changed, len(o) - len(removed) - len(changed), kept, moved)


class Kernel(Protocol):
    """What an update needs: the table in use, a new one made and filled aside, the swap."""

    def template(self) -> Dict[str, Any]: ...  # the table in use: id, value_size, max_entries

    def create(self) -> Any: ...

    def fill(self, table: Any, records: Records) -> int: ...

    def swap(self, table: Any) -> int: ...  # the new table's id

    def generation(self) -> int: ...

    def set_generation(self, gen: int) -> None: ...

    def set_max_srh(self, max_srh: int, on_update: Optional[str]) -> None: ...

    def release(self, table: Any, old_id: Optional[int]) -> None: ...


@dataclasses.dataclass
class Update:
    """One table update (module docstring): ``run`` goes ready -> filled -> swapped -> done,
    or to ``failed`` with the agent unchanged when the failure comes before the swap."""

    kernel: Kernel
    records: List[Tuple[bytes, bytes]]
    max_srh: int
    on_update: Optional[str] = None
    state: str = "ready"
    old_id: Optional[int] = None
    new_id: Optional[int] = None
    generation: int = 0
    swap_ms: float = 0.0
    update_ms: float = 0.0

    def check(self, value_size: int, max_entries: int) -> None:
        bad = next((k for k, v in self.records if len(k) != 8 or len(v) != value_size), None)
        if bad is not None:
            raise UsageError(f"entry {bad.hex()[:16]}: the agent's table takes 8-byte keys and "
                             f"{value_size}-byte values")
        if len(self.records) > max_entries:
            raise UsageError(f"{len(self.records)} entries: the agent's table holds "
                             f"{max_entries}")
        keys = [k for k, _ in self.records]
        if len(set(keys)) != len(keys):
            raise UsageError("a destination key appears twice in the new table")

    def run(self) -> "Update":
        if self.state != "ready":
            raise HostAgentError(f"an update in state {self.state!r} cannot run again")
        tpl = self.kernel.template()
        self.old_id = tpl.get("id")
        self.check(int(tpl["value_size"]), int(tpl["max_entries"]))
        t0 = time.perf_counter()
        table = self.kernel.create()
        try:
            n = self.kernel.fill(table, self.records)
            if n != len(self.records):
                raise HostAgentError(f"the new table took {n} of {len(self.records)} entries")
            self.state = "filled"
            gen = self.kernel.generation() + 1
            t1 = time.perf_counter()
            self.new_id = self.kernel.swap(table)
            self.swap_ms = (time.perf_counter() - t1) * 1e3
        except BaseException:
            self.state = "failed"
            self.kernel.release(table, None)  # the new table goes; the agent is unchanged
            raise
        self.state = "swapped"
        self.kernel.set_generation(gen)
        self.kernel.set_max_srh(self.max_srh, self.on_update)
        self.generation = gen
        self.update_ms = (time.perf_counter() - t0) * 1e3
        self.kernel.release(table, self.old_id)
        self.state = "done"
        return self


class BpfKernel:
    """The real kernel side of an update for a loaded install: its maps opened by pin (its own
    folder) or by the recorded id, each checked to be the install's (name, type, id)."""

    def __init__(self, inst: Install) -> None:
        self.inst = inst
        self.fds: Dict[str, bpfsys.Fd] = {}
        for m in ("tpc_tables", "tpc_gen", "tpc_config"):
            self.fds[m] = self._open(m)
        self.table_name = VARIANTS[inst.variant].map_name

    def _open(self, name: str) -> bpfsys.Fd:
        ident = self.inst.map_ids.get(name)
        try:
            fd = bpfsys.map_by_id(int(ident or 0))
        except OSError:
            raise HostAgentError(f"agent {self.inst.name}: its map {name} (id {ident}) is gone "
                                 f"(unloaded?)") from None
        info = bpfsys.map_info(fd)
        if info["name"] != name:
            fd.close()
            raise HostAgentError(f"agent {self.inst.name}: map id {ident} is {info['name']!r}, "
                                 f"not its {name} (unloaded?)")
        return fd

    def close(self) -> None:
        for fd in self.fds.values():
            fd.close()

    def template(self) -> Dict[str, Any]:
        ident = int.from_bytes(bpfsys.lookup(self.fds["tpc_tables"], bytes(4), 4), "little")
        with bpfsys.map_by_id(ident) as fd:
            info = bpfsys.map_info(fd)
        if info["value_size"] != self.inst.value_size:
            raise HostAgentError(f"agent {self.inst.name}: its table has "
                                 f"{info['value_size']}-byte values, the record says "
                                 f"{self.inst.value_size}")
        self._tpl = info
        return info

    def create(self) -> bpfsys.Fd:
        t = self._tpl
        return bpfsys.map_create(int(t["type"]), int(t["key_size"]), int(t["value_size"]),
                                 int(t["max_entries"]), name=self.table_name,
                                 flags=int(t["flags"]))

    def fill(self, table: bpfsys.Fd, records: Records) -> int:
        return bpfsys.update_batch(table, records)

    def swap(self, table: bpfsys.Fd) -> int:
        bpfsys.update(self.fds["tpc_tables"], bytes(4), int(table).to_bytes(4, "little"))
        return int(bpfsys.map_info(table)["id"])

    def generation(self) -> int:
        return int.from_bytes(bpfsys.lookup(self.fds["tpc_gen"], bytes(4), 4), "little")

    def set_generation(self, gen: int) -> None:
        bpfsys.update(self.fds["tpc_gen"], bytes(4), gen.to_bytes(4, "little"))

    def set_max_srh(self, max_srh: int, on_update: Optional[str]) -> None:
        fd = self.fds["tpc_config"]
        cfg = bytearray(bpfsys.lookup(fd, bytes(4), M.CONFIG.size))
        new = bytearray(cfg)
        new[20:24] = max_srh.to_bytes(4, "little")
        if on_update is not None:
            new[24:28] = M.ON_UPDATE[on_update].to_bytes(4, "little")
        if new != cfg:
            bpfsys.update(fd, bytes(4), bytes(new))

    def set_on_update(self, on_update: str) -> None:
        """Before a swap: how connections whose path it removes are treated."""
        fd = self.fds["tpc_config"]
        cfg = bytearray(bpfsys.lookup(fd, bytes(4), M.CONFIG.size))
        cfg[24:28] = M.ON_UPDATE[on_update].to_bytes(4, "little")
        bpfsys.update(fd, bytes(4), bytes(cfg))

    def release(self, table: bpfsys.Fd, old_id: Optional[int]) -> None:
        table.close()
        if old_id is None or not self.inst.pin_dir:
            return
        # the table loaded first is pinned in the agent's own folder: its last reference
        from .loader import _own_pin_dir, _unpin

        pin = f"{self.inst.pin_dir}/maps/{self.table_name}"
        if _own_pin_dir(self.inst):
            try:
                with bpfsys.obj_get(pin) as fd:
                    pinned = bpfsys.map_info(fd)["id"]
            except OSError:
                return
            if pinned == old_id:
                _unpin(pin, "map", (self.table_name,))


def read_current(inst: Install) -> List[Tuple[bytes, bytes]]:
    """The records of the table the agent uses now."""
    from .loader import current_table

    with bpfsys.map_by_id(current_table(inst)) as fd:
        return [(k, bpfsys.lookup(fd, k, inst.value_size)) for k in bpfsys.keys(fd, 8)]


def swap_table(inst: Install, records: Records, *, on_update: Optional[str] = None
               ) -> Update:
    """Replace ``inst``'s table by ``records`` (module docstring); ``inst`` updated (its
    generation, swap time and duration, the table's map id, entries)."""
    from .loader import _max_srh

    if on_update is not None and on_update not in M.ON_UPDATE:
        raise UsageError(f"--on-update {on_update!r}: choose from {', '.join(M.ON_UPDATE)}")
    k = BpfKernel(inst)
    try:
        if on_update is not None:
            k.set_on_update(on_update)
        up = Update(k, list(records), _max_srh(records), on_update).run()
    finally:
        k.close()
    inst.generation = up.generation
    inst.swapped_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    inst.swap_ms, inst.update_ms = round(up.swap_ms, 4), round(up.update_ms, 4)
    inst.updates += 1
    inst.entries = len(records)
    if up.new_id:
        inst.map_ids[VARIANTS[inst.variant].map_name] = up.new_id
    if on_update is not None:
        inst.on_update = on_update
    return up

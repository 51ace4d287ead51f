"""Atomic table updates of a loaded agent (``tpcstudy agent update NAME --table T2``).

The programs read their table through ``tpc_tables``, an ``ARRAY_OF_MAPS`` of two tables of
the same layout, and ``tpc_gen``, the generation of the table in use, which is
``tpc_tables[generation & 1]`` (``bpf/tpc_hostagent.bpf.c``: a program reads the generation
once per event, then takes that table's entries). The other table is the standby. An update
never writes the table in use:

1. ``ready``: the new records checked (the install's value size, at most the map's entries, no
   key twice); the standby found empty (else, after an update killed half-way, emptied after an
   RCU grace period);
2. ``filled``: every record written into the standby (one ``BPF_MAP_UPDATE_BATCH``), the count
   checked;
3. ``swapped``: ``tpc_gen = generation + 1``, ONE map update of four bytes: a program that
   read the old generation finishes with the old table, every later one takes the new; then the
   longest SRH (listeners' room) in ``tpc_config`` if it changed;
4. ``done``: after an RCU grace period (forced by writing the old table's slot of
   ``tpc_tables`` with the same map, which returns once no program that could have read the
   old table still runs) the old table is emptied (``BPF_MAP_DELETE_BATCH``): it is the
   standby of the next update.

The swap costs microseconds; the grace period (milliseconds) comes after it, off the path of
the new table. A failure before 3 empties the standby and leaves the agent exactly as it was;
a process killed at any point leaves a working agent (the next update empties the standby
first). Connections: tc egress sees the generation change on the next packet of each
connection and keeps its path when its slot still holds the same SRH (the same waypoints), else
moves it to the entry's first valid slot (``repath``) or marks it for its next RTO (``keep``):
``tpc_stats`` counts both.

:class:`Update` is the state machine over a :class:`Kernel` (the real one:
:class:`BpfKernel`); :func:`diff_tables` says what an update changes, slot by slot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import fcntl
import os
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Protocol, Sequence, Tuple

from ..errors import HostAgentError, UsageError
from ..export import VARIANTS
from ..export.layout import SLOT_SIZE, SLOTS_OFFSET
from . import bpfsys
from . import maps as M
from .record import Install

__all__ = ["TableDiff", "diff_tables", "slot_srhs", "Kernel", "Update", "BpfKernel",
           "swap_table", "read_current", "update_saved", "STATES"]

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
    """What an update needs: the table in use, the standby filled aside, the swap."""

    def template(self) -> Dict[str, Any]: ...  # the table in use: id, value_size, max_entries

    def create(self) -> Any: ...  # the standby, empty and read by no program

    def fill(self, table: Any, records: Records) -> int: ...

    def generation(self) -> int: ...

    def swap(self, table: Any, gen: int) -> int: ...  # ONE map update; the new table's id

    def set_max_srh(self, max_srh: int, on_update: Optional[str]) -> None: ...

    def release(self, table: Any, old_id: Optional[int]) -> float: ...  # ms of the cleanup


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
    cleanup_ms: float = 0.0

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
            self.new_id = self.kernel.swap(table, gen)
            t2 = time.perf_counter()
        except BaseException:
            self.state = "failed"
            self.kernel.release(table, None)  # the standby emptied; the agent is unchanged
            raise
        self.state = "swapped"
        self.swap_ms, self.update_ms = (t2 - t1) * 1e3, (t2 - t0) * 1e3
        self.generation = gen
        self.kernel.set_max_srh(self.max_srh, self.on_update)
        self.cleanup_ms = self.kernel.release(table, self.old_id)
        self.state = "done"
        return self


class BpfKernel:
    """The real kernel side of an update for a loaded install: its maps opened by the recorded
    ids, each checked to be the install's (its name)."""

    def __init__(self, inst: Install) -> None:
        self.inst = inst
        self.fds: Dict[str, bpfsys.Fd] = {}
        try:
            for m in ("tpc_tables", "tpc_gen", "tpc_config"):
                self.fds[m] = self._open(m)
        except BaseException:
            self.close()
            raise
        self.tables: Dict[int, bpfsys.Fd] = {}

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
        for fd in [*self.fds.values(), *getattr(self, "tables", {}).values()]:
            fd.close()

    def _slot(self, slot: int) -> bpfsys.Fd:
        if slot not in self.tables:
            ident = int.from_bytes(bpfsys.lookup(self.fds["tpc_tables"],
                                                 slot.to_bytes(4, "little"), 4), "little")
            self.tables[slot] = bpfsys.map_by_id(ident)
        return self.tables[slot]

    def generation(self) -> int:
        return int.from_bytes(bpfsys.lookup(self.fds["tpc_gen"], bytes(4), 4), "little")

    def template(self) -> Dict[str, Any]:
        self.gen = self.generation()
        info = bpfsys.map_info(self._slot(self.gen & 1))
        if info["value_size"] != self.inst.value_size:
            raise HostAgentError(f"agent {self.inst.name}: its table has "
                                 f"{info['value_size']}-byte values, the record says "
                                 f"{self.inst.value_size}")
        return info

    def grace_period(self, slot: int) -> float:
        """Return once no program that could have read tpc_tables[slot] still runs: the slot
        written with its own map (the kernel waits for an RCU grace period after an update
        of a map of maps). Its duration in ms."""
        t0 = time.perf_counter()
        fd = self._slot(slot)
        bpfsys.update(self.fds["tpc_tables"], slot.to_bytes(4, "little"),
                      int(fd).to_bytes(4, "little"))
        return (time.perf_counter() - t0) * 1e3

    def _empty(self, fd: bpfsys.Fd) -> None:
        keys = bpfsys.keys(fd, 8, 1 << 16)
        if keys:
            bpfsys.delete_batch(fd, keys)

    def create(self) -> bpfsys.Fd:
        slot = 1 - (self.gen & 1)
        fd = self._slot(slot)
        if bpfsys.keys(fd, 8, 1):  # an update killed half-way: empty it, unused first
            self.grace_period(slot)
            self._empty(fd)
        return fd

    def fill(self, table: bpfsys.Fd, records: Records) -> int:
        return bpfsys.update_batch(table, records)  # the kernel's count of entries written

    def swap(self, table: bpfsys.Fd, gen: int) -> int:
        if (gen & 1) != 1 - (self.gen & 1) or self.generation() != self.gen:
            raise HostAgentError(f"agent {self.inst.name}: its generation changed during the "
                                 f"update (another update at the same time?)")
        bpfsys.update(self.fds["tpc_gen"], bytes(4), gen.to_bytes(4, "little"))  # THE swap
        return int(bpfsys.map_info(table)["id"])

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

    def release(self, table: bpfsys.Fd, old_id: Optional[int]) -> float:
        """After a swap: the old table emptied once no program reads it; after a failure: the
        standby emptied (no program reads it)."""
        t0 = time.perf_counter()
        if old_id is None:
            if (self.generation() & 1) == 1 - (self.gen & 1):
                return 0.0  # another update swapped this table in meanwhile: never empty it
            self._empty(table)
        else:
            old = self.gen & 1
            self.grace_period(old)
            self._empty(self._slot(old))
        return (time.perf_counter() - t0) * 1e3


_PRIVATE_LOCK = threading.Lock()


def update_saved(name: str, table: Any, host: Optional[str] = None,
                 on_update: Optional[str] = None) -> Tuple[Install, Update, TableDiff, float]:
    """``tpcstudy agent update``: under the agent's update lock, its record read, ``table``'s
    records for its host (or ``host``) read and checked, the swap, the record saved. Returns the
    install, the update, the diff and the milliseconds the table took to read and check."""
    from .loader import read_table
    from .record import read_saved, save

    inst = read_saved(name)
    with _update_lock(inst):
        inst = read_saved(name)  # again: another update may have saved it meanwhile
        if inst.state != "loaded":
            raise UsageError(f"agent {name!r} is not loaded (state {inst.state}): unload it")
        t0 = time.perf_counter()
        variant, records = read_table(table, host or inst.host)
        if VARIANTS[variant].value_size != inst.value_size:
            raise UsageError(f"{table}: the {variant} layout ({VARIANTS[variant].value_size}-"
                             f"byte values); agent {name} was loaded with {inst.variant} "
                             f"({inst.value_size} bytes): unload and load")
        read_ms = (time.perf_counter() - t0) * 1e3
        diff = diff_tables(read_current(inst), records)
        up = swap_table(inst, records, on_update=on_update, lock=False)
        inst.table = str(table)
        save(inst)
    return inst, up, diff, read_ms


@contextlib.contextmanager
def _update_lock(inst: Install) -> Iterator[None]:
    """An exclusive lock on ``<state dir>/.NAME.update.lock`` (waited for): two updates of one
    agent would fill the same standby. A private install (the emulator's, no record, driven by
    the one process that loaded it) takes a lock of this process instead: no file."""
    from .record import state_dir

    if inst.private:
        with _PRIVATE_LOCK:
            yield
        return
    d = state_dir()
    d.mkdir(parents=True, exist_ok=True)
    fd = os.open(d / f".{inst.name}.update.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                 | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_current(inst: Install) -> List[Tuple[bytes, bytes]]:
    """The records of the table the agent uses now."""
    from .loader import current_table

    with bpfsys.map_by_id(current_table(inst)) as fd:
        return [(k, bpfsys.lookup(fd, k, inst.value_size)) for k in bpfsys.keys(fd, 8)]


def swap_table(inst: Install, records: Records, *, on_update: Optional[str] = None,
               lock: bool = True) -> Update:
    """Replace ``inst``'s table by ``records`` (module docstring); ``inst`` updated (its
    generation, swap time and duration, the table's map id, entries)."""
    from .loader import _max_srh

    if on_update is not None and on_update not in M.ON_UPDATE:
        raise UsageError(f"--on-update {on_update!r}: choose from {', '.join(M.ON_UPDATE)}")
    with _update_lock(inst) if lock else contextlib.nullcontext():  # they share the standby
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
    inst.cleanup_ms = round(up.cleanup_ms, 4)
    inst.updates += 1
    inst.entries = len(records)
    if on_update is not None:
        inst.on_update = on_update
    return up

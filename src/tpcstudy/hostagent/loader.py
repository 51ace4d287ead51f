"""Load the host agent for one host from an exported table, read its counters, remove it.

:func:`load` takes a folder written by ``tpcstudy export --format bpf`` and a source router
(the host), and installs, in this order, stopping before anything is attached if a step fails:

1. the host's batch file, read (bounded) and checked: every line a ``map update pinned`` of the
   layout's map, at most 1024 entries, no key twice;
2. the cgroup (and any missing parent), created if missing;
3. the object of the table's layout (:func:`~.program.object_for`), loaded with everything
   pinned in a folder of its own (``<pins>/NAME/``: the programs, ``maps/``): nothing is pinned
   outside it, so two agents never share a pin; the table map is one of the two tables of
   ``tpc_tables`` (:mod:`~.update` fills the other and swaps with one map update);
4. the records into the table (one ``bpf(BPF_MAP_UPDATE_BATCH)``), the policy and the MTU
   into ``tpc_config``, generation 1 into ``tpc_gen``;
5. the sockops program attached to the cgroup, the tc program to the egress of each interface
   (a ``clsact`` qdisc added where there is none) under a filter handle of its own, inside the
   host's network namespace when it has one.

With ``keep_record=True`` (``tpcstudy agent load``) the install record
(:mod:`~.record`) is created before step 2 and written before and after each step that creates
something, so a load killed at any point can be unloaded. :func:`unload` removes what the
record names, each object checked to be the one this agent made (by inode, program id or pinned
object's name); a failed load undoes itself the same way. With ``private=True`` (the emulator:
many hosts on one machine) the pins live in a private bpffs that vanishes when loading ends: the
attached programs and their maps stay (found by id), and go with the emulator's cgroups and
namespaces.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import HostAgentError, UsageError
from ..export import VARIANTS
from ..export.bpf import MAX_TABLE_FILE, bpffs_pin, read_index, records_of_batch
from ..export.layout import SLOT_SIZE, SLOTS_OFFSET
from ..linux import CGROUP_ROOT
from . import bpfsys
from . import maps as M
from .bpffs import fill, run_steps
from .program import LAYOUTS, object_for
from .record import (
    DEFAULT_PINS,
    Install,
    cgroup_path,
    check_cgroup,
    create,
    forget,
    name_ok,
    read_saved,
    save,
    saved_names,
    state_dir,
)
from .unload import OWN_MAPS, PREF, PROGRAMS, _free_handle, _qdiscs, unload

__all__ = ["Install", "load", "unload", "status", "host_interfaces", "table_source",
           "DEFAULT_PINS", "MAP_ENTRIES", "cgroup_path", "check", "save", "read_saved",
           "saved_names", "state_dir", "forget", "reconfigure", "read_table", "PROGRAMS", "counters",
           "OWN_MAPS"]

MAP_ENTRIES = 1024
_OUR_MAPS = OWN_MAPS
_check_cgroup = check_cgroup


def host_interfaces(netns: Optional[str] = None) -> List[Tuple[str, int]]:
    """``(name, mtu)`` of the host's interfaces that are up, loopback excepted."""
    argv = ["ip", "-j"] + (["-n", netns] if netns else []) + ["link", "show"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise HostAgentError("'ip' not found: apt-get install iproute2") from None
    if r.returncode != 0:
        raise HostAgentError(f"{' '.join(argv)}: {r.stderr.strip()[-200:]}")
    out = []
    for link in json.loads(r.stdout or "[]"):
        if link.get("ifname") == "lo" or "LOOPBACK" in link.get("flags", []):
            continue
        if "UP" in link.get("flags", []):
            out.append((str(link["ifname"]), int(link.get("mtu", 1500))))
    return out


def table_source(table: Path, host: str) -> Tuple[Path, str, Dict[str, str]]:
    """The ``bpf-<variant>/`` folder of ``table``, its variant and ``host``'s files."""
    dirs = sorted(d for d in Path(table).glob("bpf-*") if (d / "index.json").is_file())
    if not dirs:
        raise UsageError(f"{table}: no bpf-<variant>/index.json (export with --format bpf)")
    d = dirs[0]
    variant, sources = read_index(d)
    if host not in sources:
        near = ", ".join(sorted(sources)[:8])
        raise UsageError(f"{d}: no table for host {host!r} (sources: {near})")
    return d, variant, sources[host]


def read_table(table: Path, host: str) -> Tuple[str, List[Tuple[bytes, bytes]]]:
    """``host``'s records in ``table`` (bounded read, checked): its variant and ``(key,
    value)`` list. The batch file's one pin path must name the layout's map (the TPC agent's
    path; this agent pins in its own folder and writes the records there)."""
    from ..io import read_bounded

    d, variant_name, files = table_source(Path(table), host)
    variant = VARIANTS[variant_name]
    if variant.value_size not in LAYOUTS:
        raise HostAgentError(f"{d}: {variant.value_size}-byte values: no program for them")
    batch = d / files["batch"]
    try:
        text = read_bounded(batch, MAX_TABLE_FILE).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{batch}: not UTF-8 text (byte {exc.start})") from None
    head, records = records_of_batch(text, str(batch))
    pins = head["map"].split(", ")
    if len(pins) != 1:
        raise UsageError(f"{batch}: {len(pins)} pin paths, expected one")
    map_name = os.path.basename(bpffs_pin(pins[0], str(batch)))
    if map_name != variant.map_name:
        raise UsageError(f"{batch}: pins map {map_name[:40]!r}, the {variant.name} layout's map "
                         f"is {variant.map_name!r}")
    if head["variant"] != variant.name and VARIANTS[head["variant"]].value_size != \
            variant.value_size:
        raise UsageError(f"{batch}: {VARIANTS[head['variant']].value_size}-byte values, the "
                         f"index says {variant.name} ({variant.value_size} bytes)")
    if len(records) > MAP_ENTRIES:
        raise UsageError(f"{batch}: {len(records)} entries, the agent's map holds {MAP_ENTRIES}")
    keys = [k for k, _ in records]
    if len(set(keys)) != len(keys):
        seen = set()
        dup = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise UsageError(f"{batch}: key {dup.hex()} appears more than once")
    return variant.name, records


def _max_srh(records: Sequence[Tuple[bytes, bytes]]) -> int:
    """The longest SRH of the table's valid slots, in bytes."""
    best = 0
    for _, value in records:
        for i in range(8):
            off = SLOTS_OFFSET + SLOT_SIZE * i
            valid = int.from_bytes(value[off + 4:off + 8], "little")
            if valid and value[off + 24 + 2] == 4:
                best = max(best, (value[off + 24 + 1] + 1) * 8)
    return best


def _records_hex(records: Sequence[Tuple[bytes, bytes]]) -> str:
    return b"".join(k + v for k, v in records).hex()


def load(table: Path, host: str, cgroup: str, *, policy: Optional[M.SlotPolicy] = None,
         netns: Optional[str] = None, interfaces: Optional[Sequence[str]] = None,
         mtu: Optional[int] = None, private: bool = False, name: Optional[str] = None,
         pins: str = DEFAULT_PINS, on_update: str = "repath", srh_room: str = "path",
         rto_min_ms: Optional[float] = None, keep_record: bool = False) -> Install:
    """Install the agent for ``host`` (module docstring); ``rto_min_ms``: the minimum RTO the
    sockops program sets on every connection it gives a path (None: the kernel's own)."""
    policy = (policy or M.SlotPolicy()).check()
    rto_min = M.rto_min_us(rto_min_ms)
    name = name or host
    if not name_ok(name):
        raise UsageError(f"agent name {name[:40]!r}: letters, digits, '-' and '_' (64 at most)")
    if mtu is not None and not 1280 <= int(mtu) <= 65535:
        raise UsageError(f"--mtu {mtu}: IPv6 needs 1280 to 65535")
    if on_update not in M.ON_UPDATE:
        raise UsageError(f"--on-update {on_update!r}: choose from {', '.join(M.ON_UPDATE)}")
    variant_name, records = read_table(Path(table), host)
    variant = VARIANTS[variant_name]
    cg = check_cgroup(cgroup)
    if not (CGROUP_ROOT / "cgroup.controllers").is_file():
        raise HostAgentError(f"no cgroup v2 hierarchy at {CGROUP_ROOT}")
    links = host_interfaces(netns)
    chosen = [x for x in links if interfaces is None or x[0] in interfaces]
    if interfaces is not None and len(chosen) != len(set(interfaces)):
        have = {n for n, _ in links}
        raise UsageError(f"interface {sorted(set(interfaces) - have)[0]!r} is not up in "
                         f"{netns or 'this namespace'}")
    if not chosen:
        raise UsageError(f"no interface up in {netns or 'this namespace'} to attach to")
    the_mtu = int(mtu or min(m for _, m in chosen))
    cfg = M.config_bytes(policy, mtu=the_mtu, max_srh=_max_srh(records), on_update=on_update,
                         room=srh_room, rto_min=rto_min)
    obj = object_for(variant.value_size)
    prog_dir = f"{pins.rstrip('/')}/{name}"
    inst = Install(name=name, host=host, table=str(table), variant=variant.name,
                   value_size=variant.value_size, entries=len(records),
                   policy=policy.describe(), mtu=the_mtu, cgroup=str(cg), netns=netns,
                   interfaces=[n for n, _ in chosen], private=private, on_update=on_update,
                   srh_room=srh_room, rto_min_us=rto_min)
    if private:
        _load_private(inst, obj, prog_dir, records, cfg, cg)
        return inst
    if os.path.lexists(prog_dir):
        raise UsageError(f"{prog_dir} exists already (another agent named {name!r}, or "
                         f"another tool's): give --name, or tpcstudy agent unload {name}")
    jot = (lambda: save(inst)) if keep_record else (lambda: None)
    if keep_record:
        create(inst)  # before the first step; exclusive
    try:
        _make_cgroups(inst, cg, jot)
        _load_pinned(inst, obj, prog_dir, records, cfg, jot)
        run_steps([["bpftool", "cgroup", "attach", str(cg), "sock_ops", "pinned",
                    f"{prog_dir}/tpc_sockops", "multi"]])
        for dev in inst.interfaces:
            _attach_tc(inst, dev, f"{prog_dir}/tpc_egress", jot)
        inst.state = "loaded"
        jot()
    except BaseException:
        try:
            unload(inst)
        finally:
            if keep_record:
                forget(inst.name)
        raise
    return inst


def _make_cgroups(inst: Install, cg: Path, jot: Any) -> None:
    missing = []
    p = cg
    while not p.is_dir():
        missing.append(p)
        p = p.parent
    for c in reversed(missing):  # parents first, each recorded before it is made
        inst.cgroups_created.append([str(c), 0])
        jot()
        c.mkdir()
        inst.cgroups_created[-1][1] = os.stat(c).st_ino
        jot()


def _load_pinned(inst: Install, obj: Path, prog_dir: str, records: Any, cfg: bytes,
                 jot: Any) -> None:
    """Steps 3 and 4 on the machine's bpffs, in our own folder."""
    maps_dir = f"{prog_dir}/maps"
    inst.pin_dir = prog_dir
    jot()
    os.makedirs(os.path.dirname(prog_dir), exist_ok=True)  # the agents' root: shared
    os.mkdir(prog_dir)
    inst.pin_dir_ino = os.stat(prog_dir).st_ino
    jot()
    run_steps([["bpftool", "prog", "loadall", str(obj), prog_dir, "pinmaps", maps_dir]])
    table = VARIANTS[inst.variant].map_name
    for prog in PROGRAMS:
        with bpfsys.obj_get(f"{prog_dir}/{prog}") as fd:
            inst.prog_ids[prog] = int(bpfsys.prog_info(fd)["id"])
    for m in (table, *OWN_MAPS):
        with bpfsys.obj_get(f"{maps_dir}/{m}") as fd:
            info = bpfsys.map_info(fd)
        inst.map_ids[m] = int(info["id"])
        if m == table and info["value_size"] != inst.value_size:
            raise HostAgentError(f"map {maps_dir}/{m} has {info['value_size']}-byte values, the "
                                 f"table {inst.value_size}-byte ones: layout mismatch, nothing "
                                 f"attached")
    jot()
    fill(f"{maps_dir}/{table}", b"".join(k + v for k, v in records))
    fill(f"{maps_dir}/tpc_config", bytes(4) + cfg)
    fill(f"{maps_dir}/tpc_gen", bytes(4) + (1).to_bytes(4, "little"))
    inst.generation = 1
    jot()


def _attach_tc(inst: Install, dev: str, prog_pin: str, jot: Any) -> None:
    ns = inst.netns
    if "clsact" not in _qdiscs(ns, dev):
        inst.clsact_created.append(dev)
        jot()
        run_steps(([["netns", ns]] if ns else []) + [["tc", "qdisc", "add", "dev", dev,
                                                      "clsact"]])
    handle = _free_handle(ns, dev)
    inst.filters.append({"dev": dev, "handle": handle})
    jot()
    run_steps(([["netns", ns]] if ns else []) + [
        ["tc", "filter", "add", "dev", dev, "egress", "pref", str(PREF), "handle",
         str(handle), "bpf", "direct-action", "pinned", prog_pin]])


def _load_private(inst: Install, obj: Path, prog_dir: str, records: Any, cfg: bytes,
                  cg: Path) -> None:
    """Every step in one helper with a private bpffs (the emulator's hosts)."""
    maps_dir = f"{prog_dir}/maps"
    table = VARIANTS[inst.variant].map_name
    if not cg.is_dir():
        _make_cgroups(inst, cg, lambda: None)
    handles = {dev: _free_handle(inst.netns, dev) for dev in inst.interfaces}
    existing = {dev: _qdiscs(inst.netns, dev) for dev in inst.interfaces}
    steps: List[List[str]] = [
        ["mkdir", prog_dir],
        ["bpftool", "prog", "loadall", str(obj), prog_dir, "pinmaps", maps_dir],
        ["expect-value-size", f"{maps_dir}/{table}", str(inst.value_size)],
        ["fill", f"{maps_dir}/{table}", _records_hex(records)],
        ["fill", f"{maps_dir}/tpc_config", (bytes(4) + cfg).hex()],
        ["fill", f"{maps_dir}/tpc_gen", (bytes(4) + (1).to_bytes(4, "little")).hex()],
        *[["bpftool", "-j", "prog", "show", "pinned", f"{prog_dir}/{p}"] for p in PROGRAMS],
        *[["bpftool", "-j", "map", "show", "pinned", f"{maps_dir}/{m}"]
          for m in (table, *OWN_MAPS)],
        ["bpftool", "cgroup", "attach", str(cg), "sock_ops", "pinned",
         f"{prog_dir}/tpc_sockops", "multi"]]
    if inst.netns:
        steps.append(["netns", inst.netns])
    for dev in inst.interfaces:
        if "clsact" not in existing[dev]:
            steps.append(["tc", "qdisc", "add", "dev", dev, "clsact"])
            inst.clsact_created.append(dev)
        steps.append(["tc", "filter", "add", "dev", dev, "egress", "pref", str(PREF), "handle",
                      str(handles[dev]), "bpf", "direct-action", "pinned",
                      f"{prog_dir}/tpc_egress"])
        inst.filters.append({"dev": dev, "handle": handles[dev]})
    outs = run_steps(steps, private=True)
    first = next(i for i, st in enumerate(steps) if st[:3] == ["bpftool", "-j", "prog"])
    shown = outs[first:first + len(PROGRAMS) + 1 + len(OWN_MAPS)]
    inst.prog_ids = {p: json.loads(s)["id"] for p, s in zip(PROGRAMS, shown)}
    inst.map_ids = {m: json.loads(s)["id"] for m, s in zip((table, *OWN_MAPS),
                                                           shown[len(PROGRAMS):])}
    inst.generation, inst.state = 1, "loaded"


# --------------------------------------------------------------------------- reading back
def _dump(map_id: int) -> List[Tuple[bytes, bytes]]:
    r = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        raise HostAgentError(f"bpftool map dump id {map_id}: "
                             f"{(r.stderr or r.stdout).strip()[-300:]}")
    out = []
    for it in json.loads(r.stdout or "null") or []:  # with BTF: "formatted"; raw bytes too
        out.append((bytes(int(x, 16) for x in it["key"]),
                    bytes(int(x, 16) for x in it["value"])))
    return out


def _open_own_map(inst: Install, name: str) -> bpfsys.Fd:
    """The install's map ``name`` by its recorded id, checked to still be that map."""
    ident = inst.map_ids.get(name)
    try:
        fd = bpfsys.map_by_id(int(ident or 0))
    except OSError:
        raise HostAgentError(f"agent {inst.name}: its map {name} (id {ident}) is gone: "
                             f"the agent was removed (tpcstudy agent unload {inst.name})"
                             ) from None
    if bpfsys.map_info(fd)["name"] != name[:15]:
        fd.close()
        raise HostAgentError(f"agent {inst.name}: map id {ident} is not its {name} any more "
                             f"(the agent was removed)")
    return fd


def current_table(inst: Install) -> int:
    """The id of the table in use: ``tpc_tables[generation & 1]``."""
    with _open_own_map(inst, "tpc_gen") as fd:
        gen = int.from_bytes(bpfsys.lookup(fd, bytes(4), 4), "little")
    with _open_own_map(inst, "tpc_tables") as fd:
        return int.from_bytes(bpfsys.lookup(fd, (gen & 1).to_bytes(4, "little"), 4), "little")


def counters(inst: Install) -> Dict[str, int]:
    """The agent's counters (``tpc_stats``) by name."""
    with _open_own_map(inst, "tpc_stats") as fd:
        stats = {int.from_bytes(k, "little"): int.from_bytes(
            bpfsys.lookup(fd, k, 8), "little") for k in bpfsys.keys(fd, 4)}
    return M.decode_stats(stats)


def status(inst: Install) -> Dict[str, Any]:
    """The agent's counters (``tpc_stats``), connections per destination and slot, and its
    table: entries, generation (``tpc_gen``), map id, when the last update swapped it in."""
    use = sorted(M.decode_slot_use(k, int.from_bytes(v[:8], "little"))
                 for k, v in _dump(inst.map_ids["tpc_slot_use"]))
    table = current_table(inst)
    with bpfsys.map_by_id(table) as fd:
        entries = len(bpfsys.keys(fd, 8, 1 << 16))
    with _open_own_map(inst, "tpc_gen") as fd:
        gen = int.from_bytes(bpfsys.lookup(fd, bytes(4), 4), "little")
    return {"counters": counters(inst), "slots": use, "entries": entries,
            "generation": gen, "table_map_id": table, "swapped_at": inst.swapped_at,
            "swap_ms": inst.swap_ms, "update_ms": inst.update_ms,
            "cleanup_ms": inst.cleanup_ms, "updates": inst.updates,
            "on_update": inst.on_update, "rto_min_us": inst.rto_min_us, "prog_ids": dict(inst.prog_ids),
            "map_ids": dict(inst.map_ids, **{VARIANTS[inst.variant].map_name: table})}


def reconfigure(inst: Install, *, policy: Optional[M.SlotPolicy] = None,
                records: Optional[Sequence[Tuple[bytes, bytes]]] = None,
                srh_room: Optional[str] = None) -> None:
    """Change a loaded agent in place (by map id): new destination entries (``(8-byte key,
    value)`` of the install's layout: a new table swapped in at once, :mod:`~.update`) and/or a
    new policy (``tpc_config``; weighted round robin starts over), with a new SRH room
    (``srh_room``: for the connections opened from now on)."""
    if records is not None:
        from .update import swap_table

        swap_table(inst, list(records))
    if srh_room is not None:  # connections opened from now on (with the policy's config)
        if srh_room not in M.ROOMS:
            raise UsageError(f"--srh-room {srh_room!r}: choose from {', '.join(M.ROOMS)}")
        if policy is None:
            raise UsageError("a new SRH room is written with the policy's config: give both")
        inst.srh_room = srh_room
    if policy is not None:
        with bpfsys.map_by_id(current_table(inst)) as fd:
            recs = [(k, bpfsys.lookup(fd, k, inst.value_size)) for k in bpfsys.keys(fd, 8)]
        cfg = M.config_bytes(policy, mtu=inst.mtu, max_srh=_max_srh(recs),
                             on_update=inst.on_update, room=inst.srh_room,
                             rto_min=inst.rto_min_us)
        with _open_own_map(inst, "tpc_config") as fd:
            bpfsys.update(fd, bytes(4), cfg)
        with _open_own_map(inst, "tpc_wrr") as fd:
            for k in bpfsys.keys(fd, 8):
                bpfsys.delete(fd, k)
        inst.policy = policy.describe()


# --------------------------------------------------------------------------- what is missing
def check() -> Dict[str, str]:
    """Every requirement of :func:`load`: ``{requirement: "ok" | what is wrong and how to fix
    it}``."""
    import platform

    from .program import _missing, _packaged, _source_hash

    out: Dict[str, str] = {}
    rel = platform.release()
    try:
        major, minor = (int(x) for x in rel.split(".")[:2])
        out["kernel"] = "ok" if (major, minor) >= (6, 1) else f"Linux {rel}: needs >= 6.1"
    except ValueError:
        out["kernel"] = f"cannot read the kernel version {rel!r}"
    out["root"] = "ok" if os.geteuid() == 0 else "not root: run as root (BPF, cgroups, tc)"
    out["cgroup v2"] = ("ok" if (CGROUP_ROOT / "cgroup.controllers").is_file() else
                        f"no cgroup v2 hierarchy at {CGROUP_ROOT} (boot with the unified "
                        f"hierarchy)")
    mounts = Path("/proc/self/mounts").read_text() if Path("/proc/self/mounts").exists() else ""
    out["bpffs"] = ("ok" if any(ln.split()[1:3] == ["/sys/fs/bpf", "bpf"]
                                for ln in mounts.splitlines() if len(ln.split()) > 2)
                    else "no bpffs at /sys/fs/bpf: mount -t bpf bpf /sys/fs/bpf")
    for tool, pkg in (("bpftool", "bpftool"), ("tc", "iproute2"), ("ip", "iproute2")):
        out[tool] = "ok" if shutil.which(tool) else f"{tool} not found: apt-get install {pkg}"
    d, stamp = _packaged()
    if stamp == _source_hash():
        out["programs"] = "ok (built at install)"
    else:
        miss = _missing()
        out["programs"] = ("ok (built on first use)" if not miss
                           else "cannot be built: missing " + "; ".join(miss))
    return out

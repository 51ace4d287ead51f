"""Load the host agent for one host from an exported table, read its counters, remove it.

:func:`load` takes a folder written by ``tpcstudy export --format bpf`` and a source router
(the host), and installs, in this order, stopping before anything is attached if a step fails:

1. the host's batch file, copied into a private folder and checked there (every line a ``map
   update pinned`` of one pin path under ``/sys/fs/bpf/``, at most 1024 entries, no key twice);
2. the object of the table's layout (:func:`~.program.object_for`), loaded with everything
   pinned in a folder of its own (``<pins>/NAME/``: the programs, ``maps/``), the destination
   map checked to have the table's value size and pinned again at the path the batch file
   names;
3. the batch file itself, unchanged, into that map (``bpftool batch file``); the load-time
   policy and the MTU into ``tpc_config``;
4. the sockops program attached to the host's cgroup v2 (created if it does not exist), the tc
   program to the egress of each of its interfaces (a ``clsact`` qdisc added where there is
   none), inside its network namespace when it has one.

Every step is an argument vector (``bpftool``, ``tc``); nothing goes through a shell. What was
created is returned as an :class:`Install`, kept as JSON in ``/run/tpcstudy/agent/NAME.json``
by ``tpcstudy agent load``; :func:`unload` removes exactly that. With ``private=True`` (the
emulator: many hosts on one machine, each with the same pin paths) the pins live in a private
bpffs that vanishes when loading ends: the attached programs and their maps stay (found by
id), and go when the cgroup and the interfaces are removed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import HostAgentError, InputFileError, UsageError
from ..export import VARIANTS
from ..export.bpf import copy_batch, read_index
from ..export.layout import SLOT_SIZE, SLOTS_OFFSET
from ..linux import CGROUP_ROOT
from . import maps as M
from .bpffs import run_steps
from .program import LAYOUTS, object_for

__all__ = ["Install", "load", "unload", "status", "host_interfaces", "table_source",
           "DEFAULT_PINS", "MAP_ENTRIES", "cgroup_path", "check", "save", "read_saved",
           "saved_names", "state_dir", "forget", "reconfigure"]

#: Where ``tpcstudy agent load`` pins its programs on a real host (one folder per name).
DEFAULT_PINS = "/sys/fs/bpf/tpcstudy"
MAP_ENTRIES = 1024
_OUR_MAPS = ("tpc_config", "tpc_conns", "tpc_stats", "tpc_slot_use", "tpc_wrr", "tpc_scratch",
             "tpc_pkt_srh")


@dataclasses.dataclass
class Install:
    """What :func:`load` created (all of it, nothing else: :func:`unload` removes exactly it)."""

    name: str
    host: str
    table: str
    variant: str
    value_size: int
    entries: int
    policy: str
    mtu: int
    cgroup: str
    cgroup_created: bool
    netns: Optional[str]
    interfaces: List[str]
    clsact_created: List[str]
    private: bool
    pins: List[str]
    dirs: List[str]
    prog_ids: Dict[str, int]
    map_ids: Dict[str, int]

    def to_json(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> "Install":
        """An install record read back (data: every field checked)."""
        if not isinstance(doc, dict):
            raise UsageError(f"{where}: not an install record")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        missing = sorted(set(fields) - set(doc))
        if missing:
            raise UsageError(f"{where}: install record without {missing[0]!r}")
        kinds = {"name": str, "host": str, "table": str, "variant": str, "value_size": int,
                 "entries": int, "policy": str, "mtu": int, "cgroup": str,
                 "cgroup_created": bool, "interfaces": list, "clsact_created": list,
                 "private": bool, "pins": list, "dirs": list, "prog_ids": dict,
                 "map_ids": dict}
        said = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
                dict: "an object"}
        for k, t in kinds.items():
            if not isinstance(doc[k], t) or (t is int and isinstance(doc[k], bool)):
                raise UsageError(f"{where}: {k} is not {said[t]}")
        if doc["netns"] is not None and not isinstance(doc["netns"], str):
            raise UsageError(f"{where}: netns is not a name")
        for k in ("prog_ids", "map_ids"):
            if not all(isinstance(v, int) and v > 0 for v in doc[k].values()):
                raise UsageError(f"{where}: {k} holds a non-id")
        for p in doc["pins"] + doc["dirs"]:
            if not (isinstance(p, str) and p.startswith("/sys/fs/bpf/") and ".." not in p):
                raise UsageError(f"{where}: pin {str(p)[:80]!r} is not under /sys/fs/bpf/")
        _check_cgroup(doc["cgroup"], where)
        return cls(**{k: doc[k] for k in fields})


def cgroup_path(cgroup: str) -> Path:
    """``cgroup`` as a folder of the cgroup v2 hierarchy (relative paths from its root)."""
    p = Path(cgroup)
    return p if p.is_absolute() else CGROUP_ROOT / p


def _check_cgroup(cgroup: str, where: str = "--cgroup") -> Path:
    p = cgroup_path(cgroup)
    try:
        rel = p.resolve(strict=False).relative_to(CGROUP_ROOT)
    except ValueError:
        raise UsageError(f"{where}: {cgroup!r} is not under {CGROUP_ROOT}") from None
    if not rel.parts:
        raise UsageError(f"{where}: not the root cgroup (every process of the machine)")
    return p


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


def _qdiscs(netns: Optional[str], dev: str) -> List[str]:
    argv = ["tc", "-j"] + (["-n", netns] if netns else []) + ["qdisc", "show", "dev", dev]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise HostAgentError(f"{' '.join(argv)}: {r.stderr.strip()[-200:]}")
    return [str(q.get("kind")) for q in json.loads(r.stdout or "[]")]


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


def load(table: Path, host: str, cgroup: str, *, policy: Optional[M.SlotPolicy] = None,
         netns: Optional[str] = None, interfaces: Optional[Sequence[str]] = None,
         mtu: Optional[int] = None, private: bool = False, name: Optional[str] = None,
         pins: str = DEFAULT_PINS) -> Install:
    """Install the agent for ``host`` (module docstring)."""
    policy = (policy or M.SlotPolicy()).check()
    name = name or host
    if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 64:
        raise UsageError(f"agent name {name!r}: letters, digits, '-' and '_'")
    d, variant_name, files = table_source(Path(table), host)
    variant = VARIANTS[variant_name]
    if variant.value_size not in LAYOUTS:
        raise HostAgentError(f"{d}: {variant.value_size}-byte values: no program for them")
    cg = _check_cgroup(cgroup)
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
    obj = object_for(variant.value_size)
    prog_dir = f"{pins.rstrip('/')}/{name}"
    maps_dir = f"{prog_dir}/maps"
    with tempfile.TemporaryDirectory(prefix="tpcstudy-agent-") as tmp:
        copy, pin, records = copy_batch(d / files["batch"], Path(tmp), MAP_ENTRIES)
        table_dir, map_name = os.path.split(pin)
        if map_name != variant.map_name:
            raise UsageError(f"{d / files['batch']}: pins map {map_name!r}, the {variant.name} "
                             f"layout's map is {variant.map_name!r}")
        cfg = M.config_bytes(policy, mtu=the_mtu, max_srh=_max_srh(records))
        existing = {dev: _qdiscs(netns, dev) for dev, _ in chosen}
        cg_created = not cg.is_dir()
        new_dirs = [] if private else [x for x in (table_dir, pins.rstrip("/"), prog_dir,
                                                   maps_dir) if not os.path.isdir(x)]
        if cg_created:
            cg.mkdir(parents=True)
        steps: List[List[str]] = [
            ["mkdir", maps_dir], ["mkdir", table_dir],
            ["bpftool", "prog", "loadall", str(obj), prog_dir, "pinmaps", maps_dir],
            ["expect-value-size", f"{maps_dir}/{map_name}", str(variant.value_size)],
            ["bpftool", "map", "pin", "pinned", f"{maps_dir}/{map_name}", pin],
            ["bpftool", "batch", "file", str(copy)],
            ["bpftool", "map", "update", "pinned", f"{maps_dir}/tpc_config", "key", "hex",
             "00", "00", "00", "00", "value", "hex", *[f"{b:02x}" for b in cfg]],
            ["bpftool", "-j", "prog", "show", "pinned", f"{prog_dir}/tpc_sockops"],
            ["bpftool", "-j", "prog", "show", "pinned", f"{prog_dir}/tpc_egress"],
            *[["bpftool", "-j", "map", "show", "pinned", f"{maps_dir}/{m}"]
              for m in (map_name, *_OUR_MAPS)],
            ["bpftool", "cgroup", "attach", str(cg), "sock_ops", "pinned",
             f"{prog_dir}/tpc_sockops", "multi"]]
        if netns:
            steps.append(["netns", netns])
        for dev, _ in chosen:
            if "clsact" not in existing[dev]:
                steps.append(["tc", "qdisc", "add", "dev", dev, "clsact"])
            steps.append(["tc", "filter", "add", "dev", dev, "egress", "pref", "49",
                          "handle", "1", "bpf", "direct-action", "pinned",
                          f"{prog_dir}/tpc_egress"])
        try:
            outs = run_steps(steps, private=private)
        except HostAgentError:
            _undo_partial(cg, cg_created, netns, chosen, existing, prog_dir, pin, new_dirs,
                          private)
            raise
    shown = outs[7:9 + 1 + len(_OUR_MAPS)]
    prog_ids = {"tpc_sockops": json.loads(shown[0])["id"], "tpc_egress": json.loads(shown[1])["id"]}
    map_ids = {m: json.loads(s)["id"] for m, s in zip((map_name, *_OUR_MAPS), shown[2:])}
    created_pins = [] if private else (
        [pin, f"{prog_dir}/tpc_sockops", f"{prog_dir}/tpc_egress"]
        + [f"{maps_dir}/{m}" for m in (map_name, *_OUR_MAPS)])
    return Install(name=name, host=host, table=str(table), variant=variant.name,
                   value_size=variant.value_size, entries=len(records),
                   policy=policy.describe(), mtu=the_mtu, cgroup=str(cg),
                   cgroup_created=cg_created, netns=netns, interfaces=[n for n, _ in chosen],
                   clsact_created=[n for n, _ in chosen if "clsact" not in existing[n]],
                   private=private, pins=created_pins, dirs=new_dirs, prog_ids=prog_ids,
                   map_ids=map_ids)


def _undo_partial(cg: Path, cg_created: bool, netns: Optional[str],
                  chosen: Sequence[Tuple[str, int]], existing: Dict[str, List[str]],
                  prog_dir: str, pin: str, new_dirs: Sequence[str], private: bool) -> None:
    """A load that failed half-way: remove what it may have created (best effort)."""
    for dev, _ in chosen:
        base = ["tc"] + (["-n", netns] if netns else [])
        subprocess.run(base + ["filter", "del", "dev", dev, "egress", "pref", "49"],
                       capture_output=True)
        if "clsact" not in existing[dev]:
            subprocess.run(base + ["qdisc", "del", "dev", dev, "clsact"], capture_output=True)
    if not private:
        shutil.rmtree(prog_dir, ignore_errors=True)  # our own folder: everything in it is ours
        if os.path.dirname(pin) in new_dirs:
            shutil.rmtree(os.path.dirname(pin), ignore_errors=True)
        for d in sorted(new_dirs, key=len, reverse=True):
            try:
                os.rmdir(d)
            except OSError:
                pass
    if cg_created:
        try:
            cg.rmdir()
        except OSError:
            pass


def _bpftool_json(argv: List[str]) -> Any:
    r = subprocess.run(["bpftool", "-j", *argv], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise HostAgentError(f"bpftool {' '.join(argv)}: {(r.stderr or r.stdout).strip()[-300:]}")
    return json.loads(r.stdout or "null")


def _dump(map_id: int) -> List[Tuple[bytes, bytes]]:
    items = _bpftool_json(["map", "dump", "id", str(map_id)]) or []
    out = []
    for it in items:  # with BTF bpftool adds "formatted"; the raw bytes are still there
        key = bytes(int(x, 16) for x in it["key"])
        value = bytes(int(x, 16) for x in it["value"])
        out.append((key, value))
    return out


def status(inst: Install) -> Dict[str, Any]:
    """The agent's counters (``tpc_stats``) and connections per destination and slot."""
    stats = {}
    for key, value in _dump(inst.map_ids["tpc_stats"]):
        stats[int.from_bytes(key, "little")] = int.from_bytes(value[:8], "little")
    use = sorted(M.decode_slot_use(k, int.from_bytes(v[:8], "little"))
                 for k, v in _dump(inst.map_ids["tpc_slot_use"]))
    return {"counters": M.decode_stats(stats), "slots": use,
            "entries": len(_dump(inst.map_ids[VARIANTS[inst.variant].map_name]))}


def reconfigure(inst: Install, *, policy: Optional[M.SlotPolicy] = None,
                records: Optional[Sequence[Tuple[bytes, bytes]]] = None) -> None:
    """Change a loaded agent in place (by map id): a new policy (``tpc_config``; weighted round
    robin starts over) and/or new destination entries (the map emptied, then ``records``
    written: ``(8-byte key, value)`` of the install's layout). One ``bpftool batch`` of lines
    this function writes (data from the caller never reaches a command line)."""
    lines: List[str] = []
    dest = inst.map_ids[VARIANTS[inst.variant].map_name]
    if records is not None:
        for key, _ in _dump(dest):
            lines.append(f"map delete id {dest} key hex {key.hex(' ')}")
        for key, value in records:
            if len(key) != 8 or len(value) != inst.value_size:
                raise UsageError(f"entry of {len(key)}-byte key and {len(value)}-byte value: "
                                 f"the install takes 8 and {inst.value_size}")
            lines.append(f"map update id {dest} key hex {key.hex(' ')} value hex "
                         f"{value.hex(' ')}")
    if policy is not None:
        cfg = M.config_bytes(policy, mtu=inst.mtu, max_srh=_max_srh(
            records if records is not None else _dump(dest)))
        lines.append(f"map update id {inst.map_ids['tpc_config']} key hex 00 00 00 00 value "
                     f"hex {cfg.hex(' ')}")
        wrr = inst.map_ids["tpc_wrr"]
        lines += [f"map delete id {wrr} key hex {k.hex(' ')}" for k, _ in _dump(wrr)]
        inst.policy = policy.describe()
    if not lines:
        return
    with tempfile.TemporaryDirectory(prefix="tpcstudy-agent-") as tmp:
        f = Path(tmp) / "changes.batch"
        f.write_text("\n".join(lines) + "\n")
        run_steps([["bpftool", "batch", "file", str(f)]])
    if records is not None:
        inst.entries = len(records)


def unload(inst: Install) -> List[str]:
    """Remove what ``inst`` says :func:`load` created; returns what was removed (what was
    already gone is skipped, so a half-removed install can be unloaded again)."""
    done = []
    base = ["tc"] + (["-n", inst.netns] if inst.netns else [])
    netns_ok = inst.netns is None or Path("/run/netns", inst.netns).exists()
    for dev in inst.interfaces if netns_ok else []:
        r = subprocess.run(base + ["filter", "del", "dev", dev, "egress", "pref", "49"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            done.append(f"tc filter on {dev}")
        if dev in inst.clsact_created:
            r = subprocess.run(base + ["qdisc", "del", "dev", dev, "clsact"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                done.append(f"clsact qdisc on {dev}")
    cg = Path(inst.cgroup)
    if cg.is_dir():
        r = subprocess.run(["bpftool", "cgroup", "detach", str(cg), "sock_ops", "id",
                            str(inst.prog_ids["tpc_sockops"])], capture_output=True, text=True)
        if r.returncode == 0:
            done.append(f"sock_ops on {cg}")
        if inst.cgroup_created:
            try:
                cg.rmdir()
                done.append(f"cgroup {cg}")
            except OSError as exc:
                raise HostAgentError(f"cannot remove cgroup {cg}: {exc.strerror} (processes "
                                     f"still in it?)") from None
    for pin in inst.pins:
        try:
            os.unlink(pin)
            done.append(pin)
        except FileNotFoundError:
            pass
    for d in sorted(inst.dirs, key=len, reverse=True):  # the folders load made, if empty
        try:
            os.rmdir(d)
            done.append(d)
        except OSError:
            pass
    return done


# --------------------------------------------------------------------------- saved installs
def state_dir() -> Path:
    """Where ``tpcstudy agent load`` keeps what it installed (``$TPCSTUDY_RUN_DIR/agent``)."""
    return Path(os.path.abspath(os.environ.get("TPCSTUDY_RUN_DIR") or "/run/tpcstudy")) / "agent"


def save(inst: Install) -> Path:
    from ..io import atomic_write_text

    d = state_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{inst.name}.json"
    atomic_write_text(path, json.dumps(inst.to_json(), indent=1) + "\n")
    return path


def read_saved(name: str) -> Install:
    from ..io import read_bounded

    if not name or "/" in name or name.startswith("."):
        raise UsageError(f"agent name {name!r}")
    path = state_dir() / f"{name}.json"
    if not path.exists():
        have = ", ".join(saved_names()) or "none"
        raise UsageError(f"no agent {name!r} loaded here (loaded: {have})")
    try:
        doc = json.loads(read_bounded(path, 1 << 20).decode("utf-8"))
    except InputFileError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not an install record ({exc})") from None
    return Install.from_json(doc, str(path))


def saved_names() -> List[str]:
    d = state_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


def forget(name: str) -> None:
    try:
        os.unlink(state_dir() / f"{name}.json")
    except FileNotFoundError:
        pass


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

"""What an agent install made, kept as a record written BEFORE each step that creates something.

``tpcstudy agent load`` creates its record (``$TPCSTUDY_RUN_DIR/agent/NAME.json``, exclusive:
two loads of one name never both proceed) before its first step, in state ``loading``, and
writes it again before every step that creates an object (what it is about to make) and after
(the object's id or inode): a load killed at any point leaves a record that ``agent status``
lists and ``agent unload NAME`` follows. The record is trusted only for objects the agent
itself made, each checked before removal (:mod:`~.loader`'s ``unload``): pins inside its own
bpffs folder (its inode recorded at creation), cgroups it created (inode), tc filters running
its own program id.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import InputFileError, UsageError
from ..linux import CGROUP_ROOT
from .maps import ON_UPDATE, ROOMS, RTO_MIN_MS

__all__ = ["Install", "state_dir", "save", "read_saved", "saved_names", "forget", "create",
           "cgroup_path", "check_cgroup", "DEFAULT_PINS", "name_ok"]

#: Where ``tpcstudy agent load`` pins its programs on a real host (one folder per name).
DEFAULT_PINS = "/sys/fs/bpf/tpcstudy"


def name_ok(name: str) -> bool:
    return (bool(name) and len(name) <= 64 and not name.startswith(("-", "."))
            and name.replace("-", "").replace("_", "").isalnum() and name.isascii())


def cgroup_path(cgroup: str) -> Path:
    """``cgroup`` as a folder of the cgroup v2 hierarchy (relative paths from its root)."""
    p = Path(cgroup)
    return p if p.is_absolute() else CGROUP_ROOT / p


def check_cgroup(cgroup: str, where: str = "--cgroup") -> Path:
    p = cgroup_path(cgroup)
    if ".." in p.parts:
        raise UsageError(f"{where}: {cgroup!r} has a '..' component")
    try:
        rel = p.resolve(strict=False).relative_to(CGROUP_ROOT)
    except ValueError:
        raise UsageError(f"{where}: {cgroup!r} is not under {CGROUP_ROOT}") from None
    if not rel.parts:
        raise UsageError(f"{where}: not the root cgroup (every process of the machine)")
    return p


@dataclasses.dataclass
class Install:
    """What :func:`~.loader.load` created (all of it, nothing else: ``unload`` removes exactly
    it, each object checked to be the one made)."""

    name: str
    host: str
    table: str
    variant: str
    value_size: int
    entries: int
    policy: str
    mtu: int
    cgroup: str
    netns: Optional[str]
    interfaces: List[str]
    private: bool
    state: str = "loading"            # loading | loaded
    pid: int = 0                      # the loading process
    started: float = 0.0              # epoch seconds of the record's creation
    pin_dir: str = ""                 # our own bpffs folder ("" in a private bpffs)
    pin_dir_ino: int = 0              # its inode, recorded at creation (0: not yet)
    cgroups_created: List[List[Any]] = dataclasses.field(default_factory=list)  # [path, ino]
    clsact_created: List[str] = dataclasses.field(default_factory=list)
    filters: List[Dict[str, Any]] = dataclasses.field(default_factory=list)  # dev, handle
    prog_ids: Dict[str, int] = dataclasses.field(default_factory=dict)
    map_ids: Dict[str, int] = dataclasses.field(default_factory=dict)
    on_update: str = "repath"
    srh_room: str = "path"            # path | entry (maps.ROOMS)
    rto_min_us: int = 0               # TCP_BPF_RTO_MIN of its connections (0: the kernel's)
    generation: int = 0               # the table in use (1: the one loaded)
    swapped_at: Optional[str] = None  # when the last update swapped it in (UTC)
    swap_ms: Optional[float] = None   # the swap itself (one map update)
    update_ms: Optional[float] = None  # the update: standby filled, swapped
    cleanup_ms: Optional[float] = None  # after the swap: grace period, old table emptied
    updates: int = 0

    def to_json(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> "Install":
        """An install record read back (data: every field checked)."""
        if not isinstance(doc, dict):
            raise UsageError(f"{where}: not an install record")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        required = [k for k, f in fields.items()
                    if f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING]
        missing = sorted(set(required) - set(doc))
        if missing:
            raise UsageError(f"{where}: install record without {missing[0]!r}")
        unknown = sorted(set(doc) - set(fields))
        if unknown:
            raise UsageError(f"{where}: install record with unknown field {unknown[0][:40]!r}")
        kinds: Dict[str, Any] = {"name": str, "host": str, "table": str, "variant": str, "value_size": int,
                 "entries": int, "policy": str, "mtu": int, "cgroup": str, "interfaces": list,
                 "private": bool, "state": str, "pid": int, "started": (int, float),
                 "pin_dir": str, "pin_dir_ino": int, "cgroups_created": list,
                 "clsact_created": list, "filters": list, "prog_ids": dict, "map_ids": dict,
                 "on_update": str, "srh_room": str, "generation": int, "updates": int,
                 "rto_min_us": int}
        said: Dict[Any, str] = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
                dict: "an object", (int, float): "a number"}
        for k, t in kinds.items():
            if k not in doc:
                continue
            v = doc[k]
            if not isinstance(v, t) or (t in (int, (int, float)) and isinstance(v, bool)):
                raise UsageError(f"{where}: {k} is not {said[t]}")
        if doc.get("netns") is not None and not isinstance(doc["netns"], str):
            raise UsageError(f"{where}: netns is not a name")
        if not name_ok(doc["name"]):
            raise UsageError(f"{where}: agent name {doc['name'][:40]!r}")
        if doc.get("srh_room", "path") not in ROOMS or doc.get(
                "on_update", "repath") not in ON_UPDATE:
            raise UsageError(f"{where}: srh_room or on_update is none of the choices")
        hi = int(RTO_MIN_MS[1] * 1000)
        if not 0 <= doc.get("rto_min_us", 0) <= hi:
            raise UsageError(f"{where}: rto_min_us {doc['rto_min_us']} is not 0 to {hi}")
        if doc.get("state", "loading") not in ("loading", "loaded"):
            raise UsageError(f"{where}: state {str(doc['state'])[:20]!r}")
        for k in ("prog_ids", "map_ids"):
            if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                       for v in doc.get(k, {}).values()):
                raise UsageError(f"{where}: {k} holds a non-id")
        pd = doc.get("pin_dir", "")
        if pd and not (pd.startswith("/sys/fs/bpf/") and ".." not in pd.split("/")
                       and os.path.basename(pd) == doc["name"]):
            raise UsageError(f"{where}: pin folder {pd[:80]!r} is not /sys/fs/bpf/.../"
                             f"{doc['name']}")
        for c in doc.get("cgroups_created", []):
            if not (isinstance(c, list) and len(c) == 2 and isinstance(c[0], str)
                    and isinstance(c[1], int)):
                raise UsageError(f"{where}: cgroups_created holds {str(c)[:60]!r}")
            check_cgroup(c[0], where)
        for f in doc.get("filters", []):
            if not (isinstance(f, dict) and isinstance(f.get("dev"), str)
                    and isinstance(f.get("handle"), int) and 0 < f["handle"] < 1 << 32):
                raise UsageError(f"{where}: filters holds {str(f)[:60]!r}")
        for d in doc["interfaces"] + doc.get("clsact_created", []):
            if not (isinstance(d, str) and 0 < len(d) < 16 and "/" not in d):
                raise UsageError(f"{where}: interface {str(d)[:40]!r}")
        check_cgroup(doc["cgroup"], where)
        return cls(**{k: doc[k] for k in fields if k in doc})


# --------------------------------------------------------------------------- saved installs
def state_dir() -> Path:
    """Where ``tpcstudy agent load`` keeps what it installed (``$TPCSTUDY_RUN_DIR/agent``)."""
    return Path(os.path.abspath(os.environ.get("TPCSTUDY_RUN_DIR") or "/run/tpcstudy")) / "agent"


def _path(name: str) -> Path:
    if not name_ok(name):
        raise UsageError(f"agent name {name[:40]!r}: letters, digits, '-' and '_'")
    return state_dir() / f"{name}.json"


def create(inst: Install) -> Path:
    """The record of a new install, created exclusively (state ``loading``): an install of this
    name that exists, or is being loaded, refuses the second."""
    path = _path(inst.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    inst.pid, inst.started = os.getpid(), time.time()
    # written whole under a temporary name, then linked to its own (link refuses an existing
    # name): the record appears complete or not at all, and only once
    tmp = path.parent / f".{path.name}.p{os.getpid()}.new.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(inst.to_json(), indent=1) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise UsageError(f"an agent named {inst.name!r} is loaded already (or its load was "
                             f"interrupted): tpcstudy agent unload {inst.name}, or give --name"
                             ) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def save(inst: Install) -> Path:
    """Write ``inst``'s record again (atomically: readers see the old or the new one)."""
    from ..io import atomic_write_text

    path = _path(inst.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(inst.to_json(), indent=1) + "\n")
    return path


def read_saved(name: str) -> Install:
    from ..io import read_bounded

    path = _path(name)
    if not path.exists():
        have = ", ".join(saved_names()) or "none"
        raise UsageError(f"no agent {name!r} loaded here (loaded: {have})")
    try:
        doc = json.loads(read_bounded(path, 1 << 20).decode("utf-8"))
    except InputFileError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not an install record ({str(exc)[:80]})") from None
    return Install.from_json(doc, str(path))


def saved_names() -> List[str]:
    d = state_dir()
    return sorted(p.stem for p in d.glob("*.json") if not p.name.startswith(".")) \
        if d.is_dir() else []


def forget(name: str) -> None:
    """Remove ``name``'s record (and temporary copies a killed writer left beside it)."""
    d = state_dir()
    for p in (_path(name), d / f".{name}.update.lock"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    if d.is_dir():
        for p in d.glob(f".{name}.json.p*.tmp"):
            try:
                pid = int(p.name[len(name) + 8:].split(".", 1)[0])
                os.kill(pid, 0)
            except ProcessLookupError:
                p.unlink(missing_ok=True)  # its writer is dead
            except (ValueError, OSError):
                pass

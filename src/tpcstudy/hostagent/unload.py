"""Removing an agent install: only what it made, each object checked before it goes.

:func:`unload` follows an install record (:mod:`~.record`) but trusts it only for objects the
agent itself made: tc filters running its own egress program id, ``clsact`` qdiscs it added
that hold no filter any more, its sockops program (by id, named ``tpc_sockops``), cgroups it
made (the inode recorded at creation), and pins of its own bpffs folder (its inode; each pin
opened and checked to hold a program or map of one of the agent's names). Also the ``tc``
helpers :mod:`~.loader` uses to attach.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..errors import HostAgentError
from . import bpfsys
from .program import LAYOUTS
from .record import DEFAULT_PINS, Install

__all__ = ["unload", "PROGRAMS", "OWN_MAPS", "PREF"]

#: The programs and this agent's own maps (besides the table), as pinned and as named.
PROGRAMS = ("tpc_sockops", "tpc_egress", "tpc_probe")
OWN_MAPS = ("tpc_config", "tpc_conns", "tpc_stats", "tpc_slot_use", "tpc_wrr", "tpc_scratch",
            "tpc_pkt_srh", "tpc_tables", "tpc_gen", "tpc_standby")
#: tc filter priority of the egress program (each agent under its own handle).
PREF = 49


def _tc_json(netns: Optional[str], *args: str) -> List[Dict[str, Any]]:
    argv = ["tc", "-j"] + (["-n", netns] if netns else []) + list(args)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise HostAgentError(f"{' '.join(argv)}: {r.stderr.strip()[-200:]}")
    try:
        out = json.loads(r.stdout or "[]")
    except ValueError:
        return []
    return out if isinstance(out, list) else []


def _qdiscs(netns: Optional[str], dev: str) -> List[str]:
    return [str(q.get("kind")) for q in _tc_json(netns, "qdisc", "show", "dev", dev)]


def _filters(netns: Optional[str], dev: str, where: str = "egress") -> List[Dict[str, Any]]:
    """The bpf filters of ``dev``'s ``where`` hook: pref, handle, program id and name."""
    out = []
    for f in _tc_json(netns, "filter", "show", "dev", dev, where):
        opt = f.get("options")
        if not isinstance(opt, dict):
            continue
        try:
            handle = int(str(opt.get("handle", "0")), 16)
        except ValueError:
            continue
        prog = opt.get("prog") or {}
        out.append({"pref": f.get("pref"), "kind": f.get("kind"), "handle": handle,
                    "prog_id": prog.get("id"), "prog_name": prog.get("name")})
    return out


def _free_handle(netns: Optional[str], dev: str) -> int:
    used = {f["handle"] for f in _filters(netns, dev) if f["pref"] == PREF}
    return next(h for h in range(1, len(used) + 2) if h not in used)


# --------------------------------------------------------------------------- unload
def _named(kind: str, ident: Optional[int], names: Sequence[str]) -> bool:
    """The live object ``ident`` is a ``kind`` ('prog' or 'map') with one of ``names``."""
    if not ident:
        return False
    try:
        with (bpfsys.prog_by_id if kind == "prog" else bpfsys.map_by_id)(ident) as fd:
            info = bpfsys.prog_info(fd) if kind == "prog" else bpfsys.map_info(fd)
    except OSError:
        return False
    return info["name"] in names


def _unpin(path: str, kind: str, names: Sequence[str]) -> bool:
    """Unlink the pin ``path`` if it holds a ``kind`` named one of ``names``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    try:
        with bpfsys.obj_get(path) as fd:
            info = bpfsys.prog_info(fd) if kind == "prog" else bpfsys.map_info(fd)
    except OSError:
        return False
    if info["name"] not in names:
        return False
    os.unlink(path)
    return True


def _own_pin_dir(inst: Install) -> bool:
    """The install's bpffs folder is the one it made (the inode recorded at creation; a load
    killed between the mkdir and that record: the agents' own root, and still loading)."""
    d = inst.pin_dir
    if not d:
        return False
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    if inst.pin_dir_ino:
        return st.st_ino == inst.pin_dir_ino
    return inst.state == "loading" and d == f"{DEFAULT_PINS}/{inst.name}"


def _own_cgroup(inst: Install, path: str, ino: int) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    if ino:
        return st.st_ino == ino
    # killed between the mkdir and its record: only a cgroup made after this load began
    return inst.state == "loading" and st.st_ctime >= inst.started - 1.0


def unload(inst: Install) -> List[str]:
    """Remove what ``inst`` says :func:`load` created, each object checked to be the one this
    agent made: tc filters running its egress program id, clsact qdiscs it added that hold no
    filter any more, its sockops program id, cgroups it made (inode), the pins of its own folder
    (its inode; each pin holding one of its programs or maps, by name). What is already gone is
    skipped, so a half-removed install can be unloaded again. Returns what was removed."""
    done: List[str] = []
    ns = inst.netns
    egress = inst.prog_ids.get("tpc_egress")
    netns_ok = ns is None or Path("/run/netns", ns).exists()
    devs = sorted({str(f["dev"]) for f in inst.filters} | set(inst.clsact_created))
    for dev in devs if netns_ok else []:
        base = ["tc"] + (["-n", ns] if ns else [])
        try:
            mine = [f for f in _filters(ns, dev) if egress and f["prog_id"] == egress]
        except HostAgentError:
            continue  # the interface is gone
        for f in mine:
            r = subprocess.run(base + ["filter", "del", "dev", dev, "egress", "pref",
                                       str(f["pref"]), "handle", str(f["handle"]), "bpf"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                done.append(f"tc filter on {dev}")
        if dev in inst.clsact_created and "clsact" in _qdiscs(ns, dev) \
                and not _filters(ns, dev, "egress") and not _filters(ns, dev, "ingress"):
            r = subprocess.run(base + ["qdisc", "del", "dev", dev, "clsact"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                done.append(f"clsact qdisc on {dev}")
    cg = Path(inst.cgroup)
    sockops = inst.prog_ids.get("tpc_sockops")
    if cg.is_dir() and _named("prog", sockops, ("tpc_sockops",)):
        r = subprocess.run(["bpftool", "cgroup", "detach", str(cg), "sock_ops", "id",
                            str(sockops)], capture_output=True, text=True)
        if r.returncode == 0:
            done.append(f"sock_ops on {cg}")
    for path, ino in reversed(inst.cgroups_created):
        if not _own_cgroup(inst, path, ino):
            continue
        try:
            os.rmdir(path)
            done.append(f"cgroup {path}")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise HostAgentError(f"cannot remove cgroup {path}: {exc.strerror} (processes "
                                 f"still in it?)") from None
    if _own_pin_dir(inst):
        d = inst.pin_dir
        for prog in PROGRAMS:
            if _unpin(f"{d}/{prog}", "prog", (prog,)):
                done.append(f"{d}/{prog}")
        for m in (*set(LAYOUTS.values()), *OWN_MAPS):
            if _unpin(f"{d}/maps/{m}", "map", (m,)):
                done.append(f"{d}/maps/{m}")
        for folder in (f"{d}/maps", d):
            try:
                os.rmdir(folder)
                done.append(folder)
            except FileNotFoundError:
                continue
            except OSError:
                break  # something not ours in it: left
    if inst.pin_dir and os.path.dirname(inst.pin_dir) == DEFAULT_PINS:
        try:
            os.rmdir(DEFAULT_PINS)  # the agents' own root, when no agent is left in it
        except OSError:
            pass
    return done

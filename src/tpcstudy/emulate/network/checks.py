"""What the emulator needs from this machine, checked before anything is built.

:func:`check_system` probes each requirement for real, in a scratch namespace of its own (with
a run record, so ``tpcstudy emulate clean`` covers it too): privileges, iproute2, ``ip netns``,
veth, SRv6 (``seg6_enabled``), the per-namespace ECMP hash seed and policy 3, HTB and bfifo
queues, TCP cubic, and for ``verify`` bpftool with a private bpffs. MPTCP is reported, not
required. :func:`require` raises :class:`~tpcstudy.errors.EmulationUnavailable` naming
everything that is missing and how to get it. :func:`system_info` is what every results folder
records of this machine (kernel, tools, sysctls, ECMP hashing, shaping).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ...errors import EmulationError, EmulationUnavailable, HostAgentError
from ...hostagent.bpffs import run_private
from . import kernel as _ns
from .kernel import TCP_CONGESTION
from .lifecycle import new_prefix, remove_record, write_record
from .spec import HASH_FIELDS, HASH_POLICY, namespace_sysctls

__all__ = ["check_system", "require", "tool_versions", "system_info", "kernel_line", "OK"]

OK = "ok"
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21

_HOW = {
    "iproute2": "install iproute2 (Debian/Ubuntu: apt-get install iproute2)",
    "bpftool": "install bpftool (Debian: apt-get install bpftool; Ubuntu: linux-tools-common and "
               "linux-tools-$(uname -r))",
    "unshare": "install util-linux (apt-get install util-linux)",
}


def _caps() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def has_privileges() -> bool:
    """CAP_NET_ADMIN and CAP_SYS_ADMIN in effect: root without them (a container's, or with
    capabilities dropped) cannot build the network either."""
    caps = _caps()
    return bool(caps >> CAP_NET_ADMIN & 1 and caps >> CAP_SYS_ADMIN & 1)


#: The kernel the README names: the per-namespace ECMP hash seed (6.11) for the emulator, the
#: BPF host agent's helpers and program types (6.1).
KERNEL_EMULATOR = (6, 11)
KERNEL_HOSTAGENT = (6, 1)


def _release_version(release: str) -> Optional[Tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def kernel_line(release: Optional[str] = None) -> str:
    """This kernel's release against the README's requirements (informative: a distribution
    kernel may carry the features earlier, and the probes decide)."""
    release = release if release is not None else os.uname().release
    v = _release_version(release)
    need = (f"the emulator needs Linux >= {KERNEL_EMULATOR[0]}.{KERNEL_EMULATOR[1]}, the BPF "
            f"host agent >= {KERNEL_HOSTAGENT[0]}.{KERNEL_HOSTAGENT[1]}")
    if v is None:
        return f"{release} (version not understood; {need}: the probes decide)"
    if v >= KERNEL_EMULATOR:
        return f"{release} (ok: {need})"
    return f"{release} (older than the README's: {need}; the probes above decide)"


def tool_versions() -> Dict[str, Optional[str]]:
    """``ip -V``, ``tc -V``, ``bpftool version`` (first line each; ``None`` when missing)."""
    out: Dict[str, Optional[str]] = {}
    for name, argv in (("ip", ["ip", "-V"]), ("tc", ["tc", "-V"]),
                       ("bpftool", ["bpftool", "version"])):
        if shutil.which(argv[0]) is None:
            out[name] = None
            continue
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        text = (p.stdout or p.stderr).strip().splitlines()
        out[name] = text[0] if text else None
    return out


def _bpftool_works() -> str:
    """``ok`` when bpftool is there and runs (a broken install is not the kernel's fault)."""
    if not shutil.which("bpftool"):
        return f"bpftool not found: {_HOW['bpftool']}"
    try:
        p = subprocess.run(["bpftool", "version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        return f"bpftool does not run ({exc.strerror}): reinstall it ({_HOW['bpftool']})"
    if p.returncode != 0:
        return (f"bpftool does not run ({(p.stderr or p.stdout).strip()[:120]}): reinstall it "
                f"({_HOW['bpftool']})")
    return OK


def check_system(*, bpftool: bool = False) -> Dict[str, str]:
    """Probe every requirement; ``{requirement: "ok" | what is wrong and how to fix it}``."""
    res: Dict[str, str] = {}
    res["privileges"] = OK if has_privileges() else (
        ("root without CAP_NET_ADMIN and CAP_SYS_ADMIN (a container? run it privileged)"
         if os.geteuid() == 0 else "not root: run as root (sudo) or with CAP_NET_ADMIN and "
                                   "CAP_SYS_ADMIN") + " (namespaces, routes, queues, setns)")
    res["iproute2"] = OK if shutil.which("ip") and shutil.which("tc") else \
        f"'ip' or 'tc' not found: {_HOW['iproute2']}"
    if bpftool:
        res["bpftool"] = _bpftool_works()
        if not shutil.which("unshare"):
            res["unshare"] = f"unshare not found: {_HOW['unshare']}"
    if res["privileges"] != OK or res["iproute2"] != OK:
        for k in ("netns", "veth", "seg6", "ecmp hash", "queues", "tcp cubic"):
            res[k] = "not checked (needs the privileges and iproute2 above)"
        return res
    prefix = new_prefix()
    ns = f"{prefix}check"
    rec = {"prefix": prefix, "pid": os.getpid(), "pid_start": _ns.process_start_ticks(os.getpid()),
           "purpose": "system check", "processes": []}
    write_record(rec)
    try:
        try:
            _ns.run_batch("ip", [f"netns add {ns}"])
            res["netns"] = OK
        except EmulationError as exc:
            res["netns"] = f"'ip netns add' failed ({exc}); the kernel needs network namespaces " \
                           f"(CONFIG_NET_NS) and /run must be writable"
            return res
        seg6 = _ns.read_sysctl("net.ipv6.conf.all.seg6_enabled", netns=ns)
        res["seg6"] = OK if seg6 is not None else (
            "no net.ipv6.conf.all.seg6_enabled: the kernel lacks IPv6 Segment Routing (IPv6 and "
            "SRv6 support, Linux >= 4.14)")
        seed = _ns.read_sysctl("net.ipv4.fib_multipath_hash_seed", netns=ns)
        try:
            _ns.write_sysctls([("net.ipv6.fib_multipath_hash_policy", "3"),
                               ("net.ipv6.fib_multipath_hash_fields", "0x37")], netns=ns)
            policy_ok = True
        except EmulationError:
            policy_ok = False
        if seed is None:
            res["ecmp hash"] = ("no net.ipv4.fib_multipath_hash_seed (Linux >= 6.11): without a "
                                "seed per namespace every router hashes alike and the equal-cost "
                                "splits are not independent")
        elif not policy_ok:
            res["ecmp hash"] = ("net.ipv6.fib_multipath_hash_policy 3 (custom fields, Linux >= "
                                "5.14) is refused")
        else:
            res["ecmp hash"] = OK
        try:
            _ns.run_batch("ip", ["link add c0 type veth peer name c1", "link set c0 up",
                                 "link set c1 up"], netns=ns)
            res["veth"] = OK
        except EmulationError as exc:
            res["veth"] = f"cannot create a veth pair ({exc}): the kernel needs CONFIG_VETH"
        if res["veth"] == OK:
            problems = []
            for what, lines in (
                    ("htb", ["qdisc add dev c0 root handle 1: htb default 1",
                             "class add dev c0 parent 1: classid 1:1 htb rate 1000000bit"]),
                    ("bfifo", ["qdisc add dev c0 parent 1:1 handle 2: bfifo limit 30000"])):
                try:
                    _ns.run_batch("tc", lines, netns=ns)
                except EmulationError as exc:
                    problems.append(f"{what} ({exc})")
            res["queues"] = OK if not problems else (
                "missing queueing disciplines: " + "; ".join(problems)
                + ": the kernel needs CONFIG_NET_SCH_HTB and CONFIG_NET_SCH_FIFO")
        else:
            res["queues"] = "not checked (no veth)"
        try:
            with _ns.enter(ns):
                s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
                try:
                    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"cubic")
                finally:
                    s.close()
            res["tcp cubic"] = OK
        except OSError as exc:
            res["tcp cubic"] = (f"cannot use TCP cubic on a socket ({exc.strerror}): "
                                f"modprobe tcp_cubic")
        mptcp = _ns.read_sysctl("net.mptcp.enabled", netns=ns)
        res["mptcp (not required)"] = OK if mptcp is not None else "no MPTCP in this kernel"
        res["iperf3 (not required)"] = OK if shutil.which("iperf3") else (
            "not installed (apt-get install iperf3): 'emulate exec' runs any program, the "
            "notebook falls back to a plain TCP transfer")
        if bpftool and res.get("bpftool") == OK and "unshare" not in res:
            try:
                run_private([["bpftool", "map", "create", "/sys/fs/bpf/check", "type", "hash",
                              "key", "8", "value", "1556", "entries", "1024", "name",
                              "dest_map"]], timeout=60)
                res["bpf maps"] = OK
            except HostAgentError as exc:
                res["bpf maps"] = (f"cannot create a BPF hash map in a private bpffs ({exc}): "
                                   f"the kernel needs CONFIG_BPF_SYSCALL and bpffs")
        return res
    finally:
        try:
            _ns.run_batch("ip", [f"netns del {ns}"], force=True)
        except EmulationError:
            pass
        if not _ns.list_namespaces(prefix):
            remove_record(prefix)


def require(*, bpftool: bool = False) -> Dict[str, str]:
    """:func:`check_system`, raising :class:`EmulationUnavailable` if anything required fails."""
    res = check_system(bpftool=bpftool)
    missing = [f"{k}: {v}" for k, v in res.items() if v != OK and not k.endswith("(not required)")
               and not v.startswith("not checked")]
    if missing:
        raise EmulationUnavailable(missing)
    return res


def system_info() -> Dict[str, Any]:
    """Kernel, tools and the per-namespace sysctls: what a reader needs to redo a run."""
    uname = platform.uname()
    host: Dict[str, Optional[List[str]]] = {}
    for key in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max", "net.core.wmem_max",
                "net.ipv4.tcp_mem"):
        try:
            host[key] = Path("/proc/sys", *key.split(".")).read_text().split()
        except OSError:
            host[key] = None
    return {
        "kernel": uname.release, "kernel_version": uname.version, "machine": uname.machine,
        "cpus": len(os.sched_getaffinity(0)),
        "tools": tool_versions(),
        "namespace_sysctls": {k: ("per namespace: crc32(seed NUL router name)"
                                  if k.endswith("hash_seed") else v)
                              for k, v in dict(namespace_sysctls(0)).items()},
        "interface_sysctls": {"net.ipv6.conf.<veth>.seg6_enabled": "1"},
        "host_sysctls": host,
        "ecmp": f"fib_multipath_hash_policy {HASH_POLICY}, fields {hex(HASH_FIELDS)} (addresses, "
                f"protocol, ports), a different hash seed per namespace",
        "tcp": "cubic per socket (TCP_CONGESTION), SO_LINGER 0 on close",
        "shaping": "HTB per veth end at capacity / smallest capacity * link_mbps, bfifo of "
                   "queue_ms at that rate (>= 10 packets), gso_max_segs 1, the MTU of --mtu",
        "hosts": "on the router's lo; every locally generated packet leaves by an unshaped "
                 "veth (hostnic -> hostgw, rule iif lo table 100) and is forwarded from there",
    }

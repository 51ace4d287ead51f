"""Operating-system plumbing of the emulator: namespaces, iproute2 batches, sysctls, ``/proc``.

Every call into the kernel goes through this module (the traffic agent's processes import it
too, so it imports nothing of tpcstudy but :mod:`tpcstudy.errors`):

- :func:`enter` switches the calling *thread* into a named network namespace (``setns(2)``;
  via ``ctypes`` where Python < 3.12 has no ``os.setns``) and back; :class:`NetnsSwitch` keeps
  one descriptor per namespace open to create many sockets in many namespaces. A socket created
  inside stays in that namespace for its whole life, so one process can own sockets in many
  namespaces; files under ``/proc/sys/net`` and ``/proc/thread-self/net`` opened inside show
  that namespace.
- :func:`run_batch` feeds lines to ``ip -batch -`` or ``tc -batch -`` (optionally ``-n NS``):
  one process per batch, which is what makes building a 166-router network take seconds. The
  lines are parsed by iproute2 itself, never by a shell.
- :func:`write_sysctls`, :func:`read_sysctl`, :func:`interface_counters`,
  :func:`netstat_counters` read and write the namespace's ``/proc`` files from inside it.
- The socket options the emulator sets (:data:`IPV6_RTHDR`, :data:`IPPROTO_MPTCP`, ...), named
  once for every module.

Why iproute2 through subprocess rather than pyroute2: it adds no Python dependency, ``--dry-run``
can print the exact lines that would run (a shell script anyone can replay or read), errors come
with iproute2's own wording and line number, and ``ip -batch`` is as fast as netlink from Python
for building thousands of routes.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ...errors import EmulationError
from ...linux import (
    CGROUP_ROOT,
    CLONE_NEWNET,
    NETNS_DIR,
    cgroup_of,
    enter_netns_fd,
    join_cgroup,
    join_netns,
    netns_kept,
    setns,
    thread_netns_fd,
)

__all__ = ["NETNS_DIR", "CLONE_NEWNET", "enter", "NetnsSwitch", "Batch", "run_batch", "write_sysctls",
           "read_sysctl", "interface_counters", "netstat_counters", "list_namespaces",
           "sysctl_path", "process_alive", "process_start_ticks", "IPV6_RTHDR", "IPPROTO_MPTCP",
           "TCP_CONGESTION", "TCP_INFO", "TCP_MAXSEG", "SO_MAX_PACING_RATE"]


# Socket options (``<linux/in6.h>``, ``<linux/tcp.h>``, ``<asm-generic/socket.h>``,
# ``<linux/in.h>``); Python's socket module does not export all of them.
IPV6_RTHDR = getattr(socket, "IPV6_RTHDR", 57)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_MAXSEG = getattr(socket, "TCP_MAXSEG", 2)
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
#: A multipath TCP socket (``socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)``).
IPPROTO_MPTCP = 262

_setns = setns


@contextlib.contextmanager
def enter(name: str) -> Iterator[None]:
    """Run the body with this thread inside the named network namespace ``name``
    (:func:`tpcstudy.linux.in_netns`, a missing namespace said as an emulation error).

    The thread's own namespace is restored on exit, also after an exception.
    """
    with netns_kept():
        try:
            join_netns(name)
        except FileNotFoundError:
            raise EmulationError(f"network namespace {name!r} does not exist") from None
        yield


class NetnsSwitch:
    """Sockets created inside named namespaces by one thread, which stays in its own namespace
    between them (one open descriptor per namespace, kept until :meth:`close`); and, when
    asked, by this process while in a given cgroup v2 (a socket belongs to the cgroup of the
    process that creates it, for good: where an emulated host's BPF agent sees it)."""

    def __init__(self) -> None:
        self.home = thread_netns_fd()
        self.fds: Dict[str, int] = {}
        self.home_cgroup: Optional[Path] = None
        self.cgroup: Optional[Path] = None

    def _join(self, cgroup: Optional[str]) -> None:
        want = Path(cgroup) if cgroup else self.home_cgroup
        if want == self.cgroup or (want is None and self.cgroup is None):
            return
        if self.home_cgroup is None:
            self.home_cgroup = self.cgroup = cgroup_of()
            if want is None:
                return
        assert want is not None
        base = CGROUP_ROOT / "tpcstudy"
        if want != self.home_cgroup and base not in want.parents:
            raise EmulationError(f"cgroup {str(want)[:120]!r} is not an emulated host's "
                                 f"(under {base})")
        join_cgroup(want)
        self.cgroup = want

    def leave_cgroup(self) -> None:
        """Back to the process's own cgroup (if it moved)."""
        if self.cgroup != self.home_cgroup:
            self._join(None)

    def socket_in(self, netns: Optional[str], family: int = socket.AF_INET6,
                  kind: int = socket.SOCK_STREAM, proto: int = 0,
                  cgroup: Optional[str] = None) -> socket.socket:
        """A socket created inside ``netns`` (``None``: this thread's own namespace) by this
        process while in ``cgroup`` (``None``: the process's own)."""
        if cgroup or self.cgroup != self.home_cgroup:
            self._join(cgroup)
        if not netns:
            return socket.socket(family, kind, proto)
        fd = self.fds.get(netns)
        if fd is None:
            try:
                fd = self.fds[netns] = enter_netns_fd(netns)
            except FileNotFoundError:
                raise EmulationError(f"network namespace {netns!r} does not exist") from None
        _setns(fd)
        try:
            return socket.socket(family, kind, proto)
        finally:
            _setns(self.home)

    def close(self) -> None:
        for fd in [*self.fds.values(), self.home]:
            os.close(fd)
        self.fds.clear()


def list_namespaces(prefix: str = "") -> List[str]:
    """Named network namespaces (as ``ip netns list`` shows them) starting with ``prefix``."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


class Batch:
    """``tool [-6] [-n netns] [-force] -batch -`` started now, its lines given later
    (:meth:`feed`), so that a change prepared ahead lands without a process start: the IGP
    starts its routers' ``ip`` while it waits out its delay. ``on_start(pid)`` is called once
    it runs. :meth:`cancel` ends it with no input (it changes nothing)."""

    def __init__(self, tool: str, *, netns: Optional[str] = None, force: bool = False,
                 label: str = "", ipv6: bool = False,
                 on_start: Optional[Callable[[int], None]] = None) -> None:
        if tool not in ("ip", "tc"):
            raise ValueError(f"run_batch: tool must be 'ip' or 'tc', not {tool!r}")
        argv = [tool] + (["-6"] if ipv6 else [])
        if netns:
            argv += ["-n", netns]
        if force:
            argv.append("-force")
        self.argv, self.label = argv + ["-batch", "-"], label
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
        except FileNotFoundError:
            raise EmulationError(f"{tool!r} not found: install iproute2 (apt-get install "
                                 f"iproute2)") from None
        try:
            if on_start is not None:
                on_start(self.proc.pid)
        except BaseException:
            self.cancel()
            raise

    def feed(self, lines: Sequence[str]) -> None:
        """Give it ``lines`` and wait for it.

        Raises
        ------
        EmulationError
            The tool failed; the message quotes the failing line and the tool's error.
        """
        proc = self.proc
        try:
            out, err_text = proc.communicate("\n".join(lines) + "\n" if lines else "",
                                             timeout=600)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if proc.returncode != 0:
            err = (err_text or out).strip()
            where = ""
            for word in err.replace(":", " ").split():  # "Command failed -:12"
                if word.isdigit() and 0 < int(word) <= len(lines):
                    where = f" at line {word}: {lines[int(word) - 1]!r}"
            first = err.splitlines()[0] if err else f"exit {proc.returncode}"
            raise EmulationError(f"{' '.join(self.argv)}"
                                 f"{' (' + self.label + ')' if self.label else ''} failed"
                                 f"{where}: {first}")

    def cancel(self) -> None:
        """End it with no input; killed if it does not end within 5 s."""
        try:
            self.proc.communicate("", timeout=5)
        except BaseException:  # noqa: BLE001 - a stuck tool is ours: end it
            self.proc.kill()
            self.proc.wait()


def run_batch(tool: str, lines: Sequence[str], *, netns: Optional[str] = None,
              force: bool = False, label: str = "", ipv6: bool = False,
              on_start: Optional[Callable[[int], None]] = None) -> None:
    """Run ``tool [-6] [-n netns] [-force] -batch -`` with ``lines`` on its standard input;
    ``on_start(pid)`` is called once it runs (before its input is written).

    Raises
    ------
    EmulationError
        The tool failed; the message quotes the failing line and the tool's error.
    """
    if tool not in ("ip", "tc"):
        raise ValueError(f"run_batch: tool must be 'ip' or 'tc', not {tool!r}")
    if not lines:
        return
    Batch(tool, netns=netns, force=force, label=label, ipv6=ipv6, on_start=on_start).feed(lines)


def sysctl_path(key: str) -> Path:
    """``/proc/sys`` file of a dotted sysctl name (``net.ipv6.conf.all.seg6_enabled``)."""
    return Path("/proc/sys", *key.split("."))


def write_sysctls(values: Sequence[Tuple[str, str]], *, netns: Optional[str] = None) -> None:
    """Write sysctls (dotted names) in namespace ``netns`` (the current one when ``None``)."""
    ctx = enter(netns) if netns else contextlib.nullcontext()
    with ctx:
        for key, value in values:
            path = sysctl_path(key)
            try:
                with open(path, "w") as fh:
                    fh.write(str(value))
            except FileNotFoundError:
                raise EmulationError(f"sysctl {key} does not exist in this kernel"
                                     f"{' (namespace ' + netns + ')' if netns else ''}") from None
            except OSError as exc:
                raise EmulationError(f"cannot set sysctl {key}={value}"
                                     f"{' in ' + netns if netns else ''}: "
                                     f"{exc.strerror or exc}") from None


def read_sysctl(key: str, *, netns: Optional[str] = None) -> Optional[str]:
    """The value of a sysctl, or ``None`` when the kernel does not have it."""
    ctx = enter(netns) if netns else contextlib.nullcontext()
    with ctx:
        try:
            return sysctl_path(key).read_text().strip()
        except FileNotFoundError:
            return None


def _parse_net_dev(text: str) -> Dict[str, Tuple[int, int, int, int]]:
    """``/proc/net/dev`` -> ``{interface: (rx_bytes, rx_packets, tx_bytes, tx_packets)}``."""
    out: Dict[str, Tuple[int, int, int, int]] = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 10:
            out[name.strip()] = (int(f[0]), int(f[1]), int(f[8]), int(f[9]))
    return out


Counters = Dict[str, Tuple[int, int, int, int]]


def interface_counters(namespaces: Sequence[str]) -> Dict[str, Counters]:
    """Per namespace, per interface ``(rx_bytes, rx_packets, tx_bytes, tx_packets)``.

    Read from ``/proc/thread-self/net/dev`` inside each namespace: no process is started.
    """
    out = {}
    for ns in namespaces:
        with enter(ns):
            with open("/proc/thread-self/net/dev") as fh:
                out[ns] = _parse_net_dev(fh.read())
    return out


def _parse_netstat(text: str, group: str) -> Dict[str, int]:
    """One group of ``/proc/net/netstat`` (``MPTcpExt``, ``TcpExt``): counter -> value."""
    rows = [ln.split() for ln in text.splitlines() if ln.startswith(group + ":")]
    if len(rows) < 2:
        return {}
    return {k: int(v) for k, v in zip(rows[0][1:], rows[1][1:])}


def netstat_counters(namespaces: Sequence[str], group: str) -> Dict[str, Dict[str, int]]:
    """Per namespace, the counters of one ``/proc/net/netstat`` group, read in-process."""
    out = {}
    for ns in namespaces:
        with enter(ns):
            with open("/proc/thread-self/net/netstat") as fh:
                out[ns] = _parse_netstat(fh.read(), group)
    return out


def process_alive(pid: int, start_ticks: Optional[int] = None) -> bool:
    """``True`` when ``pid`` runs and, if given, started at ``start_ticks`` (so a reused pid of
    another program does not count as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        state = ""
    if state in ("Z", "X"):  # a zombie waiting for its parent to reap it is gone already
        return False
    if start_ticks is None:
        return True
    return process_start_ticks(pid) == start_ticks


def process_start_ticks(pid: int) -> Optional[int]:
    """Start time of ``pid`` in clock ticks since boot (field 22 of ``/proc/PID/stat``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text.rsplit(")", 1)[-1].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None

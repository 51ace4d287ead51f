"""Three Linux primitives that the emulator's kernel plumbing and the BPF host agent share:
entering a network namespace (``setns(2)``; the one home: :func:`join_netns`, :func:`in_netns`,
:func:`netns_kept`), moving a process into a cgroup v2, and dying with one's parent
(:func:`die_with_parent`: the study's workers, the traffic agent, every process an emulated host
runs).

A leaf module (standard library only): the traffic agent's processes import it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from pathlib import Path
from typing import Iterator, Optional, Union

__all__ = ["NETNS_DIR", "CGROUP_ROOT", "CLONE_NEWNET", "setns", "enter_netns_fd", "join_netns",
           "netns_kept", "in_netns", "thread_netns_fd",
           "join_cgroup", "cgroup_of", "die_with_parent", "PR_SET_PDEATHSIG"]

#: Where ``ip netns add`` bind-mounts named namespaces.
NETNS_DIR = Path("/run/netns")


def _cgroup2_root() -> Path:
    """Where the cgroup v2 hierarchy is mounted: ``/sys/fs/cgroup`` on unified systems,
    ``/sys/fs/cgroup/unified`` on hybrid ones (the first ``cgroup2`` mount)."""
    try:
        with open("/proc/self/mounts") as fh:
            for line in fh:
                f = line.split()
                if len(f) > 2 and f[2] == "cgroup2":
                    return Path(f[1])
    except OSError:
        pass
    return Path("/sys/fs/cgroup")


#: Where the cgroup v2 hierarchy is mounted.
CGROUP_ROOT = _cgroup2_root()
#: ``setns(2)``'s namespace type for network namespaces (``<linux/sched.h>``).
CLONE_NEWNET = 0x40000000

_libc: Optional[ctypes.CDLL] = None


def setns(fd: int, kind: int = CLONE_NEWNET) -> None:
    """``setns(fd, kind)`` for the calling thread (``os.setns`` on Python >= 3.12)."""
    global _libc
    native = getattr(os, "setns", None)
    if native is not None:
        native(fd, kind)
        return
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, kind) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def enter_netns_fd(name: str) -> int:
    """An open descriptor of the named network namespace ``name`` (``/run/netns/NAME``)."""
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"network namespace name {name!r}")
    return os.open(NETNS_DIR / name, os.O_RDONLY | os.O_CLOEXEC)


def thread_netns_fd() -> int:
    """An open descriptor of the calling thread's own network namespace."""
    return os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)


def join_netns(name: str) -> None:
    """Move the calling thread into the named network namespace (``/run/netns/NAME``).

    Raises
    ------
    FileNotFoundError
        No such namespace. ``ValueError``: not a namespace name.
    """
    fd = enter_netns_fd(name)
    try:
        setns(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def netns_kept() -> Iterator[None]:
    """The body may move this thread into other network namespaces (:func:`join_netns`): it is
    back in its own afterwards, also after an exception."""
    own = thread_netns_fd()
    try:
        yield
    finally:
        try:
            setns(own)
        finally:
            os.close(own)


@contextlib.contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the body with this thread inside the named network namespace, then back."""
    with netns_kept():
        join_netns(name)
        yield


#: ``prctl(2)``'s option: the signal this process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent (pid ``parent``) dies, however it
    dies (``prctl(PR_SET_PDEATHSIG)``; kept across ``execve``); exit at once if the parent
    already died before the request. Without ``prctl`` (not Linux) only that check."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if parent and os.getppid() != parent:
        os._exit(1)


def join_cgroup(path: Union[str, Path], pid: int = 0) -> None:
    """Move process ``pid`` (0: this one) into the cgroup v2 folder ``path``: its sockets
    created from now on belong to that cgroup (and its BPF programs)."""
    fd = os.open(Path(path) / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        os.write(fd, str(pid or os.getpid()).encode("ascii"))
    finally:
        os.close(fd)


def cgroup_of(pid: int = 0) -> Path:
    """The cgroup v2 folder of process ``pid`` (0: this one)."""
    text = Path(f"/proc/{pid or 'self'}/cgroup").read_text()
    for line in text.splitlines():
        if line.startswith("0::"):
            return CGROUP_ROOT / line[3:].lstrip("/")
    raise OSError(f"no cgroup v2 line in /proc/{pid or 'self'}/cgroup")

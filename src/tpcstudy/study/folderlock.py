"""The one-writer lock of a results folder (``out_dir/.lock``) and who holds it: the run writing
the folder holds an advisory ``flock`` on ``.lock`` (which holds its pid); a reader asks the
kernel's table of locks who that is, without taking the lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path
from typing import Iterator, Optional, Union

from ..errors import InputFileError, UsageError
from ..io.bounded import read_bounded_text

__all__ = ["folder_lock", "folder_writer"]


@contextlib.contextmanager
def folder_lock(out_dir: Union[str, Path]) -> Iterator[Path]:
    """Hold the one-writer lock of a results folder (``out_dir/.lock``) for the block.

    The lock is an advisory ``flock`` on ``.lock``, which holds the holder's pid; the kernel
    drops it when the holder exits, however it exits, so a killed run never leaves it taken.

    Raises
    ------
    UsageError
        Another run holds the lock (the message names its pid).
    """
    out = Path(out_dir)
    if str(out_dir) == "":
        raise UsageError("--out '': name a results folder")
    out.mkdir(parents=True, exist_ok=True)
    path = out / ".lock"
    try:  # a results folder may be shared: never follow a link planted as .lock
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise UsageError(f"{path}: cannot open the folder's lock ({exc.strerror}; a link?)") \
            from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"{path}: not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise UsageError(f"{out}: another tpcstudy run (pid {holder}) is writing this folder; "
                             "wait for it, stop it, or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield out
    finally:
        os.close(fd)


def folder_writer(out_dir: Union[str, Path]) -> Optional[int]:
    """The pid of the live run writing ``out_dir`` (holding its ``.lock``), else ``None``.

    Read from the kernel's table of locks (``/proc/locks``), not by taking the lock: a reader
    never makes a starting run fail, and a dead run's pid left in ``.lock`` does not count."""
    try:
        st = os.lstat(Path(out_dir) / ".lock")
        if not stat.S_ISREG(st.st_mode):
            return None
        table = read_bounded_text("/proc/locks", 64 << 20, what="lock table")
    except (OSError, InputFileError):
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in table.splitlines():
        parts = line.split()
        if "FLOCK" not in parts or "->" in parts:  # a waiter, not the holder
            continue
        i = parts.index("FLOCK")
        try:
            pid, (major, minor, ino) = int(parts[i + 3]), parts[i + 4].split(":")
            if (int(major, 16), int(minor, 16), int(ino)) == want:
                return pid
        except (IndexError, ValueError):
            continue
    return None

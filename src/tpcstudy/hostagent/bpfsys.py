"""The few ``bpf(2)`` commands the agent's table updates need, called directly (``ctypes``).

``bpftool`` starts a process per command and parses hex text; a table swap must take
milliseconds: a new inner map is created (:func:`map_create`), filled in one call
(:func:`update_batch`) and swapped into ``tpc_tables`` with one :func:`update` of its key 0.
Objects are opened by pin (:func:`obj_get`) or by id (:func:`map_by_id`, :func:`prog_by_id`),
and :func:`map_info` / :func:`prog_info` say what an open descriptor really is (its id, name,
type, sizes) so that nothing is used on the word of a record alone. Layouts: ``<linux/bpf.h>``
(``union bpf_attr``, ``struct bpf_map_info``, ``struct bpf_prog_info``), x86_64 and arm64.
Standard library only; every function raises :class:`OSError` with the kernel's errno.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["MAP_HASH", "MAP_ARRAY", "MAP_ARRAY_OF_MAPS", "map_create", "obj_get", "map_by_id",
           "prog_by_id", "map_info", "prog_info", "update", "lookup", "update_batch", "keys",
           "delete", "delete_batch",
           "test_run", "Fd"]

_NR_BPF = {"x86_64": 321, "aarch64": 280, "arm64": 280}
MAP_HASH, MAP_ARRAY, MAP_ARRAY_OF_MAPS = 1, 2, 12
_MAP_CREATE, _LOOKUP, _UPDATE, _DELETE, _NEXT_KEY, _OBJ_GET = 0, 1, 2, 3, 4, 7
_TEST_RUN, _PROG_BY_ID, _MAP_BY_ID, _INFO = 10, 13, 14, 15
_UPDATE_BATCH, _DELETE_BATCH = 26, 27
_ATTR = 128

_libc: Optional[ctypes.CDLL] = None


def _bpf(cmd: int, attr: ctypes.Array) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    nr = _NR_BPF.get(platform.machine())
    if nr is None:
        raise OSError(38, f"bpf(2) number unknown on {platform.machine()}")
    r = _libc.syscall(ctypes.c_long(nr), ctypes.c_long(cmd), attr, ctypes.c_long(len(attr)))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(r)


def _attr() -> ctypes.Array:
    return ctypes.create_string_buffer(_ATTR)


def _addr(buf: ctypes.Array) -> int:
    return ctypes.addressof(buf)


class Fd(int):
    """A BPF object's descriptor (an ``int``), closed by ``with`` or :meth:`close`."""

    def close(self) -> None:
        try:
            os.close(self)
        except OSError:
            pass

    def __enter__(self) -> "Fd":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def map_create(kind: int, key_size: int, value_size: int, max_entries: int, *, name: str = "",
               flags: int = 0) -> Fd:
    a = _attr()
    struct.pack_into("<6I", a, 0, kind, key_size, value_size, max_entries, flags, 0)
    struct.pack_into("16s", a, 28, name.encode()[:15])
    return Fd(_bpf(_MAP_CREATE, a))


def obj_get(path: str) -> Fd:
    """The object pinned at ``path`` (a bpffs file)."""
    p = ctypes.create_string_buffer(os.fsencode(path))
    a = _attr()
    struct.pack_into("<QII", a, 0, _addr(p), 0, 0)
    return Fd(_bpf(_OBJ_GET, a))


def _by_id(cmd: int, ident: int) -> Fd:
    a = _attr()
    struct.pack_into("<III", a, 0, int(ident), 0, 0)
    return Fd(_bpf(cmd, a))


def map_by_id(ident: int) -> Fd:
    return _by_id(_MAP_BY_ID, ident)


def prog_by_id(ident: int) -> Fd:
    return _by_id(_PROG_BY_ID, ident)


def _info(fd: int, size: int) -> bytes:
    buf = ctypes.create_string_buffer(size)
    a = _attr()
    struct.pack_into("<IIQ", a, 0, fd, size, _addr(buf))
    _bpf(_INFO, a)
    return buf.raw


def map_info(fd: int) -> Dict[str, Any]:
    """``struct bpf_map_info``: type, id, key_size, value_size, max_entries, flags, name."""
    raw = _info(fd, 88)
    kind, ident, ks, vs, n, flags = struct.unpack_from("<6I", raw, 0)
    name = raw[24:40].split(b"\0", 1)[0].decode(errors="replace")
    return {"type": kind, "id": ident, "key_size": ks, "value_size": vs, "max_entries": n,
            "flags": flags, "name": name}


def prog_info(fd: int) -> Dict[str, Any]:
    """``struct bpf_prog_info``: type, id, name."""
    raw = _info(fd, 80)
    kind, ident = struct.unpack_from("<2I", raw, 0)
    name = raw[64:80].split(b"\0", 1)[0].decode(errors="replace")
    return {"type": kind, "id": ident, "name": name}


def update(fd: int, key: bytes, value: bytes, flags: int = 0) -> None:
    k = ctypes.create_string_buffer(bytes(key), len(key))
    v = ctypes.create_string_buffer(bytes(value), len(value))
    a = _attr()
    struct.pack_into("<IIQQQ", a, 0, fd, 0, _addr(k), _addr(v), flags)
    _bpf(_UPDATE, a)


def lookup(fd: int, key: bytes, value_size: int) -> bytes:
    k = ctypes.create_string_buffer(bytes(key), len(key))
    v = ctypes.create_string_buffer(value_size)
    a = _attr()
    struct.pack_into("<IIQQQ", a, 0, fd, 0, _addr(k), _addr(v), 0)
    _bpf(_LOOKUP, a)
    return v.raw


def delete(fd: int, key: bytes) -> None:
    k = ctypes.create_string_buffer(bytes(key), len(key))
    a = _attr()
    struct.pack_into("<IIQ", a, 0, fd, 0, _addr(k))
    _bpf(_DELETE, a)


def keys(fd: int, key_size: int, limit: int = 1 << 20) -> List[bytes]:
    """Every key of a map (``BPF_MAP_GET_NEXT_KEY``), at most ``limit``."""
    out: List[bytes] = []
    cur = None
    nxt = ctypes.create_string_buffer(key_size)
    while len(out) < limit:
        a = _attr()
        k = ctypes.create_string_buffer(cur, key_size) if cur is not None else None
        struct.pack_into("<IIQQ", a, 0, fd, 0, _addr(k) if k is not None else 0, _addr(nxt))
        try:
            _bpf(_NEXT_KEY, a)
        except OSError as exc:
            if exc.errno == 2:  # ENOENT: the last key
                break
            raise
        cur = nxt.raw
        out.append(cur)
    return out


def update_batch(fd: int, records: Sequence[Tuple[bytes, bytes]]) -> int:
    """Write every ``(key, value)`` in one ``BPF_MAP_UPDATE_BATCH`` call; the count written."""
    if not records:
        return 0
    keys = ctypes.create_string_buffer(b"".join(k for k, _ in records))
    vals = ctypes.create_string_buffer(b"".join(v for _, v in records))
    a = _attr()
    struct.pack_into("<QQQQIIQQ", a, 0, 0, 0, _addr(keys), _addr(vals), len(records), fd, 0, 0)
    _bpf(_UPDATE_BATCH, a)
    return int(struct.unpack_from("<I", a, 32)[0])


def delete_batch(fd: int, keys_: Sequence[bytes]) -> int:
    """Delete every key of ``keys_`` in one ``BPF_MAP_DELETE_BATCH`` call; the count deleted."""
    if not keys_:
        return 0
    kb = ctypes.create_string_buffer(b"".join(keys_))
    a = _attr()
    struct.pack_into("<QQQQIIQQ", a, 0, 0, 0, _addr(kb), 0, len(keys_), fd, 0, 0)
    _bpf(_DELETE_BATCH, a)
    return int(struct.unpack_from("<I", a, 32)[0])


def test_run(fd: int, data: bytes, repeat: int = 1) -> Tuple[int, int]:
    """``BPF_PROG_TEST_RUN`` of a tc program on ``data``: its return value and the mean run
    time in ns (the kernel runs it ``repeat`` times)."""
    din = ctypes.create_string_buffer(bytes(data), len(data))
    dout = ctypes.create_string_buffer(len(data) + 256)
    a = _attr()
    struct.pack_into("<IIIIQQII", a, 0, fd, 0, len(data), len(dout), _addr(din), _addr(dout),
                     repeat, 0)
    _bpf(_TEST_RUN, a)
    retval, = struct.unpack_from("<I", a, 4)
    duration, = struct.unpack_from("<I", a, 36)
    return int(retval), int(duration)

"""Bounded reading of every file tpcstudy takes as input: topologies (``.graph``, GML, GraphML),
demand matrices, results folders (``results.csv``, ``meta.json``), path tables and records.

Input is data that other people write, read as root, so every read here:

- takes regular files only: a FIFO, a device, a socket or a folder (also behind a symbolic link)
  is refused by its ``stat`` before it is opened (opening a device can have effects; a FIFO
  blocks), and the open file is checked again (``fstat``, the same inode) before a byte is read;
- stops at a size limit: a larger file is refused from its size, and a file that grows while it
  is read is refused at ``limit + 1`` bytes, so memory stays at most the limit;
- quotes at most :data:`QUOTE_CHARS` characters of any line in an error (:func:`clip`).

``follow=False`` also refuses a symbolic link itself (files in shared folders: the agent's
records, path tables). Every refusal is an :class:`~tpcstudy.errors.InputFileError` naming the
file and what it is ("a FIFO (named pipe)", not "no such file").
"""

from __future__ import annotations

import errno
import json
import os
import stat
from typing import Any, Callable, Optional, Union

from ..errors import InputFileError

__all__ = ["read_bounded", "read_bounded_text", "read_bounded_json", "check_input_file",
           "file_kind", "clip", "input_file_error", "ErrorFactory", "QUOTE_CHARS",
           "MAX_TEXT_BYTES", "MAX_JSON_DEPTH"]

PathLike = Union[str, "os.PathLike[str]"]
#: Makes the exception of a refusal from (file, line or None, what is wrong).
ErrorFactory = Callable[[str, Optional[int], str], Exception]


def input_file_error(file: str, line: Optional[int], what: str) -> Exception:
    """The default :data:`ErrorFactory`: an :class:`InputFileError` ``FILE[:LINE]: WHAT``."""
    return InputFileError(f"{file}{'' if line is None else f':{line}'}: {what}")


#: At most this many characters of a line (or value) are quoted in an error message.
QUOTE_CHARS = 80
#: Largest topology or demand file read (the largest REPETITA and Topology Zoo files are under
#: 1 MiB).
MAX_TEXT_BYTES = 256 << 20
#: Deepest nesting of a JSON document read (meta.json, records: a handful of levels).
MAX_JSON_DEPTH = 64


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in words: ``"a FIFO (named pipe)"``, ``"a folder"``, ..."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "not a regular file"


def clip(text: Any, width: int = QUOTE_CHARS) -> str:
    """``repr`` of ``text`` cut to ``width`` characters (saying how long it was): what an error
    message quotes of a line or a value, however long the line (a number: its ``repr``)."""
    if not isinstance(text, (str, bytes)):
        return repr(text)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if len(text) <= width:
        return repr(text)
    return f"{text[:width]!r}... ({len(text)} characters)"


def _refuse(path: PathLike, mode: int, what: str, error: ErrorFactory) -> Exception:
    return error(os.fspath(path), None, f"{file_kind(mode)}, not a regular file (refused: a {what} "
                 "file must be one)")


def check_input_file(path: PathLike, *, what: str = "input", follow: bool = True,
                     limit: Optional[int] = None, error: ErrorFactory = input_file_error
                     ) -> os.stat_result:
    """``path``'s ``stat`` when it is a regular file (behind a link too, with ``follow``) of at
    most ``limit`` bytes; else the ``error`` saying what it is: missing, a FIFO, a device, a
    folder, a link, too large. Nothing is opened."""
    name = os.fspath(path)
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        raise error(name, None, f"cannot read ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        raise error(name, None, "a symbolic link (refused: name the file itself)")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode, what, error)
    if limit is not None and st.st_size > limit:
        raise error(name, None, f"{st.st_size} bytes, more than the {limit} bytes any valid "
                    f"{what} file has")
    return st


def read_bounded(path: PathLike, limit: int, *, follow: bool = False, what: str = "input",
                 error: ErrorFactory = input_file_error) -> bytes:
    """A regular file's bytes, at most ``limit`` (module docstring); never blocks on a FIFO
    or opens a device. ``follow``: a symbolic link to a regular file is read too (the default
    refuses any link). ``error`` makes the exception of a refusal."""
    name = os.fspath(path)
    first = check_input_file(path, what=what, follow=follow, limit=limit, error=error)
    too_big = f"more than the {limit} bytes any valid {what} file has"
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(name, None, "a symbolic link (refused: name the file itself)") from None
        raise error(name, None, f"cannot read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, st.st_mode, what, error)
        if (st.st_dev, st.st_ino) != (first.st_dev, first.st_ino):
            raise error(name, None, "replaced while it was opened (read it again)")
        buf = bytearray()
        while len(buf) <= limit:
            chunk = os.read(fd, min(limit + 1 - len(buf), 1 << 20))
            if not chunk:
                break
            buf += chunk
        if len(buf) > limit:
            raise error(name, None, too_big)
        return bytes(buf)
    finally:
        os.close(fd)


def read_bounded_text(path: PathLike, limit: int = MAX_TEXT_BYTES, *, follow: bool = True,
                      what: str = "input", error: ErrorFactory = input_file_error) -> str:
    """:func:`read_bounded` decoded as UTF-8; a byte that is not is an error naming its line."""
    data = read_bounded(path, limit, follow=follow, what=what, error=error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(os.fspath(path), line, f"byte 0x{data[exc.start]:02x} at offset {exc.start} "
                    "is not UTF-8 text") from None


def _depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (a scan, no recursion)."""
    deepest = depth = 0
    in_str = esc = False
    for c in text:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def read_bounded_json(path: PathLike, limit: int, *, follow: bool = True, what: str = "JSON",
                      error: ErrorFactory = input_file_error) -> Any:
    """A JSON document of at most ``limit`` bytes and :data:`MAX_JSON_DEPTH` levels; anything
    else (not JSON, nested deeper) is one :class:`InputFileError` line."""
    text = read_bounded_text(path, limit, follow=follow, what=what, error=error)
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _depth(text) > MAX_JSON_DEPTH:
        raise error(os.fspath(path), None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep "
                    f"(no {what} file is)")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(os.fspath(path), None, f"not JSON ({str(exc)[:QUOTE_CHARS]})") from None


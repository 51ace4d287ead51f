"""Link events the controller reacts to: ``down A B`` / ``up A B`` lines (standard input or a
watched file), parsed strictly, or an emulated network's rtnetlink link events.

A line is ``down`` or ``up``, then two router names of the topology that share a link; blank
lines and ``#`` comments are skipped; anything else is an error naming the source, the line
number and the value (:func:`parse_line`). :class:`LineSource` reads a stream line by line (a
file that is appended to is followed, as ``tail -f`` does); :class:`NetlinkSource` wraps the
emulator's :class:`~tpcstudy.emulate.network.igp.LinkWatcher`.
"""

from __future__ import annotations

import dataclasses
import os
import select
import time
from typing import IO, Callable, List, Optional

from ..errors import UsageError
from ..topology import Topology

__all__ = ["Event", "parse_line", "LineSource", "NetlinkSource", "MAX_LINE"]

#: Longest event line accepted (bytes).
MAX_LINE = 512


@dataclasses.dataclass(frozen=True)
class Event:
    """``kind`` (down/up) of the link between router ids ``u`` < ``v``, detected at ``at``
    (``time.monotonic``), from ``source`` (``stdin:3``, ``netlink r2/to5``)."""

    kind: str
    u: int
    v: int
    at: float
    source: str


def _quote(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def parse_line(line: str, topo: Topology, where: str, lineno: int) -> Optional[Event]:
    """The event of one line, ``None`` for a blank line or a comment; a :class:`UsageError`
    naming ``where:lineno`` and the value otherwise."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    words = text.split()
    if len(words) != 3 or words[0] not in ("down", "up"):
        raise UsageError(f"{where}:{lineno}: expected 'down A B' or 'up A B', got "
                         f"{_quote(line.rstrip())}")
    ids = []
    for w in words[1:]:
        try:
            ids.append(topo.index_of(w))
        except Exception:  # noqa: BLE001 - any lookup failure is the same input error
            raise UsageError(f"{where}:{lineno}: router {_quote(w)} is not in "
                             f"{topo.name}") from None
    u, v = sorted(ids)
    if u == v or not any({int(a), int(b)} == {u, v}
                         for a, b in zip(topo.link_u.tolist(), topo.link_v.tolist())):
        raise UsageError(f"{where}:{lineno}: {words[1]} and {words[2]} share no link in "
                         f"{topo.name}")
    return Event(words[0], u, v, time.monotonic(), f"{where}:{lineno}")


class LineSource:
    """Events from a text stream (``-``: standard input) or a file that is watched for new lines
    (``follow``); :meth:`poll` returns those read within ``timeout`` seconds."""

    def __init__(self, stream: IO[bytes], topo: Topology, where: str, *,
                 follow: bool = False) -> None:
        self.stream, self.topo, self.where, self.follow = stream, topo, where, follow
        self.lineno = 0
        self.buf = b""
        self.eof = False
        #: The first bad line's error, raised by the caller after the events before it.
        self.error: Optional[UsageError] = None

    def _lines(self, data: bytes) -> List[Event]:
        self.buf += data
        out = []
        while b"\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n", 1)
            try:
                out += self._one(raw)
            except UsageError as e:
                self.error, self.eof = e, True
                return out
        if len(self.buf) > MAX_LINE:
            self.lineno += 1
            raise UsageError(f"{self.where}:{self.lineno}: line longer than {MAX_LINE} bytes")
        return out

    def _one(self, raw: bytes) -> List[Event]:
        self.lineno += 1
        if len(raw) > MAX_LINE:
            raise UsageError(f"{self.where}:{self.lineno}: line longer than {MAX_LINE} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{self.where}:{self.lineno}: not UTF-8 text") from None
        ev = parse_line(text, self.topo, self.where, self.lineno)
        return [ev] if ev else []

    def poll(self, timeout: float) -> List[Event]:
        if self.eof:
            time.sleep(max(0.0, timeout))
            return []
        fd = self.stream.fileno()
        if not self.follow:
            ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
            if not ready:
                return []
        data = os.read(fd, 1 << 14)
        if not data:
            if self.follow:  # a regular file: wait for more to be appended
                time.sleep(min(max(0.0, timeout), 0.05))
                return []
            self.eof = True
            out = self._one(self.buf) if self.buf else []
            self.buf = b""
            return out
        return self._lines(data)


class NetlinkSource:
    """Events from the routers' rtnetlink link messages of an emulated network; each also
    handed to ``on_event(kind, u, v, at)`` when given (the emulated IGP)."""

    def __init__(self, watcher: object,
                 on_event: Optional[Callable[[str, int, int, float], None]] = None) -> None:
        self.watcher, self.on_event = watcher, on_event
        self.eof = False

    def poll(self, timeout: float) -> List[Event]:
        evs = self.watcher.poll(timeout)  # type: ignore[attr-defined]
        if self.on_event is not None:
            for e in evs:
                self.on_event(e.kind, e.u, e.v, e.at)
        return [Event(e.kind, e.u, e.v, e.at, f"netlink {e.netns}/{e.interface}") for e in evs]

"""The traffic agent's protocol: every message between the emulator and its agent processes.

Both sides use these dataclasses; nothing else crosses the pipe. A message is one line of JSON:
the dataclass's fields by name (``bytes`` as hex), and :func:`decode` checks every field's type,
refuses a missing or unknown field and names it, so a renamed field fails in the first test that
runs the agent, never as a ``KeyError`` deep in a run.

The conversation, per agent process (stdin and stdout, one line each):

1. emulator -> agent: a :class:`ReceiverJob` or a :class:`SenderJob` (``role`` tells which);
2. agent -> emulator: :class:`Ready` once its sockets are set up (or :class:`Failed`);
3. emulator -> agent: :class:`Start` with the run's times (``time.monotonic()`` values: the clock
   is shared by every process of the machine);
4. agent -> emulator: at the stop time, a :class:`ReceiverResult` or :class:`SenderResult` (or
   :class:`Failed`, naming the file and line where the agent failed).

Times inside jobs (``at``, ``until``) are seconds after ``Start.times.connect``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union

__all__ = ["Times", "Listen", "Changer", "Transfer", "PolicySpec", "QueueWatch", "ReceiverJob",
           "SenderJob", "Ready", "Start", "Failed", "Received", "ReceiverResult", "Sent",
           "SenderResult", "Message", "encode", "decode", "ProtocolError", "MESSAGES"]

T = TypeVar("T")


class ProtocolError(ValueError):
    """A line that is not a message of this protocol (the text says which field is wrong)."""


@dataclasses.dataclass
class Times:
    """When the run happens (``time.monotonic()``): connects at ``connect``, the goodput window
    ``[start, end)``, everything stops at ``stop``."""

    connect: float
    start: float
    end: float
    stop: float


@dataclasses.dataclass
class Listen:
    """A listening socket of the receiver: ``addr``:``port`` inside namespace ``netns``."""

    netns: str
    addr: str
    port: int
    mptcp: bool = False


@dataclasses.dataclass
class Changer:
    """The TPC agent's path changers, from user space: ``nrto`` (move when the ``n``-th
    consecutive RTO is due) or ``timeout`` (move after ``ms`` without an acknowledgement)."""

    kind: str
    n: int = 3
    ms: float = 100.0


@dataclasses.dataclass
class Transfer:
    """One TCP connection of the sender.

    It opens ``at`` seconds after the connect time in namespace ``netns`` from ``src`` to
    ``dst``:``port``, writes its 8-byte id, then ``size`` bytes (``None``: until the stop) and
    waits for the receiver's one-byte answer. Its path: ``paths`` (SRHs, slot 0 first; a
    ``changer`` moves along them), else slot ``slot`` of the table of ``(src_router,
    dst_router)``, else the source router's policy chooses from that table; with neither, no
    SRH. ``until``: cut then if still running. ``cgroup``: the socket is created by the agent
    while in that cgroup v2 (an emulated host's, where a BPF host agent chooses the path).
    """

    id: int
    netns: str
    src: str
    dst: str
    port: int
    at: float = 0.0
    size: Optional[int] = None
    src_router: str = ""
    dst_router: str = ""
    paths: List[bytes] = dataclasses.field(default_factory=list)
    slot: Optional[int] = None
    until: Optional[float] = None
    changer: Optional[Changer] = None
    pacing_bps: Optional[int] = None
    mptcp: bool = False
    cgroup: Optional[str] = None


@dataclasses.dataclass
class PolicySpec:
    """A source router's policy (:func:`tpcstudy.policies.make_policy`): its spec string, the
    number of table paths per destination, the seed and the LP's shares (``lp`` only)."""

    spec: str
    paths: Dict[str, int]
    seed: int = 0
    shares: Optional[Dict[str, List[float]]] = None


@dataclasses.dataclass
class QueueWatch:
    """What the queue monitor reads every ``interval_ms``: ``hops`` ``(netns, interface, rate
    bit/s)``; ``paths``: source -> destination -> per slot, its route's hops ``(netns,
    interface)``."""

    interval_ms: float
    hops: List[Tuple[str, str, float]]
    paths: Dict[str, Dict[str, List[List[Tuple[str, str]]]]]


@dataclasses.dataclass
class ReceiverJob:
    """Listen, count each connection's payload bytes (by its id); snapshot them at the window's
    start and end; answer one byte when a sized transfer is complete (``sizes``); keep every
    read's time for the ids in ``timeline``."""

    parent: int
    listen: List[Listen]
    timeline: List[int] = dataclasses.field(default_factory=list)
    sizes: Dict[int, int] = dataclasses.field(default_factory=dict)
    role: str = "receiver"


@dataclasses.dataclass
class SenderJob:
    """Open the ``transfers`` at their times; every ``poll_ms`` read each live connection's
    ``TCP_INFO`` for its changer or its source's policy; ``tables``: source router ->
    destination router -> SRHs (slot 0 first); ``policies``: source router -> its policy;
    ``queues``: the queue monitor's job, for the policies that read queues."""

    parent: int
    transfers: List[Transfer]
    tables: Dict[str, Dict[str, List[bytes]]] = dataclasses.field(default_factory=dict)
    policies: Dict[str, PolicySpec] = dataclasses.field(default_factory=dict)
    queues: Optional[QueueWatch] = None
    poll_ms: float = 50.0
    cc: str = "cubic"
    role: str = "sender"


@dataclasses.dataclass
class Ready:
    ready: bool = True


@dataclasses.dataclass
class Start:
    times: Times


@dataclasses.dataclass
class Failed:
    error: str


@dataclasses.dataclass
class Received:
    """What the receiver measured of one connection: payload bytes in all and in the window,
    the time of its first byte, when the transfer completed (sized ones) and, if asked, every
    read ``[time, cumulative bytes]``."""

    bytes: int
    window_bytes: int
    first: float
    done: Optional[float] = None
    timeline: List[Tuple[float, int]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class ReceiverResult:
    window: Tuple[Optional[float], Optional[float]]
    connections: Dict[int, Received]
    rusage: Dict[str, float]
    role: str = "receiver"


@dataclasses.dataclass
class Sent:
    """What the sender saw of one transfer: its times (opened, completed by the receiver's
    answer, cut at ``until``, ended), bytes written, the paths it took ``[time, slot]`` (slot
    ``None``: no SRH), its last smoothed RTT, the last ``TCP_INFO`` and an error, if any
    (``connect: ...``/``setup: ...``: it never ran; others: the kernel ended it)."""

    arrival: float
    sent: int = 0
    state: str = "new"
    open: Optional[float] = None
    done: Optional[float] = None
    cut: Optional[float] = None
    ended: Optional[float] = None
    paths: List[Tuple[float, Optional[int]]] = dataclasses.field(default_factory=list)
    srtt_us: Optional[float] = None
    tcp_info: Dict[str, int] = dataclasses.field(default_factory=dict)
    error: Optional[str] = None


@dataclasses.dataclass
class SenderResult:
    connections: Dict[int, Sent]
    rusage: Dict[str, float]
    policies: Dict[str, Dict[str, Any]] = dataclasses.field(default_factory=dict)
    queue_reads: int = 0
    role: str = "sender"


Message = Union[ReceiverJob, SenderJob, Ready, Start, Failed, ReceiverResult, SenderResult]
#: Every message type, by the field that tells them apart on the wire.
MESSAGES: Tuple[Type[Any], ...] = (ReceiverJob, SenderJob, Ready, Start, Failed, ReceiverResult,
                                   SenderResult)


# --------------------------------------------------------------------------- the codec
def _plain(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).hex()
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def encode(msg: Any) -> str:
    """One line of JSON (no newline inside)."""
    return json.dumps(_plain(msg), separators=(",", ":"), allow_nan=True)


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[__name__]))
    return _HINTS[cls]


def _value(tp: Any, x: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return x
    if origin is Union:  # Optional[X]
        if x is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _value(inner[0], x, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _build(tp, x, where)
    if tp is bytes:
        if not isinstance(x, str):
            raise ProtocolError(f"{where}: expected hex bytes, got {type(x).__name__}")
        try:
            return bytes.fromhex(x)
        except ValueError:
            raise ProtocolError(f"{where}: not hex: {x[:40]!r}") from None
    if tp is float:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise ProtocolError(f"{where}: expected a number, got {x!r:.40}")
        return float(x)
    if tp in (int, str, bool):
        if type(x) is not tp:
            raise ProtocolError(f"{where}: expected {tp.__name__}, got {x!r:.40}")
        return x
    if origin in (list, List):
        if not isinstance(x, list):
            raise ProtocolError(f"{where}: expected a list, got {type(x).__name__}")
        return [_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(x)]
    if origin in (tuple, Tuple):
        if not isinstance(x, list) or len(x) != len(args):
            raise ProtocolError(f"{where}: expected {len(args)} values, got {x!r:.60}")
        return tuple(_value(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, x)))
    if origin in (dict, Dict):
        if not isinstance(x, dict):
            raise ProtocolError(f"{where}: expected an object, got {type(x).__name__}")
        kt, vt = args
        out = {}
        for k, v in x.items():
            try:
                key = int(k) if kt is int else k
            except ValueError:
                raise ProtocolError(f"{where}: key {k!r:.40} is not an integer") from None
            out[key] = _value(vt, v, f"{where}[{k!r:.40}]")
        return out
    raise ProtocolError(f"{where}: no rule for type {tp!r}")  # pragma: no cover


def _build(cls: Type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: expected an object for {cls.__name__}, got "
                            f"{type(data).__name__}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ProtocolError(f"{where}: {cls.__name__} has no field {unknown[0]!r}")
    kw = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ProtocolError(f"{where}: {cls.__name__} needs field {name!r}")
            continue
        kw[name] = _value(hints[name], data[name], f"{where}.{name}")
    return cls(**kw)


def _kind(data: Dict[str, Any]) -> Type[Any]:
    role = data.get("role")
    if role is not None:
        if "listen" in data:
            return ReceiverJob
        if "transfers" in data:
            return SenderJob
        return ReceiverResult if role == "receiver" else SenderResult
    for cls, key in ((Ready, "ready"), (Start, "times"), (Failed, "error")):
        if key in data:
            return cls
    raise ProtocolError(f"not a message of the agent protocol: fields {sorted(data)[:6]}")


def decode(line: str, expect: Optional[Tuple[Type[Any], ...]] = None) -> Any:
    """The message on ``line``; ``expect``: the types allowed here (others are an error)."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ProtocolError(f"not JSON ({exc}): {line[:80]!r}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"expected an object, got {line[:80]!r}")
    cls = _kind(data)
    if expect is not None and cls not in expect and cls is not Failed:
        raise ProtocolError(f"expected {' or '.join(c.__name__ for c in expect)}, got "
                            f"{cls.__name__}")
    return _build(cls, data, cls.__name__)

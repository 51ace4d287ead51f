"""The controller's loop (``tpcstudy control``): events in, tables recomputed, pushed, logged.

:class:`Controller` owns a :class:`~.tables.TableState`. :meth:`Controller.handle` takes the
events read together (one burst is one recomputation): it updates the links down, computes the
reaction's table for them (``compute_ms``), renders every host's records, pushes those of the
hosts whose records changed, in parallel (``push_ms``: the slowest host; ``swap_ms``: the
slowest one-map swap), and returns the log record of the event: its detection time (wall clock,
and ``detect_ms`` from reading the event to handling it), compute, push and swap times, the
hosts pushed.

When the controller pushes, relative to the network's IGP re-converging (``--controller-at``,
:data:`AT`), is :class:`Phases`' decision (no I/O: events and the IGP's state in, steps out):

- ``event``: each event handled at once with every weight;
- ``igp``: the events held until the IGP has installed their routes, then handled together;
- ``both`` (the default): each event handled at once without the paths whose segments still
  route over a down link and could not be pinned to their failed-graph routes
  (:func:`~.tables.transition_safe`; ``TableState.hold_unsafe``: a connection on one moves),
  then, once the IGP has re-converged after the last of them, one *settle* step: the same paths
  in the same slots followed by those (so no connection moves; new ones use every path; nothing
  to push when every path was pinned).

"The IGP has re-converged" is the emulated IGP's word
(:meth:`tpcstudy.emulate.network.igp.Igp.settled`) when the controller plays it
(``--network``), else ``--igp-delay`` seconds after the event (the operator's bound for their
network's IGP); with no IGP at all (``--no-igp``) it never happens (``both`` keeps the held
weights at 0, ``igp`` is refused). :class:`Loop` is the one loop over event sources
(``tpcstudy control`` and ``tpcstudy emulate failures``): it reads the sources (an emulated
network's :class:`~.events.NetlinkSource` hands every event to the IGP first), feeds
:class:`Phases` and has the :class:`Controller` carry out its steps, until ``stop`` is set
(SIGTERM, SIGINT) or every source ended; a source's bad line stops it after the events before
it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import UsageError
from .events import Event

if TYPE_CHECKING:
    from .tables import TableState

__all__ = ["Controller", "format_record", "Phases", "Step", "Loop", "AT", "json_line"]

#: When the controller handles a link event (``--controller-at``; module docstring).
AT = ("both", "igp", "event")


def _wall(mono: float) -> str:
    t = time.time() - (time.monotonic() - mono)
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds")


def format_record(rec: Dict[str, Any]) -> str:
    """One log line of an event (the ``--json`` line's fields, as text)."""
    ev = ", ".join(f"{e['kind']} {e['link']}".rstrip() for e in rec["events"])
    if rec.get("unchanged"):
        return f"{rec['detected_at']} {ev}: no change to the links down"
    err = f"; FAILED: {rec['failed']}" if rec.get("failed") else ""
    src = rec["events"][0]["source"]
    head = f"{ev} ({src})" if src != rec["events"][0]["kind"] else f"{ev}, the held paths back"
    return (f"{rec['detected_at']} {head}: links down "
            f"{rec['down'] or 'none'}; detect {rec['detect_ms']:.1f} ms, compute "
            f"{rec['compute_ms']:.1f} ms ({rec['reaction']}), push {rec['push_ms']:.1f} ms to "
            f"{len(rec['pushed'])}/{rec['hosts']} hosts, swap {rec['swap_ms']:.3f} ms; total "
            f"{rec['total_ms']:.1f} ms{err}")


class Controller:
    """Owns ``state``'s hosts and pushes with ``pusher`` (:mod:`.push`)."""

    def __init__(self, state: TableState, pusher: Any, *, jobs: int = 8,
                 folder: Optional[Path] = None) -> None:
        self.state, self.pusher, self.jobs = state, pusher, jobs
        pusher.check(state.hosts)
        self._own_folder = folder is None and pusher.needs_files
        self.folder = Path(tempfile.mkdtemp(prefix="tpcstudy-control-")) if self._own_folder \
            else folder
        self.generation = 0
        self.history: List[Dict[str, Any]] = []

    def close(self) -> None:
        if self._own_folder and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def handle(self, events: Sequence[Event]) -> Dict[str, Any]:
        t_start = time.monotonic()
        st = self.state
        names = st.topology.names
        changed = False
        for e in events:
            changed |= st.apply(e.kind, e.u, e.v)
        first = min(e.at for e in events)
        rec: Dict[str, Any] = {
            "detected_at": _wall(first),
            "events": [{"kind": e.kind, "link": f"{names[e.u]}-{names[e.v]}",
                        "source": e.source} for e in events],
            "down": ", ".join(f"{names[a]}-{names[b]}" for a, b in sorted(st.down)),
            "reaction": st.reaction, "hosts": len(st.hosts),
            "detect_ms": round((t_start - first) * 1e3, 3)}
        if not changed:
            rec["unchanged"] = True
            self.history.append(rec)
            return rec
        return self._push_table(rec, t_start, first)

    def refresh(self, why: str = "refresh") -> Dict[str, Any]:
        """Recompute the table for the links down now and push the hosts whose records
        changed, without an event (e.g. once the IGP has re-converged, the weights a
        ``hold_unsafe`` table held back)."""
        t_start = time.monotonic()
        st = self.state
        names = st.topology.names
        rec: Dict[str, Any] = {
            "detected_at": _wall(t_start), "events": [{"kind": why, "link": "", "source": why}],
            "down": ", ".join(f"{names[a]}-{names[b]}" for a, b in sorted(st.down)),
            "reaction": st.reaction, "hosts": len(st.hosts), "detect_ms": 0.0}
        return self._push_table(rec, t_start, t_start)

    def _push_table(self, rec: Dict[str, Any], t_start: float, first: float) -> Dict[str, Any]:
        st = self.state
        table = st.table()
        pushed, new = st.plan_push(table)
        t_comp = time.monotonic()
        folder = None
        if pushed and self.pusher.needs_files:
            self.generation += 1
            assert self.folder is not None
            folder = self.folder / f"gen-{self.generation}"
            from ..export import write_paths  # a command push only (keeps the CLI's parser light)
            write_paths(table, folder, formats="bpf", variant=st.variant)
        results: List[Dict[str, Any]] = []
        if pushed:
            with ThreadPoolExecutor(max_workers=max(1, min(self.jobs, len(pushed)))) as pool:
                results = list(pool.map(lambda h: self._push(h, new[h], folder), pushed))
        t_push = time.monotonic()
        for r in results:
            if r.get("ok"):
                st.records[r["host"]] = new[r["host"]]
        failed = [f"{r['host']}: {r.get('error', '')}" for r in results if not r.get("ok")]
        rec.update(compute_ms=round((t_comp - t_start) * 1e3, 3),
                   push_ms=round((t_push - t_comp) * 1e3, 3),
                   swap_ms=max((float(r.get("swap_ms", 0.0)) for r in results), default=0.0),
                   total_ms=round((t_push - first) * 1e3, 3),
                   done_at=_wall(t_push), done_mono=t_push,
                   pushed=[r["host"] for r in results if r.get("ok")], per_host=results,
                   failed=failed)
        self.history.append(rec)
        return rec

    def _push(self, host: str, records: Any, folder: Optional[Path]) -> Dict[str, Any]:
        try:
            return dict(self.pusher.push(host, records, folder))
        except Exception as e:  # noqa: BLE001 - one host's failure is logged, not fatal
            return {"host": host, "ok": False, "error": str(e)[:200]}

    def step(self, step: "Step") -> Dict[str, Any]:
        """Carry out one of :class:`Phases`' steps; returns its log record."""
        hold = self.state.hold_unsafe
        try:
            self.state.hold_unsafe = step.hold
            if step.kind == "settle":
                return self.refresh("igp re-converged")
            return self.handle(step.events)
        finally:
            self.state.hold_unsafe = hold

    def run(self, sources: Sequence[Any], stop: threading.Event,
            emit: Callable[[Dict[str, Any]], None], *, poll: float = 0.05,
            phases: Optional["Phases"] = None) -> int:
        """Loop until ``stop`` or every source ended (:class:`Loop`; ``phases`` default: each
        event at once); returns the events handled."""
        loop = Loop(sources, self, phases=phases, poll=poll)
        loop.run(stop, emit)
        return loop.handled


@dataclasses.dataclass(frozen=True)
class Step:
    """What the controller does now: ``handle`` ``events`` (one recomputation), or ``settle``
    (recompute for the links down now and push what changed); ``hold``: the paths whose
    segments still route over a down link are left out of the table pushed."""

    kind: str
    events: Tuple[Event, ...] = ()
    hold: bool = False


class Phases:
    """When link events are handled relative to the IGP (module docstring). ``settled(since)``
    says whether the IGP has installed the routes of every event read before ``since``
    (``time.monotonic``); None: it never re-converges."""

    def __init__(self, at: str = "event",
                 settled: Optional[Callable[[float], bool]] = None) -> None:
        if at not in AT:
            raise UsageError(f"--controller-at {at!r}: choose from {', '.join(AT)}")
        if at == "igp" and settled is None:
            raise UsageError("--controller-at igp waits for the IGP to re-converge, and none "
                             "does here (--no-igp): use both or event")
        self.at, self.settled = at, settled
        self.pending: List[Event] = []   # read, not handled yet (at igp)
        self.unsettled: List[float] = []  # handled with held weights (at both), times read

    @classmethod
    def after_delay(cls, at: str, delay: float,
                    clock: Callable[[], float] = time.monotonic) -> "Phases":
        """The IGP taken to have re-converged ``delay`` seconds after each event (no emulated
        IGP to ask: the operator's bound, ``--igp-delay``)."""
        return cls(at, lambda since: clock() >= since + delay)

    @property
    def busy(self) -> bool:
        """Waiting for the IGP (poll the sources more often)."""
        return bool(self.pending or self.unsettled)

    def steps(self, events: Sequence[Event]) -> List[Step]:
        """The steps due now, given the events just read (possibly none)."""
        out: List[Step] = []
        if self.at == "igp":
            self.pending += list(events)
            if self.pending and self._settled(max(e.at for e in self.pending)):
                out.append(Step("handle", tuple(self.pending)))
                self.pending = []
            return out
        hold = self.at == "both"
        for e in events:  # each event its own recomputation, in the order read
            out.append(Step("handle", (e,), hold=hold))
            if hold:
                self.unsettled.append(e.at)
        if self.unsettled and self._settled(max(self.unsettled)):
            self.unsettled = []
            out.append(Step("settle"))
        return out

    def _settled(self, since: float) -> bool:
        return self.settled is not None and bool(self.settled(since))


class Loop:
    """The controller's loop over event ``sources`` (module docstring). Without a
    ``controller`` it only reads them (an emulated network's events still reach its IGP).
    ``events``: every event read; ``records``: every step's log record; ``handled``: the
    events handled."""

    def __init__(self, sources: Sequence[Any], controller: Optional[Controller] = None, *,
                 phases: Optional[Phases] = None, poll: float = 0.05,
                 busy_poll: float = 0.005, drain: float = 60.0) -> None:
        self.sources, self.controller = list(sources), controller
        self.phases = phases or Phases("event")
        self.poll, self.busy_poll, self.drain = poll, busy_poll, drain
        self.events: List[Event] = []
        self.records: List[Dict[str, Any]] = []
        self.handled = 0

    def run(self, stop: threading.Event,
            emit: Callable[[Dict[str, Any]], None] = lambda r: None) -> None:
        """Until ``stop`` or every source ended and no step is still due (waiting at most
        ``drain`` seconds for an IGP to re-converge after the last event: ``--events`` lines
        ending with ``both`` still push the held weights)."""
        drain_end: Optional[float] = None
        while not stop.is_set():
            live = [s for s in self.sources if not s.eof]
            wait = self.busy_poll if self.phases.busy else self.poll
            evs: List[Event] = []
            if not live:
                if not (self.controller is not None and self.phases.busy
                        and self.phases.settled is not None):
                    break
                drain_end = drain_end or time.monotonic() + self.drain
                if time.monotonic() > drain_end:
                    break
                time.sleep(wait)
            for s in live:
                evs += s.poll(wait / len(live))
            self.events += evs
            if self.controller is not None:
                for step in self.phases.steps(evs):
                    rec = self.controller.step(step)
                    self.records.append(rec)
                    self.handled += len(step.events)
                    emit(rec)
            err = [s for s in live if getattr(s, "error", None)]
            if err:
                raise err[0].error


def json_line(rec: Dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in rec.items() if k != "done_mono"}, sort_keys=True)

"""The controller's loop (``tpcstudy control``): events in, tables recomputed, pushed, logged.

:class:`Controller` owns a :class:`~.tables.TableState`. :meth:`Controller.handle` takes the
events read together (one burst is one recomputation): it updates the links down, computes the
reaction's table for them (``compute_ms``), renders every host's records, pushes those of the
hosts whose records changed, in parallel (``push_ms``: the slowest host; ``swap_ms``: the
slowest one-map swap), and returns the log record of the event: its detection time (wall clock,
and ``detect_ms`` from reading the event to handling it), compute, push and swap times, the
hosts pushed. :meth:`Controller.run` loops over event sources until ``stop`` is set (SIGTERM,
SIGINT) or every source ended; a source's bad line stops it after the events before it.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..export import write_paths
from .events import Event
from .tables import TableState

__all__ = ["Controller", "format_record"]


def _wall(mono: float) -> str:
    t = time.time() - (time.monotonic() - mono)
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds")


def format_record(rec: Dict[str, Any]) -> str:
    """One log line of an event (the ``--json`` line's fields, as text)."""
    ev = ", ".join(f"{e['kind']} {e['link']}" for e in rec["events"])
    if rec.get("unchanged"):
        return f"{rec['detected_at']} {ev}: no change to the links down"
    err = f"; FAILED: {rec['failed']}" if rec.get("failed") else ""
    return (f"{rec['detected_at']} {ev} ({rec['events'][0]['source']}): links down "
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

    def run(self, sources: Sequence[Any], stop: threading.Event,
            emit: Callable[[Dict[str, Any]], None], *, poll: float = 0.05) -> int:
        """Loop until ``stop`` or every source ended; returns the events handled."""
        n = 0
        while not stop.is_set():
            live = [s for s in sources if not s.eof]
            if not live:
                break
            evs: List[Event] = []
            for s in live:
                evs += s.poll(poll / len(live))
            for e in evs:  # each event its own recomputation, in the order read
                emit(self.handle([e]))
                n += 1
            err = [s for s in live if getattr(s, "error", None)]
            if err:
                raise err[0].error
        return n


def json_line(rec: Dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in rec.items() if k != "done_mono"}, sort_keys=True)

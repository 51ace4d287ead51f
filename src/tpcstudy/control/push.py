"""Pushing a host's new table: ``local`` (the atomic swap of :mod:`tpcstudy.hostagent.update`
on an agent this machine loaded, e.g. every emulated host) or ``command`` (a user command per
host, an argv template whose ``{host}`` and ``{table}`` are substituted inside each item: never
a shell string).

Each push returns what it measured: ``swap_ms`` (the one map update), ``update_ms`` (fill and
swap), ``push_ms`` (the whole push as the controller saw it) and the generation; a command push
reads them from the command's standard output when it is ``tpcstudy agent update --json``'s.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import UsageError
from ..hostagent import record as _record
from ..hostagent.maps import ON_UPDATE
from ..hostagent.update import swap_table

__all__ = ["LocalPush", "CommandPush", "command_argv", "PLACEHOLDERS"]

PLACEHOLDERS = ("{host}", "{table}")
Records = List[Tuple[bytes, bytes]]


def command_argv(template: Sequence[str], host: str, table: str) -> List[str]:
    """``template`` with ``{host}`` and ``{table}`` replaced inside each item (argv items stay
    items: a host name with spaces is one argument, never split or interpreted)."""
    if not template:
        raise UsageError("--push command needs the command after '--' (e.g. -- ssh {host} "
                         "tpcstudy agent update tpc --table {table})")
    return [a.replace("{host}", host).replace("{table}", table) for a in template]


class LocalPush:
    """Swap the table of agents loaded on this machine: ``agents`` maps host -> install (an
    :class:`~tpcstudy.hostagent.record.Install`); ``save`` writes each install record again
    (what ``agent status`` reads); ``on_update``: what each swap does to a connection whose path
    it removed (``rehash``, the default: moved at once to a path drawn by the new weights, keyed
    on the connection, so the moved connections spread as the new table says; ``repath``: the
    entry's first valid path; ``keep``; None: as each agent was loaded)."""

    needs_files = False

    def __init__(self, agents: Mapping[str, Any], *, save: bool = True,
                 on_update: Optional[str] = "rehash") -> None:
        if on_update is not None and on_update not in ON_UPDATE:
            raise UsageError(f"--on-update {on_update!r}: choose from {', '.join(ON_UPDATE)}")
        self.agents = dict(agents)
        self.save = save
        self.on_update = on_update

    def check(self, hosts: Sequence[str]) -> None:
        missing = [h for h in hosts if h not in self.agents]
        if missing:
            raise UsageError(f"--push local: no agent loaded for {', '.join(missing[:5])}")

    def push(self, host: str, records: Records, table: Optional[Path]) -> Dict[str, Any]:
        t0 = time.perf_counter()
        inst = self.agents[host]
        up = swap_table(inst, records, on_update=self.on_update)
        if self.save:
            _record.save(inst)
        return {"host": host, "ok": True, "generation": up.generation,
                "swap_ms": round(up.swap_ms, 4), "update_ms": round(up.update_ms, 4),
                "push_ms": round((time.perf_counter() - t0) * 1e3, 3)}


class CommandPush:
    """Run ``template`` (argv, :func:`command_argv`) for each host; exit status 0 is success."""

    needs_files = True

    def __init__(self, template: Sequence[str], *, timeout: float = 60.0) -> None:
        if not template:
            command_argv(template, "", "")
        self.template = list(template)
        self.timeout = timeout

    def check(self, hosts: Sequence[str]) -> None:
        return None

    def push(self, host: str, records: Records, table: Optional[Path]) -> Dict[str, Any]:
        argv = command_argv(self.template, host, str(table))
        t0 = time.perf_counter()
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=self.timeout, check=False)
        except FileNotFoundError:
            return {"host": host, "ok": False, "error": f"{argv[0]!r} not found"}
        except subprocess.TimeoutExpired:
            return {"host": host, "ok": False, "error": f"timed out after {self.timeout:g} s"}
        out: Dict[str, Any] = {"host": host, "ok": p.returncode == 0,
                               "push_ms": round((time.perf_counter() - t0) * 1e3, 3)}
        if p.returncode != 0:
            err = (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
            out["error"] = f"exit {p.returncode}: " + (err[-1][:200] if err else "")
            return out
        try:
            doc = json.loads(p.stdout.decode("utf-8")[:1 << 20])
            if isinstance(doc, dict):
                for k in ("generation", "swap_ms", "update_ms"):
                    if k in doc:
                        out[k] = doc[k]
        except (ValueError, UnicodeDecodeError):
            pass
        return out

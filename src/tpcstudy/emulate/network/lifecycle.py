"""A run of the emulator: build, use and always tear down; clean what a killed run left.

:class:`Emulation` is a context manager around one :class:`~tpcstudy.emulate.spec.NetworkSpec`:

- before anything is created, a **run record** ``/run/tpcstudy/<prefix>.json`` (pid, its start
  time, the namespace prefix, start time, argv, the traffic processes) is written atomically;
- the build runs the phases of :func:`~tpcstudy.emulate.spec.build_steps` (``ip``/``tc`` batches,
  parallel per namespace; sysctls in-process);
- traffic processes start through :meth:`Emulation.spawn` in their own process group (and die
  with this process: ``PR_SET_PDEATHSIG``), listed in the run record;
- teardown kills those groups, deletes every namespace with the run's prefix and removes the
  record, on a normal exit, an exception, Ctrl-C (SIGINT) or SIGTERM (a handler turns SIGTERM
  into an exception so ``finally`` runs; both signals are blocked while tearing down).

A SIGKILL leaves namespaces and the record behind; :func:`clean` removes exactly those of runs
whose process is gone (pid dead, or reused by another program: its start time differs) and never
touches any other namespace.

``TPCSTUDY_RUN_DIR`` moves the run records (tests); ``TPCSTUDY_NETNS_TAG`` (default ``tpc``)
starts every prefix, e.g. ``tpc1a2b3c-``.
"""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ...errors import EmulationError, InputFileError, Terminated, UsageError
from ...io import atomic_write_text
from ...linux import CGROUP_ROOT
from . import kernel as _ns
from .spec import (
    Batch,
    NetworkSpec,
    Sysctls,
    build_steps,
    check_prefix,
    hash_seed,
    queue_line,
    teardown_steps,
)

__all__ = ["Emulation", "clean", "new_prefix", "run_dir", "RunRecord", "read_records",
           "scan_records", "netns_tag", "write_record", "remove_record", "cgroup_base",
           "remove_cgroups", "pid_namespace", "prefix_ok", "remove_run", "kill_cgroups", "name_ok"]

DEFAULT_RUN_DIR = "/run/tpcstudy"


def run_dir() -> Path:
    """Where run records live (``TPCSTUDY_RUN_DIR``, made absolute: never the cwd's)."""
    return Path(os.path.abspath(os.environ.get("TPCSTUDY_RUN_DIR") or DEFAULT_RUN_DIR))


def pid_namespace() -> int:
    """This process's pid namespace (the inode of ``/proc/self/ns/pid``): a record written in
    another one (a container sharing ``/run``) names pids that mean nothing here."""
    return os.stat("/proc/self/ns/pid").st_ino


def prefix_ok(prefix: Any) -> bool:
    """A prefix this tool makes: ``<tag><6 hex>-`` (the current ``TPCSTUDY_NETNS_TAG``)."""
    return isinstance(prefix, str) and re.fullmatch(re.escape(netns_tag()) + r"[0-9a-f]{6}-",
                                                     prefix) is not None


def netns_tag() -> str:
    tag = os.environ.get("TPCSTUDY_NETNS_TAG") or "tpc"
    if not (tag.isascii() and tag.isalnum() and tag.islower() and tag[0].isalpha()
            and len(tag) <= 9):
        raise UsageError(f"TPCSTUDY_NETNS_TAG={tag!r}: use 1 to 9 lower-case letters or digits, "
                         f"starting with a letter")
    return tag


def new_prefix() -> str:
    """A fresh namespace prefix ``<tag><6 hex>-`` that no existing namespace starts with."""
    tag = netns_tag()
    for _ in range(100):
        p = f"{tag}{secrets.token_hex(3)}-"
        if not _ns.list_namespaces(p):
            return p
    raise EmulationError("no free namespace prefix found")  # pragma: no cover


# --------------------------------------------------------------------------- run records
RunRecord = Dict[str, Any]


def _record_path(prefix: str, where: Optional[Path] = None) -> Path:
    return (where or run_dir()) / f"{prefix.rstrip('-')}.json"


def write_record(record: RunRecord, where: Optional[Path] = None) -> Path:
    path = _record_path(record["prefix"], where)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(record, indent=1) + "\n")
    return path


def remove_record(prefix: str, where: Optional[Path] = None) -> None:
    """Delete the run record of ``prefix`` (nothing if it is gone already)."""
    try:
        os.unlink(_record_path(prefix, where))
    except FileNotFoundError:
        pass


#: A run record is small; anything larger is not one.
RECORD_LIMIT = 1 << 20


def _pid_ok(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 1


def _judge(rec: Any, path: Path) -> Optional[str]:
    """What is wrong with a run record (``None``: nothing). Records are data: other runs, other
    users, or someone trying something wrote them."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    prefix = rec.get("prefix")
    if not prefix_ok(prefix):
        return (f"prefix {str(prefix)[:40]!r} is not one this tool makes "
                f"({netns_tag()}<6 hex>-)")
    if path.name != f"{str(prefix).rstrip('-')}.json":
        return f"its file name does not match its prefix {prefix!r}"
    if not _pid_ok(rec.get("pid")):
        return f"pid {str(rec.get('pid'))[:20]!r} is not a process id > 1"
    start = rec.get("pid_start")
    if start is not None and (not isinstance(start, int) or isinstance(start, bool)):
        return "pid_start is not a number"
    procs = rec.get("processes", [])
    if not isinstance(procs, list) or not all(isinstance(p, dict) for p in procs):
        return "processes is not a list of {pid, start}"
    if rec.get("pidns") is not None and not _pid_ok(rec.get("pidns")):
        return "pidns is not a namespace inode"
    if rec.get("kind") not in (None, "up"):
        return f"kind {str(rec.get('kind'))[:20]!r} is not one this tool writes"
    if rec.get("kind") == "up" and not name_ok(rec.get("name")):
        return f"an up network's name {str(rec.get('name'))[:40]!r} is not a plain name"
    return None


def name_ok(name: Any) -> bool:
    """A network name of ``tpcstudy emulate up``: 1 to 32 letters, digits, ``_``, ``.``, ``-``."""
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}", name) \
        is not None


def scan_records(where: Optional[Path] = None) -> List[RunRecord]:
    """Every ``*.json`` of ``where`` (default :func:`run_dir`), each read alone with a bound
    (a FIFO, a link or a huge file is refused, never waited on): the valid records, and for
    the others ``{"_file", "_problem"}``."""
    from ...io import read_bounded

    d = where or run_dir()
    out: List[RunRecord] = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            rec = json.loads(read_bounded(p, RECORD_LIMIT).decode("utf-8"))
            problem = _judge(rec, p)
        except (UsageError, InputFileError) as exc:
            rec, problem = {}, str(exc)
        except (ValueError, UnicodeDecodeError) as exc:
            rec, problem = {}, f"not JSON ({str(exc)[:80]})"
        if problem:
            out.append({"_file": str(p), "_problem": problem})
        else:
            rec["_file"] = str(p)
            out.append(rec)
    return out


def read_records(where: Optional[Path] = None) -> List[RunRecord]:
    """The valid run records in ``where`` (default :func:`run_dir`)."""
    return [r for r in scan_records(where) if "_problem" not in r]


def record_alive(rec: RunRecord) -> bool:
    """The run's process still runs (a record without its start time cannot prove its pid was
    reused: alive as long as the pid is)."""
    return _ns.process_alive(int(rec["pid"]), rec.get("pid_start"))


def clean(*, where: Optional[Path] = None,
          list_namespaces: Callable[[str], List[str]] = _ns.list_namespaces,
          delete_namespaces: Optional[Callable[[List[str]], None]] = None,
          kill: Optional[Callable[[int, int], None]] = None,
          names: Sequence[str] = (), everything: bool = False) -> List[Dict[str, Any]]:
    """Remove what runs killed without teardown left: their namespaces, cgroups, processes and
    records.

    Each record is judged alone (a malformed one is reported and skipped, never fatal); a valid
    one names a prefix of this tool's form (``<tag><6 hex>-``) and pids > 1. Only runs whose
    process is provably gone (its pid dead, or reused by another program: the start time
    differs) in this pid namespace are touched; a run from another pid namespace is left alone
    as unknown. Of a dead run, only the processes whose start time matches the record are
    killed, only the namespaces starting with its prefix deleted (listed again until none is
    left: an orphaned build may still be adding some), then its cgroups; the record stays while
    anything is left. A network kept up on purpose (``tpcstudy emulate up``) is left alone
    unless it is in ``names`` or ``everything`` is set. Returns one report per record:
    ``{"prefix", "pid", "alive", "namespaces_removed", "processes_killed", "cgroups_removed"}``
    (``alive``: True, False, ``"unknown"`` or ``"up"``), or ``{"file", "skipped"}`` for a
    record that is not one.

    The callables default to the real ones; tests pass fakes.
    """
    delete = delete_namespaces or _delete_namespaces
    killer = kill or os.kill
    here = pid_namespace()
    reports: List[Dict[str, Any]] = []
    for rec in scan_records(where):
        if "_problem" in rec:
            reports.append({"file": rec["_file"], "skipped": rec["_problem"]})
            continue
        prefix = rec["prefix"]
        rep: Dict[str, Any] = {"prefix": prefix, "pid": rec["pid"], "alive": False,
                               "namespaces_removed": [], "processes_killed": [],
                               "cgroups_removed": []}
        reports.append(rep)
        if rec.get("pidns") not in (None, here):
            rep["alive"] = "unknown"
            rep["note"] = "written in another pid namespace: its pids mean nothing here"
            continue
        if rec.get("kind") == "up" and not (everything or rec.get("name") in names):
            rep.update(alive="up", name=rec.get("name"))  # kept on purpose: `down` removes it
            continue
        if rec.get("kind") != "up" and record_alive(rec):
            rep["alive"] = True
            continue
        remove_run(rec, rep, list_namespaces, delete, killer)
    return reports


def remove_run(rec: RunRecord, rep: Dict[str, Any],
               list_namespaces: Callable[[str], List[str]] = _ns.list_namespaces,
               delete: Optional[Callable[[List[str]], None]] = None,
               killer: Callable[[int, int], None] = os.kill) -> Dict[str, Any]:
    """Remove one run's processes (those of its record whose start time matches, and every
    process in its cgroups), namespaces (listed again until none is left), cgroups and, when
    nothing is left, its record; what happened goes into ``rep``."""
    delete = delete or _delete_namespaces
    prefix = rec["prefix"]
    for proc in rec.get("processes") or []:
        pid, start = proc.get("pid"), proc.get("start")
        if not _pid_ok(pid) or not isinstance(start, int) or isinstance(start, bool):
            continue  # no start time: cannot be told from another program's pid
        if _ns.process_alive(pid, start):
            try:
                killer(pid, signal.SIGKILL)
                rep["processes_killed"].append(pid)
            except ProcessLookupError:
                pass
    rep["processes_killed"] += kill_cgroups(prefix)
    left = [n for n in list_namespaces(prefix) if n.startswith(prefix)]
    for _ in range(20):
        if not left:
            break
        delete(left)
        rep["namespaces_removed"] += [n for n in left if n not in rep["namespaces_removed"]]
        time.sleep(0.05)
        left = [n for n in list_namespaces(prefix) if n.startswith(prefix)]
    try:
        rep["cgroups_removed"] = remove_cgroups(prefix)
    except (UsageError, OSError) as exc:
        rep["cgroups_error"] = str(exc)
    if left or rep.get("cgroups_error"):
        rep["left"] = left
        return rep  # keep the record: the next clean tries again
    try:
        os.unlink(rec["_file"])
    except (FileNotFoundError, KeyError):
        pass
    return rep


def kill_cgroups(prefix: str) -> List[int]:
    """SIGKILL every process in the run's cgroups (programs started in its hosts: provably
    ours, whatever their pid) and wait until they are gone; returns their pids."""
    base = cgroup_base(prefix)
    pids: List[int] = []
    if not base.is_dir():
        return pids
    for _ in range(50):
        now = []
        for d in base.iterdir():
            try:
                now += [int(x) for x in (d / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
        if not now:
            return pids
        for pid in now:
            try:
                os.kill(pid, signal.SIGKILL)
                if pid not in pids:
                    pids.append(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    return pids


def cgroup_base(prefix: str) -> Path:
    """The run's cgroup v2 folder (its hosts' cgroups are inside): built from the prefix, which
    is checked, never a path read from a record."""
    check_prefix(prefix)
    return CGROUP_ROOT / "tpcstudy" / prefix.rstrip("-")


def remove_cgroups(prefix: str) -> List[str]:
    """Remove the run's cgroups (empty once its processes are gone; the BPF programs attached
    to them are detached with them); returns what was removed."""
    base = cgroup_base(prefix)
    removed = []
    if base.is_dir():
        for d in sorted(base.iterdir()):
            if d.is_dir() and not d.is_symlink():
                d.rmdir()
                removed.append(str(d))
        base.rmdir()
        removed.append(str(base))
    return removed


def _delete_namespaces(names: List[str]) -> None:
    for st in teardown_steps(names):
        _ns.run_batch(st.tool, st.lines, force=True, label=st.label)


# --------------------------------------------------------------------------- the run
class Emulation:
    """Build ``spec``'s network on enter, tear it down on exit (module docstring).

    Parameters
    ----------
    spec
        The network (its ``prefix`` must be fresh, e.g. :func:`new_prefix`).
    jobs
        Parallel ``ip``/``tc`` batches during the build.
    log
        ``log(message)`` for progress lines (default: nothing).
    """

    def __init__(self, spec: NetworkSpec, *, jobs: int = 4,
                 log: Optional[Callable[[str], None]] = None) -> None:
        self.spec = spec
        self.jobs = max(1, int(jobs))
        self.log = log or (lambda msg: None)
        self.procs: List[subprocess.Popen] = []
        self.record: RunRecord = {}
        self.build_seconds = float("nan")
        self.teardown_seconds = float("nan")
        self._old_handlers: Dict[int, Any] = {}
        self._active = False
        self._failed: Dict[int, float] = {}
        #: BPF host agents loaded on its routers (router name -> install), see :mod:`.hostagent`.
        self.agents: Dict[str, Any] = {}

    # -- lifecycle --
    def __enter__(self) -> "Emulation":
        self._install_signals()
        try:
            self.record = {"prefix": self.spec.prefix, "pid": os.getpid(),
                           "pid_start": _ns.process_start_ticks(os.getpid()),
                           "pidns": pid_namespace(),
                           "started": _dt.datetime.now(_dt.timezone.utc).isoformat(
                               timespec="seconds"),
                           "topology": self.spec.topology.name,
                           "namespaces": len(self.spec.routers), "argv": list(sys.argv),
                           "processes": []}
            write_record(self.record)
            self._active = True
            t0 = time.perf_counter()
            self._build()
            self.build_seconds = time.perf_counter() - t0
            self.log(f"built {self.spec.topology.name}: {len(self.spec.routers)} namespaces, "
                     f"{self.spec.topology.num_links} links in {self.build_seconds:.2f} s "
                     f"(prefix {self.spec.prefix})")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Kill the traffic processes, delete the namespaces and the run record (idempotent)."""
        if not self._active:
            self._restore_signals()
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            t0 = time.perf_counter()
            self.kill_processes()
            names = _ns.list_namespaces(self.spec.prefix)
            err: Optional[BaseException] = None
            try:
                _delete_namespaces(names)
            except EmulationError as exc:
                err = exc
            left = _ns.list_namespaces(self.spec.prefix)
            try:
                remove_cgroups(self.spec.prefix)
            except OSError as exc:
                err = err or EmulationError(f"cgroups of {self.spec.prefix}: {exc}")
                left = left or [str(cgroup_base(self.spec.prefix))]
            if not left:
                remove_record(self.spec.prefix)
            self.teardown_seconds = time.perf_counter() - t0
            self._active = False
            self.log(f"teardown: {len(names)} namespaces removed in {self.teardown_seconds:.2f} s")
            if left:
                raise EmulationError(f"teardown left {len(left)} namespaces ({left[0]}, ...): "
                                     f"run 'tpcstudy emulate clean'" + (f" ({err})" if err else ""))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            self._restore_signals()

    def _install_signals(self) -> None:
        import threading

        if threading.current_thread() is not threading.main_thread():
            return

        def on_term(signum: int, frame: Any) -> None:
            raise Terminated()

        self._old_handlers[signal.SIGTERM] = signal.signal(signal.SIGTERM, on_term)
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
            self._old_handlers[signal.SIGINT] = signal.signal(signal.SIGINT,
                                                              signal.default_int_handler)

    def _restore_signals(self) -> None:
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old)
        self._old_handlers.clear()

    def _record_build(self, pid: int) -> None:
        """The namespaces' ``ip -batch`` (a killed run's orphan would go on adding them):
        recorded while it runs, so ``clean`` can kill it."""
        self.record.setdefault("processes", []).append(
            {"pid": pid, "start": _ns.process_start_ticks(pid), "role": "build"})
        write_record(self.record)

    def _build(self) -> None:
        for n, phase in enumerate(build_steps(self.spec)):
            if n == 0:  # the namespaces: one batch
                for b in phase:
                    assert isinstance(b, Batch)
                    _ns.run_batch(b.tool, b.lines, netns=b.netns, label=b.label,
                                  on_start=self._record_build)
                self.record["processes"] = [p for p in self.record.get("processes", [])
                                            if p.get("role") != "build"]
                write_record(self.record)
                continue
            batches = [s for s in phase if isinstance(s, Batch)]
            sysctls = [s for s in phase if isinstance(s, Sysctls)]
            for s in sysctls:  # in-process, this thread: fast
                _ns.write_sysctls(s.values, netns=s.netns)
            if len(batches) <= 1 or self.jobs == 1:
                for b in batches:
                    _ns.run_batch(b.tool, b.lines, netns=b.netns, label=b.label, ipv6=b.ipv6)
            else:
                with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
                    futs = [pool.submit(_ns.run_batch, b.tool, b.lines, netns=b.netns,
                                        label=b.label, ipv6=b.ipv6) for b in batches]
                    for f in futs:
                        f.result()

    # -- kept up --
    def keep(self, name: str, **extra: Any) -> RunRecord:
        """Leave the network up when this process ends (``tpcstudy emulate up``): the record
        says so (``kind: up``, its name, ``extra``) and teardown becomes a no-op; ``tpcstudy
        emulate down NAME`` removes it."""
        self.record.update(kind="up", name=name, **extra)
        write_record(self.record)
        self._active = False
        self.procs = []
        self._restore_signals()
        return self.record

    # -- cgroups --
    def cgroup(self, router: Any) -> Path:
        """Router ``router``'s cgroup v2 (created on first use, removed at teardown): the
        processes and sockets of that emulated host, where a BPF host agent attaches."""
        r = self.spec.router(router)
        path = cgroup_base(self.spec.prefix) / f"r{r.id}"
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            if self.record.get("cgroups") != 1:
                self.record["cgroups"] = 1
                write_record(self.record)
        return path

    # -- processes --
    def spawn(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """Start a process in its own process group, recorded for teardown and ``clean``."""
        proc = subprocess.Popen(list(argv), start_new_session=True, **kwargs)
        self.procs.append(proc)
        self.record.setdefault("processes", []).append(
            {"pid": proc.pid, "start": _ns.process_start_ticks(proc.pid)})
        write_record(self.record)
        return proc

    def kill_processes(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            for f in (p.stdin, p.stdout, p.stderr):
                if f is not None:
                    try:
                        f.close()
                    except OSError:
                        pass
        self.procs = [p for p in self.procs if p.poll() is None]
        if self.record:
            self.record["processes"] = [{"pid": p.pid, "start": _ns.process_start_ticks(p.pid)}
                                        for p in self.procs]
            if self._active:
                write_record(self.record)

    # -- failures --
    def fail_arc(self, arc: int) -> float:
        """Drop every packet of directed arc ``arc`` from now on (its queue becomes a 0-byte
        bfifo; routes stay, unlike a link set down). Returns the time (``time.monotonic``)."""
        itf = self.spec.interface_of_arc(arc)
        _ns.run_batch("tc", [queue_line(itf, 0)], netns=self.spec.routers[itf.router].netns,
                      label=f"fail arc {arc}")
        t = time.monotonic()
        self._failed[arc] = t
        return t

    def restore_arc(self, arc: int) -> float:
        itf = self.spec.interface_of_arc(arc)
        _ns.run_batch("tc", [queue_line(itf)], netns=self.spec.routers[itf.router].netns,
                      label=f"restore arc {arc}")
        self._failed.pop(arc, None)
        return time.monotonic()

    # -- counters --
    def reseed(self, draw: int) -> None:
        """Every router's ECMP hash seed for repeated draw ``draw`` (draw 0: the build's): a new
        independent placement of the connections on equal-cost paths, without a rebuild."""
        for r in self.spec.routers:
            _ns.write_sysctls([("net.ipv4.fib_multipath_hash_seed",
                                str(hash_seed(self.spec.seed, r.name, draw)))], netns=r.netns)

    def wait_quiet(self, *, timeout: float = 5.0, step: float = 0.25) -> float:
        """Wait until no packet crosses any link for ``step`` seconds (after a build, each
        interface sends a few MLD reports for about a second). Returns the seconds waited;
        raises :class:`EmulationError` if the network is still busy after ``timeout``."""
        t0 = time.monotonic()
        last = self.tx_packets()
        while True:
            time.sleep(step)
            now = self.tx_packets()
            if now == last:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                moved = sum(now[a] - last[a] for a in now)
                raise EmulationError(f"the idle network still moves packets after {timeout:g} s "
                                     f"({moved} in the last {step:g} s)")
            last = now

    def tx_packets(self) -> Dict[int, int]:
        """Packets sent so far on every directed arc (the tail veth's ``tx_packets``)."""
        counters = _ns.interface_counters(self.spec.namespaces)
        out = {}
        for r in self.spec.routers:
            c = counters[r.netns]
            for i in r.interfaces:
                out[i.arc] = c[i.name][3]
        return out

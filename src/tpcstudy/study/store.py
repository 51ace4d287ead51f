"""A study's results folder: one part file per task, merged into ``results.csv``; reading a
folder back (:func:`load_results`), its kind taken from ``meta.json``.

Output folder layout::

    out_dir/meta.json          kind, config, seeds, solver, versions, commit (write_meta)
    out_dir/parts/<task>.csv   one file per finished task, written atomically; its first line
                               ``# input: <fingerprint>`` ties the rows to the exact input
                               (file hash and resolved options) that produced them
    out_dir/results.csv        every part's rows, sorted by the key columns (rebuilt atomically)
    out_dir/.lock              held (``flock``) by the one run writing the folder; holds its pid
                               (:mod:`.folderlock`)

Every write goes to a temporary file in the same folder, is flushed, then renamed over the
target (``os.replace``); ``results.csv`` and ``meta.json`` are ``fsync``-ed first, the part
files are not (hundreds of them, up to 10 ms each on a busy disk: after a power failure one
may be empty or cut short, which the next run treats as below). A part that cannot be read
whole (empty, cut short, not UTF-8, a row of the wrong width) is discarded with a note and its
task runs again; a part written by another version of the study (other columns) stops the run
instead.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import InputFileError, UsageError
from ..io import atomic_write_text, csv_cell, remove_dead_temporaries
from ..io.bounded import clip, read_bounded_json, read_bounded_text
from .folderlock import folder_lock, folder_writer
from .kinds import KINDS as _REGISTRY
from .kinds import kind as _kind
from .provenance import read_meta, write_meta

__all__ = ["ResultStore", "read_results", "discard_results", "Results", "load_results",
           "cell_number", "cell_float", "KINDS", "STATUS", "ERROR", "FAILED", "folder_lock",
           "folder_writer", "open_store"]

_INPUT = "# input: "


class _Damaged(Exception):
    """A part file that cannot be read whole."""

#: What a results folder or file can hold (names; each kind's columns, summary and figure are in
#: the registry :data:`tpcstudy.study.kinds.KINDS`): topology statistics, one of the studies
#: (maximum flow, disjoint paths, minimum MLU), or an emulation run (``tpcstudy emulate``).
KINDS = tuple(_REGISTRY)
_STRING_COLUMNS = {"topology", "name", "source", "model", "method", "status", "error",
                   "capacity_rule", "weight_rule", "policy", "slot_share", "matrix",
                   "failure", "reaction", "objective"}

#: Column marking a row's outcome; ``"failed"`` for the row standing for a task that raised.
STATUS = "status"
#: Column holding the error message of a failed task.
ERROR = "error"
FAILED = "failed"


def _csv_text(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


def _sort_key(values: Sequence[str]) -> Tuple[Tuple[int, float, str], ...]:
    """Numbers in numeric order before text in text order, column by column."""
    out = []
    for v in values:
        try:
            out.append((0, float(v), v))
        except ValueError:
            out.append((1, 0.0, v))
    return tuple(out)


# ----------------------------------------------------------------------------- store
class ResultStore:
    """Results of a study in ``out_dir``: one part file per task, merged into results.csv.

    Parameters
    ----------
    out_dir
        The results folder (created if missing).
    columns
        The CSV columns, in order.  ``status`` and ``error`` are appended when missing.
    key
        The columns that identify a row; ``results.csv`` has one row per key, sorted by them.
    previous
        Column lists of earlier versions of the kind (:attr:`.kinds.Kind.previous`): a part
        file with one of them is read with the columns added since empty.

    Raises
    ------
    UsageError
        ``key`` names a column not in ``columns``, or an existing part file has other
        columns (the folder was written by a different version of the study).
    """

    def __init__(self, out_dir: Union[str, Path], columns: Sequence[str], key: Sequence[str],
                 previous: Iterable[Sequence[str]] = ()) -> None:
        self.out_dir = Path(out_dir)
        cols = list(columns)
        for extra in (STATUS, ERROR):
            if extra not in cols:
                cols.append(extra)
        if len(set(cols)) != len(cols):
            raise UsageError(f"ResultStore: duplicate column in {cols}")
        missing = [k for k in key if k not in cols]
        if missing:
            raise UsageError(f"ResultStore: key column {missing[0]!r} is not among the columns")
        self.columns: List[str] = cols
        self.key: List[str] = list(key)
        self._previous = [list(p) for p in previous if set(p) <= set(cols)]
        self.parts_dir = self.out_dir / "parts"
        self.results_path = self.out_dir / "results.csv"
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        self._rows: Dict[str, List[List[str]]] = {}
        self._inputs: Dict[str, Optional[str]] = {}
        self._owner: Dict[Tuple[str, ...], str] = {}
        self._dirty = False
        #: What loading found and did (damaged parts discarded), one line each.
        self.notes: List[str] = []
        self._clean_temporaries()
        self._load()

    # -- loading --
    def _clean_temporaries(self) -> None:
        for d in (self.out_dir, self.parts_dir):
            remove_dead_temporaries(d, unowned=True)

    def _read_part(self, path: Path) -> Tuple[Optional[str], List[List[str]]]:
        data = path.read_bytes()
        if not data:
            raise _Damaged("empty")
        if not data.endswith(b"\n"):
            raise _Damaged("cut short")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Damaged(f"not UTF-8 at byte {exc.start}") from None
        fingerprint = None
        if text.startswith(_INPUT):
            first, _, text = text.partition("\n")
            fingerprint = first[len(_INPUT):].strip() or None
        try:
            rows = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise _Damaged(str(exc)) from None
        if not rows:
            raise _Damaged("no header")
        header, body = rows[0], rows[1:]
        if header != self.columns and header in self._previous:  # an earlier version's part
            for i, r in enumerate(body):
                if len(r) != len(header):
                    raise _Damaged(f"row {i + 1} has {len(r)} cells, not {len(header)}")
            at = {c: j for j, c in enumerate(header)}
            return fingerprint, [[r[at[c]] if c in at else "" for c in self.columns] for r in body]
        if header != self.columns:
            raise UsageError(f"{path}: columns {header} differ from the study's "
                             f"{self.columns} (written by another version of the study); use a "
                             "new output folder")
        for i, r in enumerate(body):
            if len(r) != len(self.columns):
                raise _Damaged(f"row {i + 1} has {len(r)} cells, not {len(self.columns)}")
        return fingerprint, body

    def _load(self) -> None:
        for path in sorted(self.parts_dir.glob("*.csv")):
            try:
                fingerprint, rows = self._read_part(path)
            except _Damaged as exc:
                self.notes.append(f"{path}: damaged ({exc}); discarded, its task runs again")
                path.unlink(missing_ok=True)
                self._dirty = True
                continue
            tid = path.stem
            self._rows[tid] = rows
            self._inputs[tid] = fingerprint
            for r in rows:
                self._owner.setdefault(self._key_of(r), tid)

    def _key_of(self, row: Sequence[str]) -> Tuple[str, ...]:
        return tuple(row[self.columns.index(k)] for k in self.key)

    # -- queries --
    def done(self, task_id: str) -> bool:
        """``True`` when the task's part file exists (finished, successfully or not)."""
        return task_id in self._rows

    def failed(self, task_id: str) -> bool:
        """``True`` when the task is stored as failed (a row with ``status == "failed"``)."""
        s = self.columns.index(STATUS)
        return any(r[s] == FAILED for r in self._rows.get(task_id, []))

    def rows(self, task_id: str) -> List[Dict[str, str]]:
        """The stored rows of a task (column -> cell text; empty when it is not stored)."""
        return [dict(zip(self.columns, r)) for r in self._rows.get(task_id, [])]

    def task_ids(self) -> List[str]:
        """Ids of the stored tasks, sorted."""
        return sorted(self._rows)

    def fingerprint(self, task_id: str) -> Optional[str]:
        """The input fingerprint the task's part records (``None``: none recorded)."""
        return self._inputs.get(task_id)

    def label(self, task_id: str) -> str:
        """The key of the task's first row (``Abilene 1.0 0 ...``), else its id."""
        rows = self._rows.get(task_id) or []
        return " ".join(v for v in self._key_of(rows[0]) if v) if rows else task_id

    def forget(self, task_id: str) -> None:
        """Remove a stored task (its part file and rows)."""
        for r in self._rows.pop(task_id, []):
            if self._owner.get(self._key_of(r)) == task_id:
                del self._owner[self._key_of(r)]
        self._inputs.pop(task_id, None)
        (self.parts_dir / f"{task_id}.csv").unlink(missing_ok=True)
        self._dirty = True

    def __len__(self) -> int:
        return sum(len(r) for r in self._rows.values())

    # -- writing --
    def encode(self, task_id: str, rows: Sequence[Mapping[str, Any]]) -> List[List[str]]:
        """Check rows and turn them into CSV cells.

        Raises
        ------
        UsageError
            A row has a column the store does not know, two rows share a key, or a key is
            already owned by another task.
        """
        out: List[List[str]] = []
        seen: Dict[Tuple[str, ...], int] = {}
        colset = set(self.columns)
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise UsageError(f"task {task_id}: row {i} is a {type(row).__name__}, not a dict")
            unknown = [c for c in row if c not in colset]
            if unknown:
                raise UsageError(f"task {task_id}: row {i} has unknown column {unknown[0]!r}")
            cells = [csv_cell(row.get(c)) for c in self.columns]
            k = self._key_of(cells)
            if k in seen:
                raise UsageError(f"task {task_id}: rows {seen[k]} and {i} share the key {k}")
            owner = self._owner.get(k)
            if owner is not None and owner != task_id:
                raise UsageError(f"task {task_id}: key {k} is already stored by task {owner}")
            seen[k] = i
            out.append(cells)
        return out

    def put(self, task_id: str, rows: Sequence[Mapping[str, Any]],
            fingerprint: Optional[str] = None) -> None:
        """Store a finished task's rows atomically in ``parts/<task_id>.csv``, with the
        fingerprint of the input that produced them.

        ``results.csv`` is not rewritten here; call :meth:`flush`.
        """
        if not re.fullmatch(r"[A-Za-z0-9._=-]+", task_id) or task_id.startswith("."):
            raise UsageError(f"task id {task_id!r} is not a safe file name")
        if fingerprint is not None and not re.fullmatch(r"[A-Za-z0-9:._-]+", fingerprint):
            raise UsageError(f"input fingerprint {fingerprint!r}: letters, digits and :._- only")
        cells = self.encode(task_id, rows)
        head = f"{_INPUT}{fingerprint}\n" if fingerprint else ""
        atomic_write_text(self.parts_dir / f"{task_id}.csv", head + _csv_text(self.columns, cells),
                          durable=False)  # a damaged part is recomputed (module docstring)
        self._inputs[task_id] = fingerprint
        for r in self._rows.get(task_id, []):  # a retried task replaces its old rows
            if self._owner.get(self._key_of(r)) == task_id:
                del self._owner[self._key_of(r)]
        self._rows[task_id] = cells
        for r in cells:
            self._owner[self._key_of(r)] = task_id
        self._dirty = True

    def flush(self, force: bool = False) -> Path:
        """Rewrite ``results.csv`` from all parts (sorted by the key columns), atomically."""
        if self._dirty or force or not self.results_path.exists():
            allrows = [r for rows in self._rows.values() for r in rows]
            allrows.sort(key=lambda r: (_sort_key(self._key_of(r)), r))
            atomic_write_text(self.results_path, _csv_text(self.columns, allrows))
            self._dirty = False
        return self.results_path

    def failure_row(self, key: Mapping[str, Any], message: str) -> Dict[str, Any]:
        """The row standing for a task that raised: its ``key``, ``status="failed"``,
        ``error``."""
        row = {k: v for k, v in key.items() if k in self.columns}
        row[STATUS] = FAILED
        row[ERROR] = message
        return row


#: Largest results.csv read back (the whole Zoo's max-flow study with every option is a few MiB).
MAX_RESULTS_BYTES = 256 << 20


def _results_text(path: Union[str, os.PathLike]) -> str:
    """A results CSV's text, read bounded (a regular file, also behind a link, of at most
    :data:`MAX_RESULTS_BYTES`: a FIFO or ``/dev/zero`` is refused, not read)."""
    return read_bounded_text(path, MAX_RESULTS_BYTES, what="results CSV")


def read_results(path: Union[str, os.PathLike]) -> List[Dict[str, str]]:
    """The rows of a study's ``results.csv`` (or any CSV) as dicts of strings, in file order."""
    return list(csv.DictReader(io.StringIO(_results_text(path), newline="")))


# ----------------------------------------------------------------------------- reading back
class Results(List[Dict[str, Any]]):
    """Rows of one study output (a list of dicts, numbers already converted) and where they came
    from.

    Attributes
    ----------
    kind
        One of :data:`KINDS` (``"topo"``: topology statistics, ``"maxflow"``, ...).
    meta
        The folder's ``meta.json`` (empty dict when there is none).
    source
        The file or folder read (or the ``--topo`` spec for statistics computed on the fly).
    writer
        The pid of the live run still writing the folder (its rows are partial), else ``None``.
    """

    def __init__(self, rows: Iterable[Dict[str, Any]] = (), kind: str = "topo",
                 meta: Optional[Dict[str, Any]] = None, source: str = "") -> None:
        super().__init__(rows)
        self.kind = _kind(kind).name
        self.meta = dict(meta or {})
        self.source = str(source)
        self.writer: Optional[int] = None

    @property
    def config(self) -> Dict[str, Any]:
        """The study settings recorded in ``meta.json`` (``study.config``), or ``{}``."""
        return dict((self.meta.get("study") or {}).get("config") or {})

    @property
    def seeds(self) -> List[Any]:
        return list((self.meta.get("study") or {}).get("seeds") or [])

    @property
    def label(self) -> str:
        """A short name for file names: the folder (or file stem) name."""
        p = Path(self.source)
        name = p.stem if p.suffix in (".csv", ".json") else p.name
        return "".join(c if c.isalnum() or c in "-_." else "-" for c in name) or self.kind

    def __repr__(self) -> str:
        return f"Results(kind={self.kind!r}, rows={len(self)}, source={self.source!r})"


def cell_number(value: Any, *, finite: bool = True) -> Optional[float]:
    """The number a results cell holds (text as read, or a number as loaded): the one reading
    of a cell for every summary, table and figure. ``None`` when it is empty or not a number;
    with ``finite`` (the default) also when it is infinite or NaN (``finite=False`` keeps an
    unfinished transfer's ``inf``)."""
    if value is None or value == "":
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if not finite or math.isfinite(v) else None


def cell_float(value: Any, *, finite: bool = False) -> float:
    """:func:`cell_number` as a float: NaN where it is ``None`` (infinities kept unless
    ``finite``)."""
    v = cell_number(value, finite=finite)
    return math.nan if v is None else v


def _convert(col: str, value: Any) -> Any:
    if col in _STRING_COLUMNS or not isinstance(value, str):
        return value
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def _read_csv(path: Path) -> Tuple[List[str], List[Dict[str, Any]]]:
    """Columns and rows of a CSV, numbers converted (:func:`read_results` reads the text)."""
    text = _results_text(path)
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputFileError(f"{path}: cannot read as CSV ({clip(str(exc))})") from None
    del text
    columns = table[0] if table else []
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise InputFileError(f"{path}:1: column {clip(twice[0])} appears twice in the header "
                             "(not a file tpcstudy wrote)")
    rows = []
    for line, cells in enumerate(table[1:], start=2):
        if len(cells) != len(columns) and any(cells):
            raise InputFileError(f"{path}:{line}: {len(cells)} cells for {len(columns)} columns: "
                                 f"{clip(','.join(cells))}")
        if cells:
            rows.append({k: _convert(k, v) for k, v in zip(columns, cells)})
    return columns, rows


#: Columns whose numbers of an ``ok`` row cannot be negative (an MLU, a flow, a share).
_NON_NEGATIVE = {"mlu", "lambda", "value", "seed", "k", "heavy", "pairs", "subflows", "volume",
                 "demands", "mean_paths", "min_paths", "max_paths", "survive_share"}


def _kind_of(columns: Iterable[str], meta: Mapping[str, Any]) -> Optional[str]:
    """The kind meta.json records, else (a bare CSV, or a folder written before the kind was
    recorded) what the config and columns say."""
    study = meta.get("study") or {}
    if study.get("kind") in KINDS:
        return str(study["kind"])
    config = study.get("config") or {}
    if config.get("study") == "disjoint":
        return "disjoint"
    if config.get("objective") == "mlu":
        return "mlu"
    if "models" in config:
        return "maxflow"
    cols = set(columns)
    for k in _REGISTRY.values():
        if k.sniff and set(k.sniff) <= cols:
            return k.name
    return None


def load_results(path: Union[str, Path]) -> Results:
    """Read one study output and tell what it is.

    Parameters
    ----------
    path
        A result folder (``meta.json`` + ``results.csv`` of ``tpcstudy maxflow`` or ``tpcstudy
        disjoint``), a ``results.csv``, a ``tpcstudy topo stats --out`` CSV or ``--json`` output,
        or a folder holding such a statistics file.

    Returns
    -------
    Results
        The rows (numbers as int/float, empty cells as ``None``), ``kind``, ``meta``, ``source``.

    Raises
    ------
    UsageError
        ``path`` does not exist or is not one of the above (the message says what was found).
    """
    p = Path(path)
    if not p.exists():
        raise InputFileError(f"{p}: no such file or folder")
    if p.is_dir():
        results = p / "results.csv"
        writer = folder_writer(p)
        if results.exists():
            loaded = _load_csv(results, read_meta(p), source=p)
            loaded.writer = writer
            return loaded
        if writer is not None:
            raise InputFileError(f"{p}: still running (pid {writer}): no results yet")
        if (p / "meta.json").exists():
            raise InputFileError(f"{p}: has meta.json but no results.csv (a study still running, or "
                             "killed before its first topology finished?)")
        stats = [q for q in sorted(p.glob("*.csv")) + sorted(p.glob("*.json"))
                 if _sniff_stats(q)]
        if len(stats) == 1:
            return load_results(stats[0])
        if len(stats) > 1:
            raise UsageError(f"{p}: several topology statistics files "
                             f"({', '.join(q.name for q in stats)}); name one")
        raise InputFileError(f"{p}: not a result folder (no results.csv and meta.json of a "
                         "maxflow/disjoint study, no 'tpcstudy topo stats' CSV or JSON)")
    if p.suffix.lower() == ".json":
        if p.name == "meta.json":
            return load_results(p.parent)
        data = read_bounded_json(p, MAX_RESULTS_BYTES, what="topo stats JSON")
        if isinstance(data, dict) and isinstance(data.get("topologies"), list):
            return Results(data["topologies"], "topo", {"summary": data.get("summary")},
                           source=str(p))
        raise InputFileError(f"{p}: not the JSON of 'tpcstudy topo stats --json' (no 'topologies')")
    meta = read_meta(p.parent) if p.name == "results.csv" else {}
    return _load_csv(p, meta, source=p.parent if p.name == "results.csv" else p)


def _sniff_stats(path: Path) -> bool:
    try:  # a FIFO or a device among the folder's files is not a statistics file: never opened
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix == ".json":
        return '"topologies"' in head and '"pruned_nodes"' in head
    first = head.splitlines()[0] if head else ""
    return "pruned_nodes" in first.split(",")


def _load_csv(path: Path, meta: Dict[str, Any], source: Path) -> Results:
    columns, rows = _read_csv(path)
    kind = _kind_of(columns, meta)
    if kind is None:
        raise InputFileError(f"{path}: not a tpcstudy result (columns {', '.join(columns[:8])}...: "
                             "expected the results.csv of a tpcstudy study or emulation, with its "
                             "meta.json, or a topo stats CSV)")
    missing = [c for c in _REGISTRY[kind].required if c not in columns]
    if missing:
        raise InputFileError(f"{path}: the {kind} study's results.csv has no column "
                             f"{', '.join(missing)} (header: {', '.join(columns[:12])})")
    for line, r in enumerate(rows, start=2):  # the header is line 1
        if (r.get("status") or "ok") != "ok":
            continue
        for c in _REGISTRY[kind].numeric:
            v = r.get(c)
            if v is None:
                continue
            if not isinstance(v, (int, float)):
                raise InputFileError(f"{path}:{line}: column {c}: {clip(v)} is not a number")
            if c in _NON_NEGATIVE and v < 0:
                raise InputFileError(f"{path}:{line}: column {c}: {v!r} is negative (no "
                                     f"{c} is)")
    return Results(rows, kind, meta, source=str(source))


def discard_results(out: Path, *extra: str) -> None:
    """``--overwrite``: drop a folder's results (``parts/``, ``results.csv`` and the study's
    ``extra`` subfolders) before a fresh study; ``meta.json`` is rewritten by the caller."""
    for name in ("parts", *extra):
        shutil.rmtree(out / name, ignore_errors=True)
    (out / "results.csv").unlink(missing_ok=True)


def open_store(out: Optional[str], config: Dict[str, Any], *, kind: str, columns: Sequence[str],
                key: Sequence[str], seeds: Optional[Sequence[int]], overwrite: bool,
                solver: Optional[str] = None) -> Optional[ResultStore]:
    """The results folder ``out`` (``None``: no folder): started over with ``overwrite``,
    ``meta.json`` written, its store opened (re-running resumes)."""
    if not out:
        return None
    outp = Path(out)
    if overwrite:
        discard_results(outp)
    write_meta(outp, config, kind=kind, seeds=seeds, solver=solver, overwrite=overwrite)
    return ResultStore(outp, list(columns), list(key))

"""Small I/O helpers: atomic writes (temporary file, then rename), CSV and JSON output (reading
input files: :mod:`tpcstudy.io.bounded`)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, List, Mapping, Sequence, Union

import numpy as np

PathLike = Union[str, os.PathLike]


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The mode a plain ``open()`` gives a new file (0666 less the umask), read once at import:
#: reading the umask means setting it, which must not race with other threads later.
_FILE_MODE = 0o666 & ~_read_umask()


def temp_prefix(name: str) -> str:
    """The start of a temporary name this process makes for ``name``: ``.NAME.pPID.``.

    The owner's pid in the name lets a later run tell a dead run's leftovers (removed by
    :func:`remove_dead_temporaries`) from a live run's work in progress (left alone).
    """
    return f".{name}.p{os.getpid()}."


_OWNED = re.compile(r"^\..*\.p(\d+)\.[^/]*$")


def pid_alive(pid: int) -> bool:
    """``True`` when a process ``pid`` exists (also when it belongs to another user)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_temporaries(folder: PathLike, only: str = "", unowned: bool = False) -> List[Path]:
    """Remove the temporary files and folders that dead runs of tpcstudy left in ``folder``.

    Only names this package makes (``.NAME.pPID.XXXX.tmp`` from :func:`atomic_open`,
    ``.tpcstudy-export.pPID.XXXX`` staging folders) whose process ``PID`` no longer exists
    are removed; another tool's files and a live run's are left alone. ``only``: just the
    names that start with it. ``unowned``: also ``.*.tmp`` names without a pid (written before
    names carried one). Returns what was removed.
    """
    removed: List[Path] = []
    d = Path(folder)
    if not d.is_dir():
        return removed
    for entry in d.iterdir():
        name = entry.name
        if not name.startswith(only):
            continue
        m = _OWNED.match(name)
        if m is None:
            if not (unowned and name.startswith(".") and name.endswith(".tmp")):
                continue
        elif not (name.endswith(".tmp") or name.startswith(".tpcstudy-")) \
                or pid_alive(int(m.group(1))):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except FileNotFoundError:
            continue
        removed.append(entry)
    return removed


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "wb", *, durable: bool = True,
                **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` whole.

    Readers see the old file or the complete new one, never a part: the data is flushed and
    fsync-ed, given the usual file mode, then renamed over ``path``. On an exception the
    temporary file is removed and ``path`` is left as it was. ``mode`` is ``"wb"`` or ``"w"``
    (text; ``kwargs`` such as ``encoding`` and ``newline`` go to ``open``). ``durable=False``
    skips the fsync: the rename still shows readers and killed processes the old file or the
    whole new one, but after a power failure the new one may be empty or cut short, so only
    for files whose reader discards a damaged copy and makes it again (a study's part files:
    up to 10 ms each on a busy disk, for hundreds of them).
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open: mode must be 'wb' or 'w', got {mode!r}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(p.name), suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600 files
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: PathLike, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "wb", durable=durable) as f:
        f.write(data)


def atomic_write_text(path: PathLike, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def csv_cell(value: Any) -> str:
    """The CSV text of one value: ``repr`` for floats (round-trips), ``nan`` for NaN, ``""`` for
    None, ``true``/``false`` for booleans; numpy scalars as their Python values."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return str(value)


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """CSV with a header of ``columns``; cells by :func:`csv_cell`, missing keys empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_cell(r.get(k)) for k in columns])
    return buf.getvalue()


def write_csv(path: PathLike, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """Write ``rows`` as CSV (:func:`csv_text`), atomically."""
    atomic_write_text(path, csv_text(rows, columns))


def json_text(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n"


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot write {type(o).__name__} as JSON")

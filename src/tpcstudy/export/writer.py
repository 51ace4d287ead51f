"""Writing a path table: every format rendered into a staging folder, then moved into place.

The whole table is validated and rendered before anything is moved, so an error leaves the
output folder as it was; the plan used is always written as ``plan.json``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import UsageError
from ..io import atomic_write_bytes, json_text, remove_dead_temporaries, temp_prefix
from . import bpf, jsonfile, ovsdb
from .layout import Variant, variant_named
from .table import PathTable, validate_table

__all__ = ["FORMATS", "write_paths"]

FORMATS = ("json", "bpf", "ovsdb")
PathLike = Union[str, "os.PathLike[str]"]


def _render(table: PathTable, formats: Sequence[str], v: Variant,
            pin: str) -> Iterator[Tuple[str, bytes]]:
    yield "plan.json", json_text(table.plan.to_json()).encode("utf-8")
    for f in formats:
        if f == "json":
            yield from jsonfile.render(table)
        elif f == "bpf":
            for name, data in bpf.render(table, v, pin):
                yield f"bpf-{v.name}/{name}", data
        elif f == "ovsdb":
            yield from ovsdb.render(table)


def write_paths(table: PathTable, out: PathLike, formats: Union[str, Sequence[str]] = "json",
                variant: str = "n_rto", pin: Optional[str] = None, *,
                allow_wide_prefix: bool = False) -> List[Path]:
    """Write ``table`` in one or more formats into the folder ``out``, with ``plan.json``.

    Parameters
    ----------
    table
        From :func:`path_table`.
    out
        Output folder (created).
    formats
        ``"json"`` (``paths.json``), ``"bpf"`` (``bpf-<variant>/<router>.batch`` and ``.bin``,
        ``index.json``) or ``"ovsdb"`` (``ovsdb-paths.json`` rows, ``ovsdb-transact.json``), or a
        list of them.
    variant
        Agent variant for ``bpf`` (see :data:`VARIANTS`).
    pin
        Pinned map path in the batch files (default ``/sys/fs/bpf/tpc/<map name>``).
    allow_wide_prefix
        Accept prefixes shorter than /64 (only their first /64 is served).

    The whole table is validated and rendered into a staging folder inside ``out`` before
    anything is moved into place; an error leaves ``out`` untouched. A ``bpf-<variant>`` folder
    is replaced as a whole. Returns the files written.
    """
    formats = [formats] if isinstance(formats, str) else list(formats)
    for f in formats:
        if f not in FORMATS:
            raise UsageError(f"unknown format {f!r}; choose from {', '.join(FORMATS)}")
    v = variant_named(variant)
    pin = bpf.check_pin(pin if pin is not None else f"/sys/fs/bpf/tpc/{v.map_name}")
    validate_table(table, allow_wide_prefix=allow_wide_prefix)
    if "ovsdb" in formats:  # the rows name both routers by loopback
        for r in dict.fromkeys(r for e in table.entries for r in (e.source, e.destination)):
            table.plan.loopback(r)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    remove_dead_temporaries(root)  # what a killed export left (only a dead run's staging)
    stage = Path(tempfile.mkdtemp(prefix=temp_prefix("tpcstudy-export"), dir=root))
    written: List[str] = []
    try:
        for rel, data in _render(table, formats, v, pin):
            atomic_write_bytes(stage / rel, data)
            written.append(rel)
        dirs = sorted({rel.split("/")[0] for rel in written if "/" in rel})
        for d in dirs:
            if (root / d).exists():
                os.replace(root / d, stage / f".old-{d}")
            os.replace(stage / d, root / d)
        for rel in written:
            if "/" not in rel:
                os.replace(stage / rel, root / rel)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [root / rel for rel in written]

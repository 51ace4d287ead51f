"""Text helpers shared by the topology readers: decoding, numbers, unique router names.

Every problem is a :class:`~tpcstudy.errors.TopologyFormatError` naming the file, line and value.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..errors import TopologyFormatError
from .bounded import MAX_TEXT_BYTES, clip, read_bounded_text

__all__ = ["read_text", "number", "integer", "unique_names", "opt_float", "progress_bar",
           "PROGRESS_BYTES"]

#: Files larger than this show a progress bar while they are read (on a terminal).
PROGRESS_BYTES = 8 << 20


def progress_bar(path: Path, size: int) -> Any:
    """A tqdm bar on stderr (terminals only) for reading ``size`` bytes of ``path``, or ``None``
    for a file of at most :data:`PROGRESS_BYTES`."""
    if size <= PROGRESS_BYTES:
        return None
    import sys

    from tqdm.auto import tqdm

    return tqdm(total=size, unit="B", unit_scale=True, desc=f"reading {Path(path).name}",
                file=sys.stderr, leave=False, disable=None)


def read_text(path: Path) -> str:
    """A topology or demand file's text, read bounded (:mod:`tpcstudy.io.bounded`: a regular file
    of at most :data:`~tpcstudy.io.bounded.MAX_TEXT_BYTES`, UTF-8)."""
    return read_bounded_text(path, MAX_TEXT_BYTES, what="topology or demand",
                             error=TopologyFormatError)


def number(text: str, path: Path, line: int, what: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise TopologyFormatError(path, line, f"{what} {clip(text)} is not a number") from None
    if math.isnan(x) or math.isinf(x):
        raise TopologyFormatError(path, line, f"{what} {clip(text)} is not a finite number")
    return x


def integer(text: str, path: Path, line: int, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TopologyFormatError(path, line, f"{what} {clip(text)} is not an integer") from None


def unique_names(labels: Sequence[Optional[str]], ids: Sequence[Any]) -> List[str]:
    """Labels as names; a repeated or missing label becomes ``label#id`` so names stay unique."""
    count: Dict[str, int] = {}
    for x in labels:
        if x is not None:
            count[x] = count.get(x, 0) + 1
    names = [x if x is not None and count[x] == 1 else f"{x if x is not None else 'node'}#{i}"
             for x, i in zip(labels, ids)]
    seen: Dict[str, int] = {}
    out = []
    for x in names:  # a label may itself look like "a#3": make sure
        k = seen.get(x, 0)
        seen[x] = k + 1
        out.append(x if k == 0 else f"{x}~{k}")
    return out


def opt_float(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan

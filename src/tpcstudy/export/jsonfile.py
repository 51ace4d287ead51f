"""The ``json`` format: ``paths.json``, the readable path table (:meth:`PathTable.to_json`)."""

from __future__ import annotations

from typing import Iterator, Tuple

from ..io import json_text
from .table import PathTable

__all__ = ["render"]


def render(table: PathTable) -> Iterator[Tuple[str, bytes]]:
    """``paths.json``."""
    yield "paths.json", json_text(table.to_json()).encode("utf-8")

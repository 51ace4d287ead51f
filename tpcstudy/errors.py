"""The project's own exceptions: each message names the bad file, line and value."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union


class TpcStudyError(Exception):
    """Base class of every error tpcstudy raises on purpose."""


class TopologyFormatError(TpcStudyError, ValueError):
    """A topology or demand file that cannot be read.

    Parameters
    ----------
    file
        The file (or a description of the source, e.g. ``"networkx graph"``).
    line
        1-based line number of the problem, or ``None`` when it has no single line.
    what
        What is wrong, naming the offending value.
    """

    def __init__(self, file: Union[str, Path], line: Optional[int], what: str) -> None:
        self.file = str(file)
        self.line = line
        self.what = what
        where = self.file if line is None else f"{self.file}:{line}"
        super().__init__(f"{where}: {what}")


class ZooDataError(TpcStudyError):
    """The Topology Zoo files are missing, corrupted or cannot be fetched."""


class UsageError(TpcStudyError, ValueError):
    """An argument value that does not make sense (unknown node, bad option)."""

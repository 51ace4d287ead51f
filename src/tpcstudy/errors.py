"""Every exception tpcstudy raises on purpose; each message names the bad file, line and value.

The command line maps them to exit codes (``exit_code``): 2 for a usage error (an argument or
option that does not make sense), 1 for everything that fails at run time (a file that cannot be
read or parsed, data that cannot be fetched, an LP solver that fails, a table the agent cannot
use).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

__all__ = ["TpcStudyError", "UsageError", "InputFileError", "TopologyFormatError", "DataError",
           "ZooDataError", "RepetitaDataError", "PlanError", "ExportError", "SolverError", "ClusterError",
           "EmulationError", "EmulationUnavailable", "Terminated", "HostAgentError"]


class TpcStudyError(Exception):
    """Base class of every error tpcstudy raises on purpose."""

    #: Exit status of the ``tpcstudy`` command when this error stops it.
    exit_code = 1


class UsageError(TpcStudyError, ValueError):
    """An argument value that does not make sense (unknown node, bad option)."""

    exit_code = 2


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


class InputFileError(TpcStudyError, ValueError):
    """A file given as input that cannot be read as one: missing, unreadable, a symbolic link, a
    FIFO or device, or larger than any valid file of its kind (exit 1, like every unreadable
    file); the message names it."""


class DataError(TpcStudyError):
    """A data set (Topology Zoo, REPETITA) that is missing, corrupted or cannot be fetched."""


class ZooDataError(DataError):
    """The Topology Zoo files are missing, corrupted or cannot be fetched."""


class RepetitaDataError(DataError):
    """The REPETITA files are missing, corrupted or cannot be fetched."""


class PlanError(TpcStudyError, ValueError):
    """An addressing plan that cannot be used; the message names the file and the bad value."""

    def __init__(self, where: str, what: str) -> None:
        self.where = str(where)
        self.what = what
        super().__init__(f"{self.where}: {what}")


class ExportError(TpcStudyError, ValueError):
    """A path table the agent cannot use (too many paths or segments, a wide prefix, ...)."""


class ClusterError(TpcStudyError, RuntimeError):
    """A Dask cluster that cannot be reached or whose workers cannot run tpcstudy."""


class SolverError(TpcStudyError, RuntimeError):
    """An LP solver that failed at run time (could not build or write a model, crashed)."""


class EmulationError(TpcStudyError, RuntimeError):
    """Building, running or tearing down an emulated network failed (``tpcstudy emulate``); the
    message names the command, namespace or file and what the kernel or tool said."""


class EmulationUnavailable(EmulationError):
    """This machine cannot run the emulator: privileges, kernel features or tools are missing.

    ``missing`` lists each problem with how to fix it.
    """

    def __init__(self, missing: "list[str]") -> None:
        self.missing = list(missing)
        super().__init__("the emulator cannot run here:\n"
                         + "\n".join(f"  - {m}" for m in missing))


class HostAgentError(TpcStudyError, RuntimeError):
    """The BPF host agent cannot be built, loaded, read or removed (``tpcstudy agent``); the
    message says what, and which packages or privileges are missing."""


class Terminated(SystemExit):
    """SIGTERM arrived (``kill``, ``timeout``, a batch scheduler): raised in the main thread by
    the command line's handler and by a running emulation's. Like Ctrl-C it unwinds every
    ``finally`` (workers stopped, finished results kept, temporary files and namespaces
    removed); uncaught, the process exits with status 143."""

    exit_code = 143

    def __init__(self) -> None:
        super().__init__(143)

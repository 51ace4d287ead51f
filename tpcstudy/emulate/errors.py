"""Exceptions of the emulator (subclasses of :class:`tpcstudy.TpcStudyError`)."""

from __future__ import annotations

from ..errors import TpcStudyError, UsageError

__all__ = ["EmulationError", "EmulationUnavailable", "UsageError"]


class EmulationError(TpcStudyError, RuntimeError):
    """Building, running or tearing down the emulated network failed (the message names the
    command, namespace or file and what the kernel or tool said)."""


class EmulationUnavailable(EmulationError):
    """This machine cannot run the emulator: missing privileges, kernel features or tools.

    ``missing`` lists each problem with how to fix it.
    """

    def __init__(self, missing: "list[str]") -> None:
        self.missing = list(missing)
        super().__init__("the emulator cannot run here:\n" + "\n".join(f"  - {m}" for m in missing))

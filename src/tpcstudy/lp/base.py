"""What every LP backend shares: the result, the model protocol, input checks and bookkeeping.

The LP shape and the dual sign convention are described in :mod:`tpcstudy.lp`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Tuple, runtime_checkable

import numpy as np

from ..errors import UsageError

__all__ = ["LPResult", "LPModel", "ModelBase", "STATUSES", "INF", "BASIS_CODES"]

#: Every value :attr:`LPResult.status` can take.
STATUSES: Tuple[str, ...] = ("optimal", "time_limit", "infeasible", "unbounded", "error")

INF = float("inf")

#: The basis status codes of :meth:`LPModel.basis` (HiGHS's own numbering): a column or a
#: row's slack at its lower bound, basic, at its upper bound, free at zero, non-basic.
BASIS_CODES = {"lower": 0, "basic": 1, "upper": 2, "zero": 3, "nonbasic": 4}


@dataclass(frozen=True)
class LPResult:
    """The outcome of :meth:`LPModel.solve`.

    Attributes
    ----------
    status
        One of :data:`STATUSES`.  Only ``"optimal"`` carries a solution.
    objective
        Optimal objective value (``nan`` unless ``status == "optimal"``).
    x
        Column values, ``float64`` of length ``num_cols`` (``nan`` unless optimal).
    duals
        Row duals ``y >= 0`` (see the module docstring), ``float64`` of length
        ``num_rows`` (``nan`` unless optimal).
    seconds
        Wall-clock time of the solve.
    message
        The solver's own status text, or the error that stopped it.
    iterations
        Simplex (or PDLP) iterations when the solver reports them, else ``-1``.
    """

    status: str
    objective: float
    x: np.ndarray
    duals: np.ndarray
    seconds: float
    message: str = ""
    iterations: int = -1

    @property
    def ok(self) -> bool:
        """``True`` when the LP was solved to optimality."""
        return self.status == "optimal"


@runtime_checkable
class LPModel(Protocol):
    """A maximisation LP that grows by rows and columns; see the module docstring."""

    @property
    def num_rows(self) -> int:
        """Number of rows added so far."""
        ...

    @property
    def num_cols(self) -> int:
        """Number of columns added so far."""
        ...

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        """Add empty rows ``a x <= upper``; return their ids (consecutive ``int64``)."""
        ...

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        """Add columns given in CSC form; return their ids (consecutive ``int64``)."""
        ...

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        """Solve (warm-started where the backend can); never raises for solver failures."""
        ...

    def write(self, path: str) -> None:
        """Write the model as ``.lp`` or ``.mps`` (chosen by the file suffix)."""
        ...

    def basis(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """The simplex basis of the last optimal solve as ``(column, row)`` status arrays
        (``int8``, :data:`BASIS_CODES`), or ``None`` when the backend keeps none."""
        ...

    def set_basis(self, cols: np.ndarray, rows: np.ndarray) -> bool:
        """Start the next solve from this basis (``cols`` per column, ``rows`` per row, as
        :meth:`basis` gives; it may be inconsistent, e.g. carried over from a similar LP:
        the backend repairs it). ``False`` when the backend cannot; the optimum is the same
        either way."""
        ...


# ----------------------------------------------------------------------------- shared code
class ModelBase:
    """Input checking and bookkeeping shared by the backends."""

    name = "base"

    def __init__(self) -> None:
        self._row_upper = np.zeros(0)
        self._n_cols = 0

    @property
    def num_rows(self) -> int:
        return int(self._row_upper.size)

    @property
    def num_cols(self) -> int:
        return self._n_cols

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.num_rows} rows x {self.num_cols} columns>"

    # -- checks --
    def _check_rows(self, upper: Any) -> np.ndarray:
        up = np.atleast_1d(np.asarray(upper, dtype=np.float64))
        if up.ndim != 1:
            raise UsageError(f"add_rows: upper must be 1-D, got shape {up.shape}")
        if np.isnan(up).any():
            raise UsageError(f"add_rows: upper[{int(np.flatnonzero(np.isnan(up))[0])}] is nan")
        return up

    def _check_columns(self, obj: Any, starts: Any, rows: Any, vals: Any,
                       upper: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        obj = np.atleast_1d(np.asarray(obj, dtype=np.float64))
        n = obj.size
        rows = np.asarray(rows, dtype=np.int64).ravel()
        vals = np.asarray(vals, dtype=np.float64).ravel()
        starts = np.asarray(starts, dtype=np.int64).ravel()
        if starts.size == n:  # HiGHS style: no trailing end
            starts = np.append(starts, rows.size)
        if starts.size != n + 1:
            raise UsageError(f"add_columns: starts has {starts.size} entries for {n} columns "
                             f"(expected {n} or {n + 1})")
        if rows.size != vals.size:
            raise UsageError(f"add_columns: {rows.size} row indices but {vals.size} values")
        if n and (starts[0] != 0 or starts[-1] != rows.size or np.any(np.diff(starts) < 0)):
            raise UsageError(f"add_columns: starts {starts.tolist()[:8]}... must rise from 0 "
                             f"to {rows.size}")
        if not np.all(np.isfinite(obj)):
            raise UsageError("add_columns: obj must be finite")
        if not np.all(np.isfinite(vals)):
            raise UsageError("add_columns: vals must be finite")
        if rows.size and (rows.min() < 0 or rows.max() >= self.num_rows):
            bad = rows[(rows < 0) | (rows >= self.num_rows)][0]
            raise UsageError(f"add_columns: row index {int(bad)} out of range "
                             f"(model has {self.num_rows} rows)")
        if rows.size:
            # rows rising within every column (what the models pass) have no repeat: O(nnz);
            # otherwise sort to find one
            rise = np.diff(rows) > 0
            rise[starts[1:-1][(starts[1:-1] > 0) & (starts[1:-1] < rows.size)] - 1] = True
            if not rise.all():
                col = np.repeat(np.arange(n, dtype=np.int64), np.diff(starts))
                if np.unique(col * max(self.num_rows, 1) + rows).size != rows.size:
                    raise UsageError("add_columns: a column lists the same row twice")
        if upper is None:
            up = np.full(n, INF)
        else:
            up = np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,)).copy()
            if np.isnan(up).any() or (up < 0).any():
                raise UsageError("add_columns: column upper bounds must be >= 0")
        return obj, starts, rows, vals, up

    def basis(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        return None

    def set_basis(self, cols: np.ndarray, rows: np.ndarray) -> bool:
        return False

    def _new_ids(self, start: int, n: int) -> np.ndarray:
        return np.arange(start, start + n, dtype=np.int64)

    def _fail(self, status: str, message: str, seconds: float, iterations: int = -1) -> LPResult:
        return LPResult(status, float("nan"), np.full(self.num_cols, np.nan),
                        np.full(self.num_rows, np.nan), seconds, message, iterations)

    def _trivial(self, t0: float) -> Optional[LPResult]:
        """The answer without a solver when there are no columns, else ``None``."""
        if self._n_cols:
            return None
        seconds = time.perf_counter() - t0
        if (self._row_upper < 0).any():
            i = int(np.flatnonzero(self._row_upper < 0)[0])
            return self._fail("infeasible", f"no columns and row {i} has upper < 0", seconds)
        return LPResult("optimal", 0.0, np.zeros(0), np.zeros(self.num_rows), seconds, "no columns")

    def _infeasible_or_unbounded(self) -> str:
        """Resolve a solver's "infeasible or unbounded": x = 0 is feasible iff all uppers >= 0."""
        return "infeasible" if (self._row_upper < 0).any() else "unbounded"

    @staticmethod
    def _suffix(path: str) -> str:
        suffix = os.path.splitext(str(path))[1].lower()
        if suffix not in (".lp", ".mps"):
            raise UsageError(f"write: {path!r} must end in .lp or .mps")
        return suffix

"""The HiGHS backend (highspy): one live model, warm-started re-solves (the default); and
:func:`solve_whole`, a whole LP with ranged rows passed to HiGHS in one call."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ..errors import SolverError, UsageError
from .base import INF, LPResult, ModelBase

__all__ = ["HighsModel", "solve_whole"]

_SIMPLEX_STRATEGY = {"dual": 1, "primal": 4, "auto": 1}
_BANNER = threading.Lock()
_banner_done = False


def _new_highs(highspy: Any) -> Any:
    """A ``highspy.Highs()``; the first one of the process prints HiGHS's banner ("Running HiGHS
    ...", before any option can be set) on the C library's standard output, which would mix it
    into what tpcstudy prints there (tables, ``--json``) and into every notebook cell that
    solves (Jupyter shows standard error too): it is silenced at the source, into /dev/null."""
    global _banner_done
    with _BANNER:
        if _banner_done:
            return highspy.Highs()
        _banner_done = True
        try:
            libc = ctypes.CDLL(None)
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, AttributeError, ValueError):  # no fd 1, no libc: let it print
            return highspy.Highs()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
            libc.fflush(None)  # the banner is in C's stdio buffer: out now, to /dev/null
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        return h


class HighsModel(ModelBase):
    """The HiGHS backend: one live ``highspy.Highs`` model, warm-started re-solves.

    Parameters
    ----------
    simplex
        ``"auto"`` (default: dual simplex for the first, cold solve, primal simplex for the
        warm re-solves after columns are added, whose old basis stays primal feasible),
        ``"dual"`` or ``"primal"``. On the max-flow study (see tpcstudy.models.maxflow) auto was the
        fastest everywhere: REPETITA Cogentco with its 38,612 demand-bounded pairs, sr k=4, LP
        4.9 s (primal 7.3 s, dual 282 s); Zoo Kdl 10 % heavy pairs, sr k=4, LP 1.65 s (primal
        5.5 s, dual 1.7 s).
        Earlier synthetic measurements (``python benchmarks/lp.py``: 2-segment column
        generation, random graphs of 150-400 nodes): primal is up to 2x
        faster on small LPs (< 3,000 columns, a few ms per solve) but dual is 1.5-2.5x faster
        on the large ones (10,000 columns x 1,600 rows) that dominate a study's run time, both
        cold and warm-started after adding columns; 6.4 s vs 9.2 s summed over 16 runs.
    options
        Extra HiGHS options (``{"presolve": "off"}``, ...), set verbatim.
    """

    name = "highs"

    def __init__(self, *, simplex: str = "auto", options: Optional[Dict[str, Any]] = None) -> None:
        super().__init__()
        if simplex not in _SIMPLEX_STRATEGY:
            raise UsageError(f"highs: simplex must be 'primal' or 'dual', got {simplex!r}")
        import highspy  # lazy: see the module docstring

        self._hs = highspy
        h = _reused_highs(highspy)
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", _SIMPLEX_STRATEGY[simplex])
        h.setOptionValue("random_seed", 0)
        self._simplex = simplex
        self._one_thread = "threads" not in (options or {})
        self._solved = False
        self._codes = np.array(sorted(highspy.HighsBasisStatus.__members__.values(), key=int),
                               dtype=object)
        for key, value in (options or {}).items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise UsageError(f"highs: bad option {key}={value!r}")
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self._h = h

    def __del__(self) -> None:
        # this model's Highs, emptied, for the next model of this thread (_reused_highs)
        h = getattr(self, "_h", None)
        if h is None:
            return
        try:
            if getattr(_FREE, "h", None) is None:
                h.clearModel()
                _FREE.h = h
        except Exception:  # noqa: BLE001 (interpreter shutting down: nothing to keep)
            pass

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        up = self._check_rows(upper)
        first = self.num_rows
        n = up.size
        if n:
            status = self._h.addRows(n, np.full(n, -self._hs.kHighsInf), up, 0,
                                     np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
                                     np.zeros(0))
            if status == self._hs.HighsStatus.kError:
                raise SolverError("highs: addRows failed")
            self._row_upper = np.concatenate([self._row_upper, up])
        return self._new_ids(first, n)

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        obj, starts, rows, vals, up = self._check_columns(obj, starts, rows, vals, upper)
        first, n = self._n_cols, obj.size
        if n:
            status = self._h.addCols(n, obj, np.zeros(n), up, rows.size,
                                     starts[:-1].astype(np.int32), rows.astype(np.int32), vals)
            if status == self._hs.HighsStatus.kError:
                raise SolverError("highs: addCols failed")
            self._n_cols += n
        return self._new_ids(first, n)

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        hs, h = self._hs, self._h
        t0 = time.perf_counter()
        trivial = self._trivial(t0)
        if trivial is not None:
            return trivial
        try:
            h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else INF)
            if self._simplex == "auto" and self._solved:
                # columns were added to a solved model: the old basis stays primal feasible
                h.setOptionValue("simplex_strategy", _SIMPLEX_STRATEGY["primal"])
            _run(h, hs, self._one_thread)
            self._solved = True
            ms = h.getModelStatus()
            info = h.getInfo()
            its = int(info.simplex_iteration_count)
            seconds = time.perf_counter() - t0
            text = h.modelStatusToString(ms)
            if ms == hs.HighsModelStatus.kOptimal:
                sol = h.getSolution()
                return LPResult("optimal", float(info.objective_function_value),
                                np.array(sol.col_value, dtype=np.float64),
                                np.array(sol.row_dual, dtype=np.float64), seconds, text, its)
            status = {hs.HighsModelStatus.kTimeLimit: "time_limit",
                      hs.HighsModelStatus.kInfeasible: "infeasible",
                      hs.HighsModelStatus.kUnbounded: "unbounded"}.get(ms, "error")
            if ms in (hs.HighsModelStatus.kUnboundedOrInfeasible, hs.HighsModelStatus.kInfeasible):
                status = self._infeasible_or_unbounded()
            return self._fail(status, text, seconds, its)
        except Exception as exc:  # a solver failure is data, not a crash
            return self._fail("error", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)

    def basis(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        if not self._solved:
            return None
        b = self._h.getBasis()
        if not b.valid:
            return None
        return (np.asarray(b.col_status, dtype=np.int8), np.asarray(b.row_status, dtype=np.int8))

    def set_basis(self, cols: np.ndarray, rows: np.ndarray) -> bool:
        """The next solve starts from this basis by the dual simplex. It is passed as *alien*:
        HiGHS makes it consistent (too many or too few basic entries, a singular basis
        matrix: logicals fill in)."""
        c = np.asarray(cols, dtype=np.int64).ravel()
        r = np.asarray(rows, dtype=np.int64).ravel()
        if c.size != self._n_cols or r.size != self.num_rows:
            raise UsageError(f"set_basis: {c.size} column and {r.size} row statuses for "
                             f"{self._n_cols} columns and {self.num_rows} rows")
        if (c.size and (c.min() < 0 or c.max() >= len(self._codes))) or \
                (r.size and (r.min() < 0 or r.max() >= len(self._codes))):
            raise UsageError("set_basis: a status outside 0..4")
        b = self._hs.HighsBasis()
        b.col_status = self._codes[c].tolist()  # (status objects picked in one step)
        b.row_status = self._codes[r].tolist()
        b.alien, b.valid = True, True  # (faster on the failures' LPs than a basis taken as
        # it is, 2 to 3x on Kdl's: HiGHS forms and factors it here, once)
        if self._h.setBasis(b) == self._hs.HighsStatus.kError:
            return False
        if self._simplex == "auto":  # neither primal nor dual feasible in general
            self._h.setOptionValue("simplex_strategy", _SIMPLEX_STRATEGY["dual"])
        self._solved = False  # the next solve is the first from this basis
        return True

    def write(self, path: str) -> None:
        self._suffix(path)
        if self._h.writeModel(str(path)) == self._hs.HighsStatus.kError:
            raise SolverError(f"highs: could not write the model to {path}")


_WHOLE = threading.local()


#: Per thread: ``h``, a Highs a finished HighsModel left, emptied (HighsModel.__del__), or None.
_FREE = threading.local()


def _reused_highs(highspy: Any) -> Any:
    """A ``Highs`` for a new :class:`HighsModel`: the one the last finished model of this
    thread left (its model cleared, its options back at HiGHS's defaults here), else a new one:
    a ``Highs()`` costs 60-65 us, a fifth of a small LP's whole solve, and the max-flow study
    makes one per LP (1,119 in the README's job)."""
    h = getattr(_FREE, "h", None)
    if h is not None:
        _FREE.h = None
        h.resetOptions()
        return h
    return _new_highs(highspy)


def _run(h: Any, hs: Any, one_thread: bool) -> None:
    """``h.run()``, on one thread unless the caller's options chose (``one_thread`` False).

    The models are solved by the simplex, which is serial; with HiGHS's default (a scheduler
    of half the cores) every run wakes its worker threads all the same, which costs ~240 us a
    run: a 1-row LP took 311 us against 73 us on one thread, a 60-row LP of the max-flow
    study's size 450 against ~250 us (2-core machine). The pivots are the same. HiGHS keeps one
    scheduler per process and refuses another thread count once one has started (when
    another user of highspy in this process ran it first): then it runs on that one."""
    if one_thread:
        h.setOptionValue("threads", 1)
    if (h.run() == hs.HighsStatus.kError and one_thread
            and h.getModelStatus() == hs.HighsModelStatus.kNotset):
        h.setOptionValue("threads", 0)  # the scheduler this process already runs
        h.run()


def _whole_highs(highspy: Any) -> Any:
    """This thread's ``Highs`` for :func:`solve_whole`, its options back at HiGHS's defaults:
    made once (35 us a ``Highs()``, 6 % of a 4-router minimum-MLU LP's whole call) and emptied
    after each solve."""
    h = getattr(_WHOLE, "h", None)
    if h is None:
        h = _WHOLE.h = _new_highs(highspy)
    h.resetOptions()
    return h


def solve_whole(cost: np.ndarray, col_lower: np.ndarray, starts: np.ndarray, index: np.ndarray,
                value: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray, *,
                options: Optional[Dict[str, Any]] = None) -> LPResult:
    """Minimise ``cost @ x`` subject to ``row_lower <= A x <= row_upper``, ``x >= col_lower``
    (no upper bounds; ``-inf`` row bounds allowed), ``A`` column-wise (``starts`` of length
    columns + 1, ``index``, ``value``), passed to HiGHS in one call and solved by its dual
    simplex (``options``: further HiGHS options, set verbatim; a bad one is a UsageError): no
    per-row or per-column Python. Unlike :class:`HighsModel` (maximisation, ``<=`` rows, duals
    ``>= 0``), :attr:`LPResult.duals` are HiGHS's own: ``d objective / d bound`` of each row
    (``<= 0`` on a tight upper bound). A solver failure is a status, never an exception."""
    import highspy

    hs = highspy
    t0 = time.perf_counter()
    m, n = len(row_lower), len(cost)
    h = _whole_highs(hs)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("random_seed", 0)
    for key, val in (options or {}).items():
        if h.setOptionValue(key, val) != hs.HighsStatus.kOk:
            raise UsageError(f"highs: bad option {key}={val!r}")
    lp = hs.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = np.asarray(col_lower, dtype=np.float64)
    lp.col_upper_ = np.full(n, hs.kHighsInf)
    lp.row_lower_ = np.maximum(np.asarray(row_lower, dtype=np.float64), -hs.kHighsInf)
    lp.row_upper_ = np.minimum(np.asarray(row_upper, dtype=np.float64), hs.kHighsInf)
    lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.asarray(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(value, dtype=np.float64)
    nan = float("nan")
    try:
        if h.passModel(lp) == hs.HighsStatus.kError:
            return LPResult("error", nan, np.full(n, nan), np.full(m, nan),
                            time.perf_counter() - t0, "highs: passModel failed")
        _run(h, hs, "threads" not in (options or {}))
        ms = h.getModelStatus()
        info = h.getInfo()
        its = int(info.simplex_iteration_count)
        text = h.modelStatusToString(ms)
        if ms == hs.HighsModelStatus.kOptimal:
            sol = h.getSolution()
            return LPResult("optimal", float(info.objective_function_value),
                            np.array(sol.col_value, dtype=np.float64),
                            np.array(sol.row_dual, dtype=np.float64),
                            time.perf_counter() - t0, text, its)
        status = {hs.HighsModelStatus.kInfeasible: "infeasible",
                  hs.HighsModelStatus.kUnbounded: "unbounded"}.get(ms, "error")
        return LPResult(status, nan, np.full(n, nan), np.full(m, nan),
                        time.perf_counter() - t0, text, its)
    except Exception as exc:  # a solver failure is data, not a crash
        return LPResult("error", nan, np.full(n, nan), np.full(m, nan),
                        time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
    finally:
        h.clearModel()  # the model's memory back now, not at the next solve

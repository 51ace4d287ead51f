"""Backend-neutral linear programs for column generation (study-method.md section 4).

Every study LP has the same shape, a **maximisation** over non-negative, optionally
bounded columns with ``<=`` rows::

    maximise    sum_j obj_j x_j
    subject to  sum_j a_ij x_j <= upper_i      for every row i
                0 <= x_j <= u_j                 (u_j = inf by default)

Rows (link capacities, per-pair demand bounds) are created first; columns (paths) are
added in batches as column generation discovers them, and the model is re-solved.

Dual sign convention (the same for every backend)
-------------------------------------------------
``LPResult.duals[i]`` is the shadow price ``y_i >= 0`` of row ``i``: the objective grows by
``y_i`` per unit of extra ``upper_i``.  At an optimum, up to the solver's tolerance,

- dual feasibility: ``obj_j - sum_i a_ij y_i <= 0`` for every column with ``u_j = inf``,
- complementary slackness: ``y_i > 0`` only on tight rows,
- strong duality (all ``u_j = inf``): ``sum_i upper_i y_i == objective``,

so a new column with objective ``c_p`` improves the LP iff ``c_p - sum_i a_ip y_i > 0``.
Tiny negative duals (``-1e-12``) are solver noise and are returned as they are.

Backends (chosen with ``make_model(solver)``):

- ``"highs"`` (default): highspy, one live model; dual simplex for the cold solve, warm-started
  primal simplex after adding columns (measured fastest on the study's LPs; see HighsModel).
- ``"glop"``: OR-Tools' GLOP simplex through ``pywraplp``, one live model.
- ``"pdlp"``: OR-Tools' first-order PDLP through ``pywraplp``; tolerances 1e-10 by default
  (relative agreement with simplex about 1e-9 on the test instances).
- ``"pulp"``: PuLP with CBC (``PULP_CBC_CMD``); the model is rebuilt for every solve.

``ortools`` and ``highspy`` both bundle HiGHS and cannot be loaded into one process (the
second import fails with an undefined symbol).  Nothing is imported by ``import tpcstudy.lp``;
each backend imports its package when a model is made, and :func:`make_model` runs the
backend in a child process (``isolate=True``) when the conflicting package is already loaded.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Protocol, Tuple, runtime_checkable

import numpy as np

from .errors import UsageError

__all__ = ["LPResult", "LPModel", "make_model", "SOLVERS", "STATUSES"]

#: Backend names accepted by :func:`make_model`.
SOLVERS: Tuple[str, ...] = ("highs", "glop", "pdlp", "pulp")
#: Every value :attr:`LPResult.status` can take.
STATUSES: Tuple[str, ...] = ("optimal", "time_limit", "infeasible", "unbounded", "error")

_INF = float("inf")


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


# ----------------------------------------------------------------------------- shared code
class _ModelBase:
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
            col = np.repeat(np.arange(n, dtype=np.int64), np.diff(starts))
            if np.unique(col * max(self.num_rows, 1) + rows).size != rows.size:
                raise UsageError("add_columns: a column lists the same row twice")
        if upper is None:
            up = np.full(n, _INF)
        else:
            up = np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,)).copy()
            if np.isnan(up).any() or (up < 0).any():
                raise UsageError("add_columns: column upper bounds must be >= 0")
        return obj, starts, rows, vals, up

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


# ----------------------------------------------------------------------------- HiGHS
_SIMPLEX_STRATEGY = {"dual": 1, "primal": 4, "auto": 1}


class HighsModel(_ModelBase):
    """The HiGHS backend: one live ``highspy.Highs`` model, warm-started re-solves.

    Parameters
    ----------
    simplex
        ``"auto"`` (default: dual simplex for the first, cold solve, primal simplex for the
        warm re-solves after columns are added, whose old basis stays primal feasible),
        ``"dual"`` or ``"primal"``. On the max-flow study (see tpcstudy.maxflow) auto was the
        fastest everywhere: REPETITA Cogentco with its 38,612 demand-bounded pairs, sr k=4, LP
        4.9 s (primal 7.3 s, dual 282 s); Zoo Kdl 10 % heavy pairs, sr k=4, LP 1.65 s (primal
        5.5 s, dual 1.7 s).
        Earlier synthetic measurements (``python -m tpcstudy.lp``):  Measured with ``python -m tpcstudy.lp``
        (2-segment column generation, random graphs of 150-400 nodes): primal is up to 2x
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
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", _SIMPLEX_STRATEGY[simplex])
        h.setOptionValue("random_seed", 0)
        self._simplex = simplex
        self._solved = False
        for key, value in (options or {}).items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise UsageError(f"highs: bad option {key}={value!r}")
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self._h = h

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        up = self._check_rows(upper)
        first = self.num_rows
        n = up.size
        if n:
            status = self._h.addRows(n, np.full(n, -self._hs.kHighsInf), up, 0,
                                     np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
                                     np.zeros(0))
            if status == self._hs.HighsStatus.kError:
                raise UsageError("highs: addRows failed")
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
                raise UsageError("highs: addCols failed")
            self._n_cols += n
        return self._new_ids(first, n)

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        hs, h = self._hs, self._h
        t0 = time.perf_counter()
        trivial = self._trivial(t0)
        if trivial is not None:
            return trivial
        try:
            h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else _INF)
            if self._simplex == "auto" and self._solved:
                # columns were added to a solved model: the old basis stays primal feasible
                h.setOptionValue("simplex_strategy", _SIMPLEX_STRATEGY["primal"])
            h.run()
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

    def write(self, path: str) -> None:
        self._suffix(path)
        if self._h.writeModel(str(path)) == self._hs.HighsStatus.kError:
            raise OSError(f"highs: could not write {path}")


# ----------------------------------------------------------------------------- OR-Tools
class OrtoolsModel(_ModelBase):
    """The OR-Tools backends (GLOP simplex, PDLP first-order) through ``pywraplp``.

    Parameters
    ----------
    algorithm
        ``"glop"`` or ``"pdlp"``.
    tolerance
        PDLP's relative and absolute optimality tolerance (ignored by GLOP).
    threads
        PDLP worker threads.
    """

    def __init__(self, algorithm: str = "glop", *, tolerance: float = 1e-10, threads: int = 1) -> None:
        super().__init__()
        algorithm = algorithm.lower()
        if algorithm not in ("glop", "pdlp"):
            raise UsageError(f"ortools: algorithm must be 'glop' or 'pdlp', got {algorithm!r}")
        from ortools.linear_solver import pywraplp  # lazy: see the module docstring

        self.name = algorithm
        self._lp = pywraplp
        solver = pywraplp.Solver.CreateSolver(algorithm.upper())
        if solver is None:
            raise UsageError(f"ortools: solver {algorithm.upper()} is not available in this build")
        solver.SuppressOutput()
        if algorithm == "pdlp":
            solver.SetNumThreads(int(threads))
            params = ("termination_criteria { simple_optimality_criteria { "
                      f"eps_optimal_absolute: {tolerance!r} eps_optimal_relative: {tolerance!r} }} }} "
                      f"num_threads: {int(threads)}")
            if not solver.SetSolverSpecificParametersAsString(params):
                raise UsageError(f"pdlp: parameters rejected: {params}")
        self._s = solver
        self._obj = solver.Objective()
        self._obj.SetMaximization()
        self._cons: list = []
        self._vars: list = []

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        up = self._check_rows(upper)
        first = self.num_rows
        inf = self._s.infinity()
        for i, u in enumerate(up.tolist(), start=first):
            self._cons.append(self._s.Constraint(-inf, u if u < _INF else inf, f"r{i}"))
        self._row_upper = np.concatenate([self._row_upper, up])
        return self._new_ids(first, up.size)

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        obj, starts, rows, vals, up = self._check_columns(obj, starts, rows, vals, upper)
        first, n = self._n_cols, obj.size
        inf = self._s.infinity()
        cons, rl, vl, sl = self._cons, rows.tolist(), vals.tolist(), starts.tolist()
        for k in range(n):
            j = first + k
            u = float(up[k])
            var = self._s.NumVar(0.0, u if u < _INF else inf, f"x{j}")
            self._obj.SetCoefficient(var, float(obj[k]))
            for e in range(sl[k], sl[k + 1]):
                cons[rl[e]].SetCoefficient(var, vl[e])
            self._vars.append(var)
        self._n_cols += n
        return self._new_ids(first, n)

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        lp, s = self._lp, self._s
        t0 = time.perf_counter()
        trivial = self._trivial(t0)
        if trivial is not None:
            return trivial
        try:
            if time_limit is not None:
                s.SetTimeLimit(max(1, int(round(float(time_limit) * 1000))))
            else:
                s.SetTimeLimit(0)  # 0 = no limit
            code = s.Solve()
            seconds = time.perf_counter() - t0
            its = int(s.iterations())
            if code == lp.Solver.OPTIMAL:
                x = np.array([v.solution_value() for v in self._vars], dtype=np.float64)
                y = np.array([c.dual_value() for c in self._cons], dtype=np.float64)
                return LPResult("optimal", float(self._obj.Value()), x, y, seconds, "OPTIMAL", its)
            names = {lp.Solver.FEASIBLE: "FEASIBLE", lp.Solver.INFEASIBLE: "INFEASIBLE",
                     lp.Solver.UNBOUNDED: "UNBOUNDED", lp.Solver.ABNORMAL: "ABNORMAL",
                     lp.Solver.NOT_SOLVED: "NOT_SOLVED"}
            text = names.get(code, f"status {code}")
            if code == lp.Solver.INFEASIBLE:  # GLOP says so for "infeasible or unbounded" too
                status = self._infeasible_or_unbounded()
            elif code == lp.Solver.UNBOUNDED:
                status = "unbounded"
            elif time_limit is not None and seconds >= 0.9 * float(time_limit):
                status = "time_limit"
            else:
                status = "error"
            return self._fail(status, text, seconds, its)
        except Exception as exc:
            return self._fail("error", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)

    def write(self, path: str) -> None:
        suffix = self._suffix(path)
        if suffix == ".lp":
            text = self._s.ExportModelAsLpFormat(False)
        else:
            text = self._s.ExportModelAsMpsFormat(False, False)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


# ----------------------------------------------------------------------------- PuLP
def _import_pulp() -> Any:
    """Import PuLP without letting it load highspy (which would lock ortools out)."""
    if "pulp" in sys.modules or "highspy" in sys.modules:
        import pulp
        return pulp
    sys.modules["highspy"] = None  # type: ignore[assignment]  # makes `import highspy` fail
    try:
        import pulp
    finally:
        del sys.modules["highspy"]
    return pulp


class PulpModel(_ModelBase):
    """The PuLP backend: arrays kept here, a fresh ``LpProblem`` built for every solve.

    Parameters
    ----------
    threads
        Passed to CBC.
    """

    name = "pulp"

    def __init__(self, *, threads: Optional[int] = None) -> None:
        super().__init__()
        self._pulp = _import_pulp()
        self._threads = threads
        self._obj = np.zeros(0)
        self._col_upper = np.zeros(0)
        self._cols: list = []  # (rows, vals) per column

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        up = self._check_rows(upper)
        first = self.num_rows
        self._row_upper = np.concatenate([self._row_upper, up])
        return self._new_ids(first, up.size)

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        obj, starts, rows, vals, up = self._check_columns(obj, starts, rows, vals, upper)
        first, n = self._n_cols, obj.size
        for k in range(n):
            sl = slice(starts[k], starts[k + 1])
            self._cols.append((rows[sl].copy(), vals[sl].copy()))
        self._obj = np.concatenate([self._obj, obj])
        self._col_upper = np.concatenate([self._col_upper, up])
        self._n_cols += n
        return self._new_ids(first, n)

    def _build(self) -> Tuple[Any, list, list]:
        pulp = self._pulp
        prob = pulp.LpProblem("tpcstudy", pulp.LpMaximize)
        xs = [pulp.LpVariable(f"x{j}", lowBound=0,
                              upBound=None if not np.isfinite(u) else float(u))
              for j, u in enumerate(self._col_upper.tolist())]
        prob.setObjective(pulp.LpAffineExpression(list(zip(xs, self._obj.tolist()))))
        by_row: list = [[] for _ in range(self.num_rows)]
        for j, (r, v) in enumerate(self._cols):
            for i, a in zip(r.tolist(), v.tolist()):
                by_row[i].append((xs[j], a))
        cons: list = [None] * self.num_rows
        for i, terms in enumerate(by_row):
            u = float(self._row_upper[i])
            if terms and u < _INF:
                c = pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintLE,
                                      f"r{i}", u)
                prob.addConstraint(c, f"r{i}")
                cons[i] = c
        return prob, xs, cons

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        pulp = self._pulp
        t0 = time.perf_counter()
        try:
            used = np.zeros(self.num_rows, dtype=bool)
            for r, _ in self._cols:
                used[r] = True
            empty_bad = np.flatnonzero(~used & (self._row_upper < 0))
            if empty_bad.size:  # PuLP drops empty rows, so check them here
                return self._fail("infeasible", f"row {int(empty_bad[0])} is empty with upper < 0",
                                  time.perf_counter() - t0)
            trivial = self._trivial(t0)
            if trivial is not None:
                return trivial
            prob, xs, cons = self._build()
            kwargs: Dict[str, Any] = {"msg": False}
            if time_limit is not None:
                kwargs["timeLimit"] = float(time_limit)
            if self._threads:
                kwargs["threads"] = int(self._threads)
            code = prob.solve(pulp.PULP_CBC_CMD(**kwargs))
            seconds = time.perf_counter() - t0
            text = pulp.LpStatus.get(code, str(code))
            if code == pulp.LpStatusOptimal and prob.sol_status in (pulp.LpSolutionOptimal,):
                x = np.array([v.varValue or 0.0 for v in xs], dtype=np.float64)
                y = np.array([0.0 if c is None else float(c.pi or 0.0) for c in cons])
                obj = float(np.dot(self._obj, x))
                return LPResult("optimal", obj, x, y, seconds, text)
            if code == pulp.LpStatusInfeasible:
                status = self._infeasible_or_unbounded()
            elif code == pulp.LpStatusUnbounded:
                status = "unbounded"
            elif time_limit is not None and seconds >= 0.9 * float(time_limit):
                status = "time_limit"
            else:
                status = "error"
            return self._fail(status, f"{text} (solution status {prob.sol_status})", seconds)
        except Exception as exc:
            return self._fail("error", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)

    def write(self, path: str) -> None:
        suffix = self._suffix(path)
        prob, _, _ = self._build()
        if suffix == ".lp":
            prob.writeLP(str(path))
        else:
            prob.writeMPS(str(path))


# ----------------------------------------------------------------------------- isolation
def _serve(conn: Any, solver: str, options: Dict[str, Any]) -> None:
    """Child-process loop of :class:`_IsolatedModel`: apply each call to a local model."""
    try:
        model: Any = make_model(solver, isolate=False, **options)
        conn.send((True, None))
    except BaseException as exc:  # report why the backend could not start
        conn.send((False, exc))
        return
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        name, args = msg
        try:
            conn.send((True, getattr(model, name)(*args)))
        except BaseException as exc:
            conn.send((False, exc))


class _IsolatedModel:
    """An :class:`LPModel` whose backend lives in a child process (spawned, so clean).

    Used for a backend whose package cannot be loaded next to one already imported
    (``ortools`` next to ``highspy``).  Only the row/column increments cross the pipe, so
    the child keeps one live model and still warm starts.
    """

    def __init__(self, solver: str, options: Dict[str, Any]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.name = solver
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, solver, options), daemon=True,
                                 name=f"tpcstudy-lp-{solver}")
        self._proc.start()
        child.close()
        ok, err = self._conn.recv()
        if not ok:
            self.close()
            raise err
        self._rows = 0
        self._cols = 0

    @property
    def num_rows(self) -> int:
        return self._rows

    @property
    def num_cols(self) -> int:
        return self._cols

    def _call(self, name: str, *args: Any) -> Any:
        self._conn.send((name, args))
        ok, value = self._conn.recv()
        if not ok:
            raise value
        return value

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        ids = self._call("add_rows", np.asarray(upper))
        self._rows += len(ids)
        return ids

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        ids = self._call("add_columns", obj, starts, rows, vals, upper)
        self._cols += len(ids)
        return ids

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        t0 = time.perf_counter()
        try:
            return self._call("solve", time_limit)
        except Exception as exc:  # the child died (crash in the solver, killed, ...)
            return LPResult("error", float("nan"), np.full(self._cols, np.nan),
                            np.full(self._rows, np.nan), time.perf_counter() - t0,
                            f"isolated {self.name} process failed: {type(exc).__name__}: {exc}")

    def write(self, path: str) -> None:
        self._call("write", os.path.abspath(str(path)))

    def close(self) -> None:
        """Stop the child process (also done when the model is garbage-collected)."""
        try:
            self._conn.send(None)
        except Exception:
            pass
        self._proc.join(timeout=2)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()

    def __del__(self) -> None:
        try:
            if self._proc.is_alive():
                self.close()
        except Exception:
            pass


def _conflicts(solver: str) -> bool:
    """Would loading ``solver``'s package now fail because of an already loaded one?"""
    if solver in ("glop", "pdlp"):
        return "highspy" in sys.modules and sys.modules["highspy"] is not None
    if solver == "highs":
        return any(m == "ortools" or m.startswith("ortools.") for m in sys.modules)
    return False


def make_model(solver: str = "highs", *, isolate: Optional[bool] = None, **options: Any) -> LPModel:
    """Create an empty maximisation LP on one backend.

    Parameters
    ----------
    solver
        One of :data:`SOLVERS`: ``"highs"`` (default), ``"glop"``, ``"pdlp"``, ``"pulp"``.
    isolate
        Run the backend in a child process.  ``None`` (default) does so only when its package
        cannot be loaded in this process (``ortools`` with ``highspy`` already imported, or the
        reverse).
    **options
        Backend options: ``simplex="auto"|"dual"|"primal"`` and ``options={...}`` (HiGHS);
        ``tolerance=1e-10``, ``threads=1`` (PDLP); ``threads`` (PuLP/CBC).

    Returns
    -------
    LPModel
        An empty model; add rows, then columns, then :meth:`~LPModel.solve`.

    Raises
    ------
    UsageError
        Unknown ``solver`` or option.
    ImportError
        The backend's package is not installed (``pip install tpcstudy[solvers]``).
    """
    key = str(solver).lower()
    if key not in SOLVERS:
        raise UsageError(f"unknown LP solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    if isolate is None:
        isolate = _conflicts(key)
    if isolate:
        return _IsolatedModel(key, options)  # type: ignore[return-value]
    try:
        if key == "highs":
            return HighsModel(**options)
        if key in ("glop", "pdlp"):
            return OrtoolsModel(key, **options)
        return PulpModel(**options)
    except TypeError as exc:
        raise UsageError(f"{key}: bad option ({exc})") from exc


# ----------------------------------------------------------------------------- benchmark
@dataclass
class CGInstance:
    """A column-generation test instance: 2-segment SR paths on a random graph.

    ``arc_cap[l]`` are the row uppers; ``path_arcs(u, v)`` the arcs of the shortest
    ``u -> v`` path; pairs ``(s, t)`` are priced over ``s -> w -> t`` for every ``w``.
    """

    n: int
    arc_cap: np.ndarray
    sp_offsets: np.ndarray  # CSR over u * n + v
    sp_arcs: np.ndarray
    pairs: np.ndarray  # (P, 2)
    extra: Dict[str, Any] = field(default_factory=dict)

    def path_arcs(self, u: int, v: int) -> np.ndarray:
        k = u * self.n + v
        return self.sp_arcs[self.sp_offsets[k]:self.sp_offsets[k + 1]]


def cg_instance(n: int = 60, degree: int = 4, pair_fraction: float = 0.3,
                seed: int = 0) -> CGInstance:
    """Build a reproducible :class:`CGInstance` (a connected random graph, hop shortest paths).

    Parameters
    ----------
    n, degree
        Nodes and (approximate) degree of a connected Watts-Strogatz graph.
    pair_fraction
        Fraction of the ``n (n - 1)`` ordered pairs used as commodities.
    seed
        Seed of the graph, the capacities and the pairs.
    """
    import networkx as nx

    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(n, degree, 0.3, seed=seed)
    arcs = sorted(g.edges()) + sorted((v, u) for u, v in g.edges())
    arc_id = {a: i for i, a in enumerate(arcs)}
    cap = rng.choice([1.0, 2.5, 10.0], size=len(arcs))
    offsets = [0]
    flat: list = []
    for u in range(n):
        pred = nx.predecessor(g, u)
        for v in range(n):
            path = []
            w = v
            while w != u and pred[w]:
                p = min(pred[w])  # deterministic tie-break
                path.append(arc_id[(p, w)])
                w = p
            flat.extend(reversed(path))
            offsets.append(len(flat))
    all_pairs = np.array([(s, t) for s in range(n) for t in range(n) if s != t])
    m = max(1, int(np.ceil(pair_fraction * len(all_pairs))))
    pairs = all_pairs[np.sort(rng.choice(len(all_pairs), m, replace=False))]
    return CGInstance(n, cap, np.array(offsets, dtype=np.int64), np.array(flat, dtype=np.int64),
                      pairs)


def column_generation(inst: CGInstance, model: LPModel, *, batch: int = 1,
                      max_rounds: int = 1000) -> Dict[str, Any]:
    """Solve the max-flow LP of ``inst`` over 2-segment SR paths by column generation.

    A path ``s -> w -> t`` uses arc ``l`` ``r(l, p)`` times (0, 1 or 2), so its reduced cost
    ``1 - cost[s, w] - cost[w, t]`` is exact and the result is the LP optimum over all
    2-segment paths (a backend-independent number).

    Returns a dict with ``objective``, ``rounds``, ``columns``, ``solve_seconds`` (sum over
    the solves; ``first_seconds`` + ``resolve_seconds``) and ``status``.  ``batch`` columns are added per improving pair and round.
    """
    n = inst.n
    off, arcs = inst.sp_offsets, inst.sp_arcs
    model.add_rows(inst.arc_cap)

    def add(paths: list) -> None:
        cols = [np.unique(np.concatenate([inst.path_arcs(s, w), inst.path_arcs(w, t)]),
                          return_counts=True) for s, w, t in paths]
        starts = np.concatenate([[0], np.cumsum([r.size for r, _ in cols])])
        model.add_columns(np.ones(len(cols)), starts, np.concatenate([r for r, _ in cols]),
                          np.concatenate([c for _, c in cols]).astype(np.float64))

    add([(s, s, t) for s, t in inst.pairs])
    rounds = 0
    res = model.solve()
    times = [res.seconds]
    lens = np.diff(off)
    while res.ok and rounds < max_rounds:
        rounds += 1
        y = res.duals
        # cost[u, v] = sum of duals over the (unique-arc) shortest path u -> v
        seg = np.zeros(off.size - 1)
        nz = lens > 0
        seg[nz] = np.add.reduceat(y[arcs], off[:-1][nz])
        cost = seg.reshape(n, n)
        new = []
        for s, t in inst.pairs:
            via = cost[s, :] + cost[:, t]  # exact: r(l, p) counts repeated arcs
            for w in np.argsort(via, kind="stable")[:batch]:
                if via[w] < 1 - 1e-9:
                    new.append((int(s), int(w), int(t)))
        if not new:
            break
        add(new)
        res = model.solve()
        times.append(res.seconds)
    return {"objective": res.objective, "status": res.status, "rounds": rounds,
            "columns": model.num_cols, "solve_seconds": float(sum(times)),
            "first_seconds": times[0], "resolve_seconds": float(sum(times[1:]))}


def _main() -> None:  # pragma: no cover - a measurement, not a test
    import argparse

    ap = argparse.ArgumentParser(description="Time HiGHS primal vs dual simplex on column generation.")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--pairs", type=float, default=0.3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--solvers", default="highs-primal,highs-dual")
    a = ap.parse_args()
    for seed in range(a.seeds):
        inst = cg_instance(a.n, pair_fraction=a.pairs, seed=seed)
        for spec in a.solvers.split(","):
            solver, _, simplex = spec.partition("-")
            opts = {"simplex": simplex} if simplex else {}
            t0 = time.perf_counter()
            out = column_generation(inst, make_model(solver, **opts), batch=a.batch)
            print(f"seed={seed} n={a.n} arcs={inst.arc_cap.size} pairs={len(inst.pairs)} {spec:13s} "
                  f"obj={out['objective']:.9g} rounds={out['rounds']} cols={out['columns']} "
                  f"lp={out['solve_seconds']:.3f}s (first {out['first_seconds']:.3f}s, "
                  f"re-solves {out['resolve_seconds']:.3f}s) total={time.perf_counter() - t0:.2f}s",
                  flush=True)


if __name__ == "__main__":  # pragma: no cover
    _main()

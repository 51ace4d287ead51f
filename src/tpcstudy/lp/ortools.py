"""The OR-Tools backends (GLOP simplex, PDLP first-order) through ``pywraplp``."""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from ..errors import SolverError, UsageError
from .base import INF, LPResult, ModelBase

__all__ = ["OrtoolsModel"]


class OrtoolsModel(ModelBase):
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
            raise SolverError(f"ortools: solver {algorithm.upper()} is not available in this build")
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
            self._cons.append(self._s.Constraint(-inf, u if u < INF else inf, f"r{i}"))
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
            var = self._s.NumVar(0.0, u if u < INF else inf, f"x{j}")
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

"""The PuLP backend (CBC): arrays kept here, a fresh ``LpProblem`` built for every solve."""

from __future__ import annotations

import sys
import time
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .base import INF, LPResult, ModelBase

__all__ = ["PulpModel"]


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


class PulpModel(ModelBase):
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
            if terms and u < INF:
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

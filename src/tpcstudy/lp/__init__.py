"""Backend-neutral linear programs for column generation (docs/method.md §4).

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

Modules: :mod:`~tpcstudy.lp.base` (the result, the model protocol, input checks),
:mod:`~tpcstudy.lp.highs`, :mod:`~tpcstudy.lp.ortools`, :mod:`~tpcstudy.lp.pulp` (one backend
each), :mod:`~tpcstudy.lp.isolated` (a backend in a child process).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Tuple

from ..errors import UsageError
from .base import BASIS_CODES, STATUSES, LPModel, LPResult
from .highs import HighsModel, solve_whole
from .isolated import IsolatedModel
from .ortools import OrtoolsModel
from .pulp import PulpModel

__all__ = ["LPResult", "LPModel", "make_model", "SOLVERS", "STATUSES", "BASIS_CODES", "solve_whole",
           "in_process"]

#: Backend names accepted by :func:`make_model`.
SOLVERS: Tuple[str, ...] = ("highs", "glop", "pdlp", "pulp")


def _conflicts(solver: str) -> bool:
    """Would loading ``solver``'s package now fail because of an already loaded one?"""
    if solver in ("glop", "pdlp"):
        return "highspy" in sys.modules and sys.modules["highspy"] is not None
    if solver == "highs":  # importing any ortools.X imports the package ortools first
        return "ortools" in sys.modules
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
        return IsolatedModel(key, options, _local_model)
    return _local_model(key, options)


def _local_model(key: str, options: Dict[str, Any]) -> LPModel:
    """A model of backend ``key`` in this process (also what an isolated child runs)."""
    try:
        if key == "highs":
            return HighsModel(**options)
        if key in ("glop", "pdlp"):
            return OrtoolsModel(key, **options)
        return PulpModel(**options)
    except TypeError as exc:
        raise UsageError(f"{key}: bad option ({exc})") from exc


def in_process(solver: str) -> bool:
    """Can ``solver``'s package be used in this process (no conflicting package loaded)?"""
    return not _conflicts(str(solver).lower())

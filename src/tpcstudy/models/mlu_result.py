"""The answer of :func:`tpcstudy.models.mlu.min_mlu` (docs/method.md §4b): the
:class:`MLUResult` dataclass and the routing types, shared by the LP's two routes (the path
column generation of :mod:`.mlu`, the whole arc LP of :mod:`.mlu_arc`) and by
:mod:`.unsplit`."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

__all__ = ["MLUResult", "LazyMLUResult", "Path", "Routing", "make_result", "utilisation_of"]

#: A path's routers: (source, waypoints..., target) for sr and ecmp, every router for
#: multipath and mcf.
Path = Tuple[int, ...]
#: Per demand, its paths with the traffic each carries.
Routing = List[List[Tuple[Path, float]]]


def _empty_ids() -> np.ndarray:
    return np.zeros(0, dtype=np.int32)


@dataclasses.dataclass
class MLUResult:
    """The minimum MLU of one model on one demand matrix, with the routing that reaches it.

    Attributes
    ----------
    model, k
        The model and its segment limit (``sr``; else ``None``).
    mlu
        The maximum link utilisation of the best routing (``inf``: a demand cannot be routed).
        For the LP models, the LP optimum (``utilisation.max()`` equals it to the solver's
        tolerance).
    lam
        ``1 / mlu``: the largest factor the matrix can grow by.
    loads
        Per directed arc, the traffic of the best routing (in the demands' unit): what
        :attr:`paths` put on it.
    utilisation
        ``loads / capacity`` per arc.
    demands
        Demands routed (zero volumes and self-demands left out).
    columns, iterations, seconds
        Columns in the final LP (the key columns included), column-generation rounds,
        wall-clock time.
    sources, targets, volumes
        The demands routed, as :func:`demand_arrays` gives them (router ids, volumes).
    paths
        Per demand ``i`` (the order of :attr:`sources`), the paths carrying it and their
        traffic: ``paths[i] = [(path, flow), ...]`` with ``path`` a tuple of router ids
        (:data:`Path`: sr and ecmp, the source, the waypoints and the target, each segment
        split by ECMP; multipath and mcf, every router of a simple path) and ``flow`` the
        traffic of the matrix itself (not scaled by ``lam``); the flows of a demand sum to its
        volume (to 1e-9 relative), the largest first. Empty when the matrix is unroutable.
        Under ``--links multigraph`` a router sequence of mcf or multipath does not say which
        of parallel links it takes (its traffic is in :attr:`loads`).
    arc_prices, demand_prices
        The LP models' optimality certificate (empty for ecmp): the final duals ``y_a >= 0``
        per arc (in 1 / the capacities' unit, ``sum_a capacity_a y_a = 1``) and ``z_d`` per
        demand, with ``z_d`` at most the price ``sum_a r_p(a) y_a`` of every column ``p`` of
        the model for ``d`` and ``mlu = sum_d volume_d z_d`` (LP duality): ``z_d`` is how much
        the MLU grows per unit more of demand ``d``, to first order.
    rows, lp_seconds
        Rows of the final LP; seconds spent in the LP solver.
    bound
        A lower bound on the MLU of any routing of the model's kind, where one is computed
        (``sr-unsplit``: :func:`tpcstudy.models.unsplit.sr_unsplit`); else ``nan``.
    """

    model: str
    k: Optional[int]
    mlu: float
    lam: float
    loads: np.ndarray
    utilisation: np.ndarray
    demands: int
    columns: int = 0
    iterations: int = 0
    seconds: float = 0.0
    sources: np.ndarray = dataclasses.field(default_factory=_empty_ids)
    targets: np.ndarray = dataclasses.field(default_factory=_empty_ids)
    volumes: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    paths: Routing = dataclasses.field(default_factory=list)
    arc_prices: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    demand_prices: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    rows: int = 0
    lp_seconds: float = 0.0
    bound: float = math.nan


class LazyMLUResult(MLUResult):
    """An :class:`MLUResult` whose :attr:`~MLUResult.paths` are computed when first read, not
    when solved (by ``make_paths()``: the arc LP's flows decomposed into paths), and with them
    the :attr:`~MLUResult.loads` and :attr:`~MLUResult.utilisation` the paths give (the LP's
    arc flows until then; they differ only by flow on cycles, which carry nothing): callers
    that need only the MLU or the prices never pay for the decomposition."""

    make_paths: Optional[Callable[[], Tuple[Routing, np.ndarray, np.ndarray]]] = None
    _routing: Routing
    _loads: np.ndarray
    _util: np.ndarray

    def _settle(self) -> None:
        make = self.make_paths
        if make is not None:
            self.make_paths = None
            self._routing, self._loads, self._util = make()

    @property
    def paths(self) -> Routing:
        self._settle()
        return self._routing

    @paths.setter
    def paths(self, value: Routing) -> None:
        self._routing = value

    @property
    def loads(self) -> np.ndarray:
        self._settle()
        return self._loads

    @loads.setter
    def loads(self, value: np.ndarray) -> None:
        self._loads = value

    @property
    def utilisation(self) -> np.ndarray:
        self._settle()
        return self._util

    @utilisation.setter
    def utilisation(self, value: np.ndarray) -> None:
        self._util = value


def utilisation_of(load: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``load / cap`` per arc (``inf`` on a loaded arc of capacity 0, 0 on an empty one)."""
    util = np.divide(load, cap, out=np.full_like(load, np.inf), where=cap > 0)
    util[(load <= 0) & (cap <= 0)] = 0.0
    return util


def make_result(model: str, k: Optional[int], load: np.ndarray, cap: np.ndarray, demands: int,
                cls: type = MLUResult, **kw: Any) -> MLUResult:
    """The result of routing ``load`` (per arc) on capacities ``cap``: its utilisation and MLU
    (a ``cls``, :class:`MLUResult` or :class:`LazyMLUResult`)."""
    util = utilisation_of(load, cap)
    mlu = float(util.max()) if len(util) else 0.0
    out: MLUResult = cls(model=model, k=k, mlu=mlu, lam=1.0 / mlu if mlu > 0 else math.inf,
              loads=load, utilisation=util, demands=demands, **kw)
    return out

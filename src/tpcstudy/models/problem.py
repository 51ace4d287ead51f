"""What every max-flow model shares: the problem being solved, its clock, the result, and the
LP plumbing (capacity and demand rows, columns in CSC form, writing the model)."""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UsageError
from ..lp import LPModel, LPResult, make_model
from ..topology import Topology

__all__ = ["MaxFlowResult", "Problem", "Clock", "Column", "csc", "demand_bounds"]

#: A column of the LP: the arcs it uses and how much of it crosses each (``r(l, p)``).
Column = Tuple[np.ndarray, np.ndarray]


@dataclasses.dataclass
class MaxFlowResult:
    """The outcome of :func:`tpcstudy.max_flow`.

    Attributes
    ----------
    value
        Optimal total flow (``nan`` when the LP failed; see ``status``).
    model, k
        The model and its segment limit (``k`` is 1 for ecmp, ``None`` for multipath/mcf).
    pairs
        The (source, target) router names, in the order given.
    paths
        The columns of the final LP: for ``ecmp``/``sr`` node-name tuples ``(s, w1, ..., t)``
        (the sr-path's waypoint sequence), for ``mcf`` and ``multipath`` concrete router paths.
    flows
        Flow on each path (same order as ``paths``).
    pair_flow
        Total flow of each pair (same order as ``pairs``).
    iterations
        LP solves (column-generation rounds; 1 for ecmp and multipath).
    columns
        Columns in the final LP.
    gap
        Final pricing gap: ``min(price) - (1 - pair dual)`` over pairs, >= ``-1e-9`` at optimality
        (``nan`` where not applicable).
    status
        ``"optimal"`` or the LP's failure status (``"time_limit"``, ``"error"``, ...).
    seconds
        Wall time split: ``paths`` (DAGs, ratios), ``pricing`` (segment costs and DP), ``lp``.
    path_pair
        Index (into ``pairs``) of the pair each path belongs to (same order as ``paths``).
    subflows
        The subflows per pair of ``mptcp`` and ``sr+mptcp`` (``None`` for the other models).
    """

    value: float
    model: str
    k: Optional[int]
    pairs: List[Tuple[str, str]]
    paths: List[Tuple[str, ...]]
    flows: np.ndarray
    pair_flow: np.ndarray
    iterations: int
    columns: int
    gap: float
    status: str
    message: str = ""
    seconds: Dict[str, float] = dataclasses.field(default_factory=dict)
    solver: str = "highs"
    path_pair: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    subflows: Optional[int] = None
    #: The columns as the model keys them (same order as ``paths``): an sr-path's router ids
    #: ``(s, w1, ..., t)``, a concrete path's arc ids; ``None`` where no column generation ran
    keys: Optional[Sequence[Any]] = None
    #: With ``keep_state``: the finished column generation (a
    #: :class:`~tpcstudy.models.colgen.Snapshot`: its columns, their arc usage and the final
    #: basis) to start a similar LP from, e.g. after a failure
    #: (:func:`tpcstudy.models.maxflow.max_flow_after`); ``None`` otherwise.
    state: Optional[Any] = None
    #: The final LP's duals ``(y, z)``: each arc's capacity price and each pair's demand price
    #: (zeros without demand bounds), ``>= 0``, in the LP's units (capacities over
    #: ``capacity_scale``); no pair has a column of this model priced below ``1 - z`` by ``y``
    #: (the optimality certificate). ``None`` where no column generation ran.
    duals: Optional[Tuple[np.ndarray, np.ndarray]] = None

    def used_paths(self, eps: float = 1e-9) -> np.ndarray:
        """Number of paths carrying more than ``eps`` flow, per pair."""
        used = np.asarray(self.flows) > eps
        return np.bincount(self.path_pair[used], minlength=len(self.pairs))

    @property
    def ok(self) -> bool:
        return self.status == "optimal"


class Clock:
    """Wall time spent in paths, pricing and LP solves."""

    def __init__(self) -> None:
        self.t: Dict[str, float] = {"paths": 0.0, "pricing": 0.0, "lp": 0.0}

    def add(self, key: str, since: float) -> float:
        now = time.perf_counter()
        self.t[key] += now - since
        return now


def demand_bounds(demands: Optional[object], n_pairs: int) -> Optional[np.ndarray]:
    """The per-pair demand bounds as float64, checked (``None``: no demand rows)."""
    if demands is None:
        return None
    d = np.asarray(demands, dtype=np.float64).reshape(-1)
    if d.shape != (n_pairs,):
        raise UsageError(f"demands: need one bound per pair ({n_pairs}), got {d.shape[0]}")
    if np.any(d < 0) or np.any(np.isnan(d)):
        raise UsageError("demands must be >= 0")
    return d


def csc(cols: List[Column]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns as CSC arrays ``(starts, rows, vals)``."""
    starts = np.zeros(len(cols) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(c[0]) for c in cols])
    rows = np.concatenate([c[0] for c in cols]) if cols else np.zeros(0, dtype=np.int64)
    vals = np.concatenate([c[1] for c in cols]) if cols else np.zeros(0)
    return starts, rows.astype(np.int64), vals.astype(np.float64)


@dataclasses.dataclass
class Problem:
    """One :func:`tpcstudy.max_flow` call: the pairs, the LP settings and the clock.

    Rows of every model's LP: one capacity row per directed arc (``m2 = 2 * num_links``), then,
    with demands, one row per pair (row ``m2 + i`` bounds pair ``i``).
    """

    topo: Topology
    S: np.ndarray
    T: np.ndarray
    names: List[Tuple[str, str]]
    solver: str
    demands: Optional[np.ndarray]
    time_limit: Optional[float]
    write_lp: Optional[str]
    max_iterations: int
    clock: Clock = dataclasses.field(default_factory=Clock)
    #: Capacities and demands are divided by this before any LP is built (and the results
    #: multiplied back): HiGHS's tolerances are absolute, so a Tbit/s or a 1e-9 unit must not
    #: change the answer (max_flow uses the median capacity).
    scale: float = 1.0
    #: ECMP ratios of segments already known on this topology
    #: (:class:`~.oracles.SegmentRatios`; ``None``: computed here)
    segments: Optional[Any] = None
    #: Keep the finished column generation on the result (:attr:`MaxFlowResult.state`)
    keep_state: bool = False
    #: The LP's capacity row of each arc (``None``: arc ``a`` is row ``a``) and every capacity
    #: row's bound in LP units: a warm start after a failure keeps the old network's rows,
    #: the removed arcs' at 0 (:class:`~tpcstudy.models.colgen.Start`)
    arc_rows: Optional[np.ndarray] = None
    row_capacity: Optional[np.ndarray] = None

    @property
    def capacity(self) -> np.ndarray:
        """The arcs' capacities in LP units (``topo.arc_capacity / scale``)."""
        return self.topo.arc_capacity / self.scale

    @property
    def m2(self) -> int:
        """Number of capacity rows (directed arcs)."""
        return 2 * self.topo.num_links

    @property
    def npairs(self) -> int:
        return len(self.S)

    @property
    def capacity_rows(self) -> int:
        """Number of capacity rows of the LP (the demand rows follow)."""
        return self.m2 if self.row_capacity is None else len(self.row_capacity)

    def new_model(self) -> LPModel:
        """An empty LP with the capacity rows and, with demands, one demand row per pair."""
        lp = make_model(self.solver)
        lp.add_rows(self.capacity if self.row_capacity is None else self.row_capacity)
        if self.demands is not None:
            lp.add_rows(self.demands)
        return lp

    def add_usage(self, lp: LPModel, usage: Tuple[np.ndarray, np.ndarray, np.ndarray],
                  owner: np.ndarray, *, upper: Optional[Any] = None) -> None:
        """Add path columns (objective 1) given as their usage of the capacity rows (CSR
        arrays ``(indptr, indices, data)``, columns x rows: the LP's columns in CSC form as
        they are; by arc unless :attr:`arc_rows` says otherwise), owned by pairs ``owner``
        (their demand rows too); ``upper``: the columns' upper bound (one for all, or one
        each)."""
        ptr, ind, val = usage
        n = len(ptr) - 1
        if self.demands is not None and n:  # one more entry at the end of each column
            at = ptr[1:]
            ind = np.insert(ind, at, self.capacity_rows + np.asarray(owner, dtype=np.int64))
            val = np.insert(val, at, 1.0)
            ptr = ptr + np.arange(n + 1)
        lp.add_columns(np.ones(n), ptr, ind, val,
                       None if upper is None else np.broadcast_to(upper, (n,)))

    def duals(self, duals: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(y_rows, y, z)``: each capacity row's dual, each arc's (the same without
        :attr:`arc_rows`) and each pair's demand dual (zero without demand rows), all ``>= 0``,
        from an optimal LP's row duals."""
        c = self.capacity_rows
        y_rows = np.maximum(np.asarray(duals[:c]), 0.0)
        y = y_rows if self.arc_rows is None else y_rows[self.arc_rows]
        z = (np.maximum(np.asarray(duals[c:]), 0.0) if self.demands is not None
             else np.zeros(self.npairs))
        return y_rows, y, z

    def remaining(self, deadline: Optional[float]) -> Optional[float]:
        """Seconds left before ``deadline`` for the next solve (at least 10 ms)."""
        if deadline is None:
            return None
        return max(0.01, deadline - time.perf_counter())

    def write_model(self, lp: LPModel) -> None:
        """Write the LP to ``write_lp`` (if asked) through a temporary file and a rename."""
        if not self.write_lp:
            return
        p = Path(self.write_lp)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix, dir=p.parent)
        os.close(fd)
        try:
            lp.write(tmp)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def failed(self, model: str, res: LPResult, iterations: int) -> MaxFlowResult:
        """The result of a model whose LP did not solve."""
        return MaxFlowResult(math.nan, model, None, self.names, [], np.zeros(0),
                             np.full(len(self.names), math.nan), iterations, 0, math.nan,
                             res.status, res.message, self.clock.t, self.solver)

"""The max-flow LP study (docs/method.md §4; Figure 6 of "The TCPPathChanger:
bringing the spatial dimension to congestion control").

maximise ``sum_p f_p`` subject to ``sum_p r(l, p) f_p <= c(l)`` for every directed arc ``l``,
``f >= 0`` (and, with demands, ``sum_{p of pair} f_p <= d_pair``), over the path set of a model:

- ``ecmp``: one sr-path per pair, the direct one (plain IGP routing with even ECMP splits);
- ``multipath``: every individual shortest path of each pair (MPTCP subflows over ECMP), by
  column generation priced on the pair's shortest-path DAG (or, ``multipath="dag"``, as one LP
  of the flow restricted to the DAGs), never enumerating the paths;
- ``sr``: every sr-path with at most ``k`` segments, by column generation priced on the C++
  segment costs and the segment DP; it stops only when no pair prices below ``1 - 1e-9``, so the
  value is the optimum over all such sr-paths;
- ``mcf``: the multicommodity max flow with no forwarding restriction (the upper bound), by
  column generation priced with shortest paths on the capacity duals;
- ``mptcp``: multipath as the network really hashes it: each pair's ``subflows`` subflows each
  follow ONE shortest path drawn by per-hop ECMP hashing (seeded by ``seed``), and the pair uses
  the distinct paths drawn (:mod:`.subflows`);
- ``sr+mptcp``: each pair's ``subflows`` subflows may each take its own sr-path (at most ``k``
  segments): the LP over each pair's ``subflows`` largest sr-paths of the ``sr`` optimum.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import UsageError
from ..paths import segment_limit
from ..topology import Topology
from . import maxflow_models as models
from .colgen import MAX_ITERATIONS
from .oracles import PRICE_TOL, SegmentRatios, capacity_scale
from .problem import MaxFlowResult, Problem, demand_bounds

__all__ = ["MODELS", "SUBFLOW_MODELS", "PRICE_TOL", "MAX_ITERATIONS", "MaxFlowResult", "max_flow",
           "max_flow_after", "capacity_scale"]

MODELS: Tuple[str, ...] = ("ecmp", "multipath", "sr", "mcf", "mptcp", "sr+mptcp")
#: Models whose value depends on the number of subflows per pair.
SUBFLOW_MODELS: Tuple[str, ...] = ("mptcp", "sr+mptcp")

PairLike = Tuple[Any, Any]


def max_flow(topo: Topology, pairs: Union[np.ndarray, Sequence[PairLike]], *, model: str,
             k: int = 4, solver: str = "highs", demands: Optional[Any] = None,
             time_limit: Optional[float] = None, write_lp: Optional[str] = None,
             max_iterations: int = MAX_ITERATIONS, multipath: str = "cg", subflows: int = 8,
             seed: int = 0, sr_solution: Optional[MaxFlowResult] = None,
             ecmp_solution: Optional[MaxFlowResult] = None,
             initial_columns: Optional[Sequence[Sequence[Any]]] = None,
             fixed_columns: bool = False, segments: Optional[SegmentRatios] = None,
             keep_state: bool = False) -> MaxFlowResult:
    """Maximum total flow of ``pairs`` on ``topo`` under a forwarding ``model``.

    Parameters
    ----------
    topo
        The (usually pruned) topology; capacities are ``topo.arc_capacity``.
    pairs
        (source, target) router names or ids, or an ``(n, 2)`` int array of ids.
    model
        ``"ecmp"``, ``"multipath"``, ``"sr"``, ``"mcf"``, ``"mptcp"`` or ``"sr+mptcp"`` (see the
        module docstring).
    k
        Segment limit of ``"sr"`` and ``"sr+mptcp"`` (k = 1 is ecmp).
    solver
        LP backend: ``"highs"`` (default), ``"glop"``, ``"pdlp"`` or ``"pulp"``.
    demands
        Optional upper bound per pair (max throughput with ``f_pair <= demand``).
    time_limit
        Seconds for the whole computation; when exceeded the result has status ``time_limit``.
    write_lp
        Write the final LP model to this file (``.lp`` or ``.mps``).
    max_iterations
        Cap on column-generation rounds (status ``iteration_limit`` when reached).
    multipath
        How ``"multipath"`` is solved: ``"cg"`` (column generation priced on each pair's
        shortest-path DAG, the default) or ``"dag"`` (one LP of the flow restricted to the DAGs,
        an arc variable per pair and DAG arc). Both give the same value.
    subflows
        Subflows per pair of ``"mptcp"`` and ``"sr+mptcp"`` (K >= 1).
    seed
        Seed of ``"mptcp"``'s hash draws (the draws of K subflows are the first K of any larger
        K, so the value grows with K for a fixed seed).
    sr_solution
        For ``"sr+mptcp"``: the ``"sr"`` result of the same pairs, k and settings, when already
        solved (it is solved here otherwise). For ``"mcf"``: an ``"sr"`` result of the same
        pairs (any k). Where its optimum is mcf's, its duals prove it and no LP is solved
        (:func:`~.maxflow_models.proven_by`: every draw of the README's job); else its routing
        as simple paths joins the starting columns, so the column generation starts at sr's
        value. The optimum is the same.
    ecmp_solution
        For ``"sr"``: the ``"ecmp"`` result of the same pairs, topology and demands, solved
        with ``keep_state=True``. sr's starting columns are ecmp's (each pair's direct
        sr-path), so its first LP is that result's final LP, from its basis: one solve less
        (the optimum is the same). For ``"multipath"``: the ``"ecmp"`` result of the same
        pairs; where its optimum is multipath's, its duals prove it and no LP is solved
        (:func:`~.maxflow_models.proven_by`; the README's job: 311 of 446 draws), else the LP
        starts from ecmp's routing traced into shortest paths.
    initial_columns
        ``ecmp``, ``sr``, ``multipath`` and ``mcf``: further starting columns as router
        sequences ``(s, ..., t)`` (sr-paths: source, waypoints, target; multipath and mcf: every
        router of the path), each joining one of ``pairs``: a warm start (the optimum is the
        same); columns the model cannot use (an unreachable segment, a missing link, more than
        ``k`` segments) are left out. The first LP then holds only the columns of the pairs
        these name (their direct ones included); the others enter as they price out.
    fixed_columns
        Solve the LP over the starting columns only (each pair's direct one and
        ``initial_columns``), no column generation: what hosts holding that table can reach.
    segments
        ``ecmp`` and ``sr``: ECMP ratios of segments already computed on ``topo``
        (:class:`~tpcstudy.models.oracles.SegmentRatios`, e.g. those of a network before a
        failure that the failure left unchanged, :meth:`~.oracles.SegmentRatios.after_failure`);
        only the others are computed (and added to it). The value is the same.
    keep_state
        ``ecmp``, ``sr`` and ``mcf``: keep the finished column generation (its columns, their
        arc usage, the final basis) in :attr:`MaxFlowResult.state`, to re-solve the same pairs
        after a failure from it (:func:`max_flow_after`).
    """
    if model not in MODELS:
        raise UsageError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")
    if multipath not in ("cg", "dag"):
        raise UsageError(f"multipath = {multipath!r}: choose 'cg' or 'dag'")
    S, T = _pair_ids(topo, pairs)
    nm = topo.names
    names = list(zip([nm[s] for s in S.tolist()], [nm[t] for t in T.tolist()]))
    scale = capacity_scale(topo)
    bounds = demand_bounds(demands, len(S))
    p = Problem(topo, S, T, names, solver, None if bounds is None else bounds / scale, time_limit,
                write_lp, max_iterations, scale=scale, segments=segments, keep_state=keep_state)
    if initial_columns is not None or fixed_columns:
        if model not in ("ecmp", "sr", "multipath", "mcf") or (model == "multipath"
                                                               and multipath == "dag"):
            raise UsageError(f"initial_columns / fixed_columns: not for model {model!r}")
        concrete = model in ("multipath", "mcf")
        more = models.path_keys(topo, S, T, initial_columns or (), concrete)
        warm = None
        if initial_columns is not None:  # the first LP: the columns of the pairs named
            warm = np.zeros(len(S), dtype=bool)
            warm[[i for i, _ in more]] = True
        res = _solve_from(p, model, k, more, fixed_columns, warm)
    else:
        res = _solve(p, model, k, multipath, subflows, seed, sr_solution, ecmp_solution)
    return _units(res, scale)


def max_flow_after(res: MaxFlowResult, topo: Topology, amap: np.ndarray, *,
                   solver: str = "highs", time_limit: Optional[float] = None,
                   segments: Optional[SegmentRatios] = None,
                   fixed: Optional[np.ndarray] = None) -> MaxFlowResult:
    """:func:`max_flow` of ``res``'s pairs and model (``ecmp``, ``sr`` or ``mcf``) on ``topo``,
    the network ``res`` was solved on without some links (``amap``: each of its arcs' id on
    ``topo``, -1 for a removed one; :func:`tpcstudy.topology.without_link_ids`), started from
    ``res`` (solved with ``keep_state=True``): its columns whose arcs all survive keep their
    usage (sr: the others are recomputed here; mcf: dropped), its final LP's columns are the
    first LP and its basis the first basis. Column generation then runs as in
    :func:`max_flow`, to the same stop rule: the same optimum, without recomputing what the
    failure left alone (docs/method.md §4c). ``segments``: as :func:`max_flow`'s.
    ``fixed`` (a bool mask over ``res.paths``): the LP over those columns alone, no
    generation (what hosts holding that table reach, as ``fixed_columns``); a column whose
    route the removal cut (a segment not routed) is left out."""
    if res.state is None:
        raise UsageError("max_flow_after: the result was solved without keep_state=True")
    if res.model not in ("ecmp", "sr", "mcf"):
        raise UsageError(f"max_flow_after: not for model {res.model!r}")
    amap = np.asarray(amap, dtype=np.int64)
    if amap.shape != (res.state.usage.shape[1],) or int((amap >= 0).sum()) != 2 * topo.num_links:
        raise UsageError("max_flow_after: amap does not map the result's arcs onto this topology")
    S, T = res.state.pairs
    scale = capacity_scale(topo)
    d = res.state.demands
    p = Problem(topo, S, T, res.pairs, solver, None if d is None else d / scale, time_limit, None,
                MAX_ITERATIONS, scale=scale, segments=segments)
    only = None
    if fixed is not None:
        only = np.asarray(fixed, dtype=bool).ravel()
        if only.shape != (len(res.state.keys),):
            raise UsageError(f"max_flow_after: fixed has {only.size} entries for "
                             f"{len(res.state.keys)} paths")
    after = (res.state, amap, only)
    if res.model == "mcf":
        out = models.mcf(p, fixed=only is not None, after=after)
    else:
        out = models.sr(p, 1 if res.model == "ecmp" else int(res.k or 1), res.model,
                        fixed=only is not None, after=after)
    return _units(out, scale)


def _units(res: MaxFlowResult, scale: float) -> MaxFlowResult:
    """A result back in the topology's units, no flow negative."""
    if scale != 1.0:  # back to the topology's own units
        res.value = float(res.value) * scale
        res.flows = np.asarray(res.flows, dtype=np.float64) * scale
        res.pair_flow = np.asarray(res.pair_flow, dtype=np.float64) * scale
    # a flow is never negative: the solver's -0.0 and -1e-13 are zero (they printed as "-0.")
    for name in ("flows", "pair_flow"):
        f = np.asarray(getattr(res, name), dtype=np.float64)
        setattr(res, name, np.where(f > 0.0, f, 0.0))
    return res


def _solve(p: Problem, model: str, k: int, multipath: str, subflows: Any, seed: int,
           sr_solution: Optional[MaxFlowResult],
           ecmp_solution: Optional[MaxFlowResult] = None) -> MaxFlowResult:
    if model == "ecmp":
        return models.sr(p, 1, "ecmp")
    if model == "sr":
        if ecmp_solution is not None:
            st = ecmp_solution.state
            d = None if st is None else st.demands
            if (ecmp_solution.model != "ecmp" or st is None or ecmp_solution.pairs != p.names
                    or st.usage.shape[1] != p.m2 or (d is None) != (p.demands is None)
                    or (d is not None and p.demands is not None
                        and not np.allclose(d / p.scale, p.demands, rtol=1e-12, atol=0.0))):
                raise UsageError("ecmp_solution is not an ecmp result of these pairs, topology "
                                 "and demands solved with keep_state=True")
            return models.sr(p, segment_limit(k), "sr",
                             after=(st, np.arange(p.m2, dtype=np.int64), None))
        return models.sr(p, segment_limit(k), "sr")
    if model == "multipath":
        if multipath == "dag":
            return models.multipath_dag(p)
        if ecmp_solution is not None:
            if ecmp_solution.model != "ecmp" or ecmp_solution.pairs != p.names:
                raise UsageError("ecmp_solution is not an ecmp result of these pairs")
            return _from_lower(p, ecmp_solution, "multipath", models.multipath)
        return models.multipath(p)
    if model in SUBFLOW_MODELS:
        if isinstance(subflows, bool) or int(subflows) != subflows or int(subflows) < 1:
            raise UsageError(f"subflows = {subflows!r} must be an integer >= 1")
        if model == "mptcp":
            return models.mptcp(p, int(subflows), int(seed))
        k = segment_limit(k)
        if sr_solution is not None and (sr_solution.model != "sr" or sr_solution.k != int(k)
                                        or sr_solution.pairs != p.names):
            raise UsageError("sr_solution is not the sr result of these pairs and this k")
        return models.sr_mptcp(p, int(k), int(subflows), sr_solution)
    if sr_solution is not None:
        if sr_solution.model != "sr" or sr_solution.pairs != p.names:
            raise UsageError("sr_solution is not an sr result of these pairs")
        return _from_lower(p, sr_solution, "mcf", models.mcf)
    return models.mcf(p)


def _from_lower(p: Problem, lower: MaxFlowResult, model: str,
                solve: Callable[..., MaxFlowResult]) -> MaxFlowResult:
    """``model``'s optimum from the optimum ``lower`` of a model below it on the same pairs:
    proven by it, no LP (:func:`~.maxflow_models.proven_by`), where it can be; else ``solve``
    (``model``'s column generation) from its routing traced into paths, beside every pair's
    first path (sifted as ever)."""
    proven = models.proven_by(p, lower, model)
    if proven is not None:
        return proven
    return solve(p, models.sr_routing_paths(p, lower))


def _solve_from(p: Problem, model: str, k: int, more: Any, fixed: bool,
                warm: Optional[np.ndarray]) -> MaxFlowResult:
    """A path model with further starting columns (``fixed``: and no generation; ``warm``:
    the pairs whose columns the first LP holds)."""
    if model in ("ecmp", "sr"):
        return models.sr(p, 1 if model == "ecmp" else segment_limit(k), model, more, fixed, warm)
    if model == "multipath":
        return models.multipath(p, more, fixed, warm)
    return models.mcf(p, more, fixed, warm)


def _pair_ids(topo: Topology, pairs: Union[np.ndarray, Sequence[PairLike]]) -> Tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, np.ndarray) and pairs.dtype.kind in "iu":
        if not (pairs.ndim == 2 and pairs.shape[1] == 2) and pairs.shape != (2,):
            raise UsageError(f"pairs: an id array must have shape (n, 2), not {pairs.shape}")
        arr = pairs.reshape(-1, 2).astype(np.int32)
        if arr.size and (arr.min() < 0 or arr.max() >= topo.num_nodes):
            raise UsageError("pair node id out of range")
    else:
        if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
            raise UsageError(f"pairs: expected (source, target) pairs, got {type(pairs).__name__}")
        ids = []
        for i, pair in enumerate(pairs):
            if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise UsageError(f"pairs[{i}] = {pair!r}: expected a (source, target) pair")
            ids.append((topo.index_of(pair[0]), topo.index_of(pair[1])))
        arr = np.array(ids, dtype=np.int32).reshape(-1, 2)
    if np.any(arr[:, 0] == arr[:, 1]):
        raise UsageError("a pair has the same source and target")
    return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])

"""The one column-generation loop of the path models (ecmp, sr, multipath, mcf).

A model gives each pair's starting column, how to build columns (their arc usage ``r(l, p)``),
and a pricing oracle: under arc prices ``y`` (the capacity duals) each pair's cheapest column
value and a function giving that column's key. A column enters iff its price is below
``1 - z_pair - PRICE_TOL`` (``z``: the pair's demand-row dual); the loop stops when none does,
so the value is the optimum over the model's whole column family (docs/method.md §4).
"""

from __future__ import annotations

import math
import time
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from ..lp import LPResult
from .problem import Column, MaxFlowResult, Problem

__all__ = ["PRICE_TOL", "MAX_ITERATIONS", "Key", "Pricer", "column_generation"]

#: Reduced-cost tolerance of the column generation: a column enters iff its price < 1 - PRICE_TOL.
PRICE_TOL = 1e-9
#: Safety cap on column-generation rounds (never reached on the Zoo; reported if it is).
MAX_ITERATIONS = 10_000

#: A column's identity: the sr-path's node sequence, or a concrete path's arc ids.
Key = Tuple[int, ...]
#: ``price(y) -> (value of each pair's cheapest column, i -> that column's key)``.
Pricer = Callable[[np.ndarray], Tuple[np.ndarray, Callable[[int], Key]]]


def column_generation(p: Problem, label: str, first: Sequence[Optional[Key]],
                      columns: Callable[[List[Key]], List[Column]], price: Optional[Pricer],
                      path_names: Callable[[Key], Tuple[str, ...]],
                      more: Sequence[Tuple[int, Key]] = ()) -> MaxFlowResult:
    """Solve ``p`` over a model's column family.

    ``first[i]``: pair i's starting column key (``None``: the pair has none); ``more``: further
    starting columns as ``(pair, key)``; ``columns(keys)``: their arc usage ``(arcs, r)``;
    ``price(y)``: see :data:`Pricer` (``None``: no generation, the starting columns are the
    model); ``path_names(key)``: the column as router names.
    """
    clock = p.clock
    t0 = time.perf_counter()
    deadline = None if p.time_limit is None else t0 + p.time_limit
    m2, npairs = p.m2, p.npairs
    owner = [i for i, q in enumerate(first) if q is not None] + [i for i, _ in more]
    keys: List[Key] = [q for q in first if q is not None] + [q for _, q in more]
    cols = columns(keys)
    t0 = clock.add("paths", t0)
    lp = p.new_model()
    p.add_columns(lp, cols, owner)
    known = set(zip(owner, keys))
    iterations, gap, converged = 0, math.nan, False
    while True:
        res = lp.solve(time_limit=p.remaining(deadline))
        t0 = clock.add("lp", t0)
        iterations += 1
        if not res.ok:
            return p.failed(label, res, iterations)
        if price is None:
            converged = True
            break
        y = np.maximum(np.asarray(res.duals[:m2]), 0.0)
        z = (np.maximum(np.asarray(res.duals[m2:]), 0.0) if p.demands is not None
             else np.zeros(npairs))
        values, key_of = price(y)
        reduced = values - (1.0 - z)
        finite = np.isfinite(reduced)
        gap = float(reduced[finite].min()) if finite.any() else 0.0
        new_keys, new_owner = [], []
        for i in np.flatnonzero(finite & (reduced < -PRICE_TOL)).tolist():
            q = key_of(i)
            if (i, q) in known:
                continue  # numerically tied with a column already in: nothing new
            known.add((i, q))
            new_keys.append(q)
            new_owner.append(i)
        t0 = clock.add("pricing", t0)
        if not new_keys:
            converged = True
            break
        if iterations >= p.max_iterations:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return p.failed(label, LPResult("time_limit", math.nan, np.zeros(0), np.zeros(0), 0.0,
                                            "column generation hit the time limit"), iterations)
        keys.extend(new_keys)
        owner.extend(new_owner)
        new_cols = columns(new_keys)
        t0 = clock.add("paths", t0)
        p.add_columns(lp, new_cols, new_owner)
    p.write_model(lp)
    x = np.asarray(res.x)
    pf = np.bincount(np.array(owner, dtype=np.int64), weights=x, minlength=npairs)
    status = "optimal" if converged else "iteration_limit"
    return MaxFlowResult(float(res.objective), label, None, p.names, [path_names(q) for q in keys],
                         x, pf, iterations, len(keys), gap, status, "", clock.t, p.solver,
                         np.array(owner, dtype=np.int64))

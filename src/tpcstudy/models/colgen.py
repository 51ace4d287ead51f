"""The column-generation loop of the max-flow LP's path models (ecmp, sr, multipath, mcf);
their oracles are :mod:`.oracles` (shared with the minimum-MLU LP, :mod:`.mlu`).

A model gives each pair's starting columns, how to build columns (their arc usage ``r(l, p)``),
and a pricing oracle: under arc prices ``y`` (the capacity duals) each pair's cheapest column
value and a function giving that column's key. A column enters iff its price is below
``1 - z_pair - PRICE_TOL`` (``z``: the pair's demand-row dual); the loop stops when none does,
so the value is the optimum over the model's whole column family (docs/method.md §4).

Large masters are sifted. Every column known so far (the starting ones and every one the
oracle returned) sits in a *pool* whose reduced costs are one sparse product ``A^T y`` per
round; the LP holds only part of the pool: at most :data:`SIFT_BATCH` columns enter per round,
the most negative first, and the oracle, the expensive part, is called only when no pool column
prices out. The stop rule is unchanged (no pool column and no oracle column below
``1 - z - PRICE_TOL``), so the value is the same optimum: an LP of 1,642 rows (Kdl) has at most
1,642 basic columns, and solving it over 227,052 columns at once (ecmp on all of Kdl's edge
pairs) cost 31 s where a few restricted re-solves cost well under a second each. Below the
batch size nothing changes: every column enters at once, as before.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..lp import LPResult
from .oracles import PRICE_TOL, Key
from .problem import Column, MaxFlowResult, Problem, csc

__all__ = ["MAX_ITERATIONS", "SIFT_BATCH", "Pricer", "column_generation"]

#: Safety cap on column-generation rounds (never reached on the Zoo; reported if it is).
MAX_ITERATIONS = 10_000
#: Most columns entering the LP per round (and in the first LP); the rest wait in the pool.
SIFT_BATCH = 8_000

#: ``price(y) -> (value of each pair's cheapest column, pairs -> those columns' keys)``.
Pricer = Callable[[np.ndarray], Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]]


class _Pool:
    """Every column known so far, as sparse blocks, and which of them are in the LP."""

    def __init__(self, m2: int) -> None:
        self.m2 = m2
        self.keys: List[Key] = []
        self.owner = np.zeros(0, dtype=np.int64)
        self.in_lp = np.zeros(0, dtype=bool)
        self.index: Dict[Tuple[int, Key], int] = {}
        self.blocks: List[object] = []  # scipy CSR matrices (columns x arcs), in pool order
        self.cols: List[Column] = []

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, owner: Sequence[int], keys: Sequence[Key], cols: List[Column]) -> None:
        from scipy.sparse import csr_matrix

        for i, q in zip(owner, keys):
            self.index[(int(i), q)] = len(self.keys)
            self.keys.append(q)
        self.owner = np.concatenate([self.owner, np.asarray(owner, dtype=np.int64)])
        self.in_lp = np.concatenate([self.in_lp, np.zeros(len(keys), dtype=bool)])
        starts, rows, vals = csc(cols)
        self.blocks.append(csr_matrix((vals, rows, starts), shape=(len(cols), self.m2)))
        self.cols.extend(cols)

    def prices(self, y: np.ndarray) -> np.ndarray:
        """Every pool column's price ``sum_l r(l, p) y_l``."""
        return np.concatenate([b @ y for b in self.blocks]) if self.blocks else np.zeros(0)


def column_generation(p: Problem, label: str, first: Sequence[Optional[Key]],
                      columns: Callable[[List[Key]], List[Column]], price: Optional[Pricer],
                      path_names: Callable[[Key], Tuple[str, ...]],
                      more: Sequence[Tuple[int, Key]] = (),
                      warm_pairs: Optional[np.ndarray] = None) -> MaxFlowResult:
    """Solve ``p`` over a model's column family.

    ``first[i]``: pair i's starting column key (``None``: the pair has none); ``more``: further
    starting columns as ``(pair, key)``; ``columns(keys)``: their arc usage ``(arcs, r)``;
    ``price(y)``: see :data:`Pricer` (``None``: no generation, the starting columns are the
    model); ``path_names(key)``: the column as router names.

    The result lists every pool column (those that never entered the LP with zero flow), so a
    fixed-column model (ecmp, mptcp) reports every one of its columns as before sifting.

    ``warm_pairs`` (a warm start, e.g. from the optimum of a network before a failure): the
    first LP holds only the columns of these pairs (a bool mask over the pairs); every other
    column waits in the pool and enters when it prices out, so the optimum is the same.
    """
    clock = p.clock
    t0 = time.perf_counter()
    deadline = None if p.time_limit is None else t0 + p.time_limit
    m2, npairs = p.m2, p.npairs
    pool = _Pool(m2)
    owner0 = [i for i, q in enumerate(first) if q is not None] + [i for i, _ in more]
    keys0: List[Key] = [q for q in first if q is not None] + [q for _, q in more]
    pool.add(owner0, keys0, columns(keys0))
    t0 = clock.add("paths", t0)
    lp = p.new_model()
    order: List[int] = []  # pool index of each LP column

    def enter(idx: np.ndarray) -> None:
        idx = np.sort(idx)
        pool.in_lp[idx] = True
        order.extend(idx.tolist())
        p.add_columns(lp, [pool.cols[j] for j in idx.tolist()], pool.owner[idx].tolist())

    if warm_pairs is not None:
        enter(np.flatnonzero(np.asarray(warm_pairs, dtype=bool)[pool.owner]))
    elif len(pool) <= SIFT_BATCH:
        enter(np.arange(len(pool)))
    else:  # the columns using the least capacity first (price under y = 1 / capacity)
        cost = pool.prices(1.0 / np.maximum(p.capacity, 1e-300))
        enter(np.lexsort((np.arange(len(pool)), cost))[:SIFT_BATCH])
    iterations, gap, converged = 0, math.nan, False
    while True:
        res = lp.solve(time_limit=p.remaining(deadline))
        t0 = clock.add("lp", t0)
        iterations += 1
        if not res.ok:
            return p.failed(label, res, iterations)
        y = np.maximum(np.asarray(res.duals[:m2]), 0.0)
        z = (np.maximum(np.asarray(res.duals[m2:]), 0.0) if p.demands is not None
             else np.zeros(npairs))
        waiting = np.flatnonzero(~pool.in_lp)
        reduced = pool.prices(y)[waiting] - (1.0 - z[pool.owner[waiting]])
        neg = reduced < -PRICE_TOL
        entering, reduced = waiting[neg], reduced[neg]
        if not len(entering) and price is not None:
            values, keys_of = price(y)
            red = values - (1.0 - z)
            finite = np.isfinite(red)
            gap = float(red[finite].min()) if finite.any() else 0.0
            new_keys, new_owner = [], []
            priced = np.flatnonzero(finite & (red < -PRICE_TOL))
            for i, q in zip(priced.tolist(), keys_of(priced)):
                if (i, q) in pool.index:
                    continue  # numerically tied with a column already in: nothing new
                new_keys.append(q)
                new_owner.append(i)
            t0 = clock.add("pricing", t0)
            if new_keys:
                start = len(pool)
                pool.add(new_owner, new_keys, columns(new_keys))
                t0 = clock.add("paths", t0)
                entering = np.arange(start, len(pool))
                reduced = red[np.asarray(new_owner, dtype=np.int64)]
        else:
            t0 = clock.add("pricing", t0)
        if not len(entering):
            converged = True
            break
        if iterations >= p.max_iterations:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return p.failed(label, LPResult("time_limit", math.nan, np.zeros(0), np.zeros(0), 0.0,
                                            "column generation hit the time limit"), iterations)
        if len(entering) > SIFT_BATCH:  # the most negative first, ties by pool order
            entering = entering[np.lexsort((entering, reduced))[:SIFT_BATCH]]
        enter(entering)
        t0 = clock.add("paths", t0)
    if p.write_lp:  # the model's whole LP: the pool columns that never entered too
        rest = np.flatnonzero(~pool.in_lp)
        if len(rest):
            enter(rest)
        p.write_model(lp)
    x = np.zeros(len(pool))
    x[np.asarray(order[:len(res.x)], dtype=np.int64)] = np.asarray(res.x)
    pf = np.bincount(pool.owner, weights=x, minlength=npairs)
    status = "optimal" if converged else "iteration_limit"
    return MaxFlowResult(float(res.objective), label, None, p.names, [path_names(q) for q in pool.keys],
                         x, pf, iterations, len(pool), gap, status, "", clock.t, p.solver,
                         pool.owner.copy())

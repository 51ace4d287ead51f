"""The column-generation loop of the max-flow LP's path models (ecmp, sr, multipath, mcf);
their oracles are :mod:`.oracles` (shared with the minimum-MLU LP, :mod:`.mlu`).

A model gives each pair's starting columns, how to build columns (their arc usage ``r(l, p)``),
and a pricing oracle: under arc prices ``y`` (the capacity duals) each pair's cheapest column
value and a function giving that column's key. A column enters iff its price is below
``1 - z_pair - PRICE_TOL`` (``z``: the pair's demand-row dual); the loop stops when none does,
so the value is the optimum over the model's whole column family (docs/method.md §4).

Large masters are sifted. Every column known so far (the starting ones and every one the
oracle returned) sits in a *pool* whose reduced costs are one sparse product ``A^T y`` per
round; the LP holds only part of the pool: at most :func:`sift_batch` columns enter per round
(a third of the LP's rows, between 256 and 8,000), the most negative first, and the oracle, the
expensive part, is called only when no pool column prices out. The stop rule is unchanged (no
pool column and no oracle column below ``1 - z - PRICE_TOL``), so the value is the same
optimum: an LP of 1,642 rows (Kdl) has at most 1,642 basic columns, and solving it over 227,052
columns at once (ecmp on all of Kdl's edge pairs) cost 31 s where a few restricted re-solves
cost well under a second each. Below the batch size nothing changes: every column enters at
once, as before.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..lp import LPResult
from .oracles import PRICE_TOL, Key, crossing
from .problem import MaxFlowResult, Problem

__all__ = ["MAX_ITERATIONS", "SIFT_BATCH", "sift_batch", "Pricer", "Snapshot", "Start", "LazyNames",
           "column_generation"]

#: Safety cap on column-generation rounds (never reached on the Zoo; reported if it is).
MAX_ITERATIONS = 10_000
#: Most columns entering the LP per round (and in the first LP); the rest wait in the pool.
SIFT_BATCH = 8_000
#: ... and at most this many per LP row (a basis holds one column per row): more entering at
#: once only adds simplex pivots. Kdl (1,642 rows), the README job's eight LPs (1 % and 10 %
#: heavy pairs, ecmp / multipath / sr k=4 / mcf): 3.5 s with up to 8,000 entering per round,
#: 2.1 s with 547 (rows / 2: 2.3 s, rows / 4: 2.0 s, rows / 7: 2.2 s); the same optima
SIFT_PER_ROW = 1 / 3
#: ... but never fewer than this (a small LP takes every column at once, as before)
SIFT_MIN = 256


def sift_batch(rows: int) -> int:
    """Most columns entering an LP of ``rows`` rows per round (:data:`SIFT_BATCH`,
    :data:`SIFT_PER_ROW`, :data:`SIFT_MIN`)."""
    return int(min(SIFT_BATCH, max(SIFT_MIN, rows * SIFT_PER_ROW)))

#: ``price(y) -> (value of each pair's cheapest column, pairs -> those columns' keys)``.
Pricer = Callable[[np.ndarray], Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]]


#: Sparse rows (columns x arcs) as CSR arrays ``(indptr, indices, data)``: the LP's columns
#: in CSC form as they are (no scipy object made per selection: its checks cost more than
#: the selection on a failure's small LPs).
Rows = Tuple[np.ndarray, np.ndarray, np.ndarray]


def _rows(m: Any) -> Rows:
    return m.indptr, m.indices, m.data


def _take(r: Rows, pos: np.ndarray) -> Rows:
    """Rows ``pos`` of ``r``, in that order (a run of consecutive rows: a view; ascending
    rows: by an entry mask, cheaper than a gather)."""
    ptr, ind, val = r
    n = len(pos)
    if n and int(pos[-1]) - int(pos[0]) == n - 1 and (n < 2 or bool((np.diff(pos) == 1).all())):
        a, b = int(ptr[pos[0]]), int(ptr[pos[-1] + 1])
        return ptr[pos[0]:pos[-1] + 2] - a, ind[a:b], val[a:b]
    if n > 1 and bool((np.diff(pos) > 0).all()):
        pick = np.zeros(len(ptr) - 1, dtype=bool)
        pick[pos] = True
        mask = np.repeat(pick, np.diff(ptr))
        new = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ptr[pos + 1] - ptr[pos], out=new[1:])
        return new, ind[mask], val[mask]
    cnt = ptr[pos + 1] - ptr[pos]
    new = np.zeros(len(pos) + 1, dtype=np.int64)
    np.cumsum(cnt, out=new[1:])
    idx = np.repeat(ptr[pos] - new[:-1], cnt) + np.arange(int(new[-1]), dtype=np.int64)
    return new, ind[idx], val[idx]


def _stack(parts: Sequence[Rows]) -> Rows:
    """The rows of ``parts``, one after the other."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0)
    ends = np.cumsum([0] + [int(p[0][-1]) for p in parts[:-1]])
    ptr = np.concatenate([parts[0][0][:1]] + [p[0][1:] + e for p, e in zip(parts, ends)])
    return ptr, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])


def _key_at(blocks: Sequence[Sequence[Key]], starts: Sequence[int], j: int) -> Key:
    """Key ``j`` of blocks of keys that begin at ``starts``."""
    b = bisect.bisect_right(starts, j) - 1
    return blocks[b][j - starts[b]]


class _ArcKeys(Sequence[Key]):
    """Concrete paths' keys (their arc ids, renumbered by ``amap``) read from their usage rows
    when asked."""

    def __init__(self, ptr: np.ndarray, ind: np.ndarray, amap: np.ndarray) -> None:
        self.ptr, self.ind, self.amap = ptr, ind, amap

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        return tuple(self.amap[self.ind[self.ptr[j]:self.ptr[j + 1]]].tolist())


class _Pool:
    """Every column known so far, as sparse blocks of arc usage, and which of them are in the
    LP."""

    def __init__(self, m2: int) -> None:
        self.m2 = m2
        self.key_blocks: List[Sequence[Key]] = []
        self.n = 0
        self.owner = np.zeros(0, dtype=np.int64)
        self.in_lp = np.zeros(0, dtype=bool)
        self.out = np.zeros(0, dtype=bool)  # never to enter (a start's columns out)
        self.blocks: List[Any] = []  # scipy CSR matrices (columns x arcs), in pool order
        self.starts: List[int] = []  # pool index of each block's first column
        self._by_owner: Dict[int, set] = {}  # pair -> its keys, for the pairs asked about
        self._sorted: Tuple[int, np.ndarray, np.ndarray] = (-1, np.zeros(0), np.zeros(0))

    def __len__(self) -> int:
        return self.n

    def key(self, j: int) -> Key:
        return _key_at(self.key_blocks, self.starts, j)

    @property
    def keys(self) -> Sequence[Key]:
        """Every column's key, in pool order (a view)."""
        return _KeyView(self)

    def add(self, owner: Any, keys: Sequence[Key], usage: Any) -> None:
        """Columns ``keys`` of pairs ``owner`` and their arc usage (CSR, columns x arcs)."""
        owner = np.asarray(owner, dtype=np.int64)
        if self._by_owner:
            for i, q in zip(owner.tolist(), keys):
                if i in self._by_owner:
                    self._by_owner[i].add(q)
        self.starts.append(self.n)
        self.key_blocks.append(keys)
        self.n += len(keys)
        self.owner = np.concatenate([self.owner, owner])
        self.in_lp = np.concatenate([self.in_lp, np.zeros(len(keys), dtype=bool)])
        self.out = np.concatenate([self.out, np.zeros(len(keys), dtype=bool)])
        self.blocks.append(usage)

    def has(self, i: int, q: Key) -> bool:
        """Whether pair ``i`` has column ``q`` already (indexed per pair when first asked: a
        warm start that never asks never pays for it)."""
        i = int(i)
        if i not in self._by_owner:
            n, order, bounds = self._sorted
            if n != self.n:  # the pool grew: sort its owners again
                order = np.argsort(self.owner, kind="stable")
                bounds = np.searchsorted(self.owner[order], np.arange(int(self.owner.max(
                    initial=-1)) + 2))
                self._sorted = (self.n, order, bounds)
            js = order[bounds[i]:bounds[i + 1]].tolist() if i + 1 < len(bounds) else []
            self._by_owner[i] = {self.key(j) for j in js}
        return q in self._by_owner[i]

    def rows(self, idx: np.ndarray) -> Rows:
        """The usage of pool columns ``idx`` (ascending), in that order."""
        bounds = np.searchsorted(idx, self.starts + [self.n])
        parts = [_rows(b) if hi - lo == b.shape[0] else _take(_rows(b), idx[lo:hi] - st)
                 for b, st, lo, hi in zip(self.blocks, self.starts, bounds[:-1], bounds[1:])
                 if hi > lo]
        return _stack(parts)

    def usage(self) -> Any:
        """Every pool column's usage (CSR, pool order)."""
        from scipy.sparse import csr_matrix

        ptr, ind, val = self.rows(np.arange(self.n))
        return csr_matrix((val, ind, ptr), shape=(self.n, self.m2))

    def prices(self, y: np.ndarray) -> np.ndarray:
        """Every pool column's price ``sum_l r(l, p) y_l``."""
        return np.concatenate([b @ y for b in self.blocks]) if self.blocks else np.zeros(0)


class _KeyView(Sequence[Key]):
    """The pool's keys as one sequence (its blocks as they are now, not its usage)."""

    def __init__(self, pool: _Pool) -> None:
        self.blocks, self.starts, self.n = list(pool.key_blocks), list(pool.starts), pool.n

    def __len__(self) -> int:
        return self.n

    def key(self, j: int) -> Key:
        return _key_at(self.blocks, self.starts, j)

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):
            return [self.key(i) for i in range(*j.indices(self.n))]
        return self.key(j if j >= 0 else j + self.n)

    def __iter__(self) -> Iterator[Key]:
        for b in self.blocks:
            yield from b


@dataclasses.dataclass
class Snapshot:
    """A finished column generation, to start a similar one from (e.g. the same pairs on the
    network after a failure, :meth:`carry`): every pool column (``keys``, ``owner`` pair, arc
    ``usage`` on its topology as CSR columns x arcs), which were in the final LP, and the final
    simplex basis (``cols`` per pool column, ``rows`` per LP row; ``None`` when the backend
    keeps none; :data:`tpcstudy.lp.BASIS_CODES`)."""

    keys: Sequence[Key]
    owner: np.ndarray
    usage: Any
    in_lp: np.ndarray
    cols: Optional[np.ndarray]
    rows: Optional[np.ndarray]
    #: The pairs' router ids ``(S, T)`` and their demand bounds (topology units; ``None``: none)
    pairs: Tuple[np.ndarray, np.ndarray]
    demands: Optional[np.ndarray] = None

    def carry(self, amap: np.ndarray, recompute: Optional[Callable[[List[Key]], Any]],
              only: Optional[np.ndarray] = None) -> "Start":
        """A start on the topology without some links (``amap``: each arc's id there, -1 for
        a removed one), kept *dual feasible*: the first LP is this one's final LP with the
        removed arcs' rows at capacity 0 and the columns that crossed them held at zero
        (*ghosts*), from this basis unchanged, so the dual simplex starts where this optimum
        stopped and only restores primal feasibility. A column none of whose arcs was removed
        keeps its usage (arcs renumbered; its ECMP DAGs are unchanged: removing links never
        shortens a path); the others wait in the pool with ``recompute(keys)`` as usage (an
        empty row: no route left, dropped) or, with ``recompute=None`` (concrete paths keyed
        by arc ids), are dropped, the kept keys renumbered. ``only`` (a mask over the
        columns): the others leave the pool (those of the LP as ghosts), e.g. to solve over a
        table of them alone."""
        from scipy.sparse import csr_matrix

        amap = np.asarray(amap, dtype=np.int64)
        alive = amap >= 0
        m2_new = int(alive.sum())
        u = _rows(self.usage)
        hit = crossing(u[0], u[1], amap)
        out = hit if only is None else hit | ~np.asarray(only, dtype=bool)
        arc_rows = np.empty(m2_new, dtype=np.int64)
        arc_rows[amap[alive]] = np.flatnonzero(alive)
        # the old columns stay as they are (usage by LP row: the old network's arcs), those
        # ``out`` never used as they were; a concrete path's key renumbered when read
        keys: Sequence[Key] = (_ArcKeys(u[0], u[1], amap) if recompute is None
                               else self.keys)
        new_keys: List[Key] = []
        new_owner = np.zeros(0, dtype=np.int64)
        new_usage = csr_matrix((0, len(amap)))
        if recompute is not None:
            again = np.flatnonzero(hit if only is None else hit & np.asarray(only, dtype=bool))
            if len(again):  # their usage on the new network, by LP row
                new = _rows(recompute([self.keys[j] for j in again.tolist()]).tocsr())
                live = np.flatnonzero(np.diff(new[0]) > 0)
                again = again[live]
                nptr, nind, nval = _take(new, live)
                new_keys = [self.keys[j] for j in again.tolist()]
                new_owner = self.owner[again]
                new_usage = csr_matrix((nval, arc_rows[nind], nptr), shape=(len(again), len(amap)))
        return Start(keys, self.owner, self.usage, out, self.in_lp, self.cols, self.rows,
                     new_keys, new_owner, new_usage, arc_rows)


@dataclasses.dataclass
class Start:
    """A column generation's start from a solution on the network before some links were
    removed (:meth:`Snapshot.carry`). The LP's capacity rows stay the old network's arcs
    (``arc_rows``: each new arc's row; the removed arcs' rows at capacity 0). The
    old columns (``keys``, ``owner``, ``usage`` by LP row) join the pool as they are; those
    ``out`` (crossing a removed arc, or left out of a table) are never used as they were:
    those of the old final LP (``in_lp``) are in the first LP held at zero (*ghosts*), the
    others never enter. The first LP starts from the old basis (``cols`` per old column,
    ``rows``; ``None``: no basis). ``new_*``: the crossing columns' usage on the new network
    (by LP row), waiting in the pool."""

    keys: Sequence[Key]
    owner: np.ndarray
    usage: Any
    out: np.ndarray
    in_lp: np.ndarray
    cols: Optional[np.ndarray]
    rows: Optional[np.ndarray]
    new_keys: List[Key]
    new_owner: np.ndarray
    new_usage: Any
    arc_rows: np.ndarray


class _Subset(Sequence[Key]):
    """Items ``idx`` of a sequence, read when asked."""

    def __init__(self, base: Sequence[Key], idx: np.ndarray) -> None:
        self.base, self.idx = base, idx

    def __len__(self) -> int:
        return len(self.idx)

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):
            return [self.base[int(i)] for i in self.idx[j]]
        return self.base[int(self.idx[j])]


class LazyNames(Sequence[Tuple[str, ...]]):
    """Columns as router names, made when first read (a warm re-solve whose caller reads only
    the value never pays for them)."""

    def __init__(self, keys: Sequence[Key], names: Callable[[Key], Tuple[str, ...]]) -> None:
        self._keys, self._names = keys, names
        self._list: Optional[List[Tuple[str, ...]]] = None

    def _all(self) -> List[Tuple[str, ...]]:
        if self._list is None:
            self._list = [self._names(q) for q in self._keys]
        return self._list

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Iterator[Tuple[str, ...]]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return self._all() == (list(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(self._all())


def column_generation(p: Problem, label: str, first: Sequence[Optional[Key]],
                      columns: Callable[[List[Key]], Any], price: Optional[Pricer],
                      path_names: Callable[[Key], Tuple[str, ...]],
                      more: Sequence[Tuple[int, Key]] = (),
                      warm_pairs: Optional[np.ndarray] = None,
                      start: Optional[Start] = None) -> MaxFlowResult:
    """Solve ``p`` over a model's column family.

    ``first[i]``: pair i's starting column key (``None``: the pair has none); ``more``: further
    starting columns as ``(pair, key)``; ``columns(keys)``: their arc usage (CSR, columns x
    arcs); ``price(y)``: see :data:`Pricer` (``None``: no generation, the starting columns are
    the model); ``path_names(key)``: the column as router names.

    The result lists every pool column (those that never entered the LP with zero flow), so a
    fixed-column model (ecmp, mptcp) reports every one of its columns as before sifting.

    ``warm_pairs`` (a warm start, e.g. from the optimum of a network before a failure): the
    first LP holds only the columns of these pairs (a bool mask over the pairs); every other
    column waits in the pool and enters when it prices out, so the optimum is the same.

    ``start`` (a :class:`Start`: an optimum's carried to the network after a failure,
    :meth:`Snapshot.carry`): its pool columns join ``first`` and ``more``; the first LP is the
    old final LP (its ghosts held at zero, the removed arcs' rows at capacity 0) from the old
    basis; the stop rule is the same, so the optimum is. With :attr:`Problem.keep_state` the result
    carries its own :class:`Snapshot` (:attr:`MaxFlowResult.state`).
    """
    clock = p.clock
    t0 = time.perf_counter()
    deadline = None if p.time_limit is None else t0 + p.time_limit
    npairs = p.npairs
    if start is not None:  # the old network's capacity rows, the removed arcs' at 0
        cap = np.zeros(start.usage.shape[1])
        cap[start.arc_rows] = p.capacity
        p.arc_rows, p.row_capacity = start.arc_rows, cap
    pool = _Pool(p.capacity_rows)  # (its usage by LP row)

    def usage(keys: List[Key]) -> Any:
        """Columns' usage as the pool holds it: by LP row."""
        got = columns(keys)
        if p.arc_rows is None:
            return got
        from scipy.sparse import csr_matrix

        got = got.tocsr()
        return csr_matrix((got.data, p.arc_rows[got.indices], got.indptr),
                          shape=(got.shape[0], p.capacity_rows))

    if start is not None:
        pool.add(start.owner, start.keys, start.usage)
        pool.out = start.out.copy()
        if start.new_keys:
            pool.add(start.new_owner, start.new_keys, start.new_usage)
    owner0 = [i for i, q in enumerate(first) if q is not None] + [i for i, _ in more]
    keys0: List[Key] = [q for q in first if q is not None] + [q for _, q in more]
    if keys0:
        pool.add(owner0, keys0, usage(keys0))
    t0 = clock.add("paths", t0)
    lp = p.new_model()
    batch = sift_batch(lp.num_rows)
    order: List[int] = []  # pool index of each LP column

    def enter(idx: np.ndarray, upper: Optional[np.ndarray] = None) -> None:
        idx = np.sort(idx)
        pool.in_lp[idx] = True
        order.extend(idx.tolist())
        p.add_usage(lp, pool.rows(idx), pool.owner[idx], upper=upper)

    if start is not None:
        # the old final LP as it was, its columns out held at zero (the recomputed ones wait:
        # entering at once, before the dual simplex has restored feasibility, cost ecmp 1.4x
        # on Kdl), from the old basis
        first_lp = np.flatnonzero(start.in_lp)
        enter(first_lp, np.where(start.out[first_lp], 0.0, np.inf))
        if start.cols is not None and start.rows is not None:
            lp.set_basis(start.cols[first_lp], start.rows)
    elif warm_pairs is not None:
        enter(np.flatnonzero(np.asarray(warm_pairs, dtype=bool)[pool.owner]))
    elif len(pool) <= batch:
        enter(np.arange(len(pool)))
    else:  # the columns using the least capacity first (price under y = 1 / capacity)
        cost = pool.prices(1.0 / np.maximum(p.capacity, 1e-300))
        enter(np.lexsort((np.arange(len(pool)), cost))[:batch])
    iterations, gap, converged = 0, math.nan, False
    while True:
        res = lp.solve(time_limit=p.remaining(deadline))
        t0 = clock.add("lp", t0)
        iterations += 1
        if not res.ok:
            return p.failed(label, res, iterations)
        y_rows, y, z = p.duals(res.duals)  # y: by arc of p.topo, for the oracle
        waiting = np.flatnonzero(~pool.in_lp & ~pool.out)
        reduced = pool.prices(y_rows)[waiting] - (1.0 - z[pool.owner[waiting]])
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
                if pool.has(i, q):
                    continue  # numerically tied with a column already in: nothing new
                new_keys.append(q)
                new_owner.append(i)
            t0 = clock.add("pricing", t0)
            if new_keys:
                at = len(pool)
                pool.add(new_owner, new_keys, usage(new_keys))
                t0 = clock.add("paths", t0)
                entering = np.arange(at, len(pool))
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
        if len(entering) > batch:  # the most negative first, ties by pool order
            entering = entering[np.lexsort((entering, reduced))[:batch]]
        enter(entering)
        t0 = clock.add("paths", t0)
    if p.write_lp:  # the model's whole LP: the pool columns that never entered too
        rest = np.flatnonzero(~pool.in_lp)
        if len(rest):
            enter(rest)
        p.write_model(lp)
    at_lp = np.asarray(order[:len(res.x)], dtype=np.int64)
    x = np.zeros(len(pool))
    x[at_lp] = np.asarray(res.x)
    pf = np.bincount(pool.owner, weights=x, minlength=npairs)
    status = "optimal" if converged else "iteration_limit"
    state = None
    if p.keep_state and start is None:  # (a start's LP rows are another network's arcs)
        final = lp.basis()
        cols = None
        if final is not None:  # a pool column never in the LP: at zero
            cols = np.zeros(len(pool), dtype=np.int8)
            cols[at_lp] = final[0][:len(at_lp)]
        in_lp = np.zeros(len(pool), dtype=bool)
        in_lp[at_lp] = True
        state = Snapshot(list(pool.keys), pool.owner.copy(), pool.usage(), in_lp, cols,
                         None if final is None else final[1][:lp.num_rows],
                         (p.S.copy(), p.T.copy()),
                         None if p.demands is None else p.demands * p.scale)
    # named when first read: a study reading only values never pays for the names
    keys, owner = pool.keys, pool.owner
    if pool.out.any():  # a start's columns out (at zero) are not this network's columns
        live = np.flatnonzero(~pool.out)
        keys, owner, x = _Subset(keys, live), owner[live], x[live]
    paths = LazyNames(keys, path_names)
    return MaxFlowResult(float(res.objective), label, None, p.names, paths,  # type: ignore[arg-type]
                         x, pf, iterations, len(x), gap, status, "", clock.t, p.solver,
                         owner.copy(), keys=keys, state=state, duals=(y, z))

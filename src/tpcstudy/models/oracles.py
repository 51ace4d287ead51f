"""The column oracles of both LPs (max-flow, :mod:`.maxflow`; minimum MLU, :mod:`.mlu`): one
home for what a forwarding model is to a column generation, so a model is written once and both
objectives get it (docs/method.md §4, §4b).

- :data:`Key`: a column's identity within its pair or demand: an sr-path's routers ``(s, w1,
  ..., t)`` (ecmp, sr), or a concrete path's arc ids (multipath, mcf, mptcp);
- arc usage ``r(a, p)`` of columns as a sparse matrix (columns x arcs): :func:`sr_usage` (the
  sum of the segments' ECMP ratios) and :func:`arc_usage` (1 on each arc of a path);
- :class:`Oracle`: a model's pricing under arc prices ``y``: each pair's cheapest column, with
  the search cut at a limit (sr: the segment DP runs only where the cheapest path is already
  below it), and the column's routers;
- :data:`PRICE_TOL`, the one reduced-cost tolerance, and :func:`capacity_scale`, the one unit
  both LPs count capacity and demand in.
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .. import paths as _paths
from ..topology import Topology

__all__ = ["PRICE_TOL", "Key", "PRICED", "Oracle", "ArcPaths", "SegmentRatios", "sr_usage",
           "arc_usage", "rows_of", "capacity_scale", "crossing"]

#: Reduced-cost tolerance of both column generations: a column enters iff its price is below
#: its pair's threshold by more than this (max-flow: ``1 - z - PRICE_TOL``; MLU: relative to
#: ``max(1, |z|)``).
PRICE_TOL = 1e-9
#: A column's identity: an sr-path's routers (source, waypoints, target), or a concrete path's
#: arc ids.
Key = Tuple[int, ...]
#: The models :class:`Oracle` prices.
PRICED = ("sr", "multipath", "mcf")


def capacity_scale(topo: Topology) -> float:
    """The unit both LPs count capacity (and demand) in: the median of the positive finite arc
    capacities, so that the LP's numbers are near 1 whatever the input's unit (bit/s, Tbit/s,
    1e-9). HiGHS's tolerances are absolute: without it a Tbit/s or a 1e-9 unit changes the
    answer."""
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    ok = cap[np.isfinite(cap) & (cap > 0)]
    if ok.size == 0:
        return 1.0
    ok = np.sort(ok)  # the median, as np.median gives it (the mean of the middle two), faster
    h = len(ok) // 2
    scale = float(ok[h]) if len(ok) % 2 else float((ok[h - 1] + ok[h]) / 2)
    return scale if math.isfinite(scale) and scale > 0 else 1.0


def crossing(off: np.ndarray, arcs: np.ndarray, amap: np.ndarray) -> np.ndarray:
    """Which rows of a CSR (``off`` offsets, ``arcs`` entries, arc ids) hold an arc that
    ``amap`` removes (maps to -1, as :func:`tpcstudy.topology.without_link_ids` gives)."""
    out = np.zeros(len(off) - 1, dtype=bool)
    has = np.diff(off) > 0
    out[has] = np.add.reduceat((amap[arcs] < 0).astype(np.int64), off[:-1][has]) > 0
    return out


def _gather(off: np.ndarray, pos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Offsets of the CSR rows ``pos`` taken in that order, and the entries' indices."""
    cnt = off[pos + 1] - off[pos]
    new_off = np.r_[0, np.cumsum(cnt)].astype(np.int64)
    idx = np.repeat(off[pos] - new_off[:-1], cnt) + np.arange(int(new_off[-1]), dtype=np.int64)
    return new_off, idx


class SegmentRatios:
    """The ECMP ratios of segments ``u -> v`` already computed on one topology (a CSR by
    segment code ``u * n + v``, codes ascending): :func:`sr_usage` computes only the segments
    it lacks. :meth:`after_failure` keeps, for the topology without some links, the segments
    whose DAG crossed none of them: their shortest paths all survive at the same length and no
    new one appears (removing links never shortens a path), so their DAG and ratios are the
    same (arc ids renumbered)."""

    def __init__(self, topo: Topology) -> None:
        self.n, self.print = topo.num_nodes, self.fingerprint(topo)
        self._topo: Optional[Topology] = topo  # the last topology checked (by identity)
        self.codes = np.zeros(0, dtype=np.int64)
        self.off = np.zeros(1, dtype=np.int64)
        self.arcs = np.zeros(0, dtype=np.int32)
        self.fr = np.zeros(0)
        #: after a failure: the intact network's ratios and the arc map, read when asked
        self._parent: Optional["SegmentRatios"] = None
        self._amap = np.zeros(0, dtype=np.int64)

    @staticmethod
    def fingerprint(topo: Topology) -> Tuple[int, int, int]:
        """What the ratios depend on: routers, links and IGP weights."""
        return (topo.num_nodes, topo.num_links,
                hash((topo.link_u.tobytes(), topo.link_v.tobytes(), topo.arc_weight.tobytes())))

    def __len__(self) -> int:
        if self._parent is None:
            return len(self.codes)
        p = self._parent
        mine = np.isin(p.codes, self.codes)
        return len(self.codes) + int((~crossing(p.off, p.arcs, self._amap) & ~mine).sum())

    def ratios(self, topo: Topology, codes: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``segment_ratios`` of the segments ``codes`` (ascending, distinct)."""
        if topo is not self._topo:
            if self.fingerprint(topo) != self.print:
                raise ValueError(f"segment ratios of another topology than {topo.name}")
            self._topo = topo
        hit = self._has(codes)
        if not hit.all() and self._parent is not None:  # what the failure left whole
            self._from_parent(codes[~hit])
            hit = self._has(codes)
        if not hit.all():
            miss = codes[~hit]
            n = self.n
            off, arcs, fr = _paths.segment_ratios(topo, (miss // n).astype(np.int32),
                                                  (miss % n).astype(np.int32))
            self._merge(miss, off, arcs, fr)
        off, idx = _gather(self.off, np.searchsorted(self.codes, codes))
        return off, self.arcs[idx], self.fr[idx]

    def _has(self, codes: np.ndarray) -> np.ndarray:
        if not len(self.codes):
            return np.zeros(len(codes), dtype=bool)
        pos = np.minimum(np.searchsorted(self.codes, codes), len(self.codes) - 1)
        return np.asarray(self.codes[pos] == codes, dtype=bool)


    def _from_parent(self, codes: np.ndarray) -> None:
        """Take ``codes`` from the intact network's ratios where their DAG survived whole."""
        p = self._parent
        assert p is not None
        found = p._has(codes)
        if not found.any():
            return
        codes = codes[found]
        off, idx = _gather(p.off, np.searchsorted(p.codes, codes))
        arcs = p.arcs[idx]
        keep = np.flatnonzero(~crossing(off, arcs, self._amap))
        if len(keep):
            koff, kidx = _gather(off, keep)
            self._merge(codes[keep], koff, self._amap[arcs[kidx]], p.fr[idx][kidx])

    def _merge(self, codes: np.ndarray, off: np.ndarray, arcs: np.ndarray, fr: np.ndarray) -> None:
        all_codes = np.concatenate([self.codes, codes])
        all_off = np.concatenate([self.off[:-1], off[:-1] + self.off[-1], [self.off[-1] + off[-1]]])
        all_arcs = np.concatenate([self.arcs, np.asarray(arcs, dtype=np.int32)])
        all_fr = np.concatenate([self.fr, fr])
        order = np.argsort(all_codes, kind="stable")
        new_off, idx = _gather(all_off, order)
        self.codes, self.off, self.arcs, self.fr = all_codes[order], new_off, all_arcs[idx], all_fr[idx]

    def after_failure(self, failed: Topology, amap: np.ndarray) -> "SegmentRatios":
        """The ratios still right on ``failed`` (this topology without some links; ``amap``:
        each arc's id there, -1 for a removed one, as :func:`tpcstudy.topology.without_link_ids`
        gives): read from this one segment by segment as they are asked for (a scenario asks
        for few), a segment whose DAG crossed a removed arc computed afresh."""
        if self._parent is not None:  # a failed network failing further: take in all first
            p = self._parent
            self._from_parent(p.codes[~self._has(p.codes)])
            self._parent = None
        out = SegmentRatios(failed)
        out._parent, out._amap = self, np.asarray(amap, dtype=np.int64)
        return out


def sr_usage(topo: Topology, seqs: Sequence[Key], known: Optional[SegmentRatios] = None,
             routed: bool = False) -> Any:
    """Arc usage of sr-paths (their routers: source, waypoints, target) as a scipy CSR matrix
    (paths x arcs): the sum of the segments' ECMP ratios, in one batch of the core (``known``:
    ratios computed before, kept and added to). ``routed``: a path with a segment the IGP
    does not route (its other segments' usage is no column) gets an empty row."""
    from scipy.sparse import csr_matrix

    n, m2 = topo.num_nodes, 2 * topo.num_links
    nseg = np.asarray([len(q) - 1 for q in seqs], dtype=np.int64)
    u = np.fromiter((q[i] for q in seqs for i in range(len(q) - 1)), dtype=np.int64)
    v = np.fromiter((q[i + 1] for q in seqs for i in range(len(q) - 1)), dtype=np.int64)
    if not len(u):
        return csr_matrix((len(seqs), m2))
    uniq, inv = np.unique(u * n + v, return_inverse=True)
    if known is not None:
        off, arcs, fr = known.ratios(topo, uniq)
    else:
        off, arcs, fr = _paths.segment_ratios(topo, (uniq // n).astype(np.int32),
                                              (uniq % n).astype(np.int32))
    cnt = np.diff(off)[inv]  # entries of each segment of each path
    if routed and (cnt == 0).any():
        path_of = np.repeat(np.arange(len(seqs)), nseg)
        bad = np.bincount(path_of, weights=(cnt == 0), minlength=len(seqs)) > 0
        cnt = np.where(bad[path_of], 0, cnt)
    first = np.repeat(off[:-1][inv], cnt)
    idx = first + np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    col = np.repeat(np.repeat(np.arange(len(seqs)), nseg), cnt)
    out = csr_matrix((fr[idx], (col, arcs[idx].astype(np.int64))), shape=(len(seqs), m2))
    out.sum_duplicates()
    return out


def arc_usage(m2: int, keys: Sequence[Key]) -> Any:
    """Arc usage of concrete paths given by their arc ids: 1 on each arc (CSR, paths x arcs),
    each row's arcs in the path's order (a simple path crosses no arc twice). The order is
    kept: it is the order of the column's entries in the LP, which the simplex's pivots
    follow."""
    from scipy.sparse import csr_matrix

    lens = np.asarray([len(a) for a in keys], dtype=np.int64)
    flat = np.fromiter((a for q in keys for a in q), dtype=np.int64, count=int(lens.sum()))
    return csr_matrix((np.ones(len(flat)), flat, np.r_[0, np.cumsum(lens)]),
                      shape=(len(keys), m2))


def rows_of(usage: Any) -> List[Tuple[np.ndarray, np.ndarray]]:
    """The rows of a usage matrix as ``(arcs, r)`` pairs (the max-flow LP's columns)."""
    ptr, ind, dat = usage.indptr, usage.indices.astype(np.int64), usage.data
    return [(ind[a:b], dat[a:b]) for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]


class Oracle:
    """A model's column family for the pairs ``(S[i], T[i])``: pricing, arc usage, routers.

    :meth:`price` gives, under arc prices ``y >= 0``, each pair's cheapest column value where it
    is below ``limit`` (``inf`` elsewhere, and where the pair has no column), and a function
    giving those columns' keys. Models: ``sr`` (at most ``k`` segments; ``ecmp`` is ``sr`` with
    k = 1, never priced), ``multipath`` (the cheapest single shortest path, on each pair's DAG),
    ``mcf`` (the cheapest path, Dijkstra on ``y + 1e-12`` so that zero-dual arcs stay in the
    sparse graph).
    """

    def __init__(self, topo: Topology, S: np.ndarray, T: np.ndarray, model: str,
                 k: int = 1, segments: Optional[SegmentRatios] = None) -> None:
        if model not in PRICED:
            raise ValueError(f"no column oracle for model {model!r}")
        self.topo, self.S, self.T, self.model, self.k = topo, S, T, model, k
        #: ECMP ratios of the segments met so far (sr's columns share them across rounds)
        self.segments = segments if segments is not None else SegmentRatios(topo)
        self.m2 = 2 * topo.num_links
        self.ap = ArcPaths(topo) if model != "sr" else None
        self.arc_src = topo.arc_src.tolist()
        self.arc_dst = topo.arc_dst.tolist()

    def price(self, y: np.ndarray, limit: Any = math.inf
              ) -> Tuple[np.ndarray, Callable[[np.ndarray], List[Key]]]:
        """``(values, keys)``: each pair's cheapest column price under ``y`` where below
        ``limit`` (a number or one per pair; ``inf`` elsewhere), and ``keys(idx)`` the columns
        of the pairs ``idx`` (each with a finite value)."""
        topo, S, T = self.topo, self.S, self.T
        if self.model == "sr":
            # no sr-path costs less than the cheapest path: the segment DP runs only for the
            # pairs whose cheapest path is below the limit (few after the first rounds). Both
            # calls run on the process's core thread budget (tpcstudy.paths.default_threads).
            lim = np.broadcast_to(np.asarray(limit, dtype=np.float64), S.shape)
            vals = _paths.path_price_bounds(topo, y, S, T, float(lim.max()) if len(lim) else 0.0)
            live = np.flatnonzero(vals < lim)
            vals[np.setdiff1d(np.arange(len(S)), live)] = math.inf
            off = wps = np.zeros(1, dtype=np.int64)
            if live.size:
                v, off, wps = _paths.best_sr_paths(topo, _paths.segment_costs(topo, y), S[live],
                                                   T[live], self.k)
                vals[live] = v
            pos = np.full(len(S), -1, dtype=np.int64)
            pos[live] = np.arange(live.size)

            def sr_keys(idx: np.ndarray) -> List[Key]:
                o, w, s_, t_ = off.tolist(), wps.tolist(), S.tolist(), T.tolist()
                return [(s_[i],) + tuple(w[o[j]:o[j + 1]]) + (t_[i],)
                        for i, j in zip(idx.tolist(), pos[idx].tolist())]
            return vals, sr_keys
        ap = self.ap
        assert ap is not None
        if self.model == "multipath":
            cost, nxt = _paths.dag_min_costs(topo, y)
            return cost[S, T], lambda idx: ap.from_next(nxt, S[idx], T[idx])
        from scipy.sparse.csgraph import dijkstra  # ~80 ms to import: only mcf needs it

        w = y + 1e-12
        lim = np.asarray(limit, dtype=np.float64)
        vals = (_paths.path_price_bounds(topo, w, S, T) if lim.ndim == 0 and math.isinf(lim)
                else _paths.path_price_bounds(topo, w, S, T, float(lim.max())))

        def mcf_keys(idx: np.ndarray) -> List[Key]:
            s, t = S[idx], T[idx]
            sources = np.unique(s)
            if not len(sources):
                return []
            _, pred = dijkstra(ap.pricing_graph(w), directed=True, indices=sources,
                               return_predecessors=True)
            return ap.from_pred(pred, np.searchsorted(sources, s), s, t)
        return vals, mcf_keys

    def usage(self, keys: Sequence[Key], routed: bool = False) -> Any:
        """Arc usage of columns (CSR, columns x arcs; ``routed``: see :func:`sr_usage`)."""
        return (sr_usage(self.topo, keys, self.segments, routed) if self.model == "sr"
                else arc_usage(self.m2, keys))

    def routers(self, key: Key) -> Key:
        """A column's routers: an sr-path's (source, waypoints, target), a path's every one."""
        if self.model == "sr":
            return key
        return (self.arc_src[key[0]],) + tuple(self.arc_dst[a] for a in key)

    def names(self, key: Key) -> Tuple[str, ...]:
        """A column's routers by name."""
        names = self.topo.names
        return tuple(names[v] for v in self.routers(key))


class ArcPaths:
    """Arc lists of concrete router paths, recovered from a pricing oracle's predecessor data
    (``pred[row, v]``: the node before ``v``) or next-arc data (``nxt[u, t]``: the first arc
    from ``u`` towards ``t``); many pairs at once, one numpy step per hop."""

    #: Largest router count with a dense ``(n, n)`` arc-id table (4,096: 64 MiB of int32).
    DENSE = 4096

    def __init__(self, topo: Topology) -> None:
        self.n = topo.num_nodes
        self.src, self.dst = topo.arc_src.astype(np.int64), topo.arc_dst.astype(np.int64)
        code = self.src * self.n + self.dst
        self.order = np.argsort(code, kind="stable")
        self.code = code[self.order]
        self.parallel = bool(len(code) > 1 and np.any(self.code[1:] == self.code[:-1]))
        # The arc id of u -> v by one lookup (parallel arcs: the smallest id, written last),
        # instead of a binary search per hop.
        self.table: Optional[np.ndarray] = None
        if self.n <= self.DENSE and len(code):
            table = np.zeros(self.n * self.n, dtype=np.int64)
            rev = np.arange(len(code) - 1, -1, -1)
            table[code[rev]] = rev
            self.table = table

    def pricing_graph(self, w: np.ndarray) -> Any:
        """The scipy sparse graph of arc lengths ``w`` (all > 0) for a path search. With
        parallel arcs (``--links multigraph``) it holds the cheapest arc of each router pair
        (smallest id on ties: scipy would add parallel entries up), and the paths recovered
        after it (:meth:`from_pred`) use those arcs."""
        from scipy.sparse import csr_matrix  # ~80 ms to import; only path pricing needs it

        src, dst = self.src, self.dst
        if self.parallel:
            code = src * self.n + dst
            o = np.lexsort((np.arange(len(code)), w, code))
            c = code[o]
            best = o[np.r_[True, c[1:] != c[:-1]]]
            if self.table is not None:
                self.table[code[best]] = best
            else:
                self.code, self.order = code[best], best
            src, dst, w = src[best], dst[best], w[best]
        return csr_matrix((w, (src, dst)), shape=(self.n, self.n))

    def _arc(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Arc ids of ``u -> v`` (entries that are no arc give some arc: callers mask them)."""
        if self.table is not None:
            return self.table[u * self.n + v]
        i = np.searchsorted(self.code, u * self.n + v)
        return self.order[np.minimum(i, len(self.code) - 1)]

    @staticmethod
    def _keys(steps: List[np.ndarray], reverse: bool) -> List[Key]:
        if not steps:
            return []
        m = np.stack(steps, axis=1)  # a pair's arcs are a prefix of its row (-1 after)
        valid = m >= 0
        lengths = valid.sum(axis=1)
        flat = m[valid]  # row by row, each row's prefix in order
        ends = np.cumsum(lengths)
        starts = ends - lengths
        if reverse:  # each row's prefix backwards: position j of row i reads its L_i - 1 - j
            row = np.repeat(np.arange(len(lengths)), lengths)
            flat = flat[starts[row] + ends[row] - 1 - np.arange(len(flat))]
        items = flat.tolist()
        return [tuple(items[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]

    def from_pred(self, pred: np.ndarray, rows: np.ndarray, S: np.ndarray, T: np.ndarray
                  ) -> List[Key]:
        """The path of each pair ``(S[i], T[i])`` in ``pred[rows[i]]`` (all reachable)."""
        cur, s = np.asarray(T, dtype=np.int64).copy(), np.asarray(S, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        steps: List[np.ndarray] = []
        active = cur != s
        while active.any():
            u = np.where(active, pred[rows, cur], cur).astype(np.int64)
            steps.append(np.where(active, self._arc(u, cur), -1))
            cur = u
            active = cur != s
        return self._keys(steps, True) if steps else [() for _ in range(len(cur))]

    def from_next(self, nxt: np.ndarray, S: np.ndarray, T: np.ndarray) -> List[Key]:
        """The path of each pair ``(S[i], T[i])`` following ``nxt`` (all reachable)."""
        cur, t = np.asarray(S, dtype=np.int64).copy(), np.asarray(T, dtype=np.int64)
        steps: List[np.ndarray] = []
        active = cur != t
        while active.any():
            a = np.where(active, nxt[cur, t], -1).astype(np.int64)
            steps.append(a)
            cur = np.where(active, self.dst[np.maximum(a, 0)], cur)
            active = cur != t
        return self._keys(steps, False) if steps else [() for _ in range(len(cur))]

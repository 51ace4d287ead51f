"""Helpers shared by the tests (the fixtures built on them are in conftest.py).

- where the data sets are (found the way the product finds them: the installed data,
  ``TPCSTUDY_ZOO_MIRROR``, ``TPCSTUDY_REPETITA_MIRROR``);
- a small column-generation LP family (:func:`cg_instance`, :func:`column_generation`): every LP
  backend must reach the same optimum on it, and ``scripts/bench_lp.py`` times HiGHS on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict

import networkx as nx
import numpy as np

from tpcstudy.lp import LPModel


# ----------------------------------------------------------------------------- LP instances
@dataclass
class CGInstance:
    """A column-generation test instance: 2-segment SR paths on a random graph.

    ``arc_cap[l]`` are the row uppers; ``path_arcs(u, v)`` the arcs of the shortest
    ``u -> v`` path; pairs ``(s, t)`` are priced over ``s -> w -> t`` for every ``w``.
    """

    n: int
    arc_cap: np.ndarray
    sp_offsets: np.ndarray  # CSR over u * n + v
    sp_arcs: np.ndarray
    pairs: np.ndarray  # (P, 2)
    extra: Dict[str, Any] = field(default_factory=dict)

    def path_arcs(self, u: int, v: int) -> np.ndarray:
        k = u * self.n + v
        return self.sp_arcs[self.sp_offsets[k]:self.sp_offsets[k + 1]]


def cg_instance(n: int = 60, degree: int = 4, pair_fraction: float = 0.3,
                seed: int = 0) -> CGInstance:
    """Build a reproducible :class:`CGInstance` (a connected random graph, hop shortest paths).

    Parameters
    ----------
    n, degree
        Nodes and (approximate) degree of a connected Watts-Strogatz graph.
    pair_fraction
        Fraction of the ``n (n - 1)`` ordered pairs used as commodities.
    seed
        Seed of the graph, the capacities and the pairs.
    """
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(n, degree, 0.3, seed=seed)
    arcs = sorted(g.edges()) + sorted((v, u) for u, v in g.edges())
    arc_id = {a: i for i, a in enumerate(arcs)}
    cap = rng.choice([1.0, 2.5, 10.0], size=len(arcs))
    offsets = [0]
    flat: list = []
    for u in range(n):
        pred = nx.predecessor(g, u)
        for v in range(n):
            path = []
            w = v
            while w != u and pred[w]:
                p = min(pred[w])  # deterministic tie-break
                path.append(arc_id[(p, w)])
                w = p
            flat.extend(reversed(path))
            offsets.append(len(flat))
    all_pairs = np.array([(s, t) for s in range(n) for t in range(n) if s != t])
    m = max(1, int(np.ceil(pair_fraction * len(all_pairs))))
    pairs = all_pairs[np.sort(rng.choice(len(all_pairs), m, replace=False))]
    return CGInstance(n, cap, np.array(offsets, dtype=np.int64), np.array(flat, dtype=np.int64),
                      pairs)


def column_generation(inst: CGInstance, model: LPModel, *, batch: int = 1,
                      max_rounds: int = 1000) -> Dict[str, Any]:
    """Solve the max-flow LP of ``inst`` over 2-segment SR paths by column generation.

    A path ``s -> w -> t`` uses arc ``l`` ``r(l, p)`` times (0, 1 or 2), so its reduced cost
    ``1 - cost[s, w] - cost[w, t]`` is exact and the result is the LP optimum over all
    2-segment paths (a backend-independent number).

    Returns a dict with ``objective``, ``rounds``, ``columns``, ``solve_seconds`` (sum over
    the solves; ``first_seconds`` + ``resolve_seconds``) and ``status``.  ``batch`` columns are added per improving pair and round.
    """
    n = inst.n
    off, arcs = inst.sp_offsets, inst.sp_arcs
    model.add_rows(inst.arc_cap)

    def add(paths: list) -> None:
        cols = [np.unique(np.concatenate([inst.path_arcs(s, w), inst.path_arcs(w, t)]),
                          return_counts=True) for s, w, t in paths]
        starts = np.concatenate([[0], np.cumsum([r.size for r, _ in cols])])
        model.add_columns(np.ones(len(cols)), starts, np.concatenate([r for r, _ in cols]),
                          np.concatenate([c for _, c in cols]).astype(np.float64))

    add([(s, s, t) for s, t in inst.pairs])
    rounds = 0
    res = model.solve()
    times = [res.seconds]
    lens = np.diff(off)
    while res.ok and rounds < max_rounds:
        rounds += 1
        y = res.duals
        # cost[u, v] = sum of duals over the (unique-arc) shortest path u -> v
        seg = np.zeros(off.size - 1)
        nz = lens > 0
        seg[nz] = np.add.reduceat(y[arcs], off[:-1][nz])
        cost = seg.reshape(n, n)
        new = []
        for s, t in inst.pairs:
            via = cost[s, :] + cost[:, t]  # exact: r(l, p) counts repeated arcs
            for w in np.argsort(via, kind="stable")[:batch]:
                if via[w] < 1 - 1e-9:
                    new.append((int(s), int(w), int(t)))
        if not new:
            break
        add(new)
        res = model.solve()
        times.append(res.seconds)
    return {"objective": res.objective, "status": res.status, "rounds": rounds,
            "columns": model.num_cols, "solve_seconds": float(sum(times)),
            "first_seconds": times[0], "resolve_seconds": float(sum(times[1:]))}

"""Flows on arcs as simple paths with their shares (the routings of :mod:`.mlu`): one unit of
ECMP traffic on a demand's shortest-path DAG (:func:`dag_paths`), and a single source's
flow to several targets, as the arc LP of :mod:`.mlu_arc` gives it (:func:`source_paths`).

Both take the path of the largest remaining arc flows first and take its bottleneck out, so
the same flow gives the same paths; neither calls the path core.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

__all__ = ["dag_paths", "source_paths", "ZERO_TOL"]

#: ``|r_p(a) - r_key(a)|`` at or below this is rounding (ratios are sums of fractions <= 1).
ZERO_TOL = 1e-12


def dag_paths(arc_src: List[int], arc_dst: List[int], s: int, t: int, arcs: List[int],
              fr: List[float]) -> List[Tuple[Tuple[int, ...], float]]:
    """One unit of ECMP traffic ``s -> t`` (``fr`` per arc of its DAG) as simple paths with
    their shares: the path of the largest remaining arc shares first, its bottleneck taken out,
    until nothing leaves ``s`` (at most one path per arc)."""
    if all(f >= 1.0 - ZERO_TOL for f in fr):  # a single shortest path
        nxt = {arc_src[a]: arc_dst[a] for a in arcs}
        seq, u = [s], s
        while u != t:
            u = nxt[u]
            seq.append(u)
        return [(tuple(seq), 1.0)]
    rest = dict(zip(arcs, fr))
    out_of: Dict[int, List[int]] = {}
    for a in arcs:
        out_of.setdefault(arc_src[a], []).append(a)
    out: List[Tuple[Tuple[int, ...], float]] = []
    while True:
        u, seq, used = s, [s], []
        while u != t:
            live = [a for a in out_of.get(u, ()) if rest[a] > ZERO_TOL]
            if not live:
                break
            a = max(live, key=lambda b: (rest[b], -b))
            used.append(a)
            u = arc_dst[a]
            seq.append(u)
        if u != t or not used:
            return out
        f = min(rest[a] for a in used)
        for a in used:
            rest[a] -= f
        out.append((tuple(seq), f))


def source_paths(arc_src: Sequence[int], arc_dst: Sequence[int], s: int,
                 flow: Dict[int, float], need: Dict[int, float], tol: float
                 ) -> Dict[int, List[Tuple[Tuple[int, ...], float]]]:
    """The flow of one source ``s`` (``flow[a] > 0`` per arc ``a``; into each target ``t`` at
    least ``need[t]`` more than out of it, as conservation gives) as simple paths per target:
    ``{t: [(arcs, amount), ...]}``, each target's amounts adding up to ``need[t]`` up to the
    flow's rounding. Per target, traced back from it along the incoming arc of the largest
    remaining flow (ties: the smaller arc id) to ``s``; the path's bottleneck is taken out.
    A cycle met on the way carries nothing to anyone: its bottleneck is taken out of it and
    the trace goes on. Remaining flows at or below ``tol`` count as none."""
    rest = {a: f for a, f in flow.items() if f > tol}
    into: Dict[int, List[int]] = {}
    for a in sorted(rest):
        into.setdefault(arc_dst[a], []).append(a)
    out: Dict[int, List[Tuple[Tuple[int, ...], float]]] = {}
    for t in sorted(need):
        left = need[t]
        got: List[Tuple[Tuple[int, ...], float]] = []
        while left > tol:
            u, back, at = t, [], {t: 0}
            while u != s:
                live = [a for a in into.get(u, ()) if rest[a] > tol]
                if not live:
                    break
                a = max(live, key=lambda b: (rest[b], -b))
                back.append(a)
                u = arc_src[a]
                if u in at:  # a cycle: back[at[u]:] returns to u
                    cyc = back[at[u]:]
                    f = min(rest[b] for b in cyc)
                    for b in cyc:
                        rest[b] -= f
                    del back[at[u]:]
                    at = {k: v for k, v in at.items() if v <= at[u]}
                else:
                    at[u] = len(back)
            if u != s or not back:
                break
            f = min(left, min(rest[a] for a in back))
            for a in back:
                rest[a] -= f
            left -= f
            got.append((tuple(reversed(back)), f))
        out[t] = got
    return out

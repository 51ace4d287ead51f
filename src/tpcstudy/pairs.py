"""Which router pairs a study looks at: ordered edge-router pairs and the heavy-hitter sample.

Both studies use these (docs/method.md §2, §4, §5): the max-flow study draws heavy hitters with
:func:`heavy_pairs`, the disjoint-path study enumerates :func:`router_pairs` and, for large
topologies, samples them with the same rule (:func:`sample_indices`).

**Heavy hitters** are the few source-destination pairs that carry most of the traffic; the study
models them as a uniformly random share of all ordered edge-router pairs. The command line gives
that share as a percent (``--heavy 1,10``); :func:`heavy_pairs` takes it only by keyword, as
``percent=`` or ``fraction=``, so a call can never mean 1 % when it says 1.
"""

from __future__ import annotations

import math
from typing import List, Literal, Optional, Tuple, Union, overload

import numpy as np

from .errors import UsageError
from .topology import Topology

__all__ = ["edge_router_pairs", "router_pairs", "heavy_pairs", "sample_indices", "PAIR_MODES",
           "ROUNDINGS", "heavy_rule"]

#: ``"edge"``: ordered pairs of distinct edge routers; ``"all"``: of distinct routers.
PAIR_MODES = ("edge", "all")
#: How ``share x #pairs`` becomes a count of heavy hitters (at least one): ``ceil`` is the
#: study's rule (docs/method.md §4); ``round`` (half up) is a variant that brackets the paper.
ROUNDINGS = ("ceil", "round")


def heavy_rule(*, ordered: bool = True, rounding: str = "ceil") -> str:
    """The sentence results record for how heavy hitters are drawn (the study's rule's sentence
    is the one results folders have always recorded)."""
    return (f"heavy_pairs: numpy default_rng(seed).choice of {rounding}(x * #pairs) "
            f"{'ordered' if ordered else 'unordered (source < target)'} edge-router pairs, "
            "sorted")


def edge_router_pairs(topo: Topology, routers: Optional[np.ndarray] = None) -> np.ndarray:
    """All ordered pairs of distinct edge routers (or of ``routers``, ids) as an ``(n, 2)``
    int32 array, sorted."""
    e = topo.edge_router_ids if routers is None else np.asarray(routers, dtype=np.int32)
    s, t = np.meshgrid(e, e, indexing="ij")
    mask = s != t
    return np.stack([s[mask], t[mask]], axis=1).astype(np.int32)


def router_pairs(topo: Topology, mode: str = "edge") -> Tuple[np.ndarray, np.ndarray]:
    """(sources, targets) of the ordered pairs of distinct edge routers (``"edge"``) or routers
    (``"all"``), in id order."""
    if mode not in PAIR_MODES:
        raise UsageError(f"unknown pairs mode {mode!r}; choose edge or all")
    pairs = edge_router_pairs(topo, None if mode == "edge" else np.arange(topo.num_nodes))
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def sample_indices(total: int, count: int, seed: int) -> np.ndarray:
    """``count`` distinct indices out of ``range(total)``, uniformly at random, sorted.

    The one sampling rule of the studies (heavy-hitter pairs, ``disjoint --max-pairs``):
    ``numpy.random.default_rng(seed).choice(total, count, replace=False)``, sorted.
    """
    return np.sort(np.random.default_rng(seed).choice(total, size=count, replace=False))


@overload
def heavy_pairs(topo: Topology, *, percent: Optional[float] = None,
                fraction: Optional[float] = None, seed: int,
                names: Literal[False] = False, ordered: bool = True,
                rounding: str = "ceil") -> np.ndarray: ...


@overload
def heavy_pairs(topo: Topology, *, percent: Optional[float] = None,
                fraction: Optional[float] = None, seed: int,
                names: Literal[True], ordered: bool = True,
                rounding: str = "ceil") -> List[Tuple[str, str]]: ...


def heavy_pairs(topo: Topology, *, percent: Optional[float] = None,
                fraction: Optional[float] = None, seed: int, names: bool = False,
                ordered: bool = True, rounding: str = "ceil"
                ) -> Union[np.ndarray, List[Tuple[str, str]]]:
    """A uniformly random sample of the ordered edge-router pairs: the heavy hitters.

    Give the share either as ``percent`` (in (0, 100], as ``--heavy`` on the command line) or
    as ``fraction`` (in (0, 1]); both are keyword-only, so ``heavy_pairs(topo, 1)`` cannot be
    written and a call always says which unit it means.

    The sample holds ``ceil(fraction * #pairs)`` pairs (at least one), is deterministic for
    (topology, share, seed) (the generator is seeded with ``seed``) and is returned sorted as an
    ``(n, 2)`` int32 array of router ids, or with ``names=True`` as a list of ``(source,
    target)`` router names (what every other call of the API takes and returns; both forms are
    accepted by :func:`~tpcstudy.max_flow`). Empty when the topology has fewer than two edge
    routers.

    ``ordered=False`` and ``rounding="round"`` are variants, not the study's rule: the sample is
    then drawn from the unordered pairs (each as source < target), or holds
    ``round(fraction * #pairs)`` pairs (half up, at least one). They bracket the TPC paper's
    numbers (``tpcstudy reproduce``).

    Raises
    ------
    UsageError
        Neither or both of ``percent`` and ``fraction``, or a value outside its range (a
        ``fraction`` above 1 is refused: it is most likely a percent).
    """
    if (percent is None) == (fraction is None):
        raise UsageError("heavy_pairs: give the share as percent= (0-100] or fraction= (0-1], "
                         "exactly one of them")
    if percent is not None:
        if not 0 < percent <= 100:
            raise UsageError(f"heavy-hitter percent {percent!r} must be in (0, 100]")
        share = percent / 100.0
    else:
        assert fraction is not None
        if not 0 < fraction <= 1:
            raise UsageError(f"heavy-hitter fraction {fraction!r} must be in (0, 1]"
                             + (f" (for {fraction:g} %, pass percent={fraction:g})"
                                if 1 < fraction <= 100 else ""))
        share = fraction
    if rounding not in ROUNDINGS:
        raise UsageError(f"heavy_pairs: rounding {rounding!r}: choose from {', '.join(ROUNDINGS)}")
    pairs = edge_router_pairs(topo)
    if not ordered:
        pairs = pairs[pairs[:, 0] < pairs[:, 1]]
    if len(pairs) > 0:
        x = share * len(pairs)
        count = max(1, math.ceil(x - 1e-9) if rounding == "ceil" else math.floor(x + 0.5 + 1e-9))
        pairs = pairs[sample_indices(len(pairs), count, seed)]
    if names:
        return [(topo.names[s], topo.names[t]) for s, t in pairs.tolist()]
    return pairs

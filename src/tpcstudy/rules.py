"""Capacity, IGP-weight and delay rules applied when a topology is built (docs/method.md §1).

Each rule returns the values and the sentence recorded in ``topo.meta`` (``capacity_rule``,
``weight_rule``), so every result says how its numbers were made.

- capacity ``uniform``: 1.0 per raw link (parallel links add up); ``zoo``/``file``: the file's
  speed, links without one get the median known speed of the topology, else 1 Gbit/s.
- weight ``hop``: 1; ``inverse-capacity``: (largest link capacity) / capacity; ``distance``:
  great-circle km, or hop for every link when some router of a link lacks coordinates;
  ``file``: the file's weights.
- delay: the file's delay, else the great-circle distance over the speed of light in fibre.
"""

from __future__ import annotations

import math
from typing import Sequence, Tuple

import numpy as np

from .errors import TopologyFormatError, UsageError

__all__ = ["CAPACITY_RULES", "WEIGHT_RULES", "LINK_RULES", "check_links", "FIBRE_KM_PER_MS",
           "DEFAULT_ZOO_SPEED", "EARTH_RADIUS_KM", "great_circle_km", "check_rules",
           "raw_capacities", "arc_weights", "fill_delays"]

CAPACITY_RULES = ("uniform", "zoo", "file")
WEIGHT_RULES = ("hop", "inverse-capacity", "distance", "file")
#: How parallel links are read (docs/method.md §1-2): ``merged`` collapses them into one link
#: (capacities add up), prunes the simple graph's 2-core and keeps its largest component;
#: ``multigraph`` keeps each as a link of its own (its own capacity, weight and ECMP share),
#: prunes by link count and keeps every component: the TPC paper's topology set.
LINK_RULES = ("merged", "multigraph")

#: Speed of light in fibre, km per ms (about 2/3 of c), used to turn distances into delays.
FIBRE_KM_PER_MS = 200.0
#: Capacity given to Zoo links without LinkSpeedRaw when the topology has no known speed at all.
DEFAULT_ZOO_SPEED = 1e9
EARTH_RADIUS_KM = 6371.0088


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance in km."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def check_rules(capacity: str, weight: str) -> None:
    """Raise :class:`~tpcstudy.errors.UsageError` for an unknown capacity or weight rule."""
    if capacity not in CAPACITY_RULES:
        raise UsageError(f"unknown capacity rule {capacity!r}; choose from "
                         f"{', '.join(CAPACITY_RULES)}")
    if weight not in WEIGHT_RULES:
        raise UsageError(f"unknown weight rule {weight!r}; choose from {', '.join(WEIGHT_RULES)}")


def check_links(links: str) -> None:
    """Raise :class:`~tpcstudy.errors.UsageError` for an unknown link rule."""
    if links not in LINK_RULES:
        raise UsageError(f"unknown link rule {links!r}; choose from {', '.join(LINK_RULES)}")


def raw_capacities(speeds: np.ndarray, capacity: str) -> Tuple[np.ndarray, str]:
    """Capacity of each raw link under ``capacity`` (the file's ``speeds``, nan when unknown),
    and the rule's sentence."""
    known = ~np.isnan(speeds)
    if capacity == "uniform":
        return np.ones(len(speeds)), "uniform: 1.0 per link"
    if known.any():
        fill = float(np.median(speeds[known]))
        fill_rule = "median known speed"
    else:
        fill, fill_rule = DEFAULT_ZOO_SPEED, "1 Gbit/s"
    cap = np.where(known, speeds, fill)
    return cap, (f"{capacity}: file speeds; {int((~known).sum())} of {len(speeds)} raw links "
                 f"filled with {fill_rule} ({fill:g})")


#: Largest sum of IGP weights a path may reach: far below the float range, so that sums of
#: shortest-path lengths (and their differences, compared for equal cost) stay finite and exact
#: enough.
MAX_PATH_WEIGHT = 1e15


def arc_weights(weight: str, arc_cap: np.ndarray, file_w: np.ndarray, link_u: np.ndarray,
                link_v: np.ndarray, lat: np.ndarray, lon: np.ndarray, nodes: Sequence[str],
                source: str) -> Tuple[np.ndarray, str]:
    """IGP weight of each arc under ``weight`` and the rule's sentence.

    ``file_w`` holds the file's weight per arc (nan when it has none); ``nodes`` and ``source``
    name the link and file in a :class:`~tpcstudy.errors.TopologyFormatError`. Weights whose
    path sums could exceed :data:`MAX_PATH_WEIGHT` (a path of ``len(nodes) - 1`` links of the
    largest weight) are refused.
    """
    w, rule = _arc_weights(weight, arc_cap, file_w, link_u, link_v, lat, lon, nodes, source)
    if len(w):
        longest = max(len(nodes) - 1, 1)
        i = int(np.argmax(w))
        if not np.isfinite(w[i]) or w[i] > MAX_PATH_WEIGHT / longest:
            raise TopologyFormatError(source, None, f"link {nodes[link_u[i // 2]]} - "
                                      f"{nodes[link_v[i // 2]]} has IGP weight {float(w[i])!r}: a path "
                                      f"of {longest} such links would weigh more than "
                                      f"{MAX_PATH_WEIGHT:g}, too much to add up exactly; scale "
                                      "the weights down")
    return w, rule


def _arc_weights(weight: str, arc_cap: np.ndarray, file_w: np.ndarray, link_u: np.ndarray,
                 link_v: np.ndarray, lat: np.ndarray, lon: np.ndarray, nodes: Sequence[str],
                 source: str) -> Tuple[np.ndarray, str]:
    m = len(link_u)
    if weight == "hop":
        return np.ones(2 * m), "hop: 1 per link"
    if weight == "inverse-capacity":
        ref = float(arc_cap.max()) if m else 1.0
        return ref / arc_cap, f"inverse-capacity: {ref:g} / capacity"
    if weight == "distance":
        ok = ~(np.isnan(lat[link_u]) | np.isnan(lon[link_u]) | np.isnan(lat[link_v])
               | np.isnan(lon[link_v]))
        if m and ok.all():
            km = np.array([great_circle_km(lat[u], lon[u], lat[v], lon[v])
                           for u, v in zip(link_u.tolist(), link_v.tolist())])
            km = np.maximum(km, 1e-3)  # co-located routers: a tiny positive weight
            return np.repeat(km, 2), "distance: great-circle km"
        return np.ones(2 * m), (f"distance unavailable ({int((~ok).sum())} links lack "
                                f"coordinates): hop")
    # file
    if m and np.isnan(file_w).all():
        raise TopologyFormatError(source, None, "weight 'file' asked for, but the file gives no "
                                  "IGP weights (use hop, inverse-capacity or distance)")
    missing = np.isnan(file_w)
    w = np.where(missing, 1.0, file_w)
    if np.any(w <= 0):
        bad = int(np.flatnonzero(w <= 0)[0]) // 2
        raise TopologyFormatError(source, None, f"link {nodes[link_u[bad]]} - "
                                  f"{nodes[link_v[bad]]} has IGP weight <= 0")
    return w, "file: the file's IGP weights" + (
        f" ({int(missing.sum())} arcs without one: 1)" if missing.any() else "")


def fill_delays(delay: np.ndarray, link_u: np.ndarray, link_v: np.ndarray, lat: np.ndarray,
                lon: np.ndarray) -> None:
    """Give links without a file delay the great-circle distance / :data:`FIBRE_KM_PER_MS`
    (in place; links whose routers lack coordinates keep nan)."""
    for li in np.flatnonzero(np.isnan(delay)).tolist():
        u, v = int(link_u[li]), int(link_v[li])
        if not (math.isnan(lat[u]) or math.isnan(lat[v]) or math.isnan(lon[u])
                or math.isnan(lon[v])):
            delay[li] = great_circle_km(lat[u], lon[u], lat[v], lon[v]) / FIBRE_KM_PER_MS

"""Synthetic ISP-like topologies for scale tests (``benchmarks/large.py``).

:func:`isp_topology` draws a reproducible two-level network: a geographic core (random points
in a box of latitude/longitude, joined by their Euclidean minimum spanning tree, then each core
router linked to its nearest other core routers until it has 2 to 4 core links) and access
routers of degree 2, each placed near a core router and dual-homed to the two core routers
nearest to it.  Pruning keeps every router (the access routers are on cycles through the
core), and the access routers are the edge routers of docs/method.md §2 (degree exactly 2).
:func:`write_gml` writes it in the Topology Zoo's GML dialect (``label``, ``Latitude``,
``Longitude``, ``LinkSpeedRaw`` in bit/s), so every reader and command takes it like a Zoo file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple, Union

import numpy as np

from .io import atomic_write_text

__all__ = ["SyntheticTopology", "isp_topology", "write_gml"]

#: Link speeds (bit/s): core-core links are 100G or 40G, access links 10G.
CORE_SPEEDS = (100e9, 40e9)
ACCESS_SPEED = 10e9


@dataclass
class SyntheticTopology:
    """Routers (``names``, ``latitude``, ``longitude``) and links ``(u, v, speed)``."""

    name: str
    names: List[str]
    latitude: np.ndarray
    longitude: np.ndarray
    links: List[Tuple[int, int, float]]
    core: int
    params: Dict[str, object] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return len(self.names)

    def degree(self) -> np.ndarray:
        deg = np.zeros(self.num_nodes, dtype=np.int64)
        for u, v, _ in self.links:
            deg[u] += 1
            deg[v] += 1
        return deg


def _mst_edges(xy: np.ndarray) -> List[Tuple[int, int]]:
    """Euclidean minimum spanning tree (Prim, O(n^2) with numpy)."""
    n = len(xy)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best = np.linalg.norm(xy - xy[0], axis=1)
    parent = np.zeros(n, dtype=np.int64)
    best[0] = np.inf
    edges = []
    for _ in range(n - 1):
        j = int(np.argmin(np.where(in_tree, np.inf, best)))
        edges.append((int(parent[j]), j))
        in_tree[j] = True
        d = np.linalg.norm(xy - xy[j], axis=1)
        closer = (~in_tree) & (d < best)
        best[closer] = d[closer]
        parent[closer] = j
    return edges


def isp_topology(n: int = 2000, *, core_fraction: float = 0.25, seed: int = 0,
                 lat: Tuple[float, float] = (25.0, 49.0),
                 lon: Tuple[float, float] = (-124.0, -67.0),
                 name: str = "") -> SyntheticTopology:
    """A seeded ISP-like topology of ``n`` routers (see the module docstring).

    Parameters
    ----------
    n
        Routers in total (at least 8).
    core_fraction
        Share of core routers (at least 3 of them).
    seed
        Seed of ``numpy.random.default_rng``: the same arguments give the same topology.
    lat, lon
        The box the routers are drawn in (degrees).
    name
        The network name (default ``SynthISP<n>s<seed>``).

    Returns
    -------
    SyntheticTopology
        Core routers ``c0..`` first, then access routers ``a0..``.
    """
    if n < 8:
        raise ValueError(f"n must be at least 8, got {n}")
    rng = np.random.default_rng(seed)
    nc = max(3, int(round(core_fraction * n)))
    na = n - nc
    clat = rng.uniform(*lat, size=nc)
    clon = rng.uniform(*lon, size=nc)
    # distances on a flat map with longitude scaled by cos(latitude): good enough for locality
    scale = np.cos(np.radians(np.mean(lat)))
    cxy = np.stack([clat, clon * scale], axis=1)
    links: Dict[Tuple[int, int], float] = {}

    def add(u: int, v: int, speed: float) -> None:
        a, b = (u, v) if u < v else (v, u)
        links.setdefault((a, b), speed)

    for u, v in _mst_edges(cxy):
        add(u, v, float(rng.choice(CORE_SPEEDS)))
    core_deg = np.zeros(nc, dtype=np.int64)
    for a, b in links:
        core_deg[a] += 1
        core_deg[b] += 1
    target = rng.integers(2, 5, size=nc)  # 2..4 core links each
    for u in range(nc):
        if core_deg[u] >= target[u]:
            continue
        order = np.argsort(np.linalg.norm(cxy - cxy[u], axis=1), kind="stable")
        for v in order[1:]:
            v = int(v)
            if core_deg[u] >= target[u]:
                break
            key = (min(u, v), max(u, v))
            if key in links:
                continue
            add(u, v, float(rng.choice(CORE_SPEEDS)))
            core_deg[u] += 1
            core_deg[v] += 1
    # access routers near a random core router, homed to the two nearest core routers
    home = rng.integers(0, nc, size=na)
    alat = np.clip(clat[home] + rng.normal(0.0, 0.3, size=na), *lat)
    alon = np.clip(clon[home] + rng.normal(0.0, 0.3, size=na), *lon)
    axy = np.stack([alat, alon * scale], axis=1)
    for i in range(na):
        d = np.linalg.norm(cxy - axy[i], axis=1)
        first, second = np.argsort(d, kind="stable")[:2]
        add(int(first), nc + i, ACCESS_SPEED)
        add(int(second), nc + i, ACCESS_SPEED)
    names = [f"c{i}" for i in range(nc)] + [f"a{i}" for i in range(na)]
    return SyntheticTopology(
        name=name or f"SynthISP{n}s{seed}", names=names,
        latitude=np.round(np.concatenate([clat, alat]), 5),
        longitude=np.round(np.concatenate([clon, alon]), 5),
        links=[(a, b, s) for (a, b), s in sorted(links.items())], core=nc,
        params={"n": n, "core_fraction": core_fraction, "seed": seed, "lat": list(lat),
                "lon": list(lon)})


def write_gml(topo: SyntheticTopology, path: Union[str, os.PathLike]) -> Path:
    """Write ``topo`` as Topology Zoo-style GML (atomically: a temporary file renamed)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = ["graph [", "  directed 0", f'  Network "{topo.name}"', f'  label "{topo.name}"',
             '  Creator "tpcstudy.topogen.isp_topology"',
             "  " + " ".join(f"{k}={v}" for k, v in topo.params.items()).join(['Params "', '"'])]
    for i, nm in enumerate(topo.names):
        lines += ["  node [", f"    id {i}", f'    label "{nm}"', "    Internal 1",
                  f"    Latitude {float(topo.latitude[i])!r}",
                  f"    Longitude {float(topo.longitude[i])!r}", "  ]"]
    for u, v, s in topo.links:
        lines += ["  edge [", f"    source {u}", f"    target {v}", f"    LinkSpeedRaw {s!r}",
                  f'    LinkLabel "{s / 1e9:g}G"', "  ]"]
    lines.append("]")
    atomic_write_text(out, "\n".join(lines) + "\n")
    return out

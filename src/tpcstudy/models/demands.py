"""Demand matrices for the traffic-engineering objective (docs/method.md §4b): a REPETITA
``.demands`` file, or a matrix drawn for a topology that brings none.

- ``gravity``: every ordered router pair, volume ``m_s m_t`` with each router's mass its total
  link capacity times ``exp(N(0, GRAVITY_SIGMA))`` drawn from ``numpy.random.default_rng(seed)``
  (the gravity model of TE studies, with seeded noise so that draws differ);
- ``uniform``: every ordered router pair, volume 1.

A drawn matrix is scaled so that plain ECMP's maximum link utilisation is exactly 1: every
model's MLU then reads as a share of ECMP's. A file's matrix is used as it is (REPETITA scales its
matrices so that the multicommodity optimum is 0.9).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import UsageError
from ..io import read_demands
from ..io.bounded import MAX_TEXT_BYTES, check_input_file
from ..paths import path_price_bounds
from ..topology import Topology
from .mlu import demand_arrays, ecmp_loads

__all__ = ["GENERATED", "GRAVITY_SIGMA", "demand_matrix", "matrix_rule", "demands_beside",
           "demands_file", "NO_MATRIX_HINT"]

#: Demand matrices drawn for topologies that bring none.
GENERATED = ("gravity", "uniform")
#: What to do when a topology brings no matrix of its own.
NO_MATRIX_HINT = "a Zoo topology brings none: --demands gravity or uniform"
#: Spread of the gravity model's masses: each router's total link capacity times exp(N(0, s)).
GRAVITY_SIGMA = 0.5


def demands_beside(graph: Path, hint: str = "") -> Path:
    """``--demands auto``: the REPETITA ``NAME.*.demands`` beside ``NAME.graph``
    (``NAME.0000.demands`` when there, else the first by name).

    Raises
    ------
    UsageError
        None there (``hint``, when given, says what to do instead).
    """
    graph = Path(graph)
    cands = sorted(graph.parent.glob(graph.stem + ".*demands"),
                   key=lambda p: (p.name != f"{graph.stem}.0000.demands", p.name))
    if not cands:
        raise UsageError(f"--demands auto: no {graph.stem}.*.demands next to {graph}"
                         + (f" ({hint})" if hint else ""))
    return cands[0]


def demands_file(spec: Optional[str], graph: Optional[Union[str, Path]], *,
                 drawn: Sequence[str] = GENERATED) -> Optional[Path]:
    """The one reading of ``--demands SPEC`` for the topology read from ``graph`` (every verb:
    ``maxflow``, ``maxflow --objective mlu``, ``export --select mlu``).

    ``None``, or a name in ``drawn`` (a matrix drawn per seed, :data:`GENERATED`; the max-flow
    objective draws none): no file, ``None``. ``auto``: the REPETITA file beside ``graph``
    (:func:`demands_beside`). Anything else: the file it names.

    Raises
    ------
    UsageError
        ``auto`` for a topology not read from a file, or with no matrix beside it (the
        message says what to do instead).
    """
    if spec is None or spec in drawn:
        return None
    hint = NO_MATRIX_HINT if drawn else ""
    if spec == "auto":
        if not graph:
            raise UsageError("--demands auto: the topology was not read from a file"
                             + (f" ({hint})" if hint else ""))
        return demands_beside(Path(graph), hint)
    check_input_file(spec, what="demand", limit=MAX_TEXT_BYTES)  # a FIFO would block the read
    return Path(spec)


def matrix_rule(spec: str) -> str:
    """The rule of ``spec``'s matrix in words (recorded with the results)."""
    if spec == "gravity":
        return ("gravity: every ordered router pair, volume m_s m_t with m = the router's total "
                f"link capacity x exp(N(0, {GRAVITY_SIGMA})) from numpy default_rng(seed); "
                "scaled so that plain ECMP's MLU is 1")
    if spec == "uniform":
        return "uniform: every ordered router pair, volume 1; scaled so that ECMP's MLU is 1"
    return "the REPETITA .demands file as it is (zero volumes and self-demands ignored)"


def demand_matrix(topo: Topology, spec: str, seed: int = 0, *, path: Optional[Path] = None
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sources, targets, volumes)`` of ``topo``'s matrix (module docstring): ``spec`` is
    ``gravity``, ``uniform`` or a REPETITA file's (``path``; zero volumes and self-demands
    dropped).

    Raises
    ------
    UsageError
        An unknown ``spec`` without a file, or a matrix plain ECMP cannot route (a router cut
        off: the scaling has nothing to scale by).
    """
    if spec not in GENERATED:
        if path is None:
            raise UsageError(f"demands {spec!r}: no file")
        return demand_arrays(topo, read_demands(path, topo))
    n = topo.num_nodes
    s, t = np.nonzero(~np.eye(n, dtype=bool))
    if spec == "uniform":
        vol = np.ones(len(s))
    else:
        cap = np.zeros(n)
        np.add.at(cap, topo.arc_src, np.asarray(topo.arc_capacity, dtype=np.float64))
        mass = cap * np.exp(np.random.default_rng(seed).normal(0.0, GRAVITY_SIGMA, n))
        vol = mass[s] * mass[t]
    S, T = s.astype(np.int32), t.astype(np.int32)
    far = path_price_bounds(topo, np.asarray(topo.arc_weight, dtype=np.float64), S, T)
    if not np.all(np.isfinite(far)):
        i = int(np.flatnonzero(~np.isfinite(far))[0])
        raise UsageError(f"{topo.name}: plain ECMP cannot route the {spec} matrix: "
                         f"{topo.names[S[i]]} cannot reach {topo.names[T[i]]}")
    mlu = _ecmp_mlu(topo, S, T, vol)
    if not (math.isfinite(mlu) and mlu > 0):
        raise UsageError(f"{topo.name}: plain ECMP cannot route the {spec} matrix (MLU {mlu})")
    return S, T, vol / mlu


def _ecmp_mlu(topo: Topology, S: np.ndarray, T: np.ndarray, V: np.ndarray) -> float:
    load = ecmp_loads(topo, S, T, V)
    cap = np.asarray(topo.arc_capacity, dtype=np.float64)
    return float(np.max(load / cap)) if len(load) else 0.0

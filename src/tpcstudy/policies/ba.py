"""Load-weighted flow mapping of "Bandwidth Aggregation over Multihoming Links" (Sterca, Bufnea,
Niculescu): two-stage smoothing of per-path RTT or throughput, then flow remapping."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Deque, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import UsageError
from .base import Policy

__all__ = ["BaPolicy", "Cycle", "WINDOW_WEIGHTS", "flow_remapping", "window_average"]

#: The BA paper's mixed equal + exponential window weights, most recent sample first.
WINDOW_WEIGHTS = (1.0,) * 8 + (0.88, 0.77, 0.66, 0.55, 0.44, 0.33, 0.22, 0.11)


def window_average(samples: Sequence[float]) -> float:
    """Weighted average of the last 16 samples (``samples`` oldest first), BA paper §4.

    The most recent 8 samples weigh 1, the 8 before them 0.88, 0.77, ..., 0.11.
    """
    recent = list(samples)[-len(WINDOW_WEIGHTS):][::-1]
    if not recent:
        raise ValueError("window_average of no samples")
    w = WINDOW_WEIGHTS[:len(recent)]
    return sum(a * b for a, b in zip(w, recent)) / sum(w)


@dataclass
class Cycle:
    """The BA paper's cycle detector (Algorithm 3, UpdateRTTCycle), for RTT or throughput.

    Fed one window average per sample interval, it closes a cycle after an ascending and a
    descending segment (either order), or after a quasi-constant stable run that lasts longer
    than ``min_interval`` seconds and more than half the previous cycle. ``average`` is the mean
    of the last completed cycle (``None`` before the first), ``min_average`` the smallest of all.
    """

    cthresh: float = 0.05
    min_interval: float = 1.0
    average: Optional[float] = None
    min_average: Optional[float] = None
    duration: float = 0.0
    start: Optional[float] = None
    current: float = 0.0
    ascending: str = "not"
    descending: str = "not"
    stable_start: float = 0.0
    cumulative: float = 0.0
    n: int = 0

    def _new(self, value: float, now: float) -> bool:
        assert self.start is not None and self.n > 0
        self.duration = now - self.start
        self.average = self.cumulative / self.n
        self.min_average = (self.average if self.min_average is None
                            else min(self.min_average, self.average))
        self._reset(value, now)
        return True

    def _reset(self, value: float, now: float) -> None:
        self.start, self.current = now, value
        self.ascending = self.descending = "not"
        self.stable_start = now
        self.cumulative, self.n = value, 1

    def update(self, value: float, now: float) -> bool:
        """Add one window average; True when it closes a cycle (``average`` is then new)."""
        if self.start is None:
            self._reset(value, now)
            return False
        up = value > self.current * (1 + self.cthresh)
        down = value < self.current * (1 - self.cthresh)
        if not up and not down:
            run = now - self.stable_start
            if run > self.duration / 2 and run > self.min_interval:
                return self._new(value, now)
        else:
            self.current = value
            self.stable_start = now
            if up:
                if self.ascending == "ended":
                    return self._new(value, now)
                if self.descending == "started":
                    self.descending = "ended"
                self.ascending = "started"
            else:
                if self.descending == "ended":
                    return self._new(value, now)
                if self.ascending == "started":
                    self.ascending = "ended"
                self.descending = "started"
        self.cumulative += value
        self.n += 1
        return False


def flow_remapping(old: Sequence[float], new: Sequence[float],
                   flows: Sequence[Sequence[int]]) -> List[Tuple[int, int]]:
    """The BA paper's FlowRemapping (Algorithm 1): which flows move, to which path.

    ``flows[i]`` lists the flows on path ``i``, most recently (re)mapped first. Path ``i`` gives
    up ``floor(old_i N) - floor(new_i N)`` flows when that is positive (its youngest), path ``j``
    takes ``floor(new_j N) - floor(old_j N)`` when positive, ``N`` = the number of flows; flows
    left over by the rounding go to the paths furthest below ``new_j N``.
    """
    n = sum(len(f) for f in flows)
    m = len(flows)
    counts = [len(f) for f in flows]
    released: List[int] = []
    for i in range(m):
        give = min(math.floor(old[i] * n) - math.floor(new[i] * n), counts[i])
        if give > 0:
            released.extend(flows[i][:give])
            counts[i] -= give
    out: List[Tuple[int, int]] = []
    for j in range(m):
        take = math.floor(new[j] * n) - math.floor(old[j] * n)
        while take > 0 and released:
            out.append((released.pop(0), j))
            counts[j] += 1
            take -= 1
    for f in released:
        j = max(range(m), key=lambda i: (new[i] * n - counts[i], -i))
        out.append((f, j))
        counts[j] += 1
    return out


@dataclass
class _PathState:
    srtt: Optional[float] = None
    min_rtt: float = math.inf
    max_rtt: float = 0.0
    last_update: Optional[float] = None
    window: Deque[float] = field(default_factory=lambda: deque(maxlen=len(WINDOW_WEIGHTS)))
    cycle: Cycle = field(default_factory=Cycle)
    bytes: float = 0.0


class BaPolicy(Policy):
    """Load-weighted flow mapping of "Bandwidth Aggregation over Multihoming Links".

    Per destination, a weight per path (equal at first). New connections go to the path furthest
    below ``weight * connections``. The per-path signal (``metric="rtt"``: the connections'
    smoothed RTTs; ``"throughput"``: the bytes they acknowledge) goes through the paper's two-stage
    smoothing: at most one sample per smoothed RTT of the path, averaged over a 16-sample window
    (:func:`window_average`), then per cycle (:class:`Cycle`). When a path closes a cycle, the
    weights are recomputed from every path's last cycle average (Algorithm 2 lines 14-21 for RTT,
    Algorithm 4 lines 8-15 for throughput), with the evaluation's filters (equal weights when all
    paths look uncongested: RTT loads all < 0.2 or all numerators < 5 ms; per-flow throughputs
    within 5 %), and constrained as in their evaluation: a weight moves by at most ``max_move``
    (0.1) per update and never falls below ``min_share`` (0.1). Live connections are then moved by
    :func:`flow_remapping` (:meth:`moves`).
    """

    signals = frozenset({"rtt", "bytes"})
    METRICS = ("rtt", "throughput")

    def __init__(self, paths: Mapping[str, int], *, metric: str = "rtt", cthresh: float = 0.05,
                 min_interval: float = 1.0, max_move: float = 0.1, min_share: float = 0.1,
                 min_sample_interval: float = 0.01, seed: int = 0) -> None:
        if metric not in self.METRICS:
            raise UsageError(f"policy ba: metric = {metric!r}; choose from rtt, throughput")
        self.name = f"ba-{metric}"
        super().__init__(paths, seed=seed)
        self.metric = metric
        self.cthresh, self.min_interval = float(cthresh), float(min_interval)
        self.max_move, self.min_share = float(max_move), float(min_share)
        self.min_sample_interval = float(min_sample_interval)
        self.weight = {d: np.full(n, 1.0 / n) for d, n in self.paths.items()}
        self.state = {d: [_PathState(cycle=Cycle(self.cthresh, self.min_interval))
                          for _ in range(n)] for d, n in self.paths.items()}
        self._since: Dict[int, float] = {}       # last (re)mapping time of each connection
        self._acked: Dict[int, int] = {}
        self._pending: Dict[str, np.ndarray] = {}  # destinations whose weights changed
        self.history: List[Tuple[float, str, Tuple[float, ...]]] = []

    def _pick(self, dest: str, now: float) -> Optional[int]:
        c = self.counts(dest)
        total = sum(c) + 1
        w = self.weight[dest]
        return max(range(len(c)), key=lambda i: (w[i] * total - c[i], -i))

    def choose(self, conn: int, dest: str, now: float) -> Optional[int]:
        path = super().choose(conn, dest, now)
        self._since[conn] = now
        self._acked[conn] = 0
        return path

    def progress(self, conn: int, now: float, *, srtt_us: Optional[float] = None,
                 acked_bytes: Optional[int] = None) -> Optional[int]:
        if conn not in self.live:
            return None
        dest, path = self.live[conn]
        assert path is not None
        st = self.state[dest][path]
        if srtt_us is not None and srtt_us > 0:
            rtt = float(srtt_us) * 1e-6
            st.srtt = rtt if st.srtt is None else 0.8 * st.srtt + 0.2 * rtt
            st.min_rtt, st.max_rtt = min(st.min_rtt, rtt), max(st.max_rtt, rtt)
        if acked_bytes is not None:
            st.bytes += max(0, int(acked_bytes) - self._acked[conn])
            self._acked[conn] = int(acked_bytes)
        interval = max(st.srtt or 0.0, self.min_sample_interval)
        if st.last_update is None:
            st.last_update, st.bytes = now, 0.0
            return None
        if now - st.last_update < interval:
            return None
        if self.metric == "rtt":
            if srtt_us is None or srtt_us <= 0:
                return None
            sample = float(srtt_us) * 1e-6
        else:
            sample = st.bytes / (now - st.last_update)
            st.bytes = 0.0
        st.last_update = now
        st.window.append(sample)
        if st.cycle.update(window_average(st.window), now):
            self._reweight(dest, now)
        return None

    def _target(self, dest: str) -> Optional[np.ndarray]:
        states = self.state[dest]
        if any(s.cycle.average is None for s in states):
            return None
        m = len(states)
        avg = np.array([s.cycle.average for s in states], dtype=np.float64)
        if self.metric == "rtt":
            low = np.array([s.cycle.average if s.cycle.min_average is None
                            else s.cycle.min_average for s in states], dtype=np.float64)
            num = avg - low
            den = np.array([s.max_rtt for s in states]) - low
            load = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
            if np.all(load < 0.2) or np.all(num < 0.005) or load.sum() <= 0:
                return np.full(m, 1.0 / m)
            w = 1.0 - load / load.sum()
        else:
            counts = self.counts(dest)
            per_flow = avg / np.maximum(np.array(counts, dtype=np.float64), 1.0)
            if per_flow.max() <= 0 or (per_flow.max() - per_flow.min()) / per_flow.max() < 0.05:
                return np.full(m, 1.0 / m)
            w = per_flow
        if not np.all(np.isfinite(w)) or w.sum() <= 0:  # a path without a usable sample yet
            return None
        return w / w.sum()

    def _reweight(self, dest: str, now: float) -> None:
        target = self._target(dest)
        if target is None:
            return
        old = self.weight[dest]
        floor = min(self.min_share, 1.0 / len(old))
        new = np.clip(target, old - self.max_move, old + self.max_move)
        new = np.maximum(new, floor)
        new = new / new.sum()
        if np.allclose(new, old, atol=1e-12):
            return
        self._pending[dest] = old.copy()
        self.weight[dest] = new
        self.history.append((now, dest, tuple(float(x) for x in new)))

    def moves(self, now: float) -> List[Tuple[int, int]]:
        out: List[Tuple[int, int]] = []
        for dest, old in sorted(self._pending.items()):
            n = self.paths[dest]
            flows: List[List[int]] = [[] for _ in range(n)]
            for c, (d, p) in self.live.items():
                if d == dest and p is not None:
                    flows[p].append(c)
            for f in flows:
                f.sort(key=lambda c: (-self._since[c], c))  # youngest first
            for c, p in flow_remapping(old.tolist(), self.weight[dest].tolist(), flows):
                self.live[c] = (dest, p)
                self._since[c] = now
                out.append((c, p))
        self._pending.clear()
        return out

    def closed(self, conn: int, now: float, *, srtt_us: Optional[float] = None) -> None:
        self._since.pop(conn, None)
        self._acked.pop(conn, None)
        super().closed(conn, now)

    def describe(self) -> Dict[str, object]:
        return {"name": self.name, "seed": self.seed, "cthresh": self.cthresh,
                "min_interval": self.min_interval, "max_move": self.max_move,
                "min_share": self.min_share}
